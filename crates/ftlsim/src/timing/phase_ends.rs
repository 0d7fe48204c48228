//! The event queue of the discrete-event model: the end of each server's current phase (one
//! per die, CPU and host link), earliest first.

use super::Nanos;

/// A tournament tree over the servers, so that finding the next event is one read and setting a
/// server's end costs one comparison per level.
///
/// An entry is the time and the server packed in one 64-bit number, the server in the low
/// `shift` bits, so ties go to the lower server with a single comparison. To fit, times are
/// kept relative to `base`, a moment no later than the model's current time; when a time no
/// longer fits above the server bits (after 2^(64 - shift) ns, 18 years for 17 servers), the
/// entries are rebased on the current time, which changes no order.
#[derive(Debug)]
pub(super) struct PhaseEnds {
    /// Leaves (one per server) from `leaves` on; node `i` holds the earliest of nodes `2i` and
    /// `2i + 1`, so node 1 holds the earliest of all. Not padded to a power of two: most
    /// leaves are then a level nearer the root (17 servers: 4 levels instead of 5).
    tree: Vec<u64>,
    leaves: usize,
    shift: u32,
    base: Nanos,
    /// The latest time after `base` an entry can hold (below [`Self::NONE`]).
    max_rel: Nanos,
}

impl PhaseEnds {
    const NONE: u64 = u64::MAX;

    pub(super) fn new(servers: usize) -> Self {
        let shift = u64::BITS - (servers.saturating_sub(1) as u64).leading_zeros();
        PhaseEnds {
            tree: vec![Self::NONE; 2 * servers],
            leaves: servers,
            shift,
            base: 0,
            max_rel: (Self::NONE >> shift) - 1,
        }
    }

    #[inline]
    pub(super) fn first(&self) -> Option<(Nanos, usize)> {
        let entry = self.tree[1];
        (entry != Self::NONE).then(|| ((entry >> self.shift) + self.base, (entry & ((1 << self.shift) - 1)) as usize))
    }

    /// `server`'s phase ends at `at`; the model stands at `now` (no later than `at`).
    #[inline]
    pub(super) fn set(&mut self, server: usize, at: Nanos, now: Nanos) {
        if at - self.base > self.max_rel {
            self.rebase(at, now);
        }
        self.update(server, (at - self.base) << self.shift | server as u64);
    }

    #[inline]
    pub(super) fn clear(&mut self, server: usize) {
        self.update(server, Self::NONE);
    }

    /// Times count from `now` on: every pending end is at `now` or later, and so is every end
    /// set from now on.
    #[cold]
    fn rebase(&mut self, at: Nanos, now: Nanos) {
        // Below every pending entry's time, so no entry underflows.
        let delta = (now - self.base) << self.shift;
        for entry in self.tree.iter_mut().filter(|e| **e != Self::NONE) {
            *entry -= delta;
        }
        self.base = now;
        assert!(at - now <= self.max_rel, "a phase ending {at} ns cannot be queued at {now} ns");
    }

    /// `server` is a die, a CPU or the host link: the event core numbers them below `leaves`
    /// when it builds the tree.
    #[inline]
    fn update(&mut self, server: usize, mut entry: u64) {
        debug_assert!(server < self.leaves, "server {server} of {}", self.leaves);
        let mut i = self.leaves + server;
        // SAFETY: `i` is below `2 * leaves`, the tree's length (`server < leaves`, asserted
        // above in debug builds), and so is `i ^ 1` (the length is even); nothing else is
        // checked, one comparison per level (the check and its spill were a tenth of an update).
        unsafe {
            *self.tree.get_unchecked_mut(i) = entry;
            while i > 1 {
                entry = entry.min(*self.tree.get_unchecked(i ^ 1));
                i /= 2;
                *self.tree.get_unchecked_mut(i) = entry;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree is not padded to a power of two: with any number of servers, the first entry
    /// is the earliest, ties going to the lower server.
    #[test]
    fn phase_ends_keep_the_earliest_first_for_any_number_of_servers() {
        for servers in 1..=19 {
            let mut ends = PhaseEnds::new(servers);
            assert_eq!(ends.first(), None);
            // Every server ends at 100 + (7 * server) mod 11, as the updates go.
            for server in 0..servers {
                ends.set(server, 100 + (7 * server as Nanos) % 11, 0);
                let expected = (0..=server).map(|s| (100 + (7 * s as Nanos) % 11, s)).min();
                assert_eq!(ends.first(), expected, "{servers} servers, {server} set");
            }
            ends.set(servers - 1, 50, 0);
            assert_eq!(ends.first(), Some((50, servers - 1)));
            ends.set(0, 50, 0);
            assert_eq!(ends.first(), Some((50, 0)), "a tie goes to the lower server");
            for server in 0..servers {
                ends.clear(server);
            }
            assert_eq!(ends.first(), None);
        }
    }

    #[test]
    fn phase_ends_give_the_earliest_die_first_and_ties_to_the_lower_die() {
        for dies in [1, 3, 16] {
            let mut ends = PhaseEnds::new(dies);
            assert_eq!(ends.first(), None);
            // Even dies end at 100, odd dies at 50.
            for die in 0..dies {
                ends.set(die, 100 - (die as Nanos % 2) * 50, 0);
            }
            let mut order = Vec::new();
            while let Some((at, die)) = ends.first() {
                order.push((at, die));
                ends.clear(die);
            }
            let odd = (1..dies).step_by(2).map(|d| (50, d));
            let even = (0..dies).step_by(2).map(|d| (100, d));
            assert_eq!(order, odd.chain(even).collect::<Vec<_>>(), "{dies} dies");
        }
    }

    /// Times beyond what fits above the server bits: the entries are rebased, in the same order.
    #[test]
    fn phase_ends_past_the_range_of_an_entry_keep_their_order() {
        let mut ends = PhaseEnds::new(17);
        let range = ends.max_rel;
        ends.set(3, range - 10, 0);
        ends.set(5, range - 10, 0);
        ends.set(1, range - 5, 0);
        // Set at `range - 20`: the end at `range + 100` does not fit after 0.
        ends.set(7, range + 100, range - 20);
        ends.set(2, range - 10, range - 20);
        let mut order = Vec::new();
        while let Some((at, server)) = ends.first() {
            order.push((at, server));
            ends.clear(server);
        }
        assert_eq!(order, [(range - 10, 2), (range - 10, 3), (range - 10, 5), (range - 5, 1), (range + 100, 7)]);
    }
}
