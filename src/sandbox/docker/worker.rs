//! The environment (a repository's image) and its workers: one long-lived container each,
//! running commands, patches, resets and scratch reads through the agent, replacing the
//! container when it cannot be trusted.

use super::agent::{Agent, Answer, NoAnswer, Request, ScratchFile, AGENT};
use super::client::{other, runtime, Client};
use super::container::{remove_container, start_container, ContainerSpec};
use super::{
    hostname, process_start_time, LABEL_OWNER_HOST, LABEL_OWNER_PID, LABEL_OWNER_START, LABEL_RUN,
    LABEL_SEED, ROOT, SCRATCH, WATCHDOG_GRACE,
};
use crate::run::RunEnd;
use crate::sandbox::image::{ImageRef, TEST_UID};
use crate::sandbox::{Environment, ExecOutput, Limits, SandboxError, Worker};
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::query_parameters::KillContainerOptionsBuilder;
use bollard::Docker;
use std::collections::HashMap;
use std::time::{Duration, Instant};

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

/// A repository's image, handing out one container per worker.
pub struct DockerEnv {
    pub(super) docker: Docker,
    pub(super) image: ImageRef,
    pub(super) seed: String,
    pub(super) limits: Limits,
    pub(super) run_id: String,
    pub(super) fast_root: bool,
    /// Workers keep the repository root in memory (a tmpfs at the root, filled by
    /// [`Worker::load_tree`] through the agent): for an image that holds no repository (a
    /// task base), whose workers take a task's tree. Repository work then never goes through
    /// the container's storage driver (on fuse-overlayfs, a FUSE round trip per file
    /// operation).
    pub(super) tree_in_memory: bool,
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

    fn shared_base(&self) -> Result<Option<String>, SandboxError> {
        super::tree::base_of(&self.client()?, &self.image.id)
    }

    fn tree(&self) -> Result<Option<Vec<u8>>, SandboxError> {
        super::tree::read_tree(&self.client()?, &self.image.id, self.labels()).map(Some)
    }

    fn worker(&self, index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        self.start_worker(index)
    }
}

impl DockerEnv {
    /// The labels of this run's containers: the run, its owner process, the seed.
    fn labels(&self) -> HashMap<String, String> {
        HashMap::from([
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
        ])
    }

    fn client(&self) -> Result<Client, SandboxError> {
        Ok(Client {
            rt: runtime().map_err(other("starting a runtime"))?,
            docker: self.docker.clone(),
            turn: std::sync::Mutex::new(()),
        })
    }

    fn start_worker(&self, index: usize) -> Result<Box<dyn Worker>, SandboxError> {
        let client = self.client()?;
        let spec = ContainerSpec {
            image: self.image.tag.clone(),
            name: format!("swe-forge-{}-{}-w{index}", self.seed, self.run_id),
            labels: self.labels(),
            limits: self.limits.clone(),
            fast_root: self.fast_root,
            tree_in_memory: self.tree_in_memory,
            cpu_shares: None,
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
            losses: 0,
            resident_unsafe: None,
            resident_lost: false,
            tree: None,
        };
        worker.start_agent()?;
        if self.tree_in_memory && super::recycle::scanned(&worker.spec.image).is_none() {
            // Fresh: what the test user can write in this image's containers is read here,
            // once, for recycling them (only containers that take a tree are recycled: those
            // of an image with a repository of its own are not).
            let scan = worker
                .short(&super::recycle::scan_script(), &[], &[], 1 << 20)
                .map_err(|e| e.to_string())
                .and_then(|(rc, out, err)| match rc {
                    0 => super::recycle::parse_scan(&String::from_utf8_lossy(&out)),
                    _ => Err(format!(
                        "scanning the writable places: {}",
                        String::from_utf8_lossy(&err).trim()
                    )),
                });
            if let Err(e) = &scan {
                tracing::info!(image = %worker.spec.image, "its containers are not recycled: {e}");
            }
            super::recycle::keep(&worker.spec.image, scan);
        }
        Ok(Box::new(worker))
    }
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
    /// See [`Worker::losses`].
    losses: u64,
    /// Set by a resident request the agent refused (forking the resident is not safe).
    resident_unsafe: Option<String>,
    /// Set by a resident request whose resident died or hung without answering.
    resident_lost: bool,
    /// The repository tree loaded into this container of a task base
    /// ([`Worker::load_tree`]): loaded again into a replacement.
    tree: Option<std::sync::Arc<Vec<u8>>>,
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
        self.losses += 1;
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
        let tree = self.tree.clone();
        if let (Some(tar), false) = (&tree, self.spec.tree_in_memory) {
            super::tree::put_tree(&self.client, &self.id, tar)?;
        }
        self.pending_clear = false;
        self.pending_reset = false;
        self.scratch_files = Some(HashMap::new());
        self.start_agent()?;
        if let (Some(tar), true) = (tree, self.spec.tree_in_memory) {
            self.put_tree_in_memory(&tar)?;
        }
        Ok(())
    }

    /// Extract a tree (entries under the root's name) into the in-memory root, as the test
    /// user, through the agent.
    fn put_tree_in_memory(&mut self, tar: &[u8]) -> Result<(), SandboxError> {
        self.must_succeed(
            "putting the tree into",
            "exec tar -x -p -f - -C /",
            &[],
            tar,
        )
    }

    /// Run `script` with `args` and `stdin` through the agent, as it is (no pending reset
    /// first, no replacement on failure): `Err` naming `what` and the container unless it
    /// exits 0.
    fn must_succeed(
        &mut self,
        what: &str,
        script: &str,
        args: &[&str],
        stdin: &[u8],
    ) -> Result<(), SandboxError> {
        let request = Request::short(script, args, stdin.len(), 1 << 16, SHORT_TIMEOUT, false);
        let why = match self.ask(&request, stdin, SHORT_TIMEOUT + WATCHDOG_GRACE)? {
            Ok(a) if a.reply.error.is_none() && a.reply.rc == Some(0) => return Ok(()),
            Ok(a) => a
                .reply
                .error
                .unwrap_or_else(|| String::from_utf8_lossy(&a.stderr).trim().to_string()),
            Err(NoAnswer::Timeout) => "no answer in time".to_string(),
            Err(NoAnswer::Gone(e)) => e,
        };
        Err(SandboxError::Other(format!(
            "{what} {}: {why}",
            self.spec.name
        )))
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
            let request = Request::short(
                script,
                args,
                stdin.len(),
                output_cap,
                SHORT_TIMEOUT,
                self.pending_reset,
            );
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

    /// `exec`, the repository's size measured into `measure` when given.
    fn exec_measured(
        &mut self,
        script: &str,
        timeout: Duration,
        measure: Option<&str>,
    ) -> Result<ExecOutput, SandboxError> {
        if let Some(out) = self.exec_once(script, timeout, None, measure)? {
            return Ok(out);
        }
        tracing::warn!(container = %self.spec.name, "git reset failed; replacing the container");
        self.replace()?;
        self.exec_once(script, timeout, None, measure)?
            .ok_or_else(|| SandboxError::Reset("a fresh container could not be reset".into()))
    }

    fn exec_once(
        &mut self,
        script: &str,
        timeout: Duration,
        resident: Option<&serde_json::Value>,
        measure: Option<&str>,
    ) -> Result<Option<ExecOutput>, SandboxError> {
        let request = Request {
            resident: resident.cloned(),
            measure,
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
                self.losses += 1;
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
        // The agent says when its deadline fired; a resident run's answer is read from its
        // time (allowing for the rounding of its deadline).
        let reached = r.timed_out || duration + Duration::from_millis(50) >= timeout;
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
    fn losses(&self) -> u64 {
        self.losses
    }

    fn load_tree(&mut self, tar: std::sync::Arc<Vec<u8>>) -> Result<(), SandboxError> {
        if self.spec.tree_in_memory {
            self.put_tree_in_memory(&tar)?;
        } else {
            super::tree::put_tree(&self.client, &self.id, &tar)?;
        }
        self.tree = Some(tar);
        self.pending_reset = false;
        Ok(())
    }

    fn yield_cpu(&mut self) -> Result<(), SandboxError> {
        // Kept in the spec: a container that replaces this one starts with it.
        self.spec.cpu_shares = Some(super::container::GRADER_CPU_SHARES);
        let update = bollard::models::ContainerUpdateBody {
            cpu_shares: self.spec.cpu_shares,
            ..Default::default()
        };
        self.client
            .block_on(self.client.docker().update_container(&self.id, update))
            .map_err(|e| SandboxError::Other(format!("docker update --cpu-shares: {e}")))
    }

    fn recycle(&mut self) -> Result<(), SandboxError> {
        if !self.spec.tree_in_memory {
            return Err(SandboxError::Other(
                "only a container that takes its tree is recycled".to_string(),
            ));
        }
        let extra = super::recycle::scanned(&self.spec.image)
            .unwrap_or_else(|| Err("the image's writable places were never read".to_string()))
            .map_err(SandboxError::Other)?;
        // A fresh agent kills every process of the test user first.
        self.agent = None;
        self.start_agent()?;
        let places: Vec<String> = super::recycle::always().into_iter().chain(extra).collect();
        let args: Vec<&str> = places.iter().map(String::as_str).collect();
        self.must_succeed("recycling", super::recycle::WIPE, &args, &[])?;
        self.tree = None;
        self.pending_clear = false;
        self.pending_reset = false;
        self.scratch_files = Some(HashMap::new());
        self.resident_unsafe = None;
        self.resident_lost = false;
        Ok(())
    }

    fn root(&self) -> &str {
        ROOT
    }

    fn scratch(&self) -> &str {
        SCRATCH
    }

    fn exec(&mut self, script: &str, timeout: Duration) -> Result<ExecOutput, SandboxError> {
        self.exec_measured(script, timeout, None)
    }

    fn exec_and_measure(
        &mut self,
        script: &str,
        timeout: Duration,
        size_file: &str,
    ) -> Result<ExecOutput, SandboxError> {
        // The agent measures (no `du` process: on a loaded machine each process a step starts
        // adds to its latency).
        self.exec_measured(script, timeout, Some(size_file))
    }

    fn resident_run(
        &mut self,
        run: &crate::sandbox::ResidentRun<'_>,
        timeout: Duration,
    ) -> Result<crate::sandbox::ResidentExec, SandboxError> {
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
                .then(|| format!("{SCRATCH}/{}", crate::sandbox::RESIDENT_IMPORTS)),
            budgets: run.budgets,
        };
        let payload = serde_json::json!({
            "argv": run.program.argv,
            "start": run.program.start,
            "contained": run.program.contained,
            "run": request,
        });
        self.resident_unsafe = None;
        self.resident_lost = false;
        let out = match self.exec_once("", timeout, Some(&payload), None)? {
            Some(out) => out,
            None => {
                tracing::warn!(container = %self.spec.name, "git reset failed; replacing the container");
                self.replace()?;
                self.exec_once("", timeout, Some(&payload), None)?
                    .ok_or_else(|| {
                        SandboxError::Reset("a fresh container could not be reset".into())
                    })?
            }
        };
        Ok(match self.resident_unsafe.take() {
            Some(why) => crate::sandbox::ResidentExec::Unsafe(why),
            None if std::mem::take(&mut self.resident_lost) => {
                crate::sandbox::ResidentExec::Lost(out)
            }
            None => crate::sandbox::ResidentExec::Ran(out),
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
    use super::super::DockerSandbox;
    use super::*;

    #[test]
    fn worker_is_send() {
        fn assert_send<T: Send>() {}
        fn assert_sync<T: Send + Sync>() {}
        assert_send::<DockerWorker>();
        assert_sync::<DockerSandbox>();
        assert_sync::<DockerEnv>();
    }
}
