//! Mapping-cache occupancy (paper 002 Figs. 1(a), 1(b) and 10): how the cached entries spread
//! over translation pages, sampled from the cache's own structures every
//! [`OCCUPANCY_SAMPLE_EVERY`] host page accesses. Sampling reads the cache and changes nothing.

use serde::Serialize;

/// Host page accesses between two samples (paper 002 Fig. 1: "sampling the mapping cache every
/// 10,000 user page accesses").
pub const OCCUPANCY_SAMPLE_EVERY: u64 = 10_000;

/// Bytes of an uncompressed mapping entry (a 4-byte LPN and a 4-byte PPN, DFTL's in paper 002):
/// the unit of the space utilization.
const FULL_ENTRY_BYTES: u64 = 8;

/// One look at a mapping cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Occupancy {
    /// The cache's capacity in bytes (entries plus whatever per-page nodes it keeps).
    pub cache_bytes: u64,
    /// Cached translation pages: TPs with at least one cached entry.
    pub tps: u64,
    pub entries: u64,
    pub dirty_entries: u64,
    /// Cached TPs with more than one dirty entry.
    pub tps_over_one_dirty: u64,
}

impl Occupancy {
    pub fn new(cache_bytes: u64) -> Self {
        Occupancy { cache_bytes, ..Default::default() }
    }

    /// Adds one cached TP holding `entries` entries, `dirty` of them dirty.
    pub fn add_tp(&mut self, entries: u32, dirty: u32) {
        self.tps += 1;
        self.entries += entries as u64;
        self.dirty_entries += dirty as u64;
        self.tps_over_one_dirty += (dirty > 1) as u64;
    }
}

/// The means (and maxima) of the samples of one run.
#[derive(Debug, Clone, Default)]
pub struct OccupancySampler {
    /// Host page accesses until the next sample.
    until_sample: u64,
    samples: u64,
    sum_tps: f64,
    max_tps: u64,
    sum_entries: f64,
    sum_entries_per_tp: f64,
    max_entries_per_tp: f64,
    sum_over_one_dirty: f64,
    sum_dirty_per_tp: f64,
    max_dirty_per_tp: f64,
    sum_utilization: f64,
}

impl OccupancySampler {
    pub fn new() -> Self {
        OccupancySampler { until_sample: OCCUPANCY_SAMPLE_EVERY, ..Default::default() }
    }

    /// Counts one host page access; every [`OCCUPANCY_SAMPLE_EVERY`]th takes a sample with
    /// `look` (`None` from an FTL without such a cache, which leaves the report section out).
    #[inline]
    pub fn access(&mut self, look: impl FnOnce() -> Option<Occupancy>) {
        self.until_sample -= 1;
        if self.until_sample == 0 {
            self.until_sample = OCCUPANCY_SAMPLE_EVERY;
            if let Some(o) = look() {
                self.record(o);
            }
        }
    }

    /// Adds a sample; an empty cache has no per-TP figures and is not one.
    pub fn record(&mut self, o: Occupancy) {
        if o.tps == 0 {
            return;
        }
        let tps = o.tps as f64;
        let entries_per_tp = o.entries as f64 / tps;
        let dirty_per_tp = o.dirty_entries as f64 / tps;
        self.samples += 1;
        self.sum_tps += tps;
        self.max_tps = self.max_tps.max(o.tps);
        self.sum_entries += o.entries as f64;
        self.sum_entries_per_tp += entries_per_tp;
        self.max_entries_per_tp = self.max_entries_per_tp.max(entries_per_tp);
        self.sum_over_one_dirty += o.tps_over_one_dirty as f64 / tps;
        self.sum_dirty_per_tp += dirty_per_tp;
        self.max_dirty_per_tp = self.max_dirty_per_tp.max(dirty_per_tp);
        self.sum_utilization += (o.entries * FULL_ENTRY_BYTES) as f64 / o.cache_bytes.max(1) as f64;
    }

    /// The report section (`None` when no sample was taken).
    pub fn report(&self) -> Option<OccupancyReport> {
        let n = self.samples as f64;
        (self.samples > 0).then(|| OccupancyReport {
            samples: self.samples,
            sample_every: OCCUPANCY_SAMPLE_EVERY,
            mean_cached_tps: self.sum_tps / n,
            max_cached_tps: self.max_tps,
            mean_entries: self.sum_entries / n,
            mean_entries_per_tp: self.sum_entries_per_tp / n,
            max_entries_per_tp: self.max_entries_per_tp,
            tps_over_one_dirty_share: self.sum_over_one_dirty / n,
            mean_dirty_entries_per_tp: self.sum_dirty_per_tp / n,
            max_dirty_entries_per_tp: self.max_dirty_per_tp,
            space_utilization: self.sum_utilization / n,
        })
    }
}

/// `cache.occupancy` of the report: means over the samples (each defined in `docs/metrics.md`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OccupancyReport {
    pub samples: u64,
    pub sample_every: u64,
    pub mean_cached_tps: f64,
    pub max_cached_tps: u64,
    pub mean_entries: f64,
    pub mean_entries_per_tp: f64,
    pub max_entries_per_tp: f64,
    pub tps_over_one_dirty_share: f64,
    pub mean_dirty_entries_per_tp: f64,
    pub max_dirty_entries_per_tp: f64,
    /// Mappings held, at 8 bytes each, over the cache's bytes (paper 002 Fig. 10).
    pub space_utilization: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tp_counts_among_those_over_one_dirty_entry_from_two() {
        let mut o = Occupancy::new(80);
        o.add_tp(3, 2);
        o.add_tp(1, 1);
        o.add_tp(1, 0);
        assert_eq!(o, Occupancy { cache_bytes: 80, tps: 3, entries: 5, dirty_entries: 3, tps_over_one_dirty: 1 });
    }

    #[test]
    fn samples_every_10000_accesses_and_averages_them() {
        let mut s = OccupancySampler::new();
        let mut looks = 0;
        for _ in 0..2 * OCCUPANCY_SAMPLE_EVERY + 1 {
            s.access(|| {
                looks += 1;
                let mut o = Occupancy::new(64);
                // First sample: 4 entries in 1 TP, 2 dirty; second: 6 entries in 2 TPs, none dirty.
                if looks == 1 {
                    o.add_tp(4, 2);
                } else {
                    o.add_tp(3, 0);
                    o.add_tp(3, 0);
                }
                Some(o)
            });
        }
        assert_eq!(looks, 2);
        let r = s.report().unwrap();
        assert_eq!((r.samples, r.max_cached_tps), (2, 2));
        assert_eq!((r.mean_cached_tps, r.mean_entries), (1.5, 5.0));
        assert_eq!((r.mean_entries_per_tp, r.max_entries_per_tp), (3.5, 4.0));
        assert_eq!(r.tps_over_one_dirty_share, 0.5);
        assert_eq!((r.mean_dirty_entries_per_tp, r.max_dirty_entries_per_tp), (1.0, 2.0));
        // 4 and 6 mappings at 8 B in 64 B: 0.5 and 0.75.
        assert_eq!(r.space_utilization, 0.625);
    }

    #[test]
    fn no_sample_no_section() {
        let mut s = OccupancySampler::new();
        for _ in 0..OCCUPANCY_SAMPLE_EVERY {
            s.access(|| None);
        }
        s.record(Occupancy::new(64));
        assert_eq!(s.report(), None);
    }
}
