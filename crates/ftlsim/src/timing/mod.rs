//! When things happen. The timing engine receives each request's flash operations (in issue order,
//! with their dependencies) and returns when the request started and finished. It never decides
//! placement; the FTL never computes time.

mod costs;
mod fifo;
mod parallel;

pub use costs::OpCosts;
pub use fifo::FifoSingle;
pub use parallel::Parallel;

use crate::config::{DeviceConfig, TimingModelKind};
use crate::flash::{FlashOp, Ppn};

/// Simulated time in nanoseconds.
pub type Nanos = u64;

/// When one request was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// First moment any of its work started (or its completion if it needed no flash operation).
    pub start: Nanos,
    pub finish: Nanos,
}

/// The configured timing model; an enum rather than a trait object keeps the hot call static.
pub enum TimingEngine {
    FifoSingle(FifoSingle),
    Parallel(Parallel),
}

impl TimingEngine {
    pub fn new(device: &DeviceConfig) -> Self {
        let costs = OpCosts::new(device);
        match device.timing.model {
            TimingModelKind::FifoSingle => TimingEngine::FifoSingle(FifoSingle::new(costs, device)),
            TimingModelKind::Parallel => TimingEngine::Parallel(Parallel::new(costs, device)),
        }
    }

    #[inline]
    pub fn serve(&mut self, arrival: Nanos, ops: &[FlashOp]) -> Served {
        match self {
            TimingEngine::FifoSingle(m) => m.serve(arrival, ops),
            TimingEngine::Parallel(m) => m.serve(arrival, ops),
        }
    }

    /// Busy time of the busiest server so far: the one server of `fifo-single`, the busiest die
    /// of `parallel`. Over the simulated span it is the device utilization, which reaches 1 when
    /// the offered load exceeds what the device can serve.
    pub fn busiest_busy_ns(&self) -> Nanos {
        match self {
            TimingEngine::FifoSingle(m) => m.busy,
            TimingEngine::Parallel(m) => m.die_busy.iter().copied().max().unwrap_or(0),
        }
    }

    /// Plane-register hits so far (reads that skipped the array read).
    pub fn register_hits(&self) -> u64 {
        match self {
            TimingEngine::FifoSingle(m) => m.registers.hits,
            TimingEngine::Parallel(m) => m.registers.hits,
        }
    }
}

/// One page register per plane: the page last read or programmed there (paper 000 §4.2).
pub struct PlaneRegisters {
    enabled: bool,
    held: Vec<Option<Ppn>>,
    pub hits: u64,
}

impl PlaneRegisters {
    pub fn new(enabled: bool, planes: u32) -> Self {
        PlaneRegisters { enabled, held: vec![None; planes as usize], hits: 0 }
    }

    /// Records a read of `ppn` on `plane`; returns true if the register already held it.
    #[inline]
    pub fn read(&mut self, plane: u32, ppn: Ppn) -> bool {
        if !self.enabled {
            return false;
        }
        let slot = &mut self.held[plane as usize];
        let hit = *slot == Some(ppn);
        *slot = Some(ppn);
        self.hits += hit as u64;
        hit
    }

    #[inline]
    pub fn program(&mut self, plane: u32, ppn: Ppn) {
        if self.enabled {
            self.held[plane as usize] = Some(ppn);
        }
    }

    /// An erase of the block whose pages are `first..first+pages` clears a register holding one of them.
    #[inline]
    pub fn erase(&mut self, plane: u32, first: Ppn, pages: u32) {
        if self.enabled {
            let slot = &mut self.held[plane as usize];
            if slot.is_some_and(|held| held >= first && held.get() < first.get() + pages) {
                *slot = None;
            }
        }
    }
}
