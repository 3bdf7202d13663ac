//! Triple verification of a survivor with a synthesized test file (`verify_synthesized`).

use super::*;

/// Triple verification of a survivor with a synthesized test file (`tests.0` adds it;
/// `tests.1` are its node ids), each check the grading command (the files of the covering
/// tests in the suite's order, then the new test file), repeated `cfg.repeats` times from a
/// clean tree: 1. clean code + tests: the new tests pass; 2. buggy code + tests: every new
/// test fails; 3. buggy code, gold fix and tests: all pass. PASS_TO_PASS: the stable tests of
/// those files that pass in every run of the three; the others are dropped (they depend on
/// which other tests run). `outcome` keeps the screening runs; the new runs are appended.
///
/// `fixed_is_check_1` is the tree id of check 3's tree when it is byte-identical to check 1's
/// (clean + tests): check 3 then reuses check 1's runs ([`ReusedCheck`]), unless
/// `cfg.recheck_identical`.
#[allow(clippy::too_many_arguments)]
pub fn verify_synthesized(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    gctx: &GradingContext<'_>,
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
    // PASS_TO_PASS.
    let known_failing: BTreeSet<String> = outcome.fail_to_pass.iter().cloned().collect();
    outcome.reused.clear();
    let passing = match synthesized_inner(
        worker,
        runner,
        gctx,
        baseline,
        cand,
        gold_patch,
        tests,
        fixed_is_check_1.filter(|_| !cfg.recheck_identical),
        cfg,
        &known_failing,
        &mut outcome,
    ) {
        Ok(Ok(passing)) => {
            outcome.verdict = Verdict::Accepted;
            passing
        }
        Ok(Err(v)) => {
            outcome.verdict = v;
            BTreeSet::new()
        }
        Err(Failure::Patch(e)) => {
            outcome.verdict = Verdict::rejected(Reason::PatchFailed, e);
            BTreeSet::new()
        }
        Err(Failure::Sandbox(e)) => {
            outcome.verdict = Verdict::rejected(Reason::SandboxError, e);
            BTreeSet::new()
        }
    };
    if outcome.verdict.is_accepted() {
        let graded = outcome
            .grading
            .as_ref()
            .map(|g| gctx.graded_tests(g, baseline, &[]))
            .unwrap_or_default();
        outcome.fail_to_pass = new_tests.to_vec();
        outcome.pass_to_pass = graded
            .iter()
            .filter(|t| !known_failing.contains(*t) && passing.contains(*t))
            .cloned()
            .collect();
        outcome.order_dependent = graded
            .iter()
            .filter(|t| !known_failing.contains(*t) && !passing.contains(*t))
            .cloned()
            .collect();
        outcome.test_patch = test_patch.to_string();
    } else {
        outcome.fail_to_pass.clear();
        outcome.pass_to_pass.clear();
        outcome.reused.clear();
        outcome.order_dependent.clear();
    }
    outcome.seconds += started.elapsed().as_secs_f64();
    outcome
}

/// The checks of [`verify_synthesized`]: `Ok(Ok(tests that passed in every run where they
/// must))`, `Ok(Err(rejection))`.
#[allow(clippy::too_many_arguments)]
fn synthesized_inner(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    gctx: &GradingContext<'_>,
    baseline: &Baseline,
    cand: &Candidate,
    gold_patch: &str,
    (test_patch, new_tests): (&str, &[String]),
    reuse_check_1: Option<&str>,
    cfg: &VerifyConfig,
    known_failing: &BTreeSet<String>,
    out: &mut Outcome,
) -> Result<Result<BTreeSet<String>, Verdict>, Failure> {
    let budget = baseline.budget();
    let synth_patch = |e: SandboxError| match e {
        SandboxError::Patch(p) => Failure::Patch(format!("synthesized test patch: {p}")),
        other => Failure::from(other),
    };
    let scope: BTreeSet<String> = out
        .covering
        .iter()
        .chain(known_failing.iter())
        .chain(new_tests.iter())
        .cloned()
        .collect();
    let grading = gctx.grading_for(&scope, baseline, new_tests);
    let graded = gctx.graded_tests(&grading, baseline, new_tests);
    out.grading = Some(grading.clone());
    let stable: Vec<&String> = graded
        .iter()
        .filter(|t| !new_tests.contains(t) && !known_failing.contains(*t))
        .collect();
    let mut passing: BTreeSet<String> = stable.iter().map(|t| (*t).clone()).collect();
    let repeats = cfg.repeats.max(1);
    // Check 1: the new tests pass on the clean code.
    let mut check_1 = Vec::new();
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        let label = Check::SynthClean.run(i).label();
        let run = grading::run(runner, worker, &label, &grading, &graded, budget)?;
        let bad = abnormal(&run);
        let not_passing: Vec<&String> = new_tests
            .iter()
            .filter(|t| run.status(t) != TestStatus::Passed)
            .collect();
        passing.retain(|t| run.status(t) == TestStatus::Passed);
        out.runs.push(run.clone());
        check_1.push(run);
        if let Some(v) = bad {
            return Ok(Err(v));
        }
        if let Some(t) = not_passing.first() {
            return Ok(Err(Verdict::rejected(
                Reason::SynthesisFailed,
                format!(
                    "{}: the synthesized test {t} does not pass on the clean code",
                    Check::SynthClean.run(i)
                ),
            )));
        }
    }
    // Check 2: buggy code + tests: every new test fails, in every repeat.
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        worker.apply_patch(&cand.bug_patch)?;
        let label = Check::Buggy.run(i).label();
        let run = grading::run(runner, worker, &label, &grading, &graded, budget)?;
        let bad = abnormal(&run);
        let passing_new: Vec<&String> = new_tests
            .iter()
            .filter(|t| !run.status(t).is_failure())
            .collect();
        passing.retain(|t| run.status(t) == TestStatus::Passed);
        out.runs.push(run);
        if let Some(v) = bad {
            return Ok(Err(v));
        }
        if let Some(t) = passing_new.first() {
            return Ok(Err(Verdict::rejected(
                if i == 1 {
                    Reason::SynthesisFailed
                } else {
                    Reason::Flaky
                },
                format!(
                    "{}: the synthesized test {t} does not fail with the bug",
                    Check::Buggy.run(i)
                ),
            )));
        }
    }
    // Check 3: buggy + gold fix + tests: everything passes. When that tree is check 1's,
    // check 1's runs (the same command on the same tree) are its evidence.
    if let Some(tree) = reuse_check_1 {
        out.reused.push(ReusedCheck {
            check: "fixed".into(),
            tree: tree.to_string(),
            runs: check_1.iter().map(|r| r.label.clone()).collect(),
            grading: grading.key(),
        });
        worker.reset()?;
        return Ok(Ok(passing));
    }
    for i in 1..=repeats {
        worker.reset()?;
        worker.apply_patch(test_patch).map_err(synth_patch)?;
        worker.apply_patch(&cand.bug_patch)?;
        apply_gold(worker, gold_patch)?;
        let label = Check::Fixed.run(i).label();
        let run = grading::run(runner, worker, &label, &grading, &graded, budget)?;
        let bad = abnormal(&run);
        let not_passing: Vec<&String> = new_tests
            .iter()
            .filter(|t| run.status(t) != TestStatus::Passed)
            .collect();
        passing.retain(|t| run.status(t) == TestStatus::Passed);
        out.runs.push(run);
        if let Some(v) = bad {
            return Ok(Err(v));
        }
        if let Some(t) = not_passing.first() {
            return Ok(Err(Verdict::rejected(
                if i == 1 {
                    Reason::FixFailed
                } else {
                    Reason::Flaky
                },
                format!(
                    "{}: {t} does not pass with the gold fix",
                    Check::Fixed.run(i)
                ),
            )));
        }
    }
    worker.reset()?;
    Ok(Ok(passing))
}
