//! Machinery shared by every FTL, written once: block allocation and garbage collection.

mod blocks;
pub mod cache;
pub mod changes;
pub mod demand;
mod list;
pub mod translation;
mod victim;

pub use blocks::{gc_threshold, BlockManager, BlockRole, Relocate};
pub use list::ListSet;
pub use victim::VictimIndex;
