//! BFTL: block-level mapping. A logical block maps to one data block and each page keeps its
//! offset; a page's first write goes in place when the block's program order allows, and any
//! other update copies the block's other valid pages, with the new page, to a fresh block (a full
//! merge). Tiny SRAM, heavy copying. Paper 000 section 3 and Table 5.3 (spec
//! ../shared/specs/scftl-3dftl-ilog.md 4.2).

use serde::{Deserialize, Serialize};

use super::common::merge::{spare_blocks_needed, MergeEngine, NO_STREAMS};
use super::common::BlockManager;
use super::registry::{no_test_overrides, FtlInfo, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramBreakdown};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Ppn, BASIC_LAYOUT};
use crate::metrics::MergeStats;

pub const INFO: FtlInfo = FtlInfo {
    name: "bftl",
    description: "block-level FTL: an update copies the whole block (paper 000 Table 5.3)",
    build: Bftl::build,
    params: ParamsSchema::of::<BftlParams>(&[]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, 0),
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BftlParams {}

pub struct Bftl {
    engine: MergeEngine,
    physical_blocks: u64,
}

impl Bftl {
    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let _: BftlParams = ftl_params(config, INFO.name)?;
        super::common::merge::check_log_area(config, INFO.name, 0, 0)?;
        Ok(Box::new(Bftl {
            engine: MergeEngine::new(config),
            physical_blocks: config.device.geometry.total_blocks() as u64,
        }))
    }
}

impl Ftl for Bftl {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.engine.read(lpn, ctx)
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if self.engine.fits_in_place(lpn, ctx.flash) {
            return self.engine.write_in_place(lpn, version, ctx);
        }
        let (lbn, _) = self.engine.split(lpn);
        self.engine.full_merge(lbn, Some((lpn, version)), ctx)
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        self.engine.trim(lpn, ctx)
    }

    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        self.engine.newest(lpn, flash)
    }

    /// Rebuilds the block map from the spare areas; a block left over by a copy that a power
    /// loss cut short holds pages outside their data block, so its logical blocks are merged.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        for block in self.engine.recover(ctx)? {
            self.engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))?;
        }
        Ok(())
    }

    /// Paper 000 Table 5.3: 16 KB of block map and 0.5 KB of GC bits on `mlc8g`.
    fn sram(&self) -> SramBreakdown {
        MergeEngine::block_map_sram(self.physical_blocks)
    }

    fn state_bytes(&self) -> usize {
        self.engine.state_bytes()
    }

    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.engine.check(flash)
    }

    fn blocks(&self) -> &BlockManager {
        &self.engine.blocks
    }

    fn merge_stats(&self) -> Option<MergeStats> {
        Some(self.engine.stats)
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(BftlParams::default()).expect("params serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{OpKind, OpLog, Purpose};
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
        let mut ftl = Bftl::build(&config).unwrap();
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for lpn in [0, 1, 3] {
            ftl.write(lpn, 1, &mut ctx).unwrap();
        }
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Host), 3);
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 0, "first writes go in place, gaps allowed");
        ftl.write(2, 1, &mut ctx).unwrap(); // offset 2 lies below the block's last programmed page
        assert_eq!(ctx.ops.count(OpKind::Read, Purpose::Gc), 3);
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 3);
        assert_eq!(ctx.ops.count(OpKind::Erase, Purpose::Gc), 1);
        ftl.write(1, 2, &mut ctx).unwrap();
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Gc), 6);
        assert_eq!(ctx.flash.read(ftl.lookup(1, ctx.flash).unwrap()).unwrap().version, 2);
        assert_eq!(ftl.merge_stats().unwrap().full_merges, 2);
        ftl.check(ctx.flash).unwrap();
    }
}
