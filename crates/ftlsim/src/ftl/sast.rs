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

use super::common::hybrid::{LogBlockFtl, LogScheme};
use super::common::merge::{
    logical_blocks, spare_blocks_needed, LogAreaParams, MergeEngine, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO,
    LOG_RATIO_OF, NO_STREAMS,
};
use super::registry::{no_test_overrides, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Pbn, BASIC_LAYOUT};

pub const INFO: FtlInfo = FtlInfo {
    name: "sast",
    description: "SAST: sets of consecutive data blocks, each with its own shared log blocks",
    family: Family::BlockMapped,
    build,
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
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, 1),
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SastParams {
    #[serde(flatten)]
    pub log: LogAreaParams,
    #[serde(default = "four")]
    pub set_size: u32,
    #[serde(default = "two")]
    pub logs_per_set: u32,
}

fn four() -> u32 {
    4
}

fn two() -> u32 {
    2
}

impl Default for SastParams {
    fn default() -> Self {
        SastParams { log: LogAreaParams::default(), set_size: four(), logs_per_set: two() }
    }
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: SastParams = ftl_params(config, INFO.name)?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, Sast::new(config, &p)?, &p)))
}

pub struct Sast {
    inplace_first_write: bool,
    set_size: u32,
    logs_per_set: u32,
    log_blocks: u32,
    /// Per set, its log blocks, oldest first (the last one may have room).
    logs: Vec<VecDeque<Pbn>>,
    /// Log blocks in the order they were taken, as (set, block); entries of blocks reclaimed
    /// since are skipped when met.
    taken: VecDeque<(u32, Pbn)>,
    in_use: u32,
}

impl Sast {
    fn new(config: &Config, p: &SastParams) -> Result<Self> {
        let log_blocks = p.log.log_blocks(config, INFO.name, 1)?;
        Ok(Sast {
            inplace_first_write: p.log.inplace_first_write,
            set_size: p.set_size,
            logs_per_set: p.logs_per_set,
            log_blocks,
            logs: vec![VecDeque::new(); logical_blocks(config).div_ceil(p.set_size) as usize],
            taken: VecDeque::new(),
            in_use: 0,
        })
    }

    fn set_of(&self, lbn: u32) -> u32 {
        lbn / self.set_size
    }

    /// Reclaims one of `set`'s log blocks: full merges of the logical blocks it holds pages of.
    fn reclaim(&mut self, engine: &mut MergeEngine, set: u32, block: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        let logs = &mut self.logs[set as usize];
        logs.remove(logs.iter().position(|&b| b == block).expect("a log block of the set"));
        self.in_use -= 1;
        engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))
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
    fn log_block(&mut self, engine: &mut MergeEngine, set: u32, ctx: &mut FtlCtx) -> Result<Pbn> {
        let ppb = engine.pages_per_block();
        if let Some(&block) = self.logs[set as usize].back().filter(|&&b| ctx.flash.write_pointer(b) < ppb) {
            return Ok(block);
        }
        if self.logs[set as usize].len() >= self.logs_per_set as usize {
            let oldest = self.logs[set as usize][0];
            self.reclaim(engine, set, oldest, ctx)?;
        }
        while self.in_use >= self.log_blocks {
            let (owner, block) = self.taken.pop_front().expect("log blocks in use are queued");
            if self.logs[owner as usize].contains(&block) {
                self.reclaim(engine, owner, block, ctx)?;
            }
        }
        let block = engine.take_block()?;
        self.adopt(set, block);
        Ok(block)
    }
}

impl LogScheme for Sast {
    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if self.inplace_first_write && engine.fits_in_place(lpn, ctx.flash) {
            return engine.write_in_place(lpn, version, ctx);
        }
        let (lbn, _) = engine.split(lpn);
        let block = self.log_block(engine, self.set_of(lbn), ctx)?;
        let offset = ctx.flash.write_pointer(block);
        engine.write_log(block, offset, lpn, version, ctx)
    }

    /// A recovered log block whose valid pages all belong to one set with room left rejoins it
    /// (unless a power loss cut a program in it: nothing is written after a corrupt page); any
    /// other is merged at once.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()> {
        self.logs.iter_mut().for_each(VecDeque::clear);
        self.taken.clear();
        self.in_use = 0;
        for block in logs {
            let mut sets: Vec<u32> = engine.valid_lbns(block, ctx.flash).into_iter().map(|l| self.set_of(l)).collect();
            sets.dedup();
            match sets[..] {
                [set]
                    if self.logs[set as usize].len() < self.logs_per_set as usize
                        && self.in_use < self.log_blocks
                        && !ctx.flash.has_corrupt_page(block) =>
                {
                    self.adopt(set, block)
                }
                _ => engine.reclaim_log(block, ctx, |engine, lbn, ctx| engine.full_merge(lbn, None, ctx))?,
            }
        }
        Ok(())
    }

    /// Each set's log-block table (4 B per log block it may own), the log page map (LPN and
    /// PPN, 8 B per log page) and the GC bits of the log pages.
    fn sram(&self, pages_per_block: u64) -> Vec<SramItem> {
        let log_pages = self.log_blocks as u64 * pages_per_block;
        vec![
            SramItem {
                structure: "set log tables (4 B per log block a set may own)".into(),
                bytes: self.logs.len() as u64 * self.logs_per_set as u64 * 4,
            },
            SramItem { structure: "log page map (8 B per log page)".into(), bytes: log_pages * 8 },
            SramItem { structure: "GC log-page bitmap (1 bit per log page)".into(), bytes: log_pages.div_ceil(8) },
        ]
    }

    fn state_bytes(&self) -> usize {
        self.logs.len() * 32 + self.in_use as usize * 4 + self.taken.len() * 8
    }

    /// Every valid page of a set's log block belongs to the set; no set holds more log blocks
    /// than its share.
    fn check(&self, engine: &MergeEngine, flash: &FlashArray) -> std::result::Result<(), String> {
        for (set, logs) in self.logs.iter().enumerate() {
            if logs.len() > self.logs_per_set as usize {
                return Err(format!("set {set} owns {} log blocks, more than {}", logs.len(), self.logs_per_set));
            }
            for &block in logs {
                if let Some(lbn) = engine.valid_lbns(block, flash).into_iter().find(|&l| self.set_of(l) != set as u32) {
                    return Err(format!("log block {block} of set {set} holds a valid page of logical block {lbn}"));
                }
            }
        }
        Ok(())
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
        let p: SastParams = ftl_params(&config, INFO.name).unwrap();
        let mut sast = LogBlockFtl::new(&config, INFO.name, Sast::new(&config, &p).unwrap(), &p);
        assert_eq!(sast.scheme.log_blocks, 4);
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for lpn in 0..24 {
            sast.write(Lpn::new(lpn), 1, &mut ctx).unwrap();
        }
        sast.write(Lpn::new(9), 2, &mut ctx).unwrap(); // set 1 (logical block 2)
        for lpn in [1, 5, 2, 6, 3, 7, 1, 5] {
            sast.write(Lpn::new(lpn), 2, &mut ctx).unwrap(); // set 0: two full log blocks
            sast.check(ctx.flash).unwrap();
        }
        assert_eq!((sast.scheme.logs[0].len(), sast.scheme.logs[1].len()), (2, 1));
        assert_eq!(sast.engine.stats.log_merges, 0);
        sast.write(Lpn::new(2), 3, &mut ctx).unwrap(); // a third log block for set 0: its oldest is merged
        sast.check(ctx.flash).unwrap();
        let s = sast.engine.stats;
        assert_eq!((s.log_merges, s.merged_data_blocks), (1, 2), "both data blocks of set 0");
        assert_eq!((sast.scheme.logs[0].len(), sast.scheme.logs[1].len()), (2, 1), "set 1 kept its log block");
    }
}
