//! From a verified candidate to a task record: the issue text, gradable test ids, the
//! difficulty features.

use super::*;
use crate::candidate::Candidate;
use crate::check::Check;
use crate::issue::{self, IssueInput};
use crate::repo::Repo;
use crate::task::{self, Task};
use crate::toolchain::{self};
use crate::verdict::Verdict;
use crate::verify::Outcome;
use std::path::Path;

/// Replace the (leak-checked) template text of `task` with the model's rewrite when it passes
/// the checks; record what happened in `metadata.issue_rewrite` either way.
pub(super) fn rewrite_issue(
    rw: &crate::issue_llm::Rewriter,
    task: &mut Task,
    key_values: &[String],
) {
    let (text, record) = rw.rewrite(task, key_values);
    match text {
        Some(text) => {
            task.metadata.difficulty.issue_names_function =
                names_function(&text, &task.metadata.location.function);
            task.metadata.difficulty.issue_names_file =
                crate::leak::names_file(&text, &crate::leak::LeakFacts::from_task(task));
            task.problem_statement = text;
        }
        None => tracing::warn!(
            task = %task.instance_id,
            "issue rewrite not used ({}): {}; the template text stays",
            record.fallback.map(|f| f.as_str()).unwrap_or("none"),
            record.detail
        ),
    }
    task.metadata.issue_rewrite = record;
}

/// The task of an accepted candidate, and the values of its issue text a rewrite must keep.
pub(super) fn build_task(
    cfg: &RunConfig,
    ctx: &SeedContext<'_>,
    cand: &Candidate,
    outcome: &Outcome,
    dropped_test_ids: task::DroppedTestIds,
) -> Result<(Task, Vec<String>), String> {
    let repo = ctx.repo;
    let clean = std::fs::read_to_string(repo.checkout.join(&cand.file))
        .map_err(|e| format!("reading {}: {e}", cand.file))?;
    let buggy = task::buggy_text(&clean, cand);
    let patch = task::file_diff_indexed(&cand.file, &buggy, &clean);
    let bug_patch = task::file_diff_indexed(&cand.file, &clean, &buggy);
    // The start state: the buggy tree, parentless, without the FAIL_TO_PASS tests' files.
    let (hidden, mode) = if cfg.visible_tests {
        (Vec::new(), crate::start_state::HiddenTests::Visible)
    } else {
        (
            crate::start_state::test_files_of(&outcome.fail_to_pass, &repo.profile.test_files),
            crate::start_state::HiddenTests::Files,
        )
    };
    let mirror = git2::Repository::open_bare(&repo.mirror)
        .or_else(|_| git2::Repository::open(&repo.mirror))
        .map_err(|e| format!("opening the mirror: {}", e.message()))?;
    let mut start = crate::start_state::build(
        &mirror,
        &repo.commit,
        &bug_patch,
        &hidden,
        mode,
        &outcome.test_patch,
    )
    .map_err(|e| e.to_string())?;
    start.info.repo_image = ctx.image.clone();
    let base_commit = start.commit.to_string();
    let image_name = ctx.image.as_deref().map(|repo_image| {
        let layer = ctx.toolchain.toolchain().task_layer();
        crate::sandbox::task_image::tag(repo_image, &base_commit, &layer)
    });
    // Runs name their logs relative to OUT.
    let runs: Vec<crate::run::Run> = outcome
        .runs
        .iter()
        .cloned()
        .map(|mut r| {
            r.log_path = r.log_path.map(|p| relative_to(&p, &cfg.out));
            r
        })
        .collect();
    let buggy_run = outcome
        .runs
        .iter()
        .find(|r| r.label == Check::Buggy.run(1).label());
    let input = IssueInput {
        candidate: cand,
        buggy_run,
        fail_to_pass: &outcome.fail_to_pass,
        test_files: &repo.profile.test_files,
        cases: outcome
            .synthesis
            .as_ref()
            .filter(|_| !outcome.test_patch.is_empty())
            .map(|s| s.cases.as_slice())
            .unwrap_or(&[]),
    };
    let issue = issue::problem_statement(&input).map_err(|e| e.to_string())?;
    let (problem_statement, issue_style) = (issue.text.clone(), issue.style);
    let key_values = issue::key_values(&input);
    let issue_names_function = names_function(&problem_statement, &cand.function);
    let fix_lines = task::changed_lines(&patch);
    let function_lines = cand.function_lines.1 + 1 - cand.function_lines.0;
    let killing = outcome.fail_to_pass.len();
    Ok((
        Task {
            instance_id: task::instance_id(&repo.name, cand),
            repo: repo.seed.repo_name(),
            base_commit: base_commit.clone(),
            patch,
            test_patch: start.test_patch,
            problem_statement,
            hints_text: issue.hints.clone(),
            created_at: task::now_utc(),
            version: repo
                .seed
                .revision
                .clone()
                .unwrap_or_else(|| "0".to_string()),
            environment_setup_commit: base_commit,
            fail_to_pass: outcome.fail_to_pass.clone(),
            pass_to_pass: outcome.pass_to_pass.clone(),
            bug_patch,
            image_name,
            language: repo.profile.language,
            metadata: task::TaskMetadata {
                mutators: vec![cand.mutator.clone()],
                category: cand.category.clone(),
                candidate_id: cand.id.clone(),
                location: task::Location {
                    file: cand.file.clone(),
                    function: cand.function.clone(),
                    lines: cand.line_range,
                },
                difficulty: task::Difficulty {
                    category: cand.category.clone(),
                    killing_tests: killing,
                    function_lines,
                    fix_lines,
                    files_in_fix: 1,
                    synthesized_tests: !outcome.test_patch.is_empty(),
                    direct_call: direct_call(repo, cand, outcome),
                    issue_names_function,
                    issue_names_file: false,
                    score: task::difficulty_score(&cand.category, killing, function_lines),
                },
                verification: task::Evidence {
                    repeats: ctx.repeats,
                    sandbox: ctx.sandbox.to_string(),
                    clean_runs: ctx
                        .baseline
                        .runs
                        .iter()
                        .map(|r| task::RunRef {
                            label: r.label.clone(),
                            log_digest: r.log_digest.clone(),
                            passed: r.with_status(crate::run::TestStatus::Passed).len(),
                            duration_s: r.duration_s,
                        })
                        .collect(),
                    runs,
                    reused: outcome.reused.clone(),
                    nondeterministic: outcome.nondeterministic.clone(),
                },
                environment: task::EnvironmentInfo {
                    seed: repo.name.clone(),
                    // As the manifest gave it: no path of this machine.
                    source: repo.seed.source.clone(),
                    install: repo.profile.install_command.clone(),
                    test_command: ctx.test_command.clone(),
                    python_path: repo.profile.python_path.clone(),
                    toolchain: Some(ctx.toolchain),
                    dependencies: ctx.env_notes.clone(),
                },
                tool_version: crate::VERSION.to_string(),
                issue_style: issue_style.to_string(),
                issue_detail: issue.detail.to_string(),
                issue_rewrite: Default::default(),
                start_state: Some(start.info),
                dropped_test_ids: task::DroppedTestIds {
                    order_dependent: outcome.order_dependent.len(),
                    ..dropped_test_ids
                },
                grading: outcome.grading.clone().map(|mut g| {
                    g.editable = crate::grading::editable_globs(&repo.profile.source_files);
                    g.protected = ctx.toolchain.toolchain().protected();
                    g
                }),
            },
        },
        key_values,
    ))
}

/// `path` relative to `base` when it lies under it (else unchanged).
pub(super) fn relative_to(path: &str, base: &Path) -> String {
    let base_abs = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    for b in [base.to_path_buf(), base_abs] {
        if let Ok(rel) = Path::new(path).strip_prefix(&b) {
            return rel.display().to_string();
        }
    }
    path.to_string()
}

/// Why an accepted outcome's FAIL_TO_PASS tests cannot grade the task, if none can: each id
/// is one SWE-bench's log parsers cut ([`toolchain::Toolchain::harness_readable`]) or a doctest in a source
/// file (its file is not one of the repository's `test_files`).
pub(super) fn ungradable(
    outcome: &Outcome,
    test_files: &[String],
    toolchain: &dyn toolchain::Toolchain,
) -> Option<(crate::verdict::Reason, &'static str)> {
    let in_code = |t: &str| {
        t.split_once("::")
            .is_some_and(|(file, _)| !test_files.iter().any(|f| f == file))
    };
    let f2p = &outcome.fail_to_pass;
    if !outcome.verdict.is_accepted() || f2p.is_empty() {
        return None;
    }
    if f2p.iter().all(|t| outcome.nondeterministic.contains_key(t)) {
        return Some((
            crate::verdict::Reason::Nondeterministic,
            "every test that fails with the bug draws on randomness nothing in it seeds (it \
             may pass with the bug elsewhere)",
        ));
    }
    if f2p
        .iter()
        .any(|t| toolchain.harness_readable(t) && !in_code(t))
    {
        return None;
    }
    Some(if f2p.iter().any(|t| in_code(t)) {
        (
            crate::verdict::Reason::DoctestOnly,
            "every FAIL_TO_PASS test is a doctest in the code the agent edits (editing the \
             docstring would pass it)",
        )
    } else {
        (
            crate::verdict::Reason::UnreadableTestIds,
            "every FAIL_TO_PASS id has whitespace SWE-bench's log parsers cut",
        )
    })
}

/// Keep only the test ids SWE-bench's log parsers read back
/// ([`toolchain::Toolchain::harness_readable`]):
/// unreadable PASS_TO_PASS ids are dropped; unreadable FAIL_TO_PASS ids are dropped while
/// another FAIL_TO_PASS test remains, else the candidate is rejected
/// (`unreadable-test-ids`). Returns the counts dropped.
pub(super) fn keep_readable_ids(
    outcome: &mut Outcome,
    toolchain: &dyn toolchain::Toolchain,
) -> task::DroppedTestIds {
    let mut dropped = task::DroppedTestIds::default();
    let before = outcome.pass_to_pass.len();
    outcome
        .pass_to_pass
        .retain(|id| toolchain.harness_readable(id));
    dropped.pass_to_pass = before - outcome.pass_to_pass.len();
    let readable: Vec<String> = outcome
        .fail_to_pass
        .iter()
        .filter(|id| toolchain.harness_readable(id))
        .cloned()
        .collect();
    if readable.is_empty() && !outcome.fail_to_pass.is_empty() {
        outcome.verdict = Verdict::rejected(
            crate::verdict::Reason::UnreadableTestIds,
            format!(
                "every FAIL_TO_PASS id has whitespace SWE-bench's log parsers cut: {}",
                outcome.fail_to_pass.join(", ")
            ),
        );
        return dropped;
    }
    dropped.fail_to_pass = outcome.fail_to_pass.len() - readable.len();
    outcome.fail_to_pass = readable;
    dropped
}

/// The last part of a qualified name (`Ledger.ship` → `ship`).
pub(super) fn short_name(function: &str) -> &str {
    function.rsplit(['.', '#']).next().unwrap_or(function)
}

pub(super) fn names_function(text: &str, function: &str) -> bool {
    let name = short_name(function);
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
}

/// Whether a failing test calls the mutated function directly: the synthesized test calls it
/// (not a public caller), or a failing test's file calls it by name.
pub(super) fn direct_call(repo: &Repo, cand: &Candidate, outcome: &Outcome) -> bool {
    if let Some(s) = outcome
        .synthesis
        .as_ref()
        .filter(|_| !outcome.test_patch.is_empty())
    {
        return s.cases.iter().any(|d| d.call.qualname == cand.function);
    }
    let name = short_name(&cand.function);
    let needle = format!("{name}(");
    let Ok(toolchain) = toolchain::for_profile(&repo.profile) else {
        return false;
    };
    outcome.fail_to_pass.iter().any(|id| {
        let file = toolchain.test_file(id, &repo.profile.test_files);
        file.and_then(|f| std::fs::read_to_string(repo.checkout.join(f)).ok())
            .is_some_and(|text| text.contains(&needle))
    })
}
