//! The main job: `swe-forge run` on the embedded demo seed yields at least 20 verified tasks,
//! and each task is re-checked from its record alone: the start state (the bug patch, the hidden
//! test files removed) plus `test_patch` makes every FAIL_TO_PASS test fail on a fresh copy,
//! and the gold patch makes every listed test pass again.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use swe_forge::run::TestStatus;
use swe_forge::runner::junit_xml;

fn venv_python(cache: &Path) -> PathBuf {
    let venvs = cache.join("venvs");
    std::fs::read_dir(&venvs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pyshelf-")
                && p.join(".swe-forge-ready").exists()
        })
        .map(|p| p.join("bin/python"))
        .expect("the run built an environment for pyshelf")
}

fn git_apply(dir: &Path, patch: &str) {
    let file = dir.join("../change.diff");
    std::fs::write(&file, patch).unwrap();
    let st = Command::new("git")
        .arg("apply")
        .arg(&file)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "patch does not apply:\n{patch}");
}

/// Run pytest on `dir` (only `ids` when given) and return per-test statuses by node id.
fn pytest(python: &Path, dir: &Path, ids: Option<&[String]>) -> Vec<(String, TestStatus)> {
    let report = dir.join("../report.xml");
    let _ = std::fs::remove_file(&report);
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-o",
        "junit_family=xunit1",
        "--rootdir=.",
    ])
    .arg(format!("--junitxml={}", report.display()))
    .current_dir(dir)
    .env("PYTHONPATH", dir)
    .env("PYTHONDONTWRITEBYTECODE", "1");
    if let Some(ids) = ids {
        cmd.args(ids);
    }
    let out = cmd.output().unwrap();
    let xml = std::fs::read_to_string(&report)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&out.stdout)));
    junit_xml::parse_cases(&xml)
        .unwrap()
        .into_iter()
        .map(|c| (junit_xml::pytest_node_id(&c, &[]), c.result.status))
        .collect()
}

#[test]
fn demo_run_yields_verified_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = bin()
        .args([
            "run",
            "--sandbox",
            "local",
            "--json",
            "--only",
            "pyshelf",
            "--max-candidates",
            "32",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "pyshelf");
    assert_eq!(seed["status"], "done", "{seed}");

    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    assert!(tasks.len() >= 20, "only {} tasks: {seed}", tasks.len());
    let ids: BTreeSet<&str> = tasks
        .iter()
        .map(|t| t["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), tasks.len(), "instance ids are unique");
    let candidates = jsonl(&out_dir.join("candidates.jsonl"));
    assert_eq!(candidates.len() as u64, seed["decided"].as_u64().unwrap());
    assert!(candidates
        .iter()
        .all(|c| c["status"] == "accepted" || c["reason"].is_string()));

    let python = venv_python(&cache());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
    let mut killed_by_own_tests = 0;
    for task in &tasks {
        let f2p: Vec<String> = serde_json::from_value(task["FAIL_TO_PASS"].clone()).unwrap();
        let p2p: Vec<String> = serde_json::from_value(task["PASS_TO_PASS"].clone()).unwrap();
        assert!(!f2p.is_empty());
        for key in [
            "instance_id",
            "repo",
            "base_commit",
            "patch",
            "test_patch",
            "problem_statement",
            "hints_text",
            "created_at",
            "version",
            "environment_setup_commit",
            "bug_patch",
            "image_name",
            "language",
            "metadata",
        ] {
            assert!(task.get(key).is_some(), "task lacks {key}");
        }
        let statement = task["problem_statement"].as_str().unwrap();
        let file = task["metadata"]["location"]["file"].as_str().unwrap();
        assert!(
            !statement.contains(file),
            "issue text names the file: {statement}"
        );
        assert!(!statement.contains("diff --git"), "{statement}");

        let work = tempfile::tempdir().unwrap();
        let copy = work.path().join("repo");
        swe_forge::sandbox::local::copy_tree(&source, &copy).unwrap();

        // The start state: the clean tree with bug_patch, without the hidden test files.
        git_apply(&copy, task["bug_patch"].as_str().unwrap());
        let removed: Vec<String> =
            serde_json::from_value(task["metadata"]["start_state"]["removed_files"].clone())
                .unwrap();
        for f in &f2p {
            // Every FAIL_TO_PASS test of the repository's own suite is hidden with its file.
            let file = f.split("::").next().unwrap();
            if copy.join(file).exists() {
                assert!(
                    removed.iter().any(|r| r == file),
                    "{}: the FAIL_TO_PASS file {file} stays in the start state",
                    task["instance_id"]
                );
            }
        }
        for f in &removed {
            std::fs::remove_file(copy.join(f)).unwrap();
        }
        // test_patch brings the hidden tests back (SWE-bench's test_patch).
        let test_patch = task["test_patch"].as_str().unwrap();
        // Killed by the repository's own tests, with a grading command that names the
        // covering tests: the screen was that command on the buggy tree, so it is check 2's
        // first repeat: three runs with the bug in all, and no screen of its own.
        let names_tests = task["metadata"]["grading"]["tests"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        let labels: Vec<&str> = task["metadata"]["verification"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap())
            .collect();
        if names_tests && !labels.iter().any(|l| l.starts_with("synth")) {
            killed_by_own_tests += 1;
            assert_eq!(labels[0], "buggy#1", "{labels:?}");
            assert!(!labels.contains(&"screen"), "{labels:?}");
            assert_eq!(
                labels.iter().filter(|l| l.starts_with("buggy#")).count(),
                3,
                "{labels:?}"
            );
        }
        if !test_patch.is_empty() {
            git_apply(&copy, test_patch);
        }
        let buggy = pytest(&python, &copy, Some(&f2p));
        for id in &f2p {
            let st = buggy.iter().find(|(t, _)| t == id).map(|(_, s)| *s);
            assert!(
                st.is_some_and(|s| s.is_failure()),
                "{}: {id} does not fail with the bug ({st:?})",
                task["instance_id"]
            );
        }

        git_apply(&copy, task["patch"].as_str().unwrap());
        let fixed = pytest(&python, &copy, None);
        for id in f2p.iter().chain(&p2p) {
            let st = fixed.iter().find(|(t, _)| t == id).map(|(_, s)| *s);
            assert_eq!(
                st,
                Some(TestStatus::Passed),
                "{}: {id} after the gold patch",
                task["instance_id"]
            );
        }
    }
    // The run's tally counts those screens as kills.
    assert!(killed_by_own_tests > 0, "no task killed by its own tests");
    assert!(
        seed["killed"].as_u64().unwrap() >= killed_by_own_tests,
        "{seed}"
    );
}
