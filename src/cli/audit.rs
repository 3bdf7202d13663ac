//! `audit`: tasks re-verified from their records alone.

use super::args::AuditArgs;
use anyhow::{Context, Result};
use std::path::PathBuf;
use swe_forge::sandbox::Limits;

/// `audit`.
pub(crate) fn audit(args: AuditArgs, cache: PathBuf, quiet: bool) -> Result<i32> {
    use swe_forge::audit::{self, JsonLine};
    let AuditArgs {
        tasks,
        sample,
        seed,
        sandbox,
        json,
        out,
        recheck_identical,
    } = args;
    let cfg = audit::AuditConfig {
        tasks,
        sample,
        seed,
        sandbox,
        cache,
        limits: Limits::default(),
        progress: !json && !quiet,
        recheck_identical,
    };
    let report = audit::audit(&cfg, |a| match json {
        true => println!("{}", JsonLine::Task(a).to_json()),
        false => println!("{}", audit::text_line(a)),
    })
    .with_context(|| format!("auditing {}", cfg.tasks.display()))?;
    match json {
        true => println!("{}", JsonLine::Summary(&report.summary).to_json()),
        false => println!("{}", audit::summary_line(&report.summary)),
    }
    if let Some(path) = out {
        report.write_json(&path)?;
    }
    Ok(report.exit_code())
}
