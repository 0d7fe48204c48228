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

use crate::output::table;

/// One measured scenario.
struct Scenario {
    name: &'static str,
    ftl: &'static str,
    preset: &'static str,
    /// Configuration overrides (e.g. aging to steady state before measuring).
    sets: &'static [&'static str],
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

const AGED: &[&str] = &["precondition.mode=\"age\"", "precondition.age_factor=1.0"];
/// `gc.validity = "ilog"` with Table 8.1's 80 lines for 3DFTL.
const ILOG: &[&str] = &["gc.validity=\"ilog\"", "ftl.3dftl.lines=80"];
/// `ssd16` aged, without its write buffer and background GC: the flash back end alone.
const AGED_RPS: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
];
const AGED_FIFO: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
    "device.timing.scheduler=\"fifo\"",
];
const EMPTY: &[&str] = &["precondition.mode=\"none\""];
/// Paper 001 chapter 3's MLC device aged like `AGED_RPS`, with P/E suspension by IPC and erase
/// suspension on; the stream mixes reads in so that reads suspend programs and erases.
const AGED_PES_IPC: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
    "device.timing.suspension.program=\"ipc\"",
    "device.timing.suspension.erase=true",
];
const AGED_RPS_CH3: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
];
/// `AGED_RPS` with paper 001 chapter 2's timing (500 us programs, 100 MB/s bus), DiffECC off.
const AGED_RPS_CH2: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
    "device.latency.program_us=500.0",
    "device.latency.bus_ns_per_byte=10.0",
];
/// `AGED_RPS_CH2` with DiffECC's controlled switching (Table 2.3's modes, per chip).
const AGED_DIFFECC: &[&str] = &[
    "precondition.mode=\"age\"",
    "precondition.age_factor=1.0",
    "buffer.size_mb=0",
    "gc.background_free_blocks=0",
    "gc.free_blocks_low=286",
    "device.latency.program_us=500.0",
    "device.latency.bus_ns_per_byte=10.0",
    "device.timing.diffecc.policy=\"controlled\"",
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
    Scenario { name: "random 4K writes", ftl: "pftl", preset: "mlc8g", sets: &[], stream: random_writes },
    Scenario { name: "sequential reads", ftl: "pftl", preset: "mlc8g", sets: &[], stream: sequential_reads },
    // Aged to steady state first: with 30% over-provisioning a mere fill leaves GC idle for
    // millions of writes, and the rate would measure a device that never collects.
    Scenario {
        name: "random 4K writes (aged, RPS)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED_RPS,
        stream: random_writes,
    },
    Scenario {
        name: "random 4K writes (aged, FIFO)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED_FIFO,
        stream: random_writes,
    },
    Scenario {
        name: "random 4K writes (aged, buffer, background GC)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED,
        stream: random_writes,
    },
    Scenario { name: "sequential reads", ftl: "pftl", preset: "ssd16", sets: &[], stream: sequential_reads },
    // Paper 001 chapter 4 (issue 20): delta encoding on, against the baseline on the same stream.
    Scenario {
        name: "hot-set 4K writes (aged, buffer, background GC)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED,
        stream: hot_set_writes,
    },
    Scenario {
        name: "hot-set 4K writes (aged, buffer, background GC)",
        ftl: "delta",
        preset: "ssd16",
        sets: AGED,
        stream: hot_set_writes,
    },
    // Paper 001 chapter 3 (issue 12): the same stream without and with P/E suspension.
    Scenario {
        name: "random 4K 30% reads (aged, RPS)",
        ftl: "pftl",
        preset: "ssd16-ch3-mlc",
        sets: AGED_RPS_CH3,
        stream: random_mixed,
    },
    Scenario {
        name: "random 4K 30% reads (aged, PES_IPC)",
        ftl: "pftl",
        preset: "ssd16-ch3-mlc",
        sets: AGED_PES_IPC,
        stream: random_mixed,
    },
    // Paper 001 chapter 2 (issue 19): the same stream without and with DiffECC.
    Scenario {
        name: "random 4K 30% reads (aged, RPS, ch2 timing)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED_RPS_CH2,
        stream: random_mixed,
    },
    Scenario {
        name: "random 4K 30% reads (aged, DiffECC, ch2 timing)",
        ftl: "pftl",
        preset: "ssd16",
        sets: AGED_DIFFECC,
        stream: random_mixed,
    },
    Scenario { name: "oltp-mix 50% reads", ftl: "optimal", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "dftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "cdftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "sftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "tpftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "scftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads", ftl: "3dftl", preset: "mlc8g", sets: &[], stream: mixed_half_reads },
    // Paper 000 chapter 8: GC validation through the invalidation log (Table 8.1's 3DFTL+ILog).
    Scenario { name: "oltp-mix 50% reads (ILog)", ftl: "3dftl", preset: "mlc8g", sets: ILOG, stream: mixed_half_reads },
    Scenario { name: "oltp-mix 50% reads (ILog)", ftl: "dftl", preset: "mlc8g", sets: ILOG, stream: mixed_half_reads },
    // Paper 003's device (32 GB of data, log blocks 9% of all blocks): random writes make every
    // reclaimed log block full-merge dozens of data blocks.
    // End to end on a gzip-compressed MSR trace (issue 14's scenario: ssd16, nothing written first).
    Scenario { name: "gzip MSR trace", ftl: "pftl", preset: "ssd16", sets: EMPTY, stream: gzip_msr_trace },
    Scenario { name: "gzip MSR trace", ftl: "dftl", preset: "ssd16", sets: EMPTY, stream: gzip_msr_trace },
    Scenario { name: "random 4K writes", ftl: "fast", preset: "fastsc", sets: &[], stream: random_writes },
    Scenario { name: "random 4K writes", ftl: "fast-sc", preset: "fastsc", sets: &[], stream: random_writes },
    Scenario { name: "random 4K writes", ftl: "bast", preset: "fastsc", sets: &[], stream: random_writes },
    Scenario { name: "random 4K writes", ftl: "bftl", preset: "fastsc", sets: &[], stream: random_writes },
    Scenario { name: "sequential reads", ftl: "fast", preset: "fastsc-80g", sets: &[], stream: sequential_reads },
    // Paper 004's device (32 GB, aged as the preset does): every write finds its cluster's block,
    // GC picks a victim cluster from the CIC tree and a block from the cluster's row.
    Scenario { name: "random 4K writes", ftl: "cpm", preset: "cpm", sets: &[], stream: random_writes },
    Scenario { name: "random 4K writes", ftl: "kcpm", preset: "cpm", sets: &[], stream: random_writes },
];

/// CPU time of this thread, from the kernel's scheduler statistics (other processes may share
/// the cores, so wall time alone can mislead); 0 where unavailable.
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
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

/// Whether every word of `filter` is a whole word of `scenario` (its FTL, preset and name):
/// `pftl` selects PFTL's scenarios, not TPFTL's.
fn selects(filter: &str, scenario: &str) -> bool {
    let words = |s: &str| {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect::<Vec<_>>()
    };
    let scenario = words(scenario);
    words(filter).iter().all(|w| scenario.contains(w))
}

pub fn bench(requests: u64, only: Option<&str>, json: bool) -> Result<()> {
    if let Some(o) =
        only.filter(|o| !SCENARIOS.iter().any(|s| selects(o, &format!("{} {} {}", s.ftl, s.preset, s.name))))
    {
        let names: Vec<String> = SCENARIOS.iter().map(|s| format!("{} {} {}", s.ftl, s.preset, s.name)).collect();
        bail!("--only \"{o}\": no scenario has all these words; scenarios: {}", names.join("; "));
    }
    let mut rows = Vec::new();
    let mut records = Vec::new();
    for s in SCENARIOS.iter().filter(|s| only.is_none_or(|o| selects(o, &format!("{} {} {}", s.ftl, s.preset, s.name))))
    {
        let config = s.sets.iter().try_fold(ConfigBuilder::new().preset(s.preset)?, |b, set| b.set(set))?.build()?;
        let mut sim = Simulation::new(&config, s.ftl)?;
        sim.precondition()?;
        let stream = (s.stream)(requests, config.device.logical_pages(), config.device.geometry.page_size);
        let cpu = thread_cpu_seconds();
        let result = sim.run(stream, &mut |_| {})?;
        let cpu = thread_cpu_seconds() - cpu;
        let sim_report = &result.report.simulation;
        rows.push(vec![
            s.ftl.to_string(),
            s.name.to_string(),
            s.preset.to_string(),
            requests.to_string(),
            format!("{:.3}", sim_report.wall_seconds),
            format!("{cpu:.3}"),
            format!("{:.2}", sim_report.flash_page_ops_per_second / 1e6),
            format!("{:.2}", sim_report.host_pages_per_second / 1e6),
            format!("{:.2}", result.report.write_amplification.unwrap_or(0.0)),
            format!("{:.2}", sim_report.state_bytes_per_physical_page),
        ]);
        records.push(serde_json::json!({
            "scenario": s.name, "ftl": s.ftl, "preset": s.preset, "requests": requests,
            "wall_seconds": sim_report.wall_seconds,
            "cpu_seconds": cpu,
            "flash_page_ops_per_second": sim_report.flash_page_ops_per_second,
            "host_pages_per_second": sim_report.host_pages_per_second,
            "write_amplification": result.report.write_amplification,
            "state_bytes_per_physical_page": sim_report.state_bytes_per_physical_page,
        }));
    }
    let (per_page_1tb, capacity) = state_per_page_1tb()?;
    if json {
        let out = serde_json::json!({
            "scenarios": records,
            "state_bytes_per_physical_page_1tb": per_page_1tb,
            "capacity_bytes_1tb": capacity,
            "peak_rss_bytes": peak_rss_bytes(),
        });
        println!("{out}");
    } else {
        print!(
            "{}",
            table(
                &[
                    "ftl",
                    "scenario",
                    "preset",
                    "requests",
                    "wall_s",
                    "cpu_s",
                    "Mflash_ops/s",
                    "Mhost_pages/s",
                    "WA",
                    "state_B/page"
                ],
                &rows
            )
        );
        println!(
            "PFTL state on a {:.2} TB device (4 KB pages): {:.2} bytes per physical page",
            capacity as f64 / 1e12,
            per_page_1tb
        );
        println!("peak resident memory: {:.1} MiB", peak_rss_bytes() as f64 / (1 << 20) as f64);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::selects;

    #[test]
    fn only_matches_whole_words() {
        assert!(selects("pftl", "pftl mlc8g random 4K writes"));
        assert!(!selects("pftl", "tpftl mlc8g oltp-mix 50% reads"));
        assert!(selects("oltp", "tpftl mlc8g oltp-mix 50% reads"));
        assert!(selects("pftl ssd16 aged", "pftl ssd16 random 4K writes (aged)"));
        assert!(!selects("pftl ssd16 aged", "pftl mlc8g random 4K writes"));
    }
}
