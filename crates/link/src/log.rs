//! Observers of a link's packets: the packet log (time, direction, size,
//! addresses, ports, TCP flags and sequence numbers) and what later metrics read
//! from it (first flights for the initial window, time on wire).

use crate::packet::{self, Headers, TCP_ACK, TCP_SYN};
use crate::spec::Direction;
use crate::time::Time;
use serde::Serialize;
use std::sync::{Arc, Mutex};

/// What happened to a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// Handed to the link by the sending side.
    Arrive,
    /// Lost by the loss model.
    DropLoss,
    /// Dropped because the queue was full.
    DropQueue,
    /// Handed to the receiving side.
    Deliver,
}

/// One event, with the packet's bytes (valid only during the call).
#[derive(Debug)]
pub struct Event<'a> {
    pub time: Time,
    pub dir: Direction,
    pub kind: EventKind,
    pub packet: &'a [u8],
}

/// Told of every packet event, in time order per direction.
pub trait Observer: Send {
    fn on_event(&mut self, event: &Event<'_>);
}

/// One line of the packet log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    pub time: Time,
    pub dir: Direction,
    pub kind: EventKind,
    pub size: u16,
    pub headers: Option<Headers>,
}

/// The packet log: a shared, append-only list of events. Clone it to keep a handle
/// while the link (on another thread) appends.
#[derive(Debug, Clone, Default)]
pub struct PacketLog(Arc<Mutex<Vec<LogEntry>>>);

impl PacketLog {
    pub fn new() -> PacketLog {
        PacketLog::default()
    }

    /// A copy of the entries so far.
    pub fn entries(&self) -> Vec<LogEntry> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Observer for PacketLog {
    fn on_event(&mut self, event: &Event<'_>) {
        let entry = LogEntry {
            time: event.time,
            dir: event.dir,
            kind: event.kind,
            size: event.packet.len() as u16,
            headers: packet::parse(event.packet),
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
    }
}

/// The first flight of each TCP connection the server accepted: how many data
/// segments the server sent before any acknowledgement of its data reached it.
/// Returns one count per connection, in the order the connections opened.
pub fn first_flights(entries: &[LogEntry]) -> Vec<usize> {
    struct Conn {
        key: (u32, u16, u32, u16),
        server_isn: u32,
        segments: usize,
        done: bool,
    }
    let mut conns: Vec<Conn> = Vec::new();
    let key_of = |h: &Headers, dir: Direction| match dir {
        // Keyed by (client, server) whichever way the packet goes.
        Direction::Up => (u32::from(h.src), h.src_port, u32::from(h.dst), h.dst_port),
        Direction::Down => (u32::from(h.dst), h.dst_port, u32::from(h.src), h.src_port),
    };
    for e in entries {
        let Some(h) = e.headers else { continue };
        let Some(tcp) = h.tcp else { continue };
        let key = key_of(&h, e.dir);
        match (e.dir, e.kind) {
            // The server's SYN-ACK, as it leaves the server.
            (Direction::Down, EventKind::Arrive)
                if tcp.has(TCP_SYN) && tcp.has(TCP_ACK) && !conns.iter().any(|c| c.key == key) =>
            {
                conns.push(Conn {
                    key,
                    server_isn: tcp.seq,
                    segments: 0,
                    done: false,
                });
            }
            // Data segments leaving the server, until the first ACK of data arrives.
            (Direction::Down, EventKind::Arrive) if h.payload > 0 => {
                if let Some(c) = conns.iter_mut().find(|c| c.key == key && !c.done) {
                    c.segments += 1;
                }
            }
            (Direction::Up, EventKind::Deliver) if tcp.has(TCP_ACK) => {
                if let Some(c) = conns.iter_mut().find(|c| c.key == key && !c.done) {
                    if tcp.ack.wrapping_sub(c.server_isn.wrapping_add(1)) as i32 > 0 {
                        c.done = true;
                    }
                }
            }
            _ => {}
        }
    }
    conns.into_iter().map(|c| c.segments).collect()
}
