//! A Java project laid out as maintainers ship them (tests/fixtures/java_real_layout), run
//! with the local sandbox against the host's Debian Maven repository: its parent POM version
//! (commons-parent 52) is mapped to Debian's, its unpackaged plugin and its unbuildable module
//! are left out, and the record's environment says so; no task mutates the left-out module;
//! JUnit 5 parameterized invocations grade as their method and @Nested tests by their nested
//! class; the POM's Surefire includes and excludes hold; a test reading a test resource passes;
//! the grading command is Maven's with the graded tests selected; the SWE-bench export's
//! eval script runs it with the Maven log parser; and, Java synthesizing no tests, the
//! mutants of a method no test calls are drawn last. A multi-module JUnit 4 project
//! (tests/fixtures/java_junit4_modules) grades a `@RunWith(Parameterized)` test by its method.

mod common;
use common::*;
use std::collections::BTreeSet;

#[test]
fn a_real_layout_builds_offline_and_grades_its_parameterized_and_nested_tests() {
    if !maven_or_skip("a_real_layout_builds_offline_and_grades_its_parameterized_and_nested_tests")
    {
        return;
    }
    let (o, dir) = run_fixture("java_real_layout", &["--max-candidates", "6"]);
    assert!(o.status.success(), "{}", text(&o));
    // Java synthesizes no tests: the mutants of the method no test calls are drawn only for
    // places the others leave (none, with six of many).
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap(),
    )
    .unwrap();
    let seed = &summary["seeds"][0];
    assert!(
        seed["enumerated_not_executed"].as_u64().unwrap_or(0) >= 1,
        "{seed}"
    );
    let candidates = jsonl(&dir.path().join("out/candidates.jsonl"));
    assert_eq!(candidates.len(), 6, "{candidates:?}");
    for c in candidates {
        assert_ne!(c["function"], "Temperature.toKelvin", "{c}");
        assert_ne!(c["reason"], "not-covered", "{c}");
    }
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(!tasks.is_empty(), "no task accepted:\n{}", text(&o));
    let mut graded: BTreeSet<String> = BTreeSet::new();
    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        let overlay = &t["metadata"]["environment"]["dependencies"]["maven_overlay"];
        let mapped = overlay["mapped"].as_array().expect("a mapping");
        assert!(
            mapped.iter().any(
                |m| m["asked"] == "org.apache.commons:commons-parent:52" && m["debian"] == "56"
            ),
            "{id}: {overlay}"
        );
        assert!(
            overlay["dropped_plugins"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == "com.github.siom79.japicmp:japicmp-maven-plugin"),
            "{id}: {overlay}"
        );
        assert_eq!(
            overlay["dropped_modules"],
            serde_json::json!([{"artifact": "realish-legacy", "folder": "legacy"}]),
            "{id}"
        );
        let patch = t["patch"].as_str().unwrap();
        assert!(
            patch.contains("core/src/main/java/fx/Temperature.java"),
            "{id}: {patch}"
        );
        assert!(
            !patch.contains("legacy/"),
            "{id} mutates a left-out module: {patch}"
        );
        let command = t["metadata"]["grading"]["command"].as_str().unwrap();
        assert!(
            command.starts_with("mvn -o -B -s /opt/swe-forge/maven-settings.xml ")
                && command.contains("-Dtest=")
                && command.ends_with(" test"),
            "{id}: {command}"
        );
        for list in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
            for test in t[list].as_array().unwrap() {
                graded.insert(test.as_str().unwrap().to_string());
            }
        }
    }
    // Invocations of a parameterized test grade as their method; nested tests carry their
    // class; Surefire's includes add *Check; its excludes keep Slow* out.
    assert!(
        !graded.iter().any(|t| t.contains('[') || t.contains('{')),
        "{graded:?}"
    );
    let seen = |prefix: &str| graded.iter().any(|t| t.starts_with(prefix));
    assert!(seen("fx.TemperatureTest#describes"), "{graded:?}");
    assert!(seen("fx.TemperatureTest$Conversions#"), "{graded:?}");
    assert!(seen("fx.RangeCheck#"), "{graded:?}");
    assert!(!seen("fx.SlowTest"), "{graded:?}");

    // The SWE-bench record's eval script runs the grading command and reads its verdict with
    // Maven's parser (an export of local records is refused: they have no image).
    for t in &tasks {
        let task: swe_forge::task::Task = serde_json::from_value(t.clone()).unwrap();
        let (script, parser) = swe_forge::export::swebench::eval_script(&task).unwrap();
        assert_eq!(parser, "parse_log_maven");
        assert!(script.contains("verdict.py --swebench"), "{script}");
        assert!(
            script.contains(task.metadata.grading.as_ref().unwrap().command.as_str()),
            "{script}"
        );
    }
}

/// A multi-module JUnit 4 project (tests/fixtures/java_junit4_modules) runs with plain Maven,
/// Surefire's JUnit 4 provider selecting the tests: the only tests of `Scale.scale` are a
/// `@RunWith(Parameterized)` class, whose invocations Surefire names `scales[0]`, `scales[1]`,
/// …, so a selection by the bare method name would run none of them, and no mutant of `scale`
/// would become a task (its tests missing from every run). They grade as `fx.ScaleTest#scales`,
/// selected by a prefix pattern in the grading command.
#[test]
fn a_junit4_multi_module_project_grades_its_parameterized_tests() {
    if !maven_or_skip("a_junit4_multi_module_project_grades_its_parameterized_tests") {
        return;
    }
    let (o, dir) = run_fixture(
        "java_junit4_modules",
        &[
            "--baseline-repeats",
            "1",
            "--repeats",
            "1",
            "--max-candidates",
            "8",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let scaled: Vec<&serde_json::Value> = tasks
        .iter()
        .filter(|t| {
            t["FAIL_TO_PASS"]
                .as_array()
                .unwrap()
                .iter()
                .any(|id| id == "fx.ScaleTest#scales")
        })
        .collect();
    let candidates = jsonl(&dir.path().join("out/candidates.jsonl"));
    assert!(
        !scaled.is_empty(),
        "no task is graded by the parameterized test:\n{candidates:?}\n{}",
        text(&o)
    );
    for t in scaled {
        let patch = t["patch"].as_str().unwrap();
        assert!(patch.contains("lib/src/main/java/fx/Scale.java"), "{patch}");
        let command = t["metadata"]["grading"]["command"].as_str().unwrap();
        assert!(command.contains("fx.ScaleTest#scales*"), "{command}");
    }
}
