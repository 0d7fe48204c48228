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
use crate::ftl::common::hybrid::LogBlockFtl;
use crate::ftl::common::merge::{INPLACE_FIRST_WRITE, LOG_BLOCKS, LOG_RATIO, LOG_RATIO_OF, NO_STREAMS};
use crate::ftl::registry::{no_test_overrides, Family, FtlInfo, ParamRange, ParamSpec, ParamsSchema};
use crate::ftl::{ftl_params, Ftl};

pub const INFO: FtlInfo = FtlInfo {
    name: "fast-sc",
    description: "FAST with second-chance victim log blocks (paper 003)",
    family: Family::BlockMapped,
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
    validates_by_mapping: false,
    state_bytes_per_page: 12.6,
    spare_blocks_needed: super::INFO.spare_blocks_needed,
    test_overrides: no_test_overrides,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FastScParams {
    #[serde(flatten)]
    pub fast: FastParams,
    #[serde(default)]
    pub sc_threshold: u32,
    #[serde(default)]
    pub sc_mode: ScMode,
}

fn build(config: &Config) -> Result<Box<dyn Ftl>> {
    let p: FastScParams = ftl_params(config, INFO.name)?;
    let selection = Selection::SecondChance { threshold: p.sc_threshold, mode: p.sc_mode };
    let scheme = Fast::new(config, INFO.name, &p.fast, selection, None)?;
    Ok(Box::new(LogBlockFtl::new(config, INFO.name, scheme, &p)))
}
