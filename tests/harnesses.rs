//! Tasks in the harnesses users already run, and safe from the agent: one Docker run of the demo
//! seed (at least 20 tasks, their task images built), then
//! - the `swebench` export evaluated by the real SWE-bench harness (swebench 5.0.2 from the
//!   package index, `tests/harness/swebench_eval.py`), with the local task images and no pull:
//!   gold predictions resolve every task, empty predictions none;
//! - the same export loaded by Hugging Face `datasets` into SWE-bench's features;
//! - the `harbor` export linted by `harbor lint`, and one task graded by hand with its verifier
//!   script (1 with the solution, 0 without);
//! - an agent in a task container, as the non-root user, trying every way back to the fix and
//!   the hidden tests, and finding none;
//! - cheats at the test runner (Python and JavaScript) as the agent's patch in Harbor's verifier
//!   and as predictions in the SWE-bench harness, and the JavaScript ones through `serve` and
//!   the Python client: none earns a reward;
//! - the order-dependent doctests fixture in Docker, graded by the SWE-bench harness.
//!
//! The Python tools come from `.ci/run`: `SWE_FORGE_SWEBENCH_PYTHON` (a venv with swebench and
//! datasets) and `SWE_FORGE_HARBOR` (the harbor command, Python ≥ 3.12). Without them a test
//! skips with a notice, unless `SWE_FORGE_REQUIRE_HARNESS=1` (`SWE_FORGE_REQUIRE_HARBOR=1` for
//! harbor).

mod common;

use common::{
    bin, client_module, docker_or_skip, jest_or_skip, jsonl, made_once, serve_docker, text,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Tasks the run must make: SWE-bench's harness test asks for at least 20.
const MIN_TASKS: usize = 20;

/// A demo seed's Docker run, shared by the tests of this file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Demo {
    /// `pyshelf`, the Python demo seed.
    Py,
    /// `jsshelf`, the JavaScript demo seed (jest).
    Js,
}

impl Demo {
    fn seed(self) -> &'static str {
        match self {
            Demo::Py => "pyshelf",
            Demo::Js => "jsshelf",
        }
    }

    fn max_candidates(self) -> &'static str {
        match self {
            Demo::Py => "24",
            Demo::Js => "26",
        }
    }
}

/// The Docker run of `demo` shared by the tests of this file (made once per test run, also
/// across processes: see `made_once`; a failure is kept, so that every test reports it
/// instead of running it again).
fn docker_run_of(demo: Demo) -> &'static Path {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static JS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let cell = match demo {
        Demo::Py => &PY,
        Demo::Js => &JS,
    };
    let made = cell.get_or_init(|| {
        made_once(&format!("harnesses-{}", demo.seed()), |dir| {
            let tmp = dir.join("tmp");
            std::fs::create_dir_all(&tmp).unwrap();
            let out = dir.join("out");
            let o = bin()
                .env("TMPDIR", &tmp)
                .args([
                    "run",
                    "--sandbox",
                    "docker",
                    "--only",
                    demo.seed(),
                    "--jobs",
                    "2",
                ])
                .args(["--max-candidates", demo.max_candidates(), "--json", "--out"])
                .arg(&out)
                .output()
                .unwrap();
            if o.status.code() != Some(0) {
                return Err(format!("the run failed: {}", text(&o)));
            }
            let tasks = jsonl(&out.join("tasks.jsonl"));
            if tasks.len() < MIN_TASKS {
                return Err(format!(
                    "the run made {} tasks, fewer than {MIN_TASKS}\n{}",
                    tasks.len(),
                    text(&o)
                ));
            }
            let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
            if summary["seeds"][0]["task_images"]["failed"] != 0 {
                return Err(format!("task images failed: {summary}"));
            }
            Ok(())
        })
        .map(|dir| dir.join("out"))
    });
    match made {
        Ok(out) => out,
        Err(e) => panic!("{}: {e}", demo.seed()),
    }
}

/// The Python demo's run.
fn docker_run() -> &'static Path {
    docker_run_of(Demo::Py)
}

/// A tool's path from the environment, or `None` (with a notice) when it is not set up.
fn tool(var: &str, test: &str) -> Option<PathBuf> {
    let require = if var == "SWE_FORGE_HARBOR" {
        "SWE_FORGE_REQUIRE_HARBOR"
    } else {
        "SWE_FORGE_REQUIRE_HARNESS"
    };
    match std::env::var_os(var) {
        Some(p) if Path::new(&p).exists() => Some(PathBuf::from(p)),
        _ => {
            if std::env::var(require).as_deref() == Ok("1") {
                panic!("{test}: {var} is not set (see .ci/run) and {require}=1");
            }
            eprintln!("skipping {test}: {var} is not set (.ci/run installs it)");
            None
        }
    }
}

fn export(out: &Path, format: &str) -> PathBuf {
    let o = bin()
        .args(["export", "--json", "--format", format])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(s["failed"].as_array().unwrap().is_empty(), "{s}");
    assert_eq!(
        s["exported"].as_array().unwrap().len(),
        jsonl(&out.join("tasks.jsonl")).len()
    );
    PathBuf::from(s["to"].as_str().unwrap())
}

/// `swebench_eval.py` on the export with `predictions`; instance id → resolved.
fn evaluate(
    python: &Path,
    dataset: &Path,
    predictions: &str,
    run_id: &str,
    report: &Path,
) -> Vec<(String, bool)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness/swebench_eval.py");
    let o = Command::new(python)
        .arg(script)
        .arg("--dataset")
        .arg(dataset)
        .args([
            "--predictions",
            predictions,
            "--run-id",
            run_id,
            "--max-workers",
            "2",
        ])
        .arg("--report-dir")
        .arg(report)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    v["instances"]
        .as_object()
        .unwrap_or_else(|| panic!("no instances: {v}"))
        .iter()
        .map(|(id, r)| (id.clone(), r["resolved"] == true))
        .collect()
}

/// What the harness saw for `ids` in run `run_id`: each instance's entry of our results file
/// (status, failed tests) and the last lines of the test output the harness kept.
fn why_unresolved(report: &Path, run_id: &str, ids: &[&String]) -> String {
    let results: Value = std::fs::read(report.join(format!("results.{run_id}.json")))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let mut out = String::new();
    for id in ids {
        let entry = &results["instances"][id.as_str()];
        out.push_str(&format!("{id}: {entry}\n"));
        let Some(dir) = entry["log_dir"].as_str() else {
            continue;
        };
        for log in ["test_output.txt", "run_instance.log"] {
            let text = std::fs::read_to_string(Path::new(dir).join(log)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(60)..].join("\n");
            out.push_str(&format!("--- {log} (last 60 lines)\n{tail}\n"));
        }
    }
    out
}

/// A predictions file `DIR/<model>.jsonl`: `patch` for the first `n` records.
fn predictions(dir: &Path, model: &str, records: &[Value], n: usize, patch: &str) -> PathBuf {
    let path = dir.join(format!("{model}.jsonl"));
    let lines: Vec<String> = records
        .iter()
        .take(n)
        .map(|r| {
            serde_json::json!({
                "instance_id": r["instance_id"],
                "model_name_or_path": model,
                "model_patch": patch,
            })
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn swebench_harness_resolves_gold_and_nothing_for_empty_patches() {
    swebench_gold_and_empty(
        "swebench_harness_resolves_gold_and_nothing_for_empty_patches",
        Demo::Py,
    );
}

/// The JavaScript tasks in SWE-bench's harness: its jest JSON log parser reads what their
/// eval script prints.
#[test]
fn jsshelf_in_the_swebench_harness_gold_resolves_and_empty_does_not() {
    swebench_gold_and_empty(
        "jsshelf_in_the_swebench_harness_gold_resolves_and_empty_does_not",
        Demo::Js,
    );
}

fn swebench_gold_and_empty(test: &str, demo: Demo) {
    if !docker_or_skip(test) {
        return;
    }
    let Some(python) = tool("SWE_FORGE_SWEBENCH_PYTHON", test) else {
        return;
    };
    let out = docker_run_of(demo);
    let to = export(out, "swebench");
    let dataset = to.join("data/test.jsonl");
    let records = jsonl(&dataset);
    assert!(records.len() >= MIN_TASKS);
    let report = tempfile::tempdir().unwrap();

    let gold = evaluate(&python, &dataset, "gold", "gold", report.path());
    assert_eq!(gold.len(), records.len());
    let unresolved: Vec<&String> = gold.iter().filter(|(_, r)| !r).map(|(i, _)| i).collect();
    assert!(
        unresolved.is_empty(),
        "gold left unresolved: {unresolved:?}\n{}",
        why_unresolved(report.path(), "gold", &unresolved)
    );

    let empty = predictions(report.path(), "empty", &records, usize::MAX, "");
    let none = evaluate(
        &python,
        &dataset,
        empty.to_str().unwrap(),
        "empty",
        report.path(),
    );
    let resolved: Vec<&String> = none.iter().filter(|(_, r)| *r).map(|(i, _)| i).collect();
    assert!(resolved.is_empty(), "an empty patch resolved: {resolved:?}");

    // A no-op patch that touches a README (what a reward-hacking agent might send).
    let noop = predictions(
        report.path(),
        "noop",
        &records,
        3,
        "diff --git a/NOOP.md b/NOOP.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOOP.md\n@@ -0,0 +1 @@\n+nothing\n",
    );
    let noop = evaluate(
        &python,
        &dataset,
        noop.to_str().unwrap(),
        "noop",
        report.path(),
    );
    assert!(
        noop.iter().all(|(_, r)| !r),
        "a no-op patch resolved: {noop:?}"
    );
}

#[test]
fn datasets_loads_the_swebench_export_with_swebench_types() {
    datasets_loads(
        "datasets_loads_the_swebench_export_with_swebench_types",
        Demo::Py,
    );
}

#[test]
fn jsshelf_swebench_export_loads_in_datasets() {
    datasets_loads("jsshelf_swebench_export_loads_in_datasets", Demo::Js);
}

fn datasets_loads(test: &str, demo: Demo) {
    if !docker_or_skip(test) {
        return;
    }
    let Some(python) = tool("SWE_FORGE_SWEBENCH_PYTHON", test) else {
        return;
    };
    let to = export(docker_run_of(demo), "swebench");
    // SWE-bench's features (every column a string; the test lists lists JSON-encoded),
    // typed here, and the columns the harness and swe-forge add, strings too.
    let script = r#"
import json, sys
import datasets
from datasets import Features, Value
swebench = Features({c: Value("string") for c in [
    "repo", "instance_id", "base_commit", "patch", "test_patch", "problem_statement",
    "hints_text", "created_at", "version", "FAIL_TO_PASS", "PASS_TO_PASS",
    "environment_setup_commit"]})
extra = ["image", "eval_script", "log_parser", "eval_type", "image_name", "language",
         "bug_patch", "metadata"]
ds = datasets.load_dataset(sys.argv[1], split="test")
got = ds.features
assert set(got) == set(swebench) | set(extra), sorted(got)
for name, feature in swebench.items():
    assert got[name] == feature, (name, got[name])
for name in extra:
    assert got[name] == Value("string"), (name, got[name])
# It concatenates with a dataset typed as SWE-bench's.
row = {c: "x" for c in swebench}
row["FAIL_TO_PASS"] = row["PASS_TO_PASS"] = "[]"
theirs = datasets.Dataset.from_list([row], features=swebench)
both = datasets.concatenate_datasets([ds.select_columns(list(swebench)), theirs])
assert both.features == swebench
first = ds[0]
f2p = json.loads(first["FAIL_TO_PASS"])
assert isinstance(f2p, list) and f2p and all(isinstance(t, str) for t in f2p)
import datetime
created = datetime.datetime.fromisoformat(first["created_at"])
assert created.utcoffset() == datetime.timedelta(0), first["created_at"]
meta = json.loads(first["metadata"])
runs = meta["verification"]["runs"]
assert all(isinstance(r["results"], list) for r in runs)
assert all(set(x) >= {"test", "status", "seconds"} for r in runs for x in r["results"])
print(json.dumps({"rows": len(ds), "columns": len(got)}))
"#;
    let o = Command::new(&python)
        .args(["-c", script])
        .arg(&to)
        .env("HF_DATASETS_OFFLINE", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_CACHE", to.join(".hf-cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["rows"].as_u64().unwrap() as usize,
        jsonl(&to.join("data/test.jsonl")).len()
    );
}

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker").args(args).output().unwrap()
}

/// `script` in a fresh container of `image` as the agent's user, without network, with `dir`
/// mounted read-only at `at`.
fn as_agent(image: &str, dir: &Path, at: &str, script: &str) -> std::process::Output {
    let mount = format!("{}:{at}:ro", dir.display());
    docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        "-u",
        "tester",
        "-v",
        &mount,
        image,
        "bash",
        "-c",
        script,
    ])
}

/// Grade a Harbor task by hand as Harbor does in its separate-verifier mode: the agent's
/// container (optionally running the solution), the collect hook there, then a fresh verifier
/// container running tests/test.sh. Returns the reward written.
fn harbor_grade(task_dir: &Path, image: &str, solve: bool, base_commit: &str) -> String {
    harbor_grade_after(
        task_dir,
        image,
        if solve {
            "bash /solution/solve.sh;"
        } else {
            ""
        },
        base_commit,
    )
}

/// [`harbor_grade`] with `script` run by the agent in /testbed (as root) first.
fn harbor_grade_after(task_dir: &Path, image: &str, script: &str, base_commit: &str) -> String {
    let logs = tempfile::tempdir().unwrap();
    let artifacts = logs.path().join("artifacts");
    let verifier = logs.path().join("verifier");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::create_dir_all(&verifier).unwrap();
    let solution = task_dir.join("solution");
    let agent = format!(
        "set -e; cd /testbed; {script} cd /testbed; git -c safe.directory='*' add -A; \
         git -c safe.directory='*' diff --cached --binary {base_commit} > /logs/artifacts/agent.patch"
    );
    let mount = |host: &Path, at: &str| format!("{}:{at}", host.display());
    let o = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        "-u",
        "0",
        "-v",
        &mount(&solution, "/solution:ro"),
        "-v",
        &mount(&artifacts, "/logs/artifacts"),
        image,
        "bash",
        "-c",
        &agent,
    ]);
    assert!(o.status.success(), "agent container: {}", text(&o));
    let o = docker(&[
        "run",
        "--rm",
        "--network",
        "none",
        "-u",
        "0",
        "-v",
        &mount(&task_dir.join("tests"), "/tests:ro"),
        "-v",
        &mount(&artifacts, "/logs/artifacts"),
        "-v",
        &mount(&verifier, "/logs/verifier"),
        image,
        "bash",
        "/tests/test.sh",
    ]);
    assert!(o.status.success(), "verifier container: {}", text(&o));
    std::fs::read_to_string(verifier.join("reward.txt"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn harbor_export_lints_and_its_verifier_grades() {
    harbor_lints_and_grades("harbor_export_lints_and_its_verifier_grades", Demo::Py);
}

#[test]
fn jsshelf_harbor_export_lints_and_its_verifier_grades() {
    harbor_lints_and_grades(
        "jsshelf_harbor_export_lints_and_its_verifier_grades",
        Demo::Js,
    );
}

fn harbor_lints_and_grades(test: &str, demo: Demo) {
    if !docker_or_skip(test) {
        return;
    }
    let out = docker_run_of(demo);
    let to = export(out, "harbor");
    let tasks = jsonl(&out.join("tasks.jsonl"));
    // Each task's directory is named by its opaque id (`export --id-style opaque`, the default).
    let dirs: Vec<PathBuf> = tasks
        .iter()
        .map(|t| {
            let task: swe_forge::task::Task = serde_json::from_value(t.clone()).unwrap();
            to.join(swe_forge::export::IdStyle::Opaque.of(&task))
        })
        .collect();
    for d in &dirs {
        for f in [
            "instruction.md",
            "task.toml",
            "environment/Dockerfile",
            "solution/solve.sh",
            "tests/test.sh",
            "tests/test.patch",
        ] {
            assert!(d.join(f).is_file(), "{} lacks {f}", d.display());
        }
        // The environment holds no test and no solution.
        let entries: Vec<String> = std::fs::read_dir(d.join("environment"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(entries, vec!["Dockerfile".to_string()]);
    }
    if let Some(harbor) = tool("SWE_FORGE_HARBOR", test) {
        let o = Command::new(&harbor)
            .arg("lint")
            .args(&dirs)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "harbor lint: {}", text(&o));
    }
    let t = &tasks[0];
    let image = t["image_name"].as_str().unwrap();
    let base = t["base_commit"].as_str().unwrap();
    assert_eq!(
        harbor_grade(&dirs[0], image, true, base),
        "1",
        "with the solution"
    );
    assert_eq!(
        harbor_grade(&dirs[0], image, false, base),
        "0",
        "with no change"
    );
}

#[test]
fn an_agent_in_the_task_container_finds_no_way_back() {
    agent_finds_no_way_back("an_agent_in_the_task_container_finds_no_way_back", Demo::Py);
}

#[test]
fn an_agent_in_a_jsshelf_task_container_finds_no_way_back() {
    agent_finds_no_way_back(
        "an_agent_in_a_jsshelf_task_container_finds_no_way_back",
        Demo::Js,
    );
}

/// The command that runs `ids` in a task container, as its record's toolchain runs tests.
fn run_ids_command(t: &Value, ids: &[String]) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    match t["metadata"]["environment"]["toolchain"].as_str() {
        Some("javascript_jest") | Some("typescript_jest") => {
            let files: std::collections::BTreeSet<&str> =
                ids.iter().map(|i| i.split("::").next().unwrap()).collect();
            let names: Vec<String> = ids
                .iter()
                .map(|i| regex_escape(i.split_once("::").unwrap().1))
                .collect();
            format!(
                "jest --ci --runInBand --runTestsByPath {} -t {}",
                files.iter().map(|f| q(f)).collect::<Vec<_>>().join(" "),
                q(&format!("^(?:{})$", names.join("|")))
            )
        }
        _ => format!(
            "python -m pytest -q -p no:cacheprovider {}",
            ids.iter().map(|i| q(i)).collect::<Vec<_>>().join(" ")
        ),
    }
}

/// A JavaScript regular expression matching `s` literally.
fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let esc = "\\^$.|?*+()[]{}".contains(c).then_some('\\');
            esc.into_iter().chain([c])
        })
        .collect()
}

fn agent_finds_no_way_back(test: &str, demo: Demo) {
    if !docker_or_skip(test) {
        return;
    }
    let tasks = jsonl(&docker_run_of(demo).join("tasks.jsonl"));
    for t in tasks.iter().take(4) {
        let id = t["instance_id"].as_str().unwrap();
        let image = t["image_name"].as_str().unwrap();
        let file = t["metadata"]["location"]["file"].as_str().unwrap();
        // Texts only the fix or the hidden tests hold: each hunk of the gold patch on its new
        // side, and three lines from each FAIL_TO_PASS test's definition in test_patch.
        let mut windows: Vec<String> = Vec::new();
        let mut hunk: Vec<String> = Vec::new();
        let mut added = false;
        for l in t["patch"].as_str().unwrap().lines().chain(["@@"]) {
            if l.starts_with("@@") || l.starts_with("diff --git") {
                if added {
                    windows.push(hunk.join("\n"));
                }
                hunk.clear();
                added = false;
            } else if let Some(a) = l.strip_prefix('+').filter(|_| !l.starts_with("+++")) {
                hunk.push(a.to_string());
                added = true;
            } else if let Some(c) = l.strip_prefix(' ') {
                hunk.push(c.to_string());
            }
        }
        let restored: Vec<&str> = t["test_patch"]
            .as_str()
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| &l[1..])
            .collect();
        for name in t["FAIL_TO_PASS"].as_array().unwrap() {
            let name = name
                .as_str()
                .unwrap()
                .rsplit("::")
                .next()
                .unwrap()
                .split('[')
                .next()
                .unwrap();
            if let Some(i) = restored
                .iter()
                .position(|l| l.trim_start().starts_with(&format!("def {name}(")))
            {
                windows.push(restored[i..(i + 3).min(restored.len())].join("\n"));
            }
        }
        assert!(!windows.is_empty(), "{id}: nothing to look for");
        // The clean blob ids of the changed file and the hidden test files.
        let mut blobs: Vec<String> = Vec::new();
        for patch in [
            t["bug_patch"].as_str().unwrap(),
            t["test_patch"].as_str().unwrap(),
        ] {
            for l in patch.lines().filter_map(|l| l.strip_prefix("index ")) {
                let range = l.split_whitespace().next().unwrap();
                // bug_patch: the clean side; test_patch: the restored (hidden) side.
                let side = if patch == t["bug_patch"].as_str().unwrap() {
                    range.split("..").next().unwrap()
                } else {
                    range.split("..").nth(1).unwrap()
                };
                if side.chars().any(|c| c != '0') {
                    blobs.push(side.to_string());
                }
            }
        }
        assert!(!blobs.is_empty(), "{id}: the patches name no blob");
        let hidden: Vec<String> = t["metadata"]["start_state"]["removed_files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let pkg = Path::new(file)
            .parent()
            .and_then(|p| p.file_name())
            .map(|p| p.to_string_lossy().to_string())
            .unwrap_or_default();
        let stem = Path::new(file)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let script = format!(
            r#"
cd /testbed
found=0
say() {{ echo "WAY BACK: $*"; found=1; }}
# History and refs.
[ "$(git rev-list --all --count)" = 1 ] || say "more than one commit: $(git rev-list --all --count)"
git cat-file -p HEAD | grep -q '^parent ' && say "HEAD has a parent"
[ -z "$(git for-each-ref --format='%(refname)' | grep -v '^refs/heads/main$')" ] || say "other refs"
git reflog 2>/dev/null | grep -q . && say "a reflog"
git stash list | grep -q . && say "a stash"
for f in ORIG_HEAD FETCH_HEAD logs packed-refs; do [ -e .git/$f ] && say ".git/$f"; done
git fsck --unreachable --no-reflogs --no-progress 2>/dev/null | grep -q unreachable && say "unreachable objects"
for b in {blobs}; do git cat-file -e "$b" 2>/dev/null && say "blob $b"; done
for h in {hidden}; do [ -e "$h" ] && say "hidden file $h"; done
# Bytecode of the changed module anywhere.
hits=$(find / -xdev -path '*/{pkg}/__pycache__/{stem}.*.pyc' 2>/dev/null | head -5)
[ -z "$hits" ] || say "bytecode $hits"
# The fixed code and the hidden tests anywhere in the file system.
hits=$(python3 - <<'PY'
import json, os
windows = [w.encode() for w in json.load(open("/probe/windows.json"))]
for d, subdirs, files in os.walk("/"):
    subdirs[:] = [s for s in subdirs if os.path.join(d, s) not in ("/proc", "/sys", "/dev", "/probe")]
    for f in files:
        p = os.path.join(d, f)
        try:
            if os.path.islink(p) or os.path.getsize(p) > 50 << 20:
                continue
            data = open(p, "rb").read()
        except OSError:
            continue
        if any(w in data for w in windows):
            print(p)
PY
)
[ -z "$hits" ] || say "the fix or a hidden test in $hits"
# Reverting with git changes nothing.
before=$(sha1sum {file})
git checkout -- . ; git stash -q 2>/dev/null; git reset -q --hard
[ "$(sha1sum {file})" = "$before" ] || say "git restored {file}"
[ -z "$(git status --porcelain)" ] || say "git status: $(git status --porcelain)"
for h in {hidden}; do cat "$h" >/dev/null 2>&1 && say "hidden file $h readable after the git commands"; done
echo "found=$found"
"#,
            blobs = blobs.iter().map(|b| q(b)).collect::<Vec<_>>().join(" "),
            hidden = hidden.iter().map(|h| q(h)).collect::<Vec<_>>().join(" "),
            file = q(file),
        );
        let probe = tempfile::tempdir().unwrap();
        std::fs::write(
            probe.path().join("windows.json"),
            serde_json::to_string(&windows).unwrap(),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            probe.path().join("windows.json"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::set_permissions(probe.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = as_agent(image, probe.path(), "/probe", &script);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("found=0"), "{id}: {}", text(&o));

        // After the git commands, with the hidden tests back, the FAIL_TO_PASS tests still fail.
        let ids: Vec<String> = t["FAIL_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect();
        let patch_dir = tempfile::tempdir().unwrap();
        std::fs::write(
            patch_dir.path().join("test.patch"),
            t["test_patch"].as_str().unwrap(),
        )
        .unwrap();
        std::fs::set_permissions(patch_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            patch_dir.path().join("test.patch"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let run = format!(
            "cd /testbed; git checkout -- . ; git stash -q 2>/dev/null; git reset -q --hard; \
             git apply /p/test.patch || exit 9; {}; echo rc=$?",
            run_ids_command(t, &ids)
        );
        let o = as_agent(image, patch_dir.path(), "/p", &run);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("rc=1"),
            "{id}: the FAIL_TO_PASS tests do not fail: {}",
            text(&o)
        );
    }
}

/// The audit's safety checks catch what they look for: a task image with a copy of the fixed
/// code and the hidden test file planted outside `/testbed`, and a record whose image is the
/// repository image (the clean commit with its history).
#[test]
fn the_audit_finds_the_ways_back_of_a_leaky_image() {
    let test = "the_audit_finds_the_ways_back_of_a_leaky_image";
    if !docker_or_skip(test) {
        return;
    }
    let out = docker_run();
    let tasks = jsonl(&out.join("tasks.jsonl"));
    let t = &tasks[0];
    let image = t["image_name"].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let patches = dir.path().join("p");
    std::fs::create_dir_all(&patches).unwrap();
    std::fs::write(patches.join("fix.diff"), t["patch"].as_str().unwrap()).unwrap();
    std::fs::write(patches.join("test.diff"), t["test_patch"].as_str().unwrap()).unwrap();
    // A copy of the fixed tree, with the hidden tests, left in /opt/leak.
    let name = format!("swe-forge-leak-{}", std::process::id());
    let o = docker(&[
        "run", "--name", &name, "-u", "0", "-v", &format!("{}:/p:ro", patches.display()),
        image, "bash", "-c",
        "cp -a /testbed /opt/leak && cd /opt/leak && git -c safe.directory='*' apply /p/fix.diff /p/test.diff",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let leaky = format!("swe-forge/leak-test:{}", std::process::id());
    let o = docker(&["commit", &name, &leaky]);
    assert!(o.status.success(), "{}", text(&o));
    docker(&["rm", "-f", &name]);

    let audit = |record: &Value| -> Value {
        let file = dir.path().join("one.jsonl");
        std::fs::write(&file, format!("{record}\n")).unwrap();
        let o = bin()
            .args(["audit", "--sandbox", "docker", "--json"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(4), "{}", text(&o));
        let first = String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap()
            .to_string();
        serde_json::from_str(&first).unwrap()
    };
    let reasons = |a: &Value| -> Vec<String> {
        a["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["reason"].as_str().unwrap().to_string())
            .collect()
    };
    let mut leak = t.clone();
    leak["image_name"] = leaky.clone().into();
    let found = reasons(&audit(&leak));
    docker(&["rmi", "-f", &leaky]);
    for want in ["gold-code-present", "hidden-test-present"] {
        assert!(found.iter().any(|r| r == want), "{want} not in {found:?}");
    }

    let mut repo_image = t.clone();
    repo_image["image_name"] = t["metadata"]["start_state"]["repo_image"].clone();
    let found = reasons(&audit(&repo_image));
    assert!(found.iter().any(|r| r == "base-has-parent"), "{found:?}");
}

/// `swe-forge image tasks` builds a task image from its record alone: here under a tag of its
/// own (so the other tests' images stay), reporting it built, then reused; its `/testbed` is
/// the start state as the agent's user sees it.
#[test]
fn image_tasks_builds_a_task_image_from_its_record() {
    let test = "image_tasks_builds_a_task_image_from_its_record";
    if !docker_or_skip(test) {
        return;
    }
    let out = docker_run();
    let mut t = jsonl(&out.join("tasks.jsonl"))[1].clone();
    let tag = format!("swe-forge/image-tasks-test:{}", std::process::id());
    t["image_name"] = tag.clone().into();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.jsonl");
    std::fs::write(&file, format!("{t}\n")).unwrap();
    let build = || {
        let o = bin()
            .args(["image", "tasks", "--json"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        common::stdout_lines(&o)
    };
    let first = build();
    assert_eq!(first[0]["status"], "built", "{first:?}");
    assert!(first[0]["layer_bytes"].as_u64().unwrap() > 0);
    assert_eq!(first[1]["built"], 1);
    let again = build();
    assert_eq!(again[0]["status"], "reused", "{again:?}");
    let o = docker(&[
        "run",
        "--rm",
        "-u",
        "tester",
        &tag,
        "bash",
        "-c",
        "cd /testbed && git rev-parse HEAD && git rev-list --count HEAD",
    ]);
    docker(&["rmi", "-f", &tag]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        vec![t["base_commit"].as_str().unwrap(), "1"],
        "{}",
        text(&o)
    );
}

/// jest's statuses by swe-forge's id (`<test file>::<full name>`), read from its JSON report here
/// (not with swe-forge's runner).
fn jest_statuses(dir: &Path, files: &[&str]) -> std::collections::BTreeMap<String, String> {
    let report = dir.join(".jest-report.json");
    let _ = std::fs::remove_file(&report);
    // The project's own test command (package.json: "test": "jest"), on the tests' files.
    let o = Command::new("jest")
        .args(["--ci", "--json"])
        .arg(format!("--outputFile={}", report.display()))
        .arg("--runTestsByPath")
        .args(files)
        .current_dir(dir)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap_or_default())
        .unwrap_or_else(|e| panic!("no jest report ({e}): {}", text(&o)));
    let mut out = std::collections::BTreeMap::new();
    for f in doc["testResults"].as_array().unwrap() {
        let file = Path::new(f["name"].as_str().unwrap())
            .strip_prefix(dir)
            .unwrap()
            .display()
            .to_string();
        for c in f["assertionResults"].as_array().unwrap() {
            out.insert(
                format!("{file}::{}", c["fullName"].as_str().unwrap()),
                c["status"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

/// `git apply` a patch in `dir` (a plain copy of the project, not a repository).
fn git_apply(dir: &Path, patch: &str) {
    if patch.trim().is_empty() {
        return;
    }
    let path = dir.join(".swe-forge-check.patch");
    std::fs::write(&path, patch).unwrap();
    let o = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(&path)
        .current_dir(dir)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(o.status.success(), "git apply: {}", text(&o));
}

/// Every JavaScript task re-checked on the host without swe-forge's runner: the seed's own
/// directory copied, `bug_patch` applied, the FAIL_TO_PASS tests run with the project's test
/// command (`jest`) and seen to fail; then the gold `patch` applied and FAIL_TO_PASS and
/// PASS_TO_PASS seen to pass.
#[test]
fn jsshelf_tasks_recheck_on_the_host_with_the_project_s_own_jest() {
    let test = "jsshelf_tasks_recheck_on_the_host_with_the_project_s_own_jest";
    if !docker_or_skip(test) || !jest_or_skip(test) {
        return;
    }
    let tasks = jsonl(&docker_run_of(Demo::Js).join("tasks.jsonl"));
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/jsshelf");
    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("jsshelf");
        let o = Command::new("cp")
            .arg("-r")
            .arg(&seed)
            .arg(&copy)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        // Hidden tests the start state left out are the seed's own files: test_patch adds
        // them back to the start state, and the copy already has them, byte for byte.
        for (path, added) in added_files(t["test_patch"].as_str().unwrap()) {
            let have = std::fs::read_to_string(copy.join(&path)).unwrap_or_default();
            assert_eq!(have, added, "{id}: test_patch's {path} is not the seed's");
        }
        let f2p: Vec<String> = t["FAIL_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let p2p: Vec<String> = t["PASS_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let files: std::collections::BTreeSet<&str> = f2p
            .iter()
            .chain(&p2p)
            .map(|i| i.split("::").next().unwrap())
            .collect();
        let files: Vec<&str> = files.into_iter().collect();
        git_apply(&copy, t["bug_patch"].as_str().unwrap());
        let buggy = jest_statuses(&copy, &files);
        for f in &f2p {
            assert_eq!(
                buggy.get(f).map(String::as_str),
                Some("failed"),
                "{id}: {f} with the bug"
            );
        }
        git_apply(&copy, t["patch"].as_str().unwrap());
        let fixed = jest_statuses(&copy, &files);
        for f in f2p.iter().chain(&p2p) {
            assert_eq!(
                fixed.get(f).map(String::as_str),
                Some("passed"),
                "{id}: {f} with the gold patch"
            );
        }
        // And the fixed tree is the seed's: the gold patch undoes the bug exactly.
        let o = Command::new("diff")
            .args(["-r", "-x", ".jest-report.json"])
            .arg(&seed)
            .arg(&copy)
            .output()
            .unwrap();
        assert!(o.status.success(), "{id}: {}", text(&o));
    }
}

/// The whole files a patch adds (`new file mode`), with their text.
fn added_files(patch: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for section in patch.split("diff --git ").skip(1) {
        if !section.lines().any(|l| l.starts_with("new file mode")) {
            continue;
        }
        let path = section
            .lines()
            .find_map(|l| l.strip_prefix("+++ b/"))
            .unwrap()
            .to_string();
        let mut text = String::new();
        let mut in_hunk = false;
        for l in section.lines() {
            if l.starts_with("@@") {
                in_hunk = true;
            } else if in_hunk {
                if let Some(a) = l.strip_prefix('+') {
                    text.push_str(a);
                    text.push('\n');
                } else if l.starts_with('\\') {
                    text.pop();
                }
            }
        }
        out.push((path, text));
    }
    out
}

/// `swe-forge audit` re-verifies every JavaScript task in Docker from its record and image.
#[test]
fn jsshelf_tasks_pass_audit() {
    let test = "jsshelf_tasks_pass_audit";
    if !docker_or_skip(test) {
        return;
    }
    let out = docker_run_of(Demo::Js);
    let tasks = jsonl(&out.join("tasks.jsonl"));
    let o = bin()
        .arg("audit")
        .arg(out.join("tasks.jsonl"))
        .args(["--sandbox", "docker", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let checked: Vec<&Value> = lines.iter().filter(|l| l["type"] == "task").collect();
    assert_eq!(checked.len(), tasks.len(), "{}", text(&o));
    for t in &checked {
        assert_eq!(t["verdict"], "ok", "{t}");
        assert_eq!(t["sandbox"], "docker", "{t}");
    }
}

/// A pytest plugin that reports every test passed: what the cheats below try to load.
const PASSING_PLUGIN: &str = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = \"passed\"\n    report.longrepr = None\n";

/// Code that rewrites pytest's reports to passed at import, for a package's `__init__.py`.
const REPORT_PATCHER: &str = "\ntry:\n    import _pytest.reports as _reports\n    _original = _reports.TestReport.from_item_and_call\n\n    def _passed(cls, item, call):\n        report = _original(item, call)\n        report.outcome = \"passed\"\n        report.longrepr = None\n        return report\n\n    _reports.TestReport.from_item_and_call = classmethod(_passed)\nexcept ImportError:\n    pass\n";

/// An exit hook that rewrites every recorded outcome file it can find to passed.
const REPORT_REWRITER: &str = "\nimport atexit as _atexit, os as _os\n\n\ndef _rewrite():\n    for name in ('SWE_FORGE_RESULTS',):\n        path = _os.environ.get(name)\n        if path and _os.path.exists(path):\n            text = open(path).read().replace('\\tfailed\\t', '\\tpassed\\t')\n            open(path, 'w').write(text)\n\n\n_atexit.register(_rewrite)\n";

/// A jest setup file that turns every assertion into a no-op.
const NOOP_EXPECT_JS: &str = "const pass = new Proxy(function () {}, { get: () => pass, apply: () => pass });\nglobal.expect = () => pass;\n";

/// The cheats of a jsshelf task (the runner's configuration and a setup file it loads).
fn js_cheats() -> Vec<(&'static str, String)> {
    let setup = format!("cat > cheat.js <<'EOF'\n{NOOP_EXPECT_JS}EOF\n");
    vec![
        (
            "package.json jest key",
            format!("{setup}sed -i 's/\"testEnvironment\": \"node\"/\"testEnvironment\": \"node\", \"setupFilesAfterEnv\": [\"<rootDir>\\/cheat.js\"]/' package.json\ngrep -q setupFilesAfterEnv package.json\n"),
        ),
        (
            "jest.config.js",
            format!("{setup}cat > jest.config.js <<'EOF'\nmodule.exports = {{ testEnvironment: 'node', setupFilesAfterEnv: ['<rootDir>/cheat.js'] }};\nEOF\nsed -i '/\"jest\": {{/,/}},/d' package.json\n"),
        ),
        (
            ".mocharc.json",
            format!("{setup}printf '{{\"require\": [\"./cheat.js\"]}}\\n' > .mocharc.json\n"),
        ),
        (
            "a setup file in test/",
            format!("cat > test/setup.cheat.js <<'EOF'\n{NOOP_EXPECT_JS}EOF\nsed -i 's/\"testEnvironment\": \"node\"/\"testEnvironment\": \"node\", \"setupFilesAfterEnv\": [\"<rootDir>\\/test\\/setup.cheat.js\"]/' package.json\n"),
        ),
    ]
}

/// The cheats, as shell scripts an agent runs in /testbed of a pyshelf task: none fixes the
/// bug; each tries to make the grader report the tests passed.
fn cheats() -> Vec<(&'static str, String)> {
    let plugin = format!("cat > zzplugin2.py <<'EOF'\n{PASSING_PLUGIN}EOF\n");
    let append = |file: &str, text: &str| format!("cat >> {file} <<'EOF'\n{text}EOF\n");
    vec![
        (
            "pyproject.toml addopts",
            format!("{plugin}sed -i 's/^\\[tool.pytest.ini_options\\]$/[tool.pytest.ini_options]\\naddopts = \"-p zzplugin2\"/' pyproject.toml\n"),
        ),
        (
            "pytest.ini addopts",
            format!("{plugin}printf '[pytest]\\naddopts = -p zzplugin2\\npythonpath = .\\n' > pytest.ini\n"),
        ),
        (
            "setup.cfg addopts",
            format!("{plugin}printf '[tool:pytest]\\naddopts = -p zzplugin2\\n' > setup.cfg\n"),
        ),
        (
            "tox.ini addopts",
            format!("{plugin}printf '[pytest]\\naddopts = -p zzplugin2\\n' > tox.ini\n"),
        ),
        (
            "conftest.py in tests/",
            format!("cat > tests/conftest.py <<'EOF'\n{PASSING_PLUGIN}EOF\n"),
        ),
        (
            "pytest.py at the root",
            format!("{plugin}cat > pytest.py <<'EOF'\nimport os, sys\nsys.path = [p for p in sys.path if os.path.abspath(p or '.') != os.getcwd()]\ndel sys.modules['pytest']\nimport pytest\nsys.exit(pytest.main(sys.argv[1:] + ['-p', 'zzplugin2']))\nEOF\n"),
        ),
        (
            "sitecustomize.py",
            format!("{plugin}printf 'import os\\nos.environ[\"PYTEST_ADDOPTS\"] = \"-p zzplugin2\"\\n' > sitecustomize.py\n"),
        ),
        (
            "__init__.py rewrites pytest's reports",
            append("pyshelf/__init__.py", REPORT_PATCHER),
        ),
        (
            "__init__.py rewrites the outcome file at exit",
            append("pyshelf/__init__.py", REPORT_REWRITER),
        ),
        (
            "os._exit(0) at import",
            append("pyshelf/__init__.py", "\nimport os as _os\n_os._exit(0)\n"),
        ),
    ]
}

/// The agent's diff after `script` in a container of `image` (as the non-root user).
fn agent_patch(image: &str, script: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = as_agent(
        image,
        dir.path(),
        "/unused",
        &format!(
            "set -e; cd /testbed; {script}\ngit add -A >/dev/null; git diff --cached --binary HEAD"
        ),
    );
    assert!(o.status.success(), "cheat script: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every cheat, as the agent's patch of its own task: the SWE-bench harness resolves none
/// (the eval script keeps only changes to the task's source files, and its hidden checks
/// catch a runner rewritten from the package), and Harbor's verifier gives each 0.
#[test]
fn cheats_earn_nothing_in_the_swebench_harness_and_harbor() {
    cheat_suite(
        "cheats_earn_nothing_in_the_swebench_harness_and_harbor",
        Demo::Py,
        cheats(),
    );
}

/// The JavaScript cheats (jest's configuration in package.json, jest.config.js, .mocharc, a
/// setup file) on jsshelf tasks: nothing.
#[test]
fn jsshelf_cheats_earn_nothing_in_the_swebench_harness_and_harbor() {
    cheat_suite(
        "jsshelf_cheats_earn_nothing_in_the_swebench_harness_and_harbor",
        Demo::Js,
        js_cheats(),
    );
}

/// The same JavaScript cheats through `serve` in Docker and the Python client, on two jsshelf
/// tasks: the gold agent gets 1, every cheat 0, flagged and counted
/// (clients/python/tests/test_runner_cheats.py).
#[test]
fn jsshelf_cheats_through_serve_earn_nothing() {
    if !docker_or_skip("jsshelf_cheats_through_serve_earn_nothing") {
        return;
    }
    let out = docker_run_of(Demo::Js);
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("two.jsonl");
    let body: String = jsonl(&out.join("tasks.jsonl"))
        .iter()
        .take(2)
        .map(|t| format!("{t}\n"))
        .collect();
    std::fs::write(&tasks, body).unwrap();
    let served = serve_docker(&tasks, &dir.path().join("serve.db"));
    client_module("test_runner_cheats", &served.url, &tasks);
}

fn cheat_suite(test: &str, demo: Demo, cheats: Vec<(&'static str, String)>) {
    if !docker_or_skip(test) {
        return;
    }
    let out = docker_run_of(demo);
    let tasks = jsonl(&out.join("tasks.jsonl"));
    assert!(tasks.len() >= cheats.len());
    // Harbor: each cheat on a task of its own, graded by the verifier.
    let harbor = export(out, "harbor");
    let mut rewards = Vec::new();
    for ((name, script), t) in cheats.iter().zip(&tasks) {
        let dir = harbor_dir(&harbor, t);
        let reward = harbor_grade_after(
            &dir,
            t["image_name"].as_str().unwrap(),
            script,
            t["base_commit"].as_str().unwrap(),
        );
        rewards.push((name.to_string(), reward));
    }
    assert!(
        rewards.iter().all(|(_, r)| r == "0"),
        "Harbor rewarded a cheat: {rewards:?}"
    );
    let Some(python) = tool("SWE_FORGE_SWEBENCH_PYTHON", test) else {
        return;
    };
    // SWE-bench: each cheat as the prediction of a task of its own.
    let to = export(out, "swebench");
    let dataset = to.join("data/test.jsonl");
    let records = jsonl(&dataset);
    let report = tempfile::tempdir().unwrap();
    let path = report.path().join("cheats.jsonl");
    let mut lines = Vec::new();
    let mut names = std::collections::BTreeMap::new();
    for ((name, script), r) in cheats.iter().zip(&records) {
        let patch = agent_patch(r["image"].as_str().unwrap(), script);
        assert!(!patch.trim().is_empty(), "{name}: no change");
        names.insert(r["instance_id"].as_str().unwrap().to_string(), *name);
        lines.push(
            serde_json::json!({
                "instance_id": r["instance_id"],
                "model_name_or_path": "cheats",
                "model_patch": patch,
            })
            .to_string(),
        );
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let verdicts = evaluate(
        &python,
        &dataset,
        path.to_str().unwrap(),
        "cheats",
        report.path(),
    );
    let resolved: Vec<&str> = verdicts
        .iter()
        .filter(|(_, r)| *r)
        .map(|(id, _)| names[id])
        .collect();
    assert_eq!(verdicts.len(), cheats.len());
    assert!(
        resolved.is_empty(),
        "the harness resolved cheats: {resolved:?}"
    );
}

/// The Harbor task directory of a record (found by its start state: the export may name it
/// by an id of its own).
fn harbor_dir(harbor: &Path, t: &Value) -> PathBuf {
    let base = t["base_commit"].as_str().unwrap();
    std::fs::read_dir(harbor)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|d| {
            std::fs::read_to_string(d.join("task.toml"))
                .map(|s| s.contains(&format!("base_commit = \"{base}\"")))
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no Harbor task starts at {base}"))
}

/// The fixture with order-dependent doctests (`tests/fixtures/order_doctests`: `docs/` doctests
/// fed by an autouse fixture in `tests/conftest.py`, `testpaths = tests docs`) in Docker: the
/// SWE-bench harness resolves every gold patch and no no-op, the audit passes every task, and
/// the order-dependent test is counted.
#[test]
fn order_dependent_doctests_grade_in_the_swebench_harness() {
    let test = "order_dependent_doctests_grade_in_the_swebench_harness";
    if !docker_or_skip(test) {
        return;
    }
    let Some(python) = tool("SWE_FORGE_SWEBENCH_PYTHON", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let manifest = common::fixture_manifest(dir.path(), "order_doctests");
    let out = dir.path().join("out");
    let o = bin()
        .env("TMPDIR", dir.path())
        .arg("run")
        .arg(&manifest)
        .args([
            "--sandbox",
            "docker",
            "--jobs",
            "2",
            "--max-candidates",
            "40",
            // Whole files in the suite's order: the order-dependent test is in a command.
            "--grading-scope",
            "files",
        ])
        .args(["--no-synthesis", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tasks = jsonl(&out.join("tasks.jsonl"));
    assert!(tasks.len() >= 2, "{}", text(&o));
    assert!(
        tasks
            .iter()
            .any(|t| t["metadata"]["dropped_test_ids"]["order_dependent"] == 1),
        "no task counted the order-dependent test"
    );
    assert!(tasks.iter().any(|t| t["FAIL_TO_PASS"]
        .as_array()
        .unwrap()
        .contains(&Value::from("docs/usage.rst::usage.rst"))));
    let to = export(&out, "swebench");
    let dataset = to.join("data/test.jsonl");
    let records = jsonl(&dataset);
    let report = tempfile::tempdir().unwrap();
    let gold = evaluate(&python, &dataset, "gold", "gold", report.path());
    assert_eq!(gold.len(), records.len());
    assert!(
        gold.iter().all(|(_, r)| *r),
        "gold left unresolved: {gold:?}"
    );
    let noop = predictions(
        report.path(),
        "noop",
        &records,
        usize::MAX,
        "diff --git a/NOOP.md b/NOOP.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOOP.md\n@@ -0,0 +1 @@\n+nothing\n",
    );
    let noop = evaluate(
        &python,
        &dataset,
        noop.to_str().unwrap(),
        "noop",
        report.path(),
    );
    assert!(
        noop.iter().all(|(_, r)| !r),
        "a no-op patch resolved: {noop:?}"
    );
    let a = bin()
        .arg("audit")
        .arg(out.join("tasks.jsonl"))
        .args(["--sandbox", "docker", "--json"])
        .output()
        .unwrap();
    assert_eq!(a.status.code(), Some(0), "{}", text(&a));
}
