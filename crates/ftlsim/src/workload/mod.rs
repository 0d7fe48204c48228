//! Where requests come from: trace readers and synthetic generators. Every source streams
//! [`Request`]s; none loads a trace whole.
//!
//! [`open`] reads a trace file in any supported [`Format`] (detected from its content when not
//! given), transparently decompressing `.gz`, `.bz2`, `.xz` and `.zst`. [`generator`] makes
//! deterministic synthetic streams and [`presets`] names the ones that stand in for the papers'
//! traces. [`write`] writes a stream back in MSR, SPC or MQSim form and [`stats`] summarises one.

mod blkparse;
mod choice;
mod detect;
mod fields;
mod fiu;
mod generic;
mod mqsim;
mod msr;
mod reader;
mod source;
mod spc;
mod ssdsim;

pub mod fingerprint;
pub mod generator;
pub mod locality;
pub mod options;
mod pipeline;
pub mod presets;
pub mod sink;
pub mod stats;
pub mod synthetic;
pub mod working_sets;
pub mod write;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::error::Result;

pub use choice::WorkloadChoice;
pub use fingerprint::Fingerprints;
pub use options::{AsuLayout, BadLinePolicy, Format, GenericSpec, OutOfOrder, TraceOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IoKind {
    Read,
    Write,
    Trim,
}

/// One host request as a trace or generator states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Arrival time in nanoseconds since the start of the trace.
    pub arrival_ns: u64,
    pub kind: IoKind,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Line (or record) number in the source, for error messages.
    pub line: u64,
    /// Content fingerprints when the trace records content (FIU and SSDSim MD5 fields), else
    /// `None`. Up to 8 fingerprints are stored inline, so reading them allocates only for large
    /// requests.
    pub content: Option<Fingerprints>,
}

impl Request {
    /// A request without content fingerprints.
    pub fn new(arrival_ns: u64, kind: IoKind, offset_bytes: u64, len_bytes: u64, line: u64) -> Self {
        Request { arrival_ns, kind, offset_bytes, len_bytes, line, content: None }
    }
}

/// Counts the lines a reader skipped (`--on-bad-line skip`); shared between the reader and
/// whoever reports the run.
#[derive(Debug, Clone, Default)]
pub struct SkipCounter(Arc<AtomicU64>);

impl SkipCounter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
    pub(crate) fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A named stream of requests.
pub struct Workload {
    /// File path or generator name, used in error locations.
    pub name: String,
    /// What produced the stream (format, generator parameters), recorded in results.
    pub description: serde_json::Value,
    pub requests: Box<dyn Iterator<Item = Result<Request>> + Send>,
    /// Malformed lines skipped so far; final once `requests` is exhausted.
    pub skipped: SkipCounter,
    /// Lines read so far that hold no request (other blkparse events, ASUs not selected, a
    /// header); final once `requests` is exhausted.
    pub passed_over: SkipCounter,
    /// A closed-loop source: this many requests are kept outstanding, each issued when an
    /// earlier one completes (its arrival is that moment, set by the simulation); `None` for
    /// every open-loop source.
    pub closed_loop: Option<u32>,
}

impl Workload {
    pub fn new(
        name: impl Into<String>,
        description: serde_json::Value,
        requests: impl Iterator<Item = Result<Request>> + Send + 'static,
    ) -> Self {
        Workload {
            name: name.into(),
            description,
            requests: Box::new(requests),
            skipped: SkipCounter::default(),
            passed_over: SkipCounter::default(),
            closed_loop: None,
        }
    }
}

/// Requests in columns, for bindings that hand out arrays (numpy) a chunk at a time. `kind` is
/// 0 for a read, 1 for a write, 2 for a trim; content fingerprints are not included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    pub arrival_ns: Vec<u64>,
    pub kind: Vec<u8>,
    pub offset_bytes: Vec<u64>,
    pub len_bytes: Vec<u64>,
    pub line: Vec<u64>,
}

impl Workload {
    /// Replaces `out` with the next (at most) `max` requests and returns how many there are:
    /// 0 at the end of the stream. The columns keep their capacity from chunk to chunk.
    pub fn next_chunk(&mut self, max: usize, out: &mut Columns) -> Result<usize> {
        out.arrival_ns.clear();
        out.kind.clear();
        out.offset_bytes.clear();
        out.len_bytes.clear();
        out.line.clear();
        for request in self.requests.by_ref().take(max) {
            let r = request?;
            out.arrival_ns.push(r.arrival_ns);
            out.kind.push(match r.kind {
                IoKind::Read => 0,
                IoKind::Write => 1,
                IoKind::Trim => 2,
            });
            out.offset_bytes.push(r.offset_bytes);
            out.len_bytes.push(r.len_bytes);
            out.line.push(r.line);
        }
        Ok(out.line.len())
    }
}

/// Opens a trace file as a streaming workload (the entry point for the Python binding too).
/// The format comes from `options.format` or, when absent, from the file's first lines.
pub fn open(path: impl AsRef<Path>, options: &TraceOptions) -> Result<Workload> {
    let path = path.as_ref();
    reader::open(path, &path.display().to_string(), options)
}

/// [`open`] on any byte stream (compressed or not), named `name` in results and error locations.
/// A stream is read once: SPC's `--asu concat`, which reads a trace twice, is refused.
pub fn open_reader(
    reader: impl std::io::Read + Send + 'static,
    name: &str,
    options: &TraceOptions,
) -> Result<Workload> {
    reader::open_reader(Box::new(reader), name, options)
}

/// [`open`], the trace named `name` in results and error locations (a copy of standard input
/// keeps the name `-`).
pub fn open_as(path: impl AsRef<Path>, name: &str, options: &TraceOptions) -> Result<Workload> {
    reader::open(path.as_ref(), name, options)
}

/// Detects the format of a trace file from its first lines.
pub fn detect_format(path: impl AsRef<Path>) -> Result<Format> {
    detect::detect_file(path.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_stream_in_order() {
        let requests = (1..=5)
            .map(|i| Ok(Request::new(i * 10, if i % 2 == 0 { IoKind::Read } else { IoKind::Write }, i * 512, 512, i)));
        let mut w = Workload::new("t", serde_json::Value::Null, requests);
        let mut c = Columns::default();
        assert_eq!(w.next_chunk(3, &mut c).unwrap(), 3);
        assert_eq!((c.arrival_ns.as_slice(), c.kind.as_slice()), (&[10, 20, 30][..], &[1, 0, 1][..]));
        assert_eq!(w.next_chunk(3, &mut c).unwrap(), 2);
        assert_eq!(c.line, vec![4, 5]);
        assert_eq!(w.next_chunk(3, &mut c).unwrap(), 0);
    }
}
