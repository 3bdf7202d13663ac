//! Code a test runs in another process is covered by no test: per-test coverage is collected in
//! the test process. On `tests/fixtures/subprocess_cli` (`wordcount/cli.py`, which
//! `tests/test_cli.py` only starts as `python -m wordcount`):
//!
//! - a candidate no test covers is screened with the whole suite, so the mutants of `main` that
//!   change what the command prints or returns are killed by the command-line tests and
//!   accepted (with those tests as FAIL_TO_PASS), not left `not-covered`, and those the suite
//!   cannot tell apart say that all its tests passed;
//! - the mutants of `legacy.shout`, which nothing runs, are still `not-covered` after the whole
//!   suite passed with them.

mod common;
use common::*;

#[test]
fn code_run_in_a_subprocess_is_screened_with_the_whole_suite() {
    let (out, dir) = run_fixture("subprocess_cli", &["--max-candidates", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let main: Vec<&serde_json::Value> = cands.iter().filter(|c| c["function"] == "main").collect();
    assert!(main.len() >= 3, "{cands:?}");
    for c in &main {
        // Coverage gives these lines to no test...
        assert_eq!(c["covering_tests"], 0, "{c}");
        // ...yet the whole suite screened each: killed by the command-line tests, or passed
        // whole (then `not-covered`, saying so).
        if c["status"] != "accepted" {
            assert_eq!(c["reason"], "not-covered", "{c}");
            assert!(
                c["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("all 5 stable tests pass")),
                "{c}"
            );
        }
    }
    let accepted: Vec<&&serde_json::Value> =
        main.iter().filter(|c| c["status"] == "accepted").collect();
    assert!(accepted.len() >= 3, "{main:?}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    for c in &accepted {
        let task = tasks
            .iter()
            .find(|t| t["metadata"]["candidate_id"] == c["id"])
            .unwrap_or_else(|| panic!("no task for {c}"));
        let f2p = task["FAIL_TO_PASS"].as_array().unwrap();
        assert!(!f2p.is_empty(), "{task}");
        for id in f2p {
            assert!(
                id.as_str().unwrap().starts_with("tests/test_cli.py::"),
                "{id} in {task}"
            );
        }
        // The screen ran every stable test.
        let screen = &task["metadata"]["verification"]["runs"][0];
        assert_eq!(screen["label"], "screen", "{screen}");
        assert_eq!(
            screen["requested"].as_array().map(Vec::len),
            Some(5),
            "{screen}"
        );
    }
    let legacy: Vec<&serde_json::Value> =
        cands.iter().filter(|c| c["function"] == "shout").collect();
    assert!(!legacy.is_empty(), "{cands:?}");
    for c in &legacy {
        assert_eq!(c["reason"], "not-covered", "{c}");
        assert!(
            c["detail"]
                .as_str()
                .is_some_and(|d| d.contains("all 5 stable tests pass")),
            "{c}"
        );
    }
}
