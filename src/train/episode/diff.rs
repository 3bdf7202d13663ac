//! Diff changes: the changes a `git diff` makes to one file, read and applied line by line.

use super::edit::Lines;
use diffy::patch_set::{FileOperation, ParseOptions, PatchSet};
use diffy::Line;

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
