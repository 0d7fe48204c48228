//! The SSD controller's own state between the host interface and the FTL: the DRAM write buffer,
//! and the settings of its CPU. When flash operations and CPU work run (per-die queues,
//! schedulers, operations in flight, the CPU servers) is the timing layer's (`timing/`).

pub mod cpu;
pub mod write_buffer;

pub use cpu::{CpuConfig, CpuServers};
pub use write_buffer::{BufferStats, Buffered, WriteBuffer};
