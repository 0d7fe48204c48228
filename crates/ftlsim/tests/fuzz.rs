//! Property-based fuzzing (the short version CI runs; `fuzz/` has the cargo-fuzz targets for long
//! runs, docs/correctness.md the commands and results). Set PROPTEST_CASES for a longer run.
//!
//! - Random small devices and request streams (writes, reads, trims, power losses) through every
//!   registered FTL under the oracle, the invariants and recovery checks.
//! - Configuration loading: any TOML either validates or fails naming a field; nothing panics.
//! - Trace readers: any bytes, and lines of every layout with edge values, either read as sound
//!   requests or stop with an error naming the trace and the line.

use ftlsim::check::suite::{config_text_from_bytes, fuzz_config_text, fuzz_requests};
use ftlsim::check::trace_fuzz::fuzz_trace_bytes;
use ftlsim::ftl::REGISTRY;
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    #[test]
    fn random_devices_and_requests_through_every_ftl(mut data in prop::collection::vec(any::<u8>(), 6..1600)) {
        for i in 0..REGISTRY.len() {
            data[0] = i as u8;
            fuzz_requests(&data).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn structured_toml_validates_or_names_a_field(data in prop::collection::vec(any::<u8>(), 0..24)) {
        fuzz_config_text(&config_text_from_bytes(&data)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn every_trace_reader_reads_or_names_the_line(data in prop::collection::vec(any::<u8>(), 2..400)) {
        fuzz_trace_bytes(&data).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn arbitrary_text_validates_or_names_a_field(text in "[a-z_.=\\[\\]\" 0-9\n-]{0,120}") {
        fuzz_config_text(&text).map_err(TestCaseError::fail)?;
    }
}
