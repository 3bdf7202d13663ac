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

use crate::task::{Difficulty, Evidence, Location, Task, TaskMetadata};
use crate::train::episode::{apply_changes, file_changes, patch_files, Change};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

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

    /// What to generate next: level shares, category weights and multi-bug depth shares that
    /// follow the policy's pass rates (see [`GenerationPlan`]).
    pub fn generation_plan(&self, target: f64) -> GenerationPlan {
        let target = target.clamp(0.01, 0.99);
        let closeness =
            |p: f64| (1.0 - (p - target).abs() / target.max(1.0 - target)).max(PLAN_FLOOR);
        let mut pass_rates = BTreeMap::new();
        let mut levels = BTreeMap::new();
        let mut carry = 0.0;
        for level in Level::ALL {
            let p = self.level_pass_rate(level);
            let mut mass = p.map_or(PLAN_EXPLORE, closeness) + carry;
            carry = 0.0;
            if let Some(p) = p {
                pass_rates.insert(level, p);
                if p > target && level != Level::Multi {
                    let moved = mass * ((p - target) / (1.0 - target)).min(1.0);
                    mass -= moved;
                    carry = moved;
                }
            }
            levels.insert(level, mass);
        }
        normalize(&mut levels);
        // Categories of single-bug tasks: each bucket's closeness to the target, weighted by
        // its level's share; unseen buckets explore.
        let mut categories: BTreeMap<String, f64> = BTreeMap::new();
        for t in self.tasks.iter().filter(|t| t.level != Level::Multi) {
            categories.entry(t.category.clone()).or_insert(0.0);
        }
        for (cat, w) in categories.iter_mut() {
            *w = Level::ALL[..3]
                .iter()
                .map(|l| {
                    let p = self
                        .buckets
                        .get(&format!("{cat}/{}", l.as_str()))
                        .and_then(|s| s.ema);
                    levels[l] * p.map_or(PLAN_EXPLORE.max(0.5), closeness)
                })
                .sum();
        }
        normalize(&mut categories);
        // Depth 3 takes over as depth 2 is solved above the target.
        let p2 = self.rate_where(|k| k.starts_with("multi-2/"));
        let deeper = p2.map_or(0.0, |p| ((p - target) / (1.0 - target)).clamp(0.0, 1.0));
        let three = PLAN_EXPLORE + (1.0 - PLAN_EXPLORE) * deeper;
        let multi_depth = BTreeMap::from([(2, 1.0 - three), (3, three)]);
        GenerationPlan {
            target,
            levels,
            categories,
            multi_depth,
            pass_rates,
        }
    }
}

/// The least share of a level or category whose pass rate is far from the target.
const PLAN_FLOOR: f64 = 0.05;
/// The weight of a level no task of which has been attempted yet.
const PLAN_EXPLORE: f64 = 0.1;

fn normalize<K>(m: &mut BTreeMap<K, f64>) {
    let total: f64 = m.values().sum();
    if total > 0.0 {
        m.values_mut().for_each(|v| *v /= total);
    }
}

/// What the generator should make next, from the policy's pass rates.
///
/// Level shares: each attempted level starts from its closeness to the target pass rate
/// (`1 − |p − target| / max(target, 1 − target)`, at least 0.05; an unattempted level 0.1);
/// walking from easy to hard, a level whose pass rate is above the target hands the share
/// `(p − target)/(1 − target)` of its weight to the next harder level (hard hands to multi).
/// Category weights: per category, the level shares times the closeness of its bucket of
/// that level (unattempted buckets 0.5). Multi-bug depth: depth 3 gets 0.1, rising to 1 as the
/// depth-2 pass rate goes from the target to 1. All three sum to 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationPlan {
    pub target: f64,
    pub levels: BTreeMap<Level, f64>,
    pub categories: BTreeMap<String, f64>,
    pub multi_depth: BTreeMap<usize, f64>,
    /// The level pass rates the plan was made from (attempted levels only).
    pub pass_rates: BTreeMap<Level, f64>,
}

impl GenerationPlan {
    /// The share of levels harder than `level`.
    pub fn share_above(&self, level: Level) -> f64 {
        self.levels
            .iter()
            .filter(|(l, _)| **l > level)
            .map(|(_, w)| w)
            .sum()
    }
}

// ---------------------------------------------------------------------------------------------
// Multi-bug combinations.

/// A proposed combination: indices into the task list, in instance-id order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Combination {
    pub members: Vec<usize>,
}

/// Why tasks cannot be combined.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CombineError {
    #[error("a combination needs 2 or 3 tasks, not {0}")]
    Size(usize),
    #[error("{0} is not in the same repository, commit and file as the first task")]
    NotSameFile(String),
    #[error("{instance_id}: {detail}")]
    Patch { instance_id: String, detail: String },
    #[error("the bugs overlap: {0}")]
    Overlap(String),
    #[error("the test patches change {0} differently")]
    TestPatchConflict(String),
    #[error("rendering the combined issue: {0}")]
    Issue(String),
}

/// The lines a single-bug task's bug patch changes in its file, as `[lo, hi)` line intervals
/// (an insertion counts as touching the line it goes before), or `None` when the task is not
/// a candidate for combining (several bugs already, or a bug patch beyond its file).
fn touched(task: &Task) -> Option<Vec<(usize, usize)>> {
    let file = &task.metadata.location.file;
    if task.metadata.mutators.len() != 1 || patch_files(&task.bug_patch).ok()? != [file.clone()] {
        return None;
    }
    let changes = file_changes(&task.bug_patch, file).ok()?;
    (!changes.is_empty()).then(|| {
        changes
            .iter()
            .map(|c| (c.old_start, c.old_end().max(c.old_start + 1)))
            .collect()
    })
}

/// Whether two tasks' bugs are at least one untouched line apart and their test patches can
/// be merged.
fn compatible(a: (&Task, &[(usize, usize)]), b: (&Task, &[(usize, usize)])) -> bool {
    let apart =
        a.1.iter()
            .all(|&(alo, ahi)| b.1.iter().all(|&(blo, bhi)| ahi < blo || bhi < alo));
    apart && merge_test_patches(&[a.0, b.0]).is_ok()
}

/// Propose multi-bug combinations: accepted single-bug tasks grouped by (repo, base_commit,
/// file), combined by 2 and (when `max_depth` is 3) by 3, whose bug patches touch lines at
/// least one line apart and whose test patches merge. Per group at most `max_per_group`,
/// chosen deterministically by a hash of the members' ids (so the cap does not always keep
/// the first tasks). Each proposal still has to be verified like any task.
pub fn plan_combinations(
    tasks: &[Task],
    max_depth: usize,
    max_per_group: usize,
) -> Vec<Combination> {
    // (repo, base_commit, file) → (task index, lines its bug touches).
    type Group = Vec<(usize, Vec<(usize, usize)>)>;
    let mut groups: BTreeMap<(&str, &str, &str), Group> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if let Some(lines) = touched(t) {
            groups
                .entry((&t.repo, t.clean_commit(), &t.metadata.location.file))
                .or_default()
                .push((i, lines));
        }
    }
    let mut out = Vec::new();
    for members in groups.values_mut() {
        members.sort_by(|a, b| tasks[a.0].instance_id.cmp(&tasks[b.0].instance_id));
        let m = members.len();
        let ok = |x: usize, y: usize| {
            compatible(
                (&tasks[members[x].0], &members[x].1),
                (&tasks[members[y].0], &members[y].1),
            )
        };
        // pair[x][y] (x < y): members x and y combine.
        let pair: Vec<Vec<bool>> = (0..m)
            .map(|x| (0..m).map(|y| x < y && ok(x, y)).collect())
            .collect();
        let mut found: Vec<Vec<usize>> = Vec::new();
        for (x, row) in pair.iter().enumerate() {
            for y in (x + 1..m).filter(|&y| row[y]) {
                found.push(vec![x, y]);
                if max_depth < 3 {
                    continue;
                }
                for z in (y + 1..m).filter(|&z| row[z] && pair[y][z]) {
                    let three = [
                        &tasks[members[x].0],
                        &tasks[members[y].0],
                        &tasks[members[z].0],
                    ];
                    if merge_test_patches(&three).is_ok() {
                        found.push(vec![x, y, z]);
                    }
                }
            }
        }
        let mut ranked: Vec<([u8; 32], Vec<usize>)> = found
            .into_iter()
            .map(|c| {
                let ids: Vec<usize> = c.iter().map(|&k| members[k].0).collect();
                let mut h = blake3::Hasher::new();
                for &i in &ids {
                    h.update(tasks[i].instance_id.as_bytes());
                    h.update(b"\0");
                }
                (*h.finalize().as_bytes(), ids)
            })
            .collect();
        ranked.sort();
        out.extend(
            ranked
                .into_iter()
                .take(max_per_group)
                .map(|(_, members)| Combination { members }),
        );
    }
    out
}

/// The patches and tests of a combined task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CombinedPatches {
    /// clean → buggy with every member's bug.
    pub bug_patch: String,
    /// The gold fix: buggy → clean.
    pub patch: String,
    /// The members' test patches, each file once.
    pub test_patch: String,
    /// The buggy text of the file.
    pub buggy: String,
    /// The members' FAIL_TO_PASS tests, in order, without repeats.
    pub fail_to_pass: Vec<String>,
    /// The members' PASS_TO_PASS tests minus every FAIL_TO_PASS test.
    pub pass_to_pass: Vec<String>,
}

/// The `diff --git` sections of a patch, by file (the `b/` path).
fn sections(patch: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .trim_end()
                .rsplit_once(" b/")
                .map_or(rest.trim_end(), |(_, b)| b)
                .to_string();
            out.push((path, String::new()));
        }
        if let Some(last) = out.last_mut() {
            last.1.push_str(line);
        }
    }
    out
}

/// The members' test patches merged: each file's section once; two different sections for
/// one file are a conflict.
fn merge_test_patches(members: &[&Task]) -> Result<String, CombineError> {
    let mut by_file: BTreeMap<String, String> = BTreeMap::new();
    let mut out = String::new();
    for t in members {
        for (file, text) in sections(&t.test_patch) {
            match by_file.get(&file) {
                Some(prev) if *prev == text => {}
                Some(_) => return Err(CombineError::TestPatchConflict(file)),
                None => {
                    out.push_str(&text);
                    by_file.insert(file, text);
                }
            }
        }
    }
    Ok(out)
}

/// Combine the bug patches, gold patches, test patches and tests of 2–3 tasks of one file.
/// `clean` is the file's text at `base_commit`.
pub fn combine_patches(members: &[&Task], clean: &str) -> Result<CombinedPatches, CombineError> {
    if !(2..=3).contains(&members.len()) {
        return Err(CombineError::Size(members.len()));
    }
    let first = members[0];
    let file = &first.metadata.location.file;
    let mut changes: Vec<Change> = Vec::new();
    for t in members {
        if t.repo != first.repo
            || t.clean_commit() != first.clean_commit()
            || &t.metadata.location.file != file
        {
            return Err(CombineError::NotSameFile(t.instance_id.clone()));
        }
        let patch_err = |detail: String| CombineError::Patch {
            instance_id: t.instance_id.clone(),
            detail,
        };
        if patch_files(&t.bug_patch).map_err(patch_err)? != [file.clone()] {
            return Err(patch_err(format!(
                "the bug patch changes files other than {file}"
            )));
        }
        changes.extend(file_changes(&t.bug_patch, file).map_err(patch_err)?);
    }
    let buggy = apply_changes(clean, &changes).map_err(CombineError::Overlap)?;
    let mut fail_to_pass: Vec<String> = Vec::new();
    for t in members.iter().flat_map(|m| &m.fail_to_pass) {
        if !fail_to_pass.contains(t) {
            fail_to_pass.push(t.clone());
        }
    }
    let mut pass_to_pass: Vec<String> = Vec::new();
    for t in members.iter().flat_map(|m| &m.pass_to_pass) {
        if !fail_to_pass.contains(t) && !pass_to_pass.contains(t) {
            pass_to_pass.push(t.clone());
        }
    }
    Ok(CombinedPatches {
        bug_patch: crate::task::file_diff(file, clean, &buggy),
        patch: crate::task::file_diff(file, &buggy, clean),
        test_patch: merge_test_patches(members)?,
        buggy,
        fail_to_pass,
        pass_to_pass,
    })
}

/// A combined task record (unverified: `metadata.verification` is empty until it is verified,
/// e.g. with [`verify_combined`]). The id is `<repo>__multi<depth>__<hash of the member ids>`;
/// the issue text lists the members' issues (`templates/train/multi_issue.md.j2`).
pub fn combine_task(members: &[&Task], clean: &str) -> Result<Task, CombineError> {
    let c = combine_patches(members, clean)?;
    let first = members[0];
    let mut h = blake3::Hasher::new();
    for t in members {
        h.update(t.instance_id.as_bytes());
        h.update(b"\0");
    }
    let hash = h.finalize().to_hex();
    let depth = members.len();
    let issues: Vec<&str> = members.iter().map(|t| t.problem_statement.trim()).collect();
    let source = crate::assets::template("train/multi_issue.md.j2")
        .ok_or_else(|| CombineError::Issue("the template is missing from the build".into()))?;
    let mut env = minijinja::Environment::new();
    env.add_template("multi", source)
        .map_err(|e| CombineError::Issue(e.to_string()))?;
    let problem_statement = env
        .get_template("multi")
        .and_then(|t| t.render(minijinja::context! { issues => issues }))
        .map_err(|e| CombineError::Issue(e.to_string()))?;
    let uniq = |items: Vec<String>| -> Vec<String> {
        let mut seen = BTreeSet::new();
        items
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .collect()
    };
    let functions = uniq(
        members
            .iter()
            .map(|t| t.metadata.location.function.clone())
            .collect(),
    );
    let d = |f: fn(&Difficulty) -> bool| members.iter().any(|t| f(&t.metadata.difficulty));
    let function_lines = members
        .iter()
        .map(|t| t.metadata.difficulty.function_lines)
        .max()
        .unwrap_or(0);
    let score = members
        .iter()
        .map(|t| t.metadata.difficulty.score)
        .fold(0.0, f64::max);
    let mut task = first.clone();
    task.instance_id = format!("{}__multi{depth}__{}", first.seed_name(), &hash[..8]);
    // No start state of its own is made for a combination (training only): it is entered
    // from the clean commit with the start patch, in the repository image.
    let start_state = first.metadata.start_state.clone().map(|mut s| {
        let mut removed: Vec<String> = Vec::new();
        for f in members.iter().flat_map(|m| m.removed_files()) {
            if !removed.contains(f) {
                removed.push(f.clone());
            }
        }
        s.removed_files = removed;
        s
    });
    if let Some(s) = &start_state {
        task.base_commit = s.clean_commit.clone();
        task.environment_setup_commit = s.clean_commit.clone();
        task.image_name = s.repo_image.clone();
    }
    task.patch = c.patch.clone();
    task.bug_patch = c.bug_patch;
    task.test_patch = c.test_patch;
    task.problem_statement = problem_statement;
    task.hints_text = String::new();
    task.created_at = crate::task::now_utc();
    task.fail_to_pass = c.fail_to_pass;
    task.pass_to_pass = c.pass_to_pass;
    task.metadata = TaskMetadata {
        mutators: members
            .iter()
            .flat_map(|t| t.metadata.mutators.clone())
            .collect(),
        category: format!("multi-{depth}"),
        candidate_id: members
            .iter()
            .map(|t| t.metadata.candidate_id.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        location: Location {
            file: first.metadata.location.file.clone(),
            function: functions.join(", "),
            lines: (
                members
                    .iter()
                    .map(|t| t.metadata.location.lines.0)
                    .min()
                    .unwrap_or(1),
                members
                    .iter()
                    .map(|t| t.metadata.location.lines.1)
                    .max()
                    .unwrap_or(1),
            ),
        },
        difficulty: Difficulty {
            category: format!("multi-{depth}"),
            killing_tests: task.fail_to_pass.len(),
            function_lines,
            fix_lines: crate::task::changed_lines(&c.patch),
            files_in_fix: 1,
            synthesized_tests: d(|x| x.synthesized_tests),
            direct_call: members.iter().all(|t| t.metadata.difficulty.direct_call),
            issue_names_function: d(|x| x.issue_names_function),
            issue_names_file: d(|x| x.issue_names_file),
            score,
        },
        verification: Evidence {
            repeats: 0,
            sandbox: String::new(),
            clean_runs: Vec::new(),
            runs: Vec::new(),
            reused: Vec::new(),
            nondeterministic: Default::default(),
        },
        environment: first.metadata.environment.clone(),
        tool_version: crate::VERSION.to_string(),
        issue_style: "multi".to_string(),
        issue_detail: String::new(),
        issue_rewrite: Default::default(),
        start_state,
        dropped_test_ids: Default::default(),
    };
    Ok(task)
}

/// Verify a combined task in the sandbox from its record, as `audit` does (every FAIL_TO_PASS
/// test fails with the bugs, every PASS_TO_PASS test passes; with the gold fix all pass),
/// three times: true when every repeat finds no problem.
pub fn verify_combined(
    env: &mut crate::train::reward::RewardEnv,
    task: &Task,
) -> Result<bool, crate::train::reward::RewardError> {
    Ok(env.verify(task, 3)?.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{enumerate_source, Candidate};
    use crate::lang::Language;
    use crate::mutator::load_embedded;
    use crate::train::episode::tests::task_with;
    use rand::SeedableRng;

    fn info(id: &str, category: &str, level: Level) -> TaskInfo {
        TaskInfo {
            instance_id: id.into(),
            category: category.into(),
            level,
        }
    }

    fn group(successes: usize, of: usize) -> Vec<f32> {
        (0..of)
            .map(|i| if i < successes { 1.0 } else { 0.0 })
            .collect()
    }

    #[test]
    fn levels_follow_the_score_and_the_bug_count() {
        let mut t = task_with("a", "m.py", String::new(), String::new(), (1, 1));
        t.metadata.difficulty.score = 0.2;
        assert_eq!(Level::of(&t), Level::Easy);
        t.metadata.difficulty.score = 0.5;
        assert_eq!(Level::of(&t), Level::Medium);
        t.metadata.difficulty.synthesized_tests = true;
        assert_eq!(
            Level::of(&t),
            Level::Hard,
            "reached through a caller: harder"
        );
        t.metadata.difficulty.direct_call = true;
        assert_eq!(Level::of(&t), Level::Medium);
        t.metadata.mutators.push("py-cmp".into());
        assert_eq!(Level::of(&t), Level::Multi);
        assert_eq!(TaskInfo::of(&t).bucket(), "multi-2/multi");
        assert!(Level::Easy < Level::Medium && Level::Hard < Level::Multi);
    }

    #[test]
    fn learnability_prefers_half_solved_tasks() {
        let tasks = vec![
            info("never", "op", Level::Easy),
            info("half", "op", Level::Easy),
            info("always", "op", Level::Easy),
        ];
        let mut c = Curriculum::new(tasks, CurriculumConfig::default());
        for _ in 0..5 {
            c.update(0, &group(0, 8));
            c.update(1, &group(4, 8));
            c.update(2, &group(8, 8));
        }
        let w = c.weights();
        assert!(w[1] > w[0] && w[1] > w[2], "{w:?}");
        // The bucket's rate (0.5 overall) pulls the extremes in while attempts are few.
        assert!(c.pass_rate(0).unwrap() > 0.0 && c.pass_rate(2).unwrap() < 1.0);
        // An unseen task is optimistic: as learnable as a half-solved one.
        let fresh = Curriculum::new(
            vec![info("x", "op", Level::Easy)],
            CurriculumConfig::default(),
        );
        assert!((fresh.weight(0) - (0.25 + 0.05)).abs() < 1e-12);
    }

    #[test]
    fn staleness_brings_a_solved_task_back() {
        let cfg = CurriculumConfig::default();
        let tasks = vec![
            info("solved", "op", Level::Easy),
            info("open", "op", Level::Easy),
        ];
        let mut c = Curriculum::new(tasks, cfg.clone());
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        // Serve both once; task 0 is always solved, task 1 half the time.
        assert_eq!(c.sample(2, &mut rng), vec![0, 1]);
        for _ in 0..10 {
            c.update(0, &group(8, 8));
            c.update(1, &group(4, 8));
        }
        let just_served = c.weight(0);
        // Task 1 alone is served for many steps; task 0's weight grows with staleness.
        for _ in 0..(cfg.stale_after as usize) {
            c.task_stats[1].last_served = Some(c.step);
            c.step += 1;
        }
        let stale = c.weight(0);
        assert!(
            stale > just_served + cfg.staleness * 0.9,
            "{just_served} → {stale}"
        );
        // It is drawn again, now and then.
        let mut drawn = 0;
        for _ in 0..200 {
            drawn += c.sample(1, &mut rng).iter().filter(|&&i| i == 0).count();
        }
        assert!(drawn > 0);
    }

    #[test]
    fn sampling_is_seeded_distinct_and_resumable() {
        let tasks: Vec<TaskInfo> = (0..20)
            .map(|i| info(&format!("t{i}"), "op", Level::Easy))
            .collect();
        let run = |sampling: Sampling| {
            let cfg = CurriculumConfig {
                sampling,
                ..CurriculumConfig::default()
            };
            let mut c = Curriculum::new(tasks.clone(), cfg);
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut all = Vec::new();
            for _ in 0..10 {
                let s = c.sample(5, &mut rng);
                let set: BTreeSet<usize> = s.iter().copied().collect();
                assert_eq!(set.len(), 5, "distinct: {s:?}");
                for &i in &s {
                    c.update(i, &group(i % 3, 4));
                }
                all.push(s);
            }
            (c, all)
        };
        let (c1, a1) = run(Sampling::Curriculum);
        let (_, a2) = run(Sampling::Curriculum);
        assert_eq!(a1, a2, "same seed, same draws");
        let (_, u) = run(Sampling::Uniform);
        assert_ne!(a1, u);
        // More than the task list: all distinct first, then repeats.
        let mut small = Curriculum::new(tasks[..3].to_vec(), CurriculumConfig::default());
        let s = small.sample(5, &mut rand::rngs::StdRng::seed_from_u64(0));
        assert_eq!(s.len(), 5);
        assert_eq!(s[..3], [0, 1, 2]);
        // The state round-trips through JSON and resumes on a changed list.
        let json = serde_json::to_string(&c1).unwrap();
        let back: Curriculum = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c1);
        let mut changed = vec![info("new", "op", Level::Hard)];
        changed.extend(tasks[..2].iter().cloned());
        let r = Curriculum::resume(back, changed);
        assert_eq!(r.step(), 10);
        assert_eq!(r.task_stats(0), &Stats::default());
        assert_eq!(r.task_stats(1), c1.task_stats(0));
        assert_eq!(r.task_stats(2), c1.task_stats(1));
    }

    #[test]
    fn plan_moves_weight_to_harder_levels_past_the_target() {
        let tasks = vec![
            info("e", "op", Level::Easy),
            info("m", "op", Level::Medium),
            info("h", "cmp", Level::Hard),
        ];
        let plan_at = |pe: usize| {
            let mut c = Curriculum::new(tasks.clone(), CurriculumConfig::default());
            c.update(0, &group(pe, 10));
            c.update(1, &group(1, 10));
            c.generation_plan(0.5)
        };
        let low = plan_at(3);
        let mid = plan_at(5);
        let high = plan_at(9);
        let sum: f64 = high.levels.values().sum();
        assert!((sum - 1.0).abs() < 1e-9);
        // Past the target, weight moves on to harder levels.
        assert!(
            high.share_above(Level::Easy) > mid.share_above(Level::Easy)
                && high.share_above(Level::Easy) > low.share_above(Level::Easy),
            "{low:?}\n{mid:?}\n{high:?}"
        );
        assert!(high.levels[&Level::Medium] > mid.levels[&Level::Medium]);
        assert!(high.levels[&Level::Easy] < low.levels[&Level::Easy]);
        // At the target a level keeps its weight and gets more than below it.
        assert!(mid.levels[&Level::Easy] > mid.levels[&Level::Medium]);
        assert!(mid.levels[&Level::Easy] > low.levels[&Level::Easy]);
        // Categories: `op` has attempted buckets, `cmp` only unseen ones.
        assert_eq!(high.categories.len(), 2);
        assert!((high.categories.values().sum::<f64>() - 1.0).abs() < 1e-9);
        // Depth 3 grows once depth 2 is solved beyond the target.
        let mut c = Curriculum::new(
            vec![info("m2", "multi-2", Level::Multi)],
            CurriculumConfig::default(),
        );
        let before = c.generation_plan(0.5).multi_depth[&3];
        c.update(0, &group(9, 10));
        let after = c.generation_plan(0.5).multi_depth[&3];
        assert!(after > before, "{before} → {after}");
    }

    /// Single-bug tasks from real candidates of one demo seed file: (tasks, clean text).
    fn demo_file_tasks(name: &str) -> (Vec<Task>, String) {
        let rules = load_embedded(Language::Python).unwrap();
        let rel = format!("pyshelf/{name}");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
        let clean = std::fs::read_to_string(root.join(&rel)).unwrap();
        let cands: Vec<Candidate> =
            enumerate_source(&rel, clean.as_bytes(), Language::Python, &rules).unwrap();
        let tasks = cands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut t = task_with(
                    &format!("pyshelf__{}__{i:03}", c.mutator),
                    &rel,
                    crate::task::file_diff(&rel, &clean, &crate::task::buggy_text(&clean, c)),
                    crate::task::gold_patch(&clean, c),
                    c.line_range,
                );
                t.fail_to_pass = vec![format!("tests/test_x.py::test_{i}")];
                t.pass_to_pass = (0..3)
                    .map(|k| format!("tests/test_x.py::test_{k}"))
                    .collect();
                t
            })
            .collect();
        (tasks, clean)
    }

    #[test]
    fn combinations_touch_disjoint_lines_and_combine_into_a_valid_patch() {
        let (tasks, clean) = demo_file_tasks("money.py");
        let plan = plan_combinations(&tasks, 3, 25);
        assert!(!plan.is_empty());
        assert!(plan.len() <= 25);
        assert!(plan.iter().any(|c| c.members.len() == 3));
        assert_eq!(plan, plan_combinations(&tasks, 3, 25), "deterministic");
        assert!(plan_combinations(&tasks, 2, 25)
            .iter()
            .all(|c| c.members.len() == 2));
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let rel = "pyshelf/money.py";
        std::fs::create_dir_all(dir.path().join("pyshelf")).unwrap();
        for comb in plan.iter().take(8) {
            let members: Vec<&Task> = comb.members.iter().map(|&i| &tasks[i]).collect();
            let c = combine_patches(&members, &clean).unwrap();
            // Each member's bug is in the combined buggy text, and the gold patch restores the
            // clean file: checked with git itself.
            std::fs::write(dir.path().join(rel), &clean).unwrap();
            std::fs::write(dir.path().join("bug.diff"), &c.bug_patch).unwrap();
            git(&["apply", "bug.diff"]);
            assert_eq!(
                std::fs::read_to_string(dir.path().join(rel)).unwrap(),
                c.buggy
            );
            for m in &members {
                let own = crate::train::episode::file_changes(&m.bug_patch, rel).unwrap();
                let mine = apply_changes(&clean, &own).unwrap();
                assert_ne!(mine, c.buggy, "the combination has more than one bug");
                for ch in &own {
                    for l in &ch.new {
                        assert!(c.buggy.contains(l.as_str()));
                    }
                }
            }
            std::fs::write(dir.path().join("fix.diff"), &c.patch).unwrap();
            git(&["apply", "fix.diff"]);
            assert_eq!(
                std::fs::read_to_string(dir.path().join(rel)).unwrap(),
                clean
            );
            // Tests: the union of FAIL_TO_PASS; PASS_TO_PASS without any of them.
            assert_eq!(c.fail_to_pass.len(), members.len());
            assert!(c.pass_to_pass.iter().all(|t| !c.fail_to_pass.contains(t)));
            let task = combine_task(&members, &clean).unwrap();
            assert_eq!(Level::of(&task), Level::Multi);
            assert_eq!(task.metadata.mutators.len(), members.len());
            assert!(task
                .instance_id
                .starts_with(&format!("pyshelf__multi{}__", members.len())));
            for m in &members {
                assert!(task.problem_statement.contains(m.problem_statement.trim()));
            }
            // The gold edit of the combined task works on its buggy text.
            let edit = crate::train::episode::gold_edit(&task, &c.buggy).unwrap();
            assert_eq!(
                crate::train::episode::apply_edit(&c.buggy, &edit).unwrap(),
                clean
            );
        }
    }

    #[test]
    fn overlapping_or_mismatched_members_are_refused() {
        let (tasks, clean) = demo_file_tasks("money.py");
        // Two bugs on the same line never combine.
        let (a, b) = (0..tasks.len())
            .flat_map(|i| (i + 1..tasks.len()).map(move |j| (i, j)))
            .find(|&(i, j)| tasks[i].metadata.location.lines == tasks[j].metadata.location.lines)
            .expect("two candidates on one line");
        let plan = plan_combinations(&tasks, 3, usize::MAX);
        assert!(plan
            .iter()
            .all(|c| !(c.members.contains(&a) && c.members.contains(&b))));
        assert!(matches!(
            combine_patches(&[&tasks[a], &tasks[b]], &clean),
            Err(CombineError::Overlap(_))
        ));
        assert_eq!(
            combine_patches(&[&tasks[a]], &clean),
            Err(CombineError::Size(1))
        );
        let mut other = tasks[b].clone();
        other.base_commit = "b".repeat(40);
        assert!(matches!(
            combine_patches(&[&tasks[a], &other], &clean),
            Err(CombineError::NotSameFile(_))
        ));
        // Test patches that add the same file differently conflict; identical ones merge.
        let mut x = tasks[0].clone();
        let mut y = tasks[1].clone();
        x.test_patch = crate::task::file_diff_new("tests/test_r.py", "def test_a():\n    pass\n");
        y.test_patch = crate::task::file_diff_new("tests/test_r.py", "def test_b():\n    pass\n");
        assert_eq!(
            merge_test_patches(&[&x, &y]),
            Err(CombineError::TestPatchConflict("tests/test_r.py".into()))
        );
        y.test_patch = x.test_patch.clone();
        assert_eq!(merge_test_patches(&[&x, &y]).unwrap(), x.test_patch);
    }
}
