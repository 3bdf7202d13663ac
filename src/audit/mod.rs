//! Audit: independent re-verification of tasks from their records alone (tasks.jsonl), with
//! no pipeline state (no state.db, no candidates.jsonl), in fresh containers or worktrees.
//!
//! For each task (or a seeded sample of them), in order:
//! 1. schema: the line is a [`Task`]; the required fields are non-empty; the id is unique;
//! 2. environment: a fresh container from the task's `image_name` (Docker: the task image,
//!    whose tree is the start state `base_commit`), or, without Docker or without an image,
//!    the local sandbox on a checkout of the seed at `metadata.start_state.clean_commit`,
//!    imported afresh from `metadata.environment.source`, where the start state is rebuilt
//!    from the record (`bug_patch`, the removed files) and must come out as `base_commit`;
//! 3. safety (in the task image, as the agent's user; [`safety`]): no way back to the fix or
//!    the hidden tests — no parent, no other ref, no clean blob, no gold line, hidden test or
//!    clean bytecode anywhere in the file system, and `git checkout -- . && git stash && git
//!    reset --hard` changes nothing;
//! 4. buggy code (a no-op patch): on the start state plus `test_patch`, every FAIL_TO_PASS
//!    test fails (FAILED or ERROR) and every PASS_TO_PASS test passes;
//! 5. fixed code: from the start state again, the gold `patch` and then `test_patch` apply
//!    (SWE-bench's order) and every FAIL_TO_PASS and PASS_TO_PASS test passes;
//! 6. the issue text has no leak ([`crate::leak::find_leak`]).
//!
//! Only the listed tests (FAIL_TO_PASS ∪ PASS_TO_PASS) run, and each check runs once: the
//! pipeline already repeated every check to rule out flakiness; the audit asks whether the
//! record still holds. A task is `ok`, or `invalid` with the [`Invalid`] reason of its first
//! problem (every problem found is listed). An environment that fails for one task is
//! recorded as that task's problem and the audit goes on.

mod reuse;
pub mod safety;

pub use reuse::FixedRuns;
use reuse::{fixed_run_key, worktree_tree};

use crate::leak;
pub use crate::replay::{import_for_record, rebuild_start_state, Environments, Prepared};
use crate::run::{Run, RunEnd, TestStatus};
use crate::runner::{RunBudget, TestRunner};
use crate::sandbox::SandboxChoice;
use crate::sandbox::{Limits, SandboxError, SandboxKind, Worker};
use crate::task::Task;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many test ids a detail names before it says "and N more".
const DETAIL_IDS: usize = 5;

/// What `audit` needs to know.
#[derive(Clone, Debug)]
pub struct AuditConfig {
    /// The tasks.jsonl to check.
    pub tasks: PathBuf,
    /// Check a deterministic sample of this many tasks (all when `None`).
    pub sample: Option<usize>,
    /// The sampling seed.
    pub seed: u64,
    pub sandbox: SandboxChoice,
    /// Mirrors, checkouts and virtualenvs (the same cache `run` uses; never its state).
    pub cache: PathBuf,
    pub limits: Limits,
    pub progress: bool,
    /// Run the fixed check of every task, even when an earlier task of this audit ran the
    /// same tests on a byte-identical tree in the same environment (`--recheck-identical`).
    pub recheck_identical: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// (`error` is in the message and deliberately not a `source`, so that a chain of causes
    /// does not print it twice.)
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
    #[error("the docker sandbox cannot be used: {0}")]
    DockerUnavailable(String),
}

/// Why a task is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Invalid {
    /// The record does not parse, lacks a required field, or repeats an instance id.
    Schema,
    /// `test_patch` or `bug_patch` does not apply to `base_commit`.
    PatchDoesNotApply,
    /// The gold `patch` does not apply on top of the buggy code.
    GoldPatchDoesNotApply,
    /// A FAIL_TO_PASS test does not fail on the buggy code.
    FailToPassPassesOnBuggy,
    /// A PASS_TO_PASS test does not pass on the buggy code.
    PassToPassFailsOnBuggy,
    /// A FAIL_TO_PASS test does not pass with the gold fix.
    FailToPassFailsWithFix,
    /// A PASS_TO_PASS test does not pass with the gold fix.
    PassToPassFailsWithFix,
    /// The issue text gives the fix, the location or the hidden tests away.
    IssueLeak,
    /// No environment could be made for the task (image absent, import failed, wrong commit,
    /// the test command failed to start).
    Environment,
    /// The start state rebuilt from the record (clean commit + `bug_patch` − removed files)
    /// is not `base_commit`.
    StartStateMismatch,
    /// The start state has a parent commit, or HEAD is not `base_commit`.
    BaseHasParent,
    /// The record has no start state of its own (`base_commit` is the clean commit: a
    /// generated combination, or a record made before start states): its image holds the
    /// fix in history, and the safety checks cannot pass.
    NoStartState,
    /// Refs besides the branch, a reflog, a stash, ORIG_HEAD or FETCH_HEAD are present.
    ExtraGitState,
    /// A clean blob of a changed file (or a hidden test's blob) is in the object database.
    CleanObjectReachable,
    /// `git checkout -- . && git stash && git reset --hard` changed the tree.
    GitRestoreChangesTree,
    /// A file of the environment holds the fixed code.
    GoldCodePresent,
    /// A file of the environment holds a hidden test.
    HiddenTestPresent,
    /// Bytecode or a class compiled from a changed file is present.
    CleanBuildPresent,
}

impl Invalid {
    pub fn as_str(self) -> &'static str {
        match self {
            Invalid::Schema => "schema",
            Invalid::PatchDoesNotApply => "patch-does-not-apply",
            Invalid::GoldPatchDoesNotApply => "gold-patch-does-not-apply",
            Invalid::FailToPassPassesOnBuggy => "fail-to-pass-passes-on-buggy",
            Invalid::PassToPassFailsOnBuggy => "pass-to-pass-fails-on-buggy",
            Invalid::FailToPassFailsWithFix => "fail-to-pass-fails-with-fix",
            Invalid::PassToPassFailsWithFix => "pass-to-pass-fails-with-fix",
            Invalid::IssueLeak => "issue-leak",
            Invalid::Environment => "environment",
            Invalid::StartStateMismatch => "start-state-mismatch",
            Invalid::BaseHasParent => "base-has-parent",
            Invalid::NoStartState => "no-start-state",
            Invalid::ExtraGitState => "extra-git-state",
            Invalid::CleanObjectReachable => "clean-object-reachable",
            Invalid::GitRestoreChangesTree => "git-restore-changes-tree",
            Invalid::GoldCodePresent => "gold-code-present",
            Invalid::HiddenTestPresent => "hidden-test-present",
            Invalid::CleanBuildPresent => "clean-build-present",
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing wrong with a task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub reason: Invalid,
    pub detail: String,
}

impl Problem {
    /// A problem; the detail is made one line (a patch error spans several).
    fn new(reason: Invalid, detail: impl Into<String>) -> Problem {
        let detail: String = detail.into();
        let detail = detail
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Problem { reason, detail }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Invalid,
}

/// The audit of one task.
#[derive(Clone, Debug, Serialize)]
pub struct TaskAudit {
    /// The record's instance id (`line N` when the line does not parse).
    pub instance_id: String,
    /// 1-based line of tasks.jsonl.
    pub line: usize,
    pub verdict: Status,
    /// The first problem's reason (`None` when ok).
    pub reason: Option<Invalid>,
    /// The first problem's detail: the tests at fault, the leak's evidence…
    pub detail: String,
    /// Every problem found, the first one included.
    pub problems: Vec<Problem>,
    /// `docker` or `local`; `None` when no test ran.
    pub sandbox: Option<String>,
    /// The id of the tree the fixed check ran on (after the gold patch and `test_patch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_tree: Option<String>,
    /// The earlier task whose fixed-code run is this task's fixed check: the same
    /// environment, the same listed tests, the same `fixed_tree` ([`FixedRuns`]). `None` when
    /// the check ran for this task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_run_of: Option<String>,
    pub seconds: f64,
}

impl TaskAudit {
    fn new(instance_id: String, line: usize, problems: Vec<Problem>) -> TaskAudit {
        let first = problems.first();
        TaskAudit {
            instance_id,
            line,
            verdict: if first.is_some() {
                Status::Invalid
            } else {
                Status::Ok
            },
            reason: first.map(|p| p.reason),
            detail: first.map(|p| p.detail.clone()).unwrap_or_default(),
            problems,
            sandbox: None,
            fixed_tree: None,
            fixed_run_of: None,
            seconds: 0.0,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.verdict == Status::Ok
    }
}

/// What the audit found, in all.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AuditSummary {
    pub file: PathBuf,
    /// Records in the file.
    pub tasks: usize,
    /// Records checked (all, or the sample).
    pub checked: usize,
    pub ok: usize,
    pub invalid: usize,
    /// Invalid tasks by reason.
    pub reasons: BTreeMap<String, usize>,
    pub sample: Option<usize>,
    pub seed: u64,
    /// The sandboxes the tests ran in.
    pub sandboxes: Vec<String>,
    pub seconds: f64,
}

/// The whole report: one entry per checked task, and the summary.
#[derive(Clone, Debug, Serialize)]
pub struct AuditReport {
    pub summary: AuditSummary,
    pub tasks: Vec<TaskAudit>,
}

/// The exit status of `swe-forge audit` when a checked task is invalid.
pub const EXIT_INVALID: i32 = 4;

impl AuditReport {
    /// 0 when every checked task is ok, [`EXIT_INVALID`] otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.summary.invalid > 0 {
            EXIT_INVALID
        } else {
            0
        }
    }

    /// Write the report as one JSON document (`{"summary": …, "tasks": […]}`).
    pub fn write_json(&self, path: &Path) -> Result<(), AuditError> {
        let text = serde_json::to_string_pretty(self).expect("the report serializes");
        std::fs::write(path, text + "\n").map_err(|error| AuditError::Io {
            context: format!("writing {}", path.display()),
            error,
        })
    }
}

/// A line of `audit --json`: a task's audit or, last, the summary, told apart by `type`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum JsonLine<'a> {
    Task(&'a TaskAudit),
    Summary(&'a AuditSummary),
}

impl JsonLine<'_> {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an audit line serializes")
    }
}

/// A task's audit as a line of text: `ok       id` or `invalid  id  reason: detail`.
pub fn text_line(a: &TaskAudit) -> String {
    match a.reason {
        None => format!("ok       {}", a.instance_id),
        Some(r) => format!("invalid  {}  {r}: {}", a.instance_id, a.detail),
    }
}

/// The summary as a line of text.
pub fn summary_line(s: &AuditSummary) -> String {
    let reasons: Vec<String> = s.reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
    format!(
        "audit: {} of {} tasks checked: {} ok, {} invalid{} ({:.1}s, sandbox {})",
        s.checked,
        s.tasks,
        s.ok,
        s.invalid,
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        },
        s.seconds,
        if s.sandboxes.is_empty() {
            "-".to_string()
        } else {
            s.sandboxes.join("+")
        }
    )
}

/// One line of tasks.jsonl.
struct Record {
    line: usize,
    parsed: Result<Task, String>,
    /// The instance id, or `line N`.
    key: String,
}

/// Audit the tasks of `cfg.tasks`; `on_task` sees each task's audit as it is decided.
pub fn audit(
    cfg: &AuditConfig,
    mut on_task: impl FnMut(&TaskAudit),
) -> Result<AuditReport, AuditError> {
    let started = Instant::now();
    let text = std::fs::read_to_string(&cfg.tasks).map_err(|error| AuditError::Io {
        context: format!("reading {}", cfg.tasks.display()),
        error,
    })?;
    let records = parse_records(&text);
    let duplicates = duplicate_lines(&records);
    let keys: Vec<String> = records.iter().map(|r| r.key.clone()).collect();
    let chosen = match cfg.sample {
        Some(n) => sample(&keys, n, cfg.seed),
        None => (0..records.len()).collect(),
    };
    if records.is_empty() {
        tracing::warn!(file = %cfg.tasks.display(), "no tasks to audit");
    }
    let mut envs = Environments::open(cfg.sandbox, &cfg.cache, &cfg.limits, &cfg.tasks)
        .map_err(|e| AuditError::DockerUnavailable(e.to_string()))?;
    let pb = progress_bar(cfg.progress, chosen.len());
    let mut out = Vec::with_capacity(chosen.len());
    let mut fixed_runs = (!cfg.recheck_identical).then(FixedRuns::default);
    for (ordinal, &i) in chosen.iter().enumerate() {
        let r = &records[i];
        pb.set_message(r.key.clone());
        let t = Instant::now();
        let mut audit = match &r.parsed {
            Err(e) => TaskAudit::new(
                r.key.clone(),
                r.line,
                vec![Problem::new(Invalid::Schema, e.clone())],
            ),
            Ok(task) => {
                let mut problems = Vec::new();
                if let Some(d) = schema_problem(task) {
                    problems.push(Problem::new(Invalid::Schema, d));
                }
                if let Some(first) = duplicates.get(&i) {
                    problems.push(Problem::new(
                        Invalid::Schema,
                        format!(
                            "instance_id `{}` is already used on line {first}",
                            task.instance_id
                        ),
                    ));
                }
                let mut sandbox = None;
                let mut fixed = None;
                if problems.is_empty() {
                    let (kind, found) =
                        check_in_sandbox(&mut envs, task, ordinal + 1, fixed_runs.as_mut());
                    sandbox = kind;
                    problems.extend(found);
                    fixed = fixed_runs.as_mut().and_then(|m| m.last.take());
                }
                if let Some(l) = leak::find_leak(task) {
                    problems.push(Problem::new(Invalid::IssueLeak, l.to_string()));
                }
                let mut a = TaskAudit::new(task.instance_id.clone(), r.line, problems);
                a.sandbox = sandbox;
                if let Some((tree, of)) = fixed {
                    a.fixed_tree = Some(tree);
                    a.fixed_run_of = of;
                }
                a
            }
        };
        audit.seconds = t.elapsed().as_secs_f64();
        if audit.is_ok() {
            tracing::debug!(task = %audit.instance_id, seconds = audit.seconds, "ok");
        } else {
            tracing::warn!(
                task = %audit.instance_id,
                reason = %audit.reason.map_or("", Invalid::as_str),
                "invalid: {}",
                audit.detail
            );
        }
        pb.suspend(|| on_task(&audit));
        pb.inc(1);
        out.push(audit);
    }
    pb.finish_and_clear();
    let summary = summarize(cfg, records.len(), &out, started.elapsed().as_secs_f64());
    Ok(AuditReport {
        summary,
        tasks: out,
    })
}

fn progress_bar(show: bool, len: usize) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template(
            "audit [{bar:30}] {pos}/{len} tasks · {msg} · {elapsed_precise} (eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

fn summarize(cfg: &AuditConfig, total: usize, audits: &[TaskAudit], seconds: f64) -> AuditSummary {
    let mut s = AuditSummary {
        file: cfg.tasks.clone(),
        tasks: total,
        checked: audits.len(),
        sample: cfg.sample,
        seed: cfg.seed,
        seconds,
        ..Default::default()
    };
    let mut sandboxes = BTreeSet::new();
    for a in audits {
        match a.reason {
            None => s.ok += 1,
            Some(r) => {
                s.invalid += 1;
                *s.reasons.entry(r.to_string()).or_default() += 1;
            }
        }
        if let Some(k) = &a.sandbox {
            sandboxes.insert(k.clone());
        }
    }
    s.sandboxes = sandboxes.into_iter().collect();
    s
}

fn parse_records(text: &str) -> Vec<Record> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let parsed =
                serde_json::from_str::<Task>(l).map_err(|e| format!("not a task record: {e}"));
            let key = match &parsed {
                Ok(t) if !t.instance_id.is_empty() => t.instance_id.clone(),
                _ => format!("line {}", i + 1),
            };
            Record {
                line: i + 1,
                parsed,
                key,
            }
        })
        .collect()
}

/// Records (by index) whose instance id an earlier record already has → that record's line.
fn duplicate_lines(records: &[Record]) -> HashMap<usize, usize> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut dups = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        let Ok(t) = &r.parsed else { continue };
        if t.instance_id.is_empty() {
            continue;
        }
        match first.get(t.instance_id.as_str()) {
            Some(&line) => {
                dups.insert(i, line);
            }
            None => {
                first.insert(&t.instance_id, r.line);
            }
        }
    }
    dups
}

/// A deterministic sample of `n` of the items named by `keys`: the `n` whose keys hash
/// smallest under `seed`, in file order. The same seed gives the same sample, and tasks
/// appended to the file only displace sampled ones whose hash is larger.
pub fn sample(keys: &[String], n: usize, seed: u64) -> Vec<usize> {
    let mut ranked: Vec<([u8; 32], usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut h = blake3::Hasher::new();
            h.update(&seed.to_le_bytes());
            h.update(k.as_bytes());
            (*h.finalize().as_bytes(), i)
        })
        .collect();
    ranked.sort();
    let mut chosen: Vec<usize> = ranked.into_iter().take(n).map(|(_, i)| i).collect();
    chosen.sort_unstable();
    chosen
}

/// The required fields that are empty, as one detail (`None` when all are there).
pub fn schema_problem(task: &Task) -> Option<String> {
    let mut empty = Vec::new();
    for (name, value) in [
        ("instance_id", &task.instance_id),
        ("repo", &task.repo),
        ("base_commit", &task.base_commit),
        ("patch", &task.patch),
        ("bug_patch", &task.bug_patch),
        ("problem_statement", &task.problem_statement),
    ] {
        if value.trim().is_empty() {
            empty.push(name);
        }
    }
    if task.fail_to_pass.is_empty() {
        empty.push("FAIL_TO_PASS");
    }
    let blank_ids = task
        .fail_to_pass
        .iter()
        .chain(&task.pass_to_pass)
        .any(|t| t.trim().is_empty());
    match (empty.is_empty(), blank_ids) {
        (true, false) => None,
        (true, true) => Some("a test id is empty".to_string()),
        (false, _) => Some(format!("empty: {}", empty.join(", "))),
    }
}

/// The tests a check runs: FAIL_TO_PASS, then PASS_TO_PASS, without repeats.
pub fn listed_tests(task: &Task) -> Vec<String> {
    task.listed_tests()
}

/// A run that reported none of the listed tests and says why (the build failed: Maven could
/// not resolve a plugin, the code did not compile) is the environment's problem, not a verdict
/// on the tests.
fn ran_nothing(run: &Run, task: &Task) -> Option<Problem> {
    let anomaly = run.anomaly.as_deref()?;
    let listed = task.listed_tests();
    let none_ran =
        !listed.is_empty() && listed.iter().all(|t| run.status(t) == TestStatus::Missing);
    none_ran.then(|| {
        Problem::new(
            Invalid::Environment,
            format!(
                "the grading command ran none of the {} listed tests: {anomaly}",
                listed.len()
            ),
        )
    })
}

/// The problem of a run on the buggy code, if any: every FAIL_TO_PASS test must fail and every
/// PASS_TO_PASS test pass.
pub fn judge_buggy(run: &Run, task: &Task) -> Option<Problem> {
    if let Some(p) = ran_nothing(run, task) {
        return Some(p);
    }
    let not_failing: Vec<String> = task
        .fail_to_pass
        .iter()
        .filter(|t| !run.status(t).is_failure())
        .map(|t| format!("{t} ({})", run.status(t)))
        .collect();
    if !not_failing.is_empty() {
        return Some(Problem::new(
            Invalid::FailToPassPassesOnBuggy,
            tests_detail(
                &not_failing,
                task.fail_to_pass.len(),
                "FAIL_TO_PASS tests do not fail on the buggy code",
                run,
            ),
        ));
    }
    p2p_problem(run, task, Invalid::PassToPassFailsOnBuggy, "the buggy code")
}

/// The problem of a run with the gold fix, if any: every listed test must pass.
pub fn judge_fixed(run: &Run, task: &Task) -> Option<Problem> {
    if let Some(p) = ran_nothing(run, task) {
        return Some(p);
    }
    let not_passing: Vec<String> = task
        .fail_to_pass
        .iter()
        .filter(|t| run.status(t) != TestStatus::Passed)
        .map(|t| format!("{t} ({})", run.status(t)))
        .collect();
    if !not_passing.is_empty() {
        return Some(Problem::new(
            Invalid::FailToPassFailsWithFix,
            tests_detail(
                &not_passing,
                task.fail_to_pass.len(),
                "FAIL_TO_PASS tests do not pass with the gold fix",
                run,
            ),
        ));
    }
    p2p_problem(run, task, Invalid::PassToPassFailsWithFix, "the gold fix")
}

fn p2p_problem(run: &Run, task: &Task, reason: Invalid, with: &str) -> Option<Problem> {
    let not_passing: Vec<String> = task
        .pass_to_pass
        .iter()
        .filter(|t| run.status(t) != TestStatus::Passed)
        .map(|t| format!("{t} ({})", run.status(t)))
        .collect();
    (!not_passing.is_empty()).then(|| {
        Problem::new(
            reason,
            tests_detail(
                &not_passing,
                task.pass_to_pass.len(),
                &format!(
                    "PASS_TO_PASS tests do not pass {}",
                    if with == "the gold fix" {
                        "with the gold fix".to_string()
                    } else {
                        format!("on {with}")
                    }
                ),
                run,
            ),
        )
    })
}

/// `2 of 4 FAIL_TO_PASS tests …: a (PASSED), b (MISSING)` and how the run ended when it did
/// not end normally.
fn tests_detail(ids: &[String], of: usize, what: &str, run: &Run) -> String {
    let mut s = format!("{} of {of} {what}: ", ids.len());
    s.push_str(&ids[..ids.len().min(DETAIL_IDS)].join(", "));
    if ids.len() > DETAIL_IDS {
        s.push_str(&format!(" and {} more", ids.len() - DETAIL_IDS));
    }
    let end = match run.end {
        RunEnd::TimedOut => Some("the run timed out".to_string()),
        RunEnd::Signaled => Some(format!(
            "the run was killed by signal {}",
            run.signal.unwrap_or(0)
        )),
        RunEnd::Exited => None,
    };
    if let Some(e) = end.or_else(|| run.anomaly.clone()) {
        s.push_str(&format!(" [{e}]"));
    }
    s
}

/// The limits of one audit run: ten times the longest run the record's evidence shows, plus
/// a minute, at most an hour.
pub fn budget(task: &Task) -> RunBudget {
    crate::timeouts::replay(longest_recorded_run(task))
}

/// Seconds of the longest run in the record's verification evidence (0 when none).
pub fn longest_recorded_run(task: &Task) -> f64 {
    let ev = &task.metadata.verification;
    ev.runs
        .iter()
        .map(|r| r.duration_s)
        .chain(ev.clean_runs.iter().map(|r| r.duration_s))
        .fold(0.0_f64, f64::max)
}

/// Run the buggy and the fixed checks of one task; returns the sandbox kind (when one was
/// made) and the problems.
fn check_in_sandbox(
    envs: &mut Environments,
    task: &Task,
    index: usize,
    memo: Option<&mut FixedRuns>,
) -> (Option<String>, Vec<Problem>) {
    let (env, kind) = match envs.for_task(task) {
        Ok(e) => e,
        Err(e) => return (None, vec![Problem::new(Invalid::Environment, e)]),
    };
    let runner = match envs.runner(task, kind) {
        Ok(r) => r,
        Err(e) => return (None, vec![Problem::new(Invalid::Environment, e)]),
    };
    let problems = match env.worker(index) {
        Ok(mut worker) => {
            // A container of the task's own image is the agent's start environment.
            let start_env = kind == SandboxKind::Docker && !envs.prefer_repo_image;
            let memo = memo.map(|m| (m, envs.key_for(task)));
            check_task_in(worker.as_mut(), runner.as_ref(), task, start_env, memo)
        }
        Err(e) => vec![Problem::new(Invalid::Environment, format!("worker: {e}"))],
    };
    (Some(kind.to_string()), problems)
}

/// The runtime checks on one worker (not a task's start environment: no safety checks).
pub fn check_task(worker: &mut dyn Worker, runner: &dyn TestRunner, task: &Task) -> Vec<Problem> {
    check_task_in(worker, runner, task, false, None)
}

/// The runtime checks on one worker; `start_env`: the worker is a container of the task's own
/// image, whose tree must be the start state, and the safety checks run there. `memo`: the
/// audit's fixed-code runs and the key of this worker's environment ([`FixedRuns`]).
pub fn check_task_in(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    task: &Task,
    start_env: bool,
    memo: Option<(&mut FixedRuns, String)>,
) -> Vec<Problem> {
    let env_problem = |what: &str, e: &dyn fmt::Display| {
        vec![Problem::new(Invalid::Environment, format!("{what}: {e}"))]
    };
    if let Err(e) = worker.reset() {
        return env_problem("reset", &e);
    }
    let head = match head_of(worker) {
        Ok(h) => h,
        Err(p) => return vec![p],
    };
    let tests = listed_tests(task);
    let budget = budget(task);
    let mut problems = Vec::new();

    // Safety, in the start environment itself (a task image), before anything is applied.
    let has_start = task.metadata.start_state.is_some() && task.base_commit != task.clean_commit();
    if start_env && has_start && head != task.base_commit {
        problems.push(Problem::new(
            Invalid::BaseHasParent,
            format!(
                "the task image's tree is at `{head}`, not at the start state {} (an agent would start from there)",
                task.base_commit
            ),
        ));
    }
    if start_env && !has_start {
        problems.push(Problem::new(
            Invalid::NoStartState,
            format!(
                "the safety checks cannot run: base_commit {} is the clean commit, with the fix \
                 in its history (a generated combination, or a record made before start states); \
                 `serve` gives such a task a parentless start state when a session starts",
                task.base_commit
            ),
        ));
    }
    if start_env && has_start && head == task.base_commit {
        problems.extend(safety::check(worker, task));
        if problems.iter().any(|p| p.reason == Invalid::Environment) {
            return problems;
        }
    }

    // Buggy code: the start state with a no-op patch, plus test_patch.
    if let Err(p) = enter_start_state(worker, task) {
        problems.push(p);
        return problems;
    }
    if let Some(p) = provenance(worker, task, &head) {
        problems.push(p);
        return problems;
    }
    if let Err(p) = apply_named(worker, "test_patch", &task.test_patch) {
        problems.push(p);
        return problems;
    }
    match crate::grading::run(
        runner,
        worker,
        "audit-buggy",
        &task.grading(),
        &tests,
        budget,
    ) {
        Ok(run) => problems.extend(judge_buggy(&run, task)),
        Err(e) => {
            problems.extend(env_problem("running the tests on the buggy code", &e));
            return problems;
        }
    }

    // The start state + the gold fix, then test_patch (SWE-bench's order), from a clean tree.
    if let Err(e) = worker.reset() {
        problems.extend(env_problem("reset", &e));
        return problems;
    }
    if let Err(p) = enter_start_state(worker, task) {
        problems.push(p);
        return problems;
    }
    match worker.apply_patch(&task.patch) {
        Ok(()) => {}
        Err(SandboxError::Patch(e)) => {
            problems.push(Problem::new(Invalid::GoldPatchDoesNotApply, e));
            return problems;
        }
        Err(e) => {
            problems.extend(env_problem("applying the gold patch", &e));
            return problems;
        }
    }
    if let Err(p) = apply_named(worker, "test_patch", &task.test_patch) {
        problems.push(p);
        return problems;
    }
    // The same experiment another task of this audit ran: its run is this check's evidence.
    let key = match memo {
        Some((runs, env)) => match worktree_tree(worker) {
            Some(tree) => {
                let key = fixed_run_key(&env, task, &tree, &tests);
                if let Some((of, run)) = runs.runs.get(&key) {
                    runs.last = Some((tree, Some(of.clone())));
                    problems.extend(judge_fixed(run, task));
                    return problems;
                }
                runs.last = Some((tree.clone(), None));
                Some((runs, key))
            }
            None => None,
        },
        None => None,
    };
    match crate::grading::run(
        runner,
        worker,
        "audit-fixed",
        &task.grading(),
        &tests,
        budget,
    ) {
        Ok(run) => {
            problems.extend(judge_fixed(&run, task));
            // Only a run that ended normally stands for another task's check.
            if let Some((runs, key)) = key {
                if run.end == RunEnd::Exited {
                    runs.runs.insert(key, (task.instance_id.clone(), run));
                }
            }
        }
        Err(e) => problems.extend(env_problem("running the tests with the gold fix", &e)),
    }
    problems
}

fn head_of(worker: &mut dyn Worker) -> Result<String, Problem> {
    match worker.exec("git rev-parse HEAD", Duration::from_secs(60)) {
        Ok(out) => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Err(e) => Err(Problem::new(
            Invalid::Environment,
            format!("git rev-parse HEAD: {e}"),
        )),
    }
}

/// Whether the start state entered on this worker is the record's `base_commit`. From the
/// clean commit (HEAD `head`), the tree after the start patch, committed as start states are
/// (fixed author, date and message, no parent), must give `base_commit`. In the task image
/// (HEAD is `base_commit`), `bug_patch` must lead to it: it applies in reverse.
fn provenance(worker: &mut dyn Worker, task: &Task, head: &str) -> Option<Problem> {
    let info = task.metadata.start_state.as_ref()?;
    if task.base_commit == info.clean_commit {
        // A combination made for training: no start state commit of its own.
        return None;
    }
    let script = if head == info.clean_commit {
        format!(
            "set -e; git add -A >/dev/null; t=$(git write-tree); git reset -q >/dev/null; \
             GIT_AUTHOR_NAME={n} GIT_AUTHOR_EMAIL={e} GIT_AUTHOR_DATE='{d} +0000' \
             GIT_COMMITTER_NAME={n} GIT_COMMITTER_EMAIL={e} GIT_COMMITTER_DATE='{d} +0000' \
             git commit-tree \"$t\" -m {m}",
            n = crate::sandbox::shell_quote(crate::start_state::AUTHOR_NAME),
            e = crate::sandbox::shell_quote(crate::start_state::AUTHOR_EMAIL),
            d = crate::start_state::AUTHOR_TIME,
            m = crate::sandbox::shell_quote(crate::start_state::MESSAGE.trim_end()),
        )
    } else {
        // Reverse bug_patch on the start state: it must apply, and give each file the clean
        // blob its `index` line names; then the start state is checked out again.
        let q = crate::sandbox::shell_quote;
        let mut checks = String::new();
        let mut paths = Vec::new();
        for (path, section) in crate::start_state::patch_sections(&task.bug_patch) {
            if let Some(old) = crate::start_state::old_blob_ids(&section).first() {
                checks.push_str(&format!(
                    "case $(git hash-object -- {p}) in {old}*) ;; *) echo \"{p}: not the clean blob {old}\" >&2; bad=1;; esac\n",
                    p = q(&path)
                ));
            }
            paths.push(q(&path));
        }
        format!(
            "P={s}/bug.diff\ncat > \"$P\" <<'SWE_FORGE_EOF'\n{patch}SWE_FORGE_EOF\nbad=\n\
             git apply -R \"$P\" || exit 3\n{checks}git checkout -q HEAD -- {paths}\n\
             [ -z \"$bad\" ] && echo {base}",
            s = worker.scratch(),
            patch = task.bug_patch,
            paths = paths.join(" "),
            base = task.base_commit,
        )
    };
    let out = match worker.exec(&script, Duration::from_secs(120)) {
        Ok(o) => o,
        Err(e) => {
            return Some(Problem::new(
                Invalid::Environment,
                format!("checking the start state: {e}"),
            ))
        }
    };
    let got = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.exit_code == Some(0) && got == task.base_commit {
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Some(if head == info.clean_commit {
        Problem::new(
            Invalid::StartStateMismatch,
            format!(
                "the clean commit with the start patch gives {}, not base_commit {}{}",
                if got.is_empty() { "nothing" } else { &got },
                task.base_commit,
                if err.is_empty() {
                    String::new()
                } else {
                    format!(" ({err})")
                }
            ),
        )
    } else {
        Problem::new(
            Invalid::PatchDoesNotApply,
            format!("bug_patch does not lead from the clean files to the start state: {err}"),
        )
    })
}

/// From a reset worker, the task's start state: nothing to do in the task's own image (HEAD
/// is `base_commit`); on a checkout of the clean commit (the local sandbox, the repository
/// image) the start patch (`bug_patch` and the removal of the hidden test files). Records
/// written before start states have the clean commit as `base_commit` and get `bug_patch`.
pub fn enter_start_state(worker: &mut dyn Worker, task: &Task) -> Result<(), Problem> {
    let head = head_of(worker)?;
    if task.metadata.start_state.is_some() {
        if head == task.clean_commit() {
            return apply_named(worker, "bug_patch", &task.start_patch());
        }
        if head == task.base_commit {
            return Ok(());
        }
        return Err(Problem::new(
            Invalid::Environment,
            format!(
                "the tree is at `{head}`, neither the task's base_commit {} nor its clean commit {}",
                task.base_commit,
                task.clean_commit()
            ),
        ));
    }
    if head != task.base_commit {
        return Err(Problem::new(
            Invalid::Environment,
            format!(
                "the tree is at `{head}`, not at the task's base_commit {}",
                task.base_commit
            ),
        ));
    }
    apply_named(worker, "bug_patch", &task.bug_patch)
}

fn apply_named(worker: &mut dyn Worker, name: &str, patch: &str) -> Result<(), Problem> {
    if patch.trim().is_empty() {
        return Ok(());
    }

    match worker.apply_patch(patch) {
        Ok(()) => Ok(()),
        Err(SandboxError::Patch(e)) => Err(Problem::new(
            Invalid::PatchDoesNotApply,
            format!("{name}: {e}"),
        )),
        Err(e) => Err(Problem::new(
            Invalid::Environment,
            format!("applying {name}: {e}"),
        )),
    }
}

/// The buggy code as graded: the start state ([`enter_start_state`]) plus `test_patch`.
pub fn apply_buggy(worker: &mut dyn Worker, task: &Task) -> Result<(), Problem> {
    enter_start_state(worker, task)?;
    apply_named(worker, "test_patch", &task.test_patch)
}

#[cfg(test)]
pub(crate) mod tests;
