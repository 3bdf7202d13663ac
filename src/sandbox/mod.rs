//! Sandboxes: where tests run. One trait with two backends — `local` (a virtualenv and a temp
//! worktree per worker, no isolation) and `docker` (a per-repository image, long-lived
//! containers per worker, no network).
//!
//! A [`Sandbox`] prepares an [`Environment`] for a repository (dependencies installed once);
//! an environment hands out [`Worker`]s, each with its own clean copy of the repository that is
//! reset between candidates.

pub mod docker;
pub mod image;
pub mod local;
pub mod task_image;

use crate::repo::Repo;
use crate::run::RunEnd;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("preparing the environment for `{repo}` failed: {detail}")]
    Prepare { repo: String, detail: String },
    #[error("patch does not apply: {0}")]
    Patch(String),
    #[error("resetting the worktree failed: {0}")]
    Reset(String),
    #[error("sandbox I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}

/// Resource limits applied to every command a worker runs.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Address-space / memory limit in bytes.
    pub memory_bytes: u64,
    /// Maximum number of processes (tasks) at once.
    pub pids: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 4 << 30,
            pids: 512,
        }
    }
}

/// What a command did.
#[derive(Clone, Debug)]
pub struct ExecOutput {
    pub end: RunEnd,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub duration: Duration,
    /// Processes of this command the kernel's OOM killer ended (0 where the backend cannot
    /// tell: the local backend's memory limit shows as `MemoryError` instead).
    pub oom_kills: u64,
}

/// One test process to run through a worker's resident runner (`src/runner/resident.py`): a
/// long-lived interpreter that has pre-imported pytest, its plugins and `warm`, and forks a
/// child per run with the run's limits.
#[derive(Clone, Debug)]
pub struct ResidentRun<'a> {
    /// pytest's arguments (what follows `python -m pytest`).
    pub args: &'a [String],
    /// The CPU-time limit of the child.
    pub cpu: Option<Duration>,
    /// Module names the resident pre-imports (a resident started with another list is
    /// replaced).
    pub warm: &'a [String],
    /// Write the modules the child imported from outside the repository to
    /// [`RESIDENT_IMPORTS`] in the scratch directory.
    pub imports: bool,
}

/// The scratch file a resident run with `imports` writes (one module name per line).
pub const RESIDENT_IMPORTS: &str = "resident-imports.txt";

/// What came of a resident run.
#[derive(Clone, Debug)]
pub enum ResidentExec {
    /// The run's outcome, as `exec` would give it (the CPU time in the scratch's `times.txt`).
    Ran(ExecOutput),
    /// The resident started but forking it is not safe (a pre-imported module started a
    /// thread…): nothing ran.
    Unsafe(String),
    /// This worker has no resident runner.
    Unsupported,
}

/// A backend that can prepare environments for repositories.
pub trait Sandbox: Send + Sync {
    /// `local` or `docker`.
    fn kind(&self) -> &'static str;
    /// Install the repository's dependencies and test tools (cached between runs).
    fn prepare(&self, repo: &Repo) -> Result<Arc<dyn Environment>, SandboxError>;
}

/// A repository's prepared environment.
pub trait Environment: Send + Sync {
    /// The image a task record names (`None` for the local backend).
    fn image_name(&self) -> Option<String>;
    /// The image's id (`None` for the local backend).
    fn image_id(&self) -> Option<String> {
        None
    }
    /// Whether preparing the environment built its image (false when it was reused).
    fn image_built(&self) -> bool {
        false
    }
    /// A worker with its own clean copy of the repository.
    fn worker(&self, index: usize) -> Result<Box<dyn Worker>, SandboxError>;
}

/// One worker: a clean checkout that commands run in, reset between candidates.
pub trait Worker: Send {
    /// The repository root as commands see it.
    fn root(&self) -> &str;
    /// A scratch directory (outside the repository) for reports, as commands see it.
    fn scratch(&self) -> &str;
    /// Run a shell script at the repository root with a hard timeout; the whole process tree is
    /// killed when it fires, and after the script ends.
    fn exec(&mut self, script: &str, timeout: Duration) -> Result<ExecOutput, SandboxError>;
    /// `git apply` a unified diff at the repository root.
    fn apply_patch(&mut self, patch: &str) -> Result<(), SandboxError>;
    /// Restore the clean tree: tracked files back to the commit, untracked files removed.
    fn reset(&mut self) -> Result<(), SandboxError>;
    /// Read a file from the scratch directory (`None` when absent).
    fn read_scratch(&mut self, name: &str) -> Result<Option<Vec<u8>>, SandboxError>;
    /// Empty the scratch directory.
    fn clear_scratch(&mut self) -> Result<(), SandboxError>;
    /// Run one test process through this worker's resident runner (started, or replaced when
    /// its `warm` list differs, on demand), with the same limits and environment as `exec` and
    /// the wall-clock `timeout`; whatever the child leaves is killed after it.
    fn resident_run(
        &mut self,
        _run: &ResidentRun<'_>,
        _timeout: Duration,
    ) -> Result<ResidentExec, SandboxError> {
        Ok(ResidentExec::Unsupported)
    }
}

/// Quote a string for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(
            shell_quote("tests/test_a.py::test_x"),
            "tests/test_a.py::test_x"
        );
        assert_eq!(shell_quote("t.py::test[a b]"), "'t.py::test[a b]'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
