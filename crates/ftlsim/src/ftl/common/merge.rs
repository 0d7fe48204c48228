//! The shared machinery of block-mapped and log-block FTLs (BFTL, BAST, FAST, FAST-SC): a block
//! map (logical block -> data block, each page at its own offset), a log-page map (LPN -> its
//! newest copy in a log block), and the merges that fold log pages back into data blocks, written
//! once for every scheme:
//!
//! - **switch**: a log block holding every page of one logical block at its own offset becomes
//!   the data block; the old data block is erased (no copy);
//! - **partial**: a log block holding the first `k` pages in order gets the newest copies of the
//!   other pages at their offsets, then switches;
//! - **full**: the newest copy of every page of a logical block goes to a fresh block at its
//!   offset; the old data block is erased (a log block is erased by its scheme once every page
//!   in it is invalid).
//!
//! Every merge copy is a read and a program tagged [`Purpose::Gc`], every erase too; blocks
//! erased by merges count as GC victims and their copies as moved pages, so the shared metrics
//! (write amplification, valid page move rate, erase counts) read as for page-mapped schemes.
//! The schemes decide which log block to write and which to reclaim.
//!
//! Blocks come whole from the block manager's free pool ([`BlockManager::take_block`]), round
//! robin over its allocation units. The map needs [`MERGE_RESERVE`] free blocks beyond the data
//! and log blocks: one destination of a full merge, and one so that a power loss in the middle
//! of a merge (its destination and its source both written) still leaves a free block.

use serde::{Deserialize, Serialize};

use super::{BlockManager, StreamSpec};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{BlockState, FlashArray, Lpn, PageKind, Pbn, PbnSlot, Ppn, Purpose, Spare};
use crate::ftl::registry::{ParamRange, ParamSpec};
use crate::ftl::{FtlCtx, SramItem};
use crate::metrics::MergeStats;

/// Free blocks a block map keeps beyond its data and log blocks (see the module comment).
pub const MERGE_RESERVE: u32 = 2;

/// What the log-block ratio is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LogRatioOf {
    /// All blocks of the device (paper 003: "of the total NAND blocks").
    #[default]
    Total,
    /// The data blocks (the logical blocks the host addresses).
    Data,
}

/// The parameters that size the log area, shared by the log-block schemes.
pub const LOG_RATIO: ParamSpec = ParamSpec {
    name: "log_ratio",
    range: ParamRange::Number { min: 0.0, max: 0.9 },
    meaning:
        "log blocks as a share of the blocks named by log_ratio_of (default: every spare block but the merge reserve)",
    source: "paper 000 Table 5.3 (3% log blocks); paper 003 Fig. 1 sweeps 1-9%",
};
pub const LOG_RATIO_OF: ParamSpec = ParamSpec {
    name: "log_ratio_of",
    range: ParamRange::OneOf(&["total", "data"]),
    meaning: "log_ratio is a share of all blocks of the device, or of the data blocks",
    source: "paper 003 section 4 (of the total NAND blocks); spec B.7 F7",
};
pub const LOG_BLOCKS: ParamSpec = ParamSpec {
    name: "log_blocks",
    range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
    meaning: "number of log blocks, overriding log_ratio",
    source: "ftlsim",
};
pub const INPLACE_FIRST_WRITE: ParamSpec = ParamSpec {
    name: "inplace_first_write",
    range: ParamRange::Flag,
    meaning: "a page's first write goes to its offset in the data block when the block's program order allows",
    source: "FAST (Lee et al. 2007); spec B.2 and B.7 F4",
};

/// The parameters every log-block scheme shares (flattened into its `[ftl.<name>]` table; the
/// registry refuses unknown fields, as `deny_unknown_fields` cannot be combined with flattening).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogAreaParams {
    #[serde(default)]
    pub log_ratio: Option<f64>,
    #[serde(default)]
    pub log_ratio_of: LogRatioOf,
    #[serde(default)]
    pub log_blocks: Option<u32>,
    #[serde(default = "first_writes_in_place")]
    pub inplace_first_write: bool,
}

fn first_writes_in_place() -> bool {
    true
}

impl Default for LogAreaParams {
    fn default() -> Self {
        LogAreaParams {
            log_ratio: None,
            log_ratio_of: LogRatioOf::Total,
            log_blocks: None,
            inplace_first_write: first_writes_in_place(),
        }
    }
}

impl LogAreaParams {
    /// The log blocks these parameters give on `config`'s device, checked to be at least
    /// `min_log_blocks` and to fit ([`check_log_area`]).
    pub fn log_blocks(&self, config: &Config, ftl: &str, min_log_blocks: u32) -> Result<u32> {
        let count = log_block_count(config, self.log_ratio, self.log_ratio_of, self.log_blocks);
        let field = if self.log_blocks.is_some() { "log_blocks" } else { "log_ratio" };
        check_log_area(config, ftl, format!("ftl.{ftl}.{field}"), count, min_log_blocks)?;
        Ok(count)
    }
}

/// Sizing of the log area: an explicit count, a share of the device's blocks or of its data
/// blocks, or by default every block beyond the data blocks and the merge reserve.
fn log_block_count(config: &Config, ratio: Option<f64>, of: LogRatioOf, explicit: Option<u32>) -> u32 {
    let total = config.device.geometry.total_blocks();
    let data = logical_blocks(config);
    explicit.unwrap_or_else(|| match ratio {
        None => total.saturating_sub(data + MERGE_RESERVE),
        Some(ratio) => {
            let base = match of {
                LogRatioOf::Total => total,
                LogRatioOf::Data => data,
            };
            (base as f64 * ratio).round() as u32
        }
    })
}

/// Logical blocks the host addresses (the last one may be partial).
pub fn logical_blocks(config: &Config) -> u32 {
    config.device.logical_pages().div_ceil(config.device.geometry.pages_per_block)
}

/// Blocks beyond the logical blocks a scheme with `min_log_blocks` log blocks needs, at least as
/// many as the configuration's own check asks of a one-stream FTL (for `FtlInfo::spare_blocks_needed`).
pub fn spare_blocks_needed(config: &Config, min_log_blocks: u32) -> u64 {
    config.spare_blocks_needed(1, 0).max((min_log_blocks + MERGE_RESERVE) as u64)
}

/// Refuses a log area that is too small for the scheme or does not fit beside the data blocks,
/// naming `field`, the parameter that sized it.
fn check_log_area(config: &Config, ftl: &str, field: String, log_blocks: u32, min_log_blocks: u32) -> Result<()> {
    if log_blocks < min_log_blocks {
        return Err(SimError::config(
            field,
            format!("gives {log_blocks} log blocks; {ftl} needs at least {min_log_blocks} (set a larger ratio or log_blocks)"),
        ));
    }
    let total = config.device.geometry.total_blocks() as u64;
    let data = logical_blocks(config) as u64;
    let needed = data + log_blocks as u64 + MERGE_RESERVE as u64;
    if needed > total {
        return Err(SimError::config(
            field,
            format!(
                "{data} data blocks + {log_blocks} log blocks + {MERGE_RESERVE} reserved for merges = {needed} blocks, \
                 more than the device's {total}; lower the log area or the exported capacity (device.logical_pages \
                 or device.overprovisioning)"
            ),
        ));
    }
    Ok(())
}

/// Refuses a device without room for the merge reserve beside the data blocks (a scheme with
/// no log blocks: BFTL).
pub fn check_no_log_area(config: &Config, ftl: &str) -> Result<()> {
    let field = if config.device.logical_pages.is_some() { "device.logical_pages" } else { "device.overprovisioning" };
    check_log_area(config, ftl, field.to_string(), 0, 0)
}

/// The block map, the log-page map and the merges over them.
pub struct MergeEngine {
    pub blocks: BlockManager,
    /// Logical block -> its data block.
    data: Vec<PbnSlot>,
    /// LPN -> its newest copy, when that copy is in a log block.
    log: Vec<Option<Ppn>>,
    pages_per_block: u32,
    logical_pages: u32,
    /// The unit the next block is taken from (blocks are spread round robin).
    next_unit: u32,
    pub stats: MergeStats,
}

/// The block map writes data pages only, placing them itself.
pub const NO_STREAMS: &[StreamSpec] = &[];

impl MergeEngine {
    pub fn new(config: &Config) -> Self {
        let logical_pages = config.device.logical_pages();
        MergeEngine {
            blocks: BlockManager::new(config, NO_STREAMS),
            data: vec![PbnSlot::EMPTY; logical_blocks(config) as usize],
            log: crate::mem::filled_vec(logical_pages as usize, None),
            pages_per_block: config.device.geometry.pages_per_block,
            logical_pages,
            next_unit: 0,
            stats: MergeStats::default(),
        }
    }

    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// The logical block of an LPN and the LPN's offset in it.
    #[inline]
    pub fn split(&self, lpn: Lpn) -> (u32, u32) {
        (lpn.get() / self.pages_per_block, lpn.get() % self.pages_per_block)
    }

    /// LPNs of a logical block with their offsets (the last logical block may be short).
    fn lpns_of(&self, lbn: u32) -> impl Iterator<Item = (u32, Lpn)> {
        let first = lbn * self.pages_per_block;
        let end = (first + self.pages_per_block).min(self.logical_pages);
        (first..end).map(move |lpn| (lpn - first, Lpn::new(lpn)))
    }

    pub fn data_block(&self, lbn: u32) -> Option<Pbn> {
        self.data[lbn as usize].get()
    }

    /// The newest copy of an LPN: its log copy, or its page in the data block if that is valid.
    #[inline]
    pub fn newest(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        if let Some(logged) = self.log[lpn.index()] {
            return Some(logged);
        }
        let (lbn, offset) = self.split(lpn);
        let data = self.data_block(lbn)?;
        let ppn = flash.geometry().page_at(data, offset);
        self.blocks.is_valid(ppn, flash).then_some(ppn)
    }

    /// Whether the newest copy of `lpn` is in a log block.
    pub fn is_logged(&self, lpn: Lpn) -> bool {
        self.log[lpn.index()].is_some()
    }

    pub fn read(&self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let Some(ppn) = self.newest(lpn, ctx.flash) else { return Ok(None) };
        ctx.read(ppn, Purpose::Host)?;
        Ok(Some(ppn))
    }

    /// Takes an erased block, from the units in turn (any unit with a free block will do).
    pub fn take_block(&mut self) -> Result<Pbn> {
        let units = self.blocks.units();
        for step in 0..units {
            let unit = (self.next_unit + step) % units;
            if self.blocks.free_blocks(unit) > 0 {
                self.next_unit = (unit + 1) % units;
                return self.blocks.take_block(unit);
            }
        }
        Err(SimError::DeviceFull { unit: self.next_unit as usize, free: 0 })
    }

    /// Erases a block whose pages are all invalid and returns it to the pool, as GC work.
    pub fn reclaim(&mut self, pbn: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.release_block(pbn, Purpose::Gc, ctx)?;
        self.blocks.gc.reclaimed += 1;
        self.blocks.gc.stats.victims[PageKind::Data as usize] += 1;
        Ok(())
    }

    /// Invalidates the newest copy of `lpn`, wherever it is.
    pub fn invalidate(&mut self, lpn: Lpn, flash: &FlashArray) -> Result<()> {
        let Some(ppn) = self.newest(lpn, flash) else { return Ok(()) };
        self.log[lpn.index()] = None;
        self.blocks.invalidate(ppn, flash)
    }

    /// Whether the host's write of `lpn` can go to its offset in the data block: no copy of it
    /// exists and the block's program order allows that offset (a missing data block is taken).
    pub fn fits_in_place(&self, lpn: Lpn, flash: &FlashArray) -> bool {
        let (lbn, offset) = self.split(lpn);
        match self.data_block(lbn) {
            None => !self.is_logged(lpn),
            Some(data) => {
                let ppn = flash.geometry().page_at(data, offset);
                !self.is_logged(lpn) && !flash.is_programmed(ppn) && offset >= flash.write_pointer(data)
            }
        }
    }

    /// Writes `lpn` at its offset in its data block (see [`MergeEngine::fits_in_place`]).
    pub fn write_in_place(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let (lbn, offset) = self.split(lpn);
        let data = match self.data_block(lbn) {
            Some(data) => data,
            None => {
                let data = self.take_block()?;
                self.data[lbn as usize] = Some(data).into();
                data
            }
        };
        ctx.program(ctx.flash.geometry().page_at(data, offset), PageKind::Data, lpn, version, Purpose::Host)
    }

    /// Writes `lpn` into log block `log` at `offset` (the block's write pointer for an
    /// append-anywhere log, the LPN's own offset for a sequential log) and invalidates the
    /// previous copy.
    pub fn write_log(&mut self, log: Pbn, offset: u32, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        let ppn = ctx.flash.geometry().page_at(log, offset);
        debug_assert!(offset < self.pages_per_block && !ctx.flash.is_programmed(ppn));
        ctx.program(ppn, PageKind::Data, lpn, version, Purpose::Host)?;
        self.invalidate(lpn, ctx.flash)?;
        self.log[lpn.index()] = Some(ppn);
        Ok(())
    }

    /// Copies the newest copy of `lpn` to `to` as merge work, invalidating the source.
    fn copy(&mut self, lpn: Lpn, from: Ppn, to: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let spare = ctx.read(from, Purpose::Gc)?;
        ctx.program(to, PageKind::Data, lpn, spare.version, Purpose::Gc)?;
        self.log[lpn.index()] = None;
        self.blocks.invalidate(from, ctx.flash)?;
        self.stats.pages_copied += 1;
        self.blocks.gc.stats.moved[PageKind::Data as usize] += 1;
        Ok(())
    }

    /// Makes `block`, which holds pages of `lbn` at their own offsets, the data block of `lbn`,
    /// and reclaims the old data block (every page of which is invalid by then).
    fn install(&mut self, lbn: u32, block: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        let first = ctx.flash.geometry().first_page(block);
        for (offset, lpn) in self.lpns_of(lbn) {
            if self.log[lpn.index()] == Some(first.offset(offset)) {
                self.log[lpn.index()] = None;
            }
        }
        if let Some(old) = self.data[lbn as usize].replace(block) {
            self.reclaim(old, ctx)?;
        }
        Ok(())
    }

    /// Switch merge: `log` holds every page of `lbn` at its own offset.
    fn switch_merge(&mut self, lbn: u32, log: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        debug_assert!(self.is_in_order(lbn, log, ctx.flash) && ctx.flash.write_pointer(log) == self.pages_per_block);
        self.stats.switch_merges += 1;
        self.install(lbn, log, ctx)
    }

    /// Partial merge: `log` holds pages of `lbn` at their own offsets below its write pointer;
    /// the newest copies of the pages above it are copied in, then it switches.
    fn partial_merge(&mut self, lbn: u32, log: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        debug_assert!(self.is_in_order(lbn, log, ctx.flash));
        self.stats.partial_merges += 1;
        let first = ctx.flash.geometry().first_page(log);
        let from = ctx.flash.write_pointer(log);
        for (offset, lpn) in self.lpns_of(lbn).skip(from as usize) {
            if let Some(source) = self.newest(lpn, ctx.flash) {
                self.copy(lpn, source, first.offset(offset), ctx)?;
            }
        }
        self.install(lbn, log, ctx)
    }

    /// Full merge: the newest copy of every page of `lbn` goes to a fresh block at its offset,
    /// which becomes the data block; the old one is reclaimed. With `incoming`, the host's new
    /// version of one page is written there instead of its copy (a block-mapped update).
    pub fn full_merge(&mut self, lbn: u32, incoming: Option<(Lpn, u32)>, ctx: &mut FtlCtx) -> Result<()> {
        let holds_data = self.lpns_of(lbn).any(|(_, lpn)| self.newest(lpn, ctx.flash).is_some());
        if !holds_data && incoming.is_none() {
            // Nothing to keep: the data block (if any) has no valid page left.
            return match self.data[lbn as usize].take() {
                Some(old) => self.reclaim(old, ctx),
                None => Ok(()),
            };
        }
        self.stats.full_merges += 1;
        let fresh = self.take_block()?;
        let first = ctx.flash.geometry().first_page(fresh);
        for (offset, lpn) in self.lpns_of(lbn) {
            match incoming {
                Some((new, version)) if new == lpn => {
                    ctx.program(first.offset(offset), PageKind::Data, lpn, version, Purpose::Host)?;
                    self.invalidate(lpn, ctx.flash)?;
                }
                _ => {
                    if let Some(source) = self.newest(lpn, ctx.flash) {
                        self.copy(lpn, source, first.offset(offset), ctx)?;
                    }
                }
            }
        }
        self.install(lbn, fresh, ctx)
    }

    /// Whether every readable page of `block` holds the page of `lbn` at its own offset (the
    /// shape a switch or partial merge needs).
    pub fn is_in_order(&self, lbn: u32, block: Pbn, flash: &FlashArray) -> bool {
        let first = flash.geometry().first_page(block);
        (0..flash.write_pointer(block)).all(|offset| {
            let ppn = first.offset(offset);
            !flash.is_programmed(ppn)
                || (!flash.is_corrupt(ppn) && flash.spare_unchecked(ppn).logical == lbn * self.pages_per_block + offset)
        })
    }

    /// The logical blocks with a valid page in `block`, in the order of their first such page.
    pub fn valid_lbns(&self, block: Pbn, flash: &FlashArray) -> Vec<u32> {
        let mut lbns: Vec<u32> = Vec::new();
        for ppn in flash.geometry().pages_below(block, flash.write_pointer(block)) {
            if self.blocks.is_valid(ppn, flash) {
                let lbn = flash.spare_unchecked(ppn).logical / self.pages_per_block;
                if !lbns.contains(&lbn) {
                    lbns.push(lbn);
                }
            }
        }
        lbns
    }

    /// Merges a log block that holds pages of `lbn` only (BAST's log blocks, FAST's SW block):
    /// a switch merge if it holds the whole block in order, a partial merge if it holds a prefix
    /// in order, otherwise (or when the data block still has the newest copy of a page in that
    /// prefix: a page trimmed, then written in place) a full merge, after which the log block is
    /// erased.
    pub fn merge_dedicated(&mut self, lbn: u32, log: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        self.note_log_merge(log, 1, ctx.flash);
        let prefix = ctx.flash.write_pointer(log);
        let data_prefix_stale = self.data_block(lbn).is_none_or(|data| {
            ctx.flash.geometry().pages_below(data, prefix).all(|ppn| !self.blocks.is_valid(ppn, ctx.flash))
        });
        if data_prefix_stale && self.is_in_order(lbn, log, ctx.flash) {
            return if prefix == self.pages_per_block {
                self.switch_merge(lbn, log, ctx)
            } else {
                self.partial_merge(lbn, log, ctx)
            };
        }
        self.full_merge(lbn, None, ctx)?;
        self.reclaim(log, ctx)
    }

    /// Reclaims a log block: full-merges every logical block with a valid page in it (each
    /// through `merge`, so a scheme can fold its own structures in), then erases it.
    pub fn reclaim_log(
        &mut self,
        log: Pbn,
        ctx: &mut FtlCtx,
        mut merge: impl FnMut(&mut Self, u32, &mut FtlCtx) -> Result<()>,
    ) -> Result<()> {
        let lbns = self.valid_lbns(log, ctx.flash);
        self.note_log_merge(log, lbns.len(), ctx.flash);
        for lbn in lbns {
            merge(self, lbn, ctx)?;
        }
        self.reclaim(log, ctx)
    }

    /// Counts a log block whose merge begins, with the data blocks it is merged with.
    fn note_log_merge(&mut self, log: Pbn, data_blocks: usize, flash: &FlashArray) {
        self.stats.log_merges += 1;
        self.stats.log_valid_pages += self.blocks.valid_count(log, flash) as u64;
        self.stats.log_written_pages += flash.programmed_count(log) as u64;
        self.stats.merged_data_blocks += data_blocks as u64;
    }

    /// Rebuilds the maps after a power loss, from the spare area of every page
    /// ([`scan_spare_areas`]). The newest version of each LPN is its valid copy (between two copies of one
    /// version, left by a merge the power loss cut short, the later block's). A block holding
    /// only pages of one logical block at their own offsets is a candidate data block; each
    /// logical block's data block is the candidate with the most valid pages, and every other
    /// valid page is log-mapped. Blocks with no valid page left are reclaimed. Returns the other
    /// blocks with valid pages (the log blocks), in block order, for the scheme to adopt.
    pub fn recover(&mut self, ctx: &mut FtlCtx) -> Result<Vec<Pbn>> {
        let g = ctx.flash.geometry().clone();
        let ppb = self.pages_per_block;
        let mut newest: Vec<Option<(u32, Ppn)>> = vec![None; self.logical_pages as usize];
        scan_spare_areas(ctx, |ppn, spare| {
            let slot = &mut newest[spare.logical as usize];
            if spare.kind == PageKind::Data && slot.is_none_or(|(version, _)| spare.version >= version) {
                *slot = Some((spare.version, ppn));
            }
        });
        let live = |ppn: Ppn, spare: Spare| newest[spare.logical as usize].is_some_and(|(_, p)| p == ppn);
        self.blocks.rebuild_owned(ctx.flash, live);
        // Each logical block's data block: its in-order candidate with the most valid pages.
        self.data.fill(PbnSlot::EMPTY);
        let mut best = vec![0u32; self.data.len()];
        for pbn in g.blocks() {
            let valid = self.blocks.valid_count(pbn, ctx.flash);
            if valid == 0 || ctx.flash.has_corrupt_page(pbn) {
                continue;
            }
            let Some(ppn) = g.pages_of(pbn).find(|&p| ctx.flash.is_programmed(p)) else { continue };
            let lbn = ctx.flash.spare_unchecked(ppn).logical / ppb;
            if self.is_in_order(lbn, pbn, ctx.flash) && valid > best[lbn as usize] {
                best[lbn as usize] = valid;
                self.data[lbn as usize] = Some(pbn).into();
            }
        }
        let mut is_data = vec![false; g.total_blocks() as usize];
        for pbn in self.data.iter().filter_map(|slot| slot.get()) {
            is_data[pbn.index()] = true;
        }
        self.log.fill(None);
        let mut logs = Vec::new();
        for pbn in g.blocks() {
            if is_data[pbn.index()] || ctx.flash.block_state(pbn) == BlockState::Erased {
                continue;
            }
            if self.blocks.valid_count(pbn, ctx.flash) == 0 {
                self.reclaim(pbn, ctx)?;
                continue;
            }
            for ppn in g.pages_below(pbn, ctx.flash.write_pointer(pbn)) {
                if self.blocks.is_valid(ppn, ctx.flash) {
                    self.log[ctx.flash.spare_unchecked(ppn).logical as usize] = Some(ppn);
                }
            }
            logs.push(pbn);
        }
        Ok(logs)
    }

    /// The maps agree with flash: every data block holds its logical block's pages at their own
    /// offsets, and every log entry points at a valid page of that LPN outside its data block.
    pub fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        for (lbn, data) in self.data.iter().enumerate() {
            let Some(data) = data.get() else { continue };
            if !self.is_in_order(lbn as u32, data, flash) {
                return Err(format!("data block {data} of logical block {lbn} holds a page at a foreign offset"));
            }
        }
        let g = flash.geometry();
        for (lpn, ppn) in self.log.iter().enumerate() {
            let Some(ppn) = *ppn else { continue };
            if self.data[lpn / self.pages_per_block as usize].get() == Some(g.block_of(ppn)) {
                return Err(format!("LPN {lpn} is log-mapped to PPN {ppn} in its own data block"));
            }
        }
        Ok(())
    }

    /// SRAM of the block map (4 B per physical block, paper 000 Table 5.3) and of the GC's
    /// one bit per block.
    pub fn block_map_sram(blocks: u64) -> Vec<SramItem> {
        vec![
            SramItem { structure: "block map (4 B per physical block)".into(), bytes: blocks * 4 },
            SramItem { structure: "GC block bitmap (1 bit per block)".into(), bytes: blocks.div_ceil(8) },
        ]
    }

    /// Simulator memory of the maps and the block manager.
    pub fn state_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<PbnSlot>()
            + self.log.len() * std::mem::size_of::<Option<Ppn>>()
            + self.blocks.state_bytes()
    }
}

/// Reads the spare area of every page of every block, as a recovery that trusts nothing in SRAM
/// must when blocks may have gaps (a page skipped under the `sequential` rule stays erased below
/// programmed ones, so an erased page does not mark the end of a block): n reads.
fn scan_spare_areas(ctx: &mut FtlCtx, mut page: impl FnMut(Ppn, Spare)) {
    for ppn in ctx.flash.geometry().pages() {
        if let Some(spare) = ctx.probe_spare(ppn) {
            page(ppn, spare);
        }
    }
}
