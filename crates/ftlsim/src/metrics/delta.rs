//! Delta-FTL's counts (paper 001 §4.5, spec §1.9 and Δ17): how evicted pages were dispatched,
//! what the delta log area received, merges, and the reads that needed the delta form.

use serde::Serialize;

use crate::ftl::delta::lifetime::foreground_writes;

/// Counts kept by a scheme that stores updates as compressed deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DeltaStats {
    /// Pages the FTL was asked to write (write-buffer evictions).
    pub writes: u64,
    /// Of those, dispatched as deltas to the delta log area.
    pub delta_writes: u64,
    /// Write-hot, read-cold pages whose content did not compress into a page (sent to the PMA).
    pub incompressible: u64,
    /// Write-hot, read-cold pages sent to the PMA while the bypass was on.
    pub bypassed: u64,
    /// Write-hot, read-cold pages sent to the PMA because valid delta pages reached their share
    /// of the spare space.
    pub space_limited: u64,
    /// Compressed bytes of the deltas dispatched.
    pub delta_bytes: u64,
    /// Delta log pages programmed for host writes (foreground) and by GC (re-appended deltas).
    pub dla_pages: u64,
    pub dla_pages_gc: u64,
    /// Pages programmed in original form for host writes (foreground).
    pub pma_pages: u64,
    /// Deltas committed to flash, and those of them a later write to the LPN invalidated (P_ow).
    pub deltas_committed: u64,
    pub deltas_overwritten: u64,
    /// Merges of a delta with its base into an original page: at read time (read-hot) and
    /// during GC (read-hot or write-cold).
    pub merges_on_read: u64,
    pub merges_in_gc: u64,
    /// Host page reads, those of pages in delta form (two flash reads), and those whose delta was
    /// still in the Temp Buffer (one flash read).
    pub reads: u64,
    pub delta_reads: u64,
    pub buffered_delta_reads: u64,
    /// Victims reclaimed in the delta log area and in the page mapping area, and the
    /// page-equivalents of valid content GC moved out of them (for the GC gain).
    pub gc_victims_dla: u64,
    pub gc_victims_pma: u64,
    pub gc_moved_page_equivalents: f64,
}

impl DeltaStats {
    pub fn since(&self, e: &DeltaStats) -> DeltaStats {
        DeltaStats {
            writes: self.writes - e.writes,
            delta_writes: self.delta_writes - e.delta_writes,
            incompressible: self.incompressible - e.incompressible,
            bypassed: self.bypassed - e.bypassed,
            space_limited: self.space_limited - e.space_limited,
            delta_bytes: self.delta_bytes - e.delta_bytes,
            dla_pages: self.dla_pages - e.dla_pages,
            dla_pages_gc: self.dla_pages_gc - e.dla_pages_gc,
            pma_pages: self.pma_pages - e.pma_pages,
            deltas_committed: self.deltas_committed - e.deltas_committed,
            deltas_overwritten: self.deltas_overwritten - e.deltas_overwritten,
            merges_on_read: self.merges_on_read - e.merges_on_read,
            merges_in_gc: self.merges_in_gc - e.merges_in_gc,
            reads: self.reads - e.reads,
            delta_reads: self.delta_reads - e.delta_reads,
            buffered_delta_reads: self.buffered_delta_reads - e.buffered_delta_reads,
            gc_victims_dla: self.gc_victims_dla - e.gc_victims_dla,
            gc_victims_pma: self.gc_victims_pma - e.gc_victims_pma,
            gc_moved_page_equivalents: self.gc_moved_page_equivalents - e.gc_moved_page_equivalents,
        }
    }
}

/// `report.delta`: the counts and the paper's derived metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaReport {
    #[serde(flatten)]
    pub counts: DeltaStats,
    /// P_c: evicted pages dispatched as deltas / evicted pages (spec Δ17).
    pub p_c: Option<f64>,
    /// Mean compression ratio of the dispatched deltas (compressed bytes / page).
    pub r_c: Option<f64>,
    /// P_ow: committed deltas later overwritten / committed deltas.
    pub p_ow: Option<f64>,
    /// Foreground page programs (PMA pages + DLA pages) and the model's (1 − P_c + P_c·R_c)·N from
    /// the measured P_c and R_c.
    pub foreground_pages: u64,
    pub foreground_model: Option<f64>,
    /// DLA page commits / all foreground page programs (Fig. 4.8's wording).
    pub dla_share_of_foreground: Option<f64>,
    /// Share of GC victims in the delta log area (Fig. 4.11).
    pub gc_dla_share: Option<f64>,
    /// Mean page-equivalents reclaimed per victim (Fig. 4.9; invalid deltas in fractions of a page).
    pub gc_gain: Option<f64>,
    /// Raw read latency relative to reading every page once (a delta-form page costs two reads).
    pub raw_read_factor: Option<f64>,
}

impl DeltaReport {
    pub fn new(c: DeltaStats, page_bytes: u32, pages_per_block: u32) -> Self {
        let share = |n: f64, of: f64| (of > 0.0).then(|| n / of);
        let p_c = share(c.delta_writes as f64, c.writes as f64);
        let r_c = share(c.delta_bytes as f64, c.delta_writes as f64 * page_bytes as f64);
        let foreground_pages = c.pma_pages + c.dla_pages;
        let victims = c.gc_victims_dla + c.gc_victims_pma;
        DeltaReport {
            p_c,
            r_c,
            p_ow: share(c.deltas_overwritten as f64, c.deltas_committed as f64),
            foreground_pages,
            foreground_model: p_c.map(|p| foreground_writes(p, r_c.unwrap_or(0.0), c.writes as f64)),
            dla_share_of_foreground: share(c.dla_pages as f64, foreground_pages as f64),
            gc_dla_share: share(c.gc_victims_dla as f64, victims as f64),
            gc_gain: share(victims as f64 * pages_per_block as f64 - c.gc_moved_page_equivalents, victims as f64),
            raw_read_factor: share((c.reads + c.delta_reads - c.buffered_delta_reads) as f64, c.reads as f64),
            counts: c,
        }
    }
}
