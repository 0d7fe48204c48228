//! The hotness tracker of Delta-FTL (paper 001 §4.3.4, spec §4.6 [REC]): the SLRU mapping cache,
//! whose entries carry read and write access counts. Counts live only while the entry is cached,
//! so an entry evicted starts again from zero (natural ageing).

use crate::flash::Lpn;
use crate::ftl::common::cache::{Policy, SegmentedLru};
use crate::ftl::common::ListSet;

const NOT_CACHED: u32 = u32::MAX;

/// The counts of one cached LPN (this access included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub reads: u32,
    pub writes: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    lpn: u32,
    counts: Counts,
}

pub struct HotnessTracker {
    order: SegmentedLru,
    slots: ListSet<Slot>,
    /// Per LPN: its slot, or `NOT_CACHED`.
    slot_of: Vec<u32>,
    used: u32,
    capacity: u32,
}

impl HotnessTracker {
    pub fn new(logical_pages: u32, capacity: u32, protected_fraction: f64) -> Self {
        HotnessTracker {
            order: SegmentedLru::new(capacity, (capacity as f64 * protected_fraction).floor() as u32),
            // The slots' payloads only: the policy keeps the order.
            slots: ListSet::new(capacity as usize, 1),
            slot_of: vec![NOT_CACHED; logical_pages as usize],
            used: 0,
            capacity,
        }
    }

    /// A flash-level read of `lpn`; returns its counts.
    #[inline]
    pub fn read(&mut self, lpn: Lpn) -> Counts {
        let slot = self.access(lpn);
        let counts = &mut self.slots.payload_mut(slot).counts;
        counts.reads = counts.reads.saturating_add(1);
        *counts
    }

    /// A write of `lpn` reaching the FTL (a buffer eviction); returns its counts.
    #[inline]
    pub fn write(&mut self, lpn: Lpn) -> Counts {
        let slot = self.access(lpn);
        let counts = &mut self.slots.payload_mut(slot).counts;
        counts.writes = counts.writes.saturating_add(1);
        *counts
    }

    /// The counts of `lpn` without accessing it (zero when it is not cached): what GC consults.
    #[inline]
    pub fn counts(&self, lpn: Lpn) -> Counts {
        match self.slot_of[lpn.index()] {
            NOT_CACHED => Counts::default(),
            slot => self.slots.payload(slot).counts,
        }
    }

    /// Brings `lpn`'s slot index toward the CPU cache; once that is in (a later call with
    /// `slot_too`), its counts as well. A hint only.
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, slot_too: bool) {
        let Some(slot) = self.slot_of.get(lpn.index()) else { return };
        if !slot_too {
            crate::mem::prefetch(slot);
        } else if *slot != NOT_CACHED {
            self.slots.prefetch(*slot);
        }
    }

    /// Forgets every entry (a power loss clears the SRAM cache).
    pub fn clear(&mut self) {
        self.order.clear();
        self.slot_of.fill(NOT_CACHED);
        self.used = 0;
    }

    /// The slot of `lpn`, touched if cached, else filled (evicting the policy's victim if full).
    fn access(&mut self, lpn: Lpn) -> u32 {
        let slot = self.slot_of[lpn.index()];
        if slot != NOT_CACHED {
            self.order.touch(slot);
            return slot;
        }
        let slot = if self.used < self.capacity {
            self.used += 1;
            self.used - 1
        } else {
            let victim = self.order.victim().expect("a full cache has a victim");
            self.order.remove(victim);
            self.slot_of[self.slots.payload(victim).lpn as usize] = NOT_CACHED;
            victim
        };
        *self.slots.payload_mut(slot) = Slot { lpn: lpn.get(), counts: Counts::default() };
        self.slot_of[lpn.index()] = slot;
        self.order.insert(slot);
        slot
    }

    /// Simulator memory.
    pub fn state_bytes(&self) -> usize {
        self.slot_of.len() * 4 + self.slots.memory_bytes() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_grow_while_cached_and_die_on_eviction() {
        let mut t = HotnessTracker::new(16, 2, 0.5);
        assert_eq!(t.write(Lpn::new(1)), Counts { reads: 0, writes: 1 });
        assert_eq!(t.write(Lpn::new(1)), Counts { reads: 0, writes: 2 }, "write-hot on its 2nd write");
        assert_eq!(t.read(Lpn::new(1)), Counts { reads: 1, writes: 2 });
        t.read(Lpn::new(2));
        t.read(Lpn::new(3)); // evicts 2 (probationary), 1 is protected
        assert_eq!(t.counts(Lpn::new(2)), Counts::default());
        assert_eq!(t.counts(Lpn::new(1)), Counts { reads: 1, writes: 2 });
        t.write(Lpn::new(4)); // evicts 3: the protected entry outlives a scan
        assert_eq!(t.counts(Lpn::new(1)).writes, 2);
        t.write(Lpn::new(4)); // promoted: 1 falls back to the probationary segment
        t.write(Lpn::new(5)); // evicts 1
        assert_eq!(t.counts(Lpn::new(1)), Counts::default(), "an evicted entry's counts are gone");
        assert_eq!(t.write(Lpn::new(1)).writes, 1);
    }
}
