//! Deterministic synthetic workloads built from parts: an address pattern (uniform, Zipf,
//! hot/cold, sequential streams, or a weighted mixture of them), a read fraction, request-size
//! distributions for reads and writes, and an arrival process (fixed rate, Poisson, or a closed
//! loop with a queue depth). The same spec and seed always give the same stream.
//!
//! The read count is exact: `round(requests x read_fraction)` reads at random positions
//! (selection sampling), so a generated stream has the write ratio it was asked for. A `mean`
//! size distribution is exact too: sizes are geometric around the mean still to be met, and
//! the total is fixed in advance, so the stream's mean size is the asked one to the sector.
//!
//! Offsets of random patterns are 4 KiB-aligned, sizes whole 512-byte sectors and arrivals whole
//! 100 ns ticks, so every generated stream survives conversion to MSR, SPC and MQSim exactly.
//! The first request arrives at 0.
//!
//! Spec strings (`--synthetic`, `ftlsim gen`) are comma-separated `key=value` items, optionally
//! after a preset name: `p000-hm0,scale=0.01` or
//! `requests=100000,read=0.7,addr=zipf:0.9@0.8+seq:4@0.2,rsize=4096,wsize=mean:16384,arrival=poisson:500`.

use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, Geometric, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use super::locality::{Locality, LocalityState};
use super::working_sets::{WorkingSets, WorkingSetsState};
use super::{presets, IoKind, Request, Workload};
use crate::error::{Result, SimError};

const SECTOR: u64 = 512;
const SLOT: u64 = 4096;
const TICK_NS: u64 = 100;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Pattern {
    Uniform,
    /// Zipf over 4 KiB slots with exponent `theta`; popular slots are scattered over the space.
    Zipf {
        theta: f64,
    },
    /// `access` of the requests go to the first `space` of the address space.
    HotCold {
        access: f64,
        space: f64,
    },
    /// Each request continues one of `streams` sequential streams, picked at random.
    Sequential {
        streams: u32,
    },
    /// Sequential runs and re-referenced run starts (temporal and spatial locality).
    Locality(Locality),
    /// Disjoint working sets, covered by first writes and updated by hotness (paper 004).
    WorkingSets(WorkingSets),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Component {
    pub weight: f64,
    pub pattern: Pattern,
}

/// Request sizes in bytes, whole sectors.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum SizeDist {
    Fixed {
        bytes: u64,
    },
    /// Uniform over the sector counts between the bounds.
    Uniform {
        min: u64,
        max: u64,
    },
    /// Sizes with relative weights.
    Empirical {
        sizes: Vec<(u64, f64)>,
    },
    /// Geometric sizes (in 4 KiB units for means of at least 4 KiB, else sectors) with this
    /// exact mean over the stream.
    Mean {
        bytes: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Arrival {
    /// One request every 1/iops seconds.
    Fixed { iops: f64 },
    /// Exponential gaps with mean 1/iops seconds.
    Poisson { iops: f64 },
    /// Bursts separated by idle gaps, at the same mean rate `iops`: each request ends its burst
    /// with probability 1/`burst` (geometric bursts of mean `burst` requests); gaps inside a burst
    /// are exponential with mean 1/(`speedup` x iops), gaps between bursts exponential and as long
    /// as keeps the mean gap 1/iops. `burst = 1` or `speedup = 1` is a Poisson stream.
    Bursty { iops: f64, burst: f64, speedup: f64 },
    /// A new request as soon as fewer than `depth` are outstanding; the simulation sets each
    /// arrival when it issues the request (`Workload::closed_loop`).
    Closed { depth: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthSpec {
    /// Preset name or `custom`; names the workload.
    pub name: String,
    pub requests: u64,
    pub read_fraction: f64,
    pub address: Vec<Component>,
    pub read_size: SizeDist,
    pub write_size: SizeDist,
    pub arrival: Arrival,
    /// Bytes of address space used, from 0; `None` or more than the device: the whole device.
    pub footprint_bytes: Option<u64>,
    pub seed: u64,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            name: "custom".into(),
            requests: 100_000,
            read_fraction: 0.5,
            address: vec![Component { weight: 1.0, pattern: Pattern::Uniform }],
            read_size: SizeDist::Fixed { bytes: 4096 },
            write_size: SizeDist::Fixed { bytes: 4096 },
            arrival: Arrival::Poisson { iops: 1000.0 },
            footprint_bytes: None,
            seed: 42,
        }
    }
}

fn bad(key: &str, message: impl Into<String>) -> SimError {
    SimError::config(format!("synthetic.{key}"), message)
}

/// `4096`, `4k`, `4KiB`, `1.5M`, `16GiB`, `1e6`.
pub fn parse_bytes(s: &str) -> Option<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let stem = lower.trim_end_matches("ib").trim_end_matches('b');
    let (number, factor) = match stem.chars().last() {
        Some('k') => (&stem[..stem.len() - 1], 1024f64),
        Some('m') => (&stem[..stem.len() - 1], 1024f64.powi(2)),
        Some('g') => (&stem[..stem.len() - 1], 1024f64.powi(3)),
        Some('t') => (&stem[..stem.len() - 1], 1024f64.powi(4)),
        _ => (stem, 1.0),
    };
    let v: f64 = number.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * factor)
}

fn number(key: &str, s: &str) -> Result<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| bad(key, format!("expected a number, found \"{s}\"")))
}

fn sector_bytes(key: &str, s: &str) -> Result<u64> {
    let v = parse_bytes(s)
        .ok_or_else(|| bad(key, format!("expected a size in bytes such as 4096 or 4KiB, found \"{s}\"")))?;
    if v < 1.0 || v.fract() != 0.0 || !(v as u64).is_multiple_of(SECTOR) {
        return Err(bad(key, format!("expected a positive multiple of 512 bytes, found \"{s}\"")));
    }
    Ok(v as u64)
}

/// `a@w+b@w`: items with optional weights (default 1).
fn weighted(s: &str) -> Vec<(&str, Option<&str>)> {
    s.split('+').map(|item| item.split_once('@').map_or((item, None), |(a, w)| (a, Some(w)))).collect()
}

fn parse_pattern(s: &str) -> Result<Vec<Component>> {
    weighted(s)
        .into_iter()
        .map(|(p, w)| {
            let weight = w.map_or(Ok(1.0), |w| number("addr", w))?;
            let parts: Vec<&str> = p.split(':').collect();
            let pattern = match parts.as_slice() {
                ["uniform"] => Pattern::Uniform,
                ["zipf", theta] => Pattern::Zipf { theta: number("addr", theta)? },
                ["hotcold", access, space] => {
                    Pattern::HotCold { access: number("addr", access)?, space: number("addr", space)? }
                }
                ["seq"] => Pattern::Sequential { streams: 1 },
                ["seq", n] => Pattern::Sequential {
                    streams: n.parse().map_err(|_| bad("addr", format!("expected a stream count, found \"{n}\"")))?,
                },
                ["loc", reuse, distance, read_run, write_run, read_written @ ..] if read_written.len() <= 1 => {
                    Pattern::Locality(Locality {
                        reuse: number("addr", reuse)?,
                        distance: number("addr", distance)?,
                        read_run: number("addr", read_run)?,
                        write_run: number("addr", write_run)?,
                        read_written: read_written.first().map_or(Ok(0.0), |w| number("addr", w))?,
                    })
                }
                ["ws", count, size, skew @ ..] if skew.len() <= 1 => Pattern::WorkingSets(WorkingSets {
                    count: count.parse().map_err(|_| bad("addr", format!("expected a working-set count, found \"{count}\"")))?,
                    mean_bytes: parse_bytes(size).ok_or_else(|| bad("addr", format!("expected a working-set size such as 10MiB, found \"{size}\"")))?,
                    skew: skew.first().map_or(Ok(1.0), |k| number("addr", k))?,
                }),
                _ => {
                    return Err(bad(
                        "addr",
                        format!("expected uniform, zipf:THETA, hotcold:ACCESS:SPACE, seq:STREAMS, loc:REUSE:DIST:RRUN:WRUN[:READ_WRITTEN] or ws:COUNT:SIZE[:SKEW], found \"{p}\""),
                    ))
                }
            };
            Ok(Component { weight, pattern })
        })
        .collect()
}

fn parse_size(key: &str, s: &str) -> Result<SizeDist> {
    let parts: Vec<&str> = s.splitn(2, ':').collect();
    Ok(match parts.as_slice() {
        ["uniform", range] => {
            let (a, b) =
                range.split_once(':').ok_or_else(|| bad(key, format!("expected uniform:MIN:MAX, found \"{s}\"")))?;
            SizeDist::Uniform { min: sector_bytes(key, a)?, max: sector_bytes(key, b)? }
        }
        ["emp", list] => SizeDist::Empirical {
            sizes: weighted(list)
                .into_iter()
                .map(|(b, w)| Ok((sector_bytes(key, b)?, w.map_or(Ok(1.0), |w| number(key, w))?)))
                .collect::<Result<_>>()?,
        },
        ["mean", m] => SizeDist::Mean {
            bytes: parse_bytes(m).ok_or_else(|| bad(key, format!("expected a mean size in bytes, found \"{m}\"")))?,
        },
        [fixed] => SizeDist::Fixed { bytes: sector_bytes(key, fixed)? },
        _ => {
            return Err(bad(key, format!("expected BYTES, uniform:MIN:MAX, emp:B@W+B@W or mean:BYTES, found \"{s}\"")))
        }
    })
}

fn parse_arrival(s: &str) -> Result<Arrival> {
    let (kind, v) = s.split_once(':').ok_or_else(|| {
        bad(
            "arrival",
            format!("expected fixed:IOPS, poisson:IOPS, bursty:IOPS:BURST:SPEEDUP or closed:DEPTH, found \"{s}\""),
        )
    })?;
    Ok(match kind {
        "fixed" => Arrival::Fixed { iops: number("arrival", v)? },
        "poisson" => Arrival::Poisson { iops: number("arrival", v)? },
        "bursty" => {
            let (iops, shape) = v
                .split_once(':')
                .ok_or_else(|| bad("arrival", format!("expected bursty:IOPS:BURST:SPEEDUP, found \"bursty:{v}\"")))?;
            let (burst, speedup) = parse_burst("arrival", shape)?;
            Arrival::Bursty { iops: number("arrival", iops)?, burst, speedup }
        }
        "closed" => Arrival::Closed {
            depth: v.parse().map_err(|_| bad("arrival", format!("expected a queue depth, found \"{v}\"")))?,
        },
        _ => return Err(bad("arrival", format!("expected fixed, poisson, bursty or closed, found \"{kind}\""))),
    })
}

/// `BURST:SPEEDUP`: mean requests per burst, and how much faster than the mean rate they come.
fn parse_burst(key: &str, s: &str) -> Result<(f64, f64)> {
    let (burst, speedup) =
        s.split_once(':').ok_or_else(|| bad(key, format!("expected BURST:SPEEDUP, found \"{s}\"")))?;
    Ok((number(key, burst)?, number(key, speedup)?))
}

impl FromStr for SynthSpec {
    type Err = SimError;

    /// A spec string; a leading item without `=` names a preset to start from.
    fn from_str(s: &str) -> Result<Self> {
        let mut items = s.split(',').map(str::trim).filter(|i| !i.is_empty()).peekable();
        let mut spec = match items.peek() {
            Some(first) if !first.contains('=') => {
                let preset = presets::find(first).ok_or_else(|| {
                    bad("preset", format!("unknown preset \"{first}\" (see `ftlsim list workloads`)"))
                })?;
                items.next();
                preset.spec()
            }
            _ => SynthSpec::default(),
        };
        let mut scale = 1.0;
        let mut burst = None;
        for item in items {
            let (key, value) =
                item.split_once('=').ok_or_else(|| bad("spec", format!("expected key=value, found \"{item}\"")))?;
            match key {
                "requests" => spec.requests = number(key, value).ok().filter(|v| *v >= 0.0).map(|v| v as u64).ok_or_else(|| bad(key, format!("expected a request count, found \"{value}\"")))?,
                "scale" => scale = number(key, value)?,
                "read" => spec.read_fraction = number(key, value)?,
                "write" => spec.read_fraction = 1.0 - number(key, value)?,
                "addr" => spec.address = parse_pattern(value)?,
                "size" => {
                    spec.read_size = parse_size(key, value)?;
                    spec.write_size = spec.read_size.clone();
                }
                "rsize" => spec.read_size = parse_size(key, value)?,
                "wsize" => spec.write_size = parse_size(key, value)?,
                "arrival" => spec.arrival = parse_arrival(value)?,
                "burst" => burst = Some(parse_burst(key, value)?),
                "footprint" => spec.footprint_bytes = Some(parse_bytes(value).ok_or_else(|| bad(key, format!("expected bytes, found \"{value}\"")))? as u64),
                "seed" => spec.seed = value.parse().map_err(|_| bad(key, format!("expected an integer, found \"{value}\"")))?,
                _ => return Err(bad(key, "unknown key (known: requests, scale, read, write, addr, size, rsize, wsize, arrival, burst, footprint, seed)")),
            }
        }
        if let Some((burst, speedup)) = burst {
            // Bursts at the rate the spec (or its preset) already has.
            spec.arrival = match spec.arrival {
                Arrival::Poisson { iops } | Arrival::Bursty { iops, .. } => Arrival::Bursty { iops, burst, speedup },
                _ => return Err(bad("burst", "bursts need a poisson or bursty arrival (arrival=poisson:IOPS)")),
            };
        }
        spec.requests = (spec.requests as f64 * scale).round() as u64;
        spec.validate()?;
        Ok(spec)
    }
}

impl SizeDist {
    fn validate(&self, key: &str) -> Result<()> {
        let ok = match self {
            SizeDist::Fixed { bytes } => *bytes > 0 && bytes % SECTOR == 0,
            SizeDist::Uniform { min, max } => min > &0 && min <= max && min % SECTOR == 0 && max % SECTOR == 0,
            SizeDist::Empirical { sizes } => {
                !sizes.is_empty()
                    && sizes.iter().all(|(b, w)| *b > 0 && b % SECTOR == 0 && *w >= 0.0)
                    && sizes.iter().any(|(_, w)| *w > 0.0)
            }
            SizeDist::Mean { bytes } => bytes.is_finite() && *bytes >= SECTOR as f64,
        };
        if ok {
            Ok(())
        } else {
            Err(bad(
                key,
                format!(
                    "invalid size distribution {self:?}: sizes are positive multiples of 512 bytes, means at least 512"
                ),
            ))
        }
    }
}

impl SynthSpec {
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.read_fraction) {
            return Err(bad("read", format!("must be in [0, 1], found {}", self.read_fraction)));
        }
        if self.address.is_empty()
            || self.address.iter().any(|c| !c.weight.is_finite() || c.weight < 0.0)
            || !self.address.iter().any(|c| c.weight > 0.0)
        {
            return Err(bad("addr", "needs at least one pattern with a positive weight"));
        }
        for c in &self.address {
            match c.pattern {
                Pattern::Zipf { theta } if !theta.is_finite() || theta < 0.0 => return Err(bad("addr", format!("zipf exponent must be at least 0, found {theta}"))),
                Pattern::HotCold { access, space } if !((0.0..=1.0).contains(&access) && space > 0.0 && space < 1.0) => {
                    return Err(bad("addr", format!("hotcold needs an access fraction in [0, 1] and a space fraction in (0, 1), found {access}:{space}")))
                }
                Pattern::Sequential { streams: 0 } => return Err(bad("addr", "seq needs at least one stream")),
                Pattern::Locality(ref l) => {
                    if let Some(problem) = l.problem() {
                        return Err(bad("addr", problem));
                    }
                }
                Pattern::WorkingSets(ref w) => {
                    if let Some(problem) = w.problem() {
                        return Err(bad("addr", problem));
                    }
                }
                _ => {}
            }
        }
        self.read_size.validate("rsize")?;
        self.write_size.validate("wsize")?;
        match self.arrival {
            Arrival::Fixed { iops } | Arrival::Poisson { iops } | Arrival::Bursty { iops, .. }
                if !(iops > 0.0 && iops.is_finite()) =>
            {
                Err(bad("arrival", format!("the rate must be positive, found {iops}")))
            }
            Arrival::Bursty { burst, .. } if burst < 1.0 || burst.is_nan() => {
                Err(bad("burst", format!("the mean burst must be at least 1 request, found {burst}")))
            }
            Arrival::Bursty { speedup, .. } if speedup < 1.0 || speedup.is_nan() => {
                Err(bad("burst", format!("the speedup inside a burst must be at least 1, found {speedup}")))
            }
            Arrival::Closed { depth: 0 } => Err(bad("arrival", "the queue depth must be at least 1")),
            _ => Ok(()),
        }
    }

    /// The stream over a device of `capacity_bytes`.
    pub fn workload(&self, capacity_bytes: u64) -> Result<Workload> {
        self.validate()?;
        let space = self.footprint_bytes.unwrap_or(capacity_bytes).min(capacity_bytes) / SLOT * SLOT;
        if space == 0 {
            return Err(bad("footprint", format!("the address space of {capacity_bytes} bytes holds no 4 KiB slot")));
        }
        let mut state = Generator::new(self, space)?;
        let iter = std::iter::from_fn(move || state.next());
        let mut w = Workload::new(
            format!("synthetic:{}", self.name),
            serde_json::json!({
                "generator": self.name,
                "synthetic": true,
                "stand_in_for": presets::find(&self.name).map(|p| format!("{} ({})", p.trace, p.source)),
                "spec": self,
            }),
            iter,
        );
        if let Arrival::Closed { depth } = self.arrival {
            w.closed_loop = Some(depth);
        }
        Ok(w)
    }
}

/// Sizes with an exact total over a known count.
struct MeanSizes {
    remaining_count: u64,
    remaining_sectors: u64,
}

struct Sizes {
    dist: SizeDist,
    mean: Option<MeanSizes>,
    /// Sizes still to be drawn.
    left: u64,
}

impl Sizes {
    fn new(dist: &SizeDist, count: u64) -> Sizes {
        let mean = match dist {
            SizeDist::Mean { bytes } => Some(MeanSizes {
                remaining_count: count,
                remaining_sectors: (count as f64 * bytes / SECTOR as f64).round().max(count as f64) as u64,
            }),
            _ => None,
        };
        Sizes { dist: dist.clone(), mean, left: count }
    }

    /// The bytes the sizes still to be drawn are expected to total.
    fn expected_remaining(&self) -> f64 {
        let mean = match (&self.dist, &self.mean) {
            (_, Some(m)) => return (m.remaining_sectors * SECTOR) as f64,
            (SizeDist::Fixed { bytes }, _) => *bytes as f64,
            (SizeDist::Uniform { min, max }, _) => (min + max) as f64 / 2.0,
            (SizeDist::Empirical { sizes }, _) => {
                sizes.iter().map(|(b, w)| *b as f64 * w).sum::<f64>() / sizes.iter().map(|(_, w)| w).sum::<f64>()
            }
            (SizeDist::Mean { bytes }, None) => *bytes,
        };
        self.left as f64 * mean
    }

    fn sample(&mut self, rng: &mut Xoshiro256PlusPlus, limit: u64) -> u64 {
        self.left = self.left.saturating_sub(1);
        let bytes = match (&self.dist, &mut self.mean) {
            (SizeDist::Fixed { bytes }, _) => *bytes,
            (SizeDist::Uniform { min, max }, _) => rng.gen_range(min / SECTOR..=max / SECTOR) * SECTOR,
            (SizeDist::Empirical { sizes }, _) => {
                let total: f64 = sizes.iter().map(|(_, w)| w).sum();
                let mut x = rng.gen_range(0.0..total);
                sizes
                    .iter()
                    .find(|(_, w)| {
                        x -= w;
                        x < 0.0
                    })
                    .unwrap_or(&sizes[sizes.len() - 1])
                    .0
            }
            (SizeDist::Mean { .. }, Some(m)) => {
                let sectors = if m.remaining_count <= 1 {
                    m.remaining_sectors.max(1)
                } else {
                    let mu = m.remaining_sectors as f64 / m.remaining_count as f64;
                    let unit = if mu >= 8.0 { 8 } else { 1 };
                    let units = mu / unit as f64;
                    let drawn = if units <= 1.0 {
                        1
                    } else {
                        1 + Geometric::new(1.0 / units).expect("probability in (0, 1]").sample(rng)
                    };
                    // Leave at least a sector for every request still to come.
                    (drawn.saturating_mul(unit))
                        .clamp(1, m.remaining_sectors.saturating_sub(m.remaining_count - 1).max(1))
                };
                m.remaining_count = m.remaining_count.saturating_sub(1);
                m.remaining_sectors = m.remaining_sectors.saturating_sub(sectors);
                sectors * SECTOR
            }
            (SizeDist::Mean { .. }, None) => unreachable!("mean sizes carry their state"),
        };
        bytes.min(limit)
    }
}

struct Generator {
    rng: Xoshiro256PlusPlus,
    requests: u64,
    issued: u64,
    reads_left: u64,
    space: u64,
    slots: u64,
    components: Vec<(f64, Pattern)>,
    zipf: Vec<Option<Zipf<f64>>>,
    /// Multiplier that scatters Zipf ranks over the slots (coprime with the slot count).
    scatter: u64,
    cursors: Vec<Vec<u64>>,
    locality: Vec<Option<LocalityState>>,
    working_sets: Vec<Option<WorkingSetsState>>,
    read_sizes: Sizes,
    write_sizes: Sizes,
    arrival: Arrival,
    now: f64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Generator {
    fn new(spec: &SynthSpec, space: u64) -> Result<Generator> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
        let slots = space / SLOT;
        let reads = (spec.requests as f64 * spec.read_fraction).round() as u64;
        let components: Vec<(f64, Pattern)> = spec.address.iter().map(|c| (c.weight, c.pattern.clone())).collect();
        let zipf = components
            .iter()
            .map(|(_, p)| match p {
                Pattern::Zipf { theta } => Some(Zipf::new(slots, *theta).expect("validated Zipf parameters")),
                _ => None,
            })
            .collect();
        let cursors = components
            .iter()
            .map(|(_, p)| match p {
                Pattern::Sequential { streams } => {
                    (0..*streams as u64).map(|s| s * slots / *streams as u64 * SLOT).collect()
                }
                _ => Vec::new(),
            })
            .collect();
        let locality = components
            .iter()
            .map(|(_, p)| match p {
                Pattern::Locality(l) => Some(LocalityState::new(l)),
                _ => None,
            })
            .collect();
        let working_sets = components
            .iter()
            .map(|(_, p)| match p {
                Pattern::WorkingSets(w) => {
                    WorkingSetsState::new(w, &mut rng, space, SLOT).map(Some).map_err(|e| bad("addr", e))
                }
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        let scatter = [2_654_435_761u64, 2_246_822_519, 3_266_489_917, 668_265_263]
            .into_iter()
            .find(|p| gcd(*p % slots.max(1), slots) == 1 || slots == 1)
            .unwrap_or(1);
        Ok(Generator {
            rng,
            requests: spec.requests,
            issued: 0,
            reads_left: reads,
            space,
            slots,
            components,
            zipf,
            scatter,
            cursors,
            locality,
            working_sets,
            read_sizes: Sizes::new(&spec.read_size, reads),
            write_sizes: Sizes::new(&spec.write_size, spec.requests - reads),
            arrival: spec.arrival.clone(),
            now: 0.0,
        })
    }

    /// A 4 KiB-aligned offset for a request of `len` bytes, inside the space, and the request's
    /// length (a working set may shorten it).
    fn place(&mut self, len: u64, read: bool) -> (u64, u64) {
        let total: f64 = self.components.iter().map(|(w, _)| w).sum();
        let mut x = self.rng.gen_range(0.0..total);
        let mut which = self.components.len() - 1;
        for (i, (w, _)) in self.components.iter().enumerate() {
            if x < *w {
                which = i;
                break;
            }
            x -= w;
        }
        let slot = match &self.components[which].1 {
            Pattern::Uniform => self.rng.gen_range(0..self.slots),
            Pattern::Zipf { .. } => {
                let rank = self.zipf[which].as_ref().expect("zipf sampler").sample(&mut self.rng) as u64 - 1;
                ((rank as u128 * self.scatter as u128) % self.slots as u128) as u64
            }
            Pattern::HotCold { access, space } => {
                let hot = ((self.slots as f64 * space) as u64).clamp(1, self.slots);
                if self.rng.gen_bool(*access) || hot == self.slots {
                    self.rng.gen_range(0..hot)
                } else {
                    self.rng.gen_range(hot..self.slots)
                }
            }
            Pattern::Sequential { streams } => {
                let s = self.rng.gen_range(0..*streams as usize);
                let start = s as u64 * self.slots / *streams as u64 * SLOT;
                let cursor = &mut self.cursors[which][s];
                if *cursor + len > self.space {
                    *cursor = start;
                }
                let offset = *cursor;
                *cursor += len;
                return (offset.min(self.space - len), len);
            }
            Pattern::Locality(_) => {
                let state = self.locality[which].as_mut().expect("locality state");
                return (state.offset(&mut self.rng, read, len, self.space, SLOT), len);
            }
            Pattern::WorkingSets(_) => {
                // This write's bytes are already drawn: add them back to what is to come.
                let write_bytes_left = self.write_sizes.expected_remaining() + if read { 0.0 } else { len as f64 };
                let state = self.working_sets[which].as_mut().expect("working-set state");
                return state.request(&mut self.rng, read, len, write_bytes_left);
            }
        };
        ((slot * SLOT).min(self.space - len) / SECTOR * SECTOR, len)
    }

    fn arrival(&mut self) -> Result<u64> {
        let tick = |ns: f64| (ns / TICK_NS as f64).round() as u64 * TICK_NS;
        match self.arrival {
            Arrival::Fixed { iops } => Ok(tick(self.issued as f64 * 1e9 / iops)),
            Arrival::Poisson { iops } => {
                if self.issued > 0 {
                    self.now += Exp::new(iops / 1e9).expect("positive rate").sample(&mut self.rng);
                }
                Ok(tick(self.now))
            }
            Arrival::Bursty { iops, burst, speedup } => {
                if self.issued > 0 {
                    let inside = 1e9 / (speedup * iops);
                    // Between bursts: B/iops per burst of B requests, less its B - 1 short gaps.
                    let between = inside * (burst * (speedup - 1.0) + 1.0);
                    let mean = if self.rng.gen_bool(1.0 / burst) { between } else { inside };
                    self.now += Exp::new(1.0 / mean).expect("positive rate").sample(&mut self.rng);
                }
                Ok(tick(self.now))
            }
            // Set by the simulation when it issues the request.
            Arrival::Closed { .. } => Ok(0),
        }
    }

    fn next(&mut self) -> Option<Result<Request>> {
        if self.issued == self.requests {
            return None;
        }
        let left = self.requests - self.issued;
        let read = self.rng.gen_range(0..left) < self.reads_left;
        let arrival = match self.arrival() {
            Ok(a) => a,
            Err(e) => {
                self.issued = self.requests;
                return Some(Err(e));
            }
        };
        let space = self.space;
        let len = if read {
            self.read_sizes.sample(&mut self.rng, space)
        } else {
            self.write_sizes.sample(&mut self.rng, space)
        };
        self.reads_left -= read as u64;
        let (offset, len) = self.place(len, read);
        self.issued += 1;
        Some(Ok(Request::new(arrival, if read { IoKind::Read } else { IoKind::Write }, offset, len, self.issued)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(spec: &SynthSpec, capacity: u64) -> Vec<Request> {
        spec.workload(capacity).unwrap().requests.map(|r| r.unwrap()).collect()
    }

    #[test]
    fn spec_strings_parse() {
        let s: SynthSpec = "requests=1000,read=0.25,addr=zipf:0.9@3+seq:2,rsize=uniform:512:8k,wsize=emp:4k@0.5+64KiB@0.5,arrival=fixed:100,seed=7,footprint=1MiB".parse().unwrap();
        assert_eq!(s.requests, 1000);
        assert_eq!(s.address[0], Component { weight: 3.0, pattern: Pattern::Zipf { theta: 0.9 } });
        assert_eq!(s.read_size, SizeDist::Uniform { min: 512, max: 8192 });
        assert_eq!(s.write_size, SizeDist::Empirical { sizes: vec![(4096, 0.5), (65536, 0.5)] });
        assert_eq!(s.footprint_bytes, Some(1 << 20));
        assert!("read=2".parse::<SynthSpec>().unwrap_err().to_string().contains("synthetic.read"));
        assert!("size=1000".parse::<SynthSpec>().unwrap_err().to_string().contains("multiple of 512"));
        assert!("nosuch".parse::<SynthSpec>().unwrap_err().to_string().contains("unknown preset"));
    }

    #[test]
    fn deterministic_exact_counts_and_means() {
        let s: SynthSpec = "requests=20000,read=0.3,addr=hotcold:0.8:0.2@1+uniform@1+zipf:1.1@1+seq:3@1,rsize=mean:6000,wsize=mean:20000".parse().unwrap();
        let cap = 1 << 30;
        let a = collect(&s, cap);
        assert_eq!(a, collect(&s, cap));
        let reads: Vec<_> = a.iter().filter(|r| r.kind == IoKind::Read).collect();
        assert_eq!(reads.len(), 6000);
        let read_bytes: u64 = reads.iter().map(|r| r.len_bytes).sum();
        assert_eq!(read_bytes / 512, (6000.0f64 * 6000.0 / 512.0).round() as u64);
        assert!(a
            .iter()
            .all(|r| r.offset_bytes + r.len_bytes <= cap && r.len_bytes % 512 == 0 && r.arrival_ns % 100 == 0));
        assert!(a.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        assert_eq!(a[0].arrival_ns, 0);
    }

    #[test]
    fn hot_cold_and_sequential_shapes() {
        let s: SynthSpec = "requests=10000,addr=hotcold:0.9:0.1,size=4096".parse().unwrap();
        let cap = 100 << 20;
        let hot = collect(&s, cap).iter().filter(|r| r.offset_bytes < cap / 10).count();
        assert!((8700..9300).contains(&hot), "{hot}");
        let s: SynthSpec = "requests=100,addr=seq:1,size=8192".parse().unwrap();
        let r = collect(&s, cap);
        assert!(r.windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 8192));
    }

    #[test]
    fn fixed_rate_and_closed_loop_arrivals() {
        let s: SynthSpec = "requests=3,arrival=fixed:1000".parse().unwrap();
        assert_eq!(
            collect(&s, 1 << 30).iter().map(|r| r.arrival_ns).collect::<Vec<_>>(),
            vec![0, 1_000_000, 2_000_000]
        );
        // A closed loop leaves arrivals to the simulation (tests/closed_loop.rs).
        let s: SynthSpec = "requests=4,arrival=closed:2".parse().unwrap();
        assert_eq!(s.workload(1 << 30).unwrap().closed_loop, Some(2));
    }

    /// The gaps between arrivals of a spec, in nanoseconds.
    fn gaps(spec: &str) -> Vec<f64> {
        let s: SynthSpec = spec.parse().unwrap();
        collect(&s, 1 << 30).windows(2).map(|w| (w[1].arrival_ns - w[0].arrival_ns) as f64).collect()
    }

    #[test]
    fn bursty_arrivals_keep_the_mean_rate_and_come_in_bursts() {
        // 1,000 requests per second in bursts of 50 at 100 times that rate.
        let bursty = gaps("requests=200000,arrival=bursty:1000:50:100,seed=7");
        let mean = bursty.iter().sum::<f64>() / bursty.len() as f64;
        assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean gap {mean} ns, expected 1 ms");
        // Inside a burst the mean gap is 10 us: about 98% of the gaps (49 of 50) are that short.
        let short = |g: &[f64]| g.iter().filter(|&&x| x < 100_000.0).count() as f64 / g.len() as f64;
        assert!((short(&bursty) - 0.98).abs() < 0.01, "{} of the gaps under 100 us", short(&bursty));
        // A Poisson stream at the same rate has 1 - e^-0.1 = 9.5% of its gaps under 100 us.
        let poisson = gaps("requests=200000,arrival=poisson:1000,seed=7");
        assert!((short(&poisson) - 0.095).abs() < 0.01, "{}", short(&poisson));
        // One-request bursts are a Poisson stream.
        let single = gaps("requests=200000,arrival=bursty:1000:1:100,seed=7");
        assert!((short(&single) - 0.095).abs() < 0.01, "{}", short(&single));
    }

    #[test]
    fn burst_makes_a_presets_poisson_arrivals_bursty_at_its_rate() {
        let plain: SynthSpec = "p001-f1".parse().unwrap();
        let Arrival::Poisson { iops } = plain.arrival else { panic!("{:?}", plain.arrival) };
        let bursty: SynthSpec = "p001-f1,burst=64:200".parse().unwrap();
        assert_eq!(bursty.arrival, Arrival::Bursty { iops, burst: 64.0, speedup: 200.0 });
        let err = |spec: &str| spec.parse::<SynthSpec>().unwrap_err().to_string();
        assert!(err("requests=9,arrival=closed:4,burst=8:10").contains("synthetic.burst"));
        assert!(err("requests=9,burst=0.5:10").contains("at least 1 request"));
        assert!(err("requests=9,burst=8:0.5").contains("speedup"));
        assert!(err("requests=9,burst=8").contains("BURST:SPEEDUP"));
        assert!(err("requests=9,arrival=bursty:1000:8").contains("BURST:SPEEDUP"));
        assert!(err("requests=9,arrival=bursty:-1:8:10").contains("rate must be positive"));
    }
}
