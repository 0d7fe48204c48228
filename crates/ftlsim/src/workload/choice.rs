//! Which workload a run replays: a trace file, a synthetic generator spec or paper-trace
//! stand-in, or the embedded default stream. Shared by the CLI, experiments and Python.

use std::path::PathBuf;

use super::generator::SynthSpec;
use super::synthetic::MixedSpec;
use super::{open_as, TraceOptions, Workload};
use crate::config::Config;
use crate::error::{Result, SimError};

#[derive(Debug, Clone, Default)]
pub struct WorkloadChoice {
    /// Trace file to replay (takes precedence over `synthetic`).
    pub trace: Option<PathBuf>,
    /// What results and errors call the trace (default: its path).
    pub trace_name: Option<String>,
    /// How the trace is read.
    pub options: TraceOptions,
    /// A workload preset name or generator spec (`ftlsim list workloads`).
    pub synthetic: Option<String>,
    /// Requests of a synthetic stream (default: the preset's count, or 200000 for the embedded one).
    pub requests: Option<u64>,
}

impl WorkloadChoice {
    /// The generator spec, with `requests` and the run's seed applied (a `seed=` in the spec wins).
    fn synthetic_spec(&self, text: &str, config: &Config) -> Result<SynthSpec> {
        let mut spec: SynthSpec = text.parse().map_err(|e: SimError| match e {
            SimError::Config { field, message } => SimError::config(format!("synthetic \"{text}\": {field}"), message),
            other => other,
        })?;
        if let Some(n) = self.requests {
            spec.requests = n;
        }
        if !text.split(',').any(|item| item.trim().starts_with("seed=")) {
            spec.seed = config.seed;
        }
        Ok(spec)
    }

    /// The number of requests when the workload is synthetic (known before it runs).
    pub fn synthetic_requests(&self, config: &Config) -> Result<Option<u64>> {
        Ok(match (&self.trace, &self.synthetic) {
            (Some(_), _) => None,
            (None, Some(text)) => Some(self.synthetic_spec(text, config)?.requests),
            (None, None) => Some(self.requests.unwrap_or(MixedSpec::default().requests)),
        })
    }

    /// Opens the workload afresh (each FTL of a comparison replays it from the start).
    pub fn open(&self, config: &Config) -> Result<Workload> {
        if let Some(path) = &self.trace {
            let name = self.trace_name.clone().unwrap_or_else(|| path.display().to_string());
            return open_as(path, &name, &self.options);
        }
        if let Some(text) = &self.synthetic {
            let capacity = config.device.logical_pages() as u64 * config.device.geometry.page_size as u64;
            return self.synthetic_spec(text, config)?.workload(capacity);
        }
        let requests = self.requests.unwrap_or(MixedSpec::default().requests);
        let spec = MixedSpec { requests, seed: config.seed, ..MixedSpec::default() };
        spec.workload(config.device.logical_pages(), config.device.geometry.page_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_synthetic_and_trace_choices() {
        let config = Config::preset("mlc8g").unwrap();
        let default = WorkloadChoice { requests: Some(10), ..Default::default() };
        assert_eq!(default.synthetic_requests(&config).unwrap(), Some(10));
        assert_eq!(default.open(&config).unwrap().requests.count(), 10);
        let synthetic = WorkloadChoice { synthetic: Some("requests=7,size=8k".into()), ..Default::default() };
        assert_eq!(synthetic.open(&config).unwrap().requests.count(), 7);
        let bad = WorkloadChoice { synthetic: Some("requests=x".into()), ..Default::default() };
        assert!(bad.open(&config).err().unwrap().to_string().contains("synthetic \"requests=x\""));
        let missing = WorkloadChoice { trace: Some("/nonexistent/t.csv".into()), ..Default::default() };
        assert_eq!(missing.synthetic_requests(&config).unwrap(), None);
        assert!(missing.open(&config).is_err());
    }
}
