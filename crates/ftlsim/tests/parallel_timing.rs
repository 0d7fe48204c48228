//! The parallel timing model on whole devices: what paper 001's platform and a many-die SSD must
//! show.

use ftlsim::flash::Lpn;
use ftlsim::host::{PageRequest, SectorSpan};
use ftlsim::workload::IoKind;
use ftlsim::{ConfigBuilder, Simulation};

fn request(arrival: u64, kind: IoKind, first: u32, pages: u32) -> PageRequest {
    PageRequest { arrival, kind, first: Lpn::new(first), pages, span: SectorSpan::WHOLE }
}

/// `ssd16` stripes logical pages over its 16 chips (RAID-0): a 16 KB read reads four pages on
/// four chips at once, so it takes one page read plus one bus transfer (25 + 40 us), where
/// four reads on the four planes of one chip would take four transfers in a row.
#[test]
fn a_16k_read_on_ssd16_reads_four_chips_at_once() {
    let config = ConfigBuilder::new()
        .preset("ssd16")
        .unwrap()
        .set("device.geometry.blocks_per_plane=64")
        .unwrap()
        .set("gc.free_blocks_low=4")
        .unwrap()
        .build()
        .unwrap();
    let mut sim = Simulation::new(&config, "pftl").unwrap();
    sim.precondition().unwrap();
    sim.serve(request(0, IoKind::Read, 1000, 4)).unwrap();
    let report = sim.result("16k", serde_json::Value::Null, 0.0).unwrap().report;
    assert_eq!(report.response.read.count, 1);
    assert!((report.response.read.max_us - 65.0).abs() < 0.1, "{} us", report.response.read.max_us);
}
