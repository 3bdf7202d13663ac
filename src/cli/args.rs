//! The command line's arguments: the commands, their options and the parsers of option values.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use swe_forge::lang::Language;
use swe_forge::pipeline::SandboxChoice;

#[derive(Parser)]
#[command(
    name = "swe-forge",
    version,
    about = "Turn real repositories into verified software-engineering tasks"
)]
pub(crate) struct Cli {
    /// More logs (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// Only warnings and errors.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// Cache for mirrors, checkouts, environments and the extracted demo seeds.
    #[arg(long, global = true, env = "SWE_FORGE_CACHE")]
    pub(crate) cache: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Docker images: make the base image of a language, build task images, save and load them.
    Image {
        #[command(subcommand)]
        what: ImageCommand,
    },
    /// Re-verify tasks from their records alone (schema, patches, FAIL_TO_PASS and
    /// PASS_TO_PASS on the buggy and the fixed code, issue leaks) in fresh environments.
    /// Exit 0: all checked tasks are ok; 4: some task is invalid.
    Audit(AuditArgs),
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
        #[command(flatten)]
        format: ExportFormatArgs,
        /// Print the export summary as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Train a policy on tasks with verified rewards: optional supervised warm-start on the
    /// gold edits, then GRPO with curriculum sampling; OUT/metrics.jsonl per step,
    /// OUT/checkpoint (a Hugging Face directory plus trainer.json), OUT/curriculum.json.
    Train(TrainArgs),
    /// Serve tasks to RL trainers' own stacks: an environment and reward server (HTTP, JSON,
    /// WebSocket; OpenEnv-shaped) with tools, graded submits, the curriculum and metrics; see
    /// docs/serve.md. Binds to loopback by default.
    Serve(ServeArgs),
    /// Join the output directories of several runs (the shards of one: `run --shard K/N`)
    /// into OUT as one run would have written it (state.db, tasks.jsonl, candidates.jsonl,
    /// summary.json, logs). A candidate two inputs decided differently is a conflict: exit 1,
    /// unless --allow-conflicts (the first input's record is kept). Merging again gives the
    /// same OUT.
    Merge {
        /// The runs' output directories.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The merged directory (made afresh).
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        allow_conflicts: bool,
        #[arg(long)]
        json: bool,
    },
    /// Run the shards of a run on a cluster: `slurm` writes batch scripts (and with --submit
    /// submits them), `k8s` writes Kubernetes manifests. See docs/cluster.md.
    Cluster {
        #[command(subcommand)]
        what: super::cluster::ClusterCommand,
    },
    /// How far runs are (the shards of one): per output directory and overall, candidates
    /// sampled, decided, accepted, rejected and the share decided. --wait waits until every
    /// run is done.
    Status(super::status::StatusArgs),
    /// Measure a stage.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Args)]
pub(crate) struct AuditArgs {
    /// The tasks.jsonl to check.
    pub(crate) tasks: PathBuf,
    /// Check a deterministic sample of N tasks.
    #[arg(long)]
    pub(crate) sample: Option<usize>,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) sandbox: SandboxChoice,
    /// One JSON object per task, then a summary object (`"type": "task" | "summary"`).
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the report as one JSON document to FILE.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Run every task's fixed check, even when an earlier task ran the same tests on a
    /// byte-identical tree in the same environment (by default that run is used again).
    #[arg(long)]
    pub(crate) recheck_identical: bool,
}

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The tasks to serve (tasks.jsonl of a run).
    #[arg(long)]
    pub(crate) tasks: PathBuf,
    /// Where to listen (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) addr: std::net::SocketAddr,
    /// Sessions at once; a reset beyond them is refused (429).
    #[arg(long, default_value_t = 8)]
    pub(crate) max_sessions: usize,
    /// Containers of the next sampled tasks started ahead (under Docker, ended sessions'
    /// recycled containers are kept too, up to twice this many).
    #[arg(long, default_value_t = 1)]
    pub(crate) pool: usize,
    /// `docker`: sessions in containers of the tasks' images (`auto`: the same, and refused
    /// without a Docker daemon); `local`: on this host, without isolation (refused without
    /// --unsafe-local).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) sandbox: SandboxChoice,
    /// Require `Authorization: Bearer TOKEN` on every request but /health. A server bound
    /// beyond loopback without one makes one and prints it.
    #[arg(long, env = "SWE_FORGE_SERVE_TOKEN")]
    pub(crate) token: Option<String>,
    /// An origin (`https://app.example`) whose pages may call the server, besides loopback
    /// ones; repeatable, `*` for any. Requests whose `Host` does not name the server, and
    /// browser requests from other origins, are refused (403).
    #[arg(long)]
    pub(crate) allow_origin: Vec<String>,
    /// MiB a session may add under its repository (no file it writes may be larger either):
    /// past it the episode ends with reward 0 (`exceeded-storage`) and the server goes on.
    #[arg(long, default_value_t = 1024)]
    pub(crate) max_tree_mb: u64,
    /// Seconds a session may stay idle before it ends.
    #[arg(long, default_value_t = 600)]
    pub(crate) idle_timeout: u64,
    /// Test runs per graded submit (each test passes by majority).
    #[arg(long, default_value_t = 3)]
    pub(crate) grade_repeats: usize,
    /// Keep the reward of a submit the reward-hacking review flags (by default it is 0).
    #[arg(long)]
    pub(crate) reward_flagged: bool,
    /// A flagged submit gets reward 0: the default now, accepted for old scripts.
    #[arg(long, hide = true, conflicts_with = "reward_flagged")]
    pub(crate) zero_flagged: bool,
    /// Allow the local sandbox (`--sandbox local`, or `auto` without a Docker daemon): the
    /// agent's commands then run on this host, where they can read the tasks file (every gold
    /// patch), other sessions' worktrees and the fix in git history, and write the shared
    /// virtualenv grading uses. For developing against the server only.
    #[arg(long)]
    pub(crate) unsafe_local: bool,
    /// The task ids agents see: `opaque` (`<seed>__<12 hex digits>`) or `descriptive` (the
    /// records' ids, which name the mutator).
    #[arg(long, value_enum, default_value = "opaque")]
    pub(crate) id_style: swe_forge::export::IdStyle,
    /// The sessions database (default: serve.db beside the tasks file).
    #[arg(long)]
    pub(crate) db: Option<PathBuf>,
    /// Seed of the curriculum's draws.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Grow the pool while serving, in the curriculum's plan: multi-bug combinations of the
    /// served tasks, and single-bug tasks from their seeds (as `train --generate`).
    #[arg(long)]
    pub(crate) generate: bool,
    /// New candidates per engine round of --generate (0: combinations only).
    #[arg(long, default_value_t = 12)]
    pub(crate) generate_batch: usize,
    /// The seed manifest --generate reads (default: the embedded demo seeds).
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
    /// The pass rate the curriculum's generation plan aims at.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) target: f64,
}

#[derive(Args)]
pub(crate) struct TrainArgs {
    /// The tasks to train on (tasks.jsonl of a run).
    #[arg(long)]
    pub(crate) tasks: PathBuf,
    /// Output directory (default: `train` beside the tasks file).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Start from a Hugging Face directory (config.json, tokenizer.json, *.safetensors);
    /// default: the small randomly initialized model with a tokenizer trained on the tasks.
    #[arg(long)]
    pub(crate) model: Option<PathBuf>,
    /// GRPO steps.
    #[arg(long, default_value_t = 50)]
    pub(crate) steps: usize,
    /// Stop once this many rollouts were graded.
    #[arg(long)]
    pub(crate) rollouts: Option<usize>,
    /// Stop after this many seconds (warm-start included).
    #[arg(long)]
    pub(crate) time_budget: Option<f64>,
    /// Samples per task (the group size G).
    #[arg(long, default_value_t = 8)]
    pub(crate) group: usize,
    /// Tasks per step.
    #[arg(long, default_value_t = 4)]
    pub(crate) tasks_per_step: usize,
    /// Times a group whose rewards are all equal is replaced by another task, per slot.
    #[arg(long, default_value_t = 2)]
    pub(crate) max_refill: usize,
    /// Most new tokens per sample.
    #[arg(long, default_value_t = 96)]
    pub(crate) max_new: usize,
    #[arg(long, default_value_t = 1.0)]
    pub(crate) temperature: f64,
    /// Learning rate of the RL steps.
    #[arg(long, default_value_t = 3e-4)]
    pub(crate) lr: f64,
    /// Gradient steps per batch of groups (μ); after the first, the probability ratio to
    /// the sampling policy is clipped (0.2 / 0.28).
    #[arg(long, default_value_t = 1)]
    pub(crate) updates: usize,
    /// Weight of a KL penalty to the policy GRPO started from (0: none). The reference is
    /// kept in OUT/reference.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) kl_coef: f64,
    /// Supervised steps on the gold edits before RL.
    #[arg(long, default_value_t = 0)]
    pub(crate) warm_start: usize,
    #[arg(long, default_value_t = 1e-3)]
    pub(crate) warm_start_lr: f64,
    /// How tasks are served: `curriculum` (learnability p(1−p) plus staleness) or `uniform`.
    #[arg(long, default_value = "curriculum", value_parser = ["curriculum", "uniform"])]
    pub(crate) sampling: String,
    /// The pass rate the curriculum aims at.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) target: f64,
    /// Generate and verify tasks while training runs: multi-bug combinations of the
    /// training tasks, and single-bug tasks from their seeds in the curriculum's category mix.
    #[arg(long)]
    pub(crate) generate: bool,
    /// New candidates per engine round of --generate (0: no single-bug generation).
    #[arg(long, default_value_t = 12)]
    pub(crate) generate_batch: usize,
    /// The seed manifest --generate reads (default: the embedded demo seeds).
    #[arg(long)]
    pub(crate) manifest: Option<PathBuf>,
    /// Train on a deterministic sample of N of the tasks (chosen by --seed).
    #[arg(long)]
    pub(crate) limit_tasks: Option<usize>,
    /// Every N GRPO steps (and before the first, after the last) measure the pass rate over
    /// every training task (`eval` lines in metrics.jsonl); 0: never.
    #[arg(long, default_value_t = 0)]
    pub(crate) eval_every: usize,
    /// Samples per task in an evaluation.
    #[arg(long, default_value_t = 4)]
    pub(crate) eval_samples: usize,
    /// The same evaluation every N warm-start steps (`eval-sft` lines); 0: never.
    #[arg(long, default_value_t = 0)]
    pub(crate) warm_eval_every: usize,
    /// Continue from OUT/checkpoint.
    #[arg(long)]
    pub(crate) resume: bool,
    #[arg(long, default_value_t = 10)]
    pub(crate) checkpoint_every: usize,
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Vocabulary of the small model's tokenizer.
    #[arg(long, default_value_t = 1024)]
    pub(crate) vocab: usize,
    /// Where rewards are graded: `local` (default) or `docker` (tasks that name an image).
    #[arg(long, value_enum, default_value = "local")]
    pub(crate) sandbox: SandboxChoice,
    /// Threads for the tensor library (CANDLE_NUM_THREADS when set wins). Its CPU pool spins
    /// between operations, so on a small shared machine one thread is the fastest.
    #[arg(long, default_value_t = 1)]
    pub(crate) threads: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `export`'s format and the ids it writes (one argument group: `main.rs` hands it on whole).
#[derive(Args)]
pub(crate) struct ExportFormatArgs {
    /// `git`: bare repositories, a parentless branch per task; `swebench`: a dataset
    /// directory the SWE-bench harness evaluates; `harbor`: a Harbor task per directory.
    #[arg(long, value_enum, default_value = "git")]
    pub(crate) format: ExportFormatArg,
    /// The instance ids of the `swebench` and `harbor` formats (and Harbor's directory names):
    /// `opaque` (`<seed>__<12 hex digits of blake3(instance_id)>`, stable per record; the
    /// mutator and category stay in `metadata`) or `descriptive` (the records' own ids, which
    /// name the mutator).
    #[arg(long, value_enum, default_value = "opaque")]
    pub(crate) id_style: swe_forge::export::IdStyle,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ExportFormatArg {
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
pub(crate) enum ImageCommand {
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
    /// Write this engine's swe-forge images (base, repository, task base, task) into DIR on
    /// shared storage: one tar per image (`<name>+<tag>.<id>.tar`) and its index entry
    /// (`<name>+<tag>.json`), each written to a temporary file and renamed, so that savers on
    /// several nodes can share DIR. An image DIR already holds is skipped. With --registry,
    /// push them instead. Exit 0: every image is saved or already there; 1: some failed.
    Save {
        /// The directory (created if absent); not with --registry.
        #[arg(required_unless_present = "registry", conflicts_with = "registry")]
        dir: Option<PathBuf>,
        #[command(flatten)]
        pick: ImagePick,
    },
    /// Load the images of DIR (written by `image save`) that this engine lacks; those present
    /// with the same id are skipped, a missing DIR holds nothing. With --registry, pull them
    /// instead (the catalog under PREFIX, or what --tasks names) and tag them with their local
    /// names. A bad tar or index entry is reported and the rest go on. Exit 0: every image is
    /// loaded or present; 1: some failed.
    Load {
        /// The directory; not with --registry.
        #[arg(required_unless_present = "registry", conflicts_with = "registry")]
        dir: Option<PathBuf>,
        #[command(flatten)]
        pick: ImagePick,
    },
}

/// Which images `image save` and `image load` take, and where to.
#[derive(Args, Clone)]
pub(crate) struct ImagePick {
    /// Push to (save) or pull from (load) this registry instead of a directory:
    /// `swe-forge/<name>:<tag>` is HOST/PREFIX/<name>:<tag> there.
    #[arg(long, value_name = "HOST/PREFIX")]
    pub(crate) registry: Option<swe_forge::sandbox::image::registry::Registry>,
    /// Only the task images these records name (`image_name`), their repository images and
    /// those images' base images.
    #[arg(long, value_name = "TASKS.jsonl")]
    pub(crate) tasks: Option<PathBuf>,
    /// Only images of these kinds (repeatable, or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) kind: Vec<swe_forge::sandbox::image::archive::ImageKind>,
    /// Only images whose full name (`swe-forge/<name>:<tag>`) matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub(crate) name: Vec<String>,
    /// One JSON object per image, then a summary object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
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
    /// Compare swe-forge's default protocol with the one-run rule of the simplest validators
    /// on the same candidates, back to back in one run (the options of `run`; `--out` is not
    /// used): first one fresh process per candidate running the whole suite once (valid: at
    /// least one FAIL_TO_PASS and one PASS_TO_PASS), then swe-forge's screening and
    /// verification. Prints core-seconds per decided candidate for each (the stage's wall ×
    /// `--jobs` ÷ decided), their ratio, both accepted sets and where they differ.
    Peer {
        #[command(flatten)]
        run: RunArgs,
    },
}

#[derive(Args, Clone)]
pub(crate) struct RunArgs {
    /// Seed manifest (YAML); the embedded demo seeds when absent.
    pub(crate) manifest: Option<PathBuf>,
    /// Decide only shard K of N (K from 0) of the sampled candidates, partitioned by a hash
    /// of their ids: N shards with the same --seed and budgets decide exactly what one run
    /// would; `merge` joins their output directories.
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<swe_forge::shard::Shard>,
    /// Output directory.
    #[arg(long, default_value = "out")]
    pub(crate) out: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) sandbox: SandboxChoice,
    /// Parallel workers per repository (default: the number of CPUs).
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// At most this many candidates per seed.
    #[arg(long, default_value_t = 300)]
    pub(crate) max_candidates: usize,
    #[arg(long, default_value_t = 4)]
    pub(crate) max_per_function: usize,
    #[arg(long)]
    pub(crate) max_per_mutator: Option<usize>,
    /// The mutator categories' shares of the drawn candidates, e.g. `boundary=2,logic=1`
    /// (twice as many boundary as logic); categories not named are left out. Default: every
    /// candidate equally likely.
    #[arg(long, value_parser = parse_category_mix)]
    pub(crate) category_mix: Option<std::collections::BTreeMap<String, f64>>,
    /// Repeats of each verification check.
    #[arg(long, default_value_t = 3)]
    pub(crate) repeats: usize,
    /// Repeats of the clean baseline.
    #[arg(long, default_value_t = 3)]
    pub(crate) baseline_repeats: usize,
    /// Run check 3 (buggy + gold fix) even when its tree is byte-identical to the clean tree
    /// the baseline already ran ×3; by default the baseline's runs are its evidence
    /// (`verification.reused` in the record).
    #[arg(long)]
    pub(crate) recheck_identical: bool,
    /// What a candidate's grading command runs (and so what verification runs and every
    /// grader after it): `tests`, the tests that execute the mutated lines, by name, where the
    /// runner can name tests (pytest; elsewhere their files); `files`, those tests' files,
    /// whole; `suite`, every test file (every regression guarded, a whole suite per run).
    #[arg(long, value_enum, default_value = "tests")]
    pub(crate) grading_scope: swe_forge::grading::Scope,
    /// The most covering tests a grading command runs (with `--grading-scope tests` or
    /// `files`): a candidate that more tests execute (code the whole suite runs) is screened
    /// up to its first failing test, and its command runs the tests that failed, then the
    /// covering tests of their files, then the other covering tests in the suite's file
    /// order, up to this many.
    /// 0: every covering test (a whole suite per run for such candidates).
    #[arg(long, default_value_t = swe_forge::grading::GRADING_MAX_TESTS)]
    pub(crate) grading_max_tests: usize,
    /// The same as `--grading-scope suite` (kept for scripts that use it).
    #[arg(long)]
    pub(crate) full_repeats: bool,
    /// How tests run: `resident` (default) keeps one interpreter per worker that has imported
    /// pytest, its plugins and the suite's third-party modules, and forks a child per run,
    /// where the seed qualifies (its clean suite gives the fresh baseline's per-test outcomes;
    /// else it falls back, with the reason in summary.json); `fresh` starts a process per run.
    #[arg(long, default_value = "resident")]
    pub(crate) runner: swe_forge::runner::resident::RunnerMode,
    /// Hard timeout of one baseline run, seconds.
    #[arg(long, default_value_t = 900)]
    pub(crate) baseline_timeout: u64,
    /// Lower bound of the per-run timeout derived from the baseline, seconds.
    #[arg(long, default_value_t = 10)]
    pub(crate) min_timeout: u64,
    /// Memory limit per test command, MiB.
    #[arg(long, default_value_t = 4096)]
    pub(crate) memory_limit: u64,
    /// Process limit per worker.
    #[arg(long, default_value_t = 512)]
    pub(crate) pids_limit: u64,
    /// Rules from DIR/<language>/*.yaml instead of the embedded ones.
    #[arg(long)]
    pub(crate) mutators: Option<PathBuf>,
    /// Only the named seeds (repeat the flag or separate names with commas).
    #[arg(long = "only", value_delimiter = ',')]
    pub(crate) only: Vec<String>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Do not synthesize tests for survivors (Python): they stay `not-killed`/`not-covered`.
    #[arg(long)]
    pub(crate) no_synthesis: bool,
    /// Wall seconds test synthesis may spend per seed; survivors past it keep their verdict
    /// (synthesis status `over-budget`, counted in the summary's `synthesis`). 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = swe_forge::pipeline::SYNTHESIS_BUDGET_S)]
    pub(crate) synthesis_budget: u64,
    /// For a survivor whose recorded reaching calls all behave the same on both versions, go
    /// on searching for a distinguishing input (Hypothesis, then CrossHair: up to about 20 s
    /// each) instead of rejecting it as `likely-equivalent` after the replay. Finds a few
    /// more tasks at several times the synthesis time (BENCHMARKS.md, "Synthesis that gives
    /// up early").
    #[arg(long)]
    pub(crate) deep_synthesis: bool,
    /// The most the clean-suite tracer may cost per seed, in plain suites by wall: its
    /// top-up runs stop short of it (the whole-suite run is always made).
    #[arg(long, value_name = "FACTOR", default_value_t = swe_forge::pipeline::TRACE_FACTOR)]
    pub(crate) tracer_budget: f64,
    /// Leave the FAIL_TO_PASS tests' files in the agent's start state (an easier variant;
    /// recorded as `metadata.start_state.hidden_tests: visible`). By default they are removed
    /// and `test_patch` restores them at grading time.
    #[arg(long)]
    pub(crate) visible_tests: bool,
    /// Docker sandbox: do not build the accepted tasks' images after each seed. The records
    /// name them all the same (a task image's tag follows from its repository image and start
    /// state); `swe-forge image tasks OUT/tasks.jsonl` builds them later.
    #[arg(long)]
    pub(crate) no_task_images: bool,
    /// Rewrite the issue texts of accepted tasks with a language model behind this
    /// OpenAI-compatible API (base URL, e.g. http://127.0.0.1:8000/v1). A bearer token is read
    /// from SWE_FORGE_ISSUE_LLM_KEY. A rewrite that fails or leaks keeps the template text.
    #[arg(long, value_name = "URL", value_parser = parse_llm_url)]
    pub(crate) issue_llm: Option<swe_forge::issue_llm::Endpoint>,
    /// The model for --issue-llm (default: the first the endpoint lists).
    #[arg(long, value_name = "NAME", requires = "issue_llm")]
    pub(crate) issue_llm_model: Option<String>,
    /// Timeout of one --issue-llm request, seconds.
    #[arg(long, value_name = "S", default_value_t = 60, requires = "issue_llm")]
    pub(crate) issue_llm_timeout: u64,
}

fn parse_llm_url(s: &str) -> Result<swe_forge::issue_llm::Endpoint, String> {
    swe_forge::issue_llm::parse_endpoint(s).map_err(|e| e.to_string())
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
