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
