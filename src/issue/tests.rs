//! Unit tests of the issue texts: titles, detail levels, doctest and assertion readings.

use super::*;
use crate::synth::{Distinguishing, TracedCall};

fn cand(id: &str, category: &str) -> Candidate {
    serde_json::from_value(serde_json::json!({
        "id": id, "mutator": "py-x", "category": category,
        "file": "pkg/query.py", "function": "_pages", "function_lines": [1, 3],
        "byte_range": [0, 1], "line_range": [2, 2], "before": "a", "after": "b",
        "bug_patch": "", "hash": "h", "description": "", "issue_hints": ["off by one"]
    }))
    .unwrap()
}

fn case() -> Distinguishing {
    Distinguishing {
        call: TracedCall {
            file: "pkg/query.py".into(),
            module: "pkg.query".into(),
            qualname: "paginate".into(),
            receiver: None,
            args: "([], 1, 0)".into(),
            imports: vec![],
            reaches: vec![],
            setup: vec![],
        },
        clean: CallOutcome::Raised {
            type_name: "ValueError".into(),
            type_module: "builtins".into(),
            message: "per_page must be at least 1".into(),
            nondeterministic: false,
            attrs: std::collections::BTreeMap::new(),
            imports: vec![],
        },
        buggy: CallOutcome::Raised {
            type_name: "ZeroDivisionError".into(),
            type_module: "builtins".into(),
            message: "integer division or modulo by zero".into(),
            nondeterministic: false,
            attrs: std::collections::BTreeMap::new(),
            imports: vec![],
        },
    }
}

#[test]
fn raising_setup_steps_read_as_calls_with_a_comment() {
    let setup = vec![
        "ledger = Ledger()".to_string(),
        "with pytest.raises(ValueError):\n    ledger.ship('TEA', 0)".to_string(),
    ];
    assert_eq!(
        setup_for_issue(&setup),
        vec![
            "ledger = Ledger()",
            "ledger.ship('TEA', 0)  # raises ValueError"
        ]
    );
}

#[test]
fn every_style_renders_the_reproduction_and_the_category_wording() {
    let cases = [case()];
    let mut seen = std::collections::BTreeSet::new();
    for id in ["00000000aaaaaaaa", "00000001aaaaaaaa", "00000002aaaaaaaa"] {
        let c = cand(id, "boundary");
        let issue = problem_statement(&IssueInput {
            candidate: &c,
            buggy_run: None,
            fail_to_pass: &[],
            test_files: &[],
            cases: &cases,
        })
        .unwrap();
        let (text, style) = (issue.text, issue.style);
        seen.insert(style);
        // The category's diagnosis goes to the hints, not the statement.
        assert!(
            issue.hints.contains("Values right at a limit"),
            "{}",
            issue.hints
        );
        assert!(issue.hints.contains("off by one"), "{}", issue.hints);
        assert!(!text.contains("Values right at a limit"), "{style}: {text}");
        assert!(!text.contains("off by one"), "{style}: {text}");
        assert!(text.contains("paginate([], 1, 0)"), "{style}: {text}");
        assert!(text.contains("ZeroDivisionError"), "{style}: {text}");
        assert!(
            text.contains("per_page must be at least 1"),
            "{style}: {text}"
        );
        assert!(!text.contains("\n\n\n"), "{style}: {text}");
        assert!(!text.contains("query.py"), "{style}: {text}");
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    // Without a raising case the traceback style does not apply.
    let c = cand("00000002aaaaaaaa", "no-such-category");
    let issue = problem_statement(&IssueInput {
        candidate: &c,
        buggy_run: None,
        fail_to_pass: &[],
        test_files: &[],
        cases: &[],
    })
    .unwrap();
    assert_ne!(issue.style, "traceback");
    assert!(
        issue.text.contains("Unexpected behaviour from `pkg`"),
        "{}",
        issue.text
    );
    assert!(
        issue.hints.contains("The result is not what"),
        "{}",
        issue.hints
    );
}

#[test]
fn the_level_of_detail_is_chosen_per_task() {
    let cases = [case()];
    let mut lengths = Vec::new();
    for (id, detail) in [
        ("0000000000000000", "vague"),
        ("0000000000000001", "normal"),
        ("0000000000000002", "detailed"),
    ] {
        let c = cand(id, "boundary");
        let issue = problem_statement(&IssueInput {
            candidate: &c,
            buggy_run: None,
            fail_to_pass: &[],
            test_files: &[],
            cases: &cases,
        })
        .unwrap();
        assert_eq!(issue.detail, detail);
        assert_eq!(issue.style, "report");
        let title = issue.text.lines().next().unwrap();
        assert_eq!(
            title,
            "`paginate([], 1, 0)` raises ZeroDivisionError: integer division or modulo by zero"
        );
        assert!(
            issue.text.contains("per_page must be at least 1"),
            "{}",
            issue.text
        );
        assert_eq!(
            issue.text.contains("To reproduce"),
            detail != "vague",
            "{}",
            issue.text
        );
        lengths.push(issue.text.len());
    }
    assert!(lengths[0] < lengths[1], "{lengths:?}");
}

const DOCTEST_GOT: &str = "145 Converts an integer to a string.\n146 \n147     Examples:\n148         >>> intcomma(10)\n149         '10'\n150         >>> intcomma(\n151         ...     1000)\nExpected:\n    '1,000'\nGot:\n    '1000'\n\n/tmp/swe-forge-wt-x/worker-1/repo/src/num.py:150: DocTestFailure";
const DOCTEST_RAISED: &str = "150     Examples:\n151         >>> intcomma(100)\nUNEXPECTED EXCEPTION: ValueError('Format specifier missing precision')\nTraceback (most recent call last):\n  File \"/usr/lib/python3.11/doctest.py\", line 1353, in __run\n    exec(compile(example.source, filename, \"single\",\n  File \"<doctest num.intcomma[0]>\", line 1, in <module>\n  File \"/w/src/num.py\", line 199, in intcomma\n    result = f\"{value:,.{ndigits}f}\"\nValueError: Format specifier missing precision\n/w/src/num.py:151: UnexpectedException";

#[test]
fn a_doctest_failure_is_its_example_and_outputs() {
    let d = DoctestFailure::parse(DOCTEST_GOT).unwrap();
    assert_eq!(d.example, ">>> intcomma(\n...     1000)");
    assert_eq!(d.code(), "intcomma(\n    1000)");
    assert_eq!(d.expected, "'1,000'");
    assert_eq!(d.got.as_deref(), Some("'1000'"));
    assert_eq!(d.pasted(), ">>> intcomma(\n...     1000)\n'1000'");
    let r = DoctestFailure::parse(DOCTEST_RAISED).unwrap();
    assert_eq!(r.example, ">>> intcomma(100)");
    assert_eq!(r.got, None);
    assert_eq!(
        r.raised.as_deref(),
        Some("ValueError: Format specifier missing precision")
    );
    assert!(!r.pasted().contains("/w/src"), "{}", r.pasted());
    assert_eq!(
        symptom_title("intcomma", &[], &r.pasted(), Some(&r)),
        "`intcomma(100)` raises ValueError: Format specifier missing precision"
    );
    let one_line = DoctestFailure::parse(
        "12     >>> ordinal(3)\nExpected:\n    '3rd'\nGot:\n    '3th'\n\nx.py:12: DocTestFailure",
    )
    .unwrap();
    assert_eq!(
        symptom_title("ordinal", &[], "", Some(&one_line)),
        "`ordinal(3)` gives '3th' instead of '3rd'"
    );
    assert_eq!(DoctestFailure::parse("AssertionError: assert 1 == 2"), None);
}

/// A `buggy#1` run in which test `id` failed with `message`.
fn buggy_run_failing(id: &str, message: &str) -> Run {
    let mut run: Run = serde_json::from_value(serde_json::json!({
        "label": "buggy#1", "end": "exited", "exit_code": 1, "results": {},
        "duration_s": 1.0, "log_digest": "d"
    }))
    .unwrap();
    run.results.insert(
        id.to_string(),
        crate::run::TestResult {
            status: crate::run::TestStatus::Failed,
            duration_s: 0.1,
            message: Some(message.to_string()),
        },
    );
    run
}

#[test]
fn a_doctest_task_reports_the_example_at_every_detail() {
    let id = "src/num.py::num.intcomma".to_string();
    let mut run = buggy_run_failing(&id, DOCTEST_GOT);
    let f2p = [id];
    // The statements of 24 candidates (every style and detail level) for this run.
    let issues = |run: &Run| -> Vec<Issue> {
        (0..24u32)
            .map(|n| {
                let c = cand(
                    &format!(
                        "{:08x}{:08x}",
                        n.wrapping_mul(0x1111_1111),
                        n.wrapping_mul(0x0777_7777)
                    ),
                    "logic",
                );
                problem_statement(&IssueInput {
                    candidate: &c,
                    buggy_run: Some(run),
                    fail_to_pass: &f2p,
                    test_files: &[],
                    cases: &[],
                })
                .unwrap()
            })
            .collect()
    };
    for issue in issues(&run) {
        assert!(!issue.text.contains("DocTestFailure"), "{}", issue.text);
        assert!(!issue.text.contains("/tmp/"), "{}", issue.text);
        assert!(!issue.text.contains("148 "), "{}", issue.text);
        assert!(issue.text.contains("intcomma("), "{}", issue.text);
        if issue.detail == "detailed" {
            assert!(issue.text.contains("'1,000'"), "{}", issue.text);
        }
        if issue.detail == "normal" {
            assert!(
                issue.text.contains("...     1000)\n'1000'"),
                "{}",
                issue.text
            );
        }
    }
    // A raising example: no "(nothing)" as the documented output.
    run.results.get_mut(&f2p[0]).unwrap().message = Some(DOCTEST_RAISED.to_string());
    for issue in issues(&run) {
        assert!(!issue.text.contains("(nothing)"), "{}", issue.text);
        assert!(issue.text.contains("ValueError"), "{}", issue.text);
    }
}

#[test]
fn a_user_names_the_public_part() {
    assert_eq!(
        public_name("Schema._do_load", "src/marshmallow/schema.py"),
        "Schema"
    );
    assert_eq!(
        public_name("Length.__call__", "src/marshmallow/validate.py"),
        "Length"
    );
    assert_eq!(
        public_name("engine.ordinal", "inflect/__init__.py"),
        "engine.ordinal"
    );
    assert_eq!(
        public_name("_get_value", "src/marshmallow/utils.py"),
        "marshmallow"
    );
    assert_eq!(public_name("_pad", "six.py"), "six");
}

#[test]
fn an_assertion_gives_the_call_and_the_compared_values() {
    let observed =
        "AssertionError: assert 'persons' == 'people'\n +  where 'persons' = plural('person')";
    assert_eq!(
        compared_values(observed),
        Some((
            Some("plural('person')".to_string()),
            "'persons'".to_string(),
            "'people'".to_string()
        ))
    );
    assert_eq!(
        symptom_title("plural", &[], observed, None),
        "`plural('person')` returns 'persons' instead of 'people'"
    );
    assert_eq!(
        symptom_title("plural", &[], "AssertionError: assert 3 == 4", None),
        "`plural`: got 3 where 4 is expected"
    );
    assert_eq!(compared_values("ValueError: bad"), None);
    let derived = "assert False\n +  where False = isinstance(None, list)\n +    where None = apply(str, [1, 2])";
    assert_eq!(compared_values(derived), None);
    assert_eq!(
        innermost_call(derived),
        Some(("apply(str, [1, 2])".into(), "None".into()))
    );
    assert_eq!(
        symptom_title("apply", &[], derived, None),
        "`apply(str, [1, 2])` returns None"
    );
    assert_eq!(innermost_call("ValueError: bad\n +  where x = f(1)"), None);
    // A comparison of two results: not the call's fault alone.
    assert_eq!(
        innermost_call("assert c({'a'}) >= c({'a', 'b'})\n +  where c({'a'}) = c('a')"),
        None
    );
    // unittest's assertEqual.
    assert_eq!(
        compared_values("AssertionError: 0 != 11"),
        Some((None, "0".into(), "11".into()))
    );
    assert_eq!(
        compared_values("AssertionError: Lists differ: [1] != [2]\n"),
        Some((None, "[1]".into(), "[2]".into()))
    );
    assert_eq!(
        compared_values("assert <function merge at 0x7f7e8ede6520> == {1: 1}"),
        None
    );
    assert_eq!(
        symptom_title("convert", &[], "Failed: DID NOT RAISE ValueError", None),
        "`convert` does not raise ValueError"
    );
    assert_eq!(
        symptom_title("sliced", &[], "AssertionError: ValueError not raised", None),
        "`sliced` does not raise ValueError"
    );
    // An object's repr (`<Result …>.exit_code`) is not a call either.
    assert_eq!(
        compared_values(
            "AssertionError: assert 1 == 2\n +  where 1 = <Result IsADirectoryError(21, 'Is a directory')>.exit_code"
        ),
        Some((None, "1".into(), "2".into()))
    );
    // A builtin wrapped around the result is not the call a user made.
    assert_eq!(
        compared_values("AssertionError: assert 1 == 2\n +  where 1 = len({2: ['x']})"),
        Some((None, "1".into(), "2".into()))
    );
}

#[test]
fn a_doctest_runner_s_counts_read_as_failing_examples() {
    // toolz's test_tlz runs doctest itself and asserts the result has no failures.
    let observed =
        "AssertionError: assert 3 == 0\n +  where 3 = TestResults(failed=3, attempted=12).failed";
    assert_eq!(doctest_runner_counts(observed), Some((3, 12)));
    assert_eq!(
        symptom_title("toolz", &[], observed, None),
        "3 of the 12 examples in the documentation of `toolz` fail"
    );
    assert_eq!(doctest_runner_counts("assert 3 == 0"), None);
}

#[test]
fn key_values_are_the_reproduction_and_its_outcomes() {
    let c = cand("00000000aaaaaaaa", "boundary");
    let cases = [case()];
    let input = IssueInput {
        candidate: &c,
        buggy_run: None,
        fail_to_pass: &[],
        test_files: &[],
        cases: &cases,
    };
    let keys = key_values(&input);
    assert_eq!(
        keys,
        vec![
            "paginate([], 1, 0)",
            "ZeroDivisionError",
            "integer division or modulo by zero",
            "ValueError",
            "per_page must be at least 1",
        ]
    );
    // Every key value is in the rendered text (the rewrite check only asks for those).
    let text = problem_statement(&input).unwrap().text;
    let flat: String = text.split_whitespace().collect();
    for k in &keys {
        let k: String = k.split_whitespace().collect();
        assert!(flat.contains(&k), "{k}: {text}");
    }
}

#[test]
fn an_object_in_the_failure_keeps_its_type_and_loses_its_address() {
    // cachetools' TLRUCache with an assignment removed: copying the cache raises a KeyError
    // whose only text is an object's repr. The text named nothing before ("Unexpected
    // behaviour from `TLRUCache`" at every level).
    assert_eq!(
        without_addresses("KeyError: <cachetools.TLRUCache._Item object at 0x7f161fc252c0>"),
        "KeyError: <cachetools.TLRUCache._Item object>"
    );
    assert_eq!(without_addresses("a at 0x, b"), "a, b");
    assert_eq!(without_addresses("no address"), "no address");
    let id = "tests/test_tlru.py::TLRUCacheTest::test_copy".to_string();
    let run = buggy_run_failing(
        &id,
        "KeyError: <cachetools.TLRUCache._Item object at 0x7f161fc252c0>",
    );
    let f2p = [id];
    let c = cand("0000000100000001", "logic");
    let issue = problem_statement(&IssueInput {
        candidate: &c,
        buggy_run: Some(&run),
        fail_to_pass: &f2p,
        test_files: &[],
        cases: &[],
    })
    .unwrap();
    assert!(!issue.text.contains("0x7f"), "{}", issue.text);
    assert!(issue.text.contains("KeyError"), "{}", issue.text);
    assert!(
        !issue.text.contains("Unexpected behaviour"),
        "{}",
        issue.text
    );
}

#[test]
fn jest_matcher_failures_name_the_call_and_the_values() {
    let observed = "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 4\nReceived: 5\n> expect(twice(2, { k: ')' })).toBe(4);";
    let (call, actual, expected) = super::compared_values(observed).unwrap();
    assert_eq!(call.as_deref(), Some("twice(2, { k: ')' })"));
    assert_eq!(actual, "5");
    assert_eq!(expected, "4");
    assert_eq!(
        super::expect_argument("expect(a).toBe(1)").as_deref(),
        Some("a")
    );
    assert_eq!(super::expect_argument("no expectation here"), None);
    assert_eq!(
        super::expect_argument("assert.strictEqual(clamp(3, 0, 5), 4);").as_deref(),
        Some("clamp(3, 0, 5)")
    );
    // Without the source line, the values still come through.
    let bare = "Expected: \"b\"\nReceived: \"a\"";
    assert_eq!(
        super::compared_values(bare),
        Some((None, "\"a\"".to_string(), "\"b\"".to_string()))
    );
}

#[test]
fn jest_frames_lose_their_positions_and_throw_failures_name_the_call() {
    assert_eq!(
        super::without_frame_position("    at mergeSlots (lib/schedule.js:52:57)"),
        "    at mergeSlots (lib/schedule.js)"
    );
    assert_eq!(
        super::without_frame_position("    at lib/a.js:3"),
        "    at lib/a.js"
    );
    assert_eq!(
        super::without_frame_position("Expected: 1:2"),
        "Expected: 1:2"
    );
    assert!(super::is_matcher_header(
        "Error: expect(received).toBe(expected) // Object.is equality"
    ));
    let no_throw = "Error: expect(received).toThrow(expected)\n\nExpected constructor: TypeError\n\nReceived function did not throw\n> expect(() => sumCents([1, 2.5])).toThrow(TypeError);";
    assert_eq!(
        super::jest_throw_title("sumCents", no_throw).as_deref(),
        Some("`sumCents([1, 2.5])` does not throw TypeError")
    );
    let wrong = "Expected substring: \"bad\"\nReceived message: \"worse\"\n> expect(() => { parse('x'); }).toThrow('bad');";
    assert_eq!(
        super::jest_throw_title("parse", wrong).as_deref(),
        Some("`parse('x')` throws \"worse\" instead of \"bad\"")
    );
    assert_eq!(
        super::jest_throw_title("f", "Expected: 1\nReceived: 2"),
        None
    );
}

#[test]
fn a_vague_jest_report_says_what_the_call_did() {
    let compared = "Expected: 0\nReceived: 1\n> expect(compareValues(1, 1)).toBe(0);";
    assert_eq!(
        super::jest_first_line("compareValues", compared).as_deref(),
        Some("`compareValues(1, 1)` gives 1 where 0 is expected")
    );
    let diff = "- Expected  - 1\n+ Received  + 0\n\n  Array [\n    \"A1\",\n-   \"A2\",\n  ]\n> expect(shelf.expandRange('A1-A2')).toEqual(['A1', 'A2']);";
    assert_eq!(
        super::jest_first_line("expandRange", diff).as_deref(),
        Some("`shelf.expandRange('A1-A2')` does not give the expected result")
    );
    assert_eq!(super::jest_first_line("f", "TypeError: boom"), None);
}
