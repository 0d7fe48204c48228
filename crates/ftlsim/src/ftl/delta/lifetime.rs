//! Delta-FTL's lifetime model (paper 001 §4.4, Eqs. 4.3-4.10): P/E operations to serve N page
//! writes, from P_c, R_c, P_ow, the block size B_s and the blocks holding invalid pages (T for
//! the baseline, t for Delta-FTL's PMA). Proportionalities of the paper are computed with the
//! same constant for the baseline and Delta-FTL, so their ratios compare with simulated counts.

/// What the model needs, as a simulation measures it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LifetimeInputs {
    pub p_c: f64,
    pub r_c: f64,
    pub p_ow: f64,
    /// Page writes of the workload (N).
    pub writes: f64,
    /// Pages per block (B_s).
    pub block_pages: f64,
    pub erase_us: f64,
    pub program_us: f64,
}

/// §4.4.1: Delta-FTL's foreground page writes, (1 − P_c + P_c·R_c)·N.
pub fn foreground_writes(p_c: f64, r_c: f64, writes: f64) -> f64 {
    (1.0 - p_c + p_c * r_c) * writes
}

/// Eqs. 4.5-4.6, the baseline: GC frequency ∝ T and GC P/E ∝ T·(Erase + Program·(B_s − N/T)).
pub fn baseline_gc(i: &LifetimeInputs, t_blocks: f64) -> (f64, f64) {
    let gain = i.writes / t_blocks;
    (t_blocks, t_blocks * (i.erase_us + i.program_us * (i.block_pages - gain)))
}

/// §4.4.2, Delta-FTL: invalid pages a victim yields in the page mapping area, (1 − P_c)·N / t,
/// and in the delta log area, P_ow·B_s.
pub fn delta_gains(i: &LifetimeInputs, t_blocks: f64) -> (f64, f64) {
    ((1.0 - i.p_c) * i.writes / t_blocks, i.p_ow * i.block_pages)
}

/// Eqs. 4.7-4.10, Delta-FTL: GC frequency and GC P/E, whichever area gains more per victim.
pub fn delta_gc(i: &LifetimeInputs, t_blocks: f64) -> (f64, f64) {
    let (pma_gain, dla_gain) = delta_gains(i, t_blocks);
    if pma_gain > dla_gain {
        let frequency = t_blocks * (1.0 + i.p_c * i.r_c / (1.0 - i.p_c));
        (frequency, frequency * (i.erase_us + i.program_us * (i.block_pages - pma_gain)))
    } else {
        let frequency = foreground_writes(i.p_c, i.r_c, i.writes) / dla_gain;
        (frequency, frequency * (i.erase_us + i.program_us * i.block_pages * (1.0 - i.p_ow)))
    }
}

/// Eq. 4.4 with what a pair of runs measured: Delta-FTL's GC count over the baseline's is its
/// clean-block consumption (foreground pages) over the baseline's, times the baseline's gain per
/// victim over its own.
pub fn gc_count_ratio(foreground: f64, baseline_foreground: f64, gain: f64, baseline_gain: f64) -> f64 {
    foreground / baseline_foreground * baseline_gain / gain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_example_gives_0_48_n() {
        assert!((foreground_writes(0.8, 0.35, 1000.0) - 480.0).abs() < 1e-9);
        assert_eq!(foreground_writes(0.0, 0.35, 1000.0), 1000.0, "P_c -> 0: the baseline");
        assert_eq!(foreground_writes(0.8, 1.0, 1000.0), 1000.0, "R_c -> 1: the baseline");
    }

    #[test]
    fn delta_ftl_collects_less_than_the_baseline_with_the_same_invalid_blocks() {
        let i = LifetimeInputs {
            p_c: 0.8,
            r_c: 0.35,
            p_ow: 0.5,
            writes: 64_000.0,
            block_pages: 64.0,
            erase_us: 1500.0,
            program_us: 200.0,
        };
        let (base_f, base_pe) = baseline_gc(&i, 2000.0);
        // PMA gain 0.2 x 64,000 / 2,000 = 6.4 < DLA gain 32: Eq. 4.8, 0.48 x 64,000 / 32 = 960.
        let (f, pe) = delta_gc(&i, 2000.0);
        assert!((f - 960.0).abs() < 1e-9 && f < base_f, "{f} vs {base_f}");
        assert!((pe - 960.0 * (1500.0 + 200.0 * 32.0)).abs() < 1e-6 && pe < base_pe);
        // A weak write locality (P_ow small) makes the PMA's gain win: Eq. 4.7.
        let weak = LifetimeInputs { p_ow: 0.05, ..i };
        let (f, _) = delta_gc(&weak, 2000.0);
        assert!((f - 2000.0 * (1.0 + 0.28 / 0.2)).abs() < 1e-9);
        assert!((gc_count_ratio(480.0, 1000.0, 40.0, 20.0) - 0.24).abs() < 1e-12);
    }
}
