//! Benchmarks: how fast the mutation engine enumerates candidates over a directory.

use crate::candidate;
use crate::lang::Language;
use crate::mutator::{self, MutatorError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// The figures `swe-forge bench mutate DIR` reports.
#[derive(Clone, Debug, Serialize)]
pub struct MutateBench {
    pub files: usize,
    pub lines: usize,
    pub candidates: usize,
    pub seconds: f64,
    pub candidates_per_s: f64,
    pub skipped_files: usize,
}

/// Directories the walk never enters: hidden ones (`.git`, `.venv`), caches and installed
/// third-party packages (`site-packages`).
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "__pycache__" | "site-packages" | "node_modules")
}

/// Walk `dir` for files of `lang` (all languages whose extension matches when None),
/// excluding test files (`Language::is_test_path` on the dir-relative path), enumerate with
/// the embedded rules, time the enumeration (reading files included, rule loading excluded).
pub fn mutate_dir(dir: &Path, lang: Option<Language>) -> Result<MutateBench, MutatorError> {
    let languages: Vec<Language> = match lang {
        Some(l) => vec![l],
        None => Language::ALL.to_vec(),
    };
    let mut by_lang: BTreeMap<Language, Vec<String>> = BTreeMap::new();
    let walk = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_type().is_dir()
                || !skipped_dir(&e.file_name().to_string_lossy())
        });
    for entry in walk.filter_map(Result::ok) {
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if let Some(l) = languages.iter().find(|l| l.matches_path(entry.path())) {
            if !l.is_test_path(&rel) {
                by_lang.entry(*l).or_default().push(rel);
            }
        }
    }
    let mut rules = BTreeMap::new();
    for l in by_lang.keys() {
        rules.insert(*l, mutator::load_embedded(*l)?);
    }

    let start = Instant::now();
    let (mut files, mut lines, mut candidates, mut skipped_files) = (0, 0, 0, 0);
    for (l, paths) in &by_lang {
        let e = candidate::enumerate(dir, paths, *l, &rules[l]);
        files += e.files;
        lines += e.lines;
        candidates += e.candidates.len();
        skipped_files += e.skipped.len();
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(MutateBench {
        files,
        lines,
        candidates,
        seconds,
        candidates_per_s: if seconds > 0.0 {
            candidates as f64 / seconds
        } else {
            0.0
        },
        skipped_files,
    })
}
#[cfg(test)]
mod tmp_tests {
    #[test]
    fn tmp_stdlib_timing() {
        let dir = std::path::Path::new("/root/.pyenv/versions/3.11.7/lib/python3.11");
        let _ = crate::mutator::load_embedded(crate::lang::Language::Python).unwrap();
        let b = super::mutate_dir(dir, Some(crate::lang::Language::Python)).unwrap();
        if std::env::var("PER_RULE").is_ok() {
            let files: Vec<String> = walkdir::WalkDir::new(dir)
                .into_iter()
                .filter_entry(|e| e.file_name() != "site-packages")
                .filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
                .map(|e| {
                    e.path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .to_string()
                })
                .filter(|r| !crate::lang::Language::Python.is_test_path(r))
                .collect();
            let rules = crate::mutator::load_embedded(crate::lang::Language::Python).unwrap();
            let e = crate::candidate::enumerate(dir, &files, crate::lang::Language::Python, &rules);
            let mut counts = std::collections::BTreeMap::new();
            for c in &e.candidates {
                *counts.entry(c.mutator.clone()).or_insert(0) += 1;
            }
            for (k, v) in counts {
                println!("{k:28} {v}");
            }
        }
        println!("{}", serde_json::to_string(&b).unwrap());
    }
}
