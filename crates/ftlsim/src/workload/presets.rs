//! Synthetic stand-ins for the papers' traces, for users who do not have the real ones. Each
//! preset reproduces the published statistics of one trace: request count (scalable with
//! `scale=`), write ratio, and mean read and write sizes (paper 000 Tables 4.2 and 4.4, paper
//! 001 Table 4.4, paper 002 Table 4, paper 004 Table II). What the papers do not publish (the
//! address pattern, the size shape, often the arrival rate) is assumed, and every preset says
//! what it assumed. Results on them are synthetic, not the papers' traces.

use super::generator::{Arrival, Component, Pattern, SizeDist, SynthSpec};

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
    /// Fraction of requests in sequential streams.
    pub sequential: f64,
    /// Address space used; `None`: the whole device.
    pub footprint_bytes: Option<u64>,
    /// Trace duration (uncompressed), which sets the Poisson arrival rate.
    pub duration_h: Option<f64>,
    /// What is not from the paper.
    pub assumed: &'static str,
}

/// Arrival rate of presets whose trace duration is not published.
pub const DEFAULT_IOPS: f64 = 100.0;

impl Preset {
    /// The generator spec at full scale (seed 42).
    pub fn spec(&self) -> SynthSpec {
        let mut address = Vec::new();
        if self.sequential < 1.0 {
            address.push(Component {
                weight: 1.0 - self.sequential,
                pattern: Pattern::HotCold { access: 0.8, space: 0.2 },
            });
        }
        if self.sequential > 0.0 {
            address.push(Component { weight: self.sequential, pattern: Pattern::Sequential { streams: 4 } });
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
    Preset { name: "p000-financial1", trace: "Financial1 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 5_334_984, write_percent: 76.84, mean_kb: 3.38, mean_read_kb: 2.24, mean_write_kb: 3.72, sequential: 0.1, footprint_bytes: None, duration_h: Some(12.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-financial2", trace: "Financial2 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 3_699_195, write_percent: 17.65, mean_kb: 2.39, mean_read_kb: 2.28, mean_write_kb: 2.92, sequential: 0.1, footprint_bytes: None, duration_h: Some(12.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-websearch1", trace: "WebSearch1 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 227_623, write_percent: 0.05, mean_kb: 17.16, mean_read_kb: 17.17, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: None, assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-websearch2", trace: "WebSearch2 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 964_410, write_percent: 0.05, mean_kb: 17.26, mean_read_kb: 17.26, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: None, assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-websearch3", trace: "WebSearch3 (UMass/SPC)", source: "paper 000 Table 4.2", requests: 899_121, write_percent: 0.07, mean_kb: 17.78, mean_read_kb: 17.76, mean_write_kb: 44.63, sequential: 0.1, footprint_bytes: None, duration_h: None, assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, arrival rate (100 IOPS)" },
    Preset { name: "p000-hm0", trace: "MSR Cambridge hm_0", source: "paper 000 Table 4.4", requests: 2_610_531, write_percent: 67.07, mean_kb: 8.75, mean_read_kb: 6.79, mean_write_kb: 9.72, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-mds0", trace: "MSR Cambridge mds_0", source: "paper 000 Table 4.4", requests: 1_191_594, write_percent: 88.43, mean_kb: 8.8, mean_read_kb: 22.59, mean_write_kb: 7.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prn0", trace: "MSR Cambridge prn_0", source: "paper 000 Table 4.4", requests: 2_474_978, write_percent: 83.02, mean_kb: 8.98, mean_read_kb: 21.89, mean_write_kb: 6.34, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-proj0", trace: "MSR Cambridge proj_0", source: "paper 000 Table 4.4", requests: 2_805_838, write_percent: 85.4, mean_kb: 30.34, mean_read_kb: 14.8, mean_write_kb: 33.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prxy0", trace: "MSR Cambridge prxy_0", source: "paper 000 Table 4.4", requests: 11_822_230, write_percent: 97.79, mean_kb: 4.43, mean_read_kb: 6.43, mean_write_kb: 4.38, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-rsrch0", trace: "MSR Cambridge rsrch_0", source: "paper 000 Table 4.4", requests: 1_051_948, write_percent: 96.59, mean_kb: 8.3, mean_read_kb: 11.4, mean_write_kb: 8.19, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src1_0", trace: "MSR Cambridge src1_0", source: "paper 000 Table 4.4", requests: 3_348_043, write_percent: 21.78, mean_kb: 9.68, mean_read_kb: 5.01, mean_write_kb: 26.45, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src2_0", trace: "MSR Cambridge src2_0", source: "paper 000 Table 4.4", requests: 1_429_295, write_percent: 90.33, mean_kb: 6.56, mean_read_kb: 6.66, mean_write_kb: 6.54, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-stg0", trace: "MSR Cambridge stg_0", source: "paper 000 Table 4.4", requests: 1_887_372, write_percent: 86.41, mean_kb: 11.06, mean_read_kb: 25.09, mean_write_kb: 8.86, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-ts0", trace: "MSR Cambridge ts_0", source: "paper 000 Table 4.4", requests: 1_633_021, write_percent: 85.37, mean_kb: 8.94, mean_read_kb: 14.72, mean_write_kb: 7.95, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-usr0", trace: "MSR Cambridge usr_0", source: "paper 000 Table 4.4", requests: 1_622_780, write_percent: 56.62, mean_kb: 25.66, mean_read_kb: 45.82, mean_write_kb: 10.2, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-wdev0", trace: "MSR Cambridge wdev_0", source: "paper 000 Table 4.4", requests: 1_022_921, write_percent: 87.11, mean_kb: 7.58, mean_read_kb: 7.18, mean_write_kb: 7.64, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-web0", trace: "MSR Cambridge web_0", source: "paper 000 Table 4.4", requests: 1_486_663, write_percent: 78.13, mean_kb: 12.28, mean_read_kb: 28.42, mean_write_kb: 7.77, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-hm1", trace: "MSR Cambridge hm_1", source: "paper 000 Table 4.4", requests: 609_192, write_percent: 4.65, mean_kb: 15.16, mean_read_kb: 14.93, mean_write_kb: 19.99, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-mds1", trace: "MSR Cambridge mds_1", source: "paper 000 Table 4.4", requests: 166_627, write_percent: 48.61, mean_kb: 25.42, mean_read_kb: 37.71, mean_write_kb: 12.43, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prn1", trace: "MSR Cambridge prn_1", source: "paper 000 Table 4.4", requests: 2_296_084, write_percent: 39.8, mean_kb: 7.25, mean_read_kb: 6.54, mean_write_kb: 8.32, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-proj1", trace: "MSR Cambridge proj_1", source: "paper 000 Table 4.4", requests: 238_890, write_percent: 18.56, mean_kb: 36.61, mean_read_kb: 42.72, mean_write_kb: 9.77, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-prxy1", trace: "MSR Cambridge prxy_1", source: "paper 000 Table 4.4", requests: 43_563_576, write_percent: 62.59, mean_kb: 9.16, mean_read_kb: 12.28, mean_write_kb: 7.31, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-rsrch1", trace: "MSR Cambridge rsrch_1", source: "paper 000 Table 4.4", requests: 9_303, write_percent: 99.94, mean_kb: 8.13, mean_read_kb: 4.0, mean_write_kb: 8.13, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src1_1", trace: "MSR Cambridge src1_1", source: "paper 000 Table 4.4", requests: 3_723_809, write_percent: 35.13, mean_kb: 14.95, mean_read_kb: 12.76, mean_write_kb: 18.99, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-src2_1", trace: "MSR Cambridge src2_1", source: "paper 000 Table 4.4", requests: 209_728, write_percent: 4.77, mean_kb: 55.99, mean_read_kb: 58.2, mean_write_kb: 11.86, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-stg1", trace: "MSR Cambridge stg_1", source: "paper 000 Table 4.4", requests: 688_922, write_percent: 91.11, mean_kb: 11.29, mean_read_kb: 41.9, mean_write_kb: 8.3, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-usr1", trace: "MSR Cambridge usr_1", source: "paper 000 Table 4.4", requests: 112_405, write_percent: 18.05, mean_kb: 38.08, mean_read_kb: 45.12, mean_write_kb: 6.1, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-wdev2", trace: "MSR Cambridge wdev_2", source: "paper 000 Table 4.4", requests: 140_988, write_percent: 99.93, mean_kb: 9.32, mean_read_kb: 4.19, mean_write_kb: 9.33, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p000-web1", trace: "MSR Cambridge web_1", source: "paper 000 Table 4.4", requests: 105_324, write_percent: 59.2, mean_kb: 21.18, mean_read_kb: 36.79, mean_write_kb: 10.43, sequential: 0.1, footprint_bytes: None, duration_h: Some(168.0), assumed: "address pattern (80/20 hot/cold plus 10% sequential), sizes geometric around the means, Poisson arrivals over the trace duration" },
    Preset { name: "p001-f1", trace: "Financial1 (UMass/SPC)", source: "paper 001 Table 4.4", requests: 5_300_000, write_percent: 76.8, mean_kb: 3.377, mean_read_kb: 2.24, mean_write_kb: 3.72, sequential: 0.1, footprint_bytes: None, duration_h: Some(12.0), assumed: "sizes from paper 000 Table 4.2 (same trace); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-f2", trace: "Financial2 (UMass/SPC)", source: "paper 001 Table 4.4", requests: 3_690_000, write_percent: 17.7, mean_kb: 2.393, mean_read_kb: 2.28, mean_write_kb: 2.92, sequential: 0.1, footprint_bytes: None, duration_h: Some(12.0), assumed: "sizes from paper 000 Table 4.2 (same trace); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-c3", trace: "Cello99 disk 3, 1999-07-17", source: "paper 001 Table 4.4", requests: 2_120_000, write_percent: 64.7, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(24.0), assumed: "sizes (not published: 8 KiB means); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-c8", trace: "Cello99 disk 8, 1999-07-17", source: "paper 001 Table 4.4", requests: 2_040_000, write_percent: 72.6, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(24.0), assumed: "sizes (not published: 8 KiB means); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-dap", trace: "MS production DAP-PS", source: "paper 001 Table 4.4", requests: 1_080_000, write_percent: 43.8, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(24.0), assumed: "sizes (not published: 8 KiB means); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p001-msn", trace: "MS production MSN-CFS (first disk)", source: "paper 001 Table 4.4", requests: 530_000, write_percent: 25.0, mean_kb: 8.0, mean_read_kb: 8.0, mean_write_kb: 8.0, sequential: 0.1, footprint_bytes: None, duration_h: Some(6.0), assumed: "sizes (not published: 8 KiB means); address pattern; uncompressed arrival rate (apply the paper's compression with host.time_scale)" },
    Preset { name: "p002-financial1", trace: "Financial1 (UMass/SPC)", source: "paper 002 Table 4", requests: 5_334_984, write_percent: 77.9, mean_kb: 3.5, mean_read_kb: 3.5, mean_write_kb: 3.5, sequential: 0.0173, footprint_bytes: Some(512 << 20), duration_h: Some(12.0), assumed: "request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-financial2", trace: "Financial2 (UMass/SPC)", source: "paper 002 Table 4", requests: 3_699_195, write_percent: 18.0, mean_kb: 2.4, mean_read_kb: 2.4, mean_write_kb: 2.4, sequential: 0.0075, footprint_bytes: Some(512 << 20), duration_h: Some(12.0), assumed: "request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-msr-ts", trace: "MSR Cambridge ts_0", source: "paper 002 Table 4", requests: 1_633_021, write_percent: 82.4, mean_kb: 9.0, mean_read_kb: 9.0, mean_write_kb: 9.0, sequential: 0.1325, footprint_bytes: Some(16 << 30), duration_h: Some(168.0), assumed: "request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p002-msr-src", trace: "MSR Cambridge src (volume not named; src2_0 likely)", source: "paper 002 Table 4", requests: 1_429_295, write_percent: 88.7, mean_kb: 7.2, mean_read_kb: 7.2, mean_write_kb: 7.2, sequential: 0.0885, footprint_bytes: Some(16 << 30), duration_h: Some(168.0), assumed: "request count (paper 000's), equal read and write means, Poisson arrivals over the trace duration" },
    Preset { name: "p003-ntfs1", trace: "NTFS1: PC use on a 32 GB NTFS partition (not public)", source: "paper 003 section 4", requests: 1_000_000, write_percent: 65.0, mean_kb: 10.8, mean_read_kb: 16.0, mean_write_kb: 8.0, sequential: 0.3, footprint_bytes: Some(4 << 30), duration_h: None, assumed: "everything but the partition size (the paper publishes no statistics): 1 M requests, 65% writes, 16 KB reads and 8 KB writes, 30% of requests in sequential runs, the rest 80/20 hot/cold, over a 4 GiB working set, arrival rate (100 IOPS)" },
    Preset { name: "p003-ntfs2", trace: "NTFS2: PC use on an 80 GB NTFS partition (not public)", source: "paper 003 section 4", requests: 1_000_000, write_percent: 65.0, mean_kb: 10.8, mean_read_kb: 16.0, mean_write_kb: 8.0, sequential: 0.3, footprint_bytes: Some(8 << 30), duration_h: None, assumed: "everything but the partition size (the paper publishes no statistics): as p003-ntfs1 over an 8 GiB working set" },
    Preset { name: "p004-appinstall", trace: "smartphone AppInstall (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 79.2, mean_kb: 84.0, mean_read_kb: 84.0, mean_write_kb: 84.0, sequential: 0.1, footprint_bytes: Some(649154 << 10), duration_h: None, assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, arrival rate (100 IOPS)" },
    Preset { name: "p004-appupdate", trace: "smartphone AppUpdate (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 18.5, mean_kb: 31.8, mean_read_kb: 31.8, mean_write_kb: 31.8, sequential: 0.1, footprint_bytes: Some(283750 << 10), duration_h: None, assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, arrival rate (100 IOPS)" },
    Preset { name: "p004-applaunch", trace: "smartphone AppLaunch (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 53.2, mean_kb: 66.6, mean_read_kb: 66.6, mean_write_kb: 66.6, sequential: 0.1, footprint_bytes: Some(745533 << 10), duration_h: None, assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, arrival rate (100 IOPS)" },
    Preset { name: "p004-browser", trace: "smartphone Browser (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 84.1, mean_kb: 27.4, mean_read_kb: 27.4, mean_write_kb: 27.4, sequential: 0.1, footprint_bytes: Some(230123 << 10), duration_h: Some(1.0), assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, Poisson arrivals over the stated duration" },
    Preset { name: "p004-sns", trace: "smartphone SNS (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 31.7, mean_kb: 9.97, mean_read_kb: 9.97, mean_write_kb: 9.97, sequential: 0.1, footprint_bytes: Some(130775 << 10), duration_h: Some(1.0), assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, Poisson arrivals over the stated duration" },
    Preset { name: "p004-map", trace: "smartphone Map (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 84.5, mean_kb: 10.2, mean_read_kb: 10.2, mean_write_kb: 10.2, sequential: 0.1, footprint_bytes: Some(122716 << 10), duration_h: Some(0.5), assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, Poisson arrivals over the stated duration" },
    Preset { name: "p004-mp3copy", trace: "smartphone Mp3copy (blktrace, not public)", source: "paper 004 Table II", requests: 100_000, write_percent: 96.8, mean_kb: 295.4, mean_read_kb: 295.4, mean_write_kb: 295.4, sequential: 0.1, footprint_bytes: Some(1096007 << 10), duration_h: None, assumed: "request count (100000), equal read and write means, footprint = working sets x mean working-set size, address pattern, arrival rate (100 IOPS)" },
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

    #[test]
    fn names_are_unique_and_found() {
        for p in PRESETS {
            assert_eq!(PRESETS.iter().filter(|q| q.name == p.name).count(), 1, "{}", p.name);
        }
        assert_eq!(find("P000-HM0").unwrap().requests, 2_610_531);
    }
}
