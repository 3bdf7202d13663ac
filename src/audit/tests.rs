//! Unit tests of audit's judging, sampling and reporting.

use super::*;
use crate::lang::Language;
use crate::run::TestResult;
use crate::task::{Difficulty, EnvironmentInfo, Evidence, Location, TaskMetadata};

/// A small Python task record (also for other modules' tests).
pub(crate) fn task(id: &str) -> Task {
    Task {
        instance_id: id.into(),
        repo: "pyshelf".into(),
        base_commit: "a".repeat(40),
        patch: "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x\n+y\n".into(),
        test_patch: String::new(),
        problem_statement: "`f` returns wrong results\n".into(),
        hints_text: String::new(),
        created_at: "2026-01-01T00:00:00Z".into(),
        version: "0".into(),
        environment_setup_commit: "a".repeat(40),
        fail_to_pass: vec!["t.py::test_a".into(), "t.py::test_b".into()],
        pass_to_pass: vec!["t.py::test_c".into()],
        bug_patch: "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-y\n+x\n".into(),
        image_name: None,
        language: Language::Python,
        metadata: TaskMetadata {
            mutators: vec!["py-arith".into()],
            category: "operator".into(),
            candidate_id: "0123".into(),
            location: Location {
                file: "m.py".into(),
                function: "f".into(),
                lines: (1, 1),
            },
            difficulty: Difficulty {
                category: "operator".into(),
                killing_tests: 2,
                function_lines: 1,
                fix_lines: 2,
                files_in_fix: 1,
                synthesized_tests: false,
                direct_call: false,
                issue_names_function: false,
                issue_names_file: false,
                score: 0.5,
            },
            verification: Evidence {
                repeats: 3,
                sandbox: "local".into(),
                clean_runs: vec![],
                runs: vec![],
                reused: vec![],
                nondeterministic: Default::default(),
            },
            environment: EnvironmentInfo {
                seed: String::new(),
                source: "/nowhere".into(),
                install: None,
                test_command: "python -m pytest".into(),
                python_path: vec![".".into()],
                toolchain: None,
                dependencies: None,
            },
            tool_version: "0.1.0".into(),
            issue_style: "report".into(),
            issue_detail: String::new(),
            issue_rewrite: Default::default(),
            start_state: None,
            dropped_test_ids: Default::default(),
            grading: None,
        },
    }
}

fn run(statuses: &[(&str, TestStatus)]) -> Run {
    Run {
        label: "audit".into(),
        requested: None,
        end: RunEnd::Exited,
        exit_code: Some(1),
        signal: None,
        results: statuses
            .iter()
            .map(|(id, s)| {
                (
                    id.to_string(),
                    TestResult {
                        status: *s,
                        duration_s: 0.0,
                        message: None,
                    },
                )
            })
            .collect(),
        duration_s: 0.1,
        cpu_s: None,
        log_digest: String::new(),
        log_path: None,
        anomaly: None,
        oom_kills: 0,
        collection_errors: Default::default(),
        nondeterministic: Default::default(),
        file_order: Vec::new(),
        indirect: None,
    }
}

use TestStatus::{Error, Failed, Missing, Passed};

#[test]
fn sample_is_deterministic_sized_and_in_file_order() {
    let keys: Vec<String> = (0..50).map(|i| format!("task-{i}")).collect();
    let a = sample(&keys, 10, 0);
    assert_eq!(a.len(), 10);
    assert_eq!(a, sample(&keys, 10, 0));
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_ne!(a, sample(&keys, 10, 1), "another seed, another sample");
    assert_eq!(sample(&keys, 100, 3), (0..50).collect::<Vec<_>>());
    assert!(sample(&keys, 0, 3).is_empty());
    // The sample depends on the ids, not on their order in the file.
    let mut reversed = keys.clone();
    reversed.reverse();
    let mut from_reversed: Vec<String> = sample(&reversed, 10, 0)
        .into_iter()
        .map(|i| reversed[i].clone())
        .collect();
    let mut from_keys: Vec<String> = a.iter().map(|&i| keys[i].clone()).collect();
    from_reversed.sort();
    from_keys.sort();
    assert_eq!(from_reversed, from_keys);
}

#[test]
fn schema_needs_the_required_fields() {
    assert_eq!(schema_problem(&task("x")), None);
    let mut t = task("x");
    t.fail_to_pass.clear();
    t.bug_patch = " ".into();
    assert_eq!(
        schema_problem(&t).as_deref(),
        Some("empty: bug_patch, FAIL_TO_PASS")
    );
    let mut t = task("x");
    t.pass_to_pass.push(String::new());
    assert_eq!(schema_problem(&t).as_deref(), Some("a test id is empty"));
}

#[test]
fn records_parse_and_duplicates_are_found() {
    let line = serde_json::to_string(&task("a")).unwrap();
    let other = serde_json::to_string(&task("b")).unwrap();
    let text = format!("{line}\n\n{{\"instance_id\": 3}}\n{other}\n{line}\n");
    let records = parse_records(&text);
    assert_eq!(records.len(), 4);
    assert_eq!(records[1].key, "line 3");
    assert!(records[1]
        .parsed
        .as_ref()
        .unwrap_err()
        .starts_with("not a task record: "));
    assert_eq!(
        records.iter().map(|r| r.line).collect::<Vec<_>>(),
        vec![1, 3, 4, 5]
    );
    let dups = duplicate_lines(&records);
    assert_eq!(dups, HashMap::from([(3, 1)]));
}

#[test]
fn buggy_run_needs_fail_to_pass_failing_and_pass_to_pass_passing() {
    let t = task("x");
    let good = run(&[
        ("t.py::test_a", Failed),
        ("t.py::test_b", Error),
        ("t.py::test_c", Passed),
    ]);
    assert_eq!(judge_buggy(&good, &t), None);
    let p = judge_buggy(
        &run(&[("t.py::test_a", Failed), ("t.py::test_c", Passed)]),
        &t,
    )
    .unwrap();
    assert_eq!(p.reason, Invalid::FailToPassPassesOnBuggy);
    assert_eq!(
        p.detail,
        "1 of 2 FAIL_TO_PASS tests do not fail on the buggy code: t.py::test_b (MISSING)"
    );
    let p = judge_buggy(
        &run(&[
            ("t.py::test_a", Failed),
            ("t.py::test_b", Failed),
            ("t.py::test_c", Failed),
        ]),
        &t,
    )
    .unwrap();
    assert_eq!(p.reason, Invalid::PassToPassFailsOnBuggy);
    assert!(p.detail.contains("t.py::test_c (FAILED)"), "{}", p.detail);
    assert!(p.detail.contains("on the buggy code"), "{}", p.detail);
}

#[test]
fn fixed_run_needs_every_listed_test_passing() {
    let t = task("x");
    let all = |s: TestStatus| {
        run(&[
            ("t.py::test_a", Passed),
            ("t.py::test_b", Passed),
            ("t.py::test_c", s),
        ])
    };
    assert_eq!(judge_fixed(&all(Passed), &t), None);
    let p = judge_fixed(&all(Missing), &t).unwrap();
    assert_eq!(p.reason, Invalid::PassToPassFailsWithFix);
    assert!(p.detail.contains("with the gold fix"), "{}", p.detail);
    let mut timed_out = run(&[("t.py::test_a", Passed)]);
    timed_out.end = RunEnd::TimedOut;
    let p = judge_fixed(&timed_out, &t).unwrap();
    assert_eq!(p.reason, Invalid::FailToPassFailsWithFix);
    assert!(p.detail.ends_with("[the run timed out]"), "{}", p.detail);
}

#[test]
fn details_name_a_few_tests_and_count_the_rest() {
    let ids: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
    let d = tests_detail(&ids, 9, "tests fail", &run(&[]));
    assert_eq!(d, "8 of 9 tests fail: t0, t1, t2, t3, t4 and 3 more");
}

#[test]
fn verdict_is_the_first_problem_and_summary_counts_reasons() {
    let ok = TaskAudit::new("a".into(), 1, vec![]);
    assert!(ok.is_ok());
    assert_eq!(ok.reason, None);
    let bad = TaskAudit::new(
        "b".into(),
        2,
        vec![
            Problem::new(Invalid::PatchDoesNotApply, "bug_patch: no"),
            Problem::new(Invalid::IssueLeak, "diff"),
        ],
    );
    assert_eq!(bad.verdict, Status::Invalid);
    assert_eq!(bad.reason, Some(Invalid::PatchDoesNotApply));
    assert_eq!(bad.detail, "bug_patch: no");
    let json = serde_json::to_value(&bad).unwrap();
    assert_eq!(json["verdict"], "invalid");
    assert_eq!(json["reason"], "patch-does-not-apply");
    assert_eq!(json["problems"][1]["reason"], "issue-leak");
    let cfg = AuditConfig {
        tasks: "t.jsonl".into(),
        sample: None,
        seed: 0,
        sandbox: SandboxChoice::Local,
        cache: "c".into(),
        limits: Limits::default(),
        progress: false,
        recheck_identical: false,
    };
    let s = summarize(&cfg, 5, &[ok, bad], 1.0);
    assert_eq!((s.tasks, s.checked, s.ok, s.invalid), (5, 2, 1, 1));
    assert_eq!(
        s.reasons,
        BTreeMap::from([("patch-does-not-apply".into(), 1)])
    );
}

#[test]
fn budget_grows_with_the_recorded_runs() {
    let mut t = task("x");
    assert_eq!(budget(&t).wall, Duration::from_secs(60));
    t.metadata.verification.runs.push(run(&[]));
    t.metadata.verification.runs[0].duration_s = 2.0;
    assert_eq!(budget(&t).wall, Duration::from_secs(80));
}

#[test]
fn a_fixed_run_is_keyed_by_environment_tree_and_the_set_of_tests() {
    let t = task("a");
    let ab = ["t::a".to_string(), "t::b".to_string()];
    let ba = ["t::b".to_string(), "t::a".to_string()];
    let key = |env: &str, tree: &str, tests: &[String]| fixed_run_key(env, &t, tree, tests);
    assert_eq!(key("e", "1", &ab), key("e", "1", &ba));
    assert_ne!(key("e", "1", &ab), key("e", "2", &ab));
    assert_ne!(key("e", "1", &ab), key("f", "1", &ab));
    assert_ne!(key("e", "1", &ab), key("e", "1", &ab[..1]));
    let mut other = task("b");
    other.metadata.environment.test_command = "python -m pytest -x".into();
    assert_ne!(key("e", "1", &ab), fixed_run_key("e", &other, "1", &ab));
}

#[test]
fn a_run_that_built_nothing_is_the_environment_s_problem() {
    let t = task("x");
    let mut r = run(&[]);
    r.anomaly = Some("build failed: maven-failsafe-plugin: no goal integration-test".into());
    for p in [judge_buggy(&r, &t).unwrap(), judge_fixed(&r, &t).unwrap()] {
        assert_eq!(p.reason, Invalid::Environment);
        assert!(
            p.detail.contains("ran none of the 3 listed tests"),
            "{}",
            p.detail
        );
        assert!(
            p.detail.contains("no goal integration-test"),
            "{}",
            p.detail
        );
    }
    // Without a reason, or with some test reported, the tests' own verdicts stand.
    let quiet = run(&[]);
    assert_eq!(
        judge_buggy(&quiet, &t).unwrap().reason,
        Invalid::FailToPassPassesOnBuggy
    );
    let mut some = run(&[("t.py::test_a", Failed)]);
    some.anomaly = Some("exit 1".into());
    assert_eq!(
        judge_buggy(&some, &t).unwrap().reason,
        Invalid::FailToPassPassesOnBuggy
    );
}
