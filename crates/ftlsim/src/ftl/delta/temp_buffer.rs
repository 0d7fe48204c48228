//! The Temp Buffer (paper 001 §4.3.2, Fig. 4.2): one flash page of RAM where compressed deltas
//! accumulate until the next one does not fit; then it is written to a delta page. A delta is
//! never split across pages, and the header (a count, then LPN, offset and length per delta)
//! takes its bytes at the start of the page.

use crate::flash::deltas::packed_bytes;
use crate::flash::DeltaEntry;

pub struct TempBuffer {
    page_bytes: u32,
    entries: Vec<DeltaEntry>,
    payload: u32,
    /// Contents sealed for a commit still allocating its page (a collection that allocation runs
    /// may commit the buffer again: one batch per commit in progress).
    sealed: Vec<Vec<DeltaEntry>>,
}

impl TempBuffer {
    pub fn new(page_bytes: u32) -> Self {
        TempBuffer { page_bytes, entries: Vec::new(), payload: 0, sealed: Vec::new() }
    }

    /// Whether a delta of `bytes` fits beside those buffered.
    #[inline]
    pub fn fits(&self, bytes: u32) -> bool {
        packed_bytes(self.entries.len() as u32 + 1, self.payload + bytes) <= self.page_bytes
    }

    /// Whether a delta of `bytes` fits in an empty page (otherwise it is incompressible).
    #[inline]
    pub fn fits_a_page(&self, bytes: u32) -> bool {
        packed_bytes(1, bytes) <= self.page_bytes
    }

    pub fn push(&mut self, entry: DeltaEntry) {
        debug_assert!(self.fits(entry.bytes));
        self.payload += entry.bytes;
        self.entries.push(entry);
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes the buffered delta of `lpn` (superseded, merged or trimmed).
    pub fn remove(&mut self, lpn: u32) {
        if let Some(i) = self.entries.iter().position(|e| e.lpn == lpn) {
            self.payload -= self.entries.swap_remove(i).bytes;
            return;
        }
        for batch in &mut self.sealed {
            if let Some(i) = batch.iter().position(|e| e.lpn == lpn) {
                batch.swap_remove(i);
                return;
            }
        }
    }

    /// Whether the buffer (sealed batches included) holds `version` of `lpn`.
    pub fn holds(&self, lpn: u32, version: u32) -> bool {
        self.entries.iter().chain(self.sealed.iter().flatten()).any(|e| e.lpn == lpn && e.version == version)
    }

    /// Seals the buffered deltas for a commit; the buffer is empty again.
    pub fn seal(&mut self) {
        self.payload = 0;
        let entries = std::mem::take(&mut self.entries);
        self.sealed.push(entries);
    }

    /// The batch sealed last.
    pub fn take_sealed(&mut self) -> Vec<DeltaEntry> {
        self.sealed.pop().unwrap_or_default()
    }

    /// Puts back a batch whose commit failed, sealed (a power-loss flush writes it out).
    pub fn restore(&mut self, batch: Vec<DeltaEntry>) {
        self.sealed.push(batch);
    }

    /// Everything buffered, sealed or not, one page's worth per batch (a power-loss flush).
    pub fn drain_all(&mut self) -> Vec<Vec<DeltaEntry>> {
        self.seal();
        std::mem::take(&mut self.sealed).into_iter().filter(|b| !b.is_empty()).collect()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.payload = 0;
        self.sealed.clear();
    }

    /// Bytes of the page the buffered deltas take, header included.
    #[cfg(test)]
    fn used_bytes(&self) -> u32 {
        packed_bytes(self.entries.len() as u32, self.payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs a sequence of delta sizes as the Temp Buffer does: the page count of each page.
    fn pack(sizes: &[u32]) -> Vec<Vec<u32>> {
        let mut buffer = TempBuffer::new(4096);
        let mut pages = Vec::new();
        for (i, &bytes) in sizes.iter().enumerate() {
            if !buffer.fits(bytes) {
                buffer.seal();
                pages.push(buffer.take_sealed().iter().map(|e| e.bytes).collect());
            }
            buffer.push(DeltaEntry { lpn: i as u32, version: 1, bytes });
        }
        buffer.seal();
        pages.push(buffer.take_sealed().iter().map(|e| e.bytes).collect());
        pages
    }

    #[test]
    fn deltas_pack_with_their_header_and_are_never_split() {
        // 2 B count + 8 B per delta: three 1,358 B deltas take 2 + 24 + 4,074 = 4,100 B > 4,096,
        // so the third opens a new page; at 1,355 B they take exactly 4,091 B and share one.
        assert_eq!(pack(&[1358, 1358, 1358]), vec![vec![1358, 1358], vec![1358]]);
        assert_eq!(pack(&[1355, 1355, 1355]), vec![vec![1355, 1355, 1355]]);
        // A delta that exactly fills the rest of the page: 2 + 8 + 4,086 = 4,096.
        assert_eq!(pack(&[4086, 1]), vec![vec![4086], vec![1]]);
        let mut buffer = TempBuffer::new(4096);
        assert!(buffer.fits_a_page(4086) && !buffer.fits_a_page(4087), "a larger delta is incompressible");
        buffer.push(DeltaEntry { lpn: 1, version: 1, bytes: 100 });
        buffer.push(DeltaEntry { lpn: 2, version: 1, bytes: 200 });
        assert_eq!(buffer.used_bytes(), 2 + 16 + 300);
        buffer.remove(1);
        assert_eq!(buffer.used_bytes(), 2 + 8 + 200, "a superseded delta gives its room back");
    }

    #[test]
    fn a_commit_in_progress_keeps_its_batch_apart() {
        let mut buffer = TempBuffer::new(4096);
        buffer.push(DeltaEntry { lpn: 1, version: 1, bytes: 100 });
        buffer.seal();
        buffer.push(DeltaEntry { lpn: 2, version: 1, bytes: 100 });
        buffer.seal(); // a nested commit during the first one's allocation
        assert_eq!(buffer.take_sealed()[0].lpn, 2);
        assert!(buffer.holds(1, 1));
        buffer.remove(1);
        assert!(buffer.take_sealed().is_empty());
    }
}
