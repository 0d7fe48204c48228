//! KAST (Cho, Shin and Eom, "KAST: K-associative sector translation for NAND flash memory in
//! real-time systems", DATE 2009): FAST whose random-write log blocks each hold pages of at most
//! K logical blocks, which bounds the full merges a reclaimed log block costs (and so the worst
//! blocking time). Several RW log blocks are open at once; a page goes to an open block that
//! already holds pages of its logical block, else to the one holding the fewest if that is below
//! K, else to a fresh block. From the published description; every choice the paper is not cited
//! for here is ftlsim's and listed in docs/architecture.md.

use serde::{Deserialize, Serialize};

use super::queue::Selection;
use super::{Fast, FastParams, FAST_SW_LOG};
use crate::config::Config;
use crate::error::Result;
use crate::flash::BASIC_LAYOUT;
use crate::ftl::common::hybrid::LogBlockFtl;
use crate::ftl::common::merge::{INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF, NO_STREAMS};
use crate::ftl::registry::{no_test_overrides, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use crate::ftl::{ftl_params, Ftl};

pub const INFO: FtlInfo = FtlInfo {
    name: "kast",
    description: "KAST: FAST with at most K logical blocks per random-write log block",
    family: Family::BlockMapped,
    build,
    params: ParamsSchema::of::<KastParams>(&[
        LOG_RATIO,
        LOG_RATIO_OF,
        LOG_BLOCKS,
        INPLACE_FIRST_WRITE,
        FAST_SW_LOG,
        ParamSpec {
            name: "max_associativity",
            range: ParamRange::Integer { min: 1, max: 1 << 20 },
            meaning: "K: logical blocks a random-write log block may hold pages of",
            source: "KAST (Cho et al., DATE 2009); the default 4 is ftlsim's",
        },
    ]),
    spare_layout: BASIC_LAYOUT,
    streams: NO_STREAMS,
    recovers: true,
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: super::INFO.spare_blocks_needed,
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KastParams {
    #[serde(flatten)]
    pub fast: FastParams,
    #[serde(default = "four")]
    pub max_associativity: u32,
}

fn four() -> u32 {
    4
}

impl Default for KastParams {
    fn default() -> Self {
        KastParams { fast: FastParams::default(), max_associativity: four() }
    }
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: KastParams = ftl_params(config, INFO.name)?;
    let scheme = Fast::new(config, INFO.name, &p.fast, Selection::Fifo, Some(p.max_associativity))?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, scheme, &p)))
}
