//! `ftlsim diffecc-codes`: DiffECC's reliability model (paper 001 sections 2.2-2.3): Table 2.2's
//! codes checked by their identities, and the ISPP step each write mode needs for its code to
//! fail as rarely as the baseline code, beside the step Table 2.3's program time implies.

use anyhow::{bail, Result};
use clap::Args;
use ftlsim::timing::diffecc_codes::{search_steps, CellModel, TABLE_2_2};

use crate::output::table;

#[derive(Args)]
pub struct CodesArgs {
    /// Programmed-state tail crossings counted in the raw bit error rate (5 or 6, spec 2.2.1).
    #[arg(long, default_value_t = 5.0)]
    tails: f64,
    /// Program time per mode N = 1, 2, 4, 8 in us, for the implied steps (Table 2.3).
    #[arg(long, value_delimiter = ',', default_value = "500,538,606,754")]
    program_us: Vec<f64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CodesArgs) -> Result<()> {
    if !(args.tails.is_finite() && args.tails > 0.0) {
        bail!("--tails: must be a count > 0, found {}", args.tails);
    }
    let Ok(program_us) = <[f64; 4]>::try_from(args.program_us.as_slice()) else {
        bail!("--program-us: give 4 times (N = 1, 2, 4, 8), found {}", args.program_us.len());
    };
    if program_us.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        bail!("--program-us: must be times > 0 us, found {program_us:?}");
    }
    let found = search_steps(CellModel { tails: args.tails, ..CellModel::default() }, program_us);
    if args.json {
        println!("{}", serde_json::json!({ "codes": TABLE_2_2, "steps": found }));
        return Ok(());
    }
    let codes: Vec<Vec<String>> = TABLE_2_2
        .iter()
        .map(|c| {
            vec![
                c.segments.to_string(),
                format!("({}, {}, {})", c.n, c.k, c.t),
                format!("{} x {} = {}", c.parity_bits(), c.segments, c.parity_bits() * c.segments as u32),
                c.field_degree().to_string(),
                c.correctable().to_string(),
            ]
        })
        .collect();
    println!("{}", table(&["N", "BCH (n, k, t)", "parity bits per page", "m", "floor(parity / m)"], &codes));
    println!(
        "sigma calibrated on the baseline code at step 0.4: {:.4} (raw BER {:.3e}, {} tail crossings)",
        found.sigma, found.raw_ber, args.tails
    );
    let steps: Vec<Vec<String>> = found
        .modes
        .iter()
        .map(|m| {
            vec![
                m.code.segments.to_string(),
                format!("{:.4}", m.step),
                format!("{:.4}", m.implied_step),
                format!("{:+.1}", m.deviation * 100.0),
            ]
        })
        .collect();
    println!("{}", table(&["N", "step for failure 1e-15", "implied by the program time", "deviation (%)"], &steps));
    Ok(())
}
