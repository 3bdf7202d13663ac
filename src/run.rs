//! Runs: one execution of a test command in a sandbox — which tests, exit code, per-test
//! status, durations and a digest of the log.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What a test did in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TestStatus {
    Passed,
    Failed,
    Error,
    Skipped,
    /// Expected (requested) but absent from the report: never assumed to pass.
    Missing,
}

impl TestStatus {
    /// FAILED or ERROR: the test told the code is wrong.
    pub fn is_failure(self) -> bool {
        matches!(self, TestStatus::Failed | TestStatus::Error)
    }
}

impl fmt::Display for TestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TestStatus::Passed => "PASSED",
            TestStatus::Failed => "FAILED",
            TestStatus::Error => "ERROR",
            TestStatus::Skipped => "SKIPPED",
            TestStatus::Missing => "MISSING",
        };
        f.write_str(s)
    }
}

/// One test's outcome in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub status: TestStatus,
    /// Seconds, as reported by the framework.
    pub duration_s: f64,
    /// First part of the failure or error message, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How a run ended, as seen from outside the test framework.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunEnd {
    /// The process exited with a code.
    Exited,
    /// The hard timeout fired and the process group was killed.
    TimedOut,
    /// Killed by a signal (OOM killer, a crash).
    Signaled,
}

/// One execution of tests in a sandbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// What the run was for: `baseline#1`, `screen`, `buggy#2`, `fixed#3`, `coverage`…
    pub label: String,
    /// The test ids requested; `None` means the whole suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<Vec<String>>,
    pub end: RunEnd,
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Per test id.
    pub results: BTreeMap<String, TestResult>,
    /// Wall time of the whole command, seconds.
    pub duration_s: f64,
    /// CPU time (user + system) of the test processes, seconds, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// blake3 of stdout followed by stderr.
    pub log_digest: String,
    /// Where the full log was written, when it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_path: Option<String>,
    /// Set when the exit code disagrees with the parsed results, or the report is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly: Option<String>,
    /// Processes the kernel's OOM killer ended during the run (Docker backend).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub oom_kills: u64,
    /// Test files that could not be collected (an import error: a bug that breaks the
    /// package's import), with the error: each of their tests is an ERROR of this run
    /// ([`Run::status`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub collection_errors: BTreeMap<String, String>,
    /// Tests that drew on randomness nothing in them seeded (pytest, through swe-forge's probe
    /// plugin), with what they drew on (`random`: the global generator; `random-instance`: a
    /// generator the repository seeded from the OS). Such a test may fail with the bug in
    /// every run here and pass elsewhere: verification does not grade a task by it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nondeterministic: BTreeMap<String, String>,
    /// The test files in the order the run reported them (pytest), where the runner knows it:
    /// the baseline keeps the whole suite's order ([`crate::baseline::Baseline::suite_order`]).
    #[serde(skip)]
    pub file_order: Vec<String>,
    /// Where the runner can tell (pytest, through swe-forge's probe plugin): the tests that
    /// could depend on code they did not run in their own process under the tracer, with how
    /// (`process`: started another process; `source`: read a Python file of the repository;
    /// `trace`: set a tracer). `None`: the runner cannot tell.
    #[serde(skip)]
    pub indirect: Option<BTreeMap<String, String>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// See [`Run::collection_error`].
pub fn collection_error_of<'a>(errors: &'a BTreeMap<String, String>, id: &str) -> Option<&'a str> {
    let file = id.split("::").next()?;
    if let Some(e) = errors.get(file) {
        return Some(e);
    }
    errors.iter().find_map(|(path, e)| {
        let dir = path.strip_suffix("conftest.py")?;
        (dir.is_empty() || dir.ends_with('/')).then_some(())?;
        file.starts_with(dir).then_some(e.as_str())
    })
}

/// Start of [`Run::anomaly`] when the code did not build (a compiled language's main or test
/// sources): a runner that builds says so this way, and verification and baselines read it with
/// [`Run::is_build_error`].
pub const BUILD_ERROR_PREFIX: &str = "compile error:";

/// Start of [`Run::anomaly`] when the test runner itself failed (pytest's internal or usage
/// error, a report that was not written or cannot be read): the run says nothing about the
/// tests. Each runner knows what its exit codes mean; verification reads only this
/// ([`Run::is_runner_failure`]).
pub const RUNNER_FAILURE_PREFIX: &str = "the test runner failed: ";

impl Run {
    /// A run that ended normally with exit 1 and no result yet (tests fill in what they need).
    #[cfg(test)]
    pub(crate) fn exited(label: &str) -> Run {
        Run {
            label: label.to_string(),
            requested: None,
            end: RunEnd::Exited,
            exit_code: Some(1),
            signal: None,
            results: BTreeMap::new(),
            duration_s: 0.0,
            cpu_s: None,
            log_digest: String::new(),
            log_path: None,
            anomaly: None,
            oom_kills: 0,
            collection_errors: BTreeMap::new(),
            nondeterministic: BTreeMap::new(),
            file_order: Vec::new(),
            indirect: None,
        }
    }

    /// Whether the run failed because the code did not build (see [`BUILD_ERROR_PREFIX`]).
    pub fn is_build_error(&self) -> bool {
        self.anomaly
            .as_deref()
            .is_some_and(|a| a.starts_with(BUILD_ERROR_PREFIX))
    }

    /// The runner itself failed (see [`RUNNER_FAILURE_PREFIX`]).
    pub fn is_runner_failure(&self) -> bool {
        self.anomaly
            .as_deref()
            .is_some_and(|a| a.starts_with(RUNNER_FAILURE_PREFIX))
    }

    pub fn timed_out(&self) -> bool {
        self.end == RunEnd::TimedOut
    }

    pub fn status(&self, id: &str) -> TestStatus {
        match self.results.get(id) {
            Some(r) => r.status,
            None if self.collection_error(id).is_some() => TestStatus::Error,
            None => TestStatus::Missing,
        }
    }

    /// Make the worker's paths in messages repository-relative (`<root>/pkg/a.py` →
    /// `pkg/a.py`), as a user's report would show them: no record or text carries a path of
    /// the machine that ran the tests.
    pub fn relativize(&mut self, root: &str) {
        let root = root.trim_end_matches('/');
        if root.is_empty() {
            return;
        }
        let scrub = |text: &mut String| {
            if text.contains(root) {
                *text = text.replace(&format!("{root}/"), "").replace(root, ".");
            }
        };
        for r in self.results.values_mut() {
            if let Some(m) = r.message.as_mut() {
                scrub(m);
            }
        }
        for e in self.collection_errors.values_mut() {
            scrub(e);
        }
        if let Some(a) = self.anomaly.as_mut() {
            scrub(a);
        }
    }

    /// The collection error of the file holding the test `id` (`file::name`), if any: that
    /// file's, or that of a `conftest.py` that failed to load in its directory or above (its
    /// tests could not be collected at all).
    pub fn collection_error(&self, id: &str) -> Option<&str> {
        collection_error_of(&self.collection_errors, id)
    }

    /// Ids whose status is FAILED or ERROR.
    pub fn failures(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|(_, r)| r.status.is_failure())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Ids with the given status.
    pub fn with_status(&self, status: TestStatus) -> Vec<String> {
        self.results
            .iter()
            .filter(|(_, r)| r.status == status)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A short summary of the run's outcome for logs: `12 passed, 1 failed (exit 1, 0.8s)`.
    pub fn summary(&self) -> String {
        let mut counts: BTreeMap<TestStatus, usize> = BTreeMap::new();
        for r in self.results.values() {
            *counts.entry(r.status).or_default() += 1;
        }
        let mut parts: Vec<String> = counts
            .iter()
            .map(|(s, n)| format!("{n} {}", s.to_string().to_lowercase()))
            .collect();
        if !self.collection_errors.is_empty() {
            parts.push(format!(
                "{} test file(s) not collected",
                self.collection_errors.len()
            ));
        }
        let end = match self.end {
            RunEnd::Exited => format!("exit {}", self.exit_code.unwrap_or(-1)),
            RunEnd::TimedOut => match &self.anomaly {
                Some(a) if a.contains("CPU") => "CPU limit".to_string(),
                _ => "timed out".to_string(),
            },
            RunEnd::Signaled => format!("signal {}", self.signal.unwrap_or(0)),
        };
        format!(
            "{} ({end}, {:.2}s)",
            if parts.is_empty() {
                "no results".to_string()
            } else {
                parts.join(", ")
            },
            self.duration_s
        )
    }

    /// Whether any failure message says the process ran out of a resource (memory, processes).
    pub fn hit_resource_limit(&self) -> bool {
        self.results.values().any(|r| {
            r.message.as_deref().is_some_and(|m| {
                m.contains("MemoryError")
                    || m.contains("Resource temporarily unavailable")
                    || m.contains("Cannot allocate memory")
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(message: &str) -> Run {
        let mut results = BTreeMap::new();
        results.insert(
            "tests/test_a.py::test_x".to_string(),
            TestResult {
                status: TestStatus::Failed,
                duration_s: 0.0,
                message: Some(message.to_string()),
            },
        );
        Run {
            label: crate::check::Check::Buggy.run(1).label(),
            requested: None,
            end: RunEnd::Exited,
            exit_code: Some(1),
            signal: None,
            results,
            duration_s: 0.1,
            cpu_s: None,
            log_digest: String::new(),
            log_path: None,
            anomaly: None,
            oom_kills: 0,
            collection_errors: BTreeMap::new(),
            nondeterministic: BTreeMap::new(),
            file_order: Vec::new(),
            indirect: None,
        }
    }

    #[test]
    fn worker_paths_become_repository_relative() {
        let mut run =
            run_with("no setting in /tmp/wt/worker-1/repo/pkg/a.py (cwd /tmp/wt/worker-1/repo)");
        run.collection_errors.insert(
            "tests/test_b.py".into(),
            "ImportError: /tmp/wt/worker-1/repo/pkg/b.py".into(),
        );
        run.relativize("/tmp/wt/worker-1/repo/");
        assert_eq!(
            run.results["tests/test_a.py::test_x"].message.as_deref(),
            Some("no setting in pkg/a.py (cwd .)")
        );
        assert_eq!(
            run.collection_errors["tests/test_b.py"],
            "ImportError: pkg/b.py"
        );
    }

    #[test]
    fn tests_of_an_uncollected_file_are_errors() {
        let mut run = run_with("assert 1 == 2");
        run.collection_errors
            .insert("tests/test_b.py".into(), "ValueError: boom".into());
        assert_eq!(run.status("tests/test_b.py::test_y"), TestStatus::Error);
        assert_eq!(run.status("tests/test_c.py::test_z"), TestStatus::Missing);
        assert_eq!(
            run.collection_error("tests/test_b.py::test_y"),
            Some("ValueError: boom")
        );
        assert!(
            run.summary().contains("1 test file(s) not collected"),
            "{}",
            run.summary()
        );
    }

    #[test]
    fn a_conftest_that_failed_to_load_errors_every_test_below_it() {
        let mut run = run_with("assert 1 == 2");
        run.collection_errors
            .insert("tests/unit/conftest.py".into(), "AttributeError: x".into());
        assert_eq!(
            run.status("tests/unit/test_b.py::test_y"),
            TestStatus::Error
        );
        assert_eq!(run.status("tests/unit2/test_c.py::t"), TestStatus::Missing);
        assert_eq!(run.status("tests/test_c.py::t"), TestStatus::Missing);
        run.collection_errors
            .insert("conftest.py".into(), "ImportError: y".into());
        assert_eq!(
            run.collection_error("tests/test_c.py::t"),
            Some("ImportError: y")
        );
        assert_eq!(run.status("tests/test_c.py::t"), TestStatus::Error);
    }
}
