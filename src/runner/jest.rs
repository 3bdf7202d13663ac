//! The jest adapter: runs jest in band with its JSON report (`--json --outputFile`), reads
//! per-test results from it, and collects per-test line coverage from istanbul's counters.
//!
//! Test ids are `path/to/file.test.js::<full name>`, the full name being jest's own: the
//! titles of the enclosing `describe` blocks and the test's, joined by spaces (what `-t`
//! matches). A selection names the test files (`--runTestsByPath`) and, unless every test of
//! those files is asked for, a `-t` pattern that matches exactly the requested full names.
//! A test file jest could not run (a syntax error, or a module it requires that throws when
//! loaded) is a collection error: its requested tests are ERRORs.
//!
//! Per-test coverage (`jest_coverage.js`, registered after the project's own setup files by
//! the configuration wrapper `jest_config.js`): `jest --coverage` instruments the sources, and
//! before and after each test the setup file compares istanbul's statement and function
//! counters; the lines of the statements whose counts grew are the test's. What runs while a
//! test file loads its modules is recorded as run outside tests.

use super::node::{
    self, first_part, regex_escape, relative, strip_ansi, without_foreign_frames, COVERAGE_CORE_JS,
};
use super::{wrap, RunBudget, RunnerError, TestRunner};
use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd, TestResult, TestStatus};
use crate::sandbox::{shell_quote, Worker};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The per-test coverage setup file.
pub const COVERAGE_SETUP_JS: &str = include_str!("jest_coverage.js");

/// The configuration wrapper of every run (the exit guard; in the coverage run, the coverage
/// setup file).
pub const COVERAGE_CONFIG_JS: &str = include_str!("jest_config.js");
/// The guard that makes `process.exit()` throw in the code under test.
pub const EXIT_GUARD_JS: &str = include_str!("jest_exit.js");

const REPORT: &str = "jest-report.json";
const SOURCES: &str = "jest-sources.json";

const COVERAGE_LINES: &str = "jest-coverage.jsonl";
/// The longest `-t` pattern passed; a longer selection runs its files whole (the results of
/// the tests not asked for are then left out of the run).
const PATTERN_BYTES: usize = 64 * 1024;

/// jest for one repository.
#[derive(Clone, Debug)]
pub struct Jest {
    /// The command that starts jest (default `jest`).
    pub command: String,
    /// jest's cache directory, as commands see it (outside the worktree); `None`: jest's own.
    pub cache_dir: Option<String>,
    /// Where full logs are kept (by digest); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// How many tests each test file holds (from a whole-suite run): a selection of all of a
    /// file's tests names the file alone.
    pub tests_per_file: BTreeMap<String, usize>,
}

impl Default for Jest {
    fn default() -> Self {
        Jest {
            command: "jest".to_string(),
            cache_dir: None,
            log_dir: None,
            tests_per_file: BTreeMap::new(),
        }
    }
}

/// The test file of a jest id (`test/a.test.js::adds two` → `test/a.test.js`).
pub fn test_file(id: &str) -> Option<&str> {
    id.split_once("::").map(|(f, _)| f)
}

impl Jest {
    pub fn new() -> Jest {
        Jest::default()
    }

    /// This runner knowing how many tests each file holds.
    pub fn with_tests_per_file<'a>(mut self, ids: impl IntoIterator<Item = &'a String>) -> Self {
        self.tests_per_file = node::tests_per_file(ids);
        self
    }

    /// The arguments that select `tests`: the files, and a name pattern unless every test
    /// of those files is asked for (or the pattern would be too long).
    fn selection(&self, tests: &[String]) -> Vec<String> {
        let mut files: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for id in tests {
            if let Some((file, name)) = id.split_once("::") {
                files.entry(file).or_default().insert(name);
            }
        }
        let mut args = vec!["--runTestsByPath".to_string()];
        args.extend(files.keys().map(|f| f.to_string()));
        let whole = files
            .iter()
            .all(|(f, names)| self.tests_per_file.get(*f) == Some(&names.len()));
        if !whole {
            let names: BTreeSet<&str> = files.values().flatten().copied().collect();
            let pattern = format!(
                "^(?:{})$",
                names
                    .iter()
                    .map(|n| regex_escape(n))
                    .collect::<Vec<_>>()
                    .join("|")
            );
            if pattern.len() <= PATTERN_BYTES {
                args.push("-t".to_string());
                args.push(pattern);
            }
        }
        args
    }

    /// The jest command line of a run (`tests`: `None` for the whole suite).
    pub fn command_line(&self, scratch: &str, tests: Option<&[String]>, coverage: bool) -> String {
        let mut cmd = format!(
            "{} --ci --runInBand --watchman=false --passWithNoTests --json --outputFile={}",
            self.command,
            shell_quote(&format!("{scratch}/{REPORT}"))
        );
        if let Some(dir) = &self.cache_dir {
            cmd.push_str(&format!(" --cacheDirectory={}", shell_quote(dir)));
        }
        if self.wraps_config() {
            cmd.push_str(&format!(
                " --config={}",
                shell_quote(&format!("{scratch}/jest-config.js"))
            ));
        }
        if coverage {
            cmd.push_str(&format!(
                " --coverage --coverageReporters=json-summary --coverageDirectory={}",
                shell_quote(&format!("{scratch}/jest-coverage")),
            ));
        }
        if let Some(tests) = tests {
            for a in self.selection(tests) {
                cmd.push(' ');
                cmd.push_str(&shell_quote(&a));
            }
        }
        cmd
    }

    /// Whether runs use swe-forge's configuration wrapper (not when the seed's command names
    /// a configuration of its own).
    fn wraps_config(&self) -> bool {
        !self
            .command
            .split_whitespace()
            .any(|w| w == "-c" || w == "--config" || w.starts_with("--config="))
    }

    /// The wrapper configuration and the exit guard, written to the scratch directory, and the
    /// variable that names the guard.
    fn prelude(&self, scratch: &str) -> String {
        if !self.wraps_config() {
            return String::new();
        }
        let config = format!("{scratch}/jest-config.js");
        let exit = format!("{scratch}/jest-exit.js");
        format!(
            "{}{}export SWE_FORGE_JEST_EXIT={}\n",
            super::maven::heredoc(&shell_quote(&config), COVERAGE_CONFIG_JS),
            super::maven::heredoc(&shell_quote(&exit), EXIT_GUARD_JS),
            shell_quote(&exit),
        )
    }

    /// jest, then (only when the report has a failure) the failed tests' source lines.
    fn script(&self, scratch: &str, tests: Option<&[String]>) -> String {
        format!(
            "{}{}",
            self.prelude(scratch),
            node::run_script(
                &self.command_line(scratch, tests, false),
                scratch,
                REPORT,
                SOURCES,
            )
        )
    }

    /// One jest process for `tests` (`None`: the whole suite) within `files` (`None`: all of
    /// theirs), and whether it wrote its report.
    fn attempt(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        files: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<(Run, bool), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let within: Option<Vec<String>> = match (tests, files) {
            (Some(t), Some(f)) => Some(
                t.iter()
                    .filter(|id| test_file(id).is_some_and(|tf| f.iter().any(|x| x == tf)))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let script = match (tests, files) {
            (None, Some(f)) => format!(
                "{}{}",
                self.prelude(&scratch),
                node::run_script(
                    &format!(
                        "{} --runTestsByPath {}",
                        self.command_line(&scratch, None, false),
                        f.iter()
                            .map(|x| shell_quote(x))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    &scratch,
                    REPORT,
                    SOURCES,
                )
            ),
            _ => self.script(&scratch, within.as_deref().or(tests)),
        };
        let out = worker.exec(&wrap(&scratch, &script, budget), budget.wall)?;
        let wrote = worker.read_scratch(REPORT)?.is_some();
        let mut run = node::finish(
            &self.reading(),
            worker,
            label,
            within.as_deref().or(tests),
            budget,
            out,
        )?;
        run.requested = tests.map(|t| t.to_vec());
        mark_type_errors(&mut run);
        Ok((run, wrote))
    }

    fn reading(&self) -> node::Reading<'_> {
        node::Reading {
            report: REPORT,
            sources: SOURCES,
            parse: parse_report,
            exit: |code| match code {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
            log_dir: self.log_dir.as_deref(),
        }
    }

    fn coverage_script(&self, scratch: &str) -> String {
        let setup = format!("{scratch}/jest-coverage-setup.js");
        let core = format!("{scratch}/coverage-core.js");
        let lines = format!("{scratch}/{COVERAGE_LINES}");
        format!(
            "{}{}{}rm -f {lines_q}\nexport SWE_FORGE_JEST_SETUP={setup_q} SWE_FORGE_JEST_COVERAGE={lines_q} SWE_FORGE_COVERAGE_CORE={core_q}\n{}",
            self.prelude(scratch),
            super::maven::heredoc(&shell_quote(&setup), COVERAGE_SETUP_JS),
            super::maven::heredoc(&shell_quote(&core), COVERAGE_CORE_JS),
            self.command_line(scratch, None, true),
            setup_q = shell_quote(&setup),
            lines_q = shell_quote(&lines),
            core_q = shell_quote(&core),
        )
    }
}

/// Per-test results and collection errors (test file → message) from jest's JSON report.
pub fn parse_report(json: &str, root: &str) -> Result<node::ParsedReport, String> {
    let doc: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let files = doc["testResults"]
        .as_array()
        .ok_or("no `testResults` in the report")?;
    let mut results = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for f in files {
        let file = relative(f["name"].as_str().unwrap_or_default(), root);
        let cases = f["assertionResults"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let message = f["message"].as_str().unwrap_or_default();
        let exec_error = f["testExecError"]["message"].as_str().unwrap_or_default();
        if f["status"] == "failed" && cases.is_empty() {
            let why = if exec_error.is_empty() {
                message
            } else {
                exec_error
            };
            errors.insert(file.clone(), suite_error(why));
            continue;
        }
        for c in cases {
            let name = c["fullName"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| {
                    let mut titles: Vec<String> = c["ancestorTitles"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    titles.push(c["title"].as_str().unwrap_or_default().to_string());
                    titles.join(" ")
                });
            let status = match c["status"].as_str().unwrap_or_default() {
                "passed" => TestStatus::Passed,
                "failed" => TestStatus::Failed,
                _ => TestStatus::Skipped,
            };
            let message = c["failureMessages"]
                .as_array()
                .and_then(|m| m.first())
                .and_then(|m| m.as_str())
                .map(|m| first_part(&without_foreign_frames(&strip_ansi(m), root)));
            results.insert(
                format!("{file}::{name}"),
                TestResult {
                    status,
                    duration_s: c["duration"].as_f64().unwrap_or(0.0) / 1000.0,
                    message,
                },
            );
        }
    }
    Ok((results, errors))
}

/// The part of jest's "Test suite failed to run" message that says why.
fn suite_error(message: &str) -> String {
    let text = strip_ansi(message);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("Test suite failed to run"))
        .take(6)
        .collect();
    if lines.is_empty() {
        "the test file could not be run".to_string()
    } else {
        lines.join("\n")
    }
}

/// A test file that did not run because TypeScript's check of the code failed (ts-jest's
/// `error TS2345: …` diagnostics) means the code does not build: the run is a build error, as a
/// Java compile error is ([`crate::run::BUILD_ERROR_PREFIX`]), not tests that fail.
fn mark_type_errors(run: &mut Run) {
    let diagnostic = run.collection_errors.values().find_map(|e| {
        e.lines().find(|l| {
            l.split("error TS")
                .nth(1)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
    });
    if let Some(line) = diagnostic {
        run.anomaly = Some(format!(
            "{} {}",
            crate::run::BUILD_ERROR_PREFIX,
            line.trim()
        ));
    }
}

impl TestRunner for Jest {
    /// A test that ends jest's process (code under test calling `process.exit`) leaves no
    /// report: the run's files are then run again in halves until each file that ends the
    /// process is found, and that file's tests are ERRORs (as a file that cannot load).
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
        let (first, wrote) = self.attempt(worker, label, tests, None, budget)?;
        if wrote || first.end != RunEnd::Exited {
            return Ok(first);
        }
        let files: Vec<String> = match tests {
            Some(t) => t
                .iter()
                .filter_map(|id| test_file(id))
                .collect::<BTreeSet<&str>>()
                .into_iter()
                .map(str::to_string)
                .collect(),
            None => self.tests_per_file.keys().cloned().collect(),
        };
        let mut merged = first.clone();
        merged.results.clear();
        merged.anomaly = None;
        let mut exited: BTreeMap<String, String> = BTreeMap::new();
        let why = |r: &Run| {
            let text = r.anomaly.as_deref().unwrap_or_default();
            let text = text
                .strip_prefix(crate::run::RUNNER_FAILURE_PREFIX)
                .unwrap_or(text);
            format!("the test process exited while this file ran ({text})")
        };
        if files.len() < 2 {
            match files.first() {
                Some(f) => {
                    exited.insert(f.clone(), why(&first));
                }
                None => return Ok(first),
            }
        } else {
            let mid = files.len() / 2;
            let mut queue = vec![files[mid..].to_vec(), files[..mid].to_vec()];
            while let Some(group) = queue.pop() {
                let (r, wrote) = self.attempt(worker, label, tests, Some(&group), budget)?;
                merged.duration_s += r.duration_s;
                merged.cpu_s = match (merged.cpu_s, r.cpu_s) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
                if r.end != RunEnd::Exited {
                    // A timeout or a signal: that is the run's outcome.
                    let mut r = r;
                    r.duration_s = merged.duration_s;
                    r.requested = tests.map(|t| t.to_vec());
                    return Ok(r);
                }
                if !wrote {
                    if group.len() == 1 {
                        exited.insert(group[0].clone(), why(&r));
                    } else {
                        let mid = group.len() / 2;
                        queue.push(group[mid..].to_vec());
                        queue.push(group[..mid].to_vec());
                    }
                    continue;
                }
                merged.results.extend(
                    r.results
                        .into_iter()
                        .filter(|(_, res)| res.status != TestStatus::Missing),
                );
                merged.collection_errors.extend(r.collection_errors);
                merged.nondeterministic.extend(r.nondeterministic);
                if merged.anomaly.is_none() {
                    merged.anomaly = r.anomaly.filter(|a| !a.starts_with("exit "));
                }
            }
        }
        merged.collection_errors.extend(exited);
        if let Some(requested) = tests {
            for id in requested {
                let status = match merged.collection_error(id) {
                    Some(e) => TestResult {
                        status: TestStatus::Error,
                        duration_s: 0.0,
                        message: Some(format!("collection error: {e}")),
                    },
                    None => TestResult {
                        status: TestStatus::Missing,
                        duration_s: 0.0,
                        message: None,
                    },
                };
                merged.results.entry(id.clone()).or_insert(status);
            }
        }
        let failures = !merged.collection_errors.is_empty()
            || merged.results.values().any(|r| r.status.is_failure());
        merged.exit_code = Some(i32::from(failures));
        Ok(merged)
    }

    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let script = wrap(&scratch, &self.coverage_script(&scratch), budget);
        let out = worker.exec(&script, budget.wall)?;
        let lines = worker.read_scratch(COVERAGE_LINES)?;
        let run = node::finish(&self.reading(), worker, "coverage", None, budget, out)?;
        let map = node::coverage_map(lines, &run)?;
        Ok((run, map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::node::coverage_from_lines;

    #[test]
    fn typescript_diagnostics_make_a_build_error() {
        let mut run = node::empty_run("screen");
        run.collection_errors.insert(
            "src/parse.spec.ts".into(),
            "src/parse.ts:112:42 - error TS2367: This condition will always return 'false'.".into(),
        );
        mark_type_errors(&mut run);
        assert!(run.is_build_error(), "{:?}", run.anomaly);
        let mut other = node::empty_run("screen");
        other
            .collection_errors
            .insert("a.test.js".into(), "TypeError: x is not a function".into());
        mark_type_errors(&mut other);
        assert!(!other.is_build_error());
    }

    const REPORT_JSON: &str = r#"{
      "numTotalTests": 4, "success": false,
      "testResults": [
        {"name": "/testbed/test/a.test.js", "status": "failed", "message": "",
         "assertionResults": [
           {"ancestorTitles": ["clamp"], "title": "below", "fullName": "clamp below",
            "status": "passed", "duration": 3, "failureMessages": []},
           {"ancestorTitles": [], "title": "twice", "fullName": "twice",
            "status": "failed", "duration": 12,
            "failureMessages": ["Error: \u001b[2mexpect(\u001b[22mreceived\u001b[2m).toBe(expected)\n\nExpected: 4\nReceived: 5\n    at Object.<anonymous> (/testbed/test/a.test.js:6:20)\n    at Promise.then.completed (/usr/share/nodejs/jest-circus/build/utils.js:216:28)"]},
           {"ancestorTitles": [], "title": "later", "fullName": "later",
            "status": "pending", "duration": null, "failureMessages": []}
         ]},
        {"name": "/testbed/test/b.test.js", "status": "failed",
         "message": "  \u001b[1m● \u001b[22mTest suite failed to run\n\n    TypeError: register is not a function\n\n      at Object.<anonymous> (lib/b.js:3:1)",
         "assertionResults": []}
      ]}"#;

    #[test]
    fn reads_results_statuses_and_suites_that_failed_to_run() {
        let (results, errors) = parse_report(REPORT_JSON, "/testbed").unwrap();
        assert_eq!(
            results["test/a.test.js::clamp below"].status,
            TestStatus::Passed
        );
        assert_eq!(results["test/a.test.js::clamp below"].duration_s, 0.003);
        let twice = &results["test/a.test.js::twice"];
        assert_eq!(twice.status, TestStatus::Failed);
        let msg = twice.message.as_deref().unwrap();
        assert!(
            msg.contains("Expected: 4") && !msg.contains('\u{1b}'),
            "{msg}"
        );
        assert!(msg.contains("(/testbed/test/a.test.js:6:20)"), "{msg}");
        assert!(!msg.contains("jest-circus"), "{msg}");
        assert_eq!(results["test/a.test.js::later"].status, TestStatus::Skipped);
        assert_eq!(results.len(), 3);
        let b = &errors["test/b.test.js"];
        assert!(
            b.starts_with("TypeError: register is not a function"),
            "{b}"
        );
    }

    #[test]
    fn a_selection_names_files_and_an_exact_case_insensitive_pattern() {
        let j = Jest::new().with_tests_per_file(&[
            "test/a.test.js::clamp below".to_string(),
            "test/a.test.js::clamp above".to_string(),
            "test/b.test.js::money (cents) 1.5".to_string(),
        ]);
        let args = j.selection(&["test/a.test.js::clamp below".to_string()]);
        assert_eq!(
            args,
            vec![
                "--runTestsByPath",
                "test/a.test.js",
                "-t",
                "^(?:clamp below)$"
            ]
        );
        let args = j.selection(&["test/b.test.js::money (cents) 1.5".to_string()]);
        assert_eq!(args, vec!["--runTestsByPath", "test/b.test.js"]);
        let args = j.selection(&[
            "test/a.test.js::clamp below".to_string(),
            "test/b.test.js::money (cents) 1.5".to_string(),
        ]);
        assert_eq!(args[3], "-t");
        assert_eq!(args[4], r"^(?:clamp below|money \(cents\) 1\.5)$");
    }

    #[test]
    fn coverage_lines_become_a_map_with_lines_run_outside_tests() {
        let text = concat!(
            r#"{"file":"test/a.test.js","tests":{"clamp below":{"lib/a.js":[7,8,9]},"table":{}},"outside":{"lib/a.js":[1,2,6]}}"#,
            "\n",
            r#"{"file":"test/b.test.js","tests":{"clamp below":{"lib/a.js":[9,11]}},"outside":{}}"#,
            "\n"
        );
        let map = coverage_from_lines(text).unwrap();
        let at9 = map.tests_covering("lib/a.js", 9, 9);
        assert_eq!(
            at9.into_iter().collect::<Vec<_>>(),
            vec!["test/a.test.js::clamp below", "test/b.test.js::clamp below"]
        );
        assert!(map.runs_outside_tests("lib/a.js", 2, 2));
        assert!(!map.runs_outside_tests("lib/a.js", 7, 9));
        assert!(coverage_from_lines("").is_err());
    }

    #[test]
    fn the_coverage_run_writes_its_helpers_and_uses_the_wrapper_config() {
        let j = Jest::new();
        let s = j.coverage_script("/scratch");
        assert!(s.contains("cat > /scratch/jest-coverage-setup.js"), "{s}");
        assert!(
            s.contains("--config=/scratch/jest-config.js --coverage"),
            "{s}"
        );
        assert!(
            s.contains("SWE_FORGE_JEST_COVERAGE=/scratch/jest-coverage.jsonl"),
            "{s}"
        );
        assert!(COVERAGE_SETUP_JS.contains("appendFileSync"));
        assert!(COVERAGE_CONFIG_JS.contains("setupFilesAfterEnv"));
    }
}
