//! Generation plans: what the generator should make next (level shares, category weights,
//! multi-bug depths), from the policy's pass rates.

use super::{Curriculum, Level};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

impl Curriculum {
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
