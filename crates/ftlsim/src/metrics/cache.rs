//! The cache-access classes of paper 000 §4.1.1, recorded once per access by every mapping cache.

use serde::Serialize;

/// How one mapping-cache access was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheAccess {
    Hit,
    /// Missed, but needed neither a fetch nor a write-back (e.g. a GC mapping update).
    MissNoPenalty,
    /// Missed and fetched one translation page (or spare area).
    MissFetch,
    /// Missed and needed two reads (3DFTL's full three-level translation).
    MissFetchTwo,
    /// Missed and evicted a modified entry, writing it back (counts here even if it also fetched).
    MissWriteBack,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CacheStats {
    pub hit: u64,
    pub miss_no_penalty: u64,
    pub miss_fetch: u64,
    pub miss_fetch_two: u64,
    pub miss_writeback: u64,
    /// Accesses made on behalf of GC page moves (a subset of the classes above).
    pub gc_accesses: u64,
    /// GC accesses that hit.
    pub gc_hits: u64,
    /// GC accesses classified as misses with write-back (N_dt of paper 002's model).
    pub gc_writebacks: u64,
    /// Evictions of a modified entry (P_rd numerator, paper 002).
    pub dirty_evictions: u64,
    /// All evictions (P_rd denominator).
    pub evictions: u64,
}

impl CacheStats {
    #[inline]
    pub fn record(&mut self, access: CacheAccess) {
        match access {
            CacheAccess::Hit => self.hit += 1,
            CacheAccess::MissNoPenalty => self.miss_no_penalty += 1,
            CacheAccess::MissFetch => self.miss_fetch += 1,
            CacheAccess::MissFetchTwo => self.miss_fetch_two += 1,
            CacheAccess::MissWriteBack => self.miss_writeback += 1,
        }
    }

    #[inline]
    pub fn record_gc(&mut self, access: CacheAccess) {
        self.record(access);
        self.gc_accesses += 1;
        self.gc_hits += (access == CacheAccess::Hit) as u64;
        self.gc_writebacks += (access == CacheAccess::MissWriteBack) as u64;
    }

    pub fn accesses(&self) -> u64 {
        self.hit + self.miss_no_penalty + self.miss_fetch + self.miss_fetch_two + self.miss_writeback
    }
}
