//! The syntax check: whether a file with one edit applied still parses, decided on the
//! smallest piece of the file that can tell.
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

use super::lines::Lines;
use crate::lang::{Language, Region, Syntax};
use crate::mutator::Edit;
use std::cell::RefCell;
use std::collections::HashMap;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

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

pub(super) struct Checker<'a> {
    pub(super) parser: &'a mut Parser,
    /// The language, part of every cached piece's key (pieces of two languages can be equal).
    pub(super) lang: Language,
    pub(super) src: &'a str,
    pub(super) syn: &'a dyn Syntax,
    pub(super) lines: &'a Lines,
    pub(super) tree: &'a Tree,
    pub(super) scratch: String,
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
    pub(super) fn check(&mut self, e: &Edit<'_>, func: usize) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::enumerate::{canonical, collect_edits, edit_hash, with_parser};
    use crate::candidate::enumerate_source;
    use crate::candidate::facts::collect_facts;
    use crate::candidate::tests::{parses_cleanly, python_rules};
    use crate::mutator::{load_embedded, load_str, Mutator, RuleSet};
    use std::collections::HashSet;

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
