//! Where the CMT's entries start: a bit per LPN marks the tags; a 64-LPN group's only tag keeps
//! its slot beside the bits, and a group of several tags keeps theirs in a block of 64 slot
//! numbers, taken while the group holds more than one tag.
//!
//! A flat table of one slot per LPN cost 4 bytes per logical page, most of what SCFTL held beyond
//! the other demand FTLs; a hash of the tags cost it about a quarter of its speed, since a lookup
//! goes from head bits to tags near the LPN, which a hash scatters. Here a lookup reads the
//! group's bits and, for a lone tag (random access), its slot from the same cache line; the tags
//! of a busy group (sequential runs) share a block, so their slots stay together as in the flat
//! table. Blocks in use are at most half the cache's entries.

use crate::flash::Lpn;

/// LPNs per group (the bits of one word).
const GROUP: usize = 64;

#[derive(Clone, Copy, Default)]
struct Group {
    /// Bit `i`: LPN `64 * group + i` is a tag.
    heads: u64,
    /// One tag: its slot. Several: the block of their slots.
    value: u32,
}

pub struct TagIndex {
    groups: Vec<Group>,
    /// Blocks of [`GROUP`] slots; a slot is meaningful where its LPN's head bit is set in a group
    /// of several tags.
    slots: Vec<u32>,
    free_blocks: Vec<u32>,
}

impl TagIndex {
    pub fn new(logical_pages: usize) -> Self {
        TagIndex {
            groups: crate::mem::filled_vec(logical_pages.div_ceil(GROUP), Group::default()),
            slots: Vec::new(),
            free_blocks: Vec::new(),
        }
    }

    #[inline]
    pub fn is_head(&self, lpn: Lpn) -> bool {
        self.groups[lpn.index() / GROUP].heads & (1 << (lpn.index() % GROUP)) != 0
    }

    /// The slot of the entry whose tag is `head` (a head).
    #[inline]
    pub fn slot(&self, head: Lpn) -> u32 {
        let group = self.groups[head.index() / GROUP];
        if lone(group.heads) {
            group.value
        } else {
            self.slots[group.value as usize * GROUP + head.index() % GROUP]
        }
    }

    #[inline]
    pub fn at_head(&self, lpn: Lpn) -> Option<u32> {
        self.is_head(lpn).then(|| self.slot(lpn))
    }

    /// The highest head in `lo..=lpn`.
    #[inline]
    pub fn head_at_or_before(&self, lpn: Lpn, lo: Lpn) -> Option<Lpn> {
        let mut g = lpn.index() / GROUP;
        let mut word = self.groups[g].heads & (u64::MAX >> (63 - lpn.index() % GROUP));
        loop {
            if word != 0 {
                let head = Lpn::new((g * GROUP) as u32 + 63 - word.leading_zeros());
                return (head >= lo).then_some(head);
            }
            if g == 0 || g * GROUP <= lo.index() {
                return None;
            }
            g -= 1;
            word = self.groups[g].heads;
        }
    }

    /// The lowest head in `lpn + 1..limit`, or `limit` if there is none.
    #[inline]
    pub fn next_head_after(&self, lpn: Lpn, limit: Lpn) -> Lpn {
        let mut from = lpn.index() + 1;
        while from < limit.index() {
            let word = self.groups[from / GROUP].heads >> (from % GROUP);
            if word != 0 {
                return Lpn::new((from + word.trailing_zeros() as usize).min(limit.index()) as u32);
            }
            from = (from / GROUP + 1) * GROUP;
        }
        limit
    }

    /// Makes `lpn` (not a tag) a tag, its entry in `slot`.
    #[inline]
    pub fn set(&mut self, lpn: Lpn, slot: u32) {
        let group = &mut self.groups[lpn.index() / GROUP];
        let heads = group.heads;
        group.heads = heads | 1 << (lpn.index() % GROUP);
        if heads == 0 {
            group.value = slot;
        } else if lone(heads) {
            self.pair(lpn, slot);
        } else {
            self.slots[group.value as usize * GROUP + lpn.index() % GROUP] = slot;
        }
    }

    /// The group of `lpn` took its second tag, `lpn`: both slots move to a block.
    #[cold]
    fn pair(&mut self, lpn: Lpn, slot: u32) {
        let g = lpn.index() / GROUP;
        let block = self.take_block();
        let Group { heads, value } = self.groups[g];
        let first = (heads & !(1 << (lpn.index() % GROUP))).trailing_zeros() as usize;
        self.slots[block as usize * GROUP + first] = value;
        self.slots[block as usize * GROUP + lpn.index() % GROUP] = slot;
        self.groups[g].value = block;
    }

    /// `lpn` is a tag no more.
    #[inline]
    pub fn clear(&mut self, lpn: Lpn) {
        debug_assert!(self.is_head(lpn), "LPN {lpn} is not a tag");
        let group = &mut self.groups[lpn.index() / GROUP];
        group.heads &= !(1 << (lpn.index() % GROUP));
        // One tag left (of two): its slot moves back beside the bits, the block is free.
        if lone(group.heads) {
            self.unpair(lpn.index() / GROUP);
        }
    }

    #[cold]
    fn unpair(&mut self, g: usize) {
        let group = &mut self.groups[g];
        let block = group.value;
        group.value = self.slots[block as usize * GROUP + group.heads.trailing_zeros() as usize];
        self.free_blocks.push(block);
    }

    fn take_block(&mut self) -> u32 {
        self.free_blocks.pop().unwrap_or_else(|| {
            self.slots.resize(self.slots.len() + GROUP, 0);
            (self.slots.len() / GROUP - 1) as u32
        })
    }

    /// No tag anywhere; the blocks stay allocated, free.
    pub fn clear_all(&mut self) {
        self.groups.fill(Group::default());
        self.free_blocks = (0..(self.slots.len() / GROUP) as u32).rev().collect();
    }

    /// Brings the group of `lpn` toward the CPU cache (a hint; nothing is loaded).
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        if let Some(group) = self.groups.get(lpn.index() / GROUP) {
            crate::mem::prefetch(group);
        }
    }

    /// Tags in all.
    pub fn count(&self) -> u32 {
        self.groups.iter().map(|g| g.heads.count_ones()).sum()
    }

    /// Simulator memory.
    pub fn memory_bytes(&self) -> usize {
        self.groups.len() * std::mem::size_of::<Group>() + self.slots.capacity() * 4 + self.free_blocks.capacity() * 4
    }
}

/// Whether a group with these bits has exactly one tag.
#[inline]
fn lone(heads: u64) -> bool {
    heads != 0 && heads & (heads - 1) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_of_several_tags_keeps_their_slots_in_a_block_and_a_lone_tag_beside_the_bits() {
        let mut tags = TagIndex::new(300);
        let at = |tags: &TagIndex, lpns: &[u32]| lpns.iter().map(|&l| tags.at_head(Lpn::new(l))).collect::<Vec<_>>();
        tags.set(Lpn::new(70), 5);
        tags.set(Lpn::new(3), 7);
        assert_eq!((at(&tags, &[70, 3, 71]), tags.slots.len()), (vec![Some(5), Some(7), None], 0));
        tags.set(Lpn::new(127), 6);
        tags.set(Lpn::new(100), 9);
        assert_eq!((at(&tags, &[70, 127, 100]), tags.slots.len()), (vec![Some(5), Some(6), Some(9)], GROUP));
        assert_eq!(tags.head_at_or_before(Lpn::new(126), Lpn::new(0)), Some(Lpn::new(100)));
        assert_eq!(tags.head_at_or_before(Lpn::new(69), Lpn::new(0)), Some(Lpn::new(3)));
        assert_eq!(tags.head_at_or_before(Lpn::new(69), Lpn::new(4)), None);
        assert_eq!(tags.next_head_after(Lpn::new(3), Lpn::new(300)), Lpn::new(70));
        assert_eq!(tags.next_head_after(Lpn::new(70), Lpn::new(127)), Lpn::new(100));
        assert_eq!(tags.next_head_after(Lpn::new(100), Lpn::new(120)), Lpn::new(120), "none before the limit");
        assert_eq!(tags.next_head_after(Lpn::new(127), Lpn::new(300)), Lpn::new(300));
        tags.clear(Lpn::new(70));
        assert_eq!((at(&tags, &[127, 100]), tags.free_blocks.len()), (vec![Some(6), Some(9)], 0));
        tags.clear(Lpn::new(127));
        assert_eq!((at(&tags, &[100]), tags.free_blocks.len()), (vec![Some(9)], 1), "one tag left: block freed");
        tags.set(Lpn::new(260), 8);
        tags.set(Lpn::new(259), 4);
        assert_eq!(
            (at(&tags, &[260, 259, 100, 3]), tags.slots.len()),
            (vec![Some(8), Some(4), Some(9), Some(7)], GROUP)
        );
        assert_eq!(tags.count(), 4);
        tags.clear_all();
        assert_eq!((tags.count(), tags.free_blocks.len()), (0, 1));
    }
}
