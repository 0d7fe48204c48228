//! A fixed-capacity cache of single mapping entries (LPN -> PPN with a dirty flag), the CMT of
//! DFTL and CDFTL. Slots are preallocated; an [`LpnMap`] finds an entry's slot; the
//! replacement order is the [`Policy`]'s. The dirty entries of each translation page are also
//! linked in a list of their own, so a write-back merges every dirty entry of a TP in time
//! proportional to their number. An entry is kept in its node of those lists (dirty: the node is
//! listed), so an evicted victim's LPN, PPN and dirty flag come in one cache line.

use super::policy::Policy;
use super::LpnMap;
use crate::flash::{Divisor, Lpn, Ppn, Tpn};
use crate::ftl::common::ListSet;
use crate::metrics::Occupancy;

/// A cached mapping.
#[derive(Clone, Copy)]
struct Entry {
    lpn: Lpn,
    ppn: Option<Ppn>,
}

impl Default for Entry {
    fn default() -> Self {
        Entry { lpn: Lpn::new(0), ppn: None }
    }
}

pub struct EntryCache<P> {
    policy: P,
    capacity: u32,
    slot_of: LpnMap<u32>,
    free: Vec<u32>,
    /// Every slot's entry; list `tp` holds the dirty entries of TP `tp`.
    dirty_lists: ListSet<Entry>,
    entries_per_tp: Divisor,
}

impl<P: Policy> EntryCache<P> {
    /// `policy` must be sized for `capacity` slots.
    pub fn new(policy: P, capacity: u32, logical_pages: u32, entries_per_tp: u32) -> Self {
        EntryCache {
            policy,
            capacity,
            slot_of: LpnMap::with_capacity(capacity as usize),
            free: (0..capacity).rev().collect(),
            dirty_lists: ListSet::new(capacity as usize, logical_pages.div_ceil(entries_per_tp) as usize),
            entries_per_tp: Divisor::new(entries_per_tp),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    #[inline]
    pub fn len(&self) -> u32 {
        self.capacity - self.free.len() as u32
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<u32> {
        self.slot_of.get(lpn.get())
    }
    /// Brings the index entry of an LPN toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.slot_of.prefetch(lpn.get());
    }
    #[inline]
    pub fn lpn(&self, slot: u32) -> Lpn {
        self.dirty_lists.payload(slot).lpn
    }
    #[inline]
    pub fn ppn(&self, slot: u32) -> Option<Ppn> {
        self.dirty_lists.payload(slot).ppn
    }
    #[inline]
    pub fn is_dirty(&self, slot: u32) -> bool {
        self.dirty_lists.list_of(slot).is_some()
    }
    #[inline]
    fn tp(&self, slot: u32) -> u32 {
        self.entries_per_tp.quotient(self.lpn(slot).get())
    }

    /// Fills a free slot (the caller made room) as a newly inserted entry. Always inlined: every
    /// miss ends here, and as a call it saved and restored six registers (a tenth of its cost).
    #[inline(always)]
    pub fn insert(&mut self, lpn: Lpn, ppn: Option<Ppn>, dirty: bool) -> u32 {
        debug_assert_eq!(self.slot_of.get(lpn.get()), None, "LPN {lpn} is already cached");
        let slot = self.free.pop().expect("insert into a full entry cache");
        *self.dirty_lists.payload_mut(slot) = Entry { lpn, ppn };
        self.slot_of.insert(lpn.get(), slot);
        if dirty {
            self.dirty_lists.push_front(self.tp(slot), slot);
        }
        self.policy.insert(slot);
        slot
    }

    /// A full cache's victim if it is clean (its eviction writes nothing back).
    #[inline]
    pub fn clean_victim(&self) -> Option<u32> {
        if !self.is_full() {
            return None;
        }
        self.victim().filter(|&slot| !self.is_dirty(slot))
    }

    /// Evicts the clean entry in `victim` and fills its slot with a new entry: what `remove` and
    /// `insert` do (the freed slot is the one `insert` takes), with one move in the replacement
    /// order (from its back to its front) and no trip through the free list.
    #[inline(always)]
    pub fn refill(&mut self, victim: u32, lpn: Lpn, ppn: Option<Ppn>, dirty: bool) {
        debug_assert!(!self.is_dirty(victim), "refill of a dirty victim");
        debug_assert_eq!(self.slot_of.get(lpn.get()), None, "LPN {lpn} is already cached");
        self.slot_of.remove(self.lpn(victim).get());
        *self.dirty_lists.payload_mut(victim) = Entry { lpn, ppn };
        self.slot_of.insert(lpn.get(), victim);
        if dirty {
            self.dirty_lists.push_front(self.tp(victim), victim);
        }
        self.policy.refill_victim(victim);
    }

    /// A hit.
    #[inline]
    pub fn touch(&mut self, slot: u32) {
        self.policy.touch(slot);
    }

    /// Records a new mapping for a cached entry and marks it dirty; the replacement order is
    /// unchanged (a GC update is not an access of the entry).
    #[inline]
    pub fn update(&mut self, slot: u32, ppn: Option<Ppn>) {
        self.dirty_lists.payload_mut(slot).ppn = ppn;
        if !self.is_dirty(slot) {
            self.dirty_lists.push_front(self.tp(slot), slot);
        }
    }

    /// Marks an entry clean (its mapping is now in flash).
    #[inline]
    pub fn mark_clean(&mut self, slot: u32) {
        self.dirty_lists.remove(slot);
    }

    /// Empties a slot; returns (LPN, PPN, dirty).
    #[inline]
    pub fn remove(&mut self, slot: u32) -> (Lpn, Option<Ppn>, bool) {
        let (Entry { lpn, ppn }, dirty) = (*self.dirty_lists.payload(slot), self.is_dirty(slot));
        self.dirty_lists.remove(slot);
        self.policy.remove(slot);
        self.slot_of.remove(lpn.get());
        self.free.push(slot);
        (lpn, ppn, dirty)
    }

    /// The policy's next victim.
    #[inline]
    pub fn victim(&self) -> Option<u32> {
        self.policy.victim()
    }
    pub fn policy(&self) -> &P {
        &self.policy
    }
    /// For schemes whose policy has operations of its own (CDFTL's kick-out order).
    pub fn policy_mut(&mut self) -> &mut P {
        &mut self.policy
    }

    /// Dirty entries of a TP.
    #[inline]
    pub fn dirty_count(&self, tp: Tpn) -> u32 {
        self.dirty_lists.len(tp.get())
    }

    /// Marks every dirty entry of a TP clean, handing each (LPN, PPN) to `f` (a write-back's merge).
    #[inline]
    pub fn clean_tp(&mut self, tp: Tpn, mut f: impl FnMut(Lpn, Option<Ppn>)) {
        while let Some(slot) = self.dirty_lists.back(tp.get()) {
            let Entry { lpn, ppn } = *self.dirty_lists.payload(slot);
            f(lpn, ppn);
            self.dirty_lists.remove(slot);
        }
    }

    /// Occupied slots (for checks).
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.capacity).filter(|&s| self.slot_of.get(self.lpn(s).get()) == Some(s))
    }

    /// How the entries spread over TPs now, in a cache of `cache_bytes`: O(capacity + TPs), with
    /// no index lookup (a sample of a large cache stays cheap).
    pub fn occupancy(&self, cache_bytes: u64) -> Occupancy {
        let mut free = vec![false; self.capacity as usize];
        for &slot in &self.free {
            free[slot as usize] = true;
        }
        let mut entries = vec![0u32; self.dirty_lists.lists() as usize];
        for slot in (0..self.capacity).filter(|&s| !free[s as usize]) {
            entries[self.tp(slot) as usize] += 1;
        }
        let mut o = Occupancy::new(cache_bytes);
        for (tp, &n) in entries.iter().enumerate().filter(|(_, &n)| n > 0) {
            o.add_tp(n, self.dirty_lists.len(tp as u32));
        }
        o
    }

    /// Drops every entry without writing anything back.
    pub fn clear(&mut self) {
        self.slot_of.clear();
        self.free = (0..self.capacity).rev().collect();
        self.dirty_lists.clear();
        self.policy.clear();
    }

    /// Checks the index and the dirty lists against the entries.
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut used = 0;
        for slot in self.slots() {
            used += 1;
            let listed = self.dirty_lists.list_of(slot);
            if listed.is_some_and(|tp| tp != self.tp(slot)) {
                return Err(format!("cached LPN {} is in dirty list {listed:?}", self.lpn(slot)));
            }
        }
        if used != self.len() {
            return Err(format!("{used} cached entries are indexed but {} slots are in use", self.len()));
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.slot_of.memory_bytes() + self.free.capacity() * 4 + self.dirty_lists.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Lru;
    use super::*;

    #[test]
    fn entries_are_found_updated_grouped_by_tp_and_evicted_in_policy_order() {
        // 4 slots, 32 LPNs, 8 entries per TP.
        let mut c = EntryCache::new(Lru::new(4), 4, 32, 8);
        let a = c.insert(Lpn::new(3), Some(Ppn::new(100)), false);
        let b = c.insert(Lpn::new(5), Some(Ppn::new(101)), true);
        let d = c.insert(Lpn::new(20), Some(Ppn::new(102)), true);
        c.insert(Lpn::new(7), Some(Ppn::new(103)), false);
        assert!(c.is_full());
        assert_eq!(c.get(Lpn::new(5)), Some(b));
        assert_eq!((c.dirty_count(Tpn::new(0)), c.dirty_count(Tpn::new(2))), (1, 1));
        c.update(a, Some(Ppn::new(200)));
        assert_eq!((c.ppn(a), c.is_dirty(a), c.dirty_count(Tpn::new(0))), (Some(Ppn::new(200)), true, 2));
        c.touch(a);
        assert_eq!(c.victim(), Some(b));
        let mut merged = Vec::new();
        c.clean_tp(Tpn::new(0), |l, p| merged.push((l, p)));
        merged.sort();
        assert_eq!(merged, [(Lpn::new(3), Some(Ppn::new(200))), (Lpn::new(5), Some(Ppn::new(101)))]);
        assert_eq!(c.dirty_count(Tpn::new(0)), 0);
        assert_eq!(c.remove(b), (Lpn::new(5), Some(Ppn::new(101)), false));
        assert_eq!(c.get(Lpn::new(5)), None);
        assert_eq!(c.remove(d), (Lpn::new(20), Some(Ppn::new(102)), true));
        assert_eq!(c.dirty_count(Tpn::new(2)), 0);
        c.check().unwrap();
        c.insert(Lpn::new(9), Some(Ppn::new(1)), false);
        assert_eq!(c.len(), 3);
        c.clear();
        assert!(c.is_empty() && c.get(Lpn::new(3)).is_none());
        c.check().unwrap();
    }

    #[test]
    fn occupancy_counts_cached_tps_entries_and_dirty_entries() {
        // 8 slots, 8 entries per TP: TP 0 holds LPNs 1, 2, 3 (2 and 3 dirty), TP 2 holds 17
        // (dirty), TP 5 holds 40 and 41 (clean).
        let mut c = EntryCache::new(Lru::new(8), 8, 64, 8);
        for (lpn, dirty) in [(1, false), (2, true), (17, true), (40, false), (3, true), (41, false)] {
            c.insert(Lpn::new(lpn), Some(Ppn::new(lpn)), dirty);
        }
        let o = c.occupancy(64);
        let expected = Occupancy { cache_bytes: 64, tps: 3, entries: 6, dirty_entries: 3, tps_over_one_dirty: 1 };
        assert_eq!(o, expected);
        // An evicted entry leaves the figures.
        c.remove(c.get(Lpn::new(17)).unwrap());
        assert_eq!((c.occupancy(64).tps, c.occupancy(64).dirty_entries), (2, 2));
    }
}
