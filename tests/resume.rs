//! An interrupted run resumes: candidates decided before the crash are not redone, and the
//! outputs hold no duplicates. A resume with another set-up (`--repeats`, the seed's
//! `install:`…) is refused with exit code 5, naming the option; one that only draws more
//! candidates or runs more jobs resumes.

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

/// A one-seed manifest for the `issue_llm` fixture (small and quick), with `install:` if given.
fn manifest(dir: &std::path::Path, install: Option<&str>) -> std::path::PathBuf {
    let path = dir.join("seeds.yaml");
    let mut text = format!(
        "seeds:\n  - name: parcel\n    source: {}\n    language: python\n",
        fixture("issue_llm").display()
    );
    if let Some(install) = install {
        text.push_str(&format!("    install: \"{install}\"\n"));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn decided(out: &std::path::Path) -> usize {
    swe_forge::store::Store::open(&out.join("state.db"))
        .unwrap()
        .decided()
        .unwrap()
        .len()
}

#[test]
fn a_resume_with_another_set_up_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let plain = manifest(dir.path(), None);
    let run = |manifest: &std::path::Path, repeats: &str, max: &str, jobs: &str| {
        bin()
            .arg("run")
            .arg(manifest)
            .args(["--sandbox", "local", "--json", "--no-synthesis"])
            .args(["--baseline-repeats", "1", "--max-per-function", "1000"])
            .args([
                "--repeats",
                repeats,
                "--max-candidates",
                max,
                "--jobs",
                jobs,
            ])
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap()
    };
    let first = run(&plain, "1", "2", "1");
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let s = summary(&first);
    let seed = seed_summary(&s, "parcel");
    assert_eq!(seed["status"], "done", "{seed}");
    let stored = decided(&out_dir);
    assert_eq!(stored as u64, seed["sampled"].as_u64().unwrap(), "{seed}");

    // Another --repeats: refused before anything runs, naming both values.
    let again = run(&plain, "2", "2", "1");
    assert_eq!(again.status.code(), Some(5), "{}", text(&again));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("seed `parcel`"), "{err}");
    assert!(err.contains("--repeats: 1 stored, 2 now"), "{err}");
    assert!(err.contains("fresh --out"), "{err}");
    assert_eq!(decided(&out_dir), stored);

    // Another install: in the manifest: refused too, before an environment is made for it.
    let other = manifest(dir.path(), Some("python -c pass"));
    let again = run(&other, "1", "2", "1");
    assert_eq!(again.status.code(), Some(5), "{}", text(&again));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("install: "), "{err}");
    assert!(err.contains("`python -c pass` now"), "{err}");
    assert!(
        !err.contains("--repeats"),
        "only what differs is named: {err}"
    );
    assert_eq!(decided(&out_dir), stored);

    // The same set-up resumes, with more candidates drawn and more jobs: what was decided is
    // kept and the rest is decided.
    let plain = manifest(dir.path(), None);
    let resumed = run(&plain, "1", "4", "2");
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let s = summary(&resumed);
    let seed = seed_summary(&s, "parcel");
    assert_eq!(seed["resumed"].as_u64().unwrap() as usize, stored, "{seed}");
    assert_eq!(seed["decided"], seed["sampled"], "{seed}");
    assert!(
        seed["sampled"].as_u64().unwrap() as usize > stored,
        "{seed}"
    );
}
