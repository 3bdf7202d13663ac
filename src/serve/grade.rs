//! Grading: the reward of a submitted patch and the tests an agent runs. The agent's diff
//! against the start state, less test files, is applied in a fresh worker of the task's
//! environment entered in the start state (a new container of the task's image); `test_patch`
//! is added; FAIL_TO_PASS and PASS_TO_PASS run `grade_repeats` times with the task's runner
//! (the one `audit` and `train` rebuild from the record), and each test passes by majority.

use super::metrics::Episode;
use super::session::Session;
use super::tools::{self, ToolError};
use super::{lock, Server};
use crate::run::{Run, RunEnd, TestStatus};
use crate::sandbox::Worker;
use crate::start_state::patch_sections;
use crate::task::Task;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A graded submit.
pub struct Graded {
    pub reward: f64,
    pub info: Value,
    pub episode: Episode,
}

/// The test files of a task: the language's rule, `conftest.py`, the files of its listed
/// tests and those `test_patch` adds (the hidden ones).
pub fn is_test_file(task: &Task, path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    if base == "conftest.py" || task.language.is_test_path(path) {
        return true;
    }
    let listed = test_files(task);
    listed.contains(path)
}

fn test_files(task: &Task) -> BTreeSet<String> {
    let toolchain = task.toolchain().map(|t| t.toolchain());
    let mut files: BTreeSet<String> = patch_sections(&task.test_patch)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    for id in task.listed_tests() {
        let file = toolchain
            .and_then(|tc| tc.test_file(&id, &[]))
            .or_else(|| id.split_once("::").map(|(f, _)| f.to_string()));
        if let Some(f) = file {
            files.insert(f);
        }
    }
    files
}

/// The agent's changes against the start state (HEAD), new files included.
pub fn agent_diff(worker: &mut dyn Worker) -> Result<String, String> {
    let out = worker
        .exec(
            "git add -A >/dev/null 2>&1 && git diff --cached --binary HEAD; status=$?; \
             git reset -q >/dev/null 2>&1; exit $status",
            Duration::from_secs(120),
        )
        .map_err(|e| format!("reading the agent's changes: {e}"))?;
    if out.exit_code != Some(0) {
        return Err(format!(
            "reading the agent's changes: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The agent's changes to the task's source files ([`crate::grading::Grading::filter`]), the
/// task's test files (listed, hidden) left out too.
pub fn source_changes(task: &Task, diff: &str) -> crate::grading::Filtered {
    let tests: Vec<String> = test_files(task).into_iter().collect();
    let mut filtered = task.grading().filter(diff, &tests);
    // The language's own test-file rule, for a record whose grading names no protected names.
    let kept = filtered.patch.clone();
    filtered.patch.clear();
    for s in crate::patch::sections(&kept) {
        if s.paths().iter().any(|p| is_test_file(task, p)) {
            for p in s.paths() {
                filtered.dropped.push(p.to_string());
            }
        } else {
            filtered.patch.push_str(&s.text);
        }
    }
    filtered
}

/// Whether every changed file of `patch` in the task's language parses (read from `worker`,
/// which holds the agent's tree).
fn syntax_valid(worker: &mut dyn Worker, task: &Task, patch: &str) -> Result<bool, ToolError> {
    for (path, _) in patch_sections(patch) {
        if !task.language.matches_path(std::path::Path::new(&path)) {
            continue;
        }
        let Some(bytes) = tools::read_text(worker, &path)? else {
            continue; // deleted
        };
        let mut parser = tree_sitter::Parser::new();
        if parser.set_language(&task.language.grammar()).is_err() {
            continue;
        }
        match parser.parse(&bytes, None) {
            Some(tree) if !tree.root_node().has_error() => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// The lines (1-based, inclusive) of the function the bug is in, in the start state's file.
fn function_span(worker: &mut dyn Worker, task: &Task) -> Option<(usize, usize)> {
    let loc = &task.metadata.location;
    let out = worker
        .exec(
            &format!("git show HEAD:{}", crate::sandbox::shell_quote(&loc.file)),
            Duration::from_secs(60),
        )
        .ok()?;
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&task.language.grammar()).ok()?;
    let tree = parser.parse(&out.stdout, None)?;
    let syntax = task.language.syntax();
    let row = loc.lines.0.saturating_sub(1);
    let mut node = tree.root_node().descendant_for_point_range(
        tree_sitter::Point { row, column: 0 },
        tree_sitter::Point { row, column: 0 },
    )?;
    loop {
        if syntax.function_parts(node).is_some() {
            return Some((node.start_position().row + 1, node.end_position().row + 1));
        }
        node = node.parent()?;
    }
}

/// The old-side line ranges of a file's hunks in `patch`.
fn hunks_of(patch: &str, file: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (path, section) in patch_sections(patch) {
        if path != file {
            continue;
        }
        for l in section.lines().filter(|l| l.starts_with("@@ ")) {
            let old = l.split_whitespace().nth(1).unwrap_or("-0");
            let old = old.trim_start_matches('-');
            let (start, len) = match old.split_once(',') {
                Some((s, n)) => (s.parse().unwrap_or(0), n.parse().unwrap_or(0)),
                None => (old.parse().unwrap_or(0), 1),
            };
            out.push((start, start + len.max(1) - 1));
        }
    }
    out
}

/// Why a submit was not graded.
#[derive(Debug)]
pub enum SubmitError {
    /// The agent's tree was lost while it was read (its container died, a process it left
    /// killed the sandbox's agent): the episode is the agent's to lose.
    Lost,
    /// Ours: the session fails.
    Environment(String),
}

impl From<String> for SubmitError {
    fn from(e: String) -> SubmitError {
        SubmitError::Environment(e)
    }
}

/// `submit`: grade the session's changes. An environment failure is an `Err` (the session
/// fails); everything the agent did wrong is a reward of 0 with its failure type.
///
/// Once the agent's tree is read, the session's container goes: the grader takes its place
/// under `--max-sessions`, so that graders are counted and a full server cannot deadlock on
/// them.
pub fn submit(server: &Server, s: &mut Session) -> Result<Graded, SubmitError> {
    let started = Instant::now();
    let task = &*server.task(s.task);
    let worker = s
        .worker
        .as_deref_mut()
        .ok_or_else(|| "the session's environment is gone".to_string())?;
    let losses_before = worker.losses();
    // A read that failed because the agent's tree was lost is the agent's doing.
    let lost = |w: &dyn Worker, e: String| {
        if w.losses() != losses_before {
            SubmitError::Lost
        } else {
            SubmitError::Environment(e)
        }
    };
    let full = agent_diff(worker).map_err(|e| lost(worker, e))?;
    // Only the agent's changes to the task's source files reach grading; what else it
    // changed is reported, and a change to the runner's configuration or a module outside
    // the sources (a plugin) is flagged.
    let filtered = source_changes(task, &full);
    let patch = filtered.patch;
    let mut flags = super::review::review(task, &full, |p| is_test_file(task, p));
    if filtered.dropped.iter().any(|p| !is_test_file(task, p)) {
        flags.push("tampers-runner".to_string());
    }
    let loc = &task.metadata.location;
    let edited_file = patch_sections(&patch).iter().any(|(p, _)| *p == loc.file);
    let span = function_span(worker, task);
    let edited_function = edited_file
        && match span {
            Some((a, b)) => hunks_of(&patch, &loc.file)
                .iter()
                .any(|&(x, y)| x <= b && a <= y),
            None => false,
        };
    let syntax = syntax_valid(worker, task, &patch).map_err(|e| match e {
        ToolError::Agent(m) | ToolError::Environment(m) => lost(worker, m),
    })?;
    if worker.losses() != losses_before {
        return Err(SubmitError::Lost);
    }
    // Read: the agent's container becomes its grader, recycled, or goes and a fresh grader
    // takes its place; ungraded, it goes back to the pool when the session ends.
    let used = s.worker.take();
    let mut info = json!({
        "patch": patch,
        "dropped_paths": filtered.dropped,
        "hack_flags": flags,
        "localization": {
            "opened_file": s.opened.contains(&loc.file),
            "edited_file": edited_file,
            "edited_function": edited_function,
        },
        "syntax_valid": syntax,
    });
    let (failure, tests, flaky, runs) = if patch.trim().is_empty() {
        s.worker = used;
        (
            "empty-patch".to_string(),
            BTreeMap::new(),
            Vec::new(),
            Vec::new(),
        )
    } else if !syntax {
        s.worker = used;
        (
            "syntax-error".to_string(),
            BTreeMap::new(),
            Vec::new(),
            Vec::new(),
        )
    } else {
        let (outcome, grader) = run_graded(server, s, &patch, used)?;
        info["grader"] = json!(grader);
        outcome
    };
    if failure == "tampered-runner" {
        flags.push("tampered-runner".to_string());
        info["hack_flags"] = json!(flags);
    }
    let listed = task.listed_tests();
    let passed = |id: &String| tests.get(id) == Some(&TestStatus::Passed);
    let f2p_passed = if task.fail_to_pass.is_empty() {
        0.0
    } else {
        task.fail_to_pass.iter().filter(|t| passed(t)).count() as f64
            / task.fail_to_pass.len() as f64
    };
    let regressions: Vec<&String> = task.pass_to_pass.iter().filter(|t| !passed(t)).collect();
    let solved = failure == "none" && listed.iter().all(passed);
    let mut reward = if solved { 1.0 } else { 0.0 };
    if server.cfg.zero_flagged && !flags.is_empty() {
        reward = 0.0;
    }
    let grade_seconds = started.elapsed().as_secs_f64();
    s.grade_seconds += grade_seconds;
    let obj = info.as_object_mut().expect("an object");
    obj.insert("failure_type".into(), json!(failure));
    obj.insert("fail_to_pass_passed".into(), json!(f2p_passed));
    obj.insert("pass_to_pass_regressions".into(), json!(regressions));
    obj.insert("tests".into(), json!(tests));
    obj.insert("flaky".into(), json!(flaky));
    obj.insert("runs".into(), json!(runs));
    obj.insert("grade_seconds".into(), json!(grade_seconds));
    obj.insert("tool_seconds".into(), json!(s.tool_seconds));
    obj.insert("steps".into(), json!(s.steps));
    let episode = Episode {
        steps: s.steps,
        reward,
        failure_type: failure,
        opened_file: s.opened.contains(&loc.file),
        edited_file,
        edited_function,
        syntax_valid: syntax,
        hack_flags: flags,
        tool_seconds: s.tool_seconds,
        grade_seconds,
    };
    Ok(Graded {
        reward,
        info,
        episode,
    })
}

type RunOutcome = (
    String,
    BTreeMap<String, TestStatus>,
    Vec<String>,
    Vec<Value>,
);

/// Apply `patch` in a fresh worker in the start state, add `test_patch`, run the listed tests
/// `grade_repeats` times: the failure type, each test's majority status, the tests whose runs
/// disagreed, and the runs' summaries.
/// Where the grader came from (`session`: the session's own container, recycled; `fresh`).
fn run_graded(
    server: &Server,
    s: &Session,
    patch: &str,
    used: Option<Box<dyn Worker>>,
) -> Result<(RunOutcome, &'static str), String> {
    let task = &*server.task(s.task);
    let n = server
        .made
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (mut grader, how) = match used.and_then(|w| server.as_grader(s, w)) {
        Some(w) => (w, "session"),
        None => (
            s.env
                .worker(n)
                .map_err(|e| format!("starting a grader: {e}"))?,
            "fresh",
        ),
    };
    // Sessions' steps first: at a quarter of their CPU weight (not the least, where graders
    // starved under load until their wall limit graded right fixes `timeout`).
    if let Err(e) = grader.yield_cpu() {
        tracing::debug!(session = %s.id, "a grader at the sessions' weight: {e}");
    }
    let runner = lock(&server.envs).runner(task, s.kind)?;
    let listed = task.listed_tests();
    // From the task's own recorded runs, with a CPU limit: an edit that loops is stopped
    // within seconds of CPU, and its repeat is the last.
    let budget = crate::timeouts::reward(crate::audit::longest_recorded_run(task));
    let repeats = server.cfg.grade_repeats.max(1);
    // The grading path `train` uses too; every repeat runs, for the majority.
    let patched = match crate::replay::run_patched(
        grader.as_mut(),
        runner.as_ref(),
        task,
        patch,
        repeats,
        budget,
        false,
    ) {
        Ok(p) => p,
        Err(crate::replay::GradeError::DoesNotApply(e)) => {
            return Ok((
                (
                    "patch-does-not-apply".to_string(),
                    BTreeMap::new(),
                    Vec::new(),
                    vec![json!({"error": e})],
                ),
                how,
            ))
        }
        Err(crate::replay::GradeError::Environment(e)) if how == "session" => {
            // The recycled container failed as a grader: a fresh one grades instead.
            tracing::warn!(session = %s.id, "grading in the session's container: {e}");
            return run_graded(server, s, patch, None);
        }
        Err(crate::replay::GradeError::Environment(e)) => return Err(e),
    };
    let all = &patched.runs;
    let mut tests: BTreeMap<String, TestStatus> = BTreeMap::new();
    let mut flaky = Vec::new();
    for id in &listed {
        let statuses: Vec<TestStatus> = all.iter().map(|r| r.status(id)).collect();
        let passes = statuses
            .iter()
            .filter(|s| **s == TestStatus::Passed)
            .count();
        let majority = if passes * 2 > statuses.len() {
            TestStatus::Passed
        } else {
            // The most frequent non-passing status.
            let mut counts: BTreeMap<TestStatus, usize> = BTreeMap::new();
            for st in statuses.iter().filter(|s| **s != TestStatus::Passed) {
                *counts.entry(*st).or_default() += 1;
            }
            counts
                .into_iter()
                .max_by_key(|(_, c)| *c)
                .map(|(st, _)| st)
                .unwrap_or(TestStatus::Missing)
        };
        if statuses.iter().any(|st| *st != statuses[0]) {
            flaky.push(id.clone());
        }
        tests.insert(id.clone(), majority);
    }
    let failure = if patched.tampered.is_some() {
        "tampered-runner"
    } else if all.iter().any(Run::is_build_error) {
        "build-error"
    } else if listed
        .iter()
        .any(|id| all.iter().any(|r| r.collection_error(id).is_some()))
    {
        "collection-error"
    } else if all.iter().any(|r| r.end == RunEnd::TimedOut) {
        "timeout"
    } else if tests.values().all(|st| *st == TestStatus::Passed) {
        "none"
    } else {
        "tests-fail"
    };
    let mut runs: Vec<Value> = all
        .iter()
        .map(|r| json!({"label": r.label, "seconds": r.duration_s, "summary": r.summary()}))
        .collect();
    if let Some(why) = &patched.tampered {
        runs.push(json!({"tampered": why}));
    }
    Ok(((failure.to_string(), tests, flaky, runs), how))
}

/// `run_tests`: the requested ids (default: the task's listed tests) whose test files are in
/// the agent's tree now, run once in the session's worker.
pub fn run_tests(server: &Server, s: &mut Session, args: &Value) -> Result<Value, ToolError> {
    let task = &*server.task(s.task);
    let requested: Vec<String> = match args.get("ids").and_then(Value::as_array) {
        Some(ids) => ids
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => task.listed_tests(),
    };
    let toolchain = task
        .toolchain()
        .map(|t| t.toolchain())
        .ok_or_else(|| ToolError::Environment("the task names no toolchain".to_string()))?;
    let file_of = |id: &String| {
        toolchain
            .test_file(id, &[])
            .unwrap_or_else(|| id.split("::").next().unwrap_or(id).to_string())
    };
    let files: Vec<String> = requested
        .iter()
        .map(file_of)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let worker = s
        .worker
        .as_deref_mut()
        .ok_or_else(|| ToolError::Environment("the session's environment is gone".into()))?;
    let present: BTreeSet<String> = tools::existing(worker, &files)?.into_iter().collect();
    let ids: Vec<String> = requested
        .iter()
        .filter(|id| present.contains(&file_of(id)))
        .cloned()
        .collect();
    let absent = requested.len() - ids.len();
    if ids.is_empty() {
        return Ok(json!({
            "output": "none of the requested tests is in the repository",
            "results": {},
            "not_in_tree": absent,
        }));
    }
    let runner = lock(&server.envs)
        .runner(task, s.kind)
        .map_err(ToolError::Environment)?;
    let run = runner
        .run(worker, "run_tests", Some(&ids), crate::audit::budget(task))
        .map_err(|e| ToolError::Environment(e.to_string()))?;
    let mut output = run.summary();
    for (id, r) in &run.results {
        if let Some(m) = r.message.as_deref().filter(|_| r.status.is_failure()) {
            output.push_str(&format!("\n\n{id}\n{m}"));
        }
    }
    let results: BTreeMap<&String, TestStatus> =
        run.results.iter().map(|(k, v)| (k, v.status)).collect();
    Ok(json!({
        "output": tools::capped(output.as_bytes(), tools::OUTPUT_CAP),
        "results": results,
        "not_in_tree": absent,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(path: &str) -> String {
        format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n")
    }

    fn added(path: &str) -> String {
        format!("diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n")
    }

    #[test]
    fn only_changes_to_the_source_files_are_graded() {
        let mut t = crate::audit::tests::task("t");
        let mut g = t.grading();
        g.editable = vec!["pkg/*".into()];
        g.protected = crate::toolchain::python_pytest::PROTECTED
            .iter()
            .map(|s| s.to_string())
            .collect();
        t.metadata.grading = Some(g);
        let cheats = [
            section("pyproject.toml"),
            section("setup.cfg"),
            added("pytest.ini"),
            section("tox.ini"),
            added("zzplugin2.py"),
            added("pkg/sub/conftest.py"),
            added("pytest.py"),
            added("sitecustomize.py"),
            added("pkg/x.pth"),
            added("_pytest/reports.py"),
            "diff --git \"a/tests/t\\303\\251st.py\" \"b/tests/t\\303\\251st.py\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/tests/t\\303\\251st.py\"\n@@ -0,0 +1 @@\n+x = 1\n".to_string(),
        ];
        let fix = section("pkg/core.py");
        let diff = format!("{fix}{}", cheats.concat());
        let f = source_changes(&t, &diff);
        assert_eq!(f.patch, fix);
        for p in [
            "pyproject.toml",
            "setup.cfg",
            "pytest.ini",
            "tox.ini",
            "zzplugin2.py",
            "pkg/sub/conftest.py",
            "pytest.py",
            "sitecustomize.py",
            "pkg/x.pth",
            "_pytest/reports.py",
            "tests/t\u{e9}st.py",
        ] {
            assert!(
                f.dropped.iter().any(|d| d == p),
                "{p} not dropped: {:?}",
                f.dropped
            );
        }
        // A new module inside the package is a source file.
        let f = source_changes(&t, &added("pkg/new_module.py"));
        assert!(f.dropped.is_empty(), "{:?}", f.dropped);
    }

    #[test]
    fn test_files_are_left_out_of_the_graded_patch() {
        let mut t = crate::audit::tests::task("t");
        t.test_patch = "diff --git a/tests/test_hidden.py b/tests/test_hidden.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_hidden.py\n@@ -0,0 +1 @@\n+def test_x(): pass\n".into();
        let diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -3,2 +3,2 @@\n-x\n+y\n\
                    diff --git a/tests/conftest.py b/tests/conftest.py\n--- a/tests/conftest.py\n+++ b/tests/conftest.py\n@@ -1 +1 @@\n-a\n+b\n\
                    diff --git a/tests/test_hidden.py b/tests/test_hidden.py\n--- a/tests/test_hidden.py\n+++ b/tests/test_hidden.py\n@@ -1 +1 @@\n-a\n+b\n";
        let kept = source_changes(&t, diff).patch;
        assert!(kept.contains("a/m.py"), "{kept}");
        assert!(!kept.contains("conftest"), "{kept}");
        assert!(!kept.contains("test_hidden"), "{kept}");
        assert_eq!(hunks_of(&kept, "m.py"), [(3, 4)]);
        assert!(is_test_file(&t, "t.py"));
    }
}
