//! The working-set address pattern (`addr=ws:COUNT:SIZE[:SKEW]`), paper 004's substitute for
//! its smartphone traces (spec C.7): `COUNT` disjoint regions of mean `SIZE` bytes (sizes uniform
//! between half and one and a half times the mean, 4 KiB-aligned) placed at random in the
//! address space, at least [`SET_GAP`] apart so that the extraction of `trace stats` (regions
//! merged when closer than 512 KB) finds them one by one.
//!
//! Writes cover every set once, in a random order of the sets, each set front to back (the
//! first writes), and update the part already written. A write is a first write with
//! probability (bytes not yet written) / (write bytes still to come), so that the sets are
//! covered as the stream ends: a stream whose written bytes are `U` times the sets' total has a
//! mean page update count of `U`. Updates and reads pick a set by its hotness, Zipf with
//! exponent `SKEW` (default 1) over the sets in a random rank order, and a uniform 4 KiB slot
//! inside it (updates: inside its written part), so hot and cold sets interleave in time.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Sets are placed at least this far apart (twice the extraction's 512 KB merge distance).
pub const SET_GAP: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkingSets {
    /// Number of working sets.
    pub count: u32,
    /// Mean size of a set, bytes.
    pub mean_bytes: f64,
    /// Zipf exponent of the sets' hotness (0: every set equally hot).
    pub skew: f64,
}

impl WorkingSets {
    /// Why the parameters are impossible, if they are.
    pub fn problem(&self) -> Option<String> {
        if self.count == 0 {
            return Some("ws needs at least one working set".into());
        }
        if !(self.mean_bytes.is_finite() && self.mean_bytes >= 4096.0) {
            return Some(format!(
                "ws needs a mean working-set size of at least 4 KiB, found {} bytes",
                self.mean_bytes
            ));
        }
        if !(self.skew.is_finite() && self.skew >= 0.0) {
            return Some(format!("ws needs a hotness exponent of at least 0, found {}", self.skew));
        }
        None
    }
}

/// One working set: where it starts, its length and how much of it the first writes covered.
struct Set {
    start: u64,
    len: u64,
    written: u64,
}

/// The generator's state for one working-set pattern.
pub struct WorkingSetsState {
    /// In the order of their first writes.
    sets: Vec<Set>,
    /// Prefix sums of the sets' hotness, in the same order.
    hotness: Vec<f64>,
    /// The set the first writes are covering.
    current: usize,
    /// Bytes of every set not yet written.
    unwritten: u64,
    slot: u64,
}

impl WorkingSetsState {
    /// Lays the sets out in `space` bytes of `slot`-byte slots; an error says why they do not fit.
    pub fn new(
        params: &WorkingSets,
        rng: &mut Xoshiro256PlusPlus,
        space: u64,
        slot: u64,
    ) -> Result<WorkingSetsState, String> {
        let n = params.count as usize;
        // Sizes in slots, uniform in [0.5, 1.5] x the mean, scaled to the mean's total.
        let total = (n as f64 * params.mean_bytes / slot as f64).round().max(n as f64) as u64;
        let raw: Vec<f64> = (0..n).map(|_| rng.gen_range(0.5..1.5)).collect();
        let sum: f64 = raw.iter().sum();
        let mut sizes: Vec<u64> = raw.iter().map(|r| ((total as f64 * r / sum) as u64).max(1)).collect();
        // Flooring lost less than a slot per set.
        let short = total.saturating_sub(sizes.iter().sum());
        for s in sizes.iter_mut().take(short as usize) {
            *s += 1;
        }
        let gap = SET_GAP.div_ceil(slot);
        let needed = sizes.iter().sum::<u64>() + (n as u64 - 1) * gap;
        if needed > space / slot {
            return Err(format!(
                "ws: {n} working sets of {} bytes on average, {SET_GAP} bytes apart, need {} bytes; the space holds {space}",
                params.mean_bytes,
                needed * slot
            ));
        }
        // The free slots go to the n + 1 gaps around the sets in exponential shares.
        let free = space / slot - needed;
        let shares: Vec<f64> = (0..=n).map(|_| Exp1.sample(rng)).collect();
        let share_sum: f64 = shares.iter().sum();
        let mut at = 0u64;
        let mut sets: Vec<Set> = Vec::with_capacity(n);
        for (i, size) in sizes.into_iter().enumerate() {
            at += (free as f64 * shares[i] / share_sum) as u64 + if i > 0 { gap } else { 0 };
            sets.push(Set { start: at * slot, len: size * slot, written: 0 });
            at += size;
        }
        sets.shuffle(rng);
        let mut ranks: Vec<usize> = (1..=n).collect();
        ranks.shuffle(rng);
        let hotness = ranks
            .iter()
            .scan(0.0, |sum, &r| {
                *sum += 1.0 / (r as f64).powf(params.skew);
                Some(*sum)
            })
            .collect();
        let unwritten = sets.iter().map(|s| s.len).sum();
        Ok(WorkingSetsState { sets, hotness, current: 0, unwritten, slot })
    }

    /// The offset and length (at most `len`) of a request; `write_bytes_left` is what the
    /// stream's writes still hold, this one included.
    pub fn request(&mut self, rng: &mut Xoshiro256PlusPlus, read: bool, len: u64, write_bytes_left: f64) -> (u64, u64) {
        if read {
            let i = self.pick(rng, self.sets.len());
            let set = &self.sets[i];
            return self.place(rng, set.start, set.len, len);
        }
        let started = self.current + (self.sets.get(self.current).is_some_and(|s| s.written > 0)) as usize;
        let first = self.unwritten > 0
            && (started == 0 || rng.gen_bool((self.unwritten as f64 / write_bytes_left.max(1.0)).min(1.0)));
        if first {
            let set = &mut self.sets[self.current];
            let offset = set.start + set.written;
            let len = len.min(set.len - set.written);
            set.written += len;
            self.unwritten -= len;
            if set.written == set.len {
                self.current += 1;
            }
            return (offset, len);
        }
        let i = self.pick(rng, started);
        let set = &self.sets[i];
        self.place(rng, set.start, set.written, len)
    }

    /// A set among the first `upto` (in first-write order), by hotness.
    fn pick(&self, rng: &mut Xoshiro256PlusPlus, upto: usize) -> usize {
        let x = rng.gen_range(0.0..self.hotness[upto - 1]);
        self.hotness[..upto].partition_point(|&h| h <= x).min(upto - 1)
    }

    /// A request of at most `len` bytes at a uniform slot of `[start, start + extent)`.
    fn place(&self, rng: &mut Xoshiro256PlusPlus, start: u64, extent: u64, len: u64) -> (u64, u64) {
        let len = len.min(extent);
        (start + rng.gen_range(0..=(extent - len) / self.slot) * self.slot, len)
    }
}

#[cfg(test)]
mod tests {
    use crate::workload::generator::SynthSpec;
    use crate::workload::stats::stats;

    /// Three sets of 1 MiB, each written twice over: the extraction finds them whole.
    #[test]
    fn sets_are_covered_and_found_apart() {
        let spec: SynthSpec = "requests=3000,write=0.5,addr=ws:3:1MiB,size=mean:4k".parse().unwrap();
        let s = stats(spec.workload(1 << 30).unwrap().requests).unwrap().finish(0, 0);
        assert_eq!((s.working_sets.count, s.working_sets.mean_size_mb), (3, 1.0));
        assert!((s.working_sets.mean_page_updates - 2.0).abs() < 0.05, "{}", s.working_sets.mean_page_updates);
    }

    #[test]
    fn sets_that_do_not_fit_are_refused() {
        let spec: SynthSpec = "requests=10,addr=ws:3:1MiB".parse().unwrap();
        let err = spec.workload(4 << 20).err().unwrap().to_string();
        assert!(err.contains("synthetic.addr") && err.contains("3 working sets"), "{err}");
        for (bad, says) in
            [("addr=ws:0:1MiB", "at least one"), ("addr=ws:2:1k", "at least 4 KiB"), ("addr=ws:2:1MiB:-1", "exponent")]
        {
            let err = bad.parse::<SynthSpec>().unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
