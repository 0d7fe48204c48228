//! Per-die scheduling policies: which queued operation a die takes next when it falls idle.
//!
//! A policy sees operations by their [`Class`] only, so a new one (P/E suspension's, DiffECC's
//! mode-aware queue) is a new variant here and nothing else in the event core changes.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

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

/// The operations waiting for one die, under one policy.
#[derive(Debug, Default)]
pub struct DieQueue {
    /// FIFO holds everything here; RPS holds the base queue here.
    base: VecDeque<u32>,
    /// RPS's priority queue of reads.
    reads: VecDeque<u32>,
    /// Background work, served when the die would otherwise be idle.
    background: VecDeque<u32>,
}

impl DieQueue {
    #[inline]
    pub fn push(&mut self, policy: SchedulerKind, op: u32, class: Class) {
        match (policy, class) {
            (_, Class::Background) => self.background.push_back(op),
            (SchedulerKind::Rps, Class::Read) => self.reads.push_back(op),
            _ => self.base.push_back(op),
        }
    }

    #[inline]
    pub fn pop(&mut self, policy: SchedulerKind) -> Option<u32> {
        let foreground = match policy {
            SchedulerKind::Fifo => self.base.pop_front(),
            SchedulerKind::Rps => self.reads.pop_front().or_else(|| self.base.pop_front()),
        };
        foreground.or_else(|| self.background.pop_front())
    }

    /// The next read of RPS's priority queue.
    #[inline]
    pub fn pop_read(&mut self) -> Option<u32> {
        self.reads.pop_front()
    }

    /// The next operation of the base queue, then of background work.
    #[inline]
    pub fn pop_base_or_background(&mut self) -> Option<u32> {
        self.base.pop_front().or_else(|| self.background.pop_front())
    }

    /// The next operation of the base queue, if any (RPS: the write a suspended erase may let
    /// through).
    #[inline]
    pub fn front_base(&self) -> Option<u32> {
        self.base.front().copied()
    }

    #[inline]
    pub fn pop_base(&mut self) -> Option<u32> {
        self.base.pop_front()
    }

    /// Operations waiting in the base queue (under RPS: the die's write queue).
    #[inline]
    pub fn base_len(&self) -> usize {
        self.base.len()
    }

    /// Reads waiting in RPS's priority queue.
    #[inline]
    pub fn read_len(&self) -> usize {
        self.reads.len()
    }

    #[inline]
    pub fn has_reads(&self) -> bool {
        !self.reads.is_empty()
    }

    pub fn len(&self) -> usize {
        self.base.len() + self.reads.len() + self.background.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_arrival_order_and_rps_takes_reads_first() {
        let arrivals = [(1, Class::Base), (2, Class::Read), (3, Class::Base), (4, Class::Read)];
        let order = |policy| {
            let mut q = DieQueue::default();
            arrivals.iter().for_each(|&(op, class)| q.push(policy, op, class));
            std::iter::from_fn(|| q.pop(policy)).collect::<Vec<_>>()
        };
        assert_eq!(order(SchedulerKind::Fifo), [1, 2, 3, 4]);
        assert_eq!(order(SchedulerKind::Rps), [2, 4, 1, 3]);
    }

    #[test]
    fn background_work_waits_for_everything_else_under_every_policy() {
        for policy in [SchedulerKind::Fifo, SchedulerKind::Rps] {
            let mut q = DieQueue::default();
            q.push(policy, 1, Class::Background);
            q.push(policy, 2, Class::Base);
            q.push(policy, 3, Class::Read);
            let order: Vec<_> = std::iter::from_fn(|| q.pop(policy)).collect();
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
