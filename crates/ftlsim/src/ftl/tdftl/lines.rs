//! 3DFTL's cached mapping table (paper 000 §6.1.3): one line per GTD group, in LRU order,
//! write-through (a line never holds a change flash does not have, so eviction writes nothing).
//!
//! A line holds its group's LTD entries and the PMT entries of its *present* subgroups; an
//! absent subgroup is known only by its LTD entry. Which groups are cached (the LRU list) and
//! which of their subgroups are present is the modelled cache.
//!
//! The entries themselves, with the encoder's [`IndexIds`], are kept for every group, cached or
//! not: since every mapping change is programmed with its line cached, a group's kept entries
//! are what its newest pages say, so a miss makes present what the image it reads holds (that
//! read is counted as before) without decoding it, and the ids need no rebuild. Absent
//! subgroups' entries are kept too; the encoder never reads them (it includes present subgroups
//! only) and their ids are labels it only counts over included subgroups.

use super::format::{with_split, Content, ContentRef, Split, MAX_ENTRIES, MAX_SUBGROUPS};
use super::ids::IndexIds;
use crate::flash::{Lpn, Ppn};
use crate::ftl::common::ListSet;

/// A group's PMT entries (`subgroup * slots + slot`) and their ids, side by side and from a
/// cache line's start so an encode touches few lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Kept {
    entries: [Option<Ppn>; MAX_ENTRIES],
    ids: IndexIds,
}

pub struct Lines {
    /// The cached groups in LRU order.
    lru: ListSet,
    capacity: u32,
    split: Split,
    /// Per group: bit `s` set when subgroup `s`'s PMT entries are cached.
    present: Vec<u8>,
    /// Per group: the subgroups whose PMT entries its newest page's image holds (what a miss at
    /// the GTD level brings in).
    newest_holds: Vec<u8>,
    /// Per group: the LTD entry of each subgroup (its newest page).
    ltd: Vec<[Option<Ppn>; MAX_SUBGROUPS]>,
    /// Per group: its PMT entries and their ids.
    kept: Vec<Kept>,
}

impl Lines {
    /// Lines for `groups` groups mapping nothing, `capacity` of them cached at a time.
    pub fn new(groups: u32, split: Split, capacity: u32) -> Self {
        let entries = [None; MAX_ENTRIES];
        let empty = Kept {
            entries,
            ids: IndexIds::new(
                &split,
                &entries[..split.group_size() as usize],
                &[None; MAX_SUBGROUPS][..split.subgroups()],
            ),
        };
        Lines {
            lru: ListSet::new(groups as usize, 1),
            capacity: capacity.max(1).min(groups.max(1)),
            split,
            present: vec![0; groups as usize],
            newest_holds: vec![0; groups as usize],
            ltd: vec![[None; MAX_SUBGROUPS]; groups as usize],
            kept: crate::mem::filled_vec(groups as usize, empty),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    pub fn len(&self) -> u32 {
        self.lru.len(0)
    }
    #[inline]
    pub fn contains(&self, group: u32) -> bool {
        self.lru.list_of(group).is_some()
    }
    #[inline]
    pub fn present(&self, group: u32) -> u8 {
        self.present[group as usize]
    }

    /// Makes a cached line most recently used.
    #[inline]
    pub fn touch(&mut self, group: u32) {
        self.lru.move_to_front(0, group);
    }

    /// Drops the least recently used line if the cache is full; returns whether it did.
    pub fn make_room(&mut self) -> bool {
        if self.len() < self.capacity {
            return false;
        }
        let victim = self.lru.back(0).expect("a full cache has a victim");
        self.lru.remove(victim);
        true
    }

    /// Caches the line of `group` as its newest page's metadata gives it: the PMT entries that
    /// image holds, and every subgroup with no LTD entry (it maps nothing) as present.
    pub fn insert(&mut self, group: u32) {
        self.lru.push_front(0, group);
        let g = group as usize;
        let unmapped = (0..self.split.subgroups()).filter(|&s| self.ltd[g][s].is_none()).fold(0, |m, s| m | 1 << s);
        self.present[g] = self.newest_holds[g] | unmapped;
    }

    /// Makes subgroup `sub` of a cached line present (merged from a page that is still its
    /// newest, whose entries are the kept ones).
    pub fn take(&mut self, group: u32, sub: usize) {
        self.present[group as usize] |= 1 << sub;
    }

    /// Whether a decoded page of `group` holds the kept entries of subgroup `sub` (for debug
    /// checks that skipping the decode changes nothing).
    pub fn holds(&self, group: u32, sub: usize, content: &Content) -> bool {
        let slots = self.split.slots();
        let range = sub * slots..(sub + 1) * slots;
        self.kept[group as usize].entries[range.clone()] == content.entries[range]
    }

    /// Whether the decoded metadata of `group`'s newest page is what the line keeps: its LTD
    /// entries, the subgroups it holds and their entries.
    pub fn is_newest(&self, group: u32, content: &Content) -> bool {
        let g = group as usize;
        self.ltd[g] == content.ltd
            && self.newest_holds[g] == content.included
            && (0..self.split.subgroups()).filter(|&s| content.includes(s)).all(|s| self.holds(group, s, content))
    }

    /// Sets every kept field of `group` from its newest page's metadata and, for the subgroups
    /// it does not hold, their newest pages' (after recovery, when the kept copy is void).
    pub fn load(&mut self, group: u32, newest: &Content, entries: &[Option<Ppn>; MAX_ENTRIES]) {
        let g = group as usize;
        (self.ltd[g], self.newest_holds[g]) = (newest.ltd, newest.included);
        let kept = &mut self.kept[g];
        kept.entries = *entries;
        kept.ids = IndexIds::new(
            &self.split,
            &entries[..self.split.group_size() as usize],
            &newest.ltd[..self.split.subgroups()],
        );
    }

    /// The page a miss of subgroup `sub` of `group` reads at the LTD level when its line is
    /// filled from the group's newest page, if any (that page does not hold the subgroup).
    #[inline]
    pub fn ltd_read_on_miss(&self, group: u32, sub: usize) -> Option<Ppn> {
        let g = group as usize;
        if self.newest_holds[g] & (1 << sub) != 0 {
            return None;
        }
        self.ltd[g][sub]
    }

    /// Records which subgroups the image just programmed for `group` holds.
    #[inline]
    pub fn set_newest_holds(&mut self, group: u32, included: u8) {
        self.newest_holds[group as usize] = included;
    }

    #[inline]
    fn group_of(&self, lpn: Lpn) -> u32 {
        self.split.group_of(lpn.get())
    }

    /// The PMT entry of `lpn`, whose line is cached with its subgroup present.
    #[inline]
    pub fn entry(&self, lpn: Lpn) -> Option<Ppn> {
        let group = self.group_of(lpn);
        debug_assert!(self.present(group) & (1 << self.split.subgroup_of(lpn.get())) != 0, "LPN {lpn} is not cached");
        self.kept[group as usize].entries[self.split.entry_of(lpn.get())]
    }
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>) {
        let (group, i) = (self.group_of(lpn), self.split.entry_of(lpn.get()));
        debug_assert!(self.contains(group), "group {group} is not cached");
        let kept = &mut self.kept[group as usize];
        kept.entries[i] = ppn;
        with_split!(self.split, |split| kept.ids.set_entry(split, i, ppn));
    }

    /// The LTD entry of subgroup `sub` of `group` (cached).
    #[inline]
    pub fn ltd(&self, group: u32, sub: usize) -> Option<Ppn> {
        self.ltd[group as usize][sub]
    }
    #[inline]
    pub fn set_ltd(&mut self, group: u32, sub: usize, ppn: Option<Ppn>) {
        debug_assert!(self.contains(group), "group {group} is not cached");
        self.ltd[group as usize][sub] = ppn;
        let ids = &mut self.kept[group as usize].ids;
        with_split!(self.split, |split| ids.set_ltd(split, sub, ppn));
    }

    /// The line of `group` as metadata for a page of LPN `lpn`, borrowed, with the encoder's ids
    /// of its entries.
    pub fn encoding(&self, group: u32, lpn: Lpn) -> (ContentRef<'_>, &IndexIds) {
        let g = group as usize;
        let kept = &self.kept[g];
        let content =
            ContentRef { lpn: lpn.get(), included: self.present[g], ltd: &self.ltd[g], entries: &kept.entries };
        (content, &kept.ids)
    }

    /// Brings what encoding a page of `group` reads into the CPU cache (GC moves pages a few
    /// at a time ahead of this).
    #[inline]
    pub fn prefetch(&self, group: u32) {
        let kept = &self.kept[group as usize];
        // 16 entries to a cache line.
        for entry in kept.entries.iter().step_by(16) {
            crate::mem::prefetch(entry);
        }
        kept.ids.prefetch();
        crate::mem::prefetch(&self.ltd[group as usize]);
    }

    /// Whether the kept ids of every cached line agree with its entries (for invariant checks).
    pub fn ids_agree(&self) -> bool {
        self.groups().all(|group| {
            let (g, n) = (group as usize, self.split.group_size() as usize);
            let kept = &self.kept[g];
            kept.ids.agrees(&self.split, &kept.entries[..n], &self.ltd[g][..self.split.subgroups()])
        })
    }

    /// The cached groups, least recently used first.
    pub fn groups(&self) -> impl Iterator<Item = u32> + '_ {
        self.lru.iter_from_back(0)
    }

    /// Forgets every line (power loss, or cold caches after preconditioning); the kept entries
    /// stay what flash says.
    pub fn clear(&mut self) {
        self.lru.clear();
    }

    pub fn memory_bytes(&self) -> usize {
        self.lru.memory_bytes()
            + self.present.len() * (2 + MAX_SUBGROUPS * 4)
            + self.kept.len() * std::mem::size_of::<Kept>()
    }
}
