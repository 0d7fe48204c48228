//! The clusters of CPM and K-CPM: which physical blocks each cluster holds (its CBMT row), how
//! far each block is written, the free and invalid pages of each cluster (CIC), and K-CPM's
//! associations: the owners whose pages a cluster adopted, with their counts (CAMT), and the
//! clusters a cluster's pages are distributed over (CDMT).
//!
//! Every block a cluster holds carries the cluster's number in its pages' spare areas (the saved
//! cluster, written with each page), which recovery reads back.

use super::tree::{block_key, BlockTrees, MaxTree};
use crate::flash::{Divisor, Lpn, Pbn, PbnSlot, Ppn};

/// No cluster holds the block.
const NO_CLUSTER: u32 = u32::MAX;

/// What the clusters keep of one physical block, together so that a write or an invalidation
/// touches one cache line.
#[derive(Clone, Copy)]
#[repr(align(16))]
struct BlockEntry {
    /// The cluster holding it (`NO_CLUSTER`: none).
    holder: u32,
    /// The next offset to write (pages per block once full, or sealed because a page of it is
    /// corrupt).
    fill: u32,
    /// Its invalid (and corrupt) pages while a cluster holds it.
    invalid: u32,
    /// When its cluster got it (a row lists its blocks in this order), below `PENDING`; with
    /// `PENDING` set while its victim key waits in its cluster's pending list.
    order: u32,
}

/// The bit of `BlockEntry::order` that marks a block whose victim key is not yet in its tree.
const PENDING: u32 = 1 << 31;

const UNHELD: BlockEntry = BlockEntry { holder: NO_CLUSTER, fill: 0, invalid: 0, order: 0 };

pub(super) struct Clusters {
    logical_pages: u32,
    /// LPNs per cluster (`S_C` logical blocks; a shift when a power of two, as in the paper).
    pages: Divisor,
    pub count: u32,
    /// N_Bmax^C.
    pub max_blocks: u32,
    /// The associativity bound K (1: CPM).
    pub k: u32,
    ppb: u32,
    /// Per cluster: its blocks, counts and associations.
    cluster: Vec<Cluster>,
    /// Per block: its cluster, fill, invalid pages and order.
    block: Vec<BlockEntry>,
    /// Per block, the saved cluster its spare areas carry (flash content: survives power loss).
    tag: Vec<u16>,
    next_order: u32,
    pub associations: u32,
    /// Valid adopted pages.
    pub adopted: u64,
    pub total_free: u64,
    pub total_blocks: u32,
    /// Clusters holding a block, and the sum of their N_alpha.
    pub holding: u32,
    pub holding_alpha: u64,
    /// Key CIC + 1 for clusters holding blocks (InterGC's victim cluster).
    by_cic: MaxTree,
    /// Key free pages for clusters below K associations (K-CPM case 4's new DC).
    by_free: MaxTree,
    /// Key room for blocks (N_Bmax - N_B) for clusters below K associations (a new DC for the
    /// block an InterGC frees).
    by_room: MaxTree,
    /// Per cluster, its blocks keyed as IntraGC's victim candidates.
    victims: BlockTrees,
    /// Clusters whose key in the CIC tree is out of date (`Cluster::cic_stale`).
    cic_stale: Vec<u32>,
    /// Clusters whose keys in the free-pages and room trees are out of date (K-CPM).
    space_stale: Vec<u32>,
}

/// What the clusters keep of one cluster, laid out so that a host write touches its first cache
/// line only (K-CPM's associations, in the second, also that one): eight arrays indexed by
/// cluster cost a cold line each on random writes.
#[derive(Clone, Default)]
#[repr(C, align(64))]
struct Cluster {
    /// The block it writes next (C13: at most one partly written block is written at a time).
    active: PbnSlot,
    /// The active block's fill, mirrored here so that the lookahead finds the page a write will
    /// take from this line alone (the block's entry is another cold line).
    active_fill: u32,
    /// Free pages in its blocks.
    free: u32,
    /// CIC: invalid (and corrupt) pages in its blocks.
    cic: u32,
    /// Its key in the CIC tree is out of date (it is in `Clusters::cic_stale`).
    cic_stale: bool,
    /// Its keys in the free-pages and room trees are out of date (in `Clusters::space_stale`).
    space_stale: bool,
    /// Its blocks, in the order it got them (its CBMT row).
    row: Vec<Pbn>,
    assoc: Associations,
}

/// K-CPM's tables of a cluster, on a cache line of their own (CPM reads them only at GC).
#[derive(Clone, Default)]
#[repr(C, align(64))]
struct Associations {
    /// CDMT: the clusters holding some of its pages (its distributed clusters).
    cdmt: Vec<u32>,
    /// CAMT: the foreign owners whose pages it holds, and how many.
    camt: Vec<(u32, u32)>,
}

impl Clusters {
    pub fn new(logical_pages: u32, pages: u32, max_blocks: u32, k: u32, ppb: u32, blocks: u32) -> Self {
        let count = logical_pages.div_ceil(pages).max(1);
        let n = count as usize;
        Clusters {
            logical_pages,
            pages: Divisor::new(pages),
            count,
            max_blocks,
            k,
            ppb,
            cluster: vec![Cluster::default(); n],
            block: vec![UNHELD; blocks as usize],
            tag: vec![0; blocks as usize],
            next_order: 0,
            associations: 0,
            adopted: 0,
            total_free: 0,
            total_blocks: 0,
            holding: 0,
            holding_alpha: 0,
            by_cic: MaxTree::new(count),
            by_free: MaxTree::new(count),
            by_room: MaxTree::new(count),
            victims: BlockTrees::new(count, max_blocks, blocks),
            cic_stale: Vec::new(),
            space_stale: Vec::new(),
        }
    }

    /// Forgets everything held in SRAM (the tags are flash content and stay).
    pub fn clear(&mut self) {
        let tag = std::mem::take(&mut self.tag);
        *self =
            Clusters::new(self.logical_pages, self.pages.get(), self.max_blocks, self.k, self.ppb, tag.len() as u32);
        self.tag = tag;
    }

    #[inline]
    pub fn of_lpn(&self, lpn: Lpn) -> u32 {
        self.pages.quotient(lpn.get())
    }

    /// The LPNs cluster `c` owns.
    pub fn lpns(&self, c: u32) -> std::ops::Range<u32> {
        let first = c * self.pages.get();
        first..first.saturating_add(self.pages.get()).min(self.logical_pages)
    }
    #[inline]
    pub fn holder(&self, pbn: Pbn) -> Option<u32> {
        let holder = self.block[pbn.index()].holder;
        (holder != NO_CLUSTER).then_some(holder)
    }
    /// The saved cluster a block's spare areas carry.
    pub fn tag(&self, pbn: Pbn) -> u32 {
        self.tag[pbn.index()] as u32
    }
    pub fn blocks(&self, c: u32) -> &[Pbn] {
        &self.cluster[c as usize].row
    }
    pub fn n_blocks(&self, c: u32) -> u32 {
        self.cluster[c as usize].row.len() as u32
    }
    pub fn free(&self, c: u32) -> u32 {
        self.cluster[c as usize].free
    }
    #[cfg(test)]
    pub fn cic(&self, c: u32) -> u32 {
        self.cluster[c as usize].cic
    }
    #[cfg(test)]
    pub fn fill(&self, pbn: Pbn) -> u32 {
        self.block[pbn.index()].fill
    }
    pub fn is_full(&self, pbn: Pbn) -> bool {
        self.block[pbn.index()].fill >= self.ppb
    }
    /// N_alpha: the cluster itself and the foreign owners whose pages it holds.
    pub fn alpha(&self, c: u32) -> u32 {
        1 + self.cluster[c as usize].assoc.camt.len() as u32
    }
    /// The foreign owners whose pages `c` holds, with their counts.
    pub fn associated(&self, c: u32) -> &[(u32, u32)] {
        &self.cluster[c as usize].assoc.camt
    }
    /// The distributed clusters of `c` (other than itself), in the order they were added.
    pub fn distributed(&self, c: u32) -> &[u32] {
        &self.cluster[c as usize].assoc.cdmt
    }
    /// The adopted pages of `owner` that `saved` holds.
    pub fn adopted_at(&self, owner: u32, saved: u32) -> Option<u32> {
        self.cluster[saved as usize].assoc.camt.iter().find(|&&(o, _)| o == owner).map(|&(_, n)| n)
    }

    /// Hands `pbn` (erased, or written up to `fill` after a recovery) to cluster `c`.
    pub fn add_block(&mut self, c: u32, pbn: Pbn, fill: u32) {
        debug_assert!(self.holder(pbn).is_none());
        if self.cluster[c as usize].row.is_empty() {
            self.holding += 1;
            self.holding_alpha += self.alpha(c) as u64;
        }
        self.cluster[c as usize].row.push(pbn);
        if self.next_order == PENDING {
            self.renumber();
        }
        self.block[pbn.index()] = BlockEntry { holder: c, fill, invalid: 0, order: self.next_order };
        self.next_order += 1;
        self.tag[pbn.index()] = c as u16;
        self.victims.insert(c, pbn.get(), 0);
        self.rekey_block(pbn);
        let room = self.ppb - fill;
        self.cluster[c as usize].free += room;
        self.total_free += room as u64;
        self.total_blocks += 1;
        if self.active(c).is_none() && room > 0 {
            self.make_active(c, Some(pbn));
        }
        self.rekey(c);
    }

    /// Takes `pbn` away from its cluster (before its erase); `written` of its pages were programmed.
    pub fn remove_block(&mut self, pbn: Pbn, written: u32) -> u32 {
        let c = self.holder(pbn).expect("the block belongs to a cluster");
        // No pending entry may outlive its block's place in the cluster.
        self.settle(c);
        self.block[pbn.index()].holder = NO_CLUSTER;
        let row = &mut self.cluster[c as usize].row;
        let at = row.iter().position(|&b| b == pbn).expect("a cluster's block is in its row");
        row.remove(at);
        self.victims.remove(c, pbn.get());
        let room = self.ppb - self.block[pbn.index()].fill;
        self.cluster[c as usize].free -= room;
        self.total_free -= room as u64;
        self.cluster[c as usize].cic -= written;
        self.total_blocks -= 1;
        if self.cluster[c as usize].row.is_empty() {
            self.holding -= 1;
            self.holding_alpha -= self.alpha(c) as u64;
        }
        if self.active(c) == Some(pbn) {
            self.find_active(c);
        }
        self.rekey(c);
        c
    }

    /// Marks a block with a corrupt page as full: nothing is written after it.
    pub fn seal(&mut self, pbn: Pbn) {
        let c = self.holder(pbn).expect("a sealed block belongs to a cluster");
        let room = self.ppb - self.block[pbn.index()].fill;
        self.block[pbn.index()].fill = self.ppb;
        self.cluster[c as usize].free -= room;
        self.total_free -= room as u64;
        self.rekey_block(pbn);
        if self.active(c) == Some(pbn) {
            self.find_active(c);
        }
        self.rekey(c);
    }

    /// Makes `pbn` the block `c` writes next.
    pub fn set_active(&mut self, c: u32, pbn: Pbn) {
        debug_assert_eq!(self.holder(pbn), Some(c));
        if !self.is_full(pbn) {
            self.make_active(c, Some(pbn));
        }
    }

    /// The block cluster `c` writes next, if it has free pages.
    #[inline]
    fn active(&self, c: u32) -> Option<Pbn> {
        self.cluster[c as usize].active.get()
    }

    /// Makes the first block of `c`'s row with free pages the one it writes next.
    fn find_active(&mut self, c: u32) {
        let block = &self.block;
        let found = self.cluster[c as usize].row.iter().copied().find(|b| block[b.index()].fill < self.ppb);
        self.make_active(c, found);
    }

    fn make_active(&mut self, c: u32, pbn: Option<Pbn>) {
        let cluster = &mut self.cluster[c as usize];
        cluster.active = pbn.into();
        cluster.active_fill = pbn.map_or(0, |b| self.block[b.index()].fill);
    }

    /// Brings the state of cluster `c` (K-CPM: with its associations) toward the CPU cache (a
    /// hint; reads nothing).
    #[inline]
    pub fn prefetch_cluster(&self, c: u32) {
        let Some(cluster) = self.cluster.get(c as usize) else { return };
        crate::mem::prefetch(cluster);
        if self.k > 1 {
            crate::mem::prefetch(&cluster.assoc.camt);
        }
    }

    /// Brings what an invalidation in block `pbn` updates toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch_block(&self, pbn: Pbn) {
        crate::mem::prefetch(&self.block[pbn.index()]);
    }

    /// The page a write to cluster `c` would take next from its active block, if it has one (from
    /// the cluster's first line only); brings the block's entry toward the CPU cache.
    #[inline]
    pub fn next_page(&self, c: u32, g: &crate::flash::Geometry) -> Option<Ppn> {
        let cluster = &self.cluster[c as usize];
        let pbn = cluster.active.get()?;
        crate::mem::prefetch(&self.block[pbn.index()]);
        Some(g.page_at(pbn, cluster.active_fill.min(self.ppb - 1)))
    }

    /// Brings the state of cluster `c`'s distributed clusters toward the CPU cache, where K-CPM
    /// writes when `c` has no free page (a hint).
    #[inline]
    pub fn prefetch_distributed(&self, c: u32) {
        for &d in &self.cluster[c as usize].assoc.cdmt {
            crate::mem::prefetch(&self.cluster[d as usize]);
        }
    }

    /// Takes the next free page of `c`, if it has one.
    #[inline]
    pub fn take_page(&mut self, c: u32, g: &crate::flash::Geometry) -> Option<Ppn> {
        let pbn = self.active(c)?;
        Some(self.take_page_in(c, pbn, g))
    }

    /// Takes the next free page of block `pbn` (which has one) of cluster `c` (the caller knows
    /// it: no lookup of the block's holder).
    #[inline]
    pub fn take_page_in(&mut self, c: u32, pbn: Pbn, g: &crate::flash::Geometry) -> Ppn {
        debug_assert_eq!(self.holder(pbn), Some(c), "pages are taken from a cluster's block");
        let entry = &mut self.block[pbn.index()];
        let offset = entry.fill;
        debug_assert!(offset < self.ppb);
        entry.fill = offset + 1;
        let cluster = &mut self.cluster[c as usize];
        cluster.free -= 1;
        if cluster.active.get() == Some(pbn) {
            cluster.active_fill = offset + 1;
        }
        self.total_free -= 1;
        if offset + 1 == self.ppb {
            self.rekey_block(pbn);
            if self.active(c) == Some(pbn) {
                self.find_active(c);
            }
        }
        self.rekey_space(c);
        g.page_at(pbn, offset)
    }

    /// A page of block `pbn` became invalid; returns the cluster holding the block.
    #[inline]
    pub fn invalidated(&mut self, pbn: Pbn) -> u32 {
        self.add_invalid(pbn, 1)
    }

    /// Counts `pages` more invalid pages in block `pbn` (a recovery counts a block's at once);
    /// returns the cluster holding the block.
    pub fn add_invalid(&mut self, pbn: Pbn, pages: u32) -> u32 {
        let c = self.holder(pbn).expect("an invalidated page is in a cluster's block");
        self.block[pbn.index()].invalid += pages;
        self.cluster[c as usize].cic += pages;
        self.rekey_cic(c);
        self.rekey_block(pbn);
        c
    }

    /// IntraGC's candidate in cluster `c`: its full block with the most invalid pages (ties: the
    /// first in its row), with those pages.
    pub fn most_invalid_block(&mut self, c: u32) -> Option<(Pbn, u32)> {
        self.settle(c);
        self.victims.top(c).map(|pbn| (Pbn::new(pbn), self.block[pbn as usize].invalid))
    }

    /// Makes `dc` a distributed cluster of `owner` (CAMT and CDMT entries, no page yet).
    pub fn associate(&mut self, owner: u32, dc: u32) {
        debug_assert!(owner != dc && self.adopted_at(owner, dc).is_none());
        if !self.cluster[dc as usize].row.is_empty() {
            self.holding_alpha += 1;
        }
        self.cluster[dc as usize].assoc.camt.push((owner, 0));
        self.cluster[owner as usize].assoc.cdmt.push(dc);
        self.associations += 1;
        self.rekey(dc);
    }

    /// One more valid page of `owner` in `saved` (an association that exists).
    pub fn adopt(&mut self, owner: u32, saved: u32) {
        let entry = self.cluster[saved as usize].assoc.camt.iter_mut().find(|(o, _)| *o == owner).expect("associated");
        entry.1 += 1;
        self.adopted += 1;
    }

    /// One valid page of `owner` fewer in `saved`; the association ends with its last page.
    pub fn unadopt(&mut self, owner: u32, saved: u32) {
        let list = &mut self.cluster[saved as usize].assoc.camt;
        let at = list.iter().position(|&(o, _)| o == owner).expect("an adopted page's owner is associated");
        list[at].1 -= 1;
        self.adopted -= 1;
        if list[at].1 == 0 {
            list.remove(at);
            self.cluster[owner as usize].assoc.cdmt.retain(|&d| d != saved);
            self.associations -= 1;
            if !self.cluster[saved as usize].row.is_empty() {
                self.holding_alpha -= 1;
            }
            self.rekey(saved);
        }
    }

    /// Cluster `c`'s keys in the cluster trees changed: it is listed (once per tree kind) until
    /// a tree takes its key, before that tree is next read (`settle_cic`, `settle_space`). Its
    /// CIC changes on every invalidation and its free pages on every write, but the trees are
    /// read only at GC (the CIC tree at each, K-CPM's space trees when it looks for a new
    /// distributed cluster): a GC moving a victim's pages, or writes between two GCs to one
    /// cluster, cost one update.
    #[inline]
    fn rekey(&mut self, c: u32) {
        self.rekey_cic(c);
        self.rekey_space(c);
    }

    #[inline]
    fn rekey_cic(&mut self, c: u32) {
        let cluster = &mut self.cluster[c as usize];
        if !cluster.cic_stale {
            cluster.cic_stale = true;
            self.cic_stale.push(c);
        }
    }

    #[inline]
    fn rekey_space(&mut self, c: u32) {
        if self.k == 1 {
            return; // every cluster has N_alpha = 1 = K: none can take another's pages
        }
        let cluster = &mut self.cluster[c as usize];
        if !cluster.space_stale {
            cluster.space_stale = true;
            self.space_stale.push(c);
        }
    }

    /// The key of cluster `c` in the CIC tree.
    fn cic_key(&self, c: u32) -> u32 {
        if self.cluster[c as usize].row.is_empty() {
            0
        } else {
            self.cluster[c as usize].cic + 1
        }
    }

    /// Puts the CIC keys of the listed clusters into the CIC tree.
    fn settle_cic(&mut self) {
        while let Some(c) = self.cic_stale.pop() {
            self.cluster[c as usize].cic_stale = false;
            self.by_cic.set(c, self.cic_key(c));
        }
    }

    /// Puts the free pages and room of the listed clusters into K-CPM's space trees.
    fn settle_space(&mut self) {
        while let Some(c) = self.space_stale.pop() {
            self.cluster[c as usize].space_stale = false;
            let open = self.alpha(c) < self.k;
            let room = self.max_blocks.saturating_sub(self.n_blocks(c));
            self.by_free.set(c, if open { self.cluster[c as usize].free } else { 0 });
            self.by_room.set(c, if open { room } else { 0 });
        }
    }

    /// Block `pbn`'s victim key changed: it goes to its cluster's pending list (once), and its
    /// tree learns the key when the cluster's victim is asked for. Keys change on every
    /// invalidation and are read only at GC, so a block invalidated many times between two GCs
    /// of its cluster costs one tree update, and an invalidation touches only the block's entry.
    #[inline]
    fn rekey_block(&mut self, pbn: Pbn) {
        let entry = &mut self.block[pbn.index()];
        debug_assert_ne!(entry.holder, NO_CLUSTER, "a keyed block is in a cluster");
        if entry.order & PENDING == 0 {
            entry.order |= PENDING;
            self.victims.push_pending(entry.holder, pbn.get());
        }
    }

    /// Puts the keys of cluster `c`'s pending blocks into its tree.
    fn settle(&mut self, c: u32) {
        while let Some(pbn) = self.victims.pop_pending(c) {
            let entry = &mut self.block[pbn as usize];
            entry.order &= !PENDING;
            let key = block_key(entry.fill >= self.ppb, entry.invalid, entry.order);
            self.victims.set(c, pbn, key);
        }
    }

    /// Numbers the held blocks' orders afresh from 0, keeping their order (once every 2^31
    /// blocks handed out).
    fn renumber(&mut self) {
        let mut held: Vec<u32> =
            (0..self.block.len() as u32).filter(|&b| self.block[b as usize].holder != NO_CLUSTER).collect();
        held.sort_unstable_by_key(|&b| self.block[b as usize].order & !PENDING);
        for (order, &b) in held.iter().enumerate() {
            let entry = &mut self.block[b as usize];
            entry.order = order as u32 | (entry.order & PENDING);
            self.rekey_block(Pbn::new(b));
        }
        self.next_order = held.len() as u32;
    }

    /// The cluster with the most invalid pages (ties: the lowest number) outside `excluded`,
    /// among those holding blocks; `excluded` grows with each candidate turned down by `accept`.
    pub fn victim_cluster(
        &mut self,
        excluded: &mut Vec<u32>,
        mut accept: impl FnMut(&Self, u32) -> bool,
    ) -> Option<u32> {
        self.settle_cic();
        loop {
            let c = self.by_cic.top_excluding(excluded)?;
            if accept(self, c) {
                return Some(c);
            }
            excluded.push(c);
        }
    }

    /// The cluster below K associations with the most free pages (ties: the lowest number),
    /// outside `excluded`.
    pub fn most_free(&mut self, excluded: &[u32]) -> Option<u32> {
        self.settle_space();
        self.by_free.top_excluding(excluded)
    }

    /// The cluster below K associations with the most room for blocks, outside `excluded`.
    pub fn most_room(&mut self, excluded: &[u32]) -> Option<u32> {
        self.settle_space();
        self.by_room.top_excluding(excluded)
    }

    pub fn memory_bytes(&self) -> usize {
        let n = self.count as usize;
        let blocks = self.block.len();
        blocks * (std::mem::size_of::<BlockEntry>() + 2)
            + n * std::mem::size_of::<Cluster>()
            + (self.cic_stale.capacity() + self.space_stale.capacity()) * 4
            + self.cluster.iter().map(|r| r.row.capacity() * 4).sum::<usize>()
            + self.by_cic.memory_bytes() * 3
            + self.victims.memory_bytes()
    }

    /// Checks the derived counts and the trees against the rows.
    pub fn check(&self, written: impl Fn(Pbn) -> u32, valid: impl Fn(Pbn) -> u32) -> std::result::Result<(), String> {
        let (mut free_total, mut blocks_total, mut holding, mut alpha) = (0u64, 0u32, 0u32, 0u64);
        for c in 0..self.count {
            let row = &self.cluster[c as usize].row;
            let mut free = 0;
            let mut invalid = 0;
            for &b in row {
                if self.holder(b) != Some(c) || self.tag[b.index()] as u32 != c {
                    return Err(format!("block {b} is in cluster {c}'s row but held by {:?}", self.holder(b)));
                }
                let entry = self.block[b.index()];
                if entry.fill < written(b) {
                    return Err(format!("block {b} of cluster {c} is written beyond its fill"));
                }
                free += self.ppb - entry.fill;
                let block_invalid = written(b) - valid(b);
                invalid += block_invalid;
                let key = block_key(self.is_full(b), block_invalid, entry.order & !PENDING);
                let tree_key = self.victims.key(c, b.get());
                let settled = entry.order & PENDING == 0;
                if entry.invalid != block_invalid || tree_key.is_none() || (settled && tree_key != Some(key)) {
                    return Err(format!(
                        "block {b} of cluster {c}: {block_invalid} invalid pages, but it counts {} (victim key {:?})",
                        entry.invalid,
                        self.victims.key(c, b.get())
                    ));
                }
            }
            if free != self.cluster[c as usize].free || invalid != self.cluster[c as usize].cic {
                return Err(format!(
                    "cluster {c}: {free} free and {invalid} invalid pages in its blocks, but it counts {} and CIC {}",
                    self.cluster[c as usize].free, self.cluster[c as usize].cic
                ));
            }
            match self.active(c) {
                Some(b) if self.holder(b) != Some(c) || self.is_full(b) => {
                    return Err(format!("cluster {c} writes block {b}, which is full or not its own"))
                }
                Some(b) if self.cluster[c as usize].active_fill != self.block[b.index()].fill => {
                    return Err(format!("cluster {c} mirrors its active block {b}'s fill wrongly"))
                }
                None if free > 0 => return Err(format!("cluster {c} has {free} free pages but no block to write")),
                _ => {}
            }
            let cic_key = if row.is_empty() { 0 } else { invalid + 1 };
            if !self.cluster[c as usize].cic_stale && self.by_cic.key(c) != cic_key {
                return Err(format!("cluster {c}: CIC tree key {} for CIC {invalid}", self.by_cic.key(c)));
            }
            for &(owner, n) in &self.cluster[c as usize].assoc.camt {
                if n == 0 || owner == c || !self.cluster[owner as usize].assoc.cdmt.contains(&c) {
                    return Err(format!(
                        "CAMT of cluster {c}: owner {owner} with {n} pages, CDMT {:?}",
                        self.cluster[owner as usize].assoc.cdmt
                    ));
                }
            }
            free_total += free as u64;
            blocks_total += row.len() as u32;
            if !row.is_empty() {
                holding += 1;
                alpha += self.alpha(c) as u64;
            }
        }
        let dcs: usize = self.cluster.iter().map(|c| c.assoc.cdmt.len()).sum();
        if dcs != self.associations as usize || self.cluster.iter().map(|c| c.assoc.camt.len()).sum::<usize>() != dcs {
            return Err(format!("{} associations counted, {dcs} in CDMT", self.associations));
        }
        if (free_total, blocks_total, holding, alpha)
            != (self.total_free, self.total_blocks, self.holding, self.holding_alpha)
        {
            return Err("the clusters' totals disagree with their rows".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_numbered_afresh_keep_the_first_of_equal_blocks_first() {
        let ppb = 4;
        let mut clusters = Clusters::new(64, 16, 8, 1, ppb, 8);
        let mut g = crate::config::Config::preset("mlc8g").unwrap().device.geometry;
        g.pages_per_block = ppb;
        for b in [5, 2] {
            clusters.add_block(0, Pbn::new(b), ppb);
            clusters.invalidated(Pbn::new(b));
        }
        assert_eq!(clusters.most_invalid_block(0), Some((Pbn::new(5), 1)), "equal: the one got first");
        clusters.next_order = PENDING;
        clusters.add_block(0, Pbn::new(7), 0);
        assert_eq!(clusters.next_order, 3, "three blocks held, numbered 0, 1, 2");
        assert_eq!(clusters.most_invalid_block(0), Some((Pbn::new(5), 1)));
        for _ in 0..ppb {
            clusters.take_page(0, &g);
        }
        clusters.add_invalid(Pbn::new(7), 1);
        assert_eq!(clusters.most_invalid_block(0), Some((Pbn::new(5), 1)), "block 7 came last");
        clusters.invalidated(Pbn::new(7));
        assert_eq!(clusters.most_invalid_block(0), Some((Pbn::new(7), 2)));
    }

    #[test]
    fn a_write_reads_one_line_and_the_next_page_comes_from_it() {
        assert_eq!((std::mem::size_of::<Cluster>(), std::mem::offset_of!(Cluster, assoc)), (128, 64));
        let ppb = 4;
        let mut clusters = Clusters::new(64, 16, 8, 1, ppb, 8);
        let mut g = crate::config::Config::preset("mlc8g").unwrap().device.geometry;
        g.pages_per_block = ppb;
        clusters.add_block(0, Pbn::new(3), 2);
        clusters.add_block(0, Pbn::new(6), 0);
        assert_eq!(clusters.next_page(0, &g), Some(g.page_at(Pbn::new(3), 2)), "block 3, written up to 2");
        assert_eq!(clusters.take_page(0, &g), Some(g.page_at(Pbn::new(3), 2)));
        clusters.take_page(0, &g);
        assert_eq!(clusters.next_page(0, &g), Some(g.page_at(Pbn::new(6), 0)), "block 3 is full");
        clusters.seal(Pbn::new(6));
        assert_eq!(clusters.next_page(0, &g), None);
    }
}
