//! The GC engine: when a unit collects (its trigger), which closed block it reclaims (the victim
//! policy over [`VictimIndex`]), and the reclaim procedure that moves a victim's valid pages and
//! erases it, asking the FTL where each page goes and telling it where each page went.
//!
//! Collection is foreground today: a unit collects when an allocation needs a new block and the
//! unit has at most [`gc_threshold`] free blocks. [`BlockManager::reclaim_one`] runs one step on
//! its own, for callers that schedule GC themselves (background GC).

use super::ilog::Ilog;
use super::{BlockManager, BlockRole, Relocate, StreamId, VictimIndex};
use crate::config::VictimPolicyKind;
use crate::error::{Result, SimError};
use crate::flash::{BlockPage, FlashArray, OpKind, PageKind, Pbn, Purpose, Spare};
use crate::ftl::FtlCtx;
use crate::metrics::GcStats;

/// How many pages ahead of the page being moved GC prefetches mapping entries.
const GC_PREFETCH_DISTANCE: u32 = 8;

/// Free blocks at which a unit collects garbage: `gc.free_blocks_low`, or one per stream the FTL
/// writes if that is more (reclaiming one victim may have to open a block in every stream, for
/// example a data block for the moves and a translation block for the mapping write-backs they
/// cause).
pub fn gc_threshold(free_blocks_low: u32, streams: u32) -> u32 {
    free_blocks_low.max(streams)
}

pub struct GcEngine {
    victims: VictimIndex,
    policy: VictimPolicyKind,
    threshold: u32,
    /// The unit being collected, while a collection runs (collections never nest).
    active: Option<u32>,
    /// The last collection stopped because its unit had no reclaimable block, before touching
    /// any page (the only `DeviceFull` another unit may absorb; one raised mid-collection is final).
    pub(super) found_nothing: bool,
    /// Blocks reclaimed so far.
    pub reclaimed: u64,
    /// Victims and the pages moved out of them, by page kind (paper 002's V_d and V_t).
    pub stats: GcStats,
}

impl GcEngine {
    pub fn new(victims: VictimIndex, policy: VictimPolicyKind, threshold: u32) -> Self {
        GcEngine {
            victims,
            policy,
            threshold,
            active: None,
            found_nothing: false,
            reclaimed: 0,
            stats: GcStats::default(),
        }
    }

    /// The unit being collected, if a collection is running.
    #[inline]
    pub fn active_unit(&self) -> Option<u32> {
        self.active
    }

    /// Whether a unit with `free` free blocks must collect before opening a block.
    #[inline]
    pub fn wants_collection(&self, free: usize) -> bool {
        free <= self.threshold as usize
    }

    pub fn policy(&self) -> VictimPolicyKind {
        self.policy
    }

    pub fn victims(&self) -> &VictimIndex {
        &self.victims
    }

    pub(super) fn victims_mut(&mut self) -> &mut VictimIndex {
        &mut self.victims
    }

    /// Replaces the victim index (after a rebuild).
    pub(super) fn reset(&mut self, victims: VictimIndex) {
        self.victims = victims;
        self.active = None;
    }
}

impl BlockManager {
    /// Foreground GC of one unit: reclaims victims until the unit has more than the threshold of
    /// free blocks.
    pub(super) fn collect<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        self.gc.active = Some(unit);
        let result = self.collect_until_enough(unit, reloc, ctx);
        self.gc.active = None;
        result
    }

    fn collect_until_enough<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        while self.gc.wants_collection(self.pool.len(unit)) {
            let free = self.pool.len(unit);
            let Some(victim) = self.select_victim(unit, ctx.flash) else {
                self.gc.found_nothing = true;
                return Err(SimError::DeviceFull { unit: unit as usize, free });
            };
            self.reclaim(victim, reloc, ctx)?;
        }
        Ok(())
    }

    /// One GC step on `unit`, whatever its free blocks: reclaims the policy's victim, if any
    /// block has an invalid page. Returns whether a block was reclaimed.
    pub fn reclaim_one<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<bool> {
        let Some(victim) = self.select_victim(unit, ctx.flash) else { return Ok(false) };
        self.gc.active = Some(unit);
        let result = self.reclaim(victim, reloc, ctx);
        self.gc.active = None;
        result.map(|()| true)
    }

    /// The block `unit` would reclaim next: the policy's choice, if it holds garbage.
    pub fn select_victim(&self, unit: u32, flash: &FlashArray) -> Option<Pbn> {
        self.gc.victims.select(unit, self.gc.policy).filter(|&v| self.has_garbage(v, flash))
    }

    /// Moves every valid page out of `victim`, each to the stream the FTL names (by default the
    /// first stream of its kind) in the victim's unit, and erases it.
    fn reclaim<R: Relocate>(&mut self, victim: Pbn, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        self.gc.victims.remove(victim);
        self.role[victim.index()] = BlockRole::Victim;
        let unit = self.unit_of(victim);
        let first = self.geometry.first_page(victim);
        let written = ctx.flash.write_pointer(victim);
        let kind = ctx.flash.block_kind(victim) as usize;
        let validation = self.validation(victim, ctx)?;
        // The victim's pages with their block, so that the flash array and the validity tracker
        // find it without a division per page.
        let page_at = |offset| BlockPage { pbn: victim, offset, ppn: first.offset(offset) };
        for offset in 0..written {
            let page = page_at(offset);
            let old = page.ppn;
            if offset + GC_PREFETCH_DISTANCE < written {
                reloc.prefetch_relocation(ctx.flash.spare_at(page_at(offset + GC_PREFETCH_DISTANCE)));
            }
            let spare = match &validation {
                Validation::Bitmap => {
                    // Re-checked per page: a mapping write-back during this loop may invalidate a later page.
                    if !self.validity.is_valid_at(page, ctx.flash) {
                        continue;
                    }
                    ctx.ops.begin_chain();
                    ctx.read_at(page, Purpose::Gc)?
                }
                Validation::Mapping => match self.read_and_validate(page, reloc, ctx)? {
                    Some(spare) => spare,
                    None => continue,
                },
                Validation::Logged(flags) => {
                    match self.validate_logged(page, Ilog::flagged(flags, offset), reloc, ctx)? {
                        Some(spare) => spare,
                        None => continue,
                    }
                }
                Validation::LogPages => match self.validate_log_page(page, ctx)? {
                    Some(spare) => spare,
                    None => continue,
                },
                Validation::NothingValid => break,
            };
            if reloc.take_over(self, spare, old, ctx)? {
                continue;
            }
            let stream = self.gc_destination(reloc, victim, spare)?;
            let new = self.allocate(unit, stream, reloc, ctx)?;
            ctx.program(new, spare.kind, spare.logical, spare.version, Purpose::Gc)?;
            self.invalidate_moved(page, ctx.flash);
            self.gc.stats.moved[kind] += 1;
            match self.ilog.as_deref_mut() {
                Some(log) if spare.kind == PageKind::InvalidationLog => log.relocated(old, new),
                _ => reloc.relocated(self, spare, old, new, ctx)?,
            }
        }
        if let (Validation::Logged(flags), Some(log)) = (validation, self.ilog.as_deref_mut()) {
            log.return_scratch(flags);
        }
        self.erase(victim, Purpose::Gc, ctx)?;
        self.role[victim.index()] = BlockRole::Free;
        self.pool.put(victim, ctx.flash.erase_count(victim));
        self.gc.reclaimed += 1;
        self.gc.stats.victims[kind] += 1;
        Ok(())
    }

    /// How GC learns which pages of `victim` to move (`gc.validity`). With ILog: a block its
    /// counter says is wholly invalid needs nothing read; an invalidation-log block's pages are
    /// current as the IPT says; any other gets its flags from the log (at most one IP read).
    fn validation(&mut self, victim: Pbn, ctx: &mut FtlCtx) -> Result<Validation> {
        let Some(log) = self.ilog.as_deref_mut() else {
            return Ok(if self.validity.knows_pages() { Validation::Bitmap } else { Validation::Mapping });
        };
        if self.validity.valid_count(victim, ctx.flash) == 0 {
            return Ok(Validation::NothingValid);
        }
        if ctx.flash.block_kind(victim) == PageKind::InvalidationLog {
            return Ok(Validation::LogPages);
        }
        let flags = log.victim_flags(victim, |ppn| {
            ctx.ops.begin_chain();
            ctx.read(ppn, Purpose::Gc).map(drop)
        })?;
        Ok(Validation::Logged(flags))
    }

    /// A victim's page under ILog: a flagged page is skipped unread; any other is read and
    /// validated through the mapping, and if invalid counted as one the log did not know.
    fn validate_logged<R: Relocate>(
        &mut self,
        page: BlockPage,
        flagged: bool,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Option<Spare>> {
        let log = self.ilog.as_deref_mut().expect("ILog is on");
        if flagged {
            if self.validity.is_valid_at(page, ctx.flash) {
                return Err(Ilog::false_flag(page.ppn));
            }
            log.stats.flagged_skipped += 1;
            return Ok(None);
        }
        let readable = ctx.flash.is_programmed_at(page) && !ctx.flash.is_corrupt(page.ppn);
        let spare = self.read_and_validate(page, reloc, ctx)?;
        if spare.is_none() && readable {
            self.ilog.as_deref_mut().expect("ILog is on").stats.unflagged_invalid += 1;
        }
        Ok(spare)
    }

    /// A page of an invalidation-log victim: moved if it is its LIPN's current page (known in
    /// SRAM, so only moved pages are read).
    fn validate_log_page(&mut self, page: BlockPage, ctx: &mut FtlCtx) -> Result<Option<Spare>> {
        let ppn = page.ppn;
        let current = self.ilog.as_deref().is_some_and(|log| log.is_current_page(ppn));
        if current != self.validity.is_valid_at(page, ctx.flash) {
            return Err(SimError::Other(format!(
                "ILog: the IPT and the validity of invalidation page PPN {ppn} disagree"
            )));
        }
        if !current {
            return Ok(None);
        }
        ctx.ops.begin_chain();
        Ok(Some(ctx.read_at(page, Purpose::Gc)?))
    }

    /// GC without per-page validity (`gc.validity = "counters"`): reads a programmed page of the
    /// victim and asks the FTL whether it is current; returns its spare area if it must move.
    /// The answer is checked against the simulator's ground truth.
    fn read_and_validate<R: Relocate>(
        &mut self,
        page: BlockPage,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Option<Spare>> {
        let ppn = page.ppn;
        if !ctx.flash.is_programmed_at(page) || ctx.flash.is_corrupt(ppn) {
            // A gap left under the sequential rule, or a page a power loss cut: the read finds
            // nothing to keep (an erased page, or one that fails its ECC).
            ctx.ops.push(OpKind::Read, Purpose::Gc, ppn);
            return Ok(None);
        }
        ctx.ops.begin_chain();
        let spare = ctx.read_at(page, Purpose::Gc)?;
        let current = reloc.is_current(ppn, spare, ctx)?;
        if current != self.validity.is_valid_at(page, ctx.flash) {
            return Err(SimError::Other(format!(
                "GC asked whether PPN {ppn} ({:?} page {}) is current: the FTL answered {current}, but the page is {}",
                spare.kind,
                spare.logical,
                if current { "invalid" } else { "valid" }
            )));
        }
        Ok(current.then_some(spare))
    }

    /// The stream a page moved out of `victim` goes to: the FTL's choice, or the first declared
    /// stream of the page's kind.
    fn gc_destination<R: Relocate>(&self, reloc: &R, victim: Pbn, spare: Spare) -> Result<StreamId> {
        match reloc.gc_destination(spare) {
            Some(stream) => Ok(stream),
            None => self.frontiers.stream_of_kind(spare.kind).ok_or_else(|| SimError::Block {
                pbn: victim,
                message: format!("GC found a {:?} page, but the FTL declared no stream of that kind", spare.kind),
            }),
        }
    }
}

/// What GC knows of a victim's pages before reading them.
enum Validation {
    /// Each page's validity (`gc.validity = "bitmap"`).
    Bitmap,
    /// Nothing: every page is read and validated through the mapping (`"counters"`).
    Mapping,
    /// ILog's flags: a set flag is an invalid page.
    Logged(Vec<u64>),
    /// ILog, an invalidation-log block: the IPT tells its current pages.
    LogPages,
    /// ILog, a block its counter says holds no valid page.
    NothingValid,
}

#[cfg(test)]
mod tests {
    use crate::check::suite::test_device;
    use crate::flash::{Lpn, OpKind, Purpose};
    use crate::host::PageRequest;
    use crate::workload::IoKind;
    use crate::Simulation;

    /// 3,000 single-page writes spread over the logical space, then the invariants.
    fn scattered_writes(sim: &mut Simulation, logical: u32) {
        for i in 0..3000u32 {
            let first = i.wrapping_mul(2_654_435_761).rotate_left(9) % logical;
            let req = PageRequest {
                arrival: 0,
                kind: IoKind::Write,
                first: Lpn::new(first),
                pages: 1,
                span: crate::host::SectorSpan::WHOLE,
            };
            sim.serve(req).unwrap();
        }
        sim.check_invariants().unwrap();
    }

    #[test]
    fn with_counters_only_gc_reads_every_page_of_its_victims_and_moves_the_same_ones() {
        for ftl in ["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl", "3dftl"] {
            let run = |validity: &str| {
                let config = test_device(ftl, 1, 2, 16, 16, &[format!("gc.validity=\"{validity}\"")]).unwrap();
                let mut sim = Simulation::new(&config, ftl).unwrap();
                scattered_writes(&mut sim, config.device.logical_pages());
                let count = |kind, purpose| sim.ops().count(kind, purpose);
                let sram = sim.ftl().sram().into_iter().map(|item| item.structure).collect::<Vec<_>>();
                let gc = (count(OpKind::Read, Purpose::Gc), count(OpKind::Program, Purpose::Gc));
                // Translation reads: whole pages, or spare areas (3DFTL).
                let translation_reads =
                    count(OpKind::Read, Purpose::Translation) + count(OpKind::SpareRead, Purpose::Translation);
                (gc, translation_reads, sram)
            };
            let ((bitmap_reads, bitmap_moves), bitmap_tp_reads, bitmap_sram) = run("bitmap");
            let ((counter_reads, counter_moves), counter_tp_reads, counter_sram) = run("counters");
            assert!(bitmap_moves > 0, "{ftl}: GC ran");
            // The lookups leave every cache as it was, so GC moves exactly the same pages...
            assert_eq!(counter_moves, bitmap_moves, "{ftl}");
            // ...after reading the invalid pages of its victims too, and the translation pages of
            // the mappings not cached (a demand-based scheme's lookups).
            assert!(counter_reads > bitmap_reads, "{ftl}: {counter_reads} GC reads vs {bitmap_reads}");
            assert!(counter_tp_reads >= bitmap_tp_reads, "{ftl}");
            if ftl != "pftl" {
                assert!(
                    counter_tp_reads > bitmap_tp_reads,
                    "{ftl}: uncached mappings are looked up on flash ({counter_tp_reads} vs {bitmap_tp_reads})"
                );
            }
            assert!(bitmap_sram.iter().any(|s| s.contains("valid-page bitmap")), "{ftl}: {bitmap_sram:?}");
            assert!(counter_sram.iter().any(|s| s.contains("invalid-page counters")), "{ftl}: {counter_sram:?}");
        }
    }

    #[test]
    fn with_ilog_gc_reads_fewer_pages_per_page_moved_than_with_counters() {
        for ftl in ["pftl", "dftl", "3dftl"] {
            let run = |validity: &str| {
                let settings =
                    [format!("gc.validity=\"{validity}\""), "gc.ilog_queue_bytes=10".into(), "gc.ilog_pages=4".into()];
                // Two blocks per plane more than the other tests, for the log's.
                let config = test_device(ftl, 1, 2, 18, 16, &settings).unwrap();
                let mut sim = Simulation::new(&config, ftl).unwrap();
                scattered_writes(&mut sim, config.device.logical_pages());
                let count = |kind, purpose| sim.ops().count(kind, purpose);
                let moved = sim.ftl().blocks().gc_stats().moved[crate::flash::PageKind::Data as usize];
                let stats = sim.ftl().blocks().ilog_stats();
                (count(OpKind::Read, Purpose::Gc), moved, count(OpKind::Program, Purpose::Metadata), stats)
            };
            let (_, bitmap_moves, _, none) = run("bitmap");
            let (counter_reads, counter_moves, _, _) = run("counters");
            let (ilog_reads, ilog_moves, ip_writes, stats) = run("ilog");
            let stats = stats.expect("ILog reports its counts");
            assert!(none.is_none() && bitmap_moves > 0, "{ftl}");
            // The invalidation pages take room of their own, so GC runs more often; per page moved
            // it reads less than with counters only.
            assert!(counter_moves == bitmap_moves && ilog_moves > 0, "{ftl}");
            let (ilog_cost, counter_cost) =
                (ilog_reads as f64 / ilog_moves as f64, counter_reads as f64 / counter_moves as f64);
            assert!(ilog_cost < counter_cost, "{ftl}: {ilog_cost} GC reads per page moved with ILog vs {counter_cost}");
            // A one-BIF queue writes an invalidation page whenever another block is invalidated.
            assert!(stats.ip_writes > 0 && ip_writes >= stats.ip_writes, "{ftl}: {stats:?}");
            assert!(stats.flagged_skipped > 0, "{ftl}: {stats:?}");
        }
    }

    #[test]
    fn counters_need_an_ftl_that_can_tell_a_current_page() {
        let config = test_device("pftl", 1, 2, 16, 16, &["gc.validity=\"counters\"".into()]).unwrap();
        let err = crate::ftl::ftl_info("optimal").unwrap().validate(&config).unwrap_err().to_string();
        assert!(err.contains("gc.validity") && err.contains("optimal cannot tell"), "{err}");
    }

    #[test]
    fn every_victim_policy_runs_under_the_oracle_and_invariants() {
        for policy in ["greedy", "cost-benefit", "fifo"] {
            for ftl in ["pftl", "dftl"] {
                let config = test_device(ftl, 1, 2, 16, 16, &[format!("gc.policy=\"{policy}\"")]).unwrap();
                let mut sim = Simulation::new(&config, ftl).unwrap();
                scattered_writes(&mut sim, config.device.logical_pages());
                assert!(sim.ftl().blocks().gc_victims() > 0, "{policy} {ftl}");
            }
        }
    }
}
