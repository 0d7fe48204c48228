//! DiffECC (paper 001 chapter 2; spec `../shared/specs/diffecc-suspension-deltaftl.md` section 2):
//! the controller programs a host page in one of four write modes, N in {1, 2, 4, 8} segments per
//! page. A slower program (smaller ISPP step, Table 2.3: 500 / 538 / 606 / 754 us) lets each
//! segment carry a weaker BCH code, so a later read transfers and decodes only the segments it
//! needs, in a pipeline (spec 2.4.3).
//!
//! The event core asks this module three things: how long a program takes (choosing its mode
//! when a host write is dispatched to its die), how long a read's transfer and decode take (by
//! the mode its page was programmed in and the sectors the read needs), and it reports when dies
//! fall idle and take work again (the idle slots behind `T_idle_avg`). The mode of every
//! physical page is controller metadata kept here, in simulated-time order: the FTL runs ahead
//! of the timing model, so the flash array's view of a page can already be a later one.
//!
//! The BCH decoder is one per channel, pipelined with the bus (spec 2.4.3's [REC] form): segment
//! i + 1 crosses the bus while segment i is decoded. The die is held until the last segment is
//! decoded, so that a read completes with its die (one event per die).

pub mod codes;

use serde::{Deserialize, Serialize};

use super::scheduler::DieQueue;
use super::Nanos;
use crate::error::{Result, SimError};
use crate::flash::{FlashOp, OpKind, Ppn, Purpose, Sectors};

/// The write modes: segments per page.
pub const MODES: [u8; 4] = [1, 2, 4, 8];

/// Where mode `n` (1, 2, 4 or 8; 0 for a page never programmed by a timed write, which is N = 1)
/// sits in [`MODES`].
#[inline]
pub fn mode_index(n: u8) -> usize {
    n.max(1).trailing_zeros() as usize
}

/// How host writes choose their mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModePolicy {
    /// Spec 2.7.3: from the idle time left after the reads waiting, split between two adjacent modes.
    #[default]
    Controlled,
    /// Every host write in `segments` (1: the baseline, D8; 8: Fig. 2.9's forced mode).
    Fixed,
}

/// Where the load estimate looks (D4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadScope {
    /// The die's own queues and idle slots.
    #[default]
    Chip,
    /// The whole device: idle while no die works, the pages waiting on every die.
    Device,
}

/// `[device.timing.diffecc]`: present turns DiffECC on (`parallel` timing with `rps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffEccConfig {
    #[serde(default)]
    pub policy: ModePolicy,
    /// The segments of every host write under `policy = "fixed"`.
    #[serde(default = "slowest")]
    pub segments: u8,
    #[serde(default)]
    pub scope: LoadScope,
    /// `T_idle_avg` is the mean length of the idle slots that ended in the previous window of
    /// this length (spec 2.7.2: 5 s of simulated time).
    #[serde(default = "five_seconds")]
    pub window_ms: f64,
    /// Program (ISPP) time per mode N = 1, 2, 4, 8 (Table 2.3); the page's bus transfer precedes it (D2).
    #[serde(default = "table_2_3_program")]
    pub program_us: [f64; 4],
    /// BCH decode time of one segment per mode (Table 2.3).
    #[serde(default = "table_2_3_decode")]
    pub decode_us: [f64; 4],
    /// GC relocations keep the mode of the page they move (default: N = 1, D7).
    #[serde(default)]
    pub preserve_mode: bool,
}

fn slowest() -> u8 {
    8
}
fn five_seconds() -> f64 {
    5000.0
}
fn table_2_3_program() -> [f64; 4] {
    [500.0, 538.0, 606.0, 754.0]
}
fn table_2_3_decode() -> [f64; 4] {
    [41.20, 21.71, 11.25, 5.78]
}

impl DiffEccConfig {
    /// Checks the settings against the device's baseline program time (the timing model and
    /// scheduler are checked by the caller).
    pub fn validate(&self, program_us: f64) -> Result<()> {
        let field = |name: &str| format!("device.timing.diffecc.{name}");
        if self.program_us[0] != program_us {
            return Err(SimError::config(
                field("program_us"),
                format!(
                    "the baseline mode N = 1 programs in device.latency.program_us ({program_us} us), found {}",
                    self.program_us[0]
                ),
            ));
        }
        if !MODES.contains(&self.segments) {
            return Err(SimError::config(field("segments"), format!("must be 1, 2, 4 or 8, found {}", self.segments)));
        }
        if !(self.window_ms.is_finite() && self.window_ms > 0.0) {
            return Err(SimError::config(
                field("window_ms"),
                format!("must be a time > 0 ms, found {:?}", self.window_ms),
            ));
        }
        if let Some(v) = self.program_us.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(SimError::config(field("program_us"), format!("must be times > 0 us, found {v:?}")));
        }
        if self.program_us.windows(2).any(|w| w[1] <= w[0]) {
            return Err(SimError::config(
                field("program_us"),
                format!(
                    "must rise with the segments (a weaker code needs a slower program), found {:?}",
                    self.program_us
                ),
            ));
        }
        if let Some(v) = self.decode_us.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(SimError::config(field("decode_us"), format!("must be times >= 0 us, found {v:?}")));
        }
        Ok(())
    }
}

fn ns(us: f64) -> Nanos {
    (us * 1000.0).round() as Nanos
}

/// Spec 2.4.3's pipelined read: sensing, the first segment's transfer and decode, then one
/// segment per `max(T_b, T_d)` for the other `n - 1`.
pub fn read_latency(sense: Nanos, bus_segment: Nanos, decode_segment: Nanos, n: u32) -> Nanos {
    sense + bus_segment + decode_segment + (n as Nanos - 1) * bus_segment.max(decode_segment)
}

/// How the writes waiting on a chip split between two adjacent modes (spec 2.7.3): `slow_pages`
/// of them in `slow`, the rest in `fast`, so that they use the idle budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub fast: u8,
    pub slow: u8,
    pub slow_pages: f64,
}

impl Split {
    /// The mode of the write dispatched now: slow ones first (the split is recomputed at the
    /// next dispatch).
    pub fn mode(&self) -> u8 {
        if self.slow_pages >= 1.0 {
            self.slow
        } else {
            self.fast
        }
    }
}

/// Spec 2.7.3 with `writes` pages waiting to be written (the one dispatched included), `reads`
/// waiting to be read, each read costing `read` (the baseline mode's, L_r), and `idle_avg`
/// (T_idle_avg): the budget B = T_idle_avg - N_r L_r is shared between the two modes whose
/// all-page times T_mi <= B < T_mj bracket it, N_mi + N_mj = N_w and N_mi L_mi + N_mj L_mj = B.
/// B at or above T_m8 writes all in N = 8; below T_m1 (B <= 0 too) all in N = 1.
pub fn split(program: &[Nanos; 4], writes: f64, reads: f64, read: Nanos, idle_avg: Nanos) -> Split {
    let budget = idle_avg as f64 - reads * read as f64;
    let all = |k: usize| writes * program[k] as f64;
    let whole = |mode: u8, pages: f64| Split { fast: mode, slow: mode, slow_pages: pages };
    if budget >= all(3) {
        return whole(8, writes);
    }
    if budget < all(0) {
        return whole(1, 0.0);
    }
    let i = (0..3).find(|&k| all(k) <= budget && budget < all(k + 1)).expect("the budget lies between two modes");
    let slow_pages = ((budget - all(i)) / (program[i + 1] - program[i]) as f64).floor();
    Split { fast: MODES[i], slow: MODES[i + 1], slow_pages }
}

/// The mean length of the idle slots that ended in the previous window (spec 2.7.2, D5): 0
/// before the first window closes, and kept through windows in which no slot ended.
#[derive(Debug, Clone)]
struct IdleWindow {
    window: Nanos,
    /// The end of the window being filled.
    end: Nanos,
    sum: u128,
    count: u64,
    average: Nanos,
}

impl IdleWindow {
    fn new(window: Nanos) -> Self {
        IdleWindow { window, end: window, sum: 0, count: 0, average: 0 }
    }

    #[inline]
    fn roll(&mut self, now: Nanos) {
        if now >= self.end {
            if self.count > 0 {
                self.average = (self.sum / self.count as u128) as Nanos;
                self.sum = 0;
                self.count = 0;
            }
            self.end = (now / self.window + 1) * self.window;
        }
    }

    fn slot_ended(&mut self, now: Nanos, length: Nanos) {
        self.roll(now);
        self.sum += length as u128;
        self.count += 1;
    }

    #[inline]
    fn average(&mut self, now: Nanos) -> Nanos {
        self.roll(now);
        self.average
    }
}

/// One server's idle slots: a period with nothing to do (a die: no operation; the device: no die
/// working).
#[derive(Debug, Clone)]
struct IdleSlots {
    /// Idle since then, if idle.
    since: Option<Nanos>,
    window: IdleWindow,
    slots: u64,
    slot_ns: u128,
}

impl IdleSlots {
    fn new(window: Nanos) -> Self {
        IdleSlots { since: Some(0), window: IdleWindow::new(window), slots: 0, slot_ns: 0 }
    }

    /// Whether it was idle.
    fn busy(&mut self, now: Nanos) -> bool {
        let Some(since) = self.since.take() else { return false };
        if now > since {
            self.window.slot_ended(now, now - since);
            self.slots += 1;
            self.slot_ns += (now - since) as u128;
        }
        true
    }
}

/// What DiffECC did (Figs. 2.11, 2.12 and the `T_idle_avg` of Table 2.4).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiffEccStats {
    /// Host programs per mode N = 1, 2, 4, 8.
    pub writes_by_mode: [u64; 4],
    /// Reads served by the flash per mode of the page read.
    pub reads_by_mode: [u64; 4],
    /// Segments those reads transferred and decoded.
    pub read_segments: u64,
    /// Idle slots of the whole device (no die working) and of the dies.
    pub device_idle_slots: u64,
    pub device_idle_ns: u128,
    pub die_idle_slots: u64,
    pub die_idle_ns: u128,
}

/// The queues the load estimate counts: pages waiting to be written (the base queue, the write
/// being dispatched included) and to be read (the priority queue).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueLoad {
    pub writes: f64,
    pub reads: f64,
}

impl QueueLoad {
    /// The pages waiting in `queues` (one die's, or every die's for the device scope), the write
    /// being dispatched counted once. The device scope counts the totals, not the means per die:
    /// the paper's SSD has one priority queue and one base queue (§2.4.3, Fig. 2.8), and its
    /// estimate weighs all of them against one mean idle slot of the device.
    pub fn of<'a>(queues: impl IntoIterator<Item = &'a DieQueue>) -> Self {
        let (mut writes, mut reads) = (1usize, 0usize);
        for q in queues {
            writes += q.base_len();
            reads += q.read_len();
        }
        QueueLoad { writes: writes as f64, reads: reads as f64 }
    }
}

/// DiffECC's state in the event core.
pub struct DiffEcc {
    policy: ModePolicy,
    fixed: u8,
    scope: LoadScope,
    preserve_mode: bool,
    program: [Nanos; 4],
    decode: [Nanos; 4],
    /// Bus time of a whole page.
    page_transfer: Nanos,
    /// L_r: a whole-page read in the baseline mode.
    baseline_read: Nanos,
    page_size: u32,
    sector_size: u32,
    /// The mode each physical page was last programmed in (0: never by a timed write, N = 1).
    modes: Vec<u8>,
    /// Per channel: when its decoder is free.
    decoder_free: Vec<Nanos>,
    dies: Vec<IdleSlots>,
    device: IdleSlots,
    busy_dies: u32,
    stats: DiffEccStats,
}

impl DiffEcc {
    pub fn new(config: &DiffEccConfig, costs: &super::OpCosts, channels: u32, dies: u32) -> Self {
        let g = &costs.geometry;
        let window = ns(config.window_ms * 1000.0);
        let decode = config.decode_us.map(ns);
        DiffEcc {
            policy: config.policy,
            fixed: config.segments,
            scope: config.scope,
            preserve_mode: config.preserve_mode,
            program: config.program_us.map(ns),
            decode,
            page_transfer: costs.page_transfer,
            baseline_read: read_latency(costs.read_array, costs.page_transfer, decode[0], 1),
            page_size: g.page_size,
            sector_size: g.sector_size,
            modes: vec![0; g.total_pages() as usize],
            decoder_free: vec![0; channels as usize],
            dies: vec![IdleSlots::new(window); dies as usize],
            device: IdleSlots::new(window),
            busy_dies: 0,
            stats: DiffEccStats::default(),
        }
    }

    /// The statistics, with the idle slots gathered.
    pub fn stats(&self) -> DiffEccStats {
        DiffEccStats {
            device_idle_slots: self.device.slots,
            device_idle_ns: self.device.slot_ns,
            die_idle_slots: self.dies.iter().map(|d| d.slots).sum(),
            die_idle_ns: self.dies.iter().map(|d| d.slot_ns).sum(),
            ..self.stats.clone()
        }
    }

    /// Bytes of state per physical page (the mode table).
    pub fn state_bytes(&self) -> usize {
        self.modes.len()
    }

    /// Asks for the mode of the page `op` reads or programs, which its die will look up later
    /// (a hint: the table is large and accessed at random).
    #[inline]
    pub fn prefetch(&self, op: &FlashOp) {
        if matches!(op.kind, OpKind::Read | OpKind::Program) {
            crate::mem::prefetch(&self.modes[op.ppn.index()]);
        }
    }

    /// The mode a program submitted as `op` (of request `ops`) runs in, when it is not chosen
    /// at dispatch (0: a host write, chosen then). GC relocations run in N = 1, or in the mode
    /// of the page they move with `preserve_mode`; mapping and metadata pages in N = 1.
    #[inline]
    pub fn submitted_mode(&self, op: &FlashOp, ops: &[FlashOp]) -> u8 {
        match (op.kind, op.purpose) {
            (OpKind::Program, Purpose::Host) => 0,
            (OpKind::Program, Purpose::Gc) if self.preserve_mode => {
                let source = op.dep.map(|d| &ops[d.get()]).filter(|s| s.kind == OpKind::Read);
                source.map_or(1, |s| self.modes[s.ppn.index()].max(1))
            }
            _ => 1,
        }
    }

    /// A program of `ppn` starts on `die`: its mode (chosen now for a host write, `mode` 0) is
    /// recorded for the page; returns its array time.
    #[inline]
    pub fn program(
        &mut self,
        die: usize,
        ppn: Ppn,
        mode: u8,
        load: impl FnOnce(bool) -> QueueLoad,
        now: Nanos,
    ) -> Nanos {
        let chosen = match (mode, self.policy) {
            (0, ModePolicy::Fixed) => self.fixed,
            (0, ModePolicy::Controlled) => {
                let (idle, load) = match self.scope {
                    LoadScope::Chip => (self.dies[die].window.average(now), load(false)),
                    LoadScope::Device => (self.device.window.average(now), load(true)),
                };
                split(&self.program, load.writes, load.reads, self.baseline_read, idle).mode()
            }
            (fixed, _) => fixed,
        };
        self.modes[ppn.index()] = chosen;
        let k = mode_index(chosen);
        if mode == 0 {
            self.stats.writes_by_mode[k] += 1;
        }
        self.program[k]
    }

    /// An erase of the block from `first` on: its pages have no mode until programmed again (a
    /// program outside the timed run, such as a flush at power loss, leaves them N = 1).
    #[inline]
    pub fn erased(&mut self, first: Ppn, pages: u32) {
        self.modes[first.index()..first.index() + pages as usize].fill(0);
    }

    /// The segments of a page in mode `n` that a read of `sectors` (the whole page: `None`)
    /// overlaps.
    #[inline]
    fn segments(&self, n: u8, sectors: Option<Sectors>) -> u32 {
        let Some(s) = sectors.filter(|_| n > 1) else { return n.max(1) as u32 };
        let segment = self.page_size / n as u32;
        let start = s.first as u32 * self.sector_size;
        let end = (s.first as u32 + s.count.get() as u32) * self.sector_size;
        end.div_ceil(segment) - start / segment
    }

    /// A read of `ppn` (of `sectors`) moves its page out over `channel`, whose bus is free from
    /// `bus_free`, at `now`: returns when the bus is free again and when the last segment is
    /// decoded. Segment i + 1 crosses the bus while the channel's decoder works on segment i.
    #[inline]
    pub fn read_out(
        &mut self,
        channel: usize,
        ppn: Ppn,
        sectors: Option<Sectors>,
        bus_free: Nanos,
        now: Nanos,
    ) -> (Nanos, Nanos) {
        let mode = self.modes[ppn.index()].max(1);
        let k = mode_index(mode);
        let n = self.segments(mode, sectors);
        self.stats.reads_by_mode[k] += 1;
        self.stats.read_segments += n as u64;
        let (bus, decode) = (self.page_transfer / mode as Nanos, self.decode[k]);
        let mut sent = bus_free.max(now);
        let mut decoded = self.decoder_free[channel];
        for _ in 0..n {
            sent += bus;
            decoded = decoded.max(sent) + decode;
        }
        self.decoder_free[channel] = decoded;
        (sent, decoded)
    }

    /// `die` has nothing to do from `now` on.
    #[inline]
    pub fn fell_idle(&mut self, die: usize, now: Nanos) {
        self.dies[die].since = Some(now);
        self.busy_dies -= 1;
        if self.busy_dies == 0 {
            self.device.since = Some(now);
        }
    }

    /// `die` takes an operation at `now` (ending its idle slot if it was idle).
    #[inline]
    pub fn took_work(&mut self, die: usize, now: Nanos) {
        if self.dies[die].busy(now) {
            self.busy_dies += 1;
            if self.busy_dies == 1 {
                self.device.busy(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1000;

    /// Table 2.3's per-segment bus (40.96 us / N) and decode times, 25 us sensing.
    fn table_read(n_mode: u8, segments: u32) -> Nanos {
        let k = mode_index(n_mode);
        read_latency(25 * US, 40_960 / n_mode as Nanos, ns(table_2_3_decode()[k]), segments)
    }

    #[test]
    fn table_2_3_single_segment_reads() {
        let totals: Vec<_> = MODES.iter().map(|&n| table_read(n, 1)).collect();
        assert_eq!(totals, [107_160, 67_190, 46_490, 35_900]);
    }

    #[test]
    fn spec_2_4_3_multi_segment_reads() {
        // Rows: 512 B, 1 KB, 2 KB, 4 KB within the page; columns N = 1, 2, 4, 8 (segment-aligned).
        let want: [[Nanos; 4]; 4] = [
            [107_160, 67_190, 46_490, 35_900],
            [107_160, 67_190, 46_490, 41_680],
            [107_160, 67_190, 57_740, 53_240],
            [107_160, 88_900, 80_240, 76_360],
        ];
        for (row, sectors) in [1u32, 2, 4, 8].iter().enumerate() {
            for (col, &n) in MODES.iter().enumerate() {
                // Segments overlapped: the request's bytes over the segment size, at least one.
                let segments = (sectors * 512).div_ceil(4096 / n as u32).min(n as u32);
                let segments = if n == 1 { 1 } else { segments };
                assert_eq!(table_read(n, segments), want[row][col], "{} B in N = {n}", sectors * 512);
            }
        }
    }

    #[test]
    fn two_kb_page_read_is_58_percent_faster_than_a_4_kb_one() {
        // Spec 2.4.1: 25 + 20.48 + 22.3 = 67.78 us against 107.16 us.
        let two_kb = read_latency(25 * US, 20_480, 22_300, 1);
        assert_eq!(two_kb, 67_780);
        assert_eq!(((107_160.0 / two_kb as f64 - 1.0) * 100.0).round(), 58.0);
    }

    fn program() -> [Nanos; 4] {
        table_2_3_program().map(ns)
    }

    #[test]
    fn switching_splits_the_budget_between_two_adjacent_modes() {
        let l_r = 107_160;
        // 4 writes, 1 read, T_idle_avg 2.6 ms: B = 2600 - 107.16 = 2492.84 us; T_m2 = 2152,
        // T_m4 = 2424, T_m8 = 3016: between N = 4 and N = 8, N_8 = floor((B - 2424) / 148) = 0.
        let s = split(&program(), 4.0, 1.0, l_r, 2_600 * US);
        assert_eq!((s.fast, s.slow, s.slow_pages, s.mode()), (4, 8, 0.0, 4));
        // T_idle_avg 3 ms: B = 2892.84 us, N_8 = floor(468.84 / 148) = 3 pages of 4.
        let s = split(&program(), 4.0, 1.0, l_r, 3_000 * US);
        assert_eq!((s.fast, s.slow, s.slow_pages, s.mode()), (4, 8, 3.0, 8));
        // Between N = 1 and N = 2: 10 writes, no read, 5.2 ms: (5200 - 5000) / 38 = 5.26 -> 5.
        let s = split(&program(), 10.0, 0.0, l_r, 5_200 * US);
        assert_eq!((s.fast, s.slow, s.slow_pages, s.mode()), (1, 2, 5.0, 2));
        // The budget covers all writes in N = 8, exactly or more.
        assert_eq!(split(&program(), 2.0, 0.0, l_r, 1_508 * US).mode(), 8);
        assert_eq!(split(&program(), 2.0, 0.0, l_r, 9_000 * US).slow_pages, 2.0);
        // Below T_m1, and a negative budget (more reads than idle time): all in N = 1.
        assert_eq!(split(&program(), 2.0, 0.0, l_r, 999 * US).mode(), 1);
        assert_eq!(split(&program(), 1.0, 5.0, l_r, 100 * US).mode(), 1);
        // Before the first window (T_idle_avg = 0): N = 1.
        assert_eq!(split(&program(), 1.0, 0.0, l_r, 0).mode(), 1);
    }

    #[test]
    fn the_device_scope_counts_every_die_s_waiting_pages() {
        use super::super::scheduler::{Class, SchedulerKind};
        let rps = SchedulerKind::Rps;
        // A burst spread over two dies: die 0 dispatches a write with none behind it; die 1 has
        // two writes and a read waiting.
        let (mut die0, mut die1, mut links) = (DieQueue::default(), DieQueue::default(), vec![None; 5]);
        die1.push(&mut links, rps, 1, Class::Base);
        die1.push(&mut links, rps, 2, Class::Base);
        die1.push(&mut links, rps, 3, Class::Read);
        let chip = QueueLoad::of([&die0]);
        let device = QueueLoad::of([&die0, &die1]);
        assert_eq!(chip, QueueLoad { writes: 1.0, reads: 0.0 });
        assert_eq!(device, QueueLoad { writes: 3.0, reads: 1.0 }, "totals, not means per die");
        // With a 2 ms T_idle_avg the chip's estimate writes its page slowly (T_m8 = 754 us <=
        // 2 ms); the device's sees 3 pages and a read: B = 2000 - 107.16 = 1892.84 us, between
        // T_m4 = 1818 and T_m8 = 2262 us, floor((B - 1818) / 148) = 0 pages in N = 8: N = 4.
        let (l_r, idle) = (107_160, 2_000 * US);
        assert_eq!(split(&program(), chip.writes, chip.reads, l_r, idle).mode(), 8);
        let s = split(&program(), device.writes, device.reads, l_r, idle);
        assert_eq!((s.fast, s.slow, s.slow_pages, s.mode()), (4, 8, 0.0, 4));
        die0.push(&mut links, rps, 4, Class::Base);
        // One more write waiting: 4 pages x 500 us > B, all in N = 1.
        assert_eq!(split(&program(), QueueLoad::of([&die0, &die1]).writes, 1.0, l_r, idle).mode(), 1);
    }

    #[test]
    fn idle_average_covers_the_slots_that_ended_in_the_previous_window() {
        let mut w = IdleWindow::new(5_000 * US);
        w.slot_ended(1_000 * US, 10 * US);
        w.slot_ended(4_000 * US, 30 * US);
        assert_eq!(w.average(4_999 * US), 0, "nothing before the first window closes");
        assert_eq!(w.average(5_000 * US), 20 * US);
        w.slot_ended(6_000 * US, 50 * US);
        // No slot ends in [10, 15) s: the value of [5, 10) s stays through it.
        assert_eq!(w.average(12_000 * US), 50 * US);
        assert_eq!(w.average(16_000 * US), 50 * US);
    }

    fn sectors(first: u8, count: u8) -> Option<Sectors> {
        Some(Sectors { first, count: std::num::NonZeroU8::new(count).unwrap() })
    }

    fn device() -> DiffEcc {
        let c = crate::config::ConfigBuilder::new().preset("ssd16-ch2").unwrap().build().unwrap();
        let costs = super::super::OpCosts::new(&c.device);
        DiffEcc::new(c.device.timing.diffecc.as_ref().unwrap(), &costs, 16, 16)
    }

    #[test]
    fn a_read_decodes_the_segments_its_sectors_overlap() {
        let d = device();
        assert_eq!(d.segments(8, sectors(3, 1)), 1);
        assert_eq!(d.segments(8, sectors(3, 2)), 2);
        assert_eq!(d.segments(4, sectors(1, 2)), 2, "sectors 1-2 straddle 1 KB segments 0 and 1");
        assert_eq!(d.segments(4, sectors(2, 2)), 1);
        assert_eq!(d.segments(2, None), 2);
        assert_eq!(d.segments(1, sectors(0, 1)), 1);
        assert_eq!(d.segments(0, None), 1, "a preconditioned page is N = 1");
    }

    #[test]
    fn reads_pipeline_with_the_channel_decoder() {
        let mut d = device();
        let page = Ppn::new(0);
        d.modes[0] = 8;
        // The whole page at N = 8: 8 transfers of 5.12 us, the last decode ends 5.78 us after
        // the 7 before it (decode-bound): 5.12 + 8 x 5.78 = 51.36 us after the bus was free.
        let (bus, done) = d.read_out(0, page, None, 100 * US, 90 * US);
        assert_eq!((bus, done), (100 * US + 8 * 5_120, 100 * US + 5_120 + 8 * 5_780));
        // Another read on the channel right away waits for the decoder.
        let (_, second) = d.read_out(0, page, sectors(0, 1), bus, bus);
        assert_eq!(second, done + 5_780);
        assert_eq!((d.stats.reads_by_mode, d.stats.read_segments), ([0, 0, 0, 2], 9));
    }

    #[test]
    fn device_idle_slots_need_every_die_idle() {
        let mut d = device();
        // Die 0 works on [1, 3) ms, die 1 on [2, 4) ms, nothing else.
        d.took_work(0, 1_000 * US);
        d.took_work(1, 2_000 * US);
        d.fell_idle(0, 3_000 * US);
        d.fell_idle(1, 4_000 * US);
        d.took_work(0, 6_000 * US);
        let s = d.stats();
        assert_eq!((s.device_idle_slots, s.device_idle_ns), (2, (1_000 + 2_000) as u128 * US as u128));
        // Die 0: [0, 1) and [3, 6) ms; die 1: [0, 2) ms.
        assert_eq!((s.die_idle_slots, s.die_idle_ns), (3, (1_000 + 3_000 + 2_000) as u128 * US as u128));
    }

    #[test]
    fn gc_relocations_run_in_n_1_unless_they_preserve_the_mode() {
        use crate::flash::OpLog;
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Gc, Ppn::new(5));
        log.push(OpKind::Program, Purpose::Gc, Ppn::new(9));
        log.begin_chain();
        log.push(OpKind::Program, Purpose::Host, Ppn::new(10));
        let mut d = device();
        d.modes[5] = 4;
        let ops = log.ops();
        assert_eq!((d.submitted_mode(&ops[1], ops), d.submitted_mode(&ops[2], ops)), (1, 0));
        d.preserve_mode = true;
        assert_eq!(d.submitted_mode(&ops[1], ops), 4);
    }
}
