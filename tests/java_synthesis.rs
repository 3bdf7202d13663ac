//! Java test synthesis through the binary and the local sandbox (the host's Maven against
//! Debian's offline repository): the survivors of a suite that checks little get a regression
//! test built from the tests' own call, which verifies like any task and stays hidden.

mod common;
use common::*;

#[test]
fn a_java_survivor_gets_a_regression_test_from_the_tests_own_call() {
    if !maven_or_skip("a_java_survivor_gets_a_regression_test_from_the_tests_own_call") {
        return;
    }
    let (out, dir) = run_fixture_synthesizing(
        "java_survivor",
        &[
            "--baseline-repeats",
            "1",
            "--repeats",
            "1",
            "--max-candidates",
            "6",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "java_survivor");
    assert_eq!(seed["status"], "done", "{seed}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let synthesized: Vec<&serde_json::Value> = tasks
        .iter()
        .filter(|t| {
            t["test_patch"]
                .as_str()
                .unwrap()
                .contains("+++ b/src/test/java/fx/WordsCapitalizeRegressionTest.java")
        })
        .collect();
    assert!(
        !synthesized.is_empty(),
        "no survivor got a regression test: {seed}\n{}",
        text(&out)
    );
    // One is built from the test's own call, asserting the clean outcome (others may come
    // from the literal pools: `capitalize("")` tells a removed guard apart).
    let from_the_test = "assertEquals(\"Hello\", outcome(new Call() { public Object run() \
                         throws Throwable { return Words.capitalize(\"hello\"); } }));";
    assert!(
        synthesized
            .iter()
            .any(|t| t["test_patch"].as_str().unwrap().contains(from_the_test)),
        "{synthesized:?}"
    );
    for t in &synthesized {
        let patch = t["test_patch"].as_str().unwrap();
        assert!(patch.contains("return Words.capitalize("), "{patch}");
        // JUnit 4, as the module's tests, and no lambda (the fixture is Java 11, but a
        // project compiled for Java 7 must take it too).
        assert!(patch.contains("import org.junit.Test;"), "{patch}");
        assert!(!patch.contains("->"), "{patch}");
        let f2p: Vec<&str> = t["FAIL_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(!f2p.is_empty());
        for id in &f2p {
            assert!(
                id.starts_with("fx.WordsCapitalizeRegressionTest#testCapitalize"),
                "{t}"
            );
        }
        // The observer class never reaches a task.
        assert!(!patch.contains("SweForgeObserve"), "{patch}");
        // Hidden from the start state: the file is only in test_patch.
        assert!(
            !t["patch"].as_str().unwrap().contains("RegressionTest"),
            "{t}"
        );
    }
}
