//! Mapping changes held in SRAM but not yet written to their translation page, for caches whose
//! unit is a whole TP (CDFTL's CTP, S-FTL). A cached TP's content is its flash copy overlaid with
//! these changes, so loading a TP costs no copy.

use crate::flash::{Lpn, Ppn};

pub struct DirtyEntries {
    value: Vec<Ppn>,
    bits: Vec<u64>,
    /// The dirty LPNs of each TP (capacity is kept across drains: no allocation in steady state).
    by_tp: Vec<Vec<Lpn>>,
    entries_per_tp: u32,
    total: usize,
}

impl DirtyEntries {
    pub fn new(logical_pages: u32, entries_per_tp: u32) -> Self {
        DirtyEntries {
            value: crate::mem::zeroed_vec(logical_pages as usize),
            bits: crate::mem::zeroed_vec((logical_pages as usize).div_ceil(64)),
            by_tp: vec![Vec::new(); logical_pages.div_ceil(entries_per_tp) as usize],
            entries_per_tp,
            total: 0,
        }
    }

    #[inline]
    fn is_set(&self, lpn: Lpn) -> bool {
        self.bits[lpn as usize >> 6] & (1 << (lpn & 63)) != 0
    }

    /// Brings an LPN's state toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let (Some(bits), Some(value)) = (self.bits.get(lpn as usize >> 6), self.value.get(lpn as usize)) {
            crate::mem::prefetch(bits);
            crate::mem::prefetch(value);
        }
    }

    /// The unwritten mapping of an LPN, if it has one.
    #[inline]
    pub fn get(&self, lpn: Lpn) -> Option<Ppn> {
        self.is_set(lpn).then(|| self.value[lpn as usize])
    }

    /// Records a change; returns whether the LPN was clean before.
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Ppn) -> bool {
        self.value[lpn as usize] = ppn;
        if self.is_set(lpn) {
            return false;
        }
        self.bits[lpn as usize >> 6] |= 1 << (lpn & 63);
        self.by_tp[(lpn / self.entries_per_tp) as usize].push(lpn);
        self.total += 1;
        true
    }

    /// Dirty entries of a TP.
    #[inline]
    pub fn count(&self, tp: u32) -> u32 {
        self.by_tp[tp as usize].len() as u32
    }
    pub fn total(&self) -> usize {
        self.total
    }

    /// Hands every change of a TP to `f` and forgets them.
    pub fn drain(&mut self, tp: u32, mut f: impl FnMut(Lpn, Ppn)) {
        let mut lpns = std::mem::take(&mut self.by_tp[tp as usize]);
        for &lpn in &lpns {
            f(lpn, self.value[lpn as usize]);
            self.bits[lpn as usize >> 6] &= !(1 << (lpn & 63));
        }
        self.total -= lpns.len();
        lpns.clear();
        self.by_tp[tp as usize] = lpns;
    }

    /// TPs with changes, in TP order.
    pub fn tps(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_tp.iter().enumerate().filter(|(_, l)| !l.is_empty()).map(|(t, _)| t as u32)
    }

    pub fn clear(&mut self) {
        for tp in 0..self.by_tp.len() as u32 {
            self.drain(tp, |_, _| {});
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.value.len() * 4 + self.bits.len() * 8 + self.by_tp.iter().map(|l| 24 + l.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_kept_per_tp_until_drained() {
        let mut d = DirtyEntries::new(20, 8);
        assert!(d.set(3, 30));
        assert!(!d.set(3, 31));
        assert!(d.set(9, 90));
        assert!(d.set(17, 170));
        assert_eq!((d.get(3), d.get(4)), (Some(31), None));
        assert_eq!((d.count(0), d.count(1), d.count(2), d.total()), (1, 1, 1, 3));
        assert_eq!(d.tps().collect::<Vec<_>>(), [0, 1, 2]);
        let mut out = Vec::new();
        d.drain(1, |l, p| out.push((l, p)));
        assert_eq!(out, [(9, 90)]);
        assert_eq!((d.get(9), d.count(1), d.total()), (None, 0, 2));
        d.clear();
        assert_eq!((d.total(), d.get(17)), (0, None));
    }
}
