//! CPM's mapping state in flash and SRAM: the page map (PMT) in translation pages, cached whole
//! (12 VTPs of 8 KB in the paper's 96 KB), and the cluster-block map (CBMT), one row per
//! cluster, kept in translation pages of its own after the PMT's (auxiliary pages of the same
//! store, in the same blocks) and cached row by row in the SRAM the other tables leave (spec C7,
//! C10). Kept apart from the block manager so the map GC can update it.

use crate::error::{Result, SimError};
use crate::flash::{Ppn, Spare, Tpn};
use crate::ftl::common::cache::{CachesPages, PageCache};
use crate::ftl::common::translation::{write_back, TranslationOwner, TranslationStore};
use crate::ftl::common::{BlockManager, ListSet, Relocate};
use crate::ftl::FtlCtx;

pub(super) struct CpmMap {
    pub store: TranslationStore,
    pub pmt: PageCache,
    pub cbmt: RowCache,
}

/// The cached CBMT rows, least recently used last.
pub(super) struct RowCache {
    lru: ListSet,
    dirty: Vec<bool>,
    rows_per_page: u32,
}

impl RowCache {
    pub fn new(clusters: u32, rows_per_page: u32) -> Self {
        RowCache { lru: ListSet::new(clusters as usize, 1), dirty: vec![false; clusters as usize], rows_per_page }
    }

    /// CBMT pages for `clusters` rows.
    pub fn pages(clusters: u32, rows_per_page: u32) -> u32 {
        clusters.div_ceil(rows_per_page)
    }

    pub fn len(&self) -> u32 {
        self.lru.len(0)
    }

    pub fn clear(&mut self) {
        self.lru.clear();
        self.dirty.fill(false);
    }

    pub fn memory_bytes(&self) -> usize {
        self.lru.memory_bytes() + self.dirty.len()
    }
}

impl CpmMap {
    /// Whether SRAM holds cluster `c`'s CBMT row.
    pub fn cbmt_cached(&self, c: u32) -> bool {
        self.cbmt.lru.list_of(c).is_some()
    }

    /// The translation page holding cluster `c`'s CBMT row.
    fn row_page(&self, c: u32) -> Tpn {
        self.store.aux_page(c / self.cbmt.rows_per_page)
    }

    /// An access to cluster `c`'s CBMT row (`dirty`: its valid counts or blocks change) if SRAM
    /// holds it; returns whether it does (else [`CpmMap::load_row`]).
    #[inline]
    pub fn touch_row(&mut self, c: u32, dirty: bool) -> bool {
        if self.cbmt.lru.list_of(c).is_none() {
            return false;
        }
        self.cbmt.lru.move_to_front(0, c);
        self.cbmt.dirty[c as usize] |= dirty;
        true
    }

    /// An access to cluster `c`'s CBMT row, which SRAM does not hold: evicts least recently used
    /// rows until fewer than `capacity` are cached (a dirty one's page is read and rewritten,
    /// C10), then reads the row's page.
    pub fn load_row(
        &mut self,
        blocks: &mut BlockManager,
        c: u32,
        dirty: bool,
        capacity: u32,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        debug_assert!(self.cbmt.lru.list_of(c).is_none());
        self.fit_rows(blocks, capacity.max(1) - 1, ctx)?;
        self.store.fetch(self.row_page(c), ctx)?;
        self.cbmt.lru.push_front(0, c);
        self.cbmt.dirty[c as usize] = dirty;
        Ok(())
    }

    /// Evicts least recently used rows until at most `capacity` are cached (when a new
    /// association takes the room of one, or to make room for a row).
    pub fn fit_rows(&mut self, blocks: &mut BlockManager, capacity: u32, ctx: &mut FtlCtx) -> Result<()> {
        while self.cbmt.len() > capacity {
            let victim = self.cbmt.lru.back(0).expect("a non-empty row cache has a victim");
            self.cbmt.lru.remove(victim);
            if std::mem::take(&mut self.cbmt.dirty[victim as usize]) {
                let page = self.row_page(victim);
                write_back(self, blocks, page, true, ctx)?;
            }
        }
        Ok(())
    }

    /// Writes every page holding a dirty cached row (each once) and marks the rows clean.
    pub fn flush_rows(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        let clusters = self.cbmt.dirty.len() as u32;
        let per_page = self.cbmt.rows_per_page;
        for first in (0..clusters).step_by(per_page as usize) {
            let rows = first as usize..(first + per_page).min(clusters) as usize;
            if self.cbmt.dirty[rows.clone()].iter().any(|&d| d) {
                self.cbmt.dirty[rows].fill(false);
                let page = self.row_page(first);
                write_back(self, blocks, page, true, ctx)?;
            }
        }
        Ok(())
    }

    /// The PMT page cache's and the CBMT row cache's own checks.
    pub fn check(&self, row_capacity: u32) -> std::result::Result<(), String> {
        self.pmt.check()?;
        if self.cbmt.len() > row_capacity.max(1) {
            return Err(format!("{} CBMT rows cached, room for {row_capacity}", self.cbmt.len()));
        }
        match (0..self.cbmt.dirty.len() as u32)
            .find(|&c| self.cbmt.dirty[c as usize] && self.cbmt.lru.list_of(c).is_none())
        {
            Some(c) => Err(format!("CBMT row {c} is dirty but not cached")),
            None => Ok(()),
        }
    }
}

/// The block manager collects only the translation blocks (the data blocks are the clusters'):
/// a moved page is a PMT or CBMT page, which the GTD follows.
impl Relocate for CpmMap {
    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, old: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
        match self.store.relocated(spare, old, new)? {
            None => Ok(()),
            Some(lpn) => {
                Err(SimError::Other(format!("the block manager moved data page LPN {lpn}, which a cluster holds")))
            }
        }
    }
}

impl TranslationOwner for CpmMap {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    /// A PMT page takes its cached changes; a CBMT page holds its rows as SRAM has them (a row's
    /// content is recomputed from the clusters, so nothing is staged).
    fn publish(&mut self, tp: Tpn) -> bool {
        if tp.get() < self.store.tp_count() {
            self.pmt.publish(tp, &mut self.store);
        }
        true
    }
}

impl CachesPages for CpmMap {
    fn pages(&mut self) -> &mut PageCache {
        &mut self.pmt
    }
}
