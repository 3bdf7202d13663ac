//! Unit tests of the pipeline's wiring.

use super::*;
use crate::verify::Outcome;

#[test]
fn only_selects_named_seeds_and_rejects_unknown_names() {
    let manifest = seed::parse_manifest(
        "seeds:\n  - {name: a, source: \"pypi:a==1\", language: python}\n  - {name: b, source: \"pypi:b==1\", language: python}\n",
        Path::new("m.yaml"),
    )
    .unwrap();
    let names = |only: &[&str]| -> Vec<String> {
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        selected(&manifest, &only)
            .unwrap()
            .iter()
            .map(|s| s.name.clone())
            .collect()
    };
    assert_eq!(names(&[]), ["a", "b"]);
    assert_eq!(names(&["b"]), ["b"]);
    let err = selected(&manifest, &["a".into(), "a,b".into()]).unwrap_err();
    assert!(err.to_string().contains("\"a,b\""), "{err}");
}

fn accepted(f2p: &[&str]) -> Outcome {
    serde_json::from_value(serde_json::json!({
        "verdict": {"status": "accepted"}, "covering": [],
        "FAIL_TO_PASS": f2p, "PASS_TO_PASS": [], "runs": [], "seconds": 0.0
    }))
    .unwrap()
}

#[test]
fn tests_that_cannot_grade_a_task() {
    let files = vec!["tests/test_num.py".to_string()];
    let reason = |f2p: &[&str]| ungradable(&accepted(f2p), &files, py()).map(|(r, _)| r.as_str());
    assert_eq!(reason(&["tests/test_num.py::test_a"]), None);
    // A doctest beside a hidden repository test: the test still grades.
    assert_eq!(
        reason(&["src/num.py::num.ordinal", "tests/test_num.py::test_a"]),
        None
    );
    assert_eq!(reason(&["src/num.py::num.ordinal"]), Some("doctest-only"));
    assert_eq!(
        reason(&[
            "tests/test_num.py::test_a[a day]",
            "src/num.py::num.ordinal"
        ]),
        Some("doctest-only")
    );
    assert_eq!(
        reason(&["tests/test_num.py::test_a[a day]"]),
        Some("unreadable-test-ids")
    );
    assert_eq!(reason(&[]), None);
    // Every failing test drew unseeded random numbers: it may pass with the bug elsewhere.
    let mut random = accepted(&["tests/test_num.py::test_a", "tests/test_num.py::test_b"]);
    for t in ["tests/test_num.py::test_a", "tests/test_num.py::test_b"] {
        random.nondeterministic.insert(t.into(), "random".into());
    }
    assert_eq!(
        ungradable(&random, &files, py()).map(|(r, _)| r.as_str()),
        Some("nondeterministic")
    );
    random.nondeterministic.remove("tests/test_num.py::test_b");
    assert_eq!(ungradable(&random, &files, py()), None);
}

#[test]
fn a_top_up_tracer_run_fits_three_plain_suites_or_is_left_out() {
    // toolz: a whole-suite run of 3.0 s against a 1.7 s suite leaves no room for another
    // run like it.
    assert!(!top_up_fits(3.0, 3.0, 1.7, TRACE_FACTOR));
    assert!(top_up_fits(3.0, 2.0, 1.7, TRACE_FACTOR));
    // boltons: 10.9 s, then a top-up of 3 s, then one more of 3 s fits 18.3 s; a third not.
    assert!(top_up_fits(10.9, 3.0, 6.1, TRACE_FACTOR));
    assert!(top_up_fits(13.9, 3.0, 6.1, TRACE_FACTOR));
    assert!(!top_up_fits(16.9, 3.0, 6.1, TRACE_FACTOR));
    // Unknown suite seconds set no limit.
    assert!(top_up_fits(100.0, 100.0, 0.0, TRACE_FACTOR));
}

fn py() -> &'static dyn crate::toolchain::Toolchain {
    crate::toolchain::ToolchainId::PythonPytest.toolchain()
}

/// A seed's stored evidence is reused only under the set-up it was made with.
#[test]
fn a_seed_resumes_only_under_its_stored_set_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let store = Store::open(&out.join("state.db")).unwrap();
    let set_up = |json: serde_json::Value| -> Fingerprint { serde_json::from_value(json).unwrap() };
    let first = set_up(
        serde_json::json!({"--repeats": 3, "install:": "pip install -e .", "image id": "sha256:1"}),
    );
    // No evidence yet: any set-up goes, and the complete one is stored.
    check_set_up(
        &store,
        out,
        "a",
        &set_up(serde_json::json!({"--repeats": 5})),
        false,
    )
    .unwrap();
    check_set_up(&store, out, "a", &first, true).unwrap();
    assert_eq!(store.fingerprint("a").unwrap(), Some(first.clone()));
    store.put_baseline_json("a", "c0ffee", "{}").unwrap();
    // The same set-up resumes; so does a partial one that agrees on what it names.
    check_set_up(&store, out, "a", &first, true).unwrap();
    check_set_up(
        &store,
        out,
        "a",
        &set_up(serde_json::json!({"--repeats": 3})),
        false,
    )
    .unwrap();
    // Another one is refused, naming each option.
    let other =
        set_up(serde_json::json!({"--repeats": 5, "install:": "true", "image id": "sha256:1"}));
    let err = check_set_up(&store, out, "a", &other, true).unwrap_err();
    let PipelineError::ResumeRefused(ResumeRefused::Mismatch { differences, .. }) = &err else {
        panic!("{err}");
    };
    let names: Vec<&str> = differences.iter().map(|d| d.option.as_str()).collect();
    assert_eq!(names, ["--repeats", "install:"]);
    // The complete check also sees an option the current set-up lacks.
    let no_image = set_up(serde_json::json!({"--repeats": 3, "install:": "pip install -e ."}));
    check_set_up(&store, out, "a", &no_image, false).unwrap();
    let err = check_set_up(&store, out, "a", &no_image, true).unwrap_err();
    assert!(
        err.to_string()
            .contains("image id: sha256:1 stored, (unset) now"),
        "{err}"
    );
    // The stored set-up is not overwritten by a refused one.
    assert_eq!(store.fingerprint("a").unwrap(), Some(first));
}

/// Evidence stored before set-ups were fingerprinted cannot be compared: refused.
#[test]
fn evidence_without_a_fingerprint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    store.put_baseline_json("a", "c0ffee", "{}").unwrap();
    let err = check_set_up(&store, dir.path(), "a", &Fingerprint::default(), false).unwrap_err();
    assert!(
        matches!(&err, PipelineError::ResumeRefused(ResumeRefused::Unfingerprinted { seed, .. }) if seed == "a"),
        "{err}"
    );
    assert!(
        err.to_string().contains("predates set-up fingerprints"),
        "{err}"
    );
}
