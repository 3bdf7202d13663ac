//! `merge`: run output directories joined into one (the shards of a run).

use anyhow::Result;
use std::path::{Path, PathBuf};

/// `merge`: join run output directories; exit 0, or 1 on conflicts (unless allowed).
pub(crate) fn merge(
    inputs: &[PathBuf],
    out: &Path,
    allow_conflicts: bool,
    json: bool,
) -> Result<i32> {
    let s = swe_forge::merge::merge(inputs, out, allow_conflicts)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "merged {} run(s) into {}: {} candidates, {} tasks, {} decided twice alike, {} conflict(s)",
            s.inputs.len(),
            s.out.display(),
            s.candidates,
            s.tasks,
            s.duplicates,
            s.conflicts.len()
        );
    }
    Ok(0)
}
