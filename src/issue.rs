//! Issue texts: the problem statement of a task, rendered from templates/issue/ and grounded
//! in the observed failure. It never names files, lines, the diff or the hidden tests.

use crate::assets;
use crate::candidate::Candidate;
use crate::run::Run;
use crate::synth::CallOutcome;
use minijinja::{context, Environment};

#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("issue template `{0}` is missing")]
    MissingTemplate(String),
    #[error("issue data `{name}`: {detail}")]
    Data { name: String, detail: String },
    #[error("rendering issue template `{name}`: {source}")]
    Render {
        name: String,
        source: minijinja::Error,
    },
}

/// What the problem statement is written from.
pub struct IssueInput<'a> {
    pub candidate: &'a Candidate,
    /// The first buggy run of the whole suite (check 2).
    pub buggy_run: Option<&'a Run>,
    pub fail_to_pass: &'a [String],
    /// Test files of the repository: their paths are scrubbed from observed messages.
    pub test_files: &'a [String],
    /// For a synthesized test: the inputs on which the code misbehaves (the call, what it
    /// should do, what it does).
    pub cases: &'a [crate::synth::Distinguishing],
}

/// The issue styles, in selection order. `traceback` applies only when the code raises.
pub const STYLES: &[&str] = &["report", "regression", "traceback"];

/// The levels of detail of a problem statement, a difficulty knob chosen per task
/// (`metadata.issue_detail`): `vague` says in one sentence what was called and what happened;
/// `normal` adds the reproduction or the failure output; `detailed` also says what was
/// expected for each input and how many situations show it.
pub const DETAILS: &[&str] = &["vague", "normal", "detailed"];

/// A rendered issue: the problem statement, and what goes to SWE-bench's `hints_text`.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// What a user reports: what they called, what happened, what they expected.
    pub text: String,
    /// One of [`STYLES`].
    pub style: &'static str,
    /// One of [`DETAILS`].
    pub detail: &'static str,
    /// The diagnosis by the mutator's category (what kind of mistake to look for), kept out
    /// of the problem statement.
    pub hints: String,
}

/// What a failing assertion compared: pytest's `assert A == B` and, when it says so,
/// ` +  where A = CALL`. Returns (the call, if named; what came out; what was expected).
fn compared_values(observed: &str) -> Option<(Option<String>, String, String)> {
    if let Some(jest) = jest_compared(observed) {
        return Some(jest);
    }
    let first = observed.lines().next()?;
    let message = first.strip_prefix("AssertionError: ").unwrap_or(first);
    let (actual, expected) = match message.strip_prefix("assert ") {
        Some(rest) => rest.split_once(" == ")?,
        // unittest's `assertEqual(first, second)`: `AssertionError: first != second`.
        // `Lists differ: [1] != [2]` from the sequence comparisons.
        None if first.starts_with("AssertionError: ") => {
            let message = match message.split_once(" differ: ") {
                Some((kind, rest)) if !kind.contains(' ') => rest,
                _ => message,
            };
            if message.matches(" != ").count() != 1 {
                return None;
            }
            message.split_once(" != ")?
        }
        None => return None,
    };
    let (actual, expected) = (actual.trim(), expected.trim());
    if actual.is_empty() || expected.is_empty() || actual.len() > 80 || expected.len() > 80 {
        return None;
    }
    if actual.contains(" at 0x") || expected.contains(" at 0x") {
        return None;
    }
    let call = observed.lines().find_map(|l| {
        let w = l.trim().strip_prefix("+  where ")?;
        let (value, call) = w.split_once(" = ")?;
        (value.trim() == actual
            && call.contains('(')
            && call.len() <= 80
            && !call.trim().starts_with('<')
            && !wrapping_builtin(call.trim()))
        .then(|| call.trim().to_string())
    });
    Some((call, actual.to_string(), expected.to_string()))
}

/// What a failing jest matcher compared: its `Expected: 4` and `Received: 5` lines, and the
/// call inside `expect(…)` on the source line the jest runner quotes
/// (`> expect(twice(2)).toBe(4);`, [`crate::runner::SOURCE_LINE_PREFIX`]).
fn jest_compared(observed: &str) -> Option<(Option<String>, String, String)> {
    let field = |name: &str| {
        observed
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(str::trim)
    };
    let expected = field("Expected: ")?;
    let received = field("Received: ")?;
    if expected.is_empty() || received.is_empty() || expected.len() > 80 || received.len() > 80 {
        return None;
    }
    let call = observed
        .lines()
        .find_map(|l| l.strip_prefix(crate::runner::SOURCE_LINE_PREFIX))
        .and_then(expect_argument)
        .filter(|c| c.contains('(') && c.len() <= 80);
    Some((call, received.to_string(), expected.to_string()))
}

/// The call a jest test checks, from the source line the runner quotes: the argument of
/// `expect(…)`, a function's body for `expect(() => f(x))`.
fn source_call(observed: &str) -> Option<String> {
    observed
        .lines()
        .find_map(|l| l.strip_prefix(crate::runner::SOURCE_LINE_PREFIX))
        .and_then(expect_argument)
        .map(|a| {
            let body = a.strip_prefix("() =>").unwrap_or(&a).trim();
            let body = body
                .strip_prefix('{')
                .and_then(|b| b.strip_suffix('}'))
                .map(|b| b.trim().trim_end_matches(';').trim())
                .unwrap_or(body);
            body.to_string()
        })
        .filter(|c| c.contains('(') && c.len() <= 80 && !c.contains('\n'))
}

/// Whether the observed failure is jest's diff of a structural comparison (`toEqual`):
/// `- Expected  - 1` / `+ Received  + 1` and the lines that differ.
fn is_jest_diff(observed: &str) -> bool {
    let mut lines = observed.lines().map(str::trim);
    lines.any(|l| l.starts_with("- Expected")) && observed.contains("+ Received")
}

/// The one sentence of a vague jest report: the call and its values, what it did not throw,
/// or that its result differs; `None` when the failure is not one of jest's comparisons.
fn jest_first_line(public: &str, observed: &str) -> Option<String> {
    let first = observed.lines().next()?.trim();
    if !(first.starts_with("Expected") || first.starts_with("- Expected")) {
        return None;
    }
    if let Some(t) = jest_throw_title(public, observed) {
        return Some(t);
    }
    if let Some((call, actual, expected)) = jest_compared(observed) {
        return Some(match call {
            Some(c) => format!("`{c}` gives {actual} where {expected} is expected"),
            None => format!("I get {actual} where {expected} is expected"),
        });
    }
    is_jest_diff(observed).then(|| match source_call(observed) {
        Some(c) => format!("`{c}` does not give the expected result"),
        None => "the result is not the expected one".to_string(),
    })
}

/// jest's `toThrow` failing: "`sumCents([1, 2.5])` does not throw TypeError" (the call
/// inside `expect(() => …)` on the quoted source line, the constructor from `Expected
/// constructor:`), or "`f(x)` throws \"a\" instead of \"b\"" for a wrong message.
fn jest_throw_title(public: &str, observed: &str) -> Option<String> {
    let field = |name: &str| {
        observed
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(str::trim)
    };
    let call = source_call(observed);
    let subject = match &call {
        Some(c) => format!("`{c}`"),
        None => format!("`{public}`"),
    };
    if observed.contains("Received function did not throw") {
        let what = field("Expected constructor: ")
            .or_else(|| field("Expected substring: "))
            .or_else(|| field("Expected message: "))
            .or_else(|| field("Expected pattern: "));
        return Some(match what {
            Some(w) if field("Expected constructor: ").is_some() => {
                format!("{subject} does not throw {w}")
            }
            Some(w) => format!("{subject} does not throw an error ({w} expected)"),
            None => format!("{subject} does not throw"),
        });
    }
    let expected = field("Expected substring: ").or_else(|| field("Expected message: "))?;
    let received = field("Received message: ")?;
    Some(format!("{subject} throws {received} instead of {expected}"))
}

/// The (first) argument of the first `expect(…)` or `assert.…(…)` on a line of JavaScript
/// (parentheses balanced, strings skipped).
fn expect_argument(line: &str) -> Option<String> {
    // jest's and chai's `expect(x)`, node's `assert.strictEqual(x, y)` and kin: the first
    // argument.
    const OPENERS: [&str; 7] = [
        "expect(",
        "assert.strictEqual(",
        "assert.deepStrictEqual(",
        "assert.equal(",
        "assert.deepEqual(",
        "assert.throws(",
        "assert.ok(",
    ];
    let start = OPENERS
        .iter()
        .filter_map(|o| line.find(o).map(|i| i + o.len()))
        .min()?;
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line[start..].char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ')' | ',' if depth == 0 => {
                let arg = line[start..start + i].trim();
                return (!arg.is_empty()).then(|| arg.to_string());
            }
            _ => {}
        }
    }
    None
}

/// Builtins a test wraps a result in (`len(f(x))`): naming them says nothing about the call
/// a user made.
const WRAPPING_BUILTINS: &[&str] = &[
    "len",
    "sorted",
    "list",
    "set",
    "tuple",
    "dict",
    "str",
    "repr",
    "type",
    "bool",
    "int",
    "float",
    "next",
    "getattr",
    "isinstance",
    "frozenset",
    "min",
    "max",
    "sum",
    "abs",
];

/// Whether `call` is a builtin wrapped around the result ([`WRAPPING_BUILTINS`]).
fn wrapping_builtin(call: &str) -> bool {
    call.split_once('(')
        .is_some_and(|(name, _)| WRAPPING_BUILTINS.contains(&name.trim()))
}

/// A test that runs the documentation's examples itself (`doctest.testmod(m)` and then
/// `assert result.failed == 0`): pytest reports the runner's counts, `TestResults(failed=3,
/// attempted=12)`, which help nobody. Returns (failed, attempted).
fn doctest_runner_counts(observed: &str) -> Option<(u32, u32)> {
    let rest = &observed[observed.find("TestResults(failed=")? + "TestResults(failed=".len()..];
    let (failed, rest) = rest.split_once(", attempted=")?;
    let attempted = rest.split(')').next()?;
    Some((failed.trim().parse().ok()?, attempted.trim().parse().ok()?))
}

/// For an assertion on a derived value (`assert isinstance(f(x), list)`, `assert f(x)`):
/// the innermost call pytest's ` +  where V = CALL` lines name, and its value. `None` for a
/// plain comparison ([`compared_values`] reads those) or without such a line.
fn innermost_call(observed: &str) -> Option<(String, String)> {
    let first = observed.lines().next()?;
    let asserted = first
        .strip_prefix("AssertionError: ")
        .unwrap_or(first)
        .strip_prefix("assert ")?;
    // A bare value (`assert False`, `assert []`): a comparison's sides are both calls' results.
    if asserted.trim().contains(' ') {
        return None;
    }
    observed
        .lines()
        .filter_map(|l| {
            let w = l
                .trim()
                .strip_prefix("+")?
                .trim_start()
                .strip_prefix("where ")?;
            let (value, call) = w.split_once(" = ")?;
            let (value, call) = (value.trim(), call.trim());
            (call.contains('(')
                && call.len() <= 80
                && value.len() <= 80
                && !value.contains(" at 0x")
                && !call.starts_with('<'))
            .then(|| (call.to_string(), value.to_string()))
        })
        .next_back()
}

/// A failed doctest as pytest reports it: the numbered docstring lines up to the failing
/// example, then `Expected:`/`Got:` (a wrong output) or `UNEXPECTED EXCEPTION:` and the
/// traceback (it raised). What a user would paste: the example, what the documentation
/// says it prints, and what it printed or raised.
#[derive(Clone, Debug, PartialEq)]
pub struct DoctestFailure {
    /// The example as written, `>>> ` and `... ` prompts included.
    pub example: String,
    /// What the docstring says the example prints (empty: nothing).
    pub expected: String,
    /// What it printed, or `None` when it raised.
    pub got: Option<String>,
    /// The exception's last traceback line (`ValueError: …`) when it raised.
    pub raised: Option<String>,
}

impl DoctestFailure {
    pub fn parse(report: &str) -> Option<DoctestFailure> {
        let lines: Vec<&str> = report.lines().collect();
        let at = lines.iter().position(|l| {
            *l == "Expected:" || *l == "Expected nothing" || l.starts_with("UNEXPECTED EXCEPTION: ")
        })?;
        // The docstring lines carry their line number: `152         >>> intcomma(100)`.
        let numbered = |l: &str| -> Option<String> {
            let (n, rest) = l.split_once(' ')?;
            (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| rest.trim().to_string())
        };
        let mut example: Vec<String> = Vec::new();
        for l in lines[..at].iter().rev() {
            let text = numbered(l)?;
            let prompt = text.starts_with(">>>");
            if prompt || text.starts_with("...") {
                example.push(text);
                if prompt {
                    break;
                }
            } else {
                example.clear();
            }
        }
        if !example.last().is_some_and(|l| l.starts_with(">>>")) {
            return None;
        }
        example.reverse();
        let is_trailer =
            |l: &str| l.ends_with(": DocTestFailure") || l.ends_with(": UnexpectedException");
        let block = |from: usize, stop: &dyn Fn(&str) -> bool| -> (String, usize) {
            let mut out = Vec::new();
            let mut i = from;
            while i < lines.len() && !stop(lines[i]) && !is_trailer(lines[i]) {
                out.push(lines[i].strip_prefix("    ").unwrap_or(lines[i]));
                i += 1;
            }
            (out.join("\n").trim_end().to_string(), i)
        };
        if let Some(exc) = lines[at].strip_prefix("UNEXPECTED EXCEPTION: ") {
            let last = lines[at + 1..]
                .iter()
                .take_while(|l| !is_trailer(l))
                .filter(|l| !l.trim().is_empty())
                .last()
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| exc.trim().to_string());
            return Some(DoctestFailure {
                example: example.join("\n"),
                expected: String::new(),
                got: None,
                raised: Some(last),
            });
        }
        let (expected, next) = if lines[at] == "Expected nothing" {
            (String::new(), at + 1)
        } else {
            block(at + 1, &|l| l == "Got:" || l == "Got nothing")
        };
        let got = match lines.get(next) {
            Some(&"Got nothing") => String::new(),
            Some(&"Got:") => block(next + 1, &|_| false).0,
            _ => return None,
        };
        Some(DoctestFailure {
            example: example.join("\n"),
            expected,
            got: Some(got),
            raised: None,
        })
    }

    /// The example's code, without prompts (`intcomma(100)`).
    pub fn code(&self) -> String {
        self.example
            .lines()
            .map(|l| {
                l.strip_prefix(">>> ")
                    .or_else(|| l.strip_prefix("... "))
                    .unwrap_or(l)
            })
            .map(|l| l.trim_start_matches(">>>").trim_start_matches("..."))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The report as a user pastes it: the example, then what it printed or raised.
    pub fn pasted(&self) -> String {
        match (&self.got, &self.raised) {
            (Some(got), _) => format!(
                "{}\n{}",
                self.example,
                if got.is_empty() {
                    "(nothing printed)"
                } else {
                    got
                }
            ),
            (None, Some(raised)) => format!(
                "{}\nTraceback (most recent call last):\n  ...\n{raised}",
                self.example
            ),
            (None, None) => self.example.clone(),
        }
    }
}

/// What a user of the package would name for a failure in `function` (a qualified name) of
/// `file`: its public part (`Schema._do_load` → `Schema`, `Length.__call__` → `Length`), or
/// the package when even its first part is private (`_get_value` in
/// `src/marshmallow/utils.py` → `marshmallow`). A user calls the public API; the private
/// function that holds the bug is for the solver to find.
pub fn public_name(function: &str, file: &str) -> String {
    let public: Vec<&str> = function
        .split('.')
        .take_while(|part| !part.starts_with('_'))
        .collect();
    if !public.is_empty() {
        return public.join(".");
    }
    package_name(file)
}

/// The top-level package (or module) a source file belongs to: `src/marshmallow/utils.py` →
/// `marshmallow`, `six.py` → `six`.
pub fn package_name(file: &str) -> String {
    let rel = file
        .strip_prefix("src/")
        .or_else(|| file.strip_prefix("lib/"))
        .unwrap_or(file);
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".py").unwrap_or(first).to_string()
}

/// The longest title that quotes the outcome; a longer one names only its kind.
const TITLE_CHARS: usize = 100;

/// The title: the symptom as a user names it.
fn symptom_title(
    public: &str,
    calls: &[crate::synth::Distinguishing],
    observed: &str,
    doctest: Option<&DoctestFailure>,
) -> String {
    if let Some(d) = calls.first() {
        if let Some((name, expected, actual)) = d.attr_differences().first() {
            let actual = actual.as_deref().unwrap_or("missing");
            let title = match &d.buggy {
                CallOutcome::Raised { type_name, .. } => format!(
                    "`{}` raises {type_name} with `{name}` {actual} instead of {expected}",
                    d.call_text()
                ),
                _ => format!(
                    "`{}.{name}` is {actual} instead of {expected}",
                    d.call_text()
                ),
            };
            if title.chars().count() <= TITLE_CHARS {
                return title;
            }
            return match &d.buggy {
                CallOutcome::Raised { type_name, .. } => format!(
                    "`{}` raises {type_name} with the wrong `{name}`",
                    d.call_text()
                ),
                _ => format!(
                    "`{}` returns an object with the wrong `{name}`",
                    d.call_text()
                ),
            };
        }
        let title = format!("`{}` {}", d.call_text(), d.buggy.describe());
        if title.chars().count() <= TITLE_CHARS {
            return title;
        }
        return match &d.buggy {
            CallOutcome::Raised { type_name, .. } => {
                format!("`{}` raises {type_name}", d.call_text())
            }
            _ => format!("`{}` returns an unexpected result", d.call_text()),
        };
    }
    if let Some(d) = doctest {
        let code = d.code();
        let title = match (&d.got, &d.raised) {
            (Some(got), _) if !got.contains('\n') && !d.expected.contains('\n') => format!(
                "`{code}` gives {} instead of {}",
                if got.is_empty() { "nothing" } else { got },
                if d.expected.is_empty() {
                    "nothing"
                } else {
                    &d.expected
                }
            ),
            (None, Some(raised)) => format!("`{code}` raises {raised}"),
            _ => format!("`{code}` does not give the documented output"),
        };
        if !code.contains('\n') && title.chars().count() <= TITLE_CHARS {
            return title;
        }
        return format!("The documented example of `{public}` does not work");
    }
    if let Some((failed, attempted)) = doctest_runner_counts(observed) {
        return format!(
            "{failed} of the {attempted} examples in the documentation of `{public}` fail"
        );
    }
    let first = observed.lines().next().unwrap_or("").trim();
    if let Some(exc) = first.strip_prefix("Failed: DID NOT RAISE ") {
        return format!("`{public}` does not raise {exc}");
    }
    if let Some(title) = jest_throw_title(public, observed) {
        return title;
    }
    if is_jest_diff(observed) {
        if let Some(call) = source_call(observed) {
            return format!("`{call}` returns an unexpected result");
        }
    }
    // unittest's `assertRaises`: `AssertionError: ValueError not raised`.
    if let Some(exc) = first
        .strip_prefix("AssertionError: ")
        .and_then(|m| m.strip_suffix(" not raised"))
        .filter(|e| !e.contains(' '))
    {
        return format!("`{public}` does not raise {exc}");
    }
    match compared_values(observed) {
        Some((Some(call), actual, expected)) => {
            format!("`{call}` returns {actual} instead of {expected}")
        }
        Some((None, actual, expected)) => {
            format!("`{public}`: got {actual} where {expected} is expected")
        }
        None if innermost_call(observed).is_some() => {
            let (call, value) = innermost_call(observed).unwrap_or_default();
            format!("`{call}` returns {value}")
        }
        None if observed.lines().next().is_some_and(|l| l.contains("Error")) => format!(
            "`{public}` fails with {}",
            observed.lines().next().unwrap_or("").trim()
        ),
        None => format!("Unexpected behaviour from `{public}`"),
    }
}

#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct Wording {
    symptom: String,
}

/// The wording for `category` from templates/issue/categories.yaml (or its `default`).
fn wording(category: &str) -> Result<Wording, IssueError> {
    let name = "issue/categories.yaml";
    let text =
        assets::template(name).ok_or_else(|| IssueError::MissingTemplate(name.to_string()))?;
    let mut all: std::collections::BTreeMap<String, Wording> =
        serde_yaml::from_str(text).map_err(|e| IssueError::Data {
            name: name.to_string(),
            detail: e.to_string(),
        })?;
    all.remove(category)
        .or_else(|| all.remove("default"))
        .ok_or_else(|| IssueError::Data {
            name: name.to_string(),
            detail: "no `default` entry".into(),
        })
}

/// Setup statements as a user writes them: `with pytest.raises(E):` blocks of a synthesized
/// test become the call with a comment.
fn setup_for_issue(setup: &[String]) -> Vec<String> {
    setup
        .iter()
        .map(|l| match l.strip_prefix("with pytest.raises(") {
            Some(rest) => {
                let (exc, call) = rest.split_once("):").unwrap_or((rest, ""));
                format!("{}  # raises {exc}", call.trim())
            }
            None => l.clone(),
        })
        .collect()
}

fn expected_verb(o: &CallOutcome) -> String {
    match o {
        CallOutcome::Value {
            source: Some(s), ..
        } => format!("return {s}"),
        CallOutcome::Value { .. } => "return normally".into(),
        CallOutcome::Raised {
            type_name, message, ..
        } if !message.is_empty() => format!("fail with {type_name}: {message}"),
        CallOutcome::Raised { type_name, .. } => format!("fail with {type_name}"),
        CallOutcome::Timeout => "return".into(),
        CallOutcome::Error { .. } | CallOutcome::Scenario { .. } => "work".into(),
    }
}

/// Render the problem statement: a style chosen from [`STYLES`] by the candidate id (the
/// styles that apply) and a level of detail from [`DETAILS`] (by other bits of the id); the
/// category's wording and the mutator's hint go to [`Issue::hints`].
pub fn problem_statement(input: &IssueInput<'_>) -> Result<Issue, IssueError> {
    let cand = input.candidate;
    let raises = matches!(
        input.cases.first().map(|d| &d.buggy),
        Some(CallOutcome::Raised { .. })
    );
    let styles: Vec<&'static str> = STYLES
        .iter()
        .copied()
        .filter(|s| *s != "traceback" || raises)
        .collect();
    let pick = u64::from_str_radix(&cand.id[..cand.id.len().min(8)], 16).unwrap_or(0) as usize;
    let style = styles[pick % styles.len()];
    let detail_pick = cand
        .id
        .get(8..16)
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0) as usize;
    let detail = DETAILS[detail_pick % DETAILS.len()];
    let name = format!("issue/{style}.md.j2");
    let source =
        assets::template(&name).ok_or_else(|| IssueError::MissingTemplate(name.clone()))?;
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_template(&name, source)
        .map_err(|source| IssueError::Render {
            name: name.clone(),
            source,
        })?;
    // What the user calls: the synthesized case's function, else the mutated one; either way
    // its public part (a recorded call can enter through `Validator._repr_args`).
    let public = match input.cases.first() {
        Some(d) => public_name(&d.call.qualname, &d.call.file),
        None => public_name(&cand.function, &cand.file),
    };
    let hint = cand.issue_hints.first().cloned().unwrap_or_default();
    let mut imports = std::collections::BTreeSet::new();
    let calls: Vec<minijinja::Value> = input
        .cases
        .iter()
        .map(|d| {
            let top = d
                .call
                .qualname
                .split('.')
                .next()
                .unwrap_or(&d.call.qualname);
            imports.insert(format!("from {} import {top}", d.call.module));
            imports.extend(d.call.imports.iter().cloned());
            let (exc, msg) = match &d.buggy {
                CallOutcome::Raised {
                    type_name, message, ..
                } => (type_name.clone(), message.clone()),
                _ => (String::new(), String::new()),
            };
            minijinja::Value::from_serialize(serde_json::json!({
                "call": d.call_text(),
                "code": setup_for_issue(&d.call.setup).into_iter().chain([d.call_text()]).collect::<Vec<_>>().join("\n"),
                "setup": setup_for_issue(&d.call.setup),
                "actual": match (d.attr_differences().first(), &d.buggy) {
                    (Some((name, _, Some(actual))), CallOutcome::Raised { .. }) => format!("{} whose `{name}` is {actual}", d.buggy.describe()),
                    (Some((name, _, None)), CallOutcome::Raised { .. }) => format!("{} without a `{name}`", d.buggy.describe()),
                    (Some((name, _, Some(actual))), _) => format!("returns an object whose `{name}` is {actual}"),
                    (Some((name, _, None)), _) => format!("returns an object without a `{name}`"),
                    (None, _) => d.buggy.describe(),
                },
                "expected_verb": match (d.attr_differences().first(), &d.clean) {
                    (Some((name, expected, _)), CallOutcome::Raised { type_name, .. }) => format!("raise a {type_name} whose `{name}` is {expected}"),
                    (Some((name, expected, _)), _) => format!("return one whose `{name}` is {expected}"),
                    (None, _) => expected_verb(&d.clean),
                },
                "actual_exception": exc,
                "actual_message": msg,
            }))
        })
        .collect();
    let doctest = failing_doctest(input);
    let observed = match &doctest {
        Some(d) => d.pasted(),
        None => observed_failure(input),
    };
    // The doctest runner's counts: say what they mean.
    let raw_observed = observed.clone();
    let observed = match doctest_runner_counts(&observed) {
        Some((failed, attempted)) => format!(
            "Running the examples in the documentation with doctest: {failed} of {attempted} fail."
        ),
        None => observed,
    };
    let wording = wording(&cand.category)?;
    let title = match observed
        .lines()
        .next()
        .and_then(|l| l.trim().strip_prefix(IMPORT_FAILS))
    {
        Some(exc) if input.cases.is_empty() => {
            format!("Importing `{}` fails with {exc}", package_name(&cand.file))
        }
        _ => symptom_title(&public, input.cases, &raw_observed, doctest.as_ref()),
    };
    let compared = compared_values(&observed);
    // `assert False` says nothing; the call its `where` lines name does.
    let observed_first = match (&compared, innermost_call(&observed)) {
        _ if jest_first_line(&public, &observed).is_some() => {
            jest_first_line(&public, &observed).unwrap_or_default()
        }
        (None, Some((call, value))) => format!("`{call}` returns {value}"),
        _ => observed.lines().next().unwrap_or("").trim().to_string(),
    };
    let doctest_value = doctest.as_ref().map(|d| {
        minijinja::Value::from_serialize(serde_json::json!({
            "example": d.example,
            "code": d.code(),
            "expected": d.expected,
            "got": d.got,
            "raised": d.raised,
        }))
    });
    let text = env
        .get_template(&name)
        .and_then(|t| {
            t.render(context! {
                public => public,
                function => cand.function,
                title => title,
                detail => detail,
                observed => observed,
                observed_first => observed_first,
                expected => compared.as_ref().map(|(_, _, e)| e.clone()),
                doctest => doctest_value,
                calls => calls,
                imports => imports.into_iter().collect::<Vec<_>>(),
                failing_count => input.fail_to_pass.len(),
            })
        })
        .map_err(|source| IssueError::Render { name, source })?;
    let hints = if hint.is_empty() {
        wording.symptom.clone()
    } else {
        format!("{} A likely cause: {hint}.", wording.symptom)
    };
    // Collapse the blank lines templates leave behind.
    let mut out = String::new();
    let mut blank = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(Issue {
        text: out,
        style,
        detail,
        hints,
    })
}

/// The values a rewrite of the problem statement must keep (`--issue-llm`): for synthesized
/// inputs the reproduction's code and the observed and expected values; otherwise the lines of
/// the observed failure. Only those the rendered text shows are checked.
pub fn key_values(input: &IssueInput<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: String| {
        let v = v.trim().to_string();
        if !v.is_empty() && !out.contains(&v) {
            out.push(v);
        }
    };
    for d in input.cases {
        for line in setup_for_issue(&d.call.setup) {
            for l in line.lines() {
                push(l.to_string());
            }
        }
        push(d.call_text());
        for outcome in [&d.buggy, &d.clean] {
            match outcome {
                CallOutcome::Value {
                    source: Some(s), ..
                } => push(s.clone()),
                CallOutcome::Value { repr, .. } => push(repr.clone()),
                CallOutcome::Raised {
                    type_name, message, ..
                } => {
                    push(type_name.clone());
                    push(message.clone());
                }
                _ => {}
            }
        }
    }
    if input.cases.is_empty() {
        let observed = match failing_doctest(input) {
            Some(d) => d.pasted(),
            None => observed_failure(input),
        };
        for l in observed.lines() {
            push(l.to_string());
        }
    }
    out
}

/// How the observed failure of a test the bug made uncollectable begins.
const IMPORT_FAILS: &str = "importing the package fails: ";

/// The first FAIL_TO_PASS test of the buggy run that is a failed doctest, parsed.
fn failing_doctest(input: &IssueInput<'_>) -> Option<DoctestFailure> {
    let run = input.buggy_run?;
    input
        .fail_to_pass
        .iter()
        .filter_map(|t| run.results.get(t)?.message.as_deref())
        .find_map(DoctestFailure::parse)
}

/// The first failure message of the buggy run, without lines that point into test files.
fn observed_failure(input: &IssueInput<'_>) -> String {
    let Some(run) = input.buggy_run else {
        return String::new();
    };
    // A test whose file the bug made uncollectable fails with the import's exception.
    let message = input
        .fail_to_pass
        .iter()
        .filter_map(|t| run.results.get(t))
        .find_map(|r| r.message.clone())
        .or_else(|| {
            input
                .fail_to_pass
                .iter()
                .find_map(|t| run.collection_error(t))
                .map(|e| format!("{IMPORT_FAILS}{e}"))
        })
        .unwrap_or_default();
    let test_names: Vec<&str> = input
        .fail_to_pass
        .iter()
        .map(|t| t.rsplit("::").next().unwrap_or(t))
        .map(|n| n.split('[').next().unwrap_or(n))
        .collect();
    message
        .lines()
        .filter(|l| !input.test_files.iter().any(|f| l.contains(f.as_str())))
        .filter(|l| !test_names.iter().any(|n| l.contains(n)))
        .filter(|l| !l.contains(".py:"))
        // jest's own header of a matcher failure (`Error: expect(received).toBe(expected)`),
        // and the hunk headers of its long diffs (`@@ -1,13 +1,9 @@`: not the fix's).
        .filter(|l| !is_matcher_header(l))
        .filter(|l| !(l.trim_start().starts_with("@@ ") && l.trim_end().ends_with(" @@")))
        .map(without_frame_position)
        // An object's repr carries its memory address, never reproducible: the object stays,
        // its address goes (`KeyError: <pkg.Item object>` still says what failed).
        .map(|l| without_addresses(&l))
        .take(12)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Whether a line is jest's header of a matcher failure: `Error: expect(received).toBe(expected)
/// // Object.is equality`. It names the test's assertion, not what the user saw.
fn is_matcher_header(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix("Error: ").unwrap_or(t);
    t.starts_with("expect(received)") || t.starts_with("expect(jest.fn())")
}

/// A JavaScript stack frame without its line and column (`at f (lib/a.js:52:7)` →
/// `at f (lib/a.js)`): a real report names the file; the bug's line is the fix's location.
fn without_frame_position(line: &str) -> String {
    let t = line.trim_start();
    if !t.starts_with("at ") {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    // `:52:7` or `:52` right before `)` or at the end.
    while let Some(i) = rest.find(':') {
        let after = &rest[i + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            out.push_str(&rest[..=i]);
            rest = after;
            continue;
        }
        let mut end = i + 1 + digits;
        if rest[end..].starts_with(':') {
            let col = &rest[end + 1..];
            let n = col.len() - col.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if n > 0 {
                end += 1 + n;
            }
        }
        let tail = &rest[end..];
        if tail.is_empty() || tail.starts_with(')') {
            out.push_str(&rest[..i]);
        } else {
            out.push_str(&rest[..end]);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// `<pkg.Item object at 0x7f16…>` as `<pkg.Item object>`.
fn without_addresses(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find(" at 0x") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " at 0x".len()..];
        let hex = after
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(after.len());
        rest = &after[hex..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
