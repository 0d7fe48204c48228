//! GC victim selection without scanning every block.
//!
//! Closed blocks sit in per-unit buckets indexed by their weight, each bucket a list of a
//! [`ListSet`] in the order blocks entered it. A block enters a bucket when it is closed or when
//! one of its pages is invalidated, so each bucket is ordered by last modification time.
//!
//! A block's weight is what GC would have to keep of it, from 0 (all garbage) to `full` (nothing
//! to reclaim): its valid pages, or, for an FTL that declares a garbage resolution R
//! ([`super::BlockManager::with_garbage_resolution`]), its valid pages x R minus the garbage the
//! FTL credited inside them (Delta-FTL's invalid deltas, fractions of a page). Below, "valid
//! count" means the weight.
//!
//! - Greedy takes the oldest block of the lowest non-empty bucket: O(v_min) per GC, amortised O(1)
//!   per page moved. Ties go to the block that reached that valid count first.
//! - Cost-benefit maximises (1 - u) / (2u) x age over the oldest blocks of all buckets: the oldest
//!   block of a bucket is its least recently modified, so it has the best score of its bucket.
//!   O(pages per block) per GC.
//! - FIFO takes the block closed longest ago that has an invalid page, from a second list per
//!   unit in closing order: O(1) per GC plus the fully valid blocks it passes over.

use super::ListSet;
use crate::config::VictimPolicyKind;
use crate::flash::Pbn;

/// What the index keeps with a block, next to its links. Packed so that the whole entry of a
/// block stays 24 bytes (one cache line holds it; an invalidation touches one entry).
#[derive(Clone, Copy, Default)]
#[repr(C, packed(4))]
struct Filing {
    unit: u32,
    /// Clock value when the block was last filed (its last modification).
    modified: u64,
}

pub struct VictimIndex {
    /// The weight of a block with nothing to reclaim.
    full: u32,
    /// Weight units per page (1 unless the FTL credits garbage inside valid pages).
    resolution: u32,
    /// Per block: garbage credited inside its valid pages, in weight units (empty at resolution 1).
    credit: Vec<u32>,
    /// One list per (unit, valid count); the front is the most recently filed block.
    buckets: ListSet<Filing>,
    /// Per block, a bit: filed. Every invalidation asks; where it hits a block outside the index
    /// (an open block, or a block a scheme holds itself, such as CPM's clusters') a bit of this
    /// small array answers without the block's entry, a cold line on large devices.
    filed: Vec<u64>,
    /// Under FIFO only: one list per unit in the order blocks were closed, the most recent at
    /// the front (12 bytes per block the other policies do not pay).
    closed: Option<ListSet>,
    clock: u64,
}

impl VictimIndex {
    /// An index over blocks of `pages_per_block` pages, weighed in `1 / resolution` of a page.
    pub fn new(units: u32, pages_per_block: u32, resolution: u32, unit_of: Vec<u32>, policy: VictimPolicyKind) -> Self {
        let full = pages_per_block * resolution;
        let blocks = unit_of.len();
        let credit = if resolution > 1 { vec![0; blocks] } else { Vec::new() };
        let mut buckets = ListSet::<Filing>::new(blocks, (units * (full + 1)) as usize);
        for (pbn, unit) in unit_of.into_iter().enumerate() {
            buckets.payload_mut(pbn as u32).unit = unit;
        }
        let closed = (policy == VictimPolicyKind::Fifo).then(|| ListSet::new(blocks, units as usize));
        let filed = vec![0; blocks.div_ceil(64)];
        VictimIndex { full, resolution, credit, buckets, filed, closed, clock: 0 }
    }

    /// Weight units per page.
    pub fn resolution(&self) -> u32 {
        self.resolution
    }

    /// What GC would have to keep of a block with `valid` valid pages: those pages, less the
    /// garbage credited inside them.
    #[inline]
    fn weight(&self, pbn: Pbn, valid: u32) -> u32 {
        if self.resolution == 1 {
            return valid;
        }
        let pages = valid * self.resolution;
        pages - self.credit[pbn.index()].min(pages)
    }

    /// Whether GC would reclaim anything from a block with `valid` valid pages.
    #[inline]
    pub fn has_garbage(&self, pbn: Pbn, valid: u32) -> bool {
        self.weight(pbn, valid) < self.full
    }

    /// Garbage credited inside the valid pages of `pbn`, in weight units.
    pub fn credit(&self, pbn: Pbn) -> u32 {
        self.credit.get(pbn.index()).copied().unwrap_or(0)
    }

    /// Sets the credit of `pbn` (at a resolution above 1) and refiles it if filed.
    pub fn set_credit(&mut self, pbn: Pbn, credit: u32, valid: u32) {
        self.credit[pbn.index()] = credit;
        self.update(pbn, valid);
    }

    /// Forgets the credit of an erased block.
    #[inline]
    pub fn clear_credit(&mut self, pbn: Pbn) {
        if let Some(credit) = self.credit.get_mut(pbn.index()) {
            *credit = 0;
        }
    }

    #[inline]
    fn bucket(&self, unit: u32, valid: u32) -> u32 {
        debug_assert!(valid <= self.full);
        unit * (self.full + 1) + valid
    }

    #[inline]
    pub fn is_filed(&self, pbn: Pbn) -> bool {
        self.filed[pbn.index() / 64] & (1 << (pbn.index() % 64)) != 0
    }

    /// Brings a filed block's entry toward the CPU cache (a hint; an unfiled block's is not read).
    #[inline]
    pub fn prefetch(&self, pbn: Pbn) {
        if self.filed.get(pbn.index() / 64).is_some_and(|w| w & (1 << (pbn.index() % 64)) != 0) {
            self.buckets.prefetch(pbn.get());
        }
    }

    /// Files a block just closed with `valid` valid pages.
    #[inline]
    pub fn insert(&mut self, pbn: Pbn, valid: u32) {
        self.file(pbn, self.weight(pbn, valid));
        let unit = self.buckets.payload(pbn.get()).unit;
        if let Some(closed) = &mut self.closed {
            closed.push_front(unit, pbn.get());
        }
    }

    #[inline(always)]
    fn file(&mut self, pbn: Pbn, weight: u32) {
        self.clock += 1;
        let bucket = self.bucket(self.buckets.payload(pbn.get()).unit, weight);
        self.buckets.payload_mut(pbn.get()).modified = self.clock;
        self.buckets.push_front(bucket, pbn.get());
        self.filed[pbn.index() / 64] |= 1 << (pbn.index() % 64);
    }

    /// Unfiles a block; does nothing if it is not filed.
    #[inline]
    pub fn remove(&mut self, pbn: Pbn) {
        self.buckets.remove(pbn.get());
        self.filed[pbn.index() / 64] &= !(1 << (pbn.index() % 64));
        if let Some(closed) = &mut self.closed {
            closed.remove(pbn.get());
        }
    }

    /// Moves a filed block to the bucket of its new valid count.
    #[inline(always)]
    pub fn update(&mut self, pbn: Pbn, valid: u32) {
        if self.is_filed(pbn) {
            self.buckets.remove(pbn.get());
            self.file(pbn, self.weight(pbn, valid));
        }
    }

    /// The victim of `unit` under `policy`, or `None` if no block is filed.
    pub fn select(&self, unit: u32, policy: VictimPolicyKind) -> Option<Pbn> {
        let oldest = (0..=self.full).map(|valid| self.buckets.back(self.bucket(unit, valid)));
        match policy {
            VictimPolicyKind::Greedy => oldest.flatten().next().map(Pbn::new),
            VictimPolicyKind::CostBenefit => {
                let ppb = self.full as f64;
                let mut best: Option<(f64, Pbn)> = None;
                for (valid, h) in oldest.enumerate() {
                    let Some(h) = h else { continue };
                    if valid == 0 {
                        return Some(Pbn::new(h));
                    }
                    let u = valid as f64 / ppb;
                    let age = (self.clock - self.buckets.payload(h).modified) as f64 + 1.0;
                    let score = (1.0 - u) / (2.0 * u) * age;
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, Pbn::new(h)));
                    }
                }
                best.map(|(_, h)| h)
            }
            VictimPolicyKind::Fifo => {
                let full = self.bucket(unit, self.full);
                let closed = self.closed.as_ref().expect("a FIFO victim index keeps the closing order");
                closed.iter_from_back(unit).find(|&b| self.buckets.list_of(b) != Some(full)).map(Pbn::new)
            }
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.buckets.memory_bytes()
            + self.filed.len() * 8
            + self.closed.as_ref().map_or(0, ListSet::memory_bytes)
            + self.credit.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_valid_then_first_filed() {
        let mut v = VictimIndex::new(1, 4, 1, vec![0; 6], VictimPolicyKind::Greedy);
        v.insert(Pbn::new(0), 3);
        v.insert(Pbn::new(1), 2);
        v.insert(Pbn::new(2), 2);
        v.insert(Pbn::new(3), 4);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(Pbn::new(1)));
        v.update(Pbn::new(2), 1);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(Pbn::new(2)));
        v.remove(Pbn::new(2));
        v.remove(Pbn::new(1));
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(Pbn::new(0)));
        v.remove(Pbn::new(0));
        v.remove(Pbn::new(3));
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), None);
    }

    #[test]
    fn fifo_picks_the_first_closed_block_with_an_invalid_page() {
        let mut v = VictimIndex::new(1, 4, 1, vec![0; 4], VictimPolicyKind::Fifo);
        v.insert(Pbn::new(0), 4);
        v.insert(Pbn::new(1), 3);
        v.insert(Pbn::new(2), 0);
        assert_eq!(v.select(0, VictimPolicyKind::Fifo), Some(Pbn::new(1)), "block 0 is fully valid");
        v.update(Pbn::new(0), 2);
        assert_eq!(v.select(0, VictimPolicyKind::Fifo), Some(Pbn::new(0)), "closing order, not modification");
        v.remove(Pbn::new(0));
        v.remove(Pbn::new(1));
        assert_eq!(v.select(0, VictimPolicyKind::Fifo), Some(Pbn::new(2)));
        v.remove(Pbn::new(2));
        assert_eq!(v.select(0, VictimPolicyKind::Fifo), None);
    }

    #[test]
    fn units_are_independent() {
        let mut v = VictimIndex::new(2, 4, 1, vec![0, 1, 0, 1], VictimPolicyKind::Greedy);
        v.insert(Pbn::new(1), 0);
        v.insert(Pbn::new(0), 3);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(Pbn::new(0)));
        assert_eq!(v.select(1, VictimPolicyKind::Greedy), Some(Pbn::new(1)));
    }

    #[test]
    fn cost_benefit_prefers_an_old_block_over_a_slightly_emptier_young_one() {
        let mut v = VictimIndex::new(1, 100, 1, vec![0; 3], VictimPolicyKind::Greedy);
        v.insert(Pbn::new(0), 50); // old, u = 0.5
        for _ in 0..1000 {
            v.insert(Pbn::new(2), 90);
            v.remove(Pbn::new(2));
        }
        v.insert(Pbn::new(1), 45); // young, u = 0.45
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(Pbn::new(1)));
        assert_eq!(v.select(0, VictimPolicyKind::CostBenefit), Some(Pbn::new(0)));
    }

    #[test]
    fn a_block_costs_24_bytes_and_a_bit_and_a_bucket_12() {
        let greedy = VictimIndex::new(1, 4, 1, vec![0; 10], VictimPolicyKind::Greedy).memory_bytes();
        assert_eq!(greedy, 10 * 24 + 8 + 5 * 12, "10 blocks' filed bits take a word");
        let fifo = VictimIndex::new(1, 4, 1, vec![0; 10], VictimPolicyKind::Fifo).memory_bytes();
        assert_eq!(fifo, 10 * 24 + 8 + 5 * 12 + 10 * 12 + 12, "FIFO adds a closing-order node per block and a list");
    }

    #[test]
    fn cost_benefit_takes_an_empty_block_at_once() {
        let mut v = VictimIndex::new(1, 8, 1, vec![0; 2], VictimPolicyKind::Greedy);
        v.insert(Pbn::new(0), 1);
        v.insert(Pbn::new(1), 0);
        assert_eq!(v.select(0, VictimPolicyKind::CostBenefit), Some(Pbn::new(1)));
    }
}
