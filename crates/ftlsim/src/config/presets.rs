//! Device presets, one documented TOML file per paper configuration, embedded in the binary.

use crate::error::{Result, SimError};

/// (name, TOML text) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("mlc8g", include_str!("presets/mlc8g.toml")),
    ("tpftl", include_str!("presets/tpftl.toml")),
    ("tpftl-msr", include_str!("presets/tpftl-msr.toml")),
    ("cpm", include_str!("presets/cpm.toml")),
    ("fastsc", include_str!("presets/fastsc.toml")),
    ("fastsc-80g", include_str!("presets/fastsc-80g.toml")),
    ("ssd16", include_str!("presets/ssd16.toml")),
    ("ssd16-ch2", include_str!("presets/ssd16-ch2.toml")),
    ("ssd16-ch3-slc", include_str!("presets/ssd16-ch3-slc.toml")),
    ("ssd16-ch3-mlc", include_str!("presets/ssd16-ch3-mlc.toml")),
    ("tlc-nvme", include_str!("presets/tlc-nvme.toml")),
];

pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(n, _)| *n)
}

pub fn preset_toml(name: &str) -> Result<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        SimError::config(
            "preset",
            format!("unknown preset \"{name}\"; known presets: {}", preset_names().collect::<Vec<_>>().join(", ")),
        )
    })
}
