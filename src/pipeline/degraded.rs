//! Degraded seeds: a seed whose clean code's suite cannot collect many of its test files
//! (a test dependency the install left out, test modules that share a basename without
//! packages…) still runs, but the tasks it makes rest on the few tests left: its status says
//! `degraded`, with the files and their errors.

use crate::baseline::Baseline;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The share of a seed's test files that may fail to collect on the clean code: past it, the
/// seed is degraded.
pub const UNCOLLECTED_SHARE_LIMIT: f64 = 1.0 / 3.0;

/// Why a seed is degraded (`summary.json` → `seeds[].degraded`, the report's seed rows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Degraded {
    /// The seed's test files ([`crate::repo::Profile::test_files`]) that fail to collect.
    pub uncollected: usize,
    /// The seed's test files.
    pub total: usize,
    /// Every collection error of the baseline's runs: file → the error's last line.
    pub errors: BTreeMap<String, String>,
}

impl Degraded {
    /// Whether `baseline` makes the seed with these test files degraded: more than
    /// [`UNCOLLECTED_SHARE_LIMIT`] of them fail to collect in one of its runs (a `conftest.py`
    /// that fails takes the files below it along).
    pub fn of(baseline: &Baseline, test_files: &[String]) -> Option<Degraded> {
        Degraded::from_errors(
            baseline.runs.iter().map(|r| &r.collection_errors),
            test_files,
        )
    }

    /// [`Degraded::of`] over the collection errors of the baseline's runs.
    fn from_errors<'a>(
        runs: impl IntoIterator<Item = &'a BTreeMap<String, String>>,
        test_files: &[String],
    ) -> Option<Degraded> {
        let mut errors: BTreeMap<String, String> = BTreeMap::new();
        for run in runs {
            for (file, error) in run {
                errors
                    .entry(file.clone())
                    .or_insert_with(|| last_line(error).to_string());
            }
        }
        let uncollected = test_files
            .iter()
            .filter(|f| crate::run::collection_error_of(&errors, f).is_some())
            .count();
        let total = test_files.len();
        (total > 0 && uncollected as f64 > UNCOLLECTED_SHARE_LIMIT * total as f64).then_some(
            Degraded {
                uncollected,
                total,
                errors,
            },
        )
    }

    /// The seed's detail: the count and the files.
    pub fn reason(&self) -> String {
        let files: Vec<&str> = self.errors.keys().map(String::as_str).collect();
        format!(
            "{}/{} test files fail to collect on the clean code (their tests are in no check): {}",
            self.uncollected,
            self.total,
            files.join(", ")
        )
    }
}

/// The last non-empty line of an error (pytest ends with the exception or its hint).
fn last_line(error: &str) -> &str {
    error
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no error text")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collection errors of one baseline run.
    fn errors(errors: &[(&str, &str)]) -> Vec<BTreeMap<String, String>> {
        vec![errors
            .iter()
            .map(|(f, e)| (f.to_string(), e.to_string()))
            .collect()]
    }

    fn files(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("tests/test_{i}.py")).collect()
    }

    #[test]
    fn more_than_a_third_uncollected_degrades_the_seed() {
        // One of three is a third: not degraded.
        let b = errors(&[(
            "tests/test_0.py",
            "E   ModuleNotFoundError: No module named 'x'\n",
        )]);
        assert_eq!(Degraded::from_errors(&b, &files(3)), None);
        // Two of five is more.
        let b = errors(&[
            (
                "tests/test_0.py",
                "Traceback:\n  ...\nE   ModuleNotFoundError: No module named 'x'\n\n",
            ),
            (
                "tests/test_3.py",
                "import file mismatch:\nHINT: use a unique basename\n",
            ),
        ]);
        let d = Degraded::from_errors(&b, &files(5)).expect("degraded");
        assert_eq!((d.uncollected, d.total), (2, 5));
        assert_eq!(
            d.errors["tests/test_0.py"],
            "E   ModuleNotFoundError: No module named 'x'"
        );
        assert_eq!(d.errors["tests/test_3.py"], "HINT: use a unique basename");
        assert!(
            d.reason()
                .starts_with("2/5 test files fail to collect on the clean code"),
            "{}",
            d.reason()
        );
        assert!(d.reason().ends_with("tests/test_0.py, tests/test_3.py"));
        // No error, or no test files: never degraded.
        assert_eq!(Degraded::from_errors(&errors(&[]), &files(3)), None);
        assert_eq!(Degraded::from_errors(&b, &[]), None);
    }

    #[test]
    fn a_failing_conftest_takes_the_files_below_it() {
        let b = errors(&[(
            "tests/unit/conftest.py",
            "ImportError: cannot import name 'y'",
        )]);
        let test_files: Vec<String> = [
            "tests/unit/conftest.py",
            "tests/unit/test_a.py",
            "tests/unit/test_b.py",
            "tests/test_c.py",
        ]
        .map(String::from)
        .to_vec();
        let d = Degraded::from_errors(&b, &test_files).expect("degraded");
        assert_eq!((d.uncollected, d.total), (3, 4));
        assert_eq!(d.errors.len(), 1);
    }
}
