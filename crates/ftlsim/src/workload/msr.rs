//! MSR Cambridge CSV (SNIA IOTTA):
//! `timestamp(100 ns ticks since 1601),host,disk,Read|Write,offset_bytes,size_bytes,response_ticks`.
//! Times are rebased to the first request; the response time is ignored.

use super::fields::{address, field_error, size, uint, Fields, LineError, Sep};
use super::reader::{LineFormat, Raw};
use super::IoKind;

pub(crate) struct Msr;

/// Reads `Read`/`Write` in any case.
pub(crate) fn read_or_write(index: usize, name: &'static str, b: &[u8]) -> Result<IoKind, LineError> {
    if b.eq_ignore_ascii_case(b"write") {
        Ok(IoKind::Write)
    } else if b.eq_ignore_ascii_case(b"read") {
        Ok(IoKind::Read)
    } else {
        Err(field_error(index, name, "Read or Write", b))
    }
}

impl LineFormat for Msr {
    #[inline]
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Char(b','));
        let (i, b) = f.next("timestamp")?;
        let ticks = uint(i, "timestamp", b)?;
        let time = ticks
            .checked_mul(100)
            .ok_or_else(|| field_error(i, "timestamp", "a timestamp of at most 64 bits in nanoseconds", b))?;
        f.next("host")?;
        f.next("disk")?;
        let (i, b) = f.next("type")?;
        let kind = read_or_write(i, "type", b)?;
        let (i, b) = f.next("offset")?;
        let offset = address(i, "offset", b, 1)?;
        let (i, b) = f.next("size")?;
        let len = size(i, "size", b, 1)?;
        Ok(Some(Raw { time, kind, offset, len, content: None }))
    }

    fn rebase(&self) -> bool {
        true
    }
}
