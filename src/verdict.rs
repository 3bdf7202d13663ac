//! Verdicts: the outcome of a candidate — accepted, or rejected with a reason and evidence.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a candidate did not become a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// No stable test executes the mutated lines (nothing was run).
    NotCovered,
    /// The covering tests all pass with the bug.
    NotKilled,
    /// A run on the buggy code hit the hard timeout.
    Timeout,
    /// The test process died by a signal or pytest itself failed (internal/usage error).
    Crash,
    /// The bug exhausted memory or processes.
    ResourceLimit,
    /// Repeats of the same check disagreed.
    Flaky,
    /// The bug patch or the gold patch did not apply.
    PatchFailed,
    /// The gold fix did not make every FAIL_TO_PASS and PASS_TO_PASS test pass again.
    FixFailed,
    /// The buggy code did not compile (compiled languages).
    CompileError,
    /// No test, existing or synthesized, tells the bug apart.
    LikelyEquivalent,
    /// A synthesized test told the versions apart when replayed but did not verify as a test
    /// (it fails on the clean code, or passes with the bug).
    SynthesisFailed,
    /// The issue text would reveal the fix.
    IssueLeak,
    /// The sandbox failed (not the candidate's fault).
    SandboxError,
    /// Every FAIL_TO_PASS id is one SWE-bench's log parsers cannot read back (whitespace in a
    /// parametrized id): no harness could grade the task.
    UnreadableTestIds,
    /// Every FAIL_TO_PASS test is a doctest in the code the agent edits: editing the docstring
    /// would pass it without a fix, so it cannot grade the task.
    DoctestOnly,
    /// Every test that fails with the bug drew on randomness nothing in it seeded (the
    /// global `random` generator, a generator seeded from the OS): it may pass with the bug
    /// elsewhere, so it cannot grade the task.
    Nondeterministic,
    /// The mutated code can never run: no test or import ran it, and no function object holds
    /// it once the package is imported (a definition an import replaces). An equivalent
    /// mutant by construction.
    Unreachable,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotCovered => "not-covered",
            Reason::NotKilled => "not-killed",
            Reason::Timeout => "timeout",
            Reason::Crash => "crash",
            Reason::ResourceLimit => "resource-limit",
            Reason::Flaky => "flaky",
            Reason::PatchFailed => "patch-failed",
            Reason::FixFailed => "fix-failed",
            Reason::CompileError => "compile-error",
            Reason::LikelyEquivalent => "likely-equivalent",
            Reason::SynthesisFailed => "synthesis-failed",
            Reason::IssueLeak => "issue-leak",
            Reason::SandboxError => "sandbox-error",
            Reason::UnreadableTestIds => "unreadable-test-ids",
            Reason::DoctestOnly => "doctest-only",
            Reason::Nondeterministic => "nondeterministic",
            Reason::Unreachable => "unreachable",
        }
    }

    /// A survivor: the existing tests do not tell this bug apart (a candidate for synthesis).
    pub fn is_survivor(self) -> bool {
        matches!(self, Reason::NotCovered | Reason::NotKilled)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Verdict {
    Accepted,
    Rejected { reason: Reason, detail: String },
}

impl Verdict {
    pub fn rejected(reason: Reason, detail: impl Into<String>) -> Verdict {
        Verdict::Rejected {
            reason,
            detail: detail.into(),
        }
    }

    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted)
    }

    pub fn reason(&self) -> Option<Reason> {
        match self {
            Verdict::Accepted => None,
            Verdict::Rejected { reason, .. } => Some(*reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_tagged_kebab_case() {
        let v = Verdict::rejected(Reason::NotKilled, "3 covering tests pass");
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(
            json,
            r#"{"status":"rejected","reason":"not-killed","detail":"3 covering tests pass"}"#
        );
        assert_eq!(
            serde_json::to_string(&Verdict::Accepted).unwrap(),
            r#"{"status":"accepted"}"#
        );
        for r in [
            Reason::NotCovered,
            Reason::ResourceLimit,
            Reason::SandboxError,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
    }
}
