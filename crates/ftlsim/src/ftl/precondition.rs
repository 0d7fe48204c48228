//! The starting state every page-mapped FTL shares: [`PageLayout`], built once from the
//! configuration without any FTL's write path, then taken over by each FTL
//! ([`super::Ftl::adopt_page_layout`]).
//!
//! The data pages are laid out by a model of the shared page-mapped allocation (PFTL's: one data
//! stream, host writes striped over the allocation units, greedy or configured GC): the
//! sequential part is programmed directly on flash, page after page in allocation order, with no
//! operation logged; the random overwrites of `age` go through the model, whose GC then gives the
//! aged layout. An FTL taking the layout over rebuilds its map and its block manager from it
//! (PFTL copies the map; a demand-based FTL loads its translation store, whose translation pages
//! the flush after preconditioning writes, clean and consistent), so every FTL that takes it
//! starts with the same logical pages valid in the same physical places.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::gc_threshold;
use super::common::translation::TranslationStore;
use super::{Ftl, FtlCtx, PageFtl};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{Lpn, PageKind, Ppn, Spare};

/// Where each logical page lives after preconditioning (the pages themselves are on flash).
pub struct PageLayout {
    map: Vec<Option<Ppn>>,
}

impl PageLayout {
    /// Lays out `config`'s preconditioning on `ctx.flash` (erased), asking `version` for the
    /// version of every page written (the oracle's next one). Issues no logged operation for the
    /// sequential part; the aging's operations are left in `ctx.ops` for the caller to drop.
    pub fn build(config: &Config, mut version: impl FnMut(Lpn) -> u32, ctx: &mut FtlCtx) -> Result<PageLayout> {
        let p = &config.precondition;
        let logical = config.device.logical_pages();
        let mut model = PageFtl::new(config);
        model.fill_sequential(p.written_pages(logical), &mut version, ctx)?;
        if p.overwrites(logical) > 0 {
            model.withhold(translation_reserve(config), config.gc.free_blocks_low)?;
            for lpn in aging_overwrites(config) {
                ctx.ops.clear();
                model.write(lpn, version(lpn), ctx)?;
            }
        }
        Ok(PageLayout { map: model.into_map() })
    }

    /// Every LPN's page (`None`: never written).
    pub fn map(&self) -> &[Option<Ppn>] {
        &self.map
    }

    /// The map itself, for the FTL taking the layout over: moved, not copied, so a large
    /// device's map is never resident twice.
    pub fn into_map(self) -> Vec<Option<Ppn>> {
        self.map
    }

    /// Whether the programmed page `ppn` holding `spare` is the current copy of its LPN
    /// (for [`super::common::BlockManager::rebuild`]).
    #[inline]
    pub fn is_live(&self, ppn: Ppn, spare: Spare) -> bool {
        spare.kind == PageKind::Data && self.map.get(spare.logical as usize) == Some(&Some(ppn))
    }
}

/// The LPNs of `age`'s random single-page overwrites, in order: uniform over the overwrite span
/// (`precondition.age_span`, by default all that was written). The same sequence for the layout
/// model and for an FTL that replays its preconditioning.
pub fn aging_overwrites(config: &Config) -> impl Iterator<Item = Lpn> {
    let p = &config.precondition;
    let logical = config.device.logical_pages();
    let span = p.overwrite_span(logical).max(1);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed ^ 0xA6E5_0F0F);
    (0..p.overwrites(logical)).map(move |_| Lpn::new(rng.gen_range(0..span)))
}

/// Free blocks per allocation unit the aging keeps out of the data's reach: the blocks a
/// demand-based FTL fills with its translation pages (written round robin over the units), one
/// open translation block, and its higher GC threshold (two streams). Without them, such an FTL
/// would collect while writing its translation pages and move data pages, and FTLs sharing the
/// layout would not start alike. The layout reserves the same blocks for every FTL (a PFTL
/// starts with them free).
fn translation_reserve(config: &Config) -> u32 {
    let units = config.device.allocation_units();
    let ppb = config.device.geometry.data_pages_per_block();
    let low = config.gc.free_blocks_low;
    let translation_blocks = TranslationStore::pages_needed(config).div_ceil(units).div_ceil(ppb);
    translation_blocks + 1 + gc_threshold(low, 2) - gc_threshold(low, 1)
}

/// The host writes of `config`'s preconditioning, in order, for an FTL that replays it through
/// its own write path (block-mapped, log-block and clustered schemes, which place data their own
/// way): the sequential part, then the aging's overwrites.
pub fn replay_plan(config: &Config) -> impl Iterator<Item = Lpn> {
    let written = config.precondition.written_pages(config.device.logical_pages());
    Lpn::range(0, written).chain(aging_overwrites(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::suite::test_device_for;
    use crate::config::ConfigBuilder;
    use crate::flash::{BlockState, FlashArray, OpLog};
    use crate::ftl::{ftl_info, REGISTRY};
    use crate::metrics::CacheStats;
    use crate::workload::{IoKind, Request};
    use crate::Simulation;

    /// 2 dies x 2 planes x 32 blocks x 16 pages of 512 bytes (128 entries per translation page),
    /// a quarter spare, GC at one free block, with `sets`.
    /// Spare areas large enough for every registered scheme's records (3DFTL's 112 B).
    fn device(sets: &[&str]) -> Config {
        let spare = ["device.geometry.spare_size=128", "device.geometry.spare_usable=112"];
        let sets: Vec<String> = spare.iter().chain(sets).map(|s| s.to_string()).collect();
        test_device_for(ftl_info("pftl").unwrap(), 2, 2, 32, 16, &sets).unwrap()
    }

    #[test]
    fn the_direct_fill_places_every_page_where_pftls_write_path_would() {
        for unit in ["die", "plane"] {
            let config = device(&["precondition.mode=\"fill\"", &format!("device.allocation_unit=\"{unit}\"")]);
            let g = &config.device.geometry;
            let (mut direct, mut replayed) =
                (FlashArray::new(g, config.device.program_order), FlashArray::new(g, config.device.program_order));
            let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
            let mut ctx = FtlCtx { flash: &mut direct, ops: &mut ops, cache: &mut cache };
            let layout = PageLayout::build(&config, |_| 1, &mut ctx).unwrap();
            assert!(ctx.ops.ops().is_empty(), "the sequential part logs no operation");
            let mut pftl = PageFtl::new(&config);
            let mut ctx = FtlCtx { flash: &mut replayed, ops: &mut ops, cache: &mut cache };
            for lpn in Lpn::range(0, config.device.logical_pages()) {
                pftl.write(lpn, 1, &mut ctx).unwrap();
                assert_eq!(pftl.lookup(lpn, ctx.flash), layout.map()[lpn.index()], "{unit}: LPN {lpn}");
            }
            for ppn in g.pages() {
                assert_eq!(direct.read(ppn).ok(), replayed.read(ppn).ok(), "{unit}: PPN {ppn}");
            }
        }
    }

    /// Per physical page, the LPN whose valid copy it holds (data pages only), and the free
    /// blocks plus the blocks holding translation pages.
    fn starting_state(sim: &Simulation) -> (Vec<Option<u32>>, usize) {
        let (flash, blocks) = (sim.flash(), sim.ftl().blocks());
        let g = flash.geometry();
        let valid_data = g
            .pages()
            .map(|ppn| {
                let data = flash.is_programmed(ppn) && flash.block_kind(g.block_of(ppn)) == PageKind::Data;
                (data && blocks.is_valid(ppn, flash)).then(|| flash.spare_unchecked(ppn).logical)
            })
            .collect();
        let translation_blocks = g
            .blocks()
            .filter(|&b| flash.block_state(b) != BlockState::Erased && flash.block_kind(b) == PageKind::Translation)
            .count();
        (valid_data, blocks.total_free_blocks() + translation_blocks)
    }

    #[test]
    fn every_page_mapped_ftl_starts_with_the_same_data_pages_and_free_space() {
        let modes: [&[&str]; 4] = [
            &["precondition.mode=\"fill\""],
            &["precondition.mode=\"age\"", "precondition.age_factor=1.5"],
            // Paper 004's aging, modes A and B.
            &["precondition.mode=\"age\"", "precondition.fill_fraction=0.7", "precondition.age_factor=0.2"],
            &[
                "precondition.mode=\"age\"",
                "precondition.fill_fraction=0.7",
                "precondition.age_span=0.2",
                "precondition.age_factor=1.0",
            ],
        ];
        for sets in modes {
            let config = device(sets);
            let mut reference = None;
            let mut takers = 0;
            for info in REGISTRY {
                let mut sim = Simulation::new(&config, info.name).unwrap();
                if !sim.ftl().takes_page_layout() {
                    continue;
                }
                takers += 1;
                sim.precondition().unwrap();
                sim.check_invariants().unwrap_or_else(|e| panic!("{} {sets:?}: {e}", info.name));
                let state = starting_state(&sim);
                let written = state.0.iter().flatten().count() as u32;
                assert_eq!(written, config.precondition.written_pages(config.device.logical_pages()));
                match &reference {
                    None => reference = Some((info.name, state)),
                    Some((first, expected)) => {
                        assert!(state.0 == expected.0, "{} and {first} differ in data pages ({sets:?})", info.name);
                        assert_eq!(state.1, expected.1, "{} and {first}: free space ({sets:?})", info.name);
                    }
                }
            }
            assert!(takers >= 7, "PFTL, the optimal FTL and the five demand-based FTLs take the layout");
        }
    }

    /// 3DFTL keeps its map in the data pages' spare areas, so it replays the fill through its
    /// own write path; a sequential fill still lands where the shared layout puts it.
    #[test]
    fn a_filled_3dftl_starts_with_the_shared_layouts_data_pages_and_free_space() {
        let config = device(&["precondition.mode=\"fill\""]);
        let start = |ftl: &str| {
            let mut sim = Simulation::new(&config, ftl).unwrap();
            sim.precondition().unwrap();
            starting_state(&sim)
        };
        let (shared, tdftl) = (start("pftl"), start("3dftl"));
        assert!(shared.0 == tdftl.0, "data pages differ");
        assert_eq!(shared.1, tdftl.1, "free space");
    }

    /// `rounds` passes of one-page reads over LPNs 0..64, in order, 1 ms apart.
    fn rereads(config: &Config, rounds: u64) -> crate::workload::Workload {
        let page = config.device.geometry.page_size as u64;
        let requests =
            (0..rounds * 64).map(move |i| Ok(Request::new(i * 1_000_000, IoKind::Read, (i % 64) * page, page, i + 1)));
        crate::workload::Workload::new("rereads", serde_json::Value::Null, requests)
    }

    #[test]
    fn a_warm_up_leaves_the_mapping_cache_warm_and_is_not_measured() {
        let run = |warm_up: u64| {
            let config = device(&["precondition.mode=\"fill\"", &format!("precondition.warm_up_requests={warm_up}")]);
            let mut sim = Simulation::new(&config, "dftl").unwrap();
            sim.precondition().unwrap();
            sim.run(rereads(&config, 2), &mut |_| {}).unwrap().report
        };
        let (cold, warm) = (run(0), run(64));
        assert_eq!((cold.host.requests, warm.host.requests), (128, 64), "the warm-up's requests are not reported");
        assert_eq!(cold.cache.hit, 64, "the first pass misses, the second hits");
        assert_eq!((warm.cache.accesses, warm.cache.hit), (64, 64), "the warm-up's pass loaded every entry");
        assert_eq!(warm.reads.translation, 0);
        assert!(cold.reads.translation > 0);
    }

    #[test]
    fn a_warm_up_longer_than_the_workload_is_refused_naming_the_field() {
        let config = device(&["precondition.warm_up_requests=100"]);
        let mut sim = Simulation::new(&config, "dftl").unwrap();
        sim.precondition().unwrap();
        let e = sim.run(rereads(&config, 1), &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("precondition.warm_up_requests") && e.contains("after 64 requests"), "{e}");
    }

    /// The `cpm` preset shrunk to 131072 logical pages, with `sets`.
    fn cpm(sets: &[&str]) -> Config {
        let mut b = ConfigBuilder::new().preset("cpm").unwrap();
        for set in ["device.geometry.blocks_per_plane=1100", "device.logical_pages=131072"].iter().chain(sets) {
            b = b.set(set).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn paper_004_aging_writes_70_percent_then_overwrites_inside_it() {
        // Mode A, the preset's: 70% sequentially, then 20% of the logical space at random inside it.
        let a = cpm(&[]);
        let logical = a.device.logical_pages();
        assert_eq!(a.precondition.written_pages(logical), 91750);
        let overwrites: Vec<Lpn> = aging_overwrites(&a).collect();
        assert_eq!(overwrites.len() as u64, (logical as f64 * 0.2) as u64);
        assert!(overwrites.iter().all(|lpn| lpn.get() < 91750));
        assert!(overwrites.iter().any(|lpn| lpn.get() > 85000), "uniform over the written 70%");
        // Mode B: confined to a 20% sub-range, totalling the logical space.
        let b = cpm(&["precondition.age_span=0.2", "precondition.age_factor=1.0"]);
        let overwrites: Vec<Lpn> = aging_overwrites(&b).collect();
        assert_eq!(overwrites.len(), logical as usize);
        assert!(overwrites.iter().all(|lpn| lpn.get() < 26214), "mode B: inside the first 20%");
        assert!(overwrites.iter().any(|lpn| lpn.get() > 25000));
    }
}
