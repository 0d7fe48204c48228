//! Typed addresses: a logical page, a physical page, a physical block and a translation page are
//! each a type of its own, so that one is never passed where another is meant.
//!
//! Each is a 32-bit number. A physical page is stored as number + 1 in a `NonZeroU32`, so
//! `Option<Ppn>` takes four bytes like the number itself: the dense page maps (PFTL's table, the
//! translation pages' image, every mapping cache) hold `Option<Ppn>` with no sentinel and no size
//! cost; the largest 32-bit value is therefore not a page (geometry validation keeps every device
//! below 2^32 pages). Logical pages, blocks and translation pages are plain numbers: they are
//! converted on every hot path (a block number from each page number); the tables with an
//! optional block per logical block hold [`PbnSlot`], an `Option<Pbn>` in four bytes.

use std::fmt;
use std::num::NonZeroU32;

macro_rules! address {
    (niche, $(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(NonZeroU32);

        impl $name {
            /// The address numbered `n`; `n` must be below `u32::MAX`. (Without a branch: a
            /// release build turns `u32::MAX` into `u32::MAX - 1`, which is beyond every device
            /// too, so the flash array's bounds checks still refuse it.)
            #[inline]
            pub const fn new(n: u32) -> Self {
                debug_assert!(n != u32::MAX, concat!("u32::MAX is not a ", stringify!($name)));
                $name(NonZeroU32::MIN.saturating_add(n))
            }

            /// The address as a number.
            #[inline]
            pub const fn get(self) -> u32 {
                self.0.get() - 1
            }
        }

        address!(methods, $name);
    };
    (plain, $(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(u32);

        impl $name {
            /// The address numbered `n`.
            #[inline]
            pub const fn new(n: u32) -> Self {
                $name(n)
            }

            /// The address as a number.
            #[inline]
            pub const fn get(self) -> u32 {
                self.0
            }
        }

        address!(methods, $name);
    };
    (methods, $name:ident) => {
        impl $name {

            /// The address as an index into a table.
            #[inline]
            pub const fn index(self) -> usize {
                self.get() as usize
            }

            /// The address `n` further on.
            #[inline]
            pub const fn offset(self, n: u32) -> Self {
                $name::new(self.get() + n)
            }

            /// The address `n` before; `n` must not reach below 0.
            #[inline]
            pub const fn back(self, n: u32) -> Self {
                $name::new(self.get() - n)
            }

            /// The address `n` before, or 0.
            #[inline]
            pub const fn saturating_back(self, n: u32) -> Self {
                $name::new(self.get().saturating_sub(n))
            }

            /// The address `n` before, if there is one.
            #[inline]
            pub const fn checked_back(self, n: u32) -> Option<Self> {
                match self.get().checked_sub(n) {
                    Some(m) => Some($name::new(m)),
                    None => None,
                }
            }

            /// How many addresses `earlier` lies before this one.
            #[inline]
            pub const fn since(self, earlier: $name) -> u32 {
                self.get() - earlier.get()
            }

            /// The addresses `start..end`.
            #[inline]
            pub fn range(start: u32, end: u32) -> impl DoubleEndedIterator<Item = $name> + ExactSizeIterator {
                (start..end).map($name::new)
            }
        }

        /// The number recorded in a spare area's logical field.
        impl From<$name> for u32 {
            #[inline]
            fn from(address: $name) -> u32 {
                address.get()
            }
        }

        /// Unit tests state expected addresses as numbers.
        #[cfg(test)]
        impl PartialEq<u32> for $name {
            fn eq(&self, n: &u32) -> bool {
                self.get() == *n
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.get())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.get(), f)
            }
        }
    };
}

/// An `Option<Pbn>` in four bytes (number + 1, zero for none), for the tables with an entry per
/// logical block (a log-block scheme's block map), which the niche-free `Pbn` would double.
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
#[repr(transparent)]
pub struct PbnSlot(Option<NonZeroU32>);

impl PbnSlot {
    pub const EMPTY: PbnSlot = PbnSlot(None);

    #[inline]
    pub fn get(self) -> Option<Pbn> {
        self.0.map(|stored| Pbn::new(stored.get() - 1))
    }

    /// Empties the slot; returns what it held.
    #[inline]
    pub fn take(&mut self) -> Option<Pbn> {
        std::mem::take(self).get()
    }

    /// Puts `pbn` in the slot; returns what it held.
    #[inline]
    pub fn replace(&mut self, pbn: Pbn) -> Option<Pbn> {
        std::mem::replace(self, PbnSlot::from(Some(pbn))).get()
    }
}

impl From<Option<Pbn>> for PbnSlot {
    #[inline]
    fn from(pbn: Option<Pbn>) -> Self {
        PbnSlot(pbn.map(|p| NonZeroU32::MIN.saturating_add(p.get())))
    }
}

address! {
    plain,
    /// Logical page number (host address space, in flash pages).
    Lpn
}
address! {
    niche,
    /// Physical page number.
    Ppn
}
address! {
    plain,
    /// Physical block number.
    Pbn
}
address! {
    plain,
    /// Translation page number: which page of the mapping table (demand-based FTLs).
    Tpn
}

/// A page with its block and its offset there, for walks over one block's pages (GC's moves):
/// the flash array and the validity tracker find the page's block without dividing its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPage {
    pub pbn: Pbn,
    pub offset: u32,
    pub ppn: Ppn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_address_costs_nothing() {
        assert_eq!(std::mem::size_of::<Option<Ppn>>(), 4);
        assert_eq!(std::mem::size_of::<Lpn>(), 4);
    }

    #[test]
    fn numbers_round_trip_and_order() {
        for n in [0, 1, 7, u32::MAX - 1] {
            assert_eq!(Ppn::new(n).get(), n);
        }
        assert!(Lpn::new(3) < Lpn::new(4));
        assert_eq!(Pbn::new(5).offset(2), Pbn::new(7));
        assert_eq!(format!("{} {:?}", Tpn::new(9), Tpn::new(9)), "9 Tpn(9)");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not a Ppn")]
    fn the_largest_number_is_not_an_address() {
        Ppn::new(u32::MAX);
    }
}
