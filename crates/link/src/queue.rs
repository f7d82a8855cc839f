//! Queue disciplines behind one small interface (as Mahimahi's AbstractPacketQueue),
//! so that CoDel or PIE can sit beside drop-tail later.

use crate::time::Time;
use crate::units::QueueLimit;
use std::collections::VecDeque;

/// A packet waiting for, or in, transmission.
#[derive(Debug)]
pub struct Queued {
    pub packet: Vec<u8>,
    pub enqueued: Time,
}

pub trait Queue: Send {
    /// Takes the packet, or hands it back if the discipline drops it.
    fn enqueue(&mut self, item: Queued) -> Result<(), Queued>;
    fn dequeue(&mut self) -> Option<Queued>;
    fn front(&self) -> Option<&Queued>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// First in, first out; a packet that would exceed the limit is dropped on arrival.
#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    items: VecDeque<Queued>,
    bytes: usize,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail {
            limit,
            items: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl Queue for DropTail {
    fn enqueue(&mut self, item: Queued) -> Result<(), Queued> {
        let too_many = self.limit.packets.is_some_and(|p| self.items.len() >= p);
        let too_big = self
            .limit
            .bytes
            .is_some_and(|b| self.bytes + item.packet.len() > b);
        if too_many || too_big {
            return Err(item);
        }
        self.bytes += item.packet.len();
        self.items.push_back(item);
        Ok(())
    }

    fn dequeue(&mut self) -> Option<Queued> {
        let item = self.items.pop_front()?;
        self.bytes -= item.packet.len();
        Some(item)
    }

    fn front(&self) -> Option<&Queued> {
        self.items.front()
    }

    fn len_packets(&self) -> usize {
        self.items.len()
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(len: usize) -> Queued {
        Queued {
            packet: vec![0; len],
            enqueued: Time::ZERO,
        }
    }

    #[test]
    fn limits_in_packets_and_bytes() {
        let mut q = DropTail::new("2p".parse().unwrap());
        assert!(q.enqueue(item(10)).is_ok());
        assert!(q.enqueue(item(10)).is_ok());
        assert!(q.enqueue(item(10)).is_err());
        let mut q = DropTail::new("3000b".parse().unwrap());
        assert!(q.enqueue(item(1500)).is_ok());
        assert!(q.enqueue(item(1500)).is_ok());
        assert!(q.enqueue(item(1)).is_err());
        assert_eq!(q.dequeue().unwrap().packet.len(), 1500);
        assert_eq!(q.len_bytes(), 1500);
        assert!(q.enqueue(item(1)).is_ok());
    }
}
