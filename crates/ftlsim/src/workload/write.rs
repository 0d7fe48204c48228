//! Writing a request stream as MSR CSV, SPC or MQSim ASCII, compressed when the file name ends
//! in `.gz`, `.bz2`, `.xz` or `.zst`.
//!
//! Precision: MSR times are 100 ns ticks (an arrival is rounded to the nearest tick) counted
//! from a fixed 2007 epoch, and readers rebase MSR times to the first request; SPC times are
//! written to the nanosecond; SPC and MQSim addresses, and MQSim sizes, are in 512-byte sectors,
//! so a request not aligned to them is refused rather than rounded. None of the three formats
//! has a trim.

use std::path::Path;

use super::options::Format;
use super::sink::CompressedWriter;
use super::{IoKind, Request};
use crate::error::{Result, SimError};

/// 2007-02-22 00:00 UTC in 100 ns ticks since 1601, about where the MSR Cambridge traces start.
pub const MSR_EPOCH_TICKS: u64 = 128_165_760_000_000_000;

/// Writes requests one line each, in a writable [`Format`].
pub struct TraceWriter {
    sink: CompressedWriter,
    format: Format,
}

impl TraceWriter {
    pub fn create(path: &Path, format: Format) -> Result<TraceWriter> {
        if !format.writable() {
            let name = path.display().to_string();
            return Err(SimError::input(name, format!("cannot write the {format} format (writable: msr, spc, mqsim)")));
        }
        Ok(TraceWriter { sink: CompressedWriter::create(path)?, format })
    }

    pub fn write(&mut self, r: &Request) -> Result<()> {
        let line = format_line(self.format, r)
            .map_err(|m| SimError::input(self.sink.name(), format!("request from line {}: {m}", r.line)))?;
        self.sink.write_all(line.as_bytes())
    }

    /// Flushes and completes the compressed stream.
    pub fn finish(self) -> Result<()> {
        self.sink.finish()
    }
}

fn sectors(format: Format, what: &str, bytes: u64) -> Result<u64, String> {
    if bytes.is_multiple_of(512) {
        Ok(bytes / 512)
    } else {
        Err(format!("{what} of {bytes} bytes is not a whole number of 512-byte sectors, which {format} requires"))
    }
}

/// One request as a line of `format`, with its newline.
pub fn format_line(format: Format, r: &Request) -> Result<String, String> {
    let read = match r.kind {
        IoKind::Read => true,
        IoKind::Write => false,
        IoKind::Trim => return Err(format!("the {format} format has no trim requests")),
    };
    Ok(match format {
        Format::Msr => {
            let ticks = MSR_EPOCH_TICKS + (r.arrival_ns + 50) / 100;
            format!("{ticks},ftlsim,0,{},{},{},0\n", if read { "Read" } else { "Write" }, r.offset_bytes, r.len_bytes)
        }
        Format::Spc => {
            let lba = sectors(format, "offset", r.offset_bytes)?;
            let mut fraction = format!("{:09}", r.arrival_ns % 1_000_000_000);
            while fraction.len() > 6 && fraction.ends_with('0') {
                fraction.pop();
            }
            format!(
                "0,{lba},{},{},{}.{fraction}\n",
                r.len_bytes,
                if read { 'r' } else { 'w' },
                r.arrival_ns / 1_000_000_000
            )
        }
        Format::Mqsim => {
            let lba = sectors(format, "offset", r.offset_bytes)?;
            let size = sectors(format, "size", r.len_bytes)?;
            format!("{} 0 {lba} {size} {}\n", r.arrival_ns, if read { 1 } else { 0 })
        }
        other => return Err(format!("cannot write the {other} format")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_each_format() {
        let r = Request::new(1_500_000_100, IoKind::Write, 1024, 4096, 1);
        assert_eq!(
            format_line(Format::Msr, &r).unwrap(),
            format!("{},ftlsim,0,Write,1024,4096,0\n", MSR_EPOCH_TICKS + 15_000_001)
        );
        assert_eq!(format_line(Format::Spc, &r).unwrap(), "0,2,4096,w,1.5000001\n");
        assert_eq!(format_line(Format::Mqsim, &r).unwrap(), "1500000100 0 2 8 0\n");
        let zero = Request::new(0, IoKind::Read, 0, 512, 1);
        assert_eq!(format_line(Format::Spc, &zero).unwrap(), "0,0,512,r,0.000000\n");
    }

    #[test]
    fn unaligned_and_trim_are_refused() {
        let odd = Request::new(0, IoKind::Read, 100, 512, 1);
        assert!(format_line(Format::Mqsim, &odd).unwrap_err().contains("512-byte sectors"));
        assert!(format_line(Format::Msr, &Request::new(0, IoKind::Trim, 0, 512, 1)).unwrap_err().contains("trim"));
    }
}
