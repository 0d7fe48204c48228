//! Write frontiers: the streams an FTL declares when it is built (data, translation pages, hot and
//! cold data, an invalidation log, a delta log, ...), each with one open block per allocation unit
//! filled at ascending offsets.

use crate::flash::{PageKind, Pbn};

/// A write stream an FTL declares: its pages are of one kind and fill their own open blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamSpec {
    pub name: &'static str,
    pub kind: PageKind,
}

impl StreamSpec {
    pub const fn new(name: &'static str, kind: PageKind) -> Self {
        StreamSpec { name, kind }
    }
}

/// A declared stream: its index in the FTL's list of [`StreamSpec`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(u8);

impl StreamId {
    pub const fn new(index: u8) -> Self {
        StreamId(index)
    }
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One (unit, stream) frontier: its open block, if any, and the next offset to fill.
#[derive(Debug, Clone, Copy)]
struct Slot {
    block: Option<Pbn>,
    next_offset: u32,
}

pub struct Frontiers {
    streams: Vec<StreamSpec>,
    /// `slots[unit * streams + stream]`.
    slots: Vec<Slot>,
    /// Per stream, the position in `spread` of the unit the next round-robin allocation goes to.
    cursor: Vec<u32>,
    /// The units in the order consecutive allocations visit them (see [`Frontiers::new`]).
    spread: Vec<u32>,
}

impl Frontiers {
    /// Frontiers for `streams` over `units` allocation units, visited in the order `spread`
    /// (a permutation of the units: consecutive writes go to different channels first, then to
    /// different chips and dies, and to another plane of a die last, so they proceed in parallel).
    pub fn new(streams: &[StreamSpec], spread: Vec<u32>) -> Self {
        // None for an FTL that places every page itself in blocks it owns.
        assert!(streams.len() <= u8::MAX as usize, "an FTL declares at most 255 streams");
        Frontiers {
            streams: streams.to_vec(),
            slots: vec![Slot { block: None, next_offset: 0 }; spread.len() * streams.len()],
            cursor: vec![0; streams.len()],
            spread,
        }
    }

    /// The first declared stream of pages of `kind` (where GC moves such pages by default).
    pub fn stream_of_kind(&self, kind: PageKind) -> Option<StreamId> {
        self.streams.iter().position(|s| s.kind == kind).map(|i| StreamId(i as u8))
    }

    #[inline]
    fn slot(&self, unit: u32, stream: StreamId) -> usize {
        debug_assert!(stream.index() < self.streams.len(), "stream {stream:?} was not declared");
        unit as usize * self.streams.len() + stream.index()
    }

    /// The next unit for `stream`, round robin in spread order (spreads writes over dies or planes).
    #[inline]
    pub fn next_unit(&mut self, stream: StreamId) -> u32 {
        let c = &mut self.cursor[stream.index()];
        let position = *c;
        *c = if position as usize + 1 == self.spread.len() { 0 } else { position + 1 };
        self.spread[position as usize]
    }

    /// The unit of the `n`-th position of the spread order, wrapping around (RAID-0 striping:
    /// logical page `n` lives on it).
    #[inline]
    pub fn striped_unit(&self, n: u32) -> u32 {
        self.spread[(n % self.spread.len() as u32) as usize]
    }

    pub fn open_block(&self, unit: u32, stream: StreamId) -> Option<Pbn> {
        self.slots[self.slot(unit, stream)].block
    }

    /// The next page of the open block as (block, offset), or `None` when there is no open block
    /// or it is full.
    #[inline]
    pub fn take_page(&mut self, unit: u32, stream: StreamId, pages_per_block: u32) -> Option<(Pbn, u32)> {
        let i = self.slot(unit, stream);
        let slot = &mut self.slots[i];
        let block = slot.block?;
        if slot.next_offset == pages_per_block {
            return None;
        }
        let offset = slot.next_offset;
        slot.next_offset += 1;
        Some((block, offset))
    }

    /// Takes up to `pages` more pages of the open block at once; returns how many it took.
    pub fn take_pages(&mut self, unit: u32, stream: StreamId, pages: u32, pages_per_block: u32) -> u32 {
        let i = self.slot(unit, stream);
        let slot = &mut self.slots[i];
        let taken = pages.min(pages_per_block - slot.next_offset);
        slot.next_offset += taken;
        taken
    }

    /// Whether the open block has room for another page.
    pub fn has_room(&self, unit: u32, stream: StreamId, pages_per_block: u32) -> bool {
        let slot = &self.slots[self.slot(unit, stream)];
        slot.block.is_some() && slot.next_offset < pages_per_block
    }

    /// Makes `pbn` the open block, to be filled from `offset` on.
    pub fn open(&mut self, unit: u32, stream: StreamId, pbn: Pbn, offset: u32) {
        let i = self.slot(unit, stream);
        debug_assert!(self.slots[i].block.is_none(), "stream {stream:?} of unit {unit} already has an open block");
        self.slots[i] = Slot { block: Some(pbn), next_offset: offset };
    }

    /// Closes the open block, returning it.
    pub fn close(&mut self, unit: u32, stream: StreamId) -> Option<Pbn> {
        let i = self.slot(unit, stream);
        self.slots[i].block.take()
    }

    /// Forgets every open block and cursor (power loss).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| s.block = None);
        self.cursor.iter_mut().for_each(|c| *c = 0);
    }

    /// Whether `pbn` is the open block of some stream of `unit`.
    pub fn is_open(&self, unit: u32, pbn: Pbn) -> bool {
        let n = self.streams.len();
        self.slots[unit as usize * n..(unit as usize + 1) * n].iter().any(|s| s.block == Some(pbn))
    }
}
