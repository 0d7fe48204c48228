//! Measurements: counters and histograms gathered during a run, and the derived report.
//! Every field of [`Report`] is defined in `docs/metrics.md`.

mod cache;
mod clusters;
mod collector;
mod delta;
mod flash_time;
mod ilog;
pub mod latency_log;
mod merges;
mod model;
mod occupancy;
pub(crate) mod report;
mod spare_map;

pub use cache::{CacheAccess, CacheStats};
pub use clusters::{ClusterReport, ClusterStats, TableSizes};
pub use collector::{Collector, RequestKind};
pub use delta::{DeltaReport, DeltaStats, GcFlashWork, LifetimeReport};
pub use flash_time::FlashTimeReport;
pub use ilog::{IlogReport, IlogStats};
pub use merges::{MergeReport, MergeStats};
pub use model::{FlashTimes, GcStats, TimeModel, WaCounts, WaModel};
pub use occupancy::{Occupancy, OccupancyReport, OccupancySampler, OCCUPANCY_SAMPLE_EVERY};
pub use report::{
    CacheReport, DiffEccReport, EraseCountStats, FlashCounts, HostReport, LatencySummary, ModeCounts, RecoveryReport,
    Report, ResponseTimes, SimulationReport, SATURATED,
};
pub use spare_map::{SpareMapReport, SpareMapStats};
