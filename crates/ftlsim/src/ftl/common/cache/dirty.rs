//! Mapping changes held in SRAM but not yet written to their translation page, for caches whose
//! unit is a whole TP (CDFTL's CTP, S-FTL). A cached TP's content is its flash copy overlaid with
//! these changes, so loading a TP costs no copy.

use super::map::RUNS;
use super::LpnMap;
use crate::flash::{Divisor, Lpn, Ppn, Tpn};

pub struct DirtyEntries {
    /// The changed mappings (a trim's is `None`). Changes come in runs of neighbouring LPNs (GC
    /// moves a block's pages in order, S-FTL reads both neighbours of a changed entry), so eight
    /// aligned LPNs share a line.
    value: LpnMap<Option<Ppn>, RUNS>,
    /// The dirty LPNs of each TP (capacity is kept across drains: no allocation in steady state).
    by_tp: Vec<Vec<Lpn>>,
    entries_per_tp: Divisor,
    total: usize,
}

impl DirtyEntries {
    pub fn new(logical_pages: u32, entries_per_tp: u32) -> Self {
        DirtyEntries {
            value: LpnMap::with_capacity(0),
            by_tp: vec![Vec::new(); logical_pages.div_ceil(entries_per_tp) as usize],
            entries_per_tp: Divisor::new(entries_per_tp),
            total: 0,
        }
    }

    /// The index of `lpn`'s TP in `by_tp`.
    #[inline]
    fn tp_index(&self, lpn: Lpn) -> usize {
        self.entries_per_tp.quotient(lpn.get()) as usize
    }

    /// Brings an LPN's state toward the CPU cache, with the list header of its TP (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.value.prefetch(lpn.get());
        if let Some(list) = self.by_tp.get(self.tp_index(lpn)) {
            crate::mem::prefetch(list);
        }
    }

    /// The unwritten mapping of an LPN (`Some(None)`: unmapped by a trim), if it has one.
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.value.get(lpn.get())
    }

    /// Records a change; returns the change it replaced (`None`: the LPN was clean before).
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>) -> Option<Option<Ppn>> {
        let replaced = self.value.insert(lpn.get(), ppn);
        if replaced.is_none() {
            let tp = self.tp_index(lpn);
            self.by_tp[tp].push(lpn);
            self.total += 1;
        }
        replaced
    }

    /// Dirty entries of a TP.
    #[inline]
    pub fn count(&self, tp: Tpn) -> u32 {
        self.by_tp[tp.index()].len() as u32
    }
    pub fn total(&self) -> usize {
        self.total
    }

    /// Hands every change of a TP to `f` and forgets them.
    pub fn drain(&mut self, tp: Tpn, mut f: impl FnMut(Lpn, Option<Ppn>)) {
        let mut lpns = std::mem::take(&mut self.by_tp[tp.index()]);
        // Newest first: a run's last LPN ends its cluster of buckets, so its removal shifts none
        // back (oldest first, each removal shifted the rest of the run).
        for &lpn in lpns.iter().rev() {
            f(lpn, self.value.remove(lpn.get()).expect("a listed change is in the map"));
        }
        self.total -= lpns.len();
        lpns.clear();
        self.by_tp[tp.index()] = lpns;
    }

    /// TPs with changes, in TP order.
    pub fn tps(&self) -> impl Iterator<Item = Tpn> + '_ {
        self.by_tp.iter().enumerate().filter(|(_, l)| !l.is_empty()).map(|(t, _)| Tpn::new(t as u32))
    }

    pub fn clear(&mut self) {
        for tp in Tpn::range(0, self.by_tp.len() as u32) {
            self.drain(tp, |_, _| {});
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.value.memory_bytes() + self.by_tp.iter().map(|l| 24 + l.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_kept_per_tp_until_drained() {
        let mut d = DirtyEntries::new(20, 8);
        assert_eq!(d.set(Lpn::new(3), Some(Ppn::new(30))), None);
        assert_eq!(d.set(Lpn::new(3), Some(Ppn::new(31))), Some(Some(Ppn::new(30))));
        assert_eq!(d.set(Lpn::new(9), Some(Ppn::new(90))), None);
        assert_eq!(d.set(Lpn::new(17), Some(Ppn::new(170))), None);
        assert_eq!((d.get(Lpn::new(3)), d.get(Lpn::new(4))), (Some(Some(Ppn::new(31))), None));
        assert_eq!((d.count(Tpn::new(0)), d.count(Tpn::new(1)), d.count(Tpn::new(2)), d.total()), (1, 1, 1, 3));
        assert_eq!(d.tps().map(Tpn::get).collect::<Vec<_>>(), [0, 1, 2]);
        let mut out = Vec::new();
        d.drain(Tpn::new(1), |l, p| out.push((l, p)));
        assert_eq!(out, [(Lpn::new(9), Some(Ppn::new(90)))]);
        assert_eq!((d.get(Lpn::new(9)), d.count(Tpn::new(1)), d.total()), (None, 0, 2));
        d.clear();
        assert_eq!((d.total(), d.get(Lpn::new(17))), (0, None));
    }
}
