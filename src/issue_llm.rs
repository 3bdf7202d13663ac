//! Optional rewriting of issue texts by a language model behind an OpenAI-compatible API
//! (`run --issue-llm URL`): the request and its retries, the checks a rewrite must pass before
//! it replaces the template text, and the record of what happened (`metadata.issue_rewrite`).
//!
//! The template text is always a valid problem statement, so a rewrite that fails (the endpoint
//! errs or times out), leaks (the same [`leak::find_leak`] check as the template text) or is
//! unfit (empty, far too long, or without the reproduction's values) is dropped and the task
//! keeps the template text; the task itself is never rejected because of the model.

use crate::assets;
use crate::leak;
use crate::task::Task;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The system prompt's template, under templates/.
pub const SYSTEM_TEMPLATE: &str = "issue/llm_system.md.j2";
/// How long one request may take, unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Requests per rewrite: the first and two retries (on 5xx, 429, timeouts and transport errors).
pub const ATTEMPTS: usize = 3;
/// After this many rewrites in a row that failed on the endpoint, the run stops asking it.
pub const GIVE_UP_AFTER: usize = 3;
/// Sampling temperature: low, the rewrite should stay close to the facts.
const TEMPERATURE: f64 = 0.2;
/// The most tokens the model may answer with.
const MAX_TOKENS: u32 = 2048;
/// The most bytes of a reply read.
const MAX_REPLY_BYTES: u64 = 4 << 20;
/// The most characters of an error body quoted.
const QUOTE_CHARS: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("`{0}` is not an http:// or https:// URL")]
    BadUrl(String),
    #[error("the endpoint answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("request failed: {0}")]
    Transport(String),
    #[error("unexpected reply: {0}")]
    BadReply(String),
    #[error("no model given (--issue-llm-model) and none listed at {url}: {detail}")]
    NoModel { url: String, detail: String },
    #[error("issue template `{name}`: {detail}")]
    Template { name: String, detail: String },
}

impl LlmError {
    /// Whether asking again may help: server errors, rate limits, timeouts, lost connections.
    fn retryable(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status >= 500 || *status == 429,
            LlmError::Timeout(_) | LlmError::Transport(_) => true,
            _ => false,
        }
    }
}

/// The URLs of an OpenAI-compatible API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `{base}/chat/completions`.
    pub chat: String,
    /// `{base}/models`, asked for a model when none is given.
    pub models: String,
}

/// The endpoint of a base URL (`http://host:8000/v1`); a URL that already ends in
/// `/chat/completions` is taken as it is.
pub fn parse_endpoint(url: &str) -> Result<Endpoint, LlmError> {
    let trimmed = url.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| LlmError::BadUrl(url.to_string()))?;
    if rest.is_empty() || rest.starts_with('/') || trimmed.contains(char::is_whitespace) {
        return Err(LlmError::BadUrl(url.to_string()));
    }
    let base = trimmed.strip_suffix("/chat/completions").unwrap_or(trimmed);
    Ok(Endpoint {
        chat: format!("{base}/chat/completions"),
        models: format!("{base}/models"),
    })
}

/// How to reach the model.
#[derive(Clone)]
pub struct LlmConfig {
    pub endpoint: Endpoint,
    /// `None`: the first model the endpoint lists.
    pub model: Option<String>,
    /// Sent as a bearer token when present.
    pub api_key: Option<String>,
    /// The limit of one request.
    pub timeout: Duration,
    /// The wait before the first retry (doubled before the next).
    pub retry_delay: Duration,
}

impl LlmConfig {
    pub fn new(endpoint: Endpoint) -> LlmConfig {
        LlmConfig {
            endpoint,
            model: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            retry_delay: Duration::from_millis(500),
        }
    }
}

impl fmt::Debug for LlmConfig {
    // The key never goes into logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("retry_delay", &self.retry_delay)
            .finish()
    }
}

/// Where a task's problem statement comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueSource {
    /// The text rendered from templates/issue/.
    #[default]
    Template,
    /// The model's rewrite of it.
    Llm,
}

/// Why a rewrite was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// The endpoint failed, timed out or answered something that is not a completion.
    Error,
    /// The rewrite would reveal the fix (the leak check).
    Leak,
    /// The rewrite is empty, far too long, or drops a value of the reproduction.
    Unfit,
}

impl Fallback {
    pub fn as_str(self) -> &'static str {
        match self {
            Fallback::Error => "error",
            Fallback::Leak => "leak",
            Fallback::Unfit => "unfit",
        }
    }
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `metadata.issue_rewrite` of a task: `{"source": "template"}` when no rewrite was asked
/// for, `{"source": "llm", "model": …}` when the rewrite is the problem statement, and
/// `{"source": "template", "model": …, "fallback": "error"|"leak"|"unfit", "detail": …}` when
/// one was asked for and not used. Records without the field read as the first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueRewrite {
    #[serde(default)]
    pub source: IssueSource,
    /// The model asked (absent when none was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// What went wrong, for a fallback.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl IssueRewrite {
    fn fallback(model: Option<String>, why: Fallback, detail: impl Into<String>) -> IssueRewrite {
        IssueRewrite {
            source: IssueSource::Template,
            model,
            fallback: Some(why),
            detail: detail.into(),
        }
    }

    /// The key this outcome is counted under in a run's summary (`llm`, `fallback-error`,
    /// `fallback-leak`, `fallback-unfit`); `None` when no rewrite was asked for.
    pub fn tally_key(&self) -> Option<String> {
        match (self.source, self.fallback) {
            (IssueSource::Llm, _) => Some("llm".into()),
            (IssueSource::Template, Some(f)) => Some(format!("fallback-{f}")),
            (IssueSource::Template, None) => None,
        }
    }
}

/// The longest acceptable rewrite of a template text of `template_chars` characters.
pub fn max_chars(template_chars: usize) -> usize {
    template_chars * 3 + 500
}

/// Whether `rewrite` may replace the problem statement of `task` (which holds the template
/// text): not empty, not far longer, every key value of the reproduction (those the template
/// text shows) still there, and no leak. Values are compared without whitespace.
pub fn check_rewrite(
    rewrite: &str,
    task: &Task,
    key_values: &[String],
) -> Result<(), (Fallback, String)> {
    if rewrite.trim().is_empty() {
        return Err((Fallback::Unfit, "the rewrite is empty".into()));
    }
    let template = &task.problem_statement;
    let limit = max_chars(template.chars().count());
    let chars = rewrite.chars().count();
    if chars > limit {
        return Err((
            Fallback::Unfit,
            format!("the rewrite has {chars} characters (at most {limit} for this text)"),
        ));
    }
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    let (template_sq, rewrite_sq) = (squeeze(template), squeeze(rewrite));
    for value in key_values {
        let v = squeeze(value);
        if !v.is_empty() && template_sq.contains(&v) && !rewrite_sq.contains(&v) {
            return Err((
                Fallback::Unfit,
                format!("the rewrite drops `{}`", quote(value, 120)),
            ));
        }
    }
    let mut candidate = task.clone();
    candidate.problem_statement = rewrite.to_string();
    if let Some(leak) = leak::find_leak(&candidate) {
        return Err((Fallback::Leak, leak.to_string()));
    }
    Ok(())
}

/// A model's answer made a problem statement: a leading `<think>…</think>` block (reasoning
/// models) dropped, line ends normalized, trimmed, one final newline.
pub fn clean_reply(reply: &str) -> String {
    let mut text = reply.trim_start();
    if let Some(rest) = text.strip_prefix("<think>") {
        if let Some((_, after)) = rest.split_once("</think>") {
            text = after;
        }
    }
    let text = text.replace("\r\n", "\n");
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    }
}

fn quote(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// Asks the model for rewrites; shared by the workers of a run.
pub struct Rewriter {
    cfg: LlmConfig,
    agent: ureq::Agent,
    system: String,
    /// The model, asked of the endpoint once when none is configured.
    model: OnceLock<Result<String, String>>,
    /// Rewrites in a row that failed on the endpoint.
    failures_in_row: AtomicUsize,
}

impl Rewriter {
    pub fn new(cfg: LlmConfig) -> Result<Rewriter, LlmError> {
        let system = assets::template(SYSTEM_TEMPLATE)
            .ok_or_else(|| LlmError::Template {
                name: SYSTEM_TEMPLATE.into(),
                detail: "missing".into(),
            })?
            .to_string();
        let tls = ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::NativeTls)
            .root_certs(ureq::tls::RootCerts::PlatformVerifier)
            .build();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(cfg.timeout))
            .tls_config(tls)
            .user_agent(format!("swe-forge/{}", crate::VERSION))
            .build()
            .new_agent();
        let rewriter = Rewriter {
            cfg,
            agent,
            system,
            model: OnceLock::new(),
            failures_in_row: AtomicUsize::new(0),
        };
        // Fail now on a template that does not render rather than once per task.
        rewriter.system_prompt(1000)?;
        Ok(rewriter)
    }

    fn system_prompt(&self, max_chars: usize) -> Result<String, LlmError> {
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.render_str(&self.system, minijinja::context! { max_chars => max_chars })
            .map(|s| s.trim().to_string())
            .map_err(|e| LlmError::Template {
                name: SYSTEM_TEMPLATE.into(),
                detail: e.to_string(),
            })
    }

    /// The model to ask: the configured one, else the first the endpoint lists (asked once).
    pub fn model(&self) -> Result<String, LlmError> {
        if let Some(m) = &self.cfg.model {
            return Ok(m.clone());
        }
        self.model
            .get_or_init(|| self.listed_model().map_err(|e| e.to_string()))
            .clone()
            .map_err(|detail| LlmError::NoModel {
                url: self.cfg.endpoint.models.clone(),
                detail,
            })
    }

    fn listed_model(&self) -> Result<String, LlmError> {
        let url = &self.cfg.endpoint.models;
        let body = self.with_retries(|| {
            let mut req = self.agent.get(url);
            if let Some(key) = &self.cfg.api_key {
                req = req.header("Authorization", format!("Bearer {key}"));
            }
            self.request(move || req.call())
        })?;
        let v: serde_json::Value = serde_json::from_str(&body)
            .map_err(|e| LlmError::BadReply(format!("{e}: {}", quote(&body, QUOTE_CHARS))))?;
        v["data"][0]["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| {
                LlmError::BadReply(format!("no data[0].id in {}", quote(&body, QUOTE_CHARS)))
            })
    }

    /// Send a request, read the body of a 2xx answer.
    fn request(
        &self,
        send: impl FnOnce() -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<String, LlmError> {
        let map = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => LlmError::Timeout(self.cfg.timeout),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                LlmError::Timeout(self.cfg.timeout)
            }
            other => LlmError::Transport(other.to_string()),
        };
        let mut resp = send().map_err(map)?;
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(map)?;
        if !(200..300).contains(&status) {
            return Err(LlmError::Status {
                status,
                body: quote(body.trim(), QUOTE_CHARS),
            });
        }
        Ok(body)
    }

    fn with_retries(
        &self,
        mut attempt: impl FnMut() -> Result<String, LlmError>,
    ) -> Result<String, LlmError> {
        let mut delay = self.cfg.retry_delay;
        let mut tries = 1;
        loop {
            match attempt() {
                Err(e) if e.retryable() && tries < ATTEMPTS => {
                    tracing::debug!("issue rewrite: attempt {tries} failed ({e}); retrying");
                    std::thread::sleep(delay);
                    delay *= 2;
                    tries += 1;
                }
                other => return other,
            }
        }
    }

    /// Ask the model to rewrite `text`; its cleaned answer.
    pub fn complete(&self, text: &str) -> Result<String, LlmError> {
        let model = self.model()?;
        let system = self.system_prompt(max_chars(text.chars().count()))?;
        let body = serde_json::json!({
            "model": model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": text},
            ],
            "temperature": TEMPERATURE,
            "max_tokens": MAX_TOKENS,
            "stream": false,
        })
        .to_string();
        let reply = self.with_retries(|| {
            let mut req = self
                .agent
                .post(&self.cfg.endpoint.chat)
                .content_type("application/json");
            if let Some(key) = &self.cfg.api_key {
                req = req.header("Authorization", format!("Bearer {key}"));
            }
            let body = body.as_str();
            self.request(move || req.send(body))
        })?;
        let v: serde_json::Value = serde_json::from_str(&reply)
            .map_err(|e| LlmError::BadReply(format!("{e}: {}", quote(&reply, QUOTE_CHARS))))?;
        let content = v["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| {
                LlmError::BadReply(format!(
                    "no choices[0].message.content in {}",
                    quote(&reply, QUOTE_CHARS)
                ))
            })?;
        Ok(clean_reply(content))
    }

    /// Rewrite the problem statement of `task` (the template text, already leak-checked):
    /// the new text when it passes [`check_rewrite`], and the record for
    /// `metadata.issue_rewrite` either way. Never fails: a failure is a fallback.
    pub fn rewrite(&self, task: &Task, key_values: &[String]) -> (Option<String>, IssueRewrite) {
        let failed = self.failures_in_row.load(Ordering::SeqCst);
        if failed >= GIVE_UP_AFTER {
            return (
                None,
                IssueRewrite::fallback(
                    self.cfg.model.clone(),
                    Fallback::Error,
                    format!("not asked: the endpoint failed {failed} times in a row"),
                ),
            );
        }
        let model = self.model().ok().or_else(|| self.cfg.model.clone());
        match self.complete(&task.problem_statement) {
            Err(e) => {
                let n = self.failures_in_row.fetch_add(1, Ordering::SeqCst) + 1;
                if n == GIVE_UP_AFTER {
                    tracing::warn!(
                        "issue rewriting failed {n} times in a row: the rest of the run keeps \
                         the template texts"
                    );
                }
                (
                    None,
                    IssueRewrite::fallback(model, Fallback::Error, e.to_string()),
                )
            }
            Ok(text) => {
                self.failures_in_row.store(0, Ordering::SeqCst);
                match check_rewrite(&text, task, key_values) {
                    Ok(()) => (
                        Some(text),
                        IssueRewrite {
                            source: IssueSource::Llm,
                            model,
                            fallback: None,
                            detail: String::new(),
                        },
                    ),
                    Err((why, detail)) => (None, IssueRewrite::fallback(model, why, detail)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A task whose bug is in `pkg/query.py` (`_pages`, line 2) and whose hidden test is
    /// `tests/test_query.py::test_pages`.
    fn task(statement: &str) -> Task {
        serde_json::from_value(serde_json::json!({
            "instance_id": "s__py-x__00000000", "repo": "s", "base_commit": "a",
            "patch": "diff --git a/pkg/query.py b/pkg/query.py\n--- a/pkg/query.py\n+++ b/pkg/query.py\n@@ -2 +2 @@\n-    return total // per_page - 1\n+    return total // per_page\n",
            "test_patch": "", "problem_statement": statement, "hints_text": "",
            "created_at": "2026-01-01T00:00:00Z", "version": "0", "environment_setup_commit": "a",
            "FAIL_TO_PASS": ["tests/test_query.py::test_pages"], "PASS_TO_PASS": [],
            "bug_patch": "", "image_name": null, "language": "python",
            "metadata": {
                "mutators": ["py-x"], "category": "operator", "candidate_id": "0",
                "location": {"file": "pkg/query.py", "function": "_pages", "lines": [2, 2]},
                "difficulty": {"category": "operator", "killing_tests": 1, "function_lines": 3,
                    "fix_lines": 2, "files_in_fix": 1, "synthesized_tests": false, "score": 0.5},
                "verification": {"repeats": 1, "sandbox": "local", "clean_runs": [], "runs": []},
                "environment": {"source": ".", "install": null, "test_command": "pytest", "python_path": []},
                "tool_version": "0"
            }
        }))
        .unwrap()
    }

    #[test]
    fn endpoints_are_derived_from_a_base_or_a_full_url() {
        let e = parse_endpoint("http://127.0.0.1:8000/v1/").unwrap();
        assert_eq!(e.chat, "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(e.models, "http://127.0.0.1:8000/v1/models");
        let e = parse_endpoint("https://llm.example/v1/chat/completions").unwrap();
        assert_eq!(e.chat, "https://llm.example/v1/chat/completions");
        assert_eq!(e.models, "https://llm.example/v1/models");
        for bad in [
            "127.0.0.1:8000",
            "ftp://x/v1",
            "http://",
            "http:///v1",
            "http://a b/v1",
        ] {
            assert!(parse_endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn old_records_read_as_template_and_outcomes_serialize_compactly() {
        let r: IssueRewrite = serde_json::from_str("{}").unwrap();
        assert_eq!(r, IssueRewrite::default());
        assert_eq!(r.tally_key(), None);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"source": "template"})
        );
        let leak = IssueRewrite::fallback(Some("m".into()), Fallback::Leak, "hidden-test: x");
        assert_eq!(
            serde_json::to_value(&leak).unwrap(),
            serde_json::json!({"source": "template", "model": "m", "fallback": "leak", "detail": "hidden-test: x"})
        );
        assert_eq!(leak.tally_key().as_deref(), Some("fallback-leak"));
    }

    #[test]
    fn replies_lose_reasoning_blocks_and_surrounding_space() {
        assert_eq!(
            clean_reply("<think>\nhmm\n</think>\n\nTitle\r\nbody  \n\n"),
            "Title\nbody\n"
        );
        assert_eq!(clean_reply("  \n "), "");
    }

    #[test]
    fn a_rewrite_must_keep_values_stay_short_and_not_leak() {
        let template = "`paginate` is wrong\n\n```python\npaginate([], 1, 0)\n```\n\nIt raises ZeroDivisionError.\n";
        let t = task(template);
        let keys = vec![
            "paginate([], 1, 0)".to_string(),
            "ZeroDivisionError".to_string(),
            // Not in the template text: not required.
            "something else".to_string(),
        ];
        let good = "Paging crashes\n\nRunning `paginate([],1, 0)` gives ZeroDivisionError.\n";
        assert_eq!(check_rewrite(good, &t, &keys), Ok(()));
        let (why, detail) =
            check_rewrite("Paging crashes with an error.\n", &t, &keys).unwrap_err();
        assert_eq!(why, Fallback::Unfit);
        assert!(detail.contains("paginate([], 1, 0)"), "{detail}");
        assert_eq!(
            check_rewrite(" \n", &t, &keys).unwrap_err().0,
            Fallback::Unfit
        );
        let long = format!("{good}{}", "blah ".repeat(2000));
        assert_eq!(
            check_rewrite(&long, &t, &keys).unwrap_err().0,
            Fallback::Unfit
        );
        // The sample task's hidden test is `test_pages`; its file is `pkg/query.py`.
        let (why, detail) =
            check_rewrite(&format!("{good}\nSee test_pages.\n"), &t, &keys).unwrap_err();
        assert_eq!(why, Fallback::Leak);
        assert!(detail.starts_with("hidden-test"), "{detail}");
        // Naming the bug's file is what a traceback does: allowed.
        assert!(check_rewrite(&format!("{good}\nIn query.py.\n"), &t, &keys).is_ok());
    }

    /// A one-shot-per-connection HTTP server answering each request with the next of
    /// `answers` (the last repeats); records the requests' bodies.
    fn serve(answers: Vec<(u16, String)>) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).ok();
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&body).into_owned());
                let (status, text) = &answers[i.min(answers.len() - 1)];
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        (url, seen)
    }

    fn completion(content: &str) -> String {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string()
    }

    fn rewriter(url: &str, model: Option<&str>) -> Rewriter {
        let mut cfg = LlmConfig::new(parse_endpoint(url).unwrap());
        cfg.model = model.map(str::to_string);
        cfg.retry_delay = Duration::from_millis(1);
        Rewriter::new(cfg).unwrap()
    }

    #[test]
    fn a_server_error_is_retried_and_the_answer_used() {
        let (url, seen) = serve(vec![
            (500, "{}".into()),
            (503, "busy".into()),
            (200, completion("Better text")),
        ]);
        let r = rewriter(&url, Some("tiny"));
        assert_eq!(r.complete("template text").unwrap(), "Better text\n");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        let req: serde_json::Value = serde_json::from_str(&seen[2]).unwrap();
        assert_eq!(req["model"], "tiny");
        assert_eq!(req["messages"][1]["content"], "template text");
        assert!(req["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Do not guess the cause"));
        assert!(req["temperature"].as_f64().unwrap() <= 0.3);
    }

    #[test]
    fn a_client_error_is_not_retried_and_persistent_failures_stop_the_asking() {
        let (url, seen) = serve(vec![(400, "{\"error\": \"bad model\"}".into())]);
        let r = rewriter(&url, Some("tiny"));
        let t = task("`f` is wrong\n");
        for i in 0..GIVE_UP_AFTER + 2 {
            let (text, rec) = r.rewrite(&t, &[]);
            assert_eq!(text, None);
            assert_eq!(rec.fallback, Some(Fallback::Error), "{i}");
            if i < GIVE_UP_AFTER {
                assert!(rec.detail.contains("HTTP 400"), "{}", rec.detail);
            } else {
                assert!(rec.detail.contains("not asked"), "{}", rec.detail);
            }
        }
        assert_eq!(seen.lock().unwrap().len(), GIVE_UP_AFTER);
    }

    #[test]
    fn the_model_defaults_to_the_first_one_listed() {
        let models = serde_json::json!({"data": [{"id": "served-model"}, {"id": "other"}]});
        let (url, seen) = serve(vec![(200, models.to_string()), (200, completion("ok"))]);
        let r = rewriter(&url, None);
        assert_eq!(r.complete("x").unwrap(), "ok\n");
        let seen = seen.lock().unwrap();
        let req: serde_json::Value = serde_json::from_str(&seen[1]).unwrap();
        assert_eq!(req["model"], "served-model");
    }

    #[test]
    fn a_reply_without_a_completion_is_an_error() {
        let (url, _) = serve(vec![(200, "{\"choices\": []}".into())]);
        let err = rewriter(&url, Some("m")).complete("x").unwrap_err();
        assert!(matches!(err, LlmError::BadReply(_)), "{err}");
    }

    #[test]
    fn a_silent_server_times_out() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        // Accepts and never answers.
        let held = std::thread::spawn(move || {
            let conns: Vec<_> = listener.incoming().take(ATTEMPTS).collect();
            std::thread::sleep(Duration::from_secs(3));
            drop(conns);
        });
        let mut cfg = LlmConfig::new(parse_endpoint(&url).unwrap());
        cfg.model = Some("m".into());
        cfg.timeout = Duration::from_millis(200);
        cfg.retry_delay = Duration::from_millis(1);
        let err = Rewriter::new(cfg).unwrap().complete("x").unwrap_err();
        assert!(matches!(err, LlmError::Timeout(_)), "{err}");
        drop(held);
    }
}
