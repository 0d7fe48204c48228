//! What a delta page holds (Delta-FTL, paper 001 §4.3.2, Fig. 4.2): a header at the start of the
//! page listing each compressed delta (its LPN, offset and length), then the deltas, never split
//! across pages. The flash array keeps each programmed delta page's header, so recovery and the
//! oracle can read which version of which LPN a delta brings.

use std::collections::HashMap;

use super::Ppn;

/// Bytes of the page count at the start of the header (spec §4.9 [REC]).
pub const HEADER_COUNT_BYTES: u32 = 2;
/// Bytes of one header entry: 4 B LPN + 2 B offset + 2 B length.
pub const HEADER_ENTRY_BYTES: u32 = 8;

/// One delta of a delta page: the LPN it updates, the version it brings (the data's identity in
/// the simulator) and its compressed size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaEntry {
    pub lpn: u32,
    pub version: u32,
    pub bytes: u32,
}

/// Bytes a page holding `deltas` deltas of `payload` bytes in all takes, header included.
#[inline]
pub fn packed_bytes(deltas: u32, payload: u32) -> u32 {
    HEADER_COUNT_BYTES + deltas * HEADER_ENTRY_BYTES + payload
}

/// The headers of the programmed delta pages.
#[derive(Default)]
pub struct DeltaPages {
    headers: HashMap<Ppn, Box<[DeltaEntry]>>,
}

impl DeltaPages {
    pub fn set(&mut self, ppn: Ppn, entries: Box<[DeltaEntry]>) {
        self.headers.insert(ppn, entries);
    }

    pub fn get(&self, ppn: Ppn) -> &[DeltaEntry] {
        self.headers.get(&ppn).map_or(&[], |entries| entries)
    }

    /// Forgets the pages of an erased block.
    pub fn clear(&mut self, first: Ppn, count: u32) {
        for k in 0..count {
            self.headers.remove(&first.offset(k));
        }
    }

    /// Simulator memory, roughly: the map's slots and the entries.
    pub fn state_bytes(&self) -> usize {
        self.headers.capacity() * 24
            + self.headers.values().map(|e| e.len() * std::mem::size_of::<DeltaEntry>()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_counts_two_bytes_and_eight_per_delta() {
        assert_eq!(packed_bytes(0, 0), 2);
        assert_eq!(packed_bytes(3, 1000), 2 + 24 + 1000);
    }
}
