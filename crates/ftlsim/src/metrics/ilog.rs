//! ILog's counts (`report.ilog`, paper 000 Table 8.2 and §8.2.1).

use serde::Serialize;

/// The log's traffic and what GC learned from it .
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IlogStats {
    /// Page invalidations logged.
    pub invalidations: u64,
    /// IPs read by invalidations (write-backs merging incomplete BIFs; Table 8.2).
    pub ip_reads: u64,
    /// IPs written by invalidations (Table 8.2).
    pub ip_writes: u64,
    /// IPs read by GC to validate a victim (at most one per victim).
    pub validation_ip_reads: u64,
    /// Pages GC skipped unread because their flag was set.
    pub flagged_skipped: u64,
    /// Pages GC read because no flag was known and found invalid: what the log over-counts as
    /// possibly valid.
    pub unflagged_invalid: u64,
}

impl IlogStats {
    pub fn since(&self, earlier: &IlogStats) -> IlogStats {
        IlogStats {
            invalidations: self.invalidations - earlier.invalidations,
            ip_reads: self.ip_reads - earlier.ip_reads,
            ip_writes: self.ip_writes - earlier.ip_writes,
            validation_ip_reads: self.validation_ip_reads - earlier.validation_ip_reads,
            flagged_skipped: self.flagged_skipped - earlier.flagged_skipped,
            unflagged_invalid: self.unflagged_invalid - earlier.unflagged_invalid,
        }
    }
}

/// `report.ilog`: the counts, and the invalidation pages read and written per logged invalidation
/// (Table 8.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IlogReport {
    pub counts: IlogStats,
    pub ip_reads_per_invalidation: Option<f64>,
    pub ip_writes_per_invalidation: Option<f64>,
}

impl IlogReport {
    pub fn new(counts: IlogStats) -> Self {
        let per = |n: u64| (counts.invalidations > 0).then(|| n as f64 / counts.invalidations as f64);
        IlogReport {
            ip_reads_per_invalidation: per(counts.ip_reads),
            ip_writes_per_invalidation: per(counts.ip_writes),
            counts,
        }
    }
}
