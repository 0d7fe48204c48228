//! Latency of each operation: array time plus bus transfer of the bytes moved.

use super::Nanos;
use crate::config::DeviceConfig;
use crate::flash::Geometry;
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
}

fn us(v: f64) -> Nanos {
    (v * 1000.0).round() as Nanos
}

impl OpCosts {
    pub fn new(device: &DeviceConfig) -> Self {
        let g = &device.geometry;
        let l = &device.latency;
        let page_bytes = g.page_size as u64 + if l.transfer_includes_spare { g.spare_size as u64 } else { 0 };
        OpCosts {
            read_array: us(l.read_us),
            program_array: us(l.program_us),
            erase: us(l.erase_us),
            page_transfer: (page_bytes as f64 * l.bus_ns_per_byte).round() as Nanos,
            spare_transfer: (g.spare_size as f64 * l.bus_ns_per_byte).round() as Nanos,
            geometry: g.clone(),
        }
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
