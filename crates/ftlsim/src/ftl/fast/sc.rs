//! FAST-SC (paper 003: "second-chance" log-block replacement for FAST): FAST whose victim log
//! block is chosen by second chance (queue.rs) instead of FIFO. A candidate with more than
//! `sc_threshold` valid pages is passed over once; the paper uses a threshold of 0, so a log
//! block all of whose pages were rewritten elsewhere is reclaimed by one erase.

use serde::{Deserialize, Serialize};

use super::queue::{ScMode, Selection};
use super::{Fast, FastParams, FAST_SW_LOG};
use crate::config::Config;
use crate::error::Result;
use crate::flash::BASIC_LAYOUT;
use crate::ftl::common::merge::{LogRatioOf, INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF, NO_STREAMS};
use crate::ftl::registry::{no_test_overrides, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use crate::ftl::{ftl_params, Ftl};

pub const INFO: FtlInfo = FtlInfo {
    name: "fast-sc",
    description: "FAST with second-chance victim log blocks (paper 003)",
    build,
    params: ParamsSchema::of::<FastScParams>(&[
        LOG_RATIO,
        LOG_RATIO_OF,
        LOG_BLOCKS,
        INPLACE_FIRST_WRITE,
        FAST_SW_LOG,
        ParamSpec {
            name: "sc_threshold",
            range: ParamRange::Integer { min: 0, max: u32::MAX as i64 },
            meaning: "a candidate with more valid pages than this is passed over once (strictly greater)",
            source: "paper 003 section 3 (n = 0 in the experiments); spec B.7 F9",
        },
        ParamSpec {
            name: "sc_mode",
            range: ParamRange::OneOf(&["move-to-tail", "clock"]),
            meaning: "a passed-over candidate moves to the tail of the queue, or keeps its place under a clock hand",
            source: "spec B.3 and B.7 F2 (the paper does not say)",
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
pub struct FastScParams {
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
    #[serde(default)]
    pub sc_threshold: u32,
    #[serde(default)]
    pub sc_mode: ScMode,
}

fn yes() -> bool {
    true
}

impl Default for FastScParams {
    fn default() -> Self {
        let fast = FastParams::default();
        FastScParams {
            log_ratio: fast.log_ratio,
            log_ratio_of: fast.log_ratio_of,
            log_blocks: fast.log_blocks,
            inplace_first_write: fast.inplace_first_write,
            fast_sw_log: fast.fast_sw_log,
            sc_threshold: 0,
            sc_mode: ScMode::MoveToTail,
        }
    }
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: FastScParams = ftl_params(config, INFO.name)?;
    let params = serde_json::to_value(&p).expect("params serialise");
    let fast = FastParams {
        log_ratio: p.log_ratio,
        log_ratio_of: p.log_ratio_of,
        log_blocks: p.log_blocks,
        inplace_first_write: p.inplace_first_write,
        fast_sw_log: p.fast_sw_log,
    };
    let selection = Selection::SecondChance { threshold: p.sc_threshold, mode: p.sc_mode };
    Ok(Box::new(Fast::new(config, INFO.name, fast, selection, None, params)?))
}
