//! Enumeration: every rule's edits over a tree of files (rayon) or one file, kept inside
//! function bodies, without no-ops or duplicates, syntax-checked, made into candidates.

use super::check::Checker;
use super::facts::{collect_facts, Facts};
use super::lines::Lines;
use super::patch::unified_patch;
use super::{Candidate, Enumeration, SkippedFile};
use crate::lang::{Language, Syntax};
use crate::mutator::{Edit, Mutator, RuleSet};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor};

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

thread_local! {
    /// One parser per language per thread (rayon workers reuse theirs across files).
    static PARSERS: RefCell<Vec<(Language, Parser)>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn with_parser<R>(lang: Language, f: impl FnOnce(&mut Parser) -> R) -> R {
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
pub(super) fn collect_edits<'t>(
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
pub(super) fn canonical<'e>(src: &str, e: &'e Edit<'_>) -> (usize, usize, &'e [u8]) {
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
pub(super) fn edit_hash(
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
