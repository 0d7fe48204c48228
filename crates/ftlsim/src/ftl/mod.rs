//! Flash translation layers: the [`Ftl`] trait every scheme implements, the context through which
//! it touches flash, and the registry that names them.
//!
//! An FTL updates its state at once (functional simulation) and emits the flash operations it
//! needed through [`FtlCtx`]; it never computes time.

mod bast;
mod bftl;
pub mod cdftl;
pub mod common;
pub mod cpm;
pub mod delta;
pub mod dftl;
mod dftl_pages;
pub mod fast;
mod last;
pub mod optimal;
mod page;
pub mod precondition;
mod registry;
mod sast;
pub mod scftl;
pub mod sftl;
pub mod tdftl;
pub mod tpftl;

pub use delta::DeltaFtl;
pub use page::PageFtl;
pub use precondition::PageLayout;
pub use registry::{
    build_ftl, build_with, describe, ftl_info, ftl_names, ftl_params, no_test_overrides, one_stream_spare_blocks,
    validate_ftl_tables, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema, REGISTRY,
};

use serde::Serialize;

use crate::error::{Result, SimError};
use crate::flash::{BlockPage, CpuTask, FlashArray, Lpn, OpKind, OpLog, PageKind, Pbn, Ppn, Purpose, Spare};
use crate::metrics::CacheStats;

/// One named structure of an FTL's SRAM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SramItem {
    pub structure: String,
    pub bytes: u64,
}

pub type SramBreakdown = Vec<SramItem>;

/// A translation or metadata page an FTL's directory points at (see [`Ftl::referenced_pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRef {
    pub ppn: Ppn,
    pub kind: PageKind,
    /// The logical number the page's spare area must carry (a translation-page number, ...).
    pub logical: u32,
}

/// Everything an FTL may touch while handling one logical page.
pub struct FtlCtx<'a> {
    pub flash: &'a mut FlashArray,
    pub ops: &'a mut OpLog,
    pub cache: &'a mut CacheStats,
}

impl FtlCtx<'_> {
    /// Fails with [`SimError::PowerCut`] where a planned power loss strikes (an interrupted
    /// read or erase leaves flash as it was).
    #[inline]
    fn power_check(&self) -> Result<()> {
        if self.ops.power_fails_now() {
            return Err(SimError::PowerCut);
        }
        Ok(())
    }

    /// Full page read.
    #[inline(always)]
    pub fn read(&mut self, ppn: Ppn, purpose: Purpose) -> Result<Spare> {
        self.read_at(self.flash.addressing().block_page(ppn), purpose)
    }

    /// [`FtlCtx::read`] of a page whose block is known (GC's walk over its victim).
    #[inline(always)]
    pub fn read_at(&mut self, page: BlockPage, purpose: Purpose) -> Result<Spare> {
        self.power_check()?;
        let spare = self.flash.read_at(page)?;
        self.ops.push(OpKind::Read, purpose, page.ppn);
        Ok(spare)
    }

    /// Spare-area-only read.
    #[inline]
    pub fn read_spare(&mut self, ppn: Ppn, purpose: Purpose) -> Result<Spare> {
        self.power_check()?;
        let spare = self.flash.read(ppn)?;
        self.ops.push(OpKind::SpareRead, purpose, ppn);
        Ok(spare)
    }

    /// A recovery-time spare read that may hit an erased or a corrupt page (`None` for either).
    pub fn probe_spare(&mut self, ppn: Ppn) -> Option<Spare> {
        self.ops.push(OpKind::SpareRead, Purpose::Recovery, ppn);
        self.flash.read(ppn).ok()
    }

    #[inline(always)]
    pub fn program(
        &mut self,
        ppn: Ppn,
        kind: PageKind,
        logical: impl Into<u32>,
        version: u32,
        purpose: Purpose,
    ) -> Result<()> {
        let closes = self.flash.closes_data(ppn);
        if self.power_fails_in_program(closes) {
            return self.program_interrupted(ppn, kind);
        }
        self.flash.program(ppn, kind, logical.into(), version)?;
        self.ops.push(OpKind::Program, purpose, ppn);
        if closes {
            self.program_summary(ppn)?;
        }
        Ok(())
    }

    /// Whether power fails at a program or, when the program fills its block (`closes`), at the
    /// summary program that follows it: a cut at either interrupts the data page's program, the
    /// pair being one step to the FTL (which records what it wrote once the program returns).
    #[inline]
    fn power_fails_in_program(&self, closes: bool) -> bool {
        self.ops.power_fails_now() || (closes && self.ops.power_fails_next())
    }

    /// A program a power loss interrupts (kept out of the program's path).
    #[cold]
    #[inline(never)]
    fn program_interrupted(&mut self, ppn: Ppn, kind: PageKind) -> Result<()> {
        self.flash.program_interrupted(ppn, kind)?;
        Err(SimError::PowerCut)
    }

    /// Programs the summary page of the block whose last data page `last` was just programmed
    /// (`device.geometry.summary_page`): a program on the block's die after that one, counted as
    /// metadata.
    #[cold]
    fn program_summary(&mut self, last: Ppn) -> Result<()> {
        let pbn = self.flash.geometry().block_of(last);
        self.flash.program_summary(pbn)?;
        self.ops.push_summary(self.flash.geometry().summary_page_of(pbn));
        Ok(())
    }

    /// Programs a delta page holding `entries` (Delta-FTL's delta log).
    pub fn program_deltas(
        &mut self,
        ppn: Ppn,
        logical: u32,
        version: u32,
        entries: Box<[crate::flash::DeltaEntry]>,
        purpose: Purpose,
    ) -> Result<()> {
        let closes = self.flash.closes_data(ppn);
        if self.power_fails_in_program(closes) {
            return self.program_interrupted(ppn, PageKind::Delta);
        }
        self.flash.program_deltas(ppn, logical, version, entries)?;
        self.ops.push(OpKind::Program, purpose, ppn);
        if closes {
            self.program_summary(ppn)?;
        }
        Ok(())
    }

    #[inline]
    pub fn erase(&mut self, pbn: Pbn, purpose: Purpose) -> Result<()> {
        self.power_check()?;
        self.flash.erase(pbn)?;
        let first = self.flash.geometry().first_page(pbn);
        self.ops.push(OpKind::Erase, purpose, first);
        Ok(())
    }

    /// Work on the controller's CPU about the content of page `page` (compressing a delta of
    /// its old version, decompressing what it holds). It follows the chain's previous operation
    /// and the next one waits for it; with a CPU per channel it runs on `page`'s channel. It
    /// touches no flash.
    pub fn compute(&mut self, task: CpuTask, purpose: Purpose, page: Ppn) -> Result<()> {
        self.power_check()?;
        self.ops.push(OpKind::Compute(task), purpose, page);
        Ok(())
    }
}

/// Where the newest version of an LPN in delta form lives ([`Ftl::delta_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaAt {
    /// In a delta page on flash.
    Flash(Ppn),
    /// In the FTL's capacitor-backed RAM (Delta-FTL's Temp Buffer), holding this version.
    Ram(u32),
}

/// The two stages of [`Ftl::prefetch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefetch {
    /// Bring in the mapping entry.
    Map,
    /// Bring in the state of the page the entry points to.
    Pages,
}

/// A flash translation layer.
pub trait Ftl: Send {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// The host request whose pages follow (called before its first page; `first + pages` may
    /// run past the last LPN, where the host wraps around). For schemes that translate a request
    /// as a whole (TPFTL's request-level prefetching); the default does nothing.
    fn begin_request(&mut self, _first: Lpn, _pages: u32) {}

    /// The content fingerprint of what the host just wrote to `lpn` (`None`: unknown, as for a
    /// page written in part), for traces that record content; the scheme's next write of `lpn`
    /// brings that content. Called only for such traces; the default ignores it.
    fn host_content(&mut self, _lpn: Lpn, _fingerprint: Option<u64>) {}

    /// Serves a host read; returns the page holding the LPN, or `None` if it is unmapped.
    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>>;

    /// Serves a host write; `version` goes to the page's spare area.
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()>;

    /// Unmaps an LPN.
    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()>;

    /// Where the LPN lives, resolved without side effects or flash traffic (for the oracle).
    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn>;

    /// Drops every SRAM structure and rebuilds them from flash, issuing (and so counting) every
    /// read the scheme's recovery procedure needs.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()>;

    /// SRAM use by structure, computed from the configuration.
    fn sram(&self) -> SramBreakdown;

    /// Bytes of simulator memory the FTL's state takes (not the modelled SRAM).
    fn state_bytes(&self) -> usize;

    /// One step of background GC on allocation unit `unit`, called when its die has nothing
    /// else to do (`gc.background_free_blocks`); returns whether it reclaimed a block. The
    /// default does nothing: schemes whose GC is merging log blocks collect in the foreground.
    fn collect_in_background(&mut self, _unit: u32, _ctx: &mut FtlCtx) -> Result<bool> {
        Ok(false)
    }

    /// Whether the FTL starts from the shared page layout ([`PageLayout`]: every page-mapped FTL's
    /// data pages in the same places, built without any FTL's write path) and takes it over with
    /// [`Ftl::adopt_page_layout`]. `false` (the default) has preconditioning replay its host
    /// writes through [`Ftl::write`] (schemes that place data their own way).
    fn takes_page_layout(&self) -> bool {
        false
    }

    /// Takes over a device whose data pages preconditioning laid out on `ctx.flash` (`layout`:
    /// where each LPN lives): the map, the block manager (`BlockManager::rebuild` with
    /// `PageLayout::is_live`) and whatever the scheme keeps on flash about them. The caches stay
    /// empty; [`Ftl::flush`] follows, so translation pages are written there. Issues no operation.
    fn adopt_page_layout(&mut self, _layout: PageLayout, _ctx: &mut FtlCtx) -> Result<()> {
        Err(SimError::Other(format!("{} does not start from the shared page layout", self.name())))
    }

    /// Writes back dirty cached state (after preconditioning); a no-op for SRAM-only maps.
    fn flush(&mut self, _ctx: &mut FtlCtx) -> Result<()> {
        Ok(())
    }

    /// A hint that `lpn` will be accessed soon: `Prefetch::Map` some requests ahead, then
    /// `Prefetch::Pages` closer to use, when the map entry is already cached. Purely a speed-up:
    /// it must not change any state. `Prefetch::Pages` returns the page `lpn` maps to when the
    /// map says so at no cost, so the timing model can bring its state in too. The default
    /// does nothing.
    fn prefetch(&self, _lpn: Lpn, _stage: Prefetch, _flash: &FlashArray) -> Option<Ppn> {
        None
    }

    /// Forgets cache contents without writing them back (after preconditioning the caches start cold).
    fn reset_cache(&mut self) {}

    /// Scheme-specific consistency checks beyond the shared ones; returns a description of the
    /// first violation.
    fn check(&self, _flash: &FlashArray) -> std::result::Result<(), String> {
        Ok(())
    }

    /// Every translation or metadata page the FTL's directories (a GTD, a checkpoint index)
    /// point at, for the shared invariant check: each must be a valid page of its kind holding
    /// that logical number, none may be referenced twice, and no valid page of a translation or
    /// metadata block may be left unreferenced. `None` (the default) skips that check; an FTL that
    /// keeps such pages should report them.
    fn referenced_pages(&self) -> Option<Vec<PageRef>> {
        None
    }

    /// SRAM bytes the FTL's state occupies right now (cached entries, buffers); the shared
    /// invariant check requires it never to exceed the total of [`Ftl::sram`]. `None` (the
    /// default) skips that check.
    fn sram_in_use(&self) -> Option<u64> {
        None
    }

    /// Merge counts and costs, for block-mapped and log-block schemes (`None`, the default, for
    /// the others).
    fn merge_stats(&self) -> Option<crate::metrics::MergeStats> {
        None
    }

    /// Spare-area formats and translation levels, for schemes that keep their mapping in the
    /// data pages' spare areas (`None`, the default, for the others).
    fn spare_map_stats(&self) -> Option<crate::metrics::SpareMapStats> {
        None
    }

    /// For an LPN stored as a delta against the page [`Ftl::lookup`] gives (Delta-FTL): where the
    /// delta holding its newest version lives, so the oracle reads through the delta form.
    /// `None` (the default) for a page in original form.
    fn delta_of(&self, _lpn: Lpn) -> Option<DeltaAt> {
        None
    }

    /// Power is failing: write what capacitor-backed RAM holds to flash before [`Ftl::recover`]
    /// (Delta-FTL's Temp Buffer); the default holds nothing.
    fn flush_on_power_loss(&mut self, _ctx: &mut FtlCtx) -> Result<()> {
        Ok(())
    }

    /// The mapping cache's occupancy now (paper 002 Figs. 1 and 10), for caches of single entries
    /// grouped by translation page; `None` (the default) for the others. Reads only.
    fn cache_occupancy(&self) -> Option<crate::metrics::Occupancy> {
        None
    }

    /// Delta-encoding counts (`None`, the default, for schemes that store no deltas).
    fn delta_stats(&self) -> Option<crate::metrics::DeltaStats> {
        None
    }

    /// The block manager, for the shared invariant checks.
    fn blocks(&self) -> &common::BlockManager;

    /// The FTL's resolved parameters (recorded in every result).
    fn params(&self) -> serde_json::Value;
}
