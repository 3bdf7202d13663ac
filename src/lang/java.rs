//! Java specifics: which files are tests (Maven layout), which nodes are methods.

use super::{Region, Syntax};
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

/// Statement kinds (the grammar's `statement` supertype, less the bare `;` and `block`, whose
/// braces the engine's line removal does not handle alone).
const STATEMENTS: &[&str] = &[
    "assert_statement",
    "break_statement",
    "continue_statement",
    "do_statement",
    "enhanced_for_statement",
    "expression_statement",
    "for_statement",
    "if_statement",
    "labeled_statement",
    "local_variable_declaration",
    "return_statement",
    "synchronized_statement",
    "throw_statement",
    "try_statement",
    "try_with_resources_statement",
    "while_statement",
    "yield_statement",
];

/// Nodes whose statement children are a plain sequence of statements.
const STATEMENT_PARENTS: &[&str] = &[
    "block",
    "constructor_body",
    "switch_block_statement_group",
    "program",
];

/// Expression kinds (the grammar's `expression` and `primary_expression` supertypes, with the
/// literals). `switch_expression` is left out: alone it parses as a statement.
const EXPRESSIONS: &[&str] = &[
    "assignment_expression",
    "binary_expression",
    "cast_expression",
    "instanceof_expression",
    "lambda_expression",
    "ternary_expression",
    "unary_expression",
    "update_expression",
    "array_access",
    "array_creation_expression",
    "class_literal",
    "field_access",
    "identifier",
    "method_invocation",
    "method_reference",
    "object_creation_expression",
    "parenthesized_expression",
    "this",
    "decimal_integer_literal",
    "hex_integer_literal",
    "octal_integer_literal",
    "binary_integer_literal",
    "decimal_floating_point_literal",
    "hex_floating_point_literal",
    "true",
    "false",
    "character_literal",
    "string_literal",
    "text_block",
    "null_literal",
];

/// Parents whose expression children (all of them) sit in slots that take any expression.
const ANY_EXPRESSION_PARENTS: &[&str] = &[
    "argument_list",
    "parenthesized_expression",
    "expression_statement",
    "return_statement",
    "throw_statement",
    "yield_statement",
    "array_initializer",
];

/// Parents with one field that takes any expression.
const ANY_EXPRESSION_FIELDS: &[(&str, &str)] = &[
    ("variable_declarator", "value"),
    ("assignment_expression", "right"),
    ("array_access", "index"),
    ("lambda_expression", "body"),
];

/// The syntax facts of tree-sitter-java. Edits are checked on the smallest statement or
/// expression around them that parses alone (`expr;` for an expression), like Python's.
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
    fn expression_suffix(&self) -> &'static str {
        ";"
    }

    fn return_type_class(&self, node: Node<'_>) -> Option<&'static str> {
        let mut node = node;
        loop {
            node = node.parent()?;
            match node.kind() {
                "method_declaration" => break,
                "lambda_expression"
                | "constructor_declaration"
                | "compact_constructor_declaration"
                | "class_body"
                | "static_initializer"
                | "program" => return None,
                _ => {}
            }
        }
        if node.child_by_field_name("dimensions").is_some() {
            return Some("reference"); // `int f()[]`
        }
        Some(match node.child_by_field_name("type")?.kind() {
            "void_type" => "void",
            "boolean_type" => "boolean",
            "integral_type" | "floating_point_type" => "numeric",
            "type_identifier" | "scoped_type_identifier" | "generic_type" | "array_type" => {
                "reference"
            }
            _ => return None,
        })
    }

    fn needs_parens(&self, node: Node<'_>) -> bool {
        let Some(parent) = node.parent() else {
            return false;
        };
        match parent.kind() {
            "unary_expression"
            | "cast_expression"
            | "field_access"
            | "method_invocation"
            | "array_access"
            | "instanceof_expression"
            | "update_expression" => true,
            "binary_expression" => !parent
                .child_by_field_name("operator")
                .is_some_and(|o| matches!(o.kind(), "&&" | "||")),
            _ => false,
        }
    }

    fn is_excluded_subtree(&self, kind: &str) -> bool {
        matches!(kind, "annotation" | "marker_annotation")
    }

    fn excluded_subtree_marker(&self) -> Option<u8> {
        Some(b'@')
    }

    fn region(&self, node: Node<'_>, parent: Option<Node<'_>>) -> Option<Region> {
        let parent = parent?;
        let kind = node.kind();
        if STATEMENTS.contains(&kind) {
            return STATEMENT_PARENTS
                .contains(&parent.kind())
                .then_some(Region::Statement);
        }
        super::expression_region(
            node,
            parent,
            EXPRESSIONS,
            ANY_EXPRESSION_PARENTS,
            ANY_EXPRESSION_FIELDS,
        )
    }

    fn is_expression(&self, kind: &str) -> bool {
        EXPRESSIONS.contains(&kind)
    }

    fn is_simple_statement(&self, kind: &str) -> bool {
        // Java does not care where a statement starts: any statement stands anywhere.
        STATEMENTS.contains(&kind)
    }

    fn operator_context(&self, parent_kind: &str) -> Option<(&'static str, &'static str)> {
        match parent_kind {
            "binary_expression" | "assignment_expression" => Some(("x ", " x")),
            // `x` before the operator makes a postfix update; `++`/`--` are both prefix and
            // postfix operators, so the check holds for either position.
            "update_expression" => Some(("x", "")),
            "unary_expression" => Some(("", "x")),
            _ => None,
        }
    }

    fn is_optional_clause(&self, kind: &str, parent_kind: &str) -> bool {
        // A statement of a `case` group or a constructor body is one element of a repetition
        // that may be empty; blocks are handled by the engine.
        matches!(
            parent_kind,
            "switch_block_statement_group" | "constructor_body"
        ) && STATEMENTS.contains(&kind)
    }
}
