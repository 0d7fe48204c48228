//! Delta-FTL's counts (paper 001 §4.5, spec §1.9 and Δ17): how evicted pages were dispatched,
//! what the delta log area received, merges, and the reads that needed the delta form.

use serde::Serialize;

use super::FlashTimes;
use crate::ftl::delta::lifetime::{delta_gains, delta_gc, foreground_writes, LifetimeInputs};

/// Counts kept by a scheme that stores updates as compressed deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DeltaStats {
    /// Pages the FTL was asked to write (write-buffer evictions).
    pub writes: u64,
    /// Of those, dispatched as deltas to the delta log area.
    pub delta_writes: u64,
    /// Write-hot, read-cold pages whose content did not compress into a page (sent to the PMA).
    pub incompressible: u64,
    /// Write-hot, read-cold pages sent to the PMA while the bypass was on.
    pub bypassed: u64,
    /// Write-hot, read-cold pages sent to the PMA because valid delta pages reached their share
    /// of the spare space.
    pub space_limited: u64,
    /// Of those, empty: the trace's content fingerprint equalled the old version's
    /// (`trace_content`).
    pub empty_deltas: u64,
    /// Compressed bytes of the deltas dispatched.
    pub delta_bytes: u64,
    /// Delta log pages programmed for host writes (foreground) and by GC (re-appended deltas).
    pub dla_pages: u64,
    pub dla_pages_gc: u64,
    /// Pages programmed in original form for host writes (foreground).
    pub pma_pages: u64,
    /// Deltas committed to flash, and those of them a later write to the LPN invalidated (P_ow).
    pub deltas_committed: u64,
    pub deltas_overwritten: u64,
    /// Merges of a delta with its base into an original page: at read time (read-hot) and
    /// during GC (read-hot or write-cold).
    pub merges_on_read: u64,
    pub merges_in_gc: u64,
    /// Merges of write-cold deltas by the periodic scan (`cold_scan_every`), and the flash reads
    /// they took (the old version, and the delta page unless the delta was still buffered).
    pub merges_in_scan: u64,
    pub scan_reads: u64,
    /// Host page reads, those of pages in delta form (two flash reads), and those whose delta was
    /// still in the Temp Buffer (one flash read).
    pub reads: u64,
    pub delta_reads: u64,
    pub buffered_delta_reads: u64,
    /// Victims reclaimed in the delta log area and in the page mapping area, and the
    /// page-equivalents of valid content GC moved out of them (for the GC gain).
    pub gc_victims_dla: u64,
    pub gc_victims_pma: u64,
    pub gc_moved_page_equivalents: f64,
    /// Page mapping area blocks that came to hold an invalid page (the lifetime model's t).
    pub pma_blocks_dirtied: u64,
}

impl DeltaStats {
    pub fn since(&self, e: &DeltaStats) -> DeltaStats {
        DeltaStats {
            writes: self.writes - e.writes,
            delta_writes: self.delta_writes - e.delta_writes,
            incompressible: self.incompressible - e.incompressible,
            bypassed: self.bypassed - e.bypassed,
            space_limited: self.space_limited - e.space_limited,
            empty_deltas: self.empty_deltas - e.empty_deltas,
            delta_bytes: self.delta_bytes - e.delta_bytes,
            dla_pages: self.dla_pages - e.dla_pages,
            dla_pages_gc: self.dla_pages_gc - e.dla_pages_gc,
            pma_pages: self.pma_pages - e.pma_pages,
            deltas_committed: self.deltas_committed - e.deltas_committed,
            deltas_overwritten: self.deltas_overwritten - e.deltas_overwritten,
            merges_on_read: self.merges_on_read - e.merges_on_read,
            merges_in_gc: self.merges_in_gc - e.merges_in_gc,
            merges_in_scan: self.merges_in_scan - e.merges_in_scan,
            scan_reads: self.scan_reads - e.scan_reads,
            reads: self.reads - e.reads,
            delta_reads: self.delta_reads - e.delta_reads,
            buffered_delta_reads: self.buffered_delta_reads - e.buffered_delta_reads,
            gc_victims_dla: self.gc_victims_dla - e.gc_victims_dla,
            gc_victims_pma: self.gc_victims_pma - e.gc_victims_pma,
            gc_moved_page_equivalents: self.gc_moved_page_equivalents - e.gc_moved_page_equivalents,
            pma_blocks_dirtied: self.pma_blocks_dirtied - e.pma_blocks_dirtied,
        }
    }
}

/// `report.delta`: the counts and the paper's derived metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeltaReport {
    #[serde(flatten)]
    pub counts: DeltaStats,
    /// P_c: evicted pages dispatched as deltas / evicted pages (spec Δ17).
    pub p_c: Option<f64>,
    /// Mean compression ratio of the dispatched deltas (compressed bytes / page).
    pub r_c: Option<f64>,
    /// P_ow: committed deltas later overwritten / committed deltas.
    pub p_ow: Option<f64>,
    /// Foreground page programs (PMA pages + DLA pages) and the model's (1 − P_c + P_c·R_c)·N from
    /// the measured P_c and R_c.
    pub foreground_pages: u64,
    pub foreground_model: Option<f64>,
    /// DLA page commits / all foreground page programs (Fig. 4.8's wording).
    pub dla_share_of_foreground: Option<f64>,
    /// Share of GC victims in the delta log area (Fig. 4.11).
    pub gc_dla_share: Option<f64>,
    /// Mean page-equivalents reclaimed per victim (Fig. 4.9; invalid deltas in fractions of a page).
    pub gc_gain: Option<f64>,
    /// Raw read latency relative to reading every page once (a delta-form page costs two reads).
    pub raw_read_factor: Option<f64>,
    /// Flash time per GC victim at the array times, µs (Fig. 4.13): GC's reads, programs and
    /// erases, without the merges outside GC (a read-hot merge's program, the scan's merges).
    pub gc_us_per_victim: Option<f64>,
    /// The lifetime model on this run's measurements (absent before a delta was committed).
    pub lifetime: Option<LifetimeReport>,
}

/// The flash operations a run did for GC (`Purpose::Gc`, merges outside GC included).
#[derive(Debug, Clone, Copy, Default)]
pub struct GcFlashWork {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
}

/// The lifetime model (§4.4, Eqs. 4.7-4.10) fed with the run's P_c, R_c, P_ow, t, N and B_s,
/// beside the GC the run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LifetimeReport {
    /// t: page mapping area blocks that came to hold an invalid page.
    pub t_blocks: u64,
    /// Invalid pages a victim yields by the model: (1 − P_c)·N / t in the page mapping area,
    /// P_ow·B_s in the delta log area; the larger decides the equations.
    pub pma_gain: f64,
    pub dla_gain: f64,
    /// GC count (Eq. 4.7, or 4.8 when the delta log area gains more) and the run's.
    pub gc_count_model: f64,
    pub gc_count: u64,
    /// GC P/E time, µs (Eq. 4.9 or 4.10: victims x (T_erase + T_write x pages copied)), and the
    /// run's GC erases and programs at the same times.
    pub gc_pe_model_us: f64,
    pub gc_pe_us: f64,
}

impl DeltaReport {
    pub fn new(c: DeltaStats, page_bytes: u32, pages_per_block: u32, gc: GcFlashWork, t: FlashTimes) -> Self {
        let share = |n: f64, of: f64| (of > 0.0).then(|| n / of);
        let p_c = share(c.delta_writes as f64, c.writes as f64);
        let r_c = share(c.delta_bytes as f64, c.delta_writes as f64 * page_bytes as f64);
        let foreground_pages = c.pma_pages + c.dla_pages;
        let victims = c.gc_victims_dla + c.gc_victims_pma;
        // GC's own programs and reads: a read-hot merge programs once, a scan merge reads too.
        let gc_programs = gc.programs.saturating_sub(c.merges_on_read + c.merges_in_scan) as f64;
        let gc_reads = gc.reads.saturating_sub(c.scan_reads) as f64;
        let gc_pe_us = gc.erases as f64 * t.erase_us + gc_programs * t.program_us;
        let p_ow = share(c.deltas_overwritten as f64, c.deltas_committed as f64);
        let lifetime = match (p_c, r_c, p_ow) {
            (Some(p_c), Some(r_c), Some(p_ow)) if c.pma_blocks_dirtied > 0 => {
                let inputs = LifetimeInputs {
                    p_c,
                    r_c,
                    p_ow,
                    writes: c.writes as f64,
                    block_pages: pages_per_block as f64,
                    erase_us: t.erase_us,
                    program_us: t.program_us,
                };
                let t_blocks = c.pma_blocks_dirtied as f64;
                let (pma_gain, dla_gain) = delta_gains(&inputs, t_blocks);
                let (gc_count_model, gc_pe_model_us) = delta_gc(&inputs, t_blocks);
                Some(LifetimeReport {
                    t_blocks: c.pma_blocks_dirtied,
                    pma_gain,
                    dla_gain,
                    gc_count_model,
                    gc_count: victims,
                    gc_pe_model_us,
                    gc_pe_us,
                })
            }
            _ => None,
        };
        DeltaReport {
            p_c,
            r_c,
            p_ow,
            foreground_pages,
            foreground_model: p_c.map(|p| foreground_writes(p, r_c.unwrap_or(0.0), c.writes as f64)),
            dla_share_of_foreground: share(c.dla_pages as f64, foreground_pages as f64),
            gc_dla_share: share(c.gc_victims_dla as f64, victims as f64),
            gc_gain: share(victims as f64 * pages_per_block as f64 - c.gc_moved_page_equivalents, victims as f64),
            raw_read_factor: share((c.reads + c.delta_reads - c.buffered_delta_reads) as f64, c.reads as f64),
            gc_us_per_victim: share(gc_reads * t.read_us + gc_pe_us, victims as f64),
            lifetime,
            counts: c,
        }
    }
}
