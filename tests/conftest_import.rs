//! A bug that breaks an import the suite's `conftest.py` makes: pytest loads no test at all
//! (exit 4, no report). On `tests/fixtures/conftest_import` the negated duplicate check in
//! `wordrules.rules._register` raises while the conftest imports the rules: every stable test
//! is FAIL_TO_PASS (an ERROR with the bug, a pass without), the verdict is a kill, not a crash,
//! and the problem statement quotes the exception.

mod common;
use common::*;

#[test]
fn a_conftest_that_cannot_import_the_package_is_a_kill() {
    let (out, dir) = run_fixture("conftest_import", &["--max-candidates", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let broken = cands
        .iter()
        .find(|c| c["function"] == "_register" && c["mutator"] == "py-negate-condition")
        .unwrap_or_else(|| panic!("no negated condition in _register: {cands:?}"));
    assert_eq!(broken["status"], "accepted", "{broken}");
    assert_eq!(broken["fail_to_pass"], 3, "{broken}");
    assert!(cands.iter().all(|c| c["reason"] != "crash"), "{cands:?}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task = tasks
        .iter()
        .find(|t| t["metadata"]["candidate_id"] == broken["id"])
        .expect("the broken import's task");
    let statement = task["problem_statement"].as_str().unwrap();
    assert!(
        statement.contains("ValueError: duplicate rule: person"),
        "{statement}"
    );
    assert!(!statement.contains("/tmp/"), "{statement}");
}
