//! The controller's CPU as servers of the event core: each takes the CPU work queued on it in
//! arrival order, one task at a time (spec Δ6 [REC]: one shared FIFO server, or one per channel).

use std::collections::VecDeque;

use super::Nanos;

/// How the CPUs spent their time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    /// Per CPU, time spent on tasks.
    pub busy_ns: Vec<Nanos>,
}

#[derive(Debug, Default)]
struct Server {
    queue: VecDeque<u32>,
    current: Option<u32>,
    /// When it took its current task.
    since: Nanos,
}

/// The CPU servers: which operation each runs and which wait for it.
#[derive(Debug)]
pub(super) struct Cpus {
    servers: Vec<Server>,
    pub(super) times: CpuTimes,
}

impl Cpus {
    pub(super) fn new(count: usize) -> Self {
        Cpus { servers: (0..count).map(|_| Server::default()).collect(), times: CpuTimes { busy_ns: vec![0; count] } }
    }

    /// Queues `op` on `cpu` at `now`; returns it if the CPU was idle and takes it now.
    #[inline]
    pub(super) fn arrive(&mut self, cpu: usize, op: u32, now: Nanos) -> Option<u32> {
        let server = &mut self.servers[cpu];
        if server.current.is_some() {
            server.queue.push_back(op);
            return None;
        }
        server.current = Some(op);
        server.since = now;
        Some(op)
    }

    /// `cpu` finished its task at `now`: returns that operation and the next one it takes.
    #[inline]
    pub(super) fn finish(&mut self, cpu: usize, now: Nanos) -> (u32, Option<u32>) {
        let server = &mut self.servers[cpu];
        self.times.busy_ns[cpu] += now - server.since;
        let done = server.current.take().expect("a CPU event belongs to the task it runs");
        server.current = server.queue.pop_front();
        server.since = now;
        (done, server.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_serves_its_tasks_one_at_a_time_in_arrival_order() {
        let mut cpus = Cpus::new(2);
        assert_eq!(cpus.arrive(0, 7, 0), Some(7), "an idle CPU takes the task at once");
        assert_eq!(cpus.arrive(0, 8, 1), None);
        assert_eq!(cpus.arrive(0, 9, 2), None);
        assert_eq!(cpus.arrive(1, 3, 2), Some(3), "another CPU is independent");
        assert_eq!(cpus.finish(0, 44), (7, Some(8)));
        assert_eq!(cpus.finish(0, 88), (8, Some(9)));
        assert_eq!(cpus.finish(0, 98), (9, None));
        assert_eq!(cpus.times.busy_ns, [98, 0]);
    }
}
