//! The compressed encoder's view of a group: each distinct index (`ppn >> offset_bits`) its PMT
//! and LTD entries use under a small id, and per subgroup the ids of its PMT entries as a mask,
//! so the index count of any choice of included subgroups is a few `or`s and a popcount.
//!
//! Every group keeps its ids up to date as its entries change (an update searches the ids in
//! use and rebuilds one subgroup's mask), so encoding a page's metadata packs the fields only.
//! Ids are labels: which id an index gets never shows in an image.

use super::format::{Split, MAX_ENTRIES, MAX_SUBGROUPS};
use crate::flash::Ppn;

/// Every PMT entry and every LTD entry may use a distinct index.
pub const MAX_IDS: usize = MAX_ENTRIES + MAX_SUBGROUPS;

/// A `values` slot no id holds (indices have at most 31 bits: `offset_bits` is at least 1).
const FREE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub struct IndexIds {
    /// Per PMT entry (`subgroup * slots + slot`), the id of its index.
    pub entry: [u8; MAX_ENTRIES],
    /// Per subgroup, the id of its LTD entry's index.
    pub ltd: [u8; MAX_SUBGROUPS],
    /// Per subgroup, bit `id` set when one of its PMT entries uses `id`.
    pub uses: [u128; MAX_SUBGROUPS],
    /// Per id, its index (`FREE` when no entry uses it).
    pub values: [u32; MAX_IDS],
    /// Per id, how many PMT and LTD entries use it.
    refs: [u8; MAX_IDS],
    /// Ids from here on are free (searches stop here).
    high: u8,
}

impl IndexIds {
    /// The ids of a group's PMT entries (`subgroup * slots + slot`) and LTD entries, computed
    /// from scratch.
    pub fn new(split: &Split, entries: &[Option<Ppn>], ltd: &[Option<Ppn>]) -> Self {
        let mut ids = IndexIds {
            entry: [0; MAX_ENTRIES],
            ltd: [0; MAX_SUBGROUPS],
            uses: [0; MAX_SUBGROUPS],
            values: [FREE; MAX_IDS],
            refs: [0; MAX_IDS],
            high: 0,
        };
        let mut table = IdTable { keys: [IdTable::EMPTY; 128], ids: [0; 128], len: 0 };
        let slots = split.slots();
        let mut last = (FREE, 0);
        for sub in 0..split.subgroups() {
            let range = sub * slots..(sub + 1) * slots;
            for (i, &e) in range.zip(&entries[sub * slots..(sub + 1) * slots]) {
                // Neighbouring entries often share a half-block: skip the table then.
                let index = split.index(e);
                if index != last.0 {
                    last = (index, table.id(index, &mut ids.values));
                }
                ids.entry[i] = last.1;
                ids.refs[last.1 as usize] += 1;
            }
            ids.update_uses(split, sub);
        }
        for (sub, &e) in ltd.iter().enumerate() {
            let id = table.id(split.index(e), &mut ids.values);
            ids.ltd[sub] = id;
            ids.refs[id as usize] += 1;
        }
        ids.high = table.len;
        ids
    }

    /// Brings the fields an encode or an update reads into the CPU cache.
    #[inline]
    pub fn prefetch(&self) {
        crate::mem::prefetch(&self.entry);
        crate::mem::prefetch(&self.uses[0]);
        crate::mem::prefetch(&self.uses[MAX_SUBGROUPS - 1]);
        // Searches stop at `high`, usually within the first 32 ids.
        crate::mem::prefetch(&self.values[0]);
        crate::mem::prefetch(&self.values[16]);
        crate::mem::prefetch(&self.refs);
    }

    /// Whether these are the ids of `entries` and `ltd` (as [`IndexIds::new`] would build them,
    /// up to the labels).
    pub fn agrees(&self, split: &Split, entries: &[Option<Ppn>], ltd: &[Option<Ppn>]) -> bool {
        let fresh = IndexIds::new(split, entries, ltd);
        let value = |ids: &IndexIds, id: u8| ids.values[id as usize];
        let mask = |ids: &IndexIds, m: u128| {
            let mut set: Vec<u32> = (0..MAX_IDS).filter(|&id| m & (1 << id) != 0).map(|id| ids.values[id]).collect();
            set.sort_unstable();
            set
        };
        let mut refs = [0u8; MAX_IDS];
        self.entry[..entries.len()].iter().chain(&self.ltd[..ltd.len()]).for_each(|&id| refs[id as usize] += 1);
        (0..entries.len()).all(|i| value(self, self.entry[i]) == value(&fresh, fresh.entry[i]))
            && (0..ltd.len()).all(|s| value(self, self.ltd[s]) == value(&fresh, fresh.ltd[s]))
            && (0..split.subgroups()).all(|s| mask(self, self.uses[s]) == mask(&fresh, fresh.uses[s]))
            && (0..MAX_IDS).all(|id| refs[id] == self.refs[id] && (refs[id] == 0) == (self.values[id] == FREE))
            && self.values[self.high as usize..].iter().all(|&v| v == FREE)
    }

    /// PMT entry `i` now maps to `ppn`.
    #[inline(always)]
    pub fn set_entry(&mut self, split: &Split, i: usize, ppn: Option<Ppn>) {
        let old = self.entry[i];
        let id = self.replace(old, split.index(ppn));
        if id != old {
            self.entry[i] = id;
            let sub = i >> split.slot_bits;
            self.uses[sub] |= bit(id);
            // Compared all at once (`contains` would call `memchr` for 16 bytes).
            if !self.entry[sub * split.slots()..(sub + 1) * split.slots()]
                .iter()
                .fold(false, |found, &id| found | (id == old))
            {
                self.uses[sub] &= !bit(old);
            }
        }
    }

    /// Subgroup `sub`'s LTD entry is now `ppn`.
    #[inline(always)]
    pub fn set_ltd(&mut self, split: &Split, sub: usize, ppn: Option<Ppn>) {
        self.ltd[sub] = self.replace(self.ltd[sub], split.index(ppn));
    }

    /// How many distinct indices an image needs that includes the PMT entries of subgroups
    /// `included` and the LTD entries of the others, besides the index of id `own`.
    #[inline]
    pub fn count(&self, subgroups: usize, own: u8, included: u8) -> u32 {
        let mut used = 1u128 << own;
        for sub in 0..subgroups {
            used |= if included & (1 << sub) != 0 { self.uses[sub] } else { 1 << self.ltd[sub] };
        }
        used.count_ones()
    }

    /// Drops one use of id `old` and returns the id of `index` with one more use (the same id
    /// when the index did not change).
    #[inline]
    fn replace(&mut self, old: u8, index: u32) -> u8 {
        if self.values[old as usize] == index {
            return old;
        }
        self.release(old);
        self.acquire(index)
    }

    /// Drops one use of `id`, freeing it with its last.
    #[inline]
    fn release(&mut self, id: u8) {
        self.refs[id as usize] -= 1;
        if self.refs[id as usize] == 0 {
            self.values[id as usize] = FREE;
        }
    }

    /// The id of `index` with one more use: its id if one has it, else the lowest free one.
    /// (Entries and LTD entries are [`MAX_IDS`] in all, and one use was released before, so a
    /// free id exists.)
    #[inline]
    fn acquire(&mut self, index: u32) -> u8 {
        let high = self.high as usize;
        let id = match self.values[..high].iter().position(|&v| v == index) {
            Some(id) => id,
            None => {
                let id = self.values[..high].iter().position(|&v| v == FREE).unwrap_or(high);
                self.high = self.high.max(id as u8 + 1);
                self.values[id] = index;
                id
            }
        };
        self.refs[id] += 1;
        id as u8
    }

    #[inline(always)]
    fn update_uses(&mut self, split: &Split, sub: usize) {
        let slots = split.slots();
        // Two 64-bit halves in registers: a variable shift of a u128 costs a branch per entry.
        let (mut low, mut high) = (0u64, 0u64);
        for &id in &self.entry[sub * slots..(sub + 1) * slots] {
            let bit = 1 << (id & 63);
            let in_low = ((id < 64) as u64).wrapping_neg();
            (low, high) = (low | bit & in_low, high | bit & !in_low);
        }
        self.uses[sub] = low as u128 | (high as u128) << 64;
    }
}

/// The mask bit of `id`.
#[inline]
fn bit(id: u8) -> u128 {
    let bit = 1u64 << (id & 63);
    if id < 64 {
        bit as u128
    } else {
        (bit as u128) << 64
    }
}

/// A small open-addressing table from index to id, for building ids from scratch.
struct IdTable {
    keys: [u32; 128],
    ids: [u8; 128],
    len: u8,
}

impl IdTable {
    const EMPTY: u32 = u32::MAX;

    #[inline]
    fn id(&mut self, value: u32, values: &mut [u32; MAX_IDS]) -> u8 {
        let mut slot = (value.wrapping_mul(0x9E37_79B1) >> 25) as usize;
        loop {
            if self.keys[slot] == value {
                return self.ids[slot];
            }
            if self.keys[slot] == Self::EMPTY {
                let id = self.len;
                (self.keys[slot], self.ids[slot], values[id as usize]) = (value, id, value);
                self.len += 1;
                return id;
            }
            slot = (slot + 1) & 127;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SPLIT: Split = Split::PAPER;

    proptest! {
        /// Ids kept through any sequence of entry changes (PPNs from a few half-blocks, some
        /// unmapped) are the ids a from-scratch build gives, up to labels: the same index per
        /// entry, the same masks, and the same index count for every choice of subgroups.
        #[test]
        fn kept_ids_equal_ids_built_from_scratch(
            bases in prop::collection::vec(0u32..(1 << 13), 1..80),
            updates in prop::collection::vec((0usize..MAX_IDS, 0usize..80, 0u32..128, 0u32..10), 1..300),
        ) {
            let ppn = |base: usize, offset: u32, unmapped: u32| {
                (unmapped != 0).then(|| Ppn::new(bases[base % bases.len()] * 128 + offset))
            };
            let mut entries = [None; MAX_ENTRIES];
            let mut ltd = [None; MAX_SUBGROUPS];
            let mut kept = IndexIds::new(&SPLIT, &entries, &ltd);
            for &(at, base, offset, unmapped) in &updates {
                let p = ppn(base, offset, unmapped);
                if at < MAX_ENTRIES {
                    entries[at] = p;
                    kept.set_entry(&SPLIT, at, p);
                } else {
                    ltd[at - MAX_ENTRIES] = p;
                    kept.set_ltd(&SPLIT, at - MAX_ENTRIES, p);
                }
            }
            prop_assert!(kept.agrees(&SPLIT, &entries, &ltd));
            let fresh = IndexIds::new(&SPLIT, &entries, &ltd);
            for own_entry in [0, 17, 63] {
                for included in 0..16u8 {
                    prop_assert_eq!(
                        kept.count(4, kept.entry[own_entry], included),
                        fresh.count(4, fresh.entry[own_entry], included)
                    );
                }
            }
        }
    }

    #[test]
    fn a_changed_entry_is_noticed() {
        let entries = [Some(Ppn::new(5)); MAX_ENTRIES];
        let ltd = [Some(Ppn::new(5)); MAX_SUBGROUPS];
        let ids = IndexIds::new(&SPLIT, &entries, &ltd);
        let mut moved = entries;
        moved[3] = Some(Ppn::new(128 * 7));
        assert!(ids.agrees(&SPLIT, &entries, &ltd));
        assert!(!ids.agrees(&SPLIT, &moved, &ltd));
    }
}
