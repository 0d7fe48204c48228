//! Optional per-page records kept beside the flash array's own state: what a content-aware
//! scheme needs to know about a page's data (a content fingerprint, the size of a compressed
//! delta), or what a controller recorded when it programmed the page (DiffECC's write mode).
//! A table exists only once something asks for it, so schemes that need none pay nothing.

use super::Ppn;
use crate::mem::filled_vec;

/// One value of type `T` per physical page, `T::default()` until set.
pub struct PageRecords<T> {
    values: Vec<T>,
}

impl<T: Copy + Default> PageRecords<T> {
    pub fn new(pages: u32) -> Self {
        PageRecords { values: filled_vec(pages as usize, T::default()) }
    }

    #[inline]
    pub fn get(&self, ppn: Ppn) -> T {
        self.values[ppn.index()]
    }

    #[inline]
    pub fn set(&mut self, ppn: Ppn, value: T) {
        self.values[ppn.index()] = value;
    }

    /// Resets `count` pages from `first` on (an erased block) to the default.
    pub fn clear(&mut self, first: Ppn, count: u32) {
        self.values[first.index()..first.index() + count as usize].fill(T::default());
    }

    /// Simulator memory of the table.
    pub fn state_bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
    }
}
