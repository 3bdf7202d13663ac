//! The engine side of the training generator: asked for one category, it runs the engine on
//! the demo seed and hands over new, verified single-bug tasks of that category only.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use swe_forge::curriculum::GenerationPlan;
use swe_forge::pipeline::SandboxChoice;
use swe_forge::train::generator::{generate_single, EngineGen};

fn cache() -> std::path::PathBuf {
    // The binary's default, so the demo seed's virtualenv is shared with the other tests.
    if let Some(c) = std::env::var_os("SWE_FORGE_CACHE") {
        return std::path::PathBuf::from(c);
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME") {
        return std::path::PathBuf::from(x).join("swe-forge");
    }
    std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
        .join(".cache/swe-forge")
}

// The plan's category mix decides which mutators the engine draws from: a plan that wants
// only `boundary` bugs yields only boundary tasks, each verified by the pipeline.
#[test]
fn the_engine_generates_tasks_in_the_plans_category() {
    let dir = tempfile::tempdir().unwrap();
    let plan = GenerationPlan {
        target: 0.5,
        levels: BTreeMap::new(),
        categories: BTreeMap::from([("boundary".to_string(), 1.0)]),
        multi_depth: BTreeMap::new(),
        pass_rates: BTreeMap::new(),
    };
    let cfg = EngineGen {
        manifest: None,
        seeds: vec!["pyshelf".into()],
        out: dir.path().join("engine"),
        cache: cache(),
        sandbox: SandboxChoice::Local,
        batch: 3,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let handle = {
        let stop = Arc::clone(&stop);
        let plan = Arc::new(Mutex::new(plan));
        std::thread::spawn(move || generate_single(cfg, BTreeSet::new(), plan, stop, tx, 5))
    };
    // The first task, or the generator gives up (then the channel closes).
    let first = rx.recv_timeout(Duration::from_secs(1200));
    stop.store(true, Ordering::SeqCst);
    let mut tasks: Vec<_> = first.into_iter().collect();
    handle.join().unwrap();
    tasks.extend(rx.try_iter());
    assert!(!tasks.is_empty(), "no task was generated");
    let mut ids = BTreeSet::new();
    for t in &tasks {
        assert_eq!(t.metadata.category, "boundary", "{}", t.instance_id);
        assert!(t.instance_id.starts_with("pyshelf__"), "{}", t.instance_id);
        assert!(
            ids.insert(t.instance_id.clone()),
            "sent twice: {}",
            t.instance_id
        );
        assert!(!t.fail_to_pass.is_empty(), "{}", t.instance_id);
    }
    // Every task the engine accepted in its output is one of those handed over.
    let written = std::fs::read_to_string(dir.path().join("engine/tasks.jsonl")).unwrap();
    let n = written.lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(n, tasks.len(), "{written}");
    // A round verifies at most a batch of candidates, none decided in an earlier round.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("engine/summary.json")).unwrap(),
    )
    .unwrap();
    let seed = &summary["seeds"][0];
    assert!(seed["sampled"].as_u64().unwrap() <= 3, "{seed}");
    assert_eq!(seed["resumed"], 0, "{seed}");
}
