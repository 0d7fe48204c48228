//! ILog, the invalidation log (paper 000 chapter 8; spec `../shared/specs/scftl-3dftl-ilog.md`
//! 5.13): each block's invalid flags (a BIF: the block number and a bit per page) are kept in
//! invalidation pages (IPs) on flash, so GC learns a victim's invalid pages with at most one
//! page read and recovery skips invalid pages without reading them.
//!
//! SRAM holds the BIFT (per block: the logical IP number, LIPN, that holds its BIF; the invalid
//! count is the block manager's counter), the IPT (LIPN -> the IP's physical page) and the BIFQ,
//! a queue of BIFs modified since they were last written ("first-modified-first-out"). A BIF in
//! the queue may be incomplete: it holds the flags set since it was queued, and the rest stay in
//! its IP until a write-back or a validation merges them.
//!
//! Invalidation follows Figure 8.3 in two halves. [`Ilog::invalidate`] records the flag in SRAM
//! and drops unmodified BIFs from the head of a full queue; a modified head is written back by
//! [`Ilog::build_page`] and [`Ilog::commit`], which the block manager runs when the FTL has
//! finished the operation that invalidated (`BlockManager::write_back_log`): a logged flag then
//! never reaches flash before the write that made its page invalid, so a power loss cannot leave
//! a flag on a page recovery finds valid. The queue may exceed its capacity by the few flags of
//! one operation meanwhile.
//!
//! The log is conservative: a flag is set only for an invalid page, but flags lost at a power loss
//! (the queue), never logged (a trim kept in SRAM) or never known (a preconditioned layout) leave
//! invalid pages unflagged; GC then reads and validates them through the mapping, and counts
//! them (`unflagged_invalid`).

use std::collections::BTreeMap;

use super::ListSet;
use crate::error::{Result, SimError};
use crate::flash::{BlockState, FlashArray, Geometry, Pbn, Ppn};
use crate::metrics::IlogStats;

/// The most logical invalidation pages (a LIPN is a `u16`; one value means "none").
pub const MAX_LOG_PAGES: u32 = u16::MAX as u32 - 1;
const NO_LIPN: u16 = u16::MAX;
/// The one list of the queue: its front is the tail (newest), its back the head.
const QUEUE: u32 = 0;

/// Bytes of a BIF: a 3-byte block number and a bit per page (35 B for 256 pages).
pub fn bif_bytes(pages_per_block: u32) -> u32 {
    3 + pages_per_block.div_ceil(8)
}

/// A queued BIF's state.
#[derive(Debug, Clone, Copy, Default)]
struct Queued {
    /// Flags set since the BIF was last written to an IP.
    modified: bool,
    /// The queue holds every flag the log knows for the block (nothing to merge from its IP).
    complete: bool,
}

/// What one invalidation page holds on flash: its LIPN, the sequence number the next opened block
/// would get when it was written (the paper's "latest BSN" plus one: flags of a block numbered
/// from it on are stale), and its BIFs.
#[derive(Debug, Clone)]
pub struct IpImage {
    pub lipn: u16,
    pub bsn_bound: u32,
    pbns: Vec<Pbn>,
    flags: Vec<u64>,
}

impl IpImage {
    fn new(lipn: u16, bsn_bound: u32) -> Self {
        IpImage { lipn, bsn_bound, pbns: Vec::new(), flags: Vec::new() }
    }

    fn push(&mut self, pbn: Pbn, flags: &[u64]) {
        self.pbns.push(pbn);
        self.flags.extend_from_slice(flags);
    }

    /// The BIFs it holds.
    pub fn len(&self) -> usize {
        self.pbns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pbns.is_empty()
    }

    fn flags_of(&self, pbn: Pbn, words: usize) -> Option<&[u64]> {
        let i = self.pbns.iter().position(|&p| p == pbn)?;
        Some(&self.flags[i * words..(i + 1) * words])
    }
}

pub struct Ilog {
    pages_per_block: u32,
    /// 64-bit words of one block's flags.
    words: usize,
    bifs_per_ip: usize,
    /// BIFs the queue holds (its SRAM / a BIF's bytes).
    capacity: u32,
    lipns: u16,
    /// BIFT: the LIPN holding each block's BIF, or `NO_LIPN`.
    lipn: Vec<u16>,
    /// BIFQ: one slot per block.
    queue: ListSet<Queued>,
    /// The queued flags of each block (zero when not queued).
    flags: Vec<u64>,
    /// IPT: each LIPN's page.
    ipt: Vec<Option<Ppn>>,
    /// The LIPN the next write-back rewrites (round robin: the oldest).
    next_lipn: u16,
    /// Flash content: every programmed IP's image, by PPN (an old copy stays until its erase).
    images: BTreeMap<u32, IpImage>,
    /// Flash content: each block's sequence number, in its first page's spare area.
    bsn: Vec<u32>,
    next_bsn: u32,
    /// A victim's flags during validation.
    scratch: Vec<u64>,
    /// The IP a recovery read last (read again only when another is needed).
    last_read: Option<Ppn>,
    pub stats: IlogStats,
}

impl Ilog {
    /// A log for `geometry` with a queue of `queue_bytes` and `lipns` invalidation pages (checked
    /// by `Config::validate`).
    pub fn new(geometry: &Geometry, queue_bytes: u32, lipns: u32) -> Self {
        let ppb = geometry.pages_per_block;
        let words = ppb.div_ceil(64) as usize;
        let blocks = geometry.total_blocks() as usize;
        Ilog {
            pages_per_block: ppb,
            words,
            bifs_per_ip: (geometry.page_size / bif_bytes(ppb)) as usize,
            capacity: queue_bytes / bif_bytes(ppb),
            lipns: lipns as u16,
            lipn: vec![NO_LIPN; blocks],
            queue: ListSet::new(blocks, 1),
            flags: vec![0; blocks * words],
            ipt: vec![None; lipns as usize],
            next_lipn: 0,
            images: BTreeMap::new(),
            bsn: vec![0; blocks],
            next_bsn: 1,
            scratch: vec![0; words],
            last_read: None,
            stats: IlogStats::default(),
        }
    }

    /// BIFs an invalidation page holds.
    pub fn bifs_per_page(&self) -> usize {
        self.bifs_per_ip
    }

    /// BIFs the queue holds.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// BIFs queued now.
    pub fn queued(&self) -> u32 {
        self.queue.len(QUEUE)
    }

    /// The page holding `lipn`'s IP.
    pub fn page_of(&self, lipn: u16) -> Option<Ppn> {
        self.ipt[lipn as usize]
    }

    /// Every written LIPN and its page.
    pub fn pages(&self) -> impl Iterator<Item = (u16, Ppn)> + '_ {
        self.ipt.iter().enumerate().filter_map(|(lipn, ppn)| ppn.map(|ppn| (lipn as u16, ppn)))
    }

    /// The LIPN holding `pbn`'s BIF.
    pub fn lipn_of(&self, pbn: Pbn) -> Option<u16> {
        Some(self.lipn[pbn.index()]).filter(|&l| l != NO_LIPN)
    }

    /// What the IP at `ppn` holds.
    pub fn image(&self, ppn: Ppn) -> Option<&IpImage> {
        self.images.get(&ppn.get())
    }

    /// Simulator memory.
    pub fn state_bytes(&self) -> usize {
        self.lipn.len() * 2
            + self.queue.memory_bytes()
            + self.flags.len() * 8
            + self.ipt.len() * 4
            + self.bsn.len() * 4
            + self.images.values().map(|i| i.pbns.len() * 4 + i.flags.len() * 8 + 64).sum::<usize>()
    }

    /// Stamps the sequence number of a block being opened.
    pub fn opened(&mut self, pbn: Pbn) {
        self.bsn[pbn.index()] = self.next_bsn;
        self.next_bsn += 1;
    }

    fn block_flags(&self, pbn: Pbn) -> &[u64] {
        &self.flags[pbn.index() * self.words..(pbn.index() + 1) * self.words]
    }

    fn block_flags_mut(&mut self, pbn: Pbn) -> &mut [u64] {
        &mut self.flags[pbn.index() * self.words..(pbn.index() + 1) * self.words]
    }

    fn dequeue(&mut self, pbn: Pbn) {
        self.queue.remove(pbn.get());
        self.block_flags_mut(pbn).fill(0);
    }

    /// Figure 8.3 in SRAM: logs that page `offset` of `pbn` is invalid (`all_invalid`: the block
    /// is full and now wholly invalid, so its BIF is dropped: GC erases it without validation).
    /// A block entering a full queue pushes out unmodified BIFs from the head; a modified head
    /// waits for the write-back ([`Ilog::needs_write_back`]).
    pub fn invalidate(&mut self, pbn: Pbn, offset: u32, all_invalid: bool) {
        self.stats.invalidations += 1;
        let slot = pbn.get();
        match self.queue.list_of(slot) {
            None => {
                while self.queue.len(QUEUE) >= self.capacity {
                    let head = self.queue.back(QUEUE).expect("a full queue has a head");
                    if self.queue.payload(head).modified {
                        break;
                    }
                    self.dequeue(Pbn::new(head));
                }
                self.queue.push_front(QUEUE, slot);
                // A block whose BIF was never written has nothing to merge.
                *self.queue.payload_mut(slot) = Queued { modified: false, complete: self.lipn[pbn.index()] == NO_LIPN };
            }
            // First modified, first out: an unmodified BIF moves to the tail.
            Some(_) if !self.queue.payload(slot).modified => self.queue.move_to_front(QUEUE, slot),
            Some(_) => {}
        }
        self.block_flags_mut(pbn)[offset as usize >> 6] |= 1 << (offset & 63);
        self.queue.payload_mut(slot).modified = true;
        if all_invalid {
            self.dequeue(pbn);
        }
    }

    /// Whether the queue holds more BIFs than its SRAM: its head must go.
    pub fn needs_write_back(&self) -> bool {
        self.queue.len(QUEUE) > self.capacity
    }

    /// Drops the queue's head if it is unmodified; returns whether it did.
    pub fn drop_unmodified_head(&mut self) -> bool {
        match self.queue.back(QUEUE) {
            Some(head) if !self.queue.payload(head).modified => {
                self.dequeue(Pbn::new(head));
                true
            }
            _ => false,
        }
    }

    /// ORs the BIFs of the IP at `ppn` still current for `lipn` into the queued copies of
    /// their blocks, which become complete.
    fn merge_from(&mut self, ppn: Ppn, lipn: u16) {
        let image = self.images.get(&ppn.get()).expect("an IPT entry points at a written IP");
        let words = self.words;
        for (i, &pbn) in image.pbns.iter().enumerate() {
            if self.lipn[pbn.index()] != lipn || self.queue.list_of(pbn.get()).is_none() {
                continue;
            }
            let from = &image.flags[i * words..(i + 1) * words];
            for (to, from) in self.flags[pbn.index() * words..(pbn.index() + 1) * words].iter_mut().zip(from) {
                *to |= from;
            }
            self.queue.payload_mut(pbn.get()).complete = true;
        }
    }

    /// Figure 8.3 lines 5-40: the next invalidation page, rewriting the oldest LIPN. Its current
    /// BIFs are carried over (merged with their queued copies), then the queue's modified BIFs
    /// from the head are added, each incomplete one merged with its IP first, until the page is
    /// full. `read(ppn)` reads an IP (counted as an invalidation's read).
    pub fn build_page(&mut self, mut read: impl FnMut(Ppn) -> Result<()>) -> Result<IpImage> {
        let victim = self.next_lipn;
        self.next_lipn = (victim + 1) % self.lipns;
        let mut page = IpImage::new(victim, self.next_bsn);
        if let Some(old) = self.ipt[victim as usize] {
            read(old)?;
            self.stats.ip_reads += 1;
            self.merge_from(old, victim);
            let image = self.images[&old.get()].clone();
            for (i, &pbn) in image.pbns.iter().enumerate() {
                if self.lipn[pbn.index()] != victim {
                    continue;
                }
                if self.queue.list_of(pbn.get()).is_some() {
                    page.push(pbn, self.block_flags(pbn));
                    self.queue.payload_mut(pbn.get()).modified = false;
                } else {
                    page.push(pbn, &image.flags[i * self.words..(i + 1) * self.words]);
                }
            }
        }
        let mut cursor = self.queue.back(QUEUE);
        while let Some(slot) = cursor {
            if page.len() == self.bifs_per_ip {
                break;
            }
            cursor = self.queue.toward_front(slot);
            let queued = *self.queue.payload(slot);
            if !queued.modified {
                continue;
            }
            let pbn = Pbn::new(slot);
            if !queued.complete {
                let lipn = self.lipn[pbn.index()];
                let ppn = self.ipt[lipn as usize].expect("an incomplete BIF's LIPN has a page");
                read(ppn)?;
                self.stats.ip_reads += 1;
                self.merge_from(ppn, lipn);
            }
            page.push(pbn, self.block_flags(pbn));
            self.queue.payload_mut(slot).modified = false;
            self.lipn[pbn.index()] = victim;
        }
        Ok(page)
    }

    /// The page built by [`Ilog::build_page`] was programmed at `ppn`: it becomes its LIPN's IP.
    /// Returns the LIPN's previous page, now invalid.
    pub fn commit(&mut self, ppn: Ppn, page: IpImage) -> Option<Ppn> {
        let lipn = page.lipn;
        self.images.insert(ppn.get(), page);
        self.stats.ip_writes += 1;
        self.ipt[lipn as usize].replace(ppn)
    }

    /// Whether `ppn` is the current page of its LIPN (how GC validates an IP block's pages).
    pub fn is_current_page(&self, ppn: Ppn) -> bool {
        self.images.get(&ppn.get()).is_some_and(|image| self.ipt[image.lipn as usize] == Some(ppn))
    }

    /// GC moved the IP at `old` to `new`.
    pub fn relocated(&mut self, old: Ppn, new: Ppn) {
        let image = self.images[&old.get()].clone();
        self.ipt[image.lipn as usize] = Some(new);
        self.images.insert(new.get(), image);
    }

    /// `pbn` was erased: its BIF is gone (queued or logged), and an IP block's pages with it.
    pub fn erased(&mut self, pbn: Pbn, geometry: &Geometry) {
        self.dequeue(pbn);
        self.lipn[pbn.index()] = NO_LIPN;
        let first = geometry.first_page(pbn).get();
        let pages: Vec<u32> = self.images.range(first..first + self.pages_per_block).map(|(&p, _)| p).collect();
        for ppn in pages {
            self.images.remove(&ppn);
        }
    }

    /// Validation of a GC victim (paper §8.1.2): its flags, from the queue if complete, else
    /// merged with its IP, read through `read` (at most one read). A flag set means invalid.
    /// The flags come in the log's scratch buffer: give it back with [`Ilog::return_scratch`].
    pub fn victim_flags(&mut self, pbn: Pbn, mut read: impl FnMut(Ppn) -> Result<()>) -> Result<Vec<u64>> {
        let words = self.words;
        let queued = self.queue.list_of(pbn.get()).map(|_| *self.queue.payload(pbn.get()));
        let mut flags = std::mem::take(&mut self.scratch);
        flags.resize(words, 0);
        flags.copy_from_slice(&self.flags[pbn.index() * words..(pbn.index() + 1) * words]);
        let lipn = self.lipn[pbn.index()];
        if lipn != NO_LIPN && !queued.is_some_and(|q| q.complete) {
            let ppn = self.ipt[lipn as usize].expect("a BIFT entry's LIPN has a page");
            read(ppn)?;
            self.stats.validation_ip_reads += 1;
            if let Some(logged) = self.images[&ppn.get()].flags_of(pbn, words) {
                for (to, from) in flags.iter_mut().zip(logged) {
                    *to |= from;
                }
            }
        }
        Ok(flags)
    }

    /// Returns the buffer [`Ilog::victim_flags`] lent.
    pub fn return_scratch(&mut self, flags: Vec<u64>) {
        self.scratch = flags;
    }

    /// Forgets the SRAM state (a power loss) and rebuilds the IPT and BIFT from the IPs on flash
    /// (Figures 8.4 and 8.6, "recover BIFT"): every IP block in ascending sequence order, every
    /// page read through `read` (false: the page is unreadable); the last IP of each LIPN wins,
    /// and a BIF counts only for a written block opened before its IP (the "latest BSN" rule).
    pub fn recover(&mut self, flash: &FlashArray, mut read: impl FnMut(Ppn) -> bool) {
        let g = flash.geometry();
        self.queue.clear();
        self.flags.fill(0);
        self.lipn.fill(NO_LIPN);
        self.ipt.fill(None);
        self.last_read = None;
        let mut ip_blocks: Vec<(u32, Pbn)> = g
            .blocks()
            .filter(|&b| {
                flash.block_state(b) != BlockState::Erased
                    && flash.block_kind(b) == crate::flash::PageKind::InvalidationLog
            })
            .map(|b| (self.bsn[b.index()], b))
            .collect();
        ip_blocks.sort_unstable();
        let mut newest: Option<(u32, u16)> = None;
        for (bsn, pbn) in ip_blocks {
            for ppn in g.pages_below(pbn, flash.write_pointer(pbn)) {
                if !read(ppn) {
                    continue;
                }
                let Some(image) = self.images.get(&ppn.get()) else { continue };
                self.ipt[image.lipn as usize] = Some(ppn);
                newest = Some((bsn, image.lipn));
                for &block in &image.pbns {
                    let written = flash.block_state(block) != BlockState::Erased;
                    if written && self.bsn[block.index()] < image.bsn_bound {
                        self.lipn[block.index()] = image.lipn;
                    }
                }
            }
        }
        self.next_lipn = newest.map_or(0, |(_, lipn)| (lipn + 1) % self.lipns);
    }

    /// Drops the recovered BIF of every block where it flags a page the recovered mapping holds
    /// valid (a trim kept in SRAM and lost at the power loss revived an older copy): recovery
    /// checks each flag against the mapping it rebuilt, and such a block is validated page by
    /// page again.
    pub fn forget_contradicted(&mut self, geometry: &Geometry, valid: impl Fn(Ppn) -> bool) {
        for pbn in geometry.blocks() {
            let Some(lipn) = self.lipn_of(pbn) else { continue };
            let ppn = self.ipt[lipn as usize].expect("a recovered BIFT entry's LIPN has a page");
            let Some(flags) = self.images[&ppn.get()].flags_of(pbn, self.words) else { continue };
            if (0..self.pages_per_block).any(|o| Ilog::flagged(flags, o) && valid(geometry.page_at(pbn, o))) {
                self.lipn[pbn.index()] = NO_LIPN;
            }
        }
    }

    /// The flags the log holds for `pbn` after a recovery (Figure 8.6 line 23), reading its IP
    /// through `read` unless it is the IP read last.
    pub fn recovered_flags(&mut self, pbn: Pbn, mut read: impl FnMut(Ppn)) -> &[u64] {
        self.scratch.resize(self.words, 0);
        self.scratch.fill(0);
        let lipn = self.lipn[pbn.index()];
        if lipn == NO_LIPN {
            return &self.scratch;
        }
        let ppn = self.ipt[lipn as usize].expect("a recovered BIFT entry's LIPN has a page");
        if self.last_read != Some(ppn) {
            read(ppn);
            self.last_read = Some(ppn);
        }
        if let Some(logged) = self.images[&ppn.get()].flags_of(pbn, self.words) {
            self.scratch.copy_from_slice(logged);
        }
        &self.scratch
    }

    /// Checks that every flag the log holds (queued, or logged in a block's current IP) marks an
    /// invalid page (`invalid(ppn)`, the simulator's ground truth), that the IPT points at
    /// distinct written IPs, and that the queue fits its SRAM.
    pub fn check(&self, flash: &FlashArray, invalid: impl Fn(Ppn) -> bool) -> std::result::Result<(), String> {
        let g = flash.geometry();
        if self.needs_write_back() {
            return Err(format!("the BIF queue holds {} BIFs, capacity {}", self.queued(), self.capacity));
        }
        for pbn in g.blocks() {
            let mut sources = vec![("queued", self.block_flags(pbn))];
            if let Some(lipn) = self.lipn_of(pbn) {
                let Some(ppn) = self.ipt[lipn as usize] else {
                    return Err(format!("block {pbn}'s BIF is in LIPN {lipn}, which has no page"));
                };
                if let Some(logged) = self.images.get(&ppn.get()).and_then(|i| i.flags_of(pbn, self.words)) {
                    sources.push(("logged", logged));
                }
            }
            for (what, flags) in sources {
                for offset in 0..self.pages_per_block {
                    let ppn = g.page_at(pbn, offset);
                    if flags[offset as usize >> 6] & (1 << (offset & 63)) != 0 && !invalid(ppn) {
                        return Err(format!("ILog: PPN {ppn} is flagged invalid ({what}) but holds valid data"));
                    }
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for (lipn, ppn) in self.ipt.iter().enumerate() {
            let Some(ppn) = ppn else { continue };
            let image = self.images.get(&ppn.get()).ok_or(format!("LIPN {lipn} points at PPN {ppn}, no IP"))?;
            if image.lipn as usize != lipn || !seen.insert(ppn.get()) || !flash.is_programmed(*ppn) {
                return Err(format!("LIPN {lipn} points at PPN {ppn}, which holds LIPN {}", image.lipn));
            }
        }
        Ok(())
    }

    /// A flagged page in `flags` (from [`Ilog::victim_flags`] or [`Ilog::recovered_flags`]).
    #[inline]
    pub fn flagged(flags: &[u64], offset: u32) -> bool {
        flags[offset as usize >> 6] & (1 << (offset & 63)) != 0
    }

    /// An error for a flag on a valid page (the log must never claim a valid page invalid).
    pub fn false_flag(ppn: Ppn) -> SimError {
        SimError::Other(format!("ILog flags PPN {ppn} invalid, but it holds valid data"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ConfigBuilder};
    use crate::flash::PageKind;

    /// 1 plane of 16 blocks x 16 pages of 64 B: a BIF is 5 B, an IP holds 12, the queue 3, the
    /// log 2 IPs.
    fn small() -> Config {
        let mut b = ConfigBuilder::new();
        for s in [
            "device.geometry.planes_per_die=1",
            "device.geometry.blocks_per_plane=16",
            "device.geometry.pages_per_block=16",
            "device.geometry.page_size=64",
            "device.geometry.sector_size=64",
            "device.overprovisioning=0.5",
            "gc.validity=\"ilog\"",
            "gc.ilog_queue_bytes=15",
            "gc.ilog_pages=2",
        ] {
            b = b.set(s).unwrap();
        }
        b.build().unwrap()
    }

    fn log(c: &Config) -> Ilog {
        Ilog::new(&c.device.geometry, c.gc.ilog_queue_bytes, c.gc.ilog_pages)
    }

    /// Builds and commits the next IP at `ppn` (programmed on `flash`), returning the IPs read.
    fn write_back(log: &mut Ilog, flash: &mut FlashArray, ppn: u32) -> Vec<Ppn> {
        let mut reads = Vec::new();
        let page = log
            .build_page(|p| {
                reads.push(p);
                Ok(())
            })
            .unwrap();
        flash.program(Ppn::new(ppn), PageKind::InvalidationLog, page.lipn as u32, page.bsn_bound).unwrap();
        log.commit(Ppn::new(ppn), page);
        reads
    }

    #[test]
    fn the_papers_sizes_on_the_8gb_device() {
        let mut c = Config::preset("mlc8g").unwrap();
        c.gc.validity = crate::config::ValidityTracking::Ilog;
        c.validate().unwrap();
        let g = &c.device.geometry;
        let log = log(&c);
        // §8.1: a BIF is 35 B; 4,096 of them fit in 18 IPs; the 8 KB queue holds 234.
        assert_eq!(bif_bytes(g.pages_per_block), 35);
        assert_eq!(log.bifs_per_page(), 234);
        assert_eq!((g.total_blocks() as usize).div_ceil(log.bifs_per_page()), 18);
        assert_eq!(log.capacity(), 234);
        // 17 pages cannot hold every block's flags.
        c.gc.ilog_pages = 17;
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains("gc.ilog_pages") && err.contains("4096 blocks") && err.contains("234 per page"), "{err}");
    }

    #[test]
    fn invalidations_into_a_queue_with_room_cost_no_io_and_a_modified_head_one_write() {
        let c = small();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let mut log = log(&c);
        assert_eq!((log.capacity(), log.bifs_per_page()), (3, 12));
        // Three blocks fit: no write-back.
        for (pbn, offset) in [(0, 1), (1, 2), (2, 3), (0, 4)] {
            log.invalidate(Pbn::new(pbn), offset, false);
            assert!(!log.needs_write_back());
        }
        // A fourth block finds a modified head (block 1; block 0 moved to the tail when
        // modified again): the write-back rewrites LIPN 0 (never written, nothing to read) with
        // every modified BIF, each complete (no IP held its block), and reads nothing.
        log.invalidate(Pbn::new(3), 0, false);
        assert!(log.needs_write_back() && !log.drop_unmodified_head());
        assert!(write_back(&mut log, &mut flash, 15 * 16).is_empty());
        assert_eq!((log.stats.ip_reads, log.stats.ip_writes), (0, 1));
        let image = log.image(Ppn::new(15 * 16)).unwrap();
        assert_eq!((image.lipn, image.len()), (0, 4));
        assert_eq!(log.lipn_of(Pbn::new(0)), Some(0));
        // The head is unmodified now: it simply leaves.
        assert!(log.drop_unmodified_head() && !log.needs_write_back());
        assert_eq!(log.queued(), 3);
        assert_eq!(log.page_of(0), Some(Ppn::new(15 * 16)));
    }

    #[test]
    fn an_incomplete_bif_is_merged_with_its_ip_one_read_each_and_validation_reads_at_most_one() {
        let c = small();
        let mut flash = FlashArray::new(&c.device.geometry, c.device.program_order);
        let mut log = log(&c);
        // Blocks 0-3 logged into LIPN 0 at PPN 240.
        for pbn in 0..4 {
            log.invalidate(Pbn::new(pbn), 0, false);
        }
        write_back(&mut log, &mut flash, 240);
        while log.drop_unmodified_head() {}
        for pbn in 4..7 {
            log.invalidate(Pbn::new(pbn), 0, false);
        }
        // Blocks 0-2 have left the queue; block 1 comes back incomplete (its flag 0 is in LIPN 0).
        assert_eq!(log.queued(), 3);
        log.invalidate(Pbn::new(1), 5, false);
        assert!(log.needs_write_back());
        // Validation before the write-back: block 1's flags are the queue's merged with its IP,
        // one read; block 5's are complete in the queue, none.
        let mut reads = 0;
        let flags = log
            .victim_flags(Pbn::new(1), |_| {
                reads += 1;
                Ok(())
            })
            .unwrap();
        assert!(Ilog::flagged(&flags, 0) && Ilog::flagged(&flags, 5) && !Ilog::flagged(&flags, 1));
        log.return_scratch(flags);
        let flags = log
            .victim_flags(Pbn::new(5), |_| {
                reads += 1;
                Ok(())
            })
            .unwrap();
        assert!(Ilog::flagged(&flags, 0));
        log.return_scratch(flags);
        assert_eq!((reads, log.stats.validation_ip_reads), (1, 1));
        // The write-back rewrites LIPN 1 (unused: no read); block 1's BIF is incomplete, so
        // LIPN 0's page is read once to merge it: 1 + (incomplete modified BIFs) reads at most.
        let reads = write_back(&mut log, &mut flash, 241);
        assert_eq!(reads, [Ppn::new(240)]);
        assert_eq!(log.stats.ip_writes, 2);
        let image = log.image(Ppn::new(241)).unwrap();
        assert_eq!(image.lipn, 1);
        assert_eq!(log.lipn_of(Pbn::new(1)), Some(1));
        let merged = image.flags_of(Pbn::new(1), 1).unwrap();
        assert!(Ilog::flagged(merged, 0) && Ilog::flagged(merged, 5));
        // Rewriting LIPN 0 next carries over the BIFs it still holds (blocks 0, 2, 3; block 1's
        // copy there is stale): one read, the old page's.
        while log.drop_unmodified_head() {}
        log.invalidate(Pbn::new(8), 0, false);
        let reads = write_back(&mut log, &mut flash, 242);
        assert_eq!(reads, [Ppn::new(240)]);
        let image = log.image(Ppn::new(242)).unwrap();
        assert_eq!(image.lipn, 0);
        let mut carried = image.pbns.clone();
        carried.sort();
        assert_eq!(carried, [0, 2, 3, 8].map(Pbn::new));
    }

    #[test]
    fn a_wholly_invalid_block_leaves_the_queue_and_an_erase_forgets_its_bif() {
        let c = small();
        let g = c.device.geometry.clone();
        let mut log = log(&c);
        for offset in 0..15 {
            log.invalidate(Pbn::new(2), offset, false);
        }
        assert_eq!(log.queued(), 1);
        log.invalidate(Pbn::new(2), 15, true);
        assert_eq!(log.queued(), 0);
        log.invalidate(Pbn::new(3), 0, false);
        log.erased(Pbn::new(3), &g);
        assert_eq!((log.queued(), log.lipn_of(Pbn::new(3))), (0, None));
    }

    #[test]
    fn recovery_trusts_a_bif_only_for_a_block_opened_before_its_ip() {
        let c = small();
        let g = c.device.geometry.clone();
        let mut flash = FlashArray::new(&g, c.device.program_order);
        let mut log = log(&c);
        for pbn in [0, 1, 15] {
            log.opened(Pbn::new(pbn));
        }
        for pbn in 0..2 {
            flash.program(g.first_page(Pbn::new(pbn)), PageKind::Data, pbn, 1).unwrap();
            flash.program(g.first_page(Pbn::new(pbn)).offset(1), PageKind::Data, pbn + 10, 1).unwrap();
            log.invalidate(Pbn::new(pbn), 0, false);
        }
        log.invalidate(Pbn::new(2), 0, false);
        log.invalidate(Pbn::new(3), 0, false);
        write_back(&mut log, &mut flash, 240);
        // Block 1 is erased and opened again after the IP was written: its logged flag is stale.
        log.erased(Pbn::new(1), &g);
        flash.erase(Pbn::new(1)).unwrap();
        log.opened(Pbn::new(1));
        flash.program(g.first_page(Pbn::new(1)), PageKind::Data, 7, 2).unwrap();
        let mut reads = 0;
        log.recover(&flash, |_| {
            reads += 1;
            true
        });
        assert_eq!(reads, 1, "the one IP");
        assert_eq!(log.page_of(0), Some(Ppn::new(240)));
        assert_eq!(log.lipn_of(Pbn::new(0)), Some(0));
        assert_eq!(log.lipn_of(Pbn::new(1)), None, "opened after the IP");
        assert_eq!(log.lipn_of(Pbn::new(2)), None, "erased");
        assert_eq!(log.queued(), 0);
        let mut reads = 0;
        assert!(Ilog::flagged(log.recovered_flags(Pbn::new(0), |_| reads += 1), 0));
        assert!(!Ilog::flagged(log.recovered_flags(Pbn::new(1), |_| reads += 1), 0));
        assert_eq!(reads, 1);
    }
}
