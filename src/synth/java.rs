//! Test synthesis for Java survivors: calls built from the tests' own code (invocations of the
//! mutated method and receivers whose arguments are constants), completed from literal pools
//! by parameter type, observed on the clean and the buggy tree by a generated JUnit class, and
//! written as a regression test of the calls whose outcomes differ.
//!
//! Everything here is text and syntax; [`crate::pipeline`] runs the two observations and the
//! verification through the seed's test runner, so the fast path, plain Maven, JUnit 3, 4 and
//! 5 all compile and run the generated classes as they run the project's own tests. An
//! outcome is a string both versions render the same way ([`SHOW_HELPERS`]): the value's
//! `toString` where its class defines one, array contents, an exception's class, or the
//! value's class name; a call that does not compile is dropped by its line in javac's errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tree_sitter::{Node, Parser};

/// At most this many calls are observed per survivor.
pub const MAX_CALLS: usize = 96;
/// At most this many calls taken from the tests per survivor (the rest are built).
pub const MAX_MINED: usize = 48;
/// Longest expression taken from a test, in bytes.
const MAX_EXPR: usize = 240;
/// Milliseconds one observed call may run before the observer gives it up.
pub const CALL_MILLIS: u64 = 2000;

/// Which JUnit the generated classes are written for: the one the module's tests use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Junit3,
    Junit4,
    Junit5,
}

impl Flavor {
    /// JUnit 5 where any test of the module imports Jupiter, JUnit 4 where any imports
    /// `org.junit`, else JUnit 3 where any extends `TestCase`.
    pub fn of(test_sources: &[&str]) -> Option<Flavor> {
        if test_sources.iter().any(|s| s.contains("org.junit.jupiter")) {
            Some(Flavor::Junit5)
        } else if test_sources
            .iter()
            .any(|s| s.contains("import org.junit.") || s.contains("import static org.junit."))
        {
            Some(Flavor::Junit4)
        } else if test_sources.iter().any(|s| s.contains("junit.framework")) {
            Some(Flavor::Junit3)
        } else {
            None
        }
    }

    fn imports(self) -> &'static str {
        match self {
            Flavor::Junit3 => "",
            Flavor::Junit4 => "import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n",
            Flavor::Junit5 => {
                "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n"
            }
        }
    }

    fn extends(self) -> &'static str {
        match self {
            Flavor::Junit3 => " extends junit.framework.TestCase",
            _ => "",
        }
    }

    fn annotation(self) -> &'static str {
        match self {
            Flavor::Junit3 => "",
            _ => "    @Test\n",
        }
    }
}

/// The helpers both generated classes carry: an outcome as a string.
const SHOW_HELPERS: &str = r#"    private interface Call {
        Object run() throws Throwable;
    }

    private static String outcome(Call call) {
        try {
            return show(call.run());
        } catch (Throwable t) {
            return "throws " + t.getClass().getName();
        }
    }

    private static String show(Object v) {
        if (v == null) {
            return "null";
        }
        if (v.getClass().isArray()) {
            return java.util.Arrays.deepToString(new Object[] {v});
        }
        try {
            if (v.getClass().getMethod("toString").getDeclaringClass() != Object.class) {
                return String.valueOf(v);
            }
        } catch (Exception e) {
            // no public toString: the class alone
        }
        return "a " + v.getClass().getName();
    }
"#;

/// The observer's extra helper: a call on a thread of its own, given up after
/// [`CALL_MILLIS`].
const OBSERVE_HELPER: &str = r#"    private static int stuck = 0;

    private static String observe(final Call call) throws Exception {
        if (stuck >= 2) {
            return "skipped";
        }
        final String[] out = new String[1];
        Thread t = new Thread(new Runnable() {
            public void run() {
                out[0] = outcome(call);
            }
        });
        t.setDaemon(true);
        t.start();
        t.join(MILLIS);
        if (t.isAlive()) {
            stuck++;
            return "timeout";
        }
        return out[0];
    }
"#;

/// `call` as an anonymous `Call` (source levels before Java 8 have no lambdas): an expression
/// is returned, a block (`{ …; return r; }`) is the method's body.
fn anonymous(body: &str) -> String {
    let inner = match body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        Some(block) => block.trim().to_string(),
        None => format!("return {body};"),
    };
    format!("new Call() {{ public Object run() throws Throwable {{ {inner} }} }}")
}

/// One call to observe: an expression or a block, and the imports its text needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub body: String,
    pub imports: BTreeSet<String>,
}

/// What to generate for one survivor.
#[derive(Clone, Debug)]
pub struct Plan {
    pub package: String,
    /// Repository-relative directory of the package under the module's test root.
    pub test_dir: String,
    /// The test class's name (without `.java`), free in that directory.
    pub class_name: String,
    pub flavor: Flavor,
    pub calls: Vec<Call>,
    /// The class and member the calls reach (for the record).
    pub target: String,
}

impl Plan {
    /// `class` with the plan's package.
    fn qualified(&self, class: &str) -> String {
        if self.package.is_empty() {
            class.to_string()
        } else {
            format!("{}.{class}", self.package)
        }
    }
}

/// A generated class: its path, its text, and for each call index the line its call is on.
#[derive(Clone, Debug)]
pub struct Generated {
    pub path: String,
    pub source: String,
    pub call_lines: BTreeMap<usize, usize>,
    pub import_lines: BTreeMap<usize, String>,
    /// Test ids (`pkg.Class#method`) in case order.
    pub tests: Vec<String>,
}

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

fn java_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_java::LANGUAGE.into())
        .expect("the Java grammar loads");
    p
}

fn text<'a>(n: Node<'_>, src: &'a str) -> &'a str {
    &src[n.byte_range()]
}

/// Imports a generated class may copy from a test: not the test frameworks' (the class
/// imports its own JUnit).
fn copyable_import(line: &str) -> bool {
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
const STATIC_WILDCARD: &str = "*";

/// A test file's imports a generated class may copy (with its own package's classes, which
/// the file names without importing them), and what its names mean: its fields with constant
/// initializers and its single static imports, by name → (type, expression).
fn file_scope(root: Node<'_>, src: &str) -> (BTreeSet<String>, BTreeMap<String, (String, String)>) {
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

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if v.len() < 400 && !v.contains(&x) {
        v.push(x);
    }
}

/// `a.b.Foo<Bar>` → `Foo`.
fn simple_type(t: &str) -> String {
    let t = t.split('<').next().unwrap_or(t).trim();
    t.rsplit('.').next().unwrap_or(t).to_string()
}

/// A name that reads as a type or a constant: `Foo`, `a.b.Foo`, `FOO_BAR`.
fn type_like(t: &str) -> bool {
    t.rsplit('.')
        .next()
        .and_then(|s| s.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// The locals declared before `n` in its enclosing method, with constant initializers: name →
/// (simple type, the initializer's text).
fn locals_before(
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
fn initializer(
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

fn closed_args(
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
fn closed(n: Node<'_>, src: &str, locals: &BTreeMap<String, (String, String)>) -> Option<String> {
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
fn object_text(
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

fn has_child_kind(n: Node<'_>, kind: &str) -> bool {
    let mut c = n.walk();
    let found = n.children(&mut c).any(|k| k.kind() == kind);
    found
}

/// `n`'s text with each substituted local replaced (its children are known closed).
fn rebuild(n: Node<'_>, src: &str, locals: &BTreeMap<String, (String, String)>) -> Option<String> {
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

/// One way to call into the mutated code.
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    is_static: bool,
    is_constructor: bool,
    void: bool,
    params: Vec<String>,
}

/// What the class around the mutated member offers.
#[derive(Clone, Debug)]
struct Target {
    package: String,
    /// `Outer.Inner` as source refers to it.
    class: String,
    simple: String,
    abstract_or_interface: bool,
    /// Parameter lists of the constructors callable from the package.
    constructors: Vec<Vec<String>>,
    entries: Vec<Entry>,
}

fn modifiers(n: Node<'_>, src: &str) -> String {
    let mut c = n.walk();
    let m = n
        .children(&mut c)
        .find(|k| k.kind() == "modifiers")
        .map(|k| text(k, src).to_string())
        .unwrap_or_default();
    m
}

fn has_word(modifiers: &str, w: &str) -> bool {
    modifiers
        .split(|c: char| !c.is_alphanumeric())
        .any(|x| x == w)
}

fn params(n: Node<'_>, src: &str) -> Option<Vec<String>> {
    let p = n.child_by_field_name("parameters")?;
    let mut out = Vec::new();
    let mut c = p.walk();
    for f in p.named_children(&mut c) {
        match f.kind() {
            "formal_parameter" => out.push(text(f.child_by_field_name("type")?, src).to_string()),
            "spread_parameter" => {
                let mut c2 = f.walk();
                let ty = f
                    .named_children(&mut c2)
                    .find(|k| k.kind() != "modifiers")?;
                out.push(format!("{}[]", text(ty, src)));
            }
            "receiver_parameter" => {}
            _ => {}
        }
    }
    Some(out)
}

/// The member on line `first` (1-based) of `src` and the class around it.
fn target(src: &str, first: usize) -> Result<Target, String> {
    let mut parser = java_parser();
    let tree = parser.parse(src, None).ok_or("the file does not parse")?;
    let root = tree.root_node();
    let mut package = String::new();
    let mut c = root.walk();
    for k in root.children(&mut c) {
        if k.kind() == "package_declaration" {
            let mut c2 = k.walk();
            let name = k
                .named_children(&mut c2)
                .find(|x| matches!(x.kind(), "scoped_identifier" | "identifier"));
            if let Some(n) = name {
                package = text(n, src).to_string();
            }
        }
    }
    // The member declared on that line.
    let mut member = None;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "method_declaration" | "constructor_declaration")
            && n.start_position().row < first
            && n.end_position().row + 1 >= first
            && member.is_none_or(|m: Node<'_>| n.start_byte() > m.start_byte())
        {
            member = Some(n);
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let member = member.ok_or("no method or constructor there")?;
    // The classes around it: each must be a named class reachable from the package.
    let mut chain = Vec::new();
    let mut class_node = None;
    let mut inner: Option<Node<'_>> = None;
    let mut p = member.parent();
    while let Some(n) = p {
        match n.kind() {
            "class_declaration"
            | "enum_declaration"
            | "interface_declaration"
            | "record_declaration" => {
                let name = text(
                    n.child_by_field_name("name")
                        .ok_or("a class without a name")?,
                    src,
                );
                if has_word(&modifiers(n, src), "private") {
                    return Err(format!("`{name}` is private"));
                }
                // A class nested in this one must be static to be built from outside.
                if let Some(i) = inner {
                    if i.kind() == "class_declaration"
                        && n.kind() != "interface_declaration"
                        && !has_word(&modifiers(i, src), "static")
                    {
                        return Err("a member of an inner class".into());
                    }
                }
                chain.push(name.to_string());
                class_node.get_or_insert(n);
                inner = Some(n);
            }
            "object_creation_expression" => {
                return Err("a member of an anonymous class".into());
            }
            "block" | "lambda_expression" | "enum_constant" => {
                return Err("a member of a local class".into());
            }
            _ => {}
        }
        p = n.parent();
    }
    let class_node = class_node.ok_or("no class around the member")?;
    chain.reverse();
    let simple = chain.last().cloned().unwrap_or_default();
    let class_mods = modifiers(class_node, src);
    let abstract_or_interface = class_node.kind() == "interface_declaration"
        || has_word(&class_mods, "abstract")
        || class_node.kind() == "enum_declaration";
    let body = class_node
        .child_by_field_name("body")
        .ok_or("a class without a body")?;
    let mut constructors = Vec::new();
    let mut methods = Vec::new();
    let mut c = body.walk();
    for k in body.named_children(&mut c) {
        match k.kind() {
            "constructor_declaration" if !has_word(&modifiers(k, src), "private") => {
                if let Some(p) = params(k, src) {
                    constructors.push(p);
                }
            }
            "method_declaration" => methods.push(k),
            _ => {}
        }
    }
    let declares_constructor = {
        let mut c = body.walk();
        let found = body
            .named_children(&mut c)
            .any(|k| k.kind() == "constructor_declaration");
        found
    };
    if !declares_constructor && class_node.kind() == "class_declaration" {
        constructors.push(Vec::new());
    }
    let entry_of = |n: Node<'_>| -> Option<Entry> {
        let m = modifiers(n, src);
        if has_word(&m, "private") || n.child_by_field_name("type_parameters").is_some() {
            return None;
        }
        let is_constructor = n.kind() == "constructor_declaration";
        let ty = n
            .child_by_field_name("type")
            .map(|t| text(t, src).to_string());
        Some(Entry {
            name: text(n.child_by_field_name("name")?, src).to_string(),
            is_static: has_word(&m, "static"),
            is_constructor,
            void: ty.as_deref() == Some("void"),
            params: params(n, src)?,
        })
    };
    let mut entries = Vec::new();
    if let Some(e) = entry_of(member) {
        entries.push(e);
    } else {
        // A private (or generic) member: the class's members that call it.
        let name = text(member.child_by_field_name("name").ok_or("no name")?, src).to_string();
        let callers = methods.iter().copied().filter(|m| {
            m.id() != member.id() && {
                let b = text(*m, src);
                b.contains(&format!("{name}(")) || b.contains(&format!("{name} ("))
            }
        });
        for m in callers {
            if let Some(e) = entry_of(m) {
                if !entries
                    .iter()
                    .any(|x: &Entry| x.name == e.name && x.params == e.params)
                {
                    entries.push(e);
                }
            }
            if entries.len() >= 3 {
                break;
            }
        }
        if entries.is_empty() {
            return Err(format!(
                "`{name}` is private and no member of its class that others can call calls it"
            ));
        }
    }
    Ok(Target {
        package,
        class: chain.join("."),
        simple,
        abstract_or_interface,
        constructors,
        entries,
    })
}

/// Constant values of a parameter type, from the pools and a few of every type's usual
/// edges; empty for a type they cannot fill.
fn values_of(ty: &str, ix: &Index, class: &str) -> Vec<String> {
    let ty = ty.trim();
    let ty_simple = simple_type(ty);
    let take = |v: &[String], n: usize| v.iter().take(n).cloned().collect::<Vec<_>>();
    let mut out: Vec<String> = match ty {
        "int" | "Integer" | "long" | "Long" | "short" | "Short" | "byte" | "Byte" => {
            let mut v = vec![
                "0".to_string(),
                "1".into(),
                "-1".into(),
                "2".into(),
                "10".into(),
            ];
            v.extend(take(&ix.ints, 24));
            let suffix = if matches!(ty, "long" | "Long") {
                "L"
            } else {
                ""
            };
            let cast = match ty {
                "short" | "Short" => "(short) ",
                "byte" | "Byte" => "(byte) ",
                _ => "",
            };
            v.into_iter()
                .filter(|x| !x.ends_with('L') && !x.ends_with('l'))
                .filter(|x| x.len() < 10 || suffix == "L")
                .map(|x| format!("{cast}{x}{suffix}"))
                .collect()
        }
        "double" | "Double" | "float" | "Float" => {
            let f = matches!(ty, "float" | "Float");
            let mut v = vec!["0.0".to_string(), "1.0".into(), "-1.5".into(), "0.5".into()];
            v.extend(take(&ix.floats, 12));
            v.into_iter()
                .map(|x| {
                    let x = x.trim_end_matches(['d', 'D', 'f', 'F']).to_string();
                    if f {
                        format!("{x}f")
                    } else {
                        x
                    }
                })
                .collect()
        }
        "boolean" | "Boolean" => vec!["true".into(), "false".into()],
        "char" | "Character" => {
            let mut v = vec!["'a'".to_string(), "'Z'".into(), "'0'".into(), "' '".into()];
            v.extend(take(&ix.chars, 12));
            v
        }
        "String" | "CharSequence" | "Object" | "java.lang.String" => {
            let mut v = vec![
                "\"\"".to_string(),
                "\"a\"".into(),
                "\"abc\"".into(),
                "\"Hello World\"".into(),
                "null".into(),
            ];
            v.extend(take(&ix.strings, 40));
            v
        }
        "byte[]" => {
            let mut v = vec![
                "new byte[0]".to_string(),
                "new byte[] {0, 1, -1, 127, -128}".into(),
            ];
            v.extend(
                take(&ix.strings, 20)
                    .into_iter()
                    .map(|s| format!("{s}.getBytes(java.nio.charset.StandardCharsets.UTF_8)")),
            );
            v
        }
        "char[]" => {
            let mut v = vec!["new char[0]".to_string()];
            v.extend(
                take(&ix.strings, 20)
                    .into_iter()
                    .map(|s| format!("{s}.toCharArray()")),
            );
            v
        }
        "int[]" => vec![
            "new int[0]".into(),
            "new int[] {1, 2, 3}".into(),
            "new int[] {-1, 0, 5, 5}".into(),
        ],
        "String[]" | "Object[]" => {
            let mut v = vec!["new String[0]".to_string()];
            let s = take(&ix.strings, 12);
            for w in s.chunks(2) {
                v.push(format!("new String[] {{{}}}", w.join(", ")));
            }
            v
        }
        _ => Vec::new(),
    };
    // Constant expressions of the type found in the tests (`Locale.US` is not, `new Foo(1)` is).
    if let Some(found) = ix.instances.get(&ty_simple) {
        out.extend(found.iter().take(16).map(|(e, _)| e.clone()));
    }
    let _ = class;
    let mut seen = BTreeSet::new();
    out.retain(|v| seen.insert(v.clone()));
    out
}

/// A deterministic stream of indices from `seed`.
struct Draw(u64);

impl Draw {
    fn next(&mut self, n: usize) -> usize {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if n == 0 {
            0
        } else {
            (z % n as u64) as usize
        }
    }
}

/// The survivor's plan: its member's class, where the test goes, and the calls to observe.
/// `Err` says why no call can be built.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    clean_source: &str,
    function_first_line: usize,
    test_root: &str,
    test_files: &[String],
    flavor: Flavor,
    ix: &Index,
    seed: u64,
) -> Result<Plan, String> {
    let t = target(clean_source, function_first_line)?;
    let mut calls: Vec<Call> = Vec::new();
    let push = |calls: &mut Vec<Call>, body: String, imports: BTreeSet<String>| {
        if calls.len() < MAX_CALLS && !calls.iter().any(|c| c.body == body) {
            calls.push(Call { body, imports });
        }
    };
    let imports_of = |file: usize| ix.imports.get(file).cloned().unwrap_or_default();
    // The imports a pool value taken from a test needs: its file's.
    let origin: BTreeMap<&str, usize> = ix
        .instances
        .values()
        .flatten()
        .map(|(e, f)| (e.as_str(), *f))
        .collect();
    let imports_for = |args: &[String]| -> BTreeSet<String> {
        args.iter()
            .filter_map(|a| origin.get(a.as_str()))
            .flat_map(|f| imports_of(*f))
            .collect()
    };
    let mut draw = Draw(seed);
    let receivers: Vec<(String, BTreeSet<String>)> = {
        let mut r: Vec<(String, BTreeSet<String>)> = ix
            .instances
            .get(&t.simple)
            .map(|v| v.iter().map(|(e, f)| (e.clone(), imports_of(*f))).collect())
            .unwrap_or_default();
        if !t.abstract_or_interface {
            for ps in &t.constructors {
                if ps.is_empty() {
                    r.insert(0, (format!("new {}()", t.class), BTreeSet::new()));
                } else {
                    let pools: Vec<Vec<String>> =
                        ps.iter().map(|p| values_of(p, ix, &t.class)).collect();
                    if pools.iter().all(|p| !p.is_empty()) {
                        for _ in 0..4 {
                            let args: Vec<String> = pools
                                .iter()
                                .map(|p| p[draw.next(p.len())].clone())
                                .collect();
                            r.push((
                                format!("new {}({})", t.class, args.join(", ")),
                                imports_for(&args),
                            ));
                        }
                    }
                }
            }
        }
        r.truncate(24);
        r
    };
    for e in &t.entries {
        let share = MAX_CALLS / t.entries.len().max(1);
        let start = calls.len();
        let cap = start + share;
        // The tests' own calls of it, first.
        let mined = ix.invocations.get(&e.name).cloned().unwrap_or_default();
        let arity_ok = |call: &str| count_args(call) == Some(e.params.len());
        let mut taken = 0;
        for (call, static_type, file) in &mined {
            if taken >= MAX_MINED / t.entries.len().max(1) || calls.len() >= cap {
                break;
            }
            if !arity_ok(call) || e.is_constructor {
                continue;
            }
            // An unqualified call (a static import) names the class's member where it is
            // static.
            let call = if call.starts_with(&format!("{}(", e.name)) {
                if !e.is_static {
                    continue;
                }
                format!("{}.{call}", t.class)
            } else {
                call.clone()
            };
            let relevant = match static_type {
                Some(ty) => *ty == t.simple,
                None => call.contains(&t.simple),
            };
            if !relevant {
                continue;
            }
            let body = if e.void {
                match call.rsplit_once(&format!(".{}(", e.name)) {
                    Some((recv, _)) if !e.is_static => {
                        let args = &call[recv.len() + e.name.len() + 1..];
                        format!(
                            "{{ {} r = {recv}; r.{}{args}; return r; }}",
                            t.class, e.name
                        )
                    }
                    _ => format!("{{ {call}; return null; }}"),
                }
            } else {
                call
            };
            push(&mut calls, body, imports_of(*file));
            taken += 1;
        }
        if e.is_constructor {
            for (call, file) in ix.instances.get(&t.simple).cloned().unwrap_or_default() {
                if call.starts_with("new ") && count_args(&call) == Some(e.params.len()) {
                    push(&mut calls, call, imports_of(file));
                }
            }
        }
        // Then calls built from the pools.
        let pools: Vec<Vec<String>> = e
            .params
            .iter()
            .map(|p| values_of(p, ix, &t.class))
            .collect();
        if pools.iter().any(|p| p.is_empty()) {
            continue;
        }
        let mut attempts = 0;
        while calls.len() < cap && attempts < share * 3 {
            attempts += 1;
            let arg_list: Vec<String> = pools
                .iter()
                .map(|p| p[draw.next(p.len())].clone())
                .collect();
            let arg_imports = imports_for(&arg_list);
            let args = arg_list.join(", ");
            let body = if e.is_constructor {
                format!("new {}({args})", t.class)
            } else if e.is_static {
                let c = format!("{}.{}({args})", t.class, e.name);
                if e.void {
                    format!("{{ {c}; return null; }}")
                } else {
                    c
                }
            } else {
                if receivers.is_empty() {
                    break;
                }
                let (r, imports) = &receivers[draw.next(receivers.len())];
                let body = if e.void {
                    format!("{{ {} r = {r}; r.{}({args}); return r; }}", t.class, e.name)
                } else {
                    format!("({r}).{}({args})", e.name)
                };
                push(
                    &mut calls,
                    body,
                    imports.iter().cloned().chain(arg_imports).collect(),
                );
                continue;
            };
            push(&mut calls, body, arg_imports);
        }
    }
    if calls.is_empty() {
        let names = t
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join("`, `");
        let no_receiver = receivers.is_empty() && t.entries.iter().all(|e| !e.is_static);
        return Err(if no_receiver {
            format!(
                "no call of `{names}` could be built: no test calls it with constants, and no \
                 `{}` could be made (no constructor callable with constants, none in the tests)",
                t.class
            )
        } else {
            format!(
                "no call of `{names}` could be built: no test calls it with constants, and its \
                 parameters ({}) are of types without constants",
                t.entries
                    .iter()
                    .flat_map(|e| e.params.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
    }
    let test_dir = format!(
        "{}{}",
        test_root,
        if t.package.is_empty() {
            String::new()
        } else {
            format!("{}/", t.package.replace('.', "/"))
        }
    );
    let member = t.entries[0].name.clone();
    let base = format!("{}{}Regression", t.simple, upper_first(&member));
    let mut class_name = format!("{base}Test");
    let mut k = 2;
    while test_files
        .iter()
        .any(|f| *f == format!("{test_dir}{class_name}.java"))
    {
        class_name = format!("{base}{k}Test");
        k += 1;
    }
    Ok(Plan {
        package: t.package,
        test_dir,
        class_name,
        flavor,
        calls,
        target: format!("{}.{}", t.class, member),
    })
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The number of top-level arguments of a call text's last argument list.
fn count_args(call: &str) -> Option<usize> {
    let call = call.trim_end();
    if !call.ends_with(')') {
        return None;
    }
    // Find the '(' matching the final ')'.
    let bytes = call.as_bytes();
    let mut depth = 0i32;
    let mut open = None;
    let mut in_str = false;
    let mut in_char = false;
    let mut i = bytes.len();
    // Scan forward instead (strings make a backward scan unreliable).
    let mut opens: Vec<usize> = Vec::new();
    let mut pairs: BTreeMap<usize, usize> = BTreeMap::new();
    let mut j = 0;
    while j < bytes.len() {
        let b = bytes[j];
        if in_str || in_char {
            if b == b'\\' {
                j += 2;
                continue;
            }
            if (in_str && b == b'"') || (in_char && b == b'\'') {
                in_str = false;
                in_char = false;
            }
        } else {
            match b {
                b'"' => in_str = true,
                b'\'' => in_char = true,
                b'(' => opens.push(j),
                b')' => {
                    let o = opens.pop()?;
                    pairs.insert(j, o);
                }
                _ => {}
            }
        }
        j += 1;
    }
    i -= 1;
    if let Some(o) = pairs.get(&i) {
        open = Some(*o);
    }
    let open = open?;
    let inner = &call[open + 1..i];
    if inner.trim().is_empty() {
        return Some(0);
    }
    let mut n = 1;
    in_str = false;
    in_char = false;
    let ib = inner.as_bytes();
    let mut k = 0;
    while k < ib.len() {
        let b = ib[k];
        if in_str || in_char {
            if b == b'\\' {
                k += 2;
                continue;
            }
            if (in_str && b == b'"') || (in_char && b == b'\'') {
                in_str = false;
                in_char = false;
            }
        } else {
            match b {
                b'"' => in_str = true,
                b'\'' => in_char = true,
                b'(' | b'{' | b'[' => depth += 1,
                b')' | b'}' | b']' => depth -= 1,
                b',' if depth == 0 => n += 1,
                _ => {}
            }
        }
        k += 1;
    }
    Some(n)
}

/// A Java string literal of `s`.
pub fn java_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether an import is needed by `bodies`: a wildcard always, else where its last name
/// appears in one as a word.
fn import_used(import: &str, bodies: &[&str]) -> bool {
    let name = import
        .trim_end_matches(';')
        .trim()
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim();
    if name == "*" || name.is_empty() {
        return true;
    }
    bodies.iter().any(|b| {
        b.match_indices(name).any(|(at, _)| {
            let before = b[..at].chars().next_back();
            let after = b[at + name.len()..].chars().next();
            let word =
                |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            !word(before) && !word(after)
        })
    })
}

fn header(plan: &Plan, calls: &[&Call], extra: &str) -> (String, BTreeMap<usize, String>) {
    let mut s = String::new();
    if !plan.package.is_empty() {
        s.push_str(&format!("package {};\n\n", plan.package));
    }
    let mut import_lines = BTreeMap::new();
    let bodies: Vec<&str> = calls.iter().map(|c| c.body.as_str()).collect();
    let imports: BTreeSet<&String> = calls
        .iter()
        .flat_map(|c| c.imports.iter())
        .filter(|i| import_used(i, &bodies))
        .collect();
    for i in imports {
        import_lines.insert(s.lines().count() + 1, i.clone());
        s.push_str(i);
        s.push('\n');
    }
    s.push_str(plan.flavor.imports());
    s.push_str(extra);
    (s, import_lines)
}

/// The observer: one test that makes every call and writes `index<TAB>outcome` lines to
/// `out_path` (as the test process sees it).
pub fn observer(plan: &Plan, calls: &[usize], out_path: &str) -> Generated {
    let chosen: Vec<&Call> = calls.iter().map(|&i| &plan.calls[i]).collect();
    let (mut s, import_lines) = header(plan, &chosen, "");
    let class = format!("SweForgeObserve{}", plan.class_name);
    s.push_str(&format!(
        "\npublic class {class}{} {{\n",
        plan.flavor.extends()
    ));
    s.push_str(&format!(
        "    private static final long MILLIS = {CALL_MILLIS}L;\n\n"
    ));
    s.push_str(plan.flavor.annotation());
    s.push_str("    public void testObserve() throws Exception {\n");
    s.push_str("        java.util.List<String> out = new java.util.ArrayList<String>();\n");
    let mut call_lines = BTreeMap::new();
    for &i in calls {
        let line = s.lines().count() + 1;
        call_lines.insert(i, line);
        s.push_str(&format!(
            "        out.add(\"{i}\\t\" + observe({}).replace(\"\\\\\", \"\\\\\\\\\").replace(\"\\n\", \"\\\\n\").replace(\"\\r\", \"\\\\r\"));\n",
            anonymous(&plan.calls[i].body)
        ));
    }
    s.push_str(&format!(
        "        java.io.Writer w = new java.io.OutputStreamWriter(new java.io.FileOutputStream({}), \"UTF-8\");\n        \
         try {{\n            for (String line : out) {{\n                w.write(line + \"\\n\");\n            }}\n        \
         }} finally {{\n            w.close();\n        }}\n    }}\n\n",
        java_string(out_path)
    ));
    s.push_str(SHOW_HELPERS);
    s.push('\n');
    s.push_str(OBSERVE_HELPER);
    s.push_str("}\n");
    let fqcn = plan.qualified(&class);
    Generated {
        path: format!("{}{class}.java", plan.test_dir),
        source: s,
        call_lines,
        import_lines,
        tests: vec![format!("{fqcn}#testObserve")],
    }
}

/// The observer's lines: call index → outcome (escapes undone).
pub fn parse_observations(text: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((i, v)) = line.split_once('\t') else {
            continue;
        };
        let Ok(i) = i.parse::<usize>() else {
            continue;
        };
        let mut s = String::with_capacity(v.len());
        let mut it = v.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                match it.next() {
                    Some('n') => s.push('\n'),
                    Some('r') => s.push('\r'),
                    Some(o) => s.push(o),
                    None => {}
                }
            } else {
                s.push(c);
            }
        }
        out.insert(i, s);
    }
    out
}

/// Whether an outcome can be asserted: no identity hash, no timing, not given up.
pub fn assertable(outcome: &str) -> bool {
    if matches!(outcome, "timeout" | "skipped") {
        return false;
    }
    // `Foo@1b6d3586`: an identity hash code, different in every JVM.
    let b = outcome.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'@' {
            let hex = b[i + 1..]
                .iter()
                .take_while(|x| x.is_ascii_hexdigit())
                .count();
            if hex >= 5 {
                return false;
            }
        }
    }
    true
}

/// Call indices whose outcomes differ between the two observations, where the clean one can
/// be asserted and the buggy one is not a give-up.
pub fn differing(clean: &BTreeMap<usize, String>, buggy: &BTreeMap<usize, String>) -> Vec<usize> {
    clean
        .iter()
        .filter(|(i, c)| {
            assertable(c)
                && buggy
                    .get(i)
                    .is_some_and(|b| b != *c && !matches!(b.as_str(), "timeout" | "skipped"))
        })
        .map(|(i, _)| *i)
        .collect()
}

/// The regression test: one test method per case, asserting the clean outcome.
pub fn regression_test(plan: &Plan, cases: &[(usize, String)]) -> Generated {
    let chosen: Vec<&Call> = cases.iter().map(|(i, _)| &plan.calls[*i]).collect();
    let (mut s, import_lines) = header(plan, &chosen, "");
    let class = &plan.class_name;
    s.push_str(&format!(
        "\npublic class {class}{} {{\n",
        plan.flavor.extends()
    ));
    let member = plan.target.rsplit('.').next().unwrap_or("call");
    let mut call_lines = BTreeMap::new();
    let mut tests = Vec::new();
    let fqcn = plan.qualified(class);
    for (k, (i, expected)) in cases.iter().enumerate() {
        let name = format!("test{}{}", upper_first(member), k + 1);
        s.push_str(plan.flavor.annotation());
        s.push_str(&format!("    public void {name}() {{\n"));
        call_lines.insert(*i, s.lines().count() + 1);
        s.push_str(&format!(
            "        assertEquals({}, outcome({}));\n    }}\n\n",
            java_string(expected),
            anonymous(&plan.calls[*i].body)
        ));
        tests.push(format!("{fqcn}#{name}"));
    }
    s.push_str(SHOW_HELPERS);
    s.push_str("}\n");
    Generated {
        path: format!("{}{class}.java", plan.test_dir),
        source: s,
        call_lines,
        import_lines,
        tests,
    }
}

/// javac's error lines in `anomaly` for the file named `file_name` (`A.java:[12,5]`).
pub fn error_lines(anomaly: &str, file_name: &str) -> BTreeSet<usize> {
    let needle = format!("{file_name}:[");
    let mut out = BTreeSet::new();
    let mut rest = anomaly;
    while let Some(p) = rest.find(&needle) {
        let after = &rest[p + needle.len()..];
        let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse() {
            out.insert(n);
        }
        rest = after;
    }
    out
}

/// The lines of javac's own log (`…/A.java:12: error: …`) with errors in `file_name`.
pub fn javac_log_lines(log: &str, file_name: &str) -> BTreeSet<usize> {
    let needle = format!("{file_name}:");
    log.lines()
        .filter(|l| l.contains(": error: "))
        .filter_map(|l| {
            let at = l.find(&needle)?;
            let rest = &l[at + needle.len()..];
            rest.split(':').next()?.parse().ok()
        })
        .collect()
}

/// The test sources of the module whose main root holds `file`: (its test root, the test
/// files under it).
pub fn module_of<'a>(
    roots: &[(String, String)],
    file: &str,
    test_files: &'a [String],
) -> Option<(String, Vec<&'a String>)> {
    let (_, test_root) = roots
        .iter()
        .filter(|(main, _)| file.starts_with(main.as_str()))
        .max_by_key(|(main, _)| main.len())?;
    Some((
        test_root.clone(),
        test_files
            .iter()
            .filter(|f| f.starts_with(test_root.as_str()))
            .collect(),
    ))
}

/// Read the module's test sources from the checkout.
pub fn read_tests(root: &Path, files: &[&String]) -> Vec<(String, String)> {
    files
        .iter()
        .filter(|f| f.ends_with(".java"))
        .filter_map(|f| {
            std::fs::read_to_string(root.join(f))
                .ok()
                .map(|t| ((*f).clone(), t))
        })
        .collect()
}

#[cfg(test)]
mod tests;
