//! The [`Ftl`] of every block-mapped and log-block scheme: the [`MergeEngine`] serves reads,
//! trims, lookups, recovery of the maps, the shared SRAM and checks; the scheme ([`LogScheme`])
//! decides where a write goes, which log block to merge, and what to do with the log blocks a
//! recovery found. A new scheme of this family is a `LogScheme` and a registry entry.

use serde::Serialize;

use super::merge::MergeEngine;
use super::BlockManager;
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, Pbn, Ppn};
use crate::ftl::{Ftl, FtlCtx, SramBreakdown, SramItem};
use crate::metrics::MergeStats;

/// What a block-mapped or log-block scheme decides.
pub trait LogScheme: Send {
    /// A host request whose pages follow (LAST tells sequential from random requests by size).
    fn begin_request(&mut self, _first: Lpn, _pages: u32) {}

    /// Places a host write, merging what must be merged first.
    fn write(&mut self, engine: &mut MergeEngine, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()>;

    /// After a power loss, once the engine has rebuilt the maps ([`MergeEngine::recover`]):
    /// forgets the scheme's SRAM state and adopts or merges `logs`, the blocks left holding log
    /// pages.
    fn recover(&mut self, engine: &mut MergeEngine, logs: Vec<Pbn>, ctx: &mut FtlCtx) -> Result<()>;

    /// SRAM beyond the block map and its GC bits.
    fn sram(&self, pages_per_block: u64) -> Vec<SramItem>;

    /// Simulator memory of the scheme's own state.
    fn state_bytes(&self) -> usize;

    /// Checks beyond the engine's.
    fn check(&self, _engine: &MergeEngine, _flash: &FlashArray) -> std::result::Result<(), String> {
        Ok(())
    }
}

pub struct LogBlockFtl<S> {
    name: &'static str,
    pub(crate) engine: MergeEngine,
    pub(crate) scheme: S,
    params: serde_json::Value,
    physical_blocks: u64,
}

impl<S: LogScheme> LogBlockFtl<S> {
    pub fn new(config: &Config, name: &'static str, scheme: S, params: &impl Serialize) -> Self {
        LogBlockFtl {
            name,
            engine: MergeEngine::new(config),
            scheme,
            params: serde_json::to_value(params).expect("params serialise"),
            physical_blocks: config.device.geometry.total_blocks() as u64,
        }
    }
}

impl<S: LogScheme + 'static> Ftl for LogBlockFtl<S> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn begin_request(&mut self, first: Lpn, pages: u32) {
        self.scheme.begin_request(first, pages);
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.engine.read(lpn, ctx)
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        self.scheme.write(&mut self.engine, lpn, version, ctx)
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        self.engine.invalidate(lpn, ctx.flash)
    }

    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        self.engine.newest(lpn, flash)
    }

    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        let logs = self.engine.recover(ctx)?;
        self.scheme.recover(&mut self.engine, logs, ctx)
    }

    /// The block map and its GC bits (paper 000 Table 5.3), then the scheme's structures.
    fn sram(&self) -> SramBreakdown {
        let mut sram = MergeEngine::block_map_sram(self.physical_blocks);
        sram.extend(self.scheme.sram(self.engine.pages_per_block() as u64));
        sram
    }

    fn state_bytes(&self) -> usize {
        self.engine.state_bytes() + self.scheme.state_bytes()
    }

    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.engine.check(flash)?;
        self.scheme.check(&self.engine, flash)
    }

    fn blocks(&self) -> &BlockManager {
        &self.engine.blocks
    }

    fn merge_stats(&self) -> Option<MergeStats> {
        Some(self.engine.stats)
    }

    fn params(&self) -> serde_json::Value {
        self.params.clone()
    }
}
