//! SCFTL's cached mapping table (paper 000 §5.1, spec 5.1): a fully associative cache of
//! variable-length entries. A small entry (tag, PPN, consecutive field C) maps the LPNs
//! `tag..=tag + C` to `PPN..=PPN + C`; a large entry (the ablation of Fig 5.15) holds an aligned
//! chunk of a translation page with one PPN per LPN. Entries never overlap and never cross a TP.
//!
//! Lookup is a predecessor search among entry heads: a bitmap over LPNs marks the tags, so the
//! entry covering an LPN is found from at most two 64-bit words (an entry spans at most 2^C LPNs),
//! and the [`TagIndex`] that holds the bits gives a tag's slot. Slots are preallocated; the
//! modified entries of each TP are linked in a list of their own for write-back; the replacement
//! order is the [`Replacement`]'s. Every operation here is O(1) (O(entry length) for a large
//! entry's fill) and allocation-free once the tag index has grown its blocks.

use crate::flash::{Lpn, Ppn, Tpn};
use crate::ftl::common::cache::nru::{Fetch, Nru};
use crate::ftl::common::cache::{Lru, Policy};
use crate::ftl::common::translation::TranslationStore;
use crate::ftl::common::ListSet;

use super::tags::TagIndex;

/// The replacement policies of the ablation in paper 000 §5.3.1.
pub enum Replacement {
    Lru(Lru),
    /// Plain NRU: modifications are not reported, so it orders by A alone.
    Nru(Nru),
    /// D-NRU (Table 5.1).
    DNru(Nru),
}

impl Replacement {
    #[inline]
    fn insert(&mut self, slot: u32, tp: u32, referenced: bool, weight: u32) {
        match self {
            Replacement::Lru(p) => p.insert(slot),
            Replacement::Nru(p) => p.insert_entry(slot, 0, referenced),
            Replacement::DNru(p) => p.insert_weighted(slot, tp, referenced, weight),
        }
    }
    #[inline]
    pub fn touch(&mut self, slot: u32) {
        match self {
            Replacement::Lru(p) => p.touch(slot),
            Replacement::Nru(p) | Replacement::DNru(p) => p.touch(slot),
        }
    }
    #[inline]
    fn remove(&mut self, slot: u32) {
        match self {
            Replacement::Lru(p) => p.remove(slot),
            Replacement::Nru(p) | Replacement::DNru(p) => p.remove(slot),
        }
    }
    /// `remove` then an unmodified `insert` of the same slot.
    #[inline]
    fn refill(&mut self, slot: u32, tp: u32, referenced: bool) {
        match self {
            Replacement::Lru(p) => {
                p.remove(slot);
                p.insert(slot);
            }
            Replacement::Nru(p) => p.refill(slot, 0, referenced),
            Replacement::DNru(p) => p.refill(slot, tp, referenced),
        }
    }
    #[inline]
    fn set_modified(&mut self, slot: u32, weight: u32) {
        if let Replacement::DNru(p) = self {
            p.set_modified(slot, weight);
        }
    }
    /// The victim for a fetch; only D-NRU tells the kinds apart (and may find none for a spatial one).
    #[inline]
    pub fn victim(&self, fetch: Fetch) -> Option<u32> {
        match self {
            Replacement::Lru(p) => p.victim(),
            Replacement::Nru(p) => p.select(Fetch::Normal),
            Replacement::DNru(p) => p.select(fetch),
        }
    }
    /// The A bit (LRU keeps none: every entry counts as referenced).
    #[inline]
    pub fn is_referenced(&self, slot: u32) -> bool {
        match self {
            Replacement::Lru(_) => true,
            Replacement::Nru(p) | Replacement::DNru(p) => p.is_referenced(slot),
        }
    }
    fn clear(&mut self) {
        match self {
            Replacement::Lru(p) => p.clear(),
            Replacement::Nru(p) | Replacement::DNru(p) => p.clear(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Small entries of up to `max_len` consecutive mappings.
    Small { max_len: u32 },
    /// Large entries of `chunk` mappings, aligned within their TP.
    Large { chunk: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    tag: Lpn,
    /// Small: the PPN of the tag (`None`: a one-LPN entry of an unmapped LPN). Large: unused.
    base: Option<Ppn>,
    len: u32,
    /// The TP of the entry (kept to spare a division per eviction and write).
    tp: u32,
    dirty: bool,
    /// The access that brought the entry in.
    stamp: u32,
}

/// What a free slot holds.
const FREE_ENTRY: Entry = Entry { tag: Lpn::new(0), base: None, len: 0, tp: 0, dirty: false, stamp: 0 };

pub struct Cmt {
    layout: Layout,
    capacity: u32,
    entries: Vec<Entry>,
    /// Large layout: `chunk` PPNs per slot.
    values: Vec<Option<Ppn>>,
    /// The tags of cached entries and their slots.
    tags: TagIndex,
    /// List `tp` holds the modified entries of TP `tp`.
    dirty_lists: ListSet,
    free: Vec<u32>,
    entries_per_tp: u32,
    pub policy: Replacement,
}

impl Cmt {
    pub fn new(layout: Layout, capacity: u32, policy: Replacement, store: &TranslationStore) -> Self {
        let logical = store.logical_pages() as usize;
        let chunk = match layout {
            Layout::Small { .. } => 0,
            Layout::Large { chunk } => chunk as usize,
        };
        Cmt {
            layout,
            capacity,
            entries: vec![FREE_ENTRY; capacity as usize],
            values: vec![None; capacity as usize * chunk],
            tags: TagIndex::new(logical),
            dirty_lists: ListSet::new(capacity as usize, store.tp_count() as usize),
            free: (0..capacity).rev().collect(),
            entries_per_tp: store.entries_per_tp(),
            policy,
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
    pub fn free_slots(&self) -> u32 {
        self.free.len() as u32
    }
    #[inline]
    pub fn is_full(&self) -> bool {
        self.free.is_empty()
    }
    /// Longest run of mappings an entry holds.
    #[inline]
    pub fn max_len(&self) -> u32 {
        match self.layout {
            Layout::Small { max_len } => max_len,
            Layout::Large { chunk } => chunk,
        }
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }

    #[inline]
    pub fn tag(&self, slot: u32) -> Lpn {
        self.entries[slot as usize].tag
    }
    #[inline]
    pub fn entry_len(&self, slot: u32) -> u32 {
        self.entries[slot as usize].len
    }
    /// One past the entry's last LPN.
    #[inline]
    pub fn end(&self, slot: u32) -> Lpn {
        let e = &self.entries[slot as usize];
        e.tag.offset(e.len)
    }
    #[inline]
    pub fn is_dirty(&self, slot: u32) -> bool {
        self.entries[slot as usize].dirty
    }
    #[inline]
    pub fn stamp(&self, slot: u32) -> u32 {
        self.entries[slot as usize].stamp
    }
    #[inline]
    pub fn tp(&self, slot: u32) -> Tpn {
        Tpn::new(self.entries[slot as usize].tp)
    }

    /// The PPN an entry holds for one of its LPNs.
    #[inline]
    pub fn ppn(&self, slot: u32, lpn: Lpn) -> Option<Ppn> {
        let e = &self.entries[slot as usize];
        let offset = lpn.since(e.tag);
        match self.layout {
            Layout::Small { .. } => e.base.map(|base| base.offset(offset)),
            Layout::Large { chunk } => self.values[(slot * chunk + offset) as usize],
        }
    }

    /// The (LPN, PPN) pairs an entry maps.
    pub fn mappings(&self, slot: u32) -> impl Iterator<Item = (Lpn, Option<Ppn>)> + '_ {
        let e = self.entries[slot as usize];
        Lpn::range(e.tag.get(), e.tag.get() + e.len).map(move |lpn| (lpn, self.ppn(slot, lpn)))
    }

    #[inline]
    pub fn at_head(&self, lpn: Lpn) -> Option<u32> {
        self.tags.at_head(lpn)
    }

    #[inline]
    pub fn is_head(&self, lpn: Lpn) -> bool {
        self.tags.is_head(lpn)
    }

    /// The first entry head after `lpn` and before `limit`, or `limit`.
    #[inline]
    pub fn next_head_after(&self, lpn: Lpn, limit: Lpn) -> Lpn {
        self.tags.next_head_after(lpn, limit)
    }

    /// Brings the head bits and block numbers that finding `lpn` reads toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        for l in [lpn, lpn.saturating_back(self.max_len() - 1)] {
            self.tags.prefetch(l);
        }
    }

    /// The first LPN of the large-layout chunk holding `lpn`.
    #[inline]
    pub fn chunk_start(&self, lpn: Lpn, chunk: u32) -> Lpn {
        let tp_start = lpn.back(lpn.get() % self.entries_per_tp);
        tp_start.offset(lpn.since(tp_start) / chunk * chunk)
    }

    /// The slot of the entry covering `lpn`.
    #[inline]
    pub fn find(&self, lpn: Lpn) -> Option<u32> {
        match self.layout {
            Layout::Small { max_len } => {
                let head = self.tags.head_at_or_before(lpn, lpn.saturating_back(max_len - 1))?;
                let slot = self.tags.slot(head);
                (lpn < self.end(slot)).then_some(slot)
            }
            Layout::Large { chunk } => {
                let tag = self.chunk_start(lpn, chunk);
                self.tags.at_head(tag)
            }
        }
    }

    /// Small layout: the slots of the entries covering `lpn` and `lpn - 1`, found with one search
    /// unless an entry starts at `lpn`.
    #[inline]
    pub fn find_with_left(&self, lpn: Lpn) -> (Option<u32>, Option<u32>) {
        let Some(left) = lpn.checked_back(1) else { return (self.find(lpn), None) };
        let Some(head) = self.tags.head_at_or_before(lpn, left.saturating_back(self.max_len() - 1)) else {
            return (None, None);
        };
        let slot = self.tags.slot(head);
        if head == lpn {
            return (Some(slot), self.find(left));
        }
        let end = self.end(slot);
        ((lpn < end).then_some(slot), (left < end).then_some(slot))
    }

    /// The lowest LPN a new run ending at the uncached `lpn` may start at: the end of the
    /// nearest entry below it, or `lpn + 1 - max_len`, whichever is higher.
    #[inline]
    pub fn free_below(&self, lpn: Lpn) -> Lpn {
        let max_len = self.max_len();
        let lowest = lpn.offset(1).saturating_back(max_len);
        // An entry starting below `lowest - max_len + 1` ends before `lowest`.
        match self.tags.head_at_or_before(lpn, lowest.saturating_back(max_len - 1)) {
            Some(head) => self.end(self.tags.slot(head)).max(lowest),
            None => lowest,
        }
    }

    /// Fills a free slot (the caller made room) for `tag`, in TP `tp`. A large entry's PPNs come
    /// from `ppn_of`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn insert(
        &mut self,
        tag: Lpn,
        tp: Tpn,
        len: u32,
        ppn_of: impl Fn(Lpn) -> Option<Ppn>,
        dirty: bool,
        referenced: bool,
        stamp: u32,
    ) -> u32 {
        debug_assert_eq!(tp.get(), tag.get() / self.entries_per_tp);
        let tp = tp.get();
        let slot = self.free.pop().expect("insert into a full CMT");
        let base = ppn_of(tag);
        if let Layout::Large { chunk } = self.layout {
            let first = (slot * chunk) as usize;
            for (i, v) in self.values[first..first + len as usize].iter_mut().enumerate() {
                *v = ppn_of(tag.offset(i as u32));
            }
        }
        self.entries[slot as usize] = Entry { tag, base, len, tp, dirty, stamp };
        self.tags.set(tag, slot);
        self.policy.insert(slot, tp, referenced, if dirty { len } else { 0 });
        if dirty {
            self.dirty_lists.push_front(tp, slot);
        }
        slot
    }

    /// Evicts the clean small entry in `slot` and fills the slot with a clean entry for `tag` in
    /// TP `tp`, whose length and first PPN `run` measures once the old entry is gone: an eviction
    /// and an insert in one, the slot staying occupied. Returns the new entry's length.
    #[inline]
    pub fn refill(
        &mut self,
        slot: u32,
        tag: Lpn,
        tp: Tpn,
        referenced: bool,
        stamp: u32,
        run: impl FnOnce(&Cmt) -> (u32, Option<Ppn>),
    ) -> u32 {
        debug_assert_eq!(tp.get(), tag.get() / self.entries_per_tp);
        let len = self.replace(slot, tag, tp, stamp, run);
        self.policy.refill(slot, tp.get(), referenced);
        len
    }

    /// Puts the run starting at `tag` (measured by `run`) in the clean `slot` in place of its
    /// entry; the replacement policy is the caller's. Returns the run's length.
    #[inline(always)]
    fn replace(
        &mut self,
        slot: u32,
        tag: Lpn,
        tp: Tpn,
        stamp: u32,
        run: impl FnOnce(&Cmt) -> (u32, Option<Ppn>),
    ) -> u32 {
        let old = self.entries[slot as usize];
        debug_assert!(!old.dirty && matches!(self.layout, Layout::Small { .. }));
        self.tags.clear(old.tag);
        let (len, base) = run(self);
        self.entries[slot as usize] = Entry { tag, base, len, tp: tp.get(), dirty: false, stamp };
        self.tags.set(tag, slot);
        len
    }

    /// D-NRU's spatial fetch of the runs in `from..end` (TP `tp`) not cached yet, while its
    /// victims are clean entries without A: each run takes the next victim's slot as
    /// [`Cmt::refill`] would (`run` measures it from its first LPN), and D-NRU's order is settled
    /// once ([`Nru::sweep_start`]). `None` if there is no such victim (or the policy is not
    /// D-NRU); else the spatial fetch is over: it reached `end` or found its next victim among
    /// this access's entries (`stamp`). Returns how many entries it evicted.
    #[inline]
    pub fn sweep(
        &mut self,
        mut from: Lpn,
        end: Lpn,
        tp: Tpn,
        stamp: u32,
        run: impl Fn(&Cmt, Lpn) -> (u32, Option<Ppn>),
    ) -> Option<u32> {
        let Replacement::DNru(nru) = &self.policy else { return None };
        let mut next = Some(nru.sweep_start()?);
        let (mut last, mut evicted) = (None, 0);
        while from < end {
            // `from` follows a run or an entry, so only an entry starting there can cover it.
            if let Some(slot) = self.tags.at_head(from) {
                from = self.end(slot);
                continue;
            }
            // No victim left: the next is the first of this sweep.
            let Some(victim) = next else { break };
            if self.entries[victim as usize].stamp == stamp {
                break;
            }
            let len = self.replace(victim, from, tp, stamp, |cmt| run(cmt, from));
            next = self.dnru().sweep_refill(victim, tp.get());
            (last, evicted) = (Some(victim), evicted + 1);
            from = from.offset(len);
        }
        if let Some(last) = last {
            self.dnru().sweep_end(last);
        }
        Some(evicted)
    }

    #[inline]
    fn dnru(&mut self) -> &mut Nru {
        match &mut self.policy {
            Replacement::DNru(p) => p,
            _ => unreachable!("only D-NRU sweeps"),
        }
    }

    /// Empties a slot (an eviction, or a single entry merged into its neighbour).
    #[inline]
    pub fn remove(&mut self, slot: u32) {
        let Entry { tag, dirty, .. } = self.entries[slot as usize];
        self.tags.clear(tag);
        if dirty {
            self.dirty_lists.remove(slot);
        }
        self.policy.remove(slot);
        self.free.push(slot);
    }

    /// Marks an entry modified (its length is its weight for D-NRU's modified counter).
    #[inline]
    pub fn mark_dirty(&mut self, slot: u32) {
        let e = &mut self.entries[slot as usize];
        if !e.dirty {
            e.dirty = true;
            self.dirty_lists.push_front(e.tp, slot);
        }
        self.policy.set_modified(slot, self.entries[slot as usize].len);
    }

    /// Modified entries of a TP.
    #[inline]
    pub fn dirty_count(&self, tp: Tpn) -> u32 {
        self.dirty_lists.len(tp.get())
    }

    /// Marks every modified entry of a TP clean, handing each of their mappings to `f`.
    pub fn clean_tp(&mut self, tp: Tpn, mut f: impl FnMut(Lpn, Option<Ppn>)) {
        let tp = tp.get();
        while let Some(slot) = self.dirty_lists.back(tp) {
            for (lpn, ppn) in self.mappings(slot) {
                f(lpn, ppn);
            }
            self.entries[slot as usize].dirty = false;
            self.dirty_lists.remove(slot);
            if let Replacement::DNru(p) = &mut self.policy {
                p.clean_one(slot);
            }
        }
        if let Replacement::DNru(p) = &mut self.policy {
            p.finish_cleaning(tp);
        }
    }

    /// Case (a): a single-mapping small entry gets a new PPN.
    #[inline]
    pub fn set_single(&mut self, slot: u32, ppn: Option<Ppn>) {
        debug_assert_eq!(self.entries[slot as usize].len, 1);
        self.entries[slot as usize].base = ppn;
    }

    /// A large entry gets a new PPN for one of its LPNs.
    #[inline]
    pub fn set_value(&mut self, slot: u32, lpn: Lpn, ppn: Option<Ppn>) {
        let Layout::Large { chunk } = self.layout else { unreachable!("set_value on a small entry") };
        let offset = lpn.since(self.entries[slot as usize].tag);
        self.values[(slot * chunk + offset) as usize] = ppn;
    }

    /// Case (b): the head mapping leaves the entry.
    #[inline]
    pub fn drop_head(&mut self, slot: u32) {
        let e = &mut self.entries[slot as usize];
        let old = e.tag;
        debug_assert!(e.base.is_some(), "an entry of several mappings maps every LPN");
        e.tag = e.tag.offset(1);
        e.base = e.base.map(|base| base.offset(1));
        e.len -= 1;
        let tag = e.tag;
        self.tags.clear(old);
        self.tags.set(tag, slot);
        self.reweigh(slot);
    }

    /// Case (c): the tail mapping leaves the entry.
    #[inline]
    pub fn drop_tail(&mut self, slot: u32) {
        self.entries[slot as usize].len -= 1;
        self.reweigh(slot);
    }

    /// Case (d): the middle mapping `lpn` leaves the entry; the mappings after it move to a new
    /// entry with the same state (the caller made room for it).
    #[inline]
    pub fn split_around(&mut self, slot: u32, lpn: Lpn) {
        let e = self.entries[slot as usize];
        let head_len = lpn.since(e.tag);
        self.entries[slot as usize].len = head_len;
        self.reweigh(slot);
        let referenced = self.policy.is_referenced(slot);
        let tail_base = e.base.map(|base| base.offset(head_len + 1));
        self.insert(lpn.offset(1), Tpn::new(e.tp), e.len - head_len - 1, |_| tail_base, e.dirty, referenced, e.stamp);
    }

    /// The sequential merge: the entry takes the mapping after its last one.
    #[inline]
    pub fn extend(&mut self, slot: u32) {
        self.entries[slot as usize].len += 1;
        self.reweigh(slot);
    }

    #[inline]
    fn reweigh(&mut self, slot: u32) {
        let e = &self.entries[slot as usize];
        if e.dirty {
            self.policy.set_modified(slot, e.len);
        }
    }

    /// Occupied slots.
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.capacity).filter(|&s| {
            let tag = self.entries[s as usize].tag;
            self.is_head(tag) && self.tags.slot(tag) == s
        })
    }

    /// Drops every entry without writing anything back.
    pub fn clear(&mut self) {
        self.tags.clear_all();
        self.free = (0..self.capacity).rev().collect();
        self.dirty_lists.clear();
        self.policy.clear();
        for e in &mut self.entries {
            e.dirty = false;
        }
    }

    /// Checks the structure, and that every clean entry agrees with the flash copy of its TP.
    pub fn check(&self, store: &TranslationStore) -> std::result::Result<(), String> {
        let max_len = self.max_len();
        let mut occupied = 0;
        for slot in self.slots() {
            occupied += 1;
            let e = self.entries[slot as usize];
            let last = e.tag.offset(e.len - 1);
            let name = format!("CMT entry {}..={last} (slot {slot})", e.tag);
            if e.len == 0
                || e.len > max_len
                || last.get() >= store.logical_pages()
                || store.tp_of(last) != store.tp_of(e.tag)
            {
                return Err(format!("{name} is empty, too long or crosses a translation page"));
            }
            if e.tp != store.tp_of(e.tag).get() {
                return Err(format!("{name} records TP {} instead of {}", e.tp, store.tp_of(e.tag)));
            }
            if let Layout::Large { chunk } = self.layout {
                let end = store.lpns(store.tp_of(e.tag)).end;
                if self.chunk_start(e.tag, chunk) != e.tag || e.len != chunk.min(end.since(e.tag)) {
                    return Err(format!("{name} is not an aligned chunk of {chunk}"));
                }
            } else if e.len > 1
                && e.base.is_none_or(|base| base.get().checked_add(e.len - 1).is_none_or(|p| p == u32::MAX))
            {
                return Err(format!("{name} runs into the unmapped value"));
            }
            if let Some(other) = Lpn::range(e.tag.get() + 1, last.get() + 1).find(|&l| self.is_head(l)) {
                return Err(format!("{name} overlaps the entry at {other}"));
            }
            if let Replacement::DNru(p) = &self.policy {
                if p.weight(slot) != if e.dirty { e.len } else { 0 } {
                    return Err(format!("{name} (modified {}) has D-NRU weight {}", e.dirty, p.weight(slot)));
                }
            }
            if self.dirty_lists.list_of(slot) != e.dirty.then_some(e.tp) {
                return Err(format!(
                    "{name} (modified {}) is in dirty list {:?}",
                    e.dirty,
                    self.dirty_lists.list_of(slot)
                ));
            }
            if !e.dirty {
                if let Some((lpn, ppn)) = self.mappings(slot).find(|&(l, p)| store.entry(l) != p) {
                    return Err(format!(
                        "clean {name} maps LPN {lpn} to {ppn:?}, its translation page to {:?}",
                        store.entry(lpn)
                    ));
                }
            }
        }
        let heads = self.tags.count();
        if heads != occupied || occupied != self.len() {
            return Err(format!("{heads} head bits and {occupied} indexed entries, but {} slots in use", self.len()));
        }
        if let Replacement::Nru(p) | Replacement::DNru(p) = &self.policy {
            p.check(self.slots())?;
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        let policy = match &self.policy {
            Replacement::Lru(_) => self.capacity as usize * 12,
            Replacement::Nru(p) | Replacement::DNru(p) => p.memory_bytes(),
        };
        self.entries.len() * std::mem::size_of::<Entry>()
            + self.values.len() * 4
            + self.tags.memory_bytes()
            + self.dirty_lists.memory_bytes()
            + self.free.capacity() * 4
            + policy
    }
}
