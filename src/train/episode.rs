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

mod diff;
mod edit;
mod gold;
mod prompt;
#[cfg(test)]
pub(crate) mod tests;

pub use diff::{apply_changes, file_changes, patch_files, Change};
pub use edit::{apply_edit, apply_edit_to, parse_edit, Block, Edit, EditError};
pub use gold::gold_edit;
pub use prompt::{build_prompt, enclosing_function, Prompt, PromptConfig, PromptError};
