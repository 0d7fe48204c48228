//! ftlsim: a fast, faithful, trace-driven simulator of NAND-flash SSDs and their flash
//! translation layers.
//!
//! Data flows as in a real SSD: [`workload`] (trace readers, generators) -> [`host`] (address
//! policy, splitting into logical pages) -> [`ftl`] (mapping, caches, allocation, GC, recovery)
//! -> [`flash`] (array state and NAND rules) with [`timing`] (when each operation runs) ->
//! [`metrics`]; [`controller`] holds the write buffer between the host and the FTL. [`sim`] wires one run together; [`check`] is the correctness harness.

pub mod check;
pub mod config;
pub mod controller;
pub mod error;
pub mod experiment;
pub mod flash;
pub mod ftl;
pub mod host;
pub mod mem;
pub mod metrics;
pub mod names;
pub mod sim;
pub mod sweep;
pub mod timing;
pub mod workload;

pub use config::{Config, ConfigBuilder};
pub use error::{Result, SimError};
pub use sim::{run, RunResult, Simulation};

/// The library version recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
