//! Survivors that a user reaches through a special method, with a function or an object as an
//! argument, or without an optional argument (`tests/fixtures/special_methods`): the
//! repository's tests run `Between(1, 10)(5)` without checking what it returns,
//! `apply(str, [1, 2])` checking only that a list comes back,
//! `first_valid(OneOf([5, 6]), [50, 5])` checking nothing, and `round_to` always with `step=`.
//! Synthesis follows the validator through `__call__`, writes `str` back by its name and the
//! validator as the constructor call the tracer saw, and calls `round_to` without `step`, so
//! the four bugs become tasks whose synthesized tests read as a user would write them; and it
//! traces the first survivor's tests, then the whole suite once.

mod common;
use common::*;

/// The four survivors (see the module's text), as `mutate --json` lines.
fn survivors() -> Vec<String> {
    let all = fixture_candidates("special_methods");
    vec![
        // `return value` → `return None`: the test of `Between(1, 10)(5)` only asks that it
        // does not raise.
        pick_candidate(&all, "Between.__call__", "return None"),
        // `out.append(func(value))` → `pass`: an empty list, and the test of `apply` only asks
        // for a list.
        pick_candidate(&all, "apply", "pass"),
        // `return validator(value)` → `return None`: its test passes a `OneOf` object, which
        // has no repr to rebuild it from, and checks nothing.
        pick_candidate(&all, "first_valid", "return None"),
        // `return round(value)` → `return None`: the branch without `step`, which the test of
        // `round_to` always passes.
        pick_candidate(&all, "round_to", "return None"),
    ]
}

/// `verify` of the survivors on the fixture, one worker; the output and the run's directory
/// (its `out/`).
fn verify_survivors(extra: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    verify_on_fixture("special_methods", &survivors(), extra)
}

#[test]
fn survivors_behind_call_syntax_and_function_arguments_get_tests() {
    // The tracer budget lifted: a fixture's suite is too short to measure it by.
    let (out, dir) = verify_survivors(&["--tracer-budget", "1000"]);
    let out_dir = dir.path().join("out");
    let listing = jsonl(&out_dir.join("candidates.jsonl"));
    assert_eq!(listing.len(), 4, "{listing:?}");
    for c in &listing {
        assert_eq!(c["status"], "accepted", "{c}");
    }
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    let patch_of = |function: &str| test_patch_of(&tasks, function);
    let validator_test = patch_of("Between.__call__");
    assert!(
        validator_test.contains("+    between = Between(1, 10)\n")
            && validator_test.contains("+    assert between(5) == 5\n"),
        "{validator_test}"
    );
    let helper_test = patch_of("apply");
    assert!(
        helper_test.contains("assert apply(str, [1, 2]) == ['1', '2']"),
        "{helper_test}"
    );
    let taker_test = patch_of("first_valid");
    assert!(
        taker_test.contains("assert first_valid(OneOf([5, 6]), [50, 5]) == 5"),
        "{taker_test}"
    );
    let optional_test = patch_of("round_to");
    let asserted: Vec<&str> = optional_test
        .lines()
        .filter(|l| l.starts_with("+    assert round_to("))
        .collect();
    assert!(
        !asserted.is_empty() && asserted.iter().all(|l| !l.contains("step=")),
        "{optional_test}"
    );

    // The tracer ran the whole suite of six once, for the first survivor: one run for four
    // survivors, each reached by a recorded call.
    let s = summary(&out);
    let synthesis = &seed_summary(&s, "special_methods")["synthesis"];
    assert_eq!(synthesis["survivors"], 4, "{synthesis}");
    assert_eq!(synthesis["trace_runs"], 1, "{synthesis}");
    assert_eq!(synthesis["traced_tests"], 6, "{synthesis}");
    assert_eq!(synthesis["over_budget"], 0, "{synthesis}");
}

#[test]
fn synthesis_stops_at_the_seed_budget_and_says_so() {
    // One second: the first survivor's synthesis (a tracer run, replays and three verifying
    // checks, each a pytest process) spends it; those after it are left as they were.
    let (out, dir) = verify_survivors(&["--synthesis-budget", "1"]);
    let s = summary(&out);
    let synthesis = &seed_summary(&s, "special_methods")["synthesis"];
    assert_eq!(synthesis["survivors"], 4, "{synthesis}");
    assert_eq!(synthesis["budget_s"], 1.0, "{synthesis}");
    let over = synthesis["over_budget"].as_u64().unwrap();
    assert!((1..=3).contains(&over), "{synthesis}");
    let listing = candidate_lines(dir.path());
    let left: Vec<_> = listing
        .iter()
        .filter(|c| c["status"] != "accepted")
        .collect();
    assert_eq!(left.len() as u64, over, "{listing:?}");
    for c in left {
        assert!(
            ["not-killed", "not-covered"].contains(&c["reason"].as_str().unwrap_or("")),
            "{c}"
        );
    }
}
