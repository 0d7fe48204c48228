//! `parallel`: a discrete-event model of the flash back end. Each die is a server with its own
//! queue and scheduling policy, each channel a bus shared by its dies; operations are in flight
//! with a phase, and an operation becomes ready only when its chain predecessor completes, so it
//! never holds back an independent operation behind it.
//!
//! A read holds its die for the array read and then for the transfer out over the channel; a
//! program holds its die for the transfer in and then the array program; an erase holds only
//! its die. A die that needs the bus while another die of its channel uses it waits for it, in
//! the order the dies asked: since dies ask in simulated-time order, the bus is a reservation
//! (free from a time on) and needs no events of its own. A read that no other die can
//! overtake on the bus (its die is alone on its channel, or a copy-back keeps its page in the
//! plane) books its transfer when it starts sensing, and is one event. Each die has at most one event
//! pending (the end of its operation's current phase), so the event queue never holds more
//! entries than there are dies. Simulated time only moves forward: requests are submitted in
//! dispatch order at their dispatch time, after every event up to that time has run.
//!
//! An operation waits for the one before it in its chain (the FTL's order for one logical page)
//! and for what it must not overtake on its block: a program follows the block's erase issued
//! before it, an erase follows the block's programs and erase issued before it and its reads in
//! flight. The programs of one block run one at a time, in the order their data became ready,
//! not in the order the FTL allocated their pages: a controller binds a free page of the block
//! to a program when it issues it, so the page the FTL chose is a label, and a program still
//! waiting for its chain holds back none of the block's later ones (in the FTL's order it would
//! stall every later program of its block: the translation blocks of a demand-based FTL). A read of a page whose program is still under way is served by
//! the controller, which holds the data it is programming, without touching the flash (it never
//! waits for that program). Operations on different blocks are independent, whatever their
//! issue order.

use std::collections::VecDeque;

use super::cpu::{CpuTimes, Cpus};
use super::diffecc::{DiffEcc, QueueLoad};
use super::host_link::HostLink;
use super::phase_ends::PhaseEnds;
use super::scheduler::{Class, DieQueue, Links, SchedulerKind};
use super::suspension::{
    PeKind, PeRun, PhaseCosts, ProgramSuspension, SuspensionConfig, SuspensionStats, WriteBacklog,
};
use super::tables::{Fixed, Slab, Slot};
use super::{Nanos, OpCosts, PlaneRegisters, Served};
use crate::config::DeviceConfig;
use crate::controller::CpuServers;
use crate::flash::{Addressing, FlashOp, OpKind, Ppn, Purpose, Sectors};
use crate::host::PageRequest;
use crate::workload::IoKind;

/// A request as the host dispatched it to the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    /// Its position in the workload (0-based).
    pub index: u64,
    pub request: PageRequest,
    /// When the host handed it to the device (its arrival, or later when the host queue was full).
    pub at: Nanos,
    pub source: Source,
}

/// Who asked for a request's flash operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Host,
    /// The write buffer, writing an evicted page (`request.first`) to flash.
    Eviction,
    /// Background GC: served at the lowest priority.
    Background,
}

/// A request the device finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub dispatched: Dispatched,
    pub served: Served,
}

/// What an operation in flight is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting in its die's queue (or for its predecessors).
    Queued,
    /// A read sensing its page into the register; the transfer out follows.
    Sensing,
    /// The last phase: its end completes the operation.
    Finishing,
    /// A program or erase winding down to the point where it is suspended (P/E suspension).
    Suspending,
}

/// Where a block is (looked up once per operation instead of computed), and the operations on
/// it that later ones must not overtake.
#[derive(Debug, Clone, Copy)]
struct BlockPlace {
    plane: u32,
    die: u32,
    /// The programs and erases issued on the block that have not completed, in issue order,
    /// linked both ways through `next_write` and `prev_write` (programs may complete in any
    /// order).
    first_write: Option<Slot>,
    last_write: Option<Slot>,
    /// The erases among them, oldest and newest: each waits for the one before, and programs
    /// issued after an erase wait for it.
    first_erase: Option<Slot>,
    last_erase: Option<Slot>,
    /// Programs issued since the newest pending erase (all of them without one) not completed:
    /// the next erase waits for them.
    open_programs: u32,
    /// The program of the block in its die's queue or under way (one at a time), and those
    /// ready after it, in the order they became ready, linked through `next_in_line`.
    programming: Option<Slot>,
    first_ready: Option<Slot>,
    last_ready: Option<Slot>,
    /// Reads of the block's pages in flight, issued before any erase still pending.
    reads: u32,
    /// An erase waiting for those reads.
    erase: Option<Slot>,
}

/// One cache line each: an operation is never split over two lines (a prefetch of it fetches
/// all of it), and finding one is a shift.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct InFlight {
    ppn: Ppn,
    plane: u32,
    die: u16,
    block: u32,
    request: u32,
    /// The next operation of its chain.
    next: Option<Slot>,
    /// The program or erase issued on its block just after this one, and just before it (for
    /// a program or an erase).
    next_write: Option<Slot>,
    prev_write: Option<Slot>,
    /// The next operation in the list it waits in: its block's program that became ready after
    /// it (a ready program), then the next in its die's queue (it is never in both).
    next_in_line: Option<Slot>,
    kind: OpKind,
    class: Class,
    phase: Phase,
    /// Moves its page over the channel (a copy-back inside a plane does not).
    uses_bus: bool,
    /// A read that an erase of its block issued later waits for.
    counted_read: bool,
    /// A read of a page whose program is still under way: the controller still holds the data
    /// it is programming, so it serves the read without the flash.
    from_controller: bool,
    /// A host read whose data crosses the host link when it is read.
    to_host: bool,
    /// Predecessors not yet completed: its chain predecessor, a program or erase of its block
    /// it must follow, the reads an erase must follow (counted as one).
    waiting: u32,
    /// The sectors of its page a host read needs (DiffECC decodes only their segments).
    sectors: Option<Sectors>,
    /// DiffECC: a program's write mode, 0 for a host write (chosen when its die takes it).
    mode: u8,
    /// When its die or CPU took it (or the controller served it): its request's start is the
    /// earliest of these, folded in when it retires, so that starting it does not touch the
    /// request.
    started: Nanos,
}

/// A die's queue is threaded through its operations.
impl Links for Slab<InFlight> {
    #[inline]
    fn next(&self, op: Slot) -> Option<Slot> {
        self[op.index()].next_in_line
    }
    #[inline]
    fn set_next(&mut self, op: Slot, next: Option<Slot>) {
        self[op.index()].next_in_line = next;
    }
}

#[derive(Debug, Clone, Copy)]
struct Outstanding {
    dispatched: Dispatched,
    start: Nanos,
    remaining: u32,
}

#[derive(Debug, Default)]
struct Die {
    queue: DieQueue,
    current: Option<u32>,
    /// When it took its current operation, or fell idle.
    since: Nanos,
}

/// How the dies spent their time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DieTimes {
    /// Per die, time spent on operations.
    pub busy_ns: Vec<Nanos>,
    /// Idle periods that ended (a die waiting for work between two operations).
    pub idle_slots: u64,
    pub idle_slot_ns: u128,
}

/// P/E suspension's state: the settings, and per die the program or erase under way and those
/// suspended (an erase, a program, or an erase below a program).
struct Suspension {
    config: SuspensionConfig,
    /// Programs and erases run as phases that may be suspended (false when only the write-queue
    /// limit is set).
    runs: bool,
    phases: PhaseCosts,
    /// Per die.
    current: Vec<Option<PeRun>>,
    suspended: Vec<Vec<PeRun>>,
    /// Per die: whether writes may suspend its erases (clean space above the watermark).
    wse_allowed: Vec<bool>,
    /// Per die: the writes waiting, for the overhead limit.
    writes_waiting: Vec<WriteBacklog>,
    /// Draws whether a cancelled pulse reached its target (`p_ach`).
    rng: u64,
}

impl Suspension {
    /// Whether `die`'s waiting writes are over the overhead limit at `now`: reads lose their priority.
    #[inline]
    fn over_write_limit(&self, die: usize, now: Nanos) -> bool {
        self.config.over_limit(&self.writes_waiting[die], now)
    }

    fn achieved(rng: &mut u64, p_ach: f64) -> bool {
        if p_ach <= 0.0 {
            return false;
        }
        // splitmix64: deterministic, a fixed seed.
        *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 / (1u64 << 53) as f64) < p_ach
    }
}

/// What a die takes next under P/E suspension.
enum Next {
    Start(u32),
    Resume,
}

/// Which optional features (P/E suspension and its write-queue limit, DiffECC, the host link,
/// P/E statistics) an [`EventCore`] may meet, fixed when the simulation is built: the plain core
/// compiles their checks away, and with them the registers they held on every operation.
pub trait Features {
    /// False: none of them is configured.
    const ANY: bool;
}

/// A device without any optional feature (most of them).
pub struct Plain;

/// A device with at least one: each is checked at run time.
pub struct Full;

impl Features for Plain {
    const ANY: bool = false;
}

impl Features for Full {
    const ANY: bool = true;
}

pub struct EventCore<F: Features = Full> {
    features: std::marker::PhantomData<F>,
    costs: OpCosts,
    /// P/E suspension or the write-queue limit (absent otherwise: the plain policy's path).
    suspension: Option<Box<Suspension>>,
    /// What suspension did; present when the device describes its P/E phases.
    pub(crate) pe_stats: Option<SuspensionStats>,
    /// DiffECC's write modes and segmented reads (`device.timing.diffecc`).
    pub(crate) diffecc: Option<Box<DiffEcc>>,
    policy: SchedulerKind,
    copy_back: bool,
    pub(crate) registers: PlaneRegisters,
    now: Nanos,
    /// When each die's current phase ends.
    events: PhaseEnds,
    dies: Fixed<Die>,
    /// When each channel's bus is free again.
    bus_free: Fixed<Nanos>,
    /// Each channel serves one die: a die's transfers never wait for another's.
    private_bus: bool,
    ops: Slab<InFlight>,
    requests: Slab<Outstanding>,
    completed: VecDeque<Completed>,
    pub(crate) times: DieTimes,
    /// Report dies that fall idle ([`EventCore::take_idle_dies`]), for background work.
    watch_idle: bool,
    fell_idle: Vec<u32>,
    /// Slab index of each operation of the request being submitted.
    submitting: Vec<u32>,
    /// Those of them with no predecessor left.
    ready: Vec<u32>,
    /// Per block: where it is, and the last operation issued on it that has not completed.
    blocks: Fixed<BlockPlace>,
    /// The geometry's page-to-block arithmetic, its divisor built once (every operation uses it).
    addressing: Addressing,
    /// The channel of each die.
    channel_of: Fixed<u32>,
    /// The controller's CPUs; their events follow the dies' in `events`.
    cpus: Cpus,
    cpu_per_channel: bool,
    /// The host interface (`device.timing.host_link_mb_s`); its events follow the CPUs'.
    link: Option<HostLink>,
    link_server: usize,
}

/// Counts a completed program or erase, with its run if P/E suspension ran it in phases.
fn count_pe(stats: &mut SuspensionStats, kind: OpKind, run: Option<PeRun>, now: Nanos, since: Nanos) {
    match kind {
        OpKind::Program => stats.programs += 1,
        OpKind::Erase => stats.erases += 1,
        _ => return,
    }
    let Some(run) = run.filter(|run| run.suspensions > 0) else { return };
    match run.kind {
        PeKind::Program => stats.suspended_programs += 1,
        PeKind::Erase => stats.suspended_erases += 1,
    }
    stats.original_ns += run.original as u128;
    stats.effective_ns += (now - run.first_start) as u128;
    stats.used_ns += (run.used + now - since) as u128;
}

/// Whether `device` uses none of the optional [`Features`]: its event core can be [`Plain`].
pub fn plain_device(device: &DeviceConfig) -> bool {
    let t = &device.timing;
    !t.suspension.enabled()
        && !t.suspension.limits_writes()
        && t.diffecc.is_none()
        && t.phases.is_none()
        && HostLink::new(t.host_link_mb_s).is_none()
}

impl<F: Features> EventCore<F> {
    pub fn new(costs: OpCosts, device: &DeviceConfig) -> Self {
        debug_assert!(F::ANY || plain_device(device), "a plain event core for a device with optional features");
        let g = &device.geometry;
        let dies = g.total_dies() as usize;
        let config = &device.timing.suspension;
        let cpu_per_channel = device.cpu.servers == CpuServers::PerChannel;
        let cpus = if cpu_per_channel { g.channels as usize } else { 1 };
        let link = HostLink::new(device.timing.host_link_mb_s);
        let suspension = (config.enabled() || config.limits_writes()).then(|| {
            Box::new(Suspension {
                config: config.clone(),
                runs: config.enabled(),
                phases: costs.phases.unwrap_or(PhaseCosts {
                    iterations: 1,
                    pulse: costs.program_array,
                    verify: 0,
                    erase_pulse: costs.erase,
                    erase_verify: 0,
                    reset: 0,
                    buffer: 0,
                }),
                current: vec![None; dies],
                suspended: vec![Vec::with_capacity(2); dies],
                wse_allowed: vec![true; dies],
                writes_waiting: vec![WriteBacklog::default(); dies],
                rng: 0,
            })
        });
        EventCore {
            features: std::marker::PhantomData,
            diffecc: device
                .timing
                .diffecc
                .as_ref()
                .map(|c| Box::new(DiffEcc::new(c, &costs, g.channels, g.total_dies()))),
            suspension,
            pe_stats: costs.phases.map(|_| SuspensionStats::default()),
            policy: device.timing.scheduler,
            copy_back: device.timing.copy_back,
            registers: PlaneRegisters::new(device.timing.plane_register, g.total_planes()),
            now: 0,
            events: PhaseEnds::new(dies + cpus + link.is_some() as usize),
            dies: Fixed::new((0..dies).map(|_| Die::default()).collect()),
            bus_free: Fixed::new(vec![0; g.channels as usize]),
            private_bus: g.chips_per_channel * g.dies_per_chip == 1,
            ops: Slab::new(),
            requests: Slab::new(),
            completed: VecDeque::new(),
            times: DieTimes { busy_ns: vec![0; dies], ..DieTimes::default() },
            watch_idle: false,
            fell_idle: Vec::new(),
            submitting: Vec::with_capacity(64),
            ready: Vec::with_capacity(64),
            addressing: g.addressing(),
            blocks: Fixed::new(
                g.blocks()
                    .map(|b| {
                        let plane = g.plane_of_block(b);
                        BlockPlace {
                            plane,
                            die: plane / g.planes_per_die,
                            first_write: None,
                            last_write: None,
                            first_erase: None,
                            last_erase: None,
                            open_programs: 0,
                            programming: None,
                            first_ready: None,
                            last_ready: None,
                            reads: 0,
                            erase: None,
                        }
                    })
                    .collect(),
            ),
            channel_of: Fixed::new((0..g.total_dies()).map(|d| g.channel_of_die(d)).collect()),
            cpus: Cpus::new(cpus),
            cpu_per_channel,
            link,
            link_server: dies + cpus,
            costs,
        }
    }

    /// The simulated time the model stands at.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Requests dispatched and not yet completed.
    pub fn outstanding(&self) -> usize {
        self.requests.live()
    }

    /// How the controller's CPUs spent their time.
    pub fn cpu_times(&self) -> &CpuTimes {
        &self.cpus.times
    }

    /// The next finished request, in completion order.
    pub fn pop_completed(&mut self) -> Option<Completed> {
        self.completed.pop_front()
    }

    /// Runs the next event; false when none is left.
    #[inline]
    fn step(&mut self) -> bool {
        // The die's entry is overwritten by its next phase, or cleared when it falls idle.
        let Some((at, server)) = self.events.first() else { return false };
        self.now = at;
        match server.checked_sub(self.dies.len()) {
            None => self.phase_done(server),
            Some(_) if F::ANY && server == self.link_server => self.link_done(),
            Some(cpu) => self.cpu_done(cpu),
        }
        true
    }

    /// Runs every event up to and including time `t`, then stands at `t`; stops early (and
    /// returns true) where a watched die falls idle.
    pub fn advance_to(&mut self, t: Nanos) -> bool {
        while self.events.first().is_some_and(|(at, _)| at <= t) {
            self.step();
            if !self.fell_idle.is_empty() {
                return true;
            }
        }
        self.now = self.now.max(t);
        false
    }

    /// Runs events until a request completes or a watched die falls idle; false when nothing is
    /// left to run.
    pub fn advance_to_completion(&mut self) -> bool {
        while self.completed.is_empty() && self.fell_idle.is_empty() {
            if !self.step() {
                return false;
            }
        }
        true
    }

    /// Runs every event left; time stands at the last one. Dies falling idle meanwhile are not
    /// reported: nothing is left to serve.
    pub fn drain(&mut self) {
        while self.step() {
            self.fell_idle.clear();
        }
    }

    /// Reports dies that fall idle from now on ([`EventCore::take_idle_dies`]).
    pub fn watch_idle_dies(&mut self) {
        self.watch_idle = true;
    }

    /// Whether a die fell idle since the last [`Self::take_idle_dies`].
    #[inline]
    pub fn has_idle_dies(&self) -> bool {
        !self.fell_idle.is_empty()
    }

    /// The dies that fell idle since the last call, in the order they did.
    pub fn take_idle_dies(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.fell_idle)
    }

    /// Memory held: the ordering state of every block (the part that grows with the device), the
    /// dies' and channels' state, and the operations and requests in flight (bounded by the
    /// queue depth).
    pub fn state_bytes(&self) -> usize {
        use std::mem::size_of;
        self.blocks.len() * size_of::<BlockPlace>()
            + self.dies.len() * size_of::<Die>()
            + self.bus_free.len() * size_of::<Nanos>()
            + self.channel_of.len() * size_of::<u32>()
            + self.ops.state_bytes()
            + self.requests.state_bytes()
    }

    /// A hint that the page `ppn` will be read soon: its block's place and ordering state,
    /// which a read of a block far from the last ones misses in the CPU cache. Changes nothing.
    #[inline]
    pub fn prefetch_read(&self, ppn: Ppn) {
        if let Some(b) = self.blocks.get(self.addressing.block_of(ppn).index()) {
            // Both ends: a place may straddle two cache lines.
            crate::mem::prefetch(&b.plane);
            crate::mem::prefetch(&b.erase);
        }
    }

    /// Hands the device a request's operations at the current time (after [`Self::advance_to`]
    /// its dispatch time). A request without operations completes at once, or when its data has
    /// crossed the host link.
    pub fn submit(&mut self, dispatched: Dispatched, ops: &[FlashOp]) {
        self.now = self.now.max(dispatched.at);
        // A host request's data crosses the host link, if there is one.
        let link = F::ANY && self.link.is_some() && dispatched.source == Source::Host && dispatched.request.pages > 0;
        let writes = link && dispatched.request.kind == IoKind::Write;
        let reads = link && dispatched.request.kind == IoKind::Read;
        if ops.is_empty() && !writes && !reads {
            let served = Served { start: self.now, finish: self.now };
            self.completed.push_back(Completed { dispatched, served });
            return;
        }
        let request = self.requests.insert(Outstanding { dispatched, start: Nanos::MAX, remaining: ops.len() as u32 });
        if let ([op], false) = (ops, writes || reads) {
            // One operation (most host requests): nothing of its request can wait for it or be
            // released by it, so it needs neither list.
            debug_assert!(op.dep.is_none(), "a chain within a request of one operation");
            let slot = self.issue(&dispatched, request, op, ops, reads);
            if self.ops[slot].waiting == 0 {
                self.enqueue(slot);
            }
            return;
        }
        self.submitting.clear();
        self.ready.clear();
        for op in ops {
            let slot = self.issue(&dispatched, request, op, ops, reads);
            self.submitting.push(slot);
            // What an operation waits for is known when it is issued: the operations issued
            // after it add nothing (but the host link, below).
            if self.ops[slot].waiting == 0 {
                self.ready.push(slot);
            }
        }
        if writes || reads {
            self.cross_link_at_submit(request, ops, writes);
            let in_flight = &self.ops;
            self.ready.retain(|&slot| in_flight[slot].waiting == 0);
        }
        // Only the operations ready now, enqueued once all are issued: enqueueing one may
        // complete others at once (reads the controller serves) and release their successors,
        // which must not be enqueued twice.
        for i in 0..self.ready.len() {
            let slot = self.ready[i];
            self.enqueue(slot);
        }
    }

    /// Issues `op`, an operation of the request in slot `request` (with `ops`, all of them; those
    /// before it already issued): its slot, with what it waits for counted.
    #[inline(always)]
    fn issue(&mut self, dispatched: &Dispatched, request: u32, op: &FlashOp, ops: &[FlashOp], reads: bool) -> u32 {
        let block = self.addressing.block_of(op.ppn);
        // Checked here, where the block enters the model; later lookups are not.
        let place = self.blocks.get(block.index()).unwrap_or_else(|| panic!("{:?} is not on the device", op.ppn));
        let BlockPlace { plane, mut die, .. } = *place;
        let compute = matches!(op.kind, OpKind::Compute(_));
        if compute {
            // CPU work runs on a CPU: the one shared, or that of its page's channel.
            die = if self.cpu_per_channel { self.channel_of[die as usize] } else { 0 };
        }
        let slot = self.ops.insert(InFlight {
            ppn: op.ppn,
            plane,
            die: die as u16,
            block: block.get(),
            request,
            next: None,
            next_write: None,
            prev_write: None,
            next_in_line: None,
            kind: op.kind,
            class: if dispatched.source == Source::Background {
                Class::Background
            } else {
                Class::of(op.kind, op.purpose)
            },
            phase: Phase::Queued,
            uses_bus: true,
            counted_read: false,
            from_controller: false,
            to_host: reads && op.purpose == Purpose::Host && matches!(op.kind, OpKind::Read),
            waiting: 0,
            sectors: op.sectors,
            mode: self.diffecc.as_deref().filter(|_| F::ANY).map_or(0, |d| {
                d.prefetch(op);
                d.submitted_mode(op, ops)
            }),
            started: Nanos::MAX,
        });
        if let Some(dep) = op.dep {
            let before = self.submitting[dep.get()];
            debug_assert!(self.ops[before].next.is_none(), "operations form chains: one successor each");
            self.ops[before].next = Some(Slot::new(slot));
            self.ops[slot].waiting += 1;
            // A GC move inside one plane: copy-back keeps the page in the chip.
            if self.copy_back
                && op.kind == OpKind::Program
                && op.purpose == Purpose::Gc
                && ops[dep.get()].purpose == Purpose::Gc
                && self.ops[before].kind == OpKind::Read
                && self.ops[before].plane == plane
            {
                self.ops[before].uses_bus = false;
                self.ops[slot].uses_bus = false;
            }
        }
        if !compute {
            self.order_on_block(slot, op.kind, op.ppn, block.index());
        }
        if F::ANY && op.kind == OpKind::Program {
            if let Some(s) = self.suspension.as_deref_mut() {
                s.writes_waiting[die as usize].issued(slot, dispatched.at, &s.config);
            }
        }
        slot
    }

    /// Makes `op` wait for what it must not overtake on its block: a program follows the erase
    /// of the block issued before it, if that erase is pending; an erase follows the programs
    /// issued since the erase before it, that erase, and every read of the block in flight. The
    /// programs of one block run one at a time in the order they become ready ([`Self::enqueue`]):
    /// the controller binds a page of the block to each when it issues it (what the FTL chose is
    /// the same page in time), so a program whose data is late never holds back the block's next
    /// ones. A read of a page whose
    /// program is still pending is served by the controller and waits for nothing on the block.
    /// `kind` and `ppn` are `op`'s, from its request (not read back from its slot); inlined into
    /// [`Self::issue`]: as a call it saved and restored registers on every operation.
    #[inline(always)]
    fn order_on_block(&mut self, op: u32, kind: OpKind, ppn: Ppn, block: usize) {
        let b = &mut self.blocks[block];
        match kind {
            OpKind::Read | OpKind::SpareRead => {
                let first = b.first_write;
                if self.pending_program_of(first, ppn).is_some() {
                    self.ops[op].from_controller = true;
                } else if self.blocks[block].erase.is_none() {
                    self.blocks[block].reads += 1;
                    self.ops[op].counted_read = true;
                }
            }
            OpKind::Program => {
                b.open_programs += 1;
                // Released by that erase when it completes.
                self.ops[op].waiting += b.last_erase.is_some() as u32;
                self.append_write(op, block);
            }
            OpKind::Erase => {
                // An erase already waiting for the reads in flight goes first; this one follows it.
                if b.reads > 0 && b.erase.is_none() {
                    b.erase = Some(Slot::new(op));
                    self.ops[op].waiting += 1;
                }
                let b = &mut self.blocks[block];
                self.ops[op].waiting += b.open_programs + b.last_erase.is_some() as u32;
                b.open_programs = 0;
                if b.first_erase.is_none() {
                    b.first_erase = Some(Slot::new(op));
                }
                b.last_erase = Some(Slot::new(op));
                self.append_write(op, block);
            }
            OpKind::Compute(_) => unreachable!("CPU work is not ordered on a block"),
        }
    }

    /// The program of `ppn` among a block's pending writes from `first` on, if any.
    #[inline]
    fn pending_program_of(&self, first: Option<Slot>, ppn: Ppn) -> Option<Slot> {
        let mut write = first;
        while let Some(w) = write {
            let o = &self.ops[w.index()];
            if o.kind == OpKind::Program && o.ppn == ppn {
                return Some(w);
            }
            write = o.next_write;
        }
        None
    }

    /// Appends the program or erase `op` to its block's pending writes.
    #[inline]
    fn append_write(&mut self, op: u32, block: usize) {
        let b = &mut self.blocks[block];
        let before = b.last_write.replace(Slot::new(op));
        self.ops[op].prev_write = before;
        match before {
            Some(w) => self.ops[w.index()].next_write = Some(Slot::new(op)),
            None => b.first_write = Some(Slot::new(op)),
        }
    }

    /// `op` completed: the bookkeeping of its block, and whatever waited on it there is released.
    #[inline]
    fn release_on_block(&mut self, o: &InFlight, op: u32) {
        let b = &mut self.blocks[o.block as usize];
        match o.kind {
            OpKind::Read | OpKind::SpareRead => {
                if o.counted_read {
                    b.reads -= 1;
                    if b.reads == 0 {
                        if let Some(erase) = b.erase.take() {
                            self.release(erase.index());
                        }
                    }
                }
            }
            OpKind::Program => {
                debug_assert_eq!(b.programming, Some(Slot::new(op)), "a block programs one page at a time");
                b.programming = b.first_ready;
                if let Some(next) = b.first_ready {
                    b.first_ready = self.ops[next.index()].next_in_line;
                    if b.first_ready.is_none() {
                        b.last_ready = None;
                    }
                    self.enqueue_on_die(next.index());
                }
                self.unlink_write(o);
                // The erases issued before it have completed: the oldest pending one, if any,
                // was issued after it and counted it.
                let b = &mut self.blocks[o.block as usize];
                match b.first_erase {
                    Some(erase) => self.release(erase.index()),
                    None => b.open_programs -= 1,
                }
            }
            OpKind::Erase => {
                debug_assert_eq!(b.first_erase, Some(Slot::new(op)), "a block's erases complete in issue order");
                self.unlink_write(o);
                // Release the programs issued after it, up to the next erase, and that erase.
                let mut next = o.next_write;
                let mut next_erase = None;
                while let Some(w) = next {
                    let after = self.ops[w.index()];
                    self.release(w.index());
                    if after.kind == OpKind::Erase {
                        next_erase = Some(w);
                        break;
                    }
                    next = after.next_write;
                }
                let b = &mut self.blocks[o.block as usize];
                b.first_erase = next_erase;
                if next_erase.is_none() {
                    b.last_erase = None;
                }
            }
            OpKind::Compute(_) => {}
        }
    }

    /// Takes the completed program or erase `o` out of its block's pending writes.
    #[inline]
    fn unlink_write(&mut self, o: &InFlight) {
        match o.prev_write {
            Some(w) => self.ops[w.index()].next_write = o.next_write,
            None => self.blocks[o.block as usize].first_write = o.next_write,
        }
        match o.next_write {
            Some(w) => self.ops[w.index()].prev_write = o.prev_write,
            None => self.blocks[o.block as usize].last_write = o.prev_write,
        }
    }

    /// One predecessor of `op` completed; it enters its die's queue when none is left.
    #[inline]
    fn release(&mut self, op: u32) {
        let o = &mut self.ops[op];
        o.waiting -= 1;
        if o.waiting == 0 {
            self.enqueue(op);
        }
    }

    #[inline]
    fn die_of(&self, op: u32) -> usize {
        self.ops[op].die as usize
    }

    // Inlined where an operation is issued or released: a call saved and restored six registers.
    #[inline(always)]
    fn enqueue(&mut self, op: u32) {
        if let OpKind::Compute(_) = self.ops[op].kind {
            let cpu = self.die_of(op);
            if let Some(op) = self.cpus.arrive(cpu, op, self.now) {
                self.start_on_cpu(cpu, op);
            }
            return;
        }
        if self.ops[op].from_controller {
            self.ops[op].started = self.now;
            self.retire(op);
            return;
        }
        if self.ops[op].kind == OpKind::Program {
            // One program of a block at a time, in the order their data became ready.
            let b = &mut self.blocks[self.ops[op].block as usize];
            if b.programming.is_some() {
                match b.last_ready.replace(Slot::new(op)) {
                    Some(last) => self.ops[last.index()].next_in_line = Some(Slot::new(op)),
                    None => b.first_ready = Some(Slot::new(op)),
                }
                return;
            }
            b.programming = Some(Slot::new(op));
        }
        self.enqueue_on_die(op);
    }

    /// `op`, ready, enters its die's queue.
    #[inline(always)]
    fn enqueue_on_die(&mut self, op: u32) {
        let (die, class) = (self.die_of(op), self.ops[op].class);
        self.dies[die].queue.push(&mut self.ops, self.policy, op, class);
        if self.dies[die].current.is_none() {
            self.start_next(die);
        } else if F::ANY && self.suspension.is_some() {
            self.preempt(die, op);
        }
    }

    /// `op` just queued on busy `die`: a read suspends the program or erase under way where the
    /// settings allow it, and so does a write an erase under Write-Suspend-Erase. Out of line:
    /// inlined, it made every enqueue save and restore registers for it.
    #[inline(never)]
    fn preempt(&mut self, die: usize, op: u32) {
        let now = self.now;
        let Some(s) = self.suspension.as_deref_mut() else { return };
        let Some(run) = s.current[die] else { return };
        let current = self.dies[die].current.expect("a die with a run under way has an operation");
        if self.ops[current].phase != Phase::Finishing {
            return;
        }
        let queue = &self.dies[die].queue;
        if s.over_write_limit(die, now) {
            return;
        }
        let o = &self.ops[op];
        let by_read = o.class == Class::Read;
        let allowed = match run.kind {
            PeKind::Program => by_read && s.config.program != ProgramSuspension::None,
            PeKind::Erase if by_read => s.config.erase,
            PeKind::Erase => {
                s.config.write_suspends_erase
                    && o.kind == OpKind::Program
                    && o.class == Class::Base
                    && s.wse_allowed[die]
                    && !queue.has_reads()
            }
        };
        if !allowed {
            return;
        }
        let ipc = s.config.program == ProgramSuspension::Ipc;
        let (rng, p_ach) = (&mut s.rng, s.config.p_ach);
        let Some(suspend) = run.suspend(now, ipc, &s.phases, || Suspension::achieved(rng, p_ach)) else { return };
        if s.over_write_limit(die, suspend.at) {
            // The oldest write will have waited too long when the die could serve the read.
            return;
        }
        s.current[die] = Some(PeRun { suspensions: run.suspensions + 1, ..suspend.rest });
        if let Some(stats) = self.pe_stats.as_mut() {
            match (run.kind, by_read) {
                (PeKind::Erase, true) => stats.erase_by_read += 1,
                (PeKind::Erase, false) => stats.erase_by_write += 1,
                (PeKind::Program, _) if suspend.cancelled => stats.program_cancelled += 1,
                (PeKind::Program, _) => stats.program_at_phase_end += 1,
            }
            stats.preemptions += 1;
            stats.wait_for_suspension_ns += (suspend.at - now) as u128;
        }
        self.ops[current].phase = Phase::Suspending;
        self.events.set(die, suspend.at, now);
    }

    /// `die`'s program or erase has reached its suspension point: it waits on the die's stack
    /// of suspended operations while the die serves what preempted it.
    fn suspend_current(&mut self, die: usize) {
        let now = self.now;
        let d = &mut self.dies[die];
        let op = d.current.take().expect("a suspension belongs to a die's operation");
        self.times.busy_ns[die] += now - d.since;
        let s = self.suspension.as_deref_mut().expect("suspension is on");
        let mut run = s.current[die].take().expect("a suspended operation has a run");
        debug_assert_eq!(run.op, op);
        run.used += now - d.since;
        d.since = now;
        s.suspended[die].push(run);
        debug_assert!(s.suspended[die].len() <= 2, "at most an erase and a program are suspended");
        self.start_next(die);
    }

    /// The current phase of `op`, `die`'s operation, ends at `at`.
    #[inline(always)]
    fn phase_ends(&mut self, die: usize, op: u32, phase: Phase, at: Nanos) {
        let o = &mut self.ops[op];
        o.phase = phase;
        if phase == Phase::Finishing {
            // Its completion will touch these; many other events usually run before it, so
            // asking for them now hides the memory latency (a hint: no state changes).
            let (next, next_write, request, block) = (o.next, o.next_write, o.request, o.block as usize);
            if let Some(next) = next {
                crate::mem::prefetch(&self.ops[next.index()]);
            }
            if let Some(next) = next_write {
                crate::mem::prefetch(&self.ops[next.index()]);
            }
            crate::mem::prefetch(&self.requests[request]);
            if let Some(block) = self.blocks.get(block) {
                crate::mem::prefetch(block);
            }
        }
        self.events.set(die, at, self.now);
    }

    /// When a transfer of `op`'s page asked for at `at` ends: the bus is taken from when it is
    /// free.
    #[inline(always)]
    fn transfer_end(&mut self, op: u32, at: Nanos) -> Nanos {
        let o = &self.ops[op];
        if !o.uses_bus {
            // A copy-back: the page stays in the plane's register.
            return at;
        }
        let channel = self.channel_of[o.die as usize] as usize;
        if F::ANY && self.diffecc.is_some() && o.kind == OpKind::Read {
            return self.read_out_segments(op, channel, at);
        }
        let time = if o.kind == OpKind::SpareRead { self.costs.spare_transfer } else { self.costs.page_transfer };
        let end = self.bus_free[channel].max(at) + time;
        self.bus_free[channel] = end;
        end
    }

    /// DiffECC: the read `op` transfers the segments it needs over `channel` from `at` on and
    /// decodes them; returns when its data is decoded.
    #[inline(never)]
    fn read_out_segments(&mut self, op: u32, channel: usize, at: Nanos) -> Nanos {
        let o = &self.ops[op];
        let d = self.diffecc.as_deref_mut().expect("DiffECC is on");
        let (bus_end, decoded) = d.read_out(channel, o.ppn, o.sectors, self.bus_free[channel], at);
        self.bus_free[channel] = bus_end;
        decoded
    }

    /// The idle die `die` takes its next operation, if it has one.
    fn start_next(&mut self, die: usize) {
        let now = self.now;
        let next = match F::ANY && self.suspension.is_some() {
            false => self.dies[die].queue.pop(&self.ops).map(Next::Start),
            true => self.next_under_suspension(die),
        };
        let op = match next {
            Some(Next::Start(op)) => Some(op),
            Some(Next::Resume) => {
                self.resume(die);
                return;
            }
            None => None,
        };
        let Some(op) = op else {
            self.events.clear(die);
            self.dies[die].since = now;
            if let Some(d) = self.diffecc.as_deref_mut().filter(|_| F::ANY) {
                d.fell_idle(die, now);
            }
            if self.watch_idle {
                self.fell_idle.push(die as u32);
            }
            return;
        };
        let d = &mut self.dies[die];
        if d.since < now {
            // It was idle since then (a die that completes one operation and takes the next at
            // once has no idle slot).
            self.times.idle_slots += 1;
            self.times.idle_slot_ns += (now - d.since) as u128;
        }
        d.current = Some(op);
        d.since = now;
        if let Some(d) = self.diffecc.as_deref_mut().filter(|_| F::ANY) {
            d.took_work(die, now);
        }
        let o = &mut self.ops[op];
        o.started = now;
        let (kind, plane, ppn) = (o.kind, o.plane, o.ppn);
        // One place sets the phase's end, so that it and the transfer inline here.
        let (phase, end) = match kind {
            OpKind::Read | OpKind::SpareRead => {
                if self.registers.read(plane, ppn) {
                    (Phase::Finishing, self.transfer_end(op, now))
                } else if self.private_bus || !self.ops[op].uses_bus {
                    // No other die can take the bus before the sensing ends (a copy-back needs
                    // none): the transfer is booked now, and the read is one event, not two.
                    (Phase::Finishing, self.transfer_end(op, now + self.costs.read_array))
                } else {
                    (Phase::Sensing, now + self.costs.read_array)
                }
            }
            OpKind::Program => {
                self.registers.program(plane, ppn);
                let ispp_start = self.transfer_end(op, now);
                let end = ispp_start + self.program_time(die, op);
                match F::ANY && self.suspension.is_some() {
                    false => (Phase::Finishing, end),
                    true => (Phase::Finishing, self.start_program_under_suspension(die, op, ispp_start, end)),
                }
            }
            OpKind::Erase => {
                self.registers.erase(plane, ppn, self.costs.geometry.pages_per_block);
                if let Some(d) = self.diffecc.as_deref_mut().filter(|_| F::ANY) {
                    d.erased(ppn, self.costs.geometry.pages_per_block);
                }
                let mut end = now + self.costs.erase;
                if let Some(s) = self.suspension.as_deref_mut().filter(|s| F::ANY && s.runs) {
                    let run = PeRun::erase(op, now, &s.phases);
                    end = run.end(&s.phases);
                    s.current[die] = Some(run);
                }
                (Phase::Finishing, end)
            }
            OpKind::Compute(_) => unreachable!("CPU work runs on a CPU, not a die"),
        };
        self.phase_ends(die, op, phase, end);
    }

    /// The program `op` that `die` takes now under P/E suspension (or its write-queue limit),
    /// its data in from `ispp_start` and its array time ending at `end` if it runs whole:
    /// counted as started, and run as phases that may be suspended; returns when it ends.
    #[inline(never)]
    fn start_program_under_suspension(&mut self, die: usize, op: u32, ispp_start: Nanos, end: Nanos) -> Nanos {
        let dispatched = self.requests[self.ops[op].request].dispatched.at;
        let s = self.suspension.as_deref_mut().expect("suspension is on");
        s.writes_waiting[die].started(op, dispatched);
        if !s.runs {
            return end;
        }
        let run = PeRun::program(op, self.now, ispp_start, &s.phases);
        s.current[die] = Some(run);
        run.end(&s.phases)
    }

    /// The array time of the program `op` that `die` takes now: by its DiffECC write mode (a host
    /// write's chosen now, from the die's queues or the device's), or the device's.
    #[inline]
    fn program_time(&mut self, die: usize, op: u32) -> Nanos {
        let Some(d) = self.diffecc.as_deref_mut().filter(|_| F::ANY) else { return self.costs.program_array };
        let dies = &self.dies;
        let load = |device: bool| match device {
            false => QueueLoad::of([&dies[die].queue]),
            true => QueueLoad::of(dies.iter().map(|d| &d.queue)),
        };
        let o = &self.ops[op];
        d.program(die, o.ppn, o.mode, load, self.now)
    }

    /// What idle `die` takes next under P/E suspension (spec 3.6): reads first (all of them,
    /// before anything suspended resumes), then a suspended program, then, below a suspended
    /// erase, the writes Write-Suspend-Erase lets through, then the erase; the base queue and
    /// background work when nothing is suspended. Past the write-queue limit, reads lose their
    /// priority.
    fn next_under_suspension(&mut self, die: usize) -> Option<Next> {
        let s = self.suspension.as_deref().expect("suspension is on");
        let queue = &mut self.dies[die].queue;
        let over = s.over_write_limit(die, self.now);
        if !over {
            if let Some(read) = queue.pop_read(&self.ops) {
                return Some(Next::Start(read));
            }
        }
        match s.suspended[die].last().map(|run| run.kind) {
            Some(PeKind::Program) => return Some(Next::Resume),
            Some(PeKind::Erase) => {
                let write_first = s.config.write_suspends_erase
                    && s.wse_allowed[die]
                    && !queue.has_reads()
                    && queue.front_base().is_some_and(|op| self.ops[op].kind == OpKind::Program);
                return Some(if write_first {
                    Next::Start(queue.pop_base(&self.ops).expect("a write waits"))
                } else {
                    Next::Resume
                });
            }
            None => {}
        }
        let ops = &self.ops;
        queue
            .pop_base(ops)
            .or_else(|| queue.pop_read(ops))
            .or_else(|| queue.pop_base_or_background(ops))
            .map(Next::Start)
    }

    /// Idle `die` resumes the operation it suspended last.
    fn resume(&mut self, die: usize) {
        let now = self.now;
        let s = self.suspension.as_deref_mut().expect("suspension is on");
        let run = s.suspended[die].pop().expect("a suspended operation to resume").resume(now, &s.phases);
        let end = run.end(&s.phases);
        s.current[die] = Some(run);
        let d = &mut self.dies[die];
        if d.since < now {
            self.times.idle_slots += 1;
            self.times.idle_slot_ns += (now - d.since) as u128;
        }
        d.current = Some(run.op);
        d.since = now;
        if let Some(d) = self.diffecc.as_deref_mut() {
            d.took_work(die, now);
        }
        self.phase_ends(die, run.op, Phase::Finishing, end);
    }

    /// Lets writes suspend `die`'s erases or not (its clean space against the watermark).
    pub fn set_wse_allowed(&mut self, die: usize, allowed: bool) {
        if let Some(s) = self.suspension.as_deref_mut() {
            s.wse_allowed[die] = allowed;
        }
    }

    /// `cpu` takes the CPU work `op` now.
    fn start_on_cpu(&mut self, cpu: usize, op: u32) {
        let o = &mut self.ops[op];
        let OpKind::Compute(task) = o.kind else { unreachable!("a CPU runs CPU work") };
        o.started = self.now;
        self.events.set(self.dies.len() + cpu, self.now + self.costs.cpu(task), self.now);
    }

    /// `cpu` has finished its task at the current time: what waited for it is released, and it
    /// takes the next task queued on it.
    fn cpu_done(&mut self, cpu: usize) {
        let (done, next) = self.cpus.finish(cpu, self.now);
        match next {
            Some(op) => self.start_on_cpu(cpu, op),
            None => self.events.clear(self.dies.len() + cpu),
        }
        self.retire(done);
    }

    /// The phase of `die`'s operation has ended at the current time.
    fn phase_done(&mut self, die: usize) {
        let op = self.dies[die].current.expect("an event belongs to a die's operation");
        match self.ops[op].phase {
            Phase::Sensing => {
                let end = self.transfer_end(op, self.now);
                self.phase_ends(die, op, Phase::Finishing, end);
            }
            Phase::Finishing => self.complete(die, op),
            Phase::Suspending => self.suspend_current(die),
            Phase::Queued => unreachable!("a queued operation has no phase to end"),
        }
    }

    /// `op` has finished: its die is free, its successors perhaps ready, its request perhaps done.
    fn complete(&mut self, die: usize, op: u32) {
        self.times.busy_ns[die] += self.now - self.dies[die].since;
        if let Some(stats) = self.pe_stats.as_mut().filter(|_| F::ANY) {
            let run = self.suspension.as_deref_mut().and_then(|s| s.current[die].take());
            count_pe(stats, self.ops[op].kind, run, self.now, self.dies[die].since);
        }
        // Free from now: an operation it takes at once follows without an idle slot.
        self.dies[die].since = self.now;
        self.dies[die].current = None;
        self.retire(op);
        if self.dies[die].current.is_none() {
            self.start_next(die);
        }
    }

    /// `op` is done (on its die, or served by the controller): what waited for it is released,
    /// and its request completes with its last operation.
    fn retire(&mut self, op: u32) {
        let o = self.ops[op];
        self.ops.remove(op);
        self.release_on_block(&o, op);
        if let Some(next) = o.next {
            self.release(next.index());
        }
        let request = &mut self.requests[o.request];
        request.start = request.start.min(o.started);
        if F::ANY && o.to_host {
            let bytes = self.op_bytes(o.sectors);
            self.cross_link(o.request, bytes, 0);
        }
        self.one_done(o.request);
    }

    /// One part of `request` (an operation, or a transfer over the host link) is done; the
    /// request completes with its last.
    #[inline(always)]
    fn one_done(&mut self, index: u32) {
        let request = &mut self.requests[index];
        request.remaining -= 1;
        if request.remaining == 0 {
            let served = Served { start: request.start, finish: self.now };
            if let Some(stats) = self.pe_stats.as_mut().filter(|_| F::ANY) {
                if request.dispatched.source == Source::Eviction {
                    stats.device_writes += 1;
                    stats.device_write_ns += (self.now - request.dispatched.at) as u128;
                }
            }
            self.completed.push_back(Completed { dispatched: request.dispatched, served });
            self.requests.remove(index);
        }
    }

    /// The host link's part of a host request just submitted: a write's data crosses it before
    /// the write's host operations may start (the FTL's mapping reads need not wait for it); a
    /// read's pages cross it as the flash reads them (`to_host`), and what no flash operation
    /// reads (buffer hits, unmapped pages) crosses it now.
    fn cross_link_at_submit(&mut self, request: u32, ops: &[FlashOp], write: bool) {
        let g = &self.costs.geometry;
        let req = self.requests[request].dispatched.request;
        let untouched = (req.span.head as u64 + req.span.tail as u64) * g.sector_size as u64;
        let bytes = req.pages as u64 * g.page_size as u64 - untouched;
        if write {
            let link = self.link.as_mut().expect("the link is on");
            let before = link.gated.len();
            for (&slot, op) in self.submitting.iter().zip(ops) {
                if op.purpose == Purpose::Host {
                    self.ops[slot].waiting += 1;
                    link.gated.push_back(slot);
                }
            }
            let gated = (link.gated.len() - before) as u32;
            self.cross_link(request, bytes, gated);
            return;
        }
        let from_flash: u64 = ops
            .iter()
            .zip(&self.submitting)
            .filter(|(_, &slot)| self.ops[slot].to_host)
            .map(|(op, _)| self.op_bytes(op.sectors))
            .sum();
        if bytes > from_flash {
            self.cross_link(request, bytes - from_flash, 0);
        }
    }

    /// The bytes of a page a host operation touches.
    #[inline]
    fn op_bytes(&self, sectors: Option<Sectors>) -> u64 {
        let g = &self.costs.geometry;
        sectors.map_or(g.page_size as u64, |s| s.count.get() as u64 * g.sector_size as u64)
    }

    /// `bytes` of `request` cross the host link from now on, holding back the last `gated`
    /// operations queued on it; the transfer is one more part of its request.
    fn cross_link(&mut self, request: u32, bytes: u64, gated: u32) {
        let link = self.link.as_mut().expect("the link is on");
        let first = link.next_end().is_none();
        let (start, end) = link.reserve(self.now, bytes, request, gated);
        let r = &mut self.requests[request];
        r.start = r.start.min(start);
        r.remaining += 1;
        if first {
            self.events.set(self.link_server, end, self.now);
        }
    }

    /// The host link's first transfer has ended: the operations it held back may start, and
    /// its request may complete.
    fn link_done(&mut self) {
        let link = self.link.as_mut().expect("a link event needs the link");
        let transfer = link.pop();
        match link.next_end() {
            Some(end) => self.events.set(self.link_server, end, self.now),
            None => self.events.clear(self.link_server),
        }
        for _ in 0..transfer.gated {
            let slot = self.link.as_mut().expect("the link is on").gated.pop_front().expect("a gated operation");
            self.release(slot);
        }
        self.one_done(transfer.request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::{CpuTask, OpLog, Purpose};
    use crate::host::SectorSpan;
    use crate::workload::IoKind;

    /// 2 channels x 1 chip x 1 die x 1 plane, 16 blocks per plane of 4 pages (interleaved: even
    /// PBN on die 0, channel 0; odd PBN on die 1, channel 1).
    fn two_dies(scheduler: &str, copy_back: bool) -> EventCore {
        device(2, 1, scheduler, copy_back)
    }

    fn device(channels: u32, chips_per_channel: u32, scheduler: &str, copy_back: bool) -> EventCore {
        device_with(channels, chips_per_channel, scheduler, copy_back, "")
    }

    /// [`device`] with more TOML tables (`extra`) appended.
    fn device_with(channels: u32, chips_per_channel: u32, scheduler: &str, copy_back: bool, extra: &str) -> EventCore {
        let c = config_with(channels, chips_per_channel, scheduler, copy_back, extra);
        EventCore::new(OpCosts::new(&c.device), &c.device)
    }

    /// The configuration of [`device_with`].
    fn config_with(
        channels: u32,
        chips_per_channel: u32,
        scheduler: &str,
        copy_back: bool,
        extra: &str,
    ) -> crate::config::Config {
        ConfigBuilder::new()
            .toml(
                "test",
                &format!(
                    r#"
                [device]
                overprovisioning = 0.5
                [device.geometry]
                channels = {channels}
                chips_per_channel = {chips_per_channel}
                dies_per_chip = 1
                planes_per_die = 1
                blocks_per_plane = 16
                pages_per_block = 4
                page_size = 4096
                spare_size = 0
                spare_usable = 0
                [device.latency]
                read_us = 25.0
                program_us = 200.0
                erase_us = 1500.0
                bus_ns_per_byte = 10.0
                [device.timing]
                model = "parallel"
                plane_register = false
                scheduler = "{scheduler}"
                copy_back = {copy_back}
                [gc]
                free_blocks_low = 1
                {extra}
                "#
                ),
            )
            .unwrap()
            .build()
            .unwrap()
    }

    /// One operation (kind, purpose, page number), each a chain of its own.
    type Op = (OpKind, Purpose, u32);
    /// A request: its dispatch time and its operations.
    type Timed<'a> = (Nanos, &'a [Op]);

    const XFER: Nanos = 40_960;
    const READ: Nanos = 25_000 + XFER;
    const PROGRAM: Nanos = XFER + 200_000;

    fn request(index: u64, at: Nanos) -> Dispatched {
        let request = PageRequest {
            arrival: at,
            kind: IoKind::Read,
            first: crate::flash::Lpn::new(0),
            pages: 1,
            span: SectorSpan::WHOLE,
        };
        Dispatched { index, request, at, source: Source::Host }
    }

    /// Submits each request's operations at its time (as one chain if `chained`, else each a
    /// chain of its own), runs the device dry and returns how each request was served, by index.
    fn serve<F: Features>(core: &mut EventCore<F>, requests: &[Timed], chained: bool) -> Vec<Served> {
        let mut log = OpLog::new();
        for (i, (at, ops)) in requests.iter().enumerate() {
            log.clear();
            for &(kind, purpose, ppn) in ops.iter() {
                if !chained {
                    log.begin_chain();
                }
                log.push(kind, purpose, Ppn::new(ppn));
            }
            core.advance_to(*at);
            core.submit(request(i as u64, *at), log.ops());
        }
        core.drain();
        let mut done: Vec<_> = std::iter::from_fn(|| core.pop_completed()).collect();
        done.sort_by_key(|c| c.dispatched.index);
        done.iter().map(|c| c.served).collect()
    }

    /// [`serve`] with every operation a chain of its own, as (start, finish) pairs.
    fn run(core: &mut EventCore, requests: &[Timed]) -> Vec<(Nanos, Nanos)> {
        serve(core, requests, false).iter().map(|s| (s.start, s.finish)).collect()
    }

    /// The two-die device with DiffECC (Table 2.3's modes on its 200 us baseline program).
    fn diffecc(settings: &str) -> EventCore {
        let table = format!("[device.timing.diffecc]\nprogram_us = [200.0, 538.0, 606.0, 754.0]\n{settings}");
        device_with(2, 1, "rps", false, &table)
    }

    /// Submits one request of one chain of `ops` at `at`, the host operations touching `sectors`.
    fn submit_chain(core: &mut EventCore, index: u64, at: Nanos, ops: &[Op], sectors: Option<crate::flash::Sectors>) {
        let mut log = OpLog::new();
        for &(kind, purpose, ppn) in ops {
            log.push(kind, purpose, Ppn::new(ppn));
        }
        if let Some(sectors) = sectors {
            log.set_host_sectors(0, sectors);
        }
        core.advance_to(at);
        core.submit(request(index, at), log.ops());
    }

    fn finishes(core: &mut EventCore) -> Vec<Nanos> {
        core.drain();
        let mut done: Vec<_> = std::iter::from_fn(|| core.pop_completed()).collect();
        done.sort_by_key(|c| c.dispatched.index);
        done.iter().map(|c| c.served.finish - c.dispatched.at).collect()
    }

    /// Paper 001 chapter 2: a host write in N = 8 programs for 754 us; reads of its page transfer
    /// and decode the segments they need (Table 2.3, spec 2.4.3); a GC relocation runs in N = 1,
    /// and reads of the moved page decode it whole.
    #[test]
    fn diffecc_programs_by_write_mode_and_reads_by_page_mode_and_sectors() {
        let mut core = diffecc("policy = \"fixed\"\nsegments = 8");
        let one_sector = crate::flash::Sectors { first: 3, count: std::num::NonZeroU8::new(1).unwrap() };
        submit_chain(&mut core, 0, 0, &[(OpKind::Program, Purpose::Host, 0)], None);
        submit_chain(&mut core, 1, 1000 * US, &[(OpKind::Read, Purpose::Host, 0)], Some(one_sector));
        submit_chain(&mut core, 2, 2000 * US, &[(OpKind::Read, Purpose::Host, 0)], None);
        let relocation = [(OpKind::Read, Purpose::Gc, 0), (OpKind::Program, Purpose::Gc, 8)];
        submit_chain(&mut core, 3, 3000 * US, &relocation, None);
        submit_chain(&mut core, 4, 5000 * US, &[(OpKind::Read, Purpose::Host, 8)], None);
        assert_eq!(finishes(&mut core), [XFER + 754_000, 35_900, 76_360, 76_360 + PROGRAM, READ + 41_200]);
        let stats = core.diffecc.as_deref().unwrap().stats();
        assert_eq!((stats.writes_by_mode, stats.reads_by_mode), ([0, 0, 0, 1], [1, 0, 0, 3]));
    }

    /// Controlled switching (spec 2.7.3) on one die with a 1 ms window: T_idle_avg is 0 until a
    /// window with an idle slot closes, so the first two writes run in N = 1; the third sees the
    /// 2.76 ms slot that ended at 3 ms (window [3, 4) ms), enough for N = 8.
    #[test]
    fn diffecc_switches_to_a_slow_mode_once_the_die_has_idle_time() {
        let mut core = diffecc("window_ms = 1.0");
        for (i, at) in [0, 3000 * US, 5000 * US].into_iter().enumerate() {
            submit_chain(&mut core, i as u64, at, &[(OpKind::Program, Purpose::Host, i as u32)], None);
        }
        assert_eq!(finishes(&mut core), [PROGRAM, PROGRAM, XFER + 754_000]);
        assert_eq!(core.diffecc.as_deref().unwrap().stats().writes_by_mode, [2, 0, 0, 1]);
    }

    #[test]
    fn independent_ops_on_two_dies_overlap() {
        let mut t = two_dies("fifo", false);
        let done = run(&mut t, &[(0, &[(OpKind::Program, Purpose::Host, 0), (OpKind::Program, Purpose::Host, 4)])]);
        assert_eq!(done, [(0, PROGRAM)]);
    }

    #[test]
    fn a_chain_serialises_across_dies_and_a_die_serves_fifo() {
        let mut t = two_dies("fifo", false);
        // A translation read on die 0, then a read on die 1 that waits for it.
        let chain = [(OpKind::Read, Purpose::Translation, 0), (OpKind::Read, Purpose::Host, 4)];
        assert_eq!(serve(&mut t, &[(0, &chain)], true), [Served { start: 0, finish: 2 * READ }]);
        // An erase, then a read of another block on the same die: the read waits for the erase.
        let done = run(&mut t, &[(0, &[(OpKind::Erase, Purpose::Gc, 8)]), (10, &[(OpKind::Read, Purpose::Host, 1)])]);
        assert_eq!(done, [(2 * READ, 2 * READ + 1_500_000), (2 * READ + 1_500_000, 2 * READ + 1_500_000 + READ)]);
    }

    #[test]
    fn an_operation_waiting_for_its_predecessor_does_not_hold_back_an_independent_one() {
        // Request 0: a translation read on die 0 (block 0), then a program on die 1 (block 1)
        // that must wait for it. Request 1, a read on die 1 (block 3) issued just after, finds
        // die 1 idle and runs at once: the waiting program does not hold it back.
        let mut t = two_dies("fifo", false);
        let first = [(OpKind::Read, Purpose::Translation, 0), (OpKind::Program, Purpose::Host, 4)];
        let done = serve(&mut t, &[(0, &first), (1, &[(OpKind::Read, Purpose::Host, 12)])], true);
        assert_eq!(done[1], Served { start: 1, finish: 1 + READ });
        // The program starts when both the translation read (at READ) and the die are done
        // (at 1 + READ), and its transfer shares channel 1 with nobody.
        assert_eq!(done[0], Served { start: 0, finish: 1 + READ + PROGRAM });
    }

    #[test]
    fn a_read_of_a_page_being_programmed_is_served_by_the_controller() {
        // A program of page 4 (block 1) waits for a translation read on die 0; a read of page 4
        // issued later is served at once from the data the controller is programming.
        let mut t = two_dies("fifo", false);
        let first = [(OpKind::Read, Purpose::Translation, 0), (OpKind::Program, Purpose::Host, 4)];
        let done = serve(&mut t, &[(0, &first), (1, &[(OpKind::Read, Purpose::Host, 4)])], true);
        assert_eq!(done[0].finish, READ + PROGRAM);
        assert_eq!(done[1], Served { start: 1, finish: 1 });
        assert_eq!(t.times.busy_ns[1], PROGRAM, "die 1 did the program only");
    }

    #[test]
    fn a_read_passes_a_pending_program_of_another_page_of_its_block() {
        // Page 4 (block 1, die 1) is programmed; then a program of page 5 waits for a translation
        // read on die 0, and a read of page 4 issued meanwhile runs at once on die 1.
        let second = [(OpKind::Read, Purpose::Translation, 0), (OpKind::Program, Purpose::Host, 5)];
        let requests: &[Timed] = &[
            (0, &[(OpKind::Program, Purpose::Host, 4)]),
            (PROGRAM, &second),
            (PROGRAM + 1, &[(OpKind::Read, Purpose::Host, 4)]),
        ];
        let done = serve(&mut two_dies("fifo", false), requests, true);
        assert_eq!(done[2], Served { start: PROGRAM + 1, finish: PROGRAM + 1 + READ });
    }

    #[test]
    fn programs_of_a_block_do_not_wait_for_each_other_and_an_erase_separates_them() {
        // Die 0 erases block 0 until ERASE. A program of page 5 (block 1, die 1) waits for a
        // translation read queued behind that erase; a later program of page 6 (same block) runs
        // at once: the controller binds pages when it issues programs, so a late one holds back
        // nothing (the convoy the FTL's order would cause). An erase of block 1 waits for both
        // programs; a program issued after it waits for it.
        const ERASE: Nanos = 1_500_000;
        let late = [(OpKind::Read, Purpose::Translation, 8), (OpKind::Program, Purpose::Host, 5)];
        let requests: &[Timed] = &[
            (0, &[(OpKind::Erase, Purpose::Gc, 0)]),
            (1, &late),
            (2, &[(OpKind::Program, Purpose::Host, 6)]),
            (3, &[(OpKind::Erase, Purpose::Gc, 4)]),
            (4, &[(OpKind::Program, Purpose::Host, 4)]),
        ];
        let done = serve(&mut two_dies("fifo", false), requests, true);
        let late_program = ERASE + READ + PROGRAM;
        assert_eq!(done[1].finish, late_program);
        assert_eq!(done[2], Served { start: 2, finish: 2 + PROGRAM }, "not behind the late program");
        assert_eq!(done[3], Served { start: late_program, finish: late_program + ERASE });
        assert_eq!(done[4], Served { start: late_program + ERASE, finish: late_program + ERASE + PROGRAM });
    }

    #[test]
    fn an_erase_waits_for_the_reads_of_its_block_issued_before_it() {
        // A read of page 4 (block 1, die 1) waits for a translation read on die 0; an erase of
        // block 1 issued after it waits for it, although die 1 is idle.
        let first = [(OpKind::Read, Purpose::Translation, 0), (OpKind::Read, Purpose::Host, 4)];
        let requests: &[Timed] = &[(0, &first), (1, &[(OpKind::Erase, Purpose::Gc, 4)])];
        let done = serve(&mut two_dies("fifo", false), requests, true);
        assert_eq!(done[0].finish, 2 * READ);
        assert_eq!(done[1], Served { start: 2 * READ, finish: 2 * READ + 1_500_000 });
    }

    /// The toy timeline of paper 001 §3.1 on one die: a program is being served when a write and
    /// then a read arrive. FIFO serves the read last; RPS serves it as soon as the die is free.
    #[test]
    fn rps_serves_a_queued_read_before_a_queued_write() {
        let timeline: &[Timed] = &[
            (0, &[(OpKind::Program, Purpose::Host, 0)]),
            (10, &[(OpKind::Program, Purpose::Host, 8)]),
            (20, &[(OpKind::Read, Purpose::Host, 16)]),
        ];
        let fifo = run(&mut two_dies("fifo", false), timeline);
        assert_eq!(fifo, [(0, PROGRAM), (PROGRAM, 2 * PROGRAM), (2 * PROGRAM, 2 * PROGRAM + READ)]);
        let rps = run(&mut two_dies("rps", false), timeline);
        assert_eq!(rps, [(0, PROGRAM), (PROGRAM + READ, 2 * PROGRAM + READ), (PROGRAM, PROGRAM + READ)]);
    }

    /// Request `i`'s first operation in the mixed workloads below: reads of blocks 8-15, programs
    /// and erases of blocks 0-7 (so no read finds its page being programmed).
    fn mixed_op(i: u32) -> (OpKind, u32) {
        let kind = [OpKind::Read, OpKind::Program, OpKind::Read, OpKind::Erase][i as usize % 4];
        let ppn = match kind {
            OpKind::Erase => (i * 7) % 32 / 4 * 4,
            OpKind::Program => (i * 7) % 32,
            _ => 32 + (i * 7) % 32,
        };
        (kind, ppn)
    }

    #[test]
    fn fifo_and_rps_do_the_same_work() {
        // Reads, programs and erases on both dies, arriving faster than they are served. Reads
        // go to blocks 8-15, programs and erases to blocks 0-7, so no read finds its page being
        // programmed (the controller would serve it, and how many do depends on the order).
        let mut requests: Vec<(Nanos, Vec<Op>)> = Vec::new();
        for i in 0..200u32 {
            let (kind, ppn) = mixed_op(i);
            requests.push((
                i as Nanos * 30_000,
                vec![(kind, Purpose::Host, ppn), (OpKind::Read, Purpose::Host, 32 + (ppn + 9) % 32)],
            ));
        }
        let requests: Vec<Timed> = requests.iter().map(|(t, ops)| (*t, &ops[..])).collect();
        let (mut fifo, mut rps) = (two_dies("fifo", false), two_dies("rps", false));
        let (a, b) = (run(&mut fifo, &requests), run(&mut rps, &requests));
        assert_eq!((a.len(), b.len()), (200, 200), "every request completes");
        assert_ne!(a, b, "the policies order the work differently");
        assert_eq!(fifo.times.busy_ns, rps.times.busy_ns, "but do the same work");
        assert_eq!(a.iter().map(|r| r.1).max(), b.iter().map(|r| r.1).max(), "and finish together");
    }

    #[test]
    fn the_plain_core_serves_a_plain_device_as_the_full_one_does() {
        // Two dies per channel (reads sense, then wait for the bus), copy-back, chains across
        // dies, and programs, erases and reads of the same blocks.
        let c = config_with(2, 2, "rps", true, "");
        assert!(plain_device(&c.device));
        let mut requests: Vec<(Nanos, Vec<Op>)> = Vec::new();
        for i in 0..300u32 {
            let (kind, ppn) = mixed_op(i);
            let ops = vec![(kind, Purpose::Gc, ppn), (OpKind::Read, Purpose::Host, (ppn + 9) % 64)];
            requests.push((i as Nanos * 20_000, ops));
        }
        let requests: Vec<Timed> = requests.iter().map(|(t, ops)| (*t, &ops[..])).collect();
        let mut plain = EventCore::<Plain>::new(OpCosts::new(&c.device), &c.device);
        let mut full = EventCore::<Full>::new(OpCosts::new(&c.device), &c.device);
        let served = serve(&mut plain, &requests, true);
        assert_eq!(served.len(), 300, "every request completes");
        assert_eq!(served, serve(&mut full, &requests, true));
        assert_eq!(plain.times, full.times);
    }

    #[test]
    fn copy_back_moves_a_page_inside_its_plane_without_the_bus() {
        // Block 0, then block 2: the same plane.
        let chain = [(OpKind::Read, Purpose::Gc, 0), (OpKind::Program, Purpose::Gc, 8)];
        for (copy_back, want) in [(false, READ + PROGRAM), (true, 25_000 + 200_000)] {
            let done = serve(&mut two_dies("fifo", copy_back), &[(0, &chain)], true);
            assert_eq!(done[0].finish, want, "copy_back = {copy_back}");
        }
    }

    /// Compressing at the default 619 MHz: 27,212 cycles.
    const COMPRESS: Nanos = 43_961;

    #[test]
    fn cpu_work_follows_its_chain_predecessor_and_holds_back_its_successor() {
        // Delta encoding: read the old version, compress, program the result.
        let chain = [
            (OpKind::Read, Purpose::Host, 0),
            (OpKind::Compute(CpuTask::Compress), Purpose::Host, 0),
            (OpKind::Program, Purpose::Host, 8),
        ];
        let done = serve(&mut two_dies("fifo", false), &[(0, &chain)], true);
        assert_eq!(done[0], Served { start: 0, finish: READ + COMPRESS + PROGRAM });
    }

    #[test]
    fn a_shared_cpu_serves_one_task_at_a_time_and_one_per_channel_does_not() {
        // Two independent chains on two channels, each reading a page and compressing it.
        let on =
            |page| [(OpKind::Read, Purpose::Host, page), (OpKind::Compute(CpuTask::Compress), Purpose::Host, page)];
        let (first, second) = (on(0), on(4)); // blocks 0 and 1: dies 0 and 1
        for (servers, second_finish) in [("shared", READ + 2 * COMPRESS), ("per-channel", READ + COMPRESS)] {
            let mut core = device_with(2, 1, "fifo", false, &format!("[device.cpu]\nservers = \"{servers}\""));
            let done = serve(&mut core, &[(0, &first), (0, &second)], true);
            assert_eq!(done[0].finish, READ + COMPRESS, "{servers}");
            assert_eq!(done[1].finish, second_finish, "{servers}: the second task waits for the CPU or not");
            let busy = &core.cpu_times().busy_ns;
            assert_eq!(busy.iter().sum::<Nanos>(), 2 * COMPRESS, "{servers}");
            assert_eq!(busy.len(), if servers == "shared" { 1 } else { 2 });
        }
    }

    #[test]
    fn a_die_serves_other_work_while_the_cpu_compresses() {
        // The chain's program waits for the CPU; an independent read on the same die does not.
        let chain = [(OpKind::Read, Purpose::Host, 0), (OpKind::Compute(CpuTask::Compress), Purpose::Host, 0)];
        let read = [(OpKind::Read, Purpose::Host, 2)];
        let done = serve(&mut two_dies("fifo", false), &[(0, &chain), (READ, &read)], true);
        assert_eq!(done[1], Served { start: READ, finish: 2 * READ });
        assert_eq!(done[0].finish, READ + COMPRESS);
    }

    #[test]
    fn only_a_gap_between_two_operations_of_a_die_is_an_idle_slot() {
        // Two programs back to back on die 0, then one after a gap of 1 ms.
        let mut core = two_dies("fifo", false);
        let program = |page| [(OpKind::Program, Purpose::Host, page)];
        let (first, second, third) = (program(0), program(1), program(2));
        serve(&mut core, &[(0, &first), (0, &second), (2 * PROGRAM + 1_000_000, &third)], true);
        assert_eq!(core.times.idle_slots, 1);
        assert_eq!(core.times.idle_slot_ns, 1_000_000);
        assert_eq!(core.times.busy_ns[0], 3 * PROGRAM);
    }

    #[test]
    fn an_operation_in_flight_takes_one_cache_line() {
        assert_eq!(std::mem::size_of::<InFlight>(), 64);
        assert_eq!(std::mem::align_of::<InFlight>(), 64);
    }

    #[test]
    fn dies_of_one_channel_take_turns_on_the_bus() {
        // One channel, two dies (block 0 on die 0, block 1 on die 1): two programs transfer one
        // after the other, then program in parallel; two reads sense in parallel, then transfer
        // one after the other.
        let programs = [(OpKind::Program, Purpose::Host, 0), (OpKind::Program, Purpose::Host, 4)];
        assert_eq!(run(&mut device(1, 2, "fifo", false), &[(0, &programs)]), [(0, 2 * XFER + 200_000)]);
        let reads = [(OpKind::Read, Purpose::Host, 0), (OpKind::Read, Purpose::Host, 4)];
        assert_eq!(run(&mut device(1, 2, "fifo", false), &[(0, &reads)]), [(0, 25_000 + 2 * XFER)]);
    }

    #[test]
    fn a_request_without_operations_completes_at_once() {
        let mut t = two_dies("fifo", false);
        t.submit(request(0, 5), &[]);
        assert_eq!(t.pop_completed().unwrap().served, Served { start: 5, finish: 5 });
        assert_eq!(t.outstanding(), 0);
    }

    /// P/E phases for the two-die device: 5 ISPP iterations of a 20 us pulse and a 20 us verify
    /// (200 us), an erase of a 1480 us pulse and a 20 us verify, 4 us resets, a 3 us buffer reload.
    fn suspending(suspension: &str) -> EventCore {
        let extra = format!(
            r#"
            [device.timing.phases]
            ispp_iterations = 5
            program_pulse_us = 20.0
            verify_us = 20.0
            erase_verify_us = 20.0
            voltage_reset_us = 4.0
            buffer_load_us = 3.0
            [device.timing.suspension]
            {suspension}
            "#
        );
        device_with(2, 1, "rps", false, &extra)
    }

    const US: Nanos = 1000;

    /// Paper 001 Fig. 3.1 on die 0: RD1, WT1, RD2 and RD3 (reads of block 2, the write to
    /// block 0); RD3 arrives while WT1 is in its first verify, [192.88, 212.88] us.
    const TOY: &[Timed] = &[
        (0, &[(OpKind::Read, Purpose::Host, 8)]),
        (10 * US, &[(OpKind::Program, Purpose::Host, 0)]),
        (20 * US, &[(OpKind::Read, Purpose::Host, 9)]),
        (200 * US, &[(OpKind::Read, Purpose::Host, 10)]),
    ];

    #[test]
    fn figure_3_1_toy_timeline_under_fifo_rps_ips_and_ipc() {
        let fifo = run(&mut two_dies("fifo", false), TOY);
        let wt1 = READ;
        assert_eq!(
            fifo,
            [
                (0, READ),
                (wt1, wt1 + PROGRAM),
                (wt1 + PROGRAM, wt1 + PROGRAM + READ),
                (wt1 + PROGRAM + READ, wt1 + PROGRAM + 2 * READ)
            ]
        );
        // RPS: RD2 before WT1, but RD3 waits for all of it.
        let rps = run(&mut two_dies("rps", false), TOY);
        let wt1 = 2 * READ;
        assert_eq!(rps, [(0, READ), (wt1, wt1 + PROGRAM), (READ, 2 * READ), (wt1 + PROGRAM, wt1 + PROGRAM + READ)]);
        // ISPP starts at 2 READ + XFER = 172.88 us; RD3 at 200 us falls in the first verify.
        let ispp = wt1 + XFER;
        assert_eq!(ispp, 172_880);
        // IPS: RD3 waits for the verify's end, WT1 resumes after RD3 and T_buffer with 4 iterations left.
        let mut ips = suspending("program = \"ips\"");
        let done = run(&mut ips, TOY);
        let point = ispp + 40 * US;
        assert_eq!(done[3], (point, point + READ));
        assert_eq!(done[1], (wt1, point + READ + 3 * US + 4 * 40 * US));
        // IPC: RD3 waits only for the reset; WT1 redoes the cancelled verify.
        let mut ipc = suspending("program = \"ipc\"");
        let done = run(&mut ipc, TOY);
        assert_eq!(done[3], (204 * US, 204 * US + READ));
        assert_eq!(done[1], (wt1, 204 * US + READ + 3 * US + 20 * US + 4 * 40 * US));
        let stats = ipc.pe_stats.as_ref().unwrap();
        assert_eq!((stats.program_cancelled, stats.program_at_phase_end, stats.suspended_programs), (1, 0, 1));
        assert_eq!(stats.wait_for_suspension_ns, 4 * US as u128);
        assert_eq!(stats.original_ns, PROGRAM as u128);
        assert_eq!(stats.effective_ns, (done[1].1 - wt1) as u128);
        // Die time used beyond the original: the cancelled verify's elapsed part and its reset
        // (204 - 192.88 us) and T_buffer; the redone verify replaces the cancelled one.
        let used = stats.used_ns - stats.original_ns;
        assert_eq!(used, (204 * US - (ispp + 20 * US) + 3 * US) as u128);
        assert_eq!(ips.pe_stats.as_ref().unwrap().program_at_phase_end, 1);
    }

    #[test]
    fn a_read_preempts_an_erase_with_its_reset_and_the_erase_resumes_after_a_re_bias() {
        // An erase of block 4 at 0; a read of block 2 at 1000 us.
        let requests: &[Timed] =
            &[(0, &[(OpKind::Erase, Purpose::Gc, 16)]), (1000 * US, &[(OpKind::Read, Purpose::Host, 8)])];
        let done = run(&mut suspending("erase = true"), requests);
        assert_eq!(done[1], (1004 * US, 1004 * US + READ));
        // 480 us of pulse left after a 4 us re-bias, then the verify.
        assert_eq!(done[0], (0, 1004 * US + READ + 4 * US + 480 * US + 20 * US));
        // Without erase suspension the read waits for the whole erase.
        let done = run(&mut suspending("program = \"ipc\""), requests);
        assert_eq!(done[1], (1500 * US, 1500 * US + READ));
    }

    #[test]
    fn nested_suspension_a_write_suspends_an_erase_and_a_read_the_write() {
        // An erase of block 4; a write to block 0 at 100 us suspends it (WSE); a read at 200 us
        // cancels the write's second pulse, [184.96, 204.96] us.
        let requests: &[Timed] = &[
            (0, &[(OpKind::Erase, Purpose::Gc, 16)]),
            (100 * US, &[(OpKind::Program, Purpose::Host, 0)]),
            (200 * US, &[(OpKind::Read, Purpose::Host, 8)]),
        ];
        let mut core = suspending("erase = true\nprogram = \"ipc\"\nwrite_suspends_erase = true");
        let done = run(&mut core, requests);
        assert_eq!(done[1].0, 104 * US, "the write starts after the erase's reset");
        assert_eq!(done[2], (204 * US, 204 * US + READ));
        // The write: T_buffer, a verify, then the cancelled iteration (2 of 5) and the rest.
        let write_end = 204 * US + READ + 3 * US + 20 * US + 4 * 40 * US;
        assert_eq!(done[1].1, write_end);
        // The erase last: re-bias, the 1380 us of pulse left, its verify.
        assert_eq!(done[0].1, write_end + 4 * US + 1380 * US + 20 * US);
        let stats = core.pe_stats.as_ref().unwrap();
        assert_eq!((stats.erase_by_write, stats.program_cancelled, stats.preemptions), (1, 1, 2));
        assert_eq!((stats.suspended_erases, stats.suspended_programs), (1, 1));
    }

    #[test]
    fn writes_suspend_an_erase_only_above_the_clean_space_watermark() {
        let requests: &[Timed] =
            &[(0, &[(OpKind::Erase, Purpose::Gc, 16)]), (100 * US, &[(OpKind::Program, Purpose::Host, 0)])];
        let mut core = suspending("write_suspends_erase = true");
        core.set_wse_allowed(0, false);
        assert_eq!(run(&mut core, requests)[1], (1500 * US, 1500 * US + PROGRAM));
        let mut core = suspending("write_suspends_erase = true");
        assert_eq!(run(&mut core, requests)[1], (104 * US, 104 * US + PROGRAM));
    }

    #[test]
    fn the_write_queue_limit_stops_reads_preempting_and_serves_writes_first() {
        // A program of block 0, one of block 2 queued behind it, then a read of block 4.
        let requests: &[Timed] = &[
            (0, &[(OpKind::Program, Purpose::Host, 0)]),
            (10 * US, &[(OpKind::Program, Purpose::Host, 8)]),
            (100 * US, &[(OpKind::Read, Purpose::Host, 16)]),
        ];
        let free = run(&mut suspending("program = \"ipc\""), requests);
        assert!(free[2].1 < PROGRAM, "the read preempts: {free:?}");
        let limited = run(&mut suspending("program = \"ipc\"\nmax_write_queue = 1"), requests);
        assert_eq!(limited, [(0, PROGRAM), (PROGRAM, 2 * PROGRAM), (2 * PROGRAM, 2 * PROGRAM + READ)]);
    }

    #[test]
    fn the_write_wait_limit_stops_reads_preempting_until_the_oldest_write_starts() {
        // A program of block 0; one of block 2, dispatched at 10 us, waits behind it; a read of
        // block 4 at 100 us; another read (block 6) while the second write runs.
        let timeline: &[Timed] = &[
            (0, &[(OpKind::Program, Purpose::Host, 0)]),
            (10 * US, &[(OpKind::Program, Purpose::Host, 8)]),
            (100 * US, &[(OpKind::Read, Purpose::Host, 16)]),
            (PROGRAM + 100 * US, &[(OpKind::Read, Purpose::Host, 24)]),
        ];
        // The read at 100 us falls in the reset window of the program's second pulse: the die
        // is free for it at 100.96 us, when the waiting write has waited 90.96 us.
        let limited = |limit: &str| suspending(&format!("program = \"ipc\"\nmax_write_wait_us = {limit}"));
        let at_limit = run(&mut limited("90.96"), timeline);
        assert_eq!(at_limit[2], (100_960, 100_960 + READ), "a wait of exactly the limit: the read preempts");
        let mut core = limited("90.959");
        let past = run(&mut core, timeline);
        assert_eq!(past[0], (0, PROGRAM), "1 ns past the limit the read does not preempt");
        assert_eq!(past[1].0, PROGRAM, "and the waiting write goes before it");
        // Once that write has started no write waits: the next read preempts it, and the
        // queued one is served first.
        assert!(past[2].1 < past[3].1 && past[3].1 < past[1].1, "{past:?}");
        assert_eq!(core.pe_stats.as_ref().unwrap().preemptions, 1);
    }

    #[test]
    fn the_write_wait_limit_stops_rps_serving_reads_first() {
        // Plain RPS: a read queued behind a program goes before the write queued earlier, unless
        // that write has waited longer than the limit when the die falls free (230.96 us).
        let rps = |limit: &str| {
            device_with(2, 1, "rps", false, &format!("[device.timing.suspension]\nmax_write_wait_us = {limit}"))
        };
        let timeline: &[Timed] = &[
            (0, &[(OpKind::Program, Purpose::Host, 0)]),
            (10 * US, &[(OpKind::Program, Purpose::Host, 8)]),
            (20 * US, &[(OpKind::Read, Purpose::Host, 16)]),
            // Waits 100 us when the second write ends.
            (2 * PROGRAM - 100 * US, &[(OpKind::Program, Purpose::Host, 32)]),
        ];
        let at_limit = run(&mut rps("230.96"), timeline);
        assert_eq!(at_limit[..3], [(0, PROGRAM), (PROGRAM + READ, 2 * PROGRAM + READ), (PROGRAM, PROGRAM + READ)]);
        let past = run(&mut rps("230.959"), timeline);
        assert_eq!(past[..2], [(0, PROGRAM), (PROGRAM, 2 * PROGRAM)]);
        // Then the write waiting is within the limit again: the read goes first.
        assert_eq!(past[2..], [(2 * PROGRAM, 2 * PROGRAM + READ), (2 * PROGRAM + READ, 3 * PROGRAM + READ)]);
    }

    #[test]
    fn a_read_of_the_page_being_programmed_never_preempts_it() {
        let requests: &[Timed] =
            &[(0, &[(OpKind::Program, Purpose::Host, 0)]), (100 * US, &[(OpKind::Read, Purpose::Host, 0)])];
        let mut core = suspending("program = \"ipc\"");
        assert_eq!(run(&mut core, requests), [(0, PROGRAM), (100 * US, 100 * US)]);
        assert_eq!(core.pe_stats.as_ref().unwrap().preemptions, 0);
    }

    #[test]
    fn suspension_adds_only_the_resume_costs_it_reports_to_the_dies_work() {
        // The mix of `fifo_and_rps_do_the_same_work`, with erases of blocks 0-7 and reads of
        // blocks 8-15.
        let mut requests: Vec<(Nanos, Vec<Op>)> = Vec::new();
        for i in 0..200u32 {
            let (kind, ppn) = mixed_op(i);
            requests.push((i as Nanos * 30_000, vec![(kind, Purpose::Host, ppn)]));
        }
        let requests: Vec<Timed> = requests.iter().map(|(t, ops)| (*t, &ops[..])).collect();
        let mut rps = two_dies("rps", false);
        run(&mut rps, &requests);
        for config in ["erase = true\nprogram = \"ips\"", "erase = true\nprogram = \"ipc\"\np_ach = 0.5"] {
            let mut pes = suspending(config);
            run(&mut pes, &requests);
            let stats = pes.pe_stats.clone().unwrap();
            assert!(stats.suspended_programs > 0 && stats.suspended_erases > 0, "{config}: {stats:?}");
            let extra = stats.used_ns as i128 - stats.original_ns as i128;
            let busy = |core: &EventCore| core.times.busy_ns.iter().sum::<Nanos>() as i128;
            assert_eq!(busy(&pes), busy(&rps) + extra, "{config}");
            assert_eq!((stats.programs, stats.erases), (50, 50));
        }
    }

    /// The two-die device with a host link of 1,000 MB/s: a 4 KB page crosses it in 4.096 us.
    fn linked() -> EventCore {
        let mut c = config_with(2, 1, "fifo", false, "");
        c.device.timing.host_link_mb_s = 1000.0;
        EventCore::new(OpCosts::new(&c.device), &c.device)
    }

    /// Submits a one-page host request of `kind` at `at` with `ops` (one chain each).
    fn submit_host(core: &mut EventCore, index: u64, at: Nanos, kind: IoKind, ops: &[Op]) {
        let mut log = OpLog::new();
        for &(op, purpose, ppn) in ops {
            log.begin_chain();
            log.push(op, purpose, Ppn::new(ppn));
        }
        core.advance_to(at);
        let request = PageRequest { kind, ..request(index, at).request };
        core.submit(Dispatched { index, request, at, source: Source::Host }, log.ops());
    }

    /// The host link, checked by hand: a write's data crosses it before its program starts, a
    /// read's after its page is read and transferred; transfers take it one at a time; a write
    /// the buffer absorbs (no flash operation) completes when its data has crossed.
    #[test]
    fn host_data_crosses_one_shared_link_before_a_program_and_after_a_read() {
        const LINK: Nanos = 4_096;
        let mut core = linked();
        // 0: write on die 0: link 0..4.096, then its program: 4.096 + 40.96 + 200 us.
        submit_host(&mut core, 0, 0, IoKind::Write, &[(OpKind::Program, Purpose::Host, 0)]);
        // 1: read on die 1 at 1 us: read and transfer to 66.96 us, then the link to 71.056 us.
        submit_host(&mut core, 1, 1_000, IoKind::Read, &[(OpKind::Read, Purpose::Host, 4)]);
        // 2: write on die 1 at 2 us: the link is busy to 4.096 us, so its data crosses to
        // 8.192 us; its program waits for die 1's read (66.96 us), then 40.96 + 200 us.
        submit_host(&mut core, 2, 2_000, IoKind::Write, &[(OpKind::Program, Purpose::Host, 5)]);
        // 3: a write absorbed by the buffer at 400 us: done when its data has crossed.
        submit_host(&mut core, 3, 400_000, IoKind::Write, &[]);
        core.drain();
        let mut done: Vec<_> = std::iter::from_fn(|| core.pop_completed()).collect();
        done.sort_by_key(|c| c.dispatched.index);
        let served: Vec<_> = done.iter().map(|c| (c.served.start, c.served.finish)).collect();
        assert_eq!(
            served,
            [
                (0, LINK + PROGRAM),
                (1_000, 1_000 + READ + LINK),
                (LINK, 1_000 + READ + PROGRAM),
                (400_000, 400_000 + LINK),
            ]
        );
        assert_eq!(core.link.as_ref().unwrap().busy_ns, 4 * LINK);
    }
}
