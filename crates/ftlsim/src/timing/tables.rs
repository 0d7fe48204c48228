//! The event core's tables, indexed without bounds checks: every index they are given was
//! handed out by them (a slot) or checked when it entered the model (a die, a block), and they
//! never shrink. The event core looks up a dozen entries per operation; the checks were a
//! tenth of its instructions.

use std::num::NonZeroU32;

/// An entry's place in a [`Slab`], stored as index + 1 so that `Option<Slot>` takes four bytes:
/// an operation in flight holds six of them (its links in chains, lists and queues).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slot(NonZeroU32);

impl Slot {
    #[inline]
    pub(super) fn new(index: u32) -> Self {
        Slot(NonZeroU32::new(index + 1).expect("fewer than 2^32 - 1 operations in flight"))
    }
    #[inline]
    pub(super) fn index(self) -> u32 {
        self.0.get() - 1
    }
}

/// Slots reused through a free list, so that memory follows what is in flight and nothing is
/// allocated per operation once the lists have grown to the peak.
#[derive(Debug)]
pub(super) struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    pub(super) fn new() -> Self {
        Slab { items: Vec::new(), free: Vec::new() }
    }

    pub(super) fn state_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<T>() + self.free.capacity() * 4
    }

    #[inline]
    pub(super) fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self[i] = item;
                i
            }
            None => {
                self.items.push(item);
                (self.items.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub(super) fn remove(&mut self, i: u32) {
        self.free.push(i);
    }

    pub(super) fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        debug_assert!((i as usize) < self.items.len(), "slot {i} was never handed out");
        // SAFETY: in bounds, as above.
        unsafe { self.items.get_unchecked(i as usize) }
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        debug_assert!((i as usize) < self.items.len(), "slot {i} was never handed out");
        // SAFETY: in bounds, as above.
        unsafe { self.items.get_unchecked_mut(i as usize) }
    }
}

/// A table whose length is fixed at creation (per die, per block).
#[derive(Debug)]
pub(super) struct Fixed<T> {
    items: Box<[T]>,
}

impl<T> Fixed<T> {
    pub(super) fn new(items: Vec<T>) -> Self {
        Fixed { items: items.into_boxed_slice() }
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The entry at `i`, if there is one: for indices from outside the model.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)
    }
}

impl<T> std::ops::Index<usize> for Fixed<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.items.len(), "index {i} of {}", self.items.len());
        // SAFETY: in bounds, as the module says.
        unsafe { self.items.get_unchecked(i) }
    }
}

impl<T> std::ops::IndexMut<usize> for Fixed<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.items.len(), "index {i} of {}", self.items.len());
        // SAFETY: in bounds, as the module says.
        unsafe { self.items.get_unchecked_mut(i) }
    }
}
