//! Code a test runs in another process is covered by no test: per-test coverage is collected in
//! the test process. On `tests/fixtures/subprocess_cli` (`wordcount/cli.py`, which
//! `tests/test_cli.py` only starts as `python -m wordcount`):
//!
//! - a candidate no test covers is screened with the stable tests that start processes or
//!   read the repository's Python files (the probe plugin tells which, in the baseline): the
//!   three command-line tests and `tests/test_meta.py`, never the two in-process tests of
//!   `tests/test_core.py`. So the mutants of `main` that change what the command prints or
//!   returns are killed by the command-line tests and accepted (with those tests as
//!   FAIL_TO_PASS), not left `not-covered`, and those the screen cannot tell apart say so;
//! - the mutants of `legacy.shout`, which nothing runs, are still `not-covered` after those
//!   four tests passed with them.

mod common;
use common::*;

#[test]
fn code_run_in_a_subprocess_is_screened_with_the_tests_that_start_processes() {
    let (out, dir) = run_fixture("subprocess_cli", &["--max-candidates", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let main: Vec<&serde_json::Value> = cands.iter().filter(|c| c["function"] == "main").collect();
    assert!(main.len() >= 3, "{cands:?}");
    for c in &main {
        // Coverage gives these lines to no test...
        assert_eq!(c["covering_tests"], 0, "{c}");
        // ...yet the tests that start processes or read sources screened each: killed by the
        // command-line tests, or passed (then `not-covered`, saying so).
        if c["status"] != "accepted" {
            assert_eq!(c["reason"], "not-covered", "{c}");
            assert!(
                c["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("the 4 stable tests that start processes")),
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
        // The screen ran the tests that start processes or read sources, and no other.
        let screen = &task["metadata"]["verification"]["runs"][0];
        assert_eq!(screen["label"], "screen", "{screen}");
        let mut requested: Vec<&str> = screen["requested"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        requested.sort();
        assert_eq!(
            requested,
            vec![
                "tests/test_cli.py::test_cli_counts_one_argument",
                "tests/test_cli.py::test_cli_sums_the_arguments",
                "tests/test_cli.py::test_cli_without_arguments_is_a_usage_error",
                "tests/test_meta.py::test_the_package_says_what_it_is",
            ],
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
                .is_some_and(|d| d.contains("the 4 stable tests that start processes")),
            "{c}"
        );
    }
}
