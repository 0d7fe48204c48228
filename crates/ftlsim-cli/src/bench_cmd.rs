//! `ftlsim bench`: the simulator's own speed and memory, on fixed scenarios.
//!
//! Each scenario preconditions a device (untimed), then times only the measured stream. Figures
//! are simulated flash page operations per second (host programs and reads plus GC reads,
//! programs and erases, an erase counted once) and host pages per second.

use anyhow::{bail, Result};
use ftlsim::workload::synthetic::MixedSpec;
use ftlsim::workload::write::TraceWriter;
use ftlsim::workload::{Format, IoKind, Request, TraceOptions, Workload};
use ftlsim::{ConfigBuilder, Simulation};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::bench_record;
use crate::output::table;

/// One measured stream, run once per FTL.
struct Scenario {
    name: &'static str,
    ftls: &'static [&'static str],
    preset: &'static str,
    /// Groups of configuration overrides (e.g. aging to steady state before measuring).
    sets: &'static [&'static [&'static str]],
    /// Builds the measured stream over `logical_pages` pages of `page_size` bytes.
    stream: fn(u64, u32, u32) -> Workload,
}

fn workload(name: &str, requests: impl Iterator<Item = Request> + Send + 'static) -> Workload {
    Workload::new(name, serde_json::json!({ "bench": name }), requests.map(Ok))
}

/// Uniform random 4 KB writes at 4 KB-aligned offsets.
fn random_writes(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let slots = logical_pages as u64 * page_size as u64 / 4096;
    workload(
        "uniform random 4 KB writes",
        (0..requests).map(move |i| Request::new(0, IoKind::Write, rng.gen_range(0..slots) * 4096, 4096, i + 1)),
    )
}

/// Random 4 KB writes, 90% of them to a hot set of 32,768 slots (twice the pages of ssd16's
/// 64 MB buffer, half of Delta-FTL's default mapping cache): evicted pages come back while their
/// counts live, so Delta-FTL writes deltas.
fn hot_set_writes(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let slots = logical_pages as u64 * page_size as u64 / 4096;
    let hot = slots.min(32_768);
    workload(
        "hot-set random 4 KB writes",
        (0..requests).map(move |i| {
            let slot = if rng.gen_bool(0.9) { rng.gen_range(0..hot) } else { rng.gen_range(0..slots) };
            Request::new(0, IoKind::Write, slot * 4096, 4096, i + 1)
        }),
    )
}

/// Sequential one-page reads, wrapping around the exported space.
fn sequential_reads(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    workload(
        "sequential page reads",
        (0..requests).map(move |i| {
            Request::new(0, IoKind::Read, (i % logical_pages as u64) * page_size as u64, page_size as u64, i + 1)
        }),
    )
}

/// Uniform random 4 KB requests, 30% reads, one every microsecond, written as a gzip-compressed
/// MSR trace and read back: the end-to-end cost of a real trace run (decompression and parsing
/// run on their own thread beside the simulation). The file is removed once open.
fn gzip_msr_trace(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let slots = logical_pages as u64 * page_size as u64 / 4096;
    let path = std::env::temp_dir().join(format!("ftlsim-bench-{}.csv.gz", std::process::id()));
    let mut out = TraceWriter::create(&path, Format::Msr).expect("a temporary trace can be written");
    for i in 0..requests {
        let kind = if rng.gen_bool(0.3) { IoKind::Read } else { IoKind::Write };
        let request = Request::new(i * 1000, kind, rng.gen_range(0..slots) * 4096, 4096, i + 1);
        out.write(&request).expect("a temporary trace can be written");
    }
    out.finish().expect("a temporary trace can be written");
    let workload = ftlsim::workload::open(&path, &TraceOptions::default()).expect("the trace reads back");
    let _ = std::fs::remove_file(&path);
    workload
}

/// Aged to steady state first: with 30% over-provisioning a mere fill leaves GC idle for
/// millions of writes, and the rate would measure a device that never collects.
const AGED: &[&str] = &["precondition.mode=\"age\"", "precondition.age_factor=1.0"];
/// Without `ssd16`'s write buffer, background GC and host link: the flash back end alone.
const BACK_END: &[&str] =
    &["buffer.size_mb=0", "gc.background_free_blocks=0", "gc.free_blocks_low=286", "device.timing.host_link_mb_s=0"];
const FIFO: &[&str] = &["device.timing.scheduler=\"fifo\""];
/// P/E suspension by IPC, and erase suspension.
const PES_IPC: &[&str] = &["device.timing.suspension.program=\"ipc\"", "device.timing.suspension.erase=true"];
/// Paper 001 chapter 2's timing (500 us programs, 100 MB/s bus).
const CH2_TIMING: &[&str] = &["device.latency.program_us=500.0", "device.latency.bus_ns_per_byte=10.0"];
/// DiffECC's controlled switching (Table 2.3's modes, per chip).
const DIFFECC: &[&str] = &["device.timing.diffecc.policy=\"controlled\""];
/// `gc.validity = "ilog"` with Table 8.1's 80 lines for 3DFTL.
const ILOG: &[&str] = &["gc.validity=\"ilog\"", "ftl.3dftl.lines=80"];
const EMPTY: &[&str] = &["precondition.mode=\"none\""];
/// MQSim's default SSD (its `ssdconfig.xml`): 8 channels x 4 chips x 2 dies x 2 planes, 2048
/// blocks of 256 pages of 8 KB per plane (512 GiB), 7% over-provisioning; nothing written first.
/// For the state a demand FTL holds against PFTL's on a device of that size.
const MQSIM_DEFAULT: &[&str] = &[
    "device.geometry.dies_per_chip=2",
    "device.geometry.planes_per_die=2",
    "device.geometry.blocks_per_plane=2048",
    "device.geometry.pages_per_block=256",
    "device.geometry.page_size=8192",
    "device.geometry.spare_size=448",
    "device.overprovisioning=0.07",
    "precondition.mode=\"none\"",
];

/// Uniform random 4 KB requests, 30% reads, arriving every 20 us (an open loop that keeps every
/// die busy, so reads find programs and erases under way).
fn random_mixed(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let slots = logical_pages as u64 * page_size as u64 / 4096;
    workload(
        "uniform random 4 KB, 30% reads",
        (0..requests).map(move |i| {
            let kind = if rng.gen_bool(0.3) { IoKind::Read } else { IoKind::Write };
            Request::new(i * 20_000, kind, rng.gen_range(0..slots) * 4096, 4096, i + 1)
        }),
    )
}

/// The default mixed stream with half reads and 10% sequential requests: random-heavy, for the
/// mapping caches (each at its paper's default size, e.g. 20 KB on `mlc8g`).
fn mixed_half_reads(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let spec = MixedSpec { requests, read_fraction: 0.5, sequential_fraction: 0.1, ..MixedSpec::default() };
    spec.workload(logical_pages, page_size).expect("valid spec")
}

const SCENARIOS: &[Scenario] = &[
    Scenario { name: "random 4K writes", ftls: &["pftl"], preset: "mlc8g", sets: &[], stream: random_writes },
    Scenario { name: "sequential reads", ftls: &["pftl"], preset: "mlc8g", sets: &[], stream: sequential_reads },
    Scenario {
        name: "random 4K writes (aged, RPS)",
        ftls: &["pftl"],
        preset: "ssd16",
        sets: &[AGED, BACK_END],
        stream: random_writes,
    },
    Scenario {
        name: "random 4K writes (aged, FIFO)",
        ftls: &["pftl"],
        preset: "ssd16",
        sets: &[AGED, BACK_END, FIFO],
        stream: random_writes,
    },
    Scenario {
        name: "random 4K writes (aged, buffer, background GC)",
        ftls: &["pftl"],
        preset: "ssd16",
        sets: &[AGED],
        stream: random_writes,
    },
    Scenario { name: "sequential reads", ftls: &["pftl"], preset: "ssd16", sets: &[], stream: sequential_reads },
    // Paper 001 chapter 4 (issue 20): delta encoding on, against the baseline on the same stream.
    Scenario {
        name: "hot-set 4K writes (aged, buffer, background GC)",
        ftls: &["pftl", "delta"],
        preset: "ssd16",
        sets: &[AGED],
        stream: hot_set_writes,
    },
    // Paper 001 chapter 3 (issue 12): the same stream without and with P/E suspension.
    Scenario {
        name: "random 4K 30% reads (aged, RPS)",
        ftls: &["pftl"],
        preset: "ssd16-ch3-mlc",
        sets: &[AGED, BACK_END],
        stream: random_mixed,
    },
    Scenario {
        name: "random 4K 30% reads (aged, PES_IPC)",
        ftls: &["pftl"],
        preset: "ssd16-ch3-mlc",
        sets: &[AGED, BACK_END, PES_IPC],
        stream: random_mixed,
    },
    // Paper 001 chapter 2 (issue 19): the same stream without and with DiffECC.
    Scenario {
        name: "random 4K 30% reads (aged, RPS, ch2 timing)",
        ftls: &["pftl"],
        preset: "ssd16",
        sets: &[AGED, BACK_END, CH2_TIMING],
        stream: random_mixed,
    },
    Scenario {
        name: "random 4K 30% reads (aged, DiffECC, ch2 timing)",
        ftls: &["pftl"],
        preset: "ssd16",
        sets: &[AGED, BACK_END, CH2_TIMING, DIFFECC],
        stream: random_mixed,
    },
    Scenario {
        name: "oltp-mix 50% reads",
        ftls: &["optimal", "dftl", "cdftl", "sftl", "tpftl", "scftl", "3dftl"],
        preset: "mlc8g",
        sets: &[],
        stream: mixed_half_reads,
    },
    // Paper 000 chapter 8: GC validation through the invalidation log (Table 8.1's 3DFTL+ILog).
    Scenario {
        name: "oltp-mix 50% reads (ILog)",
        ftls: &["3dftl", "dftl"],
        preset: "mlc8g",
        sets: &[ILOG],
        stream: mixed_half_reads,
    },
    // End to end on a gzip-compressed MSR trace (issue 14's scenario: ssd16, nothing written first).
    Scenario {
        name: "gzip MSR trace",
        ftls: &["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl"],
        preset: "ssd16",
        sets: &[EMPTY],
        stream: gzip_msr_trace,
    },
    // The same on the flash back end alone (`ssd16` as it was when issue 14 set its target:
    // no write buffer, no host link), so the parsing pipeline and the FTLs are measured without
    // paper 001's controller.
    Scenario {
        name: "gzip MSR trace (back end)",
        ftls: &["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl"],
        preset: "ssd16",
        sets: &[EMPTY, BACK_END],
        stream: gzip_msr_trace,
    },
    // MQSim's default 512 GB SSD (on `tlc-nvme`'s timing): the state of each demand FTL beside PFTL's.
    Scenario {
        name: "random 4K writes (MQSim SSD)",
        ftls: &["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl"],
        preset: "tlc-nvme",
        sets: &[MQSIM_DEFAULT],
        stream: random_writes,
    },
    // Paper 003's device (32 GB of data, log blocks 9% of all blocks): random writes make every
    // reclaimed log block full-merge dozens of data blocks.
    Scenario {
        name: "random 4K writes",
        ftls: &["fast", "fast-sc", "bast", "bftl"],
        preset: "fastsc",
        sets: &[],
        stream: random_writes,
    },
    Scenario { name: "sequential reads", ftls: &["fast"], preset: "fastsc-80g", sets: &[], stream: sequential_reads },
    // Paper 004's device (32 GB, aged as the preset does): every write finds its cluster's block,
    // GC picks a victim cluster from the CIC tree and a block from the cluster's row.
    Scenario { name: "random 4K writes", ftls: &["cpm", "kcpm"], preset: "cpm", sets: &[], stream: random_writes },
];

/// An MSR-like mix (30% reads, 20% of requests in sequential runs, skewed random requests of
/// 1-2 pages, one every 100 us): the synthetic stand-in of a whole trace collection.
fn collection_mix(requests: u64, logical_pages: u32, page_size: u32) -> Workload {
    let spec = MixedSpec { requests, read_fraction: 0.3, mean_interarrival_us: 100.0, ..MixedSpec::default() };
    spec.workload(logical_pages, page_size).expect("valid spec")
}

/// Requests of a `--long` scenario unless `--requests` says otherwise: about the size of the
/// whole MSR Cambridge collection.
const LONG_REQUESTS: u64 = 100_000_000;
const DEFAULT_REQUESTS: u64 = 4_000_000;

/// Opt-in (`--long`): PFTL and every demand-based FTL over a collection-sized stream on paper
/// 002's 16 GB MSR device, one core.
const LONG_SCENARIOS: &[Scenario] = &[Scenario {
    name: "collection-sized mix",
    ftls: &["pftl", "dftl", "cdftl", "sftl", "tpftl", "scftl", "3dftl"],
    preset: "tpftl-msr",
    sets: &[EMPTY],
    stream: collection_mix,
}];

/// CPU time of this thread (other processes may share the cores, so wall time alone can
/// mislead); 0 where unavailable.
fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write into.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// Peak resident memory of this process, from /proc (Linux); 0 elsewhere.
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse::<u64>().unwrap_or(0) * 1024)
        })
        .unwrap_or(0)
}

/// Simulator state per physical page of a 1 TB (2^28 pages of 4 KB) PFTL device, without running it.
fn state_per_page_1tb() -> Result<(f64, u64)> {
    let config = ConfigBuilder::new()
        .preset("ssd16")?
        .set("device.geometry.blocks_per_plane=65536")?
        .set("device.geometry.pages_per_block=64")?
        .build()?;
    let mut sim = Simulation::new(&config, "pftl")?;
    let result = sim.result("none", serde_json::Value::Null, 0.0)?;
    let bytes = result.report.simulation.state_bytes;
    Ok((bytes as f64 / config.device.geometry.total_pages() as f64, config.device.geometry.capacity_bytes()))
}

/// Whether every word of `filter` is a whole word of the scenario (its FTL, preset and name):
/// `pftl` selects PFTL's scenarios, not TPFTL's. A word that names a registered FTL selects that
/// FTL only, so `tpftl` does not select the other FTLs on the `tpftl-msr` preset; a whole preset
/// name (`tpftl-msr`) selects every FTL on it.
fn selects(filter: &str, ftl: &str, preset: &str, name: &str) -> bool {
    let words = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect::<Vec<_>>()
    };
    let scenario = words(&format!("{ftl} {preset} {name}"));
    let ftl_words = words(ftl);
    let names_an_ftl = |w: &str| ftlsim::ftl::ftl_names().any(|n| n == w);
    filter.split_whitespace().all(|token| {
        token.eq_ignore_ascii_case(preset)
            || words(token).iter().all(|w| if names_an_ftl(w) { ftl_words.contains(w) } else { scenario.contains(w) })
    })
}

/// What `ftlsim bench` was asked.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Measured requests per scenario [default: 4,000,000; 100,000,000 with --long].
    #[arg(long)]
    requests: Option<u64>,
    /// Run only the scenarios with each of these words among their FTL, preset and name words
    /// ("pftl", "oltp", "pftl ssd16 aged"); an FTL's name selects that FTL only ("tpftl" is not
    /// every FTL on the `tpftl-msr` preset, which "tpftl-msr" selects).
    #[arg(long)]
    only: Option<String>,
    /// Run the opt-in collection-sized scenarios (PFTL and every demand-based FTL over 100 M
    /// requests) instead of the regular ones.
    #[arg(long)]
    long: bool,
    /// Compare each figure with the one recorded in this Markdown file's "Recorded figures" table
    /// (docs/performance.md) and print the differences.
    #[arg(long, value_name = "FILE")]
    compare: Option<std::path::PathBuf>,
    #[arg(long)]
    json: bool,
}

/// The figures of one measured scenario.
pub struct Measured {
    pub ftl: &'static str,
    pub scenario: &'static str,
    pub preset: &'static str,
    pub requests: u64,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    pub flash_ops: u64,
    pub host_pages: f64,
    pub write_amplification: Option<f64>,
    pub state_bytes_per_page: f64,
}

impl Measured {
    /// A rate per CPU second of the simulating thread (0 where CPU time is unavailable).
    fn per_cpu_second(&self, count: f64) -> f64 {
        if self.cpu_seconds > 0.0 {
            count / self.cpu_seconds
        } else {
            0.0
        }
    }
    pub fn host_pages_per_cpu_second(&self) -> f64 {
        self.per_cpu_second(self.host_pages)
    }
    pub fn flash_ops_per_cpu_second(&self) -> f64 {
        self.per_cpu_second(self.flash_ops as f64)
    }
}

fn measure(s: &Scenario, ftl: &'static str, requests: u64) -> Result<Measured> {
    let mut sets = s.sets.iter().flat_map(|group| group.iter());
    let config = sets.try_fold(ConfigBuilder::new().preset(s.preset)?, |b, set| b.set(set))?.build()?;
    let mut sim = Simulation::new(&config, ftl)?;
    sim.precondition()?;
    let stream = (s.stream)(requests, config.device.logical_pages(), config.device.geometry.page_size);
    let cpu = thread_cpu_seconds();
    let result = sim.run(stream, &mut |_| {})?;
    let cpu_seconds = thread_cpu_seconds() - cpu;
    let report = &result.report.simulation;
    Ok(Measured {
        ftl,
        scenario: s.name,
        preset: s.preset,
        requests,
        wall_seconds: report.wall_seconds,
        cpu_seconds,
        flash_ops: report.flash_page_ops,
        host_pages: report.host_pages_per_second * report.wall_seconds,
        write_amplification: result.report.write_amplification,
        state_bytes_per_page: report.state_bytes_per_physical_page,
    })
}

pub fn bench(args: &BenchArgs) -> Result<()> {
    let (scenarios, default_requests) =
        if args.long { (LONG_SCENARIOS, LONG_REQUESTS) } else { (SCENARIOS, DEFAULT_REQUESTS) };
    let requests = args.requests.unwrap_or(default_requests);
    let runs: Vec<(&Scenario, &'static str)> =
        scenarios.iter().flat_map(|s| s.ftls.iter().map(move |&ftl| (s, ftl))).collect();
    let words = |&(s, ftl): &(&Scenario, &str)| format!("{ftl} {} {}", s.preset, s.name);
    let chosen: Vec<_> =
        runs.iter().filter(|(s, ftl)| args.only.as_deref().is_none_or(|o| selects(o, ftl, s.preset, s.name))).collect();
    if let Some(o) = args.only.as_deref().filter(|_| chosen.is_empty()) {
        let names: Vec<String> = runs.iter().map(words).collect();
        bail!("--only \"{o}\": no scenario has all these words; scenarios: {}", names.join("; "));
    }
    let recorded = args.compare.as_deref().map(bench_record::Recorded::read).transpose()?;
    let measured = chosen.iter().map(|&&(s, ftl)| measure(s, ftl, requests)).collect::<Result<Vec<_>>>()?;
    let (per_page_1tb, capacity) = state_per_page_1tb()?;
    if args.json {
        let records: Vec<_> = measured
            .iter()
            .map(|m| {
                serde_json::json!({
                    "scenario": m.scenario, "ftl": m.ftl, "preset": m.preset, "requests": m.requests,
                    "wall_seconds": m.wall_seconds,
                    "cpu_seconds": m.cpu_seconds,
                    "flash_page_ops_per_second": m.flash_ops as f64 / m.wall_seconds,
                    "host_pages_per_second": m.host_pages / m.wall_seconds,
                    "flash_page_ops_per_cpu_second": m.flash_ops_per_cpu_second(),
                    "host_pages_per_cpu_second": m.host_pages_per_cpu_second(),
                    "write_amplification": m.write_amplification,
                    "state_bytes_per_physical_page": m.state_bytes_per_page,
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "scenarios": records,
            "state_bytes_per_physical_page_1tb": per_page_1tb,
            "capacity_bytes_1tb": capacity,
            "peak_rss_bytes": peak_rss_bytes(),
        });
        if let Some(recorded) = &recorded {
            out["compared"] = serde_json::to_value(recorded.compare(&measured))?;
        }
        println!("{out}");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = measured
        .iter()
        .map(|m| {
            vec![
                m.ftl.to_string(),
                m.scenario.to_string(),
                m.preset.to_string(),
                m.requests.to_string(),
                format!("{:.3}", m.wall_seconds),
                format!("{:.3}", m.cpu_seconds),
                format!("{:.2}", m.flash_ops as f64 / m.wall_seconds / 1e6),
                format!("{:.2}", m.flash_ops_per_cpu_second() / 1e6),
                format!("{:.2}", m.host_pages_per_cpu_second() / 1e6),
                format!("{:.2}", m.write_amplification.unwrap_or(0.0)),
                format!("{:.2}", m.state_bytes_per_page),
            ]
        })
        .collect();
    let header = [
        "ftl",
        "scenario",
        "preset",
        "requests",
        "wall_s",
        "cpu_s",
        "Mflash_ops/s",
        "Mflash_ops/cpu_s",
        "Mhost_pages/cpu_s",
        "WA",
        "state_B/page",
    ];
    print!("{}", table(&header, &rows));
    println!(
        "PFTL state on a {:.2} TB device (4 KB pages): {:.2} bytes per physical page",
        capacity as f64 / 1e12,
        per_page_1tb
    );
    println!("peak resident memory: {:.1} MiB", peak_rss_bytes() as f64 / (1 << 20) as f64);
    if let Some(recorded) = &recorded {
        println!();
        print!("{}", recorded.compare_table(&measured));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::selects;

    #[test]
    fn only_matches_whole_words() {
        assert!(selects("pftl", "pftl", "mlc8g", "random 4K writes"));
        assert!(!selects("pftl", "tpftl", "mlc8g", "oltp-mix 50% reads"));
        assert!(selects("oltp", "tpftl", "mlc8g", "oltp-mix 50% reads"));
        assert!(selects("pftl ssd16 aged", "pftl", "ssd16", "random 4K writes (aged)"));
        assert!(!selects("pftl ssd16 aged", "pftl", "mlc8g", "random 4K writes"));
    }

    #[test]
    fn an_ftl_name_selects_that_ftl_even_where_a_preset_is_named_after_it() {
        assert!(selects("tpftl", "tpftl", "tpftl-msr", "collection-sized mix"));
        assert!(!selects("tpftl", "dftl", "tpftl-msr", "collection-sized mix"));
        assert!(selects("tpftl-msr", "dftl", "tpftl-msr", "collection-sized mix"));
        assert!(selects("dftl collection", "dftl", "tpftl-msr", "collection-sized mix"));
        assert!(selects("ssd16-ch3-mlc", "pftl", "ssd16-ch3-mlc", "random 4K 30% reads (aged, RPS)"));
        assert!(selects("pftl ch3", "pftl", "ssd16-ch3-mlc", "random 4K 30% reads (aged, RPS)"));
        assert!(selects("fast-sc", "fast-sc", "fastsc", "random 4K writes"));
        assert!(!selects("fast-sc", "fast", "fastsc", "random 4K writes"));
        assert!(selects("fast", "fast-sc", "fastsc", "random 4K writes"), "FAST-SC is a FAST");
    }
}
