//! Per-request measurements: counts, response-time histograms and time sums.

use hdrhistogram::Histogram;

use crate::timing::{Nanos, Served};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Write,
    Trim,
}

/// Response times of one kind of request: a histogram at 3 significant digits (for percentiles;
/// it grows to hold any value) and the exact count, sum and maximum (for the mean and the max).
pub struct Latencies {
    pub histogram: Histogram<u64>,
    pub count: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        let mut histogram = Histogram::new(3).expect("3 significant digits is a valid precision");
        histogram.auto(true);
        Latencies { histogram, count: 0, sum_ns: 0, max_ns: 0 }
    }
}

impl Latencies {
    #[inline]
    fn record(&mut self, ns: u64) {
        // Resizing the histogram only fails past u64 range: unreachable for a u64 value.
        self.histogram.record(ns.max(1)).expect("an auto-resizing histogram holds any u64");
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The response times of `parts` together: the histogram holds each part's counts, so its
    /// percentiles are those of recording every request in one.
    fn merged(parts: &[&Latencies]) -> Latencies {
        let mut all = Latencies::default();
        for part in parts {
            // Adding to an auto-resizing histogram of the same precision cannot fail.
            all.histogram.add(&part.histogram).expect("histograms of one precision add up");
            all.count += part.count;
            all.sum_ns += part.sum_ns;
            all.max_ns = all.max_ns.max(part.max_ns);
        }
        all
    }
}

#[derive(Default)]
pub struct Collector {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub pages_trimmed: u64,
    /// Reads of pages never written (or trimmed): served without flash access.
    pub unmapped_reads: u64,
    pub response_read: Latencies,
    pub response_write: Latencies,
    /// Trims count in the response times of all requests only.
    response_trim: Latencies,
    pub sum_queue_ns: u128,
    pub sum_access_ns: u128,
    pub first_arrival: Option<Nanos>,
    pub last_finish: Nanos,
}

impl Collector {
    /// A request was dispatched: counted, and the first one starts the simulated span.
    #[inline]
    pub fn dispatched(&mut self, kind: RequestKind, pages: u64, arrival: Nanos) {
        self.first_arrival.get_or_insert(arrival);
        match kind {
            RequestKind::Read => {
                self.reads += 1;
                self.pages_read += pages;
            }
            RequestKind::Write => {
                self.writes += 1;
                self.pages_written += pages;
            }
            RequestKind::Trim => {
                self.trims += 1;
                self.pages_trimmed += pages;
            }
        }
    }

    /// A request completed: its response time.
    #[inline]
    pub fn completed(&mut self, kind: RequestKind, arrival: Nanos, served: Served) {
        let response = served.finish - arrival;
        let queue = served.start.saturating_sub(arrival);
        self.sum_queue_ns += queue as u128;
        self.sum_access_ns += (served.finish - served.start.max(arrival)) as u128;
        self.last_finish = self.last_finish.max(served.finish);
        match kind {
            RequestKind::Read => self.response_read.record(response),
            RequestKind::Write => self.response_write.record(response),
            RequestKind::Trim => self.response_trim.record(response),
        }
    }

    /// Response times of all requests, merged from those of each kind (one histogram recorded
    /// per request instead of two).
    pub fn response_all(&self) -> Latencies {
        Latencies::merged(&[&self.response_read, &self.response_write, &self.response_trim])
    }

    pub fn requests(&self) -> u64 {
        self.reads + self.writes + self.trims
    }
}
