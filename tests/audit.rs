//! End-to-end tests of `swe-forge audit`: tasks that `run` made on the demo seed re-verify from
//! their records alone (local sandbox, and Docker where a daemon answers), and corrupted
//! copies of a task are caught with the right reason and exit status 4.

mod common;

use common::{bin, docker_or_skip, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `swe-forge run` on the demo seed pyshelf; returns tasks.jsonl.
fn make_tasks(dir: &Path, sandbox: &str, max_candidates: &str) -> PathBuf {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out_dir = dir.join("out");
    let out = bin()
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--sandbox",
            sandbox,
            "--only",
            "pyshelf",
            "--jobs",
            "2",
        ])
        .args(["--max-candidates", max_candidates, "--json", "--out"])
        .arg(&out_dir)
        // Whole-file commands: tasks of the same functions' files share their fixed run, which
        // the audit reuses (`assert_fixed_runs_reused`); commands that name tests are audited
        // by tests/harnesses.rs's graders and tests/many_tests.rs.
        .args(["--grading-scope", "files"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let tasks = out_dir.join("tasks.jsonl");
    assert!(
        !common::jsonl(&tasks).is_empty(),
        "the run made no task\n{}",
        text(&out)
    );
    tasks
}

/// `swe-forge audit FILE --sandbox S --json [extra]`: the output and its JSON lines.
fn audit(dir: &Path, tasks: &Path, sandbox: &str, extra: &[&str]) -> (Output, Vec<Value>) {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = bin()
        .env("TMPDIR", &tmp)
        .arg("audit")
        .arg(tasks)
        .args(["--sandbox", sandbox, "--json"])
        .args(extra)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{}", text(&out))))
        .collect();
    (out, lines)
}

fn task_lines(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "task").collect()
}

fn summary(lines: &[Value]) -> &Value {
    let last = lines.last().expect("a summary line");
    assert_eq!(last["type"], "summary", "{last}");
    last
}

/// Every task is ok, in the given sandbox, with exit status 0.
fn assert_all_ok(dir: &Path, tasks: &Path, sandbox: &str) -> Vec<Value> {
    let records = common::jsonl(tasks);
    let (out, lines) = audit(dir, tasks, sandbox, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let checked = task_lines(&lines);
    assert_eq!(checked.len(), records.len(), "{}", text(&out));
    for t in &checked {
        assert_eq!(t["verdict"], "ok", "{t}");
        assert_eq!(t["sandbox"], sandbox, "{t}");
    }
    let s = summary(&lines);
    assert_eq!(s["ok"], records.len(), "{s}");
    assert_eq!(s["invalid"], 0, "{s}");
    records
}

/// Tasks whose fixed tree (after the gold patch and `test_patch`) and listed tests are the
/// same share the fixed check: the audit runs it once, and each later such task names the
/// task whose run it used. `--recheck-identical` runs every one, with the same verdicts.
fn assert_fixed_runs_reused(dir: &Path, tasks: &Path, records: &[Value]) {
    let (_, lines) = audit(dir, tasks, "local", &[]);
    let checked = task_lines(&lines);
    assert_eq!(checked.len(), records.len());
    let mut first_of: std::collections::HashMap<String, String> = Default::default();
    let mut reuses = 0;
    for (r, a) in records.iter().zip(&checked) {
        assert_eq!(a["instance_id"], r["instance_id"]);
        assert_eq!(a["verdict"], "ok", "{a}");
        let tree = a["fixed_tree"]
            .as_str()
            .expect("the fixed tree is reported");
        assert_eq!(tree.len(), 40, "{a}");
        let mut listed: Vec<&str> = r["FAIL_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .chain(r["PASS_TO_PASS"].as_array().unwrap())
            .map(|t| t.as_str().unwrap())
            .collect();
        listed.sort_unstable();
        listed.dedup();
        let key = format!("{tree} {listed:?}");
        match first_of.get(&key) {
            None => {
                assert!(a.get("fixed_run_of").is_none(), "{a}");
                first_of.insert(key, r["instance_id"].as_str().unwrap().to_string());
            }
            Some(first) => {
                assert_eq!(a["fixed_run_of"].as_str(), Some(first.as_str()), "{a}");
                reuses += 1;
            }
        }
    }
    // Hidden test files come back with test_patch: the fixed tree is the clean commit's for
    // every task without a synthesized test, so the fixture's tasks share it.
    assert!(reuses > 0, "no two tasks share their fixed run: {lines:?}");

    let (out, again) = audit(dir, tasks, "local", &["--recheck-identical"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for t in task_lines(&again) {
        assert!(t.get("fixed_run_of").is_none(), "{t}");
        assert_eq!(t["verdict"], "ok", "{t}");
    }
}

/// Write one corrupted copy of `task` and check that the audit calls it invalid for `reason`.
fn assert_caught(dir: &Path, name: &str, task: &Value, sandbox: &str, reason: &str) {
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, format!("{task}\n")).unwrap();
    let (out, lines) = audit(dir, &path, sandbox, &[]);
    assert_eq!(out.status.code(), Some(4), "{name}: {}", text(&out));
    let checked = task_lines(&lines);
    assert_eq!(checked.len(), 1, "{name}: {}", text(&out));
    assert_eq!(checked[0]["verdict"], "invalid", "{name}: {}", checked[0]);
    assert_eq!(checked[0]["reason"], reason, "{name}: {}", checked[0]);
    assert!(
        !checked[0]["detail"].as_str().unwrap().is_empty(),
        "{name}: {}",
        checked[0]
    );
    assert_eq!(summary(&lines)["invalid"], 1, "{name}");
}

/// The three corruptions of the brief, each on a copy of the first task.
fn assert_corruptions_caught(dir: &Path, first: &Value, sandbox: &str) {
    // (a) A PASS_TO_PASS test as the only FAIL_TO_PASS test: it passes on the buggy code.
    let mut a = first.clone();
    let p2p = first["PASS_TO_PASS"][0].clone();
    assert!(p2p.is_string(), "the task has PASS_TO_PASS tests: {first}");
    a["FAIL_TO_PASS"] = Value::Array(vec![p2p]);
    assert_caught(
        dir,
        "f2p-passes",
        &a,
        sandbox,
        "fail-to-pass-passes-on-buggy",
    );

    // (b) A bug patch whose removed line is not in the file.
    let mut b = first.clone();
    let bug = first["bug_patch"].as_str().unwrap();
    let mangled: Vec<String> = bug
        .lines()
        .map(|l| {
            if l.starts_with('-') && !l.starts_with("---") {
                format!("-{}  # not in the file", &l[1..])
            } else {
                l.to_string()
            }
        })
        .collect();
    b["bug_patch"] = Value::String(mangled.join("\n") + "\n");
    assert_caught(dir, "bug-patch", &b, sandbox, "patch-does-not-apply");

    // (c) The issue text with a line of the gold patch appended.
    let mut c = first.clone();
    let patch = first["patch"].as_str().unwrap();
    let added = patch
        .lines()
        .find(|l| l.starts_with('+') && !l.starts_with("+++"))
        .unwrap();
    let statement = first["problem_statement"].as_str().unwrap();
    c["problem_statement"] = Value::String(format!("{statement}{added}\n"));
    assert_caught(dir, "leak", &c, sandbox, "issue-leak");
}

#[test]
fn audit_local_accepts_run_tasks_and_catches_corruptions() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = make_tasks(dir.path(), "local", "6");
    let records = assert_all_ok(dir.path(), &tasks, "local");
    assert_fixed_runs_reused(dir.path(), &tasks, &records);

    // A sample: as many tasks as asked, the same ones for the same seed; the report file.
    let report = dir.path().join("report.json");
    let (out, lines) = audit(
        dir.path(),
        &tasks,
        "local",
        &[
            "--sample",
            "2",
            "--seed",
            "7",
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&lines);
    assert_eq!(s["checked"], 2.min(records.len()), "{s}");
    assert_eq!(s["tasks"], records.len(), "{s}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(written["summary"]["checked"], s["checked"]);
    let ids = |v: &[&Value]| -> Vec<String> {
        v.iter()
            .map(|t| t["instance_id"].as_str().unwrap().to_string())
            .collect()
    };
    let sampled = ids(&task_lines(&lines));
    let again: Vec<Value> = written["tasks"].as_array().unwrap().to_vec();
    assert_eq!(ids(&again.iter().collect::<Vec<_>>()), sampled);

    assert_corruptions_caught(dir.path(), &records[0], "local");
}

#[test]
fn audit_docker_accepts_run_tasks_and_catches_corruptions() {
    if !docker_or_skip("audit_docker_accepts_run_tasks_and_catches_corruptions") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tasks = make_tasks(dir.path(), "docker", "4");
    let records = assert_all_ok(dir.path(), &tasks, "docker");
    for r in &records {
        assert!(r["image_name"].is_string(), "{r}");
    }
    assert_corruptions_caught(dir.path(), &records[0], "docker");
}
