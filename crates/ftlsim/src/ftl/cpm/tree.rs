//! A max tree over clusters: every cluster has a key (0: not a candidate); the cluster with the
//! largest key, ties to the lowest number, is known at once, and a key changes in O(log n). CPM
//! picks the victim cluster of InterGC (maximum CIC) and K-CPM its new distributed clusters (most
//! free pages, most room) without scanning the clusters.
//!
//! The same over each cluster's blocks: IntraGC's victim block in a cluster without scanning its
//! row.

/// A max tree laid out in `keys`: `2 n` keys for `n` entries (a power of two), index 0 unused,
/// the root at 1 and entry `i`'s leaf at `n + i`, each node the largest key below it. Non-zero
/// keys are unique, so the root's key leads down to the one leaf that holds it; 0 is no
/// candidate.
#[inline]
fn set_leaf(keys: &mut [u64], entry: usize, key: u64) {
    let mut i = keys.len() / 2 + entry;
    keys[i] = key;
    while i > 1 {
        i /= 2;
        let larger = keys[2 * i].max(keys[2 * i + 1]);
        // Nodes above an unchanged one are unchanged: most changes stop low in the tree.
        if keys[i] == larger {
            break;
        }
        keys[i] = larger;
    }
}

/// The entry holding the largest key of the tree in `keys` (see [`set_leaf`]), if it is not 0.
#[inline]
fn top_entry(keys: &[u64]) -> Option<usize> {
    let (n, best) = (keys.len() / 2, keys[1]);
    if best == 0 {
        return None;
    }
    let mut i = 1;
    while i < n {
        i = if keys[2 * i] == best { 2 * i } else { 2 * i + 1 };
    }
    Some(i - n)
}

pub(super) struct MaxTree {
    /// Leaves start here (a power of two).
    leaves: usize,
    /// The tree's keys ([`set_leaf`]): a cluster's key above its complement, so that equal keys
    /// go to the lower cluster.
    keys: Vec<u64>,
}

impl MaxTree {
    pub fn new(clusters: u32) -> Self {
        let leaves = (clusters as usize).next_power_of_two().max(1);
        MaxTree { leaves, keys: vec![0; 2 * leaves] }
    }

    #[inline]
    pub fn key(&self, cluster: u32) -> u32 {
        (self.keys[self.leaves + cluster as usize] >> 32) as u32
    }

    #[inline]
    pub fn set(&mut self, cluster: u32, key: u32) {
        let stored = if key == 0 { 0 } else { (key as u64) << 32 | (u32::MAX - cluster) as u64 };
        if self.keys[self.leaves + cluster as usize] != stored {
            set_leaf(&mut self.keys, cluster as usize, stored);
        }
    }

    /// The cluster with the largest non-zero key (the lowest-numbered among equals).
    #[inline]
    pub fn top(&self) -> Option<u32> {
        top_entry(&self.keys).map(|c| c as u32)
    }

    /// The best cluster outside `excluded` (which are left as they were).
    pub fn top_excluding(&mut self, excluded: &[u32]) -> Option<u32> {
        let saved: Vec<(u32, u32)> = excluded.iter().map(|&c| (c, self.key(c))).collect();
        for &(c, _) in &saved {
            self.set(c, 0);
        }
        let top = self.top();
        for &(c, key) in saved.iter().rev() {
            self.set(c, key);
        }
        top
    }

    pub fn memory_bytes(&self) -> usize {
        self.keys.len() * 8
    }
}

/// An empty slot.
const NO_BLOCK: u32 = u32::MAX;

/// One small max tree per cluster over the blocks it holds, each block in a slot of its cluster:
/// IntraGC's victim in a cluster (the full block with the most invalid pages, ties to the block
/// the cluster got first) is found from the root of that cluster's tree in O(log N_Bmax), and a
/// block's key changes in O(log N_Bmax). Blocks whose key changed wait in their cluster's pending
/// list until the cluster settles them (`Clusters::settle`, before its victim is read). A slot
/// freed by a block leaving is refilled by the cluster's last slot, so a cluster's blocks fill
/// its first slots; the trees double when a cluster needs more.
pub(super) struct BlockTrees {
    /// Slots per cluster (a power of two).
    cap: usize,
    /// Per cluster, its tree of `2 cap` keys ([`set_leaf`]; entry `s` is slot `s`).
    key: Vec<u64>,
    /// Per cluster, the block in each of its `cap` slots.
    held: Vec<u32>,
    /// Per cluster: slots in use.
    used: Vec<u32>,
    /// Per block: its slot in its cluster's tree.
    slot: Vec<u32>,
    /// Per cluster, `cap` places for blocks whose new key its tree has not yet taken.
    pending: Vec<u32>,
    /// Per cluster: blocks in its pending list.
    pending_len: Vec<u32>,
}

/// A block's key: 0 unless it is a victim candidate (full, with an invalid page); otherwise its
/// invalid pages, then the earlier of two equal blocks (`order`: when its cluster got it).
#[inline]
pub(super) fn block_key(full: bool, invalid: u32, order: u32) -> u64 {
    if full && invalid > 0 {
        (invalid as u64) << 32 | (u32::MAX - order) as u64
    } else {
        0
    }
}

impl BlockTrees {
    pub fn new(clusters: u32, max_blocks: u32, blocks: u32) -> Self {
        // IntraGC and InterGC hand a cluster its GC block before taking its victims: N_Bmax + 1.
        let cap = (max_blocks as usize + 1).next_power_of_two();
        BlockTrees::with_cap(clusters as usize, cap, vec![0; blocks as usize])
    }

    fn with_cap(clusters: usize, cap: usize, slot: Vec<u32>) -> Self {
        BlockTrees {
            cap,
            key: vec![0; clusters * 2 * cap],
            held: vec![NO_BLOCK; clusters * cap],
            used: vec![0; clusters],
            slot,
            pending: vec![NO_BLOCK; clusters * cap],
            pending_len: vec![0; clusters],
        }
    }

    /// Cluster `c`'s candidate with the largest key, if it has one.
    pub fn top(&self, c: u32) -> Option<u32> {
        top_entry(self.keys_of(c)).map(|s| self.held(c, s as u32))
    }

    /// Lists `pbn`, a block of cluster `c` not yet listed, as waiting to be keyed (a cluster
    /// lists at most the blocks it holds).
    #[inline]
    pub fn push_pending(&mut self, c: u32, pbn: u32) {
        let len = self.pending_len[c as usize];
        debug_assert!(len < self.used[c as usize]);
        self.pending[c as usize * self.cap + len as usize] = pbn;
        self.pending_len[c as usize] = len + 1;
    }

    /// A block of cluster `c` waiting to be keyed, taken off its list.
    #[inline]
    pub fn pop_pending(&mut self, c: u32) -> Option<u32> {
        let len = self.pending_len[c as usize].checked_sub(1)?;
        self.pending_len[c as usize] = len;
        Some(self.pending[c as usize * self.cap + len as usize])
    }

    /// Puts `pbn` into the next slot of cluster `c`.
    pub fn insert(&mut self, c: u32, pbn: u32, key: u64) {
        if self.used[c as usize] as usize == self.cap {
            self.grow();
        }
        let s = self.used[c as usize];
        self.used[c as usize] += 1;
        self.put(c, s, pbn, key);
    }

    /// Takes `pbn` out of cluster `c`; the cluster's last block moves into its slot.
    pub fn remove(&mut self, c: u32, pbn: u32) {
        let s = self.slot[pbn as usize];
        let last = self.used[c as usize] - 1;
        self.used[c as usize] = last;
        let (moved, key) = (self.held(c, last), self.leaf_key(c, last));
        self.put(c, last, NO_BLOCK, 0);
        if s != last {
            self.put(c, s, moved, key);
        }
    }

    /// Gives `pbn` of cluster `c` a new key.
    #[inline]
    pub fn set(&mut self, c: u32, pbn: u32, key: u64) {
        let s = self.slot[pbn as usize];
        if self.leaf_key(c, s) != key {
            self.put(c, s, pbn, key);
        }
    }

    /// The key `pbn` has in cluster `c`, if it is there.
    pub fn key(&self, c: u32, pbn: u32) -> Option<u64> {
        let s = self.slot[pbn as usize];
        (self.held(c, s) == pbn).then(|| self.leaf_key(c, s))
    }

    #[inline]
    fn held(&self, c: u32, s: u32) -> u32 {
        self.held[c as usize * self.cap + s as usize]
    }

    #[inline]
    fn leaf_key(&self, c: u32, s: u32) -> u64 {
        self.keys_of(c)[self.cap + s as usize]
    }

    fn put(&mut self, c: u32, s: u32, pbn: u32, key: u64) {
        self.held[c as usize * self.cap + s as usize] = pbn;
        if pbn != NO_BLOCK {
            self.slot[pbn as usize] = s;
        }
        let keys = &mut self.key[c as usize * 2 * self.cap..][..2 * self.cap];
        set_leaf(keys, s as usize, key);
    }

    /// Cluster `c`'s tree ([`set_leaf`]).
    #[inline]
    fn keys_of(&self, c: u32) -> &[u64] {
        &self.key[c as usize * 2 * self.cap..][..2 * self.cap]
    }

    /// Doubles every cluster's slots, keeping each block in its slot.
    fn grow(&mut self) {
        let clusters = self.used.len();
        let mut grown = BlockTrees::with_cap(clusters, self.cap * 2, std::mem::take(&mut self.slot));
        grown.used.clone_from(&self.used);
        grown.pending_len.clone_from(&self.pending_len);
        for c in 0..clusters as u32 {
            for s in 0..self.used[c as usize] {
                grown.put(c, s, self.held(c, s), self.leaf_key(c, s));
            }
            let (old, new) = (c as usize * self.cap, c as usize * grown.cap);
            let len = self.pending_len[c as usize] as usize;
            grown.pending[new..new + len].copy_from_slice(&self.pending[old..old + len]);
        }
        *self = grown;
    }

    pub fn memory_bytes(&self) -> usize {
        self.key.len() * 8
            + (self.held.len() + self.used.len() + self.slot.len() + self.pending.len() + self.pending_len.len()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_key_wins_ties_go_to_the_lowest_cluster_and_zero_is_no_candidate() {
        let mut t = MaxTree::new(5);
        assert_eq!(t.top(), None);
        t.set(3, 7);
        t.set(1, 7);
        t.set(4, 2);
        assert_eq!(t.top(), Some(1));
        assert_eq!(t.top_excluding(&[1]), Some(3));
        assert_eq!(t.top_excluding(&[1, 3]), Some(4));
        assert_eq!(t.top_excluding(&[1, 3, 4]), None);
        assert_eq!((t.key(1), t.key(3), t.top()), (7, 7, Some(1)), "exclusions are undone");
        t.set(1, 0);
        assert_eq!(t.top(), Some(3));
        t.set(0, 9);
        assert_eq!(t.top(), Some(0));
    }

    #[test]
    fn a_cluster_s_block_tree_gives_the_full_block_with_most_invalid_pages_and_the_first_of_equals() {
        let mut t = BlockTrees::new(2, 1, 16);
        assert_eq!(t.cap, 2);
        t.insert(1, 10, block_key(true, 3, 0));
        t.insert(1, 11, block_key(false, 5, 1));
        assert_eq!(t.top(1), Some(10), "a block not yet full is no candidate");
        t.insert(1, 12, block_key(true, 3, 2)); // the third block: the trees double
        assert_eq!(t.cap, 4);
        assert_eq!(t.top(1), Some(10), "equal blocks: the one the cluster got first");
        t.set(1, 12, block_key(true, 4, 2));
        assert_eq!(t.top(1), Some(12));
        t.remove(1, 10); // block 12 moves into block 10's slot
        assert_eq!((t.key(1, 12), t.key(1, 10)), (Some(block_key(true, 4, 2)), None));
        t.remove(1, 12);
        assert_eq!(t.top(1), None, "block 11 is left, not a candidate");
        t.set(1, 11, block_key(true, 5, 1));
        assert_eq!(t.top(1), Some(11));
        assert_eq!(t.top(0), None, "cluster 0 holds nothing");
    }
}
