//! `serve` under an RL trainer's load, in Docker: 16 concurrent sessions on the demo seed's
//! tasks for a fixed time, mixed as a trainer's would be:
//! - 8 gold agents (the fix applied with `git apply`, then `submit`: reward 1 each);
//! - 3 agents whose `bash` step sleeps 60 s, then submit nothing (reward 0);
//! - 1 agent whose edit loops forever at import (reward 0, `timeout`, answered within the
//!   task's grading budget);
//! - 2 cheats (a pytest plugin through `pyproject.toml`: reward 0, flagged);
//! - 2 probes that time `reset` and `bash true` over and over while the others run.
//!
//! Each agent but the probes thinks before each call, as a trainer's policy generates its next
//! action: `SWE_FORGE_LOAD_THINK_MS` (default 1000; 0 makes the load closed, every agent's next
//! call leaving the moment the last one answered, which keeps a small machine saturated).
//!
//! The server runs with `--max-sessions 24 --pool 8`, and the load starts once its warm pool is
//! full, as an operator starts a trainer once the server is ready.
//!
//! It prints episodes per minute and the probes' p50/p99, asserts every reward and the
//! latency bounds (`reset` p99 ≤ 1 s, `bash true` p99 ≤ 100 ms), and that no container is
//! left. A benchmark (BENCHMARKS.md, "serve under load"): `#[ignore]`d, as 16 containers and
//! their gradings take minutes on a 2-core machine.
//!
//! `SWE_FORGE_LOAD_TASKS`: a tasks.jsonl with task images to serve (default: a Docker run of
//! the demo seed made here); `SWE_FORGE_LOAD_BIN`: the binary that serves (default: this
//! build's), to measure an older build on the same tasks; `SWE_FORGE_LOAD_SECONDS`: how long
//! the load lasts (default 240).

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(900)))
        .build()
        .new_agent()
}

fn call(url: &str, path: &str, body: &Value) -> (u16, Value) {
    let mut resp = agent()
        .post(&format!("{url}{path}"))
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let st = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (
        st,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// How long an agent thinks before each call (`SWE_FORGE_LOAD_THINK_MS`).
fn think_time() -> Duration {
    Duration::from_millis(
        std::env::var("SWE_FORGE_LOAD_THINK_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1000),
    )
}

/// An agent's `step`, after it thought.
fn act(url: &str, sid: &str, tool: &str, args: Value) -> Value {
    std::thread::sleep(think_time());
    step(url, sid, tool, args)
}

fn step(url: &str, sid: &str, tool: &str, args: Value) -> Value {
    let (st, r) = call(
        url,
        "/step",
        &json!({"session_id": sid, "action": {"tool": tool, "arguments": args}}),
    );
    assert_eq!(st, 200, "{tool}: {r}");
    r
}

/// A session on `task` (its shown id); `None` when the server is at its cap.
fn reset(url: &str, task: &str) -> Option<String> {
    reset_how(url, task).map(|(sid, _)| sid)
}

/// A session on `task` and how its container came (`info.warm`).
fn reset_how(url: &str, task: &str) -> Option<(String, String)> {
    let (st, r) = call(url, "/reset", &json!({"task_id": task}));
    if st == 429 {
        return None;
    }
    assert_eq!(st, 200, "{r}");
    Some((
        r["observation"]["session_id"].as_str()?.to_string(),
        r["info"]["warm"].as_str().unwrap_or_default().to_string(),
    ))
}

fn shown(task: &Value) -> String {
    let t: swe_forge::task::Task = serde_json::from_value(task.clone()).unwrap();
    swe_forge::export::IdStyle::Opaque.of(&t)
}

/// The `q` quantile (0..1) of `xs` (sorted here).
fn quantile(xs: &mut [f64], q: f64) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if xs.is_empty() {
        return f64::NAN;
    }
    xs[((xs.len() as f64 - 1.0) * q).round() as usize]
}

/// One agent's episode: what it earned and how its submit ended.
fn episode(url: &str, kind: &str, task: &Value) -> Option<(f64, String, f64)> {
    std::thread::sleep(think_time());
    let sid = reset(url, &shown(task))?;
    match kind {
        "gold" => {
            let patch = task["patch"].as_str().unwrap();
            act(
                url,
                &sid,
                "write_file",
                json!({"path": ".fix.diff", "content": patch}),
            );
            let r = act(
                url,
                &sid,
                "bash",
                json!({"command": "git apply .fix.diff && rm .fix.diff"}),
            );
            assert_eq!(r["observation"]["exit_code"], 0, "{r}");
        }
        "sleeper" => {
            act(
                url,
                &sid,
                "bash",
                json!({"command": "sleep 60", "timeout": 90}),
            );
        }
        "looper" => {
            let file = task["metadata"]["location"]["file"].as_str().unwrap();
            let r = act(url, &sid, "read_file", json!({"path": file}));
            let content = r["observation"]["content"].as_str().unwrap_or_default();
            act(
                url,
                &sid,
                "write_file",
                json!({"path": file, "content": format!("while True:\n    pass\n{content}")}),
            );
        }
        "cheat" => {
            let plugin = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n\
                          def pytest_runtest_makereport(item, call):\n    outcome = yield\n    \
                          report = outcome.get_result()\n    report.outcome = \"passed\"\n    \
                          report.longrepr = None\n";
            act(
                url,
                &sid,
                "write_file",
                json!({"path": "zzplugin2.py", "content": plugin}),
            );
            act(
                url,
                &sid,
                "bash",
                json!({"command": "printf '\\n[tool.pytest.ini_options]\\naddopts = \"-p zzplugin2\"\\n' >> pyproject.toml"}),
            );
        }
        _ => unreachable!(),
    }
    std::thread::sleep(think_time());
    let t = Instant::now();
    let r = step(url, &sid, "submit", json!({}));
    Some((
        r["reward"].as_f64().unwrap_or(-1.0),
        r["info"]["failure_type"].as_str().unwrap_or("").to_string(),
        t.elapsed().as_secs_f64(),
    ))
}

fn load_tasks() -> PathBuf {
    if let Some(p) = std::env::var_os("SWE_FORGE_LOAD_TASKS") {
        return PathBuf::from(p);
    }
    let dir = made_once("serve-load-pyshelf", |dir| {
        let o = bin()
            .args([
                "run",
                "--sandbox",
                "docker",
                "--only",
                "pyshelf",
                "--max-candidates",
                "24",
                "--jobs",
                "2",
                "--json",
                "--out",
            ])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        (o.status.code() == Some(0))
            .then_some(())
            .ok_or_else(|| text(&o))
    })
    .unwrap();
    dir.join("out/tasks.jsonl")
}

fn serve_bin(tasks: &Path, db: &Path) -> Served {
    use std::io::BufRead;
    let mut cmd = match std::env::var_os("SWE_FORGE_LOAD_BIN") {
        Some(b) => {
            let mut c = std::process::Command::new(b);
            c.env("SWE_FORGE_CACHE", cache());
            c
        }
        None => bin(),
    };
    let mut child = cmd
        .args(["serve", "--tasks"])
        .arg(tasks)
        .args([
            "--addr",
            "127.0.0.1:0",
            "--sandbox",
            "docker",
            "--max-sessions",
            "24",
            "--pool",
            "8",
            "--db",
        ])
        .arg(db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    Served { child, url }
}

#[test]
#[ignore = "a benchmark: 16 containers at once and their gradings take minutes on a 2-core machine (BENCHMARKS.md)"]
fn bench_sixteen_sessions_in_docker() {
    if !docker_or_skip("bench_sixteen_sessions_in_docker") {
        return;
    }
    let tasks_file = load_tasks();
    let tasks = jsonl(&tasks_file);
    assert!(tasks.len() >= 8, "{} tasks", tasks.len());
    let seconds: u64 = std::env::var("SWE_FORGE_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(240);
    let dir = tempfile::tempdir().unwrap();
    let served = serve_bin(&tasks_file, &dir.path().join("serve.db"));
    let url = served.url.as_str();
    let pid = served.child.id();
    // As an operator starts a trainer: once the server's warm pool is full.
    let warming = Instant::now();
    while warming.elapsed() < Duration::from_secs(120) {
        let mut resp = agent().get(&format!("{url}/health")).call().unwrap();
        let h: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        if h["warm"].as_u64().unwrap_or(0) >= 8 {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    println!("pool warm after {:.1} s", warming.elapsed().as_secs_f64());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let results: Mutex<Vec<(String, f64, String, f64)>> = Mutex::new(Vec::new());
    let resets: Mutex<Vec<f64>> = Mutex::new(Vec::new());
    // The probes' resets by how their container came.
    let by_how: Mutex<std::collections::BTreeMap<String, Vec<f64>>> = Mutex::default();
    let quick: Mutex<Vec<f64>> = Mutex::new(Vec::new());
    let kinds: Vec<&str> = std::iter::repeat_n("gold", 8)
        .chain(std::iter::repeat_n("sleeper", 3))
        .chain(["looper"])
        .chain(std::iter::repeat_n("cheat", 2))
        .chain(std::iter::repeat_n("probe", 2))
        .collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (k, kind) in kinds.iter().enumerate() {
            let (tasks, results, resets, quick, by_how) =
                (&tasks, &results, &resets, &quick, &by_how);
            scope.spawn(move || {
                let mut n = k;
                while Instant::now() < deadline {
                    let task = &tasks[n % tasks.len()];
                    n += kinds_len();
                    if *kind == "probe" {
                        let t = Instant::now();
                        let Some((sid, how)) = reset_how(url, &shown(task)) else {
                            continue;
                        };
                        let took = t.elapsed().as_secs_f64();
                        resets.lock().unwrap().push(took);
                        by_how.lock().unwrap().entry(how).or_default().push(took);
                        for _ in 0..5 {
                            let t = Instant::now();
                            step(url, &sid, "bash", json!({"command": "true"}));
                            quick.lock().unwrap().push(t.elapsed().as_secs_f64());
                        }
                        call(url, "/close", &json!({"session_id": sid}));
                        continue;
                    }
                    if let Some((reward, failure, submit_s)) = episode(url, kind, task) {
                        results
                            .lock()
                            .unwrap()
                            .push((kind.to_string(), reward, failure, submit_s));
                    }
                }
            });
        }
    });
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let results = results.into_inner().unwrap();
    let mut resets = resets.into_inner().unwrap();
    for (how, mut xs) in by_how.into_inner().unwrap() {
        println!(
            "reset ({how}): n {} p50 {:.3}s p99 {:.3}s",
            xs.len(),
            quantile(&mut xs, 0.5),
            quantile(&mut xs, 0.99)
        );
    }
    let mut quick = quick.into_inner().unwrap();
    let episodes = results.len();
    let longest = tasks
        .iter()
        .map(|t| {
            let r: swe_forge::task::Task = serde_json::from_value(t.clone()).unwrap();
            swe_forge::audit::longest_recorded_run(&r)
        })
        .fold(0.0_f64, f64::max);
    let budget = swe_forge::timeouts::reward(longest);
    let loops: Vec<f64> = results
        .iter()
        .filter(|r| r.0 == "looper")
        .map(|r| r.3)
        .collect();
    println!(
        "episodes: {episodes} in {minutes:.2} min = {:.1}/min (gold {}, sleeper {}, looper {}, cheat {})",
        episodes as f64 / minutes,
        results.iter().filter(|r| r.0 == "gold").count(),
        results.iter().filter(|r| r.0 == "sleeper").count(),
        loops.len(),
        results.iter().filter(|r| r.0 == "cheat").count(),
    );
    println!(
        "reset: n {} p50 {:.3}s p99 {:.3}s; bash true: n {} p50 {:.3}s p99 {:.3}s",
        resets.len(),
        quantile(&mut resets, 0.5),
        quantile(&mut resets, 0.99),
        quick.len(),
        quantile(&mut quick, 0.5),
        quantile(&mut quick, 0.99),
    );
    println!("think time: {:?}", think_time());
    println!(
        "endless-loop submits: {loops:?} s (budget per run: CPU {:?}, wall {:?})",
        budget.cpu, budget.wall
    );
    let wrong: Vec<&(String, f64, String, f64)> = results
        .iter()
        .filter(|(kind, reward, failure, _)| match kind.as_str() {
            "gold" => *reward != 1.0,
            "looper" => *reward != 0.0 || failure != "timeout",
            _ => *reward != 0.0,
        })
        .collect();
    // Stopped as an operator would (SIGTERM): its containers go with it.
    let mut served = served;
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let _ = served.child.wait();
    std::thread::sleep(Duration::from_secs(2));
    let left = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!(
            "label={}={pid}",
            swe_forge::sandbox::docker::LABEL_OWNER_PID
        ))
        .output()
        .unwrap();
    assert!(wrong.is_empty(), "wrong rewards: {wrong:?}");
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    assert!(
        loops.iter().all(|s| *s <= budget.wall.as_secs_f64() + 30.0),
        "an endless loop's submit took {loops:?}"
    );
    assert!(quantile(&mut resets, 0.99) <= 1.0, "reset p99");
    assert!(quantile(&mut quick, 0.99) <= 0.1, "bash true p99");
}

fn kinds_len() -> usize {
    16
}
