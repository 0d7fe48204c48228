//! Where requests come from: trace readers and synthetic generators. Every source streams
//! [`Request`]s; none loads a trace whole.

pub mod synthetic;

use serde::Serialize;

use crate::error::Result;

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
}

/// A named stream of requests.
pub struct Workload {
    /// File path or generator name, used in error locations.
    pub name: String,
    /// What produced the stream (format, generator parameters), recorded in results.
    pub description: serde_json::Value,
    pub requests: Box<dyn Iterator<Item = Result<Request>> + Send>,
}
