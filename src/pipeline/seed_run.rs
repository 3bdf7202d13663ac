//! One seed through the pipeline: import, environment, baseline, candidates, verification
//! and the tasks it yields (`run_seed`), and the context its stages share.

use super::*;
use crate::baseline::{self, Baseline};
use crate::candidate::{self, Candidate};
use crate::check::Check;
use crate::repo::Repo;
use crate::runner::resident::RunnerMode;
use crate::runner::TestRunner;
use crate::sandbox::{Environment, Sandbox, SandboxKind};
use crate::seed::Manifest;
use crate::store::Store;
use crate::synth;
use crate::task::Task;
use crate::toolchain::{self};
use indicatif::ProgressBar;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(super) fn run_seed(
    cfg: &RunConfig,
    manifest: &Manifest,
    seed: &crate::seed::Seed,
    run_fingerprint: &Fingerprint,
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
        if !s.ran() {
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
    let imported = crate::toolchain::import(seed, &manifest.base_dir, &cfg.cache);
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
    let mut spec = runner_spec(cfg, &repo, sandbox.kind());
    let test_command = toolchain.test_command(&spec);
    // The seed's set-up, before an environment is made for it.
    let fingerprint = run_fingerprint
        .clone()
        .with_seed(&repo, &test_command, toolchain.id());
    check_set_up(store, &cfg.out, &seed.name, &fingerprint, false)?;

    // Environment.
    let t = Instant::now();
    let env = match sandbox.prepare(&repo, &toolchain.recipe(&repo)) {
        Ok(e) => e,
        Err(e) => return finish(s, "failed", format!("environment: {e}")),
    };
    s.image = env.image_name();
    s.image_id = env.image_id();
    s.image_built = env.image_built();
    store.add_stage_time(&seed.name, "environment", t.elapsed().as_secs_f64())?;
    let fingerprint = fingerprint.with_image(env.image_name(), env.image_id());
    check_set_up(store, &cfg.out, &seed.name, &fingerprint, true)?;
    let first_runner = toolchain.runner(&spec);
    let runner = first_runner.as_ref();
    // What the environment says about how it resolved the project (recorded with each task),
    // and the source folders it left out of the build (never mutated).
    let env_notes = env
        .worker(0)
        .ok()
        .and_then(|mut w| toolchain.environment_notes(w.as_mut()));
    let left_out = env_notes
        .as_ref()
        .map(|n| toolchain.left_out_folders(n))
        .unwrap_or_default();
    if !left_out.is_empty() {
        tracing::info!(seed = %seed.name, folders = ?left_out, "left out of the build: not mutated");
    }

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
    s.degraded = Degraded::of(&baseline, &repo.profile.test_files);
    if let Some(d) = &s.degraded {
        tracing::warn!(seed = %seed.name, "degraded: {}", d.reason());
    }

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
    // Per-file test budgets (a runner that cannot enforce them ignores them).
    spec.test_budgets = Some(std::sync::Arc::new(baseline.file_budgets(&|t: &str| {
        toolchain
            .test_file(t, &repo.profile.test_files)
            .unwrap_or_else(|| t.to_string())
    })));
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
            let sources: Vec<String> = repo
                .profile
                .source_files
                .iter()
                .filter(|f| {
                    !left_out
                        .iter()
                        .any(|d| f.starts_with(&format!("{}/", d.trim_end_matches('/'))))
                })
                .cloned()
                .collect();
            let enumeration =
                candidate::enumerate(&repo.checkout, &sources, repo.profile.language, &rules);
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
    // Without test synthesis a candidate no test executes cannot become a task (it is
    // rejected `not-covered` after a screen of the whole suite): where per-test coverage says
    // which those are, the draw takes them only for places the others leave.
    let mut sampled = if toolchain.synthesizes_tests() || baseline.coverage_unavailable.is_some() {
        candidate::sample(enumerated, &cfg.budget)
    } else {
        let executed =
            |c: &Candidate| crate::verify::executed_by_tests(&baseline, c) != Some(false);
        s.enumerated_not_executed = enumerated.iter().filter(|c| !executed(c)).count();
        candidate::sample_preferring(enumerated, &cfg.budget, &executed)
    };
    // A shard decides its part of what one run would sample (the partition is by id, so the
    // sample itself does not depend on the shard).
    if let Some(shard) = cfg.shard {
        sampled.retain(|c| shard.contains(&c.id));
    }
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
    // `bench peer`: the one-run rule on the same candidates, before them.
    if cfg.peer && !todo.is_empty() {
        let t = Instant::now();
        let pb = spinner(
            cfg.progress,
            format!("{}: peer (one run per candidate)", seed.name),
        );
        let peer = crate::peer::run(
            &seed.name,
            env.as_ref(),
            fresh.as_ref(),
            &todo,
            cfg.jobs,
            baseline.budget(),
        );
        pb.finish_and_clear();
        store.add_stage_time(&seed.name, "peer", t.elapsed().as_secs_f64())?;
        match peer {
            Ok(p) => {
                let dir = cfg.out.join("peer");
                std::fs::create_dir_all(&dir).map_err(io_err("creating OUT/peer"))?;
                let text = serde_json::to_string_pretty(&p).expect("serializable");
                std::fs::write(dir.join(format!("{}.json", seed.name)), text)
                    .map_err(io_err("writing the peer's decisions"))?;
            }
            Err(e) => tracing::warn!(seed = %seed.name, "peer: {e}"),
        }
    }
    let t = Instant::now();
    let ctx = SeedContext {
        env_notes,
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
        java_synth: (cfg.synthesize && toolchain.writes_java_regression_tests())
            .then(|| JavaSynthSetup::new(&repo.checkout)),
        trace: Mutex::new(TraceCache::default()),
        graded_trees: crate::verify::GradedTrees::default(),
        scope: cfg.verify.scope,
        synth_budget: cfg.synthesis_budget,
        deep_synthesis: cfg.deep_synthesis,
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
        // Killed: screening saw at least one covering test fail (a screen that was check 2's
        // first repeat is labelled `buggy#1`).
        if d.outcome.runs.first().is_some_and(|r| {
            (Check::Screen.labels(&r.label) || Check::Buggy.labels(&r.label))
                && !r.failures().is_empty()
        }) {
            s.killed += 1;
        }
        match d.outcome.verdict.reason() {
            None => s.accepted += 1,
            Some(r) => *s.rejected.entry(r.to_string()).or_default() += 1,
        }
        if let Some(t) = &d.task {
            s.dropped_test_ids.fail_to_pass += t.metadata.dropped_test_ids.fail_to_pass;
            s.dropped_test_ids.pass_to_pass += t.metadata.dropped_test_ids.pass_to_pass;
            s.dropped_test_ids.order_dependent += t.metadata.dropped_test_ids.order_dependent;
        }
        if let Some(key) = d
            .task
            .as_ref()
            .and_then(|t| t.metadata.issue_rewrite.tally_key())
        {
            *s.issue_rewrite.entry(key).or_default() += 1;
        }
    }
    let mut detail: Vec<String> = Vec::new();
    if STOP.load(Ordering::SeqCst) {
        detail.push("interrupted".to_string());
    }
    detail.extend(s.degraded.as_ref().map(Degraded::reason));
    let status = if s.degraded.is_some() {
        "degraded"
    } else {
        "done"
    };
    finish(s, status, detail.join("; "))
}

/// Qualifies a resident runner on a worker, or says why it cannot be used.
pub(super) type Qualify<'q> =
    dyn Fn(&mut dyn crate::sandbox::Worker) -> Result<Box<dyn TestRunner>, String> + 'q;

pub(super) struct SeedContext<'a> {
    pub(super) repo: &'a Repo,
    pub(super) baseline: &'a Baseline,
    pub(super) env: Arc<dyn Environment>,
    pub(super) image: Option<String>,
    pub(super) sandbox: SandboxKind,
    pub(super) repeats: usize,
    pub(super) test_command: String,
    pub(super) toolchain: toolchain::ToolchainId,
    /// What the environment says about how it resolved the project's dependencies
    /// ([`toolchain::Toolchain::environment_notes`]).
    pub(super) env_notes: Option<serde_json::Value>,
    /// Test synthesis for survivors (Python, unless `--no-synthesis`).
    pub(super) synth: Option<synth::SynthSetup>,
    /// Regression tests for Java survivors (unless `--no-synthesis`).
    pub(super) java_synth: Option<JavaSynthSetup>,
    /// The clean suite's recorded calls so far (see [`TraceCache`]).
    pub(super) trace: Mutex<TraceCache>,
    /// Runs of grading commands on the clean tree, for the workers' candidates.
    pub(super) graded_trees: crate::verify::GradedTrees,
    /// `--grading-scope`: what grading commands run.
    pub(super) scope: crate::grading::Scope,
    /// `--synthesis-budget`: seconds synthesis may spend on this seed; what it spent.
    pub(super) synth_budget: Option<Duration>,
    /// See [`super::RunConfig::deep_synthesis`].
    pub(super) deep_synthesis: bool,
    /// `RunConfig::tracer_budget`.
    pub(super) tracer_budget: f64,
    pub(super) synth_spent: Mutex<SynthesisSummary>,
    /// Rewrites the issue texts of accepted tasks (`--issue-llm`).
    pub(super) rewriter: Option<&'a crate::issue_llm::Rewriter>,
}

impl SeedContext<'_> {
    /// What the seed's candidates' grading commands are made from.
    pub(super) fn grading(&self) -> crate::verify::GradingContext<'_> {
        crate::verify::GradingContext {
            toolchain: self.toolchain.toolchain(),
            root: &self.repo.checkout,
            test_command: &self.test_command,
            scope: self.scope,
            graded_trees: &self.graded_trees,
            test_files: &self.repo.profile.test_files,
        }
    }
}

pub(super) fn spinner(show: bool, msg: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner().with_message(msg);
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}
