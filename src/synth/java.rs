//! Test synthesis for Java survivors: calls built from the tests' own code (invocations of the
//! mutated method and receivers whose arguments are constants), completed from literal pools
//! by parameter type, observed on the clean and the buggy tree by a generated JUnit class, and
//! written as a regression test of the calls whose outcomes differ.
//!
//! Everything here is text and syntax; [`crate::pipeline`] runs the two observations and the
//! verification through the seed's test runner, so the fast path, plain Maven, JUnit 3, 4 and
//! 5 all compile and run the generated classes as they run the project's own tests. An
//! outcome is a string both versions render the same way (`render`'s helpers): the value's
//! `toString` where its class defines one, array contents, an exception's class, or the
//! value's class name; a call that does not compile is dropped by its line in javac's errors.
//!
//! The pieces: `index` (what the module's tests offer), `target` (the mutated member and its
//! class), `render` (the generated classes and reading back their output); this module plans
//! the calls ([`plan`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod index;
mod render;
mod target;

pub use index::Index;
use index::*;
#[cfg(test)]
use render::*;
pub use render::{
    assertable, differing, error_lines, java_string, javac_log_lines, observer, parse_observations,
    regression_test,
};
use target::*;

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

/// The number of top-level arguments of a call text's last argument list (the one its final
/// `)` closes); `None` when it does not end with one.
fn count_args(call: &str) -> Option<usize> {
    let call = call.trim_end();
    // One frame per open bracket: its kind, its commas, whether it holds anything.
    let mut frames: Vec<(u8, usize, bool)> = Vec::new();
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    let mut last = None;
    for (at, b) in call.bytes().enumerate() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
            continue;
        }
        if let Some(top) = frames.last_mut() {
            if !b.is_ascii_whitespace() && !matches!(b, b')' | b'}' | b']') {
                top.2 = true;
            }
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'(' | b'{' | b'[' => frames.push((b, 0, false)),
            b',' => {
                if let Some(top) = frames.last_mut() {
                    top.1 += 1;
                }
            }
            b')' | b'}' | b']' => {
                let (kind, commas, any) = frames.pop()?;
                if kind == b'(' && at + 1 == call.len() {
                    last = Some(if any { commas + 1 } else { 0 });
                }
            }
            _ => {}
        }
    }
    last
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
