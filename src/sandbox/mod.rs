//! Sandboxes: where tests run. One trait with two backends — `local` (a virtualenv and a temp
//! worktree per worker, no isolation) and `docker` (a per-repository image, long-lived
//! containers per worker, no network).
//!
//! A [`Sandbox`] prepares an [`Environment`] for a repository (dependencies installed once);
//! an environment hands out [`Worker`]s, each with its own clean copy of the repository that is
//! reset between candidates. What an environment is made from comes from the repository's
//! toolchain as data ([`recipe`]): the sandboxes never ask which language they serve.

pub mod choose;
pub mod docker;
pub mod image;
pub mod local;
pub mod recipe;
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
    /// The most a worker's container may write to its own file system, where the Docker
    /// storage driver can hold it to that (`--storage-opt size`: overlay2 on xfs with project
    /// quotas, btrfs, zfs...); elsewhere unset in effect, and callers that need a bound check
    /// the repository's size themselves (`serve --max-tree-mb`). `None`: no limit.
    pub storage_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 4 << 30,
            pids: 512,
            storage_bytes: None,
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

/// A resident runner program: a long-lived process per worker that runs test requests (the
/// pytest one, `src/runner/resident.py`, forks a child per run; the JVM one,
/// `dockerfiles/java/Resident.java`, runs them in-process). The sandboxes start it without
/// knowing what it is: the command, then its first input line; it greets with a JSON line
/// ([`crate::runner::resident::Greeting`]) and answers each request line with one
/// ([`crate::runner::resident::Reply`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentProgram {
    /// The command, started at the repository root with the commands' environment (`argv[0]`
    /// is looked up on the commands' `PATH`).
    pub argv: Vec<String>,
    /// Its first input line (a JSON object). A resident started with another `argv` or
    /// `start` is replaced.
    pub start: serde_json::Value,
    /// The program runs the tests in its own process (no child per run): it runs under the
    /// commands' limits and process containment itself, and after each run every other
    /// process of the worker is killed. Otherwise only its children do, and it is spared.
    pub contained: bool,
}

/// One test process to run through a worker's resident runner.
#[derive(Clone, Debug)]
pub struct ResidentRun<'a> {
    /// The request's arguments (for pytest's resident, what follows `python -m pytest`).
    pub args: &'a [String],
    /// The CPU-time limit of the run.
    pub cpu: Option<Duration>,
    /// The resident to run it in (started, or replaced, on demand).
    pub program: &'a ResidentProgram,
    /// Write the modules the child imported from outside the repository to
    /// [`RESIDENT_IMPORTS`] in the scratch directory.
    pub imports: bool,
    /// Per-file test budgets (seconds a test of the file may take), which the child's probe
    /// enforces; `None`: none.
    pub budgets: Option<&'a std::collections::BTreeMap<String, f64>>,
}

/// The scratch file a resident run with `imports` writes (one module name per line).
pub const RESIDENT_IMPORTS: &str = "resident-imports.txt";

/// What came of a resident run.
#[derive(Clone, Debug)]
pub enum ResidentExec {
    /// The run's outcome, as `exec` would give it (the CPU time in the scratch's `times.txt`).
    Ran(ExecOutput),
    /// The resident died or hung without answering (a test ended it, or the OOM killer): the
    /// run's end as far as it can be told; the next run starts a new resident.
    Lost(ExecOutput),
    /// The resident started but forking it is not safe (a pre-imported module started a
    /// thread…): nothing ran.
    Unsafe(String),
    /// This worker has no resident runner.
    Unsupported,
}

/// Which sandbox backend a user asks for (`--sandbox`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxChoice {
    /// Docker when its daemon answers (and a base image can be had), else local.
    Auto,
    Docker,
    Local,
}

/// The backend a sandbox is: what code that must treat them differently compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    /// Tests run on this host, without isolation.
    Local,
    /// Tests run in containers of the repository's image.
    Docker,
}

impl SandboxKind {
    /// `local` or `docker`, as records and logs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::Local => "local",
            SandboxKind::Docker => "docker",
        }
    }
}

impl std::fmt::Display for SandboxKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A backend that can prepare environments for repositories.
pub trait Sandbox: Send + Sync {
    fn kind(&self) -> SandboxKind;
    /// Install the repository's dependencies and test tools (cached between runs), as its
    /// toolchain's recipe says.
    fn prepare(
        &self,
        repo: &Repo,
        recipe: &recipe::EnvRecipe,
    ) -> Result<Arc<dyn Environment>, SandboxError>;
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
    /// The image whose workers, given [`Environment::tree`] by [`Worker::load_tree`], are
    /// workers of this environment: a task image's task base, which every task of its
    /// repository image shares and which holds no repository of its own. `None` where the
    /// backend has no such thing or the image is not a task image.
    fn shared_base(&self) -> Result<Option<String>, SandboxError> {
        Ok(None)
    }
    /// This environment's repository tree (its root, with `.git`) as a tar whose entries
    /// start with the root's name, read without starting a worker; `None` where the backend
    /// cannot.
    fn tree(&self) -> Result<Option<Vec<u8>>, SandboxError> {
        Ok(None)
    }
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

    /// [`Worker::exec`], then the repository's size written to the file `size_file` as
    /// `du -sk .` writes it (KiB, a tab, the path), whatever the script's exit: where a
    /// session's growth is watched. `script` runs in a subshell of its own.
    fn exec_and_measure(
        &mut self,
        script: &str,
        timeout: Duration,
        size_file: &str,
    ) -> Result<ExecOutput, SandboxError> {
        self.exec(
            &format!(
                "(\n{script}\n)\nrc=$?\ndu -sk . 2>/dev/null > {}\nexit $rc",
                shell_quote(size_file)
            ),
            timeout,
        )
    }

    /// `git apply` a unified diff at the repository root.
    fn apply_patch(&mut self, patch: &str) -> Result<(), SandboxError>;
    /// Restore the clean tree: tracked files back to the commit, untracked files removed.
    fn reset(&mut self) -> Result<(), SandboxError>;
    /// Read a file from the scratch directory (`None` when absent).
    fn read_scratch(&mut self, name: &str) -> Result<Option<Vec<u8>>, SandboxError>;
    /// Empty the scratch directory.
    fn clear_scratch(&mut self) -> Result<(), SandboxError>;
    /// Run one test process through this worker's resident runner (started, or replaced when
    /// its program differs, on demand), with the same limits and environment as `exec` and
    /// the wall-clock `timeout`; whatever the run leaves is killed after it.
    fn resident_run(
        &mut self,
        _run: &ResidentRun<'_>,
        _timeout: Duration,
    ) -> Result<ResidentExec, SandboxError> {
        Ok(ResidentExec::Unsupported)
    }

    /// How many times this worker lost its state on its own: its container replaced, or its
    /// agent restarted with the tree to be reset before the next command (a command that
    /// killed it, a container killed from outside). Verification resets before every run and
    /// does not care; a caller that keeps state in the worker from command to command (an
    /// agent's session in `serve`) must not go on once this changed.
    fn losses(&self) -> u64 {
        0
    }

    /// Put a repository tree ([`Environment::tree`] of an environment whose
    /// [`Environment::shared_base`] this worker's is) at the root, once, before any command:
    /// the worker then is one of that environment's, and stays so if it is replaced.
    fn load_tree(&mut self, _tar: std::sync::Arc<Vec<u8>>) -> Result<(), SandboxError> {
        Err(SandboxError::Other(
            "this sandbox cannot load a repository tree into a worker".to_string(),
        ))
    }

    /// Let interactive work run first: this worker's processes get a lower CPU weight (a
    /// grader, whose caller waits for its whole run, beside sessions that wait on each step),
    /// never so low that a run of its waits out its wall limit on a busy machine. `Ok` and
    /// nothing done where the sandbox has no weights.
    fn yield_cpu(&mut self) -> Result<(), SandboxError> {
        Ok(())
    }

    /// Bring this worker back to the state it started in, as a worker of its image with no
    /// tree loaded: every process of the test user killed and everything it could have
    /// written emptied, the repository root included. `Err` where that cannot be shown (the
    /// caller drops the worker); a recycled worker takes a tree ([`Worker::load_tree`])
    /// before its next command.
    fn recycle(&mut self) -> Result<(), SandboxError> {
        Err(SandboxError::Other(
            "this sandbox cannot recycle a worker".to_string(),
        ))
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
