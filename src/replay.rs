//! Task replay: a task's environment and runner rebuilt from its record alone (the image it
//! names, or its seed imported afresh at its clean commit), and its start state rebuilt. Audit
//! judges what runs here; training grades policies' patches here.

use crate::leak;
use crate::repo::Repo;
use crate::runner::pytest::Pytest;
use crate::runner::TestRunner;
use crate::sandbox::choose::DockerUnavailable;
use crate::sandbox::docker::DockerSandbox;
use crate::sandbox::local::LocalSandbox;
use crate::sandbox::{Environment, Limits, Sandbox, SandboxChoice, SandboxKind};
use crate::seed::{Seed, Source};
use crate::task::Task;
use crate::toolchain::python_pytest::PythonPytest;
use crate::toolchain::{RunnerSpec, ToolchainId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A prepared environment and its sandbox kind, or why none could be made.
pub type Prepared = Result<(Arc<dyn Environment>, SandboxKind), String>;

/// The first wait before a failed environment is tried again; it doubles with each failure.
pub const FAILURE_BACKOFF: std::time::Duration = std::time::Duration::from_secs(5);
/// The longest wait before a failed environment is tried again.
pub const FAILURE_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(300);

/// An environment that could not be prepared.
#[derive(Clone, Debug)]
pub struct Failure {
    pub error: String,
    pub at: std::time::Instant,
    /// Failures in a row.
    pub tries: u32,
}

impl Failure {
    /// How long until the next try (`None`: it may be tried now).
    pub fn retry_in(&self) -> Option<std::time::Duration> {
        let wait = FAILURE_BACKOFF
            .saturating_mul(1u32 << self.tries.saturating_sub(1).min(16))
            .min(FAILURE_BACKOFF_MAX);
        wait.checked_sub(self.at.elapsed()).filter(|d| !d.is_zero())
    }
}

/// Prepared environments, one per image or per (seed, commit, install, python path).
pub struct Environments {
    cache: PathBuf,
    tasks_file: PathBuf,
    docker: Option<DockerSandbox>,
    local: LocalSandbox,
    prepared: HashMap<String, Prepared>,
    /// Environments that failed: why, when, and how many times in a row. Tried again after a
    /// backoff that doubles with each failure ([`FAILURE_BACKOFF`], at most
    /// [`FAILURE_BACKOFF_MAX`]): a missing image built meanwhile is served without a restart.
    failed: HashMap<String, Failure>,
    /// Use the repository image (`metadata.start_state.repo_image`, where the start state is
    /// entered with the start patch) rather than each task's own image: one container pool
    /// per seed, for training's many gradings. The audit uses the task images.
    pub prefer_repo_image: bool,
    /// A task without an image is prepared in the local sandbox even where Docker is open
    /// (the audit's and training's way). `serve` turns this off unless `--unsafe-local`: an
    /// agent's shell there is a shell on the host.
    pub local_fallback: bool,
}

impl Environments {
    /// The sandboxes `choice` asks for, with `cache` (mirrors, checkouts, virtualenvs: the
    /// one `run` uses) and `limits`. `tasks_file`: where the records come from (a record's
    /// relative source is relative to it).
    pub fn open(
        choice: SandboxChoice,
        cache: &Path,
        limits: &Limits,
        tasks_file: &Path,
    ) -> Result<Environments, DockerUnavailable> {
        let opened = crate::sandbox::choose::open(choice, cache, limits, None)?;
        Ok(Environments {
            cache: cache.to_path_buf(),
            tasks_file: tasks_file.to_path_buf(),
            docker: opened.docker,
            local: opened.local,
            prepared: HashMap::new(),
            failed: HashMap::new(),
            prefer_repo_image: false,
            local_fallback: true,
        })
    }

    /// Whether Docker is open (the choice was `docker`, or `auto` and its daemon answers).
    pub fn has_docker(&self) -> bool {
        self.docker.is_some()
    }

    /// What identifies a task's environment here: its image, or its seed's source, clean
    /// commit, install command and Python path in the local sandbox.
    pub fn key_for(&self, task: &Task) -> String {
        match self.image_for(task) {
            Some(tag) => format!("image {tag}"),
            None => {
                let env = &task.metadata.environment;
                format!(
                    "local {}\0{}\0{}\0{:?}\0{}",
                    task.seed_name(),
                    env.source,
                    task.clean_commit(),
                    env.install,
                    env.python_path.join(":")
                )
            }
        }
    }

    /// The image a task's environment comes from, where Docker is used.
    fn image_for<'t>(&self, task: &'t Task) -> Option<&'t str> {
        let repo_image = task
            .metadata
            .start_state
            .as_ref()
            .and_then(|s| s.repo_image.as_deref())
            .filter(|_| self.prefer_repo_image);
        repo_image
            .or(task.image_name.as_deref())
            .filter(|_| self.docker.is_some())
    }

    /// The environment for a task and the sandbox kind (cached per image or checkout; a
    /// failure is answered again until its backoff ends, then tried anew).
    pub fn for_task(&mut self, task: &Task) -> Prepared {
        let image = self.image_for(task);
        let key = self.key_for(task);
        if let Some(found) = self.prepared.get(&key) {
            return found.clone();
        }
        if let Some(f) = self.failed.get(&key) {
            if let Some(left) = f.retry_in() {
                return Err(format!(
                    "{} (tried {} time(s); again in {}s)",
                    f.error,
                    f.tries,
                    left.as_secs().max(1)
                ));
            }
        }
        let made = match (image, &self.docker) {
            (Some(tag), Some(docker)) => docker
                .environment_for_image(tag, task.seed_name())
                .map(|e| (e, SandboxKind::Docker))
                .map_err(|e| {
                    format!("{e} (`--sandbox local` audits from the seed's source instead)")
                }),
            (None, Some(_)) if !self.local_fallback => Err(
                "the record names no image (`image_name`: it was made with the local sandbox), \
                 and it is not run on this host in its place"
                    .to_string(),
            ),
            _ => self.local_env(task).map(|e| (e, SandboxKind::Local)),
        };
        match &made {
            Ok(_) => {
                self.failed.remove(&key);
                self.prepared.insert(key, made.clone());
            }
            Err(e) => {
                let tries = self.failed.get(&key).map_or(0, |f| f.tries) + 1;
                tracing::warn!(environment = %key.replace('\0', " "), tries, "environment failed: {e}");
                self.failed.insert(
                    key,
                    Failure {
                        error: e.clone(),
                        at: std::time::Instant::now(),
                        tries,
                    },
                );
            }
        }
        made
    }

    /// The Docker environment of the image `tag` (a task base, see
    /// [`Environment::shared_base`]), cached like a task's.
    pub fn image_environment(&mut self, tag: &str, seed: &str) -> Prepared {
        let key = format!("image {tag}");
        if let Some(found) = self.prepared.get(&key) {
            return found.clone();
        }
        let docker = self
            .docker
            .as_ref()
            .ok_or_else(|| "Docker is not open".to_string())?;
        let made = docker
            .environment_for_image(tag, seed)
            .map(|e| (e, SandboxKind::Docker))
            .map_err(|e| e.to_string());
        if made.is_ok() {
            self.prepared.insert(key, made.clone());
        }
        made
    }

    /// Whether the environment of `task` failed and is waiting for its next try: why.
    pub fn failing(&self, task: &Task) -> Option<&Failure> {
        self.failed
            .get(&self.key_for(task))
            .filter(|f| f.retry_in().is_some())
    }

    /// Import the seed afresh at `base_commit` and prepare the local sandbox on it.
    fn local_env(&self, task: &Task) -> Result<Arc<dyn Environment>, String> {
        let repo = import_at_base(task, &self.cache, &self.tasks_file)?;
        let toolchain = match task.toolchain() {
            Some(t) => t.toolchain(),
            None => crate::toolchain::for_profile(&repo.profile).map_err(|e| e.to_string())?,
        };
        self.local
            .prepare(&repo, &toolchain.recipe(&repo))
            .map_err(|e| e.to_string())
    }

    /// What a task's runner is made from: its record's test command and Python path, the
    /// files of its listed tests and of `test_patch`.
    pub fn runner_spec(&self, task: &Task, kind: SandboxKind) -> RunnerSpec {
        let toolchain = task.toolchain().map(|t| t.toolchain());
        let mut files: Vec<String> = Vec::new();
        for t in task.listed_tests() {
            let file = toolchain
                .and_then(|tc| tc.test_file(&t, &[]))
                .unwrap_or_else(|| t.split("::").next().unwrap_or(&t).to_string());
            if !files.contains(&file) {
                files.push(file);
            }
        }
        for f in leak::patch_files(&task.test_patch) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        let env = &task.metadata.environment;
        RunnerSpec {
            sandbox: kind,
            cache: self.cache.clone(),
            log_dir: None,
            test_command: Some(env.test_command.clone()).filter(|c| !c.trim().is_empty()),
            test_files: files,
            source_roots: env.python_path.clone(),
            // The listed tests are (nearly) the stable suite: a long selection then names
            // the files most of whose tests it asks for rather than every id.
            known_tests: task.listed_tests(),
            test_budgets: None,
        }
    }

    /// The test runner for a task in a sandbox of `kind` (fresh processes), rebuilt from the
    /// toolchain its record names; `Err` when it names none.
    pub fn runner(&self, task: &Task, kind: SandboxKind) -> Result<Box<dyn TestRunner>, String> {
        let toolchain = task.toolchain().ok_or_else(|| {
            format!(
                "the record of a {} task names no toolchain (metadata.environment.toolchain)",
                task.language
            )
        })?;
        Ok(toolchain.toolchain().runner(&self.runner_spec(task, kind)))
    }

    /// pytest for a Python task (fresh processes); `None` for another toolchain.
    pub fn pytest(&self, task: &Task, kind: SandboxKind) -> Option<Pytest> {
        (task.toolchain() == Some(ToolchainId::PythonPytest))
            .then(|| PythonPytest::pytest(&self.runner_spec(task, kind)))
    }
}

/// A seed made from the record (`repo`, `metadata.environment`, `base_commit`), imported with
/// the library's import code, with the record's install command and Python path.
fn seed_name(task: &Task) -> String {
    task.seed_name().to_string()
}

/// Import the seed of a record at its clean commit (with the record's install command and
/// Python path).
pub fn import_for_record(task: &Task, cache: &Path, tasks_file: &Path) -> Result<Repo, String> {
    import_at_base(task, cache, tasks_file)
}

fn import_at_base(task: &Task, cache: &Path, tasks_file: &Path) -> Result<Repo, String> {
    let env = &task.metadata.environment;
    let mut seed = Seed {
        name: seed_name(task),
        source: env.source.clone(),
        revision: None,
        repo: None,
        language: task.language,
        install: env.install.clone(),
        test: None,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    // A directory or an sdist has no revisions: its import commits what is there now, and
    // the commit check below tells whether that is still `base_commit`.
    let base_dir = crate::seed::record_base_dir(&env.source, tasks_file, cache);
    let source = seed
        .resolve_source(&base_dir)
        .map_err(|e| format!("import: {e}"))?;
    if matches!(source, Source::GitUrl(_) | Source::LocalGit(_)) {
        seed.revision = Some(task.clean_commit().to_string());
    }
    let lock =
        crate::lock::FileLock::exclusive(&cache.join("locks").join(format!("{}.lock", seed.name)))
            .map_err(|e| format!("locking the seed's cache entries: {e}"))?;
    let imported = crate::toolchain::import(&seed, &base_dir, cache);
    drop(lock);
    let mut repo = imported.map_err(|e| format!("import: {e}"))?;
    if repo.commit != task.clean_commit() {
        return Err(format!(
            "importing {} gives commit {}, not the task's clean commit {} (the source changed)",
            env.source,
            repo.commit,
            task.clean_commit()
        ));
    }
    repo.profile.install_command = env.install.clone();
    repo.profile.python_path = env.python_path.clone();
    Ok(repo)
}

/// The start state of a record, rebuilt in the imported seed's mirror.
pub fn rebuild_start_state(
    task: &Task,
    info: &crate::start_state::StartStateInfo,
    repo: &Repo,
) -> Result<String, String> {
    let mirror = git2::Repository::open_bare(&repo.mirror)
        .or_else(|_| git2::Repository::open(&repo.mirror))
        .map_err(|e| format!("opening the mirror: {}", e.message()))?;
    // Only the restoring sections of test_patch belong to the start state.
    let st = crate::start_state::build(
        &mirror,
        &info.clean_commit,
        &task.bug_patch,
        &info.removed_files,
        info.hidden_tests,
        "",
    )
    .map_err(|e| e.to_string())?;
    Ok(st.commit.to_string())
}

/// Why a patch could not be graded.
#[derive(Debug)]
pub enum GradeError {
    /// The patch does not apply to the start state: the patch's fault.
    DoesNotApply(String),
    /// The environment failed (a worker that cannot reset, a runner that cannot start).
    Environment(String),
}

/// A text file of the worker's tree (from its root); `None` when absent or unreadable.
fn read_file(worker: &mut dyn crate::sandbox::Worker, path: &str) -> Option<String> {
    let script = format!("cat -- {}", crate::sandbox::shell_quote(path));
    let out = worker
        .exec(&script, std::time::Duration::from_secs(60))
        .ok()?;
    (out.exit_code == Some(0)).then_some(())?;
    String::from_utf8(out.stdout).ok()
}

/// The one grading path of a patch against a task, for `serve`'s rewards and `train`'s: the
/// worker reset and entered in the task's start state, `patch` applied (buggy → proposed),
/// `test_patch` added, then the listed tests (FAIL_TO_PASS and PASS_TO_PASS) run `repeats`
/// times with the task's runner. `stop_at_failure`: stop after the first run in which a
/// listed test does not pass (`train`'s strict rule needs no more). The runs are returned;
/// judging them is the caller's (every run, or each test by majority).
pub fn run_patched(
    worker: &mut dyn crate::sandbox::Worker,
    runner: &dyn TestRunner,
    task: &Task,
    patch: &str,
    repeats: usize,
    budget: crate::runner::RunBudget,
    stop_at_failure: bool,
) -> Result<Patched, GradeError> {
    worker
        .reset()
        .map_err(|e| GradeError::Environment(format!("reset: {e}")))?;
    crate::audit::enter_start_state(worker, task)
        .map_err(|p| GradeError::Environment(format!("{}: {}", p.reason, p.detail)))?;
    // Only changes to the task's source files are graded, whoever calls.
    let filtered = task
        .grading()
        .filter(patch, &crate::leak::patch_files(&task.test_patch));
    if !filtered.patch.trim().is_empty() {
        worker
            .apply_patch(&filtered.patch)
            .map_err(|e| GradeError::DoesNotApply(e.to_string()))?;
    }
    if !task.test_patch.trim().is_empty() {
        worker
            .apply_patch(&task.test_patch)
            .map_err(|e| GradeError::Environment(format!("adding test_patch: {e}")))?;
    }
    let listed = task.listed_tests();
    let mut tests = listed.clone();
    let mut grading = task.grading();
    // Hidden tests under names made now, in the graded files: a report that does not fail
    // the one and pass the other comes from a tampered runner.
    let canary = task.toolchain().and_then(|t| {
        let mut read = |path: &str| read_file(worker, path);
        t.toolchain()
            .canary(&grading, &crate::canary::nonce(), &mut read)
    });
    if let Some(c) = &canary {
        let script = c.script();
        let out = worker
            .exec(&script, std::time::Duration::from_secs(60))
            .map_err(|e| GradeError::Environment(format!("adding the hidden checks: {e}")))?;
        if out.exit_code != Some(0) {
            return Err(GradeError::Environment(format!(
                "adding the hidden checks to {}: {}",
                c.file,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        grading = c.grading(&grading);
        tests.push(c.must_fail.clone());
        tests.push(c.must_pass.clone());
    }
    let mut out = Patched {
        dropped: filtered.dropped,
        ..Default::default()
    };
    for r in 1..=repeats.max(1) {
        let mut run = crate::grading::run(
            runner,
            worker,
            &format!("grade#{r}"),
            &grading,
            &tests,
            budget,
        )
        .map_err(|e| GradeError::Environment(format!("running the tests: {e}")))?;
        if let Some(c) = &canary {
            if out.tampered.is_none() {
                out.tampered = c.tampered(&run, &listed);
            }
            for id in [&c.must_fail, &c.must_pass] {
                run.results.remove(id);
                run.nondeterministic.remove(id);
            }
            run.requested = Some(listed.clone());
        }
        let failed = listed
            .iter()
            .any(|t| run.status(t) != crate::run::TestStatus::Passed);
        let timed_out = run.timed_out();
        out.runs.push(run);
        // A repeat that ran out of time (an edit that loops) is not run again.
        if timed_out || ((failed || out.tampered.is_some()) && stop_at_failure) {
            break;
        }
    }
    Ok(out)
}

/// What [`run_patched`] observed.
#[derive(Debug, Default)]
pub struct Patched {
    /// The runs (the hidden checks' results taken out).
    pub runs: Vec<crate::run::Run>,
    /// Why the runner's report cannot be trusted, when the hidden checks said so: the reward
    /// is then 0 (`tampered-runner`).
    pub tampered: Option<String>,
    /// The paths of the patch's sections left out (not the task's source files).
    pub dropped: Vec<String>,
}
