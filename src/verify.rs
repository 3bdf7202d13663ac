//! Screening and triple verification of one candidate → a [`Verdict`] with its evidence.
//!
//! 1. clean code: every FAIL_TO_PASS and PASS_TO_PASS test passes — the baseline's repeated
//!    full-suite runs on the same commit and environment are this check's evidence (those ids
//!    are by construction the baseline's stable-pass set);
//! 2. buggy code: every FAIL_TO_PASS test fails and every PASS_TO_PASS test passes;
//! 3. buggy code + gold fix: all pass again.
//!
//! Checks 2 and 3 are repeated (default 3×) and must agree exactly; any disagreement rejects
//! the candidate as flaky, with the runs as evidence.
//!
//! Check 2 runs the whole suite once; its later repeats run the tests whose outcome can
//! differ from that first run's: the stable tests that execute the mutated lines (per-test
//! coverage) and every stable test that failed in `buggy#1`. A stable test outside both passed
//! with the bug in `buggy#1` and does not execute the mutated code, so its repeat would be a
//! repeat of the clean baseline's (which found it stable three times). Without per-test
//! coverage, or with `full_repeats`, every repeat runs the whole suite.
//!
//! No identical experiment is repeated: when check 3's tree (buggy + gold fix) is
//! byte-identical to the clean commit's tree, which the baseline ran, its evidence is the
//! baseline's runs, referenced by tree id ([`ReusedCheck`]); `recheck_identical` runs it anyway.

use crate::baseline::Baseline;
use crate::candidate::Candidate;
use crate::check::Check;
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
    /// Run the whole suite in every repeat of check 2 (`--full-repeats`). By default the
    /// repeats after the first run the tests whose outcome can differ: the covering tests and
    /// those that failed in `buggy#1`.
    pub full_repeats: bool,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            repeats: 3,
            recheck_identical: false,
            full_repeats: false,
        }
    }
}

/// A check whose tree is byte-identical to a tree already run in this environment: its
/// evidence is those earlier runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReusedCheck {
    /// The check: `fixed` (buggy + gold fix).
    pub check: String,
    /// The git tree id of the check's tree, which is the tree the runs ran on.
    pub tree: String,
    /// The labels of the runs that are its evidence (`baseline#1`…).
    pub runs: Vec<String>,
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
}

/// Screen `cand` with the tests covering its lines and, when they kill it, verify it.
/// `gold_patch` is the fix (buggy → clean). `fixed_is_clean`: the tree id of buggy + gold fix
/// when it is the clean commit's tree (the caller computed it; check 3 then reuses the
/// baseline's runs unless `cfg.recheck_identical`). The worker is reset first.
pub fn screen_and_verify(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    toolchain: &dyn Toolchain,
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
    };
    outcome.verdict = match verify_inner(
        worker,
        runner,
        toolchain,
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
    toolchain: &dyn Toolchain,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    reuse_clean: Option<&str>,
    cfg: &VerifyConfig,
    out: &mut Outcome,
) -> Result<Verdict, Failure> {
    let budget = baseline.budget();
    let covering = covering_tests(toolchain, baseline, cand);
    out.covering = covering.clone();
    // Coverage is collected in the test process: code a test runs in another process (a
    // command line started with `python -m`, a subprocess, a worker pool) is covered by no
    // test, yet the test may well kill its mutants. A candidate no test covers is therefore
    // screened with the whole suite; one the whole suite does not kill stays `not-covered`.
    let uncovered = covering.is_empty();
    let screened: Vec<String> = if uncovered {
        baseline.stable_pass.iter().cloned().collect()
    } else {
        covering.clone()
    };
    if screened.is_empty() {
        return Ok(Verdict::rejected(
            Reason::NotCovered,
            "no stable test executes the mutated lines",
        ));
    }

    // Screening: only the covering tests (every stable test when none covers), once.
    worker.reset()?;
    worker.apply_patch(&cand.bug_patch)?;
    let screen = runner.run(
        worker,
        &Check::Screen.run(0).label(),
        Some(&screened),
        budget,
    )?;
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
                format!(
                    "no stable test executes the mutated lines in the test process, and all \
                     {} stable tests pass with the bug",
                    screened.len()
                ),
            ));
        }
        return Ok(Verdict::rejected(
            Reason::NotKilled,
            format!("all {} covering tests pass with the bug", covering.len()),
        ));
    }

    // Check 2: the buggy code, whole suite, repeated (the repeats after the first: the tests
    // whose outcome can differ, see the module's documentation).
    let stable = &baseline.stable_pass;
    let narrow = !cfg.full_repeats && baseline.coverage_unavailable.is_none();
    let mut failing: Option<BTreeSet<String>> = None;
    let mut rerun: Option<Vec<String>> = None;
    let repeats = cfg.repeats.max(1);
    // Tests that drew unseeded random numbers (the probe's flag in any run so far), and every
    // test that failed in some run with the bug: such a test never grades the task, so the
    // repeats are compared without them (their outcomes may differ from run to run).
    let mut drawn: BTreeMap<String, String> = out.runs[0].nondeterministic.clone();
    let mut failed_any: BTreeSet<String> = screen_failures.clone();
    for i in 1..=repeats {
        // The last repeat: the screening run was already one observation of the covering
        // tests on the buggy code, so only the tests that failed in buggy#1 and did not fail
        // in screening need one more (none: no run).
        let last: Option<Vec<String>> = match (&failing, &rerun) {
            (Some(first), Some(_)) if narrow && i == repeats && i >= 3 => Some(
                first
                    .iter()
                    .filter(|t| !screen_failures.contains(*t))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        if last.as_ref().is_some_and(|l| l.is_empty()) {
            break;
        }
        // Every run starts from a clean tree with the bug, whatever the previous run did to
        // the tree (a bug may delete or rewrite files).
        worker.reset()?;
        worker.apply_patch(&cand.bug_patch)?;
        let requested = last.as_deref().or(rerun.as_deref());
        let run = runner.run(worker, &Check::Buggy.run(i).label(), requested, budget)?;
        let bad = abnormal(&run);
        // The tests this run stands for; the others keep buggy#1's outcome (they passed).
        let observed: Vec<&String> = match requested {
            None => stable.iter().collect(),
            Some(ids) => ids.iter().collect(),
        };
        let missing: Vec<String> = observed
            .iter()
            .filter(|t| run.status(t) == TestStatus::Missing)
            .map(|t| (*t).clone())
            .collect();
        let this: BTreeSet<String> = match (&failing, requested) {
            (Some(first), Some(_)) => first
                .iter()
                .filter(|t| !observed.contains(t))
                .cloned()
                .chain(
                    observed
                        .iter()
                        .filter(|t| run.status(t).is_failure())
                        .map(|t| (*t).clone()),
                )
                .collect(),
            _ => observed
                .iter()
                .filter(|t| run.status(t).is_failure())
                .map(|t| (*t).clone())
                .collect(),
        };
        if i == 1 && narrow {
            let mut ids: BTreeSet<String> = covering.iter().cloned().collect();
            ids.extend(this.iter().cloned());
            if ids.len() < stable.len() {
                rerun = Some(ids.into_iter().collect());
            }
        }
        for (t, what) in &run.nondeterministic {
            drawn.entry(t.clone()).or_insert_with(|| what.clone());
        }
        failed_any.extend(this.iter().cloned());
        out.runs.push(run);
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
                        "{} fails a different set of tests than {}: {diff:?}",
                        Check::Buggy.run(i),
                        Check::Buggy.run(1)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    // A failing test that drew unseeded random numbers may pass with the bug elsewhere (a
    // cache that evicts with `random.choice`): it does not grade the task, as FAIL_TO_PASS or
    // as PASS_TO_PASS, whether it failed in every run or in some.
    let random_failed: BTreeMap<String, String> = drawn
        .iter()
        .filter(|(t, _)| failed_any.contains(*t))
        .map(|(t, what)| (t.clone(), what.clone()))
        .collect();
    let failing = failing.unwrap_or_default();
    let f2p: BTreeSet<String> = failing
        .iter()
        .filter(|t| !drawn.contains_key(*t))
        .cloned()
        .collect();
    if f2p.is_empty() && random_failed.is_empty() {
        return Ok(Verdict::rejected(
            Reason::Flaky,
            "screening failed tests that pass when the whole suite runs",
        ));
    }
    if let Some(t) = screen_failures
        .iter()
        .find(|t| !failing.contains(*t) && !drawn.contains_key(*t))
    {
        return Ok(Verdict::rejected(
            Reason::Flaky,
            format!("{t} failed in screening but passes in the whole-suite runs"),
        ));
    }
    out.pass_to_pass = stable
        .iter()
        .filter(|t| !failing.contains(*t) && !random_failed.contains_key(*t))
        .cloned()
        .collect();
    // Only such tests fail: they stay FAIL_TO_PASS here, and the pipeline treats the kill as
    // ungradable (`nondeterministic`, unless a synthesized test takes their place).
    out.fail_to_pass = if f2p.is_empty() {
        random_failed.keys().cloned().collect()
    } else {
        f2p.iter().cloned().collect()
    };
    out.nondeterministic = random_failed;

    // Check 3: buggy code + gold fix, repeated, each run from a clean tree. When that tree
    // is the clean commit's, the baseline ran it: every stable test passed in each of its
    // repeats (that is what `stable_pass` means), which is this check's evidence.
    if let Some(tree) = reuse_clean {
        let normal = baseline.runs.iter().all(|r| abnormal(r).is_none());
        if normal && baseline.runs.len() >= cfg.repeats.max(1) {
            out.reused.push(ReusedCheck {
                check: "fixed".into(),
                tree: tree.to_string(),
                runs: baseline.runs.iter().map(|r| r.label.clone()).collect(),
            });
            worker.reset()?;
            return Ok(Verdict::Accepted);
        }
    }
    for i in 1..=cfg.repeats.max(1) {
        worker.reset()?;
        worker.apply_patch(&cand.bug_patch)?;
        worker.apply_patch(gold_patch).map_err(|e| match e {
            SandboxError::Patch(p) => Failure::Patch(format!("gold patch: {p}")),
            other => Failure::from(other),
        })?;
        let run = runner.run(worker, &Check::Fixed.run(i).label(), None, budget)?;
        let bad = abnormal(&run);
        let not_passing: Vec<String> = stable
            .iter()
            .filter(|t| run.status(t) != TestStatus::Passed)
            .cloned()
            .collect();
        out.runs.push(run);
        if let Some(v) = bad {
            return Ok(v);
        }
        if !not_passing.is_empty() {
            let reason = if i == 1 {
                Reason::FixFailed
            } else {
                Reason::Flaky
            };
            return Ok(Verdict::rejected(
                reason,
                format!(
                    "{}: {} tests do not pass with the gold fix (e.g. {})",
                    Check::Fixed.run(i),
                    not_passing.len(),
                    not_passing[0]
                ),
            ));
        }
    }
    worker.reset()?;
    Ok(Verdict::Accepted)
}

/// Triple verification of a survivor with a synthesized test file (`tests.0` adds it;
/// `tests.1` are its node ids): 1. clean code + tests: the new tests pass; 2. buggy code +
/// tests, whole suite: every new test fails, every stable test passes; 3. buggy code, gold
/// fix and tests: all pass. Each check repeated `cfg.repeats` times from a clean tree, and the
/// repeats must agree. `outcome` keeps the screening runs; the new runs are appended.
///
/// Shortcuts, as for the repository's own tests (off with `cfg.full_repeats` and
/// `cfg.recheck_identical`): `fixed_is_check_1` is the tree id of check 3's tree when it is
/// byte-identical to check 1's (clean + tests); check 1 then runs the whole suite, and check 3
/// reuses its runs ([`ReusedCheck`]). Check 2's repeats after the first run the new tests, the
/// covering tests and what failed in the first (the other tests do not run the mutated lines).
#[allow(clippy::too_many_arguments)]
pub fn verify_synthesized(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    tests: (&str, &[String]),
    fixed_is_check_1: Option<&str>,
    cfg: &VerifyConfig,
    mut outcome: Outcome,
) -> Outcome {
    let started = Instant::now();
    let (test_patch, new_tests) = tests;
    // Repository tests that already fail with the bug but cannot be named in the record
    // (their ids are not harness-readable): tolerated failing with the bug, and left out of
    // PASS_TO_PASS; they must still pass on the clean and the fixed code.
    let known_failing: BTreeSet<String> = outcome.fail_to_pass.iter().cloned().collect();
    outcome.verdict = match synthesized_inner(
        worker,
        runner,
        baseline,
        cand,
        gold_patch,
        tests,
        fixed_is_check_1.filter(|_| !cfg.recheck_identical),
        cfg,
        &known_failing,
        &mut outcome,
    ) {
        Ok(v) => v,
        Err(Failure::Patch(e)) => Verdict::rejected(Reason::PatchFailed, e),
        Err(Failure::Sandbox(e)) => Verdict::rejected(Reason::SandboxError, e),
    };
    if outcome.verdict.is_accepted() {
        outcome.fail_to_pass = new_tests.to_vec();
        outcome.pass_to_pass = baseline
            .stable_pass
            .iter()
            .filter(|t| !known_failing.contains(*t))
            .cloned()
            .collect();
        outcome.test_patch = test_patch.to_string();
    } else {
        outcome.fail_to_pass.clear();
        outcome.pass_to_pass.clear();
        outcome.reused.clear();
    }
    outcome.seconds += started.elapsed().as_secs_f64();
    outcome
}

#[allow(clippy::too_many_arguments)]
fn synthesized_inner(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    (test_patch, new_tests): (&str, &[String]),
    reuse_check_1: Option<&str>,
    cfg: &VerifyConfig,
    known_failing: &BTreeSet<String>,
    out: &mut Outcome,
) -> Result<Verdict, Failure> {
    let budget = baseline.budget();
    let synth_patch = |e: SandboxError| match e {
        SandboxError::Patch(p) => Failure::Patch(format!("synthesized test patch: {p}")),
        other => Failure::from(other),
    };
    let stable = &baseline.stable_pass;
    let repeats = cfg.repeats.max(1);
    // Check 1: the new tests pass on the clean code (with the whole suite when check 3 will
    // stand on these runs: then every stable test must pass too).
    let mut check_1 = Vec::new();
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        let requested = if reuse_check_1.is_some() {
            None
        } else {
            Some(new_tests)
        };
        let label = Check::SynthClean.run(i).label();
        let run = runner.run(worker, &label, requested, budget)?;
        let bad = abnormal(&run);
        let not_passing: Vec<&String> = new_tests
            .iter()
            .filter(|t| run.status(t) != TestStatus::Passed)
            .collect();
        let stable_not_passing: Option<&String> = requested
            .is_none()
            .then(|| stable.iter().find(|t| run.status(t) != TestStatus::Passed))
            .flatten();
        out.runs.push(run);
        check_1.push(label);
        if let Some(v) = bad {
            return Ok(v);
        }
        if let Some(t) = not_passing.first() {
            return Ok(Verdict::rejected(
                Reason::SynthesisFailed,
                format!(
                    "{}: the synthesized test {t} does not pass on the clean code",
                    Check::SynthClean.run(i)
                ),
            ));
        }
        if let Some(t) = stable_not_passing {
            return Ok(Verdict::rejected(
                Reason::SynthesisFailed,
                format!(
                    "{}: {t} does not pass with the synthesized tests added",
                    Check::SynthClean.run(i)
                ),
            ));
        }
    }
    // Check 2: buggy code, whole suite: the new tests fail, the stable tests pass.
    let narrow = !cfg.full_repeats && baseline.coverage_unavailable.is_none();
    let mut rerun: Option<Vec<String>> = None;
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        worker.apply_patch(&cand.bug_patch)?;
        let run = runner.run(
            worker,
            &Check::Buggy.run(i).label(),
            rerun.as_deref(),
            budget,
        )?;
        let bad = abnormal(&run);
        let passing_new: Vec<&String> = new_tests
            .iter()
            .filter(|t| !run.status(t).is_failure())
            .collect();
        // The stable tests this run stands for (a narrowed repeat: those it ran).
        let failing_stable: Vec<&String> = stable
            .iter()
            .filter(|t| rerun.as_ref().is_none_or(|ids| ids.contains(t)))
            .filter(|t| !known_failing.contains(*t))
            .filter(|t| run.status(t) != TestStatus::Passed)
            .collect();
        if i == 1 && narrow {
            let mut ids: BTreeSet<String> = new_tests.iter().cloned().collect();
            ids.extend(out.covering.iter().cloned());
            ids.extend(
                stable
                    .iter()
                    .filter(|t| run.status(t) != TestStatus::Passed)
                    .cloned(),
            );
            if ids.len() < stable.len() + new_tests.len() {
                rerun = Some(ids.into_iter().collect());
            }
        }
        out.runs.push(run);
        if let Some(v) = bad {
            return Ok(v);
        }
        if let Some(t) = passing_new.first() {
            return Ok(Verdict::rejected(
                if i == 1 {
                    Reason::SynthesisFailed
                } else {
                    Reason::Flaky
                },
                format!(
                    "{}: the synthesized test {t} does not fail with the bug",
                    Check::Buggy.run(i)
                ),
            ));
        }
        if let Some(t) = failing_stable.first() {
            return Ok(Verdict::rejected(
                Reason::Flaky,
                format!(
                    "{}: {t} fails with the bug in the whole suite but passed screening",
                    Check::Buggy.run(i)
                ),
            ));
        }
    }
    // Check 3: buggy + gold fix: everything passes. When that tree is check 1's, check 1's
    // whole-suite runs are its evidence.
    if let Some(tree) = reuse_check_1 {
        out.reused.push(ReusedCheck {
            check: "fixed".into(),
            tree: tree.to_string(),
            runs: check_1,
        });
        worker.reset()?;
        return Ok(Verdict::Accepted);
    }
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        worker.apply_patch(&cand.bug_patch)?;
        worker.apply_patch(gold_patch).map_err(|e| match e {
            SandboxError::Patch(p) => Failure::Patch(format!("gold patch: {p}")),
            other => Failure::from(other),
        })?;
        let run = runner.run(worker, &Check::Fixed.run(i).label(), None, budget)?;
        let bad = abnormal(&run);
        let not_passing: Vec<&String> = stable
            .iter()
            .chain(new_tests.iter())
            .filter(|t| run.status(t) != TestStatus::Passed)
            .collect();
        out.runs.push(run);
        if let Some(v) = bad {
            return Ok(v);
        }
        if let Some(t) = not_passing.first() {
            return Ok(Verdict::rejected(
                if i == 1 {
                    Reason::FixFailed
                } else {
                    Reason::Flaky
                },
                format!(
                    "{}: {t} does not pass with the gold fix",
                    Check::Fixed.run(i)
                ),
            ));
        }
    }
    worker.reset()?;
    Ok(Verdict::Accepted)
}
