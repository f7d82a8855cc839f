//! The DevTools protocol over Chromium's pipe: JSON messages, each ended by a
//! NUL byte, commands with ids, answers matched by id, events handed on.
//!
//! Hand-written on purpose: the CDP crates (chromiumoxide, headless_chrome)
//! speak over a WebSocket on a TCP port and start the browser themselves,
//! whereas spdylab starts Chromium confined in the testbed's client namespace
//! with `--remote-debugging-pipe` (no listening port, nothing else on the
//! link) and needs only a handful of commands and the Network events.

use serde_json::{json, Value};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::time::Instant;

/// What came over the pipe: an event (its method and params), or the answer
/// to a command (its id, and its result or DevTools' error message).
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Event(String, Value),
    Answer(u64, Result<Value, String>),
}

pub struct Pipe {
    to: File,
    from: File,
    buf: Vec<u8>,
    next_id: u64,
}

impl Pipe {
    pub fn new(to: OwnedFd, from: OwnedFd) -> Pipe {
        Pipe {
            to: File::from(to),
            from: File::from(from),
            buf: Vec::new(),
            next_id: 1,
        }
    }

    /// Sends a command and waits for its answer; events that arrive meanwhile
    /// go to `on_event`. A DevTools error is an io::Error with its message.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        session: Option<&str>,
        deadline: Instant,
        on_event: &mut dyn FnMut(&str, &Value),
    ) -> io::Result<Value> {
        let id = self.send(method, params, session)?;
        loop {
            let Some(m) = self.read_message(deadline)? else {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no answer to {method}"),
                ));
            };
            if m["id"].as_u64() == Some(id) {
                if let Some(e) = m.get("error") {
                    return Err(io::Error::other(format!("{method}: {}", e["message"])));
                }
                return Ok(m["result"].clone());
            }
            if let Some(ev) = m["method"].as_str() {
                on_event(ev, &m["params"]);
            }
        }
    }

    /// Sends a command without waiting for its answer (which `call` and
    /// `next_event` pass over when it comes); its id.
    pub fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg)?;
        bytes.push(0);
        self.to.write_all(&bytes)?;
        Ok(id)
    }

    /// The next event, or None at the deadline.
    pub fn next_event(&mut self, deadline: Instant) -> io::Result<Option<(String, Value)>> {
        loop {
            match self.next_message(deadline)? {
                None => return Ok(None),
                Some(Message::Event(method, params)) => return Ok(Some((method, params))),
                Some(Message::Answer(..)) => {}
            }
        }
    }

    /// The next event or answer (to a command `send` sent), or None at the
    /// deadline.
    pub fn next_message(&mut self, deadline: Instant) -> io::Result<Option<Message>> {
        loop {
            let Some(m) = self.read_message(deadline)? else {
                return Ok(None);
            };
            if let Some(ev) = m["method"].as_str() {
                return Ok(Some(Message::Event(ev.to_string(), m["params"].clone())));
            }
            if let Some(id) = m["id"].as_u64() {
                let answer = match m.get("error") {
                    Some(e) => Err(e["message"].as_str().unwrap_or("error").to_string()),
                    None => Ok(m["result"].clone()),
                };
                return Ok(Some(Message::Answer(id, answer)));
            }
        }
    }

    fn read_message(&mut self, deadline: Instant) -> io::Result<Option<Value>> {
        loop {
            if let Some(end) = self.buf.iter().position(|b| *b == 0) {
                let msg: Vec<u8> = self.buf.drain(..=end).collect();
                return serde_json::from_slice(&msg[..end])
                    .map(Some)
                    .map_err(|e| io::Error::other(format!("DevTools message: {e}")));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            match sys::poll_readable(&self.from, ms) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut chunk = [0u8; 65536];
            let got = self.from.read(&mut chunk)?;
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "Chromium closed its DevTools pipe (it exited)",
                ));
            }
            self.buf.extend_from_slice(&chunk[..got]);
        }
    }
}
