//! Where the workload of `run` and `compare` comes from: a trace file, a synthetic generator
//! spec or paper-trace stand-in, or the embedded default synthetic stream when neither is given.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ftlsim::workload::{
    self, AsuLayout, BadLinePolicy, Format, GenericSpec, OutOfOrder, TraceOptions, Workload, WorkloadChoice,
};
use ftlsim::Config;

/// How a trace file is read (shared by `run`, `compare` and the `trace` tools).
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// Trace format; detected from the first lines when absent (see `ftlsim list formats`).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// What a malformed line does: stop with its position, or skip it (the count is reported).
    #[arg(long, value_name = "error|skip", default_value = "error")]
    pub on_bad_line: BadLinePolicy,
    /// Timestamps going backwards: error, keep file order, or sort within a window of N
    /// requests (default: sort:4096 for blkparse, error otherwise).
    #[arg(long, value_name = "error|keep|sort[:N]")]
    pub out_of_order: Option<OutOfOrder>,
    /// SPC files: lay the ASUs out one after another (concat) or keep only ASU N.
    #[arg(long, value_name = "concat|N", default_value = "concat")]
    pub asu: AsuLayout,
    /// blkparse: the action letters taken as requests (D dispatch, Q queue, ...).
    #[arg(long, value_name = "LETTERS", default_value = "D")]
    pub events: String,
    /// Generic reader column mapping, e.g. delim=ws,skip=1,time=1:us,op=2,offset=3:sector,size=4:B
    /// (implies --format generic).
    #[arg(long, value_name = "MAPPING")]
    pub columns: Option<GenericSpec>,
}

impl ReadArgs {
    pub fn options(&self) -> TraceOptions {
        TraceOptions {
            format: self.format,
            on_bad_line: self.on_bad_line,
            out_of_order: self.out_of_order,
            asu: self.asu,
            events: self.events.clone(),
            generic: self.columns.clone(),
        }
    }

    /// Opens a trace file, a pipe or standard input (`-`). A stream is copied to a temporary
    /// file first (SPC's ASU layout reads a trace twice); the copy is removed once open (the
    /// open readers keep it).
    pub fn open(&self, path: &std::path::Path) -> Result<Workload> {
        let mut readable = path.to_path_buf();
        let _copy = crate::spool::spool(&mut readable)?;
        Ok(workload::open_as(&readable, &path.display().to_string(), &self.options())?)
    }
}

#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    /// Trace file to replay (.gz, .bz2, .xz, .zst read transparently); without it, the embedded
    /// synthetic OLTP-like stream runs.
    #[arg(long, value_name = "FILE", conflicts_with = "synthetic")]
    pub trace: Option<PathBuf>,

    /// Synthetic workload: a stand-in preset for a paper's trace (`ftlsim list workloads`) or a
    /// generator spec, e.g. p000-hm0,scale=0.01 or requests=1e5,read=0.7,addr=zipf:0.9,size=4k.
    #[arg(long, value_name = "PRESET_OR_SPEC")]
    pub synthetic: Option<String>,

    /// Requests of the synthetic stream (default: 200000 for the embedded stream, the preset's
    /// count for --synthetic).
    #[arg(long)]
    pub requests: Option<u64>,

    #[command(flatten)]
    pub read: ReadArgs,

    /// What results and errors call the trace, when `trace` is a copy of a stream (`-`).
    #[arg(skip)]
    pub trace_name: Option<String>,
}

impl TraceArgs {
    /// The library's description of this choice.
    pub fn choice(&self) -> WorkloadChoice {
        WorkloadChoice {
            trace: self.trace.clone(),
            trace_name: self.trace_name.clone(),
            options: self.read.options(),
            synthetic: self.synthetic.clone(),
            requests: self.requests,
        }
    }

    /// The number of requests when the workload is synthetic (known before it runs).
    pub fn synthetic_requests(&self, config: &Config) -> Result<Option<u64>> {
        Ok(self.choice().synthetic_requests(config)?)
    }

    /// Opens the workload afresh (each FTL of a comparison replays it from the start).
    pub fn open(&self, config: &Config) -> Result<Workload> {
        Ok(self.choice().open(config)?)
    }
}
