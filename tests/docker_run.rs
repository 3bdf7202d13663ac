//! `swe-forge run` with the Docker backend, end to end through the binary: the same accepted
//! tasks as the local backend, the image reused by a second run, misbehaving mutants contained
//! (endless loop, fork bomb, memory hog, network access, a wiped repository), and no container
//! left behind, even after the process is interrupted or killed.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Candidate id → `accepted` or the rejection reason.
fn verdicts(out_dir: &Path) -> BTreeMap<String, String> {
    jsonl(&out_dir.join("candidates.jsonl"))
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap_or("accepted").to_string(),
            )
        })
        .collect()
}

/// Candidate id → FAIL_TO_PASS of each task.
fn fail_to_pass(out_dir: &Path) -> BTreeMap<String, Vec<String>> {
    jsonl(&out_dir.join("tasks.jsonl"))
        .iter()
        .map(|t| {
            (
                t["metadata"]["candidate_id"].as_str().unwrap().to_string(),
                serde_json::from_value(t["FAIL_TO_PASS"].clone()).unwrap(),
            )
        })
        .collect()
}

fn demo_run(sandbox: &str, out_dir: &Path) -> (serde_json::Value, f64) {
    let started = Instant::now();
    let out = bin()
        .args([
            "run",
            "--sandbox",
            sandbox,
            "--json",
            "--jobs",
            "2",
            "--only",
            "pyshelf",
            "--max-candidates",
            "12",
            "--out",
        ])
        .arg(out_dir)
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    (summary(&out), secs)
}

/// Containers whose label `key` has `value` (running or not).
fn labelled(key: &str, value: &str) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!("label={key}={value}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn seed_containers(seed: &str) -> Vec<String> {
    labelled("swe-forge.seed", seed)
}

/// The same demo candidates get the same verdicts in Docker as with the local backend; a
/// second Docker run reuses the image (same id, nothing built) and agrees again.
#[test]
fn docker_matches_local_and_reuses_its_image() {
    if !docker_or_skip("docker_matches_local_and_reuses_its_image") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (local, local_s) = demo_run("local", &dir.path().join("local"));
    let (first, first_s) = demo_run("docker", &dir.path().join("docker1"));
    let (second, second_s) = demo_run("docker", &dir.path().join("docker2"));
    eprintln!(
        "wall seconds: local {local_s:.1}, docker first {first_s:.1}, docker second {second_s:.1}"
    );
    assert_eq!(local["sandbox"], "local");
    assert_eq!(first["sandbox"], "docker");
    let (l, a, b) = (
        seed_summary(&local, "pyshelf"),
        seed_summary(&first, "pyshelf"),
        seed_summary(&second, "pyshelf"),
    );
    for s in [l, a, b] {
        assert_eq!(s["status"], "done", "{s}");
    }
    assert!(a["accepted"].as_u64().unwrap() > 0, "{a}");

    // Same verdict for every candidate, same FAIL_TO_PASS for every task.
    let v_local = verdicts(&dir.path().join("local"));
    assert_eq!(v_local.len(), 12);
    assert_eq!(v_local, verdicts(&dir.path().join("docker1")));
    assert_eq!(v_local, verdicts(&dir.path().join("docker2")));
    let f_local = fail_to_pass(&dir.path().join("local"));
    assert_eq!(f_local, fail_to_pass(&dir.path().join("docker1")));

    // Docker tasks name their task image (the start state, made from the seed's repository
    // image, which the record keeps too); the second run built nothing.
    let image = a["image"].as_str().expect("the seed names its image");
    let repo_name = image.rsplit_once(':').unwrap().0;
    for t in jsonl(&dir.path().join("docker1/tasks.jsonl")) {
        assert_eq!(t["metadata"]["start_state"]["repo_image"], image);
        let task_image = t["image_name"].as_str().unwrap();
        assert!(
            task_image.starts_with(&format!("{repo_name}-task:")),
            "{task_image}"
        );
        let present = Command::new("docker")
            .args(["image", "inspect", "-f", "{{.Id}}", task_image])
            .output()
            .unwrap();
        assert!(present.status.success(), "{task_image} is not present");
    }
    assert!(l.get("image").is_none(), "{l}");
    assert_eq!(b["image"], a["image"]);
    assert_eq!(b["image_id"], a["image_id"]);
    assert_eq!(b["image_built"], false, "{b}");
    let inspected = Command::new("docker")
        .args(["image", "inspect", "-f", "{{.Id}}", image])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&inspected.stdout).trim(),
        a["image_id"].as_str().unwrap()
    );
}

/// An endless loop is rejected as `timeout` inside the container and the run goes on.
#[test]
fn docker_endless_loop_times_out() {
    if !docker_or_skip("docker_endless_loop_times_out") {
        return;
    }
    let (out, dir) = run_fixture_in("docker", "loop_mutant", &["--min-timeout", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "loop_mutant")["runner"],
        "resident"
    );
    let seed = seed_summary(&summary(&out), "loop_mutant").clone();
    assert_eq!(seed["status"], "done", "{seed}");
    assert_eq!(seed["decided"], seed["sampled"], "{seed}");
    let v = verdicts(&dir.path().join("out"));
    assert!(v.values().any(|r| r == "timeout"), "{v:?}");
    assert!(v.values().any(|r| r != "timeout"), "{v:?}");
    assert!(seed_containers("loop_mutant").is_empty());
}

/// A fork bomb is capped by the container's pids limit.
#[test]
fn docker_fork_bomb_is_capped() {
    if !docker_or_skip("docker_fork_bomb_is_capped") {
        return;
    }
    let (out, dir) = run_fixture_in(
        "docker",
        "fork_mutant",
        &["--pids-limit", "64", "--min-timeout", "5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "fork_mutant")["runner"],
        "resident"
    );
    let guard: Vec<String> = candidate_lines(dir.path())
        .iter()
        .filter(|c| c["category"] == "missing-guard")
        .map(|c| c["reason"].as_str().unwrap_or("accepted").to_string())
        .collect();
    assert!(!guard.is_empty());
    assert!(
        guard
            .iter()
            .all(|r| r == "resource-limit" || r == "timeout"),
        "{guard:?}"
    );
    assert!(seed_containers("fork_mutant").is_empty());
}

/// A memory hog is ended by the OOM killer, and the verdict says so.
#[test]
fn docker_memory_hog_is_an_oom_verdict() {
    if !docker_or_skip("docker_memory_hog_is_an_oom_verdict") {
        return;
    }
    let (out, dir) = run_fixture_in("docker", "alloc_mutant", &["--memory-limit", "512"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "alloc_mutant")["runner"],
        "resident"
    );
    let guard: Vec<serde_json::Value> = candidate_lines(dir.path())
        .into_iter()
        .filter(|c| c["category"] == "missing-guard")
        .collect();
    assert!(!guard.is_empty());
    for c in &guard {
        assert_eq!(c["reason"], "resource-limit", "{c}");
        assert!(
            c["detail"].as_str().unwrap_or("").contains("OOM killer"),
            "{c}"
        );
    }
    assert!(seed_containers("alloc_mutant").is_empty());
}

/// A mutant that connects to the host gets no network inside the container: nothing arrives
/// at a listener on the host, and the task is decided by its test as usual.
#[test]
fn docker_mutant_cannot_reach_the_network() {
    if !docker_or_skip("docker_mutant_cannot_reach_the_network") {
        return;
    }
    let listener = std::net::TcpListener::bind("0.0.0.0:47913")
        .expect("port 47913 (the net_mutant fixture's target) is free");
    listener.set_nonblocking(true).unwrap();
    let (out, dir) = run_fixture_in("docker", "net_mutant", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "net_mutant")["runner"],
        "resident"
    );
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a connection reached the host: {other:?}"),
    }
    let tasks = std::fs::read_to_string(dir.path().join("out/tasks.jsonl")).unwrap();
    assert!(tasks.contains("unreachable: OSError"), "{tasks}");
    assert!(!tasks.contains("'connected'"), "{tasks}");
    let probe_tasks: Vec<serde_json::Value> = jsonl(&dir.path().join("out/tasks.jsonl"))
        .into_iter()
        .filter(|t| {
            t["FAIL_TO_PASS"]
                .to_string()
                .contains("test_offline_probe_sends_nothing")
        })
        .collect();
    assert!(!probe_tasks.is_empty(), "{tasks}");
    assert!(seed_containers("net_mutant").is_empty());
}

/// A mutant that deletes the whole repository under /testbed: its own repeated runs and every
/// later candidate still start from a clean tree.
#[test]
fn docker_wiped_repository_is_restored() {
    if !docker_or_skip("docker_wiped_repository_is_restored") {
        return;
    }
    let (out, dir) = run_fixture_in("docker", "wipe_mutant", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "wipe_mutant")["runner"],
        "resident"
    );
    let lines = candidate_lines(dir.path());
    let wipes: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|c| {
            c["function"].as_str().unwrap_or("").ends_with("purge")
                && c["category"] == "missing-guard"
        })
        .collect();
    assert!(!wipes.is_empty(), "{lines:?}");
    for c in &wipes {
        assert_eq!(c["status"], "accepted", "{c}");
    }
    for c in &lines {
        let r = c["reason"].as_str().unwrap_or("accepted");
        assert!(
            [
                "accepted",
                "not-killed",
                "not-covered",
                "likely-equivalent",
                "synthesis-failed"
            ]
            .contains(&r),
            "a candidate saw a damaged tree: {c}"
        );
    }
    // Candidates outside `purge` ran after the wipes (two workers, several candidates each)
    // and were still decided on the full suite.
    let others: BTreeSet<&str> = lines
        .iter()
        .filter(|c| c["status"] == "accepted")
        .filter_map(|c| c["function"].as_str())
        .collect();
    assert!(others.len() >= 2, "{others:?}");
    assert!(seed_containers("wipe_mutant").is_empty());
}

fn wait_for_containers(pid: u32, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(900);
    while labelled("swe-forge.owner-pid", &pid.to_string()).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the run ended before starting a container: {st:?}");
        }
        assert!(Instant::now() < deadline, "no container after 900 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn spawn_demo_run(out_dir: &Path) -> std::process::Child {
    bin()
        .args([
            "run",
            "--sandbox",
            "docker",
            "--json",
            "--jobs",
            "2",
            "--only",
            "pyshelf",
            "--max-candidates",
            "40",
            "--out",
        ])
        .arg(out_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Ctrl-C twice ends a run at once and removes its containers; a run killed with SIGKILL
/// leaves containers that the next run sweeps.
#[test]
fn interrupted_or_killed_runs_leave_no_container() {
    if !docker_or_skip("interrupted_or_killed_runs_leave_no_container") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();

    let mut child = spawn_demo_run(&dir.path().join("a"));
    let pid = child.id();
    wait_for_containers(pid, &mut child);
    for _ in 0..2 {
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(labelled("swe-forge.owner-pid", &pid.to_string()).is_empty());

    let mut child = spawn_demo_run(&dir.path().join("b"));
    let pid = child.id();
    wait_for_containers(pid, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!labelled("swe-forge.owner-pid", &pid.to_string()).is_empty());
    // The next run sweeps them when it connects.
    let (out, _dir) = run_fixture_in("docker", "no_tests", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(labelled("swe-forge.owner-pid", &pid.to_string()).is_empty());
}
