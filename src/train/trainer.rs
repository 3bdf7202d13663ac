//! `swe-forge train`: the loop that ties the policy, the verified rewards and the curriculum
//! together — an optional supervised warm-start on gold edits, then GRPO steps, with a
//! metrics line per step, checkpoints and `--resume`, and tasks generated and verified
//! while training runs (multi-bug combinations, and single-bug ones in the plan's category
//! mix).

use super::episode::{build_prompt, gold_edit, PromptConfig};
use super::grpo::{self, Group, GrpoConfig, Rollout};
use super::reward::{Outcome, RewardConfig, RewardEnv, RewardError};
use super::{tokenizer, OptimizerConfig, Policy, TrainError};
use crate::curriculum::{Curriculum, CurriculumConfig, Level, Sampling, TaskInfo};
use crate::task::Task;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Everything `train` needs.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub tasks: PathBuf,
    pub out: PathBuf,
    /// A Hugging Face directory to start from; `None`: the small model with a tokenizer
    /// trained on the tasks' prompts and gold edits.
    pub model: Option<PathBuf>,
    pub seed: u64,
    /// GRPO steps.
    pub steps: usize,
    /// Stop once this many rollouts have been graded (the ablation's budget).
    pub rollout_budget: Option<usize>,
    /// Stop after this much wall time (warm-start included).
    pub time_budget: Option<Duration>,
    /// Samples per task (G).
    pub group: usize,
    /// Tasks per step.
    pub tasks_per_step: usize,
    /// Times a group with no signal is replaced by another task, per slot.
    pub max_refill: usize,
    pub max_new: usize,
    pub temperature: f64,
    pub lr: f64,
    /// Gradient steps per batch of groups (μ): the first at ratio 1, the later ones against
    /// the log-probs the batch was sampled with, clipped.
    pub updates: usize,
    pub max_grad_norm: f64,
    /// Supervised steps on gold edits before RL (0: none).
    pub warm_start: usize,
    pub warm_start_lr: f64,
    pub curriculum: CurriculumConfig,
    pub target: f64,
    pub grpo: GrpoConfig,
    pub resume: bool,
    pub checkpoint_every: usize,
    pub prompt: PromptConfig,
    pub reward: RewardConfig,
    /// Generate and verify tasks while training runs: multi-bug combinations, and (with
    /// `generate_batch` > 0) single-bug tasks from the training tasks' seeds in the plan's
    /// category mix.
    pub generate: bool,
    /// The seed manifest the engine side reads (`None`: the embedded demo seeds).
    pub generate_manifest: Option<PathBuf>,
    /// New candidates per engine round (0: the engine side is off).
    pub generate_batch: usize,
    /// Train on a deterministic sample of this many of the tasks (by `--seed`).
    pub limit_tasks: Option<usize>,
    /// Evaluate every this many GRPO steps (and before the first and after the last): the
    /// pass rate over every training task, `eval_samples` samples each (0: never).
    pub eval_every: usize,
    pub eval_samples: usize,
    /// The same every this many warm-start steps (`eval-sft` lines; 0: never).
    pub warm_eval_every: usize,
    pub vocab_size: usize,
    pub progress: bool,
}

impl TrainConfig {
    /// Defaults for a CPU run on `tasks`, writing to `out`.
    pub fn new(tasks: PathBuf, out: PathBuf, cache: PathBuf) -> TrainConfig {
        let reward = RewardConfig::new(out.join("rewards.db"), cache);
        TrainConfig {
            tasks,
            out,
            model: None,
            seed: 0,
            steps: 50,
            rollout_budget: None,
            time_budget: None,
            group: 8,
            tasks_per_step: 4,
            max_refill: 2,
            max_new: 96,
            temperature: 1.0,
            lr: 3e-4,
            updates: 1,
            max_grad_norm: 1.0,
            warm_start: 0,
            warm_start_lr: 1e-3,
            curriculum: CurriculumConfig::default(),
            target: 0.5,
            grpo: GrpoConfig::default(),
            resume: false,
            checkpoint_every: 10,
            prompt: PromptConfig {
                context_lines: 2,
                max_code_chars: 1200,
                max_issue_chars: 600,
            },
            reward,
            generate: false,
            generate_manifest: None,
            generate_batch: 12,
            limit_tasks: None,
            eval_every: 0,
            eval_samples: 4,
            warm_eval_every: 0,
            vocab_size: 1024,
            progress: true,
        }
    }
}

/// Why training stopped or could not start.
#[derive(Debug, thiserror::Error)]
pub enum TrainLoopError {
    #[error(transparent)]
    Model(#[from] TrainError),
    #[error(transparent)]
    Reward(#[from] RewardError),
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error("{0}")]
    Input(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TrainLoopError + '_ {
    move |error| TrainLoopError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// One line of `metrics.jsonl`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Metrics {
    pub step: usize,
    /// `sft` (warm-start) or `grpo`.
    pub phase: String,
    pub seconds: f64,
    pub loss: Option<f64>,
    pub grad_norm: Option<f64>,
    /// Rollouts graded this step.
    pub rollouts: usize,
    pub rollouts_total: usize,
    pub reward_mean: Option<f64>,
    /// Share of this step's rollouts with reward 1.
    pub pass_rate: Option<f64>,
    /// Groups sampled this step (kept and dropped).
    pub groups: usize,
    /// Share of those whose rewards were not all equal.
    pub signal_share: Option<f64>,
    /// Share of the tasks served this step above the easy level.
    pub harder_share: Option<f64>,
    /// Served tasks by level.
    pub served: BTreeMap<String, usize>,
    /// EMA pass rate per bucket (category/level), after this step.
    pub buckets: BTreeMap<String, f64>,
    /// Outcomes of this step's rollouts.
    pub outcomes: BTreeMap<String, usize>,
    /// Completion tokens sampled plus trained per second of this step.
    pub tokens_per_s: Option<f64>,
    /// Rewards served from the cache this step.
    pub cached: usize,
    /// With several updates per batch: the share of completion tokens whose ratio was
    /// clipped in the last update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipped: Option<f64>,
    /// With `--kl-coef`: the mean per-token KL estimate to the reference policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl: Option<f64>,
    /// Tasks in the pool (generated ones included).
    pub tasks: usize,
    /// The generator's level mix after this step.
    pub plan_levels: BTreeMap<String, f64>,
    /// The generator's category mix (single-bug tasks) after this step.
    #[serde(default)]
    pub plan_categories: BTreeMap<String, f64>,
}

/// The state `--resume` restores besides the weights.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct TrainerState {
    warm_steps_done: usize,
    steps_done: usize,
    rollouts_total: usize,
    curriculum: Curriculum,
    /// Tasks generated so far, multi-bug and single-bug (their records).
    generated: Vec<Task>,
    seed: u64,
}

/// What a finished run reports.
#[derive(Clone, Debug, Serialize)]
pub struct TrainSummary {
    pub out: PathBuf,
    pub parameters: usize,
    pub tasks: usize,
    pub skipped_tasks: Vec<(String, String)>,
    pub warm_steps: usize,
    pub steps: usize,
    pub rollouts: usize,
    pub seconds: f64,
    /// Pass rate over the first and the last quarter of this run's GRPO rollouts.
    pub first_pass_rate: Option<f64>,
    pub last_pass_rate: Option<f64>,
    /// Evaluations over every training task: (GRPO step, pass rate).
    pub evals: Vec<(usize, f64)>,
    pub mean_reward: Option<f64>,
    /// Share of groups with a learning signal.
    pub signal_share: Option<f64>,
    pub generated: usize,
    pub checkpoint: PathBuf,
    pub metrics: PathBuf,
}

/// A task ready for episodes.
struct Episode {
    task: Task,
    prompt: Vec<u32>,
    gold: Vec<u32>,
}

/// Read tasks.jsonl; bad lines are skipped with a warning.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>, TrainLoopError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Task>(line) {
            Ok(t) => out.push(t),
            Err(e) => {
                tracing::warn!(file = %path.display(), line = i + 1, "not a task record: {e}")
            }
        }
    }
    Ok(out)
}

/// Train; see the module docs.
pub fn train(cfg: &TrainConfig) -> Result<TrainSummary, TrainLoopError> {
    let started = Instant::now();
    let out = &cfg.out;
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let checkpoint = out.join("checkpoint");
    let state_path = checkpoint.join("trainer.json");
    let metrics_path = out.join("metrics.jsonl");
    let mut tasks = read_tasks(&cfg.tasks)?;
    if let Some(n) = cfg.limit_tasks {
        let keys: Vec<String> = tasks.iter().map(|t| t.instance_id.clone()).collect();
        let keep: std::collections::BTreeSet<usize> = crate::audit::sample(&keys, n, cfg.seed)
            .into_iter()
            .collect();
        tasks = tasks
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, t)| t)
            .collect();
    }
    if tasks.is_empty() {
        return Err(TrainLoopError::Input(format!(
            "{}: no tasks to train on",
            cfg.tasks.display()
        )));
    }
    let saved: Option<TrainerState> = if cfg.resume && state_path.is_file() {
        let text = std::fs::read_to_string(&state_path).map_err(io_err(&state_path))?;
        Some(
            serde_json::from_str(&text)
                .map_err(|e| TrainLoopError::Input(format!("{}: {e}", state_path.display())))?,
        )
    } else {
        None
    };
    let mut all_tasks = tasks;
    if let Some(s) = &saved {
        all_tasks.extend(s.generated.iter().cloned());
    }
    let mut env = RewardEnv::open(cfg.reward.clone())?;

    // Prompts and gold edits (text first: the small model's tokenizer is trained on them).
    let mut texts: Vec<(Task, String, String)> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for t in all_tasks {
        match episode_text(&mut env, &t, &cfg.prompt) {
            Ok((p, g)) => texts.push((t, p, g)),
            Err(why) => {
                tracing::warn!(task = %t.instance_id, "skipped: {why}");
                skipped.push((t.instance_id.clone(), why));
            }
        }
    }
    if texts.is_empty() {
        return Err(TrainLoopError::Input(
            "no task could be made into an episode".into(),
        ));
    }
    let device = super::default_device()?;
    let policy = if saved.is_some() && checkpoint.join("config.json").is_file() {
        Policy::from_hf_dir(&checkpoint, &device)?
    } else if let Some(dir) = &cfg.model {
        Policy::from_hf_dir(dir, &device)?
    } else {
        let corpus: Vec<&str> = texts
            .iter()
            .flat_map(|(_, p, g)| [p.as_str(), g.as_str()])
            .collect();
        let tok = tokenizer::train_bpe(corpus.into_iter(), cfg.vocab_size)?;
        Policy::small(cfg.seed, tok, &device)?
    };
    let limit = policy.config().max_position_embeddings;
    let mut episodes: Vec<Episode> = Vec::new();
    for (task, p, g) in texts {
        match make_episode(&policy, task, &p, &g, limit, cfg.max_new) {
            Ok(e) => episodes.push(e),
            Err((id, why)) => {
                tracing::warn!(task = %id, "skipped: {why}");
                skipped.push((id, why));
            }
        }
    }
    if episodes.is_empty() {
        return Err(TrainLoopError::Input(
            "every task's prompt is longer than the model allows".into(),
        ));
    }
    let infos: Vec<TaskInfo> = episodes.iter().map(|e| TaskInfo::of(&e.task)).collect();
    let mut curriculum = match &saved {
        Some(s) => Curriculum::resume(s.curriculum.clone(), infos),
        None => Curriculum::new(infos, cfg.curriculum.clone()),
    };
    curriculum.config.sampling = cfg.curriculum.sampling;
    let mut state = saved.unwrap_or(TrainerState {
        warm_steps_done: 0,
        steps_done: 0,
        rollouts_total: 0,
        curriculum: curriculum.clone(),
        generated: Vec::new(),
        seed: cfg.seed,
    });
    let mut rng = StdRng::seed_from_u64(
        cfg.seed ^ ((state.steps_done + state.warm_steps_done) as u64).wrapping_mul(0x9e37),
    );
    let mut metrics = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&metrics_path)
        .map_err(io_err(&metrics_path))?;
    if !cfg.resume {
        metrics.set_len(0).map_err(io_err(&metrics_path))?;
    }
    let deadline = cfg.time_budget.map(|b| started + b);
    let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);
    tracing::info!(
        parameters = policy.num_parameters(),
        tasks = episodes.len(),
        skipped = skipped.len(),
        "training"
    );

    let mut evals: Vec<(usize, f64)> = Vec::new();
    let mut eval_rng = StdRng::seed_from_u64(cfg.seed ^ 0xe7a1);
    let mut evaluate = |step: usize,
                        phase: &str,
                        policy: &Policy,
                        env: &mut RewardEnv,
                        episodes: &[Episode],
                        metrics: &mut std::fs::File|
     -> Result<(), TrainLoopError> {
        if cfg.eval_samples == 0 {
            return Ok(());
        }
        let t = Instant::now();
        let mut m = Metrics {
            step,
            phase: phase.into(),
            tasks: episodes.len(),
            ..Default::default()
        };
        let (mut passed, mut sum) = (0usize, 0f64);
        for e in episodes {
            let samples = policy.sample(
                &e.prompt,
                cfg.eval_samples,
                cfg.max_new,
                cfg.temperature,
                &mut eval_rng,
            )?;
            let edits = decode_edits(policy, &samples)?;
            for r in env.reward_many(&e.task, &edits)? {
                if matches!(r.outcome, Outcome::Environment(_)) {
                    continue;
                }
                *m.outcomes
                    .entry(r.outcome.as_str().to_string())
                    .or_default() += 1;
                m.rollouts += 1;
                m.cached += usize::from(r.cached);
                passed += usize::from(r.value >= 1.0);
                sum += r.value as f64;
            }
        }
        if m.rollouts > 0 {
            m.pass_rate = Some(passed as f64 / m.rollouts as f64);
            m.reward_mean = Some(sum / m.rollouts as f64);
            if phase == "eval" {
                evals.push((step, passed as f64 / m.rollouts as f64));
            }
        }
        m.seconds = t.elapsed().as_secs_f64();
        write_metrics(metrics, &metrics_path, &m)
    };
    // Warm-start: supervised steps on the gold edits.
    if state.warm_steps_done < cfg.warm_start {
        let mut opt = super::Optimizer::new(
            policy.trainable_vars(),
            &OptimizerConfig {
                lr: cfg.warm_start_lr,
                max_grad_norm: Some(cfg.max_grad_norm),
                ..OptimizerConfig::default()
            },
        )?;
        let pb = bar(
            cfg.progress,
            (cfg.warm_start - state.warm_steps_done) as u64,
            "warm-start",
        );
        while state.warm_steps_done < cfg.warm_start && !out_of_time() {
            let t = Instant::now();
            let batch: Vec<usize> = (0..cfg.tasks_per_step)
                .map(|_| rng.random_range(0..episodes.len()))
                .collect();
            let mut total: Option<candle_core::Tensor> = None;
            let mut tokens = 0usize;
            for &i in &batch {
                let e = &episodes[i];
                let l = policy.sft_loss(&e.prompt, &e.gold)?;
                tokens += e.gold.len();
                total = Some(match total {
                    None => l,
                    Some(s) => (s + l).map_err(TrainError::from)?,
                });
            }
            let loss = (total.expect("a non-empty batch") / batch.len() as f64)
                .map_err(TrainError::from)?;
            let loss_value = loss.to_scalar::<f32>().map_err(TrainError::from)? as f64;
            let stats = opt.step(&loss)?;
            state.warm_steps_done += 1;
            let secs = t.elapsed().as_secs_f64();
            write_metrics(
                &mut metrics,
                &metrics_path,
                &Metrics {
                    step: state.warm_steps_done,
                    phase: "sft".into(),
                    seconds: secs,
                    loss: Some(loss_value),
                    grad_norm: Some(stats.grad_norm as f64),
                    tokens_per_s: Some(tokens as f64 / secs.max(1e-9)),
                    tasks: episodes.len(),
                    ..Default::default()
                },
            )?;
            pb.set_message(format!("loss {loss_value:.3}"));
            pb.inc(1);
            if cfg.warm_eval_every > 0 && state.warm_steps_done % cfg.warm_eval_every == 0 {
                pb.suspend(|| {
                    evaluate(
                        state.warm_steps_done,
                        "eval-sft",
                        &policy,
                        &mut env,
                        &episodes,
                        &mut metrics,
                    )
                })?;
            }
        }
        pb.finish_and_clear();
        state.curriculum = curriculum.clone();
        save_checkpoint(&policy, &state, &checkpoint)?;
    }

    // The generator: multi-bug tasks, verified, while training runs.
    let plan = Arc::new(Mutex::new(curriculum.generation_plan(cfg.target)));
    let (gen_tx, gen_rx) = mpsc::channel::<Task>();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let generator = if cfg.generate {
        let singles: Vec<Task> = episodes
            .iter()
            .filter(|e| e.task.metadata.mutators.len() < 2)
            .map(|e| e.task.clone())
            .collect();
        let known: std::collections::BTreeSet<String> = episodes
            .iter()
            .map(|e| e.task.instance_id.clone())
            .collect();
        let mut reward_cfg = cfg.reward.clone();
        reward_cfg.workers = 1;
        let plan = Arc::clone(&plan);
        let stop = Arc::clone(&stop);
        let seed = cfg.seed;
        let engine = (cfg.generate_batch > 0).then(|| {
            let mut seeds: Vec<String> = singles
                .iter()
                .filter_map(|t| super::generator::seed_of(t).map(str::to_string))
                .collect();
            seeds.sort();
            seeds.dedup();
            let ecfg = super::generator::EngineGen {
                manifest: cfg.generate_manifest.clone(),
                seeds,
                out: out.join("engine"),
                cache: cfg.reward.cache.clone(),
                sandbox: cfg.reward.sandbox,
                batch: cfg.generate_batch,
            };
            let (known, plan, stop, tx) = (
                known.clone(),
                Arc::clone(&plan),
                Arc::clone(&stop),
                gen_tx.clone(),
            );
            std::thread::spawn(move || {
                super::generator::generate_single(ecfg, known, plan, stop, tx, seed)
            })
        });
        Some((
            std::thread::spawn(move || {
                super::generator::generate(singles, known, reward_cfg, plan, stop, gen_tx, seed)
            }),
            engine,
        ))
    } else {
        drop(gen_tx);
        None
    };

    // GRPO. With a KL term, the reference is the policy GRPO started from, kept in
    // OUT/reference so a resumed run measures the distance from the same place.
    let reference = if cfg.grpo.kl_coef > 0.0 && state.steps_done < cfg.steps {
        let dir = out.join("reference");
        if !dir.join("config.json").is_file() {
            policy.save_dir(&dir)?;
        }
        Some(Policy::from_hf_dir(&dir, &device)?)
    } else {
        None
    };
    let mut opt = super::Optimizer::new(
        policy.trainable_vars(),
        &OptimizerConfig {
            lr: cfg.lr,
            max_grad_norm: Some(cfg.max_grad_norm),
            ..OptimizerConfig::default()
        },
    )?;
    let budget_left = |s: &TrainerState| cfg.rollout_budget.is_none_or(|b| s.rollouts_total < b);
    let pb = bar(
        cfg.progress,
        cfg.steps.saturating_sub(state.steps_done) as u64,
        "grpo",
    );
    let first_step = state.steps_done;
    let mut run_points: Vec<(usize, usize, f64)> = Vec::new(); // (rollouts, passed, reward sum)
    let mut groups_seen = 0usize;
    let mut groups_signal = 0usize;
    if state.steps_done < cfg.steps && cfg.eval_every > 0 {
        evaluate(
            state.steps_done,
            "eval",
            &policy,
            &mut env,
            &episodes,
            &mut metrics,
        )?;
    }
    while state.steps_done < cfg.steps && budget_left(&state) && !out_of_time() {
        // New tasks from the generator join the pool.
        let mut added = false;
        while let Ok(t) = gen_rx.try_recv() {
            match episode_text(&mut env, &t, &cfg.prompt)
                .map_err(|why| (t.instance_id.clone(), why))
                .and_then(|(p, g)| make_episode(&policy, t.clone(), &p, &g, limit, cfg.max_new))
            {
                Ok(e) => {
                    tracing::info!(task = %e.task.instance_id, "a generated task joins the pool");
                    state.generated.push(e.task.clone());
                    episodes.push(e);
                    added = true;
                }
                Err((id, why)) => tracing::warn!(task = %id, "generated task skipped: {why}"),
            }
        }
        if added {
            let infos = episodes.iter().map(|e| TaskInfo::of(&e.task)).collect();
            curriculum = Curriculum::resume(curriculum, infos);
        }
        let t = Instant::now();
        let mut groups: Vec<Group> = Vec::new();
        let mut m = Metrics {
            step: state.steps_done + 1,
            phase: "grpo".into(),
            tasks: episodes.len(),
            ..Default::default()
        };
        let mut reward_sum = 0f64;
        let mut passed = 0usize;
        let mut sampled_tokens = 0usize;
        let mut harder = 0usize;
        let chosen = curriculum.sample(cfg.tasks_per_step, &mut rng);
        for first in chosen {
            let mut idx = first;
            for attempt in 0..=cfg.max_refill {
                if attempt > 0 {
                    idx = curriculum.sample(1, &mut rng)[0];
                }
                let e = &episodes[idx];
                let samples =
                    policy.sample(&e.prompt, cfg.group, cfg.max_new, cfg.temperature, &mut rng)?;
                let edits = decode_edits(&policy, &samples)?;
                let rewards = env.reward_many(&e.task, &edits)?;
                let mut values = Vec::new();
                let mut rollouts = Vec::new();
                for (s, r) in samples.iter().zip(&rewards) {
                    if let Outcome::Environment(detail) = &r.outcome {
                        tracing::warn!(task = %e.task.instance_id, "a rollout hit an environment failure: {detail}");
                        continue;
                    }
                    *m.outcomes
                        .entry(r.outcome.as_str().to_string())
                        .or_default() += 1;
                    m.cached += usize::from(r.cached);
                    values.push(r.value);
                    rollouts.push(Rollout {
                        tokens: s.tokens.clone(),
                        reward: r.value,
                    });
                    sampled_tokens += s.tokens.len();
                }
                curriculum.update(idx, &values);
                let level = TaskInfo::of(&e.task).level;
                *m.served.entry(level.as_str().to_string()).or_default() += 1;
                harder += usize::from(level > Level::Easy);
                m.groups += 1;
                m.rollouts += values.len();
                reward_sum += values.iter().map(|v| *v as f64).sum::<f64>();
                passed += values.iter().filter(|v| **v >= 1.0).count();
                let g = Group {
                    task: idx,
                    prompt: e.prompt.clone(),
                    rollouts,
                };
                if g.has_signal() {
                    groups.push(g);
                    break;
                }
            }
        }
        groups_seen += m.groups;
        groups_signal += groups.len();
        let mut trained_tokens = 0usize;
        if !groups.is_empty() {
            let updates = cfg.updates.max(1);
            let old = if updates > 1 {
                Some(grpo::old_logprobs(&policy, &groups)?)
            } else {
                None
            };
            let ref_logp = match &reference {
                Some(r) => Some(grpo::old_logprobs(r, &groups)?),
                None => None,
            };
            let mut clipped = 0f64;
            for u in 0..updates {
                let (loss, ls) = grpo::loss(
                    &policy,
                    &groups,
                    old.as_deref(),
                    ref_logp.as_deref(),
                    &cfg.grpo,
                )?;
                trained_tokens += ls.tokens;
                clipped = ls.clipped as f64;
                if u == 0 {
                    m.loss = Some(loss.to_scalar::<f32>().map_err(TrainError::from)? as f64);
                    m.kl = ls.kl.map(f64::from);
                }
                match opt.step(&loss) {
                    Ok(s) => {
                        if u == 0 {
                            m.grad_norm = Some(s.grad_norm as f64)
                        }
                    }
                    Err(TrainError::NonFinite(what)) => {
                        tracing::warn!(step = m.step, "non-finite {what}: update skipped");
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            m.clipped = (updates > 1).then_some(clipped);
        }
        state.steps_done += 1;
        state.rollouts_total += m.rollouts;
        m.rollouts_total = state.rollouts_total;
        m.seconds = t.elapsed().as_secs_f64();
        if m.rollouts > 0 {
            m.reward_mean = Some(reward_sum / m.rollouts as f64);
            m.pass_rate = Some(passed as f64 / m.rollouts as f64);
        }
        if m.groups > 0 {
            m.signal_share = Some(groups.len() as f64 / m.groups as f64);
            m.harder_share = Some(harder as f64 / m.groups as f64);
        }
        m.tokens_per_s = Some((sampled_tokens + trained_tokens) as f64 / m.seconds.max(1e-9));
        m.buckets = curriculum
            .buckets()
            .iter()
            .filter_map(|(k, s)| s.ema.map(|e| (k.clone(), e)))
            .collect();
        let p = curriculum.generation_plan(cfg.target);
        m.plan_levels = p
            .levels
            .iter()
            .map(|(l, w)| (l.as_str().to_string(), *w))
            .collect();
        m.plan_categories = p.categories.clone();
        *plan.lock().unwrap_or_else(|e| e.into_inner()) = p;
        run_points.push((m.rollouts, passed, reward_sum));
        write_metrics(&mut metrics, &metrics_path, &m)?;
        pb.set_message(format!(
            "pass {:.0}% · reward {:+.2} · {} rollouts",
            m.pass_rate.unwrap_or(0.0) * 100.0,
            m.reward_mean.unwrap_or(0.0),
            state.rollouts_total
        ));
        pb.inc(1);
        if cfg.eval_every > 0 && state.steps_done % cfg.eval_every == 0 {
            evaluate(
                state.steps_done,
                "eval",
                &policy,
                &mut env,
                &episodes,
                &mut metrics,
            )?;
        }
        if cfg.checkpoint_every > 0 && state.steps_done % cfg.checkpoint_every == 0 {
            state.curriculum = curriculum.clone();
            save_checkpoint(&policy, &state, &checkpoint)?;
        }
    }
    pb.finish_and_clear();
    if cfg.eval_every > 0 && state.steps_done > first_step && state.steps_done % cfg.eval_every != 0
    {
        evaluate(
            state.steps_done,
            "eval",
            &policy,
            &mut env,
            &episodes,
            &mut metrics,
        )?;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some((multi, engine)) = generator {
        let _ = multi.join();
        if let Some(h) = engine {
            // Interrupt an engine round in progress (between candidates), then clear the
            // flag for whatever runs next in this process.
            if !h.is_finished() {
                crate::pipeline::STOP.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = h.join();
                crate::pipeline::STOP.store(false, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
    state.curriculum = curriculum.clone();
    save_checkpoint(&policy, &state, &checkpoint)?;
    std::fs::write(
        out.join("curriculum.json"),
        serde_json::to_string_pretty(&curriculum).unwrap_or_default(),
    )
    .map_err(io_err(&out.join("curriculum.json")))?;

    let quarter = (run_points.len() / 4).max(1);
    let rate = |pts: &[(usize, usize, f64)]| {
        let n: usize = pts.iter().map(|p| p.0).sum();
        (n > 0).then(|| pts.iter().map(|p| p.1).sum::<usize>() as f64 / n as f64)
    };
    let n: usize = run_points.iter().map(|p| p.0).sum();
    Ok(TrainSummary {
        out: out.clone(),
        parameters: policy.num_parameters(),
        tasks: episodes.len(),
        skipped_tasks: skipped,
        warm_steps: state.warm_steps_done,
        steps: state.steps_done - first_step,
        rollouts: n,
        seconds: started.elapsed().as_secs_f64(),
        first_pass_rate: rate(&run_points[..quarter.min(run_points.len())]),
        last_pass_rate: rate(&run_points[run_points.len().saturating_sub(quarter)..]),
        evals,
        mean_reward: (n > 0).then(|| run_points.iter().map(|p| p.2).sum::<f64>() / n as f64),
        signal_share: (groups_seen > 0).then(|| groups_signal as f64 / groups_seen as f64),
        generated: state.generated.len(),
        checkpoint,
        metrics: metrics_path,
    })
}

/// The samples' texts, end-of-sequence tokens left out.
fn decode_edits(policy: &Policy, samples: &[super::Sample]) -> Result<Vec<String>, TrainError> {
    samples
        .iter()
        .map(|s| {
            let body: Vec<u32> = s
                .tokens
                .iter()
                .copied()
                .filter(|t| !policy.eos_ids().contains(t))
                .collect();
            policy.decode(&body)
        })
        .collect()
}

/// The prompt text and the gold edit text of a task.
fn episode_text(
    env: &mut RewardEnv,
    task: &Task,
    cfg: &PromptConfig,
) -> Result<(String, String), String> {
    let buggy = env.buggy_file(task).map_err(|e| e.to_string())?;
    let prompt = build_prompt(task, &buggy, cfg).map_err(|e| e.to_string())?;
    let gold = gold_edit(task, &buggy).map_err(|e| e.to_string())?;
    Ok((prompt.text, gold.render()))
}

fn make_episode(
    policy: &Policy,
    task: Task,
    prompt: &str,
    gold: &str,
    limit: usize,
    max_new: usize,
) -> Result<Episode, (String, String)> {
    let id = task.instance_id.clone();
    let p = policy
        .encode(prompt)
        .map_err(|e| (id.clone(), e.to_string()))?;
    let mut g = policy
        .encode(gold)
        .map_err(|e| (id.clone(), e.to_string()))?;
    g.push(policy.eos_id());
    if p.len() + max_new.max(g.len()) > limit {
        return Err((
            id,
            format!(
                "prompt of {} tokens + {} new is longer than the model's {limit}",
                p.len(),
                max_new.max(g.len())
            ),
        ));
    }
    Ok(Episode {
        task,
        prompt: p,
        gold: g,
    })
}

fn write_metrics(f: &mut std::fs::File, path: &Path, m: &Metrics) -> Result<(), TrainLoopError> {
    let line = serde_json::to_string(m).unwrap_or_default();
    writeln!(f, "{line}").map_err(io_err(path))
}

/// Weights, config and tokenizer (a Hugging Face directory) plus trainer.json, written to a
/// temporary directory and renamed over the previous checkpoint.
fn save_checkpoint(
    policy: &Policy,
    state: &TrainerState,
    dir: &Path,
) -> Result<(), TrainLoopError> {
    let tmp = dir.with_extension("tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
    policy.save_dir(&tmp)?;
    let json = serde_json::to_string(state).unwrap_or_default();
    std::fs::write(tmp.join("trainer.json"), json).map_err(io_err(&tmp))?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&tmp, dir).map_err(io_err(dir))?;
    Ok(())
}

fn bar(show: bool, len: u64, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{what} [{{bar:30}}] {{pos}}/{{len}} steps · {{msg}} · {{elapsed_precise}} (eta {{eta}})"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// Sampling by name, for the command line.
pub fn sampling_from_str(s: &str) -> Option<Sampling> {
    match s {
        "curriculum" => Some(Sampling::Curriculum),
        "uniform" => Some(Sampling::Uniform),
        _ => None,
    }
}
