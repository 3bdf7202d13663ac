//! Facts: what a file holds that decides where edits may go (functions with their qualified
//! names and bodies, docstrings, script-only code, excluded subtrees).

use crate::lang::Syntax;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

pub(super) struct Function {
    pub(super) name: String,
    pub(super) lines: (usize, usize),
    pub(super) node_id: usize,
    pub(super) body: (usize, usize),
}

#[derive(Default)]
pub(super) struct Facts {
    /// Sorted by body start.
    pub(super) functions: Vec<Function>,
    /// Byte ranges no edit may touch: docstrings, script-only code.
    pub(super) excluded: Vec<(usize, usize)>,
}

impl Facts {
    /// The innermost function whose body holds `start..end`.
    pub(super) fn innermost(&self, start: usize, end: usize) -> Option<&Function> {
        let upto = self.functions.partition_point(|f| f.body.0 <= start);
        self.functions[..upto]
            .iter()
            .rev()
            .find(|f| end <= f.body.1)
    }

    pub(super) fn is_excluded(&self, start: usize, end: usize) -> bool {
        let end = end.max(start + 1);
        self.excluded.iter().any(|(s, e)| start < *e && *s < end)
    }
}

pub(super) fn collect_facts(root: Node<'_>, src: &str, syn: &dyn Syntax) -> Facts {
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
