//! Delta-FTL's mapping state (paper 001 §4.3.3-4.3.5): the PMT (LPN -> the page in original form,
//! or the old version a delta applies to, with the delta flag), the DMT (old version's PPN ->
//! where its delta lives), the Temp Buffer that packs deltas into delta-log pages, the
//! accounting of invalid deltas inside delta pages, and GC's merge-while-moving.
//!
//! The simulator keys the DMT by LPN rather than by the old version's PPN: an LPN in delta form
//! has exactly one old version (its PMT entry), so the two keys find the same delta, and the
//! LPN is known before any lookup (the request lookahead prefetches its bucket) and does not
//! change when GC moves the old version. An LPN is in delta form exactly when the DMT holds it,
//! which is the PMT's delta flag.
//!
//! Kept apart from the block manager so GC can call back into it ([`Relocate`]).

use super::hotness::{Counts, HotnessTracker};
use super::temp_buffer::TempBuffer;
use super::{DATA, DLA};
use crate::error::{Result, SimError};
use crate::flash::deltas::HEADER_ENTRY_BYTES;
use crate::flash::{CpuTask, DeltaEntry, Lpn, PageKind, Ppn, Purpose, Spare};
use crate::ftl::common::cache::LpnMap;
use crate::ftl::common::{BlockManager, Relocate};
use crate::ftl::{DeltaAt, FtlCtx};
use crate::metrics::DeltaStats;

/// Garbage inside delta pages is credited to GC in 1/64 of a page (64 B of a 4 KB page).
pub const GARBAGE_RESOLUTION: u32 = 64;

/// Where the delta of an LPN in delta form lives (the DMT's value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delta {
    /// The delta page, or `None` while the delta waits in the Temp Buffer.
    pub page: Option<Ppn>,
    pub version: u32,
    pub bytes: u32,
}

/// What GC and the invalidations need to know of a delta page.
#[derive(Debug, Clone, Copy, Default)]
struct DeltaPage {
    /// Deltas still valid.
    live: u32,
    /// Bytes of invalid deltas (with their header entries).
    invalid_bytes: u32,
    /// Of those, what was credited to GC, in `1 / GARBAGE_RESOLUTION` of a page.
    credited: u32,
}

/// When a delta-form page goes back to original form: it is read-hot, or no longer write-hot.
#[inline]
pub fn wants_merge(counts: Counts, threshold: u32) -> bool {
    counts.reads >= threshold || counts.writes < threshold
}

pub struct DeltaMap {
    /// PMT: the page in original form, or the old version a delta applies to.
    pub pmt: Vec<Option<Ppn>>,
    /// DMT: LPN in delta form -> its delta (see the module's note on the key).
    dmt: LpnMap<Delta>,
    pub temp: TempBuffer,
    /// Delta page's PPN -> its accounting, for the pages holding a valid delta.
    pages: LpnMap<DeltaPage>,
    pub hotness: HotnessTracker,
    pub hot_threshold: u32,
    page_bytes: u32,
    /// Sequence number of the next delta page (its spare's logical number and version).
    next_page_seq: u32,
    pub stats: DeltaStats,
}

impl DeltaMap {
    pub fn new(logical_pages: u32, page_bytes: u32, hotness: HotnessTracker, hot_threshold: u32) -> Self {
        DeltaMap {
            pmt: crate::mem::unmapped_vec(logical_pages as usize),
            dmt: LpnMap::with_capacity(0),
            temp: TempBuffer::new(page_bytes),
            pages: LpnMap::with_capacity(0),
            hotness,
            hot_threshold,
            page_bytes,
            next_page_seq: 1,
            stats: DeltaStats::default(),
        }
    }

    /// The delta of an LPN in delta form.
    #[inline]
    pub fn delta_of(&self, lpn: Lpn) -> Option<Delta> {
        self.dmt.get(lpn.get())
    }

    /// Whether `lpn` is in delta form (the PMT's delta flag).
    #[inline]
    pub fn in_delta(&self, lpn: Lpn) -> bool {
        self.delta_of(lpn).is_some()
    }

    /// The LPNs in delta form, in LPN order.
    pub fn lpns_in_delta(&self) -> Vec<Lpn> {
        let mut lpns: Vec<Lpn> = self.dmt.iter().map(|(lpn, _)| Lpn::new(lpn)).collect();
        lpns.sort_unstable();
        lpns
    }

    /// Brings the DMT bucket of `lpn` toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch_delta(&self, lpn: Lpn) {
        self.dmt.prefetch(lpn.get());
    }

    /// Brings the accounting of the delta page holding `lpn`'s delta toward the CPU cache (a
    /// hint; it reads the DMT, which [`DeltaMap::prefetch_delta`] brought earlier).
    #[inline]
    pub fn prefetch_delta_page(&self, lpn: Lpn) {
        if let Some(Delta { page: Some(page), .. }) = self.delta_of(lpn) {
            self.pages.prefetch(page.get());
        }
    }

    /// Delta pages holding a valid delta.
    #[inline]
    pub fn delta_pages(&self) -> usize {
        self.pages.len()
    }

    /// Where the newest version of `lpn` lives when it is in delta form.
    pub fn delta_at(&self, lpn: Lpn) -> Option<DeltaAt> {
        self.delta_of(lpn).map(|d| match d.page {
            Some(page) => DeltaAt::Flash(page),
            None => DeltaAt::Ram(d.version),
        })
    }

    /// Drops the delta of `lpn` (the LPN leaves delta form); `overwritten` when a new write of the
    /// LPN is the cause (counted for P_ow).
    pub fn drop_delta(
        &mut self,
        blocks: &mut BlockManager,
        lpn: Lpn,
        overwritten: bool,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let delta = self.dmt.remove(lpn.get()).expect("the DMT holds the delta of an LPN in delta form");
        match delta.page {
            None => {
                self.temp.remove(lpn.get());
            }
            Some(page) => {
                self.stats.deltas_overwritten += overwritten as u64;
                self.invalidate_delta(blocks, page, delta.bytes, ctx)?;
            }
        }
        Ok(())
    }

    /// One delta of `page` became invalid: credit its bytes to GC, or invalidate the page once
    /// none of its deltas is valid.
    fn invalidate_delta(&mut self, blocks: &mut BlockManager, page: Ppn, bytes: u32, ctx: &mut FtlCtx) -> Result<()> {
        let state = self.pages.get_mut(page.get()).expect("a delta page with a valid delta is tracked");
        state.live -= 1;
        state.invalid_bytes += bytes + HEADER_ENTRY_BYTES;
        if state.live == 0 {
            let credited = state.credited;
            self.pages.remove(page.get());
            blocks.withdraw_garbage(ctx.flash.addressing().block_of(page), credited, ctx.flash)?;
            return blocks.invalidate(page, ctx.flash);
        }
        self.credit_invalid_bytes(blocks, page, ctx)
    }

    /// Credits to GC what is due for the invalid bytes of `page`: never a whole page's worth
    /// while a delta is valid, so the page's weight stays above 0.
    fn credit_invalid_bytes(&mut self, blocks: &mut BlockManager, page: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let state = self.pages.get_mut(page.get()).expect("tracked");
        let due = (state.invalid_bytes as u64 * GARBAGE_RESOLUTION as u64 / self.page_bytes as u64) as u32;
        let due = due.min(GARBAGE_RESOLUTION - 1);
        if due > state.credited {
            blocks.credit_garbage(ctx.flash.addressing().block_of(page), due - state.credited, ctx.flash)?;
            state.credited = due;
        }
        Ok(())
    }

    /// Puts the delta of `lpn` (whose base is `pmt[lpn]`) in the Temp Buffer, committing the
    /// buffer first if the delta does not fit, and drops the LPN's previous delta (`overwritten`:
    /// a new write replaces it). The previous delta stays valid until then, so a collection the
    /// commit runs cannot erase it before the new one is safe in the buffer.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        blocks: &mut BlockManager,
        lpn: Lpn,
        version: u32,
        bytes: u32,
        overwritten: bool,
        purpose: Purpose,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        // A collection the commit runs may leave deltas it moved in the buffer: commit again.
        while !self.temp.fits(bytes) {
            self.commit(blocks, purpose, ctx)?;
        }
        if self.in_delta(lpn) {
            self.drop_delta(blocks, lpn, overwritten, ctx)?;
        }
        debug_assert!(self.pmt[lpn.index()].is_some(), "a delta has an old version");
        self.temp.push(DeltaEntry { lpn: lpn.get(), version, bytes });
        self.dmt.insert(lpn.get(), Delta { page: None, version, bytes });
        Ok(())
    }

    /// Writes the Temp Buffer to a delta page of the next unit in turn (Fig. 4.2's layout).
    pub fn commit(&mut self, blocks: &mut BlockManager, purpose: Purpose, ctx: &mut FtlCtx) -> Result<()> {
        if self.temp.is_empty() {
            return Ok(());
        }
        // Sealed first: a collection the allocation runs may append (and commit) deltas it moves.
        self.temp.seal();
        let unit = blocks.next_unit(DLA);
        let ppn = blocks.allocate(unit, DLA, self, ctx)?;
        // The collection may have merged or dropped sealed deltas: keep the ones still current.
        let entries: Box<[DeltaEntry]> = self.temp.take_sealed().into_iter().filter(|e| self.buffered(e)).collect();
        let seq = self.next_page_seq;
        self.next_page_seq += 1;
        if let Err(e) = ctx.program_deltas(ppn, seq, seq, entries.clone(), purpose) {
            // A power loss cut the program: the deltas are still in the (capacitor-backed) buffer.
            self.temp.restore(entries.into_vec());
            return Err(e);
        }
        if purpose == Purpose::Gc {
            self.stats.dla_pages_gc += 1;
        } else {
            self.stats.dla_pages += 1;
        }
        if entries.is_empty() {
            return blocks.invalidate(ppn, ctx.flash);
        }
        for e in entries.iter() {
            self.dmt.get_mut(e.lpn).expect("a buffered delta is in the DMT").page = Some(ppn);
        }
        self.stats.deltas_committed += entries.len() as u64;
        self.pages.insert(ppn.get(), DeltaPage { live: entries.len() as u32, ..DeltaPage::default() });
        Ok(())
    }

    /// Whether the buffered delta `e` is still the LPN's current delta.
    fn buffered(&self, e: &DeltaEntry) -> bool {
        self.dmt.get(e.lpn).is_some_and(|d| d.page.is_none() && d.version == e.version)
    }

    /// Programs the original form of `lpn` (a host write, or a merge bringing back `version`),
    /// then drops its delta and invalidates its old page: both stay valid while the new page is
    /// allocated, so a collection that allocation runs moves them rather than erasing the only
    /// copy before the new one is programmed.
    #[allow(clippy::too_many_arguments)]
    pub fn write_original(
        &mut self,
        blocks: &mut BlockManager,
        lpn: Lpn,
        version: u32,
        unit: u32,
        overwritten: bool,
        purpose: Purpose,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        let ppn = blocks.allocate(unit, DATA, self, ctx)?;
        if self.in_delta(lpn) {
            self.drop_delta(blocks, lpn, overwritten, ctx)?;
        }
        if let Some(old) = self.pmt[lpn.index()].take() {
            self.invalidate_base(blocks, old, ctx)?;
        }
        ctx.program(ppn, PageKind::Data, lpn, version, purpose)?;
        self.pmt[lpn.index()] = Some(ppn);
        Ok(ppn)
    }

    /// Invalidates a page of the page mapping area, counting the blocks that come to hold an
    /// invalid page (the lifetime model's t).
    pub fn invalidate_base(&mut self, blocks: &mut BlockManager, old: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let pbn = ctx.flash.addressing().block_of(old);
        if blocks.valid_count(pbn, ctx.flash) == ctx.flash.write_pointer(pbn) {
            self.stats.pma_blocks_dirtied += 1;
        }
        blocks.invalidate(old, ctx.flash)
    }

    /// Merges `lpn`'s delta with its old version into a page in original form: `read_delta`
    /// reads the delta page first, `decode` decompresses the delta (a merge after a read finds
    /// the page already reconstructed).
    fn merge(
        &mut self,
        blocks: &mut BlockManager,
        lpn: Lpn,
        read_delta: bool,
        decode: bool,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let delta = self.delta_of(lpn).expect("merging an LPN in delta form");
        if let (true, Some(page)) = (read_delta, delta.page) {
            ctx.read(page, Purpose::Gc)?;
        }
        if decode {
            let at = delta.page.or(self.pmt[lpn.index()]).expect("a delta has an old version");
            ctx.compute(CpuTask::Decompress, Purpose::Gc, at)?;
        }
        let unit = blocks.host_unit(DATA, lpn);
        self.write_original(blocks, lpn, delta.version, unit, false, Purpose::Gc, ctx)?;
        Ok(())
    }

    /// A read found `lpn` read-hot in delta form: merge it now (the page was reconstructed for
    /// the read, so only the program remains).
    pub fn merge_after_read(&mut self, blocks: &mut BlockManager, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        self.merge(blocks, lpn, false, false, ctx)?;
        self.stats.merges_on_read += 1;
        Ok(())
    }

    /// The periodic scan found `lpn` in delta form and no longer write-hot: merge it (read the
    /// old version and the delta, decompress, program the original).
    pub fn merge_cold(&mut self, blocks: &mut BlockManager, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        let base = self.pmt[lpn.index()].expect("an LPN in delta form has an old version");
        let on_flash = self.delta_of(lpn).is_some_and(|d| d.page.is_some());
        ctx.read(base, Purpose::Gc)?;
        self.merge(blocks, lpn, true, true, ctx)?;
        self.stats.merges_in_scan += 1;
        self.stats.scan_reads += 1 + on_flash as u64;
        Ok(())
    }

    /// GC moves the valid delta page `old`: each of its valid deltas is merged (read-hot or
    /// write-cold LPN: read the old version, program the original) or re-appended to the Temp
    /// Buffer (spec §4.7 [REC]); the last one to leave invalidates the page.
    fn move_delta_page(&mut self, blocks: &mut BlockManager, old: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let entries: Vec<DeltaEntry> = ctx.flash.deltas(old).to_vec();
        for e in entries {
            let lpn = Lpn::new(e.lpn);
            let current = self.delta_of(lpn).is_some_and(|d| d.page == Some(old) && d.version == e.version);
            if !current {
                continue;
            }
            if wants_merge(self.hotness.counts(lpn), self.hot_threshold) {
                let base = self.pmt[lpn.index()].expect("an LPN in delta form has an old version");
                ctx.read(base, Purpose::Gc)?;
                self.merge(blocks, lpn, false, true, ctx)?;
                self.stats.merges_in_gc += 1;
                self.stats.gc_moved_page_equivalents += 1.0;
            } else {
                self.append(blocks, lpn, e.version, e.bytes, false, Purpose::Gc, ctx)?;
                self.stats.gc_moved_page_equivalents += (e.bytes + HEADER_ENTRY_BYTES) as f64 / self.page_bytes as f64;
            }
        }
        if self.pages.get(old.get()).is_some() {
            return Err(SimError::Other(format!("GC moved every delta of delta page {old}, but it is still tracked")));
        }
        Ok(())
    }

    /// Recovery: `lpn` (whose old version is in the PMT) is in delta form with `delta`.
    pub fn restore_delta(&mut self, lpn: Lpn, delta: Delta) {
        debug_assert!(self.pmt[lpn.index()].is_some(), "a delta has an old version");
        self.dmt.insert(lpn.get(), delta);
    }

    /// Recovery: tracks a delta page holding `live` valid deltas and `invalid_bytes` of invalid
    /// ones (header entries included), crediting that garbage.
    pub fn track_recovered_page(
        &mut self,
        blocks: &mut BlockManager,
        page: Ppn,
        live: u32,
        invalid_bytes: u32,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        self.pages.insert(page.get(), DeltaPage { live, invalid_bytes, credited: 0 });
        self.credit_invalid_bytes(blocks, page, ctx)
    }

    /// The sequence number recovery found on the newest delta page.
    pub fn set_next_page_seq(&mut self, seq: u32) {
        self.next_page_seq = seq;
    }

    /// Forgets all SRAM state (power loss).
    pub fn clear(&mut self) {
        self.pmt.fill(None);
        self.dmt.clear();
        self.temp.clear();
        self.pages.clear();
        self.hotness.clear();
    }

    /// Checks the DMT against the PMT and the delta pages' accounting against their headers.
    pub fn check(&self, flash: &crate::flash::FlashArray) -> std::result::Result<(), String> {
        let mut live: LpnMap<u32> = LpnMap::with_capacity(self.pages.len());
        for (lpn, delta) in self.dmt.iter() {
            if self.pmt[lpn as usize].is_none() {
                return Err(format!("LPN {lpn} in delta form has no old version"));
            }
            match delta.page {
                Some(page) => {
                    let held = flash.deltas(page).iter().any(|e| e.lpn == lpn && e.version == delta.version);
                    if !held {
                        return Err(format!("the delta of LPN {lpn} is not on delta page {page}"));
                    }
                    let count = live.get(page.get()).unwrap_or(0);
                    live.insert(page.get(), count + 1);
                }
                None if !self.temp.holds(lpn, delta.version) => {
                    return Err(format!("the delta of LPN {lpn} is in neither a delta page nor the Temp Buffer"));
                }
                None => {}
            }
        }
        for (page, state) in self.pages.iter() {
            if live.get(page).unwrap_or(0) != state.live {
                return Err(format!(
                    "delta page {page} counts {} valid deltas, the DMT {:?}",
                    state.live,
                    live.get(page)
                ));
            }
        }
        Ok(())
    }

    /// Simulator memory.
    pub fn state_bytes(&self) -> usize {
        self.pmt.len() * 4 + self.dmt.memory_bytes() + self.pages.memory_bytes() + self.hotness.state_bytes()
    }
}

impl Relocate for DeltaMap {
    /// GC will soon move (or merge) the page with `spare`: its PMT entry, DMT bucket and hotness
    /// slot index, which [`Relocate::relocated`] and [`Relocate::take_over`] read.
    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        if spare.kind != PageKind::Data {
            return;
        }
        let lpn = Lpn::new(spare.logical);
        if let Some(entry) = self.pmt.get(lpn.index()) {
            crate::mem::prefetch(entry);
        }
        self.prefetch_delta(lpn);
        self.hotness.prefetch(lpn, false);
    }

    #[inline]
    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, _: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
        // An old version in delta form keeps its delta: the DMT is keyed by LPN.
        self.pmt[spare.logical as usize] = Some(new);
        self.stats.gc_moved_page_equivalents += 1.0;
        Ok(())
    }

    /// Merge while moving (spec §4.7): a delta page's deltas are merged or re-appended; the old
    /// version of a read-hot or write-cold delta is merged with its delta. Either invalidates `old`.
    fn take_over(&mut self, blocks: &mut BlockManager, spare: Spare, old: Ppn, ctx: &mut FtlCtx) -> Result<bool> {
        if spare.kind == PageKind::Delta {
            self.move_delta_page(blocks, old, ctx)?;
            return Ok(true);
        }
        let lpn = Lpn::new(spare.logical);
        if !self.in_delta(lpn) || !wants_merge(self.hotness.counts(lpn), self.hot_threshold) {
            return Ok(false);
        }
        self.merge(blocks, lpn, true, true, ctx)?;
        self.stats.merges_in_gc += 1;
        self.stats.gc_moved_page_equivalents += 1.0;
        Ok(true)
    }
}
