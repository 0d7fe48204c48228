//! GC victim selection without scanning every block.
//!
//! Closed blocks sit in per-unit buckets indexed by valid-page count, each bucket an intrusive
//! doubly linked list in the order blocks entered it. A block enters a bucket when it is closed or
//! when one of its pages is invalidated, so each bucket is ordered by last modification time.
//!
//! - Greedy takes the head of the lowest non-empty bucket: O(v_min) per GC, amortised O(1) per
//!   page moved. Ties go to the block that reached that valid count first.
//! - Cost-benefit maximises (1 - u) / (2u) x age over the heads of all buckets: the head of a
//!   bucket is its least recently modified block, so it has the best score of its bucket.
//!   O(pages per block) per GC.

use crate::config::VictimPolicyKind;
use crate::flash::Pbn;

const NIL: u32 = u32::MAX;

/// Per-block entry, kept together so an invalidation touches one cache line of its block.
#[derive(Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
    /// Valid count under which the block is filed, or NIL when not filed.
    filed_at: u32,
    unit: u32,
    /// Clock value when the block was last filed (its last modification).
    modified: u64,
}

pub struct VictimIndex {
    pages_per_block: u32,
    /// head/tail per (unit, valid count).
    head: Vec<u32>,
    tail: Vec<u32>,
    links: Vec<Link>,
    clock: u64,
}

impl VictimIndex {
    pub fn new(units: u32, pages_per_block: u32, unit_of: Vec<u32>) -> Self {
        let buckets = (units * (pages_per_block + 1)) as usize;
        VictimIndex {
            pages_per_block,
            head: vec![NIL; buckets],
            tail: vec![NIL; buckets],
            links: unit_of
                .into_iter()
                .map(|unit| Link { prev: NIL, next: NIL, filed_at: NIL, unit, modified: 0 })
                .collect(),
            clock: 0,
        }
    }

    #[inline]
    fn bucket(&self, pbn: Pbn, valid: u32) -> usize {
        (self.links[pbn as usize].unit * (self.pages_per_block + 1) + valid) as usize
    }

    pub fn is_filed(&self, pbn: Pbn) -> bool {
        self.links[pbn as usize].filed_at != NIL
    }

    #[inline]
    pub fn prefetch(&self, pbn: Pbn) {
        if let Some(link) = self.links.get(pbn as usize) {
            crate::mem::prefetch(link);
        }
    }

    /// Files a block (just closed, or re-filed after an invalidation).
    #[inline]
    pub fn insert(&mut self, pbn: Pbn, valid: u32) {
        let b = self.bucket(pbn, valid);
        let tail = self.tail[b];
        self.clock += 1;
        let link = &mut self.links[pbn as usize];
        link.prev = tail;
        link.next = NIL;
        link.filed_at = valid;
        link.modified = self.clock;
        if tail == NIL {
            self.head[b] = pbn;
        } else {
            self.links[tail as usize].next = pbn;
        }
        self.tail[b] = pbn;
    }

    /// Unfiles a block; does nothing if it is not filed.
    #[inline]
    pub fn remove(&mut self, pbn: Pbn) {
        let Link { prev, next, filed_at, .. } = self.links[pbn as usize];
        if filed_at == NIL {
            return;
        }
        let b = self.bucket(pbn, filed_at);
        if prev == NIL {
            self.head[b] = next
        } else {
            self.links[prev as usize].next = next
        }
        if next == NIL {
            self.tail[b] = prev
        } else {
            self.links[next as usize].prev = prev
        }
        self.links[pbn as usize].filed_at = NIL;
    }

    /// Moves a filed block to the bucket of its new valid count.
    #[inline]
    pub fn update(&mut self, pbn: Pbn, valid: u32) {
        if self.links[pbn as usize].filed_at != NIL {
            self.remove(pbn);
            self.insert(pbn, valid);
        }
    }

    /// The victim of `unit` under `policy`, or `None` if no block is filed.
    pub fn select(&self, unit: u32, policy: VictimPolicyKind) -> Option<Pbn> {
        let base = (unit * (self.pages_per_block + 1)) as usize;
        let heads = &self.head[base..base + self.pages_per_block as usize + 1];
        match policy {
            VictimPolicyKind::Greedy => heads.iter().copied().find(|&h| h != NIL),
            VictimPolicyKind::CostBenefit => {
                let ppb = self.pages_per_block as f64;
                let mut best: Option<(f64, Pbn)> = None;
                for (valid, &h) in heads.iter().enumerate() {
                    if h == NIL {
                        continue;
                    }
                    if valid == 0 {
                        return Some(h);
                    }
                    let u = valid as f64 / ppb;
                    let age = (self.clock - self.links[h as usize].modified) as f64 + 1.0;
                    let score = (1.0 - u) / (2.0 * u) * age;
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, h));
                    }
                }
                best.map(|(_, h)| h)
            }
        }
    }

    pub fn memory_bytes(&self) -> usize {
        (self.head.len() + self.tail.len()) * 4 + self.links.len() * std::mem::size_of::<Link>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_picks_fewest_valid_then_first_filed() {
        let mut v = VictimIndex::new(1, 4, vec![0; 6]);
        v.insert(0, 3);
        v.insert(1, 2);
        v.insert(2, 2);
        v.insert(3, 4);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(1));
        v.update(2, 1);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(2));
        v.remove(2);
        v.remove(1);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(0));
        v.remove(0);
        v.remove(3);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), None);
    }

    #[test]
    fn units_are_independent() {
        let mut v = VictimIndex::new(2, 4, vec![0, 1, 0, 1]);
        v.insert(1, 0);
        v.insert(0, 3);
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(0));
        assert_eq!(v.select(1, VictimPolicyKind::Greedy), Some(1));
    }

    #[test]
    fn cost_benefit_prefers_an_old_block_over_a_slightly_emptier_young_one() {
        let mut v = VictimIndex::new(1, 100, vec![0; 3]);
        v.insert(0, 50); // old, u = 0.5
        for _ in 0..1000 {
            v.insert(2, 90);
            v.remove(2);
        }
        v.insert(1, 45); // young, u = 0.45
        assert_eq!(v.select(0, VictimPolicyKind::Greedy), Some(1));
        assert_eq!(v.select(0, VictimPolicyKind::CostBenefit), Some(0));
    }

    #[test]
    fn cost_benefit_takes_an_empty_block_at_once() {
        let mut v = VictimIndex::new(1, 8, vec![0; 2]);
        v.insert(0, 1);
        v.insert(1, 0);
        assert_eq!(v.select(0, VictimPolicyKind::CostBenefit), Some(1));
    }
}
