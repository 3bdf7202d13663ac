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

/// Everything the routes share.
pub struct Server {
    pub cfg: ServeConfig,
    pub tasks: Vec<Task>,
    pub by_id: HashMap<String, usize>,
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
        let curriculum = Curriculum::from_tasks(&tasks, CurriculumConfig::default());
        let rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
        Ok(Server {
            tasks,
            by_id,
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

    /// The environment of task `i` (prepared once per image or seed).
    pub(crate) fn environment(
        &self,
        i: usize,
    ) -> Result<(Arc<dyn Environment>, SandboxKind), String> {
        let task = &self.tasks[i];
        let mut envs = lock(&self.envs);
        envs.for_task(task)
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
        session::enter(worker.as_mut(), &self.tasks[i], kind)?;
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
                    tracing::warn!(task = %self.tasks[i].instance_id, "warming a worker: {e}");
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
        idle.len()
    }

    /// Write a session's state to the database (a failure is logged: the session goes on).
    pub(crate) fn record(&self, s: &Session) {
        if let Err(e) = lock(&self.store).save(s, &self.tasks[s.task].instance_id) {
            tracing::warn!(session = %s.id, "recording the session: {e}");
        }
    }
}

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
        tracing::info!(addr = %bound, tasks = server.tasks.len(), "serving");
        // The address, for scripts that asked for port 0.
        println!("listening on http://{bound}");
        let app = http::router(Arc::clone(&server));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown())
            .await
            .map_err(|e| ServeError::Runtime(e.to_string()))
    })?;
    // Sessions still open end with the server.
    for s in lock(&server.sessions).values() {
        let mut s = lock(s);
        if s.status == Status::Active {
            s.end(Status::Closed, "the server stopped");
            server.record(&s);
        }
    }
    Ok(())
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
