//! `spdylab profiles`: the named networks `--profile` and experiment files
//! take, each with its numbers and where they come from.

use crate::Failure;
use clap::Args;

/// List the named network profiles: rates, RTT and source
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab profiles
  spdylab profiles --json
  spdylab compare --site youtube --profile 3g-fast --rtt 300ms   # 3G Fast's rates at 300 ms

A profile fills the link's rates and RTT that are not given: flags after it (or
an experiment's link fields beside `profile`) override single fields.")]
pub struct ProfilesArgs {
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ProfilesArgs) -> Result<i32, Failure> {
    let profiles = link::PROFILES;
    if args.json {
        let list: Vec<serde_json::Value> = profiles
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "down": p.down.to_string(),
                    "up": p.up.to_string(),
                    "down_bps": p.down.0,
                    "up_bps": p.up.0,
                    "rtt_ms": p.rtt.as_secs_f64() * 1e3,
                    "source": p.source,
                })
            })
            .collect();
        println!("{}", serde_json::json!({"schema": 1, "profiles": list}));
        return Ok(0);
    }
    println!(
        "{:<11} {:>9} {:>9} {:>7}  source",
        "profile", "down", "up", "rtt"
    );
    for p in profiles {
        println!(
            "{:<11} {:>9} {:>9} {:>7}  {}",
            p.name,
            p.down.to_string(),
            p.up.to_string(),
            format!("{}ms", p.rtt.as_millis()),
            p.source
        );
    }
    Ok(0)
}
