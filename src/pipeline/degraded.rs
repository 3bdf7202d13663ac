//! Degraded seeds: a seed whose clean code's suite cannot collect many of its test files
//! (a test dependency the install left out, test modules that share a basename without
//! packages…), or most of whose tests fail or error on the clean code in every repeat (a
//! fixture that needs what the environment lacks), still runs, but the tasks it makes rest on
//! the few tests left: its status says `degraded`, with the files, tests and their errors.

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
    /// Tests the clean code's suite ran that failed or errored in every repeat (a fixture
    /// that needs what the environment lacks: wcwidth's asks for its C extension).
    #[serde(default)]
    pub failing_tests: usize,
    /// Tests the clean code's suite ran.
    #[serde(default)]
    pub tests: usize,
    /// A few of those failing tests with their message's last line.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, String>,
}

impl Degraded {
    /// Whether `baseline` makes the seed with these test files degraded: more than
    /// [`UNCOLLECTED_SHARE_LIMIT`] of them fail to collect in one of its runs (a `conftest.py`
    /// that fails takes the files below it along).
    pub fn of(baseline: &Baseline, test_files: &[String]) -> Option<Degraded> {
        let collected = Degraded::from_errors(
            baseline.runs.iter().map(|r| &r.collection_errors),
            test_files,
        );
        let tests = baseline.stable_pass.len() + baseline.failing.len() + baseline.flaky.len();
        let failing = baseline.failing.len();
        if tests == 0 || failing as f64 <= UNCOLLECTED_SHARE_LIMIT * tests as f64 {
            return collected;
        }
        let mut d = collected.unwrap_or_default();
        d.total = test_files.len();
        d.failing_tests = failing;
        d.tests = tests;
        if let Some(run) = baseline.runs.first() {
            for t in baseline.failing.iter().take(3) {
                let message = run
                    .results
                    .get(t)
                    .and_then(|r| r.message.as_deref())
                    .map(last_line)
                    .unwrap_or("no message");
                d.failures.insert(t.clone(), message.to_string());
            }
        }
        Some(d)
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
                ..Default::default()
            },
        )
    }

    /// The seed's detail: the count and the files.
    pub fn reason(&self) -> String {
        let files: Vec<&str> = self.errors.keys().map(String::as_str).collect();
        let mut parts = Vec::new();
        if self.uncollected as f64 > UNCOLLECTED_SHARE_LIMIT * self.total as f64 {
            parts.push(format!(
                "{}/{} test files fail to collect on the clean code (their tests are in no check): {}",
                self.uncollected,
                self.total,
                files.join(", ")
            ));
        }
        if self.failing_tests > 0 {
            let failures: Vec<String> = self
                .failures
                .iter()
                .map(|(t, m)| format!("{t}: {m}"))
                .collect();
            parts.push(format!(
                "{}/{} tests fail or error on the clean code in every repeat (they grade nothing), e.g. {}",
                self.failing_tests,
                self.tests,
                failures.join("; ")
            ));
        }
        parts.join("; ")
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
    fn most_tests_failing_on_the_clean_code_degrades_the_seed() {
        use crate::run::{Run, TestResult, TestStatus};
        let mut run = Run::exited("baseline#1");
        for i in 0..10 {
            let (status, message) = if i < 2 {
                (TestStatus::Passed, None)
            } else {
                (
                    TestStatus::Error,
                    Some("E   AssertionError: the C extension is not loaded".to_string()),
                )
            };
            let id = format!("tests/test_{i}.py::t");
            run.results.insert(
                id,
                TestResult {
                    status,
                    duration_s: 0.0,
                    message,
                },
            );
        }
        let coverage_run = run.clone();
        let b = crate::baseline::classify(
            vec![run.clone(), run],
            coverage_run,
            Default::default(),
            &Default::default(),
        )
        .unwrap();
        let d = Degraded::of(&b, &files(10)).expect("degraded");
        assert_eq!((d.failing_tests, d.tests, d.uncollected), (8, 10, 0));
        assert!(
            d.reason()
                .starts_with("8/10 tests fail or error on the clean code"),
            "{}",
            d.reason()
        );
        assert!(
            d.reason().contains("the C extension is not loaded"),
            "{}",
            d.reason()
        );
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
