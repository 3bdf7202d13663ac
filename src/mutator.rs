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
//! the replaced node's slot needs them ([`Syntax::needs_parens`]). Queries may also use
//! `#kind?`/`#not-kind?` and `#return-type?` (see `PREDICATES`).
//!
//! Rules are deserialized into plain structs, then compiled (the query for the language,
//! the captures the rewrite names, the action's parameters) and checked against their own
//! examples; every error names the file and the key at fault.

use crate::lang::{Language, Syntax};
use include_dir::{include_dir, Dir};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use tree_sitter::{Node, Query, QueryMatch, QueryPredicateArg};

/// The rules compiled into the binary.
static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/mutators");

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
/// [`RETURN_TYPES`]; an unknown type, as in a lambda, satisfies none).
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
];

/// The classes of declared return types `#return-type?` tells apart (see
/// [`Syntax::return_type_class`]).
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

struct Compiled {
    file: String,
    query: Query,
    query_source: String,
    action: &'static str,
    rewrite: Rewrite,
    examples: Vec<Example>,
    no_match: Vec<String>,
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

/// Rules compiled into one query, so that a tree is walked once for all of them; matches
/// are dispatched to their rule by pattern index.
pub(crate) struct RuleSet {
    /// `None` for a single rule, whose own query is used.
    combined: Option<Query>,
    members: Vec<Arc<Compiled>>,
    /// The rule of each pattern of the query.
    pattern_rule: Vec<usize>,
    /// Per rule: its own capture index → the query's capture index.
    remap: Vec<Vec<u32>>,
}

impl RuleSet {
    /// The set of `rules` (all of one language); built once per distinct list and cached.
    pub(crate) fn of(rules: &[&Mutator]) -> Result<Arc<RuleSet>, String> {
        type Cache = Mutex<HashMap<Vec<usize>, Arc<RuleSet>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key: Vec<usize> = rules
            .iter()
            .map(|r| Arc::as_ptr(&r.rule) as usize)
            .collect();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(set) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(set.clone());
        }
        let set = Arc::new(RuleSet::build(rules)?);
        if rules.len() > 1 {
            let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() >= 64 {
                cache.clear();
            }
            // The set holds the rules' `Arc`s, so no key can be reused by other rules.
            cache.insert(key, set.clone());
        }
        Ok(set)
    }

    fn build(rules: &[&Mutator]) -> Result<RuleSet, String> {
        let members: Vec<Arc<Compiled>> = rules.iter().map(|r| r.rule.clone()).collect();
        let mut pattern_rule = Vec::new();
        for (i, m) in members.iter().enumerate() {
            pattern_rule.extend(std::iter::repeat_n(i, m.query.pattern_count()));
        }
        let combined = match rules {
            [] | [_] => None,
            [first, ..] => {
                let source: String = members
                    .iter()
                    .map(|m| format!("{}\n", m.query_source))
                    .collect();
                let query = Query::new(&first.language.grammar(), &source)
                    .map_err(|e| format!("rules do not combine into one query: {e}"))?;
                if query.pattern_count() != pattern_rule.len() {
                    return Err("rules do not combine into one query: pattern count differs".into());
                }
                Some(query)
            }
        };
        let remap = members
            .iter()
            .map(|m| {
                m.query
                    .capture_names()
                    .iter()
                    .enumerate()
                    .map(|(i, name)| match &combined {
                        Some(q) => q.capture_index_for_name(name).unwrap_or(u32::MAX),
                        None => i as u32,
                    })
                    .collect()
            })
            .collect();
        Ok(RuleSet {
            combined,
            members,
            pattern_rule,
            remap,
        })
    }

    /// The query to run; `None` for an empty set.
    pub(crate) fn query(&self) -> Option<&Query> {
        match &self.combined {
            Some(q) => Some(q),
            None => self.members.first().map(|m| &m.query),
        }
    }

    /// The edits one match makes, appended to `out`; returns the index of the rule.
    pub(crate) fn edits<'t>(
        &self,
        m: &QueryMatch<'_, 't>,
        src: &str,
        syntax: &dyn Syntax,
        out: &mut Vec<Edit<'t>>,
    ) -> usize {
        let rule = self.pattern_rule[m.pattern_index];
        if !self.predicates_hold(m, syntax) {
            return rule;
        }
        let cx = Captures {
            m,
            remap: &self.remap[rule],
        };
        let from = out.len();
        self.members[rule].rewrite.edits(&cx, src, syntax, out);
        for e in &mut out[from..] {
            unglue(src, e);
        }
        rule
    }
}

impl RuleSet {
    /// Whether the match satisfies its pattern's `#kind?`/`#not-kind?`/`#return-type?`
    /// predicates.
    fn predicates_hold(&self, m: &QueryMatch<'_, '_>, syntax: &dyn Syntax) -> bool {
        let Some(query) = self.query() else {
            return true;
        };
        query.general_predicates(m.pattern_index).iter().all(|p| {
            let [QueryPredicateArg::Capture(index), names @ ..] = &p.args[..] else {
                return true;
            };
            let listed = |name: &str| {
                names
                    .iter()
                    .any(|k| matches!(k, QueryPredicateArg::String(k) if &**k == name))
            };
            let mut nodes = m.captures.iter().filter(|c| c.index == *index);
            match &*p.operator {
                "return-type?" => {
                    nodes.all(|c| syntax.return_type_class(c.node).is_some_and(listed))
                }
                op => {
                    let positive = op == "kind?";
                    nodes.all(|c| listed(c.node.kind()) == positive)
                }
            }
        })
    }
}

/// A match seen through one rule's capture numbering.
struct Captures<'a, 'c, 't> {
    m: &'a QueryMatch<'c, 't>,
    remap: &'a [u32],
}

impl<'t> Captures<'_, '_, 't> {
    fn first(&self, own: u32) -> Option<Node<'t>> {
        let index = self.remap[own as usize];
        self.m
            .captures
            .iter()
            .find(|c| c.index == index)
            .map(|c| c.node)
    }

    fn all(&self, own: u32) -> impl Iterator<Item = Node<'t>> + '_ {
        let index = self.remap[own as usize];
        self.m
            .captures
            .iter()
            .filter(move |c| c.index == index)
            .map(|c| c.node)
    }
}

/// One edit of a clean file: replace `start..end` by `text`.
#[derive(Clone, Debug)]
pub(crate) struct Edit<'t> {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The smallest node that contains the edit (the syntax check starts there).
    pub anchor: Node<'t>,
    /// The edit removes the whole lines of `anchor`, a statement or clause.
    pub removes_lines: bool,
}

// ---------------------------------------------------------------------------------------------
// The schema.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    language: Language,
    category: String,
    description: String,
    issue_hints: Vec<String>,
    query: String,
    rewrite: RewriteSpec,
    examples: Vec<ExampleSpec>,
    #[serde(default)]
    no_match: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RewriteSpec {
    action: String,
    #[serde(default)]
    capture: Option<String>,
    #[serde(default)]
    captures: Option<Vec<String>>,
    #[serde(default)]
    text: Option<OneOrMany>,
    #[serde(default)]
    map: Option<BTreeMap<String, OneOrMany>>,
    #[serde(default)]
    template: Option<OneOrMany>,
    #[serde(default)]
    deltas: Option<Vec<i64>>,
    #[serde(default)]
    parenthesize: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExampleSpec {
    before: String,
    after: String,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Compiled rewrites.

enum Rewrite {
    Replace {
        capture: u32,
        with: Replacement,
        parens: bool,
    },
    Template {
        capture: u32,
        templates: Vec<Vec<Piece>>,
        parens: bool,
    },
    DeleteStatement {
        capture: u32,
    },
    DeleteItem {
        capture: u32,
    },
    Swap {
        a: u32,
        b: u32,
    },
    Negate {
        capture: u32,
    },
    IntShift {
        capture: u32,
        deltas: Vec<i64>,
    },
}

enum Replacement {
    Texts(Vec<String>),
    Map(HashMap<String, Vec<String>>),
}

enum Piece {
    Text(String),
    Capture(u32),
}

fn node_text<'s>(src: &'s str, node: Node<'_>) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn replace<'t>(node: Node<'t>, text: String) -> Edit<'t> {
    Edit {
        start: node.start_byte(),
        end: node.end_byte(),
        text,
        anchor: node,
        removes_lines: false,
    }
}

/// The smallest ancestor of `node` (itself included) that spans `start..end`.
fn covering<'t>(mut node: Node<'t>, start: usize, end: usize) -> Node<'t> {
    while node.start_byte() > start || node.end_byte() < end {
        match node.parent() {
            Some(p) => node = p,
            None => break,
        }
    }
    node
}

impl Rewrite {
    fn edits<'t>(
        &self,
        m: &Captures<'_, '_, 't>,
        src: &str,
        syntax: &dyn Syntax,
        out: &mut Vec<Edit<'t>>,
    ) {
        match self {
            Rewrite::Replace {
                capture,
                with,
                parens,
            } => {
                for node in m.all(*capture) {
                    let texts = match with {
                        Replacement::Texts(t) => t,
                        Replacement::Map(map) => match map.get(node_text(src, node)) {
                            Some(t) => t,
                            None => continue,
                        },
                    };
                    let wrap = *parens && syntax.needs_parens(node);
                    out.extend(texts.iter().map(|t| replace(node, parenthesized(t, wrap))));
                }
            }
            Rewrite::Template {
                capture,
                templates,
                parens,
            } => {
                for node in m.all(*capture) {
                    'template: for pieces in templates {
                        let mut text = String::new();
                        for piece in pieces {
                            match piece {
                                Piece::Text(t) => text.push_str(t),
                                Piece::Capture(i) => match m.first(*i) {
                                    Some(n) => text.push_str(node_text(src, n)),
                                    None => continue 'template,
                                },
                            }
                        }
                        let wrap = *parens && syntax.needs_parens(node);
                        out.push(replace(node, parenthesized(&text, wrap)));
                    }
                }
            }
            Rewrite::Negate { capture } => {
                for node in m.all(*capture) {
                    out.push(replace(node, syntax.negate(node, src.as_bytes())));
                }
            }
            Rewrite::IntShift { capture, deltas } => {
                for node in m.all(*capture) {
                    let text = node_text(src, node);
                    for d in deltas {
                        if let Some(t) = syntax.shift_integer(text, *d) {
                            out.push(replace(node, t));
                        }
                    }
                }
            }
            Rewrite::Swap { a, b } => {
                let (Some(x), Some(y)) = (m.first(*a), m.first(*b)) else {
                    return;
                };
                let (x, y) = if x.start_byte() <= y.start_byte() {
                    (x, y)
                } else {
                    (y, x)
                };
                if x.end_byte() > y.start_byte() {
                    return; // nested or overlapping: nothing to swap
                }
                let text = format!(
                    "{}{}{}",
                    node_text(src, y),
                    &src[x.end_byte()..y.start_byte()],
                    node_text(src, x)
                );
                out.push(Edit {
                    start: x.start_byte(),
                    end: y.end_byte(),
                    text,
                    anchor: covering(x, x.start_byte(), y.end_byte()),
                    removes_lines: false,
                });
            }
            Rewrite::DeleteStatement { capture } => {
                for node in m.all(*capture) {
                    out.extend(delete_statement(node, src, syntax));
                }
            }
            Rewrite::DeleteItem { capture } => {
                for node in m.all(*capture) {
                    out.push(delete_item(node, src));
                }
            }
        }
    }
}

/// `text`, in parentheses when `wrap`.
fn parenthesized(text: &str, wrap: bool) -> String {
    if wrap {
        format!("({text})")
    } else {
        text.to_string()
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Keep a replacement from gluing onto a neighbouring word (`return(x)` → `return None`, not
/// `returnNone`): add a space where the new text would touch a word the old text did not.
fn unglue(src: &str, e: &mut Edit<'_>) {
    if e.removes_lines || e.text.is_empty() {
        return;
    }
    let old = &src[e.start..e.end];
    let before = src[..e.start].chars().next_back();
    let after = src[e.end..].chars().next();
    let (first, last) = (e.text.chars().next(), e.text.chars().next_back());
    if before.is_some_and(is_word)
        && first.is_some_and(is_word)
        && !old.chars().next().is_some_and(is_word)
    {
        e.text.insert(0, ' ');
    }
    if after.is_some_and(is_word)
        && last.is_some_and(is_word)
        && !old.chars().next_back().is_some_and(is_word)
    {
        e.text.push(' ');
    }
}

/// Remove a statement (or clause): its whole lines, or, when it is the last statement of a
/// block that cannot be empty, replace it by the language's filler (`pass`).
fn delete_statement<'t>(node: Node<'t>, src: &str, syntax: &dyn Syntax) -> Option<Edit<'t>> {
    let parent = node.parent()?;
    if parent.kind() == syntax.block_kind() {
        let mut cursor = parent.walk();
        let others = parent
            .named_children(&mut cursor)
            .filter(|c| c.id() != node.id() && !syntax.is_comment(c.kind()))
            .count();
        if others == 0 {
            if let Some(filler) = syntax.empty_block_filler() {
                return Some(replace(node, filler.to_string()));
            }
        }
    }
    let (start, end) = (node.start_byte(), node.end_byte());
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    if !src[line_start..start]
        .chars()
        .all(|c| c == ' ' || c == '\t' || c == '\x0c')
    {
        return None; // shares its first line with something else
    }
    let line_end = src[end..].find('\n').map_or(src.len(), |i| end + i + 1);
    let rest = src[end..line_end].trim();
    if !(rest.is_empty() || rest.starts_with('#') || rest.starts_with("//")) {
        return None; // shares its last line with another statement
    }
    Some(Edit {
        start: line_start,
        end: line_end,
        text: String::new(),
        anchor: node,
        removes_lines: true,
    })
}

/// Remove an element of a comma-separated list together with one separator.
fn delete_item<'t>(node: Node<'t>, src: &str) -> Edit<'t> {
    let anchor = node.parent().unwrap_or(node);
    let bytes = src.as_bytes();
    if let Some(comma) = node.next_sibling().filter(|n| n.kind() == ",") {
        let mut end = comma.end_byte();
        while end < bytes.len() && matches!(bytes[end], b' ' | b'\t' | b'\r' | b'\n') {
            end += 1;
        }
        return Edit {
            start: node.start_byte(),
            end,
            text: String::new(),
            anchor,
            removes_lines: false,
        };
    }
    if let Some(comma) = node.prev_sibling().filter(|n| n.kind() == ",") {
        let start = comma
            .prev_sibling()
            .map_or(comma.start_byte(), |p| p.end_byte());
        return Edit {
            start,
            end: node.end_byte(),
            text: String::new(),
            anchor,
            removes_lines: false,
        };
    }
    Edit {
        start: node.start_byte(),
        end: node.end_byte(),
        text: String::new(),
        anchor,
        removes_lines: false,
    }
}

// ---------------------------------------------------------------------------------------------
// Loading and compiling.

fn invalid(file: &str, key: impl Into<String>, message: impl Into<String>) -> MutatorError {
    MutatorError::Invalid {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

/// Turn a serde_yaml error ("rewrite: unknown field `foo`, expected ... at line 3 column 5")
/// into the key at fault (`rewrite.foo`) and a message.
fn yaml_error(file: &str, err: &serde_yaml::Error) -> MutatorError {
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

/// Load one rule from YAML text; `name` is what errors call the file.
pub fn load_str(name: &str, yaml: &str) -> Result<Mutator, MutatorError> {
    let spec: RuleSpec = serde_yaml::from_str(yaml).map_err(|e| yaml_error(name, &e))?;
    compile(name, spec)
}

/// Load every `*.yaml` rule in `dir` (sorted by name); all must be valid rules for `lang`,
/// named after their id, with no id twice.
pub fn load_dir(dir: &Path, lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    let io = |e| MutatorError::Io {
        file: dir.display().to_string(),
        source: e,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            paths.push(path);
        }
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| MutatorError::Io {
            file: name.clone(),
            source: e,
        })?;
        files.push((name, text));
    }
    load_all(files, lang)
}

/// The rules compiled into the binary for `lang` (`mutators/<lang>/*.yaml`); compiled once
/// per process.
pub fn load_embedded(lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    static CACHE: OnceLock<Mutex<HashMap<Language, Vec<Mutator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(rules) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&lang) {
        return Ok(rules.clone());
    }
    let mut files = Vec::new();
    if let Some(dir) = EMBEDDED.get_dir(lang.name()) {
        let mut entries: Vec<_> = dir
            .files()
            .filter(|f| {
                f.path()
                    .extension()
                    .is_some_and(|e| e == "yaml" || e == "yml")
            })
            .collect();
        entries.sort_by_key(|f| f.path());
        for f in entries {
            let name = format!("mutators/{}", f.path().display());
            let text = f
                .contents_utf8()
                .ok_or_else(|| invalid(&name, "(document)", "not UTF-8"))?;
            files.push((name, text.to_string()));
        }
    }
    let rules = load_all(files, lang)?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(lang, rules.clone());
    Ok(rules)
}

fn load_all(files: Vec<(String, String)>, lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut rules = Vec::with_capacity(files.len());
    for (name, text) in files {
        let rule = load_str(&name, &text)?;
        if rule.language != lang {
            return Err(invalid(
                &name,
                "language",
                format!("a {} rule in the {} rules", rule.language, lang),
            ));
        }
        let stem = Path::new(&name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("");
        if stem != rule.id {
            return Err(invalid(
                &name,
                "id",
                format!(
                    "id `{}` does not match the file name (expected `{stem}`)",
                    rule.id
                ),
            ));
        }
        if let Some(first) = seen.get(&rule.id) {
            return Err(MutatorError::DuplicateId {
                file: name,
                id: rule.id,
                first: first.clone(),
            });
        }
        seen.insert(rule.id.clone(), name);
        rules.push(rule);
    }
    Ok(rules)
}

fn compile(file: &str, spec: RuleSpec) -> Result<Mutator, MutatorError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::enumerate_source;

    const GOOD: &str = r#"
id: py-test-flip
language: python
category: logic
description: Flips equality.
issue_hints: [wrong answer]
query: |
  (comparison_operator operators: _ @op)
rewrite:
  action: replace
  capture: op
  map: {"==": "!="}
examples:
  - before: "def f(a, b):\n    return a == b\n"
    after: "def f(a, b):\n    return a != b\n"
"#;

    fn error_of(yaml: &str) -> String {
        load_str("mutators/python/bad.yaml", yaml)
            .unwrap_err()
            .to_string()
    }

    fn assert_names(msg: &str, key: &str) {
        assert!(
            msg.starts_with("mutators/python/bad.yaml: "),
            "no file in: {msg}"
        );
        assert!(
            msg.contains(&format!("key `{key}`")),
            "expected key `{key}` in: {msg}"
        );
    }

    #[test]
    fn a_good_rule_loads() {
        let m = load_str("good.yaml", GOOD).unwrap();
        assert_eq!(m.id, "py-test-flip");
        assert_eq!(m.action(), "replace");
        assert_eq!(m.examples().len(), 1);
    }

    #[test]
    fn embedded_python_rules_cover_every_category_and_their_examples_hold() {
        let rules = load_embedded(Language::Python).unwrap();
        assert!(rules.len() >= 16, "only {} rules", rules.len());
        for cat in CATEGORIES {
            assert!(
                rules.iter().any(|r| r.category == *cat),
                "no rule for {cat}"
            );
        }
        let mut examples = 0;
        for rule in &rules {
            assert!(rule.id.starts_with("py-"), "{}", rule.id);
            assert!(!rule.issue_hints.is_empty());
            for ex in rule.examples() {
                let cands = enumerate_source(
                    "example.py",
                    ex.before.as_bytes(),
                    Language::Python,
                    std::slice::from_ref(rule),
                )
                .unwrap();
                assert!(
                    cands.iter().any(|c| c.apply(&ex.before) == ex.after),
                    "{}: example does not hold:\n{}",
                    rule.id,
                    ex.before
                );
                examples += 1;
            }
            for program in rule.no_match() {
                let cands = enumerate_source(
                    "example.py",
                    program.as_bytes(),
                    Language::Python,
                    std::slice::from_ref(rule),
                )
                .unwrap();
                assert!(cands.is_empty(), "{}: matched {program}", rule.id);
            }
        }
        assert!(examples >= rules.len());
    }

    const JAVA: &str = r#"package p;

import java.util.*;

@Config(limit = 1 + 2)
public class Shop {
    static final int MAX = 10 < 20 ? 1 : 2;
    private final List<String> items = new ArrayList<>();
    private int count = MAX - 1;
    private final Runnable hook = () -> { if (MAX > 3) { System.gc(); } };

    static {
        int x = 1;
        x++;
    }

    @Deprecated(since = "1" + "2")
    public Shop(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n");
        }
        count = n;
        items.clear();
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) return true;
        if (!(o instanceof Shop)) {
            return false;
        }
        Shop s = (Shop) o;
        return count == s.count && items.equals(s.items);
    }

    String find(String name, int start) {
        @SuppressWarnings(value = "unchecked") List<String> l = items;
        for (int i = start; i < l.size(); i++) {
            String it = l.get(i);
            if (it.equals(name)) {
                return it;
            }
        }
        return name.isEmpty() ? null : name.trim();
    }

    int total(int[] prices) {
        int sum = 0;
        int seen = 0;
        for (int p : prices) {
            sum += p * 2;
            seen++;
        }
        switch (seen) {
            case 0:
                sum = -1;
                break;
            case 1:
                sum = sum / 2;
                break;
            default:
                sum = Math.max(sum, seen);
        }
        try {
            check(sum, seen);
        } catch (IllegalStateException e) {
            throw new RuntimeException(e);
        }
        while (sum > 100 || seen < 0) {
            sum -= 10;
        }
        if (sum >= 5) {
            sum = sum % 7;
        } else {
            sum = Objects.equals(sum, seen) ? 1 : 0;
        }
        return sum + 1;
    }

    void check(int a, int b) {
        if (a == b) {
            throw new IllegalStateException();
        }
    }
}
"#;

    fn java_parses_cleanly(text: &str) -> bool {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&Language::Java.grammar()).unwrap();
        !p.parse(text, None).unwrap().root_node().has_error()
    }

    #[test]
    fn embedded_java_rules_cover_every_category_and_their_examples_hold() {
        let rules = load_embedded(Language::Java).unwrap();
        assert!(rules.len() >= 14, "only {} rules", rules.len());
        for cat in CATEGORIES {
            assert!(
                rules.iter().any(|r| r.category == *cat),
                "no Java rule for {cat}"
            );
        }
        for rule in &rules {
            assert!(rule.id.starts_with("java-"), "{}", rule.id);
            assert!(!rule.issue_hints.is_empty());
            assert!(!rule.examples().is_empty());
            for ex in rule.examples() {
                let cands = enumerate_source(
                    "Example.java",
                    ex.before.as_bytes(),
                    Language::Java,
                    std::slice::from_ref(rule),
                )
                .unwrap();
                assert!(
                    cands.iter().any(|c| c.apply(&ex.before) == ex.after),
                    "{}: example does not hold:\n{}",
                    rule.id,
                    ex.before
                );
            }
        }
    }

    #[test]
    fn java_rules_fire_in_method_bodies_only_and_every_edit_parses() {
        let rules = load_embedded(Language::Java).unwrap();
        let cands = enumerate_source(
            "src/main/java/p/Shop.java",
            JAVA.as_bytes(),
            Language::Java,
            &rules,
        )
        .unwrap();
        // Every rule fires somewhere in this file.
        for rule in &rules {
            assert!(
                cands.iter().any(|c| c.mutator == rule.id),
                "{} makes no candidate",
                rule.id
            );
        }
        let line_of = |needle: &str| JAVA[..JAVA.find(needle).unwrap()].matches('\n').count() + 1;
        let first_body = line_of("    public Shop(int n)");
        let annotation = line_of("@SuppressWarnings");
        for c in &cands {
            let buggy = c.apply(JAVA);
            assert!(
                java_parses_cleanly(&buggy),
                "{} {:?} -> {:?}",
                c.mutator,
                c.before,
                c.after
            );
            assert!(
                c.line_range.0 > first_body,
                "{} outside a method body at line {}: {:?}",
                c.mutator,
                c.line_range.0,
                c.before
            );
            assert_ne!(c.line_range.0, annotation, "{} in an annotation", c.mutator);
            assert!(
                [
                    "Shop.Shop",
                    "Shop.equals",
                    "Shop.find",
                    "Shop.total",
                    "Shop.check"
                ]
                .contains(&c.function.as_str()),
                "{}",
                c.function
            );
        }
        let has = |id: &str, before: &str, after: &str| {
            cands
                .iter()
                .any(|c| c.mutator == id && c.before == before && c.after == after)
        };
        // Wrong returns follow the declared type.
        assert!(has("java-return-null", "it", "null"));
        assert!(has("java-return-zero", "sum + 1", "0"));
        assert!(!cands
            .iter()
            .any(|c| c.mutator == "java-return-null" && c.function == "Shop.total"));
        assert!(!cands
            .iter()
            .any(|c| c.mutator == "java-return-zero" && c.function == "Shop.find"));
        // `!x.equals(y)`-like slots get parentheses, others do not.
        assert!(has(
            "java-equals-to-identity",
            "it.equals(name)",
            "it == name"
        ));
        assert!(has(
            "java-equals-to-identity",
            "Objects.equals(sum, seen)",
            "sum == seen"
        ));
        assert!(has(
            "java-equals-to-identity",
            "items.equals(s.items)",
            "items == s.items"
        ));
        // The last `break` of a switch, and the only statement of a block, stay.
        assert_eq!(
            cands
                .iter()
                .filter(|c| c.mutator == "java-switch-fallthrough")
                .count(),
            2
        );
        assert!(!cands
            .iter()
            .any(|c| c.mutator == "java-remove-call" && c.before.contains("check(sum")));
    }

    #[test]
    fn return_types_come_from_the_enclosing_method_not_a_lambda() {
        let rules: Vec<Mutator> = load_embedded(Language::Java)
            .unwrap()
            .into_iter()
            .filter(|r| r.category == "wrong-return")
            .collect();
        let src = "class L {\n    java.util.function.Supplier<String> s(String x) {\n        java.util.function.IntSupplier f = () -> { return 1; };\n        return () -> x;\n    }\n    int[] a() { return new int[0]; }\n    void v() { return; }\n}\n";
        let cands = enumerate_source("L.java", src.as_bytes(), Language::Java, &rules).unwrap();
        let got: Vec<(&str, &str)> = cands
            .iter()
            .map(|c| (c.before.as_str(), c.after.as_str()))
            .collect();
        assert_eq!(got, [("() -> x", "null"), ("new int[0]", "null")]);
    }

    #[test]
    fn java_predicates_and_parenthesize_are_checked_at_load() {
        let rule = |query: &str, rewrite: &str| {
            format!(
                "id: java-t\nlanguage: java\ncategory: logic\ndescription: t\nissue_hints: [t]\nquery: |\n  {query}\nrewrite: {rewrite}\nexamples:\n  - before: \"class A {{ boolean f(Object a) {{ return a.equals(a); }} }}\"\n    after: \"class A {{ boolean f(Object a) {{ return !(a == a); }} }}\"\n"
            )
        };
        let bad = load_str(
            "java-t.yaml",
            &rule(
                "((return_statement (_) @target) (#return-type? @target text))",
                "{action: replace, text: x}",
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad.contains("key `query`") && bad.contains("#return-type?"),
            "{bad}"
        );
        let bad = load_str(
            "java-t.yaml",
            &rule(
                "(ternary_expression consequence: (_) @a alternative: (_) @b)",
                "{action: swap, captures: [a, b], parenthesize: true}",
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("key `rewrite.parenthesize`"), "{bad}");
        // `parenthesize` wraps where the slot needs it: under `!` here.
        let ok = rule(
            "((unary_expression operand: (method_invocation object: (_) @l arguments: (argument_list (_) @r)) @target))",
            "{action: template, template: \"{{l}} == {{r}}\", parenthesize: true}",
        );
        let src = "class A { boolean f(Object a) { return !a.equals(a); } }";
        let ok = ok.replace("return a.equals(a);", "return !a.equals(a);");
        let m = load_str("java-t.yaml", &ok).unwrap();
        let cands = enumerate_source("A.java", src.as_bytes(), Language::Java, &[m]).unwrap();
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].after, "(a == a)");
    }

    #[test]
    fn a_query_that_does_not_compile_names_query() {
        let msg = error_of(&GOOD.replace(
            "(comparison_operator operators: _ @op)",
            "(no_such_node) @op",
        ));
        assert_names(&msg, "query");
    }

    #[test]
    fn an_unsupported_predicate_names_query() {
        let msg = error_of(&GOOD.replace(
            "(comparison_operator operators: _ @op)",
            "((comparison_operator operators: _ @op) (#frobnicate? @op))",
        ));
        assert_names(&msg, "query");
        assert!(msg.contains("#frobnicate?"), "{msg}");
    }

    #[test]
    fn a_missing_capture_names_rewrite_capture() {
        let msg = error_of(&GOOD.replace("capture: op", "capture: oops"));
        assert_names(&msg, "rewrite.capture");
        assert!(msg.contains("@oops"), "{msg}");
        let msg = error_of(&GOOD.replace("  capture: op\n", ""));
        assert_names(&msg, "rewrite.capture");
        assert!(msg.contains("@target"), "{msg}");
    }

    #[test]
    fn an_unknown_action_names_rewrite_action() {
        let msg = error_of(&GOOD.replace("action: replace", "action: scramble"));
        assert_names(&msg, "rewrite.action");
        assert!(msg.contains("scramble"), "{msg}");
    }

    #[test]
    fn unknown_keys_are_named() {
        assert_names(&error_of(&format!("{GOOD}colour: red\n")), "colour");
        assert_names(
            &error_of(&GOOD.replace("  capture: op\n", "  capture: op\n  speed: 3\n")),
            "rewrite.speed",
        );
        assert_names(
            &error_of(&GOOD.replace("    after: \"def", "    during: 1\n    after: \"def")),
            "examples[0].during",
        );
    }

    #[test]
    fn missing_and_mistyped_keys_are_named() {
        assert_names(
            &error_of(&GOOD.replace("description: Flips equality.\n", "")),
            "description",
        );
        assert_names(
            &error_of(&GOOD.replace("issue_hints: [wrong answer]", "issue_hints: 3")),
            "issue_hints",
        );
        assert_names(
            &error_of(&GOOD.replace("language: python", "language: cobol")),
            "language",
        );
        assert_names(
            &error_of(&GOOD.replace("category: logic", "category: vibes")),
            "category",
        );
        assert_names(
            &error_of(&GOOD.replace("id: py-test-flip", "id: Test_Flip")),
            "id",
        );
        assert_names(
            &error_of(&GOOD.replace("[wrong answer]", "[\"use `!=`\"]")),
            "issue_hints[0]",
        );
    }

    #[test]
    fn action_parameters_are_checked() {
        assert_names(
            &error_of(&GOOD.replace("map: {\"==\": \"!=\"}", "map: {}")),
            "rewrite.map",
        );
        assert_names(
            &error_of(&GOOD.replace("map: {\"==\": \"!=\"}", "deltas: [1]")),
            "rewrite.deltas",
        );
        assert_names(
            &error_of(&GOOD.replace("  map: {\"==\": \"!=\"}\n", "")),
            "rewrite.text",
        );
        let swap = GOOD.replace(
            "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
            "action: swap\n  captures: [op, nope]",
        );
        assert_names(&error_of(&swap), "rewrite.captures");
        let tmpl = GOOD.replace(
            "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
            "action: template\n  capture: op\n  template: \"{{op}} {{ghost}}\"",
        );
        let msg = error_of(&tmpl);
        assert_names(&msg, "rewrite.template");
        assert!(msg.contains("@ghost"), "{msg}");
        let shift = GOOD.replace(
            "action: replace\n  capture: op\n  map: {\"==\": \"!=\"}",
            "action: int_shift\n  capture: op\n  deltas: [0]",
        );
        assert_names(&error_of(&shift), "rewrite.deltas");
    }

    #[test]
    fn examples_are_checked() {
        let msg = error_of(&GOOD.replace("return a != b", "return a is b"));
        assert_names(&msg, "examples[0].after");
        assert!(msg.contains("`==` -> `!=`"), "{msg}");
        let msg = error_of(&GOOD.replace(
            "    return a == b\\n\"\n    after",
            "    return a ==\\n\"\n    after",
        ));
        assert_names(&msg, "examples[0].before");
        let msg = error_of(&format!(
            "{GOOD}no_match:\n  - \"def g(x):\\n    return x == 1\\n\"\n"
        ));
        assert_names(&msg, "no_match[0]");
        assert_names(&error_of(&GOOD.replace(
            "examples:\n  - before: \"def f(a, b):\\n    return a == b\\n\"\n    after: \"def f(a, b):\\n    return a != b\\n\"\n",
            "examples: []\n",
        )), "examples");
    }

    #[test]
    fn load_dir_checks_names_languages_and_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("py-test-flip.yaml"), GOOD).unwrap();
        let rules = load_dir(dir.path(), Language::Python).unwrap();
        assert_eq!(rules.len(), 1);

        std::fs::write(dir.path().join("py-test-flip.yml"), GOOD).unwrap();
        let msg = load_dir(dir.path(), Language::Python)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("py-test-flip.yml: key `id`: duplicate id"),
            "{msg}"
        );
        std::fs::remove_file(dir.path().join("py-test-flip.yml")).unwrap();

        std::fs::write(dir.path().join("other-name.yaml"), GOOD).unwrap();
        let msg = load_dir(dir.path(), Language::Python)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("other-name.yaml: key `id`"), "{msg}");
        std::fs::remove_file(dir.path().join("other-name.yaml")).unwrap();

        let msg = load_dir(dir.path(), Language::Java)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("py-test-flip.yaml: key `language`"), "{msg}");

        let msg = load_dir(&dir.path().join("absent"), Language::Python)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("absent: cannot read"), "{msg}");
    }
}
