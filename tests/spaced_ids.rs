//! Tests whose ids hold spaces (parameters such as `"hi there"`): SWE-bench's log parsers cut
//! them at the first space, so a bug those tests kill cannot be graded through them. On
//! `tests/fixtures/spaced_ids` such bugs get a synthesized test with a readable id, which
//! becomes FAIL_TO_PASS; the unreadable tests that fail with the bug are neither FAIL_TO_PASS
//! nor PASS_TO_PASS. A killed bug is never called `likely-equivalent` or `not-killed`.

mod common;
use common::*;

#[test]
fn bugs_killed_only_by_unreadable_ids_get_a_readable_synthesized_test() {
    let (out, dir) = run_fixture_synthesizing("spaced_ids", &["--max-candidates", "12"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    assert!(!cands.is_empty());
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(!tasks.is_empty(), "{cands:?}");
    for t in &tasks {
        let f2p = t["FAIL_TO_PASS"].as_array().unwrap();
        assert!(!f2p.is_empty(), "{t}");
        for id in f2p.iter().chain(t["PASS_TO_PASS"].as_array().unwrap()) {
            assert!(!id.as_str().unwrap().contains(' '), "unreadable id in {t}");
        }
        assert!(
            t["test_patch"].as_str().unwrap().contains("def test_"),
            "a synthesized test: {t}"
        );
    }
    for c in &cands {
        // Every mutant here changes what `shout` returns for some test: none is a survivor.
        assert_ne!(c["reason"], "likely-equivalent", "{c}");
        assert_ne!(c["reason"], "not-killed", "{c}");
        if c["status"] != "accepted" {
            assert!(
                ["unreadable-test-ids", "timeout", "duplicate"]
                    .contains(&c["reason"].as_str().unwrap_or("")),
                "{c}"
            );
        }
    }
}
