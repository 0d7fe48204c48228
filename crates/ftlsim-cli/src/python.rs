//! Figures and the HTML report are drawn by the Python package (`ftlsim.plot`,
//! `ftlsim.report`: matplotlib), which the command line runs: `FTLSIM_PYTHON`, else `python3`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

fn interpreter() -> String {
    std::env::var("FTLSIM_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

fn call(what: &str, args: &[&std::ffi::OsStr]) -> Result<()> {
    let python = interpreter();
    let status = Command::new(&python).args(args).status().with_context(|| {
        format!("{what}: cannot run {python} (set FTLSIM_PYTHON to a Python with the ftlsim package)")
    })?;
    if !status.success() {
        bail!(
            "{what} failed in {python}: it needs the ftlsim Python package with matplotlib (`pip install .` in the \
             repository; or set FTLSIM_PYTHON to a Python that has them)"
        );
    }
    Ok(())
}

/// Draws the figures the results' spec names into `dir`, as PNG and SVG.
pub fn plot(results: &Path, dir: &Path) -> Result<()> {
    call("--plot", &["-m".as_ref(), "ftlsim.plot".as_ref(), results.as_os_str(), "-o".as_ref(), dir.as_os_str()])
}

/// Writes one self-contained HTML page for the results directories.
pub fn report(results: &[PathBuf], out: &Path) -> Result<()> {
    let mut args: Vec<&std::ffi::OsStr> = vec!["-m".as_ref(), "ftlsim.report".as_ref()];
    args.extend(results.iter().map(|r| r.as_os_str()));
    args.extend(["-o".as_ref(), out.as_os_str()]);
    call("report", &args)
}
