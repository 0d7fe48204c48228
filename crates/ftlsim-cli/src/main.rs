//! The `ftlsim` command line: run one FTL, compare several, list what is available.
//! Every error exits with code 2 and one line on stderr naming what is wrong.

mod bench_cmd;
mod bench_record;
mod codes_cmd;
mod experiment_cmd;
mod gen_cmd;
mod output;
mod python;
mod reproduce_cmd;
mod spool;
mod trace_args;
mod trace_cmd;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use ftlsim::config::{preset_names, ConfigBuilder};
use ftlsim::ftl::{Family, REGISTRY};
use ftlsim::{Config, RunResult, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use trace_args::TraceArgs;

#[derive(Parser)]
#[command(name = "ftlsim", version, about = "Fast, faithful trace-driven simulator of NAND-flash SSDs and their FTLs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one FTL on a workload.
    Run {
        /// FTL to simulate (see `ftlsim list ftls`).
        #[arg(long, default_value = "pftl")]
        ftl: String,
        /// Write every request's arrival, start, completion and response time (simulated ns),
        /// operation, first LPN, pages and bytes to this CSV file (compressed if it ends in .gz,
        /// .bz2, .xz or .zst).
        #[arg(long, value_name = "FILE")]
        latency_log: Option<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Run several FTLs on the same workload and compare them (NT = t_FTL / t_PFTL).
    Compare {
        /// Comma-separated FTLs, or `all` (every one the device has the spare blocks for); default:
        /// every page-mapped and demand-based FTL (the block-mapped ones saturate under small
        /// random writes such as the embedded workload's; CPM and K-CPM need a spare block per
        /// cluster).
        #[arg(long, value_delimiter = ',')]
        ftl: Vec<String>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Run an experiment spec (experiments/*.toml): workloads x sweep points x FTLs.
    Experiment {
        /// The spec file.
        spec: PathBuf,
        /// Requests of every synthetic stand-in (overrides the spec; for quick looks).
        #[arg(long)]
        requests: Option<u64>,
        /// Replay FILE for the workload called NAME (repeatable), instead of what the spec names.
        #[arg(long = "trace", value_name = "NAME=FILE")]
        traces: Vec<String>,
        /// Draw the figures the spec names into DIR as PNG and SVG (needs the Python package;
        /// the results go to DIR too unless --out says where).
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        #[command(flatten)]
        exec: experiment_cmd::ExecArgs,
    },
    /// Run a grid: FTLs x swept parameters x workloads x seeds, in parallel, with a results cache.
    Sweep {
        #[command(flatten)]
        grid: experiment_cmd::SweepArgs,
        #[command(flatten)]
        exec: experiment_cmd::ExecArgs,
    },
    /// Write one self-contained HTML page (configuration, tables, figures, the paper's numbers
    /// beside ours) for results directories written by `experiment --out` or `sweep --out`.
    Report {
        /// Results directories.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// The HTML file to write.
        #[arg(short, long, value_name = "FILE", default_value = "report.html")]
        output: PathBuf,
    },
    /// Run every shipped experiment (on stand-ins, or on the real traces found in --traces) and
    /// write one report with every figure ftlsim can produce.
    Reproduce(reproduce_cmd::ReproduceArgs),
    /// Measure the simulator's own speed and memory on fixed scenarios.
    Bench(bench_cmd::BenchArgs),
    /// Trace tools: statistics, conversion between formats, parse benchmark.
    Trace {
        #[command(subcommand)]
        command: trace_cmd::TraceCommand,
    },
    /// Write a synthetic trace (generator spec or paper-trace stand-in) to a file.
    Gen(gen_cmd::GenArgs),
    /// DiffECC's reliability model: Table 2.2's codes and the ISPP step each write mode needs
    /// (paper 001 sections 2.2-2.3).
    DiffeccCodes(codes_cmd::CodesArgs),
    /// List FTLs, device presets, trace formats or synthetic workloads.
    List {
        #[arg(value_enum, default_value = "all")]
        what: ListWhat,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ListWhat {
    All,
    Ftls,
    Presets,
    Formats,
    Workloads,
}

#[derive(Args, Clone)]
struct CommonArgs {
    /// Device preset (see `ftlsim list presets`).
    #[arg(long)]
    preset: Option<String>,
    /// TOML configuration file (applied over the preset).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override one configuration field, e.g. --set gc.policy=cost-benefit (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Random seed (synthetic workloads, aging).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    trace: TraceArgs,
    /// Print JSON (one object per run).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV (a header and one row per run).
    #[arg(long)]
    csv: bool,
    /// Run the full invariant check every N requests (and check every read against the oracle).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10000")]
    check: Option<u64>,
    /// Simulate power losses after request N, after each of N,M,..., or at K seeded random points
    /// (random:K, or random:K:N to draw from the first N requests); each runs the FTL's recovery,
    /// counts its reads (report.recovery) and checks the recovered mapping against the oracle.
    #[arg(long, value_name = "N|N,M,..|random:K")]
    power_loss_at: Option<String>,
    /// Simulator memory a run may take, bytes (default: what the machine has available).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<u64>,
    /// Never show a progress bar.
    #[arg(long)]
    quiet: bool,
}

impl CommonArgs {
    fn config(&self) -> Result<Config> {
        let mut b = ConfigBuilder::new();
        if let Some(p) = &self.preset {
            b = b.preset(p)?;
        }
        if let Some(path) = &self.config {
            let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
            b = b.toml(&path.display().to_string(), &text)?;
        }
        for s in &self.sets {
            b = b.set(s)?;
        }
        if let Some(seed) = self.seed {
            b = b.set(&format!("seed={seed}"))?;
        }
        if let Some(every) = self.check {
            b = b.set(&format!("check.invariants_every={every}"))?.set("check.oracle=true")?;
        }
        if let Some(spec) = &self.power_loss_at {
            b = b.set(&format!("check.power_loss_at={}", serde_json::to_string(spec)?))?;
        }
        if let Some(bytes) = self.max_memory {
            b = b.set(&format!("check.max_memory={bytes}"))?;
        }
        Ok(b.build()?)
    }
}

fn progress_bar(quiet: bool, label: &str) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix}: {pos} requests ({per_sec}) {elapsed}").expect("template"),
    );
    bar.set_prefix(label.to_string());
    Some(bar)
}

fn run_one(
    config: &Config,
    ftl: &str,
    common: &CommonArgs,
    bar: Option<&ProgressBar>,
    latency_log: Option<&Path>,
) -> Result<RunResult> {
    let workload = common.trace.open(config)?;
    let mut sim = Simulation::new(config, ftl)?;
    if let Some(requests) = common.trace.synthetic_requests(config)? {
        // The synthetic stream's length is known: random power losses are drawn from all of it.
        sim.expect_requests(requests)?;
    } else if !config.check.power_loss_at.is_empty() {
        // A trace's length is known only once read: count it first, so a plan it cannot honour
        // fails before the run rather than after it, and random points cover all of it.
        let mut requests = 0u64;
        for request in common.trace.open(config)?.requests {
            request?;
            requests += 1;
        }
        sim.expect_requests(requests)?;
    }
    sim.precondition()?;
    if let Some(path) = latency_log {
        sim.log_latencies(path)?;
    }
    let result = sim.run(workload, &mut |n| {
        if let Some(b) = bar {
            b.set_position(n);
        }
    })?;
    if config.check.invariants_every > 0 {
        sim.check_invariants()?;
    }
    warn_if_saturated(&result);
    Ok(result)
}

/// Says on stderr when the offered load kept the device busy all the time and requests waited
/// longer than they were served: queueing then grows with the length of the run and response
/// times mean little. A run too short to queue (one request keeps a die busy for the whole of
/// its span) is not worth the warning.
fn warn_if_saturated(result: &RunResult) {
    let r = &result.report.response;
    let queued = r.mean_queueing_us >= r.mean_access_us;
    if let (true, true, Some(u)) = (r.saturated, queued, r.utilization) {
        eprintln!(
            "warning: {}: the device was busy {:.0}% of the time: the offered load is at or beyond what it can \
             serve, so requests queue longer the longer the run (mean queueing {:.0} us against {:.0} us of \
             service); slow the arrivals with --set host.time_scale=F, F < 1 (arrival times are divided by F: \
             0.5 halves the request rate)",
            result.ftl,
            u * 100.0,
            r.mean_queueing_us,
            r.mean_access_us
        );
    }
}

/// Whether the device has the spare blocks a scheme needs; `compare --ftl all` skips, with a
/// warning, one that would refuse the device (CPM's clusters each need a block of slack).
fn fits(info: &ftlsim::ftl::FtlInfo, config: &ftlsim::config::Config) -> bool {
    let g = &config.device.geometry;
    let spare = (g.total_pages().saturating_sub(config.device.logical_pages()) / g.pages_per_block) as u64;
    let needed = (info.spare_blocks_needed)(config);
    if needed > spare {
        eprintln!("warning: {} skipped: it needs {needed} spare blocks, the device has {spare}", info.name);
    }
    needed <= spare
}

fn print_results(results: &[RunResult], common: &CommonArgs, single: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if common.json {
        for r in results {
            serde_json::to_writer(&mut out, r)?;
            writeln!(out)?;
        }
    } else if common.csv {
        write!(out, "{}", output::csv(results))?;
    } else if single {
        write!(out, "{}", output::run_table(&results[0]))?;
    } else {
        let r = &results[0];
        writeln!(
            out,
            "workload: {}   device: {}   requests: {}",
            r.workload,
            r.config["preset"].as_str().unwrap_or(""),
            r.report.host.requests
        )?;
        write!(out, "{}", output::compare_table(results))?;
    }
    Ok(())
}

fn list(what: ListWhat) {
    if matches!(what, ListWhat::All | ListWhat::Ftls) {
        println!("FTLs (parameters under [ftl.<name>]: default, valid values, meaning, source):");
        for line in ftlsim::ftl::describe(REGISTRY).lines() {
            println!("  {line}");
        }
    }
    if matches!(what, ListWhat::All | ListWhat::Presets) {
        println!("Device presets:");
        for name in preset_names() {
            let c = Config::preset(name).expect("presets validate");
            println!("  {:<12} {} ({})", name, c.device.description, c.device.source);
        }
    }
    if matches!(what, ListWhat::All | ListWhat::Formats) {
        trace_cmd::list_formats();
    }
    if matches!(what, ListWhat::All | ListWhat::Workloads) {
        trace_cmd::list_workloads();
    }
}

/// Says on stderr which format a trace was detected as, and why (unless `--quiet`): a wrong
/// guess would otherwise go unnoticed. The same is recorded in the results.
fn announce_detected_format(config: &Config, common: &CommonArgs) -> Result<()> {
    if common.quiet {
        return Ok(());
    }
    let workload = common.trace.open(config)?;
    if let (Some(why), Some(format)) =
        (workload.description["detected"].as_str(), workload.description["format"].as_str())
    {
        eprintln!("{}: read as {format} ({why}); --format overrides", workload.name);
    }
    Ok(())
}

/// A trace on standard input or a pipe, copied so it can be read more than once.
fn spool_trace(common: &mut CommonArgs) -> Result<Option<spool::Spooled>> {
    let Some(path) = common.trace.trace.as_mut() else { return Ok(None) };
    let name = path.display().to_string();
    let copy = spool::spool(path)?;
    if copy.is_some() {
        common.trace.trace_name = Some(name);
    }
    Ok(copy)
}

fn main_inner(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run { ftl, latency_log, mut common } => {
            let _copy = spool_trace(&mut common)?;
            let config = common.config()?;
            announce_detected_format(&config, &common)?;
            let bar = progress_bar(common.quiet, &ftl);
            let result = run_one(&config, &ftl, &common, bar.as_ref(), latency_log.as_deref());
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            print_results(&[result?], &common, true)
        }
        Command::Compare { ftl, mut common } => {
            let _copy = spool_trace(&mut common)?;
            let config = common.config()?;
            let ftls: Vec<String> = match ftl.as_slice() {
                [] => REGISTRY
                    .iter()
                    .filter(|f| matches!(f.family, Family::PageMapped | Family::DemandBased))
                    .map(|f| f.name.to_string())
                    .collect(),
                [all] if all == "all" => {
                    REGISTRY.iter().filter(|f| fits(f, &config)).map(|f| f.name.to_string()).collect()
                }
                _ => ftl,
            };
            for name in &ftls {
                if !REGISTRY.iter().any(|f| f.name == name) {
                    ftlsim::ftl::build_ftl(name, &config)?;
                }
            }
            if ftls.is_empty() {
                bail!("no FTL to compare");
            }
            announce_detected_format(&config, &common)?;
            let bar = progress_bar(common.quiet, "compare");
            let results: Vec<Result<RunResult>> = ftls
                .par_iter()
                .map(|name| run_one(&config, name, &common, None, None).with_context(|| format!("FTL {name}")))
                .collect();
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let results: Vec<RunResult> = results.into_iter().collect::<Result<_>>()?;
            print_results(&results, &common, false)
        }
        Command::Experiment { spec, requests, traces, plot, exec } => {
            experiment_cmd::experiment(&spec, requests, &traces, &exec, plot.as_deref())
        }
        Command::Sweep { grid, exec } => experiment_cmd::sweep(&grid, &exec),
        Command::Report { results, output } => python::report(&results, &output),
        Command::Reproduce(args) => reproduce_cmd::reproduce(&args),
        Command::Bench(args) => bench_cmd::bench(&args),
        Command::Trace { command } => trace_cmd::run(command),
        Command::Gen(args) => gen_cmd::run(args),
        Command::DiffeccCodes(args) => codes_cmd::run(args),
        Command::List { what } => {
            list(what);
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`ftlsim list | head`) ends the process as
    // Unix tools do, instead of a panic in `println!`.
    // SAFETY: called before any thread starts; SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                let _ = e.print(); // --help, --version
                return ExitCode::SUCCESS;
            }
            // One line: clap's first line names the problem; its usage hint follows on others.
            let message = e.render().to_string();
            eprintln!("{}", message.lines().next().unwrap_or("error: invalid arguments"));
            return ExitCode::from(2);
        }
    };
    match main_inner(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
