//! Python bindings: the native module `ftlsim._ftlsim`, wrapped by the pure-Python package in
//! `python/ftlsim`. Results cross the boundary as the same JSON the CLI prints; trace chunks as
//! little-endian byte columns that the package turns into numpy arrays without copying.

// pyo3 0.22's #[pyfunction] expansion converts the returned PyErr into itself.
#![allow(clippy::useless_conversion)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ftlsim::config::{preset_names, ConfigBuilder};
use ftlsim::experiment::{normalize, ExperimentRun, ExperimentSpec};
use ftlsim::ftl::REGISTRY;
use ftlsim::sweep::{self, tidy, Options};
use ftlsim::workload::{self, Columns, TraceOptions, Workload, WorkloadChoice};
use ftlsim::{SimError, Simulation};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use native::NativeError;

// pyo3 0.22's macro tests a cfg it does not declare.
#[allow(unexpected_cfgs)]
mod native {
    use pyo3::create_exception;
    use pyo3::exceptions::PyException;

    // Raised with (kind, message, field, location); the Python package turns it into its typed
    // exceptions (`ConfigError`, `TraceError`, `SimulationError`).
    create_exception!(_ftlsim, NativeError, PyException);
}

/// A library error, classified: a configuration names its field, a trace or input its location.
fn err(e: SimError) -> PyErr {
    let message = e.to_string();
    match e {
        SimError::Config { field, .. } => NativeError::new_err(("config", message, Some(field), None::<String>)),
        SimError::Input { location, .. } => NativeError::new_err(("trace", message, None::<String>, Some(location))),
        _ => NativeError::new_err(("simulation", message, None::<String>, None::<String>)),
    }
}

/// A flag that stops the runs of a call soon after it is set (the Python package sets it when
/// Ctrl-C interrupts a call that waits for runs on other threads).
#[pyclass]
#[derive(Clone, Default)]
struct StopToken(Arc<AtomicBool>);

#[pymethods]
impl StopToken {
    #[new]
    fn new() -> Self {
        Self::default()
    }
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on a thread of its own, the GIL released, while this thread watches for Ctrl-C
/// (Python's signal handlers run only on the main thread, between bytecodes): on an interrupt it
/// sets `stop`, waits for `work` to notice (a run checks every 1024 requests) and raises
/// `KeyboardInterrupt`.
fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &Arc<AtomicBool>,
    work: impl FnOnce() -> Result<T, SimError> + Send,
) -> PyResult<T> {
    let outcome = py.allow_threads(|| {
        std::thread::scope(|scope| {
            let waiting = std::thread::current();
            let worker = scope.spawn(move || {
                let outcome = work();
                waiting.unpark(); // return at once, not at the next look for signals
                outcome
            });
            while !worker.is_finished() {
                std::thread::park_timeout(Duration::from_millis(50));
                if let Err(interrupt) = Python::with_gil(|py| py.check_signals()) {
                    stop.store(true, Ordering::Relaxed);
                    let _ = worker.join();
                    return Err(interrupt);
                }
            }
            worker.join().map_err(|_| err(SimError::Other("a run panicked".into())))
        })
    })?;
    outcome.map_err(err)
}

/// An error in the arguments of a call, named after the argument (a configuration error).
fn arg_err(argument: &str, message: impl std::fmt::Display) -> PyErr {
    err(SimError::config(argument, message.to_string()))
}

/// How a trace is read, from the keyword arguments of the Python functions (the CLI's trace
/// options; each error names its argument).
#[derive(Default)]
struct ReadArgs {
    format: Option<String>,
    on_bad_line: Option<String>,
    columns: Option<String>,
    out_of_order: Option<String>,
    asu: Option<String>,
    events: Option<String>,
}

impl ReadArgs {
    fn options(&self) -> PyResult<TraceOptions> {
        fn parse<T: std::str::FromStr<Err = String>>(argument: &str, value: &Option<String>) -> PyResult<Option<T>> {
            value.as_deref().map(|v| v.parse().map_err(|e: String| arg_err(argument, e))).transpose()
        }
        let mut options = TraceOptions {
            format: parse("format", &self.format)?,
            out_of_order: parse("out_of_order", &self.out_of_order)?,
            generic: parse("columns", &self.columns)?,
            ..TraceOptions::default()
        };
        if let Some(p) = parse("on_bad_line", &self.on_bad_line)? {
            options.on_bad_line = p;
        }
        if let Some(a) = parse("asu", &self.asu)? {
            options.asu = a;
        }
        if let Some(e) = &self.events {
            options.events = e.clone();
        }
        Ok(options)
    }
}

/// Runs one FTL and returns the result as a JSON string.
///
/// `config_json` is a JSON object laid out like the TOML configuration; `config_path` a TOML file;
/// `sets` a list of `key=value` overrides. The workload is `trace`, else `synthetic` (a preset or
/// generator spec), else the embedded synthetic stream, read with the CLI's trace options
/// (`format`, `on_bad_line`, `columns`, `out_of_order`, `asu`, `events`). With `latency_log`,
/// every request's times go to that CSV file (`ftlsim run --latency-log`).
#[pyfunction]
#[pyo3(signature = (ftl, config_json=None, config_path=None, sets=Vec::new(), trace=None, format=None, on_bad_line=None, synthetic=None, requests=None, latency_log=None, stop=None, columns=None, out_of_order=None, asu=None, events=None))]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    ftl: String,
    config_json: Option<String>,
    config_path: Option<String>,
    sets: Vec<String>,
    trace: Option<String>,
    format: Option<String>,
    on_bad_line: Option<String>,
    synthetic: Option<String>,
    requests: Option<u64>,
    latency_log: Option<String>,
    stop: Option<StopToken>,
    columns: Option<String>,
    out_of_order: Option<String>,
    asu: Option<String>,
    events: Option<String>,
) -> PyResult<String> {
    let mut builder = ConfigBuilder::new();
    if let Some(path) = &config_path {
        let text = std::fs::read_to_string(path).map_err(|e| err(SimError::input(path.as_str(), e.to_string())))?;
        builder = builder.toml(path, &text).map_err(err)?;
    }
    if let Some(json) = &config_json {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| arg_err("config", e))?;
        let table: toml::Table = toml::Table::try_from(value).map_err(|e| arg_err("config", e))?;
        builder = builder.table("config", table).map_err(err)?;
    }
    for s in &sets {
        builder = builder.set(s).map_err(err)?;
    }
    let config = builder.build().map_err(err)?;
    let choice = WorkloadChoice {
        trace: trace.map(Into::into),
        options: ReadArgs { format, on_bad_line, columns, out_of_order, asu, events }.options()?,
        synthetic,
        requests,
        trace_name: None,
    };
    let stop = stop.unwrap_or_default().0;
    interruptible(py, &stop.clone(), move || {
        let workload = choice.open(&config)?;
        let mut sim = Simulation::new(&config, &ftl)?;
        sim.stop_when(stop);
        sim.precondition()?;
        if let Some(path) = &latency_log {
            sim.log_latencies(path.as_ref())?;
        }
        let result = sim.run(workload, &mut |_| {})?;
        serde_json::to_string(&result).map_err(|e| SimError::Other(e.to_string()))
    })
}

/// An experiment spec file as JSON (with `--trace NAME=FILE` replacements and `requests` for
/// every stand-in, as `ftlsim experiment`), and the directory its paths are relative to.
#[pyfunction]
#[pyo3(signature = (path, requests=None, traces=Vec::new()))]
fn load_spec(path: String, requests: Option<u64>, traces: Vec<(String, String)>) -> PyResult<(String, String)> {
    let (mut spec, base) = ExperimentSpec::from_file(path.as_ref()).map_err(err)?;
    for (name, file) in traces {
        spec.use_trace(&name, file.into()).map_err(err)?;
    }
    if let Some(n) = requests {
        for w in &mut spec.workloads {
            w.requests = Some(n);
        }
    }
    let json = serde_json::to_string(&spec).map_err(|e| err(SimError::Other(e.to_string())))?;
    Ok((json, base.display().to_string()))
}

/// The spec of a sweep (`ftlsim sweep`): `sweep_json` holds the fields of `ftlsim::sweep::Sweep`.
#[pyfunction]
fn sweep_spec(sweep_json: String) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(&sweep_json).map_err(|e| arg_err("sweep", e))?;
    let text = |key: &str| v[key].as_str().map(str::to_string);
    let strings = |key: &str| -> Vec<String> {
        v[key].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    let table = |key: &str| -> PyResult<toml::Table> {
        match &v[key] {
            serde_json::Value::Null => Ok(toml::Table::new()),
            other => toml::Table::try_from(other.clone()).map_err(|e| arg_err(key, e)),
        }
    };
    let grid = table("grid")?
        .into_iter()
        .map(|(k, values)| match values {
            toml::Value::Array(a) if !a.is_empty() => Ok((k, a)),
            _ => Err(arg_err(&format!("grid.{k}"), "expected a non-empty list of values")),
        })
        .collect::<PyResult<_>>()?;
    let mut set = std::collections::BTreeMap::new();
    for assignment in strings("set") {
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(arg_err("set", format!("{assignment}: expected key=value")));
        };
        set.insert(key.trim().to_string(), ftlsim::config::parse_value(value.trim()));
    }
    let sweep = sweep::Sweep {
        name: text("name").unwrap_or_default(),
        preset: text("preset").unwrap_or_default(),
        set,
        ftls: strings("ftls"),
        grid,
        seeds: v["seeds"].as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default(),
        traces: strings("traces").into_iter().map(Into::into).collect(),
        synthetic: strings("synthetic"),
        format: text("format"),
        on_bad_line: text("on_bad_line"),
        columns: text("columns"),
        requests: v["requests"].as_u64(),
    };
    let mut spec = sweep.spec().map_err(err)?;
    if let Some(b) = text("baseline") {
        spec.baseline = b;
    }
    serde_json::to_string(&spec).map_err(|e| err(SimError::Other(e.to_string())))
}

/// A spec from its JSON (TOML has no null: an absent optional field is left out).
fn spec_value(spec_json: &str) -> PyResult<ExperimentSpec> {
    fn without_nulls(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(map) => {
                map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect()
            }
            serde_json::Value::Array(items) => items.into_iter().map(without_nulls).collect(),
            other => other,
        }
    }
    let json: serde_json::Value = serde_json::from_str(spec_json).map_err(|e| arg_err("spec", e))?;
    let value: toml::Value = serde_json::from_value(without_nulls(json)).map_err(|e| arg_err("spec", e))?;
    ExperimentSpec::from_value("spec", value).map_err(err)
}

fn spec_of(spec_json: &str, base: &str) -> PyResult<ExperimentSpec> {
    let mut spec = spec_value(spec_json)?;
    spec.measure_traces(Path::new(base)).map_err(err)?;
    Ok(spec)
}

/// How many runs a spec plans.
#[pyfunction]
fn plan_size(spec_json: String, base: String) -> PyResult<usize> {
    Ok(spec_of(&spec_json, &base)?.plan().len())
}

/// Executes the runs of a spec (all, or `only`), `jobs` at a time, through the results cache:
/// (plan index, cache key, from the cache, the run as JSON) per run, NT not yet computed.
#[pyfunction]
#[pyo3(signature = (spec_json, base, jobs=0, cache=None, only=None))]
fn execute_runs(
    py: Python<'_>,
    spec_json: String,
    base: String,
    jobs: usize,
    cache: Option<String>,
    only: Option<Vec<usize>>,
) -> PyResult<Vec<(usize, String, bool, String)>> {
    let spec = spec_of(&spec_json, &base)?;
    let options = Options { jobs, cache: cache.map(Into::into), only, ..Options::default() };
    let stop = options.stop.clone();
    let finished = interruptible(py, &stop, || sweep::execute(&spec, Path::new(&base), &options, &|_| {}))?;
    finished
        .into_iter()
        .map(|f| {
            let json = serde_json::to_string(&f.run).map_err(|e| err(SimError::Other(e.to_string())))?;
            Ok((f.index, f.key, f.cached, json))
        })
        .collect()
}

/// Computes NT for runs of a spec ([`execute_runs`]'s, in plan order) and returns their tidy
/// rows as JSON lines (the columns of `ftlsim sweep --csv`).
#[pyfunction]
fn tidy_rows(spec_json: String, runs: Vec<(String, String)>) -> PyResult<String> {
    let spec = spec_value(&spec_json)?;
    let (keys, jsons): (Vec<String>, Vec<String>) = runs.into_iter().unzip();
    let mut parsed: Vec<ExperimentRun> =
        jsons.iter().map(|j| serde_json::from_str(j).map_err(|e| arg_err("runs", e))).collect::<PyResult<_>>()?;
    normalize(&spec, &mut parsed);
    let rows: Vec<_> = parsed.iter().zip(&keys).map(|(run, key)| tidy::row(run, key)).collect();
    Ok(tidy::json_lines(&rows))
}

/// A trace read in chunks of columns.
#[pyclass]
struct TraceChunks {
    workload: Workload,
    columns: Columns,
    chunk: usize,
}

fn le_bytes<'py>(py: Python<'py>, values: &[u64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyBytes::new_bound(py, &bytes)
}

#[pymethods]
impl TraceChunks {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// (arrival_ns, kind, offset_bytes, len_bytes, line) as bytes: u64 little-endian columns and
    /// one byte per kind (0 read, 1 write, 2 trim); `None` at the end.
    #[allow(clippy::type_complexity)]
    fn __next__<'py>(
        mut slf: PyRefMut<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<
        Option<(
            Bound<'py, PyBytes>,
            Bound<'py, PyBytes>,
            Bound<'py, PyBytes>,
            Bound<'py, PyBytes>,
            Bound<'py, PyBytes>,
        )>,
    > {
        let this = &mut *slf;
        let n = this.workload.next_chunk(this.chunk, &mut this.columns).map_err(err)?;
        if n == 0 {
            return Ok(None);
        }
        let c = &this.columns;
        Ok(Some((
            le_bytes(py, &c.arrival_ns),
            PyBytes::new_bound(py, &c.kind),
            le_bytes(py, &c.offset_bytes),
            le_bytes(py, &c.len_bytes),
            le_bytes(py, &c.line),
        )))
    }

    /// Malformed lines skipped so far (with `on_bad_line="skip"`).
    fn skipped(&self) -> u64 {
        self.workload.skipped.get()
    }
}

/// Opens a trace for chunked reading.
#[pyfunction]
#[pyo3(signature = (path, format=None, on_bad_line=None, chunk=65536, columns=None))]
fn read_trace(
    path: String,
    format: Option<String>,
    on_bad_line: Option<String>,
    chunk: usize,
    columns: Option<String>,
) -> PyResult<TraceChunks> {
    if chunk == 0 {
        return Err(arg_err("chunk", "must be at least 1"));
    }
    let options = ReadArgs { format, on_bad_line, columns, ..ReadArgs::default() }.options()?;
    let workload = workload::open(&path, &options).map_err(err)?;
    Ok(TraceChunks { workload, columns: Columns::default(), chunk })
}

#[pyfunction]
fn ftl_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|f| f.name).collect()
}

/// (name, family) of every registered FTL; families: page-mapped, demand-based, block-mapped,
/// clustered.
#[pyfunction]
fn ftl_families() -> Vec<(&'static str, &'static str)> {
    REGISTRY.iter().map(|f| (f.name, f.family.name())).collect()
}

#[pyfunction]
fn preset_list() -> Vec<&'static str> {
    preset_names().collect()
}

#[pymodule]
fn _ftlsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(ftl_names, m)?)?;
    m.add_function(wrap_pyfunction!(ftl_families, m)?)?;
    m.add_function(wrap_pyfunction!(preset_list, m)?)?;
    m.add_function(wrap_pyfunction!(load_spec, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_spec, m)?)?;
    m.add_function(wrap_pyfunction!(plan_size, m)?)?;
    m.add_function(wrap_pyfunction!(execute_runs, m)?)?;
    m.add_function(wrap_pyfunction!(tidy_rows, m)?)?;
    m.add_class::<TraceChunks>()?;
    m.add_class::<StopToken>()?;
    m.add("NativeError", m.py().get_type_bound::<NativeError>())?;
    m.add("__version__", ftlsim::VERSION)?;
    Ok(())
}
