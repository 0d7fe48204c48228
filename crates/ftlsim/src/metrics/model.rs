//! Paper 002's models of a demand-based page-level FTL (§3.1), evaluated on a run's measured
//! inputs and set next to what the same run measured: write amplification (Eq. 13 against Eq. 12
//! on its counts) and the flash time per host page access (Eqs. 1, 10 and 11, against the time
//! of the flash operations the run issued). See docs/validation.md for the derivation and the
//! agreement.
//!
//! Measured inputs, over the run (or a window: [`WaCounts::since`]):
//! - `N_pa`: host page accesses, i.e. mapping-cache accesses made for host pages (reads, writes
//!   and trims each translate once); `R_w` = host pages written / `N_pa`;
//! - `H_r`: hits among those accesses; `P_rd`: dirty evictions / evictions (host and GC alike);
//! - `H_gcr`: hits among the mapping updates of pages GC moved;
//! - `V_d`, `V_t`: valid pages moved per reclaimed data / translation block; `N_p`: pages per block.
//!
//! Measured counts (Eq. 12): `N_md`, `N_mt` pages moved out of data / translation blocks; `N_dt`
//! translation-page writes caused by GC mapping updates (the GC accesses classified as misses
//! with write-back); `N_tw` the other translation-page writes (address translation).

use serde::Serialize;

use super::{CacheStats, ClusterStats};
use crate::flash::{PageKind, PAGE_KINDS};

/// Blocks reclaimed by GC and the valid pages moved out of them, by the victim's stream; and
/// what an FTL that collects clusters of blocks itself counts (CPM, K-CPM).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GcStats {
    pub victims: [u64; PAGE_KINDS],
    pub moved: [u64; PAGE_KINDS],
    pub clusters: Option<ClusterStats>,
}

impl GcStats {
    pub fn since(&self, earlier: &GcStats) -> GcStats {
        let mut d = *self;
        for s in 0..PAGE_KINDS {
            d.victims[s] -= earlier.victims[s];
            d.moved[s] -= earlier.moved[s];
        }
        if let (Some(now), Some(then)) = (self.clusters, earlier.clusters) {
            d.clusters = Some(now.since(&then));
        }
        d
    }
}

/// The raw counts the model is computed from (kept in the report so a window of a run can be
/// evaluated from two reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WaCounts {
    pub pages_per_block: u64,
    pub host_pages_written: u64,
    pub host_accesses: u64,
    pub host_hits: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub gc_accesses: u64,
    pub gc_hits: u64,
    pub gc_writebacks: u64,
    pub data_victims: u64,
    pub data_moved: u64,
    pub translation_victims: u64,
    pub translation_moved: u64,
    /// Translation-page programs (address translation and GC mapping updates; moves excluded).
    pub translation_programs: u64,
}

impl WaCounts {
    pub fn new(
        cache: &CacheStats,
        gc: &GcStats,
        host_pages_written: u64,
        translation_programs: u64,
        pages_per_block: u64,
    ) -> Self {
        let (d, t) = (PageKind::Data as usize, PageKind::Translation as usize);
        WaCounts {
            pages_per_block,
            host_pages_written,
            host_accesses: cache.accesses() - cache.gc_accesses,
            host_hits: cache.hit - cache.gc_hits,
            evictions: cache.evictions,
            dirty_evictions: cache.dirty_evictions,
            gc_accesses: cache.gc_accesses,
            gc_hits: cache.gc_hits,
            gc_writebacks: cache.gc_writebacks,
            data_victims: gc.victims[d],
            data_moved: gc.moved[d],
            translation_victims: gc.victims[t],
            translation_moved: gc.moved[t],
            translation_programs,
        }
    }

    /// The counts of the part of a run after `earlier`.
    pub fn since(&self, earlier: &WaCounts) -> WaCounts {
        WaCounts {
            pages_per_block: self.pages_per_block,
            host_pages_written: self.host_pages_written - earlier.host_pages_written,
            host_accesses: self.host_accesses - earlier.host_accesses,
            host_hits: self.host_hits - earlier.host_hits,
            evictions: self.evictions - earlier.evictions,
            dirty_evictions: self.dirty_evictions - earlier.dirty_evictions,
            gc_accesses: self.gc_accesses - earlier.gc_accesses,
            gc_hits: self.gc_hits - earlier.gc_hits,
            gc_writebacks: self.gc_writebacks - earlier.gc_writebacks,
            data_victims: self.data_victims - earlier.data_victims,
            data_moved: self.data_moved - earlier.data_moved,
            translation_victims: self.translation_victims - earlier.translation_victims,
            translation_moved: self.translation_moved - earlier.translation_moved,
            translation_programs: self.translation_programs - earlier.translation_programs,
        }
    }

    /// The model next to the measurement; `None` without host writes or cache accesses (the
    /// model assumes `R_w > 0` and a mapping cache).
    pub fn model(&self) -> Option<WaModel> {
        if self.host_pages_written == 0 || self.host_accesses == 0 {
            return None;
        }
        let ratio = |a: u64, b: u64, none: f64| if b == 0 { none } else { a as f64 / b as f64 };
        let n_p = self.pages_per_block as f64;
        let r_w = ratio(self.host_pages_written, self.host_accesses, 0.0);
        let h_r = ratio(self.host_hits, self.host_accesses, 1.0);
        let p_rd = ratio(self.dirty_evictions, self.evictions, 0.0);
        // Without GC mapping updates there is no GC miss (the term is multiplied by V_d anyway).
        let h_gcr = ratio(self.gc_hits, self.gc_accesses, 1.0);
        let v_d = ratio(self.data_moved, self.data_victims, 0.0);
        let v_t = ratio(self.translation_moved, self.translation_victims, 0.0);
        let n_dt = self.gc_writebacks.min(self.translation_programs);
        let n_tw = self.translation_programs - n_dt;
        let writes = self.host_pages_written as f64;
        // Eq. 12.
        let measured = (writes + (n_tw + self.data_moved + n_dt + self.translation_moved) as f64) / writes;
        // Eq. 13, in its two parts: address-translation write-backs, and GC (data moves and the
        // translation writes of GC misses, each with its share of translation-block moves).
        let translation_term = (1.0 - h_r) * p_rd * n_p / ((n_p - v_t) * r_w);
        let gc_term = (1.0 + (1.0 - h_gcr) * n_p / (n_p - v_t)) * v_d / (n_p - v_d);
        let model = 1.0 + translation_term + gc_term;
        Some(WaModel {
            n_p: self.pages_per_block,
            n_pa: self.host_accesses,
            r_w,
            h_r,
            p_rd,
            h_gcr,
            v_d,
            v_t,
            n_tw,
            n_dt,
            n_md: self.data_moved,
            n_mt: self.translation_moved,
            n_gcd: self.data_victims,
            n_gct: self.translation_victims,
            measured,
            model,
            model_translation_term: translation_term,
            model_gc_term: gc_term,
            gap: model / measured - 1.0,
            counts: *self,
        })
    }
}

impl WaModel {
    /// Paper 002's performance model on the same measured inputs, with flash operation times
    /// `times`; `measured_flash_us` is the time of the host, GC and translation operations the
    /// run issued (the flash work the model accounts for).
    pub fn time_model(&self, times: FlashTimes, measured_flash_us: f64) -> TimeModel {
        let FlashTimes { read_us: t_fr, program_us: t_fw, erase_us: t_fe } = times;
        let (n_p, v_d, v_t) = (self.n_p as f64, self.v_d, self.v_t);
        let miss = 1.0 - self.h_r;
        // Eq. 1: a miss reads a TP, a dirty replacement also writes one back (read and write).
        let t_at = miss * (t_fr + self.p_rd * (t_fr + t_fw));
        // Eq. 10: data-block GC per access (moves, the TP updates of GC misses, erases).
        let t_gcd = self.r_w * (v_d * (2.0 - self.h_gcr) * (t_fr + t_fw) + t_fe) / (n_p - v_d);
        // Eq. 11: translation-block GC per access, driven by every TP write.
        let tp_writes = miss * self.p_rd + self.r_w * v_d * (1.0 - self.h_gcr) / (n_p - v_d);
        let t_gct = tp_writes * (v_t * (t_fr + t_fw) + t_fe) / (n_p - v_t);
        // The user page access itself (spec [DERIVED]: the paper lists the three parts).
        let t_page = t_at + self.r_w * t_fw + (1.0 - self.r_w) * t_fr + t_gcd + t_gct;
        let measured = measured_flash_us / self.n_pa as f64;
        TimeModel {
            t_fr_us: t_fr,
            t_fw_us: t_fw,
            t_fe_us: t_fe,
            t_at_us: t_at,
            t_gcd_us: t_gcd,
            t_gct_us: t_gct,
            model_us: t_page,
            measured_us: measured,
            gap: t_page / measured - 1.0,
        }
    }
}

/// The time of one flash page read, page program and block erase (array time plus transfer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlashTimes {
    pub read_us: f64,
    pub program_us: f64,
    pub erase_us: f64,
}

/// Paper 002's performance model (Eqs. 1, 10, 11): flash time per host page access, next to the
/// flash time the run spent per host page access.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeModel {
    pub t_fr_us: f64,
    pub t_fw_us: f64,
    pub t_fe_us: f64,
    /// Eq. 1: address translation, (1 - H_r) [T_fr + P_rd (T_fr + T_fw)].
    pub t_at_us: f64,
    /// Eq. 10: collecting data blocks.
    pub t_gcd_us: f64,
    /// Eq. 11: collecting translation blocks.
    pub t_gct_us: f64,
    /// T_at + R_w T_fw + (1 - R_w) T_fr + T_gcd + T_gct.
    pub model_us: f64,
    /// The run's host, GC and translation reads, programs and erases at those times, per access.
    pub measured_us: f64,
    /// model / measured - 1.
    pub gap: f64,
}

/// Paper 002's write-amplification model (Eq. 13) next to the measured one (Eq. 12).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaModel {
    pub n_p: u64,
    pub n_pa: u64,
    pub r_w: f64,
    pub h_r: f64,
    pub p_rd: f64,
    pub h_gcr: f64,
    pub v_d: f64,
    pub v_t: f64,
    pub n_tw: u64,
    pub n_dt: u64,
    pub n_md: u64,
    pub n_mt: u64,
    pub n_gcd: u64,
    pub n_gct: u64,
    /// Eq. 12: (host writes + N_tw + N_md + N_dt + N_mt) / host writes.
    pub measured: f64,
    /// Eq. 13 from the measured H_r, P_rd, H_gcr, R_w, V_d, V_t.
    pub model: f64,
    /// Eq. 13's (1 - H_r) P_rd N_p / ((N_p - V_t) R_w).
    pub model_translation_term: f64,
    /// Eq. 13's [1 + (1 - H_gcr) N_p / (N_p - V_t)] V_d / (N_p - V_d).
    pub model_gc_term: f64,
    /// model / measured - 1.
    pub gap: f64,
    pub counts: WaCounts,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equation_13_is_equation_12_when_the_counts_follow_the_model() {
        // N_p = 64, 1000 host accesses, 800 writes, H_r = 0.7, P_rd = 0.5 (150 dirty of 300
        // evictions); data GC: V_d = 48, so N_gcd = 800 / 16 = 50 victims, 2400 moves, H_gcr = 0.25
        // (600 hits): N_dt = 1800. N_tw = 150. Translation GC: V_t = 32, N_gct = 1950 / 32.
        let n_gct = 1950.0 / 32.0;
        let counts = WaCounts {
            pages_per_block: 64,
            host_pages_written: 800,
            host_accesses: 1000,
            host_hits: 700,
            evictions: 300,
            dirty_evictions: 150,
            gc_accesses: 2400,
            gc_hits: 600,
            gc_writebacks: 1800,
            data_victims: 50,
            data_moved: 2400,
            translation_victims: 60,
            translation_moved: 1920,
            translation_programs: 1950,
        };
        let m = counts.model().unwrap();
        assert_eq!((m.r_w, m.h_r, m.p_rd, m.h_gcr, m.v_d, m.v_t), (0.8, 0.7, 0.5, 0.25, 48.0, 32.0));
        assert_eq!((m.n_tw, m.n_dt), (150, 1800));
        // Eq. 12 with N_mt = N_gct V_t exactly (60 of the 60.9 victims' 32 pages): 1 + 6270 / 800.
        assert!((m.measured - (800.0 + 150.0 + 2400.0 + 1800.0 + 1920.0) / 800.0).abs() < 1e-12);
        let exact = (800.0 + 150.0 + 2400.0 + 1800.0 + n_gct * 32.0) / 800.0;
        assert!((m.model - exact).abs() < 1e-9, "{} vs {exact}", m.model);
        assert!((m.model - 1.0 - m.model_translation_term - m.model_gc_term).abs() < 1e-12);
        // A window of a run is its own run.
        assert_eq!(counts.since(&WaCounts { pages_per_block: 64, ..WaCounts::default() }), counts);
        assert_eq!(WaCounts { host_pages_written: 0, ..counts }.model(), None);

        // Eqs. 1, 10, 11 with T_fr = 25, T_fw = 200, T_fe = 1500 (paper 002's Table 3), on the
        // counts above: each part is the flash time of its counts per access.
        let times = FlashTimes { read_us: 25.0, program_us: 200.0, erase_us: 1500.0 };
        let rw = 225.0;
        let t_at = (300.0 * 25.0 + 150.0 * rw) / 1000.0; // (1-H_r) N_pa TP reads, N_tw read-writes
        let t_gcd = ((2400.0 + 1800.0) * rw + 50.0 * 1500.0) / 1000.0;
        let t_gct = (n_gct * 32.0 * rw + n_gct * 1500.0) / 1000.0;
        let user = 800.0 * 200.0 / 1000.0 + 200.0 * 25.0 / 1000.0;
        let t = m.time_model(times, 1000.0 * (t_at + t_gcd + t_gct + user));
        assert!((t.t_at_us - t_at).abs() < 1e-9, "{} vs {t_at}", t.t_at_us);
        assert!((t.t_gcd_us - t_gcd).abs() < 1e-9, "{} vs {t_gcd}", t.t_gcd_us);
        assert!((t.t_gct_us - t_gct).abs() < 1e-9, "{} vs {t_gct}", t.t_gct_us);
        assert!(t.gap.abs() < 1e-12, "{t:?}");
    }
}
