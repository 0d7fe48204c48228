//! SAST (set-associative sector translation; Park et al., "A reconfigurable FTL architecture for
//! NAND flash-based applications", ACM TECS 7(4), 2008): consecutive logical blocks are grouped
//! in sets of `set_size`, and each set owns up to `logs_per_set` log blocks shared by its data
//! blocks (fully associative within the set, as FAST's, and nothing shared across sets, so a
//! merge touches at most `set_size` data blocks). A set that needs a log block beyond its share
//! reclaims its own oldest; when the log area is exhausted the oldest log block of any set is
//! reclaimed. From the published description; the choices it leaves open are ftlsim's
//! (docs/architecture.md).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::common::merge::{
    check_log_area, log_block_count, logical_blocks, spare_blocks_needed, LogRatioOf, MergeEngine, INPLACE_FIRST_WRITE,
    LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF, NO_STREAMS,
};
use super::common::BlockManager;
use super::registry::{no_test_overrides, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramBreakdown, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Pbn, Ppn, BASIC_LAYOUT};
use crate::metrics::MergeStats;

pub const INFO: FtlInfo = FtlInfo {
    name: "sast",
    description: "SAST: sets of consecutive data blocks, each with its own shared log blocks",
    build: Sast::build,
    params: ParamsSchema::of::<SastParams>(&[
        LOG_RATIO,
        LOG_RATIO_OF,
        LOG_BLOCKS,
        INPLACE_FIRST_WRITE,
        ParamSpec {
            name: "set_size",
            range: ParamRange::Integer { min: 1, max: 1 << 20 },
            meaning: "consecutive logical blocks per set (N)",
            source: "SAST (Park et al. 2008); the default 4 is ftlsim's",
        },
        ParamSpec {
            name: "logs_per_set",
            range: ParamRange::Integer { min: 1, max: 1 << 20 },
            meaning: "log blocks a set may own at once (K)",
            source: "SAST (Park et al. 2008); the default 2 is ftlsim's",
        },
    ]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, 1),
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SastParams {
    #[serde(default)]
    pub log_ratio: Option<f64>,
    #[serde(default)]
    pub log_ratio_of: LogRatioOf,
    #[serde(default)]
    pub log_blocks: Option<u32>,
    #[serde(default = "yes")]
    pub inplace_first_write: bool,
    #[serde(default = "four")]
    pub set_size: u32,
    #[serde(default = "two")]
    pub logs_per_set: u32,
}

fn yes() -> bool {
    true
}

fn four() -> u32 {
    4
}

fn two() -> u32 {
    2
}

impl Default for SastParams {
    fn default() -> Self {
        SastParams {
            log_ratio: None,
            log_ratio_of: LogRatioOf::Total,
            log_blocks: None,
            inplace_first_write: true,
            set_size: four(),
            logs_per_set: two(),
        }
    }
}

pub struct Sast {
    engine: MergeEngine,
    params: SastParams,
    log_blocks: u32,
    /// Per set, its log blocks, oldest first (the last one may have room).
    logs: Vec<VecDeque<Pbn>>,
    /// Log blocks in the order they were taken, as (set, block); entries of blocks reclaimed
    /// since are skipped when met.
    taken: VecDeque<(u32, Pbn)>,
    in_use: u32,
    physical_blocks: u64,
}

impl Sast {
    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        Ok(Box::new(Sast::new(config)?))
    }

    fn new(config: &Config) -> Result<Self> {
        let params: SastParams = ftl_params(config, INFO.name)?;
        let log_blocks = log_block_count(config, params.log_ratio, params.log_ratio_of, params.log_blocks);
        check_log_area(config, INFO.name, log_blocks, 1)?;
        let sets = logical_blocks(config).div_ceil(params.set_size);
        Ok(Sast {
            engine: MergeEngine::new(config),
            log_blocks,
            logs: vec![VecDeque::new(); sets as usize],
            taken: VecDeque::new(),
            in_use: 0,
            physical_blocks: config.device.geometry.total_blocks() as u64,
            params,
        })
    }

    fn set_of(&self, lbn: u32) -> u32 {
        lbn / self.params.set_size
    }

    /// Reclaims one of `set`'s log blocks: full merges of the logical blocks it holds pages of.
    fn reclaim(&mut self, set: u32, block: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        let logs = &mut self.logs[set as usize];
        logs.remove(logs.iter().position(|&b| b == block).expect("a log block of the set"));
        self.in_use -= 1;
        self.engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))
    }

    fn adopt(&mut self, set: u32, block: Pbn) {
        self.logs[set as usize].push_back(block);
        self.in_use += 1;
        if self.taken.len() >= 2 * self.log_blocks as usize {
            let logs = &self.logs;
            self.taken.retain(|&(s, b)| logs[s as usize].contains(&b));
        }
        self.taken.push_back((set, block));
    }

    /// The log block of `set` with room for the next page.
    fn log_block(&mut self, set: u32, ctx: &mut FtlCtx) -> Result<Pbn> {
        let ppb = self.engine.pages_per_block();
        if let Some(&block) = self.logs[set as usize].back().filter(|&&b| ctx.flash.write_pointer(b) < ppb) {
            return Ok(block);
        }
        if self.logs[set as usize].len() >= self.params.logs_per_set as usize {
            let oldest = self.logs[set as usize][0];
            self.reclaim(set, oldest, ctx)?;
        }
        while self.in_use >= self.log_blocks {
            let (owner, block) = self.taken.pop_front().expect("log blocks in use are queued");
            if self.logs[owner as usize].contains(&block) {
                self.reclaim(owner, block, ctx)?;
            }
        }
        let block = self.engine.take_block()?;
        self.adopt(set, block);
        Ok(block)
    }
}

impl Ftl for Sast {
    fn name(&self) -> &'static str {
        INFO.name
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.engine.read(lpn, ctx)
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if self.params.inplace_first_write && self.engine.fits_in_place(lpn, ctx.flash) {
            return self.engine.write_in_place(lpn, version, ctx);
        }
        let (lbn, _) = self.engine.split(lpn);
        let block = self.log_block(self.set_of(lbn), ctx)?;
        let offset = ctx.flash.write_pointer(block);
        self.engine.write_log(block, offset, lpn, version, ctx)
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        self.engine.trim(lpn, ctx)
    }

    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        self.engine.newest(lpn, flash)
    }

    /// Rebuilds the maps from the spare areas; a recovered log block whose valid pages all
    /// belong to one set with room left rejoins it (unless a power loss cut a program in it:
    /// nothing is written after a corrupt page), any other is merged at once.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.logs.iter_mut().for_each(VecDeque::clear);
        self.taken.clear();
        self.in_use = 0;
        for block in self.engine.recover(ctx)? {
            let mut sets: Vec<u32> =
                self.engine.valid_lbns(block, ctx.flash).into_iter().map(|lbn| self.set_of(lbn)).collect();
            sets.dedup();
            match sets[..] {
                [set]
                    if self.logs[set as usize].len() < self.params.logs_per_set as usize
                        && self.in_use < self.log_blocks
                        && !ctx.flash.has_corrupt_page(block) =>
                {
                    self.adopt(set, block)
                }
                _ => self.engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))?,
            }
        }
        Ok(())
    }

    /// The block map and GC bits, each set's log-block table (4 B per log block it may own), the
    /// log page map (LPN and PPN, 8 B per log page) and the GC bits of the log pages.
    fn sram(&self) -> SramBreakdown {
        let log_pages = self.log_blocks as u64 * self.engine.pages_per_block() as u64;
        let mut sram = MergeEngine::block_map_sram(self.physical_blocks);
        sram.extend([
            SramItem {
                structure: "set log tables (4 B per log block a set may own)".into(),
                bytes: self.logs.len() as u64 * self.params.logs_per_set as u64 * 4,
            },
            SramItem { structure: "log page map (8 B per log page)".into(), bytes: log_pages * 8 },
            SramItem { structure: "GC log-page bitmap (1 bit per log page)".into(), bytes: log_pages.div_ceil(8) },
        ]);
        sram
    }

    fn state_bytes(&self) -> usize {
        self.engine.state_bytes() + self.logs.len() * 32 + self.in_use as usize * 4 + self.taken.len() * 8
    }

    /// Every valid page of a set's log block belongs to the set; no set holds more log blocks
    /// than its share.
    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.engine.check(flash)?;
        for (set, logs) in self.logs.iter().enumerate() {
            if logs.len() > self.params.logs_per_set as usize {
                return Err(format!(
                    "set {set} owns {} log blocks, more than {}",
                    logs.len(),
                    self.params.logs_per_set
                ));
            }
            for &block in logs {
                if let Some(lbn) =
                    self.engine.valid_lbns(block, flash).into_iter().find(|&l| self.set_of(l) != set as u32)
                {
                    return Err(format!("log block {block} of set {set} holds a valid page of logical block {lbn}"));
                }
            }
        }
        Ok(())
    }

    fn blocks(&self) -> &BlockManager {
        &self.engine.blocks
    }

    fn merge_stats(&self) -> Option<MergeStats> {
        Some(self.engine.stats)
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).expect("params serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::OpLog;
    use crate::metrics::CacheStats;

    /// 12 blocks of 4 pages exporting 6 logical blocks in sets of 2, at most 2 log blocks per set,
    /// 4 in all. Set 0 fills its two log blocks and reclaims its own oldest for a third; set 1's
    /// log block is untouched, and each merge touches only set 0's data blocks.
    #[test]
    fn a_set_reclaims_its_own_log_blocks() {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=12",
            "device.geometry.pages_per_block=4",
            "device.logical_pages=24",
            "gc.free_blocks_low=1",
            "ftl.sast.set_size=2",
            "ftl.sast.logs_per_set=2",
        ] {
            b = b.set(set).unwrap();
        }
        let config = b.build().unwrap();
        let mut sast = Sast::new(&config).unwrap();
        assert_eq!(sast.log_blocks, 4);
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for lpn in 0..24 {
            sast.write(lpn, 1, &mut ctx).unwrap();
        }
        sast.write(9, 2, &mut ctx).unwrap(); // set 1 (logical block 2)
        for lpn in [1, 5, 2, 6, 3, 7, 1, 5] {
            sast.write(lpn, 2, &mut ctx).unwrap(); // set 0: two full log blocks
            sast.check(ctx.flash).unwrap();
        }
        assert_eq!((sast.logs[0].len(), sast.logs[1].len()), (2, 1));
        assert_eq!(sast.engine.stats.log_merges, 0);
        sast.write(2, 3, &mut ctx).unwrap(); // a third log block for set 0: its oldest is merged
        sast.check(ctx.flash).unwrap();
        let s = sast.engine.stats;
        assert_eq!((s.log_merges, s.merged_data_blocks), (1, 2), "both data blocks of set 0");
        assert_eq!((sast.logs[0].len(), sast.logs[1].len()), (2, 1), "set 1 kept its log block");
    }
}
