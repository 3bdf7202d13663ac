//! The local backend: a host environment per repository where its toolchain's recipe asks for
//! one (Python's virtualenv), a temp worktree per worker, and a subprocess per command in its
//! own process group (and pids cgroup where the host allows one), with rlimits and a hard
//! timeout. It does not isolate: the tests see the host.

use super::recipe::{substitute, EnvDir, EnvRecipe, LocalRecipe};
use super::{Environment, ExecOutput, Limits, Sandbox, SandboxError, SandboxKind, Worker};
use crate::lock::FileLock;
use crate::repo::Repo;
use crate::run::RunEnd;
use std::ffi::CString;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The local backend.
#[derive(Clone, Debug)]
pub struct LocalSandbox {
    cache: PathBuf,
    limits: Limits,
}

impl LocalSandbox {
    /// `cache` holds the host environments (`venvs/`).
    pub fn new(cache: &Path, limits: Limits) -> LocalSandbox {
        LocalSandbox {
            cache: cache.to_path_buf(),
            limits,
        }
    }
}

/// The key of an environment directory: its recipe's key and its key commands' output.
fn env_key(dir: &EnvDir) -> String {
    let mut h = blake3::Hasher::new();
    for part in &dir.key {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    for argv in &dir.key_commands {
        let out = argv.split_first().and_then(|(program, args)| {
            Command::new(program)
                .args(args)
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        });
        h.update(out.unwrap_or_default().as_bytes());
        h.update(b"\0");
    }
    h.finalize().to_hex()[..12].to_string()
}

/// The commands' PATH: the recipe's directories, then the host's.
fn command_path(prefix: &[String], env: &Path) -> String {
    let host = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let mut parts: Vec<String> = prefix
        .iter()
        .map(|p| substitute(p, env, Path::new(""), ""))
        .collect();
    parts.push(host);
    parts.join(":")
}

impl Sandbox for LocalSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Local
    }

    fn prepare(
        &self,
        repo: &Repo,
        recipe: &EnvRecipe,
    ) -> Result<Arc<dyn Environment>, SandboxError> {
        let prep_err = |detail: String| SandboxError::Prepare {
            repo: repo.name.clone(),
            detail,
        };
        let local = &recipe.local;
        for r in &local.requires {
            let Some((program, args)) = r.argv.split_first() else {
                continue;
            };
            run_setup(Command::new(program).args(args), &r.argv.join(" "))
                .map_err(|e| prep_err(format!("{} ({e})", r.hint)))?;
        }
        let env = match &local.env_dir {
            None => self.cache.join("venvs").join("none"),
            Some(dir) => {
                let env = self
                    .cache
                    .join("venvs")
                    .join(format!("{}-{}", repo.name, env_key(dir)));
                make_env_dir(repo, dir, &env, &local.path_prefix).map_err(|e| match e {
                    SetupError::Io(e) => SandboxError::Io(e),
                    SetupError::Step(detail) => prep_err(detail),
                })?;
                env
            }
        };
        let worktrees = tempfile::Builder::new().prefix("swe-forge-wt-").tempdir()?;
        Ok(Arc::new(LocalEnv {
            repo: repo.clone(),
            env,
            recipe: local.clone(),
            limits: self.limits.clone(),
            worktrees,
        }))
    }
}

enum SetupError {
    Io(std::io::Error),
    Step(String),
}

impl From<std::io::Error> for SetupError {
    fn from(e: std::io::Error) -> Self {
        SetupError::Io(e)
    }
}

/// Make the environment directory `env` (once: a marker says it is ready; a lock keeps two
/// processes from making it at once) by running the recipe's steps.
fn make_env_dir(
    repo: &Repo,
    dir: &EnvDir,
    env: &Path,
    path_prefix: &[String],
) -> Result<(), SetupError> {
    let _lock = FileLock::exclusive(&env.with_extension("lock"))?;
    let ready = env.join(".swe-forge-ready");
    if ready.exists() {
        return Ok(());
    }
    tracing::info!(repo = %repo.name, env = %env.display(), "creating the host environment");
    if env.exists() {
        fs::remove_dir_all(env)?;
    }
    let path = command_path(path_prefix, env);
    for step in &dir.steps {
        let argv: Vec<String> = step
            .argv
            .iter()
            .map(|a| substitute(a, env, Path::new(""), &path))
            .collect();
        let Some((program, args)) = argv.split_first() else {
            continue;
        };
        let mut cmd = Command::new(program);
        cmd.args(args);
        for (k, v) in &step.env {
            cmd.env(k, substitute(v, env, Path::new(""), &path));
        }
        // An install runs in a throwaway copy, so build artefacts never touch the checkout.
        let copy = if step.in_copy {
            let tmp = tempfile::tempdir()?;
            let src = tmp.path().join("src");
            copy_tree(&repo.checkout, &src)?;
            cmd.current_dir(&src);
            Some(tmp)
        } else {
            None
        };
        tracing::info!(repo = %repo.name, "{}", step.what);
        run_setup(&mut cmd, &step.what).map_err(SetupError::Step)?;
        drop(copy);
    }
    fs::create_dir_all(env)?;
    fs::write(&ready, b"ok")?;
    Ok(())
}

fn run_setup(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "`{what}` failed ({}):\n{}",
        out.status,
        tail.join("\n")
    ))
}

/// Copy a directory tree (files, permissions, symlinks).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in walkdir::WalkDir::new(from).min_depth(1) {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry
            .path()
            .strip_prefix(from)
            .expect("walkdir yields children");
        let dest = to.join(rel);
        let ft = entry.file_type();
        if ft.is_dir() {
            fs::create_dir_all(&dest)?;
        } else if ft.is_symlink() {
            let target = fs::read_link(entry.path())?;
            std::os::unix::fs::symlink(target, &dest)?;
        } else {
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

struct LocalEnv {
    repo: Repo,
    /// The host environment directory (a virtualenv), or a path that does not exist.
    env: PathBuf,
    recipe: LocalRecipe,
    limits: Limits,
    worktrees: tempfile::TempDir,
}

impl Environment for LocalEnv {
    fn image_name(&self) -> Option<String> {
        None
    }

    fn worker(&self, index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        let base = self.worktrees.path().join(format!("worker-{index}"));
        if base.exists() {
            fs::remove_dir_all(&base)?;
        }
        let root = base.join("repo");
        copy_tree(&self.repo.checkout, &root)?;
        for (name, target) in &self.recipe.beside_root {
            let target = substitute(target, &self.env, &root, "");
            std::os::unix::fs::symlink(&target, base.join(name))?;
        }
        let scratch = base.join("scratch");
        fs::create_dir_all(scratch.join("tmp"))?;
        let path = command_path(&self.recipe.path_prefix, &self.env);
        let vars: Vec<(String, String)> = self
            .recipe
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), substitute(v, &self.env, &root, &path)))
            .collect();
        let cgroup = PidsCgroup::create(
            &format!(
                "swe-forge-{}-{}",
                std::process::id(),
                base.display().to_string().replace('/', "_")
            ),
            self.limits.pids,
        );
        Ok(Box::new(LocalWorker {
            source: self.repo.checkout.clone(),
            base: base.clone(),
            resident: None,
            root_s: root.display().to_string(),
            scratch_s: scratch.display().to_string(),
            root,
            scratch,
            path,
            vars,
            limits: self.limits.clone(),
            cgroup,
        }))
    }
}

/// The longest script passed to bash as an argument; a longer one goes through a file.
const SCRIPT_ARG_BYTES: usize = 100_000;

struct LocalWorker {
    /// The clean checkout the worktree is copied from.
    source: PathBuf,
    /// The worker's directory (worktree, scratch, the resident runner's files).
    base: PathBuf,
    /// The resident runner, once a run asked for it.
    resident: Option<Resident>,
    root: PathBuf,
    scratch: PathBuf,
    root_s: String,
    scratch_s: String,
    /// The commands' PATH.
    path: String,
    /// The recipe's variables, substituted.
    vars: Vec<(String, String)>,
    limits: Limits,
    cgroup: Option<PidsCgroup>,
}

impl LocalWorker {
    /// The working directory and environment of every command (and of the resident runner).
    fn environment(&self, cmd: &mut Command) {
        cmd.current_dir(&self.root)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.scratch.join("tmp"))
            .env("TMPDIR", self.scratch.join("tmp"))
            .env("TZ", "UTC")
            .env("LC_ALL", "C.UTF-8")
            .env("LANG", "C.UTF-8")
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("SWE_FORGE_SCRATCH", &self.scratch);
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
    }

    /// Apply the commands' limits to `cmd`: address space, processes, no core dumps, and the
    /// worker's pids cgroup.
    fn limit(&self, cmd: &mut Command) {
        let memory = self.limits.memory_bytes;
        let pids = self.limits.pids;
        let procs_file = self
            .cgroup
            .as_ref()
            .and_then(|c| CString::new(c.procs_file().as_os_str().as_encoded_bytes()).ok());
        // SAFETY: the closure only calls async-signal-safe functions (setrlimit, open, write,
        // close, getpid) and formats into a stack buffer; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let as_limit = libc::rlimit {
                    rlim_cur: memory,
                    rlim_max: memory,
                };
                libc::setrlimit(libc::RLIMIT_AS, &as_limit);
                let nproc = libc::rlimit {
                    rlim_cur: pids,
                    rlim_max: pids,
                };
                libc::setrlimit(libc::RLIMIT_NPROC, &nproc);
                let core = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &core);
                if let Some(path) = &procs_file {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                    if fd >= 0 {
                        let mut buf = [0u8; 24];
                        let mut n = libc::getpid() as u64;
                        let mut i = buf.len();
                        loop {
                            i -= 1;
                            buf[i] = b'0' + (n % 10) as u8;
                            n /= 10;
                            if n == 0 {
                                break;
                            }
                        }
                        libc::write(fd, buf[i..].as_ptr().cast(), buf.len() - i);
                        libc::close(fd);
                    }
                }
                Ok(())
            });
        }
    }

    /// The resident runner for `program`: the running one, or a new one in its own process
    /// group. A resident that is not `contained` stays outside the worker's cgroup, which only
    /// its children join; a contained one runs under the commands' limits, in the cgroup.
    fn resident_for(
        &mut self,
        program: &super::ResidentProgram,
    ) -> Result<&mut Resident, SandboxError> {
        if self
            .resident
            .as_mut()
            .is_some_and(|r| r.program != *program || !matches!(r.child.try_wait(), Ok(None)))
        {
            self.resident = None;
        }
        if self.resident.is_none() {
            let (name, rest) = program
                .argv
                .split_first()
                .ok_or_else(|| SandboxError::Other("a resident runner with no command".into()))?;
            tracing::debug!(worktree = %self.root.display(), command = %name, "starting a resident runner");
            let log = fs::File::create(self.base.join("resident.log"))?;
            let mut cmd = Command::new(find_on_path(name, &self.path));
            cmd.args(rest);
            self.environment(&mut cmd);
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(log)
                .process_group(0);
            if program.contained {
                self.limit(&mut cmd);
            }
            let mut child = cmd.spawn()?;
            let mut stdin = child.stdin.take().expect("piped");
            {
                use std::io::Write;
                let mut start = serde_json::to_vec(&program.start).expect("a JSON value encodes");
                start.push(b'\n');
                stdin.write_all(&start)?;
                stdin.flush()?;
            }
            let stdout = child.stdout.take().expect("piped");
            let mut r = Resident {
                child,
                stdin,
                stdout,
                buf: Vec::new(),
                program: program.clone(),
                unsafe_reason: None,
            };
            let greeting = r
                .read_line(Instant::now() + RESIDENT_START)
                .map_err(|e| SandboxError::Other(format!("starting the resident runner: {e}")))?;
            let hello: crate::runner::resident::Greeting = serde_json::from_slice(&greeting)
                .map_err(|e| SandboxError::Other(format!("resident runner greeting: {e}")))?;
            r.unsafe_reason = hello.unsafe_reason;
            self.resident = Some(r);
        }
        Ok(self.resident.as_mut().expect("set above"))
    }

    fn git(&self, args: &[&str]) -> Result<(), String> {
        // GIT_DIR pinned: when a command deleted the worktree's `.git`, git must fail rather
        // than find an enclosing repository and reset that one.
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_DIR", self.root.join(".git"))
            .env("GIT_WORK_TREE", &self.root)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl Worker for LocalWorker {
    fn root(&self) -> &str {
        &self.root_s
    }

    fn scratch(&self) -> &str {
        &self.scratch_s
    }

    fn exec(&mut self, script: &str, timeout: Duration) -> Result<ExecOutput, SandboxError> {
        let out_path = self.scratch.join(".stdout");
        let err_path = self.scratch.join(".stderr");
        let stdout = fs::File::create(&out_path)?;
        let stderr = fs::File::create(&err_path)?;
        let mut cmd = Command::new("bash");
        if script.len() > SCRIPT_ARG_BYTES {
            // One argument may hold at most 128 KiB (Linux's MAX_ARG_STRLEN): a run that
            // names a few thousand tests is handed to bash as a file instead.
            let path = self.base.join(".exec-script.sh");
            fs::write(&path, script)?;
            cmd.arg(&path);
        } else {
            cmd.args(["-c", script]);
        }
        self.environment(&mut cmd);
        cmd.stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0);
        self.limit(&mut cmd);
        let started = Instant::now();
        let mut child = cmd.spawn()?;
        let pgid = child.id() as i32;
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if started.elapsed() >= timeout {
                timed_out = true;
                kill_group(pgid);
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let duration = started.elapsed();
        // Whatever the script left behind (daemons, forked children) goes too; a contained
        // resident runner, in the same cgroup, is spared.
        kill_group(pgid);
        if let Some(cg) = &self.cgroup {
            match self.resident.as_ref().filter(|r| r.program.contained) {
                Some(r) => cg.kill_all_except(r.child.id() as i32),
                None => cg.kill_all(),
            }
        }
        let (end, exit_code, signal) = if timed_out {
            (RunEnd::TimedOut, None, Some(libc::SIGKILL))
        } else if let Some(code) = status.code() {
            (RunEnd::Exited, Some(code), None)
        } else {
            (RunEnd::Signaled, None, status.signal())
        };
        Ok(ExecOutput {
            end,
            exit_code,
            signal,
            stdout: fs::read(&out_path).unwrap_or_default(),
            stderr: fs::read(&err_path).unwrap_or_default(),
            duration,
            oom_kills: 0,
        })
    }

    fn apply_patch(&mut self, patch: &str) -> Result<(), SandboxError> {
        let path = self.scratch.join(".patch");
        fs::write(&path, patch)?;
        let p = path.display().to_string();
        self.git(&["apply", "--whitespace=nowarn", &p])
            .map_err(SandboxError::Patch)
    }

    fn reset(&mut self) -> Result<(), SandboxError> {
        // `-f` twice: a directory holding a `.git` of its own (a copy of the worktree that
        // code under test or a synthesis search made, `copy_tree('.', 'fr')`) goes too; with
        // one `-f` git keeps nested repositories, and the next runs collected their tests.
        let reset = self
            .git(&["checkout", "-q", "-f", "HEAD", "--", "."])
            .and_then(|_| self.git(&["clean", "-q", "-f", "-f", "-d", "-x"]));
        if let Err(e) = reset {
            // The command wrecked the worktree (deleted `.git`, say): copy it afresh.
            tracing::warn!(worktree = %self.root.display(), "git reset failed ({e}); copying the checkout again");
            if self.root.exists() {
                fs::remove_dir_all(&self.root)?;
            }
            copy_tree(&self.source, &self.root)?;
        }
        Ok(())
    }

    fn resident_run(
        &mut self,
        run: &super::ResidentRun<'_>,
        timeout: Duration,
    ) -> Result<super::ResidentExec, SandboxError> {
        use std::io::Write;
        let out_path = self.scratch.join(".stdout");
        let err_path = self.scratch.join(".stderr");
        let request = crate::runner::resident::Request {
            args: run.args,
            timeout: timeout.as_secs_f64().max(0.001),
            cpu: run.cpu.map(|c| c.as_secs_f64()),
            stdout: out_path.display().to_string(),
            stderr: err_path.display().to_string(),
            times: self
                .scratch
                .join(crate::runner::TIMES)
                .display()
                .to_string(),
            address_space: Some(self.limits.memory_bytes),
            nproc: Some(self.limits.pids),
            procs: self
                .cgroup
                .as_ref()
                .map(|c| c.procs_file().display().to_string()),
            imports: run.imports.then(|| {
                self.scratch
                    .join(super::RESIDENT_IMPORTS)
                    .display()
                    .to_string()
            }),
            budgets: run.budgets,
        };
        let mut line = serde_json::to_vec(&request)
            .map_err(|e| SandboxError::Other(format!("encoding a resident request: {e}")))?;
        line.push(b'\n');
        let started = Instant::now();
        let resident = match self.resident_for(run.program) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(worktree = %self.root.display(), "no resident runner: {e}");
                self.resident = None;
                return Ok(super::ResidentExec::Unsafe(format!(
                    "the resident runner did not start: {e}"
                )));
            }
        };
        if let Some(why) = &resident.unsafe_reason {
            return Ok(super::ResidentExec::Unsafe(why.clone()));
        }
        let pid = resident.child.id() as i32;
        let answer = resident
            .stdin
            .write_all(&line)
            .and_then(|_| resident.stdin.flush())
            .map_err(|e| e.to_string())
            .and_then(|_| resident.read_line(started + timeout + RESIDENT_GRACE));
        // Whatever the run left in the worker's cgroup goes too (a contained resident is
        // spared).
        if let Some(cg) = &self.cgroup {
            if run.program.contained {
                cg.kill_all_except(pid);
            } else {
                cg.kill_all();
            }
        }
        let reply: crate::runner::resident::Reply = match answer
            .and_then(|l| serde_json::from_slice(&l).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                // The resident hung or died (a test killed it): it goes, with its group; the
                // next run starts a new one.
                tracing::debug!(worktree = %self.root.display(), "resident runner lost: {e}");
                self.resident = None;
                let timed_out = started.elapsed() >= timeout;
                return Ok(super::ResidentExec::Lost(ExecOutput {
                    end: if timed_out {
                        RunEnd::TimedOut
                    } else {
                        RunEnd::Signaled
                    },
                    exit_code: None,
                    signal: Some(libc::SIGKILL),
                    stdout: fs::read(&out_path).unwrap_or_default(),
                    stderr: format!("swe-forge: the resident runner was lost ({e})\n").into_bytes(),
                    duration: started.elapsed(),
                    oom_kills: 0,
                }));
            }
        };
        if reply.exiting {
            tracing::debug!(worktree = %self.root.display(), "the resident runner exits after this run");
            self.resident = None;
        }
        Ok(super::ResidentExec::Ran(reply.into_exec(
            fs::read(&out_path).unwrap_or_default(),
            fs::read(&err_path).unwrap_or_default(),
            0,
        )))
    }

    fn read_scratch(&mut self, name: &str) -> Result<Option<Vec<u8>>, SandboxError> {
        match fs::read(self.scratch.join(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn clear_scratch(&mut self) -> Result<(), SandboxError> {
        for entry in fs::read_dir(&self.scratch)? {
            let entry = entry?;
            if entry.file_name() == "tmp" {
                // Keep the directory, empty its contents.
                let _ = fs::remove_dir_all(entry.path());
                fs::create_dir_all(entry.path())?;
            } else if entry.file_type()?.is_dir() {
                fs::remove_dir_all(entry.path())?;
            } else {
                fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    }
}

/// How long a resident runner may take to pre-import pytest and its modules.
const RESIDENT_START: Duration = Duration::from_secs(120);
/// The resident's own grace beyond a run's timeout (it enforces the timeout itself).
const RESIDENT_GRACE: Duration = Duration::from_secs(10);

/// A resident runner process (`src/runner/resident.py`) and its pipes.
struct Resident {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::process::ChildStdout,
    buf: Vec<u8>,
    program: super::ResidentProgram,
    unsafe_reason: Option<String>,
}

impl Resident {
    /// One line from the resident, by `deadline`.
    fn read_line(&mut self, deadline: Instant) -> Result<Vec<u8>, String> {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        loop {
            if let Some(nl) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=nl).collect();
                return Ok(line);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("no answer in time".into());
            }
            let mut fds = libc::pollfd {
                fd: self.stdout.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd on the stack for the duration of the call.
            let n = unsafe { libc::poll(&mut fds, 1, ms.max(1)) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e.to_string());
            }
            if n == 0 {
                continue;
            }
            let mut chunk = [0u8; 8192];
            match self.stdout.read(&mut chunk) {
                Ok(0) => return Err("the resident runner exited".into()),
                Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        kill_group(self.child.id() as i32);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LocalWorker {
    fn drop(&mut self) {
        self.resident = None;
        if let Some(cg) = self.cgroup.take() {
            cg.kill_all();
            cg.remove();
        }
    }
}

/// `name` as found on `path` (colon-separated); `name` itself when it holds a slash or is not
/// found.
fn find_on_path(name: &str, path: &str) -> PathBuf {
    if !name.contains('/') {
        for dir in path.split(':').filter(|d| !d.is_empty()) {
            let candidate = Path::new(dir).join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    PathBuf::from(name)
}

fn kill_group(pgid: i32) {
    // SAFETY: sending a signal to a process group we created; a stale group just fails.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// A pids cgroup (v1 `pids` hierarchy or v2 with the pids controller) holding one worker's
/// processes, so that a fork bomb is capped and every process is found and killed afterwards.
struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    fn create(name: &str, max: u64) -> Option<PidsCgroup> {
        let candidates = [
            PathBuf::from("/sys/fs/cgroup/pids"),
            PathBuf::from("/sys/fs/cgroup"),
        ];
        for root in candidates {
            let has_pids = root.join("pids.max").exists()
                || root.join("cgroup.procs").exists() && root.ends_with("pids")
                || fs::read_to_string(root.join("cgroup.subtree_control"))
                    .is_ok_and(|s| s.split_whitespace().any(|c| c == "pids"));
            if !has_pids {
                continue;
            }
            let dir = root.join(name);
            if fs::create_dir_all(&dir).is_err() {
                continue;
            }
            if fs::write(dir.join("pids.max"), max.to_string()).is_ok() {
                return Some(PidsCgroup { dir });
            }
            let _ = fs::remove_dir(&dir);
        }
        tracing::debug!("no writable pids cgroup; relying on RLIMIT_NPROC and process groups");
        None
    }

    fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Kill every process of the cgroup but `spare`.
    fn kill_all_except(&self, spare: i32) {
        for _ in 0..200 {
            let procs = fs::read_to_string(self.procs_file()).unwrap_or_default();
            let pids: Vec<i32> = procs
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .filter(|p| *p != spare)
                .collect();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                // SAFETY: signalling processes that live in our own cgroup.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill_all(&self) {
        // No process has pid 0.
        self.kill_all_except(0);
    }

    fn remove(&self) {
        let _ = fs::remove_dir(&self.dir);
    }
}
