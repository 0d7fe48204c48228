//! What an FTL knows about which of its pages are still valid: a validity tracker kept in the
//! FTL's SRAM, lost at power loss and rebuilt by recovery. The flash array only knows whether a
//! page is programmed; a programmed page is valid until the FTL invalidates it.
//!
//! [`Validity`] keeps one bit per page (set when the page is invalidated) and an invalid count per
//! block. What the modelled FTL knows depends on `gc.validity`:
//!
//! - `bitmap`: both, so GC learns validity for free, at the SRAM cost of a page bitmap (paper
//!   000 chapters 5-7);
//! - `counters`: the per-block counts only (paper 000 chapter 8, one byte per block). GC then
//!   reads every programmed page of its victim and asks the FTL's mapping whether the page is
//!   current ([`super::Relocate::is_current`]); the bits stay as the simulator's ground truth,
//!   which checks every answer and the invariants, and are never consulted for a decision.

use crate::config::ValidityTracking;
use crate::flash::{Addressing, BlockPage, FlashArray, Geometry, Pbn, Ppn};
use crate::ftl::SramItem;
use crate::mem::zeroed_vec;

pub struct Validity {
    tracking: ValidityTracking,
    addressing: Addressing,
    invalid_bits: Vec<u64>,
    /// Invalidated pages per block since its erase.
    invalid: Vec<u32>,
}

impl Validity {
    pub fn new(geometry: &Geometry, tracking: ValidityTracking) -> Self {
        Validity {
            tracking,
            addressing: geometry.addressing(),
            invalid_bits: zeroed_vec((geometry.total_pages() as usize).div_ceil(64)),
            invalid: zeroed_vec(geometry.total_blocks() as usize),
        }
    }

    /// Whether the modelled FTL knows each page's validity (else only each block's count).
    #[inline]
    pub fn knows_pages(&self) -> bool {
        self.tracking == ValidityTracking::Bitmap
    }

    /// The SRAM the modelled FTL spends on validity: a bit per page, or a byte per block.
    pub fn sram(&self, geometry: &Geometry) -> SramItem {
        match self.tracking {
            ValidityTracking::Bitmap => SramItem {
                structure: "GC valid-page bitmap".into(),
                bytes: (geometry.total_pages() as u64).div_ceil(8),
            },
            // ILog's BIFT holds the counters (the block manager reports the log's SRAM).
            ValidityTracking::Counters | ValidityTracking::Ilog => SramItem {
                structure: "GC invalid-page counters (1 B per block)".into(),
                bytes: geometry.total_blocks() as u64,
            },
        }
    }

    #[inline]
    fn is_invalidated(&self, ppn: Ppn) -> bool {
        self.invalid_bits[ppn.index() >> 6] & (1u64 << (ppn.get() & 63)) != 0
    }

    /// Whether `ppn` holds valid data: programmed and not invalidated.
    #[inline]
    pub fn is_valid(&self, ppn: Ppn, flash: &FlashArray) -> bool {
        flash.is_programmed(ppn) && !self.is_invalidated(ppn)
    }

    /// [`Validity::is_valid`] of a page whose block is known.
    #[inline]
    pub fn is_valid_at(&self, page: BlockPage, flash: &FlashArray) -> bool {
        flash.is_programmed_at(page) && !self.is_invalidated(page.ppn)
    }

    /// Valid pages of a block.
    #[inline]
    pub fn valid_count(&self, pbn: Pbn, flash: &FlashArray) -> u32 {
        flash.programmed_count(pbn) - self.invalid[pbn.index()]
    }

    /// Marks a valid page invalid; returns its block and the block's remaining valid count, or
    /// `None` if the page was not valid (free, or invalid already).
    #[inline(always)]
    pub fn invalidate(&mut self, ppn: Ppn, flash: &FlashArray) -> Option<(Pbn, u32)> {
        if !self.is_valid(ppn, flash) {
            return None;
        }
        let page = self.addressing.block_page(ppn);
        self.invalidate_known_valid(page, flash);
        Some((page.pbn, self.valid_count(page.pbn, flash)))
    }

    /// Marks invalid a page its caller has just found valid (GC's move): no second check.
    #[inline(always)]
    pub fn invalidate_known_valid(&mut self, page: BlockPage, flash: &FlashArray) {
        debug_assert!(self.is_valid_at(page, flash), "PPN {} is not valid", page.ppn);
        self.invalid_bits[page.ppn.index() >> 6] |= 1u64 << (page.ppn.get() & 63);
        self.invalid[page.pbn.index()] += 1;
    }

    /// Forgets the invalidations of an erased block: its bits cleared a word at a time.
    pub fn erased(&mut self, pbn: Pbn) {
        let pages_per_block = self.addressing.pages_per_block().get() as usize;
        let first = pbn.index() * pages_per_block;
        let end = first + pages_per_block;
        let mut page = first;
        while page < end {
            let bit = page & 63;
            let count = (64 - bit).min(end - page);
            let mask = if count == 64 { u64::MAX } else { ((1u64 << count) - 1) << bit };
            self.invalid_bits[page >> 6] &= !mask;
            page += count;
        }
        self.invalid[pbn.index()] = 0;
    }

    /// Forgets everything (power loss): every programmed page counts as valid until recovery
    /// invalidates it again.
    pub fn clear(&mut self) {
        self.invalid_bits.fill(0);
        self.invalid.fill(0);
    }

    /// Brings the state of `ppn` toward the CPU cache ahead of an invalidation: its bit and its
    /// block's count.
    #[inline]
    pub fn prefetch(&self, ppn: Ppn) {
        if let Some(bits) = self.invalid_bits.get(ppn.index() >> 6) {
            crate::mem::prefetch(bits);
            crate::mem::prefetch(&self.invalid[self.addressing.block_of(ppn).index()]);
        }
    }

    /// Checks each block's invalid count against its bits, and that no free page is marked.
    pub fn check(&self, flash: &FlashArray) -> Result<(), String> {
        let g = flash.geometry();
        for pbn in g.blocks() {
            let marked = g.pages_of(pbn).filter(|&p| self.is_invalidated(p)).count() as u32;
            if marked != self.invalid[pbn.index()] {
                return Err(format!(
                    "block {pbn} records {} invalid pages but marks {marked}",
                    self.invalid[pbn.index()]
                ));
            }
            if let Some(ppn) = g.pages_of(pbn).find(|&p| self.is_invalidated(p) && !flash.is_programmed(p)) {
                return Err(format!("free page PPN {ppn} is marked invalid"));
            }
        }
        Ok(())
    }

    /// Simulator memory of the tracker.
    pub fn state_bytes(&self) -> usize {
        self.invalid_bits.len() * 8 + self.invalid.len() * 4
    }
}
