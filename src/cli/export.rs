//! `export`: a run's tasks as git repositories, a SWE-bench dataset or Harbor tasks.

use super::args::ExportFormatArgs;
use anyhow::Result;
use std::path::PathBuf;

/// `export`.
pub(crate) fn export(
    out: PathBuf,
    tasks: Option<PathBuf>,
    to: Option<PathBuf>,
    format: ExportFormatArgs,
    json: bool,
    cache: PathBuf,
) -> Result<i32> {
    let cfg = swe_forge::export::ExportConfig {
        out,
        tasks,
        to,
        cache: cache.clone(),
        format: format.format.into(),
        id_style: format.id_style,
    };
    let s = swe_forge::export::export(&cfg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        for r in &s.repositories {
            println!(
                "{:<16} {} branches  {}",
                r.seed,
                r.branches,
                r.path.display()
            );
        }
        for f in &s.failed {
            eprintln!("not exported: {}: {}", f.instance_id, f.reason);
        }
        println!(
            "exported {} of {} tasks to {}",
            s.exported.len(),
            s.tasks,
            s.to.display()
        );
    }
    Ok(if s.exported.is_empty() { 4 } else { 0 })
}
