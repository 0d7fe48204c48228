//! Trace readers on real samples (golden values computed by hand from the lines), compressed
//! input, format detection, every kind of bad line, timestamp-order policies, and round trips
//! through every writable format.

use std::path::{Path, PathBuf};

use ftlsim::workload::generator::SynthSpec;
use ftlsim::workload::write::TraceWriter;
use ftlsim::workload::{
    self, detect_format, AsuLayout, BadLinePolicy, Format, IoKind, OutOfOrder, Request, TraceOptions,
};
use ftlsim::ConfigBuilder;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces").join(name)
}

/// A file of its own (tests run in parallel and may ask for the same name) in a directory
/// private to this test process.
fn temp(name: &str, content: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let call = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ftlsim-trace-readers-{}", std::process::id())).join(call.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn small_device() -> ftlsim::Config {
    ConfigBuilder::new()
        .set("device.geometry.blocks_per_plane=128")
        .unwrap()
        .set("device.geometry.pages_per_block=64")
        .unwrap()
        .build()
        .unwrap()
}

fn read_with(path: &Path, options: &TraceOptions) -> Vec<Request> {
    workload::open(path, options).unwrap().requests.map(|r| r.unwrap()).collect()
}

fn read(path: &Path) -> Vec<Request> {
    read_with(path, &TraceOptions::default())
}

/// The first error of reading `content` as `format`.
fn error(format: Format, content: &str) -> String {
    let path = temp(&format!("bad.{format}"), content);
    let options = TraceOptions { format: Some(format), ..TraceOptions::default() };
    let err = workload::open(&path, &options).unwrap().requests.find_map(|r| r.err()).expect("an error");
    err.to_string().replace(&path.display().to_string(), "FILE")
}

#[test]
fn msr_golden() {
    let r = read(&fixture("msr_hm_1.head40.csv"));
    assert_eq!(r.len(), 40);
    assert_eq!(r[0], Request::new(0, IoKind::Write, 371_077_120, 49_152, 1));
    assert_eq!(r[1], Request::new(160_600, IoKind::Write, 439_316_480, 16_384, 2));
    assert_eq!(r[2], Request::new(176_100, IoKind::Write, 438_071_296, 8_192, 3));
}

#[test]
fn compressed_msr_reads_like_the_plain_file() {
    let plain = read(&fixture("msr_hm_1.head40.csv"));
    for ext in ["gz", "bz2", "xz", "zst"] {
        assert_eq!(read(&fixture(&format!("msr_hm_1.head40.csv.{ext}"))), plain, "{ext}");
    }
    // Compression is recognised by content: a gzip file without the extension still reads.
    let renamed = temp("hm.noext", "");
    std::fs::copy(fixture("msr_hm_1.head40.csv.gz"), &renamed).unwrap();
    assert_eq!(read(&renamed), plain);
    // An extension that lies is reported.
    let liar = temp("plain.csv.gz", "1,h,0,Read,0,512,0\n");
    let err = workload::open(&liar, &TraceOptions::default()).err().unwrap().to_string();
    assert!(err.contains("Gzip") && err.contains("not compressed"), "{err}");
}

#[test]
fn mqsim_golden() {
    let r = read(&fixture("tpcc.mqsim.head40.trace"));
    assert_eq!(r.len(), 40);
    assert_eq!(r[0], Request::new(938_513_000, IoKind::Write, 135_536_145_408, 8192, 1));
    assert_eq!(r[1], Request::new(938_828_000, IoKind::Write, 101_156_131_840, 8192, 2));
    assert_eq!(r[30], Request::new(940_908_000, IoKind::Read, 164_828_648_448, 8192, 31));
}

#[test]
fn ssdsim_golden_with_sector_fingerprints() {
    let r = read(&fixture("fiu_homes.ssdsim_md5.head12.ascii"));
    assert_eq!(r.len(), 12);
    assert_eq!(
        (r[0].arrival_ns, r[0].kind, r[0].offset_bytes, r[0].len_bytes),
        (0, IoKind::Write, 82_332_786_688, 4096)
    );
    let f = r[0].content.as_ref().expect("fingerprints");
    assert_eq!(f.unit_bytes(), 512);
    let zero = 0xbf61_9eac_0cdf_3f68;
    assert_eq!(
        f.as_slice(),
        &[
            0x3f4f_c283_3a17_fd2a,
            0xc046_a93c_984f_2f11,
            0x38eb_5fb7_4b98_1157,
            0x602f_8f1f_850c_a719,
            zero,
            zero,
            zero,
            zero
        ]
    );
    assert_eq!((r[1].arrival_ns, r[1].offset_bytes), (1851, 37_579_386_880));
}

#[test]
fn fiu_golden_with_record_fingerprints() {
    let r = read(&fixture("fiu_mail_cheetah.head30.blkparse"));
    assert_eq!(r.len(), 30);
    assert_eq!(
        (r[0].arrival_ns, r[0].kind, r[0].offset_bytes, r[0].len_bytes),
        (0, IoKind::Write, 9_512_742_912, 4096)
    );
    let f = r[0].content.as_ref().unwrap();
    assert_eq!((f.unit_bytes(), f.as_slice()), (4096, &[0xd6c7_5ba4_6e82_326f][..]));
    assert_eq!((r[1].arrival_ns, r[1].offset_bytes), (4_980_861, 260_360_536_064));
    assert!(r.iter().any(|q| q.kind == IoKind::Read));
}

#[test]
fn blkparse_golden_dispatch_and_queue_events() {
    let path = fixture("ycsb_btrfs.excerpt.blkparse.txt");
    let d = read(&path);
    assert_eq!(d[0], Request::new(32_064, IoKind::Read, 299_421_696, 479_232, 2));
    assert_eq!(d[1], Request::new(336_473, IoKind::Read, 299_900_928, 491_520, 4));
    assert!(d.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns), "sorted by the default window");
    assert!(d.iter().any(|r| r.kind == IoKind::Write));
    // The sample has I events where other traces have Q: choosing I gives one request per I line.
    let i = read_with(&path, &TraceOptions { events: "I".into(), ..TraceOptions::default() });
    assert_eq!(i[0], Request::new(20_122, IoKind::Read, 299_421_696, 479_232, 1));
    assert_eq!((i.len(), d.len()), (55, 54), "one I line and one D line per event of the excerpt");
    // Taken in file order, the CPUs' interleaving shows.
    let err = workload::open(&path, &TraceOptions { out_of_order: Some(OutOfOrder::Error), ..TraceOptions::default() })
        .unwrap()
        .requests
        .find_map(|r| r.err())
        .expect("the sample goes backwards")
        .to_string();
    assert!(err.contains("goes backwards"), "{err}");
}

/// The whole sample against blkparse's own summary at its end: "Read Dispatches: 1301",
/// "Write Dispatches: 523, 250424KiB" (its read total is printed in MiB of 1000 KiB).
#[test]
fn blkparse_dispatches_match_blkparse_summary() {
    let d = read(&fixture("ycsb_btrfs.blkparse.txt.xz"));
    let count = |k| d.iter().filter(|r| r.kind == k).count();
    let bytes = |k| d.iter().filter(|r| r.kind == k).map(|r| r.len_bytes).sum::<u64>();
    assert_eq!((count(IoKind::Read), count(IoKind::Write)), (1301, 523));
    assert_eq!(bytes(IoKind::Write), 250_424 * 1024);
    assert_eq!(bytes(IoKind::Read) / 1024 / 1000, 1026);
}

#[test]
fn spc_asus_concatenated_or_selected() {
    let path = fixture("financial_like.spc");
    let mib = 1u64 << 20;
    let all = read(&path);
    let expected = vec![
        Request::new(0, IoKind::Write, 303_567 * 512, 3584, 1),
        Request::new(800_000, IoKind::Read, 149 * mib + 8 * 512, 512, 2),
        Request::new(1_500_000, IoKind::Read, 303_575 * 512, 4096, 3),
        Request::new(2_000_000, IoKind::Write, 150 * mib, 1024, 4),
        Request::new(2_500_000, IoKind::Write, 149 * mib + 100 * 512, 2048, 5),
    ];
    assert_eq!(all, expected);
    let one = read_with(&path, &TraceOptions { asu: AsuLayout::Only(1), ..TraceOptions::default() });
    assert_eq!(
        one,
        vec![
            Request::new(800_000, IoKind::Read, 4096, 512, 2),
            Request::new(2_500_000, IoKind::Write, 51_200, 2048, 5)
        ]
    );
}

#[test]
fn generic_reader_with_a_column_mapping() {
    let path = temp("generic.txt", "time op offset size\n1.5 W 8 2\n2 R 0 1\n");
    let options = TraceOptions {
        generic: Some("delim=ws,skip=1,time=1:ms,op=2,offset=3:sector,size=4:KiB".parse().unwrap()),
        ..TraceOptions::default()
    };
    assert_eq!(
        read_with(&path, &options),
        vec![Request::new(1_500_000, IoKind::Write, 4096, 2048, 2), Request::new(2_000_000, IoKind::Read, 0, 1024, 3)]
    );
    let path = temp("generic2.csv", "1,0,0,4096\n");
    let options = TraceOptions {
        generic: Some("op=2,offset=3,size=4,read=1,write=0".parse().unwrap()),
        ..TraceOptions::default()
    };
    let err = workload::open(&path, &options).unwrap().requests.next().unwrap();
    assert_eq!(err.unwrap(), Request::new(0, IoKind::Write, 0, 4096, 1));
}

#[test]
fn disksim_times_are_milliseconds_and_flags_bit_0_reads() {
    let path = temp("t.disksim", "0.125000 0 1024 8 1\n2.5 0 0 1 4\n");
    assert_eq!(
        read(&path),
        vec![Request::new(125_000, IoKind::Read, 524_288, 4096, 1), Request::new(2_500_000, IoKind::Write, 0, 512, 2)]
    );
}

/// The Heimdall collection's MSR cuts have DiskSim's shape in bytes: told apart by their values
/// (offsets and sizes multiples of 512, sizes of at least 512), read in bytes.
#[test]
fn heimdall_layout_is_read_in_bytes_and_told_apart_from_disksim() {
    let path = fixture("msr_like.heimdall.trace");
    assert_eq!(detect_format(&path).unwrap(), Format::Heimdall);
    let requests = read(&path);
    assert_eq!(requests.len(), 8);
    assert_eq!(requests[1], Request::new(12_250_000, IoKind::Write, 2_147_483_648, 32_768, 2));
    assert_eq!(requests[2], Request::new(12_271_000, IoKind::Read, 2_147_516_416, 4096, 3));
    assert_eq!(requests[7], Request::new(97_350_000, IoKind::Write, 3_221_225_472, 1536, 8));
    // The same shape in sectors stays DiskSim.
    let disksim = temp("sectors.disksim", "0.125000 0 1024 8 1\n2.5 0 0 1 4\n3.0 0 2048 16 0\n");
    assert_eq!(detect_format(&disksim).unwrap(), Format::Disksim);
}

#[test]
fn a_file_without_newlines_is_refused_without_reading_it_whole() {
    let path = temp("blob.bin", &"7".repeat(5 << 20));
    let err = workload::open(&path, &TraceOptions { format: Some(Format::Mqsim), ..TraceOptions::default() })
        .unwrap()
        .requests
        .next()
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().ends_with("blob.bin:1: line longer than 4 MiB: not a text trace"), "{err}");
}

#[test]
fn a_header_line_is_passed_over() {
    let path = temp(
        "header.csv",
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166625932151588,hm,1,Read,0,512,3\n",
    );
    assert_eq!(
        read_with(&path, &TraceOptions { format: Some(Format::Msr), ..TraceOptions::default() }),
        vec![Request::new(0, IoKind::Read, 0, 512, 2)]
    );
}

#[test]
fn every_fixture_is_detected() {
    let cases = [
        ("msr_hm_1.head40.csv", Format::Msr),
        ("msr_hm_1.head40.csv.zst", Format::Msr),
        ("tpcc.mqsim.head40.trace", Format::Mqsim),
        ("fiu_homes.ssdsim_md5.head12.ascii", Format::Ssdsim),
        ("fiu_mail_cheetah.head30.blkparse", Format::Fiu),
        ("ycsb_btrfs.excerpt.blkparse.txt", Format::Blkparse),
        ("financial_like.spc", Format::Spc),
        ("msr_like.heimdall.trace", Format::Heimdall),
    ];
    for (name, format) in cases {
        assert_eq!(detect_format(fixture(name)).unwrap(), format, "{name}");
    }
    let mixed = temp("mixed.txt", "128166625932151588,hm,1,Write,371077120,49152,3126\n0,303567,3584,w,0.000000\n");
    let err = detect_format(&mixed).unwrap_err().to_string();
    assert!(err.contains("ambiguous") && err.contains("msr") && err.contains("spc"), "{err}");
}

#[test]
fn bad_lines_name_file_line_and_field() {
    let ok = "128166625932151588,hm,1,Write,0,4096,1\n";
    let cases = [
        (Format::Msr, "1,hm,1,Write,0,-4096,1", "FILE:2: field 6 (size): expected a positive integer, found \"-4096\""),
        (
            Format::Msr,
            "1,hm,1,Write,abc,4096,1",
            "FILE:2: field 5 (offset): expected a non-negative integer, found \"abc\"",
        ),
        (Format::Msr, "1,hm,1,Write,0,0,1", "FILE:2: field 6 (size): expected a positive size, found \"0\""),
        (Format::Msr, "1,hm,1,Erase,0,4096,1", "FILE:2: field 4 (type): expected Read or Write, found \"Erase\""),
        (Format::Msr, "1,hm,1,Write", "FILE:2: field 5 (offset): expected a value, found end of line"),
        (
            Format::Msr,
            "x1,hm,1,Write,0,1,1",
            "FILE:2: field 1 (timestamp): expected a non-negative integer, found \"x1\"",
        ),
    ];
    for (format, bad, want) in cases {
        assert_eq!(error(format, &format!("{ok}{bad}\n")), want);
    }
    let others = [
        (Format::Spc, "0,1,512,x,0.0", "FILE:1: field 4 (opcode): expected r or w, found \"x\""),
        (Format::Spc, "0,1,-512,w,0.0", "FILE:1: field 3 (size): expected a positive integer, found \"-512\""),
        (Format::Spc, "0,1,512,w,-1", "FILE:1: field 5 (timestamp): expected a non-negative number, found \"-1\""),
        (Format::Mqsim, "0 0 8 8 2", "FILE:1: field 5 (type): expected 0 (write) or 1 (read), found \"2\""),
        (Format::Mqsim, "0 0 8 0 1", "FILE:1: field 4 (size): expected a positive size, found \"0\""),
        (
            Format::Ssdsim,
            "0 0 8 1 0 zz",
            "FILE:1: field 6 (md5): expected 1 MD5s of 32 hex digits (32 characters), found \"zz\"",
        ),
        (Format::Disksim, "0.5 0 8 1", "FILE:1: field 5 (flags): expected a value, found end of line"),
        (Format::Heimdall, "0.5 0 4096 512 2", "FILE:1: field 5 (op): expected 1 (read) or 0 (write), found \"2\""),
        (
            Format::Heimdall,
            "0.5 0 18446744073709551615 1 0",
            "FILE:1: the request ends beyond 2^64 bytes (offset 18446744073709551615 + size 1)",
        ),
        (Format::Heimdall, "0.5 0 4096 -512 1", "FILE:1: field 4 (size): expected a positive integer, found \"-512\""),
        (
            Format::Fiu,
            "1 2 p 8 8 X 6 0 d6c75ba46e82326fefa545b57a12e221",
            "FILE:1: field 6 (op): expected R or W, found \"X\"",
        ),
        (
            Format::Fiu,
            "1 2 p 8 8 W 6 0 nothex",
            "FILE:1: field 9 (md5): expected an MD5 of 32 hex digits, found \"nothex\"",
        ),
        (
            Format::Blkparse,
            "  8,16 0 1 0.5 1 D R abc + 8 [p]",
            "FILE:1: field 8 (sector): expected a non-negative integer, found \"abc\"",
        ),
    ];
    for (format, bad, want) in others {
        assert_eq!(error(format, &format!("{bad}\n")), want, "{format}");
    }
}

#[test]
fn skipped_lines_are_counted_and_reach_the_run_result() {
    let text = "1,h,0,Write,0,4096,0\n2,h,0,Write,0,zero,0\n3,h,0,Read,0,4096,0\n4,h,0,Flush,0,1,0\n";
    let path = temp("skip.csv", text);
    let options = TraceOptions { on_bad_line: BadLinePolicy::Skip, ..TraceOptions::default() };
    let w = workload::open(&path, &options).unwrap();
    let skipped = w.skipped.clone();
    let lines: Vec<u64> = w.requests.map(|r| r.unwrap().line).collect();
    assert_eq!((lines, skipped.get()), (vec![1, 3], 2));
    let config = small_device();
    let result = ftlsim::run(&config, "pftl", workload::open(&path, &options).unwrap()).unwrap();
    assert_eq!((result.skipped_lines, result.report.host.requests), (2, 2));
}

#[test]
fn timestamps_going_backwards_follow_the_policy() {
    let text = "0 0 0 1 0\n500 0 8 1 0\n300 0 16 1 0\n900 0 24 1 0\n";
    let path = temp("order.trace", text);
    let with =
        |policy| TraceOptions { format: Some(Format::Mqsim), out_of_order: Some(policy), ..TraceOptions::default() };
    let err =
        workload::open(&path, &with(OutOfOrder::Error)).unwrap().requests.find_map(|r| r.err()).unwrap().to_string();
    assert!(err.ends_with("order.trace:3: timestamp goes backwards: 300 ns is earlier than the previous request's 500 ns (use --out-of-order sort or keep)"), "{err}");
    let arrivals = |policy| read_with(&path, &with(policy)).iter().map(|r| (r.arrival_ns, r.line)).collect::<Vec<_>>();
    assert_eq!(arrivals(OutOfOrder::Keep), vec![(0, 1), (500, 2), (500, 3), (900, 4)]);
    assert_eq!(arrivals(OutOfOrder::Sort { window: 2 }), vec![(0, 1), (300, 3), (500, 2), (900, 4)]);
    // A window too small to repair the order is an error, not a silent reorder.
    let late = temp("late.trace", "100 0 0 1 0\n200 0 0 1 0\n300 0 0 1 0\n50 0 0 1 0\n");
    let err = workload::open(
        &late,
        &TraceOptions {
            format: Some(Format::Mqsim),
            out_of_order: Some(OutOfOrder::Sort { window: 1 }),
            ..TraceOptions::default()
        },
    )
    .unwrap()
    .requests
    .find_map(|r| r.err())
    .unwrap()
    .to_string();
    assert!(err.contains("late.trace:4:") && err.contains("sort window of 1"), "{err}");
}

#[test]
fn offsets_past_the_device_are_refused_with_their_line() {
    let config = small_device();
    let capacity = config.device.logical_pages() as u64 * config.device.geometry.page_size as u64;
    let path = temp("far.csv", &format!("1,h,0,Write,0,4096,0\n2,h,0,Write,{capacity},4096,0\n"));
    let err =
        ftlsim::run(&config, "pftl", workload::open(&path, &TraceOptions::default()).unwrap()).unwrap_err().to_string();
    assert!(err.contains("far.csv:2:") && err.contains("beyond the exported capacity"), "{err}");
}

#[test]
fn generated_streams_survive_every_writable_format() {
    let spec: SynthSpec = "requests=3000,read=0.4,addr=zipf:0.8@1+seq:2@1+hotcold:0.8:0.2@1,rsize=uniform:512:64k,wsize=mean:12k,arrival=poisson:3000,seed=9".parse().unwrap();
    let original: Vec<Request> = spec.workload(8 << 30).unwrap().requests.map(|r| r.unwrap()).collect();
    for format in [Format::Msr, Format::Spc, Format::Mqsim] {
        for ext in ["txt", "gz", "zst"] {
            let path = temp(&format!("roundtrip.{format}.{ext}"), "");
            let mut out = TraceWriter::create(&path, format).unwrap();
            for r in &original {
                out.write(r).unwrap();
            }
            out.finish().unwrap();
            // Read back by detection, as a user would.
            assert_eq!(read(&path), original, "{format} .{ext}");
        }
    }
}

/// Real captures carry message lines (`m`, from the I/O scheduler) and unplug-timer events
/// (`UT`): neither is I/O, so both are passed over; an unknown action is still an error.
#[test]
fn blkparse_passes_over_messages_and_unplug_timer_events() {
    let text = "  8,0    1        1     0.000000000  1234  Q   R 2048 + 8 [fio]\n\
                  8,0    1        0     0.000001000  1234  m   N cfq1234 insert_request\n\
                  8,0    1        2     0.000002000  1234  UT  N [fio] 1\n\
                  8,0    1        3     0.000003000  1234  D   R 2048 + 8 [fio]\n";
    let path = temp("messages.blkparse", text);
    let options = TraceOptions { format: Some(Format::Blkparse), ..TraceOptions::default() };
    let requests = read_with(&path, &options);
    assert_eq!(requests, [Request::new(3_000, IoKind::Read, 2048 * 512, 8 * 512, 4)]);
    // The three other events are counted as lines without a request (`trace stats` shows them).
    let workload = workload::open(&path, &options).unwrap();
    let passed_over = workload.passed_over.clone();
    assert_eq!(workload.requests.count(), 1);
    assert_eq!(passed_over.get(), 3);
    let err = error(Format::Blkparse, "  8,0    1        1     0.000000000  1234  XY  R 2048 + 8 [fio]\n");
    assert!(err.contains("field 6 (action)") && err.contains("XY"), "{err}");
}
