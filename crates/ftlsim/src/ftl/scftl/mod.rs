//! SCFTL (paper 000 chapter 5, spec 5.1-5.7): a demand-based page-level FTL whose cached mapping
//! table (CMT) exploits spatial locality with small entries carrying a consecutive field, and
//! keeps write-backs rare and economical with the D-NRU replacement policy.
//!
//! - Two-level translation (§5.1.1): the TPD (the frame's GTD, 36 bits per entry: TP PPN, 3-bit
//!   modified counter MC, modified flag) locates the TP; one TP read gives the PPN.
//! - A miss (§5.1.2.1, Fig 5.1) makes room with a normal-fetch victim, reads the TP, and caches the
//!   maximal run of consecutive PPNs around the LPN (at most 2^C mappings, inside the TP, not
//!   overlapping cached entries) with A set. A spatial fetch then caches the runs that follow, up
//!   to `max_spatial_entries` mappings counted from the run's start (cached LPNs are skipped but
//!   count), without A, each with a spatial-fetch victim; it stops when D-NRU finds no victim for
//!   it or the victim came in with this same access. A host write also fetches (spec A6).
//! - An update (a host write, trim or GC move; Fig 5.2) takes the LPN out of its entry (cases
//!   a-d), then either merges it into the entry ending at LPN - 1 when that entry maps it to the
//!   page programmed just before in the same block (the sequential merge) or gives it an entry of
//!   its own, modified. Room for the pieces is made first with normal-fetch victims.
//! - Evicting a modified entry writes its TP back with every modified entry of that TP (read, merge,
//!   program); they stay cached, clean.
//! - GC moves need no TP read: a cached LPN is updated (a HIT), an uncached one gets a modified
//!   entry (MISS without penalty, or with write-back if making room wrote a TP).
//!
//! Choices where the paper is silent (see also spec 9):
//! - MC counts modified *mapping* entries of the TP (the paper's words; a modified entry weighs
//!   its length), shown saturated at 7; c = 7 by default (A7).
//! - Within a D-NRU class, first in first out; A is cleared on all other entries when an access
//!   leaves every entry with A set (A7). Plain NRU and LRU set A / insert at the most recent
//!   position for spatial entries too ("treat each small cache entry fetch equally", §5.3.1).
//! - Only spatial fetches leave A clear: an update of an uncached LPN, GC moves included, is a
//!   normal fetch and sets it; a GC move of a cached LPN leaves its A as it was (spec T21).
//! - The ablations (§5.3) are parameters: `replacement`, `entry_layout = "large"` with
//!   `large_entry_mappings` (a miss, GC ones included, fetches the aligned chunk: no MISS(0R)),
//!   `consecutive_bits` (0: no consecutive field), `spatial_fetch` and `max_spatial_entries`.
//!   Every variant sizes its CMT from `cache_bytes` with its own entry size.

mod cmt;
mod tags;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use self::cmt::{Cmt, Layout, Replacement};
use super::common::cache::nru::{Fetch, Nru, MC_MAX};
use super::common::cache::Lru;
use super::common::changes::Waiting;
use super::common::demand::{
    entries_in, miss_class, params_json, prefetch_relocation, sram_of, DemandFtl, DemandScheme,
};
use super::common::translation::{write_back, TranslationOwner, TranslationStore, DEMAND_LAYOUT, DEMAND_STREAMS};
use super::common::{BlockManager, Relocate};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, SramItem};
use crate::check::suite::{bytes_of, quarter_map};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, Ppn, Spare, Tpn};
use crate::metrics::CacheAccess;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScftlReplacement {
    Lru,
    Nru,
    DNru,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryLayout {
    /// Tag + PPN + consecutive field (paper 000's SCFTL).
    Small,
    /// Tag + an aligned chunk of PPNs (the large-entry ablation, Fig 5.15).
    Large,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScftlParams {
    /// SRAM of the CMT in bytes (paper 000 Table 5.2: 18.00 KB = 2048 entries of 9 bytes).
    pub cache_bytes: u64,
    /// "d-nru" (Table 5.1), "nru" or "lru" (the ablation of Figs 5.13-5.14).
    pub replacement: ScftlReplacement,
    /// D-NRU's threshold c on the 3-bit modified counter (1 to 7; unused by NRU and LRU).
    pub mc_threshold: u32,
    /// "small" (SCFTL) or "large" (Fig 5.15; ignores the three small-entry parameters below).
    pub entry_layout: EntryLayout,
    /// Small entries: bits of the consecutive field (an entry maps up to 2^bits LPNs); 0: none.
    pub consecutive_bits: u32,
    /// Small entries: fetch the runs after the requested one on a miss.
    pub spatial_fetch: bool,
    /// Small entries: mapping entries one miss may bring in, the requested run included.
    pub max_spatial_entries: u32,
    /// Large entries: mapping entries per entry (one aligned chunk of a TP).
    pub large_entry_mappings: u32,
}

pub const INFO: FtlInfo = FtlInfo {
    name: "scftl",
    description: "SCFTL: small entries with a consecutive field, spatial fetch, D-NRU replacement",
    family: Family::DemandBased,
    build: Scftl::build,
    params: ParamsSchema::of::<ScftlParams>(&[
        ParamSpec {
            name: "cache_bytes",
            range: ParamRange::Integer { min: 1, max: i64::MAX },
            meaning: "SRAM of the CMT, bytes",
            source: "paper 000 Table 5.2: 18 KB = 2048 entries of 9 B",
        },
        ParamSpec {
            name: "replacement",
            range: ParamRange::OneOf(&["d-nru", "nru", "lru"]),
            meaning: "CMT replacement policy",
            source: "paper 000 Table 5.1; Figs 5.13-5.14 ablation",
        },
        ParamSpec {
            name: "mc_threshold",
            range: ParamRange::Integer { min: 1, max: MC_MAX as i64 },
            meaning: "D-NRU's threshold on the 3-bit modified counter",
            source: "paper 000 §5.2",
        },
        ParamSpec {
            name: "entry_layout",
            range: ParamRange::OneOf(&["small", "large"]),
            meaning: "small entries (SCFTL) or large entries (Fig 5.15)",
            source: "paper 000 §5.3",
        },
        ParamSpec {
            name: "consecutive_bits",
            range: ParamRange::Integer { min: 0, max: 16 },
            meaning: "small entries: bits of the consecutive field (0: none)",
            source: "paper 000 §5.1: 5",
        },
        ParamSpec {
            name: "spatial_fetch",
            range: ParamRange::Flag,
            meaning: "small entries: fetch the runs after the requested one on a miss",
            source: "paper 000 §5.1",
        },
        ParamSpec {
            name: "max_spatial_entries",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
            meaning: "small entries: mapping entries one miss may bring in",
            source: "spec recommendation: 64",
        },
        ParamSpec {
            name: "large_entry_mappings",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
            meaning: "large entries: mapping entries per entry",
            source: "paper 000 Fig 5.15",
        },
    ]),
    spare_layout: DEMAND_LAYOUT,
    streams: DEMAND_STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 17.0,
    spare_blocks_needed: TranslationStore::spare_blocks_needed,
    test_overrides: |c| vec![("cache_bytes", bytes_of(quarter_map(c), 72))],
};

impl Default for ScftlParams {
    fn default() -> Self {
        ScftlParams {
            cache_bytes: 18_432,
            replacement: ScftlReplacement::DNru,
            mc_threshold: MC_MAX,
            entry_layout: EntryLayout::Small,
            consecutive_bits: 5,
            spatial_fetch: true,
            max_spatial_entries: 64,
            large_entry_mappings: 64,
        }
    }
}

impl ScftlParams {
    /// Bits of one CMT entry: tag, PPN(s), consecutive field, V/M/A flags (9 bytes by default).
    pub fn entry_bits(&self) -> u32 {
        match self.entry_layout {
            EntryLayout::Small => 32 + 32 + self.consecutive_bits + 3,
            EntryLayout::Large => 32 + 32 * self.large_entry_mappings + 3,
        }
    }
}

/// Bits of a TPD entry: TP PPN, 3-bit MC, modified flag (paper 000 §5.2: 2.25 KB for 512).
const TPD_BITS: u32 = 32 + 3 + 1;

pub struct Scftl {
    params: ScftlParams,
    store: TranslationStore,
    cmt: Cmt,
    pending: Waiting,
    /// Counts host accesses; entries remember the one that brought them in.
    access: u32,
    /// Mapping entries a miss may bring in (0: no spatial fetch).
    window: u32,
    pages_per_block: u32,
}

impl Scftl {
    pub fn new(config: &Config, params: ScftlParams) -> Result<Self> {
        let store = TranslationStore::new(config)?;
        if !(1..=MC_MAX).contains(&params.mc_threshold) {
            return Err(SimError::config("ftl.scftl.mc_threshold", format!("must be 1 to {MC_MAX} (a 3-bit counter)")));
        }
        if params.consecutive_bits > 16 {
            return Err(SimError::config("ftl.scftl.consecutive_bits", "must be at most 16"));
        }
        if params.max_spatial_entries == 0 {
            return Err(SimError::config("ftl.scftl.max_spatial_entries", "must be at least 1"));
        }
        let large = params.entry_layout == EntryLayout::Large;
        if large && !(1..=store.entries_per_tp()).contains(&params.large_entry_mappings) {
            return Err(SimError::config(
                "ftl.scftl.large_entry_mappings",
                format!("must be 1 to the {} entries of a translation page", store.entries_per_tp()),
            ));
        }
        let entries = entries_in(params.cache_bytes, params.entry_bits(), config, "ftl.scftl.cache_bytes")?;
        let layout = match params.entry_layout {
            EntryLayout::Small => Layout::Small { max_len: 1 << params.consecutive_bits },
            EntryLayout::Large => Layout::Large { chunk: params.large_entry_mappings },
        };
        let policy = match params.replacement {
            ScftlReplacement::Lru => Replacement::Lru(Lru::new(entries)),
            ScftlReplacement::Nru => Replacement::Nru(Nru::new(entries, 1, MC_MAX)),
            ScftlReplacement::DNru => Replacement::DNru(Nru::new(entries, store.tp_count(), params.mc_threshold)),
        };
        Ok(Scftl {
            cmt: Cmt::new(layout, entries, policy, &store),
            store,
            pending: Waiting::default(),
            access: 0,
            window: if params.spatial_fetch { params.max_spatial_entries } else { 0 },
            pages_per_block: config.device.geometry.pages_per_block,
            params,
        })
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: ScftlParams = ftl_params(config, "scftl")?;
        Ok(Box::new(DemandFtl::new(config, Scftl::new(config, params)?)))
    }

    /// Evicts an entry; a modified one takes its TP's write-back with it. Returns whether it wrote.
    #[inline]
    fn evict(&mut self, slot: u32, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        ctx.cache.evictions += 1;
        if !self.cmt.is_dirty(slot) {
            self.cmt.remove(slot);
            return Ok(false);
        }
        self.evict_modified(slot, blocks, ctx)
    }

    #[cold]
    fn evict_modified(&mut self, slot: u32, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        ctx.cache.dirty_evictions += 1;
        let tp = self.cmt.tp(slot);
        for (lpn, ppn) in self.cmt.mappings(slot) {
            self.store.set(lpn, ppn);
        }
        self.cmt.remove(slot);
        write_back(self, blocks, tp, true, ctx)?;
        Ok(true)
    }

    /// Evicts normal-fetch victims until a slot is free; returns whether a TP was written back.
    fn make_room(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<bool> {
        let mut wrote = false;
        while self.cmt.is_full() {
            let victim = self.cmt.policy.victim(Fetch::Normal).expect("a full CMT has a victim");
            wrote |= self.evict(victim, blocks, ctx)?;
        }
        Ok(wrote)
    }

    /// Caches mappings of TP `tp` as its flash copy holds them (clean).
    fn insert_fetched(&mut self, tag: Lpn, tp: Tpn, len: u32, referenced: bool) -> u32 {
        let store = &self.store;
        self.cmt.insert(tag, tp, len, |lpn| store.entry(lpn), false, referenced, self.access)
    }

    /// The first LPN of the run of consecutive PPNs that ends at the uncached `lpn`.
    fn run_start(&self, lpn: Lpn, tp_start: Lpn) -> Lpn {
        let lowest = self.cmt.free_below(lpn).max(tp_start);
        lpn.back(self.store.consecutive_run_back(lpn, lpn.since(lowest) + 1) - 1)
    }

    #[inline]
    fn run(&self, start: Lpn, limit: Lpn) -> (u32, Option<Ppn>) {
        run(&self.cmt, &self.store, start, limit)
    }

    /// Caches the runs in `from..end` (in TP `tp`) that are not cached yet, each with a
    /// spatial-fetch victim; once D-NRU's next victim is a clean entry without A, the rest goes
    /// in one batch ([`Cmt::sweep`]). Returns whether an eviction wrote a TP back.
    fn spatial_fetch(
        &mut self,
        tp: Tpn,
        mut from: Lpn,
        end: Lpn,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<bool> {
        let referenced = !matches!(self.cmt.policy, Replacement::DNru(_));
        let mut wrote = false;
        while from < end {
            // `from` follows a run or an entry, so only an entry starting there can cover it.
            if let Some(slot) = self.cmt.at_head(from) {
                from = self.cmt.end(slot);
                continue;
            }
            if self.cmt.is_full() {
                let store = &self.store;
                if let Some(evicted) =
                    self.cmt.sweep(from, end, tp, self.access, |cmt, from| run(cmt, store, from, end))
                {
                    ctx.cache.evictions += u64::from(evicted);
                    break;
                }
                match self.cmt.policy.victim(Fetch::Spatial) {
                    Some(victim) if self.cmt.stamp(victim) != self.access => {
                        if !self.cmt.is_dirty(victim) {
                            // The common case, done in place: the run takes the clean victim's slot.
                            ctx.cache.evictions += 1;
                            let store = &self.store;
                            let len = self
                                .cmt
                                .refill(victim, from, tp, referenced, self.access, |cmt| run(cmt, store, from, end));
                            from = from.offset(len);
                            continue;
                        }
                        if self.evict(victim, blocks, ctx)? {
                            // GC during the write-back may have cached `from`, or filled the CMT.
                            wrote = true;
                            if let Some(slot) = self.cmt.find(from) {
                                from = self.cmt.end(slot);
                            }
                            continue;
                        }
                    }
                    _ => break,
                }
            }
            let (len, base) = self.run(from, end);
            self.cmt.insert(from, tp, len, |_| base, false, referenced, self.access);
            from = from.offset(len);
        }
        Ok(wrote)
    }

    /// The entry ending at `lpn - 1` (`left` covers `lpn - 1`) that can take `lpn -> ppn` by the
    /// sequential merge: it maps `lpn - 1` to the page programmed just before `ppn` in the same
    /// block, in the same TP.
    #[inline]
    fn merge_target(&self, lpn: Lpn, ppn: Option<Ppn>, left: Option<u32>) -> Option<u32> {
        let ppn = ppn?;
        if lpn.get().is_multiple_of(self.store.entries_per_tp()) || ppn.get().is_multiple_of(self.pages_per_block) {
            return None;
        }
        let slot = left?;
        let fits = self.cmt.end(slot) == lpn && self.cmt.entry_len(slot) < self.cmt.max_len();
        (fits && self.cmt.ppn(slot, lpn.back(1)) == Some(ppn.back(1))).then_some(slot)
    }

    /// How an update of `lpn` to `ppn` goes in the current CMT.
    #[inline]
    fn plan(&self, lpn: Lpn, ppn: Option<Ppn>) -> Plan {
        if let Layout::Large { .. } = self.cmt.layout() {
            let cached = self.cmt.find(lpn);
            return Plan { cached, merge: None, slots: cached.is_none() as u32 };
        }
        let (cached, left) = self.cmt.find_with_left(lpn);
        let merge = self.merge_target(lpn, ppn, left);
        let own = merge.is_none() as u32;
        // Fig 5.2: 0 free slots for case a, 1 for b and c, 2 for d; one fewer with a merge.
        let slots = match cached {
            None => own,
            Some(slot) if self.cmt.entry_len(slot) == 1 => 0,
            Some(slot) if lpn == self.cmt.tag(slot) || lpn.offset(1) == self.cmt.end(slot) => own,
            Some(_) => 1 + own,
        };
        Plan { cached, merge, slots }
    }

    /// Records `lpn -> ppn` (a host write or trim when `host`, else a GC move) as a modified
    /// mapping, making room first. Returns how it went.
    fn update(
        &mut self,
        lpn: Lpn,
        ppn: Option<Ppn>,
        host: bool,
        blocks: &mut BlockManager,
        ctx: &mut FtlCtx,
    ) -> Result<Updated> {
        self.pending.push(lpn, ppn);
        let mut plan = self.plan(lpn, ppn);
        let hit = plan.cached.is_some();
        let mut wrote = false;
        while self.cmt.free_slots() < plan.slots {
            let victim = self.cmt.policy.victim(Fetch::Normal).expect("a CMT short of slots has entries");
            let wrote_back = self.evict(victim, blocks, ctx)?;
            wrote |= wrote_back;
            // GC during a write-back may have moved the page again, or changed the entries around.
            if wrote_back || plan.cached == Some(victim) || plan.merge == Some(victim) {
                plan = self.plan(lpn, self.pending.last_ppn());
            }
        }
        let (_, ppn) = self.pending.pop();
        let fetched = match self.cmt.layout() {
            Layout::Small { .. } => {
                self.apply(lpn, ppn, host, plan);
                false
            }
            Layout::Large { chunk } => self.apply_large(lpn, ppn, chunk, plan.cached, ctx)?,
        };
        Ok(Updated { hit, wrote, fetched })
    }

    /// The four update cases of Fig 5.2 and the sequential merge, as planned; room was made.
    fn apply(&mut self, lpn: Lpn, ppn: Option<Ppn>, host: bool, plan: Plan) {
        let merge = plan.merge;
        // A new mapping is a normal fetch (A set), but a GC move leaves a cached mapping's A as it was.
        let mut referenced = true;
        if let Some(slot) = plan.cached {
            referenced = host || self.cmt.policy.is_referenced(slot);
            let (tag, end) = (self.cmt.tag(slot), self.cmt.end(slot));
            if end.since(tag) == 1 {
                if merge.is_none() {
                    // (a) normal update.
                    self.cmt.set_single(slot, ppn);
                    self.cmt.mark_dirty(slot);
                    if host {
                        self.cmt.policy.touch(slot);
                    }
                    return;
                }
                self.cmt.remove(slot);
            } else if lpn == tag {
                self.cmt.drop_head(slot); // (b) lower bound
            } else if lpn.offset(1) == end {
                self.cmt.drop_tail(slot); // (c) upper bound
            } else {
                self.cmt.split_around(slot, lpn); // (d) middle
            }
        }
        match merge {
            Some(slot) => {
                self.cmt.extend(slot);
                self.cmt.mark_dirty(slot);
                if host {
                    self.cmt.policy.touch(slot);
                }
            }
            None => {
                self.cmt.insert(lpn, self.store.tp_of(lpn), 1, |_| ppn, true, referenced, self.access);
            }
        }
    }

    /// A large entry takes the new PPN; a chunk that is not cached is fetched first (one TP read).
    fn apply_large(
        &mut self,
        lpn: Lpn,
        ppn: Option<Ppn>,
        chunk: u32,
        cached: Option<u32>,
        ctx: &mut FtlCtx,
    ) -> Result<bool> {
        let (slot, fetched) = match cached {
            Some(slot) => (slot, false),
            None => {
                let tp = self.store.tp_of(lpn);
                let fetched = self.store.fetch(tp, ctx)?;
                let tag = self.cmt.chunk_start(lpn, chunk);
                let len = chunk.min(self.store.lpns(tp).end.since(tag));
                (self.insert_fetched(tag, tp, len, true), fetched)
            }
        };
        self.cmt.set_value(slot, lpn, ppn);
        self.cmt.mark_dirty(slot);
        Ok(fetched)
    }

    /// The mapping of an LPN from the CMT or, if not cached, from flash.
    fn resolve(&self, lpn: Lpn) -> Option<Ppn> {
        self.cached(lpn).unwrap_or_else(|| self.store.entry(lpn))
    }

    #[cfg(test)]
    fn cmt(&self) -> &Cmt {
        &self.cmt
    }
}

/// How an update goes: the entry holding the LPN, the entry it merges into, the free slots needed.
#[derive(Clone, Copy)]
struct Plan {
    cached: Option<u32>,
    merge: Option<u32>,
    slots: u32,
}

/// What an update took: whether the LPN was cached, a TP was written back, a TP was read.
struct Updated {
    hit: bool,
    wrote: bool,
    fetched: bool,
}

/// The run of consecutive PPNs from the uncached `start`, stopping before `limit` or an LPN cached
/// in `cmt`, at most an entry long: its length and first PPN.
#[inline(always)] // per cached run of a spatial fetch: a call cost a fifth of it
fn run(cmt: &Cmt, store: &TranslationStore, start: Lpn, limit: Lpn) -> (u32, Option<Ppn>) {
    let limit = limit.min(start.offset(cmt.max_len()));
    store.consecutive_run(start, cmt.next_head_after(start, limit).since(start))
}

impl Relocate for Scftl {
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
        if self.pending.relocated(lpn, new) {
            ctx.cache.record_gc(CacheAccess::Hit);
            return Ok(());
        }
        let u = self.update(lpn, Some(new), false, blocks, ctx)?;
        ctx.cache.record_gc(if u.hit { CacheAccess::Hit } else { miss_class(u.wrote, u.fetched) });
        Ok(())
    }
}

impl TranslationOwner for Scftl {
    fn store(&mut self) -> &mut TranslationStore {
        &mut self.store
    }

    /// Every modified entry of the TP goes into the copy and becomes clean (batch update, A10).
    fn publish(&mut self, tp: Tpn) -> bool {
        let store = &mut self.store;
        self.cmt.clean_tp(tp, |lpn, ppn| store.set(lpn, ppn));
        self.pending.publish(tp, store);
        true
    }
}

impl DemandScheme for Scftl {
    fn name(&self) -> &'static str {
        "scftl"
    }

    fn store_ref(&self) -> &TranslationStore {
        &self.store
    }

    fn prefetch(&self, lpn: Lpn) {
        self.cmt.prefetch(lpn);
        self.store.prefetch(lpn);
    }

    #[inline]
    fn translate(&mut self, lpn: Lpn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.access = self.access.wrapping_add(1);
        if let Some(slot) = self.cmt.find(lpn) {
            self.cmt.policy.touch(slot);
            ctx.cache.record(CacheAccess::Hit);
            return Ok(self.cmt.ppn(slot, lpn));
        }
        let mut wrote = self.make_room(blocks, ctx)?;
        // GC during a write-back may have cached the entry (a moved page of this LPN).
        if let Some(slot) = if wrote { self.cmt.find(lpn) } else { None } {
            self.cmt.policy.touch(slot);
            ctx.cache.record(miss_class(wrote, false));
            return Ok(self.cmt.ppn(slot, lpn));
        }
        let tp = self.store.tp_of(lpn);
        let fetched = self.store.fetch(tp, ctx)?;
        let lpns = self.store.lpns(tp);
        // The mapping of `lpn` in the entry just cached (small entries).
        let mut cached = None;
        match self.cmt.layout() {
            Layout::Large { chunk } => {
                let tag = self.cmt.chunk_start(lpn, chunk);
                self.insert_fetched(tag, tp, chunk.min(lpns.end.since(tag)), true);
            }
            Layout::Small { .. } => {
                let start = self.run_start(lpn, lpns.start);
                let (len, base) = self.run(start, lpns.end);
                self.cmt.insert(start, tp, len, |_| base, false, true, self.access);
                cached = Some(base.map(|base| base.offset(lpn.since(start))));
                if self.window > len {
                    let end = start.offset(self.window).min(lpns.end);
                    wrote |= self.spatial_fetch(tp, start.offset(len), end, blocks, ctx)?;
                }
            }
        }
        ctx.cache.record(miss_class(wrote, fetched));
        // GC during a spatial fetch's write-back may have moved the page. Without a write-back
        // no GC ran, and the spatial fetch evicts no entry of this access: the entry still holds.
        match cached {
            Some(ppn) if !wrote => {
                debug_assert_eq!(ppn, self.resolve(lpn));
                Ok(ppn)
            }
            _ => Ok(self.resolve(lpn)),
        }
    }

    #[inline]
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        self.update(lpn, ppn, true, blocks, ctx)?;
        Ok(())
    }

    #[inline]
    fn cached(&self, lpn: Lpn) -> Option<Option<Ppn>> {
        self.pending.get(lpn).or_else(|| self.cmt.find(lpn).map(|slot| self.cmt.ppn(slot, lpn)))
    }

    fn flush(&mut self, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<()> {
        // GC during a write-back may modify entries of TPs already written: repeat until none is.
        loop {
            let mut wrote = false;
            for tp in self.store.tps() {
                if self.cmt.dirty_count(tp) > 0 {
                    write_back(self, blocks, tp, true, ctx)?;
                    wrote = true;
                }
            }
            if !wrote {
                return Ok(());
            }
        }
    }

    fn clear_cache(&mut self) {
        self.cmt.clear();
        self.pending.clear();
    }

    fn check(&self, _: &FlashArray) -> std::result::Result<(), String> {
        self.pending.check()?;
        self.cmt.check(&self.store)
    }

    fn cache_sram(&self) -> Vec<SramItem> {
        let (n, bits) = (self.cmt.capacity(), self.params.entry_bits());
        vec![sram_of(format!("CMT ({n} entries x {bits} bits)"), n as u64, bits)]
    }

    fn cache_sram_in_use(&self) -> u64 {
        (self.cmt.len() as u64 * self.params.entry_bits() as u64).div_ceil(8)
    }

    fn gtd_bits(&self) -> u32 {
        TPD_BITS
    }

    fn state_bytes(&self) -> usize {
        self.cmt.memory_bytes()
    }

    fn params(&self) -> serde_json::Value {
        params_json(&self.params)
    }
}
