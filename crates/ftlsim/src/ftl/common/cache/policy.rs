//! Recency-based replacement policies over the slots of a fixed-capacity cache.

use serde::{Deserialize, Serialize};

use crate::ftl::common::ListSet;

/// Orders the occupied slots of a cache for replacement. The cache owns the slots and tells the
/// policy what happens to them; every call is O(1).
pub trait Policy {
    /// A slot was filled (a fetched or newly created entry).
    fn insert(&mut self, slot: u32);
    /// A slot was accessed (a hit).
    fn touch(&mut self, slot: u32);
    /// A slot was emptied.
    fn remove(&mut self, slot: u32);
    /// The slot [`Self::victim`] named was emptied and filled again at once (refilled in place).
    #[inline]
    fn refill_victim(&mut self, victim: u32) {
        self.remove(victim);
        self.insert(victim);
    }
    /// The slot to replace next.
    fn victim(&self) -> Option<u32>;
    /// Forgets every slot.
    fn clear(&mut self);
}

/// Least recently used.
pub struct Lru {
    list: ListSet,
}

impl Lru {
    pub fn new(slots: u32) -> Self {
        Lru { list: ListSet::new(slots as usize, 1) }
    }
}

impl Policy for Lru {
    #[inline]
    fn insert(&mut self, slot: u32) {
        self.list.push_front(0, slot);
    }
    #[inline]
    fn touch(&mut self, slot: u32) {
        self.list.move_to_front(0, slot);
    }
    #[inline]
    fn remove(&mut self, slot: u32) {
        self.list.remove(slot);
    }
    /// The back slot goes to the front: a rotation by one.
    #[inline]
    fn refill_victim(&mut self, victim: u32) {
        debug_assert_eq!(self.list.back(0), Some(victim));
        self.list.rotate_to_front(victim);
    }
    #[inline]
    fn victim(&self) -> Option<u32> {
        self.list.back(0)
    }
    fn clear(&mut self) {
        self.list.clear();
    }
}

const PROBATION: u32 = 0;
const PROTECTED: u32 = 1;

/// Segmented LRU (Karedla et al. 1994; DFTL's policy, paper 002): new slots enter the
/// probationary segment; a hit promotes a slot to the protected segment, whose least recently
/// used slot falls back to the front of the probationary one when the protected segment is over
/// its share. Victims come from the back of the probationary segment (the protected one when the
/// probationary segment is empty).
pub struct SegmentedLru {
    lists: ListSet,
    protected_capacity: u32,
}

impl SegmentedLru {
    pub fn new(slots: u32, protected_capacity: u32) -> Self {
        SegmentedLru { lists: ListSet::new(slots as usize, 2), protected_capacity }
    }

    /// `protected_fraction`: the protected segment's share of the slots (rounded down).
    pub fn with_protected_fraction(slots: u32, protected_fraction: f64) -> Self {
        Self::new(slots, (slots as f64 * protected_fraction).floor() as u32)
    }

    pub fn is_protected(&self, slot: u32) -> bool {
        self.lists.list_of(slot) == Some(PROTECTED)
    }
}

impl Policy for SegmentedLru {
    #[inline]
    fn insert(&mut self, slot: u32) {
        self.lists.push_front(PROBATION, slot);
    }
    #[inline]
    fn touch(&mut self, slot: u32) {
        self.lists.move_to_front(PROTECTED, slot);
        if self.lists.len(PROTECTED) > self.protected_capacity {
            let demoted = self.lists.back(PROTECTED).expect("protected segment is over its share");
            self.lists.remove(demoted);
            self.lists.push_front(PROBATION, demoted);
        }
    }
    #[inline]
    fn remove(&mut self, slot: u32) {
        self.lists.remove(slot);
    }
    /// The probationary segment's back slot goes to its front (a rotation by one); a protected
    /// victim (the probationary segment is empty) moves to the probationary segment.
    #[inline]
    fn refill_victim(&mut self, victim: u32) {
        debug_assert_eq!(self.victim(), Some(victim));
        if self.lists.list_of(victim) == Some(PROBATION) {
            self.lists.rotate_to_front(victim);
        } else {
            self.lists.move_to_front(PROBATION, victim);
        }
    }
    #[inline]
    fn victim(&self) -> Option<u32> {
        self.lists.back(PROBATION).or_else(|| self.lists.back(PROTECTED))
    }
    fn clear(&mut self) {
        self.lists.clear();
    }
}

/// The policies an entry cache can be configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplacementKind {
    Lru,
    /// Segmented LRU; the protected segment's share is a scheme parameter.
    Slru,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evicts until empty, returning the order.
    fn drain(p: &mut impl Policy) -> Vec<u32> {
        std::iter::from_fn(|| {
            let v = p.victim()?;
            p.remove(v);
            Some(v)
        })
        .collect()
    }

    #[test]
    fn lru_evicts_the_least_recently_touched() {
        let mut p = Lru::new(4);
        for s in 0..4 {
            p.insert(s);
        }
        p.touch(0);
        p.touch(2);
        assert_eq!(drain(&mut p), [1, 3, 0, 2]);
    }

    #[test]
    fn slru_protects_hit_entries_from_a_scan() {
        let mut p = SegmentedLru::new(6, 2);
        p.insert(0);
        p.insert(1);
        p.touch(0); // promoted
        for s in 2..6 {
            p.insert(s); // a scan of new entries
        }
        assert!(p.is_protected(0));
        // The scan is evicted before the hit entry, oldest first.
        assert_eq!(drain(&mut p), [1, 2, 3, 4, 5, 0]);
    }

    #[test]
    fn slru_demotes_the_protected_lru_to_the_probationary_front() {
        let mut p = SegmentedLru::new(5, 2);
        for s in 0..5 {
            p.insert(s);
        }
        p.touch(0);
        p.touch(1);
        p.touch(2); // protected over its share of 2: slot 0 falls back to probation's front
        assert!(!p.is_protected(0) && p.is_protected(1) && p.is_protected(2));
        assert_eq!(drain(&mut p), [3, 4, 0, 1, 2]);
    }

    /// Inserts, hits and victim refills on `a`, the same with each refill as a removal and an
    /// insertion on `b`; both must evict in the same order.
    fn refills_match_removal_and_insertion(mut a: impl Policy, mut b: impl Policy) {
        for s in 0..6 {
            a.insert(s);
            b.insert(s);
        }
        for step in 0..40u32 {
            if step % 3 == 0 {
                let slot = step / 3 % 6;
                a.touch(slot);
                b.touch(slot);
            } else {
                let victim = a.victim().unwrap();
                assert_eq!(b.victim(), Some(victim), "step {step}");
                a.refill_victim(victim);
                b.remove(victim);
                b.insert(victim);
            }
        }
        assert_eq!(drain(&mut a), drain(&mut b));
    }

    #[test]
    fn a_refilled_victim_is_a_removal_and_an_insertion() {
        refills_match_removal_and_insertion(Lru::new(6), Lru::new(6));
        // With every slot protectable, the probationary segment empties and victims come from both.
        for protected in [2, 6] {
            refills_match_removal_and_insertion(SegmentedLru::new(6, protected), SegmentedLru::new(6, protected));
        }
    }

    #[test]
    fn slru_sizes_the_protected_segment_from_the_fraction() {
        let mut p = SegmentedLru::with_protected_fraction(4, 0.5);
        for s in 0..4 {
            p.insert(s);
            p.touch(s);
        }
        // Two protected (2, 3), two demoted to probation in order 0 then 1 at its front.
        assert_eq!(drain(&mut p), [0, 1, 2, 3]);
    }
}
