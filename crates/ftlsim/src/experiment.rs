//! Experiments: a TOML spec naming a device, the FTLs, the workloads and a parameter sweep,
//! expanded into runs (every workload x sweep point x FTL) whose results are grouped for the
//! papers' figures: normalised response time against a baseline per workload and point, and its
//! geometric mean across workloads.
//!
//! Each workload names a real trace, used when the file exists, and a synthetic stand-in
//! (`workload::presets`) used otherwise, so every experiment runs on a fresh machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::config::{Config, ConfigBuilder};
use crate::error::{Result, SimError};
use crate::ftl::{build_ftl, ftl_info};
use crate::sim::RunResult;
use crate::workload::{TraceOptions, Workload, WorkloadChoice};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Device preset every run starts from.
    pub preset: String,
    /// Fixed overrides, dotted keys as with `--set` (e.g. `"ftl.dftl.cache_bytes" = 20480`).
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
    pub ftls: Vec<String>,
    /// FTL whose mean response time normalises the others (NT); `pftl` by default.
    #[serde(default = "pftl")]
    pub baseline: String,
    /// Swept parameters: dotted key -> values, expanded as a cartesian product. In a key,
    /// `ftl.*.` stands for the FTL being run (`ftl.*.cache_bytes` sweeps every FTL's cache).
    /// A value may be a table of assignments applied together, named by its `label` (e.g. one
    /// nominal cache size given in each FTL's own parameters); its optional `only` lists the FTLs
    /// that run at that point.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// A real trace sets the device's logical capacity to its address space (paper 002: "the SSD
    /// logical capacity is set equal to the trace's logical address space"), keeping the
    /// preset's ratio of physical to logical blocks; stand-ins run on the preset's device.
    #[serde(default)]
    pub size_device_to_trace: bool,
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadEntry>,
    /// The figures the experiment produces (`ftlsim experiment --plot`, `ftlsim report`).
    #[serde(default, rename = "figure")]
    pub figures: Vec<FigureSpec>,
}

/// One figure of an experiment, drawn from its results by `ftlsim.plot`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    pub kind: FigureKind,
    #[serde(default)]
    pub title: String,
    /// The sweep key on the x axis (`cache-sweep`); default: the experiment's only swept key.
    #[serde(default)]
    pub x: Option<String>,
    /// The metric drawn, a dotted result column (default: the figure kind's own).
    #[serde(default)]
    pub metric: Option<String>,
    /// The paper's numbers for this figure (drawn beside ours in the report), by FTL or sweep
    /// point: a key is `NAME` or `NAME@VALUE`, each part an FTL or a swept key's value.
    #[serde(default)]
    pub paper: BTreeMap<String, f64>,
    /// Where the paper's numbers come from (figure or table, page).
    #[serde(default)]
    pub paper_source: Option<String>,
    /// The metric the paper's numbers are of when not the drawn one: a result column, or the
    /// ratio of two (`report.cache.miss_writeback / report.cache.accesses`).
    #[serde(default)]
    pub paper_metric: Option<String>,
    /// The paper's numbers are percent changes against these runs (an FTL or a sweep point,
    /// as the keys of `paper`).
    #[serde(default)]
    pub paper_relative_to: Option<String>,
    /// Only the workloads whose names contain this (the figure and the paper's numbers).
    #[serde(default)]
    pub workloads: Option<String>,
}

/// The papers' figure types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureKind {
    /// Normalized response time per workload and FTL (paper 000 Figure 5.x).
    NtBars,
    /// Cache accesses by miss class, stacked per FTL and workload.
    MissClasses,
    /// Translation-page reads and writes per FTL and workload.
    TranslationTraffic,
    /// A metric against a swept parameter, one line per FTL (and workload).
    CacheSweep,
    /// A metric per FTL and workload as grouped bars.
    MetricBars,
    /// Response-time distribution per FTL, from each run's percentiles (p50 to max).
    LatencyCdf,
}

/// The smallest device a trace is given when the device is sized to it, in blocks (a trace
/// that touches a few megabytes still gets a device every FTL can run on).
const MIN_TRACE_DEVICE_BLOCKS: u64 = 256;

fn pftl() -> String {
    "pftl".into()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadEntry {
    pub name: String,
    /// Real trace, relative to the spec file; used when it exists.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// Trace format (detected when absent).
    #[serde(default)]
    pub format: Option<String>,
    /// Synthetic stand-in (a preset name or generator spec) used when the trace is absent.
    #[serde(default)]
    pub synthetic: Option<String>,
    /// `error` (default) or `skip`: what a malformed trace line does.
    #[serde(default)]
    pub on_bad_line: Option<String>,
    /// The generic reader's column mapping (`--columns`; implies the generic format).
    #[serde(default)]
    pub columns: Option<String>,
    /// Requests of the synthetic stand-in (default: the preset's count).
    #[serde(default)]
    pub requests: Option<u64>,
    /// Device preset for this workload (default: the experiment's).
    #[serde(default)]
    pub preset: Option<String>,
    /// Overrides for this workload, applied after the experiment's `set`.
    #[serde(default)]
    pub set: BTreeMap<String, toml::Value>,
    /// One past the last byte the trace addresses, once measured ([`ExperimentSpec::measure_traces`]).
    #[serde(skip)]
    pub trace_end_bytes: Option<u64>,
}

/// One run of an experiment and where it belongs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentRun {
    pub experiment: String,
    pub workload: String,
    /// `trace` or `synthetic`.
    pub source: String,
    /// The swept values of this run, `key=value`.
    pub point: BTreeMap<String, String>,
    /// t_FTL / t_baseline on the same workload and point.
    pub normalized_response_time: Option<f64>,
    /// The run's [`RunResult`] as JSON, kept as text so that a run read back from the results
    /// cache is exactly the run that was written.
    pub result: Box<RawValue>,
}

impl ExperimentRun {
    pub fn new(
        experiment: &str,
        workload: &str,
        source: &str,
        point: BTreeMap<String, String>,
        result: &RunResult,
    ) -> Result<Self> {
        let json = serde_json::to_string(result).map_err(|e| SimError::Other(format!("result: {e}")))?;
        Self::from_result_json(experiment, workload, source, point, json)
    }

    /// A run whose result is already JSON (read from the cache).
    pub fn from_result_json(
        experiment: &str,
        workload: &str,
        source: &str,
        point: BTreeMap<String, String>,
        json: String,
    ) -> Result<Self> {
        Ok(ExperimentRun {
            experiment: experiment.to_string(),
            workload: workload.to_string(),
            source: source.to_string(),
            point,
            normalized_response_time: None,
            result: RawValue::from_string(json).map_err(|e| SimError::Other(format!("result: {e}")))?,
        })
    }

    /// The result as a JSON value (for tables and rows).
    pub fn result_value(&self) -> serde_json::Value {
        serde_json::from_str(self.result.get()).expect("a run's result is JSON it wrote or checked")
    }

    /// The FTL and the mean response time, the latter read from its text with Rust's exact
    /// float parsing (serde_json's default parsing may be one ulp off, and NT must be the same
    /// whether a run was just made or read back from the cache).
    fn ftl_and_mean(&self) -> (String, f64) {
        #[derive(Deserialize)]
        struct Run<'a> {
            ftl: String,
            #[serde(borrow)]
            report: Report<'a>,
        }
        #[derive(Deserialize)]
        struct Report<'a> {
            #[serde(borrow)]
            response: Response<'a>,
        }
        #[derive(Deserialize)]
        struct Response<'a> {
            #[serde(borrow)]
            mean_us: &'a RawValue,
        }
        match serde_json::from_str::<Run>(self.result.get()) {
            Ok(run) => (run.ftl, run.report.response.mean_us.get().parse().unwrap_or(0.0)),
            Err(_) => (String::new(), 0.0),
        }
    }
}

/// A planned run: what to build before running.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub workload: usize,
    pub point: BTreeMap<String, toml::Value>,
    pub ftl: String,
}

impl ExperimentSpec {
    pub fn from_file(path: &Path) -> Result<(Self, PathBuf)> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SimError::config(&origin, format!("cannot read: {e}")))?;
        let spec = Self::parse(&origin, &text)?;
        Ok((spec, path.parent().map(Path::to_path_buf).unwrap_or_default()))
    }

    pub fn parse(origin: &str, text: &str) -> Result<Self> {
        let value: toml::Value = text
            .parse::<toml::Table>()
            .map(toml::Value::Table)
            .map_err(|e| SimError::config(origin, e.message().to_string()))?;
        Self::from_value(origin, value)
    }

    /// A spec given as a TOML value (a sweep built in code, or one from Python).
    pub fn from_value(origin: &str, value: toml::Value) -> Result<Self> {
        let spec: ExperimentSpec = serde_path_to_error::deserialize(value)
            .map_err(|e| SimError::config(format!("{origin}: {}", e.path()), e.into_inner().message().to_string()))?;
        if spec.ftls.is_empty() {
            return Err(SimError::config(format!("{origin}: ftls"), "names no FTL"));
        }
        if spec.workloads.is_empty() {
            return Err(SimError::config(format!("{origin}: workload"), "no [[workload]] given"));
        }
        for (i, w) in spec.workloads.iter().enumerate() {
            if w.trace.is_none() && w.synthetic.is_none() {
                return Err(SimError::config(
                    format!("{origin}: workload[{i}]"),
                    "needs a trace or a synthetic stand-in",
                ));
            }
        }
        for (key, values) in &spec.sweep {
            if values.is_empty() {
                return Err(SimError::config(format!("{origin}: sweep.{key}"), "has no values"));
            }
        }
        Ok(spec)
    }

    /// Replays `trace` for the workload called `workload` (the command line's
    /// `--trace NAME=FILE`), in place of the trace or stand-in the spec names.
    pub fn use_trace(&mut self, workload: &str, trace: PathBuf) -> Result<()> {
        let known = self.workloads.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ");
        let Some(entry) = self.workloads.iter_mut().find(|w| w.name == workload) else {
            return Err(SimError::config(
                format!("--trace {workload}=..."),
                format!("the experiment has no workload called \"{workload}\" (its workloads: {known})"),
            ));
        };
        if !trace.exists() {
            return Err(SimError::input(trace.display().to_string(), "no such trace"));
        }
        entry.trace = Some(std::path::absolute(&trace).unwrap_or(trace));
        Ok(())
    }

    /// With `size_device_to_trace`, reads each real trace once for its address space (the
    /// devices of its runs are sized to it).
    pub fn measure_traces(&mut self, base: &Path) -> Result<()> {
        if !self.size_device_to_trace {
            return Ok(());
        }
        for entry in &mut self.workloads {
            let Some(trace) = entry.trace.as_ref().map(|t| base.join(t)).filter(|p| p.exists()) else { continue };
            let options = trace_options(entry)?;
            let stats = crate::workload::stats::stats(crate::workload::open(&trace, &options)?.requests)?;
            entry.trace_end_bytes = Some(stats.finish(0, 0).max_end_bytes);
        }
        Ok(())
    }

    /// Every run, in a fixed order: workload, then sweep point, then FTL.
    pub fn plan(&self) -> Vec<PlannedRun> {
        let mut points: Vec<BTreeMap<String, toml::Value>> = vec![BTreeMap::new()];
        for (key, values) in &self.sweep {
            points = points
                .into_iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut p = p.clone();
                        p.insert(key.clone(), v.clone());
                        p
                    })
                })
                .collect();
        }
        let mut runs = Vec::new();
        for workload in 0..self.workloads.len() {
            for point in &points {
                for ftl in self.ftls.iter().filter(|f| runs_at(point, f)) {
                    runs.push(PlannedRun { workload, point: point.clone(), ftl: ftl.clone() });
                }
            }
        }
        runs
    }

    /// The configuration of one run (preset, experiment overrides, workload overrides, sweep point). Parameters of other FTLs are left out, and a wildcard
    /// `ftl.*.<param>` applies only to FTLs that have that parameter.
    pub fn config(&self, run: &PlannedRun) -> Result<Config> {
        let own = format!("ftl.{}.", run.ftl);
        let workload = &self.workloads[run.workload];
        let mut b = ConfigBuilder::new().preset(workload.preset.as_deref().unwrap_or(&self.preset))?;
        let mut wildcards = Vec::new();
        let bundles = run
            .point
            .values()
            .filter_map(toml::Value::as_table)
            .flat_map(|t| t.iter().filter(|(k, _)| *k != "label" && *k != "only"));
        let plain = run.point.iter().filter(|(_, v)| !v.is_table());
        for (key, value) in self.set.iter().chain(&workload.set).chain(plain).chain(bundles) {
            if let Some(param) = key.strip_prefix("ftl.*.") {
                wildcards.push((param, value));
            } else if !key.starts_with("ftl.") || key.starts_with(&own) {
                b = b.set(&format!("{key}={value}"))?;
            }
        }
        if !wildcards.is_empty() {
            let schema = &ftl_info(&run.ftl)?.params;
            for (param, value) in wildcards {
                if schema.fields.iter().any(|f| f.name == param) {
                    b = b.set(&format!("{own}{param}={value}"))?;
                }
            }
        }
        match workload.trace_end_bytes {
            Some(end) => sized_to_trace(b, end),
            None => b.build(),
        }
    }

    /// How errors and progress name a run.
    pub fn label(&self, run: &PlannedRun) -> String {
        format!("workload {}, FTL {}, {:?}", self.workloads[run.workload].name, run.ftl, point_strings(&run.point))
    }

    /// Builds the configuration and the FTL of every run without running any, so that a bad
    /// point fails before hours of runs start (runs sharing a configuration and FTL are built once).
    pub fn check(&self) -> Result<()> {
        self.check_runs(&self.plan())
    }

    /// [`ExperimentSpec::check`] for some of the runs.
    pub fn check_runs(&self, runs: &[PlannedRun]) -> Result<()> {
        let mut built = std::collections::BTreeSet::new();
        for run in runs {
            let tagged = |e: SimError| self.in_run(run, e);
            let config = self.config(run).map_err(tagged)?;
            if built.insert((run.ftl.clone(), config.to_json().to_string())) {
                build_ftl(&run.ftl, &config).map_err(tagged)?;
            }
        }
        Ok(())
    }

    /// An error of one run, prefixed with the run's label; a configuration error keeps its field
    /// and an input error its location, so callers can still tell them apart.
    pub fn in_run(&self, run: &PlannedRun, e: SimError) -> SimError {
        let label = self.label(run);
        match e {
            SimError::Config { field, message } => SimError::Config { field, message: format!("{message} ({label})") },
            SimError::Input { location, message } => {
                SimError::Input { location, message: format!("{message} ({label})") }
            }
            SimError::Interrupted => SimError::Interrupted,
            other => SimError::Other(format!("{label}: {other}")),
        }
    }

    /// The trace a workload replays: its file when it exists (else the stand-in runs).
    pub fn trace_path(&self, base: &Path, index: usize) -> Option<PathBuf> {
        self.workloads[index].trace.as_ref().map(|t| base.join(t)).filter(|p| p.exists())
    }

    /// The workload of a run: the trace when it exists, else the synthetic stand-in.
    /// Also returns the workload's length when known before reading it (a synthetic stand-in).
    pub fn open_workload(
        &self,
        base: &Path,
        index: usize,
        config: &Config,
    ) -> Result<(Workload, &'static str, Option<u64>)> {
        let entry = &self.workloads[index];
        let trace = self.trace_path(base, index);
        if trace.is_none() && entry.synthetic.is_none() {
            return Err(SimError::config(
                format!("workload {}", entry.name),
                "its trace is missing and it has no synthetic stand-in",
            ));
        }
        let source = if trace.is_some() { "trace" } else { "synthetic" };
        let choice = WorkloadChoice {
            trace,
            options: trace_options(entry)?,
            synthetic: entry.synthetic.clone(),
            requests: entry.requests,
            trace_name: None,
        };
        Ok((choice.open(config)?, source, choice.synthetic_requests(config)?))
    }
}

/// The configuration `b` builds, its logical capacity set to the trace's address space (at
/// least [`MIN_TRACE_DEVICE_BLOCKS`] blocks) and its blocks scaled to keep the ratio of physical
/// to logical blocks.
fn sized_to_trace(b: ConfigBuilder, end_bytes: u64) -> Result<Config> {
    let preset = b.clone().build()?;
    let g = &preset.device.geometry;
    let block_pages = g.data_pages_per_block();
    let block_bytes = block_pages as u64 * g.page_size as u64;
    let logical_blocks = end_bytes.div_ceil(block_bytes).max(MIN_TRACE_DEVICE_BLOCKS);
    let ratio = g.total_blocks() as f64 / preset.device.logical_pages().div_ceil(block_pages) as f64;
    let planes = g.total_planes() as u64;
    let blocks_per_plane = ((logical_blocks as f64 * ratio).ceil() as u64).div_ceil(planes);
    b.set(&format!("device.logical_pages={}", logical_blocks * block_pages as u64))?
        .set(&format!("device.geometry.blocks_per_plane={blocks_per_plane}"))?
        .build()
}

/// How a workload's trace is read: the format it names (detected when absent), what a
/// malformed line does and the generic reader's column mapping.
fn trace_options(entry: &WorkloadEntry) -> Result<TraceOptions> {
    let mut options = TraceOptions::default();
    if let Some(format) = &entry.format {
        options.format =
            Some(format.parse().map_err(|e: String| SimError::config(format!("workload {}: format", entry.name), e))?);
    }
    if let Some(policy) = &entry.on_bad_line {
        options.on_bad_line =
            policy.parse().map_err(|e: String| SimError::config(format!("workload {}: on_bad_line", entry.name), e))?;
    }
    if let Some(columns) = &entry.columns {
        options.generic = Some(
            columns.parse().map_err(|e: String| SimError::config(format!("workload {}: columns", entry.name), e))?,
        );
    }
    Ok(options)
}

/// Whether `ftl` runs at a sweep point (a bundle's `only` may restrict it).
fn runs_at(point: &BTreeMap<String, toml::Value>, ftl: &str) -> bool {
    point
        .values()
        .filter_map(|v| v.get("only"))
        .filter_map(toml::Value::as_array)
        .all(|only| only.iter().any(|f| f.as_str() == Some(ftl)))
}

/// Attaches NT to every run: its mean response time over the baseline's on the same workload
/// and sweep point.
pub fn normalize(spec: &ExperimentSpec, runs: &mut [ExperimentRun]) {
    let measured: Vec<(String, f64)> = runs.iter().map(ExperimentRun::ftl_and_mean).collect();
    let baseline: BTreeMap<(String, BTreeMap<String, String>), f64> = runs
        .iter()
        .zip(&measured)
        .filter(|(_, (ftl, _))| *ftl == spec.baseline)
        .map(|(r, (_, mean))| ((r.workload.clone(), r.point.clone()), *mean))
        .collect();
    for (r, (_, mean)) in runs.iter_mut().zip(measured) {
        r.normalized_response_time =
            baseline.get(&(r.workload.clone(), r.point.clone())).filter(|b| **b > 0.0).map(|b| mean / b);
    }
}

/// Geometric mean of NT per (sweep point, FTL) across workloads (paper 000 §5.2.2).
pub fn geometric_means(runs: &[ExperimentRun]) -> Vec<(BTreeMap<String, String>, String, f64)> {
    let mut groups: BTreeMap<(BTreeMap<String, String>, String), Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(nt) = r.normalized_response_time {
            groups.entry((r.point.clone(), r.ftl_and_mean().0)).or_default().push(nt);
        }
    }
    groups
        .into_iter()
        .map(|((point, ftl), v)| {
            let mean = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
            (point, ftl, mean)
        })
        .collect()
}

/// The display form of a sweep point (a bundle shows its label).
pub fn point_strings(point: &BTreeMap<String, toml::Value>) -> BTreeMap<String, String> {
    point
        .iter()
        .map(|(k, v)| {
            let shown = match v.get("label") {
                Some(toml::Value::String(label)) => label.clone(),
                _ => v.to_string(),
            };
            (k.clone(), shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
        name = "t"
        preset = "mlc8g"
        ftls = ["pftl", "dftl"]
        [set]
        "device.geometry.blocks_per_plane" = 64
        "device.geometry.pages_per_block" = 64
        "device.overprovisioning" = 0.25
        [sweep]
        "ftl.*.cache_bytes" = [4096, 8192]
        "gc.policy" = ["greedy", "cost-benefit"]
        [[workload]]
        name = "a"
        trace = "does-not-exist.csv"
        synthetic = "requests=300,read=0.5,addr=uniform,size=8k"
        [[workload]]
        name = "b"
        synthetic = "requests=200,read=0.2,addr=hotcold:0.8:0.2,size=8k"
    "#;

    #[test]
    fn plan_is_the_cartesian_product_in_a_fixed_order() {
        let spec = ExperimentSpec::parse("t.toml", SPEC).unwrap();
        let plan = spec.plan();
        assert_eq!(plan.len(), 2 * 2 * 2 * 2);
        assert_eq!((plan[0].workload, plan[0].ftl.as_str()), (0, "pftl"));
        assert_eq!(plan[1].ftl, "dftl");
    }

    #[test]
    fn wildcard_ftl_keys_apply_to_the_ftl_being_run_only() {
        let spec = ExperimentSpec::parse("t.toml", SPEC).unwrap();
        let plan = spec.plan();
        let dftl = spec.config(&plan[1]).unwrap();
        assert_eq!(dftl.ftl["dftl"]["cache_bytes"].as_integer(), Some(4096));
        let pftl = spec.config(&plan[0]).unwrap();
        assert!(pftl.ftl.get("pftl").is_none(), "PFTL has no cache to sweep");
    }

    #[test]
    fn a_bundle_applies_each_ftls_own_parameter_and_shows_its_label() {
        let text = r#"
            name = "b"
            preset = "mlc8g"
            ftls = ["dftl", "cdftl"]
            [[sweep.cache]]
            label = "8KB"
            "ftl.dftl.cache_bytes" = 8448
            "ftl.cdftl.cmt_bytes" = 1056
            "ftl.cdftl.ctp_bytes" = 8192
            [[workload]]
            name = "a"
            synthetic = "requests=10,size=8k"
        "#;
        let spec = ExperimentSpec::parse("b.toml", text).unwrap();
        let plan = spec.plan();
        assert_eq!(plan.len(), 2);
        let restricted =
            ExperimentSpec::parse("b.toml", &text.replace("label = \"8KB\"", "label = \"8KB\"\nonly = [\"dftl\"]"))
                .unwrap();
        assert_eq!(restricted.plan().len(), 1, "only = [dftl] skips CDFTL at that point");
        let dftl = spec.config(&plan[0]).unwrap();
        assert_eq!(dftl.ftl["dftl"]["cache_bytes"].as_integer(), Some(8448));
        assert!(dftl.ftl.get("cdftl").is_none());
        let cdftl = spec.config(&plan[1]).unwrap();
        assert_eq!(cdftl.ftl["cdftl"]["ctp_bytes"].as_integer(), Some(8192));
        assert_eq!(point_strings(&plan[0].point)["cache"], "8KB");
    }

    #[test]
    fn check_builds_every_run_and_names_the_bad_one() {
        ExperimentSpec::parse("t.toml", SPEC).unwrap().check().unwrap();
        // 2^30 bytes of DFTL entries: more than the map of a 262,144-page device.
        let bad = ExperimentSpec::parse("t.toml", &SPEC.replace("[4096, 8192]", "[4096, 1073741824]")).unwrap();
        let e = bad.check().unwrap_err().to_string();
        assert!(e.contains("workload a, FTL dftl") && e.contains("ftl.dftl.cache_bytes"), "{e}");
        assert!(matches!(bad.check(), Err(SimError::Config { field, .. }) if field == "ftl.dftl.cache_bytes"));
    }

    #[test]
    fn every_shipped_spec_builds_every_run() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut specs = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let (spec, _) = ExperimentSpec::from_file(&path).unwrap();
                spec.check().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                specs += 1;
            }
        }
        assert!(specs >= 5, "found {specs} specs in {}", dir.display());
    }

    /// Every shipped spec replays a real-format trace (`--trace NAME=FILE`) for its first
    /// workload: the trace folds into the spec's device, and the run is marked as a trace run.
    #[test]
    fn every_shipped_spec_runs_on_a_real_trace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let fixtures = root.join("tests/fixtures/traces");
        for entry in std::fs::read_dir(root.join("../../experiments")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let (mut spec, base) = ExperimentSpec::from_file(&path).unwrap();
            let first = spec.workloads[0].clone();
            let fixture = match first.format.as_deref() {
                Some("spc") => "financial_like.spc",
                _ => "msr_hm_1.head40.csv.gz",
            };
            spec.use_trace(&first.name, fixtures.join(fixture)).unwrap();
            spec.measure_traces(&base).unwrap();
            let run = spec.plan().into_iter().find(|r| r.workload == 0).unwrap();
            let config = spec.config(&run).unwrap();
            assert_eq!(config.host.address_policy, crate::config::AddressPolicy::Fold, "{}", path.display());
            let (workload, source, _) = spec.open_workload(&base, 0, &config).unwrap();
            assert_eq!(source, "trace");
            let result = crate::run(&config, &run.ftl, workload).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(result.report.host.requests > 0, "{}", path.display());
        }
    }

    #[test]
    fn a_missing_trace_falls_back_to_the_stand_in() {
        let spec = ExperimentSpec::parse("t.toml", SPEC).unwrap();
        let plan = spec.plan();
        let config = spec.config(&plan[0]).unwrap();
        let (w, source, _) = spec.open_workload(Path::new("."), 0, &config).unwrap();
        assert_eq!(source, "synthetic");
        assert_eq!(w.requests.count(), 300);
    }

    /// With `size_device_to_trace`, a trace's device exports its address space (in whole
    /// blocks, at least 256) with the preset's share of spare blocks.
    #[test]
    fn a_device_sized_to_the_trace() {
        let text =
            SPEC.replace("ftls = [\"pftl\", \"dftl\"]", "ftls = [\"pftl\", \"dftl\"]\nsize_device_to_trace = true");
        let mut spec = ExperimentSpec::parse("t.toml", &text).unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces");
        spec.use_trace("a", fixtures.join("msr_hm_1.head40.csv")).unwrap();
        spec.measure_traces(Path::new(".")).unwrap();
        let end = spec.workloads[0].trace_end_bytes.unwrap();
        let run = spec.plan().into_iter().next().unwrap();
        let sized = spec.config(&run).unwrap();
        let plain = ExperimentSpec::parse("t.toml", SPEC).unwrap().config(&run).unwrap();
        let block_bytes = 64 * 8192u64;
        let blocks = end.div_ceil(block_bytes).max(256);
        assert_eq!(sized.device.logical_pages() as u64, blocks * 64);
        let spare = |c: &Config| c.device.geometry.total_blocks() as f64 / c.device.logical_pages().div_ceil(64) as f64;
        assert!((spare(&sized) - spare(&plain)).abs() < 0.02, "{} vs {}", spare(&sized), spare(&plain));
        assert!(ExperimentSpec::parse("t.toml", SPEC).unwrap().workloads[0].trace_end_bytes.is_none());
    }

    #[test]
    fn a_trace_for_an_unknown_workload_is_refused_naming_the_known_ones() {
        let mut spec = ExperimentSpec::parse("t.toml", SPEC).unwrap();
        let err = spec.use_trace("zz", "Cargo.toml".into()).unwrap_err().to_string();
        assert!(err.contains("--trace zz=") && err.contains("its workloads: a, b"), "{err}");
        let err = spec.use_trace("a", "/nonexistent/t.csv".into()).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/t.csv") && err.contains("no such trace"), "{err}");
    }

    #[test]
    fn bad_specs_name_the_field() {
        let err = ExperimentSpec::parse(
            "x.toml",
            "name = \"x\"\npreset = \"mlc8g\"\nftls = []\n[[workload]]\nname=\"a\"\nsynthetic=\"p000-hm0\"",
        )
        .unwrap_err();
        assert!(err.to_string().contains("x.toml: ftls"), "{err}");
        let err = ExperimentSpec::parse("x.toml", "name = \"x\"\npreset = \"mlc8g\"\nftls = [\"pftl\"]\nbogus = 1\n[[workload]]\nname=\"a\"\nsynthetic=\"p000-hm0\"").unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
    }

    #[test]
    fn geometric_mean_of_nt() {
        let g = [2.0f64, 8.0];
        let mean = (g.iter().map(|x| x.ln()).sum::<f64>() / 2.0).exp();
        assert!((mean - 4.0).abs() < 1e-12);
    }
}
