//! Tests whose outcome depends on which other tests run (`tests/fixtures/order_doctests`): the
//! doctests in `docs/usage.rst` need a test under `tests/` to have run first (an autouse
//! fixture fills `doctest_namespace`), and `test_registry_seen` needs `tests/test_early.py`.
//! Verification runs each candidate's grading command (here `--grading-scope files`: the files of
//! the tests that execute the mutated lines, whole, in the suite's order), reads FAIL_TO_PASS and PASS_TO_PASS from its runs,
//! drops and counts the tests that do not pass under it on the clean code, and never rejects a
//! candidate as flaky for them; the audit, which runs the same command, passes every task.

mod common;
use common::*;
use serde_json::Value;

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn order_dependent_tests_are_dropped_and_every_grader_keeps_the_suite_s_order() {
    let (out, dir) = run_fixture(
        "order_doctests",
        &["--max-candidates", "40", "--grading-scope", "files"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out_dir = dir.path().join("out");
    let decided = jsonl(&out_dir.join("candidates.jsonl"));
    assert!(!decided.is_empty(), "{}", text(&out));
    for c in &decided {
        assert_ne!(c["reason"], "flaky", "{c}");
    }
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    let of = |function: &str| -> Vec<&Value> {
        tasks
            .iter()
            .filter(|t| t["metadata"]["location"]["function"] == function)
            .collect()
    };

    // `add`: its doctest and its test both grade it; the command runs tests/ before docs/.
    let add = of("add");
    assert!(!add.is_empty(), "no task for add: {decided:?}");
    let killed_by_doctest = add
        .iter()
        .find(|t| strings(&t["FAIL_TO_PASS"]).contains(&"docs/usage.rst::usage.rst".to_string()))
        .unwrap_or_else(|| panic!("no add task graded by its doctest: {add:?}"));
    let grading = &killed_by_doctest["metadata"]["grading"];
    assert_eq!(
        strings(&grading["files"]),
        vec!["tests/test_early.py", "docs/usage.rst"],
        "{grading}"
    );
    assert!(
        strings(&grading["options"])
            .windows(2)
            .any(|w| w == ["-c", "pyproject.toml"]),
        "{grading}"
    );
    assert_eq!(grading["config"]["path"], "pyproject.toml", "{grading}");

    // `double`: tests/test_late.py alone is its grading command; `test_registry_seen` fails
    // there on the clean code, so it is dropped and counted, and the task stands.
    let double = of("double");
    assert!(!double.is_empty(), "no task for double: {decided:?}");
    for t in &double {
        assert_eq!(
            strings(&t["metadata"]["grading"]["files"]),
            vec!["tests/test_late.py"]
        );
        assert_eq!(
            strings(&t["FAIL_TO_PASS"]),
            vec!["tests/test_late.py::test_double"]
        );
        let p2p = strings(&t["PASS_TO_PASS"]);
        assert!(
            !p2p.contains(&"tests/test_late.py::test_registry_seen".to_string()),
            "{p2p:?}"
        );
        assert_eq!(
            t["metadata"]["dropped_test_ids"]["order_dependent"], 1,
            "{}",
            t["metadata"]["dropped_test_ids"]
        );
    }

    // `greet`: only the doctest runs it, and alone the doctest cannot pass: not killed under
    // the grading command, never flaky.
    for c in decided.iter().filter(|c| c["function"] == "greet") {
        assert_ne!(c["status"], "accepted", "{c}");
    }

    // The audit runs each record's grading command: every task is valid.
    let audit = bin()
        .arg("audit")
        .arg(out_dir.join("tasks.jsonl"))
        .args(["--sandbox", "local", "--json"])
        .output()
        .unwrap();
    assert_eq!(audit.status.code(), Some(0), "{}", text(&audit));
}
