//! Where the flash time of a run went (paper 004's overheads, spec C.9): the sum of every
//! operation's array time, and the shares of it spent collecting data blocks (GC, or the merges
//! of block-mapped schemes) and loading the map (translation-page traffic and the collection of
//! the blocks holding translation pages). Defined for every FTL, so schemes compare on it.

use serde::Serialize;

use super::{FlashCounts, FlashTimes, GcStats};
use crate::flash::PageKind;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlashTimeReport {
    /// The sum of every flash operation's array time, recovery excluded (spec C.9), seconds.
    pub total_s: f64,
    /// Data-block GC (copies and erases) as a share of that time (paper 004 Fig. 8).
    pub gc_overhead: Option<f64>,
    /// Map loading as a share of that time: translation-page reads and writes and the GC of the
    /// blocks holding them (paper 004 Fig. 8).
    pub map_loading_overhead: Option<f64>,
}

impl FlashTimeReport {
    pub fn new(
        gc: &GcStats,
        reads: &FlashCounts,
        spare_reads: &FlashCounts,
        programs: &FlashCounts,
        erases: &FlashCounts,
        t: FlashTimes,
    ) -> Self {
        let worked = |f: &FlashCounts| (f.total - f.recovery) as f64;
        let total_us = (worked(reads) + worked(spare_reads)) * t.read_us
            + worked(programs) * t.program_us
            + worked(erases) * t.erase_us;
        let collected = |kind: PageKind| {
            gc.moved[kind as usize] as f64 * (t.read_us + t.program_us) + gc.victims[kind as usize] as f64 * t.erase_us
        };
        let map_us = (reads.translation + spare_reads.translation) as f64 * t.read_us
            + programs.translation as f64 * t.program_us
            + collected(PageKind::Translation);
        let share = |us: f64| (total_us > 0.0).then(|| us / total_us);
        FlashTimeReport {
            total_s: total_us / 1e6,
            gc_overhead: share(collected(PageKind::Data)),
            map_loading_overhead: share(map_us),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overheads_are_shares_of_the_summed_flash_time() {
        let mut gc = GcStats::default();
        gc.moved[PageKind::Data as usize] = 10;
        gc.victims[PageKind::Data as usize] = 2;
        gc.moved[PageKind::Translation as usize] = 1;
        gc.victims[PageKind::Translation as usize] = 1;
        let counts = |host, gc, translation| FlashCounts {
            host,
            gc,
            translation,
            metadata: 0,
            recovery: 5,
            total: host + gc + translation + 5,
        };
        // Reads: 100 host, 11 GC, 4 translation; programs: 50 host, 11 GC, 3 translation; erases 3.
        let (reads, programs) = (counts(100, 11, 4), counts(50, 11, 3));
        let erases = counts(0, 3, 0);
        let t = FlashTimes { read_us: 60.0, program_us: 800.0, erase_us: 1500.0 };
        let r = FlashTimeReport::new(&gc, &reads, &counts(0, 0, 0), &programs, &erases, t);
        let total = 115.0 * 60.0 + 64.0 * 800.0 + 3.0 * 1500.0;
        assert!((r.total_s - total / 1e6).abs() < 1e-12);
        assert_eq!(r.gc_overhead, Some((10.0 * 860.0 + 2.0 * 1500.0) / total));
        assert_eq!(r.map_loading_overhead, Some((4.0 * 60.0 + 3.0 * 800.0 + 860.0 + 1500.0) / total));
    }

    #[test]
    fn an_idle_run_has_no_shares() {
        let none = FlashCounts { host: 0, gc: 0, translation: 0, metadata: 0, recovery: 0, total: 0 };
        let t = FlashTimes { read_us: 60.0, program_us: 800.0, erase_us: 1500.0 };
        let r = FlashTimeReport::new(&GcStats::default(), &none, &none, &none, &none, t);
        assert_eq!((r.total_s, r.gc_overhead, r.map_loading_overhead), (0.0, None, None));
    }
}
