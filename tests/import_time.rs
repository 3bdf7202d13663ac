//! Real projects run code while their package is imported. On `tests/fixtures/import_registry`
//! (`wordrules.rules._register` fills a rule table at module level, so per-test coverage
//! attributes its lines to no test):
//!
//! - its mutants are screened with the whole suite (lines run at import count for every test),
//!   so none is "not covered", and the suite kills those it can;
//! - a mutant that makes the import raise breaks the collection of the test file: its tests are
//!   ERRORs, the bug is killed (not a crash), and the issue text quotes the exception; the
//!   requested tests of the other file, which pytest does not run when a selection cannot be
//!   collected, run in a second process and pass.

mod common;
use common::*;

#[test]
fn import_time_code_is_covered_and_a_broken_import_is_a_kill() {
    let (out, dir) = run_fixture("import_registry", &["--max-candidates", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let register: Vec<&serde_json::Value> = cands
        .iter()
        .filter(|c| c["function"] == "_register")
        .collect();
    assert!(register.len() >= 4, "{register:?}");
    for c in &register {
        assert_eq!(c["covering_tests"], 3, "screened with the whole suite: {c}");
        assert_ne!(c["reason"], "not-covered", "{c}");
    }
    let by_mutator = |m: &str| {
        register
            .iter()
            .find(|c| c["mutator"] == m)
            .unwrap_or_else(|| panic!("no {m} candidate in _register: {register:?}"))
    };
    // `_PLURALS[key] = plural` removed: the table stays empty, `test_irregular` fails.
    assert_eq!(by_mutator("py-remove-assignment")["status"], "accepted");
    // `if key in _PLURALS` negated: the first registration raises while importing.
    let broken = by_mutator("py-negate-condition");
    assert_eq!(broken["status"], "accepted", "{broken}");
    assert_eq!(broken["fail_to_pass"], 2, "{broken}");
    // The return value is never used: equivalent, and the suite says so.
    assert_eq!(by_mutator("py-return-none")["reason"], "not-killed");

    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task = tasks
        .iter()
        .find(|t| t["metadata"]["candidate_id"] == broken["id"])
        .expect("the broken import's task");
    let mut f2p: Vec<&str> = task["FAIL_TO_PASS"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    f2p.sort();
    assert_eq!(
        f2p,
        [
            "tests/test_plural.py::test_irregular",
            "tests/test_plural.py::test_regular"
        ]
    );
    let statement = task["problem_statement"].as_str().unwrap();
    assert!(
        statement.contains("ValueError: duplicate rule: person"),
        "{statement}"
    );
    assert!(
        task["PASS_TO_PASS"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("tests/test_text.py::test_initials")),
        "{task}"
    );
    let screen = &task["metadata"]["verification"]["runs"][0];
    assert_eq!(screen["label"], "screen");
    assert_eq!(
        screen["results"]["tests/test_text.py::test_initials"]["status"], "PASSED",
        "{screen}"
    );
    assert!(
        screen["collection_errors"]["tests/test_plural.py"]
            .as_str()
            .is_some_and(|e| e.contains("duplicate rule")),
        "{screen}"
    );
}
