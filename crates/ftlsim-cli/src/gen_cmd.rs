//! `ftlsim gen`: writes a synthetic trace (a generator spec or a paper-trace stand-in) to a file.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ftlsim::config::ConfigBuilder;
use ftlsim::workload::generator::{parse_bytes, SynthSpec};
use ftlsim::workload::write::TraceWriter;
use ftlsim::workload::Format;

#[derive(Args)]
pub struct GenArgs {
    /// Preset (`ftlsim list workloads`) or generator spec, e.g. p000-financial1,scale=0.1 or
    /// requests=1e5,read=0.7,addr=zipf:0.9@0.8+seq:4@0.2,size=mean:8k,arrival=poisson:1000.
    spec: String,
    /// Output file (compressed when it ends in .gz, .bz2, .xz or .zst).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Output format: msr, spc or mqsim.
    #[arg(long, value_name = "FORMAT", default_value = "msr")]
    format: Format,
    /// Requests (overrides the spec's count).
    #[arg(long)]
    requests: Option<u64>,
    /// Seed (overrides the spec's).
    #[arg(long)]
    seed: Option<u64>,
    /// Address space of the device, e.g. 16GiB (default: the exported capacity of --preset).
    #[arg(long, value_name = "BYTES")]
    capacity: Option<String>,
    /// Device preset whose exported capacity bounds the addresses (default: the default device).
    #[arg(long)]
    preset: Option<String>,
}

pub fn run(args: GenArgs) -> Result<()> {
    if !args.format.writable() {
        bail!("--format {}: cannot write that format (writable: msr, spc, mqsim)", args.format);
    }
    let mut spec: SynthSpec = args.spec.parse().with_context(|| format!("spec {}", args.spec))?;
    if let Some(n) = args.requests {
        spec.requests = n;
    }
    if let Some(seed) = args.seed {
        spec.seed = seed;
    }
    let capacity = match &args.capacity {
        Some(text) => parse_bytes(text)
            .with_context(|| format!("--capacity: expected bytes such as 16GiB, found \"{text}\""))?
            as u64,
        None => {
            let mut b = ConfigBuilder::new();
            if let Some(p) = &args.preset {
                b = b.preset(p)?;
            }
            let config = b.build()?;
            config.device.logical_pages() as u64 * config.device.geometry.page_size as u64
        }
    };
    let workload = spec.workload(capacity)?;
    if workload.closed_loop.is_some() {
        return Err(ftlsim::SimError::config(
            "synthetic.arrival",
            "a closed loop's arrivals are the completions of a simulation; a trace file needs fixed:IOPS, poisson:IOPS or bursty:IOPS:BURST:SPEEDUP",
        )
        .into());
    }
    let mut out = TraceWriter::create(&args.output, args.format)?;
    let mut n = 0u64;
    for r in workload.requests {
        out.write(&r?)?;
        n += 1;
    }
    out.finish()?;
    eprintln!("{n} synthetic requests ({}) written to {} ({})", spec.name, args.output.display(), args.format);
    Ok(())
}
