//! The list of FTLs. Adding a scheme: one module in `ftl/`, one line here.

use serde::de::DeserializeOwned;

use super::common::translation::TranslationStore;
use super::{Ftl, PageFtl};
use crate::config::Config;
use crate::error::{Result, SimError};

pub struct FtlInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub build: fn(&Config) -> Result<Box<dyn Ftl>>,
    /// Keeps its map in translation pages in flash (a second stream of pages and the spare
    /// blocks those pages fill).
    pub translation_pages: bool,
}

impl FtlInfo {
    /// The fewest spare blocks the FTL accepts on `config`'s device ([`Config::spare_blocks_needed`]).
    pub fn spare_blocks_needed(&self, config: &Config) -> u64 {
        if self.translation_pages {
            TranslationStore::spare_blocks_needed(config)
        } else {
            config.spare_blocks_needed(1, 0)
        }
    }
}

pub const REGISTRY: &[FtlInfo] = &[
    FtlInfo {
        name: "pftl",
        description: "page-level FTL, whole map in SRAM (the baseline)",
        build: PageFtl::build,
        translation_pages: false,
    },
    FtlInfo {
        name: "dftl",
        description: "DFTL: demand-based, segmented-LRU entry cache, batch write-back",
        build: super::dftl::Dftl::build,
        translation_pages: true,
    },
    FtlInfo {
        name: "cdftl",
        description: "CDFTL: entry cache (CMT) over a whole-translation-page cache (CTP)",
        build: super::cdftl::Cdftl::build,
        translation_pages: true,
    },
    FtlInfo {
        name: "tpftl",
        description: "TPFTL: two-level LRU of TP nodes and entries, prefetching, batch and clean-first replacement",
        build: super::tpftl::Tpftl::build,
        translation_pages: true,
    },
    FtlInfo {
        name: "scftl",
        description: "SCFTL: small entries with a consecutive field, spatial fetch, D-NRU replacement",
        build: super::scftl::Scftl::build,
        translation_pages: true,
    },
    FtlInfo {
        name: "sftl",
        description: "S-FTL: whole translation pages cached compressed by PPN runs, dirty buffer",
        build: super::sftl::Sftl::build,
        translation_pages: true,
    },
    FtlInfo {
        name: "optimal",
        description: "optimal FTL (paper 002): whole map cached, no translation traffic",
        build: super::optimal::OptimalFtl::build,
        translation_pages: false,
    },
];

pub fn ftl_names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|f| f.name)
}

pub fn build_ftl(name: &str, config: &Config) -> Result<Box<dyn Ftl>> {
    let info = REGISTRY.iter().find(|f| f.name == name).ok_or_else(|| {
        SimError::config(
            "ftl",
            format!("unknown FTL \"{name}\"; known FTLs: {}", ftl_names().collect::<Vec<_>>().join(", ")),
        )
    })?;
    (info.build)(config)
}

/// Reads the `[ftl.<name>]` table into the FTL's parameter struct (defaults for absent fields,
/// unknown fields rejected, errors naming `ftl.<name>.<field>`).
pub fn ftl_params<T: DeserializeOwned>(config: &Config, name: &str) -> Result<T> {
    let table = config.ftl.get(name).cloned().unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
    serde_path_to_error::deserialize(table).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { format!("ftl.{name}") } else { format!("ftl.{name}.{path}") };
        SimError::config(field, e.into_inner().message().to_string())
    })
}
