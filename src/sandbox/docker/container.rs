//! Containers: one worker's container created and started under the run's limits and labels
//! (while the create gate is open), its root moved off FUSE when wanted, listed by label and
//! removed.

use super::client::{other, Client};
use super::{ROOT, SCRATCH};
use crate::sandbox::image::TEST_UID;
use crate::sandbox::{Limits, SandboxError};
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::time::Duration;

/// Run as root in each fresh container on a FUSE root file system: moves "/" onto tmpfs so
/// that the test user's path lookups stop paying a FUSE round trip (see the script).
const FAST_ROOT: &str = include_str!("../../../dockerfiles/fast-root.sh");

pub(super) struct ContainerSpec {
    pub(super) image: String,
    pub(super) name: String,
    pub(super) labels: HashMap<String, String>,
    pub(super) limits: Limits,
    /// Add CAP_SYS_ADMIN and run [`FAST_ROOT`] once as root after the start.
    pub(super) fast_root: bool,
    /// A tmpfs at the repository root, owned by the test user (see
    /// [`DockerEnv::tree_in_memory`](super::worker::DockerEnv)).
    pub(super) tree_in_memory: bool,
    /// The container's CPU shares, where not Docker's default (see [`GRADER_CPU_SHARES`]).
    pub(super) cpu_shares: Option<i64>,
}

/// The CPU shares of a container that grades (Docker's default is 1024): a quarter of an
/// interactive session's weight, so that a session's step on a loaded machine runs before the
/// graders' tests, yet never so little that a grader waits past its wall limit for the CPU
/// (Docker's minimum, 2, starved graders until right fixes were graded `timeout`).
pub(super) const GRADER_CPU_SHARES: i64 = 256;

/// Whether containers may still be created: [`cleanup_active_runs`](super::cleanup_active_runs)
/// takes it for writing and closes it, so that no container is created while, or after, it
/// removes them.
pub(super) fn create_gate() -> &'static std::sync::RwLock<bool> {
    static GATE: std::sync::RwLock<bool> = std::sync::RwLock::new(false);
    &GATE
}

/// Whether the daemon's storage driver takes `--storage-opt size` (until it refused it once).
fn storage_opt_supported() -> &'static std::sync::atomic::AtomicBool {
    static SUPPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    &SUPPORTED
}

pub(super) fn start_container(
    client: &Client,
    spec: &ContainerSpec,
) -> Result<String, SandboxError> {
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
        cpu_shares: spec.cpu_shares,
        init: Some(true),
        auto_remove: Some(false),
        cap_drop: Some(vec!["ALL".into()]),
        // Only for the one root exec of FAST_ROOT: the test user's processes get no capability
        // (setuid to a non-root user clears them, and no-new-privileges keeps them cleared).
        cap_add: spec.fast_root.then(|| vec!["SYS_ADMIN".into()]),
        security_opt: Some(vec!["no-new-privileges".into()]),
        tmpfs: Some({
            let mut mounts = HashMap::from([
                (
                    "/tmp".to_string(),
                    format!("rw,nosuid,nodev,{tmpfs_size},mode=1777"),
                ),
                (
                    SCRATCH.to_string(),
                    format!("rw,nosuid,nodev,{tmpfs_size},uid={TEST_UID},gid={TEST_UID},mode=0755"),
                ),
            ]);
            if spec.tree_in_memory {
                // Its size is the container's storage allowance (it counts as memory too).
                let size = spec
                    .limits
                    .storage_bytes
                    .unwrap_or(spec.limits.memory_bytes)
                    .max(64 << 20);
                mounts.insert(
                    ROOT.to_string(),
                    format!("rw,nosuid,nodev,size={size},uid={TEST_UID},gid={TEST_UID},mode=0755"),
                );
            }
            mounts
        }),
        ..Default::default()
    };
    let mut host_config = host_config;
    if let Some(bytes) = spec.limits.storage_bytes {
        if storage_opt_supported().load(std::sync::atomic::Ordering::Relaxed) {
            host_config.storage_opt =
                Some(HashMap::from([("size".to_string(), bytes.to_string())]));
        }
    }
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
            Err(e)
                if body
                    .host_config
                    .as_ref()
                    .is_some_and(|h| h.storage_opt.is_some())
                    && e.to_string().contains("storage-opt") =>
            {
                // This storage driver cannot limit a container's size (fuse-overlayfs,
                // overlay2 off xfs): said once, then no container asks again.
                storage_opt_supported().store(false, std::sync::atomic::Ordering::Relaxed);
                tracing::info!(
                    "the Docker storage driver cannot limit a container's size ({e}); sizes are \
                     checked after each step instead"
                );
                let mut body = body;
                if let Some(h) = body.host_config.as_mut() {
                    h.storage_opt = None;
                }
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
pub(super) fn wants_fast_root(driver: &str, setting: Option<String>) -> bool {
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

pub(super) fn remove_container(client: &Client, id: &str) -> Result<(), bollard::errors::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_root_only_on_fuse_unless_told() {
        assert!(wants_fast_root("fuse-overlayfs", None));
        assert!(!wants_fast_root("overlay2", None));
        assert!(!wants_fast_root("fuse-overlayfs", Some("0".into())));
        assert!(wants_fast_root("overlay2", Some("1".into())));
        assert!(FAST_ROOT.contains("mount --rbind"));
    }
}
