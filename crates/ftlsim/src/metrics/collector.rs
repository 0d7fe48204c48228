//! Per-request measurements: counts, response-time histograms and time sums.

use hdrhistogram::Histogram;

use crate::timing::{Nanos, Served};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Write,
    Trim,
}

/// Response times up to one hour are recorded at 3 significant digits.
const MAX_RECORDED_NS: u64 = 3_600_000_000_000;

pub struct Collector {
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub pages_trimmed: u64,
    /// Reads of pages never written (or trimmed): served without flash access.
    pub unmapped_reads: u64,
    pub response_all: Histogram<u64>,
    pub response_read: Histogram<u64>,
    pub response_write: Histogram<u64>,
    pub sum_response_ns: u128,
    pub sum_queue_ns: u128,
    pub sum_access_ns: u128,
    pub first_arrival: Option<Nanos>,
    pub last_finish: Nanos,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_RECORDED_NS, 3).expect("valid histogram bounds")
}

impl Default for Collector {
    fn default() -> Self {
        Collector {
            reads: 0,
            writes: 0,
            trims: 0,
            pages_read: 0,
            pages_written: 0,
            pages_trimmed: 0,
            unmapped_reads: 0,
            response_all: histogram(),
            response_read: histogram(),
            response_write: histogram(),
            sum_response_ns: 0,
            sum_queue_ns: 0,
            sum_access_ns: 0,
            first_arrival: None,
            last_finish: 0,
        }
    }
}

impl Collector {
    #[inline]
    pub fn record(&mut self, kind: RequestKind, pages: u64, arrival: Nanos, served: Served) {
        let response = served.finish - arrival;
        let queue = served.start.saturating_sub(arrival);
        self.sum_response_ns += response as u128;
        self.sum_queue_ns += queue as u128;
        self.sum_access_ns += (served.finish - served.start.max(arrival)) as u128;
        self.first_arrival.get_or_insert(arrival);
        self.last_finish = self.last_finish.max(served.finish);
        let recorded = response.clamp(1, MAX_RECORDED_NS);
        self.response_all.saturating_record(recorded);
        match kind {
            RequestKind::Read => {
                self.reads += 1;
                self.pages_read += pages;
                self.response_read.saturating_record(recorded);
            }
            RequestKind::Write => {
                self.writes += 1;
                self.pages_written += pages;
                self.response_write.saturating_record(recorded);
            }
            RequestKind::Trim => {
                self.trims += 1;
                self.pages_trimmed += pages;
            }
        }
    }

    pub fn requests(&self) -> u64 {
        self.reads + self.writes + self.trims
    }
}
