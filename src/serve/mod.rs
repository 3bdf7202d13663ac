//! `serve`: an environment and reward server for RL trainers' own stacks (OpenEnv, rLLM,
//! SkyRL): an agent works in a task's start environment through tools, step by step, and
//! `submit` grades its patch with the verification code, three runs, each test by majority.
//! The contract (endpoints, tools, reward, curriculum, sessions) is `docs/serve.md`.
//!
//! The pieces: [`session`] (a session's worker, state and SQLite record), [`tools`] (the
//! actions and their schemas), [`grade`] (the reward of a submitted patch), [`review`] (the
//! reward-hacking review), [`metrics`] (process metrics, JSON and Prometheus), [`http`] (the
//! routes: HTTP and WebSocket). Environments come from [`crate::replay::Environments`], as for
//! `audit` and `train`: the task's own image in Docker (its start state, audited safe), or, only
//! with `--unsafe-local`, the seed imported afresh with the local sandbox (no isolation: the
//! agent's shell is a shell on the host; [`UNSAFE_LOCAL`]).

pub mod episode;
pub mod grade;
pub mod http;
pub mod metrics;
pub mod origin;
pub mod review;
pub mod session;
pub mod tools;
pub mod warm;

use crate::curriculum::{Curriculum, CurriculumConfig};
use crate::replay::Environments;
use crate::sandbox::{Environment, Limits, SandboxChoice, SandboxKind};
use crate::task::Task;
use rand::SeedableRng;
use session::{Session, SessionStore, Status};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What `serve` needs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub tasks: PathBuf,
    pub addr: SocketAddr,
    pub max_sessions: usize,
    /// Containers of the next sampled tasks started ahead.
    pub pool: usize,
    pub sandbox: SandboxChoice,
    pub cache: PathBuf,
    pub limits: Limits,
    /// A bearer token every request but `/health` must carry.
    pub token: Option<String>,
    /// Seconds a session may stay idle before it ends `timed-out`.
    pub idle_timeout: Duration,
    /// Test runs per graded submit (a test passes by majority).
    pub grade_repeats: usize,
    /// A patch the reward-hacking review flags gets reward 0 (the default; `--reward-flagged`
    /// turns it off).
    pub zero_flagged: bool,
    /// Sessions may run in the local sandbox (`--unsafe-local`): `--sandbox local`, `auto`
    /// without a Docker daemon, and tasks without an image. Without it the server refuses to
    /// start on the local sandbox, and a task without an image is not served.
    pub unsafe_local: bool,
    /// The task ids clients and agents see (`task_id`): opaque by default, since a record's
    /// own id names the mutator.
    pub id_style: crate::export::IdStyle,
    /// The sessions database (SQLite).
    pub db: PathBuf,
    /// Seed of the curriculum's draws when a reset gives none.
    pub seed: u64,
    /// Grow the pool while serving, in the curriculum's plan (`train --generate`'s
    /// generators): multi-bug combinations of the served tasks, and with `generate_batch` > 0
    /// single-bug tasks from their seeds (`manifest`: where the seeds are; default the demo's).
    pub generate: bool,
    pub generate_batch: usize,
    pub manifest: Option<PathBuf>,
    /// The pass rate the generation plan aims at.
    pub target: f64,
    /// Origins whose pages may drive the server besides loopback ones (`--allow-origin`;
    /// `*`: any).
    pub allow_origins: Vec<String>,
    /// MiB a session's repository may grow by (and the largest file a `bash` step may
    /// write); past it the episode ends with reward 0 (`exceeded-storage`).
    pub max_tree_mb: u64,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("reading {}: {error}", path.display())]
    Tasks {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} holds no task record", .0.display())]
    NoTasks(PathBuf),
    #[error("sessions database {}: {error}", path.display())]
    Db {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error("sandbox: {0}")]
    Sandbox(String),
    /// The local sandbox would be used without `--unsafe-local`.
    #[error("{0}")]
    UnsafeLocal(String),
    /// No task can be served in the sandbox chosen.
    #[error("none of the {count} tasks of {} can be served: {why}", path.display())]
    NothingToServe {
        path: PathBuf,
        count: usize,
        why: String,
    },
    #[error("binding {addr}: {error}")]
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Runtime(String),
}

/// Why the local sandbox is unsafe to serve from: what an agent's shell on the host reaches.
pub const UNSAFE_LOCAL: &str = "the local sandbox runs the agent's commands on this host, \
    without isolation: an agent can read the tasks file (every task's gold patch), the other \
    sessions' worktrees and the fix in the worktree's git history, and write into the shared \
    virtualenv that grading uses; its rewards cannot be trusted. Use it only to develop against \
    the server";

/// What a session in the local sandbox is told (`unsafe_local_reason` of its reset).
pub const UNSAFE_LOCAL_SESSION: &str = "this session runs on the server's host without \
    isolation (--unsafe-local): its commands reach the host's files, so its rewards cannot be \
    trusted";

/// The tasks served: those of the tasks file, and those generated while serving.
#[derive(Default)]
pub struct Pool {
    pub tasks: Vec<Arc<Task>>,
    /// A task's index by its instance id and by the id it is shown under.
    pub by_id: HashMap<String, usize>,
    /// Tasks of the file that are not served, and why (by instance id and shown id).
    pub refused: HashMap<String, String>,
}

impl Pool {
    fn add(&mut self, task: Task, style: crate::export::IdStyle) -> bool {
        let shown = style.of(&task);
        if self.by_id.contains_key(&task.instance_id) || self.by_id.contains_key(&shown) {
            return false;
        }
        let i = self.tasks.len();
        self.by_id.insert(task.instance_id.clone(), i);
        self.by_id.insert(shown, i);
        self.tasks.push(Arc::new(task));
        true
    }
}

/// A session in memory: what is read without its lock, and the session.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) live: Arc<session::Live>,
    pub(crate) session: Arc<Mutex<Session>>,
}

impl Entry {
    pub(crate) fn new(session: Session) -> Entry {
        Entry {
            live: Arc::clone(&session.live),
            session: Arc::new(Mutex::new(session)),
        }
    }
}

/// Everything the routes share.
pub struct Server {
    pub cfg: ServeConfig,
    pub(crate) pool: std::sync::RwLock<Pool>,
    /// The generation plan the generators follow (`--generate`), kept in step with the
    /// curriculum.
    pub(crate) plan: Option<Arc<Mutex<crate::curriculum::GenerationPlan>>>,
    pub(crate) envs: Mutex<Environments>,
    /// The sessions in memory; the lock is held only to look one up or add one.
    pub(crate) sessions: Mutex<BTreeMap<String, Entry>>,
    /// `--max-sessions`, taken before a session's environment starts.
    pub(crate) slots: Arc<session::Slots>,
    /// Tasks whose environment failed at its last start, and why (tried again after a
    /// backoff: [`crate::replay::FAILURE_BACKOFF`]).
    pub(crate) unavailable: Mutex<BTreeMap<usize, String>>,
    pub(crate) store: Mutex<SessionStore>,
    pub(crate) curriculum: Mutex<(Curriculum, rand::rngs::StdRng)>,
    pub(crate) metrics: Mutex<metrics::Metrics>,
    /// Workers of the next sampled tasks, started ahead (front: the next draw).
    pub(crate) warm: Mutex<VecDeque<warm::Warm>>,
    /// Warm workers being started now.
    pub(crate) warming: std::sync::atomic::AtomicUsize,
    /// Spent workers being recycled into the pool now.
    pub(crate) recycling: std::sync::atomic::AtomicUsize,
    /// Notified when a worker joins the warm pool, or one being started or recycled for it
    /// did not make it.
    pub(crate) warm_ready: std::sync::Condvar,
    /// What lets a warm worker serve any task of its seed: each task's task base and tree.
    pub(crate) shared: warm::Shared,
    /// Workers made so far (their index in their environment).
    pub(crate) made: std::sync::atomic::AtomicUsize,
    /// Docker is open (sessions run in the tasks' images).
    pub(crate) docker: bool,
    /// Where ending sessions send their containers to be recycled ([`warm::Spent`]), and
    /// what `serve` reads them from.
    pub(crate) spent_tx: std::sync::mpsc::Sender<warm::Spent>,
    spent_rx: Mutex<Option<std::sync::mpsc::Receiver<warm::Spent>>>,
    /// The server is stopping: nothing goes back into the warm pool.
    pub(crate) stopping: std::sync::atomic::AtomicBool,
    pub started: Instant,
}

impl Server {
    /// Load the tasks, open the sandboxes and the sessions database, end the sessions a
    /// previous server left active.
    ///
    /// The local sandbox is refused without `cfg.unsafe_local`: `--sandbox local`, `auto`
    /// where no Docker daemon answers (no silent fallback), and, under Docker, the tasks
    /// without an image (they are left out of the pool; asking for one says why).
    pub fn open(cfg: ServeConfig) -> Result<Server, ServeError> {
        if cfg.sandbox == SandboxChoice::Local && !cfg.unsafe_local {
            return Err(ServeError::UnsafeLocal(format!(
                "serve refuses --sandbox local without --unsafe-local: {UNSAFE_LOCAL}"
            )));
        }
        let all = read_tasks(&cfg.tasks)?;
        if all.is_empty() {
            return Err(ServeError::NoTasks(cfg.tasks.clone()));
        }
        let mut envs = Environments::open(cfg.sandbox, &cfg.cache, &cfg.limits, &cfg.tasks)
            .map_err(|e| ServeError::Sandbox(e.to_string()))?;
        let docker = envs.has_docker();
        if !docker && !cfg.unsafe_local {
            return Err(ServeError::UnsafeLocal(format!(
                "no Docker daemon answers (--sandbox auto), and serve does not fall back to the \
                 local sandbox without --unsafe-local: {UNSAFE_LOCAL}"
            )));
        }
        // Sessions start in the task's own image: its start state, which the audit checks
        // holds no way back to the fix.
        envs.prefer_repo_image = false;
        envs.local_fallback = cfg.unsafe_local;
        let count = all.len();
        let mut pool = Pool::default();
        for t in all {
            match refusal(&t, docker, cfg.unsafe_local) {
                Some(why) => {
                    tracing::warn!(task = %t.instance_id, "not served: {why}");
                    pool.refused.insert(cfg.id_style.of(&t), why.clone());
                    pool.refused.insert(t.instance_id.clone(), why);
                }
                None => {
                    pool.add(t, cfg.id_style);
                }
            }
        }
        if pool.tasks.is_empty() {
            return Err(ServeError::NothingToServe {
                path: cfg.tasks.clone(),
                count,
                why: "none names an image (they were made with the local sandbox); serve them \
                      with --unsafe-local, or make their task images (`swe-forge image build`)"
                    .into(),
            });
        }
        let served: Vec<Task> = pool.tasks.iter().map(|t| (**t).clone()).collect();
        let curriculum = Curriculum::from_tasks(&served, CurriculumConfig::default());
        let plan = cfg
            .generate
            .then(|| Arc::new(Mutex::new(curriculum.generation_plan(cfg.target))));
        let store = SessionStore::open(&cfg.db)?;
        let ended = store.end_stale()?;
        if ended > 0 {
            tracing::warn!(
                sessions = ended,
                "sessions a previous server left active are ended (failed: the server restarted)"
            );
        }
        let rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
        let (spent_tx, spent_rx) = std::sync::mpsc::channel();
        Ok(Server {
            pool: std::sync::RwLock::new(pool),
            plan,
            envs: Mutex::new(envs),
            sessions: Mutex::new(BTreeMap::new()),
            slots: session::Slots::new(cfg.max_sessions),
            unavailable: Mutex::new(BTreeMap::new()),
            store: Mutex::new(store),
            curriculum: Mutex::new((curriculum, rng)),
            metrics: Mutex::new(metrics::Metrics::default()),
            warm: Mutex::new(VecDeque::new()),
            spent_tx,
            spent_rx: Mutex::new(Some(spent_rx)),
            recycling: std::sync::atomic::AtomicUsize::new(0),
            warm_ready: std::sync::Condvar::new(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            warming: std::sync::atomic::AtomicUsize::new(0),
            shared: warm::Shared::default(),
            made: std::sync::atomic::AtomicUsize::new(0),
            docker,
            started: Instant::now(),
            cfg,
        })
    }

    /// Task `i`.
    pub fn task(&self, i: usize) -> Arc<Task> {
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        Arc::clone(&pool.tasks[i])
    }

    /// The index of the task with this id (the one it is shown under, or its instance id).
    pub fn task_index(&self, id: &str) -> Option<usize> {
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        pool.by_id.get(id).copied()
    }

    /// Why the task with this id is not served, when the tasks file has it but the pool not.
    pub fn refused(&self, id: &str) -> Option<String> {
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        pool.refused.get(id).cloned()
    }

    /// The id task `i` is shown under (`task_id`, `--id-style`).
    pub fn shown_id(&self, i: usize) -> String {
        self.cfg.id_style.of(&self.task(i))
    }

    /// Whether a session may run on this host: `--unsafe-local` was given, and Docker is not
    /// open or a served task has no image.
    pub fn may_run_local(&self) -> bool {
        if !self.cfg.unsafe_local {
            return false;
        }
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        !self.docker || pool.tasks.iter().any(|t| t.image_name.is_none())
    }

    /// How many tasks are served.
    pub fn task_count(&self) -> usize {
        self.pool
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .tasks
            .len()
    }

    /// Tasks generated while serving join the pool and the curriculum (an id already served
    /// is skipped); returns how many joined.
    pub fn add_tasks(&self, new: Vec<Task>) -> usize {
        let mut added = 0;
        let infos: Vec<crate::curriculum::TaskInfo> = {
            let mut pool = self.pool.write().unwrap_or_else(|p| p.into_inner());
            for t in new {
                if let Some(why) = refusal(&t, self.docker, self.cfg.unsafe_local) {
                    tracing::warn!(task = %t.instance_id, "a generated task is not served: {why}");
                    continue;
                }
                if pool.add(t, self.cfg.id_style) {
                    added += 1;
                }
            }
            pool.tasks
                .iter()
                .map(|t| crate::curriculum::TaskInfo::of(t))
                .collect()
        };
        if added > 0 {
            let mut guard = lock(&self.curriculum);
            let cur = std::mem::replace(
                &mut guard.0,
                Curriculum::new(Vec::new(), CurriculumConfig::default()),
            );
            guard.0 = Curriculum::resume(cur, infos);
        }
        added
    }

    /// The environment of task `i` (prepared once per image or seed).
    pub(crate) fn environment(
        &self,
        i: usize,
    ) -> Result<(Arc<dyn Environment>, SandboxKind), String> {
        let task = self.task(i);
        let mut envs = lock(&self.envs);
        envs.for_task(&task)
    }

    /// A new worker of task `i`'s environment, in the task's start state.
    pub(crate) fn start_worker(&self, i: usize) -> Result<warm::Started, String> {
        let (env, kind) = match self.environment(i) {
            Ok(found) => {
                lock(&self.unavailable).remove(&i);
                found
            }
            Err(e) => {
                lock(&self.unavailable).insert(i, e.clone());
                return Err(e);
            }
        };
        let n = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut worker = env
            .worker(n)
            .map_err(|e| format!("starting a worker: {e}"))?;
        session::enter(worker.as_mut(), &self.task(i), kind)?;
        Ok((worker, env, kind))
    }

    /// The next task the curriculum draws.
    pub(crate) fn draw(&self, seed: Option<u64>) -> usize {
        let mut guard = lock(&self.curriculum);
        let (cur, rng) = &mut *guard;
        let picked = match seed {
            Some(s) => {
                let mut r = rand::rngs::StdRng::seed_from_u64(s);
                cur.sample(1, &mut r)
            }
            None => cur.sample(1, rng),
        };
        picked.first().copied().unwrap_or(0)
    }

    /// Sessions active now (read without waiting on any session's work).
    pub(crate) fn active(&self) -> usize {
        lock(&self.sessions)
            .values()
            .filter(|e| e.live.status() == Status::Active)
            .count()
    }

    /// End the sessions idle longer than the timeout (`timed-out`); returns how many. A
    /// session with a call running is not idle, and one whose lock is held is left for the
    /// next round: the reaper waits on no session.
    pub fn reap_idle(&self) -> usize {
        let idle: Vec<Entry> = lock(&self.sessions)
            .values()
            .filter(|e| e.live.idle_longer_than(self.cfg.idle_timeout))
            .cloned()
            .collect();
        let mut ended = 0;
        for e in &idle {
            let Ok(mut s) = e.session.try_lock() else {
                continue;
            };
            if !e.live.idle_longer_than(self.cfg.idle_timeout) {
                continue;
            }
            s.end(Status::TimedOut, "idle longer than the idle timeout");
            self.record(&s);
            lock(&self.metrics).session_ended(Status::TimedOut.as_str());
            ended += 1;
        }
        // Ended sessions leave memory after a while; their state stays in the database.
        lock(&self.sessions).retain(|_, e| !e.live.ended_longer_than(ENDED_KEPT));
        ended
    }

    /// Write a session's state to the database (a failure is logged: the session goes on).
    pub(crate) fn record(&self, s: &Session) {
        if let Err(e) = lock(&self.store).save(s, &self.shown_id(s.task)) {
            tracing::warn!(session = %s.id, "recording the session: {e}");
        }
    }
}

/// Why a task is not served here: it names no image, Docker is open, and the local sandbox
/// is not allowed.
fn refusal(task: &Task, docker: bool, unsafe_local: bool) -> Option<String> {
    (docker && !unsafe_local && task.image_name.is_none()).then(|| {
        "the record names no image (`image_name`: it was made with the local sandbox), and \
         serve does not run it on this host without --unsafe-local"
            .to_string()
    })
}

/// How long an ended session stays in memory (then `/state` reads it from the database).
const ENDED_KEPT: Duration = Duration::from_secs(600);

/// A poisoned lock is still the data: a panic in one request must not stop the server.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The task records of a JSON-lines file (lines that are not records are skipped with a
/// warning).
pub fn read_tasks(path: &std::path::Path) -> Result<Vec<Task>, ServeError> {
    let text = std::fs::read_to_string(path).map_err(|error| ServeError::Tasks {
        path: path.to_path_buf(),
        error,
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Task>(line) {
            Ok(t) => out.push(t),
            Err(e) => {
                tracing::warn!(file = %path.display(), line = n + 1, "not a task record: {e}")
            }
        }
    }
    Ok(out)
}

/// Serve until interrupted (Ctrl-C or SIGTERM).
pub fn serve(cfg: ServeConfig) -> Result<(), ServeError> {
    let mut cfg = cfg;
    if !cfg.addr.ip().is_loopback() && cfg.token.is_none() {
        // Beyond loopback, never without a token: one is made and printed.
        let token = origin::random_token();
        eprintln!(
            "warning: listening beyond loopback ({}) without --token: every request but /health \
             needs `Authorization: Bearer {token}`",
            cfg.addr
        );
        cfg.token = Some(token);
    }
    let server = Arc::new(Server::open(cfg)?);
    if server.may_run_local() {
        // On stderr whatever the log level: this server's rewards cannot be trusted.
        eprintln!("warning: --unsafe-local: {UNSAFE_LOCAL}");
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if server.cfg.generate {
        generate(&server, &stop);
    }
    // Ended sessions' containers are recycled into the warm pool.
    if let Some(rx) = lock(&server.spent_rx).take() {
        server.start_recycler(rx);
    }
    // Idle sessions end, and the warm pool is kept full, off the request path.
    {
        let s = Arc::clone(&server);
        // The pool starts filling at once, before the first request.
        s.top_up();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(2));
            let n = s.reap_idle();
            if n > 0 {
                tracing::info!(sessions = n, "idle sessions ended");
            }
            s.top_up();
        });
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .map_err(|e| ServeError::Runtime(e.to_string()))?;
    let serving = Arc::clone(&server);
    rt.block_on(async move {
        let server = serving;
        let addr = server.cfg.addr;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|error| ServeError::Bind { addr, error })?;
        let bound = listener.local_addr().unwrap_or(addr);
        tracing::info!(addr = %bound, tasks = server.task_count(), "serving");
        // The address, for scripts that asked for port 0.
        println!("listening on http://{bound}");
        let app = http::router(Arc::clone(&server));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown())
            .await
            .map_err(|e| ServeError::Runtime(e.to_string()))
    })?;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server
        .stopping
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // The warm pool's containers go; sessions still open end with the server (their
    // containers go with their workers).
    lock(&server.warm).clear();
    let entries: Vec<Entry> = lock(&server.sessions).values().cloned().collect();
    for e in &entries {
        let mut s = lock(&e.session);
        if s.status == Status::Active {
            // Removed here, not recycled.
            s.recycle_to = None;
            s.end(Status::Closed, "the server stopped");
            server.record(&s);
        }
    }
    if server.docker {
        // Containers that threads were still starting or recycling: none is left.
        let removed = crate::sandbox::docker::cleanup_active_runs();
        if removed > 0 {
            tracing::debug!(containers = removed, "removed at shutdown");
        }
    }
    Ok(())
}

/// `--generate`: `train --generate`'s generators grow the pool while the server runs, in the
/// plan the curriculum makes from the submits it has seen: multi-bug combinations of the
/// served tasks (verified three times in the sandbox), and single-bug tasks from their seeds
/// in the plan's category mix (the engine's rounds, `generate_batch` candidates each).
fn generate(server: &Arc<Server>, stop: &Arc<std::sync::atomic::AtomicBool>) {
    use crate::train::generator;
    let Some(plan) = server.plan.clone() else {
        return;
    };
    let singles: Vec<Task> = {
        let pool = server.pool.read().unwrap_or_else(|p| p.into_inner());
        pool.tasks
            .iter()
            .filter(|t| t.metadata.mutators.len() < 2)
            .map(|t| (**t).clone())
            .collect()
    };
    let known: std::collections::BTreeSet<String> =
        singles.iter().map(|t| t.instance_id.clone()).collect();
    let dir = server
        .cfg
        .db
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut reward = crate::train::reward::RewardConfig::new(
        dir.join("serve-generated-rewards.db"),
        server.cfg.cache.clone(),
    );
    reward.sandbox = server.cfg.sandbox;
    reward.limits = server.cfg.limits.clone();
    reward.workers = 1;
    let (tx, rx) = std::sync::mpsc::channel::<Task>();
    let seed = server.cfg.seed;
    if server.cfg.generate_batch > 0 {
        let mut seeds: Vec<String> = singles
            .iter()
            .filter_map(|t| generator::seed_of(t).map(str::to_string))
            .collect();
        seeds.sort();
        seeds.dedup();
        let ecfg = generator::EngineGen {
            manifest: server.cfg.manifest.clone(),
            seeds,
            out: dir.join("serve-engine"),
            cache: server.cfg.cache.clone(),
            sandbox: server.cfg.sandbox,
            batch: server.cfg.generate_batch,
        };
        let (known, plan, stop, tx) = (
            known.clone(),
            Arc::clone(&plan),
            Arc::clone(stop),
            tx.clone(),
        );
        std::thread::spawn(move || generator::generate_single(ecfg, known, plan, stop, tx, seed));
    }
    {
        let (plan, stop) = (Arc::clone(&plan), Arc::clone(stop));
        std::thread::spawn(move || {
            generator::generate(singles, known, reward, plan, stop, tx, seed)
        });
    }
    let s = Arc::clone(server);
    std::thread::spawn(move || {
        for task in rx {
            let id = task.instance_id.clone();
            if s.add_tasks(vec![task]) > 0 {
                tracing::info!(task = %id, tasks = s.task_count(), "a generated task joins the pool");
            }
        }
    });
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("stopping");
}
