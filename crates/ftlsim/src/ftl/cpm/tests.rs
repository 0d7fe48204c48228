//! CPM and K-CPM: paper 004's worked examples (Figs. 3 to 7, spec Part D), Eq. 2 by hand, K = 1
//! against CPM, a forced K-InterGC, recovery, SRAM and the errors of bad parameters.

use super::gc::{Choice, Recipient};
use super::*;
use crate::check::check_invariants;
use crate::config::ConfigBuilder;
use crate::flash::{OpKind, OpLog};
use crate::metrics::CacheStats;

/// 1 die, 1 plane, `blocks` blocks of 4 pages of 32 bytes (8 map entries per translation page),
/// `logical` pages, paper 004's latencies, every map page cached, `sets` last.
fn config(blocks: u32, logical: u32, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new();
    let base = [
        "device.geometry.planes_per_die=1".to_string(),
        format!("device.geometry.blocks_per_plane={blocks}"),
        "device.geometry.pages_per_block=4".into(),
        "device.geometry.page_size=32".into(),
        "device.geometry.sector_size=32".into(),
        "device.geometry.spare_size=16".into(),
        "device.geometry.spare_usable=16".into(),
        format!("device.logical_pages={logical}"),
        "device.latency.read_us=60".into(),
        "device.latency.program_us=800".into(),
        "device.latency.erase_us=1500".into(),
        "gc.free_blocks_low=1".into(),
    ];
    for set in base.iter().map(String::as_str).chain(sets.iter().copied()) {
        b = b.set(set).unwrap();
    }
    b.build().unwrap()
}

/// A scheme driven page by page, with the versions the oracle would give.
struct Rig {
    flash: FlashArray,
    ops: OpLog,
    cache: CacheStats,
    ftl: Cpm,
    versions: Vec<u32>,
    mapped: Vec<bool>,
    logical: u32,
}

impl Rig {
    fn new(name: &'static str, config: &Config) -> Rig {
        let params = params_of(config, name).unwrap();
        let ftl = Cpm::new(config, name, &params, serde_json::Value::Null).unwrap();
        Rig {
            flash: FlashArray::new(&config.device.geometry, config.device.program_order),
            ops: OpLog::new(),
            cache: CacheStats::default(),
            ftl,
            versions: vec![0; config.device.logical_pages() as usize],
            mapped: vec![false; config.device.logical_pages() as usize],
            logical: config.device.logical_pages(),
        }
    }

    fn write(&mut self, lpns: impl IntoIterator<Item = u32>) {
        for lpn in lpns {
            self.versions[lpn as usize] += 1;
            self.mapped[lpn as usize] = true;
            let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
            self.ftl.write(Lpn::new(lpn), self.versions[lpn as usize], &mut ctx).unwrap();
        }
    }

    fn trim(&mut self, lpns: impl IntoIterator<Item = u32>) {
        for lpn in lpns {
            self.mapped[lpn as usize] = false;
            let mut ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
            self.ftl.trim(Lpn::new(lpn), &mut ctx).unwrap();
        }
    }

    /// Whether the clusters may take blocks from the free pool (off: as if it were empty).
    fn new_blocks(&mut self, allowed: bool) {
        self.ftl.floor = if allowed { 3 } else { usize::MAX };
    }

    /// Where an LPN lives: (block, offset).
    fn place_of(&self, lpn: u32) -> (Pbn, u32) {
        let ppn = self.ftl.lookup(Lpn::new(lpn), &self.flash).expect("mapped");
        let g = self.flash.geometry();
        (g.block_of(ppn), g.page_offset(ppn))
    }

    /// The cluster holding an LPN's page.
    fn saved(&self, lpn: u32) -> u32 {
        self.ftl.clusters.holder(self.place_of(lpn).0).unwrap()
    }

    /// The LPNs of a block's valid pages, in offset order.
    fn valid_lpns(&self, pbn: Pbn) -> Vec<u32> {
        let g = self.flash.geometry();
        g.pages_of(pbn)
            .filter(|&p| self.ftl.blocks.is_valid(p, &self.flash))
            .map(|p| self.flash.spare_unchecked(p).logical)
            .collect()
    }

    fn stats(&self) -> ClusterStats {
        self.ftl.blocks.gc_stats().clusters.unwrap()
    }

    fn choose(&mut self, c: u32) -> Option<Choice> {
        let ctx = FtlCtx { flash: &mut self.flash, ops: &mut self.ops, cache: &mut self.cache };
        self.ftl.choose(c, &ctx)
    }

    /// The shared invariants, the scheme's checks, and every LPN holding its newest version.
    fn assert_consistent(&self) {
        check_invariants(&self.ftl, &self.flash, self.logical, 0).unwrap();
        for lpn in 0..self.logical {
            let found = self.ftl.lookup(Lpn::new(lpn), &self.flash).map(|p| self.flash.spare_unchecked(p).version);
            assert_eq!(found, self.mapped[lpn as usize].then_some(self.versions[lpn as usize]), "LPN {lpn}");
        }
    }
}

/// Clusters of 2 logical blocks (8 LPNs) holding up to `max` blocks.
fn small(blocks: u32, logical: u32, max: u32, sets: &[&str]) -> Config {
    let mut all = vec!["ftl.cpm.cluster_blocks=2".to_string(), format!("ftl.cpm.max_blocks={max}")];
    all.extend(sets.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    config(blocks, logical, &all)
}

fn small_k(blocks: u32, logical: u32, max: u32, k: u32) -> Config {
    let sets =
        ["ftl.kcpm.cluster_blocks=2".to_string(), format!("ftl.kcpm.max_blocks={max}"), format!("ftl.kcpm.k={k}")];
    config(blocks, logical, &sets.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Fig. 5: S_C = 2, N_B(C0) = 3, N_B(C2) = 2, and P0 in B3 at page index 0.
#[test]
fn figure_5_clusters_own_block_groups() {
    let mut r = Rig::new("cpm", &small(32, 24, 4, &[]));
    assert_eq!(r.ftl.reserve, Some(Pbn::new(0)), "the GC block is reserved first");
    r.write(0..8); // C0's logical blocks fill B1 and B2
    r.write([0]); // an update: C0 has no free page, so it gets a third block
    r.write(16..24); // C2
    assert_eq!(r.ftl.clusters.blocks(0), [Pbn::new(1), Pbn::new(2), Pbn::new(3)]);
    assert_eq!(r.ftl.clusters.blocks(2), [Pbn::new(4), Pbn::new(5)]);
    assert_eq!(r.ftl.clusters.n_blocks(1), 0);
    assert_eq!(r.place_of(0), (Pbn::new(3), 0), "P0 is in B3 at PI 0");
    assert_eq!((r.ftl.clusters.cic(0), r.ftl.clusters.free(0), r.ftl.clusters.cic(2)), (1, 3, 0));
    assert_eq!(r.ftl.clusters.fill(Pbn::new(3)), 1);
    r.assert_consistent();
}

/// Fig. 6(a): C0 holds N_Bmax blocks, so its GC is an IntraGC; the victim is the block with the
/// most invalid pages, its valid page goes to the reserved block, which joins C0 and takes the
/// write; the erased victim is the new reserved block.
#[test]
fn figure_6a_intra_gc() {
    let mut r = Rig::new("cpm", &small(32, 24, 3, &[]));
    let b8 = r.ftl.reserve.unwrap();
    r.write(0..8); // B1 = P0..P3, B2 = P4..P7
    r.write([0, 1, 2, 4]); // B3: three pages of B1 and one of B2 updated
    let (b0, b1, b2) = (Pbn::new(1), Pbn::new(2), Pbn::new(3));
    assert_eq!((r.valid_lpns(b0), r.valid_lpns(b1)), (vec![3], vec![5, 6, 7]));
    assert!(matches!(r.choose(0), Some(Choice::Intra(plan)) if plan.victim == b0 && plan.valid == 1));
    r.write([5]);
    assert_eq!(r.stats().intra_gcs, 1);
    assert_eq!((r.flash.erase_count(b0), r.ftl.reserve), (1, Some(b0)), "B0 is erased and reserved");
    assert_eq!(r.valid_lpns(b8), [3, 5], "P3 was copied into B8, which took the write");
    assert_eq!(r.ftl.clusters.blocks(0), [b1, b2, b8], "B8 is C0's block now");
    assert_eq!(r.ops.count(OpKind::Program, Purpose::Gc), 1);
    assert_eq!(r.ops.count(OpKind::Erase, Purpose::Gc), 1);
    r.assert_consistent();
}

/// Fig. 6(b): C0 has room for a block but the pool has none and C0 no garbage: InterGC takes
/// the cluster with the largest CIC (C1), picks B4 and B5 (fewest valid pages first, until a
/// whole block is freed), copies P12, P8 and P9 into the reserved block B9, which joins C1; one
/// erased victim goes to C0, the other is reserved.
#[test]
fn figure_6b_inter_gc() {
    let mut r = Rig::new("cpm", &small(32, 24, 4, &[]));
    let b9 = r.ftl.reserve.unwrap();
    r.write(0..16); // C0: B1, B2; C1: B3 = P8..P11, B4 = P12..P15
    let (b4, b5) = (Pbn::new(3), Pbn::new(4));
    r.trim([10, 11, 13, 14, 15]);
    assert_eq!((r.valid_lpns(b4), r.valid_lpns(b5)), (vec![8, 9], vec![12]));
    r.new_blocks(false);
    let Some(Choice::Inter(plan)) = r.choose(0) else { panic!("InterGC expected") };
    assert_eq!(
        (plan.cluster, plan.victims.as_slice(), plan.valid, plan.recipient),
        (1, &[b5, b4][..], 3, Recipient::Target)
    );
    r.write([0]);
    assert_eq!((r.stats().inter_gcs, r.stats().intra_gcs), (1, 0));
    assert_eq!(r.valid_lpns(b9), [12, 8, 9], "P12, P8, P9 copied into B9");
    assert_eq!(r.ftl.clusters.holder(b9), Some(1), "B9 joins the victim cluster");
    assert_eq!((r.flash.erase_count(b4), r.flash.erase_count(b5)), (1, 1));
    assert_eq!(r.place_of(0), (b5, 0), "the first freed block goes to C0 and takes the write");
    assert_eq!(r.ftl.reserve, Some(b4), "the other is reserved");
    assert_eq!(r.ftl.clusters.cic(1), 0);
    r.assert_consistent();
}

/// Fig. 4: a cluster of two logical blocks with four data blocks, equally filled with valid
/// and invalid pages and no free page: CPM collects one victim (the block with one valid page),
/// copies one page and erases one block, and the block the copy went to takes the incoming data
/// (Superblock FTL would merge both data blocks into a new one and erase two).
#[test]
fn figure_4_one_victim_one_copy_one_erase() {
    let mut r = Rig::new("cpm", &small(32, 16, 4, &[]));
    let b4 = r.ftl.reserve.unwrap();
    r.write(0..8);
    r.write([0, 1, 2, 4]);
    r.write([0, 1, 4, 5]);
    let (b0, b1, b2, b3) = (Pbn::new(1), Pbn::new(2), Pbn::new(3), Pbn::new(4));
    assert_eq!(r.ftl.clusters.blocks(0), [b0, b1, b2, b3]);
    let valid: Vec<usize> = [b0, b1, b2, b3].iter().map(|&b| r.valid_lpns(b).len()).collect();
    assert_eq!((valid, r.ftl.clusters.free(0)), (vec![1, 2, 1, 4], 0));
    r.write([6]);
    assert_eq!(r.ops.count(OpKind::Erase, Purpose::Gc), 1, "one erase");
    assert_eq!(r.ops.count(OpKind::Program, Purpose::Gc), 1, "one copy");
    assert_eq!(r.flash.erase_count(b0), 1, "B0 is the victim");
    assert_eq!(r.valid_lpns(b4), [3, 6], "B4 holds the copy and takes the incoming write");
    r.assert_consistent();
}

/// Fig. 7 (K = 3): P10 (owner C1) is saved in C0, so are pages of C2, and C0's P2 and P3 are
/// saved in C2: N_alpha(C0) = 3 (C0, C1, C2) and N_delta(C0) = 2 (C0 and C2). The association
/// ends with the last adopted page.
#[test]
fn figure_7_associated_and_distributed_clusters() {
    let mut r = fig7();
    assert_eq!((r.saved(10), r.saved(20), r.saved(2), r.saved(3)), (0, 0, 2, 2));
    let c = &r.ftl.clusters;
    assert_eq!(c.alpha(0), 3, "N_alpha(C0) counts C0 itself, C1 and C2");
    assert_eq!(1 + c.distributed(0).len(), 2, "N_delta(C0): C0 itself and C2");
    assert_eq!((c.associated(0), c.distributed(0)), (&[(1, 1), (2, 1)][..], &[2][..]));
    assert_eq!((c.adopted_at(0, 2), c.adopted, c.associations), (Some(2), 4, 3));
    assert_eq!((r.stats().adopted_writes, r.stats().new_distributed_clusters), (4, 3));
    r.assert_consistent();
    // P10 updated (a block is free again): C1's only page in C0 is gone, and so is the association.
    r.new_blocks(true);
    r.write([10]);
    assert_eq!(r.saved(10), 1);
    assert_eq!((r.ftl.clusters.alpha(0), r.ftl.clusters.distributed(1)), (2, &[][..]));
    r.assert_consistent();
}

/// The state of Fig. 7, built by writes (clusters of 8 LPNs, N_Bmax = 4, K = 3).
fn fig7() -> Rig {
    let mut r = Rig::new("kcpm", &small_k(32, 24, 4, 3));
    r.write([0, 1]); // C0's block has two free pages
    r.write([8, 9, 11, 12, 16, 17, 18, 19]); // C1's and C2's blocks are full
    r.new_blocks(false);
    r.write([10]); // case 4: C0 has the most free pages
    r.write([20]); // case 4 again: C0 adopts a page of C2 as well
    r.new_blocks(true);
    r.write([21]); // case 2: C2 gets a second block
    r.new_blocks(false);
    r.write([2]); // case 4: C2 has the most free pages
    r.write([3]); // case 3: C2 is a DC of C0 with free pages
    r
}

/// Recovery rebuilds the clusters' blocks, CIC and free pages from the spare areas, and the CAMT
/// and CDMT from the recovered map (owner from the LPN, saved cluster from the block).
#[test]
fn recovery_rebuilds_the_clusters_and_associations_from_spare_areas() {
    let mut r = fig7();
    r.trim([17]);
    let snapshot = |r: &Rig| {
        let c = &r.ftl.clusters;
        (0..c.count)
            .map(|x| {
                let mut blocks = c.blocks(x).to_vec();
                blocks.sort();
                (blocks, c.cic(x), c.free(x), c.associated(x).to_vec(), c.distributed(x).to_vec())
            })
            .collect::<Vec<_>>()
    };
    let before = snapshot(&r);
    let mut ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
    r.ftl.recover(&mut ctx).unwrap();
    assert!(r.ops.count(OpKind::SpareRead, Purpose::Recovery) > 0);
    // The trim lived in SRAM: P17 is back, and counts again in C2's CIC.
    r.mapped[17] = true;
    let mut expected = before;
    expected[2].1 -= 1;
    assert_eq!(snapshot(&r), expected);
    r.assert_consistent();
}

/// Fig. 3's point on CPM: a victim holding one owner's pages needs only that owner's PMT page,
/// which the host write that ran GC has just loaded; a K-CPM victim holding another owner's
/// adopted pages loads that owner's page too (GC map loading grows with N_alpha).
#[test]
fn figure_3_gc_map_loading_follows_the_owners_in_the_victim() {
    // Two PMT pages cached; a cluster's 8 LPNs are one PMT page.
    for (name, adopted) in [("cpm", false), ("kcpm", true)] {
        let cfg = config(
            32,
            32,
            &[
                &format!("ftl.{name}.cluster_blocks=2"),
                &format!("ftl.{name}.max_blocks=3"),
                &format!("ftl.{name}.pmt_cache_bytes=64"),
            ],
        );
        let mut r = Rig::new(name, &cfg);
        r.write([0, 1]);
        r.write(8..12);
        r.new_blocks(false);
        if adopted {
            r.write([12, 13]); // C1 has no free page: they go to C0's block
        } else {
            r.write([2, 3]);
        }
        r.new_blocks(true);
        r.write(16..24); // C2 and C3's PMT pages fill the cache
        assert_eq!(r.ftl.map.pmt.len(), 2);
        r.new_blocks(false);
        let gc_before = (r.cache.gc_accesses, r.cache.gc_hits);
        r.write([0]); // C0's block: one invalid page, three to move
        assert_eq!(r.stats().intra_gcs, 1);
        let (accesses, hits) = (r.cache.gc_accesses - gc_before.0, r.cache.gc_hits - gc_before.1);
        assert_eq!((accesses, accesses - hits), (3, adopted as u64), "{name}");
        r.assert_consistent();
    }
}

/// Eq. 2 by hand on a constructed state: C0 (no free page, no free block) can IntraGC its block
/// with two invalid pages, or InterGC C1's two blocks (3 valid pages, CIC 5).
#[test]
fn equation_2_by_hand_picks_the_same_gc_as_the_code() {
    let (t_r, t_w, t_e) = (60.0, 800.0, 1500.0);
    let build = |updates: &[u32], sets: &[&str]| {
        let mut r = Rig::new("cpm", &small(32, 24, 4, sets));
        r.write(0..16);
        r.trim([10, 11, 13, 14, 15]);
        r.write(updates.iter().copied());
        r.new_blocks(false);
        r
    };
    // B1 and B2 each lose two pages.
    let mut r = build(&[0, 4, 1, 5], &[]);
    let intra = 2.0 / (2.0 * (t_w + t_r) + t_e);
    let inter = (2.0 * 4.0 - 3.0) / (3.0 * (t_w + t_r) + 2.0 * t_e);
    let ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
    let a = r.ftl.intra_plan(0, &ctx).unwrap();
    let b = r.ftl.inter_plan(0, &ctx).unwrap();
    assert_eq!((a.victim, a.valid, b.valid, b.victims.len()), (Pbn::new(1), 2, 3, 2));
    assert!((r.ftl.intra_efficiency(&a, &ctx) - intra).abs() < 1e-12);
    assert!((r.ftl.inter_efficiency(&b, &ctx) - inter).abs() < 1e-12);
    assert!(inter > intra && matches!(r.choose(0), Some(Choice::Inter(_))));
    // Counting only the block given (P, spec C3) lowers InterGC's efficiency, still above.
    let mut r = build(&[0, 4, 1, 5], &["ftl.cpm.inter_gc_free_pages=\"one-block\""]);
    let ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
    let b = r.ftl.inter_plan(0, &ctx).unwrap();
    assert!((r.ftl.inter_efficiency(&b, &ctx) - 4.0 / (3.0 * (t_w + t_r) + 2.0 * t_e)).abs() < 1e-12);
    // B1 loses three pages: IntraGC frees 3 pages for one copy and wins.
    let mut r = build(&[0, 1, 2, 4], &[]);
    let intra = 3.0 / ((t_w + t_r) + t_e);
    let ctx = FtlCtx { flash: &mut r.flash, ops: &mut r.ops, cache: &mut r.cache };
    let a = r.ftl.intra_plan(0, &ctx).unwrap();
    assert!((r.ftl.intra_efficiency(&a, &ctx) - intra).abs() < 1e-12 && intra > inter);
    assert!(matches!(r.choose(0), Some(Choice::Intra(plan)) if plan.victim == Pbn::new(1)));
    r.write([6]);
    assert_eq!((r.stats().intra_gcs, r.stats().inter_gcs), (1, 0));
    r.assert_consistent();
}

/// K-InterGC, which the paper never saw: C0 holds N_Bmax blocks of valid pages (its own and
/// C1's), every cluster with room is at K associations, and C0 writes a page for the first
/// time. The association with the fewest adopted pages (C3's three pages in C2) is undone, C3
/// collecting garbage to take them back, and C2 then receives the block an InterGC frees.
#[test]
fn k_inter_gc_frees_an_association_when_no_cluster_can_take_a_block() {
    let mut r = Rig::new("kcpm", &small_k(40, 32, 3, 2));
    r.write([0]);
    r.new_blocks(false);
    r.write([8, 9, 10]); // case 4: C1 (no block) writes into C0's first block
    r.new_blocks(true);
    r.write([1, 2, 3]);
    r.new_blocks(false);
    r.write([11]);
    r.new_blocks(true);
    r.write([4, 5, 6]);
    r.new_blocks(false);
    r.write([12]); // C0: three full blocks, 7 pages of its own and 5 of C1's, all valid
    r.new_blocks(true);
    r.write([13, 14, 15].repeat(4)); // C1: three full blocks of its own, 9 invalid pages
    r.write([16]);
    r.new_blocks(false);
    r.write([24, 25, 26]); // C3 (no block) writes into C2's block: C2 is at K = 2
    r.new_blocks(true);
    r.write([27, 28, 29, 30, 31, 27, 28, 29, 30, 31, 27, 28]); // C3: three full blocks
    let c = &r.ftl.clusters;
    assert_eq!((c.n_blocks(0), c.free(0), c.cic(0), c.alpha(0)), (3, 0, 0, 2));
    assert_eq!((c.n_blocks(1), c.free(1), c.n_blocks(3), c.free(3)), (3, 0, 3, 0));
    assert_eq!((c.n_blocks(2), c.free(2), c.alpha(2), c.adopted_at(3, 2)), (1, 0, 2, Some(3)));
    r.new_blocks(false);
    r.write([7]); // a first write: nothing to reclaim in C0, no cluster can take a block
    let stats = r.stats();
    assert_eq!((stats.k_inter_gcs, stats.inter_gcs), (1, 1));
    assert!(stats.intra_gcs >= 1, "C3 collected garbage to take its pages back");
    assert_eq!((r.saved(24), r.saved(25), r.saved(26)), (3, 3, 3));
    assert_eq!(r.saved(7), 2, "C2 received the freed block and C0's page");
    let c = &r.ftl.clusters;
    assert_eq!((c.associated(2), c.distributed(0)), (&[(0, 1)][..], &[2][..]));
    r.assert_consistent();
}

/// K = 1 is CPM: the same run, operation for operation, under the oracle with power losses.
#[test]
fn kcpm_with_k_1_is_cpm() {
    let reports: Vec<serde_json::Value> = ["cpm", "kcpm"]
        .iter()
        .map(|name| {
            let sets = [
                format!("ftl.{name}.cluster_blocks=4"),
                format!("ftl.{name}.max_blocks=6"),
                format!("ftl.{name}.pmt_cache_bytes=128"),
                format!("ftl.{name}.other_sram_bytes=200"),
                "ftl.kcpm.k=1".into(),
                "check.invariants_every=1".into(),
            ];
            let sets: Vec<&str> =
                sets.iter().map(String::as_str).filter(|s| name == &"kcpm" || !s.contains("kcpm")).collect();
            let cfg = config(96, 256, &sets);
            let mut sim = crate::Simulation::new(&cfg, name).unwrap();
            sim.set_power_loss_points(vec![300, 900]);
            let spec = crate::workload::synthetic::MixedSpec {
                requests: 1500,
                read_fraction: 0.3,
                sequential_fraction: 0.2,
                random_max_pages: 3,
                sequential_request_pages: 4,
                seed: 4,
                ..Default::default()
            };
            let workload = spec.workload(256, 32).unwrap();
            let result = sim.run(workload, &mut |_| {}).unwrap();
            assert!(result.report.clusters.as_ref().unwrap().counts.inter_gcs > 0, "{name}");
            let mut json = serde_json::to_value(&result).unwrap();
            crate::check::golden::strip_machine_fields(&mut json);
            json["report"].clone()
        })
        .collect();
    assert_eq!(reports[0], reports[1]);
}

/// Table I at 32 GB, 8 KB pages, 128 pages per block, S_C = 16 MB, N_Bmax = 32, K = 4, and C7's
/// SRAM: 96 KB of PMT pages and 32 KB for the rest.
#[test]
fn table_1_sizes_and_the_sram_of_section_6() {
    let c = Config::preset("cpm").unwrap();
    let ftl = Cpm::new(&c, "kcpm", &KcpmParams::default(), serde_json::Value::Null).unwrap();
    let t = ftl.blocks.gc_stats().clusters.unwrap().tables;
    assert_eq!((t.pmt_bytes, t.cbmt_bytes, t.camt_bytes, t.cdmt_bytes), (16 << 20, 192 << 10, 32 << 10, 32 << 10));
    let sram = ftl.sram();
    assert_eq!(sram[0].bytes, 96 << 10);
    assert!(sram[0].structure.contains("12 pages"));
    assert_eq!(sram[1].bytes, (2048 + 25) * 4, "GTD: 2048 PMT pages and 25 CBMT pages of 85 rows");
    assert_eq!(sram[2].bytes, 4096, "CIC: 2048 clusters x 2 bytes");
    assert_eq!(sram[..4].iter().map(|s| s.bytes).sum::<u64>(), 128 << 10);
    assert_eq!(ftl.row_capacity(), (32768 - 8292 - 4096) / 96);
    let b = budget(&c, &sizes(&c, "kcpm", &KcpmParams::default().cpm).unwrap());
    assert_eq!((b.floor, b.map_blocks, b.needed), (3, 17 + 1 + 17, 3 + 18 + 1 + 2048));
    let cpm = Cpm::new(&c, "cpm", &params_of(&c, "cpm").unwrap(), serde_json::Value::Null).unwrap();
    let t = cpm.blocks.gc_stats().clusters.unwrap().tables;
    assert_eq!((t.camt_bytes, t.cdmt_bytes), (0, 0));
}

#[test]
fn bad_parameters_are_named() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["ftl.cpm.max_blocks=16"], "ftl.cpm.max_blocks", "must exceed cluster_blocks"),
        (&["ftl.cpm.other_sram_bytes=64"], "ftl.cpm.other_sram_bytes", "cannot hold the GTD"),
        (&["ftl.cpm.pmt_cache_bytes=100"], "ftl.cpm.pmt_cache_bytes", "hold no 8192-byte PMT page"),
        (&["ftl.cpm.k=2"], "ftl.cpm.k", "cpm has no parameter"),
        (&["ftl.kcpm.k=0"], "ftl.kcpm.k", "must be in [1, 1024]"),
        (&["ftl.kcpm.dc_choice=\"last\""], "ftl.kcpm.dc_choice", "expected one of first, most-free"),
        (&["ftl.kcpm.inter_gc_free_pages=3"], "ftl.kcpm.inter_gc_free_pages", "expected one of"),
        (&["device.logical_pages=4231936"], "device.logical_pages", "1 per cluster"),
    ];
    for (sets, field, message) in cases {
        let mut b = ConfigBuilder::new().preset("cpm").unwrap();
        for set in *sets {
            b = b.set(set).unwrap();
        }
        let c = b.build().unwrap();
        let ftl = if field.contains("kcpm") { "kcpm" } else { "cpm" };
        match crate::ftl::build_ftl(ftl, &c) {
            Err(SimError::Config { field: f, message: m }) => {
                assert_eq!(&f, field, "{sets:?}: {m}");
                assert!(m.contains(message), "{sets:?}: {m}");
            }
            Err(e) => panic!("{sets:?}: {e}"),
            Ok(_) => panic!("{sets:?} accepted"),
        }
    }
    // Too many clusters for the spare area's 2-byte cluster number.
    let c = config(80_000, 300_000, &["ftl.cpm.cluster_blocks=1", "ftl.cpm.max_blocks=2"]);
    let err = Cpm::new(&c, "cpm", &params_of(&c, "cpm").unwrap(), serde_json::Value::Null).err().unwrap();
    assert!(matches!(err, SimError::Config { ref field, .. } if field == "ftl.cpm.cluster_blocks"), "{err}");
}
