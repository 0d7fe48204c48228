//! Physical organisation of the flash array and the address arithmetic over it.
//!
//! Blocks are numbered so that consecutive PBNs visit every plane of the device in turn
//! ("interleaved", the Micron convention where the low block-address bits select the plane)
//! or fill one plane before the next ("contiguous"). Dies are ordered channel-first, so that a
//! round robin over die indices spreads consecutive writes across channels before chips.

use serde::{Deserialize, Serialize};

use super::{BlockPage, Divisor, Pbn, Ppn};
use crate::error::{Result, SimError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockLayout {
    Interleaved,
    Contiguous,
}

/// The largest spare area accepted (real pages carry a few hundred bytes to a few KiB).
const MAX_SPARE_BYTES: u32 = 65_536;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_size: u32,
    /// Spare (out-of-band) bytes per page.
    pub spare_size: u32,
    /// Spare bytes per page left to the FTL's metadata (the rest holds ECC); all of them when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spare_usable: Option<u32>,
    /// Host sector size; page_size must be a multiple of it.
    #[serde(default = "default_sector")]
    pub sector_size: u32,
    #[serde(default = "default_layout")]
    pub block_layout: BlockLayout,
    /// The last page of every block holds the block's summary, not data (the MS SSD extension
    /// of DiskSim that paper 001 ran on: `SSD_DATA_PAGES_PER_BLOCK = pages_per_block - 1`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary_page: bool,
}

fn default_sector() -> u32 {
    512
}
fn default_layout() -> BlockLayout {
    BlockLayout::Interleaved
}

impl Geometry {
    /// Spare bytes per page the FTL may use.
    pub fn spare_usable_bytes(&self) -> u32 {
        self.spare_usable.unwrap_or(self.spare_size)
    }

    /// The configuration field that sets [`Geometry::spare_usable_bytes`].
    pub fn spare_usable_field(&self) -> &'static str {
        if self.spare_usable.is_some() {
            "device.geometry.spare_usable"
        } else {
            "device.geometry.spare_size"
        }
    }

    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("device.geometry.channels", self.channels),
            ("device.geometry.chips_per_channel", self.chips_per_channel),
            ("device.geometry.dies_per_chip", self.dies_per_chip),
            ("device.geometry.planes_per_die", self.planes_per_die),
            ("device.geometry.blocks_per_plane", self.blocks_per_plane),
            ("device.geometry.pages_per_block", self.pages_per_block),
            ("device.geometry.page_size", self.page_size),
            ("device.geometry.sector_size", self.sector_size),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(SimError::config(field, "must be greater than zero"));
            }
        }
        if !self.page_size.is_multiple_of(self.sector_size) {
            return Err(SimError::config(
                "device.geometry.page_size",
                format!("{} is not a multiple of the sector size {}", self.page_size, self.sector_size),
            ));
        }
        if self.spare_size > MAX_SPARE_BYTES {
            return Err(SimError::config(
                "device.geometry.spare_size",
                format!("{} bytes: a spare area holds at most {MAX_SPARE_BYTES} bytes", self.spare_size),
            ));
        }
        if self.spare_usable.is_some_and(|usable| usable > self.spare_size) {
            return Err(SimError::config(
                "device.geometry.spare_usable",
                format!("{} exceeds the spare area of {} bytes", self.spare_usable.unwrap_or(0), self.spare_size),
            ));
        }
        if self.page_size / self.sector_size > u8::MAX as u32 {
            return Err(SimError::config("device.geometry.sector_size", "at most 255 sectors per page"));
        }
        let pages = self.total_pages_u64();
        if pages >= u32::MAX as u64 {
            return Err(SimError::config(
                "device.geometry",
                format!("{pages} physical pages exceed the 2^32 - 1 page addresses ftlsim supports"),
            ));
        }
        if self.pages_per_block > 65_535 {
            return Err(SimError::config("device.geometry.pages_per_block", "at most 65535 pages per block"));
        }
        if self.summary_page && self.pages_per_block < 2 {
            return Err(SimError::config(
                "device.geometry.summary_page",
                "a block of 1 page has no room for data beside its summary page (pages_per_block must be at least 2)",
            ));
        }
        Ok(())
    }

    pub fn total_dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    pub fn total_planes(&self) -> u32 {
        self.total_dies() * self.planes_per_die
    }
    pub fn total_blocks(&self) -> u32 {
        self.total_planes() * self.blocks_per_plane
    }
    /// Saturates instead of overflowing, so `validate` can reject any absurd geometry.
    fn total_pages_u64(&self) -> u64 {
        [
            self.channels,
            self.chips_per_channel,
            self.dies_per_chip,
            self.planes_per_die,
            self.blocks_per_plane,
            self.pages_per_block,
        ]
        .iter()
        .fold(1u64, |total, &n| total.saturating_mul(n as u64))
    }
    pub fn total_pages(&self) -> u32 {
        self.total_pages_u64() as u32
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.total_pages_u64() * self.page_size as u64
    }

    /// Pages of a block that hold data or FTL pages: all but the last with `summary_page`.
    /// Every capacity, fill level and GC count is in these pages.
    #[inline]
    pub fn data_pages_per_block(&self) -> u32 {
        self.pages_per_block - self.summary_page as u32
    }
    /// Pages of the device that hold data or FTL pages (summary pages excluded).
    pub fn data_pages(&self) -> u32 {
        (self.total_blocks() as u64 * self.data_pages_per_block() as u64) as u32
    }
    /// The summary page of block `pbn` (`summary_page` on).
    #[inline]
    pub fn summary_page_of(&self, pbn: Pbn) -> Ppn {
        debug_assert!(self.summary_page);
        self.page_at(pbn, self.pages_per_block - 1)
    }

    /// The address arithmetic of this geometry, its divisors computed once (hot paths hold one).
    #[inline]
    pub fn addressing(&self) -> Addressing {
        Addressing::new(self)
    }

    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> Pbn {
        self.addressing().block_of(ppn)
    }
    #[inline]
    pub fn page_offset(&self, ppn: Ppn) -> u32 {
        self.addressing().page_offset(ppn)
    }
    #[inline]
    pub fn first_page(&self, pbn: Pbn) -> Ppn {
        Ppn::new(pbn.get() * self.pages_per_block)
    }
    /// The page at `offset` in block `pbn`.
    #[inline]
    pub fn page_at(&self, pbn: Pbn, offset: u32) -> Ppn {
        debug_assert!(offset < self.pages_per_block);
        Ppn::new(pbn.get() * self.pages_per_block + offset)
    }
    /// The data pages of block `pbn` (its summary page left out), in offset order.
    #[inline]
    pub fn pages_of(&self, pbn: Pbn) -> impl DoubleEndedIterator<Item = Ppn> + ExactSizeIterator {
        self.pages_below(pbn, self.data_pages_per_block())
    }
    /// The pages of block `pbn` below offset `end` (below its write pointer: the pages it may
    /// have programmed), in offset order.
    #[inline]
    pub fn pages_below(&self, pbn: Pbn, end: u32) -> impl DoubleEndedIterator<Item = Ppn> + ExactSizeIterator {
        debug_assert!(end <= self.pages_per_block);
        let first = pbn.get() * self.pages_per_block;
        Ppn::range(first, first + end)
    }
    /// Every page of the device.
    pub fn pages(&self) -> impl DoubleEndedIterator<Item = Ppn> + ExactSizeIterator {
        Ppn::range(0, self.total_pages())
    }
    /// Every block of the device.
    pub fn blocks(&self) -> impl DoubleEndedIterator<Item = Pbn> + ExactSizeIterator {
        Pbn::range(0, self.total_blocks())
    }

    /// Global plane index (0..total_planes) of a block.
    #[inline]
    pub fn plane_of_block(&self, pbn: Pbn) -> u32 {
        self.addressing().plane_of_block(pbn)
    }
    /// Global die index (0..total_dies) of a block.
    #[inline]
    pub fn die_of_block(&self, pbn: Pbn) -> u32 {
        self.addressing().die_of_block(pbn)
    }
    /// Channel of a die: dies are numbered channel-first.
    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }
}

/// A geometry's page-to-block and block-to-plane arithmetic with its divisors built once (each
/// use is then a shift, or a division on a geometry whose counts are not powers of two), for the
/// per-page paths: GC moves, invalidations, timing. A small `Copy` value that the flash array,
/// the block manager and `fifo-single` hold, built from a validated [`Geometry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addressing {
    pages_per_block: Divisor,
    /// Interleaved: the device's planes (a block's plane is its number modulo them); contiguous:
    /// the blocks of a plane (its plane is its number divided by them).
    plane_stride: Divisor,
    layout: BlockLayout,
    planes_per_die: Divisor,
}

impl Addressing {
    #[inline]
    pub fn new(g: &Geometry) -> Self {
        let plane_stride = match g.block_layout {
            BlockLayout::Interleaved => g.total_planes(),
            BlockLayout::Contiguous => g.blocks_per_plane,
        };
        Addressing {
            pages_per_block: Divisor::new(g.pages_per_block),
            plane_stride: Divisor::new(plane_stride),
            layout: g.block_layout,
            planes_per_die: Divisor::new(g.planes_per_die),
        }
    }

    #[inline]
    pub fn pages_per_block(self) -> Divisor {
        self.pages_per_block
    }
    #[inline]
    pub fn block_of(self, ppn: Ppn) -> Pbn {
        Pbn::new(self.pages_per_block.quotient(ppn.get()))
    }
    #[inline]
    pub fn page_offset(self, ppn: Ppn) -> u32 {
        self.pages_per_block.remainder(ppn.get())
    }
    /// The block of `ppn` and the page's offset in it.
    #[inline]
    pub fn locate(self, ppn: Ppn) -> (Pbn, u32) {
        let (block, offset) = self.pages_per_block.div_rem(ppn.get());
        (Pbn::new(block), offset)
    }
    /// `ppn` with its block and offset.
    #[inline]
    pub fn block_page(self, ppn: Ppn) -> BlockPage {
        let (pbn, offset) = self.locate(ppn);
        BlockPage { pbn, offset, ppn }
    }
    /// Global plane index (0..total_planes) of a block.
    #[inline]
    pub fn plane_of_block(self, pbn: Pbn) -> u32 {
        match self.layout {
            BlockLayout::Interleaved => self.plane_stride.remainder(pbn.get()),
            BlockLayout::Contiguous => self.plane_stride.quotient(pbn.get()),
        }
    }
    /// Global die index (0..total_dies) of a block.
    #[inline]
    pub fn die_of_block(self, pbn: Pbn) -> u32 {
        self.planes_per_die.quotient(self.plane_of_block(pbn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn small() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 8,
            page_size: 4096,
            spare_size: 128,
            spare_usable: None,
            summary_page: false,
            sector_size: 512,
            block_layout: BlockLayout::Interleaved,
        }
    }

    #[test]
    fn interleaved_layout_visits_planes_then_dies_channel_first() {
        let g = small();
        assert_eq!(g.total_blocks(), 32);
        assert_eq!(g.plane_of_block(Pbn::new(0)), 0);
        assert_eq!(g.plane_of_block(Pbn::new(1)), 1);
        assert_eq!(g.die_of_block(Pbn::new(2)), 1);
        assert_eq!(g.channel_of_die(1), 1);
        assert_eq!(g.channel_of_die(2), 0);
        assert_eq!(g.plane_of_block(Pbn::new(8)), 0);
    }

    #[test]
    fn contiguous_layout_fills_a_plane_first() {
        let g = Geometry { block_layout: BlockLayout::Contiguous, ..small() };
        assert_eq!(g.plane_of_block(Pbn::new(3)), 0);
        assert_eq!(g.plane_of_block(Pbn::new(4)), 1);
    }

    #[test]
    fn rejects_page_not_multiple_of_sector() {
        let g = Geometry { page_size: 4000, ..small() };
        let err = g.validate().unwrap_err().to_string();
        assert!(err.contains("device.geometry.page_size"), "{err}");
    }

    #[test]
    fn rejects_zero_blocks() {
        let g = Geometry { blocks_per_plane: 0, ..small() };
        assert!(g.validate().unwrap_err().to_string().contains("device.geometry.blocks_per_plane"));
    }
}
