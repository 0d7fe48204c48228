//! Tidy output: one flat row per run (identity, swept values, NT, FTL parameters, every report
//! metric as a dotted column), as CSV or JSON lines, the same columns a Python data frame has.

use serde_json::{Map, Value};

use crate::experiment::ExperimentRun;

/// One row: `experiment, workload, source, sweep.<key>..., nt, ftl, trace, preset, seed,
/// version, key, param.<name>..., report.<metric>...` (arrays in the report are left out).
pub fn row(run: &ExperimentRun, key: &str) -> Vec<(String, Value)> {
    let result = run.result_value();
    let mut cells: Vec<(String, Value)> = vec![
        ("experiment".into(), run.experiment.clone().into()),
        ("workload".into(), run.workload.clone().into()),
        ("source".into(), run.source.clone().into()),
    ];
    cells.extend(run.point.iter().map(|(k, v)| (format!("sweep.{k}"), typed(v))));
    cells.push(("nt".into(), run.normalized_response_time.map_or(Value::Null, Value::from)));
    cells.push(("ftl".into(), result["ftl"].clone()));
    cells.push(("trace".into(), result["workload"].clone()));
    cells.push(("preset".into(), result["config"]["preset"].clone()));
    cells.push(("seed".into(), result["config"]["seed"].clone()));
    cells.push(("version".into(), result["version"].clone()));
    cells.push(("key".into(), key.into()));
    if let Value::Object(params) = &result["ftl_params"] {
        flatten("param", params, &mut cells);
    }
    if let Value::Object(report) = &result["report"] {
        flatten("report", report, &mut cells);
    }
    cells
}

/// A swept value as the TOML scalar it shows (so a data frame's column of numbers is numeric
/// and a string loses its quotes); a table's label stays as shown.
fn typed(shown: &str) -> Value {
    match crate::config::parse_value(shown) {
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) if f.is_finite() => f.into(),
        toml::Value::Boolean(b) => b.into(),
        toml::Value::String(s) => s.into(),
        _ => shown.into(),
    }
}

fn flatten(prefix: &str, map: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
    for (k, v) in map {
        let key = format!("{prefix}.{k}");
        match v {
            Value::Object(inner) => flatten(&key, inner, out),
            Value::Array(_) => {}
            other => out.push((key, other.clone())),
        }
    }
}

/// Rows as JSON lines, columns in row order.
pub fn json_lines(rows: &[Vec<(String, Value)>]) -> String {
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), v)).collect();
        out.push('{');
        out.push_str(&cells.join(","));
        out.push_str("}\n");
    }
    out
}

/// Rows as CSV: every column any row has, in the order first met (a section only some schemes
/// report is an empty cell in the others); numbers as JSON writes them (exact), strings bare.
pub fn csv(rows: &[Vec<(String, Value)>]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for (key, _) in rows.iter().flatten() {
        if !columns.contains(&key.as_str()) {
            columns.push(key);
        }
    }
    let mut lines = vec![columns.iter().map(|k| cell(k)).collect::<Vec<_>>().join(",")];
    for row in rows {
        let value = |key: &str| {
            row.iter().find(|(k, _)| k == key).map_or(String::new(), |(_, v)| match v {
                Value::Null => String::new(),
                Value::String(s) => cell(s),
                other => cell(&other.to_string()),
            })
        };
        lines.push(columns.iter().map(|k| value(k)).collect::<Vec<_>>().join(","));
    }
    lines.join("\n") + "\n"
}

fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fills_missing_columns_and_quotes() {
        let rows = vec![
            vec![("a".to_string(), Value::from(1)), ("b".to_string(), Value::from("x,y"))],
            vec![("a".to_string(), Value::from(2.5)), ("c".to_string(), Value::Null)],
        ];
        assert_eq!(csv(&rows), "a,b,c\n1,\"x,y\",\n2.5,,\n");
        assert_eq!(json_lines(&rows[..1]), "{\"a\":1,\"b\":\"x,y\"}\n");
    }

    #[test]
    fn swept_numbers_become_numbers() {
        assert_eq!(typed("8192"), Value::from(8192));
        assert_eq!(typed("0.5"), Value::from(0.5));
        assert_eq!(typed("8KB"), Value::from("8KB"));
        assert_eq!(typed("\"fold\""), Value::from("fold"));
    }
}
