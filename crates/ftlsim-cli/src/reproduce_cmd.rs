//! `ftlsim reproduce`: every shipped experiment, through the results cache, into one report.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::experiment_cmd::{self, ExecArgs};

#[derive(Args)]
pub struct ReproduceArgs {
    /// Only the experiments of this paper (e.g. 000 or 2: specs named paper000-*).
    #[arg(long, value_name = "N")]
    paper: Option<String>,
    /// A directory of real traces: a workload replays DIR/<its trace's file name> when there,
    /// its synthetic stand-in otherwise.
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,
    /// The experiment specs.
    #[arg(long, value_name = "DIR", default_value = "experiments")]
    experiments: PathBuf,
    /// Requests of every synthetic stand-in (overrides the specs; for a quick look).
    #[arg(long)]
    requests: Option<u64>,
    /// Output directory: one results directory per experiment, the cache (unless --cache) and
    /// report.html.
    #[arg(short, long, value_name = "DIR", default_value = "reproduce")]
    output: PathBuf,
    /// Runs at a time (default: one per core).
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    jobs: usize,
    /// Results cache (default: OUTPUT/cache).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Never show a progress bar.
    #[arg(long)]
    quiet: bool,
}

pub fn reproduce(args: &ReproduceArgs) -> Result<()> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&args.experiments)
        .with_context(|| {
            format!("{}: cannot read the experiment specs (--experiments DIR)", args.experiments.display())
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    if let Some(paper) = &args.paper {
        let number: u32 = paper.parse().with_context(|| format!("--paper {paper}: expected a paper number"))?;
        let prefix = format!("paper{number:03}");
        specs.retain(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)));
    }
    if specs.is_empty() {
        bail!("no experiment spec in {} matches", args.experiments.display());
    }
    let cache = args.cache.clone().unwrap_or_else(|| args.output.join("cache"));
    let mut results = Vec::new();
    for path in &specs {
        let (mut spec, base) = experiment_cmd::load(path, args.requests, &[])?;
        if let Some(dir) = &args.traces {
            let found: Vec<(String, PathBuf)> = spec
                .workloads
                .iter()
                .filter_map(|w| Some((w.name.clone(), dir.join(w.trace.as_ref()?.file_name()?))))
                .filter(|(_, p)| p.exists())
                .collect();
            for (name, trace) in found {
                spec.use_trace(&name, trace)?;
            }
            spec.measure_traces(&base)?;
        }
        let out = args.output.join(&spec.name);
        let exec = ExecArgs {
            jobs: args.jobs,
            cache: Some(cache.clone()),
            out: Some(out.clone()),
            json: false,
            csv: false,
            quiet: args.quiet,
        };
        if !args.quiet {
            eprintln!("{}: {}", spec.name, path.display());
        }
        experiment_cmd::execute(&spec, &base, &exec)?;
        results.push(out);
    }
    let report = args.output.join("report.html");
    crate::python::report(&results, &report)
}
