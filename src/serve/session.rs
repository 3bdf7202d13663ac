//! Session: one agent's episode on one task: its worker (a container of the task's image, in
//! the start state), its status, counters, and its row in the sessions database (SQLite), so
//! that a restarted server reports the sessions it lost as ended.

use super::ServeError;
use crate::sandbox::{shell_quote, Environment, SandboxKind, Worker};
use crate::task::Task;
use rusqlite::{params, Connection};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Taking actions.
    Active,
    /// `submit` graded it.
    Submitted,
    /// The client closed it.
    Closed,
    /// Idle longer than the idle timeout.
    TimedOut,
    /// Its environment failed (its container died, say), or the server restarted.
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Submitted => "submitted",
            Status::Closed => "closed",
            Status::TimedOut => "timed-out",
            Status::Failed => "failed",
        }
    }
}

/// What `reset`, `/health`, `/metrics`, `/state` and the reaper read of a session: kept
/// outside the session's lock, which a tool call or a grading holds for as long as it runs,
/// so that reading it never waits on another session's work.
#[derive(Debug)]
pub struct Live {
    inner: std::sync::Mutex<LiveState>,
    steps: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct LiveState {
    status: Status,
    last_active: Instant,
    busy: bool,
}

impl Live {
    fn new() -> Live {
        Live {
            inner: std::sync::Mutex::new(LiveState {
                status: Status::Active,
                last_active: Instant::now(),
                busy: false,
            }),
            steps: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn status(&self) -> Status {
        self.state().status
    }

    pub fn steps(&self) -> u64 {
        self.steps.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Active, no call running, and idle longer than `timeout`.
    pub fn idle_longer_than(&self, timeout: Duration) -> bool {
        let s = self.state();
        s.status == Status::Active && !s.busy && s.last_active.elapsed() > timeout
    }

    /// Ended longer than `kept` ago.
    pub fn ended_longer_than(&self, kept: Duration) -> bool {
        let s = self.state();
        s.status != Status::Active && s.last_active.elapsed() > kept
    }

    /// A call starts (`true`) or ends (`false`): the session is not idle meanwhile.
    pub fn set_busy(&self, busy: bool) {
        let mut s = self.state();
        s.busy = busy;
        s.last_active = Instant::now();
    }
}

/// Marks a session busy while it lives.
pub struct Busy(Arc<Live>);

impl Busy {
    pub fn new(live: &Arc<Live>) -> Busy {
        live.set_busy(true);
        Busy(Arc::clone(live))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.set_busy(false);
    }
}

/// The sessions a server may run at once (`--max-sessions`), counted from before a session's
/// environment starts until the session ends: concurrent resets cannot go past the cap.
#[derive(Debug)]
pub struct Slots {
    used: std::sync::atomic::AtomicUsize,
    max: usize,
}

/// One taken slot, given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<Slots>);

impl Slots {
    pub fn new(max: usize) -> Arc<Slots> {
        Arc::new(Slots {
            used: std::sync::atomic::AtomicUsize::new(0),
            max,
        })
    }

    /// A slot, if fewer than the maximum are taken.
    pub fn take(self: &Arc<Self>) -> Option<Slot> {
        use std::sync::atomic::Ordering;
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(self)))
    }

    pub fn used(&self) -> usize {
        self.used.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0
            .used
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// One episode.
pub struct Session {
    pub id: String,
    /// Index of the task in the server's tasks.
    pub task: usize,
    /// The agent's worker; `None` once the session ended (the container is gone).
    pub worker: Option<Box<dyn Worker>>,
    /// The environment graders are made from.
    pub env: Arc<dyn Environment>,
    pub kind: SandboxKind,
    pub status: Status,
    /// Why it ended, when it did.
    pub detail: String,
    pub steps: u64,
    pub reward: Option<f64>,
    pub created_at: String,
    pub ended_at: Option<String>,
    pub started: Instant,
    /// Seconds spent in tools (not counting grading).
    pub tool_seconds: f64,
    /// Seconds spent grading the submit.
    pub grade_seconds: f64,
    /// Repository files the agent read (`read_file`, or named in a bash command).
    pub opened: BTreeSet<String>,
    /// The submit's `info`, once graded.
    pub info: Option<serde_json::Value>,
    /// What is read without the session's lock.
    pub live: Arc<Live>,
    /// The repository's size (KiB) at the first `bash` step's measurement.
    pub tree_kb_start: Option<u64>,
    /// Its place under `--max-sessions`, given back when it ends.
    slot: Option<Slot>,
    /// Where its container goes when the session ends, when it can be recycled (a container
    /// of a task base; see [`super::warm::Spent`]). `None`: it is removed.
    pub(crate) recycle_to: Option<super::warm::RecycleTo>,
}

/// A session's state, as `/state` answers.
#[derive(Clone, Debug, Serialize)]
pub struct State {
    pub session_id: String,
    pub task_id: String,
    pub status: Status,
    pub steps: u64,
    pub reward: Option<f64>,
    pub created_at: String,
    pub ended_at: Option<String>,
    pub detail: String,
}

impl Session {
    pub fn new(
        task: usize,
        worker: Box<dyn Worker>,
        env: Arc<dyn Environment>,
        kind: SandboxKind,
        slot: Option<Slot>,
    ) -> Session {
        Session {
            live: Arc::new(Live::new()),
            tree_kb_start: None,
            slot,
            recycle_to: None,
            id: new_id(),
            task,
            worker: Some(worker),
            env,
            kind,
            status: Status::Active,
            detail: String::new(),
            steps: 0,
            reward: None,
            created_at: crate::task::now_utc(),
            ended_at: None,
            started: Instant::now(),
            tool_seconds: 0.0,
            grade_seconds: 0.0,
            opened: BTreeSet::new(),
            info: None,
        }
    }

    /// End the session: its worker (container) goes, to be recycled where it can be.
    pub fn end(&mut self, status: Status, detail: &str) {
        if self.status != Status::Active {
            return;
        }
        self.status = status;
        self.detail = detail.to_string();
        self.ended_at = Some(crate::task::now_utc());
        // A container on its way back to the pool keeps its place; otherwise the place is
        // free again.
        let slot = self.slot.take();
        if let (Some(worker), Some(to)) = (self.worker.take(), self.recycle_to.take()) {
            to.send(worker, self.task, slot);
        }
        self.worker = None;
        let mut live = self.live.state();
        live.status = status;
        live.last_active = Instant::now();
    }

    /// One more step.
    pub fn count_step(&mut self) {
        self.steps += 1;
        self.live
            .steps
            .store(self.steps, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn state(&self, task_id: &str) -> State {
        State {
            session_id: self.id.clone(),
            task_id: task_id.to_string(),
            status: self.status,
            steps: self.steps,
            reward: self.reward,
            created_at: self.created_at.clone(),
            ended_at: self.ended_at.clone(),
            detail: self.detail.clone(),
        }
    }
}

/// A session id: 128 random bits, hex.
fn new_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Put a fresh worker of the task's environment in the start state and make that state its
/// HEAD, so that the agent's changes are `git diff HEAD`. A container of the task's own image
/// is there already (its HEAD is `base_commit`, a parentless commit); a worker of the seed's
/// checkout (a repository image, where generated combinations are served; the local sandbox)
/// gets the start patch applied and committed as a parentless commit, every other ref and
/// reflog deleted and the unreachable objects pruned, so that its history holds no fix. (In
/// the local sandbox the worktree may borrow the mirror's objects, and the host is reachable
/// anyway: `--unsafe-local` says so.)
pub fn enter(worker: &mut dyn Worker, task: &Task, kind: SandboxKind) -> Result<(), String> {
    let _ = kind;
    worker.reset().map_err(|e| format!("reset: {e}"))?;
    crate::audit::enter_start_state(worker, task).map_err(|p| p.detail)?;
    // Where HEAD is not the task's own parentless start commit (a repository image, a
    // generated combination, whose base_commit is the clean commit, served from one), the
    // start state becomes a parentless commit
    // and every other ref, reflog and unreachable object goes: no way back to the fix.
    let script = format!(
        "set -e\ngit add -A\n\
         if [ {own} = no ] || git rev-parse -q --verify 'HEAD^' >/dev/null || [ \"$(git rev-parse HEAD)\" != {base} ]; then\n\
         tree=$(git write-tree)\n\
         c=$(git -c user.name=swe-forge -c user.email=swe-forge@localhost commit-tree \"$tree\" -m {msg})\n\
         git update-ref --no-deref HEAD \"$c\"\n\
         git for-each-ref --format='%(refname)' | while read -r r; do git update-ref -d \"$r\"; done\n\
         rm -rf .git/logs .git/ORIG_HEAD .git/FETCH_HEAD .git/MERGE_HEAD .git/refs/original\n\
         git -c gc.auto=0 -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now gc -q --prune=now\n\
         git reset -q\n\
         elif ! git diff --cached --quiet; then \
         git -c user.name=swe-forge -c user.email=swe-forge@localhost -c commit.gpgsign=false \
         commit -q --no-verify -m {msg}; fi",
        base = shell_quote(&task.base_commit),
        // A record whose base_commit is its clean commit has no start commit of its own.
        own = if task.metadata.start_state.is_some() && task.base_commit != task.clean_commit() {
            "yes"
        } else {
            "no"
        },
        msg = shell_quote("start state")
    );
    let out = worker
        .exec(&script, Duration::from_secs(60))
        .map_err(|e| format!("recording the start state: {e}"))?;
    if out.exit_code != Some(0) {
        return Err(format!(
            "recording the start state: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// The sessions database.
pub struct SessionStore {
    db: Connection,
    path: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id          TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    status      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    steps       INTEGER NOT NULL,
    reward      REAL,
    created_at  TEXT NOT NULL,
    ended_at    TEXT,
    info        TEXT
);";

impl SessionStore {
    pub fn open(path: &Path) -> Result<SessionStore, ServeError> {
        let err = |error| ServeError::Db {
            path: path.to_path_buf(),
            error,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let db = Connection::open(path).map_err(err)?;
        db.busy_timeout(Duration::from_secs(10)).map_err(err)?;
        // Every step writes its session's row under the store's one lock: with a write-ahead
        // log and `synchronous = NORMAL` a write is an append, not a transaction that waits
        // for the disk twice (a crash can lose the last writes, never the database).
        let mode: String = db
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::debug!(path = %path.display(), mode, "the sessions database keeps its journal mode");
        }
        db.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        db.execute_batch(SCHEMA).map_err(err)?;
        Ok(SessionStore {
            db,
            path: path.to_path_buf(),
        })
    }

    /// Sessions a previous server left active are ended: `failed`, "the server restarted".
    pub fn end_stale(&self) -> Result<usize, ServeError> {
        self.db
            .execute(
                "UPDATE sessions SET status = 'failed', detail = 'the server restarted', \
                 ended_at = ?1 WHERE status = 'active'",
                params![crate::task::now_utc()],
            )
            .map_err(|error| ServeError::Db {
                path: self.path.clone(),
                error,
            })
    }

    pub fn save(&self, s: &Session, instance_id: &str) -> Result<(), rusqlite::Error> {
        self.db.execute(
            "INSERT INTO sessions (id, instance_id, status, detail, steps, reward, created_at, \
             ended_at, info) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT(id) DO UPDATE SET status = ?3, detail = ?4, steps = ?5, reward = ?6, \
             ended_at = ?8, info = ?9",
            params![
                s.id,
                instance_id,
                s.status.as_str(),
                s.detail,
                s.steps as i64,
                s.reward,
                s.created_at,
                s.ended_at,
                s.info.as_ref().map(|i| i.to_string()),
            ],
        )?;
        Ok(())
    }

    /// A session that is not in memory (a previous server's): its recorded state.
    pub fn load(&self, id: &str) -> Option<State> {
        self.db
            .query_row(
                "SELECT id, instance_id, status, detail, steps, reward, created_at, ended_at \
                 FROM sessions WHERE id = ?1",
                params![id],
                |r| {
                    let status: String = r.get(2)?;
                    Ok(State {
                        session_id: r.get(0)?,
                        task_id: r.get(1)?,
                        status: match status.as_str() {
                            "active" => Status::Active,
                            "submitted" => Status::Submitted,
                            "closed" => Status::Closed,
                            "timed-out" => Status::TimedOut,
                            _ => Status::Failed,
                        },
                        detail: r.get(3)?,
                        steps: r.get::<_, i64>(4)? as u64,
                        reward: r.get(5)?,
                        created_at: r.get(6)?,
                        ended_at: r.get(7)?,
                    })
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_ends_the_sessions_left_active() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.db");
        let store = SessionStore::open(&path).unwrap();
        store
            .db
            .execute(
                "INSERT INTO sessions (id, instance_id, status, detail, steps, created_at) \
                 VALUES ('a', 't', 'active', '', 3, 'x'), ('b', 't', 'submitted', '', 5, 'x')",
                [],
            )
            .unwrap();
        drop(store);
        let store = SessionStore::open(&path).unwrap();
        assert_eq!(store.end_stale().unwrap(), 1);
        let a = store.load("a").unwrap();
        assert_eq!(a.status, Status::Failed);
        assert_eq!(a.detail, "the server restarted");
        assert!(a.ended_at.is_some());
        assert_eq!(store.load("b").unwrap().status, Status::Submitted);
        assert!(store.load("zz").is_none());
    }
}
