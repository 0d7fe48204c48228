//! Mapping changes a demand-based scheme holds outside its cache for a while, written once.
//!
//! - [`Waiting`]: changes on their way into the cache while it makes room for them. Making room
//!   may write a TP back, whose allocation may run GC: a GC move of a waiting LPN updates its
//!   change, and a write of its TP takes it along.
//! - [`GcBatch`]: paper 002's GC batch update. GC moves of entries that are not cached are staged
//!   in the store (S-FTL holds them in its dirty buffer meanwhile), and each translation page they
//!   touch is written once when the batch ends (the scheme decides when: DFTL when the victim
//!   block is empty, TPFTL and S-FTL when GC returns).
//!
//! Both are empty between requests.

use super::translation::TranslationStore;
use crate::flash::{Lpn, Ppn, Tpn};
use crate::metrics::CacheAccess;

/// Mapping changes waiting for a cache slot (nested at most once: GC inside the wait).
#[derive(Default)]
pub struct Waiting {
    changes: Vec<(Lpn, Option<Ppn>)>,
}

impl Waiting {
    /// Holds a change while the cache makes room for it.
    #[inline]
    pub fn push(&mut self, lpn: Lpn, ppn: Option<Ppn>) {
        self.changes.push((lpn, ppn));
    }

    /// Takes the most recent change back, with the PPN GC may have moved its page to meanwhile.
    #[inline]
    pub fn pop(&mut self) -> (Lpn, Option<Ppn>) {
        self.changes.pop().expect("a change waits")
    }

    /// The waiting mapping of `lpn`, if a change of it waits (the most recent one).
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.changes.iter().rev().find(|(l, _)| *l == lpn).map(|&(_, ppn)| ppn)
    }

    /// The PPN of the most recent change.
    #[inline]
    pub fn last_ppn(&self) -> Option<Ppn> {
        self.changes.last().expect("a change waits").1
    }

    /// A GC move of `lpn`'s page to `new`: if a change of `lpn` waits, it follows the page (a GC
    /// hit) and this returns true.
    #[inline]
    pub fn relocated(&mut self, lpn: Lpn, new: Ppn) -> bool {
        match self.changes.iter_mut().find(|(l, _)| *l == lpn) {
            Some(change) => {
                change.1 = Some(new);
                true
            }
            None => false,
        }
    }

    /// Hands the waiting changes of `tp` to the store: a write of `tp` takes them along.
    pub fn publish(&self, tp: Tpn, store: &mut TranslationStore) {
        for &(lpn, ppn) in &self.changes {
            if store.tp_of(lpn) == tp {
                store.set(lpn, ppn);
            }
        }
    }

    /// Whether a change of `tp` waits.
    pub fn holds(&self, tp: Tpn, store: &TranslationStore) -> bool {
        self.changes.iter().any(|&(lpn, _)| store.tp_of(lpn) == tp)
    }

    pub fn clear(&mut self) {
        self.changes.clear();
    }

    /// Fails if a change waits (call between requests).
    pub fn check(&self) -> Result<(), String> {
        match self.changes.len() {
            0 => Ok(()),
            n => Err(format!("{n} mapping changes wait for a cache slot between requests")),
        }
    }
}

/// GC updates of uncached entries, staged in the store and written once per translation page.
pub struct GcBatch {
    /// Staged TPs in staging order (a TP written and staged again is listed twice).
    tps: Vec<Tpn>,
    /// Per TP: whether updates were staged since its last write.
    staged: Vec<bool>,
}

impl GcBatch {
    pub fn new(tp_count: u32) -> Self {
        GcBatch { tps: Vec::new(), staged: vec![false; tp_count as usize] }
    }

    /// Stages GC's move of `lpn`, whose entry is not cached, to `new` for the next write of its
    /// TP, and returns the GC access's class: the TP's first update of the batch counts as its
    /// write-back, the others as misses without penalty.
    #[inline]
    pub fn stage(&mut self, store: &mut TranslationStore, lpn: Lpn, new: Ppn) -> CacheAccess {
        store.set(lpn, Some(new));
        self.mark(store.tp_of(lpn))
    }

    /// Lists `tp` for the next write of the batch, for a scheme that holds the GC update itself;
    /// returns the GC access's class as [`stage`](Self::stage) does.
    #[inline]
    pub fn mark(&mut self, tp: Tpn) -> CacheAccess {
        if self.staged[tp.index()] {
            return CacheAccess::MissNoPenalty;
        }
        self.staged[tp.index()] = true;
        self.tps.push(tp);
        CacheAccess::MissWriteBack
    }

    /// A write of `tp` took its staged updates along (call from `TranslationOwner::publish`).
    #[inline]
    pub fn published(&mut self, tp: Tpn) {
        self.staged[tp.index()] = false;
    }

    pub fn is_empty(&self) -> bool {
        self.tps.is_empty()
    }

    /// Makes [`pop`](Self::pop) give the staged TPs by ascending number (DFTL's order) instead
    /// of the most recently staged first.
    pub fn order_by_tp(&mut self) {
        self.tps.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// The next TP to write, skipping those written since they were staged; `None` when the
    /// batch is done. Updates staged meanwhile (GC during a write) join the batch.
    #[inline]
    pub fn pop(&mut self) -> Option<Tpn> {
        while let Some(tp) = self.tps.pop() {
            if self.staged[tp.index()] {
                return Some(tp);
            }
        }
        None
    }

    pub fn clear(&mut self) {
        for tp in self.tps.drain(..) {
            self.staged[tp.index()] = false;
        }
    }

    /// Fails if a TP waits for its batch to be written (call between requests).
    pub fn check(&self) -> Result<(), String> {
        match self.tps.len() {
            0 => Ok(()),
            n => Err(format!("{n} TPs wait for a GC batch update between requests")),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.staged.len() + self.tps.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::common::demand::tests_support::tiny_config;

    /// 8 entries per TP.
    fn store() -> TranslationStore {
        TranslationStore::new(&tiny_config(&[])).unwrap()
    }

    #[test]
    fn a_waiting_change_follows_its_page_and_goes_with_a_write_of_its_tp() {
        let mut store = store();
        let mut waiting = Waiting::default();
        waiting.push(Lpn::new(9), Some(Ppn::new(100)));
        assert!(waiting.relocated(Lpn::new(9), Ppn::new(101)) && !waiting.relocated(Lpn::new(8), Ppn::new(7)));
        assert_eq!(waiting.last_ppn(), Some(Ppn::new(101)));
        assert!(waiting.holds(Tpn::new(1), &store) && !waiting.holds(Tpn::new(0), &store));
        waiting.publish(Tpn::new(0), &mut store);
        assert_eq!(store.entry(Lpn::new(9)), None);
        waiting.publish(Tpn::new(1), &mut store);
        assert_eq!(store.entry(Lpn::new(9)), Some(Ppn::new(101)));
        assert!(waiting.check().is_err());
        assert_eq!(waiting.pop(), (Lpn::new(9), Some(Ppn::new(101))));
        assert!(waiting.check().is_ok());
    }

    /// Pops every TP of the batch, writing (publishing) each.
    fn write_all(batch: &mut GcBatch) -> Vec<u32> {
        std::iter::from_fn(|| batch.pop().inspect(|&tp| batch.published(tp))).map(Tpn::get).collect()
    }

    #[test]
    fn a_batch_counts_one_write_back_per_tp_and_skips_tps_written_meanwhile() {
        let mut store = store();
        let mut batch = GcBatch::new(store.tp_count());
        assert_eq!(batch.stage(&mut store, Lpn::new(17), Ppn::new(1)), CacheAccess::MissWriteBack); // TP 2
        assert_eq!(batch.stage(&mut store, Lpn::new(1), Ppn::new(2)), CacheAccess::MissWriteBack); // TP 0
        assert_eq!(batch.stage(&mut store, Lpn::new(18), Ppn::new(3)), CacheAccess::MissNoPenalty);
        assert_eq!(batch.stage(&mut store, Lpn::new(9), Ppn::new(4)), CacheAccess::MissWriteBack); // TP 1
        assert_eq!((store.entry(Lpn::new(17)), store.entry(Lpn::new(18))), (Some(Ppn::new(1)), Some(Ppn::new(3))));
        batch.published(Tpn::new(0));
        assert_eq!(batch.stage(&mut store, Lpn::new(2), Ppn::new(5)), CacheAccess::MissWriteBack); // TP 0 again
        assert_eq!(batch.pop(), Some(Tpn::new(0))); // the most recently staged first
        batch.published(Tpn::new(0));
        assert_eq!(write_all(&mut batch), [1, 2]);
        assert!(batch.check().is_ok());

        for (lpn, ppn) in [(17, 1), (1, 2), (9, 3)] {
            assert_eq!(batch.stage(&mut store, Lpn::new(lpn), Ppn::new(ppn)), CacheAccess::MissWriteBack);
        }
        batch.order_by_tp();
        assert_eq!(write_all(&mut batch), [0, 1, 2]);
    }
}
