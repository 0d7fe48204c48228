//! Mapping-cache building blocks written once for every demand-based FTL.
//!
//! - [`Policy`]: the replacement-order interface (insert / touch / remove / victim) with
//!   [`Lru`] and [`SegmentedLru`]; a [`ReplacementKind`] parameter names one.
//!   Schemes with richer orders (CDFTL's kick-out order, NRU classes, two-level LRU) implement
//!   `Policy` over their own [`ListSet`](super::ListSet)s and add their operations.
//! - [`EntryCache`]: a fixed-capacity LPN -> PPN entry cache with dirty flags and per-TP dirty
//!   lists (DFTL's and CDFTL's CMT).
//! - [`DirtyEntries`]: mapping changes not yet written to their TP, grouped by TP, for caches that
//!   hold whole translation pages (S-FTL).
//! - [`PageCache`]: whole translation pages in LRU order, loaded and written back whole (CPM's
//!   CMT), with its changes in [`PageSlots`] (a slot of entries per changed page; CDFTL's CTP too).
//! - [`LpnMap`]: the LPN-keyed index of these caches (an entry's slot, an unwritten change),
//!   sized by what the cache holds rather than by the device.

mod dirty;
mod entry;
mod map;
pub mod nru;
mod pages;
mod policy;
mod slots;
mod two_level;

pub use dirty::DirtyEntries;
pub use entry::EntryCache;
pub use map::LpnMap;
pub use pages::{load, CachesPages, PageCache};
pub use policy::{Lru, Policy, ReplacementKind, SegmentedLru};
pub use slots::PageSlots;
pub use two_level::{PageOrder, TwoLevelCache};
