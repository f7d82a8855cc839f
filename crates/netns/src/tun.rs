//! TUN devices: the emulator reads what a namespace sends and writes back the
//! packets the link delivers. No packet information header. Where the kernel
//! allows it (IFF_VNET_HDR), every read and write carries a `virtio_net_hdr`
//! and the device offers checksum and TCPv4 segmentation offload: one read
//! can hold 64 KB of one TCP flow, which `offload::split` cuts into wire
//! packets (see `offload`). Elsewhere (a kernel or sandbox without it) each
//! read and write is one packet of at most one MTU, as before.

use crate::namespace::NetNs;
use crate::offload;
use crate::sys;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
    vnet: bool,
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_VNET_HDR: libc::c_int = 0x4000;

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
            let set = |flags: libc::c_int| {
                let mut req = IfReq {
                    name: [0; libc::IFNAMSIZ],
                    flags: flags as libc::c_short,
                    _pad: [0; 22],
                };
                req.name[..name.len()].copy_from_slice(name.as_bytes());
                // SAFETY: TUNSETIFF takes a pointer to an ifreq, which IfReq lays out.
                sys::cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) })
            };
            let plain = libc::IFF_TUN | libc::IFF_NO_PI;
            // The header where the kernel has it (without, one packet per
            // call); with it, the offloads if it takes them (without, every
            // frame is one whole packet behind a zeroed header).
            let vnet = set(plain | IFF_VNET_HDR).is_ok();
            if vnet {
                // SAFETY: TUNSETOFFLOAD takes its flags by value.
                unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, offload::TUN_OFFLOADS) };
            } else {
                set(plain)
                    .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
            }
            Ok(Tun {
                fd,
                name: name.clone(),
                vnet,
            })
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether reads and writes carry a `virtio_net_hdr` (see `offload`).
    pub fn vnet(&self) -> bool {
        self.vnet
    }

    /// Reads one frame into `buf` (its capacity is used: one MTU without
    /// `vnet`, 64 KB and the header with it; its length is set to the
    /// frame's); `Ok(false)` when none is waiting.
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

    /// Writes one frame into the namespace (as if it arrived on the wire).
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
