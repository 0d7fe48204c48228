//! A trace on standard input (`-`) or a pipe can be read only once, but `run` and `compare` read
//! their trace more than once (to say which format it is, to count it for a power-loss plan,
//! once per compared FTL). Such a trace is first copied, as it comes (compressed or not), to a
//! temporary file that is removed when the command ends.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A temporary copy of a stream, removed when dropped.
pub struct Spooled(PathBuf);

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whether `path` is standard input or another stream that cannot be read twice.
fn is_stream(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Replaces a stream `path` by a temporary copy of it; the copy lives as long as the guard.
pub fn spool(path: &mut PathBuf) -> Result<Option<Spooled>> {
    if !is_stream(path) {
        return Ok(None);
    }
    let copy = std::env::temp_dir().join(format!("ftlsim-trace-{}", std::process::id()));
    let guard = Spooled(copy.clone());
    let mut out = File::create(&copy).with_context(|| format!("{}: cannot create", copy.display()))?;
    let mut input: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(File::open(&*path).with_context(|| format!("{}: cannot read", path.display()))?)
    };
    std::io::copy(&mut input, &mut out).with_context(|| format!("{}: cannot read", path.display()))?;
    *path = copy;
    Ok(Some(guard))
}
