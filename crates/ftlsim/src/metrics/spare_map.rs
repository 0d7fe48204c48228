//! Mapping kept in spare areas (3DFTL, paper 000 Figs 6.7-6.10): the format each spare area was
//! written in, and the level at which each translation finished.

use serde::Serialize;

/// Counts kept by a scheme that writes its mapping into the data pages' spare areas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SpareMapStats {
    /// Spare areas written compressed with every subgroup's PMT entries.
    pub compressed: u64,
    /// Compressed with some subgroups replaced by their LTD entry.
    pub semi_compressed: u64,
    /// Uncompressed (only the own subgroup's PMT entries).
    pub uncompressed: u64,
    /// Translations finished in the cache.
    pub in_cache: u64,
    /// Finished at the GTD level: one read of the group's newest page (a group never written
    /// needs none).
    pub at_gtd: u64,
    /// Finished at the LTD level with the group's line cached: one read.
    pub at_cached_ltd: u64,
    /// Finished at the LTD level after the GTD level: two reads.
    pub at_ltd: u64,
}

impl SpareMapStats {
    pub fn since(&self, earlier: &SpareMapStats) -> SpareMapStats {
        SpareMapStats {
            compressed: self.compressed - earlier.compressed,
            semi_compressed: self.semi_compressed - earlier.semi_compressed,
            uncompressed: self.uncompressed - earlier.uncompressed,
            in_cache: self.in_cache - earlier.in_cache,
            at_gtd: self.at_gtd - earlier.at_gtd,
            at_cached_ltd: self.at_cached_ltd - earlier.at_cached_ltd,
            at_ltd: self.at_ltd - earlier.at_ltd,
        }
    }
}

/// `report.spare_map`: the counts and their shares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpareMapReport {
    #[serde(flatten)]
    pub counts: SpareMapStats,
    /// Shares of the spare areas written in each format (Fig 6.7).
    pub compressed_share: Option<f64>,
    pub semi_compressed_share: Option<f64>,
    pub uncompressed_share: Option<f64>,
    /// Shares of translations finished at each level (Fig 6.10).
    pub in_cache_share: Option<f64>,
    pub at_gtd_share: Option<f64>,
    pub at_cached_ltd_share: Option<f64>,
    pub at_ltd_share: Option<f64>,
}

impl SpareMapReport {
    pub fn new(c: SpareMapStats) -> Self {
        let written = c.compressed + c.semi_compressed + c.uncompressed;
        let translations = c.in_cache + c.at_gtd + c.at_cached_ltd + c.at_ltd;
        let share = |n: u64, of: u64| (of != 0).then(|| n as f64 / of as f64);
        SpareMapReport {
            compressed_share: share(c.compressed, written),
            semi_compressed_share: share(c.semi_compressed, written),
            uncompressed_share: share(c.uncompressed, written),
            in_cache_share: share(c.in_cache, translations),
            at_gtd_share: share(c.at_gtd, translations),
            at_cached_ltd_share: share(c.at_cached_ltd, translations),
            at_ltd_share: share(c.at_ltd, translations),
            counts: c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_of_spare_areas_written_and_of_translations() {
        let c = SpareMapStats {
            compressed: 3,
            semi_compressed: 1,
            in_cache: 6,
            at_gtd: 2,
            at_ltd: 2,
            ..Default::default()
        };
        let r = SpareMapReport::new(c);
        assert_eq!((r.compressed_share, r.uncompressed_share), (Some(0.75), Some(0.0)));
        assert_eq!((r.in_cache_share, r.at_ltd_share), (Some(0.6), Some(0.2)));
        assert_eq!(SpareMapReport::new(SpareMapStats::default()).at_gtd_share, None);
        assert_eq!(c.since(&SpareMapStats { compressed: 1, ..Default::default() }).compressed, 2);
    }
}
