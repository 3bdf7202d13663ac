//! The languages swe-forge mutates: tree-sitter grammars and per-language facts behind one small enum.

pub mod java;
pub mod javascript;
pub mod python;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A source language swe-forge knows how to parse, mutate and test.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Java,
    #[value(name = "javascript", alias = "js")]
    JavaScript,
    #[value(name = "typescript", alias = "ts")]
    TypeScript,
}

impl Language {
    pub const ALL: [Language; 4] = [
        Language::Python,
        Language::Java,
        Language::JavaScript,
        Language::TypeScript,
    ];

    /// Lower-case name, as used in manifests, mutator folders and task records.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
        }
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        }
    }

    /// File extensions (without the dot) of source files in this language.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["py"],
            Language::Java => &["java"],
            Language::JavaScript => &["js", "mjs", "cjs"],
            // `.tsx` needs the TSX grammar (JSX inside TypeScript): not parsed.
            Language::TypeScript => &["ts", "mts", "cts"],
        }
    }

    /// Whether `path` has one of this language's extensions.
    pub fn matches_path(self, path: &Path) -> bool {
        let declaration = self == Language::TypeScript
            && path.to_str().is_some_and(javascript::is_declaration_file);
        !declaration
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| self.extensions().contains(&e))
    }

    /// Whether a repository-relative path is a test file rather than a source file.
    pub fn is_test_path(self, rel: &str) -> bool {
        match self {
            Language::Python => python::is_test_path(rel),
            Language::Java => java::is_test_path(rel),
            Language::JavaScript | Language::TypeScript => javascript::is_test_path(rel),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "java" => Ok(Language::Java),
            "javascript" | "js" => Ok(Language::JavaScript),
            "typescript" | "ts" => Ok(Language::TypeScript),
            other => Err(format!(
                "unknown language `{other}` (expected python, java, javascript or typescript)"
            )),
        }
    }
}

/// How a node may be re-parsed on its own to check an edit inside it (see `candidate`):
/// the smallest such node around an edit is cut out, edited, parsed alone, and its shape
/// compared with the slot it came from. A context-free substitution of a well-formed piece
/// into the same slot keeps the file well-formed, so checking the piece checks the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// An expression whose slot only takes its own kind (an operand, a callee...): the edited
    /// text must parse as one expression of the same kind.
    SameKind,
    /// An expression in a slot that takes any expression (a condition, an argument...).
    AnyExpression,
    /// A statement in a block: the edited text must parse as exactly one statement.
    Statement,
}

/// The per-language facts the mutation engine needs about syntax trees; one small trait so
/// that the engine itself stays language-agnostic.
pub trait Syntax: Sync {
    /// The function's name and body nodes when `node` defines a function, method or
    /// constructor.
    fn function_parts<'t>(
        &self,
        node: tree_sitter::Node<'t>,
    ) -> Option<(tree_sitter::Node<'t>, tree_sitter::Node<'t>)>;
    /// The name node when `node` is a class-like scope that qualifies function names.
    fn scope_name<'t>(&self, node: tree_sitter::Node<'t>) -> Option<tree_sitter::Node<'t>>;
    /// Whether the scope walk should look for functions inside `kind` (statements and
    /// scopes, not expressions).
    fn may_contain_definitions(&self, kind: &str) -> bool;
    /// Whether `node` (a statement) is a documentation string when it opens a body.
    fn is_docstring(&self, node: tree_sitter::Node<'_>) -> bool;
    /// Whether `node` (a top-level statement) only runs when the file is executed as a
    /// script (`if __name__ == "__main__":`).
    fn is_script_guard(&self, node: tree_sitter::Node<'_>, src: &[u8]) -> bool;
    /// The node kind of a statement block, and the statement to leave in a block that would
    /// otherwise be empty (`pass`), if the language needs one.
    fn block_kind(&self) -> &'static str;
    fn empty_block_filler(&self) -> Option<&'static str>;
    /// Whether `kind` is a comment (comments are extras, skipped when counting statements).
    fn is_comment(&self, kind: &str) -> bool;
    /// The logical negation of the expression `node`: unwraps an existing negation, or wraps.
    fn negate(&self, node: tree_sitter::Node<'_>, src: &[u8]) -> String;
    /// The literal text of integer `text` shifted by `delta`, written like the original;
    /// `None` when the literal is not a plain integer or the result would be negative.
    fn shift_integer(&self, text: &str, delta: i64) -> Option<String>;
    /// How `node`, found under `parent`, can be re-parsed alone; `None` when it cannot be
    /// (the check then moves to a larger node, and finally to the whole file).
    fn region(
        &self,
        _node: tree_sitter::Node<'_>,
        _parent: Option<tree_sitter::Node<'_>>,
    ) -> Option<Region> {
        None
    }
    /// Whether `kind` is an expression (any kind an `AnyExpression` slot takes).
    fn is_expression(&self, _kind: &str) -> bool {
        false
    }
    /// Whether `kind` is a simple (one-line, non-compound) statement.
    fn is_simple_statement(&self, _kind: &str) -> bool {
        false
    }
    /// For an operator token under a node of `parent_kind`, the text around a lone operator
    /// that makes a node of that kind (`("x ", " x")` for a binary operator), so that a swapped
    /// operator is checked without its operands, which the edit leaves whole.
    fn operator_context(&self, _parent_kind: &str) -> Option<(&'static str, &'static str)> {
        None
    }
    /// Whether a `kind` clause is optional in a `parent_kind` statement (an `elif`/`else`),
    /// so that removing its whole lines leaves a valid statement.
    fn is_optional_clause(&self, _kind: &str, _parent_kind: &str) -> bool {
        false
    }
    /// Text that makes an indented statement parse at the top level (`if 1:\n` in Python);
    /// `None` when indentation does not matter.
    fn indent_wrapper(&self) -> Option<&'static str> {
        None
    }
    /// Text that makes an expression parsed alone an expression statement (`;` in Java).
    fn expression_suffix(&self) -> &'static str {
        ""
    }
    /// The class (`void`, `boolean`, `numeric` or `reference`, see
    /// [`crate::mutator::RETURN_TYPES`]) of the declared return type of the function that a
    /// `return` at `node` leaves; `None` when the language does not declare it or it is not
    /// known (a lambda, a function without a declared type).
    fn return_type_class(&self, _node: tree_sitter::Node<'_>) -> Option<&'static str> {
        None
    }
    /// The declared type of the expression at `node` as its source spells it (`int`,
    /// `String`, `Map<String, Integer>`), where the language declares types and it is plain to
    /// see: a literal, or a name declared as a parameter, a local variable or a field of an
    /// enclosing class. `None` otherwise (for `#compatible-types?`).
    fn declared_type(&self, _node: tree_sitter::Node<'_>, _src: &str) -> Option<String> {
        None
    }
    /// Whether an expression replacing `node` must be parenthesized to keep its meaning in
    /// `node`'s slot (the operand of a unary operator, the object of a call...), for rewrites
    /// with `parenthesize: true`.
    fn needs_parens(&self, _node: tree_sitter::Node<'_>) -> bool {
        false
    }
    /// Whether no edit may touch a node of `kind` or anything under it (Java annotations
    /// inside method bodies).
    fn is_excluded_subtree(&self, _kind: &str) -> bool {
        false
    }
    /// A byte the text of every excluded subtree contains (`@` for an annotation): function
    /// bodies without it are not searched for excluded subtrees. `None` when the language
    /// excludes none.
    fn excluded_subtree_marker(&self) -> Option<u8> {
        None
    }
}

/// The region of an expression `node` under `parent`, from a language's tables: `None` when
/// its kind is not among `expressions`; any expression when the parent's kind is among
/// `any_parents` or the node fills one of `any_fields` (`(parent kind, field)`), else its own
/// kind only. The statement side differs per language and stays with each [`Syntax`].
pub(crate) fn expression_region(
    node: tree_sitter::Node<'_>,
    parent: tree_sitter::Node<'_>,
    expressions: &[&str],
    any_parents: &[&str],
    any_fields: &[(&str, &str)],
) -> Option<Region> {
    if !expressions.contains(&node.kind()) {
        return None;
    }
    let pk = parent.kind();
    let in_field = |field: &str| {
        let mut cursor = parent.walk();
        let found = parent
            .children_by_field_name(field, &mut cursor)
            .any(|c| c.id() == node.id());
        found
    };
    let any = any_parents.contains(&pk) || any_fields.iter().any(|(p, f)| *p == pk && in_field(f));
    Some(if any {
        Region::AnyExpression
    } else {
        Region::SameKind
    })
}

impl Language {
    /// The syntax facts of this language.
    pub fn syntax(self) -> &'static dyn Syntax {
        match self {
            Language::Python => &python::PythonSyntax,
            Language::Java => &java::JavaSyntax,
            Language::JavaScript | Language::TypeScript => &javascript::JavaScriptSyntax,
        }
    }

    /// The prefix every mutator id of this language starts with (`py-`, `java-`).
    pub fn rule_prefix(self) -> &'static str {
        match self {
            Language::Python => "py-",
            Language::Java => "java-",
            // TypeScript shares JavaScript's rules (see `rule_languages`).
            Language::JavaScript | Language::TypeScript => "js-",
        }
    }
}

/// Whether two declared types (see [`Syntax::declared_type`]) may stand in each other's place
/// as arguments: unless both are known and differ, and one of them is not numeric (a numeric
/// primitive or its box: a swap of an `int` and a `double` often compiles and changes the
/// value).
pub fn compatible_types(a: Option<&str>, b: Option<&str>) -> bool {
    const NUMERIC: &[&str] = &[
        "byte",
        "short",
        "int",
        "long",
        "float",
        "double",
        "char",
        "Byte",
        "Short",
        "Integer",
        "Long",
        "Float",
        "Double",
        "Character",
    ];
    match (a, b) {
        (Some(a), Some(b)) => a == b || (NUMERIC.contains(&a) && NUMERIC.contains(&b)),
        _ => true,
    }
}
