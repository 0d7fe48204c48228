//! Sweeps: many independent runs, executed together. A sweep is a grid (FTLs x parameters x
//! workloads x seeds) written as an [`ExperimentSpec`], so experiments and sweeps share one
//! planner and one executor ([`execute`]): runs in parallel on a number of threads, each result
//! kept in a content-addressed cache ([`cache`]) so an interrupted sweep resumes where it
//! stopped, and tidy rows ([`tidy`]) for CSV, JSON lines and data frames.

pub mod cache;
mod execute;
pub mod tidy;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use execute::{execute, Finished, Options, Progress};

use crate::error::Result;
use crate::experiment::ExperimentSpec;

/// A grid of runs: every FTL x grid point x workload x seed.
#[derive(Debug, Clone, Default)]
pub struct Sweep {
    /// What rows and results call the sweep.
    pub name: String,
    /// Device preset every run starts from (`mlc8g` when empty).
    pub preset: String,
    /// Fixed overrides, dotted keys as with `--set`.
    pub set: BTreeMap<String, toml::Value>,
    pub ftls: Vec<String>,
    /// Swept parameters: dotted key -> values (`ftl.*.cache_bytes` stands for the FTL being run).
    pub grid: BTreeMap<String, Vec<toml::Value>>,
    /// Seeds (the configuration's `seed`, which also seeds synthetic workloads); none: the preset's.
    pub seeds: Vec<u64>,
    /// Trace files, one workload each.
    pub traces: Vec<PathBuf>,
    /// Synthetic workloads (presets or generator specs), one workload each.
    pub synthetic: Vec<String>,
    /// Trace format (detected when absent) and what a malformed line does.
    pub format: Option<String>,
    pub on_bad_line: Option<String>,
    /// The generic reader's column mapping for the traces (`--columns`).
    pub columns: Option<String>,
    /// Requests of each synthetic workload.
    pub requests: Option<u64>,
}

impl Sweep {
    /// The experiment spec that runs this grid (runs in the order workload, point, FTL).
    pub fn spec(&self) -> Result<ExperimentSpec> {
        let mut table = toml::Table::new();
        let name = if self.name.is_empty() { "sweep" } else { &self.name };
        table.insert("name".into(), name.into());
        table.insert("preset".into(), if self.preset.is_empty() { "mlc8g" } else { &self.preset }.into());
        table.insert("set".into(), toml::Value::Table(self.set.clone().into_iter().collect()));
        table.insert("ftls".into(), self.ftls.iter().map(String::as_str).collect::<Vec<_>>().into());
        let mut grid: toml::Table = self.grid.clone().into_iter().map(|(k, v)| (k, toml::Value::Array(v))).collect();
        if !self.seeds.is_empty() {
            grid.insert(
                "seed".into(),
                toml::Value::Array(self.seeds.iter().map(|s| toml::Value::Integer(*s as i64)).collect()),
            );
        }
        table.insert("sweep".into(), toml::Value::Table(grid));
        let mut workloads = Vec::new();
        for trace in &self.traces {
            let mut w = toml::Table::new();
            w.insert("name".into(), workload_name(trace).into());
            w.insert(
                "trace".into(),
                std::path::absolute(trace).unwrap_or_else(|_| trace.clone()).display().to_string().into(),
            );
            if let Some(f) = &self.format {
                w.insert("format".into(), f.as_str().into());
            }
            if let Some(p) = &self.on_bad_line {
                w.insert("on_bad_line".into(), p.as_str().into());
            }
            if let Some(c) = &self.columns {
                w.insert("columns".into(), c.as_str().into());
            }
            workloads.push(toml::Value::Table(w));
        }
        for synthetic in &self.synthetic {
            let mut w = toml::Table::new();
            w.insert("name".into(), synthetic.as_str().into());
            w.insert("synthetic".into(), synthetic.as_str().into());
            if let Some(n) = self.requests {
                w.insert("requests".into(), toml::Value::Integer(n as i64));
            }
            workloads.push(toml::Value::Table(w));
        }
        table.insert("workload".into(), toml::Value::Array(workloads));
        ExperimentSpec::from_value("sweep", toml::Value::Table(table))
    }
}

/// A trace's workload name: its file name without the compression and format suffixes.
fn workload_name(trace: &Path) -> String {
    let name = trace.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let mut stem = name.as_str();
    for suffix in [".gz", ".bz2", ".xz", ".zst", ".csv", ".spc", ".txt", ".trace"] {
        stem = stem.strip_suffix(suffix).unwrap_or(stem);
    }
    stem.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Sweep {
        let mut set = BTreeMap::new();
        set.insert("device.geometry.blocks_per_plane".to_string(), toml::Value::Integer(64));
        set.insert("device.geometry.pages_per_block".to_string(), toml::Value::Integer(64));
        set.insert("device.overprovisioning".to_string(), toml::Value::Float(0.25));
        let mut grid = BTreeMap::new();
        grid.insert("ftl.*.cache_bytes".to_string(), vec![toml::Value::Integer(4096), toml::Value::Integer(8192)]);
        Sweep {
            name: "t".into(),
            set,
            ftls: vec!["pftl".into(), "dftl".into()],
            grid,
            seeds: vec![1, 2],
            synthetic: vec!["requests=200,read=0.5,addr=uniform,size=8k".into()],
            ..Sweep::default()
        }
    }

    #[test]
    fn a_sweep_is_the_grid_of_ftls_points_workloads_and_seeds() {
        let spec = small().spec().unwrap();
        let plan = spec.plan();
        assert_eq!(plan.len(), 2 * 2 * 2, "2 FTLs x 2 cache sizes x 2 seeds");
        let seeds: Vec<u64> = plan.iter().map(|r| spec.config(r).unwrap().seed).collect();
        assert_eq!(seeds, [1, 1, 2, 2, 1, 1, 2, 2]);
    }

    #[test]
    fn workload_names_drop_the_suffixes() {
        assert_eq!(workload_name(Path::new("/x/hm_1.csv.gz")), "hm_1");
        assert_eq!(workload_name(Path::new("Financial1.spc")), "Financial1");
    }

    #[test]
    fn a_bad_sweep_names_the_field() {
        let mut sweep = small();
        sweep.set.insert("device.overprovisioning".into(), toml::Value::Float(2.0));
        let err = sweep.spec().unwrap().check().unwrap_err().to_string();
        assert!(err.contains("device.overprovisioning"), "{err}");
    }
}
