//! A scheme needs nothing but its registry entry: one declared in a scratch registry here, with
//! no other edit anywhere, is listed with its parameters, has them validated before anything is
//! built, and runs the whole conformance suite (it is PFTL under another name, with a knob).

use ftlsim::check::conformance::{run_static, run_workload, WORKLOADS};
use ftlsim::check::suite::test_device_for;
use ftlsim::flash::{FlashArray, Lpn, PageKind, Ppn, BASIC_LAYOUT};
use ftlsim::ftl::common::{BlockManager, StreamSpec};
use ftlsim::ftl::{
    build_with, describe, ftl_params, no_test_overrides, one_stream_spare_blocks, validate_ftl_tables, Family, Ftl,
    FtlCtx, FtlInfo, PageFtl, ParamRange, ParamSpec, ParamsSchema, SramBreakdown,
};
use ftlsim::{Config, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ScratchParams {
    knob: u32,
}

impl Default for ScratchParams {
    fn default() -> Self {
        ScratchParams { knob: 3 }
    }
}

/// PFTL under the name "scratch".
struct Scratch {
    inner: PageFtl,
    params: ScratchParams,
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let params: ScratchParams = ftl_params(config, "scratch")?;
    Ok(Box::new(Scratch { inner: PageFtl::new(config), params }))
}

impl Ftl for Scratch {
    fn name(&self) -> &'static str {
        "scratch"
    }
    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        self.inner.read(lpn, ctx)
    }
    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        self.inner.write(lpn, version, ctx)
    }
    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        self.inner.trim(lpn, ctx)
    }
    fn lookup(&self, lpn: Lpn, flash: &FlashArray) -> Option<Ppn> {
        self.inner.lookup(lpn, flash)
    }
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.inner.recover(ctx)
    }
    fn sram(&self) -> SramBreakdown {
        self.inner.sram()
    }
    fn state_bytes(&self) -> usize {
        self.inner.state_bytes()
    }
    fn blocks(&self) -> &BlockManager {
        self.inner.blocks()
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).expect("parameters serialise")
    }
}

const SCRATCH: FtlInfo = FtlInfo {
    name: "scratch",
    description: "a scheme that exists only in this test",
    family: Family::PageMapped,
    build,
    params: ParamsSchema::of::<ScratchParams>(&[ParamSpec {
        name: "knob",
        range: ParamRange::Integer { min: 1, max: 8 },
        meaning: "a knob",
        source: "this test",
    }]),
    spare_layout: BASIC_LAYOUT,
    streams: &[StreamSpec::new("data", PageKind::Data)],
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.2,
    spare_blocks_needed: one_stream_spare_blocks,
    test_overrides: no_test_overrides,
};

fn device(extra: &[&str]) -> Config {
    test_device_for(&SCRATCH, 1, 2, 16, 16, &extra.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn a_scratch_entry_is_listed_with_its_parameters() {
    let listing = describe(&[SCRATCH]);
    assert!(listing.contains("scratch") && listing.contains("a scheme that exists only in this test"), "{listing}");
    assert!(listing.contains("knob") && listing.contains("1..=8") && listing.contains("default 3"), "{listing}");
}

#[test]
fn a_scratch_entry_has_its_parameters_validated_before_it_is_built() {
    let registry = [SCRATCH];
    validate_ftl_tables(&registry, &device(&["ftl.scratch.knob=8"])).unwrap();
    let err = validate_ftl_tables(&registry, &device(&["ftl.scratch.knob=9"])).unwrap_err().to_string();
    assert!(err.contains("ftl.scratch.knob") && err.contains("must be in [1, 8]"), "{err}");
    let err = validate_ftl_tables(&registry, &device(&["ftl.scratc.knob=2"])).unwrap_err().to_string();
    assert!(err.contains("did you mean \"scratch\""), "{err}");
    assert!(build_with(&SCRATCH, &device(&["ftl.scratch.knob=0"])).is_err());
}

#[test]
fn a_scratch_entry_runs_the_whole_conformance_suite() {
    run_static(&SCRATCH).unwrap();
    for workload in WORKLOADS {
        let report = run_workload(&SCRATCH, workload).unwrap_or_else(|e| panic!("{}: {e}", workload.name));
        assert!(report.gc_victims > 0, "{}", workload.name);
    }
}
