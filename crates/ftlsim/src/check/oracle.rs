//! The data oracle: an independent record of which version of each LPN the host wrote last.
//! The version travels to the page's spare area, so a read can be checked against it.

use std::collections::HashMap;

use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, PageKind, Ppn};
use crate::ftl::DeltaAt;

/// Per LPN: the last version written in the low 31 bits (0 = never written) and a trimmed flag
/// in the top bit. Versions keep counting across trims, so a copy written after a trim is always
/// newer than any copy written before it (recovery relies on "newest version wins").
pub struct Oracle {
    versions: Vec<u32>,
    /// LPNs a recovery brought back with an older version than their last write (after a trim):
    /// the version they hold now. Their counter in `versions` goes on from the last write, so a
    /// version is never written twice.
    rolled_back: HashMap<Lpn, u32>,
    /// LPNs of a write request a power loss cut, with what the oracle held before the write: each
    /// may come back old or new.
    in_doubt: HashMap<Lpn, u32>,
}

const TRIMMED: u32 = 1 << 31;

impl Oracle {
    pub fn new(logical_pages: u32) -> Self {
        Oracle {
            versions: crate::mem::zeroed_vec(logical_pages as usize),
            rolled_back: HashMap::new(),
            in_doubt: HashMap::new(),
        }
    }

    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some(v) = self.versions.get(lpn.index()) {
            crate::mem::prefetch(v);
        }
    }

    /// What the oracle holds for `lpn` (to hand back to [`Oracle::write_cut`]): the version it
    /// holds (a rolled-back one included) with the trimmed flag.
    pub fn state(&self, lpn: Lpn) -> u32 {
        match self.rolled_back.get(&lpn) {
            Some(&held) => held,
            None => self.versions[lpn.index()],
        }
    }

    /// A power loss cut a write of `lpn` (or the request it belonged to), which held `before`
    /// ([`Oracle::state`]) until the write: the next recovery may bring back either version.
    pub fn write_cut(&mut self, lpn: Lpn, before: u32) {
        self.in_doubt.entry(lpn).or_insert(before);
    }

    /// The request whose writes were registered with [`Oracle::write_cut`] completed after all.
    pub fn forget_cuts(&mut self) {
        self.in_doubt.clear();
    }

    /// Assigns the next version of an LPN being written.
    #[inline]
    pub fn next_version(&mut self, lpn: Lpn) -> u32 {
        if !self.rolled_back.is_empty() {
            self.rolled_back.remove(&lpn);
        }
        let v = &mut self.versions[lpn.index()];
        *v = ((*v & !TRIMMED) + 1) & !TRIMMED;
        *v = (*v).max(1);
        *v
    }

    #[inline]
    pub fn trim(&mut self, lpn: Lpn) {
        if !self.rolled_back.is_empty() {
            self.rolled_back.remove(&lpn);
        }
        let v = &mut self.versions[lpn.index()];
        if *v != 0 {
            *v |= TRIMMED;
        }
    }

    /// The version a read must find, or 0 if the LPN must read as unmapped.
    #[inline]
    pub fn version(&self, lpn: Lpn) -> u32 {
        if !self.rolled_back.is_empty() {
            if let Some(&v) = self.rolled_back.get(&lpn) {
                return v;
            }
        }
        let v = self.versions[lpn.index()];
        if v & TRIMMED != 0 {
            0
        } else {
            v
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.versions.len() as u32
    }

    /// After a power loss: a trim lives in SRAM until the FTL makes it durable, and none of the
    /// schemes does, so an LPN trimmed since its last write may come back with data it held
    /// before the trim (the last write, or an older copy still on flash if GC erased the newer
    /// ones as garbage): a trimmed LPN reads as undefined data, as on a drive. The oracle then
    /// takes the LPN as holding that version. Any other LPN as [`Oracle::verify`].
    pub fn verify_recovered(
        &mut self,
        ftl: &str,
        request: u64,
        lpn: Lpn,
        found: Option<Ppn>,
        flash: &FlashArray,
    ) -> Result<()> {
        if let Some(before) = self.in_doubt.remove(&lpn) {
            return self.verify_cut(ftl, request, lpn, found, flash, before);
        }
        let v = self.versions[lpn.index()];
        if let Some(ppn) = found.filter(|_| v & TRIMMED != 0) {
            let spare = flash.is_programmed(ppn).then(|| flash.spare_unchecked(ppn));
            let last = v & !TRIMMED;
            if let Some(s) = spare.filter(|s| s.kind == PageKind::Data && s.logical == lpn.get() && s.version <= last) {
                self.versions[lpn.index()] = last;
                if s.version < last {
                    self.rolled_back.insert(lpn, s.version);
                }
                return Ok(());
            }
        }
        self.verify(ftl, request, lpn, found, flash)
    }

    /// [`Oracle::verify_recovered`] of an LPN whose write a power loss cut: the new version, or
    /// whatever the LPN could hold before the write; the version counter goes on from the new one.
    fn verify_cut(
        &mut self,
        ftl: &str,
        request: u64,
        lpn: Lpn,
        found: Option<Ppn>,
        flash: &FlashArray,
        before: u32,
    ) -> Result<()> {
        let new = self.versions[lpn.index()];
        if self.verify(ftl, request, lpn, found, flash).is_ok() {
            return Ok(());
        }
        self.versions[lpn.index()] = before;
        let outcome = self.verify_recovered(ftl, request, lpn, found, flash);
        let held = self.version(lpn);
        self.rolled_back.remove(&lpn);
        self.versions[lpn.index()] = if held == 0 { new | TRIMMED } else { new };
        if held != 0 && held != new {
            self.rolled_back.insert(lpn, held);
        }
        outcome
    }

    /// [`Oracle::verify`] of an LPN in delta form: the delta `at` must bring the LPN's last
    /// written version (the page it applies to is the invariant checks' business).
    pub fn verify_delta(&self, ftl: &str, request: u64, lpn: Lpn, at: DeltaAt, flash: &FlashArray) -> Result<()> {
        let expected = self.version(lpn);
        let held = delta_version(at, lpn, flash);
        if expected != 0 && held == Some(expected) {
            return Ok(());
        }
        let expected =
            if expected == 0 { "unmapped".to_string() } else { format!("a delta holding version {expected}") };
        let found = format!("a delta in {at:?} holding version {held:?}");
        Err(SimError::Oracle { ftl: ftl.to_string(), request, lpn, expected, found })
    }

    /// [`Oracle::verify_recovered`] of an LPN a recovery brought back in delta form: as
    /// [`Oracle::verify_delta`], or, for an LPN trimmed since its last write or whose write a
    /// power loss cut, an older version it may come back with.
    pub fn verify_recovered_delta(
        &mut self,
        ftl: &str,
        request: u64,
        lpn: Lpn,
        at: DeltaAt,
        flash: &FlashArray,
    ) -> Result<()> {
        let held = delta_version(at, lpn, flash).unwrap_or(0);
        let last = self.versions[lpn.index()] & !TRIMMED;
        let allowed = match self.in_doubt.remove(&lpn) {
            Some(before) => held == before & !TRIMMED,
            None => self.versions[lpn.index()] & TRIMMED != 0,
        };
        if held != 0 && held <= last && allowed {
            self.versions[lpn.index()] = last;
            if held < last {
                self.rolled_back.insert(lpn, held);
            }
            return Ok(());
        }
        self.verify_delta(ftl, request, lpn, at, flash)
    }

    /// Checks that `found` is what a read of `lpn` must resolve to (a page holding the LPN's last
    /// written version; whether the FTL counts it valid is for the invariant checks); the error
    /// names the FTL and the request.
    #[inline]
    pub fn verify(&self, ftl: &str, request: u64, lpn: Lpn, found: Option<Ppn>, flash: &FlashArray) -> Result<()> {
        let expected = self.version(lpn);
        let fail = |found: String| {
            let expected =
                if expected == 0 { "unmapped".to_string() } else { format!("a data page holding version {expected}") };
            Err(SimError::Oracle { ftl: ftl.to_string(), request, lpn, expected, found })
        };
        match found {
            None if expected == 0 => Ok(()),
            None => fail("unmapped".into()),
            Some(ppn) => {
                if ppn.get() >= flash.geometry().total_pages() {
                    return fail(format!("PPN {ppn}, beyond the device"));
                }
                if !flash.is_programmed(ppn) {
                    return fail(format!("PPN {ppn}, a free page"));
                }
                let spare = flash.spare_unchecked(ppn);
                if expected != 0
                    && spare.kind == PageKind::Data
                    && spare.logical == lpn.get()
                    && spare.version == expected
                {
                    return Ok(());
                }
                fail(format!("PPN {ppn} ({:?} page of LPN {} version {})", spare.kind, spare.logical, spare.version))
            }
        }
    }
}

/// The version a delta of `lpn` at `at` brings, if it holds one.
fn delta_version(at: DeltaAt, lpn: Lpn, flash: &FlashArray) -> Option<u32> {
    match at {
        DeltaAt::Ram(version) => Some(version),
        DeltaAt::Flash(ppn) => {
            let on_delta_page = ppn.get() < flash.geometry().total_pages()
                && flash.is_programmed(ppn)
                && flash.spare_unchecked(ppn).kind == PageKind::Delta;
            let entries = if on_delta_page { flash.deltas(ppn) } else { &[] };
            entries.iter().find(|e| e.lpn == lpn.get()).map(|e| e.version)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn catches_a_stale_page_and_a_missing_mapping() {
        let c = Config::preset("mlc8g").unwrap();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let mut o = Oracle::new(16);
        let v1 = o.next_version(Lpn::new(3));
        flash.program(Ppn::new(0), PageKind::Data, 3, v1).unwrap();
        o.verify("x", 0, Lpn::new(3), Some(Ppn::new(0)), &flash).unwrap();
        let v2 = o.next_version(Lpn::new(3));
        flash.program(Ppn::new(1), PageKind::Data, 3, v2).unwrap();
        let err = o.verify("buggy", 9, Lpn::new(3), Some(Ppn::new(0)), &flash).unwrap_err().to_string();
        assert!(
            err.contains("buggy") && err.contains("request 9") && err.contains("LPN 3") && err.contains("version 2"),
            "{err}"
        );
        assert!(o.verify("x", 0, Lpn::new(3), None, &flash).is_err());
        o.trim(Lpn::new(3));
        o.verify("x", 0, Lpn::new(3), None, &flash).unwrap();
        assert!(o.verify("x", 0, Lpn::new(3), Some(Ppn::new(1)), &flash).is_err());
        assert_eq!(o.next_version(Lpn::new(3)), 3, "versions keep counting across a trim");
    }

    #[test]
    fn a_recovery_may_bring_back_data_a_trimmed_lpn_held_and_nothing_newer() {
        let c = Config::preset("mlc8g").unwrap();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let mut o = Oracle::new(16);
        for ppn in 0..2 {
            let v = o.next_version(Lpn::new(5));
            flash.program(Ppn::new(ppn), PageKind::Data, 5, v).unwrap();
        }
        flash.program(Ppn::new(2), PageKind::Data, 5, 3).unwrap(); // a version never written
        o.trim(Lpn::new(5));
        assert!(
            o.verify_recovered("x", 0, Lpn::new(5), Some(Ppn::new(2)), &flash).is_err(),
            "version 3 was never written"
        );
        o.verify_recovered("x", 0, Lpn::new(5), None, &flash).unwrap();
        o.verify_recovered("x", 0, Lpn::new(5), Some(Ppn::new(0)), &flash).unwrap();
        assert_eq!(o.version(Lpn::new(5)), 1, "the LPN holds version 1 again");
        assert!(o.verify("x", 0, Lpn::new(5), None, &flash).is_err());
        assert!(
            o.verify_recovered("x", 0, Lpn::new(5), Some(Ppn::new(1)), &flash).is_err(),
            "not trimmed any more: strict"
        );
        assert_eq!(o.next_version(Lpn::new(5)), 3, "the counter goes on from the last write");
        assert_eq!(o.version(Lpn::new(5)), 3);
    }

    #[test]
    fn a_cut_write_may_come_back_old_or_new_even_after_a_rollback() {
        let c = Config::preset("mlc8g").unwrap();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let mut o = Oracle::new(16);
        for ppn in 0..2 {
            let v = o.next_version(Lpn::new(4));
            flash.program(Ppn::new(ppn), PageKind::Data, 4, v).unwrap();
        }
        // A first cut write (version 3) comes back as version 2.
        o.write_cut(Lpn::new(4), o.state(Lpn::new(4)));
        assert_eq!(o.next_version(Lpn::new(4)), 3);
        o.verify_recovered("x", 0, Lpn::new(4), Some(Ppn::new(1)), &flash).unwrap();
        assert_eq!(o.version(Lpn::new(4)), 2);
        // A second one (version 4) comes back as version 2 again, then a third as the new one.
        o.write_cut(Lpn::new(4), o.state(Lpn::new(4)));
        assert_eq!(o.next_version(Lpn::new(4)), 4, "versions are never reused");
        o.verify_recovered("x", 0, Lpn::new(4), Some(Ppn::new(1)), &flash).unwrap();
        o.write_cut(Lpn::new(4), o.state(Lpn::new(4)));
        let v = o.next_version(Lpn::new(4));
        flash.program(Ppn::new(2), PageKind::Data, 4, v).unwrap();
        o.verify_recovered("x", 0, Lpn::new(4), Some(Ppn::new(2)), &flash).unwrap();
        assert_eq!(o.version(Lpn::new(4)), 5);
        // Never an older version than the one held before the write.
        o.write_cut(Lpn::new(4), o.state(Lpn::new(4)));
        o.next_version(Lpn::new(4));
        assert!(
            o.verify_recovered("x", 0, Lpn::new(4), Some(Ppn::new(0)), &flash).is_err(),
            "version 1 is older than both"
        );
    }
}
