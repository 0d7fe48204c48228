//! Format detection from the first lines of a file: every reader parses a sample, the one that
//! reads the most lines wins, and a tie between formats that mean different things is reported
//! with the candidates rather than guessed.

use std::path::Path;

use super::options::Format;
use super::reader::LineFormat;
use super::source::Lines;
use super::{blkparse, fiu, mqsim, msr, spc, ssdsim};
use crate::error::{Result, SimError};

/// Lines sampled.
const SAMPLE: usize = 64;

pub(crate) fn detect_file(path: &Path) -> Result<Format> {
    detect_file_explained(path).map(|(format, _)| format)
}

/// [`detect_file`], with why: how many of the sampled lines the chosen reader read.
pub(crate) fn detect_file_explained(path: &Path) -> Result<(Format, String)> {
    detect_stream(Lines::open(path)?, &path.display().to_string()).map(|(format, why, _)| (format, why))
}

/// Detects the format of a stream from its first lines, and gives back lines that read the
/// stream from the start (so a pipe or standard input is read once).
pub(crate) fn detect_stream(lines: Lines, name: &str) -> Result<(Format, String, Lines)> {
    let (sample, lines) = lines.sample(SAMPLE)?;
    let format = detect_lines(&sample).map_err(|message| SimError::input(name, message))?;
    let why = format!("{} of the first {} lines read as {format}", accepted(format, &sample), sample.len());
    Ok((format, why, lines))
}

/// How many sampled lines each format reads as a request.
fn accepted(format: Format, lines: &[Vec<u8>]) -> usize {
    let mut parser: Box<dyn LineFormat> = match format {
        Format::Msr => Box::new(msr::Msr),
        Format::Spc => Box::new(spc::Spc::plain()),
        Format::Blkparse => Box::new(blkparse::Blkparse::new("ABCDFGIMPQSTUX")),
        Format::Fiu => Box::new(fiu::Fiu),
        Format::Ssdsim => Box::new(ssdsim::Ssdsim),
        Format::Disksim => Box::new(ssdsim::Disksim),
        Format::Heimdall => Box::new(ssdsim::Heimdall),
        Format::Mqsim => Box::new(mqsim::Mqsim),
        Format::Generic => return 0,
    };
    lines
        .iter()
        .enumerate()
        .filter(|(i, line)| {
            // DiskSim and Heimdall write their millisecond times with a decimal point; integer
            // times are nanoseconds (SSDSim, MQSim). Of the two, a line in bytes is Heimdall's.
            let decimal_time =
                || line.trim_ascii_start().iter().take_while(|b| !b.is_ascii_whitespace()).any(|b| *b == b'.');
            let plausible = match format {
                Format::Disksim => decimal_time() && !ssdsim::states_bytes(line),
                Format::Heimdall => decimal_time() && ssdsim::states_bytes(line),
                _ => true,
            };
            plausible && matches!(parser.parse(line, *i as u64 + 1), Ok(Some(_)))
        })
        .count()
}

/// Formats that read the same lines the same way: the first is chosen.
fn equivalent(a: Format, b: Format) -> bool {
    matches!((a, b), (Format::Mqsim, Format::Ssdsim) | (Format::Ssdsim, Format::Mqsim))
}

pub(crate) fn detect_lines(lines: &[Vec<u8>]) -> Result<Format, String> {
    let known = || Format::ALL.map(Format::name).join(", ");
    if lines.is_empty() {
        return Err(format!("cannot detect the trace format of an empty file; give --format ({})", known()));
    }
    let mut scores: Vec<(Format, usize)> =
        Format::ALL.into_iter().map(|f| (f, accepted(f, lines))).filter(|(_, n)| *n > 0).collect();
    // Most lines read first; ties keep the order of Format::ALL (MQSim before SSDSim).
    scores.sort_by_key(|(f, n)| (std::cmp::Reverse(*n), Format::ALL.iter().position(|x| x == f)));
    let Some(&(best, n)) = scores.first() else {
        let first = String::from_utf8_lossy(&lines[0]);
        let first: String = first.chars().take(80).collect();
        return Err(format!(
            "cannot detect the trace format: no reader understands its first lines (first: \"{first}\"); give --format ({}) or --columns for the generic reader",
            known()
        ));
    };
    // SSDSim's MD5 field makes its lines unreadable as MQSim; with it present, SSDSim reads more.
    let tied: Vec<_> = scores.iter().filter(|(f, m)| *m == n && *f != best && !equivalent(*f, best)).collect();
    if !tied.is_empty() {
        let names: Vec<String> = std::iter::once(&(best, n))
            .chain(tied)
            .map(|(f, m)| format!("{f} ({m} of {} lines)", lines.len()))
            .collect();
        return Err(format!(
            "the trace format is ambiguous: the first lines read as {}; give --format",
            names.join(" or ")
        ));
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.lines().map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn each_format_is_recognised() {
        let cases = [
            ("128166625932151588,hm,1,Write,371077120,49152,3126", Format::Msr),
            ("0,303567,3584,w,0.000000\n1,1,512,R,0.5", Format::Spc),
            ("  8,16   3        9     0.000032064  4528  D   R 584808 + 936 [java]\nCPU0 (8,16):", Format::Blkparse),
            ("89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221", Format::Fiu),
            ("0 0 160806224 1 0 bf619eac0cdf3f68d496ea9344137e8b", Format::Ssdsim),
            ("938513000 4 264719034 16 0", Format::Mqsim),
            ("0.125000 0 1024 8 1", Format::Disksim),
            ("0.000 0 200626176 4096 0\n223.412 0 3159347200 36864 1\n1010.922 0 1417940992 1536 0", Format::Heimdall),
        ];
        for (text, format) in cases {
            assert_eq!(detect_lines(&lines(text)), Ok(format), "{text}");
        }
    }

    #[test]
    fn unknown_and_ambiguous_content_is_explained() {
        let none = detect_lines(&lines("hello world")).unwrap_err();
        assert!(none.contains("hello world") && none.contains("--format"), "{none}");
        let mixed =
            detect_lines(&lines("128166625932151588,hm,1,Write,371077120,49152,3126\n0,303567,3584,w,0.000000"))
                .unwrap_err();
        assert!(
            mixed.contains("ambiguous") && mixed.contains("msr (1 of 2 lines)") && mixed.contains("spc (1 of 2 lines)"),
            "{mixed}"
        );
    }
}
