//! Closed-loop synthetic arrivals through a whole simulation: the simulation reports each
//! completion back to the generator, which issues a request only when fewer than the queue
//! depth are outstanding.

use ftlsim::workload::generator::SynthSpec;
use ftlsim::ConfigBuilder;

/// (mean queueing, mean access) in microseconds.
fn times_us(depth: u32) -> (f64, f64) {
    let config = ConfigBuilder::new()
        .set("device.geometry.blocks_per_plane=128")
        .unwrap()
        .set("device.geometry.pages_per_block=64")
        .unwrap()
        .set("device.timing.model=\"fifo-single\"")
        .unwrap()
        .build()
        .unwrap();
    let capacity = config.device.logical_pages() as u64 * config.device.geometry.page_size as u64;
    let spec: SynthSpec = format!("requests=2000,read=0.5,size=4k,arrival=closed:{depth}").parse().unwrap();
    let result = ftlsim::run(&config, "pftl", spec.workload(capacity).unwrap()).unwrap();
    assert_eq!(result.report.host.requests, 2000);
    (result.report.response.mean_queueing_us, result.report.response.mean_access_us)
}

#[test]
fn depth_one_never_queues_and_deeper_queues_do() {
    // One outstanding request: each arrives as the previous completes, on an idle server.
    assert_eq!(times_us(1).0, 0.0);
    // Eight outstanding on one FIFO server: each waits while the seven ahead of it are served.
    let (queueing, access) = times_us(8);
    let ratio = queueing / access;
    assert!((6.5..7.5).contains(&ratio), "queueing {queueing} us, access {access} us");
}
