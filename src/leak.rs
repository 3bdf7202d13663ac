//! The leak check: whether an issue text gives away what an agent must find out for itself —
//! the diff, the changed lines, where the bug is, or the hidden tests.
//!
//! [`find_leak`] checks a [`Task`]'s problem statement; [`find_leak_in`] checks any text
//! against [`LeakFacts`], so the pipeline can check a text before a task exists. The kinds:
//!
//! - [`LeakKind::Diff`]: a `diff --git` line, a `--- a/` / `+++ b/` header, a hunk header
//!   (`@@ -1,3 +1,3 @@`), or a `+`/`-` line whose content is a changed line of the patches.
//! - [`LeakKind::MutatedLine`]: the buggy or the clean version of a changed line appears.
//! - [`LeakKind::Location`]: "line N" with N inside the bug's line range. The bug's file path
//!   or base name (`money.py`) is not a leak: a traceback in a real report names the files it
//!   passes through. [`names_file`] tells whether a text names it, a difficulty feature
//!   (`issue_names_file`).
//! - [`LeakKind::HiddenTest`]: the name of a FAIL_TO_PASS test (`test_x` of
//!   `tests/t.py::C::test_x[p]`, `method` of `pkg.Class#method`), a file the test patch adds or
//!   changes, or a line the test patch adds.
//!
//! Lines are compared with all whitespace removed. Changed lines shorter than
//! [`MIN_LINE_CHARS`] non-space characters, or made only of keywords and punctuation
//! (`return`, `}`, `else:`), are too common to count. Names the issue is meant to use (the
//! function's) never count as a leak.

use crate::task::Task;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Changed lines with fewer non-space characters than this are ignored.
pub const MIN_LINE_CHARS: usize = 12;
/// Test names shorter than this are ignored (they read as ordinary words).
const MIN_TEST_NAME_CHARS: usize = 4;

/// A test name that is one lowercase word (jsoup's `ValidateTest#empty`) reads as an ordinary
/// word: "String must not be empty" names no test. A name with an underscore, a digit or an
/// inner capital (`test_round`, `roundsHalfUp`) is an identifier.
fn reads_as_a_word(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_lowercase())
}
/// The most of a text line quoted as evidence.
const EVIDENCE_CHARS: usize = 120;

/// What kind of information leaked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeakKind {
    Diff,
    MutatedLine,
    Location,
    HiddenTest,
}

impl LeakKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeakKind::Diff => "diff",
            LeakKind::MutatedLine => "mutated-line",
            LeakKind::Location => "location",
            LeakKind::HiddenTest => "hidden-test",
        }
    }
}

impl fmt::Display for LeakKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A leak: its kind and what in the text gave it away.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leak {
    pub kind: LeakKind,
    pub evidence: String,
}

impl fmt::Display for Leak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.evidence)
    }
}

/// What an issue text must not reveal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeakFacts {
    /// Lines the gold fix or the bug adds or removes, without the `+`/`-` marker.
    pub changed_lines: Vec<String>,
    /// The bug's file and every file the patches touch (repository-relative).
    pub files: Vec<String>,
    /// The bug's lines (1-based, inclusive).
    pub lines: Option<(usize, usize)>,
    /// Names of the FAIL_TO_PASS tests (function or method names).
    pub test_names: Vec<String>,
    /// Files the test patch adds or changes.
    pub test_files: Vec<String>,
    /// Lines the test patch adds that define tests (`def test_…`, `class Test…`).
    pub test_lines: Vec<String>,
    /// Names the issue may use (the function the bug is in, and its last part).
    pub allowed: Vec<String>,
}

impl LeakFacts {
    /// Facts from the parts of a task: the fix and bug patches, the test patch (may be empty),
    /// the bug's file and lines, the FAIL_TO_PASS ids and the function the bug is in.
    pub fn from_parts(
        patches: &[&str],
        test_patch: &str,
        file: &str,
        lines: (usize, usize),
        fail_to_pass: &[String],
        function: &str,
    ) -> LeakFacts {
        let mut facts = LeakFacts {
            lines: Some(lines),
            ..Default::default()
        };
        let push = |v: &mut Vec<String>, s: &str| {
            if !s.is_empty() && !v.iter().any(|x| x == s) {
                v.push(s.to_string());
            }
        };
        push(&mut facts.files, file);
        for patch in patches {
            for f in patch_files(patch) {
                push(&mut facts.files, &f);
            }
            for l in changed(patch, true).chain(changed(patch, false)) {
                push(&mut facts.changed_lines, l);
            }
        }
        for f in patch_files(test_patch) {
            push(&mut facts.test_files, &f);
        }
        // Only the lines that name tests: the calls and expected values of a synthesized test
        // are what the issue text is written from (the reproduction), by design.
        for l in changed(test_patch, true).filter(|l| {
            let t = l.trim_start();
            t.starts_with("def ") || t.starts_with("class ") || t.starts_with("async def ")
        }) {
            push(&mut facts.test_lines, l);
        }
        for id in fail_to_pass {
            push(&mut facts.test_names, &test_name(id));
        }
        push(&mut facts.allowed, function);
        if let Some(last) = function.rsplit(['.', ':', '#']).next() {
            push(&mut facts.allowed, last);
        }
        facts
    }

    /// Facts from a task record.
    pub fn from_task(task: &Task) -> LeakFacts {
        let loc = &task.metadata.location;
        LeakFacts::from_parts(
            &[&task.patch, &task.bug_patch],
            &task.test_patch,
            &loc.file,
            loc.lines,
            &task.fail_to_pass,
            &loc.function,
        )
    }
}

/// The first leak in a task's problem statement, if any.
pub fn find_leak(task: &Task) -> Option<Leak> {
    find_leak_in(&task.problem_statement, &LeakFacts::from_task(task))
}

/// The first leak in `text`, if any. Kinds are checked in order: diff, mutated line,
/// location, hidden test.
pub fn find_leak_in(text: &str, facts: &LeakFacts) -> Option<Leak> {
    let changed: Vec<(&str, String)> = facts
        .changed_lines
        .iter()
        .filter(|l| !is_trivial(l))
        .map(|l| (l.as_str(), squash(l)))
        .collect();
    diff_leak(text, &changed)
        .or_else(|| mutated_line_leak(text, &changed))
        .or_else(|| location_leak(text, facts))
        .or_else(|| hidden_test_leak(text, facts))
}

fn diff_leak(text: &str, changed: &[(&str, String)]) -> Option<Leak> {
    for line in text.lines() {
        let t = line.trim();
        let header = t.starts_with("diff --git ")
            || t.starts_with("--- a/")
            || t.starts_with("+++ b/")
            || t.starts_with("--- /dev/null")
            || t.starts_with("+++ /dev/null")
            || is_hunk_header(t);
        if header {
            return Some(leak(LeakKind::Diff, "a diff header", line));
        }
        let marked = (t.starts_with('+') && !t.starts_with("++"))
            || (t.starts_with('-') && !t.starts_with("--"));
        if marked {
            let rest = squash(&t[1..]);
            if changed.iter().any(|(_, c)| *c == rest) {
                return Some(leak(LeakKind::Diff, "a line of the patch", line));
            }
        }
    }
    None
}

/// `@@ -12,7 +12,7 @@` (counts optional), anywhere the line starts.
fn is_hunk_header(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("@@ -") else {
        return false;
    };
    let range = |s: &str| {
        let (a, b) = s.split_once(',').unwrap_or((s, "0"));
        !a.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && !b.is_empty()
            && b.bytes().all(|c| c.is_ascii_digit())
    };
    let mut parts = rest.split(' ');
    let old = parts.next().unwrap_or("");
    let new = parts.next().unwrap_or("");
    let close = parts.next().unwrap_or("");
    range(old) && new.strip_prefix('+').is_some_and(range) && close.starts_with("@@")
}

fn mutated_line_leak(text: &str, changed: &[(&str, String)]) -> Option<Leak> {
    for line in text.lines() {
        let s = squash(line);
        if let Some((orig, _)) = changed.iter().find(|(_, c)| s.contains(c.as_str())) {
            return Some(leak(
                LeakKind::MutatedLine,
                &format!("a changed line (`{}`)", orig.trim()),
                line,
            ));
        }
    }
    None
}

/// Whether `text` names the bug's file (its path, or its base name as a word).
pub fn names_file(text: &str, facts: &LeakFacts) -> bool {
    text.lines().any(|line| {
        facts.files.iter().any(|file| {
            let base = file.rsplit('/').next().unwrap_or(file);
            line.contains(file.as_str()) || (base.contains('.') && find_word(line, base))
        })
    })
}

fn location_leak(text: &str, facts: &LeakFacts) -> Option<Leak> {
    for line in text.lines() {
        // `money.py:118`: the bug's file with a line of its range.
        if let Some((lo, hi)) = facts.lines {
            for file in &facts.files {
                let base = file.rsplit('/').next().unwrap_or(file);
                let at = format!("{base}:");
                let mut rest = line;
                while let Some(i) = rest.find(&at) {
                    rest = &rest[i + at.len()..];
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if digits
                        .parse::<usize>()
                        .is_ok_and(|n| (lo..=hi).contains(&n))
                    {
                        return Some(leak(
                            LeakKind::Location,
                            &format!("the bug's line {base}:{digits}"),
                            line,
                        ));
                    }
                }
            }
        }
        if let Some((lo, hi)) = facts.lines {
            if let Some(n) = line_numbers(line)
                .into_iter()
                .find(|n| (lo..=hi).contains(n))
            {
                return Some(leak(
                    LeakKind::Location,
                    &format!("the bug's line {n}"),
                    line,
                ));
            }
        }
    }
    None
}

fn hidden_test_leak(text: &str, facts: &LeakFacts) -> Option<Leak> {
    let test_lines: Vec<(&str, String)> = facts
        .test_lines
        .iter()
        .filter(|l| !is_trivial(l))
        .map(|l| (l.as_str(), squash(l)))
        .collect();
    for line in text.lines() {
        for name in &facts.test_names {
            if name.chars().count() < MIN_TEST_NAME_CHARS
                || reads_as_a_word(name)
                || facts.allowed.contains(name)
            {
                continue;
            }
            if find_word(line, name) {
                return Some(leak(
                    LeakKind::HiddenTest,
                    &format!("the FAIL_TO_PASS test `{name}`"),
                    line,
                ));
            }
        }
        for file in &facts.test_files {
            let base = file.rsplit('/').next().unwrap_or(file);
            if line.contains(file.as_str()) || find_word(line, base) {
                return Some(leak(
                    LeakKind::HiddenTest,
                    &format!("the test file `{file}`"),
                    line,
                ));
            }
        }
        let s = squash(line);
        if let Some((orig, _)) = test_lines.iter().find(|(_, c)| s.contains(c.as_str())) {
            return Some(leak(
                LeakKind::HiddenTest,
                &format!("a line of the test patch (`{}`)", orig.trim()),
                line,
            ));
        }
    }
    None
}

fn leak(kind: LeakKind, what: &str, line: &str) -> Leak {
    let t = line.trim();
    let quoted: String = if t.chars().count() > EVIDENCE_CHARS {
        format!("{}…", t.chars().take(EVIDENCE_CHARS).collect::<String>())
    } else {
        t.to_string()
    };
    Leak {
        kind,
        evidence: format!("{what} in `{quoted}`"),
    }
}

/// The files a git diff touches: every path of every `diff --git` section, a rename's old and
/// new path both, in order and without repeats (read by [`crate::patch::sections`]).
pub fn patch_files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for section in crate::patch::sections(patch) {
        for p in section.paths() {
            if !p.is_empty() && !out.iter().any(|x| x == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// The lines a diff adds (`added`) or removes, without the marker.
fn changed(patch: &str, added: bool) -> impl Iterator<Item = &str> {
    let (marker, header) = if added { ('+', "+++") } else { ('-', "---") };
    patch
        .lines()
        .filter(move |l| l.starts_with(marker) && !l.starts_with(header))
        .map(|l| &l[1..])
}

/// The name of a test from its id: `test_x` of `tests/t.py::C::test_x[p]`, `method` of
/// `pkg.Class#method` (without a parameter list).
pub fn test_name(id: &str) -> String {
    // The parameter part goes first: it may hold `::` or `#` itself.
    let id = id.split('[').next().unwrap_or(id);
    let name = if id.contains("::") {
        id.rsplit("::").next().unwrap_or(id)
    } else {
        id.split_once('#').map_or(id, |(_, method)| method)
    };
    // A title with spaces (JavaScript's `describe`/`it` names: `negotiator.charset() when
    // none should return *`) is the name as a whole: its first words are the API it tests,
    // which an issue text may well name.
    if name.contains(' ') {
        return name.to_string();
    }
    name.split('(').next().unwrap_or(name).to_string()
}

/// Whitespace removed.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Keywords that alone make a line too common to be evidence.
const KEYWORDS: &[&str] = &[
    "and",
    "as",
    "assert",
    "boolean",
    "break",
    "case",
    "catch",
    "class",
    "continue",
    "def",
    "default",
    "do",
    "double",
    "elif",
    "else",
    "except",
    "false",
    "False",
    "final",
    "finally",
    "for",
    "if",
    "import",
    "in",
    "int",
    "is",
    "lambda",
    "long",
    "new",
    "none",
    "None",
    "not",
    "null",
    "or",
    "pass",
    "private",
    "protected",
    "public",
    "raise",
    "return",
    "self",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "True",
    "try",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// Too short, or only keywords and punctuation.
fn is_trivial(line: &str) -> bool {
    if squash(line).chars().count() < MIN_LINE_CHARS {
        return true;
    }
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .all(|w| KEYWORDS.contains(&w))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `needle` occurs in `hay` with no identifier character right before or after it.
fn find_word(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Numbers N in "line N" / "lines N" / "line N-M" (case-insensitive) in a line of text.
fn line_numbers(line: &str) -> Vec<usize> {
    let lower = line.to_ascii_lowercase();
    let mut out = Vec::new();
    for (i, _) in lower.match_indices("line") {
        if lower[..i].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let rest = &lower[i + 4..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        if !rest.starts_with(|c: char| c.is_whitespace()) {
            continue;
        }
        let rest = rest.trim_start();
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        let mut numbers = rest.split(|c: char| !c.is_ascii_digit());
        if let Some(n) = numbers.next().and_then(|d| d.parse().ok()) {
            out.push(n);
            // "line 12-14": the second number too.
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if let Some(tail) = rest[digits..].strip_prefix('-') {
                let d: String = tail.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(m) = d.parse() {
                    out.push(m);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/pyshelf/money.py b/pyshelf/money.py\n\
--- a/pyshelf/money.py\n\
+++ b/pyshelf/money.py\n\
@@ -115,7 +115,7 @@\n     if not s:\n         raise ValueError(\"empty quantity\")\n     i = 0\n\
-    while i < len(s) or (s[i].isdigit() or s[i] == \".\"):\n\
+    while i < len(s) and (s[i].isdigit() or s[i] == \".\"):\n         i += 1\n\
     return total\n";

    const BUG: &str = "diff --git a/pyshelf/money.py b/pyshelf/money.py\n\
--- a/pyshelf/money.py\n\
+++ b/pyshelf/money.py\n\
@@ -115,7 +115,7 @@\n\
-    while i < len(s) and (s[i].isdigit() or s[i] == \".\"):\n\
+    while i < len(s) or (s[i].isdigit() or s[i] == \".\"):\n         i += 1\n";

    const TEST_PATCH: &str =
        "diff --git a/tests/test_swe_forge_synth.py b/tests/test_swe_forge_synth.py\n\
new file mode 100644\n\
--- /dev/null\n\
+++ b/tests/test_swe_forge_synth.py\n\
@@ -0,0 +1,3 @@\n\
+from pyshelf.money import parse_quantity\n\
+def test_synth_quantity():\n\
+    assert parse_quantity(\"12kg\") == (12, \"kg\")\n";

    fn facts() -> LeakFacts {
        LeakFacts::from_parts(
            &[PATCH, BUG],
            TEST_PATCH,
            "pyshelf/money.py",
            (118, 118),
            &[
                "tests/test_money.py::TestQuantity::test_decimal_kilograms".to_string(),
                "tests/test_money.py::test_round_half_up[2.5-1-3]".to_string(),
            ],
            "parse_quantity",
        )
    }

    /// What issue texts look like today (an observed-failure text as templates/issue/ renders one).
    const NORMAL: &str = "`parse_quantity`: the condition accepts too much\n\n\
Code that goes through `parse_quantity` no longer behaves as documented: the condition accepts too much.\n\n\
What I see when I exercise it:\n\n```\nIndexError: string index out of range\nassert 12.5 == 12.25\n```\n\
It shows up in 4 different places of the behaviour, not just one.\n\
Expected: `parse_quantity` works as it did before, and the existing behaviour is preserved.\n";

    fn kind(text: &str) -> Option<LeakKind> {
        find_leak_in(text, &facts()).map(|l| l.kind)
    }

    #[test]
    fn a_normal_issue_text_is_not_a_leak() {
        assert_eq!(find_leak_in(NORMAL, &facts()), None);
    }

    #[test]
    fn the_function_name_and_an_observed_value_are_not_leaks() {
        let f = LeakFacts::from_parts(
            &[PATCH],
            "",
            "pyshelf/money.py",
            (118, 118),
            &["tests/test_money.py::test_parse_quantity".to_string()],
            "parse_quantity",
        );
        let text = "`parse_quantity(\"2.5kg\")` returns 3 instead of 2.5; the total is line 2 of my report";
        assert_eq!(find_leak_in(text, &f), None);
        // A JUnit test named like the public method is not a leak either.
        let f = LeakFacts::from_parts(
            &[],
            "",
            "src/A.java",
            (3, 3),
            &["p.ATest#total".into()],
            "A.total",
        );
        assert_eq!(find_leak_in("`total` is off by one", &f), None);
    }

    #[test]
    fn diff_headers_and_marked_lines_leak() {
        assert_eq!(
            kind(&format!("{NORMAL}\ndiff --git a/x b/x\n")),
            Some(LeakKind::Diff)
        );
        assert_eq!(kind("see\n@@ -115,7 +115,7 @@\n"), Some(LeakKind::Diff));
        assert_eq!(kind("see\n@@ -1 +1 @@ def f():\n"), Some(LeakKind::Diff));
        assert_eq!(kind("+++ b/other.txt\n"), Some(LeakKind::Diff));
        let l = find_leak_in(
            &format!("{NORMAL}+    while i < len(s) and (s[i].isdigit() or s[i] == \".\"):\n"),
            &facts(),
        )
        .unwrap();
        assert_eq!(l.kind, LeakKind::Diff);
        assert!(
            l.evidence.contains("while i < len(s) and"),
            "{}",
            l.evidence
        );
        // Marked lines that are not the patch's (a pytest assertion diff) are not leaks.
        assert_eq!(
            kind("Full diff:\n  - [1, 3]\n  + [1, 2, 3, 4, 5, 6]\n"),
            None
        );
        // The patch's trivial lines are not evidence.
        assert_eq!(kind("-     i = 0\n+     return total\n"), None);
    }

    #[test]
    fn buggy_or_clean_line_leaks() {
        // The clean line, reformatted.
        assert_eq!(
            kind("Should it not be `while i<len(s) and (s[i].isdigit() or s[i]==\".\"):`?"),
            Some(LeakKind::MutatedLine)
        );
        // The buggy line.
        let l = find_leak_in(
            "The loop `while i < len(s) or (s[i].isdigit() or s[i] == \".\"):` runs off the end",
            &facts(),
        )
        .unwrap();
        assert_eq!(l.kind, LeakKind::MutatedLine);
        assert!(l.evidence.contains("a changed line"), "{}", l.evidence);
    }

    #[test]
    fn location_leaks() {
        // The file itself is what a traceback names: a feature, not a leak.
        assert_eq!(kind("It is in pyshelf/money.py somewhere"), None);
        assert_eq!(kind("look at (money.py)"), None);
        assert!(names_file("It is in pyshelf/money.py somewhere", &facts()));
        assert!(names_file("look at (money.py)", &facts()));
        assert!(!names_file("see mymoney.pyx", &facts()));
        // A line of the bug's range is.
        assert_eq!(kind("money.py:118 is wrong"), Some(LeakKind::Location));
        assert_eq!(kind("look at line 118"), Some(LeakKind::Location));
        assert_eq!(kind("Lines 110-118 are suspect"), Some(LeakKind::Location));
        // Another line number, or a longer name that merely contains the base name, is fine.
        assert_eq!(kind("look at line 12"), None);
        assert_eq!(kind("see mymoney.pyx"), None);
        assert_eq!(kind("the pipeline 118 is fine"), None);
        let java = LeakFacts::from_parts(
            &[],
            "",
            "src/main/java/com/shelf/Money.java",
            (40, 42),
            &[],
            "Money.total",
        );
        assert_eq!(
            find_leak_in("`Money.total` breaks; see Money.java:41", &java).map(|l| l.kind),
            Some(LeakKind::Location)
        );
        assert_eq!(
            find_leak_in("`Money.total` breaks in Money.java", &java),
            None
        );
        assert_eq!(find_leak_in("`Money.total` breaks", &java), None);
    }

    #[test]
    fn hidden_test_leaks() {
        assert_eq!(
            kind("test_decimal_kilograms fails for me"),
            Some(LeakKind::HiddenTest)
        );
        // The pytest parameter part is not needed to leak the name.
        assert_eq!(kind("run test_round_half_up"), Some(LeakKind::HiddenTest));
        // A longer identifier that contains the name is another test.
        assert_eq!(kind("run test_round_half_up_rejects_zero"), None);
        assert_eq!(
            kind("see tests/test_swe_forge_synth.py"),
            Some(LeakKind::HiddenTest)
        );
        assert_eq!(
            kind("see test_swe_forge_synth.py"),
            Some(LeakKind::HiddenTest)
        );
        // The reproduction (a synthesized test's call and expected value) is what an issue is
        // written from: not a leak; the test's own definition line is.
        assert_eq!(
            kind("try assert parse_quantity(\"12kg\") == (12, \"kg\")"),
            None
        );
        let java = LeakFacts::from_parts(
            &[],
            "",
            "src/main/java/com/shelf/Money.java",
            (40, 42),
            &["com.shelf.MoneyTest#roundsHalfUp".into()],
            "Money.round",
        );
        let l = find_leak_in("roundsHalfUp() fails", &java).unwrap();
        assert_eq!(l.kind, LeakKind::HiddenTest);
        assert!(l.evidence.contains("roundsHalfUp"));
        // A test named by one ordinary word is not named by that word in a sentence.
        let word = LeakFacts::from_parts(
            &[],
            "",
            "src/main/java/org/jsoup/helper/Validate.java",
            (40, 42),
            &["org.jsoup.helper.ValidateTest#empty".into()],
            "Validate.notEmpty",
        );
        assert_eq!(find_leak_in("String must not be empty", &word), None);
    }

    #[test]
    fn test_names_from_ids() {
        assert_eq!(test_name("tests/t.py::C::test_x[a::b]"), "test_x");
        assert_eq!(test_name("tests/t.py::test_y"), "test_y");
        assert_eq!(test_name("pkg.ATest#adds"), "adds");
        assert_eq!(test_name("pkg.ATest#adds(int)"), "adds");
        assert_eq!(test_name("t.py::test_z[#1]"), "test_z");
        assert_eq!(
            test_name("test/charset.js::negotiator.charset() when none should return *"),
            "negotiator.charset() when none should return *"
        );
    }

    #[test]
    fn patch_files_and_trivial_lines() {
        assert_eq!(patch_files(PATCH), vec!["pyshelf/money.py"]);
        assert_eq!(
            patch_files(TEST_PATCH),
            vec!["tests/test_swe_forge_synth.py"]
        );
        assert!(is_trivial("    return total"));
        assert!(is_trivial("    else:"));
        assert!(is_trivial("}"));
        assert!(is_trivial("        return self"));
        assert!(!is_trivial("    return total * rate"));
    }

    #[test]
    fn hunk_headers() {
        assert!(is_hunk_header("@@ -1,3 +1,4 @@"));
        assert!(is_hunk_header("@@ -7 +7 @@ def f():"));
        assert!(!is_hunk_header("@@ not a hunk @@"));
        assert!(!is_hunk_header("@@ -a,b +c @@"));
    }

    #[test]
    fn line_numbers_in_text() {
        assert_eq!(line_numbers("at line 5, and Line #7"), vec![5, 7]);
        assert_eq!(line_numbers("lines 3-9"), vec![3, 9]);
        assert_eq!(
            line_numbers("pipeline 4, baseline 5, lines"),
            Vec::<usize>::new()
        );
    }
}
