//! Two-level LRU lists (TPFTL, paper 002 §4.1-4.2): cached entries are grouped into translation
//! page (TP) nodes; each node keeps its entries in an entry-level LRU list, and the nodes are
//! ordered by page-level hotness, the mean hotness of their entries (the recency of an entry is
//! the global access count at its last access; spec A.6). `PageOrder::Lru` orders nodes by their
//! most recent access instead (spec T1's sensitivity option).
//!
//! Capacity is counted in bytes: each entry node costs `entry_bytes`, each TP node `node_bytes`
//! (paper 002: 6-byte entries; spec A.6's slot model charges a TP node one 6-byte slot), so
//! evicting a node's last entry frees both.
//!
//! Cost: a hit, an insertion, a GC update and a removal are O(1) on the entry level (intrusive
//! lists over preallocated slots, an [`LpnMap`] lookup, no allocation). An entry's LPN, PPN and
//! last access sit beside its entry-list links (one cache line per entry: the cache holds tens of
//! thousands, far more than the CPU cache, so each array touched per eviction cost a miss), and
//! an entry is dirty exactly when it is not in its node's clean list. The node order is a heap
//! ([`NodeHeap`]) whose stored keys are lower bounds of the nodes' current hotness: a hit or
//! an insertion only raises a node's hotness, so it leaves the heap alone (O(1)); the coldest
//! node is found by refreshing stale keys at the top, and a node whose hotness an eviction lowers
//! is re-keyed (O(log nodes), at most once per eviction). Cleaning a whole node (a batch
//! write-back) is linear in its entries.

use serde::{Deserialize, Serialize};

use super::map::RUNS;
use super::LpnMap;
use crate::flash::{Divisor, Lpn, Ppn, Tpn};
use crate::ftl::common::ListSet;
use crate::metrics::Occupancy;

const NONE: u32 = u32::MAX;

/// How TP nodes are ordered for replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageOrder {
    /// Coldest node = the lowest mean last-access time of its entries (paper 002 §4.2).
    Hotness,
    /// Coldest node = the least recently accessed node.
    Lru,
}

/// A node's replacement key: the fraction `num / den` (mean last access, or last access / 1; a
/// node holds at most `u32::MAX` entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    num: u64,
    den: u32,
}

impl Key {
    #[inline]
    fn less(self, other: Key) -> Option<bool> {
        // While both numerators (sums of access counts) are below 2^32, the products fit in 64
        // bits, cheaper to form and compare; the 128-bit products are the general case.
        if (self.num | other.num) >> 32 == 0 {
            let (a, b) = (self.num * other.den as u64, other.num * self.den as u64);
            return (a != b).then_some(a < b);
        }
        let (a, b) = (self.num as u128 * other.den as u128, other.num as u128 * self.den as u128);
        (a != b).then_some(a < b)
    }
}

/// An entry node's state, kept with its entry-list links.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The global access count at its last access.
    last: u64,
    lpn: u32,
    ppn: Option<Ppn>,
}

pub struct TwoLevelCache {
    order: PageOrder,
    slots: u32,
    free: Vec<u32>,
    slot_of: LpnMap<u32, RUNS>,
    /// List `tp`: every cached entry of TP `tp`, most recently used first, with each entry's state.
    entries: ListSet<Entry>,
    /// List `tp`: the clean entries of TP `tp`, most recently used first (the others are dirty).
    clean: ListSet,
    // TP nodes, indexed by TP number (a node exists while its entry list is non-empty).
    sum_last: Vec<u64>,
    touched: Vec<u64>,
    dirty_count: Vec<u32>,
    nodes: u32,
    heap: NodeHeap,
    entries_per_tp: Divisor,
    budget: u64,
    entry_bytes: u64,
    node_bytes: u64,
}

impl TwoLevelCache {
    /// A cache of `budget` bytes, `entry_bytes` per entry node and `node_bytes` per TP node; the
    /// budget must hold one node with one entry.
    pub fn new(
        order: PageOrder,
        budget: u64,
        entry_bytes: u32,
        node_bytes: u32,
        logical_pages: u32,
        entries_per_tp: u32,
    ) -> Self {
        let (e, n) = (entry_bytes.max(1) as u64, node_bytes as u64);
        let slots = (budget.saturating_sub(n) / e).min(logical_pages as u64) as usize;
        let tps = logical_pages.div_ceil(entries_per_tp) as usize;
        TwoLevelCache {
            order,
            slots: slots as u32,
            free: (0..slots as u32).rev().collect(),
            // Prefetching loads runs of neighbouring entries, and evicting a node takes them together.
            slot_of: LpnMap::with_capacity(slots),
            entries: ListSet::new(slots, tps),
            clean: ListSet::new(slots, tps),
            sum_last: vec![0; tps],
            touched: vec![0; tps],
            dirty_count: vec![0; tps],
            nodes: 0,
            heap: NodeHeap::new(tps),
            entries_per_tp: Divisor::new(entries_per_tp),
            budget,
            entry_bytes: e,
            node_bytes: n,
        }
    }

    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<u32> {
        self.slot_of.get(lpn.get())
    }
    #[inline]
    fn entry(&self, slot: u32) -> &Entry {
        self.entries.payload(slot)
    }
    #[inline]
    pub fn lpn(&self, slot: u32) -> Lpn {
        Lpn::new(self.entry(slot).lpn)
    }
    #[inline]
    pub fn ppn(&self, slot: u32) -> Option<Ppn> {
        self.entry(slot).ppn
    }
    #[inline]
    pub fn is_dirty(&self, slot: u32) -> bool {
        self.clean.list_of(slot).is_none()
    }
    #[inline]
    fn tp(&self, slot: u32) -> u32 {
        self.entries_per_tp.quotient(self.entry(slot).lpn)
    }
    /// Entries cached for a TP (0: it has no node).
    #[inline]
    pub fn node_len(&self, tp: Tpn) -> u32 {
        let tp = tp.get();
        self.entries.len(tp)
    }
    #[inline]
    pub fn dirty_count(&self, tp: Tpn) -> u32 {
        let tp = tp.get();
        self.dirty_count[tp as usize]
    }
    pub fn nodes(&self) -> u32 {
        self.nodes
    }
    /// Cached entries.
    pub fn len(&self) -> u32 {
        self.slots - self.free.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn entry_bytes(&self) -> u64 {
        self.entry_bytes
    }
    pub fn node_bytes(&self) -> u64 {
        self.node_bytes
    }
    pub fn budget(&self) -> u64 {
        self.budget
    }
    /// How the entries spread over TP nodes now (O(nodes): every node sits in the heap).
    pub fn occupancy(&self) -> Occupancy {
        let mut o = Occupancy::new(self.budget);
        for tp in self.heap.tps() {
            o.add_tp(self.entries.len(tp), self.dirty_count[tp as usize]);
        }
        o
    }

    /// Bytes the entry and TP nodes occupy.
    #[inline]
    pub fn used_bytes(&self) -> u64 {
        self.len() as u64 * self.entry_bytes + self.nodes as u64 * self.node_bytes
    }
    #[inline]
    pub fn free_bytes(&self) -> u64 {
        self.budget - self.used_bytes()
    }

    /// A hit: the entry moves to the front of its node, whose hotness rises.
    #[inline]
    pub fn touch(&mut self, slot: u32, now: u64) {
        let tp = self.tp(slot);
        let entry = self.entries.payload_mut(slot);
        self.sum_last[tp as usize] += now - entry.last;
        entry.last = now;
        self.touched[tp as usize] = now;
        self.entries.move_to_front(tp, slot);
        if !self.is_dirty(slot) {
            self.clean.move_to_front(tp, slot);
        }
    }

    /// Loads a clean entry at the front of its node, creating the node if needed (the caller made
    /// room), unless the LPN is cached: then `None` and nothing changes, else whether a node was
    /// created. One index search both tests and inserts (a prefetch target may be cached).
    #[inline]
    pub fn insert(&mut self, lpn: Lpn, ppn: Option<Ppn>, now: u64) -> Option<bool> {
        let slot = *self.free.last().expect("insert into a full two-level cache");
        if !self.slot_of.insert_absent(lpn.get(), slot) {
            return None;
        }
        self.free.pop();
        let tp = self.entries_per_tp.quotient(lpn.get());
        let created = self.entries.is_empty(tp);
        if created {
            self.nodes += 1;
            self.sum_last[tp as usize] = 0;
        }
        *self.entries.payload_mut(slot) = Entry { last: now, lpn: lpn.get(), ppn };
        self.entries.push_front(tp, slot);
        self.clean.push_front(tp, slot);
        self.sum_last[tp as usize] += now;
        self.touched[tp as usize] = now;
        if created {
            self.heap.push(tp, self.key(tp));
        }
        Some(created)
    }

    /// Records a new mapping and marks the entry dirty; neither list order changes (a host write
    /// right after its translation's touch, or a GC update, which is no access: spec T21).
    #[inline]
    pub fn update(&mut self, slot: u32, ppn: Option<Ppn>) {
        self.entries.payload_mut(slot).ppn = ppn;
        if !self.is_dirty(slot) {
            self.clean.remove(slot);
            let tp = self.tp(slot);
            self.dirty_count[tp as usize] += 1;
        }
    }

    /// Empties a slot; returns (LPN, PPN, dirty, whether its node went with it). Inlined into
    /// the eviction loop, its only caller on the hot path (a call per evicted entry).
    #[inline]
    pub fn remove(&mut self, slot: u32) -> (Lpn, Option<Ppn>, bool, bool) {
        let tp = self.tp(slot);
        let Entry { last, lpn, ppn } = *self.entry(slot);
        let dirty = self.is_dirty(slot);
        self.entries.remove(slot);
        self.clean.remove(slot);
        self.dirty_count[tp as usize] -= dirty as u32;
        self.sum_last[tp as usize] -= last;
        self.slot_of.remove(lpn);
        self.free.push(slot);
        let gone = self.entries.is_empty(tp);
        if gone {
            self.nodes -= 1;
            self.heap.remove(tp);
        } else {
            // Losing an entry newer than the node's mean lowers its hotness: the heap key must
            // stay a lower bound (a rise, the usual case, is left for `fresh_top`).
            let key = self.key(tp);
            if key.less(self.heap.stored(tp)) == Some(true) {
                self.heap.lower(tp, key);
            }
        }
        (Lpn::new(lpn), ppn, dirty, gone)
    }

    /// Brings the lookup of `lpn` toward the CPU cache (a hint: GC looks ahead in its victim).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.slot_of.prefetch(lpn.get());
    }

    /// The next victim entry of a node: its least recently used entry, or with `clean_first` its
    /// least recently used clean entry if it has one (paper 002 §4.4).
    #[inline]
    pub fn victim_in(&self, tp: Tpn, clean_first: bool) -> Option<u32> {
        let tp = tp.get();
        if clean_first {
            if let Some(slot) = self.clean.back(tp) {
                return Some(slot);
            }
        }
        self.entries.back(tp)
    }

    /// The coldest node other than `except` (spec T7: never the node being loaded).
    pub fn coldest_except(&mut self, except: Tpn) -> Option<Tpn> {
        self.coldest_other_than(except.get()).map(Tpn::new)
    }

    /// The coldest node of all.
    #[cfg(test)]
    fn coldest(&mut self) -> Option<Tpn> {
        self.coldest_other_than(NONE).map(Tpn::new)
    }

    fn coldest_other_than(&mut self, except: u32) -> Option<u32> {
        let top = self.fresh_top()?;
        if top != except {
            return Some(top);
        }
        self.heap.remove(except);
        let next = self.fresh_top();
        self.heap.push(except, self.key(except));
        next
    }

    /// Marks every dirty entry of a TP clean, handing each (LPN, PPN) to `f` (a batch write-back),
    /// and links each into the node's clean list at its recency position. Walks the node from its
    /// most recently used entry to its least recently used dirty one (not the whole node: dirty
    /// entries are mostly recent ones, written after their translation's touch).
    pub fn clean_tp(&mut self, tp: Tpn, mut f: impl FnMut(Lpn, Option<Ppn>)) {
        let tp = tp.get();
        let mut left = self.dirty_count[tp as usize];
        // The nearest more recent entry in the clean list.
        let mut newer = None;
        let mut cursor = self.entries.front(tp);
        while left > 0 {
            let slot = cursor.expect("a node's dirty count is at most its entries");
            if self.is_dirty(slot) {
                f(self.lpn(slot), self.ppn(slot));
                match newer {
                    Some(anchor) => self.clean.insert_behind(anchor, slot),
                    None => self.clean.push_front(tp, slot),
                }
                left -= 1;
            }
            newer = Some(slot);
            cursor = self.entries.toward_back(slot);
        }
        self.dirty_count[tp as usize] = 0;
    }

    /// TPs with at least one dirty entry.
    pub fn dirty_tps(&self) -> impl Iterator<Item = Tpn> + '_ {
        self.dirty_count.iter().enumerate().filter(|(_, &n)| n > 0).map(|(tp, _)| Tpn::new(tp as u32))
    }

    /// The entries of a node from its least recently used to its most recently used.
    pub fn node_entries(&self, tp: Tpn) -> impl Iterator<Item = u32> + '_ {
        let tp = tp.get();
        self.entries.iter_from_back(tp)
    }

    /// Drops every entry without writing anything back.
    pub fn clear(&mut self) {
        for tp in self.heap.tps() {
            self.dirty_count[tp as usize] = 0;
        }
        self.heap.clear();
        self.slot_of.clear();
        self.free = (0..self.slots).rev().collect();
        self.entries.clear();
        self.clean.clear();
        self.nodes = 0;
    }

    #[inline]
    fn key(&self, tp: u32) -> Key {
        match self.order {
            PageOrder::Hotness => Key { num: self.sum_last[tp as usize], den: self.entries.len(tp).max(1) },
            PageOrder::Lru => Key { num: self.touched[tp as usize], den: 1 },
        }
    }

    /// The coldest node: refreshes stale keys at the top until the top's key is current (every
    /// other node's current key is at least its stored key, so the top is then the minimum).
    fn fresh_top(&mut self) -> Option<u32> {
        loop {
            let top = self.heap.top()?;
            let key = self.key(top);
            if key.less(self.heap.stored(top)).is_none() {
                return Some(top);
            }
            self.heap.rekey_top(key);
        }
    }

    /// Checks lists, per-node sums and counts, the byte budget and the heap against the entries.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.used_bytes() > self.budget {
            return Err(format!("two-level cache uses {} bytes of its {}", self.used_bytes(), self.budget));
        }
        self.heap.check()?;
        let mut entries = 0;
        for tp in self.heap.tps() {
            let current = self.key(tp);
            if current.less(self.heap.stored(tp)) == Some(true) {
                return Err(format!("TP node {tp}'s heap key is above its hotness"));
            }
            let (mut sum, mut dirty, mut clean, mut prev) = (0u64, 0u32, 0u32, u64::MAX);
            for slot in self.entries.iter_from_back(tp).collect::<Vec<_>>().into_iter().rev() {
                let Entry { last, lpn, .. } = *self.entry(slot);
                if self.tp(slot) != tp || self.slot_of.get(lpn) != Some(slot) {
                    return Err(format!("slot {slot} (LPN {lpn}) is misfiled under TP node {tp}"));
                }
                if last > prev {
                    return Err(format!("TP node {tp}'s entry list is out of recency order"));
                }
                prev = last;
                sum += last;
                dirty += self.is_dirty(slot) as u32;
                clean += !self.is_dirty(slot) as u32;
                if self.clean.list_of(slot).is_some_and(|l| l != tp) {
                    return Err(format!(
                        "clean LPN {lpn} of TP node {tp} is in clean list {:?}",
                        self.clean.list_of(slot)
                    ));
                }
            }
            // The clean list is the node's entry list without its dirty entries, in the same order.
            let clean_entries = self.entries.iter_from_back(tp).filter(|&s| !self.is_dirty(s));
            if !clean_entries.eq(self.clean.iter_from_back(tp)) {
                return Err(format!("TP node {tp}'s clean list is out of recency order"));
            }
            if sum != self.sum_last[tp as usize]
                || dirty != self.dirty_count[tp as usize]
                || clean != self.clean.len(tp)
            {
                return Err(format!(
                    "TP node {tp}'s recency sum, dirty count or clean list disagrees with its entries"
                ));
            }
            entries += self.entries.len(tp);
        }
        if self.heap.len != self.nodes as usize || entries != self.len() {
            return Err(format!(
                "{} TP nodes in the heap holding {entries} entries, but {} nodes and {} entries are counted",
                self.heap.len,
                self.nodes,
                self.len()
            ));
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        self.slot_of.memory_bytes()
            + self.free.capacity() * 4
            + self.entries.memory_bytes()
            + self.clean.memory_bytes()
            + self.heap.memory_bytes()
            + self.sum_last.len() * (8 + 8 + 4)
    }
}

/// A heap node: a TP and the key it sits at, side by side so that a sift reads one array. The
/// key's fields are inline: a `Key` inside (12 bytes padded to 16) would make the node 24 bytes,
/// and four nodes would no longer fill one cache line.
#[derive(Debug, Clone, Copy, Default)]
struct Ranked {
    num: u64,
    den: u32,
    tp: u32,
}

impl Ranked {
    #[inline]
    fn new(tp: u32, key: Key) -> Self {
        Ranked { num: key.num, den: key.den, tp }
    }

    #[inline]
    fn key(self) -> Key {
        Key { num: self.num, den: self.den }
    }

    /// The heap order: stored key, then TP number.
    #[inline]
    fn before(self, other: Ranked) -> bool {
        self.key().less(other.key()).unwrap_or(self.tp < other.tp)
    }
}

/// Four heap nodes, one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([Ranked; 4]);
const _: () = assert!(size_of::<Line>() == 64, "four heap nodes fill one cache line");

/// The TP nodes in a 4-ary min-heap by stored key, then TP number. A refreshed node usually sinks
/// to the bottom (a hit or a load made it one of the hottest), and the cache holds thousands of
/// nodes: four children per node halve the depth of a binary heap, and the root sits at the end
/// of the first line so that every node's children share one line.
struct NodeHeap {
    lines: Vec<Line>,
    len: usize,
    /// `pos[tp]`: the heap index of TP `tp`'s node, `NONE` if it has none.
    pos: Vec<u32>,
}

/// Where heap index 0 sits in the lines: children `4i+1..=4i+4` then fill line `i + 1`.
const ROOT: usize = 3;

impl NodeHeap {
    fn new(tps: usize) -> Self {
        NodeHeap { lines: vec![Line::default(); (ROOT + tps).div_ceil(4)], len: 0, pos: vec![NONE; tps] }
    }

    #[inline]
    fn at(&self, i: usize) -> Ranked {
        let f = ROOT + i;
        self.lines[f / 4].0[f % 4]
    }

    /// Puts `node` at index `i` and indexes it.
    #[inline]
    fn place(&mut self, i: usize, node: Ranked) {
        let f = ROOT + i;
        self.lines[f / 4].0[f % 4] = node;
        self.pos[node.tp as usize] = i as u32;
    }

    fn tps(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(|i| self.at(i).tp)
    }

    #[inline]
    fn top(&self) -> Option<u32> {
        (self.len > 0).then(|| self.at(0).tp)
    }

    /// The key TP `tp`'s node sits at.
    #[inline]
    fn stored(&self, tp: u32) -> Key {
        self.at(self.pos[tp as usize] as usize).key()
    }

    fn push(&mut self, tp: u32, key: Key) {
        self.len += 1;
        self.sift_up(self.len - 1, Ranked::new(tp, key));
    }

    fn remove(&mut self, tp: u32) {
        let i = self.pos[tp as usize] as usize;
        self.pos[tp as usize] = NONE;
        self.len -= 1;
        if i < self.len {
            let last = self.at(self.len);
            if last.before(self.at(i)) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
    }

    /// Re-keys TP `tp`'s node to a lower key.
    fn lower(&mut self, tp: u32, key: Key) {
        self.sift_up(self.pos[tp as usize] as usize, Ranked::new(tp, key));
    }

    /// Re-keys the top node to a higher key.
    fn rekey_top(&mut self, key: Key) {
        self.sift_down(0, Ranked::new(self.at(0).tp, key));
    }

    /// Places `node` at index `i` or above, moving the nodes it orders before down.
    fn sift_up(&mut self, mut i: usize, node: Ranked) {
        while i > 0 {
            let parent = (i - 1) / 4;
            let above = self.at(parent);
            if !node.before(above) {
                break;
            }
            self.place(i, above);
            i = parent;
        }
        self.place(i, node);
    }

    /// Places `node` at index `i` or below, moving the least children that order before it up.
    fn sift_down(&mut self, mut i: usize, node: Ranked) {
        loop {
            let first = 4 * i + 1;
            if first >= self.len {
                break;
            }
            // Children `4i+1..=4i+4` fill line `i + 1` (see `ROOT`).
            let children = &self.lines[i + 1].0[..(self.len - first).min(4)];
            let (mut least, mut child) = (0, children[0]);
            for (c, &other) in children.iter().enumerate().skip(1) {
                if other.before(child) {
                    (least, child) = (c, other);
                }
            }
            if !child.before(node) {
                break;
            }
            self.place(i, child);
            i = first + least;
        }
        self.place(i, node);
    }

    fn clear(&mut self) {
        for i in 0..self.len {
            let tp = self.at(i).tp;
            self.pos[tp as usize] = NONE;
        }
        self.len = 0;
    }

    /// Checks the index and the heap order.
    fn check(&self) -> std::result::Result<(), String> {
        for i in 0..self.len {
            let node = self.at(i);
            if self.pos[node.tp as usize] as usize != i {
                return Err(format!(
                    "TP node {} is at heap index {i} but indexed at {}",
                    node.tp, self.pos[node.tp as usize]
                ));
            }
            if i > 0 && node.before(self.at((i - 1) / 4)) {
                return Err(format!("TP node {} orders before its heap parent", node.tp));
            }
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.lines.len() * size_of::<Line>() + self.pos.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 entries per TP, 64 LPNs; 6-byte entries and nodes.
    fn cache(order: PageOrder, slots: u64) -> TwoLevelCache {
        TwoLevelCache::new(order, slots * 6, 6, 6, 64, 8)
    }

    fn drain_order(c: &mut TwoLevelCache, clean_first: bool) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some(tp) = c.coldest() {
            let slot = c.victim_in(tp, clean_first).unwrap();
            out.push(c.remove(slot).0.get());
            c.check().unwrap();
        }
        out
    }

    #[test]
    fn entries_cost_a_slot_and_a_node_costs_one_more() {
        let mut c = cache(PageOrder::Hotness, 6);
        assert_eq!(c.insert(Lpn::new(3), Some(Ppn::new(30)), 1), Some(true));
        assert_eq!(c.insert(Lpn::new(4), Some(Ppn::new(40)), 2), Some(false));
        assert_eq!(c.insert(Lpn::new(17), Some(Ppn::new(170)), 3), Some(true));
        // A cached LPN is left as it is.
        assert_eq!(c.insert(Lpn::new(4), Some(Ppn::new(41)), 4), None);
        assert_eq!(c.ppn(c.get(Lpn::new(4)).unwrap()), Some(Ppn::new(40)));
        assert_eq!((c.len(), c.nodes(), c.used_bytes(), c.free_bytes()), (3, 2, 30, 6));
        // Evicting a node's only entry frees two slots (paper 002 Fig. 4).
        let (lpn, ppn, dirty, gone) = c.remove(c.get(Lpn::new(17)).unwrap());
        assert_eq!((lpn, ppn, dirty, gone), (Lpn::new(17), Some(Ppn::new(170)), false, true));
        assert_eq!(c.free_bytes(), 18);
        c.check().unwrap();
    }

    #[test]
    fn occupancy_counts_nodes_entries_and_dirty_entries() {
        let mut c = cache(PageOrder::Hotness, 10);
        // TP 0: LPNs 1, 2, 3 (2 and 3 dirty); TP 2: LPN 17 (dirty); TP 5: LPN 40.
        for (now, lpn) in [1, 2, 3, 17, 40].into_iter().enumerate() {
            c.insert(Lpn::new(lpn), Some(Ppn::new(lpn)), now as u64);
        }
        for lpn in [2, 3, 17] {
            c.update(c.get(Lpn::new(lpn)).unwrap(), Some(Ppn::new(100 + lpn)));
        }
        let expected = Occupancy { cache_bytes: 60, tps: 3, entries: 5, dirty_entries: 3, tps_over_one_dirty: 1 };
        assert_eq!(c.occupancy(), expected);
    }

    #[test]
    fn the_coldest_node_has_the_lowest_mean_recency_not_the_oldest_entry() {
        let mut c = cache(PageOrder::Hotness, 16);
        // TP 0: entries at times 1, 2, 3; TP 1: entry at time 4; then a hit on LPN 0 at time 10.
        for (t, lpn) in [0, 1, 2, 8].into_iter().enumerate() {
            c.insert(Lpn::new(lpn), Some(Ppn::new(0)), t as u64 + 1);
        }
        c.touch(c.get(Lpn::new(0)).unwrap(), 10);
        // TP 0's mean is (10 + 2 + 3) / 3 = 5 > 4: TP 1 is colder although TP 0 holds the oldest entries.
        assert_eq!(c.coldest(), Some(Tpn::new(1)));
        assert_eq!(c.coldest_except(Tpn::new(1)), Some(Tpn::new(0)));
        // Ordered by node recency instead, the node touched longest ago goes first.
        let mut lru = cache(PageOrder::Lru, 16);
        for (t, lpn) in [0, 8, 1].into_iter().enumerate() {
            lru.insert(Lpn::new(lpn), Some(Ppn::new(0)), t as u64 + 1);
        }
        assert_eq!(lru.coldest(), Some(Tpn::new(1)));
        lru.touch(lru.get(Lpn::new(8)).unwrap(), 9);
        assert_eq!(lru.coldest(), Some(Tpn::new(0)));
        // Entries leave their node least recently used first; nodes in hotness order.
        assert_eq!(drain_order(&mut c, false), [8, 1, 2, 0]);
    }

    #[test]
    fn clean_first_takes_clean_entries_in_lru_order_then_dirty_ones() {
        let mut c = cache(PageOrder::Hotness, 16);
        for (t, lpn) in [0, 1, 2, 3, 4].into_iter().enumerate() {
            c.insert(Lpn::new(lpn), Some(Ppn::new(100 + lpn)), t as u64 + 1);
        }
        c.update(c.get(Lpn::new(0)).unwrap(), Some(Ppn::new(200)));
        c.update(c.get(Lpn::new(3)).unwrap(), Some(Ppn::new(203)));
        assert_eq!(c.dirty_count(Tpn::new(0)), 2);
        assert_eq!(c.victim_in(Tpn::new(0), false), c.get(Lpn::new(0)));
        assert_eq!(c.victim_in(Tpn::new(0), true), c.get(Lpn::new(1)));
        let mut clean_first = drain_order(&mut c, true);
        assert_eq!(clean_first, [1, 2, 4, 0, 3]);
        clean_first.clear();
        // A batch clean hands over every dirty entry and restores the recency order of the clean list.
        for (t, lpn) in [0, 1, 2, 3, 4].into_iter().enumerate() {
            c.insert(Lpn::new(lpn), Some(Ppn::new(100 + lpn)), t as u64 + 1);
        }
        c.update(c.get(Lpn::new(1)).unwrap(), Some(Ppn::new(201)));
        c.update(c.get(Lpn::new(3)).unwrap(), Some(Ppn::new(203)));
        c.touch(c.get(Lpn::new(2)).unwrap(), 9);
        let mut written = Vec::new();
        c.clean_tp(Tpn::new(0), |l, p| written.push((l, p)));
        written.sort();
        assert_eq!(written, [(Lpn::new(1), Some(Ppn::new(201))), (Lpn::new(3), Some(Ppn::new(203)))]);
        assert_eq!(c.dirty_count(Tpn::new(0)), 0);
        c.check().unwrap();
        assert_eq!(drain_order(&mut c, true), [0, 1, 3, 4, 2]);
    }

    #[test]
    fn heap_keys_stay_lower_bounds_through_hits_and_removals() {
        let mut c = cache(PageOrder::Hotness, 40);
        let mut now = 0;
        let mut rng = 7u64;
        for _ in 0..2000 {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = (rng >> 33) as u32 % 64;
            now += 1;
            match c.get(Lpn::new(lpn)) {
                Some(slot) => {
                    c.touch(slot, now);
                    if rng & 1 == 0 {
                        c.update(slot, Some(Ppn::new(now as u32)));
                    }
                    // A GC update (no access) dirties an older entry; a batch write-back cleans a node.
                    if let Some(other) = c.get(Lpn::new(lpn ^ 3)).filter(|_| rng & 48 == 0) {
                        c.update(other, None);
                    }
                    if rng & 12 == 0 {
                        c.clean_tp(Tpn::new(lpn / 8), |_, _| {});
                    }
                }
                None => {
                    let tp = lpn / 8;
                    let need = 6 + if c.node_len(Tpn::new(tp)) == 0 { 6 } else { 0 };
                    while c.free_bytes() < need {
                        let v = c.coldest_except(Tpn::new(tp)).unwrap_or(Tpn::new(tp));
                        // The coldest node by a brute-force scan agrees with the heap.
                        let mean = |t: u32| {
                            c.node_entries(Tpn::new(t)).map(|s| c.entry(s).last).sum::<u64>() as f64
                                / c.node_len(Tpn::new(t)) as f64
                        };
                        let best = (0..8)
                            .filter(|&t| t != tp && c.node_len(Tpn::new(t)) > 0)
                            .map(mean)
                            .fold(f64::MAX, f64::min);
                        if v != Tpn::new(tp) {
                            assert_eq!(mean(v.get()), best);
                        }
                        let slot = c.victim_in(v, rng & 2 == 0).unwrap();
                        c.remove(slot);
                    }
                    c.insert(Lpn::new(lpn), Some(Ppn::new(0)), now);
                }
            }
            c.check().unwrap();
        }
        c.clear();
        assert!(c.is_empty() && c.get(Lpn::new(3)).is_none() && c.nodes() == 0);
        c.check().unwrap();
    }

    #[test]
    fn key_products_in_64_bits_agree_with_128_bits() {
        let mut rng = 11u64;
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            rng
        };
        for step in 0..100_000 {
            // Numerators around the 2^32 boundary, where the 64-bit path stops.
            let (a, b) = (next() >> (28 + step % 8), next() >> (28 + step % 5));
            let (da, db) = ((next() >> 32) as u32 | 1, (next() >> 32) as u32 | 1);
            let wide = (a as u128 * db as u128, b as u128 * da as u128);
            let expected = (wide.0 != wide.1).then_some(wide.0 < wide.1);
            assert_eq!(Key { num: a, den: da }.less(Key { num: b, den: db }), expected, "{a}/{da} vs {b}/{db}");
        }
    }

    /// Pushes, removals, lowered keys and a re-keyed top on a heap of a few hundred nodes (four
    /// levels below the root), its top checked against a linear scan in the same order.
    #[test]
    fn node_heap_top_is_the_least_node_through_every_change() {
        const TPS: u32 = 300;
        let mut heap = NodeHeap::new(TPS as usize);
        let mut keys: Vec<Option<Key>> = vec![None; TPS as usize];
        let mut rng = 5u64;
        let mut next = |n: u64| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) % n
        };
        for _ in 0..20_000 {
            let tp = next(TPS as u64) as u32;
            let key = Key { num: next(1000), den: next(4) as u32 + 1 };
            match keys[tp as usize] {
                None => {
                    heap.push(tp, key);
                    keys[tp as usize] = Some(key);
                }
                Some(old) if key.less(old) == Some(true) => {
                    heap.lower(tp, key);
                    keys[tp as usize] = Some(key);
                }
                Some(_) if next(3) == 0 => {
                    heap.remove(tp);
                    keys[tp as usize] = None;
                }
                Some(_) => {
                    let top = heap.top().unwrap();
                    let raised = Key { num: key.num + 1000, den: 1 };
                    heap.rekey_top(raised);
                    keys[top as usize] = Some(raised);
                }
            }
            heap.check().unwrap();
            let least = (0..TPS)
                .filter_map(|t| keys[t as usize].map(|k| Ranked::new(t, k)))
                .reduce(|a, b| if b.before(a) { b } else { a })
                .map(|r| r.tp);
            assert_eq!(heap.top(), least);
            assert_eq!(heap.len, keys.iter().flatten().count());
        }
    }
}
