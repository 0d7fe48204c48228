//! A file written through the compression its name asks for (`.gz`, `.bz2`, `.xz`, `.zst`, or
//! none): trace conversion and latency logs write through it. Errors name the file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::source::Compression;
use crate::error::{Result, SimError};

enum Sink {
    Plain(BufWriter<File>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
    Bzip2(bzip2::write::BzEncoder<BufWriter<File>>),
    Xz(xz2::write::XzEncoder<BufWriter<File>>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
            Sink::Bzip2(w) => w,
            Sink::Xz(w) => w,
            Sink::Zstd(w) => w,
        }
    }

    fn finish(self) -> std::io::Result<()> {
        let mut inner = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
            Sink::Bzip2(w) => w.finish()?,
            Sink::Xz(w) => w.finish()?,
            Sink::Zstd(w) => w.finish()?,
        };
        inner.flush()
    }
}

pub struct CompressedWriter {
    sink: Sink,
    name: String,
}

impl CompressedWriter {
    pub fn create(path: &Path) -> Result<CompressedWriter> {
        let name = path.display().to_string();
        let file = File::create(path).map_err(|e| SimError::input(&name, format!("cannot create: {e}")))?;
        let file = BufWriter::with_capacity(256 * 1024, file);
        let io = |e: std::io::Error| SimError::input(&name, format!("cannot write: {e}"));
        let sink = match Compression::from_extension(path) {
            Compression::None => Sink::Plain(file),
            Compression::Gzip => Sink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::default())),
            Compression::Bzip2 => Sink::Bzip2(bzip2::write::BzEncoder::new(file, bzip2::Compression::default())),
            Compression::Xz => Sink::Xz(xz2::write::XzEncoder::new(file, 6)),
            Compression::Zstd => Sink::Zstd(zstd::stream::write::Encoder::new(file, 3).map_err(io)?),
        };
        Ok(CompressedWriter { sink, name })
    }

    /// The file's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        self.sink.writer().write_all(bytes).map_err(|e| SimError::input(&self.name, format!("cannot write: {e}")))
    }

    /// Flushes and completes the compressed stream.
    pub fn finish(self) -> Result<()> {
        let name = self.name;
        self.sink.finish().map_err(|e| SimError::input(name, format!("cannot write: {e}")))
    }
}
