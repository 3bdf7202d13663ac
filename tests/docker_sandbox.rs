//! The Docker sandbox through the library on the demo seed: the repository image is built once
//! and reused, commands are contained (endless loop, fork bomb, memory hog, network, files
//! deleted under /testbed), patches apply and reset restores a clean tree, pytest runs with
//! coverage inside the container, and no container outlives its worker.

mod common;
use common::*;
use std::sync::Arc;
use std::time::{Duration, Instant};
use swe_forge::run::{RunEnd, TestStatus};
use swe_forge::runner::pytest::Pytest;
use swe_forge::runner::{RunBudget, TestRunner};
use swe_forge::sandbox::docker::DockerSandbox;
use swe_forge::sandbox::{Environment, Limits, SandboxError, Worker};

/// A sandbox and the demo seed's prepared environment.
fn demo_env(limits: Limits) -> (DockerSandbox, Arc<dyn Environment>) {
    let repo = demo_repo();
    let sandbox = DockerSandbox::connect(&cache(), limits).unwrap();
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    (sandbox, env)
}

fn run(w: &mut Box<dyn Worker>, script: &str, secs: u64) -> swe_forge::sandbox::ExecOutput {
    w.exec(script, Duration::from_secs(secs)).unwrap()
}

fn stdout(o: &swe_forge::sandbox::ExecOutput) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &swe_forge::sandbox::ExecOutput) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The image is built on the first prepare, found by its tag on the second (same id), and
/// carries its labels.
#[test]
fn image_is_built_once_then_reused() {
    if !docker_or_skip("image_is_built_once_then_reused") {
        return;
    }
    let repo = demo_repo();
    let id = |tag: &str| {
        let out = std::process::Command::new("docker")
            .args([
                "image",
                "inspect",
                "--format",
                "{{.Id}} {{json .Config.Labels}}",
                tag,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let first = swe_forge::toolchain::prepare(&sandbox, &repo)
        .unwrap()
        .image_name()
        .unwrap();
    let before = id(&first);
    let started = Instant::now();
    let second = swe_forge::toolchain::prepare(&sandbox, &repo)
        .unwrap()
        .image_name()
        .unwrap();
    let reuse = started.elapsed();
    assert_eq!(first, second);
    assert_eq!(before, id(&second), "the image was rebuilt");
    assert!(
        reuse < Duration::from_secs(5),
        "finding the image took {reuse:?}"
    );
    assert!(first.starts_with("swe-forge/pyshelf:"), "{first}");
    assert!(before.contains("\"swe-forge.kind\":\"repo\""), "{before}");
    assert!(
        before.contains(&format!("\"swe-forge.commit\":\"{}\"", repo.commit)),
        "{before}"
    );
    assert!(
        before.contains("\"swe-forge.seed\":\"pyshelf\""),
        "{before}"
    );
}

/// Inside the container: the repository at /testbed owned by the non-root user, at its commit,
/// a clean tree, the deterministic environment, the test tools.
#[test]
fn container_environment() {
    if !docker_or_skip("container_environment") {
        return;
    }
    let repo = demo_repo();
    let (sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    assert_eq!(w.root(), "/testbed");
    let o = run(
        &mut w,
        "id -u; pwd; git rev-parse HEAD; git status --porcelain | wc -l; \
         echo \"$TZ $PYTHONHASHSEED $LC_ALL $PYTHONPATH $PYTHONDONTWRITEBYTECODE\"; \
         python -c 'import pytest, coverage, pytest_cov, sys; print(sys.prefix)'; \
         touch /scratch/x /tmp/y && echo writable",
        60,
    );
    assert_eq!(o.exit_code, Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "1000");
    assert_eq!(lines[1], "/testbed");
    assert_eq!(lines[2], repo.commit);
    assert_eq!(lines[3], "0", "the tree is not clean: {o:?}");
    assert_eq!(lines[4], "UTC 0 C.UTF-8 /testbed 1");
    assert_eq!(lines[5], "/opt/venv");
    assert_eq!(lines[6], "writable");
    let run_id = sandbox.run_id().to_string();
    assert_eq!(run_containers(&run_id).len(), 1);
    drop(w);
    assert!(
        run_containers(&run_id).is_empty(),
        "the worker's container outlived it"
    );
}

/// The local backend's reset removes a nested repository (a copy of the worktree with its
/// `.git`) as the Docker agent's does; runs no container.
#[test]
fn local_reset_removes_a_copy_of_the_worktree() {
    let repo = demo_repo();
    let local = swe_forge::sandbox::local::LocalSandbox::new(&cache(), Limits::default());
    let env = swe_forge::toolchain::prepare(&local, &repo).unwrap();
    let mut w = env.worker(0).unwrap();
    let listing = "git status --porcelain --ignored; ls";
    let pristine = stdout(&run(&mut w, listing, 30));
    let o = run(
        &mut w,
        "mkdir fr && cp -r .git tests fr/ && echo x > new.txt",
        30,
    );
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_ne!(stdout(&run(&mut w, listing, 30)), pristine);
    w.reset().unwrap();
    assert_eq!(stdout(&run(&mut w, listing, 30)), pristine);
}

/// Exit statuses and signals read the same as with the local backend.
#[test]
fn exit_statuses_match_the_local_backend() {
    if !docker_or_skip("exit_statuses_match_the_local_backend") {
        return;
    }
    let repo = demo_repo();
    let local = swe_forge::sandbox::local::LocalSandbox::new(&cache(), Limits::default());
    let local_env = swe_forge::toolchain::prepare(&local, &repo).unwrap();
    let mut lw = local_env.worker(0).unwrap();
    let (_sandbox, env) = demo_env(Limits::default());
    let mut dw = env.worker(0).unwrap();
    for script in [
        "true",
        "exit 3",
        "exit 137",
        "kill -SEGV $$",
        "echo x; kill -TERM $$",
        "python -c 'import os; os.abort()'",
        "python -c 'import os; os.abort()'; exit $?",
        "echo out; echo err >&2; exit 1",
    ] {
        let l = lw.exec(script, Duration::from_secs(30)).unwrap();
        let d = dw.exec(script, Duration::from_secs(30)).unwrap();
        assert_eq!(
            (l.end, l.exit_code, l.signal, &l.stdout),
            (d.end, d.exit_code, d.signal, &d.stdout),
            "`{script}`: local {l:?} docker {d:?}"
        );
        // bash's job reports name a pid.
        let unpid = |s: String| -> String {
            s.split_whitespace()
                .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(unpid(stderr(&l)), unpid(stderr(&d)), "`{script}`");
    }
}

/// A command that never ends hits the timeout; the next command runs normally.
#[test]
fn endless_loop_times_out_and_the_worker_goes_on() {
    if !docker_or_skip("endless_loop_times_out_and_the_worker_goes_on") {
        return;
    }
    let (sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let started = Instant::now();
    let o = w
        .exec("while :; do :; done", Duration::from_secs(2))
        .unwrap();
    assert_eq!(o.end, RunEnd::TimedOut, "{o:?}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    // Background processes die with it.
    let o = run(&mut w, "sleep 1000 & sleep 1000 & echo started", 5);
    assert_eq!(stdout(&o).trim(), "started");
    let o = run(&mut w, "ls /proc | grep -c '^[0-9]'", 5);
    assert_eq!(o.exit_code, Some(0));
    let procs: u32 = stdout(&o).trim().parse().unwrap();
    // init, sleep infinity, the agent, timeout, bash, ls, grep.
    assert!(procs <= 7, "left-over processes: {procs}");
    let run_id = sandbox.run_id().to_string();
    drop(w);
    assert!(run_containers(&run_id).is_empty());
}

/// A command that kills every process it can (the sandbox's agent included) is reported as
/// killed; the worker goes on with a clean tree.
#[test]
fn killing_everything_is_survived() {
    if !docker_or_skip("killing_everything_is_survived") {
        return;
    }
    let (_sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let o = run(
        &mut w,
        "echo dirty > /testbed/left-behind; sleep 1000 & kill -9 -1; sleep 5",
        30,
    );
    assert_eq!(o.end, RunEnd::Signaled, "{o:?}");
    let o = run(
        &mut w,
        "test -e /testbed/left-behind && echo still || echo clean; ls /proc | grep -c '^[0-9]'",
        10,
    );
    let out = stdout(&o);
    assert_eq!(out.lines().next(), Some("clean"), "{o:?}");
    let procs: u32 = out.lines().nth(1).unwrap().parse().unwrap();
    assert!(procs <= 7, "left-over processes: {procs}");
}

/// When the command stops the agent so that no answer comes, the watchdog outside kills and
/// replaces the container, and the next command works.
#[test]
fn watchdog_replaces_a_stuck_container() {
    if !docker_or_skip("watchdog_replaces_a_stuck_container") {
        return;
    }
    let (sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    w.exec("echo dirty > /testbed/left-behind", Duration::from_secs(5))
        .unwrap();
    // $PPID is the agent (it starts the command's bash itself): stop it.
    let script = "kill -STOP $PPID; sleep 1000";
    let started = Instant::now();
    let o = w.exec(script, Duration::from_secs(1)).unwrap();
    let took = started.elapsed();
    assert_eq!(o.end, RunEnd::TimedOut, "{o:?}");
    assert!(stderr(&o).contains("watchdog"), "{}", stderr(&o));
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(30),
        "{took:?}"
    );
    let o = run(
        &mut w,
        "test -e /testbed/left-behind && echo still || echo fresh",
        10,
    );
    assert_eq!(stdout(&o).trim(), "fresh", "{o:?}");
    let run_id = sandbox.run_id().to_string();
    assert_eq!(
        run_containers(&run_id).len(),
        1,
        "the old container was not removed"
    );
    drop(w);
    assert!(run_containers(&run_id).is_empty());
}

/// A fork bomb is capped by the pids limit and nothing of it survives the command.
#[test]
fn fork_bomb_is_capped_by_the_pids_limit() {
    if !docker_or_skip("fork_bomb_is_capped_by_the_pids_limit") {
        return;
    }
    let (sandbox, env) = demo_env(Limits {
        pids: 32,
        ..Limits::default()
    });
    let mut w = env.worker(0).unwrap();
    let counter = "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(600)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print(n, e.errno)\n";
    let o = run(&mut w, &format!("python -c '{counter}'"), 60);
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let out = stdout(&o);
    let mut words = out.split_whitespace();
    let n: u32 = words.next().unwrap().parse().unwrap();
    assert_eq!(
        words.next(),
        Some(libc::EAGAIN.to_string().as_str()),
        "{out}"
    );
    assert!(n <= 32, "{n} processes forked under a limit of 32");
    // A real bomb, then the worker is usable and empty.
    let o = w.exec(":(){ :|:& };:", Duration::from_secs(3)).unwrap();
    assert!(matches!(o.end, RunEnd::TimedOut | RunEnd::Exited), "{o:?}");
    let o = run(&mut w, "ls /proc | grep -c '^[0-9]'", 10);
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let procs: u32 = stdout(&o).trim().parse().unwrap();
    assert!(procs <= 7, "left-over processes: {procs}");
    let run_id = sandbox.run_id().to_string();
    drop(w);
    assert!(run_containers(&run_id).is_empty());
}

/// A container size limit (`Limits::storage_bytes`, serve's `--max-tree-mb`) is asked of the
/// storage driver, and never keeps a worker from starting where the driver cannot hold it
/// (fuse-overlayfs, vfs: Docker refuses `--storage-opt`, and the worker starts without it;
/// where it holds, which depends on the backing file system, the big write may fail).
#[test]
fn a_storage_limit_the_driver_cannot_hold_never_stops_a_start() {
    if !docker_or_skip("a_storage_limit_the_driver_cannot_hold_never_stops_a_start") {
        return;
    }
    let driver = std::process::Command::new("docker")
        .args(["info", "--format", "{{.Driver}}"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let (_sandbox, env) = demo_env(Limits {
        storage_bytes: Some(64 << 20),
        ..Limits::default()
    });
    // Two workers: the second starts after the first learnt what the driver takes.
    for i in 0..2 {
        let mut w = env.worker(i).unwrap();
        let o = run(
            &mut w,
            "dd if=/dev/zero of=big bs=1M count=128 2>/dev/null; echo rc=$?; rm -f big",
            120,
        );
        let out = stdout(&o);
        if matches!(driver.as_str(), "fuse-overlayfs" | "vfs") {
            assert!(out.contains("rc=0"), "{driver}: {out}");
        } else {
            assert!(out.contains("rc="), "{driver}: {out}");
        }
        let o = run(&mut w, "echo ok > small && cat small", 30);
        assert_eq!(stdout(&o).trim(), "ok", "{o:?}");
    }
}

/// One process that allocates without bound, and processes that together exceed the
/// container's memory, are ended by the OOM killer (the cgroup is the limit, not the address
/// space); the output says so and the kills are counted.
#[test]
fn memory_hogs_are_contained() {
    if !docker_or_skip("memory_hogs_are_contained") {
        return;
    }
    let (sandbox, env) = demo_env(Limits {
        memory_bytes: 256 << 20,
        ..Limits::default()
    });
    let mut w = env.worker(0).unwrap();
    let o = run(
        &mut w,
        "python -c 'a = []\nwhile True: a.append(b\"x\" * (8 << 20))'",
        60,
    );
    assert!(o.oom_kills >= 1, "{o:?}");
    assert_eq!(o.exit_code, None, "{o:?}");
    assert!(stderr(&o).contains("out of memory"), "{}", stderr(&o));
    let hog = "import time\na = b\"x\" * (150 << 20)\ntime.sleep(20)";
    let o = run(
        &mut w,
        &format!("for i in 1 2 3 4; do python -c '{hog}' & done; wait"),
        60,
    );
    assert!(stderr(&o).contains("out of memory"), "{o:?}");
    assert!(o.oom_kills >= 1, "{o:?}");
    // The worker is usable afterwards.
    let o = run(&mut w, "echo ok", 10);
    assert_eq!(stdout(&o).trim(), "ok");
    let run_id = sandbox.run_id().to_string();
    drop(w);
    assert!(run_containers(&run_id).is_empty());
}

/// There is no network inside a container.
#[test]
fn network_is_unreachable() {
    if !docker_or_skip("network_is_unreachable") {
        return;
    }
    let (_sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let o = run(
        &mut w,
        "python -c 'import socket; socket.create_connection((\"1.1.1.1\", 80), timeout=5)'",
        30,
    );
    assert_eq!(o.exit_code, Some(1), "{o:?}");
    assert!(stderr(&o).contains("unreachable"), "{}", stderr(&o));
    let o = run(
        &mut w,
        "python -c 'import socket; socket.getaddrinfo(\"example.com\", 80)'",
        30,
    );
    assert_eq!(o.exit_code, Some(1), "{o:?}");
    let o = run(&mut w, "ls /sys/class/net", 10);
    assert_eq!(stdout(&o).trim(), "lo", "{o:?}");
}

/// Files deleted or added under /testbed are restored by `reset`, even when the command wrecks
/// the git metadata (the container is then replaced).
#[test]
fn reset_restores_a_clean_tree() {
    if !docker_or_skip("reset_restores_a_clean_tree") {
        return;
    }
    let (sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let clean = |w: &mut Box<dyn Worker>| {
        let o = run(
            w,
            "git status --porcelain --ignored; ls pyshelf | wc -l",
            30,
        );
        assert_eq!(o.exit_code, Some(0), "{o:?}");
        stdout(&o)
    };
    let pristine = clean(&mut w);
    run(
        &mut w,
        "rm -rf /testbed/pyshelf /testbed/tests/*; echo x > new.txt; mkdir -p build/x",
        30,
    );
    assert_ne!(clean(&mut w), pristine);
    w.reset().unwrap();
    assert_eq!(clean(&mut w), pristine);
    // A copy of the worktree with its `.git` (what `copy_tree('.', 'fr')` makes): a nested
    // repository, which a single `git clean -f` keeps.
    run(&mut w, "mkdir fr && cp -r .git tests fr/", 30);
    assert_ne!(clean(&mut w), pristine);
    w.reset().unwrap();
    assert_eq!(clean(&mut w), pristine);
    run(&mut w, "rm -rf /testbed/.git /testbed/pyshelf", 30);
    w.reset().unwrap();
    assert_eq!(clean(&mut w), pristine);
    let run_id = sandbox.run_id().to_string();
    assert_eq!(run_containers(&run_id).len(), 1);
}

/// Patches apply with git; a bad patch is a patch error; scratch files are read and cleared.
#[test]
fn patches_and_scratch_files() {
    if !docker_or_skip("patches_and_scratch_files") {
        return;
    }
    let (_sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let first = run(&mut w, "head -1 README.md; sed -n 2p README.md", 10);
    let lines: Vec<&str> = first
        .stdout
        .split(|b| *b == b'\n')
        .map(|l| std::str::from_utf8(l).unwrap())
        .collect();
    let patch = format!(
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,3 @@\n {}\n+added by a patch\n {}\n",
        lines[0], lines[1]
    );
    w.apply_patch(&patch).unwrap();
    let o = run(&mut w, "sed -n 2p README.md", 10);
    assert_eq!(stdout(&o).trim(), "added by a patch");
    match w.apply_patch("diff --git a/nope b/nope\n--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-x\n+y\n") {
        Err(SandboxError::Patch(msg)) => assert!(msg.contains("nope"), "{msg}"),
        other => panic!("{other:?}"),
    }
    w.reset().unwrap();
    let o = run(&mut w, "git status --porcelain", 10);
    assert_eq!(stdout(&o), "");

    assert_eq!(w.read_scratch("r.txt").unwrap(), None);
    run(&mut w, "printf 'a\\0b' > \"$SWE_FORGE_SCRATCH/r.txt\"", 10);
    assert_eq!(
        w.read_scratch("r.txt").unwrap().as_deref(),
        Some(&b"a\0b"[..])
    );
    w.clear_scratch().unwrap();
    assert_eq!(w.read_scratch("r.txt").unwrap(), None);
    // Only the two `dir:` headers and the files holding this command's own output remain.
    let o = run(
        &mut w,
        "ls -A /scratch /tmp | grep -v '^.swe-forge-std' | wc -w",
        10,
    );
    assert_eq!(stdout(&o).trim(), "2", "{o:?}");
    // A file too big to come back with the command is read on demand.
    run(
        &mut w,
        "head -c 20000000 /dev/zero > \"$SWE_FORGE_SCRATCH/big\"",
        30,
    );
    assert_eq!(
        w.read_scratch("big").unwrap().map(|b| b.len()),
        Some(20_000_000)
    );
    assert_eq!(w.read_scratch("absent").unwrap(), None);
}

/// pytest runs in the container through the runner: selected tests, then the whole suite with
/// per-test coverage.
#[test]
fn pytest_runs_in_the_container() {
    if !docker_or_skip("pytest_runs_in_the_container") {
        return;
    }
    let repo = demo_repo();
    let (_sandbox, env) = demo_env(Limits::default());
    let mut w = env.worker(0).unwrap();
    let runner = Pytest::new(
        None,
        repo.profile.test_files.clone(),
        repo.profile.python_path.clone(),
    );
    let (all, coverage) = runner
        .run_with_coverage(w.as_mut(), RunBudget::wall(Duration::from_secs(300)))
        .unwrap();
    assert_eq!(all.end, RunEnd::Exited, "{}", all.summary());
    assert!(all.results.len() >= 100, "{}", all.summary());
    assert!(
        all.results.values().all(|r| r.status == TestStatus::Passed),
        "{}",
        all.summary()
    );
    assert!(
        coverage.covered_lines() > 100,
        "coverage: {} lines",
        coverage.covered_lines()
    );
    let some: Vec<String> = all.results.keys().take(3).cloned().collect();
    let r = runner
        .run(
            w.as_mut(),
            "screen",
            Some(&some),
            RunBudget::wall(Duration::from_secs(120)),
        )
        .unwrap();
    assert_eq!(r.results.len(), 3, "{}", r.summary());
    assert!(r.failures().is_empty(), "{}", r.summary());
}
