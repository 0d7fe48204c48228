//! CPM's garbage collection (paper 004 §IV-B, §V-C; spec C.4, C.6): IntraGC, InterGC and
//! K-CPM's K-InterGC, and Eq. 2's choice between the first two.
//!
//! Eq. 2: eps = N_P_free / (N_P_valid (t_prog + t_read) + N_B_victim t_erase), with IntraGC
//! freeing P - V pages of one victim and InterGC m P - V_tot of m victims (or P, C3); the larger
//! efficiency wins (IntraGC on a tie). `eps_includes_map_cost` adds a read per PMT page of the
//! victims' owner clusters and per CBMT row the GC touches that SRAM does not hold.

use super::{Cpm, InterGcFreePages};
use crate::error::{Result, SimError};
use crate::flash::{BlockPage, Lpn, PageKind, Pbn, Ppn, Purpose, Tpn};
use crate::ftl::common::cache::load;
use crate::ftl::FtlCtx;

/// Who receives the block an InterGC frees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recipient {
    /// The cluster that needs space.
    Target,
    /// One of its distributed clusters with room for a block (K-CPM).
    Distributed(u32),
    /// A new distributed cluster (K-CPM).
    New(u32),
}

/// An InterGC: the victim cluster, its victim blocks (fewest valid pages first), their valid
/// pages, and the recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct InterPlan {
    pub cluster: u32,
    pub victims: Vec<Pbn>,
    pub valid: u32,
    pub recipient: Recipient,
}

/// An IntraGC: the victim block and its valid pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct IntraPlan {
    pub victim: Pbn,
    pub valid: u32,
}

/// What a GC invocation does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Choice {
    Intra(IntraPlan),
    Inter(InterPlan),
}

impl Cpm {
    /// GC for cluster `c`, which needs a page: IntraGC or InterGC by Eq. 2, after a K-InterGC if
    /// neither can run because no cluster can take a freed block (`may_k_inter`).
    pub(super) fn collect(&mut self, c: u32, may_k_inter: bool, ctx: &mut FtlCtx) -> Result<()> {
        self.sample_at_gc(ctx);
        let choice = match self.choose(c, ctx) {
            Some(choice) => choice,
            None if may_k_inter && self.needs_k_inter(c) => {
                self.k_inter_gc(c, ctx)?;
                self.choose(c, ctx).ok_or(SimError::DeviceFull { unit: 0, free: self.blocks.total_free_blocks() })?
            }
            None => return Err(SimError::DeviceFull { unit: 0, free: self.blocks.total_free_blocks() }),
        };
        match choice {
            Choice::Intra(plan) => self.intra_gc(plan, ctx),
            Choice::Inter(plan) => self.inter_gc(c, plan, ctx),
        }
    }

    /// Records the state GC found (remaining space, associativity, adopted pages).
    fn sample_at_gc(&mut self, ctx: &FtlCtx) {
        let ppb = ctx.flash.geometry().pages_per_block as u64;
        let pool: u64 =
            (0..self.blocks.units()).map(|u| self.blocks.free_blocks(u).saturating_sub(self.floor) as u64 * ppb).sum();
        let remaining = self.clusters.total_free + pool;
        let (holding, alpha, adopted) = (self.clusters.holding, self.clusters.holding_alpha, self.clusters.adopted);
        let stats = self.stats();
        stats.invocations += 1;
        stats.remaining_pages += remaining;
        stats.clusters_holding_blocks += holding as u64;
        stats.associativity += alpha;
        stats.adopted_pages += adopted;
    }

    /// The GC to run for `c`, or `None` if neither IntraGC nor InterGC can.
    pub(super) fn choose(&mut self, c: u32, ctx: &FtlCtx) -> Option<Choice> {
        let intra = self.intra_plan(c, ctx);
        let inter = self.inter_plan(c, ctx);
        match (intra, inter) {
            (Some(a), Some(b)) if self.inter_efficiency(&b, ctx) > self.intra_efficiency(&a, ctx) => {
                Some(Choice::Inter(b))
            }
            (Some(a), _) => Some(Choice::Intra(a)),
            (None, Some(b)) => Some(Choice::Inter(b)),
            (None, None) => None,
        }
    }

    /// IntraGC's victim: the full block with the most invalid pages among `c`'s and (K-CPM) its
    /// distributed clusters' (ties: `c`'s first, in row order), from each cluster's block tree.
    pub(super) fn intra_plan(&mut self, c: u32, ctx: &FtlCtx) -> Option<IntraPlan> {
        let candidates: Vec<u32> = std::iter::once(c).chain(self.clusters.distributed(c).iter().copied()).collect();
        let mut best: Option<(u32, Pbn)> = None;
        for d in candidates {
            let Some((pbn, invalid)) = self.clusters.most_invalid_block(d) else { continue };
            if best.is_none_or(|(most, _)| invalid > most) {
                best = Some((invalid, pbn));
            }
        }
        best.map(|(_, victim)| IntraPlan { victim, valid: self.blocks.valid_count(victim, ctx.flash) })
    }

    /// InterGC's plan: the victim cluster with the largest CIC outside `c` and its distributed
    /// clusters that can free a whole block, and who gets the block.
    pub(super) fn inter_plan(&mut self, c: u32, ctx: &FtlCtx) -> Option<InterPlan> {
        let max = self.clusters.max_blocks;
        let known = if self.clusters.n_blocks(c) < max {
            Some(Recipient::Target)
        } else {
            self.clusters
                .distributed(c)
                .iter()
                .find(|&&d| self.clusters.n_blocks(d) < max)
                .map(|&d| Recipient::Distributed(d))
        };
        let mut excluded: Vec<u32> = std::iter::once(c).chain(self.clusters.distributed(c).iter().copied()).collect();
        if known.is_none() && (!self.can_associate() || self.clusters.most_room(&excluded).is_none()) {
            return None;
        }
        let ppb = ctx.flash.geometry().pages_per_block;
        let mut found = None;
        let victim = self.clusters.victim_cluster(&mut excluded, |clusters, y| {
            found = victims_of(clusters.blocks(y), ppb, |b| self.blocks.valid_count(b, ctx.flash));
            found.is_some()
        })?;
        let (victims, valid) = found.expect("the accepted cluster yields a block");
        let recipient = match known {
            Some(r) => r,
            None => {
                let excluded: Vec<u32> =
                    std::iter::once(c).chain(self.clusters.distributed(c).iter().copied()).collect();
                Recipient::New(self.clusters.most_room(&excluded)?)
            }
        };
        Some(InterPlan { cluster: victim, victims, valid, recipient })
    }

    fn cost_us(&self, copies: u32, erases: u32) -> f64 {
        let t = &self.s.times;
        copies as f64 * (t.program_us + t.read_us) + erases as f64 * t.erase_us
    }

    /// Eq. 2 for an IntraGC.
    pub(super) fn intra_efficiency(&self, plan: &IntraPlan, ctx: &FtlCtx) -> f64 {
        let ppb = ctx.flash.geometry().pages_per_block;
        let x = self.clusters.holder(plan.victim).expect("a victim belongs to a cluster");
        let map = self.map_cost_us(&[x]);
        (ppb - plan.valid) as f64 / (self.cost_us(plan.valid, 1) + map)
    }

    /// Eq. 2 for an InterGC.
    pub(super) fn inter_efficiency(&self, plan: &InterPlan, ctx: &FtlCtx) -> f64 {
        let ppb = ctx.flash.geometry().pages_per_block;
        let m = plan.victims.len() as u32;
        let free = match self.s.inter_gc_free_pages {
            InterGcFreePages::Reclaimed => m * ppb - plan.valid,
            InterGcFreePages::OneBlock => ppb,
        };
        let receiving = match plan.recipient {
            Recipient::Target => None,
            Recipient::Distributed(d) | Recipient::New(d) => Some(d),
        };
        let map = self.map_cost_us(&[Some(plan.cluster), receiving].into_iter().flatten().collect::<Vec<_>>());
        free as f64 / (self.cost_us(plan.valid, m) + map)
    }

    /// With `eps_includes_map_cost`: a read for every PMT page of the owners of the pages the
    /// clusters `touched` hold, and for every CBMT row of theirs, that SRAM does not hold.
    fn map_cost_us(&self, touched: &[u32]) -> f64 {
        if !self.s.eps_includes_map_cost {
            return 0.0;
        }
        let store = &self.map.store;
        let mut reads = 0u32;
        for &x in touched {
            reads += !self.map.cbmt_cached(x) as u32;
            let owners = std::iter::once(x).chain(self.clusters.associated(x).iter().map(|&(o, _)| o));
            for owner in owners {
                let lpns = self.clusters.lpns(owner);
                let tps = store.tp_of(Lpn::new(lpns.start)).get()..=store.tp_of(Lpn::new(lpns.end - 1)).get();
                reads += tps.filter(|&tp| !self.map.pmt.contains(Tpn::new(tp))).count() as u32;
            }
        }
        reads as f64 * self.s.times.read_us
    }

    /// IntraGC (Fig. 6(a)): the victim's valid pages go to the reserved block, which joins the
    /// victim's cluster and is written next; the erased victim becomes the reserved block.
    pub(super) fn intra_gc(&mut self, plan: IntraPlan, ctx: &mut FtlCtx) -> Result<()> {
        self.stats().intra_gcs += 1;
        let x = self.clusters.holder(plan.victim).expect("a victim belongs to a cluster");
        let reserve = self.take_reserve(x, ctx)?;
        self.move_valid_pages(plan.victim, &mut vec![reserve], &mut Vec::new(), ctx)?;
        self.erase_victim(plan.victim, ctx)?;
        self.blocks.set_reserved(plan.victim, true, ctx.flash)?;
        self.reserve = Some(plan.victim);
        self.clusters.set_active(x, reserve);
        self.row(x, ctx)
    }

    /// InterGC (Fig. 6(b)): the victims' valid pages go to the reserved block (then to victims
    /// already erased), which joins the victim cluster; of the erased victims left, one goes to
    /// the recipient, one becomes the reserved block (unless the reserved block was not needed),
    /// and the others return to the free pool.
    pub(super) fn inter_gc(&mut self, c: u32, plan: InterPlan, ctx: &mut FtlCtx) -> Result<()> {
        self.stats().inter_gcs += 1;
        let y = plan.cluster;
        let mut destinations = Vec::new();
        let mut erased = Vec::new();
        if plan.valid > 0 {
            destinations.push(self.take_reserve(y, ctx)?);
        }
        for &victim in &plan.victims {
            self.move_valid_pages(victim, &mut destinations, &mut erased, ctx)?;
            self.erase_victim(victim, ctx)?;
            erased.push(victim);
        }
        let mut erased = erased.into_iter();
        let given = erased.next().expect("an InterGC frees a block");
        if self.reserve.is_none() {
            let reserve = erased.next().expect("an InterGC that used the reserved block frees another");
            self.blocks.set_reserved(reserve, true, ctx.flash)?;
            self.reserve = Some(reserve);
        }
        for pbn in erased {
            self.blocks.return_block(pbn, ctx.flash)?;
        }
        let receiver = match plan.recipient {
            Recipient::Target => c,
            Recipient::Distributed(d) => d,
            Recipient::New(e) => {
                self.associate(c, e, ctx)?;
                e
            }
        };
        self.clusters.add_block(receiver, given, 0);
        self.clusters.set_active(receiver, given);
        self.row(y, ctx)?;
        self.row(receiver, ctx)
    }

    /// The reserved block, handed to cluster `x` to receive copies.
    fn take_reserve(&mut self, x: u32, ctx: &FtlCtx) -> Result<Pbn> {
        let reserve = self.reserve.take().ok_or_else(|| SimError::Other("no reserved GC block".into()))?;
        self.blocks.set_reserved(reserve, false, ctx.flash)?;
        self.clusters.add_block(x, reserve, 0);
        Ok(reserve)
    }

    /// Erases a victim whose pages are all invalid, leaving it owned and erased.
    fn erase_victim(&mut self, victim: Pbn, ctx: &mut FtlCtx) -> Result<()> {
        self.clusters.remove_block(victim, ctx.flash.write_pointer(victim));
        self.blocks.erase_owned(victim, Purpose::Gc, ctx)?;
        self.blocks.count_gc_victim(PageKind::Data);
        self.stats().gc_erases += 1;
        Ok(())
    }

    /// Copies every valid page of `victim` into the last of `destinations` (blocks of the
    /// victim's cluster), opening the next erased block of `erased` when it fills.
    fn move_valid_pages(
        &mut self,
        victim: Pbn,
        destinations: &mut Vec<Pbn>,
        erased: &mut Vec<Pbn>,
        ctx: &mut FtlCtx,
    ) -> Result<()> {
        let x = self.clusters.holder(victim).expect("a victim belongs to a cluster");
        let first = ctx.flash.geometry().first_page(victim);
        for offset in 0..ctx.flash.write_pointer(victim) {
            let old = BlockPage { pbn: victim, offset, ppn: first.offset(offset) };
            if !self.blocks.is_valid(old.ppn, ctx.flash) {
                continue;
            }
            if destinations.last().is_none_or(|&d| self.clusters.is_full(d)) {
                let next = erased.pop().ok_or_else(|| SimError::Other("InterGC ran out of erased blocks".into()))?;
                self.clusters.add_block(x, next, 0);
                destinations.push(next);
            }
            let dest = *destinations.last().expect("a destination");
            let new = self.clusters.take_page_in(x, dest, ctx.flash.geometry());
            self.copy(old, new, ctx)?;
        }
        Ok(())
    }

    /// Moves a valid page (GC read and program, same version) and remaps it: a GC access to its
    /// PMT page, loaded if SRAM lacks it (paper 004's map loading during GC). The old page comes
    /// with its block, which the callers know.
    pub(super) fn copy(&mut self, old: BlockPage, new: Ppn, ctx: &mut FtlCtx) -> Result<Lpn> {
        ctx.ops.begin_chain();
        let spare = ctx.read_at(old, Purpose::Gc)?;
        ctx.program(new, PageKind::Data, spare.logical, spare.version, Purpose::Gc)?;
        self.blocks.invalidate(old.ppn, ctx.flash)?;
        self.clusters.invalidated(old.pbn);
        self.blocks.count_gc_move(PageKind::Data);
        let lpn = self.map.store.relocated(spare, old.ppn, new)?.expect("a data page");
        let tp = self.map.store.tp_of(lpn);
        let class = load(&mut self.map, &mut self.blocks, tp, ctx)?;
        ctx.cache.record_gc(class);
        self.map.pmt.set(lpn, Some(new), &self.map.store);
        Ok(lpn)
    }

    /// K-InterGC is the way out (asked when neither IntraGC nor InterGC can run): `c` and its
    /// distributed clusters hold `N_Bmax^C` blocks each, and no other cluster may take the block
    /// an InterGC would free, for want of associations (or of SRAM for one).
    fn needs_k_inter(&mut self, c: u32) -> bool {
        let max = self.clusters.max_blocks;
        let excluded: Vec<u32> = std::iter::once(c).chain(self.clusters.distributed(c).iter().copied()).collect();
        self.s.k > 1
            && excluded.iter().all(|&d| self.clusters.n_blocks(d) >= max)
            && (!self.can_associate() || self.clusters.most_room(&excluded).is_none())
    }

    /// K-InterGC (§V-C): the association with the fewest adopted pages, among distributed
    /// clusters with room for a block that `c` is not associated with yet, is undone: its owner's
    /// pages there move to the owner or its other distributed clusters (GC of the owner may run
    /// meanwhile, but neither a new association nor another K-InterGC). The distributed cluster
    /// then has an association to spare and can receive `c`'s block.
    pub(super) fn k_inter_gc(&mut self, c: u32, ctx: &mut FtlCtx) -> Result<()> {
        let max = self.clusters.max_blocks;
        let candidate = (0..self.clusters.count)
            .filter(|&d| d != c && self.clusters.n_blocks(d) < max && !self.clusters.distributed(c).contains(&d))
            .flat_map(|d| self.clusters.associated(d).iter().map(move |&(o, n)| (n, d, o)))
            .filter(|&(_, _, o)| o != c)
            .min();
        let Some((_, d, owner)) = candidate else {
            return Err(SimError::DeviceFull { unit: 0, free: self.blocks.total_free_blocks() });
        };
        self.stats().k_inter_gcs += 1;
        self.dissolve(owner, d, ctx)
    }

    /// Moves the adopted pages of `owner` out of `d` (to the owner or its other distributed
    /// clusters, collecting the owner's garbage if needed), which ends the association.
    pub(super) fn dissolve(&mut self, owner: u32, d: u32, ctx: &mut FtlCtx) -> Result<()> {
        // The owner's PMT pages say where its pages are.
        let std::ops::Range { start: first, end } = self.clusters.lpns(owner);
        let (first_tp, last_tp) = (self.map.store.tp_of(Lpn::new(first)), self.map.store.tp_of(Lpn::new(end - 1)));
        let mut held = Vec::new();
        for tp in Tpn::range(first_tp.get(), last_tp.get() + 1) {
            let class = load(&mut self.map, &mut self.blocks, tp, ctx)?;
            ctx.cache.record_gc(class);
            let range = self.map.store.lpns(tp);
            let lpns = Lpn::range(range.start.get().max(first), range.end.get().min(end));
            held.extend(lpns.filter(|&l| self.in_cluster(l, d, ctx)));
        }
        for lpn in held {
            let (new, saved) = self.place(owner, Some(d), false, ctx)?;
            // GC of the owner during the placement may have moved the page, within `d`.
            let old = self.lookup_cached(lpn).filter(|_| self.in_cluster(lpn, d, ctx)).ok_or_else(|| {
                SimError::Other(format!("K-InterGC lost LPN {lpn}, an adopted page of cluster {owner} in {d}"))
            })?;
            self.copy(ctx.flash.addressing().block_page(old), new, ctx)?;
            self.clusters.unadopt(owner, d);
            if saved != owner {
                self.clusters.adopt(owner, saved);
            }
            self.row(saved, ctx)?;
        }
        self.row(d, ctx)
    }

    /// Where SRAM or the flash copy of its PMT page maps `lpn`.
    fn lookup_cached(&self, lpn: Lpn) -> Option<Ppn> {
        self.map.pmt.get(lpn).unwrap_or_else(|| self.map.store.entry(lpn))
    }

    /// Whether `lpn`'s current page is valid and held by cluster `d`.
    fn in_cluster(&self, lpn: Lpn, d: u32, ctx: &FtlCtx) -> bool {
        self.lookup_cached(lpn).is_some_and(|p| self.blocks.is_valid(p, ctx.flash) && self.saved(p, ctx.flash) == d)
    }
}

/// InterGC's victims among a cluster's `blocks`: by valid pages ascending (ties in row order),
/// the shortest prefix whose valid pages fit in one block fewer than it has (C4), so that a whole
/// block is freed; with its valid pages. `None` if no prefix does.
pub(super) fn victims_of(blocks: &[Pbn], ppb: u32, valid: impl Fn(Pbn) -> u32) -> Option<(Vec<Pbn>, u32)> {
    let mut sorted: Vec<(u32, usize, Pbn)> = blocks.iter().enumerate().map(|(i, &b)| (valid(b), i, b)).collect();
    sorted.sort_unstable();
    let mut total = 0;
    for (m, &(v, _, _)) in sorted.iter().enumerate() {
        total += v;
        if total <= m as u32 * ppb {
            return Some((sorted[..=m].iter().map(|&(_, _, b)| b).collect(), total));
        }
    }
    None
}
