//! Full consistency check of an FTL against the flash array: run every N requests with
//! `check.invariants_every`, after every power-loss recovery, and in all tests.
//!
//! The program-order rule and "no page programmed twice between erases" are enforced when a page
//! is programmed: the flash array refuses every program that would break them
//! (`SimError::FlashRule`, naming the PPN); the check here recounts each block's bookkeeping.

use crate::error::{Result, SimError};
use crate::flash::{BlockState, FlashArray, Lpn, PageKind, Ppn};
use crate::ftl::common::{BlockManager, BlockRole};
use crate::ftl::Ftl;

/// Validity is what the FTL's tracker says (the flash array knows only what is programmed), so
/// after a recovery these checks also check the validity it rebuilt: exactly the mapped pages.
///
/// Checks: each block's program bookkeeping adds up; every valid data page is reachable from exactly the
/// LPN in its spare area and every mapped LPN resolves to a valid page of that LPN; the block
/// manager's accounting adds up and no erased block leaked from it; the translation and metadata
/// pages the FTL references are valid, distinct and complete; the SRAM in use fits the configured
/// SRAM; the FTL's own checks pass.
pub fn check_invariants(ftl: &dyn Ftl, flash: &FlashArray, logical_pages: u32, request: u64) -> Result<()> {
    let fail = |message: String| Err(SimError::Invariant { ftl: ftl.name().to_string(), request, message });
    check_program_bookkeeping(flash).or_else(fail)?;
    check_data_mapping(ftl, flash, logical_pages).or_else(fail)?;
    ftl.blocks().check(flash).or_else(fail)?;
    check_no_leaked_block(ftl, flash).or_else(fail)?;
    check_referenced_pages(ftl, flash).or_else(fail)?;
    check_sram_in_use(ftl).or_else(fail)?;
    ftl.check(flash).or_else(fail)
}

type Check = std::result::Result<(), String>;

fn check_program_bookkeeping(flash: &FlashArray) -> Check {
    flash.geometry().blocks().try_for_each(|pbn| flash.check_block_pages(pbn))
}

/// "free", "invalid" or "valid", as the FTL's validity tracker knows the page.
fn state(blocks: &BlockManager, flash: &FlashArray, ppn: Ppn) -> &'static str {
    if !flash.is_programmed(ppn) {
        "free"
    } else if blocks.is_valid(ppn, flash) {
        "valid"
    } else {
        "invalid"
    }
}

/// Mapped LPNs and valid data pages are in one-to-one correspondence.
fn check_data_mapping(ftl: &dyn Ftl, flash: &FlashArray, logical_pages: u32) -> Check {
    let g = flash.geometry();
    let blocks = ftl.blocks();
    let mut mapped_valid = 0u64;
    for lpn in Lpn::range(0, logical_pages) {
        if let Some(ppn) = ftl.lookup(lpn, flash) {
            if ppn.get() >= g.total_pages() || !blocks.is_valid(ppn, flash) {
                return Err(format!("LPN {lpn} maps to PPN {ppn}, which is not a valid page"));
            }
            let spare = flash.spare_unchecked(ppn);
            if spare.kind != PageKind::Data || spare.logical != lpn.get() {
                return Err(format!(
                    "LPN {lpn} maps to PPN {ppn}, which holds {:?} page {}",
                    spare.kind, spare.logical
                ));
            }
            mapped_valid += 1;
        }
    }
    let mut valid_data = 0u64;
    for ppn in g.pages() {
        if blocks.is_valid(ppn, flash) && flash.block_kind(g.block_of(ppn)) == PageKind::Data {
            valid_data += 1;
            let lpn = flash.spare_unchecked(ppn).logical;
            if lpn >= logical_pages || ftl.lookup(Lpn::new(lpn), flash) != Some(ppn) {
                return Err(format!(
                    "valid data page PPN {ppn} (LPN {lpn}) is not what its LPN maps to (a stale copy left valid: \
                     the old page of an overwrite or trim was not invalidated)"
                ));
            }
        }
    }
    if valid_data != mapped_valid {
        return Err(format!("{valid_data} valid data pages but {mapped_valid} mapped LPNs"));
    }
    Ok(())
}

/// Every erased block is in a free pool, open for writing or reserved for the FTL's GC; otherwise
/// it is lost to the device.
fn check_no_leaked_block(ftl: &dyn Ftl, flash: &FlashArray) -> Check {
    let blocks = ftl.blocks();
    for pbn in flash.geometry().blocks() {
        let role = blocks.role(pbn);
        if flash.block_state(pbn) == BlockState::Erased
            && !matches!(role, BlockRole::Free | BlockRole::Open | BlockRole::Reserved)
        {
            return Err(format!("block {pbn} is erased but {role:?}, not free: it leaked from the free pool"));
        }
    }
    Ok(())
}

fn check_referenced_pages(ftl: &dyn Ftl, flash: &FlashArray) -> Check {
    let Some(mut refs) = ftl.referenced_pages() else { return Ok(()) };
    let g = flash.geometry();
    let blocks = ftl.blocks();
    refs.extend(blocks.log_pages());
    let mut referenced = vec![false; g.total_pages() as usize];
    let mut names = std::collections::HashSet::with_capacity(refs.len());
    for r in &refs {
        let what = format!("{:?} page {} referenced at PPN {}", r.kind, r.logical, r.ppn);
        if r.kind == PageKind::Data {
            return Err(format!("{what}: data pages are checked through lookup, not referenced_pages"));
        }
        if r.ppn.get() >= g.total_pages() || !blocks.is_valid(r.ppn, flash) {
            let state = if r.ppn.get() >= g.total_pages() { "beyond the device" } else { state(blocks, flash, r.ppn) };
            return Err(format!("{what}: the page is {state}, not valid"));
        }
        let spare = flash.spare_unchecked(r.ppn);
        if spare.kind != r.kind || spare.logical != r.logical {
            return Err(format!("{what}: the page holds {:?} page {}", spare.kind, spare.logical));
        }
        if std::mem::replace(&mut referenced[r.ppn.index()], true) {
            return Err(format!("{what}: PPN {} is referenced twice", r.ppn));
        }
        if !names.insert((r.kind, r.logical)) {
            return Err(format!("{what}: {:?} page {} is referenced at two PPNs", r.kind, r.logical));
        }
    }
    for ppn in g.pages() {
        let stream = flash.block_kind(g.block_of(ppn));
        if stream != PageKind::Data && blocks.is_valid(ppn, flash) && !referenced[ppn.index()] {
            let logical = flash.spare_unchecked(ppn).logical;
            return Err(format!(
                "valid {stream:?} page PPN {ppn} (logical {logical}) is referenced by no directory: an old copy was not invalidated"
            ));
        }
    }
    Ok(())
}

fn check_sram_in_use(ftl: &dyn Ftl) -> Check {
    let Some(used) = ftl.sram_in_use() else { return Ok(()) };
    let configured: u64 = ftl.sram().iter().map(|s| s.bytes).sum();
    if used > configured {
        return Err(format!("holds {used} bytes of SRAM state but its configuration provides {configured} bytes"));
    }
    Ok(())
}
