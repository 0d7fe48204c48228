//! The data oracle: an independent record of which version of each LPN the host wrote last.
//! The version travels to the page's spare area, so a read can be checked against it.

use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, PageKind, PageState, Ppn};

/// Per LPN: the last version written in the low 31 bits (0 = never written) and a trimmed flag
/// in the top bit. Versions keep counting across trims, so a copy written after a trim is always
/// newer than any copy written before it (recovery relies on "newest version wins").
pub struct Oracle {
    versions: Vec<u32>,
}

const TRIMMED: u32 = 1 << 31;

impl Oracle {
    pub fn new(logical_pages: u32) -> Self {
        Oracle { versions: crate::mem::zeroed_vec(logical_pages as usize) }
    }

    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some(v) = self.versions.get(lpn as usize) {
            crate::mem::prefetch(v);
        }
    }

    /// Assigns the next version of an LPN being written.
    #[inline]
    pub fn next_version(&mut self, lpn: Lpn) -> u32 {
        let v = &mut self.versions[lpn as usize];
        *v = ((*v & !TRIMMED) + 1) & !TRIMMED;
        *v = (*v).max(1);
        *v
    }

    #[inline]
    pub fn trim(&mut self, lpn: Lpn) {
        let v = &mut self.versions[lpn as usize];
        if *v != 0 {
            *v |= TRIMMED;
        }
    }

    /// The version a read must find, or 0 if the LPN must read as unmapped.
    #[inline]
    pub fn version(&self, lpn: Lpn) -> u32 {
        let v = self.versions[lpn as usize];
        if v & TRIMMED != 0 {
            0
        } else {
            v
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.versions.len() as u32
    }

    /// Checks that `found` is what a read of `lpn` must resolve to; the error names the FTL and
    /// the request.
    #[inline]
    pub fn verify(&self, ftl: &str, request: u64, lpn: Lpn, found: Option<Ppn>, flash: &FlashArray) -> Result<()> {
        let expected = self.version(lpn);
        let fail = |found: String| {
            let expected = if expected == 0 {
                "unmapped".to_string()
            } else {
                format!("a valid data page holding version {expected}")
            };
            Err(SimError::Oracle { ftl: ftl.to_string(), request, lpn, expected, found })
        };
        match found {
            None if expected == 0 => Ok(()),
            None => fail("unmapped".into()),
            Some(ppn) => {
                if ppn >= flash.geometry().total_pages() {
                    return fail(format!("PPN {ppn}, beyond the device"));
                }
                let state = flash.page_state(ppn);
                if state == PageState::Free {
                    return fail(format!("PPN {ppn}, a free page"));
                }
                let spare = flash.spare_unchecked(ppn);
                if expected != 0
                    && state == PageState::Valid
                    && spare.kind == PageKind::Data
                    && spare.logical == lpn
                    && spare.version == expected
                {
                    return Ok(());
                }
                fail(format!(
                    "PPN {ppn} ({state:?} {:?} page of LPN {} version {})",
                    spare.kind, spare.logical, spare.version
                ))
            }
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
        let v1 = o.next_version(3);
        flash.program(0, PageKind::Data, 3, v1).unwrap();
        o.verify("x", 0, 3, Some(0), &flash).unwrap();
        let v2 = o.next_version(3);
        flash.program(1, PageKind::Data, 3, v2).unwrap();
        flash.invalidate(0).unwrap();
        let err = o.verify("buggy", 9, 3, Some(0), &flash).unwrap_err().to_string();
        assert!(
            err.contains("buggy") && err.contains("request 9") && err.contains("LPN 3") && err.contains("version 2"),
            "{err}"
        );
        assert!(o.verify("x", 0, 3, None, &flash).is_err());
        o.trim(3);
        o.verify("x", 0, 3, None, &flash).unwrap();
        assert!(o.verify("x", 0, 3, Some(1), &flash).is_err());
        assert_eq!(o.next_version(3), 3, "versions keep counting across a trim");
    }
}
