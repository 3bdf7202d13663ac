//! The Docker backend (bollard): a per-repository image (see [`super::image`]) and one
//! long-lived container per worker, reset with git between candidates.
//!
//! Every container runs `sleep infinity` under Docker's init (which reaps orphans) as root.
//! Commands run as the non-root user `tester`. A round trip through `docker exec` costs about
//! 0.1–0.2 s on a slow engine, so each worker keeps one exec open: a small Python agent
//! (`dockerfiles/agent.py`, run by the system interpreter in isolated mode) that reads
//! requests on its stdin and answers on its stdout, length-framed. For each command it runs
//! `bash -c <script>` at /testbed in a process group of its own, which it kills (SIGKILL) at
//! the deadline, output to files in the scratch dir
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
//! 4 for init, sleep, the agent and the resident runner), 1 CPU, tmpfs at /tmp and /scratch,
//! `no-new-privileges`, all capabilities dropped; named `swe-forge-<seed>-<run id>-w<i>` and
//! labelled `swe-forge.run`, `swe-forge.owner-pid`, `swe-forge.owner-start` (the owner's start
//! time, against pid reuse), `swe-forge.owner-host`, `swe-forge.seed`. Containers are removed
//! when their worker drops; [`DockerSandbox::connect`] sweeps those whose owner process is gone
//! (a run killed with SIGKILL), and [`cleanup_run`] removes one run's containers (Ctrl-C).
//!
//! The trait is synchronous: the sandbox and each worker own a current-thread tokio runtime
//! and drive bollard's futures with `block_on`.
//!
//! Here: the sandbox (connecting, the sweep, this process's registry of runs for Ctrl-C). The
//! pieces: `client` (bollard and its runtime), `container` (creating, starting and removing
//! containers), `agent` (the in-container agent's protocol) and `worker` (the environment
//! and its workers, running commands through the agent).

mod agent;
mod client;
mod container;
mod recycle;
mod tree;
mod worker;

pub use agent::AGENT;
pub use client::{available, Client};
pub use container::list_labelled;
pub use worker::DockerEnv;

use super::image::{self, ImageRef};
use super::{Environment, Limits, Sandbox, SandboxError, SandboxKind};
use crate::repo::Repo;
use container::{create_gate, remove_container, wants_fast_root};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
pub use tree::LABEL_TASK_BASE;

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

    /// Whether the base image `recipe` describes is present or can be made here (see
    /// [`image::base_obtainable`]).
    pub fn base_obtainable(&self, recipe: &super::recipe::BaseRecipe) -> Result<(), String> {
        image::base_obtainable(&self.client, &self.cache, recipe).map_err(|e| e.to_string())
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
        let info = match self
            .client
            .block_on(self.client.docker().inspect_image(tag))
        {
            Ok(info) => info,
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => return Err(prep(format!("the image `{tag}` is not present"))),
            Err(e) => return Err(prep(format!("inspecting {tag}: {e}"))),
        };
        let id = info
            .id
            .clone()
            .ok_or_else(|| prep(format!("the image `{tag}` has no id")))?;
        // A base image holds no repository: its workers keep the tree they are given in
        // memory (see `tree_in_memory`).
        let bare = info
            .config
            .as_ref()
            .and_then(|c| c.labels.as_ref())
            .and_then(|l| l.get(image::archive::KIND_LABEL))
            .is_some_and(|k| k == "base");
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
            tree_in_memory: bare,
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

/// Remove the run's containers and return once none is listed (or after
/// [`REMOVE_RUN_WAIT`]): a container a worker is removing at the same moment (it dropped after
/// the first Ctrl-C) answers 409 "removal in progress" and is still listed until the daemon is
/// done, so each pass asks again until the list is empty. Returns how many were listed at first
/// and are gone.
fn remove_run(client: &Client, run_id: &str) -> Result<usize, SandboxError> {
    let listed = |client: &Client| -> Result<Vec<String>, SandboxError> {
        Ok(list_labelled(client, LABEL_RUN, Some(run_id))?
            .into_iter()
            .filter_map(|c| c.id)
            .collect())
    };
    let first = listed(client)?;
    let deadline = std::time::Instant::now() + REMOVE_RUN_WAIT;
    let mut left = first.clone();
    while !left.is_empty() {
        for id in &left {
            if let Err(e) = remove_container(client, id) {
                tracing::debug!(container = %id, "removing: {e}");
            }
        }
        left = listed(client)?;
        if left.is_empty() || std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    if !left.is_empty() {
        tracing::warn!(
            run = %run_id,
            containers = left.len(),
            "containers still listed after {} s; the next run sweeps them",
            REMOVE_RUN_WAIT.as_secs()
        );
    }
    Ok(first.iter().filter(|id| !left.contains(id)).count())
}

/// How long removing a run's containers waits for the daemon to finish removals in progress.
const REMOVE_RUN_WAIT: Duration = Duration::from_secs(60);

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

    fn prepare(
        &self,
        repo: &Repo,
        recipe: &super::recipe::EnvRecipe,
    ) -> Result<Arc<dyn Environment>, SandboxError> {
        let prep = |e: image::ImageError| SandboxError::Prepare {
            repo: repo.name.clone(),
            detail: e.to_string(),
        };
        let progress = self.progress.clone();
        let progress = move |line: &str| progress(line);
        let base = image::ensure_base(&self.client, &self.cache, &recipe.image.base, &progress)
            .map_err(prep)?;
        let image = image::ensure_repo_image(
            &self.client,
            &self.cache,
            repo,
            &recipe.image,
            &base,
            &progress,
        )
        .map_err(prep)?;
        tracing::info!(repo = %repo.name, image = %image.tag, built = image.built, "repository image ready");
        Ok(Arc::new(DockerEnv {
            docker: self.client.docker().clone(),
            image,
            seed: repo.name.clone(),
            limits: self.limits.clone(),
            run_id: self.run_id.clone(),
            fast_root: self.fast_root,
            tree_in_memory: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_start_time_is_known() {
        assert!(process_start_time(std::process::id()).is_some());
        assert!(process_start_time(u32::MAX - 1).is_none());
    }
}
