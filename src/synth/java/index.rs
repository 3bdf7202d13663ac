//! What a module's tests offer to build calls from: per method name the invocations whose
//! receiver and arguments are constant expressions, per type the constant expressions of it,
//! literal pools, and each test file's imports.

use super::*;
use tree_sitter::{Node, Parser};

/// What the tests of a module offer: per method name, invocations whose arguments are all
/// constants; per simple type name, constant expressions of it; literal pools.
#[derive(Clone, Debug, Default)]
pub struct Index {
    /// method name → (call text with its receiver or class, the receiver's static type where
    /// known, imports).
    pub invocations: BTreeMap<String, Vec<(String, Option<String>, usize)>>,
    /// simple type name → constant expressions of that type.
    pub instances: BTreeMap<String, Vec<(String, usize)>>,
    /// Per-file import sets, referred to by index.
    pub imports: Vec<BTreeSet<String>>,
    pub strings: Vec<String>,
    pub ints: Vec<String>,
    pub floats: Vec<String>,
    pub chars: Vec<String>,
}

pub(super) fn java_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_java::LANGUAGE.into())
        .expect("the Java grammar loads");
    p
}

pub(super) fn text<'a>(n: Node<'_>, src: &'a str) -> &'a str {
    &src[n.byte_range()]
}

/// Imports a generated class may copy from a test: not the test frameworks' (the class
/// imports its own JUnit).
pub(super) fn copyable_import(line: &str) -> bool {
    let body = line
        .trim_start_matches("import")
        .trim()
        .trim_start_matches("static")
        .trim();
    ![
        "org.junit",
        "junit.",
        "org.hamcrest",
        "org.mockito",
        "org.assertj",
        "org.easymock",
        "org.testng",
    ]
    .iter()
    .any(|p| body.starts_with(p))
}

impl Index {
    /// Index the test sources `files` (path, text).
    pub fn build(files: &[(String, String)]) -> Index {
        let mut ix = Index::default();
        let mut parser = java_parser();
        let mut strings = BTreeSet::new();
        let mut ints = BTreeSet::new();
        let mut floats = BTreeSet::new();
        let mut chars = BTreeSet::new();
        for (_, src) in files {
            let Some(tree) = parser.parse(src, None) else {
                continue;
            };
            let root = tree.root_node();
            let (imports, scope) = file_scope(root, src);
            let file = ix.imports.len();
            ix.imports.push(imports);
            let mut stack = vec![root];
            while let Some(n) = stack.pop() {
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
                match n.kind() {
                    "string_literal" => {
                        let t = text(n, src);
                        if t.len() <= 120 && !t.starts_with("\"\"\"") {
                            strings.insert(t.to_string());
                        }
                    }
                    "decimal_integer_literal" | "hex_integer_literal" => {
                        ints.insert(text(n, src).to_string());
                    }
                    "decimal_floating_point_literal" => {
                        floats.insert(text(n, src).to_string());
                    }
                    "character_literal" => {
                        chars.insert(text(n, src).to_string());
                    }
                    "method_invocation" => ix.invocation(n, src, file, &scope),
                    "object_creation_expression" => {
                        if let Some(ty) = n.child_by_field_name("type") {
                            let name = simple_type(text(ty, src));
                            if let Some(e) = closed(n, src, &scope) {
                                push_unique(ix.instances.entry(name).or_default(), (e, file));
                            }
                        }
                    }
                    "local_variable_declaration" | "field_declaration" => {
                        let Some(ty) = n.child_by_field_name("type") else {
                            continue;
                        };
                        let name = simple_type(text(ty, src));
                        let mut c = n.walk();
                        for d in n.children_by_field_name("declarator", &mut c) {
                            if let Some(v) = d.child_by_field_name("value") {
                                if let Some(e) = initializer(ty, d, v, src, &scope) {
                                    push_unique(
                                        ix.instances.entry(name.clone()).or_default(),
                                        (e, file),
                                    );
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        ix.strings = strings.into_iter().collect();
        ix.ints = ints.into_iter().collect();
        ix.floats = floats.into_iter().collect();
        ix.chars = chars.into_iter().collect();
        ix
    }

    /// Record an invocation whose arguments (and receiver, where it has one) are constants,
    /// locals with constant initializers substituted.
    fn invocation(
        &mut self,
        n: Node<'_>,
        src: &str,
        file: usize,
        scope: &BTreeMap<String, (String, String)>,
    ) {
        let Some(name) = n.child_by_field_name("name") else {
            return;
        };
        let mut locals = scope.clone();
        locals.extend(locals_before(n, src, scope));
        let Some(args) = n.child_by_field_name("arguments") else {
            return;
        };
        let Some(args_text) = closed_args(args, src, &locals) else {
            return;
        };
        let (receiver, static_type) = match n.child_by_field_name("object") {
            None => (None, None),
            Some(o) => {
                let ty = match o.kind() {
                    "identifier" => locals
                        .get(text(o, src))
                        .map(|(t, _)| t.clone())
                        .or_else(|| type_like(text(o, src)).then(|| text(o, src).to_string())),
                    "object_creation_expression" => o
                        .child_by_field_name("type")
                        .map(|t| simple_type(text(t, src))),
                    _ => None,
                };
                match object_text(o, src, &locals) {
                    Some(r) => (Some(r), ty),
                    None => return,
                }
            }
        };
        let call = match receiver {
            Some(r) => format!("{r}.{}{args_text}", text(name, src)),
            None => format!("{}{args_text}", text(name, src)),
        };
        if call.len() <= MAX_EXPR {
            push_unique(
                self.invocations
                    .entry(text(name, src).to_string())
                    .or_default(),
                (call, static_type, file),
            );
        }
    }
}

/// The key of a file's scope that says it has a wildcard static import.
pub(super) const STATIC_WILDCARD: &str = "*";

/// A test file's imports a generated class may copy (with its own package's classes, which
/// the file names without importing them), and what its names mean: its fields with constant
/// initializers and its single static imports, by name → (type, expression).
pub(super) fn file_scope(
    root: Node<'_>,
    src: &str,
) -> (BTreeSet<String>, BTreeMap<String, (String, String)>) {
    let mut imports = BTreeSet::new();
    let mut scope = BTreeMap::new();
    let mut c = root.walk();
    for child in root.children(&mut c) {
        match child.kind() {
            "package_declaration" => {
                let name = text(child, src)
                    .trim_start_matches("package")
                    .trim()
                    .trim_end_matches(';')
                    .trim()
                    .to_string();
                if !name.is_empty() {
                    imports.insert(format!("import {name}.*;"));
                }
            }
            "import_declaration" => {
                let line = text(child, src).trim().to_string();
                if !copyable_import(&line) {
                    continue;
                }
                let body = line.trim_start_matches("import").trim();
                if let Some(member) = body.strip_prefix("static") {
                    let member = member.trim().trim_end_matches(';').trim();
                    match member.rsplit_once('.') {
                        Some((_, "*")) => {
                            scope.insert(
                                STATIC_WILDCARD.to_string(),
                                (String::new(), String::new()),
                            );
                        }
                        Some((_, name)) => {
                            scope.insert(name.to_string(), (String::new(), member.to_string()));
                        }
                        None => {}
                    }
                }
                imports.insert(line);
            }
            _ => {}
        }
    }
    // Fields with constant initializers, in any class of the file.
    let mut stack = vec![root];
    let mut fields = Vec::new();
    while let Some(n) = stack.pop() {
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
        if n.kind() == "field_declaration" {
            fields.push(n);
        }
    }
    fields.sort_by_key(|n| n.start_byte());
    for n in fields {
        let Some(ty) = n.child_by_field_name("type") else {
            continue;
        };
        let mut c = n.walk();
        for d in n.children_by_field_name("declarator", &mut c) {
            let (Some(name), Some(v)) = (
                d.child_by_field_name("name"),
                d.child_by_field_name("value"),
            ) else {
                continue;
            };
            if let Some(e) = initializer(ty, d, v, src, &scope) {
                scope
                    .entry(text(name, src).to_string())
                    .or_insert((simple_type(text(ty, src)), e));
            }
        }
    }
    (imports, scope)
}

pub(super) fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if v.len() < 400 && !v.contains(&x) {
        v.push(x);
    }
}

/// `a.b.Foo<Bar>` → `Foo`.
pub(super) fn simple_type(t: &str) -> String {
    let t = t.split('<').next().unwrap_or(t).trim();
    t.rsplit('.').next().unwrap_or(t).to_string()
}

/// A name that reads as a type or a constant: `Foo`, `a.b.Foo`, `FOO_BAR`.
pub(super) fn type_like(t: &str) -> bool {
    t.rsplit('.')
        .next()
        .and_then(|s| s.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// The locals declared before `n` in its enclosing method, with constant initializers: name →
/// (simple type, the initializer's text).
pub(super) fn locals_before(
    n: Node<'_>,
    src: &str,
    scope: &BTreeMap<String, (String, String)>,
) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let mut body = n.parent();
    while let Some(b) = body {
        if matches!(
            b.kind(),
            "method_declaration" | "constructor_declaration" | "lambda_expression"
        ) {
            break;
        }
        body = b.parent();
    }
    let Some(body) = body else {
        return out;
    };
    let mut stack = vec![body];
    while let Some(m) = stack.pop() {
        if m.start_byte() >= n.start_byte() {
            continue;
        }
        let mut c = m.walk();
        stack.extend(m.children(&mut c));
        if m.kind() == "local_variable_declaration" {
            let Some(ty_node) = m.child_by_field_name("type") else {
                continue;
            };
            let ty = simple_type(text(ty_node, src));
            let mut c = m.walk();
            for d in m.children_by_field_name("declarator", &mut c) {
                let (Some(name), Some(v)) = (
                    d.child_by_field_name("name"),
                    d.child_by_field_name("value"),
                ) else {
                    continue;
                };
                if let Some(e) = initializer(ty_node, d, v, src, scope) {
                    out.insert(text(name, src).to_string(), (ty.clone(), e));
                }
            }
        }
    }
    out
}

/// A declarator's constant initializer as an expression: `{1, 2}` in `int[] a = {1, 2}`
/// becomes `new int[] {1, 2}`.
pub(super) fn initializer(
    ty: Node<'_>,
    declarator: Node<'_>,
    value: Node<'_>,
    src: &str,
    locals: &BTreeMap<String, (String, String)>,
) -> Option<String> {
    let e = closed(value, src, locals)?;
    if value.kind() != "array_initializer" {
        return Some(e);
    }
    let dims = declarator
        .child_by_field_name("dimensions")
        .map(|d| text(d, src))
        .unwrap_or("");
    Some(format!("new {}{dims} {e}", text(ty, src)))
}

pub(super) fn closed_args(
    args: Node<'_>,
    src: &str,
    locals: &BTreeMap<String, (String, String)>,
) -> Option<String> {
    let mut parts = Vec::new();
    let mut c = args.walk();
    for a in args.named_children(&mut c) {
        if a.kind() == "line_comment" || a.kind() == "block_comment" {
            continue;
        }
        parts.push(closed(a, src, locals)?);
    }
    Some(format!("({})", parts.join(", ")))
}

/// `n`'s text where it is a constant expression: literals, operators over constants, arrays
/// and objects built from constants, static fields and static calls with constant arguments;
/// a local with a constant initializer is replaced by it. `None` otherwise.
pub(super) fn closed(
    n: Node<'_>,
    src: &str,
    locals: &BTreeMap<String, (String, String)>,
) -> Option<String> {
    let t = text(n, src);
    if t.len() > MAX_EXPR {
        return None;
    }
    let all_closed = |node: Node<'_>| -> Option<Vec<String>> {
        let mut c = node.walk();
        node.named_children(&mut c)
            .filter(|k| !k.kind().ends_with("comment"))
            .map(|k| closed(k, src, locals))
            .collect()
    };
    match n.kind() {
        "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal"
        | "decimal_floating_point_literal"
        | "hex_floating_point_literal"
        | "string_literal"
        | "character_literal"
        | "true"
        | "false"
        | "null_literal"
        | "class_literal" => Some(t.to_string()),
        "identifier" => {
            if let Some((_, e)) = locals.get(t) {
                Some(format!("({e})"))
            } else if locals.contains_key(STATIC_WILDCARD)
                && t.len() > 1
                && t.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            {
                // A constant a wildcard static import may bring.
                Some(t.to_string())
            } else {
                None
            }
        }
        "field_access" => {
            let o = n.child_by_field_name("object")?;
            let f = n.child_by_field_name("field")?;
            let object = object_text(o, src, locals)?;
            Some(format!("{object}.{}", text(f, src)))
        }
        "scoped_identifier" => type_like(t).then(|| t.to_string()),
        "parenthesized_expression"
        | "unary_expression"
        | "binary_expression"
        | "ternary_expression" => {
            all_closed(n)?;
            // Rebuild only where a local was substituted; else the text as written.
            rebuild(n, src, locals)
        }
        "cast_expression" => {
            let ty = n.child_by_field_name("type")?;
            let v = closed(n.child_by_field_name("value")?, src, locals)?;
            Some(format!("({}) {v}", text(ty, src)))
        }
        "array_creation_expression" => {
            if n.child_by_field_name("value").is_some()
                || n.child_by_field_name("dimensions").is_some()
            {
                all_closed(n)?;
                rebuild(n, src, locals)
            } else {
                None
            }
        }
        "array_initializer"
        | "dimensions_expr"
        | "dimensions"
        | "integral_type"
        | "floating_point_type"
        | "boolean_type"
        | "type_identifier"
        | "generic_type"
        | "scoped_type_identifier"
        | "type_arguments" => {
            all_closed(n)?;
            rebuild(n, src, locals)
        }
        "object_creation_expression" => {
            if n.child_by_field_name("body").is_some() || has_child_kind(n, "class_body") {
                return None;
            }
            let ty = n.child_by_field_name("type")?;
            let args = closed_args(n.child_by_field_name("arguments")?, src, locals)?;
            Some(format!("new {}{args}", text(ty, src)))
        }
        "method_invocation" => {
            let name = n.child_by_field_name("name")?;
            let args = closed_args(n.child_by_field_name("arguments")?, src, locals)?;
            match n.child_by_field_name("object") {
                // An unqualified call is the test class's own (or a static import): unknown.
                None => None,
                Some(o) => {
                    let object = object_text(o, src, locals)?;
                    Some(format!("{object}.{}{args}", text(name, src)))
                }
            }
        }
        _ => None,
    }
}

/// The receiver of a member access as the generated class can write it: a local or field
/// substituted, a class name as written, a constant only where a wildcard static import
/// may bring it, else a constant expression.
pub(super) fn object_text(
    o: Node<'_>,
    src: &str,
    locals: &BTreeMap<String, (String, String)>,
) -> Option<String> {
    let t = text(o, src);
    if o.kind() == "identifier" {
        if let Some((_, e)) = locals.get(t) {
            return Some(format!("({e})"));
        }
        let constant = t.len() > 1
            && t.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit());
        if constant {
            return locals.contains_key(STATIC_WILDCARD).then(|| t.to_string());
        }
    }
    if type_like(t)
        && matches!(
            o.kind(),
            "identifier" | "field_access" | "scoped_identifier"
        )
    {
        return Some(t.to_string());
    }
    closed(o, src, locals)
}

pub(super) fn has_child_kind(n: Node<'_>, kind: &str) -> bool {
    let mut c = n.walk();
    let found = n.children(&mut c).any(|k| k.kind() == kind);
    found
}

/// `n`'s text with each substituted local replaced (its children are known closed).
pub(super) fn rebuild(
    n: Node<'_>,
    src: &str,
    locals: &BTreeMap<String, (String, String)>,
) -> Option<String> {
    let mut out = String::new();
    let mut at = n.start_byte();
    let mut stack = vec![n];
    let mut idents = Vec::new();
    while let Some(m) = stack.pop() {
        if m.kind() == "identifier" && locals.contains_key(text(m, src)) {
            idents.push(m);
            continue;
        }
        let mut c = m.walk();
        stack.extend(m.children(&mut c));
    }
    idents.sort_by_key(|m| m.start_byte());
    for m in idents {
        out.push_str(&src[at..m.start_byte()]);
        out.push_str(&format!("({})", locals[text(m, src)].1));
        at = m.end_byte();
    }
    out.push_str(&src[at..n.end_byte()]);
    Some(out)
}
