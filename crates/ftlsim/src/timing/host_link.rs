//! The host interface (PCIe, paper 001's "PCIe 2.0 GB/s", spec sections 1.7 and 5) as one link
//! shared by every request: a write's data crosses it before the controller works on the
//! write, a read's data after the flash has read it. Transfers take the link one at a time in
//! the order they ask for it; the event core asks in simulated-time order, so the link is a
//! reservation (free from a time on) and its transfers end in the order they were asked for.

use std::collections::VecDeque;

use super::Nanos;

/// One transfer on the link: when it ends, the request it belongs to, and how many of the
/// request's operations wait for it (a write's, taken from the front of [`HostLink::gated`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Transfer {
    pub end: Nanos,
    pub request: u32,
    pub gated: u32,
}

#[derive(Debug)]
pub(super) struct HostLink {
    ns_per_byte: f64,
    /// The last transfer's size and time: most transfers are a page, and rounding a time is a
    /// call into the C library.
    last_transfer: (u64, Nanos),
    /// When the link is free again.
    free: Nanos,
    /// Transfers asked for and not yet ended, in the order they end.
    pending: VecDeque<Transfer>,
    /// The operations the pending writes' transfers hold back, in the transfers' order.
    pub gated: VecDeque<u32>,
    pub busy_ns: Nanos,
}

impl HostLink {
    /// A link of `mb_s` MB/s (10^6 bytes per second); none when `mb_s` is 0.
    pub fn new(mb_s: f64) -> Option<Self> {
        (mb_s > 0.0).then(|| HostLink {
            ns_per_byte: 1000.0 / mb_s,
            last_transfer: (0, 0),
            free: 0,
            pending: VecDeque::new(),
            gated: VecDeque::new(),
            busy_ns: 0,
        })
    }

    /// Moves `bytes` of `request` from `now` on (after the transfers asked for before), holding
    /// back the last `gated` operations pushed on [`Self::gated`]; returns when it starts and
    /// when it ends.
    #[inline]
    pub fn reserve(&mut self, now: Nanos, bytes: u64, request: u32, gated: u32) -> (Nanos, Nanos) {
        if bytes != self.last_transfer.0 {
            self.last_transfer = (bytes, (bytes as f64 * self.ns_per_byte).round() as Nanos);
        }
        let time = self.last_transfer.1;
        let start = self.free.max(now);
        self.free = start + time;
        self.busy_ns += time;
        self.pending.push_back(Transfer { end: self.free, request, gated });
        (start, self.free)
    }

    /// When the next transfer ends.
    #[inline]
    pub fn next_end(&self) -> Option<Nanos> {
        self.pending.front().map(|t| t.end)
    }

    /// The transfer that ended first.
    #[inline]
    pub fn pop(&mut self) -> Transfer {
        self.pending.pop_front().expect("a link event belongs to a transfer")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_take_the_link_one_at_a_time_in_the_order_asked() {
        // 2,000 MB/s: a 4 KB page crosses in 2.048 us (spec section 5).
        let mut link = HostLink::new(2000.0).unwrap();
        assert_eq!(link.reserve(1_000, 4096, 7, 0), (1_000, 3_048));
        assert_eq!(link.reserve(2_000, 8192, 8, 2), (3_048, 7_144), "waits for the first");
        assert_eq!(link.reserve(10_000, 4096, 9, 0), (10_000, 12_048), "an idle link starts at once");
        assert_eq!(link.next_end(), Some(3_048));
        assert_eq!(link.pop(), Transfer { end: 3_048, request: 7, gated: 0 });
        assert_eq!(link.pop(), Transfer { end: 7_144, request: 8, gated: 2 });
        assert_eq!(link.busy_ns, 2_048 + 4_096 + 2_048);
        assert!(HostLink::new(0.0).is_none(), "0 turns the link off");
    }
}
