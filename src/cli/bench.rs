//! `bench`: the cost of a stage (enumeration, verification) measured.

use super::args::RunArgs;
use super::run::run_pipeline;
use anyhow::{Context, Result};
use std::path::PathBuf;
use swe_forge::bench;
use swe_forge::lang::Language;

/// `bench verify`.
pub(crate) fn verify(mut args: RunArgs, cache: PathBuf, quiet: bool) -> Result<i32> {
    let out = tempfile::Builder::new()
        .prefix("swe-forge-bench-verify-")
        .tempdir()
        .context("creating a temporary output directory")?
        .keep();
    args.out = out;
    let json = args.json;
    let summary = run_pipeline(&args, cache, None, quiet, false)?;
    let b = bench::verify_figures(&summary).context("reading the run's state store")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&b)?);
    } else {
        println!(
            "run in {} ({:.1}s, sandbox {})",
            b.out.display(),
            b.seconds,
            b.sandbox
        );
        for s in &b.seeds {
            println!(
                "{:<16} runner {:<8} decided {:>4}  accepted {:>4}  runs/decided {:>5.2}  s/run {:>6.3}  wall s/decided {:>6.2}  wall s/accepted {}",
                s.seed,
                s.runner,
                s.decided,
                s.accepted,
                s.runs_per_decided,
                s.seconds_per_run,
                s.wall_per_decided,
                s.wall_per_accepted.map_or("-".into(), |v| format!("{v:.2}")),
            );
            let stages: Vec<String> = s
                .stages
                .iter()
                .map(|(k, v)| format!("{k} {v:.1}"))
                .collect();
            println!("{:<16} stages (s): {}", "", stages.join(", "));
        }
    }
    Ok(0)
}

/// `bench peer`.
pub(crate) fn peer(mut args: RunArgs, cache: PathBuf, quiet: bool) -> Result<i32> {
    let out = tempfile::Builder::new()
        .prefix("swe-forge-bench-peer-")
        .tempdir()
        .context("creating a temporary output directory")?
        .keep();
    args.out = out.clone();
    let json = args.json;
    let summary = run_pipeline(&args, cache, None, quiet, true)?;
    let seeds = swe_forge::peer::compare(&summary).context("reading the run's state store")?;
    if json {
        let v = serde_json::json!({"out": out, "sandbox": summary.sandbox, "seeds": seeds});
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    println!("run in {} (sandbox {})", out.display(), summary.sandbox);
    for s in &seeds {
        println!(
            "{:<16} decided {:>4}  core-s/decided: swe-forge {:>6.3} ({} runner; {:.3} without synthesis)  one-run {:>6.3}  ratio {:>5.2}x  set-up s: swe-forge {:.1}, one-run {:.1}",
            s.seed,
            s.decided,
            s.ours_core_s_per_decided,
            s.runner,
            s.ours_core_s_per_decided_without_synthesis,
            s.peer_core_s_per_decided,
            s.ratio,
            s.ours_setup_s,
            s.peer_setup_s,
        );
        println!(
            "{:<16} accepted: swe-forge {}, one-run {}, both {}",
            "",
            s.ours_accepted.len(),
            s.peer_valid.len(),
            s.ours_accepted.intersection(&s.peer_valid).count()
        );
        let r = &s.regressions;
        println!(
            "{:<16} regressions caught by our grading commands: {} of {} (task, other bug) pairs; same file: {} of {} (the whole suite catches all)",
            "", r.caught, r.pairs, r.same_file_caught, r.same_file_pairs
        );
        for d in &s.differences {
            println!(
                "{:<16}   {}: swe-forge {}, one-run {} ({})",
                "",
                d.candidate,
                d.ours,
                if d.peer_valid { "valid" } else { "invalid" },
                d.peer_end
            );
        }
    }
    Ok(0)
}

/// `bench mutate`.
pub(crate) fn mutate(dir: PathBuf, lang: Option<Language>, json: bool) -> Result<i32> {
    let b =
        bench::mutate_dir(&dir, lang).with_context(|| format!("benchmarking {}", dir.display()))?;
    if json {
        println!("{}", serde_json::to_string(&b)?);
    } else {
        println!(
            "files {}  lines {}  candidates {}  seconds {:.3}  candidates/s {:.0}  skipped files {}",
            b.files, b.lines, b.candidates, b.seconds, b.candidates_per_s, b.skipped_files
        );
    }
    Ok(0)
}
