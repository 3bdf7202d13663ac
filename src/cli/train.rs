//! `train`: a policy trained on tasks with verified rewards.

use super::args::TrainArgs;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// `train`.
pub(crate) fn train(a: TrainArgs, cache: PathBuf, quiet: bool) -> Result<i32> {
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
    cfg.curriculum.sampling = trainer::sampling_from_str(&a.sampling).expect("checked by clap");
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
    cfg.progress = !a.json && !quiet;
    let summary =
        trainer::train(&cfg).with_context(|| format!("training on {}", cfg.tasks.display()))?;
    if a.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{:.0}%", v * 100.0));
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
