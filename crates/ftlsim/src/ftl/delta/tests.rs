use super::*;
use crate::check::suite::test_device;
use crate::host::{PageRequest, SectorSpan};
use crate::workload::IoKind;
use crate::Simulation;

fn request(kind: IoKind, lpn: u32) -> PageRequest {
    PageRequest { arrival: 0, kind, first: Lpn::new(lpn), pages: 1, span: SectorSpan::WHOLE }
}

/// A device of 2 planes x 16 blocks x 16 pages of 512 B, with `extra` settings.
fn device(extra: &[&str]) -> Config {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    test_device("delta", 1, 2, 16, 16, &extra).unwrap()
}

/// Writes over a hot set of LPNs (most writes; the set moves on every 1,500 requests, leaving
/// write-cold deltas behind) and the rest of the space, with some reads.
fn churn(sim: &mut Simulation, logical: u32, requests: u32) {
    for i in 0..requests {
        let x = i.wrapping_mul(2_654_435_761).rotate_left(7);
        let hot = logical / 8;
        let lpn = if x % 4 != 0 { (i / 1500 * hot + x % hot) % logical } else { x % logical };
        let kind = if x % 11 == 0 { IoKind::Read } else { IoKind::Write };
        sim.serve(request(kind, lpn)).unwrap();
    }
    sim.check_invariants().unwrap();
}

#[test]
fn hot_rewrites_become_deltas_and_gc_collects_both_areas() {
    let config = device(&["check.invariants_every=97"]);
    let mut sim = Simulation::new(&config, "delta").unwrap();
    let logical = config.device.logical_pages();
    churn(&mut sim, logical, 6000);
    let stats = sim.ftl().delta_stats().unwrap();
    assert!(stats.delta_writes > stats.writes / 4, "{stats:?}");
    assert!(stats.dla_pages > 0 && stats.deltas_committed > 0, "{stats:?}");
    assert!(stats.gc_victims_dla > 0 && stats.gc_victims_pma > 0, "{stats:?}");
    assert!(stats.merges_in_gc > 0, "{stats:?}");
    assert!(stats.delta_reads > 0, "{stats:?}");
}
