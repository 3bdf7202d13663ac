//! Verification of a seed's candidates on parallel workers, each decision stored as it is
//! made (`verify_all`).

use super::*;
use crate::candidate::Candidate;
use crate::runner::TestRunner;
use crate::store::{Decided, Store};
use crate::task::{self};
use crate::verdict::Verdict;
use crate::verify::{self, Outcome};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};
use std::time::Instant;

pub(super) fn verify_all(
    cfg: &RunConfig,
    ctx: &SeedContext<'_>,
    runner: &dyn TestRunner,
    todo: Vec<Candidate>,
    store: &Store,
) -> Result<(), PipelineError> {
    if todo.is_empty() {
        return Ok(());
    }
    let pb = if cfg.progress {
        let pb = ProgressBar::new(todo.len() as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} candidates · {msg} · {elapsed_precise} (eta {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(ctx.repo.name.clone());
        pb
    } else {
        ProgressBar::hidden()
    };
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<_>>());
    let jobs = cfg.jobs.max(1).min(queue.lock().expect("queue").len());
    let (tx, rx) = mpsc::channel::<Result<(Candidate, Outcome), String>>();
    let mut accepted = 0usize;
    let mut failure: Option<PipelineError> = None;
    std::thread::scope(|scope| {
        for i in 0..jobs {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                let mut worker = match ctx.env.worker(i + 1) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.send(Err(format!("worker {i}: {e}")));
                        return;
                    }
                };
                // The seed's objects, to tell whether a check's tree is the clean one.
                let objects = git2::Repository::open_bare(&ctx.repo.mirror)
                    .or_else(|_| git2::Repository::open(&ctx.repo.mirror))
                    .map_err(|e| tracing::warn!("opening the mirror: {}", e.message()))
                    .ok();
                let clean_tree = objects
                    .as_ref()
                    .and_then(|r| crate::start_state::tree_after(r, &ctx.repo.commit, &[]).ok());
                loop {
                    if STOP.load(Ordering::SeqCst) {
                        return;
                    }
                    let Some(cand) = queue.lock().expect("queue").pop_front() else {
                        return;
                    };
                    let clean = std::fs::read_to_string(ctx.repo.checkout.join(&cand.file))
                        .unwrap_or_default();
                    let gold = task::gold_patch(&clean, &cand);
                    // Buggy + gold fix byte-identical to the clean tree the baseline ran?
                    let fixed_is_clean = objects.as_ref().zip(clean_tree).and_then(|(r, ct)| {
                        crate::start_state::tree_after(
                            r,
                            &ctx.repo.commit,
                            &[&cand.bug_patch, &gold],
                        )
                        .ok()
                        .filter(|t| *t == ct)
                        .map(|t| t.to_string())
                    });
                    let mut outcome = verify::screen_and_verify(
                        worker.as_mut(),
                        runner,
                        &ctx.grading(),
                        ctx.baseline,
                        &cand,
                        &gold,
                        fixed_is_clean.as_deref(),
                        &cfg.verify,
                    );
                    // Killed, but only by tests that cannot grade the task: ids SWE-bench's
                    // log parsers cut (parameters with spaces), or doctests in the code the
                    // agent edits (it could pass them by editing the docstring). A synthesized
                    // test with a readable id, in a test file, can carry the task instead.
                    // Otherwise it is rejected with that reason, never a survivor's verdict:
                    // the suite does kill it.
                    let ungradable = ungradable(
                        &outcome,
                        &ctx.repo.profile.test_files,
                        ctx.toolchain.toolchain(),
                    );
                    let survivor = outcome.verdict.reason().is_some_and(|r| r.is_survivor());
                    let killed_by = outcome.fail_to_pass.clone();
                    if ungradable.is_some() {
                        outcome.pass_to_pass.clear();
                        outcome.reused.clear();
                    }
                    if (ungradable.is_some() || survivor)
                        && (ctx.synth.is_some() || ctx.java_synth.is_some())
                    {
                        let started = Instant::now();
                        if let Some(record) = over_budget(ctx) {
                            outcome.synthesis = Some(record);
                        } else if let Some(setup) = &ctx.synth {
                            outcome = synthesize(
                                worker.as_mut(),
                                ctx,
                                setup,
                                runner,
                                &cand,
                                &gold,
                                &cfg.verify,
                                objects.as_ref(),
                                outcome,
                            );
                        } else if let Some(setup) = &ctx.java_synth {
                            outcome = synthesize_java(
                                worker.as_mut(),
                                ctx,
                                setup,
                                runner,
                                &cand,
                                &gold,
                                &cfg.verify,
                                objects.as_ref(),
                                outcome,
                            );
                        }
                        ctx.synth_spent.lock().expect("synthesis tally").seconds +=
                            started.elapsed().as_secs_f64();
                    }
                    if let Some((reason, why)) = ungradable {
                        let rescued = outcome.verdict.is_accepted()
                            && outcome
                                .synthesis
                                .as_ref()
                                .is_some_and(|s| s.status == "synthesized");
                        if !rescued {
                            outcome.verdict = Verdict::rejected(
                                reason,
                                format!(
                                    "{why}, and no synthesized test took their place: {}",
                                    killed_by.join(", ")
                                ),
                            );
                            outcome.fail_to_pass = killed_by;
                            outcome.pass_to_pass.clear();
                        }
                    }
                    if tx.send(Ok((cand, outcome))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Ok((cand, mut outcome)) => {
                    pb.inc(1);
                    let dropped = if outcome.verdict.is_accepted() {
                        keep_readable_ids(&mut outcome, ctx.toolchain.toolchain())
                    } else {
                        Default::default()
                    };
                    let task = if outcome.verdict.is_accepted() {
                        match build_task(cfg, ctx, &cand, &outcome, dropped) {
                            Ok((mut t, key_values)) => match crate::leak::find_leak(&t) {
                                None => {
                                    t.metadata.difficulty.issue_names_file =
                                        crate::leak::names_file(
                                            &t.problem_statement,
                                            &crate::leak::LeakFacts::from_task(&t),
                                        );
                                    // Only now, for a task that is accepted either way.
                                    if let Some(rw) = ctx.rewriter {
                                        pb.set_message(format!(
                                            "{accepted} accepted · rewriting an issue"
                                        ));
                                        rewrite_issue(rw, &mut t, &key_values);
                                    }
                                    Some(t)
                                }
                                Some(leak) => {
                                    outcome.verdict = Verdict::rejected(
                                        crate::verdict::Reason::IssueLeak,
                                        format!("the issue text would reveal the fix: {leak}"),
                                    );
                                    None
                                }
                            },
                            Err(e) => {
                                tracing::error!(candidate = %cand.id, "building the task: {e}");
                                None
                            }
                        }
                    } else {
                        None
                    };
                    if task.is_some() {
                        accepted += 1;
                    }
                    pb.set_message(format!("{accepted} accepted"));
                    tracing::debug!(candidate = %cand.id, verdict = ?outcome.verdict, "decided");
                    let d = Decided {
                        seed: ctx.repo.name.clone(),
                        candidate: cand,
                        outcome,
                        task,
                    };
                    if let Err(e) = store.put_decided(&d) {
                        failure.get_or_insert(e.into());
                        STOP.store(true, Ordering::SeqCst);
                    }
                }
                Err(e) => tracing::error!("{e}"),
            }
        }
    });
    pb.finish_and_clear();
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
