//! Edits: the SEARCH/REPLACE blocks a policy answers with, parsed, rendered and applied.

use serde::Serialize;
use std::fmt::Write as _;

pub(super) const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
pub(super) const REPLACE: &str = ">>>>>>> REPLACE";
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
pub(super) struct Lines {
    pub(super) lines: Vec<String>,
    final_newline: bool,
}

impl Lines {
    pub(super) fn of(text: &str) -> Lines {
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

    pub(super) fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        if self.final_newline && !self.lines.is_empty() {
            s.push('\n');
        }
        s
    }
}

/// Where `needle` occurs as a run of whole lines of `hay`.
pub(super) fn find_runs(hay: &[String], needle: &[String]) -> Vec<usize> {
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
