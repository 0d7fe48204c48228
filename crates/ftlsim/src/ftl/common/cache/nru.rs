//! Not-recently-used replacement (NRU) and its cost-aware variant D-NRU (paper 000 §5.1.2.2,
//! Table 5.1), over the slots of a fixed-capacity cache.
//!
//! Each slot has a recently-accessed bit A. When an access sets A and every occupied slot then has
//! it, A is cleared on all the others (classic NRU, spec A7).
//!
//! Used through [`Policy`] it is plain NRU: victims without A first, then with A. D-NRU extends
//! it: the owner reports which slots are modified with [`Nru::set_modified`] (giving each a
//! weight, the mapping entries it holds) and the translation page it belongs to; a TP's modified
//! counter MC is the sum of its modified slots' weights, compared with the threshold c. The victim
//! then depends on the kind of fetch (Table 5.1):
//!
//! | attributes              | normal fetch | spatial fetch |
//! |-------------------------|--------------|---------------|
//! | ¬A ∧ ¬M                 | 1            | 1             |
//! | ¬A ∧ M ∧ MC ≥ c         | 2            | 2             |
//! | ¬A ∧ M ∧ MC < c         | 3            | never         |
//! | A ∧ ¬M                  | 4            | 3             |
//! | A ∧ M ∧ MC ≥ c          | 5            | 4             |
//! | A ∧ M ∧ MC < c          | 6            | never         |
//!
//! Within a class the slot that entered it first goes first (a FIFO stands in for NRU's clock
//! hand); a slot does not move when a hit finds A already set. Modified slots are listed per
//! (TP, A), and the TPs with such slots per (A, MC ≥ c), so a change of MC moves one TP, not its
//! slots. Every operation is O(1) and allocation-free except the A reset, which is linear in the
//! occupied slots and happens at most once per that many A-setting accesses.

use super::policy::Policy;
use crate::ftl::common::ListSet;

/// Why a slot is wanted: the demand of an access, or a speculative spatial prefetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    Normal,
    Spatial,
}

/// The largest value a 3-bit modified counter shows.
pub const MC_MAX: u32 = 7;

const UNREFERENCED: u32 = 0;
const REFERENCED: u32 = 1;
/// TP lists: MC at or over the threshold, and under it.
const HIGH: u32 = 0;
const LOW: u32 = 1;
/// The first list of modified slots (after the two of unmodified ones).
const MODIFIED: u32 = 2;

/// The state of a slot, kept together so one access brings it all into the CPU cache.
#[derive(Clone, Copy, Default)]
struct Slot {
    /// Mapping entries of a modified slot; 0 for an unmodified one.
    weight: u32,
    tp: u32,
    referenced: bool,
}

pub struct Nru {
    /// Every slot's state and links, together (a victim's state and links come in one cache
    /// line): unmodified slots in lists UNREFERENCED and REFERENCED, modified ones in list
    /// `MODIFIED + 2 * tp + A`.
    lists: ListSet<Slot>,
    /// Per A value: the TPs with modified slots of that A value, lists HIGH and LOW.
    tps: [ListSet; 2],
    /// Per TP: the exact sum of its modified slots' weights (MC shows it saturated at 7).
    count: Vec<u32>,
    threshold: u32,
    occupied: u32,
    unreferenced: u32,
}

impl Nru {
    /// `threshold` is D-NRU's c; plain NRU use (through [`Policy`]) needs one TP.
    pub fn new(slots: u32, tps: u32, threshold: u32) -> Self {
        let (slots, tps) = (slots as usize, tps.max(1) as usize);
        Nru {
            lists: ListSet::new(slots, MODIFIED as usize + 2 * tps),
            tps: [ListSet::new(tps, 2), ListSet::new(tps, 2)],
            count: vec![0; tps],
            threshold,
            occupied: 0,
            unreferenced: 0,
        }
    }

    /// A slot was filled, unmodified, for `tp`; `referenced` sets A (a demand fetch does, a D-NRU
    /// spatial fetch does not).
    #[inline]
    pub fn insert_entry(&mut self, slot: u32, tp: u32, referenced: bool) {
        self.insert_weighted(slot, tp, referenced, 0);
    }

    /// A slot was filled for `tp`, modified with `weight` mapping entries (0: unmodified).
    #[inline]
    pub fn insert_weighted(&mut self, slot: u32, tp: u32, referenced: bool, weight: u32) {
        *self.lists.payload_mut(slot) = Slot { weight, tp, referenced };
        if weight != 0 {
            self.recount(tp, 0, weight);
        }
        self.occupied += 1;
        self.unreferenced += !referenced as u32;
        self.link(slot);
        if referenced && self.unreferenced == 0 {
            self.reset_except(slot);
        }
    }

    /// A clean slot is emptied and filled again, unmodified, for `tp` (a removal and an insert in
    /// one, for a cache that reuses its victim's slot).
    #[inline]
    pub fn refill(&mut self, slot: u32, tp: u32, referenced: bool) {
        let old = *self.lists.payload(slot);
        debug_assert_eq!(old.weight, 0, "refill of modified slot {slot}");
        self.lists.remove(slot);
        self.unreferenced = self.unreferenced + !referenced as u32 - !old.referenced as u32;
        *self.lists.payload_mut(slot) = Slot { weight: 0, tp, referenced };
        self.lists.push_front(referenced as u32, slot);
        if referenced && self.unreferenced == 0 {
            self.reset_except(slot);
        }
    }

    /// The first victim of a sweep: the back of the ¬A¬M class, when it has a slot (a spatial
    /// fetch's first choice, Table 5.1).
    ///
    /// A sweep is a run of [`Nru::refill`]s without A of that class's victims, done in a batch: a
    /// slot refilled so goes to the front of the same class, so the refilled slots move there
    /// together, in order. [`Nru::sweep_refill`] refills each and names the next victim;
    /// [`Nru::sweep_end`] moves them. No other call may come between.
    #[inline]
    pub fn sweep_start(&self) -> Option<u32> {
        self.lists.back(UNREFERENCED)
    }

    /// Refills the sweep's current victim for `tp`; returns the next one (`None`: the next victim
    /// is the sweep's first).
    #[inline]
    pub fn sweep_refill(&mut self, slot: u32, tp: u32) -> Option<u32> {
        debug_assert_eq!(self.lists.list_of(slot), Some(UNREFERENCED), "slot {slot} is not ¬A¬M");
        self.lists.payload_mut(slot).tp = tp;
        self.lists.toward_front(slot)
    }

    /// The sweep refilled the ¬A¬M class from its back through `last`: they move to its front.
    #[inline]
    pub fn sweep_end(&mut self, last: u32) {
        self.lists.rotate_to_front(last);
    }

    /// Whether a slot's A bit is set.
    #[inline]
    pub fn is_referenced(&self, slot: u32) -> bool {
        self.lists.payload(slot).referenced
    }

    /// A slot's weight (0: unmodified).
    pub fn weight(&self, slot: u32) -> u32 {
        self.lists.payload(slot).weight
    }

    /// The modified counter of a TP as its 3 bits show it.
    pub fn modified_counter(&self, tp: u32) -> u32 {
        self.count[tp as usize].min(MC_MAX)
    }

    /// Marks a slot modified with `weight` mapping entries, or unmodified with 0.
    #[inline]
    pub fn set_modified(&mut self, slot: u32, weight: u32) {
        let Slot { weight: old, tp, .. } = *self.lists.payload(slot);
        if old == weight {
            return;
        }
        let moves = (old == 0) != (weight == 0);
        if moves {
            self.unlink(slot);
        }
        self.lists.payload_mut(slot).weight = weight;
        self.recount(tp, old, weight);
        if moves {
            self.link(slot);
        }
    }

    /// Marks a modified slot of `tp` unmodified, as part of cleaning all of them (a write-back of
    /// the TP): the TP's counter and lists are settled once, by [`Nru::finish_cleaning`].
    #[inline]
    pub fn clean_one(&mut self, slot: u32) {
        let Slot { weight, referenced, .. } = *self.lists.payload(slot);
        debug_assert_ne!(weight, 0, "slot {slot} is not modified");
        self.lists.remove(slot);
        self.lists.payload_mut(slot).weight = 0;
        self.lists.push_front(referenced as u32, slot);
    }

    /// Every modified slot of `tp` was cleaned with [`Nru::clean_one`].
    #[inline]
    pub fn finish_cleaning(&mut self, tp: u32) {
        self.count[tp as usize] = 0;
        for list in &mut self.tps {
            list.remove(tp);
        }
    }

    /// The victim for a fetch of this kind (Table 5.1); `None` if no slot may be replaced.
    #[inline]
    pub fn select(&self, fetch: Fetch) -> Option<u32> {
        let normal = fetch == Fetch::Normal;
        self.lists
            .back(UNREFERENCED)
            .or_else(|| self.modified_victim(UNREFERENCED, HIGH))
            .or_else(|| if normal { self.modified_victim(UNREFERENCED, LOW) } else { None })
            .or_else(|| self.lists.back(REFERENCED))
            .or_else(|| self.modified_victim(REFERENCED, HIGH))
            .or_else(|| if normal { self.modified_victim(REFERENCED, LOW) } else { None })
    }

    #[inline]
    fn modified_victim(&self, a: u32, class: u32) -> Option<u32> {
        let tp = self.tps[a as usize].back(class)?;
        self.lists.back(MODIFIED + 2 * tp + a)
    }

    #[inline]
    fn class(&self, tp: u32) -> u32 {
        if self.count[tp as usize] >= self.threshold {
            HIGH
        } else {
            LOW
        }
    }

    /// Adds a slot to the list of its state.
    #[inline]
    fn link(&mut self, slot: u32) {
        let Slot { weight, tp, referenced } = *self.lists.payload(slot);
        let a = referenced as u32;
        if weight == 0 {
            self.lists.push_front(a, slot);
        } else {
            self.lists.push_front(MODIFIED + 2 * tp + a, slot);
            if self.lists.len(MODIFIED + 2 * tp + a) == 1 {
                let class = self.class(tp);
                self.tps[a as usize].push_front(class, tp);
            }
        }
    }

    #[inline]
    fn unlink(&mut self, slot: u32) {
        let Slot { weight, tp, referenced } = *self.lists.payload(slot);
        if weight == 0 {
            self.lists.remove(slot);
        } else {
            let a = referenced as u32;
            self.lists.remove(slot);
            if self.lists.is_empty(MODIFIED + 2 * tp + a) {
                self.tps[a as usize].remove(tp);
            }
        }
    }

    /// Replaces `old` by `new` in a TP's count, moving the TP if it crosses the threshold.
    #[inline]
    fn recount(&mut self, tp: u32, old: u32, new: u32) {
        let before = self.class(tp);
        let c = &mut self.count[tp as usize];
        *c = *c - old + new;
        let after = self.class(tp);
        if before != after {
            for list in &mut self.tps {
                if list.list_of(tp).is_some() {
                    list.remove(tp);
                    list.push_front(after, tp);
                }
            }
        }
    }

    /// Clears A on every occupied slot but `keep`.
    fn reset_except(&mut self, keep: u32) {
        while let Some(s) = self.lists.back(REFERENCED) {
            self.lists.remove(s);
            self.lists.payload_mut(s).referenced = false;
            self.lists.push_front(UNREFERENCED, s);
        }
        for class in [HIGH, LOW] {
            while let Some(tp) = self.tps[REFERENCED as usize].back(class) {
                self.tps[REFERENCED as usize].remove(tp);
                let (from, to) = (MODIFIED + 2 * tp + REFERENCED, MODIFIED + 2 * tp + UNREFERENCED);
                if self.lists.is_empty(to) {
                    self.tps[UNREFERENCED as usize].push_front(class, tp);
                }
                while let Some(s) = self.lists.back(from) {
                    self.lists.remove(s);
                    self.lists.payload_mut(s).referenced = false;
                    self.lists.push_front(to, s);
                }
            }
        }
        self.unlink(keep);
        self.lists.payload_mut(keep).referenced = true;
        self.link(keep);
        self.unreferenced = self.occupied - 1;
    }

    /// Checks the lists and counts against the slots' states (`slots`: the occupied ones).
    pub fn check(&self, slots: impl Iterator<Item = u32>) -> std::result::Result<(), String> {
        let mut count = vec![0u32; self.count.len()];
        let (mut occupied, mut unreferenced) = (0, 0);
        for slot in slots {
            let Slot { weight, tp, referenced } = *self.lists.payload(slot);
            occupied += 1;
            unreferenced += !referenced as u32;
            let a = referenced as u32;
            let listed = if weight == 0 {
                self.lists.list_of(slot) == Some(a)
            } else {
                count[tp as usize] += weight;
                self.lists.list_of(slot) == Some(MODIFIED + 2 * tp + a)
            };
            if !listed {
                return Err(format!("NRU slot {slot} (A {a}, weight {weight}) is not in its class list"));
            }
        }
        if count != self.count {
            return Err("NRU modified counters disagree with the modified slots".into());
        }
        if (occupied, unreferenced) != (self.occupied, self.unreferenced) {
            return Err(format!(
                "NRU counts {} occupied and {} unreferenced slots, found {occupied} and {unreferenced}",
                self.occupied, self.unreferenced
            ));
        }
        for tp in 0..self.count.len() as u32 {
            for a in [UNREFERENCED, REFERENCED] {
                let expected = (!self.lists.is_empty(MODIFIED + 2 * tp + a)).then(|| self.class(tp));
                if self.tps[a as usize].list_of(tp) != expected {
                    return Err(format!(
                        "NRU lists TP {tp} (A {a}) in {:?}, expected {expected:?}",
                        self.tps[a as usize].list_of(tp)
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.count.len() * 4 + self.lists.memory_bytes() + self.tps.iter().map(ListSet::memory_bytes).sum::<usize>()
    }
}

/// Plain NRU: every slot is unmodified and belongs to TP 0; an insert is a demand fetch.
impl Policy for Nru {
    #[inline]
    fn insert(&mut self, slot: u32) {
        self.insert_entry(slot, 0, true);
    }

    /// Sets A.
    #[inline]
    fn touch(&mut self, slot: u32) {
        if self.lists.payload(slot).referenced {
            return;
        }
        self.unlink(slot);
        self.lists.payload_mut(slot).referenced = true;
        self.unreferenced -= 1;
        self.link(slot);
        if self.unreferenced == 0 {
            self.reset_except(slot);
        }
    }

    #[inline]
    fn remove(&mut self, slot: u32) {
        self.unlink(slot);
        let Slot { weight, tp, referenced } = *self.lists.payload(slot);
        if weight != 0 {
            self.recount(tp, weight, 0);
            self.lists.payload_mut(slot).weight = 0;
        }
        self.occupied -= 1;
        self.unreferenced -= !referenced as u32;
    }

    /// The normal-fetch victim.
    #[inline]
    fn victim(&self) -> Option<u32> {
        self.select(Fetch::Normal)
    }

    fn clear(&mut self) {
        self.lists.clear();
        for list in &mut self.tps {
            list.clear();
        }
        self.count.fill(0);
        self.occupied = 0;
        self.unreferenced = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evicts until `select` finds nothing, returning the order.
    fn drain(p: &mut Nru, fetch: Fetch) -> Vec<u32> {
        std::iter::from_fn(|| {
            let v = p.select(fetch)?;
            p.remove(v);
            Some(v)
        })
        .collect()
    }

    /// The six attribute combinations of Table 5.1, one slot each, threshold c = 3:
    /// slot 0 ¬A¬M; 1 ¬A M, TP 0 (MC 6 >= c); 2 ¬A M, TP 1 (MC 2 < c); 3 A¬M; 4 A M, TP 0;
    /// 5 A M, TP 1. TP 0 keeps MC >= c and TP 1 MC < c as slots leave.
    fn table_5_1() -> Nru {
        let mut p = Nru::new(6, 3, 3);
        for (slot, tp, referenced, weight) in
            [(0, 2, false, 0), (1, 0, false, 3), (2, 1, false, 1), (3, 2, true, 0), (4, 0, true, 3), (5, 1, true, 1)]
        {
            p.insert_entry(slot, tp, referenced);
            p.set_modified(slot, weight);
        }
        assert_eq!((p.modified_counter(0), p.modified_counter(1), p.modified_counter(2)), (6, 2, 0));
        p.check(0..6).unwrap();
        p
    }

    #[test]
    fn table_5_1_normal_fetch_order_is_one_to_six() {
        assert_eq!(drain(&mut table_5_1(), Fetch::Normal), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn table_5_1_spatial_fetch_never_takes_a_modified_entry_under_the_threshold() {
        let mut p = table_5_1();
        assert_eq!(drain(&mut p, Fetch::Spatial), [0, 1, 3, 4]);
        // Only the two protected entries are left; a normal fetch still takes them, in order.
        p.check([2, 5].into_iter()).unwrap();
        assert_eq!(drain(&mut p, Fetch::Normal), [2, 5]);
    }

    #[test]
    fn table_5_1_each_combination_alone() {
        // (A, M, MC >= c) -> allowed for a spatial fetch.
        for (referenced, weight, spatial_ok) in
            [(false, 0, true), (false, 3, true), (false, 1, false), (true, 0, true), (true, 3, true), (true, 1, false)]
        {
            let mut p = Nru::new(2, 1, 3);
            p.insert_entry(0, 0, referenced);
            p.set_modified(0, weight);
            assert_eq!(p.select(Fetch::Normal), Some(0));
            assert_eq!(p.select(Fetch::Spatial), spatial_ok.then_some(0), "A {referenced}, weight {weight}");
        }
    }

    #[test]
    fn a_tp_crossing_the_threshold_changes_the_class_of_all_its_modified_entries() {
        let mut p = Nru::new(4, 2, 3);
        p.insert_entry(0, 0, false);
        p.insert_entry(1, 0, false);
        p.insert_entry(2, 1, false);
        p.set_modified(0, 1);
        p.set_modified(1, 1);
        p.set_modified(2, 2);
        // Both TPs under c: a spatial fetch finds nothing.
        assert_eq!(p.select(Fetch::Spatial), None);
        p.set_modified(1, 2); // TP 0 reaches 3 (an entry grew by a merge)
        assert_eq!(p.modified_counter(0), 3);
        assert_eq!(p.select(Fetch::Spatial), Some(0));
        assert_eq!(p.select(Fetch::Normal), Some(0));
        p.set_modified(0, 0); // written back: clean, TP 0 drops to 2
        assert_eq!(p.select(Fetch::Normal), Some(0));
        p.remove(0);
        assert_eq!(p.select(Fetch::Spatial), None);
        p.check([1, 2].into_iter()).unwrap();
    }

    #[test]
    fn when_every_entry_is_referenced_all_but_the_accessed_one_are_cleared() {
        let mut p = Nru::new(4, 2, 7);
        for s in 0..3 {
            p.insert_entry(s, s % 2, false);
        }
        p.set_modified(1, 1);
        p.touch(0);
        p.touch(2);
        assert!(p.is_referenced(0) && p.is_referenced(2) && !p.is_referenced(1));
        p.touch(1); // the last unreferenced one: A is cleared on 0 and 2
        assert!(p.is_referenced(1) && !p.is_referenced(0) && !p.is_referenced(2));
        p.check(0..3).unwrap();
        // Oldest in the ¬A¬M class first (0 was cleared before 2), then the referenced modified one.
        assert_eq!(drain(&mut p, Fetch::Normal), [0, 2, 1]);
        // A referenced insert into an otherwise referenced cache clears the others too.
        p.insert_entry(3, 0, true);
        p.insert_entry(0, 0, true);
        assert!(!p.is_referenced(3) && p.is_referenced(0));
    }

    #[test]
    fn refill_is_a_removal_and_an_insert() {
        let (mut a, mut b) = (table_5_1(), table_5_1());
        // The ¬A¬M slot 0 and the A¬M slot 3 refilled for TP 1, with and without A.
        for (slot, referenced) in [(0, false), (3, true)] {
            Policy::remove(&mut a, slot);
            a.insert_entry(slot, 1, referenced);
            b.refill(slot, 1, referenced);
        }
        b.check(0..6).unwrap();
        assert_eq!(drain(&mut a, Fetch::Normal), drain(&mut b, Fetch::Normal));
    }

    #[test]
    fn a_sweep_is_spatial_refills_one_at_a_time() {
        // Four ¬A¬M slots and two A¬M ones; sweeps of one to all four, and past them.
        for taken in 1..=5 {
            let (mut a, mut b) = (Nru::new(6, 3, 3), Nru::new(6, 3, 3));
            for p in [&mut a, &mut b] {
                for (slot, referenced) in [(0, false), (1, true), (2, false), (3, false), (4, true), (5, false)] {
                    p.insert_entry(slot, 2, referenced);
                }
            }
            let mut refilled = vec![];
            for _ in 0..taken {
                let victim = a.select(Fetch::Spatial).unwrap();
                if refilled.contains(&victim) {
                    break; // the slots of this sweep come round again
                }
                a.refill(victim, 1, false);
                refilled.push(victim);
            }
            let (mut next, mut last) = (b.sweep_start(), None);
            for &slot in &refilled {
                assert_eq!(next, Some(slot));
                next = b.sweep_refill(slot, 1);
                last = Some(slot);
            }
            b.sweep_end(last.unwrap());
            b.check(0..6).unwrap();
            assert_eq!(drain(&mut a, Fetch::Normal), drain(&mut b, Fetch::Normal), "{taken} taken");
        }
    }

    #[test]
    fn cleaning_a_tp_one_slot_at_a_time_settles_it_once() {
        let (mut a, mut b) = (table_5_1(), table_5_1());
        for slot in [1, 4] {
            a.set_modified(slot, 0);
            b.clean_one(slot);
        }
        b.finish_cleaning(0);
        b.check(0..6).unwrap();
        assert_eq!(b.modified_counter(0), 0);
        assert_eq!(drain(&mut a, Fetch::Normal), drain(&mut b, Fetch::Normal));
    }

    #[test]
    fn plain_nru_through_the_policy_interface() {
        let mut p = Nru::new(4, 1, 7);
        for s in 0..4 {
            Policy::insert(&mut p, s); // each insert sets A; the second clears it on the first
        }
        assert_eq!(p.victim(), Some(0));
        p.touch(0); // now every slot has A: all but 0 are cleared, oldest first
        p.touch(2);
        assert_eq!(drain(&mut p, Fetch::Normal), [1, 3, 0, 2]);
        p.clear();
        assert_eq!(p.victim(), None);
    }
}
