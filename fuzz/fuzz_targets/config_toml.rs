//! Configuration loading: any text, and any combination of known keys with edge values, either
//! validates (and every FTL builds on it or names a field) or fails naming a field; none panics.
#![no_main]

use ftlsim::check::suite::{config_text_from_bytes, fuzz_config_text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let structured = config_text_from_bytes(data);
    let raw = String::from_utf8_lossy(data);
    for text in [structured.as_str(), raw.as_ref()] {
        if let Err(finding) = fuzz_config_text(text) {
            panic!("{finding}\n--- input ---\n{text}");
        }
    }
});
