//! Mapping changes of a whole-page cache ([`super::PageCache`], CDFTL's CTP): each translation page with
//! changes has a slot holding its entries in LPN order, with a bit per changed entry and the list
//! of those entries, so a cached page's content is its flash copy overlaid with its slot.
//!
//! The pages with changes are the cached ones (and one being written back), so the slots take
//! about the cache's modelled SRAM (4 bytes per entry) and stay in the CPU cache. GC moves many
//! pages of one translation page in a row; in [`super::DirtyEntries`]' hash table, which suits
//! caches whose changes are spread thinly over many pages, each of those changes landed on a cold
//! line of its own.

use crate::flash::{Divisor, Lpn, Ppn, Tpn};

/// A page without a slot.
const NO_SLOT: u32 = u32::MAX;

pub struct PageSlots {
    /// Entries per translation page (a shift in every geometry with a power-of-two page size).
    entries_per_tp: Divisor,
    /// Per translation page: its slot, or [`NO_SLOT`] while it holds no change.
    slot_of: Vec<u32>,
    /// Per slot, its page's entries (meaningful where the entry's bit is set).
    values: Vec<Option<Ppn>>,
    /// Per slot, a bit per entry: changed.
    bits: Vec<u64>,
    /// Per slot: its page.
    page: Vec<Tpn>,
    /// Per slot, its changed entries' offsets in the page, in the order they changed (capacity
    /// is kept across reuses: no allocation in steady state).
    changed: Vec<Vec<u32>>,
    /// Slots without a page, the most recently freed last.
    free: Vec<u32>,
}

impl PageSlots {
    pub fn new(logical_pages: u32, entries_per_tp: u32) -> Self {
        PageSlots {
            entries_per_tp: Divisor::new(entries_per_tp),
            slot_of: vec![NO_SLOT; logical_pages.div_ceil(entries_per_tp) as usize],
            values: Vec::new(),
            bits: Vec::new(),
            page: Vec::new(),
            changed: Vec::new(),
            free: Vec::new(),
        }
    }

    fn words_per_slot(&self) -> usize {
        (self.entries_per_tp.get() as usize).div_ceil(64)
    }

    /// Where `lpn`'s entry is, if its page has a slot: its slot and its offset in the page.
    #[inline]
    fn locate(&self, lpn: Lpn) -> Option<(usize, usize)> {
        let (tp, offset) = self.entries_per_tp.div_rem(lpn.get());
        let slot = *self.slot_of.get(tp as usize)?;
        (slot != NO_SLOT).then_some((slot as usize, offset as usize))
    }

    /// The index of entry `offset` of slot `slot` in `values`.
    #[inline]
    fn entry(&self, slot: usize, offset: usize) -> usize {
        slot * self.entries_per_tp.get() as usize + offset
    }

    /// The bit of entry `offset` of slot `slot` in `bits`.
    #[inline]
    fn bit(&self, slot: usize, offset: usize) -> (usize, u64) {
        (slot * self.words_per_slot() + offset / 64, 1 << (offset % 64))
    }

    /// Brings the entry of `lpn` toward the CPU cache if its page has a slot (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some((slot, offset)) = self.locate(lpn) {
            crate::mem::prefetch(&self.values[self.entry(slot, offset)]);
        }
    }

    /// The unwritten mapping of an LPN (`Some(None)`: unmapped by a trim), if it has one.
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        let (slot, offset) = self.locate(lpn)?;
        let (word, mask) = self.bit(slot, offset);
        (self.bits[word] & mask != 0).then(|| self.values[self.entry(slot, offset)])
    }

    /// Records a change; returns whether the LPN was clean before.
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>) -> bool {
        let (slot, offset) = match self.locate(lpn) {
            Some(at) => at,
            None => self.open(lpn),
        };
        let i = self.entry(slot, offset);
        self.values[i] = ppn;
        let (word, mask) = self.bit(slot, offset);
        if self.bits[word] & mask != 0 {
            return false;
        }
        self.bits[word] |= mask;
        self.changed[slot].push(offset as u32);
        true
    }

    /// Gives `lpn`'s page a slot (a freed one if any), returning where its entry is.
    #[cold]
    fn open(&mut self, lpn: Lpn) -> (usize, usize) {
        let tp = Tpn::new(self.entries_per_tp.quotient(lpn.get()));
        let slot = self.free.pop().unwrap_or_else(|| {
            let slot = self.page.len() as u32;
            self.page.push(tp);
            self.changed.push(Vec::new());
            self.values.resize(self.values.len() + self.entries_per_tp.get() as usize, None);
            self.bits.resize(self.bits.len() + self.words_per_slot(), 0);
            slot
        });
        self.page[slot as usize] = tp;
        self.slot_of[tp.index()] = slot;
        self.locate(lpn).expect("the page has a slot")
    }

    /// Changed entries of a page.
    #[inline]
    pub fn count(&self, tp: Tpn) -> u32 {
        match self.slot_of[tp.index()] {
            NO_SLOT => 0,
            slot => self.changed[slot as usize].len() as u32,
        }
    }

    /// Hands every change of a page to `f`, in the order the entries first changed, and frees
    /// its slot.
    pub fn drain(&mut self, tp: Tpn, mut f: impl FnMut(Lpn, Option<Ppn>)) {
        let slot = std::mem::replace(&mut self.slot_of[tp.index()], NO_SLOT) as usize;
        if slot == NO_SLOT as usize {
            return;
        }
        let (per, words) = (self.entries_per_tp.get() as usize, self.words_per_slot());
        let first_lpn = tp.get() * self.entries_per_tp.get();
        let mut changed = std::mem::take(&mut self.changed[slot]);
        for &offset in &changed {
            let offset = offset as usize;
            self.bits[slot * words + offset / 64] &= !(1 << (offset % 64));
            f(Lpn::new(first_lpn + offset as u32), self.values[slot * per + offset]);
        }
        changed.clear();
        self.changed[slot] = changed;
        self.free.push(slot as u32);
    }

    /// Pages with changes, in page order.
    pub fn tps(&self) -> impl Iterator<Item = Tpn> + '_ {
        let mut tps: Vec<Tpn> =
            self.page.iter().zip(&self.changed).filter(|(_, c)| !c.is_empty()).map(|(&tp, _)| tp).collect();
        tps.sort_unstable();
        tps.into_iter()
    }

    pub fn clear(&mut self) {
        for tp in self.tps().collect::<Vec<_>>() {
            self.drain(tp, |_, _| {});
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.slot_of.len() * 4
            + self.values.capacity() * 4
            + self.bits.capacity() * 8
            + self.page.capacity() * 4
            + self.changed.iter().map(|c| 24 + c.capacity() * 4).sum::<usize>()
            + self.free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_kept_per_page_until_drained_and_slots_are_reused() {
        let mut d = PageSlots::new(20, 8);
        assert!(d.set(Lpn::new(3), Some(Ppn::new(30))));
        assert!(!d.set(Lpn::new(3), Some(Ppn::new(31))));
        assert!(d.set(Lpn::new(1), None));
        assert!(d.set(Lpn::new(9), Some(Ppn::new(90))));
        assert!(d.set(Lpn::new(17), Some(Ppn::new(170))));
        assert_eq!(
            (d.get(Lpn::new(3)), d.get(Lpn::new(1)), d.get(Lpn::new(4))),
            (Some(Some(Ppn::new(31))), Some(None), None)
        );
        assert_eq!((d.count(Tpn::new(0)), d.count(Tpn::new(1)), d.count(Tpn::new(2))), (2, 1, 1));
        assert_eq!(d.tps().map(Tpn::get).collect::<Vec<_>>(), [0, 1, 2]);
        let mut out = Vec::new();
        d.drain(Tpn::new(0), |l, p| out.push((l, p)));
        assert_eq!(out, [(Lpn::new(3), Some(Ppn::new(31))), (Lpn::new(1), None)], "in the order they changed");
        assert_eq!((d.get(Lpn::new(3)), d.count(Tpn::new(0))), (None, 0));
        assert!(d.set(Lpn::new(12), Some(Ppn::new(120))), "page 1 keeps its slot");
        assert!(d.set(Lpn::new(5), Some(Ppn::new(50))), "page 0 takes the freed slot");
        assert_eq!(d.page.len(), 3);
        assert_eq!((d.get(Lpn::new(3)), d.get(Lpn::new(5)), d.count(Tpn::new(1))), (None, Some(Some(Ppn::new(50))), 2));
        d.clear();
        assert_eq!((d.tps().count(), d.get(Lpn::new(17)), d.get(Lpn::new(9))), (0, None, None));
    }
}
