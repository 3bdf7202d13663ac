//! `run`: the stages wired together — import → environment → baseline → mutate → screen and
//! verify (parallel workers) → issue → emit — with every decision written to the state store so
//! an interrupted run resumes where it stopped.

use crate::baseline::{self, BaselineConfig};
use crate::candidate::Budget;
use crate::fingerprint::{Fingerprint, ResumeRefused};
use crate::lang::Language;
use crate::mutator::{self, Mutator};
use crate::repo::Repo;
use crate::runner::resident::RunnerMode;
use crate::sandbox::{Limits, Sandbox, SandboxKind};
use crate::seed::{self, Manifest};
use crate::store::{SeedStatus, Store};
use crate::task::{self};
use crate::toolchain::RunnerSpec;
use crate::verify::VerifyConfig;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// The output directory holds a seed's evidence from another set-up (or from before
    /// set-ups were fingerprinted): the run is refused rather than mixing evidence.
    #[error(transparent)]
    ResumeRefused(#[from] ResumeRefused),
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
    /// Search for distinguishing inputs (Hypothesis, then CrossHair) even for a survivor
    /// whose recorded reaching calls all behave the same on both versions
    /// (`--deep-synthesis`); by default such a survivor is given up as likely equivalent
    /// after the replay.
    pub deep_synthesis: bool,
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
    /// Decide only this shard's part of the sampled candidates (`run --shard K/N`).
    pub shard: Option<crate::shard::Shard>,
    /// `--visible-tests`: leave the FAIL_TO_PASS tests' files in the agent's start state (an
    /// easier variant; recorded as `metadata.start_state.hidden_tests: visible`).
    pub visible_tests: bool,
    /// `--runner`: the resident runner where a seed qualifies (default), or fresh processes.
    pub runner: RunnerMode,
    /// Build the accepted tasks' images after each seed (Docker sandbox). Off
    /// (`--no-task-images`): the records name them all the same and `image tasks` builds them.
    pub task_images: bool,
    /// `bench peer`: before deciding a seed's candidates, run the one-run rule on them
    /// ([`crate::peer`]) and write it to `OUT/peer/<seed>.json`, timed as stage `peer`.
    pub peer: bool,
}

/// What happened to one seed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SeedSummary {
    pub seed: String,
    /// `done`, `degraded` (done, but more than [`UNCOLLECTED_SHARE_LIMIT`] of the test files
    /// fail to collect on the clean code: see `degraded`), `rejected` (baseline unusable, no
    /// tests…), `failed` (import or environment).
    pub status: String,
    pub detail: String,
    pub commit: Option<String>,
    pub files: usize,
    pub skipped_files: usize,
    /// Candidates of `--candidates` that do not apply to the checkout (logged with why).
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_candidates: usize,
    pub enumerated: usize,
    /// Enumerated candidates no test executes, where the toolchain synthesizes no tests and
    /// per-test coverage tells: drawn only for places the others leave.
    #[serde(skip_serializing_if = "is_zero")]
    pub enumerated_not_executed: usize,
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
    /// Set when the seed is `degraded`: its test files that fail to collect, with the errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Degraded>,
}

impl SeedSummary {
    /// Whether the seed went through the pipeline (`done` or `degraded`).
    pub fn ran(&self) -> bool {
        matches!(self.status.as_str(), "done" | "degraded")
    }
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
    // Refuse at once a resume whose set-up differs from a seed's stored one, as far as it is
    // known before environments are made (the image is compared once it is prepared).
    let run_fingerprint = Fingerprint::of_run(cfg, sandbox.kind());
    for seed in &seeds {
        if store.has_evidence(&seed.name)? {
            // A seed that does not import now is compared on the run's options (`run_seed`
            // then reports why it does not).
            let current = imported_set_up(cfg, &manifest, seed, sandbox.kind(), &run_fingerprint)
                .unwrap_or_else(|| run_fingerprint.clone());
            check_set_up(&store, &cfg.out, &seed.name, &current, false)?;
        }
    }
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
            &run_fingerprint,
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
    let python = crate::toolchain::python_pytest::BASE;
    crate::sandbox::choose::open(cfg.sandbox, &cfg.cache, &cfg.limits, Some(&python))
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
        test_budgets: None,
    }
}

/// The mutators for a language: from `--mutators DIR` (laid out like `mutators/`) or the
/// embedded rules.
pub fn load_rules(dir: Option<&Path>, lang: Language) -> Result<Vec<Mutator>, PipelineError> {
    Ok(match dir {
        Some(d) => mutator::load_tree(d, lang)?,
        None => mutator::load_embedded(lang)?,
    })
}

/// A seed's set-up as far as it is known once it is imported (`None` where it does not import
/// or no toolchain takes it).
fn imported_set_up(
    cfg: &RunConfig,
    manifest: &Manifest,
    seed: &crate::seed::Seed,
    sandbox: SandboxKind,
    run_fingerprint: &Fingerprint,
) -> Option<Fingerprint> {
    let lock = crate::lock::FileLock::exclusive(
        &cfg.cache.join("locks").join(format!("{}.lock", seed.name)),
    )
    .ok()?;
    let repo = crate::toolchain::import(seed, &manifest.base_dir, &cfg.cache).ok()?;
    drop(lock);
    let toolchain = crate::toolchain::for_profile(&repo.profile).ok()?;
    let test_command = toolchain.test_command(&runner_spec(cfg, &repo, sandbox));
    Some(
        run_fingerprint
            .clone()
            .with_seed(&repo, &test_command, toolchain.id()),
    )
}

/// Whether `seed`'s stored evidence, if any, was made with the set-up `current` describes:
/// compared over every option when `complete` (and then stored for the evidence to come),
/// else over the options `current` names. A seed with no evidence takes the current set-up;
/// evidence without a fingerprint (a state store older than fingerprints) is refused too, as
/// its set-up cannot be known.
fn check_set_up(
    store: &Store,
    out: &Path,
    seed: &str,
    current: &Fingerprint,
    complete: bool,
) -> Result<(), PipelineError> {
    if !store.has_evidence(seed)? {
        if complete {
            store.put_fingerprint(seed, current)?;
        }
        return Ok(());
    }
    let Some(stored) = store.fingerprint(seed)? else {
        return Err(ResumeRefused::Unfingerprinted {
            out: out.to_path_buf(),
            seed: seed.to_string(),
        }
        .into());
    };
    let differences = if complete {
        stored.differences(current)
    } else {
        stored.differences_in(current)
    };
    if differences.is_empty() {
        return Ok(());
    }
    Err(ResumeRefused::Mismatch {
        out: out.to_path_buf(),
        seed: seed.to_string(),
        differences,
    }
    .into())
}

fn record_status(store: &Store, s: &SeedSummary) -> Result<(), PipelineError> {
    store.put_seed_status(&SeedStatus {
        seed: s.seed.clone(),
        status: s.status.clone(),
        detail: s.detail.clone(),
    })?;
    Ok(())
}

mod decide;
mod degraded;
mod outputs;
mod record;
mod seed_run;
mod synthesis;
mod synthesis_java;
#[cfg(test)]
mod tests;

use decide::*;
pub use degraded::{Degraded, UNCOLLECTED_SHARE_LIMIT};
pub use outputs::write_outputs;
use outputs::*;
use record::*;
use seed_run::*;
pub use synthesis::TRACE_FACTOR;
use synthesis::*;
use synthesis_java::*;
