//! The correctness harness every FTL runs under: a data oracle, invariant checks and power-loss
//! plans (docs/correctness.md).

mod invariants;
mod oracle;
mod power_loss;

pub use invariants::check_invariants;
pub use oracle::Oracle;
pub use power_loss::{PowerLossPlan, RANDOM_SPAN_DEFAULT};
