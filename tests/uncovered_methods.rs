//! Survivors in methods no test calls (`tests/fixtures/uncovered_methods`): the tests make
//! `Span(1, 4)` and `Span(2, 2)` and ask only for `length()`. Synthesis calls `shifted`,
//! `__repr__` and the class method `from_pair` anyway, on the objects the tests made (the
//! constructor calls the tracer saw) or on the class, with arguments drawn from the
//! signature, the literals and the values the tests passed to the module's other functions,
//! and the three bugs become tasks, as does one in a property no test reads (`last`, read as
//! an attribute); so does one in a class no test makes (`Tally`), called on
//! an object made without arguments; and one in a function whose only recorded call passes a
//! path of the machine (`stem(__file__)`), which no synthesized test may carry; and one in a
//! function of an exception class and an instance (`describe_error(etype, value)`), reached
//! only by a `SyntaxError` with its location, which the search draws from the classes the
//! function's code names. A search that
//! finds nothing where no call reaches the function (`digest_label`'s unreachable branch)
//! leaves the verdict `not-covered`: no evidence of equivalence.

mod common;
use common::*;

#[test]
fn methods_no_test_calls_get_tests_on_the_objects_the_tests_made() {
    let all = fixture_candidates("uncovered_methods");
    let cands = [
        pick_candidate(&all, "Span.shifted", "Span(self.start - by, self.end + by)"),
        pick_candidate(&all, "Span.__repr__", "return None"),
        pick_candidate(&all, "Span.from_pair", "cls(end, start)"),
        // No test makes a `Tally` at all: the receiver is one made without arguments.
        pick_candidate(&all, "Tally.most_common", "if self.counts:"),
        // The only recorded call passes the test file's absolute path.
        pick_candidate(&all, "stem", "name.rindex(\".\") - 1"),
        // A branch no input a search tries can take: nothing reaches it, nothing is found.
        pick_candidate(&all, "digest_label", "        return None"),
        // Takes an exception class and an instance: only a SyntaxError reaches the bug.
        pick_candidate(&all, "describe_error", "if value.text is None:"),
        // A property no test reads: read as an attribute, on the objects the tests made.
        pick_candidate(&all, "Span.last", "return self.end + 1"),
    ];
    let (_, dir) = verify_on_fixture("uncovered_methods", &cands, &[]);
    let out_dir = dir.path().join("out");
    let decided = jsonl(&out_dir.join("candidates.jsonl"));
    assert_eq!(decided.len(), 8, "{decided:?}");
    for c in decided.iter().filter(|c| c["function"] != "digest_label") {
        assert_eq!(c["status"], "accepted", "{c}");
    }
    // A search from the signature that found nothing, where no recorded call reaches the
    // function, is no evidence of equivalence: the verdict stays `not-covered`.
    let unreached = decided
        .iter()
        .find(|c| c["function"] == "digest_label")
        .unwrap();
    assert_eq!(unreached["reason"], "not-covered", "{unreached}");
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    let patch_of = |function: &str| test_patch_of(&tasks, function);
    // A receiver the tests built, rebuilt from its constructor call.
    let shifted = patch_of("Span.shifted");
    assert!(
        shifted.contains("+    assert Span(1, 4).shifted(")
            || shifted.contains("+    assert Span(2, 2).shifted("),
        "{shifted}"
    );
    let repr = patch_of("Span.__repr__");
    assert!(
        repr.contains("repr(Span(1, 4))") || repr.contains("repr(Span(2, 2))"),
        "{repr}"
    );
    // The class method is called on the class (not on an object), with a pair.
    let pair = patch_of("Span.from_pair");
    assert!(
        pair.contains("+    assert Span.from_pair([") && !pair.contains(").from_pair("),
        "{pair}"
    );
    // A path of the generating machine is no value a test may carry: the synthesized test
    // calls `stem` on an input of its own, and no record names the worktree.
    let stem = patch_of("stem");
    assert!(stem.contains("+    assert stem("), "{stem}");
    for t in &tasks {
        let record = t.to_string();
        assert!(
            !record.contains("swe-forge-wt") && !record.contains(&*dir.path().to_string_lossy()),
            "{record}"
        );
    }
    // The property is read, not called: `Span(1, 4).last`, never `.last()`.
    let last = patch_of("Span.last");
    assert!(
        last.contains("+    assert Span(1, 4).last == ") && !last.contains(".last("),
        "{last}"
    );
    // The exception classes the function names are tried, a class with an instance of it.
    let described = patch_of("describe_error");
    assert!(
        described.contains("describe_error(SyntaxError, SyntaxError("),
        "{described}"
    );
    let tally = patch_of("Tally.most_common");
    assert!(tally.contains("Tally().most_common()"), "{tally}");
    // `repr()` checks what `__repr__` returns: the text says what a user sees.
    let repr_issue = tasks
        .iter()
        .find(|t| t["metadata"]["location"]["function"] == "Span.__repr__")
        .unwrap()["problem_statement"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(repr_issue.contains("raises TypeError"), "{repr_issue}");
}
