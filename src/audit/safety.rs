//! Safety checks: in a task's start environment, as the agent's user, every way back to the
//! fix or the hidden tests is tried (`safety.py` does the work inside the environment):
//! the base has no parent and no other ref, reflog, stash or ORIG_HEAD exists; no clean blob
//! of a changed file and no blob of a hidden test is in the object database; `git checkout --
//! . && git stash && git reset --hard` changes nothing; no file anywhere (site-packages and
//! build caches included) holds the fixed code or a hidden test, and no bytecode or class
//! compiled from a changed file exists.

use super::{Invalid, Problem};
use crate::sandbox::Worker;
use crate::start_state;
use crate::task::Task;
use serde::Deserialize;
use std::time::Duration;

pub const SCRIPT: &str = include_str!("safety.py");

/// The most windows of one hidden file searched for.
const WINDOWS_PER_FILE: usize = 12;

/// The spec `safety.py` reads.
pub fn spec(task: &Task, root: &str, scratch: &str) -> serde_json::Value {
    let mut clean_blobs = start_state::old_blob_ids(&task.bug_patch);
    let mut hidden_windows: Vec<String> = Vec::new();
    for (_, section) in start_state::patch_sections(&task.test_patch) {
        // The blob a restored (or synthesized) file would have.
        clean_blobs.extend(
            section
                .lines()
                .filter_map(|l| l.strip_prefix("index "))
                .filter_map(|r| r.split("..").nth(1))
                .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
                .filter(|s| !s.is_empty()),
        );
        let added: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| &l[1..])
            .collect();
        let mut n = 0;
        for (i, l) in added.iter().enumerate() {
            let t = l.trim_start();
            let starts_test = t.starts_with("def test")
                || t.starts_with("async def test")
                || t.starts_with("@Test");
            if starts_test && n < WINDOWS_PER_FILE && i + 2 < added.len() {
                hidden_windows.push(added[i..i + 3].join("\n"));
                n += 1;
            }
        }
    }
    let changed: Vec<String> = start_state::patch_sections(&task.patch)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    serde_json::json!({
        "root": root,
        "base_commit": task.base_commit,
        "clean_blobs": clean_blobs,
        "gold_windows": gold_windows(&task.patch),
        "hidden_windows": hidden_windows,
        "changed": changed,
        "removed": task.removed_files(),
        "skip_roots": ["/proc", "/sys", "/dev", scratch],
    })
}

/// The fixed code of each hunk of the gold patch: its new side (context and added lines),
/// the text the clean file has there and the buggy file lacks.
pub fn gold_windows(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<(Vec<String>, bool)> = None;
    let flush = |cur: &mut Option<(Vec<String>, bool)>, out: &mut Vec<String>| {
        if let Some((lines, added)) = cur.take() {
            if added && !lines.is_empty() {
                out.push(lines.join("\n"));
            }
        }
    };
    for l in patch.lines() {
        if l.starts_with("@@") || l.starts_with("diff --git") {
            flush(&mut cur, &mut out);
            if l.starts_with("@@") {
                cur = Some((Vec::new(), false));
            }
            continue;
        }
        let Some((lines, added)) = cur.as_mut() else {
            continue;
        };
        if let Some(a) = l.strip_prefix('+') {
            lines.push(a.to_string());
            *added = true;
        } else if let Some(c) = l.strip_prefix(' ') {
            lines.push(c.to_string());
        }
    }
    flush(&mut cur, &mut out);
    out
}

#[derive(Deserialize)]
struct Found {
    reason: String,
    detail: String,
}

#[derive(Deserialize)]
struct Answer {
    problems: Vec<Found>,
}

/// Run the checks on a worker whose tree is the task's start state. Leaves the tree as it was
/// (the git commands it tries change nothing when the start state is sound); an environment
/// failure is an [`Invalid::Environment`] problem.
pub fn check(worker: &mut dyn Worker, task: &Task) -> Vec<Problem> {
    let root = worker.root().to_string();
    let scratch = worker.scratch().to_string();
    let spec = spec(task, &root, &scratch).to_string();
    let script = format!(
        "cat > {s}/safety.py <<'SWE_FORGE_EOF'\n{SCRIPT}\nSWE_FORGE_EOF\ncat > {s}/safety.json <<'SWE_FORGE_EOF'\n{spec}\nSWE_FORGE_EOF\n\
         PY=$(command -v python3 || command -v python); \"$PY\" {s}/safety.py {s}/safety.json; rc=$?; rm -f {s}/safety.py {s}/safety.json; exit $rc",
        s = crate::sandbox::shell_quote(&scratch)
    );
    let out = match worker.exec(&script, Duration::from_secs(600)) {
        Ok(o) => o,
        Err(e) => {
            return vec![Problem::new(
                Invalid::Environment,
                format!("safety checks: {e}"),
            )]
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Answer = match stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str(l).ok())
    {
        Some(a) => a,
        None => {
            return vec![Problem::new(
                Invalid::Environment,
                format!(
                    "safety checks wrote no answer (exit {:?}): {}",
                    out.exit_code,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )]
        }
    };
    answer
        .problems
        .into_iter()
        .map(|f| {
            let reason = match f.reason.as_str() {
                "base-not-start-state" | "base-has-parent" => Invalid::BaseHasParent,
                "extra-git-state" => Invalid::ExtraGitState,
                "clean-object-reachable" => Invalid::CleanObjectReachable,
                "git-restore-changes-tree" => Invalid::GitRestoreChangesTree,
                "gold-code-present" => Invalid::GoldCodePresent,
                "hidden-test-present" => Invalid::HiddenTestPresent,
                "clean-build-present" => Invalid::CleanBuildPresent,
                _ => Invalid::Environment,
            };
            Problem::new(reason, f.detail)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_windows_are_the_fixed_hunks() {
        let patch = "diff --git a/m.py b/m.py\nindex 1..2\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x - 1\n+    return x + 1\n \n";
        assert_eq!(
            gold_windows(patch),
            vec!["def f(x):\n    return x + 1\n".to_string()]
        );
    }
}
