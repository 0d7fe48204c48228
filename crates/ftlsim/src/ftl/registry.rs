//! The list of FTLs. Each scheme describes itself in one [`FtlInfo`] (a constant in its own
//! module): name, description, parameters with their valid ranges and sources, spare layout,
//! write streams, and what its test devices need. Adding a scheme: its module in `ftl/` and one
//! line in [`REGISTRY`] (plus its `mod` line in `ftl/mod.rs`).

use serde::de::DeserializeOwned;

use super::common::StreamSpec;
use super::Ftl;
use crate::config::{Config, ValidityTracking};
use crate::error::{Result, SimError};
use crate::flash::{PageKind, SpareLayout};

pub const REGISTRY: &[FtlInfo] = &[
    super::page::INFO,
    super::dftl::INFO,
    super::delta::INFO,
    super::cdftl::INFO,
    super::tpftl::INFO,
    super::scftl::INFO,
    super::tdftl::INFO,
    super::sftl::INFO,
    super::optimal::INFO,
    super::bftl::INFO,
    super::bast::INFO,
    super::fast::INFO,
    super::fast::sc::INFO,
    super::fast::kast::INFO,
    super::last::INFO,
    super::sast::INFO,
    super::cpm::INFO,
    super::cpm::KCPM_INFO,
];

/// Which family a scheme belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The whole page-level map in SRAM (PFTL, the optimal FTL).
    PageMapped,
    /// A page-level map in translation pages, cached in SRAM on demand.
    DemandBased,
    /// Data blocks mapped whole, with or without log blocks (BFTL and the hybrids). Built for
    /// sequential-heavy workloads; small random writes saturate them.
    BlockMapped,
    /// Page mapping within clusters of logical blocks that hold their own physical blocks (CPM,
    /// K-CPM), the map in translation pages.
    Clustered,
    /// Page mapping that stores updates as compressed deltas (Delta-FTL); its results depend on
    /// a content model, so it is not among the default comparison's schemes.
    DeltaEncoded,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::PageMapped => "page-mapped",
            Family::DemandBased => "demand-based",
            Family::BlockMapped => "block-mapped",
            Family::Clustered => "clustered",
            Family::DeltaEncoded => "delta-encoded",
        }
    }
}

/// Everything about one scheme.
pub struct FtlInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub family: Family,
    pub build: fn(&Config) -> Result<Box<dyn Ftl>>,
    pub params: ParamsSchema,
    /// The fields it writes in every page's spare area.
    pub spare_layout: SpareLayout,
    /// The write streams it declares to the block manager.
    pub streams: &'static [StreamSpec],
    /// Recovers from power loss (the conformance suite checks that one that does not says so).
    pub recovers: bool,
    /// Can tell GC whether a page is current (`Relocate::is_current`), so it runs with per-block
    /// invalid counters instead of a page bitmap (`gc.validity = "counters"`).
    pub validates_by_mapping: bool,
    /// The fewest spare blocks (beyond the logical pages) it accepts on a device
    /// ([`Config::spare_blocks_needed`] for page-mapped schemes); the conformance suite sizes
    /// its tightest devices with it.
    pub spare_blocks_needed: fn(&Config) -> u64,
    /// Simulator memory per physical page, bytes, flash array included (`state_B/page` of
    /// `ftlsim bench`), for the estimate checked before anything is allocated.
    pub state_bytes_per_page: f64,
    /// Parameters its conformance-suite devices need, computed from the device (`(parameter,
    /// value)` under `[ftl.<name>]`; a parameter the test sets itself wins). A scheme that works
    /// with its defaults on tiny devices returns none.
    pub test_overrides: fn(&Config) -> Vec<(&'static str, u64)>,
}

/// A scheme's parameters: how `[ftl.<name>]` is read, its defaults, and each field's range.
pub struct ParamsSchema {
    pub fields: &'static [ParamSpec],
    /// The defaults, as the parameters serialise (from the parameter struct's `Default`).
    pub defaults: fn() -> serde_json::Value,
    /// Reads `[ftl.<name>]` into the parameter struct (unknown fields and types refused).
    pub parse: fn(&Config, &str) -> Result<()>,
}

impl ParamsSchema {
    /// The schema of a parameter struct `T` with the given fields.
    pub const fn of<T: DeserializeOwned + serde::Serialize + Default>(fields: &'static [ParamSpec]) -> Self {
        ParamsSchema { fields, defaults: defaults_of::<T>, parse: parse_as::<T> }
    }
}

fn defaults_of<T: serde::Serialize + Default>() -> serde_json::Value {
    serde_json::to_value(T::default()).expect("parameters serialise")
}

fn parse_as<T: DeserializeOwned>(config: &Config, name: &str) -> Result<()> {
    ftl_params::<T>(config, name).map(|_: T| ())
}

/// One parameter: its valid values, what it means and where it comes from.
#[derive(Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub range: ParamRange,
    pub meaning: &'static str,
    /// The paper and section, or the implementation guide's recommendation.
    pub source: &'static str,
}

/// The values a parameter accepts (its type is the parameter struct's).
#[derive(Clone, Copy)]
pub enum ParamRange {
    /// An integer in `[min, max]`.
    Integer { min: i64, max: i64 },
    /// A number in `[min, max]`.
    Number { min: f64, max: f64 },
    /// true or false.
    Flag,
    /// One of these names.
    OneOf(&'static [&'static str]),
    /// Described by `meaning` (a free-form value such as a configuration name).
    Text,
}

impl ParamRange {
    /// Checks the value's type and range (so the error names the field even where the parameter
    /// struct's own deserialisation could not, as through a flattened table).
    fn check(&self, value: &toml::Value) -> std::result::Result<(), String> {
        let number = value.as_integer().map(|i| i as f64).or_else(|| value.as_float());
        match (self, number) {
            (ParamRange::Integer { .. }, _) if value.as_integer().is_none() => {
                Err(format!("expected an integer, found {value}"))
            }
            (ParamRange::Number { .. }, None) => Err(format!("expected a number, found {value}")),
            (ParamRange::Integer { min, max }, Some(n)) if n < *min as f64 || n > *max as f64 => {
                Err(format!("must be in [{min}, {max}], found {n}"))
            }
            (ParamRange::Number { min, max }, Some(n)) if n < *min || n > *max || n.is_nan() => {
                Err(format!("must be in [{min}, {max}], found {n}"))
            }
            (ParamRange::Flag, _) if value.as_bool().is_none() => Err(format!("expected true or false, found {value}")),
            (ParamRange::OneOf(names), _) if !value.as_str().is_some_and(|v| names.contains(&v)) => {
                Err(format!("expected one of {}, found {value}", names.join(", ")))
            }
            _ => Ok(()),
        }
    }

    /// How the range reads in `ftlsim list`.
    pub fn describe(&self) -> String {
        match self {
            ParamRange::Integer { min, max } if *max == i64::MAX => format!(">= {min}"),
            ParamRange::Integer { min, max } => format!("{min}..={max}"),
            ParamRange::Number { min, max } => format!("[{min}, {max}]"),
            ParamRange::Flag => "true | false".into(),
            ParamRange::OneOf(names) => names.join(" | "),
            ParamRange::Text => "see meaning".into(),
        }
    }
}

/// Memory the system says is available (Linux: `MemAvailable` in /proc/meminfo).
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The spare blocks of a page-mapped FTL with one write stream.
pub fn one_stream_spare_blocks(config: &Config) -> u64 {
    config.spare_blocks_needed(1, 0)
}

/// No parameters for the conformance suite's devices.
pub fn no_test_overrides(_: &Config) -> Vec<(&'static str, u64)> {
    Vec::new()
}

impl FtlInfo {
    /// Keeps its map in translation pages (a stream of them, and the spare blocks they fill).
    pub fn keeps_translation_pages(&self) -> bool {
        self.streams.iter().any(|s| s.kind == PageKind::Translation)
    }

    /// Checks `[ftl.<name>]` against the schema: unknown fields (with the closest known name),
    /// then ranges, then types.
    pub fn check_params(&self, config: &Config) -> Result<()> {
        if let Some(toml::Value::Table(table)) = config.ftl.get(self.name) {
            let known = || self.params.fields.iter().map(|f| f.name);
            if let Some(unknown) = table.keys().find(|k| !known().any(|n| n == k.as_str())) {
                let closest = crate::names::suggestion(unknown, known());
                let all = known().collect::<Vec<_>>().join(", ");
                let listing =
                    if all.is_empty() { "it takes none".to_string() } else { format!("its parameters: {all}") };
                return Err(SimError::config(
                    format!("ftl.{}.{unknown}", self.name),
                    format!("{} has no parameter \"{unknown}\"{closest}; {listing}", self.name),
                ));
            }
            for spec in self.params.fields {
                if let Some(value) = table.get(spec.name) {
                    let field = || format!("ftl.{}.{}", self.name, spec.name);
                    spec.range.check(value).map_err(|m| SimError::config(field(), m))?;
                }
            }
        }
        (self.params.parse)(config, self.name)
    }

    /// [`FtlInfo::check_params`], the spare layout against the device and the memory the run
    /// would take against what it may use, building nothing.
    pub fn validate(&self, config: &Config) -> Result<()> {
        self.check_params(config)?;
        if config.gc.validity != ValidityTracking::Bitmap && !self.validates_by_mapping {
            let mode = if config.gc.validity == ValidityTracking::Ilog { "ilog" } else { "counters" };
            return Err(SimError::config(
                "gc.validity",
                format!("\"{mode}\": {} cannot tell GC whether a page is current; use \"bitmap\"", self.name),
            ));
        }
        if config.device.geometry.summary_page && matches!(self.family, Family::BlockMapped | Family::Clustered) {
            return Err(SimError::config(
                "device.geometry.summary_page",
                format!(
                    "{} ({}) places pages itself in the blocks it owns, down to their last page, which holds \
                     the summary page; turn summary_page off or use a scheme that writes through streams",
                    self.name,
                    self.family.name()
                ),
            ));
        }
        self.spare_layout.check(self.name, &config.device.geometry)?;
        self.check_memory(config)
    }

    /// Simulator memory a run of this scheme on `config`'s device takes, bytes: its state per
    /// physical page (with a tenth more for what varies with the geometry) and the oracle's four
    /// bytes per logical page.
    pub fn memory_estimate(&self, config: &Config) -> u64 {
        let pages = config.device.geometry.total_pages() as f64;
        (pages * self.state_bytes_per_page * 1.1) as u64 + config.device.logical_pages() as u64 * 4
    }

    /// Refuses a device whose simulation would not fit `check.max_memory`, or else the memory
    /// the machine has available (where the system says: /proc/meminfo).
    fn check_memory(&self, config: &Config) -> Result<()> {
        let Some(limit) = config.check.max_memory.or_else(available_memory) else { return Ok(()) };
        let needed = self.memory_estimate(config);
        if needed <= limit {
            return Ok(());
        }
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        Err(SimError::config(
            "device.geometry",
            format!(
                "simulating {} on this device takes about {:.1} GiB ({:.1} bytes per physical page), more than the \
                 {:.1} GiB available; use a smaller device, or raise the limit with --max-memory (check.max_memory)",
                self.name,
                gib(needed),
                self.state_bytes_per_page * 1.1,
                gib(limit)
            ),
        ))
    }
}

pub fn ftl_names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|f| f.name)
}

/// The registered scheme called `name`, or an error listing the known ones.
pub fn ftl_info(name: &str) -> Result<&'static FtlInfo> {
    REGISTRY.iter().find(|f| f.name == name).ok_or_else(|| {
        let known = ftl_names().collect::<Vec<_>>().join(", ");
        SimError::config("ftl", format!("unknown FTL \"{name}\"{}; known FTLs: {known}", suggestion(name, REGISTRY)))
    })
}

/// Validates the configuration of `info`'s scheme, then builds it.
pub fn build_with(info: &FtlInfo, config: &Config) -> Result<Box<dyn Ftl>> {
    info.validate(config)?;
    (info.build)(config)
}

/// Builds the registered scheme `name`, after checking every `[ftl.*]` table of `config` against
/// the registry (a misspelt table is refused, not ignored).
pub fn build_ftl(name: &str, config: &Config) -> Result<Box<dyn Ftl>> {
    let info = ftl_info(name)?;
    validate_ftl_tables(REGISTRY, config)?;
    build_with(info, config)
}

/// Refuses an `[ftl.<name>]` table that names no scheme of `registry` (a misspelt scheme would
/// otherwise run on its defaults), suggesting the closest name, and validates every table that
/// does. [`build_ftl`] runs it over [`REGISTRY`].
pub fn validate_ftl_tables(registry: &[FtlInfo], config: &Config) -> Result<()> {
    for name in config.ftl.keys() {
        let Some(info) = registry.iter().find(|f| f.name == name) else {
            let known = registry.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
            return Err(SimError::config(
                format!("ftl.{name}"),
                format!("no FTL is called \"{name}\"{}; known FTLs: {known}", suggestion(name, registry)),
            ));
        };
        info.check_params(config)?;
    }
    Ok(())
}

/// ", did you mean \"x\"?" for the registered name closest to `name`, if any is close.
fn suggestion(name: &str, registry: &[FtlInfo]) -> String {
    crate::names::suggestion(name, registry.iter().map(|f| f.name))
}

/// The schemes of `registry` with their parameters, as `ftlsim list ftls` prints them.
pub fn describe(registry: &[FtlInfo]) -> String {
    let mut out = String::new();
    for info in registry {
        out.push_str(&format!("{:<10} {} [{}]\n", info.name, info.description, info.family.name()));
        let defaults = (info.params.defaults)();
        for spec in info.params.fields {
            let default = match defaults.get(spec.name) {
                Some(serde_json::Value::Null) | None => "(derived)".to_string(),
                Some(v) => v.to_string(),
            };
            out.push_str(&format!(
                "    {:<26} default {:<10} {:<22} {} ({})\n",
                spec.name,
                default,
                spec.range.describe(),
                spec.meaning,
                spec.source
            ));
        }
    }
    out
}

/// Reads the `[ftl.<name>]` table into the FTL's parameter struct (defaults for absent fields,
/// unknown fields rejected, errors naming `ftl.<name>.<field>`).
pub fn ftl_params<T: DeserializeOwned>(config: &Config, name: &str) -> Result<T> {
    let table = config.ftl.get(name).cloned().unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
    serde_path_to_error::deserialize(table).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { format!("ftl.{name}") } else { format!("ftl.{name}.{path}") };
        SimError::config(field, e.into_inner().message().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_lists_exactly_its_parameters() {
        for info in REGISTRY {
            let defaults = (info.params.defaults)();
            let mut fields: Vec<&str> =
                defaults.as_object().expect("parameters are a table").keys().map(|k| k.as_str()).collect();
            let mut listed: Vec<&str> = info.params.fields.iter().map(|f| f.name).collect();
            fields.sort_unstable();
            listed.sort_unstable();
            assert_eq!(listed, fields, "{}: the schema must list every parameter once", info.name);
        }
    }

    /// The log-block schemes flatten shared parameters into their tables, where serde can
    /// neither refuse unknown fields nor name a mistyped one: the schema does both.
    #[test]
    fn bad_parameters_of_flattened_tables_are_named() {
        let cases = [
            ("ftl.fast.log_rati=0.1", "ftl.fast.log_rati", "did you mean \"log_ratio\""),
            ("ftl.fast.log_ratio=\"x\"", "ftl.fast.log_ratio", "expected a number"),
            ("ftl.fast-sc.sc_mode=\"lru\"", "ftl.fast-sc.sc_mode", "expected one of move-to-tail, clock"),
            ("ftl.kast.fast_sw_log=1", "ftl.kast.fast_sw_log", "expected true or false"),
            ("ftl.sast.set_size=2.5", "ftl.sast.set_size", "expected an integer"),
            ("ftl.bftl.log_ratio=0.1", "ftl.bftl.log_ratio", "it takes none"),
        ];
        for (set, field, message) in cases {
            let config = crate::config::ConfigBuilder::new().set(set).unwrap().build().unwrap();
            match validate_ftl_tables(REGISTRY, &config) {
                Err(SimError::Config { field: f, message: m }) => {
                    assert_eq!(f, field, "{set}");
                    assert!(m.contains(message), "{set}: {m}");
                }
                other => panic!("{set}: {other:?}"),
            }
        }
    }

    #[test]
    fn misspelt_names_get_a_suggestion() {
        assert_eq!(suggestion("dtfl", REGISTRY), ", did you mean \"dftl\"?");
        assert_eq!(suggestion("zzzzzz", REGISTRY), "");
    }
}
