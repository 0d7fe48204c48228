//! What the conformance suite and the fuzzers share: small test devices, the per-FTL overrides
//! such devices need, and decoders that turn fuzz bytes into a configuration plus a request
//! stream, or into a TOML document (docs/correctness.md).

use crate::config::{Config, ConfigBuilder};
use crate::error::{Result, SimError};
use crate::flash::Lpn;
use crate::ftl::{ftl_info, FtlInfo, REGISTRY};
use crate::host::PageRequest;
use crate::workload::IoKind;
use crate::Simulation;

/// A quarter of the device's mapping entries (at least 2): the mapping caches of the test
/// devices hold about that much, so evictions, write-backs, fetches and their interplay with GC
/// and power loss are exercised (the papers' default sizes would hold the whole map of a test
/// device). For the registry entries' `test_overrides`.
pub fn quarter_map(config: &Config) -> u64 {
    (config.device.logical_pages() as u64 / 4).max(2)
}

/// Bytes holding `entries` entries of `bits` bits.
pub fn bytes_of(entries: u64, bits: u64) -> u64 {
    (entries * bits).div_ceil(8)
}

/// Applies the `test_overrides` of a scheme's registry entry to `config`, under the parameters
/// already set, and validates it.
fn with_overrides(info: Option<&FtlInfo>, mut config: Config) -> Result<Config> {
    if let Some(info) = info {
        // A scheme whose spare fields outgrow the small pages' 16 B gets the spare area it needs.
        let needed = info.spare_layout.bytes();
        let geometry = &mut config.device.geometry;
        if needed > geometry.spare_usable_bytes() {
            (geometry.spare_size, geometry.spare_usable) = (geometry.spare_size.max(needed), Some(needed));
        }
        let sets = (info.test_overrides)(&config);
        let table = config.ftl.entry(info.name).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(table) = table else {
            return Err(SimError::config(format!("ftl.{}", info.name), "must be a table"));
        };
        for (key, value) in sets {
            table.entry(key).or_insert(toml::Value::Integer(value as i64));
        }
    }
    config.validate()?;
    Ok(config)
}

/// A small device: `dies` dies of `planes` planes, `blocks_per_plane` blocks of
/// `pages_per_block` 512-byte pages (so a translation page maps 128 LPNs and even a tiny device
/// has several), greedy GC at one free block per unit, no preconditioning, oracle on, full
/// invariants every 32 requests, the FTL's `test_overrides`. `extra` is applied last.
pub fn test_device(
    ftl: &str,
    dies: u32,
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    extra: &[String],
) -> Result<Config> {
    let info = REGISTRY.iter().find(|f| f.name == ftl);
    with_overrides(info, base_device(dies, planes, blocks_per_plane, pages_per_block, extra)?)
}

/// [`test_device`] for a scheme given by its registry entry (registered or not).
pub fn test_device_for(
    info: &FtlInfo,
    dies: u32,
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    extra: &[String],
) -> Result<Config> {
    with_overrides(Some(info), base_device(dies, planes, blocks_per_plane, pages_per_block, extra)?)
}

fn base_device(
    dies: u32,
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    extra: &[String],
) -> Result<Config> {
    let mut b = ConfigBuilder::new();
    for set in [
        format!("device.geometry.dies_per_chip={dies}"),
        format!("device.geometry.planes_per_die={planes}"),
        format!("device.geometry.blocks_per_plane={blocks_per_plane}"),
        format!("device.geometry.pages_per_block={pages_per_block}"),
        "device.geometry.page_size=512".into(),
        "device.geometry.spare_size=16".into(),
        "device.geometry.spare_usable=16".into(),
        "device.overprovisioning=0.25".into(),
        "gc.free_blocks_low=1".into(),
        "precondition.mode=\"none\"".into(),
        "check.invariants_every=32".into(),
    ] {
        b = b.set(&set)?;
    }
    for set in extra {
        b = b.set(set)?;
    }
    b.build()
}

/// [`test_device`] with the fewest spare blocks `ftl` accepts (`FtlInfo::spare_blocks_needed`)
/// plus `extra_spare` blocks: the most logical pages it can export.
pub fn least_spare_device(
    ftl: &str,
    dies: u32,
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    extra_spare: u32,
    extra: &[String],
) -> Result<Config> {
    least_spare_device_for(ftl_info(ftl)?, dies, planes, blocks_per_plane, pages_per_block, extra_spare, extra)
}

/// [`least_spare_device`] for a scheme given by its registry entry (registered or not).
pub fn least_spare_device_for(
    info: &FtlInfo,
    dies: u32,
    planes: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    extra_spare: u32,
    extra: &[String],
) -> Result<Config> {
    // One logical page passes validation on any test device; the loop below sets the real count.
    let extra: Vec<String> =
        std::iter::once("device.logical_pages=1".to_string()).chain(extra.iter().cloned()).collect();
    let mut config = base_device(dies, planes, blocks_per_plane, pages_per_block, &extra)?;
    let ftl = info.name;
    let blocks = config.device.geometry.total_blocks() as u64;
    // The translation pages an FTL needs shrink with the logical pages: shrink until it fits.
    let mut logical = config.device.geometry.data_pages();
    loop {
        config.device.logical_pages = Some(logical);
        let spare = (info.spare_blocks_needed)(&config) + extra_spare as u64;
        if spare >= blocks {
            return Err(SimError::config(
                "device.geometry.blocks_per_plane",
                format!("{blocks} blocks leave no room for data with {ftl}, which needs {spare} spare blocks"),
            ));
        }
        let fits = (blocks - spare) * config.device.geometry.data_pages_per_block() as u64;
        if fits >= logical as u64 {
            return with_overrides(Some(info), config);
        }
        logical = fits as u32;
    }
}

/// Reads fuzz bytes one at a time; past the end every read is 0.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }
    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.next() as usize % choices.len()]
    }
}

/// One fuzz case: a registered FTL, a valid small configuration and a request stream.
#[derive(Debug, Clone)]
pub struct FuzzCase {
    pub ftl: &'static str,
    pub config: Config,
    pub requests: Vec<PageRequest>,
    /// After which requests (1-based) to simulate a power loss.
    pub power_losses: Vec<u64>,
}

impl FuzzCase {
    /// Decodes any bytes: 7 header bytes choose the FTL, the device (dies, planes, blocks,
    /// pages per block, page size, spare blocks, GC policy and threshold, allocation unit, block
    /// layout, preconditioning) and the seed, then every 4 bytes make one request (kind, first
    /// LPN, pages), one kind in 16 being a power loss. The configuration is valid by construction
    /// (an error can only come from clashing `test_overrides`).
    pub fn decode(data: &[u8]) -> Result<FuzzCase> {
        let mut b = Bytes(data);
        let ftl = REGISTRY[b.next() as usize % REGISTRY.len()].name;
        let shape = b.next();
        let dies = 1 + (shape & 1) as u32;
        let planes = 1 + ((shape >> 1) & 1) as u32;
        let per_plane_units = shape & 4 != 0;
        let free_low = 1 + ((shape >> 5) & 1) as u32;
        let page_size = b.pick(&[512, 1024, 4096]);
        let pages_per_block = b.pick(&[4, 8, 16, 32]);
        let mut blocks_per_plane = 6 + b.next() as u32 % 19;
        // Spare blocks: from the least the FTL accepts up to a quarter of the device more.
        let extra_spare = b.next() as u32 % (dies * planes * blocks_per_plane / 4);
        let extra = vec![
            format!("device.allocation_unit=\"{}\"", if per_plane_units { "plane" } else { "die" }),
            format!("device.geometry.block_layout=\"{}\"", if shape & 8 != 0 { "contiguous" } else { "interleaved" }),
            format!("gc.policy=\"{}\"", if shape & 16 != 0 { "cost-benefit" } else { "greedy" }),
            format!("gc.free_blocks_low={free_low}"),
            format!("precondition.mode=\"{}\"", ["none", "fill", "age", "none"][(shape >> 6) as usize]),
            "precondition.age_factor=0.5".into(),
            format!("device.geometry.page_size={page_size}"),
        ];
        // A device too small for the FTL's reserve grows until the FTL fits.
        let mut config = loop {
            match least_spare_device(ftl, dies, planes, blocks_per_plane, pages_per_block, extra_spare, &extra) {
                Err(SimError::Config { field, .. }) if field == "device.geometry.blocks_per_plane" => {
                    blocks_per_plane += 1
                }
                other => break other?,
            }
        };
        config.seed = b.next() as u64;
        let logical = config.device.logical_pages();
        let mut requests = Vec::new();
        let mut power_losses = Vec::new();
        while !b.0.is_empty() {
            let (kind, lo, hi, len) = (b.next(), b.next(), b.next(), b.next());
            let kind = match kind % 16 {
                0..=6 => IoKind::Write,
                7..=11 => IoKind::Read,
                12..=14 => IoKind::Trim,
                _ => {
                    power_losses.push(requests.len() as u64);
                    continue;
                }
            };
            let first = u16::from_le_bytes([lo, hi]) as u32 % logical;
            let pages = (1 + len as u32 % 8).min(logical - first);
            requests.push(PageRequest {
                arrival: requests.len() as u64 * 1000,
                kind,
                first: Lpn::new(first),
                pages,
                span: crate::host::SectorSpan::WHOLE,
            });
        }
        power_losses.retain(|&p| p > 0);
        Ok(FuzzCase { ftl, config, requests, power_losses })
    }

    /// Runs the case under the oracle (every read), the full invariants (every 32 requests and at
    /// the end) and its power losses, plus one at the end. An FTL that declares recovery
    /// unsupported is run without power losses. An error comes with where it happened.
    pub fn run(&self) -> std::result::Result<(), (String, SimError)> {
        fn at(what: &str) -> impl FnOnce(SimError) -> (String, SimError) + '_ {
            move |e| (what.to_string(), e)
        }
        let mut sim = Simulation::new(&self.config, self.ftl).map_err(at("building"))?;
        sim.set_power_loss_points(self.power_losses.clone());
        sim.precondition().map_err(at("preconditioning"))?;
        for (i, req) in self.requests.iter().enumerate() {
            match sim.serve(*req) {
                Err(SimError::RecoveryUnsupported { .. }) => sim.set_power_loss_points(Vec::new()),
                other => other.map_err(at(&format!("request {i} {req:?}")))?,
            }
        }
        sim.check_invariants().map_err(at("the end"))?;
        match sim.power_loss() {
            Err(SimError::RecoveryUnsupported { .. }) => Ok(()),
            other => other.map_err(at("the final power loss")),
        }
    }
}

/// Cases the fuzzers skip: (FTL, which of its cases): open, reported bugs that would hide every
/// other finding (docs/correctness.md lists them). Remove a line with its fix.
pub const FUZZ_KNOWN_FAILURES: &[(&str, CaseFilter)] = &[];

/// Selects the fuzz cases a [`FUZZ_KNOWN_FAILURES`] line applies to.
pub type CaseFilter = fn(&FuzzCase) -> bool;

/// Runs fuzz bytes through [`FuzzCase`]; `Err` is a finding. A configuration an FTL rejects with
/// a field-named error is not one.
pub fn fuzz_requests(data: &[u8]) -> std::result::Result<(), String> {
    let case = match FuzzCase::decode(data) {
        Ok(case) => case,
        Err(SimError::Config { field, .. }) if !field.is_empty() => return Ok(()),
        Err(e) => return Err(format!("decoding: {e}")),
    };
    if FUZZ_KNOWN_FAILURES.iter().any(|(ftl, applies)| *ftl == case.ftl && applies(&case)) {
        return Ok(());
    }
    match case.run() {
        Err((_, SimError::Config { field, .. })) if field.starts_with("ftl.") => Ok(()),
        Err((at, e)) => Err(format!(
            "FTL {} ({} requests, power losses after {:?}), at {at}: {e}",
            case.ftl,
            case.requests.len(),
            case.power_losses
        )),
        Ok(()) => Ok(()),
    }
}

/// Configuration keys and values the TOML fuzzer combines: every field, some misspelt or unknown,
/// with values of every TOML type, at and beyond the edges of their ranges.
const KEYS: &[&str] = &[
    "preset",
    "seed",
    "device.name",
    "device.overprovisioning",
    "device.logical_pages",
    "device.allocation_unit",
    "device.geometry.channels",
    "device.geometry.chips_per_channel",
    "device.geometry.dies_per_chip",
    "device.geometry.planes_per_die",
    "device.geometry.blocks_per_plane",
    "device.geometry.pages_per_block",
    "device.geometry.page_size",
    "device.geometry.spare_size",
    "device.geometry.sector_size",
    "device.geometry.block_layout",
    "device.latency.read_us",
    "device.latency.program_us",
    "device.latency.erase_us",
    "device.latency.bus_ns_per_byte",
    "device.latency.transfer_includes_spare",
    "device.timing.model",
    "device.timing.plane_register",
    "device.timing.diffecc.segments",
    "device.timing.diffecc.window_ms",
    "device.timing.diffecc.program_us",
    "gc.policy",
    "gc.free_blocks_low",
    "host.address_policy",
    "host.scale_span_bytes",
    "host.time_scale",
    "precondition.mode",
    "precondition.age_factor",
    "check.oracle",
    "check.invariants_every",
    "check.power_loss_at",
    "device.geometry.plaens",
    "unknown",
    "device",
    "ftl.pftl.x",
    "ftl.nope",
    "gc",
];
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "8",
    "64",
    "-1",
    "255",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "0.0",
    "0.25",
    "0.5",
    "0.999",
    "1.0",
    "1.5",
    "-0.5",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "true",
    "false",
    "\"\"",
    "\"die\"",
    "\"plane\"",
    "\"greedy\"",
    "\"cost-benefit\"",
    "\"fifo-single\"",
    "\"parallel\"",
    "\"interleaved\"",
    "\"contiguous\"",
    "\"fold\"",
    "\"scale\"",
    "\"error\"",
    "\"none\"",
    "\"fill\"",
    "\"age\"",
    "\"mlc8g\"",
    "\"cpm\"",
    "\"random:3\"",
    "\"random:0\"",
    "\"5,x\"",
    "\"1,2,3\"",
    "[]",
    "[1, 2]",
    "{}",
    "{ a = 1 }",
    "1979-05-27",
];

/// Decodes bytes into a TOML document: each byte pair is one `key = value` line (a dotted key).
pub fn config_text_from_bytes(data: &[u8]) -> String {
    data.chunks(2)
        .map(|c| {
            format!(
                "{} = {}\n",
                KEYS[c[0] as usize % KEYS.len()],
                VALUES[*c.get(1).unwrap_or(&0) as usize % VALUES.len()]
            )
        })
        .collect()
}

/// The contract of configuration loading, for any text: it parses and validates, or fails with
/// a configuration error naming a field; and every registered FTL either builds on a valid
/// configuration (small enough to allocate) and serves a few requests, or rejects it naming a
/// field. `Err` is a finding.
pub fn fuzz_config_text(text: &str) -> std::result::Result<(), String> {
    let field_named = |e: SimError| match e {
        SimError::Config { ref field, ref message } if !field.is_empty() && !message.is_empty() => Ok(()),
        other => Err(format!("not a field-named configuration error: {other:?}")),
    };
    let config = match ConfigBuilder::new().toml("fuzz.toml", text).and_then(ConfigBuilder::build) {
        Ok(config) => config,
        Err(e) => return field_named(e),
    };
    if config.device.geometry.total_pages() > 1 << 16 {
        return Ok(()); // valid, but too large to allocate thousands of times
    }
    for info in REGISTRY {
        match Simulation::new(&config, info.name) {
            Err(e) => field_named(e).map_err(|m| format!("FTL {}: {m}", info.name))?,
            // A few requests, so a valid configuration that breaks timing or GC at run time shows.
            Ok(mut sim) => {
                serve_a_few(&mut sim, config.device.logical_pages()).map_err(|e| format!("FTL {}: {e}", info.name))?
            }
        }
    }
    Ok(())
}

fn serve_a_few(sim: &mut Simulation, logical: u32) -> Result<()> {
    sim.precondition()?;
    for (i, kind) in [IoKind::Write, IoKind::Read, IoKind::Write, IoKind::Trim, IoKind::Read].into_iter().enumerate() {
        let first = (i as u32 * 7919) % logical;
        sim.serve(PageRequest {
            arrival: i as u64 * u32::MAX as u64,
            kind,
            first: Lpn::new(first),
            pages: (logical - first).min(4),
            span: crate::host::SectorSpan::WHOLE,
        })?;
    }
    sim.check_invariants()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_bytes_decode_to_a_valid_case() {
        for seed in 0..64u8 {
            let bytes: Vec<u8> = (0..200u32).map(|i| (i as u8).wrapping_mul(seed).wrapping_add(seed)).collect();
            let case = FuzzCase::decode(&bytes).unwrap();
            case.config.validate().unwrap();
            assert!(case
                .requests
                .iter()
                .all(|r| r.pages >= 1 && r.first.get() + r.pages <= case.config.device.logical_pages()));
        }
        assert!(FuzzCase::decode(&[]).unwrap().requests.is_empty());
    }

    #[test]
    fn past_fuzz_findings_stay_fixed() {
        for text in [
            "['']\n",
            "[gc]\nfree_blocks_low = 4294967295\n",
            "[device.geometry]\nchannels = 4294967295\nchips_per_channel = 4294967295\ndies_per_chip = 4294967295\n",
            "a=",
        ] {
            fuzz_config_text(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        }
    }

    #[test]
    fn past_request_findings_stay_fixed() {
        for data in [
            &[1u8, 183, 0, 0, 8, 14, 0, 0, 0, 0, 0][..], // demand-FTL flush after aging
            &[0x0f, 0x87, 0x0a, 0x53, 0x4b, 0x0f],       // half-collected GC victim; GC reserve of demand FTLs
            &[0x7b, 0x97, 0x21, 0x7b, 0x97, 0x5a, 0x7a],
        ] {
            for ftl in 0..REGISTRY.len() as u8 {
                let data: Vec<u8> = [&[ftl][..], &data[1..]].concat();
                fuzz_requests(&data).unwrap_or_else(|e| panic!("{data:?}: {e}"));
            }
        }
    }

    #[test]
    fn every_ftl_runs_at_the_spare_it_declares_and_rejects_one_block_less() {
        for info in REGISTRY {
            let config = least_spare_device(info.name, 2, 2, 16, 16, 0, &[]).unwrap();
            Simulation::new(&config, info.name).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let mut short = config.clone();
            short.device.logical_pages = Some(config.device.logical_pages() + 1);
            let err = short.validate().and_then(|()| Simulation::new(&short, info.name).map(drop));
            assert!(
                matches!(&err, Err(SimError::Config { field, .. }) if field == "device.logical_pages"),
                "{}: {err:?}",
                info.name
            );
        }
    }

    #[test]
    fn toml_decoding_produces_parseable_lines() {
        let text = config_text_from_bytes(&[10, 4, 24, 3, 7]);
        assert_eq!(text.lines().count(), 3);
        assert!(text.starts_with("device.geometry.blocks_per_plane = 4\n"), "{text}");
    }
}
