//! The pytest adapter: runs pytest with a JUnit XML report (xunit1, so test cases carry their
//! file), maps cases to node ids, and collects per-test coverage with pytest-cov contexts.

use super::junit_xml;
use super::{wrap, RunBudget, RunnerError, TestRunner};
use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd, TestResult, TestStatus, RUNNER_FAILURE_PREFIX};
use crate::sandbox::{shell_quote, ExecOutput, Worker};
use std::path::PathBuf;

const REPORT: &str = "report.xml";
/// The probe plugin (`probe.py`): in every run, it marks the tests that drew on unseeded
/// randomness ([`Run::nondeterministic`]).
pub(crate) const PROBE: &str = include_str!("probe.py");
pub(crate) const PROBE_MODULE: &str = "swe_forge_probe";
const PROBE_DIR: &str = "probe";
/// What the probe writes, beside the report, when a test ran past its file's budget.
const OVER_BUDGET: &str = "over-budget.txt";
const COVERAGE_JSON: &str = "coverage.json";
/// Failures as Python prints them: pytest's own traceback styles parse each test file's whole
/// source with `ast` for every entry of every failure (2 s for seven failures in a 6,000-line
/// test module, more than the tests), while the report's message and the test's outcome are
/// the same. Only what is printed changes, so verification runs may add it to the grading
/// command; a doctest's or a collection error's report keeps its own form.
const TRACEBACK: &str = "--tb=native";

/// pytest for one repository.
#[derive(Clone, Debug)]
pub struct Pytest {
    /// The command that starts pytest (default `python -m pytest`).
    pub base_command: String,
    /// Known test files, to rebuild node ids when the report lacks a `file` attribute.
    pub test_files: Vec<String>,
    /// Source roots measured by coverage (repository-relative, e.g. `.` or `src`).
    pub cov_sources: Vec<String>,
    /// Where full logs are kept (by digest); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// Run through the worker's resident runner, pre-importing these modules (set by
    /// [`Pytest::qualify_resident`]); `None`: a fresh process per run.
    pub resident: Option<Vec<String>>,
    /// CPU seconds a fresh process spends that a resident's child does not (the interpreter's
    /// start and the pre-imported modules), measured when the runner qualified: taken off
    /// each resident run's CPU limit, so a run near its limit ends the same way in both.
    pub resident_cpu_offset: f64,
    /// How many tests each test file holds (from the baseline's whole-suite run): a long
    /// selection names a file instead of most of its tests, see [`Pytest::selection`].
    pub tests_per_file: Option<std::sync::Arc<std::collections::BTreeMap<String, usize>>>,
    /// The options that decide what runs (a grading command's, see
    /// [`crate::grading::Grading::options`]); `None`: [`GRADING_OPTIONS`].
    pub options: Option<Vec<String>>,
    /// Seconds any one test of a file may take (from the baseline, see
    /// [`crate::baseline::Baseline::file_budgets`]): the probe ends a run at the first test
    /// past its file's budget, and the run is a time-out. `None` (before a baseline): none.
    pub test_budgets: Option<std::sync::Arc<std::collections::BTreeMap<String, f64>>>,
}

/// pytest's options in every run swe-forge makes, and in every grading command: no cache
/// (a run leaves nothing that changes the next), the repository root as rootdir, a test
/// file that cannot be collected does not stop the others, and failures printed as Python
/// prints them ([`TRACEBACK`]). The last only changes what is printed, yet a grader needs it as
/// much as verification does: with pytest's own styles, a bug that fails idna's 3,027
/// UTS #46 tests ran past 200 s in that file alone (the SWE-bench harness stopped the task's
/// no-op evaluation at its 1,800 s limit), against 24 s printed natively.
pub const GRADING_OPTIONS: [&str; 5] = [
    "-p",
    "no:cacheprovider",
    "--rootdir=.",
    "--continue-on-collection-errors",
    TRACEBACK,
];

impl Pytest {
    pub fn new(
        base_command: Option<&str>,
        test_files: Vec<String>,
        cov_sources: Vec<String>,
    ) -> Pytest {
        Pytest {
            base_command: base_command.unwrap_or("python -m pytest").to_string(),
            test_files,
            cov_sources,
            log_dir: None,
            resident: None,
            resident_cpu_offset: 0.0,
            tests_per_file: None,
            options: None,
            test_budgets: None,
        }
    }

    /// The budgets of the files `tests` are in (every file's when `tests` is `None`), as the
    /// probe reads them; `None` when no file of theirs has one.
    fn budgets_for(
        &self,
        tests: Option<&[String]>,
    ) -> Option<std::collections::BTreeMap<String, f64>> {
        let all = self.test_budgets.as_ref()?;
        let mine: std::collections::BTreeMap<String, f64> = match tests {
            None => all.as_ref().clone(),
            Some(tests) => tests
                .iter()
                .filter_map(|t| {
                    let file = t.split("::").next().unwrap_or(t);
                    all.get(file).map(|b| (file.to_string(), *b))
                })
                .collect(),
        };
        (!mine.is_empty()).then_some(mine)
    }

    /// The options that decide what runs.
    fn options(&self) -> Vec<String> {
        match &self.options {
            Some(o) => o.clone(),
            None => GRADING_OPTIONS.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The arguments after `python -m pytest` of a (non-coverage) run, for the resident.
    fn resident_args(&self, scratch: &str, tests: Option<&[String]>) -> Option<Vec<String>> {
        let mut args = super::resident::pytest_args(&self.base_command)?;
        args.extend(self.options());
        for a in [
            "-o",
            "junit_family=xunit1",
            "-o",
            "console_output_style=classic",
            TRACEBACK,
        ] {
            args.push(a.to_string());
        }
        args.push(format!("--junitxml={scratch}/{REPORT}"));
        args.push("-q".into());
        args.push("--no-header".into());
        if let Some(tests) = tests {
            args.extend(tests.iter().cloned());
        }
        Some(args)
    }

    /// One run through the resident runner with `warm` pre-imported; `Ok(None)` when this
    /// worker or command has none (the caller runs a fresh process).
    fn run_resident(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
        warm: &[String],
        imports: bool,
    ) -> Result<Option<Run>, RunnerError> {
        self.run_resident_with(worker, label, tests, tests, budget, warm, imports)
    }

    /// [`Pytest::run_resident`] that passes `selection` to pytest (see [`Pytest::selection`])
    /// and reports `tests`.
    #[allow(clippy::too_many_arguments)]
    fn run_resident_with(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        selection: Option<&[String]>,
        budget: RunBudget,
        warm: &[String],
        imports: bool,
    ) -> Result<Option<Run>, RunnerError> {
        let scratch = worker.scratch().to_string();
        let Some(args) = self.resident_args(&scratch, selection) else {
            return Ok(None);
        };
        worker.clear_scratch()?;
        let program = super::resident::pytest_program(warm);
        let budgets = self.budgets_for(tests);
        let request = crate::sandbox::ResidentRun {
            args: &args,
            cpu: budget.cpu.map(|c| {
                let secs = (c.as_secs_f64() - self.resident_cpu_offset).max(1.0);
                std::time::Duration::from_secs_f64(secs)
            }),
            program: &program,
            imports,
            budgets: budgets.as_ref(),
        };
        match worker.resident_run(&request, budget.wall)? {
            // A lost resident is a run that a test ended (the child is what runs the tests).
            crate::sandbox::ResidentExec::Ran(out) | crate::sandbox::ResidentExec::Lost(out) => {
                self.finish(worker, label, tests, budget, out).map(Some)
            }
            crate::sandbox::ResidentExec::Unsafe(why) => {
                tracing::debug!("resident runner unsafe: {why}");
                Ok(None)
            }
            crate::sandbox::ResidentExec::Unsupported => Ok(None),
        }
    }

    /// This runner with the resident runner, when it gives the baseline's per-test outcomes
    /// on the clean tree; `Err(why not)` otherwise (the seed keeps fresh processes).
    pub fn qualify_resident(
        &self,
        worker: &mut dyn Worker,
        baseline: &crate::baseline::Baseline,
    ) -> Result<Pytest, String> {
        let fresh_cpu = baseline.mean_cpu_s();
        self.qualify_resident_on(
            worker,
            &mut |w: &mut dyn Worker| w.reset().map_err(|e| e.to_string()),
            None,
            baseline.budget(),
            fresh_cpu,
            &|run: &Run| super::resident::compare(baseline, run),
        )
    }

    /// This runner with the resident runner, when `tests` (`None`: the whole suite) on the
    /// tree `prepare` makes give outcomes that `check` accepts (it compares them with fresh
    /// processes'). A first resident run pre-imports pytest and its plugins only and reports
    /// what else the tests imported from outside the repository; a second pre-imports that
    /// too; `check` must accept both. `fresh_cpu`: the CPU seconds a fresh process used for
    /// the same tests, from which the resident's CPU offset is measured.
    pub fn qualify_resident_on(
        &self,
        worker: &mut dyn Worker,
        prepare: &mut dyn FnMut(&mut dyn Worker) -> Result<(), String>,
        tests: Option<&[String]>,
        budget: RunBudget,
        fresh_cpu: Option<f64>,
        check: &dyn Fn(&Run) -> Result<(), String>,
    ) -> Result<Pytest, String> {
        if super::resident::pytest_args(&self.base_command).is_none() {
            return Err(format!(
                "the test command `{}` is not a plain `python -m pytest …`",
                self.base_command
            ));
        }
        prepare(worker)?;
        let first = self
            .run_resident(worker, "resident-probe", tests, budget, &[], true)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| self.why_no_resident(worker, &[]))?;
        check(&first)?;
        let warm: Vec<String> = worker
            .read_scratch(crate::sandbox::RESIDENT_IMPORTS)
            .map_err(|e| e.to_string())?
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        prepare(worker)?;
        let second = self
            .run_resident(worker, "resident-check", tests, budget, &warm, false)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| self.why_no_resident(worker, &warm))?;
        check(&second)?;
        worker.reset().map_err(|e| e.to_string())?;
        let mut p = self.clone();
        p.resident = Some(warm);
        p.resident_cpu_offset = match (fresh_cpu, second.cpu_s) {
            (Some(f), Some(r)) => (f - r).max(0.0),
            _ => 0.0,
        };
        Ok(p)
    }

    fn why_no_resident(&self, worker: &mut dyn Worker, warm: &[String]) -> String {
        let program = super::resident::pytest_program(warm);
        let probe = crate::sandbox::ResidentRun {
            args: &[],
            cpu: None,
            program: &program,
            imports: false,
            budgets: None,
        };
        match worker.resident_run(&probe, std::time::Duration::from_secs(1)) {
            Ok(crate::sandbox::ResidentExec::Unsafe(why)) => why,
            Ok(crate::sandbox::ResidentExec::Unsupported) => {
                "this sandbox has no resident runner".into()
            }
            _ => "the resident runner did not run".into(),
        }
    }

    fn command(&self, scratch: &str, tests: Option<&[String]>, coverage: bool) -> String {
        // The probe plugin goes into a folder of its own in the scratch directory (cleared
        // before each run), which only this process's path gets.
        let probe_dir = format!("{scratch}/{PROBE_DIR}");
        let options: Vec<String> = self.options().iter().map(|o| shell_quote(o)).collect();
        let mut cmd = format!(
            "mkdir -p {dir_q} && cat > {file_q} <<'SWE_FORGE_PROBE_EOF'\n{PROBE}SWE_FORGE_PROBE_EOF\n\
             export PYTHONPATH={dir_q}${{PYTHONPATH:+:$PYTHONPATH}}\n\
             {} {} -p {PROBE_MODULE} -o junit_family=xunit1 -o console_output_style=classic \
             {TRACEBACK} --junitxml={} -q --no-header",
            self.base_command,
            options.join(" "),
            shell_quote(&format!("{scratch}/{REPORT}")),
            dir_q = shell_quote(&probe_dir),
            file_q = shell_quote(&format!("{probe_dir}/{PROBE_MODULE}.py")),
        );
        if !coverage {
            if let Some(budgets) = self.budgets_for(tests) {
                let json = serde_json::to_string(&budgets).unwrap_or_default();
                cmd = format!(
                    "export SWE_FORGE_TEST_BUDGETS={}\n{cmd}",
                    shell_quote(&json)
                );
            }
        }
        if coverage {
            for src in &self.cov_sources {
                cmd.push_str(&format!(" --cov={}", shell_quote(src)));
            }
            cmd.push_str(&format!(
                " --cov-context=test --cov-report= --cov-config={}",
                shell_quote(&format!("{scratch}/coveragerc"))
            ));
        }
        if let Some(tests) = tests {
            for t in tests {
                cmd.push(' ');
                cmd.push_str(&shell_quote(t));
            }
        }
        cmd
    }

    fn finish(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
        mut out: ExecOutput,
    ) -> Result<Run, RunnerError> {
        let super::Ending {
            cpu_s,
            log_digest,
            log_path,
            cpu_anomaly: mut anomaly,
            ..
        } = super::ending(worker, &mut out, budget, self.log_dir.as_deref())?;
        // The probe ended the run at a test past its file's budget.
        if let Some(bytes) = worker.read_scratch(OVER_BUDGET)? {
            let text = String::from_utf8_lossy(&bytes);
            let (seconds, test) = text.trim().split_once('\t').unwrap_or(("?", text.trim()));
            out.end = RunEnd::TimedOut;
            anomaly = Some(format!(
                "{test} ran past its budget of {seconds}s (set from the baseline's \
                 durations of its file's tests)"
            ));
        }
        let mut collection_errors = std::collections::BTreeMap::new();
        let mut nondeterministic = std::collections::BTreeMap::new();
        let mut indirect = std::collections::BTreeMap::new();
        let mut reported = false;
        let mut file_order: Vec<String> = Vec::new();
        let mut results = match worker.read_scratch(REPORT)? {
            Some(bytes) => {
                let xml = String::from_utf8_lossy(&bytes);
                match junit_xml::parse_cases(&xml) {
                    Ok(cases) => junit_xml::into_results({
                        reported = true;
                        cases
                            .into_iter()
                            .filter(|c| match collection_failure(c) {
                                Some((file, error)) => {
                                    collection_errors.insert(file, error);
                                    false
                                }
                                None => true,
                            })
                            .map(|c| {
                                let id = junit_xml::pytest_node_id(&c, &self.test_files);
                                let file = id.split("::").next().unwrap_or(&id);
                                if file_order.last().map(String::as_str) != Some(file)
                                    && !file_order.iter().any(|f| f == file)
                                {
                                    file_order.push(file.to_string());
                                }
                                if let Some(what) = c.nondeterministic {
                                    nondeterministic.insert(id.clone(), what);
                                }
                                if let Some(how) = c.indirect {
                                    indirect.insert(id.clone(), how);
                                }
                                (id, c.result)
                            })
                            .collect()
                    }),
                    Err(e) => {
                        anomaly = Some(format!("unreadable report: {e}"));
                        Default::default()
                    }
                }
            }
            None => {
                // pytest could not load a conftest.py (the bug breaks an import it makes):
                // it exits 4 before collecting anything, and every test below it is an ERROR.
                if let Some((conftest, error)) = (out.exit_code == Some(4))
                    .then(|| conftest_failure(&out.stdout, &out.stderr, worker.root()))
                    .flatten()
                {
                    collection_errors.insert(conftest, error);
                } else if out.end == RunEnd::Exited && anomaly.is_none() {
                    anomaly = Some(format!(
                        "no report written (exit {}): {}",
                        out.exit_code.unwrap_or(-1),
                        tail(&out.stderr, &out.stdout)
                    ));
                }
                Default::default()
            }
        };
        // A requested test whose file could not be collected is an ERROR (pytest then exits
        // 4: it found no such test), the others it did not report are MISSING.
        let mut uncollected = 0;
        if let Some(requested) = tests {
            for id in requested {
                let result = match crate::run::collection_error_of(&collection_errors, id) {
                    Some(error) => {
                        uncollected += 1;
                        TestResult {
                            status: TestStatus::Error,
                            duration_s: 0.0,
                            message: Some(format!("collection error: {error}")),
                        }
                    }
                    None => TestResult {
                        status: TestStatus::Missing,
                        duration_s: 0.0,
                        message: None,
                    },
                };
                results.entry(id.clone()).or_insert(result);
            }
        }
        if anomaly.is_none() && out.end == RunEnd::Exited {
            let failures =
                !collection_errors.is_empty() || results.values().any(|r| r.status.is_failure());
            let missing = results
                .values()
                .filter(|r| r.status == TestStatus::Missing)
                .count();
            anomaly = match out.exit_code {
                // The only tests pytest could not find are in files it could not collect.
                Some(4) if uncollected > 0 && missing == 0 => None,
                // A conftest failed to load: nothing was collected below it.
                Some(4) if collection_errors.keys().any(|k| k.ends_with("conftest.py")) => None,
                Some(0) if failures => Some("exit 0 but the report has failures".to_string()),
                Some(1) if !failures => Some("exit 1 but the report has no failure".to_string()),
                Some(0) | Some(1) => None,
                Some(2) => Some("pytest was interrupted (collection errors?)".to_string()),
                Some(3) => Some(format!("{RUNNER_FAILURE_PREFIX}pytest internal error")),
                Some(4) => Some(format!("{RUNNER_FAILURE_PREFIX}pytest usage error")),
                Some(5) => Some("no tests were collected".to_string()),
                Some(code) => Some(format!("unexpected exit code {code}")),
                None => None,
            };
        }
        let mut run = Run {
            label: label.to_string(),
            requested: tests.map(|t| t.to_vec()),
            end: out.end,
            exit_code: out.exit_code,
            signal: out.signal,
            results,
            duration_s: out.duration.as_secs_f64(),
            cpu_s,
            log_digest,
            log_path,
            anomaly,
            oom_kills: out.oom_kills,
            collection_errors,
            nondeterministic,
            file_order,
            indirect: reported.then_some(indirect),
        };
        run.relativize(worker.root());
        Ok(run)
    }
}

/// pytest's `ImportError while loading conftest '<path>'.` (said of any exception the
/// conftest raised): the conftest, repository-relative, and the exception (the last `E ` line
/// of the traceback that follows).
fn conftest_failure(stdout: &[u8], stderr: &[u8], root: &str) -> Option<(String, String)> {
    let mut text = String::from_utf8_lossy(stdout).into_owned();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(stderr));
    let (_, after) = text.split_once("while loading conftest '")?;
    let (path, rest) = after.split_once('\'')?;
    let root = root.trim_end_matches('/');
    let rel = path
        .strip_prefix(root)
        .map(|p| p.trim_start_matches('/'))
        .unwrap_or(path);
    let rel = rel.strip_prefix("./").unwrap_or(rel).to_string();
    if !rel.ends_with("conftest.py") {
        return None;
    }
    let error = rest
        .lines()
        .filter_map(|l| l.strip_prefix("E "))
        .next_back()
        .map(|e| e.trim().to_string())
        .unwrap_or_else(|| "the conftest raised while loading".to_string());
    Some((rel, error))
}

/// A report entry for a test file pytest could not collect (`classname=""`, the error
/// `collection failure`, with the exception when the report had it): the file and the error.
fn collection_failure(case: &junit_xml::Case) -> Option<(String, String)> {
    if !case.classname.is_empty() || case.result.status != TestStatus::Error {
        return None;
    }
    let message = case.result.message.as_deref().unwrap_or("");
    if !message.starts_with("collection failure") {
        return None;
    }
    let file = case
        .file
        .clone()
        .unwrap_or_else(|| format!("{}.py", case.name.replace('.', "/")));
    let error = message
        .strip_prefix("collection failure: ")
        .unwrap_or(message);
    Some((file, error.to_string()))
}

fn tail(stderr: &[u8], stdout: &[u8]) -> String {
    let text = if stderr.iter().any(|b| !b.is_ascii_whitespace()) {
        String::from_utf8_lossy(stderr)
    } else {
        String::from_utf8_lossy(stdout)
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

impl Pytest {
    /// One pytest process (resident or fresh) for `tests`.
    fn run_once(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let selection = self.selection(tests);
        let args = selection.as_deref().or(tests);
        let mut run = None;
        if let Some(warm) = &self.resident {
            run = self.run_resident_with(worker, label, tests, args, budget, warm, false)?;
        }
        let mut run = match run {
            Some(r) => r,
            None => {
                worker.clear_scratch()?;
                let scratch = worker.scratch().to_string();
                let script = wrap(&scratch, &self.command(&scratch, args, false), budget);
                let out = worker.exec(&script, budget.wall)?;
                self.finish(worker, label, tests, budget, out)?
            }
        };
        // A file named for most of its tests ran the rest too: they were not asked for.
        if let (Some(_), Some(requested)) = (&selection, tests) {
            let requested: std::collections::BTreeSet<&str> =
                requested.iter().map(String::as_str).collect();
            run.results.retain(|id, _| requested.contains(id.as_str()));
            run.nondeterministic
                .retain(|id, _| requested.contains(id.as_str()));
        }
        Ok(run)
    }

    /// A long selection of test ids as pytest is given it: pytest resolves each node id on
    /// its own, so 64,000 ids took it 237 s of CPU where the whole suite takes 39 s
    /// (packaging). Above [`SELECTION_IDS`] ids, a file of which at least half the tests are
    /// requested is named instead (its other tests' results are then left out of the run);
    /// `None` when nothing changes.
    fn selection(&self, tests: Option<&[String]>) -> Option<Vec<String>> {
        let tests = tests?;
        let per_file = self.tests_per_file.as_ref()?;
        if tests.len() <= SELECTION_IDS {
            return None;
        }
        let file_of = |id: &str| id.split_once("::").map(|(f, _)| f.to_string());
        let mut requested: std::collections::BTreeMap<String, usize> = Default::default();
        for id in tests {
            if let Some(f) = file_of(id) {
                *requested.entry(f).or_default() += 1;
            }
        }
        let whole: std::collections::BTreeSet<String> = requested
            .into_iter()
            .filter(|(f, n)| per_file.get(f).is_some_and(|&all| all >= 2 && 2 * n >= all))
            .map(|(f, _)| f)
            .collect();
        if whole.is_empty() {
            return None;
        }
        let mut out: Vec<String> = Vec::new();
        let mut named = std::collections::BTreeSet::new();
        for id in tests {
            match file_of(id).filter(|f| whole.contains(f)) {
                Some(f) => {
                    if named.insert(f.clone()) {
                        out.push(f);
                    }
                }
                None => out.push(id.clone()),
            }
        }
        Some(out)
    }

    /// This runner knowing how many tests each file holds (from a whole-suite run), for
    /// [`Pytest::selection`].
    pub fn with_tests_per_file<'a>(mut self, ids: impl IntoIterator<Item = &'a String>) -> Self {
        let mut per_file: std::collections::BTreeMap<String, usize> = Default::default();
        for id in ids {
            if let Some((f, _)) = id.split_once("::") {
                *per_file.entry(f.to_string()).or_default() += 1;
            }
        }
        self.tests_per_file = Some(std::sync::Arc::new(per_file));
        self
    }
}

/// Above this many requested ids, [`Pytest::selection`] names whole files.
const SELECTION_IDS: usize = 1000;

impl TestRunner for Pytest {
    /// A selection that names tests in a file pytest cannot collect makes pytest stop before
    /// running anything (exit 4): the other requested tests then run in a second process, and
    /// the run is both together (the uncollectable file's tests are ERRORs).
    fn run(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let first = self.run_once(worker, label, tests, budget)?;
        let Some(requested) = tests else {
            return Ok(first);
        };
        if first.exit_code != Some(4) || first.collection_errors.is_empty() {
            return Ok(first);
        }
        let rest: Vec<String> = requested
            .iter()
            .filter(|id| first.collection_error(id).is_none())
            .cloned()
            .collect();
        if rest.is_empty()
            || !rest
                .iter()
                .any(|id| first.status(id) == TestStatus::Missing)
        {
            return Ok(first);
        }
        let mut run = self.run_once(worker, label, Some(&rest), budget)?;
        for id in requested {
            if let Some(error) = first.collection_error(id) {
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
        run.collection_errors
            .extend(first.collection_errors.clone());
        run.requested = Some(requested.to_vec());
        run.duration_s += first.duration_s;
        run.cpu_s = match (first.cpu_s, run.cpu_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        // The tests of the uncollectable file failed: the combined run exits as pytest does
        // when tests fail.
        if run.end == RunEnd::Exited && run.exit_code == Some(0) {
            run.exit_code = Some(1);
        }
        if run.anomaly.as_deref() == Some("exit 0 but the report has failures") {
            run.anomaly = None;
        }
        Ok(run)
    }

    /// pytest's `-x`: the session stops after the first failing test.
    fn run_to_first_failure(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let mut runner = self.clone();
        let mut options = self.options();
        options.push("-x".into());
        runner.options = Some(options);
        runner.run(worker, label, tests, budget)
    }

    /// The grading command's tests (else its files) as pytest's arguments, in its order, with its options and
    /// base command (resident or fresh, as the other runs).
    fn run_grading(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        grading: &crate::grading::Grading,
        tests: &[String],
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let mut runner = self.clone();
        if !grading.base_command.is_empty() {
            runner.base_command = grading.base_command.clone();
        }
        runner.options = Some(grading.options.clone());
        if let Some(warm) = &self.resident {
            if let Some(run) = runner.run_resident_with(
                worker,
                label,
                Some(tests),
                Some(grading.selection()),
                budget,
                warm,
                false,
            )? {
                return Ok(run);
            }
        }
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let script = wrap(
            &scratch,
            &runner.command(&scratch, Some(grading.selection()), false),
            budget,
        );
        let out = worker.exec(&script, budget.wall)?;
        runner.finish(worker, label, Some(tests), budget, out)
    }

    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let rc = format!("{scratch}/coveragerc");
        let data = format!("{scratch}/.coverage");
        let pytest = format!(
            "printf '[run]\\nrelative_files = True\\n' > {rc_q}\n\
             export COVERAGE_FILE={data_q}\n\
             {pytest}\n\
             status=$?\n\
             python -m coverage json -q --rcfile={rc_q} --show-contexts -o {json_q} || exit 97\n\
             (exit $status)",
            rc_q = shell_quote(&rc),
            data_q = shell_quote(&data),
            pytest = self.command(&scratch, None, true),
            json_q = shell_quote(&format!("{scratch}/{COVERAGE_JSON}")),
        );
        let out = worker.exec(&wrap(&scratch, &pytest, budget), budget.wall)?;
        let coverage_failed = out.exit_code == Some(97);
        let json = worker.read_scratch(COVERAGE_JSON)?;
        let run = self.finish(worker, "coverage", None, budget, out)?;
        let json = match json {
            Some(j) if !coverage_failed => j,
            _ => {
                return Err(RunnerError::Coverage(format!(
                    "no coverage data ({})",
                    run.anomaly.clone().unwrap_or_else(|| run.summary())
                )))
            }
        };
        let map = CoverageMap::from_coverage_py_json(&String::from_utf8_lossy(&json))
            .map_err(RunnerError::Coverage)?;
        Ok((run, map))
    }
}

#[cfg(test)]
mod tests;
