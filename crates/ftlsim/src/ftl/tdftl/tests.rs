use super::*;
use crate::check::suite::test_device;
use crate::config::ConfigBuilder;
use crate::config::ValidityTracking;
use crate::flash::{OpKind, OpLog};
use crate::metrics::CacheStats;

/// Paper 000 Fig 6.1's toy set-up: 8-bit LPNs and PPNs split 6 / 1 / 1 (two subgroups of two
/// LPNs per group), at most two indices per compressed image (2-bit offsets), one cache line;
/// 15 blocks of 16 pages so LPN 147 exists and 8 bits address every page.
fn toy() -> Config {
    let mut b = ConfigBuilder::new();
    for set in [
        "device.geometry.planes_per_die=1",
        "device.geometry.blocks_per_plane=15",
        "device.geometry.pages_per_block=16",
        "device.overprovisioning=0.33",
        "gc.free_blocks_low=1",
        "precondition.mode=\"none\"",
        "ftl.3dftl.lines=1",
        "ftl.3dftl.slot_bits=1",
        "ftl.3dftl.subgroup_bits=1",
        "ftl.3dftl.offset_bits=2",
        "ftl.3dftl.ppn_bits=8",
        "ftl.3dftl.index_slots=2",
    ] {
        b = b.set(set).unwrap();
    }
    b.build().unwrap()
}

struct Rig {
    ftl: Tdftl,
    flash: FlashArray,
    ops: OpLog,
    cache: CacheStats,
}

impl Rig {
    fn new(config: &Config) -> Self {
        let params: TdftlParams = ftl_params(config, "3dftl").unwrap();
        Rig {
            ftl: Tdftl::new(config, params).unwrap(),
            flash: FlashArray::new(&config.device.geometry, config.device.program_order),
            ops: OpLog::new(),
            cache: CacheStats::default(),
        }
    }
    fn write(&mut self, lpn: u32) {
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.write(Lpn::new(lpn), 1, &mut ctx).unwrap();
    }
    fn entries(&self, ppn: u32) -> Vec<Option<u32>> {
        let c = self.ftl.spare_content(Ppn::new(ppn));
        c.entries[..4].iter().map(|e| e.map(|p| p.get())).collect()
    }
}

#[test]
fn figure_6_1_writing_lpn_145_reads_ppn9_then_ppn6_and_writes_ppn11() {
    let mut rig = Rig::new(&toy());
    // Pages 0..=10 as the figure needs them: LPN 145 at PPN 2, 146 at 5, 144 at 6 (compressed,
    // holding 6, 2, 5, 0), 147 at 9 (uncompressed); group 25 (LPNs 100..=103) in between, so
    // the single line holds GTD25 when the request comes.
    for lpn in [147, 100, 145, 101, 102, 146, 144, 103, 100, 147, 101] {
        rig.write(lpn);
    }
    let ppn6 = rig.ftl.spare_content(Ppn::new(6));
    assert_eq!((ppn6.lpn, ppn6.included), (144, 0b11), "PPN6: LPN 144, compressed");
    assert_eq!(rig.entries(6), [Some(6), Some(2), Some(5), Some(0)]);
    let ppn9 = rig.ftl.spare_content(Ppn::new(9));
    assert_eq!((ppn9.lpn, ppn9.included), (147, 0b10), "PPN9: LPN 147, uncompressed (its own subgroup only)");
    assert_eq!(ppn9.ltd[..2], [Some(Ppn::new(6)), Some(Ppn::new(9))], "PPN9's LTD entries");
    assert_eq!(rig.ftl.gtd(36), Some(Ppn::new(9)));

    rig.ops.clear();
    rig.ops.reset_counts();
    rig.cache = CacheStats::default();
    let before = rig.ftl.spare_map_stats().unwrap();
    rig.write(145);
    // Steps 1-6: GTD25 evicted without a write; PPN9 (GTD level) then PPN6 (LTD level) read.
    let reads: Vec<u32> =
        rig.ops.ops().iter().filter(|op| op.kind == OpKind::SpareRead).map(|op| op.ppn.get()).collect();
    assert_eq!(reads, [9, 6]);
    assert_eq!((rig.cache.miss_fetch_two, rig.cache.evictions, rig.cache.accesses()), (1, 1, 1));
    assert_eq!(rig.ftl.spare_map_stats().unwrap().at_ltd, before.at_ltd + 1);
    // PPN6's stale entries of LTD1 (146 -> 5, 147 -> 0) were ignored: 147 still maps to 9.
    assert_eq!(rig.ftl.lookup(Lpn::new(147), &rig.flash), Some(Ppn::new(9)));
    // Steps 7-9: PPN2 invalidated, LPN 145 -> PPN11 written with the compressed line, GTD[36] = 11.
    assert!(!rig.ftl.blocks.is_valid(Ppn::new(2), &rig.flash));
    assert_eq!(rig.ftl.lookup(Lpn::new(145), &rig.flash), Some(Ppn::new(11)));
    assert_eq!(rig.ftl.gtd(36), Some(Ppn::new(11)));
    let ppn11 = rig.ftl.spare_content(Ppn::new(11));
    assert_eq!((ppn11.lpn, ppn11.included), (145, 0b11), "PPN11: compressed, both subgroups");
    assert_eq!(rig.entries(11), [Some(6), Some(11), Some(5), Some(9)]);
    assert_eq!(rig.ftl.spare_map_stats().unwrap().compressed, before.compressed + 1);
    assert_eq!(rig.ops.count(OpKind::Program, Purpose::Host), 1);
    assert_eq!(rig.ops.count(OpKind::Program, Purpose::Translation), 0, "write-through: no mapping write");
}

#[test]
fn sram_matches_paper_000_tables_6_1_and_8_1() {
    let config = Config::preset("mlc8g").unwrap();
    let sram = |lines: u32| {
        let ftl = Tdftl::new(&config, TdftlParams { lines, ..TdftlParams::default() }).unwrap();
        ftl.sram().iter().map(|s| s.bytes).collect::<Vec<_>>()
    };
    // Table 6.1: GTD 64.00 KB, CMT 32.73 KB (128 lines), GC bitmap 128 KB; 224.73 KB in all.
    assert_eq!(sram(128), [64 * 1024, 33_520, 128 * 1024]);
    assert_eq!(format!("{:.2}", 33_520.0 / 1024.0), "32.73");
    // Table 8.1's CMT of 80 lines (20.46 KB); with every flag in SRAM, the "212KB 3DFTL".
    assert_eq!(sram(80), [64 * 1024, 20_950, 128 * 1024]);
    assert_eq!(format!("{:.2}", (64.0 * 1024.0 + 20_950.0 + 131_072.0) / 1024.0), "212.46");
    // Table 7.1: 4 lines per nominal KB, from 2.05 KB (8 lines) to 8380 KB (32,768 lines).
    assert_eq!(format!("{:.2}", sram(8)[1] as f64 / 1024.0), "2.05");
    assert_eq!(format!("{:.2}", sram(32_768)[1] as f64 / 1024.0), "8380.00");
    // Table 8.1: without flags, 4,096 one-byte counters (100.73 KB in all); with ILog, the BIFT
    // (2 B per block, 8 KB) and the BIF queue (234 BIFs of 35 B, 8 KB), 100.46 KB in all.
    let sram_with = |lines: u32, validity: ValidityTracking| {
        let mut config = config.clone();
        config.gc.validity = validity;
        let ftl = Tdftl::new(&config, TdftlParams { lines, ..TdftlParams::default() }).unwrap();
        ftl.sram().iter().map(|s| s.bytes).collect::<Vec<_>>()
    };
    assert_eq!(sram_with(128, ValidityTracking::Counters), [64 * 1024, 33_520, 4096]);
    assert_eq!(format!("{:.2}", (64.0 * 1024.0 + 33_520.0 + 4096.0) / 1024.0), "100.73");
    assert_eq!(sram_with(80, ValidityTracking::Ilog), [64 * 1024, 20_950, 8192 + 234 * 35]);
    assert_eq!(format!("{:.2}", (8192.0 + 234.0 * 35.0) / 1024.0), "16.00");
    assert_eq!(format!("{:.2}", (64.0 * 1024.0 + 20_950.0 + 8192.0 + 8190.0) / 1024.0), "100.46");
}

/// Random single-page writes on a small device, enough for GC to run many times.
fn churn(config: &Config, writes: u32, seed: u32) -> crate::Simulation {
    let mut sim = crate::Simulation::new(config, "3dftl").unwrap();
    let logical = config.device.logical_pages();
    for i in 0..writes {
        let lpn = i.wrapping_mul(2_654_435_761).wrapping_add(seed).rotate_left(7) % logical;
        let req = crate::host::PageRequest {
            arrival: 0,
            kind: crate::workload::IoKind::Write,
            first: Lpn::new(lpn),
            pages: 1 + i % 3,
            span: crate::host::SectorSpan::WHOLE,
        };
        sim.serve(req).unwrap();
    }
    sim.check_invariants().unwrap();
    sim
}

#[test]
fn no_translation_page_is_ever_written_and_gc_looks_mappings_up() {
    let config = test_device("3dftl", 1, 2, 16, 32, &[]).unwrap();
    let sim = churn(&config, 6000, 1);
    let ops = sim.ops();
    assert!(ops.count(OpKind::Program, Purpose::Gc) > 0, "GC ran");
    assert_eq!(ops.count(OpKind::Program, Purpose::Translation), 0);
    assert!(ops.count(OpKind::SpareRead, Purpose::Translation) > 0, "misses read spare areas");
}

#[test]
fn without_compression_misses_read_more_spare_areas() {
    let run = |compression: bool| {
        let config = test_device("3dftl", 1, 2, 16, 32, &[format!("ftl.3dftl.compression={compression}")]).unwrap();
        let sim = churn(&config, 4000, 2);
        sim.ops().count(OpKind::SpareRead, Purpose::Translation)
    };
    let (reads_on, reads_off) = (run(true), run(false));
    assert!(reads_off > reads_on, "{reads_off} vs {reads_on} spare reads");
}

#[test]
fn a_device_too_large_for_the_ppn_bits_is_refused_naming_the_parameter() {
    let config = test_device("3dftl", 1, 2, 64, 32, &["ftl.3dftl.ppn_bits=8".into()]).unwrap();
    let err = Tdftl::build(&config).err().expect("refused").to_string();
    assert!(err.contains("ftl.3dftl.ppn_bits") && err.contains("4096 pages"), "{err}");
}

/// Pages read by one power-loss recovery of `sim`.
fn recovery_reads(sim: &mut crate::Simulation) -> u64 {
    let count = |sim: &crate::Simulation| {
        sim.ops().count(OpKind::SpareRead, Purpose::Recovery) + sim.ops().count(OpKind::Read, Purpose::Recovery)
    };
    let before = count(sim);
    sim.power_loss().unwrap();
    count(sim) - before
}

/// A device of 128 blocks of 64 pages filled once (every LPN written in order), then
/// overwritten at random `overwrites` times its logical pages; returns the simulation and the
/// programmed pages.
fn filled(ftl: &str, overwrites: u32) -> (crate::Simulation, u64, u64) {
    filled_with(ftl, overwrites, &[])
}

/// `count` single-page writes scattered over the `logical` pages by a fixed permutation-like hash.
fn write_scattered(sim: &mut crate::Simulation, count: u32, logical: u32) {
    for i in 0..count {
        let lpn = i.wrapping_mul(2_654_435_761).rotate_left(11) % logical;
        let req = crate::host::PageRequest {
            arrival: 0,
            kind: crate::workload::IoKind::Write,
            first: Lpn::new(lpn),
            pages: 1,
            span: crate::host::SectorSpan::WHOLE,
        };
        sim.serve(req).unwrap();
    }
}

/// [`filled`] with more settings.
fn filled_with(ftl: &str, overwrites: u32, settings: &[&str]) -> (crate::Simulation, u64, u64) {
    let mut extra = vec!["precondition.mode=\"fill\"".to_string(), "check.invariants_every=1000000".into()];
    extra.extend(settings.iter().map(|s| s.to_string()));
    let config = test_device(ftl, 1, 2, 64, 64, &extra).unwrap();
    let mut sim = crate::Simulation::new(&config, ftl).unwrap();
    sim.precondition().unwrap();
    let logical = config.device.logical_pages();
    write_scattered(&mut sim, overwrites * logical, logical);
    let g = config.device.geometry.clone();
    let programmed = g.blocks().map(|b| sim.flash().write_pointer(b) as u64).sum();
    (sim, g.total_blocks() as u64, programmed)
}

#[test]
fn recovery_of_a_full_valid_device_reads_about_m_plus_n_over_c_pages() {
    let (mut sim, m, n) = filled("3dftl", 0);
    let reads = recovery_reads(&mut sim);
    // Section 5.15: m + n/c with c = 16, the fewest PMT entries a spare area holds.
    assert!(reads <= m + n / 16, "{reads} reads, m = {m}, n = {n}");
    let (mut dftl, _, _) = filled("dftl", 0);
    let dftl_reads = recovery_reads(&mut dftl);
    assert!(reads < dftl_reads, "3DFTL {reads} vs DFTL {dftl_reads}");
}

#[test]
fn recovery_after_random_overwrites_stays_within_m_plus_n_over_2_and_below_dftl() {
    let (mut sim, m, n) = filled("3dftl", 2);
    let reads = recovery_reads(&mut sim);
    assert!(reads <= m + n / 2, "{reads} reads, m = {m}, n = {n}");
    let (mut dftl, _, _) = filled("dftl", 2);
    let dftl_reads = recovery_reads(&mut dftl);
    assert!(reads < dftl_reads, "3DFTL {reads} vs DFTL {dftl_reads}");
    eprintln!("recovery reads: 3DFTL {reads}, DFTL {dftl_reads}, m = {m}, n = {n}");
}

/// 3DFTL with ILog on [`filled`]'s device: 4 invalidation pages, 16 BIFs in the queue.
const WITH_ILOG: &[&str] =
    &["gc.validity=\"ilog\"", "gc.ilog_pages=4", "gc.ilog_queue_bytes=176", "device.logical_pages=7424"];

#[test]
fn recovery_with_ilog_stays_within_its_bound_and_skips_the_logged_invalid_pages() {
    for overwrites in [0, 2] {
        let (mut plain, _, _) = filled_with("3dftl", overwrites, &["device.logical_pages=7424"]);
        let plain_reads = recovery_reads(&mut plain);
        let (mut sim, m, n) = filled_with("3dftl", overwrites, WITH_ILOG);
        let log = sim.ftl().blocks().ilog().unwrap();
        let ip_blocks = log.pages().map(|(_, p)| p.get() / 64).collect::<std::collections::BTreeSet<_>>().len() as u64;
        let reads = recovery_reads(&mut sim);
        // Section 5.15: 2m + m_IP x 256 + n/c (pages per block here 64).
        assert!(reads <= 2 * m + ip_blocks * 64 + n / 16, "{reads} reads, m = {m}, n = {n}");
        eprintln!("{overwrites} overwrites: recovery reads 3DFTL {plain_reads}, 3DFTL+ILog {reads} (m = {m}, n = {n})");
        if overwrites > 0 {
            // The general case: the flags spare reading most invalid pages.
            assert!(reads < plain_reads, "3DFTL+ILog {reads} vs 3DFTL {plain_reads}");
        }
    }
}

/// Paper 000 §8.2.5's general-case set-up (`experiments/paper000-ch8.toml`, `setup = general`):
/// a quarter of the exported pages written, then overwritten at random inside that quarter three
/// times the exported pages, all through the FTL's own write path.
const GENERAL: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.fill_fraction=0.25",
    "precondition.age_span=0.25",
    "precondition.age_factor=3",
    "precondition.replay=true",
];

/// [`filled_with`]'s device (with [`WITH_ILOG`]'s exported pages) preconditioned with `setup`,
/// no run yet; and its exported pages.
fn preconditioned(ftl: &str, setup: &[&str]) -> (crate::Simulation, u32) {
    let mut sets = vec!["check.invariants_every=1000000".to_string(), "device.logical_pages=7424".into()];
    sets.extend(setup.iter().map(|s| s.to_string()));
    let config = test_device(ftl, 1, 2, 64, 64, &sets).unwrap();
    let mut sim = crate::Simulation::new(&config, ftl).unwrap();
    sim.precondition().unwrap();
    (sim, config.device.logical_pages())
}

#[test]
fn the_general_recovery_set_up_leaves_a_quarter_valid_after_filling_the_device_several_times() {
    for (ftl, extra) in [("dftl", &[][..]), ("3dftl", &[][..]), ("3dftl", WITH_ILOG)] {
        let setup: Vec<&str> = GENERAL.iter().chain(extra).copied().collect();
        let (sim, logical) = preconditioned(ftl, &setup);
        sim.check_invariants().unwrap();
        let mapped = Lpn::range(0, logical).filter(|&lpn| sim.ftl().lookup(lpn, sim.flash()).is_some()).count();
        assert_eq!(mapped as f64, (logical as f64 * 0.25).round(), "{ftl} {extra:?}: a quarter of {logical} valid");
        // Every page programmed is still there or was erased with its block.
        let g = sim.flash().geometry();
        let erased: u64 = sim.flash().erase_counts().map(|e| e as u64 * g.pages_per_block as u64).sum();
        let programmed = erased + g.blocks().map(|b| sim.flash().write_pointer(b) as u64).sum::<u64>();
        assert!(programmed >= 3 * logical as u64, "{ftl}: {programmed} pages programmed, the device several times");
    }
}

/// Recovery reads after `preconditioned(ftl, setup)` and random single-page writes of half the
/// exported pages.
fn recovery_after_a_run(ftl: &str, setup: &[&str]) -> u64 {
    let (mut sim, logical) = preconditioned(ftl, setup);
    write_scattered(&mut sim, logical / 2, logical);
    recovery_reads(&mut sim)
}

/// The direction of §8.2.5's factors (3DFTL+ILog over DFTL: 2.67 with every page valid, about 20
/// in the general case); their size depends on the device and the run (docs/validation.md).
#[test]
fn with_ilog_3dftl_recovers_with_fewer_reads_than_dftl_in_both_set_ups() {
    let ilog = |setup: &[&'static str]| setup.iter().chain(WITH_ILOG).copied().collect::<Vec<&str>>();
    let full: &[&str] = &["precondition.mode=\"fill\""];
    for (name, setup) in [("full-valid", full), ("general", GENERAL)] {
        let dftl = recovery_after_a_run("dftl", setup);
        let plain = recovery_after_a_run("3dftl", setup);
        let with_log = recovery_after_a_run("3dftl", &ilog(setup));
        eprintln!("{name}: recovery reads DFTL {dftl}, 3DFTL {plain}, 3DFTL+ILog {with_log}");
        assert!(with_log < dftl, "{name}: 3DFTL+ILog {with_log} vs DFTL {dftl}");
        if name == "general" {
            // Every page valid leaves nothing to skip (here the IPs' reads even it out).
            assert!(with_log < plain, "{name}: 3DFTL+ILog {with_log} vs 3DFTL {plain}");
        }
    }
}
