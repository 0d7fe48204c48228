//! The controller's DRAM write buffer (paper 001 §2.6): write-back, LRU over logical pages.
//!
//! A host write completes as soon as its pages are buffered. When the buffer is full, the least
//! recently used page is evicted: the FTL writes it to flash, and its slot is freed only when
//! that program completes, so pending evictions count against the capacity and a host write
//! finding no free slot waits in the host queue for the next completion. A write to a page that
//! is buffered, or whose eviction is still in flight, updates it in place. Reads of such pages are
//! served from the buffer without touching flash, unless `buffer.serves_reads = false`.
//!
//! This type keeps only which pages are where and the counts; the simulation calls the FTL for
//! evictions and tells the buffer when their programs complete.

use serde::Serialize;

use crate::flash::Lpn;
use crate::ftl::common::cache::LpnMap;
use crate::ftl::common::ListSet;

/// Dirty pages waiting in the buffer, most recently used first: the one list of the set.
const RESIDENT: u32 = 0;

/// What the buffer did over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BufferStats {
    pub capacity_pages: u64,
    /// Host page reads served from the buffer.
    pub read_hits: u64,
    /// Host page writes that updated a buffered page (or one being evicted) in place.
    pub write_hits: u64,
    /// Pages evicted to flash.
    pub evictions: u64,
    /// Host page writes that found the buffer full and waited for an eviction to complete.
    pub waited_pages: u64,
    /// Sum over waiting pages of their waits, ns (over the simulated span: the mean number of
    /// page writes waiting in the host queue).
    #[serde(skip)]
    pub wait_ns: u128,
    /// Buffered pages written to flash at power losses (capacitor-backed flush).
    pub flushed_at_power_loss: u64,
    /// Buffered pages lost at power losses (`buffer.on_power_loss = "volatile"`).
    pub lost_at_power_loss: u64,
}

impl BufferStats {
    /// The counts since `base` (after preconditioning).
    pub fn since(&self, base: &BufferStats) -> BufferStats {
        BufferStats {
            capacity_pages: self.capacity_pages,
            read_hits: self.read_hits - base.read_hits,
            write_hits: self.write_hits - base.write_hits,
            evictions: self.evictions - base.evictions,
            waited_pages: self.waited_pages - base.waited_pages,
            wait_ns: self.wait_ns - base.wait_ns,
            flushed_at_power_loss: self.flushed_at_power_loss - base.flushed_at_power_loss,
            lost_at_power_loss: self.lost_at_power_loss - base.lost_at_power_loss,
        }
    }
}

/// The outcome of buffering one host page write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffered {
    /// The page to write to flash now to make room, if any.
    pub evict: Option<Lpn>,
    /// Whether the write must wait for a slot (an eviction to complete).
    pub waits: bool,
}

/// Its memory follows what it holds, not the logical space: a slot per page buffered or being
/// evicted, found by its logical page number.
pub struct WriteBuffer {
    capacity: u32,
    /// The slot of each page buffered or being evicted.
    slot_of: LpnMap<u32>,
    /// The resident pages' LRU list; a slot's payload is its logical page number. A slot whose
    /// eviction is in flight is in no list: nothing walks those slots, and unlinking one when its
    /// program completed touched two more slots at random.
    pages: ListSet<u32>,
    /// Pages evicted whose program has not completed.
    evicting: u32,
    /// Slots not in use.
    free: Vec<u32>,
    /// Host page writes waiting for a slot (buffered beyond the capacity).
    overflow: u32,
    pub stats: BufferStats,
}

impl WriteBuffer {
    /// A buffer of `capacity` pages.
    pub fn new(capacity: u32) -> Self {
        assert!(capacity > 0, "a write buffer holds at least one page");
        WriteBuffer {
            capacity,
            slot_of: LpnMap::with_capacity(capacity as usize),
            pages: ListSet::new(0, 1),
            evicting: 0,
            free: Vec::new(),
            overflow: 0,
            stats: BufferStats { capacity_pages: capacity as u64, ..BufferStats::default() },
        }
    }

    /// Whether a host read of `lpn` is served from the buffer (counted as a hit if so).
    #[inline]
    pub fn read(&mut self, lpn: Lpn) -> bool {
        let hit = self.slot_of.get(lpn.get()).is_some();
        self.stats.read_hits += hit as u64;
        hit
    }

    /// Brings the index bucket of `lpn` toward the CPU cache (a hint, for a request admitted
    /// ahead of service).
    #[inline]
    pub fn prefetch_index(&self, lpn: Lpn) {
        self.slot_of.prefetch(lpn.get());
    }

    /// Brings the slot of a buffered `lpn` toward the CPU cache (a hint; it reads the index
    /// bucket, which [`WriteBuffer::prefetch_index`] brought earlier).
    #[inline]
    pub fn prefetch_slot(&self, lpn: Lpn) {
        if let Some(slot) = self.slot_of.get(lpn.get()) {
            self.pages.prefetch(slot);
        }
    }

    /// The slot of `lpn` if it is resident (buffered and not being evicted).
    fn resident_slot(&self, lpn: Lpn) -> Option<u32> {
        self.slot_of.get(lpn.get()).filter(|&slot| self.pages.list_of(slot).is_some())
    }

    /// Forgets the resident page `lpn` in `slot`.
    fn drop_resident(&mut self, slot: u32, lpn: Lpn) {
        self.pages.remove(slot);
        self.slot_of.remove(lpn.get());
        self.free.push(slot);
    }

    /// Buffers a host write of `lpn`.
    pub fn write(&mut self, lpn: Lpn) -> Buffered {
        if let Some(slot) = self.slot_of.get(lpn.get()) {
            // A resident page becomes the most recently used; one whose eviction is in flight is
            // updated in place (the program takes the newest data).
            if self.pages.list_of(slot).is_some() {
                self.pages.move_to_front(RESIDENT, slot);
            }
            self.stats.write_hits += 1;
            return Buffered { evict: None, waits: false };
        }
        let slot = self.free.pop().unwrap_or_else(|| self.pages.add_slot());
        *self.pages.payload_mut(slot) = lpn.get();
        self.slot_of.insert(lpn.get(), slot);
        self.pages.push_front(RESIDENT, slot);
        if self.occupied() <= self.capacity {
            return Buffered { evict: None, waits: false };
        }
        let victim = self.pages.back(RESIDENT).expect("a full buffer holds the page just written");
        self.pages.remove(victim);
        self.evicting += 1;
        self.stats.evictions += 1;
        let waits = self.occupied() > self.capacity;
        if waits {
            self.overflow += 1;
            self.stats.waited_pages += 1;
        }
        Buffered { evict: Some(Lpn::new(*self.pages.payload(victim))), waits }
    }

    /// The page the buffer would evict `depth` evictions from now if nothing changed (0: the
    /// next one), for prefetching what its write will touch. The slot one further is brought
    /// toward the CPU cache: asked again one eviction later, the walk reads only cached slots
    /// (its last step was a cache miss per eviction).
    pub fn upcoming_victim(&self, depth: u32) -> Option<Lpn> {
        let mut slot = self.pages.back(RESIDENT)?;
        for _ in 0..depth {
            slot = self.pages.toward_front(slot)?;
        }
        if let Some(after) = self.pages.toward_front(slot) {
            self.pages.prefetch(after);
        }
        Some(Lpn::new(*self.pages.payload(slot)))
    }

    /// The program of the evicted `lpn` completed: its slot is free. Returns whether a waiting
    /// host page write takes it.
    pub fn evicted(&mut self, lpn: Lpn) -> bool {
        let slot = self.slot_of.remove(lpn.get()).expect("an evicted page is in the buffer");
        debug_assert_eq!(self.pages.list_of(slot), None, "{lpn} was being evicted");
        self.evicting -= 1;
        self.free.push(slot);
        self.release()
    }

    /// A host trim of `lpn`: a buffered copy is dropped (a slot frees); one being evicted is
    /// left to its program. Returns whether a waiting host page write takes the freed slot.
    pub fn trim(&mut self, lpn: Lpn) -> bool {
        let Some(slot) = self.resident_slot(lpn) else { return false };
        self.drop_resident(slot, lpn);
        self.release()
    }

    /// A slot was freed: the first waiting write takes it, if any.
    fn release(&mut self) -> bool {
        if self.overflow == 0 {
            return false;
        }
        self.overflow -= 1;
        true
    }

    fn occupied(&self) -> u32 {
        self.pages.len(RESIDENT) + self.evicting
    }

    /// Empties the buffer of its dirty pages, oldest first (a power loss: they are flushed to
    /// flash or lost), and releases every waiting write. Pages being evicted stay: their
    /// programs are under way.
    pub fn take_dirty(&mut self) -> Vec<Lpn> {
        let slots: Vec<u32> = self.pages.iter_from_back(RESIDENT).collect();
        let dirty: Vec<Lpn> = slots.iter().map(|&slot| Lpn::new(*self.pages.payload(slot))).collect();
        for (&slot, &lpn) in slots.iter().zip(&dirty) {
            self.drop_resident(slot, lpn);
        }
        self.overflow = 0;
        dirty
    }

    /// Bytes of simulator memory it takes.
    pub fn state_bytes(&self) -> usize {
        self.pages.memory_bytes() + self.slot_of.memory_bytes() + self.free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpns(v: &[u32]) -> Vec<Lpn> {
        v.iter().map(|&n| Lpn::new(n)).collect()
    }

    #[test]
    fn a_full_buffer_evicts_its_least_recently_used_page_and_the_writer_waits_for_its_program() {
        let mut b = WriteBuffer::new(2);
        assert_eq!(b.write(Lpn::new(1)), Buffered { evict: None, waits: false });
        assert_eq!(b.write(Lpn::new(2)), Buffered { evict: None, waits: false });
        // A hit refreshes page 1, so page 2 is the least recently used.
        assert_eq!(b.write(Lpn::new(1)), Buffered { evict: None, waits: false });
        assert_eq!(b.write(Lpn::new(3)), Buffered { evict: Some(Lpn::new(2)), waits: true });
        assert!(b.read(Lpn::new(2)), "a page being evicted is still served from the buffer");
        assert!(!b.read(Lpn::new(9)));
        // Writing page 2 again while its eviction is in flight updates it in place.
        assert_eq!(b.write(Lpn::new(2)), Buffered { evict: None, waits: false });
        assert!(b.evicted(Lpn::new(2)), "the freed slot goes to the waiting write of page 3");
        assert!(!b.read(Lpn::new(2)));
        let s = &b.stats;
        assert_eq!((s.read_hits, s.write_hits, s.evictions, s.waited_pages), (1, 2, 1, 1));
    }

    #[test]
    fn a_trim_frees_a_slot_and_a_power_loss_takes_the_dirty_pages_oldest_first() {
        let mut b = WriteBuffer::new(2);
        b.write(Lpn::new(4));
        b.write(Lpn::new(5));
        assert_eq!(b.write(Lpn::new(6)), Buffered { evict: Some(Lpn::new(4)), waits: true });
        assert!(b.trim(Lpn::new(5)), "the slot page 5 held goes to the waiting write");
        assert!(!b.trim(Lpn::new(4)), "page 4 is being evicted: its program goes on");
        // Page 6 (now alone and least recently used) is evicted for page 7, which waits.
        assert_eq!(b.write(Lpn::new(7)), Buffered { evict: Some(Lpn::new(6)), waits: true });
        assert_eq!(b.take_dirty(), lpns(&[7]));
        assert!(b.read(Lpn::new(4)), "the evictions in flight stay");
        assert!(!b.evicted(Lpn::new(4)), "nobody waits any more");
    }

    #[test]
    fn the_upcoming_victims_are_the_resident_pages_in_lru_order() {
        let mut b = WriteBuffer::new(3);
        for n in [1, 2, 3] {
            b.write(Lpn::new(n));
        }
        b.write(Lpn::new(1));
        let upcoming: Vec<Option<u32>> = (0..4).map(|d| b.upcoming_victim(d).map(|l| l.get())).collect();
        assert_eq!(upcoming, [Some(2), Some(3), Some(1), None]);
        // Page 2 is evicted for page 4: it is no longer upcoming.
        assert_eq!(b.write(Lpn::new(4)).evict, Some(Lpn::new(2)));
        assert_eq!(b.upcoming_victim(0), Some(Lpn::new(3)));
        assert_eq!(b.upcoming_victim(2), Some(Lpn::new(4)));
    }
}
