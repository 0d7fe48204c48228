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
use crate::ftl::common::merge::{LogRatioOf, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF, NO_STREAMS};
use crate::ftl::registry::{no_test_overrides, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use crate::ftl::{ftl_params, Ftl};

pub const INFO: FtlInfo = FtlInfo {
    name: "kast",
    description: "KAST: FAST with at most K logical blocks per random-write log block",
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
    state_bytes_per_page: 12.6,
    spare_blocks_needed: super::INFO.spare_blocks_needed,
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KastParams {
    #[serde(default)]
    pub log_ratio: Option<f64>,
    #[serde(default)]
    pub log_ratio_of: LogRatioOf,
    #[serde(default)]
    pub log_blocks: Option<u32>,
    #[serde(default = "yes")]
    pub inplace_first_write: bool,
    #[serde(default = "yes")]
    pub fast_sw_log: bool,
    #[serde(default = "four")]
    pub max_associativity: u32,
}

fn yes() -> bool {
    true
}

fn four() -> u32 {
    4
}

impl Default for KastParams {
    fn default() -> Self {
        let fast = FastParams::default();
        KastParams {
            log_ratio: fast.log_ratio,
            log_ratio_of: fast.log_ratio_of,
            log_blocks: fast.log_blocks,
            inplace_first_write: fast.inplace_first_write,
            fast_sw_log: fast.fast_sw_log,
            max_associativity: four(),
        }
    }
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: KastParams = ftl_params(config, INFO.name)?;
    let params = serde_json::to_value(&p).expect("params serialise");
    let fast = FastParams {
        log_ratio: p.log_ratio,
        log_ratio_of: p.log_ratio_of,
        log_blocks: p.log_blocks,
        inplace_first_write: p.inplace_first_write,
        fast_sw_log: p.fast_sw_log,
    };
    Ok(Box::new(Fast::new(config, INFO.name, fast, Selection::Fifo, Some(p.max_associativity), params)?))
}
