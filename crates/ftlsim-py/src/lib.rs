//! Python bindings: the native module `ftlsim._ftlsim`, wrapped by the pure-Python package in
//! `python/ftlsim`. Results cross the boundary as the same JSON the CLI prints; trace chunks as
//! little-endian byte columns that the package turns into numpy arrays without copying.

// pyo3 0.22's #[pyfunction] expansion converts the returned PyErr into itself.
#![allow(clippy::useless_conversion)]

use ftlsim::config::{preset_names, ConfigBuilder};
use ftlsim::ftl::REGISTRY;
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

/// An error in the arguments of a call, named after the argument (a configuration error).
fn arg_err(argument: &str, message: impl std::fmt::Display) -> PyErr {
    err(SimError::config(argument, message.to_string()))
}

/// How a trace is read, from the keyword arguments of the Python functions.
fn trace_options(format: Option<&str>, on_bad_line: Option<&str>) -> PyResult<TraceOptions> {
    let mut options = TraceOptions::default();
    if let Some(f) = format {
        options.format = Some(f.parse().map_err(|e: String| arg_err("format", e))?);
    }
    if let Some(p) = on_bad_line {
        options.on_bad_line = p.parse().map_err(|e: String| arg_err("on_bad_line", e))?;
    }
    Ok(options)
}

/// Runs one FTL and returns the result as a JSON string.
///
/// `config_json` is a JSON object laid out like the TOML configuration; `config_path` a TOML file;
/// `sets` a list of `key=value` overrides. The workload is `trace`, else `synthetic` (a preset or
/// generator spec), else the embedded synthetic stream. With `latency_log`, every request's times
/// go to that CSV file (`ftlsim run --latency-log`).
#[pyfunction]
#[pyo3(signature = (ftl, config_json=None, config_path=None, sets=Vec::new(), trace=None, format=None, on_bad_line=None, synthetic=None, requests=None, latency_log=None))]
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
        options: trace_options(format.as_deref(), on_bad_line.as_deref())?,
        synthetic,
        requests,
        trace_name: None,
    };
    py.allow_threads(|| {
        let workload = choice.open(&config).map_err(err)?;
        let mut sim = Simulation::new(&config, &ftl).map_err(err)?;
        sim.precondition().map_err(err)?;
        if let Some(path) = &latency_log {
            sim.log_latencies(path.as_ref()).map_err(err)?;
        }
        let result = sim.run(workload, &mut |_| {}).map_err(err)?;
        serde_json::to_string(&result).map_err(|e| err(SimError::Other(e.to_string())))
    })
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
#[pyo3(signature = (path, format=None, on_bad_line=None, chunk=65536))]
fn read_trace(
    path: String,
    format: Option<String>,
    on_bad_line: Option<String>,
    chunk: usize,
) -> PyResult<TraceChunks> {
    if chunk == 0 {
        return Err(arg_err("chunk", "must be at least 1"));
    }
    let options = trace_options(format.as_deref(), on_bad_line.as_deref())?;
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
    m.add_class::<TraceChunks>()?;
    m.add("NativeError", m.py().get_type_bound::<NativeError>())?;
    m.add("__version__", ftlsim::VERSION)?;
    Ok(())
}
