//! End-to-end tests of `ftlsim trace stats|convert`, `ftlsim gen`, and trace input to `run`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn ftlsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs")
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ftlsim/tests/fixtures/traces").join(name).display().to_string()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ftlsim-cli-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stats(path: &str, extra: &[&str]) -> Value {
    let out = ftlsim(&[&["trace", "stats", path, "--json"], extra].concat());
    serde_json::from_str::<Value>(&ok(&out)).unwrap()["stats"].clone()
}

const SMALL: &[&str] =
    &["--set", "device.geometry.blocks_per_plane=128", "--set", "device.geometry.pages_per_block=64", "--quiet"];

#[test]
fn stats_of_a_real_sample() {
    let s = stats(&fixture("msr_hm_1.head40.csv.gz"), &[]);
    assert_eq!(s["requests"], 40);
    assert_eq!(s["writes"], 40);
    assert_eq!(s["write_percent"], 100.0);
    assert_eq!(s["min_offset_bytes"], 765_952);
    // Only writes: no page read, WR_max 0; the cache size is the one asked.
    assert_eq!(s["wr_max_percent"], 0.0);
    let small = stats(&fixture("msr_hm_1.head40.csv.gz"), &["--cache-entries", "1", "--cache-page", "4KiB"]);
    assert_eq!(
        (small["mapping_cache"]["entries"].as_u64(), small["mapping_cache"]["page_bytes"].as_u64()),
        (Some(1), Some(4096))
    );
    assert!(small["mapping_cache"]["hit_percent"].as_f64() <= s["mapping_cache"]["hit_percent"].as_f64());
    let table = ok(&ftlsim(&["trace", "stats", &fixture("tpcc.mqsim.head40.trace")]));
    for row in [
        "write requests (%)",
        "average read size (KB)",
        "footprint",
        "sequential",
        "inter-arrival",
        "address range",
        "LRU mapping cache hits, 2048 entries of 8 KiB",
        "WR_max",
    ] {
        assert!(table.contains(row), "{row}: {table}");
    }
}

/// A generated stand-in has the statistics of the paper's table (paper 000 Table 4.2,
/// WebSearch1: 227,623 requests, 0.05% writes, 17.16 / 17.17 / 8.00 KB).
#[test]
fn generated_preset_matches_its_published_statistics() {
    let out = temp("websearch1.csv.gz");
    ok(&ftlsim(&["gen", "p000-websearch1", "-o", out.to_str().unwrap(), "--capacity", "16GiB"]));
    let s = stats(out.to_str().unwrap(), &[]);
    assert_eq!(s["requests"], 227_623);
    let near = |key: &str, want: f64| {
        let got = s[key].as_f64().unwrap();
        assert!((got - want).abs() <= 0.02 * want, "{key}: {got} vs {want}");
    };
    near("write_percent", 0.05);
    near("mean_size_kb", 17.16);
    near("mean_read_size_kb", 17.17);
    near("mean_write_size_kb", 8.00);
}

#[test]
fn convert_to_every_writable_format_keeps_the_stream() {
    let source = fixture("fiu_mail_cheetah.head30.blkparse");
    let original = stats(&source, &[]);
    for (to, ext) in [("msr", "csv"), ("spc", "spc.bz2"), ("mqsim", "trace.xz")] {
        let out = temp(&format!("converted.{ext}"));
        let path = out.to_str().unwrap();
        ok(&ftlsim(&["trace", "convert", &source, "-o", path, "--to", to]));
        let converted = stats(path, &[]);
        // MSR keeps time in 100 ns ticks, so only the spatial statistics must match exactly.
        for key in [
            "requests",
            "reads",
            "writes",
            "mean_read_size_kb",
            "mean_write_size_kb",
            "footprint_bytes",
            "sequential_percent",
            "min_offset_bytes",
            "max_end_bytes",
        ] {
            assert_eq!(converted[key], original[key], "{to}: {key}");
        }
        if to != "msr" {
            assert_eq!(converted, original, "{to}");
        }
    }
    let refused = ftlsim(&["trace", "convert", &source, "-o", temp("x").to_str().unwrap(), "--to", "fiu"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn malformed_trace_given_to_run_fails_with_one_positioned_line() {
    let bad = temp("bad.csv");
    std::fs::write(&bad, "128166625932151588,hm,1,Write,0,4096,0\n128166625932151589,hm,1,Write,8192,-8,0\n").unwrap();
    let out = ftlsim(&[&["run", "--trace", bad.to_str().unwrap()], SMALL].concat());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        format!("error: {}:2: field 6 (size): expected a positive integer, found \"-8\"\n", bad.display())
    );
    // Skipped instead, the line is counted in the result.
    let out =
        ok(&ftlsim(&[&["run", "--json", "--trace", bad.to_str().unwrap(), "--on-bad-line", "skip"], SMALL].concat()));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["skipped_lines"].as_u64(), v["report"]["host"]["requests"].as_u64()), (Some(1), Some(1)));
    assert_eq!(v["workload_description"]["format"], "msr");
}

#[test]
fn run_replays_real_traces_and_synthetic_presets() {
    let out = ok(&ftlsim(
        &[
            &["run", "--json", "--trace", &fixture("tpcc.mqsim.head40.trace"), "--set", "host.address_policy=\"fold\""],
            SMALL,
        ]
        .concat(),
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["report"]["host"]["requests"], 40);
    let out = ok(&ftlsim(&[&["run", "--json", "--synthetic", "p000-hm0", "--requests", "2000"], SMALL].concat()));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["workload"], "synthetic:p000-hm0");
    assert_eq!(v["workload_description"]["synthetic"], true);
    assert_eq!(v["report"]["host"]["requests"], 2000);
    let out = ok(&ftlsim(
        &[&["run", "--json", "--synthetic", "requests=500,read=0.5,size=4k,arrival=closed:4"], SMALL].concat(),
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["report"]["host"]["requests"], 500);
}

#[test]
fn bad_options_are_one_line_errors() {
    for (args, want) in [
        (vec!["trace", "stats", "/nonexistent/t.csv"], "/nonexistent/t.csv: cannot read"),
        (vec!["gen", "nosuch", "-o", "/tmp/x.csv"], "unknown preset"),
        (vec!["gen", "requests=10,read=7", "-o", "/tmp/x.csv"], "synthetic.read"),
        (vec!["trace", "stats", "/nonexistent/t.csv", "--cache-page", "4x"], "--cache-page: expected a page size"),
        (
            vec!["trace", "stats", "/nonexistent/t.csv", "--cache-entries", "0"],
            "--cache-entries: the mapping cache needs",
        ),
    ] {
        let out = ftlsim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("error: ") && stderr.contains(want) && stderr.lines().count() == 1, "{stderr}");
    }
    let listing = ok(&ftlsim(&["list", "workloads"]));
    assert!(listing.contains("p000-financial1") && listing.contains("synthetic"), "{listing}");
    assert!(ok(&ftlsim(&["list", "formats"])).contains("mqsim"));
}

#[test]
fn convert_never_writes_over_its_input_and_leaves_nothing_half_written() {
    let input = temp("own.csv");
    let line = "128166372003061629,hm,0,Write,8192,4096,1331\n";
    std::fs::write(&input, line).unwrap();
    let link = temp("own-link.csv");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&input, &link).unwrap();
    for output in [&input, &link] {
        let out = ftlsim(&["trace", "convert", input.to_str().unwrap(), "-o", output.to_str().unwrap(), "--to", "msr"]);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("is the input trace"));
        assert_eq!(std::fs::read_to_string(&input).unwrap(), line, "the input is untouched");
    }
    // A conversion that fails midway (a bad line) leaves no output and no temporary file.
    std::fs::write(&input, format!("{line}not,a,trace,line\n")).unwrap();
    // In a directory of its own: other tests convert beside it at the same time.
    let output = temp("never").join("never.csv");
    std::fs::create_dir_all(output.parent().unwrap()).unwrap();
    let out = ftlsim(&["trace", "convert", input.to_str().unwrap(), "-o", output.to_str().unwrap(), "--to", "msr"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!output.exists());
    let leftovers: Vec<_> = std::fs::read_dir(output.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".partial-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_detected_format_is_said_on_stderr_and_recorded_with_its_reason() {
    let trace = fixture("msr_hm_1.head40.csv.gz");
    let out =
        ftlsim(&[&["run", "--trace", &trace, "--json", "--set", "host.address_policy=\"fold\""], &SMALL[..4]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("read as msr (40 of the first 40 lines read as msr)"), "{stderr}");
    let result: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(result["workload_description"]["detected"], "40 of the first 40 lines read as msr");
    let given = ftlsim(
        &[
            &[
                "run",
                "--trace",
                &trace,
                "--format",
                "msr",
                "--json",
                "--quiet",
                "--set",
                "host.address_policy=\"fold\"",
            ],
            &SMALL[..4],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&given.stderr);
    assert!(!stderr.contains("detected"), "{stderr}");
    let result: Value = serde_json::from_str(&ok(&given)).unwrap();
    assert_eq!(result["workload_description"]["detected"], Value::Null);
}

/// Runs ftlsim with `input` on its standard input.
fn ftlsim_fed(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ftlsim"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ftlsim runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input); // a reader that stops early may close the pipe
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Every reader, compressed or not, reads a trace from standard input (`-`) and from a pipe
/// given as a path (`/dev/stdin`) exactly as from the file: same statistics, same name.
#[test]
fn every_fixture_reads_the_same_through_a_pipe_and_standard_input() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ftlsim/tests/fixtures/traces");
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert!(names.len() >= 10);
    for name in names {
        let path = fixture(&name);
        let bytes = std::fs::read(&path).unwrap();
        let from_file = stats(&path, &[]);
        for source in ["-", "/dev/stdin"] {
            let out = ftlsim_fed(&["trace", "stats", source, "--json"], &bytes);
            let v: Value = serde_json::from_str(&ok(&out)).unwrap_or_else(|e| panic!("{name} via {source}: {e}"));
            assert_eq!(v["stats"], from_file, "{name} via {source}");
            assert_eq!(v["trace"], source, "{name}");
        }
    }
}

/// `run` and `compare` read their trace more than once (format detection, each FTL): a trace on
/// standard input is copied first, and results name it `-`.
#[test]
fn compare_reads_a_trace_from_standard_input() {
    let bytes = std::fs::read(fixture("msr_hm_1.head40.csv.gz")).unwrap();
    let args =
        [&["compare", "--ftl", "pftl,dftl", "--trace", "-", "--json", "--set", "host.address_policy=\"fold\""], SMALL]
            .concat();
    let out = ftlsim_fed(&args, &bytes);
    let lines: Vec<Value> = ok(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    for run in lines {
        assert_eq!(run["workload"], "-");
        assert_eq!(run["report"]["host"]["requests"], 40);
        assert_eq!(run["workload_description"]["format"], "msr");
    }
}
