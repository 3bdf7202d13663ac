//! `run`: the stages wired together — import → environment → baseline → mutate → screen and
//! verify (parallel workers) → issue → emit — with every decision written to the state store so
//! an interrupted run resumes where it stopped.

use crate::baseline::{self, Baseline, BaselineConfig};
use crate::candidate::{self, Budget, Candidate};
use crate::issue::{self, IssueInput};
use crate::lang::Language;
use crate::mutator::{self, Mutator};
use crate::repo::{self, Repo};
use crate::runner::resident::RunnerMode;
use crate::runner::TestRunner;
use crate::sandbox::{Environment, Limits, Sandbox, SandboxKind};
use crate::seed::{self, Manifest};
use crate::store::{Decided, SeedStatus, Store};
use crate::synth;
use crate::task::{self, Task};
use crate::toolchain::{self, RunnerSpec};
use crate::verdict::Verdict;
use crate::verify::{self, Outcome, VerifyConfig};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::sandbox::SandboxChoice;

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Seed(#[from] seed::SeedError),
    #[error(transparent)]
    Mutator(#[from] mutator::MutatorError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("the docker sandbox cannot be used: {0}")]
    DockerUnavailable(String),
    #[error(transparent)]
    IssueLlm(#[from] crate::issue_llm::LlmError),
    #[error("--only names {unknown:?}, which the manifest does not hold (it holds {known:?})")]
    UnknownSeeds {
        unknown: Vec<String>,
        known: Vec<String>,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> PipelineError {
    let context = context.into();
    move |source| PipelineError::Io { context, source }
}

/// The default `--synthesis-budget`: wall seconds per seed.
pub const SYNTHESIS_BUDGET_S: u64 = 1800;

/// Everything `run` needs to know.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `None`: the embedded demo seeds.
    pub manifest: Option<PathBuf>,
    pub out: PathBuf,
    pub cache: PathBuf,
    pub sandbox: SandboxChoice,
    pub jobs: usize,
    pub budget: Budget,
    pub baseline: BaselineConfig,
    pub verify: VerifyConfig,
    pub limits: Limits,
    /// Rules from this directory instead of the embedded ones (`<dir>/<language>/*.yaml`).
    pub mutators_dir: Option<PathBuf>,
    /// Only these seeds of the manifest (all when empty).
    pub only: Vec<String>,
    /// Verify these candidates (JSON lines, as `mutate --json` prints them) instead of
    /// enumerating; the file paths must be relative to the seed's repository root.
    pub candidates_file: Option<PathBuf>,
    pub progress: bool,
    /// Synthesize tests for survivors (Python).
    pub synthesize: bool,
    /// Wall seconds synthesis may spend per seed (`None`: no limit); survivors past it keep
    /// their verdict, with synthesis status `over-budget`.
    pub synthesis_budget: Option<Duration>,
    /// The most a seed's tracer runs may cost together, in plain suites by wall (default
    /// [`TRACE_FACTOR`]): top-up runs that would cross it are left out.
    pub tracer_budget: f64,
    /// Rewrite the issue texts of accepted tasks with this language model (`--issue-llm`).
    pub issue_llm: Option<crate::issue_llm::LlmConfig>,
    /// Draw the budget from the candidates this output's state store has not decided yet
    /// (the training generator's rounds: each verifies `max_total` new candidates). Off for
    /// `run`, where an interrupted run resumes the same sample.
    pub undecided_only: bool,
    /// `--visible-tests`: leave the FAIL_TO_PASS tests' files in the agent's start state (an
    /// easier variant; recorded as `metadata.start_state.hidden_tests: visible`).
    pub visible_tests: bool,
    /// `--runner`: the resident runner where a seed qualifies (default), or fresh processes.
    pub runner: RunnerMode,
    /// Build the accepted tasks' images after each seed (Docker sandbox). Off
    /// (`--no-task-images`): the records name them all the same and `image tasks` builds them.
    pub task_images: bool,
}

/// What happened to one seed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SeedSummary {
    pub seed: String,
    /// `done`, `rejected` (baseline unusable, no tests…), `failed` (import or environment).
    pub status: String,
    pub detail: String,
    pub commit: Option<String>,
    pub files: usize,
    pub skipped_files: usize,
    /// Candidates of `--candidates` that do not apply to the checkout (logged with why).
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_candidates: usize,
    pub enumerated: usize,
    pub sampled: usize,
    /// Decided in an earlier, interrupted run and not redone.
    pub resumed: usize,
    pub decided: usize,
    pub killed: usize,
    pub accepted: usize,
    pub rejected: BTreeMap<String, usize>,
    pub seconds: f64,
    /// With `--issue-llm`: the tasks whose problem statement is the model's rewrite (`llm`)
    /// and those that kept the template text, by reason (`fallback-error`, `fallback-leak`,
    /// `fallback-unfit`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub issue_rewrite: BTreeMap<String, usize>,
    /// The Docker image the seed's tests ran in (absent with the local backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_id: Option<String>,
    /// Whether this run built the image (false: an image with the same content hash was reused).
    pub image_built: bool,
    /// Test ids the accepted tasks left out because SWE-bench's log parsers cannot read them
    /// back (`fail_to_pass`, `pass_to_pass`); candidates rejected for it count under
    /// `rejected["unreadable-test-ids"]`.
    pub dropped_test_ids: task::DroppedTestIds,
    /// How tests ran: `resident` (a resident runner per worker) or `fresh` (a process per run).
    pub runner: String,
    /// Why the resident runner was not used for this seed (it gave other per-test outcomes
    /// than fresh processes on the clean code, the sandbox has none…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_fallback: Option<String>,
    /// Task images (`image_name`: the start state over the repository image) built by this
    /// run, reused, and failed (with the reasons logged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_images: Option<crate::sandbox::task_image::TaskImagesSummary>,
    /// What test synthesis spent on this run's survivors (absent when none needed it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthesis: Option<SynthesisSummary>,
}

/// Test synthesis on one seed in this run: against its budget, and the tracer against the
/// plain suite.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SynthesisSummary {
    /// `--synthesis-budget` in seconds (absent: unlimited).
    pub budget_s: Option<f64>,
    /// Candidates that went to synthesis (survivors and ungradable kills).
    pub survivors: usize,
    /// Of those, left as they were because the budget was spent.
    pub over_budget: usize,
    /// Wall seconds synthesis spent: tracing, replaying, searching, verifying the tests.
    pub seconds: f64,
    /// Tracer runs, the tests they ran (each test is traced at most once per seed), and their
    /// wall seconds.
    pub trace_runs: usize,
    pub traced_tests: usize,
    pub trace_s: f64,
    /// The plain suite's wall seconds (the baseline's mean), to compare the tracer with.
    pub suite_s: f64,
    /// The tracer runs' CPU seconds (user + system of their processes) and the plain suite's
    /// (the baseline's mean), where measured: the tracer's budget is kept in CPU seconds when
    /// both are known, as a loaded machine stretches wall seconds unevenly.
    pub trace_cpu_s: f64,
    pub suite_cpu_s: Option<f64>,
    /// Top-up tracer runs left out because they would have taken the tracer past
    /// [`TRACE_FACTOR`] times the suite.
    pub top_ups_skipped: usize,
}

/// What `run` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunSummary {
    pub out: PathBuf,
    pub sandbox: String,
    pub seeds: Vec<SeedSummary>,
    pub tasks: usize,
    pub interrupted: bool,
    pub seconds: f64,
}

/// Set by Ctrl-C: workers finish their current candidate and stop.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Load the manifest (or the embedded demo) and run the whole pipeline.
pub fn run(cfg: &RunConfig) -> Result<RunSummary, PipelineError> {
    let started = Instant::now();
    std::fs::create_dir_all(&cfg.out).map_err(io_err(format!("creating {}", cfg.out.display())))?;
    std::fs::create_dir_all(&cfg.cache)
        .map_err(io_err(format!("creating {}", cfg.cache.display())))?;
    let manifest_path = match &cfg.manifest {
        Some(p) => p.clone(),
        None => {
            crate::assets::demo_manifest(&cfg.cache).map_err(io_err("extracting the demo seeds"))?
        }
    };
    let manifest = seed::load_manifest(&manifest_path)?;
    let seeds = selected(&manifest, &cfg.only)?;
    let rewriter = match &cfg.issue_llm {
        Some(c) => {
            tracing::info!(endpoint = %c.endpoint.chat, model = ?c.model, "issue texts of accepted tasks are rewritten by a language model");
            Some(crate::issue_llm::Rewriter::new(c.clone())?)
        }
        None => None,
    };
    let sandbox = make_sandbox(cfg)?;
    let store = Store::open(&cfg.out.join("state.db"))?;
    let mut summary = RunSummary {
        out: cfg.out.clone(),
        sandbox: sandbox.kind().to_string(),
        ..Default::default()
    };
    for seed in seeds {
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        let s = run_seed(
            cfg,
            &manifest,
            seed,
            sandbox.as_ref(),
            &store,
            rewriter.as_ref(),
        )?;
        tracing::info!(
            seed = %s.seed,
            status = %s.status,
            accepted = s.accepted,
            decided = s.decided,
            "seed finished"
        );
        summary.seeds.push(s);
    }
    summary.tasks = write_outputs(&store, &cfg.out)?;
    summary.interrupted = STOP.load(Ordering::SeqCst);
    summary.seconds = started.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&summary).expect("summary serializes");
    std::fs::write(cfg.out.join("summary.json"), json).map_err(io_err("writing summary.json"))?;
    Ok(summary)
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The seeds `--only` names, in the manifest's order; a name the manifest lacks is an error
/// rather than a run that silently does nothing.
fn selected<'m>(
    manifest: &'m Manifest,
    only: &[String],
) -> Result<Vec<&'m crate::seed::Seed>, PipelineError> {
    let unknown: Vec<String> = only
        .iter()
        .filter(|n| !manifest.seeds.iter().any(|s| &s.name == *n))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(PipelineError::UnknownSeeds {
            unknown,
            known: manifest.seeds.iter().map(|s| s.name.clone()).collect(),
        });
    }
    Ok(manifest
        .seeds
        .iter()
        .filter(|s| only.is_empty() || only.contains(&s.name))
        .collect())
}

/// Build the sandbox the configuration asks for: `auto` takes Docker when the daemon answers
/// and a Python base image can be had, else the local backend with a warning that nothing is
/// isolated.
pub fn make_sandbox(cfg: &RunConfig) -> Result<Box<dyn Sandbox>, PipelineError> {
    crate::sandbox::choose::open(cfg.sandbox, &cfg.cache, &cfg.limits, Some(Language::Python))
        .map(|s| s.primary())
        .map_err(|e| PipelineError::DockerUnavailable(e.to_string()))
}

/// Every test id the baseline's runs reported.
fn baseline_ids(baseline: &baseline::Baseline) -> Vec<String> {
    baseline
        .runs
        .iter()
        .flat_map(|r| r.results.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .cloned()
        .collect()
}

/// What a repository's runners are made from.
fn runner_spec(cfg: &RunConfig, repo: &Repo, sandbox: SandboxKind) -> RunnerSpec {
    RunnerSpec {
        sandbox,
        cache: cfg.cache.clone(),
        log_dir: Some(cfg.out.join("logs").join(&repo.name)),
        test_command: repo.seed.test.clone(),
        test_files: repo.profile.test_files.clone(),
        source_roots: repo.profile.python_path.clone(),
        known_tests: Vec::new(),
    }
}

/// The mutators for a language: from `--mutators DIR` or the embedded rules.
pub fn load_rules(dir: Option<&Path>, lang: Language) -> Result<Vec<Mutator>, PipelineError> {
    Ok(match dir {
        Some(d) => mutator::load_dir(&d.join(lang.name()), lang)?,
        None => mutator::load_embedded(lang)?,
    })
}

fn record_status(store: &Store, s: &SeedSummary) -> Result<(), PipelineError> {
    store.put_seed_status(&SeedStatus {
        seed: s.seed.clone(),
        status: s.status.clone(),
        detail: s.detail.clone(),
    })?;
    Ok(())
}

fn run_seed(
    cfg: &RunConfig,
    manifest: &Manifest,
    seed: &crate::seed::Seed,
    sandbox: &dyn Sandbox,
    store: &Store,
    rewriter: Option<&crate::issue_llm::Rewriter>,
) -> Result<SeedSummary, PipelineError> {
    let started = Instant::now();
    let mut s = SeedSummary {
        seed: seed.name.clone(),
        runner: "fresh".into(),
        ..Default::default()
    };
    let finish = |mut s: SeedSummary, status: &str, detail: String| {
        s.status = status.to_string();
        s.detail = detail;
        s.seconds = started.elapsed().as_secs_f64();
        if s.status != "done" {
            tracing::error!(seed = %s.seed, "{}: {}", s.status, s.detail);
        }
        record_status(store, &s).map(|_| s)
    };

    // Import.
    let t = Instant::now();
    let lock = crate::lock::FileLock::exclusive(
        &cfg.cache.join("locks").join(format!("{}.lock", seed.name)),
    )
    .map_err(io_err("locking the seed's cache entries"))?;
    let imported = repo::import(seed, &manifest.base_dir, &cfg.cache);
    drop(lock);
    let repo = match imported {
        Ok(r) => r,
        Err(e) => return finish(s, "failed", format!("import: {e}")),
    };
    store.add_stage_time(&seed.name, "import", t.elapsed().as_secs_f64())?;
    s.commit = Some(repo.commit.clone());
    let toolchain = match toolchain::for_profile(&repo.profile) {
        Ok(t) => t,
        Err(why) => return finish(s, "rejected", why.to_string()),
    };

    // Environment.
    let t = Instant::now();
    let env = match sandbox.prepare(&repo) {
        Ok(e) => e,
        Err(e) => return finish(s, "failed", format!("environment: {e}")),
    };
    s.image = env.image_name();
    s.image_id = env.image_id();
    s.image_built = env.image_built();
    store.add_stage_time(&seed.name, "environment", t.elapsed().as_secs_f64())?;
    let mut spec = runner_spec(cfg, &repo, sandbox.kind());
    let test_command = toolchain.test_command(&spec);
    let first_runner = toolchain.runner(&spec);
    let runner = first_runner.as_ref();

    // Baseline.
    let baseline = match store.baseline(&seed.name, &repo.commit)? {
        Some(b) => {
            tracing::info!(seed = %seed.name, "baseline reused from the state store");
            b
        }
        None => {
            let t = Instant::now();
            let spinner = spinner(cfg.progress, format!("{}: baseline", seed.name));
            let result = env.worker(0).map_err(|e| e.to_string()).and_then(|mut w| {
                baseline::run_baseline(w.as_mut(), runner, &cfg.baseline).map_err(|e| e.to_string())
            });
            spinner.finish_and_clear();
            store.add_stage_time(&seed.name, "baseline", t.elapsed().as_secs_f64())?;
            match result {
                Ok(b) => {
                    store.put_baseline(&seed.name, &repo.commit, &b)?;
                    b
                }
                Err(e) => return finish(s, "rejected", format!("baseline: {e}")),
            }
        }
    };
    tracing::info!(
        seed = %seed.name,
        stable = baseline.stable_pass.len(),
        flaky = baseline.flaky.len(),
        failing = baseline.failing.len(),
        timeout_s = baseline.run_timeout_s,
        cpu_limit_s = ?baseline.run_cpu_limit_s,
        "baseline"
    );

    // The resident runner, where it gives the fresh baseline's per-test outcomes.
    let t = Instant::now();
    let qualify = |q: &Qualify<'_>| {
        let pb = spinner(cfg.progress, format!("{}: resident runner", seed.name));
        let qualified = env
            .worker(0)
            .map_err(|e| e.to_string())
            .and_then(|mut w| q(w.as_mut()));
        pb.finish_and_clear();
        qualified
    };
    spec.known_tests = baseline_ids(&baseline);
    let qualified = match cfg.runner {
        RunnerMode::Resident => Some(qualify(&|w| {
            let _span = tracing::info_span!("seed", seed = %seed.name).entered();
            toolchain.resident(&spec, w, &baseline)
        })),
        RunnerMode::Fresh => None,
    };
    let resident: Option<Box<dyn TestRunner>> = match qualified {
        Some(Ok(r)) => {
            s.runner = "resident".into();
            Some(r)
        }
        Some(Err(why)) => {
            tracing::warn!(seed = %seed.name, "resident runner not used, fresh processes instead: {why}");
            s.runner_fallback = Some(why);
            None
        }
        None => None,
    };
    store.add_stage_time(&seed.name, "resident", t.elapsed().as_secs_f64())?;
    // Fresh processes, knowing the suite's files from the baseline.
    let fresh = toolchain.runner(&spec);
    let runner = resident.as_deref().unwrap_or(fresh.as_ref());

    // Mutate.
    let t = Instant::now();
    let enumerated = match &cfg.candidates_file {
        Some(path) => {
            let (usable, refused) = check_candidates(&repo.checkout, read_candidates(path)?);
            for (id, why) in &refused {
                tracing::warn!(seed = %seed.name, candidate = %id, "candidate skipped: {why}");
            }
            s.skipped_candidates = refused.len();
            usable
        }
        None => {
            let rules = load_rules(cfg.mutators_dir.as_deref(), repo.profile.language)?;
            let enumeration = candidate::enumerate(
                &repo.checkout,
                &repo.profile.source_files,
                repo.profile.language,
                &rules,
            );
            for skipped in &enumeration.skipped {
                tracing::warn!(seed = %seed.name, file = %skipped.file, "skipped: {}", skipped.reason);
            }
            s.files = enumeration.files;
            s.skipped_files = enumeration.skipped.len();
            enumeration.candidates
        }
    };
    s.enumerated = enumerated.len();
    let decided = store.decided_ids(&seed.name)?;
    let mut enumerated = enumerated;
    if cfg.undecided_only {
        enumerated.retain(|c| !decided.contains(&c.id));
    }
    let sampled = candidate::sample(enumerated, &cfg.budget);
    s.sampled = sampled.len();
    store.add_stage_time(&seed.name, "mutate", t.elapsed().as_secs_f64())?;
    write_candidates_listing(&cfg.out, &seed.name, &sampled)?;

    // Screen and verify what is not decided yet.
    let todo: Vec<Candidate> = sampled
        .iter()
        .filter(|c| !decided.contains(&c.id))
        .cloned()
        .collect();
    s.resumed = sampled.len() - todo.len();
    if s.resumed > 0 {
        tracing::info!(seed = %seed.name, resumed = s.resumed, "resuming: candidates already decided are kept");
    }
    let t = Instant::now();
    let ctx = SeedContext {
        repo: &repo,
        baseline: &baseline,
        env: env.clone(),
        image: env.image_name(),
        sandbox: sandbox.kind(),
        repeats: cfg.verify.repeats,
        synth: (cfg.synthesize && toolchain.synthesizes_tests()).then(|| synth::SynthSetup {
            python: test_command
                .strip_suffix(" -m pytest")
                .unwrap_or("python")
                .to_string(),
            pytest: test_command.clone(),
            source_files: repo.profile.source_files.clone(),
            python_path: repo.profile.python_path.clone(),
            test_files: repo.profile.test_files.clone(),
        }),
        trace: Mutex::new(TraceCache::default()),
        synth_budget: cfg.synthesis_budget,
        tracer_budget: cfg.tracer_budget,
        synth_spent: Mutex::new(SynthesisSummary {
            budget_s: cfg.synthesis_budget.map(|d| d.as_secs_f64()),
            suite_s: baseline.mean_wall_s(),
            suite_cpu_s: baseline.mean_cpu_s().filter(|c| *c > 0.0),
            ..Default::default()
        }),
        test_command,
        toolchain: toolchain.id(),
        rewriter,
    };
    verify_all(cfg, &ctx, runner, todo, store)?;
    store.add_stage_time(&seed.name, "verify", t.elapsed().as_secs_f64())?;
    {
        let spent = ctx.synth_spent.lock().expect("synthesis tally").clone();
        if spent.survivors > 0 {
            store.add_stage_time(&seed.name, "synthesis", spent.seconds)?;
            store.add_stage_time(&seed.name, "trace", spent.trace_s)?;
            tracing::info!(seed = %seed.name, survivors = spent.survivors, over_budget = spent.over_budget, seconds = spent.seconds, trace_runs = spent.trace_runs, traced_tests = spent.traced_tests, trace_seconds = spent.trace_s, suite_seconds = spent.suite_s, trace_cpu_seconds = spent.trace_cpu_s, suite_cpu_seconds = ?spent.suite_cpu_s, "synthesis");
            s.synthesis = Some(spent);
        }
    }

    // Task images: each accepted task's start state over the repository image.
    if sandbox.kind() == SandboxKind::Docker && !cfg.task_images {
        tracing::info!(seed = %seed.name, "task images not built (--no-task-images): `swe-forge image tasks` builds them from the records");
    }
    if sandbox.kind() == SandboxKind::Docker && cfg.task_images && !STOP.load(Ordering::SeqCst) {
        let t = Instant::now();
        let decided = store.decided()?;
        let tasks: Vec<&Task> = decided
            .iter()
            .filter(|d| d.seed == seed.name)
            .filter_map(|d| d.task.as_ref())
            .filter(|t| t.image_name.is_some())
            .collect();
        if !tasks.is_empty() {
            let pb = spinner(cfg.progress, format!("{}: task images", seed.name));
            let (summary, _) = crate::task_images::build_for_tasks(
                &cfg.cache,
                &repo.mirror,
                &tasks,
                &|msg: &str| pb.set_message(format!("{}: {msg}", seed.name)),
            );
            pb.finish_and_clear();
            tracing::info!(seed = %seed.name, built = summary.built, reused = summary.reused, failed = summary.failed, seconds = summary.seconds, "task images");
            s.task_images = Some(summary);
        }
        store.add_stage_time(&seed.name, "task-images", t.elapsed().as_secs_f64())?;
    }

    // Tally from the store (includes resumed decisions).
    for d in store.decided()?.iter().filter(|d| d.seed == seed.name) {
        s.decided += 1;
        // Killed: screening saw at least one covering test fail.
        if d.outcome
            .runs
            .first()
            .is_some_and(|r| r.label == "screen" && !r.failures().is_empty())
        {
            s.killed += 1;
        }
        match d.outcome.verdict.reason() {
            None => s.accepted += 1,
            Some(r) => *s.rejected.entry(r.to_string()).or_default() += 1,
        }
        if let Some(t) = &d.task {
            s.dropped_test_ids.fail_to_pass += t.metadata.dropped_test_ids.fail_to_pass;
            s.dropped_test_ids.pass_to_pass += t.metadata.dropped_test_ids.pass_to_pass;
        }
        if let Some(key) = d
            .task
            .as_ref()
            .and_then(|t| t.metadata.issue_rewrite.tally_key())
        {
            *s.issue_rewrite.entry(key).or_default() += 1;
        }
    }
    let detail = if STOP.load(Ordering::SeqCst) {
        "interrupted".to_string()
    } else {
        String::new()
    };
    finish(s, "done", detail)
}

/// Qualifies a resident runner on a worker, or says why it cannot be used.
type Qualify<'q> =
    dyn Fn(&mut dyn crate::sandbox::Worker) -> Result<Box<dyn TestRunner>, String> + 'q;

struct SeedContext<'a> {
    repo: &'a Repo,
    baseline: &'a Baseline,
    env: Arc<dyn Environment>,
    image: Option<String>,
    sandbox: SandboxKind,
    repeats: usize,
    test_command: String,
    toolchain: toolchain::ToolchainId,
    /// Test synthesis for survivors (Python, unless `--no-synthesis`).
    synth: Option<synth::SynthSetup>,
    /// The clean suite's recorded calls so far (see [`TraceCache`]).
    trace: Mutex<TraceCache>,
    /// `--synthesis-budget`: seconds synthesis may spend on this seed; what it spent.
    synth_budget: Option<Duration>,
    /// `RunConfig::tracer_budget`.
    tracer_budget: f64,
    synth_spent: Mutex<SynthesisSummary>,
    /// Rewrites the issue texts of accepted tasks (`--issue-llm`).
    rewriter: Option<&'a crate::issue_llm::Rewriter>,
}

fn spinner(show: bool, msg: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner().with_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn verify_all(
    cfg: &RunConfig,
    ctx: &SeedContext<'_>,
    runner: &dyn TestRunner,
    todo: Vec<Candidate>,
    store: &Store,
) -> Result<(), PipelineError> {
    if todo.is_empty() {
        return Ok(());
    }
    let pb = if cfg.progress {
        let pb = ProgressBar::new(todo.len() as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} candidates · {msg} · {elapsed_precise} (eta {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(ctx.repo.name.clone());
        pb
    } else {
        ProgressBar::hidden()
    };
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<_>>());
    let jobs = cfg.jobs.max(1).min(queue.lock().expect("queue").len());
    let (tx, rx) = mpsc::channel::<Result<(Candidate, Outcome), String>>();
    let mut accepted = 0usize;
    let mut failure: Option<PipelineError> = None;
    std::thread::scope(|scope| {
        for i in 0..jobs {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                let mut worker = match ctx.env.worker(i + 1) {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.send(Err(format!("worker {i}: {e}")));
                        return;
                    }
                };
                // The seed's objects, to tell whether a check's tree is the clean one.
                let objects = git2::Repository::open_bare(&ctx.repo.mirror)
                    .or_else(|_| git2::Repository::open(&ctx.repo.mirror))
                    .map_err(|e| tracing::warn!("opening the mirror: {}", e.message()))
                    .ok();
                let clean_tree = objects
                    .as_ref()
                    .and_then(|r| crate::start_state::tree_after(r, &ctx.repo.commit, &[]).ok());
                loop {
                    if STOP.load(Ordering::SeqCst) {
                        return;
                    }
                    let Some(cand) = queue.lock().expect("queue").pop_front() else {
                        return;
                    };
                    let clean = std::fs::read_to_string(ctx.repo.checkout.join(&cand.file))
                        .unwrap_or_default();
                    let gold = task::gold_patch(&clean, &cand);
                    // Buggy + gold fix byte-identical to the clean tree the baseline ran?
                    let fixed_is_clean = objects.as_ref().zip(clean_tree).and_then(|(r, ct)| {
                        crate::start_state::tree_after(
                            r,
                            &ctx.repo.commit,
                            &[&cand.bug_patch, &gold],
                        )
                        .ok()
                        .filter(|t| *t == ct)
                        .map(|t| t.to_string())
                    });
                    let mut outcome = verify::screen_and_verify(
                        worker.as_mut(),
                        runner,
                        ctx.baseline,
                        &cand,
                        &gold,
                        fixed_is_clean.as_deref(),
                        &cfg.verify,
                    );
                    // Killed, but only by tests that cannot grade the task: ids SWE-bench's
                    // log parsers cut (parameters with spaces), or doctests in the code the
                    // agent edits (it could pass them by editing the docstring). A synthesized
                    // test with a readable id, in a test file, can carry the task instead.
                    // Otherwise it is rejected with that reason, never a survivor's verdict:
                    // the suite does kill it.
                    let ungradable = ungradable(&outcome, &ctx.repo.profile.test_files);
                    let survivor = outcome.verdict.reason().is_some_and(|r| r.is_survivor());
                    let killed_by = outcome.fail_to_pass.clone();
                    if ungradable.is_some() {
                        outcome.pass_to_pass.clear();
                        outcome.reused.clear();
                    }
                    if ungradable.is_some() || survivor {
                        if let Some(setup) = &ctx.synth {
                            let started = Instant::now();
                            if let Some(record) = over_budget(ctx) {
                                outcome.synthesis = Some(record);
                            } else {
                                outcome = synthesize(
                                    worker.as_mut(),
                                    ctx,
                                    setup,
                                    runner,
                                    &cand,
                                    &gold,
                                    &cfg.verify,
                                    objects.as_ref(),
                                    outcome,
                                );
                            }
                            ctx.synth_spent.lock().expect("synthesis tally").seconds +=
                                started.elapsed().as_secs_f64();
                        }
                    }
                    if let Some((reason, why)) = ungradable {
                        let rescued = outcome.verdict.is_accepted()
                            && outcome
                                .synthesis
                                .as_ref()
                                .is_some_and(|s| s.status == "synthesized");
                        if !rescued {
                            outcome.verdict = Verdict::rejected(
                                reason,
                                format!(
                                    "{why}, and no synthesized test took their place: {}",
                                    killed_by.join(", ")
                                ),
                            );
                            outcome.fail_to_pass = killed_by;
                            outcome.pass_to_pass.clear();
                        }
                    }
                    if tx.send(Ok((cand, outcome))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Ok((cand, mut outcome)) => {
                    pb.inc(1);
                    let dropped = if outcome.verdict.is_accepted() {
                        keep_readable_ids(&mut outcome)
                    } else {
                        Default::default()
                    };
                    let task = if outcome.verdict.is_accepted() {
                        match build_task(cfg, ctx, &cand, &outcome, dropped) {
                            Ok((mut t, key_values)) => match crate::leak::find_leak(&t) {
                                None => {
                                    t.metadata.difficulty.issue_names_file =
                                        crate::leak::names_file(
                                            &t.problem_statement,
                                            &crate::leak::LeakFacts::from_task(&t),
                                        );
                                    // Only now, for a task that is accepted either way.
                                    if let Some(rw) = ctx.rewriter {
                                        pb.set_message(format!(
                                            "{accepted} accepted · rewriting an issue"
                                        ));
                                        rewrite_issue(rw, &mut t, &key_values);
                                    }
                                    Some(t)
                                }
                                Some(leak) => {
                                    outcome.verdict = Verdict::rejected(
                                        crate::verdict::Reason::IssueLeak,
                                        format!("the issue text would reveal the fix: {leak}"),
                                    );
                                    None
                                }
                            },
                            Err(e) => {
                                tracing::error!(candidate = %cand.id, "building the task: {e}");
                                None
                            }
                        }
                    } else {
                        None
                    };
                    if task.is_some() {
                        accepted += 1;
                    }
                    pb.set_message(format!("{accepted} accepted"));
                    tracing::debug!(candidate = %cand.id, verdict = ?outcome.verdict, "decided");
                    let d = Decided {
                        seed: ctx.repo.name.clone(),
                        candidate: cand,
                        outcome,
                        task,
                    };
                    if let Err(e) = store.put_decided(&d) {
                        failure.get_or_insert(e.into());
                        STOP.store(true, Ordering::SeqCst);
                    }
                }
                Err(e) => tracing::error!("{e}"),
            }
        }
    });
    pb.finish_and_clear();
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Counts a candidate that goes to synthesis; when the seed's synthesis budget is spent, the
/// record that says so (the candidate keeps its verdict).
fn over_budget(ctx: &SeedContext<'_>) -> Option<synth::SynthRecord> {
    let mut spent = ctx.synth_spent.lock().expect("synthesis tally");
    spent.survivors += 1;
    let budget = ctx.synth_budget?;
    if spent.seconds < budget.as_secs_f64() {
        return None;
    }
    spent.over_budget += 1;
    Some(synth::SynthRecord {
        status: "over-budget".into(),
        detail: format!(
            "the seed's synthesis budget ({} s) was spent",
            budget.as_secs()
        ),
        ..Default::default()
    })
}

/// The clean suite's calls recorded so far for a seed: the first survivor traces the whole
/// suite (a run of its own costs 1-2.6x the plain suite on the real projects of BENCHMARKS.md;
/// a selection first and the suite after it cost one more pytest start, which took
/// marshmallow's tracer from 2.6x to 4.5x), and every later survivor uses that record.
///
/// A survivor that tests run but that no recorded call reaches after that (the suite's earlier
/// tests spent its function's or its receivers' caps: marshmallow's `Validator._repr_args`,
/// reached only from `Email(...)` objects the first 40 constructions of `Email` were not)
/// traces its own tests once more, in a run of their own, and so does a kill no harness can
/// grade (humanize's parametrized ids with spaces), with the tests that failed: a whole-suite
/// trace keeps the first calls of each function, not those: at most [`TOP_UP_RUNS`] such runs
/// of at most [`TOP_UP_TESTS`] tests each per seed, and none that would take the seed's
/// tracer past [`TRACE_FACTOR`] times the plain suite.
#[derive(Default)]
struct TraceCache {
    trace: synth::Trace,
    traced: std::collections::BTreeSet<String>,
    whole_suite: bool,
    top_ups: usize,
    /// What the next top-up is expected to cost, in wall seconds: [`FIRST_TOP_UP`] of the
    /// whole-suite run, then the last top-up's.
    last_run_s: f64,
}

/// Top-up tracer runs per seed, and the most tests one takes (see [`TraceCache`]). Each run
/// pays pytest's start, collection and the package's import (2-4 s on marshmallow or
/// boltons at load 3-4): six runs of up to 400 tests, the first setting, took marshmallow's
/// tracer from 2.7x to 6.8x the suite for one more rescue (a metaclass `__init__` that 359
/// tests run cost 7.7 s and rescued nothing), so few and small.
const TOP_UP_RUNS: usize = 4;

/// What the first top-up run is expected to cost, as a share of the whole-suite tracer run.
const FIRST_TOP_UP: f64 = 0.75;
const TOP_UP_TESTS: usize = 50;

/// The most a seed's tracer runs may cost together by default, in plain suites (by CPU
/// seconds where measured, else wall): a top-up run that would cross it is left out and
/// counted in the run summary.
pub const TRACE_FACTOR: f64 = 3.0;

/// Whether a top-up tracer run still fits the seed's tracer budget: the seconds traced so far,
/// plus what the run is expected to take, within `factor` plain suites ([`TRACE_FACTOR`] by
/// default). Expected: the
/// last top-up's seconds, else [`FIRST_TOP_UP`] of the whole-suite run's: pytest's start,
/// collection and the package's import dominate a run of at most [`TOP_UP_TESTS`] tests
/// (toolz: 2.3 s for 25 tests against 3.0 s for all 192; half a plain suite, the first
/// estimate, took its tracer to 3.1x). A suite whose seconds are unknown (0) sets no limit.
fn top_up_fits(traced_s: f64, expected_s: f64, suite_s: f64, factor: f64) -> bool {
    suite_s <= 0.0 || traced_s + expected_s <= factor * suite_s
}

/// Whether a recorded call or scenario of `trace` reaches `cand`'s function.
fn trace_reaches(trace: &synth::Trace, cand: &Candidate) -> bool {
    let target = format!("{}::{}", cand.file, cand.function);
    trace.calls.iter().any(|c| c.reaches.contains(&target))
        || trace.scenarios.iter().any(|s| s.reaches.contains(&target))
}

/// The stable tests that run `cand`'s function's lines (no fallback to its file).
fn function_tests(baseline: &Baseline, cand: &Candidate) -> Vec<String> {
    if baseline.coverage_unavailable.is_some() {
        return Vec::new();
    }
    let (first, last) = cand.function_lines;
    baseline
        .coverage
        .tests_covering(&cand.file, first, last)
        .into_iter()
        .filter(|t| baseline.stable_pass.contains(t))
        .collect()
}

/// The trace `cand` needs: the cache, after tracing the whole suite once per seed and, where
/// no recorded call reaches `cand`'s function, its own tests (see [`TraceCache`]).
fn trace_for(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    cand: &Candidate,
    killing: &[String],
    timeout: Duration,
) -> (synth::Trace, Option<String>) {
    let mut cache = ctx.trace.lock().expect("trace cache");
    let mut error = None;
    if !cache.whole_suite {
        let (e, cost) = trace_into(worker, ctx, setup, cand, None, timeout, &mut cache);
        error = e;
        cache.last_run_s = FIRST_TOP_UP * cost;
        // Not traced again either way: a failing tracer would fail (and wait out its timeout)
        // for every survivor.
        cache.whole_suite = true;
    }
    // The tests of an ungradable kill that failed with the bug, else (when no recorded call
    // reaches the function) those that run it.
    let own: Vec<String> = if !killing.is_empty() {
        killing.iter().take(TOP_UP_TESTS).cloned().collect()
    } else if !trace_reaches(&cache.trace, cand) {
        function_tests(ctx.baseline, cand)
    } else {
        Vec::new()
    };
    if error.is_none() && cache.top_ups < TOP_UP_RUNS {
        // Tests already traced in a top-up of their own would record the same again.
        if !own.is_empty()
            && own.len() <= TOP_UP_TESTS
            && !own.iter().all(|t| cache.traced.contains(t))
        {
            let (traced_s, suite_s) = ctx
                .synth_spent
                .lock()
                .expect("synthesis tally")
                .tracer_cost();
            if top_up_fits(traced_s, cache.last_run_s, suite_s, ctx.tracer_budget) {
                cache.top_ups += 1;
                let (e, cost) =
                    trace_into(worker, ctx, setup, cand, Some(&own), timeout, &mut cache);
                error = e;
                cache.last_run_s = cost;
                cache.traced.extend(own);
            } else {
                tracing::info!(seed = %ctx.repo.name, candidate = %cand.id, traced_s, suite_s, "a top-up tracer run would take the tracer past {}x the suite: left out", ctx.tracer_budget);
                ctx.synth_spent
                    .lock()
                    .expect("synthesis tally")
                    .top_ups_skipped += 1;
            }
        }
    }
    (cache.trace.clone(), error)
}

/// One tracer run of `tests` (`None`: the whole suite), merged into the cache and counted in
/// the seed's synthesis tally; the error, when it failed, and what the run cost (in the
/// measure of [`SynthesisSummary::tracer_cost`]).
fn trace_into(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    cand: &Candidate,
    tests: Option<&[String]>,
    timeout: Duration,
    cache: &mut TraceCache,
) -> (Option<String>, f64) {
    let t = Instant::now();
    let r = synth::trace(worker, setup, tests, timeout);
    let seconds = t.elapsed().as_secs_f64();
    let count = tests.map_or(ctx.baseline.stable_pass.len(), <[String]>::len);
    let cpu = r.as_ref().ok().and_then(|tr| tr.cpu_s);
    let error = match r {
        Ok(tr) => {
            tracing::info!(seed = %ctx.repo.name, candidate = %cand.id, tests = count, calls = tr.calls.len(), scenarios = tr.scenarios.len(), dropped = tr.dropped, seconds, "recorded the clean suite's calls");
            cache.trace.merge(tr);
            None
        }
        Err(e) => {
            tracing::warn!(seed = %ctx.repo.name, candidate = %cand.id, tests = count, "tracing the clean suite failed: {e}");
            Some(e.to_string())
        }
    };
    let mut spent = ctx.synth_spent.lock().expect("synthesis tally");
    spent.trace_runs += 1;
    spent.traced_tests += count;
    spent.trace_s += seconds;
    // A run whose CPU went unmeasured counts its wall seconds (more, never less).
    spent.trace_cpu_s += cpu.unwrap_or(seconds);
    let cost = if spent.suite_cpu_s.is_some() {
        cpu.unwrap_or(seconds)
    } else {
        seconds
    };
    (error, cost)
}

impl SynthesisSummary {
    /// What the tracer has cost so far and what a plain suite costs, in the same measure: CPU
    /// seconds where the suite's were measured, else wall seconds.
    fn tracer_cost(&self) -> (f64, f64) {
        match self.suite_cpu_s {
            Some(suite) => (self.trace_cpu_s, suite),
            None => (self.trace_s, self.suite_s),
        }
    }
}

/// Give a survivor a synthesized test: trace the tests that reach its function (each test
/// once per seed), replay the calls that reach it, write the differences as a test file,
/// verify it like any task.
#[allow(clippy::too_many_arguments)]
fn synthesize(
    worker: &mut dyn crate::sandbox::Worker,
    ctx: &SeedContext<'_>,
    setup: &synth::SynthSetup,
    runner: &dyn TestRunner,
    cand: &Candidate,
    gold: &str,
    verify_cfg: &VerifyConfig,
    objects: Option<&git2::Repository>,
    mut outcome: Outcome,
) -> Outcome {
    let started = Instant::now();
    let timeout = Duration::from_secs_f64(ctx.baseline.run_timeout_s.max(10.0) * 5.0);
    // Code no test and no import ran may be code no caller can run at all.
    if outcome.verdict.reason() == Some(crate::verdict::Reason::NotCovered) {
        match synth::unreachable(worker, setup, cand, timeout) {
            Ok(Some(why)) => {
                outcome.synthesis = Some(synth::SynthRecord {
                    status: "unreachable".into(),
                    detail: why.clone(),
                    ..Default::default()
                });
                outcome.verdict =
                    crate::verdict::Verdict::rejected(crate::verdict::Reason::Unreachable, why);
                outcome.seconds += started.elapsed().as_secs_f64();
                return outcome;
            }
            Ok(None) => {}
            Err(e) => tracing::debug!(candidate = %cand.id, "reachability probe: {e}"),
        }
    }
    // A kill no harness can grade: the tests that failed are known to tell the versions
    // apart, so their calls are the ones to replay.
    let (trace, trace_error) = trace_for(worker, ctx, setup, cand, &outcome.fail_to_pass, timeout);
    if let Some(e) = trace_error.filter(|_| trace.calls.is_empty() && trace.scenarios.is_empty()) {
        outcome.synthesis = Some(synth::SynthRecord {
            status: "error".into(),
            detail: format!("tracing the clean suite: {e}"),
            ..Default::default()
        });
        return outcome;
    }
    let trace = &trace;
    let search = match synth::search(worker, setup, trace, cand, timeout) {
        Ok(s) => s,
        Err(e) => {
            let _ = worker.reset();
            outcome.synthesis = Some(synth::SynthRecord {
                status: "error".into(),
                detail: e.to_string(),
                ..Default::default()
            });
            return outcome;
        }
    };
    if search.found.is_empty() && search.reaching == 0 && search.searched == 0 {
        outcome.synthesis = Some(synth::SynthRecord::from_search(
            "no-reaching-calls",
            &search,
        ));
        return outcome;
    }
    // A search from the signature alone (no recorded call reaches the function) may never have
    // run the mutated lines (boltons' urlutils keeps a copy of OrderedMultiDict that an import
    // replaces, so `OrderedMultiDict.fromkeys` calls another class), and CrossHair's "all paths
    // exhausted" on parameters no test ever filled (boltons' `format_exception_only` without
    // a SyntaxError) covers only inputs the function rejects: finding nothing there is no
    // evidence of equivalence. The verdict stays.
    if search.found.is_empty() && search.reaching == 0 {
        outcome.synthesis = Some(synth::SynthRecord::from_search("no-difference", &search));
        return outcome;
    }
    if search.found.is_empty() {
        outcome.synthesis = Some(synth::SynthRecord::from_search("no-difference", &search));
        outcome.verdict = crate::verdict::Verdict::rejected(
            crate::verdict::Reason::LikelyEquivalent,
            format!(
                "no input tells the versions apart: {} of {} recorded calls reaching `{}` replayed \
                 (through {} function(s)); Hypothesis searched {} function(s) of its module{}{}",
                search.replayed,
                search.reaching,
                cand.function,
                search.entry_functions,
                search.searched,
                search
                    .search_error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default(),
                search
                    .symbolic
                    .as_ref()
                    .map(|s| format!("; {}", s.describe()))
                    .unwrap_or_default()
            ),
        );
        outcome.seconds += started.elapsed().as_secs_f64();
        return outcome;
    }
    let test = synth::render(&search.found, setup, cand);
    let mut record = synth::SynthRecord::from_search("synthesized", &search);
    record.test_path = Some(test.path.clone());
    record.cases = test.cases.clone();
    outcome.synthesis = Some(record);
    // Buggy + gold fix + the new tests byte-identical to the clean tree with the new tests
    // (what check 1 runs)?
    let commit = &ctx.repo.commit;
    let fixed_is_check_1 = objects.and_then(|r| {
        let with_tests = crate::start_state::tree_after(r, commit, &[&test.patch]).ok()?;
        let fixed =
            crate::start_state::tree_after(r, commit, &[&test.patch, &cand.bug_patch, gold])
                .ok()?;
        (fixed == with_tests).then(|| fixed.to_string())
    });
    outcome.seconds += started.elapsed().as_secs_f64();
    verify::verify_synthesized(
        worker,
        runner,
        ctx.baseline,
        cand,
        gold,
        (&test.patch, &test.tests),
        fixed_is_check_1.as_deref(),
        verify_cfg,
        outcome,
    )
}

/// Replace the (leak-checked) template text of `task` with the model's rewrite when it passes
/// the checks; record what happened in `metadata.issue_rewrite` either way.
fn rewrite_issue(rw: &crate::issue_llm::Rewriter, task: &mut Task, key_values: &[String]) {
    let (text, record) = rw.rewrite(task, key_values);
    match text {
        Some(text) => {
            task.metadata.difficulty.issue_names_function =
                names_function(&text, &task.metadata.location.function);
            task.metadata.difficulty.issue_names_file =
                crate::leak::names_file(&text, &crate::leak::LeakFacts::from_task(task));
            task.problem_statement = text;
        }
        None => tracing::warn!(
            task = %task.instance_id,
            "issue rewrite not used ({}): {}; the template text stays",
            record.fallback.map(|f| f.as_str()).unwrap_or("none"),
            record.detail
        ),
    }
    task.metadata.issue_rewrite = record;
}

/// The task of an accepted candidate, and the values of its issue text a rewrite must keep.
fn build_task(
    cfg: &RunConfig,
    ctx: &SeedContext<'_>,
    cand: &Candidate,
    outcome: &Outcome,
    dropped_test_ids: task::DroppedTestIds,
) -> Result<(Task, Vec<String>), String> {
    let repo = ctx.repo;
    let clean = std::fs::read_to_string(repo.checkout.join(&cand.file))
        .map_err(|e| format!("reading {}: {e}", cand.file))?;
    let buggy = task::buggy_text(&clean, cand);
    let patch = task::file_diff_indexed(&cand.file, &buggy, &clean);
    let bug_patch = task::file_diff_indexed(&cand.file, &clean, &buggy);
    // The start state: the buggy tree, parentless, without the FAIL_TO_PASS tests' files.
    let (hidden, mode) = if cfg.visible_tests {
        (Vec::new(), crate::start_state::HiddenTests::Visible)
    } else {
        (
            crate::start_state::test_files_of(&outcome.fail_to_pass, &repo.profile.test_files),
            crate::start_state::HiddenTests::Files,
        )
    };
    let mirror = git2::Repository::open_bare(&repo.mirror)
        .or_else(|_| git2::Repository::open(&repo.mirror))
        .map_err(|e| format!("opening the mirror: {}", e.message()))?;
    let mut start = crate::start_state::build(
        &mirror,
        &repo.commit,
        &bug_patch,
        &hidden,
        mode,
        &outcome.test_patch,
    )
    .map_err(|e| e.to_string())?;
    start.info.repo_image = ctx.image.clone();
    let base_commit = start.commit.to_string();
    let image_name = ctx
        .image
        .as_deref()
        .map(|repo_image| crate::sandbox::task_image::tag(repo_image, &base_commit));
    // Runs name their logs relative to OUT.
    let runs: Vec<crate::run::Run> = outcome
        .runs
        .iter()
        .cloned()
        .map(|mut r| {
            r.log_path = r.log_path.map(|p| relative_to(&p, &cfg.out));
            r
        })
        .collect();
    let buggy_run = outcome.runs.iter().find(|r| r.label == "buggy#1");
    let input = IssueInput {
        candidate: cand,
        buggy_run,
        fail_to_pass: &outcome.fail_to_pass,
        test_files: &repo.profile.test_files,
        cases: outcome
            .synthesis
            .as_ref()
            .filter(|_| !outcome.test_patch.is_empty())
            .map(|s| s.cases.as_slice())
            .unwrap_or(&[]),
    };
    let issue = issue::problem_statement(&input).map_err(|e| e.to_string())?;
    let (problem_statement, issue_style) = (issue.text.clone(), issue.style);
    let key_values = issue::key_values(&input);
    let issue_names_function = names_function(&problem_statement, &cand.function);
    let fix_lines = task::changed_lines(&patch);
    let function_lines = cand.function_lines.1 + 1 - cand.function_lines.0;
    let killing = outcome.fail_to_pass.len();
    Ok((
        Task {
            instance_id: task::instance_id(&repo.name, cand),
            repo: repo.seed.repo_name(),
            base_commit: base_commit.clone(),
            patch,
            test_patch: start.test_patch,
            problem_statement,
            hints_text: issue.hints.clone(),
            created_at: task::now_utc(),
            version: repo
                .seed
                .revision
                .clone()
                .unwrap_or_else(|| "0".to_string()),
            environment_setup_commit: base_commit,
            fail_to_pass: outcome.fail_to_pass.clone(),
            pass_to_pass: outcome.pass_to_pass.clone(),
            bug_patch,
            image_name,
            language: repo.profile.language,
            metadata: task::TaskMetadata {
                mutators: vec![cand.mutator.clone()],
                category: cand.category.clone(),
                candidate_id: cand.id.clone(),
                location: task::Location {
                    file: cand.file.clone(),
                    function: cand.function.clone(),
                    lines: cand.line_range,
                },
                difficulty: task::Difficulty {
                    category: cand.category.clone(),
                    killing_tests: killing,
                    function_lines,
                    fix_lines,
                    files_in_fix: 1,
                    synthesized_tests: !outcome.test_patch.is_empty(),
                    direct_call: direct_call(repo, cand, outcome),
                    issue_names_function,
                    issue_names_file: false,
                    score: task::difficulty_score(&cand.category, killing, function_lines),
                },
                verification: task::Evidence {
                    repeats: ctx.repeats,
                    sandbox: ctx.sandbox.to_string(),
                    clean_runs: ctx
                        .baseline
                        .runs
                        .iter()
                        .map(|r| task::RunRef {
                            label: r.label.clone(),
                            log_digest: r.log_digest.clone(),
                            passed: r.with_status(crate::run::TestStatus::Passed).len(),
                            duration_s: r.duration_s,
                        })
                        .collect(),
                    runs,
                    reused: outcome.reused.clone(),
                    nondeterministic: outcome.nondeterministic.clone(),
                },
                environment: task::EnvironmentInfo {
                    seed: repo.name.clone(),
                    // As the manifest gave it: no path of this machine.
                    source: repo.seed.source.clone(),
                    install: repo.profile.install_command.clone(),
                    test_command: ctx.test_command.clone(),
                    python_path: repo.profile.python_path.clone(),
                    toolchain: Some(ctx.toolchain),
                },
                tool_version: crate::VERSION.to_string(),
                issue_style: issue_style.to_string(),
                issue_detail: issue.detail.to_string(),
                issue_rewrite: Default::default(),
                start_state: Some(start.info),
                dropped_test_ids,
            },
        },
        key_values,
    ))
}

/// `path` relative to `base` when it lies under it (else unchanged).
fn relative_to(path: &str, base: &Path) -> String {
    let base_abs = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    for b in [base.to_path_buf(), base_abs] {
        if let Ok(rel) = Path::new(path).strip_prefix(&b) {
            return rel.display().to_string();
        }
    }
    path.to_string()
}

/// Why an accepted outcome's FAIL_TO_PASS tests cannot grade the task, if none can: each id
/// is one SWE-bench's log parsers cut ([`task::harness_readable`]) or a doctest in a source
/// file (its file is not one of the repository's `test_files`).
fn ungradable(
    outcome: &Outcome,
    test_files: &[String],
) -> Option<(crate::verdict::Reason, &'static str)> {
    let in_code = |t: &str| {
        t.split_once("::")
            .is_some_and(|(file, _)| !test_files.iter().any(|f| f == file))
    };
    let f2p = &outcome.fail_to_pass;
    if !outcome.verdict.is_accepted() || f2p.is_empty() {
        return None;
    }
    if f2p.iter().all(|t| outcome.nondeterministic.contains_key(t)) {
        return Some((
            crate::verdict::Reason::Nondeterministic,
            "every test that fails with the bug draws on randomness nothing in it seeds (it \
             may pass with the bug elsewhere)",
        ));
    }
    if f2p.iter().any(|t| task::harness_readable(t) && !in_code(t)) {
        return None;
    }
    Some(if f2p.iter().any(|t| in_code(t)) {
        (
            crate::verdict::Reason::DoctestOnly,
            "every FAIL_TO_PASS test is a doctest in the code the agent edits (editing the \
             docstring would pass it)",
        )
    } else {
        (
            crate::verdict::Reason::UnreadableTestIds,
            "every FAIL_TO_PASS id has whitespace SWE-bench's log parsers cut",
        )
    })
}

/// Keep only the test ids SWE-bench's log parsers read back ([`task::harness_readable`]):
/// unreadable PASS_TO_PASS ids are dropped; unreadable FAIL_TO_PASS ids are dropped while
/// another FAIL_TO_PASS test remains, else the candidate is rejected
/// (`unreadable-test-ids`). Returns the counts dropped.
fn keep_readable_ids(outcome: &mut Outcome) -> task::DroppedTestIds {
    let mut dropped = task::DroppedTestIds::default();
    let before = outcome.pass_to_pass.len();
    outcome.pass_to_pass.retain(|id| task::harness_readable(id));
    dropped.pass_to_pass = before - outcome.pass_to_pass.len();
    let readable: Vec<String> = outcome
        .fail_to_pass
        .iter()
        .filter(|id| task::harness_readable(id))
        .cloned()
        .collect();
    if readable.is_empty() && !outcome.fail_to_pass.is_empty() {
        outcome.verdict = Verdict::rejected(
            crate::verdict::Reason::UnreadableTestIds,
            format!(
                "every FAIL_TO_PASS id has whitespace SWE-bench's log parsers cut: {}",
                outcome.fail_to_pass.join(", ")
            ),
        );
        return dropped;
    }
    dropped.fail_to_pass = outcome.fail_to_pass.len() - readable.len();
    outcome.fail_to_pass = readable;
    dropped
}

/// The last part of a qualified name (`Ledger.ship` → `ship`).
fn short_name(function: &str) -> &str {
    function.rsplit(['.', '#']).next().unwrap_or(function)
}

fn names_function(text: &str, function: &str) -> bool {
    let name = short_name(function);
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
}

/// Whether a failing test calls the mutated function directly: the synthesized test calls it
/// (not a public caller), or a failing test's file calls it by name.
fn direct_call(repo: &Repo, cand: &Candidate, outcome: &Outcome) -> bool {
    if let Some(s) = outcome
        .synthesis
        .as_ref()
        .filter(|_| !outcome.test_patch.is_empty())
    {
        return s.cases.iter().any(|d| d.call.qualname == cand.function);
    }
    let name = short_name(&cand.function);
    let needle = format!("{name}(");
    let Ok(toolchain) = toolchain::for_profile(&repo.profile) else {
        return false;
    };
    outcome.fail_to_pass.iter().any(|id| {
        let file = toolchain.test_file(id, &repo.profile.test_files);
        file.and_then(|f| std::fs::read_to_string(repo.checkout.join(f)).ok())
            .is_some_and(|text| text.contains(&needle))
    })
}

/// Read candidates from JSON lines (blank lines ignored); an error names the line.
fn read_candidates(path: &Path) -> Result<Vec<Candidate>, PipelineError> {
    let text =
        std::fs::read_to_string(path).map_err(io_err(format!("reading {}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let c: Candidate = serde_json::from_str(line).map_err(|e| PipelineError::Io {
            context: format!("{}:{}", path.display(), i + 1),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        out.push(c);
    }
    Ok(out)
}

/// Split candidates read from a file into those that apply to this checkout and those that
/// do not, with the reason: a path that is not relative to the repository root, a file
/// that is not there, or an edit whose byte range or clean text does not match the file.
fn check_candidates(root: &Path, cands: Vec<Candidate>) -> (Vec<Candidate>, Vec<(String, String)>) {
    let mut texts: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut usable = Vec::new();
    let mut refused = Vec::new();
    for c in cands {
        let rel = Path::new(&c.file);
        let relative = !c.file.is_empty()
            && rel
                .components()
                .all(|p| matches!(p, std::path::Component::Normal(_)));
        if !relative {
            refused.push((
                c.id.clone(),
                format!("`{}` is not a path relative to the repository root", c.file),
            ));
            continue;
        }
        let text = texts
            .entry(c.file.clone())
            .or_insert_with(|| std::fs::read_to_string(root.join(rel)).ok());
        let Some(text) = text else {
            refused.push((
                c.id.clone(),
                format!("`{}` is not in the repository", c.file),
            ));
            continue;
        };
        let (a, b) = c.byte_range;
        let matches = a <= b
            && b <= text.len()
            && text.is_char_boundary(a)
            && text.is_char_boundary(b)
            && text[a..b] == c.before;
        if !matches {
            refused.push((
                c.id.clone(),
                format!(
                    "its edit (bytes {a}..{b}) does not match the text of `{}` at this commit",
                    c.file
                ),
            ));
            continue;
        }
        usable.push(c);
    }
    (usable, refused)
}

/// Write the sampled candidates of a seed (before verification) for inspection.
fn write_candidates_listing(
    out: &Path,
    seed: &str,
    sampled: &[Candidate],
) -> Result<(), PipelineError> {
    let dir = out.join("logs").join(seed);
    std::fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let mut text = String::new();
    for c in sampled {
        text.push_str(&serde_json::to_string(c).expect("candidate serializes"));
        text.push('\n');
    }
    std::fs::write(dir.join("sampled.jsonl"), text).map_err(io_err("writing sampled.jsonl"))
}

/// One line of candidates.jsonl: a candidate and what became of it.
#[derive(Serialize)]
struct CandidateLine<'a> {
    seed: &'a str,
    #[serde(flatten)]
    candidate: &'a Candidate,
    #[serde(flatten)]
    verdict: &'a Verdict,
    covering_tests: usize,
    fail_to_pass: usize,
    pass_to_pass: usize,
    runs: Vec<RunLine<'a>>,
    /// Checks whose evidence is earlier runs of the same tree (no runs of their own).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    reused: &'a [crate::verify::ReusedCheck],
    seconds: f64,
    instance_id: Option<&'a str>,
}

#[derive(Serialize)]
struct RunLine<'a> {
    label: &'a str,
    summary: String,
    log_digest: &'a str,
}

/// Rewrite tasks.jsonl and candidates.jsonl from the store; returns the number of tasks.
pub fn write_outputs(store: &Store, out: &Path) -> Result<usize, PipelineError> {
    let decided = store.decided()?;
    let tasks_path = out.join("tasks.jsonl");
    let cands_path = out.join("candidates.jsonl");
    let mut tasks = std::io::BufWriter::new(
        std::fs::File::create(&tasks_path).map_err(io_err("creating tasks.jsonl"))?,
    );
    let mut cands = std::io::BufWriter::new(
        std::fs::File::create(&cands_path).map_err(io_err("creating candidates.jsonl"))?,
    );
    let mut n = 0;
    for d in &decided {
        if let Some(t) = &d.task {
            serde_json::to_writer(&mut tasks, t).expect("task serializes");
            tasks
                .write_all(b"\n")
                .map_err(io_err("writing tasks.jsonl"))?;
            n += 1;
        }
        let line = CandidateLine {
            seed: &d.seed,
            candidate: &d.candidate,
            verdict: &d.outcome.verdict,
            covering_tests: d.outcome.covering.len(),
            fail_to_pass: d.outcome.fail_to_pass.len(),
            pass_to_pass: d.outcome.pass_to_pass.len(),
            runs: d
                .outcome
                .runs
                .iter()
                .map(|r| RunLine {
                    label: &r.label,
                    summary: r.summary(),
                    log_digest: &r.log_digest,
                })
                .collect(),
            reused: &d.outcome.reused,
            seconds: d.outcome.seconds,
            instance_id: d.task.as_ref().map(|t| t.instance_id.as_str()),
        };
        serde_json::to_writer(&mut cands, &line).expect("candidate line serializes");
        cands
            .write_all(b"\n")
            .map_err(io_err("writing candidates.jsonl"))?;
    }
    tasks.flush().map_err(io_err("writing tasks.jsonl"))?;
    cands.flush().map_err(io_err("writing candidates.jsonl"))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_selects_named_seeds_and_rejects_unknown_names() {
        let manifest = seed::parse_manifest(
            "seeds:\n  - {name: a, source: \"pypi:a==1\", language: python}\n  - {name: b, source: \"pypi:b==1\", language: python}\n",
            Path::new("m.yaml"),
        )
        .unwrap();
        let names = |only: &[&str]| -> Vec<String> {
            let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
            selected(&manifest, &only)
                .unwrap()
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        assert_eq!(names(&[]), ["a", "b"]);
        assert_eq!(names(&["b"]), ["b"]);
        let err = selected(&manifest, &["a".into(), "a,b".into()]).unwrap_err();
        assert!(err.to_string().contains("\"a,b\""), "{err}");
    }

    fn accepted(f2p: &[&str]) -> Outcome {
        serde_json::from_value(serde_json::json!({
            "verdict": {"status": "accepted"}, "covering": [],
            "FAIL_TO_PASS": f2p, "PASS_TO_PASS": [], "runs": [], "seconds": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn tests_that_cannot_grade_a_task() {
        let files = vec!["tests/test_num.py".to_string()];
        let reason = |f2p: &[&str]| ungradable(&accepted(f2p), &files).map(|(r, _)| r.as_str());
        assert_eq!(reason(&["tests/test_num.py::test_a"]), None);
        // A doctest beside a hidden repository test: the test still grades.
        assert_eq!(
            reason(&["src/num.py::num.ordinal", "tests/test_num.py::test_a"]),
            None
        );
        assert_eq!(reason(&["src/num.py::num.ordinal"]), Some("doctest-only"));
        assert_eq!(
            reason(&[
                "tests/test_num.py::test_a[a day]",
                "src/num.py::num.ordinal"
            ]),
            Some("doctest-only")
        );
        assert_eq!(
            reason(&["tests/test_num.py::test_a[a day]"]),
            Some("unreadable-test-ids")
        );
        assert_eq!(reason(&[]), None);
        // Every failing test drew unseeded random numbers: it may pass with the bug elsewhere.
        let mut random = accepted(&["tests/test_num.py::test_a", "tests/test_num.py::test_b"]);
        for t in ["tests/test_num.py::test_a", "tests/test_num.py::test_b"] {
            random.nondeterministic.insert(t.into(), "random".into());
        }
        assert_eq!(
            ungradable(&random, &files).map(|(r, _)| r.as_str()),
            Some("nondeterministic")
        );
        random.nondeterministic.remove("tests/test_num.py::test_b");
        assert_eq!(ungradable(&random, &files), None);
    }

    #[test]
    fn a_top_up_tracer_run_fits_three_plain_suites_or_is_left_out() {
        // toolz: a whole-suite run of 3.0 s against a 1.7 s suite leaves no room for another
        // run like it.
        assert!(!top_up_fits(3.0, 3.0, 1.7, TRACE_FACTOR));
        assert!(top_up_fits(3.0, 2.0, 1.7, TRACE_FACTOR));
        // boltons: 10.9 s, then a top-up of 3 s, then one more of 3 s fits 18.3 s; a third not.
        assert!(top_up_fits(10.9, 3.0, 6.1, TRACE_FACTOR));
        assert!(top_up_fits(13.9, 3.0, 6.1, TRACE_FACTOR));
        assert!(!top_up_fits(16.9, 3.0, 6.1, TRACE_FACTOR));
        // Unknown suite seconds set no limit.
        assert!(top_up_fits(100.0, 100.0, 0.0, TRACE_FACTOR));
    }
}
