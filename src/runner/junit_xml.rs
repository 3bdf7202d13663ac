//! JUnit XML reports (pytest's `--junitxml`, Surefire's TEST-*.xml) parsed into per-test results.

use crate::run::{TestResult, TestStatus};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::collections::BTreeMap;

/// One `<testcase>` as written in the report, before its id is made stable.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub classname: String,
    pub name: String,
    /// The `file` attribute (pytest's xunit1 family), when present.
    pub file: Option<String>,
    pub result: TestResult,
    /// swe-forge's probe plugin (`probe.py`): what unseeded randomness the test drew on
    /// (`random`, `random-instance`), from the case's `swe_forge_nondeterministic` property.
    pub nondeterministic: Option<String>,
    /// swe-forge's probe plugin: how the test could depend on code it did not run under the
    /// tracer (`process`, `source`, `trace`), from the case's `swe_forge_indirect` property.
    pub indirect: Option<String>,
}

/// Parse a JUnit XML document into its test cases, in document order.
pub fn parse_cases(xml: &str) -> Result<Vec<Case>, String> {
    let mut reader = Reader::from_str(xml);
    // Untrimmed: a captured report keeps its indentation around entities (`148     &gt;&gt;&gt; f()`).
    reader.config_mut().trim_text(false);
    let mut cases = Vec::new();
    let mut current: Option<Case> = None;
    // Inside the `<error>` of a collection failure (pytest: `message="collection failure"`),
    // whose text is the traceback: its last `E ` line (the exception; a native traceback's
    // last line) joins the message.
    let mut collection_error = false;
    // Inside a `<failure>`/`<error>` whose message pytest cut short ("[+N more lines; full
    // report in element text]"): a doctest's report (its example, expected and got) is then
    // taken from the element text.
    let mut truncated = false;
    let mut collection_text = String::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("malformed XML at byte {}: {e}", reader.buffer_position()))?;
        match event {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                if let Some(done) = current.take() {
                    cases.push(done);
                }
                let attrs = attributes(&e)?;
                let time = attrs
                    .get("time")
                    .and_then(|t| t.parse::<f64>().ok())
                    .unwrap_or(0.0);
                current = Some(Case {
                    classname: attrs.get("classname").cloned().unwrap_or_default(),
                    name: attrs.get("name").cloned().unwrap_or_default(),
                    file: attrs.get("file").cloned(),
                    result: TestResult {
                        status: TestStatus::Passed,
                        duration_s: time,
                        message: None,
                    },
                    nondeterministic: None,
                    indirect: None,
                });
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"property" => {
                let attrs = attributes(&e)?;
                match (current.as_mut(), attrs.get("name").map(String::as_str)) {
                    (Some(case), Some("swe_forge_nondeterministic")) => {
                        case.nondeterministic = attrs.get("value").cloned();
                    }
                    (Some(case), Some("swe_forge_indirect")) => {
                        case.indirect = attrs.get("value").cloned();
                    }
                    _ => {}
                }
            }
            Event::Start(e) | Event::Empty(e) => {
                let tag = e.name().as_ref().to_vec();
                let status = match tag.as_slice() {
                    b"failure" => Some(TestStatus::Failed),
                    b"error" => Some(TestStatus::Error),
                    b"skipped" => Some(TestStatus::Skipped),
                    _ => None,
                };
                if let (Some(status), Some(case)) = (status, current.as_mut()) {
                    let attrs = attributes(&e)?;
                    // Precedence: a failure outranks an error (e.g. teardown), which outranks a skip.
                    let rank = |s: TestStatus| match s {
                        TestStatus::Failed => 3,
                        TestStatus::Error => 2,
                        TestStatus::Skipped => 1,
                        _ => 0,
                    };
                    if rank(status) > rank(case.result.status) {
                        case.result.status = status;
                        case.result.message = attrs.get("message").map(|m| truncate(m, 2000));
                        collection_error = status == TestStatus::Error
                            && case.result.message.as_deref() == Some("collection failure");
                        truncated = case.result.message.as_deref().is_some_and(|m| {
                            m.trim_end().ends_with("full report in element text]")
                        });
                    }
                }
            }
            Event::Text(t) if collection_error || truncated => {
                collection_text.push_str(&t.decode().unwrap_or_default());
            }
            Event::GeneralRef(r) if collection_error || truncated => {
                let name = r.decode().unwrap_or_default();
                collection_text.push_str(match name.as_ref() {
                    "lt" => "<",
                    "gt" => ">",
                    "amp" => "&",
                    "quot" => "\"",
                    "apos" => "'",
                    _ => "?",
                });
            }
            Event::End(e) if e.name().as_ref() == b"error" && collection_error => {
                // pytest's own styles mark the exception with `E `; a native traceback
                // (`--tb=native`) ends with it.
                let exception = collection_text
                    .lines()
                    .rev()
                    .find_map(|l| l.strip_prefix("E "))
                    .or_else(|| collection_text.lines().rev().find(|l| !l.trim().is_empty()))
                    .map(str::trim);
                if let (Some(e), Some(case)) = (exception, current.as_mut()) {
                    case.result.message = Some(truncate(&format!("collection failure: {e}"), 2000));
                }
                collection_error = false;
                collection_text.clear();
            }
            Event::End(e) if truncated && matches!(e.name().as_ref(), b"failure" | b"error") => {
                let last = collection_text.trim_end().lines().last().unwrap_or("");
                if let Some(case) = current.as_mut() {
                    if last.ends_with(": DocTestFailure") || last.ends_with(": UnexpectedException")
                    {
                        case.result.message = Some(truncate(collection_text.trim_end(), 4000));
                    } else if let Some(m) = case.result.message.take() {
                        // pytest's note on its own truncation is the reporter's, not the
                        // failure's: it must not reach an issue text.
                        case.result.message = Some(without_truncation_note(&m));
                    }
                }
                truncated = false;
                collection_text.clear();
            }
            Event::End(e) if e.name().as_ref() == b"testcase" => {
                if let Some(done) = current.take() {
                    cases.push(done);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(done) = current.take() {
        cases.push(done);
    }
    Ok(cases)
}

/// `message` without the last line pytest's JUnit reporter adds when it shortens a message
/// (`[+30 more lines; full report in element text]`, `[truncated; full report in element text]`).
fn without_truncation_note(message: &str) -> String {
    let trimmed = message.trim_end();
    match trimmed.rsplit_once('\n') {
        Some((head, last))
            if last.trim_start().starts_with('[')
                && last.trim_end().ends_with("full report in element text]") =>
        {
            head.trim_end().to_string()
        }
        None if trimmed.starts_with('[') && trimmed.ends_with("full report in element text]") => {
            String::new()
        }
        _ => message.to_string(),
    }
}

fn attributes(e: &BytesStart<'_>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for attr in e.attributes() {
        let attr = attr.map_err(|err| format!("bad attribute: {err}"))?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        let value = attr
            .unescape_value()
            .map_err(|err| format!("bad attribute value: {err}"))?
            .into_owned();
        out.insert(key, value);
    }
    Ok(out)
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// pytest node id of a case: `path/to/test_file.py::Class::test[param]`.
///
/// pytest writes `classname` as the node id's path with `/` → `.` and `.py` dropped, followed by
/// the class names. The module part is recognised from the `file` attribute, or else from the
/// known test files of the repository.
pub fn pytest_node_id(case: &Case, test_files: &[String]) -> String {
    let module_of = |file: &str| file.trim_end_matches(".py").replace('/', ".");
    let mut candidates: Vec<&str> = Vec::new();
    if let Some(f) = case.file.as_deref() {
        candidates.push(f);
    }
    candidates.extend(test_files.iter().map(String::as_str));
    let mut best: Option<(&str, &str)> = None;
    for file in candidates {
        let module = module_of(file);
        let rest = if case.classname == module {
            Some("")
        } else {
            case.classname
                .strip_prefix(&module)
                .and_then(|r| r.strip_prefix('.'))
        };
        if let Some(rest) = rest {
            // The longest module match wins (a package named like a module prefix).
            if best.is_none_or(|(f, _)| module_of(f).len() < module.len()) {
                best = Some((file, rest));
            }
        }
    }
    match best {
        Some((file, classes)) => {
            let mut id = file.to_string();
            for class in classes.split('.').filter(|c| !c.is_empty()) {
                id.push_str("::");
                id.push_str(class);
            }
            id.push_str("::");
            id.push_str(&case.name);
            id
        }
        None => format!("{}::{}", case.classname.replace('.', "::"), case.name),
    }
}

/// JUnit (Surefire) id of a case: `fully.qualified.Class#method`.
pub fn junit_id(case: &Case) -> String {
    format!("{}#{}", case.classname, case.name)
}

/// Merge cases into per-id results (a repeated id keeps its worst status).
pub fn into_results(cases: Vec<(String, TestResult)>) -> BTreeMap<String, TestResult> {
    let mut out: BTreeMap<String, TestResult> = BTreeMap::new();
    for (id, result) in cases {
        match out.get(&id) {
            Some(prev) if severity(prev.status) >= severity(result.status) => {}
            _ => {
                out.insert(id, result);
            }
        }
    }
    out
}

fn severity(s: TestStatus) -> u8 {
    match s {
        TestStatus::Passed => 0,
        TestStatus::Skipped => 1,
        TestStatus::Missing => 2,
        TestStatus::Error => 3,
        TestStatus::Failed => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.1">
<testcase classname="tests.test_money" name="test_parse" file="tests/test_money.py" line="3" time="0.001" />
<testcase classname="tests.test_money.TestRound" name="test_half[1-2]" file="tests/test_money.py" line="9" time="0.002"><failure message="assert 3 == 4&#10; +  where 3 = f(2)">trace</failure></testcase>
<testcase classname="tests.test_money" name="test_broken" file="tests/test_money.py" line="20" time="0.0"><error message="fixture 'db' not found">e</error></testcase>
<testcase classname="tests.test_money" name="test_later" file="tests/test_money.py" line="30" time="0.0"><skipped type="pytest.skip" message="later">s</skipped></testcase>
<testcase classname="tests.sub.test_x.TestA.TestB" name="test_y" time="0.5"></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn the_reporters_truncation_note_is_dropped() {
        assert_eq!(
            without_truncation_note(
                "OSError: b'Traceback'\n ...\n[truncated; full report in element text]"
            ),
            "OSError: b'Traceback'\n ..."
        );
        assert_eq!(
            without_truncation_note("[+3 more lines; full report in element text]"),
            ""
        );
        assert_eq!(
            without_truncation_note("assert [1] == [2]"),
            "assert [1] == [2]"
        );
        assert_eq!(without_truncation_note("a\n[b]"), "a\n[b]");
    }

    #[test]
    fn a_truncated_doctest_report_is_read_from_the_element_text() {
        let xml = "<testsuites><testsuite><testcase classname=\"src.num\" name=\"num.intcomma\" file=\"src/num.py\" time=\"0.01\"><failure message=\"147 Examples:&#10;148     &gt;&gt;&gt; intcomma(1000)&#10;[+4 more lines; full report in element text]\">147 Examples:\n148     &gt;&gt;&gt; intcomma(1000)\nExpected:\n    '1,000'\nGot:\n    '1000'\n\n/w/src/num.py:148: DocTestFailure</failure></testcase>\
<testcase classname=\"t\" name=\"test_long\" file=\"t.py\" time=\"0.01\"><failure message=\"assert 1 == 2&#10;[+30 more lines; full report in element text]\">def test_long():\n&gt;   assert 1 == 2\nE   assert 1 == 2\nt.py:2: AssertionError</failure></testcase></testsuite></testsuites>";
        let cases = parse_cases(xml).unwrap();
        let doctest = cases[0].result.message.as_deref().unwrap();
        assert!(
            doctest.contains("Expected:\n    '1,000'\nGot:\n    '1000'"),
            "{doctest}"
        );
        assert!(doctest.contains(">>> intcomma(1000)"), "{doctest}");
        // Any other failure keeps pytest's message, less pytest's note on its truncation.
        assert_eq!(cases[1].result.message.as_deref(), Some("assert 1 == 2"));
    }

    #[test]
    fn a_collection_failure_keeps_its_exception() {
        let xml = r#"<testsuites><testsuite><testcase classname="" name="tests.test_plural" file="tests/test_plural.py" time="0.000"><error message="collection failure">tests/test_plural.py:1: in &lt;module&gt;
    from wordrules import plural
wordrules/__init__.py:9: in _register
    raise ValueError("duplicate rule: " + key)
E   ValueError: duplicate rule: person</error></testcase></testsuite></testsuites>"#;
        let cases = parse_cases(xml).unwrap();
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].result.status, TestStatus::Error);
        assert_eq!(
            cases[0].result.message.as_deref(),
            Some("collection failure: ValueError: duplicate rule: person")
        );
        // The same as a native traceback (`--tb=native`): its last line.
        let native = r#"<testsuites><testsuite><testcase classname="" name="tests.test_plural" file="tests/test_plural.py" time="0.000"><error message="collection failure">Traceback (most recent call last):
  File "/w/wordrules/__init__.py", line 9, in _register
    raise ValueError("duplicate rule: " + key)
ValueError: duplicate rule: person
</error></testcase></testsuite></testsuites>"#;
        assert_eq!(
            parse_cases(native).unwrap()[0].result.message.as_deref(),
            Some("collection failure: ValueError: duplicate rule: person")
        );
    }

    #[test]
    fn parses_statuses_and_messages() {
        let cases = parse_cases(REPORT).unwrap();
        assert_eq!(cases.len(), 5);
        assert_eq!(cases[0].result.status, TestStatus::Passed);
        assert_eq!(cases[1].result.status, TestStatus::Failed);
        assert!(cases[1]
            .result
            .message
            .as_deref()
            .unwrap()
            .starts_with("assert 3 == 4\n"));
        assert_eq!(cases[2].result.status, TestStatus::Error);
        assert_eq!(cases[3].result.status, TestStatus::Skipped);
        assert_eq!(cases[4].result.duration_s, 0.5);
    }

    #[test]
    fn rebuilds_pytest_node_ids() {
        let cases = parse_cases(REPORT).unwrap();
        let files = vec!["tests/sub/test_x.py".to_string()];
        let ids: Vec<String> = cases.iter().map(|c| pytest_node_id(c, &files)).collect();
        assert_eq!(ids[0], "tests/test_money.py::test_parse");
        assert_eq!(ids[1], "tests/test_money.py::TestRound::test_half[1-2]");
        assert_eq!(ids[4], "tests/sub/test_x.py::TestA::TestB::test_y");
    }

    #[test]
    fn malformed_xml_is_an_error() {
        assert!(parse_cases("<testsuite><testcase name='a'></testsuite>").is_err());
    }

    #[test]
    fn repeated_ids_keep_the_worst_status() {
        let pass = TestResult {
            status: TestStatus::Passed,
            duration_s: 0.0,
            message: None,
        };
        let fail = TestResult {
            status: TestStatus::Failed,
            ..pass.clone()
        };
        let merged = into_results(vec![("a".into(), fail.clone()), ("a".into(), pass.clone())]);
        assert_eq!(merged["a"].status, TestStatus::Failed);
    }
}
