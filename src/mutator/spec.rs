//! The rule file schema: the YAML a mutator is written in, as plain structs, and the key at
//! fault when a file does not fit it.

use super::{invalid, MutatorError};
use crate::lang::Language;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RuleSpec {
    pub(super) id: String,
    pub(super) language: Language,
    /// Other languages whose grammar the rule also compiles for (JavaScript's rules for
    /// TypeScript): loaded with theirs, the query and the examples checked in each.
    #[serde(default)]
    pub(super) also: Vec<Language>,
    pub(super) category: String,
    pub(super) description: String,
    pub(super) issue_hints: Vec<String>,
    pub(super) query: String,
    pub(super) rewrite: RewriteSpec,
    pub(super) examples: Vec<ExampleSpec>,
    #[serde(default)]
    pub(super) no_match: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RewriteSpec {
    pub(super) action: String,
    #[serde(default)]
    pub(super) capture: Option<String>,
    #[serde(default)]
    pub(super) captures: Option<Vec<String>>,
    #[serde(default)]
    pub(super) text: Option<OneOrMany>,
    #[serde(default)]
    pub(super) map: Option<BTreeMap<String, OneOrMany>>,
    #[serde(default)]
    pub(super) template: Option<OneOrMany>,
    #[serde(default)]
    pub(super) deltas: Option<Vec<i64>>,
    #[serde(default)]
    pub(super) parenthesize: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExampleSpec {
    pub(super) before: String,
    pub(super) after: String,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub(super) fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// Turn a serde_yaml error ("rewrite: unknown field `foo`, expected ... at line 3 column 5")
/// into the key at fault (`rewrite.foo`) and a message.
pub(super) fn yaml_error(file: &str, err: &serde_yaml::Error) -> MutatorError {
    let msg = err.to_string();
    let (path, rest) = match msg.find(": ") {
        Some(i)
            if i > 0
                && msg[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.[]".contains(c)) =>
        {
            (&msg[..i], &msg[i + 2..])
        }
        _ => ("", msg.as_str()),
    };
    let named = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| rest.strip_prefix(p).and_then(|r| r.split('`').next()));
    let key = match (named, path.is_empty()) {
        (Some(field), true) => field.to_string(),
        (Some(field), false) => format!("{path}.{field}"),
        (None, false) => path.to_string(),
        (None, true) => "(document)".to_string(),
    };
    invalid(file, key, rest)
}
