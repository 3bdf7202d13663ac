//! Process metrics of the served episodes: localization (did the agent open and edit the bug's
//! file and function), patch syntax validity, pass rate, failure types, steps per episode, and
//! the time spent in tools against the time spent grading. Aggregated over the server's life;
//! `GET /metrics` gives them as JSON or in Prometheus' text format.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What one graded episode says about the agent's process.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Episode {
    pub steps: u64,
    pub reward: f64,
    pub failure_type: String,
    pub opened_file: bool,
    pub edited_file: bool,
    pub edited_function: bool,
    /// The patch's changed files all parse.
    pub syntax_valid: bool,
    pub hack_flags: Vec<String>,
    pub tool_seconds: f64,
    pub grade_seconds: f64,
}

/// The aggregate.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Metrics {
    pub sessions_started: u64,
    pub sessions_ended: BTreeMap<String, u64>,
    pub steps: u64,
    pub tool_calls: BTreeMap<String, u64>,
    pub tool_errors: u64,
    pub submits: u64,
    pub solved: u64,
    pub failure_types: BTreeMap<String, u64>,
    pub hack_flags: BTreeMap<String, u64>,
    pub opened_file: u64,
    pub edited_file: u64,
    pub edited_function: u64,
    pub syntax_valid: u64,
    pub steps_of_submitted: u64,
    pub tool_seconds: f64,
    pub grade_seconds: f64,
    /// Session containers recycled back into the warm pool.
    pub recycled: u64,
    /// Submits graded in their session's own container (recycled), not a fresh one.
    pub graded_in_place: u64,
}

impl Metrics {
    pub fn session_started(&mut self) {
        self.sessions_started += 1;
    }

    pub fn session_ended(&mut self, status: &str) {
        *self.sessions_ended.entry(status.to_string()).or_default() += 1;
    }

    pub fn tool_call(&mut self, tool: &str, seconds: f64, error: bool) {
        self.steps += 1;
        *self.tool_calls.entry(tool.to_string()).or_default() += 1;
        self.tool_errors += u64::from(error);
        self.tool_seconds += seconds;
    }

    pub fn episode(&mut self, e: &Episode) {
        self.submits += 1;
        self.solved += u64::from(e.reward >= 1.0);
        *self
            .failure_types
            .entry(e.failure_type.clone())
            .or_default() += 1;
        for f in &e.hack_flags {
            *self.hack_flags.entry(f.clone()).or_default() += 1;
        }
        self.opened_file += u64::from(e.opened_file);
        self.edited_file += u64::from(e.edited_file);
        self.edited_function += u64::from(e.edited_function);
        self.syntax_valid += u64::from(e.syntax_valid);
        self.steps_of_submitted += e.steps;
        self.grade_seconds += e.grade_seconds;
    }

    /// The JSON answer: the counters and the rates derived from them.
    pub fn to_json(&self, active: usize) -> serde_json::Value {
        let rate = |n: u64| {
            if self.submits == 0 {
                serde_json::Value::Null
            } else {
                serde_json::json!(n as f64 / self.submits as f64)
            }
        };
        let steps_per_episode = if self.submits == 0 {
            serde_json::Value::Null
        } else {
            serde_json::json!(self.steps_of_submitted as f64 / self.submits as f64)
        };
        let total = self.tool_seconds + self.grade_seconds;
        let tool_share = if total == 0.0 {
            serde_json::Value::Null
        } else {
            serde_json::json!(self.tool_seconds / total)
        };
        serde_json::json!({
            "sessions_active": active,
            "counters": self,
            "rates": {
                "pass_rate": rate(self.solved),
                "opened_bug_file": rate(self.opened_file),
                "edited_bug_file": rate(self.edited_file),
                "edited_bug_function": rate(self.edited_function),
                "patch_syntax_valid": rate(self.syntax_valid),
                "steps_per_episode": steps_per_episode,
                "tool_share_of_time": tool_share,
            },
        })
    }

    /// Prometheus' text exposition format.
    pub fn to_prometheus(&self, active: usize) -> String {
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: Vec<(String, f64)>| {
            let _ = writeln!(out, "# HELP swe_forge_{name} {help}");
            let _ = writeln!(out, "# TYPE swe_forge_{name} {kind}");
            for (labels, v) in samples {
                let _ = writeln!(out, "swe_forge_{name}{labels} {v}");
            }
        };
        let one = |v: f64| vec![(String::new(), v)];
        let labelled = |key: &str, m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| (format!("{{{key}=\"{}\"}}", escape(k)), *v as f64))
                .collect::<Vec<_>>()
        };
        metric(
            "sessions_active",
            "gauge",
            "Sessions taking actions now.",
            one(active as f64),
        );
        metric(
            "sessions_started_total",
            "counter",
            "Sessions started.",
            one(self.sessions_started as f64),
        );
        metric(
            "sessions_ended_total",
            "counter",
            "Sessions ended, by how.",
            labelled("status", &self.sessions_ended),
        );
        metric(
            "tool_calls_total",
            "counter",
            "Tool calls, by tool.",
            labelled("tool", &self.tool_calls),
        );
        metric(
            "tool_errors_total",
            "counter",
            "Tool calls that returned an error observation.",
            one(self.tool_errors as f64),
        );
        metric(
            "submits_total",
            "counter",
            "Graded submits.",
            one(self.submits as f64),
        );
        metric(
            "solved_total",
            "counter",
            "Submits with reward 1.",
            one(self.solved as f64),
        );
        metric(
            "failures_total",
            "counter",
            "Graded submits, by failure type.",
            labelled("failure_type", &self.failure_types),
        );
        metric(
            "hack_flags_total",
            "counter",
            "Reward-hacking review flags.",
            labelled("flag", &self.hack_flags),
        );
        metric(
            "opened_bug_file_total",
            "counter",
            "Submits whose agent read the bug's file.",
            one(self.opened_file as f64),
        );
        metric(
            "edited_bug_file_total",
            "counter",
            "Submits whose patch edits the bug's file.",
            one(self.edited_file as f64),
        );
        metric(
            "edited_bug_function_total",
            "counter",
            "Submits whose patch edits the bug's function.",
            one(self.edited_function as f64),
        );
        metric(
            "patch_syntax_valid_total",
            "counter",
            "Submits whose changed files parse.",
            one(self.syntax_valid as f64),
        );
        metric(
            "steps_of_submitted_total",
            "counter",
            "Steps of the submitted episodes.",
            one(self.steps_of_submitted as f64),
        );
        metric(
            "tool_seconds_total",
            "counter",
            "Seconds spent in tools.",
            one(self.tool_seconds),
        );
        metric(
            "grade_seconds_total",
            "counter",
            "Seconds spent grading.",
            one(self.grade_seconds),
        );
        metric(
            "containers_recycled_total",
            "counter",
            "Session containers recycled back into the warm pool.",
            one(self.recycled as f64),
        );
        metric(
            "graded_in_place_total",
            "counter",
            "Submits graded in their session's own container, recycled.",
            one(self.graded_in_place as f64),
        );
        out
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episodes_add_up_to_rates_and_prometheus_text() {
        let mut m = Metrics::default();
        m.session_started();
        m.tool_call("bash", 2.0, false);
        m.tool_call("read_file", 1.0, true);
        m.episode(&Episode {
            steps: 3,
            reward: 1.0,
            failure_type: "none".into(),
            opened_file: true,
            edited_file: true,
            edited_function: true,
            syntax_valid: true,
            hack_flags: vec![],
            tool_seconds: 3.0,
            grade_seconds: 9.0,
        });
        m.episode(&Episode {
            steps: 1,
            failure_type: "empty-patch".into(),
            hack_flags: vec!["adds-skip".into()],
            ..Default::default()
        });
        let j = m.to_json(1);
        assert_eq!(j["rates"]["pass_rate"], 0.5);
        assert_eq!(j["rates"]["steps_per_episode"], 2.0);
        assert_eq!(j["rates"]["tool_share_of_time"], 0.25);
        assert_eq!(j["counters"]["failure_types"]["empty-patch"], 1);
        let p = m.to_prometheus(1);
        assert!(
            p.contains("# TYPE swe_forge_submits_total counter\nswe_forge_submits_total 2\n"),
            "{p}"
        );
        assert!(
            p.contains("swe_forge_hack_flags_total{flag=\"adds-skip\"} 1"),
            "{p}"
        );
        assert!(
            p.contains("swe_forge_tool_calls_total{tool=\"bash\"} 1"),
            "{p}"
        );
    }
}
