//! Statistics of a request stream: the columns of paper 000 Tables 4.2 and 4.4 (requests,
//! write %, mean size, mean read size, mean write size, with KB = 1024 B), plus footprint,
//! sequentiality, inter-arrival distribution and address range; and locality measures: the hit
//! ratio of an LRU mapping cache (paper 000 chapter 5's DFTL: 2048 entries of 8 KiB pages, by
//! default) and WR_max (paper 001 section 2.3.3: the share of page reads that read a page the
//! trace wrote before); and paper 004 Table II's working sets (contiguous regions of accessed
//! 4 KiB pages, merged when closer than 512 KB) and mean page update count.

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::{IoKind, Request};

/// Footprint granularity.
pub const FOOTPRINT_PAGE: u64 = 4096;
/// Pages per bitmap chunk of the footprint set.
const CHUNK_PAGES: u64 = 64 * 64;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterArrival {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// Writes as a percentage of all requests.
    pub write_percent: f64,
    /// Mean request size in KB (1024 B) over reads and writes; trims are left out.
    pub mean_size_kb: f64,
    pub mean_read_size_kb: f64,
    pub mean_write_size_kb: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Distinct 4 KiB pages touched, in bytes.
    pub footprint_bytes: u64,
    /// Distinct 4 KiB pages written, in bytes.
    pub write_footprint_bytes: u64,
    /// Requests that start where the previous request ended, percent of requests.
    pub sequential_percent: f64,
    /// Reads that start where the previous read ended, percent of reads.
    pub sequential_read_percent: f64,
    /// Writes that start where the previous write ended, percent of writes.
    pub sequential_write_percent: f64,
    pub min_offset_bytes: u64,
    /// One past the last byte addressed.
    pub max_end_bytes: u64,
    pub duration_s: f64,
    pub interarrival: InterArrival,
    /// Page lookups of an LRU mapping cache that hit, percent of lookups.
    pub mapping_cache: MappingCacheStats,
    /// Page reads (4 KiB) of pages written earlier in the trace, percent of page reads (WR_max).
    pub wr_max_percent: f64,
    /// WR_max weighted by request: each read request counts the share of its pages written
    /// earlier, percent of read requests.
    pub wr_max_request_percent: f64,
    /// Working sets and page updates (paper 004 Table II).
    pub working_sets: WorkingSetStats,
    /// Idle slots: the gaps between consecutive arrivals (paper 001 Fig. 2.5, with service
    /// time neglected: the trace's idle time, an upper bound of a device's).
    pub idle_slots: IdleSlotCdf,
    /// Malformed lines skipped while reading.
    pub skipped_lines: u64,
    /// Lines read that hold no request: other blkparse events (plugs, completions, messages),
    /// SPC lines of ASUs not selected, a header.
    pub non_request_lines: u64,
}

/// Paper 004 Table II's columns beside the write ratio and mean size: the working sets are the
/// contiguous regions of accessed (read or written) 4 KiB pages, two regions merged when the gap
/// between them is under [`WS_MERGE_BYTES`]; a set's size is its extent, first page to last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkingSetStats {
    pub count: u64,
    /// Mean extent of a working set, MB (2^20 B).
    pub mean_size_mb: f64,
    pub merge_distance_kb: u64,
    /// Page writes (4 KiB) per distinct page written: Table II's "Avg. page update".
    pub mean_page_updates: f64,
}

/// Regions of accessed pages closer than this are one working set (paper 004 section VI-C).
pub const WS_MERGE_BYTES: u64 = 512 << 10;

/// The distribution of idle-slot lengths: how many, their mean, and the share longer than each
/// of [`IDLE_SLOT_THRESHOLDS_MS`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleSlotCdf {
    pub slots: u64,
    pub mean_ms: f64,
    pub longer_than: Vec<IdleSlotShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleSlotShare {
    pub ms: f64,
    /// Idle slots longer than `ms`, percent of idle slots.
    pub percent: f64,
}

/// Where the idle-slot CDF is read (paper 001 Fig. 2.5 spans 0.1 ms to 1 s; 5 ms is the text's mark).
pub const IDLE_SLOT_THRESHOLDS_MS: [f64; 8] = [0.1, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 1000.0];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappingCacheStats {
    /// Entries the cache holds, one per logical page.
    pub entries: u64,
    pub page_bytes: u64,
    /// Page lookups (every logical page of every read and write request).
    pub lookups: u64,
    pub hit_percent: f64,
}

/// An LRU cache of one entry per logical page, as a demand-based FTL's entry cache (DFTL).
pub struct LruModel {
    entries: u64,
    page_bytes: u64,
    /// Page -> the stamp of its last use.
    last_use: HashMap<u64, u64>,
    /// Stamp -> page, oldest first.
    by_age: BTreeMap<u64, u64>,
    clock: u64,
    hits: u64,
}

impl LruModel {
    /// Paper 000 chapter 5's DFTL: 16,896 bytes of 66-bit entries on 8 KiB pages (`mlc8g`).
    pub const PAPER000_DFTL: (u64, u64) = (2048, 8192);

    pub fn new(entries: u64, page_bytes: u64) -> LruModel {
        LruModel {
            entries: entries.max(1),
            page_bytes: page_bytes.max(1),
            last_use: HashMap::new(),
            by_age: BTreeMap::new(),
            clock: 0,
            hits: 0,
        }
    }

    fn access(&mut self, page: u64) {
        self.clock += 1;
        match self.last_use.insert(page, self.clock) {
            Some(previous) => {
                self.hits += 1;
                self.by_age.remove(&previous);
            }
            None if self.last_use.len() as u64 > self.entries => {
                let (_, oldest) = self.by_age.pop_first().expect("a full cache has an oldest entry");
                self.last_use.remove(&oldest);
            }
            None => {}
        }
        self.by_age.insert(self.clock, page);
    }

    fn request(&mut self, offset: u64, len: u64) {
        for page in offset / self.page_bytes..=(offset + len - 1) / self.page_bytes {
            self.access(page);
        }
    }

    fn stats(&self) -> MappingCacheStats {
        MappingCacheStats {
            entries: self.entries,
            page_bytes: self.page_bytes,
            lookups: self.clock,
            hit_percent: percent(self.hits, self.clock),
        }
    }
}

/// A set of page numbers kept as 4096-page bitmaps: memory follows the footprint.
#[derive(Default)]
struct PageSet {
    chunks: HashMap<u64, Box<[u64; 64]>>,
    count: u64,
}

impl PageSet {
    fn insert(&mut self, page: u64) {
        let chunk = self.chunks.entry(page / CHUNK_PAGES).or_insert_with(|| Box::new([0; 64]));
        let bit = page % CHUNK_PAGES;
        let word = &mut chunk[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        self.count += (*word & mask == 0) as u64;
        *word |= mask;
    }

    /// The pages in ascending order.
    fn pages(&self) -> impl Iterator<Item = u64> + '_ {
        let mut chunks: Vec<_> = self.chunks.iter().collect();
        chunks.sort_unstable_by_key(|(c, _)| **c);
        chunks.into_iter().flat_map(|(c, words)| {
            words.iter().enumerate().flat_map(move |(w, &word)| {
                let base = c * CHUNK_PAGES + w as u64 * 64;
                (0..64).filter(move |b| word & (1 << b) != 0).map(move |b| base + b)
            })
        })
    }

    fn contains(&self, page: u64) -> bool {
        let bit = page % CHUNK_PAGES;
        self.chunks.get(&(page / CHUNK_PAGES)).is_some_and(|c| c[(bit / 64) as usize] & (1u64 << (bit % 64)) != 0)
    }
}

/// Accumulates [`TraceStats`] one request at a time.
pub struct StatsBuilder {
    counts: [u64; 3],
    bytes: [u64; 3],
    sequential: u64,
    sequential_kind: [u64; 3],
    previous_end: Option<u64>,
    previous_end_kind: [Option<u64>; 3],
    touched: PageSet,
    written: PageSet,
    page_reads: u64,
    page_reads_of_written: u64,
    page_writes: u64,
    /// Over read requests: the share of each one's pages written before, summed.
    read_share_of_written: f64,
    cache: LruModel,
    min_offset: u64,
    max_end: u64,
    first_arrival: Option<u64>,
    last_arrival: u64,
    gaps: Histogram<u64>,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        StatsBuilder {
            counts: [0; 3],
            bytes: [0; 3],
            sequential: 0,
            sequential_kind: [0; 3],
            previous_end: None,
            previous_end_kind: [None; 3],
            touched: PageSet::default(),
            written: PageSet::default(),
            page_reads: 0,
            page_reads_of_written: 0,
            page_writes: 0,
            read_share_of_written: 0.0,
            cache: LruModel::new(LruModel::PAPER000_DFTL.0, LruModel::PAPER000_DFTL.1),
            min_offset: u64::MAX,
            max_end: 0,
            first_arrival: None,
            last_arrival: 0,
            gaps: Histogram::new(3).expect("valid histogram"),
        }
    }
}

fn kind_index(kind: IoKind) -> usize {
    match kind {
        IoKind::Read => 0,
        IoKind::Write => 1,
        IoKind::Trim => 2,
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn kb(bytes: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        bytes as f64 / count as f64 / 1024.0
    }
}

impl StatsBuilder {
    /// Statistics whose mapping-cache hit ratio is that of `entries` entries of `page_bytes` pages.
    pub fn with_cache(entries: u64, page_bytes: u64) -> StatsBuilder {
        StatsBuilder { cache: LruModel::new(entries, page_bytes), ..StatsBuilder::default() }
    }

    pub fn add(&mut self, r: &Request) {
        let k = kind_index(r.kind);
        let end = r.offset_bytes.saturating_add(r.len_bytes);
        self.counts[k] += 1;
        self.bytes[k] += r.len_bytes;
        self.sequential += (self.previous_end == Some(r.offset_bytes)) as u64;
        self.sequential_kind[k] += (self.previous_end_kind[k] == Some(r.offset_bytes)) as u64;
        self.previous_end = Some(end);
        self.previous_end_kind[k] = Some(end);
        if r.kind != IoKind::Trim && r.len_bytes > 0 {
            let (reads, of_written) = (self.page_reads, self.page_reads_of_written);
            for page in r.offset_bytes / FOOTPRINT_PAGE..=(end - 1) / FOOTPRINT_PAGE {
                self.touched.insert(page);
                if r.kind == IoKind::Write {
                    self.written.insert(page);
                    self.page_writes += 1;
                } else {
                    self.page_reads += 1;
                    self.page_reads_of_written += self.written.contains(page) as u64;
                }
            }
            if r.kind == IoKind::Read {
                self.read_share_of_written +=
                    (self.page_reads_of_written - of_written) as f64 / (self.page_reads - reads) as f64;
            }
            self.cache.request(r.offset_bytes, r.len_bytes);
        }
        self.min_offset = self.min_offset.min(r.offset_bytes);
        self.max_end = self.max_end.max(end);
        if self.first_arrival.is_some() {
            let _ = self.gaps.record(r.arrival_ns.saturating_sub(self.last_arrival));
        } else {
            self.first_arrival = Some(r.arrival_ns);
        }
        self.last_arrival = self.last_arrival.max(r.arrival_ns);
    }

    pub fn finish(&self, skipped_lines: u64, non_request_lines: u64) -> TraceStats {
        let [reads, writes, trims] = self.counts;
        let requests = reads + writes + trims;
        let us = |ns: u64| ns as f64 / 1000.0;
        let duration = self.last_arrival - self.first_arrival.unwrap_or(0);
        let h = &self.gaps;
        TraceStats {
            requests,
            reads,
            writes,
            trims,
            write_percent: percent(writes, requests),
            mean_size_kb: kb(self.bytes[0] + self.bytes[1], reads + writes),
            mean_read_size_kb: kb(self.bytes[0], reads),
            mean_write_size_kb: kb(self.bytes[1], writes),
            bytes_read: self.bytes[0],
            bytes_written: self.bytes[1],
            footprint_bytes: self.touched.count * FOOTPRINT_PAGE,
            write_footprint_bytes: self.written.count * FOOTPRINT_PAGE,
            sequential_percent: percent(self.sequential, requests),
            sequential_read_percent: percent(self.sequential_kind[0], reads),
            sequential_write_percent: percent(self.sequential_kind[1], writes),
            min_offset_bytes: if requests == 0 { 0 } else { self.min_offset },
            max_end_bytes: self.max_end,
            duration_s: duration as f64 / 1e9,
            interarrival: InterArrival {
                mean_us: if requests > 1 { us(duration) / (requests - 1) as f64 } else { 0.0 },
                p50_us: us(h.value_at_quantile(0.5)),
                p90_us: us(h.value_at_quantile(0.9)),
                p99_us: us(h.value_at_quantile(0.99)),
                max_us: us(h.max()),
            },
            mapping_cache: self.cache.stats(),
            wr_max_percent: percent(self.page_reads_of_written, self.page_reads),
            wr_max_request_percent: if reads == 0 { 0.0 } else { self.read_share_of_written * 100.0 / reads as f64 },
            working_sets: self.working_sets(),
            idle_slots: self.idle_slots(),
            skipped_lines,
            non_request_lines,
        }
    }
}

impl StatsBuilder {
    /// The working sets of the pages touched so far.
    fn working_sets(&self) -> WorkingSetStats {
        let merge = WS_MERGE_BYTES / FOOTPRINT_PAGE;
        // (first page, one past the last page) of each set.
        let mut sets: Vec<(u64, u64)> = Vec::new();
        for page in self.touched.pages() {
            match sets.last_mut() {
                Some((_, end)) if page - *end < merge => *end = page + 1,
                _ => sets.push((page, page + 1)),
            }
        }
        let pages: u64 = sets.iter().map(|(start, end)| end - start).sum();
        WorkingSetStats {
            count: sets.len() as u64,
            mean_size_mb: if sets.is_empty() {
                0.0
            } else {
                (pages * FOOTPRINT_PAGE) as f64 / sets.len() as f64 / (1u64 << 20) as f64
            },
            merge_distance_kb: WS_MERGE_BYTES >> 10,
            mean_page_updates: if self.written.count == 0 {
                0.0
            } else {
                self.page_writes as f64 / self.written.count as f64
            },
        }
    }

    /// The gaps between arrivals that are not zero, from the inter-arrival histogram (3
    /// significant digits).
    fn idle_slots(&self) -> IdleSlotCdf {
        let h = &self.gaps;
        let slots = h.len() - h.count_at(0);
        let total_ns: f64 = h.iter_recorded().map(|v| v.value_iterated_to() as f64 * v.count_at_value() as f64).sum();
        let longer_than = IDLE_SLOT_THRESHOLDS_MS
            .iter()
            .map(|&ms| {
                let at = (ms * 1e6) as u64;
                let longer = h.len() - h.count_between(0, at);
                IdleSlotShare { ms, percent: percent(longer, slots) }
            })
            .collect();
        IdleSlotCdf { slots, mean_ms: if slots == 0 { 0.0 } else { total_ns / slots as f64 / 1e6 }, longer_than }
    }
}

/// Statistics of a whole stream; stops at the first error.
pub fn stats(requests: impl Iterator<Item = crate::Result<Request>>) -> crate::Result<StatsBuilder> {
    let mut b = StatsBuilder::default();
    for r in requests {
        b.add(&r?);
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_columns_and_sequentiality() {
        let reqs = [
            Request::new(0, IoKind::Write, 0, 8192, 1),
            Request::new(1000, IoKind::Write, 8192, 4096, 2),
            Request::new(3000, IoKind::Read, 0, 2048, 3),
            Request::new(6000, IoKind::Read, 2048, 2048, 4),
        ];
        let s = stats(reqs.into_iter().map(Ok)).unwrap().finish(2, 0);
        assert_eq!((s.requests, s.reads, s.writes), (4, 2, 2));
        assert_eq!(s.write_percent, 50.0);
        assert_eq!(s.mean_size_kb, 4.0);
        assert_eq!((s.mean_read_size_kb, s.mean_write_size_kb), (2.0, 6.0));
        assert_eq!((s.footprint_bytes, s.write_footprint_bytes), (12288, 12288));
        assert_eq!(s.sequential_percent, 50.0); // requests 2 and 4
        assert_eq!((s.sequential_read_percent, s.sequential_write_percent), (50.0, 50.0));
        assert_eq!((s.min_offset_bytes, s.max_end_bytes), (0, 12288));
        assert_eq!(s.interarrival.mean_us, 2.0);
        assert_eq!(s.skipped_lines, 2);
        // Reads of pages 0 (written) twice: WR_max 100%.
        assert_eq!(s.wr_max_percent, 100.0);
    }

    /// Pages 0-1 and 100-101 (a 392 KiB gap) form one working set, page 300 (a 792 KiB gap)
    /// another; pages 0 and 1 are written three times, page 300 once.
    #[test]
    fn working_sets_merge_closer_than_512_kb() {
        let reqs = [
            Request::new(0, IoKind::Write, 0, 8192, 1),
            Request::new(1, IoKind::Write, 0, 8192, 2),
            Request::new(2, IoKind::Read, 100 * 4096, 8192, 3),
            Request::new(3, IoKind::Write, 300 * 4096, 4096, 4),
            Request::new(4, IoKind::Write, 0, 8192, 5),
        ];
        let ws = stats(reqs.into_iter().map(Ok)).unwrap().finish(0, 0).working_sets;
        assert_eq!(ws.count, 2);
        assert_eq!(ws.mean_size_mb, (102.0 + 1.0) * 4096.0 / 2.0 / 1048576.0);
        assert_eq!(ws.mean_page_updates, 7.0 / 3.0);
    }

    /// A read of a page written before counts toward WR_max, one never written does not.
    #[test]
    fn wr_max_counts_page_reads_of_written_pages() {
        let reqs = [
            Request::new(0, IoKind::Read, 0, 8192, 1),     // pages 0, 1: not written yet
            Request::new(1, IoKind::Write, 4096, 8192, 2), // pages 1, 2
            Request::new(2, IoKind::Read, 0, 16384, 3),    // pages 0..3: 1 and 2 written
        ];
        let s = stats(reqs.into_iter().map(Ok)).unwrap().finish(0, 0);
        assert_eq!(s.wr_max_percent, 100.0 * 2.0 / 6.0);
        // By request: the first read has none of its 2 pages written, the second 2 of 4.
        assert_eq!(s.wr_max_request_percent, 25.0);
    }

    /// Paper 001 Fig. 2.5: the idle slots are the gaps between arrivals; simultaneous arrivals
    /// leave none.
    #[test]
    fn idle_slots_are_the_gaps_between_arrivals() {
        let ms = 1_000_000;
        let arrivals = [0, 2 * ms, 2 * ms, 8 * ms, 8 * ms + ms / 5, 108 * ms + ms / 5];
        let reqs = arrivals.iter().enumerate().map(|(i, &t)| Ok(Request::new(t, IoKind::Read, 0, 4096, i as u64)));
        let idle = stats(reqs).unwrap().finish(0, 0).idle_slots;
        // Gaps of 2, 6, 0.2 and 100 ms.
        assert_eq!(idle.slots, 4);
        assert!((idle.mean_ms - 108.2 / 4.0).abs() < 0.05, "{}", idle.mean_ms);
        let share = |t: f64| idle.longer_than.iter().find(|s| s.ms == t).unwrap().percent;
        assert_eq!((share(0.1), share(1.0), share(5.0), share(10.0), share(1000.0)), (100.0, 75.0, 50.0, 25.0, 0.0));
    }

    /// An LRU of 2 entries: a cyclic scan of 3 pages always misses, of 2 pages hits after the
    /// first pass; multi-page requests look up each page.
    #[test]
    fn lru_mapping_cache_hits() {
        let scan = |pages: u64| {
            let mut b = StatsBuilder::with_cache(2, 4096);
            for i in 0..12 {
                b.add(&Request::new(i, IoKind::Read, (i % pages) * 4096, 4096, i + 1));
            }
            b.finish(0, 0).mapping_cache
        };
        assert_eq!(scan(3).hit_percent, 0.0);
        assert_eq!(scan(2).hit_percent, 100.0 * 10.0 / 12.0);
        let mut b = StatsBuilder::with_cache(4, 8192);
        b.add(&Request::new(0, IoKind::Write, 4096, 16384, 1)); // pages 0, 1, 2
        b.add(&Request::new(1, IoKind::Read, 0, 8192, 2)); // page 0
        let c = b.finish(0, 0).mapping_cache;
        assert_eq!((c.lookups, c.hit_percent), (4, 25.0));
    }
}
