//! Trace readers under arbitrary input, shared by the cargo-fuzz target `trace_readers` and the
//! proptest smoke run in `cargo test`: whatever the bytes, every reader (and format detection)
//! either yields requests of positive length whose end does not overflow, or stops with an error
//! naming the trace and the line (or a configuration field); nothing panics, nothing hangs (a
//! request's size never turns into work, and a run of lines is bounded by the input).

use std::io::Write;

use crate::error::SimError;
use crate::workload::{self, AsuLayout, BadLinePolicy, Format, OutOfOrder, TraceOptions};

/// The name the fuzzed trace goes by: every error must carry it.
const NAME: &str = "fuzz.trace";

/// Values at and beyond the edges of every numeric field, and a few that are not numbers.
const VALUES: &[&str] = &[
    "0",
    "1",
    "7",
    "512",
    "4096",
    "65535",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "1e300",
    "0.5",
    "abc",
    "",
    "0x10",
];

/// Lines in `format`'s layout whose fields come from the bytes (each byte picks a value of
/// [`VALUES`] or an opcode), so the fuzzer explores the values readers must refuse or bound.
pub fn trace_text_from_bytes(format: Format, data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(6) {
        let v = |i: usize| VALUES[chunk.get(i).copied().unwrap_or(0) as usize % VALUES.len()];
        let pick =
            |i: usize, choices: &[&'static str]| choices[chunk.get(i).copied().unwrap_or(0) as usize % choices.len()];
        let line = match format {
            Format::Msr => format!("{},hm,1,{},{},{},{}", v(0), pick(1, &["Read", "Write", "Erase"]), v(2), v(3), v(4)),
            Format::Spc => format!("{},{},{},{},{}", v(0), v(1), v(2), pick(3, &["r", "W", "x"]), v(4)),
            Format::Blkparse => format!(
                "  8,0 {} {} {} {} {} {} {} + {} [p]",
                v(0),
                v(1),
                v(2),
                v(3),
                pick(4, &["D", "Q", "C", "m", "UT", "XY"]),
                pick(5, &["R", "W", "WS", "RA", "D", "FWS", "N"]),
                v(5),
                v(4)
            ),
            Format::Fiu => format!(
                "{} {} p {} {} {} 6 0 {}",
                v(0),
                v(1),
                v(2),
                v(3),
                pick(4, &["R", "W", "X"]),
                pick(5, &["d6c75ba46e82326fefa545b57a12e221", "zz"])
            ),
            Format::Ssdsim | Format::Mqsim => format!("{} 0 {} {} {}", v(0), v(2), v(3), pick(4, &["0", "1", "2"])),
            Format::Disksim | Format::Heimdall => {
                format!("{}.{} 0 {} {} {}", v(0), v(1), v(2), v(3), pick(4, &["0", "1", "3"]))
            }
            Format::Generic => format!("{} {} {} {}", v(0), pick(1, &["R", "W", "T"]), v(2), v(3)),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The column mapping the generic reader is fuzzed with (the layout of
/// [`trace_text_from_bytes`]).
const GENERIC_COLUMNS: &str = "delim=ws,time=1:us,op=2,offset=3:B,size=4:B,read=R,write=W,trim=T";

/// One fuzz case: byte 0 picks the format (0: detect), byte 1 the mode (bit 0: structured
/// lines, bit 1: skip bad lines, bits 2-3: order policy, bit 4: gzip the trace, bit 5: SPC's
/// ASUs laid out one after another, which a stream refuses, instead of ASU 0), the rest is the
/// content. `Err` is a finding.
pub fn fuzz_trace_bytes(data: &[u8]) -> std::result::Result<(), String> {
    let (choice, mode, rest) = match data {
        [a, b, rest @ ..] => (*a, *b, rest),
        _ => return Ok(()),
    };
    let format = match choice as usize % (Format::ALL.len() + 1) {
        0 => None,
        i => Some(Format::ALL[i - 1]),
    };
    let mut content = if mode & 1 == 1 {
        trace_text_from_bytes(format.unwrap_or(Format::Msr), rest).into_bytes()
    } else {
        rest.to_vec()
    };
    if mode & 16 != 0 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&content).map_err(|e| e.to_string())?;
        content = gz.finish().map_err(|e| e.to_string())?;
    }
    let options = TraceOptions {
        format,
        on_bad_line: if mode & 2 != 0 { BadLinePolicy::Skip } else { BadLinePolicy::Error },
        out_of_order: Some(match (mode >> 2) & 3 {
            0 => OutOfOrder::Error,
            1 => OutOfOrder::Keep,
            _ => OutOfOrder::Sort { window: 4 },
        }),
        generic: (format == Some(Format::Generic)).then(|| GENERIC_COLUMNS.parse().expect("a valid mapping")),
        asu: if mode & 32 != 0 { AsuLayout::Concat } else { AsuLayout::Only(0) },
        ..TraceOptions::default()
    };
    let workload = match workload::open_reader(std::io::Cursor::new(content), NAME, &options) {
        Ok(workload) => workload,
        Err(e) => return named(e),
    };
    for request in workload.requests {
        match request {
            Ok(r) if r.len_bytes == 0 => return Err(format!("a request of no bytes: {r:?}")),
            Ok(r) if r.offset_bytes.checked_add(r.len_bytes).is_none() => {
                return Err(format!("a request whose end overflows: {r:?}"))
            }
            Ok(_) => {}
            Err(e) => return named(e),
        }
    }
    Ok(())
}

/// An error must say where: the trace (and its line), or a configuration field.
fn named(e: SimError) -> std::result::Result<(), String> {
    match &e {
        SimError::Input { location, message } if location.starts_with(NAME) && !message.is_empty() => Ok(()),
        SimError::Config { field, message } if !field.is_empty() && !message.is_empty() => Ok(()),
        _ => Err(format!("an error that does not name the trace or a field: {e:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_lines_follow_each_layout() {
        let text = trace_text_from_bytes(Format::Msr, &[1, 1, 4, 5, 2, 0]);
        assert_eq!(text, "1,hm,1,Write,4096,65535,7\n");
        for format in Format::ALL {
            for data in [&[0u8; 12][..], &[9; 12], &[255; 7], b"hello world!"] {
                let mut case = vec![Format::ALL.iter().position(|f| *f == format).unwrap() as u8 + 1, 1];
                case.extend_from_slice(data);
                fuzz_trace_bytes(&case).unwrap_or_else(|e| panic!("{format}: {e}"));
                case[1] = 0b1_0011; // structured, skip bad lines, gzip
                fuzz_trace_bytes(&case).unwrap_or_else(|e| panic!("{format}: {e}"));
            }
        }
    }
}
