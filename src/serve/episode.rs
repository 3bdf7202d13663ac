//! How an episode ends: a graded submit; an end the agent brought on (it killed its
//! environment, it wrote past the storage limit), which is a submit with reward 0 so that a
//! trainer that drops failed sessions cannot reward it; or a failure of ours (`failed`).

use super::grade::{self, Graded};
use super::http::{result, ApiError};
use super::metrics::Episode;
use super::session::{Session, Status};
use super::tools;
use super::{lock, Server};
use axum::http::StatusCode;
use serde_json::{json, Value};

pub(super) fn fail(server: &Server, s: &mut Session, why: &str) {
    tracing::warn!(session = %s.id, "session failed: {why}");
    s.end(Status::Failed, why);
    server.record(s);
    lock(&server.metrics).session_ended(Status::Failed.as_str());
}

/// The failure type of an episode the agent ended by killing its environment.
pub const AGENT_KILLED_ENVIRONMENT: &str = "agent-killed-environment";

/// Why an episode whose agent killed its environment during `tool` ended.
pub(super) fn killed_detail(tool: &str) -> String {
    format!(
        "the agent's `{tool}` killed its environment (its processes or its container): what it \
         did is lost, and the episode ends with reward 0"
    )
}

/// The failure type of an episode whose repository grew past `--max-tree-mb`.
pub const EXCEEDED_STORAGE: &str = "exceeded-storage";

/// How much the session's repository grew (KiB) since its first measurement, from the size
/// the last `bash` step left in the scratch directory.
pub(super) fn tree_growth_kb(s: &mut Session) -> Option<u64> {
    let w = s.worker.as_deref_mut()?;
    let text = w.read_scratch(tools::TREE_KB_FILE).ok()??;
    let kb: u64 = String::from_utf8_lossy(&text)
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let start = *s.tree_kb_start.get_or_insert(kb);
    Some(kb.saturating_sub(start))
}

/// The agent ended its episode during `tool` (it killed its environment: `kill -9 -1`, its
/// container died; it wrote past the storage limit): a submit with reward 0 and
/// `failure_type`, counted in the metrics and the curriculum like any other, so that a
/// trainer that drops failed sessions cannot reward it.
pub(super) fn ended_by_agent(
    server: &Server,
    s: &mut Session,
    tool: &str,
    failure_type: &str,
    detail: &str,
) -> Graded {
    tracing::info!(session = %s.id, tool, failure_type, "the agent ended its episode: reward 0");
    let loc = &server.task(s.task).metadata.location;
    let opened = s.opened.contains(&loc.file);
    let info = json!({
        "failure_type": failure_type,
        "detail": detail,
        "tool": tool,
        "patch": "",
        "hack_flags": [],
        "localization": {"opened_file": opened, "edited_file": false, "edited_function": false},
        "syntax_valid": false,
        "fail_to_pass_passed": 0.0,
        "pass_to_pass_regressions": [],
        "tests": {},
        "flaky": [],
        "runs": [],
        "grade_seconds": 0.0,
        "tool_seconds": s.tool_seconds,
        "steps": s.steps,
    });
    let episode = Episode {
        steps: s.steps,
        reward: 0.0,
        failure_type: failure_type.to_string(),
        opened_file: opened,
        tool_seconds: s.tool_seconds,
        ..Episode::default()
    };
    Graded {
        reward: 0.0,
        info,
        episode,
    }
}

/// The `detail` of a session the agent ended by killing its environment.
pub(super) const KILLED_DETAIL: &str = "the agent killed its environment";

/// End a session with its graded submit: the reward recorded, the curriculum and the metrics
/// told (`submit_call`: count the step as a `submit` call); the step's answer.
pub(super) fn finish(
    server: &Server,
    s: &mut Session,
    g: Graded,
    detail: &str,
    submit_call: bool,
) -> Value {
    s.reward = Some(g.reward);
    s.info = Some(g.info.clone());
    s.end(Status::Submitted, detail);
    {
        let mut cur = lock(&server.curriculum);
        cur.0.update(s.task, &[g.reward as f32]);
        if let Some(plan) = &server.plan {
            *lock(plan) = cur.0.generation_plan(server.cfg.target);
        }
    }
    {
        let mut m = lock(&server.metrics);
        if submit_call {
            m.tool_call("submit", 0.0, false);
        }
        m.episode(&g.episode);
        m.session_ended(Status::Submitted.as_str());
    }
    server.record(s);
    let obs = json!({
        "reward": g.reward,
        "failure_type": g.info["failure_type"],
        "fail_to_pass_passed": g.info["fail_to_pass_passed"],
    });
    result(obs, Some(g.reward), true, g.info)
}

pub(super) fn submit(server: &Server, s: &mut Session) -> Result<Value, ApiError> {
    match grade::submit(server, s) {
        Ok(g) => Ok(finish(server, s, g, "", true)),
        // The agent's tree was lost while it was read (its container died, a process it left
        // killed the sandbox's agent): nothing of it can be graded, and the episode is the
        // agent's to lose.
        Err(grade::SubmitError::Lost) => {
            let g = ended_by_agent(
                server,
                s,
                "submit",
                AGENT_KILLED_ENVIRONMENT,
                &killed_detail("submit"),
            );
            Ok(finish(server, s, g, KILLED_DETAIL, true))
        }
        Err(grade::SubmitError::Environment(e)) => {
            fail(server, s, &e);
            Err(ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("grading failed, and the session has ended: {e}"),
            ))
        }
    }
}
