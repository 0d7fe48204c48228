//! Run configuration: device presets (one TOML file per paper configuration), user TOML files,
//! `--set key=value` overrides, and validation that names the offending field.
//!
//! Resolution order: the preset named by `preset` (default `mlc8g`), then the user's TOML file,
//! then each `--set` in order. The merged TOML is deserialised with unknown fields rejected, and
//! the result validated.

mod presets;

pub use presets::{preset_names, preset_toml, PRESETS};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};
use crate::flash::Geometry;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimingModelKind {
    /// One server; requests served whole, in arrival order (paper 000's setup).
    FifoSingle,
    /// Discrete events: per-channel buses, per-die servers with queues under a scheduling policy
    /// (`device.timing.scheduler`), operations in flight.
    Parallel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocationUnit {
    /// One free pool and one open block per stream for each die.
    Die,
    /// One free pool and one open block per stream for each plane.
    Plane,
}

/// Which allocation unit a host write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Striping {
    /// The next unit in turn, whatever the logical page (dynamic allocation).
    #[default]
    Dynamic,
    /// RAID-0: logical page n goes to the (n mod units)-th unit of the spread order, channel
    /// first (paper 001's platform: chip = LPN mod chips, plane = (LPN div chips) mod planes);
    /// the page is placed freely inside that unit's pool.
    Raid0,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// Array read time (cell to register), microseconds.
    pub read_us: f64,
    pub program_us: f64,
    pub erase_us: f64,
    /// Bus transfer time per byte, nanoseconds.
    pub bus_ns_per_byte: f64,
    /// Whether a full-page read or program moves the spare bytes over the bus too.
    #[serde(default = "yes")]
    pub transfer_includes_spare: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    pub model: TimingModelKind,
    /// Model each plane's page register as a one-page cache: a read of the page last read or
    /// programmed on that plane costs only the transfer (paper 000 §4.2).
    #[serde(default)]
    pub plane_register: bool,
    /// Which queued operation a die serves next (`parallel` only).
    #[serde(default)]
    pub scheduler: crate::timing::SchedulerKind,
    /// A GC move inside one plane reads into the plane's register and programs from it, with no
    /// bus transfer (copy-back; `parallel` only).
    #[serde(default)]
    pub copy_back: bool,
    /// PER / PE0 scenarios of paper 001 §3.3: program and erase array times set to the read's or to 0.
    #[serde(default)]
    pub pe_latency: crate::timing::PeLatency,
    /// How programs and erases divide into phases (paper 001 Table 3.1), for P/E suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::timing::PePhases>,
    /// P/E suspension (paper 001 chapter 3; `parallel` with `rps` only).
    #[serde(default)]
    pub suspension: crate::timing::SuspensionConfig,
    /// DiffECC's write modes and segmented reads (paper 001 chapter 2; `parallel` with `rps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diffecc: Option<crate::timing::DiffEccConfig>,
    /// The host interface's bandwidth, MB/s (10^6 bytes per second): host data crosses one
    /// shared link (paper 001: PCIe, 2.0 GB/s); 0: no link (`parallel` only).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub host_link_mb_s: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The pages whose translation pages a demand-based FTL's directory (GTD) has entries for, in
/// the SRAM report: the exported pages (all the map needs; paper 002: 128 entries for 512 MB) or
/// every physical page (paper 000 Table 5.2: 512 entries for the whole 8 GB die).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GtdSpan {
    #[default]
    Logical,
    Physical,
}

/// The NAND rule for the order in which the pages of a block are programmed (each page at most
/// once between erases under either rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProgramOrder {
    /// Ascending offsets, gaps allowed: a skipped page stays unprogrammed until the erase (MLC
    /// and later NAND; what block-level copies, merges and in-place first writes need).
    #[default]
    Sequential,
    /// Any free page, in any order (the older SLC rule).
    AnyFreePage,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the figures come from (paper and table).
    #[serde(default)]
    pub source: String,
    pub geometry: Geometry,
    pub latency: Latency,
    pub timing: TimingConfig,
    /// Fraction of physical pages reserved (not exported to the host), in [0, 1).
    pub overprovisioning: f64,
    /// Exported logical pages; when absent, derived from `overprovisioning`.
    #[serde(default)]
    pub logical_pages: Option<u32>,
    pub allocation_unit: AllocationUnit,
    /// How host writes are spread over the allocation units.
    #[serde(default)]
    pub striping: Striping,
    #[serde(default)]
    pub gtd_span: GtdSpan,
    /// In which order the pages of a block may be programmed.
    #[serde(default)]
    pub program_order: ProgramOrder,
    /// The controller's CPU (content work: Delta-FTL's compression).
    #[serde(default)]
    pub cpu: crate::controller::CpuConfig,
}

impl DeviceConfig {
    /// Pages the host can address.
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages.unwrap_or_else(|| {
            let physical = self.geometry.data_pages() as f64;
            (physical * (1.0 - self.overprovisioning)).floor() as u32
        })
    }
    /// The allocation units whose blocks are on `die`.
    pub fn units_of_die(&self, die: u32) -> std::ops::Range<u32> {
        match self.allocation_unit {
            AllocationUnit::Die => die..die + 1,
            AllocationUnit::Plane => die * self.geometry.planes_per_die..(die + 1) * self.geometry.planes_per_die,
        }
    }

    pub fn allocation_units(&self) -> u32 {
        match self.allocation_unit {
            AllocationUnit::Die => self.geometry.total_dies(),
            AllocationUnit::Plane => self.geometry.total_planes(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicyKind {
    /// Fewest valid pages.
    Greedy,
    /// Maximum (1-u)/(2u) x age (Rosenblum and Ousterhout).
    CostBenefit,
    /// The block closed longest ago that has an invalid page (a circular log).
    Fifo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    #[serde(default = "greedy")]
    pub policy: VictimPolicyKind,
    /// Foreground GC runs when a unit needs a new block and has at most this many free blocks;
    /// it reclaims victims until the unit has more.
    #[serde(default = "four")]
    pub free_blocks_low: u32,
    /// Which free block of a unit is written next.
    #[serde(default)]
    pub free_block_choice: FreeBlockChoice,
    /// What the FTL keeps in SRAM to know which pages GC must move.
    #[serde(default)]
    pub validity: ValidityTracking,
    /// With `validity = "ilog"`: the SRAM of the queue of blocks' invalid flags (BIFQ), in bytes
    /// (paper 000 Table 8.1: 8 KB).
    #[serde(default = "ilog_queue_bytes")]
    pub ilog_queue_bytes: u32,
    /// With `validity = "ilog"`: how many invalidation pages the log keeps (logical invalidation
    /// page numbers, rewritten round robin; paper 000 Table 8.1: 256).
    #[serde(default = "ilog_pages")]
    pub ilog_pages: u32,
    /// Background GC (`parallel` only): a unit with at most this many free blocks is collected,
    /// one victim at a time at the lowest priority, whenever its die falls idle, until it has
    /// one block more (hysteresis); foreground GC still runs at `free_blocks_low`. 0: off.
    #[serde(default)]
    pub background_free_blocks: u32,
}

/// What an FTL keeps in SRAM about page validity (paper 000 chapters 5-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValidityTracking {
    /// A bit per page: GC knows which pages are valid without reading them (1 bit per page of SRAM).
    #[default]
    Bitmap,
    /// An invalid-page counter per block only (enough for greedy selection): GC reads every
    /// programmed page of its victim and asks the FTL's mapping whether the page is current.
    Counters,
    /// ILog (paper 000 chapter 8): the counters, and each block's invalid flags logged in
    /// invalidation pages on flash through a small queue in SRAM. GC reads at most one
    /// invalidation page per victim, skips the flagged pages and validates the others as with
    /// `counters`; recovery reads the log to skip invalid pages.
    Ilog,
}

impl ValidityTracking {
    /// Write streams the tracker adds to the FTL's own (ILog's invalidation pages).
    pub fn extra_streams(self) -> u32 {
        u32::from(self == ValidityTracking::Ilog)
    }
}

/// How the free pool picks the next block of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreeBlockChoice {
    /// The block erased longest ago (a FIFO: erases spread as blocks cycle through the pool).
    #[default]
    OldestErased,
    /// The block erased fewest times (dynamic wear leveling; ties go to the oldest erased).
    LeastWorn,
}

fn greedy() -> VictimPolicyKind {
    VictimPolicyKind::Greedy
}
fn four() -> u32 {
    4
}
fn ilog_queue_bytes() -> u32 {
    8192
}
fn ilog_pages() -> u32 {
    256
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            policy: greedy(),
            free_blocks_low: four(),
            free_block_choice: FreeBlockChoice::default(),
            validity: ValidityTracking::default(),
            ilog_queue_bytes: ilog_queue_bytes(),
            ilog_pages: ilog_pages(),
            background_free_blocks: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressPolicy {
    /// Reject a request beyond the exported capacity, naming its trace line.
    Error,
    /// Wrap addresses modulo the capacity.
    Fold,
    /// Scale every address by capacity / (highest address the trace declares), see `host.scale_span_bytes`.
    Scale,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    #[serde(default = "error_policy")]
    pub address_policy: AddressPolicy,
    /// Address span of the trace for the `scale` policy, in bytes (required with `scale`).
    #[serde(default)]
    pub scale_span_bytes: Option<u64>,
    /// Arrival times are divided by this factor (paper 001 compresses traces x3 to x50).
    #[serde(default = "one")]
    pub time_scale: f64,
    /// At most this many requests outstanding in the device (the default is the Linux NVMe
    /// driver's queue depth); a request arriving at a full queue waits in the host until one
    /// completes, and its response time includes the wait. On one FIFO server (`fifo-single`) the
    /// limit changes no start or finish, so it matters there only to a closed loop.
    #[serde(default = "default_queue_depth")]
    pub queue_depth: u32,
}

/// The controller's DRAM write buffer (`controller::write_buffer`; `parallel` timing only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    /// Capacity in MiB; 0 (the default) means no buffer: writes go straight to the FTL.
    #[serde(default)]
    pub size_mb: f64,
    /// What a power loss does to the buffered pages.
    #[serde(default)]
    pub on_power_loss: BufferOnPowerLoss,
    /// Whether a host read of a buffered page is served from the buffer (the default). `false`:
    /// the buffer is dedicated to writes (paper 001 §2.4.3, §2.5.2) and such a read is timed as
    /// a flash read of the page's copy on flash.
    #[serde(default = "yes")]
    pub serves_reads: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferOnPowerLoss {
    /// Capacitor-backed (paper 001's assumption): buffered pages are written to flash first.
    #[default]
    Flush,
    /// Lost: the host reads their previous versions afterwards.
    Volatile,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig { size_mb: 0.0, on_power_loss: BufferOnPowerLoss::default(), serves_reads: yes() }
    }
}

impl BufferConfig {
    /// Capacity in pages of `page_size` bytes (0: no buffer).
    pub fn pages(&self, page_size: u32) -> u32 {
        (self.size_mb * 1024.0 * 1024.0 / page_size as f64).floor() as u32
    }
}

fn default_queue_depth() -> u32 {
    1024
}

fn error_policy() -> AddressPolicy {
    AddressPolicy::Error
}
fn one() -> f64 {
    1.0
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            address_policy: error_policy(),
            scale_span_bytes: None,
            time_scale: 1.0,
            queue_depth: default_queue_depth(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionMode {
    None,
    /// Write every exported page once, sequentially (paper 000).
    Fill,
    /// Fill, then overwrite random pages until the device reaches steady state.
    Age,
}

/// Whether `precondition.fill_fraction` has its default, left out of result files (which then
/// read as before the key existed).
fn is_one(x: &f64) -> bool {
    *x == 1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionConfig {
    #[serde(default = "fill")]
    pub mode: PreconditionMode,
    /// With `age`: random single-page overwrites, as a multiple of the exported pages.
    #[serde(default = "two")]
    pub age_factor: f64,
    /// The share of the logical space written sequentially, from LPN 0 (1: all of it; paper 004's
    /// aging writes 0.7). The rest stays unmapped.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub fill_fraction: f64,
    /// With `age`: the share of the logical space, from LPN 0, the random overwrites land in
    /// (default: all that was written). Paper 004's aging mode B confines them to 0.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_span: Option<f64>,
    /// Replay the preconditioning's host writes through the FTL's own write path instead of
    /// starting from the shared layout, so that its translation pages are interleaved with the
    /// data as those writes left them (paper 000 §8.2.5's general-case recovery).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay: bool,
    /// The workload's first requests served through the FTL before the measured run, untimed and
    /// unmeasured, so that it starts with the mapping caches those requests warmed (0: caches
    /// start cold). They are part of the workload: `--requests` counts them.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub warm_up_requests: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl PreconditionConfig {
    /// Logical pages written sequentially.
    pub fn written_pages(&self, logical_pages: u32) -> u32 {
        (logical_pages as f64 * self.fill_fraction).round() as u32
    }

    /// Random single-page overwrites after the sequential part (none unless `age`).
    pub fn overwrites(&self, logical_pages: u32) -> u64 {
        match self.mode {
            PreconditionMode::Age => (logical_pages as f64 * self.age_factor) as u64,
            _ => 0,
        }
    }

    /// The LPNs `0..span` the random overwrites land in.
    pub fn overwrite_span(&self, logical_pages: u32) -> u32 {
        match self.age_span {
            Some(share) => (logical_pages as f64 * share).round() as u32,
            None => self.written_pages(logical_pages),
        }
    }
}

fn fill() -> PreconditionMode {
    PreconditionMode::Fill
}
fn two() -> f64 {
    2.0
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            mode: fill(),
            age_factor: two(),
            fill_fraction: one(),
            age_span: None,
            replay: false,
            warm_up_requests: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Check every host read against the oracle.
    #[serde(default = "yes")]
    pub oracle: bool,
    /// Run the full invariant check every N requests (0 = never).
    #[serde(default)]
    pub invariants_every: u64,
    /// Simulated power losses: "" (none), "N", "N,M,...", "random:K" or "random:K:N"
    /// (syntax in `check::PowerLossPlan`).
    #[serde(default)]
    pub power_loss_at: String,
    /// Each planned power loss strikes inside its request, between the flash operations the FTL
    /// issues for it (a program it interrupts leaves a corrupt page), instead of after it.
    #[serde(default)]
    pub power_loss_inside: bool,
    /// Simulator memory a run may take, bytes; by default the memory the machine has available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<u64>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            oracle: true,
            invariants_every: 0,
            power_loss_at: String::new(),
            power_loss_inside: false,
            max_memory: None,
        }
    }
}

/// Aging beyond this many overwrites of the whole logical space reaches no steadier state and
/// only takes time (the default is 2).
const MAX_AGE_FACTOR: f64 = 64.0;

/// Largest latency of one array operation, microseconds (1000 s).
const MAX_OP_US: f64 = 1e9;
/// Slowest bus, nanoseconds per byte (1 KB/s).
const MAX_BUS_NS_PER_BYTE: f64 = 1e6;
/// Dies the `parallel` model tells apart (a die number fits 16 bits in an operation in flight).
const MAX_PARALLEL_DIES: u32 = 1 << 16;
/// A write buffer of at most 1 TiB (its bookkeeping is per logical page, not per buffered page).
const MAX_BUFFER_MB: f64 = 1024.0 * 1024.0;
/// Strongest compression or stretching of trace time.
const MIN_TIME_SCALE: f64 = 1e-6;

/// Everything one run needs except the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The preset this configuration started from.
    #[serde(default = "default_preset")]
    pub preset: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub device: DeviceConfig,
    #[serde(default)]
    pub gc: GcConfig,
    #[serde(default)]
    pub host: HostConfig,
    #[serde(default)]
    pub buffer: BufferConfig,
    #[serde(default)]
    pub precondition: PreconditionConfig,
    #[serde(default)]
    pub check: CheckConfig,
    /// Per-FTL parameter tables, `[ftl.<name>]`; each FTL validates its own.
    #[serde(default)]
    pub ftl: toml::Table,
}

fn default_preset() -> String {
    "mlc8g".into()
}
fn default_seed() -> u64 {
    42
}

impl Config {
    /// Spare blocks garbage collection needs for an FTL that writes `streams` streams of pages
    /// and keeps `metadata_pages` pages of its own in flash (translation pages): per allocation
    /// unit, the free blocks at which GC starts (`gc.free_blocks_low`, at least one per stream:
    /// a collection may have to open a block in each, see `BlockManager`), an open block per
    /// stream and one block's worth of invalid pages (so a victim exists); plus the blocks the
    /// metadata fills, and ILog's invalidation pages (`gc.ilog_pages`).
    pub fn spare_blocks_needed(&self, streams: u32, metadata_pages: u32) -> u64 {
        let per_unit = self.blocks_per_unit_needed(streams);
        let metadata_blocks = metadata_pages.div_ceil(self.device.geometry.data_pages_per_block()) as u64;
        per_unit * self.device.allocation_units() as u64 + metadata_blocks + self.log_blocks() as u64
    }

    /// Blocks ILog's live invalidation pages fill (none without ILog).
    fn log_blocks(&self) -> u32 {
        match self.gc.validity {
            ValidityTracking::Ilog => self.gc.ilog_pages.div_ceil(self.device.geometry.data_pages_per_block()),
            _ => 0,
        }
    }

    /// Per allocation unit: the GC reserve, an open block per stream and one block of slack.
    fn blocks_per_unit_needed(&self, streams: u32) -> u64 {
        let streams = streams + self.gc.validity.extra_streams();
        crate::ftl::common::gc_threshold(self.gc.free_blocks_low, streams) as u64 + streams as u64 + 1
    }

    /// With `gc.validity = "ilog"`: the queue holds a block's flags, an invalidation page holds
    /// one, and the log's pages hold every block's with room to spare (a page rewritten round
    /// robin must be able to take new flags beside those it carries over).
    fn validate_ilog(&self) -> Result<()> {
        if self.gc.validity != ValidityTracking::Ilog {
            return Ok(());
        }
        let g = &self.device.geometry;
        let bif = crate::ftl::common::ilog::bif_bytes(g.pages_per_block);
        if g.page_size < bif {
            return Err(SimError::config(
                "device.geometry.page_size",
                format!("{} B cannot hold one block's invalid flags ({bif} B) for gc.validity = \"ilog\"", g.page_size),
            ));
        }
        if self.gc.ilog_queue_bytes < bif {
            return Err(SimError::config(
                "gc.ilog_queue_bytes",
                format!("{} B cannot hold one block's invalid flags ({bif} B)", self.gc.ilog_queue_bytes),
            ));
        }
        let per_page = (g.page_size / bif) as u64;
        let pages = self.gc.ilog_pages as u64;
        if !(1..=crate::ftl::common::ilog::MAX_LOG_PAGES as u64).contains(&pages)
            || pages * per_page <= g.total_blocks() as u64
        {
            return Err(SimError::config(
                "gc.ilog_pages",
                format!(
                    "must be at most {} and hold more than the device's {} blocks' flags ({per_page} per page), found {pages}",
                    crate::ftl::common::ilog::MAX_LOG_PAGES,
                    g.total_blocks()
                ),
            ));
        }
        Ok(())
    }

    /// Checks [`Config::spare_blocks_needed`] against the spare blocks of the device, naming the
    /// field that sets the exported capacity.
    pub fn check_spare_blocks(&self, streams: u32, metadata_pages: u32) -> Result<()> {
        let d = &self.device;
        let units = d.allocation_units();
        let blocks_per_unit = d.geometry.total_blocks() / units;
        let per_unit = self.blocks_per_unit_needed(streams);
        if per_unit > blocks_per_unit as u64 {
            return Err(SimError::config(
                "gc.free_blocks_low",
                format!(
                    "{} leaves no room in units of {blocks_per_unit} blocks (the GC reserve, {} open blocks and \
                     one more must fit)",
                    self.gc.free_blocks_low, streams
                ),
            ));
        }
        let needed = self.spare_blocks_needed(streams, metadata_pages);
        let data_pages_per_block = d.geometry.data_pages_per_block();
        let spare = d.geometry.data_pages().saturating_sub(d.logical_pages()) / data_pages_per_block;
        if (spare as u64) < needed {
            let mut metadata = match metadata_pages.div_ceil(data_pages_per_block) {
                0 => String::new(),
                blocks => format!(" + {blocks} blocks of {metadata_pages} translation pages"),
            };
            if self.log_blocks() > 0 {
                let pages = self.gc.ilog_pages;
                metadata += &format!(" + {} blocks of {pages} invalidation pages (gc.ilog_pages)", self.log_blocks());
            }
            return Err(SimError::config(
                if d.logical_pages.is_some() { "device.logical_pages" } else { "device.overprovisioning" },
                format!(
                    "{} exported pages leave {spare} spare blocks; garbage collection needs at least {needed} \
                     ({per_unit} x {units} allocation units{metadata}; gc.free_blocks_low sets {})",
                    d.logical_pages(),
                    self.gc.free_blocks_low
                ),
            ));
        }
        Ok(())
    }

    /// The named preset with no overrides.
    pub fn preset(name: &str) -> Result<Config> {
        ConfigBuilder::new().preset(name)?.build()
    }

    pub fn validate(&self) -> Result<()> {
        let d = &self.device;
        d.geometry.validate()?;
        self.validate_ilog()?;
        if d.timing.model == TimingModelKind::Parallel && d.geometry.total_dies() > MAX_PARALLEL_DIES {
            return Err(SimError::config(
                "device.timing.model",
                format!(
                    "`parallel` models at most {MAX_PARALLEL_DIES} dies; the geometry has {}",
                    d.geometry.total_dies()
                ),
            ));
        }
        let finite_positive = [
            ("device.latency.read_us", d.latency.read_us),
            ("device.latency.program_us", d.latency.program_us),
            ("device.latency.erase_us", d.latency.erase_us),
        ];
        // Bounded so that simulated time (u64 nanoseconds) cannot overflow on any realistic run.
        for (field, v) in finite_positive {
            if !(0.0..=MAX_OP_US).contains(&v) {
                return Err(SimError::config(
                    field,
                    format!("must be a number of microseconds in [0, {MAX_OP_US:?}], found {v:?}"),
                ));
            }
        }
        if !(0.0..=MAX_BUS_NS_PER_BYTE).contains(&d.latency.bus_ns_per_byte) {
            return Err(SimError::config(
                "device.latency.bus_ns_per_byte",
                format!("must be in [0, {MAX_BUS_NS_PER_BYTE:?}], found {:?}", d.latency.bus_ns_per_byte),
            ));
        }
        let link = d.timing.host_link_mb_s;
        if !(link == 0.0 || (1000.0 / MAX_BUS_NS_PER_BYTE..=f64::MAX).contains(&link)) {
            return Err(SimError::config(
                "device.timing.host_link_mb_s",
                format!(
                    "must be 0 (no host link) or a bandwidth of at least {:?} MB/s, found {link:?}",
                    1000.0 / MAX_BUS_NS_PER_BYTE
                ),
            ));
        }
        if !(0.0..1.0).contains(&d.overprovisioning) {
            return Err(SimError::config(
                "device.overprovisioning",
                format!("must be in [0, 1) (a fraction of the physical pages), found {}", d.overprovisioning),
            ));
        }
        let physical = d.geometry.data_pages();
        let logical = d.logical_pages();
        if logical == 0 {
            return Err(SimError::config("device.logical_pages", "the device exports no page"));
        }
        if logical > physical {
            return Err(SimError::config(
                if d.logical_pages.is_some() { "device.logical_pages" } else { "device.overprovisioning" },
                format!("{logical} exported pages exceed the {physical} physical data pages"),
            ));
        }
        self.check_spare_blocks(1, 0)?;
        if !(MIN_TIME_SCALE..=1.0 / MIN_TIME_SCALE).contains(&self.host.time_scale) {
            return Err(SimError::config(
                "host.time_scale",
                format!(
                    "must be in [{MIN_TIME_SCALE:?}, {:?}], found {:?}",
                    1.0 / MIN_TIME_SCALE,
                    self.host.time_scale
                ),
            ));
        }
        if self.host.queue_depth == 0 {
            return Err(SimError::config("host.queue_depth", "must be at least 1"));
        }
        if !(self.buffer.size_mb.is_finite() && (0.0..=MAX_BUFFER_MB).contains(&self.buffer.size_mb)) {
            return Err(SimError::config(
                "buffer.size_mb",
                format!("must be in [0, {MAX_BUFFER_MB:?}] MiB, found {:?}", self.buffer.size_mb),
            ));
        }
        if self.buffer.size_mb > 0.0 && self.buffer.pages(d.geometry.page_size) == 0 {
            return Err(SimError::config(
                "buffer.size_mb",
                format!(
                    "{} MiB holds no page of {} bytes (0 turns the buffer off)",
                    self.buffer.size_mb, d.geometry.page_size
                ),
            ));
        }
        if !self.buffer.serves_reads && self.buffer.size_mb == 0.0 {
            return Err(SimError::config(
                "buffer.serves_reads",
                "false needs a write buffer (buffer.size_mb > 0): with none, every read goes to flash already",
            ));
        }
        let background = self.gc.background_free_blocks;
        if background > 0 {
            if background <= self.gc.free_blocks_low {
                return Err(SimError::config(
                    "gc.background_free_blocks",
                    format!(
                        "must exceed gc.free_blocks_low ({}): background GC starts before the pool runs low, found {background}",
                        self.gc.free_blocks_low
                    ),
                ));
            }
            let per_unit = self.device.geometry.blocks_per_plane as u64
                * match self.device.allocation_unit {
                    AllocationUnit::Die => self.device.geometry.planes_per_die as u64,
                    AllocationUnit::Plane => 1,
                };
            if background as u64 >= per_unit {
                return Err(SimError::config(
                    "gc.background_free_blocks",
                    format!("must be below the {per_unit} blocks of an allocation unit, found {background}"),
                ));
            }
        }
        if self.buffer.size_mb > 0.0 && self.check.power_loss_inside {
            return Err(SimError::config(
                "check.power_loss_inside",
                "strikes inside a request's flash operations, which a write buffer takes away from host writes; \
                 use power losses between requests with buffer.size_mb",
            ));
        }
        d.cpu.validate()?;
        let t = &d.timing;
        t.suspension.validate(t.phases.as_ref(), &d.latency, t.pe_latency)?;
        let read_priority = t.model == TimingModelKind::Parallel && t.scheduler == crate::timing::SchedulerKind::Rps;
        if (t.suspension.enabled() || t.suspension.limits_writes()) && !read_priority {
            return Err(SimError::config(
                "device.timing.suspension",
                "needs device.timing.model = \"parallel\" and device.timing.scheduler = \"rps\" (it builds on read priority)",
            ));
        }
        if let Some(diffecc) = &t.diffecc {
            diffecc.validate(d.latency.program_us)?;
            if !read_priority {
                return Err(SimError::config(
                    "device.timing.diffecc",
                    "needs device.timing.model = \"parallel\" and device.timing.scheduler = \"rps\" (reads wait in \
                     the priority queue, writes in the base queue its load estimate counts)",
                ));
            }
            if t.suspension.enabled() {
                return Err(SimError::config(
                    "device.timing.diffecc",
                    "cannot be combined with device.timing.suspension (a suspended program's phases ignore its write mode)",
                ));
            }
        }
        if d.timing.model == TimingModelKind::FifoSingle {
            let parallel_only = [
                ("device.timing.scheduler", d.timing.scheduler != crate::timing::SchedulerKind::Fifo),
                ("device.timing.copy_back", d.timing.copy_back),
                ("buffer.size_mb", self.buffer.size_mb > 0.0),
                ("gc.background_free_blocks", self.gc.background_free_blocks > 0),
                ("device.timing.host_link_mb_s", d.timing.host_link_mb_s != 0.0),
            ];
            if let Some((field, _)) = parallel_only.iter().find(|(_, set)| *set) {
                return Err(SimError::config(
                    *field,
                    "needs device.timing.model = \"parallel\" (fifo-single serves whole requests on one server)",
                ));
            }
        }
        if self.host.address_policy == AddressPolicy::Scale && self.host.scale_span_bytes.unwrap_or(0) == 0 {
            return Err(SimError::config(
                "host.scale_span_bytes",
                "the `scale` address policy needs the trace's span in bytes",
            ));
        }
        if !(0.0..=MAX_AGE_FACTOR).contains(&self.precondition.age_factor) {
            return Err(SimError::config(
                "precondition.age_factor",
                format!(
                    "must be in [0, {MAX_AGE_FACTOR}] (random overwrites, in multiples of the logical capacity), \
                     found {:?}",
                    self.precondition.age_factor
                ),
            ));
        }
        self.validate_precondition()?;
        crate::check::PowerLossPlan::parse(&self.check.power_loss_at)?;
        Ok(())
    }

    /// The sequentially written share and the span of the random overwrites (paper 004's aging).
    fn validate_precondition(&self) -> Result<()> {
        let p = &self.precondition;
        if !(p.fill_fraction > 0.0 && p.fill_fraction <= 1.0) {
            return Err(SimError::config(
                "precondition.fill_fraction",
                format!(
                    "must be in (0, 1] (the share of the logical space written sequentially), found {:?}",
                    p.fill_fraction
                ),
            ));
        }
        if let Some(span) = p.age_span {
            if !(span > 0.0 && span <= p.fill_fraction) {
                return Err(SimError::config(
                    "precondition.age_span",
                    format!(
                        "must be in (0, precondition.fill_fraction = {}] (random overwrites land in written pages), \
                         found {span:?}",
                        p.fill_fraction
                    ),
                ));
            }
            if p.mode != PreconditionMode::Age {
                return Err(SimError::config("precondition.age_span", "only applies with precondition.mode = \"age\""));
            }
        }
        if p.mode == PreconditionMode::None && p.replay {
            return Err(SimError::config(
                "precondition.replay",
                "does not apply with precondition.mode = \"none\" (there is no fill to replay)",
            ));
        }
        if p.mode == PreconditionMode::None && p.fill_fraction != 1.0 {
            return Err(SimError::config(
                "precondition.fill_fraction",
                "does not apply with precondition.mode = \"none\" (nothing is written)",
            ));
        }
        Ok(())
    }

    /// This configuration as a TOML value (for result files and the Python binding).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("configuration serialises")
    }
}

/// Builds a [`Config`] from a preset, TOML documents and `key=value` overrides.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    preset: Option<String>,
    layers: Vec<(String, toml::Table)>,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigBuilder {
    pub fn new() -> Self {
        ConfigBuilder { preset: None, layers: Vec::new() }
    }

    pub fn preset(mut self, name: &str) -> Result<Self> {
        preset_toml(name)?;
        self.preset = Some(name.to_string());
        Ok(self)
    }

    /// Adds a TOML document; `origin` names it in errors (a file path).
    pub fn toml(self, origin: &str, text: &str) -> Result<Self> {
        let table: toml::Table =
            text.parse().map_err(|e: toml::de::Error| SimError::config(origin, toml_error_line(&e)))?;
        self.table(origin, table)
    }

    /// Adds an already-parsed TOML table (e.g. converted from a Python dict); `origin` names it in errors.
    pub fn table(mut self, origin: &str, table: toml::Table) -> Result<Self> {
        if let Some(p) = table.get("preset") {
            let name = p.as_str().ok_or_else(|| SimError::config(format!("{origin}: preset"), "must be a string"))?;
            self = self.preset(name)?;
        }
        self.layers.push((origin.to_string(), table));
        Ok(self)
    }

    /// Adds `dotted.key=value`; the value is read as TOML when it parses, otherwise as a string.
    pub fn set(mut self, assignment: &str) -> Result<Self> {
        let (key, raw) =
            assignment.split_once('=').ok_or_else(|| SimError::config(assignment, "expected key=value"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(SimError::config(assignment, "empty key"));
        }
        let value = parse_value(raw.trim());
        if key == "preset" {
            let name = value.as_str().ok_or_else(|| SimError::config("preset", "must be a string"))?;
            return self.preset(name);
        }
        let mut table = toml::Table::new();
        let mut cursor = &mut table;
        let parts: Vec<&str> = key.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            cursor = cursor
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .expect("fresh table");
        }
        cursor.insert(parts[parts.len() - 1].to_string(), value);
        self.layers.push((format!("--set {key}"), table));
        Ok(self)
    }

    pub fn build(self) -> Result<Config> {
        let preset = self.preset.unwrap_or_else(default_preset);
        let mut merged: toml::Table = preset_toml(&preset)?
            .parse()
            .map_err(|e: toml::de::Error| SimError::config(format!("preset {preset}"), e.to_string()))?;
        for (_, layer) in self.layers {
            merge(&mut merged, layer);
        }
        merged.insert("preset".into(), toml::Value::String(preset));
        let config: Config = serde_path_to_error::deserialize(toml::Value::Table(merged)).map_err(|e| {
            let path = e.path().to_string();
            // The root, or a key that is the empty string, has no path to name.
            let field = if path == "." || path.is_empty() { "config".to_string() } else { path };
            SimError::config(field, crate::names::with_suggestion(e.into_inner().message().to_string()))
        })?;
        config.validate()?;
        Ok(config)
    }
}

/// A TOML syntax error as one line: the message, and where it is (some messages are empty).
fn toml_error_line(e: &toml::de::Error) -> String {
    let message = if e.message().is_empty() { "invalid TOML" } else { e.message() };
    match e.span() {
        Some(span) => format!("{message} (at byte {})", span.start),
        None => message.to_string(),
    }
}

/// A `--set` value: TOML when it parses as TOML, else a bare string.
pub fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("parsed key"),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_and_validates() {
        for name in preset_names() {
            let c = Config::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.device.name, name);
        }
    }

    #[test]
    fn mlc8g_matches_table_4_1() {
        let c = Config::preset("mlc8g").unwrap();
        let g = &c.device.geometry;
        assert_eq!(g.total_blocks(), 4096);
        assert_eq!(g.pages_per_block, 256);
        assert_eq!((g.page_size, g.spare_size), (8192, 448));
        assert_eq!(g.planes_per_die, 2);
        assert_eq!(g.total_dies(), 1);
        assert_eq!(c.device.latency.read_us, 75.0);
        assert_eq!(c.device.latency.program_us, 1300.0);
        assert_eq!(c.device.latency.erase_us, 3800.0);
        assert_eq!(c.device.latency.bus_ns_per_byte, 20.0);
        assert_eq!(c.device.logical_pages(), 1_015_808);
        assert_eq!(c.device.timing.model, TimingModelKind::FifoSingle);
        assert!(c.device.timing.plane_register);
    }

    /// Full-page bus time of a preset, nanoseconds.
    fn page_transfer_ns(c: &Config) -> u64 {
        crate::timing::OpCosts::new(&c.device).page_transfer
    }

    /// Paper 002, Table 3: 4 KB pages, 256 KB blocks, 25/200/1500 us, 15% over-provisioning (over
    /// the logical space), a single server without bus time; section 5.1.1: the SSD is as large
    /// as the trace's address space.
    fn assert_tpftl_device(c: &Config, logical_bytes: u64) {
        let g = &c.device.geometry;
        assert_eq!(g.page_size, 4096);
        assert_eq!(g.pages_per_block * g.page_size, 256 * 1024);
        assert_eq!(c.device.latency.read_us, 25.0);
        assert_eq!(c.device.latency.program_us, 200.0);
        assert_eq!(c.device.latency.erase_us, 1500.0);
        assert_eq!(page_transfer_ns(c), 0);
        assert_eq!(c.device.logical_pages() as u64 * 4096, logical_bytes);
        let logical_blocks = (logical_bytes / (256 * 1024)) as f64;
        assert_eq!(g.total_blocks(), (logical_blocks * 1.15).ceil() as u32);
        assert_eq!(g.total_dies(), 1);
        assert_eq!(c.device.timing.model, TimingModelKind::FifoSingle);
        // GC below 0.5% of the physical blocks (spec T10).
        let threshold = 0.005 * g.total_blocks() as f64;
        assert!((c.gc.free_blocks_low as f64) < threshold && (c.gc.free_blocks_low + 1) as f64 >= threshold);
    }

    #[test]
    fn tpftl_matches_paper_002_table_3() {
        assert_tpftl_device(&Config::preset("tpftl").unwrap(), 512 << 20);
        assert_tpftl_device(&Config::preset("tpftl-msr").unwrap(), 16 << 30);
    }

    /// docs/presets.md: the per-trace capacity of paper 002 by `--set` gives the named variant.
    #[test]
    fn tpftl_msr_capacity_by_set_equals_the_variant() {
        let c = ConfigBuilder::new()
            .preset("tpftl")
            .unwrap()
            .set("device.logical_pages=4194304")
            .unwrap()
            .set("device.geometry.blocks_per_plane=75367")
            .unwrap()
            .set("gc.free_blocks_low=376")
            .unwrap()
            .build()
            .unwrap();
        let msr = Config::preset("tpftl-msr").unwrap();
        assert_eq!(c.device.geometry, msr.device.geometry);
        assert_eq!(c.device.logical_pages(), msr.device.logical_pages());
        assert_eq!(c.device.latency, msr.device.latency);
        assert_eq!(c.gc, msr.gc);
    }

    /// Paper 004, section VI: 32 GB, 8 KB pages, 128 pages per block, 60/800/1500 us.
    #[test]
    fn cpm_matches_paper_004_section_6() {
        let c = Config::preset("cpm").unwrap();
        let g = &c.device.geometry;
        assert_eq!((g.page_size, g.pages_per_block), (8192, 128));
        assert_eq!(c.device.latency.read_us, 60.0);
        assert_eq!(c.device.latency.program_us, 800.0);
        assert_eq!(c.device.latency.erase_us, 1500.0);
        assert_eq!(page_transfer_ns(&c), 0);
        assert_eq!(c.device.logical_pages() as u64 * 8192, 32 << 30);
        // 7% over the logical space (spec C5), rounded up to whole blocks.
        assert_eq!(g.total_blocks(), (32768.0f64 * 1.07).ceil() as u32);
        assert_eq!(c.device.timing.model, TimingModelKind::FifoSingle);
        // Section VI-C's aging, mode A: 70% written sequentially, 20% of the space overwritten inside it.
        assert_eq!(c.precondition.mode, PreconditionMode::Age);
        assert_eq!(
            (c.precondition.fill_fraction, c.precondition.age_factor, c.precondition.age_span),
            (0.7, 0.2, None)
        );
    }

    #[test]
    fn precondition_shares_out_of_range_are_named() {
        let err = |sets: &[&str]| {
            let mut b = ConfigBuilder::new();
            for set in sets {
                b = b.set(set).unwrap();
            }
            b.build().unwrap_err().to_string()
        };
        for bad in ["0", "1.5", "-0.1", "nan"] {
            let e = err(&[&format!("precondition.fill_fraction={bad}")]);
            assert!(e.contains("precondition.fill_fraction") && e.contains("must be in (0, 1]"), "{e}");
        }
        let e = err(&["precondition.mode=\"age\"", "precondition.fill_fraction=0.5", "precondition.age_span=0.7"]);
        assert!(e.contains("precondition.age_span") && e.contains("fill_fraction = 0.5") && e.contains("0.7"), "{e}");
        let e = err(&["precondition.mode=\"age\"", "precondition.age_span=0"]);
        assert!(e.contains("precondition.age_span"), "{e}");
        let e = err(&["precondition.mode=\"fill\"", "precondition.age_span=0.2"]);
        assert!(e.contains("precondition.age_span") && e.contains("only applies with"), "{e}");
        let e = err(&["precondition.mode=\"none\"", "precondition.replay=true"]);
        assert!(e.contains("precondition.replay") && e.contains("no fill to replay"), "{e}");
        let e = err(&["precondition.mode=\"none\"", "precondition.fill_fraction=0.7"]);
        assert!(e.contains("precondition.fill_fraction") && e.contains("does not apply"), "{e}");
        let e = err(&["precondition.age_spam=0.2"]);
        assert!(e.contains("age_spam"), "{e}");
    }

    /// Paper 001, section 4.5.1 and Table 4.3.
    #[test]
    fn ssd16_matches_paper_001_section_4_5_1() {
        let c = Config::preset("ssd16").unwrap();
        let g = &c.device.geometry;
        assert_eq!((g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die), (16, 1, 1, 4));
        assert_eq!(g.page_size, 4096);
        assert_eq!(g.blocks_per_plane as u64 * g.pages_per_block as u64 * 4096, 1 << 30);
        assert_eq!(c.device.latency.read_us, 25.0);
        assert_eq!(c.device.latency.program_us, 200.0);
        assert_eq!(c.device.latency.erase_us, 1500.0);
        assert_eq!(page_transfer_ns(&c), 40_000);
        assert_eq!(c.device.overprovisioning, 0.30);
        // The MS SSD extension's summary page: 63 data pages per 64-page block, 30% of them reserved.
        assert!(g.summary_page);
        assert_eq!(c.device.logical_pages(), (g.total_blocks() as f64 * 63.0 * 0.7).floor() as u32);
        assert_eq!(c.device.logical_pages(), 11_560_550);
        assert_eq!(c.device.allocation_unit, AllocationUnit::Plane);
        assert_eq!(c.device.striping, Striping::Raid0);
        assert_eq!(c.device.timing.model, TimingModelKind::Parallel);
        assert_eq!(c.device.timing.scheduler, crate::timing::SchedulerKind::Rps);
        assert!(c.device.timing.copy_back);
        assert_eq!(c.gc.policy, VictimPolicyKind::Greedy);
        // Background GC while clean space < 10% of the exported space of each plane pool.
        let exported_blocks_per_plane = 0.7 * g.blocks_per_plane as f64;
        let threshold = 0.1 * exported_blocks_per_plane;
        let background = c.gc.background_free_blocks;
        assert!((background as f64) < threshold && (background + 1) as f64 >= threshold);
        assert_eq!(c.gc.free_blocks_low, 1);
        assert_eq!(c.buffer.size_mb, 64.0);
    }

    /// Paper 001, sections 2.3.2-2.5 and Table 2.3, on `ssd16`'s platform.
    #[test]
    fn ssd16_ch2_matches_paper_001_chapter_2() {
        let c = Config::preset("ssd16-ch2").unwrap();
        assert_eq!(c.device.latency.read_us, 25.0);
        assert_eq!(c.device.latency.program_us, 500.0);
        assert_eq!(page_transfer_ns(&c), 40_960, "100 MB/s");
        let diffecc = c.device.timing.diffecc.as_ref().unwrap();
        assert_eq!(diffecc.program_us, [500.0, 538.0, 606.0, 754.0]);
        assert_eq!(diffecc.decode_us, [41.20, 21.71, 11.25, 5.78]);
        assert_eq!(c.buffer.size_mb, 32.0);
        assert!(!c.buffer.serves_reads, "the cache is dedicated to writes (sections 2.4.3, 2.5.2)");
    }

    #[test]
    fn tlc_nvme_is_a_64_gib_array_of_32_dies() {
        let c = Config::preset("tlc-nvme").unwrap();
        let g = &c.device.geometry;
        assert_eq!((g.channels, g.chips_per_channel * g.dies_per_chip), (8, 4));
        assert_eq!(g.page_size, 16384);
        assert_eq!(g.capacity_bytes(), 64 << 30);
        assert_eq!(page_transfer_ns(&c), 13_166); // (16384 + 2048) B at 1400 MB/s
        assert_eq!(c.device.timing.model, TimingModelKind::Parallel);
    }

    #[test]
    fn set_overrides_a_nested_field() {
        let c = ConfigBuilder::new().set("gc.free_blocks_low=8").unwrap().build().unwrap();
        assert_eq!(c.gc.free_blocks_low, 8);
        let c = ConfigBuilder::new().set("device.timing.model=parallel").unwrap().build().unwrap();
        assert_eq!(c.device.timing.model, TimingModelKind::Parallel);
    }

    #[test]
    fn unknown_field_is_named() {
        let err = ConfigBuilder::new().set("device.geometry.plaens=3").unwrap().build().unwrap_err().to_string();
        assert!(err.contains("device.geometry") && err.contains("plaens"), "{err}");
    }

    #[test]
    fn wrong_type_is_named() {
        let err = ConfigBuilder::new().set("device.geometry.pages_per_block=\"x\"").unwrap().build().unwrap_err();
        assert!(err.to_string().contains("device.geometry.pages_per_block"), "{err}");
    }

    #[test]
    fn summary_pages_need_room_for_data_and_a_scheme_that_leaves_the_last_page_free() {
        let one_page = ConfigBuilder::new()
            .set("device.geometry.summary_page=true")
            .unwrap()
            .set("device.geometry.pages_per_block=1")
            .unwrap()
            .build()
            .unwrap_err()
            .to_string();
        assert!(one_page.contains("device.geometry.summary_page") && one_page.contains("at least 2"), "{one_page}");
        let c = ConfigBuilder::new().set("device.geometry.summary_page=true").unwrap().build().unwrap();
        let g = &c.device.geometry;
        assert_eq!(g.data_pages(), g.total_blocks() * (g.pages_per_block - 1));
        assert_eq!(c.device.logical_pages(), (g.data_pages() as f64 * (1.0 - c.device.overprovisioning)) as u32);
        for ftl in ["bftl", "bast", "fast", "sast", "last", "cpm", "kcpm"] {
            let err = crate::ftl::build_ftl(ftl, &c).map(drop).unwrap_err().to_string();
            assert!(err.contains("device.geometry.summary_page") && err.contains(ftl), "{ftl}: {err}");
        }
        for ftl in ["pftl", "optimal", "dftl", "delta"] {
            crate::ftl::build_ftl(ftl, &c).unwrap_or_else(|e| panic!("{ftl}: {e}"));
        }
    }

    #[test]
    fn impossible_configurations_name_the_field() {
        let cases = [
            ("device.geometry.blocks_per_plane=0", "device.geometry.blocks_per_plane"),
            ("device.overprovisioning=1.0", "device.overprovisioning"),
            ("device.overprovisioning=0.0", "device.overprovisioning"),
            ("device.geometry.page_size=1000", "device.geometry.page_size"),
            ("device.latency.read_us=-1", "device.latency.read_us"),
            ("host.time_scale=0", "host.time_scale"),
            ("host.address_policy=\"scale\"", "host.scale_span_bytes"),
            ("host.queue_depth=0", "host.queue_depth"),
            ("buffer.size_mb=-1", "buffer.size_mb"),
            ("buffer.size_mb=0.001", "buffer.size_mb"),
            ("buffer.serves_reads=false", "buffer.serves_reads"),
            // The write buffer, RPS and copy-back need the parallel model (mlc8g is fifo-single).
            ("buffer.size_mb=64", "buffer.size_mb"),
            ("device.timing.scheduler=\"rps\"", "device.timing.scheduler"),
            ("device.timing.copy_back=true", "device.timing.copy_back"),
            ("device.timing.host_link_mb_s=2000", "device.timing.host_link_mb_s"),
            ("device.timing.host_link_mb_s=-1", "device.timing.host_link_mb_s"),
        ];
        for (set, field) in cases {
            let err = ConfigBuilder::new().set(set).unwrap().build().unwrap_err().to_string();
            assert!(err.contains(field), "{set}: {err}");
        }
        let inside = ConfigBuilder::new()
            .preset("ssd16")
            .and_then(|b| b.set("buffer.size_mb=64"))
            .and_then(|b| b.set("check.power_loss_inside=true"))
            .and_then(|b| b.build())
            .unwrap_err()
            .to_string();
        assert!(inside.contains("check.power_loss_inside"), "{inside}");
        let dies = [
            "device.geometry.channels=65537",
            "device.geometry.blocks_per_plane=16",
            "device.geometry.pages_per_block=4",
        ]
        .iter()
        .try_fold(ConfigBuilder::new().preset("ssd16").unwrap(), |b, s| b.set(s))
        .and_then(|b| b.build())
        .unwrap_err()
        .to_string();
        assert!(dies.contains("device.timing.model") && dies.contains("65536 dies"), "{dies}");
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let err = ConfigBuilder::new().preset("nope").unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("mlc8g"), "{err}");
    }

    #[test]
    fn malformed_toml_names_the_origin() {
        let err = ConfigBuilder::new().toml("my.toml", "device = [").unwrap_err().to_string();
        assert!(err.contains("my.toml"), "{err}");
    }
}
