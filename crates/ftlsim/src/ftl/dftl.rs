//! DFTL (Gupta et al., ASPLOS'09) as papers 000 and 002 use it: the page-level map lives in
//! translation pages; a cached mapping table (CMT) of single entries, replaced by segmented LRU,
//! exploits temporal locality (spec 4.4, paper 002 §2). Paper 004's DFTL, which caches whole
//! translation pages (`cache_unit = "vtp"`), is [`super::dftl_pages`].
//!
//! - A miss fetches the entry's TP (one translation read, also for writes: spec A6) after making
//!   room; a dirty victim's TP is read, merged and rewritten. With `batch_update` (paper 000 §3.3)
//!   every dirty cached entry of that TP goes into the same write and becomes clean; without it
//!   only the victim is written (DFTL as paper 002 describes it).
//! - GC: a moved page whose entry is cached updates it (a GC hit, recency unchanged, spec T21).
//!   Otherwise, by default, the entry is inserted dirty without a fetch (MISS without penalty, or
//!   with write-back if the room it needs costs one; spec 2.7). With `gc_batch_update` (paper 002)
//!   the uncached entries of each victim block are grouped by TP and each TP is updated once
//!   (read + write) when the block is done; the first miss of a group counts as the write-back.

use serde::{Deserialize, Serialize};

use super::common::cache::{EntryCache, Lru, Policy, ReplacementKind, SegmentedLru};
use super::common::changes::{GcBatch, Waiting};
use super::common::demand::{
    entries_in, miss_class, params_json, prefetch_relocation, sram_of, DemandFtl, DemandScheme,
};
use super::common::translation::{write_back, TranslationOwner, TranslationStore, DEMAND_LAYOUT, DEMAND_STREAMS};
use super::common::{BlockManager, Relocate};
use super::dftl_pages::DftlPages;
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::check::suite::{bytes_of, quarter_map};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};
use crate::metrics::{CacheAccess, Occupancy};

/// What the CMT caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheUnit {
    /// Single mapping entries (papers 000 and 002).
    Entry,
    /// Whole translation pages, LRU (paper 004: "a whole VTP"; spec C8).
    Vtp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DftlParams {
    /// SRAM of the CMT in bytes (paper 000 Table 5.2: 16.5 KB = 2048 entries).
    pub cache_bytes: u64,
    pub cache_unit: CacheUnit,
    /// Bits per CMT entry: LPN tag, PPN, valid and dirty flags (32 + 32 + 2 = 8.25 B, paper 000;
    /// paper 002 counts 8 B = 64 bits).
    pub entry_bits: u32,
    pub replacement: ReplacementKind,
    /// Segmented LRU: the protected segment's share of the entries (unstated; 50/50, spec A.8).
    pub protected_fraction: f64,
    /// Write back every dirty entry of the victim's TP together (paper 000); false: only the victim.
    pub batch_update: bool,
    /// Group GC updates of uncached entries per TP and victim block (paper 002's DFTL).
    pub gc_batch_update: bool,
}

pub const INFO: FtlInfo = FtlInfo {
    name: "dftl",
    description: "DFTL: demand-based, segmented-LRU entry cache, batch write-back (or whole translation pages, LRU)",
    family: Family::DemandBased,
    build,
    params: ParamsSchema::of::<DftlParams>(&[
        ParamSpec {
            name: "cache_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of the cached mapping table (CMT), bytes",
            source: "paper 000 Table 5.2: 16.5 KB = 2048 entries",
        },
        ParamSpec {
            name: "cache_unit",
            range: ParamRange::OneOf(&["entry", "vtp"]),
            meaning: "what the CMT caches: single entries, or whole translation pages in LRU order",
            source: "papers 000 and 002: entry; paper 004 (spec C8): vtp",
        },
        ParamSpec {
            name: "entry_bits",
            range: ParamRange::Integer { min: 1, max: 1024 },
            meaning: "bits per CMT entry (LPN, PPN, valid, dirty)",
            source: "paper 000: 66; paper 002: 64",
        },
        ParamSpec {
            name: "replacement",
            range: ParamRange::OneOf(&["slru", "lru"]),
            meaning: "CMT replacement policy",
            source: "paper 000 §3.3: segmented LRU",
        },
        ParamSpec {
            name: "protected_fraction",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "segmented LRU: the protected segment's share",
            source: "unstated; spec A.8 recommends 0.5",
        },
        ParamSpec {
            name: "batch_update",
            range: ParamRange::Flag,
            meaning: "write back every dirty entry of the victim's TP together",
            source: "paper 000 §3.3",
        },
        ParamSpec {
            name: "gc_batch_update",
            range: ParamRange::Flag,
            meaning: "group GC updates of uncached entries per TP and victim block",
            source: "paper 002 §2 (its DFTL)",
        },
    ]),
    spare_layout: DEMAND_LAYOUT,
    streams: DEMAND_STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 16.4,
    spare_blocks_needed: TranslationStore::spare_blocks_needed,
    test_overrides: |c| vec![("cache_bytes", bytes_of(quarter_map(c), 66))],
};

impl Default for DftlParams {
    fn default() -> Self {
        DftlParams {
            cache_bytes: 16_896,
            cache_unit: CacheUnit::Entry,
            entry_bits: 66,
            replacement: ReplacementKind::Slru,
            protected_fraction: 0.5,
            batch_update: true,
            gc_batch_update: false,
        }
    }
}

/// Builds DFTL with its configured cache unit and replacement policy.
pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let params: DftlParams = ftl_params(config, "dftl")?;
    let fraction = params.protected_fraction;
    Ok(match (params.cache_unit, params.replacement) {
        (CacheUnit::Entry, ReplacementKind::Slru) => Box::new(DemandFtl::new(
            config,
            Dftl::new(config, params, |entries| SegmentedLru::with_protected_fraction(entries, fraction))?,
        )),
        (CacheUnit::Entry, ReplacementKind::Lru) => {
            Box::new(DemandFtl::new(config, Dftl::new(config, params, Lru::new)?))
        }
        (CacheUnit::Vtp, _) => Box::new(DemandFtl::new(config, DftlPages::new(config, params)?)),
    })
}

/// DFTL with the CMT's replacement policy `P` as a type: the policy's operations are inlined
/// into every hit, insertion and eviction (a policy chosen at run time matched on its kind and
/// called out of line at each of them).
pub struct Dftl<P> {
    params: DftlParams,
    store: TranslationStore,
    cmt: EntryCache<P>,
    inflight: Waiting,
    /// `gc_batch_update`: moved pages of the current victim block whose entries were not cached.
    gc_batch: GcBatch,
}

impl<P: Policy + Send> Dftl<P> {
    /// `policy` builds the CMT's replacement order for its number of entries.
    pub fn new(config: &Config, params: DftlParams, policy: impl FnOnce(u32) -> P) -> Result<Self> {
        let entries = entries_in(params.cache_bytes, params.entry_bits, config, "ftl.dftl.cache_bytes")?;
        if !(0.0..1.0).contains(&params.protected_fraction) {
            return Err(SimError::config("ftl.dftl.protected_fraction", "must be in [0, 1)"));
        }
        let store = TranslationStore::new(config)?;
        Ok(Dftl {
            cmt: EntryCache::new(policy(entries), entries, store.logical_pages(), store.entries_per_tp()),
            gc_batch: GcBatch::new(store.tp_count()),
            inflight: Waiting::default(),
            store,
            params,
        })
    }

    /// Evicts until the CMT has a free slot; returns whether an eviction wrote a TP back. Runs
    /// for a dirty victim or a cache with room: a clean victim (97% on the OLTP stream) has its
    /// slot refilled in place instead ([`Self::evict_clean`]).
    fn make_room(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        let mut wrote = false;
        while self.cmt.is_full() {
            let victim = self.cmt.victim().expect("a full cache has a victim");
            let (lpn, ppn, dirty) = self.cmt.remove(victim);
            ctx.cache.evictions += 1;
            if dirty {
                self.write_back_victim(lpn, ppn, blocks, ctx)?;
                wrote = true;
            }
        }
        Ok(wrote)
    }

    /// Writes an evicted dirty entry to its TP.
    #[inline(never)]
    fn write_back_victim(
        &mut self,
        lpn: Lpn,
        ppn: Option<Ppn>,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        ctx.cache.dirty_evictions += 1;
        self.store.set(lpn, ppn);
        let tp = self.store.tp_of(lpn);
        write_back(self, blocks, tp, true, ctx)
    }

    /// A full CMT's victim if it is clean, counted as evicted; the caller refills its slot
    /// (`EntryCache::refill`). A clean eviction writes nothing back, so no GC runs before the
    /// refill and the mapping being cached needs no waiting place.
    #[inline]
    fn evict_clean(&mut self, ctx: &mut FtlCtx) -> Option<u32> {
        let victim = self.cmt.clean_victim()?;
        ctx.cache.evictions += 1;
        Some(victim)
    }

    /// Gives a changed mapping a CMT slot as a dirty entry, without a fetch.
    fn insert_dirty(
        &mut self,
        lpn: Lpn,
        ppn: Option<Ppn>,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<bool> {
        if let Some(victim) = self.evict_clean(ctx) {
            self.cmt.refill(victim, lpn, ppn, true);
            return Ok(false);
        }
        self.inflight.push(lpn, ppn);
        let wrote = self.make_room(blocks, ctx)?;
        let (lpn, ppn) = self.inflight.pop();
        self.cmt.insert(lpn, ppn, true);
        Ok(wrote)
    }

    /// Writes the TPs of the GC batch, by ascending number.
    fn flush_gc_batch(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        self.gc_batch.order_by_tp();
        while let Some(tp) = self.gc_batch.pop() {
            write_back(self, blocks, tp, true, ctx)?;
        }
        Ok(())
    }

    fn tp_of(&self, lpn: Lpn) -> Tpn {
        self.store.tp_of(lpn)
    }
}

impl<P: Policy + Send> Relocate for Dftl<P> {
    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        prefetch_relocation(self, spare);
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        crate::ftl::common::demand::is_current(self, ppn, spare, ctx)
    }

    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let Some(lpn) = self.store.relocated(spare, old, new)? else { return Ok(()) };
        if let Some(slot) = self.cmt.get(lpn) {
            self.cmt.update(slot, Some(new));
            ctx.cache.record_gc(CacheAccess::Hit);
        } else if self.inflight.relocated(lpn, new) {
            ctx.cache.record_gc(CacheAccess::Hit);
        } else if self.params.gc_batch_update {
            ctx.cache.record_gc(self.gc_batch.stage(&mut self.store, lpn, new));
        } else {
            let wrote = self.insert_dirty(lpn, Some(new), blocks, ctx)?;
            ctx.cache.record_gc(miss_class(wrote, false));
        }
        // The victim block's last move: write its batch.
        if !self.gc_batch.is_empty() && blocks.valid_count(ctx.flash.addressing().block_of(old), ctx.flash) == 0 {
            self.flush_gc_batch(blocks, ctx)?;
        }
        Ok(())
    }
}

impl<P: Policy + Send> TranslationOwner for Dftl<P> {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    fn publish(&mut self, tp: Tpn) -> bool {
        let store = &mut self.store;
        if self.params.batch_update {
            self.cmt.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
            self.inflight.publish(tp, store);
        }
        self.gc_batch.published(tp);
        self.cmt.dirty_count(tp) == 0 && (self.params.batch_update || !self.inflight.holds(tp, store))
    }
}

impl<P: Policy + Send> DemandScheme for Dftl<P> {
    fn name(&self) -> &'static str {
        "dftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    #[inline]
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        if let Some(slot) = self.cmt.get(lpn) {
            self.cmt.touch(slot);
            ctx.cache.record(CacheAccess::Hit);
            return Ok(self.cmt.ppn(slot));
        }
        let freed = self.evict_clean(ctx);
        let wrote = freed.is_none() && self.make_room(blocks, ctx)?;
        // GC during a write-back may have cached the entry (a moved page of this LPN); a clean
        // eviction runs no GC, so the lookup above still holds.
        if let Some(slot) = if wrote { self.cmt.get(lpn) } else { None } {
            self.cmt.touch(slot);
            ctx.cache.record(miss_class(wrote, false));
            return Ok(self.cmt.ppn(slot));
        }
        let fetched = self.store.fetch(self.tp_of(lpn), ctx)?;
        let ppn = self.store.entry(lpn);
        match freed {
            Some(victim) => self.cmt.refill(victim, lpn, ppn, false),
            None => {
                self.cmt.insert(lpn, ppn, false);
            }
        }
        ctx.cache.record(miss_class(wrote, fetched));
        Ok(ppn)
    }

    #[inline]
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        match self.cmt.get(lpn) {
            Some(slot) => self.cmt.update(slot, ppn),
            None => {
                self.insert_dirty(lpn, ppn, blocks, ctx)?;
            }
        }
        Ok(())
    }

    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.inflight.get(lpn).or_else(|| self.cmt.get(lpn).map(|slot| self.cmt.ppn(slot)))
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.cmt.prefetch(lpn);
        self.store.prefetch(lpn);
    }

    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        while let Some(tp) = self.store.tps().find(|&tp| self.cmt.dirty_count(tp) > 0) {
            let store = &mut self.store;
            self.cmt.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
            write_back(self, blocks, tp, true, ctx)?;
        }
        Ok(())
    }

    fn clear_cache(&mut self) {
        self.cmt.clear();
        self.inflight.clear();
        self.gc_batch.clear();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.cmt.check()?;
        self.inflight.check()?;
        self.gc_batch.check()?;
        for slot in self.cmt.slots() {
            let lpn = self.cmt.lpn(slot);
            if !self.cmt.is_dirty(slot) && self.cmt.ppn(slot) != self.store.entry(lpn) {
                return Err(format!(
                    "clean CMT entry LPN {lpn} -> {:?} disagrees with its translation page ({:?})",
                    self.cmt.ppn(slot),
                    self.store.entry(lpn)
                ));
            }
        }
        Ok(())
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        let n = self.cmt.capacity();
        vec![sram_of(format!("CMT ({n} entries x {} bits)", self.params.entry_bits), n as u64, self.params.entry_bits)]
    }

    fn occupancy(&self) -> Option<Occupancy> {
        Some(self.cmt.occupancy(self.params.cache_bytes))
    }

    fn cache_sram_in_use(&self) -> u64 {
        (self.cmt.len() as u64 * self.params.entry_bits as u64).div_ceil(8)
    }

    fn state_bytes(&self) -> usize {
        self.cmt.memory_bytes() + self.gc_batch.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::Pbn;
    use crate::flash::{OpKind, Purpose};
    use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};

    #[test]
    fn paper_000_table_5_2_sram() {
        let c = Config::preset("mlc8g").unwrap();
        let ftl = build(&c).unwrap();
        let sram = ftl.sram();
        assert_eq!(sram[0].bytes, 16_896); // CMT 16.50 KB, 2048 entries
        assert!(sram[0].structure.contains("2048 entries"));
        assert_eq!(sram[1].bytes, 2048); // GTD 2.00 KB
        assert_eq!(sram[2].bytes, 128 * 1024); // GC bitmap 128 KB
    }

    #[test]
    fn unknown_and_bad_parameters_are_named() {
        let c = ConfigBuilder::new().set("ftl.dftl.cache_size=3").unwrap().build().unwrap();
        assert!(build(&c).err().unwrap().to_string().contains("ftl.dftl"));
        let c = ConfigBuilder::new().set("ftl.dftl.cache_bytes=4").unwrap().build().unwrap();
        assert!(build(&c).err().unwrap().to_string().contains("ftl.dftl.cache_bytes"));
    }

    #[test]
    fn a_miss_fetches_and_a_dirty_eviction_merges_every_dirty_entry_of_its_tp() {
        // 8 entries per TP; a 3-entry LRU cache.
        let c = tiny_config(&["ftl.dftl.cache_bytes=24", "ftl.dftl.entry_bits=64", "ftl.dftl.replacement=\"lru\""]);
        let mut sim = crate::Simulation::new(&c, "dftl").unwrap();
        sim.precondition().unwrap();
        let page = |kind, lpn| crate::host::PageRequest {
            arrival: 0,
            kind,
            first: lpn,
            pages: 1,
            span: crate::host::SectorSpan::WHOLE,
        };
        use crate::workload::IoKind::{Read, Write};
        for lpn in [0, 1, 8] {
            sim.serve(page(Write, Lpn::new(lpn))).unwrap(); // three misses, each fetching its TP
        }
        let reads = sim.ops().count(OpKind::Read, Purpose::Translation);
        assert_eq!(reads, 3);
        sim.serve(page(Read, Lpn::new(16))).unwrap(); // evicts LPN 0: TP 0 written with LPNs 0 and 1
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 1);
        assert_eq!(sim.ops().count(OpKind::Read, Purpose::Translation), reads + 2);
        sim.serve(page(Read, Lpn::new(24))).unwrap(); // evicts LPN 1, now clean: no write
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 1);
        let r = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report.cache;
        assert_eq!((r.hit, r.miss_fetch, r.miss_writeback), (0, 4, 1));
        assert_eq!(r.dirty_eviction_probability, Some(0.5));
        sim.check_invariants().unwrap();
    }

    #[test]
    fn without_batch_update_only_the_victim_is_written() {
        let c = tiny_config(&[
            "ftl.dftl.cache_bytes=24",
            "ftl.dftl.entry_bits=64",
            "ftl.dftl.replacement=\"lru\"",
            "ftl.dftl.batch_update=false",
        ]);
        let mut sim = crate::Simulation::new(&c, "dftl").unwrap();
        sim.precondition().unwrap();
        let page = |kind, lpn| crate::host::PageRequest {
            arrival: 0,
            kind,
            first: lpn,
            pages: 1,
            span: crate::host::SectorSpan::WHOLE,
        };
        use crate::workload::IoKind::{Read, Write};
        for lpn in [0, 1, 8] {
            sim.serve(page(Write, Lpn::new(lpn))).unwrap();
        }
        sim.serve(page(Read, Lpn::new(16))).unwrap(); // evicts LPN 0 alone
        sim.serve(page(Read, Lpn::new(24))).unwrap(); // evicts LPN 1, still dirty: a second write of TP 0
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 2);
        sim.check_invariants().unwrap();
    }

    #[test]
    fn recovery_after_the_pre_fill_reads_block_heads_translation_pages_and_the_map() {
        let c = tiny_config(&["ftl.dftl.cache_bytes=40", "ftl.dftl.entry_bits=64"]);
        let mut sim = crate::Simulation::new(&c, "dftl").unwrap();
        sim.precondition().unwrap();
        sim.power_loss().unwrap();
        let g = &c.device.geometry;
        let translation_pages: u64 = (0..g.total_blocks())
            .filter(|&b| sim.flash().block_kind(Pbn::new(b)) == crate::flash::PageKind::Translation)
            .map(|b| sim.flash().write_pointer(Pbn::new(b)) as u64)
            .sum();
        let r = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report.recovery;
        // Every block head, every translation page's spare, the one data page that stops the
        // scan, and the newest copy of every TP in full (the map, for the pages' validity).
        let tps = crate::ftl::common::translation::TranslationStore::pages_needed(&c) as u64;
        assert_eq!(r.pages_read, g.total_blocks() as u64 + translation_pages + 1 + tps);
    }

    #[test]
    fn runs_under_the_oracle_with_constant_gc_evictions_and_power_losses() {
        for set in [
            &[][..],
            &["ftl.dftl.replacement=\"lru\""],
            &["ftl.dftl.batch_update=false"],
            &["ftl.dftl.gc_batch_update=true"],
            &["ftl.dftl.batch_update=false", "ftl.dftl.gc_batch_update=true", "ftl.dftl.replacement=\"lru\""],
        ] {
            let mut args = vec!["ftl.dftl.cache_bytes=40", "ftl.dftl.entry_bits=64"];
            args.extend_from_slice(set);
            let report = run_checked("dftl", &args);
            assert!(report.cache.dirty_eviction_probability.is_some() && report.gc_victims > 0, "{set:?}");
            assert!(report.cache.gc_hit_ratio.is_some(), "{set:?}");
        }
    }
}
