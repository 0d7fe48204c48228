//! End-to-end tests of the `ftlsim` binary.

use std::process::Command;

fn ftlsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs")
}

/// A small device so the default-job tests finish quickly in the test profile.
const SMALL: &[&str] = &[
    "--set",
    "device.geometry.blocks_per_plane=128",
    "--set",
    "device.geometry.pages_per_block=64",
    "--requests",
    "3000",
    "--quiet",
];

#[test]
fn default_compare_prints_a_table_with_normalised_time() {
    let out = ftlsim(&[&["compare"], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("synthetic:oltp-mix"), "{text}");
    let header = text.lines().nth(1).unwrap();
    assert!(header.contains("NT") && header.contains("mean_us"), "{text}");
    let pftl = text.lines().find(|l| l.starts_with("pftl")).expect("a pftl row");
    assert!(pftl.split_whitespace().nth(2) == Some("1.000"), "{pftl}");
}

#[test]
fn run_json_has_the_documented_schema() {
    let out = ftlsim(&[&["run", "--json"], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["tool", "version", "ftl", "ftl_params", "workload", "workload_description", "config", "report"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let r = &v["report"];
    for key in [
        "host",
        "reads",
        "spare_reads",
        "programs",
        "erases",
        "write_amplification",
        "block_utilization",
        "valid_page_move_rate",
        "gc_victims",
        "plane_register_hits",
        "response",
        "erase_count",
        "cache",
        "recovery",
        "sram",
        "sram_total_bytes",
        "simulation",
    ] {
        assert!(r.get(key).is_some(), "missing report.{key}");
    }
    for key in ["mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "count"] {
        assert!(r["response"]["all"].get(key).is_some(), "missing response.all.{key}");
    }
    assert_eq!(v["config"]["device"]["geometry"]["blocks_per_plane"], 128);
    assert_eq!(r["host"]["requests"], 3000);
}

/// A device with summary pages reports them, in the table and in the JSON (absent without them).
#[test]
fn summary_pages_are_reported_when_the_device_has_them() {
    let summary = [&["--set", "device.geometry.summary_page=true"], SMALL].concat();
    let out = ftlsim(&[&["run"], summary.as_slice()].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("summary pages written (among meta programs)"), "{text}");
    let json = |args: &[&str]| {
        let out = ftlsim(&[&["run", "--json"], args].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let on = json(&summary);
    let written = on["report"]["summary_pages_written"].as_u64().expect("summary_pages_written");
    assert!(written > 0 && written <= on["report"]["programs"]["metadata"].as_u64().unwrap(), "{written}");
    assert_eq!(on["config"]["device"]["geometry"]["summary_page"], true);
    assert!(json(SMALL)["report"].get("summary_pages_written").is_none());
    // A block of one page has no room for data beside its summary.
    let out =
        ftlsim(&["run", "--set", "device.geometry.summary_page=true", "--set", "device.geometry.pages_per_block=1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("device.geometry.summary_page") && err.contains("pages_per_block must be at least 2"),
        "{err}"
    );
}

#[test]
fn csv_has_a_header_and_one_row_per_run() {
    let out = ftlsim(&[&["compare", "--csv", "--ftl", "pftl"], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("ftl,workload,preset,version,") && lines[0].contains("response.mean_us"));
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
}

#[test]
fn same_seed_same_output() {
    let a = ftlsim(&[&["run", "--csv", "--seed", "7"], SMALL].concat());
    let b = ftlsim(&[&["run", "--csv", "--seed", "7"], SMALL].concat());
    let strip = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split(',').filter(|c| !c.contains('.')).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
    };
    assert!(a.status.success());
    assert_eq!(strip(&a), strip(&b));
}

fn assert_fails(args: &[&str], needle: &str) {
    let out = ftlsim(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} printed a partial result");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_flag_exits_2() {
    assert_fails(&["run", "--no-such-flag"], "--no-such-flag");
}

#[test]
fn bad_preset_field_is_named() {
    assert_fails(&["run", "--set", "device.geometry.pages_per_block=0"], "device.geometry.pages_per_block");
    assert_fails(&["run", "--set", "device.latency.raed_us=3"], "raed_us");
    assert_fails(&["run", "--preset", "nope"], "unknown preset");
    assert_fails(&["run", "--ftl", "nope"], "unknown FTL");
}

#[test]
fn list_names_ftls_and_presets() {
    let out = ftlsim(&["list"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("pftl") && text.contains("mlc8g") && text.contains("ssd16"), "{text}");
}

#[test]
fn experiment_runs_every_point_and_normalises_to_the_baseline() {
    let dir = std::env::temp_dir().join(format!("ftlsim-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("e.toml");
    std::fs::write(
        &spec,
        r#"
        name = "e"
        preset = "mlc8g"
        ftls = ["pftl", "dftl"]
        [set]
        "device.geometry.blocks_per_plane" = 128
        "device.geometry.pages_per_block" = 64
        [sweep]
        "ftl.*.cache_bytes" = [4224, 8448]
        [[workload]]
        name = "w"
        trace = "missing.csv"
        synthetic = "requests=400,read=0.5,addr=uniform,size=8k"
        "#,
    )
    .unwrap();
    let out = ftlsim(&["experiment", spec.to_str().unwrap(), "--csv"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 4, "2 sweep points x 2 FTLs: {text}");
    assert!(lines[0].starts_with("experiment,workload,source,sweep.ftl.*.cache_bytes,nt,ftl,"), "{}", lines[0]);
    assert!(lines[1].starts_with("e,w,synthetic,4224,1.0,pftl,"), "{}", lines[1]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn experiment_with_a_bad_spec_names_the_field() {
    let dir = std::env::temp_dir().join(format!("ftlsim-exp-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("bad.toml");
    std::fs::write(
        &spec,
        "name = \"x\"\npreset = \"mlc8g\"\nftls = [\"pftl\"]\n[[workload]]\nname = \"w\"\nsynthetc = \"x\"\n",
    )
    .unwrap();
    assert_fails(&["experiment", spec.to_str().unwrap()], "synthetc");
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's first command as a new user runs it: the embedded workload on `mlc8g` loads the
/// die without saturating it, so no saturation warning, a bounded p99, and the columns that show
/// where the time goes (median and tail, queueing against service, utilization).
#[test]
fn the_first_command_reads_right() {
    let out = ftlsim(&["compare", "--quiet"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().skip(1);
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    for column in ["mean_us", "p50_us", "p99_us", "max_us", "queue_us", "service_us", "util"] {
        assert!(header.contains(&column), "missing {column}: {text}");
    }
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 8, "the page-mapped and demand-based schemes: {text}");
    for row in rows {
        let value = |name: &str| row[col(name)].parse::<f64>().unwrap();
        assert!(value("util") < 0.5, "{row:?}");
        assert!(value("p99_us") < 2_000_000.0, "{row:?}");
        assert!(value("p50_us") < 5_000.0, "{row:?}");
    }
}

/// `compare --ftl all` runs every registered scheme; a saturated one is named in a warning.
#[test]
fn compare_all_warns_of_saturation() {
    let out = ftlsim(&[&["compare", "--ftl", "all"], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("sast ")), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: bftl: the device was busy") && stderr.contains("host.time_scale"), "{stderr}");
}

/// One request keeps a die busy for the whole simulated span without queueing behind anything:
/// no saturation warning.
#[test]
fn a_single_request_is_not_called_saturated() {
    let small: Vec<&str> = SMALL.iter().copied().filter(|a| *a != "3000" && *a != "--requests").collect();
    let out = ftlsim(&[&["run", "--json", "--requests", "1"], small.as_slice()].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["report"]["response"]["saturated"], true, "busy for the whole span of one request");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("was busy"), "{stderr}");
}

/// A section only some schemes report (`merges`) is an empty cell in the other rows: every CSV
/// row has the header's columns.
#[test]
fn compare_csv_rows_have_the_header_columns_when_sections_differ() {
    let out = ftlsim(&[&["compare", "--ftl", "pftl,fast", "--csv"], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let merges = header.iter().position(|h| *h == "merges.full_merges").expect("a merges column");
    for line in &lines[1..] {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{line}");
    }
    assert_eq!(lines[1].split(',').nth(merges), Some(""), "PFTL has no merges");
    assert_ne!(lines[2].split(',').nth(merges), Some(""), "FAST has");
}

/// An experiment whose runs saturate the device says so once, naming them.
#[test]
fn experiment_warns_of_saturated_runs() {
    let dir = std::env::temp_dir().join(format!("ftlsim-cli-saturated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("s.toml");
    std::fs::write(
        &spec,
        "name = \"s\"\npreset = \"mlc8g\"\nftls = [\"pftl\"]\n[set]\n\"device.geometry.blocks_per_plane\" = 128\n\
         [[workload]]\nname = \"w\"\nsynthetic = \"requests=2000,read=0.1,addr=uniform,size=4k,arrival=poisson:5000\"\n",
    )
    .unwrap();
    let out = ftlsim(&["experiment", spec.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: 1 of 1 runs kept the device busy") && stderr.contains("w/pftl"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn latency_log_has_a_row_per_request_whose_mean_is_the_reported_mean() {
    let dir = std::env::temp_dir().join(format!("ftlsim-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("latencies.csv");
    let out = ftlsim(&[&["run", "--ftl", "dftl", "--json", "--latency-log", plain.to_str().unwrap()], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = std::fs::read_to_string(&plain).unwrap();
    let mut lines = log.lines();
    assert_eq!(lines.next(), Some("request,arrival_ns,start_ns,finish_ns,response_ns,op,first_lpn,pages,bytes"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len() as u64, report["report"]["host"]["requests"].as_u64().unwrap());
    let number = |s: &str| s.parse::<u64>().unwrap();
    for (i, row) in rows.iter().enumerate() {
        let (arrival, start, finish, response) = (number(row[1]), number(row[2]), number(row[3]), number(row[4]));
        assert_eq!(number(row[0]), i as u64);
        assert!(arrival <= start && start <= finish && response == finish - arrival, "{row:?}");
        assert!(["read", "write", "trim"].contains(&row[5]), "{row:?}");
    }
    let mean_us = rows.iter().map(|r| number(r[4]) as f64).sum::<f64>() / rows.len() as f64 / 1000.0;
    let reported = report["report"]["response"]["mean_us"].as_f64().unwrap();
    assert!((mean_us - reported).abs() <= 1e-9 * reported, "log mean {mean_us} us, report {reported} us");
    // Compressed when the name says so.
    let gz = dir.join("latencies.csv.gz");
    let out = ftlsim(&[&["run", "--latency-log", gz.to_str().unwrap()], SMALL].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(&std::fs::read(&gz).unwrap()[..2], &[0x1f, 0x8b], "gzip magic");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_paper_001_platform_reports_its_buffer_and_dies() {
    let small_ssd16 = [
        "run",
        "--json",
        "--preset",
        "ssd16",
        "--set",
        "device.geometry.blocks_per_plane=64",
        "--set",
        "gc.background_free_blocks=8",
        "--set",
        "buffer.size_mb=1",
        "--requests",
        "3000",
        "--quiet",
    ];
    let out = ftlsim(&small_ssd16);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &v["report"];
    assert_eq!(report["buffer"]["capacity_pages"], 256);
    assert!(report["buffer"]["evictions"].as_u64().unwrap() > 0, "{}", report["buffer"]);
    assert!(report["dies"]["mean_utilization"].as_f64().unwrap() > 0.0, "{}", report["dies"]);
    assert_eq!(v["config"]["device"]["timing"]["scheduler"], "rps");
}

#[test]
fn controller_settings_the_model_cannot_honour_are_refused() {
    // mlc8g is fifo-single: one server serving whole requests.
    assert_fails(&["run", "--set", "buffer.size_mb=64"], "buffer.size_mb");
    assert_fails(&["run", "--set", "device.timing.scheduler=rps"], "device.timing.scheduler");
    assert_fails(&["run", "--preset", "ssd16", "--set", "gc.background_free_blocks=1"], "gc.background_free_blocks");
    assert_fails(&["run", "--set", "host.queue_depth=0"], "host.queue_depth");
}

#[test]
fn an_impossible_controller_cpu_is_refused_naming_the_field() {
    assert_fails(&["run", "--set", "device.cpu.frequency_mhz=0"], "device.cpu.frequency_mhz");
    assert_fails(&["run", "--set", "device.cpu.compress_cycles=0"], "device.cpu.compress_cycles");
    assert_fails(&["run", "--set", "device.cpu.servers=two"], "device.cpu.servers");
}

#[test]
fn bench_sets_each_figure_beside_the_recorded_one() {
    let dir = std::env::temp_dir().join(format!("ftlsim-bench-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = dir.join("perf.md");
    std::fs::write(
        &doc,
        "## Recorded figures\n\n\
         | ftl | scenario | preset | M host pages per CPU s | M flash ops per CPU s | state B per page |\n\
         |---|---|---|---|---|---|\n\
         | pftl | sequential reads | mlc8g | 15.0 | 15.0 | 12.16 |\n",
    )
    .unwrap();
    let only = ["bench", "--only", "pftl mlc8g sequential", "--requests", "2000", "--compare"];
    let out = ftlsim(&[&only[..], &[doc.to_str().unwrap(), "--json"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let compared = &v["compared"][0];
    assert_eq!(compared["recorded_host_pages_per_cpu_second"], 15e6);
    assert_eq!(compared["recorded_state_bytes_per_page"], 12.16);
    assert!(compared["host_pages_per_cpu_second"].as_f64().unwrap() > 0.0, "{v}");
    let scenario = &v["scenarios"][0];
    assert_eq!(scenario["requests"], 2000);
    assert!(scenario["host_pages_per_cpu_second"].as_f64().unwrap() > 0.0, "{v}");

    let out = ftlsim(&[&only[..], &[doc.to_str().unwrap()]].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().filter(|l| l.starts_with("pftl")).nth(1).expect("a comparison row");
    assert!(row.contains("15.00") && row.contains("12.16") && row.contains('%'), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
