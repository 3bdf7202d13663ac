//! Mutants that misbehave — loop forever, fork without bound, allocate without bound — get a
//! verdict with the right reason, the run goes on, and no process is left behind.

mod common;
use common::*;

fn reasons(dir: &std::path::Path) -> Vec<(String, String)> {
    candidate_lines(dir)
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap_or("accepted").to_string(),
            )
        })
        .collect()
}

/// A mutant that never terminates is rejected as `timeout` and the other candidates are decided.
#[test]
fn endless_loop_times_out_and_the_run_continues() {
    let (out, dir) = run_fixture("loop_mutant", &["--min-timeout", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "loop_mutant")["runner"],
        "resident"
    );
    let s = summary(&out);
    let seed = seed_summary(&s, "loop_mutant");
    assert_eq!(seed["status"], "done", "{seed}");
    assert_eq!(
        seed["decided"], seed["sampled"],
        "every candidate decided: {seed}"
    );
    let r = reasons(dir.path());
    assert!(r.iter().any(|(_, reason)| reason == "timeout"), "{r:?}");
    assert!(r.iter().any(|(_, reason)| reason != "timeout"), "{r:?}");
    assert!(processes_under(&dir.path().join("tmp")).is_empty());
}

/// A mutant whose test waits for an event no one sets (30 s, no CPU) is stopped by the test's
/// own budget from the baseline, long before the run's limits, as `timeout` naming the test:
/// under the resident runner and under fresh processes (the full protocol) alike.
#[test]
fn a_test_that_waits_past_its_budget_is_a_timeout_under_both_runners() {
    for runner in ["resident", "fresh"] {
        let (out, dir) = run_fixture("wait_mutant", &["--runner", runner]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let s = summary(&out);
        let seed = seed_summary(&s, "wait_mutant");
        assert_eq!(seed["status"], "done", "{seed}");
        assert_eq!(seed["runner"], runner, "{seed}");
        let waits: Vec<serde_json::Value> = candidate_lines(dir.path())
            .into_iter()
            .filter(|c| {
                c["file"] == "waiter/core.py"
                    && c["bug_patch"]
                        .as_str()
                        .is_some_and(|p| p.contains("+        if len(out) > len(items):"))
            })
            .collect();
        assert_eq!(waits.len(), 1, "{runner}: the `>` mutant was not sampled");
        let c = &waits[0];
        assert_eq!(c["reason"], "timeout", "{runner}: {c}");
        let detail = c["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("tests/test_core.py::test_gather_copies_in_order")
                && detail.contains("ran past its budget"),
            "{runner}: {detail}"
        );
        // The other candidates are decided as usual: `total`'s are killed.
        assert!(
            candidate_lines(dir.path())
                .iter()
                .any(|c| c["reason"].is_null() || c["reason"] == "accepted"),
            "{runner}: no task"
        );
        assert!(processes_under(&dir.path().join("tmp")).is_empty());
    }
}

/// A mutant that forks without bound is capped by the process limit and rejected as
/// `resource-limit`; its children are all gone afterwards.
#[test]
fn fork_bomb_is_contained() {
    let (out, dir) = run_fixture("fork_mutant", &["--pids-limit", "64", "--min-timeout", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "fork_mutant")["runner"],
        "resident"
    );
    let r = reasons(dir.path());
    let guard: Vec<&(String, String)> = r.iter().filter(|(c, _)| c == "missing-guard").collect();
    assert!(!guard.is_empty(), "{r:?}");
    assert!(
        guard
            .iter()
            .all(|(_, reason)| reason == "resource-limit" || reason == "timeout"),
        "{r:?}"
    );
    assert!(processes_under(&dir.path().join("tmp")).is_empty());
}

/// A mutant that allocates without bound is stopped: by the memory limit (`resource-limit`),
/// or, as its screen's CPU limit comes from its tests' own baseline time (about a second),
/// by the time it spends filling pages first (`timeout`).
#[test]
fn memory_hog_is_contained() {
    let (out, dir) = run_fixture("alloc_mutant", &["--memory-limit", "1024"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "alloc_mutant")["runner"],
        "resident"
    );
    let r = reasons(dir.path());
    let guard: Vec<&(String, String)> = r.iter().filter(|(c, _)| c == "missing-guard").collect();
    assert!(!guard.is_empty(), "{r:?}");
    assert!(
        guard
            .iter()
            .all(|(_, reason)| reason == "resource-limit" || reason == "timeout"),
        "{r:?}"
    );
    assert!(processes_under(&dir.path().join("tmp")).is_empty());
}

/// A mutant that deletes the whole worktree (and its `.git`): every later run still starts
/// from a clean copy, and no git command escapes to an enclosing repository. (The wiping
/// candidate itself may be a `crash` here: it deletes the directory pytest runs in, which a
/// container's /testbed survives.)
#[test]
fn wiped_worktree_is_restored() {
    let (out, dir) = run_fixture("wipe_mutant", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Contained under the resident runner (the default).
    assert_eq!(
        seed_summary(&summary(&out), "wipe_mutant")["runner"],
        "resident"
    );
    let lines = candidate_lines(dir.path());
    let wipes: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|c| c["function"] == "purge" && c["category"] == "missing-guard")
        .collect();
    assert!(!wipes.is_empty(), "{lines:?}");
    for c in &wipes {
        let r = c["reason"].as_str().unwrap_or("accepted");
        assert!(["accepted", "crash"].contains(&r), "{c}");
    }
    let others: Vec<&serde_json::Value> =
        lines.iter().filter(|c| c["function"] != "purge").collect();
    assert!(
        others.iter().any(|c| c["status"] == "accepted"),
        "{others:?}"
    );
    for c in others {
        let r = c["reason"].as_str().unwrap_or("accepted");
        assert!(
            [
                "accepted",
                "not-killed",
                "not-covered",
                "likely-equivalent",
                "synthesis-failed"
            ]
            .contains(&r),
            "a candidate saw a damaged tree: {c}"
        );
    }
    assert!(processes_under(&dir.path().join("tmp")).is_empty());
}
