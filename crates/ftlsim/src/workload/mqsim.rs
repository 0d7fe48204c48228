//! MQSim ASCII: `arrival_ns device lba_sectors size_sectors type` with type 0 = write, 1 = read.

use super::fields::{field_error, Fields, LineError, Sep};
use super::reader::{LineFormat, Raw};
use super::ssdsim::common;
use super::IoKind;

pub(crate) struct Mqsim;

impl LineFormat for Mqsim {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        let (time, offset, len) = common(&mut f, 1)?;
        let (i, b) = f.next("type")?;
        let kind = match b {
            b"0" => IoKind::Write,
            b"1" => IoKind::Read,
            _ => return Err(field_error(i, "type", "0 (write) or 1 (read)", b)),
        };
        f.end(5)?;
        Ok(Some(Raw { time, kind, offset, len, content: None }))
    }
}
