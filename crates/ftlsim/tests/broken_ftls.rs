//! The harness catches deliberately broken FTLs, each with a message that points at the bug.
//!
//! `Toy` is a page-mapped FTL built from the real machinery (the block manager and its GC) that
//! also keeps a checkpoint page in the metadata stream, so the generic check of referenced
//! metadata pages has something to check. Each [`Bug`] breaks one thing. None is registered.

use ftlsim::check::suite::test_device;
use ftlsim::flash::{FlashArray, Lpn, OpKind, PageKind, Ppn, Purpose, Spare};
use ftlsim::ftl::common::{BlockManager, Relocate, StreamId, StreamSpec};
use ftlsim::ftl::{Ftl, FtlCtx, PageRef, SramBreakdown, SramItem};
use ftlsim::host::PageRequest;
use ftlsim::workload::IoKind;
use ftlsim::{Config, Result, SimError, Simulation};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// An overwrite leaves the old copy valid.
    ForgetsToInvalidate,
    /// GC moves a page but the map keeps pointing at the old copy.
    ForgetsRelocation,
    /// A trim invalidates the page but keeps the mapping.
    TrimKeepsMapping,
    /// Recovery lets the oldest copy of each LPN win.
    RecoversOlderVersion,
    /// A new checkpoint leaves the previous one valid.
    LeaksCheckpoint,
    /// The cache-like "recent writes" structure grows past the configured SRAM.
    SramOverflows,
    /// Reported SRAM depends on how many LPNs are mapped.
    SramFollowsState,
    NoRecovery,
    /// Recovery reads spare areas tagged as host reads.
    UntaggedRecoveryReads,
    /// Every write skips a page of the open block (legal under the sequential rule: not a bug).
    SkipsAPage,
    /// Recovery rebuilds validity with every data page valid (stale copies included).
    RecoveryKeepsStalePagesValid,
    /// Recovery rebuilds validity with the newest copy of odd LPNs invalid.
    RecoveryLosesValidPages,
    /// Every write takes two pages and programs the second one first (and so also holds a page
    /// across an allocation, against the block manager's contract: only short runs use it).
    ProgramsBackwards,
    /// Every write programs its page a second time.
    ReprogramsAPage,
}

const STREAMS: &[StreamSpec] =
    &[StreamSpec::new("data", PageKind::Data), StreamSpec::new("checkpoint", PageKind::Metadata)];
const DATA: StreamId = StreamId::new(0);
const CHECKPOINT: StreamId = StreamId::new(1);
/// A checkpoint (metadata page 0) is written after this many host writes.
const CHECKPOINT_EVERY: u64 = 16;

struct Map {
    l2p: Vec<Option<Ppn>>,
    checkpoint: Option<Ppn>,
    bug: Bug,
}

impl Relocate for Map {
    fn relocated(&mut self, _: &mut BlockManager, spare: Spare, _old: Ppn, new: Ppn, _: &mut FtlCtx) -> Result<()> {
        match spare.kind {
            PageKind::Metadata => self.checkpoint = Some(new),
            _ if self.bug == Bug::ForgetsRelocation => {}
            _ => self.l2p[spare.logical as usize] = Some(new),
        }
        Ok(())
    }
}

struct Toy {
    map: Map,
    blocks: BlockManager,
    writes: u64,
}

impl Toy {
    fn build(bug: Bug, config: &Config) -> Box<dyn Ftl> {
        let l2p = vec![None; config.device.logical_pages() as usize];
        Box::new(Toy { map: Map { l2p, checkpoint: None, bug }, blocks: BlockManager::new(config, STREAMS), writes: 0 })
    }

    fn program(&mut self, stream: StreamId, logical: u32, version: u32, ctx: &mut FtlCtx) -> Result<Ppn> {
        let unit = self.blocks.next_unit(stream);
        let ppn = self.blocks.allocate(unit, stream, &mut self.map, ctx)?;
        ctx.program(ppn, STREAMS[stream.index()].kind, logical, version, Purpose::Host)?;
        Ok(ppn)
    }

    fn write_checkpoint(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        let version = (self.writes / CHECKPOINT_EVERY) as u32;
        let new = self.program(CHECKPOINT, 0, version, ctx)?;
        if let Some(old) = self.map.checkpoint.replace(new) {
            if self.map.bug != Bug::LeaksCheckpoint {
                self.blocks.invalidate(old, ctx.flash)?;
            }
        }
        Ok(())
    }
}

impl Ftl for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    /// Resolves the mapping only (the toy skips the data transfer, so a bad mapping reaches the
    /// oracle instead of failing as a read of an erased page).
    fn read(&mut self, lpn: Lpn, _: &mut FtlCtx) -> Result<Option<Ppn>> {
        Ok(self.map.l2p[lpn.index()])
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.map.l2p[lpn.index()].filter(|_| self.map.bug != Bug::ForgetsToInvalidate) {
            self.blocks.invalidate(old, ctx.flash)?;
        }
        let unit = self.blocks.next_unit(DATA);
        let ppn = match self.map.bug {
            Bug::SkipsAPage => {
                self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
                self.program(DATA, lpn.get(), version, ctx)?
            }
            Bug::ProgramsBackwards => {
                let first = self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
                let second = self.blocks.allocate(unit, DATA, &mut self.map, ctx)?;
                ctx.program(second, PageKind::Data, lpn, version, Purpose::Host)?;
                ctx.program(first, PageKind::Data, lpn, version, Purpose::Host)?;
                self.blocks.invalidate(second, ctx.flash)?;
                first
            }
            Bug::ReprogramsAPage => {
                let ppn = self.program(DATA, lpn.get(), version, ctx)?;
                ctx.program(ppn, PageKind::Data, lpn, version, Purpose::Host)?;
                ppn
            }
            _ => self.program(DATA, lpn.get(), version, ctx)?,
        };
        self.map.l2p[lpn.index()] = Some(ppn);
        self.writes += 1;
        if self.writes.is_multiple_of(CHECKPOINT_EVERY) {
            self.write_checkpoint(ctx)?;
        }
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        if let Some(old) = self.map.l2p[lpn.index()] {
            self.blocks.invalidate(old, ctx.flash)?;
            if self.map.bug != Bug::TrimKeepsMapping {
                self.map.l2p[lpn.index()] = None;
            }
        }
        Ok(())
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.l2p[lpn.index()]
    }

    /// Scans every programmed page: for data the newest version of each LPN wins (the oldest
    /// with the bug), for checkpoints the newest; the winners are the valid pages.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        if self.map.bug == Bug::NoRecovery {
            return Err(SimError::RecoveryUnsupported { ftl: self.name().into() });
        }
        let l2p = &mut self.map.l2p;
        l2p.fill(None);
        let mut checkpoint: Option<(u32, Ppn)> = None;
        let mut chosen = vec![0u32; l2p.len()];
        let g = ctx.flash.geometry().clone();
        for pbn in g.blocks() {
            for ppn in g.pages_below(pbn, ctx.flash.write_pointer(pbn)) {
                if !ctx.flash.is_programmed(ppn) {
                    ctx.probe_spare(ppn); // a page skipped under the sequential rule reads as erased
                    continue;
                }
                let spare = if self.map.bug == Bug::UntaggedRecoveryReads {
                    ctx.read_spare(ppn, Purpose::Host)?
                } else {
                    ctx.read_spare(ppn, Purpose::Recovery)?
                };
                if spare.kind == PageKind::Metadata {
                    if checkpoint.is_none_or(|(version, _)| spare.version > version) {
                        checkpoint = Some((spare.version, ppn));
                    }
                    continue;
                }
                let lpn = spare.logical as usize;
                let wins = match self.map.bug {
                    Bug::RecoversOlderVersion => chosen[lpn] == 0 || spare.version < chosen[lpn],
                    _ => spare.version > chosen[lpn],
                };
                if wins {
                    chosen[lpn] = spare.version;
                    l2p[lpn] = Some(ppn);
                }
            }
        }
        self.map.checkpoint = checkpoint.map(|(_, ppn)| ppn);
        let (l2p, checkpoint, bug) = (&self.map.l2p, self.map.checkpoint, self.map.bug);
        self.blocks.rebuild(ctx.flash, |ppn, spare| match spare.kind {
            PageKind::Metadata => checkpoint == Some(ppn),
            _ if bug == Bug::RecoveryKeepsStalePagesValid => true,
            _ if bug == Bug::RecoveryLosesValidPages && spare.logical % 2 == 1 => false,
            _ => l2p[spare.logical as usize] == Some(ppn),
        });
        Ok(())
    }

    fn sram(&self) -> SramBreakdown {
        let entries = match self.map.bug {
            Bug::SramFollowsState => self.map.l2p.iter().flatten().count() as u64,
            _ => self.map.l2p.len() as u64,
        };
        vec![SramItem { structure: "page map".into(), bytes: entries * 4 }]
    }

    fn sram_in_use(&self) -> Option<u64> {
        match self.map.bug {
            Bug::SramOverflows => Some(self.writes * 8),
            Bug::SramFollowsState => None,
            _ => Some(self.map.l2p.len() as u64 * 4),
        }
    }

    fn referenced_pages(&self) -> Option<Vec<PageRef>> {
        Some(self.map.checkpoint.map(|ppn| PageRef { ppn, kind: PageKind::Metadata, logical: 0 }).into_iter().collect())
    }

    fn state_bytes(&self) -> usize {
        self.map.l2p.len() * 4
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        serde_json::json!({})
    }
}

/// 1 die x 2 planes x 16 blocks x 8 pages, 160 logical pages; full invariants every
/// `invariants_every` requests (0 = never).
fn config(invariants_every: u64) -> Config {
    config_with(invariants_every, &[])
}

fn config_with(invariants_every: u64, extra: &[&str]) -> Config {
    let mut sets = vec!["device.logical_pages=160".to_string(), format!("check.invariants_every={invariants_every}")];
    sets.extend(extra.iter().map(|s| s.to_string()));
    test_device("toy", 1, 2, 16, 8, &sets).unwrap()
}

fn sim(bug: Bug, config: &Config) -> Simulation {
    Simulation::with_ftl(config, Toy::build(bug, config)).unwrap()
}

fn page(i: u64, kind: IoKind, lpn: Lpn) -> PageRequest {
    PageRequest { arrival: i * 1000, kind, first: lpn, pages: 1, span: ftlsim::host::SectorSpan::WHOLE }
}

/// Random single-page writes (60%), reads (30%) and trims (10%); returns the first error.
fn random_run(sim: &mut Simulation, requests: u64) -> Result<()> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for i in 0..requests {
        let kind = match rng.gen_range(0..10) {
            0..=5 => IoKind::Write,
            6..=8 => IoKind::Read,
            _ => IoKind::Trim,
        };
        sim.serve(page(i, kind, Lpn::new(rng.gen_range(0..160))))?;
    }
    Ok(())
}

fn error_of(bug: Bug, invariants_every: u64, requests: u64) -> String {
    error_on(bug, &config(invariants_every), requests)
}

fn error_on(bug: Bug, config: &Config, requests: u64) -> String {
    let mut sim = sim(bug, config);
    let err = random_run(&mut sim, requests).and_then(|()| sim.check_invariants()).expect_err("the bug goes unnoticed");
    err.to_string()
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
}

#[test]
fn the_correct_toy_passes_everything_the_broken_ones_fail() {
    let mut sim = sim(Bug::None, &config(1));
    sim.set_power_loss_points(vec![100, 777, 1500]);
    random_run(&mut sim, 3000).unwrap();
    sim.check_invariants().unwrap();
    sim.power_loss().unwrap();
    let report = sim.result("toy", serde_json::Value::Null, 0.0).unwrap().report;
    assert!(report.gc_victims > 0, "the run must exercise GC");
    assert_eq!(report.recovery.events, 4);
    assert!(report.recovery.pages_read > 0 && report.recovery.rp.unwrap() > 0.0);
}

#[test]
fn invariants_catch_an_overwrite_that_leaves_the_old_copy_valid() {
    let err = error_of(Bug::ForgetsToInvalidate, 1, 1000);
    assert_mentions(&err, &["invariant violated in FTL toy", "is not what its LPN maps to", "not invalidated"]);
}

#[test]
fn the_oracle_catches_a_page_gc_moved_without_remapping() {
    let mut sim = sim(Bug::ForgetsRelocation, &config(0));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut i = 0;
    // Fill, then overwrite until the first request whose GC moved pages; no moved LPN is written
    // again (its write would fail invalidating the stale copy), so the reads below find them.
    let moved =
        |sim: &Simulation| sim.ops().ops().iter().any(|op| op.kind == OpKind::Program && op.purpose == Purpose::Gc);
    for lpn in 0..160 {
        sim.serve(page(i, IoKind::Write, Lpn::new(lpn))).unwrap();
        i += 1;
    }
    while !moved(&sim) {
        sim.serve(page(i, IoKind::Write, Lpn::new(rng.gen_range(0..80) * 2))).unwrap();
        i += 1;
    }
    let err = (0..160).try_for_each(|lpn| sim.serve(page(i, IoKind::Read, Lpn::new(lpn)))).unwrap_err().to_string();
    assert_mentions(&err, &["oracle: FTL toy at request", "expected a data page holding version", "found PPN"]);
}

#[test]
fn the_oracle_catches_a_trim_that_keeps_the_mapping() {
    let mut sim = sim(Bug::TrimKeepsMapping, &config(0));
    sim.serve(page(0, IoKind::Write, Lpn::new(5))).unwrap();
    let err = sim
        .serve(page(1, IoKind::Trim, Lpn::new(5)))
        .and_then(|()| sim.serve(page(2, IoKind::Read, Lpn::new(5))))
        .unwrap_err()
        .to_string();
    assert_mentions(&err, &["FTL toy", "LPN 5", "expected unmapped", "found PPN 0 (Data page of LPN 5 version 1)"]);
}

#[test]
fn the_power_loss_check_catches_recovery_of_an_older_version() {
    let mut sim = sim(Bug::RecoversOlderVersion, &config(0));
    for (i, lpn) in [3, 4, 3].into_iter().enumerate() {
        sim.serve(page(i as u64, IoKind::Write, Lpn::new(lpn))).unwrap();
    }
    let err = sim.power_loss().unwrap_err().to_string();
    assert_mentions(
        &err,
        &["FTL toy (after power-loss recovery) at request 3, LPN 3", "holding version 2", "version 1"],
    );
}

#[test]
fn a_power_loss_point_runs_recovery_inside_serve() {
    let mut config = config(0);
    config.check.power_loss_at = "2".into();
    let mut sim = sim(Bug::RecoversOlderVersion, &config);
    sim.serve(page(0, IoKind::Write, Lpn::new(9))).unwrap();
    let err = sim.serve(page(1, IoKind::Write, Lpn::new(9))).unwrap_err().to_string();
    assert_mentions(&err, &["after power-loss recovery", "LPN 9"]);
}

#[test]
fn invariants_catch_a_leaked_metadata_page() {
    let err = error_of(Bug::LeaksCheckpoint, 1, 1000);
    assert_mentions(&err, &["valid Metadata page PPN", "referenced by no directory"]);
}

#[test]
fn invariants_catch_sram_beyond_the_configuration() {
    let err = error_of(Bug::SramOverflows, 1, 1000);
    assert_mentions(&err, &["bytes of SRAM state but its configuration provides 640 bytes"]);
}

#[test]
fn invariants_catch_sram_that_follows_the_state() {
    let err = error_of(Bug::SramFollowsState, 1, 1000);
    assert_mentions(&err, &["SRAM use must follow from the configuration alone"]);
}

#[test]
fn unsupported_recovery_is_an_explicit_error_never_a_pass() {
    let mut config = config(0);
    config.check.power_loss_at = "3".into();
    let mut sim = sim(Bug::NoRecovery, &config);
    let err = random_run(&mut sim, 10).unwrap_err();
    assert_eq!(err, SimError::RecoveryUnsupported { ftl: "toy".into() });
    assert_mentions(&err.to_string(), &["toy does not support power-loss recovery"]);
}

#[test]
fn recovery_reads_must_be_tagged_so_they_are_counted() {
    let mut sim = sim(Bug::UntaggedRecoveryReads, &config(0));
    random_run(&mut sim, 200).unwrap();
    let err = sim.power_loss().unwrap_err().to_string();
    assert_mentions(&err, &["recovery issued", "reads not tagged Purpose::Recovery"]);
}

#[test]
fn the_sequential_rule_refuses_out_of_order_programs_and_allows_gaps() {
    let err = error_of(Bug::ProgramsBackwards, 0, 10);
    assert_mentions(&err, &["NAND rule violated by program of PPN", "out-of-order program"]);
    let mut skipping = sim(Bug::SkipsAPage, &config(1));
    skipping.set_power_loss_points(vec![300]);
    random_run(&mut skipping, 1500).unwrap();
    skipping.check_invariants().unwrap();
}

#[test]
fn the_any_free_page_rule_allows_any_order_but_refuses_a_second_program() {
    let any = config_with(1, &["device.program_order=\"any-free-page\""]);
    random_run(&mut sim(Bug::ProgramsBackwards, &any), 10).unwrap();
    let err = error_on(Bug::ReprogramsAPage, &any, 10);
    assert_mentions(&err, &["NAND rule violated by program of PPN", "not free"]);
}

#[test]
fn rebuilt_validity_must_equal_the_recovered_mapping() {
    for (bug, parts) in [
        (Bug::RecoveryKeepsStalePagesValid, &["after request 300", "is not what its LPN maps to"][..]),
        (Bug::RecoveryLosesValidPages, &["after request 300", "which is not a valid page"][..]),
    ] {
        let mut sim = sim(bug, &config(0));
        random_run(&mut sim, 300).unwrap();
        let err = sim.power_loss().unwrap_err().to_string();
        assert_mentions(&err, parts);
    }
}
