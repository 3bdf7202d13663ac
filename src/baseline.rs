//! Baselines: the full suite run repeatedly on the clean commit → the stable-pass, flaky and
//! failing sets, per-test durations, the timeouts later runs get, and the coverage map.

use crate::check::Check;
use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd, TestStatus};
use crate::runner::{RunBudget, RunnerError, TestRunner};
use crate::sandbox::Worker;
use crate::timeouts::TimeoutPolicy;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A run of chosen tests may take this many times their baseline time ([`Baseline::budget_for`]).
pub const PER_TEST_FACTOR: f64 = 3.0;
/// A test's budget is this many times the longest baseline duration of its file's tests…
pub const TEST_BUDGET_FACTOR: f64 = 10.0;
/// …plus this many seconds (and what [`Baseline::file_budgets`] adds).
pub const TEST_BUDGET_FLOOR_S: f64 = 2.0;

/// How the baseline is taken and how later timeouts derive from it.
#[derive(Clone, Debug)]
pub struct BaselineConfig {
    /// Full-suite repeats on the clean code (default 3).
    pub repeats: usize,
    /// Hard timeout of one baseline run.
    pub timeout: Duration,
    /// The limits of later runs, from the baseline's ([`TimeoutPolicy::verification`]).
    pub timeouts: TimeoutPolicy,
}

impl Default for BaselineConfig {
    fn default() -> Self {
        BaselineConfig {
            repeats: 3,
            timeout: Duration::from_secs(900),
            timeouts: TimeoutPolicy::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("baseline run {label} hit the {seconds:.0}s timeout: the clean test suite hangs or is too slow")]
    TimedOut { label: String, seconds: f64 },
    #[error("baseline run {label} did not complete: {detail}")]
    Broken { label: String, detail: String },
    #[error("no test passes reliably on the clean code ({total} tests: {failing} failing, {flaky} flaky)")]
    NoStableTests {
        total: usize,
        failing: usize,
        flaky: usize,
    },
    #[error(transparent)]
    Runner(#[from] RunnerError),
}

/// What the clean code's tests do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The repeated full-suite runs (evidence for check 1 of triple verification).
    pub runs: Vec<Run>,
    /// The run with per-test coverage.
    pub coverage_run: Run,
    /// Passed in every repeat.
    pub stable_pass: BTreeSet<String>,
    /// Different statuses across repeats.
    pub flaky: BTreeSet<String>,
    /// Failed or errored in every repeat.
    pub failing: BTreeSet<String>,
    /// Mean duration per stable test, seconds.
    pub durations: BTreeMap<String, f64>,
    /// Wall time of the slowest repeat, seconds.
    pub suite_seconds: f64,
    /// Most CPU seconds one repeat used (`None` when the runner could not measure it).
    #[serde(default)]
    pub suite_cpu_seconds: Option<f64>,
    /// The wall-clock timeout later runs get, seconds.
    pub run_timeout_s: f64,
    /// The CPU-time limit later runs get, seconds.
    #[serde(default)]
    pub run_cpu_limit_s: Option<f64>,
    pub coverage: CoverageMap,
    /// Set when per-test coverage could not be collected (why): screening then falls back to
    /// the tests of the mutated file's package, then to the whole suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_unavailable: Option<String>,
    /// The test files in the order the whole suite runs them (the first repeat's report,
    /// where the runner tells it): grading commands keep it ([`crate::grading`]). Empty in
    /// baselines stored before it was kept (their grading commands' files are then sorted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_order: Vec<String>,
    /// Where the runner can tell ([`Run::indirect`], in every repeat): the tests that could
    /// depend on code they do not run in their own process under the tracer (they start
    /// processes, read the repository's Python files, or set a tracer), with how. Code no test
    /// executes can only change the outcome of these, so they alone screen it. `None`: the
    /// runner cannot tell (or the baseline was stored before it was kept), and every stable
    /// test screens such code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indirect: Option<BTreeMap<String, String>>,
    /// The CPU seconds of a run of the quickest stable test alone, less that test's own
    /// duration: what any run pays whatever it runs (a JVM's start and class loading, an
    /// interpreter's imports), measured. The suite's CPU less its tests' durations says
    /// nothing of it when the tests' durations hold the warm-up (joda-time: 4,232 tests whose
    /// durations add up to the suite's CPU). `None`: not measured (the run failed, or the
    /// baseline was stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_cpu_seconds: Option<f64>,
}

impl Baseline {
    /// The mean wall seconds of the baseline's runs: what a fresh process takes for the whole
    /// suite, start and collection included (what the tracer is compared with).
    pub fn mean_wall_s(&self) -> f64 {
        if self.runs.is_empty() {
            return self.suite_seconds;
        }
        self.runs.iter().map(|r| r.duration_s).sum::<f64>() / self.runs.len() as f64
    }

    /// The mean CPU seconds of the baseline's runs, where they were measured: what a fresh
    /// process spends on the whole suite (a resident runner's CPU offset is measured from it).
    pub fn mean_cpu_s(&self) -> Option<f64> {
        let cpu: Vec<f64> = self.runs.iter().filter_map(|r| r.cpu_s).collect();
        (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64)
    }

    /// Seconds any one test of a file may take in a verification run (setup to teardown),
    /// by file (`file_of` maps a test id to its file): [`TEST_BUDGET_FACTOR`] × the longest
    /// baseline duration of the file's stable tests, plus the longest duration of any stable
    /// test (what a test can pay in a run of a few tests that the baseline charged to another
    /// one: a lazy import, a fixture of session scope; each was charged to some test), plus
    /// [`TEST_BUDGET_FLOOR_S`]. A test past its budget ends its run as a time-out: a wait that
    /// is never signalled, or an endless loop, costs about that, not the whole run's limit.
    pub fn file_budgets(&self, file_of: &dyn Fn(&str) -> String) -> BTreeMap<String, f64> {
        let mut longest: BTreeMap<String, f64> = BTreeMap::new();
        for t in &self.stable_pass {
            let d = self.durations.get(t).copied().unwrap_or(0.0).max(0.0);
            let e = longest.entry(file_of(t)).or_insert(0.0);
            *e = e.max(d);
        }
        let suite = longest.values().copied().fold(0.0, f64::max);
        longest
            .into_iter()
            .map(|(f, d)| {
                let b = TEST_BUDGET_FLOOR_S + TEST_BUDGET_FACTOR * d + suite;
                (f, (b * 1000.0).round() / 1000.0)
            })
            .collect()
    }

    /// The limits of a verification run.
    pub fn budget(&self) -> RunBudget {
        RunBudget {
            wall: Duration::from_secs_f64(self.run_timeout_s),
            cpu: self.run_cpu_limit_s.map(Duration::from_secs_f64),
        }
    }

    /// The limits of a run of `tests` alone, from those tests' own durations here rather than
    /// the whole suite's: [`PER_TEST_FACTOR`] × (the suite's fixed cost, its time less its
    /// tests', plus the tests' time), plus a second. The fixed cost is scaled too, because it
    /// is not fixed: it holds each test's setup and report, and a failing test's report (its
    /// traceback) costs pytest several times a passing one's, so a mutant that fails 3,000
    /// fast tests takes twice the CPU of the clean run (`tests/fixtures/many_tests`). A mutant
    /// that loops forever under a few fast tests is stopped after three times the suite's
    /// fixed cost and a second of CPU (the resident runner takes its start off the limit). The
    /// fixed CPU cost is at least [`Baseline::fixed_cpu_seconds`], where measured. Never more
    /// than [`Baseline::budget`]; the wall limit is at least `min_wall` and twice the CPU limit.
    /// A test without a recorded duration counts as the whole suite.
    pub fn budget_for(&self, tests: &[String], min_wall: Duration) -> RunBudget {
        let whole = self.budget();
        let all: f64 = self.durations.values().sum();
        let mut mine = 0.0;
        for t in tests {
            match self.durations.get(t) {
                Some(d) => mine += d,
                None => return whole,
            }
        }
        let fixed_wall = (self.suite_seconds - all).max(0.0);
        let wall_s = (PER_TEST_FACTOR * (fixed_wall + mine) + 5.0)
            .max(min_wall.as_secs_f64())
            .min(whole.wall.as_secs_f64());
        let cpu = whole
            .cpu
            .zip(self.suite_cpu_seconds)
            .map(|(limit, suite_cpu)| {
                let fixed_cpu = (suite_cpu - all)
                    .max(self.fixed_cpu_seconds.unwrap_or(0.0))
                    .max(0.0);
                let s = (PER_TEST_FACTOR * (fixed_cpu + mine) + 1.0).min(limit.as_secs_f64());
                Duration::from_secs_f64(s)
            });
        let wall = Duration::from_secs_f64(wall_s.max(2.0 * cpu.map_or(0.0, |c| c.as_secs_f64())));
        RunBudget { wall, cpu }
    }
}

/// Run the baseline on a clean worker.
pub fn run_baseline(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    cfg: &BaselineConfig,
) -> Result<Baseline, BaselineError> {
    let mut runs = Vec::new();
    for i in 1..=cfg.repeats.max(1) {
        // Every run starts from the clean tree, whatever the previous one wrote.
        worker.reset().map_err(RunnerError::from)?;
        let label = Check::Baseline.run(i).label();
        let run = runner.run(worker, &label, None, RunBudget::wall(cfg.timeout))?;
        tracing::info!(run = %label, "{}", run.summary());
        check_complete(&run, cfg.timeout)?;
        if i == 1 {
            warn_uncollected(&run);
        }
        runs.push(run);
    }
    worker.reset().map_err(RunnerError::from)?;
    match runner.run_with_coverage(worker, RunBudget::wall(cfg.timeout)) {
        Ok((coverage_run, coverage)) => {
            check_complete(&coverage_run, cfg.timeout)?;
            tracing::info!(
                lines = coverage.covered_lines(),
                tests = coverage.tests.len(),
                "coverage map built"
            );
            let mut b = classify(runs, coverage_run, coverage, cfg)?;
            measure_fixed_cpu(worker, runner, &mut b);
            Ok(b)
        }
        Err(RunnerError::Coverage(why)) => {
            tracing::warn!(
                "no per-test coverage ({why}): candidates are screened with the tests of \
                 their package, else the whole suite"
            );
            let mut coverage_run = runs.last().cloned().expect("at least one repeat");
            coverage_run.label = "coverage (unavailable)".to_string();
            let mut b = classify(runs, coverage_run, CoverageMap::default(), cfg)?;
            b.coverage_unavailable = Some(why);
            measure_fixed_cpu(worker, runner, &mut b);
            Ok(b)
        }
        Err(e) => Err(e.into()),
    }
}

/// Run the quickest stable test alone on the clean tree and keep the CPU the run spent
/// beyond that test's own duration ([`Baseline::fixed_cpu_seconds`]). A run that does not
/// pass it, or has no CPU figure, leaves it unmeasured (logged).
fn measure_fixed_cpu(worker: &mut dyn Worker, runner: &dyn TestRunner, b: &mut Baseline) {
    let Some((test, seconds)) = b
        .stable_pass
        .iter()
        .filter_map(|t| b.durations.get(t).map(|d| (t.clone(), *d)))
        .min_by(|x, y| x.1.total_cmp(&y.1).then_with(|| x.0.cmp(&y.0)))
    else {
        return;
    };
    let measured = worker
        .reset()
        .map_err(RunnerError::from)
        .and_then(|()| runner.run(worker, "baseline-one", Some(&[test.clone()]), b.budget()));
    let _ = worker.reset();
    match measured {
        Ok(run) if run.status(&test) == TestStatus::Passed && run.anomaly.is_none() => {
            if let Some(cpu) = run.cpu_s {
                b.fixed_cpu_seconds = Some(((cpu - seconds).max(0.0) * 1000.0).round() / 1000.0);
                tracing::info!(test = %test, cpu_s = cpu, "a run's fixed CPU cost measured");
            }
        }
        Ok(run) => tracing::warn!(
            test = %test,
            "a run's fixed CPU cost not measured: the test alone did not pass ({})",
            run.anomaly.clone().unwrap_or_else(|| run.summary())
        ),
        Err(e) => tracing::warn!(test = %test, "a run's fixed CPU cost not measured: {e}"),
    }
}

/// A test file the clean code's suite cannot collect has no test in any check: say which and
/// why (most often a test dependency the install left out).
fn warn_uncollected(run: &Run) {
    for (file, error) in &run.collection_errors {
        let why = error
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("no error text");
        tracing::warn!(
            file = %file,
            "the clean code's suite cannot collect this file ({why}): its tests are left out \
             of every check; a test dependency missing from the install command?"
        );
    }
}

fn check_complete(run: &Run, timeout: Duration) -> Result<(), BaselineError> {
    if run.is_build_error() {
        return Err(BaselineError::Broken {
            label: run.label.clone(),
            detail: format!(
                "the clean code does not build: {}",
                run.anomaly.as_deref().unwrap_or_default()
            ),
        });
    }
    match run.end {
        RunEnd::TimedOut => Err(BaselineError::TimedOut {
            label: run.label.clone(),
            seconds: timeout.as_secs_f64(),
        }),
        RunEnd::Signaled => Err(BaselineError::Broken {
            label: run.label.clone(),
            detail: format!("killed by signal {}", run.signal.unwrap_or(0)),
        }),
        RunEnd::Exited if run.results.is_empty() => Err(BaselineError::Broken {
            label: run.label.clone(),
            detail: run
                .anomaly
                .clone()
                .unwrap_or_else(|| "the report lists no test".to_string()),
        }),
        RunEnd::Exited => Ok(()),
    }
}

/// Sort tests into stable-pass / flaky / failing from repeated runs.
pub fn classify(
    runs: Vec<Run>,
    coverage_run: Run,
    coverage: CoverageMap,
    cfg: &BaselineConfig,
) -> Result<Baseline, BaselineError> {
    let all: BTreeSet<String> = runs
        .iter()
        .flat_map(|r| r.results.keys().cloned())
        .collect();
    let mut stable_pass = BTreeSet::new();
    let mut flaky = BTreeSet::new();
    let mut failing = BTreeSet::new();
    let mut durations = BTreeMap::new();
    for id in &all {
        // FAILED and ERROR both mean "fails": a test that fails both ways is failing, not flaky.
        let statuses: BTreeSet<TestStatus> = runs
            .iter()
            .map(|r| match r.status(id) {
                TestStatus::Error => TestStatus::Failed,
                s => s,
            })
            .collect();
        if statuses.len() > 1 {
            flaky.insert(id.clone());
        } else if statuses.contains(&TestStatus::Passed) {
            stable_pass.insert(id.clone());
            let total: f64 = runs
                .iter()
                .filter_map(|r| r.results.get(id))
                .map(|t| t.duration_s)
                .sum();
            durations.insert(id.clone(), total / runs.len() as f64);
        } else if statuses.iter().all(|s| s.is_failure()) {
            failing.insert(id.clone());
        }
    }
    if stable_pass.is_empty() {
        return Err(BaselineError::NoStableTests {
            total: all.len(),
            failing: failing.len(),
            flaky: flaky.len(),
        });
    }
    let suite_seconds = runs.iter().map(|r| r.duration_s).fold(0.0, f64::max);
    let suite_cpu_seconds = runs
        .iter()
        .map(|r| r.cpu_s)
        .collect::<Option<Vec<f64>>>()
        .map(|v| v.into_iter().fold(0.0, f64::max));
    let (run_timeout_s, run_cpu_limit_s) =
        cfg.timeouts.verification(suite_seconds, suite_cpu_seconds);
    let suite_order = runs
        .first()
        .map(|r| r.file_order.clone())
        .unwrap_or_default();
    let indirect = if runs.is_empty() {
        None
    } else {
        runs.iter()
            .map(|r| r.indirect.as_ref())
            .collect::<Option<Vec<_>>>()
            .map(|maps| {
                let mut all: BTreeMap<String, String> = BTreeMap::new();
                for m in maps {
                    for (t, how) in m {
                        all.entry(t.clone()).or_insert_with(|| how.clone());
                    }
                }
                all
            })
    };
    Ok(Baseline {
        runs,
        coverage_run,
        stable_pass,
        flaky,
        failing,
        durations,
        suite_seconds,
        suite_cpu_seconds,
        run_timeout_s,
        run_cpu_limit_s,
        coverage,
        coverage_unavailable: None,
        suite_order,
        indirect,
        fixed_cpu_seconds: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::TestResult;

    fn run(label: &str, statuses: &[(&str, TestStatus)], secs: f64) -> Run {
        Run {
            label: label.into(),
            requested: None,
            end: RunEnd::Exited,
            exit_code: Some(0),
            signal: None,
            results: statuses
                .iter()
                .map(|(id, s)| {
                    (
                        id.to_string(),
                        TestResult {
                            status: *s,
                            duration_s: 0.1,
                            message: None,
                        },
                    )
                })
                .collect(),
            duration_s: secs,
            cpu_s: Some(secs / 2.0),
            log_digest: String::new(),
            log_path: None,
            anomaly: None,
            oom_kills: 0,
            collection_errors: Default::default(),
            nondeterministic: Default::default(),
            file_order: Vec::new(),
            indirect: None,
        }
    }

    /// The baseline of two repeats of `n` passing tests of `test_s` each, in a suite of
    /// `suite_s` wall and half that in CPU; and the tests' ids.
    fn passing_baseline(n: usize, test_s: f64, suite_s: f64) -> (Baseline, Vec<String>) {
        let ids: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let statuses: Vec<(&str, TestStatus)> = ids
            .iter()
            .map(|i| (i.as_str(), TestStatus::Passed))
            .collect();
        let mut runs = vec![run("b1", &statuses, suite_s), run("b2", &statuses, suite_s)];
        for r in &mut runs {
            for t in r.results.values_mut() {
                t.duration_s = test_s;
            }
        }
        let b = classify(
            runs,
            run("coverage", &[], 1.0),
            CoverageMap::default(),
            &BaselineConfig::default(),
        )
        .unwrap();
        (b, ids)
    }

    #[test]
    fn each_file_s_tests_get_a_budget_from_its_longest_test() {
        // 4 tests of 0.1 s, one of them 0.5 s: the suite's longest.
        let (mut b, _) = passing_baseline(4, 0.1, 2.0);
        b.durations.insert("t3".into(), 0.5);
        let file_of = |t: &str| if t < "t2" { "a" } else { "b" }.to_string();
        let budgets = b.file_budgets(&file_of);
        // a: 2 + 10 x 0.1 (its longest) + 0.5 (the suite's longest).
        assert!((budgets["a"] - 3.5).abs() < 1e-3, "{budgets:?}");
        // b: its longest test is 0.5 s: 2 + 5 + 0.5.
        assert!((budgets["b"] - 7.5).abs() < 1e-3, "{budgets:?}");
        assert_eq!(budgets.len(), 2);
    }

    #[test]
    fn a_run_of_a_few_tests_gets_limits_from_their_own_times() {
        // Each repeat: 100 tests of 0.1 s in a suite of 20 s wall and 10 s CPU.
        let (b, ids) = passing_baseline(100, 0.1, 20.0);
        let whole = b.budget();
        let two = b.budget_for(&ids[..2], Duration::from_secs(10));
        // CPU: the suite's fixed cost (10 s less 10 s of tests: none), 3 x 0.2 s, 1 s.
        let cpu = two.cpu.unwrap().as_secs_f64();
        assert!((cpu - 1.6).abs() < 1e-9, "{cpu}");
        // Wall: the fixed wall cost (10 s) and 3 x the tests, 5 s; at least 10 s.
        assert!(
            (two.wall.as_secs_f64() - (3.0 * 10.2 + 5.0)).abs() < 1e-9,
            "{two:?}"
        );
        assert!(two.wall < whole.wall && two.cpu < whole.cpu);
        // Every test: never more than the whole suite's limits.
        let all = b.budget_for(&ids, Duration::from_secs(10));
        assert!(
            all.cpu <= whole.cpu && all.wall <= whole.wall,
            "{all:?} {whole:?}"
        );
        // A test the baseline has no time for: the whole suite's limits.
        assert_eq!(
            b.budget_for(&["new".to_string()], Duration::from_secs(10)),
            whole
        );
        // The wall limit is at least the floor and twice the CPU limit.
        let floor = b.budget_for(&ids[..1], Duration::from_secs(60));
        assert_eq!(floor.wall, Duration::from_secs(60));
    }

    #[test]
    fn a_measured_fixed_cost_is_the_floor_of_a_run_of_a_few_tests() {
        // The tests' durations add up to the suite's CPU (they hold the warm-up): without a
        // measure, a run of two tests gets 1.6 s, less than a JVM takes to start.
        let (mut b, ids) = passing_baseline(100, 0.1, 20.0);
        b.fixed_cpu_seconds = Some(2.0);
        let two = b.budget_for(&ids[..2], Duration::from_secs(10));
        let cpu = two.cpu.unwrap().as_secs_f64();
        assert!((cpu - (3.0 * 2.2 + 1.0)).abs() < 1e-9, "{cpu}");
        // Never more than the whole suite's limit.
        b.fixed_cpu_seconds = Some(1000.0);
        assert_eq!(
            b.budget_for(&ids[..2], Duration::from_secs(10)).cpu,
            b.budget().cpu
        );
        // Where the suite's own figure says more, it holds.
        b.fixed_cpu_seconds = Some(0.0);
        let cpu0 = b
            .budget_for(&ids[..2], Duration::from_secs(10))
            .cpu
            .unwrap();
        assert!((cpu0.as_secs_f64() - 1.6).abs() < 1e-9);
    }

    #[test]
    fn many_fast_tests_may_all_fail_within_their_limits() {
        // 3,000 tests of a tenth of a millisecond in a suite of 8 s wall and 4 s CPU: nearly
        // all of it is per-test bookkeeping, which a failing test's traceback doubles.
        let (b, ids) = passing_baseline(3000, 0.0001, 8.0);
        let all = b.budget_for(&ids, Duration::from_secs(10));
        let cpu = all.cpu.unwrap().as_secs_f64();
        assert!(cpu >= 2.0 * 4.0, "{all:?}");
        assert!(all.cpu <= b.budget().cpu);
    }

    #[test]
    fn tests_that_reach_code_indirectly_are_those_of_any_repeat_where_every_repeat_tells() {
        use TestStatus::*;
        let statuses = [("a", Passed), ("b", Passed), ("c", Passed)];
        let with = |label: &str, pairs: &[(&str, &str)]| {
            let mut r = run(label, &statuses, 1.0);
            r.indirect = Some(
                pairs
                    .iter()
                    .map(|(t, how)| (t.to_string(), how.to_string()))
                    .collect(),
            );
            r
        };
        let classify_runs = |runs: Vec<Run>| {
            classify(
                runs,
                run("coverage", &[], 1.0),
                CoverageMap::default(),
                &BaselineConfig::default(),
            )
            .unwrap()
        };
        let b = classify_runs(vec![
            with("b1", &[("a", "process")]),
            with("b2", &[("b", "source")]),
        ]);
        let got: Vec<(String, String)> = b.indirect.clone().unwrap().into_iter().collect();
        assert_eq!(
            got,
            vec![
                ("a".to_string(), "process".to_string()),
                ("b".to_string(), "source".to_string())
            ]
        );
        // A repeat whose runner could not tell: nobody knows, so every test screens.
        let b = classify_runs(vec![with("b1", &[]), run("b2", &statuses, 1.0)]);
        assert_eq!(b.indirect, None);
        // Stored without it (an earlier version): none.
        let json = serde_json::to_value(&b).unwrap();
        assert!(json.get("indirect").is_none(), "{json}");
    }

    #[test]
    fn classifies_stable_flaky_and_failing() {
        use TestStatus::*;
        let runs = vec![
            run(
                "b1",
                &[("a", Passed), ("b", Passed), ("c", Failed), ("d", Skipped)],
                1.0,
            ),
            run(
                "b2",
                &[("a", Passed), ("b", Failed), ("c", Failed), ("d", Skipped)],
                2.0,
            ),
            run(
                "b3",
                &[("a", Passed), ("b", Passed), ("c", Error), ("d", Skipped)],
                1.5,
            ),
        ];
        let cov = run("coverage", &[], 1.0);
        let b = classify(
            runs,
            cov,
            CoverageMap::default(),
            &BaselineConfig::default(),
        )
        .unwrap();
        assert_eq!(b.stable_pass, ["a".to_string()].into());
        assert_eq!(b.flaky, ["b".to_string()].into());
        assert_eq!(b.failing, ["c".to_string()].into());
        assert_eq!(b.suite_seconds, 2.0);
        // CPU limit: 3 × 1.0 s + 5 s → 8 s, raised to the 10 s minimum; wall: 10 × 2 s + 30 s.
        assert_eq!(b.run_cpu_limit_s, Some(10.0));
        assert_eq!(b.run_timeout_s, 50.0);
    }

    #[test]
    fn no_stable_test_is_an_error() {
        use TestStatus::*;
        let runs = vec![
            run("b1", &[("a", Failed)], 1.0),
            run("b2", &[("a", Failed)], 1.0),
        ];
        let err = classify(
            runs,
            run("c", &[], 1.0),
            CoverageMap::default(),
            &BaselineConfig::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("1 failing"), "{err}");
    }
}
