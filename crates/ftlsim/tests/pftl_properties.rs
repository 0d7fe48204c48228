//! Property test: random request streams against PFTL never violate a NAND rule, and every read
//! finds the page last written for its LPN (the oracle checks each read inside `serve`).

use ftlsim::flash::Lpn;
use ftlsim::host::PageRequest;
use ftlsim::workload::IoKind;
use ftlsim::{ConfigBuilder, Simulation};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = (u8, u32, u32)> {
    (0u8..10, 0u32..1_000_000, 1u32..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_streams_keep_nand_rules_and_read_latest(
        ops in prop::collection::vec(op(), 1..600),
        pages_per_block in prop::sample::select(vec![4u32, 8, 16]),
        overprovisioning in prop::sample::select(vec![0.3f64, 0.5]),
        policy in prop::sample::select(vec!["greedy", "cost-benefit"]),
        precondition in prop::sample::select(vec!["none", "fill"]),
    ) {
        let config = ConfigBuilder::new()
            .set("device.geometry.planes_per_die=2").unwrap()
            .set("device.geometry.blocks_per_plane=8").unwrap()
            .set(&format!("device.geometry.pages_per_block={pages_per_block}")).unwrap()
            .set(&format!("device.overprovisioning={overprovisioning}")).unwrap()
            .set("gc.free_blocks_low=1").unwrap()
            .set(&format!("gc.policy=\"{policy}\"")).unwrap()
            .set(&format!("precondition.mode=\"{precondition}\"")).unwrap()
            .set("check.invariants_every=25").unwrap()
            .build()
            .unwrap();
        let logical = config.device.logical_pages();
        let mut sim = Simulation::new(&config, "pftl").unwrap();
        sim.precondition().unwrap();
        for (i, (kind, addr, pages)) in ops.into_iter().enumerate() {
            let kind = match kind { 0..=4 => IoKind::Write, 5..=8 => IoKind::Read, _ => IoKind::Trim };
            let pages = pages.min(logical);
            let first = addr % (logical - pages + 1);
            let req = PageRequest { arrival: i as u64 * 1000, kind, first: Lpn::new(first), pages, span: ftlsim::host::SectorSpan::WHOLE };
            if let Err(e) = sim.serve(req) {
                return Err(TestCaseError::fail(format!("request {i}: {e}")));
            }
        }
        sim.check_invariants().unwrap();
        sim.power_loss().unwrap();
        sim.check_invariants().unwrap();
    }
}

/// Host writes stripe over allocation units while GC moves stay in their unit, so live data
/// drifts between units; a unit that cannot reclaim anything must hand its writes to the others
/// rather than report the device full (found by the conformance suite's two-die full device).
#[test]
fn striping_over_units_survives_uneven_live_data() {
    // Both at the least spare validation accepts: (free_blocks_low + 2) blocks per unit.
    for (sets, label) in [
        (&["device.geometry.channels=2", "device.geometry.planes_per_die=1", "device.logical_pages=208"][..], "2 dies"),
        (
            &["device.geometry.planes_per_die=4", "device.allocation_unit=\"plane\"", "device.overprovisioning=0.1875"]
                [..],
            "4 planes",
        ),
    ] {
        let mut b = ConfigBuilder::new()
            .set("device.geometry.blocks_per_plane=16")
            .unwrap()
            .set("device.geometry.pages_per_block=8")
            .unwrap()
            .set("gc.free_blocks_low=1")
            .unwrap();
        for s in sets {
            b = b.set(s).unwrap();
        }
        let config = b.build().unwrap();
        let logical = config.device.logical_pages();
        let mut sim = Simulation::new(&config, "pftl").unwrap();
        sim.precondition().unwrap();
        let mut x = 12345u64;
        for i in 0..(logical as u64 * 30) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let req = PageRequest {
                arrival: i,
                kind: IoKind::Write,
                first: Lpn::new(((x >> 33) % logical as u64) as u32),
                pages: 1,
                span: ftlsim::host::SectorSpan::WHOLE,
            };
            sim.serve(req).unwrap_or_else(|e| panic!("{label}, write {i}: {e}"));
        }
        sim.check_invariants().unwrap();
    }
}
