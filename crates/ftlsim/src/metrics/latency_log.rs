//! The per-request latency log (`ftlsim run --latency-log FILE`): one CSV row per served host
//! request, in simulated nanoseconds on the timeline the report's response times use (arrival
//! times after `host.time_scale`). Compressed when the file name ends in `.gz`, `.bz2`, `.xz` or
//! `.zst`.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::Result;
use crate::host::PageRequest;
use crate::timing::Served;
use crate::workload::sink::CompressedWriter;
use crate::workload::IoKind;

/// The log's first line.
pub const HEADER: &str = "request,arrival_ns,start_ns,finish_ns,response_ns,op,first_lpn,pages,bytes\n";

pub struct LatencyLog {
    file: CompressedWriter,
    line: String,
}

impl LatencyLog {
    pub fn create(path: &Path) -> Result<LatencyLog> {
        let mut file = CompressedWriter::create(path)?;
        file.write_all(HEADER.as_bytes())?;
        Ok(LatencyLog { file, line: String::with_capacity(96) })
    }

    /// Logs request number `index` (counted from 0), which touched `bytes` of its pages.
    pub fn record(&mut self, index: u64, req: &PageRequest, served: Served, bytes: u64) -> Result<()> {
        let op = match req.kind {
            IoKind::Read => "read",
            IoKind::Write => "write",
            IoKind::Trim => "trim",
        };
        self.line.clear();
        let _ = writeln!(
            self.line,
            "{index},{},{},{},{},{op},{},{},{bytes}",
            req.arrival,
            served.start,
            served.finish,
            served.finish - req.arrival,
            req.first,
            req.pages,
        );
        self.file.write_all(self.line.as_bytes())
    }

    /// Completes the file (and its compressed stream).
    pub fn finish(self) -> Result<()> {
        self.file.finish()
    }
}
