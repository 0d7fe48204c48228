//! 3DFTL (paper 000 chapter 6): no translation pages. Every data page carries, in its spare
//! area, the mapping of its LPN's group (the LTD entries of the group's subgroups and the PMT
//! entries of as many subgroups as compress into the spare bytes), so data and mapping are
//! programmed together and the cache is write-through. Translation has three levels: the GTD in
//! SRAM points to the newest page of each 64-LPN group, whose spare area gives the LTD entries
//! (the newest page of each 16-LPN subgroup), whose spare area gives the PMT entries.
//!
//! Invariants the scheme keeps (and [`Ftl::check`] verifies):
//! - `GTD[g]` is the newest page of group `g` and valid (or `None`: `g` maps nothing);
//! - the LTD entry of subgroup `s` is the newest page of `s` and valid (or `None`);
//! - so the newest page of a group holds current LTD entries, and the newest page of a
//!   subgroup current PMT entries for it.
//!
//! A trim (the paper's traces have none) must reach flash like every other mapping change: it
//! moves another page of the trimmed LPN's subgroup (or group) so that a page newer than the trim
//! carries it, and when it leaves the group empty it programs an empty-group marker in a stream
//! of its own, which the GTD points to until the group is written again.

mod bits;
mod format;
mod ids;
mod lines;
mod recovery;
#[cfg(test)]
mod tests;

pub use format::{Codec, Content, ContentRef, Format, Split, IMAGE_BYTES};

use serde::{Deserialize, Serialize};

use self::lines::Lines;
use super::common::{BlockManager, Relocate, StreamId, StreamSpec};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, PageRef, SramBreakdown, SramItem};
use crate::config::Config;
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, PageKind, Ppn, Purpose, Spare, SpareField, SpareLayout};
use crate::metrics::{CacheAccess, SpareMapStats};

const DATA: StreamId = StreamId::new(0);
const MARKERS: StreamId = StreamId::new(1);
const STREAMS: &[StreamSpec] =
    &[StreamSpec::new("data", PageKind::Data), StreamSpec::new("empty-group markers", PageKind::Metadata)];

/// Paper 000 §6.1.2: the mapping metadata (at most 108 B, the LPN inside it) and the page
/// sequence number (its value on a block's first page is the block sequence number recovery
/// sorts blocks by). The simulator also stores a version with every page for its data oracle;
/// 3DFTL never reads it, so it is not part of the scheme's spare area.
const LAYOUT: SpareLayout = SpareLayout {
    fields: &[
        SpareField::new("mapping metadata (format, LPN, LTD and PMT entries)", IMAGE_BYTES as u32),
        SpareField::new("page sequence number", 4),
    ],
};

/// Bits of SRAM per cache line beyond its PMT entries: tag, presence mask, LTD pointers, valid
/// flag, LRU state (spec section 5.10: 2,095 bits per line, so 128 lines are Table 6.1's 32.73 KB).
const LINE_OVERHEAD_BITS: u64 = 47;

pub const INFO: FtlInfo = FtlInfo {
    name: "3dftl",
    description: "3DFTL: mapping in the data pages' spare areas, GTD -> LTD -> PMT, write-through line cache",
    family: Family::DemandBased,
    build: Tdftl::build,
    params: ParamsSchema::of::<TdftlParams>(&[
        ParamSpec {
            name: "lines",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 },
            meaning: "cache lines (one 64-LPN group each, 261.875 B)",
            source: "paper 000 Table 6.1: 128 lines = 32.73 KB; Table 8.1: 80 with ILog and in the 212KB variant",
        },
        ParamSpec {
            name: "compression",
            range: ParamRange::Flag,
            meaning: "write compressed metadata when it fits (off: always the uncompressed format)",
            source: "paper 000 §6.2.2, Figs 6.7-6.10",
        },
        ParamSpec {
            name: "slot_bits",
            range: ParamRange::Integer { min: 0, max: 4 },
            meaning: "log2 of the PMT entries per subgroup",
            source: "paper 000 §6.1.2: 16",
        },
        ParamSpec {
            name: "subgroup_bits",
            range: ParamRange::Integer { min: 0, max: 2 },
            meaning: "log2 of the subgroups (LTD entries) per group",
            source: "paper 000 §6.1.2: 4",
        },
        ParamSpec {
            name: "offset_bits",
            range: ParamRange::Integer { min: 1, max: 31 },
            meaning: "low PPN bits stored per entry of a compressed image (the rest is an index)",
            source: "paper 000 §6.1.2: 25-bit indices of 32-bit PPNs",
        },
        ParamSpec {
            name: "ppn_bits",
            range: ParamRange::Integer { min: 8, max: 32 },
            meaning: "bits of a PPN in the spare area",
            source: "paper 000 §6.1.2: 32 (Fig 6.1's example: 8)",
        },
        ParamSpec {
            name: "index_slots",
            range: ParamRange::Integer { min: 2, max: 8 },
            meaning: "distinct indices a compressed image holds",
            source: "paper 000 §6.1.2: 8 (Fig 6.1's example: 2)",
        },
    ]),
    spare_layout: LAYOUT,
    streams: STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 136.0,
    spare_blocks_needed: |c| c.spare_blocks_needed(STREAMS.len() as u32, 0),
    test_overrides: |c| vec![("lines", (c.device.logical_pages() as u64 / 64 / 4).max(2))],
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TdftlParams {
    pub lines: u32,
    pub compression: bool,
    pub slot_bits: u32,
    pub subgroup_bits: u32,
    pub offset_bits: u32,
    pub ppn_bits: u32,
    pub index_slots: u32,
}

impl Default for TdftlParams {
    fn default() -> Self {
        let s = Split::PAPER;
        TdftlParams {
            lines: 128,
            compression: true,
            slot_bits: s.slot_bits,
            subgroup_bits: s.subgroup_bits,
            offset_bits: s.offset_bits,
            ppn_bits: s.ppn_bits,
            index_slots: s.index_slots,
        }
    }
}

/// What flash holds beyond the flash array's common fields: each page's mapping metadata and
/// sequence number (flash content: survives power loss).
struct Spares {
    images: Vec<[u8; IMAGE_BYTES]>,
    psn: Vec<u32>,
    next_psn: u32,
}

/// The mapping state, apart from the block manager so GC can call into it.
struct Mapping {
    codec: Codec,
    gtd: Vec<Option<Ppn>>,
    /// Per group: its GTD entry points at an empty-group marker (the page's kind says so when it
    /// is read; kept here so lookups without flash access know it too).
    marked: Vec<bool>,
    lines: Lines,
    spares: Spares,
    stats: SpareMapStats,
}

pub struct Tdftl {
    params: TdftlParams,
    map: Mapping,
    blocks: BlockManager,
    physical_pages: u64,
}

impl Tdftl {
    pub fn new(config: &Config, params: TdftlParams) -> Result<Self> {
        let split = Split {
            slot_bits: params.slot_bits,
            subgroup_bits: params.subgroup_bits,
            offset_bits: params.offset_bits,
            ppn_bits: params.ppn_bits,
            index_slots: params.index_slots,
        };
        split.check("ftl.3dftl")?;
        config.check_spare_blocks(STREAMS.len() as u32, 0)?;
        let pages = config.device.geometry.total_pages() as u64;
        if !split.addresses(pages) || config.device.logical_pages() as u64 > 1 << split.ppn_bits {
            return Err(SimError::config(
                "ftl.3dftl.ppn_bits",
                format!("{} bits cannot address the device's {pages} pages", split.ppn_bits),
            ));
        }
        // The GTD covers every physical page's worth of LPNs (paper 000: 16,384 entries of 4 B).
        let groups =
            (pages as u32).div_ceil(split.group_size()).max(config.device.logical_pages().div_ceil(split.group_size()));
        Ok(Tdftl {
            map: Mapping {
                codec: Codec { split, compression: params.compression },
                gtd: vec![None; groups as usize],
                marked: vec![false; groups as usize],
                lines: Lines::new(groups, split, params.lines),
                spares: Spares {
                    images: crate::mem::filled_vec(pages as usize, [0; IMAGE_BYTES]),
                    psn: crate::mem::filled_vec(pages as usize, 0),
                    next_psn: 1,
                },
                stats: SpareMapStats::default(),
            },
            blocks: BlockManager::new(config, STREAMS),
            physical_pages: pages,
            params,
        })
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: TdftlParams = ftl_params(config, "3dftl")?;
        Ok(Box::new(Tdftl::new(config, params)?))
    }

    /// The metadata the page at `ppn` carries (for tests and inspection).
    pub fn spare_content(&self, ppn: Ppn) -> Content {
        self.map.decode(ppn)
    }

    pub fn gtd(&self, group: u32) -> Option<Ppn> {
        self.map.gtd[group as usize]
    }
}

impl Mapping {
    fn split(&self) -> Split {
        self.codec.split
    }

    fn decode(&self, ppn: Ppn) -> Content {
        self.codec.decode(&self.spares.images[ppn.index()], ppn)
    }

    /// The metadata of group `group`'s newest page: an empty-group marker holds none.
    fn group_content(&self, group: u32) -> Content {
        match self.gtd[group as usize] {
            Some(newest) if !self.marked[group as usize] => self.decode(newest),
            _ => Content::EMPTY,
        }
    }

    /// Stamps the sequence number of a page about to be programmed.
    fn stamp(&mut self, ppn: Ppn) {
        self.spares.psn[ppn.index()] = self.spares.next_psn;
        self.spares.next_psn += 1;
    }

    /// Brings the PMT entries of `lpn`'s subgroup into the cache (paper 000 §6.1.4): a cached
    /// line with the subgroup present is a hit; a missing line is filled from the group's newest
    /// page (the GTD level), and a subgroup it does not include from its LTD entry's page, whose
    /// subgroups are merged only when that page is still their newest (the merge rule of
    /// Fig 6.1: stale entries are ignored). Every page is read as the paper says; the entries
    /// it brings in are the ones [`Lines`] keeps (debug builds decode and compare), so only a
    /// page whose subgroups the merge rule must weigh is decoded.
    fn ensure(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<CacheAccess> {
        let split = self.split();
        let (group, sub) = (split.group_of(lpn.get()), split.subgroup_of(lpn.get()));
        let mut reads = 0;
        if self.lines.contains(group) {
            self.lines.touch(group);
            if self.lines.present(group) & (1 << sub) != 0 {
                self.stats.in_cache += 1;
                return Ok(CacheAccess::Hit);
            }
        } else {
            if self.lines.make_room() {
                ctx.cache.evictions += 1;
            }
            if let Some(newest) = self.gtd[group as usize] {
                ctx.read_spare(newest, Purpose::Translation)?;
                reads += 1;
                // An empty-group marker holds no metadata (and the group maps nothing).
                debug_assert!(
                    self.marked[group as usize] || self.lines.is_newest(group, &self.decode(newest)),
                    "group {group}'s kept line differs from its newest page {newest}"
                );
            }
            self.lines.insert(group);
            if self.lines.present(group) & (1 << sub) != 0 {
                self.stats.at_gtd += reads;
                return Ok(if reads == 0 { CacheAccess::MissNoPenalty } else { CacheAccess::MissFetch });
            }
        }
        let ltd = self.lines.ltd(group, sub).expect("a subgroup without an LTD entry is present");
        ctx.read_spare(ltd, Purpose::Translation)?;
        let content = self.decode(ltd);
        for s in 0..split.subgroups() {
            let newest = self.lines.ltd(group, s);
            if content.includes(s) && content.ltd[s] == newest && self.lines.present(group) & (1 << s) == 0 {
                debug_assert!(
                    self.lines.holds(group, s, &content),
                    "group {group}'s kept subgroup {s} differs from PPN {ltd}"
                );
                self.lines.take(group, s);
            }
        }
        if self.lines.present(group) & (1 << sub) == 0 {
            return Err(SimError::Other(format!(
                "3DFTL: the LTD entry of LPN {lpn}'s subgroup, PPN {ltd}, does not hold its PMT entries"
            )));
        }
        if reads == 0 {
            self.stats.at_cached_ltd += 1;
            Ok(CacheAccess::MissFetch)
        } else {
            self.stats.at_ltd += 1;
            Ok(CacheAccess::MissFetchTwo)
        }
    }

    /// Sets every group's kept line from flash after recovery (decoded here: the simulator's
    /// copy of what the pages say, no read of the scheme's).
    fn reload_lines(&mut self) {
        let split = self.split();
        let slots = split.slots();
        for group in 0..self.gtd.len() as u32 {
            let newest = self.group_content(group);
            let mut entries = newest.entries;
            for sub in (0..split.subgroups()).filter(|&s| !newest.includes(s)) {
                if let Some(holder) = newest.ltd[sub] {
                    // A page always holds its own subgroup's entries.
                    let range = sub * slots..(sub + 1) * slots;
                    entries[range.clone()].copy_from_slice(&self.decode(holder).entries[range]);
                }
            }
            self.lines.load(group, &newest, &entries);
        }
    }

    /// Maps `lpn` (its line cached, its subgroup present) to the page `new` about to be
    /// programmed (or just programmed, by GC), writes the line as `new`'s metadata, and makes
    /// `new` the newest page of the subgroup and group. Invalidates a replaced empty-group marker;
    /// returns the page the LPN mapped to before.
    fn place(&mut self, lpn: Lpn, new: Ppn, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let split = self.split();
        let (group, sub) = (split.group_of(lpn.get()), split.subgroup_of(lpn.get()));
        let old = self.lines.entry(lpn);
        self.lines.set(lpn, Some(new));
        self.lines.set_ltd(group, sub, Some(new));
        let (content, ids) = self.lines.encoding(group, lpn);
        let (format, included) = self.codec.encode_with(&content, ids, new, &mut self.spares.images[new.index()])?;
        self.lines.set_newest_holds(group, included);
        match format {
            Format::Compressed => self.stats.compressed += 1,
            Format::SemiCompressed => self.stats.semi_compressed += 1,
            Format::Uncompressed => self.stats.uncompressed += 1,
        }
        self.stamp(new);
        let newest = self.gtd[group as usize].replace(new);
        if std::mem::replace(&mut self.marked[group as usize], false) {
            blocks.invalidate(newest.expect("a marked group has a marker"), ctx.flash)?;
        }
        Ok(old)
    }

    /// Resolves an LPN from flash without side effects (the oracle's lookup).
    fn resolve(&self, lpn: Lpn) -> Option<Ppn> {
        let split = self.split();
        let (group, sub) = (split.group_of(lpn.get()), split.subgroup_of(lpn.get()));
        if self.lines.contains(group) && self.lines.present(group) & (1 << sub) != 0 {
            return self.lines.entry(lpn);
        }
        let newest = self.group_content(group);
        let holder = if newest.includes(sub) { newest } else { self.decode(newest.ltd[sub]?) };
        holder.entries[split.entry_of(lpn.get())]
    }

    fn is_marker(&self, ppn: Ppn, spare: Spare) -> bool {
        let group = spare.logical as usize;
        spare.kind == PageKind::Metadata && self.marked.get(group) == Some(&true) && self.gtd[group] == Some(ppn)
    }
}

impl Relocate for Mapping {
    /// A GC move is a write of the same LPN (paper 000 §6.1.4: it looks the mapping up, misses
    /// included, and writes the line into the new page's spare area).
    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        _old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        if spare.kind == PageKind::Metadata {
            self.stamp(new);
            self.gtd[spare.logical as usize] = Some(new);
            return Ok(());
        }
        let lpn = Lpn::new(spare.logical);
        let access = self.ensure(lpn, ctx)?;
        ctx.cache.record_gc(access);
        self.place(lpn, new, blocks, ctx)?;
        Ok(())
    }

    /// GC moves pages in order, each a lookup that usually misses and an encode: the page's
    /// group's kept line, and the image of its subgroup's newest page when the group's newest
    /// page does not hold the subgroup (a miss decodes it), are brought into the cache a few
    /// pages early.
    fn prefetch_relocation(&self, spare: Spare) {
        if spare.kind != PageKind::Data {
            return;
        }
        let split = self.split();
        let (group, sub) = (split.group_of(spare.logical), split.subgroup_of(spare.logical));
        self.lines.prefetch(group);
        if let Some(holder) = self.lines.ltd_read_on_miss(group, sub) {
            let image = &self.spares.images[holder.index()];
            // 108 bytes span at most three cache lines.
            for byte in [0, 64, IMAGE_BYTES - 1] {
                crate::mem::prefetch(&image[byte]);
            }
        }
    }

    fn is_current(&mut self, ppn: Ppn, spare: Spare, ctx: &mut FtlCtx) -> Result<bool> {
        if spare.kind == PageKind::Metadata {
            return Ok(self.is_marker(ppn, spare));
        }
        let lpn = Lpn::new(spare.logical);
        let access = self.ensure(lpn, ctx)?;
        ctx.cache.record_gc(access);
        Ok(self.lines.entry(lpn) == Some(ppn))
    }
}

impl Tdftl {
    /// Trims `lpn` (its line cached, mapped to `old`) and writes a page that carries the change:
    /// another LPN of the subgroup moved, else the newest page of another subgroup moved, else an
    /// empty-group marker.
    fn trim_mapped(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        let split = self.map.split();
        let (group, sub) = (split.group_of(lpn.get()), split.subgroup_of(lpn.get()));
        let first = Lpn::new(group * split.group_size() + (sub * split.slots()) as u32);
        let sibling = |map: &Mapping| {
            (0..split.slots() as u32).map(|i| first.offset(i)).find(|&l| l != lpn && map.lines.entry(l).is_some())
        };
        let other_subgroup =
            |map: &Mapping| (0..split.subgroups()).filter(|&s| s != sub).find_map(|s| map.lines.ltd(group, s));
        let empties = sibling(&self.map).is_none() && other_subgroup(&self.map).is_none();
        let stream = if empties { MARKERS } else { DATA };
        let unit = self.blocks.host_unit(stream, lpn);
        let new = self.blocks.allocate(unit, stream, &mut self.map, ctx)?;
        // GC may have evicted the line or moved pages of the group while making room.
        self.map.ensure(lpn, ctx)?;
        let old = self.map.lines.entry(lpn).expect("GC does not unmap");
        self.map.lines.set(lpn, None);
        self.blocks.invalidate(old, ctx.flash)?;
        let carrier = sibling(&self.map);
        if carrier.is_none() {
            self.map.lines.set_ltd(group, sub, None);
        }
        let moved = match carrier {
            Some(l) => self.map.lines.entry(l),
            None => other_subgroup(&self.map),
        };
        let Some(from) = moved else {
            self.map.stamp(new);
            self.map.gtd[group as usize] = Some(new);
            self.map.marked[group as usize] = true;
            let version = self.map.spares.psn[new.index()];
            return ctx.program(new, PageKind::Metadata, group, version, Purpose::Metadata);
        };
        let spare = ctx.read(from, Purpose::Metadata)?;
        let carried = Lpn::new(spare.logical);
        self.map.ensure(carried, ctx)?;
        self.map.place(carried, new, &mut self.blocks, ctx)?;
        ctx.program(new, PageKind::Data, carried, spare.version, Purpose::Metadata)?;
        self.blocks.invalidate(from, ctx.flash)
    }
}

impl Ftl for Tdftl {
    fn name(&self) -> &'static str {
        "3dftl"
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let access = self.map.ensure(lpn, ctx)?;
        ctx.cache.record(access);
        let Some(ppn) = self.map.lines.entry(lpn) else { return Ok(None) };
        ctx.read(ppn, Purpose::Host)?;
        Ok(Some(ppn))
    }

    /// Allocates first (GC may run and move pages of the group), then translates: the line is
    /// then cached when the page is programmed with it.
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        // The encode below reads the group's kept line: fetched while the page is allocated.
        self.map.lines.prefetch(self.map.split().group_of(lpn.get()));
        let unit = self.blocks.host_unit(DATA, lpn);
        let new = self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
        let access = self.map.ensure(lpn, ctx)?;
        ctx.cache.record(access);
        let old = self.map.place(lpn, new, &mut self.blocks, ctx)?;
        ctx.program(new, PageKind::Data, lpn, version, Purpose::Host)?;
        if let Some(old) = old {
            self.blocks.invalidate(old, ctx.flash)?;
        }
        self.blocks.write_back_log(&mut self.map, ctx)?;
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        let access = self.map.ensure(lpn, ctx)?;
        ctx.cache.record(access);
        if self.map.lines.entry(lpn).is_none() {
            return Ok(());
        }
        self.trim_mapped(lpn, ctx)?;
        self.blocks.write_back_log(&mut self.map, ctx)?;
        Ok(())
    }

    fn collect_in_background(&mut self, unit: u32, ctx: &mut FtlCtx) -> Result<bool> {
        let collected = self.blocks.collect_in_background(unit, &mut self.map, ctx)?;
        self.blocks.write_back_log(&mut self.map, ctx)?;
        Ok(collected)
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.resolve(lpn)
    }

    /// Paper 000 Fig 8.5, with ILog Fig 8.6 ([`recovery`]); the cache starts empty (it held
    /// nothing flash lacks).
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.recover_log(ctx);
        self.map.lines.clear();
        (self.map.gtd, self.map.marked) = recovery::rebuild_gtd(&self.map, &mut self.blocks, ctx);
        self.map.reload_lines();
        let map = &self.map;
        self.blocks.rebuild(ctx.flash, |ppn, spare| match spare.kind {
            PageKind::Data => map.resolve(Lpn::new(spare.logical)) == Some(ppn),
            _ => map.is_marker(ppn, spare),
        });
        Ok(())
    }

    fn reset_cache(&mut self) {
        self.map.lines.clear();
    }

    fn sram(&self) -> SramBreakdown {
        let split = self.map.split();
        let line_bits = split.group_size() as u64 * split.ppn_bits as u64 + LINE_OVERHEAD_BITS;
        vec![
            SramItem {
                structure: "GTD (4 B per 64-LPN group of physical pages)".into(),
                bytes: self.physical_pages.div_ceil(split.group_size() as u64) * 4,
            },
            SramItem {
                structure: format!("CMT ({} lines of {line_bits} bits)", self.params.lines),
                bytes: (self.params.lines as u64 * line_bits).div_ceil(8),
            },
            self.blocks.validity_sram(),
        ]
    }

    fn state_bytes(&self) -> usize {
        self.map.gtd.len() * 4
            + self.map.lines.memory_bytes()
            + self.map.spares.images.len() * (IMAGE_BYTES + 4)
            + self.blocks.state_bytes()
    }

    /// The cache holds at most its lines; every cached present entry, every LTD entry and the
    /// GTD agree with flash and point at the newest valid pages of their group or subgroup.
    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        let map = &self.map;
        let split = map.split();
        if map.lines.len() > map.lines.capacity() {
            return Err(format!("{} lines cached, capacity {}", map.lines.len(), map.lines.capacity()));
        }
        for (group, &newest) in map.gtd.iter().enumerate() {
            let Some(newest) = newest else { continue };
            let spare = flash.spare_unchecked(newest);
            let in_group = match spare.kind {
                PageKind::Metadata => spare.logical as usize == group && map.marked[group],
                _ => split.group_of(spare.logical) as usize == group && !map.marked[group],
            };
            if !self.blocks.is_valid(newest, flash) || !in_group {
                return Err(format!("GTD[{group}] = PPN {newest} is not a valid page of the group"));
            }
        }
        if !map.lines.ids_agree() {
            return Err("a cached line's encoder ids disagree with its entries".into());
        }
        for group in map.lines.groups() {
            let newest = map.group_content(group);
            for sub in 0..split.subgroups() {
                if map.lines.ltd(group, sub) != newest.ltd[sub] {
                    return Err(format!("line {group}: LTD entry {sub} differs from the group's newest page"));
                }
                if map.lines.present(group) & (1 << sub) == 0 {
                    continue;
                }
                let first = Lpn::new(group * split.group_size() + (sub * split.slots()) as u32);
                let holder = newest.ltd[sub].map(|p| map.decode(p)).unwrap_or(Content::EMPTY);
                for lpn in (0..split.slots() as u32).map(|i| first.offset(i)) {
                    if map.lines.entry(lpn) != holder.entries[split.entry_of(lpn.get())] {
                        return Err(format!("line {group}: LPN {lpn}'s entry differs from its subgroup's newest page"));
                    }
                }
            }
        }
        Ok(())
    }

    fn referenced_pages(&self) -> Option<Vec<PageRef>> {
        // Only empty-group markers: data pages are checked through lookup.
        Some(
            self.map
                .gtd
                .iter()
                .enumerate()
                .filter(|&(g, _)| self.map.marked[g])
                .filter_map(|(g, &p)| p.map(|p| (g, p)))
                .map(|(g, ppn)| PageRef { ppn, kind: PageKind::Metadata, logical: g as u32 })
                .collect(),
        )
    }

    fn spare_map_stats(&self) -> Option<SpareMapStats> {
        Some(self.map.stats)
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).expect("params serialise")
    }
}
