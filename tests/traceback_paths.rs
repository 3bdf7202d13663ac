//! Paths as a user would paste them (`tests/fixtures/traceback_paths`): a mutant makes
//! `cfgtool.lookup` raise an error naming its module by absolute path, in the worker's
//! worktree. The records and the issue text carry it repository-relative, and naming the bug's
//! file that way is the difficulty feature `issue_names_file`, not an issue leak.

mod common;
use common::*;

#[test]
fn worker_paths_become_repository_relative_and_naming_the_file_is_a_feature() {
    let (out, dir) = run_fixture("traceback_paths", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    assert!(
        cands.iter().all(|c| c["reason"] != "issue-leak"),
        "{cands:?}"
    );
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let negated = tasks
        .iter()
        .find(|t| {
            t["instance_id"]
                .as_str()
                .unwrap()
                .contains("py-negate-condition")
        })
        .expect("the negated guard is a task");
    let statement = negated["problem_statement"].as_str().unwrap();
    assert!(
        statement.contains("LookupError: no setting 'colour' in cfgtool/__init__.py"),
        "{statement}"
    );
    assert_eq!(negated["metadata"]["difficulty"]["issue_names_file"], true);
    let returns_none = tasks
        .iter()
        .find(|t| {
            t["instance_id"]
                .as_str()
                .unwrap()
                .contains("py-return-none")
        })
        .expect("the None return is a task");
    assert_eq!(
        returns_none["metadata"]["difficulty"]["issue_names_file"],
        false
    );
    // No path of this machine's worktrees in any record.
    for file in ["out/tasks.jsonl", "out/candidates.jsonl"] {
        let body = std::fs::read_to_string(dir.path().join(file)).unwrap();
        for (i, line) in body.lines().enumerate() {
            assert!(
                !line.contains("/worker-") && !line.contains("swe-forge-wt"),
                "{file}:{}: {line}",
                i + 1
            );
        }
    }
}
