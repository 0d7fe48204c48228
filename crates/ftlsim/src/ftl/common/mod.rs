//! Machinery shared by every FTL, written once: the free pool, write frontiers and the GC engine
//! (composed by the block manager), the translation-page store and the cache policies.

mod blocks;
pub mod cache;
pub mod changes;
pub mod dedicated;
pub mod demand;
mod frontier;
mod gc;
pub mod hybrid;
pub mod ilog;
mod list;
pub mod merge;
mod pool;
pub mod translation;
mod validity;
mod victim;

pub use blocks::{BlockManager, BlockRole, Relocate};
pub use frontier::{Frontiers, StreamId, StreamSpec};
pub use gc::{gc_threshold, GcEngine};
pub use list::ListSet;
pub use pool::FreePool;
pub use validity::Validity;
pub use victim::VictimIndex;
