//! Delta-FTL (ΔFTL, paper 001 chapter 4; spec `../shared/specs/diffecc-suspension-deltaftl.md`
//! §4): page mapping that stores a write-hot, read-cold page's update as the compressed XOR of
//! its new and old versions in a delta log area (DLA), so fewer pages are programmed and fewer
//! blocks collected.
//!
//! - Dispatch (§4.3.1): a page reaching the FTL (a write-buffer eviction) whose LPN is write-hot
//!   (write count ≥ threshold in the SLRU mapping cache, this write included) and read-cold, and
//!   that has an old version, is delta-encoded unless its content does not compress into a page
//!   or the bypass is on (Expression 4.2). Encoding reads the old version from flash and
//!   compresses on the controller CPU (`device.cpu`); decoding decompresses there.
//! - The content model ([`crate::host::content`]) gives each write's compression ratio; with
//!   `trace_content`, a trace's content fingerprints make a write of unchanged content an empty
//!   delta ([`trace_content`]).
//! - Deltas pack into the Temp Buffer, which is written to a delta page of the next unit in turn
//!   (the DLA is a stream of its own in every unit's pool).
//! - A read of a page in delta form reads the old version and the delta page (two flash reads;
//!   one if the delta is still buffered); a read-hot page is merged back to original form.
//! - GC is the shared greedy GC over both areas, weighing invalid deltas in 1/64 of a page, and
//!   merges while moving (`Relocate::take_over`); with `cold_scan_every`, a periodic scan also
//!   merges the write-cold deltas (spec §4.7, Δ4).
//! - At power loss the Temp Buffer is written out (capacitor-backed); recovery reads every page's
//!   spare area and every delta page's header.

mod bypass;
mod hotness;
pub mod lifetime;
mod map;
mod temp_buffer;
mod trace_content;

pub use bypass::{overhead_bound, Bypass};

use serde::{Deserialize, Serialize};

use super::common::{BlockManager, StreamId, StreamSpec};
use super::registry::{Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use super::{ftl_params, DeltaAt, Ftl, FtlCtx, PageLayout, Prefetch, SramBreakdown, SramItem};
use crate::config::Config;
use crate::error::Result;
use crate::flash::deltas::HEADER_ENTRY_BYTES;
use crate::flash::{CpuTask, FlashArray, Lpn, PageKind, Ppn, Purpose, BASIC_LAYOUT};
use crate::host::content::ContentModel;
use hotness::HotnessTracker;
use map::{DeltaMap, GARBAGE_RESOLUTION};
use trace_content::TraceContent;

/// The page mapping area's stream and the delta log area's.
const DATA: StreamId = StreamId::new(0);
const DLA: StreamId = StreamId::new(1);
const STREAMS: &[StreamSpec] = &[StreamSpec::new("data", PageKind::Data), StreamSpec::new("dla", PageKind::Delta)];

pub const INFO: FtlInfo = FtlInfo {
    name: "delta",
    description: "Delta-FTL: page mapping that stores write-hot, read-cold updates as compressed deltas in a log area",
    family: Family::DeltaEncoded,
    build: DeltaFtl::build,
    params: ParamsSchema::of::<DeltaFtlParams>(&[
        ParamSpec {
            name: "compression_mean",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "mean R_c of the Gaussian compression-ratio model (delta bytes / page)",
            source: "paper 001 §4.5: 0.50, 0.35, 0.20",
        },
        ParamSpec {
            name: "compression_sigma",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "standard deviation of the compression ratio",
            source: "unstated; spec Δ1 recommends 0.05",
        },
        ParamSpec {
            name: "hot_threshold",
            range: ParamRange::Integer { min: 1, max: 1_000_000 },
            meaning: "access count at which an LPN is read-hot or write-hot",
            source: "paper 001 §4.3.4: 2",
        },
        ParamSpec {
            name: "cache_entries",
            range: ParamRange::Integer { min: 1, max: u32::MAX as i64 - 1 },
            meaning: "entries of the SLRU mapping cache that tracks hotness (counts die on eviction)",
            source: "unstated; spec Δ2 recommends 65,536",
        },
        ParamSpec {
            name: "protected_fraction",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "the SLRU cache's protected segment share",
            source: "spec §4.6 [REC]: 0.5",
        },
        ParamSpec {
            name: "dla_space_share",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "most of the spare pages beyond GC's needs that valid delta pages may hold; beyond it, writes go to the PMA",
            source: "ours: deltas take over-provisioning space (paper 001 §4.3.1), and GC needs some left",
        },
        ParamSpec {
            name: "trace_content",
            range: ParamRange::Flag,
            meaning: "with a trace that records content (FIU, SSDSim MD5s), a write of the old version's content is an empty delta; others draw from the Gaussian",
            source: "issue: Delta-FTL, content model (real content locality as an option)",
        },
        ParamSpec {
            name: "cold_scan_every",
            range: ParamRange::Integer { min: 0, max: u32::MAX as i64 },
            meaning: "page writes between scans that merge every delta-form LPN no longer write-hot (0: merges only in GC)",
            source: "paper 001 §4.3.3's periodic scan; period unstated, spec Δ4 recommends lazy merges (0)",
        },
        ParamSpec {
            name: "bypass",
            range: ParamRange::Flag,
            meaning: "stop delta encoding while 1 − R̂_c ≤ MAX(T_read, T_bus, T_encode) / T_write (Expression 4.2)",
            source: "paper 001 §4.3.2",
        },
        ParamSpec {
            name: "bypass_window",
            range: ParamRange::Integer { min: 1, max: 1_000_000 },
            meaning: "observations the compression-ratio EWMA averages over",
            source: "spec §4.4 [REC]: 1024",
        },
        ParamSpec {
            name: "bypass_hysteresis",
            range: ParamRange::Number { min: 0.0, max: 1.0 },
            meaning: "margin above the bound before encoding resumes",
            source: "spec §4.4 [REC] (value ours)",
        },
    ]),
    spare_layout: BASIC_LAYOUT,
    streams: STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 16.0,
    spare_blocks_needed: |c| c.spare_blocks_needed(STREAMS.len() as u32, 0),
    // A mapping cache of a quarter of the logical pages, so counts die on the tiny devices too.
    test_overrides: |c| vec![("cache_entries", (c.device.logical_pages() as u64 / 4).max(1))],
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeltaFtlParams {
    pub compression_mean: f64,
    pub compression_sigma: f64,
    pub hot_threshold: u32,
    pub cache_entries: u32,
    pub protected_fraction: f64,
    pub dla_space_share: f64,
    pub trace_content: bool,
    pub cold_scan_every: u32,
    pub bypass: bool,
    pub bypass_window: u32,
    pub bypass_hysteresis: f64,
}

impl Default for DeltaFtlParams {
    fn default() -> Self {
        DeltaFtlParams {
            compression_mean: 0.35,
            compression_sigma: 0.05,
            hot_threshold: 2,
            cache_entries: 65_536,
            protected_fraction: 0.5,
            dla_space_share: 0.5,
            trace_content: false,
            cold_scan_every: 0,
            bypass: true,
            bypass_window: 1024,
            bypass_hysteresis: 0.02,
        }
    }
}

/// Spare pages (physical - logical) beyond the blocks GC needs in every unit (its reserve, the
/// open blocks and one more): the room deltas may take.
fn delta_space_pages(config: &Config) -> u64 {
    let g = &config.device.geometry;
    let needed = config.spare_blocks_needed(STREAMS.len() as u32, 0) * g.data_pages_per_block() as u64;
    (g.data_pages() as u64 - config.device.logical_pages() as u64).saturating_sub(needed)
}

pub struct DeltaFtl {
    map: DeltaMap,
    blocks: BlockManager,
    content: ContentModel,
    /// Real content locality from the trace's fingerprints (`trace_content`).
    trace_content: Option<TraceContent>,
    bypass: Option<Bypass>,
    /// LPNs a read found read-hot in delta form, with the version read: merged at the next write
    /// (a background program, off the read's path).
    pending_merges: Vec<(Lpn, u32)>,
    /// Valid delta pages allowed (`dla_space_share` of the spare pages).
    dla_page_limit: usize,
    params: DeltaFtlParams,
    logical_pages: u64,
    page_bytes: u32,
}

impl DeltaFtl {
    pub fn new(config: &Config, params: DeltaFtlParams) -> Self {
        let logical = config.device.logical_pages();
        let g = &config.device.geometry;
        let latency = &config.device.latency;
        // More entries than logical pages would never fill.
        let hotness = HotnessTracker::new(logical, params.cache_entries.min(logical), params.protected_fraction);
        let bus_us = latency.bus_ns_per_byte * g.page_size as f64 / 1000.0;
        let cpu = &config.device.cpu;
        let encode_us = cpu.compress_cycles as f64 / cpu.frequency_mhz;
        let bound = overhead_bound(latency.read_us, bus_us, encode_us, latency.program_us);
        DeltaFtl {
            map: DeltaMap::new(logical, g.page_size, hotness, params.hot_threshold),
            blocks: BlockManager::new(config, STREAMS).with_garbage_resolution(GARBAGE_RESOLUTION),
            content: ContentModel { mean: params.compression_mean, sigma: params.compression_sigma, seed: config.seed },
            trace_content: params.trace_content.then(|| TraceContent::new(logical)),
            bypass: params.bypass.then(|| Bypass::new(bound, params.bypass_window, params.bypass_hysteresis)),
            pending_merges: Vec::new(),
            dla_page_limit: (delta_space_pages(config) as f64 * params.dla_space_share) as usize,
            logical_pages: logical as u64,
            page_bytes: g.page_size,
            params,
        }
    }

    pub fn build(config: &Config) -> Result<Box<dyn Ftl>> {
        let params: DeltaFtlParams = ftl_params(config, "delta")?;
        config.check_spare_blocks(STREAMS.len() as u32, 0)?;
        Ok(Box::new(DeltaFtl::new(config, params)))
    }

    /// The compression ratio of the delta `version` of `lpn` makes and its compressed size, or
    /// `None` if it does not compress into a page (ratio 1, or too large for a page with its
    /// header). `unchanged`: the content is the old version's, so the delta is empty.
    fn delta_bytes(&self, lpn: Lpn, version: u32, unchanged: bool) -> (f64, Option<u32>) {
        if unchanged {
            return (0.0, Some(0));
        }
        let ratio = self.content.ratio(lpn.get(), version);
        let bytes = (ratio * self.page_bytes as f64).ceil() as u32;
        (ratio, (ratio < 1.0 && self.map.temp.fits_a_page(bytes)).then_some(bytes))
    }

    /// Merges the read-hot pages recent reads found in delta form, if still in that form.
    fn run_pending_merges(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        for (lpn, version) in std::mem::take(&mut self.pending_merges) {
            if self.map.delta_of(lpn).is_some_and(|d| d.version == version) {
                self.map.merge_after_read(&mut self.blocks, lpn, ctx)?;
            }
        }
        Ok(())
    }

    /// The periodic scan (`cold_scan_every`): merges every LPN in delta form that is no longer
    /// write-hot (or is read-hot), in LPN order: read the old version and the delta, decompress,
    /// program the original.
    fn scan_cold_deltas(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        // A merge (or the collection it runs) only takes LPNs out of delta form.
        for lpn in self.map.lpns_in_delta() {
            if self.map.in_delta(lpn) && map::wants_merge(self.map.hotness.counts(lpn), self.params.hot_threshold) {
                self.map.merge_cold(&mut self.blocks, lpn, ctx)?;
            }
        }
        Ok(())
    }
}

impl Ftl for DeltaFtl {
    fn name(&self) -> &'static str {
        "delta"
    }

    /// The PMT entry, DMT bucket and hotness slot first; then the old version's page state, the
    /// delta page's accounting and the hotness counts.
    fn prefetch(&self, lpn: Lpn, stage: Prefetch, flash: &FlashArray) -> Option<Ppn> {
        let entry = self.map.pmt.get(lpn.index())?;
        match stage {
            Prefetch::Map => {
                crate::mem::prefetch(entry);
                self.map.prefetch_delta(lpn);
                self.map.hotness.prefetch(lpn, false);
                None
            }
            Prefetch::Pages => {
                self.map.hotness.prefetch(lpn, true);
                self.map.prefetch_delta_page(lpn);
                let ppn = (*entry)?;
                self.blocks.prefetch_page(ppn, flash);
                Some(ppn)
            }
        }
    }

    fn read(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<Option<Ppn>> {
        let Some(base) = self.map.pmt[lpn.index()] else { return Ok(None) };
        self.map.stats.reads += 1;
        let counts = self.map.hotness.read(lpn);
        ctx.read(base, Purpose::Host)?;
        if let Some(delta) = self.map.delta_of(lpn) {
            self.map.stats.delta_reads += 1;
            match delta.page {
                Some(page) => {
                    ctx.read(page, Purpose::Host)?;
                    ctx.compute(CpuTask::Decompress, Purpose::Host, page)?;
                }
                None => {
                    self.map.stats.buffered_delta_reads += 1;
                    ctx.compute(CpuTask::Decompress, Purpose::Host, base)?;
                }
            }
            if counts.reads >= self.params.hot_threshold {
                self.pending_merges.push((lpn, delta.version));
            }
        }
        Ok(Some(base))
    }

    fn host_content(&mut self, lpn: Lpn, fingerprint: Option<u64>) {
        if let Some(content) = self.trace_content.as_mut() {
            content.host_wrote(lpn.get(), fingerprint);
        }
    }

    fn write(&mut self, lpn: Lpn, version: u32, ctx: &mut FtlCtx) -> Result<()> {
        self.run_pending_merges(ctx)?;
        self.map.stats.writes += 1;
        let every = self.params.cold_scan_every as u64;
        if every != 0 && self.map.stats.writes.is_multiple_of(every) {
            self.scan_cold_deltas(ctx)?;
        }
        let in_delta = self.map.in_delta(lpn);
        let unchanged = self.trace_content.as_mut().is_some_and(|c| c.ftl_writes(lpn.get(), in_delta));
        let counts = self.map.hotness.write(lpn);
        let threshold = self.params.hot_threshold;
        let candidate = counts.writes >= threshold && counts.reads < threshold && self.map.pmt[lpn.index()].is_some();
        if candidate {
            let (ratio, bytes) = self.delta_bytes(lpn, version, unchanged);
            let bypassing = self.bypass.as_mut().is_some_and(|b| {
                b.observe(ratio);
                b.bypassing()
            });
            match bytes {
                None => self.map.stats.incompressible += 1,
                Some(_) if bypassing => self.map.stats.bypassed += 1,
                Some(_) if self.map.delta_pages() >= self.dla_page_limit => self.map.stats.space_limited += 1,
                Some(bytes) => {
                    // Encoding reads the old version, then compresses new XOR old.
                    let base = self.map.pmt[lpn.index()].expect("a candidate has an old version");
                    ctx.read(base, Purpose::Host)?;
                    ctx.compute(CpuTask::Compress, Purpose::Host, base)?;
                    self.map.append(&mut self.blocks, lpn, version, bytes, true, Purpose::Host, ctx)?;
                    self.map.stats.delta_writes += 1;
                    self.map.stats.empty_deltas += (bytes == 0) as u64;
                    self.map.stats.delta_bytes += bytes as u64;
                    return Ok(());
                }
            }
        }
        let unit = self.blocks.host_unit(DATA, lpn);
        self.map.write_original(&mut self.blocks, lpn, version, unit, true, Purpose::Host, ctx)?;
        self.map.stats.pma_pages += 1;
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn, ctx: &mut FtlCtx) -> Result<()> {
        if self.map.in_delta(lpn) {
            self.map.drop_delta(&mut self.blocks, lpn, true, ctx)?;
        }
        if let Some(old) = self.map.pmt[lpn.index()].take() {
            self.map.invalidate_base(&mut self.blocks, old, ctx)?;
        }
        Ok(())
    }

    fn lookup(&self, lpn: Lpn, _: &FlashArray) -> Option<Ppn> {
        self.map.pmt[lpn.index()]
    }

    fn delta_of(&self, lpn: Lpn) -> Option<DeltaAt> {
        self.map.delta_at(lpn)
    }

    fn collect_in_background(&mut self, unit: u32, ctx: &mut FtlCtx) -> Result<bool> {
        self.blocks.collect_in_background(unit, &mut self.map, ctx)
    }

    fn takes_page_layout(&self) -> bool {
        true
    }

    fn adopt_page_layout(&mut self, layout: PageLayout, ctx: &mut FtlCtx) -> Result<()> {
        self.blocks.rebuild(ctx.flash, |ppn, spare| layout.is_live(ppn, spare));
        self.map.pmt = layout.into_map();
        Ok(())
    }

    /// The Temp Buffer is capacitor-backed: its deltas (and any batch a commit was writing) go
    /// to delta pages.
    fn flush_on_power_loss(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.pending_merges.clear();
        for entry in self.map.temp.drain_all().into_iter().flatten() {
            let lpn = Lpn::new(entry.lpn);
            if self.map.delta_of(lpn).is_some_and(|d| d.page.is_none() && d.version == entry.version) {
                self.map.append(&mut self.blocks, lpn, entry.version, entry.bytes, false, Purpose::Host, ctx)?;
            }
        }
        // Deltas a collection those commits ran re-appended.
        while !self.map.temp.is_empty() {
            self.map.commit(&mut self.blocks, Purpose::Host, ctx)?;
        }
        Ok(())
    }

    /// Reads every page's spare area (Data pages: newest version per LPN, as PFTL) and every
    /// delta page's header; an LPN whose newest delta is newer than its newest page is in delta
    /// form against that page.
    fn recover(&mut self, ctx: &mut FtlCtx) -> Result<()> {
        self.map.clear();
        self.pending_merges.clear();
        if let Some(b) = self.bypass.as_mut() {
            b.reset();
        }
        let logical = self.logical_pages as usize;
        let (mut page_version, mut delta_newest) = (vec![0u32; logical], vec![(0u32, None::<Ppn>, 0u32); logical]);
        let mut delta_pages = Vec::new();
        let mut last_seq = 0;
        let g = ctx.flash.geometry().clone();
        for pbn in g.blocks() {
            if ctx.probe_spare(g.first_page(pbn)).is_none() {
                continue;
            }
            for ppn in g.pages_of(pbn) {
                // An erased page ends the block; one a power loss cut fails its ECC, and the
                // Temp Buffer's flush may have written after it.
                let Some(spare) = ctx.probe_spare(ppn) else {
                    if ctx.flash.is_corrupt(ppn) {
                        continue;
                    }
                    break;
                };
                match spare.kind {
                    PageKind::Data => {
                        let lpn = spare.logical as usize;
                        if self.map.pmt[lpn].is_none() || spare.version > page_version[lpn] {
                            page_version[lpn] = spare.version;
                            self.map.pmt[lpn] = Some(ppn);
                        }
                    }
                    PageKind::Delta => {
                        ctx.read(ppn, Purpose::Recovery)?; // the header
                        last_seq = last_seq.max(spare.version);
                        delta_pages.push(ppn);
                        for e in ctx.flash.deltas(ppn) {
                            let newest = &mut delta_newest[e.lpn as usize];
                            if e.version > newest.0 {
                                *newest = (e.version, Some(ppn), e.bytes);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        self.map.set_next_page_seq(last_seq + 1);
        for (lpn, &(version, page, bytes)) in delta_newest.iter().enumerate() {
            if let (Some(_), Some(page)) = (self.map.pmt[lpn], page) {
                if version > page_version[lpn] {
                    let delta = map::Delta { page: Some(page), version, bytes };
                    self.map.restore_delta(Lpn::new(lpn as u32), delta);
                }
            }
        }
        let map = &self.map;
        let live_delta = |ppn: Ppn, lpn: u32, version: u32| {
            map.delta_of(Lpn::new(lpn)).is_some_and(|d| d.page == Some(ppn) && d.version == version)
        };
        let mut tracked = Vec::new();
        for &ppn in &delta_pages {
            let (mut live, mut invalid) = (0, 0);
            for e in ctx.flash.deltas(ppn) {
                if live_delta(ppn, e.lpn, e.version) {
                    live += 1;
                } else {
                    invalid += e.bytes + HEADER_ENTRY_BYTES;
                }
            }
            if live > 0 {
                tracked.push((ppn, live, invalid));
            }
        }
        let pmt = &self.map.pmt;
        self.blocks.rebuild(ctx.flash, |ppn, spare| match spare.kind {
            PageKind::Data => pmt[spare.logical as usize] == Some(ppn),
            PageKind::Delta => tracked.binary_search_by_key(&ppn, |t| t.0).is_ok(),
            _ => false,
        });
        for (ppn, live, invalid) in tracked {
            self.map.track_recovered_page(&mut self.blocks, ppn, live, invalid, ctx)?;
        }
        Ok(())
    }

    fn sram(&self) -> SramBreakdown {
        vec![
            SramItem { structure: "PMT (flag + 31-bit PPA per logical page)".into(), bytes: self.logical_pages * 4 },
            SramItem {
                structure: "DMT (old PPA -> delta PPA, at most one per logical page)".into(),
                bytes: self.logical_pages * 8,
            },
            SramItem {
                structure: "SLRU mapping cache counts (LPA + read and write counts)".into(),
                bytes: self.params.cache_entries.min(self.logical_pages as u32) as u64 * 8,
            },
            SramItem { structure: "Temp Buffer (one page)".into(), bytes: self.page_bytes as u64 },
            self.blocks.validity_sram(),
        ]
    }

    fn state_bytes(&self) -> usize {
        self.map.state_bytes() + self.blocks.state_bytes() + self.trace_content.as_ref().map_or(0, |c| c.state_bytes())
    }

    fn check(&self, flash: &FlashArray) -> std::result::Result<(), String> {
        self.map.check(flash)
    }

    fn delta_stats(&self) -> Option<crate::metrics::DeltaStats> {
        let victims = self.blocks.gc_stats().victims;
        Some(crate::metrics::DeltaStats {
            gc_victims_dla: victims[PageKind::Delta as usize],
            gc_victims_pma: victims[PageKind::Data as usize],
            ..self.map.stats
        })
    }

    fn blocks(&self) -> &BlockManager {
        &self.blocks
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.params).expect("params serialise")
    }
}

#[cfg(test)]
mod tests;
