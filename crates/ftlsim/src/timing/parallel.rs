//! `parallel`: per-channel bus and per-die array resources. Each operation starts as soon as its
//! dependency has finished and its resources are free; operations are taken in issue order, so each
//! die serves its queue first-in first-out.
//!
//! A read occupies the die for the array read and then the channel (and the die's register) for the
//! transfer out; a program occupies the channel for the transfer in, then the die for the array
//! program; an erase occupies only the die.

use super::{Nanos, OpCosts, PlaneRegisters, Served};
use crate::config::DeviceConfig;
use crate::flash::{FlashOp, OpKind};

pub struct Parallel {
    costs: OpCosts,
    pub(crate) registers: PlaneRegisters,
    die_free: Vec<Nanos>,
    /// Time each die spent on operations (a read holds its die until its transfer ends).
    pub(crate) die_busy: Vec<Nanos>,
    channel_free: Vec<Nanos>,
    finish_of: Vec<Nanos>,
}

impl Parallel {
    pub fn new(costs: OpCosts, device: &DeviceConfig) -> Self {
        let g = &device.geometry;
        Parallel {
            registers: PlaneRegisters::new(device.timing.plane_register, g.total_planes()),
            die_free: vec![0; g.total_dies() as usize],
            die_busy: vec![0; g.total_dies() as usize],
            channel_free: vec![0; g.channels as usize],
            finish_of: Vec::with_capacity(64),
            costs,
        }
    }

    pub fn serve(&mut self, arrival: Nanos, ops: &[FlashOp]) -> Served {
        let c = &self.costs;
        let g = &c.geometry;
        self.finish_of.clear();
        let mut first_start = Nanos::MAX;
        let mut last_finish = arrival;
        for op in ops {
            let ready = op.dep.map_or(arrival, |dep| self.finish_of[dep.get()]);
            let block = g.block_of(op.ppn);
            let plane = g.plane_of_block(block);
            let die = (plane / g.planes_per_die) as usize;
            let channel = g.channel_of_die(die as u32) as usize;
            let (start, finish) = match op.kind {
                OpKind::Read | OpKind::SpareRead => {
                    let hit = self.registers.read(plane, op.ppn);
                    let array = if hit { 0 } else { c.read_array };
                    let transfer = if op.kind == OpKind::Read { c.page_transfer } else { c.spare_transfer };
                    let start = ready.max(self.die_free[die]);
                    let bus_start = (start + array).max(self.channel_free[channel]);
                    let finish = bus_start + transfer;
                    self.channel_free[channel] = finish;
                    self.die_free[die] = finish;
                    (start, finish)
                }
                OpKind::Program => {
                    self.registers.program(plane, op.ppn);
                    let start = ready.max(self.die_free[die]).max(self.channel_free[channel]);
                    let bus_done = start + c.page_transfer;
                    let finish = bus_done + c.program_array;
                    self.channel_free[channel] = bus_done;
                    self.die_free[die] = finish;
                    (start, finish)
                }
                OpKind::Erase => {
                    self.registers.erase(plane, op.ppn, g.pages_per_block);
                    let start = ready.max(self.die_free[die]);
                    let finish = start + c.erase;
                    self.die_free[die] = finish;
                    (start, finish)
                }
            };
            self.die_busy[die] += finish - start;
            self.finish_of.push(finish);
            first_start = first_start.min(start);
            last_finish = last_finish.max(finish);
        }
        Served { start: first_start.min(last_finish), finish: last_finish }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::Ppn;
    use crate::flash::{OpLog, Purpose};

    /// 2 channels x 1 chip x 1 die x 1 plane, 4 blocks per plane (interleaved: even PBN on die 0).
    fn two_dies() -> Parallel {
        let c = ConfigBuilder::new()
            .toml(
                "test",
                r#"
                [device]
                overprovisioning = 0.5
                [device.geometry]
                channels = 2
                chips_per_channel = 1
                dies_per_chip = 1
                planes_per_die = 1
                blocks_per_plane = 16
                pages_per_block = 4
                page_size = 4096
                spare_size = 0
                spare_usable = 0
                [device.latency]
                read_us = 25.0
                program_us = 200.0
                erase_us = 1500.0
                bus_ns_per_byte = 10.0
                [device.timing]
                model = "parallel"
                plane_register = false
                [gc]
                free_blocks_low = 1
                "#,
            )
            .unwrap()
            .build()
            .unwrap();
        Parallel::new(OpCosts::new(&c.device), &c.device)
    }

    const XFER: Nanos = 40_960;

    #[test]
    fn independent_ops_on_two_dies_overlap() {
        let mut t = two_dies();
        let mut log = OpLog::new();
        log.push(OpKind::Program, Purpose::Host, Ppn::new(0)); // block 0: die 0, channel 0
        log.begin_chain();
        log.push(OpKind::Program, Purpose::Host, Ppn::new(4)); // block 1: die 1, channel 1
        let s = t.serve(0, log.ops());
        assert_eq!(s, Served { start: 0, finish: XFER + 200_000 });
    }

    #[test]
    fn a_chain_serialises_and_one_die_queues_fifo() {
        let mut t = two_dies();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(0)); // die 0
        log.push(OpKind::Read, Purpose::Host, Ppn::new(4)); // die 1, waits for the translation read
        let s = t.serve(0, log.ops());
        assert_eq!(s.finish, 2 * (25_000 + XFER));
        // A second request on die 0 queues behind the first request's erase.
        log.clear();
        log.push(OpKind::Erase, Purpose::Gc, Ppn::new(8)); // block 2: die 0
        let e = t.serve(0, log.ops());
        assert_eq!(e, Served { start: 25_000 + XFER, finish: 25_000 + XFER + 1_500_000 });
        log.clear();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(1));
        let r = t.serve(10, log.ops());
        assert_eq!(r.start, e.finish);
        assert_eq!(r.finish, e.finish + 25_000 + XFER);
    }

    #[test]
    fn two_reads_on_different_dies_share_one_channel_only_when_they_share_it() {
        let mut t = two_dies();
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(0)); // die 0, channel 0
        log.begin_chain();
        log.push(OpKind::Read, Purpose::Host, Ppn::new(8)); // die 0 again: waits for die 0
        let s = t.serve(0, log.ops());
        assert_eq!(s.finish, 2 * (25_000 + XFER));
    }
}
