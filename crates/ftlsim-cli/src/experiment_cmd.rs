//! `ftlsim experiment SPEC.toml`: every run of an experiment spec (see `experiments/`), in
//! parallel, printed as one table per workload plus the geometric mean of NT across workloads.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use ftlsim::experiment::{geometric_means, normalize, point_strings, ExperimentRun, ExperimentSpec};
use rayon::prelude::*;

use crate::output::{csv_rows, opt, table};

pub fn experiment(path: &Path, requests: Option<u64>, traces: &[String], json: bool, csv: bool) -> Result<()> {
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
    spec.check()?;
    let plan = spec.plan();
    let mut runs: Vec<ExperimentRun> = plan
        .par_iter()
        .map(|run| {
            let label = spec.label(run);
            (|| -> Result<ExperimentRun> {
                let config = spec.config(run)?;
                let (workload, source) = spec.open_workload(&base, run.workload, &config)?;
                let result = ftlsim::run(&config, &run.ftl, workload)?;
                Ok(ExperimentRun {
                    experiment: spec.name.clone(),
                    workload: spec.workloads[run.workload].name.clone(),
                    source,
                    point: point_strings(&run.point),
                    normalized_response_time: None,
                    result,
                })
            })()
            .with_context(|| label)
        })
        .collect::<Result<_>>()?;
    normalize(&spec, &mut runs);
    let saturated: Vec<String> = runs
        .iter()
        .filter(|r| r.result.report.response.saturated)
        .map(|r| format!("{}/{}", r.workload, r.result.ftl))
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
    let mut out = std::io::stdout().lock();
    if json {
        for r in &runs {
            serde_json::to_writer(&mut out, r)?;
            writeln!(out)?;
        }
        return Ok(());
    }
    if csv {
        let rows: Vec<Vec<(String, String)>> = runs
            .iter()
            .map(|r| {
                let mut cells = vec![
                    ("experiment".to_string(), r.experiment.clone()),
                    ("workload".to_string(), r.workload.clone()),
                    ("source".to_string(), r.source.to_string()),
                ];
                cells.extend(r.point.iter().map(|(k, v)| (format!("sweep.{k}"), v.clone())));
                cells.push(("nt".to_string(), opt(r.normalized_response_time, 6)));
                cells
            })
            .collect();
        write!(out, "{}", csv_rows(&runs.iter().map(|r| &r.result).collect::<Vec<_>>(), &rows))?;
        return Ok(());
    }
    writeln!(out, "experiment {}: {}", spec.name, spec.description)?;
    for w in &spec.workloads {
        let of_w: Vec<&ExperimentRun> = runs.iter().filter(|r| r.workload == w.name).collect();
        let source = of_w.first().map_or("", |r| r.source);
        writeln!(out, "\nworkload {} ({source})", w.name)?;
        let rows: Vec<Vec<String>> = of_w
            .iter()
            .map(|r| {
                let m = &r.result.report;
                vec![
                    r.result.ftl.clone(),
                    r.point.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
                    format!("{:.1}", m.response.mean_us),
                    opt(r.normalized_response_time, 3),
                    opt(m.write_amplification, 3),
                    opt(m.cache.hit_ratio, 4),
                    (m.reads.translation + m.spare_reads.translation).to_string(),
                    m.programs.translation.to_string(),
                    m.erases.total.to_string(),
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
    let means = geometric_means(&runs);
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
