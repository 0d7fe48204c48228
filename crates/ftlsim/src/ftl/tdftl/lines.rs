//! 3DFTL's cached mapping table (paper 000 §6.1.3): one line per GTD group, in LRU order,
//! write-through (a line never holds a change flash does not have, so eviction writes nothing).
//!
//! A line holds its group's LTD entries and the PMT entries of its *present* subgroups; an
//! absent subgroup is known only by its LTD entry. The small per-group state (present mask, LTD
//! entries) sits in flat arrays indexed by group, meaningful only while the group is cached; the
//! PMT entries sit in one slot per line, so they cost memory per cached line, not per LPN.
//!
//! Each slot also keeps the encoder's [`IndexIds`] of its line, updated entry by entry as host
//! writes and GC moves change the line. A line filled or merged from a compressed image takes
//! the ids the decoder found; one filled or merged from an uncompressed image gets them rebuilt
//! when it is next encoded in a format that uses them (a read miss may never need them, nor a
//! line whose only present subgroup is the written page's: its image is uncompressed).

use super::format::{with_split, Content, ContentRef, Positions, Split, MAX_SUBGROUPS};
use super::ids::IndexIds;
use crate::flash::{Lpn, Ppn};
use crate::ftl::common::ListSet;

pub struct Lines {
    /// The cached groups in LRU order, each with the slot of `entries` holding its PMT entries.
    lru: ListSet<u32>,
    /// Slots of `entries` no line holds.
    free: Vec<u32>,
    capacity: u32,
    split: Split,
    group_size: usize,
    /// Per group: bit `s` set when subgroup `s`'s PMT entries are cached.
    present: Vec<u8>,
    /// Per group: the LTD entry of each subgroup (its newest page).
    ltd: Vec<[Option<Ppn>; MAX_SUBGROUPS]>,
    /// Per slot, `group_size` PMT entries.
    entries: Vec<Option<Ppn>>,
    /// Per slot, the ids of its line's entries, meaningful when `fresh`.
    ids: Vec<IndexIds>,
    fresh: Vec<bool>,
}

impl Lines {
    pub fn new(groups: u32, split: Split, capacity: u32) -> Self {
        let capacity = capacity.max(1).min(groups.max(1));
        let group_size = split.group_size() as usize;
        let empty = IndexIds::new(&split, &vec![None; group_size], &[None; MAX_SUBGROUPS][..split.subgroups()]);
        Lines {
            lru: ListSet::new(groups as usize, 1),
            free: (0..capacity).rev().collect(),
            capacity,
            split,
            group_size,
            present: vec![0; groups as usize],
            ltd: vec![[None; MAX_SUBGROUPS]; groups as usize],
            entries: vec![None; capacity as usize * group_size],
            ids: vec![empty; capacity as usize],
            fresh: vec![false; capacity as usize],
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
        self.free.push(*self.lru.payload(victim));
        true
    }

    /// Caches a line for `group` from the metadata of its newest page (decoded, with the index
    /// positions of a compressed image): its LTD entries, the PMT entries it includes, and every subgroup
    /// with no LTD entry (it maps nothing) as present. The entries of the other subgroups are
    /// unmapped in `content`, and kept so (they are not read until a merge replaces them).
    pub fn insert(&mut self, group: u32, content: &Content, positions: Option<&Positions>) {
        self.lru.push_front(0, group);
        let slot = self.free.pop().expect("room was made for the line");
        *self.lru.payload_mut(group) = slot;
        let g = group as usize;
        self.ltd[g] = content.ltd;
        self.present[g] = (0..self.split.subgroups())
            .filter(|&s| content.includes(s) || content.ltd[s].is_none())
            .fold(0, |m, s| m | 1 << s);
        let first = self.first(group);
        self.entries[first..first + self.group_size].copy_from_slice(&content.entries[..self.group_size]);
        let slot = slot as usize;
        let ids = &mut self.ids[slot];
        self.fresh[slot] = positions.is_some_and(|at| with_split!(self.split, |split| ids.set_positions(split, at)));
    }

    /// Merges subgroup `sub` of a page's metadata (decoded, with the index positions of a
    /// compressed image) into a cached line.
    pub fn take(&mut self, group: u32, sub: usize, content: &Content, positions: Option<&Positions>) {
        let slots = self.split.slots();
        let first = self.first(group) + sub * slots;
        self.entries[first..first + slots].copy_from_slice(&content.entries[sub * slots..(sub + 1) * slots]);
        self.present[group as usize] |= 1 << sub;
        let slot = self.slot(group);
        match positions {
            Some(at) if self.fresh[slot] => {
                let ids = &mut self.ids[slot];
                with_split!(self.split, |split| ids.take(split, sub, at))
            }
            _ => self.fresh[slot] = false,
        }
    }

    /// The slot of cached `group`.
    #[inline]
    fn slot(&self, group: u32) -> usize {
        debug_assert!(self.contains(group), "group {group} is not cached");
        *self.lru.payload(group) as usize
    }
    /// Where the PMT entries of cached `group` start in `entries`.
    #[inline]
    fn first(&self, group: u32) -> usize {
        self.slot(group) * self.group_size
    }
    #[inline]
    fn at(&self, lpn: Lpn) -> usize {
        // Groups are a power of two LPNs.
        let group = lpn.get() >> self.group_size.trailing_zeros();
        self.first(group) + (lpn.index() & (self.group_size - 1))
    }

    /// The PMT entry of `lpn`, whose line is cached.
    #[inline]
    pub fn entry(&self, lpn: Lpn) -> Option<Ppn> {
        self.entries[self.at(lpn)]
    }
    #[inline]
    pub fn set(&mut self, lpn: Lpn, ppn: Option<Ppn>) {
        let at = self.at(lpn);
        self.entries[at] = ppn;
        let slot = at / self.group_size;
        if self.fresh[slot] {
            let (ids, i) = (&mut self.ids[slot], at % self.group_size);
            with_split!(self.split, |split| ids.set_entry(split, i, ppn));
        }
    }

    /// The LTD entry of subgroup `sub` of `group` (cached).
    #[inline]
    pub fn ltd(&self, group: u32, sub: usize) -> Option<Ppn> {
        self.ltd[group as usize][sub]
    }
    #[inline]
    pub fn set_ltd(&mut self, group: u32, sub: usize, ppn: Option<Ppn>) {
        self.ltd[group as usize][sub] = ppn;
        let slot = self.slot(group);
        if self.fresh[slot] {
            let ids = &mut self.ids[slot];
            with_split!(self.split, |split| ids.set_ltd(split, sub, ppn));
        }
    }

    /// The line of `group` as metadata for a page of LPN `lpn`, borrowed, and, if `with_ids`, the
    /// encoder's ids of its entries (rebuilt if the line changed wholesale).
    pub fn encoding(&mut self, group: u32, lpn: Lpn, with_ids: bool) -> (ContentRef<'_>, Option<&IndexIds>) {
        let (slot, first) = (self.slot(group), self.first(group));
        let (g, entries) = (group as usize, first..first + self.group_size);
        if with_ids && !self.fresh[slot] {
            let ltd = &self.ltd[g][..self.split.subgroups()];
            // Absent subgroups map nothing in the line (their entries are unmapped).
            self.ids[slot].rebuild(&self.split, &self.entries[entries.clone()], ltd, self.present[g]);
            self.fresh[slot] = true;
        }
        let content = ContentRef {
            lpn: lpn.get(),
            included: self.present[g],
            ltd: &self.ltd[g],
            entries: &self.entries[entries],
        };
        (content, with_ids.then_some(&self.ids[slot]))
    }

    /// Whether the kept ids of every cached line agree with its entries (for invariant checks).
    pub fn ids_agree(&self) -> bool {
        self.groups().all(|group| {
            let (slot, first) = (self.slot(group), self.first(group));
            let ltd = &self.ltd[group as usize][..self.split.subgroups()];
            !self.fresh[slot] || self.ids[slot].agrees(&self.split, &self.entries[first..first + self.group_size], ltd)
        })
    }

    /// The cached groups, least recently used first.
    pub fn groups(&self) -> impl Iterator<Item = u32> + '_ {
        self.lru.iter_from_back(0)
    }

    /// Forgets every line (power loss, or cold caches after preconditioning).
    pub fn clear(&mut self) {
        self.lru.clear();
        self.free = (0..self.capacity).rev().collect();
    }

    pub fn memory_bytes(&self) -> usize {
        self.lru.memory_bytes()
            + self.free.capacity() * 4
            + self.present.len() * (1 + MAX_SUBGROUPS * 4)
            + self.entries.len() * 4
            + self.ids.len() * (std::mem::size_of::<IndexIds>() + 1)
    }
}
