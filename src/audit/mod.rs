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

pub mod safety;

use crate::leak;
use crate::repo::{self, Repo};
use crate::run::{Run, RunEnd, TestStatus};
use crate::runner::pytest::Pytest;
use crate::runner::{RunBudget, TestRunner};
use crate::sandbox::docker::DockerSandbox;
use crate::sandbox::local::LocalSandbox;
use crate::sandbox::SandboxChoice;
use crate::sandbox::{Environment, Limits, Sandbox, SandboxError, SandboxKind, Worker};
use crate::seed::{Seed, Source};
use crate::task::Task;
use crate::toolchain::python_pytest::PythonPytest;
use crate::toolchain::{RunnerSpec, ToolchainId};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    let mut envs = Environments::new(cfg)?;
    let pb = progress_bar(cfg.progress, chosen.len());
    let mut out = Vec::with_capacity(chosen.len());
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
                if problems.is_empty() {
                    let (kind, found) = check_in_sandbox(&mut envs, task, ordinal + 1);
                    sandbox = kind;
                    problems.extend(found);
                }
                if let Some(l) = leak::find_leak(task) {
                    problems.push(Problem::new(Invalid::IssueLeak, l.to_string()));
                }
                let mut a = TaskAudit::new(task.instance_id.clone(), r.line, problems);
                a.sandbox = sandbox;
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
    let mut seen = BTreeSet::new();
    task.fail_to_pass
        .iter()
        .chain(&task.pass_to_pass)
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

/// The problem of a run on the buggy code, if any: every FAIL_TO_PASS test must fail and every
/// PASS_TO_PASS test pass.
pub fn judge_buggy(run: &Run, task: &Task) -> Option<Problem> {
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
    let longest = longest_recorded_run(task);
    RunBudget::wall(Duration::from_secs_f64((longest * 10.0 + 60.0).min(3600.0)))
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

/// A prepared environment and its sandbox kind, or why none could be made.
pub type Prepared = Result<(Arc<dyn Environment>, SandboxKind), String>;

/// Prepared environments, one per image or per (seed, commit, install, python path).
pub struct Environments {
    cfg: AuditConfig,
    docker: Option<DockerSandbox>,
    local: LocalSandbox,
    prepared: HashMap<String, Prepared>,
    /// Use the repository image (`metadata.start_state.repo_image`, where the start state is
    /// entered with the start patch) rather than each task's own image: one container pool
    /// per seed, for training's many gradings. The audit uses the task images.
    pub prefer_repo_image: bool,
}

impl Environments {
    /// The sandboxes `cfg` asks for (its `sandbox`, `cache` and `limits`; the rest is unused).
    pub fn new(cfg: &AuditConfig) -> Result<Environments, AuditError> {
        let opened = crate::sandbox::choose::open(cfg.sandbox, &cfg.cache, &cfg.limits, None)
            .map_err(|e| AuditError::DockerUnavailable(e.to_string()))?;
        Ok(Environments {
            cfg: cfg.clone(),
            docker: opened.docker,
            local: opened.local,
            prepared: HashMap::new(),
            prefer_repo_image: false,
        })
    }

    /// The environment for a task and the sandbox kind (cached per image or checkout).
    pub fn for_task(&mut self, task: &Task) -> Prepared {
        let repo_image = task
            .metadata
            .start_state
            .as_ref()
            .and_then(|s| s.repo_image.as_deref())
            .filter(|_| self.prefer_repo_image);
        let image = repo_image
            .or(task.image_name.as_deref())
            .filter(|_| self.docker.is_some());
        let env = &task.metadata.environment;
        let key = match image {
            Some(tag) => format!("image {tag}"),
            None => format!(
                "local {}\0{}\0{}\0{:?}\0{}",
                task.seed_name(),
                env.source,
                task.clean_commit(),
                env.install,
                env.python_path.join(":")
            ),
        };
        if let Some(found) = self.prepared.get(&key) {
            return found.clone();
        }
        let made = match (image, &self.docker) {
            (Some(tag), Some(docker)) => docker
                .environment_for_image(tag, task.seed_name())
                .map(|e| (e, SandboxKind::Docker))
                .map_err(|e| {
                    format!("{e} (`--sandbox local` audits from the seed's source instead)")
                }),
            _ => self.local_env(task).map(|e| (e, SandboxKind::Local)),
        };
        self.prepared.insert(key, made.clone());
        made
    }

    /// Import the seed afresh at `base_commit` and prepare the local sandbox on it.
    fn local_env(&self, task: &Task) -> Result<Arc<dyn Environment>, String> {
        let repo = import_at_base(task, &self.cfg.cache, &self.cfg.tasks)?;
        self.local.prepare(&repo).map_err(|e| e.to_string())
    }

    /// What a task's runner is made from: its record's test command and Python path, the
    /// files of its listed tests and of `test_patch`.
    pub fn runner_spec(&self, task: &Task, kind: SandboxKind) -> RunnerSpec {
        let toolchain = task.toolchain().toolchain();
        let mut files: Vec<String> = Vec::new();
        for t in listed_tests(task) {
            let file = toolchain
                .test_file(&t, &[])
                .unwrap_or_else(|| t.split("::").next().unwrap_or(&t).to_string());
            if !files.contains(&file) {
                files.push(file);
            }
        }
        for f in leak::patch_files(&task.test_patch) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        let env = &task.metadata.environment;
        RunnerSpec {
            sandbox: kind,
            cache: self.cfg.cache.clone(),
            log_dir: None,
            test_command: Some(env.test_command.clone()).filter(|c| !c.trim().is_empty()),
            test_files: files,
            source_roots: env.python_path.clone(),
            known_tests: Vec::new(),
        }
    }

    /// The test runner for a task in a sandbox of `kind` (fresh processes), rebuilt from the
    /// toolchain its record names.
    pub fn runner(&self, task: &Task, kind: SandboxKind) -> Box<dyn TestRunner> {
        task.toolchain()
            .toolchain()
            .runner(&self.runner_spec(task, kind))
    }

    /// pytest for a Python task (fresh processes); `None` for another toolchain.
    pub fn pytest(&self, task: &Task, kind: SandboxKind) -> Option<Pytest> {
        (task.toolchain() == ToolchainId::PythonPytest)
            .then(|| PythonPytest::pytest(&self.runner_spec(task, kind)))
    }
}

/// A seed made from the record (`repo`, `metadata.environment`, `base_commit`), imported with
/// the library's import code, with the record's install command and Python path.
fn seed_name(task: &Task) -> String {
    task.seed_name().to_string()
}

/// Import the seed of a record at its clean commit (with the record's install command and
/// Python path).
pub fn import_for_record(task: &Task, cache: &Path, tasks_file: &Path) -> Result<Repo, String> {
    import_at_base(task, cache, tasks_file)
}

fn import_at_base(task: &Task, cache: &Path, tasks_file: &Path) -> Result<Repo, String> {
    let env = &task.metadata.environment;
    let mut seed = Seed {
        name: seed_name(task),
        source: env.source.clone(),
        revision: None,
        repo: None,
        language: task.language,
        install: env.install.clone(),
        test: None,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    // A directory or an sdist has no revisions: its import commits what is there now, and
    // the commit check below tells whether that is still `base_commit`.
    let base_dir = crate::seed::record_base_dir(&env.source, tasks_file, cache);
    let source = seed
        .resolve_source(&base_dir)
        .map_err(|e| format!("import: {e}"))?;
    if matches!(source, Source::GitUrl(_) | Source::LocalGit(_)) {
        seed.revision = Some(task.clean_commit().to_string());
    }
    let lock =
        crate::lock::FileLock::exclusive(&cache.join("locks").join(format!("{}.lock", seed.name)))
            .map_err(|e| format!("locking the seed's cache entries: {e}"))?;
    let imported = repo::import(&seed, &base_dir, cache);
    drop(lock);
    let mut repo = imported.map_err(|e| format!("import: {e}"))?;
    if repo.commit != task.clean_commit() {
        return Err(format!(
            "importing {} gives commit {}, not the task's clean commit {} (the source changed)",
            env.source,
            repo.commit,
            task.clean_commit()
        ));
    }
    repo.profile.install_command = env.install.clone();
    repo.profile.python_path = env.python_path.clone();
    Ok(repo)
}

/// The start state of a record, rebuilt in the imported seed's mirror.
pub fn rebuild_start_state(
    task: &Task,
    info: &crate::start_state::StartStateInfo,
    repo: &Repo,
) -> Result<String, String> {
    let mirror = git2::Repository::open_bare(&repo.mirror)
        .or_else(|_| git2::Repository::open(&repo.mirror))
        .map_err(|e| format!("opening the mirror: {}", e.message()))?;
    // Only the restoring sections of test_patch belong to the start state.
    let st = crate::start_state::build(
        &mirror,
        &info.clean_commit,
        &task.bug_patch,
        &info.removed_files,
        info.hidden_tests,
        "",
    )
    .map_err(|e| e.to_string())?;
    Ok(st.commit.to_string())
}

/// Run the buggy and the fixed checks of one task; returns the sandbox kind (when one was
/// made) and the problems.
fn check_in_sandbox(
    envs: &mut Environments,
    task: &Task,
    index: usize,
) -> (Option<String>, Vec<Problem>) {
    let (env, kind) = match envs.for_task(task) {
        Ok(e) => e,
        Err(e) => return (None, vec![Problem::new(Invalid::Environment, e)]),
    };
    let runner = envs.runner(task, kind);
    let problems = match env.worker(index) {
        Ok(mut worker) => {
            // A container of the task's own image is the agent's start environment.
            let start_env = kind == SandboxKind::Docker && !envs.prefer_repo_image;
            check_task_in(worker.as_mut(), runner.as_ref(), task, start_env)
        }
        Err(e) => vec![Problem::new(Invalid::Environment, format!("worker: {e}"))],
    };
    (Some(kind.to_string()), problems)
}

/// The runtime checks on one worker (not a task's start environment: no safety checks).
pub fn check_task(worker: &mut dyn Worker, runner: &dyn TestRunner, task: &Task) -> Vec<Problem> {
    check_task_in(worker, runner, task, false)
}

/// The runtime checks on one worker; `start_env`: the worker is a container of the task's own
/// image, whose tree must be the start state, and the safety checks run there.
pub fn check_task_in(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    task: &Task,
    start_env: bool,
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
    match runner.run(worker, "audit-buggy", Some(&tests), budget) {
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
    match runner.run(worker, "audit-fixed", Some(&tests), budget) {
        Ok(run) => problems.extend(judge_fixed(&run, task)),
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
mod tests {
    use super::*;
    use crate::lang::Language;
    use crate::run::TestResult;
    use crate::task::{Difficulty, EnvironmentInfo, Evidence, Location, TaskMetadata};

    fn task(id: &str) -> Task {
        Task {
            instance_id: id.into(),
            repo: "pyshelf".into(),
            base_commit: "a".repeat(40),
            patch: "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x\n+y\n".into(),
            test_patch: String::new(),
            problem_statement: "`f` returns wrong results\n".into(),
            hints_text: String::new(),
            created_at: "2026-01-01T00:00:00Z".into(),
            version: "0".into(),
            environment_setup_commit: "a".repeat(40),
            fail_to_pass: vec!["t.py::test_a".into(), "t.py::test_b".into()],
            pass_to_pass: vec!["t.py::test_c".into()],
            bug_patch: "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-y\n+x\n"
                .into(),
            image_name: None,
            language: Language::Python,
            metadata: TaskMetadata {
                mutators: vec!["py-arith".into()],
                category: "operator".into(),
                candidate_id: "0123".into(),
                location: Location {
                    file: "m.py".into(),
                    function: "f".into(),
                    lines: (1, 1),
                },
                difficulty: Difficulty {
                    category: "operator".into(),
                    killing_tests: 2,
                    function_lines: 1,
                    fix_lines: 2,
                    files_in_fix: 1,
                    synthesized_tests: false,
                    direct_call: false,
                    issue_names_function: false,
                    issue_names_file: false,
                    score: 0.5,
                },
                verification: Evidence {
                    repeats: 3,
                    sandbox: "local".into(),
                    clean_runs: vec![],
                    runs: vec![],
                    reused: vec![],
                    nondeterministic: Default::default(),
                },
                environment: EnvironmentInfo {
                    seed: String::new(),
                    source: "/nowhere".into(),
                    install: None,
                    test_command: "python -m pytest".into(),
                    python_path: vec![".".into()],
                    toolchain: None,
                },
                tool_version: "0.1.0".into(),
                issue_style: "report".into(),
                issue_detail: String::new(),
                issue_rewrite: Default::default(),
                start_state: None,
                dropped_test_ids: Default::default(),
            },
        }
    }

    fn run(statuses: &[(&str, TestStatus)]) -> Run {
        Run {
            label: "audit".into(),
            requested: None,
            end: RunEnd::Exited,
            exit_code: Some(1),
            signal: None,
            results: statuses
                .iter()
                .map(|(id, s)| {
                    (
                        id.to_string(),
                        TestResult {
                            status: *s,
                            duration_s: 0.0,
                            message: None,
                        },
                    )
                })
                .collect(),
            duration_s: 0.1,
            cpu_s: None,
            log_digest: String::new(),
            log_path: None,
            anomaly: None,
            oom_kills: 0,
            collection_errors: Default::default(),
            nondeterministic: Default::default(),
        }
    }

    use TestStatus::{Error, Failed, Missing, Passed};

    #[test]
    fn sample_is_deterministic_sized_and_in_file_order() {
        let keys: Vec<String> = (0..50).map(|i| format!("task-{i}")).collect();
        let a = sample(&keys, 10, 0);
        assert_eq!(a.len(), 10);
        assert_eq!(a, sample(&keys, 10, 0));
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_ne!(a, sample(&keys, 10, 1), "another seed, another sample");
        assert_eq!(sample(&keys, 100, 3), (0..50).collect::<Vec<_>>());
        assert!(sample(&keys, 0, 3).is_empty());
        // The sample depends on the ids, not on their order in the file.
        let mut reversed = keys.clone();
        reversed.reverse();
        let mut from_reversed: Vec<String> = sample(&reversed, 10, 0)
            .into_iter()
            .map(|i| reversed[i].clone())
            .collect();
        let mut from_keys: Vec<String> = a.iter().map(|&i| keys[i].clone()).collect();
        from_reversed.sort();
        from_keys.sort();
        assert_eq!(from_reversed, from_keys);
    }

    #[test]
    fn schema_needs_the_required_fields() {
        assert_eq!(schema_problem(&task("x")), None);
        let mut t = task("x");
        t.fail_to_pass.clear();
        t.bug_patch = " ".into();
        assert_eq!(
            schema_problem(&t).as_deref(),
            Some("empty: bug_patch, FAIL_TO_PASS")
        );
        let mut t = task("x");
        t.pass_to_pass.push(String::new());
        assert_eq!(schema_problem(&t).as_deref(), Some("a test id is empty"));
    }

    #[test]
    fn records_parse_and_duplicates_are_found() {
        let line = serde_json::to_string(&task("a")).unwrap();
        let other = serde_json::to_string(&task("b")).unwrap();
        let text = format!("{line}\n\n{{\"instance_id\": 3}}\n{other}\n{line}\n");
        let records = parse_records(&text);
        assert_eq!(records.len(), 4);
        assert_eq!(records[1].key, "line 3");
        assert!(records[1]
            .parsed
            .as_ref()
            .unwrap_err()
            .starts_with("not a task record: "));
        assert_eq!(
            records.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![1, 3, 4, 5]
        );
        let dups = duplicate_lines(&records);
        assert_eq!(dups, HashMap::from([(3, 1)]));
    }

    #[test]
    fn buggy_run_needs_fail_to_pass_failing_and_pass_to_pass_passing() {
        let t = task("x");
        let good = run(&[
            ("t.py::test_a", Failed),
            ("t.py::test_b", Error),
            ("t.py::test_c", Passed),
        ]);
        assert_eq!(judge_buggy(&good, &t), None);
        let p = judge_buggy(
            &run(&[("t.py::test_a", Failed), ("t.py::test_c", Passed)]),
            &t,
        )
        .unwrap();
        assert_eq!(p.reason, Invalid::FailToPassPassesOnBuggy);
        assert_eq!(
            p.detail,
            "1 of 2 FAIL_TO_PASS tests do not fail on the buggy code: t.py::test_b (MISSING)"
        );
        let p = judge_buggy(
            &run(&[
                ("t.py::test_a", Failed),
                ("t.py::test_b", Failed),
                ("t.py::test_c", Failed),
            ]),
            &t,
        )
        .unwrap();
        assert_eq!(p.reason, Invalid::PassToPassFailsOnBuggy);
        assert!(p.detail.contains("t.py::test_c (FAILED)"), "{}", p.detail);
        assert!(p.detail.contains("on the buggy code"), "{}", p.detail);
    }

    #[test]
    fn fixed_run_needs_every_listed_test_passing() {
        let t = task("x");
        let all = |s: TestStatus| {
            run(&[
                ("t.py::test_a", Passed),
                ("t.py::test_b", Passed),
                ("t.py::test_c", s),
            ])
        };
        assert_eq!(judge_fixed(&all(Passed), &t), None);
        let p = judge_fixed(&all(Missing), &t).unwrap();
        assert_eq!(p.reason, Invalid::PassToPassFailsWithFix);
        assert!(p.detail.contains("with the gold fix"), "{}", p.detail);
        let mut timed_out = run(&[("t.py::test_a", Passed)]);
        timed_out.end = RunEnd::TimedOut;
        let p = judge_fixed(&timed_out, &t).unwrap();
        assert_eq!(p.reason, Invalid::FailToPassFailsWithFix);
        assert!(p.detail.ends_with("[the run timed out]"), "{}", p.detail);
    }

    #[test]
    fn details_name_a_few_tests_and_count_the_rest() {
        let ids: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
        let d = tests_detail(&ids, 9, "tests fail", &run(&[]));
        assert_eq!(d, "8 of 9 tests fail: t0, t1, t2, t3, t4 and 3 more");
    }

    #[test]
    fn verdict_is_the_first_problem_and_summary_counts_reasons() {
        let ok = TaskAudit::new("a".into(), 1, vec![]);
        assert!(ok.is_ok());
        assert_eq!(ok.reason, None);
        let bad = TaskAudit::new(
            "b".into(),
            2,
            vec![
                Problem::new(Invalid::PatchDoesNotApply, "bug_patch: no"),
                Problem::new(Invalid::IssueLeak, "diff"),
            ],
        );
        assert_eq!(bad.verdict, Status::Invalid);
        assert_eq!(bad.reason, Some(Invalid::PatchDoesNotApply));
        assert_eq!(bad.detail, "bug_patch: no");
        let json = serde_json::to_value(&bad).unwrap();
        assert_eq!(json["verdict"], "invalid");
        assert_eq!(json["reason"], "patch-does-not-apply");
        assert_eq!(json["problems"][1]["reason"], "issue-leak");
        let cfg = AuditConfig {
            tasks: "t.jsonl".into(),
            sample: None,
            seed: 0,
            sandbox: SandboxChoice::Local,
            cache: "c".into(),
            limits: Limits::default(),
            progress: false,
        };
        let s = summarize(&cfg, 5, &[ok, bad], 1.0);
        assert_eq!((s.tasks, s.checked, s.ok, s.invalid), (5, 2, 1, 1));
        assert_eq!(
            s.reasons,
            BTreeMap::from([("patch-does-not-apply".into(), 1)])
        );
    }

    #[test]
    fn budget_grows_with_the_recorded_runs() {
        let mut t = task("x");
        assert_eq!(budget(&t).wall, Duration::from_secs(60));
        t.metadata.verification.runs.push(run(&[]));
        t.metadata.verification.runs[0].duration_s = 2.0;
        assert_eq!(budget(&t).wall, Duration::from_secs(80));
    }
}
