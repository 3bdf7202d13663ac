//! `import`: the seeds of a manifest cloned or imported, and their profiles.

use anyhow::Result;
use std::path::Path;
use swe_forge::seed;

pub(crate) fn import(manifest: &Path, cache: &Path, json: bool) -> Result<i32> {
    let m = seed::load_manifest(manifest)?;
    let mut failures = 0;
    let mut rows = Vec::new();
    for s in &m.seeds {
        match swe_forge::toolchain::import(s, &m.base_dir, cache) {
            Ok(r) => {
                if !json {
                    println!(
                        "{:<16} {} {:<8} {:<10} {:<7} sources {:>4}  tests {:>4}  {}",
                        r.name,
                        &r.commit[..12],
                        r.profile.language,
                        r.profile.build_system,
                        r.profile.test_framework,
                        r.profile.source_files.len(),
                        r.profile.test_files.len(),
                        r.checkout.display()
                    );
                    if !r.profile.packages_reason.is_empty() {
                        println!("{:<16} mutating {}", "", r.profile.packages_reason);
                    }
                }
                rows.push(serde_json::json!({"seed": s.name, "ok": true, "repo": r}));
            }
            Err(e) => {
                failures += 1;
                if !json {
                    eprintln!("{:<16} error: {e}", s.name);
                }
                rows.push(serde_json::json!({"seed": s.name, "ok": false, "error": e.to_string()}));
            }
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    Ok(if failures > 0 { 1 } else { 0 })
}
