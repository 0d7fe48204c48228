//! Worked examples of FAST's merges with their exact operation counts (spec B.2), on a device of
//! 9 blocks of 4 pages exporting 4 logical blocks: 3 log blocks (the SW block and 2 RW blocks)
//! and the 2-block merge reserve.

use super::*;
use crate::config::ConfigBuilder;
use crate::flash::{OpKind, OpLog, Purpose};
use crate::metrics::{CacheStats, MergeStats};

struct Rig {
    ftl: LogBlockFtl<Fast>,
    flash: FlashArray,
    ops: OpLog,
    cache: CacheStats,
}

impl Rig {
    /// Every logical block written once in order: four full data blocks, in place.
    fn filled(selection: Selection) -> Rig {
        Rig::filled_with(selection, None)
    }

    fn filled_with(selection: Selection, max_associativity: Option<u32>) -> Rig {
        let config = ConfigBuilder::new()
            .set("device.geometry.planes_per_die=1")
            .and_then(|b| b.set("device.geometry.blocks_per_plane=9"))
            .and_then(|b| b.set("device.geometry.pages_per_block=4"))
            .and_then(|b| b.set("device.logical_pages=16"))
            .and_then(|b| b.set("gc.free_blocks_low=1"))
            .and_then(|b| b.build())
            .unwrap();
        let p = FastParams::default();
        let scheme = Fast::new(&config, "fast", &p, selection, max_associativity).unwrap();
        assert_eq!(scheme.log_blocks, 3);
        let ftl = LogBlockFtl::new(&config, "fast", scheme, &p);
        let flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let mut rig = Rig { ftl, flash, ops: OpLog::new(), cache: CacheStats::default() };
        for lpn in 0..16 {
            rig.write(Lpn::new(lpn));
        }
        assert_eq!(rig.count(OpKind::Program, Purpose::Host), 16, "first writes go in place");
        assert_eq!(rig.ftl.engine.stats, MergeStats::default());
        rig.ops.reset_counts();
        rig
    }

    fn write(&mut self, lpn: Lpn) {
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.write(lpn, 1 + self.ftl.engine.stats.pages_copied as u32 + lpn.get(), &mut ctx).unwrap();
        self.ftl.check(&self.flash).unwrap();
        self.ftl.engine.blocks.check(&self.flash).unwrap();
    }

    fn count(&self, kind: OpKind, purpose: Purpose) -> u64 {
        self.ops.count(kind, purpose)
    }

    fn data_block(&self, lbn: u32) -> Pbn {
        self.ftl.engine.data_block(lbn).unwrap()
    }
}

#[test]
fn a_run_over_a_whole_block_ends_in_a_switch_merge() {
    let mut rig = Rig::filled(Selection::Fifo);
    let old = rig.data_block(0);
    for lpn in 0..4 {
        rig.write(Lpn::new(lpn));
    }
    let s = rig.ftl.engine.stats;
    assert_eq!((s.switch_merges, s.partial_merges, s.full_merges, s.pages_copied), (1, 0, 0, 0));
    assert_eq!(rig.count(OpKind::Erase, Purpose::Gc), 1, "only the old data block is erased");
    assert_eq!(rig.count(OpKind::Program, Purpose::Host), 4);
    assert_ne!(rig.data_block(0), old, "the SW block became the data block");
    assert!(rig.ftl.scheme.sw.is_none());
}

#[test]
fn a_run_cut_short_ends_in_a_partial_merge() {
    let mut rig = Rig::filled(Selection::Fifo);
    rig.write(Lpn::new(4));
    rig.write(Lpn::new(5)); // the SW block holds offsets 0 and 1 of logical block 1
    rig.write(Lpn::new(8)); // a run starting at offset 0 of logical block 2 takes the SW block
    let s = rig.ftl.engine.stats;
    assert_eq!((s.switch_merges, s.partial_merges, s.full_merges, s.pages_copied), (0, 1, 0, 2));
    assert_eq!(rig.count(OpKind::Read, Purpose::Gc), 2, "offsets 2 and 3 are copied from the data block");
    assert_eq!(rig.count(OpKind::Program, Purpose::Gc), 2);
    assert_eq!(rig.count(OpKind::Erase, Purpose::Gc), 1);
    assert_eq!(rig.ftl.scheme.sw.map(|sw| sw.lbn), Some(2));
}

/// The RW victim holds pages of three logical blocks: three full merges of four pages each, the
/// three old data blocks and the victim erased.
#[test]
fn reclaiming_a_random_write_log_block_full_merges_every_block_it_touches() {
    let mut rig = Rig::filled(Selection::Fifo);
    for lpn in [1, 5, 6, 13, 2, 7, 14, 15] {
        rig.write(Lpn::new(lpn)); // fills RW block a, then RW block b
    }
    assert_eq!(rig.ftl.scheme.full.len(), 2, "both RW blocks are full: the RW area (2 blocks) is at its limit");
    rig.write(Lpn::new(3)); // a is the victim
    let s = rig.ftl.engine.stats;
    assert_eq!((s.switch_merges, s.partial_merges, s.full_merges), (0, 0, 3));
    assert_eq!((s.log_merges, s.merged_data_blocks, s.log_valid_pages, s.log_written_pages), (1, 3, 4, 4));
    assert_eq!(s.pages_copied, 12);
    assert_eq!(rig.count(OpKind::Read, Purpose::Gc), 12);
    assert_eq!(rig.count(OpKind::Program, Purpose::Gc), 12);
    assert_eq!(rig.count(OpKind::Erase, Purpose::Gc), 4);
    // RW block b held pages 2, 7, 14 and 15, all of blocks the victim touched: the merges took
    // them, so b is left with no valid page (a second chance would now reclaim it for one erase).
    let b = rig.ftl.scheme.full.blocks().next().unwrap();
    assert_eq!(rig.ftl.engine.blocks.valid_count(b, &rig.flash), 0);
}

/// With second chance, a victim candidate still holding valid pages is passed over for one that
/// holds none, which is reclaimed by a single erase (paper 003's case for n = 0).
#[test]
fn second_chance_reclaims_an_empty_log_block_with_one_erase() {
    let sc = Selection::SecondChance { threshold: 0, mode: ScMode::MoveToTail };
    let mut rig = Rig::filled(sc);
    for lpn in [1, 5, 6, 13, 1, 5, 6, 13] {
        rig.write(Lpn::new(lpn)); // RW block a, then the same pages again in b: a holds no valid page
    }
    rig.ops.reset_counts();
    rig.write(Lpn::new(2));
    let s = rig.ftl.engine.stats;
    assert_eq!((s.full_merges, s.pages_copied, s.second_chance_skips), (0, 0, 0), "a is empty: taken at once");
    assert_eq!(rig.count(OpKind::Erase, Purpose::Gc), 1);
}

/// KAST: with K = 2 no random-write log block ever holds pages of more than two logical blocks
/// (`Fast::check` runs after every write), so a reclaimed one full-merges at most two; FAST's
/// victims on the same writes touch more.
#[test]
fn kast_never_exceeds_k_associations() {
    let writes = [1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 1, 6, 11, 13, 2, 7, 9, 14];
    let mut kast = Rig::filled_with(Selection::Fifo, Some(2));
    for lpn in writes {
        kast.write(Lpn::new(lpn));
    }
    let s = kast.ftl.engine.stats;
    assert!(s.log_merges > 0 && s.merged_data_blocks <= 2 * s.log_merges, "{s:?}");
    let mut fast = Rig::filled(Selection::Fifo);
    for lpn in writes {
        fast.write(Lpn::new(lpn));
    }
    let s = fast.ftl.engine.stats;
    assert!(s.merged_data_blocks > 2 * s.log_merges, "FAST's victims touch more than two blocks on average: {s:?}");
}
