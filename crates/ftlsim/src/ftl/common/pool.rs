//! The free pool: erased blocks waiting to be written, per allocation unit (a die or a plane).
//! A unit hands out the block erased longest ago, or with `gc.free_block_choice = "least-worn"`
//! the block erased fewest times (ties: the one erased longest ago).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::{AllocationUnit, FreeBlockChoice};
use crate::flash::{Geometry, Pbn};

/// One unit's free blocks.
enum Queue {
    OldestErased(VecDeque<Pbn>),
    /// Min-heap on (erase count, arrival in the pool).
    LeastWorn(BinaryHeap<Reverse<(u32, u64, Pbn)>>),
}

impl Queue {
    fn len(&self) -> usize {
        match self {
            Queue::OldestErased(q) => q.len(),
            Queue::LeastWorn(h) => h.len(),
        }
    }
}

pub struct FreePool {
    /// The allocation unit of every block.
    unit_of: Vec<u32>,
    free: Vec<Queue>,
    /// Blocks put so far: the arrival order that breaks ties between equally worn blocks.
    arrivals: u64,
}

impl FreePool {
    /// A pool holding every block of the device (none erased yet).
    pub fn new(geometry: &Geometry, unit_kind: AllocationUnit, units: u32, choice: FreeBlockChoice) -> Self {
        let unit_of: Vec<u32> = geometry.blocks().map(|b| unit_of_block(geometry, unit_kind, b)).collect();
        let queue = || match choice {
            FreeBlockChoice::OldestErased => Queue::OldestErased(VecDeque::new()),
            FreeBlockChoice::LeastWorn => Queue::LeastWorn(BinaryHeap::new()),
        };
        let mut pool = FreePool { unit_of, free: (0..units).map(|_| queue()).collect(), arrivals: 0 };
        for pbn in geometry.blocks() {
            pool.put(pbn, 0);
        }
        pool
    }

    pub fn units(&self) -> u32 {
        self.free.len() as u32
    }

    #[inline]
    pub fn unit_of(&self, pbn: Pbn) -> u32 {
        self.unit_of[pbn.index()]
    }

    /// The allocation unit of every block, indexed by block.
    pub fn units_of_blocks(&self) -> &[u32] {
        &self.unit_of
    }

    /// Takes the next free block of `unit`.
    #[inline]
    pub fn take(&mut self, unit: u32) -> Option<Pbn> {
        match &mut self.free[unit as usize] {
            Queue::OldestErased(q) => q.pop_front(),
            Queue::LeastWorn(h) => h.pop().map(|Reverse((_, _, pbn))| pbn),
        }
    }

    /// Returns an erased block, erased `erases` times so far, to its unit.
    pub fn put(&mut self, pbn: Pbn, erases: u32) {
        let unit = self.unit_of(pbn);
        self.arrivals += 1;
        match &mut self.free[unit as usize] {
            Queue::OldestErased(q) => q.push_back(pbn),
            Queue::LeastWorn(h) => h.push(Reverse((erases, self.arrivals, pbn))),
        }
    }

    pub fn len(&self, unit: u32) -> usize {
        self.free[unit as usize].len()
    }

    pub fn total(&self) -> usize {
        self.free.iter().map(Queue::len).sum()
    }

    /// Empties every queue (before a rebuild after power loss).
    pub fn clear(&mut self) {
        for queue in &mut self.free {
            match queue {
                Queue::OldestErased(q) => q.clear(),
                Queue::LeastWorn(h) => h.clear(),
            }
        }
    }

    /// Simulator memory of the pool.
    pub fn state_bytes(&self) -> usize {
        let per_block = match self.free.first() {
            Some(Queue::LeastWorn(_)) => 16,
            _ => std::mem::size_of::<Pbn>(),
        };
        self.total() * per_block + self.unit_of.len() * 4
    }
}

/// The allocation units in the order consecutive writes visit them: every die before a second
/// plane of any die, and the dies channel first (dies are numbered so that die `d` sits on
/// channel `d mod channels`), so that consecutive pages land on different channels, then on
/// different chips and dies.
pub fn spread_order(geometry: &Geometry, kind: AllocationUnit) -> Vec<u32> {
    match kind {
        AllocationUnit::Die => (0..geometry.total_dies()).collect(),
        AllocationUnit::Plane => {
            let dies = geometry.total_dies();
            (0..geometry.total_planes()).map(|k| (k % dies) * geometry.planes_per_die + k / dies).collect()
        }
    }
}

fn unit_of_block(geometry: &Geometry, kind: AllocationUnit, pbn: Pbn) -> u32 {
    match kind {
        AllocationUnit::Die => geometry.die_of_block(pbn),
        AllocationUnit::Plane => geometry.plane_of_block(pbn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::flash::Lpn;

    #[test]
    fn consecutive_units_spread_over_channels_then_dies_then_planes() {
        // 2 channels x 2 dies x 2 planes: dies 0 and 2 on channel 0, 1 and 3 on channel 1.
        let g = Geometry { channels: 2, chips_per_channel: 1, dies_per_chip: 2, planes_per_die: 2, ..geometry() };
        assert_eq!(spread_order(&g, AllocationUnit::Die), [0, 1, 2, 3]);
        let planes = spread_order(&g, AllocationUnit::Plane);
        assert_eq!(planes, [0, 2, 4, 6, 1, 3, 5, 7]);
        let channel = |plane: u32| g.channel_of_die(plane / g.planes_per_die);
        assert_eq!(planes.iter().map(|&p| channel(p)).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1, 0, 1]);
    }

    fn geometry() -> Geometry {
        let mut g = Config::preset("mlc8g").unwrap().device.geometry;
        g.planes_per_die = 1;
        g.blocks_per_plane = 4;
        g
    }

    #[test]
    fn oldest_erased_is_a_fifo() {
        let mut pool = FreePool::new(&geometry(), AllocationUnit::Die, 1, FreeBlockChoice::OldestErased);
        let taken: Vec<Pbn> = (0..4).map(|_| pool.take(0).unwrap()).collect();
        assert_eq!(taken, [0, 1, 2, 3]);
        pool.put(Pbn::new(2), 9);
        pool.put(Pbn::new(0), 1);
        assert_eq!((pool.take(0), pool.take(0), pool.take(0)), (Some(Pbn::new(2)), Some(Pbn::new(0)), None));
    }

    #[test]
    fn least_worn_takes_the_fewest_erases_then_the_oldest() {
        let mut pool = FreePool::new(&geometry(), AllocationUnit::Die, 1, FreeBlockChoice::LeastWorn);
        for _ in 0..4 {
            pool.take(0).unwrap();
        }
        for (pbn, erases) in [(0, 5), (1, 2), (2, 7), (3, 2)] {
            pool.put(Pbn::new(pbn), erases);
        }
        let order: Vec<Pbn> = std::iter::from_fn(|| pool.take(0)).collect();
        assert_eq!(order, [1, 3, 0, 2]);
    }

    /// Erase counts of a hot/cold overwrite stream on a small PFTL device.
    fn erase_spread(choice: &str) -> (u32, f64) {
        let config = crate::config::ConfigBuilder::new()
            .set("device.geometry.blocks_per_plane=64")
            .unwrap()
            .set("device.geometry.pages_per_block=16")
            .unwrap()
            .set("device.overprovisioning=0.125")
            .unwrap()
            .set("precondition.mode=\"fill\"")
            .unwrap()
            .set(&format!("gc.free_block_choice=\"{choice}\""))
            .unwrap()
            .build()
            .unwrap();
        let mut sim = crate::Simulation::new(&config, "pftl").unwrap();
        sim.precondition().unwrap();
        let logical = config.device.logical_pages();
        for i in 0..20_000u32 {
            let r = i.wrapping_mul(2_654_435_761);
            let first = if r % 10 < 9 { (r >> 8) % (logical / 10) } else { (r >> 8) % logical };
            let request = crate::host::PageRequest {
                arrival: 0,
                kind: crate::workload::IoKind::Write,
                first: Lpn::new(first),
                pages: 1,
                span: crate::host::SectorSpan::WHOLE,
            };
            sim.serve(request).unwrap();
        }
        let erase = sim.result("w", serde_json::Value::Null, 0.0).unwrap().report.erase_count;
        (erase.max as u32, erase.stddev)
    }

    #[test]
    fn least_worn_narrows_the_spread_of_erase_counts() {
        let (fifo_max, fifo_spread) = erase_spread("oldest-erased");
        let (worn_max, worn_spread) = erase_spread("least-worn");
        assert!(
            worn_max <= fifo_max && worn_spread < fifo_spread,
            "{worn_max} {worn_spread} vs {fifo_max} {fifo_spread}"
        );
    }
}
