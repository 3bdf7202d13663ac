//! Maven Surefire's output: TEST-*.xml reports (bundled into one scratch file), stable JUnit
//! test ids, and what the Maven log says when a build fails before the tests (compile errors).

use super::junit_xml;
use crate::run::TestResult;

/// The line that opens each report in a bundle, followed by the report's path and ` -->`.
pub const REPORT_MARKER: &str = "<!-- swe-forge-report: ";

/// Start of [`crate::run::Run::anomaly`] when the main or test sources did not compile.
pub const COMPILE_ERROR_PREFIX: &str = crate::run::BUILD_ERROR_PREFIX;

/// At most this many compiler errors are quoted in an anomaly.
const MAX_COMPILE_ERRORS: usize = 5;

/// A report in the bundle that could not be parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unreadable report {file}: {detail}")]
pub struct ReportError {
    pub file: String,
    pub detail: String,
}

/// Shell lines that concatenate every `*/target/surefire-reports/TEST-*.xml` under the
/// current directory into `out`, each preceded by a [`REPORT_MARKER`] line. Writes an empty
/// file when there is no report.
pub fn bundle_script(out_q: &str) -> String {
    format!(
        "find . -path '*/target/surefire-reports/TEST-*.xml' -type f 2>/dev/null | LC_ALL=C sort | \
         while IFS= read -r f; do printf '\\n{REPORT_MARKER}%s -->\\n' \"$f\"; cat \"$f\"; done > {out_q}\n"
    )
}

/// Shell line that removes the report directories left by earlier runs.
pub fn clean_reports_script() -> &'static str {
    "find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null\n"
}

/// Parse a bundle written by [`bundle_script`] into (test id, result) pairs; reports that are
/// not well-formed are returned as errors and do not stop the others from being read.
pub fn parse_bundle(text: &str) -> (Vec<(String, TestResult)>, Vec<ReportError>) {
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for (file, xml) in split_bundle(text) {
        match junit_xml::parse_cases(xml) {
            Ok(cases) => results.extend(
                cases
                    .into_iter()
                    .map(|c| (test_id(&c.classname, &c.name), c.result)),
            ),
            Err(detail) => errors.push(ReportError {
                file: file.to_string(),
                detail,
            }),
        }
    }
    (results, errors)
}

/// The (path, document) pairs of a bundle; text before the first marker is ignored.
fn split_bundle(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(REPORT_MARKER) {
        let after = &rest[start + REPORT_MARKER.len()..];
        let (header, body) = after.split_once('\n').unwrap_or((after, ""));
        let file = header.trim_end().trim_end_matches("-->").trim();
        let end = body.find(REPORT_MARKER).unwrap_or(body.len());
        out.push((file.trim_start_matches("./"), &body[..end]));
        rest = &body[end..];
    }
    out
}

/// The stable id of a Surefire test case: `fully.qualified.Class#method`.
///
/// Invocation suffixes are dropped so that every invocation of a parameterized or repeated
/// test shares its method's id (the id Surefire's `-Dtest=Class#method` selects): JUnit 5's
/// `positive{int}[1]` and `repeated[2]`, JUnit 4's `test[0]`, and a trailing `()`. The
/// invocations are merged, the worst status winning. Class-level entries (an empty name, the
/// class's own name, JUnit 4's `initializationError` or `classMethod`) get the class name alone.
pub fn test_id(classname: &str, name: &str) -> String {
    let method = name
        .find(['(', '[', '{'])
        .map_or(name, |i| &name[..i])
        .trim();
    let simple = classname.rsplit(['.', '$']).next().unwrap_or(classname);
    let class_level = method.is_empty()
        || method == classname
        || method == simple
        || method == "initializationError"
        || method == "classMethod";
    match (classname.is_empty(), class_level) {
        (true, _) => method.to_string(),
        (false, true) => classname.to_string(),
        (false, false) => format!("{classname}#{method}"),
    }
}

/// Requested methods absent from the report whose class has a failing class-level entry
/// ([`test_id`]: a static initializer that threw, a `suite()` or `@BeforeClass` that failed)
/// take that entry's status and message: the class failed before its methods ran, which is
/// their failure, not a crash of the run. Other absent methods stay for the caller to mark.
pub fn fill_from_class_failures(
    results: &mut std::collections::BTreeMap<String, TestResult>,
    requested: &[String],
) {
    for id in requested {
        if results.contains_key(id) {
            continue;
        }
        let Some((class, method)) = id.split_once('#') else {
            continue;
        };
        if method.is_empty() {
            continue;
        }
        let Some(class_result) = results.get(class).filter(|r| r.status.is_failure()) else {
            continue;
        };
        let filled = TestResult {
            status: class_result.status,
            duration_s: 0.0,
            message: Some(match &class_result.message {
                Some(m) => format!("the class failed before its tests ran: {m}"),
                None => "the class failed before its tests ran".to_string(),
            }),
        };
        results.insert(id.clone(), filled);
    }
}

/// The value of Surefire's `-Dtest` for test ids: methods of one class joined with `+`
/// (`a.B#x*+y*,a.C#z*`), classes in first-seen order; an id without `#` selects a whole class.
///
/// Each method is a prefix pattern: a test id is its method's name without the invocation
/// suffix ([`test_id`]), and Surefire matches a method pattern against the name the provider
/// reports, which for a JUnit 4 `@RunWith(Parameterized)` test is `testEncode[0]`: the bare
/// `Class#testEncode` selects none of its invocations ("Tests run: 0"). The pattern also runs
/// the class's methods whose names start with the same text; their results are read but no
/// verdict looks at a test it was not asked about.
pub fn selection(tests: &[String]) -> String {
    let mut classes: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut whole: Vec<&str> = Vec::new();
    for id in tests {
        let (class, method) = match id.split_once('#') {
            Some((c, m)) if !m.is_empty() => (c, Some(m)),
            Some((c, _)) => (c, None),
            None => (id.as_str(), None),
        };
        let Some(method) = method else {
            if !whole.contains(&class) {
                whole.push(class);
            }
            continue;
        };
        match classes.iter_mut().find(|(c, _)| *c == class) {
            Some((_, methods)) if methods.contains(&method) => {}
            Some((_, methods)) => methods.push(method),
            None => classes.push((class, vec![method])),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    for (class, methods) in &classes {
        if whole.contains(class) {
            continue;
        }
        let patterns: Vec<String> = methods.iter().map(|m| format!("{m}*")).collect();
        parts.push(format!("{class}#{}", patterns.join("+")));
    }
    parts.extend(whole.iter().map(|c| c.to_string()));
    parts.join(",")
}

/// The Maven log without ANSI colour sequences (Debian's Maven prints some even with `-B`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The anomaly for a build whose sources did not compile, or `None`: `compile error: main
/// sources: src/main/java/a/B.java:[52,32] incompatible types: …`, quoting the first compiler
/// errors with paths relative to `root` (the worker's repository root as commands see it).
pub fn compile_error(log: &str, root: &str) -> Option<String> {
    let log = strip_ansi(log);
    let goal = log.lines().find(|l| {
        l.contains("maven-compiler-plugin") && l.contains("Failed to execute goal")
            || l.contains("COMPILATION ERROR")
    })?;
    let phase = if log.lines().any(|l| {
        l.contains("Failed to execute goal") && l.contains(":testCompile")
            || l.contains("Failed to execute goal") && l.contains("(default-testCompile)")
    }) {
        "test sources"
    } else if goal.contains("COMPILATION ERROR") && !log.contains("Failed to execute goal") {
        "sources"
    } else {
        "main sources"
    };
    let root = root.trim_end_matches('/');
    let mut errors: Vec<String> = Vec::new();
    for line in log.lines() {
        let body = line.trim_start_matches("[ERROR]").trim();
        if !body.contains(".java:[") {
            continue;
        }
        let rel = body
            .strip_prefix(root)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(body);
        let rel = rel.to_string();
        if !errors.contains(&rel) {
            errors.push(rel);
        }
    }
    let detail = if errors.is_empty() {
        "see the log".to_string()
    } else {
        let more = errors.len().saturating_sub(MAX_COMPILE_ERRORS);
        let mut d = errors
            .iter()
            .take(MAX_COMPILE_ERRORS)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            d.push_str(&format!(" (and {more} more)"));
        }
        d
    };
    Some(format!("{COMPILE_ERROR_PREFIX} {phase}: {detail}"))
}

/// Why a Maven build failed without a test failing: the forked test JVM died, a dependency or
/// plugin could not be resolved offline, or else the first `[ERROR]` line.
pub fn build_failure(log: &str) -> Option<String> {
    let log = strip_ansi(log);
    let lines: Vec<&str> = log
        .lines()
        .map(|l| l.trim_start_matches("[ERROR]").trim())
        .filter(|l| !l.is_empty())
        .collect();
    let pick = |needle: &str| lines.iter().find(|l| l.contains(needle)).copied();
    if let Some(l) = pick("The forked VM terminated").or_else(|| pick("ExecutionException")) {
        return Some(format!("the forked test JVM failed: {}", shorten(l, 300)));
    }
    if let Some(l) = pick("Could not resolve").or_else(|| pick("offline mode")) {
        return Some(format!("unresolved offline: {}", shorten(l, 300)));
    }
    let first = lines.iter().find(|l| {
        !l.starts_with("->")
            && !l.starts_with("To see the full")
            && !l.starts_with("Re-run Maven")
            && !l.starts_with("For more information")
            && !l.starts_with("[Help")
    })?;
    Some(shorten(first, 300))
}

fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::TestStatus;

    /// Surefire 2.22.3 + JUnit 5.9.2 (Debian bookworm), trimmed: a parameterized test, a
    /// repeated one, a failure with captured output, an error and a skipped test.
    const JUNIT5: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report.xsd" name="dev.sweforge.javashelf.extra.ParamTest" time="0.309" tests="8" errors="1" skipped="1" failures="2">
  <properties>
    <property name="java.specification.version" value="17"/>
  </properties>
  <testcase name="errors" classname="dev.sweforge.javashelf.extra.ParamTest" time="0.062">
    <error message="boom" type="java.lang.IllegalStateException">java.lang.IllegalStateException: boom
	at dev.sweforge.javashelf.extra.ParamTest.errors(ParamTest.java:32)
</error>
  </testcase>
  <testcase name="repeated[1]" classname="dev.sweforge.javashelf.extra.ParamTest" time="0.01"/>
  <testcase name="repeated[2]" classname="dev.sweforge.javashelf.extra.ParamTest" time="0"/>
  <testcase name="fails" classname="dev.sweforge.javashelf.extra.ParamTest" time="0.025">
    <failure message="one is not two ==&gt; expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: one is not two ==> expected: <1> but was: <2>
	at dev.sweforge.javashelf.extra.ParamTest.fails(ParamTest.java:27)
]]></failure>
    <system-out><![CDATA[some output <&>
]]></system-out>
  </testcase>
  <testcase name="positive{int}[1]" classname="dev.sweforge.javashelf.extra.ParamTest" time="0.066">
    <failure message="n=1 ==&gt; expected: &lt;true&gt; but was: &lt;false&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: n=1 ==> expected: <true> but was: <false>
]]></failure>
  </testcase>
  <testcase name="positive{int}[2]" classname="dev.sweforge.javashelf.extra.ParamTest" time="0"/>
  <testcase name="skipped" classname="dev.sweforge.javashelf.extra.ParamTest" time="0">
    <skipped message="later"/>
  </testcase>
</testsuite>"#;

    /// Surefire 2.22.3 + JUnit 4.13.2, trimmed; the failing case also has system-out.
    const JUNIT4: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="p.ATest" time="0.332" tests="4" errors="1" skipped="1" failures="1">
  <properties>
  </properties>
  <testcase name="boom" classname="p.ATest" time="0.045">
    <error message="boom" type="java.lang.IllegalStateException">java.lang.IllegalStateException: boom
	at p.ATest.boom(ATest.java:8)
</error>
  </testcase>
  <testcase name="later" classname="p.ATest" time="0">
    <skipped message="later"/>
  </testcase>
  <testcase name="twice" classname="p.ATest" time="0"/>
  <testcase name="wrong" classname="p.ATest" time="0.02">
    <system-out><![CDATA[out before the failure
]]></system-out>
    <failure message="twice expected:&lt;5&gt; but was:&lt;4&gt;" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: twice expected:<5> but was:<4>
	at p.ATest.wrong(ATest.java:7)
]]></failure>
    <system-err><![CDATA[err
]]></system-err>
  </testcase>
</testsuite>"#;

    fn bundle(reports: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for (file, xml) in reports {
            out.push_str(&format!("\n{REPORT_MARKER}{file} -->\n{xml}"));
        }
        out
    }

    fn results(text: &str) -> std::collections::BTreeMap<String, TestResult> {
        let (cases, errors) = parse_bundle(text);
        assert!(errors.is_empty(), "{errors:?}");
        junit_xml::into_results(cases)
    }

    #[test]
    fn parses_a_junit5_report() {
        let r = results(&bundle(&[(
            "./target/surefire-reports/TEST-dev.sweforge.javashelf.extra.ParamTest.xml",
            JUNIT5,
        )]));
        let id = |m: &str| format!("dev.sweforge.javashelf.extra.ParamTest#{m}");
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[&id("errors")].status, TestStatus::Error);
        assert_eq!(r[&id("errors")].message.as_deref(), Some("boom"));
        assert_eq!(r[&id("repeated")].status, TestStatus::Passed);
        assert_eq!(r[&id("fails")].status, TestStatus::Failed);
        assert_eq!(
            r[&id("fails")].message.as_deref(),
            Some("one is not two ==> expected: <1> but was: <2>")
        );
        // One failing invocation fails the parameterized method.
        assert_eq!(r[&id("positive")].status, TestStatus::Failed);
        assert_eq!(r[&id("skipped")].status, TestStatus::Skipped);
        assert_eq!(r[&id("skipped")].message.as_deref(), Some("later"));
    }

    #[test]
    fn parses_a_junit4_report_with_output_around_the_failure() {
        let r = results(&bundle(&[(
            "target/surefire-reports/TEST-p.ATest.xml",
            JUNIT4,
        )]));
        assert_eq!(r.len(), 4);
        assert_eq!(r["p.ATest#boom"].status, TestStatus::Error);
        assert_eq!(r["p.ATest#later"].status, TestStatus::Skipped);
        assert_eq!(r["p.ATest#twice"].status, TestStatus::Passed);
        assert_eq!(r["p.ATest#wrong"].status, TestStatus::Failed);
        assert_eq!(
            r["p.ATest#wrong"].message.as_deref(),
            Some("twice expected:<5> but was:<4>")
        );
        assert_eq!(r["p.ATest#wrong"].duration_s, 0.02);
    }

    #[test]
    fn several_reports_in_one_bundle() {
        let text = format!(
            "noise before{}",
            bundle(&[("a/TEST-p.ATest.xml", JUNIT4), ("b/TEST-x.xml", JUNIT5)])
        );
        let r = results(&text);
        assert_eq!(r.len(), 9);
        assert_eq!(split_bundle(&text)[0].0, "a/TEST-p.ATest.xml");
        assert!(parse_bundle("").0.is_empty());
    }

    #[test]
    fn malformed_report_is_an_error_and_others_still_count() {
        let text = bundle(&[
            (
                "./m/target/surefire-reports/TEST-bad.xml",
                "<testsuite><testcase name='a' classname='b'></testsuite>",
            ),
            ("./target/surefire-reports/TEST-p.ATest.xml", JUNIT4),
        ]);
        let (cases, errors) = parse_bundle(&text);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, "m/target/surefire-reports/TEST-bad.xml");
        assert!(errors[0]
            .to_string()
            .starts_with("unreadable report m/target/surefire-reports/TEST-bad.xml:"));
        assert_eq!(cases.len(), 4);
    }

    #[test]
    fn ids_drop_invocation_suffixes() {
        assert_eq!(test_id("a.B", "m"), "a.B#m");
        assert_eq!(test_id("a.B", "m()"), "a.B#m");
        assert_eq!(test_id("a.B", "positive{int}[1]"), "a.B#positive");
        assert_eq!(test_id("a.B", "repeated[2]"), "a.B#repeated");
        assert_eq!(test_id("a.B", "test[0: x=1]"), "a.B#test");
        assert_eq!(test_id("a.B$Inner", "t"), "a.B$Inner#t");
        assert_eq!(test_id("a.B", ""), "a.B");
        assert_eq!(test_id("a.B", "B"), "a.B");
        assert_eq!(test_id("a.B", "initializationError"), "a.B");
        assert_eq!(test_id("", "lonely"), "lonely");
    }

    #[test]
    fn methods_of_a_class_that_failed_as_a_whole_take_its_failure() {
        use crate::run::TestStatus;
        let mut results: std::collections::BTreeMap<String, TestResult> = [
            (
                "a.B",
                TestStatus::Error,
                Some("ExceptionInInitializerError"),
            ),
            ("a.C", TestStatus::Passed, None),
            ("a.D#kept", TestStatus::Passed, None),
        ]
        .into_iter()
        .map(|(id, status, message)| {
            let r = TestResult {
                status,
                duration_s: 0.1,
                message: message.map(String::from),
            };
            (id.to_string(), r)
        })
        .collect();
        let asked: Vec<String> = ["a.B#x", "a.C#y", "a.D#kept", "a.E#z", "a.B"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        fill_from_class_failures(&mut results, &asked);
        let x = &results["a.B#x"];
        assert_eq!(x.status, TestStatus::Error);
        assert!(x
            .message
            .as_deref()
            .unwrap()
            .contains("ExceptionInInitializerError"));
        // A passing class entry says nothing about a missing method; nor does no entry.
        assert!(!results.contains_key("a.C#y"));
        assert!(!results.contains_key("a.E#z"));
        assert_eq!(results["a.D#kept"].status, TestStatus::Passed);
    }

    #[test]
    fn selection_groups_methods_by_class() {
        let ids: Vec<String> = [
            "a.B#x", "a.C#z", "a.B#y", "a.B#x", "a.D", "a.C#w", "a.E#", "a.D#v",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(selection(&ids), "a.B#x*+y*,a.C#z*+w*,a.D,a.E");
        assert_eq!(selection(&[]), "");
    }

    #[test]
    fn strips_ansi_sequences() {
        assert_eq!(
            strip_ansi("\u{1b}[0m\u{1b}[1;31m[ERROR]\u{1b}[m x"),
            "[ERROR] x"
        );
    }

    /// Captured from `mvn -o -q -B test` on a copy of seeds/javashelf with a broken Isbn.java.
    const MAIN_COMPILE_LOG: &str = "\u{1b}[0m\u{1b}[0m[ERROR] COMPILATION ERROR : \n\
[ERROR] /tmp/jsbad/src/main/java/dev/sweforge/javashelf/Isbn.java:[82,34] cannot find symbol\n\
  symbol:   method isValid31(java.lang.String)\n\
  location: class dev.sweforge.javashelf.Isbn\n\
[ERROR] /tmp/jsbad/src/main/java/dev/sweforge/javashelf/Isbn.java:[104,40] incompatible types: java.lang.String cannot be converted to int\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.10.1:compile (default-compile) on project javashelf: Compilation failure: Compilation failure: \n\
[ERROR] /tmp/jsbad/src/main/java/dev/sweforge/javashelf/Isbn.java:[82,34] cannot find symbol\n\
[ERROR]   symbol:   method isValid31(java.lang.String)\n\
[ERROR]   location: class dev.sweforge.javashelf.Isbn\n\
[ERROR] /tmp/jsbad/src/main/java/dev/sweforge/javashelf/Isbn.java:[104,40] incompatible types: java.lang.String cannot be converted to int\n\
[ERROR] -> [Help 1]\n\
[ERROR] \n\
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n\
[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n\
[ERROR] \n\
[ERROR] For more information about the errors and possible solutions, please read the following articles:\n\
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException\n\
\u{1b}[0m\u{1b}[0m";

    /// The same for a broken test source.
    const TEST_COMPILE_LOG: &str = "\u{1b}[0m\u{1b}[0m[ERROR] COMPILATION ERROR : \n\
[ERROR] /tmp/jsbad/src/test/java/dev/sweforge/javashelf/IsbnTest.java:[34,43] incompatible types: int cannot be converted to java.lang.String\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.10.1:testCompile (default-testCompile) on project javashelf: Compilation failure\n\
[ERROR] /tmp/jsbad/src/test/java/dev/sweforge/javashelf/IsbnTest.java:[34,43] incompatible types: int cannot be converted to java.lang.String\n\
[ERROR] -> [Help 1]\n";

    /// A test failure: not a compile error.
    const TEST_FAILURE_LOG: &str = "[ERROR] Tests run: 4, Failures: 1, Errors: 1, Skipped: 1, Time elapsed: 0.332 s <<< FAILURE! - in p.ATest\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project j4: There are test failures.\n";

    #[test]
    fn recognises_a_main_compile_error() {
        let msg = compile_error(MAIN_COMPILE_LOG, "/tmp/jsbad/").unwrap();
        assert_eq!(
            msg,
            "compile error: main sources: \
             src/main/java/dev/sweforge/javashelf/Isbn.java:[82,34] cannot find symbol; \
             src/main/java/dev/sweforge/javashelf/Isbn.java:[104,40] incompatible types: \
             java.lang.String cannot be converted to int"
        );
        assert!(msg.starts_with(COMPILE_ERROR_PREFIX));
    }

    #[test]
    fn recognises_a_test_compile_error() {
        let msg = compile_error(TEST_COMPILE_LOG, "/tmp/jsbad").unwrap();
        assert_eq!(
            msg,
            "compile error: test sources: \
             src/test/java/dev/sweforge/javashelf/IsbnTest.java:[34,43] incompatible types: \
             int cannot be converted to java.lang.String"
        );
    }

    #[test]
    fn a_test_failure_is_not_a_compile_error() {
        assert_eq!(compile_error(TEST_FAILURE_LOG, "/r"), None);
        assert_eq!(compile_error("", "/r"), None);
    }

    #[test]
    fn explains_other_build_failures() {
        let log = "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on project x: There are test failures.\n\
[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n";
        assert!(build_failure(log)
            .unwrap()
            .starts_with("the forked test JVM failed: "));
        let log = "[ERROR] Plugin org.apache.maven.plugins:maven-site-plugin:9.9 or one of its dependencies could not be resolved: Cannot access central in offline mode\n";
        assert!(build_failure(log)
            .unwrap()
            .starts_with("unresolved offline: "));
        assert_eq!(
            build_failure("\u{1b}[0m[ERROR] something odd\n[ERROR] -> [Help 1]\n").as_deref(),
            Some("something odd")
        );
        assert_eq!(build_failure(""), None);
    }
}
