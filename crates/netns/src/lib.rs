//! Linux plumbing for spdylab: anonymous network namespaces held by file
//! descriptors, TUN devices, the emulator thread that runs a `link::Link` on real
//! packets, confined child processes, and pcap output of the packet log; and
//! the plumbing of the programs it starts: private scratch directories (a
//! private mount), finding binaries, children tied to us, free ports.
//!
//! Nothing here outlives the process: namespaces vanish with their last fd,
//! TUN devices with their namespace, and children die with us (PDEATHSIG and a
//! PID namespace each).

pub mod calibrate;
pub mod cross;
mod emulator;
mod namespace;
mod offload;
pub mod pcap;
mod process;
mod programs;
mod scratch;
mod testbed;
mod tun;
pub mod userns;

pub use namespace::{own_fd_table, NetNs};
pub use process::{stop_confined, STOP_GRACE};
pub use programs::{
    find_binary, find_binary_in, free_port, free_ports, spawn_tied, wait_listening,
};
pub use scratch::{private_scratch_root, Scratch};
pub use testbed::{
    server_addr, CongestionControl, LinkHandle, Side, Testbed, TestbedSpec, CLIENT_ADDR, MAX_SHARDS,
};
pub use tun::Tun;
