//! The `parallel` model's event core in the form the device needs, chosen once when the
//! simulation is built: [`Plain`] for a device without optional features, [`Full`] otherwise.
//! Two monomorphized copies of the core; everything else sees one type.

use super::event::{plain_device, Completed, DieTimes, Dispatched, EventCore, Full, Plain};
use super::{CpuTimes, DiffEccStats, Nanos, OpCosts, SuspensionStats};
use crate::config::DeviceConfig;
use crate::flash::{FlashOp, Ppn};

pub enum Parallel {
    Plain(EventCore<Plain>),
    Full(EventCore<Full>),
}

/// `$e` on whichever core `$self` holds, bound to `$core`.
macro_rules! each {
    ($self:expr, $core:ident => $e:expr) => {
        match $self {
            Parallel::Plain($core) => $e,
            Parallel::Full($core) => $e,
        }
    };
}

impl Parallel {
    pub fn new(costs: OpCosts, device: &DeviceConfig) -> Self {
        match plain_device(device) {
            true => Parallel::Plain(EventCore::new(costs, device)),
            false => Parallel::Full(EventCore::new(costs, device)),
        }
    }

    pub fn now(&self) -> Nanos {
        each!(self, core => core.now())
    }

    pub fn advance_to(&mut self, t: Nanos) -> bool {
        each!(self, core => core.advance_to(t))
    }

    pub fn advance_to_completion(&mut self) -> bool {
        each!(self, core => core.advance_to_completion())
    }

    pub fn drain(&mut self) {
        each!(self, core => core.drain())
    }

    pub fn watch_idle_dies(&mut self) {
        each!(self, core => core.watch_idle_dies())
    }

    #[inline]
    pub fn has_idle_dies(&self) -> bool {
        each!(self, core => core.has_idle_dies())
    }

    pub fn take_idle_dies(&mut self) -> Vec<u32> {
        each!(self, core => core.take_idle_dies())
    }

    #[inline]
    pub fn submit(&mut self, dispatched: Dispatched, ops: &[FlashOp]) {
        each!(self, core => core.submit(dispatched, ops))
    }

    #[inline]
    pub fn pop_completed(&mut self) -> Option<Completed> {
        each!(self, core => core.pop_completed())
    }

    #[inline]
    pub fn prefetch_read(&self, ppn: Ppn) {
        each!(self, core => core.prefetch_read(ppn))
    }

    pub fn set_wse_allowed(&mut self, die: usize, allowed: bool) {
        each!(self, core => core.set_wse_allowed(die, allowed))
    }

    pub fn die_times(&self) -> &DieTimes {
        each!(self, core => &core.times)
    }

    pub fn cpu_times(&self) -> &CpuTimes {
        each!(self, core => core.cpu_times())
    }

    pub fn register_hits(&self) -> u64 {
        each!(self, core => core.registers.hits)
    }

    pub fn suspension_stats(&self) -> Option<&SuspensionStats> {
        each!(self, core => core.pe_stats.as_ref())
    }

    pub fn diffecc_stats(&self) -> Option<DiffEccStats> {
        each!(self, core => core.diffecc.as_deref().map(|d| d.stats()))
    }

    /// The event core's state and DiffECC's mode table.
    pub fn state_bytes(&self) -> usize {
        each!(self, core => core.state_bytes() + core.diffecc.as_deref().map_or(0, |d| d.state_bytes()))
    }
}
