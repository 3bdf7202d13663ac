//! Episodes: the prompt a policy sees for a task (the issue and the buggy code), the edit it
//! answers with (compact SEARCH/REPLACE blocks), applying an edit, and the gold edit derived
//! from a task's fix for supervised warm-start.
//!
//! The prompt is an **oracle-file** setting, as SWE-bench's "oracle" retrieval: the file the
//! bug is in (`metadata.location.file`) is given, and the prompt shows the buggy version of it
//! windowed around the function that encloses the bug, within a character budget. The policy
//! does not have to find the file, only the fix.
//!
//! The edit format, one or more blocks (the file is implied, since the prompt shows one file;
//! an optional first line `path: FILE` must name that file):
//!
//! ```text
//! <<<<<<< SEARCH
//! exact lines from the file
//! =======
//! replacement lines
//! >>>>>>> REPLACE
//! ```
//!
//! Blocks apply in order, each to the text the previous ones left. A SEARCH block must match
//! exactly one run of whole lines, whitespace included; an empty REPLACE deletes the lines.
//! Outside blocks only blank lines and Markdown fence lines (```` ``` ````) are allowed. The
//! marker lines may carry trailing whitespace; a content line that is exactly `=======` cannot
//! be written (a limitation of the format).

use crate::lang::Language;
use crate::task::Task;
use diffy::patch_set::{FileOperation, ParseOptions, PatchSet};
use diffy::Line;
use serde::Serialize;
use std::fmt::Write as _;

const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";
const PATH: &str = "path:";

/// Why an edit cannot be used: it does not parse, or it does not apply to the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The text is not in the edit format (`line` is 1-based).
    #[error("line {line}: {message}")]
    Parse { line: usize, message: String },
    /// The edit names another file than the one shown.
    #[error("the edit is for `{path}`, not for `{expected}`")]
    WrongFile { path: String, expected: String },
    /// A SEARCH block matches no run of lines of the file.
    #[error("SEARCH block {block} matches no lines of the file{hint}")]
    NoMatch { block: usize, hint: String },
    /// A SEARCH block matches more than one place.
    #[error(
        "SEARCH block {block} matches {count} places in the file; add lines to make it unique"
    )]
    Ambiguous { block: usize, count: usize },
    /// A gold edit cannot be made from the task's fix.
    #[error("no gold edit for {instance_id}: {reason}")]
    Gold { instance_id: String, reason: String },
}

impl EditError {
    /// True when the text itself is malformed (as opposed to not applying).
    pub fn is_parse(&self) -> bool {
        matches!(self, EditError::Parse { .. })
    }
}

/// One SEARCH/REPLACE block: lines without their line ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Block {
    pub search: Vec<String>,
    pub replace: Vec<String>,
}

/// A parsed edit of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The `path:` line, when the edit has one.
    pub path: Option<String>,
    pub blocks: Vec<Block>,
}

impl Edit {
    /// The edit in its canonical text form: an optional `path:` line, then each block with
    /// exact markers. Parsing the rendering gives the same edit back; two edit texts with the
    /// same rendering have the same effect on any file.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(p) = &self.path {
            let _ = writeln!(out, "{PATH} {p}");
        }
        for b in &self.blocks {
            out.push_str(SEARCH);
            out.push('\n');
            for l in &b.search {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str(DIVIDER);
            out.push('\n');
            for l in &b.replace {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str(REPLACE);
            out.push('\n');
        }
        out
    }
}

/// Parse an edit (see the module documentation for the format).
pub fn parse_edit(text: &str) -> Result<Edit, EditError> {
    enum State {
        Outside,
        Search(Vec<String>),
        Replace(Vec<String>, Vec<String>),
    }
    let err = |line: usize, message: &str| EditError::Parse {
        line,
        message: message.to_string(),
    };
    let mut path = None;
    let mut blocks = Vec::new();
    let mut state = State::Outside;
    let mut last = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        last = n;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let marker = line.trim_end();
        state = match state {
            State::Outside => {
                if marker == SEARCH {
                    State::Search(Vec::new())
                } else if marker.is_empty() || marker.starts_with("```") {
                    State::Outside
                } else if let Some(p) = marker.strip_prefix(PATH) {
                    let p = p.trim();
                    if path.is_some() || !blocks.is_empty() || p.is_empty() {
                        return Err(err(
                            n,
                            "a `path:` line must come once, before the first block, with a path",
                        ));
                    }
                    path = Some(p.to_string());
                    State::Outside
                } else {
                    return Err(err(n, "text outside a SEARCH/REPLACE block"));
                }
            }
            State::Search(search) => {
                if marker == DIVIDER {
                    if search.is_empty() {
                        return Err(err(
                            n,
                            "empty SEARCH block: it must quote lines of the file",
                        ));
                    }
                    State::Replace(search, Vec::new())
                } else if marker == SEARCH || marker == REPLACE {
                    return Err(err(n, "expected `=======` before this marker"));
                } else {
                    let mut search = search;
                    search.push(line.to_string());
                    State::Search(search)
                }
            }
            State::Replace(search, replace) => {
                if marker == REPLACE {
                    blocks.push(Block { search, replace });
                    State::Outside
                } else if marker == SEARCH || marker == DIVIDER {
                    return Err(err(n, "expected `>>>>>>> REPLACE` before this marker"));
                } else {
                    let mut replace = replace;
                    replace.push(line.to_string());
                    State::Replace(search, replace)
                }
            }
        };
    }
    if !matches!(state, State::Outside) {
        return Err(err(last, "unterminated SEARCH/REPLACE block"));
    }
    if blocks.is_empty() {
        return Err(err(1, "no SEARCH/REPLACE block"));
    }
    Ok(Edit { path, blocks })
}

/// A text as lines without line ends, and whether it ends with a line end.
struct Lines {
    lines: Vec<String>,
    final_newline: bool,
}

impl Lines {
    fn of(text: &str) -> Lines {
        let final_newline = text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n').map(str::to_string).collect()
        };
        Lines {
            lines,
            final_newline,
        }
    }

    fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        if self.final_newline && !self.lines.is_empty() {
            s.push('\n');
        }
        s
    }
}

/// Where `needle` occurs as a run of whole lines of `hay`.
fn find_runs(hay: &[String], needle: &[String]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return Vec::new();
    }
    (0..=hay.len() - needle.len())
        .filter(|&i| hay[i..i + needle.len()] == *needle)
        .collect()
}

/// Apply an edit to a file's text (see the module documentation for the rules).
pub fn apply_edit(file_text: &str, edit: &Edit) -> Result<String, EditError> {
    let mut text = Lines::of(file_text);
    for (i, b) in edit.blocks.iter().enumerate() {
        let block = i + 1;
        let found = find_runs(&text.lines, &b.search);
        match found.len() {
            1 => {
                let at = found[0];
                text.lines
                    .splice(at..at + b.search.len(), b.replace.iter().cloned());
            }
            0 => {
                let trimmed: Vec<String> = b.search.iter().map(|l| l.trim().to_string()).collect();
                let loose: Vec<String> = text.lines.iter().map(|l| l.trim().to_string()).collect();
                let hint = if find_runs(&loose, &trimmed).is_empty() {
                    String::new()
                } else {
                    " (it differs from the file only in whitespace)".to_string()
                };
                return Err(EditError::NoMatch { block, hint });
            }
            count => return Err(EditError::Ambiguous { block, count }),
        }
    }
    Ok(text.text())
}

/// Apply an edit meant for `file`: its `path:` line, when present, must name that file.
pub fn apply_edit_to(file: &str, file_text: &str, edit: &Edit) -> Result<String, EditError> {
    if let Some(p) = &edit.path {
        if normalize_path(p) != normalize_path(file) {
            return Err(EditError::WrongFile {
                path: p.clone(),
                expected: file.to_string(),
            });
        }
    }
    apply_edit(file_text, edit)
}

fn normalize_path(p: &str) -> &str {
    let p = p.trim().trim_matches('`');
    p.strip_prefix("./").unwrap_or(p)
}

/// One change of a unified diff in one file: the 0-based index of the first old line it
/// replaces, the old lines and the new lines (without line ends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub old_start: usize,
    pub old: Vec<String>,
    pub new: Vec<String>,
}

impl Change {
    /// One past the last old line (equal to `old_start` for a pure insertion).
    pub fn old_end(&self) -> usize {
        self.old_start + self.old.len()
    }
}

/// The files a `git diff` touches (paths without the `a/`/`b/` prefixes), in order.
pub fn patch_files(patch: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for fp in PatchSet::parse(patch, ParseOptions::gitdiff()) {
        let fp = fp.map_err(|e| e.to_string())?;
        let path = match fp.operation() {
            FileOperation::Modify { modified, .. } => modified.to_string(),
            FileOperation::Create(p) | FileOperation::Delete(p) => p.to_string(),
            FileOperation::Rename { to, .. } | FileOperation::Copy { to, .. } => to.to_string(),
        };
        out.push(strip_prefix(&path).to_string());
    }
    Ok(out)
}

fn strip_prefix(p: &str) -> &str {
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
}

/// The changes a `git diff` makes to `file` (an in-place modification), in file order.
/// Errors when the patch does not parse, or changes `file` otherwise than in place.
pub fn file_changes(patch: &str, file: &str) -> Result<Vec<Change>, String> {
    let mut changes = Vec::new();
    let mut seen = false;
    for fp in PatchSet::parse(patch, ParseOptions::gitdiff()) {
        let fp = fp.map_err(|e| e.to_string())?;
        let (original, modified) = match fp.operation() {
            FileOperation::Modify { original, modified } => {
                (original.to_string(), modified.to_string())
            }
            FileOperation::Create(p) | FileOperation::Delete(p) => {
                if strip_prefix(p) == file {
                    return Err(format!("the patch creates or deletes {file}"));
                }
                continue;
            }
            FileOperation::Rename { from, to } | FileOperation::Copy { from, to } => {
                if strip_prefix(from) == file || strip_prefix(to) == file {
                    return Err(format!("the patch renames or copies {file}"));
                }
                continue;
            }
        };
        if strip_prefix(&modified) != file {
            continue;
        }
        if strip_prefix(&original) != file {
            return Err(format!("the patch moves {original} to {modified}"));
        }
        if seen {
            return Err(format!("the patch changes {file} in two sections"));
        }
        seen = true;
        let Some(p) = fp.patch().as_text() else {
            return Err(format!("the patch of {file} is binary"));
        };
        for h in p.hunks() {
            let r = h.old_range();
            // A hunk with no old lines starts after line `start` (0 = before the first line).
            let mut at = if r.is_empty() {
                r.start()
            } else {
                r.start().saturating_sub(1)
            };
            let mut current: Option<Change> = None;
            for line in h.lines() {
                match line {
                    Line::Context(_) => {
                        changes.extend(current.take());
                        at += 1;
                    }
                    Line::Delete(s) => {
                        current
                            .get_or_insert_with(|| Change {
                                old_start: at,
                                old: Vec::new(),
                                new: Vec::new(),
                            })
                            .old
                            .push(unterminated(s));
                        at += 1;
                    }
                    Line::Insert(s) => current
                        .get_or_insert_with(|| Change {
                            old_start: at,
                            old: Vec::new(),
                            new: Vec::new(),
                        })
                        .new
                        .push(unterminated(s)),
                }
            }
            changes.extend(current.take());
        }
    }
    if !seen {
        return Err(format!("the patch does not change {file}"));
    }
    // A change that only adds or removes the final line end leaves the same lines.
    changes.retain(|c| c.old != c.new);
    Ok(changes)
}

fn unterminated(s: &str) -> String {
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.strip_suffix('\r').unwrap_or(s).to_string()
}

/// Apply `changes` (from [`file_changes`], in file order, not overlapping) to `text`,
/// checking that the old lines are there.
pub fn apply_changes(text: &str, changes: &[Change]) -> Result<String, String> {
    let mut t = Lines::of(text);
    let mut sorted: Vec<&Change> = changes.iter().collect();
    sorted.sort_by_key(|c| (c.old_start, c.old.len()));
    for w in sorted.windows(2) {
        if w[1].old_start < w[0].old_end() {
            return Err(format!(
                "changes at lines {} and {} overlap",
                w[0].old_start + 1,
                w[1].old_start + 1
            ));
        }
    }
    for c in sorted.iter().rev() {
        if c.old_end() > t.lines.len() || t.lines[c.old_start..c.old_end()] != c.old[..] {
            return Err(format!(
                "the lines at line {} are not the ones the patch changes",
                c.old_start + 1
            ));
        }
        t.lines
            .splice(c.old_start..c.old_end(), c.new.iter().cloned());
    }
    Ok(t.text())
}

/// The gold edit of a task: minimal SEARCH/REPLACE blocks that turn the buggy file (`buggy`,
/// the text of `metadata.location.file` after `bug_patch`) into the clean one, derived from
/// the gold `patch`. Each block quotes the changed lines plus as few context lines around
/// them as make it match exactly once when it is applied; changes whose blocks would touch
/// are merged into one block. The result is checked: applying it gives what applying the
/// gold patch gives.
pub fn gold_edit(task: &Task, buggy: &str) -> Result<Edit, EditError> {
    let file = &task.metadata.location.file;
    let gold_err = |reason: String| EditError::Gold {
        instance_id: task.instance_id.clone(),
        reason,
    };
    let changes = file_changes(&task.patch, file).map_err(gold_err)?;
    let expected = apply_changes(buggy, &changes).map_err(gold_err)?;
    if changes.is_empty() {
        return Err(gold_err(format!(
            "the gold patch leaves {file}'s lines as they are"
        )));
    }
    let base = Lines::of(buggy).lines;
    let n = base.len();
    let mut current = base.clone();
    let mut shift: isize = 0;
    let mut prev_hi = 0usize;
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < changes.len() {
        let mut k = usize::from(changes[i].old.is_empty());
        let (lo, hi, last) = loop {
            let lo = changes[i].old_start.saturating_sub(k).max(prev_hi);
            let mut last = i;
            let mut hi = (changes[i].old_end() + k).min(n);
            while last + 1 < changes.len() && changes[last + 1].old_start <= hi {
                last += 1;
                hi = (changes[last].old_end() + k).min(n).max(hi);
            }
            let search = &base[lo..hi];
            let unique = find_runs(&current, search).len() == 1;
            if unique || (lo == prev_hi && hi == n) {
                if !unique {
                    return Err(gold_err(format!(
                        "no context makes the change at line {} unique",
                        changes[i].old_start + 1
                    )));
                }
                break (lo, hi, last);
            }
            k += 1;
        };
        let mut replace = Vec::new();
        let mut at = lo;
        for c in &changes[i..=last] {
            replace.extend_from_slice(&base[at..c.old_start]);
            replace.extend(c.new.iter().cloned());
            at = c.old_end();
        }
        replace.extend_from_slice(&base[at..hi]);
        let start = (lo as isize + shift) as usize;
        current.splice(start..start + (hi - lo), replace.iter().cloned());
        shift += replace.len() as isize - (hi - lo) as isize;
        blocks.push(Block {
            search: base[lo..hi].to_vec(),
            replace,
        });
        prev_hi = hi;
        i = last + 1;
    }
    let edit = Edit { path: None, blocks };
    match apply_edit(buggy, &edit) {
        Ok(t) if t == expected => Ok(edit),
        Ok(_) => Err(gold_err(
            "the derived edit does not give the clean file".into(),
        )),
        Err(e) => Err(gold_err(format!("the derived edit does not apply: {e}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// Prompts.

/// How much code a prompt shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptConfig {
    /// Lines shown before and after the enclosing function, when the budget allows.
    pub context_lines: usize,
    /// At most this many characters of code (the lines of the bug itself are always shown,
    /// even when they alone exceed it; the prompt then says `over_budget`).
    pub max_code_chars: usize,
    /// The issue text is cut to this many characters.
    pub max_issue_chars: usize,
}

impl Default for PromptConfig {
    fn default() -> Self {
        PromptConfig {
            context_lines: 3,
            max_code_chars: 4000,
            max_issue_chars: 2000,
        }
    }
}

/// A rendered prompt and what it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Prompt {
    pub instance_id: String,
    /// The file shown (`metadata.location.file`).
    pub file: String,
    /// 1-based, inclusive: the lines of the file the prompt shows.
    pub first_line: usize,
    pub last_line: usize,
    /// The code shown (those lines, each ending with a line end).
    pub code: String,
    /// Whether the window is smaller than the function and its context lines.
    pub truncated: bool,
    /// Whether the bug's own lines exceed `max_code_chars`.
    pub over_budget: bool,
    /// The whole prompt text, from `templates/train/prompt.md.j2`.
    pub text: String,
}

/// Why a prompt could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("the prompt template is missing from the build")]
    MissingTemplate,
    #[error("rendering the prompt: {0}")]
    Render(#[from] minijinja::Error),
    #[error("{instance_id}: the bug's lines {first}-{last} are outside {file} ({lines} lines)")]
    Location {
        instance_id: String,
        file: String,
        first: usize,
        last: usize,
        lines: usize,
    },
}

/// The 1-based, inclusive lines of the innermost function of `text` that contains `line`
/// (1-based), found with the language's syntax tree; `None` when no function does or the text
/// does not parse.
pub fn enclosing_function(language: Language, text: &str, line: usize) -> Option<(usize, usize)> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    let tree = parser.parse(text, None)?;
    let row = line.checked_sub(1)?;
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let from = *starts.get(row)?;
    let to = starts
        .get(row + 1)
        .map_or(text.len(), |e| e.saturating_sub(1));
    // The first non-blank byte of the line, so that indentation does not select the block.
    let from = text[from..to]
        .find(|c: char| !c.is_whitespace())
        .map_or(from, |o| from + o);
    let mut node = tree
        .root_node()
        .descendant_for_byte_range(from, from.max(to.min(from + 1)))?;
    let syntax = language.syntax();
    loop {
        if syntax.function_parts(node).is_some() {
            return Some((node.start_position().row + 1, node.end_position().row + 1));
        }
        node = node.parent()?;
    }
}

/// The prompt of a task, given the buggy text of its file (see [`crate::train::reward::RewardEnv::buggy_file`]).
///
/// The window: the bug's lines (`metadata.location.lines`), grown a line at a time upwards
/// and downwards, first to the enclosing function, then by `context_lines` more, as long as
/// the next line fits in `max_code_chars`.
pub fn build_prompt(task: &Task, buggy: &str, cfg: &PromptConfig) -> Result<Prompt, PromptError> {
    let loc = &task.metadata.location;
    let lines: Vec<&str> = buggy.split_inclusive('\n').collect();
    let n = lines.len();
    let (first, last) = loc.lines;
    if first == 0 || first > n {
        return Err(PromptError::Location {
            instance_id: task.instance_id.clone(),
            file: loc.file.clone(),
            first,
            last,
            lines: n,
        });
    }
    // Line numbers are the clean file's; a bug that removes lines ends earlier.
    let (bs, be) = (first - 1, last.clamp(first, n) - 1);
    let (fs, fe) = enclosing_function(task.language, buggy, first)
        .map(|(s, e)| (s - 1, (e - 1).min(n - 1)))
        .unwrap_or((bs, be));
    let (fs, fe) = (fs.min(bs), fe.max(be));
    let cost = |i: usize| lines[i].len() + usize::from(!lines[i].ends_with('\n'));
    let mut used: usize = (bs..=be).map(cost).sum();
    let over_budget = used > cfg.max_code_chars;
    let (mut lo, mut hi) = (bs, be);
    let outer = (
        fs.saturating_sub(cfg.context_lines),
        (fe + cfg.context_lines).min(n - 1),
    );
    for (min, max) in [(fs, fe), outer] {
        loop {
            let mut grew = false;
            if lo > min && used + cost(lo - 1) <= cfg.max_code_chars {
                lo -= 1;
                used += cost(lo);
                grew = true;
            }
            if hi < max && used + cost(hi + 1) <= cfg.max_code_chars {
                hi += 1;
                used += cost(hi);
                grew = true;
            }
            if !grew {
                break;
            }
        }
    }
    let truncated = (lo, hi) != outer;
    let mut code: String = lines[lo..=hi].concat();
    if !code.ends_with('\n') {
        code.push('\n');
    }
    let issue = cut(task.problem_statement.trim(), cfg.max_issue_chars);
    let source =
        crate::assets::template("train/prompt.md.j2").ok_or(PromptError::MissingTemplate)?;
    let mut env = minijinja::Environment::new();
    env.add_template("prompt", source)?;
    let text = env.get_template("prompt")?.render(minijinja::context! {
        issue => issue,
        file => loc.file,
        language => task.language.name(),
        first_line => lo + 1,
        last_line => hi + 1,
        truncated => truncated,
        code => code.trim_end_matches('\n'),
    })?;
    Ok(Prompt {
        instance_id: task.instance_id.clone(),
        file: loc.file.clone(),
        first_line: lo + 1,
        last_line: hi + 1,
        code,
        truncated,
        over_budget,
        text,
    })
}

/// At most `max` characters of `s`, cut at a character boundary, with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::candidate::enumerate_source;
    use crate::mutator::load_embedded;
    use crate::task::{Difficulty, EnvironmentInfo, Evidence, Location, TaskMetadata};

    fn edit(blocks: &[(&str, &str)]) -> Edit {
        let lines = |s: &str| -> Vec<String> {
            if s.is_empty() {
                vec![]
            } else {
                s.split('\n').map(str::to_string).collect()
            }
        };
        Edit {
            path: None,
            blocks: blocks
                .iter()
                .map(|(s, r)| Block {
                    search: lines(s),
                    replace: lines(r),
                })
                .collect(),
        }
    }

    /// A task record around a bug patch and gold patch of `file` (only the fields the
    /// episode code reads matter).
    pub(crate) fn task_with(
        id: &str,
        file: &str,
        bug_patch: String,
        patch: String,
        lines: (usize, usize),
    ) -> Task {
        Task {
            instance_id: id.into(),
            repo: "pyshelf".into(),
            base_commit: "a".repeat(40),
            patch,
            test_patch: String::new(),
            problem_statement: "`total` is wrong for two items.".into(),
            hints_text: String::new(),
            created_at: "2026-01-01T00:00:00Z".into(),
            version: "0".into(),
            environment_setup_commit: "a".repeat(40),
            fail_to_pass: vec!["tests/t.py::test_a".into()],
            pass_to_pass: vec!["tests/t.py::test_b".into()],
            bug_patch,
            image_name: None,
            language: Language::Python,
            metadata: TaskMetadata {
                mutators: vec!["py-arith".into()],
                category: "operator".into(),
                candidate_id: id.into(),
                location: Location {
                    file: file.into(),
                    function: "f".into(),
                    lines,
                },
                difficulty: Difficulty {
                    category: "operator".into(),
                    killing_tests: 1,
                    function_lines: 3,
                    fix_lines: 2,
                    files_in_fix: 1,
                    synthesized_tests: false,
                    direct_call: false,
                    issue_names_function: false,
                    issue_names_file: false,
                    score: 0.4,
                },
                verification: Evidence {
                    repeats: 3,
                    sandbox: "local".into(),
                    clean_runs: vec![],
                    runs: vec![],
                    reused: vec![],
                    nondeterministic: Default::default(),
                },
                environment: EnvironmentInfo {
                    seed: String::new(),
                    source: "/nowhere".into(),
                    install: None,
                    test_command: "python -m pytest".into(),
                    python_path: vec![".".into()],
                    toolchain: None,
                },
                tool_version: "0.1.0".into(),
                issue_style: "report".into(),
                issue_detail: String::new(),
                issue_rewrite: Default::default(),
                start_state: None,
                dropped_test_ids: Default::default(),
            },
        }
    }

    #[test]
    fn parses_blocks_path_and_fences() {
        let text = "path: pkg/m.py\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE  \n\n<<<<<<< SEARCH\nx = 1\n=======\n>>>>>>> REPLACE\n```\n";
        let e = parse_edit(text).unwrap();
        assert_eq!(e.path.as_deref(), Some("pkg/m.py"));
        assert_eq!(e.blocks.len(), 2);
        assert_eq!(e.blocks[0].search, vec!["    return a - b"]);
        assert_eq!(e.blocks[0].replace, vec!["    return a + b"]);
        assert!(e.blocks[1].replace.is_empty());
        // The canonical rendering parses back to the same edit.
        assert_eq!(parse_edit(&e.render()).unwrap(), e);
        // CRLF line ends are read as LF.
        let crlf = e.render().replace('\n', "\r\n");
        assert_eq!(parse_edit(&crlf).unwrap(), e);
    }

    #[test]
    fn rejects_malformed_edits_with_the_line() {
        let cases = [
            ("", 1, "no SEARCH/REPLACE block"),
            ("hello\n", 1, "outside"),
            ("<<<<<<< SEARCH\na\n=======\nb\n", 5, "unterminated"),
            (
                "<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE\n",
                2,
                "empty SEARCH",
            ),
            (
                "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n",
                3,
                "expected `=======`",
            ),
            (
                "<<<<<<< SEARCH\na\n=======\n=======\n",
                4,
                "expected `>>>>>>> REPLACE`",
            ),
            (
                "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\npath: x\n",
                6,
                "path:",
            ),
        ];
        for (text, line, what) in cases {
            match parse_edit(text) {
                Err(EditError::Parse { line: l, message }) => {
                    assert_eq!(l, line, "{text:?}: {message}");
                    assert!(message.contains(what), "{text:?}: {message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn applies_in_order_whitespace_exact_and_unique() {
        let file = "def f(a, b):\n    x = a - b\n    return x\n\ndef g():\n    return 1\n";
        let e = edit(&[
            ("    x = a - b", "    x = a + b"),
            ("    return 1", "    return 2"),
        ]);
        assert_eq!(
            apply_edit(file, &e).unwrap(),
            "def f(a, b):\n    x = a + b\n    return x\n\ndef g():\n    return 2\n"
        );
        // Whitespace must match exactly; the error says it is only whitespace.
        let loose = edit(&[("  x = a - b", "  x = a + b")]);
        let err = apply_edit(file, &loose).unwrap_err();
        assert_eq!(
            err,
            EditError::NoMatch {
                block: 1,
                hint: " (it differs from the file only in whitespace)".into()
            }
        );
        // Whole lines only: a part of a line does not match.
        assert!(matches!(
            apply_edit(file, &edit(&[("x = a - b", "x = 0")])),
            Err(EditError::NoMatch { .. })
        ));
        // Two places match: ambiguous.
        let twice = "    return 1\n    return 1\n";
        assert_eq!(
            apply_edit(twice, &edit(&[("    return 1", "    return 0")])),
            Err(EditError::Ambiguous { block: 1, count: 2 })
        );
        // A later block sees the text the earlier ones left.
        let chained = edit(&[("    x = a - b", "    y = 1"), ("    y = 1", "    y = 2")]);
        assert!(apply_edit(file, &chained).unwrap().contains("    y = 2\n"));
        // Deleting lines, and a file without a final line end keeps it so.
        assert_eq!(apply_edit("a\nb\nc", &edit(&[("b", "")])).unwrap(), "a\nc");
        assert_eq!(
            apply_edit("a\nb\nc", &edit(&[("c", "d")])).unwrap(),
            "a\nb\nd"
        );
    }

    #[test]
    fn a_path_line_must_name_the_file() {
        let mut e = edit(&[("a", "b")]);
        e.path = Some("./pkg/m.py".into());
        assert_eq!(apply_edit_to("pkg/m.py", "a\n", &e).unwrap(), "b\n");
        assert!(matches!(
            apply_edit_to("pkg/other.py", "a\n", &e),
            Err(EditError::WrongFile { .. })
        ));
    }

    #[test]
    fn changes_are_read_from_a_git_diff() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
        let patch = crate::task::file_diff("m.py", old, new);
        let ch = file_changes(&patch, "m.py").unwrap();
        assert_eq!(
            ch,
            vec![
                Change {
                    old_start: 1,
                    old: vec!["b".into()],
                    new: vec!["B".into()]
                },
                Change {
                    old_start: 11,
                    old: vec![],
                    new: vec!["l".into()]
                }
            ]
        );
        assert_eq!(apply_changes(old, &ch).unwrap(), new);
        assert!(file_changes(&patch, "other.py").is_err());
        assert_eq!(patch_files(&patch).unwrap(), vec!["m.py"]);
    }

    /// A real bug of the demo seed: its file, the clean and buggy texts, the gold patch and the
    /// bug's lines.
    struct DemoBug {
        file: String,
        clean: String,
        buggy: String,
        patch: String,
        lines: (usize, usize),
    }

    /// Every candidate the embedded rules make on the demo seed's sources.
    fn demo_bugs() -> Vec<DemoBug> {
        let rules = load_embedded(Language::Python).unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
        let mut out = Vec::new();
        for name in [
            "money.py",
            "periods.py",
            "pricing.py",
            "query.py",
            "text.py",
            "ledger.py",
        ] {
            let rel = format!("pyshelf/{name}");
            let clean = std::fs::read_to_string(root.join(&rel)).unwrap();
            for c in enumerate_source(&rel, clean.as_bytes(), Language::Python, &rules).unwrap() {
                let buggy = crate::task::buggy_text(&clean, &c);
                let patch = crate::task::gold_patch(&clean, &c);
                out.push(DemoBug {
                    file: rel.clone(),
                    clean: clean.clone(),
                    buggy,
                    patch,
                    lines: c.line_range,
                });
            }
        }
        out
    }

    #[test]
    fn gold_edit_turns_real_buggy_files_into_clean_ones() {
        let bugs = demo_bugs();
        assert!(bugs.len() > 100, "{} candidates", bugs.len());
        let mut failed = Vec::new();
        let mut search_lines = 0;
        for (i, bug) in bugs.iter().enumerate() {
            let (file, clean, buggy, patch, lines) =
                (&bug.file, &bug.clean, &bug.buggy, &bug.patch, &bug.lines);
            let task = task_with(&format!("t{i}"), file, String::new(), patch.clone(), *lines);
            match gold_edit(&task, buggy) {
                Ok(e) => {
                    assert_eq!(
                        &apply_edit(buggy, &e).unwrap(),
                        clean,
                        "{file}\n{}",
                        e.render()
                    );
                    // The rendering round-trips through the parser.
                    assert_eq!(parse_edit(&e.render()).unwrap(), e);
                    search_lines += e.blocks.iter().map(|b| b.search.len()).sum::<usize>();
                }
                Err(e) => failed.push(e.to_string()),
            }
        }
        assert!(failed.is_empty(), "{failed:#?}");
        // Minimal blocks: most bugs change one line and need little context.
        let mean = search_lines as f64 / bugs.len() as f64;
        assert!(mean < 3.0, "mean SEARCH lines {mean}");
    }

    #[test]
    fn gold_edit_adds_context_until_unique() {
        let clean = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x + 1\n";
        let buggy = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 2\n    return x + 1\n";
        let patch = crate::task::file_diff("m.py", buggy, clean);
        let task = task_with("t", "m.py", String::new(), patch, (6, 6));
        let e = gold_edit(&task, buggy).unwrap();
        assert_eq!(e.blocks.len(), 1);
        // `    x = 2` is unique in the buggy file: no context needed.
        assert_eq!(e.blocks[0].search, vec!["    x = 2"]);
        // A fix that restores a duplicated line needs context: removing the line `x = 1` of g.
        let buggy2 = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    x = 1\n    return x + 1\n";
        let patch2 = crate::task::file_diff("m.py", buggy2, clean);
        let task2 = task_with("t", "m.py", String::new(), patch2, (6, 6));
        let e2 = gold_edit(&task2, buggy2).unwrap();
        assert_eq!(apply_edit(buggy2, &e2).unwrap(), clean);
        assert!(e2.blocks[0].search.len() >= 2, "{}", e2.render());
    }

    #[test]
    fn enclosing_function_spans_the_def() {
        let text =
            "import x\n\nclass A:\n    def f(self):\n        y = 1\n\n        return y\n\nz = 2\n";
        assert_eq!(enclosing_function(Language::Python, text, 5), Some((4, 7)));
        assert_eq!(enclosing_function(Language::Python, text, 7), Some((4, 7)));
        assert_eq!(enclosing_function(Language::Python, text, 9), None);
    }

    #[test]
    fn prompt_shows_the_function_within_the_budget() {
        let mut body = String::from("import math\n\n\ndef f(a, b):\n");
        for i in 0..40 {
            body.push_str(&format!("    v{i} = a * {i}\n"));
        }
        body.push_str("    return a - b\n\n\ndef g():\n    return 1\n");
        let bug_line = 45;
        assert_eq!(body.lines().nth(bug_line - 1), Some("    return a - b"));
        let task = task_with(
            "t",
            "pkg/m.py",
            String::new(),
            String::new(),
            (bug_line, bug_line),
        );
        // A large budget: the whole function and 3 lines of context each side.
        let p = build_prompt(&task, &body, &PromptConfig::default()).unwrap();
        assert_eq!((p.first_line, p.last_line), (1, 48));
        assert!(!p.truncated && !p.over_budget);
        assert!(
            p.text.contains("`total` is wrong for two items."),
            "{}",
            p.text
        );
        assert!(p.text.contains("pkg/m.py"), "{}", p.text);
        assert!(p.text.contains("    return a - b\n"), "{}", p.text);
        assert!(
            p.text.contains(SEARCH) && p.text.contains(REPLACE),
            "{}",
            p.text
        );
        // A small budget: a window around the bug's line, within the budget.
        let cfg = PromptConfig {
            max_code_chars: 200,
            ..PromptConfig::default()
        };
        let p = build_prompt(&task, &body, &cfg).unwrap();
        assert!(p.truncated && !p.over_budget);
        assert!(p.code.len() <= 200, "{}", p.code.len());
        assert!(p.first_line <= bug_line && bug_line <= p.last_line);
        assert!(p.code.contains("    return a - b\n"));
        // A budget smaller than the bug's line still shows it.
        let tiny = PromptConfig {
            max_code_chars: 5,
            ..PromptConfig::default()
        };
        let p = build_prompt(&task, &body, &tiny).unwrap();
        assert!(p.over_budget);
        assert_eq!((p.first_line, p.last_line), (bug_line, bug_line));
        // A location outside the file is an error, not a panic.
        let far = task_with("t", "pkg/m.py", String::new(), String::new(), (999, 999));
        assert!(matches!(
            build_prompt(&far, &body, &tiny),
            Err(PromptError::Location { .. })
        ));
    }

    #[test]
    fn issue_text_is_cut_to_its_budget() {
        assert_eq!(cut("héllo wörld", 5), "héllo…");
        assert_eq!(cut("short", 50), "short");
    }
}
