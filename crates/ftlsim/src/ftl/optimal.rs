//! The optimal FTL of paper 002: page-level mapping with the entire table cached, so address
//! translation never touches flash; the same GC as every other scheme. It is the bound the
//! demand-based schemes are measured against: PFTL, with the accounting of a mapping cache in
//! which every access (host or GC mapping update) is a hit and nothing is ever evicted.

use serde::{Deserialize, Serialize};

use super::common::BlockManager;
use super::registry::{no_test_overrides, one_stream_spare_blocks, Family, FtlInfo, ParamsSchema};
use super::{ftl_params, Ftl, FtlCtx, PageFtl, PageLayout, Prefetch, SramBreakdown};
use crate::config::Config;
use crate::error::Result;
use crate::flash::{FlashArray, Lpn, OpKind, Ppn, Purpose, BASIC_LAYOUT};
use crate::metrics::CacheAccess;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimalParams {}

pub const INFO: FtlInfo = FtlInfo {
    name: "optimal",
    description: "optimal FTL (paper 002): whole map cached, no translation traffic",
    family: Family::PageMapped,
    build: OptimalFtl::build,
    params: ParamsSchema::of::<OptimalParams>(&[]),
    spare_layout: BASIC_LAYOUT,
    streams: super::page::STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.2,
    spare_blocks_needed: one_stream_spare_blocks,
    test_overrides: no_test_overrides,
};

pub struct OptimalFtl {
    page: PageFtl,
}

impl OptimalFtl {
    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let _: OptimalParams = ftl_params(config, "optimal")?;
        Ok(Box::new(OptimalFtl { page: PageFtl::new(config) }))
    }
}

/// Every page GC moved while `f` ran was a mapping update that hit the cached table.
#[inline]
fn gc_updates_hit<T>(ctx: &mut FtlCtx, f: impl FnOnce(&mut FtlCtx) -> Result<T>) -> Result<T> {
    let before = ctx.ops.count(OpKind::Program, Purpose::Gc);
    let result = f(ctx)?;
    let moved = ctx.ops.count(OpKind::Program, Purpose::Gc) - before;
    ctx.cache.hit += moved;
    ctx.cache.gc_accesses += moved;
    ctx.cache.gc_hits += moved;
    Ok(result)
}

impl Ftl for OptimalFtl {
    fn name(&self) -> &'static str {
        "optimal"
    }

    #[inline]
    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        ctx.cache.record(CacheAccess::Hit);
        self.page.read(lpn, ctx)
    }

    #[inline]
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        ctx.cache.record(CacheAccess::Hit);
        gc_updates_hit(ctx, |ctx| self.page.write(lpn, version, ctx))
    }

    fn collect_in_background(&mut self, unit: u32, ctx: &mut FtlCtx) -> Result<bool> {
        gc_updates_hit(ctx, |ctx| self.page.collect_in_background(unit, ctx))
    }

    fn takes_page_layout(&self) -> bool {
        true
    }

    fn adopt_page_layout(&mut self, layout: PageLayout, ctx: &mut FtlCtx) -> Result<()> {
        self.page.adopt_page_layout(layout, ctx)
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        ctx.cache.record(CacheAccess::Hit);
        self.page.trim(lpn, ctx)
    }

    #[inline]
    fn prefetch(&self, lpn: Lpn, stage: Prefetch, flash: &FlashArray) -> Option<Ppn> {
        self.page.prefetch(lpn, stage, flash)
    }

    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        self.page.lookup(lpn, flash)
    }

    /// PFTL's full scan: the table is SRAM, so nothing of it survives a power loss.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.page.recover(ctx)
    }

    fn sram(&self) -> SramBreakdown {
        self.page.sram()
    }

    fn state_bytes(&self) -> usize {
        self.page.state_bytes()
    }

    fn blocks(&self) -> &BlockManager {
        self.page.blocks()
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(OptimalParams::default()).expect("params serialise")
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ConfigBuilder;
    use crate::flash::Lpn;
    use crate::host::PageRequest;
    use crate::metrics::Report;
    use crate::workload::synthetic::MixedSpec;
    use crate::Simulation;

    /// Mean response time of a mixed workload (50% reads, 10% sequential) on 2 planes x 1024
    /// blocks x 16 pages of 8 KB (2048 entries per TP) with 1/4 spare (24576 LPNs in 12 TPs), a
    /// light load, after a warm-up that reads every LPN once (DFTL fetches entries one by one:
    /// its cold misses are not what this compares). Returns the report and the mean over the
    /// mixed part alone.
    fn run(ftl: &str, sets: &[&str]) -> (Report, f64) {
        let mut b = ConfigBuilder::new();
        for set in [
            "device.geometry.blocks_per_plane=1024",
            "device.geometry.pages_per_block=16",
            "device.overprovisioning=0.25",
        ]
        .iter()
        .chain(sets)
        {
            b = b.set(set).unwrap();
        }
        let config = b.build().unwrap();
        let mut sim = Simulation::new(&config, ftl).unwrap();
        sim.precondition().unwrap();
        let logical = config.device.logical_pages();
        let mut now = 0;
        for first in (0..logical).step_by(8) {
            now += 5_000_000;
            sim.serve(PageRequest {
                arrival: now,
                kind: crate::workload::IoKind::Read,
                first: Lpn::new(first),
                pages: 8.min(logical - first),
                span: crate::host::SectorSpan::WHOLE,
            })
            .unwrap();
        }
        let warm = sim.result("warm-up", serde_json::Value::Null, 1.0).unwrap().report;
        let spec = MixedSpec {
            requests: 40_000,
            read_fraction: 0.5,
            sequential_fraction: 0.1,
            mean_interarrival_us: 50_000.0,
            ..MixedSpec::default()
        };
        let page = config.device.geometry.page_size as u64;
        for r in spec.workload(logical, page as u32).unwrap().requests {
            let r = r.unwrap();
            let first = (r.offset_bytes / page) as u32;
            sim.serve(PageRequest {
                arrival: now + r.arrival_ns,
                kind: r.kind,
                first: Lpn::new(first),
                pages: (r.len_bytes / page) as u32,
                span: crate::host::SectorSpan::WHOLE,
            })
            .unwrap();
        }
        let all = sim.result("mixed", serde_json::Value::Null, 1.0).unwrap().report;
        let sum = |r: &Report| r.response.mean_us * r.host.requests as f64;
        let mixed = (sum(&all) - sum(&warm)) / (all.host.requests - warm.host.requests) as f64;
        (all, mixed)
    }

    #[test]
    fn optimal_has_no_translation_traffic_and_hits_every_access() {
        let (r, _) = run("optimal", &[]);
        assert_eq!(r.reads.translation + r.programs.translation + r.spare_reads.translation, 0);
        assert_eq!(r.cache.hit_ratio, Some(1.0));
        assert_eq!(r.cache.gc_hit_ratio, Some(1.0));
        assert!(r.gc_victims > 0);
        assert_eq!(r.cache.dirty_eviction_probability, None);
    }

    /// With a cache holding the whole map, a warm demand-based scheme costs what optimal does.
    #[test]
    fn with_a_cache_as_large_as_the_map_every_scheme_matches_optimal_within_one_percent() {
        let (_, optimal) = run("optimal", &[]);
        for (ftl, sets) in [
            ("dftl", &["ftl.dftl.cache_bytes=262144"][..]),
            ("cdftl", &["ftl.cdftl.cmt_bytes=262144", "ftl.cdftl.ctp_bytes=98304"]),
            ("sftl", &["ftl.sftl.cache_bytes=131072"]),
        ] {
            let (r, mean) = run(ftl, sets);
            assert_eq!(r.cache.dirty_eviction_probability, None, "{ftl}: nothing is evicted");
            assert_eq!(r.programs.translation, 0, "{ftl}");
            assert!(r.gc_victims > 0, "{ftl}");
            assert!((mean / optimal - 1.0).abs() < 0.01, "{ftl}: mean response {mean} us vs optimal {optimal} us");
        }
    }
}
