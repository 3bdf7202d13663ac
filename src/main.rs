//! The swe-forge command line: parse, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 error (bad manifest, I/O, …); 2 usage error; 3 `run` finished but
//! no seed could be verified (every seed failed or was rejected); 4 `audit` found an invalid
//! task, or `export` exported no task; 130 interrupted (resumable).

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;
use swe_forge::baseline::BaselineConfig;
use swe_forge::candidate::{self, Budget};
use swe_forge::lang::Language;
use swe_forge::pipeline::{self, RunConfig, SandboxChoice};
use swe_forge::sandbox::Limits;
use swe_forge::verify::VerifyConfig;
use swe_forge::{bench, repo, seed};

#[derive(Parser)]
#[command(
    name = "swe-forge",
    version,
    about = "Turn real repositories into verified software-engineering tasks"
)]
struct Cli {
    /// More logs (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only warnings and errors.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Cache for mirrors, checkouts, environments and the extracted demo seeds.
    #[arg(long, global = true, env = "SWE_FORGE_CACHE")]
    cache: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The whole pipeline: import, baseline, mutate, screen, verify, emit.
    Run(RunArgs),
    /// Clone or import the seeds of a manifest and print their profiles.
    Import {
        manifest: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// List the candidates (mutants) of a source tree or file.
    Mutate {
        path: PathBuf,
        #[arg(long, value_enum)]
        lang: Option<Language>,
        /// Rules from DIR/<language>/*.yaml instead of the embedded ones.
        #[arg(long)]
        mutators: Option<PathBuf>,
        /// Include test files too (by default they are not mutated).
        #[arg(long)]
        include_tests: bool,
        /// One JSON object per candidate (JSON lines).
        #[arg(long)]
        json: bool,
    },
    /// Baseline, screening and triple verification of given candidates (from `mutate --json`,
    /// run on the seed's checkout) instead of enumerating them.
    Verify {
        #[command(flatten)]
        run: RunArgs,
        /// JSON lines of candidates.
        #[arg(long)]
        candidates: PathBuf,
    },
    /// Docker images: make the base image of a language.
    Image {
        #[command(subcommand)]
        what: ImageCommand,
    },
    /// Re-verify tasks from their records alone (schema, patches, FAIL_TO_PASS and
    /// PASS_TO_PASS on the buggy and the fixed code, issue leaks) in fresh environments.
    /// Exit 0: all checked tasks are ok; 4: some task is invalid.
    Audit {
        /// The tasks.jsonl to check.
        tasks: PathBuf,
        /// Check a deterministic sample of N tasks.
        #[arg(long)]
        sample: Option<usize>,
        /// Sampling seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long, value_enum, default_value = "auto")]
        sandbox: SandboxChoice,
        /// One JSON object per task, then a summary object (`"type": "task" | "summary"`).
        #[arg(long)]
        json: bool,
        /// Also write the report as one JSON document to FILE.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write OUT/report.json and OUT/report.html (funnel, rejections, yield, difficulty,
    /// stage times, per-seed table) from a `run` output directory.
    Report {
        out: PathBuf,
        /// Print report.json on stdout too.
        #[arg(long)]
        json: bool,
    },
    /// Export a run's tasks as git repositories: OUT/export/<seed>.git with the base commit on
    /// `main` and one branch `task/<instance_id>` per task holding the buggy state.
    Export {
        out: PathBuf,
        /// Tasks to export (default: OUT/tasks.jsonl).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Where the export goes (default: OUT/export for `git`, OUT/export-FORMAT otherwise).
        #[arg(long)]
        to: Option<PathBuf>,
        /// `git`: bare repositories, a parentless branch per task; `swebench`: a dataset
        /// directory the SWE-bench harness evaluates; `harbor`: a Harbor task per directory.
        #[arg(long, value_enum, default_value = "git")]
        format: ExportFormatArg,
        /// Print the export summary as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Train a policy on tasks with verified rewards: optional supervised warm-start on the
    /// gold edits, then GRPO with curriculum sampling; OUT/metrics.jsonl per step,
    /// OUT/checkpoint (a Hugging Face directory plus trainer.json), OUT/curriculum.json.
    Train(TrainArgs),
    /// Measure a stage.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Args)]
struct TrainArgs {
    /// The tasks to train on (tasks.jsonl of a run).
    #[arg(long)]
    tasks: PathBuf,
    /// Output directory (default: `train` beside the tasks file).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Start from a Hugging Face directory (config.json, tokenizer.json, *.safetensors);
    /// default: the small randomly initialized model with a tokenizer trained on the tasks.
    #[arg(long)]
    model: Option<PathBuf>,
    /// GRPO steps.
    #[arg(long, default_value_t = 50)]
    steps: usize,
    /// Stop once this many rollouts were graded.
    #[arg(long)]
    rollouts: Option<usize>,
    /// Stop after this many seconds (warm-start included).
    #[arg(long)]
    time_budget: Option<f64>,
    /// Samples per task (the group size G).
    #[arg(long, default_value_t = 8)]
    group: usize,
    /// Tasks per step.
    #[arg(long, default_value_t = 4)]
    tasks_per_step: usize,
    /// Times a group whose rewards are all equal is replaced by another task, per slot.
    #[arg(long, default_value_t = 2)]
    max_refill: usize,
    /// Most new tokens per sample.
    #[arg(long, default_value_t = 96)]
    max_new: usize,
    #[arg(long, default_value_t = 1.0)]
    temperature: f64,
    /// Learning rate of the RL steps.
    #[arg(long, default_value_t = 3e-4)]
    lr: f64,
    /// Gradient steps per batch of groups (μ); after the first, the probability ratio to
    /// the sampling policy is clipped (0.2 / 0.28).
    #[arg(long, default_value_t = 1)]
    updates: usize,
    /// Weight of a KL penalty to the policy GRPO started from (0: none). The reference is
    /// kept in OUT/reference.
    #[arg(long, default_value_t = 0.0)]
    kl_coef: f64,
    /// Supervised steps on the gold edits before RL.
    #[arg(long, default_value_t = 0)]
    warm_start: usize,
    #[arg(long, default_value_t = 1e-3)]
    warm_start_lr: f64,
    /// How tasks are served: `curriculum` (learnability p(1−p) plus staleness) or `uniform`.
    #[arg(long, default_value = "curriculum", value_parser = ["curriculum", "uniform"])]
    sampling: String,
    /// The pass rate the curriculum aims at.
    #[arg(long, default_value_t = 0.5)]
    target: f64,
    /// Generate and verify tasks while training runs: multi-bug combinations of the
    /// training tasks, and single-bug tasks from their seeds in the curriculum's category mix.
    #[arg(long)]
    generate: bool,
    /// New candidates per engine round of --generate (0: no single-bug generation).
    #[arg(long, default_value_t = 12)]
    generate_batch: usize,
    /// The seed manifest --generate reads (default: the embedded demo seeds).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Train on a deterministic sample of N of the tasks (chosen by --seed).
    #[arg(long)]
    limit_tasks: Option<usize>,
    /// Every N GRPO steps (and before the first, after the last) measure the pass rate over
    /// every training task (`eval` lines in metrics.jsonl); 0: never.
    #[arg(long, default_value_t = 0)]
    eval_every: usize,
    /// Samples per task in an evaluation.
    #[arg(long, default_value_t = 4)]
    eval_samples: usize,
    /// The same evaluation every N warm-start steps (`eval-sft` lines); 0: never.
    #[arg(long, default_value_t = 0)]
    warm_eval_every: usize,
    /// Continue from OUT/checkpoint.
    #[arg(long)]
    resume: bool,
    #[arg(long, default_value_t = 10)]
    checkpoint_every: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Vocabulary of the small model's tokenizer.
    #[arg(long, default_value_t = 1024)]
    vocab: usize,
    /// Where rewards are graded: `local` (default) or `docker` (tasks that name an image).
    #[arg(long, value_enum, default_value = "local")]
    sandbox: SandboxChoice,
    /// Threads for the tensor library (CANDLE_NUM_THREADS when set wins). Its CPU pool spins
    /// between operations, so on a small shared machine one thread is the fastest.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ExportFormatArg {
    Git,
    Swebench,
    Harbor,
}

impl From<ExportFormatArg> for swe_forge::export::ExportFormat {
    fn from(f: ExportFormatArg) -> Self {
        match f {
            ExportFormatArg::Git => Self::Git,
            ExportFormatArg::Swebench => Self::Swebench,
            ExportFormatArg::Harbor => Self::Harbor,
        }
    }
}

#[derive(Subcommand)]
enum ImageCommand {
    /// Make the base image (runtime, git, test tools): pulled where a registry answers, else
    /// bootstrapped offline with debootstrap (needs root) and imported. Reused when present.
    Bootstrap {
        #[arg(long, value_enum, default_value = "python")]
        lang: Language,
        /// Rebuild even when the image or its cached root file system exists.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Build the task images the records of TASKS.jsonl name (`image_name`: the start state
    /// over the repository image) from the records alone: each seed is imported afresh, its
    /// repository image found or rebuilt, the start state rebuilt and checked against
    /// `base_commit`. Reused when present. Exit 0: every image is there; 1: some failed.
    Tasks {
        tasks: PathBuf,
        /// One JSON object per task, then a summary object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Enumerate the candidates of every non-test source file under DIR and time it.
    Mutate {
        dir: PathBuf,
        #[arg(long, value_enum)]
        lang: Option<Language>,
        #[arg(long)]
        json: bool,
    },
    /// Run the pipeline (the options of `run`) into a new temporary output directory and report
    /// what verification cost: runs per decided candidate, seconds per run, verify-stage wall
    /// time per decided and per accepted candidate, time per stage. `--out` is not used.
    Verify {
        #[command(flatten)]
        run: RunArgs,
    },
}

#[derive(Args, Clone)]
struct RunArgs {
    /// Seed manifest (YAML); the embedded demo seeds when absent.
    manifest: Option<PathBuf>,
    /// Output directory.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    sandbox: SandboxChoice,
    /// Parallel workers per repository (default: the number of CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// At most this many candidates per seed.
    #[arg(long, default_value_t = 300)]
    max_candidates: usize,
    #[arg(long, default_value_t = 4)]
    max_per_function: usize,
    #[arg(long)]
    max_per_mutator: Option<usize>,
    /// The mutator categories' shares of the drawn candidates, e.g. `boundary=2,logic=1`
    /// (twice as many boundary as logic); categories not named are left out. Default: every
    /// candidate equally likely.
    #[arg(long, value_parser = parse_category_mix)]
    category_mix: Option<std::collections::BTreeMap<String, f64>>,
    /// Repeats of each verification check.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Repeats of the clean baseline.
    #[arg(long, default_value_t = 3)]
    baseline_repeats: usize,
    /// Run check 3 (buggy + gold fix) even when its tree is byte-identical to the clean tree
    /// the baseline already ran ×3; by default the baseline's runs are its evidence
    /// (`verification.reused` in the record).
    #[arg(long)]
    recheck_identical: bool,
    /// Run the whole suite in every repeat of check 2 (buggy code). By default the repeats
    /// after the first run the covering tests and those that failed in the first.
    #[arg(long)]
    full_repeats: bool,
    /// How tests run: `resident` (default) keeps one interpreter per worker that has imported
    /// pytest, its plugins and the suite's third-party modules, and forks a child per run,
    /// where the seed qualifies (its clean suite gives the fresh baseline's per-test outcomes;
    /// else it falls back, with the reason in summary.json); `fresh` starts a process per run.
    #[arg(long, default_value = "resident")]
    runner: swe_forge::runner::resident::RunnerMode,
    /// Hard timeout of one baseline run, seconds.
    #[arg(long, default_value_t = 900)]
    baseline_timeout: u64,
    /// Lower bound of the per-run timeout derived from the baseline, seconds.
    #[arg(long, default_value_t = 10)]
    min_timeout: u64,
    /// Memory limit per test command, MiB.
    #[arg(long, default_value_t = 4096)]
    memory_limit: u64,
    /// Process limit per worker.
    #[arg(long, default_value_t = 512)]
    pids_limit: u64,
    /// Rules from DIR/<language>/*.yaml instead of the embedded ones.
    #[arg(long)]
    mutators: Option<PathBuf>,
    /// Only the named seeds (repeat the flag or separate names with commas).
    #[arg(long = "only", value_delimiter = ',')]
    only: Vec<String>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Do not synthesize tests for survivors (Python): they stay `not-killed`/`not-covered`.
    #[arg(long)]
    no_synthesis: bool,
    /// Wall seconds test synthesis may spend per seed; survivors past it keep their verdict
    /// (synthesis status `over-budget`, counted in the summary's `synthesis`). 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = swe_forge::pipeline::SYNTHESIS_BUDGET_S)]
    synthesis_budget: u64,
    /// The most the clean-suite tracer may cost per seed, in plain suites by wall: its
    /// top-up runs stop short of it (the whole-suite run is always made).
    #[arg(long, value_name = "FACTOR", default_value_t = swe_forge::pipeline::TRACE_FACTOR)]
    tracer_budget: f64,
    /// Leave the FAIL_TO_PASS tests' files in the agent's start state (an easier variant;
    /// recorded as `metadata.start_state.hidden_tests: visible`). By default they are removed
    /// and `test_patch` restores them at grading time.
    #[arg(long)]
    visible_tests: bool,
    /// Docker sandbox: do not build the accepted tasks' images after each seed. The records
    /// name them all the same (a task image's tag follows from its repository image and start
    /// state); `swe-forge image tasks OUT/tasks.jsonl` builds them later.
    #[arg(long)]
    no_task_images: bool,
    /// Rewrite the issue texts of accepted tasks with a language model behind this
    /// OpenAI-compatible API (base URL, e.g. http://127.0.0.1:8000/v1). A bearer token is read
    /// from SWE_FORGE_ISSUE_LLM_KEY. A rewrite that fails or leaks keeps the template text.
    #[arg(long, value_name = "URL", value_parser = parse_llm_url)]
    issue_llm: Option<swe_forge::issue_llm::Endpoint>,
    /// The model for --issue-llm (default: the first the endpoint lists).
    #[arg(long, value_name = "NAME", requires = "issue_llm")]
    issue_llm_model: Option<String>,
    /// Timeout of one --issue-llm request, seconds.
    #[arg(long, value_name = "S", default_value_t = 60, requires = "issue_llm")]
    issue_llm_timeout: u64,
}

fn parse_llm_url(s: &str) -> Result<swe_forge::issue_llm::Endpoint, String> {
    swe_forge::issue_llm::parse_endpoint(s).map_err(|e| e.to_string())
}

fn default_cache() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(x).join("swe-forge");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache/swe-forge");
    }
    std::env::temp_dir().join("swe-forge-cache")
}

fn main() {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn dispatch(cli: Cli) -> Result<i32> {
    let cache = cli.cache.clone().unwrap_or_else(default_cache);
    match cli.command {
        Command::Run(args) => run(args, cache, None, cli.quiet),
        Command::Verify {
            run: args,
            candidates,
        } => run(args, cache, Some(candidates), cli.quiet),
        Command::Import { manifest, json } => import(&manifest, &cache, json),
        Command::Mutate {
            path,
            lang,
            mutators,
            include_tests,
            json,
        } => mutate(&path, lang, mutators.as_deref(), include_tests, json),
        Command::Image {
            what: ImageCommand::Bootstrap { lang, force, json },
        } => {
            let started = std::time::Instant::now();
            let img = swe_forge::sandbox::image::bootstrap(&cache, lang, force, &|line| {
                eprintln!("{line}")
            })
            .with_context(|| format!("bootstrapping the {lang} base image"))?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "tag": img.tag, "id": img.id, "built": img.built,
                        "seconds": started.elapsed().as_secs_f64(),
                    })
                );
            } else {
                println!(
                    "{} {} ({}, {:.1}s)",
                    img.tag,
                    img.id,
                    if img.built { "built" } else { "present" },
                    started.elapsed().as_secs_f64()
                );
            }
            Ok(0)
        }
        Command::Image {
            what: ImageCommand::Tasks { tasks, json },
        } => {
            let text = std::fs::read_to_string(&tasks)
                .with_context(|| format!("reading {}", tasks.display()))?;
            let mut records = Vec::new();
            for (i, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let t: swe_forge::task::Task = serde_json::from_str(line).with_context(|| {
                    format!("{}: line {} is not a task record", tasks.display(), i + 1)
                })?;
                records.push(t);
            }
            let (summary, lines) = swe_forge::task_images::build_from_records(
                &records,
                &tasks,
                &cache,
                Default::default(),
                &|line| tracing::info!("{line}"),
            )
            .map_err(anyhow::Error::msg)?;
            for l in &lines {
                if json {
                    println!("{}", serde_json::to_string(l)?);
                } else {
                    println!(
                        "{:<8} {}  {}{}",
                        l.status,
                        l.image.as_deref().unwrap_or("-"),
                        l.instance_id,
                        if l.detail.is_empty() {
                            String::new()
                        } else {
                            format!("  ({})", l.detail)
                        }
                    );
                }
            }
            if json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                println!(
                    "task images: {} built, {} reused, {} failed in {:.1}s; layer median {} B, max {} B",
                    summary.built,
                    summary.reused,
                    summary.failed,
                    summary.seconds,
                    summary.layer_bytes_median.unwrap_or(0),
                    summary.layer_bytes_max.unwrap_or(0)
                );
            }
            Ok(if summary.failed > 0 { 1 } else { 0 })
        }
        Command::Train(a) => {
            use swe_forge::train::trainer;
            // Read once, before the first tensor operation.
            if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
                std::env::set_var("CANDLE_NUM_THREADS", a.threads.max(1).to_string());
            }
            let out = a.out.clone().unwrap_or_else(|| {
                a.tasks
                    .parent()
                    .map(|p| p.join("train"))
                    .unwrap_or_else(|| PathBuf::from("train"))
            });
            let mut cfg = trainer::TrainConfig::new(a.tasks.clone(), out, cache);
            cfg.model = a.model;
            cfg.steps = a.steps;
            cfg.rollout_budget = a.rollouts;
            cfg.time_budget = a.time_budget.map(std::time::Duration::from_secs_f64);
            cfg.group = a.group;
            cfg.tasks_per_step = a.tasks_per_step;
            cfg.max_refill = a.max_refill;
            cfg.max_new = a.max_new;
            cfg.temperature = a.temperature;
            cfg.lr = a.lr;
            cfg.updates = a.updates;
            cfg.grpo.kl_coef = a.kl_coef;
            cfg.warm_start = a.warm_start;
            cfg.warm_start_lr = a.warm_start_lr;
            cfg.curriculum.sampling =
                trainer::sampling_from_str(&a.sampling).expect("checked by clap");
            cfg.target = a.target;
            cfg.generate = a.generate;
            cfg.generate_batch = a.generate_batch;
            cfg.generate_manifest = a.manifest.clone();
            cfg.limit_tasks = a.limit_tasks;
            cfg.eval_every = a.eval_every;
            cfg.eval_samples = a.eval_samples;
            cfg.warm_eval_every = a.warm_eval_every;
            cfg.resume = a.resume;
            cfg.checkpoint_every = a.checkpoint_every;
            cfg.seed = a.seed;
            cfg.vocab_size = a.vocab;
            cfg.reward.sandbox = a.sandbox;
            cfg.progress = !a.json && !cli.quiet;
            let summary = trainer::train(&cfg)
                .with_context(|| format!("training on {}", cfg.tasks.display()))?;
            if a.json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                let pct =
                    |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{:.0}%", v * 100.0));
                println!(
                    "trained {} parameters on {} tasks: {} warm-start + {} GRPO steps, {} rollouts in {:.0} s; \
                     pass rate {} (first quarter) → {} (last quarter); groups with signal {}; \
                     {} multi-bug tasks generated{}\ncheckpoint {}\nmetrics {}",
                    summary.parameters,
                    summary.tasks,
                    summary.warm_steps,
                    summary.steps,
                    summary.rollouts,
                    summary.seconds,
                    pct(summary.first_pass_rate),
                    pct(summary.last_pass_rate),
                    pct(summary.signal_share),
                    summary.generated,
                    if summary.evals.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; pass rate over all training tasks by step: {}",
                            summary
                                .evals
                                .iter()
                                .map(|(s, p)| format!("{s}: {:.0}%", p * 100.0))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    },
                    summary.checkpoint.display(),
                    summary.metrics.display()
                );
            }
            Ok(0)
        }
        Command::Audit {
            tasks,
            sample,
            seed,
            sandbox,
            json,
            out,
        } => {
            use swe_forge::audit::{self, JsonLine};
            let cfg = audit::AuditConfig {
                tasks,
                sample,
                seed,
                sandbox,
                cache,
                limits: Limits::default(),
                progress: !json && !cli.quiet,
            };
            let report = audit::audit(&cfg, |a| match json {
                true => println!("{}", JsonLine::Task(a).to_json()),
                false => println!("{}", audit::text_line(a)),
            })
            .with_context(|| format!("auditing {}", cfg.tasks.display()))?;
            match json {
                true => println!("{}", JsonLine::Summary(&report.summary).to_json()),
                false => println!("{}", audit::summary_line(&report.summary)),
            }
            if let Some(path) = out {
                report.write_json(&path)?;
            }
            Ok(report.exit_code())
        }
        Command::Report { out, json } => {
            // The library's errors name the directory or file at fault.
            let w = swe_forge::report::write(&out)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&w.report)?);
            } else {
                let f = &w.report.funnel;
                println!(
                    "{} decided, {} accepted, {} tasks: {}",
                    f.decided,
                    f.accepted,
                    f.tasks,
                    w.html.display()
                );
            }
            for warning in &w.report.warnings {
                eprintln!("warning: {warning}");
            }
            Ok(0)
        }
        Command::Export {
            out,
            tasks,
            to,
            format,
            json,
        } => {
            let cfg = swe_forge::export::ExportConfig {
                out,
                tasks,
                to,
                cache: cache.clone(),
                format: format.into(),
            };
            let s = swe_forge::export::export(&cfg)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                for r in &s.repositories {
                    println!(
                        "{:<16} {} branches  {}",
                        r.seed,
                        r.branches,
                        r.path.display()
                    );
                }
                for f in &s.failed {
                    eprintln!("not exported: {}: {}", f.instance_id, f.reason);
                }
                println!(
                    "exported {} of {} tasks to {}",
                    s.exported.len(),
                    s.tasks,
                    s.to.display()
                );
            }
            Ok(if s.exported.is_empty() { 4 } else { 0 })
        }
        Command::Bench {
            what: BenchCommand::Verify { run: mut args },
        } => {
            let out = tempfile::Builder::new()
                .prefix("swe-forge-bench-verify-")
                .tempdir()
                .context("creating a temporary output directory")?
                .keep();
            args.out = out;
            let json = args.json;
            let summary = run_pipeline(&args, cache, None, cli.quiet)?;
            let b = bench::verify_figures(&summary).context("reading the run's state store")?;
            if json {
                println!("{}", serde_json::to_string_pretty(&b)?);
            } else {
                println!(
                    "run in {} ({:.1}s, sandbox {})",
                    b.out.display(),
                    b.seconds,
                    b.sandbox
                );
                for s in &b.seeds {
                    println!(
                        "{:<16} runner {:<8} decided {:>4}  accepted {:>4}  runs/decided {:>5.2}  s/run {:>6.3}  wall s/decided {:>6.2}  wall s/accepted {}",
                        s.seed,
                        s.runner,
                        s.decided,
                        s.accepted,
                        s.runs_per_decided,
                        s.seconds_per_run,
                        s.wall_per_decided,
                        s.wall_per_accepted.map_or("-".into(), |v| format!("{v:.2}")),
                    );
                    let stages: Vec<String> = s
                        .stages
                        .iter()
                        .map(|(k, v)| format!("{k} {v:.1}"))
                        .collect();
                    println!("{:<16} stages (s): {}", "", stages.join(", "));
                }
            }
            Ok(0)
        }
        Command::Bench {
            what: BenchCommand::Mutate { dir, lang, json },
        } => {
            let b = bench::mutate_dir(&dir, lang)
                .with_context(|| format!("benchmarking {}", dir.display()))?;
            if json {
                println!("{}", serde_json::to_string(&b)?);
            } else {
                println!(
                    "files {}  lines {}  candidates {}  seconds {:.3}  candidates/s {:.0}  skipped files {}",
                    b.files, b.lines, b.candidates, b.seconds, b.candidates_per_s, b.skipped_files
                );
            }
            Ok(0)
        }
    }
}

fn run(args: RunArgs, cache: PathBuf, candidates: Option<PathBuf>, quiet: bool) -> Result<i32> {
    let summary = run_pipeline(&args, cache, candidates, quiet)?;
    print_run(&args, &summary)
}

/// `run`'s pipeline, with its Ctrl-C handling.
fn run_pipeline(
    args: &RunArgs,
    cache: PathBuf,
    candidates: Option<PathBuf>,
    quiet: bool,
) -> Result<pipeline::RunSummary> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cfg = RunConfig {
        manifest: args.manifest.clone(),
        out: args.out.clone(),
        cache,
        sandbox: args.sandbox,
        jobs,
        budget: Budget {
            seed: args.seed,
            max_total: Some(args.max_candidates),
            max_per_function: Some(args.max_per_function),
            max_per_mutator: args.max_per_mutator,
            category_mix: args.category_mix.clone().unwrap_or_default(),
        },
        baseline: BaselineConfig {
            repeats: args.baseline_repeats,
            timeout: Duration::from_secs(args.baseline_timeout),
            min_timeout: Duration::from_secs(args.min_timeout),
            ..BaselineConfig::default()
        },
        verify: VerifyConfig {
            repeats: args.repeats,
            recheck_identical: args.recheck_identical,
            full_repeats: args.full_repeats,
        },
        limits: Limits {
            memory_bytes: args.memory_limit << 20,
            pids: args.pids_limit,
        },
        mutators_dir: args.mutators.clone(),
        only: args.only.clone(),
        candidates_file: candidates,
        progress: !args.json && !quiet,
        synthesize: !args.no_synthesis,
        tracer_budget: args.tracer_budget,
        synthesis_budget: (args.synthesis_budget > 0)
            .then(|| std::time::Duration::from_secs(args.synthesis_budget)),
        visible_tests: args.visible_tests,
        task_images: !args.no_task_images,
        runner: args.runner,
        issue_llm: args.issue_llm.clone().map(|endpoint| {
            let mut c = swe_forge::issue_llm::LlmConfig::new(endpoint);
            c.model = args.issue_llm_model.clone();
            c.api_key = std::env::var("SWE_FORGE_ISSUE_LLM_KEY")
                .ok()
                .filter(|k| !k.trim().is_empty());
            c.timeout = Duration::from_secs(args.issue_llm_timeout.max(1));
            c
        }),
        undecided_only: false,
    };
    ctrlc::set_handler(|| {
        if pipeline::STOP.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: give up at once, but leave no container behind.
            let removed = swe_forge::sandbox::docker::cleanup_active_runs();
            if removed > 0 {
                eprintln!("removed {removed} container(s)");
            }
            std::process::exit(130);
        }
        eprintln!("interrupted: finishing the candidates in flight (Ctrl-C again to quit now)");
    })
    .context("installing the Ctrl-C handler")?;
    Ok(pipeline::run(&cfg)?)
}

/// `run`'s output and exit code.
fn print_run(args: &RunArgs, summary: &pipeline::RunSummary) -> Result<i32> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        for s in &summary.seeds {
            let rejected: Vec<String> =
                s.rejected.iter().map(|(r, n)| format!("{r} {n}")).collect();
            println!(
                "{:<16} {:<9} candidates {:>4}/{:<5} killed {:>4}  accepted {:>4}  rejected: {}{}",
                s.seed,
                s.status,
                s.sampled,
                s.enumerated,
                s.killed,
                s.accepted,
                if rejected.is_empty() {
                    "-".to_string()
                } else {
                    rejected.join(", ")
                },
                if s.detail.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", s.detail)
                },
            );
            if !s.issue_rewrite.is_empty() {
                let counts: Vec<String> = s
                    .issue_rewrite
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect();
                println!("{:<16} issue texts: {}", "", counts.join(", "));
            }
        }
        println!(
            "{} tasks in {} ({:.1}s, sandbox {})",
            summary.tasks,
            summary.out.join("tasks.jsonl").display(),
            summary.seconds,
            summary.sandbox
        );
    }
    if summary.interrupted {
        return Ok(130);
    }
    if !summary.seeds.is_empty() && summary.seeds.iter().all(|s| s.status != "done") {
        return Ok(3);
    }
    Ok(0)
}

fn import(manifest: &Path, cache: &Path, json: bool) -> Result<i32> {
    let m = seed::load_manifest(manifest)?;
    let mut failures = 0;
    let mut rows = Vec::new();
    for s in &m.seeds {
        match repo::import(s, &m.base_dir, cache) {
            Ok(r) => {
                if !json {
                    println!(
                        "{:<16} {} {:<8} {:<10} {:<7} sources {:>4}  tests {:>4}  {}",
                        r.name,
                        &r.commit[..12],
                        r.profile.language,
                        r.profile.build_system,
                        r.profile.test_framework,
                        r.profile.source_files.len(),
                        r.profile.test_files.len(),
                        r.checkout.display()
                    );
                    if !r.profile.packages_reason.is_empty() {
                        println!("{:<16} mutating {}", "", r.profile.packages_reason);
                    }
                }
                rows.push(serde_json::json!({"seed": s.name, "ok": true, "repo": r}));
            }
            Err(e) => {
                failures += 1;
                if !json {
                    eprintln!("{:<16} error: {e}", s.name);
                }
                rows.push(serde_json::json!({"seed": s.name, "ok": false, "error": e.to_string()}));
            }
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    Ok(if failures > 0 { 1 } else { 0 })
}

fn mutate(
    path: &Path,
    lang: Option<Language>,
    mutators: Option<&Path>,
    include_tests: bool,
    json: bool,
) -> Result<i32> {
    let (root, files) = source_files(path, lang, include_tests)?;
    let mut total = 0;
    for language in Language::ALL {
        let of_lang: Vec<String> = files
            .iter()
            .filter(|f| language.matches_path(Path::new(f)))
            .cloned()
            .collect();
        if of_lang.is_empty() || lang.is_some_and(|l| l != language) {
            continue;
        }
        let rules = pipeline::load_rules(mutators, language)?;
        let e = candidate::enumerate(&root, &of_lang, language, &rules);
        for s in &e.skipped {
            tracing::warn!(file = %s.file, "skipped: {}", s.reason);
        }
        for c in &e.candidates {
            if json {
                println!("{}", serde_json::to_string(c)?);
            } else {
                println!(
                    "{}:{}  {:<24} {:<18} {}  `{}` → `{}`",
                    c.file,
                    c.line_range.0,
                    c.mutator,
                    c.category,
                    c.function,
                    one_line(&c.before),
                    one_line(&c.after)
                );
            }
        }
        total += e.candidates.len();
    }
    if !json {
        eprintln!("{total} candidates");
    }
    Ok(0)
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 40 {
        format!("{}…", flat.chars().take(40).collect::<String>())
    } else {
        flat
    }
}

/// The root and the repository-relative source files under `path` (a file or a directory).
fn source_files(
    path: &Path,
    lang: Option<Language>,
    include_tests: bool,
) -> Result<(PathBuf, Vec<String>)> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        let root = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let name = path
            .file_name()
            .context("a file name")?
            .to_string_lossy()
            .into_owned();
        return Ok((root, vec![name]));
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(e.depth() > 0
                && (n.starts_with('.')
                    || n == "__pycache__"
                    || n == "node_modules"
                    || n == "target"))
        })
    {
        let entry = entry?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(path)
            .expect("under root")
            .to_string_lossy()
            .replace('\\', "/");
        let language = Language::ALL
            .into_iter()
            .find(|l| l.matches_path(entry.path()));
        let Some(language) = language else { continue };
        if lang.is_some_and(|l| l != language) {
            continue;
        }
        if !include_tests && language.is_test_path(&rel) {
            continue;
        }
        files.push(rel);
    }
    Ok((path.to_path_buf(), files))
}

/// `boundary=2,logic=1` → {boundary: 2, logic: 1}.
fn parse_category_mix(s: &str) -> Result<std::collections::BTreeMap<String, f64>, String> {
    let mut mix = std::collections::BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: expected CATEGORY=WEIGHT"))?;
        let w: f64 = weight
            .trim()
            .parse()
            .map_err(|_| format!("`{part}`: the weight is not a number"))?;
        if !(w >= 0.0 && w.is_finite()) {
            return Err(format!("`{part}`: the weight must be 0 or more"));
        }
        mix.insert(name.trim().to_string(), w);
    }
    if !mix.values().any(|w| *w > 0.0) {
        return Err("no category has a weight above 0".into());
    }
    Ok(mix)
}
