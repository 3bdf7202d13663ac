//! The Docker backend (bollard): a per-repository image (see [`super::image`]) and one
//! long-lived container per worker, reset with git between candidates.
//!
//! Every container runs `sleep infinity` under Docker's init (which reaps orphans) as root.
//! Commands run as the non-root user `tester`. A round trip through `docker exec` costs about
//! 0.1–0.2 s on a slow engine, so each worker keeps one exec open: a small Python agent
//! (`dockerfiles/agent.py`, run by the system interpreter in isolated mode) that reads
//! requests on its stdin and answers on its stdout, length-framed. For each command it runs
//! `timeout -s KILL <secs> bash -c <script>` at /testbed, output to files in the scratch dir
//! (memory is bounded by the container's cgroup, not by an address-space limit), then kills
//! every process the user still has (`kill(-1)`), and answers with the exit status, the
//! container's OOM-kill count, the output, and the small files of the scratch dir (reading
//! the test report then costs nothing). A watchdog outside the container (the timeout + 5 s)
//! kills and replaces the container when no answer comes.
//! When a command kills the agent itself, the worker starts a new one (which first kills
//! whatever the command left) and reports the command as killed.
//!
//! `clear_scratch` and `reset` are deferred to the next request; a reset that fails there (the
//! command wrecked `.git`) replaces the container, which is clean by construction.
//!
//! Containers: network `none`, memory = memory+swap limit, pids limit (the command's budget plus
//! 4 for init, sleep, the agent and `timeout`), 1 CPU, tmpfs at /tmp and /scratch,
//! `no-new-privileges`, all capabilities dropped; named `swe-forge-<seed>-<run id>-w<i>` and
//! labelled `swe-forge.run`, `swe-forge.owner-pid`, `swe-forge.owner-start` (the owner's start
//! time, against pid reuse), `swe-forge.owner-host`, `swe-forge.seed`. Containers are removed
//! when their worker drops; [`DockerSandbox::connect`] sweeps those whose owner process is gone
//! (a run killed with SIGKILL), and [`cleanup_run`] removes one run's containers (Ctrl-C).
//!
//! The trait is synchronous: the sandbox and each worker own a current-thread tokio runtime
//! and drive bollard's futures with `block_on`.

use super::image::{self, ImageRef, TEST_UID};
use super::{Environment, ExecOutput, Limits, Sandbox, SandboxError, SandboxKind, Worker};
use crate::repo::Repo;
use crate::run::RunEnd;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, KillContainerOptionsBuilder, ListContainersOptionsBuilder,
    RemoveContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// The repository root inside a container.
pub const ROOT: &str = "/testbed";
/// The scratch directory inside a container (a tmpfs).
pub const SCRATCH: &str = "/scratch";
/// How long the watchdog waits past a command's timeout before replacing the container.
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(5);

pub const LABEL_RUN: &str = "swe-forge.run";
pub const LABEL_OWNER_PID: &str = "swe-forge.owner-pid";
pub const LABEL_OWNER_START: &str = "swe-forge.owner-start";
pub const LABEL_OWNER_HOST: &str = "swe-forge.owner-host";
pub const LABEL_SEED: &str = "swe-forge.seed";

/// The most of a command's stdout (and of its stderr) that comes back.
const OUTPUT_CAP: u64 = 64 << 20;
/// Scratch files up to this size come back with the command; bigger ones are read on demand.
const SCRATCH_FILE_CAP: u64 = 16 << 20;
/// The most of a scratch file read on demand.
const READ_CAP: u64 = 1 << 30;
/// `read_scratch` exit code for an absent file.
const ABSENT: i32 = 44;
/// Time allowed to git and file requests.
const SHORT_TIMEOUT: Duration = Duration::from_secs(300);

/// The in-container agent (see the module documentation).
pub const AGENT: &str = include_str!("../../dockerfiles/agent.py");
/// Run as root in each fresh container on a FUSE root file system: moves "/" onto tmpfs so
/// that the test user's path lookups stop paying a FUSE round trip (see the script).
const FAST_ROOT: &str = include_str!("../../dockerfiles/fast-root.sh");

/// A bollard client with the runtime that drives it. Calls from several threads take turns.
pub struct Client {
    rt: tokio::runtime::Runtime,
    docker: Docker,
    turn: std::sync::Mutex<()>,
}

impl Client {
    /// Connect (`DOCKER_HOST` or the local socket) and agree on an API version, giving up
    /// after `wait`.
    pub fn connect(wait: Duration) -> Result<Client, bollard::errors::Error> {
        let rt = runtime()?;
        let docker = Docker::connect_with_defaults()?.with_timeout(Duration::from_secs(3600));
        let docker = rt
            .block_on(async { tokio::time::timeout(wait, docker.negotiate_version()).await })
            .map_err(|_| bollard::errors::Error::RequestTimeoutError)??;
        Ok(Client {
            rt,
            docker,
            turn: std::sync::Mutex::new(()),
        })
    }

    /// Drive a future to completion on this client's runtime (not from inside a runtime).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        self.rt.block_on(f)
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, bollard::errors::Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| bollard::errors::Error::IOError { err })
}

/// Whether a Docker daemon answers within about 2 s.
pub fn available() -> bool {
    match Client::connect(Duration::from_secs(2)) {
        Ok(c) => c
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(2), c.docker().ping()).await
            })
            .is_ok_and(|r| r.is_ok()),
        Err(_) => false,
    }
}

fn other(context: &str) -> impl FnOnce(bollard::errors::Error) -> SandboxError + '_ {
    move |e| SandboxError::Other(format!("docker: {context}: {e}"))
}

/// The Docker backend.
pub struct DockerSandbox {
    client: Client,
    cache: PathBuf,
    limits: Limits,
    run_id: String,
    progress: Arc<dyn Fn(&str) + Send + Sync>,
    fast_root: bool,
}

impl std::fmt::Debug for DockerSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerSandbox")
            .field("cache", &self.cache)
            .field("limits", &self.limits)
            .field("run_id", &self.run_id)
            .finish()
    }
}

impl DockerSandbox {
    /// Connect to the daemon and sweep the containers left by swe-forge processes that are
    /// gone. `cache` holds the bootstrapped base images and wheelhouses.
    pub fn connect(cache: &Path, limits: Limits) -> Result<DockerSandbox, SandboxError> {
        let client = Client::connect(Duration::from_secs(5))
            .map_err(|e| SandboxError::Other(format!("the Docker daemon does not answer: {e}")))?;
        let driver = client
            .block_on(client.docker().info())
            .ok()
            .and_then(|info| info.driver)
            .unwrap_or_default();
        let fast_root = wants_fast_root(&driver, std::env::var("SWE_FORGE_DOCKER_FAST_ROOT").ok());
        tracing::debug!(driver = %driver, fast_root, "docker storage driver");
        let sandbox = DockerSandbox {
            client,
            cache: cache.to_path_buf(),
            limits,
            run_id: new_run_id(),
            progress: Arc::new(|line: &str| tracing::info!("{line}")),
            fast_root,
        };
        active_runs().push(sandbox.run_id.clone());
        let swept = sandbox.sweep()?;
        if swept > 0 {
            tracing::info!(
                containers = swept,
                "removed containers left by earlier runs"
            );
        }
        Ok(sandbox)
    }

    /// Where progress lines (bootstrap, image builds) go; the default logs them at info level.
    pub fn with_progress(mut self, progress: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.progress = Arc::new(progress);
        self
    }

    /// Whether the base image for `language` is present or can be made here (see
    /// [`image::base_obtainable`]).
    pub fn base_obtainable(&self, language: crate::lang::Language) -> Result<(), String> {
        image::base_obtainable(&self.client, &self.cache, language).map_err(|e| e.to_string())
    }

    /// This run's id, as in the containers' `swe-forge.run` label and names.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Remove the containers of runs whose owner process (on this host) is gone.
    pub fn sweep(&self) -> Result<usize, SandboxError> {
        let host = hostname();
        let containers = list_labelled(&self.client, LABEL_RUN, None)?;
        let mut removed = 0;
        for c in containers {
            let labels = c.labels.unwrap_or_default();
            if labels.get(LABEL_OWNER_HOST).is_some_and(|h| *h != host) {
                continue;
            }
            let alive = labels
                .get(LABEL_OWNER_PID)
                .and_then(|p| p.parse::<u32>().ok())
                .is_some_and(|pid| {
                    process_start_time(pid).is_some_and(|start| {
                        labels
                            .get(LABEL_OWNER_START)
                            .is_none_or(|s| *s == start.to_string())
                    })
                });
            if alive {
                continue;
            }
            if let Some(id) = c.id {
                if remove_container(&self.client, &id).is_ok() {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// An environment on an existing image (`tag`, as a task record's `image_name` gives it)
    /// without a [`Repo`]: nothing is built or pulled; the image must be present and hold the
    /// repository at [`ROOT`]. `seed` names the containers (`swe-forge-<seed>-<run>-w<i>`).
    /// For `audit`, which re-verifies tasks from their records alone.
    pub fn environment_for_image(
        &self,
        tag: &str,
        seed: &str,
    ) -> Result<Arc<dyn Environment>, SandboxError> {
        let prep = |detail: String| SandboxError::Prepare {
            repo: seed.to_string(),
            detail,
        };
        let id = image::image_id(&self.client, tag)
            .map_err(|e| prep(e.to_string()))?
            .ok_or_else(|| prep(format!("the image `{tag}` is not present")))?;
        Ok(Arc::new(DockerEnv {
            docker: self.client.docker().clone(),
            image: ImageRef {
                tag: tag.to_string(),
                id,
                built: false,
            },
            seed: image::repo_image_name(seed),
            limits: self.limits.clone(),
            run_id: self.run_id.clone(),
            fast_root: self.fast_root,
        }))
    }

    /// Remove every container of this run (on exit or Ctrl-C; workers remove their own when
    /// dropped).
    pub fn remove_run_containers(&self) -> Result<usize, SandboxError> {
        remove_run(&self.client, &self.run_id)
    }
}

impl Drop for DockerSandbox {
    fn drop(&mut self) {
        active_runs().retain(|r| *r != self.run_id);
    }
}

/// The run ids of this process's live [`DockerSandbox`]es.
fn active_runs() -> std::sync::MutexGuard<'static, Vec<String>> {
    static ACTIVE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove the containers of every live sandbox of this process: for a handler that is about
/// to exit without unwinding (a second Ctrl-C). Returns how many were removed.
pub fn cleanup_active_runs() -> usize {
    // Close the gate first: a container whose creation is in flight is finished (and so
    // listed below), and none is created after this point.
    let mut closed = create_gate().write().unwrap_or_else(|e| e.into_inner());
    *closed = true;
    let runs = active_runs().clone();
    runs.iter()
        .map(|r| match cleanup_run(r) {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(run = %r, "could not remove the run's containers: {e}");
                0
            }
        })
        .sum()
}

/// Remove every container of the run `run_id` (for a Ctrl-C handler: it makes its own
/// connection). Returns how many were removed.
pub fn cleanup_run(run_id: &str) -> Result<usize, SandboxError> {
    let client = Client::connect(Duration::from_secs(5))
        .map_err(|e| SandboxError::Other(format!("the Docker daemon does not answer: {e}")))?;
    remove_run(&client, run_id)
}

fn remove_run(client: &Client, run_id: &str) -> Result<usize, SandboxError> {
    let mut removed = 0;
    for c in list_labelled(client, LABEL_RUN, Some(run_id))? {
        if let Some(id) = c.id {
            if remove_container(client, &id).is_ok() {
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// Containers (running or not) carrying `label` (with `value` when given).
pub fn list_labelled(
    client: &Client,
    label: &str,
    value: Option<&str>,
) -> Result<Vec<bollard::models::ContainerSummary>, SandboxError> {
    let filter = match value {
        Some(v) => format!("{label}={v}"),
        None => label.to_string(),
    };
    let filters = HashMap::from([("label".to_string(), vec![filter])]);
    let opts = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filters)
        .build();
    client
        .block_on(client.docker().list_containers(Some(opts)))
        .map_err(other("listing containers"))
}

fn remove_container(client: &Client, id: &str) -> Result<(), bollard::errors::Error> {
    let opts = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    match client.block_on(client.docker().remove_container(id, Some(opts))) {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(()),
        Err(e) => Err(e),
    }
}

fn new_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let h = blake3::hash(format!("{}-{nanos}-{}", std::process::id(), hostname()).as_bytes());
    h.to_hex()[..10].to_string()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A process's start time (clock ticks since boot), `None` when it does not exist.
fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    // Fields after the command name start at field 3 (state); starttime is field 22.
    after.split_whitespace().nth(19)?.parse().ok()
}

impl Sandbox for DockerSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Docker
    }

    fn prepare(&self, repo: &Repo) -> Result<Arc<dyn Environment>, SandboxError> {
        let prep = |e: image::ImageError| SandboxError::Prepare {
            repo: repo.name.clone(),
            detail: e.to_string(),
        };
        let progress = self.progress.clone();
        let progress = move |line: &str| progress(line);
        let base = image::ensure_base(&self.client, &self.cache, repo.profile.language, &progress)
            .map_err(prep)?;
        let image = image::ensure_repo_image(&self.client, &self.cache, repo, &base, &progress)
            .map_err(prep)?;
        tracing::info!(repo = %repo.name, image = %image.tag, built = image.built, "repository image ready");
        Ok(Arc::new(DockerEnv {
            docker: self.client.docker().clone(),
            image,
            seed: repo.name.clone(),
            limits: self.limits.clone(),
            run_id: self.run_id.clone(),
            fast_root: self.fast_root,
        }))
    }
}

/// A repository's image, handing out one container per worker.
pub struct DockerEnv {
    docker: Docker,
    image: ImageRef,
    seed: String,
    limits: Limits,
    run_id: String,
    fast_root: bool,
}

impl DockerEnv {
    /// The repository image (tag and id).
    pub fn image(&self) -> &ImageRef {
        &self.image
    }
}

impl Environment for DockerEnv {
    fn image_name(&self) -> Option<String> {
        Some(self.image.tag.clone())
    }

    fn image_id(&self) -> Option<String> {
        Some(self.image.id.clone())
    }

    fn image_built(&self) -> bool {
        self.image.built
    }

    fn worker(&self, index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        let client = Client {
            rt: runtime().map_err(other("starting a runtime"))?,
            docker: self.docker.clone(),
            turn: std::sync::Mutex::new(()),
        };
        let spec = ContainerSpec {
            image: self.image.tag.clone(),
            name: format!("swe-forge-{}-{}-w{index}", self.seed, self.run_id),
            labels: HashMap::from([
                (LABEL_RUN.to_string(), self.run_id.clone()),
                (LABEL_OWNER_PID.to_string(), std::process::id().to_string()),
                (
                    LABEL_OWNER_START.to_string(),
                    process_start_time(std::process::id())
                        .map(|s| s.to_string())
                        .unwrap_or_default(),
                ),
                (LABEL_OWNER_HOST.to_string(), hostname()),
                (LABEL_SEED.to_string(), self.seed.clone()),
            ]),
            limits: self.limits.clone(),
            fast_root: self.fast_root,
        };
        let id = start_container(&client, &spec)?;
        let mut worker = DockerWorker {
            client,
            spec,
            id,
            agent: None,
            pending_clear: false,
            pending_reset: false,
            scratch_files: Some(HashMap::new()),
            replacements: 0,
            resident_unsafe: None,
            resident_lost: false,
        };
        worker.start_agent()?;
        Ok(Box::new(worker))
    }
}

struct ContainerSpec {
    image: String,
    name: String,
    labels: HashMap<String, String>,
    limits: Limits,
    /// Add CAP_SYS_ADMIN and run [`FAST_ROOT`] once as root after the start.
    fast_root: bool,
}

/// Whether containers may still be created: [`cleanup_active_runs`] takes it for writing and
/// closes it, so that no container is created while, or after, it removes them.
fn create_gate() -> &'static std::sync::RwLock<bool> {
    static GATE: std::sync::RwLock<bool> = std::sync::RwLock::new(false);
    &GATE
}

fn start_container(client: &Client, spec: &ContainerSpec) -> Result<String, SandboxError> {
    let closed = create_gate().read().unwrap_or_else(|e| e.into_inner());
    if *closed {
        return Err(SandboxError::Other(
            "the run is ending: no new container".to_string(),
        ));
    }
    let mem = spec.limits.memory_bytes.min(i64::MAX as u64) as i64;
    let tmpfs_size = format!("size={}", spec.limits.memory_bytes.max(64 << 20));
    let host_config = HostConfig {
        network_mode: Some("none".into()),
        memory: Some(mem),
        memory_swap: Some(mem),
        pids_limit: Some((spec.limits.pids + 4).min(i64::MAX as u64) as i64),
        nano_cpus: Some(1_000_000_000),
        init: Some(true),
        auto_remove: Some(false),
        cap_drop: Some(vec!["ALL".into()]),
        // Only for the one root exec of FAST_ROOT: the test user's processes get no capability
        // (setuid to a non-root user clears them, and no-new-privileges keeps them cleared).
        cap_add: spec.fast_root.then(|| vec!["SYS_ADMIN".into()]),
        security_opt: Some(vec!["no-new-privileges".into()]),
        tmpfs: Some(HashMap::from([
            (
                "/tmp".to_string(),
                format!("rw,nosuid,nodev,{tmpfs_size},mode=1777"),
            ),
            (
                SCRATCH.to_string(),
                format!("rw,nosuid,nodev,{tmpfs_size},uid={TEST_UID},gid={TEST_UID},mode=0755"),
            ),
        ])),
        ..Default::default()
    };
    let body = ContainerCreateBody {
        image: Some(spec.image.clone()),
        cmd: Some(vec!["sleep".into(), "infinity".into()]),
        user: Some("0:0".into()),
        working_dir: Some(ROOT.into()),
        labels: Some(spec.labels.clone()),
        network_disabled: Some(true),
        host_config: Some(host_config),
        ..Default::default()
    };
    let docker = client.docker();
    let opts = CreateContainerOptionsBuilder::default()
        .name(&spec.name)
        .build();
    let created =
        match client.block_on(docker.create_container(Some(opts.clone()), body.clone())) {
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => {
                // A container of an earlier incarnation of this worker (same run, same index).
                let _ = remove_container(client, &spec.name);
                client.block_on(docker.create_container(Some(opts), body))
            }
            other => other,
        }
        .map_err(other("creating a container"))?;
    if let Err(e) = client.block_on(docker.start_container(&created.id, None)) {
        let _ = remove_container(client, &created.id);
        return Err(other("starting a container")(e));
    }
    if spec.fast_root {
        if let Err(e) = move_root_off_fuse(client, &created.id) {
            // Only slower, not less isolated or less correct: say it once and go on.
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    "could not move the container's root off fuse-overlayfs ({e}); test commands \
                     run ≈0.2 s slower per Python start"
                )
            });
        }
    }
    Ok(created.id)
}

/// Whether containers get [`FAST_ROOT`]: on the fuse-overlayfs storage driver, unless
/// `SWE_FORGE_DOCKER_FAST_ROOT=0`.
fn wants_fast_root(driver: &str, setting: Option<String>) -> bool {
    match setting.as_deref() {
        Some("0") => false,
        Some("1") => true,
        _ => driver.starts_with("fuse"),
    }
}

/// Run [`FAST_ROOT`] as root in a started container and wait for it.
fn move_root_off_fuse(client: &Client, id: &str) -> Result<(), String> {
    let config = CreateExecOptions {
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        cmd: Some(vec![
            "bash".to_string(),
            "-c".to_string(),
            FAST_ROOT.to_string(),
        ]),
        user: Some("0:0".to_string()),
        working_dir: Some("/".to_string()),
        ..Default::default()
    };
    let docker = client.docker().clone();
    let id = id.to_string();
    client.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), async {
            let exec = docker
                .create_exec(&id, config)
                .await
                .map_err(|e| e.to_string())?;
            let mut text = Vec::new();
            if let StartExecResults::Attached { mut output, .. } = docker
                .start_exec(&exec.id, None)
                .await
                .map_err(|e| e.to_string())?
            {
                while let Some(chunk) = output.next().await {
                    text.extend_from_slice(&chunk.map_err(|e| e.to_string())?.into_bytes());
                }
            }
            let inspect = docker
                .inspect_exec(&exec.id)
                .await
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&text);
            match inspect.exit_code {
                Some(0) => {
                    tracing::debug!(container = %id, "{}", text.trim());
                    Ok(())
                }
                code => Err(format!(
                    "exit {code:?}: {}",
                    text.trim().lines().last().unwrap_or("")
                )),
            }
        })
        .await
        .unwrap_or_else(|_| Err("no end within 60 s".to_string()))
    })
}

/// One worker: a long-lived container and its agent.
struct DockerWorker {
    client: Client,
    spec: ContainerSpec,
    id: String,
    agent: Option<Agent>,
    /// `clear_scratch` was called: the next command empties the scratch dir first, and
    /// `read_scratch` finds nothing meanwhile.
    pending_clear: bool,
    /// `reset` was called: the next command or patch restores the tree first.
    pending_reset: bool,
    /// The scratch dir as the last command left it (files up to the cap), when known.
    scratch_files: Option<HashMap<String, ScratchFile>>,
    replacements: u32,
    /// Set by a resident request the agent refused (forking the resident is not safe).
    resident_unsafe: Option<String>,
    /// Set by a resident request whose resident died or hung without answering.
    resident_lost: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ScratchFile {
    Read(Vec<u8>),
    /// Too big to come back with the command: read on demand.
    Big,
}

/// The open exec of the agent.
struct Agent {
    output: std::pin::Pin<
        Box<
            dyn futures_util::Stream<
                    Item = Result<bollard::container::LogOutput, bollard::errors::Error>,
                > + Send,
        >,
    >,
    input: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    /// Stdout bytes received and not yet consumed.
    buf: Vec<u8>,
    /// What the agent wrote on its stderr (a traceback), for error messages.
    diag: Vec<u8>,
}

/// A request to the agent (see `dockerfiles/agent.py`).
#[derive(serde::Serialize)]
struct Request<'a> {
    script: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    args: &'a [&'a str],
    timeout: f64,
    clear: bool,
    reset: bool,
    prefetch: bool,
    output_cap: u64,
    file_cap: u64,
    /// Bytes of stdin following the request line.
    stdin: usize,
    /// Run through the resident runner instead of `script` (see `resident_run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    resident: Option<serde_json::Value>,
}

/// The agent's answer line; the payload (stdout, stderr, then each file) follows it.
#[derive(serde::Deserialize, Debug, Default)]
struct Reply {
    #[serde(default)]
    ready: bool,
    #[serde(default)]
    reset_failed: bool,
    #[serde(default)]
    error: Option<String>,
    /// The exit status, when the command exited.
    #[serde(default)]
    rc: Option<i32>,
    /// The signal that ended the command (SIGKILL when the timeout fired).
    #[serde(default)]
    signal: Option<i32>,
    #[serde(default)]
    elapsed: f64,
    #[serde(default)]
    oom_kills: u64,
    /// (bytes sent, size of the output)
    #[serde(default)]
    stdout: (usize, u64),
    #[serde(default)]
    stderr: (usize, u64),
    /// (name, bytes sent), -1 for a file too big to send.
    #[serde(default)]
    files: Vec<(String, i64)>,
    /// The resident runner started but forking it is not safe: why (nothing ran).
    #[serde(default, rename = "unsafe")]
    unsafe_reason: Option<String>,
    /// The resident runner died or hung without answering.
    #[serde(default)]
    lost: bool,
}

/// A reply with its payload split up.
struct Answer {
    reply: Reply,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    files: HashMap<String, ScratchFile>,
}

/// Why a request got no answer.
enum NoAnswer {
    /// Nothing within the time allowed.
    Timeout,
    /// The agent's stream ended or broke (the command killed it, the container died).
    Gone(String),
}

impl Agent {
    /// Take one complete reply off the buffer, when there is one.
    fn take_reply(&mut self) -> Result<Option<Answer>, String> {
        let Some(nl) = self.buf.iter().position(|b| *b == b'\n') else {
            return Ok(None);
        };
        let reply: Reply = serde_json::from_slice(&self.buf[..nl])
            .map_err(|e| format!("unreadable agent reply: {e}"))?;
        let sizes: Vec<usize> = [reply.stdout.0, reply.stderr.0]
            .into_iter()
            .chain(reply.files.iter().map(|(_, n)| (*n).max(0) as usize))
            .collect();
        let need: usize = sizes.iter().sum();
        if self.buf.len() < nl + 1 + need {
            return Ok(None);
        }
        let mut rest: Vec<u8> = self.buf.drain(..nl + 1 + need).skip(nl + 1).collect();
        let mut take = |n: usize| -> Vec<u8> {
            let tail = rest.split_off(n);
            std::mem::replace(&mut rest, tail)
        };
        let stdout = take(reply.stdout.0);
        let stderr = take(reply.stderr.0);
        let mut files = HashMap::new();
        for (name, n) in &reply.files {
            if *n < 0 {
                files.insert(name.clone(), ScratchFile::Big);
            } else {
                files.insert(name.clone(), ScratchFile::Read(take(*n as usize)));
            }
        }
        Ok(Some(Answer {
            reply,
            stdout,
            stderr,
            files,
        }))
    }

    /// Send a request (and its stdin) and wait for the answer.
    async fn ask(&mut self, line: &[u8], stdin: &[u8]) -> Result<Answer, String> {
        self.input
            .write_all(line)
            .await
            .map_err(|e| e.to_string())?;
        self.input
            .write_all(stdin)
            .await
            .map_err(|e| e.to_string())?;
        self.input.flush().await.map_err(|e| e.to_string())?;
        self.answer().await
    }

    async fn answer(&mut self) -> Result<Answer, String> {
        loop {
            if let Some(a) = self.take_reply()? {
                return Ok(a);
            }
            match self.output.next().await {
                Some(Ok(bollard::container::LogOutput::StdOut { message })) => {
                    self.buf.extend_from_slice(&message)
                }
                Some(Ok(bollard::container::LogOutput::StdErr { message })) => {
                    if self.diag.len() < 1 << 16 {
                        self.diag.extend_from_slice(&message);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
                None => {
                    return Err(format!(
                        "the agent exited{}",
                        if self.diag.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", String::from_utf8_lossy(&self.diag).trim())
                        }
                    ))
                }
            }
        }
    }
}

impl DockerWorker {
    /// Start the agent in the container (it first kills whatever the user left running).
    fn start_agent(&mut self) -> Result<(), SandboxError> {
        self.agent = None;
        let config = CreateExecOptions {
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            cmd: Some(vec![
                "/usr/bin/python3".to_string(),
                "-I".to_string(),
                "-S".to_string(),
                "-c".to_string(),
                AGENT.to_string(),
            ]),
            user: Some(format!("{TEST_UID}:{TEST_UID}")),
            working_dir: Some(ROOT.to_string()),
            env: Some(vec![
                "HOME=/tmp".to_string(),
                "TMPDIR=/tmp".to_string(),
                format!("SWE_FORGE_SCRATCH={SCRATCH}"),
            ]),
            ..Default::default()
        };
        let docker = self.client.docker().clone();
        let id = self.id.clone();
        let started = self.client.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), async {
                let exec = docker
                    .create_exec(&id, config)
                    .await
                    .map_err(|e| e.to_string())?;
                let StartExecResults::Attached { output, input } = docker
                    .start_exec(&exec.id, None)
                    .await
                    .map_err(|e| e.to_string())?
                else {
                    return Err("the exec started detached".to_string());
                };
                let mut agent = Agent {
                    output,
                    input,
                    buf: Vec::new(),
                    diag: Vec::new(),
                };
                let hello = agent.answer().await?;
                if !hello.reply.ready {
                    return Err(format!("unexpected greeting {:?}", hello.reply));
                }
                Ok(agent)
            })
            .await
            .unwrap_or_else(|_| Err("no greeting within 60 s".to_string()))
        });
        match started {
            Ok(agent) => {
                self.agent = Some(agent);
                Ok(())
            }
            Err(e) => Err(SandboxError::Other(format!(
                "docker: starting the agent in {}: {e}",
                self.spec.name
            ))),
        }
    }

    /// Kill and remove the container and start a fresh one from the image (clean tree, empty
    /// scratch) with a new agent.
    fn replace(&mut self) -> Result<(), SandboxError> {
        self.replacements += 1;
        self.agent = None;
        tracing::warn!(container = %self.spec.name, "replacing the container");
        let kill = KillContainerOptionsBuilder::default()
            .signal("KILL")
            .build();
        let _ = self
            .client
            .block_on(self.client.docker().kill_container(&self.id, Some(kill)));
        let _ = remove_container(&self.client, &self.id);
        self.id = start_container(&self.client, &self.spec)?;
        self.pending_clear = false;
        self.pending_reset = false;
        self.scratch_files = Some(HashMap::new());
        self.start_agent()
    }

    /// One request; `Err(NoAnswer)` leaves the agent unusable (the caller replaces or
    /// restarts it).
    fn ask(
        &mut self,
        request: &Request<'_>,
        stdin: &[u8],
        limit: Duration,
    ) -> Result<Result<Answer, NoAnswer>, SandboxError> {
        if self.agent.is_none() {
            self.start_agent()?;
        }
        let mut line = serde_json::to_vec(request)
            .map_err(|e| SandboxError::Other(format!("encoding a request: {e}")))?;
        line.push(b'\n');
        let agent = self.agent.as_mut().expect("started above");
        let result = self
            .client
            .block_on(async { tokio::time::timeout(limit, agent.ask(&line, stdin)).await });
        Ok(match result {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => {
                self.agent = None;
                Err(NoAnswer::Gone(e))
            }
            Err(_) => {
                self.agent = None;
                Err(NoAnswer::Timeout)
            }
        })
    }

    /// A git or file request: (exit status, stdout, stderr). Resets first when one is pending;
    /// a failed reset replaces the container and the request runs again there.
    fn short(
        &mut self,
        script: &str,
        args: &[&str],
        stdin: &[u8],
        output_cap: u64,
    ) -> Result<(i32, Vec<u8>, Vec<u8>), SandboxError> {
        for _ in 0..2 {
            let request = Request {
                resident: None,
                script,
                args,
                timeout: SHORT_TIMEOUT.as_secs_f64(),
                clear: false,
                reset: self.pending_reset,
                prefetch: false,
                output_cap,
                file_cap: 0,
                stdin: stdin.len(),
            };
            match self.ask(&request, stdin, SHORT_TIMEOUT + WATCHDOG_GRACE)? {
                Ok(a) if a.reply.reset_failed => {
                    tracing::warn!(container = %self.spec.name, "git reset failed; replacing the container");
                    self.replace()?;
                }
                Ok(a) => {
                    if let Some(e) = a.reply.error {
                        return Err(SandboxError::Other(format!("docker agent: {e}")));
                    }
                    self.pending_reset = false;
                    let rc = a.reply.rc.unwrap_or(128 + a.reply.signal.unwrap_or(0));
                    return Ok((rc, a.stdout, a.stderr));
                }
                Err(NoAnswer::Timeout) => {
                    self.replace()?;
                    return Err(SandboxError::Other(format!(
                        "docker: `{script}` took longer than {} s; the container was replaced",
                        SHORT_TIMEOUT.as_secs()
                    )));
                }
                Err(NoAnswer::Gone(e)) => {
                    // The container may be gone (removed from outside, the engine restarted).
                    self.replace()?;
                    return Err(SandboxError::Other(format!("docker: {e}")));
                }
            }
        }
        Err(SandboxError::Reset(
            "a fresh container could not be reset".into(),
        ))
    }

    fn exec_once(
        &mut self,
        script: &str,
        timeout: Duration,
        resident: Option<&serde_json::Value>,
    ) -> Result<Option<ExecOutput>, SandboxError> {
        let request = Request {
            resident: resident.cloned(),
            script,
            args: &[],
            timeout: timeout.as_secs_f64().max(0.001),
            clear: self.pending_clear,
            reset: self.pending_reset,
            prefetch: true,
            output_cap: OUTPUT_CAP,
            file_cap: SCRATCH_FILE_CAP,
            stdin: 0,
        };
        let started = Instant::now();
        let answer = self.ask(&request, &[], timeout + WATCHDOG_GRACE)?;
        let wall = started.elapsed();
        let a = match answer {
            Ok(a) if a.reply.reset_failed => return Ok(None),
            Ok(a) => a,
            Err(NoAnswer::Timeout) => {
                // The inner timeout did not end the command: nothing in the container can be
                // trusted any more.
                self.replace()?;
                return Ok(Some(ExecOutput {
                    end: RunEnd::TimedOut,
                    exit_code: None,
                    signal: Some(libc::SIGKILL),
                    stdout: Vec::new(),
                    stderr:
                        b"swe-forge: the watchdog ended the command; the container was replaced\n"
                            .to_vec(),
                    duration: wall,
                    oom_kills: 0,
                }));
            }
            Err(NoAnswer::Gone(why)) => {
                // The command killed the agent (same user). A new agent first kills whatever
                // is left; the tree is reset before the next command.
                tracing::debug!(container = %self.spec.name, "agent lost: {why}");
                if self.start_agent().is_err() {
                    self.replace()?;
                }
                self.pending_reset = true;
                self.pending_clear = false;
                self.scratch_files = None;
                return Ok(Some(ExecOutput {
                    end: RunEnd::Signaled,
                    exit_code: None,
                    signal: Some(libc::SIGKILL),
                    stdout: Vec::new(),
                    stderr: format!("swe-forge: the command killed the sandbox's agent ({why})\n")
                        .into_bytes(),
                    duration: wall,
                    oom_kills: 0,
                }));
            }
        };
        if let Some(e) = a.reply.error {
            return Err(SandboxError::Other(format!("docker agent: {e}")));
        }
        self.pending_clear = false;
        self.pending_reset = false;
        self.scratch_files = Some(a.files);
        self.resident_lost = a.reply.lost;
        if let Some(why) = a.reply.unsafe_reason {
            self.resident_unsafe = Some(why);
            return Ok(Some(ExecOutput {
                end: RunEnd::Exited,
                exit_code: None,
                signal: None,
                stdout: Vec::new(),
                stderr: Vec::new(),
                duration: Duration::ZERO,
                oom_kills: 0,
            }));
        }
        let r = a.reply;
        let mut stdout = a.stdout;
        let mut stderr = a.stderr;
        for (buf, (sent, total), name) in [
            (&mut stdout, r.stdout, "stdout"),
            (&mut stderr, r.stderr, "stderr"),
        ] {
            if (sent as u64) < total {
                buf.extend_from_slice(
                    format!(
                        "\n[swe-forge: {} more bytes of {name} left out]\n",
                        total - sent as u64
                    )
                    .as_bytes(),
                );
            }
        }
        let duration = Duration::from_secs_f64(r.elapsed.max(0.0));
        // `timeout` fires at the deadline; allow for the rounding of its argument.
        let reached = duration + Duration::from_millis(50) >= timeout;
        let (end, exit_code, signal) = match (r.signal, r.rc) {
            (Some(libc::SIGKILL), _) if r.oom_kills == 0 && reached => {
                (RunEnd::TimedOut, None, Some(libc::SIGKILL))
            }
            (Some(sig), _) => (RunEnd::Signaled, None, Some(sig)),
            (None, Some(rc)) => (RunEnd::Exited, Some(rc), None),
            (None, None) => {
                return Err(SandboxError::Other(
                    "docker agent: a reply without exit status or signal".into(),
                ))
            }
        };
        if r.oom_kills > 0 {
            stderr.extend_from_slice(
                format!(
                    "\nswe-forge: out of memory: the kernel's OOM killer ended {} process(es) \
                     of this command (memory limit {} MiB)\n",
                    r.oom_kills,
                    self.spec.limits.memory_bytes >> 20
                )
                .as_bytes(),
            );
        }
        Ok(Some(ExecOutput {
            end,
            exit_code,
            signal,
            stdout,
            stderr,
            duration,
            oom_kills: r.oom_kills,
        }))
    }
}

impl Worker for DockerWorker {
    fn root(&self) -> &str {
        ROOT
    }

    fn scratch(&self) -> &str {
        SCRATCH
    }

    fn exec(&mut self, script: &str, timeout: Duration) -> Result<ExecOutput, SandboxError> {
        if let Some(out) = self.exec_once(script, timeout, None)? {
            return Ok(out);
        }
        tracing::warn!(container = %self.spec.name, "git reset failed; replacing the container");
        self.replace()?;
        self.exec_once(script, timeout, None)?
            .ok_or_else(|| SandboxError::Reset("a fresh container could not be reset".into()))
    }

    fn resident_run(
        &mut self,
        run: &super::ResidentRun<'_>,
        timeout: Duration,
    ) -> Result<super::ResidentExec, SandboxError> {
        // The agent starts the resident (as the test user, with the commands' environment),
        // forwards the run, and kills whatever the child left, sparing the resident.
        let request = crate::runner::resident::Request {
            args: run.args,
            timeout: timeout.as_secs_f64().max(0.001),
            cpu: run.cpu.map(|c| c.as_secs_f64()),
            stdout: String::new(),
            stderr: String::new(),
            times: format!("{SCRATCH}/{}", crate::runner::TIMES),
            // Memory and processes: the container's cgroup limits.
            address_space: None,
            nproc: None,
            procs: None,
            imports: run
                .imports
                .then(|| format!("{SCRATCH}/{}", super::RESIDENT_IMPORTS)),
        };
        let payload = serde_json::json!({
            "argv": run.program.argv,
            "start": run.program.start,
            "contained": run.program.contained,
            "run": request,
        });
        self.resident_unsafe = None;
        self.resident_lost = false;
        let out = match self.exec_once("", timeout, Some(&payload))? {
            Some(out) => out,
            None => {
                tracing::warn!(container = %self.spec.name, "git reset failed; replacing the container");
                self.replace()?;
                self.exec_once("", timeout, Some(&payload))?
                    .ok_or_else(|| {
                        SandboxError::Reset("a fresh container could not be reset".into())
                    })?
            }
        };
        Ok(match self.resident_unsafe.take() {
            Some(why) => super::ResidentExec::Unsafe(why),
            None if std::mem::take(&mut self.resident_lost) => super::ResidentExec::Lost(out),
            None => super::ResidentExec::Ran(out),
        })
    }

    fn apply_patch(&mut self, patch: &str) -> Result<(), SandboxError> {
        let (rc, _, stderr) = self.short(
            "git apply --whitespace=nowarn -",
            &[],
            patch.as_bytes(),
            OUTPUT_CAP,
        )?;
        if rc == 0 {
            Ok(())
        } else {
            Err(SandboxError::Patch(format!(
                "git apply: {}",
                String::from_utf8_lossy(&stderr).trim()
            )))
        }
    }

    fn reset(&mut self) -> Result<(), SandboxError> {
        // Done by the next request, in the same round trip.
        self.pending_reset = true;
        Ok(())
    }

    fn read_scratch(&mut self, name: &str) -> Result<Option<Vec<u8>>, SandboxError> {
        if self.pending_clear {
            return Ok(None);
        }
        if name.is_empty() || name.split('/').any(|c| c == "..") {
            return Err(SandboxError::Other(format!(
                "invalid scratch file name `{name}`"
            )));
        }
        if let Some(files) = &self.scratch_files {
            match files.get(name) {
                Some(ScratchFile::Read(bytes)) => return Ok(Some(bytes.clone())),
                None if !name.contains('/') => return Ok(None),
                _ => {}
            }
        }
        let script = format!(r#"f={SCRATCH}/"$1"; [ -f "$f" ] || exit {ABSENT}; exec cat -- "$f""#);
        let (rc, stdout, stderr) = self.short(&script, &[name], &[], READ_CAP)?;
        match rc {
            0 => Ok(Some(stdout)),
            ABSENT => Ok(None),
            code => Err(SandboxError::Other(format!(
                "reading {SCRATCH}/{name} failed ({code}): {}",
                String::from_utf8_lossy(&stderr).trim()
            ))),
        }
    }

    fn clear_scratch(&mut self) -> Result<(), SandboxError> {
        self.pending_clear = true;
        self.scratch_files = Some(HashMap::new());
        Ok(())
    }
}

impl Drop for DockerWorker {
    fn drop(&mut self) {
        self.agent = None;
        if let Err(e) = remove_container(&self.client, &self.id) {
            tracing::warn!(container = %self.spec.name, "could not remove the container: {e}");
        }
        if self.replacements > 0 {
            tracing::debug!(container = %self.spec.name, replacements = self.replacements, "worker done");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fast_root_only_on_fuse_unless_told() {
        assert!(wants_fast_root("fuse-overlayfs", None));
        assert!(!wants_fast_root("overlay2", None));
        assert!(!wants_fast_root("fuse-overlayfs", Some("0".into())));
        assert!(wants_fast_root("overlay2", Some("1".into())));
        assert!(FAST_ROOT.contains("mount --rbind"));
    }

    use super::*;

    fn agent_with(bytes: &[u8]) -> Agent {
        Agent {
            output: Box::pin(futures_util::stream::empty()),
            input: Box::pin(tokio::io::sink()),
            buf: bytes.to_vec(),
            diag: Vec::new(),
        }
    }

    #[test]
    fn parses_agent_replies() {
        let mut bytes = br#"{"rc": null, "signal": 9, "elapsed": 2.5, "oom_kills": 1, "stdout": [3, 3], "stderr": [5, 9], "files": [["report.xml", 4], ["coverage.json", -1], ["a b", 3]]}"#.to_vec();
        bytes.extend_from_slice(b"\nabcx\ny\nz<a/>end");
        bytes.extend_from_slice(b"{\"ready\": true}\n");
        let mut agent = agent_with(&bytes);
        let a = agent.take_reply().unwrap().unwrap();
        assert_eq!(a.reply.rc, None);
        assert_eq!(a.reply.signal, Some(9));
        assert_eq!(a.reply.oom_kills, 1);
        assert_eq!(a.stdout, b"abc");
        assert_eq!(a.stderr, b"x\ny\nz");
        assert_eq!(a.reply.stderr, (5, 9));
        assert_eq!(a.files["report.xml"], ScratchFile::Read(b"<a/>".to_vec()));
        assert_eq!(a.files["coverage.json"], ScratchFile::Big);
        assert_eq!(a.files["a b"], ScratchFile::Read(b"end".to_vec()));
        assert!(agent.take_reply().unwrap().unwrap().reply.ready);
        assert!(agent.take_reply().unwrap().is_none());
        // A reply whose payload has not all arrived yet waits.
        let mut partial = agent_with(b"{\"rc\": 0, \"stdout\": [10, 10]}\nabc");
        assert!(partial.take_reply().unwrap().is_none());
        assert_eq!(partial.buf.len(), 33);
    }

    #[test]
    fn own_process_start_time_is_known() {
        assert!(process_start_time(std::process::id()).is_some());
        assert!(process_start_time(u32::MAX - 1).is_none());
    }

    #[test]
    fn worker_is_send() {
        fn assert_send<T: Send>() {}
        fn assert_sync<T: Send + Sync>() {}
        assert_send::<DockerWorker>();
        assert_sync::<DockerSandbox>();
        assert_sync::<DockerEnv>();
    }
}
