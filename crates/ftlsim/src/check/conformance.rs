//! The conformance suite every registered FTL runs: a fixed matrix of workloads on small test
//! devices, each run under the oracle (every host read, and every lookup in debug builds), the
//! full invariants (every 32 requests, after every recovery and at the end), power losses at
//! three seeded random points plus one at the end, and a read-back of every LPN through the read
//! path. Every workload writes enough to make garbage collection run (checked). It takes a
//! registry entry, so a scheme joins with its entry alone (`tests/conformance.rs` runs it over
//! [`crate::ftl::REGISTRY`], one trial per scheme and workload; docs/correctness.md).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::suite::{least_spare_device_for, test_device_for};
use super::PowerLossPlan;
use crate::config::Config;
use crate::error::SimError;
use crate::flash::Lpn;
use crate::ftl::common::translation::TranslationStore;
use crate::ftl::{build_with, FtlInfo};
use crate::host::PageRequest;
use crate::metrics::Report;
use crate::workload::IoKind;
use crate::Simulation;

/// Power losses at random points during each workload (one more follows at the end).
const POWER_LOSSES: u64 = 3;

type Requests = Vec<PageRequest>;

pub struct Workload {
    pub name: &'static str,
    device: fn(&FtlInfo) -> Result<Config, SimError>,
    requests: fn(u32, &mut Xoshiro256PlusPlus) -> Requests,
}

/// 2 dies x 2 planes x 16 blocks x 16 pages of 512 bytes: 1024 pages, 768 logical.
fn standard(ftl: &FtlInfo) -> Result<Config, SimError> {
    test_device_for(ftl, 2, 2, 16, 16, &[])
}

/// Per-plane allocation, cost-benefit GC, parallel timing, contiguous block layout, 4 spare
/// blocks more than the FTL needs.
fn parallel(ftl: &FtlInfo) -> Result<Config, SimError> {
    let extra = [
        "device.allocation_unit=\"plane\"",
        "gc.policy=\"cost-benefit\"",
        "device.timing.model=\"parallel\"",
        "device.geometry.block_layout=\"contiguous\"",
    ];
    least_spare_device_for(ftl, 2, 2, 16, 16, 4, &extra.map(String::from))
}

/// `parallel`'s device under P/E suspension (paper 001 chapter 3): reads suspend programs (IPC,
/// half of the cancelled pulses found complete) and erases, writes suspend erases.
fn suspending(ftl: &FtlInfo) -> Result<Config, SimError> {
    let extra = [
        "device.allocation_unit=\"plane\"",
        "device.timing.model=\"parallel\"",
        "device.timing.scheduler=\"rps\"",
        "device.timing.phases.ispp_iterations=10",
        "device.timing.phases.program_pulse_us=100.0",
        "device.timing.phases.verify_us=30.0",
        "device.timing.phases.erase_verify_us=30.0",
        "device.timing.phases.voltage_reset_us=4.0",
        "device.timing.phases.buffer_load_us=3.0",
        "device.timing.suspension.erase=true",
        "device.timing.suspension.program=\"ipc\"",
        "device.timing.suspension.p_ach=0.5",
        "device.timing.suspension.write_suspends_erase=true",
    ];
    least_spare_device_for(ftl, 2, 2, 16, 16, 4, &extra.map(String::from))
}

/// `parallel`'s device with DiffECC (paper 001 chapter 2): every host write in N = 4 (the
/// workload keeps the device busy, so controlled switching would find no idle time), GC
/// relocations keep the mode of the page they move, reads decode their page's segments.
fn diffecc(ftl: &FtlInfo) -> Result<Config, SimError> {
    let extra = [
        "device.allocation_unit=\"plane\"",
        "device.timing.model=\"parallel\"",
        "device.timing.scheduler=\"rps\"",
        "device.latency.program_us=500.0",
        "device.timing.diffecc.policy=\"fixed\"",
        "device.timing.diffecc.segments=4",
        "device.timing.diffecc.preserve_mode=true",
    ];
    least_spare_device_for(ftl, 2, 2, 16, 16, 4, &extra.map(String::from))
}

/// The standard device, its power losses striking inside requests (between the flash operations
/// of a request, interrupting a program if one is under way).
fn cut_inside(ftl: &FtlInfo) -> Result<Config, SimError> {
    test_device_for(ftl, 2, 2, 16, 16, &["check.power_loss_inside=true".into()])
}

fn filled(ftl: &FtlInfo) -> Result<Config, SimError> {
    test_device_for(ftl, 2, 2, 16, 16, &["precondition.mode=\"fill\"".into()])
}

/// Filled, then aged by random overwrites (GC runs while preconditioning and while caches are
/// written back at its end).
fn aged(ftl: &FtlInfo) -> Result<Config, SimError> {
    test_device_for(ftl, 2, 2, 16, 16, &["precondition.mode=\"age\"".into(), "precondition.age_factor=1.5".into()])
}

/// One plane of 8 blocks x 8 pages with the fewest spare blocks the FTL accepts (3 for a
/// page-mapped FTL, 6 with translation pages): garbage collection on almost every block opened.
fn tiny(ftl: &FtlInfo) -> Result<Config, SimError> {
    least_spare_device_for(ftl, 1, 1, 8, 8, 0, &[])
}

/// One die of 2 planes x 16 blocks x 16 pages with only the spare blocks the FTL demands,
/// filled completely before the workload starts.
fn full(ftl: &FtlInfo) -> Result<Config, SimError> {
    least_spare_device_for(ftl, 1, 2, 16, 16, 0, &["precondition.mode=\"fill\"".into()])
}

/// The standard device (two dies) with only the spare blocks the FTL demands, filled.
fn full_two_dies(ftl: &FtlInfo) -> Result<Config, SimError> {
    least_spare_device_for(ftl, 2, 2, 16, 16, 0, &["precondition.mode=\"fill\"".into()])
}

fn request(i: usize, kind: IoKind, first: u32, pages: u32, logical: u32) -> PageRequest {
    let first = first.min(logical - 1);
    PageRequest {
        arrival: i as u64 * 2_000,
        kind,
        first: Lpn::new(first),
        pages: pages.clamp(1, logical - first),
        span: crate::host::SectorSpan::WHOLE,
    }
}

/// Two sequential passes of 4-page writes, then sequential 8-page reads.
fn sequential(logical: u32, _: &mut Xoshiro256PlusPlus) -> Requests {
    let writes = (0..2).flat_map(|_| (0..logical).step_by(4)).map(|lpn| (IoKind::Write, lpn, 4));
    let reads = (0..logical).step_by(8).map(|lpn| (IoKind::Read, lpn, 8));
    writes.chain(reads).enumerate().map(|(i, (k, f, p))| request(i, k, f, p, logical)).collect()
}

/// Single-page requests over the whole space, half reads.
fn uniform(logical: u32, rng: &mut Xoshiro256PlusPlus) -> Requests {
    (0..4000)
        .map(|i| {
            let kind = if rng.gen_bool(0.5) { IoKind::Write } else { IoKind::Read };
            request(i, kind, rng.gen_range(0..logical), 1, logical)
        })
        .collect()
}

/// 90% of requests on the hottest 10% of the space, 70% writes, 1-2 pages.
fn hot_cold(logical: u32, rng: &mut Xoshiro256PlusPlus) -> Requests {
    let hot = (logical / 10).max(1);
    (0..4000)
        .map(|i| {
            let kind = if rng.gen_bool(0.7) { IoKind::Write } else { IoKind::Read };
            let first = if rng.gen_bool(0.9) { rng.gen_range(0..hot) } else { rng.gen_range(hot..logical) };
            request(i, kind, first, rng.gen_range(1..=2), logical)
        })
        .collect()
}

/// Requests of 1 to 16 pages, 60% reads, a quarter of them continuing the previous request.
fn mixed(logical: u32, rng: &mut Xoshiro256PlusPlus) -> Requests {
    let mut next = 0;
    (0..3000)
        .map(|i| {
            let kind = if rng.gen_bool(0.6) { IoKind::Read } else { IoKind::Write };
            let first = if rng.gen_bool(0.25) { next % logical } else { rng.gen_range(0..logical) };
            let r = request(i, kind, first, rng.gen_range(1..=16), logical);
            next = r.first.get() + r.pages;
            r
        })
        .collect()
}

/// Writes, reads and trims of 1 to 16 pages (20% trims), so trimmed pages are read and rewritten.
fn trims(logical: u32, rng: &mut Xoshiro256PlusPlus) -> Requests {
    (0..4000)
        .map(|i| {
            let kind = match rng.gen_range(0..20) {
                0..=8 => IoKind::Write,
                9..=15 => IoKind::Read,
                _ => IoKind::Trim,
            };
            request(i, kind, rng.gen_range(0..logical), rng.gen_range(1..=16), logical)
        })
        .collect()
}

/// Mostly single-page overwrites: on the tiny and the full device, GC runs all the time.
fn overwrites(logical: u32, rng: &mut Xoshiro256PlusPlus) -> Requests {
    (0..2500)
        .map(|i| {
            let kind = if rng.gen_bool(0.75) { IoKind::Write } else { IoKind::Read };
            request(i, kind, rng.gen_range(0..logical), 1, logical)
        })
        .collect()
}

/// The workload matrix.
pub const WORKLOADS: &[Workload] = &[
    Workload { name: "sequential", device: standard, requests: sequential },
    Workload { name: "uniform_random", device: standard, requests: uniform },
    Workload { name: "aged_uniform_random", device: aged, requests: uniform },
    Workload { name: "hot_cold", device: filled, requests: hot_cold },
    Workload { name: "mixed_read_write", device: standard, requests: mixed },
    Workload { name: "mixed_parallel_cost_benefit", device: parallel, requests: mixed },
    Workload { name: "mixed_parallel_suspension", device: suspending, requests: mixed },
    Workload { name: "mixed_parallel_diffecc", device: diffecc, requests: mixed },
    Workload { name: "trims", device: standard, requests: trims },
    Workload { name: "power_cuts_inside_requests", device: cut_inside, requests: mixed },
    Workload { name: "tiny_device_constant_gc", device: tiny, requests: overwrites },
    Workload { name: "full_device", device: full, requests: overwrites },
    Workload { name: "full_device_two_dies", device: full_two_dies, requests: overwrites },
];

/// A seed that depends only on the trial's name, so every run of a trial is the same.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// Reads every LPN back through the FTL's read path (the oracle checks each page).
fn read_back(sim: &mut Simulation, logical: u32) -> Result<(), SimError> {
    for first in (0..logical).step_by(8) {
        sim.serve(PageRequest {
            arrival: 0,
            kind: IoKind::Read,
            first: Lpn::new(first),
            pages: 8.min(logical - first),
            span: crate::host::SectorSpan::WHOLE,
        })?;
    }
    Ok(())
}

/// Runs one workload of the matrix on `info`'s scheme; returns the run's report, or what went
/// wrong.
pub fn run_workload(info: &FtlInfo, w: &Workload) -> Result<Report, String> {
    run_variant(info, &Variant::DEFAULT, w)
}

/// A scheme's parameter setting run through the whole matrix like a scheme of its own (a
/// variant that is a different mapping structure, such as DFTL caching whole translation pages).
pub struct Variant {
    /// Names the trials and the golden files: `<ftl>-<label>`.
    pub label: &'static str,
    /// TOML assignments under `[ftl.<name>]`, over the registry's `test_overrides`.
    pub params: &'static str,
    /// Settings outside the scheme's table (a GC validity mode).
    pub config: fn(&mut Config),
}

impl Variant {
    pub const DEFAULT: Variant = Variant { label: "", params: "", config: |_| {} };

    /// The trial name of `ftl` under this variant.
    pub fn name(&self, ftl: &str) -> String {
        if self.label.is_empty() {
            ftl.to_string()
        } else {
            format!("{ftl}-{}", self.label)
        }
    }

    fn apply(&self, ftl: &str, config: &mut Config) -> Result<(), String> {
        let params: toml::Table = self.params.parse().map_err(|e| format!("variant {}: {e}", self.label))?;
        let table = config.ftl.entry(ftl).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(table) = table else { return Err(format!("ftl.{ftl} is not a table")) };
        table.extend(params);
        (self.config)(config);
        config.validate().map_err(|e| format!("variant {}: {e}", self.label))
    }
}

/// [`run_workload`] with `variant`'s parameters.
pub fn run_variant(info: &FtlInfo, variant: &Variant, w: &Workload) -> Result<Report, String> {
    let ftl = info.name;
    let unsupported = !info.recovers;
    let hint = |e: SimError| match e {
        SimError::RecoveryUnsupported { .. } => {
            format!("{e}; if that is intended, set `recovers: false` in its registry entry")
        }
        e => e.to_string(),
    };
    let mut config = (w.device)(info).map_err(|e| format!("test device: {e}"))?;
    variant.apply(ftl, &mut config)?;
    let logical = config.device.logical_pages();
    let trial_seed = seed(&format!("{}::{}", variant.name(ftl), w.name));
    let requests = (w.requests)(logical, &mut Xoshiro256PlusPlus::seed_from_u64(trial_seed));
    let mut sim = Simulation::with_ftl(&config, build_with(info, &config).map_err(hint)?).map_err(hint)?;
    if !unsupported {
        let plan = PowerLossPlan::Random { count: POWER_LOSSES, span: Some(requests.len() as u64) };
        sim.set_power_loss_points(plan.points(trial_seed, None).map_err(hint)?);
    }
    sim.precondition().map_err(|e| format!("preconditioning: {e}"))?;
    for (i, &r) in requests.iter().enumerate() {
        sim.serve(r)
            .map_err(|e| format!("request {i} ({:?} of {} pages at LPN {}): {}", r.kind, r.pages, r.first, hint(e)))?;
    }
    read_back(&mut sim, logical).map_err(|e| format!("read-back after the workload: {e}"))?;
    sim.check_invariants().map_err(hint)?;
    if unsupported {
        return match sim.power_loss() {
            Err(SimError::RecoveryUnsupported { .. }) => {
                Ok(sim.result(w.name, serde_json::Value::Null, 0.0).map_err(hint)?.report)
            }
            other => Err(format!("declares `recovers: false`, but power_loss returned {other:?}")),
        };
    }
    sim.power_loss().map_err(|e| format!("power loss at the end: {}", hint(e)))?;
    read_back(&mut sim, logical).map_err(|e| format!("read-back after the last recovery: {e}"))?;
    let report = sim.result(w.name, serde_json::Value::Null, 0.0).map_err(hint)?.report;
    if report.gc_victims == 0 {
        return Err("every workload is meant to make GC run (where FTLs break), but no block was reclaimed".into());
    }
    // (A map of one translation page fits any cache that holds a whole page.)
    if info.keeps_translation_pages() && TranslationStore::pages_needed(&config) > 1 && report.cache.miss_writeback == 0
    {
        return Err(
            "no miss wrote a dirty entry back: its `test_overrides` must make the mapping cache smaller than the map"
                .into(),
        );
    }
    let recovery = &report.recovery;
    if recovery.events != POWER_LOSSES + 1 || recovery.pages_read == 0 || !recovery.rp.is_some_and(|rp| rp > 0.0) {
        return Err(format!("recovery report {recovery:?}: expected {} events that read pages", POWER_LOSSES + 1));
    }
    Ok(report)
}

/// SRAM and parameters: the reported SRAM is non-empty and follows from the configuration alone;
/// the parameters serialise; an unknown `[ftl.<name>]` field is rejected naming it.
pub fn run_static(info: &FtlInfo) -> Result<(), String> {
    let ftl = info.name;
    let config = standard(info).map_err(|e| e.to_string())?;
    let a = build_with(info, &config).map_err(|e| e.to_string())?;
    let sram = a.sram();
    if sram.is_empty() || sram.iter().any(|s| s.structure.is_empty()) || sram.iter().map(|s| s.bytes).sum::<u64>() == 0
    {
        return Err(format!("SRAM breakdown must name its structures and be non-zero: {sram:?}"));
    }
    if a.name() != ftl {
        return Err(format!("registered as {ftl} but names itself {}", a.name()));
    }
    if !a.params().is_object() {
        return Err(format!("params() must be a JSON object, found {}", a.params()));
    }
    let bogus =
        test_device_for(info, 2, 2, 16, 16, &[format!("ftl.{ftl}.no_such_parameter=1")]).map_err(|e| e.to_string())?;
    match build_with(info, &bogus) {
        Err(SimError::Config { field, .. }) if field.contains(&format!("ftl.{ftl}")) => Ok(()),
        Err(e) => Err(format!("an unknown ftl.{ftl} parameter gave an error not naming the table: {e}")),
        Ok(_) => Err(format!("an unknown ftl.{ftl} parameter was accepted")),
    }
}
