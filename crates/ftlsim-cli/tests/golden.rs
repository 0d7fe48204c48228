//! Golden outputs of the CLI: `ftlsim compare` on a small default device and every shipped
//! experiment on its synthetic stand-ins, compared bit for bit with `tests/golden/` (only the
//! wall-clock and memory figures are left out). See `ftlsim::check::golden` for the rule.

use std::path::{Path, PathBuf};
use std::process::Command;

use ftlsim::check::golden;
use serde_json::Value;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Runs `ftlsim` and returns its JSON lines with the machine-dependent fields stripped, and
/// without the inputs each run echoes back (its resolved configuration and workload description,
/// tested by the configuration's own tests): what is left is what the run measured.
fn json_lines(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs");
    assert!(out.status.success(), "ftlsim {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let mut text = String::new();
    for line in stdout.lines() {
        let mut value: Value = serde_json::from_str(line).expect("one JSON object per line");
        golden::strip_machine_fields(&mut value);
        let run = if value.get("result").is_some() { &mut value["result"] } else { &mut value };
        for echoed in ["config", "workload_description"] {
            run.as_object_mut().expect("a run is an object").remove(echoed);
        }
        text.push_str(&value.to_string());
        text.push('\n');
    }
    text
}

#[test]
fn compare_on_the_embedded_workload() {
    let args = [
        "compare",
        "--json",
        "--quiet",
        "--requests",
        "3000",
        "--set",
        "device.geometry.blocks_per_plane=128",
        "--set",
        "device.geometry.pages_per_block=64",
    ];
    golden::check(&golden_dir().join("compare.jsonl"), &json_lines(&args)).unwrap();
}

#[test]
fn every_shipped_experiment_on_its_stand_ins() {
    let experiments = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    // A copy of each spec in a directory without traces, so the synthetic stand-ins run even
    // where the real traces have been downloaded.
    let scratch = std::env::temp_dir().join(format!("ftlsim-golden-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&experiments)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no experiment specs in {}", experiments.display());
    let stem = |spec: &PathBuf| spec.file_stem().unwrap().to_string_lossy().to_string();
    // `FTLSIM_GOLDEN_ONLY=paper004` checks (or, with `FTLSIM_BLESS=1`, re-records) one spec's
    // golden: the whole set takes a quarter of an hour in the test profile. A name that matches
    // no spec fails rather than passing with nothing checked.
    if let Ok(only) = std::env::var("FTLSIM_GOLDEN_ONLY") {
        let names: Vec<String> = specs.iter().map(stem).collect();
        assert!(names.contains(&only), "FTLSIM_GOLDEN_ONLY={only} names no spec; the specs are: {}", names.join(", "));
        specs.retain(|spec| stem(spec) == only);
    }
    let mut failures = Vec::new();
    for spec in specs {
        let name = stem(&spec);
        let copy = scratch.join(spec.file_name().unwrap());
        std::fs::copy(&spec, &copy).unwrap();
        let output = json_lines(&["experiment", copy.to_str().unwrap(), "--requests", "1000", "--json"]);
        if let Err(e) = golden::check(&golden_dir().join(format!("experiment-{name}.jsonl")), &output) {
            failures.push(e);
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
