//! Wires one run together: workload -> host -> FTL -> flash and timing -> metrics.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::check::{check_invariants, Oracle, PowerLossPlan};
use crate::config::{BufferOnPowerLoss, Config, PreconditionMode};
use crate::controller::{BufferStats, WriteBuffer};
use crate::error::{Result, SimError};
use crate::flash::{FlashArray, Lpn, OpKind, OpLog, Ppn, Purpose};
use crate::ftl::precondition::replay_plan;
use crate::ftl::{build_ftl, Ftl, FtlCtx, PageLayout, Prefetch, SramBreakdown};
use crate::host::{Host, PageRequest, SectorSpan};
use crate::metrics::latency_log::LatencyLog;
use crate::metrics::report::ReportInputs;
use crate::metrics::{
    CacheStats, Collector, FlashTimes, GcStats, MergeStats, OccupancySampler, RecoveryReport, Report, RequestKind,
};
use crate::timing::{Completed, Dispatched, Nanos, OpCosts, Source, TimingEngine};
use crate::workload::{Fingerprints, IoKind, Request, Workload};

/// Everything a result file needs to be reproduced and read.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub tool: &'static str,
    pub version: &'static str,
    pub ftl: String,
    pub ftl_params: serde_json::Value,
    pub workload: String,
    pub workload_description: serde_json::Value,
    /// Malformed trace lines skipped (`--on-bad-line skip`).
    pub skipped_lines: u64,
    pub config: serde_json::Value,
    pub report: Report,
}

/// Requests admitted ahead of the one being served (for prefetching).
const LOOKAHEAD: usize = 8;
/// How many evictions ahead a buffered page's map entry is prefetched.
const EVICTION_LOOKAHEAD: u32 = 2;

/// A power loss inside a request strikes at one of its first this many flash operations.
const POWER_CUT_WITHIN: usize = 6;

/// How often the progress callback is called, in requests.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// How often a run looks at its stop flag, in requests: often enough that even a slow FTL stops
/// well within a second, rarely enough to cost nothing.
const STOP_CHECK_EVERY: u64 = 1 << 10;

pub struct Simulation {
    config: Config,
    ftl: Box<dyn Ftl>,
    sram_at_start: SramBreakdown,
    flash: FlashArray,
    ops: OpLog,
    cache: CacheStats,
    /// Samples the mapping cache's occupancy every so many host page accesses.
    occupancy: OccupancySampler,
    timing: TimingEngine,
    collector: Collector,
    oracle: Oracle,
    host: Host,
    sectors_per_page: u8,
    requests: u64,
    /// The queue depth of a closed-loop workload (`Workload::closed_loop`) while it runs.
    closed_loop: Option<u32>,
    gc_victims_base: u64,
    gc_stats_base: GcStats,
    merges_base: MergeStats,
    spare_map_base: crate::metrics::SpareMapStats,
    delta_base: crate::metrics::DeltaStats,
    ilog_base: crate::metrics::IlogStats,
    recovery: RecoveryReport,
    power_loss_at: Vec<u64>,
    /// Requests a power loss cut short.
    power_cuts: u64,
    /// Where every served request's times go, when asked ([`Simulation::log_latencies`]).
    latency_log: Option<LatencyLog>,
    /// The controller's write buffer (`buffer.size_mb`), if any.
    buffer: Option<WriteBuffer>,
    buffer_base: BufferStats,
    /// Pages the buffer evicted while serving the current request, for the FTL to write.
    evicting: Vec<Lpn>,
    /// Host writes waiting for buffer slots, in arrival order, with the pages still waiting.
    waiting_writes: VecDeque<(Dispatched, u32)>,
    /// Host requests dispatched and not yet completed (`parallel`).
    host_in_flight: u64,
    /// Victims background GC reclaimed, all run long and since preconditioning.
    background_gc_victims: u64,
    /// Wall time the last preconditioning took.
    precondition_seconds: f64,
    /// Set from elsewhere (Ctrl-C, a failed sweep) to stop the run ([`Simulation::stop_when`]).
    stop: Option<Arc<AtomicBool>>,
}

/// What the FTL and the write buffer did with one request's pages.
struct PagesServed {
    /// Pages read that were never written.
    unmapped: u64,
    /// Pages written that wait for a buffer slot.
    waiting: u32,
    /// Buffer slots a trim freed for waiting writes.
    released: u32,
}

impl Simulation {
    /// A simulation of the registered FTL `ftl`.
    pub fn new(config: &Config, ftl: &str) -> Result<Self> {
        config.validate()?;
        Self::with_ftl(config, build_ftl(ftl, config)?)
    }

    /// A simulation of any FTL built for `config`, registered or not (tests use it for
    /// deliberately broken ones).
    pub fn with_ftl(config: &Config, ftl: Box<dyn Ftl>) -> Result<Self> {
        config.validate()?;
        let power_loss_at = PowerLossPlan::parse(&config.check.power_loss_at)?.points(config.seed, None)?;
        let mut sim = Simulation {
            flash: FlashArray::new(&config.device.geometry, config.device.program_order),
            ops: OpLog::new(),
            cache: CacheStats::default(),
            occupancy: OccupancySampler::new(),
            timing: new_timing(config),
            collector: Collector::default(),
            oracle: Oracle::new(config.device.logical_pages()),
            host: Host::new(config),
            sectors_per_page: (config.device.geometry.page_size / config.device.geometry.sector_size) as u8,
            requests: 0,
            closed_loop: None,
            gc_victims_base: 0,
            gc_stats_base: GcStats::default(),
            merges_base: MergeStats::default(),
            spare_map_base: Default::default(),
            delta_base: Default::default(),
            ilog_base: Default::default(),
            recovery: RecoveryReport::default(),
            power_loss_at: Vec::new(),
            power_cuts: 0,
            latency_log: None,
            buffer: {
                let pages = config.buffer.pages(config.device.geometry.page_size);
                (pages > 0).then(|| WriteBuffer::new(pages))
            },
            buffer_base: BufferStats::default(),
            evicting: Vec::new(),
            waiting_writes: VecDeque::new(),
            host_in_flight: 0,
            background_gc_victims: 0,
            precondition_seconds: 0.0,
            stop: None,
            config: config.clone(),
            sram_at_start: ftl.sram(),
            ftl,
        };
        sim.set_power_loss_points(power_loss_at);
        Ok(sim)
    }

    /// Logs the times of every request served from now on to `path`, one CSV row each
    /// ([`crate::metrics::latency_log`]); [`Simulation::run`] completes the file.
    pub fn log_latencies(&mut self, path: &Path) -> Result<()> {
        self.latency_log = Some(LatencyLog::create(path)?);
        Ok(())
    }

    /// Completes the latency log, if one is being written.
    pub fn finish_latency_log(&mut self) -> Result<()> {
        self.latency_log.take().map_or(Ok(()), LatencyLog::finish)
    }

    /// Requests a power loss struck inside (`check.power_loss_inside`).
    /// Makes [`Simulation::run`] return [`SimError::Interrupted`] soon after `flag` is set.
    pub fn stop_when(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    pub fn power_cuts(&self) -> u64 {
        self.power_cuts
    }

    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }
    pub fn flash(&self) -> &FlashArray {
        &self.flash
    }
    pub fn oracle(&self) -> &Oracle {
        &self.oracle
    }
    pub fn ops(&self) -> &OpLog {
        &self.ops
    }

    /// Simulates a power loss after each of these request indices (1-based counts of requests served).
    pub fn set_power_loss_points(&mut self, mut points: Vec<u64>) {
        points.sort_unstable();
        points.dedup();
        points.reverse();
        self.power_loss_at = points;
    }

    /// Resolves `check.power_loss_at` against the workload's length once it is known (`random:K`
    /// draws from the whole workload instead of the first `RANDOM_SPAN_DEFAULT` requests).
    pub fn expect_requests(&mut self, requests: u64) -> Result<()> {
        let points =
            PowerLossPlan::parse(&self.config.check.power_loss_at)?.points(self.config.seed, Some(requests))?;
        self.set_power_loss_points(points);
        Ok(())
    }

    fn ctx(&mut self) -> (&mut dyn Ftl, FtlCtx<'_>) {
        (self.ftl.as_mut(), FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache })
    }

    /// Host write outside the timed run (preconditioning).
    fn untimed_write(&mut self, lpn: Lpn) -> Result<()> {
        let version = self.oracle.next_version(lpn);
        self.ops.clear();
        let (ftl, mut ctx) = self.ctx();
        ftl.write(lpn, version, &mut ctx)
    }

    /// Brings the device to the configured starting state, takes no simulated time, and resets
    /// every statistic afterwards (caches start cold).
    ///
    /// An FTL that takes the shared page layout ([`Ftl::takes_page_layout`]) starts from it,
    /// built without its write path ([`PageLayout`]); another, or any with `precondition.replay`,
    /// replays the host writes.
    pub fn precondition(&mut self) -> Result<()> {
        let started = Instant::now();
        if self.config.precondition.mode != PreconditionMode::None {
            if self.ftl.takes_page_layout() && !self.config.precondition.replay {
                let oracle = &mut self.oracle;
                let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
                let layout = PageLayout::build(&self.config, |lpn| oracle.next_version(lpn), &mut ctx)?;
                self.ops.clear();
                let (ftl, mut ctx) = self.ctx();
                ftl.adopt_page_layout(layout, &mut ctx)?;
            } else {
                for lpn in replay_plan(&self.config) {
                    self.untimed_write(lpn)?;
                }
            }
        }
        let (ftl, mut ctx) = self.ctx();
        ftl.flush(&mut ctx)?;
        ftl.reset_cache();
        self.reset_statistics();
        self.precondition_seconds = started.elapsed().as_secs_f64();
        Ok(())
    }

    /// Forgets every operation, cache access, GC and buffer statistic so far, and starts the
    /// timing model afresh: what the measured run reports starts here.
    fn reset_statistics(&mut self) {
        self.ops.clear();
        self.ops.reset_counts();
        self.cache = CacheStats::default();
        self.occupancy = OccupancySampler::new();
        self.gc_victims_base = self.ftl.blocks().gc_victims();
        self.gc_stats_base = self.ftl.blocks().gc_stats();
        self.merges_base = self.ftl.merge_stats().unwrap_or_default();
        self.spare_map_base = self.ftl.spare_map_stats().unwrap_or_default();
        self.delta_base = self.ftl.delta_stats().unwrap_or_default();
        self.ilog_base = self.ftl.blocks().ilog_stats().unwrap_or_default();
        self.buffer_base = self.buffer.as_ref().map(|b| b.stats.clone()).unwrap_or_default();
        self.timing = new_timing(&self.config);
        self.background_gc_victims = 0;
    }

    /// Serves the workload's first `precondition.warm_up_requests` requests through the FTL,
    /// untimed and unmeasured, then resets every statistic: the measured run starts with the
    /// mapping caches and flash state those requests left (spec A20's warm-up). The write buffer
    /// stays empty and the device idle; reads are still checked against the oracle.
    fn warm_up(&mut self, name: &str, source: &mut dyn Iterator<Item = Result<Request>>) -> Result<()> {
        let count = self.config.precondition.warm_up_requests;
        if count == 0 {
            return Ok(());
        }
        let started = Instant::now();
        for served in 0..count {
            let Some(request) = source.next() else {
                return Err(SimError::config(
                    "precondition.warm_up_requests",
                    format!("the workload ended after {served} requests, before the warm-up of {count} was over"),
                ));
            };
            let request = self.host.admit(name, &request?)?;
            self.untimed_request(&request)?;
        }
        self.reset_statistics();
        self.precondition_seconds += started.elapsed().as_secs_f64();
        Ok(())
    }

    /// A host request served page by page through the FTL outside the timed run.
    fn untimed_request(&mut self, req: &PageRequest) -> Result<()> {
        self.ftl.begin_request(req.first, req.pages);
        for i in 0..req.pages {
            let lpn = self.host.lpn(req, i);
            match req.kind {
                IoKind::Write => self.untimed_write(lpn)?,
                IoKind::Read => {
                    self.ops.clear();
                    let ftl = self.ftl.as_mut();
                    let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
                    let found = ftl.read(lpn, &mut ctx)?;
                    if self.config.check.oracle {
                        verify_resolved(&self.oracle, ftl, self.requests, lpn, found, ctx.flash)?;
                    }
                }
                IoKind::Trim => {
                    self.ops.clear();
                    self.oracle.trim(lpn);
                    let (ftl, mut ctx) = self.ctx();
                    ftl.trim(lpn, &mut ctx)?;
                }
            }
        }
        self.ops.clear();
        Ok(())
    }

    /// Serves every request of the workload; `progress` is called every [`PROGRESS_EVERY`] requests.
    ///
    /// Requests are admitted [`LOOKAHEAD`] ahead of service so the FTL can prefetch their state
    /// (the simulation is memory-bound on large devices). An admission error is returned after
    /// the requests before it have been served, as without the lookahead.
    pub fn run(&mut self, workload: Workload, progress: &mut dyn FnMut(u64)) -> Result<RunResult> {
        let skipped = workload.skipped.clone();
        self.closed_loop = workload.closed_loop;
        let mut source = workload.requests;
        self.warm_up(&workload.name, &mut source)?;
        let started = Instant::now();
        // Each request, and whether the trace records the content of what it writes: then its
        // fingerprints are next in `contents`. Most traces record none, and their requests move
        // through the lookahead without the fingerprints' hundred bytes.
        let mut ahead: VecDeque<(PageRequest, bool)> = VecDeque::with_capacity(LOOKAHEAD + 1);
        let mut contents: VecDeque<Fingerprints> = VecDeque::new();
        let mut admission_error = None;
        loop {
            while admission_error.is_none() && ahead.len() <= LOOKAHEAD {
                let request = match source.next() {
                    None => break,
                    Some(Ok(request)) => request,
                    Some(Err(e)) => {
                        admission_error = Some(e);
                        break;
                    }
                };
                match self.host.admit(&workload.name, &request) {
                    Ok(page_request) => {
                        self.oracle.prefetch(page_request.first);
                        self.ftl.prefetch(page_request.first, Prefetch::Map, &self.flash);
                        if let Some(buffer) = &self.buffer {
                            buffer.prefetch_index(page_request.first);
                        }
                        let content = request.content.filter(|_| request.kind == IoKind::Write);
                        ahead.push_back((page_request, content.is_some()));
                        // Not `extend`: through an iterator, an absent content cost 44 instructions.
                        if let Some(content) = content {
                            contents.push_back(content);
                        }
                    }
                    Err(e) => admission_error = Some(e),
                }
            }
            if let Some((soon, _)) = ahead.get(LOOKAHEAD / 2) {
                let page = self.ftl.prefetch(soon.first, Prefetch::Pages, &self.flash);
                if let Some(buffer) = &self.buffer {
                    buffer.prefetch_slot(soon.first);
                }
                if let Some(ppn) = page.filter(|_| soon.kind == IoKind::Read) {
                    self.timing.prefetch_read(ppn);
                }
            }
            let Some((page_request, has_content)) = ahead.pop_front() else { break };
            let content = if has_content { contents.pop_front() } else { None };
            self.serve_with_content(page_request, content.as_ref())?;
            if self.requests.is_multiple_of(PROGRESS_EVERY) {
                progress(self.requests);
            }
            if self.requests.is_multiple_of(STOP_CHECK_EVERY)
                && self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
            {
                return Err(SimError::Interrupted);
            }
        }
        self.finish_requests()?;
        if let Some(e) = admission_error {
            return Err(e);
        }
        if let Some(&point) = self.power_loss_at.first() {
            return Err(SimError::config(
                "check.power_loss_at",
                format!(
                    "a power loss after request {point} never happened: the workload ended after {} requests",
                    self.requests
                ),
            ));
        }
        self.finish_latency_log()?;
        let wall = started.elapsed().as_secs_f64();
        let mut result = self.result(&workload.name, workload.description, wall)?;
        result.skipped_lines = skipped.get();
        Ok(result)
    }

    /// The most requests the host keeps outstanding in the device: `host.queue_depth`, or a
    /// closed loop's depth if smaller. `None` where no limit changes anything: on one FIFO server
    /// a request starts after every earlier one has finished anyway, so only a closed loop's
    /// arrivals depend on the limit there.
    fn queue_depth(&self) -> Option<u32> {
        let configured = self.config.host.queue_depth;
        match (&self.timing, self.closed_loop) {
            (_, Some(closed)) => Some(closed.min(configured)),
            (TimingEngine::FifoSingle { .. }, None) => None,
            (TimingEngine::Parallel(_), None) => Some(configured),
        }
    }

    /// When a request arriving at `arrival` is dispatched: at once, or when the host queue has
    /// room. The device runs (and finished requests are recorded) up to that time.
    fn dispatch_time(&mut self, arrival: Nanos) -> Result<Nanos> {
        let Some(depth) = self.queue_depth() else { return Ok(arrival) };
        if let TimingEngine::FifoSingle { .. } = self.timing {
            return Ok(self.timing.fifo_dispatch_time(arrival, depth));
        }
        while self.timing.advance_to(arrival) {
            self.record_completed()?;
            self.collect_in_background()?;
        }
        self.record_completed()?;
        while self.host_in_flight >= depth as u64 && self.timing.advance_to_completion() {
            self.record_completed()?;
            self.collect_in_background()?;
        }
        Ok(self.timing.now_or(arrival))
    }

    /// Background GC on the dies that fell idle (`gc.background_free_blocks`): one victim of
    /// one of the die's units that is low on free blocks, queued at the lowest priority. The die
    /// falls idle again when that work is done, and collects again while a unit is still low.
    fn collect_in_background(&mut self) -> Result<()> {
        if !self.timing.has_idle_dies() {
            // Most calls: no die fell idle since the last.
            return Ok(());
        }
        for die in self.timing.take_idle_dies() {
            for unit in self.config.device.units_of_die(die) {
                self.ops.clear();
                let (ftl, mut ctx) = self.ctx();
                if ftl.collect_in_background(unit, &mut ctx)? {
                    self.background_gc_victims += 1;
                    self.update_write_suspends_erase();
                    let at = self.timing.now_or(0);
                    let request = PageRequest {
                        arrival: at,
                        kind: IoKind::Write,
                        first: Lpn::new(0),
                        pages: 0,
                        span: SectorSpan::WHOLE,
                    };
                    let dispatched = Dispatched { index: self.requests, request, at, source: Source::Background };
                    self.timing.submit(dispatched, self.ops.ops(), None);
                    break;
                }
            }
        }
        self.ops.clear();
        Ok(())
    }

    /// Dispatches one host request reduced to pages (host flash operations carry the sectors of
    /// a page the request touches when it does not touch all of them) at its arrival, or when the
    /// host queue has room. Its response is recorded when the device finishes it
    /// ([`Simulation::finish_requests`] waits for the ones still in flight).
    #[inline]
    pub fn serve(&mut self, req: PageRequest) -> Result<()> {
        self.serve_with_content(req, None)
    }

    /// [`Simulation::serve`] for a write whose content the trace records: the FTL learns each
    /// page's fingerprint ([`Ftl::host_content`]).
    #[inline]
    pub fn serve_with_content(&mut self, mut req: PageRequest, content: Option<&Fingerprints>) -> Result<()> {
        let at = self.dispatch_time(req.arrival)?;
        if self.closed_loop.is_some() {
            // A closed loop issues a request when an earlier one completes: that is its arrival.
            req.arrival = at;
        }
        self.record_completed()?;
        self.ops.clear();
        let cut = self.arm_power_cut();
        let pages = match self.serve_pages(&req, cut, content) {
            Err(SimError::PowerCut) => return self.power_cut_inside(),
            outcome => outcome?,
        };
        if cut {
            // It issued fewer operations than the power loss waited for: its writes completed,
            // and the power loss comes after it (disarmed, so it cannot strike recovery).
            self.ops.set_power_cut(None);
            self.oracle.forget_cuts();
        }
        self.collector.dispatched(request_kind(req.kind), req.pages as u64, req.arrival);
        let dispatched = Dispatched { index: self.requests, request: req, at, source: Source::Host };
        if let TimingEngine::Parallel(_) = self.timing {
            self.host_in_flight += 1;
        }
        if pages.waiting > 0 {
            self.waiting_writes.push_back((dispatched, pages.waiting));
        } else {
            self.timing.submit(dispatched, self.ops.ops(), self.queue_depth());
        }
        for _ in 0..pages.released {
            self.release_waiting_write(at)?;
        }
        self.write_evicted(at)?;
        self.update_write_suspends_erase();
        self.record_completed()?;
        self.collector.unmapped_reads += pages.unmapped;
        self.requests += 1;
        let every = self.config.check.invariants_every;
        if every != 0 && self.requests.is_multiple_of(every) {
            self.check_invariants()?;
        }
        if self.power_loss_at.last() == Some(&self.requests) {
            self.power_loss_at.pop();
            self.power_loss()?;
        }
        Ok(())
    }

    /// Write-Suspend-Erase: writes may suspend a die's erases while every allocation unit of
    /// the die has clean space above the watermark (a fraction of its share of the exported
    /// space, as the GC trigger counts it).
    fn update_write_suspends_erase(&mut self) {
        let device = &self.config.device;
        let suspension = &device.timing.suspension;
        if !suspension.write_suspends_erase {
            return;
        }
        let exported_blocks_per_unit = device.logical_pages() as f64
            / device.allocation_units() as f64
            / device.geometry.data_pages_per_block() as f64;
        let watermark = suspension.wse_watermark * exported_blocks_per_unit;
        for die in 0..device.geometry.total_dies() {
            let clean = device.units_of_die(die).all(|unit| self.ftl.blocks().free_blocks(unit) as f64 > watermark);
            self.timing.set_wse_allowed(die as usize, clean);
        }
    }

    /// Records the responses of the requests the device has finished; a completed eviction
    /// frees its buffer slot for the first waiting write.
    fn record_completed(&mut self) -> Result<()> {
        while let Some(Completed { dispatched, served }) = self.timing.pop_completed() {
            match dispatched.source {
                Source::Host => self.record_response(dispatched, served)?,
                Source::Eviction => {
                    let buffer = self.buffer.as_mut().expect("evictions come from the write buffer");
                    if buffer.evicted(dispatched.request.first) {
                        self.release_waiting_write(served.finish)?;
                    }
                }
                Source::Background => {}
            }
        }
        Ok(())
    }

    fn record_response(&mut self, dispatched: Dispatched, served: crate::timing::Served) -> Result<()> {
        let req = dispatched.request;
        self.host_in_flight = self.host_in_flight.saturating_sub(1);
        self.collector.completed(request_kind(req.kind), req.arrival, served);
        if let Some(log) = self.latency_log.as_mut() {
            let g = &self.config.device.geometry;
            let untouched = (req.span.head as u64 + req.span.tail as u64) * g.sector_size as u64;
            log.record(dispatched.index, &req, served, req.pages as u64 * g.page_size as u64 - untouched)?;
        }
        Ok(())
    }

    /// A buffer slot freed at `at` goes to the first page of the first waiting write; the write
    /// completes when its last page has one (it waited in the host queue until then).
    fn release_waiting_write(&mut self, at: Nanos) -> Result<()> {
        let Some((dispatched, pages)) = self.waiting_writes.front_mut() else { return Ok(()) };
        let waited = at - dispatched.at;
        *pages -= 1;
        let done = (*pages == 0).then_some(*dispatched);
        if let Some(buffer) = self.buffer.as_mut() {
            buffer.stats.wait_ns += waited as u128;
        }
        if let Some(dispatched) = done {
            self.waiting_writes.pop_front();
            self.record_response(dispatched, crate::timing::Served { start: at, finish: at })?;
        }
        Ok(())
    }

    /// Writes the pages the buffer evicted for the current request to flash, each as a request
    /// of its own in the device's base queue.
    fn write_evicted(&mut self, at: Nanos) -> Result<()> {
        for i in 0..self.evicting.len() {
            let lpn = self.evicting[i];
            self.prefetch_evictions();
            self.ops.clear();
            let version = self.oracle.next_version(lpn);
            let (ftl, mut ctx) = self.ctx();
            ftl.write(lpn, version, &mut ctx)?;
            let ftl = self.ftl.as_ref();
            self.occupancy.access(|| ftl.cache_occupancy());
            let request =
                PageRequest { arrival: at, kind: IoKind::Write, first: lpn, pages: 1, span: SectorSpan::WHOLE };
            let dispatched = Dispatched { index: self.requests, request, at, source: Source::Eviction };
            self.timing.submit(dispatched, self.ops.ops(), None);
        }
        self.evicting.clear();
        Ok(())
    }

    /// The host-request lookahead cannot prefetch for buffered writes, which reach the FTL only
    /// when evicted: the buffer's LRU order tells which pages go next, so their state is brought
    /// in a few evictions ahead, in the same two stages.
    #[inline]
    fn prefetch_evictions(&self) {
        let Some(buffer) = &self.buffer else { return };
        if let Some(soon) = buffer.upcoming_victim(EVICTION_LOOKAHEAD) {
            self.oracle.prefetch(soon);
            self.ftl.prefetch(soon, Prefetch::Map, &self.flash);
        }
        if let Some(next) = buffer.upcoming_victim(0) {
            self.ftl.prefetch(next, Prefetch::Pages, &self.flash);
        }
    }

    /// Lets the device finish every request dispatched and records their responses.
    pub fn finish_requests(&mut self) -> Result<()> {
        self.timing.drain();
        self.record_completed()
    }

    /// The FTL's part of a request, page by page; returns the pages read unmapped. With `cut`, a
    /// planned power loss may strike inside it: the LPNs it was writing go to the oracle as cut.
    /// `content`: the fingerprints of what a write brings, when the trace records them.
    #[inline]
    fn serve_pages(&mut self, req: &PageRequest, cut: bool, content: Option<&Fingerprints>) -> Result<PagesServed> {
        let index = self.requests;
        let mut buffer = self.buffer.as_mut();
        let (mut waiting, mut released) = (0, 0);
        let span = req.span;
        // Most requests are page-aligned: their operations carry no sector range at all.
        let partial = span != SectorSpan::WHOLE;
        let sectors_per_page = self.sectors_per_page;
        let check_reads = self.config.check.oracle;
        let buffer_reads = self.config.buffer.serves_reads;
        let mut unmapped = 0;
        let ftl = self.ftl.as_mut();
        let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        ftl.begin_request(req.first, req.pages);
        for i in 0..req.pages {
            let lpn = self.host.lpn(req, i);
            ctx.ops.begin_chain();
            let page_ops = ctx.ops.issued();
            if let Some(content) = content {
                ftl.host_content(lpn, self.host.page_fingerprint(req, i, content));
            }
            match req.kind {
                IoKind::Read if buffer_reads && buffer.as_mut().is_some_and(|b| b.read(lpn)) => {}
                IoKind::Write if buffer.is_some() => {
                    let buffered = buffer.as_mut().expect("checked").write(lpn);
                    self.evicting.extend(buffered.evict);
                    waiting += buffered.waits as u32;
                }
                IoKind::Read => {
                    let found = ftl.read(lpn, &mut ctx)?;
                    if check_reads {
                        verify_resolved(&self.oracle, ftl, index, lpn, found, ctx.flash)?;
                    }
                    unmapped += found.is_none() as u64;
                    self.occupancy.access(|| ftl.cache_occupancy());
                }
                IoKind::Write => {
                    if cut {
                        self.oracle.write_cut(lpn, self.oracle.state(lpn));
                    }
                    let version = self.oracle.next_version(lpn);
                    ftl.write(lpn, version, &mut ctx)?;
                    self.occupancy.access(|| ftl.cache_occupancy());
                }
                IoKind::Trim => {
                    released += buffer.as_mut().is_some_and(|b| b.trim(lpn)) as u32;
                    self.oracle.trim(lpn);
                    ftl.trim(lpn, &mut ctx)?;
                }
            }
            if partial {
                if let Some(sectors) = span.sectors(i, req.pages, sectors_per_page) {
                    ctx.ops.set_host_sectors(page_ops, sectors);
                }
            }
            if cfg!(debug_assertions) {
                // The cheap check of debug builds: the side-effect-free resolver agrees with the oracle.
                let found = ftl.lookup(lpn, ctx.flash);
                verify_resolved(&self.oracle, ftl, index, lpn, found, ctx.flash)
                    .map_err(|e| tagged(e, &format!("lookup after {:?}", req.kind).to_lowercase()))?;
            }
        }
        Ok(PagesServed { unmapped, waiting, released })
    }

    /// With `check.power_loss_inside`, arms the power loss planned for the request about to be
    /// served to strike at one of its first flash operations (drawn from the seed); a request
    /// that issues fewer loses power after it. Returns whether one is armed.
    fn arm_power_cut(&mut self) -> bool {
        let armed = self.config.check.power_loss_inside && self.power_loss_at.last() == Some(&(self.requests + 1));
        let at = armed.then(|| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.config.seed ^ self.requests.rotate_left(32));
            rng.gen_range(0..POWER_CUT_WITHIN)
        });
        self.ops.set_power_cut(at);
        armed
    }

    /// A planned power loss struck inside the request being served: the request never
    /// completes (nothing of it reaches the response statistics), the FTL recovers, and each
    /// LPN it was writing must read back as its old or its new version.
    fn power_cut_inside(&mut self) -> Result<()> {
        self.ops.set_power_cut(None);
        self.power_cuts += 1;
        self.requests += 1;
        self.power_loss_at.pop();
        self.power_loss()
    }

    /// The full invariant check (`check::check_invariants`), and that the reported SRAM still
    /// equals what the configuration gave at the start.
    pub fn check_invariants(&self) -> Result<()> {
        check_invariants(self.ftl.as_ref(), &self.flash, self.oracle.logical_pages(), self.requests)?;
        let sram = self.ftl.sram();
        if sram != self.sram_at_start {
            let total = |s: &SramBreakdown| s.iter().map(|i| i.bytes).sum::<u64>();
            return Err(SimError::Invariant {
                ftl: self.ftl.name().to_string(),
                request: self.requests,
                message: format!(
                    "reports {} bytes of SRAM in {} structures, but {} bytes in {} at the start: SRAM use must follow from \
                     the configuration alone",
                    total(&sram),
                    sram.len(),
                    total(&self.sram_at_start),
                    self.sram_at_start.len()
                ),
            });
        }
        Ok(())
    }

    /// Simulates a power loss: the FTL's `recover` drops all SRAM state and rebuilds it from
    /// flash. Counts every page and spare read recovery issues, checks the recovered mapping of
    /// every LPN against the oracle, and runs the full invariant check. Recovery takes no
    /// simulated time. An FTL that cannot recover returns `SimError::RecoveryUnsupported`.
    pub fn power_loss(&mut self) -> Result<()> {
        self.power_loss_in_buffer()?;
        let (ftl, mut ctx) = self.ctx();
        ftl.flush_on_power_loss(&mut ctx)?;
        self.ops.clear();
        let before = *self.ops.counts();
        self.ops.clear();
        let (ftl, mut ctx) = self.ctx();
        ftl.recover(&mut ctx)?;
        self.ops.clear();
        let after = self.ops.counts();
        let issued = |kind: OpKind, purpose: Option<Purpose>| -> u64 {
            let (k, purposes) = (kind.flash_index().expect("a flash kind"), after[0].len());
            (0..purposes).filter(|&p| purpose.is_none_or(|q| q as usize == p)).map(|p| after[k][p] - before[k][p]).sum()
        };
        // Recovery's own reads, and those of any collection its writes trigger.
        let reads = issued(OpKind::Read, None) + issued(OpKind::SpareRead, None);
        let tagged_reads = [Purpose::Recovery, Purpose::Gc]
            .iter()
            .map(|&p| issued(OpKind::Read, Some(p)) + issued(OpKind::SpareRead, Some(p)))
            .sum::<u64>();
        if reads != tagged_reads {
            return Err(SimError::Invariant {
                ftl: self.ftl.name().to_string(),
                request: self.requests,
                message: format!(
                    "recovery issued {} reads not tagged Purpose::Recovery; they would be missing from recovery_pages_read",
                    reads - tagged_reads
                ),
            });
        }
        let events = self.recovery.events + 1;
        let physical = self.flash.geometry().total_pages() as f64;
        let total = self.recovery.pages_read + reads;
        self.recovery = RecoveryReport { events, pages_read: total, rp: Some(total as f64 / events as f64 / physical) };
        let name = self.ftl.name();
        for lpn in Lpn::range(0, self.oracle.logical_pages()) {
            let found = self.ftl.lookup(lpn, &self.flash);
            match self.ftl.delta_of(lpn) {
                Some(at) => self.oracle.verify_recovered_delta(name, self.requests, lpn, at, &self.flash),
                None => self.oracle.verify_recovered(name, self.requests, lpn, found, &self.flash),
            }
            .map_err(|e| tagged(e, "after power-loss recovery"))?;
        }
        self.check_invariants()
    }

    /// A power loss reaches the write buffer: its dirty pages are written to flash first
    /// (capacitor-backed, the default; untimed, counted in `buffer.flushed_at_power_loss`) or
    /// lost (`volatile`: the FTL never saw them, so the oracle expects their previous versions).
    /// Writes waiting for a slot complete now: their pages were flushed or lost with the rest.
    fn power_loss_in_buffer(&mut self) -> Result<()> {
        let Some(buffer) = self.buffer.as_mut() else { return Ok(()) };
        let dirty = buffer.take_dirty();
        match self.config.buffer.on_power_loss {
            BufferOnPowerLoss::Flush => {
                buffer.stats.flushed_at_power_loss += dirty.len() as u64;
                for lpn in dirty {
                    self.untimed_write(lpn)?;
                }
            }
            BufferOnPowerLoss::Volatile => buffer.stats.lost_at_power_loss += dirty.len() as u64,
        }
        let now = self.timing.now_or(self.collector.last_finish);
        while !self.waiting_writes.is_empty() {
            self.release_waiting_write(now)?;
        }
        self.ops.clear();
        Ok(())
    }

    /// The report of the run so far, once the device has finished every request dispatched.
    pub fn result(&mut self, workload: &str, description: serde_json::Value, wall_seconds: f64) -> Result<RunResult> {
        self.finish_requests()?;
        let buffer_bytes = self.buffer.as_ref().map_or(0, WriteBuffer::state_bytes);
        let timing_bytes = self.timing.state_bytes();
        let state_bytes = (self.flash.state_bytes() + self.ftl.state_bytes() + buffer_bytes + timing_bytes) as u64;
        let report = Report::build(ReportInputs {
            collector: &self.collector,
            ops: &self.ops,
            cache: &self.cache,
            occupancy: self.occupancy.report(),
            flash: &self.flash,
            sram: self.ftl.sram(),
            gc_victims: self.ftl.blocks().gc_victims() - self.gc_victims_base,
            gc_stats: self.ftl.blocks().gc_stats().since(&self.gc_stats_base),
            merges: self.ftl.merge_stats().map(|m| m.since(&self.merges_base)),
            spare_map: self.ftl.spare_map_stats().map(|m| m.since(&self.spare_map_base)),
            delta: self.ftl.delta_stats().map(|d| d.since(&self.delta_base)),
            ilog: self.ftl.blocks().ilog_stats().map(|m| m.since(&self.ilog_base)),
            buffer: self.buffer.as_ref().map(|b| b.stats.since(&self.buffer_base)),
            dies: self.timing.die_times().map(|times| (times, self.background_gc_victims)),
            suspension: self.timing.suspension_stats(),
            diffecc: self.timing.diffecc_stats(),
            cpu_busy_ns: self.timing.cpu_busy_ns(),
            plane_register_hits: self.timing.register_hits(),
            busiest_busy_ns: self.timing.busiest_busy_ns(),
            recovery: self.recovery.clone(),
            wall_seconds,
            precondition_seconds: self.precondition_seconds,
            state_bytes,
            flash_times: OpCosts::new(&self.config.device).page_times(),
            array_times: FlashTimes {
                read_us: self.config.device.latency.read_us,
                program_us: self.config.device.latency.program_us,
                erase_us: self.config.device.latency.erase_us,
            },
        });
        Ok(RunResult {
            tool: "ftlsim",
            version: crate::VERSION,
            ftl: self.ftl.name().to_string(),
            ftl_params: self.ftl.params(),
            workload: workload.to_string(),
            workload_description: description,
            skipped_lines: 0,
            config: self.config.to_json(),
            report,
        })
    }
}

/// The oracle's check of a read or lookup of `lpn` that resolved to `found`, through its delta
/// when the FTL keeps the LPN in delta form.
#[inline]
fn verify_resolved(
    oracle: &Oracle,
    ftl: &dyn Ftl,
    request: u64,
    lpn: Lpn,
    found: Option<Ppn>,
    flash: &FlashArray,
) -> Result<()> {
    match ftl.delta_of(lpn) {
        Some(at) => oracle.verify_delta(ftl.name(), request, lpn, at, flash),
        None => oracle.verify(ftl.name(), request, lpn, found, flash),
    }
}

fn request_kind(kind: IoKind) -> RequestKind {
    match kind {
        IoKind::Read => RequestKind::Read,
        IoKind::Write => RequestKind::Write,
        IoKind::Trim => RequestKind::Trim,
    }
}

/// Says when an oracle failure was found: "FTL x (after power-loss recovery) at request ...".
fn tagged(e: SimError, when: &str) -> SimError {
    match e {
        SimError::Oracle { ftl, request, lpn, expected, found } => {
            SimError::Oracle { ftl: format!("{ftl} ({when})"), request, lpn, expected, found }
        }
        other => other,
    }
}

/// The configured timing model, watching for idle dies when background GC is on.
fn new_timing(config: &Config) -> TimingEngine {
    let mut timing = TimingEngine::new(&config.device);
    if config.gc.background_free_blocks > 0 {
        timing.watch_idle_dies();
    }
    timing
}

/// Preconditions a fresh device and runs the workload on it.
pub fn run(config: &Config, ftl: &str, workload: Workload) -> Result<RunResult> {
    let mut sim = Simulation::new(config, ftl)?;
    sim.precondition()?;
    sim.run(workload, &mut |_| {})
}
