//! A max tree over clusters: every cluster has a key (0: not a candidate); the cluster with the
//! largest key, ties to the lowest number, is known at once, and a key changes in O(log n). CPM
//! picks the victim cluster of InterGC (maximum CIC) and K-CPM its new distributed clusters (most
//! free pages, most room) without scanning the clusters.

pub(super) struct MaxTree {
    /// Leaves start here (a power of two).
    leaves: usize,
    /// Per node: the best (key, cluster) below it; leaf `leaves + i` is cluster `i`.
    node: Vec<(u32, u32)>,
}

/// The better of two (key, cluster): the larger key, then the lower cluster.
#[inline]
fn best(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

impl MaxTree {
    pub fn new(clusters: u32) -> Self {
        let leaves = (clusters as usize).next_power_of_two().max(1);
        let mut node = vec![(0, u32::MAX); 2 * leaves];
        for i in 0..leaves {
            node[leaves + i] = (0, i as u32);
        }
        for i in (1..leaves).rev() {
            node[i] = best(node[2 * i], node[2 * i + 1]);
        }
        MaxTree { leaves, node }
    }

    #[inline]
    pub fn key(&self, cluster: u32) -> u32 {
        self.node[self.leaves + cluster as usize].0
    }

    #[inline]
    pub fn set(&mut self, cluster: u32, key: u32) {
        let mut i = self.leaves + cluster as usize;
        if self.node[i].0 == key {
            return;
        }
        self.node[i].0 = key;
        while i > 1 {
            i /= 2;
            let winner = best(self.node[2 * i], self.node[2 * i + 1]);
            // Nodes above an unchanged one are unchanged: most changes stop low in the tree.
            if self.node[i] == winner {
                break;
            }
            self.node[i] = winner;
        }
    }

    /// The cluster with the largest non-zero key (the lowest-numbered among equals).
    #[inline]
    pub fn top(&self) -> Option<u32> {
        let (key, cluster) = self.node[1];
        (key > 0).then_some(cluster)
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
        self.node.len() * 8
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
}
