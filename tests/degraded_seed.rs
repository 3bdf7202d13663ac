//! A seed most of whose test files fail to collect on the clean code still runs, but is
//! `degraded`: on `tests/fixtures/uncollected_tests` two of three test files cannot be
//! collected (two test modules share a basename in a `tests/` without `__init__.py`, and one
//! imports a module nothing installs); summary.json, `run`'s output and the report say so,
//! with the files and their errors.

mod common;
use common::*;

#[test]
fn most_test_files_uncollected_makes_a_degraded_seed() {
    let (out, dir) = run_fixture("uncollected_tests", &["--max-candidates", "4"]);
    // The seed ran (its tasks are still made): not a failed run.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap(),
    )
    .unwrap();
    for s in [&summary(&out), &file] {
        let seed = seed_summary(s, "uncollected_tests");
        assert_eq!(seed["status"], "degraded", "{seed}");
        let detail = seed["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("2/3 test files fail to collect on the clean code"),
            "{seed}"
        );
        let d = &seed["degraded"];
        assert_eq!(
            (d["uncollected"].as_u64(), d["total"].as_u64()),
            (Some(2), Some(3)),
            "{seed}"
        );
        let errors = d["errors"].as_object().unwrap();
        assert_eq!(errors.len(), 2, "{seed}");
        assert!(
            errors["tests/test_extras.py"]
                .as_str()
                .unwrap()
                .contains("No module named 'halfsuite_missing_plugin'"),
            "{seed}"
        );
        assert!(errors.contains_key("tests/unit/test_core.py"), "{seed}");
        assert!(seed["decided"].as_u64().unwrap() > 0, "{seed}");
    }

    // The report carries it too.
    let report = bin()
        .args(["report"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let row = seed_summary(&json, "uncollected_tests");
    assert_eq!(row["status"], "degraded", "{row}");
    assert_eq!(row["degraded"]["uncollected"], 2, "{row}");
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("2/3 test files uncollected"), "{html}");
    // (HTML escaping writes `/` as `&#x2f;`.)
    assert!(html.contains("test_extras.py"), "{html}");
}
