//! The curriculum against a scripted policy whose success probability per level is known and
//! changes with training: as the pass rate on the easy bucket rises past the target, the
//! share of harder tasks served (and planned for generation) rises; every task is served; the
//! uniform ablation does not move.

use rand::{Rng, SeedableRng};
use swe_forge::curriculum::{Curriculum, CurriculumConfig, Level, Sampling, TaskInfo};

const STEPS: u64 = 600;
const PER_STEP: usize = 4;
const GROUP: usize = 8;

/// The scripted policy's chance to solve a task of `level` at training step `t`: easy starts
/// at 0.3, below the target, passes it at step 62 and reaches 0.95 by step 200; medium stays
/// at 0.05 until step 200, then learns up to 0.65 by step 450; hard stays low (0.05, rising
/// to 0.35 after step 350); multi 0.02.
fn success_probability(level: Level, t: u64) -> f64 {
    let ramp = |from: f64, to: f64| ((t as f64 - from) / (to - from)).clamp(0.0, 1.0);
    match level {
        Level::Easy => 0.3 + 0.65 * ramp(0.0, 200.0),
        Level::Medium => 0.05 + 0.6 * ramp(200.0, 450.0),
        Level::Hard => 0.05 + 0.3 * ramp(350.0, 600.0),
        Level::Multi => 0.02,
    }
}

fn tasks() -> Vec<TaskInfo> {
    let mut out = Vec::new();
    for (level, n) in [(Level::Easy, 10), (Level::Medium, 10), (Level::Hard, 10)] {
        for i in 0..n {
            out.push(TaskInfo {
                instance_id: format!("{}-{i}", level.as_str()),
                category: if i % 2 == 0 { "operator" } else { "boundary" }.into(),
                level,
            });
        }
    }
    out
}

/// What a run served: per step, the levels of the tasks; and the curriculum at steps 100 and
/// the end.
struct Trace {
    served: Vec<Vec<Level>>,
    times_served: Vec<u64>,
    early: Curriculum,
    late: Curriculum,
}

fn run(sampling: Sampling, seed: u64) -> Trace {
    let cfg = CurriculumConfig {
        sampling,
        ..CurriculumConfig::default()
    };
    let infos = tasks();
    let mut c = Curriculum::new(infos.clone(), cfg);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut served = Vec::new();
    let mut times_served = vec![0; infos.len()];
    let mut early = None;
    for t in 0..STEPS {
        let chosen = c.sample(PER_STEP, &mut rng);
        let mut levels = Vec::new();
        for i in chosen {
            let p = success_probability(infos[i].level, t);
            let rewards: Vec<f32> = (0..GROUP)
                .map(|_| if rng.random::<f64>() < p { 1.0 } else { 0.0 })
                .collect();
            c.update(i, &rewards);
            times_served[i] += 1;
            levels.push(infos[i].level);
        }
        served.push(levels);
        if t + 1 == 100 {
            early = Some(c.clone());
        }
    }
    Trace {
        served,
        times_served,
        early: early.unwrap(),
        late: c,
    }
}

/// The share of served tasks above the easy level in steps `from..to`.
fn harder_share(trace: &Trace, from: usize, to: usize) -> f64 {
    let window: Vec<Level> = trace.served[from..to].iter().flatten().copied().collect();
    window.iter().filter(|l| **l > Level::Easy).count() as f64 / window.len() as f64
}

// The served difficulty moves up once the easy bucket is solved past the target.
#[test]
fn harder_tasks_are_served_as_the_easy_pass_rate_passes_the_target() {
    for seed in [1, 2, 3] {
        let trace = run(Sampling::Curriculum, seed);
        // The pass rate on easy tasks rose past the target (0.5) during the run.
        let easy_early = trace.early.level_pass_rate(Level::Easy).unwrap();
        let easy_late = trace.late.level_pass_rate(Level::Easy).unwrap();
        assert!(
            easy_late > 0.85 && easy_late > easy_early,
            "{easy_early} → {easy_late}"
        );
        let early = harder_share(&trace, 0, 100);
        let late = harder_share(&trace, 500, 600);
        eprintln!(
            "seed {seed}: easy pass rate {easy_early:.2} → {easy_late:.2}; medium+hard served {early:.2} → {late:.2}"
        );
        assert!(
            late > early + 0.2,
            "seed {seed}: share of medium and hard tasks served {early:.2} (steps 0-100) → {late:.2} (steps 500-600)"
        );
        // Every task was served, the solved easy ones included, and they still come back late.
        assert!(
            trace.times_served.iter().all(|&n| n > 0),
            "{:?}",
            trace.times_served
        );
        let easy_late_served = trace.served[400..]
            .iter()
            .flatten()
            .filter(|l| **l == Level::Easy)
            .count();
        assert!(easy_late_served > 0, "staleness brings solved tasks back");
        // The generator's plan moves the same way.
        let plan_early = trace.early.generation_plan(0.5);
        let plan_late = trace.late.generation_plan(0.5);
        assert!(
            plan_late.share_above(Level::Easy) > plan_early.share_above(Level::Easy),
            "{plan_early:?}\n{plan_late:?}"
        );
        assert!(plan_late.levels[&Level::Easy] < plan_early.levels[&Level::Easy]);
    }
}

// The uniform ablation serves the same mix throughout, so the movement above comes from the
// curriculum.
#[test]
fn uniform_sampling_does_not_shift() {
    let trace = run(Sampling::Uniform, 1);
    let early = harder_share(&trace, 0, 100);
    let late = harder_share(&trace, 500, 600);
    assert!((late - early).abs() < 0.1, "{early:.2} → {late:.2}");
    assert!((early - 2.0 / 3.0).abs() < 0.1, "{early:.2}");
}

// A saved state resumes to the same draws as an uninterrupted run.
#[test]
fn a_resumed_curriculum_continues_identically() {
    let infos = tasks();
    let mut a = Curriculum::new(infos.clone(), CurriculumConfig::default());
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for _ in 0..50 {
        for i in a.sample(PER_STEP, &mut rng) {
            a.update(i, &[1.0, 0.0, 0.0, -1.0]);
        }
    }
    let saved = serde_json::to_string(&a).unwrap();
    let mut b = Curriculum::resume(serde_json::from_str(&saved).unwrap(), infos);
    let mut rng_b = rng.clone();
    for _ in 0..20 {
        assert_eq!(a.sample(PER_STEP, &mut rng), b.sample(PER_STEP, &mut rng_b));
    }
}
