//! Functional state of the flash array: what every page holds and which NAND rules it obeys.
//!
//! Only what is physically on flash: whether each page is programmed, and its spare record.
//! Which programmed pages are still valid is the FTL's knowledge, kept in its SRAM
//! (`ftl::common::Validity`), lost at power loss and rebuilt by recovery.
//!
//! Memory per physical page: 4 bytes logical number + 4 bytes version in the spare area model,
//! one 8-byte record per page (a read returns both and a program writes both, so a page costs
//! one cache line, not one in each of two arrays). A free (erased) page carries a reserved
//! version, so "free" costs nothing extra and works under either program-order rule. Per-block
//! bookkeeping is amortised over the block's pages.

use serde::Serialize;

use super::deltas::{DeltaEntry, DeltaPages};
use super::{Addressing, BlockPage, Geometry, PageRecords, Pbn, Ppn};
use crate::config::ProgramOrder;
use crate::error::{Result, SimError};
use crate::mem::{filled_vec, zeroed_vec};

/// What a page holds, recorded in its spare area. Every page of a block holds one kind (the
/// block's kind is set by its first program); the FTL's write streams decide which blocks hold which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum PageKind {
    /// Host data.
    Data = 0,
    /// A page of the logical-to-physical map (demand-based FTLs).
    Translation = 1,
    /// Other FTL metadata: checkpoints, block summaries.
    Metadata = 2,
    /// A log of invalidated pages (ILog, paper 000 chapter 8).
    InvalidationLog = 3,
    /// Compressed deltas of data pages (Delta-FTL, paper 001 chapter 4).
    Delta = 4,
    /// The last page of a block under `device.geometry.summary_page`: what the block's other
    /// pages hold, written when the last of them is. Never valid data, never moved by GC.
    Summary = 5,
}
pub const PAGE_KINDS: usize = 6;

impl PageKind {
    pub const ALL: [PageKind; PAGE_KINDS] = [
        PageKind::Data,
        PageKind::Translation,
        PageKind::Metadata,
        PageKind::InvalidationLog,
        PageKind::Delta,
        PageKind::Summary,
    ];
}

/// The FTL-visible content of a page's spare area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spare {
    pub kind: PageKind,
    /// LPN of a data page, logical translation-page number of a translation page, and so on.
    pub logical: u32,
    /// The version the writer assigned (the oracle's version for host data; a per-page
    /// counter for FTL metadata). Newest version wins on recovery.
    pub version: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, no page programmed.
    Erased,
    /// Some page may still be programmed.
    Partial,
    /// No page may be programmed before the next erase (every data page programmed, or under
    /// `sequential` the last one).
    Full,
}

/// The version a free page carries in the array's spare model: writers' versions start at 1 (a
/// zeroed array is an erased one, so untouched parts of a large device cost no resident memory).
const ERASED: u32 = 0;
/// The version of a page whose program a power loss interrupted: programmed, but unreadable.
const CORRUPT: u32 = u32::MAX;

/// The version in a page's spare record (the logical number is the low half).
#[inline(always)]
fn version_of(record: u64) -> u32 {
    (record >> 32) as u32
}

#[derive(Debug, Clone, Copy)]
struct BlockMeta {
    /// One past the highest programmed offset (under `sequential`, the lowest offset that may
    /// still be programmed).
    write_ptr: u32,
    /// Pages programmed since the erase.
    programmed: u32,
    erases: u32,
    kind: PageKind,
    /// The summary page is programmed (`summary_page`; it counts in neither `write_ptr` nor
    /// `programmed`, and its page reads as free to everything but [`FlashArray::read`]).
    summarized: bool,
}

impl Default for BlockMeta {
    fn default() -> Self {
        BlockMeta { write_ptr: 0, programmed: 0, erases: 0, kind: PageKind::Data, summarized: false }
    }
}

pub struct FlashArray {
    geometry: Geometry,
    /// The geometry's address arithmetic, to find a page's block and offset without a division.
    addressing: Addressing,
    order: ProgramOrder,
    /// Each page's spare record: its logical number in the low half, its version in the high.
    records: Vec<u64>,
    blocks: Vec<BlockMeta>,
    /// What each page's data is, for content-aware schemes ([`FlashArray::enable_payload`]).
    payload: Option<PageRecords<u64>>,
    /// How the controller programmed each page ([`FlashArray::enable_program_modes`]).
    program_modes: Option<PageRecords<u8>>,
    /// The headers of delta pages ([`FlashArray::program_deltas`]), kept once one is programmed.
    deltas: Option<DeltaPages>,
}

impl FlashArray {
    pub fn new(geometry: &Geometry, order: ProgramOrder) -> Self {
        let pages = geometry.total_pages() as usize;
        FlashArray {
            geometry: geometry.clone(),
            addressing: geometry.addressing(),
            order,
            records: zeroed_vec(pages),
            blocks: filled_vec(geometry.total_blocks() as usize, BlockMeta::default()),
            payload: None,
            program_modes: None,
            deltas: None,
        }
    }

    /// Keeps, from now on, a record per page of how the controller programmed it (DiffECC's
    /// write mode, which sets the page's read latency and ECC), 0 for pages programmed without
    /// one. Controller metadata: the FTL neither writes nor reads it.
    pub fn enable_program_modes(&mut self) {
        if self.program_modes.is_none() {
            self.program_modes = Some(PageRecords::new(self.geometry.total_pages()));
        }
    }

    /// Records how the controller programmed `ppn` (call right after its program).
    pub fn set_program_mode(&mut self, ppn: Ppn, mode: u8) -> Result<()> {
        self.check_ppn("record the program mode of", ppn)?;
        if self.is_free(ppn) {
            let rule = "program mode recorded for a page that is not programmed".into();
            return Err(SimError::FlashRule { op: "record the program mode of", ppn, rule });
        }
        let Some(records) = self.program_modes.as_mut() else {
            let rule = "program modes are not enabled".into();
            return Err(SimError::FlashRule { op: "record the program mode of", ppn, rule });
        };
        records.set(ppn, mode);
        Ok(())
    }

    /// How `ppn` was programmed (0 if no mode was recorded), or `None` when program modes are
    /// not enabled.
    pub fn program_mode(&self, ppn: Ppn) -> Option<u8> {
        self.program_modes.as_ref().map(|records| records.get(ppn))
    }

    /// Keeps a payload record per page from now on (a content fingerprint, or the size of a
    /// compressed delta: the scheme decides what it means), 0 for pages programmed without one.
    pub fn enable_payload(&mut self) {
        if self.payload.is_none() {
            self.payload = Some(PageRecords::new(self.geometry.total_pages()));
        }
    }

    /// Programs a page (as [`FlashArray::program`]) with its payload record.
    pub fn program_with_payload(
        &mut self,
        ppn: Ppn,
        kind: PageKind,
        logical: u32,
        version: u32,
        payload: u64,
    ) -> Result<()> {
        if self.payload.is_none() {
            return Err(SimError::FlashRule { op: "program", ppn, rule: "payload records are not enabled".into() });
        }
        self.program(ppn, kind, logical, version)?;
        self.payload.as_mut().expect("checked above").set(ppn, payload);
        Ok(())
    }

    /// The payload record of a programmed page (0 if it was programmed without one), or `None`
    /// when payload records are not enabled.
    pub fn payload(&self, ppn: Ppn) -> Option<u64> {
        self.payload.as_ref().map(|records| records.get(ppn))
    }

    /// Programs a delta page (kind [`PageKind::Delta`]) whose header lists `entries`.
    pub fn program_deltas(&mut self, ppn: Ppn, logical: u32, version: u32, entries: Box<[DeltaEntry]>) -> Result<()> {
        self.program(ppn, PageKind::Delta, logical, version)?;
        self.deltas.get_or_insert_with(DeltaPages::default).set(ppn, entries);
        Ok(())
    }

    /// The deltas a programmed delta page holds (none for any other page).
    pub fn deltas(&self, ppn: Ppn) -> &[DeltaEntry] {
        self.deltas.as_ref().map_or(&[], |d| d.get(ppn))
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The geometry's address arithmetic, divisors precomputed (for per-page paths).
    #[inline]
    pub fn addressing(&self) -> Addressing {
        self.addressing
    }

    /// Bytes of simulator state this array holds per physical page (spare model included).
    pub fn state_bytes(&self) -> usize {
        self.records.len() * 8
            + self.blocks.len() * std::mem::size_of::<BlockMeta>()
            + self.payload.as_ref().map_or(0, PageRecords::state_bytes)
            + self.program_modes.as_ref().map_or(0, PageRecords::state_bytes)
            + self.deltas.as_ref().map_or(0, DeltaPages::state_bytes)
    }

    #[inline]
    fn check_ppn(&self, op: &'static str, ppn: Ppn) -> Result<()> {
        if ppn.index() < self.records.len() {
            Ok(())
        } else {
            Err(self.beyond_end(op, ppn))
        }
    }

    #[cold]
    #[inline(never)]
    fn beyond_end(&self, op: &'static str, ppn: Ppn) -> SimError {
        SimError::FlashRule { op, ppn, rule: format!("beyond the last page {}", self.records.len() - 1) }
    }

    /// The version in page `index`'s record.
    #[inline(always)]
    fn version(&self, index: usize) -> u32 {
        version_of(self.records[index])
    }

    #[inline(always)]
    fn set_record(&mut self, index: usize, logical: u32, version: u32) {
        self.records[index] = logical as u64 | (version as u64) << 32;
    }

    #[inline]
    fn is_free(&self, ppn: Ppn) -> bool {
        self.version(ppn.index()) == ERASED
    }

    /// Whether the page has been programmed since its block's erase (corrupt pages included).
    /// Its block's bookkeeping answers without the page's own state where the block has no
    /// free page below its write pointer (the usual case): an invalidation then leaves the
    /// page's cold spare record untouched.
    #[inline(always)]
    pub fn is_programmed(&self, ppn: Ppn) -> bool {
        self.is_programmed_at(self.block_page(ppn))
    }

    /// [`FlashArray::is_programmed`] of a page whose block is known.
    #[inline(always)]
    pub fn is_programmed_at(&self, page: BlockPage) -> bool {
        debug_assert_eq!(page, self.block_page(page.ppn));
        let meta = &self.blocks[page.pbn.index()];
        if page.offset >= meta.write_ptr {
            return false;
        }
        meta.programmed == meta.write_ptr || !self.is_free(page.ppn)
    }

    /// The block of `ppn` and the page's offset in it.
    #[inline]
    fn locate(&self, ppn: Ppn) -> (Pbn, u32) {
        self.addressing.locate(ppn)
    }

    #[inline]
    fn block_page(&self, ppn: Ppn) -> BlockPage {
        self.addressing.block_page(ppn)
    }

    /// Whether the page's program was interrupted by a power loss (it reads back as garbage).
    #[inline]
    pub fn is_corrupt(&self, ppn: Ppn) -> bool {
        self.version(ppn.index()) == CORRUPT
    }

    /// Whether a block holds a page whose program was interrupted.
    pub fn has_corrupt_page(&self, pbn: Pbn) -> bool {
        let first = self.geometry.first_page(pbn);
        (0..self.blocks[pbn.index()].write_ptr).any(|offset| self.is_corrupt(first.offset(offset)))
    }

    /// A program that a power loss interrupts: the page is taken (under the program-order rule,
    /// as a program) but holds nothing readable.
    pub fn program_interrupted(&mut self, ppn: Ppn, kind: PageKind) -> Result<()> {
        self.program(ppn, kind, 0, 1)?;
        self.set_record(ppn.index(), 0, CORRUPT);
        Ok(())
    }

    /// Programs a free page: each page at most once between erases, in the order the device's
    /// [`ProgramOrder`] allows, and every page of a block is of one kind.
    #[inline(always)]
    pub fn program(&mut self, ppn: Ppn, kind: PageKind, logical: u32, version: u32) -> Result<()> {
        if ppn.index() >= self.records.len() || !self.is_free(ppn) || version == ERASED || version == CORRUPT {
            return Err(self.program_error(ppn, kind, version));
        }
        let (pbn, offset) = self.locate(ppn);
        let data_pages = self.geometry.data_pages_per_block();
        let sequential = self.order == ProgramOrder::Sequential;
        let meta = &mut self.blocks[pbn.index()];
        if offset >= data_pages
            || (sequential && offset < meta.write_ptr)
            || (meta.programmed != 0 && meta.kind != kind)
        {
            return Err(self.program_error(ppn, kind, version));
        }
        meta.kind = kind;
        meta.write_ptr = meta.write_ptr.max(offset + 1);
        meta.programmed += 1;
        self.set_record(ppn.index(), logical, version);
        Ok(())
    }

    /// The rule a refused [`FlashArray::program`] broke (kept out of the program's path).
    #[cold]
    #[inline(never)]
    fn program_error(&self, ppn: Ppn, kind: PageKind, version: u32) -> SimError {
        if let Err(e) = self.check_ppn("program", ppn) {
            return e;
        }
        let (pbn, offset) = self.locate(ppn);
        let meta = &self.blocks[pbn.index()];
        let rule = if !self.is_free(ppn) {
            "page is not free (already programmed since the last erase)".to_string()
        } else if version == ERASED || version == CORRUPT {
            format!("version {version} is reserved")
        } else if offset >= self.geometry.data_pages_per_block() {
            "the block's last page holds its summary (device.geometry.summary_page)".into()
        } else if self.order == ProgramOrder::Sequential && offset < meta.write_ptr {
            format!(
                "out-of-order program: under the sequential rule the block's next programmable page is offset {}",
                meta.write_ptr
            )
        } else {
            format!("block holds {:?} pages, not {:?}", meta.kind, kind)
        };
        SimError::FlashRule { op: "program", ppn, rule }
    }

    /// Programs `count` consecutive pages of one block from `first` on, page `k` with the
    /// logical number and version `page(k)` gives: [`FlashArray::program`]'s rules, checked once
    /// for the run (preconditioning writes whole blocks this way).
    pub fn program_run(
        &mut self,
        first: Ppn,
        count: u32,
        kind: PageKind,
        mut page: impl FnMut(u32) -> (u32, u32),
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        let offset = self.addressing.page_offset(first);
        if offset + count > self.geometry.data_pages_per_block() {
            let rule = format!("a run of {count} pages from offset {offset} leaves the block");
            return Err(SimError::FlashRule { op: "program", ppn: first, rule });
        }
        // The first page's checks hold for the run: its pages follow it, free, in one block.
        let (logical, version) = page(0);
        self.program(first, kind, logical, version)?;
        let start = first.index() + 1;
        let end = first.index() + count as usize;
        if let Some(taken) = self.records[start..end].iter().position(|&r| version_of(r) != ERASED) {
            let ppn = Ppn::new((start + taken) as u32);
            return Err(SimError::FlashRule { op: "program", ppn, rule: "page is not free".into() });
        }
        for (k, i) in (1..count).zip(start..end) {
            let (logical, version) = page(k);
            if version == ERASED || version == CORRUPT {
                return Err(SimError::FlashRule {
                    op: "program",
                    ppn: Ppn::new(i as u32),
                    rule: format!("version {version} is reserved"),
                });
            }
            self.set_record(i, logical, version);
        }
        let meta = &mut self.blocks[self.addressing.block_of(first).index()];
        meta.write_ptr = meta.write_ptr.max(offset + count);
        meta.programmed += count - 1;
        if self.closes_data(first.offset(count - 1)) {
            self.program_summary(self.addressing.block_of(first))?;
        }
        Ok(())
    }

    /// Whether programming `ppn` fills its block's data pages, so that the block's summary page
    /// follows (`summary_page` on, `ppn` the last data page).
    #[inline]
    pub fn closes_data(&self, ppn: Ppn) -> bool {
        self.geometry.summary_page && self.addressing.page_offset(ppn) + 1 == self.geometry.data_pages_per_block()
    }

    /// Programs the summary page of `pbn`, once its data pages are all written.
    pub fn program_summary(&mut self, pbn: Pbn) -> Result<()> {
        let data_pages = self.geometry.data_pages_per_block();
        let ppn = self.geometry.page_at(pbn, self.geometry.pages_per_block - 1);
        let meta = &mut self.blocks[pbn.index()];
        let rule = if !self.geometry.summary_page {
            "the device has no summary pages (device.geometry.summary_page is off)".to_string()
        } else if meta.summarized {
            "page is not free (the summary page is written already)".to_string()
        } else if meta.write_ptr < data_pages {
            format!(
                "the summary page is written after the block's {data_pages} data pages, not after {}",
                meta.write_ptr
            )
        } else {
            meta.summarized = true;
            return Ok(());
        };
        Err(SimError::FlashRule { op: "program", ppn, rule })
    }

    /// Whether the summary page of `pbn` is programmed.
    pub fn is_summarized(&self, pbn: Pbn) -> bool {
        self.blocks[pbn.index()].summarized
    }

    /// Brings the state of `ppn` toward the cache ahead of use (see `Ftl::prefetch`).
    #[inline]
    pub fn prefetch_page(&self, ppn: Ppn) {
        if let (Some(meta), Some(record)) = (self.blocks.get(self.locate(ppn).0.index()), self.records.get(ppn.index()))
        {
            crate::mem::prefetch(meta);
            crate::mem::prefetch(record);
        }
    }

    /// Checks that a page may be read (it was programmed since the last erase) and returns its spare area.
    #[inline(always)]
    pub fn read(&self, ppn: Ppn) -> Result<Spare> {
        self.read_at(self.block_page(ppn))
    }

    /// [`FlashArray::read`] of a page whose block is known.
    #[inline(always)]
    pub fn read_at(&self, page: BlockPage) -> Result<Spare> {
        self.check_ppn("read", page.ppn)?;
        let version = self.version(page.ppn.index());
        if version == ERASED || version == CORRUPT {
            return self.read_unwritten(page.ppn);
        }
        Ok(self.spare_at(page))
    }

    /// A read of a page the spare model holds as free or corrupt: a programmed summary page (its
    /// logical number is its block's), or an error.
    #[cold]
    #[inline(never)]
    fn read_unwritten(&self, ppn: Ppn) -> Result<Spare> {
        if self.is_corrupt(ppn) {
            let rule = "page is corrupt (a power loss interrupted its program)".into();
            return Err(SimError::FlashRule { op: "read", ppn, rule });
        }
        let pbn = self.addressing.block_of(ppn);
        if self.geometry.summary_page && ppn == self.geometry.summary_page_of(pbn) && self.is_summarized(pbn) {
            return Ok(Spare { kind: PageKind::Summary, logical: pbn.get(), version: 1 });
        }
        let rule = "page is free (never programmed since erase)".into();
        Err(SimError::FlashRule { op: "read", ppn, rule })
    }

    /// The spare content of a programmed page, without checks (for oracles and recovery models).
    #[inline]
    pub fn spare_unchecked(&self, ppn: Ppn) -> Spare {
        self.spare_at(self.block_page(ppn))
    }

    /// [`FlashArray::spare_unchecked`] of a page whose block is known.
    #[inline]
    pub fn spare_at(&self, page: BlockPage) -> Spare {
        debug_assert_eq!(page, self.block_page(page.ppn));
        let (kind, record) = (self.blocks[page.pbn.index()].kind, self.records[page.ppn.index()]);
        Spare { kind, logical: record as u32, version: version_of(record) }
    }

    /// Erases a whole block. (Whether it still held valid data is the FTL's knowledge: the
    /// block manager refuses to erase a block its validity tracker says is not empty.)
    pub fn erase(&mut self, pbn: Pbn) -> Result<()> {
        let first = self.geometry.first_page(pbn);
        self.check_ppn("erase", first)?;
        let meta = &mut self.blocks[pbn.index()];
        let (programmed, kind) = (meta.write_ptr, meta.kind);
        meta.write_ptr = 0;
        meta.programmed = 0;
        meta.summarized = false;
        meta.erases += 1;
        if let Some(records) = self.payload.as_mut() {
            records.clear(first, programmed);
        }
        if let Some(records) = self.program_modes.as_mut() {
            records.clear(first, programmed);
        }
        if let Some(deltas) = self.deltas.as_mut().filter(|_| kind == PageKind::Delta) {
            deltas.clear(first, programmed);
        }
        let first = first.index();
        // The version half becomes ERASED (zero); the logical half is left as it was (a free
        // page's logical number means nothing).
        const _: () = assert!(ERASED == 0);
        for record in &mut self.records[first..first + programmed as usize] {
            *record &= u32::MAX as u64;
        }
        Ok(())
    }

    /// One past the highest programmed offset of the block (0 when erased): every programmed
    /// page lies below it; under `sequential`, no page below it may be programmed.
    #[inline]
    pub fn write_pointer(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn.index()].write_ptr
    }
    /// Pages programmed since the block's erase.
    pub fn programmed_count(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn.index()].programmed
    }
    pub fn erase_count(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn.index()].erases
    }
    pub fn block_kind(&self, pbn: Pbn) -> PageKind {
        self.blocks[pbn.index()].kind
    }
    pub fn block_state(&self, pbn: Pbn) -> BlockState {
        let meta = &self.blocks[pbn.index()];
        let last = match self.order {
            ProgramOrder::Sequential => meta.write_ptr,
            ProgramOrder::AnyFreePage => meta.programmed,
        };
        match meta.programmed {
            0 => BlockState::Erased,
            _ if last == self.geometry.data_pages_per_block() => BlockState::Full,
            _ => BlockState::Partial,
        }
    }
    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erases)
    }

    /// Checks a block's program bookkeeping against its pages (for invariant checks): the
    /// programmed count and the write pointer agree with the pages that hold data.
    pub fn check_block_pages(&self, pbn: Pbn) -> std::result::Result<(), String> {
        let first = self.geometry.first_page(pbn);
        let meta = &self.blocks[pbn.index()];
        let programmed: Vec<u32> =
            (0..self.geometry.pages_per_block).filter(|&offset| !self.is_free(first.offset(offset))).collect();
        let top = programmed.last().map_or(0, |&o| o + 1);
        if programmed.len() as u32 != meta.programmed || top != meta.write_ptr {
            return Err(format!(
                "block {pbn} records {} programmed pages below offset {}, but holds {} below offset {top}",
                meta.programmed,
                meta.write_ptr,
                programmed.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::BlockLayout;

    fn tiny() -> FlashArray {
        with_order(ProgramOrder::Sequential)
    }

    fn with_order(order: ProgramOrder) -> FlashArray {
        let geometry = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 4,
            page_size: 4096,
            spare_size: 64,
            spare_usable: None,
            summary_page: false,
            sector_size: 512,
            block_layout: BlockLayout::Interleaved,
        };
        FlashArray::new(&geometry, order)
    }

    #[test]
    fn a_block_with_a_summary_page_holds_one_page_less_of_data() {
        let mut f = tiny();
        f.geometry.summary_page = true;
        let (g, b0) = (f.geometry().clone(), Pbn::new(0));
        assert_eq!((g.data_pages_per_block(), g.data_pages(), g.pages_of(b0).len()), (3, 6, 3));
        let early = f.program_summary(b0).unwrap_err().to_string();
        assert!(early.contains("after the block's 3 data pages, not after 0"), "{early}");
        for offset in 0..2 {
            assert!(!f.closes_data(Ppn::new(offset)));
            f.program(Ppn::new(offset), PageKind::Data, offset, 1).unwrap();
        }
        assert!(f.closes_data(Ppn::new(2)));
        f.program(Ppn::new(2), PageKind::Data, 2, 1).unwrap();
        assert_eq!(f.block_state(b0), BlockState::Full, "every data page is written");
        // The summary page is its own kind, outside the data pages' counts.
        let data_only = f.program(Ppn::new(3), PageKind::Data, 3, 1).unwrap_err().to_string();
        assert!(data_only.contains("holds its summary"), "{data_only}");
        assert!(f.read(Ppn::new(3)).is_err(), "not written yet");
        f.program_summary(b0).unwrap();
        assert!(f.program_summary(b0).is_err(), "written once per erase");
        assert_eq!(f.read(Ppn::new(3)).unwrap().kind, PageKind::Summary);
        assert_eq!((f.write_pointer(b0), f.programmed_count(b0), f.is_programmed(Ppn::new(3))), (3, 3, false));
        f.check_block_pages(b0).unwrap();
        f.erase(b0).unwrap();
        assert!(!f.is_summarized(b0) && f.read(Ppn::new(3)).is_err());
        // A run that fills the data pages (preconditioning) writes the summary with them.
        f.program_run(Ppn::new(4), 3, PageKind::Data, |k| (k, 1)).unwrap();
        assert!(f.is_summarized(Pbn::new(1)));
    }

    #[test]
    fn a_run_programs_consecutive_pages_of_one_block_under_the_same_rules() {
        let mut f = tiny();
        f.program_run(Ppn::new(1), 3, PageKind::Data, |k| (10 + k, 1)).unwrap();
        let spares: Vec<u32> = (1..4).map(|p| f.read(Ppn::new(p)).unwrap().logical).collect();
        assert_eq!((spares, f.write_pointer(Pbn::new(0)), f.programmed_count(Pbn::new(0))), (vec![10, 11, 12], 4, 3));
        let leaves = f.program_run(Ppn::new(6), 3, PageKind::Data, |k| (k, 1)).unwrap_err().to_string();
        assert!(leaves.contains("leaves the block"), "{leaves}");
        f.program(Ppn::new(5), PageKind::Data, 7, 1).unwrap();
        let out_of_order = f.program_run(Ppn::new(4), 2, PageKind::Data, |k| (k, 1)).unwrap_err().to_string();
        assert!(out_of_order.contains("out-of-order"), "{out_of_order}");
        let reserved = f.program_run(Ppn::new(6), 2, PageKind::Data, |k| (k, k)).unwrap_err().to_string();
        assert!(reserved.contains("reserved"), "{reserved}");
    }

    #[test]
    fn program_in_order_then_read_back() {
        let mut f = tiny();
        f.program(Ppn::new(0), PageKind::Data, 42, 1).unwrap();
        f.program(Ppn::new(1), PageKind::Data, 43, 1).unwrap();
        assert_eq!(f.read(Ppn::new(1)).unwrap().logical, 43);
        assert_eq!(f.programmed_count(Pbn::new(0)), 2);
        assert!(!f.is_programmed(Ppn::new(2)));
        assert_eq!(f.block_state(Pbn::new(0)), BlockState::Partial);
    }

    #[test]
    fn reprogramming_a_page_is_rejected_with_its_ppn() {
        let mut f = tiny();
        f.program(Ppn::new(0), PageKind::Data, 1, 1).unwrap();
        let err = f.program(Ppn::new(0), PageKind::Data, 1, 2).unwrap_err().to_string();
        assert!(err.contains("PPN 0") && err.contains("not free"), "{err}");
    }

    #[test]
    fn out_of_order_program_is_rejected() {
        let mut f = tiny();
        f.program(Ppn::new(2), PageKind::Data, 1, 1).unwrap();
        let err = f.program(Ppn::new(1), PageKind::Data, 1, 1).unwrap_err().to_string();
        assert!(err.contains("out-of-order") && err.contains("PPN 1"), "{err}");
    }

    #[test]
    fn sequential_allows_gaps_that_stay_free_until_the_erase() {
        let mut f = tiny();
        f.program(Ppn::new(1), PageKind::Data, 7, 1).unwrap();
        assert!(!f.is_programmed(Ppn::new(0)));
        let err = f.program(Ppn::new(0), PageKind::Data, 8, 1).unwrap_err().to_string();
        assert!(err.contains("out-of-order") && err.contains("offset 2"), "{err}");
        f.program(Ppn::new(3), PageKind::Data, 9, 1).unwrap();
        assert_eq!((f.programmed_count(Pbn::new(0)), f.write_pointer(Pbn::new(0))), (2, 4));
        assert_eq!(f.block_state(Pbn::new(0)), BlockState::Full, "nothing is programmable past the last page");
        assert!(f.read(Ppn::new(2)).unwrap_err().to_string().contains("free"));
        f.check_block_pages(Pbn::new(0)).unwrap();
        f.erase(Pbn::new(0)).unwrap();
        assert_eq!(f.block_state(Pbn::new(0)), BlockState::Erased);
        f.program(Ppn::new(0), PageKind::Data, 8, 2).unwrap();
        f.check_block_pages(Pbn::new(0)).unwrap();
    }

    #[test]
    fn any_free_page_programs_in_any_order_but_once() {
        let mut f = with_order(ProgramOrder::AnyFreePage);
        for (ppn, lpn) in [(3, 1), (0, 2), (2, 3)] {
            f.program(Ppn::new(ppn), PageKind::Data, lpn, 1).unwrap();
        }
        assert_eq!(f.block_state(Pbn::new(0)), BlockState::Partial, "page 1 is still free");
        assert!(f.program(Ppn::new(0), PageKind::Data, 4, 1).unwrap_err().to_string().contains("not free"));
        f.program(Ppn::new(1), PageKind::Data, 4, 1).unwrap();
        assert_eq!(f.block_state(Pbn::new(0)), BlockState::Full);
        assert_eq!(f.read(Ppn::new(0)).unwrap().logical, 2);
        f.check_block_pages(Pbn::new(0)).unwrap();
    }

    #[test]
    fn payload_records_cost_nothing_until_enabled_and_are_erased_with_their_block() {
        let mut f = tiny();
        let plain = f.state_bytes();
        assert_eq!(f.payload(Ppn::new(0)), None);
        assert!(f.program_with_payload(Ppn::new(0), PageKind::Data, 1, 1, 7).is_err());
        f.enable_payload();
        assert_eq!(f.state_bytes(), plain + 8 * 8, "8 pages x 8 bytes");
        f.program_with_payload(Ppn::new(0), PageKind::Data, 1, 1, 0xfeed).unwrap();
        f.program(Ppn::new(1), PageKind::Data, 2, 1).unwrap();
        assert_eq!((f.payload(Ppn::new(0)), f.payload(Ppn::new(1))), (Some(0xfeed), Some(0)));
        f.erase(Pbn::new(0)).unwrap();
        assert_eq!(f.payload(Ppn::new(0)), Some(0));
    }

    #[test]
    fn program_modes_cost_nothing_until_enabled_are_set_after_a_program_and_erased_with_the_block() {
        let mut f = tiny();
        let plain = f.state_bytes();
        assert_eq!(f.program_mode(Ppn::new(0)), None);
        f.program(Ppn::new(0), PageKind::Data, 1, 1).unwrap();
        assert!(f.set_program_mode(Ppn::new(0), 2).unwrap_err().to_string().contains("not enabled"));
        f.enable_program_modes();
        assert_eq!(f.state_bytes(), plain + 8, "8 pages x 1 byte");
        f.set_program_mode(Ppn::new(0), 2).unwrap();
        assert!(f.set_program_mode(Ppn::new(1), 3).unwrap_err().to_string().contains("not programmed"));
        assert_eq!((f.program_mode(Ppn::new(0)), f.program_mode(Ppn::new(1))), (Some(2), Some(0)));
        f.erase(Pbn::new(0)).unwrap();
        assert_eq!(f.program_mode(Ppn::new(0)), Some(0));
    }

    #[test]
    fn an_interrupted_program_takes_the_page_and_reads_back_corrupt() {
        let mut f = tiny();
        f.program(Ppn::new(0), PageKind::Data, 1, 1).unwrap();
        f.program_interrupted(Ppn::new(1), PageKind::Data).unwrap();
        assert!(f.is_programmed(Ppn::new(1)) && f.is_corrupt(Ppn::new(1)) && f.has_corrupt_page(Pbn::new(0)));
        assert!(f.read(Ppn::new(1)).unwrap_err().to_string().contains("corrupt"));
        assert_eq!(f.read(Ppn::new(0)).unwrap().logical, 1);
        f.program(Ppn::new(2), PageKind::Data, 3, 1).unwrap();
        f.check_block_pages(Pbn::new(0)).unwrap();
        f.erase(Pbn::new(0)).unwrap();
        assert!(!f.is_corrupt(Ppn::new(1)) && !f.has_corrupt_page(Pbn::new(0)));
    }

    #[test]
    fn reading_a_free_page_is_rejected() {
        let f = tiny();
        assert!(f.read(Ppn::new(3)).unwrap_err().to_string().contains("free"));
    }

    #[test]
    fn erase_frees_every_page_of_the_block() {
        let mut f = tiny();
        f.program(Ppn::new(4), PageKind::Translation, 9, 1).unwrap();
        f.program(Ppn::new(5), PageKind::Translation, 9, 2).unwrap();
        f.erase(Pbn::new(1)).unwrap();
        assert_eq!(f.erase_count(Pbn::new(1)), 1);
        assert!(!f.is_programmed(Ppn::new(4)) && !f.is_programmed(Ppn::new(5)));
        assert_eq!(f.block_state(Pbn::new(1)), BlockState::Erased);
        f.program(Ppn::new(4), PageKind::Data, 1, 1).unwrap();
    }

    #[test]
    fn mixing_page_kinds_in_a_block_is_rejected() {
        let mut f = tiny();
        f.program(Ppn::new(0), PageKind::Data, 1, 1).unwrap();
        assert!(f.program(Ppn::new(1), PageKind::Translation, 1, 1).is_err());
    }
}
