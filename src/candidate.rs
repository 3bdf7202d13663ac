//! Candidates: one applied mutator each — enumeration over a tree (rayon), syntax checks,
//! patches, dedupe, sampling.
//!
//! Per file: parse once, find the functions (qualified names, bodies), the docstrings and the
//! script-only code, run every rule's query, keep edits inside function bodies, drop no-ops
//! and duplicates (the same buggy file from two rules or two matches), check each surviving
//! edit's syntax, and write the candidate with its `git apply`-able patch.
//!
//! The syntax check makes sure no candidate leaves an ERROR or MISSING node in its file. Each
//! edit is checked on the smallest piece of the file that decides it, by re-parsing that piece
//! on its own and comparing its shape with the slot it came from (a context-free substitution
//! of a well-formed piece keeps the file well-formed):
//! - a token swapped for another (an operator, a name, a number) is parsed alone, or as
//!   `x OP x` for an operator; these pieces repeat and their outcomes are cached;
//! - any other edit re-parses the smallest expression or statement around it that parses
//!   alone (`if 1:` wraps an indented statement), moving outward while the answer is unclear,
//!   up to the enclosing function;
//! - removing the whole lines of one statement from a block that keeps others, or of an
//!   optional `elif`/`else` clause, is valid by construction (one element of a repetition);
//! - only what none of these settles re-parses the whole file, incrementally from the clean
//!   tree. Whole-file re-parses cannot be the rule: tree-sitter-python reuses little of an old
//!   tree (statements parsed under GLR ambiguity are not reusable), so one costs milliseconds
//!   on a large module, against microseconds for a piece.

use crate::lang::{Language, Region, Syntax};
use crate::mutator::{Edit, Mutator, RuleSet};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use streaming_iterator::StreamingIterator;
use tree_sitter::{InputEdit, Node, Parser, Point, QueryCursor, Tree};

/// One applied mutator: a single edit to one source file that makes a plausible bug.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Stable short id: the first 16 hex digits of `hash`.
    pub id: String,
    /// The mutator's `id` (e.g. `py-compare-flip`).
    pub mutator: String,
    /// The mutator's category (e.g. `boundary`).
    pub category: String,
    /// Repository-relative path with `/` separators.
    pub file: String,
    /// Qualified name of the enclosing function (`Class.method`, `outer.inner`, `func`).
    pub function: String,
    /// 1-based first and last line of the enclosing function in the clean file.
    pub function_lines: (usize, usize),
    /// Byte range of the edit in the clean file (start inclusive, end exclusive).
    pub byte_range: (usize, usize),
    /// 1-based first and last line touched by the edit in the clean file.
    pub line_range: (usize, usize),
    /// Clean text of the edited range and its replacement.
    pub before: String,
    pub after: String,
    /// Unified diff clean → buggy, applicable with `git apply` at the repository root.
    pub bug_patch: String,
    /// blake3 hex of (file, blake3 of the clean file, the edit with the text it leaves
    /// unchanged trimmed off both ends): equal hashes are the same buggy file.
    pub hash: String,
    /// The mutator's description and issue hints, carried for issue texts.
    pub description: String,
    pub issue_hints: Vec<String>,
}

impl Candidate {
    /// The buggy text of the candidate's file, given its clean text.
    pub fn apply(&self, clean: &str) -> String {
        let (s, e) = self.byte_range;
        let mut out = String::with_capacity(clean.len() + self.after.len());
        out.push_str(&clean[..s]);
        out.push_str(&self.after);
        out.push_str(&clean[e..]);
        out
    }

    fn order_key(&self) -> (&str, usize, usize, &str) {
        (
            &self.file,
            self.byte_range.0,
            self.byte_range.1,
            &self.mutator,
        )
    }
}

/// A file the enumeration could not use, and why (`not valid UTF-8`, `syntax errors in the
/// source`, `cannot read: ...`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub file: String,
    pub reason: String,
}

/// The result of enumerating a tree: candidates in (file, byte range, mutator) order, the
/// files skipped, and the number of files and lines enumerated (skipped files not counted).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Enumeration {
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<SkippedFile>,
    pub files: usize,
    pub lines: usize,
}

/// How many candidates to keep, and the seed that decides which.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub seed: u64,
    pub max_total: Option<usize>,
    pub max_per_function: Option<usize>,
    pub max_per_mutator: Option<usize>,
    /// Relative shares of mutator categories (`boundary` → 2.0, …). Empty: every candidate
    /// is equally likely. Otherwise categories are drawn in these proportions, whatever their
    /// number of candidates (a candidate's weight is its category's share divided by the
    /// category's candidates), until a category runs out; categories not named (or weighted
    /// 0) are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub category_mix: BTreeMap<String, f64>,
}

/// Enumerate candidates in `files` (repository-relative, '/'-separated) under `root`, in
/// parallel (rayon) over files. A file that cannot be read or parsed is skipped with its
/// reason; the run goes on.
pub fn enumerate(root: &Path, files: &[String], lang: Language, rules: &[Mutator]) -> Enumeration {
    let active: Vec<&Mutator> = rules.iter().filter(|r| r.language == lang).collect();
    let set = match RuleSet::of(&active) {
        Ok(set) => set,
        Err(reason) => {
            let skipped = files.iter().map(|f| SkippedFile {
                file: f.clone(),
                reason: reason.clone(),
            });
            return Enumeration {
                skipped: skipped.collect(),
                ..Enumeration::default()
            };
        }
    };
    let results: Vec<Result<(Vec<Candidate>, usize), String>> = files
        .par_iter()
        .with_max_len(1)
        .map(|rel| {
            let bytes = std::fs::read(root.join(rel)).map_err(|e| format!("cannot read: {e}"))?;
            let lines = count_lines(&bytes);
            enumerate_with(rel, &bytes, lang, &active, &set).map(|c| (c, lines))
        })
        .collect();
    let mut out = Enumeration::default();
    for (rel, result) in files.iter().zip(results) {
        match result {
            Ok((cands, lines)) => {
                out.files += 1;
                out.lines += lines;
                out.candidates.extend(cands);
            }
            Err(reason) => out.skipped.push(SkippedFile {
                file: rel.clone(),
                reason,
            }),
        }
    }
    out.candidates
        .sort_by(|a, b| a.order_key().cmp(&b.order_key()));
    out
}

fn count_lines(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Deterministic sample: order candidates by blake3(seed ‖ candidate.hash), take greedily
/// under the caps, return sorted by (file, byte_range, mutator).
///
/// With a category mix, the order is a weighted draw without replacement (each candidate's
/// key is −ln(u)/w, u uniform from the same hash, w its category's share over the category's
/// number of candidates; smallest first), so a category weighted twice as much fills about
/// twice as many of the first places.
pub fn sample(cands: Vec<Candidate>, budget: &Budget) -> Vec<Candidate> {
    let weighted = !budget.category_mix.is_empty();
    let mut per_category: HashMap<String, usize> = HashMap::new();
    if weighted {
        for c in &cands {
            *per_category.entry(c.category.clone()).or_default() += 1;
        }
    }
    let mut keyed: Vec<(f64, [u8; 32], Candidate)> = cands
        .into_iter()
        .filter_map(|c| {
            let mut h = blake3::Hasher::new();
            h.update(&budget.seed.to_le_bytes());
            h.update(c.hash.as_bytes());
            let digest = *h.finalize().as_bytes();
            let key = if weighted {
                let share = budget.category_mix.get(&c.category).copied().unwrap_or(0.0);
                if !(share > 0.0 && share.is_finite()) {
                    return None;
                }
                let w = share / per_category[&c.category] as f64;
                // u in (0, 1] from the first 8 bytes of the hash.
                let bits = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
                let u = ((bits >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                -u.ln() / w
            } else {
                0.0
            };
            Some((key, digest, c))
        })
        .collect();
    keyed.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| a.2.order_key().cmp(&b.2.order_key()))
    });
    let mut per_function: HashMap<(String, String), usize> = HashMap::new();
    let mut per_mutator: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, _, c) in keyed {
        if budget.max_total.is_some_and(|m| out.len() >= m) {
            break;
        }
        let f = per_function
            .entry((c.file.clone(), c.function.clone()))
            .or_default();
        if budget.max_per_function.is_some_and(|m| *f >= m) {
            continue;
        }
        let m = per_mutator.entry(c.mutator.clone()).or_default();
        if budget.max_per_mutator.is_some_and(|max| *m >= max) {
            continue;
        }
        *f += 1;
        *m += 1;
        out.push(c);
    }
    out.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
    out
}

thread_local! {
    /// One parser per language per thread (rayon workers reuse theirs across files).
    static PARSERS: RefCell<Vec<(Language, Parser)>> = const { RefCell::new(Vec::new()) };
}

fn with_parser<R>(lang: Language, f: impl FnOnce(&mut Parser) -> R) -> R {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let i = match parsers.iter().position(|(l, _)| *l == lang) {
            Some(i) => i,
            None => {
                let mut parser = Parser::new();
                parser
                    .set_language(&lang.grammar())
                    .expect("the grammar matches the tree-sitter library version");
                parsers.push((lang, parser));
                parsers.len() - 1
            }
        };
        f(&mut parsers[i].1)
    })
}

/// Enumerate one in-memory file. `Err` is the reason to skip the file.
pub fn enumerate_source(
    rel_path: &str,
    source: &[u8],
    lang: Language,
    rules: &[Mutator],
) -> Result<Vec<Candidate>, String> {
    let active: Vec<&Mutator> = rules.iter().filter(|r| r.language == lang).collect();
    let set = RuleSet::of(&active)?;
    enumerate_with(rel_path, source, lang, &active, &set)
}

fn enumerate_with(
    rel_path: &str,
    source: &[u8],
    lang: Language,
    rules: &[&Mutator],
    set: &RuleSet,
) -> Result<Vec<Candidate>, String> {
    let text = std::str::from_utf8(source).map_err(|_| "not valid UTF-8".to_string())?;
    with_parser(lang, |parser| {
        enumerate_text(parser, rel_path, text, lang, rules, set)
    })
}

// ---------------------------------------------------------------------------------------------
// Lines.

/// Byte offsets of line starts.
struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(i, b)| *b == b'\n' && i + 1 < text.len())
                .map(|(i, _)| i + 1),
        );
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// 0-based line of `byte`.
    fn line_of(&self, byte: usize) -> usize {
        self.starts.partition_point(|s| *s <= byte) - 1
    }

    fn start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// End of `line`, after its newline.
    fn end(&self, line: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(self.len)
    }

    fn count(&self) -> usize {
        if self.len == 0 {
            0
        } else {
            self.starts.len()
        }
    }

    fn point(&self, text: &str, byte: usize) -> Point {
        if byte == self.len && text.ends_with('\n') {
            return Point {
                row: self.starts.len(),
                column: 0,
            };
        }
        let line = self.line_of(byte);
        Point {
            row: line,
            column: byte - self.starts[line],
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What a file holds: functions, docstrings, script-only code.

struct Function {
    name: String,
    lines: (usize, usize),
    node_id: usize,
    body: (usize, usize),
}

#[derive(Default)]
struct Facts {
    /// Sorted by body start.
    functions: Vec<Function>,
    /// Byte ranges no edit may touch: docstrings, script-only code.
    excluded: Vec<(usize, usize)>,
}

impl Facts {
    /// The innermost function whose body holds `start..end`.
    fn innermost(&self, start: usize, end: usize) -> Option<&Function> {
        let upto = self.functions.partition_point(|f| f.body.0 <= start);
        self.functions[..upto]
            .iter()
            .rev()
            .find(|f| end <= f.body.1)
    }

    fn is_excluded(&self, start: usize, end: usize) -> bool {
        let end = end.max(start + 1);
        self.excluded.iter().any(|(s, e)| start < *e && *s < end)
    }
}

fn collect_facts(root: Node<'_>, src: &str, syn: &dyn Syntax) -> Facts {
    let mut facts = Facts::default();
    let mut scopes = Vec::new();
    visit(root, true, true, &mut scopes, &mut facts, src, syn);
    facts.functions.sort_by_key(|f| f.body);
    exclude_script_code(root, src, syn, &mut facts);
    exclude_subtrees(root, src, syn, &mut facts);
    facts
}

/// Subtrees no edit may touch inside function bodies (Java annotations): only bodies that
/// hold the language's marker byte are walked.
fn exclude_subtrees(root: Node<'_>, src: &str, syn: &dyn Syntax, facts: &mut Facts) {
    let Some(marker) = syn.excluded_subtree_marker() else {
        return;
    };
    let mut walked_to = 0;
    let mut found = Vec::new();
    for f in &facts.functions {
        let (start, end) = f.body;
        if end <= walked_to || !src.as_bytes()[start..end].contains(&marker) {
            continue; // nested in a body already walked, or nothing to find
        }
        walked_to = end;
        let Some(body) = root.descendant_for_byte_range(start, end) else {
            continue;
        };
        let mut cursor = body.walk();
        'walk: loop {
            let n = cursor.node();
            if syn.is_excluded_subtree(n.kind()) {
                found.push((n.start_byte(), n.end_byte()));
            } else if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.node().id() == body.id() {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }
    facts.excluded.extend(found);
}

/// Record the functions (with qualified names) and the docstrings under `node`.
fn visit(
    node: Node<'_>,
    is_root: bool,
    is_body_owner: bool,
    scopes: &mut Vec<String>,
    facts: &mut Facts,
    src: &str,
    syn: &dyn Syntax,
) {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    if is_root || (is_body_owner && node.kind() == syn.block_kind()) {
        if let Some(first) = children.iter().find(|c| !syn.is_comment(c.kind())) {
            if syn.is_docstring(*first) {
                facts.excluded.push((first.start_byte(), first.end_byte()));
            }
        }
    }
    let owner = syn.function_parts(node).is_some() || syn.scope_name(node).is_some();
    for child in children {
        if let Some((name, body)) = syn.function_parts(child) {
            scopes.push(src[name.byte_range()].to_string());
            facts.functions.push(Function {
                name: scopes.join("."),
                lines: (child.start_position().row + 1, child.end_position().row + 1),
                node_id: child.id(),
                body: (body.start_byte(), body.end_byte()),
            });
            visit(child, false, true, scopes, facts, src, syn);
            scopes.pop();
        } else if let Some(name) = syn.scope_name(child) {
            scopes.push(src[name.byte_range()].to_string());
            visit(child, false, true, scopes, facts, src, syn);
            scopes.pop();
        } else if syn.may_contain_definitions(child.kind()) {
            visit(child, false, owner, scopes, facts, src, syn);
        }
    }
}

/// Script-only code: `if __name__ == "__main__":` blocks at the top level, and the top-level
/// functions that are named there and nowhere else in the file.
fn exclude_script_code(root: Node<'_>, src: &str, syn: &dyn Syntax, facts: &mut Facts) {
    let mut cursor = root.walk();
    let top: Vec<Node<'_>> = root.named_children(&mut cursor).collect();
    let guards: Vec<Node<'_>> = top
        .iter()
        .copied()
        .filter(|n| syn.is_script_guard(*n, src.as_bytes()))
        .collect();
    if guards.is_empty() {
        return;
    }
    let mut named_in_guards: HashSet<&str> = HashSet::new();
    for g in &guards {
        for_each_identifier(*g, &mut |n| {
            named_in_guards.insert(&src[n.byte_range()]);
        });
        facts.excluded.push((g.start_byte(), g.end_byte()));
    }
    // (top-level statement, the function's name node)
    let mut defs: Vec<(Node<'_>, Node<'_>)> = Vec::new();
    for stmt in top {
        let def = if syn.function_parts(stmt).is_some() {
            Some(stmt)
        } else {
            let mut c = stmt.walk();
            let inner = stmt
                .named_children(&mut c)
                .find(|n| syn.function_parts(*n).is_some());
            inner
        };
        if let Some((name, _)) = def.and_then(|d| syn.function_parts(d)) {
            if named_in_guards.contains(&src[name.byte_range()]) {
                defs.push((stmt, name));
            }
        }
    }
    if defs.is_empty() {
        return;
    }
    let wanted: HashSet<&str> = defs.iter().map(|(_, n)| &src[n.byte_range()]).collect();
    let def_names: HashSet<usize> = defs.iter().map(|(_, n)| n.id()).collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for_each_identifier(root, &mut |n| {
        let text = &src[n.byte_range()];
        let in_guard = guards
            .iter()
            .any(|g| g.start_byte() <= n.start_byte() && n.end_byte() <= g.end_byte());
        if wanted.contains(text) && !in_guard && !def_names.contains(&n.id()) {
            *uses.entry(text).or_default() += 1;
        }
    });
    for (stmt, name) in defs {
        if !uses.contains_key(&src[name.byte_range()]) {
            facts.excluded.push((stmt.start_byte(), stmt.end_byte()));
        }
    }
}

fn for_each_identifier<'t>(node: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if n.kind() == "identifier" {
            f(n);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The nodes from `root` down to `target` (both included); shorter if `target` is not found.
fn path_to<'t>(root: Node<'t>, target: Node<'t>) -> Vec<Node<'t>> {
    let (s, e) = (target.start_byte(), target.end_byte());
    let mut path = vec![root];
    let mut node = root;
    while node.id() != target.id() {
        let mut cursor = node.walk();
        if cursor.goto_first_child_for_byte(s).is_none() {
            break;
        }
        let mut next = None;
        loop {
            let c = cursor.node();
            if c.start_byte() > s {
                break;
            }
            if c.id() == target.id() || (c.start_byte() <= s && e <= c.end_byte()) {
                next = Some(c);
                break;
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
        match next {
            Some(c) => {
                path.push(c);
                node = c;
            }
            None => break,
        }
    }
    path
}

// ---------------------------------------------------------------------------------------------
// The enumeration of one file.

fn enumerate_text(
    parser: &mut Parser,
    rel_path: &str,
    src: &str,
    lang: Language,
    rules: &[&Mutator],
    set: &RuleSet,
) -> Result<Vec<Candidate>, String> {
    let tree = parser
        .parse(src, None)
        .ok_or_else(|| "the parser gave up".to_string())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("syntax errors in the source".to_string());
    }
    let syn = lang.syntax();
    let facts = collect_facts(root, src, syn);
    let (Some(first), Some(last)) = (
        facts.functions.iter().map(|f| f.body.0).min(),
        facts.functions.iter().map(|f| f.body.1).max(),
    ) else {
        return Ok(Vec::new());
    };

    let edits = collect_edits(root, src, syn, set, rules, &facts, first..last);
    let lines = Lines::new(src);
    let clean_hash = blake3::hash(src.as_bytes());
    let mut seen: HashSet<[u8; 32]> = HashSet::new();
    let mut checker = Checker {
        parser,
        src,
        syn,
        lines: &lines,
        tree: &tree,
        scratch: String::new(),
        lang,
    };
    let mut out = Vec::new();
    for (ri, e) in &edits {
        let Some(func) = facts.innermost(e.anchor.start_byte(), e.anchor.end_byte()) else {
            continue;
        };
        let (cs, ce, crep) = canonical(src, e);
        let hash = edit_hash(rel_path, clean_hash.as_bytes(), cs, ce, crep);
        if !seen.insert(*hash.as_bytes()) {
            continue; // the same buggy file as an earlier candidate
        }
        if !checker.check(e, func.node_id) {
            continue;
        }
        let rule = rules[*ri];
        let hash = hash.to_hex().to_string();
        let first = lines.line_of(e.start);
        let last = if e.end > e.start {
            lines.line_of(e.end - 1)
        } else {
            first
        };
        out.push(Candidate {
            id: hash[..16].to_string(),
            mutator: rule.id.clone(),
            category: rule.category.clone(),
            file: rel_path.to_string(),
            function: func.name.clone(),
            function_lines: func.lines,
            byte_range: (e.start, e.end),
            line_range: (first + 1, last + 1),
            before: src[e.start..e.end].to_string(),
            after: e.text.clone(),
            bug_patch: unified_patch(rel_path, src, &lines, e.start, e.end, &e.text),
            hash,
            description: rule.description.clone(),
            issue_hints: rule.issue_hints.clone(),
        });
    }
    Ok(out)
}

/// How deep in a tree a match may start. Hand-written code stays far above it; generated
/// tables do not (`sun/nio/cs/GB18030.java` in the JDK holds a string concatenation of
/// thousands of terms, a binary-expression chain thousands of levels deep), and a query
/// cursor keeps a partial match per level of such a chain alive while it walks down it, which
/// made that one file take 14 s of CPU (quadratic in the depth).
const MAX_START_DEPTH: u32 = 64;

/// Every rule's edits inside `range` (matches starting at most [`MAX_START_DEPTH`] levels
/// down), minus no-ops and excluded code, in (start, end, rule id) order.
fn collect_edits<'t>(
    root: Node<'t>,
    src: &str,
    syn: &dyn Syntax,
    set: &RuleSet,
    rules: &[&Mutator],
    facts: &Facts,
    range: std::ops::Range<usize>,
) -> Vec<(usize, Edit<'t>)> {
    let mut edits: Vec<(usize, Edit<'t>)> = Vec::new();
    let mut buf = Vec::new();
    let mut cursor = QueryCursor::new();
    cursor.set_byte_range(range);
    cursor.set_max_start_depth(Some(MAX_START_DEPTH));
    let Some(query) = set.query() else {
        return edits;
    };
    let mut matches = cursor.matches(query, root, src.as_bytes());
    while let Some(m) = matches.next() {
        let rule = set.edits(m, src, syn, &mut buf);
        for e in buf.drain(..) {
            let noop = src.get(e.start..e.end) == Some(e.text.as_str());
            if !noop && !facts.is_excluded(e.start, e.end) {
                edits.push((rule, e));
            }
        }
    }
    edits.sort_by(|(ra, a), (rb, b)| {
        (a.start, a.end, &rules[*ra].id).cmp(&(b.start, b.end, &rules[*rb].id))
    });
    edits
}

/// The edit with the text it leaves unchanged trimmed off both ends: (start, end, replacement).
fn canonical<'e>(src: &str, e: &'e Edit<'_>) -> (usize, usize, &'e [u8]) {
    let before = &src.as_bytes()[e.start..e.end];
    let after = e.text.as_bytes();
    let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
    let (b, a) = (&before[prefix..], &after[prefix..]);
    let suffix = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (e.start + prefix, e.end - suffix, &a[..a.len() - suffix])
}

/// blake3 of (file, blake3 of the clean file, canonical edit), fields length-prefixed.
fn edit_hash(
    file: &str,
    clean_hash: &[u8; 32],
    start: usize,
    end: usize,
    text: &[u8],
) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update(&(file.len() as u64).to_le_bytes());
    h.update(file.as_bytes());
    h.update(clean_hash);
    h.update(&(start as u64).to_le_bytes());
    h.update(&(end as u64).to_le_bytes());
    h.update(&(text.len() as u64).to_le_bytes());
    h.update(text);
    h.finalize()
}

// ---------------------------------------------------------------------------------------------
// The syntax check.

/// What a re-parsed piece must look like to stand for the region it replaces.
#[derive(Clone, Copy, Debug)]
enum Shape<'k> {
    /// Exactly one statement (a simple one, unless the piece starts its line).
    Statement { line_start: bool },
    /// One expression statement holding one expression (of `kind`, when given).
    Expression { kind: Option<&'k str> },
}

/// The outcome of parsing a piece: no ERROR or MISSING node, and the expected shape.
#[derive(Clone, Copy, Debug)]
struct Parsed {
    clean: bool,
    shaped: bool,
}

const PIECE_CACHE_SIZE: usize = 1 << 16;

thread_local! {
    /// Parsed pieces by shape and text, per thread: many pieces repeat (`None`, `x <= x`...).
    static PIECES: RefCell<HashMap<String, Parsed>> = RefCell::new(HashMap::new());
}

/// What a piece says about an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// The edited piece parses and fits its slot: the file parses.
    Accept,
    /// The piece cannot tell (it does not stand alone, or not as the same thing): try a
    /// larger one.
    Outward,
    /// The edited piece does not parse: let the whole file decide (a piece cannot tell a
    /// broken edit from one that only parses in its context, like an `else:` joining the
    /// statement before it).
    File,
}

struct Checker<'a> {
    parser: &'a mut Parser,
    /// The language, part of every cached piece's key (pieces of two languages can be equal).
    lang: Language,
    src: &'a str,
    syn: &'a dyn Syntax,
    lines: &'a Lines,
    tree: &'a Tree,
    scratch: String,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Checker<'_> {
    /// Whether the file with `e` applied parses without ERROR or MISSING nodes; `func` is the
    /// node id of the innermost function around the edit (checks never go beyond it, except
    /// to the whole file).
    ///
    /// In order: a removal of whole statements or optional clauses is valid by construction;
    /// a swapped token is checked alone (or, for an operator, as `x OP x`); any other edit
    /// re-parses the smallest region around it that parses alone (an expression in its slot,
    /// a statement in its block), moving outward while the answer is unclear, up to the
    /// function. Pieces only ever accept: whatever they do not accept, and an edit that
    /// glues tokens together across its edge, is decided by re-parsing the whole file.
    fn check(&mut self, e: &Edit<'_>, func: usize) -> bool {
        if e.removes_lines && self.removal_is_structural(e) {
            return true;
        }
        if self.glues(e) {
            return self.check_file(e); // tokens merge across the edit's edge: no piece shows it
        }
        if self.check_token(e) == Verdict::Accept {
            return true;
        }
        let path = path_to(self.tree.root_node(), e.anchor);
        if path.last().map(|n| n.id()) != Some(e.anchor.id()) {
            return self.check_file(e);
        }
        let func = path.iter().position(|n| n.id() == func).unwrap_or(0);
        // A removed statement is gone: start the search above it.
        let top = if e.removes_lines {
            path.len() - 1
        } else {
            path.len()
        };
        for i in (0..top).rev() {
            let node = path[i];
            let parent = i.checked_sub(1).map(|j| path[j]);
            let Some(region) = self.syn.region(node, parent) else {
                if i < func {
                    break;
                }
                continue;
            };
            let span = self.span(node, region);
            if span.0 > e.start || e.end > span.1 {
                if i <= func {
                    break;
                }
                continue;
            }
            if region == Region::SameKind
                && (node.start_byte(), node.end_byte()) == (e.start, e.end)
            {
                continue; // a whole-node replacement usually changes the kind: try the parent
            }
            match self.check_region(node, region, span, e) {
                Verdict::Accept => return true,
                Verdict::File => break,
                Verdict::Outward if i <= func => break,
                Verdict::Outward => {}
            }
        }
        self.check_file(e)
    }

    /// Whether the edit puts two word characters side by side at one of its edges where the
    /// clean text had a word boundary.
    fn glues(&self, e: &Edit<'_>) -> bool {
        let src = self.src;
        let old_first = src[e.start..].chars().next();
        let old_last = src[..e.end].chars().next_back();
        let before = src[..e.start].chars().next_back();
        let after = src[e.end..].chars().next();
        let new_first = e.text.chars().next().or(after);
        let new_last = e.text.chars().next_back().or(before);
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let was_split_before = !(word(before) && word(old_first));
        let was_split_after = !(word(old_last) && word(after));
        (word(before) && word(new_first) && was_split_before)
            || (word(new_last) && word(after) && was_split_after)
    }

    /// The removed lines hold exactly one statement of a block that keeps others (or that
    /// may be empty), or one optional clause (`elif`, `else`): one element of a repetition
    /// goes, everything else stays whole at its indentation.
    fn removal_is_structural(&self, e: &Edit<'_>) -> bool {
        let node = e.anchor;
        let Some(parent) = node.parent() else {
            return false;
        };
        if parent.kind() == self.syn.block_kind() {
            if self.syn.empty_block_filler().is_none() {
                return true;
            }
            let mut c = parent.walk();
            let others = parent
                .named_children(&mut c)
                .filter(|x| x.id() != node.id() && !self.syn.is_comment(x.kind()))
                .count();
            return others > 0;
        }
        self.syn.is_optional_clause(node.kind(), parent.kind())
    }

    /// An edit that swaps one whole token for another, with word boundaries on both sides: the
    /// new token alone must parse as a leaf of the old kind, or, for an operator, `x OP x` as
    /// a node of the parent's kind. The rest of the file keeps its tokens.
    fn check_token(&mut self, e: &Edit<'_>) -> Verdict {
        let node = e.anchor;
        if node.child_count() != 0 || (node.start_byte(), node.end_byte()) != (e.start, e.end) {
            return Verdict::Outward;
        }
        let bytes = self.src.as_bytes();
        let text = e.text.as_bytes();
        let (Some(&first), Some(&last)) = (text.first(), text.last()) else {
            return Verdict::Outward;
        };
        let glued_before = e.start > 0 && is_word_byte(bytes[e.start - 1]) && is_word_byte(first);
        let glued_after = e.end < bytes.len() && is_word_byte(bytes[e.end]) && is_word_byte(last);
        if glued_before || glued_after || e.text.contains('\n') {
            return Verdict::Outward;
        }
        let (prefix, suffix, kind) = if node.is_named() {
            ("", "", node.kind())
        } else {
            let Some(parent) = node.parent() else {
                return Verdict::Outward;
            };
            let Some((p, s)) = self.syn.operator_context(parent.kind()) else {
                return Verdict::Outward;
            };
            (p, s, parent.kind())
        };
        let shape = Shape::Expression { kind: Some(kind) };
        if self
            .parse_piece(&[prefix, &e.text, suffix], false, shape)
            .shaped
        {
            Verdict::Accept
        } else {
            Verdict::Outward
        }
    }

    /// The bytes a region covers: an expression's own bytes; a statement's whole lines when it
    /// starts its line and ends its line.
    fn span(&self, node: Node<'_>, region: Region) -> (usize, usize) {
        let (start, end) = (node.start_byte(), node.end_byte());
        if region != Region::Statement {
            return (start, end);
        }
        let line_start = self.lines.start(self.lines.line_of(start));
        let start = if self.src[line_start..start]
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
        {
            line_start
        } else {
            start
        };
        let line_end = self.src[end..]
            .find('\n')
            .map_or(self.src.len(), |i| end + i + 1);
        let end = if self.src[end..line_end].trim().is_empty() {
            line_end
        } else {
            end
        };
        (start, end)
    }

    fn needs_wrapper(&self, span_start: usize) -> bool {
        self.syn.indent_wrapper().is_some()
            && span_start == self.lines.start(self.lines.line_of(span_start))
            && matches!(self.src.as_bytes().get(span_start), Some(b' ' | b'\t'))
    }

    /// Parse the concatenated `pieces` alone (inside the indentation wrapper when `wrapped`)
    /// and compare the result with `shape`. Outcomes are cached by text.
    fn parse_piece(&mut self, pieces: &[&str], wrapped: bool, shape: Shape<'_>) -> Parsed {
        self.scratch.clear();
        self.scratch.push_str(self.lang.name());
        match shape {
            Shape::Statement { line_start: true } => self.scratch.push('S'),
            Shape::Statement { line_start: false } => self.scratch.push('s'),
            Shape::Expression { kind: None } => self.scratch.push('e'),
            Shape::Expression { kind: Some(k) } => {
                self.scratch.push_str("e:");
                self.scratch.push_str(k);
            }
        }
        self.scratch.push('\0');
        let text_start = self.scratch.len();
        if wrapped {
            self.scratch
                .push_str(self.syn.indent_wrapper().unwrap_or(""));
        }
        for p in pieces {
            self.scratch.push_str(p);
        }
        if matches!(shape, Shape::Expression { .. }) {
            self.scratch.push_str(self.syn.expression_suffix());
        }
        if let Some(p) = PIECES.with(|c| c.borrow().get(self.scratch.as_str()).copied()) {
            return p;
        }
        let parsed = match self.parser.parse(&self.scratch[text_start..], None) {
            Some(tree) => {
                let clean = !tree.root_node().has_error();
                Parsed {
                    clean,
                    shaped: clean && self.shape_ok(&tree, wrapped, shape),
                }
            }
            None => Parsed {
                clean: false,
                shaped: false,
            },
        };
        PIECES.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= PIECE_CACHE_SIZE {
                c.clear();
            }
            c.insert(self.scratch.clone(), parsed);
        });
        parsed
    }

    /// The top-level statements of a parsed piece (inside the wrapper when there is one).
    fn statements<'t>(&self, tree: &'t Tree, wrapped: bool) -> Option<Vec<Node<'t>>> {
        let named = |n: Node<'t>| {
            let mut c = n.walk();
            n.named_children(&mut c)
                .filter(|x| !self.syn.is_comment(x.kind()))
                .collect::<Vec<_>>()
        };
        let top = named(tree.root_node());
        if !wrapped {
            return Some(top);
        }
        let [wrapper] = top.as_slice() else {
            return None;
        };
        let block = named(*wrapper)
            .into_iter()
            .find(|n| n.kind() == self.syn.block_kind())?;
        Some(named(block))
    }

    fn shape_ok(&self, tree: &Tree, wrapped: bool, shape: Shape<'_>) -> bool {
        let Some(stmts) = self.statements(tree, wrapped) else {
            return false;
        };
        let [stmt] = stmts.as_slice() else {
            return false;
        };
        match shape {
            Shape::Statement { line_start } => {
                // At the start of a line, any statement fits where indentation decides (Python);
                // elsewhere, and in languages without it, only statements the language lists.
                (line_start && self.syn.indent_wrapper().is_some())
                    || self.syn.is_simple_statement(stmt.kind())
            }
            Shape::Expression { kind } => {
                if stmt.kind() != "expression_statement" {
                    return false;
                }
                // Nothing else at the top, not even an anonymous empty statement (`x;;` in
                // Java, `x;` in Python): the piece must be one expression and its terminator.
                let mut c = tree.root_node().walk();
                let top = tree
                    .root_node()
                    .children(&mut c)
                    .filter(|x| !self.syn.is_comment(x.kind()))
                    .count();
                if top != 1 {
                    return false;
                }
                let mut c = stmt.walk();
                let inner: Vec<Node<'_>> = stmt
                    .named_children(&mut c)
                    .filter(|x| !self.syn.is_comment(x.kind()))
                    .collect();
                match (inner.as_slice(), kind) {
                    ([x], Some(kind)) => x.kind() == kind,
                    ([x], None) => self.syn.is_expression(x.kind()),
                    _ => false,
                }
            }
        }
    }

    /// Re-parse one region with the edit applied and compare it with the region's slot.
    fn check_region(
        &mut self,
        node: Node<'_>,
        region: Region,
        span: (usize, usize),
        e: &Edit<'_>,
    ) -> Verdict {
        let src = self.src;
        let wrapped = region == Region::Statement && self.needs_wrapper(span.0);
        let shape = match region {
            Region::Statement => Shape::Statement {
                line_start: span.0 == self.lines.start(self.lines.line_of(span.0)),
            },
            Region::AnyExpression => Shape::Expression { kind: None },
            Region::SameKind => Shape::Expression {
                kind: Some(node.kind()),
            },
        };
        let whole_lines = span.0 == self.lines.start(self.lines.line_of(span.0))
            && (span.1 == src.len() || src.as_bytes()[span.1 - 1] == b'\n');
        if e.text.contains('\n') && !(region == Region::Statement && whole_lines) {
            // A new line break means one thing inside brackets around the piece and another
            // outside them, or before a `;`: only whole lines show which.
            return Verdict::Outward;
        }
        let edited = self.parse_piece(
            &[&src[span.0..e.start], &e.text, &src[e.end..span.1]],
            wrapped,
            shape,
        );
        match (edited.clean, edited.shaped) {
            (true, true) => Verdict::Accept,
            (true, false) => Verdict::Outward,
            (false, _) => Verdict::File,
        }
    }

    /// Re-parse the whole buggy file, incrementally from the clean tree.
    fn check_file(&mut self, e: &Edit<'_>) -> bool {
        let src = self.src.as_bytes();
        let text = e.text.as_bytes();
        let start_position = self.lines.point(self.src, e.start);
        let old_end_position = self.lines.point(self.src, e.end);
        let newlines = text.iter().filter(|b| **b == b'\n').count();
        let new_end_position = match text.iter().rposition(|b| *b == b'\n') {
            None => Point {
                row: start_position.row,
                column: start_position.column + text.len(),
            },
            Some(last) => Point {
                row: start_position.row + newlines,
                column: text.len() - last - 1,
            },
        };
        let mut old = self.tree.clone();
        old.edit(&InputEdit {
            start_byte: e.start,
            old_end_byte: e.end,
            new_end_byte: e.start + text.len(),
            start_position,
            old_end_position,
            new_end_position,
        });
        let (start, end, new_end) = (e.start, e.end, e.start + text.len());
        let mut read = |i: usize, _: Point| -> &[u8] {
            if i < start {
                &src[i..start]
            } else if i < new_end {
                &text[i - start..]
            } else {
                src.get(i - new_end + end..).unwrap_or(&[])
            }
        };
        match self.parser.parse_with_options(&mut read, Some(&old), None) {
            Some(tree) => !tree.root_node().has_error(),
            None => false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Patches.

/// A unified diff (3 lines of context) of one edit, built from the changed lines only.
fn unified_patch(
    file: &str,
    src: &str,
    lines: &Lines,
    start: usize,
    end: usize,
    text: &str,
) -> String {
    let n = lines.count();
    let first = lines.line_of(start.min(src.len().saturating_sub(1)));
    let mut last = if end > start {
        lines.line_of(end - 1)
    } else {
        first
    };
    // The new text of lines first..=last; extend while it would run into the next line.
    let new_block = loop {
        let block = format!(
            "{}{}{}",
            &src[lines.start(first)..start],
            text,
            &src[end..lines.end(last)]
        );
        if !block.is_empty()
            && !block.ends_with('\n')
            && lines.end(last) < src.len()
            && last + 1 < n
        {
            last += 1;
            continue;
        }
        break block;
    };
    let pre = first.saturating_sub(3);
    let post = (last + 4).min(n);
    let old_lines: Vec<&str> = (first..=last)
        .map(|l| &src[lines.start(l)..lines.end(l)])
        .collect();
    let new_lines: Vec<&str> = new_block.split_inclusive('\n').collect();
    let context_before = first - pre;
    let context_after = post - (last + 1);
    let old_count = context_before + old_lines.len() + context_after;
    let new_count = context_before + new_lines.len() + context_after;
    let at = |count: usize| if count == 0 { pre } else { pre + 1 };

    let mut out = format!(
        "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -{},{} +{},{} @@\n",
        at(old_count),
        old_count,
        at(new_count),
        new_count
    );
    let mut emit = |mark: char, line: &str| {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for l in pre..first {
        emit(' ', &src[lines.start(l)..lines.end(l)]);
    }
    for l in &old_lines {
        emit('-', l);
    }
    for l in &new_lines {
        emit('+', l);
    }
    for l in last + 1..post {
        emit(' ', &src[lines.start(l)..lines.end(l)]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutator::{load_embedded, load_str};
    use std::process::Command;

    fn python_rules() -> Vec<Mutator> {
        load_embedded(Language::Python).unwrap()
    }

    fn rule(id: &str) -> Mutator {
        python_rules().into_iter().find(|r| r.id == id).unwrap()
    }

    fn parses_cleanly(text: &str) -> bool {
        let mut p = Parser::new();
        p.set_language(&Language::Python.grammar()).unwrap();
        !p.parse(text, None).unwrap().root_node().has_error()
    }

    const SHOP: &str = r#""""A shop: module docstring with a < b inside."""
import sys

LIMIT = 10 if sys.maxsize > 2 else 5


class Ledger:
    """Keeps entries; docstring mentions x == y."""

    rate = 2 * 3

    def reserve(self, amount):
        """Reserve `amount` if amount < LIMIT."""
        if amount <= 0:
            raise ValueError("amount")
        self.total = self.total + amount
        return self.total > LIMIT

    @staticmethod
    def outer(xs):
        def inner(x):
            return x * 2
        return [inner(x) for x in xs if x != 0]


async def fetch(client, key):
    data = await client.get(key, timeout=3)
    return data


def main():
    print(Ledger().reserve(1) == True)


if __name__ == "__main__":
    main()
"#;

    #[test]
    fn candidates_live_in_function_bodies_with_qualified_names() {
        let rules = python_rules();
        let cands = enumerate_source("shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap();
        assert!(!cands.is_empty());
        let lines: Vec<&str> = SHOP.lines().collect();
        for c in &cands {
            // Never at module or class level, never in a docstring or the script-only `main`.
            assert!(
                [
                    "Ledger.reserve",
                    "Ledger.outer",
                    "Ledger.outer.inner",
                    "fetch"
                ]
                .contains(&c.function.as_str()),
                "{} in {}",
                c.mutator,
                c.function
            );
            assert!(c.line_range.0 >= c.function_lines.0 && c.line_range.1 <= c.function_lines.1);
            let first = lines[c.line_range.0 - 1];
            assert!(
                !first.trim_start().starts_with("\"\"\""),
                "docstring mutated: {c:?}"
            );
            let buggy = c.apply(SHOP);
            assert_ne!(buggy, SHOP);
            assert!(
                parses_cleanly(&buggy),
                "{} produced a syntax error:\n{}",
                c.mutator,
                c.after
            );
            assert_eq!(c.id, c.hash[..16]);
            assert_eq!(&SHOP[c.byte_range.0..c.byte_range.1], c.before);
        }
        let fetch = cands.iter().find(|c| c.function == "fetch").unwrap();
        assert_eq!(fetch.function_lines, (26, 28));
        let inner = cands
            .iter()
            .find(|c| c.function == "Ledger.outer.inner")
            .unwrap();
        assert_eq!(inner.function_lines, (21, 22));
        assert!(cands
            .iter()
            .any(|c| c.mutator == "py-drop-kwarg" && c.after.is_empty()));
        // Sorted by (file, start, end, mutator).
        let keys: Vec<_> = cands.iter().map(|c| c.order_key()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn script_only_functions_are_left_alone_but_shared_ones_are_not() {
        let src = "def helper(a, b):\n    return a < b\n\n\ndef _demo():\n    return 1 < 2\n\n\nx = helper(1, 2)\n\nif __name__ == '__main__':\n    _demo()\n    helper(3, 4)\n";
        let cands = enumerate_source(
            "m.py",
            src.as_bytes(),
            Language::Python,
            &[rule("py-compare-boundary")],
        )
        .unwrap();
        let functions: Vec<&str> = cands.iter().map(|c| c.function.as_str()).collect();
        assert_eq!(functions, ["helper"]);
    }

    #[test]
    fn duplicate_edits_are_dropped_and_hashes_are_stable() {
        let twin = load_str(
            "twin.yaml",
            r#"
id: py-twin-eq
language: python
category: logic
description: Same edit as py-eq-flip.
issue_hints: [twin]
query: "(comparison_operator operators: _ @target)"
rewrite: {action: replace, map: {"==": "!="}}
examples:
  - {before: "def f(a):\n    return a == 1\n", after: "def f(a):\n    return a != 1\n"}
"#,
        )
        .unwrap();
        let src = "def f(a, b):\n    return a == b\n";
        let both = [rule("py-eq-flip"), twin.clone()];
        let cands = enumerate_source("f.py", src.as_bytes(), Language::Python, &both).unwrap();
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].mutator, "py-eq-flip"); // the first in (range, id) order wins
        let again = enumerate_source("f.py", src.as_bytes(), Language::Python, &[twin]).unwrap();
        assert_eq!(again[0].hash, cands[0].hash, "same buggy file, same hash");
        let elsewhere = enumerate_source("g.py", src.as_bytes(), Language::Python, &both).unwrap();
        assert_ne!(elsewhere[0].hash, cands[0].hash);

        // The same buggy file from a different range is the same candidate: rewriting the whole
        // comparison `a == b` into `a != b` is rewriting its operator.
        let whole = load_str(
            "whole.yaml",
            r#"
id: py-whole-neq
language: python
category: logic
description: Rewrites a whole equality.
issue_hints: [whole]
query: "(comparison_operator (identifier) @l \"==\" (identifier) @r) @target"
rewrite: {action: template, template: "{{l}} != {{r}}"}
examples:
  - {before: "def f(a, b):\n    return a == b\n", after: "def f(a, b):\n    return a != b\n"}
"#,
        )
        .unwrap();
        let cands = enumerate_source(
            "f.py",
            src.as_bytes(),
            Language::Python,
            &[rule("py-eq-flip"), whole],
        )
        .unwrap();
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].mutator, "py-whole-neq"); // it starts earlier
        assert_eq!(cands[0].hash, again[0].hash);
    }

    #[test]
    fn no_op_and_invalid_edits_are_dropped() {
        let noop = load_str(
            "noop.yaml",
            r#"
id: py-noop
language: python
category: logic
description: Rewrites `==` into itself, and `<` into something else.
issue_hints: [nothing]
query: "(comparison_operator operators: _ @target)"
rewrite: {action: replace, map: {"==": "==", "<": ">"}}
examples:
  - {before: "def f(a):\n    return a < 1\n", after: "def f(a):\n    return a > 1\n"}
"#,
        )
        .unwrap();
        let src = "def f(a, b):\n    return a == b\n";
        assert!(
            enumerate_source("f.py", src.as_bytes(), Language::Python, &[noop])
                .unwrap()
                .is_empty()
        );

        // A rule whose edits are mostly broken: open a bracket, or join two names.
        let broken = load_str(
            "broken.yaml",
            r#"
id: py-broken
language: python
category: wrong-return
description: Breaks returns.
issue_hints: [broken]
query: "(return_statement (_) @target)"
rewrite: {action: replace, text: ["(", "a b", "x if y", "[x", "lambda: 0"]}
examples:
  - {before: "def f(a):\n    return a\n", after: "def f(a):\n    return lambda: 0\n"}
"#,
        )
        .unwrap();
        let src = "def f(a):\n    if a:\n        return(a)\n    return a + 1\n\n\ndef g(b):\n    return [\n        b,\n    ]\n";
        let cands = enumerate_source("f.py", src.as_bytes(), Language::Python, &[broken]).unwrap();
        assert_eq!(cands.len(), 3, "{cands:#?}");
        assert!(cands.iter().all(|c| c.after.trim() == "lambda: 0"));
        assert!(cands.iter().all(|c| parses_cleanly(&c.apply(src))));
    }

    #[test]
    fn bad_files_are_skipped_with_a_reason_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("good.py"),
            "def f(a, b):\n    return a < b\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("latin1.py"),
            b"def f():\n    return '\xe9'\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("broken.py"), "def f(:\n    return 1\n").unwrap();
        let files: Vec<String> = ["broken.py", "good.py", "latin1.py", "missing.py"]
            .map(String::from)
            .to_vec();
        let e = enumerate(dir.path(), &files, Language::Python, &python_rules());
        assert_eq!(e.files, 1);
        assert_eq!(e.lines, 2);
        assert!(!e.candidates.is_empty());
        assert!(e.candidates.iter().all(|c| c.file == "good.py"));
        let reasons: Vec<(&str, &str)> = e
            .skipped
            .iter()
            .map(|s| (s.file.as_str(), s.reason.as_str()))
            .collect();
        assert_eq!(reasons[0], ("broken.py", "syntax errors in the source"));
        assert_eq!(reasons[1], ("latin1.py", "not valid UTF-8"));
        assert_eq!(reasons[2].0, "missing.py");
        assert!(reasons[2].1.starts_with("cannot read"));
    }

    fn many_candidates() -> Vec<Candidate> {
        let rules = python_rules();
        let mut all =
            enumerate_source("shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap();
        all.extend(
            enumerate_source("b/shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap(),
        );
        all
    }

    #[test]
    fn sampling_is_deterministic_and_respects_caps() {
        let all = many_candidates();
        assert!(all.len() > 40);
        let budget = Budget {
            seed: 7,
            max_total: Some(20),
            ..Budget::default()
        };
        let a = sample(all.clone(), &budget);
        let mut shuffled = all.clone();
        shuffled.reverse();
        let b = sample(shuffled, &budget);
        assert_eq!(a, b, "the input order does not matter");
        assert_eq!(a.len(), 20);
        let keys: Vec<_> = a.iter().map(|c| c.order_key()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        let other = sample(
            all.clone(),
            &Budget {
                seed: 8,
                ..budget.clone()
            },
        );
        assert_ne!(a, other, "another seed, another sample");

        let capped = sample(
            all.clone(),
            &Budget {
                seed: 1,
                max_total: None,
                max_per_function: Some(2),
                max_per_mutator: Some(3),
                ..Budget::default()
            },
        );
        let mut per_function: HashMap<(&str, &str), usize> = HashMap::new();
        let mut per_mutator: HashMap<&str, usize> = HashMap::new();
        for c in &capped {
            *per_function.entry((&c.file, &c.function)).or_default() += 1;
            *per_mutator.entry(&c.mutator).or_default() += 1;
        }
        assert!(per_function.values().all(|n| *n <= 2));
        assert!(per_mutator.values().all(|n| *n <= 3));
        assert_eq!(sample(all.clone(), &Budget::default()).len(), all.len());
    }

    /// A category mix sets the categories' shares of the draw, whatever their number of
    /// candidates, and leaves out the categories it does not name.
    #[test]
    fn a_category_mix_weights_the_draw() {
        let all = many_candidates();
        let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &all {
            *by_cat.entry(&c.category).or_default() += 1;
        }
        let mut big: Vec<(&str, usize)> = by_cat
            .iter()
            .filter(|(_, n)| **n >= 10)
            .map(|(c, n)| (*c, *n))
            .collect();
        big.sort_by_key(|b| std::cmp::Reverse(b.1));
        assert!(
            big.len() >= 2,
            "the fixture has two categories of 10+ candidates: {big:?}"
        );
        let (heavy, light) = (big[1].0.to_string(), big[0].0.to_string());
        let (mut n_heavy, mut n_light) = (0usize, 0usize);
        for seed in 0..20 {
            let budget = Budget {
                seed,
                max_total: Some(8),
                category_mix: BTreeMap::from([(heavy.clone(), 9.0), (light.clone(), 1.0)]),
                ..Budget::default()
            };
            let picked = sample(all.clone(), &budget);
            assert_eq!(picked.len(), 8);
            for c in &picked {
                assert!(c.category == heavy || c.category == light, "{}", c.category);
                n_heavy += usize::from(c.category == heavy);
                n_light += usize::from(c.category == light);
            }
        }
        assert!(
            n_heavy as f64 / (n_heavy + n_light) as f64 > 0.7,
            "{heavy} (weight 9): {n_heavy}, {light} (weight 1): {n_light}"
        );
        // Equal weights give equal shares to a category of many candidates and one of few
        // (per-candidate weights would give the small one about n_small / (n_small + n_rich)).
        let (rich, n_rich) = big[0];
        let (poor, n_poor) = by_cat
            .iter()
            .map(|(c, n)| (*c, *n))
            .find(|(_, n)| *n >= 3 && *n * 3 <= n_rich)
            .expect("a category with a third of the richest one's candidates");
        let (mut got_poor, mut got_rich) = (0usize, 0usize);
        for seed in 0..40 {
            let budget = Budget {
                seed,
                max_total: Some(2),
                category_mix: BTreeMap::from([(rich.to_string(), 1.0), (poor.to_string(), 1.0)]),
                ..Budget::default()
            };
            for c in sample(all.clone(), &budget) {
                got_poor += usize::from(c.category == poor);
                got_rich += usize::from(c.category == rich);
            }
        }
        let share = got_poor as f64 / (got_poor + got_rich) as f64;
        assert!(
            (0.35..=0.65).contains(&share),
            "{poor} ({n_poor} candidates): {got_poor}, {rich} ({n_rich} candidates): {got_rich}"
        );
        // Weight 0 leaves a category out entirely.
        let only = sample(
            all.clone(),
            &Budget {
                seed: 3,
                category_mix: BTreeMap::from([(heavy.clone(), 1.0), (light.clone(), 0.0)]),
                ..Budget::default()
            },
        );
        assert_eq!(only.len(), big[1].1);
        assert!(only.iter().all(|c| c.category == heavy));
    }

    fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args([
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=t",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs")
    }

    #[test]
    fn patches_apply_with_git_and_reproduce_the_buggy_file() {
        // Edits on the first line, in the middle, on the last line without a newline, and
        // removals of the last lines of a file.
        let files: Vec<(&str, String)> = vec![
            ("shop.py", SHOP.to_string()),
            (
                "pkg/first.py",
                "def f(a, b):\n    return a < b\n".to_string(),
            ),
            (
                "pkg/no_newline.py",
                "import os\n\n\ndef g(xs):\n    xs.sort()\n    total = 0\n    return len(xs) > 1"
                    .to_string(),
            ),
            (
                "pkg/tail.py",
                "def h(d, k):\n    d[k] = 1\n    d.pop(k)\n".to_string(),
            ),
            (
                "pkg/crlf.py",
                "def c(a):\r\n    if a == 1:\r\n        return 2\r\n    return 3\r\n".to_string(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        assert!(git(dir.path(), &["init", "-q"]).status.success());
        assert!(git(dir.path(), &["add", "-A"]).status.success());
        assert!(git(dir.path(), &["commit", "-qm", "clean"])
            .status
            .success());

        let rules = python_rules();
        let mut applied = 0;
        let mut at_end = 0;
        for (name, text) in &files {
            let cands = enumerate_source(name, text.as_bytes(), Language::Python, &rules).unwrap();
            assert!(!cands.is_empty(), "{name}");
            for c in &cands {
                let patch = dir.path().join("bug.patch");
                std::fs::write(&patch, &c.bug_patch).unwrap();
                let check = git(dir.path(), &["apply", "--check", "bug.patch"]);
                assert!(
                    check.status.success(),
                    "{name} {}: {}\n{}",
                    c.mutator,
                    String::from_utf8_lossy(&check.stderr),
                    c.bug_patch
                );
                assert!(git(dir.path(), &["apply", "bug.patch"]).status.success());
                let buggy = std::fs::read_to_string(dir.path().join(name)).unwrap();
                assert_eq!(buggy, c.apply(text), "{}\n{}", c.mutator, c.bug_patch);
                assert!(git(dir.path(), &["checkout", "-q", "--", "."])
                    .status
                    .success());
                applied += 1;
                if c.byte_range.1 == text.len()
                    || c.bug_patch.contains("\\ No newline at end of file")
                {
                    at_end += 1;
                }
            }
        }
        assert!(applied > 30, "{applied}");
        assert!(at_end > 0);

        // GNU patch agrees, where it is installed.
        if Command::new("patch").arg("--version").output().is_ok() {
            let (name, text) = &files[2];
            for c in enumerate_source(name, text.as_bytes(), Language::Python, &rules).unwrap() {
                let out = Command::new("patch")
                    .args(["-p1", "--quiet", "--output=-"])
                    .arg(dir.path().join(name))
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .and_then(|mut child| {
                        use std::io::Write;
                        child
                            .stdin
                            .take()
                            .unwrap()
                            .write_all(c.bug_patch.as_bytes())?;
                        child.wait_with_output()
                    })
                    .unwrap();
                assert!(out.status.success(), "{}", c.bug_patch);
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    c.apply(text),
                    "{}",
                    c.bug_patch
                );
            }
        }
    }

    #[test]
    fn a_patch_for_the_only_line_of_a_file() {
        let src = "x = 1";
        let lines = Lines::new(src);
        let patch = unified_patch("one.py", src, &lines, 4, 5, "2");
        assert_eq!(
            patch,
            "diff --git a/one.py b/one.py\n--- a/one.py\n+++ b/one.py\n@@ -1,1 +1,1 @@\n-x = 1\n\\ No newline at end of file\n+x = 2\n\\ No newline at end of file\n"
        );
        let src = "a\nb\n";
        let patch = unified_patch("two.py", src, &Lines::new(src), 0, 4, "");
        assert!(patch.ends_with("@@ -1,2 +0,0 @@\n-a\n-b\n"), "{patch}");
    }

    #[test]
    fn java_without_rules_yields_nothing() {
        let src = "class A { int f(int a) { return a < 1 ? 0 : 1; } }";
        assert!(
            enumerate_source("A.java", src.as_bytes(), Language::Java, &[])
                .unwrap()
                .is_empty()
        );
        // Python rules are ignored for Java files.
        assert!(
            enumerate_source("A.java", src.as_bytes(), Language::Java, &python_rules())
                .unwrap()
                .is_empty()
        );
    }

    const TRICKY_JAVA: &str = r#"package p;

import java.util.*;
import java.util.function.*;

public class Tricky<T extends Comparable<T>> {
    private final Map<String, List<Integer>> index = new HashMap<>();

    @SuppressWarnings("unchecked")
    <U> U cast(Object o) {
        return (U) o;
    }

    int generics(List<? extends Number> xs, int n) {
        List<Map<String, int[]>> deep = new ArrayList<>();
        int a = n < 3 ? n : (n >> 2) + xs.size();
        boolean b = a < n && n > a || a >= (n << 1);
        if (a < n) a++; else if (a > n) --a; else a = -a;
        for (int i = 0, j = n - 1; i < j; i++, j--) {
            a += xs.get(i).intValue() * j % 7;
        }
        label:
        while (true) {
            do {
                a--;
            } while (a > 10);
            if (a < 0) break label;
            continue label;
        }
        return b ? a : -a;
    }

    String switches(Object o, int k) {
        String s = switch (k) {
            case 1, 2 -> "small";
            case 3 -> {
                yield "three";
            }
            default -> throw new IllegalArgumentException("k=" + k);
        };
        switch (k) {
            case 0:
                s += "zero";
                break;
            case 1: {
                s = s.trim();
                break;
            }
            default:
                s = s.isEmpty() ? "e" : s;
        }
        if (o instanceof String str && !str.isEmpty()) {
            return str + s;
        }
        return """
            text %s
            """.formatted(s);
    }

    Runnable anon(final int[] arr) {
        Runnable r = new Runnable() {
            @Override
            public void run() {
                arr[0] = arr[arr.length - 1];
            }
        };
        Function<Integer, Integer> f = x -> x + 1;
        BiFunction<Integer, Integer, Integer> g = (x, y) -> { return x * y; };
        Supplier<List<String>> sup = ArrayList::new;
        try (var in = new java.io.StringReader("x")) {
            in.read();
        } catch (java.io.IOException | RuntimeException e) {
            throw new IllegalStateException(e);
        } finally {
            arr[0]++;
        }
        synchronized (this) {
            assert arr.length > 0 : "empty";
        }
        int[][] grid = new int[3][arr.length];
        char c = 'x';
        long big = 1_000L + 0x1F;
        return f.apply(1) > 1 && g.apply(2, 3).equals(6) ? r : () -> {};
    }

    record Pair(int a, int b) {
        Pair {
            if (a > b) throw new IllegalArgumentException();
        }
        int sum() { return a + b; }
    }

    enum Op {
        ADD { int apply(int a, int b) { return a + b; } };
        abstract int apply(int a, int b);
        static Op of(String s) { return s.equals("+") ? ADD : null; }
    }
}
"#;

    fn java_parses_cleanly(text: &str) -> bool {
        let mut p = Parser::new();
        p.set_language(&Language::Java.grammar()).unwrap();
        !p.parse(text, None).unwrap().root_node().has_error()
    }

    #[test]
    fn the_java_check_agrees_with_full_parses() {
        let breaking = load_str(
            "breaking.yaml",
            r#"
id: java-breaking
language: java
category: logic
description: Puts awkward text where code was.
issue_hints: [broken]
query: |
  [(identifier) (decimal_integer_literal) (binary_expression) (method_invocation) (return_statement) (expression_statement) (block) (if_statement) (ternary_expression) (lambda_expression) (argument_list)] @target
rewrite: {action: replace, text: ["(", "a b", "x ? y : z", "!x", "() -> 0", ";", "1\n", ")", "else", "{", "x = 1", "int x", "a < b > c", "return;", "}", "{}", "(a, b)", "new int[0]", "x -> y", "case 1:"]}
examples:
  - {before: "class A { int f(int a) { return a; } }", after: "class A { int f(int a) { return () -> 0; } }"}
"#,
        )
        .unwrap();
        assert!(java_parses_cleanly(TRICKY_JAVA));
        let mut rules = load_embedded(Language::Java).unwrap();
        rules.push(breaking);
        let active: Vec<&Mutator> = rules.iter().collect();
        let set = RuleSet::of(&active).unwrap();
        let src = TRICKY_JAVA;
        let (mut accepted, mut rejected) = (0, 0);
        with_parser(Language::Java, |parser| {
            let tree = parser.parse(src, None).unwrap();
            let root = tree.root_node();
            let syn = Language::Java.syntax();
            let facts = collect_facts(root, src, syn);
            let edits = collect_edits(root, src, syn, &set, &active, &facts, 0..src.len());
            let lines = Lines::new(src);
            let mut checker = Checker {
                parser,
                src,
                syn,
                lines: &lines,
                tree: &tree,
                scratch: String::new(),
                lang: Language::Java,
            };
            let mut seen = HashSet::new();
            for (ri, e) in &edits {
                let Some(func) = facts.innermost(e.anchor.start_byte(), e.anchor.end_byte()) else {
                    continue;
                };
                let (cs, ce, crep) = canonical(src, e);
                if !seen.insert(*edit_hash("T.java", &[0; 32], cs, ce, crep).as_bytes()) {
                    continue;
                }
                let ours = checker.check(e, func.node_id);
                let buggy = format!("{}{}{}", &src[..e.start], e.text, &src[e.end..]);
                assert_eq!(
                    ours,
                    java_parses_cleanly(&buggy),
                    "{} at line {}: `{}` -> `{}`",
                    active[*ri].id,
                    lines.line_of(e.start) + 1,
                    &src[e.start..e.end],
                    e.text
                );
                if ours {
                    accepted += 1
                } else {
                    rejected += 1
                }
            }
        });
        assert!(
            accepted > 300 && rejected > 300,
            "accepted {accepted}, rejected {rejected}"
        );
        let cands = enumerate_source(
            "src/main/java/p/Tricky.java",
            TRICKY_JAVA.as_bytes(),
            Language::Java,
            &load_embedded(Language::Java).unwrap(),
        )
        .unwrap();
        let functions: HashSet<&str> = cands.iter().map(|c| c.function.as_str()).collect();
        for f in [
            "Tricky.generics",
            "Tricky.switches",
            "Tricky.anon",
            "Tricky.Pair.Pair",
            "Tricky.Pair.sum",
            "Tricky.Op.of",
        ] {
            assert!(functions.contains(f), "no candidate in {f}: {functions:?}");
        }
        assert!(!functions.contains("Tricky.cast") || cands.iter().all(|c| c.line_range.0 != 10));
    }

    const TRICKY: &str = r#"import os


def decorated(f):
    @staticmethod
    def wrapper(*args, **kw):
        return(f(*args, **kw))
    return wrapper


class Tricky(object):
    def method(self, a, b=1, *rest, key=None, **extra):
        if a: return b
        x = 1; y = 2
        total = a + \
            b
        while(self.ready):
            self.ready = not self.ready
        data = [i * 2 for i in range(10) if i % 3 == 0]
        table = {k: v for k, v in extra.items() if v is not None}
        if (n := len(data)) > 10:
            print(n)
        msg = f"{a!r:>10} and {b + 1}"
        value = (lambda q: q + 1)(a) if a else -1
        call(a, b,
             key=key,  # trailing comment
             other=[1, 2,
                    3])
        try:
            os.remove(a)
        except (OSError, ValueError) as exc:
            raise RuntimeError("no") from exc
        except KeyError:
            pass
        else:
            self.count += 1
        finally:
            self.done = True
        match value:
            case [first, *others] if first > 0:
                return first
            case {"k": v}:
                return v
            case _:
                pass
        assert a < b, "a must be below b"
        del data[0:2]
        return x if y else a[1:-1:2]

    async def stream(self, items):
        async with self.lock:
            async for item in items:
                await self.queue.put(item)
        return [x async for x in items]

    def generator(self):
        global counter
        yield from range(3)
        yield 1, 2
        return

def tabs(a):
	if a is not None:
		return a.lower().startswith("x")
	return False
"#;

    #[test]
    fn the_check_agrees_with_full_parses_on_tricky_code() {
        let breaking = load_str(
            "breaking.yaml",
            r#"
id: py-breaking
language: python
category: logic
description: Puts awkward text where expressions were.
issue_hints: [broken]
query: |
  [(identifier) (integer) (comparison_operator) (call) (return_statement) (expression_statement) (elif_clause) (else_clause)] @target
rewrite: {action: replace, text: ["(", "a b", "x if y", "not x", "lambda: 0", "pass", "1\n", ")", "else:", ":", "x:=1", "*x"]}
examples:
  - {before: "def f(a):\n    return a\n", after: "def f(a):\n    return lambda: 0\n"}
"#,
        )
        .unwrap();
        assert!(parses_cleanly(TRICKY));
        let mut rules = python_rules();
        rules.push(breaking);
        let active: Vec<&Mutator> = rules.iter().collect();
        let set = RuleSet::of(&active).unwrap();
        let src = TRICKY;
        let (mut accepted, mut rejected) = (0, 0);
        with_parser(Language::Python, |parser| {
            let tree = parser.parse(src, None).unwrap();
            let root = tree.root_node();
            let syn = Language::Python.syntax();
            let facts = collect_facts(root, src, syn);
            let edits = collect_edits(root, src, syn, &set, &active, &facts, 0..src.len());
            let lines = Lines::new(src);
            let mut checker = Checker {
                parser,
                src,
                syn,
                lines: &lines,
                tree: &tree,
                scratch: String::new(),
                lang: Language::Python,
            };
            let mut seen = HashSet::new();
            for (ri, e) in &edits {
                let Some(func) = facts.innermost(e.anchor.start_byte(), e.anchor.end_byte()) else {
                    continue;
                };
                let (cs, ce, crep) = canonical(src, e);
                if !seen.insert(*edit_hash("t.py", &[0; 32], cs, ce, crep).as_bytes()) {
                    continue;
                }
                let ours = checker.check(e, func.node_id);
                let buggy = format!("{}{}{}", &src[..e.start], e.text, &src[e.end..]);
                assert_eq!(
                    ours,
                    parses_cleanly(&buggy),
                    "{} at line {}: `{}` -> `{}`",
                    active[*ri].id,
                    lines.line_of(e.start) + 1,
                    &src[e.start..e.end],
                    e.text
                );
                if ours {
                    accepted += 1
                } else {
                    rejected += 1
                }
            }
        });
        assert!(
            accepted > 300 && rejected > 300,
            "accepted {accepted}, rejected {rejected}"
        );
        let cands =
            enumerate_source("t.py", TRICKY.as_bytes(), Language::Python, &python_rules()).unwrap();
        let functions: HashSet<&str> = cands.iter().map(|c| c.function.as_str()).collect();
        for f in [
            "decorated",
            "decorated.wrapper",
            "Tricky.method",
            "Tricky.stream",
            "Tricky.generator",
            "tabs",
        ] {
            assert!(functions.contains(f), "no candidate in {f}");
        }
    }
}
