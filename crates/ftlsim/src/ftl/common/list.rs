//! Intrusive doubly linked lists over slot indices: the one building block of every replacement
//! policy, per-TP grouping and GC victim bucket. A [`ListSet`] holds several lists over the same
//! slots (one list per segment, per translation page, per valid count...); a slot is in at most
//! one list of a set, and a structure may use several sets over the same slots. Every operation is
//! O(1) and allocation-free.
//!
//! Convention: the front of a list is the most recently used end, the back the next victim.

const NIL: u32 = u32::MAX;

/// `items[i]`, for a slot or list checked by the operation (`check_slot`, `check_list`) or read
/// from a link other than NIL: links hold only NIL and slots and lists checked when they were
/// linked, so they are followed unchecked (their checks were a tenth of CDFTL's `make_room`).
#[inline(always)]
fn linked<T>(items: &[T], i: u32) -> &T {
    debug_assert!((i as usize) < items.len());
    // SAFETY: `i` is in bounds, as above; a set's nodes never shrink and its lists never change
    // in number.
    unsafe { items.get_unchecked(i as usize) }
}

#[inline(always)]
fn linked_mut<T>(items: &mut [T], i: u32) -> &mut T {
    debug_assert!((i as usize) < items.len());
    // SAFETY: as in `linked`.
    unsafe { items.get_unchecked_mut(i as usize) }
}

/// A slot's links, kept together so one access brings all three into the CPU cache, with the
/// owner's per-slot state `P` (none by default) alongside for the same reason.
#[derive(Clone, Copy)]
struct Node<P> {
    prev: u32,
    next: u32,
    /// The list the slot is in, or NIL.
    owner: u32,
    payload: P,
}

#[derive(Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
    len: u32,
}

const EMPTY: Ends = Ends { head: NIL, tail: NIL, len: 0 };

pub struct ListSet<P: Copy + Default = ()> {
    nodes: Vec<Node<P>>,
    lists: Vec<Ends>,
}

impl<P: Copy + Default> ListSet<P> {
    pub fn new(slots: usize, lists: usize) -> Self {
        ListSet { nodes: vec![Self::unlinked(); slots], lists: vec![EMPTY; lists] }
    }

    fn unlinked() -> Node<P> {
        Node { prev: NIL, next: NIL, owner: NIL, payload: P::default() }
    }

    /// The state the owner keeps with a slot (listed or not).
    #[inline]
    pub fn payload(&self, slot: u32) -> &P {
        &self.nodes[slot as usize].payload
    }
    #[inline]
    pub fn payload_mut(&mut self, slot: u32) -> &mut P {
        &mut self.nodes[slot as usize].payload
    }
    /// Brings a slot's links and state toward the CPU cache (a hint).
    #[inline]
    pub fn prefetch(&self, slot: u32) {
        if let Some(node) = self.nodes.get(slot as usize) {
            crate::mem::prefetch(node);
        }
    }

    /// How many lists the set has.
    pub fn lists(&self) -> u32 {
        self.lists.len() as u32
    }

    #[inline]
    pub fn len(&self, list: u32) -> u32 {
        self.lists[list as usize].len
    }
    #[inline]
    pub fn is_empty(&self, list: u32) -> bool {
        self.lists[list as usize].len == 0
    }
    /// The list a slot is in.
    #[inline]
    pub fn list_of(&self, slot: u32) -> Option<u32> {
        Some(self.nodes[slot as usize].owner).filter(|&l| l != NIL)
    }
    #[inline]
    pub fn front(&self, list: u32) -> Option<u32> {
        Some(self.lists[list as usize].head).filter(|&s| s != NIL)
    }
    #[inline]
    pub fn back(&self, list: u32) -> Option<u32> {
        Some(self.lists[list as usize].tail).filter(|&s| s != NIL)
    }
    /// The neighbour towards the front.
    #[inline]
    pub fn toward_front(&self, slot: u32) -> Option<u32> {
        Some(self.nodes[slot as usize].prev).filter(|&s| s != NIL)
    }
    /// The neighbour towards the back.
    #[inline]
    pub fn toward_back(&self, slot: u32) -> Option<u32> {
        Some(self.nodes[slot as usize].next).filter(|&s| s != NIL)
    }

    /// Panics unless `slot` is one of the set's slots (see [`linked`]).
    #[inline(always)]
    fn check_slot(&self, slot: u32) {
        assert!((slot as usize) < self.nodes.len(), "slot {slot} of {}", self.nodes.len());
    }
    #[inline(always)]
    fn check_list(&self, list: u32) {
        assert!((list as usize) < self.lists.len(), "list {list} of {}", self.lists.len());
    }
    #[inline]
    pub fn push_front(&mut self, list: u32, slot: u32) {
        self.check_list(list);
        self.check_slot(slot);
        self.link_front(list, slot);
    }

    /// `push_front` on a checked list and slot.
    #[inline(always)]
    fn link_front(&mut self, list: u32, slot: u32) {
        debug_assert_eq!(linked(&self.nodes, slot).owner, NIL, "slot {slot} is already listed");
        let ends = linked_mut(&mut self.lists, list);
        let old = ends.head;
        ends.head = slot;
        if old == NIL {
            ends.tail = slot;
        }
        ends.len += 1;
        let node = linked_mut(&mut self.nodes, slot);
        (node.prev, node.next, node.owner) = (NIL, old, list);
        if old != NIL {
            linked_mut(&mut self.nodes, old).prev = slot;
        }
    }

    #[inline]
    pub fn push_back(&mut self, list: u32, slot: u32) {
        self.check_list(list);
        self.check_slot(slot);
        debug_assert_eq!(linked(&self.nodes, slot).owner, NIL, "slot {slot} is already listed");
        let ends = linked_mut(&mut self.lists, list);
        let old = ends.tail;
        ends.tail = slot;
        if old == NIL {
            ends.head = slot;
        }
        ends.len += 1;
        let node = linked_mut(&mut self.nodes, slot);
        (node.prev, node.next, node.owner) = (old, NIL, list);
        if old != NIL {
            linked_mut(&mut self.nodes, old).next = slot;
        }
    }

    /// Links an unlisted slot right behind `anchor` (toward the back), in `anchor`'s list.
    #[inline]
    pub fn insert_behind(&mut self, anchor: u32, slot: u32) {
        self.check_slot(anchor);
        self.check_slot(slot);
        debug_assert_eq!(linked(&self.nodes, slot).owner, NIL, "slot {slot} is already listed");
        let Node { next, owner, .. } = *linked(&self.nodes, anchor);
        assert_ne!(owner, NIL, "anchor {anchor} is not listed");
        let ends = linked_mut(&mut self.lists, owner);
        ends.len += 1;
        if next == NIL {
            ends.tail = slot;
        } else {
            linked_mut(&mut self.nodes, next).prev = slot;
        }
        linked_mut(&mut self.nodes, anchor).next = slot;
        let node = linked_mut(&mut self.nodes, slot);
        (node.prev, node.next, node.owner) = (anchor, next, owner);
    }

    /// Unlinks a slot from its list; does nothing if it is in none.
    #[inline]
    pub fn remove(&mut self, slot: u32) {
        self.check_slot(slot);
        self.unlink(slot);
    }

    /// `remove` of a checked slot.
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let node = linked_mut(&mut self.nodes, slot);
        let Node { prev, next, owner, .. } = *node;
        if owner == NIL {
            return;
        }
        node.owner = NIL;
        let ends = linked_mut(&mut self.lists, owner);
        ends.len -= 1;
        if prev == NIL {
            ends.head = next
        } else {
            linked_mut(&mut self.nodes, prev).next = next
        }
        if next == NIL {
            ends.tail = prev
        } else {
            linked_mut(&mut self.nodes, next).prev = prev
        }
    }

    /// Moves a slot (listed or not) to the front of `list`.
    #[inline]
    pub fn move_to_front(&mut self, list: u32, slot: u32) {
        self.check_list(list);
        self.check_slot(slot);
        if linked(&self.lists, list).head != slot {
            self.unlink(slot);
            self.link_front(list, slot);
        }
    }

    /// Moves the slots from `slot` to the back of its list to the front, keeping their order: what
    /// taking each from the back and pushing it to the front does, one at a time, in O(1).
    #[inline]
    pub fn rotate_to_front(&mut self, slot: u32) {
        self.check_slot(slot);
        let Node { prev, owner, .. } = *linked(&self.nodes, slot);
        // Checked: an unlisted slot keeps stale links, which must not be followed.
        assert_ne!(owner, NIL, "slot {slot} is not listed");
        if prev == NIL {
            return; // already at the front
        }
        // The ends and links of a listed slot's list are listed slots: in bounds, as elsewhere.
        let ends = linked_mut(&mut self.lists, owner);
        let (head, tail) = (ends.head, ends.tail);
        (ends.head, ends.tail) = (slot, prev);
        linked_mut(&mut self.nodes, prev).next = NIL;
        linked_mut(&mut self.nodes, slot).prev = NIL;
        linked_mut(&mut self.nodes, tail).next = head;
        linked_mut(&mut self.nodes, head).prev = tail;
    }

    /// The slots of a list from the back (next victim) to the front.
    pub fn iter_from_back(&self, list: u32) -> impl Iterator<Item = u32> + '_ {
        let mut cursor = self.lists[list as usize].tail;
        std::iter::from_fn(move || {
            let slot = cursor;
            (slot != NIL).then(|| {
                cursor = self.nodes[slot as usize].prev;
                slot
            })
        })
    }

    /// Adds an unlisted slot at the end; returns its index (structures that grow with use).
    pub fn add_slot(&mut self) -> u32 {
        self.nodes.push(Self::unlinked());
        (self.nodes.len() - 1) as u32
    }

    /// Empties every list (and resets every slot's state).
    pub fn clear(&mut self) {
        self.nodes.fill(Self::unlinked());
        self.lists.fill(EMPTY);
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * size_of::<Node<P>>() + self.lists.len() * size_of::<Ends>()
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

    #[test]
    fn insert_behind_links_a_slot_toward_the_back_of_its_anchor() {
        let mut l = ListSet::new(6, 2);
        l.push_front(1, 1);
        l.insert_behind(1, 2); // behind the only slot: the new back
        l.insert_behind(1, 3); // between 1 and 2
        assert_eq!(order(&l, 1), [2, 3, 1]);
        assert_eq!((l.front(1), l.back(1), l.len(1), l.list_of(3)), (Some(1), Some(2), 3, Some(1)));
        assert_eq!((l.toward_front(2), l.toward_front(3), l.toward_back(1)), (Some(3), Some(1), Some(3)));
    }

    #[test]
    fn rotating_a_back_segment_to_the_front_is_moving_each_slot_from_the_back() {
        for from in 0..5 {
            let (mut a, mut b) = (ListSet::new(6, 1), ListSet::new(6, 1));
            for s in 0..5 {
                a.push_front(0, s);
                b.push_front(0, s);
            }
            // Slots 0 (the back) up to `from` move, one at a time in `a`, at once in `b`.
            for s in 0..=from {
                a.move_to_front(0, s);
            }
            b.rotate_to_front(from);
            assert_eq!(order(&a, 0), order(&b, 0), "from {from}");
            assert_eq!((a.front(0), a.back(0), a.len(0)), (b.front(0), b.back(0), b.len(0)));
            assert_eq!(order(&b, 0).into_iter().rev().collect::<Vec<_>>(), {
                let mut forward = vec![];
                let mut cursor = b.front(0);
                while let Some(s) = cursor {
                    forward.push(s);
                    cursor = b.toward_back(s);
                }
                forward
            });
        }
    }
}
