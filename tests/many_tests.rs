//! A suite of 3,001 tests with long ids (`tests/fixtures/many_tests`): naming all of a task's
//! tests takes more than the 128 KiB one command-line argument may hold, and the audit, which
//! runs them in fresh processes, failed on every such task ("Argument list too long"; click's
//! 32 tasks). The tasks `run` makes there without a bound on the grading command
//! (`--grading-max-tests 0`) must all audit ok.

mod common;
use common::*;

#[test]
fn tasks_of_a_suite_too_wide_for_one_argument_audit_ok() {
    // Every covering test, as `--grading-max-tests 0` (or `--grading-scope suite`) grades:
    // the default bound would name 100.
    let (out, dir) = run_fixture(
        "many_tests",
        &["--max-candidates", "3", "--grading-max-tests", "0"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let tasks_path = dir.path().join("out/tasks.jsonl");
    let tasks = jsonl(&tasks_path);
    assert!(!tasks.is_empty(), "{}", text(&out));
    let ids: usize = tasks
        .iter()
        .map(|t| {
            t["FAIL_TO_PASS"].as_array().unwrap().len()
                + t["PASS_TO_PASS"].as_array().unwrap().len()
        })
        .max()
        .unwrap();
    assert!(ids > 2_000, "the tasks name {ids} tests");
    let tmp = dir.path().join("tmp");
    let audit = bin()
        .env("TMPDIR", &tmp)
        .arg("audit")
        .arg(&tasks_path)
        .args(["--sandbox", "local", "--json"])
        .output()
        .unwrap();
    assert_eq!(audit.status.code(), Some(0), "{}", text(&audit));
    let last = String::from_utf8_lossy(&audit.stdout)
        .lines()
        .last()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .unwrap();
    assert_eq!(last["ok"], tasks.len(), "{last}");
}
