//! SCFTL's worked examples (paper 000 Figs 5.1 and 5.2), its ablations under the oracle, and its
//! SRAM (Table 5.2). Table 5.1's victim orders are tested with the policy (`cache/nru.rs`).

use super::*;
use crate::config::ConfigBuilder;
use crate::flash::{OpKind, OpLog, Purpose};
use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};
use crate::metrics::CacheStats;
use crate::workload::synthetic::MixedSpec;

/// An SCFTL on the tiny device (8 mappings per TP, 8 pages per block), empty, driven page by page.
struct Rig {
    flash: FlashArray,
    ops: OpLog,
    cache: CacheStats,
    ftl: DemandFtl<Scftl>,
    version: u32,
}

impl Rig {
    fn new(sets: &[&str]) -> Rig {
        let config = tiny_config(sets);
        let scftl = Scftl::new(&config, ftl_params(&config, "scftl").unwrap()).unwrap();
        Rig {
            flash: FlashArray::new(&config.device.geometry, config.device.program_order),
            ops: OpLog::new(),
            cache: CacheStats::default(),
            ftl: DemandFtl::new(&config, scftl),
            version: 0,
        }
    }

    /// A rig whose TPs 0 and 2 hold one run each (LPNs 0..8 and 16..24 written in order) and TP 1
    /// the PPNs of Fig 5.1: LPNs 10, 11, 12 consecutive, 9 and 13 not; written back, cache cold.
    fn figure_5_1(sets: &[&str]) -> Rig {
        let mut r = Rig::new(sets);
        for lpn in (0..8).chain([10, 11, 12, 9, 13, 8, 14, 15]).chain(16..24) {
            r.write(Lpn::new(lpn));
        }
        r.forget();
        r
    }

    fn write(&mut self, lpn: Lpn) {
        self.version += 1;
        self.ops.clear();
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.write(lpn, self.version, &mut ctx).unwrap();
        self.check();
    }

    fn read(&mut self, lpn: Lpn) -> Option<Ppn> {
        self.ops.clear();
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        let ppn = self.ftl.read(lpn, &mut ctx).unwrap();
        self.check();
        ppn
    }

    fn trim(&mut self, lpn: Lpn) {
        self.ops.clear();
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.trim(lpn, &mut ctx).unwrap();
        self.check();
    }

    /// Loses every SRAM structure and recovers from flash.
    fn power_loss(&mut self) {
        self.ops.clear();
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.recover(&mut ctx).unwrap();
        self.check();
    }

    /// The version of the page an LPN resolves to.
    fn version(&self, ppn: Option<Ppn>, lpn: Lpn) -> Option<u32> {
        ppn.map(|p| {
            let spare = self.flash.spare_unchecked(p);
            assert_eq!(spare.logical, lpn.get(), "LPN {lpn} resolves to a page of LPN {}", spare.logical);
            spare.version
        })
    }

    /// Writes every change back, empties the cache and zeroes the counters.
    fn forget(&mut self) {
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.flush(&mut ctx).unwrap();
        self.ftl.reset_cache();
        self.reset_counts();
    }

    fn reset_counts(&mut self) {
        self.ops.reset_counts();
        self.cache = CacheStats::default();
    }

    fn check(&self) {
        self.ftl.check(&self.flash).unwrap();
        self.ftl.blocks().check(&self.flash).unwrap();
    }

    fn cmt(&self) -> &Cmt {
        self.ftl.scheme().cmt()
    }

    /// The cached entries by tag: (first LPN, last LPN, modified, A).
    fn entries(&self) -> Vec<(u32, u32, bool, bool)> {
        let c = self.cmt();
        let mut v: Vec<_> =
            c.slots().map(|s| (c.tag(s).get(), c.end(s).get() - 1, c.is_dirty(s), c.policy.is_referenced(s))).collect();
        v.sort_unstable();
        v
    }

    /// The cached entries by tag: (first LPN, last LPN, modified).
    fn spans(&self) -> Vec<(u32, u32, bool)> {
        self.entries().into_iter().map(|(first, last, dirty, _)| (first, last, dirty)).collect()
    }

    fn mc(&self, tp: u32) -> u32 {
        match &self.cmt().policy {
            Replacement::DNru(p) => p.modified_counter(tp),
            _ => panic!("not D-NRU"),
        }
    }

    fn ppn(&self, lpn: Lpn) -> Option<Ppn> {
        self.ftl.lookup(lpn, &self.flash)
    }

    fn translation(&self, kind: OpKind) -> u64 {
        self.ops.count(kind, Purpose::Translation)
    }
}

#[test]
fn figure_5_1_miss_consecutive_fetch_spatial_fetch_and_the_d_nru_choice() {
    // A 3-entry CMT, spatial size 4.
    let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=27", "ftl.scftl.max_spatial_entries=4"]);
    assert_eq!(r.cmt().capacity(), 3);
    // Build the CMT of the figure: entry 1 unmodified and not recently accessed; entry 2 modified,
    // not recently accessed, its TP's MC (1) under the threshold (7); entry 3 recently accessed.
    r.write(Lpn::new(16)); // TP 2's run fetched, then split: [16] modified, [17..23]
    r.read(Lpn::new(0)); // [0..7]
    r.read(Lpn::new(17)); // every entry has A now: A is cleared on all but [17..23]
    assert_eq!(r.entries(), [(0, 7, false, false), (16, 16, true, false), (17, 23, false, true)]);
    assert_eq!(r.mc(2), 1);
    r.reset_counts();

    let ppn = r.read(Lpn::new(11)).unwrap();
    // (1) A miss; the victim is entry 1 (¬A ∧ ¬M, class 1): no write-back. (2)-(4) One read of
    // TP 1 through the TPD gives the PPN. (5) LPNs 10 and 12 are consecutive with 11: one entry,
    // tag 10, C = 2, A set. (6) Spatial size 4: LPN 13 is fetched too, without A; the spatial
    // victim is entry 3 (A ∧ ¬M), not entry 2, modified with MC < c.
    assert_eq!(r.entries(), [(10, 12, false, true), (13, 13, false, false), (16, 16, true, false)]);
    assert_eq!(Some(ppn), r.ftl.scheme().store_ref().entry(Lpn::new(11)));
    assert_eq!(r.translation(OpKind::Read), 1);
    assert_eq!(r.translation(OpKind::Program), 0);
    assert_eq!((r.cache.miss_fetch, r.cache.accesses()), (1, 1));
    assert_eq!((r.cache.evictions, r.cache.dirty_evictions), (2, 0));
    let tp1 = r.ftl.scheme().store_ref().location(Tpn::new(1)).unwrap();
    assert_eq!(r.flash.spare_unchecked(tp1).logical, 1);
}

#[test]
fn one_search_finds_an_lpn_and_its_left_neighbour() {
    // Fig 5.1's CMT after the miss on 11: [10..12], [13], [16].
    let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=27", "ftl.scftl.max_spatial_entries=4"]);
    r.write(Lpn::new(16));
    r.read(Lpn::new(0));
    r.read(Lpn::new(17));
    r.read(Lpn::new(11));
    let cmt = r.cmt();
    let (run, single, sixteen) = (cmt.find(Lpn::new(10)), cmt.find(Lpn::new(13)), cmt.find(Lpn::new(16)));
    assert!(run.is_some() && single.is_some() && sixteen.is_some());
    for (lpn, expected) in [
        (10, (run, None)),
        (12, (run, run)),
        (13, (single, run)),
        (14, (None, single)),
        (15, (None, None)),
        (17, (None, sixteen)),
        (0, (None, None)),
    ] {
        assert_eq!(cmt.find_with_left(Lpn::new(lpn)), expected, "LPN {lpn}");
        assert_eq!(
            expected,
            (cmt.find(Lpn::new(lpn)), lpn.checked_sub(1).and_then(|l| cmt.find(Lpn::new(l)))),
            "LPN {lpn}"
        );
    }
}

#[test]
fn figure_5_2_the_four_update_cases() {
    let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=144"]);
    r.read(Lpn::new(16)); // [16..23], one run
    let old: Vec<Option<Ppn>> = (16..24).map(|l| r.ppn(Lpn::new(l))).collect();
    // (b) lower bound: the head leaves, the rest keeps its mappings from PPN + 1.
    r.write(Lpn::new(16));
    assert_eq!(r.spans(), [(16, 16, true), (17, 23, false)]);
    // (c) upper bound.
    r.write(Lpn::new(23));
    assert_eq!(r.spans(), [(16, 16, true), (17, 22, false), (23, 23, true)]);
    // (d) middle: three entries.
    r.write(Lpn::new(19));
    assert_eq!(r.spans(), [(16, 16, true), (17, 18, false), (19, 19, true), (20, 22, false), (23, 23, true)]);
    for lpn in [17, 18, 20, 21, 22] {
        assert_eq!(r.ppn(Lpn::new(lpn)), old[lpn as usize - 16], "LPN {lpn} keeps its PPN");
    }
    // (a) normal update: a one-mapping entry changes in place.
    let slot = r.cmt().find(Lpn::new(19)).unwrap();
    r.write(Lpn::new(19));
    assert_eq!(r.cmt().find(Lpn::new(19)), Some(slot));
    assert_eq!(r.spans().len(), 5);
    assert_eq!(r.mc(2), 3);
    // One miss (the first read), then hits; nothing evicted, nothing written back.
    assert_eq!((r.cache.miss_fetch, r.cache.hit, r.cache.evictions), (1, 4, 0));
}

#[test]
fn figure_5_2_split_entries_merge_back_under_sequential_writes() {
    let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=144"]);
    r.read(Lpn::new(16));
    // The next data block starts empty: LPNs 16..23 rewritten in order land on consecutive pages.
    for lpn in 16..24 {
        r.write(Lpn::new(lpn));
        assert!(r.spans().len() <= 2, "after LPN {lpn}: {:?}", r.spans());
    }
    assert_eq!(r.spans(), [(16, 23, true)]);
    assert_eq!(r.mc(2), 7); // eight modified mappings, shown saturated
    let first = r.ppn(Lpn::new(16)).unwrap();
    assert!((16..24).all(|l| r.ppn(Lpn::new(l)) == Some(first.offset(l - 16))));
}

#[test]
fn a_write_hit_whose_split_evicts_stays_a_hit() {
    // 3 entries, no prefetch: [24] (unmapped), [0..7], [16..23]; a middle write needs two more.
    let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=27", "ftl.scftl.spatial_fetch=false"]);
    for lpn in [24, 0, 16] {
        r.read(Lpn::new(lpn));
    }
    r.reset_counts();
    r.write(Lpn::new(19));
    assert_eq!(r.spans(), [(16, 18, false), (19, 19, true), (20, 23, false)]);
    assert_eq!((r.cache.hit, r.cache.accesses()), (1, 1));
    assert_eq!(r.cache.evictions, 2);
}

#[test]
fn a_spatial_fetch_spares_modified_entries_of_tps_under_the_threshold() {
    // Four entries, spatial size 4; TP 3 (LPNs 24..31) scrambled, so its runs are single mappings.
    // Returns the rig after the last read (counters from just before it) and the TP writes before.
    let run = |replacement: &str| {
        let mut r = Rig::figure_5_1(&["ftl.scftl.cache_bytes=36", "ftl.scftl.max_spatial_entries=4", replacement]);
        for lpn in [24, 26, 28, 30, 25, 27, 29, 31] {
            r.write(Lpn::new(lpn));
        }
        r.forget();
        for lpn in [0, 8, 16] {
            r.write(Lpn::new(lpn)); // modified single entries in TPs 0, 1, 2
        }
        r.read(Lpn::new(0));
        r.read(Lpn::new(8));
        let programs = r.translation(OpKind::Program);
        r.reset_counts();
        r.read(Lpn::new(25));
        (r, programs)
    };
    let (r, programs) = run("ftl.scftl.replacement=\"d-nru\"");
    // [0], [8], [16] modified with A and MC 1, [17..23] clean without A. The miss takes [17..23];
    // the fetched [25] sets the last A, so A is cleared on the others; the spatial fetch may not
    // take the modified entries (MC 1 < 7) and finds only [25] itself: it stops. No write-back.
    assert_eq!(programs, 0);
    assert_eq!(r.spans(), [(0, 0, true), (8, 8, true), (16, 16, true), (25, 25, false)]);
    assert_eq!((r.cache.miss_fetch, r.cache.evictions, r.translation(OpKind::Program)), (1, 1, 0));
    // LRU hands the least recently used entries to any fetch, modified or not.
    let (r, programs) = run("ftl.scftl.replacement=\"lru\"");
    assert!(programs + r.translation(OpKind::Program) > 0);
}

#[test]
fn a_dirty_eviction_writes_every_modified_entry_of_its_tp_and_keeps_them_clean() {
    let mut r = Rig::figure_5_1(&[
        "ftl.scftl.cache_bytes=45",
        "ftl.scftl.spatial_fetch=false",
        "ftl.scftl.replacement=\"lru\"",
    ]);
    r.write(Lpn::new(9)); // single-mapping runs in TP 1, both modified
    r.write(Lpn::new(13));
    r.reset_counts();
    for lpn in [0, 16, 24, 32] {
        r.read(Lpn::new(lpn));
    }
    // Some eviction took a modified TP 1 entry: one TP read and one program wrote both changes.
    assert_eq!(r.translation(OpKind::Program), 1);
    assert_eq!(r.cache.dirty_evictions, 1);
    assert!(r.entries().iter().all(|e| !e.2), "{:?}", r.entries());
    let store = r.ftl.scheme().store_ref();
    assert_eq!((store.entry(Lpn::new(9)), store.entry(Lpn::new(13))), (r.ppn(Lpn::new(9)), r.ppn(Lpn::new(13))));
}

#[test]
fn gc_moves_update_the_cache_without_reading_translation_pages() {
    // Pre-filled tiny device, small cache: GC moves are mostly misses without penalty.
    let report = run_checked("scftl", &["ftl.scftl.cache_bytes=90"]);
    assert!(report.cache.miss_no_penalty > 0);
    // Host pages are accessed once each; the rest are GC updates.
    let host = report.host.pages_read + report.host.pages_written + report.host.pages_trimmed;
    assert!(report.cache.accesses > host);
    // Large entries need the chunk from flash even for a GC update: no miss without penalty.
    let report = run_checked(
        "scftl",
        &["ftl.scftl.cache_bytes=200", "ftl.scftl.entry_layout=\"large\"", "ftl.scftl.large_entry_mappings=4"],
    );
    assert_eq!(report.cache.miss_no_penalty, 0);
    assert!(report.cache.miss_fetch > 0 && report.gc_victims > 0);
}

#[test]
fn every_host_page_is_classified_once_and_gc_updates_are_accesses() {
    use rand::{Rng, SeedableRng};
    let mut r = Rig::new(&["ftl.scftl.cache_bytes=90"]);
    for lpn in 0..288 {
        r.write(Lpn::new(lpn));
    }
    r.forget();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
    for _ in 0..3000 {
        let lpn = rng.gen_range(0..288);
        if rng.gen_bool(0.5) {
            r.write(Lpn::new(lpn));
        } else {
            r.read(Lpn::new(lpn));
        }
    }
    let c = &r.cache;
    assert_eq!(c.accesses() - c.gc_accesses, 3000);
    assert!(c.gc_accesses > 0 && c.gc_accesses <= r.ops.count(OpKind::Program, Purpose::Gc));
    assert!(c.hit > 0 && c.miss_no_penalty > 0 && c.miss_fetch > 0 && c.miss_writeback > 0);
    assert!(c.dirty_evictions > 0 && c.dirty_evictions < c.evictions);
}

#[test]
fn random_writes_reads_trims_and_power_losses_keep_every_mapping_in_every_variant() {
    use rand::{Rng, SeedableRng};
    for variant in [
        &[][..],
        &["ftl.scftl.cache_bytes=18"],
        &["ftl.scftl.replacement=\"lru\""],
        &["ftl.scftl.replacement=\"nru\""],
        &["ftl.scftl.mc_threshold=1", "ftl.scftl.max_spatial_entries=3"],
        &["ftl.scftl.consecutive_bits=1", "ftl.scftl.spatial_fetch=false"],
        &["ftl.scftl.entry_layout=\"large\"", "ftl.scftl.large_entry_mappings=2", "ftl.scftl.cache_bytes=120"],
    ] {
        for seed in 0..3 {
            let mut sets = vec!["ftl.scftl.cache_bytes=63"];
            sets.extend_from_slice(variant);
            let mut r = Rig::new(&sets);
            let mut model = vec![None; 288];
            let mut written = vec![None; 288];
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            for step in 0..2000 {
                // Runs of neighbours, so entries merge and split as well as come and go.
                let lpn = if rng.gen_bool(0.3) { (step * 7 / 3) % 288 } else { rng.gen_range(0..288) };
                match rng.gen_range(0..10) {
                    0..=4 => {
                        r.write(Lpn::new(lpn));
                        model[lpn as usize] = Some(r.version);
                        written[lpn as usize] = Some(r.version);
                    }
                    5..=8 => {
                        let found = r.read(Lpn::new(lpn));
                        assert_eq!(
                            r.version(found, Lpn::new(lpn)),
                            model[lpn as usize],
                            "{variant:?} seed {seed} step {step}"
                        );
                    }
                    _ => {
                        r.trim(Lpn::new(lpn));
                        model[lpn as usize] = None;
                    }
                }
                if step % 700 == 699 {
                    r.power_loss();
                    for lpn in 0..288 {
                        let found = r.ftl.lookup(Lpn::new(lpn), &r.flash);
                        // A trim still in SRAM is lost: the LPN may come back with its last write.
                        if model[lpn as usize].is_none() && r.version(found, Lpn::new(lpn)) == written[lpn as usize] {
                            model[lpn as usize] = written[lpn as usize];
                        }
                        assert_eq!(
                            r.version(found, Lpn::new(lpn)),
                            model[lpn as usize],
                            "{variant:?} seed {seed} recovered LPN {lpn}"
                        );
                    }
                }
            }
            assert!(r.cache.dirty_evictions > 0 && r.ftl.blocks().gc_victims() > 0, "{variant:?}");
        }
    }
}

#[test]
fn runs_under_the_oracle_with_evictions_gc_and_power_losses_in_every_variant() {
    for set in [
        &[][..],
        &["ftl.scftl.cache_bytes=18"], // two entries
        &["ftl.scftl.replacement=\"nru\""],
        &["ftl.scftl.replacement=\"lru\""],
        &["ftl.scftl.mc_threshold=1"],
        &["ftl.scftl.consecutive_bits=0"],
        &["ftl.scftl.consecutive_bits=2", "ftl.scftl.spatial_fetch=false"],
        &["ftl.scftl.max_spatial_entries=16"],
        &["ftl.scftl.entry_layout=\"large\"", "ftl.scftl.large_entry_mappings=8", "ftl.scftl.cache_bytes=300"],
        &["ftl.scftl.entry_layout=\"large\"", "ftl.scftl.large_entry_mappings=3", "ftl.scftl.cache_bytes=120"],
    ] {
        let mut args = vec!["ftl.scftl.cache_bytes=90"];
        args.extend_from_slice(set);
        let report = run_checked("scftl", &args);
        let c = &report.cache;
        assert!(c.dirty_eviction_probability.is_some_and(|p| p > 0.0) && c.miss_writeback > 0, "{set:?}");
        assert!(report.gc_victims > 0, "{set:?}");
        assert!(c.gc_hit_ratio.is_some(), "{set:?}");
    }
}

#[test]
fn with_a_cache_as_large_as_the_map_it_performs_like_pftl() {
    // 256 blocks of 64 2 KB pages (512 mappings per TP), 12288 LPNs.
    let sets = [
        "device.geometry.planes_per_die=1",
        "device.geometry.blocks_per_plane=256",
        "device.geometry.pages_per_block=64",
        "device.geometry.page_size=2048",
        "device.geometry.sector_size=2048",
        "device.overprovisioning=0.25",
        "ftl.scftl.cache_bytes=110592", // 9 bytes per LPN
    ];
    let config = sets.iter().fold(ConfigBuilder::new(), |b, s| b.set(s).unwrap()).build().unwrap();
    let spec = MixedSpec {
        requests: 40_000,
        read_fraction: 0.5,
        sequential_fraction: 0.2,
        hot_space_fraction: 0.2,
        hot_access_fraction: 0.8,
        random_max_pages: 2,
        sequential_request_pages: 8,
        mean_interarrival_us: 20_000.0, // a queue that drains: differences do not snowball
        seed: 5,
    };
    let mean = |ftl: &str| {
        let workload = spec.workload(config.device.logical_pages(), 2048).unwrap();
        let result = crate::sim::run(&config, ftl, workload).unwrap();
        assert!(result.report.gc_victims > 0);
        (result.report.response.mean_us, result.report.cache.clone())
    };
    let (pftl, _) = mean("pftl");
    let (scftl, cache) = mean("scftl");
    assert_eq!((cache.miss_writeback, cache.dirty_eviction_probability), (0, None));
    assert!((scftl / pftl - 1.0).abs() < 0.01, "SCFTL {scftl} us, PFTL {pftl} us");
}

#[test]
fn paper_000_table_5_2_sram() {
    let ftl = Scftl::build(&Config::preset("mlc8g").unwrap()).unwrap();
    let sram = ftl.sram();
    assert_eq!(sram[0].bytes, 18 * 1024); // CMT 18.00 KB
    assert_eq!(sram[0].structure, "CMT (2048 entries x 72 bits)");
    assert_eq!(sram[1].bytes, 2304); // GTD (TPD) 2.25 KB
    assert!(sram[1].structure.contains("512 entries x 36 bits"));
    assert_eq!(sram[2].bytes, 128 * 1024); // GC 128 KB
    assert_eq!(sram.iter().map(|s| s.bytes).sum::<u64>(), 151_808); // 148.25 KB
                                                                    // Chapter 7's 64 KB row: 72.00 KB of CMT.
    let c = ConfigBuilder::new().preset("mlc8g").unwrap().set("ftl.scftl.cache_bytes=73728").unwrap().build().unwrap();
    assert!(Scftl::build(&c).unwrap().sram()[0].structure.starts_with("CMT (8192 entries"));
}

#[test]
fn the_cache_size_in_bytes_is_converted_with_the_variants_own_entry_size() {
    let entries = |sets: &[&str]| {
        let c =
            sets.iter().fold(ConfigBuilder::new().preset("mlc8g").unwrap(), |b, s| b.set(s).unwrap()).build().unwrap();
        Scftl::new(&c, ftl_params(&c, "scftl").unwrap()).unwrap().cmt.capacity()
    };
    assert_eq!(entries(&[]), 2048);
    assert_eq!(entries(&["ftl.scftl.consecutive_bits=0"]), 18_432 * 8 / 67);
    assert_eq!(entries(&["ftl.scftl.entry_layout=\"large\"", "ftl.scftl.large_entry_mappings=64"]), 18_432 * 8 / 2083);
}

#[test]
fn unknown_and_bad_parameters_are_named() {
    let err = |set: &str| {
        let c = ConfigBuilder::new().set(set).unwrap().build().unwrap();
        Scftl::build(&c).err().unwrap().to_string()
    };
    assert!(err("ftl.scftl.cache_size=3").contains("ftl.scftl"));
    assert!(err("ftl.scftl.replacement=\"clock\"").contains("ftl.scftl.replacement"));
    assert!(err("ftl.scftl.cache_bytes=8").contains("ftl.scftl.cache_bytes"));
    assert!(err("ftl.scftl.mc_threshold=8").contains("ftl.scftl.mc_threshold"));
    assert!(err("ftl.scftl.max_spatial_entries=0").contains("ftl.scftl.max_spatial_entries"));
    let c = ConfigBuilder::new().set("ftl.scftl.large_entry_mappings=4096").unwrap();
    assert!(Scftl::build(&c.clone().build().unwrap()).is_ok()); // small entries ignore it
    let c = c.set("ftl.scftl.entry_layout=\"large\"").unwrap().build().unwrap();
    assert!(Scftl::build(&c).err().unwrap().to_string().contains("ftl.scftl.large_entry_mappings"));
    assert!(err("ftl.scftl.consecutive_bits=17").contains("ftl.scftl.consecutive_bits"));
}
