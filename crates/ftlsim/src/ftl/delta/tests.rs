use super::*;
use crate::check::suite::test_device;
use crate::ftl::common::Relocate;
use crate::host::{PageRequest, SectorSpan};
use crate::metrics::{DeltaReport, DeltaStats, FlashTimes, GcFlashWork};
use crate::workload::IoKind;
use crate::Simulation;

fn request(kind: IoKind, lpn: u32) -> PageRequest {
    PageRequest { arrival: 0, kind, first: Lpn::new(lpn), pages: 1, span: SectorSpan::WHOLE }
}

/// A device of 2 planes x 16 blocks x 16 pages of 512 B, with `extra` settings.
fn device(extra: &[&str]) -> Config {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    test_device("delta", 1, 2, 16, 16, &extra).unwrap()
}

/// Writes over a hot set of LPNs (most writes; the set moves on every 1,500 requests, leaving
/// write-cold deltas behind) and the rest of the space, with some reads.
fn churn(sim: &mut Simulation, logical: u32, requests: u32) {
    for i in 0..requests {
        let x = i.wrapping_mul(2_654_435_761).rotate_left(7);
        let hot = logical / 8;
        let lpn = if x % 4 != 0 { (i / 1500 * hot + x % hot) % logical } else { x % logical };
        let kind = if x % 11 == 0 { IoKind::Read } else { IoKind::Write };
        sim.serve(request(kind, lpn)).unwrap();
    }
    sim.check_invariants().unwrap();
}

#[test]
fn hot_rewrites_become_deltas_and_gc_collects_both_areas() {
    let config = device(&["check.invariants_every=97"]);
    let mut sim = Simulation::new(&config, "delta").unwrap();
    let logical = config.device.logical_pages();
    churn(&mut sim, logical, 6000);
    let stats = sim.ftl().delta_stats().unwrap();
    assert!(stats.delta_writes > stats.writes / 4, "{stats:?}");
    assert!(stats.dla_pages > 0 && stats.deltas_committed > 0, "{stats:?}");
    assert!(stats.gc_victims_dla > 0 && stats.gc_victims_pma > 0, "{stats:?}");
    assert!(stats.merges_in_gc > 0, "{stats:?}");
    assert!(stats.delta_reads > 0, "{stats:?}");
}

/// Table 4.3's latencies on the test device's 512 B pages: read 25 µs, bus 40 µs per page,
/// program 200 µs; the CPU at its default 619 MHz (T_delta_encode = 44.0 µs).
const TABLE_4_3: [&str; 3] =
    ["device.latency.read_us=25", "device.latency.program_us=200", "device.latency.bus_ns_per_byte=78.125"];

fn run_at_ratio(mean: f64) -> crate::metrics::DeltaStats {
    let mean = format!("ftl.delta.compression_mean={mean}");
    let mut extra = TABLE_4_3.to_vec();
    extra.extend(["ftl.delta.compression_sigma=0", mean.as_str()]);
    let config = device(&extra);
    let mut sim = Simulation::new(&config, "delta").unwrap();
    churn(&mut sim, config.device.logical_pages(), 3000);
    sim.ftl().delta_stats().unwrap()
}

#[test]
fn the_bypass_engages_just_past_expression_4_2s_bound() {
    // At 619 MHz delta encoding pays while R_c < 1 - 44.0 / 200 = 0.78.
    let viable = run_at_ratio(0.77);
    assert!(viable.delta_writes > 100 && viable.bypassed == 0, "{viable:?}");
    let past = run_at_ratio(0.79);
    assert_eq!(past.delta_writes, 0, "the first candidate's ratio engages the bypass: {past:?}");
    assert!(past.bypassed > 100, "{past:?}");
}

#[test]
fn foreground_writes_follow_the_model_from_the_measured_p_c() {
    let stats = run_at_ratio(0.35);
    let report = report_of(stats, 16);
    let p_c = report.p_c.unwrap();
    assert!(p_c > 0.3, "{p_c}");
    assert_eq!(report.foreground_pages, stats.pma_pages + stats.dla_pages);
    assert_eq!(stats.pma_pages, stats.writes - stats.delta_writes, "every other eviction is one PMA page");
    // The DLA pages: the deltas' bytes with their header entries, plus what each page left
    // unused when the next delta did not fit (less than one delta of at most 205 B here).
    let packed = (stats.delta_bytes + 8 * stats.deltas_committed) as f64 / (512.0 - 2.0);
    let (dla, committed) = (stats.dla_pages as f64, stats.deltas_committed as f64);
    assert!(dla >= packed && dla * (512.0 - 2.0) < packed * (512.0 - 2.0) + dla * 213.0, "{dla} pages for {packed}");
    assert!(committed <= stats.delta_writes as f64, "the buffered ones are not on flash yet");
}

/// Table 4.3's array times.
const TIMES: FlashTimes = FlashTimes { read_us: 25.0, program_us: 200.0, erase_us: 1500.0 };

fn report_of(stats: DeltaStats, pages_per_block: u32) -> DeltaReport {
    DeltaReport::new(stats, 512, pages_per_block, GcFlashWork::default(), TIMES)
}

#[test]
fn foreground_writes_match_the_model_within_1_percent_when_deltas_pack_whole_pages() {
    // 4 KB pages; deltas of 2,039 B: two with their header entries and the page's count fill a
    // page exactly (2 + 2 x (8 + 2,039) = 4,096), so each takes half a page for R_c = 0.4978.
    let mean = format!("ftl.delta.compression_mean={}", 2039.0 / 4096.0);
    // Table 4.3 on 4 KB pages: the bus at 40 us per page.
    let config = device(&[
        "device.geometry.page_size=4096",
        "device.latency.read_us=25",
        "device.latency.program_us=200",
        "device.latency.bus_ns_per_byte=9.765625",
        "ftl.delta.compression_sigma=0",
        mean.as_str(),
    ]);
    let mut sim = Simulation::new(&config, "delta").unwrap();
    churn(&mut sim, config.device.logical_pages(), 3000);
    let report = sim.result("churn", serde_json::Value::Null, 0.0).unwrap().report.delta.unwrap();
    let (p_c, r_c) = (report.p_c.unwrap(), report.r_c.unwrap());
    assert!(p_c > 0.3 && (r_c - 2039.0 / 4096.0).abs() < 1e-12, "P_c {p_c}, R_c {r_c}");
    let (measured, model) = (report.foreground_pages as f64, report.foreground_model.unwrap());
    assert!((measured / model - 1.0).abs() < 0.01, "{measured} foreground pages, the model {model}");
}

#[test]
fn the_lifetime_model_is_reported_beside_the_runs_gc() {
    // The spec's worked example: P_c = 0.8, R_c = 0.35 over N = 64,000 evictions, P_ow = 0.5,
    // B_s = 64, t = 2,000 blocks: the DLA gains more (32 > 6.4), so Eq. 4.8 gives 0.48 N / 32.
    let stats = DeltaStats {
        writes: 64_000,
        delta_writes: 51_200,
        delta_bytes: (51_200.0 * 0.35 * 512.0) as u64,
        deltas_committed: 50_000,
        deltas_overwritten: 25_000,
        pma_blocks_dirtied: 2000,
        gc_victims_pma: 300,
        gc_victims_dla: 600,
        merges_on_read: 10,
        ..DeltaStats::default()
    };
    let gc = GcFlashWork { reads: 20_000, programs: 20_010, erases: 900 };
    let report = DeltaReport::new(stats, 512, 64, gc, TIMES);
    let lifetime = report.lifetime.unwrap();
    assert_eq!((lifetime.t_blocks, lifetime.gc_count), (2000, 900));
    assert!((lifetime.pma_gain - 6.4).abs() < 1e-9 && (lifetime.dla_gain - 32.0).abs() < 1e-12);
    assert!((lifetime.gc_count_model - 960.0).abs() < 1e-6, "{lifetime:?}");
    assert!((lifetime.gc_pe_model_us - 960.0 * (1500.0 + 200.0 * 32.0)).abs() < 1e-3);
    // The run's GC: 900 erases and 20,000 programs (the read-hot merges' 10 left out).
    assert_eq!(lifetime.gc_pe_us, 900.0 * 1500.0 + 20_000.0 * 200.0);
    let per_victim = (20_000.0 * 25.0 + lifetime.gc_pe_us) / 900.0;
    assert!((report.gc_us_per_victim.unwrap() - per_victim).abs() < 1e-9);
    let nothing_committed = DeltaStats { deltas_committed: 0, deltas_overwritten: 0, ..stats };
    assert_eq!(report_of(nothing_committed, 64).lifetime, None, "P_ow is undefined");
}

#[test]
fn the_periodic_scan_merges_write_cold_deltas() {
    let lazy = device(&["check.invariants_every=97"]);
    let scanned = device(&["check.invariants_every=97", "ftl.delta.cold_scan_every=500"]);
    let run = |config: &Config| {
        let mut sim = Simulation::new(config, "delta").unwrap();
        churn(&mut sim, config.device.logical_pages(), 6000);
        sim
    };
    let (lazy, scanned) = (run(&lazy), run(&scanned));
    let (l, s) = (lazy.ftl().delta_stats().unwrap(), scanned.ftl().delta_stats().unwrap());
    assert_eq!(l.merges_in_scan, 0);
    assert!(s.merges_in_scan > 0 && s.scan_reads >= s.merges_in_scan, "{s:?}");
    assert!(s.merges_in_gc < l.merges_in_gc, "the scan leaves GC fewer write-cold deltas: {s:?} {l:?}");
}

#[test]
fn a_scan_merges_the_write_cold_delta_and_keeps_the_write_hot_one() {
    use crate::flash::{CpuTask, OpKind, OpLog};
    use crate::metrics::CacheStats;
    let (mut ftl, mut flash) = constructed(7);
    let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
    let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
    // As in the GC test: LPNs 1 and 0 in delta form, LPN 1 write-cold, LPN 0 write-hot.
    for lpn in [1, 1, 0, 0, 2, 3] {
        ftl.write(Lpn::new(lpn), 1 + ftl.map.stats.writes as u32, &mut ctx).unwrap();
    }
    let base1 = ftl.lookup(Lpn::new(1), ctx.flash).unwrap();
    ctx.ops.clear();
    ftl.write(Lpn::new(2), 7, &mut ctx).unwrap(); // the 7th write: the scan runs first
    let merged1 = ftl.lookup(Lpn::new(1), ctx.flash).unwrap();
    assert_eq!(
        ops_of(ctx.ops)[..3],
        [
            (OpKind::Read, Purpose::Gc, base1.get()),
            (OpKind::Compute(CpuTask::Decompress), Purpose::Gc, base1.get()),
            (OpKind::Program, Purpose::Gc, merged1.get()),
        ],
        "the delta is still in the Temp Buffer: only the old version is read"
    );
    assert_eq!(ftl.delta_of(Lpn::new(1)), None);
    assert!(matches!(ftl.delta_of(Lpn::new(0)), Some(DeltaAt::Ram(_))), "write-hot: left in delta form");
    assert_eq!((ftl.map.stats.merges_in_scan, ftl.map.stats.scan_reads), (1, 1));
    ftl.check(ctx.flash).unwrap();
}

/// A delta-FTL on one plane of 16 blocks x 16 pages, half of them spare, with a 3-entry LRU
/// hotness cache (and the periodic scan every `cold_scan_every` writes), and the flash it writes.
fn constructed(cold_scan_every: u32) -> (DeltaFtl, FlashArray) {
    let mut extra: Vec<String> = TABLE_4_3.iter().map(|s| s.to_string()).collect();
    extra.push("device.overprovisioning=0.5".into());
    let config = test_device("delta", 1, 1, 16, 16, &extra).unwrap();
    let params =
        DeltaFtlParams { cache_entries: 3, protected_fraction: 0.0, cold_scan_every, ..DeltaFtlParams::default() };
    let flash = FlashArray::new(&config.device.geometry, config.device.program_order);
    (DeltaFtl::new(&config, params), flash)
}

fn ops_of(ops: &crate::flash::OpLog) -> Vec<(crate::flash::OpKind, Purpose, u32)> {
    ops.ops().iter().map(|op| (op.kind, op.purpose, op.ppn.get())).collect()
}

#[test]
fn gc_merges_or_moves_as_spec_4_7_lists() {
    use crate::flash::{CpuTask, OpKind, OpLog};
    use crate::metrics::CacheStats;
    let (mut ftl, mut flash) = constructed(0);
    let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
    let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
    // LPNs 1 and 0 written twice: old versions in the PMA, deltas in the Temp Buffer; 2 and 3
    // then push LPN 1 out of the 3-entry cache (write-cold), LPN 0 stays write-hot.
    for lpn in [1, 1, 0, 0, 2, 3] {
        ftl.write(Lpn::new(lpn), 1 + ftl.map.stats.writes as u32, &mut ctx).unwrap();
    }
    let (base0, base1) = (ftl.lookup(Lpn::new(0), ctx.flash).unwrap(), ftl.lookup(Lpn::new(1), ctx.flash).unwrap());
    ftl.map.commit(&mut ftl.blocks, Purpose::Host, &mut ctx).unwrap();
    let Some(DeltaAt::Flash(page)) = ftl.delta_of(Lpn::new(0)) else {
        panic!("committed: {:?} {:?}", ftl.delta_of(Lpn::new(0)), ftl.map.stats)
    };
    assert_eq!(ftl.delta_of(Lpn::new(1)), Some(DeltaAt::Flash(page)), "both deltas share a page");

    // A DLA victim: the write-cold delta is merged (read the old version, decompress, program the
    // original), the write-hot one goes back to the Temp Buffer; the page is then invalid.
    ctx.ops.clear();
    let spare = ctx.flash.spare_unchecked(page);
    assert!(ftl.map.take_over(&mut ftl.blocks, spare, page, &mut ctx).unwrap());
    let merged1 = ftl.lookup(Lpn::new(1), ctx.flash).unwrap();
    assert_eq!(
        ops_of(ctx.ops),
        vec![
            (OpKind::Read, Purpose::Gc, base1.get()),
            (OpKind::Compute(CpuTask::Decompress), Purpose::Gc, page.get()),
            (OpKind::Program, Purpose::Gc, merged1.get()),
        ]
    );
    assert_eq!(ftl.delta_of(Lpn::new(1)), None);
    assert_eq!(ctx.flash.spare_unchecked(merged1).version, 2, "the merged page holds the delta's version");
    assert!(matches!(ftl.delta_of(Lpn::new(0)), Some(DeltaAt::Ram(_))), "re-appended");
    assert!(!ftl.blocks.is_valid(page, ctx.flash) && !ftl.blocks.is_valid(base1, ctx.flash));

    // A PMA victim: the old version of a write-hot, read-cold delta is copied by GC (not taken
    // over); once the LPN is read-hot it is merged with its delta instead.
    ftl.map.commit(&mut ftl.blocks, Purpose::Host, &mut ctx).unwrap();
    let Some(DeltaAt::Flash(page0)) = ftl.delta_of(Lpn::new(0)) else { panic!("committed") };
    let spare = ctx.flash.spare_unchecked(base0);
    assert!(!ftl.map.take_over(&mut ftl.blocks, spare, base0, &mut ctx).unwrap());
    ftl.read(Lpn::new(0), &mut ctx).unwrap();
    ftl.read(Lpn::new(0), &mut ctx).unwrap();
    ctx.ops.clear();
    assert!(ftl.map.take_over(&mut ftl.blocks, spare, base0, &mut ctx).unwrap());
    let merged0 = ftl.lookup(Lpn::new(0), ctx.flash).unwrap();
    assert_eq!(
        ops_of(ctx.ops),
        vec![
            (OpKind::Read, Purpose::Gc, page0.get()),
            (OpKind::Compute(CpuTask::Decompress), Purpose::Gc, page0.get()),
            (OpKind::Program, Purpose::Gc, merged0.get()),
        ]
    );
    assert!(!ftl.blocks.is_valid(base0, ctx.flash) && !ftl.blocks.is_valid(page0, ctx.flash));
    ftl.check(ctx.flash).unwrap();
}

#[test]
fn power_loss_flushes_the_temp_buffer_and_recovery_finds_every_delta() {
    let config = device(&["check.invariants_every=250"]);
    let mut sim = Simulation::new(&config, "delta").unwrap();
    let logical = config.device.logical_pages();
    churn(&mut sim, logical, 2000);
    let in_delta = (0..logical).filter(|&l| sim.ftl().delta_of(Lpn::new(l)).is_some()).count();
    assert!(in_delta > 0);
    // Checks every LPN against the oracle through its delta, and the invariants.
    sim.power_loss().unwrap();
    let after = (0..logical).filter(|&l| sim.ftl().delta_of(Lpn::new(l)).is_some()).count();
    assert_eq!(after, in_delta, "the DMT comes back whole");
    assert!((0..logical).all(|l| !matches!(sim.ftl().delta_of(Lpn::new(l)), Some(DeltaAt::Ram(_)))));
    churn(&mut sim, logical, 1000);
}

/// FIU mail's 42 writes to three neighbouring 4 KB records, copied from the trace
/// (`tests/fixtures/traces/fiu_mail_cheetah.rewrites42.blkparse`): the first record is written
/// four times with the same MD5 and changes after; the second likewise; the third changes every
/// time. Each record is one 4 KB page, written without a buffer.
fn run_fiu(trace_content: bool) -> crate::metrics::DeltaStats {
    let content = format!("ftl.delta.trace_content={trace_content}");
    let config = device(&["device.geometry.page_size=4096", "host.address_policy=\"fold\"", content.as_str()]);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces/fiu_mail_cheetah.rewrites42.blkparse");
    let options = crate::workload::TraceOptions {
        format: Some(crate::workload::Format::Fiu),
        ..crate::workload::TraceOptions::default()
    };
    let mut sim = Simulation::new(&config, "delta").unwrap();
    sim.run(crate::workload::open(path, &options).unwrap(), &mut |_| {}).unwrap();
    sim.ftl().delta_stats().unwrap()
}

#[test]
fn a_rewrite_of_the_old_versions_content_is_an_empty_delta() {
    // Each record's first write has no old version; the other 39 are write-hot deltas. The
    // first two records' second to fourth writes repeat the content of the old version (6).
    let real = run_fiu(true);
    assert_eq!((real.writes, real.delta_writes, real.empty_deltas), (42, 39, 6), "{real:?}");
    let modelled = run_fiu(false);
    assert_eq!((modelled.delta_writes, modelled.empty_deltas), (39, 0));
    // The same Gaussian draws for the other 33 (common random numbers): only the bytes of the
    // six empty ones, about 0.35 of a page each, are missing.
    let missing = (modelled.delta_bytes - real.delta_bytes) as f64 / 4096.0;
    assert!(missing > 6.0 * 0.15 && missing < 6.0 * 0.55, "{missing} pages: {real:?} {modelled:?}");
}
