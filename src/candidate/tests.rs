//! Unit tests of the enumeration, and the fixtures the other modules' tests share.

use super::*;
use crate::lang::Language;
use crate::mutator::{load_embedded, load_str, Mutator};
use tree_sitter::Parser;

pub(super) fn python_rules() -> Vec<Mutator> {
    load_embedded(Language::Python).unwrap()
}

fn rule(id: &str) -> Mutator {
    python_rules().into_iter().find(|r| r.id == id).unwrap()
}

pub(super) fn parses_cleanly(text: &str) -> bool {
    let mut p = Parser::new();
    p.set_language(&Language::Python.grammar()).unwrap();
    !p.parse(text, None).unwrap().root_node().has_error()
}

pub(super) const SHOP: &str = r#""""A shop: module docstring with a < b inside."""
import sys

LIMIT = 10 if sys.maxsize > 2 else 5


class Ledger:
    """Keeps entries; docstring mentions x == y."""

    rate = 2 * 3

    def reserve(self, amount):
        """Reserve `amount` if amount < LIMIT."""
        if amount <= 0:
            raise ValueError("amount")
        self.total = self.total + amount
        return self.total > LIMIT

    @staticmethod
    def outer(xs):
        def inner(x):
            return x * 2
        return [inner(x) for x in xs if x != 0]


async def fetch(client, key):
    data = await client.get(key, timeout=3)
    return data


def main():
    print(Ledger().reserve(1) == True)


if __name__ == "__main__":
    main()
"#;

#[test]
fn candidates_live_in_function_bodies_with_qualified_names() {
    let rules = python_rules();
    let cands = enumerate_source("shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap();
    assert!(!cands.is_empty());
    let lines: Vec<&str> = SHOP.lines().collect();
    for c in &cands {
        // Never at module or class level, never in a docstring or the script-only `main`.
        assert!(
            [
                "Ledger.reserve",
                "Ledger.outer",
                "Ledger.outer.inner",
                "fetch"
            ]
            .contains(&c.function.as_str()),
            "{} in {}",
            c.mutator,
            c.function
        );
        assert!(c.line_range.0 >= c.function_lines.0 && c.line_range.1 <= c.function_lines.1);
        let first = lines[c.line_range.0 - 1];
        assert!(
            !first.trim_start().starts_with("\"\"\""),
            "docstring mutated: {c:?}"
        );
        let buggy = c.apply(SHOP);
        assert_ne!(buggy, SHOP);
        assert!(
            parses_cleanly(&buggy),
            "{} produced a syntax error:\n{}",
            c.mutator,
            c.after
        );
        assert_eq!(c.id, c.hash[..16]);
        assert_eq!(&SHOP[c.byte_range.0..c.byte_range.1], c.before);
    }
    let fetch = cands.iter().find(|c| c.function == "fetch").unwrap();
    assert_eq!(fetch.function_lines, (26, 28));
    let inner = cands
        .iter()
        .find(|c| c.function == "Ledger.outer.inner")
        .unwrap();
    assert_eq!(inner.function_lines, (21, 22));
    assert!(cands
        .iter()
        .any(|c| c.mutator == "py-drop-kwarg" && c.after.is_empty()));
    // Sorted by (file, start, end, mutator).
    let keys: Vec<_> = cands.iter().map(|c| c.order_key()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn script_only_functions_are_left_alone_but_shared_ones_are_not() {
    let src = "def helper(a, b):\n    return a < b\n\n\ndef _demo():\n    return 1 < 2\n\n\nx = helper(1, 2)\n\nif __name__ == '__main__':\n    _demo()\n    helper(3, 4)\n";
    let cands = enumerate_source(
        "m.py",
        src.as_bytes(),
        Language::Python,
        &[rule("py-compare-boundary")],
    )
    .unwrap();
    let functions: Vec<&str> = cands.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(functions, ["helper"]);
}

#[test]
fn duplicate_edits_are_dropped_and_hashes_are_stable() {
    let twin = load_str(
        "twin.yaml",
        r#"
id: py-twin-eq
language: python
category: logic
description: Same edit as py-eq-flip.
issue_hints: [twin]
query: "(comparison_operator operators: _ @target)"
rewrite: {action: replace, map: {"==": "!="}}
examples:
  - {before: "def f(a):\n    return a == 1\n", after: "def f(a):\n    return a != 1\n"}
"#,
    )
    .unwrap();
    let src = "def f(a, b):\n    return a == b\n";
    let both = [rule("py-eq-flip"), twin.clone()];
    let cands = enumerate_source("f.py", src.as_bytes(), Language::Python, &both).unwrap();
    assert_eq!(cands.len(), 1);
    assert_eq!(cands[0].mutator, "py-eq-flip"); // the first in (range, id) order wins
    let again = enumerate_source("f.py", src.as_bytes(), Language::Python, &[twin]).unwrap();
    assert_eq!(again[0].hash, cands[0].hash, "same buggy file, same hash");
    let elsewhere = enumerate_source("g.py", src.as_bytes(), Language::Python, &both).unwrap();
    assert_ne!(elsewhere[0].hash, cands[0].hash);

    // The same buggy file from a different range is the same candidate: rewriting the whole
    // comparison `a == b` into `a != b` is rewriting its operator.
    let whole = load_str(
        "whole.yaml",
        r#"
id: py-whole-neq
language: python
category: logic
description: Rewrites a whole equality.
issue_hints: [whole]
query: "(comparison_operator (identifier) @l \"==\" (identifier) @r) @target"
rewrite: {action: template, template: "{{l}} != {{r}}"}
examples:
  - {before: "def f(a, b):\n    return a == b\n", after: "def f(a, b):\n    return a != b\n"}
"#,
    )
    .unwrap();
    let cands = enumerate_source(
        "f.py",
        src.as_bytes(),
        Language::Python,
        &[rule("py-eq-flip"), whole],
    )
    .unwrap();
    assert_eq!(cands.len(), 1);
    assert_eq!(cands[0].mutator, "py-whole-neq"); // it starts earlier
    assert_eq!(cands[0].hash, again[0].hash);
}

#[test]
fn no_op_and_invalid_edits_are_dropped() {
    let noop = load_str(
        "noop.yaml",
        r#"
id: py-noop
language: python
category: logic
description: Rewrites `==` into itself, and `<` into something else.
issue_hints: [nothing]
query: "(comparison_operator operators: _ @target)"
rewrite: {action: replace, map: {"==": "==", "<": ">"}}
examples:
  - {before: "def f(a):\n    return a < 1\n", after: "def f(a):\n    return a > 1\n"}
"#,
    )
    .unwrap();
    let src = "def f(a, b):\n    return a == b\n";
    assert!(
        enumerate_source("f.py", src.as_bytes(), Language::Python, &[noop])
            .unwrap()
            .is_empty()
    );

    // A rule whose edits are mostly broken: open a bracket, or join two names.
    let broken = load_str(
        "broken.yaml",
        r#"
id: py-broken
language: python
category: wrong-return
description: Breaks returns.
issue_hints: [broken]
query: "(return_statement (_) @target)"
rewrite: {action: replace, text: ["(", "a b", "x if y", "[x", "lambda: 0"]}
examples:
  - {before: "def f(a):\n    return a\n", after: "def f(a):\n    return lambda: 0\n"}
"#,
    )
    .unwrap();
    let src = "def f(a):\n    if a:\n        return(a)\n    return a + 1\n\n\ndef g(b):\n    return [\n        b,\n    ]\n";
    let cands = enumerate_source("f.py", src.as_bytes(), Language::Python, &[broken]).unwrap();
    assert_eq!(cands.len(), 3, "{cands:#?}");
    assert!(cands.iter().all(|c| c.after.trim() == "lambda: 0"));
    assert!(cands.iter().all(|c| parses_cleanly(&c.apply(src))));
}

#[test]
fn bad_files_are_skipped_with_a_reason_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.py"),
        "def f(a, b):\n    return a < b\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("latin1.py"),
        b"def f():\n    return '\xe9'\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.py"), "def f(:\n    return 1\n").unwrap();
    let files: Vec<String> = ["broken.py", "good.py", "latin1.py", "missing.py"]
        .map(String::from)
        .to_vec();
    let e = enumerate(dir.path(), &files, Language::Python, &python_rules());
    assert_eq!(e.files, 1);
    assert_eq!(e.lines, 2);
    assert!(!e.candidates.is_empty());
    assert!(e.candidates.iter().all(|c| c.file == "good.py"));
    let reasons: Vec<(&str, &str)> = e
        .skipped
        .iter()
        .map(|s| (s.file.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(reasons[0], ("broken.py", "syntax errors in the source"));
    assert_eq!(reasons[1], ("latin1.py", "not valid UTF-8"));
    assert_eq!(reasons[2].0, "missing.py");
    assert!(reasons[2].1.starts_with("cannot read"));
}

#[test]
fn java_without_rules_yields_nothing() {
    let src = "class A { int f(int a) { return a < 1 ? 0 : 1; } }";
    assert!(
        enumerate_source("A.java", src.as_bytes(), Language::Java, &[])
            .unwrap()
            .is_empty()
    );
    // Python rules are ignored for Java files.
    assert!(
        enumerate_source("A.java", src.as_bytes(), Language::Java, &python_rules())
            .unwrap()
            .is_empty()
    );
}
