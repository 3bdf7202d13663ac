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
                    Ok((worker, env, kind)) => lock(&s.warm).push_back(Warm {
                        task: i,
                        base,
                        worker,
                        env,
                        kind,
                        slot,
                    }),
                    Err(e) => {
                        tracing::warn!(task = %s.task(i).instance_id, "warming a worker: {e}")
                    }
                }
                s.warming.fetch_sub(1, Ordering::SeqCst);
            });
        }
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
    /// state, else a bare one of its task base.
    pub(crate) fn take_warm(&self, i: Option<usize>) -> Option<Warm> {
        let base = i.and_then(|i| self.shared_base(i));
        let mut warm = lock(&self.warm);
        let at = match i {
            Some(i) => warm
                .iter()
                .position(|w| w.base.is_none() && w.task == i)
                .or_else(|| {
                    let base = base.as_deref()?;
                    warm.iter().position(|w| w.base.as_deref() == Some(base))
                })?,
            None => 0,
        };
        warm.remove(at)
    }
}
