//! Mutators: the YAML rule schema, compiling and checking rules at load time, rewrite primitives.
//!
//! A mutator is one YAML file, `mutators/<language>/<id>.yaml`:
//!
//! ```yaml
//! id: py-compare-boundary          # `py-`/`java-` prefix, lower-case words joined by `-`
//! language: python
//! category: boundary               # one of CATEGORIES
//! description: A comparison includes or excludes its boundary by mistake.
//! issue_hints: [off by one at the limit, the last element is skipped]
//! query: |                         # tree-sitter query; #eq? #not-eq? #match? #not-match?
//!   (comparison_operator            # #any-of? #not-any-of? are the only predicates
//!     operators: _ @target)
//! rewrite:                         # one action and its parameters
//!   action: replace
//!   capture: target                # optional, `target` by default
//!   map: {"<": "<=", "<=": "<"}    # or `text:`; a value may be a list (one candidate each)
//! examples:                        # full small programs: `after` must be one candidate
//!   - before: "def f(a, b):\n    return a < b\n"
//!     after: "def f(a, b):\n    return a <= b\n"
//! no_match: []                     # optional programs that must yield no candidate
//! ```
//!
//! Actions: `replace` (`text` or `map`), `template` (`template: "{{b}}, {{a}}"`, one string
//! or a list), `delete_statement` (removes the statement's lines, or leaves `pass` in a block
//! that would be empty), `delete_item` (removes an element of a comma-separated list with its
//! separator), `swap` (`captures: [a, b]`), `negate` (wraps in `not (...)`, or unwraps a
//! leading `not`), `int_shift` (`deltas: [1, -1]`; never makes a literal negative).
//! `replace` and `template` take `parenthesize: true`: the new text goes in parentheses where
//! the replaced node's slot needs them ([`Syntax::needs_parens`](crate::lang::Syntax::needs_parens)). Queries may also use
//! `#kind?`/`#not-kind?`, `#return-type?` and `#compatible-types?` (see `PREDICATES`).
//!
//! Rules are deserialized into plain structs, then compiled (the query for the language,
//! the captures the rewrite names, the action's parameters) and checked against their own
//! examples; every error names the file and the key at fault.

mod compile;
mod load;
mod rewrite;
mod rule_set;
mod spec;
#[cfg(test)]
mod tests;

pub use load::{load_dir, load_embedded, load_str, load_tree};
pub(crate) use rewrite::Edit;
pub(crate) use rule_set::RuleSet;

use crate::lang::Language;
use compile::Compiled;
use std::fmt;
use std::sync::Arc;

/// The categories a mutator may belong to.
pub const CATEGORIES: &[&str] = &[
    "boundary",
    "logic",
    "operator",
    "missing-guard",
    "removed-branch",
    "api-misuse",
    "exception-handling",
    "removed-statement",
    "wrong-return",
];

/// The rewrite actions a rule may use.
pub const ACTIONS: &[&str] = &[
    "replace",
    "template",
    "delete_statement",
    "delete_item",
    "swap",
    "negate",
    "int_shift",
];

/// The predicates a query may use: tree-sitter's text predicates (evaluated while matching),
/// `#kind?`/`#not-kind?` (`(#not-kind? @x comment keyword_argument)`: the node kinds a
/// capture may or may not have, checked on each match; queries cannot negate a node type),
/// and `#return-type?` (`(#return-type? @x reference)`: the declared return type of the
/// function that a `return` at the capture leaves is of one of the given classes, see
/// [`RETURN_TYPES`]; an unknown type, as in a lambda, satisfies none), and
/// `#compatible-types?` (`(#compatible-types? @a @b)`: false only when the declared types of
/// both captures are known and differ, unless both are numeric; see
/// [`Syntax::declared_type`](crate::lang::Syntax::declared_type)).
const PREDICATES: &[&str] = &[
    "eq?",
    "not-eq?",
    "match?",
    "not-match?",
    "any-of?",
    "not-any-of?",
    "kind?",
    "not-kind?",
    "return-type?",
    "compatible-types?",
];

/// The classes of declared return types `#return-type?` tells apart (see
/// [`Syntax::return_type_class`](crate::lang::Syntax::return_type_class)).
pub const RETURN_TYPES: &[&str] = &["void", "boolean", "numeric", "reference"];

/// A rule that cannot be loaded. Every message names the file and, where there is one, the key.
#[derive(Debug, thiserror::Error)]
pub enum MutatorError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: key `{key}`: {message}")]
    Invalid {
        file: String,
        key: String,
        message: String,
    },
    #[error("{file}: key `id`: duplicate id `{id}` (already defined in {first})")]
    DuplicateId {
        file: String,
        id: String,
        first: String,
    },
}

/// One loaded and compiled mutator.
#[derive(Clone)]
pub struct Mutator {
    pub id: String,
    pub language: Language,
    pub category: String,
    pub description: String,
    pub issue_hints: Vec<String>,
    rule: Arc<Compiled>,
}

/// A rule's own example: applying the rule to `before` yields `after` as one candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    pub before: String,
    pub after: String,
}

impl fmt::Debug for Mutator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutator")
            .field("id", &self.id)
            .field("language", &self.language)
            .field("category", &self.category)
            .field("action", &self.rule.action)
            .field("file", &self.rule.file)
            .finish()
    }
}

impl Mutator {
    /// The rule's examples, checked at load time.
    pub fn examples(&self) -> &[Example] {
        &self.rule.examples
    }

    /// Programs on which the rule must produce nothing, checked at load time.
    pub fn no_match(&self) -> &[String] {
        &self.rule.no_match
    }

    /// The file (or name) the rule was loaded from.
    pub fn file(&self) -> &str {
        &self.rule.file
    }

    /// The rewrite action (`replace`, `swap`...).
    pub fn action(&self) -> &str {
        self.rule.action
    }
}

/// A [`MutatorError::Invalid`] naming `file` and `key`.
fn invalid(file: &str, key: impl Into<String>, message: impl Into<String>) -> MutatorError {
    MutatorError::Invalid {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}
