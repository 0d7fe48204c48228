//! LAST (Lee, Shin, Kim and Kim, "LAST: locality-aware sector translation for NAND flash
//! memory-based storage systems", ACM SIGOPS OSR 42(6), 2008): the log area split by locality.
//! Writes of large requests (sequential locality) go to log blocks dedicated to one logical block
//! each, as BAST's, so a run that fills a block is switch-merged; writes of small requests go to
//! fully associative random log blocks, split into a hot and a cold partition: a page whose
//! newest copy is still in a log block (rewritten soon: temporal locality) goes to the hot
//! partition, whose blocks tend to die whole and are then reclaimed by one erase; the cold
//! partition's oldest block is full-merged otherwise. From the published description; the
//! choices it leaves open are ftlsim's (docs/architecture.md).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::bast::offset_bytes;
use super::common::dedicated::DedicatedLogs;
use super::common::hybrid::{LogBlockFtl, LogScheme};
use super::common::merge::{
    logical_blocks, spare_blocks_needed, LogAreaParams, MergeEngine, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO,
    LOG_RATIO_OF, NO_STREAMS,
};
use super::registry::{no_test_overrides, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Pbn, BASIC_LAYOUT};

pub const INFO: FtlInfo = FtlInfo {
    name: "last",
    description: "LAST: sequential writes to dedicated log blocks, random ones to hot and cold shared log blocks",
    family: Family::BlockMapped,
    build,
    params: ParamsSchema::of::<LastParams>(&[
        LOG_RATIO,
        LOG_RATIO_OF,
        LOG_BLOCKS,
        INPLACE_FIRST_WRITE,
        ParamSpec {
            name: "sequential_logs",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
            meaning: "log blocks of the sequential area (default: a quarter of (log blocks - 2), 1 to 4)",
            source: "LAST (Lee et al. 2008); the default is ftlsim's",
        },
        ParamSpec {
            name: "sequential_threshold",
            range: ParamRange::Integer { min: 0, max: u32::MAX as i64 },
            meaning: "a write request larger than this many bytes is sequential",
            source: "LAST (Lee et al. 2008): 4 KB",
        },
    ]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, MIN_LOG_BLOCKS),
    test_overrides: no_test_overrides,
};

/// One sequential log block, and a hot and a cold random one.
const MIN_LOG_BLOCKS: u32 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LastParams {
    #[serde(flatten)]
    pub log: LogAreaParams,
    #[serde(default)]
    pub sequential_logs: Option<u32>,
    #[serde(default = "four_kb")]
    pub sequential_threshold: u32,
}

fn four_kb() -> u32 {
    4096
}

impl Default for LastParams {
    fn default() -> Self {
        LastParams { log: LogAreaParams::default(), sequential_logs: None, sequential_threshold: four_kb() }
    }
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: LastParams = ftl_params(config, INFO.name)?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, Last::new(config, &p)?, &p)))
}

/// One partition of the random log area: the block being filled and the full ones, oldest first.
#[derive(Default)]
struct Partition {
    open: Option<Pbn>,
    full: VecDeque<Pbn>,
}

impl Partition {
    fn in_use(&self) -> usize {
        self.full.len() + self.open.is_some() as usize
    }
}

pub struct Last {
    inplace_first_write: bool,
    sequential_threshold: u64,
    log_blocks: u32,
    sequential: DedicatedLogs,
    random_limit: usize,
    hot: Partition,
    cold: Partition,
    /// Whether the request being served is sequential (`begin_request`).
    sequential_request: bool,
    page_size: u64,
}

impl Last {
    fn new(config: &Config, p: &LastParams) -> Result<Self> {
        let log_blocks = p.log.log_blocks(config, INFO.name, MIN_LOG_BLOCKS)?;
        let sequential = p.sequential_logs.unwrap_or_else(|| ((log_blocks - 2) / 4).clamp(1, 4));
        if sequential + 2 > log_blocks {
            return Err(SimError::config(
                "ftl.last.sequential_logs",
                format!("{sequential} of {log_blocks} log blocks leave fewer than 2 for the hot and cold random logs"),
            ));
        }
        Ok(Last {
            inplace_first_write: p.log.inplace_first_write,
            sequential_threshold: p.sequential_threshold as u64,
            log_blocks,
            sequential: DedicatedLogs::new(logical_blocks(config), sequential),
            random_limit: (log_blocks - sequential) as usize,
            hot: Partition::default(),
            cold: Partition::default(),
            sequential_request: false,
            page_size: config.device.geometry.page_size as u64,
        })
    }

    fn random_in_use(&self) -> usize {
        self.hot.in_use() + self.cold.in_use()
    }

    /// Writes a page to the random log area, to the hot partition if its newest copy is still in
    /// a log block.
    fn write_random(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let hot = engine.is_logged(lpn);
        let ppb = engine.pages_per_block();
        let open = if hot { self.hot.open } else { self.cold.open };
        let block = match open.filter(|&b| ctx.flash.write_pointer(b) < ppb) {
            Some(block) => block,
            None => {
                let part = if hot { &mut self.hot } else { &mut self.cold };
                if let Some(full) = part.open.take() {
                    part.full.push_back(full);
                }
                while self.random_in_use() >= self.random_limit {
                    self.reclaim_random(engine, ctx)?;
                }
                let block = engine.take_block()?;
                if hot { &mut self.hot } else { &mut self.cold }.open = Some(block);
                block
            }
        };
        let offset = ctx.flash.write_pointer(block);
        engine.write_log(block, offset, lpn, version, ctx)
    }

    /// Reclaims a random log block: a dead block of the hot partition (one erase), else the
    /// oldest of the cold partition, else the oldest hot one.
    fn reclaim_random(&mut self, engine: &mut MergeEngine, ctx: &mut FtlCtx) -> Result<()> {
        let dead = self.hot.full.iter().position(|&b| engine.blocks.valid_count(b, ctx.flash) == 0);
        let victim = match dead {
            Some(i) => self.hot.full.remove(i),
            None => self.cold.full.pop_front().or_else(|| self.hot.full.pop_front()),
        }
        .expect("a full random log block exists while the random area is at its limit");
        let sequential = &mut self.sequential;
        engine.reclaim_log(victim, ctx, |engine, lbn, ctx| {
            engine.full_merge(lbn, None, ctx)?;
            // The merge took the pages of the block's sequential log block too.
            sequential.drop_emptied(engine, lbn, ctx)
        })
    }
}

impl LogScheme for Last {
    fn begin_request(&mut self, _first: Lpn, pages: u32) {
        self.sequential_request = pages as u64 * self.page_size > self.sequential_threshold;
    }

    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if self.inplace_first_write && engine.fits_in_place(lpn, ctx.flash) {
            return engine.write_in_place(lpn, version, ctx);
        }
        if !self.sequential_request {
            return self.write_random(engine, lpn, version, ctx);
        }
        let (lbn, _) = engine.split(lpn);
        let log = self.sequential.block_for(engine, lbn, ctx)?;
        let offset = ctx.flash.write_pointer(log);
        engine.write_log(log, offset, lpn, version, ctx)
    }

    /// Every recovered log block joins the cold partition (nothing on flash tells the partitions
    /// apart), reclaimed in block order until the random area is back within its share.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()> {
        self.sequential.clear();
        self.hot = Partition::default();
        self.cold = Partition { open: None, full: logs.into() };
        while self.random_in_use() >= self.random_limit {
            self.reclaim_random(engine, ctx)?;
        }
        Ok(())
    }

    /// The sequential logs' table (LBN and PBN) and page offsets, as BAST's; the random logs'
    /// page map (LPN and PPN, 8 B per log page) as FAST's; the GC bits of all log pages.
    fn sram(&self, ppb: u64) -> Vec<SramItem> {
        let sequential = self.log_blocks as u64 - self.random_limit as u64;
        vec![
            SramItem { structure: "sequential log table (8 B per log block)".into(), bytes: sequential * 8 },
            SramItem { structure: "sequential log page offsets".into(), bytes: sequential * ppb * offset_bytes(ppb) },
            SramItem {
                structure: "random log page map (8 B per log page)".into(),
                bytes: self.random_limit as u64 * ppb * 8,
            },
            SramItem {
                structure: "GC log-page bitmap (1 bit per log page)".into(),
                bytes: (self.log_blocks as u64 * ppb).div_ceil(8),
            },
        ]
    }

    fn state_bytes(&self) -> usize {
        self.sequential.state_bytes() + self.random_in_use() * 4
    }

    fn check(&self, engine: &MergeEngine, flash: &FlashArray) -> std::result::Result<(), String> {
        self.sequential.check(engine, flash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, OpLog, Purpose};
    use crate::metrics::CacheStats;

    /// 9 blocks of 4 pages of 2 KB exporting 4 logical blocks: 1 sequential log block, 2 random
    /// ones and the merge reserve. A run of 4 pages goes to a sequential log block and ends in a
    /// switch merge; a 2 KB write is random and cold; rewritten while its copy is in a log block
    /// it is hot.
    #[test]
    fn sequential_runs_and_random_writes_go_to_their_own_logs() {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=9",
            "device.geometry.pages_per_block=4",
            "device.geometry.page_size=2048",
            "device.logical_pages=16",
            "gc.free_blocks_low=1",
        ] {
            b = b.set(set).unwrap();
        }
        let config = b.build().unwrap();
        let p = LastParams::default();
        let mut last = LogBlockFtl::new(&config, INFO.name, Last::new(&config, &p).unwrap(), &p);
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let request = |last: &mut LogBlockFtl<Last>, first: Lpn, pages: u32, version: u32, ctx: &mut FtlCtx| {
            last.begin_request(first, pages);
            for lpn in Lpn::range(first.get(), first.get() + pages) {
                last.write(lpn, version, ctx).unwrap();
            }
            last.check(ctx.flash).unwrap();
        };
        request(&mut last, Lpn::new(0), 16, 1, &mut ctx); // the fill: every first write in place
        request(&mut last, Lpn::new(4), 3, 2, &mut ctx); // 6 KB: sequential
        request(&mut last, Lpn::new(9), 1, 2, &mut ctx); // 2 KB: random, cold
        request(&mut last, Lpn::new(9), 1, 3, &mut ctx); // rewritten while in a log block: hot
        request(&mut last, Lpn::new(7), 1, 2, &mut ctx); // random, cold (its old copy is in the data block)
        request(&mut last, Lpn::new(8), 2, 3, &mut ctx); // 4 KB is not larger than the threshold: random
        let (last, flash) = (&last.scheme, &*ctx.flash);
        let seq = last.sequential.log_of(1).expect("logical block 1 has a sequential log block");
        let lpns = |b: Pbn, n: u32| -> Vec<u32> {
            flash.geometry().pages_below(b, n).map(|p| flash.spare_unchecked(p).logical).collect()
        };
        assert_eq!(lpns(seq, 3), vec![4, 5, 6]);
        assert_eq!(lpns(last.cold.open.unwrap(), 3), vec![9, 7, 8]);
        assert_eq!(lpns(last.hot.open.unwrap(), 2), vec![9, 9], "LPN 9's copy in the hot block is in a log block too");
        assert_eq!(ctx.ops.count(OpKind::Erase, Purpose::Gc), 0);
    }
}
