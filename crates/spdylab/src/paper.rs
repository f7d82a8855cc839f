//! `spdylab paper`: the paper's experiments (004) as ready-made campaigns,
//! each followed by its report.

use crate::sweep::{run_campaign, RunArgs};
use crate::Failure;
use clap::Args;
use lab::presets::{self, PRESETS};
use std::path::PathBuf;

/// Reproduce a figure of "Can SPDY really make the web faster?" (004): sweep, then report
#[derive(Debug, Args)]
#[command(after_help = help())]
pub struct PaperArgs {
    /// fig2, fig4, fig6, fig8, fig9, iw, mobile (seed 002), all, pipelining (seed 003) or load (seed 000)
    pub figure: String,
    /// A reduced grid that runs in minutes
    #[arg(long)]
    pub quick: bool,
    /// The campaign directory (for `all`: one subdirectory per figure)
    #[arg(long, value_name = "DIR", required_unless_present = "print")]
    pub out: Option<PathBuf>,
    /// Print the experiment file instead of running it
    #[arg(long)]
    pub print: bool,
    /// The server (spdy3 only on builtin: elsewhere h2 stands in for SPDY)
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: crate::compare::ServerArg,
    /// The client: model, or chromium (no spdy3: h2 stands in for SPDY)
    #[arg(long, value_enum, default_value = "model")]
    pub client: crate::compare::ClientArg,
    #[command(flatten)]
    pub run: RunArgs,
}

/// The examples, then every preset's settings table (`lab::presets::help_tables`).
fn help() -> String {
    format!(
        "{}\n\nSettings of each preset (full grid, and --quick where it differs):\n\n{}",
        "Examples:
  spdylab paper fig2 --quick --out results/fig2-quick
  spdylab paper fig9 --out results/fig9 --jobs 2
  spdylab paper all --quick --out results/paper      # results/paper/fig2, .../fig4, ...
  spdylab paper fig2 --print > fig2.toml             # the experiment file, to edit
  spdylab paper load --quick --out results/load      # seed 000: users until the SLA breaks

Figures: fig2 (RTT), fig4 (bandwidth), fig6 (loss), fig8 (shards), fig9 (streams x RTT),
iw (initial window), on 004's testbed (one mirrored server, TLS 1.2, time on wire; fig8:
N shard host names); mobile: seed 002 (2/1 Mbit/s, 150 ms, http vs spdy3/h2, every
built-in site, PLT); pipelining: seed 003's throughput matrix (built-in server and
nginx; h1, TLS, pipelining x8/x16, h2, h2c); load: seed 000's load test (Apache worker
MPM (600 workers, as 000's mod_spdy pool) for http/https and h2 as SPDY's stand-in, and
spdy3 on the built-in server; icons page, 40/45 ms, think 5 s, SLA 3 s; --quick: 1-400
users in 5 min).
The paper's numbers, where it gives them, are drawn as marks.
An interrupted figure campaign resumes when the same command is run again.",
        presets::help_tables()
    )
}

pub fn run(args: PaperArgs) -> Result<i32, Failure> {
    if matches!(args.figure.as_str(), "load" | "pipelining") {
        // These are not campaigns: their own servers, no experiment file, no slices.
        let r = &args.run;
        // clap asks for --out unless --print is given: without --print, there is one.
        let out = match (&args.out, args.print) {
            (Some(out), false) => out.clone(),
            _ => {
                return Err(Failure::Usage(format!(
                    "paper {}: --print applies to the figures' campaigns, not to this preset",
                    args.figure
                )))
            }
        };
        let ignored = [
            (
                !matches!(args.server, crate::compare::ServerArg::Builtin),
                "--server",
            ),
            (
                !matches!(args.client, crate::compare::ClientArg::Model),
                "--client",
            ),
            (r.shard.is_some(), "--shard"),
            (r.retry_failed, "--retry-failed"),
            (r.no_har, "--no-har"),
            (r.no_calibration, "--no-calibration"),
            (r.jobs.0.is_some(), "--jobs"),
        ];
        if let Some((_, flag)) = ignored.iter().find(|(set, _)| *set) {
            return Err(Failure::Usage(format!(
                "paper {}: {flag} applies to the figures' campaigns, not to this preset",
                args.figure
            )));
        }
        return if args.figure == "pipelining" {
            crate::bench::pipelining_matrix(args.quick, &out, 50)
        } else {
            crate::loadtest::paper_load(args.quick, &out)
        };
    }
    let chosen: Vec<&presets::Preset> = if args.figure == "all" {
        PRESETS.iter().collect()
    } else {
        vec![presets::preset(&args.figure).ok_or_else(|| {
            Failure::Usage(format!(
                "'{}' is not a figure: {} or all",
                args.figure,
                PRESETS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?]
    };
    let peers = presets::Peers {
        server: args.server.kind(),
        client: args.client.kind(),
    };
    if args.print {
        for p in &chosen {
            print!(
                "# {}: {}\n{}",
                p.name,
                p.about,
                presets::text(p, args.quick, peers)
            );
        }
        return Ok(0);
    }
    let out = args.out.clone().expect("clap requires --out");
    let mut worst = 0;
    for p in chosen {
        let text = presets::text(p, args.quick, peers);
        let exp = lab::experiment::parse(&format!("preset {}", p.name), &text)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let dir = if args.figure == "all" {
            out.join(p.name)
        } else {
            out.clone()
        };
        eprintln!(
            "paper {}: {}{}",
            p.name,
            p.about,
            if args.quick { " (quick)" } else { "" }
        );
        let code = run_campaign(
            exp,
            &text,
            &dir,
            &args.run.options(),
            std::path::Path::new(""),
            false,
        )?;
        crate::report::write(&dir, None)?;
        worst = worst.max(code);
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        paper: PaperArgs,
    }

    /// `paper ARGS`'s usage error; these are refused before anything runs.
    fn refusal(args: &[&str]) -> String {
        let mut all = vec!["paper"];
        all.extend_from_slice(args);
        let cli = Cli::try_parse_from(all).expect("clap accepts it");
        match run(cli.paper) {
            Err(Failure::Usage(why)) => why,
            _ => panic!("{args:?} is not refused"),
        }
    }

    #[test]
    fn load_and_pipelining_refuse_print_and_campaign_flags() {
        for figure in ["load", "pipelining"] {
            for args in [&["--print"][..], &["--print", "--out", "x"]] {
                let why = refusal(&[&[figure][..], args].concat());
                assert!(why.contains("--print applies to the figures"), "{why}");
            }
            let why = refusal(&[figure, "--out", "x", "--jobs", "2"]);
            assert!(why.contains("--jobs applies to the figures"), "{why}");
        }
        // Without --print, clap asks for --out: no usage error of our own.
        assert!(Cli::try_parse_from(["paper", "load"]).is_err());
    }
}
