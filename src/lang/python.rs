//! Python specifics: which files are tests, which nodes are functions, how a piece of a
//! Python tree is re-parsed on its own.

use super::{Region, Syntax};
use tree_sitter::Node;

/// Whether a repository-relative path (with `/` separators) is a Python test file or lives
/// in a test directory (pytest's conventions plus `conftest.py`).
pub fn is_test_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    if file == "conftest.py" || file.starts_with("test_") || file.ends_with("_test.py") {
        return true;
    }
    parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "testing"))
}

/// The syntax facts of tree-sitter-python.
pub struct PythonSyntax;

/// Every node kind that is an `expression` (the grammar's supertype, with its
/// `primary_expression` members), less `list_splat`: that name covers two grammar symbols
/// (`*name` at statement level, `*expression` in an argument list), so a piece parsed alone
/// does not tell what its slot takes.
const EXPRESSIONS: &[&str] = &[
    "comparison_operator",
    "not_operator",
    "boolean_operator",
    "lambda",
    "conditional_expression",
    "named_expression",
    "as_pattern",
    "await",
    "binary_operator",
    "identifier",
    "keyword_identifier",
    "string",
    "concatenated_string",
    "integer",
    "float",
    "true",
    "false",
    "none",
    "unary_operator",
    "attribute",
    "subscript",
    "call",
    "list",
    "list_comprehension",
    "dictionary",
    "dictionary_comprehension",
    "set",
    "set_comprehension",
    "tuple",
    "parenthesized_expression",
    "generator_expression",
    "ellipsis",
];

/// Expressions that bind tighter than any operator: `not` can prefix them without parentheses.
const ATOMS: &[&str] = &[
    "identifier",
    "string",
    "concatenated_string",
    "integer",
    "float",
    "true",
    "false",
    "none",
    "attribute",
    "subscript",
    "call",
    "list",
    "list_comprehension",
    "dictionary",
    "dictionary_comprehension",
    "set",
    "set_comprehension",
    "tuple",
    "parenthesized_expression",
    "generator_expression",
];

const SIMPLE_STATEMENTS: &[&str] = &[
    "future_import_statement",
    "import_statement",
    "import_from_statement",
    "print_statement",
    "assert_statement",
    "expression_statement",
    "return_statement",
    "delete_statement",
    "raise_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "global_statement",
    "nonlocal_statement",
    "exec_statement",
    "type_alias_statement",
];

const COMPOUND_STATEMENTS: &[&str] = &[
    "if_statement",
    "for_statement",
    "while_statement",
    "try_statement",
    "with_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
    "match_statement",
];

/// Parents whose expression children (all of them) sit in slots that take any expression.
const ANY_EXPRESSION_PARENTS: &[&str] = &[
    "not_operator",
    "boolean_operator",
    "conditional_expression",
    "argument_list",
    "return_statement",
    "expression_statement",
    "parenthesized_expression",
    "pair",
    "list",
    "tuple",
    "set",
    "assert_statement",
    "if_clause",
    "slice",
    "yield",
    "raise_statement",
    "with_item",
    "expression_list",
];

/// Parents with one field that takes any expression (the other children are restricted:
/// assignment targets, keyword names...).
const ANY_EXPRESSION_FIELDS: &[(&str, &str)] = &[
    ("if_statement", "condition"),
    ("elif_clause", "condition"),
    ("while_statement", "condition"),
    ("keyword_argument", "value"),
    ("assignment", "right"),
    ("augmented_assignment", "right"),
    ("for_statement", "right"),
    ("for_in_clause", "right"),
    ("except_clause", "value"),
    ("lambda", "body"),
    ("subscript", "subscript"),
    ("list_comprehension", "body"),
    ("set_comprehension", "body"),
    ("generator_expression", "body"),
    ("named_expression", "value"),
    ("default_parameter", "value"),
    ("typed_default_parameter", "value"),
];

impl Syntax for PythonSyntax {
    fn function_parts<'t>(&self, node: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        if node.kind() != "function_definition" {
            return None;
        }
        Some((
            node.child_by_field_name("name")?,
            node.child_by_field_name("body")?,
        ))
    }

    fn scope_name<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        (node.kind() == "class_definition")
            .then(|| node.child_by_field_name("name"))
            .flatten()
    }

    fn may_contain_definitions(&self, kind: &str) -> bool {
        matches!(
            kind,
            "module"
                | "block"
                | "class_definition"
                | "function_definition"
                | "decorated_definition"
                | "if_statement"
                | "elif_clause"
                | "else_clause"
                | "for_statement"
                | "while_statement"
                | "try_statement"
                | "except_clause"
                | "except_group_clause"
                | "finally_clause"
                | "with_statement"
                | "match_statement"
                | "case_clause"
        )
    }

    fn is_docstring(&self, node: Node<'_>) -> bool {
        node.kind() == "expression_statement"
            && node.named_child_count() == 1
            && node
                .named_child(0)
                .is_some_and(|c| matches!(c.kind(), "string" | "concatenated_string"))
    }

    fn is_script_guard(&self, node: Node<'_>, src: &[u8]) -> bool {
        if node.kind() != "if_statement" {
            return false;
        }
        let Some(cond) = node.child_by_field_name("condition") else {
            return false;
        };
        if cond.kind() != "comparison_operator" {
            return false;
        }
        let text: String = String::from_utf8_lossy(&src[cond.byte_range()])
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '\'' { '"' } else { c })
            .collect();
        text == "__name__==\"__main__\"" || text == "\"__main__\"==__name__"
    }

    fn block_kind(&self) -> &'static str {
        "block"
    }

    fn empty_block_filler(&self) -> Option<&'static str> {
        Some("pass")
    }

    fn is_comment(&self, kind: &str) -> bool {
        kind == "comment"
    }

    fn negate(&self, node: Node<'_>, src: &[u8]) -> String {
        let text = |n: Node<'_>| String::from_utf8_lossy(&src[n.byte_range()]).into_owned();
        if node.kind() == "not_operator" {
            if let Some(arg) = node.child_by_field_name("argument") {
                return text(arg);
            }
        }
        if ATOMS.contains(&node.kind()) {
            format!("not {}", text(node))
        } else {
            format!("not ({})", text(node))
        }
    }

    fn shift_integer(&self, text: &str, delta: i64) -> Option<String> {
        let digits: String = text.chars().filter(|c| *c != '_').collect();
        let lower = digits.to_ascii_lowercase();
        let (radix, body, prefix) = if let Some(rest) = lower.strip_prefix("0x") {
            (16, rest.to_string(), &text[..2])
        } else if let Some(rest) = lower.strip_prefix("0o") {
            (8, rest.to_string(), &text[..2])
        } else if let Some(rest) = lower.strip_prefix("0b") {
            (2, rest.to_string(), &text[..2])
        } else {
            (10, lower.clone(), "")
        };
        if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let value = u128::from_str_radix(&body, radix).ok()?;
        let shifted = i128::try_from(value).ok()?.checked_add(i128::from(delta))?;
        if shifted < 0 {
            return None;
        }
        let shifted = shifted as u128;
        let upper = digits.chars().skip(2).any(|c| c.is_ascii_uppercase());
        Some(match radix {
            16 if upper => format!("{prefix}{shifted:X}"),
            16 => format!("{prefix}{shifted:x}"),
            8 => format!("{prefix}{shifted:o}"),
            2 => format!("{prefix}{shifted:b}"),
            _ => shifted.to_string(),
        })
    }

    fn region(&self, node: Node<'_>, parent: Option<Node<'_>>) -> Option<Region> {
        let parent = parent?;
        let kind = node.kind();
        if SIMPLE_STATEMENTS.contains(&kind) || COMPOUND_STATEMENTS.contains(&kind) {
            return matches!(parent.kind(), "block" | "module").then_some(Region::Statement);
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
        SIMPLE_STATEMENTS.contains(&kind)
    }

    fn operator_context(&self, parent_kind: &str) -> Option<(&'static str, &'static str)> {
        matches!(
            parent_kind,
            "binary_operator" | "comparison_operator" | "boolean_operator" | "augmented_assignment"
        )
        .then_some(("x ", " x"))
    }

    fn is_optional_clause(&self, kind: &str, parent_kind: &str) -> bool {
        matches!(
            (kind, parent_kind),
            ("elif_clause", "if_statement")
                | (
                    "else_clause",
                    "if_statement" | "for_statement" | "while_statement"
                )
        )
    }

    fn indent_wrapper(&self) -> Option<&'static str> {
        Some("if 1:\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_test_files() {
        assert!(is_test_path("tests/test_a.py"));
        assert!(is_test_path("pkg/tests/helpers.py"));
        assert!(is_test_path("pkg/a_test.py"));
        assert!(is_test_path("conftest.py"));
        assert!(!is_test_path("pkg/testing_utils.py"));
        assert!(!is_test_path("src/pkg/core.py"));
    }

    #[test]
    fn shifts_integers_in_their_own_base() {
        let s = PythonSyntax;
        assert_eq!(s.shift_integer("9", 1).as_deref(), Some("10"));
        assert_eq!(s.shift_integer("1_000", -1).as_deref(), Some("999"));
        assert_eq!(s.shift_integer("0xFF", 1).as_deref(), Some("0x100"));
        assert_eq!(s.shift_integer("0o7", 1).as_deref(), Some("0o10"));
        assert_eq!(s.shift_integer("0b1", 1).as_deref(), Some("0b10"));
        assert_eq!(s.shift_integer("0", -1), None);
        assert_eq!(s.shift_integer("1j", 1), None);
    }

    fn parse(src: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&crate::lang::Language::Python.grammar())
            .unwrap();
        p.parse(src, None).unwrap()
    }

    #[test]
    fn negates_and_unwraps() {
        let src = "if not ok:\n    pass\nif a and b:\n    pass\nif x.y:\n    pass\n";
        let tree = parse(src);
        let conds: Vec<String> = (0..3)
            .map(|i| {
                let stmt = tree.root_node().named_child(i).unwrap();
                PythonSyntax.negate(
                    stmt.child_by_field_name("condition").unwrap(),
                    src.as_bytes(),
                )
            })
            .collect();
        assert_eq!(conds, ["ok", "not (a and b)", "not x.y"]);
    }

    #[test]
    fn recognises_script_guards() {
        let src = "if __name__ == '__main__':\n    main()\nif x == '__main__':\n    pass\n";
        let tree = parse(src);
        let root = tree.root_node();
        assert!(PythonSyntax.is_script_guard(root.named_child(0).unwrap(), src.as_bytes()));
        assert!(!PythonSyntax.is_script_guard(root.named_child(1).unwrap(), src.as_bytes()));
    }
}
