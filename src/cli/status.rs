//! `status`: how far runs (the shards of one) are, per output directory and overall.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct StatusArgs {
    /// The runs' output directories (a directory not made yet counts as not started).
    #[arg(required = true)]
    pub(crate) outs: Vec<PathBuf>,
    /// Wait until every run is done (its summary.json written, not interrupted); exit 1 after
    /// --timeout.
    #[arg(long)]
    pub(crate) wait: bool,
    /// Seconds --wait waits at most.
    #[arg(long, default_value_t = 24 * 3600, requires = "wait")]
    pub(crate) timeout: u64,
    /// Seconds between --wait's looks.
    #[arg(long, default_value_t = 30, requires = "wait")]
    pub(crate) interval: u64,
    /// The status as JSON: {"runs": [...], "total": {...}}.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn status(a: StatusArgs) -> Result<i32> {
    let s = if a.wait {
        let mut last_done = usize::MAX;
        swe_forge::status::wait(
            &a.outs,
            Duration::from_secs(a.timeout),
            Duration::from_secs(a.interval.max(1)),
            |s| {
                if s.total.done != last_done {
                    last_done = s.total.done;
                    tracing::info!(
                        done = s.total.done,
                        runs = s.total.runs,
                        decided = s.total.decided,
                        "waiting for the runs"
                    );
                }
            },
        )?
    } else {
        swe_forge::status::status(&a.outs)?
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", swe_forge::status::table(&s));
    }
    Ok(0)
}
