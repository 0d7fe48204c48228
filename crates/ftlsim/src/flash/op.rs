//! Flash operations as the FTL emits them, tagged with their purpose so the metrics can
//! attribute all traffic without the FTL counting by hand.

use std::num::{NonZeroU32, NonZeroU8};

use serde::Serialize;

use super::Ppn;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Full page read (data and spare).
    Read,
    /// Spare-area-only read.
    SpareRead,
    Program,
    /// Block erase; `ppn` is the block's first page.
    Erase,
    /// Work on the controller's CPU (paper 001 §4.3.2: Delta-FTL's delta encoding and
    /// decoding); `ppn` is the page whose content it works on. Not a flash operation: it holds
    /// no die and no bus.
    Compute(CpuTask),
}
/// The kinds of flash operation (what the flash counts and reports cover).
pub const OP_KINDS: [OpKind; 4] = [OpKind::Read, OpKind::SpareRead, OpKind::Program, OpKind::Erase];

impl OpKind {
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "reads",
            OpKind::SpareRead => "spare_reads",
            OpKind::Program => "programs",
            OpKind::Erase => "erases",
            OpKind::Compute(task) => task.name(),
        }
    }

    /// The row of a flash kind in the operation counts (`None` for CPU work).
    #[inline]
    pub fn flash_index(self) -> Option<usize> {
        match self {
            OpKind::Read => Some(0),
            OpKind::SpareRead => Some(1),
            OpKind::Program => Some(2),
            OpKind::Erase => Some(3),
            OpKind::Compute(_) => None,
        }
    }
}

/// What the controller's CPU computes (its cycles are device settings, `device.cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuTask {
    /// Compress a page, or the XOR of two versions of one (a delta).
    Compress,
    /// Decompress one.
    Decompress,
}
pub const CPU_TASKS: [CpuTask; 2] = [CpuTask::Compress, CpuTask::Decompress];

impl CpuTask {
    pub fn name(self) -> &'static str {
        match self {
            CpuTask::Compress => "compress",
            CpuTask::Decompress => "decompress",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Purpose {
    /// Serving host data.
    Host = 0,
    /// Garbage collection: valid-page moves and erases.
    Gc = 1,
    /// Mapping (translation-page) traffic of demand-based FTLs.
    Translation = 2,
    /// Other FTL metadata (invalidation logs, checkpoints, merges' bookkeeping).
    Metadata = 3,
    /// Reads issued by power-loss recovery.
    Recovery = 4,
}
pub const PURPOSES: [Purpose; 5] =
    [Purpose::Host, Purpose::Gc, Purpose::Translation, Purpose::Metadata, Purpose::Recovery];

impl Purpose {
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Host => "host",
            Purpose::Gc => "gc",
            Purpose::Translation => "translation",
            Purpose::Metadata => "metadata",
            Purpose::Recovery => "recovery",
        }
    }
}

/// The position of an operation in its request's list, stored as position + 1 so that
/// `Option<OpIndex>` takes four bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpIndex(NonZeroU32);

impl OpIndex {
    #[inline]
    fn new(position: usize) -> Self {
        // A request's list never nears 2^32 operations; saturating keeps the hot path branch-free.
        OpIndex(NonZeroU32::MIN.saturating_add(position as u32))
    }

    /// The operation's position in the request's list.
    #[inline]
    pub fn get(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// The sectors of a page an operation touches, when not the whole page: a host access to part
/// of a page (DiffECC decodes only the segments a read needs). Two bytes, and `Option<Sectors>`
/// too (a count is never zero), so an operation stays 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sectors {
    pub first: u8,
    pub count: NonZeroU8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    pub ppn: Ppn,
    /// `None`: the whole page.
    pub sectors: Option<Sectors>,
    /// The operation of the request this one must follow (`None`: it waits for nothing but
    /// its resources).
    pub dep: Option<OpIndex>,
    pub kind: OpKind,
    pub purpose: Purpose,
}

/// The operations one host request caused, in issue order, plus running counts by kind and purpose.
///
/// Operations issued while handling one logical page form a chain (each depends on the previous
/// one); `begin_chain` starts an independent chain, so the pages of one request may proceed in
/// parallel on a parallel timing model.
#[derive(Debug, Default)]
pub struct OpLog {
    ops: Vec<FlashOp>,
    chain_tail: Option<OpIndex>,
    /// Power fails when the request issues its operation of this index (a planned power loss
    /// inside a request).
    power_cut: Option<usize>,
    counts: [[u64; 5]; 4],
    /// CPU work issued so far, by task.
    cpu_counts: [u64; 2],
    /// Summary pages programmed so far (counted among the metadata programs too).
    summary_programs: u64,
}

impl OpLog {
    pub fn new() -> Self {
        OpLog {
            ops: Vec::with_capacity(64),
            chain_tail: None,
            power_cut: None,
            counts: [[0; 5]; 4],
            cpu_counts: [0; 2],
            summary_programs: 0,
        }
    }

    /// Forgets the ops of the previous request (keeps the counts).
    #[inline]
    pub fn clear(&mut self) {
        self.ops.clear();
        self.chain_tail = None;
    }

    #[inline]
    pub fn begin_chain(&mut self) {
        self.chain_tail = None;
    }

    /// Makes power fail when the current request issues its operation of index `at` (`None`:
    /// it does not fail).
    pub fn set_power_cut(&mut self, at: Option<usize>) {
        self.power_cut = at;
    }

    /// Whether power fails now, instead of the next operation.
    #[inline]
    pub fn power_fails_now(&self) -> bool {
        self.power_cut == Some(self.ops.len())
    }

    /// Whether power fails at the operation after the next one.
    #[inline]
    pub fn power_fails_next(&self) -> bool {
        self.power_cut == Some(self.ops.len() + 1)
    }

    /// Operations issued so far for the current request.
    #[inline]
    pub fn issued(&self) -> usize {
        self.ops.len()
    }

    /// Records on the host operations issued from index `from` on that they touch only
    /// `sectors` of their page (a host access to part of a page; the rest keep `None`).
    pub fn set_host_sectors(&mut self, from: usize, sectors: Sectors) {
        for op in self.ops[from..].iter_mut().filter(|op| op.purpose == Purpose::Host) {
            op.sectors = Some(sectors);
        }
    }

    #[inline]
    pub fn push(&mut self, kind: OpKind, purpose: Purpose, ppn: Ppn) {
        let index = OpIndex::new(self.ops.len());
        self.ops.push(FlashOp { ppn, sectors: None, dep: self.chain_tail, kind, purpose });
        self.chain_tail = Some(index);
        match kind.flash_index() {
            Some(k) => self.counts[k][purpose as usize] += 1,
            None => {
                if let OpKind::Compute(task) = kind {
                    self.cpu_counts[task as usize] += 1;
                }
            }
        }
    }

    /// The program of a block's summary page `ppn` (a metadata program, counted apart too).
    pub fn push_summary(&mut self, ppn: Ppn) {
        self.push(OpKind::Program, Purpose::Metadata, ppn);
        self.summary_programs += 1;
    }

    /// Summary pages programmed so far.
    pub fn summary_programs(&self) -> u64 {
        self.summary_programs
    }

    pub fn ops(&self) -> &[FlashOp] {
        &self.ops
    }

    /// Flash operations issued so far, by kind ([`OpKind::flash_index`]) and purpose.
    pub fn counts(&self) -> &[[u64; 5]; 4] {
        &self.counts
    }

    /// Flash operations of one kind and purpose issued so far.
    pub fn count(&self, kind: OpKind, purpose: Purpose) -> u64 {
        kind.flash_index().map_or(0, |k| self.counts[k][purpose as usize])
    }

    /// CPU work of one task issued so far.
    pub fn cpu_count(&self, task: CpuTask) -> u64 {
        self.cpu_counts[task as usize]
    }

    pub fn reset_counts(&mut self) {
        self.counts = [[0; 5]; 4];
        self.cpu_counts = [0; 2];
        self.summary_programs = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_link_ops_and_begin_chain_breaks_them() {
        let mut log = OpLog::new();
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(7));
        log.push(OpKind::Read, Purpose::Host, Ppn::new(9));
        log.begin_chain();
        log.push(OpKind::Program, Purpose::Host, Ppn::new(10));
        let ops = log.ops();
        assert_eq!(ops[0].dep, None);
        assert_eq!(ops[1].dep.map(OpIndex::get), Some(0));
        assert_eq!(ops[2].dep, None);
        assert!(ops.iter().all(|op| op.sectors.is_none()));
        assert_eq!(log.count(OpKind::Read, Purpose::Host), 1);
        log.clear();
        assert!(log.ops().is_empty());
        assert_eq!(log.count(OpKind::Program, Purpose::Host), 1);
    }

    #[test]
    fn an_operation_with_its_sectors_takes_12_bytes() {
        assert_eq!(std::mem::size_of::<FlashOp>(), 12);
    }

    #[test]
    fn host_operations_carry_the_sectors_the_host_touches() {
        let mut log = OpLog::new();
        let part = Sectors { first: 2, count: NonZeroU8::new(6).unwrap() };
        log.push(OpKind::Read, Purpose::Host, Ppn::new(5));
        let page = log.issued();
        log.push(OpKind::Read, Purpose::Translation, Ppn::new(7));
        log.push(OpKind::Read, Purpose::Host, Ppn::new(9));
        log.set_host_sectors(page, part);
        let sectors: Vec<_> = log.ops().iter().map(|op| op.sectors).collect();
        assert_eq!(sectors, [None, None, Some(part)]);
    }
}
