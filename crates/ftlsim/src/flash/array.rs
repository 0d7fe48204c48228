//! Functional state of the flash array: what every page holds and which NAND rules it obeys.
//!
//! Memory per physical page: 4 bytes logical number + 4 bytes version in the spare area model,
//! and 1 bit of validity. A page is free when its offset is at or past its block's write pointer,
//! so "free" costs nothing extra. Per-block bookkeeping is amortised over the block's pages.

use serde::Serialize;

use super::{Geometry, Pbn, Ppn};
use crate::error::{Result, SimError};
use crate::mem::{filled_vec, zeroed_vec};

/// The write stream a block belongs to; every page of a block belongs to the same stream,
/// so the page type in the spare area is the block's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Stream {
    Data = 0,
    Translation = 1,
    Metadata = 2,
}
pub const STREAMS: usize = 3;

impl Stream {
    pub fn from_index(i: u8) -> Stream {
        match i {
            0 => Stream::Data,
            1 => Stream::Translation,
            _ => Stream::Metadata,
        }
    }
}

/// The FTL-visible content of a page's spare area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spare {
    pub stream: Stream,
    /// LPN of a data page, logical translation-page number of a translation page, and so on.
    pub logical: u32,
    /// The version the writer assigned (the oracle's version for host data; a per-page
    /// counter for FTL metadata). Newest version wins on recovery.
    pub version: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    Free,
    Valid,
    Invalid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, no page programmed.
    Erased,
    /// Some pages programmed, some free.
    Partial,
    /// Every page programmed.
    Full,
}

#[derive(Debug, Clone, Copy, Default)]
struct BlockMeta {
    write_ptr: u32,
    valid: u32,
    erases: u32,
    stream: u8,
}

pub struct FlashArray {
    geometry: Geometry,
    logical: Vec<u32>,
    version: Vec<u32>,
    valid_bits: Vec<u64>,
    blocks: Vec<BlockMeta>,
}

impl FlashArray {
    pub fn new(geometry: &Geometry) -> Self {
        let pages = geometry.total_pages() as usize;
        FlashArray {
            geometry: geometry.clone(),
            logical: zeroed_vec(pages),
            version: zeroed_vec(pages),
            valid_bits: zeroed_vec(pages.div_ceil(64)),
            blocks: filled_vec(geometry.total_blocks() as usize, BlockMeta::default()),
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Bytes of simulator state this array holds per physical page (spare model included).
    pub fn state_bytes(&self) -> usize {
        self.logical.len() * 4
            + self.version.len() * 4
            + self.valid_bits.len() * 8
            + self.blocks.len() * std::mem::size_of::<BlockMeta>()
    }

    #[inline]
    fn is_valid_bit(&self, ppn: Ppn) -> bool {
        self.valid_bits[(ppn >> 6) as usize] & (1u64 << (ppn & 63)) != 0
    }

    fn check_ppn(&self, op: &'static str, ppn: Ppn) -> Result<()> {
        if (ppn as usize) < self.logical.len() {
            Ok(())
        } else {
            Err(SimError::FlashRule { op, ppn, rule: format!("beyond the last page {}", self.logical.len() - 1) })
        }
    }

    pub fn page_state(&self, ppn: Ppn) -> PageState {
        let meta = &self.blocks[self.geometry.block_of(ppn) as usize];
        if self.geometry.page_offset(ppn) >= meta.write_ptr {
            PageState::Free
        } else if self.is_valid_bit(ppn) {
            PageState::Valid
        } else {
            PageState::Invalid
        }
    }

    /// Programs a free page. Pages of a block must be programmed in order, each exactly once
    /// between erases, and every page of a block belongs to one stream.
    #[inline]
    pub fn program(&mut self, ppn: Ppn, stream: Stream, logical: u32, version: u32) -> Result<()> {
        self.check_ppn("program", ppn)?;
        let offset = self.geometry.page_offset(ppn);
        let meta = &mut self.blocks[self.geometry.block_of(ppn) as usize];
        if offset != meta.write_ptr {
            let rule = if offset < meta.write_ptr {
                "page is not free (already programmed since the last erase)".to_string()
            } else {
                format!("out-of-order program: the block's next free page is offset {}", meta.write_ptr)
            };
            return Err(SimError::FlashRule { op: "program", ppn, rule });
        }
        if offset == 0 {
            meta.stream = stream as u8;
        } else if meta.stream != stream as u8 {
            return Err(SimError::FlashRule {
                op: "program",
                ppn,
                rule: format!("block holds {:?} pages, not {:?}", Stream::from_index(meta.stream), stream),
            });
        }
        meta.write_ptr += 1;
        meta.valid += 1;
        self.logical[ppn as usize] = logical;
        self.version[ppn as usize] = version;
        self.valid_bits[(ppn >> 6) as usize] |= 1u64 << (ppn & 63);
        Ok(())
    }

    /// Brings the state of `ppn` toward the cache ahead of use (see `Ftl::prefetch`).
    #[inline]
    pub fn prefetch_page(&self, ppn: Ppn) {
        if let (Some(bits), Some(meta)) =
            (self.valid_bits.get((ppn >> 6) as usize), self.blocks.get(self.geometry.block_of(ppn) as usize))
        {
            crate::mem::prefetch(bits);
            crate::mem::prefetch(meta);
            crate::mem::prefetch(&self.logical[ppn as usize]);
        }
    }

    /// Marks a valid page invalid; returns the block's remaining valid count.
    #[inline]
    pub fn invalidate(&mut self, ppn: Ppn) -> Result<u32> {
        self.check_ppn("invalidate", ppn)?;
        if !self.is_valid_bit(ppn) {
            let state = self.page_state(ppn);
            return Err(SimError::FlashRule { op: "invalidate", ppn, rule: format!("page is {state:?}, not valid") });
        }
        self.valid_bits[(ppn >> 6) as usize] &= !(1u64 << (ppn & 63));
        let meta = &mut self.blocks[self.geometry.block_of(ppn) as usize];
        meta.valid -= 1;
        Ok(meta.valid)
    }

    /// Checks that a page may be read (it was programmed since the last erase) and returns its spare area.
    #[inline]
    pub fn read(&self, ppn: Ppn) -> Result<Spare> {
        self.check_ppn("read", ppn)?;
        let meta = &self.blocks[self.geometry.block_of(ppn) as usize];
        if self.geometry.page_offset(ppn) >= meta.write_ptr {
            return Err(SimError::FlashRule {
                op: "read",
                ppn,
                rule: "page is free (never programmed since erase)".into(),
            });
        }
        Ok(self.spare_unchecked(ppn))
    }

    /// The spare content of a programmed page, without checks (for oracles and recovery models).
    #[inline]
    pub fn spare_unchecked(&self, ppn: Ppn) -> Spare {
        let meta = &self.blocks[self.geometry.block_of(ppn) as usize];
        Spare {
            stream: Stream::from_index(meta.stream),
            logical: self.logical[ppn as usize],
            version: self.version[ppn as usize],
        }
    }

    /// Erases a whole block. Erasing a block that still holds valid pages loses data: an FTL bug.
    pub fn erase(&mut self, pbn: Pbn) -> Result<()> {
        let first = self.geometry.first_page(pbn);
        self.check_ppn("erase", first)?;
        let meta = &mut self.blocks[pbn as usize];
        if meta.valid != 0 {
            return Err(SimError::FlashRule {
                op: "erase",
                ppn: first,
                rule: format!("block {pbn} still holds {} valid pages", meta.valid),
            });
        }
        meta.write_ptr = 0;
        meta.erases += 1;
        Ok(())
    }

    #[inline]
    pub fn valid_count(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn as usize].valid
    }
    #[inline]
    pub fn write_pointer(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn as usize].write_ptr
    }
    pub fn erase_count(&self, pbn: Pbn) -> u32 {
        self.blocks[pbn as usize].erases
    }
    pub fn block_stream(&self, pbn: Pbn) -> Stream {
        Stream::from_index(self.blocks[pbn as usize].stream)
    }
    pub fn block_state(&self, pbn: Pbn) -> BlockState {
        match self.blocks[pbn as usize].write_ptr {
            0 => BlockState::Erased,
            w if w == self.geometry.pages_per_block => BlockState::Full,
            _ => BlockState::Partial,
        }
    }
    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erases)
    }

    /// Recounts the valid pages of a block from the page states (for invariant checks).
    pub fn recount_valid(&self, pbn: Pbn) -> u32 {
        let first = self.geometry.first_page(pbn);
        (first..first + self.blocks[pbn as usize].write_ptr).filter(|&p| self.is_valid_bit(p)).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::BlockLayout;

    fn tiny() -> FlashArray {
        FlashArray::new(&Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 4,
            page_size: 4096,
            spare_size: 64,
            sector_size: 512,
            block_layout: BlockLayout::Interleaved,
        })
    }

    #[test]
    fn program_in_order_then_read_back() {
        let mut f = tiny();
        f.program(0, Stream::Data, 42, 1).unwrap();
        f.program(1, Stream::Data, 43, 1).unwrap();
        assert_eq!(f.read(1).unwrap().logical, 43);
        assert_eq!(f.valid_count(0), 2);
        assert_eq!(f.page_state(2), PageState::Free);
        assert_eq!(f.block_state(0), BlockState::Partial);
    }

    #[test]
    fn reprogramming_a_page_is_rejected_with_its_ppn() {
        let mut f = tiny();
        f.program(0, Stream::Data, 1, 1).unwrap();
        let err = f.program(0, Stream::Data, 1, 2).unwrap_err().to_string();
        assert!(err.contains("PPN 0") && err.contains("not free"), "{err}");
    }

    #[test]
    fn out_of_order_program_is_rejected() {
        let mut f = tiny();
        let err = f.program(2, Stream::Data, 1, 1).unwrap_err().to_string();
        assert!(err.contains("out-of-order") && err.contains("PPN 2"), "{err}");
    }

    #[test]
    fn reading_a_free_page_is_rejected() {
        let f = tiny();
        assert!(f.read(3).unwrap_err().to_string().contains("free"));
    }

    #[test]
    fn erase_needs_no_valid_pages_and_frees_the_block() {
        let mut f = tiny();
        f.program(4, Stream::Translation, 9, 1).unwrap();
        assert!(f.erase(1).unwrap_err().to_string().contains("valid pages"));
        assert_eq!(f.invalidate(4).unwrap(), 0);
        assert_eq!(f.page_state(4), PageState::Invalid);
        f.erase(1).unwrap();
        assert_eq!(f.erase_count(1), 1);
        assert_eq!(f.page_state(4), PageState::Free);
        f.program(4, Stream::Data, 1, 1).unwrap();
    }

    #[test]
    fn invalidating_twice_is_rejected() {
        let mut f = tiny();
        f.program(0, Stream::Data, 1, 1).unwrap();
        f.invalidate(0).unwrap();
        assert!(f.invalidate(0).unwrap_err().to_string().contains("Invalid"));
    }

    #[test]
    fn mixing_streams_in_a_block_is_rejected() {
        let mut f = tiny();
        f.program(0, Stream::Data, 1, 1).unwrap();
        assert!(f.program(1, Stream::Translation, 1, 1).is_err());
    }
}
