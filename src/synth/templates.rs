//! Search templates: the calls a search starts from (recorded calls of entry functions, or a
//! signature-only call of the mutated function), and the argument values beside them.

use super::trace::{module_name, reaching_calls, Scenario, Trace, TracedCall};
use super::{SynthSetup, MAX_REPLAYED};
use crate::candidate::Candidate;
use std::collections::BTreeSet;

/// The calls a search starts from: recorded calls of the mutated module's entry functions
/// that reached the mutated function (a few per function, at most 8), or, when the tests never
/// reach it, a signature-only template of the mutated function itself (a method on a receiver
/// recorded for another method of its class). Also the number of distinct functions.
pub(super) fn search_templates(
    trace: &Trace,
    setup: &SynthSetup,
    cand: &Candidate,
) -> (Vec<TracedCall>, usize) {
    let (_, calls) = reaching_calls(trace, cand, MAX_REPLAYED);
    let mut templates: Vec<TracedCall> = Vec::new();
    let mut seen = BTreeSet::new();
    for c in calls.iter().filter(|c| c.file == cand.file) {
        if seen.insert(c.qualname.clone()) || templates.len() < 4 {
            templates.push((*c).clone());
        }
        if templates.len() >= 8 {
            break;
        }
    }
    let method = cand.function.split_once('.');
    if let Some((class, name)) = method.filter(|(_, n)| callable_method(n)) {
        if templates.is_empty() {
            templates = receiver_templates(trace, setup, &cand.file, class, name);
            if !templates.is_empty() {
                seen.insert(cand.function.clone());
            }
        }
    } else if let Some((class, "__init__" | "__new__")) = method.filter(|_| templates.is_empty()) {
        // A constructor: call the class with the arguments recorded for its objects, or, when
        // the tests made none, with arguments drawn from its signature (a mixin's `__new__`).
        let mut args_seen = BTreeSet::new();
        for sc in trace
            .scenarios
            .iter()
            .filter(|sc| sc.cls == class && sc.file == cand.file)
            .filter(|sc| args_seen.insert(sc.ctor_args.clone()))
            .take(4)
        {
            templates.push(TracedCall {
                file: sc.file.clone(),
                module: sc.module.clone(),
                qualname: class.to_string(),
                receiver: None,
                args: sc.ctor_args.clone(),
                imports: sc.imports.clone(),
                reaches: vec![],
                setup: vec![],
            });
        }
        if templates.is_empty() {
            if let Some(module) = module_name(trace, setup, &cand.file) {
                templates.push(TracedCall {
                    file: cand.file.clone(),
                    module,
                    qualname: class.to_string(),
                    receiver: None,
                    args: String::new(),
                    imports: vec![],
                    reaches: vec![],
                    setup: vec![],
                });
            }
        }
        if !templates.is_empty() {
            seen.insert(cand.function.clone());
        }
    } else if templates.is_empty() && !cand.function.contains('.') {
        if let Some(module) = module_name(trace, setup, &cand.file) {
            templates.push(TracedCall {
                file: cand.file.clone(),
                module,
                qualname: cand.function.clone(),
                receiver: None,
                args: String::new(),
                imports: vec![],
                reaches: vec![],
                setup: vec![],
            });
            seen.insert(cand.function.clone());
        }
    }
    (templates, seen.len())
}

/// Special methods a user calls through syntax, as trace.py's `_DUNDER_STEPS`: a search may
/// call them on a receiver like public methods. Constructors are searched through their class.
pub(super) const DUNDER_CALLS: [&str; 9] = [
    "__call__",
    "__getitem__",
    "__contains__",
    "__len__",
    "__repr__",
    "__str__",
    "__eq__",
    "__setitem__",
    "__delitem__",
];

/// Python 2's protocol methods, which no syntax calls in Python 3: a caller can only call them
/// by name (`bl.__getslice__(0, 2)`), and a search does too.
const PY2_PROTOCOL: [&str; 6] = [
    "__getslice__",
    "__setslice__",
    "__delslice__",
    "__nonzero__",
    "__unicode__",
    "__cmp__",
];

/// Whether a method of a class can be a search's entry (called on an object of its class).
fn callable_method(name: &str) -> bool {
    !name.starts_with("__") || DUNDER_CALLS.contains(&name) || PY2_PROTOCOL.contains(&name)
}

/// Signature-only templates of `class.name` for a method no test reaches: called on objects
/// of its class the tests made, the receivers recorded for its other methods first, then the
/// constructor calls the tracer saw (shortest first), at most 4, or else a construction
/// without arguments (`Class()`, which search.py skips when it fails); and once on the class
/// itself, which search.py takes only for a class or static method.
fn receiver_templates(
    trace: &Trace,
    setup: &SynthSetup,
    file: &str,
    class: &str,
    name: &str,
) -> Vec<TracedCall> {
    let qualname = format!("{class}.{name}");
    let mut receivers: Vec<(String, String, Vec<String>)> = Vec::new();
    for c in trace
        .calls
        .iter()
        .filter(|c| c.file == file && c.qualname.split_once('.').is_some_and(|(k, _)| k == class))
    {
        if let Some(r) = &c.receiver {
            if !receivers.iter().any(|(x, _, _)| x == r) {
                receivers.push((r.clone(), c.module.clone(), c.imports.clone()));
            }
        }
        if receivers.len() >= 2 {
            break;
        }
    }
    let mut built: Vec<&Scenario> = trace
        .scenarios
        .iter()
        .filter(|s| s.file == file && s.cls == class)
        .collect();
    built.sort_by_key(|s| s.ctor_args.len());
    for s in built {
        if receivers.len() >= 4 {
            break;
        }
        let r = format!("{}{}", s.cls, s.ctor_args);
        if !receivers.iter().any(|(x, _, _)| *x == r) {
            receivers.push((r, s.module.clone(), s.imports.clone()));
        }
    }
    let Some(module) = receivers
        .first()
        .map(|(_, m, _)| m.clone())
        .or_else(|| module_name(trace, setup, file))
    else {
        return Vec::new();
    };
    if receivers.is_empty() {
        receivers.push((format!("{class}()"), module.clone(), vec![]));
    }
    let template = |receiver: Option<String>, module: String, imports: Vec<String>| TracedCall {
        file: file.to_string(),
        module,
        qualname: qualname.clone(),
        receiver,
        args: String::new(),
        imports,
        reaches: vec![],
        setup: vec![],
    };
    let mut out: Vec<TracedCall> = receivers
        .into_iter()
        .map(|(r, m, i)| template(Some(r), m, i))
        .collect();
    out.push(template(None, module, vec![]));
    out
}

/// Argument values the tests passed to the functions of `file` (their recorded `(args)`
/// sources, at most 40 distinct): a signature-only search draws from them beside the
/// function's literals, so a method no test calls is tried on the values its neighbours get.
pub(super) fn neighbour_args(trace: &Trace, file: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    trace
        .calls
        .iter()
        .filter(|c| c.file == file && c.args.len() > 2 && c.args.len() <= 400)
        .map(|c| c.args.clone())
        .chain(
            trace
                .scenarios
                .iter()
                .filter(|s| s.file == file)
                .flat_map(|s| {
                    std::iter::once(s.ctor_args.clone())
                        .chain(s.steps.iter().map(|st| st.args.clone()))
                })
                .filter(|a| a.len() > 2 && a.len() <= 400),
        )
        .filter(|a| seen.insert(a.clone()))
        .take(40)
        .collect()
}
