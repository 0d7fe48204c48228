//! 3DFTL's spare-area formats (paper 000 §6.1.2, §6.2): the mapping metadata every data page
//! carries, packed field by field into a fixed buffer (no allocation per page).
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

use super::bits::{replace_bits, BitWriter, Fields};
use super::ids::{IndexIds, MAX_IDS};
use crate::error::{Result, SimError};
use crate::flash::Ppn;

/// Bytes of the largest image (a compressed one with every subgroup included, paper 000's split).
pub const IMAGE_BYTES: usize = 108;
pub const MAX_SUBGROUPS: usize = 4;
pub const MAX_SLOTS: usize = 16;
pub const MAX_ENTRIES: usize = MAX_SUBGROUPS * MAX_SLOTS;
pub const MAX_INDEX_SLOTS: usize = 8;

/// Evaluates `$body` with `$s` bound to `$split`, written twice: once with `$s` the constant
/// [`Split::PAPER`] (every preset's split), whose field widths, masks and loop bounds the
/// compiler then folds into `$body` and what it inlines, and once with the configured split.
macro_rules! with_split {
    ($split:expr, |$s:ident| $body:expr) => {
        if $split == Split::PAPER {
            let $s = &Split::PAPER;
            $body
        } else {
            let $s = &$split;
            $body
        }
    };
}
pub(super) use with_split;

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
    /// Bits of an (index position, offset) pair.
    fn pair_bits(&self) -> u32 {
        self.position_bits() + self.offset_bits
    }
    fn none_ppn(&self) -> u64 {
        (1u64 << self.ppn_bits) - 1
    }
    /// The index of a PMT or LTD entry (unmapped: the all-ones index).
    #[inline]
    pub fn index(&self, ppn: Option<Ppn>) -> u32 {
        ppn.map_or(self.none_index() as u32, |p| p.get() >> self.offset_bits)
    }
    fn none_index(&self) -> u64 {
        (1u64 << self.index_bits()) - 1
    }
    /// Whether every PPN of a device of `pages` pages is encodable (the all-ones index means
    /// "unmapped").
    pub fn addresses(&self, pages: u64) -> bool {
        pages == 0 || ((pages - 1) >> self.offset_bits) < self.none_index()
    }

    /// The bit where a compressed image including subgroups `included` holds the offset of the
    /// own entry (subgroup `own_sub`, slot `own_slot`): after the header, the indices and the
    /// pairs before it, and its pair's position.
    fn own_offset_at(&self, included: u8, own_sub: usize, own_slot: usize) -> u32 {
        let before = (included & ((1 << own_sub) - 1)).count_ones();
        let pairs = before * self.slots() as u32 + (own_sub as u32 - before) + own_slot as u32;
        8 + self.index_slots * self.index_bits() + pairs * self.pair_bits() + self.position_bits()
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

    /// The metadata borrowed for the encoder.
    pub fn view(&self) -> ContentRef<'_> {
        ContentRef { lpn: self.lpn, included: self.included, ltd: &self.ltd, entries: &self.entries }
    }
}

/// A group's metadata as the encoder reads it, borrowed where it is kept (a cached line's
/// entries, or a [`Content`]), so encoding copies no entries.
#[derive(Debug, Clone, Copy)]
pub struct ContentRef<'a> {
    pub lpn: u32,
    pub included: u8,
    pub ltd: &'a [Option<Ppn>; MAX_SUBGROUPS],
    /// The group's PMT entries (`subgroup * slots + slot`), at least a group's worth.
    pub entries: &'a [Option<Ppn>],
}

/// Writes (index position, offset) pairs of `p` and `o` bits, as many to a field as fit in 32
/// bits: a subgroup's 16 pairs of paper 000's split take 6 fields, not 16.
struct PairWriter {
    field: u64,
    bits: u32,
    position_bits: u32,
    width: u32,
}

impl PairWriter {
    fn new((p, o): (u32, u32)) -> Self {
        PairWriter { field: 0, bits: 0, position_bits: p, width: p + o }
    }

    #[inline(always)]
    fn push(&mut self, out: &mut BitWriter, position: u8, offset: u64) {
        if self.width > 32 {
            out.put(position as u64, self.position_bits);
            out.put(offset, self.width - self.position_bits);
            return;
        }
        self.field |= (position as u64 | offset << self.position_bits) << self.bits;
        self.bits += self.width;
        if self.bits + self.width > 32 {
            out.put(self.field, self.bits);
            (self.field, self.bits) = (0, 0);
        }
    }

    fn finish(self, out: &mut BitWriter) {
        if self.bits > 0 {
            out.put(self.field, self.bits);
        }
    }
}

/// A subgroup's (at most 16) entry ids as the bytes of two words, so the first entry using an
/// id is found with a few word operations instead of a comparison per entry.
struct SlotWords(u128);

impl SlotWords {
    const ONES: u128 = u128::from_le_bytes([1; 16]);

    #[inline(always)]
    fn new(ids: &[u8]) -> Self {
        // Padding no id equals (ids are below `MAX_IDS`).
        let mut bytes = [u8::MAX; MAX_SLOTS];
        bytes[..ids.len()].copy_from_slice(ids);
        SlotWords(u128::from_le_bytes(bytes))
    }

    /// The first slot holding `id`, which one slot holds. A byte equal to `id` is a zero byte
    /// of `x`; the lowest byte the test flags is the first zero byte (a borrow can flag a byte
    /// wrongly only above a zero byte).
    #[inline(always)]
    fn first(&self, id: u8) -> u32 {
        let x = self.0 ^ (id as u128 * Self::ONES);
        let zeros = x.wrapping_sub(Self::ONES) & !x & Self::ONES << 7;
        zeros.trailing_zeros() / 8
    }
}

/// Encodes and decodes images for one [`Split`].
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    pub split: Split,
    pub compression: bool,
}

impl Codec {
    #[inline]
    fn offset(&self, ppn: Option<Ppn>) -> u64 {
        ppn.map_or(0, |p| p.get() as u64 & ((1 << self.split.offset_bits) - 1))
    }

    /// The subgroups a compressed image of `content` includes, or `None` when only the own
    /// subgroup's would fit (then the uncompressed format is written). Drops, while more than
    /// `index_slots` indices are needed, the subgroup whose removal saves the most (ties: the
    /// lowest-numbered), never the own one.
    #[inline(always)]
    fn choose(&self, content: &ContentRef, ids: &IndexIds, own: u8) -> Option<u8> {
        let subgroups = self.split.subgroups();
        let own_sub = self.split.subgroup_of(content.lpn);
        let mut included = content.included | 1 << own_sub;
        loop {
            if included == 1 << own_sub || !self.compression {
                return None;
            }
            if ids.count(subgroups, own, included) <= self.split.index_slots {
                return Some(included);
            }
            let drop = (0..subgroups)
                .filter(|&sub| sub != own_sub && included & (1 << sub) != 0)
                .min_by_key(|&sub| ids.count(subgroups, own, included & !(1 << sub)))
                .expect("a subgroup other than the own one is included");
            included &= !(1 << drop);
        }
    }

    /// Encodes `content` as the metadata of the page at `own` into `buf`; returns the format and
    /// the subgroups whose PMT entries it holds. `content.entries` must hold `own` at the page's
    /// LPN, and each included subgroup's LTD entry among its entries.
    pub fn encode(&self, content: &Content, own: Ppn, buf: &mut [u8; IMAGE_BYTES]) -> Result<(Format, u8)> {
        self.encode_with(&content.view(), &IndexIds::new(&self.split, &content.entries, &content.ltd), own, buf)
    }

    /// [`Codec::encode`] with the ids of `content`'s entries at hand (a group keeps them).
    pub fn encode_with(
        &self,
        content: &ContentRef,
        ids: &IndexIds,
        own: Ppn,
        buf: &mut [u8; IMAGE_BYTES],
    ) -> Result<(Format, u8)> {
        with_split!(self.split, |split| Codec { split: *split, ..*self }.encode_inline(content, ids, own, buf))
    }

    #[inline(always)]
    fn encode_inline(
        &self,
        content: &ContentRef,
        ids: &IndexIds,
        own: Ppn,
        buf: &mut [u8; IMAGE_BYTES],
    ) -> Result<(Format, u8)> {
        let s = &self.split;
        let slots = s.slots();
        let own_sub = s.subgroup_of(content.lpn);
        let own_slot = content.lpn as usize & (slots - 1);
        let own_entry = s.entry_of(content.lpn);
        if content.entries[own_entry] != Some(own) || content.ltd[own_sub] != Some(own) {
            return Err(SimError::Other(format!("3DFTL metadata of PPN {own} does not map LPN {} to it", content.lpn)));
        }
        let mut out = BitWriter::new(buf);
        let Some(included) = self.choose(content, ids, ids.entry[own_entry]) else {
            out.put(0, 1);
            out.put(own_sub as u64, 2);
            out.put(own_slot as u64, 4);
            out.put(0, 1);
            for &ltd in &content.ltd[..s.subgroups()] {
                out.put(ltd.map_or(s.none_ppn(), |p| p.get() as u64), s.ppn_bits);
            }
            for slot in 0..slots {
                let e = content.entries[own_sub * slots + slot];
                let value =
                    if slot == own_slot { content.lpn as u64 } else { e.map_or(s.none_ppn(), |p| p.get() as u64) };
                out.put(value, s.ppn_bits);
            }
            out.finish();
            return Ok((Format::Uncompressed, 1 << own_sub));
        };
        let own_id = ids.entry[own_entry];
        let pair = (s.position_bits(), s.offset_bits);
        // Index positions in the image: the own index first, then in order of first use.
        // Indexed by any `u8`, so no id needs a bounds check.
        let mut position = [u8::MAX; 256];
        let mut order = [0u8; MAX_IDS];
        let mut len = 1;
        position[own_id as usize] = 0;
        let mut place = |id: u8| {
            (position[id as usize], order[len]) = (len as u8, id);
            len += 1;
        };
        let mut placed = 1u128 << own_id;
        for sub in 0..s.subgroups() {
            if included & (1 << sub) == 0 {
                let id = ids.ltd[sub];
                if placed & 1 << id == 0 {
                    place(id);
                    placed |= 1 << id;
                }
                continue;
            }
            // A subgroup's new ids (a few at most) in order of first use: the first entry of
            // each new id is a bit of `firsts`.
            let sub_ids = &ids.entry[sub * slots..(sub + 1) * slots];
            let words = SlotWords::new(sub_ids);
            let (mut new, mut firsts) = (ids.uses[sub] & !placed, 0u32);
            while new != 0 {
                firsts |= 1 << words.first(new.trailing_zeros() as u8);
                new &= new - 1;
            }
            while firsts != 0 {
                place(sub_ids[firsts.trailing_zeros() as usize]);
                firsts &= firsts - 1;
            }
            placed |= ids.uses[sub];
        }
        out.put(1 | (included as u64) << 1, 8);
        out.put(content.lpn as u64 & s.none_index(), s.index_bits());
        for &id in &order[1..len] {
            out.put(ids.values[id as usize] as u64, s.index_bits());
        }
        for _ in len..s.index_slots as usize {
            out.put(s.none_index(), s.index_bits());
        }
        // Each subgroup's pairs are packed from a field boundary of their own (the bits are the
        // same), so with paper 000's split every shift in the packing is a constant. The own
        // entry's pair (position 0) is written like the others and its offset replaced below.
        let mut ltd_hits = [0u32; MAX_SUBGROUPS];
        for sub in 0..s.subgroups() {
            let mut pairs = PairWriter::new(pair);
            if included & (1 << sub) == 0 {
                pairs.push(&mut out, position[ids.ltd[sub] as usize], self.offset(content.ltd[sub]));
                pairs.finish(&mut out);
                continue;
            }
            let range = sub * slots..(sub + 1) * slots;
            let entries = &content.entries[range.clone()];
            // Where the LTD entry is among the entries (the first equal one), without a branch.
            let ltd = content.ltd[sub];
            ltd_hits[sub] = entries.iter().enumerate().fold(0, |hits, (slot, &e)| hits | ((e == ltd) as u32) << slot);
            // A field's worth of pairs at a time: with paper 000's split, three with constant shifts.
            let per_field = (32 / s.pair_bits()).max(1) as usize;
            let (fields, rest) = (entries.chunks_exact(per_field), &ids.entry[range]);
            let (tail, tail_ids) = (fields.remainder(), &rest[rest.len() - fields.remainder().len()..]);
            for (field, field_ids) in fields.zip(rest.chunks_exact(per_field)) {
                for (&e, &id) in field.iter().zip(field_ids) {
                    pairs.push(&mut out, position[id as usize], self.offset(e));
                }
                pairs.finish(&mut out);
                pairs = PairWriter::new(pair);
            }
            for (&e, &id) in tail.iter().zip(tail_ids) {
                pairs.push(&mut out, position[id as usize], self.offset(e));
            }
            pairs.finish(&mut out);
        }
        for sub in (0..s.subgroups()).filter(|&sub| included & (1 << sub) != 0) {
            let slot = match content.ltd[sub] {
                None => 0,
                _ if ltd_hits[sub] == 0 => {
                    return Err(SimError::Other(format!(
                        "3DFTL metadata of PPN {own}: subgroup {sub}'s LTD entry is not among its entries"
                    )))
                }
                _ => ltd_hits[sub].trailing_zeros(),
            };
            out.put(slot as u64, s.slot_bits);
        }
        out.finish();
        // The own entry's offset field holds the LPN's high bits (position 0: its PPN).
        let high = s.own_offset_at(included, own_sub, own_slot);
        replace_bits(buf, high, s.offset_bits, content.lpn as u64 >> s.index_bits());
        let full = included.count_ones() as usize == s.subgroups();
        Ok((if full { Format::Compressed } else { Format::SemiCompressed }, included))
    }

    /// Decodes the metadata of the page at `own`.
    pub fn decode(&self, buf: &[u8; IMAGE_BYTES], own: Ppn) -> Content {
        with_split!(self.split, |split| Codec { split: *split, ..*self }.decode_inline(buf, own))
    }

    #[inline(always)]
    fn decode_inline(&self, buf: &[u8; IMAGE_BYTES], own: Ppn) -> Content {
        let s = &self.split;
        let (slots, subgroups) = (s.slots(), s.subgroups());
        let mut out = Content::EMPTY;
        let fields = Fields::<{ IMAGE_BYTES + 8 }>::new(buf);
        if fields.get(0, 1) == 0 {
            let own_sub = fields.get(1, 2) as usize;
            let own_slot = fields.get(3, 4) as usize;
            let ppn = |v: u64| (v != s.none_ppn()).then(|| Ppn::new(v as u32));
            let mut at = 8;
            for ltd in &mut out.ltd[..subgroups] {
                *ltd = ppn(fields.get(at, s.ppn_bits));
                at += s.ppn_bits;
            }
            for (slot, entry) in out.entries[own_sub * slots..(own_sub + 1) * slots].iter_mut().enumerate() {
                let v = fields.get(at, s.ppn_bits);
                at += s.ppn_bits;
                if slot == own_slot {
                    (out.lpn, *entry) = (v as u32, Some(own));
                } else {
                    *entry = ppn(v);
                }
            }
            out.included = 1 << own_sub;
            return out;
        }
        out.included = fields.get(1, 4) as u8;
        let index_slots = s.index_slots as usize;
        let mut at = 8;
        let mut indices = [0u32; MAX_INDEX_SLOTS];
        for index in &mut indices[..index_slots] {
            *index = fields.get(at, s.index_bits()) as u32;
            at += s.index_bits();
        }
        let low = indices[0];
        let (own_sub, own_slot) = (((low >> s.slot_bits) as usize) & (subgroups - 1), low as usize & (slots - 1));
        indices[0] = own.get() >> s.offset_bits;
        let none = s.none_index() as u32;
        let (width, position_mask) = (s.pair_bits(), (1u64 << s.position_bits()) - 1);
        let pair = |v: u64| {
            let v = v & ((1u64 << width) - 1);
            let index = indices[(v & position_mask) as usize];
            (index != none).then(|| Ppn::new(index << s.offset_bits | (v >> s.position_bits()) as u32))
        };
        // As many pairs to a load as its 57 bits hold (five of paper 000's split), so the shifts
        // within a load are constants.
        let per_load = (57 / width) as usize;
        for sub in 0..subgroups {
            if !out.includes(sub) {
                out.ltd[sub] = pair(fields.get(at, width));
                at += width;
                continue;
            }
            for entries in out.entries[sub * slots..(sub + 1) * slots].chunks_mut(per_load) {
                let bits = width * entries.len() as u32;
                let word = fields.get(at, bits);
                at += bits;
                for (k, entry) in entries.iter_mut().enumerate() {
                    *entry = pair(word >> (k as u32 * width));
                }
            }
        }
        if out.includes(own_sub) {
            // The own entry's offset field holds the LPN's high bits (its position is 0).
            let high = fields.get(s.own_offset_at(out.included, own_sub, own_slot), s.offset_bits);
            out.lpn = (high << s.index_bits() | low as u64) as u32;
            out.entries[own_sub * slots + own_slot] = Some(own);
        }
        let included = out.included;
        for sub in (0..subgroups).filter(|&sub| included & (1 << sub) != 0) {
            let slot = fields.get(at, s.slot_bits) as usize;
            at += s.slot_bits;
            out.ltd[sub] = out.entries[sub * slots + slot];
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
        /// The word search finds the first slot holding an id, as a linear search does, for
        /// any ids (few distinct ones, so repeats are common) and any subgroup size.
        #[test]
        fn slot_words_find_the_first_use(ids in prop::collection::vec(0u8..6, 1..=MAX_SLOTS)) {
            let words = SlotWords::new(&ids);
            for (slot, &id) in ids.iter().enumerate() {
                let first = ids.iter().position(|&other| other == id).unwrap();
                prop_assert_eq!(words.first(id) as usize, first, "slot {}", slot);
            }
        }

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

        /// A line keeps the entries of its absent subgroups, with ids over all of them (updated
        /// entry by entry from another group's): its image is the one the line with those
        /// entries unmapped and ids built from scratch gives, as the encoder reads present
        /// subgroups only.
        #[test]
        fn absent_subgroups_kept_in_the_line_do_not_change_its_image(
            lpn in 0u32..64,
            bases in prop::collection::vec(0u32..(1 << 13), 1..6),
            picks in prop::collection::vec((0usize..6, 0u32..128, 0u32..12), 128),
            absent in 0u8..16,
        ) {
            let split = Split::PAPER;
            let group = |picks: &[(usize, u32, u32)]| {
                let mut ppns = [0u32; 64];
                for (p, &(base, offset, unmapped)) in ppns.iter_mut().zip(picks) {
                    *p = if unmapped == 0 { u32::MAX } else { bases[base % bases.len()] * 128 + offset };
                }
                ppns[lpn as usize] = (1 << 20) - 1 - lpn;
                content(lpn, &ppns)
            };
            let ((line, own), (before, _)) = (group(&picks[..64]), group(&picks[64..]));
            let mut ids = IndexIds::new(&split, &before.entries, &before.ltd);
            for (i, &e) in line.entries.iter().enumerate() {
                ids.set_entry(&split, i, e);
            }
            for (sub, &e) in line.ltd.iter().enumerate() {
                ids.set_ltd(&split, sub, e);
            }
            let present = !absent & 0b1111 | 1 << (lpn / 16);
            let kept = Content { included: present, ..line };
            let stripped = strip(&line, present);
            let (mut from_kept, mut from_stripped) = ([0u8; IMAGE_BYTES], [0u8; IMAGE_BYTES]);
            prop_assert_eq!(
                CODEC.encode_with(&kept.view(), &ids, own, &mut from_kept).ok(),
                CODEC.encode(&stripped, own, &mut from_stripped).ok()
            );
            prop_assert_eq!(from_kept, from_stripped);
        }
    }
}
