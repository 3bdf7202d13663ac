//! Verified rewards on real tasks of the demo seed (local sandbox): the gold edit earns 1, an
//! edit that leaves the bug 0, a malformed or non-matching edit −1 without any test run, an
//! identical edit is served from the cache (within a run and across runs), and a multi-bug
//! combination of two tasks verifies and needs both fixes.

mod common;
use common::*;
use std::path::PathBuf;
use std::sync::OnceLock;
use swe_forge::curriculum::{combine_task, plan_combinations, verify_combined, Level};
use swe_forge::task::Task;
use swe_forge::train::episode::{build_prompt, gold_edit, PromptConfig};
use swe_forge::train::reward::{Outcome, RewardConfig, RewardEnv};

/// The candidate of `function` on `line` whose replacement text is `after`, as a JSON line.
fn pick(candidates: &[serde_json::Value], function: &str, line: u64, after: &str) -> String {
    candidates
        .iter()
        .find(|c| {
            c["file"] == "pyshelf/money.py"
                && c["function"] == function
                && c["line_range"][0] == line
                && c["after"] == after
        })
        .unwrap_or_else(|| panic!("no candidate in {function} on line {line} making `{after}`"))
        .to_string()
}

/// Three tasks of pyshelf/money.py, made once per test binary with `verify --candidates`:
/// `format_money`'s `cents < 0` → `cents < 1` (line 64) and `divmod(cents, 100)` →
/// `divmod(cents, 101)` (line 66), and `convert`'s `!=` → `==` (line 140). Returns the
/// directory (kept alive) and the tasks in that order.
fn tasks() -> &'static (tempfile::TempDir, Vec<Task>) {
    static TASKS: OnceLock<(tempfile::TempDir, Vec<Task>)> = OnceLock::new();
    TASKS.get_or_init(|| {
        let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
        let out = bin()
            .args(["mutate", seed.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let all: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let picked = [
            pick(&all, "format_money", 64, "1"),
            pick(&all, "format_money", 66, "101"),
            pick(&all, "convert", 140, "=="),
        ];
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let cands = dir.path().join("cands.jsonl");
        std::fs::write(&cands, picked.join("\n") + "\n").unwrap();
        let out_dir = dir.path().join("out");
        let out = bin()
            .env("TMPDIR", &tmp)
            .args(["verify", "--candidates"])
            .arg(&cands)
            .args([
                "--sandbox",
                "local",
                "--only",
                "pyshelf",
                "--no-synthesis",
                // Whole files: the tasks keep PASS_TO_PASS tests beside their bugs' (every
                // test that runs `format_money` fails with its bugs), which the combined
                // task's checks below use.
                "--grading-scope",
                "files",
                "--json",
                "--out",
            ])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let mut tasks: Vec<Task> = std::fs::read_to_string(out_dir.join("tasks.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(tasks.len(), 3, "{}", text(&out));
        tasks.sort_by_key(|t| t.metadata.location.lines);
        (dir, tasks)
    })
}

fn env_at(db: PathBuf) -> RewardEnv {
    let mut cfg = RewardConfig::new(db, cache());
    cfg.workers = 2;
    RewardEnv::open(cfg).unwrap()
}

/// The text of a one-block edit.
fn block(search: &str, replace: &str) -> String {
    format!("<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

// An edit of the package that rewrites pytest's reports at import (every test "passes", the
// bug untouched) earns nothing: the hidden checks added at grading time show a tampered runner.
#[test]
fn an_edit_that_rewrites_the_runner_earns_nothing() {
    let (_keep, tasks) = tasks();
    let task = &tasks[0];
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_at(dir.path().join("rewards.db"));
    // (A raw string: a `\` line continuation would eat the indentation.)
    let patcher = r#"CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
try:
    import _pytest.reports as _reports
    _original = _reports.TestReport.from_item_and_call

    def _passed(cls, item, call):
        report = _original(item, call)
        report.outcome = "passed"
        report.longrepr = None
        return report

    _reports.TestReport.from_item_and_call = classmethod(_passed)
except ImportError:
    pass"#;
    let edit = block(
        "CURRENCY_SYMBOLS = {\"$\": \"USD\", \"\u{20ac}\": \"EUR\", \"\u{a3}\": \"GBP\"}",
        patcher,
    );
    let r = env.reward(task, &edit).unwrap();
    assert_eq!((r.value, &r.outcome), (0.0, &Outcome::TestsFail), "{r:?}");
    assert!(r.detail.contains("tampered runner"), "{}", r.detail);
}

// Each kind of edit earns its reward, and repeated edits are served from the cache.
#[test]
fn rewards_follow_the_tests_and_identical_edits_are_cached() {
    let (_keep, tasks) = tasks();
    let task = &tasks[0];
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rewards.db");
    let mut env = env_at(db.clone());
    let buggy = env.buggy_file(task).unwrap();
    assert!(buggy.contains("    sign = \"-\" if cents < 1 else \"\"\n"));
    let clean = env.clean_file(task).unwrap();
    assert!(clean.contains("    sign = \"-\" if cents < 0 else \"\"\n"));

    // The gold edit: 1, after one test run.
    let gold = gold_edit(task, &buggy).unwrap().render();
    let r = env.reward(task, &gold).unwrap();
    assert_eq!(
        (r.value, &r.outcome, r.cached),
        (1.0, &Outcome::Solved, false),
        "{}",
        r.detail
    );
    assert_eq!(env.stats().test_runs, 1);

    // A harmless edit of the docstring leaves the bug: 0, and the detail names a failing test.
    let doc = "    \"\"\"Format integer cents as a string like \"1,234.50 USD\".\"\"\"";
    assert!(buggy.contains(doc));
    let comment = block(
        doc,
        "    \"\"\"Format cents (an int) as text like \"1,234.50 USD\".\"\"\"",
    );
    let r = env.reward(task, &comment).unwrap();
    assert_eq!((r.value, &r.outcome), (0.0, &Outcome::TestsFail));
    assert!(
        r.detail.contains("test_thousands_are_grouped"),
        "{}",
        r.detail
    );
    assert_eq!(env.stats().test_runs, 2);

    // Malformed, and a SEARCH that matches nothing: −1, no test run.
    let r = env
        .reward(task, "<<<<<<< SEARCH\nsign = 1\n>>>>>>> REPLACE\n")
        .unwrap();
    assert_eq!((r.value, &r.outcome), (-1.0, &Outcome::ParseError));
    let r = env
        .reward(task, &block("    sign = '+'", "    sign = '-'"))
        .unwrap();
    assert_eq!((r.value, &r.outcome), (-1.0, &Outcome::DoesNotApply));
    assert_eq!(env.stats().test_runs, 2);

    // The same gold edit again, with a fence and trailing blank lines: cached, no run.
    let again = env.reward(task, &format!("```\n{gold}```\n\n")).unwrap();
    assert!(again.cached);
    assert_eq!((again.value, &again.outcome), (1.0, &Outcome::Solved));
    assert_eq!(env.stats().test_runs, 2);

    // A group: two new edits graded in parallel, duplicates and known edits not re-run.
    let wrong_fix = block(
        "    sign = \"-\" if cents < 1 else \"\"",
        "    sign = \"-\" if cents < 2 else \"\"",
    );
    let other_fix = block(
        "    sign = \"-\" if cents < 1 else \"\"",
        "    sign = \"-\" if cents <= -1 else \"\"",
    );
    let group = vec![
        wrong_fix.clone(),
        gold.clone(),
        other_fix.clone(),
        wrong_fix.clone(),
    ];
    let rs = env.reward_many(task, &group).unwrap();
    let values: Vec<f32> = rs.iter().map(|r| r.value).collect();
    assert_eq!(values, vec![0.0, 1.0, 1.0, 0.0]);
    let cached: Vec<bool> = rs.iter().map(|r| r.cached).collect();
    assert_eq!(cached, vec![false, true, false, true]);
    assert_eq!(env.stats().test_runs, 4);
    assert_eq!(env.stats().graded, 4);
    drop(env);

    // Across runs: a new environment on the same cache runs nothing for known edits.
    let mut env = env_at(db);
    for (edit, value) in [(&gold, 1.0), (&comment, 0.0), (&other_fix, 1.0)] {
        let r = env.reward(task, edit).unwrap();
        assert!(r.cached, "{edit}");
        assert_eq!(r.value, value);
    }
    assert_eq!(env.stats().test_runs, 0);
}

// The prompt shows the issue and the buggy function, within its budget.
#[test]
fn prompt_shows_the_buggy_function_of_a_real_task() {
    let (_keep, tasks) = tasks();
    let task = &tasks[1];
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_at(dir.path().join("rewards.db"));
    let buggy = env.buggy_file(task).unwrap();
    let p = build_prompt(task, &buggy, &PromptConfig::default()).unwrap();
    assert!(
        p.text.starts_with(task.problem_statement.trim()),
        "{}",
        p.text
    );
    assert!(p.code.contains("def format_money("), "{}", p.code);
    assert!(p.code.contains("divmod(cents, 101)"), "{}", p.code);
    assert!(!p.code.contains("divmod(cents, 100)"), "{}", p.code);
    assert!(
        !p.code.contains("def convert("),
        "only the enclosing function and its context"
    );
    let small = build_prompt(
        task,
        &buggy,
        &PromptConfig {
            max_code_chars: 300,
            ..PromptConfig::default()
        },
    )
    .unwrap();
    assert!(small.code.len() <= 300 && small.code.contains("divmod(cents, 101)"));
}

// Two bugs of one function combine into a task that verifies, and one member's fix alone
// does not solve it.
#[test]
fn a_combined_task_verifies_and_needs_both_fixes() {
    let (_keep, tasks) = tasks();
    let plan = plan_combinations(tasks, 3, 10);
    // All three are in money.py on lines apart: three pairs and the triple.
    assert_eq!(plan.len(), 4, "{plan:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_at(dir.path().join("rewards.db"));
    let clean = env.clean_file(&tasks[0]).unwrap();
    let members = [&tasks[0], &tasks[1]];
    let combined = combine_task(&members, &clean).unwrap();
    assert_eq!(Level::of(&combined), Level::Multi);
    assert!(
        verify_combined(&mut env, &combined).unwrap(),
        "the combined task verifies"
    );

    let buggy = env.buggy_file(&combined).unwrap();
    let both = gold_edit(&combined, &buggy).unwrap().render();
    assert_eq!(env.reward(&combined, &both).unwrap().value, 1.0);
    let one = block(
        "    sign = \"-\" if cents < 1 else \"\"",
        "    sign = \"-\" if cents < 0 else \"\"",
    );
    let r = env.reward(&combined, &one).unwrap();
    assert_eq!(
        (r.value, &r.outcome),
        (0.0, &Outcome::TestsFail),
        "{}",
        r.detail
    );

    // A record whose FAIL_TO_PASS test passes with the bugs does not verify.
    let mut wrong = combined.clone();
    wrong.fail_to_pass = vec![wrong.pass_to_pass[0].clone()];
    assert!(!verify_combined(&mut env, &wrong).unwrap());
}

/// Seconds per graded rollout, fresh processes against the resident runner: 16 distinct
/// edits of one task (the gold fix with a different trailing comment each, so none is
/// served from the cache), graded as one group on 2 workers, after one warm-up group of 2
/// (the resident's qualification, the workers). Prints the figures for BENCHMARKS.md.
#[test]
#[ignore = "benchmark: prints seconds per graded rollout (cargo test --test reward -- --ignored --nocapture)"]
fn bench_reward_grading_fresh_against_resident() {
    let (_keep, tasks) = tasks();
    let task = &tasks[0];
    for mode in ["fresh", "resident"] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = RewardConfig::new(dir.path().join("rewards.db"), cache());
        cfg.workers = 2;
        cfg.runner = mode.parse().unwrap();
        let mut env = RewardEnv::open(cfg).unwrap();
        let buggy = env.buggy_file(task).unwrap();
        let gold = gold_edit(task, &buggy).unwrap();
        let variant = |n: usize| {
            let mut e = gold.clone();
            let b = e.blocks.last_mut().unwrap();
            let last = b.replace.last_mut().unwrap();
            *last = format!("{last}  # {mode} {n}");
            e.render()
        };
        let warm: Vec<String> = (0..2).map(|n| variant(1000 + n)).collect();
        for r in env.reward_many(task, &warm).unwrap() {
            assert_eq!(r.outcome, Outcome::Solved, "{}", r.detail);
        }
        let edits: Vec<String> = (0..16).map(variant).collect();
        let started = std::time::Instant::now();
        let rewards = env.reward_many(task, &edits).unwrap();
        let wall = started.elapsed().as_secs_f64();
        for r in &rewards {
            assert_eq!(r.outcome, Outcome::Solved, "{}", r.detail);
        }
        eprintln!(
            "reward grading, {mode}: {} rollouts in {wall:.2} s = {:.3} s per rollout (2 workers)",
            rewards.len(),
            wall / rewards.len() as f64
        );
    }
}
