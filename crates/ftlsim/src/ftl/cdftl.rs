//! CDFTL (Qin et al., RTAS'11) as papers 000 and 002 describe it (spec 4.7, A.8, A11): a
//! two-level cache. The CMT caches single entries (temporal locality); the CTP caches whole
//! translation pages (spatial locality) and is the CMT's kick-out buffer.
//!
//! - A CMT miss looks in the CTP; a CTP hit copies the entry into the CMT with no flash access
//!   (counted as a HIT, A11). A CTP miss reads the TP into the CTP (1 read), evicting the CTP's
//!   LRU page, which is programmed back without a read if dirty (its whole content is in SRAM).
//! - CMT victim: the least recently used entry that is clean, or dirty with its TP in the CTP;
//!   a dirty one is written into the CTP copy. Dirty entries of TPs outside the CTP are never
//!   replaced (paper 002: "cold dirty entries reside in CMT"); if every entry is such, the TP of
//!   the oldest one is loaded into the CTP first (spec REC fallback).
//! - When a CTP page is written back, the dirty CMT entries of that TP are folded in and become
//!   clean (REC 5).
//! - GC: an entry in the CMT is updated there; else one whose TP is in the CTP is updated in the
//!   CTP copy (both GC hits); else a dirty CMT entry is inserted without a fetch (spec 2.7).
//! - P_rd counts CMT and CTP evictions in the denominator and dirty CTP evictions (the only
//!   replacements that write flash) in the numerator.
//!
//! Skipping ineligible dirty entries stays O(1) amortised: the victim scan parks each such entry
//! on its TP's list until that TP enters the CTP (parked entries are older than every entry
//! still in the scan order, so they rejoin it at its cold end) or the entry is hit again.

use serde::{Deserialize, Serialize};

use super::common::cache::{EntryCache, PageSlots, Policy};
use super::common::changes::Waiting;
use super::common::demand::{
    entries_in, miss_class, params_json, prefetch_relocation, sram_of, DemandFtl, DemandScheme,
};
use super::common::translation::{write_back, TranslationOwner, TranslationStore, DEMAND_LAYOUT, DEMAND_STREAMS};
use super::common::{BlockManager, ListSet, Relocate};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::check::suite::{bytes_of, quarter_map};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};
use crate::metrics::{CacheAccess, Occupancy};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CdftlParams {
    /// SRAM of the CMT in bytes (paper 000 Table 5.2: 2.06 KB = 256 entries).
    pub cmt_bytes: u64,
    /// Bits per CMT entry (LPN, PPN, valid and dirty flags: 8.25 B).
    pub entry_bits: u32,
    /// SRAM of the CTP in bytes, whole translation pages (Table 5.2: 16 KB = 2 pages of 8 KB).
    pub ctp_bytes: u64,
}

pub const INFO: FtlInfo = FtlInfo {
    name: "cdftl",
    description: "CDFTL: entry cache (CMT) over a whole-translation-page cache (CTP)",
    family: Family::DemandBased,
    build: Cdftl::build,
    params: ParamsSchema::of::<CdftlParams>(&[
        ParamSpec {
            name: "cmt_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of the entry cache (CMT), bytes",
            source: "paper 000 Table 5.2: 2.06 KB = 256 entries",
        },
        ParamSpec {
            name: "entry_bits",
            range: ParamRange::Integer { min: 1, max: 1024 },
            meaning: "bits per CMT entry (LPN, PPN, valid, dirty)",
            source: "paper 000: 66",
        },
        ParamSpec {
            name: "ctp_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of the translation-page cache (CTP), bytes of whole pages",
            source: "paper 000 Table 5.2: 16 KB = 2 pages",
        },
    ]),
    spare_layout: DEMAND_LAYOUT,
    streams: DEMAND_STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 17.0,
    spare_blocks_needed: TranslationStore::spare_blocks_needed,
    test_overrides: |c| {
        let mut sets = vec![("cmt_bytes", bytes_of(quarter_map(c) / 2, 66))];
        // One cached translation page, when the device has room for that many entries.
        let page = c.device.geometry.page_size;
        if page / 4 <= c.device.geometry.total_pages() {
            sets.push(("ctp_bytes", page as u64));
        }
        sets
    },
};

impl Default for CdftlParams {
    fn default() -> Self {
        CdftlParams { cmt_bytes: 2112, entry_bits: 66, ctp_bytes: 16_384 }
    }
}

const SCAN: u32 = 0;

/// The CMT's replacement order: the scan order (LRU at the back) plus parked dirty entries.
struct KickOutOrder {
    /// List 0: scan order; list 1 + tp: parked entries of TP tp, most recently parked first.
    lists: ListSet,
    /// Every parked entry, most recently parked first.
    parked: ListSet,
}

impl KickOutOrder {
    fn new(slots: u32, tps: u32) -> Self {
        KickOutOrder { lists: ListSet::new(slots as usize, 1 + tps as usize), parked: ListSet::new(slots as usize, 1) }
    }
    fn scan_back(&self) -> Option<u32> {
        self.lists.back(SCAN)
    }
    fn park(&mut self, slot: u32, tp: Tpn) {
        self.lists.remove(slot);
        self.lists.push_front(1 + tp.get(), slot);
        self.parked.push_front(0, slot);
    }
    fn oldest_parked(&self) -> Option<u32> {
        self.parked.back(0)
    }
    /// The TP entered the CTP: its parked entries rejoin the cold end of the scan, oldest last.
    fn unpark(&mut self, tp: Tpn) {
        while let Some(slot) = self.lists.front(1 + tp.get()) {
            self.lists.remove(slot);
            self.parked.remove(slot);
            self.lists.push_back(SCAN, slot);
        }
    }
    /// Whether a cached slot is parked: read from its scan-order node, which the caller touches
    /// anyway (the `parked` node is another cache line, needed only for parked slots).
    #[inline]
    fn is_parked(&self, slot: u32) -> bool {
        self.lists.list_of(slot).is_some_and(|list| list != SCAN)
    }
}

impl Policy for KickOutOrder {
    #[inline]
    fn insert(&mut self, slot: u32) {
        self.lists.push_front(SCAN, slot);
    }
    #[inline]
    fn touch(&mut self, slot: u32) {
        if self.is_parked(slot) {
            self.parked.remove(slot);
        }
        self.lists.move_to_front(SCAN, slot);
    }
    #[inline]
    fn remove(&mut self, slot: u32) {
        if self.is_parked(slot) {
            self.parked.remove(slot);
        }
        self.lists.remove(slot);
    }
    fn victim(&self) -> Option<u32> {
        self.lists.back(SCAN).or_else(|| self.parked.back(0))
    }
    fn clear(&mut self) {
        self.lists.clear();
        self.parked.clear();
    }
}

/// The cached translation pages: LRU over TP numbers; a copy's content is its flash copy
/// overlaid with `changes`, and it is dirty while it has changes. The changes sit in a slot of
/// entries per page (the CTP's own SRAM layout): nearly every translation looks its LPN up there
/// (a CTP hit, or the read after a load), which reads a bit from a few hot words instead of
/// probing a hash table of every change.
struct Ctp {
    lru: ListSet,
    capacity: u32,
    changes: PageSlots,
}

impl Ctp {
    #[inline]
    fn contains(&self, tp: Tpn) -> bool {
        self.lru.list_of(tp.get()).is_some()
    }
    /// The least recently used cached TP.
    fn lru_victim(&self) -> Option<Tpn> {
        self.lru.back(0).map(Tpn::new)
    }
    #[inline]
    fn touch(&mut self, tp: Tpn) {
        // Mostly the page used last (a CTP of a few pages): then no call to the list's move.
        if self.lru.front(0) != Some(tp.get()) {
            self.lru.move_to_front(0, tp.get());
        }
    }
    fn len(&self) -> u32 {
        self.lru.len(0)
    }
    fn is_dirty(&self, tp: Tpn) -> bool {
        self.changes.count(tp) > 0
    }
}

/// What making room cost.
#[derive(Default, Clone, Copy)]
struct Cost {
    fetched: bool,
    wrote: bool,
}

pub struct Cdftl {
    params: CdftlParams,
    store: TranslationStore,
    cmt: EntryCache<KickOutOrder>,
    ctp: Ctp,
    page_size: u32,
    inflight: Waiting,
}

impl Cdftl {
    pub fn new(config: &Config, params: CdftlParams) -> Result<Self> {
        let entries = entries_in(params.cmt_bytes, params.entry_bits, config, "ftl.cdftl.cmt_bytes")?;
        let page_size = config.device.geometry.page_size;
        let pages = params.ctp_bytes / page_size as u64;
        if pages == 0 {
            return Err(SimError::config(
                "ftl.cdftl.ctp_bytes",
                format!("{} bytes hold no {page_size}-byte translation page", params.ctp_bytes),
            ));
        }
        let store = TranslationStore::new(config)?;
        let (logical, per_tp, tps) = (store.logical_pages(), store.entries_per_tp(), store.tp_count());
        Ok(Cdftl {
            cmt: EntryCache::new(KickOutOrder::new(entries, tps), entries, logical, per_tp),
            ctp: Ctp {
                lru: ListSet::new(tps as usize, 1),
                capacity: pages.min(u32::MAX as u64) as u32,
                changes: PageSlots::new(logical, per_tp),
            },
            page_size,
            inflight: Waiting::default(),
            store,
            params,
        })
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: CdftlParams = ftl_params(config, "cdftl")?;
        Ok(Box::new(DemandFtl::new(config, Cdftl::new(config, params)?)))
    }

    #[inline]
    fn tp_of(&self, lpn: Lpn) -> Tpn {
        self.store.tp_of(lpn)
    }

    /// The mapping the CTP level holds (its copy if cached, else the flash copy).
    #[inline]
    fn below_cmt(&self, lpn: Lpn) -> Option<Ppn> {
        self.ctp.changes.get(lpn).unwrap_or_else(|| self.store.entry(lpn))
    }

    /// Reads a TP into the CTP, writing back the LRU page if the CTP is full and it is dirty.
    fn load_tp(&mut self, tp: Tpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Cost> {
        let mut cost = Cost::default();
        // (GC during a write-back here may load `tp` itself, through the CMT's fallback.)
        while !self.ctp.contains(tp) && self.ctp.len() >= self.ctp.capacity {
            let victim = self.ctp.lru_victim().expect("a full CTP has a victim");
            if self.ctp.is_dirty(victim) {
                write_back(self, blocks, victim, false, ctx)?;
                ctx.cache.dirty_evictions += 1;
                cost.wrote = true;
            }
            // A nested load during that write-back's GC may have evicted it already.
            if self.ctp.contains(victim) {
                self.ctp.lru.remove(victim.get());
                ctx.cache.evictions += 1;
            }
        }
        if self.ctp.contains(tp) {
            self.ctp.touch(tp);
            return Ok(cost);
        }
        cost.fetched = self.store.fetch(tp, ctx)?;
        self.ctp.lru.push_front(0, tp.get());
        self.cmt.policy_mut().unpark(tp);
        Ok(cost)
    }

    /// Evicts CMT entries until one slot is free. Inline: nearly every translation evicts one
    /// entry, which the scan order's back usually is; the loading fallback stays a call.
    #[inline]
    fn make_room(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Cost> {
        if !self.cmt.is_full() {
            return Ok(Cost::default());
        }
        match self.kick_out_candidate() {
            Some(slot) => {
                self.kick_out(slot, ctx);
                Ok(Cost::default())
            }
            None => self.make_room_loading(blocks, ctx),
        }
    }

    /// Evicts a kick-out candidate; a dirty one goes into its TP's CTP copy.
    #[inline]
    fn kick_out(&mut self, slot: u32, ctx: &mut FtlCtx) {
        let (lpn, ppn, dirty) = self.cmt.remove(slot);
        ctx.cache.evictions += 1;
        if dirty {
            let tp = self.tp_of(lpn);
            self.ctp.changes.set(lpn, ppn);
            self.ctp.touch(tp);
        }
    }

    /// [`Cdftl::make_room`] when every entry is dirty with its TP outside the CTP: the TP of the
    /// oldest is loaded first.
    #[inline(never)]
    fn make_room_loading(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Cost> {
        let mut cost = Cost::default();
        while self.cmt.is_full() {
            match self.kick_out_candidate() {
                Some(slot) => self.kick_out(slot, ctx),
                None => {
                    let oldest =
                        self.cmt.policy().oldest_parked().expect("a full CMT without candidates has parked entries");
                    let tp = self.tp_of(self.cmt.lpn(oldest));
                    let more = self.load_tp(tp, blocks, ctx)?;
                    cost.fetched |= more.fetched;
                    cost.wrote |= more.wrote;
                }
            }
        }
        Ok(cost)
    }

    /// The LRU entry that is clean or has its TP in the CTP, parking the others on the way.
    #[inline]
    fn kick_out_candidate(&mut self) -> Option<u32> {
        while let Some(slot) = self.cmt.policy().scan_back() {
            if !self.cmt.is_dirty(slot) {
                return Some(slot);
            }
            let tp = self.tp_of(self.cmt.lpn(slot));
            if self.ctp.contains(tp) {
                return Some(slot);
            }
            self.cmt.policy_mut().park(slot, tp);
        }
        None
    }

    /// Gives a changed mapping a CMT slot as a dirty entry, without a fetch.
    fn insert_dirty(
        &mut self,
        lpn: Lpn,
        ppn: Option<Ppn>,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<Cost> {
        self.inflight.push(lpn, ppn);
        let cost = self.make_room(blocks, ctx)?;
        let (lpn, ppn) = self.inflight.pop();
        self.cmt.insert(lpn, ppn, true);
        Ok(cost)
    }
}

impl Relocate for Cdftl {
    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        prefetch_relocation(self, spare);
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        crate::ftl::common::demand::is_current(self, ppn, spare, ctx)
    }

    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let Some(lpn) = self.store.relocated(spare, old, new)? else { return Ok(()) };
        let tp = self.tp_of(lpn);
        if let Some(slot) = self.cmt.get(lpn) {
            self.cmt.update(slot, Some(new));
            ctx.cache.record_gc(CacheAccess::Hit);
        } else if self.inflight.relocated(lpn, new) {
            ctx.cache.record_gc(CacheAccess::Hit);
        } else if self.ctp.contains(tp) {
            self.ctp.changes.set(lpn, Some(new));
            ctx.cache.record_gc(CacheAccess::Hit);
        } else {
            let cost = self.insert_dirty(lpn, Some(new), blocks, ctx)?;
            ctx.cache.record_gc(miss_class(cost.wrote, cost.fetched));
        }
        Ok(())
    }
}

impl TranslationOwner for Cdftl {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    /// Everything of the TP goes: the CTP copy's changes, then the CMT's dirty entries (newer).
    fn publish(&mut self, tp: Tpn) -> bool {
        let store = &mut self.store;
        self.ctp.changes.drain(tp, |lpn, ppn| store.set(lpn, ppn));
        self.cmt.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
        self.inflight.publish(tp, store);
        // Parked entries are dirty ones; these are clean now.
        self.cmt.policy_mut().unpark(tp);
        true
    }
}

impl DemandScheme for Cdftl {
    fn name(&self) -> &'static str {
        "cdftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    #[inline]
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        if let Some(slot) = self.cmt.get(lpn) {
            self.cmt.touch(slot);
            ctx.cache.record(CacheAccess::Hit);
            return Ok(self.cmt.ppn(slot));
        }
        let tp = self.tp_of(lpn);
        let mut cost = if self.ctp.contains(tp) {
            self.ctp.touch(tp);
            Cost::default()
        } else {
            self.load_tp(tp, blocks, ctx)?
        };
        let more = self.make_room(blocks, ctx)?;
        cost.fetched |= more.fetched;
        cost.wrote |= more.wrote;
        let class = if cost.wrote || cost.fetched { miss_class(cost.wrote, cost.fetched) } else { CacheAccess::Hit };
        ctx.cache.record(class);
        // GC during a write-back may have cached the entry (a moved page of this LPN); without a
        // write no GC ran, so the lookup above still holds.
        if let Some(slot) = if cost.wrote { self.cmt.get(lpn) } else { None } {
            self.cmt.touch(slot);
            return Ok(self.cmt.ppn(slot));
        }
        let ppn = self.below_cmt(lpn);
        self.cmt.insert(lpn, ppn, false);
        Ok(ppn)
    }

    #[inline]
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        match self.cmt.get(lpn) {
            Some(slot) => self.cmt.update(slot, ppn),
            None => {
                self.insert_dirty(lpn, ppn, blocks, ctx)?;
            }
        }
        Ok(())
    }

    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.inflight
            .get(lpn)
            .or_else(|| self.cmt.get(lpn).map(|slot| self.cmt.ppn(slot)))
            .or_else(|| self.ctp.changes.get(lpn))
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.cmt.prefetch(lpn);
        self.ctp.changes.prefetch(lpn);
        self.store.prefetch(lpn);
    }

    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        while let Some(tp) = self.store.tps().find(|&tp| self.ctp.is_dirty(tp) || self.cmt.dirty_count(tp) > 0) {
            let whole_in_sram = self.ctp.contains(tp);
            write_back(self, blocks, tp, !whole_in_sram, ctx)?;
        }
        Ok(())
    }

    fn clear_cache(&mut self) {
        self.cmt.clear();
        self.ctp.lru.clear();
        self.ctp.changes.clear();
        self.inflight.clear();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.cmt.check()?;
        self.inflight.check()?;
        if self.ctp.len() > self.ctp.capacity {
            return Err(format!("the CTP holds {} pages, more than its {}", self.ctp.len(), self.ctp.capacity));
        }
        for tp in self.ctp.changes.tps() {
            if !self.ctp.contains(tp) {
                return Err(format!("translation page {tp} has unwritten CTP changes but is not in the CTP"));
            }
        }
        for slot in self.cmt.slots() {
            let lpn = self.cmt.lpn(slot);
            let parked = self.cmt.policy().is_parked(slot);
            if parked && (!self.cmt.is_dirty(slot) || self.ctp.contains(self.tp_of(lpn))) {
                return Err(format!("CMT entry LPN {lpn} is parked but clean or with its TP in the CTP"));
            }
            if !self.cmt.is_dirty(slot) && self.cmt.ppn(slot) != self.below_cmt(lpn) {
                return Err(format!(
                    "clean CMT entry LPN {lpn} -> {:?} disagrees with the CTP or flash copy ({:?})",
                    self.cmt.ppn(slot),
                    self.below_cmt(lpn)
                ));
            }
        }
        Ok(())
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        let n = self.cmt.capacity();
        vec![
            sram_of(format!("CMT ({n} entries x {} bits)", self.params.entry_bits), n as u64, self.params.entry_bits),
            SramItem {
                structure: format!("CTP ({} translation pages)", self.ctp.capacity),
                bytes: self.ctp.capacity as u64 * self.page_size as u64,
            },
        ]
    }

    /// The CMT's entries (the CTP holds whole pages).
    fn occupancy(&self) -> Option<Occupancy> {
        Some(self.cmt.occupancy(self.params.cmt_bytes))
    }

    fn cache_sram_in_use(&self) -> u64 {
        (self.cmt.len() as u64 * self.params.entry_bits as u64).div_ceil(8)
            + self.ctp.len() as u64 * self.page_size as u64
    }

    /// A PPN plus a pointer to one of the CTP's slots (or none) and a flag: 35 bits with 2 slots,
    /// 37 with 8 (paper 000 Tables 5.2 and 6.1: 2.19 KB and 2.31 KB).
    fn gtd_bits(&self) -> u32 {
        32 + (self.ctp.capacity + 1).next_power_of_two().trailing_zeros() + 1
    }

    fn state_bytes(&self) -> usize {
        self.cmt.memory_bytes() + self.ctp.changes.memory_bytes() + self.ctp.lru.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{OpKind, Purpose};
    use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};
    use crate::host::PageRequest;
    use crate::workload::IoKind::{Read, Write};

    #[test]
    fn paper_000_table_5_2_and_6_1_sram() {
        let c = Config::preset("mlc8g").unwrap();
        let sram = Cdftl::build(&c).unwrap().sram();
        assert_eq!(sram[0].bytes, 2112); // CMT 2.06 KB, 256 entries
        assert_eq!(sram[1].bytes, 16 * 1024); // CTP 16 KB, 2 pages
        assert_eq!(sram[2].bytes, 2240); // GTD 2.19 KB
        let c = crate::ConfigBuilder::new()
            .set("ftl.cdftl.cmt_bytes=33792")
            .unwrap()
            .set("ftl.cdftl.ctp_bytes=65536")
            .unwrap()
            .build()
            .unwrap();
        let sram = Cdftl::build(&c).unwrap().sram();
        assert!(sram[0].structure.contains("4096 entries"));
        assert_eq!(sram[2].bytes, 2368); // GTD 2.31 KB with 8 CTP slots
    }

    fn page(kind: crate::workload::IoKind, lpn: Lpn) -> PageRequest {
        PageRequest { arrival: 0, kind, first: lpn, pages: 1, span: crate::host::SectorSpan::WHOLE }
    }

    #[test]
    fn the_ctp_serves_spatial_hits_and_buffers_kicked_out_dirty_entries() {
        // 8 entries per TP; CMT of 2 entries, CTP of one 32-byte page.
        let c = tiny_config(&["ftl.cdftl.cmt_bytes=16", "ftl.cdftl.entry_bits=64", "ftl.cdftl.ctp_bytes=32"]);
        let mut sim = crate::Simulation::new(&c, "cdftl").unwrap();
        sim.precondition().unwrap();
        sim.serve(page(Write, Lpn::new(0))).unwrap(); // CTP miss: TP 0 read
        sim.serve(page(Read, Lpn::new(1))).unwrap(); // CMT miss, CTP hit: no flash access
        assert_eq!(sim.ops().count(OpKind::Read, Purpose::Translation), 1);
        // CMT full; LPN 2 (TP 0): the victim is LPN 0 (dirty, TP in CTP): kicked into the CTP copy.
        sim.serve(page(Read, Lpn::new(2))).unwrap();
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 0);
        // LPN 8 (TP 1): the CTP evicts TP 0, now dirty: programmed without a read, then TP 1 read.
        sim.serve(page(Read, Lpn::new(8))).unwrap();
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 1);
        assert_eq!(sim.ops().count(OpKind::Read, Purpose::Translation), 2);
        let r = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report.cache;
        assert_eq!((r.hit, r.miss_fetch, r.miss_writeback), (2, 1, 1));
        sim.check_invariants().unwrap();
    }

    #[test]
    fn a_cold_dirty_entry_stays_until_its_tp_is_loaded() {
        let c = tiny_config(&["ftl.cdftl.cmt_bytes=16", "ftl.cdftl.entry_bits=64", "ftl.cdftl.ctp_bytes=32"]);
        let mut sim = crate::Simulation::new(&c, "cdftl").unwrap();
        sim.precondition().unwrap();
        sim.serve(page(Write, Lpn::new(0))).unwrap(); // LPN 0 dirty, TP 0 in CTP
        sim.serve(page(Read, Lpn::new(8))).unwrap(); // TP 1 replaces TP 0 (clean: no write); LPN 0 stays dirty in CMT
                                                     // LPN 16: the CMT is full; LPN 0 is dirty with TP 0 outside the CTP: LPN 8 (clean) goes.
        sim.serve(page(Read, Lpn::new(16))).unwrap();
        assert_eq!(sim.ops().count(OpKind::Program, Purpose::Translation), 0);
        assert!(sim.ftl().lookup(Lpn::new(0), sim.flash()).is_some());
        sim.check_invariants().unwrap();
        // Everything dirty, no TP in the CTP: writes to LPNs 24 and 32 leave two dirty entries
        // of TPs 3 and 4; the next miss must load the oldest one's TP to kick it out.
        sim.serve(page(Write, Lpn::new(24))).unwrap();
        sim.serve(page(Write, Lpn::new(32))).unwrap();
        sim.serve(page(Read, Lpn::new(40))).unwrap();
        sim.check_invariants().unwrap();
        assert!(sim.ops().count(OpKind::Program, Purpose::Translation) >= 1);
    }

    #[test]
    fn runs_under_the_oracle_with_constant_gc_evictions_and_power_losses() {
        for args in [
            &["ftl.cdftl.cmt_bytes=40", "ftl.cdftl.entry_bits=64", "ftl.cdftl.ctp_bytes=64"][..],
            &["ftl.cdftl.cmt_bytes=16", "ftl.cdftl.entry_bits=64", "ftl.cdftl.ctp_bytes=32"],
        ] {
            let report = run_checked("cdftl", args);
            assert!(report.cache.dirty_eviction_probability.is_some() && report.gc_victims > 0, "{args:?}");
            assert!(report.cache.gc_hit_ratio.is_some(), "{args:?}");
        }
    }
}
