//! The block manager: free pools, one open block per (allocation unit, stream), and foreground
//! garbage collection with a pluggable victim policy. Every FTL that writes pages out of place
//! allocates through it.
//!
//! GC runs when a unit needs a new block and has at most `gc.free_blocks_low` free blocks, or
//! at most one per stream the FTL writes if that is more (reclaiming one victim may have to open
//! a block in every stream, for example a data block for the moves and a translation block for
//! the mapping write-backs they cause); it reclaims victims until the unit has more. Moves go to
//! the open block of the victim page's own stream in the same unit. GC never nests: allocations
//! made while collecting (moves, and any mapping write-backs the FTL does from
//! [`Relocate::relocated`]) draw on the unit's reserve, in that unit.

use std::collections::VecDeque;

use super::VictimIndex;
use crate::config::{AllocationUnit, Config, VictimPolicyKind};
use crate::error::{Result, SimError};
use crate::flash::{BlockState, FlashArray, Geometry, PageState, Pbn, Ppn, Purpose, Spare, Stream, STREAMS};
use crate::ftl::FtlCtx;
use crate::metrics::GcStats;

const NIL: u32 = u32::MAX;

/// What the FTL does when GC moves one of its valid pages.
pub trait Relocate {
    /// The page with `spare` moved from `old` to `new`; update the mapping. `blocks` is available
    /// for allocations (for example a translation-page write-back).
    fn relocated(
        &mut self,
        blocks: &mut BlockManager,
        spare: Spare,
        old: Ppn,
        new: Ppn,
        ctx: &mut FtlCtx,
    ) -> Result<()>;

    /// A hint that the page with `spare` will be relocated soon (GC looks a few pages ahead in
    /// its victim); bring its mapping entry toward the cache. Must not change any state.
    fn prefetch_relocation(&self, _spare: Spare) {}
}

/// How many pages ahead of the page being moved GC prefetches mapping entries.
const GC_PREFETCH_DISTANCE: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRole {
    Free,
    Open,
    Closed,
    /// Being collected.
    Victim,
}

pub struct BlockManager {
    geometry: Geometry,
    unit_kind: AllocationUnit,
    free: Vec<VecDeque<Pbn>>,
    open: Vec<[Pbn; STREAMS]>,
    next_offset: Vec<[u32; STREAMS]>,
    role: Vec<BlockRole>,
    victims: VictimIndex,
    policy: VictimPolicyKind,
    /// GC starts at this many free blocks in a unit (see the module comment).
    gc_threshold: u32,
    cursor: [u32; STREAMS],
    in_gc: bool,
    /// The unit being collected while `in_gc`.
    gc_unit: u32,
    /// The last GC stopped because its unit had no reclaimable block, before touching any page
    /// (the only `DeviceFull` another unit may absorb; one raised mid-collection is final).
    gc_found_nothing: bool,
    /// Blocks reclaimed by GC so far.
    pub gc_victims: u64,
    /// Victims and the pages moved out of them, by stream (paper 002's V_d and V_t).
    pub gc_stats: GcStats,
}

impl BlockManager {
    /// A block manager for an FTL that writes `streams` streams of pages (1, or 2 with
    /// translation pages). Its spare blocks are checked by [`Config::check_spare_blocks`].
    pub fn new(config: &Config, streams: u32) -> Self {
        let geometry = config.device.geometry.clone();
        let unit_kind = config.device.allocation_unit;
        let units = config.device.allocation_units();
        let unit_of: Vec<u32> = (0..geometry.total_blocks()).map(|b| unit_of_block(&geometry, unit_kind, b)).collect();
        let mut free = vec![VecDeque::new(); units as usize];
        for (pbn, &u) in unit_of.iter().enumerate() {
            free[u as usize].push_back(pbn as Pbn);
        }
        BlockManager {
            victims: VictimIndex::new(units, geometry.pages_per_block, unit_of),
            open: vec![[NIL; STREAMS]; units as usize],
            next_offset: vec![[0; STREAMS]; units as usize],
            role: vec![BlockRole::Free; geometry.total_blocks() as usize],
            free,
            geometry,
            unit_kind,
            policy: config.gc.policy,
            gc_threshold: gc_threshold(config.gc.free_blocks_low, streams),
            cursor: [0; STREAMS],
            in_gc: false,
            gc_unit: 0,
            gc_found_nothing: false,
            gc_victims: 0,
            gc_stats: GcStats::default(),
        }
    }

    pub fn units(&self) -> u32 {
        self.free.len() as u32
    }

    #[inline]
    pub fn unit_of(&self, pbn: Pbn) -> u32 {
        unit_of_block(&self.geometry, self.unit_kind, pbn)
    }

    /// The next unit for a stream, round robin (spreads writes over dies or planes).
    #[inline]
    pub fn next_unit(&mut self, stream: Stream) -> u32 {
        let units = self.free.len() as u32;
        let c = &mut self.cursor[stream as usize];
        let unit = *c;
        *c = if unit + 1 == units { 0 } else { unit + 1 };
        unit
    }

    pub fn role(&self, pbn: Pbn) -> BlockRole {
        self.role[pbn as usize]
    }
    pub fn free_blocks(&self, unit: u32) -> usize {
        self.free[unit as usize].len()
    }
    pub fn total_free_blocks(&self) -> usize {
        self.free.iter().map(VecDeque::len).sum()
    }
    pub fn open_block(&self, unit: u32, stream: Stream) -> Option<Pbn> {
        Some(self.open[unit as usize][stream as usize]).filter(|&b| b != NIL)
    }
    pub fn is_filed(&self, pbn: Pbn) -> bool {
        self.victims.is_filed(pbn)
    }
    pub fn in_gc(&self) -> bool {
        self.in_gc
    }

    /// The next free page of `stream` in `unit`, opening a block (and collecting garbage first
    /// if the unit is short of free blocks) when needed. Program it before the next allocation.
    ///
    /// Outside GC, a unit whose GC finds nothing to reclaim is passed over for the next units in
    /// turn: host writes stripe over units while GC moves stay in their unit, so live data is not
    /// spread evenly at every moment, and one unit full of valid data must not stop a device that
    /// has room elsewhere. `DeviceFull` means no unit can make room, or a collection ran out of
    /// reserve midway.
    ///
    /// During GC every allocation, whatever unit it asks for, goes to the unit being collected:
    /// a collection lives on its own unit's reserve (a mapping write-back sent to another unit
    /// would spend that unit's reserve without collecting there).
    #[inline]
    pub fn allocate<R: Relocate>(&mut self, unit: u32, stream: Stream, reloc: &mut R, ctx: &mut FtlCtx) -> Result<Ppn> {
        if self.in_gc {
            return self.allocate_in(self.gc_unit, stream, reloc, ctx);
        }
        self.gc_found_nothing = false;
        match self.allocate_in(unit, stream, reloc, ctx) {
            Err(SimError::DeviceFull { .. }) if self.gc_found_nothing => {
                self.allocate_elsewhere(unit, stream, reloc, ctx)
            }
            result => result,
        }
    }

    #[cold]
    fn allocate_elsewhere<R: Relocate>(
        &mut self,
        full: u32,
        stream: Stream,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<Ppn> {
        let units = self.units();
        let mut last = SimError::DeviceFull { unit: full as usize, free: self.free_blocks(full) };
        for step in 1..units {
            self.gc_found_nothing = false;
            match self.allocate_in((full + step) % units, stream, reloc, ctx) {
                Err(e @ SimError::DeviceFull { .. }) if self.gc_found_nothing => last = e,
                result => return result,
            }
        }
        Err(last)
    }

    #[inline]
    fn allocate_in<R: Relocate>(&mut self, unit: u32, stream: Stream, reloc: &mut R, ctx: &mut FtlCtx) -> Result<Ppn> {
        let (u, s) = (unit as usize, stream as usize);
        let ppb = self.geometry.pages_per_block;
        if self.open[u][s] == NIL || self.next_offset[u][s] == ppb {
            self.replace_open_block(unit, stream, reloc, ctx)?;
        }
        let offset = self.next_offset[u][s];
        self.next_offset[u][s] = offset + 1;
        Ok(self.geometry.first_page(self.open[u][s]) + offset)
    }

    fn replace_open_block<R: Relocate>(
        &mut self,
        unit: u32,
        stream: Stream,
        reloc: &mut R,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let (u, s) = (unit as usize, stream as usize);
        let full = self.open[u][s];
        if full != NIL {
            self.role[full as usize] = BlockRole::Closed;
            self.victims.insert(full, ctx.flash.valid_count(full));
            self.open[u][s] = NIL;
        }
        if !self.in_gc && self.free[u].len() <= self.gc_threshold as usize {
            self.collect(unit, reloc, ctx)?;
        }
        // GC may have opened a block for this stream while moving pages.
        if self.open[u][s] != NIL && self.next_offset[u][s] < self.geometry.pages_per_block {
            return Ok(());
        }
        if self.open[u][s] != NIL {
            let full = self.open[u][s];
            self.role[full as usize] = BlockRole::Closed;
            self.victims.insert(full, ctx.flash.valid_count(full));
        }
        let pbn = self.free[u].pop_front().ok_or(SimError::DeviceFull { unit: u, free: 0 })?;
        self.role[pbn as usize] = BlockRole::Open;
        self.open[u][s] = pbn;
        self.next_offset[u][s] = 0;
        Ok(())
    }

    /// Brings the flash and victim-index state of `ppn` toward the cache ahead of an invalidation.
    #[inline]
    pub fn prefetch_page(&self, ppn: Ppn, flash: &FlashArray) {
        flash.prefetch_page(ppn);
        self.victims.prefetch(self.geometry.block_of(ppn));
    }

    /// Marks a page invalid and refiles its block for victim selection.
    #[inline]
    pub fn invalidate(&mut self, ppn: Ppn, flash: &mut FlashArray) -> Result<()> {
        let valid = flash.invalidate(ppn)?;
        self.victims.update(self.geometry.block_of(ppn), valid);
        Ok(())
    }

    /// Foreground GC of one unit.
    fn collect<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        self.in_gc = true;
        self.gc_unit = unit;
        let result = self.collect_until_enough(unit, reloc, ctx);
        self.in_gc = false;
        result
    }

    fn collect_until_enough<R: Relocate>(&mut self, unit: u32, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        let ppb = self.geometry.pages_per_block;
        while self.free[unit as usize].len() <= self.gc_threshold as usize {
            let free = self.free[unit as usize].len();
            let Some(victim) = self.victims.select(unit, self.policy).filter(|&v| ctx.flash.valid_count(v) < ppb)
            else {
                self.gc_found_nothing = true;
                return Err(SimError::DeviceFull { unit: unit as usize, free });
            };
            self.reclaim(victim, reloc, ctx)?;
        }
        Ok(())
    }

    /// Moves every valid page out of `victim` and erases it.
    fn reclaim<R: Relocate>(&mut self, victim: Pbn, reloc: &mut R, ctx: &mut FtlCtx) -> Result<()> {
        self.victims.remove(victim);
        self.role[victim as usize] = BlockRole::Victim;
        let unit = self.unit_of(victim);
        let first = self.geometry.first_page(victim);
        let written = ctx.flash.write_pointer(victim);
        let stream = ctx.flash.block_stream(victim) as usize;
        for old in first..first + written {
            let ahead = old + GC_PREFETCH_DISTANCE;
            if ahead < first + written {
                reloc.prefetch_relocation(ctx.flash.spare_unchecked(ahead));
            }
            // Re-checked per page: a mapping write-back during this loop may invalidate a later page.
            if ctx.flash.page_state(old) != PageState::Valid {
                continue;
            }
            ctx.ops.begin_chain();
            let spare = ctx.read(old, Purpose::Gc)?;
            let new = self.allocate(unit, spare.stream, reloc, ctx)?;
            ctx.program(new, spare.stream, spare.logical, spare.version, Purpose::Gc)?;
            self.invalidate(old, ctx.flash)?;
            self.gc_stats.moved[stream] += 1;
            reloc.relocated(self, spare, old, new, ctx)?;
        }
        ctx.erase(victim, Purpose::Gc)?;
        self.role[victim as usize] = BlockRole::Free;
        self.free[unit as usize].push_back(victim);
        self.gc_victims += 1;
        self.gc_stats.victims[stream] += 1;
        Ok(())
    }

    /// Forgets all SRAM state and rebuilds it from the flash array's block states (after power
    /// loss). Issues no operations: the FTL's recovery procedure accounts for the reads it needs.
    pub fn rebuild(&mut self, flash: &FlashArray) {
        for q in &mut self.free {
            q.clear();
        }
        for o in &mut self.open {
            *o = [NIL; STREAMS];
        }
        let units = self.free.len() as u32;
        let mut victims = VictimIndex::new(
            units,
            self.geometry.pages_per_block,
            (0..self.geometry.total_blocks()).map(|b| self.unit_of(b)).collect(),
        );
        for pbn in 0..self.geometry.total_blocks() {
            let unit = self.unit_of(pbn) as usize;
            let stream = flash.block_stream(pbn) as usize;
            self.role[pbn as usize] = match flash.block_state(pbn) {
                BlockState::Erased => {
                    self.free[unit].push_back(pbn);
                    BlockRole::Free
                }
                BlockState::Partial if self.open[unit][stream] == NIL => {
                    self.open[unit][stream] = pbn;
                    self.next_offset[unit][stream] = flash.write_pointer(pbn);
                    BlockRole::Open
                }
                BlockState::Partial | BlockState::Full => {
                    victims.insert(pbn, flash.valid_count(pbn));
                    BlockRole::Closed
                }
            };
        }
        self.victims = victims;
        self.cursor = [0; STREAMS];
        self.in_gc = false;
    }

    /// Simulator memory of this structure.
    pub fn state_bytes(&self) -> usize {
        self.victims.memory_bytes() + self.role.len() + self.total_free_blocks() * 4
    }

    /// Checks the block accounting: roles agree with the free pools, open slots and victim index.
    pub fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        let mut free_seen = 0usize;
        for pbn in 0..self.geometry.total_blocks() {
            let role = self.role[pbn as usize];
            let filed = self.victims.is_filed(pbn);
            match role {
                BlockRole::Free => {
                    free_seen += 1;
                    if flash.write_pointer(pbn) != 0 {
                        return Err(format!("free block {pbn} has programmed pages"));
                    }
                }
                BlockRole::Closed if !filed => return Err(format!("closed block {pbn} is not in the victim index")),
                BlockRole::Open if filed => return Err(format!("open block {pbn} is in the victim index")),
                BlockRole::Victim => return Err(format!("block {pbn} is still marked as a GC victim")),
                _ => {}
            }
            if role == BlockRole::Open {
                let unit = self.unit_of(pbn) as usize;
                let stream = flash.block_stream(pbn) as usize;
                if self.open[unit][stream] != pbn && flash.write_pointer(pbn) != 0 {
                    return Err(format!("block {pbn} is marked open but is not its unit's open block"));
                }
            }
        }
        if free_seen != self.total_free_blocks() {
            return Err(format!(
                "{free_seen} blocks are marked free but the free pools hold {}",
                self.total_free_blocks()
            ));
        }
        Ok(())
    }
}

/// Free blocks at which a unit collects garbage (see the module comment).
pub fn gc_threshold(free_blocks_low: u32, streams: u32) -> u32 {
    free_blocks_low.max(streams)
}

fn unit_of_block(geometry: &Geometry, kind: AllocationUnit, pbn: Pbn) -> u32 {
    match kind {
        AllocationUnit::Die => geometry.die_of_block(pbn),
        AllocationUnit::Plane => geometry.plane_of_block(pbn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::OpLog;
    use crate::metrics::CacheStats;

    /// 1 die, 1 plane, 8 blocks x 4 pages, GC when at most 1 free block.
    fn config() -> Config {
        ConfigBuilder::new()
            .set("device.geometry.planes_per_die=1")
            .unwrap()
            .set("device.geometry.blocks_per_plane=8")
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

    /// A page map that records moves.
    struct Map(Vec<Ppn>);
    impl Relocate for Map {
        fn relocated(&mut self, _: &mut BlockManager, spare: Spare, old: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
            assert_eq!(self.0[spare.logical as usize], old);
            self.0[spare.logical as usize] = new;
            Ok(())
        }
    }

    fn write(bm: &mut BlockManager, map: &mut Map, lpn: u32, ctx: &mut FtlCtx) {
        if map.0[lpn as usize] != NIL {
            bm.invalidate(map.0[lpn as usize], ctx.flash).unwrap();
        }
        let ppn = bm.allocate(0, Stream::Data, map, ctx).unwrap();
        ctx.program(ppn, Stream::Data, lpn, 0, Purpose::Host).unwrap();
        map.0[lpn as usize] = ppn;
    }

    #[test]
    fn allocates_in_order_and_opens_blocks_fifo() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, 1);
        let mut map = Map(vec![NIL; 16]);
        for lpn in 0..6 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        assert_eq!(map.0[..6], [0, 1, 2, 3, 4, 5]);
        assert_eq!(bm.role(0), BlockRole::Closed);
        assert_eq!(bm.role(1), BlockRole::Open);
        assert_eq!(bm.free_blocks(0), 6);
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn greedy_gc_moves_valid_pages_and_erases_the_emptiest_block() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, 1);
        let mut map = Map(vec![NIL; 32]);
        // Fill blocks 0..=5 with LPNs 0..24, then overwrite LPNs 4..7 (block 1) and LPN 0 (block 0).
        for lpn in 0..24 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        assert_eq!(bm.free_blocks(0), 2);
        for lpn in [4, 5, 6, 7] {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        // That took block 6; 1 free block left. The next block needed triggers GC.
        assert_eq!(bm.free_blocks(0), 1);
        write(&mut bm, &mut map, 0, &mut ctx);
        // Block 1 had 0 valid pages: greedy erases it without moves; then free = 2 > 1.
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Erase, Purpose::Gc), 1);
        assert_eq!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc), 0);
        assert_eq!(ctx.flash.erase_count(1), 1);
        // More overwrites force a GC with moves; every LPN still maps to a page holding it.
        for round in 0..60u32 {
            write(&mut bm, &mut map, (round * 7) % 24, &mut ctx);
        }
        assert!(ctx.ops.count(crate::flash::OpKind::Program, Purpose::Gc) > 0);
        for lpn in 0..24u32 {
            let ppn = map.0[lpn as usize];
            assert_eq!(ctx.flash.read(ppn).unwrap().logical, lpn);
            assert_eq!(ctx.flash.page_state(ppn), PageState::Valid);
        }
        bm.check(ctx.flash).unwrap();
    }

    /// A map whose every relocation writes a page of the translation stream, asking for unit 1.
    struct WritesBack {
        map: Map,
        units: Vec<u32>,
    }
    impl Relocate for WritesBack {
        fn relocated(
            &mut self,
            bm: &mut BlockManager,
            spare: Spare,
            old: Ppn,
            new: Ppn,
            ctx: &mut FtlCtx,
        ) -> Result<()> {
            self.map.relocated(bm, spare, old, new, ctx)?;
            let ppn = bm.allocate(1, Stream::Translation, self, ctx)?;
            ctx.program(ppn, Stream::Translation, 0, 0, Purpose::Translation)?;
            bm.invalidate(ppn, ctx.flash)?;
            self.units.push(bm.unit_of(ctx.flash.geometry().block_of(ppn)));
            Ok(())
        }
    }

    #[test]
    fn gc_keeps_every_allocation_in_its_unit_and_reserves_a_block_per_stream() {
        let c = ConfigBuilder::new()
            .set("device.geometry.planes_per_die=2")
            .unwrap()
            .set("device.geometry.blocks_per_plane=8")
            .unwrap()
            .set("device.geometry.pages_per_block=4")
            .unwrap()
            .set("device.allocation_unit=\"plane\"")
            .unwrap()
            .set("device.overprovisioning=0.5")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap()
            .build()
            .unwrap();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, 2);
        let mut owner = WritesBack { map: Map(vec![NIL; 20]), units: Vec::new() };
        // Only unit 0 takes data: 20 LPNs overwritten in a scrambled order leave partly valid blocks.
        for i in 0..200u32 {
            let lpn = i.wrapping_mul(2_654_435_761).rotate_left(7) % 20;
            if owner.map.0[lpn as usize] != NIL {
                bm.invalidate(owner.map.0[lpn as usize], ctx.flash).unwrap();
            }
            let (free_before, victims_before) = (bm.free_blocks(0), bm.gc_victims);
            let ppn = bm.allocate(0, Stream::Data, &mut owner, &mut ctx).unwrap();
            ctx.program(ppn, Stream::Data, lpn, 0, Purpose::Host).unwrap();
            owner.map.0[lpn as usize] = ppn;
            if victims_before == 0 && bm.gc_victims > 0 {
                assert_eq!(free_before, 2, "two streams: GC starts at 2 free blocks, gc.free_blocks_low being 1");
            }
        }
        assert!(bm.gc_victims > 0 && !owner.units.is_empty());
        assert!(owner.units.iter().all(|&u| u == 0), "write-backs during GC of unit 0 went to {:?}", owner.units);
        bm.check(ctx.flash).unwrap();
    }

    #[test]
    fn a_device_with_no_reclaimable_space_reports_full() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, 1);
        let mut map = Map(vec![NIL; 64]);
        let err = (0..32).try_for_each(|lpn| {
            if map.0[lpn as usize] != NIL {
                bm.invalidate(map.0[lpn as usize], ctx.flash)?;
            }
            let ppn = bm.allocate(0, Stream::Data, &mut map, &mut ctx)?;
            ctx.program(ppn, Stream::Data, lpn, 0, Purpose::Host)?;
            map.0[lpn as usize] = ppn;
            Ok::<(), SimError>(())
        });
        assert!(matches!(err, Err(SimError::DeviceFull { .. })), "{err:?}");
    }

    #[test]
    fn rebuild_recovers_the_same_roles() {
        let c = config();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let (mut ops, mut cache) = (OpLog::new(), CacheStats::default());
        let mut ctx = FtlCtx { flash: &mut flash, ops: &mut ops, cache: &mut cache };
        let mut bm = BlockManager::new(&c, 1);
        let mut map = Map(vec![NIL; 16]);
        for lpn in 0..10 {
            write(&mut bm, &mut map, lpn, &mut ctx);
        }
        let roles: Vec<_> = (0..8).map(|b| bm.role(b)).collect();
        bm.rebuild(ctx.flash);
        assert_eq!(roles, (0..8).map(|b| bm.role(b)).collect::<Vec<_>>());
        bm.check(ctx.flash).unwrap();
        write(&mut bm, &mut map, 3, &mut ctx);
        assert_eq!(map.0[3], 10);
    }
}
