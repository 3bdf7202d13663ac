//! Screening and triple verification of one candidate → a [`Verdict`] with its evidence.
//!
//! Screening runs the stable tests that execute the mutated lines, once: a candidate none of
//! them fails is a survivor. Where the grading command would name exactly those tests (the
//! default scope), the screen is that command, and a kill's screen is check 2's first repeat
//! (its run is labelled `buggy#1`). A killed candidate gets its grading command ([`crate::grading`]):
//! the files of those tests (and of the tests that failed in screening), whole, in the order
//! the suite runs them (by [`crate::grading::Scope`]: those tests by name, their files, or every
//! file of the suite). When more tests cover the candidate than a grading command runs
//! (`--grading-max-tests`: code the whole suite runs), the screen stops at its first failing
//! test and the command runs a bounded set around it ([`crate::grading::bounded_scope`]), so
//! that no kill costs whole-suite runs. Then, each check that
//! command, repeated (default 3×) from a clean tree:
//!
//! 2. the start state (buggy code): the failing tests must be the same in every repeat;
//! 3. buggy code + gold fix (which is check 1's clean tree): the tests that pass in every
//!    repeat.
//!
//! FAIL_TO_PASS: failed in every run of check 2 and passed in every run of check 3.
//! PASS_TO_PASS: passed in every run of both. A test the whole-suite baseline found stable
//! that does not pass in every run of the grading command on the fixed tree, or that failed in
//! screening but passes with the bug under the grading command, depends on which other tests
//! run: it is dropped and counted ([`Outcome::order_dependent`]), never a reason to reject.
//!
//! No identical experiment is repeated: the runs of a grading command on the clean tree are
//! kept per (tree, command) for the seed's workers ([`GradedTrees`]); a later candidate whose
//! check 3 is that tree under that command takes them as its evidence ([`ReusedCheck`]);
//! `recheck_identical` runs it anyway.

use crate::baseline::Baseline;
use crate::candidate::Candidate;
use crate::check::Check;
use crate::grading::{self, Grading};
pub use crate::grading::{GradedTrees, GradingContext};
use crate::run::{Run, RunEnd, TestStatus};
use crate::runner::{RunnerError, TestRunner};
use crate::sandbox::{SandboxError, Worker};
use crate::toolchain::Toolchain;
use crate::verdict::{Reason, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Verification settings.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// Repeats of checks 2 and 3 (default 3).
    pub repeats: usize,
    /// Run check 3 even when its tree is the clean tree the baseline already ran
    /// (`--recheck-identical`).
    pub recheck_identical: bool,
    /// What the grading command runs (`--grading-scope`).
    pub scope: crate::grading::Scope,
    /// The least wall-clock limit of a run (`--min-timeout`): a run of a few tests gets
    /// limits from their own baseline times ([`Baseline::budget_for`]), never below this.
    pub min_wall: std::time::Duration,
    /// The most covering tests a grading command runs (`--grading-max-tests`, except with
    /// `--grading-scope suite`); past it the command runs a bounded set
    /// ([`crate::grading::bounded_scope`]). 0: no bound.
    pub max_graded_tests: usize,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            repeats: 3,
            recheck_identical: false,
            scope: crate::grading::Scope::default(),
            min_wall: std::time::Duration::from_secs(10),
            max_graded_tests: crate::grading::GRADING_MAX_TESTS,
        }
    }
}

/// A check whose tree is byte-identical to a tree the same grading command already ran on in
/// this environment: its evidence is those earlier runs (copied into the record's runs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReusedCheck {
    /// The check: `fixed` (buggy + gold fix).
    pub check: String,
    /// The git tree id of the check's tree, which is the tree the runs ran on.
    pub tree: String,
    /// The labels of the runs that are its evidence (`fixed#1`…).
    pub runs: Vec<String>,
    /// The grading command they ran ([`Grading::key`]); empty in records made before
    /// grading commands (their evidence was the baseline's whole-suite runs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub grading: String,
}

/// Everything verification learned about one candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub verdict: Verdict,
    /// Stable tests that execute the mutated lines.
    pub covering: Vec<String>,
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
    /// Every run made for this candidate, in order (screen, buggy#i, fixed#i).
    pub runs: Vec<Run>,
    /// Wall time spent on the candidate, seconds.
    pub seconds: f64,
    /// Tests added before grading (a synthesized test file), empty when the repository's own
    /// tests catch the bug.
    #[serde(default)]
    pub test_patch: String,
    /// What test synthesis did for a survivor (absent for killed candidates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis: Option<crate::synth::SynthRecord>,
    /// Checks not run again because their tree had already been run (see [`ReusedCheck`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reused: Vec<ReusedCheck>,
    /// Tests that failed with the bug but drew on randomness nothing in them seeded
    /// ([`Run::nondeterministic`]), with what they drew on: they may pass with the bug
    /// elsewhere, so they are neither FAIL_TO_PASS nor PASS_TO_PASS. When every failing test
    /// is one, they stay in `fail_to_pass` and the pipeline treats the kill as ungradable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nondeterministic: BTreeMap<String, String>,
    /// The grading command checks 2 and 3 ran (absent when screening decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grading: Option<Grading>,
    /// Tests dropped because their outcome depends on which other tests run: stable in the
    /// whole suite but not passing in every run of the grading command on the fixed tree, or
    /// failing in screening but passing with the bug under the grading command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_dependent: Vec<String>,
}

/// Screen `cand` with the tests covering its lines and, when they kill it, verify it.
/// `gold_patch` is the fix (buggy → clean). `fixed_is_clean`: the tree id of buggy + gold fix
/// when it is the clean commit's tree (the caller computed it; check 3 then reuses the
/// baseline's runs unless `cfg.recheck_identical`). The worker is reset first.
pub fn screen_and_verify(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    gctx: &GradingContext<'_>,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    fixed_is_clean: Option<&str>,
    cfg: &VerifyConfig,
) -> Outcome {
    let started = Instant::now();
    let mut outcome = Outcome {
        verdict: Verdict::Accepted,
        covering: Vec::new(),
        fail_to_pass: Vec::new(),
        pass_to_pass: Vec::new(),
        runs: Vec::new(),
        seconds: 0.0,
        test_patch: String::new(),
        synthesis: None,
        reused: Vec::new(),
        nondeterministic: BTreeMap::new(),
        grading: None,
        order_dependent: Vec::new(),
    };
    outcome.verdict = match verify_inner(
        worker,
        runner,
        gctx,
        baseline,
        cand,
        gold_patch,
        fixed_is_clean.filter(|_| !cfg.recheck_identical),
        cfg,
        &mut outcome,
    ) {
        Ok(v) => v,
        Err(Failure::Patch(e)) => Verdict::rejected(Reason::PatchFailed, e),
        Err(Failure::Sandbox(e)) => Verdict::rejected(Reason::SandboxError, e),
    };
    if !outcome.verdict.is_accepted() {
        outcome.fail_to_pass.clear();
        outcome.pass_to_pass.clear();
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome
}

enum Failure {
    Patch(String),
    Sandbox(String),
}

impl From<RunnerError> for Failure {
    fn from(e: RunnerError) -> Self {
        Failure::Sandbox(e.to_string())
    }
}

impl From<SandboxError> for Failure {
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::Patch(p) => Failure::Patch(p),
            other => Failure::Sandbox(other.to_string()),
        }
    }
}

/// Apply the gold fix to the worker's tree.
fn apply_gold(worker: &mut dyn Worker, gold_patch: &str) -> Result<(), Failure> {
    worker.apply_patch(gold_patch).map_err(|e| match e {
        SandboxError::Patch(p) => Failure::Patch(format!("gold patch: {p}")),
        other => Failure::from(other),
    })
}

/// A run that did not finish normally or ran out of resources → its rejection.
fn abnormal(run: &Run) -> Option<Verdict> {
    if run.is_build_error() {
        return Some(Verdict::rejected(
            Reason::CompileError,
            format!(
                "{}: {}",
                run.label,
                run.anomaly.as_deref().unwrap_or("compile error")
            ),
        ));
    }
    if run.oom_kills > 0 {
        return Some(Verdict::rejected(
            Reason::ResourceLimit,
            format!(
                "{}: out of memory: the kernel's OOM killer ended {} process(es)",
                run.label, run.oom_kills
            ),
        ));
    }
    match run.end {
        RunEnd::TimedOut => Some(Verdict::rejected(
            Reason::Timeout,
            match &run.anomaly {
                Some(a) => format!("{}: {a}", run.label),
                None => format!(
                    "{} hit the {:.1}s wall-clock timeout",
                    run.label, run.duration_s
                ),
            },
        )),
        RunEnd::Signaled => Some(Verdict::rejected(
            Reason::Crash,
            format!("{} killed by signal {}", run.label, run.signal.unwrap_or(0)),
        )),
        RunEnd::Exited if run.hit_resource_limit() => Some(Verdict::rejected(
            Reason::ResourceLimit,
            format!(
                "{}: the buggy code exhausted memory or processes",
                run.label
            ),
        )),
        // What an exit code means is the runner's to say: it marks a run in which it failed
        // itself. A bug that breaks an import is no such failure: its tests are ERRORs (a
        // collection error), the bug is killed.
        RunEnd::Exited if run.is_runner_failure() => Some(Verdict::rejected(
            Reason::Crash,
            format!(
                "{}: {}",
                run.label,
                run.anomaly.as_deref().unwrap_or("the test runner failed")
            ),
        )),
        RunEnd::Exited => None,
    }
}

/// Whether a stable test executes a line of the candidate (or one of its lines runs at import
/// or collection); `None` without per-test coverage.
pub fn executed_by_tests(baseline: &Baseline, cand: &Candidate) -> Option<bool> {
    if baseline.coverage_unavailable.is_some() {
        return None;
    }
    let (first, last) = cand.line_range;
    Some(
        baseline
            .coverage
            .runs_outside_tests(&cand.file, first, last)
            || baseline
                .coverage
                .tests_covering(&cand.file, first, last)
                .iter()
                .any(|t| baseline.stable_pass.contains(t)),
    )
}

/// The stable tests that screen a candidate: those that execute its lines, or every stable test
/// when one of its lines runs at import or collection (any test depends on those); without
/// per-test coverage, the toolchain's choice for the mutated file (Java: the tests of its
/// package), else every stable test.
fn covering_tests(toolchain: &dyn Toolchain, baseline: &Baseline, cand: &Candidate) -> Vec<String> {
    let (first, last) = cand.line_range;
    if baseline.coverage_unavailable.is_none()
        && !baseline
            .coverage
            .runs_outside_tests(&cand.file, first, last)
    {
        return baseline
            .coverage
            .tests_covering(&cand.file, cand.line_range.0, cand.line_range.1)
            .into_iter()
            .filter(|t| baseline.stable_pass.contains(t))
            .collect();
    }
    if baseline.coverage_unavailable.is_some() {
        if let Some(tests) = toolchain.screening_fallback(&cand.file, &baseline.stable_pass) {
            return tests;
        }
    }
    baseline.stable_pass.iter().cloned().collect()
}

#[allow(clippy::too_many_arguments)]
fn verify_inner(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    gctx: &GradingContext<'_>,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    reuse_clean: Option<&str>,
    cfg: &VerifyConfig,
    out: &mut Outcome,
) -> Result<Verdict, Failure> {
    let covering = covering_tests(gctx.toolchain, baseline, cand);
    out.covering = covering.clone();
    // Coverage is collected in the test process: code a test runs in another process (a
    // command line started with `python -m`, a subprocess, a worker pool) is covered by no
    // test, yet the test may well kill its mutants; so may a test that reads the source as
    // text, or one that set its own tracer while the code ran. A candidate no test covers is
    // therefore screened with the stable tests that do such things, where the runner tells
    // which ([`Baseline::indirect`]), else with the whole suite; one they do not kill stays
    // `not-covered`.
    let uncovered = covering.is_empty();
    let screened: Vec<String> = match (&baseline.indirect, uncovered) {
        (_, false) => covering.clone(),
        (Some(indirect), true) => baseline
            .stable_pass
            .iter()
            .filter(|t| indirect.contains_key(*t))
            .cloned()
            .collect(),
        (None, true) => baseline.stable_pass.iter().cloned().collect(),
    };
    if screened.is_empty() {
        return Ok(Verdict::rejected(
            Reason::NotCovered,
            if baseline.indirect.is_some() && !baseline.stable_pass.is_empty() {
                "no stable test executes the mutated lines, and none starts another process, \
                 reads the repository's Python files or sets a tracer"
            } else {
                "no stable test executes the mutated lines"
            },
        ));
    }

    // Screening: only the covering tests (every stable test when none covers), once, under
    // limits from their own baseline times. Where the grading command of a covered candidate
    // names exactly its covering tests (`--grading-scope tests`, the default), the screen is
    // that command: its run is check 2's first repeat (`buggy#1`), the same command on the
    // same tree, and a kill costs no run of its own. Otherwise a covered candidate's screen
    // stops at its first kill (checks 2 and 3 observe every test of the grading command
    // after it).
    // More covering tests than a grading command runs: the screen stops at its first kill,
    // and the command runs a bounded set around it.
    let bounded = cfg.max_graded_tests > 0
        && gctx.scope != crate::grading::Scope::Suite
        && covering.len() > cfg.max_graded_tests;
    let mut as_grading: Option<(Grading, Vec<String>)> = (!uncovered && !bounded)
        .then(|| {
            let scope: BTreeSet<String> = covering.iter().cloned().collect();
            gctx.grading_for(&scope, baseline, &[])
        })
        .filter(|g| !g.tests.is_empty())
        .map(|g| {
            let graded = gctx.graded_tests(&g, baseline, &[]);
            (g, graded)
        });
    worker.reset()?;
    worker.apply_patch(&cand.bug_patch)?;
    let screen_budget = baseline.budget_for(&screened, cfg.min_wall);
    let label = Check::Screen.run(0).label();
    let mut screen = match &as_grading {
        Some((g, graded)) => grading::run(runner, worker, &label, g, graded, screen_budget)?,
        None if uncovered => runner.run(worker, &label, Some(&screened), screen_budget)?,
        None => runner.run_to_first_failure(worker, &label, Some(&screened), screen_budget)?,
    };
    if as_grading.is_some() && !screen.collection_errors.is_empty() {
        // A bug that breaks a test file's import: a command that names tests in it stops
        // before running any, so the screen runs again as a selection, which the runner
        // completes around the files it cannot collect (and it grades by whole files).
        as_grading = None;
        worker.reset()?;
        worker.apply_patch(&cand.bug_patch)?;
        screen = runner.run_to_first_failure(worker, &label, Some(&screened), screen_budget)?;
    }
    let screen_failures: BTreeSet<String> = screen.failures().into_iter().collect();
    let bad = abnormal(&screen);
    out.runs.push(screen);
    if let Some(v) = bad {
        return Ok(v);
    }
    if screen_failures.is_empty() {
        let missing = out.runs[0].with_status(TestStatus::Missing);
        if !missing.is_empty() {
            return Ok(Verdict::rejected(
                Reason::Crash,
                format!("{} covering tests absent from the report", missing.len()),
            ));
        }
        if uncovered {
            return Ok(Verdict::rejected(
                Reason::NotCovered,
                if baseline.indirect.is_some() {
                    format!(
                        "no stable test executes the mutated lines in the test process, and \
                         the {} stable tests that start processes, read the repository's Python \
                         files or set a tracer pass with the bug",
                        screened.len()
                    )
                } else {
                    format!(
                        "no stable test executes the mutated lines in the test process, and \
                         all {} stable tests pass with the bug",
                        screened.len()
                    )
                },
            ));
        }
        return Ok(Verdict::rejected(
            Reason::NotKilled,
            format!("all {} covering tests pass with the bug", covering.len()),
        ));
    }

    // The grading command: the files of the tests that execute the mutated lines (when none
    // does, of those that failed in screening), whole, in the suite's order. Checks 2 and 3
    // run it and nothing else: FAIL_TO_PASS and PASS_TO_PASS are read from its runs.
    let scope: BTreeSet<String> = if uncovered {
        screen_failures.clone()
    } else if bounded {
        let file_of = |t: &str| {
            gctx.toolchain
                .test_file(t, gctx.test_files)
                .unwrap_or_else(|| t.to_string())
        };
        crate::grading::bounded_scope(
            &covering,
            &screen_failures,
            &baseline.suite_order,
            &file_of,
            cfg.max_graded_tests,
        )
    } else {
        covering
            .iter()
            .cloned()
            .chain(screen_failures.iter().cloned())
            .collect()
    };
    // A bug that breaks the import of a test file: a command that names tests in it makes the
    // runner stop before running any (pytest: "not found", exit 4), so it runs whole files.
    let grading = if out.runs[0].collection_errors.is_empty() {
        gctx.grading_for(&scope, baseline, &[])
    } else {
        gctx.grading_in(crate::grading::Scope::Files, &scope, baseline, &[])
    };
    let graded = gctx.graded_tests(&grading, baseline, &[]);
    // The screen ran this very command on this tree: it is check 2's first repeat.
    let screen_is_first = as_grading
        .as_ref()
        .is_some_and(|(g, _)| g.key() == grading.key());
    if screen_is_first {
        out.runs[0].label = Check::Buggy.run(1).label();
    }
    out.grading = Some(grading.clone());
    let repeats = cfg.repeats.max(1);
    let budget = baseline.budget_for(&graded, cfg.min_wall);

    // Check 2: the start state (buggy code), the grading command, repeated from a clean tree
    // each time; the repeats must agree.
    let mut failing: Option<BTreeSet<String>> = None;
    // Tests that drew unseeded random numbers (the probe's flag in any run so far), and every
    // test that failed in some run with the bug: such a test never grades the task.
    let mut drawn: BTreeMap<String, String> = out.runs[0].nondeterministic.clone();
    let mut failed_any: BTreeSet<String> = BTreeSet::new();
    for i in 1..=repeats {
        let run = if i == 1 && screen_is_first {
            out.runs[0].clone()
        } else {
            worker.reset()?;
            worker.apply_patch(&cand.bug_patch)?;
            let label = Check::Buggy.run(i).label();
            grading::run(runner, worker, &label, &grading, &graded, budget)?
        };
        let bad = abnormal(&run);
        let missing: Vec<String> = graded
            .iter()
            .filter(|t| run.status(t) == TestStatus::Missing)
            .cloned()
            .collect();
        let this: BTreeSet<String> = graded
            .iter()
            .filter(|t| run.status(t).is_failure())
            .cloned()
            .collect();
        for (t, what) in &run.nondeterministic {
            drawn.entry(t.clone()).or_insert_with(|| what.clone());
        }
        failed_any.extend(this.iter().cloned());
        if !(i == 1 && screen_is_first) {
            out.runs.push(run);
        }
        if let Some(v) = bad {
            return Ok(v);
        }
        if !missing.is_empty() {
            return Ok(Verdict::rejected(
                Reason::Crash,
                format!(
                    "{}: {} stable tests absent from the report (e.g. {})",
                    Check::Buggy.run(i),
                    missing.len(),
                    missing[0]
                ),
            ));
        }
        match &failing {
            None => failing = Some(this),
            Some(first)
                if first
                    .symmetric_difference(&this)
                    .any(|t| !drawn.contains_key(t)) =>
            {
                let diff: Vec<&String> = first
                    .symmetric_difference(&this)
                    .filter(|t| !drawn.contains_key(*t))
                    .take(3)
                    .collect();
                return Ok(Verdict::rejected(
                    Reason::Flaky,
                    format!(
                        "{} fails a different set of tests than {} under the same grading \
                         command: {diff:?}",
                        Check::Buggy.run(i),
                        Check::Buggy.run(1)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let failing = failing.unwrap_or_default();

    // Check 3 (and 1): buggy code + gold fix, the grading command, repeated. When that tree
    // is the clean commit's and this command already ran on it (another candidate with the
    // same grading command), those runs are its evidence: no identical experiment twice.
    let fixed_runs: Vec<Run> = match reuse_clean.and_then(|t| gctx.graded_trees.get(t, &grading)) {
        Some(runs) => {
            out.reused.push(ReusedCheck {
                check: "fixed".into(),
                tree: reuse_clean.unwrap_or_default().to_string(),
                runs: runs.iter().map(|r| r.label.clone()).collect(),
                grading: grading.key(),
            });
            runs
        }
        None => {
            let mut runs = Vec::new();
            for i in 1..=repeats {
                worker.reset()?;
                worker.apply_patch(&cand.bug_patch)?;
                apply_gold(worker, gold_patch)?;
                let label = Check::Fixed.run(i).label();
                let run = grading::run(runner, worker, &label, &grading, &graded, budget)?;
                let normal = abnormal(&run).is_none();
                runs.push(run);
                if !normal {
                    break;
                }
            }
            if let Some(tree) = reuse_clean {
                if runs.len() == repeats {
                    gctx.graded_trees.put(tree, &grading, runs.clone());
                }
            }
            runs
        }
    };
    out.runs.extend(fixed_runs.iter().cloned());
    if let Some(v) = fixed_runs.iter().find_map(abnormal) {
        return Ok(v);
    }
    worker.reset()?;
    // Tests stable in the whole suite that do not pass in every run of the grading command
    // on the fixed tree depend on which other tests run: they grade nothing.
    let passes_fixed: BTreeSet<String> = graded
        .iter()
        .filter(|t| fixed_runs.iter().all(|r| r.status(t) == TestStatus::Passed))
        .cloned()
        .collect();
    // A failing test that drew unseeded random numbers may pass with the bug elsewhere: it
    // does not grade the task, as FAIL_TO_PASS or as PASS_TO_PASS.
    let random_failed: BTreeMap<String, String> = drawn
        .iter()
        .filter(|(t, _)| failed_any.contains(*t) || screen_failures.contains(*t))
        .map(|(t, what)| (t.clone(), what.clone()))
        .collect();
    let f2p: BTreeSet<String> = failing
        .iter()
        .filter(|t| !drawn.contains_key(*t) && passes_fixed.contains(*t))
        .cloned()
        .collect();
    // Dropped: stable in the suite but not passing under the grading command on the fixed
    // tree, or failing in screening (a subset) yet passing with the bug under the grading
    // command.
    let mut order_dependent: BTreeSet<String> = graded
        .iter()
        .filter(|t| !passes_fixed.contains(*t) && !drawn.contains_key(*t))
        .cloned()
        .collect();
    order_dependent.extend(
        screen_failures
            .iter()
            .filter(|t| !failing.contains(*t) && !drawn.contains_key(*t))
            .cloned(),
    );
    out.pass_to_pass = graded
        .iter()
        .filter(|t| {
            !failed_any.contains(*t)
                && !order_dependent.contains(*t)
                && !random_failed.contains_key(*t)
                && passes_fixed.contains(*t)
        })
        .cloned()
        .collect();
    out.order_dependent = order_dependent.iter().cloned().collect();
    out.nondeterministic = random_failed.clone();
    if f2p.is_empty() {
        let random: Vec<String> = random_failed
            .keys()
            .filter(|t| passes_fixed.contains(*t))
            .cloned()
            .collect();
        if !random.is_empty() {
            // Only such tests fail: they stay FAIL_TO_PASS here, and the pipeline treats the
            // kill as ungradable (`nondeterministic`, unless a synthesized test takes their
            // place).
            out.fail_to_pass = random;
            return Ok(Verdict::Accepted);
        }
        let killed: Vec<&String> = failing.iter().filter(|t| !drawn.contains_key(*t)).collect();
        if killed.is_empty() {
            return Ok(Verdict::rejected(
                Reason::NotKilled,
                format!(
                    "the tests that failed in screening pass with the bug under the grading \
                     command (their outcome depends on which other tests run): {}",
                    screen_failures
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let reason = if reuse_clean.is_some() {
            Reason::NotKilled
        } else {
            Reason::FixFailed
        };
        return Ok(Verdict::rejected(
            reason,
            format!(
                "the tests that fail with the bug do not pass under the grading command with \
                 the gold fix either (e.g. {})",
                killed[0]
            ),
        ));
    }
    out.fail_to_pass = f2p.into_iter().collect();
    Ok(Verdict::Accepted)
}

mod synthesized;
pub use synthesized::verify_synthesized;
