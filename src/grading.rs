//! The grading command: one recorded command per task (the test files it runs, in order; the
//! runner's options; the configuration the runner reads) that every grader runs. Verification
//! decides FAIL_TO_PASS and PASS_TO_PASS with it; `audit`, `serve`, `train`, SWE-bench's
//! `eval_script` and Harbor's `tests/test.sh` are made from it, so a task that verified is a task
//! that grades.
//!
//! Scope: the test files of the tests that execute the mutated lines (or, when none does, of the
//! tests that failed with the bug in screening), plus any file `test_patch` adds, in the order
//! the whole suite runs them. A grader adds only options that change what is reported, never
//! what runs (`-rA`, a report file).

use crate::baseline::Baseline;
use crate::run::Run;
use crate::runner::{RunBudget, RunnerError, TestRunner};
use crate::sandbox::{shell_quote, Worker};
use crate::toolchain::Toolchain;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Mutex;

/// A task's grading command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grading {
    /// What starts the runner: the seed's test command (`python -m pytest`).
    pub base_command: String,
    /// The runner's options, after the base command and before the files.
    #[serde(default)]
    pub options: Vec<String>,
    /// The test files it runs, repository-relative, in this order.
    pub files: Vec<String>,
    /// The configuration file the runner reads, as it is in the start state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigFile>,
    /// The command line: base command, options, files (each shell-quoted).
    pub command: String,
}

/// A configuration file the runner reads, and its content's blake3 at the start state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigFile {
    pub path: String,
    pub blake3: String,
}

impl Grading {
    /// The grading command of `base_command` with `options` over `files`, reading `config`.
    pub fn new(
        base_command: &str,
        options: Vec<String>,
        files: Vec<String>,
        config: Option<ConfigFile>,
    ) -> Grading {
        let mut g = Grading {
            base_command: base_command.trim().to_string(),
            options,
            files,
            config,
            command: String::new(),
        };
        g.command = g.line_with(&[]);
        g
    }

    /// The command line with `report` (options that change only what is reported) added
    /// after the grading options: what a grader runs.
    pub fn line_with(&self, report: &[String]) -> String {
        let mut words = vec![self.base_command.clone()];
        words.extend(self.options.iter().map(|o| shell_quote(o)));
        words.extend(report.iter().cloned());
        words.extend(self.files.iter().map(|f| shell_quote(f)));
        words.retain(|w| !w.is_empty());
        words.join(" ")
    }

    /// What identifies the command, for "the same tree under the same command" (runs reused).
    pub fn key(&self) -> String {
        blake3::hash(
            serde_json::to_string(&(&self.base_command, &self.options, &self.files, &self.config))
                .expect("a grading command serializes")
                .as_bytes(),
        )
        .to_hex()[..16]
            .to_string()
    }

    /// Whether `file` is one of the files it runs.
    pub fn runs_file(&self, file: &str) -> bool {
        self.files.iter().any(|f| f == file)
    }
}

/// The files of `ids` (`file_of` maps an id to its file), in the order of `suite_order` (the
/// whole suite's order of files); files it does not name follow, sorted.
pub fn files_in_order<'a>(
    ids: impl IntoIterator<Item = &'a String>,
    suite_order: &[String],
    file_of: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let wanted: BTreeSet<String> = ids.into_iter().filter_map(|id| file_of(id)).collect();
    let mut out: Vec<String> = suite_order
        .iter()
        .filter(|f| wanted.contains(*f))
        .cloned()
        .collect();
    for f in &wanted {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out
}

/// The configuration file pytest reads at `root`, in pytest's own order of precedence
/// (`pytest.ini`, `.pytest.ini`, `pyproject.toml` with `[tool.pytest.ini_options]`,
/// `tox.ini` with `[pytest]`, `setup.cfg` with `[tool:pytest]`).
pub fn pytest_config(root: &Path) -> Option<ConfigFile> {
    let candidates: [(&str, Option<&str>); 5] = [
        ("pytest.ini", None),
        (".pytest.ini", None),
        ("pyproject.toml", Some("[tool.pytest.ini_options]")),
        ("tox.ini", Some("[pytest]")),
        ("setup.cfg", Some("[tool:pytest]")),
    ];
    for (name, section) in candidates {
        let Ok(bytes) = std::fs::read(root.join(name)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if section.is_none_or(|s| text.lines().any(|l| l.trim() == s)) {
            return Some(ConfigFile {
                path: name.to_string(),
                blake3: blake3::hash(&bytes).to_hex().to_string(),
            });
        }
    }
    None
}

/// Run `grading` on the worker's tree: its files, whole, in its order. `tests`: the ids the
/// caller reads of the run (absent ones are MISSING).
pub fn run(
    runner: &dyn TestRunner,
    worker: &mut dyn Worker,
    label: &str,
    grading: &Grading,
    tests: &[String],
    budget: RunBudget,
) -> Result<Run, RunnerError> {
    runner.run_grading(worker, label, grading, tests, budget)
}

/// Runs of grading commands on trees, per (tree, command), shared by a seed's workers: the
/// evidence of a check whose tree and command were already run.
#[derive(Default)]
pub struct GradedTrees {
    runs: Mutex<HashMap<(String, String), Vec<Run>>>,
}

impl GradedTrees {
    pub fn get(&self, tree: &str, grading: &Grading) -> Option<Vec<Run>> {
        self.runs
            .lock()
            .expect("graded trees")
            .get(&(tree.to_string(), grading.key()))
            .cloned()
    }

    pub fn put(&self, tree: &str, grading: &Grading, runs: Vec<Run>) {
        self.runs
            .lock()
            .expect("graded trees")
            .insert((tree.to_string(), grading.key()), runs);
    }
}

/// What a candidate's grading command is made from.
pub struct GradingContext<'a> {
    pub toolchain: &'a dyn Toolchain,
    /// The clean checkout: the configuration the runner reads is read here.
    pub root: &'a Path,
    /// The seed's test command.
    pub test_command: &'a str,
    /// `--full-repeats`: the command runs every file of the suite.
    pub whole_suite: bool,
    pub graded_trees: &'a GradedTrees,
}

impl GradingContext<'_> {
    /// The grading command over the files of `scope` (every stable test's with
    /// `whole_suite`) and of `added` (tests a test patch adds), in the suite's order.
    pub fn grading_for(
        &self,
        scope: &BTreeSet<String>,
        baseline: &Baseline,
        added: &[String],
    ) -> Grading {
        let file_of = |id: &str| self.toolchain.test_file(id, &[]);
        let ids: Vec<&String> = if self.whole_suite {
            baseline.stable_pass.iter().chain(added).collect()
        } else {
            scope.iter().chain(added).collect()
        };
        let files = files_in_order(ids, &baseline.suite_order, &file_of);
        self.toolchain.grading(self.root, self.test_command, files)
    }

    /// The tests a run of `grading` is read for: the stable tests of its files, and `added`.
    pub fn graded_tests(
        &self,
        grading: &Grading,
        baseline: &Baseline,
        added: &[String],
    ) -> Vec<String> {
        let mut out: Vec<String> = baseline
            .stable_pass
            .iter()
            .filter(|t| {
                self.toolchain
                    .test_file(t, &[])
                    .is_some_and(|f| grading.runs_file(&f))
            })
            .cloned()
            .collect();
        for t in added {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_keeps_the_order_of_its_files() {
        let g = Grading::new(
            "python -m pytest",
            vec!["-p".into(), "no:cacheprovider".into()],
            vec!["tests/test_b.py".into(), "docs/a b.rst".into()],
            None,
        );
        assert_eq!(
            g.command,
            "python -m pytest -p no:cacheprovider tests/test_b.py 'docs/a b.rst'"
        );
        assert_eq!(
            g.line_with(&["-rA".into()]),
            "python -m pytest -p no:cacheprovider -rA tests/test_b.py 'docs/a b.rst'"
        );
        let mut h = g.clone();
        h.files.reverse();
        assert_ne!(g.key(), h.key(), "the order is part of the command");
    }

    #[test]
    fn files_follow_the_suite_s_order() {
        let ids: Vec<String> = [
            "docs/usage.rst::usage.rst",
            "tests/test_a.py::test_x",
            "tests/test_a.py::test_y",
            "tests/new_test.py::test_z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let order: Vec<String> = ["tests/test_a.py", "tests/test_c.py", "docs/usage.rst"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let file_of = |id: &str| id.split("::").next().map(str::to_string);
        assert_eq!(
            files_in_order(&ids, &order, &file_of),
            vec!["tests/test_a.py", "docs/usage.rst", "tests/new_test.py"]
        );
    }

    #[test]
    fn finds_the_configuration_pytest_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("setup.cfg"), "[metadata]\nname = x\n").unwrap();
        assert_eq!(pytest_config(dir.path()), None);
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.pytest.ini_options]\ntestpaths = [\"tests\", \"docs\"]\n",
        )
        .unwrap();
        assert_eq!(pytest_config(dir.path()).unwrap().path, "pyproject.toml");
        std::fs::write(dir.path().join("pytest.ini"), "[pytest]\n").unwrap();
        assert_eq!(pytest_config(dir.path()).unwrap().path, "pytest.ini");
    }
}
