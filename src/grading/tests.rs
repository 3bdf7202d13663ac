//! The unit tests of `grading`.

use super::*;
use crate::toolchain::Toolchain;

#[test]
fn the_command_line_keeps_the_order_of_its_files() {
    let g = Grading::new(
        "python -m pytest",
        vec!["-p".into(), "no:cacheprovider".into()],
        vec!["tests/test_b.py".into(), "docs/a b.rst".into()],
        None,
    );
    assert_eq!(
        g.command,
        "python -m pytest -p no:cacheprovider tests/test_b.py 'docs/a b.rst'"
    );
    assert_eq!(
        g.line_with(&["-rA".into()]),
        "python -m pytest -p no:cacheprovider -rA tests/test_b.py 'docs/a b.rst'"
    );
    let mut h = g.clone();
    h.files.reverse();
    assert_ne!(g.key(), h.key(), "the order is part of the command");
}

#[test]
fn files_follow_the_suite_s_order() {
    let ids: Vec<String> = [
        "docs/usage.rst::usage.rst",
        "tests/test_a.py::test_x",
        "tests/test_a.py::test_y",
        "tests/new_test.py::test_z",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let order: Vec<String> = ["tests/test_a.py", "tests/test_c.py", "docs/usage.rst"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let file_of = |id: &str| id.split("::").next().map(str::to_string);
    assert_eq!(
        files_in_order(&ids, &order, &file_of),
        vec!["tests/test_a.py", "docs/usage.rst", "tests/new_test.py"]
    );
}

fn guarded() -> Grading {
    let mut g = Grading::new(
        "python -m pytest",
        Vec::new(),
        vec!["tests/test_core.py".into()],
        None,
    );
    g.editable = editable_globs(&[
        "pkg/core.py".into(),
        "pkg/sub/x.py".into(),
        "solo.py".into(),
    ]);
    g.protected = crate::toolchain::python_pytest::PROTECTED
        .iter()
        .map(|s| s.to_string())
        .collect();
    g
}

#[test]
fn editable_globs_are_the_sources_folders_and_root_modules() {
    assert_eq!(guarded().editable, vec!["pkg/*", "solo.py"]);
    let g = guarded();
    assert!(g.allows("pkg/core.py") && g.allows("pkg/new/mod.py") && g.allows("solo.py"));
    for p in [
        "zzplugin.py",
        "pyproject.toml",
        "pkg/conftest.py",
        "pkg/tests/test_x.py",
        "tests/test_core.py",
        "pytest.py",
        "_pytest/reports.py",
        "pkg/a.pth",
    ] {
        assert!(!g.allows(p), "{p}");
    }
}

#[test]
fn java_and_javascript_runner_files_are_protected() {
    let mut g = Grading::new("mvn test", Vec::new(), Vec::new(), None);
    g.editable = editable_globs(&["src/main/java/org/x/Shelf.java".into()]);
    g.protected = crate::toolchain::java_maven::JavaMaven.protected();
    assert!(g.allows("src/main/java/org/x/Shelf.java"));
    for p in [
        "pom.xml",
        "src/test/java/org/x/ShelfTest.java",
        ".mvn/maven.config",
    ] {
        assert!(!g.allows(p), "{p}");
    }
    let mut g = Grading::new("jest", Vec::new(), vec!["test/money.test.js".into()], None);
    g.editable = editable_globs(&["lib/money.js".into(), "index.js".into()]);
    g.protected = crate::toolchain::node::PROTECTED
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(g.allows("lib/money.js") && g.allows("lib/new.js") && g.allows("index.js"));
    for p in [
        "package.json",
        "jest.config.js",
        ".mocharc.json",
        "cheat.js",
        "test/setup.js",
        "lib/money.test.js",
        "node_modules/jest/index.js",
        "tsconfig.json",
    ] {
        assert!(!g.allows(p), "{p}");
    }
}

/// A temporary git repository with the given files committed; its HEAD.
fn repo(files: &[(&str, &str)]) -> Option<(tempfile::TempDir, String)> {
    let dir = tempfile::tempdir().ok()?;
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir.path())
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    git(&["init", "-q"])?;
    for (p, text) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent()?).ok()?;
        std::fs::write(path, text).ok()?;
    }
    git(&["add", "-A"])?;
    git(&["commit", "-qm", "base"])?;
    let head = String::from_utf8_lossy(&git(&["rev-parse", "HEAD"])?.stdout)
        .trim()
        .to_string();
    Some((dir, head))
}

const BASE: &[(&str, &str)] = &[
    ("pkg/core.py", "x = 1\n"),
    ("tests/test_core.py", "def test_x(): pass\n"),
    ("pyproject.toml", "[project]\nname = 'p'\n"),
];

/// The agent's cheats and its fix, written into the worktree.
fn cheat(root: &Path) {
    let w = |p: &str, t: &str| {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    };
    w("pkg/core.py", "x = 2\n");
    w(
        "pyproject.toml",
        "[tool.pytest.ini_options]\naddopts = '-p zzplugin'\n",
    );
    w("zzplugin.py", "# plugin\n");
    w("pytest.ini", "[pytest]\naddopts = -p zzplugin\n");
    w("pkg/conftest.py", "# conftest\n");
    w("tests/t\u{e9}st.py", "def test_y(): pass\n");
    w("tests/test_core.py", "def test_x(): assert True\n");
    std::fs::remove_file(root.join("tests/test_core.py")).unwrap();
}

#[test]
fn the_eval_script_keeps_only_the_source_changes() {
    let Some((dir, head)) = repo(BASE) else {
        eprintln!("skipped: no git");
        return;
    };
    cheat(dir.path());
    let script = guarded().shell_keep_sources(&head, &[]);
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "core.quotepath=off",
            "status",
            "--porcelain",
            "--untracked-files=all",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), " M pkg/core.py\n");
}

#[test]
fn git_apply_takes_only_the_source_changes() {
    let Some((dir, head)) = repo(BASE) else {
        eprintln!("skipped: no git");
        return;
    };
    cheat(dir.path());
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    git(&["add", "-A"]);
    let diff = git(&["diff", "--cached", "--binary", &head]).stdout;
    git(&["reset", "-q", "--hard", &head]);
    git(&["clean", "-fdq"]);
    std::fs::write(dir.path().join("agent.patch"), &diff).unwrap();
    let mut args: Vec<String> = vec!["apply".into()];
    args.extend(guarded().git_apply_rules(&[]));
    args.push("agent.patch".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = git(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(dir.path().join("agent.patch")).unwrap();
    let status = git(&[
        "-c",
        "core.quotepath=off",
        "status",
        "--porcelain",
        "--untracked-files=all",
    ]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), " M pkg/core.py\n");
    // The Rust filter agrees.
    let f = guarded().filter(&String::from_utf8_lossy(&diff), &[]);
    let kept: Vec<String> = crate::patch::sections(&f.patch)
        .iter()
        .map(|s| s.path().to_string())
        .collect();
    assert_eq!(kept, vec!["pkg/core.py"]);
    assert!(
        f.dropped.contains(&"tests/t\u{e9}st.py".to_string()),
        "{:?}",
        f.dropped
    );
}

fn baseline_of(ids: &[&str], order: &[&str]) -> Baseline {
    let mut b: Baseline = serde_json::from_value(serde_json::json!({
        "runs": [],
        "coverage_run": {"label": "coverage", "end": "exited", "exit_code": 0,
                         "results": {}, "duration_s": 0.0, "log_digest": ""},
        "stable_pass": [], "flaky": [], "failing": [], "durations": {},
        "suite_seconds": 1.0, "run_timeout_s": 10.0,
        "coverage": {"tests": [], "lines": {}},
    }))
    .unwrap();
    b.stable_pass = ids.iter().map(|s| s.to_string()).collect();
    b.suite_order = order.iter().map(|s| s.to_string()).collect();
    b
}

#[test]
fn a_command_by_test_names_them_file_by_file_in_the_suite_s_order() {
    let tc = crate::toolchain::python_pytest::PythonPytest;
    let trees = GradedTrees::default();
    let dir = tempfile::tempdir().unwrap();
    let b = baseline_of(
        &[
            "tests/b.py::t2",
            "tests/b.py::t1",
            "tests/a.py::x",
            "tests/a.py::y",
        ],
        &["tests/b.py", "tests/a.py"],
    );
    let ctx = |scope| GradingContext {
        toolchain: &tc,
        root: dir.path(),
        test_command: "python -m pytest",
        scope,
        graded_trees: &trees,
        test_files: &[],
    };
    let covering: BTreeSet<String> = ["tests/a.py::x", "tests/b.py::t2", "tests/b.py::t1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let g = ctx(Scope::Tests).grading_for(&covering, &b, &[]);
    assert_eq!(g.files, vec!["tests/b.py", "tests/a.py"]);
    assert_eq!(
        g.tests,
        vec!["tests/b.py::t1", "tests/b.py::t2", "tests/a.py::x"]
    );
    assert!(
        g.command
            .ends_with("tests/b.py::t1 tests/b.py::t2 tests/a.py::x"),
        "{}",
        g.command
    );
    // Read for the tests it names, not for every test of its files.
    let mut graded = ctx(Scope::Tests).graded_tests(&g, &b, &[]);
    graded.sort();
    assert_eq!(
        graded,
        vec!["tests/a.py::x", "tests/b.py::t1", "tests/b.py::t2"]
    );
    // By files: the same files, whole, read for all their stable tests.
    let f = ctx(Scope::Files).grading_for(&covering, &b, &[]);
    assert!(f.tests.is_empty() && f.files == g.files, "{f:?}");
    assert!(
        f.command.ends_with("tests/b.py tests/a.py"),
        "{}",
        f.command
    );
    assert_eq!(ctx(Scope::Files).graded_tests(&f, &b, &[]).len(), 4);
    assert_ne!(f.key(), g.key());
    // A command over files keeps the key it had before commands named tests.
    let old = blake3::hash(
        serde_json::to_string(&(&f.base_command, &f.options, &f.files, &f.config))
            .unwrap()
            .as_bytes(),
    )
    .to_hex()[..16]
        .to_string();
    assert_eq!(f.key(), old);
    // The hidden checks of a command that names tests are named too (here in a new
    // module: no file of the command is named as pytest's test modules are).
    let c = tc
        .canary(&g, "abc123", &mut |_| None)
        .expect("a test module takes them");
    let with = c.grading(&g);
    let new = "tests/test_swe_forge_abc123.py";
    assert_eq!(
        &with.tests[3..],
        &[
            format!("{new}::test_abc123_f"),
            format!("{new}::test_abc123_p")
        ]
    );
    assert_eq!(with.files.last().map(String::as_str), Some(new));
    assert!(
        with.command.ends_with(&format!("{new}::test_abc123_p")),
        "{}",
        with.command
    );
}

#[test]
fn finds_the_configuration_pytest_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("setup.cfg"), "[metadata]\nname = x\n").unwrap();
    assert_eq!(pytest_config(dir.path()), None);
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\", \"docs\"]\n",
    )
    .unwrap();
    assert_eq!(pytest_config(dir.path()).unwrap().path, "pyproject.toml");
    std::fs::write(dir.path().join("pytest.ini"), "[pytest]\n").unwrap();
    assert_eq!(pytest_config(dir.path()).unwrap().path, "pytest.ini");
}

#[test]
fn a_bounded_scope_keeps_the_failures_then_their_files_then_the_suite_s_order() {
    let covering: Vec<String> = [
        "a.py::t1", "a.py::t2", "a.py::t3", "b.py::y", "b.py::x", "c.py::m", "d.py::z",
    ]
    .map(String::from)
    .to_vec();
    // The suite runs c.py before b.py; d.py is not in its order.
    let order: Vec<String> = ["a.py", "c.py", "b.py"].map(String::from).to_vec();
    let file_of = |t: &str| t.split("::").next().unwrap().to_string();
    let failures: BTreeSet<String> = ["a.py::t3".to_string()].into();
    let pick = |max| bounded_scope(&covering, &failures, &order, &file_of, max);
    let want = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    // The failure first; then its file's tests by id; then the others in the suite's order.
    assert_eq!(pick(1), want(&["a.py::t3"]));
    assert_eq!(pick(2), want(&["a.py::t3", "a.py::t1"]));
    assert_eq!(pick(3), want(&["a.py::t3", "a.py::t1", "a.py::t2"]));
    assert_eq!(
        pick(4),
        want(&["a.py::t3", "a.py::t1", "a.py::t2", "c.py::m"])
    );
    assert_eq!(
        pick(5),
        want(&["a.py::t3", "a.py::t1", "a.py::t2", "c.py::m", "b.py::x"])
    );
    assert!(pick(6).contains("b.py::y") && !pick(6).contains("d.py::z"));
    assert_eq!(pick(100).len(), 7);
    // Failures are always kept, even past the bound.
    let many: BTreeSet<String> = covering.iter().cloned().collect();
    assert_eq!(
        bounded_scope(&covering, &many, &order, &file_of, 2).len(),
        7
    );
}

#[test]
fn a_surefire_command_selects_its_tests_or_its_files_classes_before_the_goal() {
    let g = Grading::new(
        "mvn -o -B -s /opt/s.xml",
        vec!["-DfailIfNoTests=false".into()],
        vec![
            "core/src/test/java/a/b/CTest.java".into(),
            "src/test/java/a/DTest.java".into(),
        ],
        None,
    )
    .with_select(Select::Surefire);
    assert_eq!(
        g.command,
        "mvn -o -B -s /opt/s.xml -DfailIfNoTests=false -Dtest=a.b.CTest,a.DTest test"
    );
    let g = g.with_tests(vec![
        "a.b.CTest#x".into(),
        "a.b.CTest#y".into(),
        "a.DTest#z".into(),
    ]);
    assert_eq!(
        g.command,
        "mvn -o -B -s /opt/s.xml -DfailIfNoTests=false '-Dtest=a.b.CTest#x*+y*,a.DTest#z*' test"
    );
    assert_eq!(
        g.line_with(&["-q".into()]),
        "mvn -o -B -s /opt/s.xml -DfailIfNoTests=false -q '-Dtest=a.b.CTest#x*+y*,a.DTest#z*' test"
    );
    // The choice survives a record's round trip; records without it select by arguments.
    let back: Grading = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
    assert_eq!(back, g);
    let mut v = serde_json::to_value(&g).unwrap();
    v.as_object_mut().unwrap().remove("select");
    let old: Grading = serde_json::from_value(v).unwrap();
    assert_eq!(old.select, Select::Args);
    assert_eq!(java_class_of("x/java/p/QTest.java"), "p.QTest");
    assert_eq!(java_class_of("QTest.java"), "QTest");
}
