//! Content fingerprints of a request, for traces that record content (FIU's one MD5 per 4 KB
//! record, SSDSim's one MD5 per 512-byte sector). Each fingerprint is the first 64 bits of the
//! MD5 and covers `unit_bytes` of the request, in address order. Up to [`INLINE`] fingerprints are
//! stored inside the value, so the common small request is read without a heap allocation.

/// Fingerprints stored without allocating.
pub const INLINE: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprints {
    unit_bytes: u32,
    storage: Storage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Storage {
    Inline { len: u8, hashes: [u64; INLINE] },
    Heap(Box<[u64]>),
}

impl Fingerprints {
    /// Fingerprints of consecutive `unit_bytes` pieces of a request.
    pub fn new(unit_bytes: u32, hashes: &[u64]) -> Self {
        let storage = if hashes.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..hashes.len()].copy_from_slice(hashes);
            Storage::Inline { len: hashes.len() as u8, hashes: inline }
        } else {
            Storage::Heap(hashes.into())
        };
        Fingerprints { unit_bytes, storage }
    }

    /// Bytes of the request each fingerprint covers.
    pub fn unit_bytes(&self) -> u32 {
        self.unit_bytes
    }

    pub fn as_slice(&self) -> &[u64] {
        match &self.storage {
            Storage::Inline { len, hashes } => &hashes[..*len as usize],
            Storage::Heap(h) => h,
        }
    }

    /// One fingerprint for the bytes `[start, end)` of the request (offsets relative to the
    /// request's first byte), combining every unit that overlaps the range; a page of a request
    /// gets its page fingerprint this way. `None` when the range lies outside the fingerprints.
    pub fn range(&self, start: u64, end: u64) -> Option<u64> {
        let unit = self.unit_bytes as u64;
        let hashes = self.as_slice();
        let first = (start / unit) as usize;
        let last = (end.max(start + 1) - 1) / unit;
        if first >= hashes.len() {
            return None;
        }
        let last = (last as usize).min(hashes.len() - 1);
        if first == last {
            return Some(hashes[first]);
        }
        // FNV-1a over the covered fingerprints: order-sensitive and cheap.
        Some(
            hashes[first..=last]
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ x).wrapping_mul(0x0000_0100_0000_01b3)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_hold_the_same_values() {
        let small = Fingerprints::new(512, &[1, 2, 3]);
        assert_eq!(small.as_slice(), &[1, 2, 3]);
        let big: Vec<u64> = (0..20).collect();
        assert_eq!(Fingerprints::new(512, &big).as_slice(), big.as_slice());
    }

    #[test]
    fn a_page_combines_its_sectors() {
        let f = Fingerprints::new(512, &[7, 8, 9, 10]);
        assert_eq!(f.range(0, 512), Some(7));
        assert_eq!(f.range(512, 1024), Some(8));
        assert_ne!(f.range(0, 1024), f.range(1024, 2048));
        assert_eq!(f.range(4096, 8192), None);
    }
}
