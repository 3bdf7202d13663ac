//! The routes' unit tests: sessions of a fake worker.

use super::*;
use crate::run::RunEnd;
use crate::sandbox::{Environment, ExecOutput, SandboxChoice, SandboxError, SandboxKind, Worker};
use std::sync::Mutex;
use std::time::Duration;

/// What the fake worker does.
#[derive(Clone, Copy, PartialEq)]
enum Next {
    /// Exits 0, but a command with `kill -9 -1` kills the sandbox's agent: signalled,
    /// and a loss.
    Ok,
    /// Every command is killed so (say, a process the agent left behind kills the agent
    /// while the submit reads the tree).
    KillsAgent,
    /// Every command fails on our side (the engine answers an error): no loss.
    OursFails,
    /// Exits 0; the agent's diff is an edit of the task's source file.
    Edits,
}

struct Fake {
    next: Next,
    losses: u64,
    /// Cleared when the worker (its container) goes.
    alive: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(a) = &self.alive {
            a.store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl Worker for Fake {
    fn root(&self) -> &str {
        "/testbed"
    }
    fn scratch(&self) -> &str {
        "/scratch"
    }
    fn exec(&mut self, script: &str, _t: Duration) -> Result<ExecOutput, SandboxError> {
        let out = |exit_code: Option<i32>, signal: Option<i32>| ExecOutput {
            end: if signal.is_some() {
                RunEnd::Signaled
            } else {
                RunEnd::Exited
            },
            exit_code,
            signal,
            stdout: Vec::new(),
            stderr: Vec::new(),
            duration: Duration::ZERO,
            oom_kills: 0,
        };
        match self.next {
            Next::Edits if script.contains("git diff --cached") => Ok(ExecOutput {
                stdout: crate::audit::tests::task("x").patch.into_bytes(),
                ..out(Some(0), None)
            }),
            Next::Edits => Ok(out(Some(0), None)),
            Next::Ok if !script.contains("kill -9 -1") => Ok(out(Some(0), None)),
            Next::Ok | Next::KillsAgent => {
                self.losses += 1;
                Ok(out(None, Some(9)))
            }
            Next::OursFails => Err(SandboxError::Other("docker: the engine is gone".into())),
        }
    }
    fn apply_patch(&mut self, _patch: &str) -> Result<(), SandboxError> {
        Ok(())
    }
    fn reset(&mut self) -> Result<(), SandboxError> {
        Ok(())
    }
    fn read_scratch(&mut self, _name: &str) -> Result<Option<Vec<u8>>, SandboxError> {
        Ok(None)
    }
    fn clear_scratch(&mut self) -> Result<(), SandboxError> {
        Ok(())
    }
    fn losses(&self) -> u64 {
        self.losses
    }
}

struct FakeEnv;

impl Environment for FakeEnv {
    fn image_name(&self) -> Option<String> {
        None
    }
    fn worker(&self, _index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        Err(SandboxError::Other("no graders here".into()))
    }
}

/// An environment whose graders record what they found when they started.
struct GraderEnv {
    /// The session's worker, alive or gone.
    session_worker: Arc<std::sync::atomic::AtomicBool>,
    slots: Arc<crate::serve::session::Slots>,
    /// (the session's worker alive, slots in use) at each grader's start.
    seen: Mutex<Vec<(bool, usize)>>,
}

impl GraderEnv {
    fn grader(&self) -> Result<Box<dyn Worker>, SandboxError> {
        let alive = self
            .session_worker
            .load(std::sync::atomic::Ordering::SeqCst);
        self.seen.lock().unwrap().push((alive, self.slots.used()));
        Err(SandboxError::Other("no graders here".into()))
    }
}

impl Environment for GraderEnv {
    fn image_name(&self) -> Option<String> {
        None
    }
    fn worker(&self, _index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        self.grader()
    }
}

#[test]
fn a_grader_takes_the_place_of_the_session_it_grades() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::open(config(dir.path(), SandboxChoice::Local, true)).unwrap();
    let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let env = Arc::new(GraderEnv {
        session_worker: Arc::clone(&alive),
        slots: Arc::clone(&server.slots),
        seen: Mutex::new(Vec::new()),
    });
    let worker = Box::new(Fake {
        next: Next::Edits,
        losses: 0,
        alive: Some(Arc::clone(&alive)),
    });
    let slot = server.slots.take().unwrap();
    let s = Session::new(0, worker, env.clone(), SandboxKind::Docker, Some(slot));
    let id = s.id.clone();
    lock(&server.sessions).insert(id.clone(), crate::serve::Entry::new(s));
    // The grader cannot start here: the session fails, but only after the grader was asked.
    let e = do_step(&server, &id, &json!({"tool": "submit"})).unwrap_err();
    assert_eq!(e.0, StatusCode::INTERNAL_SERVER_ERROR, "{}", e.1);
    assert!(e.1.contains("no graders here"), "{}", e.1);
    // One grader, started after the session's container went (the local sandbox's workers
    // are not recycled into graders), under the session's own place (one slot in use: no
    // second one taken past --max-sessions).
    assert_eq!(*env.seen.lock().unwrap(), vec![(false, 1)]);
    assert_eq!(server.slots.used(), 0, "the session's place is free again");
}

fn config(dir: &std::path::Path, sandbox: SandboxChoice, unsafe_local: bool) -> ServeConfig {
    let tasks = dir.join("tasks.jsonl");
    let task = crate::audit::tests::task("pyshelf__py-arith__0123abcd");
    std::fs::write(&tasks, serde_json::to_string(&task).unwrap() + "\n").unwrap();
    ServeConfig {
        tasks,
        addr: "127.0.0.1:0".parse().unwrap(),
        max_sessions: 4,
        pool: 0,
        sandbox,
        cache: dir.join("cache"),
        limits: crate::sandbox::Limits::default(),
        token: None,
        idle_timeout: Duration::from_secs(60),
        grade_repeats: 1,
        zero_flagged: true,
        unsafe_local,
        id_style: crate::export::IdStyle::Opaque,
        db: dir.join("serve.db"),
        seed: 0,
        generate: false,
        generate_batch: 0,
        manifest: None,
        target: 0.5,
        allow_origins: Vec::new(),
        max_tree_mb: 1024,
    }
}

use super::super::ServeConfig;

/// A server on the local sandbox (no environment is prepared) with one session of a fake
/// worker whose next command does `next`.
fn session(next: Next) -> (tempfile::TempDir, Server, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::open(config(dir.path(), SandboxChoice::Local, true)).unwrap();
    let worker = Box::new(Fake {
        next,
        losses: 0,
        alive: None,
    });
    let s = Session::new(0, worker, Arc::new(FakeEnv), SandboxKind::Docker, None);
    let id = s.id.clone();
    lock(&server.sessions).insert(id.clone(), crate::serve::Entry::new(s));
    (dir, server, id)
}

fn bash(command: &str) -> Value {
    json!({"tool": "bash", "arguments": {"command": command}})
}

#[test]
fn killing_the_environment_is_a_submit_with_reward_0() {
    let (_dir, server, id) = session(Next::Ok);
    let r = do_step(&server, &id, &bash("ls")).unwrap();
    assert_eq!(r["done"], false, "{r}");
    let r = do_step(&server, &id, &bash("kill -9 -1")).unwrap();
    assert_eq!(r["reward"], 0.0, "{r}");
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["info"]["failure_type"], AGENT_KILLED_ENVIRONMENT, "{r}");
    assert_eq!(
        r["observation"]["failure_type"], AGENT_KILLED_ENVIRONMENT,
        "{r}"
    );
    let st = do_state(&server, &id).unwrap();
    assert_eq!(st.status, Status::Submitted);
    assert_eq!(st.reward, Some(0.0));
    assert_eq!(st.detail, KILLED_DETAIL);
    // The state shows the opaque id, not the record's.
    assert!(!st.task_id.contains("py-arith"), "{}", st.task_id);
    let m = lock(&server.metrics).clone();
    assert_eq!(m.submits, 1);
    assert_eq!(m.failure_types[AGENT_KILLED_ENVIRONMENT], 1);
    assert_eq!(m.sessions_ended["submitted"], 1);
    assert_eq!(m.steps, 2, "the killing step counts once");
    let cur = lock(&server.curriculum);
    assert_eq!(cur.0.task_stats(0).attempts, 1);
    assert_eq!(cur.0.task_stats(0).successes, 0);
    drop(cur);
    // The episode is over.
    let e = do_step(&server, &id, &bash("ls")).unwrap_err();
    assert_eq!(e.0, StatusCode::CONFLICT, "{}", e.1);
}

#[test]
fn an_environment_lost_while_the_submit_reads_it_is_the_agents() {
    let (_dir, server, id) = session(Next::KillsAgent);
    let r = do_step(&server, &id, &json!({"tool": "submit"})).unwrap();
    assert_eq!(r["reward"], 0.0, "{r}");
    assert_eq!(r["info"]["failure_type"], AGENT_KILLED_ENVIRONMENT, "{r}");
    assert_eq!(lock(&server.metrics).tool_calls["submit"], 1);
}

#[test]
fn a_failure_of_ours_stays_a_failed_session() {
    let (_dir, server, id) = session(Next::OursFails);
    let e = do_step(&server, &id, &bash("ls")).unwrap_err();
    assert_eq!(e.0, StatusCode::INTERNAL_SERVER_ERROR, "{}", e.1);
    assert_eq!(do_state(&server, &id).unwrap().status, Status::Failed);
    let m = lock(&server.metrics).clone();
    assert_eq!(m.submits, 0);
    assert_eq!(m.sessions_ended["failed"], 1);
}

#[test]
fn the_local_sandbox_needs_unsafe_local() {
    let dir = tempfile::tempdir().unwrap();
    let e = Server::open(config(dir.path(), SandboxChoice::Local, false))
        .err()
        .expect("refused");
    assert!(matches!(e, super::super::ServeError::UnsafeLocal(_)), "{e}");
    let text = e.to_string();
    assert!(text.contains("--unsafe-local"), "{text}");
    assert!(text.contains("gold patch"), "{text}");
    let server = Server::open(config(dir.path(), SandboxChoice::Local, true)).unwrap();
    assert!(server.may_run_local());
    // The task is found by its opaque id and by its record's id.
    let shown = server.shown_id(0);
    assert_eq!(
        shown,
        crate::export::opaque_id("pyshelf__py-arith__0123abcd", "pyshelf")
    );
    assert_eq!(server.task_index(&shown), Some(0));
    assert_eq!(server.task_index("pyshelf__py-arith__0123abcd"), Some(0));
}
