//! Where the workload of `run` and `compare` comes from: a trace file, or the embedded default
//! synthetic stream when no trace is given.

use anyhow::Result;
use clap::Args;
use ftlsim::workload::synthetic::MixedSpec;
use ftlsim::workload::Workload;
use ftlsim::Config;

#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    /// Trace file to replay; without it, the embedded synthetic OLTP-like stream runs.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,

    /// Requests of the embedded synthetic stream (no trace given).
    #[arg(long, default_value_t = MixedSpec::default().requests)]
    pub requests: u64,
}

impl TraceArgs {
    /// Opens the workload afresh (each FTL of a comparison replays it from the start).
    pub fn open(&self, config: &Config) -> Result<Workload> {
        if let Some(path) = &self.trace {
            anyhow::bail!("{}: trace files are not supported yet", path.display());
        }
        let spec = MixedSpec { requests: self.requests, seed: config.seed, ..MixedSpec::default() };
        Ok(spec.workload(config.device.logical_pages(), config.device.geometry.page_size)?)
    }
}
