//! SSDSim ASCII, `time_ns device lba_sectors size_sectors op` with op 1 = read, 0 = write, and an
//! optional sixth field of concatenated per-sector MD5s; its ancestor DiskSim ASCII,
//! `time_ms device lba_sectors size_sectors flags` with bit 0 of flags set for a read; and the
//! layout of the Heimdall collection's MSR cuts (ucare-uchicago/Heimdall), DiskSim's shape in
//! bytes: `time_ms device offset_bytes size_bytes op`, op 1 = read, 0 = write.

use super::fields::{address, field_error, md5_prefix, size, time, uint, Fields, LineError, Sep};
use super::fingerprint::INLINE;
use super::reader::{LineFormat, Raw};
use super::{Fingerprints, IoKind};

const SECTOR: u64 = 512;

/// The four leading fields of the ASCII formats in sectors: (time ns, offset bytes, size bytes).
pub(crate) fn common(f: &mut Fields, time_unit_ns: u64) -> Result<(u64, u64, u64), LineError> {
    common_in(f, time_unit_ns, "lba", SECTOR)
}

/// [`common`] with the address field's name and unit in bytes.
fn common_in(
    f: &mut Fields,
    time_unit_ns: u64,
    address_name: &'static str,
    unit: u64,
) -> Result<(u64, u64, u64), LineError> {
    let (i, b) = f.next("time")?;
    let t = time(i, "time", b, time_unit_ns)?;
    let (i, b) = f.next("device")?;
    uint(i, "device", b)?;
    let (i, b) = f.next(address_name)?;
    let offset = address(i, address_name, b, unit)?;
    let (i, b) = f.next("size")?;
    let len = size(i, "size", b, unit)?;
    Ok((t, offset, len))
}

/// Read (`1`) or write (`0`).
fn op(i: usize, b: &[u8]) -> Result<IoKind, LineError> {
    match b {
        b"0" => Ok(IoKind::Write),
        b"1" => Ok(IoKind::Read),
        _ => Err(field_error(i, "op", "1 (read) or 0 (write)", b)),
    }
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
        let kind = op(i, b)?;
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

pub(crate) struct Heimdall;

impl LineFormat for Heimdall {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let mut f = Fields::new(line, Sep::Whitespace);
        let (time, offset, len) = common_in(&mut f, 1_000_000, "offset", 1)?;
        let (i, b) = f.next("op")?;
        let kind = op(i, b)?;
        f.end(5)?;
        Ok(Some(Raw { time, kind, offset, len, content: None }))
    }
}

/// Whether a DiskSim-shaped line states bytes (Heimdall) rather than sectors: its offset and
/// size are multiples of 512 and the size at least 512. (A DiskSim size in sectors is rarely
/// 512 or more, and then rarely with a sector number that is a multiple of 512.)
pub(crate) fn states_bytes(line: &[u8]) -> bool {
    let mut fields = line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).skip(2);
    let number = |f: Option<&[u8]>| f.and_then(|f| std::str::from_utf8(f).ok()?.parse::<u64>().ok());
    match (number(fields.next()), number(fields.next())) {
        (Some(offset), Some(size)) => offset % SECTOR == 0 && size % SECTOR == 0 && size >= SECTOR,
        _ => false,
    }
}
