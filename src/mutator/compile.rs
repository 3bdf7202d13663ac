//! Compiling a rule: its query for the language, the captures its rewrite names and the
//! action's parameters, checked at load time against the rule's own examples.

use super::rewrite::{Piece, Replacement, Rewrite};
use super::spec::{RewriteSpec, RuleSpec};
use super::{
    invalid, Example, Mutator, MutatorError, ACTIONS, CATEGORIES, PREDICATES, RETURN_TYPES,
};
use std::collections::HashMap;
use std::sync::Arc;
use tree_sitter::{Query, QueryPredicateArg};

/// A rule in its compiled form, shared by the [`Mutator`]s cloned from it.
pub(super) struct Compiled {
    pub(super) file: String,
    pub(super) query: Query,
    pub(super) query_source: String,
    pub(super) action: &'static str,
    pub(super) rewrite: Rewrite,
    pub(super) examples: Vec<Example>,
    pub(super) no_match: Vec<String>,
}

pub(super) fn compile(file: &str, spec: RuleSpec) -> Result<Mutator, MutatorError> {
    let lang = spec.language;
    let bad = |key: &str, message: String| invalid(file, key, message);

    let id_ok = !spec.id.is_empty()
        && spec.id.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if !id_ok {
        return Err(bad(
            "id",
            format!("`{}` is not lower-case words joined by `-`", spec.id),
        ));
    }
    if !spec.id.starts_with(lang.rule_prefix()) {
        return Err(bad(
            "id",
            format!("`{}` must start with `{}`", spec.id, lang.rule_prefix()),
        ));
    }
    if !CATEGORIES.contains(&spec.category.as_str()) {
        return Err(bad(
            "category",
            format!(
                "unknown category `{}` (expected one of: {})",
                spec.category,
                CATEGORIES.join(", ")
            ),
        ));
    }
    if spec.description.trim().is_empty() {
        return Err(bad("description", "empty".into()));
    }
    if spec.issue_hints.is_empty() {
        return Err(bad("issue_hints", "give at least one hint".into()));
    }
    for (i, hint) in spec.issue_hints.iter().enumerate() {
        if hint.trim().is_empty() || hint.contains('`') || hint.contains('\n') {
            return Err(bad(
                &format!("issue_hints[{i}]"),
                "a hint is one short phrase, without code".into(),
            ));
        }
    }

    let grammar = lang.grammar();
    let query = Query::new(&grammar, &spec.query).map_err(|e| bad("query", e.to_string()))?;
    for i in 0..query.pattern_count() {
        for p in query.general_predicates(i) {
            if matches!(&*p.operator, "kind?" | "not-kind?") {
                let [QueryPredicateArg::Capture(_), kinds @ ..] = &p.args[..] else {
                    return Err(bad(
                        "query",
                        format!("#{} takes a capture, then node kinds", p.operator),
                    ));
                };
                for k in kinds {
                    match k {
                        QueryPredicateArg::String(k) if grammar.id_for_node_kind(k, true) != 0 => {}
                        QueryPredicateArg::String(k) => {
                            return Err(bad(
                                "query",
                                format!("#{}: unknown node kind `{k}`", p.operator),
                            ))
                        }
                        QueryPredicateArg::Capture(_) => {
                            return Err(bad(
                                "query",
                                format!("#{} takes node kinds after the capture", p.operator),
                            ))
                        }
                    }
                }
                continue;
            }
            if &*p.operator == "compatible-types?" {
                if !matches!(
                    &p.args[..],
                    [QueryPredicateArg::Capture(_), QueryPredicateArg::Capture(_)]
                ) {
                    return Err(bad("query", "#compatible-types? takes two captures".into()));
                }
                continue;
            }
            if &*p.operator == "return-type?" {
                let [QueryPredicateArg::Capture(_), classes @ ..] = &p.args[..] else {
                    return Err(bad(
                        "query",
                        "#return-type? takes a capture, then type classes".into(),
                    ));
                };
                if classes.is_empty() {
                    return Err(bad(
                        "query",
                        "#return-type? takes a capture, then type classes".into(),
                    ));
                }
                for c in classes {
                    match c {
                        QueryPredicateArg::String(c) if RETURN_TYPES.contains(&&**c) => {}
                        _ => {
                            return Err(bad(
                                "query",
                                format!(
                                    "#return-type? takes type classes after the capture: {}",
                                    RETURN_TYPES.join(", ")
                                ),
                            ))
                        }
                    }
                }
                continue;
            }
            return Err(bad(
                "query",
                format!(
                    "unsupported predicate #{} (allowed: {})",
                    p.operator,
                    PREDICATES
                        .iter()
                        .map(|p| format!("#{p}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ));
        }
        if !query.property_predicates(i).is_empty() || !query.property_settings(i).is_empty() {
            return Err(bad(
                "query",
                "property predicates (#set!, #is?) are not supported".into(),
            ));
        }
    }

    let (action, rewrite) = compile_rewrite(file, &query, spec.rewrite)?;

    if spec.examples.is_empty() {
        return Err(bad("examples", "give at least one example".into()));
    }
    let examples: Vec<Example> = spec
        .examples
        .into_iter()
        .map(|e| Example {
            before: e.before,
            after: e.after,
        })
        .collect();

    let mutator = Mutator {
        id: spec.id,
        language: lang,
        category: spec.category,
        description: spec.description.trim().to_string(),
        issue_hints: spec.issue_hints,
        rule: Arc::new(Compiled {
            file: file.to_string(),
            query,
            query_source: spec.query,
            action,
            rewrite,
            examples,
            no_match: spec.no_match,
        }),
    };
    check_examples(&mutator)?;
    Ok(mutator)
}

fn compile_rewrite(
    file: &str,
    query: &Query,
    spec: RewriteSpec,
) -> Result<(&'static str, Rewrite), MutatorError> {
    let bad = |key: &str, message: String| invalid(file, key, message);
    let Some(action) = ACTIONS.iter().copied().find(|a| *a == spec.action) else {
        return Err(bad(
            "rewrite.action",
            format!(
                "unknown action `{}` (expected one of: {})",
                spec.action,
                ACTIONS.join(", ")
            ),
        ));
    };
    let allowed: &[&str] = match action {
        "replace" => &["capture", "text", "map", "parenthesize"],
        "template" => &["capture", "template", "parenthesize"],
        "swap" => &["captures"],
        "int_shift" => &["capture", "deltas"],
        _ => &["capture"],
    };
    let present = [
        ("capture", spec.capture.is_some()),
        ("captures", spec.captures.is_some()),
        ("text", spec.text.is_some()),
        ("map", spec.map.is_some()),
        ("template", spec.template.is_some()),
        ("deltas", spec.deltas.is_some()),
        ("parenthesize", spec.parenthesize.is_some()),
    ];
    for (key, is_present) in present {
        if is_present && !allowed.contains(&key) {
            return Err(bad(
                &format!("rewrite.{key}"),
                format!("not used by action `{action}`"),
            ));
        }
    }
    let capture_index = |key: &str, name: &str| -> Result<u32, MutatorError> {
        let name = name.strip_prefix('@').unwrap_or(name);
        query
            .capture_index_for_name(name)
            .ok_or_else(|| bad(key, format!("capture @{name} is not in the query")))
    };
    let target = || {
        capture_index(
            "rewrite.capture",
            spec.capture.as_deref().unwrap_or("target"),
        )
    };

    let parens = spec.parenthesize.unwrap_or(false);
    let rewrite = match action {
        "replace" => {
            let capture = target()?;
            let with = match (spec.text, spec.map) {
                (Some(_), Some(_)) => {
                    return Err(bad(
                        "rewrite.map",
                        "give either `text` or `map`, not both".into(),
                    ))
                }
                (None, None) => {
                    return Err(bad(
                        "rewrite.text",
                        "action `replace` needs `text` or `map`".into(),
                    ))
                }
                (Some(text), None) => {
                    let texts = text.into_vec();
                    if texts.is_empty() {
                        return Err(bad("rewrite.text", "empty list".into()));
                    }
                    Replacement::Texts(texts)
                }
                (None, Some(map)) => {
                    if map.is_empty() {
                        return Err(bad("rewrite.map", "empty map".into()));
                    }
                    let mut compiled = HashMap::new();
                    for (from, to) in map {
                        let to = to.into_vec();
                        if to.is_empty() {
                            return Err(bad(
                                &format!("rewrite.map.{from}"),
                                "no replacement".into(),
                            ));
                        }
                        compiled.insert(from, to);
                    }
                    Replacement::Map(compiled)
                }
            };
            Rewrite::Replace {
                capture,
                with,
                parens,
            }
        }
        "template" => {
            let capture = target()?;
            let Some(templates) = spec.template else {
                return Err(bad(
                    "rewrite.template",
                    "action `template` needs `template`".into(),
                ));
            };
            let templates = templates.into_vec();
            if templates.is_empty() {
                return Err(bad("rewrite.template", "empty list".into()));
            }
            let mut compiled = Vec::new();
            for t in &templates {
                compiled.push(parse_template(t, |name| {
                    capture_index("rewrite.template", name)
                })?);
            }
            Rewrite::Template {
                capture,
                templates: compiled,
                parens,
            }
        }
        "delete_statement" => Rewrite::DeleteStatement { capture: target()? },
        "delete_item" => Rewrite::DeleteItem { capture: target()? },
        "negate" => Rewrite::Negate { capture: target()? },
        "swap" => {
            let names = spec.captures.unwrap_or_default();
            if names.len() != 2 || names[0] == names[1] {
                return Err(bad(
                    "rewrite.captures",
                    "action `swap` needs two different captures".into(),
                ));
            }
            Rewrite::Swap {
                a: capture_index("rewrite.captures", &names[0])?,
                b: capture_index("rewrite.captures", &names[1])?,
            }
        }
        "int_shift" => {
            let capture = target()?;
            let deltas = spec.deltas.unwrap_or_default();
            if deltas.is_empty() || deltas.contains(&0) {
                return Err(bad(
                    "rewrite.deltas",
                    "give a list of non-zero deltas".into(),
                ));
            }
            Rewrite::IntShift { capture, deltas }
        }
        _ => unreachable!("every action is handled"),
    };
    Ok((action, rewrite))
}

/// Split `"{{b}}, {{a}}"` into text and capture pieces.
fn parse_template(
    template: &str,
    mut capture: impl FnMut(&str) -> Result<u32, MutatorError>,
) -> Result<Vec<Piece>, MutatorError> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        if open > 0 {
            pieces.push(Piece::Text(rest[..open].to_string()));
        }
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            // An unclosed `{{` is reported as a missing capture name.
            return capture("{{").map(|_| pieces);
        };
        pieces.push(Piece::Capture(capture(after[..close].trim())?));
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(pieces)
}

/// Every example must produce its `after`; every `no_match` program nothing.
fn check_examples(rule: &Mutator) -> Result<(), MutatorError> {
    let file = rule.file();
    let name = format!("example.{}", rule.language.extensions()[0]);
    let rules = std::slice::from_ref(rule);
    for (i, ex) in rule.examples().iter().enumerate() {
        let cands =
            crate::candidate::enumerate_source(&name, ex.before.as_bytes(), rule.language, rules)
                .map_err(|reason| invalid(file, format!("examples[{i}].before"), reason))?;
        if cands.iter().any(|c| c.apply(&ex.before) == ex.after) {
            continue;
        }
        let produced: Vec<String> = cands
            .iter()
            .take(6)
            .map(|c| format!("line {}: `{}` -> `{}`", c.line_range.0, c.before, c.after))
            .collect();
        return Err(invalid(
            file,
            format!("examples[{i}].after"),
            format!(
                "the rule does not turn `before` into `after`; it makes {} candidate(s){}{}",
                cands.len(),
                if produced.is_empty() { "" } else { ": " },
                produced.join("; ")
            ),
        ));
    }
    for (i, program) in rule.no_match().iter().enumerate() {
        let cands =
            crate::candidate::enumerate_source(&name, program.as_bytes(), rule.language, rules)
                .map_err(|reason| invalid(file, format!("no_match[{i}]"), reason))?;
        if let Some(c) = cands.first() {
            return Err(invalid(
                file,
                format!("no_match[{i}]"),
                format!(
                    "the rule makes {} candidate(s), expected none (line {}: `{}` -> `{}`)",
                    cands.len(),
                    c.line_range.0,
                    c.before,
                    c.after
                ),
            ));
        }
    }
    Ok(())
}
