//! Canary: the hidden checks of a grading run. Two tests named with a nonce made for the run
//! go into a graded test file, one that must fail and one that must pass, so that a runner
//! whose report says otherwise shows it was tampered with. Here: the noun, and the checks of
//! the JavaScript runners and Maven (pytest's are `PythonPytest::canary`).

use crate::grading::Grading;
use crate::run::Run;

/// Hidden tests a grading run adds under names made for it: one must fail, one must pass. A
/// runner whose report says otherwise was tampered with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canary {
    /// The test file they go into (one of the command's files, else a new one).
    pub file: String,
    /// Whether `file` is new (the command must then name it too).
    pub new_file: bool,
    /// What is appended to `file`.
    pub text: String,
    /// The file's whole new content, where the tests go inside it (a Java class) rather than
    /// at its end: written instead of appending `text`.
    pub whole: Option<String>,
    /// The id of the test that must fail.
    pub must_fail: String,
    /// The id of the test that must pass.
    pub must_pass: String,
}

impl Canary {
    /// Why `run` shows a tampered runner, if it does: the test that must fail was reported
    /// passed, or not failed while the one that must pass passed; or, while some of the
    /// `graded` tests passed, the test that must fail was not
    /// reported or the one that must pass did not pass. A run that reports nothing passed (it
    /// timed out, its file could not load, everything failed) shows no tampering: an honest
    /// runner reports that too.
    pub fn tampered(&self, run: &Run, graded: &[String]) -> Option<String> {
        use crate::run::TestStatus;
        let fail = run.status(&self.must_fail);
        let pass = run.status(&self.must_pass);
        if fail == TestStatus::Passed {
            return Some(format!(
                "the hidden test that must fail was reported passed ({})",
                run.label
            ));
        }
        // Both are in one file: where the one that must pass passed, the file ran, and the
        // one that must fail can only have failed.
        if pass == TestStatus::Passed && fail != TestStatus::Failed {
            return Some(format!(
                "the hidden test that must fail was reported {fail} ({})",
                run.label
            ));
        }
        let some_passed = graded.iter().any(|t| run.status(t) == TestStatus::Passed);
        if some_passed && fail == TestStatus::Missing {
            return Some(format!(
                "the hidden test that must fail was not reported while graded tests passed ({})",
                run.label
            ));
        }
        if some_passed && pass != TestStatus::Passed {
            return Some(format!(
                "the hidden test that must pass was reported {pass} while graded tests passed ({})",
                run.label
            ));
        }
        None
    }

    /// A shell script that puts the hidden tests in place (appends `text`, or writes
    /// `whole`), from the repository root.
    pub fn script(&self) -> String {
        use base64::Engine;
        let q = crate::sandbox::shell_quote(&self.file);
        match &self.whole {
            Some(whole) => format!(
                "printf %s {} | base64 -d > {q}\n",
                base64::engine::general_purpose::STANDARD.encode(whole)
            ),
            None => format!(
                "printf %s {} | base64 -d >> {q}\n",
                base64::engine::general_purpose::STANDARD.encode(&self.text)
            ),
        }
    }

    /// The grading command that also runs the canary's file (its two tests, where the
    /// command names tests).
    pub fn grading(&self, grading: &Grading) -> Grading {
        let mut g = grading.clone();
        if self.new_file && !g.runs_file(&self.file) {
            g.files.push(self.file.clone());
        }
        if !g.tests.is_empty() {
            g.tests.push(self.must_fail.clone());
            g.tests.push(self.must_pass.clone());
        }
        g.command = g.line_with(&[]);
        g
    }
}

/// A fresh name for a grading run's hidden tests (12 hex digits).
pub fn nonce() -> String {
    use rand::RngCore;
    let mut b = [0u8; 6];
    rand::rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// How a JavaScript test file declares a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsStyle {
    /// jest's global `test`.
    Jest,
    /// mocha's global `it` (BDD), else `test` (TDD).
    Mocha,
    /// `test` from `node:test`, required (CommonJS) or imported (an ES module).
    NodeTest,
}

/// The names of the two tests.
fn names(nonce: &str) -> (String, String) {
    (
        format!("swe_forge_{nonce}_f"),
        format!("swe_forge_{nonce}_p"),
    )
}

/// Whether a JavaScript file is an ES module: `.mjs`/`.mts`, or (not `.cjs`/`.cts`) a
/// top-level `import`/`export` statement.
fn is_es_module(file: &str, text: &str) -> bool {
    if file.ends_with(".mjs") || file.ends_with(".mts") {
        return true;
    }
    if file.ends_with(".cjs") || file.ends_with(".cts") {
        return false;
    }
    text.lines().any(|l| {
        (l.starts_with("import ") && !l.starts_with("import ("))
            || l.starts_with("import{")
            || l.starts_with("export ")
    })
}

/// The two tests appended to the first graded JavaScript test file: ids
/// `<file>::swe_forge_<nonce>_f` (throws) and `…_p` (passes), top-level tests whose full
/// title is their name.
pub fn javascript(
    grading: &Grading,
    nonce: &str,
    read: &mut dyn FnMut(&str) -> Option<String>,
    style: JsStyle,
) -> Option<Canary> {
    let file = grading.files.first()?.clone();
    let text = read(&file)?;
    let (f, p) = names(nonce);
    let esm = is_es_module(&file, &text);
    // The test that must fail fails through the assertions the file's tests use (jest's
    // `expect`, node's `assert`), so that neutering them shows too.
    let (import, declare, fail) = match style {
        // Where the file takes jest's functions from `@jest/globals` (`injectGlobals: false`),
        // so do the hidden tests.
        JsStyle::Jest if text.contains("@jest/globals") && esm => (
            format!(
                "import {{ test as swe_forge_test_{nonce}, expect as swe_forge_expect_{nonce} }} \
                 from '@jest/globals';\n"
            ),
            format!("swe_forge_test_{nonce}"),
            format!("swe_forge_expect_{nonce}('{nonce}').toBe('');"),
        ),
        JsStyle::Jest if text.contains("@jest/globals") => (
            String::new(),
            "require('@jest/globals').test".to_string(),
            format!("require('@jest/globals').expect('{nonce}').toBe('');"),
        ),
        JsStyle::Jest => (
            String::new(),
            "test".to_string(),
            format!("expect('{nonce}').toBe('');"),
        ),
        JsStyle::Mocha => (
            String::new(),
            "(typeof it === 'function' ? it : test)".to_string(),
            format!(
                "if (typeof require === 'function') {{\n    \
                 require('assert').strictEqual('{nonce}', '');\n  }}\n  \
                 throw new Error('{nonce}');"
            ),
        ),
        JsStyle::NodeTest if esm => (
            format!(
                "import {{ test as swe_forge_test_{nonce} }} from 'node:test';\n\
                 import swe_forge_assert_{nonce} from 'node:assert';\n"
            ),
            format!("swe_forge_test_{nonce}"),
            format!("swe_forge_assert_{nonce}.strictEqual('{nonce}', '');"),
        ),
        JsStyle::NodeTest => (
            String::new(),
            "require('node:test').test".to_string(),
            format!("require('node:assert').strictEqual('{nonce}', '');"),
        ),
    };
    let added = format!(
        "\n;\n{import}{declare}('{f}', () => {{\n  {fail}\n}});\n\
         {declare}('{p}', () => {{\n  if (!/^[0-9a-f]+$/.test('{nonce}')) {{\n    \
         throw new Error('{nonce}');\n  }}\n}});\n"
    );
    Some(Canary {
        must_fail: format!("{file}::{f}"),
        must_pass: format!("{file}::{p}"),
        file,
        new_file: false,
        text: added,
        whole: None,
    })
}

/// The two test methods put into the class of the first graded Java test file that has one
/// (the top-level class named as the file, else its first): ids
/// `<package>.<Class>#swe_forge_<nonce>_f` (throws) and `…_p` (passes), annotated with the
/// JUnit the file already imports (Jupiter's `@Test`, else JUnit 4's).
pub fn java(
    grading: &Grading,
    nonce: &str,
    read: &mut dyn FnMut(&str) -> Option<String>,
) -> Option<Canary> {
    for file in grading.files.iter().filter(|f| f.ends_with(".java")) {
        let Some(text) = read(file) else { continue };
        if let Some(c) = java_in(file, &text, nonce) {
            return Some(c);
        }
    }
    None
}

/// [`java`] for one file's text. Only a plain test class takes them: one whose runner decides
/// what runs (`@RunWith`, a suite) might not run a method of its own, and a hidden test that
/// does not run would read as tampering.
fn java_in(file: &str, text: &str, nonce: &str) -> Option<Canary> {
    if ["@RunWith", "@Suite", "@SelectClasses", "@SelectPackages"]
        .iter()
        .any(|a| text.contains(a))
    {
        return None;
    }
    let annotation = if text.contains("org.junit.jupiter") {
        "@org.junit.jupiter.api.Test"
    } else if text.contains("org.junit") {
        "@org.junit.Test"
    } else {
        return None;
    };
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_java::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let stem = file.rsplit('/').next()?.strip_suffix(".java")?;
    let mut package = String::new();
    let mut classes = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        match node.kind() {
            "package_declaration" => {
                let mut c = node.walk();
                let name = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"));
                if let Some(name) = name {
                    package = name.utf8_text(text.as_bytes()).ok()?.to_string();
                }
            }
            "class_declaration" => {
                let name = node
                    .child_by_field_name("name")?
                    .utf8_text(text.as_bytes())
                    .ok()?
                    .to_string();
                let body = node.child_by_field_name("body")?;
                // An abstract class's methods run only through its subclasses.
                let abstract_class = node
                    .utf8_text(text.as_bytes())
                    .ok()?
                    .split('{')
                    .next()
                    .is_some_and(|head| head.split_whitespace().any(|w| w == "abstract"));
                if !abstract_class {
                    classes.push((name, body.end_byte()));
                }
            }
            _ => {}
        }
    }
    let (class, end) = classes.iter().find(|(name, _)| name == stem)?.clone();
    // The body ends with its `}`: the methods go just before it.
    let close = end.checked_sub(1)?;
    if text.as_bytes().get(close) != Some(&b'}') {
        return None;
    }
    let (f, p) = names(nonce);
    let methods = format!(
        "\n    {annotation}\n    public void {f}() {{\n        \
         throw new AssertionError(\"{nonce}\");\n    }}\n\n    \
         {annotation}\n    public void {p}() {{\n        \
         if (!\"{nonce}\".matches(\"[0-9a-f]+\")) {{\n            \
         throw new AssertionError(\"{nonce}\");\n        }}\n    }}\n"
    );
    let whole = format!("{}{methods}{}", &text[..close], &text[close..]);
    let qualified = if package.is_empty() {
        class
    } else {
        format!("{package}.{class}")
    };
    Some(Canary {
        must_fail: format!("{qualified}#{f}"),
        must_pass: format!("{qualified}#{p}"),
        file: file.to_string(),
        new_file: false,
        text: methods,
        whole: Some(whole),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_canary_that_did_not_fail_shows_a_tampered_runner() {
        use crate::run::{TestResult, TestStatus};
        use crate::toolchain::Toolchain;
        let c = crate::toolchain::python_pytest::PythonPytest
            .canary(&grading(&["tests/test_core.py"]), "abc123", &mut |_| None)
            .unwrap();
        assert_eq!(c.file, "tests/test_core.py");
        assert_eq!(c.must_fail, "tests/test_core.py::test_abc123_f");
        let mut run = Run::exited("grade#1");
        let result = |status| TestResult {
            status,
            duration_s: 0.0,
            message: None,
        };
        let graded = vec!["tests/test_core.py::test_a".to_string()];
        run.results
            .insert(graded[0].clone(), result(TestStatus::Passed));
        run.results
            .insert(c.must_fail.clone(), result(TestStatus::Failed));
        run.results
            .insert(c.must_pass.clone(), result(TestStatus::Passed));
        assert_eq!(c.tampered(&run, &graded), None);
        run.results
            .insert(c.must_fail.clone(), result(TestStatus::Passed));
        assert!(c.tampered(&run, &graded).is_some());
        run.results.remove(&c.must_fail);
        assert!(
            c.tampered(&run, &graded).is_some(),
            "a missing canary while graded tests pass is tampering too"
        );
        run.results
            .insert(c.must_fail.clone(), result(TestStatus::Failed));
        run.results
            .insert(c.must_pass.clone(), result(TestStatus::Failed));
        assert!(c.tampered(&run, &graded).is_some(), "the nonce test failed");
        // Nothing passed (a timeout, a file that cannot load): no sign of tampering.
        let mut dead = Run::exited("grade#2");
        dead.results
            .insert(graded[0].clone(), result(TestStatus::Error));
        dead.results
            .insert(c.must_fail.clone(), result(TestStatus::Error));
        dead.results
            .insert(c.must_pass.clone(), result(TestStatus::Error));
        assert_eq!(c.tampered(&dead, &graded), None);
        assert_eq!(c.tampered(&Run::exited("grade#3"), &graded), None);
    }

    fn grading(files: &[&str]) -> Grading {
        Grading::new(
            "jest --ci",
            Vec::new(),
            files.iter().map(|f| f.to_string()).collect(),
            None,
        )
    }

    #[test]
    fn javascript_tests_are_appended_in_the_file_s_own_style() {
        let cjs = "const { test } = require('node:test');\ntest('x', () => {});\n";
        let esm = "import { test } from 'node:test';\ntest('x', () => {});\n";
        let read = |t: &'static str| move |_: &str| Some(t.to_string());
        let c = javascript(
            &grading(&["test/a.test.js"]),
            "ab12",
            &mut read(cjs),
            JsStyle::NodeTest,
        )
        .unwrap();
        assert_eq!(c.must_fail, "test/a.test.js::swe_forge_ab12_f");
        assert_eq!(c.must_pass, "test/a.test.js::swe_forge_ab12_p");
        assert!(c
            .text
            .contains("require('node:test').test('swe_forge_ab12_f'"));
        let c = javascript(
            &grading(&["test/a.test.mjs"]),
            "ab12",
            &mut read(esm),
            JsStyle::NodeTest,
        )
        .unwrap();
        assert!(c
            .text
            .contains("import { test as swe_forge_test_ab12 } from 'node:test';"));
        let c = javascript(
            &grading(&["t.spec.ts"]),
            "ab12",
            &mut read(esm),
            JsStyle::Jest,
        )
        .unwrap();
        assert!(c.text.contains("\ntest('swe_forge_ab12_p'"), "{}", c.text);
        assert!(javascript(&grading(&["t.js"]), "ab12", &mut |_| None, JsStyle::Mocha).is_none());
        let globals = "const { test, expect } = require('@jest/globals');\n";
        let c = javascript(
            &grading(&["t.test.js"]),
            "ab12",
            &mut read(globals),
            JsStyle::Jest,
        )
        .unwrap();
        assert!(
            c.text
                .contains("require('@jest/globals').expect('ab12').toBe('');"),
            "{}",
            c.text
        );
    }

    #[test]
    fn javascript_canaries_run_in_node() {
        if std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: no node");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.test.js");
        let original =
            "'use strict';\nconst { test } = require('node:test');\ntest('one', () => {})\n";
        let c = javascript(
            &grading(&["a.test.js"]),
            "0f0f",
            &mut |_| Some(original.to_string()),
            JsStyle::NodeTest,
        )
        .unwrap();
        std::fs::write(&file, format!("{original}{}", c.text)).unwrap();
        let out = std::process::Command::new("node")
            .args(["--test", "--test-reporter=tap"])
            .arg(&file)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("not ok 2 - swe_forge_0f0f_f"), "{stdout}");
        assert!(stdout.contains("ok 3 - swe_forge_0f0f_p"), "{stdout}");
        assert!(stdout.contains("ok 1 - one"), "{stdout}");
    }

    #[test]
    fn java_methods_go_into_the_class_named_as_the_file() {
        let text = "package a.b;\n\nimport org.junit.jupiter.api.Test;\n\nclass Helper {\n}\n\n\
                    public class CartTest {\n    @Test\n    void adds() {}\n}\n\nclass After { }\n";
        let c = java_in("src/test/java/a/b/CartTest.java", text, "c0de").unwrap();
        assert_eq!(c.must_fail, "a.b.CartTest#swe_forge_c0de_f");
        assert_eq!(c.must_pass, "a.b.CartTest#swe_forge_c0de_p");
        let whole = c.whole.unwrap();
        assert!(whole.starts_with("package a.b;"));
        assert!(whole.ends_with("    }\n}\n\nclass After { }\n"), "{whole}");
        assert!(whole.contains("@org.junit.jupiter.api.Test\n    public void swe_forge_c0de_f()"));
        // The result still parses.
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_java::LANGUAGE.into())
            .unwrap();
        assert!(!parser.parse(&whole, None).unwrap().root_node().has_error());

        let junit4 = "import org.junit.Test;\npublic class T { @Test public void t() {} }";
        let c = java_in("T.java", junit4, "c0de").unwrap();
        assert_eq!(c.must_fail, "T#swe_forge_c0de_f");
        assert!(c.whole.unwrap().contains("@org.junit.Test"));
        assert!(
            java_in("T.java", "class T {}", "c0de").is_none(),
            "no JUnit"
        );
        assert!(java_in("T.java", "import org.junit.Test; class T {", "c0de").is_none());
        let suite = "import org.junit.runner.RunWith;\nimport org.junit.Test;\n\
                     @RunWith(Suite.class)\npublic class T { @Test public void t() {} }";
        assert!(
            java_in("T.java", suite, "c0de").is_none(),
            "a runner decides"
        );
        let abstract_base = "import org.junit.jupiter.api.Test;\n\
                             public abstract class T { @Test void t() {} }";
        assert!(
            java_in("T.java", abstract_base, "c0de").is_none(),
            "abstract"
        );
        let other_name = "import org.junit.jupiter.api.Test;\nclass Other { @Test void t() {} }";
        assert!(
            java_in("T.java", other_name, "c0de").is_none(),
            "no class named T"
        );
    }
}
