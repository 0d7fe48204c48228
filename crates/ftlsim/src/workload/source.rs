//! Opening a trace file: transparent decompression (chosen by magic bytes, checked against the
//! extension) and a line reader that reuses one buffer for the whole file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
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

fn io_error(path: &Path, e: std::io::Error) -> SimError {
    SimError::input(path.display().to_string(), format!("cannot read: {e}"))
}

/// The decompressed bytes of a file.
pub(crate) fn open_bytes(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let mut file = File::open(path).map_err(|e| io_error(path, e))?;
    let mut head = [0u8; 6];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]).map_err(|e| io_error(path, e))? {
            0 => break,
            n => got += n,
        }
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| io_error(path, e))?;
    let compression = Compression::from_magic(&head[..got]);
    let named = Compression::from_extension(path);
    if named != Compression::None && named != compression {
        return Err(SimError::input(
            path.display().to_string(),
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
            zstd::stream::read::Decoder::with_buffer(file).map_err(|e| io_error(path, e))?,
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
        Ok(Lines { inner: open_bytes(path)?, buf: Vec::with_capacity(512), line: 0, name: path.display().to_string() })
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
