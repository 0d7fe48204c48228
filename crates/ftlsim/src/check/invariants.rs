//! Full consistency check of an FTL against the flash array: run every N requests with
//! `check.invariants_every` (and in all tests).

use crate::error::{Result, SimError};
use crate::flash::{FlashArray, PageState, Stream};
use crate::ftl::Ftl;

/// Checks: valid counts equal page states; every valid data page is reachable from exactly the
/// LPN in its spare area and every mapped LPN resolves to a valid page of that LPN; the block
/// manager's accounting adds up; the FTL's own checks pass.
pub fn check_invariants(ftl: &dyn Ftl, flash: &FlashArray, logical_pages: u32, request: u64) -> Result<()> {
    let fail = |message: String| Err(SimError::Invariant { ftl: ftl.name().to_string(), request, message });
    let g = flash.geometry();
    for pbn in 0..g.total_blocks() {
        let counted = flash.recount_valid(pbn);
        if counted != flash.valid_count(pbn) {
            return fail(format!("block {pbn} records {} valid pages but holds {counted}", flash.valid_count(pbn)));
        }
    }
    let mut mapped_valid = 0u64;
    for lpn in 0..logical_pages {
        if let Some(ppn) = ftl.lookup(lpn, flash) {
            if ppn >= g.total_pages() || flash.page_state(ppn) != PageState::Valid {
                return fail(format!("LPN {lpn} maps to PPN {ppn}, which is not a valid page"));
            }
            let spare = flash.spare_unchecked(ppn);
            if spare.stream != Stream::Data || spare.logical != lpn {
                return fail(format!("LPN {lpn} maps to PPN {ppn}, which holds {:?} page {}", spare.stream, spare.logical));
            }
            mapped_valid += 1;
        }
    }
    let mut valid_data = 0u64;
    for ppn in 0..g.total_pages() {
        if flash.page_state(ppn) == PageState::Valid && flash.block_stream(g.block_of(ppn)) == Stream::Data {
            valid_data += 1;
            let lpn = flash.spare_unchecked(ppn).logical;
            if lpn >= logical_pages || ftl.lookup(lpn, flash) != Some(ppn) {
                return fail(format!("valid data page PPN {ppn} (LPN {lpn}) is not what its LPN maps to"));
            }
        }
    }
    if valid_data != mapped_valid {
        return fail(format!("{valid_data} valid data pages but {mapped_valid} mapped LPNs"));
    }
    ftl.blocks().check(flash).or_else(fail)?;
    ftl.check(flash).or_else(fail)
}
