//! Deterministic synthetic workloads. The default is a mixed OLTP-like stream: small random
//! reads and writes over the whole space, interleaved with sequential runs, Poisson arrivals.

use rand::distributions::Bernoulli;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::{IoKind, Request, Workload};
use crate::error::{Result, SimError};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixedSpec {
    pub requests: u64,
    /// Fraction of requests that read.
    pub read_fraction: f64,
    /// Fraction of requests that belong to sequential runs.
    pub sequential_fraction: f64,
    /// Fraction of the address space that is hot.
    pub hot_space_fraction: f64,
    /// Fraction of random requests that go to the hot space (OLTP skew).
    pub hot_access_fraction: f64,
    /// Random requests are 1..=random_max_pages pages long.
    pub random_max_pages: u32,
    /// Sequential runs are made of requests of this many pages.
    pub sequential_request_pages: u32,
    /// Mean inter-arrival time, microseconds (Poisson arrivals).
    pub mean_interarrival_us: f64,
    pub seed: u64,
}

impl Default for MixedSpec {
    /// The embedded default ("oltp-mix"): 70% reads, 20% of requests in sequential runs of
    /// 8-page requests, random requests of 1-2 pages with 90% of them on 10% of the space,
    /// one request every 20 ms on average (a moderately loaded `mlc8g` die).
    fn default() -> Self {
        MixedSpec {
            requests: 200_000,
            read_fraction: 0.7,
            sequential_fraction: 0.2,
            hot_space_fraction: 0.1,
            hot_access_fraction: 0.9,
            random_max_pages: 2,
            sequential_request_pages: 8,
            mean_interarrival_us: 20_000.0,
            seed: 42,
        }
    }
}

impl MixedSpec {
    pub fn validate(&self) -> Result<()> {
        let fraction = |field: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(SimError::config(field, format!("must be in [0, 1], found {v}")))
            }
        };
        fraction("workload.read_fraction", self.read_fraction)?;
        fraction("workload.sequential_fraction", self.sequential_fraction)?;
        fraction("workload.hot_space_fraction", self.hot_space_fraction)?;
        fraction("workload.hot_access_fraction", self.hot_access_fraction)?;
        if self.random_max_pages == 0 {
            return Err(SimError::config("workload.random_max_pages", "must be at least 1"));
        }
        if self.sequential_request_pages == 0 {
            return Err(SimError::config("workload.sequential_request_pages", "must be at least 1"));
        }
        if !(self.mean_interarrival_us.is_finite() && self.mean_interarrival_us > 0.0) {
            return Err(SimError::config("workload.mean_interarrival_us", "must be a positive number"));
        }
        Ok(())
    }

    /// The stream over a device of `logical_pages` pages of `page_size` bytes.
    pub fn workload(&self, logical_pages: u32, page_size: u32) -> Result<Workload> {
        self.validate()?;
        let spec = self.clone();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
        let gap = Exp::new(1.0 / (spec.mean_interarrival_us * 1000.0)).expect("positive rate");
        let pages = logical_pages as u64;
        let page = page_size as u64;
        let hot_pages = ((pages as f64 * spec.hot_space_fraction) as u64).clamp(1, pages);
        // What `gen_bool` builds on every call (its float-to-integer conversion was a quarter of
        // the generator's work), built once: the same draws.
        let bernoulli = |p: f64| Bernoulli::new(p).expect("validated fraction");
        let (read, sequential, hot_access) =
            (bernoulli(spec.read_fraction), bernoulli(spec.sequential_fraction), bernoulli(spec.hot_access_fraction));
        let mut now = 0.0f64;
        let mut seq_cursor = 0u64;
        let mut index = 0u64;
        let iter = std::iter::from_fn(move || {
            if index == spec.requests {
                return None;
            }
            index += 1;
            now += gap.sample(&mut rng);
            let kind = if rng.sample(read) { IoKind::Read } else { IoKind::Write };
            let (first, count) = if rng.sample(sequential) {
                let count = (spec.sequential_request_pages as u64).min(pages);
                if seq_cursor + count > pages {
                    seq_cursor = 0;
                }
                let first = seq_cursor;
                seq_cursor += count;
                (first, count)
            } else {
                let count = rng.gen_range(1..=spec.random_max_pages as u64).min(pages);
                let hot = rng.sample(hot_access);
                let (base, span) =
                    if hot || hot_pages == pages { (0, hot_pages) } else { (hot_pages, pages - hot_pages) };
                let first = (base + rng.gen_range(0..span)).min(pages - count);
                (first, count)
            };
            Some(Ok(Request::new(now as u64, kind, first * page, count * page, index)))
        });
        Ok(Workload::new(
            "synthetic:oltp-mix",
            serde_json::json!({ "generator": "oltp-mix", "synthetic": true, "spec": self }),
            iter,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let spec = MixedSpec { requests: 1000, ..MixedSpec::default() };
        let a: Vec<_> = spec.workload(10_000, 4096).unwrap().requests.map(|r| r.unwrap()).collect();
        let b: Vec<_> = spec.workload(10_000, 4096).unwrap().requests.map(|r| r.unwrap()).collect();
        assert_eq!(a, b);
        assert_eq!(a.len(), 1000);
        assert!(a.iter().all(|r| r.offset_bytes + r.len_bytes <= 10_000 * 4096));
        assert!(a.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        let reads = a.iter().filter(|r| r.kind == IoKind::Read).count();
        assert!((600..800).contains(&reads), "{reads}");
    }

    #[test]
    fn bad_fraction_is_named() {
        let spec = MixedSpec { read_fraction: 1.5, ..MixedSpec::default() };
        assert!(spec.validate().unwrap_err().to_string().contains("workload.read_fraction"));
    }
}
