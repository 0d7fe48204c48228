//! 3DFTL's spare-area formats (paper 000 §6.1.2, §6.2): the mapping metadata every data page
//! carries, encoded bit by bit into a fixed buffer (no allocation per page).
//!
//! An LPN splits into a group (its GTD entry), a subgroup of that group (an LTD entry) and a
//! slot in the subgroup (a PMT entry): `lpn = group . subgroup . slot`. A page of group `g`
//! carries the LTD entry of every subgroup of `g` and the PMT entries of some of them: always its
//! own subgroup's, and the others' when they fit.
//!
//! - **Uncompressed** (81 B on paper 000's device): a header byte (flag 0, the own subgroup and
//!   slot), every LTD entry and the own subgroup's PMT entries as full PPNs, the own slot holding
//!   the page's LPN (its PPN is known when the page is read).
//! - **Compressed** (at most 108 B): a header byte (flag 1, the mask of included subgroups),
//!   `index_slots` indices (a PPN's upper bits, `ppn >> offset_bits`), then per subgroup either
//!   its PMT entries (included) or its LTD entry alone (dropped), each as an (index position,
//!   offset) pair, then per included subgroup the slot holding its LTD entry. Index 0 holds the
//!   low bits of the page's LPN and the own slot's offset its high bits; the decoder puts the
//!   page's own index and offset back, so position 0 means the page's own half-block.
//!
//! The paper identifies an included subgroup's LTD entry by sorting the indices
//! chronologically (106 B); that needs every page of a half-block to be older than every page of
//! a later index, which holds with one write frontier (paper 000's one-die device) but not with
//! several. The slot of each included subgroup's LTD entry (4 bits each, 2 B in all) says it on
//! any device instead.

use crate::error::{Result, SimError};
use crate::flash::Ppn;

/// Bytes of the largest image (a compressed one with every subgroup included, paper 000's split).
pub const IMAGE_BYTES: usize = 108;
pub const MAX_SUBGROUPS: usize = 4;
pub const MAX_SLOTS: usize = 16;
pub const MAX_ENTRIES: usize = MAX_SUBGROUPS * MAX_SLOTS;
const MAX_INDEX_SLOTS: usize = 8;

/// How an LPN and a PPN split (paper 000: 4 subgroups of 16 LPNs, 25-bit indices, 7-bit offsets,
/// 8 indices per compressed image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub slot_bits: u32,
    pub subgroup_bits: u32,
    pub offset_bits: u32,
    pub ppn_bits: u32,
    pub index_slots: u32,
}

impl Split {
    /// Paper 000 §6.1.2 (spec section 5.8).
    pub const PAPER: Split = Split { slot_bits: 4, subgroup_bits: 2, offset_bits: 7, ppn_bits: 32, index_slots: 8 };

    /// Refuses a split the fixed-size buffers cannot hold, naming the parameter.
    pub fn check(&self, prefix: &str) -> Result<()> {
        let bad = |name: &str, msg: &str| Err(SimError::config(format!("{prefix}.{name}"), msg.to_string()));
        if self.slot_bits > 4 {
            return bad("slot_bits", "at most 4 (16 PMT entries per subgroup)");
        }
        if self.subgroup_bits > 2 {
            return bad("subgroup_bits", "at most 2 (4 subgroups per group)");
        }
        if !(2..=MAX_INDEX_SLOTS as u32).contains(&self.index_slots) {
            return bad("index_slots", "must be in [2, 8]");
        }
        if !(8..=32).contains(&self.ppn_bits) || self.offset_bits == 0 || self.offset_bits >= self.ppn_bits {
            return bad("offset_bits", "must be in [1, ppn_bits) with ppn_bits in [8, 32]");
        }
        Ok(())
    }

    pub fn slots(&self) -> usize {
        1 << self.slot_bits
    }
    pub fn subgroups(&self) -> usize {
        1 << self.subgroup_bits
    }
    /// LPNs per group (per GTD entry).
    pub fn group_size(&self) -> u32 {
        1 << (self.slot_bits + self.subgroup_bits)
    }
    #[inline]
    pub fn group_of(&self, lpn: u32) -> u32 {
        lpn >> (self.slot_bits + self.subgroup_bits)
    }
    #[inline]
    pub fn subgroup_of(&self, lpn: u32) -> usize {
        ((lpn >> self.slot_bits) as usize) & (self.subgroups() - 1)
    }
    /// Position of the LPN in its group's entries (`subgroup * slots + slot`).
    #[inline]
    pub fn entry_of(&self, lpn: u32) -> usize {
        (lpn & (self.group_size() - 1)) as usize
    }
    fn index_bits(&self) -> u32 {
        self.ppn_bits - self.offset_bits
    }
    fn position_bits(&self) -> u32 {
        32 - (self.index_slots - 1).leading_zeros()
    }
    fn none_ppn(&self) -> u64 {
        (1u64 << self.ppn_bits) - 1
    }
    fn none_index(&self) -> u64 {
        (1u64 << self.index_bits()) - 1
    }
    /// Whether every PPN of a device of `pages` pages is encodable (the all-ones index means
    /// "unmapped").
    pub fn addresses(&self, pages: u64) -> bool {
        pages == 0 || ((pages - 1) >> self.offset_bits) < self.none_index()
    }

    /// Bytes of an uncompressed image.
    pub fn uncompressed_bytes(&self) -> usize {
        1 + ((self.subgroups() + self.slots()) * self.ppn_bits as usize).div_ceil(8)
    }

    /// Bytes of a compressed image with `included` subgroups' PMT entries.
    pub fn compressed_bytes(&self, included: usize) -> usize {
        let pair = (self.position_bits() + self.offset_bits) as usize;
        let pairs = included * self.slots() + (self.subgroups() - included);
        let bits =
            self.index_slots as usize * self.index_bits() as usize + pairs * pair + included * self.slot_bits as usize;
        1 + bits.div_ceil(8)
    }
}

/// Which format a page's metadata was written in (paper 000 Fig 6.7's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Compressed, every subgroup's PMT entries included.
    Compressed,
    /// Compressed, some subgroups replaced by their LTD entry.
    SemiCompressed,
    /// Only the own subgroup's PMT entries, in full.
    Uncompressed,
}

/// What a page's spare area says about its group, decoded (or to be encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Content {
    /// The page's LPN.
    pub lpn: u32,
    /// Bit `s`: subgroup `s`'s PMT entries are in `entries`.
    pub included: u8,
    /// Every subgroup's LTD entry: the newest page of the subgroup (`None`: it maps nothing).
    pub ltd: [Option<Ppn>; MAX_SUBGROUPS],
    /// The group's PMT entries (`subgroup * slots + slot`), meaningful for included subgroups.
    pub entries: [Option<Ppn>; MAX_ENTRIES],
}

impl Content {
    pub const EMPTY: Content =
        Content { lpn: 0, included: 0, ltd: [None; MAX_SUBGROUPS], entries: [None; MAX_ENTRIES] };

    #[inline]
    pub fn includes(&self, subgroup: usize) -> bool {
        self.included & (1 << subgroup) != 0
    }
}

/// Writes `width` (at most 32) bits of `value` at bit `at`, least significant first, a byte's
/// worth at a time.
#[inline]
fn put(buf: &mut [u8], at: &mut usize, value: u64, width: u32) {
    let (mut value, mut pos, mut left) = (value, *at, width);
    while left > 0 {
        let (byte, shift) = (pos / 8, (pos % 8) as u32);
        let n = left.min(8 - shift);
        let mask = (((1u16 << n) - 1) as u8) << shift;
        buf[byte] = (buf[byte] & !mask) | (((value as u8) << shift) & mask);
        value >>= n;
        pos += n as usize;
        left -= n;
    }
    *at += width as usize;
}

#[inline]
fn get(buf: &[u8], at: &mut usize, width: u32) -> u64 {
    let (mut value, mut pos, mut done) = (0u64, *at, 0u32);
    while done < width {
        let (byte, shift) = (pos / 8, (pos % 8) as u32);
        let n = (width - done).min(8 - shift);
        let bits = (buf[byte] >> shift) as u64 & ((1u64 << n) - 1);
        value |= bits << done;
        pos += n as usize;
        done += n;
    }
    *at += width as usize;
    value
}

/// The distinct indices of a candidate image, the page's own first.
struct Indices {
    values: [u64; MAX_ENTRIES + MAX_SUBGROUPS + 1],
    len: usize,
}

impl Indices {
    fn new(own: u64) -> Self {
        let mut values = [0; MAX_ENTRIES + MAX_SUBGROUPS + 1];
        values[0] = own;
        Indices { values, len: 1 }
    }
    #[inline]
    fn add(&mut self, index: u64) {
        if !self.values[..self.len].contains(&index) {
            self.values[self.len] = index;
            self.len += 1;
        }
    }
    fn position(&self, index: u64) -> u64 {
        self.values[..self.len].iter().position(|&v| v == index).expect("every index was added") as u64
    }
}

/// Encodes and decodes images for one [`Split`].
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    pub split: Split,
    pub compression: bool,
}

impl Codec {
    fn index(&self, ppn: Option<Ppn>) -> u64 {
        ppn.map_or(self.split.none_index(), |p| (p.get() as u64) >> self.split.offset_bits)
    }
    fn offset(&self, ppn: Option<Ppn>) -> u64 {
        ppn.map_or(0, |p| p.get() as u64 & ((1 << self.split.offset_bits) - 1))
    }

    /// The indices an image holding `included` subgroups' entries (and the others' LTD entries)
    /// needs, the page's own index first.
    fn indices(&self, content: &Content, own: Ppn, included: u8) -> Indices {
        let s = &self.split;
        let mut set = Indices::new(self.index(Some(own)));
        for sub in 0..s.subgroups() {
            if included & (1 << sub) != 0 {
                for &e in &content.entries[sub * s.slots()..(sub + 1) * s.slots()] {
                    set.add(self.index(e));
                }
            } else {
                set.add(self.index(content.ltd[sub]));
            }
        }
        set
    }

    /// The subgroups a compressed image of `content` (written at `own`) includes, or `None` when
    /// only the own subgroup's would fit (then the uncompressed format is written). Drops, while
    /// more than `index_slots` indices are needed, the subgroup whose removal saves the most
    /// (ties: the lowest-numbered), never the own one.
    pub fn choose(&self, content: &Content, own: Ppn) -> Option<u8> {
        let own_sub = self.split.subgroup_of(content.lpn);
        let mut included = content.included | 1 << own_sub;
        loop {
            if included == 1 << own_sub || !self.compression {
                return None;
            }
            if self.indices(content, own, included).len <= self.split.index_slots as usize {
                return Some(included);
            }
            let drop = (0..self.split.subgroups())
                .filter(|&sub| sub != own_sub && included & (1 << sub) != 0)
                .min_by_key(|&sub| self.indices(content, own, included & !(1 << sub)).len)
                .expect("a subgroup other than the own one is included");
            included &= !(1 << drop);
        }
    }

    /// Encodes `content` as the metadata of the page at `own` into `buf`; returns the format and
    /// the subgroups whose PMT entries it holds. `content.entries` must hold `own` at the page's
    /// LPN, and each included subgroup's LTD entry among its entries.
    pub fn encode(&self, content: &Content, own: Ppn, buf: &mut [u8; IMAGE_BYTES]) -> Result<(Format, u8)> {
        let s = &self.split;
        let own_sub = s.subgroup_of(content.lpn);
        let own_slot = content.lpn as usize & (s.slots() - 1);
        if content.entries[s.entry_of(content.lpn)] != Some(own) || content.ltd[own_sub] != Some(own) {
            return Err(SimError::Other(format!("3DFTL metadata of PPN {own} does not map LPN {} to it", content.lpn)));
        }
        let mut at = 0;
        let Some(included) = self.choose(content, own) else {
            put(buf, &mut at, 0, 1);
            put(buf, &mut at, own_sub as u64, 2);
            put(buf, &mut at, own_slot as u64, 4);
            put(buf, &mut at, 0, 1);
            for &ltd in &content.ltd[..s.subgroups()] {
                put(buf, &mut at, ltd.map_or(s.none_ppn(), |p| p.get() as u64), s.ppn_bits);
            }
            for slot in 0..s.slots() {
                let e = content.entries[own_sub * s.slots() + slot];
                let value =
                    if slot == own_slot { content.lpn as u64 } else { e.map_or(s.none_ppn(), |p| p.get() as u64) };
                put(buf, &mut at, value, s.ppn_bits);
            }
            return Ok((Format::Uncompressed, 1 << own_sub));
        };
        let indices = self.indices(content, own, included);
        put(buf, &mut at, 1, 1);
        put(buf, &mut at, included as u64, 4);
        put(buf, &mut at, 0, 3);
        let low = content.lpn as u64 & s.none_index();
        put(buf, &mut at, low, s.index_bits());
        for i in 1..s.index_slots as usize {
            let index = if i < indices.len { indices.values[i] } else { s.none_index() };
            put(buf, &mut at, index, s.index_bits());
        }
        let pair = |buf: &mut [u8; IMAGE_BYTES], at: &mut usize, ppn: Option<Ppn>| {
            put(buf, at, indices.position(self.index(ppn)), s.position_bits());
            put(buf, at, self.offset(ppn), s.offset_bits);
        };
        for sub in 0..s.subgroups() {
            if included & (1 << sub) == 0 {
                pair(buf, &mut at, content.ltd[sub]);
                continue;
            }
            for slot in 0..s.slots() {
                if sub == own_sub && slot == own_slot {
                    put(buf, &mut at, 0, s.position_bits());
                    put(buf, &mut at, content.lpn as u64 >> s.index_bits(), s.offset_bits);
                } else {
                    pair(buf, &mut at, content.entries[sub * s.slots() + slot]);
                }
            }
        }
        for sub in (0..s.subgroups()).filter(|&sub| included & (1 << sub) != 0) {
            let entries = &content.entries[sub * s.slots()..(sub + 1) * s.slots()];
            let slot = match content.ltd[sub] {
                None => 0,
                ltd => entries.iter().position(|&e| e == ltd).ok_or_else(|| {
                    SimError::Other(format!(
                        "3DFTL metadata of PPN {own}: subgroup {sub}'s LTD entry is not among its entries"
                    ))
                })?,
            };
            put(buf, &mut at, slot as u64, s.slot_bits);
        }
        let full = included.count_ones() as usize == s.subgroups();
        Ok((if full { Format::Compressed } else { Format::SemiCompressed }, included))
    }

    /// Decodes the metadata of the page at `own`.
    pub fn decode(&self, buf: &[u8; IMAGE_BYTES], own: Ppn) -> Content {
        let s = &self.split;
        let mut out = Content::EMPTY;
        let mut at = 0;
        let ppn = |v: u64| (v != s.none_ppn()).then(|| Ppn::new(v as u32));
        if get(buf, &mut at, 1) == 0 {
            let own_sub = get(buf, &mut at, 2) as usize;
            let own_slot = get(buf, &mut at, 4) as usize;
            at += 1;
            for ltd in &mut out.ltd[..s.subgroups()] {
                *ltd = ppn(get(buf, &mut at, s.ppn_bits));
            }
            for slot in 0..s.slots() {
                let v = get(buf, &mut at, s.ppn_bits);
                if slot == own_slot {
                    out.lpn = v as u32;
                    out.entries[own_sub * s.slots() + slot] = Some(own);
                } else {
                    out.entries[own_sub * s.slots() + slot] = ppn(v);
                }
            }
            out.included = 1 << own_sub;
            return out;
        }
        out.included = get(buf, &mut at, 4) as u8;
        at += 3;
        let mut indices = [0u64; MAX_INDEX_SLOTS];
        for index in &mut indices[..s.index_slots as usize] {
            *index = get(buf, &mut at, s.index_bits());
        }
        let low = indices[0];
        let (own_sub, own_slot) =
            (((low >> s.slot_bits) as usize) & (s.subgroups() - 1), low as usize & (s.slots() - 1));
        indices[0] = own.get() as u64 >> s.offset_bits;
        let pair = |at: &mut usize| {
            let index = indices[get(buf, at, s.position_bits()) as usize];
            let offset = get(buf, at, s.offset_bits);
            (index != s.none_index()).then(|| Ppn::new((index << s.offset_bits | offset) as u32))
        };
        for sub in 0..s.subgroups() {
            if !out.includes(sub) {
                out.ltd[sub] = pair(&mut at);
                continue;
            }
            for slot in 0..s.slots() {
                if sub == own_sub && slot == own_slot {
                    at += s.position_bits() as usize;
                    let high = get(buf, &mut at, s.offset_bits);
                    out.lpn = (high << s.index_bits() | low) as u32;
                    out.entries[sub * s.slots() + slot] = Some(own);
                } else {
                    out.entries[sub * s.slots() + slot] = pair(&mut at);
                }
            }
        }
        let included = out.included;
        for sub in (0..s.subgroups()).filter(|&sub| included & (1 << sub) != 0) {
            let slot = get(buf, &mut at, s.slot_bits) as usize;
            out.ltd[sub] = out.entries[sub * s.slots() + slot];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CODEC: Codec = Codec { split: Split::PAPER, compression: true };

    #[test]
    fn paper_000s_formats_fit_the_usable_spare_bytes() {
        let s = Split::PAPER;
        assert_eq!(s.uncompressed_bytes(), 81, "4 LTD + 16 PMT entries of 32 bits and the header (§6.1.2: 81 B)");
        assert_eq!(s.compressed_bytes(4), IMAGE_BYTES, "8 25-bit indices, 64 10-bit pairs, 4 LTD slots");
        assert!(s.compressed_bytes(2) < s.compressed_bytes(3));
        assert!(s.addresses(1 << 20), "mlc8g's 2^20 pages");
    }

    /// A group of paper 000's split whose entries take the given PPNs (`u32::MAX`: unmapped),
    /// every subgroup present, written by the page at LPN `lpn`'s entry.
    fn content(lpn: u32, ppns: &[u32; 64]) -> (Content, Ppn) {
        let mut c = Content { lpn, included: 0b1111, ..Content::EMPTY };
        for (e, &p) in c.entries.iter_mut().zip(ppns) {
            *e = (p != u32::MAX).then(|| Ppn::new(p));
        }
        let own = c.entries[Split::PAPER.entry_of(lpn)].expect("the own entry is mapped");
        for sub in 0..4 {
            c.ltd[sub] = c.entries[sub * 16..sub * 16 + 16].iter().flatten().max().copied();
        }
        c.ltd[Split::PAPER.subgroup_of(lpn)] = Some(own);
        (c, own)
    }

    fn strip(c: &Content, included: u8) -> Content {
        let mut out = *c;
        out.included = included;
        for sub in 0..4 {
            if included & (1 << sub) == 0 {
                out.entries[sub * 16..sub * 16 + 16].fill(None);
            }
        }
        out
    }

    #[test]
    fn a_sequentially_written_group_compresses_fully() {
        let mut ppns = [0u32; 64];
        for (i, p) in ppns.iter_mut().enumerate() {
            *p = 1000 + i as u32;
        }
        let (c, own) = content(64 * 7 + 63, &ppns);
        let mut buf = [0u8; IMAGE_BYTES];
        assert_eq!(CODEC.encode(&c, own, &mut buf).unwrap(), (Format::Compressed, 0b1111));
        assert_eq!(CODEC.decode(&buf, own), c);
    }

    #[test]
    fn scattered_subgroups_are_dropped_until_the_indices_fit() {
        // Subgroup 0 (the own one) in one half-block, subgroup 1 in another, subgroups 2 and 3
        // scattered over 16 half-blocks each.
        let mut ppns = [0u32; 64];
        for (i, p) in ppns.iter_mut().enumerate() {
            *p = match i / 16 {
                0 => 5 + i as u32,
                1 => 128 * 9 + i as u32,
                _ => 128 * (20 + i as u32),
            };
        }
        let (c, own) = content(3, &ppns);
        let mut buf = [0u8; IMAGE_BYTES];
        let (format, included) = CODEC.encode(&c, own, &mut buf).unwrap();
        assert_eq!((format, included), (Format::SemiCompressed, 0b0011));
        assert_eq!(CODEC.decode(&buf, own), strip(&c, 0b0011));
        let off = Codec { compression: false, ..CODEC };
        assert_eq!(off.encode(&c, own, &mut buf).unwrap(), (Format::Uncompressed, 0b0001));
        assert_eq!(off.decode(&buf, own), strip(&c, 0b0001));
    }

    #[test]
    fn metadata_that_does_not_map_its_own_page_is_refused() {
        let (mut c, own) = content(0, &[7; 64]);
        c.entries[0] = Some(Ppn::new(8));
        let err = CODEC.encode(&c, own, &mut [0; IMAGE_BYTES]).unwrap_err().to_string();
        assert!(err.contains("does not map LPN 0"), "{err}");
    }

    proptest! {
        /// Any pattern of PPNs (some unmapped, some in few half-blocks, some scattered) decodes
        /// to what was encoded, restricted to the subgroups the encoder kept; the image fits.
        #[test]
        fn images_round_trip(
            lpn in 0u32..(1 << 20),
            bases in prop::collection::vec(0u32..(1 << 13), 1..12),
            picks in prop::collection::vec((0usize..12, 0u32..128, 0u32..8), 64),
            compression in any::<bool>(),
        ) {
            let mut ppns = [0u32; 64];
            for (p, &(base, offset, unmapped)) in ppns.iter_mut().zip(&picks) {
                *p = if unmapped == 0 { u32::MAX } else { bases[base % bases.len()] * 128 + offset };
            }
            ppns[Split::PAPER.entry_of(lpn)] = (1 << 20) - 1;
            let (c, own) = content(lpn, &ppns);
            let codec = Codec { compression, ..CODEC };
            let mut buf = [0u8; IMAGE_BYTES];
            let (format, included) = codec.encode(&c, own, &mut buf).unwrap();
            prop_assert_eq!(codec.decode(&buf, own), strip(&c, included));
            let bytes = match format {
                Format::Uncompressed => Split::PAPER.uncompressed_bytes(),
                _ => Split::PAPER.compressed_bytes(included.count_ones() as usize),
            };
            prop_assert!(bytes <= IMAGE_BYTES);
            prop_assert_eq!(format == Format::Compressed, included == 0b1111);
        }
    }
}
