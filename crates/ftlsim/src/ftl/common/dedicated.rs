//! Log blocks dedicated to one logical block each (BAST's log blocks, LAST's sequential log
//! blocks): which logical block owns which log block, in the order they were taken, and the
//! merges that free them. A page is appended at the log block's write pointer, whatever its
//! offset; a full log block is merged on its block's next write, and when every log block is
//! taken the oldest is merged to free one ([`MergeEngine::merge_dedicated`] picks switch,
//! partial or full).

use std::collections::VecDeque;

use super::merge::MergeEngine;
use crate::error::Result;
use crate::flash::{FlashArray, Pbn, PbnSlot};
use crate::ftl::FtlCtx;

pub struct DedicatedLogs {
    limit: u32,
    /// Logical block -> its log block.
    log_of: Vec<PbnSlot>,
    /// Log blocks in the order they were taken, as (logical block, log block); entries whose
    /// log block was merged since are skipped when met.
    taken: VecDeque<(u32, Pbn)>,
    in_use: u32,
}

impl DedicatedLogs {
    /// At most `limit` log blocks for `logical_blocks` logical blocks.
    pub fn new(logical_blocks: u32, limit: u32) -> Self {
        DedicatedLogs {
            limit,
            log_of: vec![PbnSlot::EMPTY; logical_blocks as usize],
            taken: VecDeque::new(),
            in_use: 0,
        }
    }

    pub fn log_of(&self, lbn: u32) -> Option<Pbn> {
        self.log_of[lbn as usize].get()
    }

    pub fn in_use(&self) -> u32 {
        self.in_use
    }

    /// Merges `lbn`'s log block into its data block and frees the association.
    pub fn merge(&mut self, engine: &mut MergeEngine, lbn: u32, ctx: &mut FtlCtx) -> Result<()> {
        let log = self.log_of[lbn as usize].take().expect("merged logical blocks own a log block");
        self.in_use -= 1;
        engine.merge_dedicated(lbn, log, ctx)
    }

    /// A log block of `lbn` with room for one more page: its own, merging it first if full, or a
    /// fresh one, merging the oldest log block first if all are taken.
    pub fn block_for(&mut self, engine: &mut MergeEngine, lbn: u32, ctx: &mut FtlCtx) -> Result<Pbn> {
        if let Some(log) = self.log_of(lbn) {
            if ctx.flash.write_pointer(log) < engine.pages_per_block() {
                return Ok(log);
            }
            self.merge(engine, lbn, ctx)?;
        }
        while self.in_use >= self.limit {
            let (oldest, log) = self.taken.pop_front().expect("log blocks in use are queued");
            if self.log_of[oldest as usize].get() == Some(log) {
                self.merge(engine, oldest, ctx)?;
            }
        }
        let log = engine.take_block()?;
        self.adopt(lbn, log);
        Ok(log)
    }

    /// After a merge elsewhere took every page of `lbn` (a full merge of a shared log block's
    /// victim), frees `lbn`'s log block, which holds no valid page any more.
    pub fn drop_emptied(&mut self, engine: &mut MergeEngine, lbn: u32, ctx: &mut FtlCtx) -> Result<()> {
        let Some(log) = self.log_of(lbn) else { return Ok(()) };
        debug_assert_eq!(engine.blocks.valid_count(log, ctx.flash), 0);
        self.log_of[lbn as usize] = PbnSlot::EMPTY;
        self.in_use -= 1;
        engine.reclaim(log, ctx)
    }

    /// Makes `log` the log block of `lbn`.
    pub fn adopt(&mut self, lbn: u32, log: Pbn) {
        debug_assert!(self.log_of(lbn).is_none() && self.in_use < self.limit);
        self.log_of[lbn as usize] = Some(log).into();
        self.in_use += 1;
        if self.taken.len() >= 2 * self.limit as usize {
            let log_of = &self.log_of;
            self.taken.retain(|&(l, b)| log_of[l as usize].get() == Some(b));
        }
        self.taken.push_back((lbn, log));
    }

    /// Whether a recovered log block can be adopted by `lbn` (free association, room left).
    pub fn can_adopt(&self, lbn: u32) -> bool {
        self.log_of(lbn).is_none() && self.in_use < self.limit
    }

    /// Forgets every association (power loss).
    pub fn clear(&mut self) {
        self.log_of.fill(PbnSlot::EMPTY);
        self.taken.clear();
        self.in_use = 0;
    }

    /// Every valid page of a log block belongs to its logical block.
    pub fn check(&self, engine: &MergeEngine, flash: &FlashArray) -> std::result::Result<(), String> {
        for (lbn, log) in self.log_of.iter().enumerate() {
            let Some(log) = log.get() else { continue };
            if let Some(other) = engine.valid_lbns(log, flash).into_iter().find(|&l| l != lbn as u32) {
                return Err(format!(
                    "log block {log} of logical block {lbn} holds a valid page of logical block {other}"
                ));
            }
        }
        Ok(())
    }

    /// Simulator memory.
    pub fn state_bytes(&self) -> usize {
        self.log_of.len() * std::mem::size_of::<PbnSlot>() + self.taken.len() * std::mem::size_of::<(u32, Pbn)>()
    }
}
