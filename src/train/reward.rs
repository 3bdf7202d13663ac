//! Verified rewards: an edit of a task's buggy file is graded by running the task's tests in a
//! sandbox, and the grade is cached by (task, edit) in `rewards.db` so that an identical edit
//! never runs twice, across runs.
//!
//! Reward 1 (`Solved`): the edit parses, applies to the buggy file, and with `test_patch`
//! applied every FAIL_TO_PASS and PASS_TO_PASS test passes (in each of `repeats` runs).
//! Reward 0 (`TestsFail`): it applies but a listed test fails, errors, is missing or the run
//! times out. Reward −1 (`ParseError`, `DoesNotApply`): the edit is not in the format, or a
//! SEARCH block does not match exactly once; no sandbox runs for those. A failure of the
//! environment (a worker that cannot be made or reset, a test command that cannot start) is
//! not a reward: it is an error, and it is never cached.
//!
//! Environments and workers are audit's ([`crate::audit::Environments`]): the local sandbox on
//! a checkout of the seed imported afresh from `metadata.environment.source` at
//! `base_commit` (the default), or a container from the task's `image_name` with Docker.

use crate::audit::{self, AuditError, Environments};
use crate::runner::pytest::Pytest;
use crate::runner::resident::RunnerMode;
use crate::runner::{RunBudget, TestRunner};
use crate::sandbox::SandboxChoice;
use crate::sandbox::{shell_quote, Environment, Limits, Worker};
use crate::task::Task;
use crate::train::episode::{apply_edit_to, parse_edit, EditError};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What [`RewardEnv::open`] needs.
#[derive(Clone, Debug)]
pub struct RewardConfig {
    /// The reward cache, an SQLite file (`rewards.db`); created when absent.
    pub db: PathBuf,
    /// `local` by default; `docker` runs tasks that name an image in a container from it.
    pub sandbox: SandboxChoice,
    /// Mirrors, checkouts and virtualenvs (the cache `run` and `audit` use).
    pub cache: PathBuf,
    pub limits: Limits,
    /// Test runs per graded edit; every one must pass for reward 1.
    pub repeats: usize,
    /// Workers that grade the edits of one [`RewardEnv::reward_many`] call in parallel.
    pub workers: usize,
    /// Python tasks grade through the workers' resident runners where a task qualifies (its
    /// listed tests on the gold tree give the same outcomes as in a fresh process), else in a
    /// fresh process per run.
    pub runner: crate::runner::resident::RunnerMode,
}

impl RewardConfig {
    /// The defaults: local sandbox, one run per edit, two workers.
    pub fn new(db: impl Into<PathBuf>, cache: impl Into<PathBuf>) -> RewardConfig {
        RewardConfig {
            db: db.into(),
            sandbox: SandboxChoice::Local,
            cache: cache.into(),
            limits: Limits::default(),
            repeats: 1,
            workers: 2,
            runner: Default::default(),
        }
    }
}

/// How an edit fared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Applies, and every listed test passes: reward 1.
    Solved,
    /// Applies, but a listed test does not pass: reward 0.
    TestsFail,
    /// Not in the edit format: reward −1.
    ParseError,
    /// A SEARCH block matches no place or several, or the edit names another file: reward −1.
    DoesNotApply,
    /// The environment failed while grading this edit (only in [`RewardEnv::reward_many`]'s
    /// results; not a reward, never cached: drop it).
    Environment(String),
}

impl Outcome {
    /// The reward of this outcome (0 for `Environment`, which is not a reward).
    pub fn value(&self) -> f32 {
        match self {
            Outcome::Solved => 1.0,
            Outcome::TestsFail | Outcome::Environment(_) => 0.0,
            Outcome::ParseError | Outcome::DoesNotApply => -1.0,
        }
    }

    /// The name stored in the cache.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::TestsFail => "tests-fail",
            Outcome::ParseError => "parse-error",
            Outcome::DoesNotApply => "does-not-apply",
            Outcome::Environment(_) => "environment",
        }
    }

    fn from_stored(s: &str) -> Option<Outcome> {
        Some(match s {
            "solved" => Outcome::Solved,
            "tests-fail" => Outcome::TestsFail,
            "parse-error" => Outcome::ParseError,
            "does-not-apply" => Outcome::DoesNotApply,
            _ => return None,
        })
    }
}

/// The grade of one edit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reward {
    /// 1, 0 or −1.
    pub value: f32,
    pub outcome: Outcome,
    /// Served from the cache (or from an identical edit earlier in the same batch): nothing ran.
    pub cached: bool,
    /// Seconds the grading took when it was computed (for a cached reward, the original time).
    pub seconds: f64,
    /// Why: the parse or apply error, the tests that did not pass; empty when solved.
    pub detail: String,
    /// The cache key of the edit: blake3 of its normalized text.
    pub edit_hash: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RewardError {
    #[error("rewards database {}: {error}", path.display())]
    Db {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error("creating {}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] AuditError),
    /// The task's environment failed: not a reward.
    #[error("{instance_id}: environment: {detail}")]
    Environment { instance_id: String, detail: String },
}

/// Counters since [`RewardEnv::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RewardStats {
    /// Edits asked about.
    pub requests: u64,
    /// Of those, served from the cache (or a duplicate in the same batch).
    pub cache_hits: u64,
    /// Edits graded in the sandbox.
    pub graded: u64,
    /// Test runs in the sandbox (graded edits × repeats, fewer when a repeat fails early).
    pub test_runs: u64,
}

/// The grading environment: sandboxes, a pool of workers per environment, and the cache.
pub struct RewardEnv {
    cfg: RewardConfig,
    envs: Environments,
    db: Connection,
    /// Workers per environment (keyed by the environment's address, which stays put while
    /// `envs` holds it).
    pools: HashMap<usize, Vec<Box<dyn Worker>>>,
    /// Buggy and clean files, by (task digest, which).
    files: HashMap<(String, bool), String>,
    /// The resident runner per task digest (`None`: the task grades in fresh processes).
    residents: HashMap<String, Option<Pytest>>,
    stats: RewardStats,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rewards (
    instance_id TEXT NOT NULL,
    edit_hash   TEXT NOT NULL,
    task_digest TEXT NOT NULL,
    reward      REAL NOT NULL,
    outcome     TEXT NOT NULL,
    detail      TEXT NOT NULL,
    seconds     REAL NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (instance_id, edit_hash)
);";

/// A computed grade, before it becomes a [`Reward`].
struct Graded {
    outcome: Outcome,
    detail: String,
    seconds: f64,
    test_runs: u64,
}

impl RewardEnv {
    /// Open (or create) the cache and the sandboxes.
    pub fn open(cfg: RewardConfig) -> Result<RewardEnv, RewardError> {
        if let Some(dir) = cfg.db.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|error| RewardError::Io {
                path: dir.to_path_buf(),
                error,
            })?;
        }
        let db_err = |error| RewardError::Db {
            path: cfg.db.clone(),
            error,
        };
        let db = Connection::open(&cfg.db).map_err(db_err)?;
        db.busy_timeout(Duration::from_secs(30)).map_err(db_err)?;
        db.pragma_update(None, "journal_mode", "WAL")
            .map_err(db_err)?;
        db.execute_batch(SCHEMA).map_err(db_err)?;
        let mut envs = Environments::open(cfg.sandbox, &cfg.cache, &cfg.limits, Path::new(""))
            .map_err(|e| AuditError::DockerUnavailable(e.to_string()))?;
        // One container pool per seed: the repository image, entered with the start patch.
        envs.prefer_repo_image = true;
        Ok(RewardEnv {
            cfg,
            envs,
            db,
            pools: HashMap::new(),
            files: HashMap::new(),
            residents: HashMap::new(),
            stats: RewardStats::default(),
        })
    }

    /// Counters since `open`.
    pub fn stats(&self) -> RewardStats {
        self.stats
    }

    /// The reward of one edit. An environment failure is an error.
    pub fn reward(&mut self, task: &Task, edit_text: &str) -> Result<Reward, RewardError> {
        let mut r = self.reward_many(task, &[edit_text.to_string()])?;
        let r = r.remove(0);
        match r.outcome {
            Outcome::Environment(detail) => Err(RewardError::Environment {
                instance_id: task.instance_id.clone(),
                detail,
            }),
            _ => Ok(r),
        }
    }

    /// The rewards of a group of edits of one task, in order. Edits that need the sandbox are
    /// graded in parallel on up to `workers` workers; an edit seen before (in the cache or
    /// earlier in `edits`) is not graded again. An edit whose grading hit an environment
    /// failure comes back as [`Outcome::Environment`] (not cached); a failure before any edit
    /// could be graded (no environment, no buggy file) is an error.
    pub fn reward_many(
        &mut self,
        task: &Task,
        edits: &[String],
    ) -> Result<Vec<Reward>, RewardError> {
        let digest = task_digest(task);
        let file = task.metadata.location.file.clone();
        let mut out: Vec<Option<Reward>> = vec![None; edits.len()];
        // Edits to grade in the sandbox: (hash, edited text, indices of `edits` asking).
        let mut jobs: Vec<(String, String, Vec<usize>)> = Vec::new();
        let mut job_of: HashMap<String, usize> = HashMap::new();
        let mut buggy: Option<String> = None;
        for (i, text) in edits.iter().enumerate() {
            self.stats.requests += 1;
            let parsed = parse_edit(text);
            let hash = edit_hash(text, parsed.as_ref().ok());
            if let Some(&j) = job_of.get(&hash) {
                jobs[j].2.push(i);
                continue;
            }
            if let Some(r) = self.lookup(&task.instance_id, &hash, &digest)? {
                self.stats.cache_hits += 1;
                out[i] = Some(r);
                continue;
            }
            let started = Instant::now();
            let edited = match parsed {
                Err(e) => Err((Outcome::ParseError, e.to_string())),
                Ok(edit) => {
                    if buggy.is_none() {
                        buggy = Some(self.buggy_file(task)?);
                    }
                    let b = buggy.as_deref().unwrap_or_default();
                    match apply_edit_to(&file, b, &edit) {
                        Ok(t) if t == b => Err((
                            Outcome::TestsFail,
                            "the edit leaves the file as it is (the task's tests fail on it)"
                                .to_string(),
                        )),
                        Ok(t) => Ok(t),
                        Err(e @ EditError::Parse { .. }) => {
                            Err((Outcome::ParseError, e.to_string()))
                        }
                        Err(e) => Err((Outcome::DoesNotApply, e.to_string())),
                    }
                }
            };
            match edited {
                Ok(t) => {
                    job_of.insert(hash.clone(), jobs.len());
                    jobs.push((hash, t, vec![i]));
                }
                Err((outcome, detail)) => {
                    let g = Graded {
                        outcome,
                        detail,
                        seconds: started.elapsed().as_secs_f64(),
                        test_runs: 0,
                    };
                    self.store(&task.instance_id, &hash, &digest, &g)?;
                    // Later duplicates in this batch read it from the cache.
                    out[i] = Some(reward_of(g, false, hash));
                }
            }
        }
        if !jobs.is_empty() {
            let buggy = match buggy {
                Some(b) => b,
                None => self.buggy_file(task)?,
            };
            let graded = self.grade(task, &buggy, &jobs)?;
            for ((hash, _, asking), g) in jobs.iter().zip(graded) {
                self.stats.graded += 1;
                self.stats.test_runs += g.test_runs;
                if !matches!(g.outcome, Outcome::Environment(_)) {
                    self.store(&task.instance_id, hash, &digest, &g)?;
                }
                for (n, &i) in asking.iter().enumerate() {
                    if n > 0 {
                        self.stats.cache_hits += 1;
                    }
                    out[i] = Some(reward_of(
                        Graded {
                            outcome: g.outcome.clone(),
                            detail: g.detail.clone(),
                            seconds: g.seconds,
                            test_runs: 0,
                        },
                        n > 0,
                        hash.clone(),
                    ));
                }
            }
        }
        Ok(out
            .into_iter()
            .map(|r| r.expect("every edit has a reward"))
            .collect())
    }

    /// The buggy text of the task's file (`metadata.location.file` at `base_commit` with
    /// `test_patch` and `bug_patch` applied), read in the task's environment; cached per task.
    pub fn buggy_file(&mut self, task: &Task) -> Result<String, RewardError> {
        self.file(task, true)
    }

    /// The clean text of the task's file at `base_commit`; cached per task.
    pub fn clean_file(&mut self, task: &Task) -> Result<String, RewardError> {
        self.file(task, false)
    }

    /// Re-verify a task from its record as `audit` does (every FAIL_TO_PASS test fails on the
    /// buggy code and every PASS_TO_PASS test passes; with the gold fix all pass), `repeats`
    /// times on one worker. Returns the problems of the first repeat that has any (empty: the
    /// task verified every time). An environment failure is an error.
    pub fn verify(
        &mut self,
        task: &Task,
        repeats: usize,
    ) -> Result<Vec<audit::Problem>, RewardError> {
        let env_err = |detail: String| RewardError::Environment {
            instance_id: task.instance_id.clone(),
            detail,
        };
        let (env, kind) = self.envs.for_task(task).map_err(env_err)?;
        let runner = self.envs.runner(task, kind).map_err(env_err)?;
        let pool = self.pool(task, &env, 1)?;
        for _ in 0..repeats.max(1) {
            let problems = audit::check_task(pool[0].as_mut(), runner.as_ref(), task);
            if let Some(p) = problems
                .iter()
                .find(|p| p.reason == audit::Invalid::Environment)
            {
                return Err(env_err(p.detail.clone()));
            }
            if !problems.is_empty() {
                return Ok(problems);
            }
        }
        Ok(Vec::new())
    }

    fn file(&mut self, task: &Task, buggy: bool) -> Result<String, RewardError> {
        let key = (task_digest(task), buggy);
        if let Some(t) = self.files.get(&key) {
            return Ok(t.clone());
        }
        let env_err = |detail: String| RewardError::Environment {
            instance_id: task.instance_id.clone(),
            detail,
        };
        let (env, _) = self.envs.for_task(task).map_err(env_err)?;
        let pool = self.pool(task, &env, 1)?;
        let worker = pool[0].as_mut();
        worker.reset().map_err(|e| env_err(format!("reset: {e}")))?;
        if buggy {
            audit::apply_buggy(worker, task)
                .map_err(|p| env_err(format!("{}: {}", p.reason, p.detail)))?;
        }
        let path = &task.metadata.location.file;
        let out = worker
            .exec(
                &format!("cat -- {}", shell_quote(path)),
                Duration::from_secs(60),
            )
            .map_err(|e| env_err(format!("reading {path}: {e}")))?;
        if out.exit_code != Some(0) {
            return Err(env_err(format!(
                "reading {path}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8(out.stdout)
            .map_err(|_| env_err(format!("{path} is not valid UTF-8")))?;
        self.files.insert(key, text.clone());
        Ok(text)
    }

    /// At least `n` workers (at most `cfg.workers`, at least one) of the task's environment.
    fn pool(
        &mut self,
        task: &Task,
        env: &Arc<dyn Environment>,
        n: usize,
    ) -> Result<&mut Vec<Box<dyn Worker>>, RewardError> {
        let key = Arc::as_ptr(env) as *const () as usize;
        let want = n.clamp(1, self.cfg.workers.max(1));
        let pool = self.pools.entry(key).or_default();
        while pool.len() < want {
            let w = env
                .worker(pool.len())
                .map_err(|e| RewardError::Environment {
                    instance_id: task.instance_id.clone(),
                    detail: format!("worker: {e}"),
                })?;
            pool.push(w);
        }
        Ok(pool)
    }

    /// Grade the edited texts of `jobs`, in parallel over the pool's workers.
    fn grade(
        &mut self,
        task: &Task,
        buggy: &str,
        jobs: &[(String, String, Vec<usize>)],
    ) -> Result<Vec<Graded>, RewardError> {
        let (env, kind) = self
            .envs
            .for_task(task)
            .map_err(|detail| RewardError::Environment {
                instance_id: task.instance_id.clone(),
                detail,
            })?;
        let fresh = self
            .envs
            .runner(task, kind)
            .map_err(|detail| RewardError::Environment {
                instance_id: task.instance_id.clone(),
                detail,
            })?;
        let repeats = self.cfg.repeats.max(1);
        let budget = run_budget(task);
        let digest = task_digest(task);
        let candidate = (self.cfg.runner == RunnerMode::Resident)
            .then(|| self.envs.pytest(task, kind))
            .flatten()
            .filter(|_| !self.residents.contains_key(&digest));
        let pool = self.pool(task, &env, jobs.len())?;
        if let Some(p) = candidate {
            let qualified = qualify_for_task(&p, pool[0].as_mut(), fresh.as_ref(), task, budget);
            if let Err(why) = &qualified {
                tracing::info!(task = %task.instance_id, "rewards in fresh processes: {why}");
            }
            self.residents.insert(digest.clone(), qualified.ok());
        }
        let resident = self.residents.get(&digest).cloned().flatten();
        let pool = self.pool(task, &env, jobs.len())?;
        let k = pool.len().min(jobs.len());
        let runner: &dyn TestRunner = match &resident {
            Some(p) => p,
            None => fresh.as_ref(),
        };
        let mut graded: Vec<Option<Graded>> = (0..jobs.len()).map(|_| None).collect();
        std::thread::scope(|s| {
            let handles: Vec<_> = pool
                .iter_mut()
                .take(k)
                .enumerate()
                .map(|(w, worker)| {
                    s.spawn(move || {
                        (w..jobs.len())
                            .step_by(k)
                            .map(|j| {
                                let g = grade_one(
                                    worker.as_mut(),
                                    runner,
                                    task,
                                    buggy,
                                    &jobs[j].1,
                                    budget,
                                    repeats,
                                );
                                (j, g)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                match h.join() {
                    Ok(done) => {
                        for (j, g) in done {
                            graded[j] = Some(g);
                        }
                    }
                    Err(_) => tracing::error!("a reward worker thread panicked"),
                }
            }
        });
        Ok(graded
            .into_iter()
            .map(|g| {
                g.unwrap_or(Graded {
                    outcome: Outcome::Environment("the worker thread panicked".into()),
                    detail: String::new(),
                    seconds: 0.0,
                    test_runs: 0,
                })
            })
            .collect())
    }

    fn lookup(
        &self,
        instance_id: &str,
        hash: &str,
        digest: &str,
    ) -> Result<Option<Reward>, RewardError> {
        let row = self
            .db
            .query_row(
                "SELECT outcome, detail, seconds FROM rewards
                 WHERE instance_id = ?1 AND edit_hash = ?2 AND task_digest = ?3",
                params![instance_id, hash, digest],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, f64>(2)?,
                    ))
                },
            )
            .optional()
            .map_err(|error| RewardError::Db {
                path: self.cfg.db.clone(),
                error,
            })?;
        Ok(row.and_then(|(o, detail, seconds)| {
            let outcome = Outcome::from_stored(&o)?;
            Some(reward_of(
                Graded {
                    outcome,
                    detail,
                    seconds,
                    test_runs: 0,
                },
                true,
                hash.to_string(),
            ))
        }))
    }

    fn store(
        &self,
        instance_id: &str,
        hash: &str,
        digest: &str,
        g: &Graded,
    ) -> Result<(), RewardError> {
        self.db
            .execute(
                "INSERT OR REPLACE INTO rewards
                 (instance_id, edit_hash, task_digest, reward, outcome, detail, seconds, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    instance_id,
                    hash,
                    digest,
                    g.outcome.value() as f64,
                    g.outcome.as_str(),
                    g.detail,
                    g.seconds,
                    crate::task::now_utc()
                ],
            )
            .map(|_| ())
            .map_err(|error| RewardError::Db {
                path: self.cfg.db.clone(),
                error,
            })
    }

    /// The cache file.
    pub fn db_path(&self) -> &Path {
        &self.cfg.db
    }
}

fn reward_of(g: Graded, cached: bool, edit_hash: String) -> Reward {
    Reward {
        value: g.outcome.value(),
        outcome: g.outcome,
        cached,
        seconds: g.seconds,
        detail: g.detail,
        edit_hash,
    }
}

/// The resident version of `pytest` for grading `task`, when the listed tests on the gold
/// tree (start state, `test_patch`, `patch`) give the same outcome per test through it as in
/// a fresh process; `Err(why not)` otherwise.
fn qualify_for_task(
    pytest: &Pytest,
    worker: &mut dyn Worker,
    fresh: &dyn TestRunner,
    task: &Task,
    budget: RunBudget,
) -> Result<Pytest, String> {
    let tests = audit::listed_tests(task);
    let mut gold = |w: &mut dyn Worker| -> Result<(), String> {
        w.reset().map_err(|e| format!("reset: {e}"))?;
        audit::apply_buggy(w, task).map_err(|p| format!("{}: {}", p.reason, p.detail))?;
        w.apply_patch(&task.patch)
            .map_err(|e| format!("the gold patch: {e}"))
    };
    gold(worker)?;
    let grading = task.grading();
    let reference = crate::grading::run(
        fresh,
        worker,
        "resident-reference",
        &grading,
        &tests,
        budget,
    )
    .map_err(|e| e.to_string())?;
    let check = |run: &crate::run::Run| -> Result<(), String> {
        for t in &tests {
            let (want, got) = (reference.status(t), run.status(t));
            if want != got {
                return Err(format!(
                    "{t} is {want} in a fresh process, {got} in the resident runner"
                ));
            }
        }
        Ok(())
    };
    pytest.qualify_resident_on(
        worker,
        &mut gold,
        Some(grading.selection()),
        budget,
        reference.cpu_s,
        &check,
    )
}

/// Grade one edited text on one worker: reset, buggy code, the edit, the listed tests.
fn grade_one(
    worker: &mut dyn Worker,
    runner: &dyn TestRunner,
    task: &Task,
    buggy: &str,
    edited: &str,
    budget: RunBudget,
    repeats: usize,
) -> Graded {
    let started = Instant::now();
    let mut test_runs = 0;
    let result = (|| -> Result<(Outcome, String), String> {
        // The grading path `serve` uses too: the edit as a patch of the buggy file, every
        // run must pass (the first that does not ends the grading).
        let file = &task.metadata.location.file;
        let patch = crate::task::file_diff(file, buggy, edited);
        let patched =
            crate::replay::run_patched(worker, runner, task, &patch, repeats, budget, true)
                .map_err(|e| match e {
                    crate::replay::GradeError::DoesNotApply(e) => {
                        format!("writing the edited {file}: {e}")
                    }
                    crate::replay::GradeError::Environment(e) => e,
                })?;
        test_runs += patched.runs.len() as u64;
        if let Some(why) = patched.tampered {
            return Ok((Outcome::TestsFail, format!("tampered runner: {why}")));
        }
        for run in &patched.runs {
            if let Some(p) = audit::judge_fixed(run, task) {
                return Ok((Outcome::TestsFail, p.detail));
            }
        }
        Ok((Outcome::Solved, String::new()))
    })();
    let (outcome, detail) = match result {
        Ok(r) => r,
        Err(e) => (Outcome::Environment(e.clone()), e),
    };
    Graded {
        outcome,
        detail,
        seconds: started.elapsed().as_secs_f64(),
        test_runs,
    }
}

/// audit's wall-clock budget, plus a CPU-time limit per process (3 × the longest recorded run
/// + 10 s), so that an edit that loops forever is stopped soon.
fn run_budget(task: &Task) -> RunBudget {
    crate::timeouts::reward(audit::longest_recorded_run(task))
}

/// The cache key of an edit text: blake3 (hex) of its normalized form. An edit that parses is
/// normalized to its canonical rendering (so marker whitespace, fences, blank lines between
/// blocks and a trailing newline do not matter; the whitespace inside blocks does). Text that
/// does not parse is normalized by CRLF → LF, trailing whitespace of each line and trailing
/// blank lines.
pub fn edit_hash(text: &str, parsed: Option<&crate::train::episode::Edit>) -> String {
    let normalized = match parsed {
        Some(e) => format!("edit\n{}", e.render()),
        None => {
            let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
            format!("text\n{}", lines.join("\n").trim_end())
        }
    };
    let mut h = blake3::Hasher::new();
    h.update(b"swe-forge edit v1\0");
    h.update(normalized.as_bytes());
    h.finalize().to_hex().to_string()
}

/// What a cached reward depends on in the task record: the code and tests it is graded
/// against. A task whose record changed under the same id gets fresh rewards.
pub fn task_digest(task: &Task) -> String {
    let mut h = blake3::Hasher::new();
    for part in [
        task.base_commit.as_str(),
        &task.bug_patch,
        &task.test_patch,
        &task.metadata.location.file,
        task.image_name.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    for t in task
        .fail_to_pass
        .iter()
        .chain([&String::new()])
        .chain(&task.pass_to_pass)
    {
        h.update(t.as_bytes());
        h.update(b"\0");
    }
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_edits_hash_alike_and_different_ones_do_not() {
        let a = "<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n";
        let same =
            "```\n<<<<<<< SEARCH  \n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n```\n\n\n";
        let ws = "<<<<<<< SEARCH\n    x = 1 \n=======\n    x = 2\n>>>>>>> REPLACE\n";
        let h = |t: &str| edit_hash(t, parse_edit(t).ok().as_ref());
        assert_eq!(h(a), h(same));
        assert_eq!(h(a), h(&a.replace('\n', "\r\n")));
        // Whitespace inside a block changes what the edit matches: another key.
        assert_ne!(h(a), h(ws));
        // Garbage is normalized too.
        assert_eq!(h("nonsense  \n\n"), h("nonsense"));
        assert_ne!(h("nonsense"), h(a));
    }

    #[test]
    fn outcomes_have_their_values_and_names() {
        for (o, v) in [
            (Outcome::Solved, 1.0),
            (Outcome::TestsFail, 0.0),
            (Outcome::ParseError, -1.0),
            (Outcome::DoesNotApply, -1.0),
        ] {
            assert_eq!(o.value(), v);
            assert_eq!(Outcome::from_stored(o.as_str()), Some(o));
        }
        // An environment failure is never read back from the cache.
        assert_eq!(Outcome::from_stored("environment"), None);
    }

    #[test]
    fn cache_round_trips_without_a_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = RewardConfig::new(dir.path().join("r/rewards.db"), dir.path().join("cache"));
        let env = RewardEnv::open(cfg.clone()).unwrap();
        let g = Graded {
            outcome: Outcome::TestsFail,
            detail: "1 of 1 FAIL_TO_PASS tests do not pass".into(),
            seconds: 1.5,
            test_runs: 1,
        };
        env.store("t1", "h1", "d1", &g).unwrap();
        drop(env);
        let env = RewardEnv::open(cfg).unwrap();
        let r = env.lookup("t1", "h1", "d1").unwrap().unwrap();
        assert_eq!((r.value, r.cached, r.seconds), (0.0, true, 1.5));
        assert_eq!(r.outcome, Outcome::TestsFail);
        // Another task digest (the record changed) is a miss.
        assert!(env.lookup("t1", "h1", "d2").unwrap().is_none());
    }

    #[test]
    fn unparseable_and_unapplicable_edits_never_reach_a_sandbox() {
        // A task whose source does not exist: any sandbox use would fail with an error.
        let dir = tempfile::tempdir().unwrap();
        let cfg = RewardConfig::new(dir.path().join("rewards.db"), dir.path().join("cache"));
        let mut env = RewardEnv::open(cfg).unwrap();
        let task = crate::train::episode::tests::task_with(
            "t",
            "m.py",
            String::new(),
            String::new(),
            (1, 1),
        );
        let r = env.reward(&task, "not an edit").unwrap();
        assert_eq!(
            (r.value, r.outcome.clone(), r.cached),
            (-1.0, Outcome::ParseError, false)
        );
        let again = env.reward(&task, "not an edit\n").unwrap();
        assert!(again.cached);
        // A well-formed edit needs the buggy file, hence the environment: an error.
        let e = env
            .reward(&task, "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n")
            .unwrap_err();
        assert!(matches!(e, RewardError::Environment { .. }), "{e}");
        assert_eq!(env.stats().test_runs, 0);
        assert_eq!(env.stats().requests, 3);
        assert_eq!(env.stats().cache_hits, 1);
    }
}
