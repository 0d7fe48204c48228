//! Per-die scheduling policies: which queued operation a die takes next when it falls idle.
//!
//! A policy sees operations by their [`Class`] only, so a new one (P/E suspension's, DiffECC's
//! mode-aware queue) is a new variant here and nothing else in the event core changes.

use serde::{Deserialize, Serialize};

use super::tables::Slot;
use crate::flash::{OpKind, Purpose};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// First come, first served.
    #[default]
    Fifo,
    /// Read-priority scheduling (paper 001 §2.6): reads wait in a priority queue and are always
    /// taken before the base queue of programs, erases and GC work; non-preemptive.
    Rps,
}

/// What a policy may tell operations apart by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A read on behalf of the host (its data, or the mapping it needs).
    Read,
    /// Everything else: programs, erases, and reads that garbage collection or recovery issue.
    Base,
    /// Background GC: taken only when nothing else waits, under every policy.
    Background,
}

impl Class {
    #[inline]
    pub fn of(kind: OpKind, purpose: Purpose) -> Class {
        let read = matches!(kind, OpKind::Read | OpKind::SpareRead);
        if read && !matches!(purpose, Purpose::Gc | Purpose::Recovery) {
            Class::Read
        } else {
            Class::Base
        }
    }
}

/// Where a queue keeps, for each operation in it, the one after it: a link in the operation's
/// own record, so that queueing an operation moves no data and allocates nothing.
pub(super) trait Links {
    fn next(&self, op: Slot) -> Option<Slot>;
    fn set_next(&mut self, op: Slot, next: Option<Slot>);
}

/// A first-in, first-out list of operations threaded through their links.
#[derive(Debug, Clone, Copy, Default)]
struct List {
    head: Option<Slot>,
    tail: Option<Slot>,
    len: u32,
}

impl List {
    #[inline]
    fn push(&mut self, links: &mut impl Links, op: u32) {
        let op = Slot::new(op);
        links.set_next(op, None);
        match self.tail.replace(op) {
            Some(tail) => links.set_next(tail, Some(op)),
            None => self.head = Some(op),
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self, links: &impl Links) -> Option<u32> {
        let op = self.head?;
        self.head = links.next(op);
        if self.head.is_none() {
            self.tail = None;
        }
        self.len -= 1;
        Some(op.index())
    }
}

/// The operations waiting for one die: one list per priority, taken in order (RPS's reads,
/// then the base queue, then background work). The policy only chooses a list when an
/// operation arrives: under FIFO every foreground operation joins the base queue and the list
/// of reads stays empty.
#[derive(Debug, Default)]
pub struct DieQueue {
    /// RPS's priority queue of reads; the base queue (everything under FIFO); background work.
    lists: [List; 3],
}

const READS: usize = 0;
const BASE: usize = 1;
const BACKGROUND: usize = 2;

impl DieQueue {
    #[inline]
    pub(super) fn push(&mut self, links: &mut impl Links, policy: SchedulerKind, op: u32, class: Class) {
        let list = match (policy, class) {
            (_, Class::Background) => BACKGROUND,
            (SchedulerKind::Rps, Class::Read) => READS,
            _ => BASE,
        };
        self.lists[list].push(links, op);
    }

    /// The next operation: the first of the first list that holds one.
    #[inline]
    pub(super) fn pop(&mut self, links: &impl Links) -> Option<u32> {
        let list = self.lists.iter_mut().find(|list| list.head.is_some())?;
        list.pop(links)
    }

    /// The next read of RPS's priority queue.
    #[inline]
    pub(super) fn pop_read(&mut self, links: &impl Links) -> Option<u32> {
        self.lists[READS].pop(links)
    }

    /// The next operation of the base queue, then of background work.
    #[inline]
    pub(super) fn pop_base_or_background(&mut self, links: &impl Links) -> Option<u32> {
        self.lists[BASE].pop(links).or_else(|| self.lists[BACKGROUND].pop(links))
    }

    /// The next operation of the base queue, if any (RPS: the write a suspended erase may let
    /// through).
    #[inline]
    pub fn front_base(&self) -> Option<u32> {
        self.lists[BASE].head.map(Slot::index)
    }

    #[inline]
    pub(super) fn pop_base(&mut self, links: &impl Links) -> Option<u32> {
        self.lists[BASE].pop(links)
    }

    /// Operations waiting in the base queue (under RPS: the die's write queue).
    #[inline]
    pub fn base_len(&self) -> usize {
        self.lists[BASE].len as usize
    }

    /// Reads waiting in RPS's priority queue.
    #[inline]
    pub fn read_len(&self) -> usize {
        self.lists[READS].len as usize
    }

    #[inline]
    pub fn has_reads(&self) -> bool {
        self.lists[READS].head.is_some()
    }

    pub fn len(&self) -> usize {
        self.lists.iter().map(|list| list.len as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Links kept in a table of their own, for queues whose operations have no record (tests).
#[cfg(test)]
impl Links for Vec<Option<Slot>> {
    fn next(&self, op: Slot) -> Option<Slot> {
        self[op.index() as usize]
    }
    fn set_next(&mut self, op: Slot, next: Option<Slot>) {
        self[op.index() as usize] = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_arrival_order_and_rps_takes_reads_first() {
        let arrivals = [(1, Class::Base), (2, Class::Read), (3, Class::Base), (4, Class::Read)];
        let order = |policy| {
            let (mut q, mut links) = (DieQueue::default(), vec![None; 5]);
            arrivals.iter().for_each(|&(op, class)| q.push(&mut links, policy, op, class));
            std::iter::from_fn(|| q.pop(&links)).collect::<Vec<_>>()
        };
        assert_eq!(order(SchedulerKind::Fifo), [1, 2, 3, 4]);
        assert_eq!(order(SchedulerKind::Rps), [2, 4, 1, 3]);
    }

    #[test]
    fn background_work_waits_for_everything_else_under_every_policy() {
        for policy in [SchedulerKind::Fifo, SchedulerKind::Rps] {
            let (mut q, mut links) = (DieQueue::default(), vec![None; 4]);
            q.push(&mut links, policy, 1, Class::Background);
            q.push(&mut links, policy, 2, Class::Base);
            q.push(&mut links, policy, 3, Class::Read);
            let order: Vec<_> = std::iter::from_fn(|| q.pop(&links)).collect();
            assert_eq!(*order.last().unwrap(), 1, "{policy:?}");
        }
    }

    #[test]
    fn gc_and_recovery_reads_wait_in_the_base_queue() {
        assert_eq!(Class::of(OpKind::Read, Purpose::Host), Class::Read);
        assert_eq!(Class::of(OpKind::Read, Purpose::Translation), Class::Read);
        assert_eq!(Class::of(OpKind::SpareRead, Purpose::Gc), Class::Base);
        assert_eq!(Class::of(OpKind::Read, Purpose::Recovery), Class::Base);
        assert_eq!(Class::of(OpKind::Program, Purpose::Host), Class::Base);
        assert_eq!(Class::of(OpKind::Erase, Purpose::Gc), Class::Base);
    }
}
