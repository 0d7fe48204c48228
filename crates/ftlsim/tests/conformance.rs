//! Conformance suite (being written).
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    libtest_mimic::run(&args, Vec::new()).exit();
}
