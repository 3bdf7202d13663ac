//! Curriculum: difficulty levels and buckets, policy pass rates per task and per bucket,
//! which tasks to serve next (learnability plus staleness), which tasks to generate next
//! (a category and level mix that follows the policy), and multi-bug combinations.
//!
//! **Levels** (ordered): `easy`, `medium`, `hard` for single-bug tasks, from the task's first
//! difficulty score (`metadata.difficulty.score`: few killing tests, a large enclosing function
//! and subtle categories score higher) raised by 0.1 when the tests are synthesized and do not
//! call the mutated function directly (the bug is reached through a caller): below 0.45 easy,
//! below 0.55 medium, else hard (27 tasks of the demo seed score 0.23–0.73; these cuts make
//! 3 of them easy, 13 medium, 11 hard). `multi` is every task that combines 2 or 3 bugs (its
//! `metadata.mutators` has one entry per bug; the depth is that count).
//!
//! **Buckets**: category × level (`operator/easy`); multi-bug tasks are bucketed by depth
//! (`multi-2/multi`, `multi-3/multi`).
//!
//! **Pass rates**: per task and per bucket, attempts, successes (reward 1) and an exponential
//! moving average of the pass rate of each group of attempts (`alpha` per task,
//! `bucket_alpha` per bucket).
//!
//! **Sampling weight** of a task: `p(1−p) + staleness · min(1, steps since served /
//! stale_after)`, where `p` is the task's EMA shrunk towards its bucket's EMA while the task has
//! few attempts (`(n·p_task + shrink·p_bucket) / (n + shrink)`), and an unseen task is
//! optimistic: `p = prior` (0.5, the most learnable). A never-served task has full staleness.
//! [`Sampling::Uniform`] ignores the weights (the ablation).
//!
//! The state is plain data (serde): save it with the training checkpoint and
//! [`Curriculum::resume`] it on the same or a changed task list.

mod combine;
mod plan;
#[cfg(test)]
mod tests;

pub use combine::{
    combine_patches, combine_task, plan_combinations, verify_combined, Combination, CombineError,
    CombinedPatches,
};
pub use plan::GenerationPlan;

use crate::task::{Difficulty, Task};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Ordered difficulty levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Easy,
    Medium,
    Hard,
    Multi,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Easy, Level::Medium, Level::Hard, Level::Multi];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::Multi => "multi",
        }
    }

    /// The level of a task (see the module documentation).
    pub fn of(task: &Task) -> Level {
        if task.metadata.mutators.len() >= 2 {
            return Level::Multi;
        }
        Level::of_difficulty(&task.metadata.difficulty)
    }

    /// The level of a single-bug task from its difficulty features.
    pub fn of_difficulty(d: &Difficulty) -> Level {
        let mut s = d.score;
        if d.synthesized_tests && !d.direct_call {
            s += 0.1;
        }
        if s < 0.45 {
            Level::Easy
        } else if s < 0.55 {
            Level::Medium
        } else {
            Level::Hard
        }
    }
}

/// What the curriculum knows of a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub instance_id: String,
    /// The mutator category (`multi-2`, `multi-3` for combined tasks).
    pub category: String,
    pub level: Level,
}

impl TaskInfo {
    pub fn of(task: &Task) -> TaskInfo {
        let level = Level::of(task);
        let category = if level == Level::Multi {
            format!("multi-{}", task.metadata.mutators.len())
        } else {
            task.metadata.category.clone()
        };
        TaskInfo {
            instance_id: task.instance_id.clone(),
            category,
            level,
        }
    }

    /// `category/level`.
    pub fn bucket(&self) -> String {
        format!("{}/{}", self.category, self.level.as_str())
    }
}

/// Attempts and pass rate of a task or a bucket.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub attempts: u64,
    pub successes: u64,
    /// EMA of the pass rate of each group of attempts; `None` before the first.
    pub ema: Option<f64>,
    /// The step it was last served at (tasks only).
    pub last_served: Option<u64>,
}

impl Stats {
    fn record(&mut self, successes: u64, attempts: u64, alpha: f64) {
        if attempts == 0 {
            return;
        }
        let rate = successes as f64 / attempts as f64;
        self.attempts += attempts;
        self.successes += successes;
        self.ema = Some(match self.ema {
            None => rate,
            Some(e) => e + alpha * (rate - e),
        });
    }
}

/// How tasks are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sampling {
    /// By learnability and staleness.
    #[default]
    Curriculum,
    /// Uniformly at random (the ablation).
    Uniform,
}

/// The knobs (defaults in [`CurriculumConfig::default`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurriculumConfig {
    pub sampling: Sampling,
    /// EMA rate of a task's pass rate (per group of attempts).
    pub alpha: f64,
    /// EMA rate of a bucket's pass rate.
    pub bucket_alpha: f64,
    /// The pass rate assumed for an unseen task or bucket.
    pub prior: f64,
    /// How many attempts the bucket's pass rate counts for when shrinking a task's.
    pub shrink: f64,
    /// Weight of the staleness term at its full value.
    pub staleness: f64,
    /// Steps after which the staleness term is full.
    pub stale_after: f64,
}

impl Default for CurriculumConfig {
    fn default() -> Self {
        CurriculumConfig {
            sampling: Sampling::Curriculum,
            alpha: 0.3,
            bucket_alpha: 0.1,
            prior: 0.5,
            shrink: 4.0,
            staleness: 0.05,
            stale_after: 100.0,
        }
    }
}

/// A task counts as solved in an attempt when its reward is (at least) 1.
fn is_success(r: f32) -> bool {
    r >= 1.0 - 1e-6
}

/// No weight is below this, so that every task can be drawn.
const MIN_WEIGHT: f64 = 1e-9;

/// The curriculum's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curriculum {
    pub config: CurriculumConfig,
    /// Calls of [`Curriculum::sample`] so far.
    step: u64,
    tasks: Vec<TaskInfo>,
    task_stats: Vec<Stats>,
    /// By bucket key.
    buckets: BTreeMap<String, Stats>,
}

impl Curriculum {
    pub fn new(tasks: Vec<TaskInfo>, config: CurriculumConfig) -> Curriculum {
        let task_stats = vec![Stats::default(); tasks.len()];
        Curriculum {
            config,
            step: 0,
            tasks,
            task_stats,
            buckets: BTreeMap::new(),
        }
    }

    pub fn from_tasks(tasks: &[Task], config: CurriculumConfig) -> Curriculum {
        Curriculum::new(tasks.iter().map(TaskInfo::of).collect(), config)
    }

    /// Continue a saved state on `tasks` (which may differ from the saved list): a task keeps
    /// its stats when its instance id is in the saved state; buckets and the step carry over.
    pub fn resume(saved: Curriculum, tasks: Vec<TaskInfo>) -> Curriculum {
        let known: BTreeMap<&str, &Stats> = saved
            .tasks
            .iter()
            .zip(&saved.task_stats)
            .map(|(t, s)| (t.instance_id.as_str(), s))
            .collect();
        let task_stats = tasks
            .iter()
            .map(|t| {
                known
                    .get(t.instance_id.as_str())
                    .map_or_else(Stats::default, |s| (*s).clone())
            })
            .collect();
        Curriculum {
            config: saved.config.clone(),
            step: saved.step,
            tasks,
            task_stats,
            buckets: saved.buckets.clone(),
        }
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn step(&self) -> u64 {
        self.step
    }

    pub fn tasks(&self) -> &[TaskInfo] {
        &self.tasks
    }

    pub fn task_stats(&self, i: usize) -> &Stats {
        &self.task_stats[i]
    }

    /// Buckets with their stats, by key.
    pub fn buckets(&self) -> &BTreeMap<String, Stats> {
        &self.buckets
    }

    /// The pass rate the weight of task `i` uses (see the module documentation); `None` for an
    /// unseen task.
    pub fn pass_rate(&self, i: usize) -> Option<f64> {
        let s = &self.task_stats[i];
        let p = s.ema?;
        let n = s.attempts as f64;
        let k = self.config.shrink.max(0.0);
        let pb = self
            .buckets
            .get(&self.tasks[i].bucket())
            .and_then(|b| b.ema)
            .unwrap_or(self.config.prior);
        Some((n * p + k * pb) / (n + k))
    }

    /// The sampling weight of task `i` at the current step.
    pub fn weight(&self, i: usize) -> f64 {
        let p = self.pass_rate(i).unwrap_or(self.config.prior);
        let learnability = p * (1.0 - p);
        let stale = match self.task_stats[i].last_served {
            None => 1.0,
            Some(at) => {
                let since = self.step.saturating_sub(at) as f64;
                (since / self.config.stale_after.max(1.0)).min(1.0)
            }
        };
        (learnability + self.config.staleness * stale).max(MIN_WEIGHT)
    }

    pub fn weights(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.weight(i)).collect()
    }

    /// Choose `n` task indices for the next step (distinct while `n` does not exceed the
    /// number of tasks), by weight or uniformly per [`CurriculumConfig::sampling`]; marks them
    /// served and advances the step.
    pub fn sample<R: Rng + ?Sized>(&mut self, n: usize, rng: &mut R) -> Vec<usize> {
        if self.tasks.is_empty() || n == 0 {
            return Vec::new();
        }
        self.step += 1;
        let len = self.len();
        let weights = self.weights();
        let distinct = n.min(len);
        let mut chosen: Vec<usize> = match self.config.sampling {
            Sampling::Uniform => rand::seq::index::sample(rng, len, distinct).into_vec(),
            Sampling::Curriculum => {
                rand::seq::index::sample_weighted(rng, len, |i| weights[i], distinct)
                    .map(|v| v.into_vec())
                    // Weights are finite and positive; fall back to uniform should one not be.
                    .unwrap_or_else(|_| rand::seq::index::sample(rng, len, distinct).into_vec())
            }
        };
        chosen.sort_unstable();
        // More than the task list: the rest with replacement.
        let total: f64 = weights.iter().sum();
        while chosen.len() < n {
            let i = match self.config.sampling {
                Sampling::Uniform => rng.random_range(0..len),
                Sampling::Curriculum => {
                    let mut x = rng.random::<f64>() * total;
                    weights
                        .iter()
                        .position(|w| {
                            x -= w;
                            x < 0.0
                        })
                        .unwrap_or(len - 1)
                }
            };
            chosen.push(i);
        }
        for &i in &chosen {
            self.task_stats[i].last_served = Some(self.step);
        }
        chosen
    }

    /// Record the rewards of a group of attempts at task `i` (success: reward 1).
    pub fn update(&mut self, i: usize, rewards: &[f32]) {
        let successes = rewards.iter().filter(|r| is_success(**r)).count() as u64;
        let attempts = rewards.len() as u64;
        self.task_stats[i].record(successes, attempts, self.config.alpha);
        self.buckets
            .entry(self.tasks[i].bucket())
            .or_default()
            .record(successes, attempts, self.config.bucket_alpha);
    }

    /// The pass rate of a level: the buckets' EMAs of that level, weighted by attempts; `None`
    /// when no task of the level has been attempted.
    pub fn level_pass_rate(&self, level: Level) -> Option<f64> {
        self.rate_where(|key| key.ends_with(&format!("/{}", level.as_str())))
    }

    fn rate_where(&self, select: impl Fn(&str) -> bool) -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0.0);
        for (key, s) in &self.buckets {
            if let (true, Some(e)) = (select(key), s.ema) {
                sum += e * s.attempts as f64;
                n += s.attempts as f64;
            }
        }
        (n > 0.0).then(|| sum / n)
    }
}
