//! The trace: the clean suite run under the tracer (`trace.py`), the calls and scenarios it
//! recorded, and which of them reach a candidate's function.

use super::helpers::{put_scratch, python_path, ship_helpers};
use super::templates::DUNDER_CALLS;
use super::{SynthError, SynthSetup};
use crate::candidate::Candidate;
use crate::sandbox::{shell_quote, Worker};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const TRACE_OUT: &str = "swe_forge_trace.json";
const TRACE_TESTS: &str = "swe_forge_trace_tests.txt";
const TRACE_TIMES: &str = "swe_forge_trace_times.txt";

/// One recorded call (see trace.py).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracedCall {
    pub file: String,
    pub module: String,
    pub qualname: String,
    /// Source of the receiver for methods (`Period(...)`), else `None`.
    pub receiver: Option<String>,
    /// `(arg, key=value)` source.
    pub args: String,
    pub imports: Vec<String>,
    /// `file::qualname` of every repository function this call reached, itself included.
    pub reaches: Vec<String>,
    /// Statements that come first (a scenario: the object's construction and earlier calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
}

/// An object followed through a test: its construction, then the methods called on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    pub file: String,
    pub module: String,
    pub cls: String,
    pub ctor_args: String,
    #[serde(default)]
    pub imports: Vec<String>,
    pub steps: Vec<ScenarioStep>,
    pub reaches: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStep {
    pub method: String,
    pub args: String,
}

/// Every call recorded in one run of the clean suite.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub calls: Vec<TracedCall>,
    /// Calls whose arguments could not be written back as source.
    pub dropped: usize,
    #[serde(default)]
    pub scenarios: Vec<Scenario>,
    /// CPU seconds the tracer's processes spent (user + system, from bash's `times`), where
    /// measured: what the tracer costs, whatever else the machine runs.
    #[serde(default)]
    pub cpu_s: Option<f64>,
}

/// Run the clean suite with the tracer: the tests `tests` names (all of them with `None`).
/// The worker is reset first and after.
pub fn trace(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    tests: Option<&[String]>,
    timeout: Duration,
) -> Result<Trace, SynthError> {
    worker.reset()?;
    let scratch = worker.scratch().to_string();
    let files = serde_json::to_string(&setup.source_files).unwrap_or_else(|_| "[]".into());
    ship_helpers(worker, timeout)?;
    // A selection: its ids in a file the plugin reads, one per line, and their files as
    // pytest's arguments, so only those are collected.
    let (selection, args) = match tests {
        Some(tests) => {
            let path = shell_quote(&format!("{scratch}/{TRACE_TESTS}"));
            let ids: String = tests.iter().map(|t| format!("{t}\n")).collect();
            put_scratch(worker, TRACE_TESTS, ids.as_bytes(), timeout)?;
            let files: BTreeSet<&str> = tests
                .iter()
                .map(|t| t.split("::").next().unwrap_or(t))
                .collect();
            let mut args: String = files
                .iter()
                .map(|f| format!(" {}", shell_quote(f)))
                .collect();
            if args.len() > 32_000 {
                args.clear(); // too many files for the command line: collect all, keep the ids
            }
            (format!("export SWE_FORGE_TRACE_TESTS={path}\n"), args)
        }
        None => (String::new(), String::new()),
    };
    let script = format!(
        "{}{selection}export SWE_FORGE_TRACE_FILES={} SWE_FORGE_TRACE_OUT={}\n{} -p swe_forge_trace -p no:cacheprovider --rootdir=. -q --no-header{args} >/dev/null 2>&1\ntimes > {}\ntest -s \"$SWE_FORGE_TRACE_OUT\"\n",
        python_path(setup, &scratch),
        shell_quote(&files),
        shell_quote(&format!("{scratch}/{TRACE_OUT}")),
        setup.pytest,
        shell_quote(&format!("{scratch}/{TRACE_TIMES}")),
    );
    let out = worker.exec(&script, timeout)?;
    worker.reset()?;
    let bytes = worker.read_scratch(TRACE_OUT)?.ok_or_else(|| {
        SynthError::Helper(format!(
            "the tracer wrote nothing (exit {:?}{}): {}",
            out.exit_code,
            if out.end == crate::run::RunEnd::TimedOut {
                ", timed out"
            } else {
                ""
            },
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
    })?;
    let mut trace: Trace = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("trace.json: {e}")))?;
    trace.cpu_s = worker
        .read_scratch(TRACE_TIMES)
        .ok()
        .flatten()
        .and_then(|b| crate::runner::parse_bash_times(&String::from_utf8_lossy(&b)));
    Ok(trace)
}

impl Trace {
    /// Add the records of another run (other tests): a call or scenario recorded by both is
    /// kept once, with what either saw it reach.
    pub fn merge(&mut self, other: Trace) {
        let mut calls: BTreeMap<(String, String, Option<String>, String), usize> = BTreeMap::new();
        for (i, c) in self.calls.iter().enumerate() {
            calls.insert(
                (
                    c.file.clone(),
                    c.qualname.clone(),
                    c.receiver.clone(),
                    c.args.clone(),
                ),
                i,
            );
        }
        for c in other.calls {
            let key = (
                c.file.clone(),
                c.qualname.clone(),
                c.receiver.clone(),
                c.args.clone(),
            );
            match calls.get(&key) {
                Some(&i) => union_into(&mut self.calls[i].reaches, c.reaches),
                None => {
                    calls.insert(key, self.calls.len());
                    self.calls.push(c);
                }
            }
        }
        self.dropped += other.dropped;
        self.cpu_s = match (self.cpu_s, other.cpu_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        let scenario_key = |s: &Scenario| {
            serde_json::to_string(&(&s.file, &s.cls, &s.ctor_args, &s.steps)).unwrap_or_default()
        };
        let mut scenarios: BTreeMap<String, usize> = self
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (scenario_key(s), i))
            .collect();
        for s in other.scenarios {
            let key = scenario_key(&s);
            match scenarios.get(&key) {
                Some(&i) => union_into(&mut self.scenarios[i].reaches, s.reaches),
                None => {
                    scenarios.insert(key, self.scenarios.len());
                    self.scenarios.push(s);
                }
            }
        }
    }
}

fn union_into(into: &mut Vec<String>, more: Vec<String>) {
    let mut all: BTreeSet<String> = into.drain(..).collect();
    all.extend(more);
    into.extend(all);
}

/// Whether a user calls `call` as it is: no private part in its name or module (the special
/// methods users call through syntax, `repr(m)`, `m[k]`, count as public).
pub(super) fn is_public(call: &TracedCall) -> bool {
    !call
        .qualname
        .split('.')
        .any(|p| p.starts_with('_') && !DUNDER_CALLS.contains(&p))
        && !call.module.split('.').any(|p| p.starts_with('_'))
}

/// The recorded calls to replay for `cand`: those that reached its function, public entry
/// points first, then the shortest; round-robin over entry functions; at most `cap`.
pub fn reaching_calls<'t>(
    trace: &'t Trace,
    cand: &Candidate,
    cap: usize,
) -> (usize, Vec<&'t TracedCall>) {
    let target = format!("{}::{}", cand.file, cand.function);
    let mut by_entry: BTreeMap<(bool, String), Vec<&TracedCall>> = BTreeMap::new();
    let mut reaching = 0;
    for call in &trace.calls {
        if call.reaches.contains(&target) {
            reaching += 1;
            by_entry
                .entry((
                    !is_public(call),
                    format!("{}::{}", call.file, call.qualname),
                ))
                .or_default()
                .push(call);
        }
    }
    for calls in by_entry.values_mut() {
        calls.sort_by_key(|c| {
            (
                c.args.len() + c.receiver.as_ref().map_or(0, |r| r.len()),
                c.args.clone(),
            )
        });
    }
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < cap {
        let mut any = false;
        for calls in by_entry.values() {
            if let Some(c) = calls.get(round) {
                any = true;
                if out.len() < cap {
                    out.push(*c);
                }
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    (reaching, out)
}

/// The import name of a repository file: from a recorded call in it, else from its path
/// under the first import root that contains it (`src/pkg/m.py` → `pkg.m`).
pub(super) fn module_name(trace: &Trace, setup: &SynthSetup, file: &str) -> Option<String> {
    if let Some(c) = trace.calls.iter().find(|c| c.file == file) {
        return Some(c.module.clone());
    }
    let rel = setup
        .python_path
        .iter()
        .filter(|r| r.as_str() != ".")
        .find_map(|r| file.strip_prefix(&format!("{}/", r.trim_end_matches('/'))))
        .unwrap_or(file);
    let rel = rel.strip_suffix(".py")?;
    let rel = rel.strip_suffix("/__init__").unwrap_or(rel);
    Some(rel.replace('/', "."))
}
