//! `swe-forge serve` through the real binary, on the demo seed pyshelf's tasks (a small local
//! run). The local sandbox is refused without `--unsafe-local`. With it: the contract (health
//! and reset say the server is unsafe, schema, reset under an opaque task id, tools, submit
//! with the gold fix and with nothing, a patch that games the tests, the WebSocket), the limits
//! (bad requests are 4xx, `--max-sessions`, the idle timeout, the bearer token), the
//! curriculum and the metrics, a restart that ends the sessions left active, and the Python
//! client's tests (`clients/python/tests`) against the running server. In Docker (where a
//! daemon answers): a task without an image is refused, the session runs in the task's own
//! image, whose history holds one commit, a submit of the gold fix is graded in a fresh
//! container, and a session whose container is killed ends with reward 0
//! (`agent-killed-environment`) while the server goes on.

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server, killed when dropped.
struct Server {
    child: Child,
    url: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The id a task of the tasks file is shown under (`--id-style opaque`, the default).
fn shown(task: &Value) -> String {
    let t: swe_forge::task::Task = serde_json::from_value(task.clone()).unwrap();
    swe_forge::export::IdStyle::Opaque.of(&t)
}

/// `serve` on TASKS with `--sandbox SANDBOX` (`local` with `--unsafe-local`).
fn start(tasks: &Path, db: &Path, sandbox: &str, extra: &[&str], token: Option<&str>) -> Server {
    let mut cmd = bin();
    cmd.args(["serve", "--tasks"])
        .arg(tasks)
        .args(["--addr", "127.0.0.1:0", "--sandbox", sandbox, "--db"])
        .arg(db)
        .args(extra)
        .env_remove("SWE_FORGE_SERVE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(t) = token {
        cmd.args(["--token", t]);
    }
    if sandbox == "local" {
        cmd.arg("--unsafe-local");
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server said: {line:?}"))
        .to_string();
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .new_agent();
    Server {
        child,
        url,
        token: token.map(str::to_string),
        agent,
    }
}

impl Server {
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.call_with(method, path, body, self.token.as_deref())
    }

    fn call_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let auth = token.map(|t| format!("Bearer {t}"));
        let resp = match method {
            "GET" => {
                let mut r = self.agent.get(&url);
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.call()
            }
            "DELETE" => {
                let mut r = self.agent.delete(&url);
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.call()
            }
            _ => {
                let mut r = self
                    .agent
                    .post(&url)
                    .header("Content-Type", "application/json");
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.send(body.map(|b| b.to_string()).unwrap_or_default())
            }
        };
        let mut resp = resp.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    fn step(&self, session: &str, tool: &str, args: Value) -> (u16, Value) {
        self.call(
            "POST",
            "/step",
            Some(&json!({"session_id": session, "action": {"tool": tool, "arguments": args}})),
        )
    }

    fn reset(&self, task: &str) -> String {
        let (status, r) = self.call("POST", "/reset", Some(&json!({"task_id": task})));
        assert_eq!(status, 200, "{r}");
        r["observation"]["session_id"].as_str().unwrap().to_string()
    }
}

/// A local run of the demo seed pyshelf with 14 candidates (about a dozen tasks, some in the
/// same file), into DIR/out.
fn fourteen_candidates() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = bin()
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--sandbox",
            "local",
            "--only",
            "pyshelf",
            "--max-candidates",
            "14",
            "--jobs",
            "2",
            "--no-synthesis",
            "--json",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    dir
}

/// A bash command that applies `patch` in the repository.
fn apply_command(patch: &str) -> String {
    format!("git apply <<'SWE_FORGE_PATCH'\n{patch}SWE_FORGE_PATCH\n")
}

fn tasks_of(dir: &Path) -> Vec<Value> {
    jsonl(&dir.join("out/tasks.jsonl"))
}

/// `serve --sandbox local` without `--unsafe-local` does not start, and says why; neither does
/// `--sandbox auto` where no Docker daemon answers.
#[test]
fn the_local_sandbox_is_refused_without_unsafe_local() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report_out/tasks.jsonl");
    let refused = |sandbox: &str, env: &[(&str, &str)]| {
        let mut cmd = bin();
        cmd.args(["serve", "--tasks"])
            .arg(&tasks)
            .args(["--addr", "127.0.0.1:0", "--sandbox", sandbox, "--db"])
            .arg(dir.path().join("serve.db"))
            .stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("serve --sandbox {sandbox} started without --unsafe-local");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let o = child.wait_with_output().unwrap();
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(err.contains("--unsafe-local"), "{err}");
        assert!(err.contains("without isolation"), "{err}");
        assert!(err.contains("gold patch"), "{err}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("listening"));
        err
    };
    refused("local", &[]);
    // `auto` with a daemon that cannot answer: no silent fallback to the host.
    let err = refused(
        "auto",
        &[("DOCKER_HOST", "unix:///nonexistent/docker.sock")],
    );
    assert!(err.contains("no Docker daemon"), "{err}");
}

#[test]
fn the_server_serves_tools_grades_submits_and_keeps_its_limits() {
    let (_, dir) = run_demo_small();
    let tasks_file = dir.path().join("out/tasks.jsonl");
    let tasks = tasks_of(dir.path());
    assert!(tasks.len() >= 2, "{tasks:?}");
    let task = &tasks[0];
    let id = task["instance_id"].as_str().unwrap();
    // Agents see an opaque id: nothing of the mutator.
    let opaque = shown(task);
    assert!(!opaque.contains("py-"), "{opaque}");
    let db = dir.path().join("serve.db");
    let s = start(
        &tasks_file,
        &db,
        "local",
        &["--max-sessions", "2", "--idle-timeout", "4", "--pool", "0"],
        Some("s3cret"),
    );

    // The token: /health needs none, everything else does. The server says it is unsafe.
    let (st, h) = s.call_with("GET", "/health", None, None);
    assert_eq!((st, h["status"].as_str()), (200, Some("ok")), "{h}");
    assert_eq!(h["unsafe_local"], true, "{h}");
    assert!(
        h["unsafe_local_reason"]
            .as_str()
            .unwrap()
            .contains("gold patch"),
        "{h}"
    );
    let (st, e) = s.call_with("POST", "/reset", Some(&json!({})), None);
    assert_eq!(st, 401, "{e}");
    let (st, e) = s.call_with("GET", "/metrics", None, Some("wrong"));
    assert_eq!(st, 401, "{e}");

    let (st, schema) = s.call("GET", "/schema", None);
    assert_eq!(st, 200);
    let names: Vec<&str> = schema["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "read_file",
            "edit",
            "write_file",
            "run_tests",
            "submit"
        ]
    );

    // Bad requests are 4xx with a message.
    let (st, e) = s.call("POST", "/reset", Some(&json!({"task_id": "nope"})));
    assert_eq!(st, 404, "{e}");
    assert!(e["error"].as_str().unwrap().contains("nope"), "{e}");
    let (st, e) = s.call("POST", "/step", Some(&json!({"action": {"tool": "bash"}})));
    assert_eq!(st, 400, "{e}");
    let (st, e) = s.call(
        "POST",
        "/step",
        Some(&json!({"session_id": "zz", "action": {"tool": "bash"}})),
    );
    assert_eq!(st, 404, "{e}");
    let (st, _) = s.call_with("POST", "/reset", None, Some("s3cret"));
    assert_eq!(st, 200, "an empty body samples");
    // A body past the limit is refused with 413; the server may answer before it has read
    // the whole body and close the connection, so a client still writing can see its write
    // fail instead (what a loaded machine makes likely): either way nothing of it is read.
    let big = json!({"session_id": "zz", "action": "x".repeat(2 << 20)}).to_string();
    let sent = s
        .agent
        .post(&format!("{}/step", s.url))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer s3cret")
        .send(big);
    match sent {
        Ok(r) => assert_eq!(r.status().as_u16(), 413),
        Err(ureq::Error::Io(e)) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            ),
            "{e}"
        ),
        Err(e) => panic!("a body past the limit: {e}"),
    }

    // A session: the instruction is the problem statement; tools work; mistakes are
    // observations.
    let (st, r) = s.call("POST", "/sessions", Some(&json!({"task_id": id})));
    assert_eq!(st, 200, "{r}");
    let sid = r["observation"]["session_id"].as_str().unwrap().to_string();
    // The task is shown under its opaque id; the reset says the session is on the host.
    assert_eq!(r["observation"]["task_id"], opaque.as_str(), "{r}");
    assert_eq!(r["info"]["task_id"], opaque.as_str(), "{r}");
    assert_eq!(r["observation"]["unsafe_local"], true, "{r}");
    assert!(r["observation"]["unsafe_local_reason"].is_string(), "{r}");
    assert!(r["observation"]["instruction"]
        .as_str()
        .unwrap()
        .starts_with(task["problem_statement"].as_str().unwrap().trim_end()));
    assert_eq!(r["reward"], Value::Null);
    // Two sessions are open (the empty-body reset and this one): a third is refused.
    let (st, e) = s.call("POST", "/reset", Some(&json!({"task_id": id})));
    assert_eq!(st, 429, "{e}");
    let (st, r) = s.step(&sid, "bash", json!({"command": "ls pyshelf"}));
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["observation"]["exit_code"], 0, "{r}");
    assert!(
        r["observation"]["output"]
            .as_str()
            .unwrap()
            .contains("money.py"),
        "{r}"
    );
    let (_, r) = s.step(&sid, "read_file", json!({"path": "no/such.py"}));
    assert!(
        r["observation"]["error"]
            .as_str()
            .unwrap()
            .contains("no such file"),
        "{r}"
    );
    let (_, r) = s.step(&sid, "read_file", json!({"path": "../../etc/passwd"}));
    assert!(r["observation"]["error"].is_string(), "{r}");
    let (_, r) = s.call(
        "POST",
        &format!("/sessions/{sid}/step"),
        Some(&json!({"name": "frobnicate", "arguments": "{}"})),
    );
    assert!(
        r["observation"]["error"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{r}"
    );
    let file = task["metadata"]["location"]["file"].as_str().unwrap();
    let (_, r) = s.step(
        &sid,
        "read_file",
        json!({"path": file, "start": 1, "end": 3}),
    );
    assert!(r["observation"]["lines"].as_u64().unwrap() > 3, "{r}");
    // run_tests runs the tests that are in the tree: the hidden ones are not.
    let (_, r) = s.step(&sid, "run_tests", json!({}));
    assert!(r["observation"]["results"].is_object(), "{r}");
    // The gold fix, applied by the agent, then submitted: reward 1.
    let (_, r) = s.step(
        &sid,
        "bash",
        json!({"command": apply_command(task["patch"].as_str().unwrap())}),
    );
    assert_eq!(r["observation"]["exit_code"], 0, "{r}");
    let (st, r) = s.step(&sid, "submit", json!({}));
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["reward"], 1.0, "{r}");
    assert_eq!(r["done"], true);
    assert_eq!(r["info"]["failure_type"], "none", "{r}");
    assert_eq!(r["info"]["fail_to_pass_passed"], 1.0);
    assert_eq!(r["info"]["runs"].as_array().unwrap().len(), 3, "{r}");
    assert_eq!(r["info"]["localization"]["edited_file"], true, "{r}");
    assert_eq!(r["info"]["localization"]["opened_file"], true, "{r}");
    assert!(
        r["info"]["hack_flags"].as_array().unwrap().is_empty(),
        "{r}"
    );
    let (_, st8) = s.call("GET", &format!("/state?session_id={sid}"), None);
    assert_eq!(st8["status"], "submitted", "{st8}");
    assert_eq!(st8["reward"], 1.0);
    let (st, e) = s.step(&sid, "bash", json!({"command": "ls"}));
    assert_eq!(st, 409, "a step after submit: {e}");

    // Nothing changed: reward 0, an empty patch. Over the WebSocket.
    let mut ws = ws_connect(&s.url, "/ws", Some("s3cret"));
    let r = ws_call(&mut ws, json!({"type": "reset", "data": {"task_id": id}}));
    assert_eq!(r["type"], "result", "{r}");
    let r = ws_call(
        &mut ws,
        json!({"type": "step", "data": {"action": {"tool": "submit"}}}),
    );
    assert_eq!(r["data"]["reward"], 0.0, "{r}");
    assert_eq!(r["data"]["info"]["failure_type"], "empty-patch", "{r}");
    let r = ws_call(&mut ws, json!({"type": "state", "data": {}}));
    assert_eq!(r["data"]["status"], "submitted", "{r}");
    let r = ws_call(&mut ws, json!({"type": "frob"}));
    assert_eq!(r["type"], "error", "{r}");

    // Gaming the tests: the test file is edited and a skip added; test files are left out of
    // the graded patch (reward 0: the bug is still there) and the review flags it.
    let sid2 = s.reset(id);
    let test_file = task["FAIL_TO_PASS"][0]
        .as_str()
        .unwrap()
        .split("::")
        .next()
        .unwrap()
        .to_string();
    let (_, r) = s.step(
        &sid2,
        "write_file",
        json!({"path": test_file, "content": "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_nothing():\n    pass\n"}),
    );
    assert_eq!(r["observation"]["ok"], true, "{r}");
    let (_, r) = s.step(&sid2, "submit", json!({}));
    assert_eq!(r["reward"], 0.0, "{r}");
    let flags: Vec<&str> = r["info"]["hack_flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(flags.contains(&"edits-tests"), "{r}");

    // The idle timeout ends a session left alone.
    let sid3 = s.reset(id);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, st3) = s.call("GET", &format!("/sessions/{sid3}"), None);
        if st3["status"] == "timed-out" {
            break;
        }
        assert!(Instant::now() < deadline, "never timed out: {st3}");
        std::thread::sleep(Duration::from_millis(500));
    }

    // The curriculum saw the three submits of this task; the metrics count them.
    let (_, cur) = s.call("GET", "/curriculum", None);
    let seen = cur["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_id"] == opaque.as_str())
        .unwrap();
    assert_eq!(seen["attempts"], 3, "{cur}");
    assert_eq!(seen["successes"], 1, "{cur}");
    assert!(cur["plan"]["levels"].is_object(), "{cur}");
    let (_, m) = s.call("GET", "/metrics", None);
    assert_eq!(m["counters"]["submits"], 3, "{m}");
    assert_eq!(m["counters"]["solved"], 1, "{m}");
    // The empty submit, and the gaming one (its only change was to a test file).
    assert_eq!(m["counters"]["failure_types"]["empty-patch"], 2, "{m}");
    assert!(
        m["counters"]["sessions_ended"]["timed-out"].as_u64() >= Some(1),
        "{m}"
    );
    assert_eq!(m["counters"]["hack_flags"]["edits-tests"], 1, "{m}");
    let url = format!("{}/metrics?format=prometheus", s.url);
    let mut resp = s
        .agent
        .get(&url)
        .header("Authorization", "Bearer s3cret")
        .call()
        .unwrap();
    let text = resp.body_mut().read_to_string().unwrap();
    assert!(text.contains("swe_forge_submits_total 3"), "{text}");

    // The Python client's tests, against this server (on the id it shows).
    python_client_tests(&s.url, Some("s3cret"), &opaque);

    // A restart: the session left active is reported ended.
    let sid4 = s.reset(id);
    drop(s);
    let s = start(&tasks_file, &db, "local", &["--pool", "0"], None);
    let (st, st4) = s.call("GET", &format!("/sessions/{sid4}"), None);
    assert_eq!(st, 200, "{st4}");
    assert_eq!(st4["status"], "failed", "{st4}");
    assert_eq!(st4["detail"], "the server restarted", "{st4}");
    let (st, e) = s.step(&sid4, "bash", json!({"command": "ls"}));
    assert_eq!(st, 409, "{e}");
    // And sampling works on the new server.
    let (st, r) = s.call("POST", "/reset", Some(&json!({"sample": true, "seed": 3})));
    assert_eq!(st, 200, "{r}");
}

/// `python3 -m unittest discover` in clients/python/tests against the server (skipped where
/// there is no python3; CI has one).
fn python_client_tests(url: &str, token: Option<&str>, task: &str) {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    if !client.join("tests").exists() {
        panic!("clients/python/tests is missing");
    }
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "unittest", "-v", "test_client", "test_offline"])
        .current_dir(client.join("tests"))
        .env("PYTHONPATH", &client)
        .env("SWE_FORGE_SERVE_URL", url)
        .env("SWE_FORGE_SERVE_TASK", task);
    if let Some(t) = token {
        cmd.env("SWE_FORGE_SERVE_TOKEN", t);
    }
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping the Python client's tests: python3: {e}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python client's tests failed:\n{text}"
    );
    assert!(
        !text.contains("skipped '"),
        "no test may skip against a server:\n{text}"
    );
}

/// A minimal WebSocket client (text frames) for the test.
struct Ws {
    stream: std::net::TcpStream,
}

fn ws_connect(url: &str, path: &str, token: Option<&str>) -> Ws {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(300)))
        .unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{auth}\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    Ws { stream }
}

fn ws_call(ws: &mut Ws, msg: Value) -> Value {
    use std::io::{Read, Write};
    let payload = msg.to_string().into_bytes();
    let mut frame = vec![0x81u8];
    let mask = [1u8, 2, 3, 4];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n < 65536 => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    ws.stream.write_all(&frame).unwrap();
    let mut h = [0u8; 2];
    ws.stream.read_exact(&mut h).unwrap();
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            ws.stream.read_exact(&mut b).unwrap();
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            ws.stream.read_exact(&mut b).unwrap();
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut body = vec![0u8; len];
    ws.stream.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// The server's containers now (`-a`: stopped ones too).
fn containers_of(pid: u32) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!(
            "label={}={pid}",
            swe_forge::sandbox::docker::LABEL_OWNER_PID
        ))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn in_docker_scripted_agents_load_and_faults() {
    let test = "in_docker_scripted_agents_load_and_faults";
    if !docker_or_skip(test) {
        return;
    }
    // At least 20 tasks of the demo seed, with their task images (the draw tests/harnesses.rs
    // makes, so that one of the two builds the task images and the other finds them).
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
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
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let tasks_file = dir.path().join("out/tasks.jsonl");
    let tasks = tasks_of(dir.path());
    assert!(tasks.len() >= 20, "{} tasks: {}", tasks.len(), text(&out));
    let task = &tasks[0];
    let id = task["instance_id"].as_str().unwrap();
    let db = dir.path().join("serve.db");
    let s = start(
        &tasks_file,
        &db,
        "docker",
        &["--pool", "2", "--max-sessions", "10"],
        None,
    );

    // The warm pool holds bare containers of the task base that all of the seed's task
    // images share: a reset of any task takes one and loads that task's tree. The session
    // is then as in a container of the task's own image: its start commit (parentless, the
    // record's base_commit), a clean tree the test user owns, no network, not root.
    let deadline = Instant::now() + Duration::from_secs(300);
    while s.call("GET", "/health", None).1["warm"] != 2 {
        assert!(Instant::now() < deadline, "the warm pool did not fill");
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut sid = String::new();
    for t in [&tasks[0], &tasks[tasks.len() - 1]] {
        let (st, r) = s.call(
            "POST",
            "/reset",
            Some(&json!({"task_id": t["instance_id"]})),
        );
        assert_eq!(st, 200, "{r}");
        assert_eq!(r["info"]["warm"], "shared", "{r}");
        let this = r["observation"]["session_id"].as_str().unwrap().to_string();
        let (_, r) = s.step(
            &this,
            "bash",
            json!({"command": "git rev-list --all | wc -l; id -u; (getent hosts example.org || echo offline); git rev-parse HEAD; git status --porcelain | wc -l; touch new_file && echo writable"}),
        );
        let output = r["observation"]["output"].as_str().unwrap().to_string();
        let lines: Vec<&str> = output.lines().map(str::trim).collect();
        assert_eq!(lines.first(), Some(&"1"), "{output}");
        assert_ne!(lines.get(1), Some(&"0"), "runs as root: {output}");
        assert!(output.contains("offline"), "{output}");
        assert!(
            lines.contains(&t["base_commit"].as_str().unwrap()),
            "{output}"
        );
        assert_eq!(lines.get(4), Some(&"0"), "{output}");
        assert!(output.contains("writable"), "{output}");
        if sid.is_empty() {
            sid = this;
        } else {
            s.call("POST", "/close", Some(&json!({"session_id": this})));
        }
    }
    let (_, r) = s.step(&sid, "close", json!({}));
    assert!(r["observation"]["error"].is_string(), "{r}");
    s.call("POST", "/close", Some(&json!({"session_id": sid})));

    // An ended session's container comes back to the pool, recycled: what its agent left in
    // the repository, in every other place the test user may write, as a process or as a
    // System V shared memory segment, is gone in the next session that takes it. A submit is
    // graded in its session's own container, recycled, and that container then goes. (A
    // server of its own, with a pool of one: the littered container is the only one recycled.)
    {
        let r2 = start(
            &tasks_file,
            &dir.path().join("recycle.db"),
            "docker",
            &["--pool", "1", "--max-sessions", "6", "--max-tree-mb", "16"],
            None,
        );
        let counter = |name: &str| {
            r2.call("GET", "/metrics", None).1["counters"][name]
                .as_u64()
                .unwrap_or(0)
        };
        let deadline = Instant::now() + Duration::from_secs(300);
        while r2.call("GET", "/health", None).1["warm"] != 1 {
            assert!(Instant::now() < deadline, "the warm pool did not fill");
            std::thread::sleep(Duration::from_millis(200));
        }
        let dirty = r2.reset(id);
        let litter = "for d in /tmp /scratch /run/lock /var/tmp /dev/shm; do echo secret > $d/left; done; \
                      mkdir /tmp/leftdir && echo x > /tmp/leftdir/f && chmod 000 /tmp/leftdir; \
                      echo secret > left_in_repo; echo '# edited' >> README.md; \
                      (setsid sleep 1000 >/dev/null 2>&1 &); \
                      python3 -c 'import ctypes; assert ctypes.CDLL(None).shmget(4242, 4096, 0o1600) >= 0'; \
                      ipcs -m | grep -c 0x00001092; hostname";
        let (_, r) = r2.step(&dirty, "bash", json!({ "command": litter }));
        assert_eq!(r["observation"]["exit_code"], 0, "{r}");
        let output = r["observation"]["output"].as_str().unwrap_or_default();
        let host = output.lines().last().unwrap_or_default().trim().to_string();
        assert_eq!(output.lines().next().map(str::trim), Some("1"), "{output}");
        r2.call("POST", "/close", Some(&json!({"session_id": dirty})));
        let deadline = Instant::now() + Duration::from_secs(120);
        while counter("recycled") == 0 {
            assert!(Instant::now() < deadline, "nothing was recycled");
            std::thread::sleep(Duration::from_millis(200));
        }
        // The pool hands out its oldest container first: the fresh one, then the recycled.
        let mut held = Vec::new();
        let clean = loop {
            let (st, r) = r2.call("POST", "/reset", Some(&json!({"task_id": id})));
            assert_eq!(st, 200, "{r}");
            let this = r["observation"]["session_id"].as_str().unwrap().to_string();
            let (_, h) = r2.step(&this, "bash", json!({"command": "hostname"}));
            let name = h["observation"]["output"]
                .as_str()
                .unwrap_or_default()
                .trim();
            if name == host {
                assert_eq!(r["info"]["warm"], "recycled", "{r}");
                break this;
            }
            held.push(this);
            assert!(held.len() < 3, "the littered container did not come back");
        };
        let check = "ls -A /tmp /scratch /run/lock /var/tmp /dev/shm | grep -c left; \
                     pgrep -u \"$(id -u)\" -x sleep | wc -l; ipcs -m | grep -c 0x00001092; \
                     git status --porcelain | wc -l; git rev-list --all | wc -l";
        let (_, r) = r2.step(&clean, "bash", json!({ "command": check }));
        let output = r["observation"]["output"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let counts: Vec<&str> = output.lines().map(str::trim).collect();
        assert_eq!(
            counts,
            ["0", "0", "0", "0", "1"],
            "left from the last session: {output}"
        );
        r2.step(
            &clean,
            "write_file",
            json!({"path": ".fix.diff", "content": task["patch"]}),
        );
        let (_, r) = r2.step(
            &clean,
            "bash",
            json!({"command": "git apply .fix.diff && rm .fix.diff"}),
        );
        assert_eq!(r["observation"]["exit_code"], 0, "{r}");
        let (_, r) = r2.step(&clean, "submit", json!({}));
        assert_eq!(r["reward"], 1.0, "{r}");
        assert_eq!(r["info"]["grader"], "session", "{r}");
        assert_eq!(counter("graded_in_place"), 1);
        assert!(
            !containers_of(r2.child.id())
                .iter()
                .any(|c| host.starts_with(c.as_str()) || c.starts_with(&host)),
            "the container that graded is still there"
        );
        for h in held {
            r2.call("POST", "/close", Some(&json!({"session_id": h})));
        }
        // The repository's growth is measured by its file system (a tmpfs here): 20 MiB in a
        // directory made unreadable, which a walk of the tree (`du`) would not see, ends the
        // episode at `--max-tree-mb 16`, though no one file passes 16 MiB.
        let hider = r2.reset(id);
        let (_, r) = r2.step(
            &hider,
            "bash",
            json!({"command": "mkdir hid && for f in a b; do dd if=/dev/zero of=hid/$f bs=1M count=10 2>/dev/null; done; chmod 000 hid"}),
        );
        assert_eq!(r["done"], true, "{r}");
        assert_eq!(r["info"]["failure_type"], "exceeded-storage", "{r}");
        let pid = r2.child.id();
        Command::new("kill").arg(pid.to_string()).output().unwrap();
        let mut r2 = r2;
        let deadline = Instant::now() + Duration::from_secs(60);
        while r2.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(containers_of(pid).is_empty(), "{:?}", containers_of(pid));
    }

    // The scripted agents, through the Python client: gold, no-op, cheats, and a load of 8
    // concurrent sessions with 3 episodes each.
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    let py = Command::new("python3")
        .args(["-m", "unittest", "-v", "test_agents"])
        .current_dir(client.join("tests"))
        .env("PYTHONPATH", &client)
        .env("SWE_FORGE_SERVE_URL", &s.url)
        .env("SWE_FORGE_SERVE_TASKS", &tasks_file)
        .output()
        .expect("python3");
    let log = String::from_utf8_lossy(&py.stderr);
    assert!(py.status.success(), "the scripted agents failed:\n{log}");
    assert!(!log.contains("skipped '"), "{log}");
    // No session left open: once the ended sessions' containers are recycled or removed,
    // only the warm pool's are running (up to twice `--pool` with recycled ones).
    let (_, h) = s.call("GET", "/health", None);
    assert_eq!(h["sessions"], 0, "{h}");
    let deadline = Instant::now() + Duration::from_secs(120);
    while containers_of(s.child.id()).len() > 4 {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            containers_of(s.child.id())
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // A session whose container is killed by hand ends with reward 0, as one whose agent ran
    // `kill -9 -1` (the agent's processes, the sandbox's agent among them); another session
    // goes on.
    let a = s.reset(id);
    let b = s.reset(tasks[1]["instance_id"].as_str().unwrap());
    let before = containers_of(s.child.id());
    let (_, r) = s.step(&a, "bash", json!({"command": "hostname"}));
    let host_a = r["observation"]["output"]
        .as_str()
        .unwrap()
        .trim()
        .to_string();
    let victim = before
        .iter()
        .find(|c| host_a.starts_with(c.as_str()) || c.starts_with(&host_a))
        .unwrap_or_else(|| panic!("the container of session a ({host_a}) among {before:?}"))
        .clone();
    Command::new("docker")
        .args(["kill", &victim])
        .output()
        .unwrap();
    let (st, r) = s.step(&a, "bash", json!({"command": "ls"}));
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["reward"], 0.0, "{r}");
    assert_eq!(r["done"], true, "{r}");
    assert_eq!(r["info"]["failure_type"], "agent-killed-environment", "{r}");
    let (_, sa) = s.call("GET", &format!("/sessions/{a}"), None);
    assert_eq!(sa["status"], "submitted", "{sa}");
    let k = s.reset(id);
    let (st, r) = s.step(&k, "bash", json!({"command": "kill -9 -1; sleep 5"}));
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["info"]["failure_type"], "agent-killed-environment", "{r}");
    let (_, m) = s.call("GET", "/metrics", None);
    assert_eq!(
        m["counters"]["failure_types"]["agent-killed-environment"], 2,
        "{m}"
    );
    let (st, r) = s.step(&b, "bash", json!({"command": "true"}));
    assert_eq!(
        (st, r["observation"]["exit_code"].as_i64()),
        (200, Some(0)),
        "{r}"
    );

    // The server killed (SIGKILL) with session b open, and restarted: b is ended, the killed
    // server's containers are swept, and new sessions work.
    let old_pid = s.child.id();
    drop(s);
    // The restarted server's file also holds a task made with the local sandbox (no image):
    // under Docker it is not served on the host in its place.
    let mut local_made =
        jsonl(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report_out/tasks.jsonl"))
            [0]
        .clone();
    // An id of its own (the Docker run may have made the same candidate, with an image).
    local_made["instance_id"] = json!("pyshelf__made-locally__00000000");
    let mixed = dir.path().join("mixed.jsonl");
    std::fs::write(
        &mixed,
        std::fs::read_to_string(&tasks_file).unwrap() + &local_made.to_string() + "\n",
    )
    .unwrap();
    let s = start(&mixed, &db, "docker", &["--pool", "0"], None);
    let (st, e) = s.call(
        "POST",
        "/reset",
        Some(&json!({"task_id": local_made["instance_id"]})),
    );
    assert_eq!(st, 422, "{e}");
    assert!(e["error"].as_str().unwrap().contains("no image"), "{e}");
    let (_, h) = s.call("GET", "/health", None);
    assert_eq!(h["unsafe_local"], false, "{h}");
    assert_eq!(h["tasks"].as_u64(), Some(tasks.len() as u64), "{h}");
    let (_, sb) = s.call("GET", &format!("/sessions/{b}"), None);
    assert_eq!(sb["status"], "failed", "{sb}");
    assert_eq!(sb["detail"], "the server restarted", "{sb}");
    assert!(
        containers_of(old_pid).is_empty(),
        "{:?}",
        containers_of(old_pid)
    );
    let c = s.reset(id);
    let (_, r) = s.step(&c, "bash", json!({"command": "true"}));
    assert_eq!(r["observation"]["exit_code"], 0, "{r}");

    // A graceful stop (SIGTERM) with a session open leaves no container.
    let pid = s.child.id();
    Command::new("kill").arg(pid.to_string()).output().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut s = s;
    while s.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(containers_of(pid).is_empty(), "{:?}", containers_of(pid));
}

#[test]
fn with_generate_the_pool_grows_while_serving() {
    // More tasks, so that some share a file and combine.
    let dir = fourteen_candidates();
    let tasks = tasks_of(dir.path());
    let served: std::collections::BTreeSet<String> = tasks.iter().map(shown).collect();
    let s = start(
        &dir.path().join("out/tasks.jsonl"),
        &dir.path().join("serve.db"),
        "local",
        &["--pool", "0", "--generate", "--generate-batch", "0"],
        None,
    );
    // A multi-bug combination of served tasks joins the pool, verified, and can be served.
    let deadline = Instant::now() + Duration::from_secs(900);
    let multi = loop {
        let (_, cur) = s.call("GET", "/curriculum", None);
        // A task the file did not have: a generated one (shown opaque, as every task).
        let found = cur["tasks"].as_array().unwrap().iter().find_map(|t| {
            let id = t["task_id"].as_str().unwrap();
            (!served.contains(id)).then(|| id.to_string())
        });
        if let Some(id) = found {
            break id;
        }
        assert!(Instant::now() < deadline, "no generated task joined: {cur}");
        std::thread::sleep(Duration::from_secs(2));
    };
    let (_, h) = s.call("GET", "/health", None);
    assert!(h["tasks"].as_u64().unwrap() > tasks.len() as u64, "{h}");
    let (st, r) = s.call("POST", "/reset", Some(&json!({"task_id": multi})));
    assert_eq!(st, 200, "{r}");
    assert!(!r["observation"]["instruction"].as_str().unwrap().is_empty());
    // A combination's record starts at the clean commit, whose history holds the fixes: the
    // session starts from a parentless commit, with no other ref, reflog or object to go back to.
    let sid = r["observation"]["session_id"].as_str().unwrap().to_string();
    let (st, out) = s.step(
        &sid,
        "bash",
        json!({"command": "git rev-list --all | wc -l; git reflog | wc -l; git diff HEAD~1 >/dev/null 2>&1 && echo has-parent || echo no-parent; git log --all -p | grep -c '^diff --git' || true"}),
    );
    assert_eq!(st, 200, "{out}");
    let text = out["observation"]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(lines.first().copied(), Some("1"), "{text}");
    assert!(text.contains("no-parent"), "{text}");
}

#[test]
fn the_curriculum_moves_with_a_scripted_policy() {
    // A scripted policy through the server: it solves the tasks of some buckets every other
    // time (the gold fix, else nothing) and never the others. Once every task was tried, the
    // curriculum (weight p(1 − p)) serves the half-solved buckets far more than the rest.
    let dir = fourteen_candidates();
    let records = tasks_of(dir.path());
    let tasks: Vec<swe_forge::task::Task> = records
        .iter()
        .map(|r| serde_json::from_value(r.clone()).unwrap())
        .collect();
    // Buckets, the largest first, into the learnable half until it holds half the tasks.
    let mut buckets: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for t in &tasks {
        buckets
            .entry(swe_forge::curriculum::TaskInfo::of(t).bucket())
            .or_default()
            .push(t.instance_id.clone());
    }
    let mut order: Vec<(String, Vec<String>)> = buckets.into_iter().collect();
    order.sort_by_key(|(_, ids)| std::cmp::Reverse(ids.len()));
    let mut learnable: std::collections::BTreeSet<String> = Default::default();
    for (_, ids) in &order {
        if learnable.len() * 2 >= tasks.len() {
            break;
        }
        learnable.extend(ids.iter().cloned());
    }
    assert!(
        !learnable.is_empty() && learnable.len() < tasks.len(),
        "{order:?}"
    );
    let patch_of = |id: &str| {
        records.iter().find(|r| r["instance_id"] == id).unwrap()["patch"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The server shows opaque ids: the record each stands for.
    let instance_of: std::collections::BTreeMap<String, String> = records
        .iter()
        .map(|r| (shown(r), r["instance_id"].as_str().unwrap().to_string()))
        .collect();
    let s = start(
        &dir.path().join("out/tasks.jsonl"),
        &dir.path().join("serve.db"),
        "local",
        &["--pool", "0", "--grade-repeats", "1", "--seed", "11"],
        None,
    );
    let mut tried: std::collections::BTreeMap<String, usize> = Default::default();
    let mut draws: Vec<String> = Vec::new();
    for _ in 0..50 {
        let (st, r) = s.call("POST", "/reset", Some(&json!({"sample": true})));
        assert_eq!(st, 200, "{r}");
        let sid = r["observation"]["session_id"].as_str().unwrap().to_string();
        let id = instance_of[r["observation"]["task_id"].as_str().unwrap()].clone();
        let n = tried.entry(id.clone()).or_default();
        *n += 1;
        if learnable.contains(&id) && *n % 2 == 1 {
            let (_, a) = s.step(
                &sid,
                "bash",
                json!({"command": apply_command(&patch_of(&id))}),
            );
            assert_eq!(a["observation"]["exit_code"], 0, "{a}");
        }
        let (_, r) = s.step(&sid, "submit", json!({}));
        let solved = r["reward"] == 1.0;
        assert_eq!(solved, learnable.contains(&id) && *n % 2 == 1, "{id}: {r}");
        draws.push(id);
    }
    // Every task was served, and once they all were, the learnable half dominates.
    assert_eq!(tried.len(), tasks.len(), "{tried:?}");
    let share = |from: usize| {
        let later = &draws[from..];
        later.iter().filter(|id| learnable.contains(*id)).count() as f64 / later.len() as f64
    };
    let initial = learnable.len() as f64 / tasks.len() as f64;
    assert!(
        share(30) >= 0.8 && share(30) > initial + 0.2,
        "learnable share of the last 20 draws {} (of the pool {initial}); draws {draws:?}",
        share(30)
    );
    let (_, cur) = s.call("GET", "/curriculum", None);
    for t in cur["tasks"].as_array().unwrap() {
        let p = t["pass_rate"].as_f64().unwrap();
        let id = instance_of[t["task_id"].as_str().unwrap()].as_str();
        if learnable.contains(id) {
            assert!((0.15..=0.85).contains(&p), "{t}");
        } else {
            assert!(p < 0.15, "{t}");
        }
    }
}
