//! `ftlsim sweep`: the same rows whatever `--jobs`, the results directory, the cache, errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ftlsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = ftlsim(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ftlsim-sweep-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GRID: &[&str] = &[
    "sweep",
    "--ftl",
    "pftl,dftl",
    "--set",
    "device.geometry.blocks_per_plane=64",
    "--set",
    "device.geometry.pages_per_block=64",
    "--set",
    "device.overprovisioning=0.25",
    "--grid",
    "ftl.*.cache_bytes=4096,8192",
    "--seeds",
    "1,2",
    "--synthetic",
    "requests=500,read=0.5,addr=uniform,size=8k",
    "--csv",
    "--quiet",
];

/// The cells of one CSV line (a quoted cell may hold commas: a generator spec does).
fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out
}

/// CSV rows without the columns that measure the simulator's own wall-clock time.
fn measured(csv: &str) -> Vec<Vec<String>> {
    let mut lines = csv.lines().map(cells);
    let header = lines.next().unwrap();
    let keep: Vec<usize> = (0..header.len()).filter(|i| !header[*i].starts_with("report.simulation.")).collect();
    std::iter::once(header)
        .chain(lines)
        .map(|row| {
            assert_eq!(row.len(), csv.lines().next().map(cells).unwrap().len(), "a cell per column");
            keep.iter().map(|i| row[*i].clone()).collect()
        })
        .collect()
}

#[test]
fn two_jobs_give_the_rows_of_one() {
    let one = stdout_of(&[GRID, &["--jobs", "1"]].concat());
    let two = stdout_of(&[GRID, &["--jobs", "2"]].concat());
    assert_eq!(one.lines().count(), 1 + 2 * 2 * 2, "2 FTLs x 2 cache sizes x 2 seeds:\n{one}");
    assert!(one.starts_with("experiment,workload,source,sweep.ftl.*.cache_bytes,sweep.seed,nt,ftl,"), "{one}");
    assert_eq!(measured(&one), measured(&two));
}

#[test]
fn the_results_directory_and_the_cache() {
    let dir = scratch("out");
    let (out, cache) = (dir.join("out"), dir.join("cache"));
    let args = [GRID, &["--out", out.to_str().unwrap(), "--cache", cache.to_str().unwrap()]].concat();
    let first = stdout_of(&args);
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert_eq!(csv, first, "runs.csv holds the printed rows");
    let jsonl = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 8);
    let row: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    let key = row["key"].as_str().unwrap();
    let full: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("runs/{key}.json"))).unwrap()).unwrap();
    assert_eq!(full["result"]["report"]["host"]["requests"], 500);
    assert_eq!(full["result"]["report"]["response"]["mean_us"], row["report.response.mean_us"]);
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("spec.json")).unwrap()).unwrap();
    assert_eq!(spec["ftls"], serde_json::json!(["pftl", "dftl"]));
    // pftl has no cache: its two points are one run, cached once.
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 6);
    // Again: every run from the cache (no new entry), the same rows but for wall-clock time
    // (PFTL's two runs share one entry, so both now show the wall time of the one stored).
    let again = stdout_of(&args);
    assert_eq!(measured(&again), measured(&first));
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 6);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_sweeps_name_what_is_wrong() {
    let fails = |args: &[&str], needle: &str| {
        let out = ftlsim(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    };
    fails(&["sweep", "--ftl", "pftl"], "at least one --trace FILE or --synthetic SPEC");
    fails(
        &["sweep", "--ftl", "pftl", "--synthetic", "p000-hm0", "--grid", "gc.policy"],
        "--grid gc.policy: expected KEY=V1,V2",
    );
    fails(
        &["sweep", "--ftl", "dftl", "--synthetic", "p000-hm0", "--grid", "ftl.dftl.cache_bytes=4096,-5"],
        "ftl.dftl.cache_bytes",
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ftlsim/tests/fixtures/traces/msr_hm_1.head40.csv");
    let dir = scratch("bad");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "128166625932151588,hm,1,Write,0,4096,3126\n128166625932153194,hm,1,Write,-5,16384,1520\n")
        .unwrap();
    fails(
        &[
            "sweep",
            "--ftl",
            "pftl",
            "--trace",
            fixture.to_str().unwrap(),
            "--trace",
            bad.to_str().unwrap(),
            "--format",
            "msr",
            "--set",
            "host.address_policy=fold",
        ],
        "bad.csv:2: field",
    );
    std::fs::remove_dir_all(&dir).ok();
}
