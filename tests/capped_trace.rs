//! A survivor reached only by a test that runs after the tracer's per-class caps are spent
//! (`tests/fixtures/capped_trace`): the whole-suite trace records no call reaching
//! `Box._label`, so its own test is traced once more in a run of its own (the tracer budget
//! lifted: a fixture's suite is too short to measure it by), and the synthesized
//! test asserts on `repr()` of `Box(7)`, the call its test makes, not on the private method.

mod common;
use common::*;

#[test]
fn a_survivor_the_whole_suite_trace_missed_traces_its_own_tests() {
    let all = fixture_candidates("capped_trace");
    // First the survivor whose test makes the sixty boxes, then the one behind `repr`.
    let cands = [
        pick_candidate(&all, "Box.size", "self.number * 3"),
        pick_candidate(&all, "Box._label", "return None"),
    ];
    // A fixture's suite takes a fraction of a second, which pytest's start dominates: no
    // tracer budget to keep here (what the test checks is which runs are made).
    let (out, dir) = verify_on_fixture("capped_trace", &cands, &["--tracer-budget", "1000"]);
    let out_dir = dir.path().join("out");
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    let label = test_patch_of(&tasks, "Box._label");
    assert!(
        label.contains("+    box = Box(7)\n+    assert repr(box) == '<box 7>'\n"),
        "{label}"
    );
    // The whole suite (two tests), then `_label`'s own test.
    let s = summary(&out);
    let synthesis = &seed_summary(&s, "capped_trace")["synthesis"];
    assert_eq!(synthesis["trace_runs"], 2, "{synthesis}");
    assert_eq!(synthesis["traced_tests"], 2 + 1, "{synthesis}");
}
