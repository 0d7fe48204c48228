//! FIU traces (homes, mail, web-vm): `ts_ns pid process lba_sectors size_sectors R|W major minor
//! md5`. The process name may contain spaces, so the last six fields are taken from the end.
//! Each record's MD5 becomes the content fingerprint of the whole record (normally 4 KB).
//! Times are rebased to the first request.

use super::fields::{address, field_error, md5_prefix, size, time, uint, Fields, LineError, Sep};
use super::reader::{LineFormat, Raw};
use super::{Fingerprints, IoKind};

pub(crate) struct Fiu;

const MAX_FIELDS: usize = 24;

impl LineFormat for Fiu {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        let mut n = 0;
        while let Some(b) = f.next_raw() {
            if n == MAX_FIELDS {
                return Err(field_error(n + 1, "end of line", format!("at most {MAX_FIELDS} fields"), b));
            }
            fields[n] = b;
            n += 1;
        }
        if n < 9 {
            const NAMES: [&str; 9] = ["ts", "pid", "process", "lba", "size", "op", "major", "minor", "md5"];
            return Err(LineError::Field { index: n + 1, name: NAMES[n], expected: "a value".into(), found: None });
        }
        let t = time(1, "ts", fields[0], 1)?;
        uint(2, "pid", fields[1])?;
        let at = |k: usize| (n - 6 + k + 1, fields[n - 6 + k]);
        let (i, b) = at(0);
        let offset = address(i, "lba", b, 512)?;
        let (i, b) = at(1);
        let len = size(i, "size", b, 512)?;
        let (i, b) = at(2);
        let kind = match b {
            b"R" | b"r" => IoKind::Read,
            b"W" | b"w" => IoKind::Write,
            _ => return Err(field_error(i, "op", "R or W", b)),
        };
        let (i, b) = at(3);
        uint(i, "major", b)?;
        let (i, b) = at(4);
        uint(i, "minor", b)?;
        let (i, b) = at(5);
        let hash = md5_prefix(b).ok_or_else(|| field_error(i, "md5", "an MD5 of 32 hex digits", b))?;
        let unit = u32::try_from(len).map_err(|_| field_error(n - 4, "size", "a record below 4 GiB", at(1).1))?;
        Ok(Some(Raw { time: t, kind, offset, len, content: Some(Fingerprints::new(unit, &[hash])) }))
    }

    fn rebase(&self) -> bool {
        true
    }
}
