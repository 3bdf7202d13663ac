//! `serve` under a trainer's load and a hostile page, through the real binary on a small local
//! run of the demo seed (`--unsafe-local`):
//! - a request whose `Host` does not name the server, and a WebSocket upgrade from a foreign
//!   page's `Origin`, are refused (403);
//! - while one session's `bash` call sleeps, `/state` of that session, `/health`, a new
//!   `reset` and another session's steps all answer before it ends (no session waits on
//!   another);
//! - 20 concurrent resets against `--max-sessions 4` (with `--pool 2`: warm workers count
//!   under the cap) start at most 4 sessions (the others get 429);
//! - a submit whose edit loops forever is stopped by the CPU limit in its first grading run
//!   (`failure_type: timeout`, one run), and the server goes on;
//! - a session writing 2 GiB under its repository is stopped at `--max-tree-mb` (reward 0,
//!   `exceeded-storage`), and the server goes on.

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .new_agent()
}

fn call(url: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let a = agent();
    let full = format!("{url}{path}");
    let resp = match method {
        "GET" => a.get(&full).call(),
        _ => a
            .post(&full)
            .header("Content-Type", "application/json")
            .send(body.map(|b| b.to_string()).unwrap_or_default()),
    };
    let mut resp = resp.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn step(url: &str, session: &str, tool: &str, args: Value) -> Value {
    let (st, r) = call(
        url,
        "POST",
        "/step",
        Some(&json!({"session_id": session, "action": {"tool": tool, "arguments": args}})),
    );
    assert_eq!(st, 200, "{r}");
    r
}

fn reset(url: &str, task: &str) -> String {
    let (st, r) = call(url, "POST", "/reset", Some(&json!({"task_id": task})));
    assert_eq!(st, 200, "{r}");
    r["observation"]["session_id"].as_str().unwrap().to_string()
}

/// The status line of a raw HTTP/1.1 request with these extra header lines.
fn raw_status(url: &str, path: &str, headers: &str) -> String {
    let addr = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text.lines().next().unwrap_or("").to_string()
}

#[test]
fn no_session_waits_on_another_and_hostile_pages_are_refused() {
    let (_, dir) = run_demo_small();
    let tasks_file = dir.path().join("out/tasks.jsonl");
    let tasks = jsonl(&tasks_file);
    let task = &tasks[0];
    // Under the opaque id the server shows.
    let record: swe_forge::task::Task = serde_json::from_value(task.clone()).unwrap();
    let id = swe_forge::export::IdStyle::Opaque.of(&record);
    let served = serve_with(
        &tasks_file,
        &dir.path().join("serve.db"),
        "local",
        &["--max-sessions", "4", "--pool", "2", "--max-tree-mb", "64"],
    );
    let url = served.url.as_str();
    let host = url.trim_start_matches("http://");

    // Names and pages.
    assert!(
        raw_status(url, "/health", &format!("Host: {host}\r\n")).contains(" 200"),
        "the server's own address"
    );
    let port = host.rsplit(':').next().unwrap();
    assert!(raw_status(url, "/health", &format!("Host: localhost:{port}\r\n")).contains(" 200"));
    let rebound = raw_status(url, "/health", "Host: attacker.example\r\n");
    assert!(rebound.contains(" 403"), "{rebound}");
    let ws = "Upgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    let foreign = raw_status(
        url,
        "/ws",
        &format!("Host: {host}\r\nOrigin: https://attacker.example\r\n{ws}"),
    );
    assert!(foreign.contains(" 403"), "{foreign}");
    let own = raw_status(
        url,
        "/ws",
        &format!("Host: {host}\r\nOrigin: http://{host}\r\n{ws}"),
    );
    assert!(own.contains(" 101"), "{own}");

    // One session's call sleeps; everything else answers before it ends.
    let a = reset(url, &id);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sleeper = scope.spawn(|| {
            let r = step(url, &a, "bash", json!({"command": "sleep 10; echo woke"}));
            done.store(true, Ordering::SeqCst);
            r
        });
        // Until the call runs, /state answers from the session; then from what is kept
        // outside its lock, without waiting.
        loop {
            let (st, s) = call(url, "GET", &format!("/state?session_id={a}"), None);
            assert_eq!(st, 200, "{s}");
            if s["detail"]
                .as_str()
                .is_some_and(|d| d.contains("is running"))
            {
                break;
            }
            assert!(
                !done.load(Ordering::SeqCst),
                "the sleeping call ended first"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let (st, h) = call(url, "GET", "/health", None);
        assert_eq!((st, &h["sessions"]), (200, &json!(1)), "{h}");
        assert!(!done.load(Ordering::SeqCst), "/health waited for the call");
        let b = reset(url, &id);
        assert!(!done.load(Ordering::SeqCst), "reset waited for the call");
        let r = step(url, &b, "bash", json!({"command": "echo quick"}));
        assert!(
            r["observation"]["output"]
                .as_str()
                .is_some_and(|o| o.contains("quick")),
            "{r}"
        );
        assert!(
            !done.load(Ordering::SeqCst),
            "another session's step waited for the call"
        );
        let (st, m) = call(url, "GET", "/metrics", None);
        assert_eq!(st, 200, "{m}");
        assert!(!done.load(Ordering::SeqCst), "/metrics waited for the call");
        let r = sleeper.join().unwrap();
        assert!(
            r["observation"]["output"]
                .as_str()
                .is_some_and(|o| o.contains("woke")),
            "{r}"
        );
        for s in [&a, &b] {
            let (st, _) = call(url, "POST", "/close", Some(&json!({"session_id": s})));
            assert_eq!(st, 200);
        }
    });

    // 20 resets at once against --max-sessions 4.
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|_| scope.spawn(|| call(url, "POST", "/reset", Some(&json!({"task_id": id})))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let statuses: Vec<u16> = answers.iter().map(|(st, _)| *st).collect();
    let opened: Vec<&str> = answers
        .iter()
        .filter_map(|(_, r)| r["observation"]["session_id"].as_str())
        .collect();
    assert!((1..=4).contains(&opened.len()), "{statuses:?}");
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 429),
        "{statuses:?}"
    );
    let (_, h) = call(url, "GET", "/health", None);
    assert_eq!(h["sessions"], json!(opened.len()), "{h}");
    for s in &opened {
        let (st, _) = call(url, "POST", "/close", Some(&json!({"session_id": s})));
        assert_eq!(st, 200);
    }

    // An edit that loops forever: the first grading run hits the CPU limit, no repeat runs.
    let file = task["metadata"]["location"]["file"].as_str().unwrap();
    let loop_session = reset(url, &id);
    let r = step(url, &loop_session, "read_file", json!({"path": file}));
    let content = r["observation"]["content"].as_str().unwrap().to_string();
    let r = step(
        url,
        &loop_session,
        "write_file",
        json!({"path": file, "content": format!("while True:\n    pass\n{content}")}),
    );
    assert!(r["observation"]["error"].is_null(), "{r}");
    let r = step(url, &loop_session, "submit", json!({}));
    assert_eq!(r["reward"], 0.0, "{r}");
    assert_eq!(r["info"]["failure_type"], "timeout", "{r}");
    let runs = r["info"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run, not the three repeats: {runs:?}");
    let (st, h) = call(url, "GET", "/health", None);
    assert_eq!((st, h["status"].as_str()), (200, Some("ok")), "{h}");

    // 2 GiB written under the repository: the write stops at the limit (64 MiB here), and the
    // episode ends with reward 0; the server goes on.
    let writer = reset(url, &id);
    let r = step(
        url,
        &writer,
        "bash",
        json!({"command": "dd if=/dev/zero of=big.bin bs=1M count=2048 2>&1 | tail -1; ls -l big.bin"}),
    );
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["reward"], 0.0, "{r}");
    assert_eq!(r["info"]["failure_type"], "exceeded-storage", "{r}");
    let (_, st) = call(url, "GET", &format!("/state?session_id={writer}"), None);
    assert_eq!(st["status"], "submitted", "{st}");
    let other = reset(url, &id);
    let r = step(url, &other, "bash", json!({"command": "echo still here"}));
    assert!(
        r["observation"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("still here")),
        "{r}"
    );
    assert_eq!(r["done"], false, "{r}");
}
