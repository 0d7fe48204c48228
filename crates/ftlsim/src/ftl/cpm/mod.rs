//! CPM and K-CPM (Kim and Shin, "Clustered Page-Level Mapping for Flash Memory-Based Storage
//! Devices", IEEE Trans. Consumer Electronics; paper 004; spec ../shared/specs/tpftl-fast-cpm.md
//! Part C).
//!
//! The logical space is cut into clusters of `S_C` logical blocks (`cluster_blocks`); each
//! cluster holds up to `N_Bmax^C` physical blocks (`max_blocks`) and writes its pages out of
//! place into them, so a block holds logically close pages (hot and cold data separate by
//! address, and a GC victim's pages share a few translation pages).
//!
//! - Maps: the PMT in translation pages, cached as whole pages (LRU, `pmt_cache_bytes`); the
//!   CBMT (each cluster's blocks and their valid counts) in translation pages after the PMT's,
//!   cached row by row (LRU) in what `other_sram_bytes` leaves after the GTD, the CIC and, for
//!   K-CPM, the CAMT and CDMT entries (8 B per association; spec C7). A row miss reads its page;
//!   evicting a dirty row reads and rewrites it (C10). The CIC (invalid pages per cluster) is in
//!   SRAM. Translation blocks are collected by the block manager's greedy GC, apart from the
//!   clusters' blocks (C9).
//! - Write (C.4, with C1's `=`): a free page of the cluster; else a new block if it holds fewer
//!   than `N_Bmax^C` and a free block is left; else GC for the cluster.
//! - GC: IntraGC (the cluster's block with the most invalid pages is copied into the reserved
//!   block, which joins the cluster; the victim is erased and becomes the reserved block) or
//!   InterGC (from the cluster with the largest CIC, the blocks with the fewest valid pages that
//!   free a whole block, C4; copies go to the reserved block; one freed block goes to the
//!   cluster, one is reserved), chosen by Eq. 2's efficiency; IntraGC only when the cluster
//!   holds `N_Bmax^C` blocks (see `gc.rs`).
//! - K-CPM (`kcpm`, C.6): a cluster may write into up to K - 1 other clusters' blocks (N_alpha
//!   counts the owner, so K = 1 is CPM): write cases 3 (a distributed cluster with free pages)
//!   and 4 (a new one: the cluster below K associations with the most free pages, C15), also
//!   when no free block is left (`dc_on_pool_empty`); IntraGC over the cluster and its
//!   distributed clusters, InterGC from outside them, K-InterGC when no cluster can take the
//!   freed block.
//!
//! What the paper leaves open, ftlsim's choices (docs/presets.md lists them):
//! - the blocks the clusters may take stop `gc.free_blocks_low + 2` blocks short of each unit's
//!   pool (the translation stream opens blocks and collects there), and the translation blocks
//!   are kept within a budget: their pages' blocks plus one, and up to as many again where the
//!   device has room (an overrun is collected greedily after each host request);
//! - a cluster with no free page never writes into a block beyond one partly written block at a
//!   time (C13); InterGC victims may include partly written blocks (their free pages are freed too);
//!   freed victims beyond the two InterGC hands out return to the free pool;
//! - every page's spare area carries its saved cluster (2 bytes), which recovery reads with each
//!   block's first page: the CBMT, the CIC, and K-CPM's CAMT and CDMT (owner from the LPN, saved
//!   cluster from the block) are rebuilt from the spare areas and the recovered PMT.

mod clusters;
mod gc;
mod map;
#[cfg(test)]
mod tests;
mod tree;

use serde::{Deserialize, Serialize};

use self::clusters::Clusters;
use self::map::{CpmMap, RowCache};
use super::common::cache::{load, PageCache};
use super::common::translation::{write_back, write_back_recovered, StoreLayout, TranslationStore};
use super::common::{gc_threshold, BlockManager, BlockRole, StreamId, StreamSpec};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, PageRef, Prefetch, SramBreakdown, SramItem};
use crate::check::suite::quarter_map;
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{
    FlashArray, Lpn, PageKind, Pbn, Ppn, Purpose, SpareField, SpareLayout, KIND_FIELD, LOGICAL_FIELD, VERSION_FIELD,
};
use crate::metrics::{ClusterStats, FlashTimes, TableSizes};

/// The one stream CPM declares: translation pages (PMT and CBMT). The clusters' data blocks are
/// taken whole.
const MAP_STREAM: StreamId = StreamId::new(0);
const STREAMS: &[StreamSpec] = &[StreamSpec::new("map", PageKind::Translation)];

/// The demand-based fields and the saved cluster of the page's block.
const LAYOUT: SpareLayout = SpareLayout {
    fields: &[
        KIND_FIELD,
        LOGICAL_FIELD,
        VERSION_FIELD,
        SpareField::new("page sequence number", 4),
        SpareField::new("saved cluster", 2),
    ],
};

/// SRAM per K-CPM association: its CAMT entry (owner and adopted count) and its CDMT entry,
/// 4 bytes each (Table I).
const ASSOCIATION_BYTES: u64 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InterGcFreePages {
    /// Every page the victims free: m x P - V_tot (spec C3's default).
    Reclaimed,
    /// Only the block the target cluster receives: P.
    OneBlock,
}

/// Which distributed cluster K-CPM's write case 3 picks (C15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DcChoice {
    /// The first with free pages, in CDMT order.
    First,
    /// The one with the most free pages.
    MostFree,
}

/// CPM's parameters (flattened into K-CPM's; the registry refuses unknown fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpmParams {
    /// S_C: logical blocks per cluster (paper 004 §VI: 16 MB = 16 blocks of 1 MB).
    pub cluster_blocks: u32,
    /// N_Bmax^C: physical blocks a cluster may hold (§VI: 32).
    pub max_blocks: u32,
    /// SRAM caching PMT pages (§VI: 96 KB, 12 VTPs of 8 KB).
    pub pmt_cache_bytes: u64,
    /// SRAM for the other tables: GTD, CIC, the CBMT row cache and K-CPM's CAMT and CDMT
    /// (§VI: 32 KB of the 128 KB).
    pub other_sram_bytes: u64,
    /// Eq. 2 also charges the map loading a GC needs (uncached PMT pages and CBMT rows, a read
    /// each); the paper's Eq. 2 does not.
    pub eps_includes_map_cost: bool,
    /// Eq. 2's free pages for InterGC (spec C3).
    pub inter_gc_free_pages: InterGcFreePages,
}

impl Default for CpmParams {
    fn default() -> Self {
        CpmParams {
            cluster_blocks: 16,
            max_blocks: 32,
            pmt_cache_bytes: 96 << 10,
            other_sram_bytes: 32 << 10,
            eps_includes_map_cost: false,
            inter_gc_free_pages: InterGcFreePages::Reclaimed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KcpmParams {
    #[serde(flatten)]
    pub cpm: CpmParams,
    /// K: associated clusters a cluster's blocks may hold pages of, itself included (§VI: 4).
    pub k: u32,
    /// Write cases 3 and 4 also when no free block is left, not only at N_Bmax^C (spec C.6 REC).
    pub dc_on_pool_empty: bool,
    pub dc_choice: DcChoice,
}

impl Default for KcpmParams {
    fn default() -> Self {
        KcpmParams { cpm: CpmParams::default(), k: 4, dc_on_pool_empty: true, dc_choice: DcChoice::First }
    }
}

const CPM_FIELDS: [ParamSpec; 6] = [
    ParamSpec {
        name: "cluster_blocks",
        range: ParamRange::Integer { min: 1, max: 1 << 20 },
        meaning: "S_C: logical blocks per cluster",
        source: "paper 004 §VI: 16 MB (16 blocks of 1 MB)",
    },
    ParamSpec {
        name: "max_blocks",
        range: ParamRange::Integer { min: 2, max: 1 << 20 },
        meaning: "N_Bmax^C: physical blocks a cluster may hold (more than cluster_blocks)",
        source: "paper 004 §VI: 32",
    },
    ParamSpec {
        name: "pmt_cache_bytes",
        range: ParamRange::Integer { min: 1, max: i64::MAX },
        meaning: "SRAM caching whole PMT pages (LRU)",
        source: "paper 004 §VI: 96 KB; spec C7",
    },
    ParamSpec {
        name: "other_sram_bytes",
        range: ParamRange::Integer { min: 1, max: i64::MAX },
        meaning: "SRAM for the GTD, CIC, CBMT row cache (and K-CPM's CAMT, CDMT)",
        source: "paper 004 §VI: 32 KB; spec C7",
    },
    ParamSpec {
        name: "eps_includes_map_cost",
        range: ParamRange::Flag,
        meaning: "Eq. 2 also charges the GC's map loading (a read per uncached PMT page and CBMT row)",
        source: "spec C.4 REC (the paper's Eq. 2 does not)",
    },
    ParamSpec {
        name: "inter_gc_free_pages",
        range: ParamRange::OneOf(&["reclaimed", "one-block"]),
        meaning: "Eq. 2's free pages of an InterGC: all it frees (m P - V_tot), or the one block given (P)",
        source: "spec C10 C3",
    },
];

const KCPM_FIELDS: [ParamSpec; 9] = [
    CPM_FIELDS[0],
    CPM_FIELDS[1],
    CPM_FIELDS[2],
    CPM_FIELDS[3],
    CPM_FIELDS[4],
    CPM_FIELDS[5],
    ParamSpec {
        name: "k",
        range: ParamRange::Integer { min: 1, max: 1024 },
        meaning: "K: clusters whose pages a cluster's blocks may hold, itself included (1: CPM)",
        source: "paper 004 §V, §VI: 4",
    },
    ParamSpec {
        name: "dc_on_pool_empty",
        range: ParamRange::Flag,
        meaning: "write cases 3 and 4 also when no free block is left, not only at max_blocks",
        source: "spec C.6 REC",
    },
    ParamSpec {
        name: "dc_choice",
        range: ParamRange::OneOf(&["first", "most-free"]),
        meaning: "write case 3: the first distributed cluster with free pages, or the one with most",
        source: "spec C10 C15",
    },
];

pub const INFO: FtlInfo = FtlInfo {
    name: "cpm",
    description: "CPM: page mapping within clusters of logical blocks, IntraGC / InterGC (paper 004)",
    family: Family::Clustered,
    build: |config| build(config, "cpm"),
    params: ParamsSchema::of::<CpmParams>(&CPM_FIELDS),
    spare_layout: LAYOUT,
    streams: STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 20.3,
    spare_blocks_needed: |config| spare_blocks_needed(config, "cpm"),
    test_overrides: |config| test_overrides(config, "cpm"),
};

pub const KCPM_INFO: FtlInfo = FtlInfo {
    name: "kcpm",
    description: "K-CPM: CPM whose clusters write into up to K - 1 others' blocks (paper 004)",
    family: Family::Clustered,
    build: |config| build(config, "kcpm"),
    params: ParamsSchema::of::<KcpmParams>(&KCPM_FIELDS),
    spare_layout: LAYOUT,
    streams: STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 20.3,
    spare_blocks_needed: |config| spare_blocks_needed(config, "kcpm"),
    test_overrides: |config| test_overrides(config, "kcpm"),
};

/// The parameters of scheme `name` as K-CPM's (CPM's with K = 1).
fn params_of(config: &Config, name: &str) -> Result<KcpmParams> {
    if name == "cpm" {
        let cpm: CpmParams = ftl_params(config, name)?;
        Ok(KcpmParams { cpm, k: 1, ..KcpmParams::default() })
    } else {
        ftl_params(config, name)
    }
}

fn build(config: &Config, name: &'static str) -> Result<Box<dyn Ftl>> {
    let params = params_of(config, name)?;
    let json = if name == "cpm" { serde_json::to_value(&params.cpm) } else { serde_json::to_value(&params) };
    Ok(Box::new(Cpm::new(config, name, &params, json.expect("parameters serialise"))?))
}

/// Sizes that follow from the device and the cluster parameters.
struct Sizes {
    clusters: u32,
    tps: u32,
    cbmt_pages: u32,
    rows_per_page: u32,
    row_bytes: u64,
    gtd_bytes: u64,
    cic_bytes: u64,
}

/// Bits holding values up to `max`.
fn bits(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

fn sizes(config: &Config, name: &str, p: &CpmParams) -> Result<Sizes> {
    let g = &config.device.geometry;
    let field = |f: &str| format!("ftl.{name}.{f}");
    let cluster_pages = p.cluster_blocks as u64 * g.pages_per_block as u64;
    let clusters = (config.device.logical_pages() as u64).div_ceil(cluster_pages).max(1);
    if clusters > u16::MAX as u64 + 1 {
        return Err(SimError::config(
            field("cluster_blocks"),
            format!("{} blocks make {clusters} clusters; a page's spare area numbers at most 65536", p.cluster_blocks),
        ));
    }
    if p.max_blocks <= p.cluster_blocks {
        return Err(SimError::config(
            field("max_blocks"),
            format!(
                "{} must exceed cluster_blocks ({}): a cluster must hold its logical blocks and garbage",
                p.max_blocks, p.cluster_blocks
            ),
        ));
    }
    // A CBMT entry: a block number and a valid count (Table I: 15 + 8 bits, 3 bytes).
    let entry_bits = bits(g.total_blocks() as u64 - 1) + bits(g.pages_per_block as u64);
    let row_bytes = p.max_blocks as u64 * entry_bits.div_ceil(8) as u64;
    let rows_per_page = (g.page_size as u64 / row_bytes).max(1) as u32;
    let clusters = clusters as u32;
    let cbmt_pages = RowCache::pages(clusters, rows_per_page);
    let tps = TranslationStore::pages_needed(config);
    let cic_bits = bits(p.max_blocks as u64 * g.pages_per_block as u64);
    Ok(Sizes {
        clusters,
        tps,
        cbmt_pages,
        rows_per_page,
        row_bytes,
        gtd_bytes: (tps + cbmt_pages) as u64 * 4,
        cic_bytes: clusters as u64 * cic_bits.div_ceil(8) as u64,
    })
}

/// How the device's spare blocks are shared.
struct Budget {
    /// Free blocks the clusters leave in each unit's pool: the map's GC reserve and two blocks
    /// the map stream fills before it collects, so that its collection has two victims to reclaim
    /// (the first one's moves may take a block).
    floor: usize,
    /// Blocks the translation pages may hold before the map GC runs after a host request.
    map_blocks: u32,
    needed: u64,
}

fn budget(config: &Config, s: &Sizes) -> Budget {
    let g = &config.device.geometry;
    let units = config.device.allocation_units() as u64;
    let floor = gc_threshold(config.gc.free_blocks_low, STREAMS.len() as u32) as u64 + 2;
    let map_pages = (s.tps + s.cbmt_pages).div_ceil(g.pages_per_block) as u64;
    // The blocks of the map's pages and its open block.
    let least_map = map_pages + 1;
    // Per unit its floor, the map's blocks, one reserved GC block, one block of slack per cluster.
    let needed = units * floor + least_map + 1 + s.clusters as u64;
    let spare = (g.total_pages().saturating_sub(config.device.logical_pages()) / g.pages_per_block) as u64;
    let map_blocks = least_map + map_pages.min(spare.saturating_sub(needed));
    Budget { floor: floor as usize, map_blocks: map_blocks as u32, needed }
}

fn spare_blocks_needed(config: &Config, name: &str) -> u64 {
    let params = params_of(config, name).unwrap_or_default();
    sizes(config, name, &params.cpm).map_or(u64::MAX, |s| budget(config, &s).needed)
}

/// Caches of about a quarter of the test device's map (whole pages, at least one) and CBMT rows
/// for about half its clusters (at least one), with room for an association per cluster; K-CPM
/// with K = 2.
fn test_overrides(config: &Config, name: &str) -> Vec<(&'static str, u64)> {
    let page = config.device.geometry.page_size as u64;
    let mut sets = vec![("pmt_cache_bytes", (quarter_map(config) * 4 / page).max(1) * page)];
    if name == "kcpm" {
        sets.push(("k", 2));
    }
    if let Ok(s) = sizes(config, name, &CpmParams::default()) {
        let rows = s.row_bytes * (s.clusters as u64 / 2).max(1);
        sets.push(("other_sram_bytes", s.gtd_bytes + s.cic_bytes + rows + ASSOCIATION_BYTES * s.clusters as u64));
    }
    sets
}

/// The resolved settings a run uses.
struct Settings {
    k: u32,
    dc_on_pool_empty: bool,
    dc_choice: DcChoice,
    eps_includes_map_cost: bool,
    inter_gc_free_pages: InterGcFreePages,
    times: FlashTimes,
    page_size: u64,
    other_sram: u64,
    /// GTD and CIC: the part of `other_sram` not left to rows and associations.
    fixed_sram: u64,
    gtd_bytes: u64,
    cic_bytes: u64,
    row_bytes: u64,
}

pub struct Cpm {
    name: &'static str,
    params: serde_json::Value,
    s: Settings,
    map: CpmMap,
    blocks: BlockManager,
    clusters: Clusters,
    /// The erased block GC copies into next (B8 / B9 in Fig. 6).
    reserve: Option<Pbn>,
    next_unit: u32,
    floor: usize,
    map_blocks: u32,
}

/// Attempts at placing a page (each after a GC) before the device is declared full.
const PLACE_ATTEMPTS: u32 = 8;

impl Cpm {
    fn new(config: &Config, name: &'static str, p: &KcpmParams, params: serde_json::Value) -> Result<Self> {
        let g = &config.device.geometry;
        let s = sizes(config, name, &p.cpm)?;
        let b = budget(config, &s);
        let spare = (g.total_pages().saturating_sub(config.device.logical_pages()) / g.pages_per_block) as u64;
        if spare < b.needed {
            let field =
                if config.device.logical_pages.is_some() { "device.logical_pages" } else { "device.overprovisioning" };
            return Err(SimError::config(
                field,
                format!(
                    "{} exported pages leave {spare} spare blocks; {name} needs at least {}: {} free per allocation \
                     unit for the map GC, {} for the map's pages, 1 reserved GC block and 1 per cluster ({} clusters \
                     of ftl.{name}.cluster_blocks = {})",
                    config.device.logical_pages(),
                    b.needed,
                    b.floor,
                    b.map_blocks,
                    s.clusters,
                    p.cpm.cluster_blocks
                ),
            ));
        }
        let fixed_sram = s.gtd_bytes + s.cic_bytes;
        if p.cpm.other_sram_bytes < fixed_sram + s.row_bytes {
            return Err(SimError::config(
                format!("ftl.{name}.other_sram_bytes"),
                format!(
                    "{} bytes cannot hold the GTD ({} B), the CIC ({} B) and one CBMT row ({} B)",
                    p.cpm.other_sram_bytes, s.gtd_bytes, s.cic_bytes, s.row_bytes
                ),
            ));
        }
        let page_size = g.page_size as u64;
        if p.cpm.pmt_cache_bytes < page_size {
            return Err(SimError::config(
                format!("ftl.{name}.pmt_cache_bytes"),
                format!("{} bytes hold no {page_size}-byte PMT page", p.cpm.pmt_cache_bytes),
            ));
        }
        let layout = StoreLayout { stream: MAP_STREAM, aux_pages: s.cbmt_pages, interleaved_data: true };
        let store = TranslationStore::with_layout(config, layout);
        let pages = (p.cpm.pmt_cache_bytes / page_size).min(s.tps as u64) as u32;
        let latency = &config.device.latency;
        let associations = if p.k > 1 { s.clusters as u64 * p.k as u64 * 4 } else { 0 };
        let tables = TableSizes {
            pmt_bytes: config.device.logical_pages() as u64 * 4,
            cbmt_bytes: s.clusters as u64 * s.row_bytes,
            camt_bytes: associations,
            cdmt_bytes: associations,
        };
        let mut blocks = BlockManager::new(config, STREAMS);
        *blocks.cluster_stats_mut() = ClusterStats { tables, ..ClusterStats::default() };
        let mut cpm = Cpm {
            name,
            params,
            s: Settings {
                k: p.k,
                dc_on_pool_empty: p.dc_on_pool_empty,
                dc_choice: p.dc_choice,
                eps_includes_map_cost: p.cpm.eps_includes_map_cost,
                inter_gc_free_pages: p.cpm.inter_gc_free_pages,
                times: FlashTimes {
                    read_us: latency.read_us,
                    program_us: latency.program_us,
                    erase_us: latency.erase_us,
                },
                page_size,
                other_sram: p.cpm.other_sram_bytes,
                fixed_sram,
                gtd_bytes: s.gtd_bytes,
                cic_bytes: s.cic_bytes,
                row_bytes: s.row_bytes,
            },
            map: CpmMap { pmt: PageCache::new(&store, pages), cbmt: RowCache::new(s.clusters, s.rows_per_page), store },
            clusters: Clusters::new(
                config.device.logical_pages(),
                (p.cpm.cluster_blocks as u64 * g.pages_per_block as u64).min(u32::MAX as u64) as u32,
                p.cpm.max_blocks,
                p.k,
                g.pages_per_block,
                g.total_blocks(),
            ),
            blocks,
            reserve: None,
            next_unit: 0,
            floor: b.floor,
            map_blocks: b.map_blocks,
        };
        cpm.reserve = Some(cpm.blocks.take_reserved(0)?);
        Ok(cpm)
    }

    fn stats(&mut self) -> &mut ClusterStats {
        self.blocks.cluster_stats_mut()
    }

    /// CBMT rows the SRAM holds now: what the GTD, the CIC and the associations leave.
    fn row_capacity(&self) -> u32 {
        let used = self.s.fixed_sram + ASSOCIATION_BYTES * self.clusters.associations as u64;
        (self.s.other_sram.saturating_sub(used) / self.s.row_bytes) as u32
    }

    /// Makes `dc` a distributed cluster of `owner`; its CAMT and CDMT entries take SRAM from
    /// the CBMT rows.
    fn associate(&mut self, owner: u32, dc: u32, ctx: &mut FtlCtx) -> Result<()> {
        self.clusters.associate(owner, dc);
        self.stats().new_distributed_clusters += 1;
        let capacity = self.row_capacity();
        self.map.fit_rows(&mut self.blocks, capacity, ctx)
    }

    /// Whether one more association leaves room for a CBMT row.
    fn can_associate(&self) -> bool {
        let used = self.s.fixed_sram + ASSOCIATION_BYTES * (self.clusters.associations as u64 + 1);
        self.s.other_sram.saturating_sub(used) >= self.s.row_bytes
    }

    /// An access to cluster `c`'s CBMT row that changes it.
    fn row(&mut self, c: u32, ctx: &mut FtlCtx) -> Result<()> {
        let missed = !self.map.touch_row(c, true);
        if missed {
            // Only a miss needs the room for rows (a division).
            let capacity = self.row_capacity();
            self.map.load_row(&mut self.blocks, c, true, capacity, ctx)?;
        }
        let stats = self.stats();
        stats.cbmt_accesses += 1;
        stats.cbmt_misses += missed as u64;
        Ok(())
    }

    /// The cluster holding the page `ppn`.
    fn saved(&self, ppn: Ppn, flash: &FlashArray) -> u32 {
        self.clusters.holder(flash.addressing().block_of(ppn)).expect("a data page is in a cluster's block")
    }

    /// Translates an LPN for a host access (one classified access to its PMT page).
    fn translate(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let tp = self.map.store.tp_of(lpn);
        let class = load(&mut self.map, &mut self.blocks, tp, ctx)?;
        ctx.cache.record(class);
        Ok(self.map.pmt.entry(lpn, &self.map.store))
    }

    /// Records a new mapping; GC since the translation may have evicted its page.
    fn remap(&mut self, lpn: Lpn, ppn: Option<Ppn>, ctx: &mut FtlCtx) -> Result<()> {
        let tp = self.map.store.tp_of(lpn);
        if !self.map.pmt.contains(tp) {
            load(&mut self.map, &mut self.blocks, tp, ctx)?;
        }
        self.map.pmt.set(lpn, ppn, &self.map.store);
        Ok(())
    }

    /// The old copy of `lpn` at `old` becomes invalid: its block's valid count (CBMT) and its
    /// cluster's CIC, and an adopted page's association.
    fn drop_page(&mut self, lpn: Lpn, old: Ppn, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.invalidate(old, ctx.flash)?;
        let saved = self.clusters.invalidated(ctx.flash.addressing().block_of(old));
        let owner = self.clusters.of_lpn(lpn);
        if saved != owner {
            self.clusters.unadopt(owner, saved);
        }
        self.row(saved, ctx)
    }

    /// A unit whose pool can give the clusters a block, in turn.
    fn data_unit(&mut self) -> Option<u32> {
        let units = self.blocks.units();
        (0..units)
            .map(|step| (self.next_unit + step) % units)
            .find(|&u| self.blocks.free_blocks(u) > self.floor)
            .inspect(|&u| {
                self.next_unit = (u + 1) % units;
            })
    }

    /// A free page for a page owned by cluster `c` (K-CPM: possibly in a distributed cluster
    /// other than `exclude`), collecting garbage when needed, and the cluster whose block holds
    /// it (the page's saved cluster). `may_associate` allows write case 4 and K-InterGC (off
    /// while K-InterGC itself moves pages).
    fn place(&mut self, c: u32, exclude: Option<u32>, may_associate: bool, ctx: &mut FtlCtx) -> Result<(Ppn, u32)> {
        for _ in 0..PLACE_ATTEMPTS {
            // Case 1: a free page of the cluster.
            if let Some(ppn) = self.clusters.take_page(c, ctx.flash.geometry()) {
                return Ok((ppn, c));
            }
            // Case 2: a new block.
            if self.clusters.n_blocks(c) < self.clusters.max_blocks {
                if let Some(unit) = self.data_unit() {
                    let pbn = self.blocks.take_block(unit)?;
                    self.clusters.add_block(c, pbn, 0);
                    continue;
                }
            }
            if self.s.k > 1 && (self.clusters.n_blocks(c) >= self.clusters.max_blocks || self.s.dc_on_pool_empty) {
                // Case 3: a distributed cluster with free pages.
                if let Some(d) = self.dc_with_free(c, exclude) {
                    return Ok((self.clusters.take_page(d, ctx.flash.geometry()).expect("a DC with free pages"), d));
                }
                // Case 4: a new distributed cluster.
                if may_associate && self.can_associate() {
                    if let Some(e) = self.clusters.most_free(&[c]) {
                        self.associate(c, e, ctx)?;
                        let ppn = self.clusters.take_page(e, ctx.flash.geometry()).expect("a new DC with free pages");
                        return Ok((ppn, e));
                    }
                }
            }
            self.collect(c, may_associate, ctx)?;
        }
        Err(SimError::DeviceFull { unit: 0, free: self.blocks.total_free_blocks() })
    }

    fn dc_with_free(&self, c: u32, exclude: Option<u32>) -> Option<u32> {
        let open =
            self.clusters.distributed(c).iter().copied().filter(|&d| Some(d) != exclude && self.clusters.free(d) > 0);
        match self.s.dc_choice {
            DcChoice::First => open.into_iter().next(),
            DcChoice::MostFree => open.max_by_key(|&d| (self.clusters.free(d), std::cmp::Reverse(d))),
        }
    }

    /// Keeps the translation blocks within their budget: collects them greedily (the block
    /// manager's victim choice) while they hold more blocks than it allows.
    fn settle_map(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        let total = ctx.flash.geometry().total_blocks();
        for _ in 0..total {
            let held = total
                - self.blocks.total_free_blocks() as u32
                - self.clusters.total_blocks
                - self.reserve.is_some() as u32;
            if held <= self.map_blocks {
                return Ok(());
            }
            let Some(unit) = (0..self.blocks.units()).find(|&u| self.blocks.select_victim(u, ctx.flash).is_some())
            else {
                return Ok(());
            };
            self.blocks.reclaim_one(unit, &mut self.map, ctx)?;
        }
        Ok(())
    }

    /// Rebuilds the clusters after a power loss from the spare areas (each data block's saved
    /// cluster, read with its first page by the store's recovery) and the recovered map.
    fn rebuild(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.map.store.recover(&mut self.blocks, ctx)?;
        let store = &self.map.store;
        self.blocks.rebuild_owning(ctx.flash, |ppn, spare| store.is_live(ppn, spare), Some(PageKind::Data));
        self.clusters.clear();
        self.reserve = None;
        let g = ctx.flash.geometry().clone();
        for pbn in g.blocks() {
            if self.blocks.role(pbn) != BlockRole::Owned {
                continue;
            }
            if ctx.flash.is_corrupt(g.first_page(pbn)) {
                // Its first program was cut: nothing in it, not even its saved cluster.
                self.blocks.release_block(pbn, Purpose::Recovery, ctx)?;
                continue;
            }
            let c = self.clusters.tag(pbn);
            if c >= self.clusters.count {
                return Err(SimError::Other(format!("block {pbn}'s spare areas name cluster {c}, beyond the last")));
            }
            let written = ctx.flash.write_pointer(pbn);
            self.clusters.add_block(c, pbn, written);
            if ctx.flash.has_corrupt_page(pbn) {
                self.clusters.seal(pbn);
            }
            self.clusters.add_invalid(pbn, written - self.blocks.valid_count(pbn, ctx.flash));
        }
        if self.s.k > 1 {
            for lpn in Lpn::range(0, self.map.store.logical_pages()) {
                let Some(ppn) = self.map.store.entry(lpn) else { continue };
                let (owner, saved) = (self.clusters.of_lpn(lpn), self.saved(ppn, ctx.flash));
                if owner != saved {
                    if self.clusters.adopted_at(owner, saved).is_none() {
                        self.clusters.associate(owner, saved);
                    }
                    self.clusters.adopt(owner, saved);
                }
            }
        }
        let unit = (0..self.blocks.units()).max_by_key(|&u| self.blocks.free_blocks(u)).unwrap_or(0);
        self.reserve = Some(self.blocks.take_reserved(unit)?);
        write_back_recovered(&mut self.map, &mut self.blocks, ctx)?;
        self.restore_association_bounds(ctx)?;
        self.settle_map(ctx)
    }

    /// A recovery brings back trimmed pages (trims live in SRAM), and with an adopted one the
    /// association its trim had ended, which may exceed K or the SRAM: the association with the
    /// fewest adopted pages at such a cluster (anywhere, for SRAM) is undone, as K-InterGC does.
    fn restore_association_bounds(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        loop {
            let over_sram =
                self.s.fixed_sram + ASSOCIATION_BYTES * self.clusters.associations as u64 + self.s.row_bytes
                    > self.s.other_sram;
            let fewest = (0..self.clusters.count)
                .filter(|&d| over_sram || self.clusters.alpha(d) > self.s.k)
                .flat_map(|d| self.clusters.associated(d).iter().map(move |&(o, n)| (n, d, o)))
                .min();
            let Some((_, d, owner)) = fewest else { return Ok(()) };
            self.dissolve(owner, d, ctx)?;
        }
    }
}

impl Ftl for Cpm {
    fn name(&self) -> &'static str {
        self.name
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let ppn = self.translate(lpn, ctx)?;
        if let Some(ppn) = ppn {
            ctx.read(ppn, Purpose::Host)?;
        }
        self.settle_map(ctx)?;
        Ok(ppn)
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.translate(lpn, ctx)? {
            self.drop_page(lpn, old, ctx)?;
        }
        let owner = self.clusters.of_lpn(lpn);
        let (ppn, saved) = self.place(owner, None, true, ctx)?;
        self.map.store.program_data(ppn, lpn, version, ctx)?;
        if saved != owner {
            self.clusters.adopt(owner, saved);
            self.stats().adopted_writes += 1;
        }
        self.remap(lpn, Some(ppn), ctx)?;
        self.row(saved, ctx)?;
        self.settle_map(ctx)
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.translate(lpn, ctx)? {
            self.drop_page(lpn, old, ctx)?;
            self.remap(lpn, None, ctx)?;
        }
        self.settle_map(ctx)
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.pmt.get(lpn).unwrap_or_else(|| self.map.store.entry(lpn))
    }

    /// The PMT entry and the cluster ahead, then the flash and block state of the page it maps
    /// (which a write invalidates), of the page its cluster would program next (K-CPM, if the
    /// cluster has none free: the state of its distributed clusters) and of the copy of its PMT
    /// page (which a miss reads): random host pages miss the CPU cache on all of them.
    #[inline]
    fn prefetch(&self, lpn: Lpn, stage: Prefetch, flash: &FlashArray) -> Option<Ppn> {
        match stage {
            Prefetch::Map => {
                self.map.pmt.prefetch(lpn, &self.map.store);
                self.clusters.prefetch_cluster(self.clusters.of_lpn(lpn));
                None
            }
            Prefetch::Pages => {
                let tp = self.map.store.tp_of(lpn);
                let page = if self.map.pmt.contains(tp) {
                    self.map.pmt.prefetch_change(lpn);
                    self.map.pmt.entry(lpn, &self.map.store)
                } else {
                    self.map.store.prefetch_copy(tp, flash);
                    // The miss writes the cache's victim back and invalidates its old copy.
                    if let Some(old) = self.map.pmt.next_victim().and_then(|v| self.map.store.location(v)) {
                        self.blocks.prefetch_page(old, flash);
                    }
                    // Only cached pages hold unwritten changes: the flash copy maps it.
                    self.map.store.entry(lpn)
                };
                if let Some(ppn) = page {
                    self.blocks.prefetch_page(ppn, flash);
                    self.clusters.prefetch_block(flash.addressing().block_of(ppn));
                }
                let owner = self.clusters.of_lpn(lpn);
                match self.clusters.next_page(owner, flash.geometry()) {
                    Some(next) => {
                        flash.prefetch_page(next);
                        self.map.store.prefetch_stamp(next);
                    }
                    None => self.clusters.prefetch_distributed(owner),
                }
                page
            }
        }
    }

    /// The demand-based recovery of the PMT (`TranslationStore::recover`, scanning each data
    /// block down to the pages every PMT page covers), then the clusters from the spare areas;
    /// the changes found only in data pages are written back.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.map.pmt.clear();
        self.map.cbmt.clear();
        self.map.store.set_recovering(true);
        let result = self.rebuild(ctx);
        self.map.store.set_recovering(false);
        result
    }

    fn sram(&self) -> SramBreakdown {
        let pages = self.map.pmt.capacity() as u64;
        let rows = self.s.other_sram - self.s.fixed_sram;
        vec![
            SramItem {
                structure: format!("PMT cache ({pages} pages x {} B)", self.s.page_size),
                bytes: pages * self.s.page_size,
            },
            self.map.store.gtd_sram(32),
            SramItem { structure: format!("CIC ({} clusters)", self.clusters.count), bytes: self.s.cic_bytes },
            SramItem {
                structure: format!(
                    "CBMT rows ({} B each) and CAMT / CDMT entries ({ASSOCIATION_BYTES} B per association)",
                    self.s.row_bytes
                ),
                bytes: rows,
            },
            self.blocks.validity_sram(),
        ]
    }

    fn sram_in_use(&self) -> Option<u64> {
        Some(
            self.map.pmt.len() as u64 * self.s.page_size
                + self.s.gtd_bytes
                + self.s.cic_bytes
                + self.map.cbmt.len() as u64 * self.s.row_bytes
                + ASSOCIATION_BYTES * self.clusters.associations as u64
                + self.blocks.validity_sram().bytes,
        )
    }

    fn state_bytes(&self) -> usize {
        self.map.store.state_bytes()
            + self.map.pmt.memory_bytes()
            + self.map.cbmt.memory_bytes()
            + self.clusters.memory_bytes()
            + self.blocks.state_bytes()
    }

    /// Writes every PMT page (as the demand-based FTLs do after preconditioning) and every
    /// dirty CBMT row.
    fn flush(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        for tp in self.map.store.tps() {
            let cached = self.map.pmt.contains(tp);
            write_back(&mut self.map, &mut self.blocks, tp, !cached, ctx)?;
        }
        self.map.flush_rows(&mut self.blocks, ctx)?;
        self.settle_map(ctx)
    }

    fn reset_cache(&mut self) {
        self.map.pmt.clear();
        self.map.cbmt.clear();
    }

    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.map.store.check(&self.blocks, flash)?;
        self.map.check(self.row_capacity())?;
        self.clusters.check(|b| flash.write_pointer(b), |b| self.blocks.valid_count(b, flash))?;
        for pbn in flash.geometry().blocks() {
            let (role, held) = (self.blocks.role(pbn), self.clusters.holder(pbn).is_some());
            let fine = match role {
                BlockRole::Owned => held,
                BlockRole::Reserved => self.reserve == Some(pbn),
                _ => !held,
            };
            if !fine {
                return Err(format!("block {pbn} is {role:?} but held by cluster {:?}", self.clusters.holder(pbn)));
            }
        }
        if self.reserve.is_none() {
            return Err("no reserved GC block".into());
        }
        self.check_adoption(flash)
    }

    fn referenced_pages(&self) -> Option<Vec<PageRef>> {
        Some(self.map.store.referenced_pages())
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        self.params.clone()
    }
}

impl Cpm {
    /// The CAMT counts are the valid adopted pages, and no cluster exceeds K associations.
    fn check_adoption(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        if let Some(c) = (0..self.clusters.count).find(|&c| self.clusters.alpha(c) > self.s.k) {
            return Err(format!("cluster {c} holds pages of {} clusters, K = {}", self.clusters.alpha(c), self.s.k));
        }
        let mut counts = std::collections::BTreeMap::new();
        for lpn in Lpn::range(0, self.map.store.logical_pages()) {
            if let Some(ppn) = self.lookup(lpn, flash) {
                let (owner, saved) = (self.clusters.of_lpn(lpn), self.saved(ppn, flash));
                if owner != saved {
                    *counts.entry((saved, owner)).or_insert(0u32) += 1;
                }
            }
        }
        let recorded: std::collections::BTreeMap<(u32, u32), u32> = (0..self.clusters.count)
            .flat_map(|c| self.clusters.associated(c).iter().map(move |&(o, n)| ((c, o), n)))
            .collect();
        if counts != recorded {
            return Err(format!("adopted pages by (saved, owner) cluster: {counts:?}, CAMT: {recorded:?}"));
        }
        if counts.values().map(|&n| n as u64).sum::<u64>() != self.clusters.adopted {
            return Err(format!("{} adopted pages counted", self.clusters.adopted));
        }
        Ok(())
    }
}
