//! What the schemes that garbage-collect clusters of logical blocks (CPM and K-CPM, paper 004)
//! count, and the report section derived from it: GC invocations by type, the space left when GC
//! ran, associativity, adopted pages. (Paper 004's overheads, spec C.9, are every FTL's:
//! [`super::FlashTimeReport`].)

use serde::Serialize;

/// The full mapping tables of a clustered FTL, as paper 004's Table I sizes them (they live in
/// flash; SRAM caches them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TableSizes {
    /// The page map: 4 bytes per logical page.
    pub pmt_bytes: u64,
    /// The cluster-block map: N_Bmax^C entries (block number and valid count) per cluster.
    pub cbmt_bytes: u64,
    /// K-CPM's association and distribution maps: K entries of 4 bytes per cluster each (none
    /// at K = 1).
    pub camt_bytes: u64,
    pub cdmt_bytes: u64,
}

/// Counters of a clustered FTL (sums over GC invocations where a mean is reported), and the
/// sizes of its tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ClusterStats {
    pub tables: TableSizes,
    /// GC invocations (each reclaims by IntraGC or InterGC, after a K-InterGC if it needed one).
    pub invocations: u64,
    pub intra_gcs: u64,
    pub inter_gcs: u64,
    pub k_inter_gcs: u64,
    /// Blocks erased by cluster GC.
    pub gc_erases: u64,
    /// Free pages when GC was invoked: in the clusters' blocks plus the free blocks data may
    /// take, the reserved GC block excluded (summed over invocations).
    pub remaining_pages: u64,
    /// N_alpha summed over the clusters holding blocks, and those clusters counted, at each
    /// invocation.
    pub associativity: u64,
    pub clusters_holding_blocks: u64,
    /// Valid adopted pages at each invocation, summed.
    pub adopted_pages: u64,
    /// Host pages written to a distributed cluster (K-CPM's write cases 3 and 4).
    pub adopted_writes: u64,
    /// Associations made (a cluster gained a distributed cluster).
    pub new_distributed_clusters: u64,
    /// Accesses to the cached cluster-block map (CBMT) rows, and those that missed.
    pub cbmt_accesses: u64,
    pub cbmt_misses: u64,
}

impl ClusterStats {
    pub fn since(&self, earlier: &ClusterStats) -> ClusterStats {
        ClusterStats {
            tables: self.tables,
            invocations: self.invocations - earlier.invocations,
            intra_gcs: self.intra_gcs - earlier.intra_gcs,
            inter_gcs: self.inter_gcs - earlier.inter_gcs,
            k_inter_gcs: self.k_inter_gcs - earlier.k_inter_gcs,
            gc_erases: self.gc_erases - earlier.gc_erases,
            remaining_pages: self.remaining_pages - earlier.remaining_pages,
            associativity: self.associativity - earlier.associativity,
            clusters_holding_blocks: self.clusters_holding_blocks - earlier.clusters_holding_blocks,
            adopted_pages: self.adopted_pages - earlier.adopted_pages,
            adopted_writes: self.adopted_writes - earlier.adopted_writes,
            new_distributed_clusters: self.new_distributed_clusters - earlier.new_distributed_clusters,
            cbmt_accesses: self.cbmt_accesses - earlier.cbmt_accesses,
            cbmt_misses: self.cbmt_misses - earlier.cbmt_misses,
        }
    }
}

/// The `clusters` section of a report (CPM and K-CPM only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterReport {
    #[serde(flatten)]
    pub counts: ClusterStats,
    /// InterGC's share of IntraGC + InterGC (paper 004 Fig. 9).
    pub inter_gc_share: Option<f64>,
    /// Mean free pages left when GC was invoked (paper 004 Fig. 11's "remaining space").
    pub mean_remaining_pages_at_gc: Option<f64>,
    /// Mean N_alpha of the clusters holding blocks, over GC invocations (paper 004: 2.89).
    pub mean_associativity: Option<f64>,
    pub mean_adopted_pages_at_gc: Option<f64>,
}

impl ClusterReport {
    pub fn new(counts: ClusterStats) -> Self {
        let ratio = |a: u64, b: u64| (b != 0).then(|| a as f64 / b as f64);
        ClusterReport {
            inter_gc_share: ratio(counts.inter_gcs, counts.intra_gcs + counts.inter_gcs),
            mean_remaining_pages_at_gc: ratio(counts.remaining_pages, counts.invocations),
            mean_associativity: ratio(counts.associativity, counts.clusters_holding_blocks),
            mean_adopted_pages_at_gc: ratio(counts.adopted_pages, counts.invocations),
            counts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_are_per_invocation() {
        let stats =
            ClusterStats { intra_gcs: 3, inter_gcs: 1, invocations: 4, remaining_pages: 40, ..Default::default() };
        let r = ClusterReport::new(stats);
        assert_eq!((r.inter_gc_share, r.mean_remaining_pages_at_gc), (Some(0.25), Some(10.0)));
        assert_eq!(r.mean_associativity, None);
    }
}
