//! DiffECC's reliability model as an analysis tool (spec 2.2-2.3; the timing model uses Table
//! 2.3's latencies directly): the BCH codes of Table 2.2 and the identities behind them, the raw
//! bit error rate of 2-bit MLC cells whose programmed states have a uniform core of width
//! ΔV_pp and Gaussian tails, each code's failure probability, and the search for the largest
//! ΔV_pp at which each weaker code is as reliable as the baseline code at ΔV_pp = 0.4.

use serde::Serialize;

/// One row of Table 2.2: a shortened binary BCH code (n, k, t) protecting one segment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BchCode {
    /// Segments per 4 KB page.
    pub segments: u8,
    pub n: u32,
    pub k: u32,
    pub t: u32,
}

/// Table 2.2.
pub const TABLE_2_2: [BchCode; 4] = [
    BchCode { segments: 1, n: 34528, k: 32800, t: 108 },
    BchCode { segments: 2, n: 17264, k: 16400, t: 57 },
    BchCode { segments: 4, n: 8632, k: 8200, t: 30 },
    BchCode { segments: 8, n: 4316, k: 4100, t: 16 },
];

impl BchCode {
    pub fn parity_bits(&self) -> u32 {
        self.n - self.k
    }

    /// The Galois field GF(2^m) of the primitive code it is shortened from: m = ceil(log2(n + 1)).
    pub fn field_degree(&self) -> u32 {
        (self.n + 1).next_power_of_two().trailing_zeros()
    }

    /// The errors its parity corrects: each of t errors costs m parity bits.
    pub fn correctable(&self) -> u32 {
        self.parity_bits() / self.field_degree()
    }
}

/// The cell model's fixed parameters (spec 2.2.1): adjacent state means 1 apart, erased-state
/// sigma 0.1, read references midway; `tails` programmed-state tails crossing a reference (5:
/// both sides of the two middle states and the top state's lower side; 6 matched the paper's
/// step sizes slightly better).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CellModel {
    pub sigma_erased: f64,
    pub tails: f64,
}

impl Default for CellModel {
    fn default() -> Self {
        CellModel { sigma_erased: 0.1, tails: 5.0 }
    }
}

/// The baseline ISPP step (normalised).
pub const BASELINE_STEP: f64 = 0.4;
/// The codeword failure rate the search matches (the paper's sector error rate 10^-15, D14:
/// per codeword).
pub const TARGET_FAILURE: f64 = 1e-15;

/// The complementary error function, to double precision far into the tails the failure rates
/// need: erf's Maclaurin series below 2, the continued fraction of erfc above.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        let (mut term, mut sum, x2) = (x, x, x * x);
        for n in 1..200 {
            term *= -x2 / n as f64;
            let add = term / (2 * n + 1) as f64;
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        return 1.0 - sum * 2.0 / std::f64::consts::PI.sqrt();
    }
    // erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from the tail.
    let mut f = 0.0;
    for k in (1..120).rev() {
        f = (k as f64 / 2.0) / (x + f);
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / (x + f)
}

/// The standard normal tail Q(x).
pub fn q(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

impl CellModel {
    /// The raw bit error rate with step `step` and programmed-state tail sigma `sigma`: the
    /// erased state's upward crossing and `tails` tail crossings of mass c Q(d / sigma) each,
    /// d = 0.5 - step / 2 and c = 1 / (1 + step / (sigma sqrt(2 pi))), over 4 states x 2 bits
    /// (Gray code: one bit per crossing into an adjacent state).
    pub fn raw_ber(&self, step: f64, sigma: f64) -> f64 {
        let c = 1.0 / (1.0 + step / (sigma * (2.0 * std::f64::consts::PI).sqrt()));
        let d = 0.5 - step / 2.0;
        (q(0.5 / self.sigma_erased) + self.tails * c * q(d / sigma)) / 8.0
    }
}

/// The probability that more than `t` of a codeword's `n` bits are wrong, at raw bit error
/// rate `p` (the corrected binomial tail, D11), summed in logarithms.
pub fn codeword_failure(n: u32, t: u32, p: f64) -> f64 {
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    // ln C(n, i) built up to i = t + 1, then each term from the last.
    let mut ln_choose = 0.0;
    for i in 0..=t {
        ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    let mut sum = 0.0;
    for i in t + 1..=n {
        let term = (ln_choose + i as f64 * ln_p + (n - i) as f64 * ln_q).exp();
        sum += term;
        if term < sum * 1e-18 && i as f64 > n as f64 * p {
            break;
        }
        if i < n {
            ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
    }
    sum
}

/// Bisection of a monotone function of one variable on `[low, high]` for where it crosses
/// `target` (compared in logarithms: the failure rates span many decades).
fn bisect(mut low: f64, mut high: f64, target: f64, f: impl Fn(f64) -> f64) -> f64 {
    let rising = f(high) > f(low);
    for _ in 0..100 {
        let mid = 0.5 * (low + high);
        if (f(mid) > target) == rising {
            high = mid;
        } else {
            low = mid;
        }
    }
    0.5 * (low + high)
}

/// What the step search found (spec 2.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSearch {
    pub model: CellModel,
    /// The tail sigma at which the baseline code fails at [`TARGET_FAILURE`] with the baseline step.
    pub sigma: f64,
    pub raw_ber: f64,
    pub modes: Vec<ModeStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeStep {
    pub code: BchCode,
    /// The largest step at which the mode's code fails no more often than the baseline's.
    pub step: f64,
    /// The step Table 2.3's program time implies (program time proportional to 1 / step).
    pub implied_step: f64,
    /// (step - implied) / implied.
    pub deviation: f64,
}

/// Spec 2.3: calibrate sigma on the baseline code, then find each code's step; `program_us`
/// gives the implied steps (Table 2.3: 500 / 538 / 606 / 754 us).
pub fn search_steps(model: CellModel, program_us: [f64; 4]) -> StepSearch {
    let base = TABLE_2_2[0];
    let failure = |code: BchCode, step: f64, sigma: f64| codeword_failure(code.n, code.t, model.raw_ber(step, sigma));
    let sigma = bisect(0.05, 0.2, TARGET_FAILURE, |s| failure(base, BASELINE_STEP, s));
    let modes = TABLE_2_2
        .iter()
        .zip(program_us)
        .map(|(&code, us)| {
            let step = bisect(0.01, BASELINE_STEP, TARGET_FAILURE, |step| failure(code, step, sigma));
            let implied_step = BASELINE_STEP * program_us[0] / us;
            ModeStep { code, step, implied_step, deviation: (step - implied_step) / implied_step }
        })
        .collect();
    StepSearch { model, sigma, raw_ber: model.raw_ber(BASELINE_STEP, sigma), modes }
}

/// Spec 2.7.1 case 2: with slow and normal write throughputs `slow` < `normal` and write
/// arrivals `arrivals` between them (requests per second), the largest share f of slow writes
/// the chip can keep up with, arrivals x (f / slow + (1 - f) / normal) <= 1.
pub fn slow_write_bound(slow: f64, normal: f64, arrivals: f64) -> f64 {
    ((1.0 / arrivals - 1.0 / normal) / (1.0 / slow - 1.0 / normal)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_2_2_codes_keep_1728_parity_bits_and_follow_m_and_t() {
        let parity: Vec<_> = TABLE_2_2.iter().map(|c| c.parity_bits() * c.segments as u32).collect();
        assert_eq!(parity, [1728; 4]);
        assert_eq!(TABLE_2_2.map(|c| c.field_degree()), [16, 15, 14, 13]);
        assert_eq!(TABLE_2_2.map(|c| c.correctable()), TABLE_2_2.map(|c| c.t));
        assert_eq!(TABLE_2_2.map(|c| c.t), [108, 57, 30, 16]);
        // k per segment: 4100 bytes per page split N ways.
        assert!(TABLE_2_2.iter().all(|c| c.k * c.segments as u32 == 32800));
    }

    #[test]
    fn normal_tail_and_binomial_tail() {
        assert!((q(0.0) - 0.5).abs() < 1e-15);
        assert!((q(1.0) - 0.158_655_253_931_457).abs() < 1e-12);
        assert!((q(5.0) / 2.866_515_718_791_939e-7 - 1.0).abs() < 1e-9);
        assert!((q(8.0) / 6.220_960_574_271_785e-16 - 1.0).abs() < 1e-9);
        // P(more than 1 of 3 bits wrong) = 3 p^2 (1 - p) + p^3.
        let p: f64 = 0.1;
        assert!((codeword_failure(3, 1, p) - (3.0 * p * p * (1.0 - p) + p.powi(3))).abs() < 1e-15);
    }

    /// Spec 2.3: the slow modes' steps come out within 5% of those Table 2.3's program times
    /// imply (0.3717, 0.3300, 0.2653), both with 5 and with 6 tail crossings.
    #[test]
    fn step_search_reproduces_the_implied_steps_within_5_percent() {
        for tails in [5.0, 6.0] {
            let found = search_steps(CellModel { tails, ..CellModel::default() }, [500.0, 538.0, 606.0, 754.0]);
            assert!((0.11..0.12).contains(&found.sigma), "sigma {}", found.sigma);
            assert!((1.0e-3..1.6e-3).contains(&found.raw_ber), "raw BER {}", found.raw_ber);
            assert!((found.modes[0].step - BASELINE_STEP).abs() < 1e-6);
            for m in &found.modes {
                assert!(m.deviation.abs() < 0.05, "{tails} tails: {m:?}");
            }
        }
    }

    #[test]
    fn case_2_allows_a_third_of_the_writes_slow() {
        // Spec 2.7.1 (D10): the paper's example says 1/2; the bound is 1/3.
        assert!((slow_write_bound(100.0, 200.0, 150.0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(slow_write_bound(100.0, 200.0, 90.0), 1.0, "case 1: all slow");
        assert_eq!(slow_write_bound(100.0, 200.0, 200.0), 0.0, "case 3: none");
    }
}
