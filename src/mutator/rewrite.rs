//! Rewrites: a rule's compiled action, and the edits it makes to the nodes a match captures.

use super::rule_set::Captures;
use crate::lang::Syntax;
use std::collections::HashMap;
use tree_sitter::Node;

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
// Compiled rewrites.

pub(super) enum Rewrite {
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

pub(super) enum Replacement {
    Texts(Vec<String>),
    Map(HashMap<String, Vec<String>>),
}

pub(super) enum Piece {
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
    pub(super) fn edits<'t>(
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
pub(super) fn unglue(src: &str, e: &mut Edit<'_>) {
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
