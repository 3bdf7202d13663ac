//! The Hypothesis search (`search.py`): inputs proposed for the mutated module's entry
//! functions in the tree with the bug, replayed on both trees like recorded calls. Also the
//! running of a search helper, which CrossHair shares.

use super::helpers::{put_scratch, python_path, ship_helpers};
use super::replay::{assertable, replay, Distinguishing};
use super::templates::{neighbour_args, search_templates};
use super::trace::{Trace, TracedCall};
use super::{Search, SynthError, SynthSetup, MAX_ASSERTS, SEARCH_SECONDS};
use crate::candidate::Candidate;
use crate::sandbox::{shell_quote, Worker};
use serde::Deserialize;
use std::time::Duration;

/// A proposed input, as search.py and crosshair.py write them.
#[derive(Deserialize)]
pub(super) struct Proposal {
    qualname: String,
    receiver: Option<String>,
    args: String,
    #[serde(default)]
    imports: Vec<String>,
}

/// Run a search helper (`swe_forge_<name>.py REQUEST OUT`) in the tree with the bug; the
/// request gets the clean text of the mutated file as `clean_source`. The worker is reset
/// after. `Err(reason)` inside when the helper wrote nothing.
pub(super) fn run_on_buggy(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    helper: &str,
    mut request: serde_json::Value,
    limit: Duration,
) -> Result<Result<Vec<u8>, String>, SynthError> {
    // The clean text of the mutated file, read from the clean tree.
    worker.reset()?;
    let clean_source = {
        let out = worker.exec(&format!("cat {}", shell_quote(&cand.file)), limit)?;
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    worker.apply_patch(&cand.bug_patch)?;
    let scratch = worker.scratch().to_string();
    request["clean_source"] = clean_source.into();
    request["file"] = cand.file.clone().into();
    request["scratch"] = scratch.clone().into();
    let input = format!("swe_forge_{helper}_in.json");
    let output = format!("swe_forge_{helper}.json");
    ship_helpers(worker, limit)?;
    put_scratch(worker, &input, request.to_string().as_bytes(), limit)?;
    let script = format!(
        "{}{} {} {} {} >/dev/null\n",
        python_path(setup, &scratch),
        setup.python,
        shell_quote(&format!("{scratch}/swe_forge_{helper}.py")),
        shell_quote(&format!("{scratch}/{input}")),
        shell_quote(&format!("{scratch}/{output}")),
    );
    let out = worker.exec(&script, limit)?;
    let bytes = worker.read_scratch(&output)?;
    worker.reset()?;
    tracing::debug!(candidate = %cand.id, helper, answer = %bytes.as_deref().map(String::from_utf8_lossy).unwrap_or_default(), "search helper");
    Ok(bytes.ok_or_else(|| {
        format!(
            "{helper} wrote nothing (exit {:?}): {}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )
    }))
}

/// [`run_on_buggy`] with search.py, given the larger of `timeout` and three times the search's
/// own budget; `None` (the reason in `search.search_error`) when it wrote nothing.
pub(super) fn run_search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    request: serde_json::Value,
    timeout: Duration,
    search: &mut Search,
) -> Result<Option<Vec<u8>>, SynthError> {
    let limit = timeout.max(Duration::from_secs(SEARCH_SECONDS * 3));
    match run_on_buggy(worker, setup, cand, "search", request, limit)? {
        Ok(b) => Ok(Some(b)),
        Err(why) => {
            search.search_error = Some(why);
            Ok(None)
        }
    }
}

/// Replay proposed inputs on the clean and the buggy tree like recorded calls; keep the
/// assertable differences (up to [`MAX_ASSERTS`] in all).
pub(super) fn replay_proposals(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    templates: &[TracedCall],
    proposals: Vec<Proposal>,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let Some(first) = templates.first() else {
        return Ok(());
    };
    let calls: Vec<TracedCall> = proposals
        .into_iter()
        .map(|p| {
            let template = templates
                .iter()
                .find(|t| t.qualname == p.qualname && t.receiver == p.receiver)
                .or_else(|| templates.iter().find(|t| t.qualname == p.qualname))
                .unwrap_or(first);
            let mut imports = template.imports.clone();
            imports.extend(p.imports);
            imports.sort();
            imports.dedup();
            TracedCall {
                file: cand.file.clone(),
                module: first.module.clone(),
                qualname: p.qualname,
                receiver: p.receiver,
                args: p.args,
                imports,
                reaches: vec![],
                setup: vec![],
            }
        })
        .collect();
    if calls.is_empty() {
        return Ok(());
    }
    let refs: Vec<&TracedCall> = calls.iter().collect();
    let clean = replay(worker, setup, &refs, None, timeout)?;
    let buggy = replay(worker, setup, &refs, Some(&cand.bug_patch), timeout)?;
    for (i, call) in calls.iter().enumerate() {
        let id = i.to_string();
        if let (Some(c), Some(b)) = (clean.get(&id), buggy.get(&id)) {
            if assertable(c, b) {
                search.found.push(Distinguishing {
                    call: call.clone(),
                    clean: c.clone(),
                    buggy: b.clone(),
                });
            }
        }
    }
    search.found.truncate(MAX_ASSERTS);
    Ok(())
}

/// Hypothesis proposes inputs for the mutated module's entry functions (templates: their
/// recorded calls that reached the mutated function); proposals are replayed on the clean and
/// the buggy tree like recorded calls, and only assertable differences are kept.
pub(super) fn generated(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    seconds: u64,
    search: &mut Search,
) -> Result<(), SynthError> {
    let (templates, functions) = search_templates(trace, setup, cand);
    let Some(first) = templates.first() else {
        return Ok(());
    };
    search.searched = functions;
    let request = serde_json::json!({
        "module": first.module,
        "templates": templates.iter().map(|c| serde_json::json!({
            "qualname": c.qualname, "receiver": c.receiver,
            // An empty argument list marks a signature-only template.
            "args": if c.args.is_empty() { None } else { Some(&c.args) },
        })).collect::<Vec<_>>(),
        "neighbour_args": neighbour_args(trace, &cand.file),
        "seconds": seconds,
        "max_examples": 1000,
    });
    let Some(bytes) = run_search(worker, setup, cand, request, timeout, search)? else {
        return Ok(());
    };
    #[derive(Deserialize)]
    struct Found {
        found: Vec<Proposal>,
        #[serde(default)]
        error: Option<String>,
    }
    let found: Found = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("search.json: {e}")))?;
    search.search_error = found.error;
    replay_proposals(
        worker,
        setup,
        cand,
        &templates,
        found.found,
        timeout,
        search,
    )
}
