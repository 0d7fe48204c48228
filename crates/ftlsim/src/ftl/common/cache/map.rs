//! The LPN-keyed index of a mapping cache (an entry's slot, an unwritten change): an
//! open-addressing hash table sized by what it holds, not by the device.
//!
//! A cache holds a few thousand entries over up to hundreds of millions of LPNs: a flat array of
//! one value per LPN was 4 bytes per logical page, most of what a demand-based FTL held beyond
//! PFTL's state. Here an LPN's bucket is a multiplicative hash of it, (LPN, value) pairs sit side
//! by side (a probe reads one cache line), collisions probe linearly and a removal shifts the
//! following pairs back (no tombstones). The table stays at most a quarter full, so a lookup or a
//! removal reads one or two pairs (at half full, removals' shifts showed in the profile); at four
//! times the cache's entries it is small enough to stay in the CPU cache, and the bucket of an
//! LPN is known without a load, so the lookahead can prefetch it.
//!
//! `LpnMap<V, RUN_BITS>` keeps runs of consecutive LPNs together instead: the hash picks a group
//! of 2^RUN_BITS buckets for every 2^RUN_BITS aligned LPNs, which sit in it in order, so a cache
//! that looks up or evicts the entries of a sequential run (TPFTL's prefetching, [`RUNS`]: eight
//! `(u32, u32)` pairs, one 64-byte line) reads one line per eight of them instead of one per
//! entry. The default, 0, hashes each LPN on its own (a constant, so that costs nothing).
//!
//! The write buffer's index and Delta-FTL's DMT (by LPN) and delta-page accounting (keyed by the
//! delta page's PPN, another 32-bit number below `u32::MAX`) use the same table.

/// The key of an empty bucket (no LPN is this large).
const EMPTY: u32 = u32::MAX;
/// 2^32 / the golden ratio: consecutive LPNs land far apart.
const MULTIPLIER: u32 = 0x9E37_79B9;
const MIN_BUCKETS: usize = 16;
/// Buckets per pair at most.
const SPREAD: usize = 4;
/// The `RUN_BITS` of a map of `u32` values that keeps each eight aligned LPNs in one line.
pub const RUNS: u32 = 3;

pub struct LpnMap<V, const RUN_BITS: u32 = 0> {
    /// (LPN, value) pairs; the key is [`EMPTY`] in an empty bucket.
    buckets: Vec<(u32, V)>,
    len: usize,
    /// 32 - log2(bucket count) + RUN_BITS: the hash's top bits pick the group of buckets.
    shift: u32,
}

impl<V: Copy + Default, const RUN_BITS: u32> LpnMap<V, RUN_BITS> {
    /// A map sized for `entries` pairs (it grows beyond them if it must).
    pub fn with_capacity(entries: usize) -> Self {
        let buckets = (entries * SPREAD).next_power_of_two().max(MIN_BUCKETS);
        let shift = 32 - buckets.trailing_zeros() + RUN_BITS;
        LpnMap { buckets: vec![(EMPTY, V::default()); buckets], len: 0, shift }
    }

    #[inline]
    fn home(&self, lpn: u32) -> usize {
        let group = (lpn >> RUN_BITS).wrapping_mul(MULTIPLIER) >> self.shift;
        ((group << RUN_BITS) | (lpn & ((1 << RUN_BITS) - 1))) as usize
    }

    /// The bucket at `i`, an index from [`Self::home`] or [`Self::next`]: always in bounds (the
    /// hash's top bits, or a step masked by the power-of-two count), so unchecked: the checks
    /// were a tenth of a lookup's instructions.
    #[inline]
    fn at(&self, i: usize) -> &(u32, V) {
        debug_assert!(i < self.buckets.len());
        // SAFETY: in bounds, as above.
        unsafe { self.buckets.get_unchecked(i) }
    }

    #[inline]
    fn at_mut(&mut self, i: usize) -> &mut (u32, V) {
        debug_assert!(i < self.buckets.len());
        // SAFETY: in bounds, as above.
        unsafe { self.buckets.get_unchecked_mut(i) }
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        (i + 1) & (self.buckets.len() - 1)
    }

    /// The bucket holding `lpn`, or the empty bucket where it would go.
    #[inline]
    fn find(&self, lpn: u32) -> usize {
        let mut i = self.home(lpn);
        loop {
            let key = self.at(i).0;
            if key == lpn || key == EMPTY {
                return i;
            }
            i = self.next(i);
        }
    }

    #[inline]
    pub fn get(&self, lpn: u32) -> Option<V> {
        let (key, value) = *self.at(self.find(lpn));
        (key == lpn).then_some(value)
    }

    /// The value of `lpn`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, lpn: u32) -> Option<&mut V> {
        let i = self.find(lpn);
        let (key, value) = self.at_mut(i);
        (*key == lpn).then_some(value)
    }

    /// Sets the value of `lpn`; returns the value it replaced, if any.
    #[inline]
    pub fn insert(&mut self, lpn: u32, value: V) -> Option<V> {
        debug_assert_ne!(lpn, EMPTY);
        let mut i = self.find(lpn);
        let (key, old) = *self.at(i);
        if key == EMPTY {
            if (self.len + 1) * SPREAD > self.buckets.len() {
                self.grow();
                i = self.find(lpn);
            }
            self.len += 1;
        }
        *self.at_mut(i) = (lpn, value);
        (key == lpn).then_some(old)
    }

    /// Sets the value of `lpn` unless it has one; returns whether it had none (one search for
    /// the test and the insertion).
    #[inline]
    pub fn insert_absent(&mut self, lpn: u32, value: V) -> bool {
        debug_assert_ne!(lpn, EMPTY);
        let mut i = self.find(lpn);
        if self.at(i).0 == lpn {
            return false;
        }
        if (self.len + 1) * SPREAD > self.buckets.len() {
            self.grow();
            i = self.find(lpn);
        }
        self.len += 1;
        *self.at_mut(i) = (lpn, value);
        true
    }

    /// Removes `lpn`, returning its value if it had one.
    #[inline]
    pub fn remove(&mut self, lpn: u32) -> Option<V> {
        let mut hole = self.find(lpn);
        let (key, value) = *self.at(hole);
        if key != lpn {
            return None;
        }
        self.len -= 1;
        // Shift back every following pair of the run that may sit at or before the hole.
        let mut i = self.next(hole);
        while self.at(i).0 != EMPTY {
            let home = self.home(self.at(i).0);
            // The pair may move to the hole unless its home lies cyclically in (hole, i].
            let stays = if hole <= i { hole < home && home <= i } else { hole < home || home <= i };
            if !stays {
                *self.at_mut(hole) = *self.at(i);
                hole = i;
            }
            i = self.next(i);
        }
        self.at_mut(hole).0 = EMPTY;
        Some(value)
    }

    /// Doubles the buckets (rare: kept out of line so that `insert` stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        *self = LpnMap::with_capacity(old.len() * 2 / SPREAD);
        for (key, value) in old {
            if key != EMPTY {
                self.insert(key, value);
            }
        }
    }

    /// Brings the bucket of `lpn` toward the CPU cache (a hint; nothing is loaded).
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        crate::mem::prefetch(self.at(self.home(lpn)));
    }

    /// Every (LPN, value) pair, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, V)> + '_ {
        self.buckets.iter().copied().filter(|&(key, _)| key != EMPTY)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.buckets.fill((EMPTY, V::default()));
        self.len = 0;
    }

    /// Simulator memory.
    pub fn memory_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<(u32, V)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_a_reference_map_through_inserts_updates_removals_and_growth() {
        agrees_with_a_reference_map::<0>();
        agrees_with_a_reference_map::<RUNS>();
    }

    fn agrees_with_a_reference_map<const RUN_BITS: u32>() {
        let mut map: LpnMap<u32, RUN_BITS> = LpnMap::with_capacity(8);
        let mut reference = HashMap::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for step in 0..20_000u32 {
            // A small key range makes long probe runs and many removals inside them.
            let lpn = match step % 3 {
                0 => rng.gen_range(0..300u32),
                1 => rng.gen_range(0..300u32) * 4096,
                // Runs of neighbours share a group of buckets.
                _ => rng.gen_range(0..100u32) * 4096 + rng.gen_range(0..12u32),
            };
            if rng.gen_bool(0.1) {
                if let Some(value) = map.get_mut(lpn) {
                    *value += 1;
                }
                if let Some(value) = reference.get_mut(&lpn) {
                    *value += 1;
                }
            } else if rng.gen_bool(0.1) {
                let absent = !reference.contains_key(&lpn);
                if absent {
                    reference.insert(lpn, step);
                }
                assert_eq!(map.insert_absent(lpn, step), absent, "step {step}");
            } else if rng.gen_bool(0.55) {
                assert_eq!(map.insert(lpn, step), reference.insert(lpn, step), "step {step}");
            } else {
                assert_eq!(map.remove(lpn), reference.remove(&lpn), "step {step}");
            }
            assert_eq!(map.len(), reference.len());
            assert_eq!(map.get(lpn), reference.get(&lpn).copied());
        }
        for lpn in 0..300 * 4096 + 12 {
            assert_eq!(map.get(lpn), reference.get(&lpn).copied(), "LPN {lpn}");
        }
        let mut pairs: Vec<(u32, u32)> = map.iter().collect();
        let mut expected: Vec<(u32, u32)> = reference.into_iter().collect();
        pairs.sort_unstable();
        expected.sort_unstable();
        assert_eq!(pairs, expected);
        map.clear();
        assert!(map.is_empty() && map.get(0).is_none());
    }

    #[test]
    fn memory_follows_the_entries_not_the_lpns() {
        let map: LpnMap<u32> = LpnMap::with_capacity(2048);
        assert_eq!(map.memory_bytes(), 8192 * 8);
    }
}
