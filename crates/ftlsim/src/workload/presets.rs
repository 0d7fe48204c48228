//! Synthetic stand-ins for the papers' traces, for users who do not have the real ones. Each
//! preset reproduces the published statistics of one trace: request count (scalable with
//! `scale=`), write ratio, and mean read and write sizes (paper 000 Tables 4.2 and 4.4, paper
//! 001 Table 4.4, paper 002 Table 4, paper 004 Table II). What the papers do not publish (the
//! address pattern, the size shape, often the arrival rate) is assumed, and every preset says
//! what it assumed. Results on them are synthetic, not the papers' traces.

use super::generator::{Arrival, Component, Pattern, SizeDist, SynthSpec};
use super::locality::Locality;
use super::working_sets::WorkingSets;

/// How a preset draws addresses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Address {
    /// 80/20 hot/cold, plus this fraction of requests in 4 sequential streams (presets of traces
    /// whose locality is not published: paper 003).
    HotColdSequential { sequential: f64 },
    /// Paper 004 Table II's working sets (`workload::working_sets`): this many, of this mean
    /// size in MB (2^20 B), each page written this many times on average. The preset's request
    /// count is the one that gives the update count ([`ws_requests`]).
    WorkingSets { count: u32, mean_mb: f64, page_updates: f64 },
    /// The locality pattern (`workload::locality`) with these parameters.
    Locality(PresetLocality),
}

/// The locality of a stand-in: what is fitted to a published column and what is assumed is
/// said by the constants it is built from (below) and in docs/presets.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PresetLocality {
    /// Reads that start where the previous read ended, percent of reads.
    pub seq_read_percent: f64,
    /// Writes that start where the previous write ended, percent of writes.
    pub seq_write_percent: f64,
    /// Share of fresh read runs that start at an earlier write run's start.
    pub read_written: f64,
    /// The published WR_max `read_written` is fitted to, when there is one (paper 001 Table 2.1).
    pub wr_max_percent: Option<f64>,
}

impl Address {
    const fn locality(seq: (f64, f64), read_written: f64, wr_max_percent: Option<f64>) -> Address {
        Address::Locality(PresetLocality {
            seq_read_percent: seq.0,
            seq_write_percent: seq.1,
            read_written,
            wr_max_percent,
        })
    }
}

impl PresetLocality {
    pub fn pattern(&self) -> Locality {
        let run = |share: f64| 1.0 / (1.0 - share / 100.0);
        Locality {
            reuse: REUSE,
            distance: REUSE_DISTANCE,
            read_run: run(self.seq_read_percent),
            write_run: run(self.seq_write_percent),
            read_written: self.read_written,
        }
    }
}

/// Sequential read and write shares (%), paper 002 Table 4 (published).
const SEQ_FINANCIAL1: (f64, f64) = (1.5, 1.8);
const SEQ_FINANCIAL2: (f64, f64) = (0.8, 0.5);
const SEQ_MSR_TS: (f64, f64) = (47.2, 6.0);
const SEQ_MSR_SRC: (f64, f64) = (22.6, 7.1);
/// Assumed where no share is published: the mean of the two MSR volumes' shares for the other
/// MSR volumes, of the two Financial traces' for WebSearch and paper 001's other traces (whose
/// WR_max of 45.6-99.2% needs read runs no longer than write runs).
const SEQ_MSR_MEAN: (f64, f64) = (34.9, 6.55);
const SEQ_SPC_MEAN: (f64, f64) = (1.15, 1.15);

/// Reads of written data fitted to paper 001 Table 2.1's WR_max (`fit_read_written_to_wr_max`
/// below reproduces them); the Financial fits serve paper 000's and 002's Financial stand-ins too.
const READ_WRITTEN_F1: f64 = 0.9013;
const READ_WRITTEN_F2: f64 = 0.6144;
const READ_WRITTEN_C3: f64 = 1.0;
const READ_WRITTEN_C8: f64 = 1.0;
const READ_WRITTEN_DAP: f64 = 1.0;
const READ_WRITTEN_MSN: f64 = 0.1798;
/// Assumed where no WR_max is published: the mean of the six fitted values.
const READ_WRITTEN_MEAN: f64 =
    (READ_WRITTEN_F1 + READ_WRITTEN_F2 + READ_WRITTEN_C3 + READ_WRITTEN_C8 + READ_WRITTEN_DAP + READ_WRITTEN_MSN) / 6.0;
/// Assumed for every stand-in (no paper publishes them), chosen once and not tuned to results:
/// 80% of runs start in the hot set (the share of accesses the earlier 80/20 hot/cold stand-ins
/// sent to their hot space), at a mean LRU stack distance of 4096 run starts.
pub const REUSE: f64 = 0.8;
pub const REUSE_DISTANCE: f64 = 4096.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    /// The real trace this stands in for.
    pub trace: &'static str,
    /// Where the statistics come from.
    pub source: &'static str,
    pub requests: u64,
    pub write_percent: f64,
    /// Mean request size in KB (1024 B), as published or implied by the other columns.
    pub mean_kb: f64,
    pub mean_read_kb: f64,
    pub mean_write_kb: f64,
    /// How addresses are drawn.
    pub address: Address,
    /// Address space used; `None`: the whole device.
    pub footprint_bytes: Option<u64>,
    /// Trace duration (uncompressed), which sets the Poisson arrival rate.
    pub duration_h: Option<f64>,
    /// What is not from the paper.
    pub assumed: &'static str,
}

/// Arrival rate of presets whose trace duration is not published.
pub const DEFAULT_IOPS: f64 = 100.0;

/// Hotness exponent of paper 004's working sets (Zipf over the sets; assumed).
pub const WS_SKEW: f64 = 1.0;

/// The request count of a working-set stand-in: every set is written once and updated, so the
/// bytes written are `page_updates` times the sets' total, `write_percent` of the requests
/// write them, `io_kb` at a time.
pub const fn ws_requests(count: u32, mean_mb: f64, io_kb: f64, page_updates: f64, write_percent: f64) -> u64 {
    let written_kb = page_updates * count as f64 * mean_mb * 1024.0;
    (written_kb / io_kb * 100.0 / write_percent).round() as u64
}

/// A paper 004 stand-in from its Table II row: working sets, mean working-set size (MB), mean
/// I/O size (KB), mean page update count, write ratio (%); the trace duration where the table's
/// caption states one.
#[allow(clippy::too_many_arguments)]
const fn table2(
    name: &'static str,
    trace: &'static str,
    count: u32,
    mean_mb: f64,
    io_kb: f64,
    page_updates: f64,
    write_percent: f64,
    duration_h: Option<f64>,
) -> Preset {
    Preset {
        name,
        trace,
        source: "paper 004 Table II",
        requests: ws_requests(count, mean_mb, io_kb, page_updates, write_percent),
        write_percent,
        mean_kb: io_kb,
        mean_read_kb: io_kb,
        mean_write_kb: io_kb,
        address: Address::WorkingSets { count, mean_mb, page_updates },
        footprint_bytes: None,
        duration_h,
        assumed: if duration_h.is_some() { TABLE2_ASSUMED_TIMED } else { TABLE2_ASSUMED },
    }
}

const TABLE2_ASSUMED: &str = "request count (the one that gives the page update count once every working set is written), equal read and write means, working-set sizes uniform in 0.5-1.5 x the mean at random places, first writes front to back through the sets in a random order, updates and reads Zipf (exponent 1) over the sets, arrival rate (100 IOPS)";
const TABLE2_ASSUMED_TIMED: &str = "request count (the one that gives the page update count once every working set is written), equal read and write means, working-set sizes uniform in 0.5-1.5 x the mean at random places, first writes front to back through the sets in a random order, updates and reads Zipf (exponent 1) over the sets, Poisson arrivals over the stated duration";

impl Preset {
    /// The generator spec at full scale (seed 42).
    pub fn spec(&self) -> SynthSpec {
        let mut address = Vec::new();
        match self.address {
            Address::HotColdSequential { sequential } => {
                if sequential < 1.0 {
                    address.push(Component {
                        weight: 1.0 - sequential,
                        pattern: Pattern::HotCold { access: 0.8, space: 0.2 },
                    });
                }
                if sequential > 0.0 {
                    address.push(Component { weight: sequential, pattern: Pattern::Sequential { streams: 4 } });
                }
            }
            Address::Locality(l) => address.push(Component { weight: 1.0, pattern: Pattern::Locality(l.pattern()) }),
            Address::WorkingSets { count, mean_mb, .. } => address.push(Component {
                weight: 1.0,
                pattern: Pattern::WorkingSets(WorkingSets {
                    count,
                    mean_bytes: mean_mb * (1u64 << 20) as f64,
                    skew: WS_SKEW,
                }),
            }),
        }
        let iops = self.duration_h.map_or(DEFAULT_IOPS, |h| self.requests as f64 / (h * 3600.0));
        SynthSpec {
            name: self.name.to_string(),
            requests: self.requests,
            read_fraction: 1.0 - self.write_percent / 100.0,
            address,
            read_size: SizeDist::Mean { bytes: self.mean_read_kb * 1024.0 },
            write_size: SizeDist::Mean { bytes: self.mean_write_kb * 1024.0 },
            arrival: Arrival::Poisson { iops },
            footprint_bytes: self.footprint_bytes,
            seed: 42,
        }
    }
}

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

pub static PRESETS: &[Preset] = &[
    Preset { name: "p000-financial1", trace: "Financial1 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 5_334_984, write_percent: 76.84, mean_kb: 3.38, mean_read_kb: 2.24, mean_write_kb: 3.72, address: Address::locality(SEQ_FINANCIAL1, READ_WRITTEN_F1, None), footprint_bytes: None, duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial1); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-financial2", trace: "Financial2 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 3_699_195, write_percent: 17.65, mean_kb: 2.39, mean_read_kb: 2.28, mean_write_kb: 2.92, address: Address::locality(SEQ_FINANCIAL2, READ_WRITTEN_F2, None), footprint_bytes: None, duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial2); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-websearch1", trace: "WebSearch1 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 227_623, write_percent: 0.05, mean_kb: 17.16, mean_read_kb: 17.17, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: None, assumed: "sequential shares assumed (mean of paper 002's two Financial traces); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-websearch2", trace: "WebSearch2 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 964_410, write_percent: 0.05, mean_kb: 17.26, mean_read_kb: 17.26, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: None, assumed: "sequential shares assumed (mean of paper 002's two Financial traces); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-websearch3", trace: "WebSearch3 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 899_121, write_percent: 0.07, mean_kb: 17.78, mean_read_kb: 17.76, mean_write_kb: 44.63, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: None, assumed: "sequential shares assumed (mean of paper 002's two Financial traces); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-hm0", trace: "MSR Cambridge hm_0", source: "paper 000 Table 4.4", requests: 2_610_531, write_percent: 67.07, mean_kb: 8.75, mean_read_kb: 6.79, mean_write_kb: 9.72, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-mds0", trace: "MSR Cambridge mds_0", source: "paper 000 Table 4.4", requests: 1_191_594, write_percent: 88.43, mean_kb: 8.8, mean_read_kb: 22.59, mean_write_kb: 7.0, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prn0", trace: "MSR Cambridge prn_0", source: "paper 000 Table 4.4", requests: 2_474_978, write_percent: 83.02, mean_kb: 8.98, mean_read_kb: 21.89, mean_write_kb: 6.34, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-proj0", trace: "MSR Cambridge proj_0", source: "paper 000 Table 4.4", requests: 2_805_838, write_percent: 85.4, mean_kb: 30.34, mean_read_kb: 14.8, mean_write_kb: 33.0, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prxy0", trace: "MSR Cambridge prxy_0", source: "paper 000 Table 4.4", requests: 11_822_230, write_percent: 97.79, mean_kb: 4.43, mean_read_kb: 6.43, mean_write_kb: 4.38, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-rsrch0", trace: "MSR Cambridge rsrch_0", source: "paper 000 Table 4.4", requests: 1_051_948, write_percent: 96.59, mean_kb: 8.3, mean_read_kb: 11.4, mean_write_kb: 8.19, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src1_0", trace: "MSR Cambridge src1_0", source: "paper 000 Table 4.4", requests: 3_348_043, write_percent: 21.78, mean_kb: 9.68, mean_read_kb: 5.01, mean_write_kb: 26.45, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src2_0", trace: "MSR Cambridge src2_0", source: "paper 000 Table 4.4", requests: 1_429_295, write_percent: 90.33, mean_kb: 6.56, mean_read_kb: 6.66, mean_write_kb: 6.54, address: Address::locality(SEQ_MSR_SRC, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares from paper 002 Table 4 (MSR-src); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-stg0", trace: "MSR Cambridge stg_0", source: "paper 000 Table 4.4", requests: 1_887_372, write_percent: 86.41, mean_kb: 11.06, mean_read_kb: 25.09, mean_write_kb: 8.86, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-ts0", trace: "MSR Cambridge ts_0", source: "paper 000 Table 4.4", requests: 1_633_021, write_percent: 85.37, mean_kb: 8.94, mean_read_kb: 14.72, mean_write_kb: 7.95, address: Address::locality(SEQ_MSR_TS, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares from paper 002 Table 4 (MSR-ts); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-usr0", trace: "MSR Cambridge usr_0", source: "paper 000 Table 4.4", requests: 1_622_780, write_percent: 56.62, mean_kb: 25.66, mean_read_kb: 45.82, mean_write_kb: 10.2, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-wdev0", trace: "MSR Cambridge wdev_0", source: "paper 000 Table 4.4", requests: 1_022_921, write_percent: 87.11, mean_kb: 7.58, mean_read_kb: 7.18, mean_write_kb: 7.64, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-web0", trace: "MSR Cambridge web_0", source: "paper 000 Table 4.4", requests: 1_486_663, write_percent: 78.13, mean_kb: 12.28, mean_read_kb: 28.42, mean_write_kb: 7.77, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-hm1", trace: "MSR Cambridge hm_1", source: "paper 000 Table 4.4", requests: 609_192, write_percent: 4.65, mean_kb: 15.16, mean_read_kb: 14.93, mean_write_kb: 19.99, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-mds1", trace: "MSR Cambridge mds_1", source: "paper 000 Table 4.4", requests: 166_627, write_percent: 48.61, mean_kb: 25.42, mean_read_kb: 37.71, mean_write_kb: 12.43, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prn1", trace: "MSR Cambridge prn_1", source: "paper 000 Table 4.4", requests: 2_296_084, write_percent: 39.8, mean_kb: 7.25, mean_read_kb: 6.54, mean_write_kb: 8.32, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-proj1", trace: "MSR Cambridge proj_1", source: "paper 000 Table 4.4", requests: 238_890, write_percent: 18.56, mean_kb: 36.61, mean_read_kb: 42.72, mean_write_kb: 9.77, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prxy1", trace: "MSR Cambridge prxy_1", source: "paper 000 Table 4.4", requests: 43_563_576, write_percent: 62.59, mean_kb: 9.16, mean_read_kb: 12.28, mean_write_kb: 7.31, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-rsrch1", trace: "MSR Cambridge rsrch_1", source: "paper 000 Table 4.4", requests: 9_303, write_percent: 99.94, mean_kb: 8.13, mean_read_kb: 4.0, mean_write_kb: 8.13, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src1_1", trace: "MSR Cambridge src1_1", source: "paper 000 Table 4.4", requests: 3_723_809, write_percent: 35.13, mean_kb: 14.95, mean_read_kb: 12.76, mean_write_kb: 18.99, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src2_1", trace: "MSR Cambridge src2_1", source: "paper 000 Table 4.4", requests: 209_728, write_percent: 4.77, mean_kb: 55.99, mean_read_kb: 58.2, mean_write_kb: 11.86, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-stg1", trace: "MSR Cambridge stg_1", source: "paper 000 Table 4.4", requests: 688_922, write_percent: 91.11, mean_kb: 11.29, mean_read_kb: 41.9, mean_write_kb: 8.3, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-usr1", trace: "MSR Cambridge usr_1", source: "paper 000 Table 4.4", requests: 112_405, write_percent: 18.05, mean_kb: 38.08, mean_read_kb: 45.12, mean_write_kb: 6.1, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-wdev2", trace: "MSR Cambridge wdev_2", source: "paper 000 Table 4.4", requests: 140_988, write_percent: 99.93, mean_kb: 9.32, mean_read_kb: 4.19, mean_write_kb: 9.33, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-web1", trace: "MSR Cambridge web_1", source: "paper 000 Table 4.4", requests: 105_324, write_percent: 59.2, mean_kb: 21.18, mean_read_kb: 36.79, mean_write_kb: 10.43, address: Address::locality(SEQ_MSR_MEAN, READ_WRITTEN_MEAN, None), footprint_bytes: None, duration_h: Some(168.0), assumed: "sequential shares assumed (mean of paper 002's two MSR volumes); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p001-f1", trace: "Financial1 (UMass/SPC)", source: "paper 001 Table 4.4", requests: 5_300_000, write_percent: 76.8, mean_kb: 3.377, mean_read_kb: 2.24, mean_write_kb: 3.72, address: Address::locality(SEQ_FINANCIAL1, READ_WRITTEN_F1, Some(93.8)), footprint_bytes: None, duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial1); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes from paper 000 Table 4.2 (same trace); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-f2", trace: "Financial2 (UMass/SPC)", source: "paper 001 Table 4.4", requests: 3_690_000, write_percent: 17.7, mean_kb: 2.393, mean_read_kb: 2.28, mean_write_kb: 2.92, address: Address::locality(SEQ_FINANCIAL2, READ_WRITTEN_F2, Some(73.0)), footprint_bytes: None, duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial2); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes from paper 000 Table 4.2 (same trace); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-c3", trace: "Cello99 disk 3, 1999-07-17", source: "paper 001 Table 4.4", requests: 2_120_000, write_percent: 64.7, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_C3, Some(91.5)), footprint_bytes: None, duration_h: Some(24.0), assumed: "sequential shares assumed (mean of paper 002's two Financial traces: with the MSR volumes' long read runs no share of reads of written data reaches the published WR_max); reads of written data fitted to WR_max (paper 001 Table 2.1); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes (not published: 8 KiB means); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-c8", trace: "Cello99 disk 8, 1999-07-17", source: "paper 001 Table 4.4", requests: 2_040_000, write_percent: 72.6, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_C8, Some(97.3)), footprint_bytes: None, duration_h: Some(24.0), assumed: "sequential shares assumed (mean of paper 002's two Financial traces: with the MSR volumes' long read runs no share of reads of written data reaches the published WR_max); reads of written data fitted to WR_max (paper 001 Table 2.1); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes (not published: 8 KiB means); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-dap", trace: "MS production DAP-PS", source: "paper 001 Table 4.4", requests: 1_080_000, write_percent: 43.8, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_DAP, Some(99.2)), footprint_bytes: None, duration_h: Some(24.0), assumed: "sequential shares assumed (mean of paper 002's two Financial traces: with the MSR volumes' long read runs no share of reads of written data reaches the published WR_max); reads of written data fitted to WR_max (paper 001 Table 2.1); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes (not published: 8 KiB means); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-msn", trace: "MS production MSN-CFS (first disk)", source: "paper 001 Table 4.4", requests: 530_000, write_percent: 25.0, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, address: Address::locality(SEQ_SPC_MEAN, READ_WRITTEN_MSN, Some(45.6)), footprint_bytes: None, duration_h: Some(6.0), assumed: "sequential shares assumed (mean of paper 002's two Financial traces: with the MSR volumes' long read runs no share of reads of written data reaches the published WR_max); reads of written data fitted to WR_max (paper 001 Table 2.1); hot-set reuse (80%) and reuse distance (4096 runs) assumed; sizes (not published: 8 KiB means); uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p002-financial1", trace: "Financial1 (UMass/SPC)", source: "paper 002 Table 4", requests: 5_334_984, write_percent: 77.9, mean_kb: 3.5, mean_read_kb: 3.5, mean_write_kb: 3.5, address: Address::locality(SEQ_FINANCIAL1, READ_WRITTEN_F1, None), footprint_bytes: Some(512 << 20), duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial1); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-financial2", trace: "Financial2 (UMass/SPC)", source: "paper 002 Table 4", requests: 3_699_195, write_percent: 18.0, mean_kb: 2.4, mean_read_kb: 2.4, mean_write_kb: 2.4, address: Address::locality(SEQ_FINANCIAL2, READ_WRITTEN_F2, None), footprint_bytes: Some(512 << 20), duration_h: Some(12.0), assumed: "sequential shares from paper 002 Table 4 (Financial2); reads of written data fitted to WR_max (paper 001 Table 2.1, same trace); hot-set reuse (80%) and reuse distance (4096 runs) assumed; request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-msr-ts", trace: "MSR Cambridge ts_0", source: "paper 002 Table 4", requests: 1_633_021, write_percent: 82.4, mean_kb: 9.0, mean_read_kb: 9.0, mean_write_kb: 9.0, address: Address::locality(SEQ_MSR_TS, READ_WRITTEN_MEAN, None), footprint_bytes: Some(16 << 30), duration_h: Some(168.0), assumed: "sequential shares from paper 002 Table 4 (MSR-ts); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-msr-src", trace: "MSR Cambridge src (volume not named; src2_0 likely)", source: "paper 002 Table 4", requests: 1_429_295, write_percent: 88.7, mean_kb: 7.2, mean_read_kb: 7.2, mean_write_kb: 7.2, address: Address::locality(SEQ_MSR_SRC, READ_WRITTEN_MEAN, None), footprint_bytes: Some(16 << 30), duration_h: Some(168.0), assumed: "sequential shares from paper 002 Table 4 (MSR-src); reads of written data assumed (mean of the six WR_max fits); hot-set reuse (80%) and reuse distance (4096 runs) assumed; request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p003-ntfs1", trace: "NTFS1: PC use on a 32 GB NTFS partition (not public)", source: "paper 003 section 4", requests: 1_000_000, write_percent: 65.0, mean_kb: 10.8, mean_read_kb: 16.0, mean_write_kb: 8.0, address: Address::HotColdSequential { sequential: 0.3 }, footprint_bytes: Some(4 << 30), duration_h: None, assumed: "everything but the partition size (the paper publishes no statistics): 1 M requests, 65% writes, 16 KB reads and 8 KB writes, 30% of requests in sequential runs, the rest 80/20 hot/cold, over a 4 GiB working set, arrival rate (100 IOPS)" },
    Preset { name: "p003-ntfs2", trace: "NTFS2: PC use on an 80 GB NTFS partition (not public)", source: "paper 003 section 4", requests: 1_000_000, write_percent: 65.0, mean_kb: 10.8, mean_read_kb: 16.0, mean_write_kb: 8.0, address: Address::HotColdSequential { sequential: 0.3 }, footprint_bytes: Some(8 << 30), duration_h: None, assumed: "everything but the partition size (the paper publishes no statistics): as p003-ntfs1 over an 8 GiB working set" },
    table2("p004-appinstall", "smartphone AppInstall (blktrace, not public)", 58, 10.93, 84.0, 1.2, 79.2, None),
    table2("p004-appupdate", "smartphone AppUpdate (blktrace, not public)", 34, 8.15, 31.8, 1.9, 18.5, None),
    table2("p004-applaunch", "smartphone AppLaunch (blktrace, not public)", 59, 12.34, 66.6, 1.25, 53.2, None),
    table2("p004-browser", "smartphone Browser (blktrace, not public)", 33, 6.81, 27.4, 3.35, 84.1, Some(1.0)),
    table2("p004-sns", "smartphone SNS (blktrace, not public)", 33, 3.87, 9.97, 4.81, 31.7, Some(1.0)),
    table2("p004-map", "smartphone Map (blktrace, not public)", 14, 8.56, 10.2, 2.67, 84.5, Some(0.5)),
    table2("p004-mp3copy", "smartphone Mp3copy (blktrace, not public)", 68, 15.74, 295.4, 1.06, 96.8, None),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::stats::stats;

    fn within(got: f64, want: f64, what: &str, name: &str) {
        assert!((got - want).abs() <= 0.02 * want, "{name}: {what} {got} vs published {want}");
    }

    /// Every preset, scaled so that its rarer request kind still has a few hundred requests,
    /// reproduces its published write ratio and mean sizes within 2%.
    #[test]
    fn presets_reproduce_their_statistics() {
        for p in PRESETS {
            let rare = p.write_percent.min(100.0 - p.write_percent) / 100.0;
            let requests = ((300.0 / rare).ceil() as u64).max(20_000).min(p.requests);
            let spec = SynthSpec { requests, ..p.spec() };
            let s = stats(spec.workload(64 << 30).unwrap().requests).unwrap().finish(0, 0);
            assert_eq!(s.requests, requests);
            within(s.write_percent, p.write_percent, "write %", p.name);
            within(s.mean_size_kb, p.mean_kb, "mean size", p.name);
            within(s.mean_read_size_kb, p.mean_read_kb, "mean read size", p.name);
            within(s.mean_write_size_kb, p.mean_write_kb, "mean write size", p.name);
        }
    }

    /// Requests of the stand-ins when their locality is fitted and validated.
    const FIT_REQUESTS: u64 = 200_000;

    fn locality_stats(p: &Preset, locality: PresetLocality) -> crate::workload::stats::TraceStats {
        let mut spec = SynthSpec { requests: FIT_REQUESTS.min(p.requests), ..p.spec() };
        spec.address = vec![Component { weight: 1.0, pattern: Pattern::Locality(locality.pattern()) }];
        stats(spec.workload(16 << 30).unwrap().requests).unwrap().finish(0, 0)
    }

    fn within_10_percent(got: f64, want: f64, what: &str, name: &str) {
        assert!((got - want).abs() <= 0.1 * want, "{name}: {what} {got:.3} vs {want} (more than 10% apart)");
    }

    /// A share (percent) of `n` draws within 10% of the asked one, or within three standard
    /// errors where 10% is less than that (a 0.5% share of 36,000 writes: 10% is 1.3 errors).
    fn share_within(got: f64, want: f64, n: u64, what: &str, name: &str) {
        let p = want / 100.0;
        let three_errors = 300.0 * (p * (1.0 - p) / n as f64).sqrt();
        let tolerance = (0.1 * want).max(three_errors);
        assert!((got - want).abs() <= tolerance, "{name}: {what} {got:.3} vs {want} (tolerance {tolerance:.3})");
    }

    /// The fit: the share of reads of written data that gives each paper-001 stand-in its
    /// published WR_max, by bisection (WR_max rises with it). Prints the READ_WRITTEN_* constants:
    /// `cargo test --release -p ftlsim --lib fit_read_written_to_wr_max -- --ignored --nocapture`.
    #[test]
    #[ignore = "prints the fitted constants; stand_ins_recompute_their_published_columns checks them"]
    fn fit_read_written_to_wr_max() {
        for p in PRESETS {
            let Address::Locality(l) = p.address else { continue };
            let Some(target) = l.wr_max_percent else { continue };
            let (mut low, mut high) = (0.0f64, 1.0f64);
            for _ in 0..14 {
                let mid = (low + high) / 2.0;
                if locality_stats(p, PresetLocality { read_written: mid, ..l }).wr_max_percent < target {
                    low = mid;
                } else {
                    high = mid;
                }
            }
            println!("{}: read_written {:.4} for WR_max {target}", p.name, (low + high) / 2.0);
        }
    }

    /// The validation: each stand-in with locality, generated, gives back the published columns
    /// it was fitted to within 10% (a rare share: within sampling error): sequential read and write shares (paper 002 Table 4) and
    /// WR_max (paper 001 Table 2.1). Write ratio and sizes: presets_reproduce_their_statistics.
    #[test]
    fn stand_ins_recompute_their_published_columns() {
        for p in PRESETS {
            let Address::Locality(l) = p.address else { continue };
            let s = locality_stats(p, l);
            if s.reads > 1000 {
                share_within(s.sequential_read_percent, l.seq_read_percent, s.reads, "sequential reads %", p.name);
            }
            if s.writes > 1000 {
                share_within(s.sequential_write_percent, l.seq_write_percent, s.writes, "sequential writes %", p.name);
            }
            match l.wr_max_percent {
                // At its bound every fresh read run reads written data; reads still overrun the
                // written extents (8 KiB geometric sizes), so the model stops short of the
                // published value (C8, DAP: docs/presets.md). It must get at least 80%.
                Some(wr_max) if l.read_written == 1.0 && s.wr_max_percent < 0.9 * wr_max => {
                    assert!(s.wr_max_percent >= 80.0, "{}: WR_max {} at the bound", p.name, s.wr_max_percent)
                }
                Some(wr_max) => within_10_percent(s.wr_max_percent, wr_max, "WR_max %", p.name),
                None => {}
            }
            println!(
                "{}: sequential reads {:.2} writes {:.2} (asked {} {}), WR_max {:.2} (published {:?}), LRU hits {:.2}",
                p.name,
                s.sequential_read_percent,
                s.sequential_write_percent,
                l.seq_read_percent,
                l.seq_write_percent,
                s.wr_max_percent,
                l.wr_max_percent,
                s.mapping_cache.hit_percent
            );
        }
    }

    /// Paper 004's round trip (spec C.7): each Table II stand-in, generated whole on the `cpm`
    /// preset's 32 GB, gives back its row from `trace stats`' working-set extraction (512 KB
    /// merge) within 10% on every column.
    #[test]
    fn table2_stand_ins_recompute_table2() {
        for p in PRESETS {
            let Address::WorkingSets { count, mean_mb, page_updates } = p.address else { continue };
            let s = stats(p.spec().workload(32 << 30).unwrap().requests).unwrap().finish(0, 0);
            let ws = &s.working_sets;
            println!(
                "{}: {} requests, {} sets of {:.2} MB, {:.2} KB, {:.2} updates, {:.1}% writes",
                p.name, s.requests, ws.count, ws.mean_size_mb, s.mean_size_kb, ws.mean_page_updates, s.write_percent
            );
            within_10_percent(ws.count as f64, count as f64, "working sets", p.name);
            within_10_percent(ws.mean_size_mb, mean_mb, "mean working-set size (MB)", p.name);
            within_10_percent(s.mean_size_kb, p.mean_kb, "mean I/O size (KB)", p.name);
            within_10_percent(ws.mean_page_updates, page_updates, "mean page update", p.name);
            within_10_percent(s.write_percent, p.write_percent, "write ratio (%)", p.name);
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        for p in PRESETS {
            assert_eq!(PRESETS.iter().filter(|q| q.name == p.name).count(), 1, "{}", p.name);
        }
        assert_eq!(find("P000-HM0").unwrap().requests, 2_610_531);
    }
}
