//! The benchmark figures recorded in the docs, and a run compared with them.
//!
//! `docs/performance.md` keeps a Markdown table under a heading that starts with "Recorded
//! figures": one row per scenario, keyed by FTL, scenario and preset, with host pages and flash
//! operations per CPU second (millions) and state bytes per physical page. `ftlsim bench
//! --compare docs/performance.md` (what `scripts/bench.sh` runs) prints each measured figure
//! beside the recorded one.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::bench_cmd::Measured;
use crate::output::table;

/// The columns of the recorded table, in order.
const COLUMNS: [&str; 6] =
    ["ftl", "scenario", "preset", "M host pages per CPU s", "M flash ops per CPU s", "state B per page"];

#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRow {
    pub ftl: String,
    pub scenario: String,
    pub preset: String,
    pub host_pages_per_cpu_second: f64,
    pub flash_ops_per_cpu_second: f64,
    pub state_bytes_per_page: f64,
}

#[derive(Debug)]
pub struct Recorded {
    rows: Vec<RecordedRow>,
}

/// One measured scenario beside its recorded figures (`None` when the scenario is not recorded).
#[derive(Debug, Serialize)]
pub struct Comparison {
    ftl: String,
    scenario: String,
    preset: String,
    host_pages_per_cpu_second: f64,
    recorded_host_pages_per_cpu_second: Option<f64>,
    state_bytes_per_page: f64,
    recorded_state_bytes_per_page: Option<f64>,
}

fn cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

impl Recorded {
    pub fn read(path: &Path) -> Result<Recorded> {
        let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
        Recorded::parse(&text).with_context(|| format!("{}: recorded benchmark figures", path.display()))
    }

    /// The first table after a heading that starts with "Recorded figures".
    pub fn parse(text: &str) -> Result<Recorded> {
        let mut lines = text.lines().enumerate().skip_while(|(_, l)| {
            !(l.starts_with('#') && l.trim_start_matches('#').trim().starts_with("Recorded figures"))
        });
        if lines.next().is_none() {
            bail!("no heading \"Recorded figures\"");
        }
        let mut lines = lines.skip_while(|(_, l)| !l.starts_with('|'));
        let Some((header_line, header)) = lines.next() else { bail!("no table under \"Recorded figures\"") };
        if cells(header) != COLUMNS {
            bail!("line {}: the table's columns must be: {}", header_line + 1, COLUMNS.join(" | "));
        }
        let mut rows = Vec::new();
        for (i, line) in lines.skip(1).take_while(|(_, l)| l.starts_with('|')) {
            let c = cells(line);
            if c.len() != COLUMNS.len() {
                bail!("line {}: {} cells, expected {}", i + 1, c.len(), COLUMNS.len());
            }
            let number = |k: usize| {
                c[k].parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .with_context(|| format!("line {}: field \"{}\": not a number: {:?}", i + 1, COLUMNS[k], c[k]))
            };
            rows.push(RecordedRow {
                ftl: c[0].clone(),
                scenario: c[1].clone(),
                preset: c[2].clone(),
                host_pages_per_cpu_second: number(3)? * 1e6,
                flash_ops_per_cpu_second: number(4)? * 1e6,
                state_bytes_per_page: number(5)?,
            });
        }
        Ok(Recorded { rows })
    }

    fn find(&self, m: &Measured) -> Option<&RecordedRow> {
        self.rows.iter().find(|r| r.ftl == m.ftl && r.scenario == m.scenario && r.preset == m.preset)
    }

    pub fn compare(&self, measured: &[Measured]) -> Vec<Comparison> {
        measured
            .iter()
            .map(|m| {
                let recorded = self.find(m);
                Comparison {
                    ftl: m.ftl.to_string(),
                    scenario: m.scenario.to_string(),
                    preset: m.preset.to_string(),
                    host_pages_per_cpu_second: m.host_pages_per_cpu_second(),
                    recorded_host_pages_per_cpu_second: recorded.map(|r| r.host_pages_per_cpu_second),
                    state_bytes_per_page: m.state_bytes_per_page,
                    recorded_state_bytes_per_page: recorded.map(|r| r.state_bytes_per_page),
                }
            })
            .collect()
    }

    /// Each scenario's speed and state beside the recorded figures, with the change in percent.
    pub fn compare_table(&self, measured: &[Measured]) -> String {
        let change = |now: f64, then: Option<f64>| match then {
            Some(then) if then > 0.0 => format!("{:+.1}%", (now / then - 1.0) * 100.0),
            Some(_) => "-".to_string(),
            None => "not recorded".to_string(),
        };
        let rows: Vec<Vec<String>> = self
            .compare(measured)
            .into_iter()
            .map(|c| {
                vec![
                    c.ftl,
                    c.scenario,
                    c.preset,
                    c.recorded_host_pages_per_cpu_second.map_or("-".into(), |v| format!("{:.2}", v / 1e6)),
                    format!("{:.2}", c.host_pages_per_cpu_second / 1e6),
                    change(c.host_pages_per_cpu_second, c.recorded_host_pages_per_cpu_second),
                    c.recorded_state_bytes_per_page.map_or("-".into(), |v| format!("{v:.2}")),
                    format!("{:.2}", c.state_bytes_per_page),
                    change(c.state_bytes_per_page, c.recorded_state_bytes_per_page),
                ]
            })
            .collect();
        let header = [
            "ftl",
            "scenario",
            "preset",
            "recorded Mhost_pages/cpu_s",
            "now",
            "change",
            "recorded state_B/page",
            "now",
            "change",
        ];
        table(&header, &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Performance\n\nText.\n\n## Recorded figures\n\nSome words.\n\n\
| ftl | scenario | preset | M host pages per CPU s | M flash ops per CPU s | state B per page |\n\
|---|---|---|---|---|---|\n\
| pftl | random 4K writes | mlc8g | 10.5 | 24.0 | 12.20 |\n\
| dftl | oltp-mix 50% reads | mlc8g | 2.5 | 3.0 | 20.10 |\n\nAfter.\n| not | a | row |\n";

    fn measured(ftl: &'static str, scenario: &'static str, cpu_seconds: f64) -> Measured {
        Measured {
            ftl,
            scenario,
            preset: "mlc8g",
            requests: 1000,
            wall_seconds: 1.0,
            cpu_seconds,
            flash_ops: 2000,
            host_pages: 1000.0,
            write_amplification: None,
            state_bytes_per_page: 12.2,
        }
    }

    #[test]
    fn the_recorded_table_is_read_by_its_heading() {
        let recorded = Recorded::parse(DOC).unwrap();
        assert_eq!(recorded.rows.len(), 2);
        assert_eq!(recorded.rows[1].ftl, "dftl");
        assert_eq!(recorded.rows[1].scenario, "oltp-mix 50% reads");
        assert_eq!(recorded.rows[0].host_pages_per_cpu_second, 10.5e6);
        assert_eq!(recorded.rows[1].state_bytes_per_page, 20.1);
    }

    #[test]
    fn a_run_is_set_beside_its_recorded_row() {
        let recorded = Recorded::parse(DOC).unwrap();
        let now = [measured("pftl", "random 4K writes", 1e-4), measured("cpm", "random 4K writes", 1e-3)];
        let out = recorded.compare_table(&now);
        // 1000 host pages in 0.1 ms: 10.0 M per CPU second against 10.5 M recorded.
        let pftl = out.lines().find(|l| l.starts_with("pftl")).unwrap();
        assert!(pftl.contains("10.50") && pftl.contains("10.00") && pftl.contains("-4.8%"), "{pftl}");
        assert!(pftl.contains("+0.0%"), "{pftl}");
        assert!(out.lines().any(|l| l.starts_with("cpm") && l.contains("not recorded")), "{out}");
    }

    #[test]
    fn a_malformed_table_names_the_line_and_field() {
        let bad = DOC.replace("| 2.5 |", "| fast |");
        let err = format!("{:#}", Recorded::parse(&bad).unwrap_err());
        assert!(err.contains("line 12") && err.contains("M host pages per CPU s") && err.contains("fast"), "{err}");
        let err = format!("{:#}", Recorded::parse("# Nothing here\n").unwrap_err());
        assert!(err.contains("Recorded figures"), "{err}");
        let err = format!("{:#}", Recorded::parse(&DOC.replace("| preset |", "| device |")).unwrap_err());
        assert!(err.contains("line 9") && err.contains("columns"), "{err}");
    }
}
