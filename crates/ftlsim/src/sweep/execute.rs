//! Runs the planned runs of an experiment or sweep on a number of threads, taking what the
//! results cache already holds and storing what it runs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::cache::{self, Cache};
use crate::error::{Result, SimError};
use crate::experiment::{point_strings, ExperimentRun, ExperimentSpec, PlannedRun};
use crate::sim::Simulation;

/// How to execute.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Runs at a time (0: one per available core).
    pub jobs: usize,
    /// The results cache directory, if any.
    pub cache: Option<PathBuf>,
    /// Set to stop every run soon (Ctrl-C); they end with [`SimError::Interrupted`].
    pub stop: Arc<AtomicBool>,
    /// Run only these runs of the plan (by index), e.g. one per task of a cluster.
    pub only: Option<Vec<usize>>,
}

/// A finished run: where it is in the plan, its cache key and whether it came from the cache.
#[derive(Debug, Clone)]
pub struct Finished {
    pub index: usize,
    pub key: String,
    pub cached: bool,
    pub run: ExperimentRun,
}

/// Where the execution is, after each finished run.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    /// How many of the finished runs came from the cache.
    pub cached: usize,
    /// The run that just finished.
    pub label: &'a str,
}

/// Executes the runs of `spec` (all, or `options.only`), in plan order in the result whatever
/// the parallelism. Every run's configuration and FTL are built before any runs. The first run
/// to fail stops the others; its error is returned. NT is not computed here
/// ([`crate::experiment::normalize`] needs every run of a point).
pub fn execute(
    spec: &ExperimentSpec,
    base: &Path,
    options: &Options,
    on_progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Vec<Finished>> {
    let plan = spec.plan();
    let indices: Vec<usize> = match &options.only {
        Some(only) => {
            if let Some(bad) = only.iter().find(|i| **i >= plan.len()) {
                return Err(SimError::config("only", format!("run {bad} is not in the plan of {} runs", plan.len())));
            }
            only.clone()
        }
        None => (0..plan.len()).collect(),
    };
    let selected: Vec<PlannedRun> = indices.iter().map(|i| plan[*i].clone()).collect();
    spec.check_runs(&selected)?;
    let cache = options.cache.as_deref().map(Cache::open).transpose()?;
    let jobs = match options.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(selected.len())
    .max(1);

    let next = AtomicUsize::new(0);
    let counts = Mutex::new((0usize, 0usize));
    let outcomes: Mutex<Vec<Option<Result<Finished>>>> = Mutex::new(vec![None; selected.len()]);
    let work = |slot: usize| -> Result<Finished> {
        let run = &selected[slot];
        one(spec, base, indices[slot], run, cache.as_ref(), &options.stop).map_err(|e| spec.in_run(run, e))
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let slot = next.fetch_add(1, Ordering::Relaxed);
                if slot >= selected.len() {
                    break;
                }
                if options.stop.load(Ordering::Relaxed) {
                    outcomes.lock().expect("no worker panics holding it")[slot] = Some(Err(SimError::Interrupted));
                    continue;
                }
                let outcome = work(slot);
                if outcome.is_err() {
                    options.stop.store(true, Ordering::Relaxed);
                }
                let label = spec.label(&selected[slot]);
                let cached = matches!(outcome, Ok(Finished { cached: true, .. }));
                outcomes.lock().expect("no worker panics holding it")[slot] = Some(outcome);
                let mut counts = counts.lock().expect("no worker panics holding it");
                counts.0 += 1;
                counts.1 += cached as usize;
                on_progress(&Progress { done: counts.0, total: selected.len(), cached: counts.1, label: &label });
            });
        }
    });
    let outcomes: Vec<Result<Finished>> = outcomes
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|o| o.expect("every slot was taken"))
        .collect();
    // The error that stopped the others, not the interruptions it caused.
    if let Some(e) = outcomes.iter().find_map(|o| o.as_ref().err().filter(|e| **e != SimError::Interrupted)) {
        return Err(e.clone());
    }
    outcomes.into_iter().collect()
}

/// One run: from the cache, or simulated and stored.
fn one(
    spec: &ExperimentSpec,
    base: &Path,
    index: usize,
    run: &PlannedRun,
    cache: Option<&Cache>,
    stop: &Arc<AtomicBool>,
) -> Result<Finished> {
    let config = spec.config(run)?;
    let entry = &spec.workloads[run.workload];
    let trace = spec.trace_path(base, run.workload);
    let identity = match &trace {
        Some(path) => {
            let mut identity = json!({"trace": cache::trace_identity(path)?, "format": entry.format, "on_bad_line": entry.on_bad_line});
            if let Some(columns) = &entry.columns {
                // Only when given, so the keys of runs without it stay what they were.
                identity["columns"] = columns.as_str().into();
            }
            identity
        }
        None => json!({"synthetic": entry.synthetic, "requests": entry.requests}),
    };
    let key = cache::key(&config, &run.ftl, &identity);
    let source = if trace.is_some() { "trace" } else { "synthetic" };
    let point = point_strings(&run.point);
    if let Some(json) = cache.and_then(|c| c.get(&key)) {
        let run = ExperimentRun::from_result_json(&spec.name, &entry.name, source, point, json)?;
        return Ok(Finished { index, key, cached: true, run });
    }
    let (workload, _, requests) = spec.open_workload(base, run.workload, &config)?;
    let mut sim = Simulation::new(&config, &run.ftl)?;
    if let Some(requests) = requests {
        sim.expect_requests(requests)?;
    }
    sim.stop_when(stop.clone());
    sim.precondition()?;
    let result = sim.run(workload, &mut |_| {})?;
    let run = ExperimentRun::new(&spec.name, &entry.name, source, point, &result)?;
    if let Some(cache) = cache {
        cache.put(&key, run.result.get())?;
    }
    Ok(Finished { index, key, cached: false, run })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Sweep;

    fn sweep() -> ExperimentSpec {
        let mut s = Sweep {
            name: "t".into(),
            ftls: vec!["pftl".into(), "dftl".into()],
            synthetic: vec!["requests=300,read=0.5,addr=uniform,size=8k".into()],
            seeds: vec![1, 2],
            ..Sweep::default()
        };
        for (k, v) in [("device.geometry.blocks_per_plane", 64), ("device.geometry.pages_per_block", 64)] {
            s.set.insert(k.into(), toml::Value::Integer(v));
        }
        s.set.insert("device.overprovisioning".into(), toml::Value::Float(0.25));
        s.spec().unwrap()
    }

    fn results(runs: &[Finished]) -> Vec<serde_json::Value> {
        runs.iter()
            .map(|f| {
                let mut v = f.run.result_value();
                v["report"].as_object_mut().unwrap().remove("simulation");
                v
            })
            .collect()
    }

    #[test]
    fn parallel_runs_give_the_serial_results_in_plan_order() {
        let spec = sweep();
        let serial = execute(&spec, Path::new("."), &Options { jobs: 1, ..Options::default() }, &|_| {}).unwrap();
        let parallel = execute(&spec, Path::new("."), &Options { jobs: 3, ..Options::default() }, &|_| {}).unwrap();
        assert_eq!(serial.len(), 4);
        assert_eq!(results(&serial), results(&parallel));
        assert_eq!(serial.iter().map(|f| f.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
        let ftls: Vec<String> = serial.iter().map(|f| f.run.result_value()["ftl"].as_str().unwrap().into()).collect();
        assert_eq!(ftls, ["pftl", "dftl", "pftl", "dftl"]);
    }

    #[test]
    fn a_second_execution_takes_every_run_from_the_cache_and_a_lost_entry_runs_again() {
        let dir = std::env::temp_dir().join(format!("ftlsim-exec-cache-{}", std::process::id()));
        let spec = sweep();
        let options = Options { jobs: 2, cache: Some(dir.clone()), ..Options::default() };
        let first = execute(&spec, Path::new("."), &options, &|_| {}).unwrap();
        assert!(first.iter().all(|f| !f.cached));
        std::fs::remove_file(dir.join(format!("{}.json", first[2].key))).unwrap();
        let seen = Mutex::new(Vec::new());
        let second =
            execute(&spec, Path::new("."), &options, &|p| seen.lock().unwrap().push((p.done, p.cached))).unwrap();
        assert_eq!(second.iter().map(|f| f.cached).collect::<Vec<_>>(), [true, true, false, true]);
        assert_eq!(seen.lock().unwrap().last(), Some(&(4, 3)));
        for (a, b) in first.iter().zip(&second).filter(|(_, b)| b.cached) {
            assert_eq!(a.run.result.get(), b.run.result.get(), "a cached result is the result as written");
        }
        assert_eq!(results(&first), results(&second));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_stop_flag_interrupts_the_runs() {
        let options = Options { jobs: 1, ..Options::default() };
        options.stop.store(true, Ordering::Relaxed);
        let err = execute(&sweep(), Path::new("."), &options, &|_| {}).unwrap_err();
        assert_eq!(err, SimError::Interrupted);
    }

    #[test]
    fn a_failed_run_is_reported_with_its_label() {
        let mut spec = sweep();
        spec.workloads[0].synthetic = None;
        spec.workloads[0].trace = Some("/nonexistent/trace.csv".into());
        let err = execute(&spec, Path::new("."), &Options { jobs: 2, ..Options::default() }, &|_| {}).unwrap_err();
        assert!(err.to_string().contains("FTL pftl"), "{err}");
        let only = Options { only: Some(vec![9]), ..Options::default() };
        let err = execute(&sweep(), Path::new("."), &only, &|_| {}).unwrap_err();
        assert!(err.to_string().contains("run 9 is not in the plan of 4 runs"), "{err}");
    }
}
