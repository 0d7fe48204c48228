//! Merge counts of block-mapped and log-block FTLs, and what the report derives from them.

use serde::Serialize;

use super::{FlashCounts, FlashTimes};

/// How merges went (fields that do not apply to a scheme stay zero) (scheme-specific fields stay zero where they do not apply).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MergeStats {
    pub switch_merges: u64,
    pub partial_merges: u64,
    pub full_merges: u64,
    /// Pages copied by merges.
    pub pages_copied: u64,
    /// Log blocks merged away (erased after full merges, or switched into data blocks).
    pub log_merges: u64,
    /// Valid pages those log blocks held when their merge began.
    pub log_valid_pages: u64,
    /// Pages programmed in those log blocks (their utilization).
    pub log_written_pages: u64,
    /// Data blocks merged on account of those log blocks (their associativity).
    pub merged_data_blocks: u64,
    /// Victim candidates passed over by second-chance selection.
    pub second_chance_skips: u64,
}

impl MergeStats {
    pub fn since(&self, earlier: &MergeStats) -> MergeStats {
        MergeStats {
            switch_merges: self.switch_merges - earlier.switch_merges,
            partial_merges: self.partial_merges - earlier.partial_merges,
            full_merges: self.full_merges - earlier.full_merges,
            pages_copied: self.pages_copied - earlier.pages_copied,
            log_merges: self.log_merges - earlier.log_merges,
            log_valid_pages: self.log_valid_pages - earlier.log_valid_pages,
            log_written_pages: self.log_written_pages - earlier.log_written_pages,
            merged_data_blocks: self.merged_data_blocks - earlier.merged_data_blocks,
            second_chance_skips: self.second_chance_skips - earlier.second_chance_skips,
        }
    }
}

/// The `merges` section of a report (block-mapped and log-block FTLs only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergeReport {
    #[serde(flatten)]
    pub counts: MergeStats,
    /// Pages copied per merge.
    pub copies_per_merge: Option<f64>,
    /// Mean valid pages of a log block when its merge began.
    pub mean_log_valid_pages: Option<f64>,
    /// Mean share of a merged log block's pages that had been written.
    pub log_utilization: Option<f64>,
    /// Mean data blocks merged per log block merged (FAST's associativity).
    pub data_blocks_per_log_merge: Option<f64>,
    /// Paper 003's total I/O time (spec B.4): page reads x read time + page programs x program
    /// time + erases x erase time (array times, no bus transfer, no parallelism), host and merge
    /// work alike (recovery excluded), in seconds.
    pub total_flash_time_s: f64,
}

impl MergeReport {
    pub fn new(
        counts: MergeStats,
        pages_per_block: u64,
        reads: &FlashCounts,
        programs: &FlashCounts,
        erases: &FlashCounts,
        t: FlashTimes,
    ) -> Self {
        let ratio = |a: u64, b: u64| (b != 0).then(|| a as f64 / b as f64);
        let merges = counts.switch_merges + counts.partial_merges + counts.full_merges;
        let worked = |f: &FlashCounts| (f.total - f.recovery) as f64;
        MergeReport {
            copies_per_merge: ratio(counts.pages_copied, merges),
            mean_log_valid_pages: ratio(counts.log_valid_pages, counts.log_merges),
            log_utilization: ratio(counts.log_written_pages, counts.log_merges * pages_per_block),
            data_blocks_per_log_merge: ratio(counts.merged_data_blocks, counts.log_merges),
            total_flash_time_s: (worked(reads) * t.read_us
                + worked(programs) * t.program_us
                + worked(erases) * t.erase_us)
                / 1e6,
            counts,
        }
    }
}
