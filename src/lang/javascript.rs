//! JavaScript and TypeScript specifics: which files are tests (jest, mocha and node's test
//! runner conventions), which nodes are functions, how a piece of a tree is re-parsed alone.
//! One syntax serves both grammars: TypeScript's trees use JavaScript's node kinds, plus its
//! own for types, which no rule touches.

use super::{Region, Syntax};
use tree_sitter::Node;

/// Whether a repository-relative path is a test file: under `test/`, `tests/` or
/// `__tests__/`, or named `*.test.js`, `*.spec.ts`, `test-*.js` and the like.
pub fn is_test_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    let stem = file.split('.').next().unwrap_or(file);
    let middle: Vec<&str> = file.split('.').skip(1).collect();
    if middle.len() >= 2 && matches!(middle[middle.len() - 2], "test" | "spec") {
        return true;
    }
    if stem.starts_with("test-") || stem.starts_with("test_") || stem == "test" {
        return true;
    }
    parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "__tests__" | "__mocks__" | "spec"))
}

/// Whether a path is a TypeScript declaration file (`*.d.ts`): types only, nothing to mutate.
pub fn is_declaration_file(rel: &str) -> bool {
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|s| rel.ends_with(s))
}

/// Statement kinds that stand alone in a block (declarations of functions and classes are
/// left out: a rule never removes them).
const STATEMENTS: &[&str] = &[
    "expression_statement",
    "variable_declaration",
    "lexical_declaration",
    "if_statement",
    "switch_statement",
    "for_statement",
    "for_in_statement",
    "while_statement",
    "do_statement",
    "try_statement",
    "break_statement",
    "continue_statement",
    "return_statement",
    "throw_statement",
    "labeled_statement",
];

/// Nodes whose statement children are a plain sequence of statements.
const STATEMENT_PARENTS: &[&str] = &[
    "statement_block",
    "program",
    "switch_case",
    "switch_default",
];

/// Expression kinds that parse alone as the same kind (as an expression statement). Object
/// literals (a block when alone), function and class expressions (a declaration when alone)
/// are left out: the check moves to the statement around them.
const EXPRESSIONS: &[&str] = &[
    "assignment_expression",
    "augmented_assignment_expression",
    "binary_expression",
    "unary_expression",
    "update_expression",
    "ternary_expression",
    "call_expression",
    "member_expression",
    "subscript_expression",
    "parenthesized_expression",
    "new_expression",
    "await_expression",
    "arrow_function",
    "identifier",
    "number",
    "string",
    "template_string",
    "true",
    "false",
    "null",
    "undefined",
    "this",
    "array",
    "regex",
    // TypeScript
    "as_expression",
    "non_null_expression",
    "satisfies_expression",
];

/// Parents whose expression children all sit in slots that take any expression.
const ANY_EXPRESSION_PARENTS: &[&str] = &[
    "arguments",
    "parenthesized_expression",
    "expression_statement",
    "return_statement",
    "throw_statement",
    "array",
    "template_substitution",
];

/// Parents with one field that takes any expression.
const ANY_EXPRESSION_FIELDS: &[(&str, &str)] = &[
    ("variable_declarator", "value"),
    ("assignment_expression", "right"),
    ("augmented_assignment_expression", "right"),
    ("subscript_expression", "index"),
    ("pair", "value"),
    ("ternary_expression", "consequence"),
    ("ternary_expression", "alternative"),
];

/// The function a `const name = (…) => …` or `const name = function (…) {…}` declarator
/// holds: its name and body.
fn declared_function<'t>(node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let name = node.child_by_field_name("name")?;
    if name.kind() != "identifier" {
        return None; // a destructuring pattern
    }
    let value = node.child_by_field_name("value")?;
    match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            Some((name, value.child_by_field_name("body")?))
        }
        _ => None,
    }
}

/// The syntax facts of tree-sitter-javascript and tree-sitter-typescript. Edits are checked on
/// the smallest statement or expression around them that parses alone (`expr;`), like Java's.
pub struct JavaScriptSyntax;

impl Syntax for JavaScriptSyntax {
    fn function_parts<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        match node.kind() {
            "function_declaration" | "generator_function_declaration" | "method_definition" => {
                Some((
                    node.child_by_field_name("name")?,
                    node.child_by_field_name("body")?,
                ))
            }
            "variable_declarator" => declared_function(node),
            // `exports.name = function (…) {…}` / `Foo.prototype.name = (…) => …`
            "assignment_expression" => {
                let left = node.child_by_field_name("left")?;
                let name = match left.kind() {
                    "member_expression" => left.child_by_field_name("property")?,
                    "identifier" => left,
                    _ => return None,
                };
                let value = node.child_by_field_name("right")?;
                match value.kind() {
                    "arrow_function" | "function_expression" | "function" => {
                        Some((name, value.child_by_field_name("body")?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn scope_name<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        match node.kind() {
            "class_declaration" | "abstract_class_declaration" | "class" => {
                node.child_by_field_name("name")
            }
            _ => None,
        }
    }

    fn may_contain_definitions(&self, kind: &str) -> bool {
        matches!(
            kind,
            "program"
                | "export_statement"
                | "lexical_declaration"
                | "variable_declaration"
                | "expression_statement"
                | "class_body"
                | "statement_block"
                // TypeScript
                | "internal_module"
                | "module"
        )
    }

    fn is_docstring(&self, _node: Node<'_>) -> bool {
        false
    }

    fn is_script_guard(&self, node: Node<'_>, src: &[u8]) -> bool {
        // `if (require.main === module) { … }`: runs only when the file is the script.
        node.kind() == "if_statement"
            && node.child_by_field_name("condition").is_some_and(|c| {
                let text = String::from_utf8_lossy(&src[c.byte_range()]);
                text.contains("require.main") && text.contains("module")
            })
    }

    fn block_kind(&self) -> &'static str {
        "statement_block"
    }

    fn empty_block_filler(&self) -> Option<&'static str> {
        None
    }

    fn is_comment(&self, kind: &str) -> bool {
        kind == "comment"
    }

    fn negate(&self, node: Node<'_>, src: &[u8]) -> String {
        let text = |n: Node<'_>| String::from_utf8_lossy(&src[n.byte_range()]).into_owned();
        if node.kind() == "unary_expression"
            && node
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "!")
        {
            if let Some(arg) = node.child_by_field_name("argument") {
                return text(arg);
            }
        }
        if node.kind() == "parenthesized_expression" {
            // An `if`'s condition keeps its parentheses: `if (!(x < y))`.
            if let Some(inner) = node
                .named_child(0)
                .filter(|_| node.named_child_count() == 1)
            {
                return format!("({})", self.negate(inner, src));
            }
        }
        match node.kind() {
            "identifier"
            | "call_expression"
            | "member_expression"
            | "subscript_expression"
            | "true"
            | "false"
            | "this" => format!("!{}", text(node)),
            _ => format!("!({})", text(node)),
        }
    }

    fn shift_integer(&self, text: &str, delta: i64) -> Option<String> {
        let (body, suffix) = match text.strip_suffix('n') {
            Some(b) => (b, "n"),
            None => (text, ""),
        };
        let digits: String = body.chars().filter(|c| *c != '_').collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return None; // legacy octal
        }
        let value: i128 = digits.parse().ok()?;
        let shifted = value.checked_add(i128::from(delta))?;
        (shifted >= 0).then(|| format!("{shifted}{suffix}"))
    }

    fn expression_suffix(&self) -> &'static str {
        ";"
    }

    fn needs_parens(&self, node: Node<'_>) -> bool {
        let Some(parent) = node.parent() else {
            return false;
        };
        match parent.kind() {
            "unary_expression"
            | "member_expression"
            | "call_expression"
            | "subscript_expression"
            | "update_expression"
            | "await_expression"
            | "new_expression" => true,
            "binary_expression" => !parent
                .child_by_field_name("operator")
                .is_some_and(|o| matches!(o.kind(), "&&" | "||" | "??")),
            _ => false,
        }
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
        STATEMENTS.contains(&kind)
    }

    fn operator_context(&self, parent_kind: &str) -> Option<(&'static str, &'static str)> {
        match parent_kind {
            "binary_expression" | "augmented_assignment_expression" => Some(("x ", " x")),
            "update_expression" => Some(("x", "")),
            "unary_expression" => Some(("", "x")),
            _ => None,
        }
    }

    fn is_optional_clause(&self, kind: &str, parent_kind: &str) -> bool {
        // A statement of a `case` is one element of a repetition that may be empty.
        matches!(parent_kind, "switch_case" | "switch_default") && STATEMENTS.contains(&kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_follow_jest_mocha_and_node_conventions() {
        for t in [
            "test/index.js",
            "tests/shelf.test.js",
            "src/__tests__/shelf.js",
            "src/shelf.test.ts",
            "lib/shelf.spec.mjs",
            "test-shelf.js",
        ] {
            assert!(is_test_path(t), "{t}");
        }
        for s in [
            "src/shelf.js",
            "lib/testing-utils.js",
            "index.ts",
            "src/contest.js",
        ] {
            assert!(!is_test_path(s), "{s}");
        }
        assert!(is_declaration_file("types/index.d.ts"));
        assert!(!is_declaration_file("src/index.ts"));
    }

    #[test]
    fn integers_shift_like_they_are_written() {
        let s = JavaScriptSyntax;
        assert_eq!(s.shift_integer("10", 1).as_deref(), Some("11"));
        assert_eq!(s.shift_integer("1_000", -1).as_deref(), Some("999"));
        assert_eq!(s.shift_integer("7n", 1).as_deref(), Some("8n"));
        assert_eq!(s.shift_integer("0x10", 1), None);
        assert_eq!(s.shift_integer("1.5", 1), None);
        assert_eq!(s.shift_integer("0", -1), None);
    }
}
