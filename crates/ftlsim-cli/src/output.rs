//! Human and machine output of run results: aligned tables, JSON, CSV.

use ftlsim::RunResult;
use serde_json::Value;

/// Formats an optional ratio, `-` when undefined.
pub fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// An aligned text table; the first column is left-aligned, the rest right-aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].len()).chain([header[c].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, s)| if i == 0 { format!("{s:<w$}", w = widths[i]) } else { format!("{s:>w$}", w = widths[i]) })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = vec![line(header.to_vec())];
    out.push(widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
    out.extend(rows.iter().map(|r| line(r.iter().map(String::as_str).collect())));
    out.join("\n") + "\n"
}

/// The report of one run as a two-column table.
pub fn run_table(r: &RunResult) -> String {
    let m = &r.report;
    let rt = &m.response;
    let mut rows: Vec<Vec<String>> = vec![
        vec!["ftl".into(), r.ftl.clone()],
        vec!["workload".into(), r.workload.clone()],
        vec!["device preset".into(), r.config["preset"].as_str().unwrap_or("").to_string()],
        vec![
            "requests (read / write / trim)".into(),
            format!(
                "{} ({} / {} / {})",
                m.host.requests, m.host.read_requests, m.host.write_requests, m.host.trim_requests
            ),
        ],
        vec!["host pages read / written".into(), format!("{} / {}", m.host.pages_read, m.host.pages_written)],
        vec!["mean response time (us)".into(), format!("{:.1}", rt.mean_us)],
        vec!["  read / write (us)".into(), format!("{:.1} / {:.1}", rt.read.mean_us, rt.write.mean_us)],
        vec![
            "  p50 / p99 / p99.9 / max (us)".into(),
            format!("{:.1} / {:.1} / {:.1} / {:.1}", rt.all.p50_us, rt.all.p99_us, rt.all.p999_us, rt.all.max_us),
        ],
        vec!["mean queueing / access (us)".into(), format!("{:.1} / {:.1}", rt.mean_queueing_us, rt.mean_access_us)],
        vec![
            "flash reads (host/gc/trans/meta)".into(),
            format!("{} / {} / {} / {}", m.reads.host, m.reads.gc, m.reads.translation, m.reads.metadata),
        ],
        vec![
            "flash programs (host/gc/trans/meta)".into(),
            format!("{} / {} / {} / {}", m.programs.host, m.programs.gc, m.programs.translation, m.programs.metadata),
        ],
        vec!["erases".into(), m.erases.total.to_string()],
        vec!["write amplification".into(), opt(m.write_amplification, 3)],
        vec!["block utilization (BU)".into(), opt(m.block_utilization, 3)],
        vec!["valid page move rate (MR)".into(), opt(m.valid_page_move_rate, 3)],
        vec![
            "device utilization (busiest server)".into(),
            opt(m.response.utilization, 3) + if m.response.saturated { " (saturated)" } else { "" },
        ],
        vec![
            "erase count min / mean / max".into(),
            format!("{} / {:.2} / {}", m.erase_count.min, m.erase_count.mean, m.erase_count.max),
        ],
    ];
    if let Some(n) = m.summary_pages_written {
        rows.push(vec!["summary pages written (among meta programs)".into(), n.to_string()]);
    }
    if m.cache.accesses > 0 {
        let c = &m.cache;
        rows.push(vec!["cache hit ratio".into(), opt(c.hit_ratio, 4)]);
        rows.push(vec![
            "  hit / miss 0R / 1R / 2R / RW".into(),
            format!(
                "{} / {} / {} / {} / {}",
                c.hit, c.miss_no_penalty, c.miss_fetch, c.miss_fetch_two, c.miss_writeback
            ),
        ]);
        rows.push(vec![
            "P_rd / H_gcr (paper 002)".into(),
            format!("{} / {}", opt(c.dirty_eviction_probability, 4), opt(c.gc_hit_ratio, 4)),
        ]);
    }
    if let Some(w) = &m.wa_model {
        rows.push(vec![
            "WA measured (Eq. 12) / model (Eq. 13)".into(),
            format!("{:.3} / {:.3} ({:+.1}%)", w.measured, w.model, w.gap * 100.0),
        ]);
    }
    if let Some(t) = &m.time_model {
        rows.push(vec![
            "flash us/access measured / model (Eqs. 1, 10, 11)".into(),
            format!("{:.1} / {:.1} ({:+.1}%)", t.measured_us, t.model_us, t.gap * 100.0),
        ]);
    }
    if let Some(g) = &m.merges {
        let k = &g.counts;
        rows.push(vec![
            "merges switch / partial / full".into(),
            format!("{} / {} / {}", k.switch_merges, k.partial_merges, k.full_merges),
        ]);
        rows.push(vec![
            "  pages copied (per merge)".into(),
            format!("{} ({})", k.pages_copied, opt(g.copies_per_merge, 2)),
        ]);
        rows.push(vec![
            "  log merges: valid pages / utilization / data blocks".into(),
            format!(
                "{} : {} / {} / {}",
                k.log_merges,
                opt(g.mean_log_valid_pages, 2),
                opt(g.log_utilization, 3),
                opt(g.data_blocks_per_log_merge, 2)
            ),
        ]);
        if k.second_chance_skips > 0 {
            rows.push(vec!["  second-chance skips".into(), k.second_chance_skips.to_string()]);
        }
        rows.push(vec!["total flash time, s (paper 003)".into(), format!("{:.3}", g.total_flash_time_s)]);
    }
    if let Some(b) = &m.buffer {
        let k = &b.counts;
        rows.push(vec![
            "write buffer: read / write hit ratio".into(),
            format!("{} / {}", opt(b.read_hit_ratio, 3), opt(b.write_hit_ratio, 3)),
        ]);
        rows.push(vec![
            "  evictions / writes that waited (mean waiting)".into(),
            format!("{} / {} ({:.2})", k.evictions, k.waited_pages, b.mean_waiting_writes),
        ]);
    }
    if let Some(d) = &m.dies {
        rows.push(vec![
            "die utilization mean / max".into(),
            format!("{} / {}", opt(d.mean_utilization, 3), opt(d.max_utilization, 3)),
        ]);
        rows.push(vec![
            "  idle slots (mean, us)".into(),
            format!("{} ({})", d.idle_slots, opt(d.mean_idle_slot_us, 1)),
        ]);
        if d.background_gc_victims > 0 {
            rows.push(vec!["  GC victims in the background".into(), d.background_gc_victims.to_string()]);
        }
    }
    if let Some(c) = &m.cpu {
        rows.push(vec![
            "controller CPU: compress / decompress tasks".into(),
            format!("{} / {}", c.compress, c.decompress),
        ]);
        rows.push(vec![
            "  CPU utilization mean / max".into(),
            format!("{} / {}", opt(c.mean_utilization, 3), opt(c.max_utilization, 3)),
        ]);
    }
    if let Some(s) = &m.suspension {
        rows.push(vec![
            "P/E suspended: programs / erases (fraction)".into(),
            format!("{} / {} ({})", s.suspended_programs, s.suspended_erases, opt(s.suspended_fraction, 4)),
        ]);
        rows.push(vec![
            "  by erase-read / phase-end / cancel / write".into(),
            format!(
                "{} / {} / {} / {}",
                s.erase_by_read, s.program_at_phase_end, s.program_cancelled, s.erase_by_write
            ),
        ]);
        rows.push(vec![
            "  original / effective P/E latency (us)".into(),
            format!("{} / {}", opt(s.mean_original_us, 1), opt(s.mean_effective_us, 1)),
        ]);
        rows.push(vec!["  mean wait for the suspension point (us)".into(), opt(s.mean_wait_for_suspension_us, 2)]);
        rows.push(vec!["device write latency, mean (us)".into(), opt(s.mean_device_write_us, 1)]);
    }
    if let Some(e) = &m.diffecc {
        let modes = |c: &ftlsim::metrics::ModeCounts| format!("{} / {} / {} / {}", c.n1, c.n2, c.n4, c.n8);
        rows.push(vec!["DiffECC writes in N = 1 / 2 / 4 / 8".into(), modes(&e.writes_by_mode)]);
        rows.push(vec!["  reads of pages in N = 1 / 2 / 4 / 8".into(), modes(&e.reads_by_mode)]);
        rows.push(vec![
            "  T_idle_avg device / die (ms)".into(),
            format!("{} / {}", opt(e.t_idle_avg_ms, 3), opt(e.die_t_idle_avg_ms, 3)),
        ]);
    }
    if m.recovery.events > 0 {
        rows.push(vec![
            "recovery pages read (RP)".into(),
            format!("{} ({})", m.recovery.pages_read, opt(m.recovery.rp, 4)),
        ]);
    }
    for s in &m.sram {
        rows.push(vec![format!("SRAM: {}", s.structure), format!("{:.1} KB", s.bytes as f64 / 1024.0)]);
    }
    rows.push(vec!["SRAM total".into(), format!("{:.1} KB", m.sram_total_bytes as f64 / 1024.0)]);
    let s = &m.simulation;
    rows.push(vec!["simulation wall time (s)".into(), format!("{:.3}", s.wall_seconds)]);
    rows.push(vec!["flash page ops per second".into(), format!("{:.0}", s.flash_page_ops_per_second)]);
    table(&["metric", "value"], &rows)
}

/// A comparison of several FTLs on one workload, with NT = t_FTL / t_PFTL when PFTL is present.
pub fn compare_table(results: &[RunResult]) -> String {
    let baseline = results.iter().find(|r| r.ftl == "pftl").map(|r| r.report.response.mean_us);
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let m = &r.report;
            let t = &m.response;
            vec![
                r.ftl.clone(),
                format!("{:.1}", t.mean_us),
                opt(baseline.filter(|b| *b > 0.0).map(|b| t.mean_us / b), 3),
                format!("{:.1}", t.all.p50_us),
                format!("{:.1}", t.all.p99_us),
                format!("{:.1}", t.all.max_us),
                format!("{:.1}", t.mean_queueing_us),
                format!("{:.1}", t.mean_access_us),
                opt(t.utilization, 3) + if t.saturated { "!" } else { "" },
                opt(m.write_amplification, 3),
                opt(m.block_utilization, 3),
                opt(m.valid_page_move_rate, 3),
                m.erases.total.to_string(),
                (m.reads.translation + m.spare_reads.translation).to_string(),
                m.programs.translation.to_string(),
                opt(m.cache.hit_ratio, 4),
                format!("{:.1}", m.sram_total_bytes as f64 / 1024.0),
            ]
        })
        .collect();
    table(
        &[
            "ftl",
            "mean_us",
            "NT",
            "p50_us",
            "p99_us",
            "max_us",
            "queue_us",
            "service_us",
            "util",
            "WA",
            "BU",
            "MR",
            "erases",
            "trans_reads",
            "trans_writes",
            "hit_ratio",
            "sram_KB",
        ],
        &rows,
    )
}

/// Flattens a JSON object into dotted keys (arrays of objects are skipped; the SRAM list is
/// summarised by `report.sram_total_bytes`).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        Value::Array(_) => {}
        Value::Null => out.push((prefix.to_string(), String::new())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV header line and one row per run: identity columns, then every report field.
pub fn csv(results: &[RunResult]) -> String {
    csv_rows(&results.iter().collect::<Vec<_>>(), &vec![Vec::new(); results.len()])
}

/// Like [`csv`], with extra leading columns per run (`extra[i]` for `results[i]`).
pub fn csv_rows(results: &[&RunResult], extra: &[Vec<(String, String)>]) -> String {
    let rows: Vec<Vec<(String, String)>> = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cells = extra[i].clone();
            cells.extend([
                ("ftl".to_string(), r.ftl.clone()),
                ("workload".to_string(), r.workload.clone()),
                ("preset".to_string(), r.config["preset"].as_str().unwrap_or("").to_string()),
                ("version".to_string(), r.version.to_string()),
            ]);
            flatten("", &serde_json::to_value(&r.report).expect("report serialises"), &mut cells);
            cells
        })
        .collect();
    // Every column any row has, in the order first met: a section only some schemes report
    // (`merges`) is an empty cell in the other rows.
    let mut columns: Vec<&str> = Vec::new();
    for (key, _) in rows.iter().flatten() {
        if !columns.contains(&key.as_str()) {
            columns.push(key);
        }
    }
    let mut lines = vec![columns.iter().map(|k| csv_cell(k)).collect::<Vec<_>>().join(",")];
    for row in &rows {
        let value = |key: &str| row.iter().find(|(k, _)| k == key).map_or(String::new(), |(_, v)| csv_cell(v));
        lines.push(columns.iter().map(|k| value(k)).collect::<Vec<_>>().join(","));
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns() {
        let t = table(&["a", "bb"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "a    bb\n---  --\nxyz   1\n");
    }

    #[test]
    fn csv_quotes_cells_with_commas() {
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("plain"), "plain");
    }
}
