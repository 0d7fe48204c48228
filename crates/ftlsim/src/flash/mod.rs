//! The flash backend: geometry, the functional state of every page and block, and the
//! operations an FTL issues against it.

mod array;
mod geometry;
mod op;
mod records;
mod spare;

pub use array::{BlockState, FlashArray, PageKind, Spare, PAGE_KINDS};
pub use geometry::{BlockLayout, Geometry};
pub use op::{FlashOp, OpIndex, OpKind, OpLog, Purpose, Sectors, OP_KINDS, PURPOSES};
pub use records::PageRecords;
pub use spare::{SpareField, SpareLayout, BASIC_LAYOUT, KIND_FIELD, LOGICAL_FIELD, VERSION_FIELD};

/// Logical page number (host address space, in flash pages).
pub type Lpn = u32;
/// Physical page number.
pub type Ppn = u32;
/// Physical block number.
pub type Pbn = u32;
