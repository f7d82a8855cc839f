//! SPDY/3.1 flow control, sans-I/O: the windows of a session (stream id 0) and
//! of each stream, on the sending side (what the peer lets us send) and on the
//! receiving side (what we let the peer send, and when to give it back with a
//! WINDOW_UPDATE). Shared by the built-in server and the model client.

/// The largest a window may grow (2^31 − 1); beyond it is a FLOW_CONTROL_ERROR.
pub const MAX_WINDOW: i64 = 0x7fff_ffff;

/// A flow-control violation by the peer: RST_STREAM (or GOAWAY for the session)
/// with FLOW_CONTROL_ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowError {
    /// A WINDOW_UPDATE that would grow the window beyond 2^31 − 1.
    Overflow,
    /// DATA beyond the window we granted.
    Overrun { window: i64, got: usize },
}

impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowError::Overflow => write!(f, "WINDOW_UPDATE grows the window beyond 2^31-1"),
            FlowError::Overrun { window, got } => {
                write!(f, "{got} bytes of DATA with a window of {window}")
            }
        }
    }
}

impl std::error::Error for FlowError {}

/// What we may still send: the peer's window for us. It can go negative when
/// the peer lowers SETTINGS_INITIAL_WINDOW_SIZE while data is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWindow(i64);

impl SendWindow {
    pub fn new(initial: u32) -> SendWindow {
        SendWindow(initial as i64)
    }

    /// Bytes we may send now.
    pub fn available(&self) -> usize {
        self.0.max(0) as usize
    }

    /// We sent `n` bytes of DATA (at most `available()`).
    pub fn consume(&mut self, n: usize) {
        self.0 -= n as i64;
    }

    /// The peer's WINDOW_UPDATE.
    pub fn grow(&mut self, delta: u32) -> Result<(), FlowError> {
        let grown = self.0 + delta as i64;
        if grown > MAX_WINDOW {
            return Err(FlowError::Overflow);
        }
        self.0 = grown;
        Ok(())
    }

    /// The peer changed SETTINGS_INITIAL_WINDOW_SIZE by `delta` (streams only).
    pub fn adjust(&mut self, delta: i64) {
        self.0 += delta;
    }
}

/// What the peer may still send us. Data is taken as consumed on arrival; once
/// half the window is used up, it is given back whole in one WINDOW_UPDATE
/// (as Chrome and Netty do), so a sender is never stalled by a slow reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWindow {
    size: u32,
    left: i64,
}

impl RecvWindow {
    /// A window of `size` bytes (already announced to the peer).
    pub fn new(size: u32) -> RecvWindow {
        RecvWindow {
            size,
            left: size as i64,
        }
    }

    /// Bytes the peer may still send.
    pub fn left(&self) -> i64 {
        self.left
    }

    /// `n` bytes of DATA arrived: the delta of a WINDOW_UPDATE to send, if one
    /// is due; an error if the peer sent beyond the window.
    pub fn received(&mut self, n: usize) -> Result<Option<u32>, FlowError> {
        if n as i64 > self.left {
            return Err(FlowError::Overrun {
                window: self.left,
                got: n,
            });
        }
        self.left -= n as i64;
        if self.left <= self.size as i64 / 2 {
            let delta = (self.size as i64 - self.left) as u32;
            self.left = self.size as i64;
            Ok(Some(delta))
        } else {
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_send_window_shrinks_grows_and_refuses_overflow() {
        let mut w = SendWindow::new(65_536);
        w.consume(65_000);
        assert_eq!(w.available(), 536);
        w.adjust(-1000); // SETTINGS lowered the initial window
        assert_eq!(w.available(), 0);
        w.grow(10_000).unwrap();
        assert_eq!(w.available(), 9_536);
        assert_eq!(w.grow(0x7fff_ffff), Err(FlowError::Overflow));
        assert_eq!(
            w.available(),
            9_536,
            "an overflowing update changes nothing"
        );
    }

    #[test]
    fn the_receive_window_is_given_back_at_half_and_overruns_are_errors() {
        let mut w = RecvWindow::new(65_536);
        assert_eq!(w.received(30_000), Ok(None));
        assert_eq!(w.received(3_000), Ok(Some(33_000)));
        assert_eq!(w.left(), 65_536);
        assert_eq!(w.received(65_536), Ok(Some(65_536)));
        assert_eq!(
            w.received(65_537),
            Err(FlowError::Overrun {
                window: 65_536,
                got: 65_537
            })
        );
    }

    #[test]
    fn a_sender_and_a_receiver_never_stall() {
        // A sender that writes whatever its window allows, in 16 KiB frames, and a
        // receiver that gives back at half: every byte of 1 MB arrives.
        let (mut send, mut recv) = (SendWindow::new(65_536), RecvWindow::new(65_536));
        let mut left = 1_000_000usize;
        let mut steps = 0;
        while left > 0 {
            let n = send.available().min(16_384).min(left);
            assert!(n > 0, "stalled with {left} bytes left");
            send.consume(n);
            left -= n;
            if let Some(delta) = recv.received(n).unwrap() {
                send.grow(delta).unwrap();
            }
            steps += 1;
        }
        assert!(steps < 100);
    }
}
