//! The shortcuts of verification give the same tasks as the full protocol. On the embedded
//! demo seed (local sandbox), the default run (the resident runner; check 3 reuses the runs of
//! the same grading command on the same clean tree made for another candidate) and a run with
//! `--runner fresh --recheck-identical` (a fresh process per run, check 3 run 3× for every
//! candidate) decide every candidate the same way, with the same FAIL_TO_PASS and
//! PASS_TO_PASS. Grading commands that run whole files (`--grading-scope files`) share check 3's
//! runs between candidates.
//!
//! The same holds for survivors that get a synthesized test, and for the Java demo seed with
//! the resident JVM against fresh JVMs.
//!
//! And a seed the resident runner cannot stand in for (`tests/fixtures/lazy_imports`) falls
//! back to fresh processes, says why, and is verified all the same; one whose test writes to a
//! closed pipe (`tests/fixtures/broken_pipe`) keeps it.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn demo_run(out_dir: &Path, extra: &[&str]) -> Value {
    seed_run("pyshelf", 14, out_dir, extra)
}

fn seed_run(seed: &str, candidates: usize, out_dir: &Path, extra: &[&str]) -> Value {
    let out = bin()
        .args(["run", "--sandbox", "local", "--json", "--only", seed])
        .args([
            "--no-synthesis",
            "--max-candidates",
            &candidates.to_string(),
        ])
        .args(extra)
        .arg("--out")
        .arg(out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    summary(&out)
}

/// candidate id → (status or reason, FAIL_TO_PASS, PASS_TO_PASS).
fn decisions(out_dir: &Path) -> BTreeMap<String, (String, Value, Value)> {
    let tasks: BTreeMap<String, Value> = jsonl(&out_dir.join("tasks.jsonl"))
        .into_iter()
        .map(|t| {
            (
                t["metadata"]["candidate_id"].as_str().unwrap().to_string(),
                t,
            )
        })
        .collect();
    jsonl(&out_dir.join("candidates.jsonl"))
        .into_iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap().to_string();
            let verdict = c["reason"]
                .as_str()
                .unwrap_or(c["status"].as_str().unwrap())
                .to_string();
            let (f2p, p2p) = tasks
                .get(&id)
                .map(|t| (t["FAIL_TO_PASS"].clone(), t["PASS_TO_PASS"].clone()))
                .unwrap_or_default();
            (id, (verdict, f2p, p2p))
        })
        .collect()
}

/// Every candidate decided the same way by both runs (`a`: the resident runner's).
fn assert_same_decisions(
    a: &BTreeMap<String, (String, Value, Value)>,
    b: &BTreeMap<String, (String, Value, Value)>,
) {
    let differ: Vec<_> = a
        .iter()
        .filter(|(id, d)| b.get(*id) != Some(d))
        .map(|(id, d)| format!("{id}: resident {d:?}, fresh {:?}", b.get(id)))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

fn labels(t: &Value) -> Vec<String> {
    t["metadata"]["verification"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_shortcuts_of_verification_give_the_same_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let fast = dir.path().join("fast");
    let full = dir.path().join("full");
    let a = demo_run(&fast, &[]);
    let b = demo_run(&full, &["--runner", "fresh", "--recheck-identical"]);
    assert_eq!(seed_summary(&a, "pyshelf")["runner"], "resident", "{a}");
    assert_eq!(seed_summary(&b, "pyshelf")["runner"], "fresh", "{b}");
    let (a, b) = (decisions(&fast), decisions(&full));
    assert_eq!(a.len(), 14);
    assert_same_decisions(&a, &b);

    // The default grading commands name the covering tests; check 3's runs are shared by
    // candidates with the same command, which whole files make common: the demo's candidates
    // again with `--grading-scope files`.
    let files = dir.path().join("files");
    demo_run(&files, &["--grading-scope", "files"]);
    for t in jsonl(&fast.join("tasks.jsonl")) {
        let grading = &t["metadata"]["grading"];
        let named = grading["tests"].as_array().expect("tests named");
        assert!(
            t["FAIL_TO_PASS"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| named.contains(f)),
            "{t}"
        );
    }
    let fast_tasks = jsonl(&files.join("tasks.jsonl"));
    assert!(!fast_tasks.is_empty());
    let fixed = serde_json::json!(["fixed#1", "fixed#2", "fixed#3"]);
    let mut reused_any = false;
    for t in &fast_tasks {
        let v = &t["metadata"]["verification"];
        let grading = &t["metadata"]["grading"];
        assert!(!grading["files"].as_array().unwrap().is_empty(), "{t}");
        // Check 3's runs are in the record, whether this candidate made them or another one
        // with the same grading command on the same (clean) tree did.
        let l = labels(t);
        for i in 1..=3 {
            assert!(l.contains(&format!("fixed#{i}")), "{l:?}");
            assert!(l.contains(&format!("buggy#{i}")), "{l:?}");
        }
        if let Some(reused) = v["reused"].as_array() {
            reused_any = true;
            assert_eq!(reused.len(), 1, "{v}");
            assert_eq!(reused[0]["check"], "fixed");
            assert_eq!(reused[0]["runs"], fixed);
            assert_eq!(reused[0]["tree"].as_str().unwrap().len(), 40);
            assert_eq!(reused[0]["grading"].as_str().unwrap().len(), 16, "{v}");
        }
    }
    assert!(
        reused_any,
        "no two candidates shared a grading command on the clean tree"
    );
    for t in jsonl(&full.join("tasks.jsonl")) {
        assert!(t["metadata"]["verification"].get("reused").is_none());
        let l = labels(&t);
        for i in 1..=3 {
            assert!(l.contains(&format!("fixed#{i}")), "{l:?}");
        }
    }
}

/// Survivors with synthesized tests: the shortcuts (check 1 over the whole suite standing in
/// for check 3, whose tree is byte-identical; check 2's repeats narrowed) decide as the full
/// protocol with fresh processes does.
#[test]
fn the_shortcuts_give_the_same_synthesized_tasks() {
    let all = demo_candidates("pyshelf");
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands.jsonl");
    std::fs::write(
        &cands,
        format!(
            "{}\n{}\n",
            pick_candidate(&all, "title_case", "len(words) - 0"),
            pick_candidate(
                &all,
                "paginate",
                "max((len(rows) + per_page - 1) // per_page, 1)"
            )
        ),
    )
    .unwrap();
    let verify = |out_dir: &Path, extra: &[&str]| {
        let out = bin()
            .args(["verify", "--candidates"])
            .arg(&cands)
            .args(["--sandbox", "local", "--only", "pyshelf", "--json"])
            .args(extra)
            .arg("--out")
            .arg(out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    };
    let fast = dir.path().join("fast");
    let full = dir.path().join("full");
    verify(&fast, &[]);
    verify(&full, &["--runner", "fresh", "--recheck-identical"]);
    let (a, b) = (decisions(&fast), decisions(&full));
    assert_eq!(a.len(), 2);
    assert_eq!(a, b);
    let fast_tasks = jsonl(&fast.join("tasks.jsonl"));
    assert_eq!(fast_tasks.len(), 1, "the survivor became a task");
    let v = &fast_tasks[0]["metadata"]["verification"];
    assert_eq!(
        v["reused"],
        serde_json::json!([{
            "check": "fixed",
            "tree": v["reused"][0]["tree"],
            "runs": ["synth-clean#1", "synth-clean#2", "synth-clean#3"],
            "grading": v["reused"][0]["grading"],
        }]),
        "{v}"
    );
    assert!(!labels(&fast_tasks[0])
        .iter()
        .any(|l| l.starts_with("fixed#")));
    let full_tasks = jsonl(&full.join("tasks.jsonl"));
    let l = labels(&full_tasks[0]);
    for i in 1..=3 {
        assert!(l.contains(&format!("fixed#{i}")), "{l:?}");
    }
}

/// The Java demo seed through the resident JVM decides every candidate as fresh JVMs with the
/// full protocol do (the sample holds an endless loop, ended by the CPU limit in both).
#[test]
fn the_resident_jvm_gives_the_same_java_tasks() {
    if !maven_or_skip("the_resident_jvm_gives_the_same_java_tasks") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fast = dir.path().join("fast");
    let full = dir.path().join("full");
    let a = seed_run("javashelf", 12, &fast, &[]);
    let b = seed_run(
        "javashelf",
        12,
        &full,
        &["--runner", "fresh", "--recheck-identical"],
    );
    assert_eq!(seed_summary(&a, "javashelf")["runner"], "resident", "{a}");
    assert_eq!(seed_summary(&b, "javashelf")["runner"], "fresh", "{b}");
    let (a, b) = (decisions(&fast), decisions(&full));
    assert_eq!(a.len(), 12);
    assert_eq!(a, b);
    assert!(a.values().any(|(v, _, _)| v == "accepted"), "{a:?}");
}

#[test]
fn a_suite_the_resident_runner_changes_falls_back_to_fresh_processes() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = fixture_manifest(dir.path(), "lazy_imports");
    let out_dir = dir.path().join("out");
    let out = bin()
        .arg("run")
        .arg(&manifest)
        .args(["--sandbox", "local", "--json", "--no-synthesis", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "lazy_imports");
    assert_eq!(seed["status"], "done", "{seed}");
    assert_eq!(seed["runner"], "fresh", "{seed}");
    let why = seed["runner_fallback"]
        .as_str()
        .expect("the reason is recorded");
    assert!(
        why.contains("tests/test_a_lazy.py::test_import_is_lazy"),
        "{why}"
    );
    assert!(seed["accepted"].as_u64().unwrap() > 0, "{seed}");
    // The report says it too.
    let o = bin().arg("report").arg(&out_dir).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["seeds"][0]["runner_fallback"].as_str(), Some(why));
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("test_import_is_lazy"));
}

#[test]
fn a_suite_that_writes_to_a_closed_pipe_keeps_the_resident_runner() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = fixture_manifest(dir.path(), "broken_pipe");
    let out = bin()
        .arg("run")
        .arg(&manifest)
        .args(["--sandbox", "local", "--json", "--no-synthesis", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "broken_pipe");
    assert_eq!(seed["status"], "done", "{seed}");
    // The resident's children ignore SIGPIPE as a fresh interpreter does: the test's write
    // raises BrokenPipeError there too, and the outcomes agree.
    assert_eq!(seed["runner"], "resident", "{seed}");
    assert!(seed["accepted"].as_u64().unwrap() > 0, "{seed}");
}

/// With `--grading-max-tests 3`, a candidate more than three tests cover is screened up to its
/// first failing test and graded by a bounded command: the tests that failed, then covering
/// tests of their files, up to three (or the failures, when more). The resident runner and
/// the full protocol (`--runner fresh --recheck-identical`) decide every candidate the same way,
/// with the same FAIL_TO_PASS and PASS_TO_PASS.
#[test]
fn a_bounded_grading_command_gives_the_same_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let fast = dir.path().join("fast");
    let full = dir.path().join("full");
    let bound = ["--grading-max-tests", "3"];
    demo_run(&fast, &bound);
    let mut full_args = bound.to_vec();
    full_args.extend(["--runner", "fresh", "--recheck-identical"]);
    demo_run(&full, &full_args);
    let (a, b) = (decisions(&fast), decisions(&full));
    assert_same_decisions(&a, &b);
    let covering: BTreeMap<String, usize> = jsonl(&fast.join("candidates.jsonl"))
        .into_iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["covering_tests"].as_u64().expect("covering_tests") as usize,
            )
        })
        .collect();
    let mut bounded = 0;
    for t in jsonl(&fast.join("tasks.jsonl")) {
        let id = t["metadata"]["candidate_id"].as_str().unwrap();
        let named = t["metadata"]["grading"]["tests"]
            .as_array()
            .expect("tests named");
        let f2p = t["FAIL_TO_PASS"].as_array().unwrap();
        assert!(f2p.iter().all(|f| named.contains(f)), "{t}");
        if covering[id] > 3 {
            bounded += 1;
            assert!(named.len() <= 3.max(f2p.len()), "{id}: {named:?}");
            assert!(named.len() < covering[id], "{id}: {named:?}");
        }
    }
    assert!(
        bounded > 0,
        "no task of the demo had more than 3 covering tests"
    );
}
