//! Conformance suite (`ftlsim::check::conformance`): every FTL in `ftlsim::ftl::REGISTRY` x the
//! workload matrix, one trial per (FTL, workload), named `<ftl>::<workload>`, so a failure names
//! both; run one FTL with `cargo test --test conformance -- dftl::`. Each trial's report must
//! also equal the golden one in `tests/golden/conformance/` (see `ftlsim::check::golden`).
//!
//! A registered FTL joins automatically; its registry entry says what its test devices need
//! (`test_overrides`) and whether it recovers from power loss (`recovers`). An open, reported bug
//! goes in [`KNOWN_FAILURES`] (the trial is ignored with the reason).

use std::path::Path;

use ftlsim::check::conformance::{run_static, run_variant, Variant, WORKLOADS};
use ftlsim::check::golden;
use ftlsim::config::ValidityTracking;
use ftlsim::ftl::{Family, REGISTRY};
use libtest_mimic::{Arguments, Failed, Trial};

/// (FTL or "*" for all, workload, reason): open bugs, reported to the owner; these trials are
/// ignored (run them with `-- --ignored`). Remove the line with the fix.
const KNOWN_FAILURES: &[(&str, &str, &str)] = &[];

/// Parameter settings that change a scheme's mapping structure run the whole matrix too, as
/// trials and goldens named `<ftl>-<label>`.
const VARIANTS: &[(&str, Variant)] = &[
    ("dftl", Variant { label: "vtp", params: "cache_unit = \"vtp\"\ncache_bytes = 1024", config: |_| {} }),
    // Weak content locality: incompressible pages and the bypass.
    ("delta", Variant { label: "weak", params: "compression_mean = 0.8\ncompression_sigma = 0.2", config: |_| {} }),
    // A mapping cache of 8 entries: counts die fast, so deltas are merged back often.
    ("delta", Variant { label: "forgetful", params: "cache_entries = 8", config: |_| {} }),
    ("pftl", ILOG),
    ("dftl", ILOG),
    ("3dftl", ILOG),
];

/// GC validation through ILog (paper 000 chapter 8), with a queue of 4 BIFs and 4 invalidation
/// pages so that the small devices write and read the log often.
const ILOG: Variant = Variant {
    label: "ilog",
    params: "",
    config: |c| {
        // Room for the log: its stream's open block and one more GC reserve per unit (a unit is
        // a plane or larger) and a block of invalidation pages, the exported space unchanged.
        c.device.logical_pages = Some(c.device.logical_pages());
        c.device.geometry.blocks_per_plane += 3;
        c.gc.validity = ValidityTracking::Ilog;
        c.gc.ilog_pages = 4;
        c.gc.ilog_queue_bytes = 4 * ftlsim::ftl::common::ilog::bif_bytes(c.device.geometry.pages_per_block);
    },
};

/// Every block's last page holds its summary (`device.geometry.summary_page`), run by every
/// scheme that writes through streams (the block-mapped and clustered ones refuse it). The
/// exported space shrinks with the data pages, so the spare blocks stay what the device had.
const SUMMARY: Variant = Variant {
    label: "summary",
    params: "",
    config: |c| {
        let ppb = c.device.geometry.pages_per_block as u64;
        c.device.logical_pages = Some((c.device.logical_pages() as u64 * (ppb - 1) / ppb) as u32);
        c.device.geometry.summary_page = true;
    },
};

/// The run's report must equal the one recorded in `tests/golden/conformance/` (see
/// `ftlsim::check::golden`): a refactor changes no result.
fn check_golden(ftl: &str, workload: &str, report: &impl serde::Serialize) -> Result<(), String> {
    let mut run = serde_json::json!({ "report": report });
    golden::strip_machine_fields(&mut run);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/conformance/{ftl}__{workload}.json"));
    golden::check(&path, &format!("{:#}\n", run["report"]))
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let variants = VARIANTS.iter().map(|(ftl, variant)| {
        let info = REGISTRY.iter().find(|info| info.name == *ftl).expect("a variant of a registered FTL");
        (info, variant)
    });
    let summarized = REGISTRY.iter().filter(|info| !matches!(info.family, Family::BlockMapped | Family::Clustered));
    let variants = variants.chain(summarized.map(|info| (info, &SUMMARY)));
    for info in REGISTRY {
        trials.push(Trial::test(format!("{}::sram_and_params", info.name), move || {
            run_static(info).map_err(Failed::from)
        }));
    }
    for (info, variant) in REGISTRY.iter().map(|info| (info, &Variant::DEFAULT)).chain(variants) {
        let ftl = variant.name(info.name);
        for w in WORKLOADS {
            let known = KNOWN_FAILURES.iter().any(|(f, name, _)| (*f == ftl || *f == "*") && *name == w.name);
            let name = ftl.clone();
            let trial = Trial::test(format!("{ftl}::{}", w.name), move || {
                let report = run_variant(info, variant, w)?;
                check_golden(&name, w.name, &report).map_err(Failed::from)
            });
            trials.push(if known { trial.with_ignored_flag(true).with_kind("known-failure") } else { trial });
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
