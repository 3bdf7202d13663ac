//! Benchmarks: how fast the mutation engine enumerates candidates over a directory, and what
//! verification costs per candidate (`bench verify`).

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

/// The source files of `lang` under `dir` (all languages whose extension matches when None;
/// [`crate::repo::source_files`], the walk `run` and `mutate` use, test files excluded),
/// enumerate with
/// the embedded rules, time the enumeration (reading files included, rule loading excluded).
pub fn mutate_dir(dir: &Path, lang: Option<Language>) -> Result<MutateBench, MutatorError> {
    let languages: Vec<Language> = match lang {
        Some(l) => vec![l],
        None => Language::ALL.to_vec(),
    };
    let mut by_lang: BTreeMap<Language, Vec<String>> = BTreeMap::new();
    let files = crate::repo::source_files(dir, None, false).map_err(|e| MutatorError::Io {
        file: dir.display().to_string(),
        source: e,
    })?;
    for (l, rel) in files {
        if languages.contains(&l) {
            by_lang.entry(l).or_default().push(rel);
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
mod tests {
    use super::*;

    #[test]
    fn mutate_dir_counts_source_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let code = "def f(a, b):\n    return a < b\n";
        write("pkg/core.py", code);
        write("pkg/util.py", code);
        write("tests/test_core.py", code);
        write("pkg/test_util.py", code);
        write(".venv/lib/x.py", code);
        write("lib/site-packages/dep.py", code);
        write("pkg/broken.py", "def f(:\n");
        write(
            "src/main/java/A.java",
            "class A { int f() { return 1; } }\n",
        );

        let b = mutate_dir(dir.path(), Some(Language::Python)).unwrap();
        assert_eq!((b.files, b.lines, b.skipped_files), (2, 4, 1));
        assert!(b.candidates >= 4, "{b:?}");
        assert!(b.seconds > 0.0 && b.candidates_per_s > 0.0);

        write(
            "src/test/java/ATest.java",
            "class ATest { int f() { return 1; } }\n",
        );
        let java = mutate_dir(dir.path(), Some(Language::Java)).unwrap();
        assert_eq!((java.files, java.lines, java.candidates), (1, 1, 1));

        let all = mutate_dir(dir.path(), None).unwrap();
        assert_eq!(
            (all.files, all.candidates),
            (3, b.candidates + java.candidates)
        );
        let json = serde_json::to_value(&all).unwrap();
        for key in [
            "files",
            "lines",
            "candidates",
            "seconds",
            "candidates_per_s",
            "skipped_files",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
    }
}

/// What `swe-forge bench verify` reports for one seed of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifySeedBench {
    pub seed: String,
    /// `resident` or `fresh`.
    pub runner: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_fallback: Option<String>,
    pub decided: usize,
    pub accepted: usize,
    /// Test runs made for the decided candidates (screen, buggy#i, fixed#i, synthesis checks;
    /// the baseline's are not counted, nor the checks whose evidence is reused).
    pub runs: usize,
    pub runs_per_decided: f64,
    /// Mean wall time of one of those runs.
    pub seconds_per_run: f64,
    /// The verify stage's wall time (all workers together) per decided and per accepted
    /// candidate.
    pub wall_per_decided: f64,
    pub wall_per_accepted: Option<f64>,
    /// Wall time per stage, seconds.
    pub stages: BTreeMap<String, f64>,
}

/// What `swe-forge bench verify` reports.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyBench {
    /// The run's output directory (kept, to be looked at).
    pub out: std::path::PathBuf,
    pub sandbox: String,
    pub seconds: f64,
    pub seeds: Vec<VerifySeedBench>,
}

/// The figures of a finished run into a new output directory `out` (its `state.db`).
pub fn verify_figures(
    summary: &crate::pipeline::RunSummary,
) -> Result<VerifyBench, crate::store::StoreError> {
    let store = crate::store::Store::open(&summary.out.join("state.db"))?;
    let decided = store.decided()?;
    let stages = store.stage_times()?;
    let mut seeds = Vec::new();
    for s in &summary.seeds {
        let mine: Vec<_> = decided.iter().filter(|d| d.seed == s.seed).collect();
        let runs: Vec<&crate::run::Run> = mine.iter().flat_map(|d| d.outcome.runs.iter()).collect();
        let stage: BTreeMap<String, f64> = stages
            .iter()
            .filter(|(seed, _, _)| *seed == s.seed)
            .map(|(_, st, secs)| (st.clone(), *secs))
            .collect();
        let verify = stage.get("verify").copied().unwrap_or(0.0);
        let accepted = mine.iter().filter(|d| d.task.is_some()).count();
        let per = |total: f64, n: usize| if n == 0 { 0.0 } else { total / n as f64 };
        seeds.push(VerifySeedBench {
            seed: s.seed.clone(),
            runner: s.runner.clone(),
            runner_fallback: s.runner_fallback.clone(),
            decided: mine.len(),
            accepted,
            runs: runs.len(),
            runs_per_decided: per(runs.len() as f64, mine.len()),
            seconds_per_run: per(runs.iter().map(|r| r.duration_s).sum(), runs.len()),
            wall_per_decided: per(verify, mine.len()),
            wall_per_accepted: (accepted > 0).then(|| verify / accepted as f64),
            stages: stage,
        });
    }
    Ok(VerifyBench {
        out: summary.out.clone(),
        sandbox: summary.sandbox.clone(),
        seconds: summary.seconds,
        seeds,
    })
}
