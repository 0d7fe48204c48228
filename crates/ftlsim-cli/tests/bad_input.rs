//! Bad input end to end: every row runs the `ftlsim` binary on one broken input and expects exit
//! code 2, one line on stderr that starts with "error" and names what is wrong, no panic, and
//! nothing on stdout (no partial result). Add a case with one row.

use std::path::PathBuf;
use std::process::Command;

struct Case {
    name: &'static str,
    /// Arguments; `{dir}` is replaced by the case's scratch directory.
    args: &'static [&'static str],
    /// Files written to the scratch directory first: (name, content).
    files: &'static [(&'static str, &'static str)],
    /// Every one of these must appear in the error line.
    expect: &'static [&'static str],
}

/// A small device, so a case that does start a run finishes at once.
const SMALL: &[&str] = &[
    "--set",
    "device.geometry.blocks_per_plane=64",
    "--set",
    "device.geometry.pages_per_block=16",
    "--set",
    "device.overprovisioning=0.125",
    "--quiet",
];

const CASES: &[Case] = &[
    // Traces.
    Case {
        name: "missing trace file",
        args: &["run", "--trace", "{dir}/missing.trace"],
        files: &[],
        expect: &["missing.trace"],
    },
    Case {
        name: "--columns line ending before a mapped column",
        args: &["trace", "stats", "{dir}/c.csv", "--columns", "time=1,op=2,offset=5,size=8"],
        files: &[("c.csv", "1,R,x,y\n")],
        expect: &["c.csv:1", "field 5 (offset)", "end of line"],
    },
    Case {
        name: "sweep --columns with a column that is not a number",
        args: &["sweep", "--ftl", "pftl", "--trace", "{dir}/c.csv", "--columns", "op=2,offset=x,size=4", "--quiet"],
        files: &[("c.csv", "1,R,0,4096\n")],
        expect: &["columns", "offset", "\"x\""],
    },
    Case {
        name: "trace convert onto its own input",
        args: &["trace", "convert", "{dir}/t.csv", "-o", "{dir}/t.csv", "--to", "msr"],
        files: &[("t.csv", "128166372003061629,hm,0,Write,8192,4096,1331\n")],
        expect: &["t.csv", "is the input trace"],
    },
    Case {
        name: "synthetic bursts shorter than one request",
        args: &["run", "--synthetic", "p001-f1,scale=0.001,burst=0.5:100"],
        files: &[],
        expect: &["synthetic.burst", "at least 1 request"],
    },
    Case {
        name: "bench --only matching no scenario",
        args: &["bench", "--only", "nosuch", "--requests", "10"],
        files: &[],
        expect: &["--only", "nosuch", "no scenario"],
    },
    Case {
        name: "bench --compare with a recorded figure that is not a number",
        args: &["bench", "--only", "pftl mlc8g sequential", "--requests", "10", "--compare", "{dir}/perf.md"],
        files: &[(
            "perf.md",
            "## Recorded figures\n\n| ftl | scenario | preset | M host pages per CPU s | M flash ops per CPU s | state B per page |\n|---|---|---|---|---|---|\n| pftl | sequential reads | mlc8g | 15.0 | fast | 12.16 |\n",
        )],
        expect: &["perf.md", "line 5", "M flash ops per CPU s", "fast"],
    },
    // Summary pages.
    Case {
        name: "a block-mapped scheme on a device with summary pages",
        args: &["run", "--preset", "ssd16", "--ftl", "bast", "--set", "gc.background_free_blocks=6"],
        files: &[],
        expect: &["device.geometry.summary_page", "bast", "block-mapped"],
    },
    // P/E suspension.
    Case {
        name: "P/E suspension under the FIFO scheduler",
        args: &[
            "run",
            "--preset",
            "ssd16-ch3-mlc",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.scheduler=\"fifo\"",
            "--set",
            "device.timing.suspension.erase=true",
        ],
        files: &[],
        expect: &["device.timing.suspension", "rps"],
    },
    Case {
        name: "ISPP phases that do not add up to the program time",
        args: &[
            "run",
            "--preset",
            "ssd16-ch3-slc",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.phases.verify_us=9.0",
        ],
        files: &[],
        expect: &["device.timing.phases.ispp_iterations", "program_us"],
    },
    Case {
        name: "a negative write-wait limit",
        args: &[
            "run",
            "--preset",
            "ssd16-ch3-mlc",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.suspension.max_write_wait_us=-5.0",
        ],
        files: &[],
        expect: &["device.timing.suspension.max_write_wait_us", ">= 0"],
    },
    Case {
        name: "a write-wait limit that is not a number",
        args: &[
            "run",
            "--preset",
            "ssd16-ch3-mlc",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.suspension.max_write_wait_us=\"soon\"",
        ],
        files: &[],
        expect: &["device.timing.suspension.max_write_wait_us"],
    },
    // DiffECC.
    Case {
        name: "DiffECC write mode of 3 segments",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.policy=\"fixed\"",
            "--set",
            "device.timing.diffecc.segments=3",
        ],
        files: &[],
        expect: &["device.timing.diffecc.segments", "1, 2, 4 or 8"],
    },
    Case {
        name: "DiffECC idle window of 0 ms",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.window_ms=0.0",
        ],
        files: &[],
        expect: &["device.timing.diffecc.window_ms", "> 0"],
    },
    Case {
        name: "DiffECC slower modes programming faster",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.program_us=[500.0, 538.0, 520.0, 754.0]",
        ],
        files: &[],
        expect: &["device.timing.diffecc.program_us", "rise"],
    },
    Case {
        name: "DiffECC baseline mode off the device's program time",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.latency.program_us=200.0",
        ],
        files: &[],
        expect: &["device.timing.diffecc.program_us", "device.latency.program_us"],
    },
    Case {
        name: "DiffECC negative decode time",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.decode_us=[41.2, -1.0, 11.25, 5.78]",
        ],
        files: &[],
        expect: &["device.timing.diffecc.decode_us", ">= 0"],
    },
    Case {
        name: "DiffECC unknown policy",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.policy=\"greedy\"",
        ],
        files: &[],
        expect: &["device.timing.diffecc.policy", "greedy"],
    },
    Case {
        name: "DiffECC unknown field",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.diffecc.segmnts=8",
        ],
        files: &[],
        expect: &["device.timing.diffecc", "segmnts"],
    },
    Case {
        name: "DiffECC under the FIFO scheduler",
        args: &[
            "run",
            "--preset",
            "ssd16-ch2",
            "--set",
            "gc.background_free_blocks=0",
            "--set",
            "device.timing.scheduler=\"fifo\"",
        ],
        files: &[],
        expect: &["device.timing.diffecc", "rps"],
    },
    Case {
        name: "diffecc-codes with 2 program times",
        args: &["diffecc-codes", "--program-us", "500,538"],
        files: &[],
        expect: &["--program-us", "4 times"],
    },
    // Configuration files.
    Case {
        name: "missing config file",
        args: &["run", "--config", "{dir}/nope.toml"],
        files: &[],
        expect: &["nope.toml", "cannot read"],
    },
    Case { name: "config is a directory", args: &["run", "--config", "{dir}"], files: &[], expect: &["cannot read"] },
    Case {
        name: "malformed TOML",
        args: &["run", "--config", "{dir}/bad.toml"],
        files: &[("bad.toml", "device = [\n")],
        expect: &["bad.toml"],
    },
    Case {
        name: "unknown field",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[device.geometry]\nplaens = 2\n")],
        expect: &["device.geometry", "plaens"],
    },
    Case {
        name: "wrong type",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[gc]\nfree_blocks_low = \"four\"\n")],
        expect: &["gc.free_blocks_low"],
    },
    Case {
        name: "value out of range",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[host]\ntime_scale = 0\n")],
        expect: &["host.time_scale"],
    },
    Case {
        name: "huge threshold",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[gc]\nfree_blocks_low = 4294967295\n")],
        expect: &["gc.free_blocks_low"],
    },
    Case {
        name: "huge geometry",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[(
            "c.toml",
            "[device.geometry]\nchannels = 4294967295\nchips_per_channel = 4294967295\ndies_per_chip = 4294967295\n",
        )],
        expect: &["device.geometry", "2^32"],
    },
    Case {
        name: "empty table name",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "['']\n")],
        expect: &["config", "unknown field ``"],
    },
    Case {
        name: "unknown preset in TOML",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "preset = \"nope\"\n")],
        expect: &["nope", "mlc8g"],
    },
    Case {
        name: "unknown FTL table field",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[ftl.pftl]\ncache = 3\n")],
        expect: &["ftl.pftl", "cache"],
    },
    Case {
        name: "bad power-loss spec in TOML",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[check]\npower_loss_at = \"soon\"\n")],
        expect: &["check.power_loss_at", "soon"],
    },
    // Names.
    Case {
        name: "unknown FTL",
        args: &["run", "--ftl", "nope"],
        files: &[],
        expect: &["unknown FTL \"nope\"", "pftl"],
    },
    Case {
        name: "cache larger than the map",
        args: &["run", "--ftl", "dftl", "--set", "ftl.dftl.cache_bytes=99999999999"],
        files: &[],
        expect: &["ftl.dftl.cache_bytes", "larger than the map"],
    },
    Case {
        name: "cache larger than the map (whole pages)",
        args: &["run", "--ftl", "sftl", "--set", "ftl.sftl.cache_bytes=99999999999"],
        files: &[],
        expect: &["ftl.sftl.cache_bytes", "larger than the map"],
    },
    Case { name: "unknown FTL in compare", args: &["compare", "--ftl", "pftl,nope"], files: &[], expect: &["nope"] },
    Case { name: "unknown preset", args: &["run", "--preset", "nope"], files: &[], expect: &["nope", "mlc8g"] },
    Case { name: "unknown list", args: &["list", "bogus"], files: &[], expect: &["bogus"] },
    Case { name: "unknown command", args: &["frobnicate"], files: &[], expect: &["frobnicate"] },
    // Flags.
    Case {
        name: "--set without =",
        args: &["run", "--set", "gc.policy"],
        files: &[],
        expect: &["gc.policy", "key=value"],
    },
    Case {
        name: "--set bad enum",
        args: &["run", "--set", "gc.policy=\"lifo\""],
        files: &[],
        expect: &["gc.policy", "lifo"],
    },
    Case { name: "--set empty key", args: &["run", "--set", "gc..policy=1"], files: &[], expect: &["empty key"] },
    Case { name: "--json with --csv", args: &["run", "--json", "--csv"], files: &[], expect: &["--json", "--csv"] },
    Case {
        name: "--check not a number",
        args: &["run", "--check", "often"],
        files: &[],
        expect: &["--check", "often"],
    },
    Case { name: "--seed negative", args: &["run", "--seed", "-1"], files: &[], expect: &["-1"] },
    Case {
        name: "--requests not a number",
        args: &["run", "--requests", "lots"],
        files: &[],
        expect: &["--requests", "lots"],
    },
    Case {
        name: "--set bad GTD span",
        args: &["run", "--set", "device.gtd_span=\"both\""],
        files: &[],
        expect: &["device.gtd_span", "both"],
    },
    Case {
        name: "FTL parameter out of its range",
        args: &["run", "--ftl", "dftl", "--set", "ftl.dftl.protected_fraction=1.5"],
        files: &[],
        expect: &["ftl.dftl.protected_fraction", "must be in [0, 1]", "1.5"],
    },
    Case {
        name: "Delta-FTL compression_mean out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.compression_mean=1.5"],
        files: &[],
        expect: &["ftl.delta.compression_mean", "1.5"],
    },
    Case {
        name: "Delta-FTL compression_sigma out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.compression_sigma=-0.1"],
        files: &[],
        expect: &["ftl.delta.compression_sigma", "-0.1"],
    },
    Case {
        name: "Delta-FTL hot_threshold out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.hot_threshold=0"],
        files: &[],
        expect: &["ftl.delta.hot_threshold", "0"],
    },
    Case {
        name: "Delta-FTL cache_entries out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.cache_entries=0"],
        files: &[],
        expect: &["ftl.delta.cache_entries", "0"],
    },
    Case {
        name: "Delta-FTL protected_fraction out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.protected_fraction=2"],
        files: &[],
        expect: &["ftl.delta.protected_fraction", "2"],
    },
    Case {
        name: "Delta-FTL dla_space_share out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.dla_space_share=-1"],
        files: &[],
        expect: &["ftl.delta.dla_space_share", "-1"],
    },
    Case {
        name: "Delta-FTL trace_content not a flag",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.trace_content=1"],
        files: &[],
        expect: &["ftl.delta.trace_content", "1"],
    },
    Case {
        name: "Delta-FTL cold_scan_every out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.cold_scan_every=-5"],
        files: &[],
        expect: &["ftl.delta.cold_scan_every", "-5"],
    },
    Case {
        name: "Delta-FTL bypass not a flag",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.bypass=\"yes\""],
        files: &[],
        expect: &["ftl.delta.bypass", "yes"],
    },
    Case {
        name: "Delta-FTL bypass_window out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.bypass_window=0"],
        files: &[],
        expect: &["ftl.delta.bypass_window", "0"],
    },
    Case {
        name: "Delta-FTL bypass_hysteresis out of range",
        args: &["run", "--ftl", "delta", "--set", "ftl.delta.bypass_hysteresis=1.5"],
        files: &[],
        expect: &["ftl.delta.bypass_hysteresis", "1.5"],
    },
    Case {
        name: "misspelt FTL table in a config file",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[ftl.dtfl]\ncache_bytes = 4096\n")],
        expect: &["ftl.dtfl", "did you mean \"dftl\""],
    },
    Case {
        name: "--set on an FTL that does not exist",
        args: &["run", "--set", "ftl.foo.x=1"],
        files: &[],
        expect: &["ftl.foo", "no FTL is called \"foo\""],
    },
    Case {
        name: "spare area too small for the FTL's spare fields",
        args: &["run", "--ftl", "dftl", "--set", "device.geometry.spare_usable=12"],
        files: &[],
        expect: &["device.geometry.spare_usable", "dftl writes 13 B", "page sequence number 4 B", "only 12 B"],
    },
    Case {
        name: "a misspelt configuration key",
        args: &["run", "--set", "gc.polcy=greedy"],
        files: &[],
        expect: &["gc.polcy", "did you mean \"policy\""],
    },
    Case {
        name: "a misspelt configuration table in a file",
        args: &["run", "--config", "{dir}/c.toml"],
        files: &[("c.toml", "[gcc]\npolicy = \"greedy\"\n")],
        expect: &["gcc", "did you mean \"gc\""],
    },
    Case {
        name: "a spare area of 4 GiB",
        args: &["run", "--set", "device.geometry.spare_size=4294967295"],
        files: &[],
        expect: &["device.geometry.spare_size", "at most 65536 bytes"],
    },
    Case {
        name: "a log-block FTL's unknown parameter",
        args: &["run", "--ftl", "fast", "--set", "ftl.fast.log_rati=0.1"],
        files: &[],
        expect: &["ftl.fast.log_rati", "did you mean \"log_ratio\""],
    },
    Case {
        name: "a log area that does not fit beside the data blocks",
        args: &["run", "--ftl", "bast", "--set", "ftl.bast.log_ratio=0.5"],
        files: &[],
        expect: &["ftl.bast.log_ratio", "64 log blocks", "more than the device's 128"],
    },
    Case {
        name: "a Heimdall line with an unknown op",
        args: &["trace", "stats", "{dir}/t.trace", "--format", "heimdall"],
        files: &[("t.trace", "0.000 0 4096 512 0\n0.500 0 4096 512 7\n")],
        expect: &["t.trace:2", "field 5 (op)", "expected 1 (read) or 0 (write)", "\"7\""],
    },
    Case {
        name: "a device too large for the memory a run may take",
        args: &["run", "--set", "device.geometry.channels=10000", "--max-memory", "100000000"],
        files: &[],
        expect: &["device.geometry", "about 0.3 GiB", "more than the 0.1 GiB available", "--max-memory"],
    },
    Case {
        name: "aging a device far beyond a steady state",
        args: &["run", "--set", "precondition.mode=\"age\"", "--set", "precondition.age_factor=1e300"],
        files: &[],
        expect: &["precondition.age_factor", "must be in [0, 64]", "1e300"],
    },
    Case {
        name: "a sequentially written share beyond the logical space",
        args: &["run", "--set", "precondition.fill_fraction=1.3"],
        files: &[],
        expect: &["precondition.fill_fraction", "must be in (0, 1]", "1.3"],
    },
    Case {
        name: "aging overwrites outside what was written",
        args: &[
            "run",
            "--set",
            "precondition.mode=\"age\"",
            "--set",
            "precondition.fill_fraction=0.7",
            "--set",
            "precondition.age_span=0.9",
        ],
        files: &[],
        expect: &["precondition.age_span", "fill_fraction = 0.7", "0.9"],
    },
    Case {
        name: "a warm-up longer than the workload",
        args: &["run", "--requests", "50", "--set", "precondition.warm_up_requests=80"],
        files: &[],
        expect: &["precondition.warm_up_requests", "ended after 50 requests", "warm-up of 80"],
    },
    Case {
        name: "--set unknown program order",
        args: &["run", "--set", "device.program_order=\"random\""],
        files: &[],
        expect: &["device.program_order", "random", "sequential", "any-free-page"],
    },
    Case {
        name: "latency log in a directory that does not exist",
        args: &["run", "--latency-log", "{dir}/no/such/dir/latencies.csv"],
        files: &[],
        expect: &["latencies.csv", "cannot create"],
    },
    Case {
        name: "GC with per-block counters only under an FTL that cannot tell a current page",
        args: &["run", "--ftl", "optimal", "--set", "gc.validity=\"counters\""],
        files: &[],
        expect: &["gc.validity", "optimal cannot tell GC whether a page is current"],
    },
    Case {
        name: "ILog under an FTL that cannot tell a current page",
        args: &["run", "--ftl", "optimal", "--set", "gc.validity=\"ilog\"", "--set", "gc.ilog_pages=16"],
        files: &[],
        expect: &["gc.validity", "\"ilog\"", "optimal cannot tell GC whether a page is current"],
    },
    Case {
        name: "ILog queue smaller than one block's flags",
        args: &["run", "--set", "gc.validity=\"ilog\"", "--set", "gc.ilog_queue_bytes=4"],
        files: &[],
        expect: &["gc.ilog_queue_bytes", "4 B", "(5 B)"],
    },
    Case {
        name: "ILog with no invalidation page",
        args: &["run", "--set", "gc.validity=\"ilog\"", "--set", "gc.ilog_pages=0"],
        files: &[],
        expect: &["gc.ilog_pages", "128 blocks", "per page", "found 0"],
    },
    Case {
        name: "ILog with more invalidation pages than LIPNs can number",
        args: &["run", "--set", "gc.validity=\"ilog\"", "--set", "gc.ilog_pages=70000"],
        files: &[],
        expect: &["gc.ilog_pages", "at most 65534", "70000"],
    },
    Case {
        name: "ILog pages as a negative number",
        args: &["run", "--set", "gc.validity=\"ilog\"", "--set", "gc.ilog_pages=-1"],
        files: &[],
        expect: &["gc.ilog_pages"],
    },
    Case {
        name: "ILog's pages leave no GC reserve on the small default device",
        args: &["run", "--set", "gc.validity=\"ilog\""],
        files: &[],
        expect: &["device.overprovisioning", "blocks of 256 invalidation pages (gc.ilog_pages)"],
    },
    Case {
        name: "ILog's stream leaves no GC reserve",
        args: &["run", "--ftl", "dftl", "--set", "gc.validity=\"ilog\"", "--set", "device.logical_pages=2000"],
        files: &[],
        expect: &["device.logical_pages", "spare blocks"],
    },
    Case {
        name: "spare enough for PFTL, not for a demand FTL's translation pages",
        args: &["run", "--ftl", "dftl", "--set", "device.logical_pages=1952"],
        files: &[],
        expect: &["device.logical_pages", "6 spare blocks", "translation pages"],
    },
    Case {
        name: "absurd latency",
        args: &["run", "--set", "device.latency.read_us=1e300"],
        files: &[],
        expect: &["device.latency.read_us", "1e300"],
    },
    Case {
        name: "absurd time scale",
        args: &["run", "--set", "host.time_scale=1e-300"],
        files: &[],
        expect: &["host.time_scale"],
    },
    Case {
        name: "scale policy without span",
        args: &["run", "--set", "host.address_policy=\"scale\""],
        files: &[],
        expect: &["host.scale_span_bytes"],
    },
    Case {
        name: "power loss at 0",
        args: &["run", "--power-loss-at", "0"],
        files: &[],
        expect: &["check.power_loss_at", "positive"],
    },
    Case {
        name: "power loss list typo",
        args: &["run", "--power-loss-at", "5,,9"],
        files: &[],
        expect: &["check.power_loss_at", "5,,9"],
    },
    Case {
        name: "more random power losses than requests",
        args: &["run", "--power-loss-at", "random:5:2"],
        files: &[],
        expect: &["do not fit"],
    },
    Case {
        name: "random power losses beyond a short stream",
        args: &["run", "--requests", "3", "--power-loss-at", "random:4"],
        files: &[],
        expect: &["3 requests"],
    },
    Case {
        name: "power loss after the end",
        args: &["run", "--requests", "20", "--power-loss-at", "100"],
        files: &[],
        expect: &["after request 100 never happen", "20 requests"],
    },
    Case {
        name: "power losses a short trace cannot hold, refused before the run",
        args: &["run", "--trace", "{dir}/t.csv", "--power-loss-at", "random:3"],
        files: &[(
            "t.csv",
            "128166372003061629,hm,0,Write,8192,4096,1331\n128166372003061630,hm,0,Read,8192,4096,1331\n",
        )],
        expect: &["check.power_loss_at", "3 distinct power losses", "2 requests"],
    },
];

fn scratch(case: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("bad_input")
        .join(case.replace(|c: char| !c.is_alphanumeric(), "_"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_bad_input_exits_2_with_one_line_naming_the_problem() {
    let mut failures = Vec::new();
    for case in CASES {
        let dir = scratch(case.name);
        for (name, content) in case.files {
            std::fs::write(dir.join(name), content).unwrap();
        }
        let args: Vec<String> = case.args.iter().map(|a| a.replace("{dir}", dir.to_str().unwrap())).collect();
        let is_run = matches!(args.first().map(String::as_str), Some("run" | "compare"));
        let extra: &[&str] = if is_run { SMALL } else { &[] };
        let out = Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(&args).args(extra).output().expect("ftlsim runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut problems = Vec::new();
        if out.status.code() != Some(2) {
            problems.push(format!("exit code {:?}", out.status.code()));
        }
        if lines.len() != 1 || !lines[0].starts_with("error") {
            problems.push(format!("stderr is not one error line: {stderr:?}"));
        }
        if stderr.contains("panicked") {
            problems.push("panicked".into());
        }
        if !out.stdout.is_empty() {
            problems.push(format!("stdout not empty: {:?}", String::from_utf8_lossy(&out.stdout)));
        }
        for part in case.expect {
            if !stderr.contains(part) {
                problems.push(format!("{part:?} missing from {stderr:?}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{} ({}): {}", case.name, args.join(" "), problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}
