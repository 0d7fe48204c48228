//! The results cache: one file per run, `<key>.json`, holding the run's result as written. The
//! key is a content hash of what determines the result: the resolved configuration, the FTL,
//! the workload (a trace file's path, size and modification time; a synthetic workload's spec
//! and length) and the ftlsim version. A run whose key is in the cache is not run again, so a
//! sweep that was interrupted, or run again with more points, runs only what is missing.
//!
//! The version is the crate's: results cached by a development build are reused by a later
//! build of the same version, so clear the cache after changing the simulator.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::config::Config;
use crate::error::{Result, SimError};

/// The hash of a run's identity, 32 hex digits.
pub fn key(config: &Config, ftl: &str, workload: &serde_json::Value) -> String {
    let identity = json!({
        "version": crate::VERSION,
        "ftl": ftl,
        "config": config.to_json(),
        "workload": workload,
    });
    format!("{:032x}", fnv1a_128(identity.to_string().as_bytes()))
}

/// What identifies a trace file's contents without reading it: where it is, its size and when
/// it was last written.
pub fn trace_identity(path: &Path) -> Result<serde_json::Value> {
    let meta = std::fs::metadata(path).map_err(|e| SimError::input(path.display().to_string(), e.to_string()))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(json!({
        "path": path.display().to_string(),
        "canonical": canonical.display().to_string(),
        "bytes": meta.len(),
        "modified_ns": modified,
    }))
}

/// FNV-1a, 128 bits: stable across platforms and Rust versions (unlike `std`'s hasher).
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    bytes.iter().fold(OFFSET, |h, b| (h ^ *b as u128).wrapping_mul(PRIME))
}

/// A directory of cached results.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| SimError::input(dir.display().to_string(), format!("cannot create the results cache: {e}")))?;
        Ok(Cache { dir: dir.to_path_buf() })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The result stored under `key`, if any (an unreadable or foreign file counts as missing
    /// and is run again).
    pub fn get(&self, key: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        (value["tool"] == "ftlsim" && value["version"] == crate::VERSION).then_some(text)
    }

    /// Stores a result; written to a temporary file and renamed, so an interrupted write never
    /// leaves a partial entry.
    pub fn put(&self, key: &str, result_json: &str) -> Result<()> {
        // Unique per write: two runs with one key (a point that does not change an FTL) may
        // finish together.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temporary = self.dir.join(format!(".{key}.{}.{n}.tmp", std::process::id()));
        let fail = |e: std::io::Error| SimError::input(self.dir.display().to_string(), format!("results cache: {e}"));
        std::fs::write(&temporary, result_json).map_err(fail)?;
        std::fs::rename(&temporary, self.path(key)).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_128_matches_the_reference_vectors() {
        assert_eq!(fnv1a_128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }

    #[test]
    fn the_key_changes_with_the_configuration_the_ftl_and_the_workload() {
        let config = Config::preset("mlc8g").unwrap();
        let w = json!({"synthetic": "p000-hm0", "requests": 100});
        let k = key(&config, "dftl", &w);
        assert_eq!(k.len(), 32);
        assert_eq!(k, key(&config, "dftl", &w), "deterministic");
        assert_ne!(k, key(&config, "pftl", &w));
        assert_ne!(k, key(&config, "dftl", &json!({"synthetic": "p000-hm0", "requests": 101})));
        let mut other = config.clone();
        other.seed += 1;
        assert_ne!(k, key(&other, "dftl", &w));
    }

    #[test]
    fn a_stored_result_comes_back_and_a_foreign_file_is_ignored() {
        let dir = std::env::temp_dir().join(format!("ftlsim-cache-test-{}", std::process::id()));
        let cache = Cache::open(&dir).unwrap();
        let result = format!("{{\"tool\":\"ftlsim\",\"version\":\"{}\",\"x\":1}}", crate::VERSION);
        cache.put("k1", &result).unwrap();
        assert_eq!(cache.get("k1").as_deref(), Some(result.as_str()));
        std::fs::write(dir.join("k2.json"), "{\"tool\":\"ftlsim\",\"version\":\"0.0.0-old\"}").unwrap();
        assert_eq!(cache.get("k2"), None, "another version's result is run again");
        std::fs::write(dir.join("k3.json"), "{truncated").unwrap();
        assert_eq!(cache.get("k3"), None);
        assert_eq!(cache.get("absent"), None);
        std::fs::remove_dir_all(&dir).ok();
    }
}
