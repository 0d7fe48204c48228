//! The streaming driver every format shares: reads lines, hands each to the format's parser,
//! applies the bad-line and timestamp-order policies, and rebases absolute clocks so the first
//! request arrives at 0.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use super::fields::LineError;
use super::options::{BadLinePolicy, Format, OutOfOrder, TraceOptions};
use super::source::{Lines, STDIN};
use super::{blkparse, detect, fiu, generic, mqsim, msr, spc, ssdsim};
use super::{Fingerprints, IoKind, Request, SkipCounter, Workload};
use crate::error::{Result, SimError};

/// One request as a line states it, before ordering and rebasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Raw {
    /// Nanoseconds on the format's clock.
    pub time: u64,
    pub kind: IoKind,
    pub offset: u64,
    pub len: u64,
    pub content: Option<Fingerprints>,
}

/// The parser of one format.
pub(crate) trait LineFormat: Send + 'static {
    /// Parses one non-empty line; `Ok(None)` when the line holds no request (another blkparse
    /// event, an ASU not selected, a header).
    fn parse(&mut self, line: &[u8], number: u64) -> Result<Option<Raw>, LineError>;

    /// Whether the times are absolute clock readings, rebased so the first request arrives at 0.
    fn rebase(&self) -> bool {
        false
    }
}

/// A request waiting in the sort window, ordered by (time, file order).
struct Pending {
    raw: Raw,
    line: u64,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.raw.time, self.line) == (other.raw.time, other.line)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.raw.time, self.line).cmp(&(other.raw.time, other.line))
    }
}

pub(crate) struct Reader<F> {
    lines: Lines,
    format: F,
    name: String,
    policy: BadLinePolicy,
    order: OutOfOrder,
    rebase: bool,
    skip_headers: bool,
    skipped: SkipCounter,
    passed_over: SkipCounter,
    /// Clock reading of the first request released (rebased formats).
    base: Option<u64>,
    /// Clock reading of the last request released.
    last: Option<u64>,
    window: BinaryHeap<Reverse<Pending>>,
    eof: bool,
    done: bool,
}

impl<F: LineFormat> Reader<F> {
    pub(crate) fn new(
        lines: Lines,
        name: &str,
        format: F,
        options: &TraceOptions,
        which: Format,
        counters: &Counters,
    ) -> Result<Self> {
        Ok(Reader {
            lines,
            rebase: format.rebase(),
            format,
            name: name.to_string(),
            policy: options.on_bad_line,
            order: options.out_of_order_for(which),
            skip_headers: which != Format::Generic,
            skipped: counters.skipped.clone(),
            passed_over: counters.passed_over.clone(),
            base: None,
            last: None,
            window: BinaryHeap::new(),
            eof: false,
            done: false,
        })
    }

    fn release(&mut self, raw: Raw, line: u64) -> Request {
        let base = *self.base.get_or_insert(if self.rebase { raw.time } else { 0 });
        self.last = Some(raw.time);
        Request {
            arrival_ns: raw.time - base,
            kind: raw.kind,
            offset_bytes: raw.offset,
            len_bytes: raw.len,
            line,
            content: raw.content,
        }
    }

    /// Shown time of a clock reading: relative to the first request on rebased clocks.
    fn shown(&self, t: u64) -> String {
        format!("{} ns", t.saturating_sub(self.base.unwrap_or(0)))
    }

    /// Applies the order policy; `Ok(None)` when the request went into the sort window.
    fn order(&mut self, mut raw: Raw, line: u64) -> Result<Option<Request>, LineError> {
        let last = self.last.unwrap_or(0);
        let backwards = self.last.is_some() && raw.time < last;
        match self.order {
            OutOfOrder::Error if backwards => Err(LineError::Line(format!(
                "timestamp goes backwards: {} is earlier than the previous request's {} (use --out-of-order sort or keep)",
                self.shown(raw.time),
                self.shown(last)
            ))),
            OutOfOrder::Error => Ok(Some(self.release(raw, line))),
            OutOfOrder::Keep => {
                raw.time = raw.time.max(last);
                Ok(Some(self.release(raw, line)))
            }
            OutOfOrder::Sort { window } if backwards => Err(LineError::Line(format!(
                "timestamp {} is earlier than a request already released by the sort window of {window} (use a larger --out-of-order sort:N, or keep)",
                self.shown(raw.time)
            ))),
            OutOfOrder::Sort { .. } => {
                self.window.push(Reverse(Pending { raw, line }));
                Ok(None)
            }
        }
    }

    fn next_request(&mut self) -> Result<Option<Request>> {
        loop {
            if let OutOfOrder::Sort { window } = self.order {
                if self.window.len() >= window || (self.eof && !self.window.is_empty()) {
                    let Reverse(p) = self.window.pop().expect("window is not empty");
                    return Ok(Some(self.release(p.raw, p.line)));
                }
            }
            if self.eof {
                return Ok(None);
            }
            let Some((number, line)) = self.lines.next_line()? else {
                self.eof = true;
                continue;
            };
            let text = line.trim_ascii_start();
            if text.is_empty() || text[0] == b'#' {
                continue;
            }
            // An unreadable first line that starts with a letter is a header (`Timestamp,...`).
            let header = self.skip_headers && number == 1 && text[0].is_ascii_alphabetic();
            let parsed = match self.format.parse(line, number) {
                Ok(Some(raw)) if raw.offset.checked_add(raw.len).is_none() => Err(LineError::Line(format!(
                    "the request ends beyond 2^64 bytes (offset {} + size {})",
                    raw.offset, raw.len
                ))),
                Ok(Some(raw)) => self.order(raw, number),
                Ok(None) => {
                    self.passed_over.add();
                    continue;
                }
                Err(_) if header => {
                    self.passed_over.add();
                    continue;
                }
                Err(e) => Err(e),
            };
            match parsed {
                Ok(Some(request)) => return Ok(Some(request)),
                Ok(None) => continue,
                Err(_) if self.policy == BadLinePolicy::Skip => self.skipped.add(),
                Err(e) => return Err(SimError::input(format!("{}:{number}", self.name), e.to_string())),
            }
        }
    }
}

impl<F: LineFormat> Iterator for Reader<F> {
    type Item = Result<Request>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_request().transpose();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}

/// The counters a reader keeps as it reads.
#[derive(Default)]
pub(crate) struct Counters {
    skipped: SkipCounter,
    passed_over: SkipCounter,
}

/// The requests of a trace in a known format, read from `lines` (the trace at `path`).
pub(crate) fn requests(
    lines: Lines,
    path: &Path,
    name: &str,
    format: Format,
    options: &TraceOptions,
    counters: &Counters,
) -> Result<Box<dyn Iterator<Item = Result<Request>> + Send>> {
    Ok(match format {
        Format::Msr => Box::new(Reader::new(lines, name, msr::Msr, options, format, counters)?),
        Format::Spc => {
            let spc = spc::Spc::for_file(path, name, options.asu)?;
            Box::new(Reader::new(lines, name, spc, options, format, counters)?)
        }
        Format::Blkparse => {
            let blkparse = blkparse::Blkparse::new(&options.events);
            Box::new(Reader::new(lines, name, blkparse, options, format, counters)?)
        }
        Format::Fiu => Box::new(Reader::new(lines, name, fiu::Fiu, options, format, counters)?),
        Format::Ssdsim => Box::new(Reader::new(lines, name, ssdsim::Ssdsim, options, format, counters)?),
        Format::Disksim => Box::new(Reader::new(lines, name, ssdsim::Disksim, options, format, counters)?),
        Format::Heimdall => Box::new(Reader::new(lines, name, ssdsim::Heimdall, options, format, counters)?),
        Format::Mqsim => Box::new(Reader::new(lines, name, mqsim::Mqsim, options, format, counters)?),
        Format::Generic => {
            let spec = options.generic.clone().ok_or_else(|| {
                SimError::config("trace.columns", "the generic format needs a column mapping (--columns)")
            })?;
            Box::new(Reader::new(lines, name, generic::Generic::new(spec), options, format, counters)?)
        }
    })
}

/// Opens a trace (a file, a pipe, or standard input as `-`), named `name` in results and
/// errors, detecting its format from its first lines unless given; the stream is read once.
pub(crate) fn open(path: &Path, name: &str, options: &TraceOptions) -> Result<Workload> {
    options.validate()?;
    let lines = Lines::open_as(path, name)?;
    open_lines(lines, path, name, options)
}

/// [`open`] on a byte stream with no file behind it (`path` is only its name: a reader that
/// needs a second pass, SPC's ASU layout, refuses it).
pub(crate) fn open_reader(
    reader: Box<dyn std::io::Read + Send>,
    name: &str,
    options: &TraceOptions,
) -> Result<Workload> {
    options.validate()?;
    let lines = Lines::of_reader(reader, name)?;
    open_lines(lines, Path::new(STDIN), name, options)
}

fn open_lines(lines: Lines, path: &Path, name: &str, options: &TraceOptions) -> Result<Workload> {
    let (format, detected, lines) = match options.format {
        Some(f) => (f, None, lines),
        None if options.generic.is_some() => (Format::Generic, None, lines),
        None => {
            let (format, why, lines) = detect::detect_stream(lines, name)?;
            (format, Some(why), lines)
        }
    };
    let counters = Counters::default();
    let requests = super::pipeline::pipelined(requests(lines, path, name, format, options, &counters)?);
    let name = name.to_string();
    let description = serde_json::json!({
        "trace": name,
        "format": format,
        "detected": detected,
        "on_bad_line": options.on_bad_line,
        "out_of_order": options.out_of_order_for(format),
        "asu": if format == Format::Spc { serde_json::to_value(options.asu).ok() } else { None },
        "events": if format == Format::Blkparse { Some(&options.events) } else { None },
        "columns": options.generic,
    });
    let Counters { skipped, passed_over } = counters;
    Ok(Workload { name, description, requests, skipped, passed_over, closed_loop: None })
}
