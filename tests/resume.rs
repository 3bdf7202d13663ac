//! An interrupted run resumes: candidates decided before the crash are not redone, and the
//! outputs hold no duplicates.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

#[test]
fn killed_run_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let args = [
        "run",
        "--sandbox",
        "local",
        "--json",
        "--jobs",
        "1",
        "--only",
        "pyshelf",
        "--max-candidates",
        "12",
        "--repeats",
        "2",
    ];
    let mut child = bin()
        .args(args)
        .arg("--out")
        .arg(&out_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a few candidates are decided, then kill the process outright.
    let db = out_dir.join("state.db");
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(900), "no progress");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended before it could be interrupted: {status:?}");
        }
        let decided = db
            .exists()
            .then(|| swe_forge::store::Store::open(&db).ok())
            .flatten()
            .and_then(|s| s.decided().ok())
            .map_or(0, |d| d.len());
        if decided >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let out = bin()
        .args(args)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "pyshelf");
    assert!(seed["resumed"].as_u64().unwrap() >= 3, "{seed}");
    assert_eq!(seed["decided"], seed["sampled"], "{seed}");

    let candidates = jsonl(&out_dir.join("candidates.jsonl"));
    let ids: BTreeSet<&str> = candidates
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), candidates.len(), "a candidate appears once");
    assert_eq!(candidates.len() as u64, seed["sampled"].as_u64().unwrap());
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    let tids: BTreeSet<&str> = tasks
        .iter()
        .map(|t| t["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(tids.len(), tasks.len(), "a task appears once");
}
