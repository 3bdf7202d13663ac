//! Java seeds that cannot make tasks are handled with a clear reason, through the binary and
//! the local sandbox (the host's Maven against Debian's offline repository): sources that do
//! not compile at baseline, a test that hangs, a mutant that does not compile, and Java
//! sources without Maven.

mod common;
use common::*;

/// Main sources that do not compile: the seed is rejected at baseline, naming the file.
#[test]
fn java_seed_that_does_not_compile_is_rejected() {
    if !maven_or_skip("java_seed_that_does_not_compile_is_rejected") {
        return;
    }
    let (out, _dir) = run_fixture("java_no_compile", &["--baseline-repeats", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "java_no_compile");
    assert_eq!(seed["status"], "rejected", "{seed}");
    let detail = seed["detail"].as_str().unwrap();
    assert!(detail.contains("does not build"), "{detail}");
    assert!(detail.contains("Broken.java"), "{detail}");
}

/// A test that never returns: the baseline hits its timeout, the JVMs are killed.
#[test]
fn java_hanging_test_times_out_at_baseline() {
    if !maven_or_skip("java_hanging_test_times_out_at_baseline") {
        return;
    }
    let (out, dir) = run_fixture(
        "java_hanging",
        &["--baseline-repeats", "1", "--baseline-timeout", "90"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "java_hanging");
    assert_eq!(seed["status"], "rejected", "{seed}");
    assert!(
        seed["detail"].as_str().unwrap().contains("timeout"),
        "{seed}"
    );
    assert!(processes_under(&dir.path().join("tmp")).is_empty());
}

/// A mutant that does not compile is `compile-error`, and is not counted as killed.
#[test]
fn java_mutant_that_does_not_compile_is_a_compile_error() {
    if !maven_or_skip("java_mutant_that_does_not_compile_is_a_compile_error") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let listed = bin()
        .args(["mutate", "--json"])
        .arg(fixture("java_compile_mutant"))
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    // The branch removal that leaves a `final` local unassigned, and a negated guard that
    // compiles and is caught.
    let wanted: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|l| {
            let c: serde_json::Value = serde_json::from_str(l).unwrap();
            (c["mutator"] == "java-remove-else" && c["function"] == "Sign.describe")
                || (c["mutator"] == "java-negate-condition"
                    && c["function"] == "Sign.clamp"
                    && c["before"] == "x < lo")
        })
        .map(str::to_string)
        .collect();
    assert_eq!(
        wanted.len(),
        2,
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
    let cands = dir.path().join("cands.jsonl");
    std::fs::write(&cands, wanted.join("\n")).unwrap();
    let m = fixture_manifest(dir.path(), "java_compile_mutant");
    let out = bin()
        .env("TMPDIR", dir.path())
        .args([
            "verify",
            m.to_str().unwrap(),
            "--sandbox",
            "local",
            "--json",
        ])
        .args(["--jobs", "2", "--repeats", "1", "--baseline-repeats", "1"])
        .arg("--candidates")
        .arg(&cands)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "java_compile_mutant");
    assert_eq!(seed["decided"], 2, "{seed}");
    assert_eq!(seed["killed"], 1, "the compile error is not a kill: {seed}");
    let lines = candidate_lines(dir.path());
    let by_mutator = |m: &str| {
        lines
            .iter()
            .find(|c| c["mutator"] == m)
            .unwrap_or_else(|| panic!("no {m} in {lines:?}"))
    };
    let broken = by_mutator("java-remove-else");
    assert_eq!(broken["reason"], "compile-error", "{broken}");
    assert!(
        broken["detail"].as_str().unwrap().contains("Sign.java"),
        "{broken}"
    );
    assert_eq!(by_mutator("java-negate-condition")["status"], "accepted");
}

/// Java sources with no pom.xml: a clear message that only Maven is supported.
#[test]
fn java_without_maven_is_not_supported() {
    let (out, _dir) = run_fixture("java_no_maven", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "java_no_maven");
    assert_eq!(seed["status"], "rejected", "{seed}");
    let detail = seed["detail"].as_str().unwrap();
    assert!(detail.contains("not supported"), "{detail}");
    assert!(detail.contains("Maven"), "{detail}");
}

/// A JUnit 4 project goes through the pipeline too: its tests get `Class#method` ids and,
/// without per-test coverage, candidates are screened with the tests of their package.
#[test]
fn java_junit4_project_yields_tasks() {
    if !maven_or_skip("java_junit4_project_yields_tasks") {
        return;
    }
    let (out, dir) = run_fixture(
        "java_junit4",
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
    let seed = seed_summary(&s, "java_junit4");
    assert_eq!(seed["status"], "done", "{seed}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(!tasks.is_empty(), "{seed}");
    for t in &tasks {
        for id in t["FAIL_TO_PASS"].as_array().unwrap() {
            assert!(id.as_str().unwrap().starts_with("fx.CounterTest#"), "{t}");
        }
    }
}
