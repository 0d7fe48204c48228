//! `ftlsim trace`: statistics of a trace (paper 000 Tables 4.2/4.4 and more), conversion between
//! formats, and a parse-speed benchmark.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use ftlsim::workload::generator::parse_bytes;
use ftlsim::workload::presets::PRESETS;
use ftlsim::workload::stats::{LruModel, StatsBuilder, TraceStats};
use ftlsim::workload::write::TraceWriter;
use ftlsim::workload::Format;

use crate::output::table;
use crate::trace_args::ReadArgs;

#[derive(Subcommand)]
pub enum TraceCommand {
    /// Requests, write %, mean sizes (KB = 1024 B), footprint, sequentiality, locality (LRU
    /// mapping-cache hit ratio, WR_max), working sets and page updates (paper 004 Table II),
    /// inter-arrival times and address range of a trace.
    Stats {
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// Entries of the LRU mapping cache whose hit ratio is reported (default: paper 000's DFTL).
        #[arg(long, value_name = "N", default_value_t = LruModel::PAPER000_DFTL.0)]
        cache_entries: u64,
        /// Logical page size of that cache's entries, e.g. 4KiB (default: 8KiB, paper 000's).
        #[arg(long, value_name = "BYTES", default_value = "8KiB")]
        cache_page: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert a trace to MSR CSV, SPC or MQSim ASCII (compressed when OUT ends in .gz, .bz2,
    /// .xz or .zst).
    Convert(ConvertArgs),
    /// Measure how fast a trace parses (requests per second, peak memory).
    Bench {
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct ConvertArgs {
    file: PathBuf,
    /// Output file.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Output format: msr, spc or mqsim.
    #[arg(long, value_name = "FORMAT")]
    to: Format,
    #[command(flatten)]
    read: ReadArgs,
}

pub fn run(command: TraceCommand) -> Result<()> {
    match command {
        TraceCommand::Stats { file, read, json, cache_entries, cache_page } => {
            let page = parse_bytes(&cache_page)
                .filter(|b| *b >= 512.0 && b.fract() == 0.0)
                .with_context(|| format!("--cache-page: expected a page size such as 4KiB, found \"{cache_page}\""))?;
            if cache_entries == 0 {
                bail!("--cache-entries: the mapping cache needs at least 1 entry");
            }
            let workload = read.open(&file)?;
            let (skipped, passed_over) = (workload.skipped.clone(), workload.passed_over.clone());
            let mut stats = StatsBuilder::with_cache(cache_entries, page as u64);
            for r in workload.requests {
                stats.add(&r?);
            }
            let s = stats.finish(skipped.get(), passed_over.get());
            if json {
                println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "trace": file, "stats": s }))?);
            } else {
                print!("{}", stats_table(&s));
            }
            Ok(())
        }
        TraceCommand::Convert(args) => convert(args),
        TraceCommand::Bench { file, read, json } => bench(&file, &read, json),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 20) as f64)
}

pub fn stats_table(s: &TraceStats) -> String {
    let ia = &s.interarrival;
    let rows = vec![
        vec!["requests".into(), s.requests.to_string()],
        vec!["reads / writes / trims".into(), format!("{} / {} / {}", s.reads, s.writes, s.trims)],
        vec!["write requests (%)".into(), format!("{:.2}", s.write_percent)],
        vec!["average size (KB)".into(), format!("{:.2}", s.mean_size_kb)],
        vec!["average read size (KB)".into(), format!("{:.2}", s.mean_read_size_kb)],
        vec!["average write size (KB)".into(), format!("{:.2}", s.mean_write_size_kb)],
        vec![
            "footprint / written (MiB)".into(),
            format!("{} / {}", mib(s.footprint_bytes), mib(s.write_footprint_bytes)),
        ],
        vec![
            "sequential all / reads / writes (%)".into(),
            format!(
                "{:.2} / {:.2} / {:.2}",
                s.sequential_percent, s.sequential_read_percent, s.sequential_write_percent
            ),
        ],
        vec![
            format!(
                "LRU mapping cache hits, {} entries of {} KiB (%)",
                s.mapping_cache.entries,
                s.mapping_cache.page_bytes as f64 / 1024.0
            ),
            format!("{:.2}", s.mapping_cache.hit_percent),
        ],
        vec![
            format!("working sets (merged closer than {} KB): count, mean size (MB)", s.working_sets.merge_distance_kb),
            format!("{}, {:.2}", s.working_sets.count, s.working_sets.mean_size_mb),
        ],
        vec![
            "mean page update (4 KiB page writes per page written)".into(),
            format!("{:.2}", s.working_sets.mean_page_updates),
        ],
        vec!["WR_max: page reads of written pages (%)".into(), format!("{:.2}", s.wr_max_percent)],
        vec!["WR_max by read request (%)".into(), format!("{:.2}", s.wr_max_request_percent)],
        vec![
            "idle slots (gaps between arrivals): count, mean (ms)".into(),
            format!("{}, {:.3}", s.idle_slots.slots, s.idle_slots.mean_ms),
        ],
        vec![
            format!(
                "  longer than {} ms (%)",
                s.idle_slots.longer_than.iter().map(|t| t.ms.to_string()).collect::<Vec<_>>().join(" / ")
            ),
            s.idle_slots.longer_than.iter().map(|t| format!("{:.1}", t.percent)).collect::<Vec<_>>().join(" / "),
        ],
        vec!["address range (bytes)".into(), format!("{} .. {}", s.min_offset_bytes, s.max_end_bytes)],
        vec!["duration (s)".into(), format!("{:.3}", s.duration_s)],
        vec![
            "inter-arrival mean / p50 / p90 / p99 / max (us)".into(),
            format!("{:.1} / {:.1} / {:.1} / {:.1} / {:.1}", ia.mean_us, ia.p50_us, ia.p90_us, ia.p99_us, ia.max_us),
        ],
        vec!["skipped lines".into(), s.skipped_lines.to_string()],
        vec!["lines without a request (other events, headers)".into(), s.non_request_lines.to_string()],
    ];
    table(&["statistic", "value"], &rows)
}

fn convert(args: ConvertArgs) -> Result<()> {
    if !args.to.writable() {
        bail!("--to {}: cannot write that format (writable: msr, spc, mqsim)", args.to);
    }
    if same_file(&args.file, &args.output) {
        bail!(
            "{}: is the input trace {}; write the conversion to another file",
            args.output.display(),
            args.file.display()
        );
    }
    let workload = args.read.open(&args.file)?;
    let skipped = workload.skipped.clone();
    // Written beside the output under a temporary name (same extension, so the same compression)
    // and renamed once complete: a failed conversion leaves no half-written file behind.
    let name = args.output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = args.output.with_file_name(format!(".partial-{}-{name}", std::process::id()));
    let written = (|| -> Result<u64> {
        let mut out = TraceWriter::create(&partial, args.to)?;
        let mut n = 0u64;
        for r in workload.requests {
            out.write(&r?)?;
            n += 1;
        }
        out.finish()?;
        std::fs::rename(&partial, &args.output).with_context(|| format!("{}: cannot write", args.output.display()))?;
        Ok(n)
    })();
    let n = written.inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    eprintln!("{n} requests written to {} ({}), {} bad lines skipped", args.output.display(), args.to, skipped.get());
    Ok(())
}

/// Whether two paths name one file (through links too).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Peak resident memory of this process, from /proc (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of this process in seconds, every thread included (the trace is parsed on a thread
/// of its own): its cost even when other processes share the machine.
fn process_cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage writes one rusage struct, which is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(seconds(usage.ru_utime) + seconds(usage.ru_stime))
}

fn bench(file: &PathBuf, read: &ReadArgs, json: bool) -> Result<()> {
    let cpu_before = process_cpu_seconds();
    let started = Instant::now();
    let workload = read.open(file)?;
    let skipped = workload.skipped.clone();
    let mut requests = 0u64;
    let mut bytes = 0u64;
    for r in workload.requests {
        bytes = bytes.wrapping_add(r?.len_bytes);
        requests += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = cpu_before.zip(process_cpu_seconds()).map(|(a, b)| b - a);
    let rate = requests as f64 / seconds;
    let cpu_rate = cpu.map(|c| requests as f64 / c);
    let rss = peak_rss_kib();
    if json {
        println!(
            "{}",
            serde_json::json!({ "trace": file, "requests": requests, "skipped_lines": skipped.get(), "seconds": seconds, "cpu_seconds": cpu,
                "requests_per_second": rate, "requests_per_cpu_second": cpu_rate, "peak_rss_kib": rss, "bytes_requested": bytes })
        );
    } else {
        let rows = vec![
            vec!["requests".into(), requests.to_string()],
            vec![
                "seconds (wall / cpu)".into(),
                format!("{seconds:.3} / {}", cpu.map_or("-".into(), |c| format!("{c:.3}"))),
            ],
            vec![
                "requests per second (wall / cpu)".into(),
                format!("{rate:.0} / {}", cpu_rate.map_or("-".into(), |r| format!("{r:.0}"))),
            ],
            vec!["peak resident memory (MiB)".into(), rss.map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0))],
        ];
        print!("{}", table(&["parse", "value"], &rows));
    }
    Ok(())
}

/// `ftlsim list formats`.
pub fn list_formats() {
    println!("Trace formats (--format; detected from the content when absent):");
    for f in Format::ALL {
        println!("  {:<9} {}{}", f.name(), f.layout(), if f.writable() { "  [writable]" } else { "" });
    }
}

/// `ftlsim list workloads`.
pub fn list_workloads() {
    println!(
        "Synthetic stand-ins for the papers' traces (--synthetic NAME[,scale=F]; synthetic, not the real traces):"
    );
    for p in PRESETS {
        println!(
            "  {:<18} {:>10} req  {:>5.2}% writes  read {:>6.2} KB  write {:>6.2} KB   {} ({})",
            p.name, p.requests, p.write_percent, p.mean_read_kb, p.mean_write_kb, p.trace, p.source
        );
    }
}
