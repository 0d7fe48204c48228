//! The frame every demand-based FTL shares: host reads, writes and trims, lookup, flush,
//! recovery, checks and SRAM reporting, written once over a [`DemandScheme`] (the mapping cache
//! and its policies). A scheme implements translation (one classified cache access per host
//! page), the remapping after a write, and its GC updates in `Relocate::relocated`.

use serde::Serialize;

use super::translation::{
    write_back, write_back_recovered, TranslationOwner, TranslationStore, DATA_STREAM, DEMAND_STREAMS,
};
use super::BlockManager;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, PageKind, Ppn, Purpose, Spare, Tpn};
use crate::ftl::{Ftl, FtlCtx, PageLayout, PageRef, Prefetch, SramBreakdown, SramItem};
use crate::metrics::CacheAccess;

/// The scheme-specific half of a demand-based FTL.
pub trait DemandScheme: TranslationOwner + Send {
    fn name(&self) -> &'static str;

    fn store_ref(&self) -> &TranslationStore;

    /// See [`Ftl::begin_request`].
    fn begin_request(&mut self, _first: Lpn, _pages: u32) {}

    /// Translates an LPN for a host access, recording the access's class once in `ctx.cache`;
    /// returns its PPN (`None` if unmapped).
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>>;

    /// Records the new mapping of an LPN just translated and written (or trimmed: `None`).
    /// GC during the data page's allocation may have evicted its entry meanwhile.
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()>;

    /// Makes the room in SRAM that the mapping changes of GC outside a host access took (GC
    /// during the log's write-back or in the background); a scheme whose GC changes may outgrow
    /// its cache and buffer makes it here, as a host access does after its own GC.
    fn make_room(&mut self, _blocks: &mut BlockManager, _ctx: &mut FtlCtx) -> Result<()> {
        Ok(())
    }

    /// The mapping (`Some(None)`: unmapped) if SRAM holds it (cache or unwritten change),
    /// without side effects.
    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>>;

    /// Brings what translating `lpn` reads toward the CPU cache (a hint, no state change).
    fn prefetch(&self, lpn: Lpn) {
        self.store_ref().prefetch(lpn);
    }

    /// Writes back every unwritten mapping change, until none is left (GC during a write-back
    /// may make new ones, for TPs already written).
    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()>;

    /// Forgets the cache (it holds no unwritten change after `flush`; everything is lost on power loss).
    fn clear_cache(&mut self);

    /// Called after recovery rebuilt the translation store.
    fn recovered(&mut self) {}

    /// Scheme invariants (the store's are checked by the frame).
    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String>;

    /// The cache's SRAM structures.
    fn cache_sram(&self) -> Vec<SramItem>;

    /// Bytes of the cache's SRAM holding entries right now.
    fn cache_sram_in_use(&self) -> u64;

    /// See [`Ftl::cache_occupancy`].
    fn occupancy(&self) -> Option<crate::metrics::Occupancy> {
        None
    }

    /// Bits per GTD entry (32: a PPN).
    fn gtd_bits(&self) -> u32 {
        32
    }

    fn state_bytes(&self) -> usize;
    fn params(&self) -> serde_json::Value;
}

/// A demand-based FTL: a scheme and the block manager, kept apart so GC can borrow both.
pub struct DemandFtl<S> {
    map: S,
    blocks: BlockManager,
}

impl<S: DemandScheme> DemandFtl<S> {
    pub fn new(config: &Config, map: S) -> Self {
        DemandFtl { map, blocks: BlockManager::new(config, DEMAND_STREAMS) }
    }

    fn recover_and_write_back(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.recover_log(ctx);
        self.map.store().recover(&mut self.blocks, ctx)?;
        let store = self.map.store_ref();
        self.blocks.rebuild(ctx.flash, |ppn, spare| store.is_live(ppn, spare));
        self.map.recovered();
        write_back_recovered(&mut self.map, &mut self.blocks, ctx)?;
        self.map.flush(&mut self.blocks, ctx)?;
        self.write_back_log(ctx)?;
        Ok(())
    }

    pub fn scheme(&self) -> &S {
        &self.map
    }

    /// Writes the invalidation log back and makes room for the mapping changes of the GC that
    /// did (whose write-backs may invalidate pages the log must record in turn); returns whether
    /// a log page was written.
    fn write_back_log(&mut self, ctx: &mut FtlCtx) -> Result<bool> {
        let mut wrote = false;
        while self.blocks.write_back_log(&mut self.map, ctx)? {
            wrote = true;
            self.map.make_room(&mut self.blocks, ctx)?;
        }
        Ok(wrote)
    }
}

impl<S: DemandScheme> Ftl for DemandFtl<S> {
    fn name(&self) -> &'static str {
        self.map.name()
    }

    fn begin_request(&mut self, first: Lpn, pages: u32) {
        self.map.begin_request(first, pages);
    }

    #[inline]
    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let mut found = self.map.translate(lpn, &mut self.blocks, ctx)?;
        // A miss may have written a translation page back, invalidating its old copy; the log's
        // write-back may collect garbage and move the page.
        if self.write_back_log(ctx)? {
            found = self.lookup(lpn, ctx.flash);
        }
        let Some(ppn) = found else { return Ok(None) };
        ctx.read(ppn, Purpose::Host)?;
        Ok(Some(ppn))
    }

    #[inline]
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let old = self.map.translate(lpn, &mut self.blocks, ctx)?;
        if let Some(old) = old {
            self.blocks.invalidate(old, ctx.flash)?;
        }
        self.map.store().set_replacing(old.map(|ppn| (ppn, lpn)));
        let unit = self.blocks.host_unit(DATA_STREAM, lpn);
        let ppn = self.blocks.allocate(unit, DATA_STREAM, &mut self.map, ctx)?;
        self.map.store().set_replacing(None);
        self.map.store().program_data(ppn, lpn, version, ctx)?;
        self.map.remap(lpn, Some(ppn), &mut self.blocks, ctx)?;
        self.write_back_log(ctx)?;
        Ok(())
    }

    fn collect_in_background(&mut self, unit: u32, ctx: &mut FtlCtx) -> Result<bool> {
        let collected = self.blocks.collect_in_background(unit, &mut self.map, ctx)?;
        if collected {
            self.map.make_room(&mut self.blocks, ctx)?;
        }
        self.write_back_log(ctx)?;
        Ok(collected)
    }

    fn takes_page_layout(&self) -> bool {
        true
    }

    /// The layout's data pages become the store's content, with no translation page yet: the
    /// flush after preconditioning writes every one, each covering every data page (recovery
    /// then scans only what was written since, as after a replayed fill).
    fn adopt_page_layout(&mut self, layout: PageLayout, ctx: &mut FtlCtx) -> Result<()> {
        self.map.clear_cache();
        self.blocks.rebuild(ctx.flash, |ppn, spare| layout.is_live(ppn, spare));
        self.map.store().adopt(layout.into_map(), &self.blocks, ctx.flash);
        self.map.recovered();
        self.blocks.log_layout(&mut self.map, ctx)
    }

    /// A trim reaches flash only with its TP's next write-back (a power loss before brings the
    /// LPN back), so ILog does not log it.
    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.map.translate(lpn, &mut self.blocks, ctx)? {
            self.blocks.invalidate_unlogged(old, ctx.flash)?;
            self.map.remap(lpn, None, &mut self.blocks, ctx)?;
        }
        self.write_back_log(ctx)?;
        Ok(())
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn, stage: Prefetch, flash: &FlashArray) -> Option<Ppn> {
        match stage {
            Prefetch::Map => {
                self.map.prefetch(lpn);
                None
            }
            Prefetch::Pages => {
                let ppn = self.lookup(lpn, flash)?;
                self.blocks.prefetch_page(ppn, flash);
                Some(ppn)
            }
        }
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.cached(lpn).unwrap_or_else(|| self.map.store_ref().entry(lpn))
    }

    /// Paper 000 Fig 8.1 (see [`TranslationStore::recover`]); the cache starts empty. Recovery
    /// then writes back the TPs with mapping changes found only in data pages, and whatever
    /// changes GC made meanwhile, so the FTL resumes with nothing newer than flash outside its
    /// cache; that traffic is recovery cost.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.map.clear_cache();
        self.map.store().set_replacing(None);
        self.map.store().set_recovering(true);
        let result = self.recover_and_write_back(ctx);
        self.map.store().set_recovering(false);
        result
    }

    fn sram(&self) -> SramBreakdown {
        let mut items = self.map.cache_sram();
        items.push(self.map.store_ref().gtd_sram(self.map.gtd_bits()));
        items.push(self.blocks.validity_sram());
        items
    }

    fn state_bytes(&self) -> usize {
        self.map.state_bytes() + self.map.store_ref().state_bytes() + self.blocks.state_bytes()
    }

    /// Writes every translation page after the pre-fill data, with every change, as the spec's
    /// pre-fill recipe has it (2.5): recovery then finds every TP copy newer than the pre-fill
    /// data and scans only what was written since (paper 000 §8.2.5).
    fn flush(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        for tp in self.map.store_ref().tps() {
            write_back(&mut self.map, &mut self.blocks, tp, true, ctx)?;
        }
        self.map.flush(&mut self.blocks, ctx)?;
        self.write_back_log(ctx)?;
        Ok(())
    }

    fn reset_cache(&mut self) {
        self.map.clear_cache();
    }

    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.map.store_ref().check(&self.blocks, flash)?;
        self.map.check(flash)
    }

    fn referenced_pages(&self) -> Option<Vec<PageRef>> {
        Some(self.map.store_ref().referenced_pages())
    }

    fn sram_in_use(&self) -> Option<u64> {
        let fixed = self.map.store_ref().gtd_sram(self.map.gtd_bits()).bytes + self.blocks.validity_sram().bytes;
        Some(self.map.cache_sram_in_use() + fixed)
    }

    fn cache_occupancy(&self) -> Option<crate::metrics::Occupancy> {
        self.map.occupancy()
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        self.map.params()
    }
}

/// `Relocate::is_current` of a demand-based scheme (`gc.validity = "counters"`): a translation
/// page is current if the GTD (SRAM) points to it; a data page if its mapping does, from SRAM when
/// cached, else from its translation page, read for the purpose (one translation read, the entry
/// is not cached: paper 000 chapter 8's "look up the mapping").
pub fn is_current<S: DemandScheme>(scheme: &S, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
    let store = scheme.store_ref();
    if store.is_replaced(ppn, spare) {
        return Ok(false);
    }
    match spare.kind {
        PageKind::Translation => {
            Ok(spare.logical < store.tp_count() && store.location(Tpn::new(spare.logical)) == Some(ppn))
        }
        PageKind::Data if spare.logical < store.logical_pages() => {
            let lpn = Lpn::new(spare.logical);
            if let Some(mapping) = scheme.cached(lpn) {
                return Ok(mapping == Some(ppn));
            }
            store.fetch(store.tp_of(lpn), ctx)?;
            Ok(store.entry(lpn) == Some(ppn))
        }
        _ => Ok(false),
    }
}

/// How many entries of `bits` fit in `bytes` of SRAM; an error naming `field` if none does, or
/// if a configured cache would be larger than the map (see [`at_most_the_map`]).
pub fn entries_in(bytes: u64, bits: u32, config: &Config, field: &str) -> Result<u32> {
    if bits == 0 {
        return Err(SimError::config(field, "entry size must be at least one bit"));
    }
    let entries = bytes.saturating_mul(8) / bits as u64;
    if entries == 0 {
        return Err(SimError::config(field, format!("{bytes} bytes hold no {bits}-bit entry")));
    }
    Ok(at_most_the_map(entries, config, field)? as u32)
}

/// Rejects a configured cache (`field` = `ftl.<name>.<param>` set in the configuration) of more
/// mapping entries than the device has physical pages: a cache larger than the whole map (paper
/// 000's largest configuration, 8192 KB, holds exactly every page). A default size, the paper's,
/// is clamped to the map on a device too small for it. Returns the usable entry count.
pub fn at_most_the_map(entries: u64, config: &Config, field: &str) -> Result<u64> {
    let pages = config.device.geometry.total_pages() as u64;
    if entries <= pages {
        return Ok(entries);
    }
    let mut path = field.split('.').skip(1);
    let configured = match (path.next(), path.next()) {
        (Some(ftl), Some(param)) => config.ftl.get(ftl).and_then(|t| t.get(param)).is_some(),
        _ => true,
    };
    if configured {
        return Err(SimError::config(
            field,
            format!("holds {entries} mapping entries, more than the {pages} pages of the device: a cache larger than the map"),
        ));
    }
    Ok(pages)
}

/// `Relocate::prefetch_relocation` of a demand-based scheme: the mapping state of a data page GC
/// will move soon.
#[inline]
pub fn prefetch_relocation<S: DemandScheme>(scheme: &S, spare: Spare) {
    if spare.kind == PageKind::Data {
        scheme.prefetch(Lpn::new(spare.logical));
    }
}

/// SRAM of `entries` entries of `bits` bits.
pub fn sram_of(structure: String, entries: u64, bits: u32) -> SramItem {
    SramItem { structure, bytes: (entries * bits as u64).div_ceil(8) }
}

/// The class of a miss, from what it cost (spec 3.1: a write-back outranks a fetch).
#[inline]
pub fn miss_class(wrote_back: bool, fetched: bool) -> CacheAccess {
    if wrote_back {
        CacheAccess::MissWriteBack
    } else if fetched {
        CacheAccess::MissFetch
    } else {
        CacheAccess::MissNoPenalty
    }
}

/// Serialises a scheme's parameters for the result file.
pub fn params_json<T: Serialize>(params: &T) -> serde_json::Value {
    serde_json::to_value(params).expect("params serialise")
}

/// Small devices and checked runs for the schemes' tests.
#[cfg(test)]
pub mod tests_support {
    use crate::config::{Config, ConfigBuilder};
    use crate::flash::Lpn;
    use crate::host::PageRequest;
    use crate::metrics::Report;
    use crate::workload::synthetic::MixedSpec;
    use crate::workload::IoKind;
    use crate::Simulation;

    /// 1 die, 1 plane, 64 blocks x 8 pages of 32 bytes (8 entries per translation page), 288
    /// LPNs (36 TPs: with the TPs, 63% of the pages hold valid data), GC at 2 free blocks,
    /// pre-filled, invariants checked after every request; `sets` applied last.
    pub fn tiny_config(sets: &[&str]) -> Config {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=64",
            "device.geometry.pages_per_block=8",
            "device.geometry.page_size=32",
            "device.geometry.sector_size=32",
            "device.geometry.spare_size=16",
            "device.geometry.spare_usable=16",
            "device.logical_pages=288",
            "gc.free_blocks_low=2",
            "check.invariants_every=1",
        ]
        .iter()
        .chain(sets)
        {
            b = b.set(set).unwrap();
        }
        b.build().unwrap()
    }

    /// Runs a mixed workload (one request in 40 a trim) on the tiny device under the oracle and
    /// the invariants, with three power losses; returns the report.
    pub fn run_checked(ftl: &str, sets: &[&str]) -> Report {
        let config = tiny_config(sets);
        let mut sim = Simulation::new(&config, ftl).unwrap();
        sim.set_power_loss_points(vec![400, 1100, 1900]);
        sim.precondition().unwrap();
        let spec = MixedSpec {
            requests: 2500,
            read_fraction: 0.4,
            sequential_fraction: 0.2,
            random_max_pages: 3,
            sequential_request_pages: 4,
            mean_interarrival_us: 2000.0,
            seed: 11,
            ..MixedSpec::default()
        };
        let page = config.device.geometry.page_size as u64;
        let workload = spec.workload(config.device.logical_pages(), page as u32).unwrap();
        for (i, request) in workload.requests.enumerate() {
            let r = request.unwrap();
            let kind = if i % 40 == 39 { IoKind::Trim } else { r.kind };
            let req = PageRequest {
                arrival: r.arrival_ns,
                kind,
                first: Lpn::new((r.offset_bytes / page) as u32),
                pages: (r.len_bytes / page) as u32,
                span: crate::host::SectorSpan::WHOLE,
            };
            sim.serve(req).unwrap_or_else(|e| panic!("{ftl} {sets:?}, request {i}: {e}"));
        }
        sim.power_loss().unwrap_or_else(|e| panic!("{ftl} {sets:?}, final power loss: {e}"));
        let result = sim.result("checked", serde_json::Value::Null, 1.0).unwrap();
        assert_eq!(result.report.recovery.events, 4);
        result.report
    }
}
