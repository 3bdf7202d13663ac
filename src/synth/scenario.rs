//! Scenarios: recorded objects (construction, then method calls) replayed with extra steps
//! on the clean and the buggy tree, and Hypothesis varying their calls of the mutated method.

use super::render::method_call;
use super::replay::{assertable, replay_values, CallOutcome, Distinguishing};
use super::search::run_search;
use super::trace::{Scenario, ScenarioStep, Trace, TracedCall};
use super::{Search, SynthError, SynthSetup, SEARCH_SECONDS};
use crate::candidate::Candidate;
use crate::sandbox::Worker;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::time::Duration;

/// Replay the recorded scenarios (object construction + method calls) that reached the
/// mutated function, each followed by calls of the mutated method recorded on other objects
/// and by probes (calls of the class's other methods), so state a test never looked at shows;
/// the first step whose outcome differs, after steps that all returned alike, becomes a case
/// whose setup is the construction and the earlier steps. When no replay differs, Hypothesis
/// varies the arguments of the mutated method's calls in the shortest scenarios.
pub(super) fn scenarios(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let target = format!("{}::{}", cand.file, cand.function);
    let mut picked: Vec<&Scenario> = trace
        .scenarios
        .iter()
        .filter(|s| s.reaches.contains(&target))
        .collect();
    picked.sort_by_key(|s| (s.steps.len(), s.ctor_args.len()));
    picked.truncate(60);
    if picked.is_empty() {
        return Ok(());
    }
    search.reaching += picked.len();
    search.replayed += picked.len();
    let method = cand
        .function
        .split_once('.')
        .map(|(_, m)| m.to_string())
        .unwrap_or_default();
    let extended: Vec<Scenario> = picked
        .iter()
        .map(|s| {
            let mut s = (*s).clone();
            s.steps
                .extend(extra_steps(trace, &s.cls, &cand.file, &method));
            s
        })
        .collect();
    scenario_cases(worker, setup, cand, &extended, timeout, search)?;
    if search.found.is_empty() && !method.is_empty() && !method.starts_with("__") {
        scenario_search(worker, setup, cand, &extended, &method, timeout, search)?;
    }
    Ok(())
}

/// Steps appended to a scenario of `cls`: up to 3 distinct calls of the mutated `method`
/// recorded on other objects, then probes, calls recorded on other objects of the class, one
/// per method first (so observers such as `history()` are among them), at most 15.
fn extra_steps(trace: &Trace, cls: &str, file: &str, method: &str) -> Vec<ScenarioStep> {
    let mut seen = BTreeSet::new();
    let recorded: Vec<&ScenarioStep> = trace
        .scenarios
        .iter()
        .filter(|s| s.cls == cls && s.file == file)
        .flat_map(|s| s.steps.iter())
        .filter(|st| seen.insert((st.method.clone(), st.args.clone())))
        .collect();
    let mut out: Vec<ScenarioStep> = recorded
        .iter()
        .filter(|st| st.method == method)
        .take(3)
        .map(|st| (*st).clone())
        .collect();
    let mut methods = BTreeSet::new();
    let (first, rest): (Vec<&&ScenarioStep>, Vec<&&ScenarioStep>) = recorded
        .iter()
        .partition(|st| methods.insert(st.method.clone()));
    out.extend(
        first
            .into_iter()
            .chain(rest)
            .take(15)
            .map(|st| (*st).clone()),
    );
    out
}

/// Replay `scenarios` on the clean and the buggy tree; the first one with an assertable
/// difference becomes a case (see [`scenarios`]).
fn scenario_cases(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    scenarios: &[Scenario],
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let picked: Vec<&Scenario> = scenarios.iter().collect();
    let input: Vec<serde_json::Value> = picked
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "id": i.to_string(),
                "module": s.module,
                "scenario": s,
            })
        })
        .collect();
    let clean = replay_values(worker, setup, &input, None, timeout)?;
    let buggy = replay_values(worker, setup, &input, Some(&cand.bug_patch), timeout)?;
    for (i, sc) in picked.iter().enumerate() {
        let id = i.to_string();
        let (
            Some(CallOutcome::Scenario {
                steps: c,
                nondeterministic: false,
            }),
            Some(CallOutcome::Scenario { steps: b, .. }),
        ) = (clean.get(&id), buggy.get(&id))
        else {
            continue;
        };
        // The first step whose difference a test can assert (earlier differences, such as
        // reprs with addresses, are not).
        let Some(k) = (0..c.len().min(b.len())).find(|&k| assertable(&c[k], &b[k])) else {
            continue;
        };
        if !c[..k]
            .iter()
            .all(|o| matches!(o, CallOutcome::Value { .. } | CallOutcome::Raised { .. }))
        {
            continue;
        }
        let var = sc.cls.to_lowercase();
        let mut imports = sc.imports.clone();
        let mut lines = vec![format!("{var} = {}{}", sc.cls, sc.ctor_args)];
        for (st, o) in sc.steps[..k].iter().zip(&c[..k]) {
            let call = method_call(&var, &st.method, &st.args);
            match o {
                CallOutcome::Raised {
                    type_name,
                    type_module,
                    ..
                } => {
                    if type_module != "builtins" {
                        let top = type_name.split('.').next().unwrap_or(type_name);
                        imports.push(format!("from {type_module} import {top}"));
                    }
                    lines.push(format!("with pytest.raises({type_name}):\n    {call}"));
                }
                _ => lines.push(call),
            }
        }
        search.found.push(Distinguishing {
            call: TracedCall {
                file: sc.file.clone(),
                module: sc.module.clone(),
                qualname: format!("{}.{}", sc.cls, sc.steps[k].method),
                receiver: Some(var),
                args: sc.steps[k].args.clone(),
                imports,
                reaches: sc.reaches.clone(),
                setup: lines,
            },
            clean: c[k].clone(),
            buggy: b[k].clone(),
        });
        // One scenario case is enough: the shortest (scenarios are tried shortest first).
        break;
    }
    Ok(())
}

/// Hypothesis varies the arguments of the mutated method's calls in the 3 shortest
/// `scenarios` (search.py, scenario mode); a scenario it finds is replayed like a recorded
/// one before it becomes a case.
fn scenario_search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    scenarios: &[Scenario],
    method: &str,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let tried: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.steps.iter().any(|st| st.method == method))
        .take(3)
        .collect();
    let Some(first) = tried.first() else {
        return Ok(());
    };
    search.searched += 1;
    let request = serde_json::json!({
        "module": first.module,
        "method": method,
        "scenarios": tried,
        "seconds": SEARCH_SECONDS,
        "max_examples": 600,
    });
    let Some(bytes) = run_search(worker, setup, cand, request, timeout, search)? else {
        return Ok(());
    };
    #[derive(Deserialize)]
    struct Varied {
        index: usize,
        steps: Vec<String>,
        #[serde(default)]
        imports: Vec<String>,
    }
    #[derive(Deserialize)]
    struct Answer {
        scenarios: Vec<Varied>,
    }
    let answer: Answer = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("search.json (scenarios): {e}")))?;
    let found: Vec<Scenario> = answer
        .scenarios
        .into_iter()
        .filter_map(|v| {
            let mut sc = (*tried.get(v.index)?).clone();
            if v.steps.len() != sc.steps.len() {
                return None;
            }
            for (st, args) in sc.steps.iter_mut().zip(v.steps) {
                st.args = args;
            }
            sc.imports.extend(v.imports);
            sc.imports.sort();
            sc.imports.dedup();
            Some(sc)
        })
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    scenario_cases(worker, setup, cand, &found, timeout, search)
}
