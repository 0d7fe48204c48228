//! TPFTL (Zhou et al., EuroSys'15; paper 002 §4, spec part A): a demand-based page-level FTL
//! whose mapping cache is a two-level LRU ([`TwoLevelCache`]): translation-page (TP) nodes
//! ordered by page-level hotness, each with an LRU list of 6-byte entry nodes.
//!
//! Four techniques, each a flag (paper 002's ablations `-`, `r`, `s`, `b`, `c` and combinations;
//! `variant = "rsbc"` sets all four, and a flag given as well overrides its letter):
//! - `r` request-level prefetching: when the first page of a request misses, the entries of the
//!   request's other pages (within the TP, rule 1) are loaded with it;
//! - `s` selective prefetching: a counter gains one per TP node created and loses one per node
//!   evicted; at +threshold prefetching stops, at -threshold (a sequential run concentrates the
//!   cache in few TPs) it starts; while on, a miss also loads as many following entries as the
//!   missed LPN has consecutive cached predecessors in its TP;
//! - `b` batch-update replacement: writing back a dirty victim writes every dirty entry of its TP
//!   node, which stay cached, clean; a GC update of an uncached entry also takes them along;
//! - `c` clean-first replacement: victims are the LRU node's clean entries, in LRU order, before
//!   its dirty ones.
//!
//! Prefetching is limited so that one translation reads at most one TP and updates at most one
//! (§4.5): rule 1, the prefetched entries stay in the requested TP; rule 2, all victims come from
//! one node, the coldest other than the requested one (spec T7), and the length is cut to that
//! node's entry count and to what evicting it entirely makes room for (spec A.7.4). Without `b`,
//! the dirty victims of one replacement go into one TP update (spec A.7.3 [REC]).
//!
//! GC: a moved page whose entry is cached is updated there (a GC hit; recency unchanged, T21).
//! Otherwise the new mapping is staged in its TP, and each such TP is updated once, as soon as the
//! garbage collection that moved the pages returns (the GC batch update of paper 002's DFTL, which
//! TPFTL extends); the first GC miss of a TP counts as the write-back, the others as misses
//! without penalty. Writing them only after GC, not when each victim block is empty, keeps GC
//! within its reserve: with `gc.free_blocks_low = 1` the page moves may take the last free block,
//! and a translation page allocated inside GC would then find none.
//!
//! Where the paper is silent (spec A.12): hotness is the mean global access count of the last
//! accesses of a node's entries (`page_order = "lru"` orders nodes by last access instead); a
//! loaded entry is clean and the prefetched ones sit behind the requested one, the nearest most
//! recent; `r` and `s` lengths combine by max; prefetch targets already cached are skipped; `r`
//! fires on the request's first page only (`request_prefetch_any_miss` on any miss in it).

use serde::{Deserialize, Serialize};

use super::common::cache::{PageOrder, TwoLevelCache};
use super::common::changes::GcBatch;
use super::common::demand::{at_most_the_map, miss_class, params_json, prefetch_relocation, DemandFtl, DemandScheme};
use super::common::translation::{
    write_back, TranslationOwner, TranslationStore, DEMAND_LAYOUT, DEMAND_STREAMS, TP_ENTRY_BYTES,
};
use super::common::{BlockManager, Relocate};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::check::suite::quarter_map;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};
use crate::metrics::{CacheAccess, Occupancy};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TpftlParams {
    /// SRAM for entry and TP nodes, bytes. Default: a block-level map's size, 4 bytes per logical
    /// block (paper 002 §5.1: 8 KB for 512 MB, 256 KB for 16 GB; the GTD is charged apart).
    pub cache_bytes: Option<u64>,
    /// Bytes per entry node: 10-bit offset, 4-byte PPN, dirty flag (paper 002 §4.1: 6).
    pub entry_bytes: u32,
    /// Bytes per TP node (spec A.6's slot model: one 6-byte slot, as Fig. 4 needs).
    pub node_bytes: u32,
    /// Paper 002's configuration names: `-` or letters of `rsbc`; default `rsbc`.
    pub variant: Option<String>,
    pub request_prefetch: Option<bool>,
    pub selective_prefetch: Option<bool>,
    pub batch_update: Option<bool>,
    pub clean_first: Option<bool>,
    /// Request-level prefetching on any miss inside the request, not only its first page (spec T5).
    pub request_prefetch_any_miss: bool,
    /// |counter| that switches selective prefetching (paper 002 §4.3: 3).
    pub selective_threshold: u32,
    pub page_order: PageOrder,
}

pub const INFO: FtlInfo = FtlInfo {
    name: "tpftl",
    description: "TPFTL: two-level LRU of TP nodes and entries, prefetching, batch and clean-first replacement",
    family: Family::DemandBased,
    build: Tpftl::build,
    params: ParamsSchema::of::<TpftlParams>(&[
        ParamSpec {
            name: "cache_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of entry and TP nodes, bytes (default: a block-level map's size)",
            source: "paper 002 §5.1",
        },
        ParamSpec {
            name: "entry_bytes",
            range: ParamRange::Integer { min: 1, max: 64 },
            meaning: "bytes per entry node",
            source: "paper 002 §4.1: 6",
        },
        ParamSpec {
            name: "node_bytes",
            range: ParamRange::Integer { min: 1, max: 64 },
            meaning: "bytes per TP node",
            source: "spec A.6: 6",
        },
        ParamSpec {
            name: "variant",
            range: ParamRange::Text,
            meaning: "paper 002's configuration name: \"-\" or letters of rsbc (default rsbc)",
            source: "paper 002 §5.2",
        },
        ParamSpec {
            name: "request_prefetch",
            range: ParamRange::Flag,
            meaning: "request-level prefetching (overrides the variant)",
            source: "paper 002 §4.2",
        },
        ParamSpec {
            name: "selective_prefetch",
            range: ParamRange::Flag,
            meaning: "selective prefetching (overrides the variant)",
            source: "paper 002 §4.3",
        },
        ParamSpec {
            name: "batch_update",
            range: ParamRange::Flag,
            meaning: "write back a TP's dirty entries together (overrides the variant)",
            source: "paper 002 §4.4",
        },
        ParamSpec {
            name: "clean_first",
            range: ParamRange::Flag,
            meaning: "evict clean entries first (overrides the variant)",
            source: "paper 002 §4.4",
        },
        ParamSpec {
            name: "request_prefetch_any_miss",
            range: ParamRange::Flag,
            meaning: "request-level prefetching on any miss inside the request",
            source: "spec T5",
        },
        ParamSpec {
            name: "selective_threshold",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
            meaning: "|counter| that switches selective prefetching",
            source: "paper 002 §4.3: 3",
        },
        ParamSpec {
            name: "page_order",
            range: ParamRange::OneOf(&["hotness", "lru"]),
            meaning: "order of TP nodes",
            source: "paper 002 §4.1",
        },
    ]),
    spare_layout: DEMAND_LAYOUT,
    streams: DEMAND_STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 16.6,
    spare_blocks_needed: TranslationStore::spare_blocks_needed,
    test_overrides: |c| vec![("cache_bytes", quarter_map(c) * 6 + 12)],
};

impl Default for TpftlParams {
    fn default() -> Self {
        TpftlParams {
            cache_bytes: None,
            entry_bytes: 6,
            node_bytes: 6,
            variant: None,
            request_prefetch: None,
            selective_prefetch: None,
            batch_update: None,
            clean_first: None,
            request_prefetch_any_miss: false,
            selective_threshold: 3,
            page_order: PageOrder::Hotness,
        }
    }
}

/// The parameters as run (recorded in results).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TpftlResolved {
    pub cache_bytes: u64,
    pub entry_bytes: u32,
    pub node_bytes: u32,
    pub variant: String,
    pub request_prefetch: bool,
    pub selective_prefetch: bool,
    pub batch_update: bool,
    pub clean_first: bool,
    pub request_prefetch_any_miss: bool,
    pub selective_threshold: u32,
    pub page_order: PageOrder,
}

impl TpftlResolved {
    fn new(config: &Config, p: TpftlParams) -> Result<Self> {
        let field = |f: &str| format!("ftl.tpftl.{f}");
        let variant = p.variant.as_deref().unwrap_or("rsbc");
        let valid = variant == "-"
            || (!variant.is_empty() && variant.chars().all(|c| "rsbc".contains(c)) && {
                let mut seen: Vec<char> = variant.chars().collect();
                seen.sort_unstable();
                seen.dedup();
                seen.len() == variant.len()
            });
        if !valid {
            return Err(SimError::config(
                field("variant"),
                format!("\"{variant}\" is not \"-\" or a set of the letters r, s, b, c"),
            ));
        }
        let flag = |letter: char, explicit: Option<bool>| explicit.unwrap_or(variant.contains(letter));
        let (r, s, b, c) = (
            flag('r', p.request_prefetch),
            flag('s', p.selective_prefetch),
            flag('b', p.batch_update),
            flag('c', p.clean_first),
        );
        let name: String = [(r, 'r'), (s, 's'), (b, 'b'), (c, 'c')].iter().filter(|f| f.0).map(|f| f.1).collect();
        let g = &config.device.geometry;
        let block_map = config.device.logical_pages().div_ceil(g.data_pages_per_block()) as u64 * TP_ENTRY_BYTES as u64;
        if p.entry_bytes == 0 {
            return Err(SimError::config(field("entry_bytes"), "must be at least 1"));
        }
        // The default holds at least one node with one entry, even on a device of a few blocks.
        let cache_bytes = p.cache_bytes.unwrap_or(block_map.max((p.entry_bytes + p.node_bytes) as u64));
        if cache_bytes < (p.entry_bytes + p.node_bytes) as u64 {
            return Err(SimError::config(
                field("cache_bytes"),
                format!(
                    "{cache_bytes} bytes cannot hold one TP node ({} B) with one entry ({} B)",
                    p.node_bytes, p.entry_bytes
                ),
            ));
        }
        at_most_the_map(cache_bytes / p.entry_bytes as u64, config, &field("cache_bytes"))?;
        if p.selective_threshold == 0 {
            return Err(SimError::config(field("selective_threshold"), "must be at least 1"));
        }
        Ok(TpftlResolved {
            cache_bytes,
            entry_bytes: p.entry_bytes,
            node_bytes: p.node_bytes,
            variant: if name.is_empty() { "-".into() } else { name },
            request_prefetch: r,
            selective_prefetch: s,
            batch_update: b,
            clean_first: c,
            request_prefetch_any_miss: p.request_prefetch_any_miss,
            selective_threshold: p.selective_threshold,
            page_order: p.page_order,
        })
    }
}

/// Selective prefetching's switch (paper 002 §4.3): a counter of TP nodes created minus evicted,
/// acted on and reset whenever its magnitude reaches the threshold. Starts off (spec A.7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SelectiveSwitch {
    counter: i32,
    active: bool,
    threshold: i32,
}

impl SelectiveSwitch {
    fn new(threshold: u32) -> Self {
        SelectiveSwitch { counter: 0, active: false, threshold: threshold.min(i32::MAX as u32) as i32 }
    }

    fn node_created(&mut self) {
        self.counter += 1;
        self.settle();
    }

    fn node_evicted(&mut self) {
        self.counter -= 1;
        self.settle();
    }

    /// Rising node counts end a sequential run, falling ones mark one.
    fn settle(&mut self) {
        if self.counter.abs() >= self.threshold {
            self.active = self.counter < 0;
            self.counter = 0;
        }
    }
}

pub struct Tpftl {
    params: TpftlResolved,
    store: TranslationStore,
    cache: TwoLevelCache,
    selective: SelectiveSwitch,
    /// Host translations so far: the recency stamp of entry nodes.
    now: u64,
    /// The host request being served: its first LPN and one past its last (unwrapped).
    request: (Lpn, u64),
    /// GC updates of uncached entries, written when the garbage collection returns.
    gc_batch: GcBatch,
}

impl Tpftl {
    pub fn new(config: &Config, params: TpftlParams) -> Result<Self> {
        let params = TpftlResolved::new(config, params)?;
        let store = TranslationStore::new(config)?;
        let cache = TwoLevelCache::new(
            params.page_order,
            params.cache_bytes,
            params.entry_bytes,
            params.node_bytes,
            store.logical_pages(),
            store.entries_per_tp(),
        );
        Ok(Tpftl {
            selective: SelectiveSwitch::new(params.selective_threshold),
            gc_batch: GcBatch::new(store.tp_count()),
            now: 0,
            request: (Lpn::new(0), 0),
            cache,
            store,
            params,
        })
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: TpftlParams = ftl_params(config, "tpftl")?;
        Ok(Box::new(DemandFtl::new(config, Tpftl::new(config, params)?)))
    }

    /// How many entries after `lpn` to load with it: the longer of the request-level and the
    /// selective length, within `lpn`'s TP (rule 1).
    fn prefetch_length(&self, lpn: Lpn) -> u32 {
        let tp_lpns = self.store.lpns(self.store.tp_of(lpn));
        let room = tp_lpns.end.get() - 1 - lpn.get();
        let (first, end) = self.request;
        let mut k = 0;
        let in_request =
            (lpn.get() as u64) < end && (lpn == first || (self.params.request_prefetch_any_miss && lpn > first));
        if self.params.request_prefetch && in_request {
            k = (end - 1 - lpn.get() as u64).min(room as u64) as u32;
        }
        if self.params.selective_prefetch && self.selective.active {
            let predecessors = (1..=room.min(lpn.get() - tp_lpns.start.get()))
                .take_while(|&d| self.cache.get(Lpn::new(lpn.get() - d)).is_some())
                .count();
            k = k.max(predecessors as u32);
        }
        k
    }

    /// Rule 2 (paper 002 §4.5, spec A.7.4): cuts the prefetch length `k` so that the requested
    /// entry and the uncached ones among the next `k` fit after evicting from one node; returns
    /// the length, the entries it loads, and that node (`None`: no eviction needed, or no other
    /// node to evict from).
    fn plan(&mut self, lpn: Lpn, k: u32) -> (u32, u64, Option<Tpn>) {
        let tp = self.store.tp_of(lpn);
        let node = if self.cache.node_len(tp) == 0 { self.cache.node_bytes() } else { 0 };
        let need = |entries: u64, e: u64| entries * e + node;
        let e = self.cache.entry_bytes();
        let free = self.cache.free_bytes();
        // A full cache (the usual case) lacks room even for the requested entry alone, so it
        // must evict whatever the prefetch loads: its count is not needed.
        if need(1, e) <= free {
            let all = self.loads(lpn, k).last().unwrap_or(1);
            if need(all, e) <= free {
                return (k, all, None);
            }
        }
        let Some(victim) = self.cache.coldest_except(tp) else { return (0, 1, None) };
        let n_v = self.cache.node_len(victim);
        let room = free + n_v as u64 * e + self.cache.node_bytes();
        // The longest prefix that fits (at least the requested entry alone).
        let (fits, loads) = self
            .loads(lpn, k.min(n_v))
            .take_while(|&n| need(n, e) <= room)
            .enumerate()
            .last()
            .map_or((0, 1), |(j, n)| (j as u32, n));
        (fits, loads, Some(victim))
    }

    /// For j = 0..=k, the entries a miss on `lpn` loads with a prefetch length of j.
    fn loads(&self, lpn: Lpn, k: u32) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(1).chain((1..=k).scan(1, move |n, d| {
            *n += self.cache.get(lpn.offset(d)).is_none() as u64;
            Some(*n)
        }))
    }

    /// Evicts until `entries` entries of `tp` fit: from `victim`, then (only if that is not
    /// enough, which rule 2 rules out) from the coldest other nodes, and from `tp` itself when no
    /// other node is left. Returns whether a translation page was written.
    fn make_room(
        &mut self,
        tp: Tpn,
        entries: u64,
        mut victim: Option<Tpn>,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<bool> {
        let mut wrote = false;
        loop {
            let node = if self.cache.node_len(tp) == 0 { self.cache.node_bytes() } else { 0 };
            if self.cache.free_bytes() >= entries * self.cache.entry_bytes() + node {
                return Ok(wrote);
            }
            let v = match victim.take() {
                Some(v) => v,
                None => self.cache.coldest_except(tp).unwrap_or(tp),
            };
            wrote |= self.evict_from(v, tp, entries, blocks, ctx)?;
            self.flush_gc(blocks, ctx)?;
        }
    }

    /// Evicts entries of node `v` in replacement order until `entries` entries of `tp` fit or `v`
    /// is empty; dirty victims go to flash in one TP update (with `b`, together with every other
    /// dirty entry of `v`, at the first dirty victim).
    fn evict_from(
        &mut self,
        v: Tpn,
        tp: Tpn,
        entries: u64,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<bool> {
        let mut staged = false;
        let mut wrote = false;
        loop {
            let node = if self.cache.node_len(tp) == 0 { self.cache.node_bytes() } else { 0 };
            if self.cache.free_bytes() >= entries * self.cache.entry_bytes() + node {
                break;
            }
            let Some(slot) = self.cache.victim_in(v, self.params.clean_first) else { break };
            let (lpn, ppn, dirty, gone) = self.cache.remove(slot);
            ctx.cache.evictions += 1;
            if gone {
                self.selective.node_evicted();
            }
            if dirty {
                ctx.cache.dirty_evictions += 1;
                self.store.set(lpn, ppn);
                if self.params.batch_update {
                    write_back(self, blocks, v, true, ctx)?;
                    wrote = true;
                } else {
                    staged = true;
                }
            }
        }
        if staged {
            write_back(self, blocks, v, true, ctx)?;
            wrote = true;
        }
        Ok(wrote)
    }

    /// Loads the entry of `lpn` unless it is cached.
    fn load(&mut self, lpn: Lpn) {
        if self.cache.insert(lpn, self.store.entry(lpn), self.now) == Some(true) {
            self.selective.node_created();
        }
    }

    /// Writes the TPs of the GC updates staged by the garbage collections that ran since the last
    /// call (a write-back may run GC again, which stages more: they are written too).
    fn flush_gc(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        while let Some(tp) = self.gc_batch.pop() {
            write_back(self, blocks, tp, true, ctx)?;
        }
        Ok(())
    }
}

impl Relocate for Tpftl {
    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, old: Ppn, new: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        let Some(lpn) = self.store.relocated(spare, old, new)? else { return Ok(()) };
        if let Some(slot) = self.cache.get(lpn) {
            self.cache.update(slot, Some(new));
            ctx.cache.record_gc(CacheAccess::Hit);
        } else {
            ctx.cache.record_gc(self.gc_batch.stage(&mut self.store, lpn, new));
        }
        Ok(())
    }

    fn prefetch_relocation(&self, spare: Spare) {
        prefetch_relocation(self, spare);
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        crate::ftl::common::demand::is_current(self, ppn, spare, ctx)
    }
}

impl TranslationOwner for Tpftl {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    /// Staged GC updates are already in the store; with `b` every dirty entry of the TP joins.
    fn publish(&mut self, tp: Tpn) -> bool {
        self.gc_batch.published(tp);
        if self.params.batch_update {
            let store = &mut self.store;
            self.cache.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
        }
        self.cache.dirty_count(tp) == 0
    }
}

impl DemandScheme for Tpftl {
    fn name(&self) -> &'static str {
        "tpftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    fn begin_request(&mut self, first: Lpn, pages: u32) {
        self.request = (first, first.get() as u64 + pages as u64);
    }

    #[inline]
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.now += 1;
        if let Some(slot) = self.cache.get(lpn) {
            self.cache.touch(slot, self.now);
            ctx.cache.record(CacheAccess::Hit);
            return Ok(self.cache.ppn(slot));
        }
        let wanted = self.prefetch_length(lpn);
        let (k, loads, victim) = self.plan(lpn, wanted);
        let targets = (1..=k).map(|d| lpn.offset(d));
        let tp = self.store.tp_of(lpn);
        let wrote = self.make_room(tp, loads, victim, blocks, ctx)?;
        let fetched = self.store.fetch(tp, ctx)?;
        // The farthest first: the requested entry ends most recent, then the nearest prefetched.
        for p in targets.rev() {
            self.load(p);
        }
        self.load(lpn);
        ctx.cache.record(miss_class(wrote, fetched));
        Ok(self.store.entry(lpn))
    }

    #[inline]
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        // Nothing evicts between a translation and its remap (GC only updates the cache).
        let slot = self.cache.get(lpn).ok_or_else(|| {
            SimError::Other(format!("tpftl: LPN {lpn} left the cache between its translation and its update"))
        })?;
        self.cache.update(slot, ppn);
        // The data page's allocation may have collected garbage.
        self.flush_gc(blocks, ctx)
    }

    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.cache.get(lpn).map(|slot| self.cache.ppn(slot))
    }

    fn prefetch(&self, lpn: Lpn) {
        self.cache.prefetch(lpn);
        self.store.prefetch(lpn);
    }

    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        // The frame's write-backs may have collected garbage.
        self.flush_gc(blocks, ctx)?;
        // GC during a write-back may dirty entries of TPs already written: repeat until clean.
        loop {
            let tps: Vec<Tpn> = self.cache.dirty_tps().collect();
            if tps.is_empty() {
                return Ok(());
            }
            for tp in tps {
                let store = &mut self.store;
                self.cache.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
                write_back(self, blocks, tp, true, ctx)?;
                self.flush_gc(blocks, ctx)?;
            }
        }
    }

    fn clear_cache(&mut self) {
        self.cache.clear();
        self.selective = SelectiveSwitch::new(self.params.selective_threshold);
        self.request = (Lpn::new(0), 0);
        self.gc_batch.clear();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.cache.check()?;
        self.gc_batch.check()?;
        for tp in self.store.tps() {
            for slot in self.cache.node_entries(tp) {
                let lpn = self.cache.lpn(slot);
                if !self.cache.is_dirty(slot) && self.cache.ppn(slot) != self.store.entry(lpn) {
                    return Err(format!(
                        "clean cached entry LPN {lpn} -> {:?} disagrees with its translation page ({:?})",
                        self.cache.ppn(slot),
                        self.store.entry(lpn)
                    ));
                }
            }
        }
        Ok(())
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        let p = &self.params;
        vec![SramItem {
            structure: format!(
                "two-level entry cache ({}-byte entry nodes, {}-byte TP nodes)",
                p.entry_bytes, p.node_bytes
            ),
            bytes: p.cache_bytes,
        }]
    }

    fn occupancy(&self) -> Option<Occupancy> {
        Some(self.cache.occupancy())
    }

    fn cache_sram_in_use(&self) -> u64 {
        self.cache.used_bytes()
    }

    fn state_bytes(&self) -> usize {
        self.cache.memory_bytes() + self.gc_batch.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, OpLog, Purpose};
    use crate::ftl::common::demand::tests_support::{run_checked, tiny_config};
    use crate::host::PageRequest;
    use crate::metrics::CacheStats;
    use crate::workload::synthetic::MixedSpec;
    use crate::workload::IoKind;
    use crate::Simulation;

    /// LPN `offset` of TP `tp`, 1024 entries per TP (paper 002's "a:b" notation).
    fn at(tp: u32, offset: u32) -> Lpn {
        Lpn::new(tp * 1024 + offset)
    }

    /// A scheme outside the frame, on 4 KB pages (1024 entries per TP, 6 TPs) with every TP
    /// written once, so its cache state can be set up entry by entry.
    struct Rig {
        flash: FlashArray,
        ops: OpLog,
        cache: CacheStats,
        blocks: BlockManager,
        tp: Tpftl,
    }

    impl Rig {
        fn new(sets: &[&str]) -> Rig {
            let mut b = ConfigBuilder::new();
            for set in [
                "device.geometry.planes_per_die=1",
                "device.geometry.blocks_per_plane=64",
                "device.geometry.pages_per_block=128",
                "device.geometry.page_size=4096",
                "device.logical_pages=6144",
            ]
            .iter()
            .chain(sets)
            {
                b = b.set(set).unwrap();
            }
            let c = b.build().unwrap();
            let mut r = Rig {
                flash: FlashArray::new(&c.device.geometry, c.device.program_order),
                ops: OpLog::new(),
                cache: CacheStats::default(),
                blocks: BlockManager::new(&c, crate::ftl::common::translation::DEMAND_STREAMS),
                tp: Tpftl::new(&c, ftl_params(&c, "tpftl").unwrap()).unwrap(),
            };
            for tp in 0..6 {
                let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
                write_back(&mut r.tp, &mut r.blocks, Tpn::new(tp), false, &mut ctx).unwrap();
            }
            r.ops.reset_counts();
            r
        }

        /// Caches `lpn` at time `t`, dirty with PPN `t` if asked.
        fn put(&mut self, lpn: Lpn, t: u64, dirty: bool) {
            self.tp.cache.insert(lpn, self.tp.store.entry(lpn), t);
            self.tp.now = t;
            if dirty {
                let slot = self.tp.cache.get(lpn).unwrap();
                self.tp.cache.update(slot, Some(Ppn::new(t as u32)));
            }
        }

        fn translate(&mut self, lpn: Lpn) -> Option<Ppn> {
            let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
            self.tp.translate(lpn, &mut self.blocks, &mut ctx).unwrap()
        }

        fn translation_ops(&self) -> (u64, u64) {
            (self.ops.count(OpKind::Read, Purpose::Translation), self.ops.count(OpKind::Program, Purpose::Translation))
        }

        fn cached(&self, lpns: &[Lpn]) -> Vec<bool> {
            lpns.iter().map(|&l| self.tp.cache.get(l).is_some()).collect()
        }
    }

    #[test]
    fn paper_002_figure_4_selective_prefetching_cut_by_rule_2() {
        // A full cache of 8 slots: TP node 3 holds 3:27 (the coldest), TP node 0 holds 0:5 and
        // 0:6, TP node 1 holds 1:334 and 1:335.
        let mut r = Rig::new(&["ftl.tpftl.cache_bytes=48"]);
        for (t, lpn) in [at(3, 27), at(0, 5), at(0, 6), at(1, 334), at(1, 335)].into_iter().enumerate() {
            r.put(lpn, t as u64 + 1, false);
        }
        assert_eq!(r.tp.cache.free_bytes(), 0);
        // The counter had reached -3: selective prefetching on, counter back to 0.
        for _ in 0..3 {
            r.tp.selective.node_evicted();
        }
        assert_eq!((r.tp.selective.active, r.tp.selective.counter), (true, 0));
        // (1) 1:336 misses, its TP node is cached; (2) two consecutive cached predecessors: length 2.
        assert_eq!(r.tp.prefetch_length(at(1, 336)), 2);
        // (3) Rule 2: the LRU node 3 holds one entry, so the length is cut to 1.
        // (1:336 and 1:337 load two entries.)
        assert_eq!(r.tp.plan(at(1, 336), 2), (1, 2, Some(Tpn::new(3))));
        r.translate(at(1, 336));
        // Node 3 and 3:27 evicted (counter -1, two slots freed); (4) one read of TP 1;
        // (5)-(6) 1:336 and 1:337 loaded, 1:338 not.
        assert_eq!(r.tp.cache.node_len(Tpn::new(3)), 0);
        assert_eq!(r.tp.selective.counter, -1);
        assert_eq!(r.translation_ops(), (1, 0));
        assert_eq!(r.cached(&[at(1, 336), at(1, 337), at(1, 338), at(3, 27)]), [true, true, false, false]);
        assert_eq!((r.cache.miss_fetch, r.cache.evictions, r.cache.dirty_evictions), (1, 1, 0));
        assert_eq!(r.tp.cache.free_bytes(), 0);
        r.tp.cache.check().unwrap();
    }

    /// Paper 002 Fig. 5's cache: TP node 5 (the coldest) with clean 5:979 and 5:435 and dirty
    /// 5:55, 5:56 and 5:436, TP node 0 with one entry; full at 8 slots.
    fn figure_5_cache(variant: &str) -> Rig {
        let mut r = Rig::new(&["ftl.tpftl.cache_bytes=48", &format!("ftl.tpftl.variant=\"{variant}\"")]);
        for (t, (lpn, dirty)) in
            [(55, true), (979, false), (56, true), (435, false), (436, true)].into_iter().enumerate()
        {
            r.put(at(5, lpn), t as u64 + 1, dirty);
        }
        r.put(at(0, 10), 9, false);
        assert_eq!(r.tp.cache.free_bytes(), 0);
        r
    }

    #[test]
    fn paper_002_figure_5_clean_first_victims_and_one_batch_update() {
        let mut r = figure_5_cache("rbc");
        // (1) Three entries to load: 0:1000 requested, 0:1001 and 0:1002 by request-level prefetching.
        r.tp.begin_request(at(0, 1000), 3);
        r.translate(at(0, 1000));
        // (2) Victims from the LRU node 5: the clean 5:979 and 5:435, then the dirty 5:55.
        assert_eq!(r.cached(&[at(5, 979), at(5, 435), at(5, 55)]), [false, false, false]);
        // (3) One TP update (read + write) carries 5:55, 5:56 and 5:436; the last two stay, clean.
        assert_eq!(r.translation_ops(), (2, 1));
        for (offset, ppn) in [(55, 1), (56, 3), (436, 5)] {
            assert_eq!(r.tp.store.entry(at(5, offset)), Some(Ppn::new(ppn)));
        }
        assert_eq!(r.cached(&[at(5, 56), at(5, 436)]), [true, true]);
        assert_eq!(r.tp.cache.dirty_count(Tpn::new(5)), 0);
        // (4) The three requested entries are loaded.
        assert_eq!(r.cached(&[at(0, 1000), at(0, 1001), at(0, 1002), at(0, 1003)]), [true, true, true, false]);
        assert_eq!((r.cache.miss_writeback, r.cache.evictions, r.cache.dirty_evictions), (1, 3, 1));
        r.tp.cache.check().unwrap();
    }

    #[test]
    fn figure_5_without_clean_first_or_batch_update() {
        // (variant, still cached in node 5, dirty left in node 5, dirty evictions); one TP update each.
        let cases = [
            // LRU order: 5:55 (dirty: the batch cleans 5:56 and 5:436), 5:979, 5:56.
            ("rb", vec![at(5, 435), at(5, 436)], 0, 1),
            // Clean first, but only the victim is written: 5:56 and 5:436 stay dirty.
            ("rc", vec![at(5, 56), at(5, 436)], 2, 1),
            // LRU order, no batch: dirty 5:55 and 5:56 evicted, coalesced into one update.
            ("r", vec![at(5, 435), at(5, 436)], 1, 2),
        ];
        for (variant, left, dirty_left, dirty_evictions) in cases {
            let mut r = figure_5_cache(variant);
            r.tp.begin_request(at(0, 1000), 3);
            r.translate(at(0, 1000));
            let node: Vec<Lpn> =
                r.tp.cache
                    .node_entries(Tpn::new(5))
                    .map(|s| r.tp.cache.lpn(s))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
            let mut node_sorted = node.clone();
            node_sorted.sort();
            assert_eq!(node_sorted, left, "{variant}");
            assert_eq!(r.tp.cache.dirty_count(Tpn::new(5)), dirty_left, "{variant}");
            assert_eq!((r.cache.evictions, r.cache.dirty_evictions), (3, dirty_evictions), "{variant}");
            assert_eq!(r.translation_ops(), (2, 1), "{variant}");
            assert_eq!(r.tp.store.entry(at(5, 55)), Some(Ppn::new(1)), "{variant}");
            r.tp.cache.check().unwrap();
        }
    }

    #[test]
    fn the_selective_switch_turns_on_after_three_net_node_evictions_and_off_after_three_creations() {
        let mut s = SelectiveSwitch::new(3);
        s.node_created();
        s.node_created();
        s.node_evicted();
        assert_eq!((s.active, s.counter), (false, 1));
        s.node_created();
        s.node_created(); // +3: the counter resets, prefetching stays off
        assert_eq!((s.active, s.counter), (false, 0));
        for _ in 0..3 {
            s.node_evicted();
        }
        assert_eq!((s.active, s.counter), (true, 0));
        s.node_created();
        s.node_created();
        s.node_evicted();
        s.node_created();
        assert_eq!((s.active, s.counter), (true, 2));
        s.node_created();
        assert_eq!((s.active, s.counter), (false, 0));
    }

    #[test]
    fn a_sequential_run_that_shrinks_the_node_count_turns_selective_prefetching_on() {
        // 8 entries per TP, 12 slots; only selective prefetching.
        let run = |variant: &str| {
            let c = tiny_config(&["ftl.tpftl.cache_bytes=72", &format!("ftl.tpftl.variant=\"{variant}\"")]);
            let mut sim = Simulation::new(&c, "tpftl").unwrap();
            sim.precondition().unwrap();
            // Six one-entry nodes (counter +3, reset, +3, reset), then a sequential run in TP 6.
            for lpn in [0, 8, 16, 24, 32, 40, 48, 49, 50, 51, 52, 53, 54, 55] {
                sim.serve(PageRequest {
                    arrival: 0,
                    kind: IoKind::Read,
                    first: Lpn::new(lpn),
                    pages: 1,
                    span: crate::host::SectorSpan::WHOLE,
                })
                .unwrap();
            }
            sim.check_invariants().unwrap();
            let report = sim.result("t", serde_json::Value::Null, 1.0).unwrap().report;
            (report.reads.translation, report.cache.hit)
        };
        // Evicting a one-entry node frees two slots, so every other miss of the run evicts one:
        // 49, 51 and 53 take the counter to -3. 54 then loads 55 too (its 6 cached predecessors,
        // cut to 1 by rule 1 as 55 ends the TP; evicting the coldest one-entry node makes room).
        assert_eq!(run("s"), (13, 1));
        assert_eq!(run("-"), (14, 0));
    }

    #[test]
    fn variants_resolve_to_flags_and_bad_ones_are_named() {
        let resolve = |sets: &[&str]| {
            let mut b = ConfigBuilder::new();
            for s in sets {
                b = b.set(s).unwrap();
            }
            let c = b.build().unwrap();
            TpftlResolved::new(&c, ftl_params(&c, "tpftl")?)
        };
        let full = resolve(&[]).unwrap();
        assert_eq!(full.variant, "rsbc");
        assert!(full.request_prefetch && full.selective_prefetch && full.batch_update && full.clean_first);
        assert_eq!(resolve(&["ftl.tpftl.variant=\"-\""]).unwrap().variant, "-");
        let bc = resolve(&["ftl.tpftl.variant=\"cb\""]).unwrap();
        assert!(!bc.request_prefetch && !bc.selective_prefetch && bc.batch_update && bc.clean_first);
        assert_eq!(bc.variant, "bc");
        assert_eq!(resolve(&["ftl.tpftl.variant=\"bc\"", "ftl.tpftl.request_prefetch=true"]).unwrap().variant, "rbc");
        assert_eq!(resolve(&["ftl.tpftl.batch_update=false"]).unwrap().variant, "rsc");
        for bad in ["\"rr\"", "\"x\"", "\"\""] {
            let e = resolve(&[&format!("ftl.tpftl.variant={bad}")]).unwrap_err().to_string();
            assert!(e.contains("ftl.tpftl.variant"), "{e}");
        }
        let e = resolve(&["ftl.tpftl.cache_bytes=11"]).unwrap_err().to_string();
        assert!(e.contains("ftl.tpftl.cache_bytes"), "{e}");
    }

    #[test]
    fn paper_002_cache_is_a_block_level_map_with_6_byte_nodes() {
        // Financial (preset tpftl, 512 MB): 8 KB of entry area = 1365 slots; GTD 512 B apart.
        let c = Config::preset("tpftl").unwrap();
        let ftl = Tpftl::build(&c).unwrap();
        let sram = ftl.sram();
        assert_eq!(sram[0].bytes, 8192);
        assert_eq!((sram[1].structure.as_str(), sram[1].bytes), ("GTD (128 entries x 32 bits)", 512));
        let t = Tpftl::new(&c, TpftlParams::default()).unwrap();
        assert_eq!(t.cache.budget() / 6, 1365);
        assert_eq!(t.store.entries_per_tp(), 1024);
        let msr = Tpftl::new(&Config::preset("tpftl-msr").unwrap(), TpftlParams::default()).unwrap();
        assert_eq!(msr.cache.budget(), 256 * 1024);
        let msr = Tpftl::build(&Config::preset("tpftl-msr").unwrap()).unwrap();
        assert_eq!(msr.sram()[1].bytes, 16 * 1024);
    }

    /// 4 KB pages (1024 entries per TP), 64-page blocks, 16384 logical pages (16 TPs, a 1 KB
    /// block-level map), 25% spare; filled.
    fn small_ssd(sets: &[&str]) -> Config {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=320",
            "device.geometry.pages_per_block=64",
            "device.geometry.page_size=4096",
            "device.logical_pages=16384",
            "gc.free_blocks_low=2",
        ]
        .iter()
        .chain(sets)
        {
            b = b.set(set).unwrap();
        }
        b.build().unwrap()
    }

    fn run(config: &Config, ftl: &str, spec: &MixedSpec) -> crate::metrics::Report {
        let workload = spec.workload(config.device.logical_pages(), config.device.geometry.page_size).unwrap();
        crate::sim::run(config, ftl, workload).unwrap().report
    }

    #[test]
    fn replaces_dirty_entries_far_less_often_than_dftl_under_random_writes() {
        // Paper 002's DFTL: 8-byte entries in the same 1 KB, LRU, one entry per write-back, GC
        // updates batched per TP.
        let c = small_ssd(&[
            "ftl.dftl.cache_bytes=1024",
            "ftl.dftl.entry_bits=64",
            "ftl.dftl.replacement=\"lru\"",
            "ftl.dftl.batch_update=false",
            "ftl.dftl.gc_batch_update=true",
        ]);
        let spec = MixedSpec {
            requests: 30_000,
            read_fraction: 0.2,
            sequential_fraction: 0.05,
            seed: 3,
            ..MixedSpec::default()
        };
        let tpftl = run(&c, "tpftl", &spec).cache;
        let dftl = run(&c, "dftl", &spec).cache;
        let (t, d) = (tpftl.dirty_eviction_probability.unwrap(), dftl.dirty_eviction_probability.unwrap());
        assert!(t < 0.5 * d, "P_rd: TPFTL {t:.3}, DFTL {d:.3}");
        assert!(tpftl.translation_writes_per_host_page < dftl.translation_writes_per_host_page);
    }

    #[test]
    fn with_the_whole_map_cached_it_responds_as_fast_as_the_optimal_ftl() {
        // Paper 002's SSD (4 KB pages, 64-page blocks, 25/200/1500 us) at 256 MB, a third spare:
        // TPFTL's 64 translation pages fill one block, which the optimal FTL has for data.
        let c = ConfigBuilder::new()
            .preset("tpftl")
            .unwrap()
            .set("device.logical_pages=65536")
            .unwrap()
            .set("device.geometry.blocks_per_plane=1536")
            .unwrap()
            .set("gc.free_blocks_low=5")
            .unwrap()
            .set(&format!("ftl.tpftl.cache_bytes={}", 65536 * 6 + 64 * 6))
            .unwrap()
            .build()
            .unwrap();
        let spec = MixedSpec { requests: 60_000, seed: 5, mean_interarrival_us: 100_000.0, ..MixedSpec::default() };
        let window = |ftl: &str| {
            let mut sim = Simulation::new(&c, ftl).unwrap();
            sim.precondition().unwrap();
            // The caches start cold: one sequential read pass loads every entry.
            for (i, first) in (0..65536).step_by(8).enumerate() {
                sim.serve(PageRequest {
                    arrival: i as u64 * 1_000_000,
                    kind: IoKind::Read,
                    first: Lpn::new(first),
                    pages: 8,
                    span: crate::host::SectorSpan::WHOLE,
                })
                .unwrap();
            }
            let a = sim.result("warm", serde_json::Value::Null, 1.0).unwrap().report;
            for r in spec.workload(65536, 4096).unwrap().requests.map(|r| r.unwrap()) {
                let (first, pages) = ((r.offset_bytes / 4096) as u32, (r.len_bytes / 4096) as u32);
                sim.serve(PageRequest {
                    arrival: 8192 * 1_000_000 + r.arrival_ns,
                    kind: r.kind,
                    first: Lpn::new(first),
                    pages,
                    span: crate::host::SectorSpan::WHOLE,
                })
                .unwrap();
            }
            let b = sim.result("window", serde_json::Value::Null, 1.0).unwrap().report;
            let total = |r: &crate::metrics::Report| r.response.mean_us * r.host.requests as f64;
            let mean = (total(&b) - total(&a)) / (b.host.requests - a.host.requests) as f64;
            let translation =
                b.reads.translation + b.programs.translation - a.reads.translation - a.programs.translation;
            (mean, translation, b.gc_victims - a.gc_victims)
        };
        let (tpftl, translation, victims) = window("tpftl");
        let (optimal, _, _) = window("optimal");
        assert_eq!(translation, 0);
        assert!(victims > 100, "{victims}");
        assert!((tpftl / optimal - 1.0).abs() < 0.01, "mean response {tpftl:.1} us against {optimal:.1} us");
    }

    #[test]
    fn runs_under_the_oracle_with_power_losses_in_every_configuration() {
        for variant in ["-", "r", "s", "rs", "b", "c", "bc", "rsbc"] {
            let v = format!("ftl.tpftl.variant=\"{variant}\"");
            let report = run_checked("tpftl", &[&v]);
            assert!(report.gc_victims > 0 && report.cache.dirty_eviction_probability.is_some(), "{variant}");
        }
        for extra in
            ["ftl.tpftl.page_order=\"lru\"", "ftl.tpftl.request_prefetch_any_miss=true", "ftl.tpftl.node_bytes=8"]
        {
            let report = run_checked("tpftl", &[extra]);
            assert!(report.cache.gc_hit_ratio.is_some(), "{extra}");
        }
    }
}
