//! The derived report of one run. Field names are stable: they are the JSON and CSV schema.

use serde::Serialize;

use super::collector::Latencies;
use super::{
    CacheStats, ClusterReport, Collector, FlashTimeReport, FlashTimes, GcStats, MergeReport, MergeStats, TimeModel,
    WaCounts, WaModel,
};
use crate::flash::{CpuTask, FlashArray, OpKind, OpLog};
use crate::ftl::SramItem;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HostReport {
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub pages_trimmed: u64,
    pub unmapped_reads: u64,
}

/// Flash operations of one kind, by purpose.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct FlashCounts {
    pub host: u64,
    pub gc: u64,
    pub translation: u64,
    pub metadata: u64,
    pub recovery: u64,
    pub total: u64,
}

impl FlashCounts {
    fn from_row(row: &[u64; 5]) -> Self {
        FlashCounts {
            host: row[0],
            gc: row[1],
            translation: row[2],
            metadata: row[3],
            recovery: row[4],
            total: row.iter().sum(),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl LatencySummary {
    /// Count, mean and maximum exact; percentiles from the histogram (3 significant digits).
    fn of(l: &Latencies) -> Self {
        let us = |ns: u64| ns as f64 / 1000.0;
        let h = &l.histogram;
        LatencySummary {
            count: l.count,
            mean_us: if l.count == 0 { 0.0 } else { l.sum_ns as f64 / l.count as f64 / 1000.0 },
            p50_us: us(h.value_at_quantile(0.5)),
            p90_us: us(h.value_at_quantile(0.9)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(l.max_ns),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ResponseTimes {
    /// Exact mean system response time (completion - arrival) over all requests, microseconds.
    pub mean_us: f64,
    pub mean_queueing_us: f64,
    pub mean_access_us: f64,
    /// Busy time of the busiest server (the one server of `fifo-single`, the busiest die of
    /// `parallel`) over the simulated span: how loaded the device was.
    pub utilization: Option<f64>,
    /// The busiest server was busy at least [`SATURATED`] of the time: the offered load is at or
    /// beyond what the device serves, and queueing grows with the length of the run.
    pub saturated: bool,
    pub all: LatencySummary,
    pub read: LatencySummary,
    pub write: LatencySummary,
}

/// The utilization from which a run is reported as saturated.
pub const SATURATED: f64 = 0.95;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EraseCountStats {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
    pub stddev: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CacheReport {
    pub accesses: u64,
    pub hit: u64,
    pub miss_no_penalty: u64,
    pub miss_fetch: u64,
    pub miss_fetch_two: u64,
    pub miss_writeback: u64,
    pub hit_ratio: Option<f64>,
    /// Probability that an eviction replaces a dirty entry (P_rd, paper 002).
    pub dirty_eviction_probability: Option<f64>,
    /// Hit ratio of the GC mapping updates (H_gcr, paper 002).
    pub gc_hit_ratio: Option<f64>,
    pub translation_reads_per_host_page: Option<f64>,
    pub translation_writes_per_host_page: Option<f64>,
    pub translation_reads_per_access: Option<f64>,
    pub translation_writes_per_access: Option<f64>,
    /// How the cached entries spread over translation pages (paper 002 Figs. 1 and 10); absent
    /// for FTLs without an entry cache and when no sample was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<super::OccupancyReport>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct RecoveryReport {
    /// Power-loss events simulated.
    pub events: u64,
    /// Page and spare reads issued by recovery.
    pub pages_read: u64,
    /// RP = pages read per recovery / physical pages (paper 000 eq. 4.6), averaged over events.
    pub rp: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SimulationReport {
    pub wall_seconds: f64,
    /// Wall time preconditioning took (before the measured run).
    pub precondition_seconds: f64,
    /// Every flash operation except recovery reads (an erase counts once).
    pub flash_page_ops: u64,
    pub flash_page_ops_per_second: f64,
    pub host_pages_per_second: f64,
    pub requests_per_second: f64,
    /// Simulator memory: flash array (with the spare model) plus FTL state, oracle excluded.
    pub state_bytes: u64,
    pub state_bytes_per_physical_page: f64,
    /// Simulated time from the first arrival to the last completion, seconds.
    pub simulated_seconds: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub host: HostReport,
    pub reads: FlashCounts,
    pub spare_reads: FlashCounts,
    pub programs: FlashCounts,
    pub erases: FlashCounts,
    /// Blocks' summary pages programmed, counted among the metadata programs too
    /// (`device.geometry.summary_page`; absent without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_pages_written: Option<u64>,
    /// All programs / host pages written.
    pub write_amplification: Option<f64>,
    /// BU = host pages written / pages erased (paper 000 eq. 4.4).
    pub block_utilization: Option<f64>,
    /// MR = pages moved by GC / pages erased (paper 000 eq. 4.5).
    pub valid_page_move_rate: Option<f64>,
    pub gc_victims: u64,
    pub plane_register_hits: u64,
    pub response: ResponseTimes,
    pub erase_count: EraseCountStats,
    pub cache: CacheReport,
    /// Paper 002's write-amplification model (Eq. 13) on this run's measured inputs, next to
    /// Eq. 12 on its counts; for FTLs with a mapping cache, when host pages were written.
    pub wa_model: Option<WaModel>,
    /// Paper 002's performance model (Eqs. 1, 10, 11) on the same inputs, next to the flash time
    /// the run spent per host page access; present with `wa_model`.
    pub time_model: Option<TimeModel>,
    /// Merges of block-mapped and log-block FTLs (absent for the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merges: Option<MergeReport>,
    /// The controller's write buffer (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferReport>,
    /// How the dies spent their time (`parallel` timing only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dies: Option<DieReport>,
    /// The controller's CPU (absent when no CPU work ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
    /// Where the flash time went: GC and map-loading overheads (paper 004, spec C.9).
    pub flash_time: FlashTimeReport,
    /// Cluster GC of CPM and K-CPM (absent for the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<ClusterReport>,
    /// Spare-area formats and translation levels of 3DFTL (absent for the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spare_map: Option<super::SpareMapReport>,
    /// Delta encoding of Delta-FTL (absent for the others).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<super::DeltaReport>,
    /// ILog's traffic and GC validation (`gc.validity = "ilog"`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ilog: Option<super::IlogReport>,
    /// P/E suspension (present when the device describes its P/E phases, `device.timing.phases`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspension: Option<SuspensionReport>,
    /// DiffECC's write modes and reads per mode (`device.timing.diffecc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diffecc: Option<DiffEccReport>,
    pub recovery: RecoveryReport,
    pub sram: Vec<SramItem>,
    pub sram_total_bytes: u64,
    pub simulation: SimulationReport,
}

/// What the write buffer did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BufferReport {
    #[serde(flatten)]
    pub counts: crate::controller::BufferStats,
    /// Host page reads served from the buffer, over all host page reads.
    pub read_hit_ratio: Option<f64>,
    /// Host page writes that updated a buffered page, over all host page writes.
    pub write_hit_ratio: Option<f64>,
    /// Time-averaged number of host page writes waiting for a buffer slot (paper 001's Q_w_avg,
    /// counted in pages).
    pub mean_waiting_writes: f64,
}

/// How the dies of the `parallel` model spent the simulated span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DieReport {
    /// Busy time over the span, averaged over the dies.
    pub mean_utilization: Option<f64>,
    pub max_utilization: Option<f64>,
    /// Idle periods between two operations of a die, and their mean length.
    pub idle_slots: u64,
    pub mean_idle_slot_us: Option<f64>,
    /// Victims reclaimed by background GC (`gc.background_free_blocks`).
    pub background_gc_victims: u64,
}

/// What the controller's CPU did (Delta-FTL's delta encoding and decoding).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuReport {
    /// Tasks run, by kind.
    pub compress: u64,
    pub decompress: u64,
    /// CPUs serving them (`device.cpu.servers`).
    pub cpus: u32,
    /// Time spent on tasks, summed over the CPUs.
    pub busy_s: f64,
    /// Busy time over the simulated span, averaged over the CPUs, and of the busiest.
    pub mean_utilization: Option<f64>,
    pub max_utilization: Option<f64>,
}

impl CpuReport {
    fn new(ops: &OpLog, busy_ns: &[u64], span: u64) -> Option<CpuReport> {
        let (compress, decompress) = (ops.cpu_count(CpuTask::Compress), ops.cpu_count(CpuTask::Decompress));
        if compress + decompress == 0 {
            return None;
        }
        let (mean_utilization, max_utilization) = server_utilization(busy_ns, span);
        Some(CpuReport {
            compress,
            decompress,
            cpus: busy_ns.len() as u32,
            busy_s: busy_ns.iter().sum::<u64>() as f64 / 1e9,
            mean_utilization,
            max_utilization,
        })
    }
}

/// Busy time over the simulated span of a set of servers (dies, CPUs): the mean over them and
/// the busiest one's.
fn server_utilization(busy_ns: &[u64], span: u64) -> (Option<f64>, Option<f64>) {
    let mean_busy = busy_ns.iter().sum::<u64>() as f64 / busy_ns.len().max(1) as f64;
    ((span > 0).then(|| mean_busy / span as f64), ratio(busy_ns.iter().copied().max().unwrap_or(0), span))
}

/// What P/E suspension did (paper 001 Figs. 3.7-3.8), and the device write latency chapter 3
/// compares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuspensionReport {
    pub programs: u64,
    pub erases: u64,
    pub suspended_programs: u64,
    pub suspended_erases: u64,
    /// Suspended programs and erases over all of them.
    pub suspended_fraction: Option<f64>,
    /// Suspensions by kind: erases by reads, programs at a phase end (IPS), programs by
    /// cancelling a phase (IPC), erases by writes (Write-Suspend-Erase).
    pub erase_by_read: u64,
    pub program_at_phase_end: u64,
    pub program_cancelled: u64,
    pub erase_by_write: u64,
    /// Over the suspended operations: the latency each would have had uninterrupted, and the
    /// latency it had (first start to completion), means in microseconds.
    pub mean_original_us: Option<f64>,
    pub mean_effective_us: Option<f64>,
    /// Die time the suspended operations used beyond their original latency (resets, buffer
    /// reloads, re-biases, redone phases), in total.
    pub resume_overhead_us: f64,
    /// Reads (or writes) that suspended an operation, and their mean wait for its suspension point.
    pub preemptions: u64,
    pub mean_wait_for_suspension_us: Option<f64>,
    /// Writes of evicted buffer pages to flash: mean from dispatch to program completion.
    pub device_writes: u64,
    pub mean_device_write_us: Option<f64>,
}

impl SuspensionReport {
    fn new(s: &crate::timing::SuspensionStats) -> Self {
        let mean = |ns: u128, n: u64| (n > 0).then(|| ns as f64 / n as f64 / 1000.0);
        let suspended = s.suspended_programs + s.suspended_erases;
        SuspensionReport {
            programs: s.programs,
            erases: s.erases,
            suspended_programs: s.suspended_programs,
            suspended_erases: s.suspended_erases,
            suspended_fraction: ratio(suspended, s.programs + s.erases),
            erase_by_read: s.erase_by_read,
            program_at_phase_end: s.program_at_phase_end,
            program_cancelled: s.program_cancelled,
            erase_by_write: s.erase_by_write,
            mean_original_us: mean(s.original_ns, suspended),
            mean_effective_us: mean(s.effective_ns, suspended),
            resume_overhead_us: (s.used_ns as f64 - s.original_ns as f64) / 1000.0,
            preemptions: s.preemptions,
            mean_wait_for_suspension_us: mean(s.wait_for_suspension_ns, s.preemptions),
            device_writes: s.device_writes,
            mean_device_write_us: mean(s.device_write_ns, s.device_writes),
        }
    }
}

/// Counts per DiffECC write mode: N = 1, 2, 4, 8 segments per page.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModeCounts {
    pub n1: u64,
    pub n2: u64,
    pub n4: u64,
    pub n8: u64,
}

impl ModeCounts {
    fn new(c: [u64; 4]) -> Self {
        ModeCounts { n1: c[0], n2: c[1], n4: c[2], n8: c[3] }
    }
}

/// What DiffECC did (paper 001 Figs. 2.11-2.12, Table 2.4's T_idle_avg).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffEccReport {
    /// Host page programs per write mode (Fig. 2.11).
    pub writes_by_mode: ModeCounts,
    /// Page reads served by the flash per mode of the page read (Fig. 2.12).
    pub reads_by_mode: ModeCounts,
    /// Host page programs in a slow mode (N > 1), over all of them.
    pub slow_write_fraction: Option<f64>,
    /// Segments a flash read transferred and decoded, on average.
    pub mean_read_segments: Option<f64>,
    /// Idle slots of the device (no die working) and their mean length, T_idle_avg.
    pub device_idle_slots: u64,
    pub t_idle_avg_ms: Option<f64>,
    /// Idle slots of the dies and their mean length (what per-chip switching samples).
    pub die_idle_slots: u64,
    pub die_t_idle_avg_ms: Option<f64>,
}

impl DiffEccReport {
    fn new(s: &crate::timing::DiffEccStats) -> Self {
        let mean_ms = |ns: u128, n: u64| (n > 0).then(|| ns as f64 / n as f64 / 1e6);
        let writes: u64 = s.writes_by_mode.iter().sum();
        let reads: u64 = s.reads_by_mode.iter().sum();
        DiffEccReport {
            writes_by_mode: ModeCounts::new(s.writes_by_mode),
            reads_by_mode: ModeCounts::new(s.reads_by_mode),
            slow_write_fraction: ratio(writes - s.writes_by_mode[0], writes),
            mean_read_segments: ratio(s.read_segments, reads),
            device_idle_slots: s.device_idle_slots,
            t_idle_avg_ms: mean_ms(s.device_idle_ns, s.device_idle_slots),
            die_idle_slots: s.die_idle_slots,
            die_t_idle_avg_ms: mean_ms(s.die_idle_ns, s.die_idle_slots),
        }
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| a as f64 / b as f64)
}

/// Inputs gathered by the simulator at the end of a run.
pub struct ReportInputs<'a> {
    pub collector: &'a Collector,
    pub ops: &'a OpLog,
    pub cache: &'a CacheStats,
    pub occupancy: Option<super::OccupancyReport>,
    pub flash: &'a FlashArray,
    pub sram: Vec<SramItem>,
    pub gc_victims: u64,
    pub gc_stats: GcStats,
    pub merges: Option<MergeStats>,
    pub spare_map: Option<super::SpareMapStats>,
    pub delta: Option<super::DeltaStats>,
    pub ilog: Option<super::IlogStats>,
    pub buffer: Option<crate::controller::BufferStats>,
    pub dies: Option<(&'a crate::timing::DieTimes, u64)>,
    pub suspension: Option<&'a crate::timing::SuspensionStats>,
    pub diffecc: Option<crate::timing::DiffEccStats>,
    /// Time each CPU spent on tasks.
    pub cpu_busy_ns: Vec<u64>,
    pub plane_register_hits: u64,
    /// Busy time of the timing model's busiest server, ns.
    pub busiest_busy_ns: u64,
    pub recovery: RecoveryReport,
    pub wall_seconds: f64,
    pub precondition_seconds: f64,
    pub state_bytes: u64,
    /// Page read, page program and block erase times, for the performance model.
    pub flash_times: FlashTimes,
    /// The same without bus transfers (the array times alone), for paper 003's total flash time.
    pub array_times: FlashTimes,
}

impl Report {
    pub fn build(i: ReportInputs) -> Report {
        let c = i.collector;
        let counts = i.ops.counts();
        let row = |kind: OpKind| FlashCounts::from_row(&counts[kind.flash_index().expect("a flash kind")]);
        let (reads, spare_reads) = (row(OpKind::Read), row(OpKind::SpareRead));
        let (programs, erases) = (row(OpKind::Program), row(OpKind::Erase));
        let ppb = i.flash.geometry().data_pages_per_block() as u64;
        let pages_erased = erases.total * ppb;
        let requests = c.requests();
        let mean = |sum: u128| if requests == 0 { 0.0 } else { sum as f64 / requests as f64 / 1000.0 };
        let erase_counts: Vec<u32> = i.flash.erase_counts().collect();
        let n = erase_counts.len().max(1) as f64;
        let emean = erase_counts.iter().map(|&e| e as f64).sum::<f64>() / n;
        let evar = erase_counts.iter().map(|&e| (e as f64 - emean).powi(2)).sum::<f64>() / n;
        let accesses = i.cache.accesses();
        let host_pages = c.pages_read + c.pages_written;
        let translation_reads = reads.translation + spare_reads.translation;
        let flash_page_ops: u64 =
            counts.iter().flat_map(|row| row.iter()).sum::<u64>() - reads.recovery - spare_reads.recovery;
        let wall = i.wall_seconds.max(1e-9);
        let sram_total_bytes = i.sram.iter().map(|s| s.bytes).sum();
        let span = c.last_finish.saturating_sub(c.first_arrival.unwrap_or(0));
        let utilization = ratio(i.busiest_busy_ns, span);
        let all = LatencySummary::of(&c.response_all());
        let wa_model = WaCounts::new(i.cache, &i.gc_stats, c.pages_written, programs.translation, ppb).model();
        Report {
            host: HostReport {
                requests,
                read_requests: c.reads,
                write_requests: c.writes,
                trim_requests: c.trims,
                pages_read: c.pages_read,
                pages_written: c.pages_written,
                pages_trimmed: c.pages_trimmed,
                unmapped_reads: c.unmapped_reads,
            },
            summary_pages_written: i.flash.geometry().summary_page.then(|| i.ops.summary_programs()),
            write_amplification: ratio(programs.total - programs.recovery, c.pages_written),
            block_utilization: ratio(c.pages_written, pages_erased),
            valid_page_move_rate: ratio(programs.gc, pages_erased),
            gc_victims: i.gc_victims,
            plane_register_hits: i.plane_register_hits,
            response: ResponseTimes {
                mean_us: all.mean_us,
                mean_queueing_us: mean(c.sum_queue_ns),
                mean_access_us: mean(c.sum_access_ns),
                utilization,
                saturated: utilization.is_some_and(|u| u >= SATURATED),
                all,
                read: LatencySummary::of(&c.response_read),
                write: LatencySummary::of(&c.response_write),
            },
            erase_count: EraseCountStats {
                min: erase_counts.iter().copied().min().unwrap_or(0),
                mean: emean,
                max: erase_counts.iter().copied().max().unwrap_or(0),
                stddev: evar.sqrt(),
            },
            cache: CacheReport {
                accesses,
                hit: i.cache.hit,
                miss_no_penalty: i.cache.miss_no_penalty,
                miss_fetch: i.cache.miss_fetch,
                miss_fetch_two: i.cache.miss_fetch_two,
                miss_writeback: i.cache.miss_writeback,
                hit_ratio: ratio(i.cache.hit, accesses),
                dirty_eviction_probability: ratio(i.cache.dirty_evictions, i.cache.evictions),
                gc_hit_ratio: ratio(i.cache.gc_hits, i.cache.gc_accesses),
                translation_reads_per_host_page: ratio(translation_reads, host_pages),
                translation_writes_per_host_page: ratio(programs.translation, host_pages),
                translation_reads_per_access: ratio(translation_reads, accesses),
                translation_writes_per_access: ratio(programs.translation, accesses),
                occupancy: i.occupancy,
            },
            wa_model: wa_model.clone(),
            time_model: wa_model.map(|m| {
                let t = i.flash_times;
                let modelled = |f: &FlashCounts| f.total - f.metadata - f.recovery;
                let flash_us = modelled(&reads) as f64 * t.read_us
                    + modelled(&programs) as f64 * t.program_us
                    + modelled(&erases) as f64 * t.erase_us;
                m.time_model(t, flash_us)
            }),
            merges: i.merges.map(|m| MergeReport::new(m, ppb, &reads, &programs, &erases, i.array_times)),
            buffer: i.buffer.map(|b| BufferReport {
                read_hit_ratio: ratio(b.read_hits, c.pages_read),
                write_hit_ratio: ratio(b.write_hits, c.pages_written),
                mean_waiting_writes: if span == 0 { 0.0 } else { b.wait_ns as f64 / span as f64 },
                counts: b,
            }),
            dies: i.dies.map(|(times, background_gc_victims)| {
                let (mean_utilization, max_utilization) = server_utilization(&times.busy_ns, span);
                DieReport {
                    mean_utilization,
                    max_utilization,
                    idle_slots: times.idle_slots,
                    mean_idle_slot_us: (times.idle_slots > 0)
                        .then(|| times.idle_slot_ns as f64 / times.idle_slots as f64 / 1000.0),
                    background_gc_victims,
                }
            }),
            cpu: CpuReport::new(i.ops, &i.cpu_busy_ns, span),
            flash_time: FlashTimeReport::new(&i.gc_stats, &reads, &spare_reads, &programs, &erases, i.array_times),
            clusters: i.gc_stats.clusters.map(ClusterReport::new),
            spare_map: i.spare_map.map(super::SpareMapReport::new),
            delta: i.delta.map(|d| {
                let g = i.flash.geometry();
                let gc = super::GcFlashWork { reads: reads.gc, programs: programs.gc, erases: erases.gc };
                super::DeltaReport::new(d, g.page_size, g.data_pages_per_block(), gc, i.array_times)
            }),
            ilog: i.ilog.map(super::IlogReport::new),
            suspension: i.suspension.map(SuspensionReport::new),
            diffecc: i.diffecc.as_ref().map(DiffEccReport::new),
            recovery: i.recovery,
            sram: i.sram,
            sram_total_bytes,
            simulation: SimulationReport {
                wall_seconds: i.wall_seconds,
                precondition_seconds: i.precondition_seconds,
                flash_page_ops,
                flash_page_ops_per_second: flash_page_ops as f64 / wall,
                host_pages_per_second: (host_pages + c.pages_trimmed) as f64 / wall,
                requests_per_second: requests as f64 / wall,
                state_bytes: i.state_bytes,
                state_bytes_per_physical_page: i.state_bytes as f64 / i.flash.geometry().total_pages() as f64,
                simulated_seconds: c.last_finish.saturating_sub(c.first_arrival.unwrap_or(0)) as f64 / 1e9,
            },
            reads,
            spare_reads,
            programs,
            erases,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::{Ppn, Purpose};

    #[test]
    fn the_cpu_section_appears_only_when_cpu_work_ran() {
        let mut ops = OpLog::new();
        ops.push(OpKind::Read, Purpose::Host, Ppn::new(0));
        assert_eq!(CpuReport::new(&ops, &[0, 0], 1000), None);
        for task in [CpuTask::Compress, CpuTask::Compress, CpuTask::Decompress] {
            ops.push(OpKind::Compute(task), Purpose::Host, Ppn::new(0));
        }
        let cpu = CpuReport::new(&ops, &[500, 0], 1000).expect("CPU work ran");
        assert_eq!((cpu.compress, cpu.decompress, cpu.cpus), (2, 1, 2));
        assert_eq!((cpu.mean_utilization, cpu.max_utilization), (Some(0.25), Some(0.5)));
        assert_eq!(ops.count(OpKind::Compute(CpuTask::Compress), Purpose::Host), 0, "not a flash operation");
    }
}
