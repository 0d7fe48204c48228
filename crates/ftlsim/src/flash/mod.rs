//! The flash backend: geometry, the functional state of every page and block, and the
//! operations an FTL issues against it.

mod address;
mod array;
pub mod deltas;
mod divisor;
mod geometry;
mod op;
mod records;
mod spare;

pub use address::{BlockPage, Lpn, Pbn, PbnSlot, Ppn, Tpn};
pub use array::{BlockState, FlashArray, PageKind, Spare, PAGE_KINDS};
pub use deltas::DeltaEntry;
pub use divisor::Divisor;
pub use geometry::{Addressing, BlockLayout, Geometry};
pub use op::{CpuTask, FlashOp, OpIndex, OpKind, OpLog, Purpose, Sectors, CPU_TASKS, OP_KINDS, PURPOSES};
pub use records::PageRecords;
pub use spare::{SpareField, SpareLayout, BASIC_LAYOUT, KIND_FIELD, LOGICAL_FIELD, VERSION_FIELD};
