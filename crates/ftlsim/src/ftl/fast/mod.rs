//! FAST (Lee et al., 2007): fully associative log blocks. Data blocks are block-mapped; a log
//! page may hold any logical page. One sequential-write (SW) log block takes runs that start at
//! a block's offset 0 and is switch- or partial-merged; the random-write (RW) log blocks are
//! filled one after another and, when none is free, the oldest full one is reclaimed by full
//! merges of every data block it holds pages of. FAST-SC (paper 003, `sc.rs`) chooses that victim
//! by second chance instead; KAST (`kast.rs`) caps the data blocks an RW block may hold pages of.
//! Spec: ../shared/specs/tpftl-fast-cpm.md B.2, B.7.

pub mod kast;
mod queue;
pub mod sc;

pub use queue::{LogQueue, ScMode, Selection};

use serde::{Deserialize, Serialize};

use super::common::hybrid::{LogBlockFtl, LogScheme};
use super::common::merge::{
    spare_blocks_needed, LogAreaParams, MergeEngine, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF,
    NO_STREAMS,
};
use super::registry::{no_test_overrides, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Pbn, BASIC_LAYOUT};

pub const INFO: FtlInfo = FtlInfo {
    name: "fast",
    description: "FAST: block-mapped data blocks, fully associative log blocks, FIFO victims",
    family: Family::BlockMapped,
    build,
    params: ParamsSchema::of::<FastParams>(&[LOG_RATIO, LOG_RATIO_OF, LOG_BLOCKS, INPLACE_FIRST_WRITE, FAST_SW_LOG]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: |c| spare_blocks_needed(c, min_log_blocks(true)),
    test_overrides: no_test_overrides,
};

pub const FAST_SW_LOG: ParamSpec = ParamSpec {
    name: "fast_sw_log",
    range: ParamRange::Flag,
    meaning: "keep one sequential-write log block for runs starting at offset 0 (off: every log block is random-write)",
    source: "FAST (Lee et al. 2007); paper 003 does not mention it (spec B.7 F1)",
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FastParams {
    #[serde(flatten)]
    pub log: LogAreaParams,
    #[serde(default = "yes")]
    pub fast_sw_log: bool,
}

fn yes() -> bool {
    true
}

impl Default for FastParams {
    fn default() -> Self {
        FastParams { log: LogAreaParams::default(), fast_sw_log: true }
    }
}

/// The fewest log blocks FAST runs with: an RW block, and the SW block if there is one.
fn min_log_blocks(sw_log: bool) -> u32 {
    1 + sw_log as u32
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: FastParams = ftl_params(config, INFO.name)?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, Fast::new(config, INFO.name, &p, Selection::Fifo, None)?, &p)))
}

/// An RW log block with free pages, and (under an associativity cap) the logical blocks it has
/// received pages of.
#[derive(Debug, Clone)]
struct OpenLog {
    block: Pbn,
    lbns: Vec<u32>,
}

/// The SW log block and the logical block whose run it holds.
#[derive(Debug, Clone, Copy)]
struct SwLog {
    block: Pbn,
    lbn: u32,
}

pub struct Fast {
    log_blocks: u32,
    inplace_first_write: bool,
    sw_log: bool,
    sw: Option<SwLog>,
    /// RW log blocks with free pages, oldest first: FAST fills one at a time; KAST keeps several
    /// so that each holds pages of at most `max_associativity` logical blocks.
    open: Vec<OpenLog>,
    max_associativity: Option<u32>,
    /// Full RW log blocks, the candidates for reclaiming.
    full: LogQueue,
}

impl Fast {
    fn new(
        config: &Config,
        name: &str,
        p: &FastParams,
        selection: Selection,
        max_associativity: Option<u32>,
    ) -> Result<Self> {
        Ok(Fast {
            log_blocks: p.log.log_blocks(config, name, min_log_blocks(p.fast_sw_log))?,
            inplace_first_write: p.log.inplace_first_write,
            sw_log: p.fast_sw_log,
            sw: None,
            open: Vec::new(),
            max_associativity,
            full: LogQueue::new(selection),
        })
    }

    /// RW log blocks allowed, the ones being filled included.
    fn rw_limit(&self) -> usize {
        (self.log_blocks - self.sw_log as u32) as usize
    }

    /// RW log blocks in use, full or not.
    fn rw_in_use(&self) -> usize {
        self.full.len() + self.open.len()
    }

    /// Ends the SW log block's run: a switch merge if it is complete, a partial merge otherwise
    /// ([`MergeEngine::merge_dedicated`]).
    fn merge_sw(&mut self, engine: &mut MergeEngine, ctx: &mut FtlCtx) -> Result<()> {
        let Some(sw) = self.sw.take() else { return Ok(()) };
        engine.merge_dedicated(sw.lbn, sw.block, ctx)
    }

    /// The open RW log block a page of `lbn` may go to: FAST's one block being filled; under
    /// KAST's cap, a block that already holds pages of `lbn`, else the one holding the fewest
    /// logical blocks if that is below the cap.
    fn open_for(&self, lbn: u32) -> Option<usize> {
        let Some(k) = self.max_associativity else { return (!self.open.is_empty()).then_some(0) };
        self.open.iter().position(|o| o.lbns.contains(&lbn)).or_else(|| {
            let (i, o) = self.open.iter().enumerate().min_by_key(|(_, o)| o.lbns.len())?;
            (o.lbns.len() < k as usize).then_some(i)
        })
    }

    /// The open RW log block for the next page of `lbn`, opening one (and reclaiming victims
    /// while the RW area is at its limit) when none can take it.
    fn rw_block(&mut self, engine: &mut MergeEngine, lbn: u32, ctx: &mut FtlCtx) -> Result<usize> {
        if let Some(i) = self.open_for(lbn) {
            return Ok(i);
        }
        let sw = self.sw.is_some() as usize;
        while self.rw_in_use() >= self.rw_limit() || self.rw_in_use() + sw >= self.log_blocks as usize {
            self.reclaim_victim(engine, ctx)?;
        }
        let block = engine.take_block()?;
        self.open.push(OpenLog { block, lbns: Vec::new() });
        Ok(self.open.len() - 1)
    }

    /// Writes a page to the random-write log area.
    fn write_random(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let (lbn, _) = engine.split(lpn);
        let i = self.rw_block(engine, lbn, ctx)?;
        let block = self.open[i].block;
        let offset = ctx.flash.write_pointer(block);
        engine.write_log(block, offset, lpn, version, ctx)?;
        if self.max_associativity.is_some() && !self.open[i].lbns.contains(&lbn) {
            self.open[i].lbns.push(lbn);
        }
        if offset + 1 == engine.pages_per_block() {
            self.open.remove(i);
            self.full.push(block);
        }
        Ok(())
    }

    /// A fresh SW log block (after a recovery the RW blocks may fill the whole log area).
    fn sw_block(&mut self, engine: &mut MergeEngine, ctx: &mut FtlCtx) -> Result<Pbn> {
        while self.rw_in_use() >= self.log_blocks as usize {
            self.reclaim_victim(engine, ctx)?;
        }
        engine.take_block()
    }

    /// Reclaims a full RW log block chosen by the victim policy or, when none is full (KAST with
    /// every log block open), the oldest open one.
    fn reclaim_victim(&mut self, engine: &mut MergeEngine, ctx: &mut FtlCtx) -> Result<()> {
        let flash = &*ctx.flash;
        let victim = match self.full.select(|b| engine.blocks.valid_count(b, flash)) {
            Some((victim, skips)) => {
                engine.stats.second_chance_skips += skips;
                victim
            }
            None => self.open.remove(0).block,
        };
        let sw = &mut self.sw;
        engine.reclaim_log(victim, ctx, |engine, lbn, ctx| {
            engine.full_merge(lbn, None, ctx)?;
            // The full merge took the SW block's pages of that logical block: it is empty now.
            if let Some(run) = sw.take_if(|run| run.lbn == lbn) {
                engine.reclaim(run.block, ctx)?;
            }
            Ok(())
        })
    }
}

impl LogScheme for Fast {
    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let (lbn, offset) = engine.split(lpn);
        if self.inplace_first_write && engine.fits_in_place(lpn, ctx.flash) {
            return engine.write_in_place(lpn, version, ctx);
        }
        if self.sw_log && offset == 0 {
            self.merge_sw(engine, ctx)?;
            let block = self.sw_block(engine, ctx)?;
            self.sw = Some(SwLog { block, lbn });
            engine.write_log(block, 0, lpn, version, ctx)?;
        } else if let Some(sw) = self.sw.filter(|sw| sw.lbn == lbn && ctx.flash.write_pointer(sw.block) == offset) {
            engine.write_log(sw.block, offset, lpn, version, ctx)?;
        } else {
            return self.write_random(engine, lpn, version, ctx);
        }
        if self.sw.is_some_and(|sw| ctx.flash.write_pointer(sw.block) == engine.pages_per_block()) {
            self.merge_sw(engine, ctx)?;
        }
        Ok(())
    }

    /// Every block left with log pages joins the RW queue, in block order (nothing on flash says
    /// which was filled first), and is reclaimed in turn while the RW area is over its limit (a
    /// power loss in a merge can leave a block more), so that the merge reserve is free again.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()> {
        self.sw = None;
        self.open.clear();
        self.full.clear();
        for block in logs {
            self.full.push(block);
        }
        while self.full.len() >= self.rw_limit() {
            self.reclaim_victim(engine, ctx)?;
        }
        Ok(())
    }

    /// Paper 000 Table 5.3: the log blocks' page map (LPN and PPN, 8 B per log page) and the GC
    /// bits of the log pages.
    fn sram(&self, pages_per_block: u64) -> Vec<SramItem> {
        let log_pages = self.log_blocks as u64 * pages_per_block;
        vec![
            SramItem { structure: "log page map (8 B per log page)".into(), bytes: log_pages * 8 },
            SramItem { structure: "GC log-page bitmap (1 bit per log page)".into(), bytes: log_pages.div_ceil(8) },
        ]
    }

    fn state_bytes(&self) -> usize {
        let open: usize = self.open.iter().map(|o| 8 + o.lbns.len() * 4).sum();
        self.full.len() * 8 + open
    }

    /// The SW block holds its run in order; under KAST no RW block holds pages of more than K
    /// logical blocks.
    fn check(&self, engine: &MergeEngine, flash: &FlashArray) -> std::result::Result<(), String> {
        if let Some(sw) = self.sw {
            if !engine.is_in_order(sw.lbn, sw.block, flash) {
                return Err(format!("SW log block {} holds a page out of its run", sw.block));
            }
        }
        let Some(k) = self.max_associativity else { return Ok(()) };
        let ppb = engine.pages_per_block();
        for block in self.open.iter().map(|o| o.block).chain(self.full.blocks()) {
            let mut lbns: Vec<u32> = flash
                .geometry()
                .pages_below(block, flash.write_pointer(block))
                .filter(|&p| flash.is_programmed(p) && !flash.is_corrupt(p))
                .map(|p| flash.spare_unchecked(p).logical / ppb)
                .collect();
            lbns.sort_unstable();
            lbns.dedup();
            if lbns.len() > k as usize {
                return Err(format!(
                    "log block {block} holds pages of {} logical blocks, more than K = {k}",
                    lbns.len()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
