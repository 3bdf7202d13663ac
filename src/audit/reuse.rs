//! The audit's fixed-code runs, kept to judge a later task whose fixed check is the same
//! experiment: the same environment, tree and set of listed tests.

use crate::run::Run;
use crate::sandbox::Worker;
use crate::task::Task;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// The fixed-code runs of one audit, by what decides their outcome: the environment, the
/// runner's record fields, the worktree's tree id after the gold patch and `test_patch`, and
/// the listed tests. Tasks of one seed without a synthesized test share their fixed tree (the
/// clean commit's) and their listed tests (the stable suite), so the audit runs that check
/// once per seed instead of once per task, as the pipeline reuses the baseline's runs for it.
/// The buggy check differs per task and always runs.
#[derive(Default)]
pub struct FixedRuns {
    pub(super) runs: HashMap<String, (String, Run)>,
    /// Set by [`check_task_in`]: the fixed tree of the task it checked, and the task whose run
    /// it used.
    pub(super) last: Option<(String, Option<String>)>,
}

/// The id of the worktree's tree as it is now (every file but what `.gitignore` leaves out;
/// the index is put back), or `None` when git cannot tell.
pub(super) fn worktree_tree(worker: &mut dyn Worker) -> Option<String> {
    let out = worker
        .exec(
            "git add -A >/dev/null 2>&1 && t=$(git write-tree) && git reset -q >/dev/null 2>&1 && echo \"$t\"",
            Duration::from_secs(120),
        )
        .ok()?;
    let tree = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.exit_code == Some(0) && tree.len() >= 40 && tree.chars().all(|c| c.is_ascii_hexdigit()))
        .then_some(tree)
}

/// What decides a fixed-code run's outcome besides the code: the environment, the record's
/// toolchain and Python path, the tree, the grading command (its files in order, options and
/// configuration) and the set of tests read from it (their order in the list is left out:
/// the command decides the order they run in).
pub(super) fn fixed_run_key(env: &str, task: &Task, tree: &str, tests: &[String]) -> String {
    let e = &task.metadata.environment;
    let set: BTreeSet<&String> = tests.iter().collect();
    let tests: Vec<&str> = set.into_iter().map(String::as_str).collect();
    format!(
        "{env}\0{}\0{}\0{}\0{tree}\0{}",
        task.toolchain().map_or("none", |t| t.as_str()),
        task.grading().key(),
        e.python_path.join(":"),
        tests.join("\n")
    )
}
