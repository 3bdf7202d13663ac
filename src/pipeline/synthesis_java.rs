//! Test synthesis for a Java seed's survivors: build calls into the mutated member
//! ([`crate::synth::java`]), observe them on the clean and the buggy tree through the seed's
//! own test runner, and verify the calls whose outcomes differ as a regression test.

use super::*;
use crate::candidate::Candidate;
use crate::runner::{RunBudget, TestRunner};
use crate::sandbox::Worker;
use crate::synth::java::{self, Flavor, Index};
use crate::synth::SynthRecord;
use crate::verify::{self, Outcome, VerifyConfig};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// At most this many compilations of an observer (each drops the calls javac refused).
const COMPILE_ATTEMPTS: usize = 6;

/// A module's test index and the JUnit its tests use.
type Module = Arc<(Index, Option<Flavor>)>;

/// What a Java seed's synthesis needs: its modules' source roots, and per test root the
/// index of its tests (built on first use).
pub(super) struct JavaSynthSetup {
    pub(super) roots: Vec<(String, String)>,
    pub(super) modules: Mutex<BTreeMap<String, Module>>,
}

impl JavaSynthSetup {
    pub(super) fn new(checkout: &Path) -> JavaSynthSetup {
        JavaSynthSetup {
            roots: crate::toolchain::java::maven_source_roots(checkout),
            modules: Mutex::new(BTreeMap::new()),
        }
    }

    fn module(&self, checkout: &Path, test_root: &str, files: &[&String]) -> Module {
        let mut m = self.modules.lock().expect("java synthesis modules");
        m.entry(test_root.to_string())
            .or_insert_with(|| {
                let tests = java::read_tests(checkout, files);
                let texts: Vec<&str> = tests.iter().map(|(_, t)| t.as_str()).collect();
                let flavor = Flavor::of(&texts);
                Arc::new((Index::build(&tests), flavor))
            })
            .clone()
    }
}

fn record(status: &str, detail: String) -> SynthRecord {
    SynthRecord {
        status: status.into(),
        detail,
        ..Default::default()
    }
}

/// Give a Java survivor a regression test, verified like any task; the outcome's verdict
/// stays where none can be written.
#[allow(clippy::too_many_arguments)]
pub(super) fn synthesize_java(
    worker: &mut dyn Worker,
    ctx: &SeedContext<'_>,
    setup: &JavaSynthSetup,
    runner: &dyn TestRunner,
    cand: &Candidate,
    gold: &str,
    verify_cfg: &VerifyConfig,
    objects: Option<&git2::Repository>,
    mut outcome: Outcome,
) -> Outcome {
    let started = Instant::now();
    let checkout = &ctx.repo.checkout;
    let test_files = &ctx.repo.profile.test_files;
    let Some((test_root, files)) = java::module_of(&setup.roots, &cand.file, test_files) else {
        outcome.synthesis = Some(record(
            "no-reaching-calls",
            format!("`{}` is in no module's source root", cand.file),
        ));
        return outcome;
    };
    let module = setup.module(checkout, &test_root, &files);
    let (index, flavor) = (&module.0, module.1);
    let Some(flavor) = flavor else {
        outcome.synthesis = Some(record(
            "no-reaching-calls",
            format!("the tests under `{test_root}` use no JUnit this can write"),
        ));
        return outcome;
    };
    let clean = match std::fs::read_to_string(checkout.join(&cand.file)) {
        Ok(t) => t,
        Err(e) => {
            outcome.synthesis = Some(record("error", format!("reading {}: {e}", cand.file)));
            return outcome;
        }
    };
    let seed = u64::from_str_radix(cand.hash.get(..16).unwrap_or("0"), 16).unwrap_or(0);
    let mut plan = match java::plan(
        &clean,
        cand.function_lines.0,
        &test_root,
        test_files,
        flavor,
        index,
        seed,
    ) {
        Ok(p) => p,
        Err(why) => {
            outcome.synthesis = Some(record("no-reaching-calls", why));
            return outcome;
        }
    };
    let timeout = crate::timeouts::synthesis(ctx.baseline.run_timeout_s);
    let budget = RunBudget::wall(timeout);
    // The clean observation, dropping the calls (and imports) javac refuses.
    let mut live: Vec<usize> = (0..plan.calls.len()).collect();
    let mut clean_obs = None;
    let mut failure = String::new();
    for attempt in 0..COMPILE_ATTEMPTS {
        if live.is_empty() {
            failure = "javac refused every call".into();
            break;
        }
        let name = format!("synth-observe-{}-{attempt}-clean.txt", cand.id);
        let gen = java::observer(&plan, &live, &format!("{}/{name}", worker.scratch()));
        match observe(worker, runner, &gen, None, &name, budget) {
            Ok(Ok(obs)) => {
                clean_obs = Some(obs);
                break;
            }
            Ok(Err(anomaly)) => {
                tracing::debug!(candidate = %cand.id, %anomaly, source = %gen.source, "observer refused");
                let file = gen.path.rsplit('/').next().unwrap_or(&gen.path).to_string();
                // The anomaly quotes a few of javac's errors; the fast path keeps them all.
                let javac = worker
                    .read_scratch(crate::runner::maven::fast::JAVAC_LOG)
                    .ok()
                    .flatten()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                let mut bad = java::error_lines(&anomaly, &file);
                bad.extend(java::javac_log_lines(&javac, &file));
                let before = live.len();
                live.retain(|i| !gen.call_lines.get(i).is_some_and(|l| bad.contains(l)));
                let bad_imports: Vec<&String> = gen
                    .import_lines
                    .iter()
                    .filter(|(l, _)| bad.contains(l))
                    .map(|(_, i)| i)
                    .collect();
                for c in plan.calls.iter_mut() {
                    c.imports.retain(|i| !bad_imports.contains(&i));
                }
                let stuck = live.len() == before && bad_imports.is_empty();
                failure = anomaly;
                if stuck {
                    break;
                }
            }
            Err(e) => {
                failure = e;
                break;
            }
        }
    }
    let Some(clean_obs) = clean_obs else {
        let _ = worker.reset();
        outcome.synthesis = Some(record(
            "error",
            format!(
                "observing {} calls of `{}` on the clean code: {failure}",
                live.len(),
                plan.target
            ),
        ));
        outcome.seconds += started.elapsed().as_secs_f64();
        return outcome;
    };
    let name = format!("synth-observe-{}-buggy.txt", cand.id);
    let gen_buggy = java::observer(&plan, &live, &format!("{}/{name}", worker.scratch()));
    let buggy_obs = match observe(
        worker,
        runner,
        &gen_buggy,
        Some(&cand.bug_patch),
        &name,
        budget,
    ) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) | Err(e) => {
            let _ = worker.reset();
            outcome.synthesis = Some(record(
                "error",
                format!(
                    "observing {} calls of `{}` on the buggy code: {e}",
                    live.len(),
                    plan.target
                ),
            ));
            outcome.seconds += started.elapsed().as_secs_f64();
            return outcome;
        }
    };
    let differ = java::differing(&clean_obs, &buggy_obs);
    let observed = format!(
        "{} calls of `{}` observed ({} built, {} refused by javac)",
        clean_obs.len(),
        plan.target,
        plan.calls.len(),
        plan.calls.len() - live.len()
    );
    if differ.is_empty() {
        outcome.synthesis = Some(record(
            "no-difference",
            format!("{observed}: none tells the versions apart"),
        ));
        outcome.seconds += started.elapsed().as_secs_f64();
        return outcome;
    }
    // A second clean observation: an outcome that changed since the first (the clock, a
    // counter, a hash seed) would not pass on the clean code again.
    let name = format!("synth-observe-{}-clean-again.txt", cand.id);
    let again = java::observer(&plan, &differ, &format!("{}/{name}", worker.scratch()));
    let differ: Vec<usize> = match observe(worker, runner, &again, None, &name, budget) {
        Ok(Ok(o)) => differ
            .into_iter()
            .filter(|i| o.get(i) == clean_obs.get(i))
            .collect(),
        _ => Vec::new(),
    };
    if differ.is_empty() {
        outcome.synthesis = Some(record(
            "no-difference",
            format!("{observed}: the outcomes that differ change between clean runs"),
        ));
        outcome.seconds += started.elapsed().as_secs_f64();
        return outcome;
    }
    let cases: Vec<(usize, String)> = differ
        .iter()
        .take(crate::synth::MAX_ASSERTS)
        .map(|i| (*i, clean_obs[i].clone()))
        .collect();
    let test = java::regression_test(&plan, &cases);
    let patch = crate::task::file_diff_new(&test.path, &test.source);
    outcome.synthesis = Some(SynthRecord {
        status: "synthesized".into(),
        replayed: clean_obs.len(),
        entry_functions: 1,
        test_path: Some(test.path.clone()),
        detail: format!("{observed}: {} differ", differ.len()),
        ..Default::default()
    });
    let fixed_is_check_1 = fixed_is_check_1(objects, &ctx.repo.commit, &patch, cand, gold);
    outcome.seconds += started.elapsed().as_secs_f64();
    verify::verify_synthesized(
        worker,
        runner,
        &ctx.grading(),
        ctx.baseline,
        cand,
        gold,
        (&patch, &test.tests),
        fixed_is_check_1.as_deref(),
        verify_cfg,
        outcome,
    )
}

/// Run an observer on the clean tree (or with `bug` applied): `Ok(Ok(outcomes))`, or
/// `Ok(Err(what the run said))` when it wrote none (javac's errors among it).
fn observe(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    gen: &java::Generated,
    bug: Option<&str>,
    out_name: &str,
    budget: RunBudget,
) -> Result<Result<BTreeMap<usize, String>, String>, String> {
    worker.reset().map_err(|e| e.to_string())?;
    if let Some(b) = bug {
        worker.apply_patch(b).map_err(|e| e.to_string())?;
    }
    worker
        .apply_patch(&crate::task::file_diff_new(&gen.path, &gen.source))
        .map_err(|e| format!("the observer's patch: {e}"))?;
    let label = if bug.is_some() {
        "synth-observe-buggy"
    } else {
        "synth-observe-clean"
    };
    let run = runner
        .run(worker, label, Some(&gen.tests), budget)
        .map_err(|e| e.to_string())?;
    let text = worker.read_scratch(out_name).map_err(|e| e.to_string())?;
    let _ = worker.reset();
    match text {
        Some(t) => Ok(Ok(java::parse_observations(&String::from_utf8_lossy(&t)))),
        None => Ok(Err(run.anomaly.clone().unwrap_or_else(|| {
            format!(
                "the observer wrote nothing ({:?}, exit {:?}: {})",
                run.end,
                run.exit_code,
                run.results
                    .values()
                    .filter_map(|r| r.message.clone())
                    .next()
                    .unwrap_or_default()
            )
        }))),
    }
}
