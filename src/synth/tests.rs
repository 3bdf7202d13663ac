//! Unit tests of synthesis: the literal helper, the choice of reaching calls, which
//! differences are assertable, and the rendered tests.

use super::helpers::LITERAL_PY;
use super::render::method_call;
use super::replay::assertable;
use super::*;
use std::collections::BTreeMap;

/// CrossHair loads the compared module (which imports swe_forge_literal) under an audit
/// hook that refuses any file written on import; the helper must import without writing.
#[test]
fn the_literal_helper_imports_without_writing_a_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("swe_forge_literal.py"), LITERAL_PY).unwrap();
    let guard = r#"import os, sys
def hook(event, args):
    if event == 'open':
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and any(c in mode for c in 'wax+')) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)):
            raise RuntimeError('wrote %r' % (args[0],))
sys.addaudithook(hook)
import swe_forge_literal
print('ok')
"#;
    let out = match std::process::Command::new("python3")
        .arg("-c")
        .arg(guard)
        .current_dir(dir.path())
        .env("PYTHONPATH", dir.path())
        .env("TMPDIR", dir.path())
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no python3 ({e})");
            return;
        }
    };
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn call(q: &str, args: &str, reaches: &[&str]) -> TracedCall {
    TracedCall {
        file: "pkg/m.py".into(),
        module: "pkg.m".into(),
        qualname: q.into(),
        receiver: None,
        args: args.into(),
        imports: vec![],
        reaches: reaches.iter().map(|s| s.to_string()).collect(),
        setup: vec![],
    }
}

fn cand(function: &str) -> Candidate {
    serde_json::from_value(serde_json::json!({
        "id": "0123456789abcdef", "mutator": "py-x", "category": "logic",
        "file": "pkg/m.py", "function": function, "function_lines": [1, 3],
        "byte_range": [0, 1], "line_range": [2, 2], "before": "a", "after": "b",
        "bug_patch": "", "hash": "h", "description": "", "issue_hints": []
    }))
    .unwrap()
}

#[test]
fn picks_public_entry_points_first_and_caps() {
    let trace = Trace {
        calls: vec![
            call("_helper", "(1,)", &["pkg/m.py::_helper"]),
            call("api", "(10, 20)", &["pkg/m.py::api", "pkg/m.py::_helper"]),
            call("api", "(1,)", &["pkg/m.py::api", "pkg/m.py::_helper"]),
            call("other", "(1,)", &["pkg/m.py::other"]),
        ],
        dropped: 0,
        scenarios: vec![],
        cpu_s: None,
    };
    let (reaching, calls) = reaching_calls(&trace, &cand("_helper"), 2);
    assert_eq!(reaching, 3);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].qualname, "api");
    assert_eq!(calls[0].args, "(1,)");
    assert_eq!(calls[1].qualname, "_helper");
}

#[test]
fn only_assertable_differences_count() {
    let v = |s: &str| CallOutcome::Value {
        source: Some(s.into()),
        repr: s.into(),
        imports: vec![],
        nondeterministic: false,
        attrs: BTreeMap::new(),
    };
    let raised = |t: &str, m: &str| CallOutcome::Raised {
        type_name: t.into(),
        type_module: "builtins".into(),
        message: m.into(),
        nondeterministic: false,
        attrs: BTreeMap::new(),
        imports: vec![],
    };
    assert!(assertable(&v("1"), &v("2")));
    assert!(!assertable(&v("1"), &v("1")));
    assert!(assertable(&v("1"), &raised("ValueError", "x")));
    assert!(assertable(
        &raised("ValueError", "a"),
        &raised("ValueError", "b")
    ));
    assert!(!assertable(
        &raised("ValueError", "a"),
        &raised("ValueError", "a")
    ));
    let flaky = CallOutcome::Value {
        source: Some("1".into()),
        repr: "1".into(),
        imports: vec![],
        nondeterministic: true,
        attrs: BTreeMap::new(),
    };
    assert!(!assertable(&flaky, &v("2")));
    assert!(!assertable(&CallOutcome::Timeout, &v("2")));
    // Objects with no source (their repr hides their state) differ in an attribute.
    let object = |attrs: &[(&str, &str)]| CallOutcome::Value {
        source: None,
        repr: "<Table 1x1>".into(),
        imports: vec![],
        nondeterministic: false,
        attrs: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let clean = object(&[("metadata", "{'a': 1}"), ("width", "1")]);
    assert!(assertable(
        &clean,
        &object(&[("metadata", "{}"), ("width", "1")])
    ));
    assert!(assertable(&clean, &object(&[("width", "1")])));
    assert!(!assertable(
        &clean,
        &object(&[("metadata", "{'a': 1}"), ("width", "1")])
    ));
    assert!(!assertable(&object(&[]), &object(&[("width", "1")])));
    let d = Distinguishing {
        call: call("Table.from_data", "(5, metadata={'a': 1})", &[]),
        clean: clean.clone(),
        buggy: object(&[("metadata", "{}"), ("width", "1")]),
    };
    assert_eq!(
        d.attr_differences(),
        vec![(
            "metadata".to_string(),
            "{'a': 1}".to_string(),
            Some("{}".to_string())
        )]
    );
    let setup = SynthSetup {
        python: "python".into(),
        pytest: "python -m pytest".into(),
        source_files: vec!["pkg/m.py".into()],
        python_path: vec![".".into()],
        test_files: vec!["tests/test_m.py".into()],
    };
    let test = render(&[d], &setup, &cand("Table.from_data"));
    assert!(
            test.source.contains(
                "    result = Table.from_data(5, metadata={'a': 1})\n    assert result.metadata == {'a': 1}\n"
            ),
            "{}",
            test.source
        );
    // Two exceptions with one type and message that differ in an attribute
    // (marshmallow's ValidationError without its `valid_data`).
    let error = |attrs: &[(&str, &str)]| CallOutcome::Raised {
        type_name: "ValidationError".into(),
        type_module: "pkg.exceptions".into(),
        message: "{0: ['bad']}".into(),
        nondeterministic: false,
        attrs: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        imports: vec![],
    };
    let clean = error(&[("valid_data", "[1]")]);
    assert!(assertable(&clean, &error(&[("valid_data", "None")])));
    assert!(!assertable(&clean, &error(&[("valid_data", "[1]")])));
    let d = Distinguishing {
        call: call("Tuple.deserialize", "((1, 'x'))", &[]),
        clean,
        buggy: error(&[("valid_data", "None")]),
    };
    let test = render(&[d], &setup, &cand("Tuple.deserialize"));
    assert!(
            test.source.contains("    with pytest.raises(ValidationError, match=")
                && test.source.contains(") as raised:\n        Tuple.deserialize((1, 'x'))\n    assert raised.value.valid_data == [1]\n")
                && test.source.contains("from pkg.exceptions import ValidationError"),
            "{}",
            test.source
        );
}

#[test]
fn special_methods_read_as_their_syntax() {
    assert_eq!(method_call("v", "__call__", "(3, k=1)"), "v(3, k=1)");
    assert_eq!(method_call("m", "__getitem__", "('a')"), "m['a']");
    assert_eq!(method_call("m", "__getitem__", "((1, 2))"), "m[(1, 2)]");
    assert_eq!(method_call("m", "__contains__", "('a,b')"), "('a,b' in m)");
    assert_eq!(method_call("m", "__len__", "()"), "len(m)");
    assert_eq!(method_call("m", "__repr__", "()"), "repr(m)");
    assert_eq!(method_call("m", "__eq__", "([1, 2])"), "(m == [1, 2])");
    // Assignment is a statement: it stays a call, valid in an expression.
    assert_eq!(
        method_call("m", "__setitem__", "('a', 1)"),
        "m.__setitem__('a', 1)"
    );
    assert_eq!(
        method_call("m", "__getitem__", "('a', 1)"),
        "m.__getitem__('a', 1)"
    );
    assert_eq!(method_call("m", "get", "('a')"), "m.get('a')");
    // A property's getter is recorded with no argument list: it is read, not called.
    assert_eq!(method_call("s", "last", ""), "s.last");
}

#[test]
fn renders_readable_tests() {
    let d = Distinguishing {
        call: TracedCall {
            imports: vec!["from decimal import Decimal".into()],
            ..call("parse_quantity", "('2 kg')", &[])
        },
        clean: CallOutcome::Value {
            source: Some("(Decimal('2'), 'kg')".into()),
            repr: String::new(),
            imports: vec!["from decimal import Decimal".into()],
            nondeterministic: false,
            attrs: BTreeMap::new(),
        },
        buggy: CallOutcome::Raised {
            type_name: "IndexError".into(),
            type_module: "builtins".into(),
            message: "string index out of range".into(),
            nondeterministic: false,
            attrs: BTreeMap::new(),
            imports: vec![],
        },
    };
    let e = Distinguishing {
        call: call("parse_quantity", "('')", &[]),
        clean: CallOutcome::Raised {
            type_name: "MoneyError".into(),
            type_module: "pkg.m".into(),
            message: "empty quantity (x)".into(),
            nondeterministic: false,
            attrs: BTreeMap::new(),
            imports: vec![],
        },
        buggy: CallOutcome::Raised {
            type_name: "MoneyError".into(),
            type_module: "pkg.m".into(),
            message: "bad".into(),
            nondeterministic: false,
            attrs: BTreeMap::new(),
            imports: vec![],
        },
    };
    let setup = SynthSetup {
        python: "python".into(),
        pytest: "python -m pytest".into(),
        source_files: vec![],
        python_path: vec![".".into()],
        test_files: vec!["tests/test_m.py".into()],
    };
    let t = render(&[d, e], &setup, &cand("parse_quantity"));
    assert_eq!(t.path, "tests/test_m_parse_quantity_regression.py");
    assert!(
        t.source.contains("from decimal import Decimal\n"),
        "{}",
        t.source
    );
    assert!(
        t.source
            .contains("from pkg.m import MoneyError\nfrom pkg.m import parse_quantity\n"),
        "{}",
        t.source
    );
    assert!(t.source.contains(
            "def test_parse_quantity_result_for_2_kg():\n    assert parse_quantity('2 kg') == (Decimal('2'), 'kg')\n"
        ), "{}", t.source);
    assert!(t.source.contains(
            "    with pytest.raises(MoneyError, match=r'^empty quantity \\(x\\)$'):\n        parse_quantity('')\n"
        ), "{}", t.source);
    assert_eq!(t.tests.len(), 2);
    assert!(t
        .patch
        .starts_with("diff --git a/tests/test_m_parse_quantity_regression.py"));
}
