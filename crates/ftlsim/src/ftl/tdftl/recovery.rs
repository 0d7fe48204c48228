//! 3DFTL's recovery without ILog (paper 000 Fig 8.5): only the GTD is rebuilt, since the
//! write-through cache held nothing flash lacks.
//!
//! 1. Read the first page of every block (its block sequence number and page kind).
//! 2. Scan pages newest first. A page no newer page referenced is read: the first page read of
//!    a group is its newest, so it becomes the group's GTD entry; every PPN in its LTD and PMT
//!    entries is an older page of the same group and joins the skip list, unread.
//!
//! With ILog (Fig 8.6) the invalidation pages are read first (`BlockManager::recover_log`),
//! then each block's recovered flags, newest block first (one invalidation page per block, none
//! when it is the page read last), and the flagged pages join the skip list. Lines 31-33 of the
//! figure (a page read after its group's newest is marked invalid) are left out: such a page can
//! be a valid page only its subgroup's LTD entry references (spec 5.14); marking nothing reads
//! the same pages.
//!
//! The paper scans blocks by descending sequence number, which is newest first on its one-die
//! device. With several allocation units (or the marker stream) blocks of different frontiers
//! interleave in time, so the scan merges the frontiers' sequences by page sequence number:
//! the next page of each sequence is read (it would be read anyway unless a newer page of
//! another sequence skips it first) and the newest is processed. On one frontier this is the
//! paper's order and read count exactly.

use std::collections::{BTreeMap, BinaryHeap};

use super::Mapping;
use crate::flash::{PageKind, Ppn, Spare};
use crate::ftl::common::ilog::Ilog;
use crate::ftl::common::BlockManager;
use crate::ftl::FtlCtx;

/// The pages of one frontier, newest first, and how far the scan got.
struct Sequence {
    pages: Vec<Ppn>,
    next: usize,
}

impl Sequence {
    /// Reads the next page not on the skip list (a corrupt page is read and passed over).
    fn advance(&mut self, skip: &[bool], ctx: &mut FtlCtx) -> Option<(Ppn, Spare)> {
        while let Some(&ppn) = self.pages.get(self.next) {
            self.next += 1;
            if skip[ppn.index()] {
                continue;
            }
            if let Some(spare) = ctx.probe_spare(ppn) {
                return Some((ppn, spare));
            }
        }
        None
    }
}

/// The GTD and its empty-group marks, rebuilt from flash (every read counted).
pub(super) fn rebuild_gtd(map: &Mapping, blocks: &mut BlockManager, ctx: &mut FtlCtx) -> (Vec<Option<Ppn>>, Vec<bool>) {
    let g = ctx.flash.geometry().clone();
    let split = map.split();
    let psn = |ppn: Ppn| map.spares.psn[ppn.index()];
    let mut frontiers: BTreeMap<(u32, u8), Vec<(u32, crate::flash::Pbn)>> = BTreeMap::new();
    for pbn in g.blocks() {
        let first = g.first_page(pbn);
        if let Some(spare) = ctx.probe_spare(first).filter(|s| s.kind != PageKind::InvalidationLog) {
            frontiers.entry((blocks.unit_of(pbn), spare.kind as u8)).or_default().push((psn(first), pbn));
        }
    }
    let mut skip = vec![false; g.total_pages() as usize];
    let mut newest_first: Vec<(u32, crate::flash::Pbn)> = frontiers.values().flatten().copied().collect();
    newest_first.sort_unstable_by(|a, b| b.cmp(a));
    for (_, pbn) in newest_first {
        let Some(flags) = blocks.recovered_flags(pbn, ctx) else { break };
        for (offset, ppn) in g.pages_of(pbn).enumerate() {
            skip[ppn.index()] |= Ilog::flagged(flags, offset as u32);
        }
    }
    let mut sequences: Vec<Sequence> = frontiers
        .into_values()
        .map(|mut list| {
            list.sort_unstable_by(|a, b| b.cmp(a));
            let pages = list
                .iter()
                .flat_map(|&(_, pbn)| {
                    let first = g.first_page(pbn);
                    (0..ctx.flash.write_pointer(pbn)).rev().map(move |offset| first.offset(offset))
                })
                .collect();
            Sequence { pages, next: 0 }
        })
        .collect();

    let mut gtd = vec![None; map.gtd.len()];
    let mut marked = vec![false; map.gtd.len()];
    let mut heads = BinaryHeap::new();
    for (i, sequence) in sequences.iter_mut().enumerate() {
        if let Some((ppn, spare)) = sequence.advance(&skip, ctx) {
            heads.push((psn(ppn), i, ppn, spare.kind as u8, spare.logical));
        }
    }
    while let Some((_, i, ppn, kind, logical)) = heads.pop() {
        if kind == PageKind::Metadata as u8 {
            let group = logical as usize;
            if gtd[group].is_none() {
                gtd[group] = Some(ppn);
                marked[group] = true;
            }
        } else {
            let content = map.decode(ppn);
            let group = split.group_of(content.lpn) as usize;
            if gtd[group].is_none() {
                gtd[group] = Some(ppn);
            }
            let entries = (0..split.subgroups())
                .filter(|&s| content.includes(s))
                .flat_map(|s| content.entries[s * split.slots()..(s + 1) * split.slots()].iter());
            for referenced in content.ltd[..split.subgroups()].iter().chain(entries).flatten() {
                if *referenced != ppn {
                    skip[referenced.index()] = true;
                }
            }
        }
        if let Some((ppn, spare)) = sequences[i].advance(&skip, ctx) {
            heads.push((psn(ppn), i, ppn, spare.kind as u8, spare.logical));
        }
    }
    (gtd, marked)
}
