//! Linux `blkparse` default text output:
//! `maj,min cpu seq time_s pid action rwbs sector + sectors [process]`. Only the chosen actions
//! (`D` by default) become requests; other events, events without data (flushes) and the
//! summary at the end are passed over. RWBS with `D` is a discard (trim), else `W` a write and
//! `R` a read.

use super::fields::{address, field_error, time, Fields, LineError, Sep};
use super::reader::{LineFormat, Raw};
use super::IoKind;

pub(crate) struct Blkparse {
    /// Accepted action letters, as a bit set over A-Z.
    actions: u32,
}

impl Blkparse {
    pub(crate) fn new(events: &str) -> Blkparse {
        Blkparse { actions: events.bytes().filter(u8::is_ascii_uppercase).fold(0, |m, b| m | 1 << (b - b'A')) }
    }
}

/// `8,16`: the device field that starts every event line.
fn is_device(b: &[u8]) -> bool {
    match b.iter().position(|c| *c == b',') {
        Some(i) => {
            i > 0
                && i + 1 < b.len()
                && b[..i].iter().all(u8::is_ascii_digit)
                && b[i + 1..].iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

impl LineFormat for Blkparse {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        match f.next_raw() {
            Some(device) if is_device(device) => {}
            _ => return Ok(None),
        }
        f.next("cpu")?;
        f.next("sequence")?;
        let (ti, tb) = f.next("time")?;
        f.next("pid")?;
        let (i, action) = f.next("action")?;
        let wanted = match action {
            [a] if a.is_ascii_uppercase() => self.actions & (1 << (a - b'A')) != 0,
            // Messages (`m`) and unplug-timer events (`UT`) carry no I/O.
            b"m" | b"UT" => false,
            _ => return Err(field_error(i, "action", "an action letter, m or UT", action)),
        };
        if !wanted {
            return Ok(None);
        }
        let (_, rwbs) = f.next("rwbs")?;
        let kind = if rwbs.contains(&b'D') {
            IoKind::Trim
        } else if rwbs.contains(&b'W') {
            IoKind::Write
        } else if rwbs.contains(&b'R') {
            IoKind::Read
        } else {
            return Ok(None);
        };
        let sector = match f.next_raw() {
            Some(b) if !b.starts_with(b"[") => b,
            _ => return Ok(None), // no payload: a flush or barrier
        };
        let offset = address(8, "sector", sector, 512)?;
        match f.next_raw() {
            Some(b"+") => {}
            Some(b) => return Err(field_error(9, "+", "\"+\"", b)),
            None => return Err(LineError::Field { index: 9, name: "+", expected: "\"+\"".into(), found: None }),
        }
        let (i, b) = f.next("sectors")?;
        let len = address(i, "sectors", b, 512)?;
        if len == 0 {
            return Ok(None);
        }
        let time = time(ti, "time", tb, 1_000_000_000)?;
        Ok(Some(Raw { time, kind, offset, len, content: None }))
    }
}
