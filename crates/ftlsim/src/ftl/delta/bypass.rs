//! When delta encoding pays (paper 001 §4.3.2, Expressions 4.1-4.2): encoding n pending writes
//! costs MAX(T_read_raw, T_bus, T_delta_encode)·n·P_c in a pipeline and saves (1 − R_c)·P_c·n
//! programs, so it adds no write overhead while 1 − R_c > MAX(T_read_raw, T_bus,
//! T_delta_encode) / T_write. Outside that range Delta-FTL bypasses encoding (spec §4.4 [REC]:
//! an EWMA of the observed ratios, with hysteresis).

/// The right-hand side of Expression 4.2: the longest pipeline stage over the program time.
pub fn overhead_bound(read_us: f64, bus_us: f64, encode_us: f64, program_us: f64) -> f64 {
    read_us.max(bus_us).max(encode_us) / program_us
}

/// The bypass switch.
#[derive(Debug, Clone)]
pub struct Bypass {
    bound: f64,
    hysteresis: f64,
    /// EWMA weight of a new observation (2 / (window + 1)).
    alpha: f64,
    /// The EWMA of observed compression ratios, once one was observed.
    estimate: Option<f64>,
    bypassing: bool,
}

impl Bypass {
    /// Bypasses while 1 − R̂_c ≤ `bound`, and encodes again once 1 − R̂_c > `bound` + `hysteresis`;
    /// R̂_c averages about the last `window` observations.
    pub fn new(bound: f64, window: u32, hysteresis: f64) -> Self {
        Bypass { bound, hysteresis, alpha: 2.0 / (window as f64 + 1.0), estimate: None, bypassing: false }
    }

    /// Records the compression ratio of a page that qualified for encoding.
    #[inline]
    pub fn observe(&mut self, ratio: f64) {
        let estimate = match self.estimate {
            Some(e) => e + self.alpha * (ratio - e),
            None => ratio,
        };
        self.estimate = Some(estimate);
        let saving = 1.0 - estimate;
        if self.bypassing {
            self.bypassing = saving <= self.bound + self.hysteresis;
        } else {
            self.bypassing = saving <= self.bound;
        }
    }

    #[inline]
    pub fn bypassing(&self) -> bool {
        self.bypassing
    }

    /// Forgets the estimate (SRAM state lost at power loss).
    pub fn reset(&mut self) {
        self.estimate = None;
        self.bypassing = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 4.1 (cycles / MHz) and Table 4.3 (read 25 µs, bus 40 µs, program 200 µs).
    fn viable_below(mhz: f64) -> f64 {
        1.0 - overhead_bound(25.0, 40.0, 27212.0 / mhz, 200.0)
    }

    #[test]
    fn expression_4_2_bounds_match_the_paper() {
        assert!((viable_below(304.0) - 0.55).abs() < 0.005, "{}", viable_below(304.0));
        assert!((viable_below(619.0) - 0.78).abs() < 0.005, "{}", viable_below(619.0));
        assert!((viable_below(934.0) - 0.80).abs() < 1e-12, "the bus is the longest stage at 934 MHz");
    }

    #[test]
    fn bypass_engages_past_the_bound_and_releases_with_hysteresis() {
        let bound = overhead_bound(25.0, 40.0, 27212.0 / 619.0, 200.0);
        let mut b = Bypass::new(bound, 1, 0.02);
        b.observe(0.77);
        assert!(!b.bypassing(), "R_c 0.77 is viable at 619 MHz");
        b.observe(0.79);
        assert!(b.bypassing(), "R_c 0.79 is not");
        b.observe(0.77);
        assert!(b.bypassing(), "within the hysteresis");
        b.observe(0.75);
        assert!(!b.bypassing());
    }
}
