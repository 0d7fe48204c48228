//! Trace readers: any bytes, and lines of every layout with edge values, through every reader
//! and format detection, plain or gzipped, under every bad-line and order policy, either read as
//! sound requests or stop with an error naming the trace and the line; none panics.
#![no_main]

use ftlsim::check::trace_fuzz::fuzz_trace_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = fuzz_trace_bytes(data) {
        panic!("{finding}\n--- input ---\n{}", String::from_utf8_lossy(data));
    }
});
