//! Replay: recorded or proposed calls made on the clean and on the buggy tree (`replay.py`),
//! what each call did, and which differences a test can assert.

use super::helpers::{put_scratch, python_path, ship_helpers};
use super::render::call_expr;
use super::trace::TracedCall;
use super::{SynthError, SynthSetup};
use crate::sandbox::{shell_quote, Worker};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

const CALLS_IN: &str = "swe_forge_calls.json";
const REPLAY_OUT: &str = "swe_forge_replay.json";

/// What one call did (see replay.py).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CallOutcome {
    Value {
        source: Option<String>,
        repr: String,
        #[serde(default)]
        imports: Vec<String>,
        #[serde(default)]
        nondeterministic: bool,
        /// An object of the repository's classes with no source: its public attributes that
        /// can be written back (name → source), by which two such objects are told apart.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        attrs: BTreeMap<String, String>,
    },
    Raised {
        #[serde(rename = "type")]
        type_name: String,
        type_module: String,
        message: String,
        #[serde(default)]
        nondeterministic: bool,
        /// An exception of the repository's classes: its public attributes that can be
        /// written back (name → source), as for values.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        attrs: BTreeMap<String, String>,
        /// What those attributes' sources import.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        imports: Vec<String>,
    },
    Timeout,
    Error {
        detail: String,
    },
    /// A scenario: the outcome of each step.
    Scenario {
        steps: Vec<CallOutcome>,
        #[serde(default)]
        nondeterministic: bool,
    },
}

impl CallOutcome {
    fn deterministic(&self) -> bool {
        match self {
            CallOutcome::Value {
                nondeterministic, ..
            }
            | CallOutcome::Raised {
                nondeterministic, ..
            } => !nondeterministic,
            _ => false,
        }
    }

    /// A short human description: `returns 3` / `raises ValueError: empty`.
    pub fn describe(&self) -> String {
        match self {
            CallOutcome::Value { source, repr, .. } => {
                format!("returns {}", source.as_deref().unwrap_or(repr))
            }
            CallOutcome::Raised {
                type_name, message, ..
            } => {
                if message.is_empty() {
                    format!("raises {type_name}")
                } else {
                    format!("raises {type_name}: {message}")
                }
            }
            CallOutcome::Timeout => "does not return (times out)".into(),
            CallOutcome::Error { detail } => format!("cannot be called ({detail})"),
            CallOutcome::Scenario { steps, .. } => format!("{} steps", steps.len()),
        }
    }
}

/// An input on which the clean and the buggy code differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Distinguishing {
    pub call: TracedCall,
    pub clean: CallOutcome,
    pub buggy: CallOutcome,
}

impl Distinguishing {
    /// The call as a user writes it: `parse_quantity('2 kg')`, `Period(...).contains(...)`.
    pub fn call_text(&self) -> String {
        call_expr(&self.call)
    }

    /// When the two versions return objects that differ only in their state: the attributes
    /// that differ (name, the clean value's source, the buggy one's, `None` when it has no
    /// such attribute or one that cannot be written), at most 2.
    pub fn attr_differences(&self) -> Vec<(String, String, Option<String>)> {
        attr_differences(&self.clean, &self.buggy)
    }
}

fn attr_differences(
    clean: &CallOutcome,
    buggy: &CallOutcome,
) -> Vec<(String, String, Option<String>)> {
    let (a, b) = match (clean, buggy) {
        (
            CallOutcome::Value {
                source: None,
                attrs: a,
                ..
            },
            CallOutcome::Value {
                source: None,
                attrs: b,
                ..
            },
        ) => (a, b),
        // Two exceptions of one type with one message that differ in their attributes.
        (
            CallOutcome::Raised {
                type_name: ta,
                type_module: ma,
                message: xa,
                attrs: a,
                ..
            },
            CallOutcome::Raised {
                type_name: tb,
                type_module: mb,
                message: xb,
                attrs: b,
                ..
            },
        ) if (ta, ma, xa) == (tb, mb, xb) => (a, b),
        _ => return Vec::new(),
    };
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .take(2)
        .map(|(k, v)| (k.clone(), v.clone(), b.get(k).cloned()))
        .collect()
}

pub(super) fn replay(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    calls: &[&TracedCall],
    bug_patch: Option<&str>,
    timeout: Duration,
) -> Result<BTreeMap<String, CallOutcome>, SynthError> {
    let input: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            serde_json::json!({
                "id": i.to_string(),
                "module": c.module,
                "qualname": c.qualname,
                "receiver": c.receiver,
                "args": c.args,
            })
        })
        .collect();
    replay_values(worker, setup, &input, bug_patch, timeout)
}

pub(super) fn replay_values(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    input: &[serde_json::Value],
    bug_patch: Option<&str>,
    timeout: Duration,
) -> Result<BTreeMap<String, CallOutcome>, SynthError> {
    worker.reset()?;
    if let Some(p) = bug_patch {
        worker.apply_patch(p)?;
    }
    let scratch = worker.scratch().to_string();
    let input = serde_json::to_string(input).unwrap_or_default();
    ship_helpers(worker, timeout)?;
    put_scratch(worker, CALLS_IN, input.as_bytes(), timeout)?;
    let script = format!(
        "{}{} {} {} {} >/dev/null\n",
        python_path(setup, &scratch),
        setup.python,
        shell_quote(&format!("{scratch}/swe_forge_replay.py")),
        shell_quote(&format!("{scratch}/{CALLS_IN}")),
        shell_quote(&format!("{scratch}/{REPLAY_OUT}")),
    );
    let out = worker.exec(&script, timeout)?;
    let bytes = worker.read_scratch(REPLAY_OUT)?.ok_or_else(|| {
        SynthError::Helper(format!(
            "replay wrote nothing (exit {:?}): {}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
    })?;
    worker.reset()?;
    serde_json::from_slice(&bytes).map_err(|e| SynthError::Helper(format!("replay.json: {e}")))
}

/// Whether `clean` → `buggy` is a difference a test can assert.
pub(super) fn assertable(clean: &CallOutcome, buggy: &CallOutcome) -> bool {
    if !clean.deterministic() {
        return false;
    }
    match (clean, buggy) {
        (
            CallOutcome::Value {
                source: Some(a), ..
            },
            CallOutcome::Value { source: b, .. },
        ) => b.as_deref() != Some(a.as_str()),
        (CallOutcome::Value { source: None, .. }, CallOutcome::Value { .. }) => {
            !attr_differences(clean, buggy).is_empty()
        }
        (CallOutcome::Value { .. }, CallOutcome::Raised { .. } | CallOutcome::Timeout) => true,
        (
            CallOutcome::Raised {
                type_name,
                type_module,
                message,
                ..
            },
            CallOutcome::Raised {
                type_name: t2,
                type_module: m2,
                message: msg2,
                ..
            },
        ) => {
            (type_name, type_module) != (t2, m2)
                || message != msg2
                || !attr_differences(clean, buggy).is_empty()
        }
        (CallOutcome::Raised { .. }, CallOutcome::Value { .. } | CallOutcome::Timeout) => true,
        _ => false,
    }
}
