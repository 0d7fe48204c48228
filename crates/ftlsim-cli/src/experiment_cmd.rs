//! `ftlsim experiment SPEC.toml` and `ftlsim sweep`: every run of an experiment spec (see
//! `experiments/`) or of a grid given on the command line, in parallel with a progress bar,
//! through the library's executor and results cache; printed as one table per workload plus the
//! geometric mean of NT across workloads, or as tidy CSV / JSON lines, and written to a results
//! directory (`--out`) that `ftlsim report` and `--plot` read.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use ftlsim::experiment::{geometric_means, normalize, ExperimentRun, ExperimentSpec};
use ftlsim::sweep::{self, tidy, Finished, Options, Sweep};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{opt, table};

/// How an experiment or sweep is executed and where its results go.
#[derive(Args, Clone)]
pub struct ExecArgs {
    /// Runs at a time (default: one per core).
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    pub jobs: usize,
    /// Results cache directory: runs found there are not run again (an interrupted sweep
    /// resumes); runs made are stored there.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Write the results to DIR: runs.csv and runs.jsonl (one tidy row per run), runs/KEY.json
    /// (each run in full) and spec.json (what was run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print JSON lines, one per run.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: a header and one tidy row per run.
    #[arg(long)]
    pub csv: bool,
    /// Never show a progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The grid of `ftlsim sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// Comma-separated FTLs.
    #[arg(long, value_delimiter = ',', required = true)]
    ftl: Vec<String>,
    /// Device preset (default mlc8g).
    #[arg(long)]
    preset: Option<String>,
    /// A fixed override, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// A swept parameter, KEY=V1,V2,... (repeatable; the runs are the cartesian product).
    /// `ftl.*.cache_bytes` sweeps the parameter of every FTL that has it.
    #[arg(long = "grid", value_name = "KEY=V1,V2,..")]
    grid: Vec<String>,
    /// Comma-separated seeds (each run once per seed).
    #[arg(long, value_delimiter = ',')]
    seeds: Vec<u64>,
    /// A trace file (repeatable; one workload each).
    #[arg(long = "trace", value_name = "FILE")]
    traces: Vec<PathBuf>,
    /// A synthetic workload, preset or generator spec (repeatable; one workload each).
    #[arg(long = "synthetic", value_name = "PRESET_OR_SPEC")]
    synthetic: Vec<String>,
    /// Requests of each synthetic workload.
    #[arg(long)]
    requests: Option<u64>,
    /// Trace format (detected when absent).
    #[arg(long)]
    format: Option<String>,
    /// What a malformed trace line does: error or skip.
    #[arg(long, value_name = "error|skip")]
    on_bad_line: Option<String>,
    /// Generic reader column mapping for the traces, e.g.
    /// delim=ws,skip=1,time=1:us,op=2,offset=3:sector,size=4:B (implies --format generic).
    #[arg(long, value_name = "MAPPING")]
    columns: Option<String>,
    /// The FTL whose mean response time normalises the others (NT; default pftl).
    #[arg(long)]
    baseline: Option<String>,
}

impl SweepArgs {
    fn spec(&self) -> Result<ExperimentSpec> {
        let mut set = BTreeMap::new();
        for s in &self.sets {
            let (k, v) = s.split_once('=').with_context(|| format!("--set {s}: expected KEY=VALUE"))?;
            set.insert(k.trim().to_string(), ftlsim::config::parse_value(v.trim()));
        }
        let mut grid = BTreeMap::new();
        for g in &self.grid {
            let (k, values) = g.split_once('=').with_context(|| format!("--grid {g}: expected KEY=V1,V2,..."))?;
            let values: Vec<toml::Value> = values.split(',').map(|v| ftlsim::config::parse_value(v.trim())).collect();
            grid.insert(k.trim().to_string(), values);
        }
        if self.traces.is_empty() && self.synthetic.is_empty() {
            bail!("a sweep needs at least one --trace FILE or --synthetic SPEC");
        }
        let mut spec = Sweep {
            name: "sweep".into(),
            preset: self.preset.clone().unwrap_or_default(),
            set,
            ftls: self.ftl.clone(),
            grid,
            seeds: self.seeds.clone(),
            traces: self.traces.clone(),
            synthetic: self.synthetic.clone(),
            format: self.format.clone(),
            on_bad_line: self.on_bad_line.clone(),
            columns: self.columns.clone(),
            requests: self.requests,
        }
        .spec()?;
        if let Some(b) = &self.baseline {
            spec.baseline = b.clone();
        }
        Ok(spec)
    }
}

pub fn sweep(args: &SweepArgs, exec: &ExecArgs) -> Result<()> {
    let spec = args.spec()?;
    let runs = execute(&spec, Path::new("."), exec)?;
    print(&spec, &runs, exec)
}

/// Loads a spec with the command line's changes: `--trace NAME=FILE` replays a trace for a
/// workload, `--requests N` shortens every synthetic stand-in.
pub fn load(path: &Path, requests: Option<u64>, traces: &[String]) -> Result<(ExperimentSpec, PathBuf)> {
    let (mut spec, base) = ExperimentSpec::from_file(path)?;
    for given in traces {
        let Some((name, file)) = given.split_once('=') else {
            bail!("--trace {given}: expected NAME=FILE (a workload of the experiment and the trace to replay for it)");
        };
        spec.use_trace(name, file.into())?;
    }
    spec.measure_traces(&base)?;
    if let Some(n) = requests {
        for w in &mut spec.workloads {
            w.requests = Some(n);
        }
    }
    Ok((spec, base))
}

pub fn experiment(
    path: &Path,
    requests: Option<u64>,
    traces: &[String],
    exec: &ExecArgs,
    plot: Option<&Path>,
) -> Result<()> {
    let (spec, base) = load(path, requests, traces)?;
    let mut exec = exec.clone();
    if let (Some(dir), None) = (plot, &exec.out) {
        exec.out = Some(dir.to_path_buf());
    }
    let runs = execute(&spec, &base, &exec)?;
    print(&spec, &runs, &exec)?;
    if let (Some(dir), Some(results)) = (plot, &exec.out) {
        crate::python::plot(results, dir)?;
    }
    Ok(())
}

/// Runs every run of the spec with a progress bar, computes NT, warns of saturated runs and
/// writes the results directory when asked.
pub fn execute(spec: &ExperimentSpec, base: &Path, exec: &ExecArgs) -> Result<Vec<(String, ExperimentRun)>> {
    let total = spec.plan().len();
    let bar = (!exec.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs {msg} {elapsed} (ETA {eta})")
                .expect("template")
                .progress_chars("=> "),
        );
        bar.set_prefix(spec.name.clone());
        bar
    });
    let options = Options { jobs: exec.jobs, cache: exec.cache.clone(), ..Options::default() };
    let finished = sweep::execute(spec, base, &options, &|p| {
        if let Some(b) = &bar {
            b.set_position(p.done as u64);
            if p.cached > 0 {
                b.set_message(format!("({} cached)", p.cached));
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let finished: Vec<Finished> = finished?;
    let keys: Vec<String> = finished.iter().map(|f| f.key.clone()).collect();
    let mut runs: Vec<ExperimentRun> = finished.into_iter().map(|f| f.run).collect();
    normalize(spec, &mut runs);
    warn_of_saturation(&runs);
    let runs: Vec<(String, ExperimentRun)> = keys.into_iter().zip(runs).collect();
    if let Some(dir) = &exec.out {
        write_results(dir, spec, &runs)?;
    }
    Ok(runs)
}

fn warn_of_saturation(runs: &[ExperimentRun]) {
    let saturated: Vec<String> = runs
        .iter()
        .map(|r| (r, r.result_value()))
        .filter(|(_, v)| v["report"]["response"]["saturated"] == true)
        .map(|(r, v)| format!("{}/{}", r.workload, v["ftl"].as_str().unwrap_or("")))
        .collect();
    if !saturated.is_empty() {
        eprintln!(
            "warning: {} of {} runs kept the device busy at least 95% of the time, so their response times grow \
             with the run's length ({}{}); slow the arrivals with \"host.time_scale\" < 1 in the spec's [set]",
            saturated.len(),
            runs.len(),
            saturated.iter().take(4).cloned().collect::<Vec<_>>().join(", "),
            if saturated.len() > 4 { ", ..." } else { "" }
        );
    }
}

/// The results directory: tidy rows (CSV, JSON lines), every run in full, and the spec.
fn write_results(dir: &Path, spec: &ExperimentSpec, runs: &[(String, ExperimentRun)]) -> Result<()> {
    let full = dir.join("runs");
    std::fs::create_dir_all(&full).with_context(|| format!("{}: cannot create", full.display()))?;
    let rows: Vec<_> = runs.iter().map(|(key, run)| tidy::row(run, key)).collect();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))
    };
    write("runs.csv", tidy::csv(&rows))?;
    write("runs.jsonl", tidy::json_lines(&rows))?;
    write("spec.json", serde_json::to_string_pretty(spec)?)?;
    for (key, run) in runs {
        write(&format!("runs/{key}.json"), serde_json::to_string(run)?)?;
    }
    Ok(())
}

fn print(spec: &ExperimentSpec, runs: &[(String, ExperimentRun)], exec: &ExecArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if exec.json {
        for (_, r) in runs {
            serde_json::to_writer(&mut out, r)?;
            writeln!(out)?;
        }
        return Ok(());
    }
    if exec.csv {
        let rows: Vec<_> = runs.iter().map(|(key, run)| tidy::row(run, key)).collect();
        write!(out, "{}", tidy::csv(&rows))?;
        return Ok(());
    }
    writeln!(out, "experiment {}: {}", spec.name, spec.description)?;
    for w in &spec.workloads {
        let of_w: Vec<&ExperimentRun> = runs.iter().map(|(_, r)| r).filter(|r| r.workload == w.name).collect();
        let source = of_w.first().map_or("", |r| r.source.as_str());
        writeln!(out, "\nworkload {} ({source})", w.name)?;
        let rows: Vec<Vec<String>> = of_w
            .iter()
            .map(|r| {
                let v = r.result_value();
                let m = &v["report"];
                let int = |x: &serde_json::Value| x.as_u64().unwrap_or(0);
                vec![
                    v["ftl"].as_str().unwrap_or("").to_string(),
                    r.point.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                    format!("{:.1}", m["response"]["mean_us"].as_f64().unwrap_or(0.0)),
                    opt(r.normalized_response_time, 3),
                    opt(m["write_amplification"].as_f64(), 3),
                    opt(m["cache"]["hit_ratio"].as_f64(), 4),
                    (int(&m["reads"]["translation"]) + int(&m["spare_reads"]["translation"])).to_string(),
                    int(&m["programs"]["translation"]).to_string(),
                    int(&m["erases"]["total"]).to_string(),
                ]
            })
            .collect();
        write!(
            out,
            "{}",
            table(
                &["ftl", "point", "mean_rt_us", "NT", "WA", "hit_ratio", "trans_reads", "trans_writes", "erases"],
                &rows
            )
        )?;
    }
    let plain: Vec<ExperimentRun> = runs.iter().map(|(_, r)| r.clone()).collect();
    let means = geometric_means(&plain);
    if !means.is_empty() {
        writeln!(out, "\ngeometric mean of NT across workloads (baseline {})", spec.baseline)?;
        let rows: Vec<Vec<String>> = means
            .into_iter()
            .map(|(point, ftl, nt)| {
                vec![
                    ftl,
                    point.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                    format!("{nt:.3}"),
                ]
            })
            .collect();
        write!(out, "{}", table(&["ftl", "point", "NT"], &rows))?;
    }
    Ok(())
}
