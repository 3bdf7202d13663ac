//! What the runners of node's test frameworks (jest, mocha) share: the source line a failed
//! test failed at (`node_sources.js`), per-test coverage lines (`coverage_core.js`, and the
//! JSON lines both coverage runs write), and the handling of their reports' text.

use super::{RunBudget, RunnerError, SOURCE_LINE_PREFIX};
use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd, TestResult, TestStatus, RUNNER_FAILURE_PREFIX};
use crate::sandbox::{shell_quote, ExecOutput, Worker};
use std::collections::{BTreeMap, BTreeSet};

/// The counting of per-test coverage both node coverage runs share.
pub const COVERAGE_CORE_JS: &str = include_str!("coverage_core.js");
/// The source line each failed test failed at, read after a run with failures (jest's or
/// mocha's JSON report).
pub const SOURCES_JS: &str = include_str!("node_sources.js");

/// A JavaScript regular expression that matches `text` literally.
pub(crate) fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// JSON as JavaScript's `JSON.stringify` writes it, made readable for serde_json: a string
/// holding half of a UTF-16 surrogate pair (a test of a parser feeding it broken text) is
/// written as a lone `\ud800` escape, which is not Unicode; each such escape becomes U+FFFD.
pub(crate) fn without_lone_surrogates(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains("\\u") {
        return std::borrow::Cow::Borrowed(json);
    }
    let unit = |s: &str| -> Option<u16> {
        let hex = s.get(..6)?.strip_prefix("\\u")?;
        u16::from_str_radix(hex, 16).ok()
    };
    let high = |u: u16| (0xD800..0xDC00).contains(&u);
    let low = |u: u16| (0xDC00..0xE000).contains(&u);
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut changed = false;
    while let Some(off) = json[i..].find('\\') {
        let at = i + off;
        out.push_str(&json[i..at]);
        let rest = &json[at..];
        match unit(rest) {
            Some(u) if high(u) && unit(&rest[6..]).is_some_and(low) => {
                out.push_str(&rest[..12]);
                i = at + 12;
            }
            Some(u) if high(u) || low(u) => {
                out.push_str("\\ufffd");
                changed = true;
                i = at + 6;
            }
            _ => {
                // Any other escape: copy it whole (`\\` must not start a new one).
                let len = rest[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
                out.push_str(&rest[..len]);
                i = at + len;
            }
        }
    }
    out.push_str(&json[i..]);
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(json)
    }
}

/// What a report reader returns: per-test results, and the test files that could not run
/// with why (collection errors).
pub type ParsedReport = (BTreeMap<String, TestResult>, BTreeMap<String, String>);

/// How many tests each test file holds, from `<test file>::<title>` ids.
pub(crate) fn tests_per_file<'a>(
    ids: impl IntoIterator<Item = &'a String>,
) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for id in ids {
        if let Some((f, _)) = id.split_once("::") {
            *out.entry(f.to_string()).or_default() += 1;
        }
    }
    out
}

/// The last non-empty lines of a log, for an anomaly.
pub(crate) fn tail(log: &[u8]) -> String {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// `path` relative to `root` (`/testbed/test/a.test.js` → `test/a.test.js`).
pub(crate) fn relative(path: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    path.strip_prefix(root)
        .map(|p| p.trim_start_matches('/'))
        .unwrap_or(path)
        .to_string()
}

/// A failure message without the stack frames outside the repository (jest's own, node's).
pub(crate) fn without_foreign_frames(message: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    message
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("at ") || (!root.is_empty() && t.contains(root))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first 2,000 characters of a failure message.
pub(crate) fn first_part(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed.char_indices().nth(2000) {
        Some((i, _)) => trimmed[..i].to_string(),
        None => trimmed.to_string(),
    }
}

pub(crate) fn strip_ansi(text: &str) -> String {
    super::surefire::strip_ansi(text)
}

/// Parse the coverage setup file's lines into a coverage map (ids as in the report).
pub fn coverage_from_lines(text: &str) -> Result<CoverageMap, String> {
    let mut triples = Vec::new();
    let mut outside: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let mut files = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let doc: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("coverage line: {e}"))?;
        files += 1;
        let file = doc["file"]
            .as_str()
            .ok_or("a coverage line without `file`")?;
        let lines_of = |v: &serde_json::Value| -> Vec<(String, u32)> {
            let mut out = Vec::new();
            for (src, lines) in v.as_object().into_iter().flatten() {
                for l in lines.as_array().into_iter().flatten() {
                    if let Some(l) = l.as_u64().and_then(|l| u32::try_from(l).ok()) {
                        out.push((src.clone(), l));
                    }
                }
            }
            out
        };
        for (name, sources) in doc["tests"].as_object().into_iter().flatten() {
            let id = format!("{file}::{name}");
            for (src, l) in lines_of(sources) {
                triples.push((src, l, id.clone()));
            }
        }
        for (src, l) in lines_of(&doc["outside"]) {
            outside.entry(src).or_default().insert(l);
        }
    }
    if files == 0 {
        return Err("the coverage setup file wrote nothing".to_string());
    }
    let mut map = CoverageMap::from_triples(triples);
    map.outside_tests = outside;
    Ok(map)
}

/// How a framework's exit code reads: whether it says tests failed (`Some(true)`), none did
/// (`Some(false)`), or is not one the framework gives for a run (`None`).
pub(crate) type ExitRule = fn(i32) -> Option<bool>;

/// A node framework's report, parsed: per-test results and collection errors (test file →
/// message), from the report's text and the worker's root.
pub(crate) type ParseReport = fn(&str, &str) -> Result<ParsedReport, String>;

/// What a node framework's run reads back: the report `report` (and, when the run had a
/// failure, the failed tests' source lines in `sources`), parsed with `parse` and checked
/// against the exit code with `exit`.
pub(crate) struct Reading<'a> {
    pub report: &'a str,
    pub sources: &'a str,
    pub parse: ParseReport,
    pub exit: ExitRule,
    pub log_dir: Option<&'a std::path::Path>,
}

/// The run of a node framework from its report: results keyed by `<file>::<name>`, the
/// requested tests that did not run MISSING (or ERROR, in a file that could not be loaded),
/// results of tests not asked for left out, each failure's source line appended to its
/// message, and the exit code checked against the results.
pub(crate) fn finish(
    reading: &Reading<'_>,
    worker: &mut dyn Worker,
    label: &str,
    tests: Option<&[String]>,
    budget: RunBudget,
    mut out: ExecOutput,
) -> Result<Run, RunnerError> {
    let super::Ending {
        cpu_s,
        log,
        log_digest,
        log_path,
        cpu_anomaly: mut anomaly,
    } = super::ending(worker, &mut out, budget, reading.log_dir)?;
    let root = worker.root().to_string();
    let sources: BTreeMap<String, String> = worker
        .read_scratch(reading.sources)?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let (mut results, collection_errors) = match worker.read_scratch(reading.report)? {
        Some(bytes) => match (reading.parse)(
            &without_lone_surrogates(&String::from_utf8_lossy(&bytes)),
            &root,
        ) {
            Ok(parsed) => parsed,
            Err(e) => {
                anomaly.get_or_insert(format!("{RUNNER_FAILURE_PREFIX}unreadable report: {e}"));
                Default::default()
            }
        },
        None => {
            if out.end == RunEnd::Exited {
                anomaly.get_or_insert(format!(
                    "{RUNNER_FAILURE_PREFIX}no report written (exit {}): {}",
                    out.exit_code.unwrap_or(-1),
                    tail(&log)
                ));
            }
            Default::default()
        }
    };
    for (id, line) in &sources {
        if let Some(m) = results.get_mut(id).and_then(|r| r.message.as_mut()) {
            m.push_str(&format!("\n{SOURCE_LINE_PREFIX}{line}"));
        }
    }
    if let Some(requested) = tests {
        let wanted: BTreeSet<&str> = requested.iter().map(String::as_str).collect();
        // A name pattern may match more (jest's is case-insensitive, files may share
        // names): keep what was asked for.
        results.retain(|id, _| wanted.contains(id.as_str()));
        for id in requested {
            let result = match crate::run::collection_error_of(&collection_errors, id) {
                Some(error) => TestResult {
                    status: TestStatus::Error,
                    duration_s: 0.0,
                    message: Some(format!("collection error: {error}")),
                },
                None => TestResult {
                    status: TestStatus::Missing,
                    duration_s: 0.0,
                    message: None,
                },
            };
            results.entry(id.clone()).or_insert(result);
        }
    }
    if anomaly.is_none() && out.end == RunEnd::Exited {
        let failures =
            !collection_errors.is_empty() || results.values().any(|r| r.status.is_failure());
        let ran = results
            .values()
            .any(|r| !matches!(r.status, TestStatus::Missing | TestStatus::Skipped));
        anomaly = match out.exit_code.map(|c| (c, (reading.exit)(c))) {
            Some((_, Some(false))) if failures => {
                Some("exit 0 but the report has failures".to_string())
            }
            Some((_, Some(false))) if !ran && tests.is_none() => {
                Some("no tests were run".to_string())
            }
            Some((code, Some(true))) if !failures => Some(format!(
                "exit {code} but the report has no failure: {}",
                tail(&log)
            )),
            Some((_, Some(_))) => None,
            Some((code, None)) => Some(format!(
                "{RUNNER_FAILURE_PREFIX}unexpected exit code {code}: {}",
                tail(&log)
            )),
            None => None,
        };
    }
    let mut run = Run {
        label: label.to_string(),
        requested: tests.map(|t| t.to_vec()),
        end: out.end,
        exit_code: out.exit_code,
        signal: out.signal,
        results,
        duration_s: out.duration.as_secs_f64(),
        cpu_s,
        log_digest,
        log_path,
        anomaly,
        oom_kills: out.oom_kills,
        collection_errors,
        nondeterministic: Default::default(),
        file_order: Vec::new(),
        indirect: None,
    };
    run.relativize(&root);
    Ok(run)
}

/// A run of nothing (an empty selection: a framework given no file runs the whole suite).
pub(crate) fn empty_run(label: &str) -> Run {
    Run {
        label: label.to_string(),
        requested: Some(Vec::new()),
        end: RunEnd::Exited,
        exit_code: Some(0),
        signal: None,
        results: BTreeMap::new(),
        duration_s: 0.0,
        cpu_s: None,
        log_digest: blake3::hash(b"").to_hex().to_string(),
        log_path: None,
        anomaly: None,
        oom_kills: 0,
        collection_errors: BTreeMap::new(),
        nondeterministic: BTreeMap::new(),
        file_order: Vec::new(),
        indirect: None,
    }
}

/// `command`, then (only when it failed and wrote its JSON report at `scratch/report`) the
/// failed tests' source lines into `scratch/sources`; the exit status is the command's.
pub(crate) fn run_script(command: &str, scratch: &str, report: &str, sources: &str) -> String {
    let report = shell_quote(&format!("{scratch}/{report}"));
    let sources_js = shell_quote(&format!("{scratch}/node-sources.js"));
    format!(
        "rm -f {report}\n{command}\nstatus=$?\n\
         if [ $status -ne 0 ] && [ -s {report} ]; then\n{}\
         node {sources_js} {report} > {} 2>/dev/null\nfi\n(exit $status)",
        super::maven::heredoc(&sources_js, SOURCES_JS),
        shell_quote(&format!("{scratch}/{sources}")),
    )
}

/// The coverage map from the lines a coverage run wrote (`lines`: the file's bytes, if any),
/// or the runner's coverage error naming the run's outcome.
pub(crate) fn coverage_map(lines: Option<Vec<u8>>, run: &Run) -> Result<CoverageMap, RunnerError> {
    match lines {
        Some(bytes) => coverage_from_lines(&String::from_utf8_lossy(&bytes)),
        None => Err("the coverage setup file wrote nothing".to_string()),
    }
    .map_err(|e| {
        RunnerError::Coverage(format!(
            "{e} ({})",
            run.anomaly.clone().unwrap_or_else(|| run.summary())
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters_and_pairs_stay() {
        let json = r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\udc00"}"#;
        let fixed = without_lone_surrogates(json);
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{1f600}");
        // An escaped backslash followed by `ud800` is text, not an escape.
        assert_eq!(v["c"], "\\ud800");
        assert_eq!(v["d"], "\u{fffd}");
        assert!(matches!(
            without_lone_surrogates(r#"{"a":"\u00e9"}"#),
            std::borrow::Cow::Borrowed(_)
        ));
        assert!(serde_json::from_str::<serde_json::Value>(json).is_err());
    }
}
