//! BAST (Kim et al., 2002): block-associative log blocks. Each log block belongs to one data
//! block and takes its updates in arrival order, whatever their offset. A full log block is
//! merged with its data block (switch when it holds the whole block in order, partial when it
//! holds a prefix in order, full otherwise); when every log block is taken, the oldest one is
//! merged to free one. Small random writes spread over many blocks make it merge log blocks
//! that are barely used ("log-block thrashing"). Spec ../shared/specs/tpftl-fast-cpm.md B.2.

use super::common::dedicated::DedicatedLogs;
use super::common::hybrid::{LogBlockFtl, LogScheme};
use super::common::merge::{
    logical_blocks, spare_blocks_needed, LogAreaParams, MergeEngine, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO,
    LOG_RATIO_OF, NO_STREAMS,
};
use super::registry::{no_test_overrides, Family, FtlInfo, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Pbn, BASIC_LAYOUT};

pub const INFO: FtlInfo = FtlInfo {
    name: "bast",
    description: "BAST: block-mapped data blocks, one log block per data block (1:1)",
    family: Family::BlockMapped,
    build,
    params: ParamsSchema::of::<LogAreaParams>(&[LOG_RATIO, LOG_RATIO_OF, LOG_BLOCKS, INPLACE_FIRST_WRITE]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, 1),
    test_overrides: no_test_overrides,
};

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let params: LogAreaParams = ftl_params(config, INFO.name)?;
    let log_blocks = params.log_blocks(config, INFO.name, 1)?;
    let scheme = Bast {
        inplace_first_write: params.inplace_first_write,
        log_blocks,
        logs: DedicatedLogs::new(logical_blocks(config), log_blocks),
    };
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, scheme, &params)))
}

pub struct Bast {
    inplace_first_write: bool,
    log_blocks: u32,
    logs: DedicatedLogs,
}

impl LogScheme for Bast {
    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if self.inplace_first_write && engine.fits_in_place(lpn, ctx.flash) {
            return engine.write_in_place(lpn, version, ctx);
        }
        let (lbn, _) = engine.split(lpn);
        let log = self.logs.block_for(engine, lbn, ctx)?;
        let offset = ctx.flash.write_pointer(log);
        engine.write_log(log, offset, lpn, version, ctx)
    }

    /// A recovered log block whose valid pages all belong to one logical block without a log
    /// block becomes that block's log block again (unless a power loss cut a program in it:
    /// nothing is written after a corrupt page); any other (a power loss cut a merge short) is
    /// merged at once.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()> {
        self.logs.clear();
        for log in logs {
            match engine.valid_lbns(log, ctx.flash)[..] {
                [lbn] if self.logs.can_adopt(lbn) && !ctx.flash.has_corrupt_page(log) => self.logs.adopt(lbn, log),
                _ => engine.reclaim_log(log, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))?,
            }
        }
        Ok(())
    }

    /// The log-block table (LBN and PBN, 8 B per log block), the offset of every log page (1 B
    /// while a block has at most 256 pages) and the GC bits of the log pages.
    fn sram(&self, pages_per_block: u64) -> Vec<SramItem> {
        let log_pages = self.log_blocks as u64 * pages_per_block;
        vec![
            SramItem { structure: "log block table (8 B per log block)".into(), bytes: self.log_blocks as u64 * 8 },
            SramItem { structure: "log page offsets".into(), bytes: log_pages * offset_bytes(pages_per_block) },
            SramItem { structure: "GC log-page bitmap (1 bit per log page)".into(), bytes: log_pages.div_ceil(8) },
        ]
    }

    fn state_bytes(&self) -> usize {
        self.logs.state_bytes()
    }

    fn check(&self, engine: &MergeEngine, flash: &FlashArray) -> std::result::Result<(), String> {
        self.logs.check(engine, flash)
    }
}

/// Bytes of a page offset within a block of `pages_per_block` pages.
pub(super) fn offset_bytes(pages_per_block: u64) -> u64 {
    (u64::BITS - (pages_per_block - 1).leading_zeros()).div_ceil(8).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, OpLog, Purpose};
    use crate::metrics::{CacheStats, MergeStats};

    /// 9 blocks of 4 pages exporting 4 logical blocks: 3 log blocks and the merge reserve.
    fn config(ftl_sets: &[&str]) -> Config {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=9",
            "device.geometry.pages_per_block=4",
        ]
        .iter()
        .chain(["device.logical_pages=16", "gc.free_blocks_low=1"].iter())
        .chain(ftl_sets)
        {
            b = b.set(set).unwrap();
        }
        b.build().unwrap()
    }

    /// Writes every LPN once, then `updates`; returns the merge counts of the updates and the
    /// flash operations they took.
    fn run(ftl: &mut dyn Ftl, config: &Config, updates: &[Lpn]) -> (MergeStats, OpLog) {
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for lpn in 0..16 {
            ftl.write(Lpn::new(lpn), 1, &mut ctx).unwrap();
        }
        let before = ftl.merge_stats().unwrap();
        ctx.ops.reset_counts();
        for (i, &lpn) in updates.iter().enumerate() {
            ftl.write(lpn, 2 + i as u32, &mut ctx).unwrap();
            ftl.check(ctx.flash).unwrap();
        }
        (ftl.merge_stats().unwrap().since(&before), ops)
    }

    /// Spec B.2: small random writes spread over more data blocks than there are log blocks make
    /// BAST merge each log block after one page (utilization 1/4 here), while FAST's shared log
    /// blocks absorb the same writes without a merge.
    #[test]
    fn small_random_writes_thrash_bast_log_blocks() {
        let updates = [1, 5, 9, 13, 2, 6, 10, 14].map(Lpn::new);
        let config = config(&[]);
        let mut bast = build(&config).unwrap();
        let (s, ops) = run(bast.as_mut(), &config, &updates);
        assert_eq!((s.log_merges, s.full_merges, s.log_written_pages), (5, 5, 5));
        assert_eq!(s.pages_copied, 20, "each full merge copies the 4 pages of its block");
        assert_eq!(ops.count(OpKind::Erase, Purpose::Gc), 10, "each merge erases the log and the old data block");
        let mut fast = (crate::ftl::fast::INFO.build)(&config).unwrap();
        let (s, ops) = run(fast.as_mut(), &config, &updates);
        assert_eq!((s.log_merges, s.pages_copied, ops.count(OpKind::Erase, Purpose::Gc)), (0, 0, 0));
    }

    /// A log block that received its block's pages in order is switched in, not merged by copy.
    #[test]
    fn an_in_order_log_block_is_switched_in() {
        let config = config(&[]);
        let mut bast = build(&config).unwrap();
        let (s, ops) = run(bast.as_mut(), &config, &[Lpn::new(4), Lpn::new(5), Lpn::new(6), Lpn::new(7)]);
        assert_eq!((s.switch_merges, s.pages_copied, ops.count(OpKind::Erase, Purpose::Gc)), (0, 0, 0));
        let (s, ops) = run(
            build(&config).unwrap().as_mut(),
            &config,
            &[Lpn::new(4), Lpn::new(5), Lpn::new(6), Lpn::new(7), Lpn::new(4)],
        );
        assert_eq!((s.switch_merges, s.pages_copied), (1, 0), "the full log block is merged on its block's next write");
        assert_eq!(ops.count(OpKind::Erase, Purpose::Gc), 1);
    }

    #[test]
    fn a_log_area_that_does_not_fit_is_refused_naming_the_field() {
        let config = config(&["ftl.bast.log_blocks=4"]);
        let err = build(&config).err().unwrap().to_string();
        assert!(err.contains("ftl.bast.log_blocks") && err.contains("4 log blocks"), "{err}");
    }
}
