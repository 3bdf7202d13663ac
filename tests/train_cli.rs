//! `swe-forge train` end to end on a few demo tasks: warm-start and GRPO steps write one
//! metrics line each with verified rewards, a loadable checkpoint, and `--resume` continues
//! the step count; `report` then draws the training curves.

mod common;

use common::{bin, run_demo_small, text};
use std::path::Path;

fn metrics(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn train(tasks: &Path, out: &Path, extra: &[&str]) {
    let o = bin()
        .args(["train", "--tasks"])
        .arg(tasks)
        .arg("--out")
        .arg(out)
        .args([
            "--limit-tasks",
            "2",
            "--group",
            "3",
            "--tasks-per-step",
            "1",
            "--max-new",
            "12",
            "--max-refill",
            "0",
            "--vocab",
            "300",
            "--checkpoint-every",
            "1",
            "--json",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(summary["parameters"].as_u64().unwrap() > 0, "{summary}");
}

// Training writes a metrics line per step, grades every rollout, saves a checkpoint that
// --resume continues from, and the report shows the curves.
#[test]
fn train_then_resume_then_report() {
    let (_, dir) = run_demo_small();
    let out = dir.path().join("out");
    let tasks = out.join("tasks.jsonl");
    let train_dir = out.join("train");
    train(&tasks, &train_dir, &["--steps", "2", "--warm-start", "2"]);

    let m = metrics(&train_dir);
    let phases: Vec<&str> = m.iter().map(|l| l["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["sft", "sft", "grpo", "grpo"], "{m:?}");
    for l in m.iter().filter(|l| l["phase"] == "sft") {
        assert!(l["loss"].as_f64().unwrap().is_finite(), "{l}");
    }
    for l in m.iter().filter(|l| l["phase"] == "grpo") {
        // One group of 3 per step, each rollout graded with a reward in {-1, 0, 1}.
        assert_eq!(l["rollouts"], 3, "{l}");
        let mean = l["reward_mean"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&mean), "{l}");
        let graded: u64 = l["outcomes"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(graded, 3, "{l}");
        assert_eq!(l["groups"], 1, "{l}");
    }
    assert_eq!(m.last().unwrap()["step"], 2);
    assert_eq!(m.last().unwrap()["rollouts_total"], 6);
    let ckpt = train_dir.join("checkpoint");
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "trainer.json",
    ] {
        assert!(ckpt.join(f).is_file(), "{f} missing in the checkpoint");
    }
    assert!(train_dir.join("rewards.db").is_file());

    // --resume: the warm-start is done, GRPO goes on from step 2 to 3.
    train(
        &tasks,
        &train_dir,
        &["--steps", "3", "--warm-start", "2", "--resume"],
    );
    let m = metrics(&train_dir);
    assert_eq!(m.len(), 5, "{m:?}");
    assert_eq!(m[4]["phase"], "grpo");
    assert_eq!(m[4]["step"], 3);
    assert_eq!(m[4]["rollouts_total"], 9);

    let o = bin().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"section-training\""));
    assert!(html.contains("id=\"chart-train-rates\""));
    assert_eq!(
        html.matches("class=\"series\"").count(),
        7,
        "5 rate series and 2 loss series"
    );
}

// A tasks file with no usable record is an error, not a panic.
#[test]
fn train_without_tasks_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, "not json\n").unwrap();
    let o = bin()
        .args(["train", "--tasks"])
        .arg(&tasks)
        .arg("--out")
        .arg(dir.path().join("train"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no tasks to train on"), "{}", text(&o));
}
