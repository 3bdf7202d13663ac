//! Tasks: the SWE-bench-compatible record of an accepted candidate (tasks.jsonl), its gold
//! patch, and the evidence that verified it.

use crate::candidate::Candidate;
use crate::lang::Language;
use crate::run::Run;
use serde::{Deserialize, Serialize};
use similar::TextDiff;

/// One line of tasks.jsonl. Field names and meanings follow SWE-bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub instance_id: String,
    pub repo: String,
    pub base_commit: String,
    /// The gold fix: buggy → clean.
    pub patch: String,
    /// Tests to add before grading (synthesized tests live here; empty when existing tests
    /// catch the bug).
    pub test_patch: String,
    pub problem_statement: String,
    pub hints_text: String,
    pub created_at: String,
    pub version: String,
    pub environment_setup_commit: String,
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
    /// clean → buggy: applied to `base_commit` it gives the state an agent starts from.
    pub bug_patch: String,
    /// The image the task runs in (`None` for tasks made with the local backend).
    pub image_name: Option<String>,
    pub language: Language,
    pub metadata: TaskMetadata,
}

/// swe-forge's own fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    pub mutators: Vec<String>,
    pub category: String,
    pub candidate_id: String,
    pub location: Location,
    pub difficulty: Difficulty,
    pub verification: Evidence,
    /// How to run the tests: the command, the source of the repository, the install command.
    pub environment: EnvironmentInfo,
    pub tool_version: String,
    /// The issue template style (`report`, `regression`, `traceback`).
    #[serde(default)]
    pub issue_style: String,
    /// How much the problem statement says: `vague`, `normal` or `detailed` (see
    /// `issue::DETAILS`); empty in records written before it existed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub issue_detail: String,
    /// Whether a language model rewrote the problem statement (`--issue-llm`), or why its
    /// rewrite was not used; `{"source": "template"}` when none was asked for.
    #[serde(default)]
    pub issue_rewrite: crate::issue_llm::IssueRewrite,
    /// Where the start state (`base_commit`) comes from: the clean commit `bug_patch` applies
    /// to, the hidden-tests mode and the files it removed. Absent in records written before
    /// start states (their `base_commit` is the clean commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_state: Option<crate::start_state::StartStateInfo>,
    /// Test ids left out of FAIL_TO_PASS / PASS_TO_PASS: those a SWE-bench log parser cannot
    /// read back (see `task::harness_readable`), and those whose outcome depends on which
    /// other tests run.
    #[serde(default)]
    pub dropped_test_ids: DroppedTestIds,
    /// The grading command: what verification ran and every grader runs
    /// ([`crate::grading`]). Absent in records made before it; [`Task::grading`] then
    /// derives one from the listed tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grading: Option<crate::grading::Grading>,
}

/// How many test ids a task left out of FAIL_TO_PASS and PASS_TO_PASS, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedTestIds {
    /// FAIL_TO_PASS ids standard harnesses cannot read back.
    pub fail_to_pass: usize,
    /// PASS_TO_PASS ids standard harnesses cannot read back.
    pub pass_to_pass: usize,
    /// Tests stable in the whole suite whose outcome under the grading command differs
    /// (they depend on which other tests run): graded by neither list.
    #[serde(default)]
    pub order_dependent: usize,
}

impl Task {
    /// The tests a check runs: FAIL_TO_PASS, then PASS_TO_PASS, without repeats.
    pub fn listed_tests(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        self.fail_to_pass
            .iter()
            .chain(&self.pass_to_pass)
            .filter(|t| seen.insert(t.as_str()))
            .cloned()
            .collect()
    }

    /// The task's grading command: the recorded one, else (records made before grading
    /// commands) the test command over the listed tests' files, sorted, with the toolchain's
    /// options and no configuration named.
    pub fn grading(&self) -> crate::grading::Grading {
        if let Some(g) = &self.metadata.grading {
            return g.clone();
        }
        let toolchain = self.toolchain().map(|t| t.toolchain());
        let mut files: Vec<String> = self
            .listed_tests()
            .iter()
            .filter_map(|id| match toolchain {
                Some(tc) => tc.test_file(id, &[]),
                None => id.split("::").next().map(str::to_string),
            })
            .collect();
        for f in crate::leak::patch_files(&self.test_patch) {
            files.push(f);
        }
        files.sort();
        files.dedup();
        let command = &self.metadata.environment.test_command;
        match toolchain {
            Some(tc) => {
                let mut g = tc.grading(std::path::Path::new("/nonexistent"), command, files);
                g.config = None;
                g.protected = tc.protected();
                g
            }
            None => crate::grading::Grading::new(command, Vec::new(), files, None),
        }
    }

    /// The toolchain that builds and tests the task's repository: the one the record names,
    /// else its language's only one when records did not name theirs; `None` for a record of
    /// a later language that names none (not one this tool writes).
    pub fn toolchain(&self) -> Option<crate::toolchain::ToolchainId> {
        self.metadata
            .environment
            .toolchain
            .or_else(|| crate::toolchain::ToolchainId::default_for(self.language))
    }

    /// The seed's name (ids, cache entries).
    pub fn seed_name(&self) -> &str {
        if self.metadata.environment.seed.is_empty() {
            &self.repo
        } else {
            &self.metadata.environment.seed
        }
    }

    /// The commit `bug_patch` applies to: the seed's clean commit.
    pub fn clean_commit(&self) -> &str {
        self.metadata
            .start_state
            .as_ref()
            .map(|s| s.clean_commit.as_str())
            .unwrap_or(&self.base_commit)
    }

    /// The test files the start state removed (restored by `test_patch`).
    pub fn removed_files(&self) -> &[String] {
        self.metadata
            .start_state
            .as_ref()
            .map(|s| s.removed_files.as_slice())
            .unwrap_or(&[])
    }

    /// The patch that takes the clean commit's tree to the start state's: `bug_patch`, then
    /// the removal of the hidden test files.
    pub fn start_patch(&self) -> String {
        let mut p = self.bug_patch.clone();
        p.push_str(&crate::start_state::deletion_patch(
            &self.test_patch,
            self.removed_files(),
        ));
        p
    }
}

/// Whether SWE-bench's pytest log parsers read a test id back as it is written: they split a
/// result line on whitespace, so an id with whitespace in it (a parametrized id such as
/// `test_x[a b]`) comes back cut. Ids with a control character are refused too.
pub fn harness_readable(id: &str) -> bool {
    !id.is_empty() && !id.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub function: String,
    pub lines: (usize, usize),
}

/// Features the curriculum uses to place a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difficulty {
    pub category: String,
    /// Fewer killing tests = harder.
    pub killing_tests: usize,
    /// Lines of the enclosing function.
    pub function_lines: usize,
    /// Lines the gold fix changes (added + removed).
    pub fix_lines: usize,
    pub files_in_fix: usize,
    /// Whether the tests are synthesized (false: the repository's own tests catch it).
    pub synthesized_tests: bool,
    /// Whether a failing test calls the mutated function directly (synthesized: the test calls
    /// it rather than a public caller; existing: a failing test's file calls it by name).
    #[serde(default)]
    pub direct_call: bool,
    /// Whether the issue text names the mutated function.
    #[serde(default)]
    pub issue_names_function: bool,
    /// Whether the issue text names the bug's file (a traceback passing through it does).
    #[serde(default)]
    pub issue_names_file: bool,
    /// A first rough score in [0, 1]; the curriculum calibrates it against pass rates.
    pub score: f64,
}

/// Verification evidence: every run with per-test results, durations and log digests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub repeats: usize,
    pub sandbox: String,
    /// Check 1 (clean code): the baseline runs, by label and log digest.
    pub clean_runs: Vec<RunRef>,
    /// Screening, check 2 (`buggy#i`) and check 3 (`fixed#i`) runs in full.
    pub runs: Vec<Run>,
    /// Checks whose tree had already been run (check 3 when buggy + gold fix is the clean
    /// tree): the tree id and the labels of the runs that are their evidence
    /// (`clean_runs`). Such a check has no `fixed#i` runs of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reused: Vec<crate::verify::ReusedCheck>,
    /// Tests that failed with the bug but drew on randomness nothing in them seeded, with
    /// what they drew on: not graded (neither FAIL_TO_PASS nor PASS_TO_PASS), since they may
    /// pass with the bug elsewhere.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub nondeterministic: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub label: String,
    pub log_digest: String,
    pub passed: usize,
    pub duration_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentInfo {
    /// The seed's name in its manifest (ids, caches); records written before it have
    /// `repo` for it.
    #[serde(default)]
    pub seed: String,
    /// The seed's source as the manifest gave it (relative paths are relative to the
    /// manifest; the embedded demo seeds are found by name).
    pub source: String,
    pub install: Option<String>,
    pub test_command: String,
    pub python_path: Vec<String>,
    /// The language's test framework and build tool, which audit and training rebuild the
    /// runner from; records written before it name none and get their language's only one
    /// ([`Task::toolchain`]).
    #[serde(default)]
    pub toolchain: Option<crate::toolchain::ToolchainId>,
    /// How the environment resolved the project's dependencies, where the toolchain says
    /// ([`crate::toolchain::Toolchain::environment_notes`]; Java: `maven_overlay`, the
    /// versions the project asks for mapped to Debian's). Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<serde_json::Value>,
}

/// `<seed>__<mutator>__<first 8 of the candidate id>`.
pub fn instance_id(seed: &str, cand: &Candidate) -> String {
    format!(
        "{seed}__{}__{}",
        cand.mutator,
        &cand.id[..cand.id.len().min(8)]
    )
}

/// The buggy text of the candidate's file.
pub fn buggy_text(clean: &str, cand: &Candidate) -> String {
    let (s, e) = cand.byte_range;
    let mut out = String::with_capacity(clean.len() + cand.after.len());
    out.push_str(&clean[..s]);
    out.push_str(&cand.after);
    out.push_str(&clean[e..]);
    out
}

/// A `git apply`-able unified diff of one file from `old` to `new`.
pub fn file_diff(path: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    format!("diff --git a/{path} b/{path}\n{body}")
}

/// [`file_diff`] with an `index OLD..NEW` line naming both sides' blob ids, so that a reader
/// (and the audit) can tell which objects the patch comes from and goes to.
pub fn file_diff_indexed(path: &str, old: &str, new: &str) -> String {
    let d = file_diff(path, old, new);
    let id = |t: &str| {
        git2::Oid::hash_object(git2::ObjectType::Blob, t.as_bytes())
            .map(|o| o.to_string()[..12].to_string())
            .unwrap_or_default()
    };
    match d.split_once('\n') {
        Some((first, rest)) => format!("{first}\nindex {}..{}\n{rest}", id(old), id(new)),
        None => d,
    }
}

/// A `diff --git` that creates `path` with `text`.
pub fn file_diff_new(path: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for l in &lines {
        out.push('+');
        out.push_str(l);
        out.push('\n');
    }
    if !text.ends_with('\n') {
        out.push_str("\\ No newline at end of file\n");
    }
    out
}

/// The gold fix for a candidate: buggy → clean.
pub fn gold_patch(clean: &str, cand: &Candidate) -> String {
    file_diff(&cand.file, &buggy_text(clean, cand), clean)
}

/// Lines a patch adds or removes.
pub fn changed_lines(patch: &str) -> usize {
    patch
        .lines()
        .filter(|l| {
            (l.starts_with('+') && !l.starts_with("+++"))
                || (l.starts_with('-') && !l.starts_with("---"))
        })
        .count()
}

/// UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let secs = unix_seconds % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Now, as [`utc_timestamp`].
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_timestamp(secs)
}

/// A first, uncalibrated difficulty score in [0, 1]: fewer killing tests, a larger enclosing
/// function and subtler categories score higher. The curriculum recalibrates it from pass rates.
pub fn difficulty_score(category: &str, killing_tests: usize, function_lines: usize) -> f64 {
    let subtlety = match category {
        "missing-guard" | "exception-handling" => 0.7,
        "boundary" | "removed-branch" => 0.6,
        "api-misuse" | "removed-statement" => 0.5,
        "logic" => 0.4,
        _ => 0.3,
    };
    let few_tests = 1.0 - (killing_tests.min(10) as f64 / 10.0);
    let size = function_lines.min(60) as f64 / 60.0;
    ((0.4 * few_tests + 0.3 * size + 0.3 * subtlety) * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn diff_has_git_header_and_counts() {
        let d = file_diff("pkg/a.py", "a\nb\nc\n", "a\nB\nc\n");
        assert!(d.starts_with(
            "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,3 +1,3 @@\n"
        ));
        assert_eq!(changed_lines(&d), 2);
    }

    #[test]
    fn gold_patch_round_trips_with_git_apply() {
        let dir = tempfile::tempdir().unwrap();
        let clean = "def f(x):\n    return x + 1\n";
        std::fs::write(dir.path().join("m.py"), clean).unwrap();
        let start = clean.find('+').unwrap();
        let cand = Candidate {
            id: "0123456789abcdef".into(),
            mutator: "py-arith".into(),
            category: "operator".into(),
            file: "m.py".into(),
            function: "f".into(),
            function_lines: (1, 2),
            byte_range: (start, start + 1),
            line_range: (2, 2),
            before: "+".into(),
            after: "-".into(),
            bug_patch: String::new(),
            hash: String::new(),
            description: String::new(),
            issue_hints: vec![],
        };
        let buggy = buggy_text(clean, &cand);
        assert_eq!(buggy, "def f(x):\n    return x - 1\n");
        std::fs::write(dir.path().join("m.py"), &buggy).unwrap();
        let patch = gold_patch(clean, &cand);
        std::fs::write(dir.path().join("fix.diff"), &patch).unwrap();
        let st = std::process::Command::new("git")
            .args(["apply", "fix.diff"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "{patch}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("m.py")).unwrap(),
            clean
        );
    }
}
