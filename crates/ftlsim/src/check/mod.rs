//! The correctness harness every FTL runs under: a data oracle and invariant checks.

mod invariants;
mod oracle;

pub use invariants::check_invariants;
pub use oracle::Oracle;
