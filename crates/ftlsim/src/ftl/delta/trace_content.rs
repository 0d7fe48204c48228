//! Real content locality (`ftl.delta.trace_content`): with a trace that records content
//! fingerprints (FIU's MD5 per record, SSDSim's per sector), a page written with the content of
//! the old version its delta is taken against makes an empty delta; any other write draws its
//! ratio from the Gaussian model (issue: Delta-FTL, content model).
//!
//! This is the data's identity, not controller state: nothing here is SRAM or lost at power loss.

use std::collections::HashMap;

/// Fingerprint 0 means "unknown" (a page written without one, or the preconditioned layout).
const UNKNOWN: u64 = 0;

pub struct TraceContent {
    /// What the host last wrote to each LPN the FTL has not written since (the write buffer's
    /// pages; a page written past the buffer passes through at once).
    pending: HashMap<u32, u64>,
    /// Per LPN, the content of the newest version the FTL wrote.
    newest: Vec<u64>,
    /// Per LPN, the content of its page in the page mapping area: the old version its deltas are
    /// taken against (no delta chains, spec §4.7).
    base: Vec<u64>,
}

impl TraceContent {
    pub fn new(logical_pages: u32) -> Self {
        TraceContent {
            pending: HashMap::new(),
            newest: vec![UNKNOWN; logical_pages as usize],
            base: vec![UNKNOWN; logical_pages as usize],
        }
    }

    /// The host wrote `lpn` with this content (`None`: unknown, as for a partial page).
    pub fn host_wrote(&mut self, lpn: u32, fingerprint: Option<u64>) {
        self.pending.insert(lpn, fingerprint.unwrap_or(UNKNOWN));
    }

    /// The FTL writes the host's latest content of `lpn`; `in_delta`: the LPN is in delta form
    /// (its page in the mapping area is older than its newest version). Returns whether that
    /// content equals the page's in the mapping area, so the delta would be empty.
    pub fn ftl_writes(&mut self, lpn: u32, in_delta: bool) -> bool {
        let i = lpn as usize;
        // In original form the page in the mapping area holds the newest version (a host write
        // or a merge put it there); in delta form it is the version the LPN left that form at.
        if !in_delta {
            self.base[i] = self.newest[i];
        }
        self.newest[i] = self.pending.remove(&lpn).unwrap_or(UNKNOWN);
        self.newest[i] != UNKNOWN && self.newest[i] == self.base[i]
    }

    /// Simulator memory.
    pub fn state_bytes(&self) -> usize {
        (self.newest.len() + self.base.len()) * 8 + self.pending.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_content_of_the_old_version_makes_an_empty_delta() {
        let mut c = TraceContent::new(4);
        let write = |c: &mut TraceContent, fingerprint, in_delta| {
            c.host_wrote(1, fingerprint);
            c.ftl_writes(1, in_delta)
        };
        assert!(!write(&mut c, Some(7), false), "the first version has no old one");
        assert!(write(&mut c, Some(7), false), "rewritten unchanged: an empty delta");
        assert!(!write(&mut c, Some(8), true), "changed against the old version");
        assert!(write(&mut c, Some(7), true), "back to the old version's content while in delta form");
        assert!(!write(&mut c, None, true), "unknown content never matches");
        // Merged back: the mapping area now holds the newest version (unknown content).
        assert!(!write(&mut c, Some(9), false));
        assert!(write(&mut c, Some(9), false));
    }

    #[test]
    fn the_buffer_keeps_the_hosts_latest_content() {
        let mut c = TraceContent::new(4);
        c.host_wrote(2, Some(5));
        assert!(!c.ftl_writes(2, false));
        c.host_wrote(2, Some(6));
        c.host_wrote(2, Some(5)); // overwritten in the buffer before its eviction
        assert!(c.ftl_writes(2, false));
        assert!(!c.ftl_writes(2, true), "written again by the FTL without a host write: unknown");
    }
}
