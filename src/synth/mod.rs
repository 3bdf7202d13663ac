//! Test synthesis for survivors (Python): record calls while the clean suite runs, replay
//! those that reach the mutated function on the clean and the buggy code, and write the
//! inputs whose outcome differs as a small pytest file that calls the public API.
//!
//! The Python halves ship into the sandbox: `trace.py` (a pytest plugin recording calls and
//! which repository functions each reached), `replay.py` (makes the calls, twice, and writes
//! their outcomes) and `literal.py` (values as Python source, or refused). The synthesized
//! file goes through the same triple verification as every task (see
//! [`crate::verify::verify_synthesized`]).
//!
//! The pieces: `trace` (running the tracer; the recorded calls and scenarios), `replay`
//! (making calls on both trees and comparing their outcomes), the searches for inputs when no
//! recorded call tells the versions apart (`scenario`, `search`, `symbolic`, starting from
//! `templates`), `reach` (whether the mutated code can run at all) and `render` (the test
//! file); `helpers` ships the Python halves. This module orchestrates: [`search()`].

mod helpers;
pub mod java;
mod reach;
mod render;
mod replay;
mod scenario;
mod search;
mod symbolic;
mod templates;
#[cfg(test)]
mod tests;
mod trace;

pub use reach::unreachable;
pub use render::{render, SynthTest};
pub use replay::{CallOutcome, Distinguishing};
pub use symbolic::Symbolic;
pub use trace::{reaching_calls, trace, Scenario, ScenarioStep, Trace, TracedCall};

use crate::candidate::Candidate;
use crate::sandbox::{SandboxError, Worker};
use replay::{assertable, replay};
use scenario::scenarios;
use search::generated;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::time::Duration;
use symbolic::symbolic;
use trace::is_public;

/// CPU seconds CrossHair may spend per survivor (its `--per_condition_timeout`).
pub const CROSSHAIR_SECONDS: u64 = 6;
/// Seconds the Hypothesis search may spend per survivor.
pub const SEARCH_SECONDS: u64 = 12;
/// Seconds it may spend on a survivor whose recorded reaching calls told nothing apart
/// (without `--deep-synthesis`, which gives it [`SEARCH_SECONDS`] and then CrossHair).
pub const QUICK_SEARCH_SECONDS: u64 = 2;
/// At most this many recorded calls are replayed per survivor.
pub const MAX_REPLAYED: usize = 200;
/// At most this many asserts in one synthesized file.
pub const MAX_ASSERTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    #[error("{0}")]
    Helper(String),
}

/// What synthesis needs to know about the repository.
#[derive(Clone, Debug)]
pub struct SynthSetup {
    /// The interpreter (`python`), as the test command uses it.
    pub python: String,
    /// The command that starts pytest (`python -m pytest`).
    pub pytest: String,
    /// Repository-relative source files whose functions are traced.
    pub source_files: Vec<String>,
    /// Import roots (`.`, `src`), prepended to PYTHONPATH.
    pub python_path: Vec<String>,
    /// Existing test files: the new file goes beside them under a name none of them has.
    pub test_files: Vec<String>,
}

/// The result of searching recorded inputs for one survivor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// Recorded calls that reach the mutated function.
    pub reaching: usize,
    /// Of those, replayed (capped at [`MAX_REPLAYED`]).
    pub replayed: usize,
    /// Functions those calls enter through.
    pub entry_functions: usize,
    pub found: Vec<Distinguishing>,
    /// Entry functions Hypothesis searched (when no recorded input told the versions apart).
    #[serde(default)]
    pub searched: usize,
    /// Why the Hypothesis search could not run, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_error: Option<String>,
    /// What CrossHair said, when it ran (after Hypothesis found nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbolic: Option<Symbolic>,
    /// The replayed calls told nothing apart, nor did a short Hypothesis search, and the
    /// longer searches were not made (no `--deep-synthesis`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gave_up: bool,
}

/// What synthesis did for one survivor, kept with its outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthRecord {
    /// `synthesized` (a test was written; the verdict says whether it verified),
    /// `no-difference` (recorded inputs reach the function, none tells the versions apart),
    /// `no-reaching-calls` (no recorded call reaches the function), `unreachable` (no caller
    /// can run the code: [`unreachable`]), `over-budget`, `error`.
    pub status: String,
    pub reaching: usize,
    pub replayed: usize,
    pub entry_functions: usize,
    /// Entry functions the Hypothesis search tried.
    #[serde(default)]
    pub searched: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_path: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<Distinguishing>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// What CrossHair said, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbolic: Option<Symbolic>,
}

impl SynthRecord {
    pub fn from_search(status: &str, s: &Search) -> SynthRecord {
        SynthRecord {
            status: status.to_string(),
            reaching: s.reaching,
            replayed: s.replayed,
            entry_functions: s.entry_functions,
            searched: s.searched,
            test_path: None,
            cases: s.found.clone(),
            detail: s.search_error.clone().unwrap_or_default(),
            symbolic: s.symbolic.clone(),
        }
    }
}

/// Replay the calls that reach `cand`'s function on the clean and the buggy code; keep the
/// inputs whose outcomes differ (at most [`MAX_ASSERTS`], distinct entry functions first).
/// When none does, scenarios are tried; past them, only with `deep` (or when no recorded call
/// reaches the function at all) are inputs searched for with Hypothesis and CrossHair: inputs
/// the suite itself makes that reach the mutated code and behave the same on both versions
/// are the cheap evidence of equivalence the search is rarely worth its time against.
pub fn search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    deep: bool,
) -> Result<Search, SynthError> {
    let (reaching, calls) = reaching_calls(trace, cand, MAX_REPLAYED);
    let entry_functions = calls
        .iter()
        .map(|c| (&c.file, &c.qualname))
        .collect::<BTreeSet<_>>()
        .len();
    let mut search = Search {
        reaching,
        replayed: calls.len(),
        entry_functions,
        found: Vec::new(),
        searched: 0,
        search_error: None,
        symbolic: None,
        gave_up: false,
    };
    if calls.is_empty() {
        scenarios(worker, setup, trace, cand, timeout, &mut search)?;
        if search.found.is_empty() {
            generated(
                worker,
                setup,
                trace,
                cand,
                timeout,
                SEARCH_SECONDS,
                &mut search,
            )?;
        }
        if search.found.is_empty() {
            symbolic(worker, setup, trace, cand, timeout, &mut search)?;
        }
        return Ok(search);
    }
    let clean = replay(worker, setup, &calls, None, timeout)?;
    let buggy = replay(worker, setup, &calls, Some(&cand.bug_patch), timeout)?;
    let mut seen_entries = BTreeSet::new();
    let mut later = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let id = i.to_string();
        let (Some(c), Some(b)) = (clean.get(&id), buggy.get(&id)) else {
            continue;
        };
        if !assertable(c, b) {
            continue;
        }
        let d = Distinguishing {
            call: (*call).clone(),
            clean: c.clone(),
            buggy: b.clone(),
        };
        if seen_entries.insert((call.file.clone(), call.qualname.clone())) {
            search.found.push(d);
        } else {
            later.push(d);
        }
    }
    search.found.extend(later);
    search.found.truncate(MAX_ASSERTS);
    if search.found.iter().all(|d| !is_public(&d.call)) {
        // Only private functions tell the versions apart (or nothing does): a scenario that
        // reaches the bug through what users call (`repr(box)`) comes first.
        let private = std::mem::take(&mut search.found);
        scenarios(worker, setup, trace, cand, timeout, &mut search)?;
        search.found.extend(private);
        search.found.truncate(MAX_ASSERTS);
    }
    if search.found.is_empty() {
        // Recorded calls reach the function and tell nothing apart: a short search finds the
        // boundary inputs the suite never tried (Hypothesis finds them in its first examples,
        // if at all); without `deep`, a survivor it finds nothing for is given up then.
        let seconds = if deep {
            SEARCH_SECONDS
        } else {
            QUICK_SEARCH_SECONDS
        };
        generated(worker, setup, trace, cand, timeout, seconds, &mut search)?;
        if search.found.is_empty() && !deep {
            search.gave_up = true;
            return Ok(search);
        }
    }
    if search.found.is_empty() {
        symbolic(worker, setup, trace, cand, timeout, &mut search)?;
    }
    Ok(search)
}
