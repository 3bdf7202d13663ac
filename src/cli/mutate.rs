//! `mutate`: the candidates of a source tree or file, listed.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use swe_forge::candidate;
use swe_forge::lang::Language;
use swe_forge::pipeline;

pub(crate) fn mutate(
    path: &Path,
    lang: Option<Language>,
    mutators: Option<&Path>,
    include_tests: bool,
    json: bool,
) -> Result<i32> {
    let (root, files) = source_files(path, lang, include_tests)?;
    let mut total = 0;
    for language in Language::ALL {
        let of_lang: Vec<String> = files
            .iter()
            .filter(|f| language.matches_path(Path::new(f)))
            .cloned()
            .collect();
        if of_lang.is_empty() || lang.is_some_and(|l| l != language) {
            continue;
        }
        let rules = pipeline::load_rules(mutators, language)?;
        let e = candidate::enumerate(&root, &of_lang, language, &rules);
        for s in &e.skipped {
            tracing::warn!(file = %s.file, "skipped: {}", s.reason);
        }
        for c in &e.candidates {
            if json {
                println!("{}", serde_json::to_string(c)?);
            } else {
                println!(
                    "{}:{}  {:<24} {:<18} {}  `{}` → `{}`",
                    c.file,
                    c.line_range.0,
                    c.mutator,
                    c.category,
                    c.function,
                    one_line(&c.before),
                    one_line(&c.after)
                );
            }
        }
        total += e.candidates.len();
    }
    if !json {
        eprintln!("{total} candidates");
    }
    Ok(0)
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 40 {
        format!("{}…", flat.chars().take(40).collect::<String>())
    } else {
        flat
    }
}

/// The root and the repository-relative source files under `path` (a file or a directory).
fn source_files(
    path: &Path,
    lang: Option<Language>,
    include_tests: bool,
) -> Result<(PathBuf, Vec<String>)> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        let root = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let name = path
            .file_name()
            .context("a file name")?
            .to_string_lossy()
            .into_owned();
        return Ok((root, vec![name]));
    }
    let files = swe_forge::repo::source_files(path, lang, include_tests)
        .with_context(|| format!("walking {}", path.display()))?
        .into_iter()
        .map(|(_, rel)| rel)
        .collect();
    Ok((path.to_path_buf(), files))
}
