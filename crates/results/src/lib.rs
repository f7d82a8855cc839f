//! What spdylab stores and reads back: the names a Trial is made of (server,
//! client; the protocol is `proto::Protocol`), and the records of a campaign.
//! No sockets, no processes: `report` reads results through this crate alone.

mod kinds;

pub use kinds::{ClientKind, PeerKind, ServerKind};
pub use proto::Protocol;
