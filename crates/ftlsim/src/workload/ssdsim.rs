//! SSDSim ASCII, `time_ns device lba_sectors size_sectors op` with op 1 = read, 0 = write, and an
//! optional sixth field of concatenated per-sector MD5s; and its ancestor DiskSim ASCII,
//! `time_ms device lba_sectors size_sectors flags` with bit 0 of flags set for a read.

use super::fields::{address, field_error, md5_prefix, size, time, uint, Fields, LineError, Sep};
use super::fingerprint::INLINE;
use super::reader::{LineFormat, Raw};
use super::{Fingerprints, IoKind};

const SECTOR: u64 = 512;

/// The four leading fields of the ASCII formats: (time ns, offset bytes, size bytes).
pub(crate) fn common(f: &mut Fields, time_unit_ns: u64) -> Result<(u64, u64, u64), LineError> {
    let (i, b) = f.next("time")?;
    let t = time(i, "time", b, time_unit_ns)?;
    let (i, b) = f.next("device")?;
    uint(i, "device", b)?;
    let (i, b) = f.next("lba")?;
    let offset = address(i, "lba", b, SECTOR)?;
    let (i, b) = f.next("size")?;
    let len = size(i, "size", b, SECTOR)?;
    Ok((t, offset, len))
}

/// Per-sector MD5s, one 32-hex-digit group per sector.
fn sector_fingerprints(index: usize, b: &[u8], len: u64) -> Result<Fingerprints, LineError> {
    let sectors = len / SECTOR;
    if b.len() as u64 != sectors * 32 {
        return Err(field_error(
            index,
            "md5",
            format!("{sectors} MD5s of 32 hex digits ({} characters)", sectors * 32),
            b,
        ));
    }
    let parse = |chunk: &[u8]| md5_prefix(chunk).ok_or_else(|| field_error(index, "md5", "hexadecimal MD5s", chunk));
    if sectors as usize <= INLINE {
        let mut hashes = [0u64; INLINE];
        for (h, chunk) in hashes.iter_mut().zip(b.chunks(32)) {
            *h = parse(chunk)?;
        }
        Ok(Fingerprints::new(SECTOR as u32, &hashes[..sectors as usize]))
    } else {
        let hashes = b.chunks(32).map(parse).collect::<Result<Vec<_>, _>>()?;
        Ok(Fingerprints::new(SECTOR as u32, &hashes))
    }
}

pub(crate) struct Ssdsim;

impl LineFormat for Ssdsim {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        let (time, offset, len) = common(&mut f, 1)?;
        let (i, b) = f.next("op")?;
        let kind = match b {
            b"0" => IoKind::Write,
            b"1" => IoKind::Read,
            _ => return Err(field_error(i, "op", "1 (read) or 0 (write)", b)),
        };
        let content = match f.next_raw() {
            None => None,
            Some(b) => Some(sector_fingerprints(6, b, len)?),
        };
        f.end(6)?;
        Ok(Some(Raw { time, kind, offset, len, content }))
    }
}

pub(crate) struct Disksim;

impl LineFormat for Disksim {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        let (time, offset, len) = common(&mut f, 1_000_000)?;
        let (i, b) = f.next("flags")?;
        let flags = uint(i, "flags", b)?;
        f.end(5)?;
        let kind = if flags & 1 == 1 { IoKind::Read } else { IoKind::Write };
        Ok(Some(Raw { time, kind, offset, len, content: None }))
    }
}
