//! TUN devices: the emulator reads what a namespace sends and writes back the
//! packets the link delivers. No packet information header. Where the kernel
//! allows it (IFF_VNET_HDR), every read and write carries a `virtio_net_hdr`
//! and the device offers checksum and TCPv4 segmentation offload: one read
//! can hold 64 KB of one TCP flow, which `offload::split` cuts into wire
//! packets (see `offload`). Elsewhere (a kernel or sandbox without it) each
//! read and write is one packet of at most one MTU, as before.

use crate::namespace::NetNs;
use crate::offload;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

#[derive(Debug)]
pub struct Tun {
    fd: OwnedFd,
    name: String,
    vnet: bool,
}

const IFF_VNET_HDR: libc::c_int = 0x4000;

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
                sys::tun_set_iff(&fd, &name, flags)
            };
            let plain = libc::IFF_TUN | libc::IFF_NO_PI;
            // The header where the kernel has it (without, one packet per
            // call); with it, the offloads if it takes them (without, every
            // frame is one whole packet behind a zeroed header).
            let vnet = set(plain | IFF_VNET_HDR).is_ok();
            if vnet {
                let _ = sys::tun_set_offload(&fd, offload::TUN_OFFLOADS as libc::c_ulong);
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
        match sys::read_into(&self.fd, buf) {
            Ok(_) => Ok(true),
            Err(e) => match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            },
        }
    }

    /// Writes one frame into the namespace (as if it arrived on the wire).
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        sys::write(&self.fd, packet).map(drop)
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
