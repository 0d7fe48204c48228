//! Intrusive doubly linked lists over slot indices: the one building block of every replacement
//! policy. A [`ListSet`] holds several lists over the same slots (one list per segment, per
//! translation page, per class...); a slot is in at most one list of a set, and a structure may
//! use several sets over the same slots. Every operation is O(1) and allocation-free.
//!
//! Convention: the front of a list is the most recently used end, the back the next victim.

pub const NIL: u32 = u32::MAX;

pub struct ListSet {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// The list each slot is in, or NIL.
    owner: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

impl ListSet {
    pub fn new(slots: usize, lists: usize) -> Self {
        ListSet {
            prev: vec![NIL; slots],
            next: vec![NIL; slots],
            owner: vec![NIL; slots],
            head: vec![NIL; lists],
            tail: vec![NIL; lists],
            len: vec![0; lists],
        }
    }

    #[inline]
    pub fn len(&self, list: u32) -> u32 {
        self.len[list as usize]
    }
    #[inline]
    pub fn is_empty(&self, list: u32) -> bool {
        self.len[list as usize] == 0
    }
    /// The list a slot is in.
    #[inline]
    pub fn list_of(&self, slot: u32) -> Option<u32> {
        Some(self.owner[slot as usize]).filter(|&l| l != NIL)
    }
    #[inline]
    pub fn front(&self, list: u32) -> Option<u32> {
        Some(self.head[list as usize]).filter(|&s| s != NIL)
    }
    #[inline]
    pub fn back(&self, list: u32) -> Option<u32> {
        Some(self.tail[list as usize]).filter(|&s| s != NIL)
    }
    /// The neighbour towards the front.
    #[inline]
    pub fn toward_front(&self, slot: u32) -> Option<u32> {
        Some(self.prev[slot as usize]).filter(|&s| s != NIL)
    }

    #[inline]
    pub fn push_front(&mut self, list: u32, slot: u32) {
        debug_assert_eq!(self.owner[slot as usize], NIL, "slot {slot} is already listed");
        let (l, s) = (list as usize, slot as usize);
        self.prev[s] = NIL;
        self.next[s] = self.head[l];
        if self.head[l] == NIL {
            self.tail[l] = slot;
        } else {
            self.prev[self.head[l] as usize] = slot;
        }
        self.head[l] = slot;
        self.owner[s] = list;
        self.len[l] += 1;
    }

    #[inline]
    pub fn push_back(&mut self, list: u32, slot: u32) {
        debug_assert_eq!(self.owner[slot as usize], NIL, "slot {slot} is already listed");
        let (l, s) = (list as usize, slot as usize);
        self.next[s] = NIL;
        self.prev[s] = self.tail[l];
        if self.tail[l] == NIL {
            self.head[l] = slot;
        } else {
            self.next[self.tail[l] as usize] = slot;
        }
        self.tail[l] = slot;
        self.owner[s] = list;
        self.len[l] += 1;
    }

    /// Unlinks a slot from its list; does nothing if it is in none.
    #[inline]
    pub fn remove(&mut self, slot: u32) {
        let s = slot as usize;
        let l = self.owner[s];
        if l == NIL {
            return;
        }
        let l = l as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p == NIL { self.head[l] = n } else { self.next[p as usize] = n }
        if n == NIL { self.tail[l] = p } else { self.prev[n as usize] = p }
        self.owner[s] = NIL;
        self.len[l] -= 1;
    }

    /// Moves a slot (listed or not) to the front of `list`.
    #[inline]
    pub fn move_to_front(&mut self, list: u32, slot: u32) {
        if self.head[list as usize] != slot {
            self.remove(slot);
            self.push_front(list, slot);
        }
    }

    /// The slots of a list from the back (next victim) to the front.
    pub fn iter_from_back(&self, list: u32) -> impl Iterator<Item = u32> + '_ {
        let mut cursor = self.tail[list as usize];
        std::iter::from_fn(move || {
            let slot = cursor;
            (slot != NIL).then(|| {
                cursor = self.prev[slot as usize];
                slot
            })
        })
    }

    /// Empties every list.
    pub fn clear(&mut self) {
        self.prev.fill(NIL);
        self.next.fill(NIL);
        self.owner.fill(NIL);
        self.head.fill(NIL);
        self.tail.fill(NIL);
        self.len.fill(0);
    }

    pub fn memory_bytes(&self) -> usize {
        (self.prev.len() * 3 + self.head.len() * 3) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: &ListSet, list: u32) -> Vec<u32> {
        l.iter_from_back(list).collect()
    }

    #[test]
    fn push_remove_and_move_keep_both_ends_and_lengths() {
        let mut l = ListSet::new(6, 2);
        l.push_front(0, 1);
        l.push_front(0, 2);
        l.push_back(0, 3);
        assert_eq!(order(&l, 0), [3, 1, 2]);
        l.move_to_front(0, 3);
        assert_eq!(order(&l, 0), [1, 2, 3]);
        l.remove(2);
        assert_eq!(order(&l, 0), [1, 3]);
        assert_eq!((l.front(0), l.back(0), l.len(0)), (Some(3), Some(1), 2));
        l.move_to_front(1, 1);
        assert_eq!((order(&l, 0), order(&l, 1)), (vec![3], vec![1]));
        assert_eq!((l.list_of(1), l.list_of(2)), (Some(1), None));
        l.remove(2); // not listed: no effect
        l.remove(3);
        assert!(l.is_empty(0) && l.back(0).is_none() && l.front(0).is_none());
        assert_eq!(l.toward_front(1), None);
    }
}
