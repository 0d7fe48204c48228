//! A power loss must not change how a demand-based FTL goes on: whatever recovery rebuilds that
//! is newer than the translation pages on flash is written back by recovery (and counted as
//! recovery traffic), not held where no later write-back pays for it. Each demand FTL runs the
//! same requests twice, once with a power loss halfway; the oracle checks every read of both,
//! and the translation writes of the second half must match.

use ftlsim::check::suite::test_device;
use ftlsim::flash::Lpn;
use ftlsim::ftl::REGISTRY;
use ftlsim::host::PageRequest;
use ftlsim::metrics::Report;
use ftlsim::workload::IoKind;
use ftlsim::Simulation;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const REQUESTS: u64 = 6000;

fn requests(logical: u32) -> Vec<PageRequest> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    (0..REQUESTS)
        .map(|i| {
            let kind = if rng.gen_bool(0.7) { IoKind::Write } else { IoKind::Read };
            PageRequest {
                arrival: i * 2_000,
                kind,
                first: Lpn::new(rng.gen_range(0..logical)),
                pages: 1,
                span: ftlsim::host::SectorSpan::WHOLE,
            }
        })
        .collect()
}

/// Reports after the first half and at the end, with or without a power loss in between.
fn run(ftl: &str, power_loss: bool) -> (Report, Report) {
    let config = test_device(ftl, 2, 2, 16, 16, &[]).unwrap();
    let requests = requests(config.device.logical_pages());
    let mut sim = Simulation::new(&config, ftl).unwrap();
    let (first, second) = requests.split_at(requests.len() / 2);
    for &r in first {
        sim.serve(r).unwrap();
    }
    if power_loss {
        sim.power_loss().unwrap();
    }
    let half = sim.result("first half", serde_json::Value::Null, 0.0).unwrap().report;
    for &r in second {
        sim.serve(r).unwrap();
    }
    sim.check_invariants().unwrap();
    (half, sim.result("whole", serde_json::Value::Null, 0.0).unwrap().report)
}

#[test]
fn translation_writes_after_a_power_loss_match_a_run_without_one() {
    for info in REGISTRY.iter().filter(|f| f.keeps_translation_pages()) {
        let (half, end) = run(info.name, false);
        let (lost_half, lost_end) = run(info.name, true);
        let after = end.programs.translation - half.programs.translation;
        let after_loss = lost_end.programs.translation - lost_half.programs.translation;
        let at_recovery = lost_half.programs.recovery;
        assert!(at_recovery > 0, "{}: recovery wrote back no translation page", info.name);
        // The changes the power loss took from the cache are written by recovery instead of by
        // later evictions; recovery writes each TP once for all its changes, so the total may be
        // a little lower (the cache also restarts cold).
        let ratio = (after_loss + at_recovery) as f64 / after as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{}: {after_loss} translation writes after the power loss and {at_recovery} by recovery, {after} without it",
            info.name
        );
    }
}

#[test]
fn power_losses_inside_requests_leave_each_page_old_or_new_for_every_ftl() {
    for info in REGISTRY {
        let sets = ["check.power_loss_inside=true".to_string(), "check.invariants_every=50".to_string()];
        let config = test_device(info.name, 2, 2, 16, 16, &sets).unwrap();
        let logical = config.device.logical_pages();
        let mut sim = Simulation::new(&config, info.name).unwrap();
        sim.set_power_loss_points((1..=40).map(|i| i * 97).collect());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for i in 0..4000 {
            let first = rng.gen_range(0..logical);
            let pages = rng.gen_range(1..=8).min(logical - first);
            let kind = if rng.gen_bool(0.7) { IoKind::Write } else { IoKind::Read };
            let request = PageRequest {
                arrival: i * 2_000,
                kind,
                first: Lpn::new(first),
                pages,
                span: ftlsim::host::SectorSpan::WHOLE,
            };
            sim.serve(request).unwrap_or_else(|e| panic!("{}: request {i}: {e}", info.name));
        }
        sim.check_invariants().unwrap();
        assert!(
            sim.power_cuts() >= 20,
            "{}: only {} of 40 power losses struck inside a request",
            info.name,
            sim.power_cuts()
        );
    }
}
