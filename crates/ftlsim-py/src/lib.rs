//! Python bindings: the native module `ftlsim._ftlsim`, wrapped by the pure-Python package in
//! `python/ftlsim`. Results cross the boundary as the same JSON the CLI prints.

use ftlsim::config::{preset_names, ConfigBuilder};
use ftlsim::ftl::REGISTRY;
use ftlsim::workload::synthetic::MixedSpec;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs one FTL and returns the result as a JSON string.
///
/// `config_json` is a JSON object laid out like the TOML configuration; `config_path` a TOML file;
/// `sets` a list of `key=value` overrides. Without `trace`, the embedded synthetic stream runs.
#[pyfunction]
#[pyo3(signature = (ftl, config_json=None, config_path=None, sets=Vec::new(), trace=None, requests=None))]
fn run_json(
    py: Python<'_>,
    ftl: String,
    config_json: Option<String>,
    config_path: Option<String>,
    sets: Vec<String>,
    trace: Option<String>,
    requests: Option<u64>,
) -> PyResult<String> {
    let mut builder = ConfigBuilder::new();
    if let Some(path) = &config_path {
        let text = std::fs::read_to_string(path).map_err(|e| err(format!("{path}: {e}")))?;
        builder = builder.toml(path, &text).map_err(err)?;
    }
    if let Some(json) = &config_json {
        let value: serde_json::Value = serde_json::from_str(json).map_err(err)?;
        let table: toml::Table = toml::Table::try_from(value).map_err(|e| err(format!("config: {e}")))?;
        builder = builder.table("config", table).map_err(err)?;
    }
    for s in &sets {
        builder = builder.set(s).map_err(err)?;
    }
    let config = builder.build().map_err(err)?;
    if let Some(path) = trace {
        return Err(err(format!("{path}: trace files are not supported by the Python binding yet")));
    }
    let spec = MixedSpec { requests: requests.unwrap_or(MixedSpec::default().requests), seed: config.seed, ..MixedSpec::default() };
    py.allow_threads(|| {
        let workload = spec.workload(config.device.logical_pages(), config.device.geometry.page_size).map_err(err)?;
        let result = ftlsim::run(&config, &ftl, workload).map_err(err)?;
        serde_json::to_string(&result).map_err(err)
    })
}

#[pyfunction]
fn ftl_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|f| f.name).collect()
}

#[pyfunction]
fn preset_list() -> Vec<&'static str> {
    preset_names().collect()
}

#[pymodule]
fn _ftlsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(ftl_names, m)?)?;
    m.add_function(wrap_pyfunction!(preset_list, m)?)?;
    m.add("__version__", ftlsim::VERSION)?;
    Ok(())
}
