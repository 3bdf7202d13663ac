//! The gold edit: the SEARCH/REPLACE blocks derived from a task's fix, for supervised
//! warm-start.

use super::diff::{apply_changes, file_changes};
use super::edit::{apply_edit, find_runs, Block, Edit, EditError, Lines};
use crate::task::Task;

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
