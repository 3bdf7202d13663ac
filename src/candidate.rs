//! Candidates: one applied mutator each — enumeration over a tree (rayon), patches, dedupe, sampling.
//!
//! OWNER NOTE (skeleton): the types below are the contract the rest of the pipeline uses.
//! The enumeration and sampling are filled in by the mutation work.

use serde::{Deserialize, Serialize};

/// One applied mutator: a single edit to one source file that makes a plausible bug.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Stable short id: the first 16 hex digits of `hash`.
    pub id: String,
    /// The mutator's `id` (e.g. `py-compare-flip`).
    pub mutator: String,
    /// The mutator's category (e.g. `boundary`).
    pub category: String,
    /// Repository-relative path with `/` separators.
    pub file: String,
    /// Qualified name of the enclosing function (`Class.method`, `outer.inner`, `func`).
    pub function: String,
    /// 1-based first and last line of the enclosing function in the clean file.
    pub function_lines: (usize, usize),
    /// Byte range of the edit in the clean file (start inclusive, end exclusive).
    pub byte_range: (usize, usize),
    /// 1-based first and last line touched by the edit in the clean file.
    pub line_range: (usize, usize),
    /// Clean text of the edited range and its replacement.
    pub before: String,
    pub after: String,
    /// Unified diff clean → buggy, applicable with `git apply` at the repository root.
    pub bug_patch: String,
    /// blake3 hex of (file, buggy file content): equal hashes are the same mutant.
    pub hash: String,
    /// The mutator's description and issue hints, carried for issue texts.
    pub description: String,
    pub issue_hints: Vec<String>,
}
