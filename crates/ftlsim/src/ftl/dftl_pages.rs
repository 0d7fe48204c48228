//! DFTL as paper 004 describes it (`ftl.dftl.cache_unit = "vtp"`): the cached mapping table
//! holds whole translation pages ("on a map miss, multiple logically contiguous entries are
//! loaded, i.e. a whole VTP"), in LRU order (spec C8). A miss reads the page; evicting a page
//! with changes writes it back whole, without a read; GC loads the page of every entry it
//! moves, as CPM does (spec C.9's map loading during GC). The shared [`PageCache`] is CPM's own,
//! so the two schemes are compared on equal terms (spec C17).

use super::common::cache::{load, CachesPages, PageCache};
use super::common::demand::{params_json, prefetch_relocation, DemandScheme};
use super::common::translation::{write_back, TranslationOwner, TranslationStore};
use super::common::{BlockManager, Relocate};
use super::dftl::DftlParams;
use super::{FtlCtx, SramItem};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};

pub struct DftlPages {
    params: DftlParams,
    store: TranslationStore,
    cmt: PageCache,
    page_bytes: u64,
}

/// The parameters that shape the entry cache only (`cache_unit = "entry"`).
const ENTRY_ONLY: [&str; 5] = ["entry_bits", "replacement", "protected_fraction", "batch_update", "gc_batch_update"];

impl DftlPages {
    pub fn new(config: &Config, params: DftlParams) -> Result<Self> {
        let set = config.ftl.get("dftl").and_then(|t| t.as_table());
        if let Some(name) = ENTRY_ONLY.iter().find(|n| set.is_some_and(|t| t.contains_key(**n))) {
            return Err(SimError::config(
                format!("ftl.dftl.{name}"),
                "applies to cache_unit = \"entry\" only: a cache of whole translation pages is LRU and writes a page back whole",
            ));
        }
        let store = TranslationStore::new(config)?;
        let page_bytes = config.device.geometry.page_size as u64;
        let pages = params.cache_bytes / page_bytes;
        if pages == 0 {
            return Err(SimError::config(
                "ftl.dftl.cache_bytes",
                format!("{} bytes hold no {page_bytes}-byte translation page", params.cache_bytes),
            ));
        }
        let cmt = PageCache::new(&store, pages.min(store.tp_count() as u64) as u32);
        Ok(DftlPages { params, store, cmt, page_bytes })
    }
}

impl Relocate for DftlPages {
    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        prefetch_relocation(self, spare);
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        crate::ftl::common::demand::is_current(self, ppn, spare, ctx)
    }

    /// A moved data page's entry is updated in its cached page, which GC loads first if SRAM
    /// lacks it (a GC miss, with a write-back if the room it needs costs one).
    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let Some(lpn) = self.store.relocated(spare, old, new)? else { return Ok(()) };
        let class = load(self, blocks, self.store.tp_of(lpn), ctx)?;
        ctx.cache.record_gc(class);
        self.cmt.set(lpn, Some(new), &self.store);
        Ok(())
    }
}

impl TranslationOwner for DftlPages {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    fn publish(&mut self, tp: Tpn) -> bool {
        self.cmt.publish(tp, &mut self.store);
        true
    }
}

impl CachesPages for DftlPages {
    fn pages(&mut self) -> &mut PageCache {
        &mut self.cmt
    }
}

impl DemandScheme for DftlPages {
    fn name(&self) -> &'static str {
        "dftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let class = load(self, blocks, self.store.tp_of(lpn), ctx)?;
        ctx.cache.record(class);
        Ok(self.cmt.entry(lpn, &self.store))
    }

    /// GC during the data page's allocation may have evicted the page translated just before:
    /// it is loaded again.
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        let tp = self.store.tp_of(lpn);
        if !self.cmt.contains(tp) {
            load(self, blocks, tp, ctx)?;
        }
        self.cmt.set(lpn, ppn, &self.store);
        Ok(())
    }

    /// A cached page holds all its entries.
    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.cmt.contains(self.store.tp_of(lpn)).then(|| self.cmt.entry(lpn, &self.store))
    }

    /// Pages with changes are cached whole: written back without a read.
    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        while let Some(tp) = self.store.tps().find(|&tp| self.cmt.dirty(tp) > 0) {
            write_back(self, blocks, tp, false, ctx)?;
        }
        Ok(())
    }

    fn clear_cache(&mut self) {
        self.cmt.clear();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.cmt.check()
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        let pages = self.cmt.capacity() as u64;
        vec![SramItem {
            structure: format!("CMT ({pages} translation pages x {} B)", self.page_bytes),
            bytes: pages * self.page_bytes,
        }]
    }

    fn cache_sram_in_use(&self) -> u64 {
        self.cmt.len() as u64 * self.page_bytes
    }

    fn state_bytes(&self) -> usize {
        self.cmt.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, Purpose};
    use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};
    use crate::host::{PageRequest, SectorSpan};
    use crate::workload::IoKind::{Read, Write};

    const VTP: &str = "ftl.dftl.cache_unit=\"vtp\"";

    fn page(kind: crate::workload::IoKind, lpn: u32) -> PageRequest {
        PageRequest { arrival: 0, kind, first: Lpn::new(lpn), pages: 1, span: SectorSpan::WHOLE }
    }

    #[test]
    fn the_cmt_holds_whole_pages_and_writes_a_changed_one_back_without_a_read() {
        // 8 entries per 32-byte translation page; two pages cached.
        let c = tiny_config(&[VTP, "ftl.dftl.cache_bytes=64"]);
        let mut sim = crate::Simulation::new(&c, "dftl").unwrap();
        sim.precondition().unwrap();
        let reads = |sim: &crate::Simulation| sim.ops().count(OpKind::Read, Purpose::Translation);
        let writes = |sim: &crate::Simulation| sim.ops().count(OpKind::Program, Purpose::Translation);
        sim.serve(page(Write, 0)).unwrap(); // miss: TP 0 read
        sim.serve(page(Read, 7)).unwrap(); // same TP: a hit
        sim.serve(page(Read, 8)).unwrap(); // miss: TP 1 read
        assert_eq!((reads(&sim), writes(&sim)), (2, 0));
        sim.serve(page(Read, 16)).unwrap(); // miss: evicts TP 0, changed: written whole, no read
        assert_eq!((reads(&sim), writes(&sim)), (3, 1));
        sim.serve(page(Read, 24)).unwrap(); // evicts TP 1, unchanged: nothing written
        assert_eq!((reads(&sim), writes(&sim)), (4, 1));
        let r = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report;
        assert_eq!((r.cache.hit, r.cache.miss_fetch, r.cache.miss_writeback), (1, 3, 1));
        assert_eq!(r.sram[0].bytes, 64);
        assert!(r.sram[0].structure.contains("2 translation pages"), "{}", r.sram[0].structure);
        sim.check_invariants().unwrap();
    }

    /// Paper 004 Fig. 3: blocks of 4 pages, a VTP covers 4 LPNs, the CMT holds two VTPs. A
    /// victim whose valid pages all belong to V0 loads one VTP; one holding pages of V0 and V2
    /// loads two. (Driven directly, so that GC runs exactly when the figure has it.)
    #[test]
    fn paper_004_fig_3_a_victim_with_scattered_pages_loads_more_pages() {
        use crate::flash::OpLog;
        use crate::ftl::common::demand::DemandFtl;
        use crate::ftl::Ftl;
        use crate::metrics::CacheStats;
        let gc_loads = |first: [u32; 2]| {
            let mut b = ConfigBuilder::new();
            for set in [
                VTP,
                "ftl.dftl.cache_bytes=32",
                "device.geometry.planes_per_die=1",
                "device.geometry.blocks_per_plane=16",
                "device.geometry.pages_per_block=4",
                "device.geometry.page_size=16",
                "device.geometry.sector_size=16",
                "device.geometry.spare_size=16",
                "device.geometry.spare_usable=16",
                "device.logical_pages=16",
                "gc.free_blocks_low=2",
                // Background GC collects on request, whatever the free blocks.
                "device.timing.model=\"parallel\"",
                "gc.background_free_blocks=15",
            ] {
                b = b.set(set).unwrap();
            }
            let c = b.build().unwrap();
            let params = crate::ftl::ftl_params(&c, "dftl").unwrap();
            let mut ftl = DemandFtl::new(&c, DftlPages::new(&c, params).unwrap());
            let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
            let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
            let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
            // The victim block: the two pages under test, then LPNs 2 and 3, overwritten next.
            for (version, lpn) in [first[0], first[1], 2, 3, 2, 3].into_iter().enumerate() {
                ftl.write(Lpn::new(lpn), version as u32 + 1, &mut ctx).unwrap();
            }
            // V3 and V1 fill the CMT (the pages' VTPs are written back).
            for lpn in [12, 4] {
                ftl.read(Lpn::new(lpn), &mut ctx).unwrap();
            }
            let before = (ctx.cache.gc_accesses, ctx.cache.gc_hits);
            assert!(ftl.collect_in_background(0, &mut ctx).unwrap());
            assert_eq!(ftl.blocks().gc_stats().moved[crate::flash::PageKind::Data as usize], 2);
            (ctx.cache.gc_accesses - before.0) - (ctx.cache.gc_hits - before.1)
        };
        assert_eq!(gc_loads([0, 1]), 1, "B0: both valid pages map through V0");
        assert_eq!(gc_loads([0, 9]), 2, "B2: through V0 and V2");
    }

    #[test]
    fn entry_cache_parameters_are_refused_with_whole_pages() {
        let c = ConfigBuilder::new().set(VTP).unwrap().set("ftl.dftl.replacement=\"lru\"").unwrap().build().unwrap();
        let e = crate::Simulation::new(&c, "dftl").err().unwrap().to_string();
        assert!(e.contains("ftl.dftl.replacement") && e.contains("cache_unit"), "{e}");
        let c = ConfigBuilder::new().set(VTP).unwrap().set("ftl.dftl.cache_bytes=100").unwrap().build().unwrap();
        let e = crate::Simulation::new(&c, "dftl").err().unwrap().to_string();
        assert!(e.contains("ftl.dftl.cache_bytes") && e.contains("no 8192-byte translation page"), "{e}");
    }

    #[test]
    fn runs_under_the_oracle_with_constant_gc_evictions_and_power_losses() {
        let report = run_checked("dftl", &[VTP, "ftl.dftl.cache_bytes=64"]);
        assert!(report.cache.miss_writeback > 0 && report.gc_victims > 0);
        assert!(report.cache.gc_hit_ratio.is_some());
    }
}
