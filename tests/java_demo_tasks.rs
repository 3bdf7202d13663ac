//! The Java main job: `swe-forge run` on the embedded Java demo seed (seeds/javashelf), in
//! Docker, yields at least 20 verified tasks, and each is re-checked from its record alone on
//! the host, without swe-forge's runner: with the bug patch applied, every FAIL_TO_PASS test
//! fails (the patched classes compiled with javac, the tests run by JUnit's console launcher);
//! the gold patch then restores the clean sources exactly, on which the whole suite passes.
//! Two of the tasks get their task images from their records, pass the audit in Docker, and
//! are served (`serve --sandbox docker`) to the Python client's runner cheats.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

fn java_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "java"))
        .map(|e| e.into_path())
        .collect()
}

fn javac(classpath: &str, out: &Path, files: &[PathBuf]) -> std::process::Output {
    Command::new("javac")
        .args([
            "-nowarn",
            "-encoding",
            "UTF-8",
            "--release",
            "11",
            "-cp",
            classpath,
            "-d",
        ])
        .arg(out)
        .args(files)
        .output()
        .unwrap()
}

/// Run the given tests (`Class#method`) with the console launcher; status per test id.
fn run_tests(classpath: &str, tests: &[String], reports: &Path) -> BTreeMap<String, String> {
    let _ = std::fs::remove_dir_all(reports);
    let mut cmd = Command::new("java");
    cmd.args([
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-cp",
        classpath,
    ])
    .arg("org.junit.platform.console.ConsoleLauncher")
    .args(["--disable-banner", "--details=none", "--reports-dir"])
    .arg(reports);
    for t in tests {
        cmd.arg(format!("--select-method={t}"));
    }
    let out = cmd.output().unwrap();
    let xml = std::fs::read_to_string(reports.join("TEST-junit-jupiter.xml"))
        .unwrap_or_else(|e| panic!("no report ({e}): {}", text(&out)));
    testcases(&xml)
}

/// `classname#name` (parameters stripped) → `passed`/`failed`, from a legacy JUnit XML report.
fn testcases(xml: &str) -> BTreeMap<String, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => {
                let mut class = String::new();
                let mut name = String::new();
                for a in e.attributes().flatten() {
                    let v = a.unescape_value().unwrap().to_string();
                    match a.key.as_ref() {
                        b"classname" => class = v,
                        b"name" => name = v,
                        _ => {}
                    }
                }
                let method = name.split('(').next().unwrap().to_string();
                let id = format!("{class}#{method}");
                out.insert(id.clone(), "passed".to_string());
                current = Some(id);
            }
            Event::Start(e) | Event::Empty(e)
                if matches!(e.name().as_ref(), b"failure" | b"error") =>
            {
                if let Some(id) = &current {
                    out.insert(id.clone(), "failed".to_string());
                }
            }
            Event::End(e) if e.name().as_ref() == b"testcase" => current = None,
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// `image tasks` builds the task images of `tasks` from their records (the run built none),
/// and `audit --sandbox docker` finds each valid and safe in its own image: the start state
/// as the agent's user, no way back to the clean classes or the hidden tests.
fn task_images_from_records_pass_the_audit(dir: &Path, tasks: &[serde_json::Value]) {
    let file = dir.join("two.jsonl");
    let body: String = tasks.iter().map(|t| format!("{t}\n")).collect();
    std::fs::write(&file, body).unwrap();
    // Built here, not left from an earlier run on this engine.
    for t in tasks {
        let _ = Command::new("docker")
            .args(["rmi", "-f", t["image_name"].as_str().unwrap()])
            .output();
    }
    let o = bin()
        .args(["image", "tasks", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = stdout_lines(&o);
    let summary = lines.last().unwrap();
    assert_eq!(summary["built"], tasks.len(), "{lines:?}");
    assert_eq!(summary["failed"], 0, "{lines:?}");
    let o = bin()
        .args(["audit", "--sandbox", "docker", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let audited: Vec<serde_json::Value> = stdout_lines(&o)
        .into_iter()
        .filter(|v| v.get("instance_id").is_some())
        .collect();
    assert_eq!(audited.len(), tasks.len(), "{}", text(&o));
    for a in &audited {
        assert_eq!(a["verdict"], "ok", "{a}");
        assert_eq!(a["sandbox"], "docker", "{a}");
    }
}

fn git_apply(dir: &Path, patch: &str) {
    let file = dir.join("../change.diff");
    std::fs::write(&file, patch).unwrap();
    let out = Command::new("git")
        .arg("apply")
        .arg(&file)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{patch}", text(&out));
}

#[test]
fn java_demo_run_yields_verified_tasks() {
    if !docker_or_skip("java_demo_run_yields_verified_tasks") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = bin()
        .args([
            "run",
            "--sandbox",
            "docker",
            "--only",
            "javashelf",
            "--json",
            "--jobs",
            "2",
            "--max-candidates",
            "30",
            // Two task images are built from their records below; the rest are not needed.
            "--no-task-images",
            // The host re-runs the suite's own tests below; synthesized regression tests are
            // checked by tests/java_synthesis.rs.
            "--no-synthesis",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "javashelf");
    assert_eq!(seed["status"], "done", "{seed}");
    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    assert!(tasks.len() >= 20, "only {} tasks: {seed}", tasks.len());
    for t in &tasks {
        assert_eq!(t["language"], "java");
        let repo_image = t["metadata"]["start_state"]["repo_image"].as_str().unwrap();
        assert!(
            repo_image.starts_with("swe-forge/javashelf:"),
            "{repo_image}"
        );
        let image = t["image_name"].as_str().unwrap();
        assert!(image.starts_with("swe-forge/javashelf-task:"), "{image}");
    }
    task_images_from_records_pass_the_audit(dir.path(), &tasks[..2]);
    // The same two tasks served in Docker: through the Python client, the gold agent gets 1,
    // cheats at Maven's configuration (skipTests, surefire includes, .mvn/maven.config) get
    // 0, flagged and counted (clients/python/tests/test_runner_cheats.py).
    {
        let served = serve_docker(&dir.path().join("two.jsonl"), &dir.path().join("serve.db"));
        client_module(
            "test_runner_cheats",
            &served.url,
            &dir.path().join("two.jsonl"),
        );
    }

    // The clean build, on the host.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/javashelf");
    let classes = dir.path().join("classes");
    let test_classes = dir.path().join("test-classes");
    let o = javac("", &classes, &java_files(&source.join("src/main/java")));
    assert!(o.status.success(), "{}", text(&o));
    let cp = format!("{}:{LAUNCHER}", classes.display());
    let o = javac(
        &cp,
        &test_classes,
        &java_files(&source.join("src/test/java")),
    );
    assert!(o.status.success(), "{}", text(&o));

    let all_tests: BTreeSet<String> = tasks
        .iter()
        .flat_map(|t| {
            ["FAIL_TO_PASS", "PASS_TO_PASS"]
                .into_iter()
                .flat_map(move |k| {
                    t[k].as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_string())
                })
        })
        .collect();
    let clean_cp = format!(
        "{}:{}:{LAUNCHER}",
        classes.display(),
        test_classes.display()
    );
    let all: Vec<String> = all_tests.iter().cloned().collect();
    let clean = run_tests(&clean_cp, &all, &dir.path().join("reports-clean"));
    for t in &all {
        assert_eq!(
            clean.get(t).map(String::as_str),
            Some("passed"),
            "{t} on clean code"
        );
    }

    for (i, task) in tasks.iter().enumerate() {
        let work = dir.path().join(format!("t{i}/repo"));
        std::fs::create_dir_all(&work).unwrap();
        swe_forge::sandbox::local::copy_tree(&source, &work).unwrap();
        let bug = task["bug_patch"].as_str().unwrap();
        git_apply(&work, bug);
        let file = task["metadata"]["location"]["file"].as_str().unwrap();
        let overlay = dir.path().join(format!("t{i}/overlay"));
        let o = javac(&classes.display().to_string(), &overlay, &[work.join(file)]);
        assert!(
            o.status.success(),
            "{}: the buggy code compiles: {}",
            task["instance_id"],
            text(&o)
        );
        let f2p: Vec<String> = serde_json::from_value(task["FAIL_TO_PASS"].clone()).unwrap();
        assert!(!f2p.is_empty());
        let buggy_cp = format!("{}:{clean_cp}", overlay.display());
        let got = run_tests(&buggy_cp, &f2p, &dir.path().join(format!("t{i}/reports")));
        for t in &f2p {
            assert_eq!(
                got.get(t).map(String::as_str),
                Some("failed"),
                "{}: {t} must fail with the bug",
                task["instance_id"]
            );
        }
        // The gold patch restores the clean file exactly.
        git_apply(&work, task["patch"].as_str().unwrap());
        assert_eq!(
            std::fs::read(work.join(file)).unwrap(),
            std::fs::read(source.join(file)).unwrap(),
            "{}: the gold patch restores the clean code",
            task["instance_id"]
        );
    }
}
