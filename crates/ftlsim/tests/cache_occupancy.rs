//! `cache.occupancy` of the report (paper 002 Figs. 1 and 10): sampled every 10,000 host page
//! accesses from DFTL's and TPFTL's caches, absent for an FTL without an entry cache.

use ftlsim::flash::Lpn;
use ftlsim::host::PageRequest;
use ftlsim::metrics::{OccupancyReport, Report, OCCUPANCY_SAMPLE_EVERY};
use ftlsim::workload::IoKind;
use ftlsim::{ConfigBuilder, Simulation};

/// 32768 logical pages (32 translation pages of 1024 entries), 2 KB caches: DFTL holds 256
/// 8-byte entries (paper 002's DFTL: a dirty eviction writes back the victim alone, the other
/// entries stay dirty), TPFTL 341 6-byte slots.
fn run(ftl: &str, pages: u64) -> Report {
    let config = ConfigBuilder::new()
        .preset("tpftl")
        .unwrap()
        .set("device.logical_pages=32768")
        .unwrap()
        .set("device.geometry.blocks_per_plane=589")
        .unwrap()
        .set("ftl.dftl.cache_bytes=2048")
        .unwrap()
        .set("ftl.dftl.entry_bits=64")
        .unwrap()
        .set("ftl.dftl.batch_update=false")
        .unwrap()
        .set("ftl.tpftl.cache_bytes=2048")
        .unwrap()
        .build()
        .unwrap();
    let mut sim = Simulation::new(&config, ftl).unwrap();
    sim.precondition().unwrap();
    // One sequential write pass: every cached entry dirty, all in the TP being written or the one before.
    for i in 0..pages {
        let first = Lpn::new(i as u32);
        let request = PageRequest {
            arrival: i * 1000,
            kind: IoKind::Write,
            first,
            pages: 1,
            span: ftlsim::host::SectorSpan::WHOLE,
        };
        sim.serve(request).unwrap();
    }
    sim.result("sequential", serde_json::Value::Null, 0.0).unwrap().report
}

fn occupancy(ftl: &str) -> OccupancyReport {
    run(ftl, 2 * OCCUPANCY_SAMPLE_EVERY + 5).cache.occupancy.expect("two samples")
}

#[test]
fn dftl_caches_full_8_byte_entries() {
    let o = occupancy("dftl");
    assert_eq!((o.samples, o.sample_every), (2, OCCUPANCY_SAMPLE_EVERY));
    // The cache is full of the last 256 pages written: 256 dirty entries in 1 or 2 TPs.
    assert_eq!(o.mean_entries, 256.0);
    assert!((1.0..=2.0).contains(&o.mean_cached_tps), "{o:?}");
    assert_eq!((o.mean_dirty_entries_per_tp, o.tps_over_one_dirty_share), (o.mean_entries_per_tp, 1.0));
    assert_eq!(o.space_utilization, 1.0);
}

#[test]
fn tpftl_holds_a_third_more_mappings_in_the_same_bytes() {
    let o = occupancy("tpftl");
    assert_eq!(o.samples, 2);
    // 341 slots: one or two TP nodes and the rest entries, 8/6 of DFTL's 256 less the nodes.
    assert!(o.mean_entries >= 339.0 && o.mean_entries <= 340.0, "{o:?}");
    assert!(o.space_utilization > 1.32 && o.space_utilization < 4.0 / 3.0, "{o:?}");
}

#[test]
fn absent_without_an_entry_cache_or_a_sample() {
    assert_eq!(run("pftl", 2 * OCCUPANCY_SAMPLE_EVERY).cache.occupancy, None);
    assert_eq!(run("dftl", OCCUPANCY_SAMPLE_EVERY - 1).cache.occupancy, None);
}
