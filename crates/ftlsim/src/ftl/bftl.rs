//! BFTL: block-level mapping. A logical block maps to one data block and each page keeps its
//! offset; a page's first write goes in place when the block's program order allows, and any
//! other update copies the block's other valid pages, with the new page, to a fresh block (a full
//! merge). Tiny SRAM, heavy copying. Paper 000 section 3 and Table 5.3 (spec
//! ../shared/specs/scftl-3dftl-ilog.md 4.2).

use serde::{Deserialize, Serialize};

use super::common::hybrid::{LogBlockFtl, LogScheme};
use super::common::merge::{check_no_log_area, spare_blocks_needed, MergeEngine, NO_STREAMS};
use super::registry::{no_test_overrides, Family, FtlInfo, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{Lpn, Pbn, BASIC_LAYOUT};

pub const INFO: FtlInfo = FtlInfo {
    name: "bftl",
    description: "block-level FTL: an update copies the whole block (paper 000 Table 5.3)",
    family: Family::BlockMapped,
    build,
    params: ParamsSchema::of::<BftlParams>(&[]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, 0),
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BftlParams {}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let params: BftlParams = ftl_params(config, INFO.name)?;
    check_no_log_area(config, INFO.name)?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, Bftl, &params)))
}

pub struct Bftl;

impl LogScheme for Bftl {
    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if engine.fits_in_place(lpn, ctx.flash) {
            return engine.write_in_place(lpn, version, ctx);
        }
        let (lbn, _) = engine.split(lpn);
        engine.full_merge(lbn, Some((lpn, version)), ctx)
    }

    /// A block left over by a copy that a power loss cut short holds pages outside their data
    /// block: its logical blocks are merged.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()> {
        for block in logs {
            engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))?;
        }
        Ok(())
    }

    /// Nothing beyond the block map and its GC bits: 16 KB and 0.5 KB on `mlc8g` (Table 5.3).
    fn sram(&self, _: u64) -> Vec<SramItem> {
        Vec::new()
    }

    fn state_bytes(&self) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{FlashArray, OpKind, OpLog, Purpose};
    use crate::metrics::CacheStats;

    /// A page's first write goes to its offset while the program order allows; any other write
    /// copies the block's other valid pages to a fresh block with the new page in its place.
    #[test]
    fn an_update_copies_the_whole_block() {
        let config = crate::config::ConfigBuilder::new()
            .set("device.geometry.pages_per_block=4")
            .and_then(|b| b.set("device.logical_pages=16"))
            .and_then(|b| b.build())
            .unwrap();
        let mut ftl = build(&config).unwrap();
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for lpn in [0, 1, 3] {
            ftl.write(Lpn::new(lpn), 1, &mut ctx).unwrap();
        }
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Host), 3);
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 0, "first writes go in place, gaps allowed");
        ftl.write(Lpn::new(2), 1, &mut ctx).unwrap(); // offset 2 lies below the block's last programmed page
        assert_eq!(ctx.ops.count(OpKind::Read, Purpose::Gc), 3);
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 3);
        assert_eq!(ctx.ops.count(OpKind::Erase, Purpose::Gc), 1);
        ftl.write(Lpn::new(1), 2, &mut ctx).unwrap();
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 6);
        assert_eq!(ctx.flash.read(ftl.lookup(Lpn::new(1), ctx.flash).unwrap()).unwrap().version, 2);
        assert_eq!(ftl.merge_stats().unwrap().full_merges, 2);
        ftl.check(ctx.flash).unwrap();
    }
}
