//! `swe-forge export`: a real run of the demo seed exported as a git repository per seed — every
//! task's branch is its start state (`base_commit`, parentless, the clean commit with its bug and
//! without the hidden test files), its commit message gives nothing of the patch away, and a task
//! whose patch does not apply is reported while the others still export.

mod common;

use common::{bin, jsonl, run_demo_small, text};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The `+`/`-` lines of a unified diff (without the file headers).
fn changed(patch: &str) -> Vec<&str> {
    patch
        .lines()
        .filter(|l| {
            (l.starts_with('+') && !l.starts_with("+++"))
                || (l.starts_with('-') && !l.starts_with("---"))
        })
        .collect()
}

#[test]
fn demo_tasks_export_as_branches_holding_their_bugs() {
    let (o, dir) = run_demo_small();
    let out = dir.path().join("out");
    let tasks = jsonl(&out.join("tasks.jsonl"));
    assert!(!tasks.is_empty(), "the demo run made no task: {}", text(&o));

    let o = bin().args(["export", "--json"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["exported"].as_array().unwrap().len(), tasks.len());
    assert!(
        summary["failed"].as_array().unwrap().is_empty(),
        "{summary}"
    );
    let export = out.join("export");
    assert_eq!(
        std::fs::read_to_string(export.join("tasks.jsonl")).unwrap(),
        std::fs::read_to_string(out.join("tasks.jsonl")).unwrap()
    );
    let bare = export.join("pyshelf.git");
    assert!(
        bare.join("HEAD").is_file(),
        "no bare repository at {}",
        bare.display()
    );
    let clean = tasks[0]["metadata"]["start_state"]["clean_commit"]
        .as_str()
        .unwrap();
    assert_eq!(git(&bare, &["rev-parse", "main"]).trim(), clean);

    // A working clone to apply patches in.
    let work = dir.path().join("work");
    let o = Command::new("git")
        .args(["clone", "-q"])
        .arg(&bare)
        .arg(&work)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        let branch = format!("task/{id}");
        let remote = format!("origin/{branch}");
        let bug_patch = t["bug_patch"].as_str().unwrap();
        let file = t["metadata"]["location"]["file"].as_str().unwrap();
        // The branch is the start state: base_commit, one commit, no parent.
        assert_eq!(git(&bare, &["rev-parse", &branch]).trim(), t["base_commit"]);
        assert_eq!(git(&bare, &["rev-list", "--count", &branch]).trim(), "1");
        // Content-wise, main + bug_patch − the removed test files is the branch.
        git(&work, &["checkout", "-q", "--detach", "main"]);
        let patch_file = dir.path().join("bug.diff");
        std::fs::write(&patch_file, bug_patch).unwrap();
        git(&work, &["apply", patch_file.to_str().unwrap()]);
        for f in t["metadata"]["start_state"]["removed_files"]
            .as_array()
            .unwrap()
        {
            std::fs::remove_file(work.join(f.as_str().unwrap())).unwrap();
        }
        git(&work, &["add", "-A"]);
        let o = Command::new("git")
            .arg("-C")
            .arg(&work)
            .args(["diff", "--cached", "--exit-code", &remote])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{id}: main + bug_patch − removed files differs from its branch: {}",
            text(&o)
        );
        git(&work, &["reset", "-q", "--hard"]);
        // And the branch's diff of the bug's file changes exactly the patch's lines.
        let diff = git(&bare, &["diff", "main", &branch, "--", file]);
        assert_eq!(changed(&diff), changed(bug_patch), "{id}");
        // The message reveals nothing of the patch: no line of it, no changed code.
        let message = git(&bare, &["log", "-1", "--format=%B", &branch]);
        let bodies: Vec<&str> = bug_patch
            .lines()
            .map(|l| l.trim_start_matches(['+', '-', ' ']).trim())
            .collect();
        for m in message.lines().map(str::trim).filter(|l| !l.is_empty()) {
            assert!(
                !bodies.contains(&m),
                "{id}: the message line {m:?} is in the patch"
            );
        }
        for line in changed(bug_patch) {
            let body = line[1..].trim();
            assert!(
                body.len() < 4 || !message.contains(body),
                "{id}: the message {message:?} holds the patch line {line:?}"
            );
        }
        for test in t["FAIL_TO_PASS"].as_array().unwrap() {
            let name = test.as_str().unwrap().rsplit("::").next().unwrap();
            assert!(!message.contains(name), "{id}: the message names {name}");
        }
    }

    // A task whose patch does not apply is reported; the others still export.
    let mut broken = tasks[0].clone();
    broken["instance_id"] = "pyshelf__broken__00000000".into();
    // Context and removed lines that match nothing in the file.
    broken["bug_patch"] = tasks[0]["bug_patch"]
        .as_str()
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| match l.chars().next() {
            Some(c @ (' ' | '-')) if !l.starts_with("---") => format!("{c}no such line {i}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into();
    broken["bug_patch"] = format!("{}\n", broken["bug_patch"].as_str().unwrap()).into();
    let mixed = dir.path().join("mixed.jsonl");
    std::fs::write(&mixed, format!("{}\n{}\n", broken, tasks[0])).unwrap();
    let to = dir.path().join("mixed-export");
    let o = bin()
        .args(["export", "--json", "--tasks"])
        .arg(&mixed)
        .arg("--to")
        .arg(&to)
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["exported"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["failed"][0]["instance_id"], "pyshelf__broken__00000000");
    assert!(
        s["failed"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("applying bug_patch"),
        "{s}"
    );
    // Nothing exported at all: exit 4, with the reason on stderr.
    std::fs::write(&mixed, format!("{broken}\n")).unwrap();
    let o = bin()
        .args(["export", "--tasks"])
        .arg(&mixed)
        .arg("--to")
        .arg(dir.path().join("none-export"))
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pyshelf__broken__00000000"));
}

#[test]
fn missing_out_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .arg("export")
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no such output directory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = bin().arg("export").arg(dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no tasks file"));
}

/// `run --visible-tests`: the start state keeps the FAIL_TO_PASS tests' files (the easier
/// variant), `test_patch` restores nothing, and the mode is recorded; by default the files are
/// removed and `test_patch` brings them back.
#[test]
fn visible_tests_keep_the_failing_tests_in_the_start_state() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let run = |out: &Path, extra: &[&str]| {
        let o = bin()
            .env("TMPDIR", &tmp)
            .args([
                "run",
                "--sandbox",
                "local",
                "--only",
                "pyshelf",
                "--max-candidates",
                "3",
            ])
            .args(["--no-synthesis", "--json", "--out"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        jsonl(&out.join("tasks.jsonl"))
    };
    let hidden = run(&dir.path().join("hidden"), &[]);
    let visible = run(&dir.path().join("visible"), &["--visible-tests"]);
    assert!(!visible.is_empty() && visible.len() == hidden.len());
    for (h, v) in hidden.iter().zip(&visible) {
        assert_eq!(h["instance_id"], v["instance_id"]);
        assert_eq!(h["metadata"]["start_state"]["hidden_tests"], "files");
        assert_eq!(v["metadata"]["start_state"]["hidden_tests"], "visible");
        assert!(v["metadata"]["start_state"]["removed_files"]
            .as_array()
            .unwrap()
            .is_empty());
        assert_eq!(v["test_patch"], "", "no synthesis: nothing to add");
        let removed = h["metadata"]["start_state"]["removed_files"]
            .as_array()
            .unwrap();
        assert!(!removed.is_empty());
        for f in removed {
            assert!(
                h["test_patch"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("+++ b/{}", f.as_str().unwrap())),
                "test_patch does not restore {f}"
            );
        }
        // Different trees, different start states; the same clean commit and bug.
        assert_ne!(h["base_commit"], v["base_commit"]);
        assert_eq!(h["bug_patch"], v["bug_patch"]);
    }
}
