//! The mocha adapter: runs mocha with its JSON reporter written to a file
//! (`--reporter json --reporter-option output=…`), reads per-test results from it, and collects
//! per-test line coverage with `mocha_coverage.js` (`--require`d: it instruments the
//! repository's modules as they load and compares istanbul's counters around each test).
//!
//! Test ids are `path/to/file.test.js::<full title>` (the titles of the enclosing `describe`
//! blocks and the test's, joined by spaces: what `--grep` matches). A selection names the test
//! files and, unless every test of those files is asked for, a `--grep` pattern matching exactly
//! the requested full titles. A test file mocha cannot load (a syntax error, a module that
//! throws when required) stops the whole run before any test: its tests are ERRORs (a
//! collection error), and the other requested files run again without it.

use super::node::{self, first_part, regex_escape, relative, strip_ansi, without_foreign_frames};
use super::{wrap, RunBudget, RunnerError, TestRunner};
use crate::coverage::CoverageMap;
use crate::run::{Run, TestResult, TestStatus};
use crate::sandbox::{shell_quote, Worker};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The per-test coverage `--require` file.
pub const COVERAGE_SETUP_JS: &str = include_str!("mocha_coverage.js");

const REPORT: &str = "mocha-report.json";
const SOURCES: &str = "mocha-sources.json";
const COVERAGE_LINES: &str = "mocha-coverage.jsonl";
/// The longest `--grep` pattern passed; a longer selection runs its files whole.
const PATTERN_BYTES: usize = 64 * 1024;

/// mocha for one repository.
#[derive(Clone, Debug)]
pub struct Mocha {
    /// The command that starts mocha (default `mocha`).
    pub command: String,
    /// Where full logs are kept (by digest); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// The repository's test files (not instrumented by the coverage run).
    pub test_files: Vec<String>,
    /// How many tests each test file holds (from a whole-suite run).
    pub tests_per_file: BTreeMap<String, usize>,
}

impl Default for Mocha {
    fn default() -> Self {
        Mocha {
            command: "mocha".to_string(),
            log_dir: None,
            test_files: Vec::new(),
            tests_per_file: BTreeMap::new(),
        }
    }
}

/// mocha's exit status is its number of failures (at most 255).
fn exit_rule(code: i32) -> Option<bool> {
    match code {
        0 => Some(false),
        1..=255 => Some(true),
        _ => None,
    }
}

impl Mocha {
    pub fn new() -> Mocha {
        Mocha::default()
    }

    /// This runner knowing how many tests each file holds.
    pub fn with_tests_per_file<'a>(mut self, ids: impl IntoIterator<Item = &'a String>) -> Self {
        self.tests_per_file = node::tests_per_file(ids);
        self
    }

    /// The arguments that select `tests` in the files `files` (a subset of theirs).
    fn selection(&self, tests: &[String], files: &BTreeSet<&str>) -> Vec<String> {
        let mut by_file: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for id in tests {
            if let Some((file, name)) = id.split_once("::") {
                if files.contains(file) {
                    by_file.entry(file).or_default().insert(name);
                }
            }
        }
        let mut args: Vec<String> = by_file.keys().map(|f| f.to_string()).collect();
        let whole = by_file
            .iter()
            .all(|(f, names)| self.tests_per_file.get(*f) == Some(&names.len()));
        if !whole {
            let names: BTreeSet<&str> = by_file.values().flatten().copied().collect();
            let pattern = format!(
                "^(?:{})$",
                names
                    .iter()
                    .map(|n| regex_escape(n))
                    .collect::<Vec<_>>()
                    .join("|")
            );
            if pattern.len() <= PATTERN_BYTES {
                args.push("--grep".to_string());
                args.push(pattern);
            }
        }
        args
    }

    /// The mocha command line: the JSON report to `scratch`, the selection's arguments.
    pub fn command_line(&self, scratch: &str, args: &[String], coverage: bool) -> String {
        let mut cmd = format!(
            "{} --reporter json --reporter-option output={}",
            self.command,
            shell_quote(&format!("{scratch}/{REPORT}"))
        );
        if coverage {
            cmd.push_str(&format!(
                " --require {}",
                shell_quote(&format!("{scratch}/mocha-coverage.js"))
            ));
        }
        for a in args {
            cmd.push(' ');
            cmd.push_str(&shell_quote(a));
        }
        cmd
    }

    fn reading(&self) -> node::Reading<'_> {
        node::Reading {
            report: REPORT,
            sources: SOURCES,
            parse: parse_report,
            exit: exit_rule,
            log_dir: self.log_dir.as_deref(),
        }
    }

    /// One mocha process for `tests` in `files` (`None`: mocha's own choice of files, the
    /// whole suite), and the test file that could not be loaded, if one stopped it.
    fn run_once(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        files: Option<&BTreeSet<&str>>,
        budget: RunBudget,
    ) -> Result<(Run, Option<String>), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let args = match (tests, files) {
            (Some(t), Some(f)) => self.selection(t, f),
            (None, Some(f)) => f.iter().map(|f| f.to_string()).collect(),
            (_, None) => Vec::new(),
        };
        let script = node::run_script(
            &self.command_line(&scratch, &args, false),
            &scratch,
            REPORT,
            SOURCES,
        );
        let out = worker.exec(&wrap(&scratch, &script, budget), budget.wall)?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let wrote_report = worker.read_scratch(REPORT)?.is_some();
        let mut run = node::finish(&self.reading(), worker, label, tests, budget, out)?;
        // mocha stops before any test when a test file cannot be loaded, and writes no
        // report: which file it was, from the error's stack.
        let mut unloaded = None;
        if !wrote_report && run.end == crate::run::RunEnd::Exited {
            if let Some((file, error)) = load_failure(
                &stderr,
                &self.test_files,
                &self.tests_per_file,
                worker.root(),
            ) {
                unloaded = Some(file.clone());
                run.collection_errors.insert(file, error);
                run.anomaly = None;
                if let Some(requested) = tests {
                    for id in requested {
                        if let Some(error) = run.collection_error(id).map(str::to_string) {
                            run.results.insert(
                                id.clone(),
                                TestResult {
                                    status: TestStatus::Error,
                                    duration_s: 0.0,
                                    message: Some(format!("collection error: {error}")),
                                },
                            );
                        }
                    }
                }
            }
        }
        Ok((run, unloaded))
    }
}

/// The test file mocha could not load, and the error: the first line of its stderr that
/// names an error, and the test file its stack goes through (`at Object.<anonymous>
/// (/testbed/test/a.test.js:1:1)`, or the last entry of node's `Require stack:`).
fn load_failure(
    stderr: &str,
    test_files: &[String],
    suite_files: &BTreeMap<String, usize>,
    root: &str,
) -> Option<(String, String)> {
    // `RangeError: …` at the start of a line (node prints the source line that threw, which
    // may hold `Error` too, before it); else any line naming an error.
    let names_error = |l: &str| {
        l.split_once(':').is_some_and(|(head, _)| {
            let name = head.split(" [").next().unwrap_or(head);
            (name.ends_with("Error") || name.ends_with("Exception"))
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '.' || c == '_' || c == '$')
        })
    };
    let error = stderr
        .lines()
        .map(str::trim)
        .find(|l| names_error(l))
        .or_else(|| {
            stderr
                .lines()
                .map(str::trim)
                .find(|l| l.contains("Error") && !l.starts_with("at "))
        })?
        .to_string();
    // The test files the stack goes through, innermost first: a helper or fixture a test file
    // loads comes before it, and the test file mocha loaded is the outermost.
    let root = root.trim_end_matches('/');
    let mut through: Vec<&String> = Vec::new();
    for l in stderr.lines().map(str::trim) {
        if !(l.starts_with("at ") || l.starts_with("- ")) {
            continue;
        }
        for f in test_files {
            let abs = format!("{root}/{f}");
            let hit = l.contains(&format!("{abs}:"))
                || l.ends_with(&abs)
                || l.contains(&format!("({f}:"));
            if hit && !through.contains(&f) {
                through.push(f);
            }
        }
    }
    let file = through
        .iter()
        .rev()
        .find(|f| suite_files.contains_key(f.as_str()))
        .or_else(|| through.last())?;
    Some(((*file).clone(), error))
}

/// Per-test results from mocha's JSON report (`tests`, with `failures` and `pending` among
/// them), and as collection errors the files whose hooks failed (mocha writes no report at all
/// when a file cannot be loaded: see [`Mocha::run`]).
pub fn parse_report(json: &str, root: &str) -> Result<node::ParsedReport, String> {
    let doc: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let tests = doc["tests"].as_array().ok_or("no `tests` in the report")?;
    let key = |t: &serde_json::Value| {
        format!(
            "{}::{}",
            relative(t["file"].as_str().unwrap_or_default(), root),
            t["fullTitle"].as_str().unwrap_or_default()
        )
    };
    let ids = |name: &str| -> BTreeSet<String> {
        doc[name]
            .as_array()
            .map(|a| a.iter().map(key).collect())
            .unwrap_or_default()
    };
    let failed = ids("failures");
    let pending = ids("pending");
    // A hook that failed (`"before each" hook for "…"`) is a failure of no test: mocha skips the
    // rest of its suite, and those tests are not in the report. The hook's file is then like a
    // file that failed to load: its requested tests that did not run are ERRORs.
    let mut errors: BTreeMap<String, String> = BTreeMap::new();
    for f in doc["failures"].as_array().into_iter().flatten() {
        let title = f["title"].as_str().unwrap_or_default();
        let hook = [
            "\"before all\" hook",
            "\"before each\" hook",
            "\"after all\" hook",
            "\"after each\" hook",
        ]
        .into_iter()
        .find(|h| title.starts_with(h));
        if let Some(hook) = hook {
            let file = relative(f["file"].as_str().unwrap_or_default(), root);
            let why = strip_ansi(
                f["err"]["stack"]
                    .as_str()
                    .or_else(|| f["err"]["message"].as_str())
                    .unwrap_or_default(),
            );
            let first = why.lines().next().unwrap_or_default().trim().to_string();
            errors
                .entry(file)
                .or_insert_with(|| format!("a {hook} failed: {first}"));
        }
    }
    let mut results = BTreeMap::new();
    for t in tests {
        let id = key(t);
        let status = if pending.contains(&id) {
            TestStatus::Skipped
        } else if failed.contains(&id) {
            TestStatus::Failed
        } else {
            TestStatus::Passed
        };
        let message = (status == TestStatus::Failed).then(|| failure_message(&t["err"], root));
        results.insert(
            id,
            TestResult {
                status,
                duration_s: t["duration"].as_f64().unwrap_or(0.0) / 1000.0,
                message,
            },
        );
    }
    // Files that could not run at all (node's test runner, through swe-forge's reporter).
    for f in doc["loadErrors"].as_array().into_iter().flatten() {
        let file = relative(f["file"].as_str().unwrap_or_default(), root);
        let error = f["error"].as_str().unwrap_or("the file did not run");
        errors.entry(file).or_insert_with(|| strip_ansi(error));
    }
    Ok((results, errors))
}

/// A failed test's message: what it compared (`Expected:` / `Received:`, from the assertion
/// error's `expected` and `actual`, as jest prints them), then the error's stack without
/// frames outside the repository.
fn failure_message(err: &serde_json::Value, root: &str) -> String {
    let stack = err["stack"]
        .as_str()
        .or_else(|| err["message"].as_str())
        .unwrap_or_default();
    let mut text = String::new();
    let shown = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let (Some(e), Some(a)) = (err.get("expected"), err.get("actual")) {
        text.push_str(&format!("Expected: {}\nReceived: {}\n", shown(e), shown(a)));
    }
    text.push_str(&without_foreign_frames(&strip_ansi(stack), root));
    first_part(&text)
}

impl TestRunner for Mocha {
    /// A test file mocha cannot load stops mocha before anything runs: the other files (of the
    /// selection, or for the whole suite those the suite's tests are in) then run in another
    /// process, until none fails to load, and the run is all of them together.
    fn run(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let files: BTreeSet<&str> = match tests {
            Some([]) => return Ok(node::empty_run(label)),
            Some(requested) => requested
                .iter()
                .filter_map(|id| id.split_once("::").map(|(f, _)| f))
                .collect(),
            // The files the suite's tests are in (the repository's test files include helpers
            // and fixtures mocha does not run); unknown before a whole run read them.
            None => self.tests_per_file.keys().map(String::as_str).collect(),
        };
        let (mut run, mut unloaded) =
            self.run_once(worker, label, tests, tests.map(|_| &files), budget)?;
        while unloaded.is_some() {
            let rest: BTreeSet<&str> = files
                .iter()
                .filter(|f| !run.collection_errors.contains_key(**f))
                .copied()
                .collect();
            if rest.is_empty() {
                break;
            }
            let (mut next, next_unloaded) =
                self.run_once(worker, label, tests, Some(&rest), budget)?;
            unloaded = next_unloaded.filter(|f| !run.collection_errors.contains_key(f));
            // The tests of the files that could not load stay ERRORs.
            for (id, r) in &run.results {
                let later = next.results.get(id).map(|n| n.status);
                if r.status == TestStatus::Error
                    && matches!(later, None | Some(TestStatus::Missing))
                {
                    next.results.insert(id.clone(), r.clone());
                }
            }
            for (f, e) in &run.collection_errors {
                next.collection_errors
                    .entry(f.clone())
                    .or_insert_with(|| e.clone());
            }
            next.duration_s += run.duration_s;
            if next.exit_code == Some(0) {
                next.exit_code = Some(1);
            }
            if next.anomaly.as_deref() == Some("exit 0 but the report has failures") {
                next.anomaly = None;
            }
            run = next;
        }
        Ok(run)
    }

    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let setup = format!("{scratch}/mocha-coverage.js");
        let core = format!("{scratch}/coverage-core.js");
        let lines = format!("{scratch}/{COVERAGE_LINES}");
        let script = format!(
            "{}{}export SWE_FORGE_COVERAGE_CORE={} SWE_FORGE_MOCHA_COVERAGE={} SWE_FORGE_MOCHA_TEST_FILES={}\n{}",
            super::maven::heredoc(&shell_quote(&setup), COVERAGE_SETUP_JS),
            super::maven::heredoc(&shell_quote(&core), node::COVERAGE_CORE_JS),
            shell_quote(&core),
            shell_quote(&lines),
            shell_quote(&serde_json::to_string(&self.test_files).unwrap_or_default()),
            self.command_line(&scratch, &[], true),
        );
        let out = worker.exec(&wrap(&scratch, &script, budget), budget.wall)?;
        let written = worker.read_scratch(COVERAGE_LINES)?;
        let run = node::finish(&self.reading(), worker, "coverage", None, budget, out)?;
        let map = node::coverage_map(written, &run)?;
        Ok((run, map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT_JSON: &str = r#"{
      "stats": {"tests": 3, "passes": 1, "pending": 1, "failures": 1},
      "tests": [
        {"title": "below", "fullTitle": "clamp below", "file": "/testbed/test/a.test.js", "duration": 2, "err": {}},
        {"title": "inside", "fullTitle": "clamp inside", "file": "/testbed/test/a.test.js", "duration": 1,
         "err": {"stack": "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n3 !== 4\n\n    at Context.<anonymous> (test/a.test.js:5:31)\n    at callFn (/usr/share/nodejs/mocha/lib/runnable.js:366:21)",
                 "message": "Expected values to be strictly equal:\n\n3 !== 4\n", "actual": "3", "expected": "4", "operator": "strictEqual"}},
        {"title": "later", "fullTitle": "later", "file": "/testbed/test/a.test.js", "err": {}}
      ],
      "pending": [{"title": "later", "fullTitle": "later", "file": "/testbed/test/a.test.js", "err": {}}],
      "failures": [{"title": "inside", "fullTitle": "clamp inside", "file": "/testbed/test/a.test.js", "err": {}}],
      "passes": [{"title": "below", "fullTitle": "clamp below", "file": "/testbed/test/a.test.js", "err": {}}]
    }"#;

    #[test]
    fn reads_passes_failures_and_pending_with_what_was_compared() {
        let (results, errors) = parse_report(REPORT_JSON, "/testbed").unwrap();
        assert!(errors.is_empty());
        assert_eq!(
            results["test/a.test.js::clamp below"].status,
            TestStatus::Passed
        );
        assert_eq!(results["test/a.test.js::later"].status, TestStatus::Skipped);
        let inside = &results["test/a.test.js::clamp inside"];
        assert_eq!(inside.status, TestStatus::Failed);
        let msg = inside.message.as_deref().unwrap();
        assert!(msg.starts_with("Expected: 4\nReceived: 3\n"), "{msg}");
        assert!(!msg.contains("runnable.js"), "{msg}");
        assert_eq!(exit_rule(2), Some(true));
        assert_eq!(exit_rule(0), Some(false));
    }

    #[test]
    fn a_failed_hook_makes_its_file_a_collection_error() {
        let report = r#"{"stats": {"tests": 0, "failures": 1}, "tests": [], "pending": [], "passes": [],
          "failures": [{"title": "\"before all\" hook for \"should return *\"",
            "fullTitle": "charset \"before all\" hook for \"should return *\"",
            "file": "/testbed/test/charset.js",
            "err": {"stack": "RangeError: Maximum call stack size exceeded\n    at new Negotiator (index.js:31:13)", "message": "Maximum call stack size exceeded"}}]}"#;
        let (results, errors) = parse_report(report, "/testbed").unwrap();
        assert!(results.is_empty());
        assert_eq!(
            errors["test/charset.js"],
            "a \"before all\" hook failed: RangeError: Maximum call stack size exceeded"
        );
    }

    #[test]
    fn a_file_that_cannot_load_is_found_in_the_stack() {
        let stderr = "Error: Cannot find module '../lib/nope'\nRequire stack:\n- /testbed/test/b.test.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1140:15)\n    at Object.<anonymous> (/testbed/test/b.test.js:1:1)\n";
        let files = vec!["test/a.test.js".to_string(), "test/b.test.js".to_string()];
        assert_eq!(
            load_failure(stderr, &files, &BTreeMap::new(), "/testbed"),
            Some((
                "test/b.test.js".to_string(),
                "Error: Cannot find module '../lib/nope'".to_string()
            ))
        );
        assert_eq!(
            load_failure("all good", &files, &BTreeMap::new(), "/testbed"),
            None
        );
        // node quotes the line that threw before the error.
        let quoted = "/testbed/lib/u.js:8\n    throw new RangeError(`bad`);\n    ^\n\nRangeError: bad factor\n    at Object.<anonymous> (/testbed/test/b.test.js:1:1)\n";
        assert_eq!(
            load_failure(quoted, &files, &BTreeMap::new(), "/testbed").map(|(_, e)| e),
            Some("RangeError: bad factor".to_string())
        );
        // A helper the test file loads threw: the test file is the one that did not load.
        let nested = "TypeError: boom\n    at Object.<anonymous> (/testbed/test/fixtures/my.js:3:9)\n    at Object.<anonymous> (/testbed/test/test.js:2:1)\n";
        let files = vec![
            "test/fixtures/my.js".to_string(),
            "test/test.js".to_string(),
        ];
        assert_eq!(
            load_failure(nested, &files, &BTreeMap::new(), "/testbed").map(|(f, _)| f),
            Some("test/test.js".to_string())
        );
    }

    #[test]
    fn a_selection_names_files_and_an_exact_pattern() {
        let m = Mocha::new().with_tests_per_file(&[
            "test/a.test.js::clamp below".to_string(),
            "test/a.test.js::clamp inside".to_string(),
            "test/b.test.js::only one".to_string(),
        ]);
        let t = vec![
            "test/a.test.js::clamp below".to_string(),
            "test/b.test.js::only one".to_string(),
        ];
        let files: BTreeSet<&str> = ["test/a.test.js", "test/b.test.js"].into_iter().collect();
        assert_eq!(
            m.selection(&t, &files),
            vec![
                "test/a.test.js",
                "test/b.test.js",
                "--grep",
                "^(?:clamp below|only one)$"
            ]
        );
        let only_b: BTreeSet<&str> = ["test/b.test.js"].into_iter().collect();
        assert_eq!(m.selection(&t, &only_b), vec!["test/b.test.js"]);
    }
}
