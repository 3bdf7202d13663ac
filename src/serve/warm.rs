//! The warm pool: containers started ahead of resets, so that a reset does not wait for one.
//! Where a task's image has a task base (a Docker task image: the base image and the test
//! environment, no repository), the pool holds bare containers of that base, and whichever
//! task of the base a reset asks for enters one by loading its tree (one upload of its
//! `/testbed`, read once from its image): a trainer that names its tasks finds the pool warm
//! however many tasks it spreads over. Otherwise the pool holds containers of the drawn tasks'
//! own environments, already in their start state.

use super::{lock, session, Server};
use crate::sandbox::{Environment, SandboxKind, Worker};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The most bytes of task trees kept in memory; past it a tree is read from its image at
/// each reset that needs it.
pub const TREE_CACHE_BYTES: usize = 1 << 30;

/// A started worker, the environment it came from, and its sandbox kind.
pub(crate) type Started = (Box<dyn Worker>, Arc<dyn Environment>, SandboxKind);

/// A worker started ahead, with its environment (graders are made from it too).
pub(crate) struct Warm {
    /// The task drawn when it was started.
    pub task: usize,
    /// `Some(base)`: a bare container of that task base, which any task of the base enters
    /// at its reset ([`Server::enter_shared`]); `None`: a worker of `task`'s own
    /// environment, in its start state.
    pub base: Option<String>,
    pub worker: Box<dyn Worker>,
    pub env: Arc<dyn Environment>,
    pub kind: SandboxKind,
    /// Its place under `--max-sessions`, handed to the session that takes it.
    pub slot: session::Slot,
    /// A session's container, recycled ([`Spent`]), rather than one started for the pool.
    pub recycled: bool,
}

/// A session's container on its way back to the pool: recycled ([`Worker::recycle`]) into a
/// bare container of its task base. Only containers no grading ran in come back this way (a
/// submit graded in its session's container removes it after): no agent ever shares a
/// container with a task's hidden tests.
pub(crate) struct Spent {
    pub worker: Box<dyn Worker>,
    pub base: String,
    /// The session's task (of that base).
    pub task: usize,
    /// The session's place under `--max-sessions`, which the container keeps.
    pub slot: Option<session::Slot>,
}

/// Where a session's container goes when it ends: the server's recycler.
#[derive(Clone)]
pub(crate) struct RecycleTo {
    pub tx: std::sync::mpsc::Sender<Spent>,
    pub base: String,
}

impl RecycleTo {
    /// Hand the worker to the recycler (dropped, and its container removed, when the
    /// recycler is gone).
    pub fn send(self, worker: Box<dyn Worker>, task: usize, slot: Option<session::Slot>) {
        let _ = self.tx.send(Spent {
            worker,
            base: self.base,
            task,
            slot,
        });
    }
}

/// The most warm workers the pool holds, recycled ones included, for `--pool` (`pool`):
/// above `pool`, none are started, but recycled ones are kept (they cost no start).
pub(crate) fn pool_cap(pool: usize) -> usize {
    pool.saturating_mul(2)
}

/// Each task's task base and tree, as far as they were looked up.
#[derive(Default)]
pub(crate) struct Shared {
    bases: Mutex<HashMap<usize, Option<String>>>,
    trees: Mutex<HashMap<usize, Arc<Vec<u8>>>>,
    tree_bytes: AtomicUsize,
}

impl Server {
    /// The task base of task `i`'s environment, where it has one (looked up once).
    pub(crate) fn shared_base(&self, i: usize) -> Option<String> {
        if let Some(b) = lock(&self.shared.bases).get(&i) {
            return b.clone();
        }
        // A task whose environment cannot start now is looked up again later.
        let (env, kind) = self.environment(i).ok()?;
        let base = match kind {
            SandboxKind::Docker => env.shared_base().unwrap_or_else(|e| {
                tracing::warn!(task = %self.task(i).instance_id, "finding the task base: {e}");
                None
            }),
            SandboxKind::Local => None,
        };
        lock(&self.shared.bases).insert(i, base.clone());
        base
    }

    /// Task `i`'s repository tree as a tar (kept while [`TREE_CACHE_BYTES`] allows).
    pub(crate) fn tree_of(&self, i: usize) -> Result<Arc<Vec<u8>>, String> {
        if let Some(t) = lock(&self.shared.trees).get(&i) {
            return Ok(Arc::clone(t));
        }
        let (env, _) = self.environment(i)?;
        let tar = env
            .tree()
            .map_err(|e| format!("reading the task's tree: {e}"))?
            .ok_or_else(|| "the task's environment has no tree to read".to_string())?;
        let tar = Arc::new(tar);
        // Under the map's lock: two readers of the same tree count its bytes once.
        let mut trees = lock(&self.shared.trees);
        let held = self.shared.tree_bytes.load(Ordering::SeqCst);
        if held + tar.len() <= TREE_CACHE_BYTES && !trees.contains_key(&i) {
            self.shared
                .tree_bytes
                .fetch_add(tar.len(), Ordering::SeqCst);
            trees.insert(i, Arc::clone(&tar));
        }
        Ok(tar)
    }

    /// A bare worker of the task base `base` (task `i`'s).
    fn start_base_worker(&self, i: usize, base: &str) -> Result<Started, String> {
        let (env, kind) = lock(&self.envs).image_environment(base, self.task(i).seed_name())?;
        let n = self.made.fetch_add(1, Ordering::Relaxed);
        let worker = env
            .worker(n)
            .map_err(|e| format!("starting a worker of the task base: {e}"))?;
        Ok((worker, env, kind))
    }

    /// Task `i` in a bare worker of its task base: its tree loaded, its start state entered
    /// as in a container of its own image; the task's own environment comes with it.
    pub(crate) fn enter_shared(
        &self,
        i: usize,
        mut worker: Box<dyn Worker>,
    ) -> Result<Started, String> {
        let tree = self.tree_of(i)?;
        worker
            .load_tree(tree)
            .map_err(|e| format!("loading the task's tree: {e}"))?;
        let (env, kind) = self.environment(i)?;
        session::enter(worker.as_mut(), &self.task(i), kind)?;
        Ok((worker, env, kind))
    }

    /// Keep `cfg.pool` workers of the next draws started: the missing ones start at once,
    /// side by side, each on a thread of its own (called off the request path, and after a
    /// reset took a warm worker).
    pub(crate) fn top_up(self: &Arc<Self>) {
        loop {
            {
                let warm = lock(&self.warm);
                let starting = self.warming.load(Ordering::SeqCst);
                if warm.len() + starting >= self.cfg.pool {
                    return;
                }
                self.warming.fetch_add(1, Ordering::SeqCst);
            }
            // A warm container counts under --max-sessions like a session's.
            let Some(slot) = self.slots.take() else {
                self.warming.fetch_sub(1, Ordering::SeqCst);
                return;
            };
            let s = Arc::clone(self);
            std::thread::spawn(move || {
                let i = s.draw(None);
                let base = s.shared_base(i);
                let started = match &base {
                    Some(b) => {
                        // The drawn task's tree is read ahead, off the reset's path.
                        if let Err(e) = s.tree_of(i) {
                            tracing::warn!(task = %s.task(i).instance_id, "{e}");
                        }
                        s.start_base_worker(i, b)
                    }
                    None => s.start_worker(i),
                };
                match started {
                    Ok((worker, env, kind)) => {
                        let mut warm = lock(&s.warm);
                        // Recycled containers may have filled the pool meanwhile: this one
                        // then goes (with its place).
                        if warm.len() < pool_cap(s.cfg.pool) {
                            warm.push_back(Warm {
                                task: i,
                                base,
                                worker,
                                env,
                                kind,
                                slot,
                                recycled: false,
                            });
                        }
                    }
                    Err(e) => {
                        tracing::warn!(task = %s.task(i).instance_id, "warming a worker: {e}")
                    }
                }
                s.warming.fetch_sub(1, Ordering::SeqCst);
                s.warm_ready.notify_all();
            });
        }
    }

    /// Whether the pool holds, or is starting, as many workers as it may hold.
    fn pool_full(&self) -> bool {
        let warm = lock(&self.warm).len();
        warm + self.warming.load(Ordering::SeqCst) >= pool_cap(self.cfg.pool)
    }

    /// Recycle the spent workers sent to `rx` (each on a thread of its own) until the server
    /// stops.
    pub(crate) fn start_recycler(self: &Arc<Self>, rx: std::sync::mpsc::Receiver<Spent>) {
        let s = Arc::clone(self);
        std::thread::spawn(move || {
            for spent in rx {
                if s.stopping.load(Ordering::SeqCst) {
                    continue;
                }
                let s = Arc::clone(&s);
                std::thread::spawn(move || s.take_back(spent));
            }
        });
    }

    /// A spent worker back in the pool as a bare container of its task base, recycled, when
    /// the pool has room ([`pool_cap`]) and a place under `--max-sessions` is free; otherwise
    /// (or when it cannot be recycled) it goes.
    fn take_back(&self, mut spent: Spent) {
        if self.pool_full() {
            return;
        }
        let Some(slot) = spent.slot.take().or_else(|| self.slots.take()) else {
            return;
        };
        self.recycling.fetch_add(1, Ordering::SeqCst);
        self.recycle_into_pool(spent, slot);
        self.recycling.fetch_sub(1, Ordering::SeqCst);
        self.warm_ready.notify_all();
    }

    fn recycle_into_pool(&self, spent: Spent, slot: session::Slot) {
        let Spent {
            mut worker,
            base,
            task,
            ..
        } = spent;
        if let Err(e) = worker.recycle() {
            tracing::debug!(task = %self.task(task).instance_id, "not recycled: {e}");
            return;
        }
        let (env, kind) =
            match lock(&self.envs).image_environment(&base, self.task(task).seed_name()) {
                Ok(e) => e,
                Err(e) => {
                    tracing::debug!("not recycled: {e}");
                    return;
                }
            };
        // The next draw, where it is a task of this base.
        let drawn = self.draw(None);
        let task = if self.shared_base(drawn).as_deref() == Some(base.as_str()) {
            drawn
        } else {
            task
        };
        let mut warm = lock(&self.warm);
        // Checked under the pool's lock: the server clears the pool after it stops.
        if self.stopping.load(Ordering::SeqCst)
            || warm.len() + self.warming.load(Ordering::SeqCst) >= pool_cap(self.cfg.pool)
        {
            return;
        }
        warm.push_back(Warm {
            task,
            base: Some(base),
            worker,
            env,
            kind,
            slot,
            recycled: true,
        });
        lock(&self.metrics).recycled += 1;
    }

    /// Session `s`'s own container as the grader of its submit, in place of a fresh one: a
    /// container of a task base, recycled (nothing the agent left in it stays), the task's
    /// tree loaded as in a fresh container of the task's image. It is removed after
    /// grading, never recycled: no later agent shares a container with the hidden tests.
    /// `None` when it cannot serve (a fresh grader starts).
    pub(crate) fn as_grader(
        &self,
        s: &session::Session,
        mut worker: Box<dyn Worker>,
    ) -> Option<Box<dyn Worker>> {
        s.recycle_to.as_ref()?;
        let tree = self.tree_of(s.task).ok()?;
        let ready = worker.recycle().and_then(|_| worker.load_tree(tree));
        if let Err(e) = ready {
            tracing::debug!(session = %s.id, "grading in a fresh container: {e}");
            return None;
        }
        lock(&self.metrics).graded_in_place += 1;
        Some(worker)
    }

    /// A place under `--max-sessions` for a new session: a free one, else one a warm worker
    /// holds (the oldest warm worker goes).
    pub(crate) fn free_slot(&self) -> Option<session::Slot> {
        if let Some(slot) = self.slots.take() {
            return Some(slot);
        }
        let evicted = lock(&self.warm).pop_front()?;
        Some(evicted.slot)
    }

    /// A warm worker for task `i` (`None`: the next draw's): one of its own in its start
    /// state, else a bare one of its task base. When there is none but workers are being
    /// started or recycled for the pool now, it waits up to `wait` for one of them (a
    /// container that is almost ready beats starting another, which on a loaded machine
    /// takes seconds).
    pub(crate) fn take_warm(&self, i: Option<usize>, wait: std::time::Duration) -> Option<Warm> {
        let base = i.and_then(|i| self.shared_base(i));
        // Only a worker any such reset can take is worth waiting for.
        let may_wait = i.is_none() || base.is_some();
        let deadline = std::time::Instant::now() + wait;
        let mut warm = lock(&self.warm);
        loop {
            let at = match i {
                Some(i) => warm
                    .iter()
                    .position(|w| w.base.is_none() && w.task == i)
                    .or_else(|| {
                        let base = base.as_deref()?;
                        warm.iter().position(|w| w.base.as_deref() == Some(base))
                    }),
                None => (!warm.is_empty()).then_some(0),
            };
            if let Some(at) = at {
                return warm.remove(at);
            }
            let coming =
                self.warming.load(Ordering::SeqCst) + self.recycling.load(Ordering::SeqCst);
            let now = std::time::Instant::now();
            if !may_wait || coming == 0 || now >= deadline {
                return None;
            }
            warm = self
                .warm_ready
                .wait_timeout(warm, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}
