//! Latency of each operation: array time plus bus transfer of the bytes moved.

use super::suspension::{PeLatency, PhaseCosts};
use super::Nanos;
use crate::config::DeviceConfig;
use crate::flash::{CpuTask, Geometry, CPU_TASKS};
use crate::metrics::FlashTimes;

#[derive(Debug, Clone)]
pub struct OpCosts {
    pub read_array: Nanos,
    pub program_array: Nanos,
    pub erase: Nanos,
    /// Bus time of a full page (data, plus spare when configured).
    pub page_transfer: Nanos,
    /// Bus time of the spare area alone.
    pub spare_transfer: Nanos,
    pub geometry: Geometry,
    /// The phases of programs and erases, when the device describes them (P/E suspension).
    pub phases: Option<PhaseCosts>,
    /// CPU time of each task ([`CpuTask`] order).
    pub cpu_task: [Nanos; 2],
}

fn us(v: f64) -> Nanos {
    (v * 1000.0).round() as Nanos
}

impl OpCosts {
    pub fn new(device: &DeviceConfig) -> Self {
        let g = &device.geometry;
        let l = &device.latency;
        let page_bytes = g.page_size as u64 + if l.transfer_includes_spare { g.spare_size as u64 } else { 0 };
        let (program_array, erase) = match device.timing.pe_latency {
            PeLatency::AsConfigured => (us(l.program_us), us(l.erase_us)),
            PeLatency::Per => (us(l.read_us), us(l.read_us)),
            PeLatency::Pe0 => (0, 0),
        };
        OpCosts {
            read_array: us(l.read_us),
            program_array,
            erase,
            page_transfer: (page_bytes as f64 * l.bus_ns_per_byte).round() as Nanos,
            spare_transfer: (g.spare_size as f64 * l.bus_ns_per_byte).round() as Nanos,
            geometry: g.clone(),
            phases: device.timing.phases.as_ref().map(|p| PhaseCosts::new(p, l.erase_us)),
            cpu_task: CPU_TASKS.map(|task| device.cpu.task_ns(task)),
        }
    }

    /// How long the controller's CPU takes for `task`.
    #[inline]
    pub fn cpu(&self, task: CpuTask) -> Nanos {
        self.cpu_task[task as usize]
    }

    /// A full page read and program (array plus transfer) and a block erase, in microseconds.
    pub fn page_times(&self) -> FlashTimes {
        let us = |ns: Nanos| ns as f64 / 1000.0;
        FlashTimes {
            read_us: us(self.read_array + self.page_transfer),
            program_us: us(self.program_array + self.page_transfer),
            erase_us: us(self.erase),
        }
    }
}
