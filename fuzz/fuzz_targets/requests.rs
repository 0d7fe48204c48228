//! Random small devices and request streams (writes, reads, trims, power losses) through a
//! registered FTL under the oracle, the invariants and the recovery checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = ftlsim::check::suite::fuzz_requests(data) {
        panic!("{finding}");
    }
});
