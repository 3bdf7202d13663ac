//! `run --issue-llm URL`: issue texts rewritten by a language model behind an OpenAI-compatible
//! API (a fake one here, in a thread), with the template text kept when the model leaks or fails.

mod common;

use common::{bin, fixture_manifest, jsonl, seed_summary, summary, text};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::sync::{Arc, Mutex};

/// One request the fake server received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: serde_json::Value,
}

impl Seen {
    /// The user message: the text to rewrite.
    fn user(&self) -> String {
        self.body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// A fake OpenAI-compatible server on 127.0.0.1: `answer` maps the user message of a request
/// to the status and the completion text (sent as `choices[0].message.content`). Returns the
/// base URL (`…/v1`) and the requests seen.
fn fake_llm(answer: fn(&str) -> (u16, String)) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap_or(0);
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let (mut len, mut authorization) = (0usize, None);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => len = v.trim().parse().unwrap_or(0),
                        "authorization" => authorization = Some(v.trim().to_string()),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).ok();
            let seen = Seen {
                path,
                authorization,
                body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
            };
            let (status, content) = answer(&seen.user());
            log.lock().unwrap().push(seen);
            let reply = if status == 200 {
                serde_json::json!({
                    "id": "cmpl-1", "object": "chat.completion",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}]
                })
                .to_string()
            } else {
                serde_json::json!({"error": {"message": content}}).to_string()
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, seen)
}

/// `run` on the `issue_llm` fixture (local sandbox, 4 candidates, one repeat) with
/// `--issue-llm URL --issue-llm-model tiny-model` and the given API key. Keep the TempDir
/// alive while inspecting.
fn run_with_llm(url: &str, key: Option<&str>) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let m = fixture_manifest(dir.path(), "issue_llm");
    let mut cmd = bin();
    cmd.env("TMPDIR", &tmp)
        .env_remove("SWE_FORGE_ISSUE_LLM_KEY")
        .args(["run", m.to_str().unwrap()])
        .args([
            "--sandbox",
            "local",
            "--json",
            "--jobs",
            "2",
            "--no-synthesis",
        ])
        .args(["--repeats", "1", "--baseline-repeats", "1"])
        .args(["--max-candidates", "4", "--max-per-function", "1000"])
        .args([
            "--issue-llm",
            url,
            "--issue-llm-model",
            "tiny-model",
            "--out",
        ])
        .arg(dir.path().join("out"));
    for var in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] {
        cmd.env_remove(var);
    }
    if let Some(k) = key {
        cmd.env("SWE_FORGE_ISSUE_LLM_KEY", k);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    (out, dir)
}

fn tasks(dir: &tempfile::TempDir) -> Vec<serde_json::Value> {
    let t = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(!t.is_empty(), "the fixture yields tasks");
    t
}

fn clean_rewrite(user: &str) -> (u16, String) {
    (
        200,
        format!("Hi, I ran into this today.\n\n{user}\nThanks for looking!"),
    )
}

// A clean rewrite becomes the problem statement, the model saw the template text (with the
// system prompt, the model, the key), and only accepted tasks were sent.
#[test]
fn a_clean_rewrite_replaces_the_template_text() {
    let (url, seen) = fake_llm(clean_rewrite);
    let (out, dir) = run_with_llm(&url, Some("sekrit"));
    let tasks = tasks(&dir);
    let seen = seen.lock().unwrap().clone();
    let s = summary(&out);
    let seed = seed_summary(&s, "issue_llm");
    assert!(
        seed["decided"].as_u64() > seed["accepted"].as_u64(),
        "the fixture has a rejected candidate too: {seed}"
    );
    assert_eq!(
        seen.len(),
        tasks.len(),
        "one request per accepted task: {seen:?}"
    );
    assert_eq!(
        seed["issue_rewrite"],
        serde_json::json!({"llm": tasks.len()}),
        "{seed}"
    );
    for r in &seen {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.authorization.as_deref(), Some("Bearer sekrit"));
        assert_eq!(r.body["model"], "tiny-model");
        assert_eq!(r.body["messages"][0]["role"], "system");
        let system = r.body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("Do not guess the cause"), "{system}");
        assert!(r.body["temperature"].as_f64().unwrap() <= 0.3);
        // The template text: the function and the observed failure.
        let user = r.user();
        assert!(user.contains("shipping_cost"), "{user}");
        assert!(user.contains("assert "), "{user}");
    }
    for t in &tasks {
        let statement = t["problem_statement"].as_str().unwrap();
        let sent = seen
            .iter()
            .map(Seen::user)
            .find(|u| statement == format!("{}\n", clean_rewrite(u).1.trim()))
            .unwrap_or_else(|| panic!("not a rewrite of any text sent: {statement}"));
        assert_ne!(statement, sent);
        assert_eq!(
            t["metadata"]["issue_rewrite"],
            serde_json::json!({"source": "llm", "model": "tiny-model"})
        );
    }
}

fn leaky_rewrite(user: &str) -> (u16, String) {
    (
        200,
        format!("{user}\nBoth test_standard_parcel_cost and test_express_parcel_cost fail for me."),
    )
}

// A rewrite that names the hidden tests is dropped: the task keeps the template text (it is not
// rejected) and its metadata records the leak.
#[test]
fn a_leaking_rewrite_keeps_the_template_text() {
    let (url, seen) = fake_llm(leaky_rewrite);
    let (out, dir) = run_with_llm(&url, None);
    let tasks = tasks(&dir);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), tasks.len());
    assert!(seen.iter().all(|r| r.authorization.is_none()), "{seen:?}");
    let sent: Vec<String> = seen.iter().map(Seen::user).collect();
    for t in &tasks {
        let statement = t["problem_statement"].as_str().unwrap();
        assert!(sent.iter().any(|u| u == statement), "{statement}");
        assert!(
            !statement.contains("test_standard_parcel_cost"),
            "{statement}"
        );
        let rec = &t["metadata"]["issue_rewrite"];
        assert_eq!(rec["source"], "template", "{rec}");
        assert_eq!(rec["model"], "tiny-model", "{rec}");
        assert_eq!(rec["fallback"], "leak", "{rec}");
        assert!(
            rec["detail"].as_str().unwrap().starts_with("hidden-test: "),
            "{rec}"
        );
    }
    let s = summary(&out);
    assert_eq!(
        seed_summary(&s, "issue_llm")["issue_rewrite"],
        serde_json::json!({"fallback-leak": tasks.len()})
    );
    let candidates = jsonl(&dir.path().join("out/candidates.jsonl"));
    assert!(
        candidates.iter().all(|c| c["reason"] != "issue-leak"),
        "{candidates:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("issue rewrite not used (leak)"),
        "{}",
        text(&out)
    );
}

fn server_error(_: &str) -> (u16, String) {
    (500, "the model crashed".into())
}

// An endpoint answering 500 is retried, then given up on: every task keeps the template text,
// and after three failed tasks in a row the run stops asking.
#[test]
fn a_failing_endpoint_keeps_the_template_text() {
    let (url, seen) = fake_llm(server_error);
    let (out, dir) = run_with_llm(&url, None);
    let tasks = tasks(&dir);
    let seen = seen.lock().unwrap().clone();
    // Three attempts for each of the first three tasks, none after.
    assert_eq!(seen.len(), 3 * tasks.len().min(3), "{seen:?}");
    let sent: Vec<String> = seen.iter().map(Seen::user).collect();
    for t in &tasks {
        let statement = t["problem_statement"].as_str().unwrap();
        assert!(sent.iter().any(|u| u == statement), "{statement}");
        let rec = &t["metadata"]["issue_rewrite"];
        assert_eq!(rec["source"], "template", "{rec}");
        assert_eq!(rec["fallback"], "error", "{rec}");
        let detail = rec["detail"].as_str().unwrap();
        assert!(
            detail.contains("HTTP 500") || detail.contains("not asked"),
            "{rec}"
        );
    }
    let s = summary(&out);
    assert_eq!(
        seed_summary(&s, "issue_llm")["issue_rewrite"],
        serde_json::json!({"fallback-error": tasks.len()})
    );
}
