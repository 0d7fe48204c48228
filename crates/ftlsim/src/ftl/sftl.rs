//! S-FTL (Jiang et al., MSST'11) as paper 002 describes it (spec 4.6, A.8): whole translation
//! pages are the caching unit, kept in an LRU list, each stored compressed by the sequentiality
//! of its PPNs; a small dirty buffer postpones the write-back of sparsely dirty pages.
//!
//! - A cached TP costs an 8-byte header, a bitmap with a bit per entry marking where a run of
//!   consecutive PPNs starts, and the first PPN of each run (4 B): 140 bytes for a sequentially
//!   written 1,024-entry TP. When that exceeds the page, the page is kept as it is (header plus
//!   the page). The cache evicts LRU pages until the cached pages fit. Writes may split runs: a
//!   page can grow while cached and push others out (the access stays a HIT; the write-backs
//!   count in the translation traffic, A21). The bitmap is what the S-FTL paper's compact form
//!   most plausibly costs (its text is not at hand; docs/validation.md, "S-FTL").
//! - A miss reads the TP (1 read). An evicted TP with no change costs nothing; one with at most
//!   `sparse_threshold` changes moves them to the dirty buffer (8 B each); one with more is
//!   programmed whole, without a read.
//! - When the buffer overflows, the TP with the most buffered changes is updated in flash
//!   (read + program) and its changes leave the buffer. A TP loaded again takes its buffered
//!   changes back into the cached copy.
//! - GC: a moved page whose TP is cached is updated there (GC hit); otherwise the change waits in
//!   the dirty buffer until the garbage collection returns, and then each TP it touched is
//!   updated once (read + program): the GC batch update of the FlashSim DFTL that paper 002 built
//!   its S-FTL on, the GC it gives every scheme. The first GC miss of a TP counts as the
//!   write-back, the others as misses without penalty. Room for what GC added to cached TPs is
//!   made after GC, by the host access that ran it (its class then includes the write-backs).
//! - P_rd: TP evictions and buffer flushes in the denominator; those that programmed a TP in the
//!   numerator (spec A.8).

use serde::{Deserialize, Serialize};

use super::common::cache::DirtyEntries;
use super::common::changes::GcBatch;
use super::common::demand::{at_most_the_map, miss_class, params_json, prefetch_relocation, DemandFtl, DemandScheme};
use super::common::translation::{
    write_back, TranslationOwner, TranslationStore, DEMAND_LAYOUT, DEMAND_STREAMS, TP_ENTRY_BYTES,
};
use super::common::{BlockManager, ListSet, Relocate};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::check::suite::quarter_map;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};
use crate::metrics::CacheAccess;

/// Bytes of a cached TP's header (its number and list links), of one run's first PPN, and of one
/// dirty-buffer entry (LPN + PPN).
const HEADER_BYTES: u64 = 8;
const RUN_BYTES: u64 = 4;
const BUFFER_ENTRY_BYTES: u64 = 8;

/// Bytes a TP of `entries` entries with `runs` runs of consecutive PPNs takes in the cache: a
/// bitmap with a bit per entry marking where a run starts plus the first PPN of every run, or
/// the page as stored in flash when that is smaller; with the header either way.
fn compressed_bytes(runs: u32, entries: u32, page_size: u32) -> u64 {
    let bitmap = entries.div_ceil(8) as u64;
    HEADER_BYTES + (bitmap + RUN_BYTES * runs as u64).min(page_size as u64)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SftlParams {
    /// SRAM of the cache and its dirty buffer, bytes (default: 18 KB, with the 2 KB GTD the
    /// ~20 KB mapping budget of paper 000 Table 5.2).
    pub cache_bytes: u64,
    /// Share of `cache_bytes` given to the dirty buffer (spec A.8 REC: 1/8).
    pub dirty_buffer_fraction: f64,
    /// An evicted TP with at most this many changes goes to the dirty buffer (spec A.8 REC: 16).
    pub sparse_threshold: u32,
}

pub const INFO: FtlInfo = FtlInfo {
    name: "sftl",
    description: "S-FTL: whole translation pages cached compressed by PPN runs, dirty buffer",
    family: Family::DemandBased,
    build: Sftl::build,
    params: ParamsSchema::of::<SftlParams>(&[
        ParamSpec {
            name: "cache_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of the page cache and its dirty buffer, bytes",
            source: "paper 000 Table 5.2's ~20 KB budget less the GTD",
        },
        ParamSpec {
            name: "dirty_buffer_fraction",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "share of cache_bytes given to the dirty buffer",
            source: "spec A.8 recommends 1/8",
        },
        ParamSpec {
            name: "sparse_threshold",
            range: ParamRange::Integer { min: 0, max: u32::MAX as i64 },
            meaning: "an evicted TP with at most this many changes goes to the dirty buffer",
            source: "spec A.8 recommends 16",
        },
    ]),
    spare_layout: DEMAND_LAYOUT,
    streams: DEMAND_STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 17.4,
    spare_blocks_needed: TranslationStore::spare_blocks_needed,
    test_overrides: |c| {
        // At least one uncompressed translation page and its header, plus the dirty buffer (1/8).
        let cached = (c.device.geometry.page_size as u64 + 8).max(quarter_map(c) * 4);
        if cached / 4 > c.device.geometry.total_pages() as u64 {
            return Vec::new();
        }
        vec![("cache_bytes", cached * 8 / 7 + 1)]
    },
};

impl Default for SftlParams {
    fn default() -> Self {
        SftlParams { cache_bytes: 18_432, dirty_buffer_fraction: 0.125, sparse_threshold: 16 }
    }
}

pub struct Sftl {
    params: SftlParams,
    store: TranslationStore,
    /// Cached TPs, most recently used first.
    lru: ListSet,
    used: u64,
    capacity: u64,
    page_size: u32,
    /// Runs of consecutive PPNs in the current content of every TP.
    runs: Vec<u32>,
    /// Every change not yet written to its TP: in a cached copy or in the dirty buffer.
    changes: DirtyEntries,
    /// TPs with buffered changes (those of uncached TPs), in lists by their number of changes.
    buffer: ListSet,
    /// No buffer list above this one is occupied.
    top_bucket: u32,
    buffered: u64,
    buffer_capacity: u64,
    /// Uncached TPs that GC changed, to update once when the garbage collection returns.
    gc_batch: GcBatch,
}

impl Sftl {
    pub fn new(config: &Config, params: SftlParams) -> Result<Self> {
        if !(0.0..1.0).contains(&params.dirty_buffer_fraction) {
            return Err(SimError::config("ftl.sftl.dirty_buffer_fraction", "must be in [0, 1)"));
        }
        let page_size = config.device.geometry.page_size;
        let buffer_bytes = (params.cache_bytes as f64 * params.dirty_buffer_fraction) as u64;
        let capacity = params.cache_bytes - buffer_bytes;
        if capacity < HEADER_BYTES + page_size as u64 {
            return Err(SimError::config(
                "ftl.sftl.cache_bytes",
                format!(
                    "{capacity} bytes for cached pages (after the dirty buffer) cannot hold one uncompressed \
                     {page_size}-byte translation page plus its {HEADER_BYTES}-byte header"
                ),
            ));
        }
        at_most_the_map(capacity / TP_ENTRY_BYTES as u64, config, "ftl.sftl.cache_bytes")?;
        let store = TranslationStore::new(config)?;
        let tps = store.tp_count() as usize;
        let mut sftl = Sftl {
            lru: ListSet::new(tps, 1),
            used: 0,
            capacity,
            page_size,
            runs: vec![0; tps],
            changes: DirtyEntries::new(store.logical_pages(), store.entries_per_tp()),
            buffer: ListSet::new(tps, store.entries_per_tp() as usize + 1),
            top_bucket: 0,
            buffered: 0,
            buffer_capacity: buffer_bytes / BUFFER_ENTRY_BYTES,
            gc_batch: GcBatch::new(store.tp_count()),
            store,
            params,
        };
        sftl.count_runs();
        Ok(sftl)
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: SftlParams = ftl_params(config, "sftl")?;
        Ok(Box::new(DemandFtl::new(config, Sftl::new(config, params)?)))
    }

    #[inline]
    fn value(&self, lpn: Lpn) -> Option<Ppn> {
        self.changes.get(lpn).unwrap_or_else(|| self.store.entry(lpn))
    }

    #[inline]
    fn cached(&self, tp: Tpn) -> bool {
        self.lru.list_of(tp.get()).is_some()
    }

    /// Bytes a TP takes in the cache.
    #[inline]
    fn cost(&self, tp: Tpn) -> u64 {
        self.bytes_of_runs(self.runs[tp.index()])
    }

    /// Bytes a TP of `runs` runs takes in the cache.
    #[inline]
    fn bytes_of_runs(&self, runs: u32) -> u64 {
        compressed_bytes(runs, self.store.entries_per_tp(), self.page_size)
    }

    fn runs_of(&self, tp: Tpn) -> u32 {
        let lpns = self.store.lpns(tp);
        let (start, end) = (lpns.start.get(), lpns.end.get());
        1 + (start + 1..end).filter(|&l| !continues(self.value(Lpn::new(l - 1)), self.value(Lpn::new(l)))).count()
            as u32
    }

    fn count_runs(&mut self) {
        for tp in self.store.tps() {
            self.runs[tp.index()] = self.runs_of(tp);
        }
    }

    /// Records a change, keeping the run count (and the cache's use) current; returns whether
    /// the LPN had no unwritten change before.
    fn change(&mut self, lpn: Lpn, ppn: Option<Ppn>) -> bool {
        let tp = self.store.tp_of(lpn);
        let lpns = self.store.lpns(tp);
        let left = (lpn > lpns.start).then(|| self.value(lpn.back(1)));
        let right = (lpn.offset(1) < lpns.end).then(|| self.value(lpn.offset(1)));
        let breaks = |v: Option<Ppn>| {
            left.is_some_and(|l| !continues(l, v)) as u32 + right.is_some_and(|r| !continues(v, r)) as u32
        };
        // The old value is the change replaced, else the flash copy's: one search of the changes.
        let replaced = self.changes.set(lpn, ppn);
        let fresh = replaced.is_none();
        let before = breaks(replaced.unwrap_or_else(|| self.store.entry(lpn)));
        if fresh && self.buffer_bucket(tp).is_some() {
            self.rebucket(tp);
        }
        let runs = &mut self.runs[tp.index()];
        let old_runs = *runs;
        *runs = old_runs + breaks(ppn) - before;
        if self.cached(tp) {
            self.used = self.used + self.cost(tp) - self.bytes_of_runs(old_runs);
        }
        fresh
    }

    /// Updates the TPs of the GC batch, then evicts LRU TPs other than `keep` until the cached
    /// pages fit, then writes back the TPs with the most buffered changes until the buffer fits;
    /// returns whether a TP was programmed. Runs after each host access and after GC outside one
    /// (the log's write-back, background collection), never inside GC: GC only records its
    /// changes, and they are written afterwards (writing TPs back from inside GC would eat into
    /// its reserve). A write-back may run GC again, whose batch is written in the same loop.
    #[inline]
    fn settle(&mut self, keep: Option<Tpn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        // Most remaps leave nothing to do: they skip the call into the loop and its register saves.
        if self.is_settled() {
            return Ok(false);
        }
        self.settle_pending(keep, blocks, ctx)
    }

    /// Whether nothing waits for [`Self::settle`]: no GC batch, and the cached pages and the
    /// buffer fit.
    #[inline]
    fn is_settled(&self) -> bool {
        self.gc_batch.is_empty() && self.used <= self.capacity && self.buffered <= self.buffer_capacity
    }

    /// [`Self::settle`]'s work.
    fn settle_pending(&mut self, keep: Option<Tpn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        let mut wrote = false;
        loop {
            if let Some(tp) = self.gc_batch.pop() {
                // Loaded since GC, the TP is whole in SRAM and needs no read.
                let read_old = !self.cached(tp);
                write_back(self, blocks, tp, read_old, ctx)?;
                wrote = true;
            } else if self.used > self.capacity {
                let keep = keep.map(Tpn::get);
                let victim =
                    self.lru.back(0).and_then(|v| if Some(v) == keep { self.lru.toward_front(v) } else { Some(v) });
                // `keep` alone is at most an uncompressed page, which fits.
                let victim = victim.expect("an over-full cache holds a TP besides the one in use");
                wrote |= self.evict(Tpn::new(victim), blocks, ctx)?;
            } else if self.buffered > self.buffer_capacity {
                let fullest = self.fullest_buffered().expect("an overflowing buffer holds a TP");
                ctx.cache.evictions += 1;
                ctx.cache.dirty_evictions += 1;
                write_back(self, blocks, fullest, true, ctx)?;
                wrote = true;
            } else {
                return Ok(wrote);
            }
        }
    }

    fn evict(&mut self, tp: Tpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        self.lru.remove(tp.get());
        self.used -= self.cost(tp);
        ctx.cache.evictions += 1;
        let changed = self.changes.count(tp);
        if changed == 0 {
            return Ok(false);
        }
        if changed <= self.params.sparse_threshold && self.buffer_capacity > 0 {
            self.rebucket(tp);
            self.buffered += changed as u64;
            return Ok(false);
        }
        ctx.cache.dirty_evictions += 1;
        write_back(self, blocks, tp, false, ctx)?;
        Ok(true)
    }

    /// A change of an uncached TP goes to the buffer (with any earlier change of a TP being
    /// written back right now).
    fn buffer_change(&mut self, tp: Tpn, fresh: bool) {
        if self.buffer_bucket(tp).is_none() {
            self.rebucket(tp);
            self.buffered += self.changes.count(tp) as u64;
        } else {
            self.buffered += fresh as u64;
        }
    }

    /// A buffered TP leaves the buffer (loaded into the cache, or written).
    fn unbuffer(&mut self, tp: Tpn) {
        if self.buffer_bucket(tp).is_some() {
            self.buffer.remove(tp.get());
            self.buffered -= self.changes.count(tp) as u64;
        }
    }

    fn buffer_bucket(&self, tp: Tpn) -> Option<u32> {
        self.buffer.list_of(tp.get())
    }

    /// Files a TP in the buffer list of its number of changes.
    fn rebucket(&mut self, tp: Tpn) {
        let count = self.changes.count(tp);
        self.buffer.move_to_front(count, tp.get());
        self.top_bucket = self.top_bucket.max(count);
    }

    /// The buffered TP with the most changes.
    fn fullest_buffered(&mut self) -> Option<Tpn> {
        while self.buffer.is_empty(self.top_bucket) {
            if self.top_bucket == 0 {
                return None;
            }
            self.top_bucket -= 1;
        }
        self.buffer.back(self.top_bucket).map(Tpn::new)
    }
}

/// Whether `b` continues the run `a` ends (consecutive PPNs, or both unmapped).
#[inline]
fn continues(a: Option<Ppn>, b: Option<Ppn>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.get().wrapping_add(1) == b.get(),
        _ => a.is_none() && b.is_none(),
    }
}

impl Relocate for Sftl {
    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        prefetch_relocation(self, spare);
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        crate::ftl::common::demand::is_current(self, ppn, spare, ctx)
    }

    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, old: Ppn, new: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let Some(lpn) = self.store.relocated(spare, old, new)? else { return Ok(()) };
        let tp = self.store.tp_of(lpn);
        let fresh = self.change(lpn, Some(new));
        if self.cached(tp) {
            ctx.cache.record_gc(CacheAccess::Hit);
        } else {
            self.buffer_change(tp, fresh);
            ctx.cache.record_gc(self.gc_batch.mark(tp));
        }
        Ok(())
    }
}

impl TranslationOwner for Sftl {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    fn publish(&mut self, tp: Tpn) -> bool {
        self.gc_batch.published(tp);
        self.unbuffer(tp);
        let store = &mut self.store;
        self.changes.drain(tp, |lpn, ppn| store.set(lpn, ppn));
        true
    }
}

impl DemandScheme for Sftl {
    fn name(&self) -> &'static str {
        "sftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    #[inline]
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let tp = self.store.tp_of(lpn);
        if self.cached(tp) {
            self.lru.move_to_front(0, tp.get());
            ctx.cache.record(CacheAccess::Hit);
            return Ok(self.value(lpn));
        }
        let fetched = self.store.fetch(tp, ctx)?;
        self.unbuffer(tp);
        self.lru.push_front(0, tp.get());
        self.used += self.cost(tp);
        let wrote = self.settle(Some(tp), blocks, ctx)?;
        ctx.cache.record(miss_class(wrote, fetched));
        Ok(self.value(lpn))
    }

    #[inline]
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        let tp = self.store.tp_of(lpn);
        let fresh = self.change(lpn, ppn);
        if !self.cached(tp) {
            // Making room after GC during the data page's allocation evicted the TP.
            self.buffer_change(tp, fresh);
        }
        self.settle(Some(tp), blocks, ctx)?;
        Ok(())
    }

    fn make_room(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        self.settle(None, blocks, ctx).map(drop)
    }

    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.changes.get(lpn)
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.changes.prefetch(lpn);
        self.store.prefetch(lpn);
    }

    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        loop {
            let Some(tp) = self.changes.tps().next() else {
                // Every TP of the batch was written with its changes; only the list is left.
                self.gc_batch.clear();
                return Ok(());
            };
            let whole_in_sram = self.cached(tp);
            write_back(self, blocks, tp, !whole_in_sram, ctx)?;
        }
    }

    fn clear_cache(&mut self) {
        self.lru.clear();
        self.used = 0;
        self.changes.clear();
        self.buffer.clear();
        self.top_bucket = 0;
        self.buffered = 0;
        self.gc_batch.clear();
        self.count_runs();
    }

    fn recovered(&mut self) {
        self.count_runs();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.gc_batch.check()?;
        let mut used = 0;
        let mut buffered = 0;
        for tp in self.store.tps() {
            let runs = self.runs_of(tp);
            if runs != self.runs[tp.index()] {
                return Err(format!("translation page {tp} has {runs} runs but {} are counted", self.runs[tp.index()]));
            }
            let in_buffer = self.buffer_bucket(tp).is_some();
            if in_buffer && self.buffer_bucket(tp) != Some(self.changes.count(tp)) {
                return Err(format!(
                    "buffered translation page {tp} is filed under {:?} changes, has {}",
                    self.buffer_bucket(tp),
                    self.changes.count(tp)
                ));
            }
            if self.cached(tp) {
                used += self.cost(tp);
                if in_buffer {
                    return Err(format!("translation page {tp} is both cached and in the dirty buffer"));
                }
            } else if in_buffer != (self.changes.count(tp) > 0) {
                return Err(format!(
                    "uncached translation page {tp} has {} unwritten changes but is {}in the dirty buffer",
                    self.changes.count(tp),
                    if in_buffer { "" } else { "not " }
                ));
            } else {
                buffered += self.changes.count(tp) as u64;
            }
        }
        if used != self.used || buffered != self.buffered {
            return Err(format!(
                "cache use {} and buffer {} are counted as {} and {}",
                used, buffered, self.used, self.buffered
            ));
        }
        if self.used > self.capacity || self.buffered > self.buffer_capacity {
            return Err(format!(
                "cache use {} of {} bytes, buffer {} of {} entries",
                self.used, self.capacity, self.buffered, self.buffer_capacity
            ));
        }
        Ok(())
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        vec![
            SramItem { structure: "TP cache (compressed translation pages)".into(), bytes: self.capacity },
            SramItem {
                structure: format!("dirty buffer ({} entries x {BUFFER_ENTRY_BYTES} B)", self.buffer_capacity),
                bytes: self.params.cache_bytes - self.capacity,
            },
        ]
    }

    fn cache_sram_in_use(&self) -> u64 {
        self.used + self.buffered * BUFFER_ENTRY_BYTES
    }

    fn state_bytes(&self) -> usize {
        self.lru.memory_bytes()
            + self.buffer.memory_bytes()
            + self.runs.len() * 4
            + self.changes.memory_bytes()
            + self.gc_batch.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{OpKind, Purpose};
    use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};
    use crate::host::PageRequest;
    use crate::workload::IoKind::{Read, Write};

    fn page(kind: crate::workload::IoKind, lpn: Lpn) -> PageRequest {
        PageRequest { arrival: 0, kind, first: lpn, pages: 1, span: crate::host::SectorSpan::WHOLE }
    }

    /// The invalidation log's write-back allocates pages and may run GC, whose moves grow cached
    /// TPs and the dirty buffer; with nothing making room afterwards the SRAM in use exceeded
    /// the configured SRAM (request 1952 of these writes on this tiny device).
    #[test]
    fn gc_during_the_logs_write_back_leaves_the_cache_within_its_sram() {
        let settings = ["gc.validity=\"ilog\"".into(), "gc.ilog_queue_bytes=10".into(), "gc.ilog_pages=4".into()];
        let config = crate::check::suite::test_device("sftl", 1, 2, 18, 16, &settings).unwrap();
        assert_eq!(config.check.invariants_every, 32);
        let mut sim = crate::Simulation::new(&config, "sftl").unwrap();
        let logical = config.device.logical_pages();
        for i in 0..3000u32 {
            let lpn = Lpn::new(i.wrapping_mul(2_654_435_761).rotate_left(9) % logical);
            sim.serve(page(Write, lpn)).unwrap_or_else(|e| panic!("request {i}: {e}"));
        }
        sim.check_invariants().unwrap();
        assert!(sim.ftl().blocks().ilog_stats().unwrap().ip_writes > 0);
    }

    #[test]
    fn runs_of_consecutive_ppns_decide_a_pages_size() {
        assert!(
            continues(Some(Ppn::new(7)), Some(Ppn::new(8)))
                && !continues(Some(Ppn::new(7)), Some(Ppn::new(9)))
                && continues(None, None)
                && !continues(None, Some(Ppn::new(0)))
        );
        let c = tiny_config(&[]);
        let mut sim = crate::Simulation::new(&c, "sftl").unwrap();
        sim.precondition().unwrap();
        // The fill wrote each TP's 8 LPNs to consecutive pages: one run; header, a one-byte
        // bitmap and one PPN.
        sim.serve(page(Read, Lpn::new(0))).unwrap();
        let ftl = sim.ftl();
        assert_eq!(ftl.sram_in_use().unwrap() - ftl.sram()[2].bytes - ftl.sram()[3].bytes, 8 + 1 + 4);
        // Rewriting LPN 3 splits the run in three.
        sim.serve(page(Write, Lpn::new(3))).unwrap();
        let ftl = sim.ftl();
        assert_eq!(ftl.sram_in_use().unwrap() - ftl.sram()[2].bytes - ftl.sram()[3].bytes, 8 + 1 + 3 * 4);
        sim.check_invariants().unwrap();
    }

    /// Paper 002's translation pages: 1,024 entries of 4 bytes in a 4 KB page.
    #[test]
    fn a_cached_page_costs_its_run_bitmap_and_run_heads_at_most_the_page() {
        // Written sequentially: header, 128-byte bitmap, one PPN.
        assert_eq!(compressed_bytes(1, 1024, 4096), 8 + 128 + 4);
        // Ten random overwrites in one run: 21 runs.
        assert_eq!(compressed_bytes(21, 1024, 4096), 8 + 128 + 21 * 4);
        // From 993 runs on the bitmap and run heads outgrow the page, which is kept as it is.
        assert_eq!(compressed_bytes(992, 1024, 4096), 8 + 4096);
        assert_eq!(compressed_bytes(993, 1024, 4096), 8 + 4096);
        assert_eq!(compressed_bytes(991, 1024, 4096), 8 + 128 + 991 * 4);
    }

    #[test]
    fn a_sparse_dirty_page_waits_in_the_buffer_and_a_dense_one_is_written_whole() {
        // Cache for pages: 48 bytes (two fragmented TPs do not fit); buffer: 2 entries.
        let c = tiny_config(&[
            "ftl.sftl.cache_bytes=64",
            "ftl.sftl.dirty_buffer_fraction=0.25",
            "ftl.sftl.sparse_threshold=1",
        ]);
        let mut sim = crate::Simulation::new(&c, "sftl").unwrap();
        sim.precondition().unwrap();
        sim.serve(page(Write, Lpn::new(3))).unwrap(); // TP 0: 1 change, 3 runs (20 B)
        for lpn in [8, 10, 12, 14] {
            sim.serve(page(Write, Lpn::new(lpn))).unwrap(); // TP 1 fragments: TP 0 is evicted
        }
        // TP 0 had one change: buffered, no flash write.
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 0);
        sim.serve(page(Read, Lpn::new(16))).unwrap(); // TP 1 (4 changes) is evicted: programmed, no read
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 1);
        assert_eq!(sim.ops().count(OpKind::Read, Purpose::Translation), 3);
        sim.serve(page(Read, Lpn::new(0))).unwrap(); // TP 0 comes back with its buffered change
        assert!(sim.ftl().lookup(Lpn::new(3), sim.flash()).is_some());
        sim.check_invariants().unwrap();
        let r = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report.cache;
        assert!(r.dirty_eviction_probability.unwrap() > 0.0);
    }

    /// GC's updates of pages whose TP is not cached are written when the collection returns, one
    /// update per TP touched, not left in the dirty buffer (the invariant check after every
    /// request finds none left).
    #[test]
    fn gc_updates_each_uncached_page_it_changed_once_when_it_returns() {
        let c = tiny_config(&["ftl.sftl.cache_bytes=64", "ftl.sftl.dirty_buffer_fraction=0.25"]);
        let mut sim = crate::Simulation::new(&c, "sftl").unwrap();
        sim.precondition().unwrap();
        let logical = c.device.logical_pages();
        for i in 0..3000u32 {
            sim.serve(page(Write, Lpn::new(i.wrapping_mul(2_654_435_761).rotate_left(9) % logical))).unwrap();
        }
        let counts = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report.wa_model.unwrap().counts;
        // Moves of several pages of one TP share its update.
        let gc_misses = counts.gc_accesses - counts.gc_hits;
        assert!(counts.gc_writebacks > 0 && counts.gc_writebacks < gc_misses, "{counts:?}");
    }

    #[test]
    fn runs_under_the_oracle_with_constant_gc_evictions_and_power_losses() {
        for args in [
            &["ftl.sftl.cache_bytes=160"][..],
            &["ftl.sftl.cache_bytes=96", "ftl.sftl.dirty_buffer_fraction=0.25", "ftl.sftl.sparse_threshold=2"],
        ] {
            let report = run_checked("sftl", args);
            assert!(report.cache.dirty_eviction_probability.is_some() && report.gc_victims > 0, "{args:?}");
            assert!(report.cache.gc_hit_ratio.is_some(), "{args:?}");
        }
    }
}
