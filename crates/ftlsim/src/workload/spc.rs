//! UMass / SPC CSV (Financial1/2, WebSearch1-3): `ASU,LBA(512 B sectors),size_bytes,r|w,seconds`,
//! with extra trailing fields ignored. A file holds several ASUs (application storage units):
//! either one is kept, or they are laid out one after another, each starting at the previous
//! one's largest end address rounded up to 1 MiB (measured by a first pass over the file).

use std::collections::BTreeMap;
use std::path::Path;

use super::fields::{address, field_error, size, time, uint, Fields, LineError, Sep};
use super::options::AsuLayout;
use super::reader::{LineFormat, Raw};
use super::source::{can_read_twice, Lines};
use super::IoKind;
use crate::error::{Result, SimError};

const SECTOR: u64 = 512;
/// ASUs laid out one after another start on this boundary.
pub(crate) const ASU_ALIGN: u64 = 1 << 20;

pub(crate) struct Spc {
    keep: Option<u32>,
    /// Start of each ASU in the combined space (concatenation); empty: offsets unchanged.
    bases: BTreeMap<u32, u64>,
}

/// One SPC line: (ASU, request).
fn parse_line(line: &[u8]) -> Result<(u32, Raw), LineError> {
    let mut f = Fields::new(line, Sep::Char(b','));
    let (i, b) = f.next("ASU")?;
    let asu = uint(i, "ASU", b)?;
    let asu = u32::try_from(asu).map_err(|_| field_error(i, "ASU", "an ASU number below 2^32", b))?;
    let (i, b) = f.next("LBA")?;
    let offset = address(i, "LBA", b, SECTOR)?;
    let (i, b) = f.next("size")?;
    let len = size(i, "size", b, 1)?;
    let (i, b) = f.next("opcode")?;
    let kind = match b {
        b"r" | b"R" => IoKind::Read,
        b"w" | b"W" => IoKind::Write,
        _ => return Err(field_error(i, "opcode", "r or w", b)),
    };
    let (i, b) = f.next("timestamp")?;
    let t = time(i, "timestamp", b, 1_000_000_000)?;
    Ok((asu, Raw { time: t, kind, offset, len, content: None }))
}

impl Spc {
    /// The reader for `path` (named `name` in errors); concatenation measures the ASUs first
    /// (bad lines are left for the main pass to report).
    pub(crate) fn for_file(path: &Path, name: &str, layout: AsuLayout) -> Result<Spc> {
        match layout {
            AsuLayout::Only(asu) => Ok(Spc { keep: Some(asu), bases: BTreeMap::new() }),
            AsuLayout::Concat if !can_read_twice(path) => Err(SimError::input(
                name,
                "laying SPC ASUs out one after another (--asu concat) reads the trace twice, which a pipe or \
                 standard input cannot be: give a file, or keep one ASU with --asu N",
            )),
            AsuLayout::Concat => {
                let mut ends: BTreeMap<u32, u64> = BTreeMap::new();
                let mut lines = Lines::open(path)?;
                while let Some((_, line)) = lines.next_line()? {
                    if let Ok((asu, raw)) = parse_line(line) {
                        let end = ends.entry(asu).or_default();
                        *end = (*end).max(raw.offset.saturating_add(raw.len));
                    }
                }
                Ok(Spc { keep: None, bases: bases(&ends) })
            }
        }
    }

    /// A reader that leaves ASU offsets unchanged (format detection).
    pub(crate) fn plain() -> Spc {
        Spc { keep: None, bases: BTreeMap::new() }
    }
}

/// Start of each ASU when laid out in ASU order.
fn bases(ends: &BTreeMap<u32, u64>) -> BTreeMap<u32, u64> {
    let mut next = 0u64;
    ends.iter()
        .map(|(asu, end)| {
            let base = next;
            next = next.saturating_add(end.div_ceil(ASU_ALIGN).max(1).saturating_mul(ASU_ALIGN));
            (*asu, base)
        })
        .collect()
}

impl LineFormat for Spc {
    fn parse(&mut self, line: &[u8], _: u64) -> Result<Option<Raw>, LineError> {
        let (asu, mut raw) = parse_line(line)?;
        if self.keep.is_some_and(|keep| keep != asu) {
            return Ok(None);
        }
        if !self.bases.is_empty() {
            let base = self
                .bases
                .get(&asu)
                .ok_or_else(|| LineError::Line(format!("ASU {asu} was not seen by the first pass")))?;
            raw.offset =
                raw.offset.checked_add(*base).ok_or_else(|| LineError::Line("offset overflows 64 bits".into()))?;
        }
        Ok(Some(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asus_follow_each_other_on_mib_boundaries() {
        let ends = BTreeMap::from([(0, 5 * ASU_ALIGN + 1), (1, 100), (3, 7)]);
        let b = bases(&ends);
        assert_eq!(b[&0], 0);
        assert_eq!(b[&1], 6 * ASU_ALIGN);
        assert_eq!(b[&3], 7 * ASU_ALIGN);
    }
}
