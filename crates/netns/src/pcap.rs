//! Writes the link's packets as a pcap file (raw IPv4, LINKTYPE_RAW) that
//! tcpdump and Wireshark read. It records what the client sees: packets as the
//! client sends them into the link and as the link delivers them to the client.

use link::{Direction, Event, EventKind, Observer};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65535;

pub struct PcapWriter {
    out: BufWriter<File>,
    base_ns: u64,
    failed: bool,
}

impl PcapWriter {
    /// Creates `path`; packet times are wall-clock, counted from now.
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        let file = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("--pcap {}: {e}", path.display())))?;
        let mut out = BufWriter::new(file);
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond-resolution magic
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&SNAPLEN.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        let base_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Ok(PcapWriter {
            out,
            base_ns,
            failed: false,
        })
    }

    fn record(&mut self, t_ns: u64, packet: &[u8]) -> io::Result<()> {
        let t = self.base_ns + t_ns;
        let len = packet.len().min(SNAPLEN as usize);
        self.out
            .write_all(&((t / 1_000_000_000) as u32).to_le_bytes())?;
        self.out
            .write_all(&((t % 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&(len as u32).to_le_bytes())?;
        self.out.write_all(&(packet.len() as u32).to_le_bytes())?;
        self.out.write_all(&packet[..len])
    }
}

impl Observer for PcapWriter {
    fn on_event(&mut self, e: &Event<'_>) {
        let seen_by_client = matches!(
            (e.dir, e.kind),
            (Direction::Up, EventKind::Arrive) | (Direction::Down, EventKind::Deliver)
        );
        if seen_by_client && !self.failed && self.record(e.time.0, e.packet).is_err() {
            self.failed = true; // a full disk must not stop the link
        }
    }
}

impl Drop for PcapWriter {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}
