//! The address pattern with the papers' locality (`addr=loc:REUSE:DIST:RRUN:WRUN`).
//!
//! Requests come in sequential runs: a read continues the current read run (starting where the
//! previous read ended) with probability `1 - 1/read_run`, a write the current write run with
//! probability `1 - 1/write_run`, so runs are geometric with those mean lengths in requests and
//! the sequential read and write shares of the stream are `1 - 1/run` (spatial locality).
//!
//! A new run starts at a re-referenced address with probability `reuse`, else at a fresh uniform
//! 4 KiB slot. Run starts form an LRU stack (the hot set): a re-reference takes the start at
//! stack distance `d` (the number of distinct run starts referenced since), `d` geometric with
//! mean `distance`, and moves it to the top (temporal locality). Reads and writes share the
//! stack. A read run that does not re-reference starts, with probability `read_written`, at a
//! uniformly chosen earlier write run start instead of a fresh slot: reads of data written long
//! ago, which set how much of the read traffic reads written data (WR_max) without shrinking
//! the footprint as a reuse near 1 would.

use std::collections::VecDeque;

use rand::Rng;
use rand_distr::{Distribution, Geometric};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// The stack holds this many mean distances: a deeper draw (probability e^-16) takes the bottom.
const DEPTH_PER_DISTANCE: f64 = 16.0;
/// Memory bound of the stack (entries of 8 bytes).
const MAX_DEPTH: usize = 1 << 22;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Locality {
    /// Fraction of runs that start at a re-referenced address.
    pub reuse: f64,
    /// Mean LRU stack distance of a re-reference, in run starts.
    pub distance: f64,
    /// Mean length of a read run, in requests (1: no sequential reads).
    pub read_run: f64,
    /// Mean length of a write run, in requests.
    pub write_run: f64,
    /// Fraction of read runs not re-referenced that start at an earlier write run's start.
    pub read_written: f64,
}

impl Locality {
    /// Why the parameters are impossible, if they are.
    pub fn problem(&self) -> Option<String> {
        if !(0.0..=1.0).contains(&self.reuse) {
            return Some(format!("loc needs a reuse fraction in [0, 1], found {}", self.reuse));
        }
        if !(0.0..=1.0).contains(&self.read_written) {
            return Some(format!("loc needs a read-of-written fraction in [0, 1], found {}", self.read_written));
        }
        if !(self.distance.is_finite() && self.distance >= 1.0) {
            return Some(format!("loc needs a mean reuse distance of at least 1 run, found {}", self.distance));
        }
        for run in [self.read_run, self.write_run] {
            if !(run.is_finite() && run >= 1.0) {
                return Some(format!("loc needs mean run lengths of at least 1 request, found {run}"));
            }
        }
        None
    }

    /// The sequential share of reads or writes that runs of mean length `run` give.
    pub fn sequential_share(run: f64) -> f64 {
        1.0 - 1.0 / run
    }
}

/// The generator's state for one locality pattern.
pub struct LocalityState {
    params: Locality,
    distance: Geometric,
    /// Where the next read (0) or write (1) of the current run starts.
    next: [Option<u64>; 2],
    /// Run starts, most recent at the back; each address once.
    stack: VecDeque<u64>,
    depth: usize,
    /// Write run starts so far (a uniform sample of them once `MAX_DEPTH` are held).
    written: Vec<u64>,
    writes_seen: u64,
}

impl LocalityState {
    pub fn new(params: &Locality) -> LocalityState {
        let depth = ((params.distance * DEPTH_PER_DISTANCE).ceil() as usize).clamp(1, MAX_DEPTH);
        LocalityState {
            params: params.clone(),
            distance: Geometric::new(1.0 / params.distance).expect("validated distance"),
            next: [None, None],
            stack: VecDeque::with_capacity(depth.min(1 << 16)),
            depth,
            written: Vec::new(),
            writes_seen: 0,
        }
    }

    /// The offset of a request of `len` bytes, inside `space` bytes of `slot`-byte slots.
    pub fn offset(&mut self, rng: &mut Xoshiro256PlusPlus, read: bool, len: u64, space: u64, slot: u64) -> u64 {
        let kind = if read { 0 } else { 1 };
        let run = if read { self.params.read_run } else { self.params.write_run };
        let continued = match self.next[kind] {
            Some(next) if next + len <= space && rng.gen_bool(Locality::sequential_share(run)) => Some(next),
            _ => None,
        };
        let offset = continued.unwrap_or_else(|| self.run_start(rng, read, len, space, slot));
        self.next[kind] = Some(offset + len);
        offset
    }

    fn run_start(&mut self, rng: &mut Xoshiro256PlusPlus, read: bool, len: u64, space: u64, slot: u64) -> u64 {
        let start = if !self.stack.is_empty() && rng.gen_bool(self.params.reuse) {
            let d = (1 + self.distance.sample(rng) as usize).min(self.stack.len());
            self.stack.remove(self.stack.len() - d).expect("distance within the stack")
        } else if read && !self.written.is_empty() && rng.gen_bool(self.params.read_written) {
            self.written[rng.gen_range(0..self.written.len())]
        } else {
            rng.gen_range(0..space / slot) * slot
        };
        if !read {
            // Reservoir sampling keeps `written` a uniform sample of every write run start.
            self.writes_seen += 1;
            if self.written.len() < MAX_DEPTH {
                self.written.push(start);
            } else {
                let at = rng.gen_range(0..self.writes_seen);
                if at < MAX_DEPTH as u64 {
                    self.written[at as usize] = start;
                }
            }
        }
        if self.stack.len() == self.depth {
            self.stack.pop_front();
        }
        self.stack.push_back(start);
        start.min(space - len)
    }
}

#[cfg(test)]
mod tests {
    use crate::workload::generator::SynthSpec;
    use crate::workload::{IoKind, Request};

    fn requests(spec: &str) -> Vec<Request> {
        let s: SynthSpec = spec.parse().unwrap();
        s.workload(64 << 30).unwrap().requests.map(|r| r.unwrap()).collect()
    }

    fn share(part: usize, whole: usize) -> f64 {
        part as f64 / whole as f64
    }

    /// Reads continue the previous read, writes the previous write, at the asked shares; the
    /// write ratio is the asked one. 40000 requests: a share's standard error is under 0.4%.
    #[test]
    fn run_lengths_and_write_ratio_are_what_was_asked() {
        let r = requests("requests=40000,write=0.3,addr=loc:0:10:4:1.25,size=4096");
        let (mut seq, mut count, mut prev) = ([0usize; 2], [0usize; 2], [None::<u64>; 2]);
        for q in &r {
            let k = (q.kind == IoKind::Write) as usize;
            count[k] += 1;
            seq[k] += (prev[k] == Some(q.offset_bytes)) as usize;
            prev[k] = Some(q.offset_bytes + q.len_bytes);
        }
        assert_eq!(count[1], 12_000, "the write count is exact");
        let (read_seq, write_seq) = (share(seq[0], count[0]), share(seq[1], count[1]));
        assert!((read_seq - 0.75).abs() < 0.015, "read runs of mean 4: sequential share {read_seq}");
        assert!((write_seq - 0.2).abs() < 0.015, "write runs of mean 1.25: sequential share {write_seq}");
        // Mean run length measured directly: reads / read runs.
        let runs = count[0] - seq[0];
        assert!((share(count[0], runs) - 4.0).abs() < 0.15, "mean read run {}", share(count[0], runs));
    }

    /// Every request starts a run here; the share of re-referenced starts and their mean LRU
    /// stack distance (distinct addresses since the last reference) are the asked ones.
    #[test]
    fn reuse_share_and_distance_are_what_was_asked() {
        let r = requests("requests=30000,write=0.5,addr=loc:0.6:50:1:1,size=4096");
        let mut stack: Vec<u64> = Vec::new(); // most recent last
        let (mut reused, mut distances, mut measured) = (0usize, 0usize, 0usize);
        for (i, q) in r.iter().enumerate() {
            let found = stack.iter().rposition(|&a| a == q.offset_bytes);
            if let Some(at) = found {
                stack.remove(at);
            }
            // Past a warm-up of 20 mean distances the stack is deep enough for every draw.
            if i >= 1000 {
                measured += 1;
                if let Some(at) = found {
                    reused += 1;
                    distances += stack.len() - at + 1;
                }
            }
            stack.push(q.offset_bytes);
        }
        let reuse = share(reused, measured);
        assert!((reuse - 0.6).abs() < 0.015, "reuse share {reuse}");
        let mean = share(distances, reused);
        assert!((mean - 50.0).abs() < 2.0, "mean stack distance {mean}");
    }

    /// With `read_written` 1 and no reuse, every read run starts where an earlier write run
    /// started; with 0, almost none does (fresh slots of a 64 GiB space rarely meet).
    #[test]
    fn read_runs_start_at_written_data_as_asked() {
        for (read_written, want) in [(1.0, 1.0), (0.5, 0.5), (0.0, 0.0)] {
            let r = requests(&format!("requests=20000,write=0.5,addr=loc:0:10:1:1:{read_written},size=4096"));
            let mut written = std::collections::HashSet::new();
            let (mut reads, mut of_written) = (0usize, 0usize);
            for q in &r {
                if q.kind == IoKind::Write {
                    written.insert(q.offset_bytes);
                } else if !written.is_empty() {
                    reads += 1;
                    of_written += written.contains(&q.offset_bytes) as usize;
                }
            }
            let got = share(of_written, reads);
            assert!((got - want).abs() < 0.02, "read_written {read_written}: {got} of reads at written starts");
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        for (spec, says) in [
            ("addr=loc:1.5:10:1:1", "reuse fraction"),
            ("addr=loc:0.5:0:1:1", "reuse distance"),
            ("addr=loc:0.5:10:0.5:1", "run lengths"),
            ("addr=loc:0.5:10:1:1:2", "read-of-written fraction"),
            ("addr=loc:0.5:10", "loc:REUSE:DIST:RRUN:WRUN"),
        ] {
            let err = spec.parse::<SynthSpec>().unwrap_err().to_string();
            assert!(err.contains("synthetic.addr") && err.contains(says), "{spec}: {err}");
        }
    }
}
