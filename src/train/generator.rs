//! The generator beside training: multi-bug tasks combined from accepted ones, verified in
//! the sandbox, and handed to the trainer while it runs, at the depth the curriculum's plan asks.

use super::reward::{RewardConfig, RewardEnv};
use crate::curriculum::{combine_task, plan_combinations, verify_combined, GenerationPlan, Level};
use crate::task::Task;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The generator thread: while the plan gives the multi-bug level a share, combine accepted
/// tasks of the same file (depth by the plan's mix), verify each combination three times in
/// the sandbox, and send the verified ones to the trainer.
pub fn generate(
    singles: Vec<Task>,
    mut known: std::collections::BTreeSet<String>,
    reward_cfg: RewardConfig,
    plan: Arc<Mutex<GenerationPlan>>,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Task>,
    seed: u64,
) {
    let mut env = match RewardEnv::open(reward_cfg) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!("the generator cannot open a sandbox: {e}");
            return;
        }
    };
    let mut proposals: BTreeMap<usize, Vec<Vec<usize>>> = BTreeMap::new();
    for depth in [2usize, 3] {
        let combos: Vec<Vec<usize>> = plan_combinations(&singles, depth, 8)
            .into_iter()
            .map(|c| c.members)
            .filter(|m| m.len() == depth)
            .collect();
        proposals.insert(depth, combos);
    }
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6e6e);
    let stopped = || stop.load(Ordering::Relaxed);
    while !stopped() {
        let p = plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let multi_share = p.levels.get(&Level::Multi).copied().unwrap_or(0.0);
        if multi_share <= 0.0 {
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        // Depth by the plan's mix.
        let w2 = p.multi_depth.get(&2).copied().unwrap_or(1.0);
        let w3 = p.multi_depth.get(&3).copied().unwrap_or(0.0);
        let depth = if rng.random::<f64>() * (w2 + w3) < w2 {
            2
        } else {
            3
        };
        let Some(list) = proposals.get_mut(&depth).filter(|l| !l.is_empty()) else {
            if proposals.values().all(|l| l.is_empty()) {
                tracing::info!("the generator has no more combinations to try");
                return;
            }
            continue;
        };
        let members = list.remove(rng.random_range(0..list.len()));
        let refs: Vec<&Task> = members.iter().map(|&i| &singles[i]).collect();
        let clean = match env.clean_file(refs[0]) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("generator: {e}");
                continue;
            }
        };
        let task = match combine_task(&refs, &clean) {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!("generator: combination refused: {e}");
                continue;
            }
        };
        if !known.insert(task.instance_id.clone()) {
            continue;
        }
        match verify_combined(&mut env, &task) {
            Ok(true) => {
                if tx.send(task).is_err() {
                    return;
                }
            }
            Ok(false) => {
                tracing::info!(task = %task.instance_id, "generated combination did not verify")
            }
            Err(e) => tracing::warn!(task = %task.instance_id, "generator: {e}"),
        }
    }
}

/// What the engine side of the generator needs: where the seeds are, and how many new
/// candidates a round verifies.
#[derive(Clone, Debug)]
pub struct EngineGen {
    /// Seed manifest; `None`: the embedded demo seeds.
    pub manifest: Option<std::path::PathBuf>,
    /// The seeds the training tasks came from.
    pub seeds: Vec<String>,
    /// The engine's output directory (its state store makes later rounds skip decided
    /// candidates).
    pub out: std::path::PathBuf,
    pub cache: std::path::PathBuf,
    pub sandbox: crate::sandbox::SandboxChoice,
    /// New candidates per round.
    pub batch: usize,
}

/// The seed name of a task (`<seed>__<mutator>__<id>`).
pub fn seed_of(task: &Task) -> Option<&str> {
    task.instance_id
        .split_once("__")
        .map(|(seed, _)| seed)
        .filter(|s| !s.is_empty())
}

/// The engine side of the generator: rounds of `swe-forge run` on the training tasks' seeds,
/// each drawing `batch` new candidates in the plan's current category mix (categories the
/// policy solves near the target weigh most), verified like any run; accepted tasks not seen
/// before go to the trainer. Stops when told, or when a round finds nothing new to try.
pub fn generate_single(
    cfg: EngineGen,
    mut known: std::collections::BTreeSet<String>,
    plan: Arc<Mutex<GenerationPlan>>,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Task>,
    seed: u64,
) {
    use crate::pipeline::{self, RunConfig};
    let stopped = || stop.load(Ordering::Relaxed);
    let mut decided = 0usize;
    for round in 0u64.. {
        if stopped() {
            return;
        }
        let mix = plan
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .categories
            .clone();
        if !mix.values().any(|w| *w > 0.0) {
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        let run = RunConfig {
            manifest: cfg.manifest.clone(),
            out: cfg.out.clone(),
            cache: cfg.cache.clone(),
            sandbox: cfg.sandbox,
            jobs: 1,
            budget: crate::candidate::Budget {
                seed: seed ^ round.wrapping_mul(0x9e37_79b9),
                max_total: Some(cfg.batch),
                max_per_function: Some(4),
                max_per_mutator: None,
                category_mix: mix.clone(),
            },
            baseline: Default::default(),
            verify: Default::default(),
            limits: Default::default(),
            mutators_dir: None,
            only: cfg.seeds.clone(),
            candidates_file: None,
            progress: false,
            synthesize: true,
            deep_synthesis: false,
            tracer_budget: crate::pipeline::TRACE_FACTOR,
            synthesis_budget: Some(Duration::from_secs(crate::pipeline::SYNTHESIS_BUDGET_S)),
            issue_llm: None,
            undecided_only: true,
            shard: None,
            visible_tests: false,
            // Training grades in the repository image; the task images are for harnesses.
            task_images: false,
            peer: false,
            runner: Default::default(),
        };
        tracing::info!(round, ?mix, "generator: an engine round on {:?}", cfg.seeds);
        let summary = match pipeline::run(&run) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("generator: the engine round failed: {e}");
                return;
            }
        };
        let before = decided;
        decided = summary.seeds.iter().map(|s| s.decided).sum();
        let path = cfg.out.join("tasks.jsonl");
        let tasks = match super::trainer::read_tasks(&path) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("generator: {e}");
                return;
            }
        };
        let mut sent = 0usize;
        for t in tasks {
            if known.insert(t.instance_id.clone()) {
                sent += 1;
                if tx.send(t).is_err() {
                    return;
                }
            }
        }
        tracing::info!(
            round,
            new_decided = decided - before,
            sent,
            "generator: engine round done"
        );
        if decided == before {
            tracing::info!("the generator's engine side found no new candidate to try");
            return;
        }
    }
}
