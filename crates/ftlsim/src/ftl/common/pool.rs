//! The free pool: erased blocks waiting to be written, one queue per allocation unit (a die or a
//! plane), taken oldest-erased first.

use std::collections::VecDeque;

use crate::config::AllocationUnit;
use crate::flash::{Geometry, Pbn};

pub struct FreePool {
    /// The allocation unit of every block.
    unit_of: Vec<u32>,
    free: Vec<VecDeque<Pbn>>,
}

impl FreePool {
    /// A pool holding every block of the device.
    pub fn new(geometry: &Geometry, unit_kind: AllocationUnit, units: u32) -> Self {
        let unit_of: Vec<u32> = (0..geometry.total_blocks()).map(|b| unit_of_block(geometry, unit_kind, b)).collect();
        let mut pool = FreePool { unit_of, free: vec![VecDeque::new(); units as usize] };
        for pbn in 0..geometry.total_blocks() {
            pool.put(pbn);
        }
        pool
    }

    pub fn units(&self) -> u32 {
        self.free.len() as u32
    }

    #[inline]
    pub fn unit_of(&self, pbn: Pbn) -> u32 {
        self.unit_of[pbn as usize]
    }

    /// The allocation unit of every block, indexed by block.
    pub fn units_of_blocks(&self) -> &[u32] {
        &self.unit_of
    }

    /// Takes the longest-free block of `unit`.
    #[inline]
    pub fn take(&mut self, unit: u32) -> Option<Pbn> {
        self.free[unit as usize].pop_front()
    }

    /// Returns an erased block to its unit's queue.
    pub fn put(&mut self, pbn: Pbn) {
        let unit = self.unit_of(pbn);
        self.free[unit as usize].push_back(pbn);
    }

    pub fn len(&self, unit: u32) -> usize {
        self.free[unit as usize].len()
    }

    pub fn total(&self) -> usize {
        self.free.iter().map(VecDeque::len).sum()
    }

    /// Empties every queue (before a rebuild after power loss).
    pub fn clear(&mut self) {
        self.free.iter_mut().for_each(VecDeque::clear);
    }

    /// Simulator memory of the queues.
    pub fn state_bytes(&self) -> usize {
        self.total() * std::mem::size_of::<Pbn>() + self.unit_of.len() * 4
    }
}

fn unit_of_block(geometry: &Geometry, kind: AllocationUnit, pbn: Pbn) -> u32 {
    match kind {
        AllocationUnit::Die => geometry.die_of_block(pbn),
        AllocationUnit::Plane => geometry.plane_of_block(pbn),
    }
}
