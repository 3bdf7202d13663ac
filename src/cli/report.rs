//! `report`: report.json and report.html of a run's output directory.

use anyhow::Result;
use std::path::PathBuf;

/// `report`.
pub(crate) fn report(out: PathBuf, json: bool) -> Result<i32> {
    // The library's errors name the directory or file at fault.
    let w = swe_forge::report::write(&out)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&w.report)?);
    } else {
        let f = &w.report.funnel;
        println!(
            "{} decided, {} accepted, {} tasks: {}",
            f.decided,
            f.accepted,
            f.tasks,
            w.html.display()
        );
    }
    for warning in &w.report.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(0)
}
