//! The correctness harness every FTL runs under: a data oracle, invariant checks, power-loss
//! plans, and what the conformance suite and the fuzzers share (docs/correctness.md).

pub mod conformance;
pub mod golden;
mod invariants;
mod oracle;
mod power_loss;
pub mod suite;
pub mod trace_fuzz;

pub use invariants::check_invariants;
pub use oracle::Oracle;
pub use power_loss::{PowerLossPlan, RANDOM_SPAN_DEFAULT};
