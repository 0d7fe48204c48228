//! A cache of whole translation pages in LRU order (paper 004's CMT: "mapping entries are
//! loaded in the unit of VTP"): a miss reads the page, and evicting a page with changes writes
//! it back whole, without a read. The changes of cached pages are kept in [`PageSlots`], so a
//! cached page's content is its flash copy overlaid with them.

use super::PageSlots;
use crate::error::Result;
use crate::flash::{Lpn, Ppn, Tpn};
use crate::ftl::common::demand::miss_class;
use crate::ftl::common::translation::{write_back, TranslationOwner, TranslationStore};
use crate::ftl::common::{BlockManager, ListSet};
use crate::ftl::FtlCtx;
use crate::metrics::CacheAccess;

pub struct PageCache {
    /// Cached pages, most recently used first.
    lru: ListSet,
    capacity: u32,
    changes: PageSlots,
}

/// A mapping state that keeps a [`PageCache`] over its translation store.
pub trait CachesPages: TranslationOwner {
    fn pages(&mut self) -> &mut PageCache;
}

impl PageCache {
    /// A cache of `capacity` pages (at least one) over `store`'s map.
    pub fn new(store: &TranslationStore, capacity: u32) -> Self {
        PageCache {
            lru: ListSet::new(store.tp_count() as usize, 1),
            capacity: capacity.max(1),
            changes: PageSlots::new(store.logical_pages(), store.entries_per_tp()),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    pub fn len(&self) -> u32 {
        self.lru.len(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    #[inline]
    pub fn contains(&self, tp: Tpn) -> bool {
        self.lru.list_of(tp.get()).is_some()
    }

    /// The mapping of an LPN if a cached page changed it (`Some(None)`: unmapped).
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.changes.get(lpn)
    }

    /// The mapping of an LPN as the cache holds it (its page must be cached).
    #[inline]
    pub fn entry(&self, lpn: Lpn, store: &TranslationStore) -> Option<Ppn> {
        self.get(lpn).unwrap_or_else(|| store.entry(lpn))
    }

    /// Brings what [`PageCache::entry`] reads for `lpn` toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, store: &TranslationStore) {
        self.changes.prefetch(lpn);
        store.prefetch(lpn);
    }

    /// The second stage after [`PageCache::prefetch`]: where a change of `lpn` will be held, once
    /// its page is cached.
    #[inline]
    pub fn prefetch_change(&self, lpn: Lpn) {
        self.changes.prefetch(lpn);
    }

    /// The page a miss would evict now (the least recently used, once the cache is full): its old
    /// copy is what the miss's write-back invalidates, worth prefetching ahead.
    #[inline]
    pub fn next_victim(&self) -> Option<Tpn> {
        (self.len() >= self.capacity).then(|| self.lru.back(0)).flatten().map(Tpn::new)
    }

    /// Changes an entry of a cached page.
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>, store: &TranslationStore) {
        debug_assert!(self.contains(store.tp_of(lpn)), "changed an entry of an uncached page");
        self.changes.set(lpn, ppn);
    }

    /// Changes held for a page.
    pub fn dirty(&self, tp: Tpn) -> u32 {
        self.changes.count(tp)
    }

    /// Hands a page's changes to the store (for `TranslationOwner::publish`).
    pub fn publish(&mut self, tp: Tpn, store: &mut TranslationStore) {
        self.changes.drain(tp, |lpn, ppn| store.set(lpn, ppn));
    }

    /// Forgets every page (they hold no change after a flush; everything is lost on power loss).
    pub fn clear(&mut self) {
        self.lru.clear();
        self.changes.clear();
    }

    /// Checks that only cached pages hold changes and the cache fits.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.len() > self.capacity {
            return Err(format!("{} translation pages cached, capacity {}", self.len(), self.capacity));
        }
        match self.changes.tps().find(|&tp| !self.contains(tp)) {
            Some(tp) => Err(format!("translation page {tp} holds changes but is not cached")),
            None => Ok(()),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.lru.memory_bytes() + self.changes.memory_bytes()
    }
}

/// Makes `tp` cached and most recently used for an access: a hit touches it; a miss evicts least
/// recently used pages until one slot is free (each with changes is written back whole, without
/// a read), then reads the page (a page never written costs nothing; nor one that GC during a
/// write-back has loaded meanwhile). Returns the access's class.
pub fn load<O: CachesPages>(
    owner: &mut O,
    blocks: &mut BlockManager,
    tp: Tpn,
    ctx: &mut FtlCtx,
) -> Result<CacheAccess> {
    let cache = owner.pages();
    if cache.contains(tp) {
        cache.lru.move_to_front(0, tp.get());
        return Ok(CacheAccess::Hit);
    }
    // Read once the evictions are written back.
    owner.store().prefetch_copy(tp, ctx.flash);
    let mut wrote = false;
    while owner.pages().len() >= owner.pages().capacity {
        let cache = owner.pages();
        let victim = Tpn::new(cache.lru.back(0).expect("a full cache has a victim"));
        cache.lru.remove(victim.get());
        ctx.cache.evictions += 1;
        if cache.dirty(victim) > 0 {
            ctx.cache.dirty_evictions += 1;
            write_back(owner, blocks, victim, false, ctx)?;
            wrote = true;
        }
    }
    // GC during a write-back may have loaded the page (it moved a page the page maps).
    if owner.pages().contains(tp) {
        owner.pages().lru.move_to_front(0, tp.get());
        return Ok(miss_class(wrote, false));
    }
    let fetched = owner.store().fetch(tp, ctx)?;
    owner.pages().lru.push_front(0, tp.get());
    Ok(miss_class(wrote, fetched))
}
