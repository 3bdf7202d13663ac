//! Unit tests of the curriculum: levels, pass rates, sampling and generation plans.

use super::*;
use crate::train::episode::tests::task_with;
use rand::SeedableRng;
use std::collections::BTreeSet;

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
