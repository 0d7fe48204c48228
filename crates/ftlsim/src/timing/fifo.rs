//! `fifo-single`: one server, requests served whole in arrival order; a request's service time is
//! the sum of its flash operations (paper 000 §4.2: S_i = max(A_i, C_{i-1}), C_i = S_i + service_i).

use super::{Nanos, OpCosts, PlaneRegisters, Served};
use crate::config::DeviceConfig;
use crate::flash::{Addressing, BlockLayout, FlashOp, Geometry, OpKind, Ppn};

/// The plane of a page (see [`Geometry::plane_of_block`]): one shift and one mask when the
/// geometry's counts are powers of two, as they nearly always are; the geometry's own
/// arithmetic otherwise.
struct Planes {
    /// `(shift, mask)`: the plane is `(ppn >> shift) & mask`.
    shifted: Option<(u32, u32)>,
    addressing: Addressing,
}

impl Planes {
    fn new(g: &Geometry) -> Self {
        let (planes, per_plane, pages) = (g.total_planes(), g.blocks_per_plane, g.pages_per_block);
        let shifted = match g.block_layout {
            BlockLayout::Interleaved if pages.is_power_of_two() && planes.is_power_of_two() => {
                Some((pages.trailing_zeros(), planes - 1))
            }
            BlockLayout::Contiguous if pages.is_power_of_two() && per_plane.is_power_of_two() => {
                Some((pages.trailing_zeros() + per_plane.trailing_zeros(), u32::MAX))
            }
            _ => None,
        };
        Planes { shifted, addressing: g.addressing() }
    }

    #[inline]
    fn of(&self, ppn: Ppn) -> u32 {
        match self.shifted {
            Some((shift, mask)) => (ppn.get() >> shift) & mask,
            None => self.addressing.plane_of_block(self.addressing.block_of(ppn)),
        }
    }
}

pub struct FifoSingle {
    costs: OpCosts,
    planes: Planes,
    pub(crate) registers: PlaneRegisters,
    server_free: Nanos,
    /// Time the server spent serving.
    pub(crate) busy: Nanos,
    /// Of it, time on CPU work (the one server is the controller too).
    pub(crate) cpu_busy: Nanos,
}

impl FifoSingle {
    pub fn new(costs: OpCosts, device: &DeviceConfig) -> Self {
        let registers = PlaneRegisters::new(device.timing.plane_register, device.geometry.total_planes());
        FifoSingle { planes: Planes::new(&costs.geometry), costs, registers, server_free: 0, busy: 0, cpu_busy: 0 }
    }

    /// Service time of one operation, updating the plane registers.
    #[inline]
    fn cost(&mut self, op: &FlashOp) -> Nanos {
        let c = &self.costs;
        // Computed for every kind (a compute task's is unused): a closure deferring it was
        // not inlined, and cost a call per operation.
        let plane = self.planes.of(op.ppn);
        match op.kind {
            OpKind::Read => {
                let hit = self.registers.read(plane, op.ppn);
                if hit {
                    c.page_transfer
                } else {
                    c.read_array + c.page_transfer
                }
            }
            OpKind::SpareRead => {
                let hit = self.registers.read(plane, op.ppn);
                if hit {
                    c.spare_transfer
                } else {
                    c.read_array + c.spare_transfer
                }
            }
            OpKind::Program => {
                self.registers.program(plane, op.ppn);
                c.page_transfer + c.program_array
            }
            OpKind::Erase => {
                self.registers.erase(plane, op.ppn, c.geometry.pages_per_block);
                c.erase
            }
            OpKind::Compute(task) => {
                self.cpu_busy += c.cpu(task);
                c.cpu(task)
            }
        }
    }

    #[inline]
    pub fn serve(&mut self, arrival: Nanos, ops: &[FlashOp]) -> Served {
        let start = arrival.max(self.server_free);
        let service: Nanos = ops.iter().map(|op| self.cost(op)).sum();
        let finish = start + service;
        self.server_free = finish;
        self.busy += service;
        Served { start, finish }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::flash::Ppn;
    use crate::flash::{CpuTask, OpLog, Purpose};

    fn mlc8g() -> FifoSingle {
        let c = Config::preset("mlc8g").unwrap();
        FifoSingle::new(OpCosts::new(&c.device), &c.device)
    }

    const READ: Nanos = 75_000 + 172_800;
    const PROGRAM: Nanos = 172_800 + 1_300_000;

    #[test]
    fn service_is_the_sum_of_operations() {
        let mut t = mlc8g();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(512)); // block 2, plane 0
        log.push(OpKind::Program, Purpose::Host, Ppn::new(256)); // block 1, plane 1
        let s = t.serve(1_000, log.ops());
        assert_eq!(s, Served { start: 1_000, finish: 1_000 + READ + PROGRAM });
    }

    #[test]
    fn a_busy_server_queues_the_next_request() {
        let mut t = mlc8g();
        let mut log = OpLog::new();
        log.push(OpKind::Program, Purpose::Host, Ppn::new(0));
        let first = t.serve(0, log.ops());
        assert_eq!(first.finish, PROGRAM);
        log.clear();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(1024)); // block 4, plane 0: register holds PPN 0, a miss
        let second = t.serve(100_000, log.ops());
        assert_eq!(second.start, PROGRAM, "waits for the server");
        assert_eq!(second.finish, PROGRAM + READ);
        // queueing time = start - arrival, response = finish - arrival
        assert_eq!(second.start - 100_000, PROGRAM - 100_000);
    }

    #[test]
    fn reading_the_page_in_the_plane_register_costs_only_the_transfer() {
        let mut t = mlc8g();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(512)); // plane 0 now holds 512
        log.push(OpKind::Program, Purpose::Host, Ppn::new(256)); // plane 1: does not disturb plane 0
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(512)); // register hit
        log.push(OpKind::SpareRead, Purpose::Gc, Ppn::new(256)); // plane 1 holds 256: spare transfer only
        let s = t.serve(0, log.ops());
        assert_eq!(s.finish, READ + PROGRAM + 172_800 + 8_960);
        assert_eq!(t.registers.hits, 2);
    }

    #[test]
    fn cpu_work_adds_its_time_to_the_one_server() {
        let mut t = mlc8g();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(512));
        log.push(OpKind::Compute(CpuTask::Decompress), Purpose::Host, Ppn::new(512));
        let s = t.serve(0, log.ops());
        // 6,737 cycles at 619 MHz.
        assert_eq!(s.finish, READ + 10_884);
        assert_eq!(t.cpu_busy, 10_884);
    }

    #[test]
    fn planes_by_shifts_agree_with_the_geometry() {
        let mut g = Config::preset("mlc8g").unwrap().device.geometry;
        for (layout, pages, blocks) in [
            (BlockLayout::Interleaved, 256, 2048),
            (BlockLayout::Contiguous, 256, 2048),
            (BlockLayout::Interleaved, 384, 2048),
            (BlockLayout::Contiguous, 256, 1000),
        ] {
            (g.block_layout, g.pages_per_block, g.blocks_per_plane) = (layout, pages, blocks);
            let planes = Planes::new(&g);
            let shifted = pages.is_power_of_two() && blocks.is_power_of_two();
            assert_eq!(planes.shifted.is_some(), shifted, "{layout:?} {pages} {blocks}");
            for ppn in (0..g.total_pages()).step_by(97).chain([g.total_pages() - 1]) {
                let ppn = Ppn::new(ppn);
                assert_eq!(planes.of(ppn), g.plane_of_block(g.block_of(ppn)), "{layout:?} {pages} {blocks} {ppn}");
            }
        }
    }

    #[test]
    fn an_erase_clears_the_register_of_its_plane() {
        let mut t = mlc8g();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(512 + 3)); // block 2, plane 0
        log.push(OpKind::Erase, Purpose::Gc, Ppn::new(512));
        log.push(OpKind::Read, Purpose::Host, Ppn::new(512 + 3));
        let s = t.serve(0, log.ops());
        assert_eq!(s.finish, READ + 3_800_000 + READ);
    }
}
