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

    fn declared_type(&self, node: Node<'_>, src: &str) -> Option<String> {
        let text = |n: Node<'_>| src.get(n.byte_range()).unwrap_or("");
        match node.kind() {
            "decimal_integer_literal"
            | "hex_integer_literal"
            | "octal_integer_literal"
            | "binary_integer_literal" => Some(
                if text(node).ends_with(['l', 'L']) {
                    "long"
                } else {
                    "int"
                }
                .into(),
            ),
            "decimal_floating_point_literal" | "hex_floating_point_literal" => Some(
                if text(node).ends_with(['f', 'F']) {
                    "float"
                } else {
                    "double"
                }
                .into(),
            ),
            "string_literal" | "text_block" => Some("String".into()),
            "character_literal" => Some("char".into()),
            "true" | "false" => Some("boolean".into()),
            "parenthesized_expression" => self.declared_type(node.named_child(0)?, src),
            "array_access" => {
                let array = self.declared_type(node.child_by_field_name("array")?, src)?;
                array.strip_suffix("[]").map(str::to_string)
            }
            "unary_expression" => {
                let operand = node.child_by_field_name("operand")?;
                match node.child_by_field_name("operator")?.kind() {
                    "!" => Some("boolean".into()),
                    _ => self.declared_type(operand, src),
                }
            }
            "binary_expression" => {
                let op = node.child_by_field_name("operator")?.kind();
                if matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=" | "&&" | "||") {
                    return Some("boolean".into());
                }
                let left = self.declared_type(node.child_by_field_name("left")?, src);
                let right = self.declared_type(node.child_by_field_name("right")?, src);
                if op == "+"
                    && (left.as_deref() == Some("String") || right.as_deref() == Some("String"))
                {
                    return Some("String".into());
                }
                // Binary numeric promotion of two known primitive operands.
                const WIDER: &[&str] = &["double", "float", "long", "int"];
                let (left, right) = (left?, right?);
                let rank = |t: &str| match t {
                    "byte" | "short" | "char" | "int" => Some(3),
                    t => WIDER.iter().position(|w| *w == t),
                };
                let (l, r) = (rank(&left)?, rank(&right)?);
                Some(WIDER[l.min(r)].to_string())
            }
            "identifier" => declared_name_type(node, text(node), src),
            "field_access" => {
                let object = node.child_by_field_name("object")?;
                let field = node.child_by_field_name("field")?;
                if object.kind() == "this" {
                    return field_type(enclosing(node, "class_body")?, text(field), src);
                }
                // An array's `length`.
                (text(field) == "length" && self.declared_type(object, src)?.ends_with("[]"))
                    .then(|| "int".to_string())
            }
            _ => None,
        }
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

/// The nearest ancestor of `node` of kind `kind`.
fn enclosing<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut n = node.parent()?;
    loop {
        if n.kind() == kind {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// A declaration's type as the source spells it, whitespace removed, with the declarator's
/// array dimensions (`int x[]`); `None` for `var`.
fn spelled_type(ty: Node<'_>, declarator: Option<Node<'_>>, src: &str) -> Option<String> {
    let mut t: String = src.get(ty.byte_range())?.split_whitespace().collect();
    if let Some(dims) = declarator.and_then(|d| d.child_by_field_name("dimensions")) {
        t.extend(src.get(dims.byte_range())?.split_whitespace());
    }
    (t != "var" && !t.is_empty()).then_some(t)
}

/// The type of `name` where `decl` (a local variable or field declaration) declares it.
fn declarator_type(decl: Node<'_>, name: &str, src: &str) -> Option<Option<String>> {
    let ty = decl.child_by_field_name("type")?;
    let mut cursor = decl.walk();
    let found = decl
        .children_by_field_name("declarator", &mut cursor)
        .find(|d| {
            d.child_by_field_name("name")
                .is_some_and(|n| src.get(n.byte_range()) == Some(name))
        });
    found.map(|d| spelled_type(ty, Some(d), src))
}

/// The type of the field `name` declared in `body` (a class body).
fn field_type(body: Node<'_>, name: &str, src: &str) -> Option<String> {
    let mut cursor = body.walk();
    let fields: Vec<Node<'_>> = body
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "field_declaration")
        .collect();
    fields
        .into_iter()
        .find_map(|f| declarator_type(f, name, src))
        .flatten()
}

/// The declared type of the variable `name` used at `at`: the nearest declaration in scope
/// (a local variable declared before it in an enclosing block, a parameter of an enclosing
/// method, constructor, lambda or catch clause, a for-each or resource variable, a field of
/// an enclosing class). `None` when the nearest one gives no type (`var`, a lambda's inferred
/// parameter) or none is found.
fn declared_name_type(at: Node<'_>, name: &str, src: &str) -> Option<String> {
    let is_name = |n: Option<Node<'_>>| n.is_some_and(|n| src.get(n.byte_range()) == Some(name));
    let mut child = at;
    let mut node = at.parent()?;
    loop {
        match node.kind() {
            "block" | "constructor_body" | "switch_block_statement_group" | "program" => {
                let mut cursor = node.walk();
                let before: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .take_while(|c| c.start_byte() < child.start_byte())
                    .filter(|c| c.kind() == "local_variable_declaration")
                    .collect();
                if let Some(t) = before
                    .into_iter()
                    .rev()
                    .find_map(|d| declarator_type(d, name, src))
                {
                    return t;
                }
            }
            "for_statement" => {
                let mut cursor = node.walk();
                let inits: Vec<Node<'_>> =
                    node.children_by_field_name("init", &mut cursor).collect();
                if let Some(t) = inits
                    .into_iter()
                    .filter(|d| d.kind() == "local_variable_declaration")
                    .find_map(|d| declarator_type(d, name, src))
                {
                    return t;
                }
            }
            "enhanced_for_statement" if is_name(node.child_by_field_name("name")) => {
                return spelled_type(node.child_by_field_name("type")?, None, src);
            }
            "catch_clause" => {
                let param = node
                    .named_children(&mut node.walk())
                    .find(|c| c.kind() == "catch_formal_parameter");
                if let Some(param) = param {
                    if is_name(param.child_by_field_name("name")) {
                        let ty = param
                            .named_children(&mut param.walk())
                            .find(|c| c.kind() == "catch_type")?;
                        return spelled_type(ty, None, src);
                    }
                }
            }
            "try_with_resources_statement" => {
                if let Some(resources) = node.child_by_field_name("resources") {
                    let found = resources
                        .named_children(&mut resources.walk())
                        .find(|r| is_name(r.child_by_field_name("name")));
                    if let Some(r) = found {
                        return spelled_type(r.child_by_field_name("type")?, None, src);
                    }
                }
            }
            "method_declaration" | "constructor_declaration" | "lambda_expression" => {
                let params = node.child_by_field_name("parameters")?;
                if params.kind() == "identifier" {
                    if is_name(Some(params)) {
                        return None; // `x -> …`: inferred
                    }
                } else {
                    let found =
                        params
                            .named_children(&mut params.walk())
                            .find(|p| match p.kind() {
                                "formal_parameter" => is_name(p.child_by_field_name("name")),
                                "identifier" => is_name(Some(*p)),
                                "spread_parameter" => p
                                    .named_children(&mut p.walk())
                                    .find(|c| c.kind() == "variable_declarator")
                                    .is_some_and(|d| is_name(d.child_by_field_name("name"))),
                                _ => false,
                            });
                    if let Some(p) = found {
                        return match p.kind() {
                            "formal_parameter" => {
                                spelled_type(p.child_by_field_name("type")?, Some(p), src)
                            }
                            "spread_parameter" => {
                                let ty = p.named_child(0)?;
                                spelled_type(ty, None, src).map(|t| format!("{t}[]"))
                            }
                            _ => None,
                        };
                    }
                }
            }
            "class_body" | "enum_body" | "interface_body" => {
                if let Some(t) = field_type(node, name, src) {
                    return Some(t);
                }
            }
            _ => {}
        }
        child = node;
        node = node.parent()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{compatible_types, Language};

    /// The declared type `declared_type` gives each argument of the call named `call`.
    fn argument_types(src: &str, call: &str) -> Vec<Option<String>> {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&Language::Java.grammar()).unwrap();
        let tree = parser.parse(src, None).unwrap();
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "method_invocation"
                && n.child_by_field_name("name")
                    .is_some_and(|m| &src[m.byte_range()] == call)
            {
                let args = n.child_by_field_name("arguments").unwrap();
                return args
                    .named_children(&mut args.walk())
                    .map(|a| JavaSyntax.declared_type(a, src))
                    .collect();
            }
            stack.extend(n.children(&mut n.walk()));
        }
        panic!("no call to {call}");
    }

    #[test]
    fn declared_types_come_from_the_nearest_declaration_in_scope() {
        let src = r#"
class A {
    private String name;
    private int[] counts;
    void f(double name, java.util.List<String> items, String... rest) {
        long big = 1L;
        one(name, big, 2, 2.5f, "s", 'c', true, this.name, counts);
        six(counts[0], big + 1, big * name, "n=" + big, !flag(), big < 2, -big, (counts));
        for (String item : items) {
            var v = item;
            two(item, v, rest);
            seven(rest.length, counts.length, items.size);
        }
        try (java.io.Reader r = open()) {
            three(r, items);
        } catch (java.io.IOException e) {
            four(e, later);
        }
        items.forEach(x -> five(x));
        int later = 3;
    }
}"#;
        let s = |t: &str| Some(t.to_string());
        assert_eq!(
            argument_types(src, "one"),
            vec![
                s("double"),
                s("long"),
                s("int"),
                s("float"),
                s("String"),
                s("char"),
                s("boolean"),
                s("String"),
                s("int[]")
            ]
        );
        assert_eq!(
            argument_types(src, "six"),
            vec![
                s("int"),
                s("long"),
                s("double"),
                s("String"),
                s("boolean"),
                s("boolean"),
                s("long"),
                s("int[]")
            ]
        );
        assert_eq!(
            argument_types(src, "two"),
            vec![s("String"), None, s("String[]")]
        );
        assert_eq!(
            argument_types(src, "three"),
            vec![s("java.io.Reader"), s("java.util.List<String>")]
        );
        // `later` is declared after the call: not in scope there.
        assert_eq!(
            argument_types(src, "four"),
            vec![s("java.io.IOException"), None]
        );
        assert_eq!(argument_types(src, "five"), vec![None]);
        // An array's length is an int; another object's field is not known.
        assert_eq!(argument_types(src, "seven"), vec![s("int"), s("int"), None]);
    }

    #[test]
    fn only_known_types_that_differ_and_are_not_both_numeric_are_incompatible() {
        assert!(compatible_types(Some("int"), Some("double")));
        assert!(compatible_types(Some("Integer"), Some("long")));
        assert!(compatible_types(Some("String"), Some("String")));
        assert!(compatible_types(None, Some("String")));
        assert!(!compatible_types(Some("boolean"), Some("String")));
        assert!(!compatible_types(Some("Set<Key>"), Some("String")));
        assert!(!compatible_types(Some("int"), Some("boolean")));
    }
}
