//! `serve`: an environment and reward server for RL trainers' own stacks (OpenEnv, rLLM,
//! SkyRL): an agent works in a task's start environment through tools, step by step, and
//! `submit` grades its patch with the verification code, three runs, each test by majority.
//! The contract (endpoints, tools, reward, curriculum, sessions) is `docs/serve.md`.
//!
//! The pieces: [`session`] (a session's worker, state and SQLite record), [`tools`] (the
//! actions and their schemas), [`grade`] (the reward of a submitted patch), [`review`] (the
//! reward-hacking review), [`metrics`] (process metrics, JSON and Prometheus), [`http`] (the
//! routes: HTTP and WebSocket). Environments come from [`crate::replay::Environments`], as for
//! `audit` and `train`: the task's own image in Docker (its start state, audited safe), or the
//! seed imported afresh with the local sandbox (no isolation: for development only).

pub mod grade;
pub mod http;
pub mod metrics;
pub mod review;
pub mod session;
pub mod tools;

use crate::curriculum::{Curriculum, CurriculumConfig};
use crate::replay::Environments;
use crate::sandbox::{Environment, Limits, SandboxChoice, SandboxKind, Worker};
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
    /// A patch the reward-hacking review flags gets reward 0.
    pub zero_flagged: bool,
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
    #[error("binding {addr}: {error}")]
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Runtime(String),
}

/// A worker started ahead for a task, with its environment (graders are made from it too).
pub(crate) struct Warm {
    pub task: usize,
    pub worker: Box<dyn Worker>,
    pub env: Arc<dyn Environment>,
    pub kind: SandboxKind,
}

/// The tasks served: those of the tasks file, and those generated while serving.
#[derive(Default)]
pub struct Pool {
    pub tasks: Vec<Arc<Task>>,
    pub by_id: HashMap<String, usize>,
}

/// Everything the routes share.
pub struct Server {
    pub cfg: ServeConfig,
    pub(crate) pool: std::sync::RwLock<Pool>,
    /// The generation plan the generators follow (`--generate`), kept in step with the
    /// curriculum.
    pub(crate) plan: Option<Arc<Mutex<crate::curriculum::GenerationPlan>>>,
    pub(crate) envs: Mutex<Environments>,
    pub(crate) sessions: Mutex<BTreeMap<String, Arc<Mutex<Session>>>>,
    pub(crate) store: Mutex<SessionStore>,
    pub(crate) curriculum: Mutex<(Curriculum, rand::rngs::StdRng)>,
    pub(crate) metrics: Mutex<metrics::Metrics>,
    /// Workers of the next sampled tasks, started ahead (front: the next draw).
    pub(crate) warm: Mutex<VecDeque<Warm>>,
    /// Workers made so far (their index in their environment).
    pub(crate) made: std::sync::atomic::AtomicUsize,
    pub started: Instant,
}

impl Server {
    /// Load the tasks, open the sandboxes and the sessions database, end the sessions a
    /// previous server left active.
    pub fn open(cfg: ServeConfig) -> Result<Server, ServeError> {
        let tasks = read_tasks(&cfg.tasks)?;
        if tasks.is_empty() {
            return Err(ServeError::NoTasks(cfg.tasks.clone()));
        }
        let by_id = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.instance_id.clone(), i))
            .collect();
        let curriculum = Curriculum::from_tasks(&tasks, CurriculumConfig::default());
        let plan = cfg
            .generate
            .then(|| Arc::new(Mutex::new(curriculum.generation_plan(cfg.target))));
        let pool = Pool {
            tasks: tasks.into_iter().map(Arc::new).collect(),
            by_id,
        };
        let mut envs = Environments::open(cfg.sandbox, &cfg.cache, &cfg.limits, &cfg.tasks)
            .map_err(|e| ServeError::Sandbox(e.to_string()))?;
        // Sessions start in the task's own image: its start state, which the audit checks
        // holds no way back to the fix.
        envs.prefer_repo_image = false;
        let store = SessionStore::open(&cfg.db)?;
        let ended = store.end_stale()?;
        if ended > 0 {
            tracing::warn!(
                sessions = ended,
                "sessions a previous server left active are ended (failed: the server restarted)"
            );
        }
        let rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
        Ok(Server {
            pool: std::sync::RwLock::new(pool),
            plan,
            envs: Mutex::new(envs),
            sessions: Mutex::new(BTreeMap::new()),
            store: Mutex::new(store),
            curriculum: Mutex::new((curriculum, rng)),
            metrics: Mutex::new(metrics::Metrics::default()),
            warm: Mutex::new(VecDeque::new()),
            made: std::sync::atomic::AtomicUsize::new(0),
            started: Instant::now(),
            cfg,
        })
    }

    /// Task `i`.
    pub fn task(&self, i: usize) -> Arc<Task> {
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        Arc::clone(&pool.tasks[i])
    }

    /// The index of the task with this instance id.
    pub fn task_index(&self, id: &str) -> Option<usize> {
        let pool = self.pool.read().unwrap_or_else(|p| p.into_inner());
        pool.by_id.get(id).copied()
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
                if pool.by_id.contains_key(&t.instance_id) {
                    continue;
                }
                let i = pool.tasks.len();
                pool.by_id.insert(t.instance_id.clone(), i);
                pool.tasks.push(Arc::new(t));
                added += 1;
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
    pub(crate) fn start_worker(
        &self,
        i: usize,
    ) -> Result<(Box<dyn Worker>, Arc<dyn Environment>, SandboxKind), String> {
        let (env, kind) = self.environment(i)?;
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

    /// Keep `cfg.pool` workers of the next draws started (called off the request path).
    pub(crate) fn top_up(&self) {
        loop {
            if lock(&self.warm).len() >= self.cfg.pool {
                return;
            }
            let i = self.draw(None);
            match self.start_worker(i) {
                Ok((worker, env, kind)) => lock(&self.warm).push_back(Warm {
                    task: i,
                    worker,
                    env,
                    kind,
                }),
                Err(e) => {
                    tracing::warn!(task = %self.task(i).instance_id, "warming a worker: {e}");
                    return;
                }
            }
        }
    }

    /// A started worker for task `i` from the warm pool, if one is there.
    pub(crate) fn take_warm(&self, i: Option<usize>) -> Option<Warm> {
        let mut warm = lock(&self.warm);
        let at = match i {
            Some(i) => warm.iter().position(|w| w.task == i)?,
            None => 0,
        };
        warm.remove(at)
    }

    /// Sessions active now.
    pub(crate) fn active(&self) -> usize {
        lock(&self.sessions)
            .values()
            .filter(|s| lock(s).status == Status::Active)
            .count()
    }

    /// End the sessions idle longer than the timeout (`timed-out`); returns how many.
    pub fn reap_idle(&self) -> usize {
        let idle: Vec<Arc<Mutex<Session>>> = lock(&self.sessions)
            .values()
            .filter(|s| {
                let s = lock(s);
                s.status == Status::Active && s.last_active.elapsed() > self.cfg.idle_timeout
            })
            .cloned()
            .collect();
        for s in &idle {
            let mut s = lock(s);
            s.end(Status::TimedOut, "idle longer than the idle timeout");
            self.record(&s);
            lock(&self.metrics).session_ended(Status::TimedOut.as_str());
        }
        // Ended sessions leave memory after a while; their state stays in the database.
        lock(&self.sessions).retain(|_, s| {
            let s = lock(s);
            s.status == Status::Active || s.last_active.elapsed() < ENDED_KEPT
        });
        idle.len()
    }

    /// Write a session's state to the database (a failure is logged: the session goes on).
    pub(crate) fn record(&self, s: &Session) {
        if let Err(e) = lock(&self.store).save(s, &self.task(s.task).instance_id) {
            tracing::warn!(session = %s.id, "recording the session: {e}");
        }
    }
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
    if cfg.sandbox == SandboxChoice::Local {
        tracing::warn!(
            "--sandbox local: agents' commands run on this host without isolation, and the \
             worktree's git history holds the fix; use it only to develop against the server"
        );
    }
    if !cfg.addr.ip().is_loopback() && cfg.token.is_none() {
        tracing::warn!(addr = %cfg.addr, "listening beyond loopback without --token");
    }
    let server = Arc::new(Server::open(cfg)?);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if server.cfg.generate {
        generate(&server, &stop);
    }
    // Idle sessions end, and the warm pool is kept full, off the request path.
    {
        let s = Arc::clone(&server);
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
    // The warm pool's containers go; sessions still open end with the server (their
    // containers go with their workers).
    lock(&server.warm).clear();
    for s in lock(&server.sessions).values() {
        let mut s = lock(s);
        if s.status == Status::Active {
            s.end(Status::Closed, "the server stopped");
            server.record(&s);
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
