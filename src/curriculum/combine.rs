//! Multi-bug combinations: which single-bug tasks of one file combine, and the combined
//! task's patches, tests and record.

use crate::task::{Difficulty, Evidence, Location, Task, TaskMetadata};
use crate::train::episode::{apply_changes, file_changes, patch_files, Change};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A proposed combination: indices into the task list, in instance-id order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Combination {
    pub members: Vec<usize>,
}

/// Why tasks cannot be combined.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CombineError {
    #[error("a combination needs 2 or 3 tasks, not {0}")]
    Size(usize),
    #[error("{0} is not in the same repository, commit and file as the first task")]
    NotSameFile(String),
    #[error("{instance_id}: {detail}")]
    Patch { instance_id: String, detail: String },
    #[error("the bugs overlap: {0}")]
    Overlap(String),
    #[error("the test patches change {0} differently")]
    TestPatchConflict(String),
    #[error("rendering the combined issue: {0}")]
    Issue(String),
}

/// The lines a single-bug task's bug patch changes in its file, as `[lo, hi)` line intervals
/// (an insertion counts as touching the line it goes before), or `None` when the task is not
/// a candidate for combining (several bugs already, or a bug patch beyond its file).
fn touched(task: &Task) -> Option<Vec<(usize, usize)>> {
    let file = &task.metadata.location.file;
    if task.metadata.mutators.len() != 1 || patch_files(&task.bug_patch).ok()? != [file.clone()] {
        return None;
    }
    let changes = file_changes(&task.bug_patch, file).ok()?;
    (!changes.is_empty()).then(|| {
        changes
            .iter()
            .map(|c| (c.old_start, c.old_end().max(c.old_start + 1)))
            .collect()
    })
}

/// Whether two tasks' bugs are at least one untouched line apart and their test patches can
/// be merged.
fn compatible(a: (&Task, &[(usize, usize)]), b: (&Task, &[(usize, usize)])) -> bool {
    let apart =
        a.1.iter()
            .all(|&(alo, ahi)| b.1.iter().all(|&(blo, bhi)| ahi < blo || bhi < alo));
    apart && merge_test_patches(&[a.0, b.0]).is_ok()
}

/// Propose multi-bug combinations: accepted single-bug tasks grouped by (repo, base_commit,
/// file), combined by 2 and (when `max_depth` is 3) by 3, whose bug patches touch lines at
/// least one line apart and whose test patches merge. Per group at most `max_per_group`,
/// chosen deterministically by a hash of the members' ids (so the cap does not always keep
/// the first tasks). Each proposal still has to be verified like any task.
pub fn plan_combinations(
    tasks: &[Task],
    max_depth: usize,
    max_per_group: usize,
) -> Vec<Combination> {
    // (repo, base_commit, file) → (task index, lines its bug touches).
    type Group = Vec<(usize, Vec<(usize, usize)>)>;
    let mut groups: BTreeMap<(&str, &str, &str), Group> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if let Some(lines) = touched(t) {
            groups
                .entry((&t.repo, t.clean_commit(), &t.metadata.location.file))
                .or_default()
                .push((i, lines));
        }
    }
    let mut out = Vec::new();
    for members in groups.values_mut() {
        members.sort_by(|a, b| tasks[a.0].instance_id.cmp(&tasks[b.0].instance_id));
        let m = members.len();
        let ok = |x: usize, y: usize| {
            compatible(
                (&tasks[members[x].0], &members[x].1),
                (&tasks[members[y].0], &members[y].1),
            )
        };
        // pair[x][y] (x < y): members x and y combine.
        let pair: Vec<Vec<bool>> = (0..m)
            .map(|x| (0..m).map(|y| x < y && ok(x, y)).collect())
            .collect();
        let mut found: Vec<Vec<usize>> = Vec::new();
        for (x, row) in pair.iter().enumerate() {
            for y in (x + 1..m).filter(|&y| row[y]) {
                found.push(vec![x, y]);
                if max_depth < 3 {
                    continue;
                }
                for z in (y + 1..m).filter(|&z| row[z] && pair[y][z]) {
                    let three = [
                        &tasks[members[x].0],
                        &tasks[members[y].0],
                        &tasks[members[z].0],
                    ];
                    if merge_test_patches(&three).is_ok() {
                        found.push(vec![x, y, z]);
                    }
                }
            }
        }
        let mut ranked: Vec<([u8; 32], Vec<usize>)> = found
            .into_iter()
            .map(|c| {
                let ids: Vec<usize> = c.iter().map(|&k| members[k].0).collect();
                let mut h = blake3::Hasher::new();
                for &i in &ids {
                    h.update(tasks[i].instance_id.as_bytes());
                    h.update(b"\0");
                }
                (*h.finalize().as_bytes(), ids)
            })
            .collect();
        ranked.sort();
        out.extend(
            ranked
                .into_iter()
                .take(max_per_group)
                .map(|(_, members)| Combination { members }),
        );
    }
    out
}

/// The patches and tests of a combined task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CombinedPatches {
    /// clean → buggy with every member's bug.
    pub bug_patch: String,
    /// The gold fix: buggy → clean.
    pub patch: String,
    /// The members' test patches, each file once.
    pub test_patch: String,
    /// The buggy text of the file.
    pub buggy: String,
    /// The members' FAIL_TO_PASS tests, in order, without repeats.
    pub fail_to_pass: Vec<String>,
    /// The members' PASS_TO_PASS tests minus every FAIL_TO_PASS test.
    pub pass_to_pass: Vec<String>,
}

/// The `diff --git` sections of a patch, by file (the `b/` path).
fn sections(patch: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .trim_end()
                .rsplit_once(" b/")
                .map_or(rest.trim_end(), |(_, b)| b)
                .to_string();
            out.push((path, String::new()));
        }
        if let Some(last) = out.last_mut() {
            last.1.push_str(line);
        }
    }
    out
}

/// The members' test patches merged: each file's section once; two different sections for
/// one file are a conflict.
fn merge_test_patches(members: &[&Task]) -> Result<String, CombineError> {
    let mut by_file: BTreeMap<String, String> = BTreeMap::new();
    let mut out = String::new();
    for t in members {
        for (file, text) in sections(&t.test_patch) {
            match by_file.get(&file) {
                Some(prev) if *prev == text => {}
                Some(_) => return Err(CombineError::TestPatchConflict(file)),
                None => {
                    out.push_str(&text);
                    by_file.insert(file, text);
                }
            }
        }
    }
    Ok(out)
}

/// Combine the bug patches, gold patches, test patches and tests of 2–3 tasks of one file.
/// `clean` is the file's text at `base_commit`.
pub fn combine_patches(members: &[&Task], clean: &str) -> Result<CombinedPatches, CombineError> {
    if !(2..=3).contains(&members.len()) {
        return Err(CombineError::Size(members.len()));
    }
    let first = members[0];
    let file = &first.metadata.location.file;
    let mut changes: Vec<Change> = Vec::new();
    for t in members {
        if t.repo != first.repo
            || t.clean_commit() != first.clean_commit()
            || &t.metadata.location.file != file
        {
            return Err(CombineError::NotSameFile(t.instance_id.clone()));
        }
        let patch_err = |detail: String| CombineError::Patch {
            instance_id: t.instance_id.clone(),
            detail,
        };
        if patch_files(&t.bug_patch).map_err(patch_err)? != [file.clone()] {
            return Err(patch_err(format!(
                "the bug patch changes files other than {file}"
            )));
        }
        changes.extend(file_changes(&t.bug_patch, file).map_err(patch_err)?);
    }
    let buggy = apply_changes(clean, &changes).map_err(CombineError::Overlap)?;
    let mut fail_to_pass: Vec<String> = Vec::new();
    for t in members.iter().flat_map(|m| &m.fail_to_pass) {
        if !fail_to_pass.contains(t) {
            fail_to_pass.push(t.clone());
        }
    }
    let mut pass_to_pass: Vec<String> = Vec::new();
    for t in members.iter().flat_map(|m| &m.pass_to_pass) {
        if !fail_to_pass.contains(t) && !pass_to_pass.contains(t) {
            pass_to_pass.push(t.clone());
        }
    }
    Ok(CombinedPatches {
        bug_patch: crate::task::file_diff(file, clean, &buggy),
        patch: crate::task::file_diff(file, &buggy, clean),
        test_patch: merge_test_patches(members)?,
        buggy,
        fail_to_pass,
        pass_to_pass,
    })
}

/// A combined task record (unverified: `metadata.verification` is empty until it is verified,
/// e.g. with [`verify_combined`]). The id is `<repo>__multi<depth>__<hash of the member ids>`;
/// the issue text lists the members' issues (`templates/train/multi_issue.md.j2`).
pub fn combine_task(members: &[&Task], clean: &str) -> Result<Task, CombineError> {
    let c = combine_patches(members, clean)?;
    let first = members[0];
    let mut h = blake3::Hasher::new();
    for t in members {
        h.update(t.instance_id.as_bytes());
        h.update(b"\0");
    }
    let hash = h.finalize().to_hex();
    let depth = members.len();
    let issues: Vec<&str> = members.iter().map(|t| t.problem_statement.trim()).collect();
    let source = crate::assets::template("train/multi_issue.md.j2")
        .ok_or_else(|| CombineError::Issue("the template is missing from the build".into()))?;
    let mut env = minijinja::Environment::new();
    env.add_template("multi", source)
        .map_err(|e| CombineError::Issue(e.to_string()))?;
    let problem_statement = env
        .get_template("multi")
        .and_then(|t| t.render(minijinja::context! { issues => issues }))
        .map_err(|e| CombineError::Issue(e.to_string()))?;
    let uniq = |items: Vec<String>| -> Vec<String> {
        let mut seen = BTreeSet::new();
        items
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .collect()
    };
    let functions = uniq(
        members
            .iter()
            .map(|t| t.metadata.location.function.clone())
            .collect(),
    );
    let d = |f: fn(&Difficulty) -> bool| members.iter().any(|t| f(&t.metadata.difficulty));
    let function_lines = members
        .iter()
        .map(|t| t.metadata.difficulty.function_lines)
        .max()
        .unwrap_or(0);
    let score = members
        .iter()
        .map(|t| t.metadata.difficulty.score)
        .fold(0.0, f64::max);
    let mut task = first.clone();
    task.instance_id = format!("{}__multi{depth}__{}", first.seed_name(), &hash[..8]);
    // No start state of its own is made for a combination (training only): it is entered
    // from the clean commit with the start patch, in the repository image.
    let start_state = first.metadata.start_state.clone().map(|mut s| {
        let mut removed: Vec<String> = Vec::new();
        for f in members.iter().flat_map(|m| m.removed_files()) {
            if !removed.contains(f) {
                removed.push(f.clone());
            }
        }
        s.removed_files = removed;
        s
    });
    if let Some(s) = &start_state {
        task.base_commit = s.clean_commit.clone();
        task.environment_setup_commit = s.clean_commit.clone();
        task.image_name = s.repo_image.clone();
    }
    task.patch = c.patch.clone();
    task.bug_patch = c.bug_patch;
    task.test_patch = c.test_patch;
    task.problem_statement = problem_statement;
    task.hints_text = String::new();
    task.created_at = crate::task::now_utc();
    task.fail_to_pass = c.fail_to_pass;
    task.pass_to_pass = c.pass_to_pass;
    task.metadata = TaskMetadata {
        mutators: members
            .iter()
            .flat_map(|t| t.metadata.mutators.clone())
            .collect(),
        category: format!("multi-{depth}"),
        candidate_id: members
            .iter()
            .map(|t| t.metadata.candidate_id.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        location: Location {
            file: first.metadata.location.file.clone(),
            function: functions.join(", "),
            lines: (
                members
                    .iter()
                    .map(|t| t.metadata.location.lines.0)
                    .min()
                    .unwrap_or(1),
                members
                    .iter()
                    .map(|t| t.metadata.location.lines.1)
                    .max()
                    .unwrap_or(1),
            ),
        },
        difficulty: Difficulty {
            category: format!("multi-{depth}"),
            killing_tests: task.fail_to_pass.len(),
            function_lines,
            fix_lines: crate::task::changed_lines(&c.patch),
            files_in_fix: 1,
            synthesized_tests: d(|x| x.synthesized_tests),
            direct_call: members.iter().all(|t| t.metadata.difficulty.direct_call),
            issue_names_function: d(|x| x.issue_names_function),
            issue_names_file: d(|x| x.issue_names_file),
            score,
        },
        verification: Evidence {
            repeats: 0,
            sandbox: String::new(),
            clean_runs: Vec::new(),
            runs: Vec::new(),
            reused: Vec::new(),
            nondeterministic: Default::default(),
        },
        environment: first.metadata.environment.clone(),
        tool_version: crate::VERSION.to_string(),
        issue_style: "multi".to_string(),
        issue_detail: String::new(),
        issue_rewrite: Default::default(),
        start_state,
        dropped_test_ids: Default::default(),
        grading: combined_grading(&members),
    };
    Ok(task)
}

/// The grading command of a combination: the members' files, the first member's order first
/// (each member's own order kept), with the first member's options and configuration; `None`
/// when a member has none recorded (the record then derives one).
fn combined_grading(members: &[&Task]) -> Option<crate::grading::Grading> {
    let first = members.first()?.metadata.grading.clone()?;
    let mut files: Vec<String> = Vec::new();
    for m in members {
        for f in &m.metadata.grading.as_ref()?.files {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
    }
    let mut g =
        crate::grading::Grading::new(&first.base_command, first.options, files, first.config);
    g.editable = first.editable;
    g.protected = first.protected;
    Some(g)
}

/// Verify a combined task in the sandbox from its record, as `audit` does (every FAIL_TO_PASS
/// test fails with the bugs, every PASS_TO_PASS test passes; with the gold fix all pass),
/// three times: true when every repeat finds no problem.
pub fn verify_combined(
    env: &mut crate::train::reward::RewardEnv,
    task: &Task,
) -> Result<bool, crate::train::reward::RewardError> {
    Ok(env.verify(task, 3)?.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::{enumerate_source, Candidate};
    use crate::curriculum::Level;
    use crate::lang::Language;
    use crate::mutator::load_embedded;
    use crate::train::episode::tests::task_with;

    /// Single-bug tasks from real candidates of one demo seed file: (tasks, clean text).
    fn demo_file_tasks(name: &str) -> (Vec<Task>, String) {
        let rules = load_embedded(Language::Python).unwrap();
        let rel = format!("pyshelf/{name}");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
        let clean = std::fs::read_to_string(root.join(&rel)).unwrap();
        let cands: Vec<Candidate> =
            enumerate_source(&rel, clean.as_bytes(), Language::Python, &rules).unwrap();
        let tasks = cands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut t = task_with(
                    &format!("pyshelf__{}__{i:03}", c.mutator),
                    &rel,
                    crate::task::file_diff(&rel, &clean, &crate::task::buggy_text(&clean, c)),
                    crate::task::gold_patch(&clean, c),
                    c.line_range,
                );
                t.fail_to_pass = vec![format!("tests/test_x.py::test_{i}")];
                t.pass_to_pass = (0..3)
                    .map(|k| format!("tests/test_x.py::test_{k}"))
                    .collect();
                t
            })
            .collect();
        (tasks, clean)
    }

    #[test]
    fn combinations_touch_disjoint_lines_and_combine_into_a_valid_patch() {
        let (tasks, clean) = demo_file_tasks("money.py");
        let plan = plan_combinations(&tasks, 3, 25);
        assert!(!plan.is_empty());
        assert!(plan.len() <= 25);
        assert!(plan.iter().any(|c| c.members.len() == 3));
        assert_eq!(plan, plan_combinations(&tasks, 3, 25), "deterministic");
        assert!(plan_combinations(&tasks, 2, 25)
            .iter()
            .all(|c| c.members.len() == 2));
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let rel = "pyshelf/money.py";
        std::fs::create_dir_all(dir.path().join("pyshelf")).unwrap();
        for comb in plan.iter().take(8) {
            let members: Vec<&Task> = comb.members.iter().map(|&i| &tasks[i]).collect();
            let c = combine_patches(&members, &clean).unwrap();
            // Each member's bug is in the combined buggy text, and the gold patch restores the
            // clean file: checked with git itself.
            std::fs::write(dir.path().join(rel), &clean).unwrap();
            std::fs::write(dir.path().join("bug.diff"), &c.bug_patch).unwrap();
            git(&["apply", "bug.diff"]);
            assert_eq!(
                std::fs::read_to_string(dir.path().join(rel)).unwrap(),
                c.buggy
            );
            for m in &members {
                let own = crate::train::episode::file_changes(&m.bug_patch, rel).unwrap();
                let mine = apply_changes(&clean, &own).unwrap();
                assert_ne!(mine, c.buggy, "the combination has more than one bug");
                for ch in &own {
                    for l in &ch.new {
                        assert!(c.buggy.contains(l.as_str()));
                    }
                }
            }
            std::fs::write(dir.path().join("fix.diff"), &c.patch).unwrap();
            git(&["apply", "fix.diff"]);
            assert_eq!(
                std::fs::read_to_string(dir.path().join(rel)).unwrap(),
                clean
            );
            // Tests: the union of FAIL_TO_PASS; PASS_TO_PASS without any of them.
            assert_eq!(c.fail_to_pass.len(), members.len());
            assert!(c.pass_to_pass.iter().all(|t| !c.fail_to_pass.contains(t)));
            let task = combine_task(&members, &clean).unwrap();
            assert_eq!(Level::of(&task), Level::Multi);
            assert_eq!(task.metadata.mutators.len(), members.len());
            assert!(task
                .instance_id
                .starts_with(&format!("pyshelf__multi{}__", members.len())));
            for m in &members {
                assert!(task.problem_statement.contains(m.problem_statement.trim()));
            }
            // The gold edit of the combined task works on its buggy text.
            let edit = crate::train::episode::gold_edit(&task, &c.buggy).unwrap();
            assert_eq!(
                crate::train::episode::apply_edit(&c.buggy, &edit).unwrap(),
                clean
            );
        }
    }

    #[test]
    fn overlapping_or_mismatched_members_are_refused() {
        let (tasks, clean) = demo_file_tasks("money.py");
        // Two bugs on the same line never combine.
        let (a, b) = (0..tasks.len())
            .flat_map(|i| (i + 1..tasks.len()).map(move |j| (i, j)))
            .find(|&(i, j)| tasks[i].metadata.location.lines == tasks[j].metadata.location.lines)
            .expect("two candidates on one line");
        let plan = plan_combinations(&tasks, 3, usize::MAX);
        assert!(plan
            .iter()
            .all(|c| !(c.members.contains(&a) && c.members.contains(&b))));
        assert!(matches!(
            combine_patches(&[&tasks[a], &tasks[b]], &clean),
            Err(CombineError::Overlap(_))
        ));
        assert_eq!(
            combine_patches(&[&tasks[a]], &clean),
            Err(CombineError::Size(1))
        );
        let mut other = tasks[b].clone();
        other.base_commit = "b".repeat(40);
        assert!(matches!(
            combine_patches(&[&tasks[a], &other], &clean),
            Err(CombineError::NotSameFile(_))
        ));
        // Test patches that add the same file differently conflict; identical ones merge.
        let mut x = tasks[0].clone();
        let mut y = tasks[1].clone();
        x.test_patch = crate::task::file_diff_new("tests/test_r.py", "def test_a():\n    pass\n");
        y.test_patch = crate::task::file_diff_new("tests/test_r.py", "def test_b():\n    pass\n");
        assert_eq!(
            merge_test_patches(&[&x, &y]),
            Err(CombineError::TestPatchConflict("tests/test_r.py".into()))
        );
        y.test_patch = x.test_patch.clone();
        assert_eq!(merge_test_patches(&[&x, &y]).unwrap(), x.test_patch);
    }
}
