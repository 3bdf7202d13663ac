//! Candidates: one applied mutator each — enumeration over a tree (rayon), syntax checks,
//! patches, dedupe, sampling.
//!
//! Per file: parse once, find the functions (qualified names, bodies), the docstrings and the
//! script-only code, run every rule's query, keep edits inside function bodies, drop no-ops
//! and duplicates (the same buggy file from two rules or two matches), check each surviving
//! edit's syntax, and write the candidate with its `git apply`-able patch.
//!
//! The syntax check is described in `check.rs`.

mod check;
mod enumerate;
mod facts;
mod lines;
mod patch;
mod sample;
#[cfg(test)]
mod tests;

pub use enumerate::{enumerate, enumerate_source};
pub use sample::{sample, sample_preferring};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// blake3 hex of (file, blake3 of the clean file, the edit with the text it leaves
    /// unchanged trimmed off both ends): equal hashes are the same buggy file.
    pub hash: String,
    /// The mutator's description and issue hints, carried for issue texts.
    pub description: String,
    pub issue_hints: Vec<String>,
}

impl Candidate {
    /// The buggy text of the candidate's file, given its clean text.
    pub fn apply(&self, clean: &str) -> String {
        let (s, e) = self.byte_range;
        let mut out = String::with_capacity(clean.len() + self.after.len());
        out.push_str(&clean[..s]);
        out.push_str(&self.after);
        out.push_str(&clean[e..]);
        out
    }

    pub(super) fn order_key(&self) -> (&str, usize, usize, &str) {
        (
            &self.file,
            self.byte_range.0,
            self.byte_range.1,
            &self.mutator,
        )
    }
}

/// A file the enumeration could not use, and why (`not valid UTF-8`, `syntax errors in the
/// source`, `cannot read: ...`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub file: String,
    pub reason: String,
}

/// The result of enumerating a tree: candidates in (file, byte range, mutator) order, the
/// files skipped, and the number of files and lines enumerated (skipped files not counted).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Enumeration {
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<SkippedFile>,
    pub files: usize,
    pub lines: usize,
}

/// How many candidates to keep, and the seed that decides which.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub seed: u64,
    pub max_total: Option<usize>,
    pub max_per_function: Option<usize>,
    pub max_per_mutator: Option<usize>,
    /// Relative shares of mutator categories (`boundary` → 2.0, …). Empty: every candidate
    /// is equally likely. Otherwise categories are drawn in these proportions, whatever their
    /// number of candidates (a candidate's weight is its category's share divided by the
    /// category's candidates), until a category runs out; categories not named (or weighted
    /// 0) are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub category_mix: BTreeMap<String, f64>,
}
