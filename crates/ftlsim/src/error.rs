//! The one error type of the library. Every variant names what is wrong precisely enough
//! for the CLI to print it as a one-line message.

use thiserror::Error;

use crate::flash::{Lpn, Pbn, Ppn};

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// An impossible configuration; `field` is the dotted TOML path.
    #[error("invalid configuration: {field}: {message}")]
    Config { field: String, message: String },

    /// The FTL broke a NAND rule. Always an FTL bug.
    #[error("NAND rule violated by {op} of PPN {ppn}: {rule}")]
    FlashRule { op: &'static str, ppn: Ppn, rule: String },

    /// A bad trace line or a request the host layer refuses.
    #[error("{location}: {message}")]
    Input { location: String, message: String },

    /// The device has no reclaimable space left.
    #[error("device full: garbage collection found no block to reclaim in unit {unit} (free blocks {free}); the workload's live data exceeds the device")]
    DeviceFull { unit: usize, free: usize },

    /// The oracle caught an FTL returning the wrong page.
    #[error("oracle: FTL {ftl} at request {request}, LPN {lpn}: expected {expected}, found {found}")]
    Oracle { ftl: String, request: u64, lpn: Lpn, expected: String, found: String },

    /// An invariant check failed.
    #[error("invariant violated in FTL {ftl} after request {request}: {message}")]
    Invariant { ftl: String, request: u64, message: String },

    /// Power failed while the FTL was serving a request (a planned power loss inside a request);
    /// the simulation recovers and goes on. Never reaches a user.
    #[error("power failed during a request")]
    PowerCut,

    /// The FTL cannot recover from power loss.
    #[error("FTL {ftl} does not support power-loss recovery")]
    RecoveryUnsupported { ftl: String },

    /// A block is not in the state an operation needs (an owned block released while another
    /// role holds it, an erase of a block its FTL still counts valid pages in).
    #[error("block {pbn}: {message}")]
    Block { pbn: Pbn, message: String },

    /// The run was asked to stop (Ctrl-C, or a sweep that failed elsewhere) before it finished.
    #[error("interrupted")]
    Interrupted,

    #[error("{0}")]
    Other(String),
}

impl SimError {
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Config { field: field.into(), message: message.into() }
    }
    pub fn input(location: impl Into<String>, message: impl Into<String>) -> Self {
        SimError::Input { location: location.into(), message: message.into() }
    }
}

pub type Result<T, E = SimError> = std::result::Result<T, E>;
