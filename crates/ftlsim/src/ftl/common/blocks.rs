//! The block manager: the [`FreePool`], the FTL's write [`Frontiers`], the [`GcEngine`] and the
//! FTL's [`Validity`] tracker, and the role of every block among them. Every FTL that writes pages out of place allocates through
//! it; an FTL that places pages itself (block-mapped and log-block schemes) takes whole blocks
//! with [`BlockManager::take_block`] and gives them back erased with [`BlockManager::release_block`].
//!
//! GC runs when a unit needs a new block and has at most [`gc_threshold`] free blocks; it
//! reclaims victims until the unit has more. Moves go to the open block of the page's stream in
//! the victim's unit. GC never nests: allocations made while collecting (moves, and any mapping
//! write-backs the FTL does from [`Relocate::relocated`]) draw on the unit's reserve, in that unit.

use super::frontier::{Frontiers, StreamId, StreamSpec};
use super::gc::{gc_threshold, GcEngine};
use super::ilog::Ilog;
use super::pool::{spread_order, FreePool};
use super::validity::Validity;
use super::VictimIndex;
use crate::config::{Config, Striping, ValidityTracking};
use crate::error::{Result, SimError};
use crate::flash::{Addressing, BlockPage, BlockState, FlashArray, Geometry, Lpn, PageKind, Pbn, Ppn, Purpose, Spare};
use crate::ftl::FtlCtx;
use crate::metrics::{ClusterStats, GcStats, IlogStats};

/// What the FTL does when GC moves one of its valid pages.
pub trait Relocate {
    /// The page with `spare` moved from `old` to `new`; update the mapping. `blocks` is available
    /// for allocations (for example a translation-page write-back).
    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()>;

    /// Asked before GC moves the page with `spare`: the stream it goes to, or `None` (the
    /// default) for the first declared stream of its kind. Hot/cold separation answers here.
    fn gc_destination(&self, _spare: Spare) -> Option<StreamId> {
        None
    }

    /// Asked before GC moves the valid page `old` (already read): whether the FTL moved its
    /// content itself and invalidated `old` (Delta-FTL merges a delta with its old version, or
    /// re-appends a delta page's valid deltas to its buffer). The default: GC copies it.
    fn take_over(&mut self, _blocks: &mut BlockManager, _spare: Spare, _old: Ppn, _ctx: &mut FtlCtx) -> Result<bool> {
        Ok(false)
    }

    /// Whether the programmed page `ppn` holding `spare` is still current (the mapping points to
    /// it), asked by GC when the FTL keeps per-block invalid counters only (`gc.validity =
    /// "counters"`). Any flash read the answer needs goes through `ctx` and counts. An FTL that
    /// answers declares it in its registry entry (`validates_by_mapping`).
    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        let _ = (ppn, spare, ctx);
        Err(SimError::config("gc.validity", "\"counters\" needs an FTL that can tell whether a page is current"))
    }

    /// A hint that the page with `spare` will be relocated soon (GC looks a few pages ahead in
    /// its victim); bring its mapping entry toward the cache. Must not change any state.
    fn prefetch_relocation(&self, _spare: Spare) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRole {
    Free,
    /// A stream's open block.
    Open,
    /// Written and filed for victim selection.
    Closed,
    /// Being collected.
    Victim,
    /// Taken whole by the FTL, which places pages in it itself; GC never selects it.
    Owned,
    /// Erased and held by the FTL as the destination of its own GC (CPM's reserved block).
    Reserved,
}

pub struct BlockManager {
    pub(super) geometry: Geometry,
    /// The geometry's address arithmetic, divisors precomputed (every invalidation uses it).
    addressing: Addressing,
    pub(super) pool: FreePool,
    pub(super) frontiers: Frontiers,
    pub(super) gc: GcEngine,
    pub(super) validity: Validity,
    /// `gc.validity = "ilog"`: the invalidation log, and the stream of its pages (after the FTL's).
    pub(super) ilog: Option<Box<Ilog>>,
    log_stream: StreamId,
    pub(super) role: Vec<BlockRole>,
    striping: Striping,
    /// `gc.background_free_blocks` (0: no background GC).
    background_free_blocks: u32,
}

impl BlockManager {
    /// A block manager for an FTL that writes the given streams. Its spare blocks are checked
    /// by [`Config::check_spare_blocks`].
    pub fn new(config: &Config, streams: &[StreamSpec]) -> Self {
        let geometry = config.device.geometry.clone();
        let ilog = (config.gc.validity == ValidityTracking::Ilog)
            .then(|| Box::new(Ilog::new(&geometry, config.gc.ilog_queue_bytes, config.gc.ilog_pages)));
        let log_stream = StreamId::new(streams.len() as u8);
        let mut streams = streams.to_vec();
        if ilog.is_some() {
            streams.push(StreamSpec::new("invalidation log", PageKind::InvalidationLog));
        }
        let units = config.device.allocation_units();
        let pool = FreePool::new(&geometry, config.device.allocation_unit, units, config.gc.free_block_choice);
        let victims = VictimIndex::new(
            units,
            geometry.data_pages_per_block(),
            1,
            pool.units_of_blocks().to_vec(),
            config.gc.policy,
        );
        BlockManager {
            gc: GcEngine::new(victims, config.gc.policy, gc_threshold(config.gc.free_blocks_low, streams.len() as u32)),
            frontiers: Frontiers::new(&streams, spread_order(&geometry, config.device.allocation_unit)),
            ilog,
            log_stream,
            striping: config.device.striping,
            background_free_blocks: config.gc.background_free_blocks,
            role: vec![BlockRole::Free; geometry.total_blocks() as usize],
            validity: Validity::new(&geometry, config.gc.validity),
            pool,
            addressing: geometry.addressing(),
            geometry,
        }
    }

    /// Lets the FTL credit garbage inside valid pages in `1 / resolution` of a page
    /// ([`BlockManager::credit_garbage`]: Delta-FTL's invalid deltas, fractions of a page); GC's
    /// victim policies then weigh each block by its valid pages x `resolution` minus its credited
    /// garbage instead of its valid pages. The credit is SRAM state: a power loss drops it and the
    /// FTL's recovery credits it again. Call right after [`BlockManager::new`].
    pub fn with_garbage_resolution(mut self, resolution: u32) -> Self {
        assert!(resolution >= 1, "a garbage resolution is at least 1");
        let (ppb, units) = (self.geometry.data_pages_per_block(), self.pool.units_of_blocks().to_vec());
        let victims = VictimIndex::new(self.units(), ppb, resolution, units, self.gc.policy());
        self.gc.reset(victims);
        self
    }

    /// Records `amount` (in `1 / resolution` of a page) of garbage inside the valid pages of
    /// `pbn`, so GC sees it as reclaimable; fails if the FTL declared no garbage resolution or
    /// the block's credit would exceed its valid pages. The credit is cleared when the block is
    /// erased; before invalidating a page whose garbage it credited, the FTL withdraws that
    /// credit ([`BlockManager::withdraw_garbage`]).
    pub fn credit_garbage(&mut self, pbn: Pbn, amount: u32, flash: &FlashArray) -> Result<()> {
        let resolution = self.garbage_resolution(pbn, "credited")?;
        let valid = self.validity.valid_count(pbn, flash);
        let credit = self.gc.victims().credit(pbn) + amount;
        if credit > valid * resolution {
            let message = format!("{credit} / {resolution} page of garbage credited inside {valid} valid pages");
            return Err(SimError::Block { pbn, message });
        }
        self.gc.victims_mut().set_credit(pbn, credit, valid);
        Ok(())
    }

    /// Takes back `amount` of the garbage credited to `pbn` (its page is about to be invalidated
    /// whole).
    pub fn withdraw_garbage(&mut self, pbn: Pbn, amount: u32, flash: &FlashArray) -> Result<()> {
        self.garbage_resolution(pbn, "withdrawn")?;
        let credit = self.gc.victims().credit(pbn);
        let Some(left) = credit.checked_sub(amount) else {
            let message = format!("{amount} of garbage withdrawn, but only {credit} was credited");
            return Err(SimError::Block { pbn, message });
        };
        let valid = self.validity.valid_count(pbn, flash);
        self.gc.victims_mut().set_credit(pbn, left, valid);
        Ok(())
    }

    /// The garbage resolution the FTL declared, or an error naming what was `done` without one.
    fn garbage_resolution(&self, pbn: Pbn, done: &str) -> Result<u32> {
        match self.gc.victims().resolution() {
            1 => Err(SimError::Block {
                pbn,
                message: format!("garbage {done}, but the FTL declared no garbage resolution"),
            }),
            resolution => Ok(resolution),
        }
    }

    /// The SRAM the FTL spends on knowing validity (`gc.validity`): with ILog, the BIFT (a
    /// LIPN and an invalid count per block, which replace the counters) and the BIFQ (paper 000
    /// Table 8.1: 8 KB + 8 KB; the IPT, 4 B per LIPN, the paper leaves out as negligible).
    pub fn validity_sram(&self) -> crate::ftl::SramItem {
        match &self.ilog {
            Some(log) => crate::ftl::SramItem {
                structure: format!("ILog: BIFT (2 B per block) + BIFQ ({} BIFs)", log.capacity()),
                bytes: self.geometry.total_blocks() as u64 * 2
                    + log.capacity() as u64 * super::ilog::bif_bytes(self.geometry.pages_per_block) as u64,
            },
            None => self.validity.sram(&self.geometry),
        }
    }

    /// The invalidation log's counts (`gc.validity = "ilog"`).
    pub fn ilog_stats(&self) -> Option<IlogStats> {
        self.ilog.as_ref().map(|log| log.stats)
    }

    /// ILog's current invalidation pages, as the FTL's directories list theirs.
    pub fn log_pages(&self) -> Vec<crate::ftl::PageRef> {
        let Some(log) = &self.ilog else { return Vec::new() };
        log.pages()
            .map(|(lipn, ppn)| crate::ftl::PageRef { ppn, kind: PageKind::InvalidationLog, logical: lipn as u32 })
            .collect()
    }

    /// The invalidation log (`gc.validity = "ilog"`).
    pub fn ilog(&self) -> Option<&Ilog> {
        self.ilog.as_deref()
    }

    /// Whether GC would reclaim anything from `pbn`: an invalid page, or credited garbage.
    pub(super) fn has_garbage(&self, pbn: Pbn, flash: &FlashArray) -> bool {
        self.gc.victims().has_garbage(pbn, self.validity.valid_count(pbn, flash))
    }

    pub fn units(&self) -> u32 {
        self.pool.units()
    }

    #[inline]
    pub fn unit_of(&self, pbn: Pbn) -> u32 {
        self.pool.unit_of(pbn)
    }

    /// The next unit for a stream, round robin (spreads writes over dies or planes).
    #[inline]
    pub fn next_unit(&mut self, stream: StreamId) -> u32 {
        self.frontiers.next_unit(stream)
    }

    /// One step of background GC on `unit` (`gc.background_free_blocks`): reclaims a victim if
    /// the unit has at most that many free blocks; returns whether it did.
    pub fn collect_in_background<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<bool> {
        let low = self.background_free_blocks;
        if low > 0 && self.free_blocks(unit) <= low as usize {
            self.reclaim_one(unit, reloc, ctx)
        } else {
            Ok(false)
        }
    }

    /// The unit at `position` of the spread order (wrapping around): where the `position`-th
    /// host write goes on an empty device, under either striping.
    pub fn striped_unit(&self, position: u32) -> u32 {
        self.frontiers.striped_unit(position)
    }

    /// The unit a host write of `lpn` goes to (`device.striping`).
    #[inline]
    pub fn host_unit(&mut self, stream: StreamId, lpn: Lpn) -> u32 {
        match self.striping {
            Striping::Dynamic => self.frontiers.next_unit(stream),
            Striping::Raid0 => self.frontiers.striped_unit(lpn.get()),
        }
    }

    pub fn role(&self, pbn: Pbn) -> BlockRole {
        self.role[pbn.index()]
    }
    pub fn free_blocks(&self, unit: u32) -> usize {
        self.pool.len(unit)
    }
    pub fn total_free_blocks(&self) -> usize {
        self.pool.total()
    }
    pub fn open_block(&self, unit: u32, stream: StreamId) -> Option<Pbn> {
        self.frontiers.open_block(unit, stream)
    }

    /// Whether `ppn` holds valid data, as far as the FTL knows.
    #[inline]
    pub fn is_valid(&self, ppn: Ppn, flash: &FlashArray) -> bool {
        self.validity.is_valid(ppn, flash)
    }

    /// Valid pages of a block, as far as the FTL knows.
    #[inline]
    pub fn valid_count(&self, pbn: Pbn, flash: &FlashArray) -> u32 {
        self.validity.valid_count(pbn, flash)
    }

    /// Blocks reclaimed by GC so far.
    pub fn gc_victims(&self) -> u64 {
        self.gc.reclaimed
    }

    /// Victims and the pages moved out of them, by page kind.
    pub fn gc_stats(&self) -> GcStats {
        self.gc.stats
    }

    /// The next free page of `stream` in `unit`, opening a block (and collecting garbage first
    /// if the unit is short of free blocks) when needed. Program it before the next allocation.
    ///
    /// Outside GC, a unit whose GC finds nothing to reclaim is passed over for the next units in
    /// turn: host writes stripe over units while GC moves stay in their unit, so live data is not
    /// spread evenly at every moment, and one unit full of valid data must not stop a device that
    /// has room elsewhere. `DeviceFull` means no unit can make room, or a collection ran out of
    /// reserve midway.
    ///
    /// During GC every allocation, whatever unit it asks for, goes to the unit being collected:
    /// a collection lives on its own unit's reserve (a mapping write-back sent to another unit
    /// would spend that unit's reserve without collecting there).
    #[inline(always)]
    pub fn allocate<R: Relocate>(
        &mut self,
        unit: u32,
        stream: StreamId,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        // The open block has room (nearly always): the page, without the calls of the general path.
        let active = self.gc.active_unit();
        if active.is_none() {
            self.gc.found_nothing = false;
        }
        let ppb = self.geometry.data_pages_per_block();
        if let Some((block, offset)) = self.frontiers.take_page(active.unwrap_or(unit), stream, ppb) {
            return Ok(self.geometry.page_at(block, offset));
        }
        self.allocate_opening(unit, stream, reloc, ctx)
    }

    /// [`BlockManager::allocate`] where the open block is full or missing.
    #[inline(never)]
    fn allocate_opening<R: Relocate>(
        &mut self,
        unit: u32,
        stream: StreamId,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        if let Some(collected) = self.gc.active_unit() {
            return self.allocate_in(collected, stream, reloc, ctx);
        }
        self.gc.found_nothing = false;
        match self.allocate_in(unit, stream, reloc, ctx) {
            Err(SimError::DeviceFull { .. }) if self.gc.found_nothing => {
                self.allocate_elsewhere(unit, stream, reloc, ctx)
            }
            result => result,
        }
    }

    #[cold]
    fn allocate_elsewhere<R: Relocate>(
        &mut self,
        full: u32,
        stream: StreamId,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        let units = self.units();
        let mut last = SimError::DeviceFull { unit: full as usize, free: self.free_blocks(full) };
        for step in 1..units {
            self.gc.found_nothing = false;
            match self.allocate_in((full + step) % units, stream, reloc, ctx) {
                Err(e @ SimError::DeviceFull { .. }) if self.gc.found_nothing => last = e,
                result => return result,
            }
        }
        Err(last)
    }

    /// After [`BlockManager::allocate`] returned `ppn`, the up to `pages` pages that follow it in
    /// its open block, to program at once (a run of host writes); returns how many it took.
    pub fn allocate_following(&mut self, ppn: Ppn, stream: StreamId, pages: u32) -> u32 {
        let unit = self.unit_of(self.addressing.block_of(ppn));
        self.frontiers.take_pages(unit, stream, pages, self.geometry.data_pages_per_block())
    }

    #[inline]
    fn allocate_in<R: Relocate>(
        &mut self,
        unit: u32,
        stream: StreamId,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        let ppb = self.geometry.data_pages_per_block();
        let (block, offset) = match self.frontiers.take_page(unit, stream, ppb) {
            Some(page) => page,
            None => {
                self.replace_open_block(unit, stream, reloc, ctx)?;
                self.frontiers.take_page(unit, stream, ppb).expect("a block was just opened")
            }
        };
        Ok(self.geometry.page_at(block, offset))
    }

    fn replace_open_block<R: Relocate>(
        &mut self,
        unit: u32,
        stream: StreamId,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        if let Some(full) = self.frontiers.close(unit, stream) {
            self.file_closed(full, ctx.flash);
        }
        if self.gc.active_unit().is_none() && self.gc.wants_collection(self.pool.len(unit)) {
            self.collect(unit, reloc, ctx)?;
        }
        // GC may have opened a block for this stream while moving pages, and perhaps filled it.
        let ppb = self.geometry.data_pages_per_block();
        if self.frontiers.has_room(unit, stream, ppb) {
            return Ok(());
        }
        if let Some(full) = self.frontiers.close(unit, stream) {
            self.file_closed(full, ctx.flash);
        }
        let pbn = self.pool.take(unit).ok_or(SimError::DeviceFull { unit: unit as usize, free: 0 })?;
        self.role[pbn.index()] = BlockRole::Open;
        self.frontiers.open(unit, stream, pbn, 0);
        if let Some(log) = &mut self.ilog {
            log.opened(pbn);
        }
        Ok(())
    }

    /// A written block leaves its frontier: file it for victim selection.
    fn file_closed(&mut self, pbn: Pbn, flash: &FlashArray) {
        self.role[pbn.index()] = BlockRole::Closed;
        self.gc.victims_mut().insert(pbn, self.validity.valid_count(pbn, flash));
    }

    /// Takes a whole erased block of `unit` for the FTL to fill itself (at the offsets the
    /// device's program order allows). GC never selects it; the FTL gives it back with
    /// [`BlockManager::release_block`].
    pub fn take_block(&mut self, unit: u32) -> Result<Pbn> {
        let pbn = self.pool.take(unit).ok_or(SimError::DeviceFull { unit: unit as usize, free: 0 })?;
        self.role[pbn.index()] = BlockRole::Owned;
        Ok(pbn)
    }

    /// Erases a block taken with [`BlockManager::take_block`], whose pages the FTL has all
    /// invalidated, and returns it to the free pool.
    pub fn release_block(&mut self, pbn: Pbn, purpose: Purpose, ctx: &mut FtlCtx) -> Result<()> {
        if self.role[pbn.index()] != BlockRole::Owned {
            let message = format!("released, but it is {:?}, not owned by the FTL", self.role[pbn.index()]);
            return Err(SimError::Block { pbn, message });
        }
        self.erase(pbn, purpose, ctx)?;
        self.role[pbn.index()] = BlockRole::Free;
        self.pool.put(pbn, ctx.flash.erase_count(pbn));
        Ok(())
    }

    /// Erases an owned block whose pages the FTL has all invalidated, keeping it owned: the FTL
    /// writes it again at once, or reserves it ([`BlockManager::set_reserved`]) or returns it
    /// ([`BlockManager::return_block`]).
    pub fn erase_owned(&mut self, pbn: Pbn, purpose: Purpose, ctx: &mut FtlCtx) -> Result<()> {
        self.expect_role(pbn, BlockRole::Owned, "erased by the FTL")?;
        self.erase(pbn, purpose, ctx)
    }

    /// Takes an erased block of `unit` as the FTL's reserved GC destination.
    pub fn take_reserved(&mut self, unit: u32) -> Result<Pbn> {
        let pbn = self.take_block(unit)?;
        self.role[pbn.index()] = BlockRole::Reserved;
        Ok(pbn)
    }

    /// Marks an erased owned block reserved (`true`), or a reserved block owned again, for the
    /// FTL to write (`false`).
    pub fn set_reserved(&mut self, pbn: Pbn, reserved: bool, flash: &FlashArray) -> Result<()> {
        let (from, to) =
            if reserved { (BlockRole::Owned, BlockRole::Reserved) } else { (BlockRole::Reserved, BlockRole::Owned) };
        self.expect_role(pbn, from, "reserved or unreserved")?;
        if reserved && flash.block_state(pbn) != BlockState::Erased {
            return Err(SimError::Block { pbn, message: "reserved while it holds programmed pages".into() });
        }
        self.role[pbn.index()] = to;
        Ok(())
    }

    /// Returns an erased owned or reserved block to the free pool.
    pub fn return_block(&mut self, pbn: Pbn, flash: &FlashArray) -> Result<()> {
        let role = self.role[pbn.index()];
        if !matches!(role, BlockRole::Owned | BlockRole::Reserved) || flash.block_state(pbn) != BlockState::Erased {
            let message = format!("returned to the pool, but it is {role:?} and {:?}", flash.block_state(pbn));
            return Err(SimError::Block { pbn, message });
        }
        self.role[pbn.index()] = BlockRole::Free;
        self.pool.put(pbn, flash.erase_count(pbn));
        Ok(())
    }

    fn expect_role(&self, pbn: Pbn, role: BlockRole, what: &str) -> Result<()> {
        let actual = self.role[pbn.index()];
        if actual != role {
            return Err(SimError::Block { pbn, message: format!("{what}, but it is {actual:?}, not {role:?}") });
        }
        Ok(())
    }

    /// Counts a block the FTL reclaimed with its own GC (owned blocks), for `gc_victims` and
    /// the GC statistics by page kind.
    pub fn count_gc_victim(&mut self, kind: PageKind) {
        self.gc.reclaimed += 1;
        self.gc.stats.victims[kind as usize] += 1;
    }

    /// Counts a valid page the FTL's own GC moved out of a victim.
    pub fn count_gc_move(&mut self, kind: PageKind) {
        self.gc.stats.moved[kind as usize] += 1;
    }

    /// The statistics of an FTL that collects clusters of owned blocks (CPM, K-CPM), kept with
    /// the GC statistics so the report has them over the measured run.
    pub fn cluster_stats_mut(&mut self) -> &mut ClusterStats {
        self.gc.stats.clusters.get_or_insert_with(ClusterStats::default)
    }

    /// Erases a block that holds no valid page (erasing valid data loses it: an FTL bug).
    pub(super) fn erase(&mut self, pbn: Pbn, purpose: Purpose, ctx: &mut FtlCtx) -> Result<()> {
        let valid = self.validity.valid_count(pbn, ctx.flash);
        if valid != 0 {
            return Err(SimError::Block { pbn, message: format!("erased while it still holds {valid} valid pages") });
        }
        ctx.erase(pbn, purpose)?;
        self.validity.erased(pbn);
        if let Some(log) = &mut self.ilog {
            log.erased(pbn, &self.geometry);
        }
        self.gc.victims_mut().clear_credit(pbn);
        Ok(())
    }

    /// Brings the flash and victim-index state of `ppn` toward the cache ahead of an invalidation.
    #[inline]
    pub fn prefetch_page(&self, ppn: Ppn, flash: &FlashArray) {
        flash.prefetch_page(ppn);
        self.validity.prefetch(ppn);
        self.gc.victims().prefetch(self.addressing.block_of(ppn));
    }

    /// Marks a page invalid and refiles its block for victim selection. With ILog the flag is
    /// logged (not for a GC victim's pages, erased next, nor for invalidation pages, whose
    /// validity the IPT tells); call [`BlockManager::write_back_log`] once the operation that
    /// invalidated has programmed what supersedes the page.
    #[inline(always)]
    pub fn invalidate(&mut self, ppn: Ppn, flash: &FlashArray) -> Result<()> {
        let valid = self.invalidate_unlogged(ppn, flash)?;
        if self.ilog.is_some() {
            self.log_invalidation(ppn, valid, flash);
        }
        Ok(())
    }

    /// [`BlockManager::invalidate`] of a page GC is moving out of its victim, which GC has just
    /// found valid: the victim is out of the victim index and erased next, so nothing is
    /// refiled or logged.
    #[inline(always)]
    pub(super) fn invalidate_moved(&mut self, page: BlockPage, flash: &FlashArray) {
        debug_assert!(self.role[page.pbn.index()] == BlockRole::Victim && !self.gc.victims().is_filed(page.pbn));
        self.validity.invalidate_known_valid(page, flash);
    }

    /// ILog's part of [`BlockManager::invalidate`] (kept out of the path of the other FTLs).
    #[inline(never)]
    fn log_invalidation(&mut self, ppn: Ppn, valid: u32, flash: &FlashArray) {
        let Some(log) = &mut self.ilog else { return };
        let pbn = self.addressing.block_of(ppn);
        if self.role[pbn.index()] != BlockRole::Victim && flash.block_kind(pbn) != PageKind::InvalidationLog {
            let all_invalid = valid == 0 && flash.write_pointer(pbn) == self.geometry.data_pages_per_block();
            log.invalidate(pbn, self.addressing.page_offset(ppn), all_invalid);
        }
    }

    /// Marks a page invalid without logging it in ILog: an invalidation a power loss may undo
    /// (a trim the FTL keeps in SRAM, after which recovery may bring the page back), which the
    /// log must not claim. Returns the block's valid pages left.
    #[inline(always)]
    pub fn invalidate_unlogged(&mut self, ppn: Ppn, flash: &FlashArray) -> Result<u32> {
        let Some((pbn, valid)) = self.validity.invalidate(ppn, flash) else {
            return Err(not_valid(ppn, flash));
        };
        self.gc.victims_mut().update(pbn, valid);
        Ok(valid)
    }

    /// ILog's write-back (Figure 8.3 lines 4-45): while the BIF queue holds more than its SRAM,
    /// its head goes, a modified head after writing an invalidation page. The FTL calls it at
    /// the end of each operation that invalidates pages; without ILog it does nothing. Returns
    /// whether it wrote (and so may have collected garbage and moved pages).
    #[inline]
    pub fn write_back_log<R: Relocate>(&mut self, reloc: &mut R, ctx: &mut FtlCtx) -> Result<bool> {
        if self.ilog.as_ref().is_some_and(|log| log.needs_write_back()) {
            self.write_back_log_pages(reloc, ctx)?;
            return Ok(true);
        }
        Ok(false)
    }

    #[cold]
    fn write_back_log_pages<R: Relocate>(&mut self, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        while let Some(log) = self.ilog.as_deref_mut().filter(|log| log.needs_write_back()) {
            if log.drop_unmodified_head() {
                continue;
            }
            let page = log.build_page(|ppn| ctx.read(ppn, Purpose::Metadata).map(drop))?;
            let stream = self.log_stream;
            let unit = self.next_unit(stream);
            let new = self.allocate(unit, stream, reloc, ctx)?;
            // The spare area's version field carries the page's BSN bound (never 0).
            ctx.program(new, PageKind::InvalidationLog, page.lipn, page.bsn_bound, Purpose::Metadata)?;
            let log = self.ilog.as_deref_mut().expect("ILog is on");
            if let Some(old) = log.commit(new, page) {
                self.invalidate_unlogged(old, ctx.flash)?;
            }
        }
        Ok(())
    }

    /// ILog after adopting a preconditioned layout ([`BlockManager::rebuild`] from it): logs
    /// every invalid page the layout holds, as the invalidations that made them would have (their
    /// traffic belongs to preconditioning, whose statistics are reset). Without ILog it does
    /// nothing.
    pub fn log_layout<R: Relocate>(&mut self, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        let Some(log) = self.ilog.as_deref_mut() else { return Ok(()) };
        let ppb = self.geometry.data_pages_per_block();
        for pbn in self.geometry.blocks() {
            let written = ctx.flash.write_pointer(pbn);
            let wholly_invalid = written == ppb && self.validity.valid_count(pbn, ctx.flash) == 0;
            if written == 0 || wholly_invalid || ctx.flash.block_kind(pbn) == PageKind::InvalidationLog {
                continue;
            }
            for (offset, ppn) in self.geometry.pages_below(pbn, written).enumerate() {
                if ctx.flash.is_programmed(ppn) && !self.validity.is_valid(ppn, ctx.flash) {
                    log.invalidate(pbn, offset as u32, false);
                }
            }
        }
        self.write_back_log(reloc, ctx)?;
        Ok(())
    }

    /// ILog after a power loss: forgets the queue and rebuilds the IPT and BIFT by reading every
    /// invalidation page (counted as recovery reads). Call first in the FTL's recovery; without
    /// ILog it does nothing.
    pub fn recover_log(&mut self, ctx: &mut FtlCtx) {
        let Some(log) = self.ilog.as_deref_mut() else { return };
        log.recover(ctx.flash, |ppn| {
            ctx.ops.push(crate::flash::OpKind::Read, Purpose::Recovery, ppn);
            ctx.flash.read(ppn).is_ok()
        });
    }

    /// The invalid flags ILog recovered for `pbn` (Figure 8.6 line 23: its IP read unless it was
    /// read last), or `None` without ILog.
    pub fn recovered_flags(&mut self, pbn: Pbn, ctx: &mut FtlCtx) -> Option<&[u64]> {
        let log = self.ilog.as_deref_mut()?;
        Some(log.recovered_flags(pbn, |ppn| ctx.ops.push(crate::flash::OpKind::Read, Purpose::Recovery, ppn)))
    }

    /// Forgets all SRAM state and rebuilds it after a power loss, from the flash array's block
    /// states and what the FTL's recovery learned: `live(ppn, spare)` tells whether a programmed
    /// page is valid. Erased blocks are free, the first partly written block of each page kind
    /// in a unit becomes the open block of that kind's first stream, every other written block
    /// is closed (so is one holding a page whose program was interrupted: nothing is written after
    /// it). A corrupt page is never valid. Issues no operations: the FTL's recovery accounts for
    /// the reads it needed to know what `live` answers.
    pub fn rebuild(&mut self, flash: &FlashArray, live: impl Fn(Ppn, Spare) -> bool) {
        self.rebuild_owning(flash, live, None);
    }

    /// [`BlockManager::rebuild`] for an FTL that also owns blocks: written blocks of page kind
    /// `owned` are owned by the FTL (CPM's data blocks), the others are rebuilt as there.
    pub fn rebuild_owning(&mut self, flash: &FlashArray, live: impl Fn(Ppn, Spare) -> bool, owned: Option<PageKind>) {
        self.rebuild_validity(flash, live);
        let mut victims = VictimIndex::new(
            self.units(),
            self.geometry.data_pages_per_block(),
            self.gc.victims().resolution(),
            self.pool.units_of_blocks().to_vec(),
            self.gc.policy(),
        );
        for pbn in self.geometry.blocks() {
            let unit = self.unit_of(pbn);
            let stream = self.frontiers.stream_of_kind(flash.block_kind(pbn));
            self.role[pbn.index()] = match (flash.block_state(pbn), stream) {
                (BlockState::Erased, _) => {
                    self.pool.put(pbn, flash.erase_count(pbn));
                    BlockRole::Free
                }
                _ if Some(flash.block_kind(pbn)) == owned => BlockRole::Owned,
                (BlockState::Partial, Some(stream))
                    if self.frontiers.open_block(unit, stream).is_none() && !flash.has_corrupt_page(pbn) =>
                {
                    self.frontiers.open(unit, stream, pbn, flash.write_pointer(pbn));
                    BlockRole::Open
                }
                _ => {
                    victims.insert(pbn, self.validity.valid_count(pbn, flash));
                    BlockRole::Closed
                }
            };
        }
        self.gc.reset(victims);
    }

    /// [`BlockManager::rebuild`] for an FTL that owns all its blocks (block-mapped and log-block
    /// schemes): erased blocks are free, every written block is owned by the FTL.
    pub fn rebuild_owned(&mut self, flash: &FlashArray, live: impl Fn(Ppn, Spare) -> bool) {
        self.rebuild_validity(flash, live);
        for pbn in self.geometry.blocks() {
            self.role[pbn.index()] = if flash.block_state(pbn) == BlockState::Erased {
                self.pool.put(pbn, flash.erase_count(pbn));
                BlockRole::Free
            } else {
                BlockRole::Owned
            };
        }
    }

    /// Forgets the pool, the frontiers and validity, and marks invalid every programmed page
    /// that is corrupt or not `live`.
    /// Invalidation pages are live as ILog's IPT says (recovered by [`BlockManager::recover_log`]).
    fn rebuild_validity(&mut self, flash: &FlashArray, live: impl Fn(Ppn, Spare) -> bool) {
        self.pool.clear();
        self.frontiers.clear();
        self.validity.clear();
        let log = self.ilog.as_deref();
        let live = |ppn, spare: Spare| match (spare.kind, log) {
            (PageKind::InvalidationLog, Some(log)) => log.is_current_page(ppn),
            _ => live(ppn, spare),
        };
        for ppn in self.geometry.pages() {
            if flash.is_programmed(ppn) && (flash.is_corrupt(ppn) || !live(ppn, flash.spare_unchecked(ppn))) {
                self.validity.invalidate(ppn, flash);
            }
        }
        if let Some(log) = self.ilog.as_deref_mut() {
            let validity = &self.validity;
            log.forget_contradicted(&self.geometry, |ppn| validity.is_valid(ppn, flash));
        }
    }

    /// Simulator memory of this structure.
    pub fn state_bytes(&self) -> usize {
        self.gc.victims().memory_bytes()
            + self.role.len()
            + self.pool.state_bytes()
            + self.validity.state_bytes()
            + self.ilog.as_ref().map_or(0, |log| log.state_bytes())
    }

    /// Checks the block accounting: roles agree with the free pools, open slots and victim index,
    /// and the validity tracker's counts with its marks.
    pub fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.validity.check(flash)?;
        if let Some(log) = &self.ilog {
            log.check(flash, |ppn| flash.is_programmed(ppn) && !self.validity.is_valid(ppn, flash))?;
        }
        let mut free_seen = 0usize;
        for pbn in self.geometry.blocks() {
            let role = self.role[pbn.index()];
            let filed = self.gc.victims().is_filed(pbn);
            match role {
                BlockRole::Free => {
                    free_seen += 1;
                    if flash.block_state(pbn) != BlockState::Erased {
                        return Err(format!("free block {pbn} has programmed pages"));
                    }
                }
                BlockRole::Closed if !filed => return Err(format!("closed block {pbn} is not in the victim index")),
                BlockRole::Open | BlockRole::Owned | BlockRole::Reserved if filed => {
                    return Err(format!("{role:?} block {pbn} is in the victim index"))
                }
                BlockRole::Reserved if flash.block_state(pbn) != BlockState::Erased => {
                    return Err(format!("reserved block {pbn} has programmed pages"))
                }
                BlockRole::Victim => return Err(format!("block {pbn} is still marked as a GC victim")),
                _ => {}
            }
            if role == BlockRole::Open && !self.frontiers.is_open(self.unit_of(pbn), pbn) {
                return Err(format!("block {pbn} is marked open but is not an open block of its unit"));
            }
        }
        if free_seen != self.total_free_blocks() {
            return Err(format!(
                "{free_seen} blocks are marked free but the free pools hold {}",
                self.total_free_blocks()
            ));
        }
        Ok(())
    }
}

/// The error of invalidating a page that is not valid (kept out of the invalidation's path).
#[cold]
#[inline(never)]
fn not_valid(ppn: Ppn, flash: &FlashArray) -> SimError {
    let state = if flash.is_programmed(ppn) { "invalid already" } else { "free" };
    SimError::FlashRule { op: "invalidate", ppn, rule: format!("page is {state}, not valid") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpLog, PageKind};
    use crate::metrics::CacheStats;

    const ONE_STREAM: &[StreamSpec] = &[StreamSpec::new("data", PageKind::Data)];
    const TWO_STREAMS: &[StreamSpec] =
        &[StreamSpec::new("data", PageKind::Data), StreamSpec::new("translation", PageKind::Translation)];
    const DATA: StreamId = StreamId::new(0);
    const TRANSLATION: StreamId = StreamId::new(1);
    /// An unmapped LPN of the tests' maps (no test device reaches it).
    const NIL: Ppn = Ppn::new(u32::MAX - 1);

    /// 1 die, 1 plane, 8 blocks x 4 pages, GC when at most 1 free block.
    fn config() -> Config {
        ConfigBuilder::new()
            .set("device.geometry.planes_per_die=1")
            .unwrap()
            .set("device.geometry.blocks_per_plane=8")
            .unwrap()
            .set("device.geometry.pages_per_block=4")
            .unwrap()
            .set("device.overprovisioning=0.5")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap()
            .build()
            .unwrap()
    }

    /// A page map that records moves.
    struct Map(Vec<Ppn>);
    impl Relocate for Map {
        fn relocated(&mut self, _: &mut BlockManager, spare: Spare, old: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
            assert_eq!(self.0[spare.logical as usize], old);
            self.0[spare.logical as usize] = new;
            Ok(())
        }
    }

    fn write(bm: &mut BlockManager, map: &mut Map, lpn: u32, ctx: &mut FtlCtx) {
        if map.0[lpn as usize] != NIL {
            bm.invalidate(map.0[lpn as usize], ctx.flash).unwrap();
        }
        let ppn = bm.allocate(0, DATA, map, ctx).unwrap();
        ctx.program(ppn, PageKind::Data, lpn, 1, Purpose::Host).unwrap();
        map.0[lpn as usize] = ppn;
    }

    #[test]
    fn allocates_in_order_and_opens_blocks_fifo() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 16]);
        for lpn in 0..6 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        assert_eq!(map.0[..6], [0, 1, 2, 3, 4, 5]);
        assert_eq!(bm.role(Pbn::new(0)), BlockRole::Closed);
        assert_eq!(bm.role(Pbn::new(1)), BlockRole::Open);
        assert_eq!(bm.free_blocks(0), 6);
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn with_summary_pages_a_block_takes_three_data_pages_and_its_summary_follows_the_last() {
        let mut c = config();
        c.device.geometry.summary_page = true;
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 16]);
        for lpn in 0..4 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        assert_eq!(map.0[..4], [0, 1, 2, 4], "offset 3 of block 0 is its summary page");
        let programs: Vec<_> = ctx.ops.ops().iter().map(|op| (op.ppn.get(), op.purpose)).collect();
        assert_eq!(
            programs,
            [(0, Purpose::Host), (1, Purpose::Host), (2, Purpose::Host), (3, Purpose::Metadata), (4, Purpose::Host)]
        );
        assert_eq!(ctx.ops.ops()[3].dep.map(|d| d.get()), Some(2), "the summary follows the last data program");
        assert_eq!(ctx.ops.summary_programs(), 1);
        assert_eq!((bm.role(Pbn::new(0)), bm.valid_count(Pbn::new(0), ctx.flash)), (BlockRole::Closed, 3));
        // Overwrites make GC reclaim blocks of three data pages; it never moves a summary page.
        for round in 0..60u32 {
            write(&mut bm, &mut map, (round * 5) % 9, &mut ctx);
        }
        assert!(bm.gc_victims() > 0);
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Metadata), ctx.ops.summary_programs());
        for lpn in 0..9u32 {
            assert_eq!(ctx.flash.read(map.0[lpn as usize]).unwrap().logical, lpn);
        }
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn garbage_credited_inside_valid_pages_weighs_in_victim_choice_until_the_erase() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut plain = BlockManager::new(&c, ONE_STREAM);
        let mut bm = BlockManager::new(&c, ONE_STREAM).with_garbage_resolution(4);
        assert!(bm.state_bytes() > plain.state_bytes(), "the credits are simulator state");
        let mut map = Map(vec![NIL; 16]);
        // Blocks 0 and 1 hold LPNs 0..8 and are closed; LPN 4's overwrite leaves block 1 with 3
        // valid pages (weight 12 of 16), block 0 with 4 (nothing to reclaim).
        for lpn in [0, 1, 2, 3, 4, 5, 6, 7, 8, 4] {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        let (b0, b1) = (Pbn::new(0), Pbn::new(1));
        assert_eq!(bm.select_victim(0, ctx.flash), Some(b1));
        // Six quarter pages of garbage inside block 0's valid pages: weight 10 beats 12.
        bm.credit_garbage(b0, 6, ctx.flash).unwrap();
        assert_eq!(bm.select_victim(0, ctx.flash), Some(b0));
        bm.withdraw_garbage(b0, 3, ctx.flash).unwrap();
        assert_eq!(bm.select_victim(0, ctx.flash), Some(b1), "weight 13 loses to 12");
        // More garbage than the valid pages hold, or withdrawing what was never credited, is a bug.
        let over = bm.credit_garbage(b0, 14, ctx.flash).unwrap_err().to_string();
        assert!(over.contains("17 / 4 page of garbage credited inside 4 valid pages"), "{over}");
        assert!(bm.withdraw_garbage(b1, 1, ctx.flash).is_err());
        let refused = plain.credit_garbage(b0, 1, ctx.flash).unwrap_err().to_string();
        assert!(refused.contains("declared no garbage resolution"), "{refused}");
        // Reclaiming block 0 moves its valid pages and clears its credit with the erase.
        bm.credit_garbage(b0, 13, ctx.flash).unwrap();
        assert!(bm.reclaim_one(0, &mut map, &mut ctx).unwrap());
        assert_eq!((bm.role(b0), ctx.flash.erase_count(b0)), (BlockRole::Free, 1));
        assert_eq!(bm.gc.victims().credit(b0), 0);
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn greedy_gc_moves_valid_pages_and_erases_the_emptiest_block() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 32]);
        // Fill blocks 0..=5 with LPNs 0..24, then overwrite LPNs 4..7 (block 1) and LPN 0 (block 0).
        for lpn in 0..24 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        assert_eq!(bm.free_blocks(0), 2);
        for lpn in [4, 5, 6, 7] {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        // That took block 6; 1 free block left. The next block needed triggers GC.
        assert_eq!(bm.free_blocks(0), 1);
        write(&mut bm, &mut map, 0, &mut ctx);
        // Block 1 had 0 valid pages: greedy erases it without moves; then free = 2 > 1.
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Erase, Purpose::Gc), 1);
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc), 0);
        assert_eq!(ctx.flash.erase_count(Pbn::new(1)), 1);
        // More overwrites force a GC with moves; every LPN still maps to a page holding it.
        for round in 0..60u32 {
            write(&mut bm, &mut map, (round * 7) % 24, &mut ctx);
        }
        assert!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc) > 0);
        for lpn in 0..24u32 {
            let ppn = map.0[lpn as usize];
            assert_eq!(ctx.flash.read(ppn).unwrap().logical, lpn);
            assert!(bm.is_valid(ppn, ctx.flash));
        }
        bm.check(ctx.flash).unwrap();
    }

    /// A map whose every relocation writes a page of the translation stream, asking for unit 1.
    struct WritesBack {
        map: Map,
        units: Vec<u32>,
    }
    impl Relocate for WritesBack {
        fn relocated(
            &mut self,
            bm: &mut BlockManager,
            spare: Spare,
            old: Ppn,
            new: Ppn,
            ctx: &mut FtlCtx,
        ) -> Result<()> {
            self.map.relocated(bm, spare, old, new, ctx)?;
            let ppn = bm.allocate(1, TRANSLATION, self, ctx)?;
            ctx.program(ppn, PageKind::Translation, 0u32, 1, Purpose::Translation)?;
            bm.invalidate(ppn, ctx.flash)?;
            self.units.push(bm.unit_of(ctx.flash.addressing().block_of(ppn)));
            Ok(())
        }
    }

    #[test]
    fn gc_keeps_every_allocation_in_its_unit_and_reserves_a_block_per_stream() {
        let c = ConfigBuilder::new()
            .set("device.geometry.planes_per_die=2")
            .unwrap()
            .set("device.geometry.blocks_per_plane=8")
            .unwrap()
            .set("device.geometry.pages_per_block=4")
            .unwrap()
            .set("device.allocation_unit=\"plane\"")
            .unwrap()
            .set("device.overprovisioning=0.5")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap()
            .build()
            .unwrap();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, TWO_STREAMS);
        let mut owner = WritesBack { map: Map(vec![NIL; 20]), units: Vec::new() };
        // Only unit 0 takes data: 20 LPNs overwritten in a scrambled order leave partly valid blocks.
        for i in 0..200u32 {
            let lpn = i.wrapping_mul(2_654_435_761).rotate_left(7) % 20;
            if owner.map.0[lpn as usize] != NIL {
                bm.invalidate(owner.map.0[lpn as usize], ctx.flash).unwrap();
            }
            let (free_before, victims_before) = (bm.free_blocks(0), bm.gc_victims());
            let ppn = bm.allocate(0, DATA, &mut owner, &mut ctx).unwrap();
            ctx.program(ppn, PageKind::Data, lpn, 1, Purpose::Host).unwrap();
            owner.map.0[lpn as usize] = ppn;
            if victims_before == 0 && bm.gc_victims() > 0 {
                assert_eq!(free_before, 2, "two streams: GC starts at 2 free blocks, gc.free_blocks_low being 1");
            }
        }
        assert!(bm.gc_victims() > 0 && !owner.units.is_empty());
        assert!(owner.units.iter().all(|&u| u == 0), "write-backs during GC of unit 0 went to {:?}", owner.units);
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn a_device_with_no_reclaimable_space_reports_full() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 64]);
        let err = (0..32u32).try_for_each(|lpn| {
            if map.0[lpn as usize] != NIL {
                bm.invalidate(map.0[lpn as usize], ctx.flash)?;
            }
            let ppn = bm.allocate(0, DATA, &mut map, &mut ctx)?;
            ctx.program(ppn, PageKind::Data, lpn, 1, Purpose::Host)?;
            map.0[lpn as usize] = ppn;
            Ok::<(), SimError>(())
        });
        assert!(matches!(err, Err(SimError::DeviceFull { .. })), "{err:?}");
    }

    #[test]
    fn rebuild_recovers_the_same_roles() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 16]);
        for lpn in 0..10 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        let roles: Vec<_> = (0..8).map(|b| bm.role(Pbn::new(b))).collect();
        let live = map.0.clone();
        bm.rebuild(ctx.flash, |ppn, spare| live[spare.logical as usize] == ppn);
        assert_eq!(roles, (0..8).map(|b| bm.role(Pbn::new(b))).collect::<Vec<_>>());
        bm.check(ctx.flash).unwrap();
        write(&mut bm, &mut map, 3, &mut ctx);
        assert_eq!(map.0[3], Ppn::new(10));
    }

    #[test]
    fn an_owned_block_is_filled_by_the_ftl_never_collected_and_released_erased() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let owned = bm.take_block(0).unwrap();
        assert_eq!((bm.role(owned), bm.free_blocks(0)), (BlockRole::Owned, 7));
        // The FTL places pages at offsets of its choosing (a gap at offset 1).
        let first = ctx.flash.geometry().first_page(owned);
        ctx.program(first, PageKind::Data, 100u32, 1, Purpose::Host).unwrap();
        ctx.program(first.offset(2), PageKind::Data, 102u32, 1, Purpose::Host).unwrap();
        bm.check(ctx.flash).unwrap();
        // Page-mapped traffic around it collects other blocks only.
        let mut map = Map(vec![NIL; 32]);
        for round in 0..40u32 {
            write(&mut bm, &mut map, round % 12, &mut ctx);
        }
        assert!(bm.gc_victims() > 0);
        assert_eq!((bm.role(owned), ctx.flash.erase_count(owned)), (BlockRole::Owned, 0));
        assert!(bm.release_block(owned, Purpose::Metadata, &mut ctx).unwrap_err().to_string().contains("valid pages"));
        bm.invalidate(first, ctx.flash).unwrap();
        bm.invalidate(first.offset(2), ctx.flash).unwrap();
        bm.release_block(owned, Purpose::Metadata, &mut ctx).unwrap();
        assert_eq!((bm.role(owned), ctx.flash.erase_count(owned)), (BlockRole::Free, 1));
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Erase, Purpose::Metadata), 1);
        let err = bm.release_block(owned, Purpose::Metadata, &mut ctx).unwrap_err().to_string();
        assert!(err.contains("not owned"), "{err}");
        bm.check(ctx.flash).unwrap();
    }

    /// Separates hot LPNs (below 4) from cold ones, for GC moves too.
    struct HotCold(Map);
    const HOT: StreamId = StreamId::new(0);
    const COLD: StreamId = StreamId::new(1);
    fn stream_of(lpn: u32) -> StreamId {
        if lpn < 4 {
            HOT
        } else {
            COLD
        }
    }
    impl Relocate for HotCold {
        fn relocated(
            &mut self,
            bm: &mut BlockManager,
            spare: Spare,
            old: Ppn,
            new: Ppn,
            ctx: &mut FtlCtx,
        ) -> Result<()> {
            self.0.relocated(bm, spare, old, new, ctx)
        }
        fn gc_destination(&self, spare: Spare) -> Option<StreamId> {
            Some(stream_of(spare.logical))
        }
    }

    #[test]
    fn declared_streams_keep_their_own_blocks_through_gc() {
        let c = ConfigBuilder::new()
            .set("device.geometry.planes_per_die=1")
            .unwrap()
            .set("device.geometry.blocks_per_plane=12")
            .unwrap()
            .set("device.geometry.pages_per_block=4")
            .unwrap()
            .set("device.overprovisioning=0.5")
            .unwrap()
            .build()
            .unwrap();
        let streams = [StreamSpec::new("hot", PageKind::Data), StreamSpec::new("cold", PageKind::Data)];
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, &streams);
        let mut owner = HotCold(Map(vec![NIL; 16]));
        for i in 0..300u32 {
            let r = i.wrapping_mul(2_654_435_761).rotate_left(7);
            let lpn = if r % 3 == 0 { 4 + (r >> 8) % 12 } else { (r >> 8) % 4 };
            if owner.0 .0[lpn as usize] != NIL {
                bm.invalidate(owner.0 .0[lpn as usize], ctx.flash).unwrap();
            }
            let ppn = bm.allocate(0, stream_of(lpn), &mut owner, &mut ctx).unwrap();
            ctx.program(ppn, PageKind::Data, lpn, i + 1, Purpose::Host).unwrap();
            owner.0 .0[lpn as usize] = ppn;
        }
        assert!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc) > 0, "GC moved pages");
        // No block mixes hot and cold valid pages.
        let g = ctx.flash.geometry().clone();
        for pbn in g.blocks() {
            let hot: Vec<bool> = g
                .pages_of(pbn)
                .filter(|&p| bm.is_valid(p, ctx.flash))
                .map(|p| ctx.flash.read(p).unwrap().logical < 4)
                .collect();
            assert!(hot.windows(2).all(|w| w[0] == w[1]), "block {pbn} mixes hot and cold pages: {hot:?}");
        }
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn reclaim_one_collects_a_victim_on_demand() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, ONE_STREAM);
        let mut map = Map(vec![NIL; 16]);
        assert!(!bm.reclaim_one(0, &mut map, &mut ctx).unwrap(), "nothing to reclaim on an empty device");
        for lpn in [0, 1, 2, 3, 4, 0, 1] {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        // Block 0 holds LPNs 0-3 (0 and 1 overwritten); block 1 is open.
        let free = bm.free_blocks(0);
        assert!(bm.reclaim_one(0, &mut map, &mut ctx).unwrap());
        assert_eq!(ctx.flash.erase_count(Pbn::new(0)), 1);
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc), 2, "LPNs 2 and 3 moved");
        assert_eq!(bm.free_blocks(0), free, "block 0 freed; the second move opened block 2");
        assert_eq!(bm.gc_victims(), 1);
        bm.check(ctx.flash).unwrap();
    }
}
