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
    /// Whether a language model rewrote the problem statement (`--issue-llm`), or why its
    /// rewrite was not used; `{"source": "template"}` when none was asked for.
    #[serde(default)]
    pub issue_rewrite: crate::issue_llm::IssueRewrite,
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
    pub source: String,
    pub install: Option<String>,
    pub test_command: String,
    pub python_path: Vec<String>,
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

/// The gold fix for a candidate: buggy → clean.
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
