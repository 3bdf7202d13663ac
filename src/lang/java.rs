//! Java specifics: which files are tests (Maven layout), which nodes are methods.

use super::Syntax;
use tree_sitter::Node;

/// Whether a repository-relative path is a Java test source (Maven `src/test/`, or a
/// class named `*Test`/`Test*`/`*Tests`).
pub fn is_test_path(rel: &str) -> bool {
    if rel.contains("src/test/") || rel.starts_with("test/") {
        return true;
    }
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let stem = file.strip_suffix(".java").unwrap_or(file);
    stem.ends_with("Test") || stem.ends_with("Tests") || stem.starts_with("Test")
}

/// The syntax facts of tree-sitter-java. Java edits are checked by re-parsing the whole
/// file (no local regions yet).
pub struct JavaSyntax;

impl Syntax for JavaSyntax {
    fn function_parts<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        match node.kind() {
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration" => Some((
                node.child_by_field_name("name")?,
                node.child_by_field_name("body")?,
            )),
            _ => None,
        }
    }

    fn scope_name<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        match node.kind() {
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration" => node.child_by_field_name("name"),
            _ => None,
        }
    }

    fn may_contain_definitions(&self, kind: &str) -> bool {
        matches!(
            kind,
            "program"
                | "class_declaration"
                | "class_body"
                | "interface_declaration"
                | "interface_body"
                | "enum_declaration"
                | "enum_body"
                | "enum_body_declarations"
                | "record_declaration"
                | "annotation_type_declaration"
                | "annotation_type_body"
                | "method_declaration"
                | "constructor_declaration"
                | "compact_constructor_declaration"
                | "constructor_body"
                | "block"
                | "local_class_declaration"
        )
    }

    fn is_docstring(&self, _node: Node<'_>) -> bool {
        false
    }

    fn is_script_guard(&self, _node: Node<'_>, _src: &[u8]) -> bool {
        false
    }

    fn block_kind(&self) -> &'static str {
        "block"
    }

    fn empty_block_filler(&self) -> Option<&'static str> {
        None
    }

    fn is_comment(&self, kind: &str) -> bool {
        matches!(kind, "line_comment" | "block_comment")
    }

    fn negate(&self, node: Node<'_>, src: &[u8]) -> String {
        let text = |n: Node<'_>| String::from_utf8_lossy(&src[n.byte_range()]).into_owned();
        if node.kind() == "unary_expression"
            && node
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "!")
        {
            if let Some(operand) = node.child_by_field_name("operand") {
                return text(operand);
            }
        }
        match node.kind() {
            "identifier"
            | "method_invocation"
            | "field_access"
            | "array_access"
            | "parenthesized_expression"
            | "true"
            | "false" => format!("!{}", text(node)),
            _ => format!("!({})", text(node)),
        }
    }

    fn shift_integer(&self, text: &str, delta: i64) -> Option<String> {
        let (body, suffix) = match text.strip_suffix(['l', 'L']) {
            Some(b) => (b, &text[b.len()..]),
            None => (text, ""),
        };
        let digits: String = body.chars().filter(|c| *c != '_').collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return None; // octal
        }
        let value: i128 = digits.parse().ok()?;
        let shifted = value.checked_add(i128::from(delta))?;
        (shifted >= 0).then(|| format!("{shifted}{suffix}"))
    }
}
