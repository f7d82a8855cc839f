//! TUN devices: the emulator reads each IP packet a namespace sends and writes
//! back the packets the link delivers. No packet information header, no offloads,
//! so every packet is at most one MTU and carries its own checksum.

use crate::namespace::NetNs;
use crate::sys;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// Creates TUN device `name` inside `ns` (names only need to be unique per namespace).
    pub fn create(ns: &NetNs, name: &str) -> io::Result<Tun> {
        let name = name.to_string();
        ns.run(|| {
            let fd = sys::open(c"/dev/net/tun", libc::O_RDWR | libc::O_NONBLOCK).map_err(|e| {
                let hint = match e.raw_os_error() {
                    Some(libc::ENOENT) => "load the tun module (modprobe tun) or, in a container, pass the device in (--device /dev/net/tun)",
                    Some(libc::EACCES) | Some(libc::EPERM) => "run as root, or make it usable: chmod 0666 /dev/net/tun",
                    _ => "a TUN device is needed for the emulated link",
                };
                io::Error::new(e.kind(), format!("cannot open /dev/net/tun: {e}; {hint}"))
            })?;
            let mut req = IfReq {
                name: [0; libc::IFNAMSIZ],
                flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
                _pad: [0; 22],
            };
            req.name[..name.len()].copy_from_slice(name.as_bytes());
            // SAFETY: TUNSETIFF takes a pointer to an ifreq, which IfReq lays out.
            sys::cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) })
                .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
            Ok(Tun {
                fd,
                name: name.clone(),
            })
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf` (its capacity, at least one MTU, is used;
    /// its length is set to the packet's); `Ok(false)` when none is waiting.
    pub fn recv_into(&self, buf: &mut Vec<u8>) -> io::Result<bool> {
        buf.clear();
        let cap = buf.capacity();
        // SAFETY: the spare capacity is valid for `cap` bytes; only the bytes
        // the kernel wrote are exposed by set_len.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), cap) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        // SAFETY: the kernel initialised the first n <= cap bytes.
        unsafe { buf.set_len(n as usize) };
        Ok(true)
    }

    /// Writes one packet into the namespace (as if it arrived on the wire).
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: packet is valid for packet.len() bytes.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), packet.as_ptr().cast(), packet.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
