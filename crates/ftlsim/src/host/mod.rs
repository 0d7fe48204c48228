//! The host interface: applies the address policy and time scaling, and splits each request into
//! the logical pages it touches (a sub-page request touches the whole page; which of its sectors
//! the host touches travels with the flash operations as a [`SectorSpan`]).

pub mod content;

use crate::config::{AddressPolicy, Config};
use crate::error::{Result, SimError};
use std::num::NonZeroU8;

use crate::flash::{Lpn, Sectors};
use crate::timing::Nanos;
use crate::workload::{Fingerprints, IoKind, Request};

/// `arrival_ns / time_scale`. Out of line: inlined, the compiler computed it for every request
/// and then chose, which cost the conversions it is there to avoid.
#[cold]
#[inline(never)]
fn scale(arrival_ns: u64, time_scale: f64) -> Nanos {
    (arrival_ns as f64 / time_scale) as Nanos
}

/// A request reduced to whole logical pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub arrival: Nanos,
    pub kind: IoKind,
    pub first: Lpn,
    pub pages: u32,
    /// The sectors of its first and last pages it leaves untouched.
    pub span: SectorSpan,
}

/// The sectors a request leaves untouched at the start of its first page and at the end of its
/// last page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SectorSpan {
    pub head: u8,
    pub tail: u8,
}

impl SectorSpan {
    /// Whole pages.
    pub const WHOLE: SectorSpan = SectorSpan { head: 0, tail: 0 };

    /// The sectors page `i` of a request of `pages` pages touches, out of `per_page`; `None`
    /// when it touches the whole page.
    #[inline]
    pub fn sectors(&self, i: u32, pages: u32, per_page: u8) -> Option<Sectors> {
        let first = if i == 0 { self.head } else { 0 };
        let end = if i + 1 == pages { per_page - self.tail } else { per_page };
        if first == 0 && end == per_page {
            return None;
        }
        let count = NonZeroU8::new(end - first).expect("a request touches a sector of each of its pages");
        Some(Sectors { first, count })
    }
}

pub struct Host {
    page_size: u64,
    /// `log2(page_size)` when the page size is a power of two (every preset): a shift instead of
    /// two 64-bit divisions per request.
    page_shift: Option<u32>,
    sector_size: u64,
    logical_pages: u64,
    policy: AddressPolicy,
    scale_span: u64,
    time_scale: f64,
}

impl Host {
    pub fn new(config: &Config) -> Self {
        Host {
            page_size: config.device.geometry.page_size as u64,
            page_shift: config
                .device
                .geometry
                .page_size
                .is_power_of_two()
                .then(|| config.device.geometry.page_size.trailing_zeros()),
            sector_size: config.device.geometry.sector_size as u64,
            logical_pages: config.device.logical_pages() as u64,
            policy: config.host.address_policy,
            scale_span: config.host.scale_span_bytes.unwrap_or(0),
            time_scale: config.host.time_scale,
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.logical_pages * self.page_size
    }

    /// The logical page holding byte `offset`.
    #[inline]
    fn page_of(&self, offset: u64) -> u64 {
        match self.page_shift {
            Some(shift) => offset >> shift,
            None => offset / self.page_size,
        }
    }

    /// An arrival time compressed by `host.time_scale`. Unscaled times below 2^53 ns (104 days)
    /// pass as they are: through `f64` they come back exact, and the conversions cost more than
    /// the rest of the admission.
    #[inline]
    fn scaled(&self, arrival_ns: u64) -> Nanos {
        if self.time_scale == 1.0 && arrival_ns < 1 << f64::MANTISSA_DIGITS {
            arrival_ns
        } else {
            scale(arrival_ns, self.time_scale)
        }
    }

    /// Admits one request; `source` names the trace in error messages.
    pub fn admit(&self, source: &str, req: &Request) -> Result<PageRequest> {
        let location = || format!("{source}:{}", req.line);
        if req.len_bytes == 0 {
            return Err(SimError::input(location(), "request of zero bytes"));
        }
        let capacity = self.capacity_bytes();
        let too_large =
            || SimError::input(location(), format!("request of {} bytes is larger than the device", req.len_bytes));
        if req.len_bytes > capacity {
            return Err(too_large());
        }
        let offset = match self.policy {
            AddressPolicy::Error => req.offset_bytes,
            AddressPolicy::Fold => req.offset_bytes % capacity,
            // Offsets scale onto the device; sizes keep their bytes (the trace's request sizes
            // are what the experiment is about), and a request the scaling pushed past the end
            // moves back to end at the capacity.
            AddressPolicy::Scale => {
                let scaled = ((req.offset_bytes as u128 * capacity as u128) / self.scale_span as u128) as u64;
                scaled.min(capacity.saturating_sub(req.len_bytes))
            }
        };
        let end =
            offset.checked_add(req.len_bytes).ok_or_else(|| SimError::input(location(), "offset + size overflows"))?;
        let first = self.page_of(offset);
        let pages = self.page_of(end - 1) - first + 1;
        if self.policy != AddressPolicy::Fold && end > capacity {
            return Err(SimError::input(
                location(),
                format!(
                    "request at byte offset {} of {} bytes ends beyond the exported capacity of {capacity} bytes \
                     (use --set host.address_policy=\"fold\" or \"scale\" to map it in)",
                    req.offset_bytes, req.len_bytes
                ),
            ));
        }
        // Only a folded request can still span more pages than the device (logical pages fit u32).
        if pages > self.logical_pages {
            return Err(too_large());
        }
        // Bytes before the request in its first page and after it in its last (no division for
        // the page-aligned requests of most traces).
        let before = offset - first * self.page_size;
        let after = (first + pages) * self.page_size - end;
        let span = SectorSpan {
            head: if before == 0 { 0 } else { (before / self.sector_size) as u8 },
            tail: if after == 0 { 0 } else { (after / self.sector_size) as u8 },
        };
        Ok(PageRequest {
            arrival: self.scaled(req.arrival_ns),
            kind: req.kind,
            first: Lpn::new(first as u32),
            pages: pages as u32,
            span,
        })
    }

    /// The content fingerprint of page `i` of a request whose content the trace records; `None`
    /// for a page the request writes in part (its content mixes old and new data) or one past
    /// the fingerprints.
    pub fn page_fingerprint(&self, req: &PageRequest, i: u32, content: &Fingerprints) -> Option<u64> {
        let sectors_per_page = (self.page_size / self.sector_size) as u8;
        if req.span.sectors(i, req.pages, sectors_per_page).is_some() {
            return None;
        }
        // A whole first page starts the request; a later one starts `head` sectors into it.
        let start = (i as u64 * self.page_size).saturating_sub(req.span.head as u64 * self.sector_size);
        content.range(start, start + self.page_size)
    }

    /// The i-th LPN of a request (folding wraps around the end of the space).
    #[inline]
    pub fn lpn(&self, req: &PageRequest, i: u32) -> Lpn {
        let lpn = req.first.get() as u64 + i as u64;
        Lpn::new((if lpn >= self.logical_pages { lpn - self.logical_pages } else { lpn }) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;

    fn host(policy: &str) -> Host {
        let mut b = ConfigBuilder::new().set(&format!("host.address_policy=\"{policy}\"")).unwrap();
        if policy == "scale" {
            b = b.set("host.scale_span_bytes=16642998272").unwrap(); // 2 x capacity
        }
        Host::new(&b.build().unwrap())
    }

    fn req(offset: u64, len: u64) -> Request {
        Request::new(3_000, IoKind::Write, offset, len, 7)
    }

    #[test]
    fn sub_page_requests_touch_whole_pages() {
        let h = host("error");
        let p = h.admit("t", &req(8192 * 3 + 100, 8192)).unwrap();
        assert_eq!((p.first, p.pages), (Lpn::new(3), 2));
        let p = h.admit("t", &req(0, 1)).unwrap();
        assert_eq!((p.first, p.pages), (Lpn::new(0), 1));
    }

    #[test]
    fn the_span_names_the_sectors_of_the_first_and_last_pages_left_untouched() {
        let h = host("error");
        // 8 KB pages of 16 sectors: page 3 from byte 1024 on, the whole of page 4 and the first
        // 1,100 bytes (3 sectors) of page 5.
        let p = h.admit("t", &req(8192 * 3 + 1024, 7168 + 8192 + 1100)).unwrap();
        let span = p.span;
        assert_eq!((p.first, p.pages), (Lpn::new(3), 3));
        assert_eq!(span, SectorSpan { head: 2, tail: 13 });
        let part = |first, count| Some(Sectors { first, count: NonZeroU8::new(count).unwrap() });
        assert_eq!(span.sectors(0, 3, 16), part(2, 14));
        assert_eq!(span.sectors(1, 3, 16), None);
        assert_eq!(span.sectors(2, 3, 16), part(0, 3));
        assert_eq!(h.admit("t", &req(8192, 8192)).unwrap().span, SectorSpan::WHOLE);
        let inside = h.admit("t", &req(8192 + 512, 512)).unwrap().span;
        assert_eq!(inside.sectors(0, 1, 16), part(1, 1));
    }

    #[test]
    fn beyond_capacity_names_the_line() {
        let h = host("error");
        let cap = h.capacity_bytes();
        let err = h.admit("trace.csv", &req(cap - 4096, 8192)).unwrap_err().to_string();
        assert!(err.starts_with("trace.csv:7:") && err.contains("beyond"), "{err}");
    }

    #[test]
    fn fold_wraps_modulo_capacity() {
        let h = host("fold");
        let cap = h.capacity_bytes();
        let p = h.admit("t", &req(cap + 8192 * 5, 8192)).unwrap();
        assert_eq!((p.first, p.pages), (Lpn::new(5), 1));
        let p = h.admit("t", &req(cap - 8192, 16384)).unwrap();
        assert_eq!(h.lpn(&p, 0), Lpn::new(1_015_807));
        assert_eq!(h.lpn(&p, 1), Lpn::new(0));
    }

    #[test]
    fn scale_maps_the_span_onto_the_device() {
        let h = host("scale");
        let p = h.admit("t", &req(8192 * 10, 8192)).unwrap();
        assert_eq!(p.first, Lpn::new(5));
    }

    #[test]
    fn scale_keeps_sizes_and_moves_a_request_past_the_end_back_inside() {
        let h = host("scale");
        let cap = h.capacity_bytes();
        // The span is twice the capacity: the last 16 KB of the span start at cap - 8 KB.
        let p = h.admit("t", &req(2 * cap - 16384, 16384)).unwrap();
        assert_eq!(p.pages, 2, "16 KB stays 16 KB");
        assert_eq!((p.first.get() as u64 + p.pages as u64) * 8192, cap, "it ends at the capacity");
        assert!(h
            .admit("t", &req(2 * cap - 16384, cap + 8192))
            .unwrap_err()
            .to_string()
            .contains("larger than the device"));
    }

    #[test]
    fn zero_length_is_rejected() {
        assert!(host("error").admit("t", &req(0, 0)).unwrap_err().to_string().contains("zero bytes"));
    }

    #[test]
    fn time_scale_compresses_arrivals() {
        let h = Host::new(&ConfigBuilder::new().set("host.time_scale=3").unwrap().build().unwrap());
        assert_eq!(h.admit("t", &req(0, 512)).unwrap().arrival, 1_000);
    }

    #[test]
    fn unscaled_arrivals_pass_exactly_and_huge_ones_round_through_f64_as_before() {
        let h = host("error");
        let at = |ns| h.admit("t", &Request::new(ns, IoKind::Read, 0, 512, 1)).unwrap().arrival;
        assert_eq!(at(3_000), 3_000);
        let huge = (1 << 53) + 1; // not an f64: the conversion rounds it, as it always did
        assert_eq!(at(huge), (huge as f64 / 1.0) as u64);
        assert_eq!(at(huge), 1 << 53);
    }

    #[test]
    fn a_page_size_not_a_power_of_two_divides() {
        let config = ConfigBuilder::new().set("device.geometry.page_size=6144").unwrap().build();
        let config = config.expect("6 KB pages are a valid geometry");
        let h = Host::new(&config);
        let p = h.admit("t", &req(6144 * 3 + 100, 6144)).unwrap();
        assert_eq!((p.first, p.pages), (Lpn::new(3), 2));
    }
}
