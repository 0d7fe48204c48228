//! PFTL: page-level mapping with the whole LPN -> PPN table in SRAM. The baseline every other
//! FTL is normalised against; translation costs no flash operation.

use serde::{Deserialize, Serialize};

use super::common::{BlockManager, Relocate, StreamId, StreamSpec};
use super::registry::{no_test_overrides, one_stream_spare_blocks, Family, FtlInfo, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, PageLayout, Prefetch, SramBreakdown, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, PageKind, Ppn, Purpose, Spare, BASIC_LAYOUT};
use crate::mem::unmapped_vec;

/// PFTL's one stream.
const DATA: StreamId = StreamId::new(0);
pub(super) const STREAMS: &[StreamSpec] = &[StreamSpec::new("data", PageKind::Data)];

pub const INFO: FtlInfo = FtlInfo {
    name: "pftl",
    description: "page-level FTL, whole map in SRAM (the baseline)",
    family: Family::PageMapped,
    build: PageFtl::build,
    params: ParamsSchema::of::<PageFtlParams>(&[]),
    spare_layout: BASIC_LAYOUT,
    streams: STREAMS,
    recovers: true,
    validates_by_mapping: true,
    state_bytes_per_page: 12.2,
    spare_blocks_needed: one_stream_spare_blocks,
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageFtlParams {}

/// The LPN -> PPN table; kept apart from the block manager so GC can update it while the
/// block manager is borrowed.
struct PageMap {
    l2p: Vec<Option<Ppn>>,
}

impl Relocate for PageMap {
    #[inline]
    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, _old: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
        self.l2p[spare.logical as usize] = Some(new);
        Ok(())
    }

    /// The whole map is in SRAM: free to look up.
    fn is_current(&mut self, ppn: Ppn, spare: Spare, _: &mut FtlCtx) -> Result<bool> {
        Ok(spare.kind == PageKind::Data && self.l2p.get(spare.logical as usize) == Some(&Some(ppn)))
    }

    #[inline]
    fn prefetch_relocation(&self, spare: Spare) {
        if let Some(entry) = self.l2p.get(spare.logical as usize) {
            crate::mem::prefetch(entry);
        }
    }
}

pub struct PageFtl {
    map: PageMap,
    blocks: BlockManager,
    physical_pages: u64,
}

impl PageFtl {
    pub fn new(config: &Config) -> Self {
        PageFtl {
            map: PageMap { l2p: unmapped_vec(config.device.logical_pages() as usize) },
            blocks: BlockManager::new(config, STREAMS),
            physical_pages: config.device.geometry.total_pages() as u64,
        }
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let _: PageFtlParams = ftl_params(config, "pftl")?;
        Ok(Box::new(PageFtl::new(config)))
    }

    /// Writes LPNs `0..pages` in order on an empty device, placing each where a host write would
    /// (the `i`-th LPN on the `i`-th unit of the spread order, round robin and RAID-0 striping
    /// agreeing on an empty device; each unit's pages in allocation order), programming flash a
    /// block at a time with no operation logged (the shared preconditioning layout). The units
    /// take turns a block at a time (they draw on their own pools, so the order changes nothing),
    /// which keeps the LPN-indexed arrays' writes within a few consecutive cache lines.
    pub(super) fn fill_sequential(
        &mut self,
        pages: u32,
        version: &mut impl FnMut(Lpn) -> u32,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let units = self.blocks.units();
        // Per position of the spread order: its LPNs are position, position + units, ...; how
        // many it takes, and how many it has written.
        let mut left: Vec<(u32, u32)> =
            (0..units.min(pages)).map(|position| ((pages - position).div_ceil(units), 0)).collect();
        while left.iter().any(|&(count, done)| done < count) {
            for (position, (count, done)) in (0u32..).zip(left.iter_mut()) {
                if *done == *count {
                    continue;
                }
                let unit = self.blocks.striped_unit(position);
                let first = self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
                let run = 1 + self.blocks.allocate_following(first, DATA, *count - *done - 1);
                let (l2p, written) = (&mut self.map.l2p, *done);
                ctx.flash.program_run(first, run, PageKind::Data, |k| {
                    let lpn = Lpn::new(position + (written + k) * units);
                    l2p[lpn.index()] = Some(first.offset(k));
                    (lpn.get(), version(lpn))
                })?;
                *done += run;
            }
        }
        Ok(())
    }

    /// Keeps up to `blocks` free blocks of every unit out of use (as many as the unit can spare
    /// beyond its own GC reserve, open block and slack).
    pub(super) fn withhold(&mut self, blocks: u32, free_blocks_low: u32) -> Result<()> {
        let own = crate::ftl::common::gc_threshold(free_blocks_low, 1) + 2;
        for unit in 0..self.blocks.units() {
            let spare = (self.blocks.free_blocks(unit) as u32).saturating_sub(own);
            for _ in 0..blocks.min(spare) {
                self.blocks.take_block(unit)?;
            }
        }
        Ok(())
    }

    /// The LPN -> PPN table.
    pub(super) fn into_map(self) -> Vec<Option<Ppn>> {
        self.map.l2p
    }
}

impl Ftl for PageFtl {
    fn name(&self) -> &'static str {
        "pftl"
    }

    #[inline]
    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let Some(ppn) = self.map.l2p[lpn.index()] else { return Ok(None) };
        ctx.read(ppn, Purpose::Host)?;
        Ok(Some(ppn))
    }

    #[inline]
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        // Unmapped while the new page is allocated, so GC asking whether the old page is current
        // (`gc.validity = "counters"`) hears that it is not.
        if let Some(old) = self.map.l2p[lpn.index()].take() {
            self.blocks.invalidate(old, ctx.flash)?;
        }
        let unit = self.blocks.host_unit(DATA, lpn);
        let ppn = self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
        ctx.program(ppn, PageKind::Data, lpn, version, Purpose::Host)?;
        self.map.l2p[lpn.index()] = Some(ppn);
        self.blocks.write_back_log(&mut self.map, ctx)?;
        Ok(())
    }

    fn collect_in_background(&mut self, unit: u32, ctx: &mut FtlCtx) -> Result<bool> {
        let collected = self.blocks.collect_in_background(unit, &mut self.map, ctx)?;
        self.blocks.write_back_log(&mut self.map, ctx)?;
        Ok(collected)
    }

    fn takes_page_layout(&self) -> bool {
        true
    }

    fn adopt_page_layout(&mut self, layout: PageLayout, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.rebuild(ctx.flash, |ppn, spare| layout.is_live(ppn, spare));
        self.map.l2p = layout.into_map();
        self.blocks.log_layout(&mut self.map, ctx)
    }

    /// A trim lives in SRAM (recovery brings the LPN back), so ILog does not log it.
    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.map.l2p[lpn.index()].take() {
            self.blocks.invalidate_unlogged(old, ctx.flash)?;
        }
        Ok(())
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn, stage: Prefetch, flash: &FlashArray) -> Option<Ppn> {
        let entry = self.map.l2p.get(lpn.index())?;
        match stage {
            Prefetch::Map => {
                crate::mem::prefetch(entry);
                None
            }
            Prefetch::Pages => {
                let ppn = (*entry)?;
                self.blocks.prefetch_page(ppn, flash);
                Some(ppn)
            }
        }
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.l2p[lpn.index()]
    }

    /// Scans the spare area of every programmed page (after reading each block's first page for
    /// its sequence number, m + n reads in all, paper 000 §8.2.5); the newest version of each LPN
    /// wins and is the only valid copy. (A trim lived in SRAM: a trimmed LPN comes back with its
    /// last write.)
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.recover_log(ctx);
        let l2p = &mut self.map.l2p;
        l2p.fill(None);
        let mut newest: Vec<u32> = vec![0; l2p.len()];
        let mut seen = vec![false; l2p.len()];
        let g = ctx.flash.geometry().clone();
        for pbn in g.blocks() {
            let first = g.first_page(pbn);
            if ctx.probe_spare(first).is_none() {
                continue; // erased block
            }
            for ppn in g.pages_of(pbn) {
                let Some(spare) = ctx.probe_spare(ppn) else { break };
                if spare.kind != PageKind::Data {
                    continue;
                }
                let lpn = spare.logical as usize;
                if !seen[lpn] || spare.version > newest[lpn] {
                    seen[lpn] = true;
                    newest[lpn] = spare.version;
                    l2p[lpn] = Some(ppn);
                }
            }
        }
        let l2p = &self.map.l2p;
        self.blocks
            .rebuild(ctx.flash, |ppn, spare| spare.kind == PageKind::Data && l2p[spare.logical as usize] == Some(ppn));
        Ok(())
    }

    fn sram(&self) -> SramBreakdown {
        vec![
            SramItem { structure: "page map (4 B per physical page)".into(), bytes: self.physical_pages * 4 },
            self.blocks.validity_sram(),
        ]
    }

    fn state_bytes(&self) -> usize {
        self.map.l2p.len() * 4 + self.blocks.state_bytes()
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(PageFtlParams::default()).expect("params serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{OpKind, OpLog};
    use crate::metrics::CacheStats;

    /// 1 die, 2 planes, 2 x 4 blocks of 4 pages, no preconditioning.
    fn tiny() -> Config {
        ConfigBuilder::new()
            .set("device.geometry.blocks_per_plane=4")
            .unwrap()
            .set("device.geometry.pages_per_block=4")
            .unwrap()
            .set("device.overprovisioning=0.5")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap()
            .build()
            .unwrap()
    }

    #[test]
    fn writes_go_out_of_place_and_reads_find_the_newest_copy() {
        let config = tiny();
        let mut ftl = PageFtl::new(&config);
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        assert_eq!(ftl.read(Lpn::new(3), &mut ctx).unwrap(), None, "unwritten LPN reads as unmapped, no flash access");
        ftl.write(Lpn::new(3), 1, &mut ctx).unwrap();
        ftl.write(Lpn::new(3), 2, &mut ctx).unwrap();
        assert_eq!(ftl.read(Lpn::new(3), &mut ctx).unwrap(), Some(Ppn::new(1)));
        assert!(ctx.flash.is_programmed(Ppn::new(0)) && !ftl.blocks.is_valid(Ppn::new(0), ctx.flash));
        assert_eq!(ctx.flash.read(Ppn::new(1)).unwrap().version, 2);
        assert_eq!(ctx.ops.count(OpKind::Program, Purpose::Host), 2);
        assert_eq!(ctx.ops.count(OpKind::Read, Purpose::Host), 1);
        ftl.trim(Lpn::new(3), &mut ctx).unwrap();
        assert_eq!(ftl.lookup(Lpn::new(3), ctx.flash), None);
        assert!(!ftl.blocks.is_valid(Ppn::new(1), ctx.flash));
    }

    #[test]
    fn recovery_reads_every_page_and_keeps_the_newest_copies_valid() {
        let config = tiny();
        let mut ftl = PageFtl::new(&config);
        let mut flash = FlashArray::new(&config.device.geometry, config.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        for (lpn, version) in [(0, 1), (1, 1), (0, 2), (2, 1), (1, 2), (2, 2)] {
            ftl.write(Lpn::new(lpn), version, &mut ctx).unwrap();
        }
        let last_of_2 = ftl.lookup(Lpn::new(2), ctx.flash);
        ftl.trim(Lpn::new(2), &mut ctx).unwrap();
        let mut expected: Vec<_> = (0..4).map(|l| ftl.lookup(Lpn::new(l), ctx.flash)).collect();
        expected[2] = last_of_2; // the trim lived in SRAM only
        ctx.ops.reset_counts();
        ftl.recover(&mut ctx).unwrap();
        assert_eq!((0..4).map(|l| ftl.lookup(Lpn::new(l), ctx.flash)).collect::<Vec<_>>(), expected);
        // Validity rebuilt: exactly the newest copies are valid.
        let valid: Vec<Ppn> = Ppn::range(0, 8).filter(|&p| ftl.blocks.is_valid(p, ctx.flash)).collect();
        let mut mapped: Vec<Ppn> = expected.iter().flatten().copied().collect();
        mapped.sort_unstable();
        assert_eq!(valid, mapped);
        // Six programmed pages in two blocks: 2 first-page reads + 6 pages + 1 erased page that ends
        // the partial block, and 1 first-page read per erased block (6 of them).
        assert_eq!(ctx.ops.count(OpKind::SpareRead, Purpose::Recovery), 2 + 6 + 1 + 6);
    }

    #[test]
    fn sram_matches_paper_000_table_5_3() {
        let ftl = PageFtl::new(&Config::preset("mlc8g").unwrap());
        let total: u64 = ftl.sram().iter().map(|s| s.bytes).sum();
        assert_eq!(total, 4224 * 1024, "PFTL: 4096 KB map + 128 KB GC bitmap");
    }
}
