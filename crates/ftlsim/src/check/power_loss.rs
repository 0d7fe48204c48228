//! When to simulate power losses: `check.power_loss_at` in the configuration, `--power-loss-at`
//! on the command line.
//!
//! Syntax: empty or `none` (never); `N` or `N,M,...` (after those requests, counted from 1);
//! `random:K` (K distinct points drawn uniformly from the workload's requests when its length is
//! known, else from the first [`RANDOM_SPAN_DEFAULT`]); `random:K:N` (from the first N requests);
//! `end` (after the last request, when the workload's length is known: paper 000 §8.2.5's crash
//! at the end of the trace).
//! Random points are drawn from the run's seed, so a run repeats exactly.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::{Result, SimError};

/// Requests `random:K` draws from when the workload's length is unknown (a trace).
pub const RANDOM_SPAN_DEFAULT: u64 = 10_000;

const FIELD: &str = "check.power_loss_at";

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PowerLossPlan {
    #[default]
    Never,
    /// After each of these requests (1-based counts of requests served).
    At(Vec<u64>),
    /// `count` distinct points from `1..=span`; `span` defaults to the workload's length.
    Random { count: u64, span: Option<u64> },
    /// After the last request (none while the workload's length is unknown).
    End,
}

impl PowerLossPlan {
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        let number = |s: &str, what: &str| -> Result<u64> {
            match s.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(SimError::config(
                    FIELD,
                    format!("{what} must be a positive integer, found \"{s}\" in \"{spec}\""),
                )),
            }
        };
        if spec.is_empty() || spec == "none" {
            return Ok(PowerLossPlan::Never);
        }
        if spec == "end" {
            return Ok(PowerLossPlan::End);
        }
        if let Some(rest) = spec.strip_prefix("random:") {
            let (count, span) = match rest.split_once(':') {
                Some((k, n)) => (number(k, "the number of power losses")?, Some(number(n, "the request range")?)),
                None => (number(rest, "the number of power losses")?, None),
            };
            if let Some(span) = span.filter(|&s| s < count) {
                return Err(SimError::config(
                    FIELD,
                    format!("{count} distinct power losses do not fit in {span} requests"),
                ));
            }
            return Ok(PowerLossPlan::Random { count, span });
        }
        let points =
            spec.split(',').map(|p| number(p, "a request index")).collect::<Result<Vec<_>>>().map_err(|e| match e {
                SimError::Config { field, message } => SimError::Config {
                    field,
                    message: format!("{message} (expected N, N,M,..., random:K, random:K:N or end)"),
                },
                other => other,
            })?;
        Ok(PowerLossPlan::At(points))
    }

    /// The points, sorted; `requests` is the workload's length when known.
    pub fn points(&self, seed: u64, requests: Option<u64>) -> Result<Vec<u64>> {
        let mut points = match self {
            PowerLossPlan::Never => Vec::new(),
            PowerLossPlan::End => requests.into_iter().collect(),
            PowerLossPlan::At(points) => {
                if let Some((&late, requests)) = points.iter().max().zip(requests).filter(|(&p, r)| p > *r) {
                    return Err(SimError::config(
                        FIELD,
                        format!(
                            "a power loss after request {late} never happens: the workload has {requests} requests"
                        ),
                    ));
                }
                points.clone()
            }
            PowerLossPlan::Random { count, span } => {
                if let Some((span, requests)) = span.zip(requests).filter(|(s, r)| s > r) {
                    return Err(SimError::config(
                        FIELD,
                        format!("random:{count}:{span} draws from {span} requests, but the workload has {requests}"),
                    ));
                }
                let span = span.or(requests).unwrap_or(RANDOM_SPAN_DEFAULT);
                if span < *count {
                    return Err(SimError::config(
                        FIELD,
                        format!("{count} distinct power losses do not fit in a workload of {span} requests"),
                    ));
                }
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15);
                rand::seq::index::sample(&mut rng, span as usize, *count as usize)
                    .into_iter()
                    .map(|i| i as u64 + 1)
                    .collect()
            }
        };
        points.sort_unstable();
        points.dedup();
        Ok(points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(PowerLossPlan::parse("").unwrap(), PowerLossPlan::Never);
        assert_eq!(PowerLossPlan::parse("none").unwrap(), PowerLossPlan::Never);
        assert_eq!(PowerLossPlan::parse("7").unwrap(), PowerLossPlan::At(vec![7]));
        assert_eq!(PowerLossPlan::parse("9, 3").unwrap().points(0, None).unwrap(), vec![3, 9]);
        assert_eq!(PowerLossPlan::parse("random:2").unwrap(), PowerLossPlan::Random { count: 2, span: None });
        assert_eq!(PowerLossPlan::parse("random:2:50").unwrap(), PowerLossPlan::Random { count: 2, span: Some(50) });
        let end = PowerLossPlan::parse("end").unwrap();
        assert_eq!((end.points(0, Some(40)).unwrap(), end.points(0, None).unwrap()), (vec![40], vec![]));
    }

    #[test]
    fn bad_specs_name_the_field_and_the_problem() {
        for (spec, what) in [
            ("0", "positive"),
            ("x", "\"x\""),
            ("5,,6", "request index"),
            ("random:", "number of power losses"),
            ("random:3:2", "do not fit"),
            ("random:1:0", "request range"),
        ] {
            let err = PowerLossPlan::parse(spec).unwrap_err().to_string();
            assert!(err.contains(FIELD) && err.contains(what), "{spec}: {err}");
        }
    }

    #[test]
    fn random_points_are_distinct_in_range_and_repeat_with_the_seed() {
        let plan = PowerLossPlan::parse("random:20").unwrap();
        let a = plan.points(1, Some(30)).unwrap();
        assert_eq!(a.len(), 20);
        assert!(a.iter().all(|&p| (1..=30).contains(&p)));
        assert_eq!(a, plan.points(1, Some(30)).unwrap());
        assert_ne!(a, plan.points(2, Some(30)).unwrap());
        assert!(plan.points(1, None).unwrap().iter().all(|&p| p <= RANDOM_SPAN_DEFAULT));
        assert!(plan.points(1, Some(19)).unwrap_err().to_string().contains("19 requests"));
    }
}
