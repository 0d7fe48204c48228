//! When things happen. The timing engine receives each request's flash operations (in issue order,
//! with their dependencies) at the time the host dispatches it, and reports when the request
//! started and finished. It never decides placement; the FTL never computes time.
//!
//! Two models: `fifo-single` (paper 000's one server, requests served whole in arrival order) and
//! `parallel` (a discrete-event model: per-die queues under a scheduling policy, shared channels,
//! operations in flight; [`event`]).

mod costs;
mod cpu;
mod diffecc;
mod event;
mod fifo;
mod host_link;
mod parallel;
mod phase_ends;
mod scheduler;
mod suspension;
mod tables;

pub use costs::OpCosts;
pub use cpu::CpuTimes;
pub use diffecc::codes as diffecc_codes;
pub use diffecc::{read_latency, split, DiffEccConfig, DiffEccStats, LoadScope, ModePolicy, Split, MODES};
pub use event::{Completed, DieTimes, Dispatched, EventCore, Features, Full, Plain, Source};
pub use fifo::FifoSingle;
pub use parallel::Parallel;
pub use scheduler::{Class, DieQueue, SchedulerKind};
pub use suspension::{PeLatency, PePhases, ProgramSuspension, SuspensionConfig, SuspensionStats};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// The configured timing model; an enum rather than a trait object keeps the hot calls static.
///
/// Both models take requests in dispatch order and report them finished through
/// [`TimingEngine::pop_completed`]: `fifo-single` at once (it knows a request's completion when
/// the request arrives), `parallel` when its event core reaches it.
// One engine per simulation, called per request: its size does not matter, an indirection would.
#[allow(clippy::large_enum_variant)]
pub enum TimingEngine {
    FifoSingle {
        model: FifoSingle,
        /// Completions of the requests dispatched so far that a host queue-depth limit still
        /// counts as outstanding (kept only with a limit).
        finishes: BinaryHeap<Reverse<Nanos>>,
        completed: Option<Completed>,
    },
    Parallel(Parallel),
}

impl TimingEngine {
    pub fn new(device: &DeviceConfig) -> Self {
        let costs = OpCosts::new(device);
        match device.timing.model {
            TimingModelKind::FifoSingle => TimingEngine::FifoSingle {
                model: FifoSingle::new(costs, device),
                finishes: BinaryHeap::new(),
                completed: None,
            },
            TimingModelKind::Parallel => TimingEngine::Parallel(Parallel::new(costs, device)),
        }
    }

    /// For `fifo-single`: the earliest time from `t` on at which fewer than `depth` requests are
    /// outstanding (a closed loop's issue time). Its requests finish in dispatch order, so the
    /// completions it keeps are those of the last `depth` requests.
    pub fn fifo_dispatch_time(&mut self, t: Nanos, depth: u32) -> Nanos {
        let TimingEngine::FifoSingle { finishes, .. } = self else { return t };
        while finishes.peek().is_some_and(|&Reverse(f)| f <= t) {
            finishes.pop();
        }
        if finishes.len() >= depth as usize {
            let Reverse(first) = finishes.pop().expect("a full queue holds a request");
            return t.max(first);
        }
        t
    }

    /// Runs the device up to time `t` (`parallel`; `fifo-single` has nothing to run); true if it
    /// stopped early because a watched die fell idle ([`Self::take_idle_dies`]).
    pub fn advance_to(&mut self, t: Nanos) -> bool {
        match self {
            TimingEngine::FifoSingle { .. } => false,
            TimingEngine::Parallel(core) => core.advance_to(t),
        }
    }

    /// Dies falling idle are reported from now on (`parallel`), for background work.
    pub fn watch_idle_dies(&mut self) {
        if let TimingEngine::Parallel(core) = self {
            core.watch_idle_dies();
        }
    }

    /// Whether a die fell idle since the last [`Self::take_idle_dies`].
    #[inline]
    pub fn has_idle_dies(&self) -> bool {
        match self {
            TimingEngine::FifoSingle { .. } => false,
            TimingEngine::Parallel(core) => core.has_idle_dies(),
        }
    }

    /// The dies that fell idle since the last call.
    pub fn take_idle_dies(&mut self) -> Vec<u32> {
        match self {
            TimingEngine::FifoSingle { .. } => Vec::new(),
            TimingEngine::Parallel(core) => core.take_idle_dies(),
        }
    }

    /// How the dies spent their time (`parallel`).
    pub fn die_times(&self) -> Option<&DieTimes> {
        match self {
            TimingEngine::FifoSingle { .. } => None,
            TimingEngine::Parallel(core) => Some(core.die_times()),
        }
    }

    /// What P/E suspension did (`parallel`, on a device that describes its P/E phases).
    pub fn suspension_stats(&self) -> Option<&SuspensionStats> {
        match self {
            TimingEngine::FifoSingle { .. } => None,
            TimingEngine::Parallel(core) => core.suspension_stats(),
        }
    }

    /// What DiffECC did (`parallel` with `device.timing.diffecc`).
    pub fn diffecc_stats(&self) -> Option<DiffEccStats> {
        match self {
            TimingEngine::FifoSingle { .. } => None,
            TimingEngine::Parallel(core) => core.diffecc_stats(),
        }
    }

    /// Bytes of timing state: the event core's (its per-block ordering state grows with the
    /// device) and DiffECC's mode table.
    pub fn state_bytes(&self) -> usize {
        match self {
            TimingEngine::FifoSingle { .. } => 0,
            TimingEngine::Parallel(core) => core.state_bytes(),
        }
    }

    /// Lets writes suspend `die`'s erases or not (Write-Suspend-Erase's clean-space watermark).
    pub fn set_wse_allowed(&mut self, die: usize, allowed: bool) {
        if let TimingEngine::Parallel(core) = self {
            core.set_wse_allowed(die, allowed);
        }
    }

    /// Runs the device until a request completes or a watched die falls idle; false when
    /// nothing is left to run.
    pub fn advance_to_completion(&mut self) -> bool {
        match self {
            TimingEngine::FifoSingle { .. } => false,
            TimingEngine::Parallel(core) => core.advance_to_completion(),
        }
    }

    /// The time the device stands at (`parallel`); `fifo-single` keeps none and answers `t`.
    pub fn now_or(&self, t: Nanos) -> Nanos {
        match self {
            TimingEngine::FifoSingle { .. } => t,
            TimingEngine::Parallel(core) => core.now(),
        }
    }

    /// A hint that the page `ppn` will be read soon (see [`EventCore::prefetch_read`]).
    #[inline]
    pub fn prefetch_read(&self, ppn: Ppn) {
        if let TimingEngine::Parallel(core) = self {
            core.prefetch_read(ppn);
        }
    }

    /// Hands the device a request's flash operations at its dispatch time (from [`Self::dispatch_time`]).
    #[inline]
    pub fn submit(&mut self, dispatched: Dispatched, ops: &[FlashOp], depth: Option<u32>) {
        match self {
            TimingEngine::FifoSingle { model, finishes, completed } => {
                let served = model.serve(dispatched.at, ops);
                if depth.is_some() {
                    finishes.push(Reverse(served.finish));
                }
                *completed = Some(Completed { dispatched, served });
            }
            TimingEngine::Parallel(core) => core.submit(dispatched, ops),
        }
    }

    /// The next request the device finished, if any.
    #[inline]
    pub fn pop_completed(&mut self) -> Option<Completed> {
        match self {
            TimingEngine::FifoSingle { completed, .. } => completed.take(),
            TimingEngine::Parallel(core) => core.pop_completed(),
        }
    }

    /// Runs the device until every request dispatched has finished.
    pub fn drain(&mut self) {
        if let TimingEngine::Parallel(core) = self {
            core.drain();
        }
    }

    /// Busy time of the busiest server so far: the one server of `fifo-single`, the busiest die
    /// of `parallel`. Over the simulated span it is the device utilization, which reaches 1 when
    /// the offered load exceeds what the device can serve.
    pub fn busiest_busy_ns(&self) -> Nanos {
        match self {
            TimingEngine::FifoSingle { model, .. } => model.busy,
            TimingEngine::Parallel(core) => core.die_times().busy_ns.iter().copied().max().unwrap_or(0),
        }
    }

    /// Time each of the controller's CPUs spent on tasks so far: the CPUs of `parallel`; the one
    /// server of `fifo-single`, which is the controller too.
    pub fn cpu_busy_ns(&self) -> Vec<Nanos> {
        match self {
            TimingEngine::FifoSingle { model, .. } => vec![model.cpu_busy],
            TimingEngine::Parallel(core) => core.cpu_times().busy_ns.clone(),
        }
    }

    /// Plane-register hits so far (reads that skipped the array read).
    pub fn register_hits(&self) -> u64 {
        match self {
            TimingEngine::FifoSingle { model, .. } => model.registers.hits,
            TimingEngine::Parallel(core) => core.register_hits(),
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
