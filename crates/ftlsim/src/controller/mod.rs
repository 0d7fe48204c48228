//! The SSD controller's own state between the host interface and the FTL: the DRAM write buffer.
//! When flash operations run (per-die queues, schedulers, operations in flight) is the timing
//! layer's (`timing/`).

pub mod write_buffer;

pub use write_buffer::{BufferStats, Buffered, WriteBuffer};
