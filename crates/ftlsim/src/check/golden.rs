//! Golden outputs: results recorded in the repository that every later build must reproduce
//! bit for bit. A refactor never changes them; a commit that changes results on purpose
//! re-records them (`FTLSIM_BLESS=1 cargo test`) and explains each difference in
//! `docs/validation.md`.

use std::path::Path;

use serde_json::Value;

/// Set to `1` to (re)write the golden files instead of comparing against them.
pub const BLESS_VAR: &str = "FTLSIM_BLESS";

/// Fields of `report.simulation` that describe the simulation itself (flash operations and
/// simulated time) rather than the host machine (wall clock, rates, memory): only these are kept.
const SIMULATION_RESULTS: &[&str] = &["flash_page_ops", "simulated_seconds"];

/// Removes what depends on the machine rather than the inputs from a run result (the JSON of
/// `ftlsim run --json`, or a value holding one under `result`): the wall-clock and memory figures
/// of `report.simulation`.
pub fn strip_machine_fields(run: &mut Value) {
    let report = match run.get_mut("report") {
        Some(report) => report,
        None => match run.pointer_mut("/result/report") {
            Some(report) => report,
            None => return,
        },
    };
    if let Some(Value::Object(sim)) = report.get_mut("simulation") {
        sim.retain(|key, _| SIMULATION_RESULTS.contains(&key.as_str()));
    }
}

/// Compares `actual` with the golden file at `path` (or records it when [`BLESS_VAR`] is `1`).
/// The error names the file and the first line that differs.
pub fn check(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var(BLESS_VAR).is_ok_and(|v| v == "1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        return std::fs::write(path, actual).map_err(|e| format!("{}: {e}", path.display()));
    }
    let expected =
        std::fs::read_to_string(path).map_err(|e| format!("{}: {e} (record it with {BLESS_VAR}=1)", path.display()))?;
    if expected == actual {
        return Ok(());
    }
    let (mut want, mut got) = (expected.lines(), actual.lines());
    for line in 1.. {
        match (want.next(), got.next()) {
            (Some(w), Some(g)) if w == g => continue,
            (w, g) => {
                return Err(format!(
                    "{}: results differ from the golden output at line {line}\n  golden: {}\n  now:    {}\n\
                     A refactor must not change results; a deliberate change re-records the goldens \
                     ({BLESS_VAR}=1) and explains each difference in docs/validation.md.",
                    path.display(),
                    clip(w.unwrap_or("<end of file>")),
                    clip(g.unwrap_or("<end of output>")),
                ))
            }
        }
    }
    unreachable!("two different texts differ at some line")
}

fn clip(line: &str) -> String {
    const MAX: usize = 2000;
    match line.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_fields_are_stripped_and_results_kept() {
        let mut run = serde_json::json!({"report": {"simulation": {"wall_seconds": 1.5, "flash_page_ops": 7, "state_bytes": 9}, "erases": 3}});
        strip_machine_fields(&mut run);
        assert_eq!(run, serde_json::json!({"report": {"simulation": {"flash_page_ops": 7}, "erases": 3}}));
    }

    #[test]
    fn a_difference_names_the_file_and_line() {
        let path = std::env::temp_dir().join(format!("ftlsim-golden-{}.txt", std::process::id()));
        std::fs::write(&path, "a\nb\n").unwrap();
        assert!(check(&path, "a\nb\n").is_ok());
        let err = check(&path, "a\nc\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("golden: b") && err.contains("now:    c"), "{err}");
        std::fs::remove_file(&path).ok();
    }
}
