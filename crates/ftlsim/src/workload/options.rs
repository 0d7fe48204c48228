//! How a trace file is read: its format, what to do with bad lines and with timestamps that go
//! backwards, how SPC's ASUs share the address space, which blkparse events count, and the
//! column mapping of the generic reader. Every option parses from the string the CLI accepts.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::IoKind;
use crate::error::{Result, SimError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// MSR Cambridge CSV: `ticks,host,disk,Read|Write,offset_bytes,size_bytes,response_ticks`.
    Msr,
    /// UMass / SPC CSV: `ASU,LBA(sectors),size_bytes,r|w,seconds`.
    Spc,
    /// Linux `blkparse` default text output.
    Blkparse,
    /// FIU: `ts_ns pid process lba size R|W major minor md5`.
    Fiu,
    /// SSDSim ASCII: `time_ns device lba size op(1=read)` plus optional per-sector MD5s.
    Ssdsim,
    /// DiskSim ASCII: `time_ms device lba size flags(bit 0 = read)`.
    Disksim,
    /// MQSim ASCII: `arrival_ns device lba size type(0=write)`.
    Mqsim,
    /// The MSR-derived layout of the Heimdall collection: `time_ms device offset_bytes
    /// size_bytes op(1=read)`.
    Heimdall,
    /// Delimited columns mapped on the command line.
    Generic,
}

impl Format {
    pub const ALL: [Format; 9] = [
        Format::Msr,
        Format::Spc,
        Format::Blkparse,
        Format::Fiu,
        Format::Mqsim,
        Format::Ssdsim,
        Format::Disksim,
        Format::Heimdall,
        Format::Generic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Blkparse => "blkparse",
            Format::Fiu => "fiu",
            Format::Ssdsim => "ssdsim",
            Format::Disksim => "disksim",
            Format::Mqsim => "mqsim",
            Format::Heimdall => "heimdall",
            Format::Generic => "generic",
        }
    }

    /// The line layout, for `ftlsim list formats` and error messages.
    pub fn layout(self) -> &'static str {
        match self {
            Format::Msr => {
                "timestamp(100 ns ticks since 1601),host,disk,Read|Write,offset_bytes,size_bytes,response_ticks"
            }
            Format::Spc => "ASU,LBA(512 B sectors),size_bytes,r|w,timestamp_seconds",
            Format::Blkparse => {
                "maj,min cpu seq time_s pid action rwbs sector + sectors [process] (blkparse default output)"
            }
            Format::Fiu => "ts_ns pid process lba_sectors size_sectors R|W major minor md5",
            Format::Ssdsim => {
                "time_ns device lba_sectors size_sectors op(1=read,0=write) [md5 per sector, concatenated]"
            }
            Format::Disksim => "time_ms device lba_sectors size_sectors flags(bit 0: 1=read)",
            Format::Mqsim => "arrival_ns device lba_sectors size_sectors type(0=write,1=read)",
            Format::Heimdall => "time_ms device offset_bytes size_bytes op(1=read,0=write) (MSR cuts of Heimdall)",
            Format::Generic => "delimited columns mapped with --columns",
        }
    }

    /// Whether `trace convert` and `gen` can write it.
    pub fn writable(self) -> bool {
        matches!(self, Format::Msr | Format::Spc | Format::Mqsim)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        let alias = match s.as_str() {
            "msrc" | "msr-cambridge" => "msr",
            "umass" => "spc",
            "blktrace" => "blkparse",
            "csv" => "generic",
            other => other,
        };
        Format::ALL.into_iter().find(|f| f.name() == alias).ok_or_else(|| {
            format!("unknown trace format \"{s}\" (known: {})", Format::ALL.map(Format::name).join(", "))
        })
    }
}

/// What a malformed line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BadLinePolicy {
    /// Stop with `file:line: field N (name): expected ..., found "..."`.
    #[default]
    Error,
    /// Skip the line and count it.
    Skip,
}

impl FromStr for BadLinePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "error" => Ok(BadLinePolicy::Error),
            "skip" => Ok(BadLinePolicy::Skip),
            _ => Err(format!("expected error or skip, found \"{s}\"")),
        }
    }
}

/// What a timestamp earlier than the previous request's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutOfOrder {
    /// A positioned error.
    Error,
    /// Keep file order; the early request arrives with the previous one.
    Keep,
    /// Reorder within a window of this many requests; a request earlier than one already
    /// released is an error.
    Sort { window: usize },
}

/// The sort window when none is given: blkparse interleaves CPUs a few dozen events apart.
pub const DEFAULT_SORT_WINDOW: usize = 4096;

impl FromStr for OutOfOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "error" => Ok(OutOfOrder::Error),
            None if s == "keep" => Ok(OutOfOrder::Keep),
            None if s == "sort" => Ok(OutOfOrder::Sort { window: DEFAULT_SORT_WINDOW }),
            Some(("sort", n)) => match n.parse::<usize>() {
                Ok(window) if window > 0 => Ok(OutOfOrder::Sort { window }),
                _ => Err(format!("expected a positive sort window, found \"{n}\"")),
            },
            _ => Err(format!("expected error, keep, sort or sort:N, found \"{s}\"")),
        }
    }
}

/// How the ASUs of an SPC file share one address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AsuLayout {
    /// ASU i starts where ASU i-1 ends (its largest end address, rounded up to 1 MiB); a first
    /// pass over the file measures the ASUs.
    #[default]
    Concat,
    /// Keep only this ASU; the others are dropped (not counted as bad lines).
    Only(u32),
}

impl FromStr for AsuLayout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "concat" {
            return Ok(AsuLayout::Concat);
        }
        s.parse().map(AsuLayout::Only).map_err(|_| format!("expected concat or an ASU number, found \"{s}\""))
    }
}

/// Everything that says how a trace file is read.
#[derive(Debug, Clone, Serialize)]
pub struct TraceOptions {
    /// `None`: detect from the first lines.
    pub format: Option<Format>,
    pub on_bad_line: BadLinePolicy,
    /// `None`: the format's default (sort for blkparse, error for the others).
    pub out_of_order: Option<OutOfOrder>,
    pub asu: AsuLayout,
    /// blkparse action letters taken as requests (`D` dispatch, `Q` queue, ...).
    pub events: String,
    /// Column mapping of the generic reader.
    pub generic: Option<GenericSpec>,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            format: None,
            on_bad_line: BadLinePolicy::Error,
            out_of_order: None,
            asu: AsuLayout::Concat,
            events: "D".into(),
            generic: None,
        }
    }
}

impl TraceOptions {
    pub fn out_of_order_for(&self, format: Format) -> OutOfOrder {
        self.out_of_order.unwrap_or(match format {
            Format::Blkparse => OutOfOrder::Sort { window: DEFAULT_SORT_WINDOW },
            _ => OutOfOrder::Error,
        })
    }

    pub fn validate(&self) -> Result<()> {
        if self.events.is_empty() || !self.events.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(SimError::config(
                "trace.events",
                format!("expected blkparse action letters such as D or Q, found \"{}\"", self.events),
            ));
        }
        if self.format == Some(Format::Generic) && self.generic.is_none() {
            return Err(SimError::config("trace.columns", "the generic format needs a column mapping (--columns)"));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delimiter {
    Comma,
    /// Runs of spaces and tabs.
    Whitespace,
    Char(char),
}

/// One mapped column: its 1-based index and how many nanoseconds (time) or bytes (address,
/// size) one unit of it is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Column {
    pub index: usize,
    pub unit: u64,
}

/// The generic reader's column mapping, parsed from
/// `delim=comma,skip=1,time=1:us,op=2,offset=3:sector,size=4:B,read=R|r,write=W|w`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GenericSpec {
    pub delimiter: Delimiter,
    /// Header lines to skip.
    pub skip: u64,
    /// Without a time column every request arrives at 0.
    pub time: Option<Column>,
    pub op: usize,
    pub offset: Column,
    pub size: Column,
    /// Opcode values (compared case-insensitively) and what they mean.
    pub ops: Vec<(String, IoKind)>,
}

fn time_unit(s: &str) -> Option<u64> {
    Some(match s {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "ticks" => 100,
        _ => return None,
    })
}

fn size_unit(s: &str) -> Option<u64> {
    Some(match s.to_ascii_lowercase().as_str() {
        "b" | "bytes" => 1,
        "sector" | "sectors" => 512,
        "kib" | "kb" => 1024,
        "4kib" | "page" => 4096,
        _ => return None,
    })
}

impl FromStr for GenericSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut spec = GenericSpec {
            delimiter: Delimiter::Comma,
            skip: 0,
            time: None,
            op: 0,
            offset: Column { index: 0, unit: 1 },
            size: Column { index: 0, unit: 1 },
            ops: Vec::new(),
        };
        let column = |key: &str, v: &str, default_unit: u64, unit: fn(&str) -> Option<u64>| -> Result<Column, String> {
            let (index, u) = v.split_once(':').map_or((v, None), |(i, u)| (i, Some(u)));
            let index = index
                .parse::<usize>()
                .ok()
                .filter(|i| *i > 0)
                .ok_or_else(|| format!("{key}: expected a 1-based column number, found \"{index}\""))?;
            let unit = match u {
                None => default_unit,
                Some(u) => unit(u).ok_or_else(|| format!("{key}: unknown unit \"{u}\""))?,
            };
            Ok(Column { index, unit })
        };
        let mut custom_ops = false;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').ok_or_else(|| format!("expected key=value, found \"{item}\""))?;
            match key {
                "delim" => {
                    spec.delimiter = match value {
                        "comma" | "," => Delimiter::Comma,
                        "ws" | "whitespace" | "space" => Delimiter::Whitespace,
                        "tab" => Delimiter::Char('\t'),
                        v if v.len() == 1 && v.is_ascii() => Delimiter::Char(v.chars().next().unwrap_or(',')),
                        v => return Err(format!("delim: expected comma, ws, tab or one character, found \"{v}\"")),
                    }
                }
                "skip" => spec.skip = value.parse().map_err(|_| format!("skip: expected a line count, found \"{value}\""))?,
                "time" => spec.time = Some(column(key, value, 1, time_unit)?),
                "op" => spec.op = column(key, value, 1, |_| None)?.index,
                "offset" => spec.offset = column(key, value, 1, size_unit)?,
                "size" => spec.size = column(key, value, 1, size_unit)?,
                "read" | "write" | "trim" => {
                    let kind = match key {
                        "read" => IoKind::Read,
                        "write" => IoKind::Write,
                        _ => IoKind::Trim,
                    };
                    custom_ops = true;
                    spec.ops.extend(value.split('|').map(|v| (v.to_ascii_lowercase(), kind)));
                }
                other => return Err(format!("unknown column-mapping key \"{other}\" (known: delim, skip, time, op, offset, size, read, write, trim)")),
            }
        }
        for (name, index) in [("op", spec.op), ("offset", spec.offset.index), ("size", spec.size.index)] {
            if index == 0 {
                return Err(format!("the column mapping needs {name}=N"));
            }
        }
        if !custom_ops {
            for (v, kind) in [
                ("r", IoKind::Read),
                ("read", IoKind::Read),
                ("w", IoKind::Write),
                ("write", IoKind::Write),
                ("t", IoKind::Trim),
                ("trim", IoKind::Trim),
            ] {
                spec.ops.push((v.into(), kind));
            }
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_mapping_parses() {
        let g: GenericSpec = "delim=ws,skip=1,time=1:us,op=2,offset=3:sector,size=4".parse().unwrap();
        assert_eq!(g.delimiter, Delimiter::Whitespace);
        assert_eq!(g.time, Some(Column { index: 1, unit: 1000 }));
        assert_eq!(g.offset, Column { index: 3, unit: 512 });
        assert_eq!((g.op, g.size.unit, g.skip), (2, 1, 1));
        assert!(g.ops.contains(&("w".into(), IoKind::Write)));
        let custom: GenericSpec = "op=1,offset=2,size=3,read=1,write=0".parse().unwrap();
        assert_eq!(custom.ops, vec![("1".into(), IoKind::Read), ("0".into(), IoKind::Write)]);
    }

    #[test]
    fn column_mapping_errors_name_the_key() {
        assert!("op=2,offset=3".parse::<GenericSpec>().unwrap_err().contains("size=N"));
        assert!("op=x,offset=3,size=4".parse::<GenericSpec>().unwrap_err().starts_with("op:"));
        assert!("op=1,offset=3:furlong,size=4".parse::<GenericSpec>().unwrap_err().contains("furlong"));
    }

    #[test]
    fn policies_parse() {
        assert_eq!("sort:64".parse::<OutOfOrder>(), Ok(OutOfOrder::Sort { window: 64 }));
        assert!("sort:0".parse::<OutOfOrder>().is_err());
        assert_eq!("3".parse::<AsuLayout>(), Ok(AsuLayout::Only(3)));
        assert_eq!("UMass".parse::<Format>(), Ok(Format::Spc));
        assert!("nope".parse::<Format>().unwrap_err().contains("msr, spc, blkparse"));
    }
}
