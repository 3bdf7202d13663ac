//! The adapter for node's built-in test runner (`node --test`): swe-forge's reporter
//! (`node_test_reporter.mjs`, `--test-reporter`) writes the results in mocha's JSON shape to a
//! file (`--test-reporter-destination`), read with mocha's report reader; test ids are
//! `path/to/file.test.js::<full title>` (the enclosing suites' names and the test's, joined by
//! spaces), as for jest and mocha. node runs each test file in its own process: a file that
//! cannot load is a collection error of its own (its tests are ERRORs) and the others run.
//!
//! A selection names the test files and, unless every test of those files is asked for, a
//! `--test-name-pattern` that matches the tests' own names (the runner matches a test's name,
//! not its suites'): every run of whole words at the start or end of each requested full title,
//! so that the test and any enclosing `test()` it is a subtest of run; what else the pattern
//! matches is left out of the run's results.
//!
//! No per-test coverage: node's test runner has no hook that names the running test with its
//! suites in the versions Debian ships; candidates are screened with the tests of the files
//! named after their module, else the whole suite (as for JUnit 4).

use super::node::{self, regex_escape};
use super::{wrap, RunBudget, RunnerError, TestRunner};
use crate::coverage::CoverageMap;
use crate::run::Run;
use crate::sandbox::{shell_quote, Worker};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The reporter `node --test` loads.
pub const REPORTER_MJS: &str = include_str!("node_test_reporter.mjs");
/// Its file name, in a run's scratch directory or a harness's log directory.
pub const REPORTER_FILE: &str = "node-test-reporter.mjs";

const REPORT: &str = "node-test-report.json";
const SOURCES: &str = "node-test-sources.json";
/// The longest `--test-name-pattern` passed; a longer selection runs its files whole.
const PATTERN_BYTES: usize = 64 * 1024;

/// node's test runner for one repository.
#[derive(Clone, Debug)]
pub struct NodeTest {
    /// The command that runs the suite (default `node --test`); it must hold `--test`.
    pub command: String,
    /// Where full logs are kept (by digest); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// How many tests each test file holds (from a whole-suite run).
    pub tests_per_file: BTreeMap<String, usize>,
}

impl Default for NodeTest {
    fn default() -> Self {
        NodeTest {
            command: "node --test".to_string(),
            log_dir: None,
            tests_per_file: BTreeMap::new(),
        }
    }
}

/// `node --test` exits 1 when a test failed.
fn exit_rule(code: i32) -> Option<bool> {
    match code {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// The pattern alternatives of one full title: every run of whole words at its start or end
/// (`outer inner x` → `outer inner x`, `outer`, `outer inner`, `inner x`, `x`).
fn name_runs(title: &str) -> Vec<&str> {
    let mut out = vec![title];
    for (i, c) in title.char_indices() {
        if c == ' ' {
            out.push(&title[..i]);
            out.push(&title[i + 1..]);
        }
    }
    out
}

/// `command` with swe-forge's options right after `--test`, and its file arguments kept only
/// when `keep_files` (a selection names its own files). `None` when it has no `--test`.
pub fn command_with(command: &str, options: &[String], keep_files: bool) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "--test")?;
    let mut out: Vec<String> = words[..=at].iter().map(|w| w.to_string()).collect();
    out.extend(options.iter().cloned());
    for w in &words[at + 1..] {
        if w.starts_with('-') || keep_files {
            out.push(w.to_string());
        }
    }
    Some(out.join(" "))
}

impl NodeTest {
    pub fn new() -> NodeTest {
        NodeTest::default()
    }

    /// This runner knowing how many tests each file holds.
    pub fn with_tests_per_file<'a>(mut self, ids: impl IntoIterator<Item = &'a String>) -> Self {
        self.tests_per_file = node::tests_per_file(ids);
        self
    }

    /// The arguments that select `tests`: a name pattern unless every test of their files is
    /// asked for, then the files.
    fn selection(&self, tests: &[String]) -> Vec<String> {
        let mut by_file: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for id in tests {
            if let Some((file, name)) = id.split_once("::") {
                by_file.entry(file).or_default().insert(name);
            }
        }
        let mut args = Vec::new();
        let whole = by_file
            .iter()
            .all(|(f, names)| self.tests_per_file.get(*f) == Some(&names.len()));
        if !whole {
            let runs: BTreeSet<&str> = by_file
                .values()
                .flatten()
                .flat_map(|n| name_runs(n))
                .collect();
            let pattern = format!(
                "^(?:{})$",
                runs.iter()
                    .map(|n| regex_escape(n))
                    .collect::<Vec<_>>()
                    .join("|")
            );
            if pattern.len() <= PATTERN_BYTES {
                args.push(format!("--test-name-pattern={pattern}"));
            }
        }
        args.extend(by_file.keys().map(|f| f.to_string()));
        args
    }

    /// The command line of a run: the reporter and its file, then the selection.
    pub fn command_line(&self, scratch: &str, tests: Option<&[String]>) -> String {
        let options = vec![
            shell_quote(&format!("--test-reporter={scratch}/{REPORTER_FILE}")),
            shell_quote(&format!("--test-reporter-destination={scratch}/{REPORT}")),
        ];
        let base = command_with(&self.command, &options, tests.is_none())
            .unwrap_or_else(|| format!("node --test {}", options.join(" ")));
        match tests {
            None => base,
            Some(t) => {
                let mut cmd = base;
                for a in self.selection(t) {
                    cmd.push(' ');
                    cmd.push_str(&shell_quote(&a));
                }
                cmd
            }
        }
    }

    fn reading(&self) -> node::Reading<'_> {
        node::Reading {
            report: REPORT,
            sources: SOURCES,
            parse: super::mocha::parse_report,
            exit: exit_rule,
            log_dir: self.log_dir.as_deref(),
        }
    }
}

impl TestRunner for NodeTest {
    fn run(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        if tests.is_some_and(|t| t.is_empty()) {
            return Ok(node::empty_run(label));
        }
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let script = format!(
            "{}{}",
            super::maven::heredoc(
                &shell_quote(&format!("{scratch}/{REPORTER_FILE}")),
                REPORTER_MJS
            ),
            node::run_script(
                &self.command_line(&scratch, tests),
                &scratch,
                REPORT,
                SOURCES
            )
        );
        let out = worker.exec(&wrap(&scratch, &script, budget), budget.wall)?;
        let mut run = node::finish(&self.reading(), worker, label, tests, budget, out)?;
        if let Some(requested) = tests {
            // A pattern may run tests that were not asked for.
            let wanted: BTreeSet<&str> = requested.iter().map(String::as_str).collect();
            run.results.retain(|id, _| wanted.contains(id.as_str()));
        }
        Ok(run)
    }

    fn run_with_coverage(
        &self,
        _worker: &mut dyn Worker,
        _budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError> {
        Err(RunnerError::Coverage(
            "node's test runner gives no per-test coverage".to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_gets_the_reporter_after_test_and_a_selection_its_files() {
        let n = NodeTest {
            command: "node --test --test-concurrency=1 test/".to_string(),
            ..NodeTest::new()
        }
        .with_tests_per_file(&[
            "test/a.test.js::math adds".to_string(),
            "test/a.test.js::math fails".to_string(),
            "test/b.test.js::top".to_string(),
        ]);
        let whole = n.command_line("/s", None);
        assert_eq!(
            whole,
            "node --test --test-reporter=/s/node-test-reporter.mjs \
             --test-reporter-destination=/s/node-test-report.json --test-concurrency=1 test/"
        );
        let some = n.command_line("/s", Some(&["test/a.test.js::math fails".to_string()]));
        assert!(
            some.ends_with("--test-concurrency=1 '--test-name-pattern=^(?:fails|math|math fails)$' test/a.test.js"),
            "{some}"
        );
        let all_of_b = n.command_line("/s", Some(&["test/b.test.js::top".to_string()]));
        assert!(
            all_of_b.ends_with("--test-concurrency=1 test/b.test.js"),
            "{all_of_b}"
        );
        assert_eq!(command_with("jest", &[], true), None);
    }
}
