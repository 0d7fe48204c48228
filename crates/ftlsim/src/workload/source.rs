//! Opening a trace: a file, a pipe, or standard input (`-`), with transparent decompression
//! (chosen by magic bytes, checked against the extension), and a line reader that reuses one
//! buffer for the whole stream. Nothing seeks, so a pipe reads like a file.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::error::{Result, SimError};

const BUFFER: usize = 256 * 1024;
/// Longest line read: a binary file without newlines must not fill the memory.
const MAX_LINE: u64 = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    pub(crate) fn from_extension(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("gz" | "gzip") => Compression::Gzip,
            Some("bz2") => Compression::Bzip2,
            Some("xz") => Compression::Xz,
            Some("zst" | "zstd") => Compression::Zstd,
            _ => Compression::None,
        }
    }
}

fn io_error(name: &str, e: std::io::Error) -> SimError {
    SimError::input(name, format!("cannot read: {e}"))
}

/// The path that names standard input.
pub const STDIN: &str = "-";

/// Whether `path` names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Whether the trace at `path` can be read a second time (a regular file; not a pipe or
/// standard input).
pub(crate) fn can_read_twice(path: &Path) -> bool {
    !is_stdin(path) && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The decompressed bytes of a file, a pipe or standard input, named `name` in errors.
fn open_bytes_as(path: &Path, name: &str) -> Result<Box<dyn BufRead + Send>> {
    let raw: Box<dyn Read + Send> = if is_stdin(path) {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).map_err(|e| io_error(name, e))?)
    };
    decompressed(raw, name, Compression::from_extension(path))
}

/// The decompressed bytes of any byte stream; `named` is the compression its name states.
fn decompressed(mut raw: Box<dyn Read + Send>, name: &str, named: Compression) -> Result<Box<dyn BufRead + Send>> {
    // The magic bytes are read ahead and put back in front: a pipe cannot seek.
    let mut head = [0u8; 6];
    let mut got = 0;
    while got < head.len() {
        match raw.read(&mut head[got..]).map_err(|e| io_error(name, e))? {
            0 => break,
            n => got += n,
        }
    }
    let file = Cursor::new(head[..got].to_vec()).chain(raw);
    let compression = Compression::from_magic(&head[..got]);
    if named != Compression::None && named != compression {
        return Err(SimError::input(
            name,
            format!(
                "the file name says {named:?} compression but the content is {}",
                if compression == Compression::None {
                    "not compressed".to_string()
                } else {
                    format!("{compression:?}")
                }
            ),
        ));
    }
    let file = BufReader::with_capacity(BUFFER, file);
    Ok(match compression {
        Compression::None => Box::new(file),
        Compression::Gzip => Box::new(BufReader::with_capacity(BUFFER, flate2::bufread::MultiGzDecoder::new(file))),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(BUFFER, bzip2::bufread::MultiBzDecoder::new(file))),
        Compression::Xz => Box::new(BufReader::with_capacity(BUFFER, xz2::bufread::XzDecoder::new_multi_decoder(file))),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            BUFFER,
            zstd::stream::read::Decoder::with_buffer(file).map_err(|e| io_error(name, e))?,
        )),
    })
}

/// Lines of a file, without their terminators, numbered from 1.
pub(crate) struct Lines {
    inner: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: u64,
    name: String,
}

impl Lines {
    pub(crate) fn open(path: &Path) -> Result<Lines> {
        Lines::open_as(path, &path.display().to_string())
    }

    /// The lines of `path`, named `name` in error locations.
    pub(crate) fn open_as(path: &Path, name: &str) -> Result<Lines> {
        Ok(Lines::over(open_bytes_as(path, name)?, name.to_string()))
    }

    /// The lines of any byte stream (compressed or not), named `name` in error locations.
    pub(crate) fn of_reader(reader: Box<dyn Read + Send>, name: &str) -> Result<Lines> {
        Ok(Lines::over(decompressed(reader, name, Compression::None)?, name.to_string()))
    }

    fn over(inner: Box<dyn BufRead + Send>, name: String) -> Lines {
        Lines { inner, buf: Vec::with_capacity(512), line: 0, name }
    }

    /// Reads up to `count` non-empty, non-comment lines ahead and returns them with lines that
    /// read them again from the start: a stream is sampled (format detection) without being
    /// read twice.
    pub(crate) fn sample(mut self, count: usize) -> Result<(Vec<Vec<u8>>, Lines)> {
        let mut sample = Vec::new();
        let mut read = Vec::new();
        while sample.len() < count {
            let before = read.len();
            let n = (&mut self.inner)
                .take(MAX_LINE)
                .read_until(b'\n', &mut read)
                .map_err(|e| SimError::input(&self.name, format!("cannot read: {e}")))?;
            if n == 0 {
                break;
            }
            let mut line = &read[before..];
            line = line.strip_suffix(b"\n").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            if before == 0 {
                line = line.strip_prefix(&[0xef, 0xbb, 0xbf]).unwrap_or(line);
            }
            let text = line.trim_ascii();
            if !text.is_empty() && text[0] != b'#' {
                sample.push(line.to_vec());
            }
        }
        let inner: Box<dyn BufRead + Send> = Box::new(Cursor::new(read).chain(self.inner));
        Ok((sample, Lines::over(inner, self.name)))
    }

    /// The next line and its number.
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        self.buf.clear();
        let n = (&mut self.inner)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| SimError::input(format!("{}:{}", self.name, self.line + 1), format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if n as u64 == MAX_LINE && self.buf.last() != Some(&b'\n') {
            return Err(SimError::input(
                format!("{}:{}", self.name, self.line),
                format!("line longer than {} MiB: not a text trace", MAX_LINE >> 20),
            ));
        }
        let mut line = self.buf.as_slice();
        if let [rest @ .., b'\n'] = line {
            line = rest;
        }
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        if self.line == 1 {
            line = line.strip_prefix(&[0xef, 0xbb, 0xbf]).unwrap_or(line);
        }
        Ok(Some((self.line, line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out a few bytes at a time and cannot seek, like a pipe.
    struct Pipe(Vec<u8>, usize);

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(3).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    /// Sampling a stream (format detection) gives back lines that read it again from the start,
    /// line numbers included, without reading the stream twice.
    #[test]
    fn a_sampled_stream_is_read_again_from_the_start() {
        let text = b"\xef\xbb\xbf# comment\r\n1,2\n\n3,4\n5,6\n".to_vec();
        let lines = Lines::over(Box::new(BufReader::new(Pipe(text, 0))), "pipe".into());
        let (sample, mut lines) = lines.sample(2).unwrap();
        assert_eq!(sample, vec![b"1,2".to_vec(), b"3,4".to_vec()]);
        let mut all = Vec::new();
        while let Some((n, line)) = lines.next_line().unwrap() {
            all.push((n, line.to_vec()));
        }
        let expected: Vec<(u64, &[u8])> = vec![(1, b"# comment"), (2, b"1,2"), (3, b""), (4, b"3,4"), (5, b"5,6")];
        assert_eq!(all, expected.into_iter().map(|(n, l)| (n, l.to_vec())).collect::<Vec<_>>());
    }
}
