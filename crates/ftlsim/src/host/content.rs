//! The content model of paper 001 §4.5: how well the new version of a page compresses against
//! its old version. Each written page version draws a compression ratio r = mean + σ·z from a
//! Gaussian, with z a standard normal computed from (seed, LPN, version) alone: common random
//! numbers, so runs at different means see the same z for the same write (spec §4.9 [REC]).

/// Lowest ratio a draw is clipped to (spec §4.9: clip to [0.01, 1.0]).
const MIN_RATIO: f64 = 0.01;

/// The Gaussian compression-ratio model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContentModel {
    pub mean: f64,
    pub sigma: f64,
    pub seed: u64,
}

impl ContentModel {
    /// The compressed size of the delta of `version` of `lpn` over its previous version, as a
    /// fraction of a page in [0.01, 1.0] (1.0: incompressible).
    #[inline]
    pub fn ratio(&self, lpn: u32, version: u32) -> f64 {
        (self.mean + self.sigma * standard_normal(self.seed, lpn, version)).clamp(MIN_RATIO, 1.0)
    }
}

/// A standard normal draw determined by its arguments (Box-Muller over two splitmix64 outputs).
#[inline]
fn standard_normal(seed: u64, lpn: u32, version: u32) -> f64 {
    let key = seed ^ ((lpn as u64) << 32 | version as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (a, b) = (splitmix64(key), splitmix64(key ^ 0xD1B5_4A32_D192_ED03));
    // Uniforms in (0, 1] and [0, 1).
    let u1 = ((a >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let u2 = (b >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_gaussian_around_the_mean_and_clipped() {
        let model = ContentModel { mean: 0.35, sigma: 0.05, seed: 7 };
        let draws: Vec<f64> = (0..20_000u32).map(|i| model.ratio(i % 997, i / 997 + 1)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.35).abs() < 0.002, "mean {mean}");
        assert!((var.sqrt() - 0.05).abs() < 0.002, "sigma {}", var.sqrt());
        let wide = ContentModel { mean: 0.95, sigma: 0.1, seed: 7 };
        assert!((0..1000).all(|v| (MIN_RATIO..=1.0).contains(&wide.ratio(3, v + 1))));
        assert!((0..1000).any(|v| wide.ratio(3, v + 1) == 1.0), "draws above 1 are clipped to incompressible");
    }

    #[test]
    fn levels_share_their_random_numbers() {
        let at = |mean| ContentModel { mean, sigma: 0.05, seed: 11 };
        for (lpn, version) in [(0, 1), (5, 9), (1 << 20, 3)] {
            let (low, high) = (at(0.5).ratio(lpn, version), at(0.2).ratio(lpn, version));
            assert!((low - high - 0.3).abs() < 1e-12, "same z at both levels");
        }
        assert_ne!(at(0.5).ratio(1, 1), ContentModel { seed: 12, ..at(0.5) }.ratio(1, 1));
    }
}
