//! The controller's CPU (paper 001 §4.3.2): the embedded processor that compresses and
//! decompresses page content for Delta-FTL. Its work is a task's cycles at the configured clock;
//! the timing layer runs it as a FIFO server shared by the whole device, or one per channel.

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};
use crate::flash::CpuTask;
use crate::timing::Nanos;

/// How many CPUs serve the device's content work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuServers {
    /// One CPU for the whole device (spec Δ6: one shared FIFO server).
    #[default]
    Shared,
    /// One CPU per channel, serving the work on that channel's pages.
    PerChannel,
}

/// `device.cpu`: the processor's clock and the cycles of each task. The defaults are paper 001's:
/// a Cortex-R4 class core at 619 MHz running LZF, 27,212 cycles to compress a 4 KB page and
/// 6,737 to decompress one (Table 4.1 divides them by the clock: 44.0 and 10.9 us).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    #[serde(default = "default_frequency")]
    pub frequency_mhz: f64,
    #[serde(default)]
    pub servers: CpuServers,
    #[serde(default = "default_compress")]
    pub compress_cycles: u64,
    #[serde(default = "default_decompress")]
    pub decompress_cycles: u64,
}

fn default_frequency() -> f64 {
    619.0
}
fn default_compress() -> u64 {
    27_212
}
fn default_decompress() -> u64 {
    6_737
}

impl Default for CpuConfig {
    fn default() -> Self {
        CpuConfig {
            frequency_mhz: default_frequency(),
            servers: CpuServers::default(),
            compress_cycles: default_compress(),
            decompress_cycles: default_decompress(),
        }
    }
}

/// Bounds that keep every task under a second of simulated time and the clock physical.
const MIN_MHZ: f64 = 1.0;
const MAX_MHZ: f64 = 100_000.0;
const MAX_CYCLES: u64 = 1_000_000_000;

impl CpuConfig {
    /// How long `task` takes, in nanoseconds (cycles / MHz gives microseconds).
    pub fn task_ns(&self, task: CpuTask) -> Nanos {
        let cycles = match task {
            CpuTask::Compress => self.compress_cycles,
            CpuTask::Decompress => self.decompress_cycles,
        };
        (cycles as f64 * 1000.0 / self.frequency_mhz).round() as Nanos
    }

    pub fn validate(&self) -> Result<()> {
        if !(MIN_MHZ..=MAX_MHZ).contains(&self.frequency_mhz) {
            return Err(SimError::config(
                "device.cpu.frequency_mhz",
                format!("must be a clock in [{MIN_MHZ:?}, {MAX_MHZ:?}] MHz, found {:?}", self.frequency_mhz),
            ));
        }
        for (field, cycles) in [
            ("device.cpu.compress_cycles", self.compress_cycles),
            ("device.cpu.decompress_cycles", self.decompress_cycles),
        ] {
            if !(1..=MAX_CYCLES).contains(&cycles) {
                return Err(SimError::config(field, format!("must be in [1, {MAX_CYCLES}] cycles, found {cycles}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(mhz: f64) -> CpuConfig {
        CpuConfig { frequency_mhz: mhz, ..CpuConfig::default() }
    }

    #[test]
    fn table_4_1_is_the_cycles_over_the_clock() {
        // Paper 001 Table 4.1: compression 89.5 / 44.0 / 29.1 us, decompression 22.2 / 10.9 / 7.2 us
        // at 304 / 619 / 934 MHz (rounded to 0.1 us there).
        let us = |mhz: f64, task| (at(mhz).task_ns(task) as f64 / 100.0).round() / 10.0;
        assert_eq!([304.0, 619.0, 934.0].map(|f| us(f, CpuTask::Compress)), [89.5, 44.0, 29.1]);
        assert_eq!([304.0, 619.0, 934.0].map(|f| us(f, CpuTask::Decompress)), [22.2, 10.9, 7.2]);
        assert_eq!(CpuConfig::default().task_ns(CpuTask::Compress), 43_961);
    }

    #[test]
    fn an_impossible_clock_or_cycle_count_names_its_field() {
        for (config, field) in [
            (at(0.0), "device.cpu.frequency_mhz"),
            (at(f64::NAN), "device.cpu.frequency_mhz"),
            (CpuConfig { compress_cycles: 0, ..CpuConfig::default() }, "device.cpu.compress_cycles"),
            (CpuConfig { decompress_cycles: u64::MAX, ..CpuConfig::default() }, "device.cpu.decompress_cycles"),
        ] {
            let e = config.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        CpuConfig::default().validate().unwrap();
    }
}
