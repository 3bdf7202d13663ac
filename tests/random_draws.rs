//! A test that draws unseeded random numbers does not grade a task. On
//! `tests/fixtures/random_draws` (`luckybag.draw` picks with `random.choice`):
//!
//! - swe-forge's probe plugin marks the tests that drew from the global generator without
//!   seeding it; a bug they fail with leaves them out of FAIL_TO_PASS and PASS_TO_PASS, and the
//!   record names them under `metadata.verification.nondeterministic`;
//! - a test that fails with the bug in some runs and not in others does not make the repeats
//!   disagree: it grades nothing;
//! - a test that seeds the generator first grades as any other;
//! - a bug only such tests fail is rejected as `nondeterministic` (synthesis off).

mod common;
use common::*;

const CLAMPED: &str = "tests/test_draw.py::test_draw_clamped";
const SEEDED: &str = "tests/test_draw.py::test_draw_low_seeded";
const EITHER: &str = "tests/test_draw.py::test_draw_either";

#[test]
fn tests_drawing_unseeded_random_numbers_do_not_grade() {
    let (out, dir) = run_fixture("random_draws", &["--max-candidates", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(!tasks.is_empty(), "{}", text(&out));
    let ids = |t: &serde_json::Value, key: &str| -> Vec<String> {
        t[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    // No FAIL_TO_PASS test drew unseeded random numbers in the task's runs with the bug (a bug that
    // makes `draw` return None draws nothing: its tests grade).
    for t in &tasks {
        let runs = t["metadata"]["verification"]["runs"].as_array().unwrap();
        // The runs with the bug (screening, check 2): what a test draws on the fixed code
        // (check 3's runs) does not change that it fails with the bug every time.
        let with_bug = runs.iter().filter(|r| {
            let label = r["label"].as_str().unwrap_or("");
            label.starts_with("buggy") || label.starts_with("screen")
        });
        for id in ids(t, "FAIL_TO_PASS") {
            for r in with_bug.clone() {
                assert!(
                    r["nondeterministic"].get(&id).is_none(),
                    "FAIL_TO_PASS of {} holds {id}, which drew unseeded random numbers in {}",
                    t["instance_id"],
                    r["label"]
                );
            }
        }
    }
    // A bug that both a plain test and the drawing test fail: the plain one grades, the
    // other is named as left out.
    let clamp_high = tasks
        .iter()
        .find(|t| {
            t["metadata"]["verification"]["nondeterministic"][CLAMPED].as_str() == Some("random")
        })
        .unwrap_or_else(|| panic!("no task left {CLAMPED} out: {tasks:#?}"));
    assert!(
        ids(clamp_high, "FAIL_TO_PASS")
            .iter()
            .any(|id| id.starts_with("tests/test_clamp.py::")),
        "{clamp_high}"
    );
    // A test that fails with that bug about every other run does not make the repeats
    // disagree (the candidate is not `flaky`): it grades nothing.
    assert!(
        !ids(clamp_high, "FAIL_TO_PASS")
            .iter()
            .any(|id| id == EITHER),
        "{clamp_high}"
    );
    let buggy = clamp_high["metadata"]["verification"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "buggy#1")
        .unwrap_or_else(|| panic!("no buggy#1: {clamp_high}"));
    assert_eq!(buggy["nondeterministic"][CLAMPED], "random", "{buggy}");
    assert!(
        buggy["nondeterministic"].get(SEEDED).is_none(),
        "a test that seeds the generator draws nothing unseeded: {buggy}"
    );
    // The seeded test grades a task.
    assert!(
        tasks
            .iter()
            .any(|t| ids(t, "FAIL_TO_PASS").iter().any(|id| id == SEEDED)),
        "{tasks:#?}"
    );
    // `doubled`: only the drawing test fails with its bugs.
    let cands = candidate_lines(dir.path());
    let doubled: Vec<&serde_json::Value> = cands
        .iter()
        .filter(|c| c["function"] == "doubled")
        .collect();
    assert!(!doubled.is_empty(), "{cands:#?}");
    for c in &doubled {
        assert_ne!(c["status"], "accepted", "{c}");
    }
    assert!(
        doubled.iter().any(|c| c["reason"] == "nondeterministic"),
        "{doubled:#?}"
    );
}
