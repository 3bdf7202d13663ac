//! Test synthesis for a seed's survivors: the clean-suite tracer within its budget, top-up
//! runs, and the synthesized tests that make survivors tasks.

use super::*;
use crate::baseline::Baseline;
use crate::candidate::Candidate;
use crate::runner::TestRunner;
use crate::synth;
use crate::verify::{self, Outcome, VerifyConfig};
use std::time::{Duration, Instant};

/// Counts a candidate that goes to synthesis; when the seed's synthesis budget is spent, the
/// record that says so (the candidate keeps its verdict).
pub(super) fn over_budget(ctx: &SeedContext<'_>) -> Option<synth::SynthRecord> {
    let mut spent = ctx.synth_spent.lock().expect("synthesis tally");
    spent.survivors += 1;
    let budget = ctx.synth_budget?;
    if spent.seconds < budget.as_secs_f64() {
        return None;
    }
    spent.over_budget += 1;
    Some(synth::SynthRecord {
        status: "over-budget".into(),
        detail: format!(
            "the seed's synthesis budget ({} s) was spent",
            budget.as_secs()
        ),
        ..Default::default()
    })
}

/// The clean suite's calls recorded so far for a seed: the first survivor traces the whole
/// suite (a run of its own costs 1-2.6x the plain suite on the real projects of BENCHMARKS.md;
/// a selection first and the suite after it cost one more pytest start, which took
/// marshmallow's tracer from 2.6x to 4.5x), and every later survivor uses that record.
///
/// A survivor that tests run but that no recorded call reaches after that (the suite's earlier
/// tests spent its function's or its receivers' caps: marshmallow's `Validator._repr_args`,
/// reached only from `Email(...)` objects the first 40 constructions of `Email` were not)
/// traces its own tests once more, in a run of their own, and so does a kill no harness can
/// grade (humanize's parametrized ids with spaces), with the tests that failed: a whole-suite
/// trace keeps the first calls of each function, not those: at most [`TOP_UP_RUNS`] such runs
/// of at most [`TOP_UP_TESTS`] tests each per seed, and none that would take the seed's
/// tracer past [`TRACE_FACTOR`] times the plain suite.
#[derive(Default)]
pub(super) struct TraceCache {
    pub(super) trace: synth::Trace,
    pub(super) traced: std::collections::BTreeSet<String>,
    pub(super) whole_suite: bool,
    pub(super) top_ups: usize,
    /// What the next top-up is expected to cost, in wall seconds: [`FIRST_TOP_UP`] of the
    /// whole-suite run, then the last top-up's.
    pub(super) last_run_s: f64,
}

/// Top-up tracer runs per seed, and the most tests one takes (see [`TraceCache`]). Each run
/// pays pytest's start, collection and the package's import (2-4 s on marshmallow or
/// boltons at load 3-4): six runs of up to 400 tests, the first setting, took marshmallow's
/// tracer from 2.7x to 6.8x the suite for one more rescue (a metaclass `__init__` that 359
/// tests run cost 7.7 s and rescued nothing), so few and small.
pub(super) const TOP_UP_RUNS: usize = 4;

/// What the first top-up run is expected to cost, as a share of the whole-suite tracer run.
pub(super) const FIRST_TOP_UP: f64 = 0.75;
pub(super) const TOP_UP_TESTS: usize = 50;

/// The most a seed's tracer runs may cost together by default, in plain suites (by CPU
/// seconds where measured, else wall): a top-up run that would cross it is left out and
/// counted in the run summary.
pub const TRACE_FACTOR: f64 = 3.0;

/// Whether a top-up tracer run still fits the seed's tracer budget: the seconds traced so far,
/// plus what the run is expected to take, within `factor` plain suites ([`TRACE_FACTOR`] by
/// default). Expected: the
/// last top-up's seconds, else [`FIRST_TOP_UP`] of the whole-suite run's: pytest's start,
/// collection and the package's import dominate a run of at most [`TOP_UP_TESTS`] tests
/// (toolz: 2.3 s for 25 tests against 3.0 s for all 192; half a plain suite, the first
/// estimate, took its tracer to 3.1x). A suite whose seconds are unknown (0) sets no limit.
pub(super) fn top_up_fits(traced_s: f64, expected_s: f64, suite_s: f64, factor: f64) -> bool {
    suite_s <= 0.0 || traced_s + expected_s <= factor * suite_s
}

/// Whether a recorded call or scenario of `trace` reaches `cand`'s function.
pub(super) fn trace_reaches(trace: &synth::Trace, cand: &Candidate) -> bool {
    let target = format!("{}::{}", cand.file, cand.function);
    trace.calls.iter().any(|c| c.reaches.contains(&target))
        || trace.scenarios.iter().any(|s| s.reaches.contains(&target))
}

/// The stable tests that run `cand`'s function's lines (no fallback to its file).
pub(super) fn function_tests(baseline: &Baseline, cand: &Candidate) -> Vec<String> {
    if baseline.coverage_unavailable.is_some() {
        return Vec::new();
    }
    let (first, last) = cand.function_lines;
    baseline
        .coverage
        .tests_covering(&cand.file, first, last)
        .into_iter()
        .filter(|t| baseline.stable_pass.contains(t))
        .collect()
}

/// The trace `cand` needs: the cache, after tracing the whole suite once per seed and, where
/// no recorded call reaches `cand`'s function, its own tests (see [`TraceCache`]).
pub(super) fn trace_for(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    cand: &Candidate,
    killing: &[String],
    timeout: Duration,
) -> (synth::Trace, Option<String>) {
    let mut cache = ctx.trace.lock().expect("trace cache");
    let mut error = None;
    if !cache.whole_suite {
        let (e, cost) = trace_into(worker, ctx, setup, cand, None, timeout, &mut cache);
        error = e;
        cache.last_run_s = FIRST_TOP_UP * cost;
        // Not traced again either way: a failing tracer would fail (and wait out its timeout)
        // for every survivor.
        cache.whole_suite = true;
    }
    // The tests of an ungradable kill that failed with the bug, else (when no recorded call
    // reaches the function) those that run it.
    let own: Vec<String> = if !killing.is_empty() {
        killing.iter().take(TOP_UP_TESTS).cloned().collect()
    } else if !trace_reaches(&cache.trace, cand) {
        function_tests(ctx.baseline, cand)
    } else {
        Vec::new()
    };
    if error.is_none() && cache.top_ups < TOP_UP_RUNS {
        // Tests already traced in a top-up of their own would record the same again.
        if !own.is_empty()
            && own.len() <= TOP_UP_TESTS
            && !own.iter().all(|t| cache.traced.contains(t))
        {
            let (traced_s, suite_s) = ctx
                .synth_spent
                .lock()
                .expect("synthesis tally")
                .tracer_cost();
            if top_up_fits(traced_s, cache.last_run_s, suite_s, ctx.tracer_budget) {
                cache.top_ups += 1;
                let (e, cost) =
                    trace_into(worker, ctx, setup, cand, Some(&own), timeout, &mut cache);
                error = e;
                cache.last_run_s = cost;
                cache.traced.extend(own);
            } else {
                tracing::info!(seed = %ctx.repo.name, candidate = %cand.id, traced_s, suite_s, "a top-up tracer run would take the tracer past {}x the suite: left out", ctx.tracer_budget);
                ctx.synth_spent
                    .lock()
                    .expect("synthesis tally")
                    .top_ups_skipped += 1;
            }
        }
    }
    (cache.trace.clone(), error)
}

/// One tracer run of `tests` (`None`: the whole suite), merged into the cache and counted in
/// the seed's synthesis tally; the error, when it failed, and what the run cost (in the
/// measure of [`SynthesisSummary::tracer_cost`]).
pub(super) fn trace_into(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    cand: &Candidate,
    tests: Option<&[String]>,
    timeout: Duration,
    cache: &mut TraceCache,
) -> (Option<String>, f64) {
    let t = Instant::now();
    let r = synth::trace(worker, setup, tests, timeout);
    let seconds = t.elapsed().as_secs_f64();
    let count = tests.map_or(ctx.baseline.stable_pass.len(), <[String]>::len);
    let cpu = r.as_ref().ok().and_then(|tr| tr.cpu_s);
    let error = match r {
        Ok(tr) => {
            tracing::info!(seed = %ctx.repo.name, candidate = %cand.id, tests = count, calls = tr.calls.len(), scenarios = tr.scenarios.len(), dropped = tr.dropped, seconds, "recorded the clean suite's calls");
            cache.trace.merge(tr);
            None
        }
        Err(e) => {
            tracing::warn!(seed = %ctx.repo.name, candidate = %cand.id, tests = count, "tracing the clean suite failed: {e}");
            Some(e.to_string())
        }
    };
    let mut spent = ctx.synth_spent.lock().expect("synthesis tally");
    spent.trace_runs += 1;
    spent.traced_tests += count;
    spent.trace_s += seconds;
    // A run whose CPU went unmeasured counts its wall seconds (more, never less).
    spent.trace_cpu_s += cpu.unwrap_or(seconds);
    let cost = if spent.suite_cpu_s.is_some() {
        cpu.unwrap_or(seconds)
    } else {
        seconds
    };
    (error, cost)
}

impl SynthesisSummary {
    /// What the tracer has cost so far and what a plain suite costs, in the same measure: CPU
    /// seconds where the suite's were measured, else wall seconds.
    fn tracer_cost(&self) -> (f64, f64) {
        match self.suite_cpu_s {
            Some(suite) => (self.trace_cpu_s, suite),
            None => (self.trace_s, self.suite_s),
        }
    }
}

/// Give a survivor a synthesized test: trace the tests that reach its function (each test
/// once per seed), replay the calls that reach it, write the differences as a test file,
/// verify it like any task.
#[allow(clippy::too_many_arguments)]
pub(super) fn synthesize(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    runner: &dyn TestRunner,
    cand: &Candidate,
    gold: &str,
    verify_cfg: &VerifyConfig,
    objects: Option<&git2::Repository>,
    mut outcome: Outcome,
) -> Outcome {
    let started = Instant::now();
    let timeout = crate::timeouts::synthesis(ctx.baseline.run_timeout_s);
    // Code no test and no import ran may be code no caller can run at all.
    if outcome.verdict.reason() == Some(crate::verdict::Reason::NotCovered) {
        match synth::unreachable(worker, setup, cand, timeout) {
            Ok(Some(why)) => {
                outcome.synthesis = Some(synth::SynthRecord {
                    status: "unreachable".into(),
                    detail: why.clone(),
                    ..Default::default()
                });
                outcome.verdict =
                    crate::verdict::Verdict::rejected(crate::verdict::Reason::Unreachable, why);
                outcome.seconds += started.elapsed().as_secs_f64();
                return outcome;
            }
            Ok(None) => {}
            Err(e) => tracing::debug!(candidate = %cand.id, "reachability probe: {e}"),
        }
    }
    // A kill no harness can grade: the tests that failed are known to tell the versions
    // apart, so their calls are the ones to replay.
    let (trace, trace_error) = trace_for(worker, ctx, setup, cand, &outcome.fail_to_pass, timeout);
    if let Some(e) = trace_error.filter(|_| trace.calls.is_empty() && trace.scenarios.is_empty()) {
        outcome.synthesis = Some(synth::SynthRecord {
            status: "error".into(),
            detail: format!("tracing the clean suite: {e}"),
            ..Default::default()
        });
        return outcome;
    }
    let trace = &trace;
    let search = match synth::search(worker, setup, trace, cand, timeout, ctx.deep_synthesis) {
        Ok(s) => s,
        Err(e) => {
            let _ = worker.reset();
            outcome.synthesis = Some(synth::SynthRecord {
                status: "error".into(),
                detail: e.to_string(),
                ..Default::default()
            });
            return outcome;
        }
    };
    if search.found.is_empty() && search.reaching == 0 && search.searched == 0 {
        outcome.synthesis = Some(synth::SynthRecord::from_search(
            "no-reaching-calls",
            &search,
        ));
        return outcome;
    }
    // A search from the signature alone (no recorded call reaches the function) may never have
    // run the mutated lines (boltons' urlutils keeps a copy of OrderedMultiDict that an import
    // replaces, so `OrderedMultiDict.fromkeys` calls another class), and CrossHair's "all paths
    // exhausted" on parameters no test ever filled (boltons' `format_exception_only` without
    // a SyntaxError) covers only inputs the function rejects: finding nothing there is no
    // evidence of equivalence. The verdict stays.
    if search.found.is_empty() && search.reaching == 0 {
        outcome.synthesis = Some(synth::SynthRecord::from_search("no-difference", &search));
        return outcome;
    }
    if search.found.is_empty() {
        outcome.synthesis = Some(synth::SynthRecord::from_search("no-difference", &search));
        outcome.verdict = crate::verdict::Verdict::rejected(
            crate::verdict::Reason::LikelyEquivalent,
            format!(
                "no input tells the versions apart: {} of {} recorded calls reaching `{}` replayed \
                 (through {} function(s)); {}{}{}",
                search.replayed,
                search.reaching,
                cand.function,
                search.entry_functions,
                if search.gave_up {
                    format!(
                        "Hypothesis searched {} function(s) of its module for {} s and CrossHair \
                         was not run (`--deep-synthesis` searches for {} s, then with CrossHair)",
                        search.searched,
                        synth::QUICK_SEARCH_SECONDS,
                        synth::SEARCH_SECONDS
                    )
                } else {
                    format!(
                        "Hypothesis searched {} function(s) of its module",
                        search.searched
                    )
                },
                search
                    .search_error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default(),
                search
                    .symbolic
                    .as_ref()
                    .map(|s| format!("; {}", s.describe()))
                    .unwrap_or_default()
            ),
        );
        outcome.seconds += started.elapsed().as_secs_f64();
        return outcome;
    }
    let test = synth::render(&search.found, setup, cand);
    let mut record = synth::SynthRecord::from_search("synthesized", &search);
    record.test_path = Some(test.path.clone());
    record.cases = test.cases.clone();
    outcome.synthesis = Some(record);
    // Buggy + gold fix + the new tests byte-identical to the clean tree with the new tests
    // (what check 1 runs)?
    let fixed_is_check_1 = fixed_is_check_1(objects, &ctx.repo.commit, &test.patch, cand, gold);
    outcome.seconds += started.elapsed().as_secs_f64();
    verify::verify_synthesized(
        worker,
        runner,
        &ctx.grading(),
        ctx.baseline,
        cand,
        gold,
        (&test.patch, &test.tests),
        fixed_is_check_1.as_deref(),
        verify_cfg,
        outcome,
    )
}

/// The tree id of a synthesized test's check 3 (buggy + gold fix + the new tests) where it is
/// byte-identical to check 1's (the clean tree with the new tests).
pub(super) fn fixed_is_check_1(
    objects: Option<&git2::Repository>,
    commit: &str,
    test_patch: &str,
    cand: &Candidate,
    gold: &str,
) -> Option<String> {
    let r = objects?;
    let with_tests = crate::start_state::tree_after(r, commit, &[test_patch]).ok()?;
    let fixed =
        crate::start_state::tree_after(r, commit, &[test_patch, &cand.bug_patch, gold]).ok()?;
    (fixed == with_tests).then(|| fixed.to_string())
}
