//! Test synthesis on the demo seed (local sandbox): a bug no existing test catches becomes a
//! task whose synthesized test fails with the bug and passes on the clean code (checked here
//! with pytest directly, outside swe-forge's runner), and an equivalent mutant is
//! `likely-equivalent` rather than a task, after a short search (the suite's own calls reach
//! it and tell nothing apart).

mod common;
use common::*;
use std::process::Command;

#[test]
fn survivors_get_synthesized_tests_or_an_equivalence_verdict() {
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
    let all = demo_candidates("pyshelf");
    // `0 < i < len(words) - 1` → `- 0`: a small word at the end stays lower-case; the
    // repository's tests never end a title with one.
    let survivor = pick_candidate(&all, "title_case", "len(words) - 0");
    // `max(1, n)` → `max(n, 1)`: the same value.
    let equivalent = pick_candidate(
        &all,
        "paginate",
        "max((len(rows) + per_page - 1) // per_page, 1)",
    );
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands.jsonl");
    std::fs::write(&cands, format!("{survivor}\n{equivalent}\n")).unwrap();
    let out_dir = dir.path().join("out");
    let out = bin()
        .args(["verify", "--candidates"])
        .arg(&cands)
        .args(["--sandbox", "local", "--only", "pyshelf", "--json", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    let listing = jsonl(&out_dir.join("candidates.jsonl"));
    let by_fn = |f: &str| {
        listing
            .iter()
            .find(|c| c["function"] == f)
            .unwrap_or_else(|| panic!("{f} not decided: {listing:?}"))
            .clone()
    };
    assert_eq!(by_fn("paginate")["reason"], "likely-equivalent");
    // The suite's own calls reach `paginate` and tell nothing apart: a short search, then the
    // survivor is given up (CrossHair runs only with --deep-synthesis). `title_case`'s
    // boundary input is one the short search finds.
    let detail = by_fn("paginate")["detail"].as_str().unwrap().to_string();
    assert!(detail.contains("CrossHair was not run"), "{detail}");
    assert_eq!(
        by_fn("title_case")["status"],
        "accepted",
        "{}",
        by_fn("title_case")
    );

    let tasks = jsonl(&out_dir.join("tasks.jsonl"));
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    let test_patch = task["test_patch"].as_str().unwrap();
    assert!(
        test_patch.contains("new file mode"),
        "no synthesized test: {}",
        task["FAIL_TO_PASS"]
    );
    assert!(task["metadata"]["difficulty"]["synthesized_tests"]
        .as_bool()
        .unwrap());
    let f2p: Vec<String> = task["FAIL_TO_PASS"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(!f2p.is_empty() && f2p.len() <= 3, "{f2p:?}");
    let file = f2p[0].split("::").next().unwrap();
    assert!(test_patch.contains(&format!("b/{file}")));
    // The issue shows the reproduction but not the test's name or file.
    let issue = task["problem_statement"].as_str().unwrap();
    assert!(issue.contains("title_case("), "{issue}");
    for t in &f2p {
        let name = t.rsplit("::").next().unwrap();
        assert!(!issue.contains(name), "{issue}");
    }
    assert!(!issue.contains(file.rsplit('/').next().unwrap()), "{issue}");

    // Independently of swe-forge's runner: the new tests pass on the clean checkout and fail
    // with the bug, under plain pytest in the seed's environment.
    let venv_python = std::fs::read_dir(cache().join("venvs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin/python"))
        .find(|p| {
            p.exists()
                && Command::new(p)
                    .args(["-c", "import hypothesis, pytest"])
                    .status()
                    .is_ok_and(|s| s.success())
        })
        .expect("the seed's virtualenv");
    let work = dir.path().join("work");
    let copy = Command::new("cp")
        .args(["-r", seed.to_str().unwrap(), work.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copy.success());
    let git = |args: &[&str]| {
        let s = Command::new("git")
            .args(args)
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(s.status.success(), "git {args:?}: {}", text(&s));
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("test.patch"), test_patch).unwrap();
    std::fs::write(
        dir.path().join("bug.patch"),
        task["bug_patch"].as_str().unwrap(),
    )
    .unwrap();
    git(&["apply", dir.path().join("test.patch").to_str().unwrap()]);
    let pytest = |expect_pass: bool| {
        let out = Command::new(&venv_python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .args(&f2p)
            .current_dir(&work)
            .env("PYTHONPATH", &work)
            .output()
            .unwrap();
        assert_eq!(out.status.success(), expect_pass, "{}", text(&out));
    };
    pytest(true);
    git(&["apply", dir.path().join("bug.patch").to_str().unwrap()]);
    pytest(false);
}
