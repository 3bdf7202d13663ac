//! The routes: OpenEnv's `/reset`, `/step`, `/state`, `/schema`, `/health` and `/ws`, the
//! session-style aliases (`/sessions`…), `/curriculum` and `/metrics` (see `docs/serve.md`).
//! Each request's work (containers, tests) runs on a blocking thread; a session is one lock,
//! so its steps run one at a time while other sessions go on.

use super::episode::{
    ended_by_agent, fail, finish, killed_detail, submit, tree_growth_kb, AGENT_KILLED_ENVIRONMENT,
    EXCEEDED_STORAGE, KILLED_DETAIL,
};
use super::session::{Session, State, Status};
use super::tools::{self, ToolError};
use super::{grade, lock, Server};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State as AxState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// The most bytes of a request body.
pub const BODY_LIMIT: usize = 1 << 20;

type Shared = Arc<Server>;

/// A failed request: its status and message (`{"error": …}`).
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, msg.into())
}

/// A step's answer.
pub(super) fn result(observation: Value, reward: Option<f64>, done: bool, info: Value) -> Value {
    json!({"observation": observation, "reward": reward, "done": done, "info": info})
}

/// The router.
pub fn router(server: Shared) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/schema", get(schema))
        .route("/reset", post(reset))
        .route("/step", post(step))
        .route("/state", get(state))
        .route("/close", post(close))
        .route("/sessions", post(reset))
        .route("/sessions/{id}", get(session_state).delete(session_close))
        .route("/sessions/{id}/step", post(session_step))
        .route("/curriculum", get(curriculum))
        .route("/metrics", get(metrics))
        .route("/ws", any(ws))
        .layer(middleware::from_fn_with_state(Arc::clone(&server), auth))
        .layer(middleware::from_fn_with_state(Arc::clone(&server), guard))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::map_response(close_after_refused_body))
        .with_state(server)
}

/// A body refused for its size was not read to its end, so the connection cannot carry another
/// request: say so (`Connection: close`), or a client that pools connections sends its next
/// request down a socket the server is closing.
async fn close_after_refused_body(mut resp: Response) -> Response {
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        resp.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    resp
}

/// The `Host` and `Origin` checks ([`super::origin`]): a browser page of another site, or a
/// rebound name, gets 403 on every route, the WebSocket upgrade included.
async fn guard(AxState(server): AxState<Shared>, req: Request, next: Next) -> Response {
    if let Some(why) = refusal(&server, req.headers()) {
        return ApiError(StatusCode::FORBIDDEN, why).into_response();
    }
    next.run(req).await
}

/// Why [`guard`] refuses a request with these headers, if it does.
fn refusal(server: &Server, headers: &HeaderMap) -> Option<String> {
    let header_of = |name: header::HeaderName| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("\u{fffd}").to_string())
    };
    super::origin::Allowed::new(server.cfg.addr, &server.cfg.allow_origins).refuse(
        header_of(header::HOST).as_deref(),
        header_of(header::ORIGIN).as_deref(),
    )
}

/// `--token`: every route but `/health` needs `Authorization: Bearer <token>`.
async fn auth(AxState(server): AxState<Shared>, req: Request, next: Next) -> Response {
    if let Some(token) = &server.cfg.token {
        let ok = req.uri().path() == "/health"
            || req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .is_some_and(|t| constant_time_eq(t.trim().as_bytes(), token.as_bytes()));
        if !ok {
            return ApiError(
                StatusCode::UNAUTHORIZED,
                "this server needs `Authorization: Bearer <token>`".into(),
            )
            .into_response();
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Run blocking work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the request's work failed: {e}"),
        ))
    })
}

/// A JSON body (an empty body is `{}`), with a 400 that says what is wrong.
fn body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(json!({}));
    }
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("the body is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(bad("the body is a JSON object"));
    }
    Ok(v)
}

async fn health(AxState(server): AxState<Shared>) -> Json<Value> {
    let sessions = server.active();
    let mut h = json!({
        "status": "ok",
        "sessions": sessions,
        "tasks": server.task_count(),
        "unsafe_local": server.may_run_local(),
        // Containers started ahead of resets.
        "warm": lock(&server.warm).len(),
    });
    if server.may_run_local() {
        h["unsafe_local_reason"] = json!(super::UNSAFE_LOCAL);
    }
    // Tasks whose environment failed at its last start (tried again after a backoff).
    let unavailable: Vec<Value> = lock(&server.unavailable)
        .iter()
        .map(|(i, why)| json!({"task_id": server.shown_id(*i), "error": why}))
        .collect();
    h["unavailable"] = json!(unavailable);
    Json(h)
}

async fn schema() -> Json<Value> {
    Json(json!({
        "action": tools::action_schema(),
        "tools": tools::schemas(),
        "observation": {
            "type": "object",
            "description": "reset: instruction, tools, session_id, task_id (opaque by default), repo, language, unsafe_local; a tool's step: its output fields, or `error`; submit: the reward's fields",
        },
    }))
}

async fn reset(AxState(server): AxState<Shared>, bytes: axum::body::Bytes) -> Response {
    let req = match body(&bytes) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    match blocking(move || {
        let answer = do_reset(&server, &req);
        // A warm worker taken is replaced at once.
        server.top_up();
        answer
    })
    .await
    {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn step(AxState(server): AxState<Shared>, bytes: axum::body::Bytes) -> Response {
    let req = match body(&bytes) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let Some(id) = req
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return bad("`session_id` is required").into_response();
    };
    let Some(action) = req.get("action").cloned() else {
        return bad("`action` is required: {\"tool\": …, \"arguments\": {…}}").into_response();
    };
    match blocking(move || do_step(&server, &id, &action)).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn session_step(
    AxState(server): AxState<Shared>,
    Path(id): Path<String>,
    bytes: axum::body::Bytes,
) -> Response {
    let req = match body(&bytes) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let action = req.get("action").cloned().unwrap_or(req);
    match blocking(move || do_step(&server, &id, &action)).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn state(
    AxState(server): AxState<Shared>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(id) = q.get("session_id").cloned() else {
        return bad("`session_id` is required (GET /state?session_id=…)").into_response();
    };
    match blocking(move || do_state(&server, &id)).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn session_state(AxState(server): AxState<Shared>, Path(id): Path<String>) -> Response {
    match blocking(move || do_state(&server, &id)).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn close(AxState(server): AxState<Shared>, bytes: axum::body::Bytes) -> Response {
    let req = match body(&bytes) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let Some(id) = req
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return bad("`session_id` is required").into_response();
    };
    match blocking(move || do_close(&server, &id)).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn session_close(AxState(server): AxState<Shared>, Path(id): Path<String>) -> Response {
    match blocking(move || do_close(&server, &id)).await {
        Ok(s) => Json(s).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn curriculum(AxState(server): AxState<Shared>) -> Json<Value> {
    let guard = lock(&server.curriculum);
    let cur = &guard.0;
    let tasks: Vec<Value> = (0..cur.len())
        .map(|i| {
            json!({
                "task_id": server.shown_id(i),
                "bucket": cur.tasks()[i].bucket(),
                "attempts": cur.task_stats(i).attempts,
                "successes": cur.task_stats(i).successes,
                "pass_rate": cur.pass_rate(i),
                "weight": cur.weight(i),
            })
        })
        .collect();
    Json(json!({
        "step": cur.step(),
        "buckets": cur.buckets(),
        "tasks": tasks,
        "plan": cur.generation_plan(server.cfg.target),
    }))
}

async fn metrics(
    AxState(server): AxState<Shared>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let active = server.active();
    let m = lock(&server.metrics).clone();
    let wants_text = q.get("format").is_some_and(|f| f == "prometheus")
        || headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.starts_with("text/plain"));
    if wants_text {
        (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            m.to_prometheus(active),
        )
            .into_response()
    } else {
        Json(m.to_json(active)).into_response()
    }
}

/// `reset`: a new session on the asked task, or on the curriculum's next draw.
/// How long a reset that finds the warm pool empty waits for a container being started or
/// recycled for it before it starts one of its own.
const WARM_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a reset that finds every place under `--max-sessions` held, some by containers on
/// their way to the pool, waits for one of them before it is refused (429).
const FULL_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

pub fn do_reset(server: &Server, req: &Value) -> Result<Value, ApiError> {
    let seed = req.get("seed").and_then(Value::as_u64);
    let asked = match req.get("task_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => {
            Some(
                server
                    .task_index(id)
                    .ok_or_else(|| match server.refused(id) {
                        Some(why) => ApiError(
                            StatusCode::UNPROCESSABLE_ENTITY,
                            format!("task `{id}` is not served here: {why}"),
                        ),
                        None => ApiError(
                            StatusCode::NOT_FOUND,
                            format!("no task `{id}` on this server"),
                        ),
                    })?,
            )
        }
        Some(_) => return Err(bad("`task_id` is a string")),
    };
    // A warm worker brings its place under --max-sessions; otherwise one is taken before any
    // environment starts (given back if none does). When every place is held and some by
    // containers on their way to the pool (started or recycled), the reset waits for one of
    // them rather than being refused.
    let give_up = std::time::Instant::now() + FULL_WAIT;
    let (warm, free) = loop {
        let warm = match (asked, seed) {
            (Some(i), _) => server.take_warm(Some(i), WARM_WAIT),
            (None, None) => server.take_warm(None, WARM_WAIT),
            (None, Some(_)) => None,
        };
        if warm.is_some() {
            break (warm, None);
        }
        if let Some(slot) = server.free_slot() {
            break (None, Some(slot));
        }
        let coming = server.warming.load(std::sync::atomic::Ordering::SeqCst)
            + server.recycling.load(std::sync::atomic::Ordering::SeqCst);
        if coming == 0 || std::time::Instant::now() >= give_up {
            break (None, None);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let too_many = || {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{} sessions are active, the most this server runs (--max-sessions): close one",
                server.cfg.max_sessions
            ),
        )
    };
    let unavailable = |e: String| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the task's environment could not start: {e}"),
        )
    };
    // How the session's container came: `own` (a warm one of the task's own image), `shared`
    // (a warm one of its task base), `recycled` (the same, recycled from an ended session),
    // `cold` (started for this reset).
    let mut how = match &warm {
        Some(w) if w.base.is_none() => "own",
        Some(w) if w.recycled => "recycled",
        Some(_) => "shared",
        None => "cold",
    };
    // A container of a task base goes back to the pool, recycled, when the session ends.
    let mut recycle_to = None;
    let (task, worker, env, kind, slot) = match warm {
        Some(w) if w.base.is_none() => (w.task, w.worker, w.env, w.kind, w.slot),
        // A bare container of the task base: the task asked for (or the one drawn when it
        // started) enters it; if that fails, the task's own image starts in its place.
        Some(w) => {
            let i = asked.unwrap_or(w.task);
            let (worker, env, kind) = match server.enter_shared(i, w.worker) {
                Ok(entered) => {
                    recycle_to = w.base.map(|base| super::warm::RecycleTo {
                        tx: server.spent_tx.clone(),
                        base,
                    });
                    entered
                }
                Err(e) => {
                    tracing::warn!(task = %server.task(i).instance_id, "a warm task base: {e}");
                    how = "cold";
                    server.start_worker(i).map_err(unavailable)?
                }
            };
            (i, worker, env, kind, w.slot)
        }
        None => {
            let slot = free.ok_or_else(too_many)?;
            let i = asked.unwrap_or_else(|| server.draw(seed));
            tracing::info!(
                task = %server.task(i).instance_id,
                warming = server.warming.load(std::sync::atomic::Ordering::SeqCst),
                recycling = server.recycling.load(std::sync::atomic::Ordering::SeqCst),
                places_used = server.slots.used(),
                "a reset starts a container: none was warm"
            );
            let (worker, env, kind) = server.start_worker(i).map_err(unavailable)?;
            (i, worker, env, kind, slot)
        }
    };
    let mut session = Session::new(task, worker, env, kind, Some(slot));
    session.recycle_to = recycle_to;
    // The repository's size now, measured as each `bash` step measures it: what
    // `--max-tree-mb` counts from.
    if let Some(w) = session.worker.as_deref_mut() {
        let size = format!("{}/{}", w.scratch(), tools::TREE_KB_FILE);
        if w.exec_and_measure(":", std::time::Duration::from_secs(60), &size)
            .is_ok()
        {
            tree_growth_kb(&mut session);
        }
    }
    let t = &*server.task(task);
    let shown = server.shown_id(task);
    let local = kind == crate::sandbox::SandboxKind::Local;
    let mut observation = json!({
        "instruction": instruction(t),
        "tools": tools::schemas(),
        "session_id": session.id,
        "task_id": shown,
        "repo": t.repo,
        "language": t.language.name(),
        "unsafe_local": local,
    });
    let mut info =
        json!({"session_id": session.id, "task_id": shown, "unsafe_local": local, "warm": how});
    if local {
        observation["unsafe_local_reason"] = json!(super::UNSAFE_LOCAL_SESSION);
        info["unsafe_local_reason"] = json!(super::UNSAFE_LOCAL);
    }
    server.record(&session);
    lock(&server.metrics).session_started();
    lock(&server.sessions).insert(session.id.clone(), super::Entry::new(session));
    Ok(result(observation, None, false, info))
}

/// What the agent is asked to do.
fn instruction(t: &crate::task::Task) -> String {
    format!(
        "{}\n\nThe repository is checked out in the working directory. Change the code so that \
         the problem above is fixed, without changing the tests; use the tools, then `submit`.",
        t.problem_statement.trim_end()
    )
}

fn find(server: &Server, id: &str) -> Result<super::Entry, ApiError> {
    if let Some(e) = lock(&server.sessions).get(id) {
        return Ok(e.clone());
    }
    match lock(&server.store).load(id) {
        Some(st) => Err(ApiError(
            StatusCode::CONFLICT,
            format!("session `{id}` has ended ({})", st.status.as_str()),
        )),
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!("no session `{id}`"),
        )),
    }
}

/// `step`: one action in a session.
pub fn do_step(server: &Server, id: &str, action: &Value) -> Result<Value, ApiError> {
    let entry = find(server, id)?;
    // Not idle while the call waits for the session or runs.
    let _busy = crate::serve::session::Busy::new(&entry.live);
    let mut s = lock(&entry.session);
    if s.status != Status::Active {
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!(
                "session `{id}` has ended ({}): {}",
                s.status.as_str(),
                s.detail
            ),
        ));
    }
    s.count_step();
    let action = match tools::parse_action(action) {
        Ok(a) => a,
        Err(e) => {
            lock(&server.metrics).tool_call("invalid", 0.0, true);
            server.record(&s);
            return Ok(result(
                json!({"error": e}),
                None,
                false,
                json!({"steps": s.steps}),
            ));
        }
    };
    if action.tool == "submit" {
        return submit(server, &mut s);
    }
    let started = Instant::now();
    let losses_before = s.worker.as_ref().map_or(0, |w| w.losses());
    let task_file = server.task(s.task).metadata.location.file.clone();
    let outcome = {
        let tool = action.tool.as_str();
        let args = &action.arguments;
        match tool {
            "run_tests" => grade::run_tests(server, &mut s, args).map(|v| (v, None)),
            _ => {
                let worker = s
                    .worker
                    .as_deref_mut()
                    .ok_or_else(|| ToolError::Environment("the environment is gone".into()));
                match worker {
                    Err(e) => Err(e),
                    Ok(w) => match tool {
                        "bash" => {
                            tools::bash(w, args, server.cfg.max_tree_mb * 1024).map(|v| (v, None))
                        }
                        "read_file" => tools::read_file(w, args).map(|(v, p)| (v, Some(p))),
                        "edit" => tools::edit(w, args).map(|(v, _)| (v, None)),
                        "write_file" => tools::write_file(w, args).map(|(v, _)| (v, None)),
                        _ => Err(ToolError::Agent(format!("unknown tool `{tool}`"))),
                    },
                }
            }
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    s.tool_seconds += seconds;
    // A worker that lost its state during the step (its container died, its agent was killed:
    // `kill -9 -1` from bash) holds no longer what the agent did: the agent ended its episode,
    // which is a submit with reward 0. A failure of ours (the step's error is the
    // environment's: a container that could not be started again) stays a failed session.
    let lost = s.worker.as_ref().map_or(0, |w| w.losses()) != losses_before;
    if lost && !matches!(outcome, Err(ToolError::Environment(_))) {
        lock(&server.metrics).tool_call(&action.tool, seconds, true);
        let g = ended_by_agent(
            server,
            &mut s,
            &action.tool,
            AGENT_KILLED_ENVIRONMENT,
            &killed_detail(&action.tool),
        );
        return Ok(finish(server, &mut s, g, KILLED_DETAIL, false));
    }
    // Storage: a session whose repository grew by `--max-tree-mb` (no single file may grow
    // past it either) has ended its episode: reward 0, and the server goes on.
    if action.tool == "bash" && outcome.is_ok() {
        if let Some(grown) = tree_growth_kb(&mut s) {
            if grown >= server.cfg.max_tree_mb * 1024 {
                lock(&server.metrics).tool_call(&action.tool, seconds, true);
                let detail = format!(
                    "the repository grew by {} MiB, the most a session may write \
                     (--max-tree-mb {}): the episode ends with reward 0",
                    grown / 1024,
                    server.cfg.max_tree_mb
                );
                let g = ended_by_agent(server, &mut s, &action.tool, EXCEEDED_STORAGE, &detail);
                return Ok(finish(server, &mut s, g, &detail, false));
            }
        }
    }
    // Localization: the bug's file read, or named in a command.
    if let Some(p) = outcome.as_ref().ok().and_then(|(_, p)| p.clone()) {
        s.opened.insert(p);
    }
    if action.tool == "bash" {
        let cmd = action.arguments["command"].as_str().unwrap_or_default();
        let base = task_file.rsplit('/').next().unwrap_or(&task_file);
        if cmd.contains(&task_file) || (!base.is_empty() && cmd.contains(base)) {
            s.opened.insert(task_file.clone());
        }
    }
    let info = json!({"tool": action.tool, "seconds": seconds, "steps": s.steps});
    match outcome {
        Ok((obs, _)) => {
            lock(&server.metrics).tool_call(&action.tool, seconds, false);
            server.record(&s);
            Ok(result(obs, None, false, info))
        }
        Err(ToolError::Agent(e)) => {
            lock(&server.metrics).tool_call(&action.tool, seconds, true);
            server.record(&s);
            Ok(result(json!({"error": e}), None, false, info))
        }
        Err(ToolError::Environment(e)) => {
            lock(&server.metrics).tool_call(&action.tool, seconds, true);
            fail(server, &mut s, &e);
            Err(ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the session's environment failed, and the session has ended: {e}"),
            ))
        }
    }
}

pub fn do_state(server: &Server, id: &str) -> Result<State, ApiError> {
    let found = lock(&server.sessions).get(id).cloned();
    if let Some(e) = found {
        // A session whose call is running answers from what is kept outside its lock.
        return Ok(match e.session.try_lock() {
            Ok(s) => s.state(&server.shown_id(s.task)),
            Err(_) => State {
                session_id: id.to_string(),
                task_id: String::new(),
                status: e.live.status(),
                steps: e.live.steps(),
                reward: None,
                created_at: String::new(),
                ended_at: None,
                detail: "a call of this session is running".to_string(),
            },
        });
    }
    lock(&server.store)
        .load(id)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no session `{id}`")))
}

/// `close`: end a session (closing an ended one answers its state again).
pub fn do_close(server: &Server, id: &str) -> Result<State, ApiError> {
    let found = lock(&server.sessions).get(id).cloned().map(|e| e.session);
    let Some(arc) = found else {
        return lock(&server.store)
            .load(id)
            .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no session `{id}`")));
    };
    let mut s = lock(&arc);
    if s.status == Status::Active {
        s.end(Status::Closed, "closed by the client");
        server.record(&s);
        lock(&server.metrics).session_ended(Status::Closed.as_str());
    }
    Ok(s.state(&server.shown_id(s.task)))
}

async fn ws(ws: WebSocketUpgrade, AxState(server): AxState<Shared>) -> Response {
    ws.max_message_size(BODY_LIMIT)
        .on_upgrade(move |socket| ws_session(socket, server))
}

/// One WebSocket connection: `{"type": "reset"|"step"|"state"|"close", "data": {…}}` in,
/// `{"type": "result"|"state"|"error", "data": {…}}` out. `step`, `state` and `close` use the
/// connection's last session when `data` names none.
async fn ws_session(mut socket: WebSocket, server: Shared) {
    let mut current: Option<String> = None;
    while let Some(Ok(msg)) = socket.recv().await {
        let text = match msg {
            Message::Text(t) => t.to_string(),
            Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            Message::Close(_) => break,
            _ => continue,
        };
        let answer = ws_answer(&server, &text, &mut current).await;
        if socket
            .send(Message::Text(answer.to_string().into()))
            .await
            .is_err()
        {
            break;
        }
    }
}

async fn ws_answer(server: &Shared, text: &str, current: &mut Option<String>) -> Value {
    let err =
        |e: ApiError| json!({"type": "error", "data": {"status": e.0.as_u16(), "error": e.1}});
    let msg: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return err(bad(format!("the message is not JSON: {e}"))),
    };
    let kind = msg["type"].as_str().unwrap_or_default().to_string();
    let data = msg.get("data").cloned().unwrap_or_else(|| json!({}));
    let session = data
        .get("session_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| current.clone());
    let s = Arc::clone(server);
    match kind.as_str() {
        "reset" => match blocking(move || do_reset(&s, &data)).await {
            Ok(v) => {
                *current = v["observation"]["session_id"].as_str().map(str::to_string);
                json!({"type": "result", "data": v})
            }
            Err(e) => err(e),
        },
        "step" => {
            let Some(id) = session else {
                return err(bad("no session: reset first"));
            };
            let action = data.get("action").cloned().unwrap_or(data);
            match blocking(move || do_step(&s, &id, &action)).await {
                Ok(v) => json!({"type": "result", "data": v}),
                Err(e) => err(e),
            }
        }
        "state" | "close" => {
            let Some(id) = session else {
                return err(bad("no session: reset first"));
            };
            let closing = kind == "close";
            match blocking(move || {
                if closing {
                    do_close(&s, &id)
                } else {
                    do_state(&s, &id)
                }
            })
            .await
            {
                Ok(st) => json!({"type": "state", "data": st}),
                Err(e) => err(e),
            }
        }
        other => err(bad(format!(
            "unknown message type `{other}` (reset, step, state, close)"
        ))),
    }
}

#[cfg(test)]
mod tests;
