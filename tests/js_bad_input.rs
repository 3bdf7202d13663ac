//! JavaScript projects as they come, through the real binary (jest on the host, the local
//! sandbox; the Docker path of the same checks runs in `tests/harnesses.rs` on jsshelf):
//!
//! - `js_missing_deps`: a devDependency the test file loads that Debian's node packages lack and
//!   no registry has: the seed is not run, and the message names the package (and says that
//!   the one no test loads is not needed);
//! - `js_broken_import`: a table filled at load time by `register`: its mutants are screened
//!   with the whole suite (their lines run outside any test), and the one that makes loading
//!   throw is a kill (the test file's tests are ERRORs), with the exception in the issue text;
//! - `js_mocha_units`: mocha with node's `assert`: per-test coverage, and a load that throws
//!   is a kill in its test file while the other test file still runs;
//! - `js_node_units`: node's built-in test runner: ids with the suites' names, no per-test
//!   coverage (screening by the module's test file), a file that cannot load is a kill;
//! - `js_process_exit`: a mutant that calls `process.exit` fails its test (swe-forge's exit
//!   guard), and one that kills jest's process leaves no report: its file is found by running
//!   the files again in halves, its tests are ERRORs, the other files' pass;
//! - `ts_ranges`: TypeScript through ts-jest: tested by the `typescript_jest` toolchain, its
//!   coverage mapped back to the `.ts` lines, its mutants made into tasks.
//!
//! In the mocha, node-test and jest (`js_process_exit`) runs, `train`'s reward grades one task:
//! the gold edit earns 1, and a source module that makes failing tests pass (wrapping the
//! global `test`/`it`) or neuters node's `assert` earns 0: the hidden tests grading adds to
//! the graded file show a tampered runner.

mod common;
use common::*;

/// Wraps the framework's global `test`/`it` so that a failing test passes: run from a source
/// module the test file requires before it declares its tests.
const SWALLOWING_TESTS: &str = "for (const k of ['test', 'it']) {\n\
  const real = global[k];\n\
  if (typeof real === 'function') {\n\
    global[k] = (name, fn) => real(name, function () { try { fn.call(this); } catch (e) { return undefined; } });\n\
  }\n\
}";

/// Neuters node's `assert` (the functions the fixtures' tests call): run from a source module.
const NEUTERED_ASSERT: &str = "{\n\
  const a = require('node:assert');\n\
  a.strictEqual = () => {};\n\
  a.deepStrictEqual = () => {};\n\
  a.throws = () => {};\n\
}";

/// `train`'s reward on one of the run's tasks whose FAIL_TO_PASS tests fail on the bug (not a
/// load error): the gold edit earns 1; an edit of the buggy file that adds `tamper` after
/// its first line earns 0, the hidden tests added at grading time showing a tampered runner.
fn tampering_is_caught(tasks: &[serde_json::Value], tamper: &str) {
    use swe_forge::train::episode::gold_edit;
    use swe_forge::train::reward::{Outcome, RewardConfig, RewardEnv};
    let task = tasks
        .iter()
        .find(|t| {
            let runs = t["metadata"]["verification"]["runs"].as_array().unwrap();
            let buggy = runs.iter().find(|r| r["label"] == "buggy#1").unwrap();
            t["FAIL_TO_PASS"]
                .as_array()
                .unwrap()
                .iter()
                .all(|id| buggy["results"][id.as_str().unwrap()]["status"] == "FAILED")
        })
        .unwrap_or_else(|| panic!("no task whose tests fail on the bug: {tasks:?}"));
    let task: swe_forge::task::Task = serde_json::from_value(task.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = RewardConfig::new(dir.path().join("rewards.db"), cache());
    cfg.workers = 1;
    let mut env = RewardEnv::open(cfg).unwrap();
    let buggy = env.buggy_file(&task).unwrap();
    let gold = gold_edit(&task, &buggy).unwrap().render();
    let r = env.reward(&task, &gold).unwrap();
    assert_eq!(
        (r.value, &r.outcome),
        (1.0, &Outcome::Solved),
        "{}: {}",
        task.instance_id,
        r.detail
    );
    let first = buggy.lines().next().unwrap();
    let edit = format!("<<<<<<< SEARCH\n{first}\n=======\n{first}\n{tamper}\n>>>>>>> REPLACE\n");
    let r = env.reward(&task, &edit).unwrap();
    assert_eq!(
        (r.value, &r.outcome),
        (0.0, &Outcome::TestsFail),
        "{}: {}",
        task.instance_id,
        r.detail
    );
    assert!(
        r.detail.contains("tampered runner") && r.detail.contains("must fail"),
        "{}: {}",
        task.instance_id,
        r.detail
    );
}

#[test]
fn a_dependency_no_one_has_rejects_the_seed_naming_it() {
    if !jest_or_skip("a_dependency_no_one_has_rejects_the_seed_naming_it") {
        return;
    }
    let (out, _dir) = run_fixture("js_missing_deps", &[]);
    // The only seed could not be run: exit 3.
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seed = &summary["seeds"][0];
    assert_ne!(seed["status"], "done", "{seed}");
    let detail = seed["detail"].as_str().unwrap();
    assert!(
        detail.contains("not among this machine's node packages: swe-forge-not-a-debian-package"),
        "the message names the package the tests load: {detail}"
    );
    // A devDependency no test loads (a linter) does not stop a seed.
    assert!(
        detail.contains("not needed by the tests, and not among this machine's node packages: swe-forge-lint-only-not-a-package"),
        "{detail}"
    );
    assert!(!detail.contains("\"jest\""), "jest is met: {detail}");
}

#[test]
fn load_time_code_is_screened_by_every_test_and_a_load_that_throws_is_a_kill() {
    if !jest_or_skip("load_time_code_is_screened_by_every_test_and_a_load_that_throws_is_a_kill") {
        return;
    }
    let (out, dir) = run_fixture("js_broken_import", &["--max-candidates", "20"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let register: Vec<&serde_json::Value> = cands
        .iter()
        .filter(|c| c["function"] == "register")
        .collect();
    assert!(register.len() >= 2, "{cands:?}");
    for c in &register {
        assert_eq!(c["covering_tests"], 3, "screened with the whole suite: {c}");
        assert_ne!(c["reason"], "not-covered", "{c}");
    }
    // `if (!singular || !plural)` negated: the first registration throws while the module
    // loads; the test file cannot run, so each of its tests is an ERROR: a kill.
    let broken = register
        .iter()
        .find(|c| c["mutator"] == "js-negate-condition")
        .unwrap_or_else(|| panic!("no negated guard in register: {register:?}"));
    assert_eq!(broken["status"], "accepted", "{broken}");
    assert_eq!(broken["fail_to_pass"], 3, "{broken}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task = tasks
        .iter()
        .find(|t| t["metadata"]["candidate_id"] == broken["id"])
        .expect("the broken load's task");
    assert_eq!(
        task["metadata"]["environment"]["toolchain"], "javascript_jest",
        "{task}"
    );
    let statement = task["problem_statement"].as_str().unwrap();
    assert!(
        statement.contains("register needs both forms"),
        "the issue quotes the exception: {statement}"
    );
    // The record carries no path of this machine.
    let record = serde_json::to_string(task).unwrap();
    assert!(!record.contains("swe-forge-wt-"), "{record}");
}

#[test]
fn a_typescript_project_runs_through_ts_jest_with_coverage_on_its_own_lines() {
    if !jest_or_skip("a_typescript_project_runs_through_ts_jest_with_coverage_on_its_own_lines") {
        return;
    }
    let (out, dir) = run_fixture("ts_ranges", &["--max-candidates", "12"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    assert!(cands.len() >= 8, "{cands:?}");
    for c in &cands {
        assert_eq!(c["file"], "src/range.ts", "{c}");
        // Every function is called by a test: coverage on the source's lines finds them all.
        assert_ne!(c["reason"], "not-covered", "{c}");
    }
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    assert!(tasks.len() >= 6, "{}", text(&out));
    for t in &tasks {
        assert_eq!(
            t["metadata"]["environment"]["toolchain"], "typescript_jest",
            "{t}"
        );
        assert_eq!(t["language"], "typescript", "{t}");
        for id in t["FAIL_TO_PASS"].as_array().unwrap() {
            assert!(
                id.as_str().unwrap().starts_with("test/range.test.ts::"),
                "{id}"
            );
        }
    }
    // `clamp`'s candidates are screened by the one test that calls it, not by all six.
    let clamp: Vec<&serde_json::Value> =
        cands.iter().filter(|c| c["function"] == "clamp").collect();
    assert!(!clamp.is_empty(), "{cands:?}");
    for c in clamp {
        assert_eq!(c["covering_tests"], 1, "{c}");
    }
}

/// Whether mocha is on this host (Debian's `mocha`), else a notice (or a failure under
/// `SWE_FORGE_REQUIRE_NODE=1`).
fn mocha_or_skip(test: &str) -> bool {
    let ok = std::process::Command::new("mocha")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("SWE_FORGE_REQUIRE_NODE").as_deref() == Ok("1") {
        panic!("{test}: mocha is not installed and SWE_FORGE_REQUIRE_NODE=1");
    }
    if !ok {
        eprintln!("skipping {test}: mocha is not installed (Debian's `mocha` package)");
    }
    ok
}

#[test]
fn a_mocha_project_gets_per_test_coverage_and_a_load_that_throws_is_a_kill() {
    let test = "a_mocha_project_gets_per_test_coverage_and_a_load_that_throws_is_a_kill";
    if !mocha_or_skip(test) {
        return;
    }
    let (out, dir) = run_fixture("js_mocha_units", &["--max-candidates", "30"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    // Per-test coverage: `fixed` and `withUnit` are screened by format's tests only.
    let format: Vec<&serde_json::Value> = cands
        .iter()
        .filter(|c| c["file"] == "lib/format.js")
        .collect();
    assert!(!format.is_empty(), "{cands:?}");
    for c in &format {
        let n = c["covering_tests"].as_u64().unwrap();
        assert!((1..=3).contains(&n), "{c}");
    }
    // `define` runs while the module loads: screened by all six tests.
    let define: Vec<&serde_json::Value> =
        cands.iter().filter(|c| c["function"] == "define").collect();
    assert!(!define.is_empty(), "{cands:?}");
    for c in &define {
        assert_eq!(c["covering_tests"], 6, "{c}");
    }
    // The guard negated: the first `define` throws while mocha loads the test file; that
    // file's three tests are ERRORs, format's three still pass.
    let broken = define
        .iter()
        .find(|c| c["mutator"] == "js-negate-condition")
        .unwrap_or_else(|| panic!("no negated guard in define: {define:?}"));
    assert_eq!(broken["status"], "accepted", "{broken}");
    assert_eq!(broken["fail_to_pass"], 3, "{broken}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task = tasks
        .iter()
        .find(|t| t["metadata"]["candidate_id"] == broken["id"])
        .unwrap();
    assert_eq!(
        task["metadata"]["environment"]["toolchain"],
        "javascript_mocha"
    );
    for id in task["FAIL_TO_PASS"].as_array().unwrap() {
        assert!(
            id.as_str()
                .unwrap()
                .starts_with("test/units.test.js::convert "),
            "{id}"
        );
    }
    let p2p: Vec<&str> = task["PASS_TO_PASS"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(p2p.len(), 3, "{p2p:?}");
    assert!(p2p
        .iter()
        .all(|i| i.starts_with("test/format.test.js::format ")));
    assert!(
        task["problem_statement"]
            .as_str()
            .unwrap()
            .contains("bad factor for mm"),
        "{}",
        task["problem_statement"]
    );
    // Grading hides two tests in the graded file: a source module that makes failing tests
    // pass is caught.
    tampering_is_caught(&tasks, SWALLOWING_TESTS);
}

#[test]
fn code_that_ends_the_process_is_a_failing_test_not_a_lost_run() {
    if !jest_or_skip("code_that_ends_the_process_is_a_failing_test_not_a_lost_run") {
        return;
    }
    let (out, dir) = run_fixture("js_process_exit", &["--max-candidates", "60"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task_of = |c: &serde_json::Value| {
        tasks
            .iter()
            .find(|t| t["metadata"]["candidate_id"] == c["id"])
            .unwrap_or_else(|| panic!("no task for {c}"))
            .clone()
    };
    let ids = |t: &serde_json::Value, k: &str| -> Vec<String> {
        let mut v: Vec<String> = t[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let buggy = |t: &serde_json::Value| {
        t["metadata"]["verification"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "buggy#1")
            .unwrap()
            .clone()
    };

    // process.exit(2) for a good port: the guard makes it a failing test.
    let exits = cands
        .iter()
        .find(|c| {
            c["function"] == "parsePort"
                && c["mutator"] == "js-negate-condition"
                && c["before"]
                    .as_str()
                    .is_some_and(|b| b.contains("Number.isInteger"))
        })
        .unwrap_or_else(|| panic!("no negated range check in parsePort: {cands:?}"));
    assert_eq!(exits["status"], "accepted", "{exits}");
    let task = task_of(exits);
    assert_eq!(
        ids(&task, "FAIL_TO_PASS"),
        [
            "test/args.test.js::a bad port throws when asked not to exit",
            "test/args.test.js::reads a port",
            "test/args.test.js::reads an address",
        ]
    );
    let b = buggy(&task);
    let port = &b["results"]["test/args.test.js::reads a port"];
    assert_eq!(port["status"], "FAILED", "{b}");
    assert!(
        port["message"]
            .as_str()
            .is_some_and(|m| m.contains("process.exit(2) was called")),
        "{port}"
    );
    assert!(
        b["collection_errors"]
            .as_object()
            .is_none_or(|e| e.is_empty()),
        "{b}"
    );
    // The tests after the one that called `process.exit` still ran and failed on their own
    // assertions: the run was not lost.
    for id in [
        "test/args.test.js::a bad port throws when asked not to exit",
        "test/args.test.js::reads an address",
    ] {
        assert_eq!(b["results"][id]["status"], "FAILED", "{id}: {b}");
    }
    // Graded: the file of the covering tests, whole; join.test.js does not run this code.
    assert_eq!(
        task["metadata"]["grading"]["files"],
        serde_json::json!(["test/args.test.js"]),
        "{task}"
    );
    assert!(
        ids(&task, "PASS_TO_PASS")
            .iter()
            .all(|t| t.starts_with("test/args.test.js::")),
        "{task}"
    );

    // SIGKILL of its own process: no report; the file's tests are ERRORs.
    let kills = cands
        .iter()
        .find(|c| c["function"] == "stopNow" && c["mutator"] == "js-negate-condition")
        .unwrap_or_else(|| panic!("no negated condition in stopNow: {cands:?}"));
    assert_eq!(kills["status"], "accepted", "{kills}");
    let task = task_of(kills);
    assert_eq!(
        ids(&task, "FAIL_TO_PASS"),
        ["test/stop.test.js::a later stop keeps running"]
    );
    let b = buggy(&task);
    assert!(
        b["collection_errors"]["test/stop.test.js"]
            .as_str()
            .is_some_and(|e| e.contains("the test process exited")),
        "{b}"
    );
    // Graded: stop.test.js alone, so the lost report costs no other file's results.
    assert_eq!(
        task["metadata"]["grading"]["files"],
        serde_json::json!(["test/stop.test.js"]),
        "{task}"
    );
    // Grading hides two tests in the graded file: a source module that makes failing tests
    // pass is caught.
    tampering_is_caught(&tasks, SWALLOWING_TESTS);
}

#[test]
fn a_node_test_project_runs_through_nodes_own_runner() {
    let test = "a_node_test_project_runs_through_nodes_own_runner";
    if !jest_or_skip(test) {
        return;
    }
    let (out, dir) = run_fixture("js_node_units", &["--max-candidates", "30"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(dir.path());
    // No per-test coverage: `fixed` is screened by the tests of test/format.test.js.
    let fixed: Vec<&serde_json::Value> =
        cands.iter().filter(|c| c["function"] == "fixed").collect();
    assert!(!fixed.is_empty(), "{cands:?}");
    for c in &fixed {
        assert_eq!(c["covering_tests"], 3, "{c}");
    }
    let broken = cands
        .iter()
        .find(|c| c["function"] == "define" && c["mutator"] == "js-negate-condition")
        .unwrap_or_else(|| panic!("no negated guard in define: {cands:?}"));
    assert_eq!(broken["status"], "accepted", "{broken}");
    let tasks = jsonl(&dir.path().join("out/tasks.jsonl"));
    let task = tasks
        .iter()
        .find(|t| t["metadata"]["candidate_id"] == broken["id"])
        .unwrap();
    assert_eq!(
        task["metadata"]["environment"]["toolchain"], "javascript_node_test",
        "{task}"
    );
    let mut f2p: Vec<&str> = task["FAIL_TO_PASS"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    f2p.sort();
    // The suites' names are part of the ids.
    assert_eq!(
        f2p,
        [
            "test/units.test.js::convert lengths goes from km to m",
            "test/units.test.js::convert lengths goes from mm to cm",
            "test/units.test.js::convert refuses an unknown unit",
        ]
    );
    // Graded: units.test.js whole (the file of the covering tests); format.test.js never loads
    // units.js, so it is not part of the grading command and gives no PASS_TO_PASS.
    assert_eq!(
        task["metadata"]["grading"]["files"],
        serde_json::json!(["test/units.test.js"]),
        "{task}"
    );
    assert_eq!(
        task["metadata"]["grading"]["command"], "node --test test/units.test.js",
        "{task}"
    );
    assert_eq!(task["PASS_TO_PASS"], serde_json::json!([]), "{task}");
    assert!(
        task["problem_statement"]
            .as_str()
            .unwrap()
            .contains("bad factor for mm"),
        "{}",
        task["problem_statement"]
    );
    // Another task, killed by one test of a nested suite: the selection found it by name.
    let other = tasks
        .iter()
        .filter(|t| t["metadata"]["candidate_id"] != broken["id"])
        .find(|t| t["FAIL_TO_PASS"].as_array().unwrap().len() == 1);
    assert!(other.is_some(), "{tasks:?}");
    // Grading hides two tests in the graded file: a source module that neuters `assert` is
    // caught.
    tampering_is_caught(&tasks, NEUTERED_ASSERT);
}
