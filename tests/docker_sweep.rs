//! Containers never outlive their run: a process killed with SIGKILL leaves its containers
//! behind, and the next sandbox start sweeps them; `cleanup_run` (the Ctrl-C path) removes a
//! live run's containers.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use swe_forge::sandbox::docker::{cleanup_run, DockerSandbox};
use swe_forge::sandbox::Limits;

/// Not a test on its own: the child process of `killed_run_leaves_nothing_after_next_start`.
/// It starts two workers, prints the run id and waits to be killed.
#[test]
#[ignore = "not a test: a subprocess that killed_run_leaves_nothing_after_next_start starts and kills"]
fn hold_containers_helper() {
    if std::env::var("SWE_FORGE_TEST_HOLD").as_deref() != Ok("1") {
        return;
    }
    let repo = demo_repo();
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    let _w0 = env.worker(0).unwrap();
    let _w1 = env.worker(1).unwrap();
    println!("RUN_ID={}", sandbox.run_id());
    std::thread::sleep(Duration::from_secs(600));
}

#[test]
fn killed_run_leaves_nothing_after_next_start() {
    if !docker_or_skip("killed_run_leaves_nothing_after_next_start") {
        return;
    }
    // Build the image here first so that the child only starts containers.
    let repo = demo_repo();
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hold_containers_helper",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SWE_FORGE_TEST_HOLD", "1")
        .env("SWE_FORGE_CACHE", cache())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // Killed on every path out of this test, a failed assertion included.
    let mut child = KillOnDrop(child);
    let started = Instant::now();
    let mut run_id = None;
    for line in BufReader::new(child.0.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        // libtest may have printed `test hold_containers_helper ... ` on the same line.
        if let Some(pos) = line.find("RUN_ID=") {
            run_id = Some(line[pos + "RUN_ID=".len()..].trim().to_string());
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the helper never started"
        );
    }
    let run_id = run_id.expect("the helper printed its run id");
    assert_eq!(run_containers(&run_id).len(), 2);
    // SIGKILL: no destructor runs.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(
        run_containers(&run_id).len(),
        2,
        "the containers should still be there"
    );
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    assert!(
        run_containers(&run_id).is_empty(),
        "the next start did not sweep the killed run's containers"
    );
    // A live run's containers are left alone by another start's sweep.
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    let w = env.worker(0).unwrap();
    DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    assert_eq!(run_containers(sandbox.run_id()).len(), 1);
    drop(w);
    assert!(run_containers(sandbox.run_id()).is_empty());
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn cleanup_run_removes_a_live_runs_containers() {
    if !docker_or_skip("cleanup_run_removes_a_live_runs_containers") {
        return;
    }
    let repo = demo_repo();
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    let w0 = env.worker(0).unwrap();
    let w1 = env.worker(1).unwrap();
    assert_eq!(run_containers(sandbox.run_id()).len(), 2);
    assert_eq!(cleanup_run(sandbox.run_id()).unwrap(), 2);
    assert!(run_containers(sandbox.run_id()).is_empty());
    // Dropping workers whose containers are gone is fine.
    drop(w0);
    drop(w1);
}
