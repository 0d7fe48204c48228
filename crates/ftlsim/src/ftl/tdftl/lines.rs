//! 3DFTL's cached mapping table (paper 000 §6.1.3): one line per GTD group, in LRU order,
//! write-through (a line never holds a change flash does not have, so eviction writes nothing).
//!
//! A line holds its group's LTD entries and the PMT entries of its *present* subgroups; an
//! absent subgroup is known only by its LTD entry. The small per-group state (present mask, LTD
//! entries) sits in flat arrays indexed by group, meaningful only while the group is cached; the
//! PMT entries sit in one slot per line, so they cost memory per cached line, not per LPN.

use super::format::{Content, MAX_SUBGROUPS};
use crate::flash::{Lpn, Ppn};
use crate::ftl::common::ListSet;

pub struct Lines {
    /// The cached groups in LRU order, each with the slot of `entries` holding its PMT entries.
    lru: ListSet<u32>,
    /// Slots of `entries` no line holds.
    free: Vec<u32>,
    capacity: u32,
    group_size: usize,
    /// Per group: bit `s` set when subgroup `s`'s PMT entries are cached.
    present: Vec<u8>,
    /// Per group: the LTD entry of each subgroup (its newest page).
    pub ltd: Vec<[Option<Ppn>; MAX_SUBGROUPS]>,
    /// Per slot, `group_size` PMT entries.
    entries: Vec<Option<Ppn>>,
}

impl Lines {
    pub fn new(groups: u32, group_size: u32, capacity: u32) -> Self {
        let capacity = capacity.max(1).min(groups.max(1));
        Lines {
            lru: ListSet::new(groups as usize, 1),
            free: (0..capacity).rev().collect(),
            capacity,
            group_size: group_size as usize,
            present: vec![0; groups as usize],
            ltd: vec![[None; MAX_SUBGROUPS]; groups as usize],
            entries: vec![None; capacity as usize * group_size as usize],
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

    /// Caches a line for `group` from the metadata of its newest page: its LTD entries, the
    /// PMT entries it includes, and every subgroup with no LTD entry (it maps nothing) as present.
    pub fn insert(&mut self, group: u32, content: &Content, subgroups: usize) {
        self.lru.push_front(0, group);
        *self.lru.payload_mut(group) = self.free.pop().expect("room was made for the line");
        let g = group as usize;
        self.present[g] = 0;
        self.ltd[g] = content.ltd;
        let slots = self.group_size / subgroups;
        for sub in 0..subgroups {
            if content.includes(sub) || content.ltd[sub].is_none() {
                self.take(group, sub, slots, content);
            }
        }
    }

    /// Merges subgroup `sub` of a page's metadata into a cached line.
    pub fn take(&mut self, group: u32, sub: usize, slots: usize, content: &Content) {
        let first = self.first(group) + sub * slots;
        self.entries[first..first + slots].copy_from_slice(&content.entries[sub * slots..(sub + 1) * slots]);
        self.present[group as usize] |= 1 << sub;
    }

    /// Where the PMT entries of cached `group` start in `entries`.
    #[inline]
    fn first(&self, group: u32) -> usize {
        debug_assert!(self.contains(group), "group {group} is not cached");
        *self.lru.payload(group) as usize * self.group_size
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
    }

    /// The line of `group` as metadata for a page of LPN `lpn`.
    pub fn content(&self, group: u32, lpn: Lpn) -> Content {
        let g = group as usize;
        let mut content = Content { lpn: lpn.get(), included: self.present[g], ltd: self.ltd[g], ..Content::EMPTY };
        let first = self.first(group);
        content.entries[..self.group_size].copy_from_slice(&self.entries[first..first + self.group_size]);
        content
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
    }
}
