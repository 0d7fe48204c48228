//! The translation-page store shared by every demand-based FTL (DFTL, CDFTL, S-FTL, TPFTL, SCFTL):
//! the full LPN -> PPN table lives in translation pages (TPs) in flash, in their own blocks
//! (`PageKind::Translation`), and a global translation directory (GTD) in SRAM locates the newest
//! copy of each TP.
//!
//! What is modelled:
//! - the GTD (TP number -> PPN of its newest copy) and a write counter per TP, which goes to the
//!   copy's spare area as its version (newest version wins on recovery);
//! - the content of every TP as last written to flash (`entry`), so lookups and recovery resolve
//!   without the cache;
//! - a page sequence number (PSN) per programmed page, the spare-area field of paper 000's recovery
//!   (Fig 8.1), and per TP the PSN up to which its newest copy holds every mapping change;
//! - after a power loss, the modified entries recovered from data pages newer than their TP copy
//!   (paper 000 Fig 8.1 line 28; spec 5.14 keeps them in an unbounded map): they are resolved
//!   before the TP content and folded into the next write of their TP.
//!
//! How a scheme uses it (most of this is done once in `common::demand::DemandFtl`, the frame of
//! DFTL, CDFTL, S-FTL, TPFTL and SCFTL; a scheme there implements `DemandScheme`):
//! - keep the store and the cache in one state struct that implements [`Relocate`] and
//!   [`TranslationOwner`], apart from the `BlockManager` (the pattern of `ftl/page.rs`);
//! - on a miss, [`TranslationStore::fetch`] the TP (one translation read) and take the entries
//!   with [`TranslationStore::entry`];
//! - program host data with [`TranslationStore::program_data`] (it stamps the PSN), and from
//!   `Relocate::relocated` call [`TranslationStore::relocated`] first: it follows moved TPs and
//!   returns the LPN of a moved data page for the scheme to remap;
//! - to write mapping changes back, call [`write_back`]: it reads the old copy if asked, allocates
//!   a translation page (which may run GC, whose mapping updates may themselves write TPs back),
//!   then calls [`TranslationOwner::publish`], where the scheme hands every unwritten change of
//!   the TP to [`TranslationStore::set`] and marks it clean, and programs the new copy. A change
//!   the scheme has already dropped from its cache (an evicted victim) is handed to `set` before
//!   calling `write_back`.
//! - recovery: `blocks.rebuild(flash)`, empty the cache, then [`TranslationStore::recover`].

use std::collections::BTreeMap;
use std::ops::Range;

use super::ilog::Ilog;
use super::{BlockManager, BlockRole, Relocate};
use super::{StreamId, StreamSpec};
use crate::config::{Config, GtdSpan};
use crate::error::{Result, SimError};
use crate::flash::{
    Divisor, FlashArray, Lpn, PageKind, Pbn, Ppn, Purpose, Spare, SpareField, SpareLayout, Tpn, KIND_FIELD,
    LOGICAL_FIELD, VERSION_FIELD,
};
use crate::ftl::{FtlCtx, PageRef, SramItem};

/// Bytes per mapping entry in a translation page: a 4-byte PPN (both papers).
pub const TP_ENTRY_BYTES: u32 = 4;
/// The streams a demand-based FTL writes: data and translation pages.
pub const DEMAND_STREAMS: &[StreamSpec] =
    &[StreamSpec::new("data", PageKind::Data), StreamSpec::new("translation", PageKind::Translation)];
/// What a demand-based FTL writes in every spare area: the page kind, the logical number (LPN or
/// TP number), the version, and the page sequence number recovery orders pages by.
pub const DEMAND_LAYOUT: SpareLayout =
    SpareLayout { fields: &[KIND_FIELD, LOGICAL_FIELD, VERSION_FIELD, SpareField::new("page sequence number", 4)] };
/// The data stream of [`DEMAND_STREAMS`].
pub const DATA_STREAM: StreamId = StreamId::new(0);
/// The translation-page stream of [`DEMAND_STREAMS`].
pub const TRANSLATION_STREAM: StreamId = StreamId::new(1);

/// A demand-based FTL's mapping state, seen by [`write_back`].
pub trait TranslationOwner: Relocate {
    fn store(&mut self) -> &mut TranslationStore;

    /// Hands every mapping change of `tp` held only in SRAM to [`TranslationStore::set`] and marks
    /// it clean (a scheme that writes back one entry at a time hands over just that one). Returns
    /// whether no unwritten change of `tp` remains in SRAM afterwards: only then does the new copy
    /// hold every change made before it, which recovery relies on.
    fn publish(&mut self, tp: Tpn) -> bool;
}

/// Writes a new copy of `tp`: reads the old copy first when `read_old` (a partial update; skip it
/// when the whole TP is in SRAM), allocates a translation page, collects the changes through
/// [`TranslationOwner::publish`], programs the copy, invalidates the old one and updates the GTD.
/// Works inside GC (from `Relocate::relocated`), where the allocation draws on the reserve.
pub fn write_back<O: TranslationOwner>(
    owner: &mut O,
    blocks: &mut BlockManager,
    tp: Tpn,
    read_old: bool,
    ctx: &mut FtlCtx,
) -> Result<()> {
    // The old copy, invalidated once the new one is programmed: a cold line on large devices.
    if let Some(old) = owner.store().location(tp) {
        blocks.prefetch_page(old, ctx.flash);
    }
    if read_old {
        owner.store().fetch(tp, ctx)?;
    }
    let stream = owner.store().stream;
    let unit = blocks.next_unit(stream);
    let ppn = blocks.allocate(unit, stream, owner, ctx)?;
    // Changes are collected only now: GC during the allocation may have made new ones.
    let complete = owner.publish(tp);
    owner.store().commit(tp, ppn, complete, blocks, ctx)
}

/// Ends a recovery: writes a new copy of every TP that holds recovered entries (mapping changes
/// found only in data pages, newer than the TP's copy on flash). Afterwards the store holds
/// nothing newer than flash outside the scheme's cache, as if the changes had been cached and
/// written back.
pub fn write_back_recovered<O: TranslationOwner>(
    owner: &mut O,
    blocks: &mut BlockManager,
    ctx: &mut FtlCtx,
) -> Result<()> {
    while let Some(tp) = owner.store().tp_with_recovered_entries() {
        write_back(owner, blocks, tp, true, ctx)?;
    }
    Ok(())
}

/// How many of `next` continue a run from `first`, each mapping the page `step` (+1: forward,
/// -1: backward) from the one before. A PPN is below `u32::MAX`, so the wrap at either end
/// matches nothing.
#[inline]
fn run_continues(first: Ppn, next: impl Iterator<Item = Option<Ppn>>, step: i32) -> u32 {
    let mut expected = first.get();
    let mut count = 0;
    for ppn in next {
        expected = expected.wrapping_add_signed(step);
        if ppn.map(Ppn::get) != Some(expected) {
            break;
        }
        count += 1;
    }
    count
}

pub struct TranslationStore {
    /// Entries per TP: a divisor, as every LPN's TP is found by a division.
    entries_per_tp: Divisor,
    logical_pages: u32,
    /// GTD entries the SRAM is sized for (`device.gtd_span`, plus the auxiliary pages).
    directory_tps: u32,
    /// TPs of the map; the GTD's entries beyond them locate auxiliary pages ([`StoreLayout`]).
    user_tps: u32,
    gtd: Vec<Option<Ppn>>,
    versions: Vec<u32>,
    /// Per TP: every mapping change made by a page with a PSN up to this is in the newest copy.
    covered: Vec<u32>,
    /// LPN -> PPN as held by the newest flash copy of its TP.
    image: Vec<Option<Ppn>>,
    /// Modelled spare-area PSN of every page (flash content; survives power loss).
    psn: Vec<u32>,
    next_psn: u32,
    /// Modified entries recovered after a power loss, not yet written to their TP.
    recovered: BTreeMap<Lpn, Option<Ppn>>,
    /// The purpose TP reads and writes are tagged with: translation, or recovery while a
    /// recovery writes back what it rebuilt.
    traffic: Purpose,
    /// The old page of the host write in progress and its LPN: invalidated before the new page
    /// is allocated, still in the mapping until the write ends.
    replacing: Option<(Ppn, Lpn)>,
    /// The stream translation pages are written to.
    stream: StreamId,
    /// Recovery stops scanning each data block, rather than each allocation unit, at the first
    /// page every TP copy covers (see [`StoreLayout::interleaved_data`]).
    interleaved_data: bool,
}

/// Where a scheme that does not follow the demand-based frame keeps its translation pages, and
/// how it fills its data blocks ([`TranslationStore::with_layout`]).
#[derive(Debug, Clone, Copy)]
pub struct StoreLayout {
    /// The stream translation pages are written to.
    pub stream: StreamId,
    /// Directory entries after the map's TPs, for pages of other mapping tables the scheme keeps
    /// in the same stream (CPM's cluster-block map): the GTD locates them, recovery finds their
    /// newest copies, and [`write_back`] writes them (the scheme's `publish` says what they hold).
    pub aux_pages: u32,
    /// Several data blocks of a unit are written at once (one per cluster in CPM), so data pages
    /// are not programmed in block order within a unit.
    pub interleaved_data: bool,
}

impl TranslationStore {
    /// Fails (naming the capacity field) when the device lacks the spare blocks garbage
    /// collection needs with a translation stream and the translation pages.
    pub fn new(config: &Config) -> Result<Self> {
        config.check_spare_blocks(DEMAND_STREAMS.len() as u32, Self::pages_needed(config))?;
        let layout = StoreLayout { stream: TRANSLATION_STREAM, aux_pages: 0, interleaved_data: false };
        Ok(Self::with_layout(config, layout))
    }

    /// A store for a scheme with its own streams and block handling, which checks the device's
    /// spare blocks itself.
    pub fn with_layout(config: &Config, layout: StoreLayout) -> Self {
        let g = &config.device.geometry;
        let entries_per_tp = Self::entries_per_tp_of(config);
        let logical_pages = config.device.logical_pages();
        let tps = Self::pages_needed(config);
        let entries = (tps + layout.aux_pages) as usize;
        TranslationStore {
            entries_per_tp: Divisor::new(entries_per_tp),
            logical_pages,
            directory_tps: layout.aux_pages
                + match config.device.gtd_span {
                    GtdSpan::Logical => tps,
                    GtdSpan::Physical => g.total_pages().div_ceil(entries_per_tp),
                },
            user_tps: tps,
            gtd: vec![None; entries],
            versions: vec![0; entries],
            covered: vec![0; entries],
            image: crate::mem::unmapped_vec(logical_pages as usize),
            psn: crate::mem::filled_vec(g.total_pages() as usize, 0),
            next_psn: 1,
            recovered: BTreeMap::new(),
            traffic: Purpose::Translation,
            replacing: None,
            stream: layout.stream,
            interleaved_data: layout.interleaved_data,
        }
    }

    /// Mapping entries a translation page of `config`'s device holds.
    fn entries_per_tp_of(config: &Config) -> u32 {
        (config.device.geometry.page_size / TP_ENTRY_BYTES).max(1)
    }

    /// Translation pages the map of `config`'s device fills.
    pub fn pages_needed(config: &Config) -> u32 {
        config.device.logical_pages().div_ceil(Self::entries_per_tp_of(config))
    }

    /// Spare blocks a demand-based FTL needs on `config`'s device.
    pub fn spare_blocks_needed(config: &Config) -> u64 {
        config.spare_blocks_needed(DEMAND_STREAMS.len() as u32, Self::pages_needed(config))
    }

    #[inline]
    pub fn entries_per_tp(&self) -> u32 {
        self.entries_per_tp.get()
    }
    /// TPs holding user LPNs.
    pub fn tp_count(&self) -> u32 {
        self.user_tps
    }
    /// The number of the `i`-th auxiliary page ([`StoreLayout::aux_pages`]).
    pub fn aux_page(&self, i: u32) -> Tpn {
        Tpn::new(self.user_tps + i)
    }
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }
    #[inline]
    pub fn tp_of(&self, lpn: Lpn) -> Tpn {
        Tpn::new(self.entries_per_tp.quotient(lpn.get()))
    }
    /// Every TP, in order.
    pub fn tps(&self) -> impl DoubleEndedIterator<Item = Tpn> + ExactSizeIterator {
        Tpn::range(0, self.tp_count())
    }
    /// The LPNs a TP maps.
    pub fn lpns(&self, tp: Tpn) -> Range<Lpn> {
        let per_tp = self.entries_per_tp.get();
        let first = tp.get() * per_tp;
        Lpn::new(first)..Lpn::new((first + per_tp).min(self.logical_pages))
    }
    /// Where the newest copy of a TP is (`None` before its first write).
    #[inline]
    pub fn location(&self, tp: Tpn) -> Option<Ppn> {
        self.gtd[tp.index()]
    }

    /// The mapping of an LPN as the flash holds it (recovered entries first); `None` if unmapped.
    #[inline]
    pub fn entry(&self, lpn: Lpn) -> Option<Ppn> {
        if !self.recovered.is_empty() {
            if let Some(&ppn) = self.recovered.get(&lpn) {
                return ppn;
            }
        }
        self.image[lpn.index()]
    }

    /// The mapping of `start` and how many of the `cap` (at least 1) entries from `start` map
    /// consecutive pages from it (1 if `start` is unmapped): the run a range-mapping cache entry
    /// can hold. Reads the image as a slice unless recovered entries must be looked up first.
    /// Always inlined (SCFTL measures a run per spatial-fetch victim): as a call, saving the
    /// registers the recovered entries' search needs cost about a fifth of it.
    #[inline(always)]
    pub fn consecutive_run(&self, start: Lpn, cap: u32) -> (u32, Option<Ppn>) {
        if !self.recovered.is_empty() {
            return self.consecutive_run_recovered(start, cap);
        }
        let base = self.image[start.index()];
        let Some(first) = base else { return (1, None) };
        let from = start.index() + 1;
        (1 + run_continues(first, self.image[from..from + cap as usize - 1].iter().copied(), 1), base)
    }

    /// [`Self::consecutive_run`] while recovered entries are pending (after a power loss).
    #[inline(never)]
    fn consecutive_run_recovered(&self, start: Lpn, cap: u32) -> (u32, Option<Ppn>) {
        let base = self.entry(start);
        let Some(first) = base else { return (1, None) };
        (1 + run_continues(first, (1..cap).map(|i| self.entry(start.offset(i))), 1), base)
    }

    /// How many of the `cap` (at least 1) entries ending at `end` map consecutive pages up to
    /// `end`'s (1 if `end` is unmapped): the run a range-mapping cache entry ending there can hold.
    #[inline]
    pub fn consecutive_run_back(&self, end: Lpn, cap: u32) -> u32 {
        let Some(last) = self.entry(end) else { return 1 };
        let more = if self.recovered.is_empty() {
            let to = end.index();
            run_continues(last, self.image[to + 1 - cap as usize..to].iter().rev().copied(), -1)
        } else {
            run_continues(last, (1..cap).map(|i| self.entry(end.back(i))), -1)
        };
        1 + more
    }

    /// Brings an LPN's entry toward the CPU cache (a hint; see `Ftl::prefetch`).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some(entry) = self.image.get(lpn.index()) {
            crate::mem::prefetch(entry);
        }
    }

    /// Brings the flash state of a TP's copy toward the CPU cache ahead of [`Self::fetch`] (a hint).
    #[inline]
    pub fn prefetch_copy(&self, tp: Tpn, flash: &FlashArray) {
        if let Some(ppn) = self.gtd.get(tp.index()).copied().flatten() {
            flash.prefetch_page(ppn);
        }
    }

    /// Reads the newest copy of a TP (one translation read); `false` if the TP was never written,
    /// which costs nothing (every entry is unmapped).
    pub fn fetch(&self, tp: Tpn, ctx: &mut FtlCtx) -> Result<bool> {
        let Some(ppn) = self.location(tp) else { return Ok(false) };
        let spare = ctx.read(ppn, self.traffic)?;
        if spare.kind != PageKind::Translation || spare.logical != tp.get() {
            return Err(SimError::Other(format!(
                "GTD maps translation page {tp} to PPN {ppn}, which holds {:?} page {}",
                spare.kind, spare.logical
            )));
        }
        Ok(true)
    }

    /// Stages an entry for the next copy of its TP, which the caller writes with [`write_back`]
    /// before the current operation ends.
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>) {
        self.image[lpn.index()] = ppn;
        if !self.recovered.is_empty() {
            self.recovered.remove(&lpn);
        }
    }

    /// Programs a host data page and stamps its PSN.
    #[inline]
    pub fn program_data(&mut self, ppn: Ppn, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        ctx.program(ppn, PageKind::Data, lpn, version, Purpose::Host)?;
        self.stamp(ppn);
        Ok(())
    }

    /// Brings the PSN of a page about to be programmed toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch_stamp(&self, ppn: Ppn) {
        if let Some(psn) = self.psn.get(ppn.index()) {
            crate::mem::prefetch(psn);
        }
    }

    #[inline]
    fn stamp(&mut self, ppn: Ppn) {
        self.psn[ppn.index()] = self.next_psn;
        self.next_psn += 1;
    }

    /// Call first from `Relocate::relocated`: stamps the moved page, follows a moved TP in the GTD,
    /// and returns the LPN of a moved data page (which the scheme must remap to `new`).
    #[inline]
    pub fn relocated(&mut self, spare: Spare, old: Ppn, new: Ppn) -> Result<Option<Lpn>> {
        self.stamp(new);
        match spare.kind {
            PageKind::Data => Ok(Some(Lpn::new(spare.logical))),
            PageKind::Translation => {
                let slot = &mut self.gtd[spare.logical as usize];
                if *slot != Some(old) {
                    return Err(SimError::Other(format!(
                        "GC moved translation page {} from PPN {old}, but the GTD points to {:?}",
                        spare.logical, *slot
                    )));
                }
                *slot = Some(new);
                Ok(None)
            }
            PageKind::Metadata | PageKind::InvalidationLog | PageKind::Delta | PageKind::Summary => Ok(None),
        }
    }

    /// Programs the new copy of `tp` at `ppn` (allocated by [`write_back`]).
    fn commit(&mut self, tp: Tpn, ppn: Ppn, complete: bool, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        self.fold_recovered(tp);
        let t = tp.index();
        // Versions compare by serial-number arithmetic; 0 marks an erased page and is skipped.
        self.versions[t] = self.versions[t].wrapping_add(1).max(1);
        ctx.program(ppn, PageKind::Translation, tp, self.versions[t], self.traffic)?;
        self.stamp(ppn);
        if complete {
            self.covered[t] = self.psn[ppn.index()];
        }
        if let Some(old) = self.gtd[t].replace(ppn) {
            blocks.invalidate(old, ctx.flash)?;
        }
        Ok(())
    }

    /// Moves the recovered entries of a TP into its image (they go into the copy being written).
    fn fold_recovered(&mut self, tp: Tpn) {
        if !self.recovered.is_empty() && tp.get() < self.user_tps {
            let lpns = self.lpns(tp);
            let keys: Vec<Lpn> = self.recovered.range(lpns).map(|(&l, _)| l).collect();
            for lpn in keys {
                self.image[lpn.index()] = self.recovered.remove(&lpn).expect("key just listed");
            }
        }
    }

    /// Takes `map` (LPN -> PPN, every page on `flash`) as the content of the map, with no
    /// translation page written yet (preconditioning's shared layout; the flush that follows
    /// writes them all). Stamps every programmed data page with a PSN in program order, block by
    /// block, the open blocks last: recovery orders a unit's data blocks by their first page's
    /// PSN, and an open block goes on being written after the others.
    pub fn adopt(&mut self, map: Vec<Option<Ppn>>, blocks: &BlockManager, flash: &FlashArray) {
        debug_assert_eq!(map.len(), self.image.len());
        self.image = map;
        self.gtd.fill(None);
        self.versions.fill(0);
        self.covered.fill(0);
        self.recovered.clear();
        let g = flash.geometry().clone();
        for open in [false, true] {
            for pbn in g.blocks() {
                let written = flash.write_pointer(pbn);
                let role = blocks.role(pbn);
                if written > 0 && flash.block_kind(pbn) == PageKind::Data && (role == BlockRole::Open) == open {
                    for ppn in g.pages_below(pbn, written) {
                        self.stamp(ppn);
                    }
                }
            }
        }
    }

    /// Marks `old` (a page and its LPN) as the page the host write in progress replaces (`None`
    /// when it ends): GC asking whether it is current hears that it is not, although the
    /// mapping still points to it.
    pub fn set_replacing(&mut self, old: Option<(Ppn, Lpn)>) {
        self.replacing = old;
    }

    /// Whether the page at `ppn` holding `spare` is the one the host write in progress replaces.
    /// GC during the write's allocation may erase its block and program another page at the
    /// same address (a translation page, or another LPN's data): that one is not replaced.
    pub fn is_replaced(&self, ppn: Ppn, spare: Spare) -> bool {
        spare.kind == PageKind::Data && self.replacing == Some((ppn, Lpn::new(spare.logical)))
    }

    /// Tags TP reads and writes as recovery traffic (`true`) or translation traffic (`false`).
    pub fn set_recovering(&mut self, recovering: bool) {
        self.traffic = if recovering { Purpose::Recovery } else { Purpose::Translation };
    }

    /// A TP holding recovered entries not yet written ([`write_back_recovered`] writes them all).
    pub fn tp_with_recovered_entries(&self) -> Option<Tpn> {
        self.recovered.keys().next().map(|&lpn| self.tp_of(lpn))
    }

    /// Demand-based recovery (paper 000 Fig 8.1, spec 5.14), with the scheme's caches emptied;
    /// then [`BlockManager::rebuild`] with [`TranslationStore::is_live`].
    ///
    /// 1. Reads the first page of every block (block type and sequence number).
    /// 2. Reads every page of the translation blocks: the newest version of each TP is its GTD
    ///    entry, and that copy's spare says up to which PSN it holds every change (`MinPSN`).
    /// 3. Scans data pages newest first, one allocation unit at a time (pages of a unit's data
    ///    blocks are programmed in block-sequence order), and stops the unit at the first page no
    ///    newer than the oldest `MinPSN`; a page newer than its own TP's `MinPSN` is a modified
    ///    entry (the newest such page of an LPN wins). With [`StoreLayout::interleaved_data`] the
    ///    scan stops each block at that page instead (a block's pages are still in program order).
    ///
    /// 4. Reads the newest copy of every TP: the whole map, which tells which data pages are valid.
    ///
    /// An LPN whose recovered mapping no longer holds it (its page was erased since) was trimmed
    /// and becomes unmapped; a trim not yet written to its TP is lost (the LPN comes back with its
    /// last write, as from PFTL's recovery).
    ///
    /// With ILog (paper 000 Fig 8.4) each data block's recovered invalid flags are read first
    /// (one invalidation page per block, none for the same page twice in a row) and its flagged
    /// pages are not read: each was superseded by a newer page on flash.
    pub fn recover(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        let g = ctx.flash.geometry().clone();
        self.gtd.fill(None);
        self.versions.fill(0);
        self.recovered.clear();
        let mut translation_blocks = Vec::new();
        let mut data_blocks: Vec<Vec<(u32, Pbn)>> = vec![Vec::new(); blocks.units() as usize];
        for pbn in g.blocks() {
            let first = g.first_page(pbn);
            let Some(spare) = ctx.probe_spare(first) else { continue };
            match spare.kind {
                PageKind::Translation => translation_blocks.push(pbn),
                PageKind::Data => data_blocks[blocks.unit_of(pbn) as usize].push((self.psn[first.index()], pbn)),
                PageKind::Metadata | PageKind::InvalidationLog | PageKind::Delta | PageKind::Summary => {}
            }
        }
        for &pbn in &translation_blocks {
            for ppn in g.pages_below(pbn, ctx.flash.write_pointer(pbn)).rev() {
                let Some(spare) = ctx.probe_spare(ppn) else { continue };
                let t = spare.logical as usize;
                if t < self.gtd.len()
                    && (self.gtd[t].is_none() || spare.version.wrapping_sub(self.versions[t]) as i32 > 0)
                {
                    self.gtd[t] = Some(ppn);
                    self.versions[t] = spare.version;
                }
            }
        }
        for (t, covered) in self.covered.iter_mut().enumerate() {
            if self.gtd[t].is_none() {
                *covered = 0;
            }
        }
        let oldest = self.covered[..self.user_tps as usize].iter().copied().min().unwrap_or(0);
        for unit in &mut data_blocks {
            unit.sort_unstable_by(|a, b| b.cmp(a));
            'unit: for &(_, pbn) in unit.iter() {
                let flags = blocks.recovered_flags(pbn, ctx).map(<[u64]>::to_vec);
                for (offset, ppn) in g.pages_below(pbn, ctx.flash.write_pointer(pbn)).enumerate().rev() {
                    if flags.as_deref().is_some_and(|f| Ilog::flagged(f, offset as u32)) {
                        continue;
                    }
                    let Some(spare) = ctx.probe_spare(ppn) else { continue };
                    let psn = self.psn[ppn.index()];
                    if psn <= oldest && self.interleaved_data {
                        break; // older pages of this block are covered; other blocks may be newer
                    }
                    if psn <= oldest {
                        break 'unit;
                    }
                    if spare.logical >= self.logical_pages {
                        continue;
                    }
                    let lpn = Lpn::new(spare.logical);
                    if psn <= self.covered[self.tp_of(lpn).index()] {
                        continue;
                    }
                    let newer = self.recovered.get(&lpn).is_none_or(|p| p.is_none_or(|p| self.psn[p.index()] < psn));
                    if newer {
                        self.recovered.insert(lpn, Some(ppn));
                    }
                }
            }
        }
        for lpn in Lpn::range(0, self.logical_pages) {
            if self.entry(lpn).is_some_and(|ppn| !holds(ctx.flash, ppn, lpn)) {
                self.recovered.insert(lpn, None);
            }
        }
        for tp in self.tps() {
            self.fetch(tp, ctx)?;
        }
        Ok(())
    }

    /// Whether a programmed page is live for the recovered store: the newest copy of its TP, or
    /// the page its LPN maps to (for [`BlockManager::rebuild`] after [`TranslationStore::recover`]).
    pub fn is_live(&self, ppn: Ppn, spare: Spare) -> bool {
        match spare.kind {
            PageKind::Data => spare.logical < self.logical_pages && self.entry(Lpn::new(spare.logical)) == Some(ppn),
            PageKind::Translation => {
                (spare.logical as usize) < self.gtd.len() && self.location(Tpn::new(spare.logical)) == Some(ppn)
            }
            PageKind::Metadata | PageKind::InvalidationLog | PageKind::Delta | PageKind::Summary => false,
        }
    }

    /// Checks that every GTD entry points to the valid newest copy of its TP and that no other
    /// translation page is valid.
    pub fn check(&self, blocks: &BlockManager, flash: &FlashArray) -> std::result::Result<(), String> {
        if !self.recovered.is_empty() {
            return Err(format!(
                "{} mapping changes rebuilt by recovery are held outside the cache (recovery writes them back)",
                self.recovered.len()
            ));
        }
        for (tp, ppn) in self.gtd.iter().enumerate() {
            let Some(ppn) = *ppn else { continue };
            if !blocks.is_valid(ppn, flash) {
                return Err(format!("GTD maps translation page {tp} to PPN {ppn}, which is not valid"));
            }
            let spare = flash.spare_unchecked(ppn);
            if spare.kind != PageKind::Translation || spare.logical != tp as u32 || spare.version != self.versions[tp] {
                return Err(format!(
                    "GTD maps translation page {tp} (version {}) to PPN {ppn}, which holds {:?} page {} version {}",
                    self.versions[tp], spare.kind, spare.logical, spare.version
                ));
            }
        }
        let g = flash.geometry();
        let written = self.gtd.iter().flatten().count();
        let valid = g
            .blocks()
            .filter(|&b| flash.block_kind(b) == PageKind::Translation && flash.write_pointer(b) > 0)
            .map(|b| blocks.valid_count(b, flash) as usize)
            .sum::<usize>();
        if valid != written {
            return Err(format!("{valid} valid translation pages but the GTD locates {written}"));
        }
        Ok(())
    }

    /// The translation pages the GTD points at, auxiliary ones included (for the shared invariant check).
    pub fn referenced_pages(&self) -> Vec<PageRef> {
        Tpn::range(0, self.gtd.len() as u32)
            .filter_map(|tp| {
                self.location(tp).map(|ppn| PageRef { ppn, kind: PageKind::Translation, logical: tp.get() })
            })
            .collect()
    }

    /// The GTD's SRAM, `bits` per entry (32 for a PPN; CDFTL adds its CTP slot pointer).
    pub fn gtd_sram(&self, bits: u32) -> SramItem {
        SramItem {
            structure: format!("GTD ({} entries x {bits} bits)", self.directory_tps),
            bytes: (self.directory_tps as u64 * bits as u64).div_ceil(8),
        }
    }

    /// Simulator memory of the store.
    pub fn state_bytes(&self) -> usize {
        (self.gtd.len() * 3 + self.image.len() + self.psn.len()) * 4 + self.recovered.len() * 16
    }
}

/// Whether `ppn` is a programmed data page of `lpn`.
fn holds(flash: &FlashArray, ppn: Ppn, lpn: Lpn) -> bool {
    if ppn.get() >= flash.geometry().total_pages() || !flash.is_programmed(ppn) {
        return false;
    }
    let spare = flash.spare_unchecked(ppn);
    spare.kind == PageKind::Data && spare.logical == lpn.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, OpLog};
    use crate::metrics::CacheStats;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// 1 die, 1 plane, 16 blocks x 8 pages, 32-byte pages: 8 entries per TP; 40 logical pages.
    fn config() -> Config {
        ConfigBuilder::new()
            .set("device.geometry.planes_per_die=1")
            .unwrap()
            .set("device.geometry.blocks_per_plane=16")
            .unwrap()
            .set("device.geometry.pages_per_block=8")
            .unwrap()
            .set("device.geometry.page_size=32")
            .unwrap()
            .set("device.geometry.sector_size=32")
            .unwrap()
            .set("device.logical_pages=40")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap()
            .build()
            .unwrap()
    }

    #[test]
    fn consecutive_runs_are_measured_both_ways_with_recovered_entries_first() {
        let mut store = TranslationStore::new(&config()).unwrap();
        let ppns = [Some(10), Some(11), Some(12), None, Some(20), Some(21), Some(5), Some(6)];
        for (lpn, ppn) in ppns.into_iter().enumerate() {
            store.set(Lpn::new(lpn as u32), ppn.map(Ppn::new));
        }
        let run = |store: &TranslationStore, start, cap| store.consecutive_run(Lpn::new(start), cap);
        let back = |store: &TranslationStore, end, cap| store.consecutive_run_back(Lpn::new(end), cap);
        assert_eq!(run(&store, 0, 8), (3, Some(Ppn::new(10))));
        assert_eq!(run(&store, 1, 1), (1, Some(Ppn::new(11))), "the cap bounds the run");
        assert_eq!(run(&store, 3, 4), (1, None), "an unmapped entry is a run of one");
        assert_eq!((back(&store, 2, 3), back(&store, 2, 2), back(&store, 5, 6), back(&store, 3, 3)), (3, 2, 2, 1));
        // A recovered entry is read before the image, in both directions.
        store.recovered.insert(Lpn::new(3), Some(Ppn::new(13)));
        assert_eq!((run(&store, 0, 8), back(&store, 3, 4)), ((4, Some(Ppn::new(10))), 4));
    }

    /// GC during a host write's allocation can erase the replaced page's block and program
    /// another page at its address; only the replaced page itself is reported not current (the
    /// DFTL + ILog bench once stopped on a translation page written there).
    #[test]
    fn only_the_replaced_page_itself_is_replaced() {
        let mut store = TranslationStore::new(&config()).unwrap();
        let (ppn, lpn) = (Ppn::new(9), Lpn::new(3));
        let page = |kind, logical| Spare { kind, logical, version: 1 };
        store.set_replacing(Some((ppn, lpn)));
        assert!(store.is_replaced(ppn, page(PageKind::Data, 3)));
        assert!(!store.is_replaced(ppn, page(PageKind::Translation, 3)), "a translation page at its address");
        assert!(!store.is_replaced(ppn, page(PageKind::Data, 4)), "another LPN's page at its address");
        assert!(!store.is_replaced(Ppn::new(10), page(PageKind::Data, 3)));
        store.set_replacing(None);
        assert!(!store.is_replaced(ppn, page(PageKind::Data, 3)));
    }

    /// A write-through toy scheme: every host write updates its TP at once (read + program),
    /// and a GC move of a data page does the same from inside GC.
    struct Toy {
        store: TranslationStore,
        pending: Vec<(Lpn, Ppn)>,
        tp_moves: u32,
    }

    impl Relocate for Toy {
        fn relocated(
            &mut self,
            blocks: &mut BlockManager,
            spare: Spare,
            old: Ppn,
            new: Ppn,
            ctx: &mut FtlCtx,
        ) -> Result<()> {
            if let Some(lpn) = self.store.relocated(spare, old, new)? {
                self.pending.push((lpn, new));
                let tp = self.store.tp_of(lpn);
                write_back(self, blocks, tp, true, ctx)?;
            } else {
                self.tp_moves += 1;
            }
            Ok(())
        }
    }

    impl TranslationOwner for Toy {
        fn store(&mut self) -> &mut TranslationStore {
            &mut self.store
        }
        fn publish(&mut self, tp: Tpn) -> bool {
            let mine: Vec<_> = self.pending.iter().copied().filter(|&(l, _)| self.store.tp_of(l) == tp).collect();
            self.pending.retain(|&(l, _)| self.store.tp_of(l) != tp);
            for (lpn, ppn) in mine {
                self.store.set(lpn, Some(ppn));
            }
            true
        }
    }

    struct Rig {
        flash: FlashArray,
        ops: OpLog,
        cache: CacheStats,
        blocks: BlockManager,
        toy: Toy,
    }

    impl Rig {
        fn new() -> Rig {
            let c = config();
            Rig {
                flash: FlashArray::new(&c.device.geometry, c.device.program_order),
                ops: OpLog::new(),
                cache: CacheStats::default(),
                blocks: BlockManager::new(&c, DEMAND_STREAMS),
                toy: Toy { store: TranslationStore::new(&c).unwrap(), pending: Vec::new(), tp_moves: 0 },
            }
        }

        fn write(&mut self, lpn: Lpn, version: u32) {
            let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
            if let Some(old) = self.toy.store.entry(lpn) {
                self.blocks.invalidate(old, ctx.flash).unwrap();
            }
            let ppn = self.blocks.allocate(0, DATA_STREAM, &mut self.toy, &mut ctx).unwrap();
            self.toy.store.program_data(ppn, lpn, version, &mut ctx).unwrap();
            self.toy.pending.push((lpn, ppn));
            let tp = self.toy.store.tp_of(lpn);
            write_back(&mut self.toy, &mut self.blocks, tp, true, &mut ctx).unwrap();
        }

        fn assert_consistent(&self) {
            self.toy.store.check(&self.blocks, &self.flash).unwrap();
            self.blocks.check(&self.flash).unwrap();
            assert!(self.toy.pending.is_empty());
        }
    }

    #[test]
    fn paper_000_sizes_2048_entries_per_tp_and_a_2_kb_gtd_over_512_tps() {
        let store = TranslationStore::new(&Config::preset("mlc8g").unwrap()).unwrap();
        assert_eq!(store.entries_per_tp(), 2048);
        assert_eq!(store.tp_count(), 496);
        assert_eq!(store.gtd_sram(32).bytes, 2048);
        assert_eq!(store.gtd_sram(35).bytes, 2240); // CDFTL, 2 CTP slots: 2.19 KB
        assert_eq!(store.lpns(Tpn::new(495)), Lpn::new(495 * 2048)..Lpn::new(1_015_808));
    }

    #[test]
    fn a_write_back_programs_a_new_copy_invalidates_the_old_and_moves_the_gtd() {
        let mut r = Rig::new();
        assert_eq!(r.toy.store.location(Tpn::new(1)), None);
        r.write(Lpn::new(9), 1);
        // The TP had no copy: no read, one program.
        assert_eq!(r.ops.count(OpKind::Read, Purpose::Translation), 0);
        assert_eq!(r.ops.count(OpKind::Program, Purpose::Translation), 1);
        let first = r.toy.store.location(Tpn::new(1)).unwrap();
        assert_eq!(r.flash.spare_unchecked(first).logical, 1);
        r.write(Lpn::new(10), 1);
        assert_eq!(r.ops.count(OpKind::Read, Purpose::Translation), 1);
        let second = r.toy.store.location(Tpn::new(1)).unwrap();
        assert_ne!(first, second);
        assert!(r.flash.is_programmed(first) && !r.blocks.is_valid(first, &r.flash));
        assert_eq!(r.flash.spare_unchecked(second).version, 2);
        assert_eq!(r.toy.store.entry(Lpn::new(9)), Some(Ppn::new(0)));
        assert_eq!(r.toy.store.entry(Lpn::new(10)), Some(Ppn::new(1)));
        assert_eq!(r.toy.store.entry(Lpn::new(11)), None);
        r.assert_consistent();
    }

    #[test]
    fn fetch_reads_the_newest_copy_once_and_an_unwritten_tp_costs_nothing() {
        let mut r = Rig::new();
        r.write(Lpn::new(3), 1);
        let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
        assert!(r.toy.store.fetch(Tpn::new(0), &mut ctx).unwrap());
        assert!(!r.toy.store.fetch(Tpn::new(4), &mut ctx).unwrap());
        assert_eq!(ctx.ops.count(OpKind::Read, Purpose::Translation), 1);
    }

    #[test]
    fn gc_moves_translation_pages_and_writes_tps_back_from_inside_gc() {
        let mut r = Rig::new();
        let mut version = [0u32; 40];
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for _ in 0..600 {
            let lpn = rng.gen_range(0..40u32);
            version[lpn as usize] += 1;
            r.write(Lpn::new(lpn), version[lpn as usize]);
            r.assert_consistent();
        }
        assert!(r.blocks.gc_victims() > 0);
        assert!(r.ops.count(OpKind::Program, Purpose::Gc) > r.toy.tp_moves as u64);
        assert!(r.toy.tp_moves > 0);
        for lpn in 0..40 {
            let ppn = r.toy.store.entry(Lpn::new(lpn)).unwrap();
            assert!(holds(&r.flash, ppn, Lpn::new(lpn)), "LPN {lpn} -> {ppn}");
            assert_eq!(r.flash.spare_unchecked(ppn).version, version[lpn as usize]);
        }
    }

    #[test]
    fn recovery_rebuilds_the_gtd_and_finds_changes_newer_than_their_tp() {
        let mut r = Rig::new();
        let mut version = [1u32; 40];
        for lpn in 0..40 {
            r.write(Lpn::new(lpn), 1);
        }
        for lpn in [5, 17, 33] {
            version[lpn as usize] = 2;
            r.write(Lpn::new(lpn), 2);
        }
        // Three changes that never reached their TP (a write-back cache lost them).
        for lpn in [6u32, 18, 6] {
            let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
            let old = (0..128)
                .find(|&p| holds(ctx.flash, Ppn::new(p), Lpn::new(lpn)) && r.blocks.is_valid(Ppn::new(p), ctx.flash))
                .unwrap();
            r.blocks.invalidate(Ppn::new(old), ctx.flash).unwrap();
            let ppn = r.blocks.allocate(0, DATA_STREAM, &mut r.toy, &mut ctx).unwrap();
            version[lpn as usize] += 1;
            r.toy.store.program_data(ppn, Lpn::new(lpn), version[lpn as usize], &mut ctx).unwrap();
        }
        let gtd: Vec<_> = (0..5).map(|t| r.toy.store.location(Tpn::new(t))).collect();
        let before = r.ops.count(OpKind::SpareRead, Purpose::Recovery);
        let tp_reads = r.ops.count(OpKind::Read, Purpose::Translation);
        let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
        r.toy.store.recover(&mut r.blocks, &mut ctx).unwrap();
        let store = &r.toy.store;
        r.blocks.rebuild(&r.flash, |ppn, spare| store.is_live(ppn, spare));
        let reads = r.ops.count(OpKind::SpareRead, Purpose::Recovery) - before;
        let tp_reads = r.ops.count(OpKind::Read, Purpose::Translation) - tp_reads;
        assert_eq!(tp_reads, 5, "the newest copy of each of the 5 TPs");
        assert_eq!(gtd, (0..5).map(|t| r.toy.store.location(Tpn::new(t))).collect::<Vec<_>>());
        let check = |r: &Rig| {
            for lpn in 0..40 {
                let ppn = r.toy.store.entry(Lpn::new(lpn)).unwrap();
                assert!(holds(&r.flash, ppn, Lpn::new(lpn)), "LPN {lpn} -> {ppn}");
                assert_eq!(r.flash.spare_unchecked(ppn).version, version[lpn as usize], "LPN {lpn}");
            }
        };
        check(&r);
        // Fewer reads than a full scan: m first pages + translation pages + the newest data pages.
        let g = r.flash.geometry().clone();
        assert!(reads < (g.total_blocks() + g.total_pages()) as u64, "{reads}");
        // The next write of a TP folds its recovered entries in; the rest stay recovered.
        let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
        write_back(&mut r.toy, &mut r.blocks, Tpn::new(0), true, &mut ctx).unwrap();
        assert_eq!(r.toy.store.tp_with_recovered_entries(), Some(Tpn::new(2)));
        let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
        write_back(&mut r.toy, &mut r.blocks, Tpn::new(2), true, &mut ctx).unwrap();
        assert_eq!(r.toy.store.tp_with_recovered_entries(), None);
        check(&r);
        r.assert_consistent();
    }

    #[test]
    fn recovery_brings_back_an_lpn_trimmed_only_in_sram_and_rebuilds_validity() {
        let mut r = Rig::new();
        for lpn in 0..8 {
            r.write(Lpn::new(lpn), 1);
        }
        let trimmed = r.toy.store.entry(Lpn::new(4)).unwrap();
        r.blocks.invalidate(trimmed, &r.flash).unwrap();
        let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
        r.toy.store.recover(&mut r.blocks, &mut ctx).unwrap();
        let store = &r.toy.store;
        r.blocks.rebuild(&r.flash, |ppn, spare| store.is_live(ppn, spare));
        assert_eq!(r.toy.store.entry(Lpn::new(4)), Some(trimmed), "the trim never reached flash");
        assert!(r.blocks.is_valid(trimmed, &r.flash));
        assert!(holds(&r.flash, r.toy.store.entry(Lpn::new(3)).unwrap(), Lpn::new(3)));
    }
}
