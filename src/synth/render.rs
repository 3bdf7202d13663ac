//! Rendering: the distinguishing inputs written as a readable pytest file beside the existing
//! tests (names, calls as users write them, asserts, imports) and its patch.

use super::replay::{CallOutcome, Distinguishing};
use super::trace::TracedCall;
use super::{SynthSetup, MAX_ASSERTS};
use crate::candidate::Candidate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A synthesized test file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthTest {
    pub path: String,
    pub source: String,
    /// pytest node ids of its tests.
    pub tests: Vec<String>,
    /// The cases it asserts, in test order.
    pub cases: Vec<Distinguishing>,
    /// `diff --git` adding the file.
    pub patch: String,
}

pub(super) fn call_expr(call: &TracedCall) -> String {
    match &call.receiver {
        Some(r) => method_call(
            r,
            call.qualname.split_once('.').map_or("", |(_, m)| m),
            &call.args,
        ),
        None => format!("{}{}", call.qualname, call.args),
    }
}

/// `receiver.method(args)` as a user writes it: the special methods a scenario records
/// (trace.py's `_DUNDER_STEPS`) as their syntax (`v(x)`, `m[k]`, `(k in m)`, `len(m)`,
/// `repr(m)`, `(m == x)`); assignment and deletion stay calls, as they must be expressions.
/// A property's getter has empty `args` (literal.py's `ATTRIBUTE`): `receiver.name`.
pub(super) fn method_call(receiver: &str, method: &str, args: &str) -> String {
    let inner = args
        .strip_prefix('(')
        .and_then(|a| a.strip_suffix(')'))
        .filter(|a| !a.trim().is_empty() && !a.contains('='));
    let one = inner.filter(|a| !top_level_comma(a));
    match (method, one) {
        ("__call__", _) => format!("{receiver}{args}"),
        ("__len__", _) if args == "()" => format!("len({receiver})"),
        ("__repr__", _) if args == "()" => format!("repr({receiver})"),
        ("__str__", _) if args == "()" => format!("str({receiver})"),
        ("__getitem__", Some(a)) => format!("{receiver}[{a}]"),
        ("__contains__", Some(a)) => format!("({a} in {receiver})"),
        ("__eq__", Some(a)) => format!("({receiver} == {a})"),
        _ => format!("{receiver}.{method}{args}"),
    }
}

/// Whether `text` has a comma outside brackets and strings (more than one argument).
fn top_level_comma(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for ch in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' => quote = Some(ch),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// A name that says what the test checks: `test_parse_quantity_of_2_kg`,
/// `test_parse_money_raises_moneyerror_on_abc`.
fn test_name(d: &Distinguishing, taken: &mut BTreeSet<String>) -> String {
    let func = d
        .call
        .qualname
        .rsplit('.')
        .next()
        .unwrap_or(&d.call.qualname)
        .trim_matches('_')
        .to_lowercase();
    let func = if func.starts_with("_") || func.is_empty() {
        "call".to_string()
    } else {
        func
    };
    let slug: String = d
        .call
        .args
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .split('_')
        .filter(|p| !p.is_empty())
        .take(5)
        .collect::<Vec<_>>()
        .join("_");
    let what = match &d.clean {
        CallOutcome::Raised { type_name, .. } => {
            format!("raises_{}", type_name.to_lowercase())
        }
        _ => "result".to_string(),
    };
    let mut base = if slug.is_empty() {
        format!("test_{func}_{what}")
    } else {
        format!("test_{func}_{what}_for_{slug}")
    };
    base.truncate(70);
    let base = base.trim_end_matches('_').to_string();
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

fn import_line(call: &TracedCall) -> String {
    let top = call.qualname.split('.').next().unwrap_or(&call.qualname);
    format!("from {} import {top}", call.module)
}

/// Render the pytest file for `found` (1–[`MAX_ASSERTS`] cases) beside the existing tests.
pub fn render(found: &[Distinguishing], setup: &SynthSetup, cand: &Candidate) -> SynthTest {
    // The same call found twice (from two templates) is one case.
    let mut calls_seen = BTreeSet::new();
    let found: Vec<Distinguishing> = found
        .iter()
        .filter(|d| calls_seen.insert((d.call.setup.clone(), call_expr(&d.call))))
        .take(MAX_ASSERTS)
        .cloned()
        .collect();
    let found = &found[..];
    let mut imports: BTreeSet<String> = BTreeSet::new();
    let mut needs_pytest = false;
    let mut needs_re = false;
    let mut bodies = Vec::new();
    let mut taken = BTreeSet::new();
    let mut names = Vec::new();
    for d in found.iter().take(MAX_ASSERTS) {
        imports.insert(import_line(&d.call));
        imports.extend(d.call.imports.iter().cloned());
        let call = call_expr(&d.call);
        let name = test_name(d, &mut taken);
        let setup_lines: String = d
            .call
            .setup
            .iter()
            .flat_map(|l| l.lines())
            .map(|l| format!("    {l}\n"))
            .collect();
        if d.call
            .setup
            .iter()
            .any(|l| l.starts_with("with pytest.raises"))
        {
            needs_pytest = true;
        }
        let body = match &d.clean {
            CallOutcome::Value {
                source: Some(expected),
                imports: value_imports,
                ..
            } => {
                imports.extend(value_imports.iter().cloned());
                match expected.as_str() {
                    "None" | "True" | "False" => format!("    assert {call} is {expected}\n"),
                    _ => format!("    assert {call} == {expected}\n"),
                }
            }
            CallOutcome::Value {
                source: None,
                imports: value_imports,
                ..
            } => {
                let diffs = d.attr_differences();
                if diffs.is_empty() {
                    format!("    {call}  # must not raise\n")
                } else {
                    imports.extend(value_imports.iter().cloned());
                    let mut body = format!("    result = {call}\n");
                    for (name, expected, _) in &diffs {
                        match expected.as_str() {
                            "None" | "True" | "False" => {
                                body.push_str(&format!("    assert result.{name} is {expected}\n"))
                            }
                            _ => {
                                body.push_str(&format!("    assert result.{name} == {expected}\n"))
                            }
                        }
                    }
                    body
                }
            }
            CallOutcome::Raised {
                type_name,
                type_module,
                message,
                ..
            } => {
                needs_pytest = true;
                let exc = if type_module == "builtins" {
                    type_name.clone()
                } else {
                    let top = type_name.split('.').next().unwrap_or(type_name);
                    imports.insert(format!("from {type_module} import {top}"));
                    type_name.clone()
                };
                let same_type = matches!(&d.buggy, CallOutcome::Raised { type_name: t, type_module: m, .. } if t == type_name && m == type_module);
                // The clean message whenever there is one; and when the bug raises another
                // type (perhaps a subclass, which `pytest.raises` would accept), the exact type.
                let matcher = if message.is_empty() {
                    String::new()
                } else {
                    needs_re = true;
                    format!(
                        ", match={}",
                        py_str(&format!("^{}$", regex_escape(message)))
                    )
                };
                let diffs = d.attr_differences();
                if !diffs.is_empty() {
                    // Same type and message: the attributes tell the versions apart.
                    if let CallOutcome::Raised {
                        imports: attr_imports,
                        ..
                    } = &d.clean
                    {
                        imports.extend(attr_imports.iter().cloned());
                    }
                    let mut body = format!(
                        "    with pytest.raises({exc}{matcher}) as raised:\n        {call}\n"
                    );
                    for (name, expected, _) in &diffs {
                        match expected.as_str() {
                            "None" | "True" | "False" => body.push_str(&format!(
                                "    assert raised.value.{name} is {expected}\n"
                            )),
                            _ => body.push_str(&format!(
                                "    assert raised.value.{name} == {expected}\n"
                            )),
                        }
                    }
                    body
                } else if same_type || !matches!(&d.buggy, CallOutcome::Raised { .. }) {
                    format!("    with pytest.raises({exc}{matcher}):\n        {call}\n")
                } else {
                    format!(
                        "    with pytest.raises({exc}{matcher}) as raised:\n        {call}\n    assert raised.type is {exc}\n"
                    )
                }
            }
            _ => continue,
        };
        bodies.push(format!("def {name}():\n{setup_lines}{body}"));
        names.push(name);
    }
    let _ = needs_re;
    let mut std_imports: Vec<String> = imports
        .iter()
        .filter(|l| {
            l.starts_with("import ")
                || l.starts_with("from decimal")
                || l.starts_with("from fractions")
        })
        .cloned()
        .collect();
    std_imports.sort();
    let mut repo_imports: Vec<String> = imports
        .iter()
        .filter(|l| !std_imports.contains(l))
        .cloned()
        .collect();
    repo_imports.sort();
    let mut text = format!(
        "\"\"\"Regression tests for `{}`: inputs whose results changed.\"\"\"\n",
        found
            .first()
            .map(|d| d.call.qualname.rsplit('.').next().unwrap_or("").to_string())
            .unwrap_or_default()
    );
    let mut head = std_imports.join("\n");
    if needs_pytest {
        if !head.is_empty() {
            head.push_str("\n\n");
        }
        head.push_str("import pytest");
    }
    text.push_str(&head);
    if !head.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&repo_imports.join("\n"));
    text.push_str("\n\n");
    for b in &bodies {
        text.push('\n');
        text.push_str(b);
        text.push('\n');
    }
    let text = text.trim_end().to_string() + "\n";
    let path = test_path(setup, cand, found);
    let patch = crate::task::file_diff_new(&path, &text);
    SynthTest {
        tests: names.iter().map(|n| format!("{path}::{n}")).collect(),
        path,
        source: text,
        cases: found.iter().take(MAX_ASSERTS).cloned().collect(),
        patch,
    }
}

fn py_str(s: &str) -> String {
    // repr-like: single quotes unless the text has them.
    let escaped = s.replace('\\', "\\\\");
    if !escaped.contains('\'') {
        format!("r'{}'", s.replace('\'', "\\'"))
    } else {
        format!("\"{}\"", escaped.replace('"', "\\\"").replace('\n', "\\n"))
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.^$*+?{}[]|()".contains(c) {
            out.push('\\');
        }
        if c == '\n' {
            out.push_str("\\n");
        } else {
            out.push(c);
        }
    }
    out
}

/// `tests/test_<module>_<function>_regression.py` (beside the existing tests), a name no
/// existing test file has.
fn test_path(setup: &SynthSetup, cand: &Candidate, found: &[Distinguishing]) -> String {
    let dir = setup
        .test_files
        .iter()
        .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_string()))
        .min_by_key(|d| d.len())
        .unwrap_or_else(|| "tests".to_string());
    let module = cand
        .file
        .rsplit('/')
        .next()
        .unwrap_or("m")
        .trim_end_matches(".py")
        .trim_start_matches('_');
    let func = found
        .first()
        .map(|d| {
            d.call
                .qualname
                .rsplit('.')
                .next()
                .unwrap_or("")
                .trim_matches('_')
                .to_lowercase()
        })
        .unwrap_or_default();
    let taken: BTreeSet<&str> = setup
        .test_files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f))
        .collect();
    let mut n = 1;
    loop {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("_{n}")
        };
        let name = format!("test_{module}_{func}_regression{suffix}.py");
        if !taken.contains(name.as_str()) {
            return format!("{dir}/{name}");
        }
        n += 1;
    }
}
