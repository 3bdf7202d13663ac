//! The `swebench` export: a dataset directory with SWE-bench's schema and types, which the
//! swebench 5.x harness evaluates from the records and the task images alone (no
//! per-repository code in the harness).
//!
//! Layout under the export directory `DIR` (default `OUT/export-swebench`):
//! - `DIR/data/test.jsonl`: one record per task. Every column is a string, as in SWE-bench's
//!   published datasets: SWE-bench's twelve (`repo`, `instance_id`, `base_commit`, `patch`,
//!   `test_patch`, `problem_statement`, `hints_text`, `created_at`, `version`, `FAIL_TO_PASS`
//!   and `PASS_TO_PASS` JSON-encoded, `environment_setup_commit`); what swebench 5.x reads to
//!   evaluate a record (`image`: the task image, `eval_script`, `log_parser`:
//!   `parse_log_pytest`, `eval_type`: `pass_and_fail`); and swe-forge's (`image_name`,
//!   `language`, `bug_patch`, `metadata`: the record's metadata as JSON, with each run's
//!   per-test results as a list of `{test, status, seconds}`). U+2028, U+2029 and U+0085 are
//!   written escaped, so line-splitting readers keep one record per line.
//! - `DIR/README.md`: a dataset card whose YAML declares the split and the features, so
//!   `datasets.load_dataset(DIR)` types every column as a string (without it, `created_at`
//!   would be read as a timestamp).
//! - `DIR/export.json`: the [`ExportSummary`].
//!
//! Only Python (pytest) tasks with a task image are exported; others are reported with the
//! reason.

use super::{
    io_err, paths, read_tasks, write_summary, ExportConfig, ExportError, ExportFailure,
    ExportSummary, ExportedTask,
};
use crate::start_state::patch_sections;
use crate::task::Task;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::time::Instant;

/// SWE-bench's columns, in its order.
pub const SWEBENCH_COLUMNS: [&str; 12] = [
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
];

/// The columns swebench 5.x reads besides SWE-bench's, then swe-forge's own.
pub const EXTRA_COLUMNS: [&str; 8] = [
    "image",
    "eval_script",
    "log_parser",
    "eval_type",
    "image_name",
    "language",
    "bug_patch",
    "metadata",
];

/// Where the harness finds the repository in the image.
const ROOT: &str = "/testbed";

pub fn export(cfg: &ExportConfig) -> Result<ExportSummary, ExportError> {
    let started = Instant::now();
    let (tasks_file, to) = paths(cfg)?;
    let (mut summary, tasks) = read_tasks(&tasks_file, &to)?;
    let mut lines = String::new();
    let mut seen = BTreeSet::new();
    for task in tasks {
        match record(&task) {
            Ok(rec) if seen.insert(task.instance_id.to_lowercase()) => {
                lines.push_str(&jsonl_line(&rec));
                summary.exported.push(ExportedTask {
                    instance_id: task.instance_id.clone(),
                    seed: task.seed_name().to_string(),
                    branch: String::new(),
                    commit: task.base_commit.clone(),
                    base_commit: task.base_commit.clone(),
                });
            }
            Ok(_) => summary.failed.push(ExportFailure {
                instance_id: task.instance_id.clone(),
                seed: Some(task.seed_name().to_string()),
                reason: "the instance id is already used (case-insensitively)".into(),
            }),
            Err(reason) => summary.failed.push(ExportFailure {
                instance_id: task.instance_id.clone(),
                seed: Some(task.seed_name().to_string()),
                reason,
            }),
        }
    }
    let data = to.join("data");
    std::fs::create_dir_all(&data).map_err(io_err(format!("creating {}", data.display())))?;
    std::fs::write(data.join("test.jsonl"), lines).map_err(io_err("writing data/test.jsonl"))?;
    std::fs::write(to.join("README.md"), dataset_card())
        .map_err(io_err("writing the dataset card"))?;
    summary.seconds = started.elapsed().as_secs_f64();
    write_summary(&to, &summary)?;
    Ok(summary)
}

/// One JSON line, with the characters line-splitting readers break on escaped.
pub fn jsonl_line(v: &Value) -> String {
    let s = serde_json::to_string(v).expect("a JSON value serializes");
    let mut out = String::with_capacity(s.len() + 1);
    for c in s.chars() {
        match c {
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            '\u{0085}' => out.push_str("\\u0085"),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// The export record of a task, or why it cannot be one.
pub fn record(t: &Task) -> Result<Value, String> {
    let toolchain = t
        .toolchain()
        .ok_or("the record names no toolchain")?
        .toolchain();
    let image = t
        .image_name
        .clone()
        .ok_or("the record names no image (made with the local sandbox): the harness runs tasks in their images")?;
    if t.fail_to_pass.is_empty() {
        return Err("FAIL_TO_PASS is empty (the harness would count it resolved)".into());
    }
    let id_ok = t
        .instance_id
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && t.instance_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !id_ok {
        return Err(format!(
            "instance id `{}` cannot name a container (letters, digits, `_`, `.`, `-`)",
            t.instance_id
        ));
    }
    if let Some(bad) = t
        .fail_to_pass
        .iter()
        .chain(&t.pass_to_pass)
        .find(|id| !toolchain.harness_readable(id))
    {
        return Err(format!(
            "test id `{bad}` cannot be read back from the harness's log"
        ));
    }
    let (eval, log_parser) = eval_script(t)?;
    let mut metadata = serde_json::to_value(&t.metadata).map_err(|e| e.to_string())?;
    results_as_lists(&mut metadata);
    let s = |v: &str| Value::String(v.to_string());
    let mut rec = Map::new();
    rec.insert("repo".into(), s(&t.repo));
    rec.insert("instance_id".into(), s(&t.instance_id));
    rec.insert("base_commit".into(), s(&t.base_commit));
    rec.insert("patch".into(), s(&t.patch));
    rec.insert("test_patch".into(), s(&t.test_patch));
    rec.insert("problem_statement".into(), s(&t.problem_statement));
    rec.insert("hints_text".into(), s(&t.hints_text));
    rec.insert("created_at".into(), s(&created_at(&t.created_at)));
    rec.insert(
        "version".into(),
        s(if t.version.is_empty() {
            "0"
        } else {
            &t.version
        }),
    );
    rec.insert("FAIL_TO_PASS".into(), s(&json!(t.fail_to_pass).to_string()));
    rec.insert("PASS_TO_PASS".into(), s(&json!(t.pass_to_pass).to_string()));
    rec.insert(
        "environment_setup_commit".into(),
        s(&t.environment_setup_commit),
    );
    rec.insert("image".into(), s(&image));
    rec.insert("eval_script".into(), s(&eval));
    rec.insert("log_parser".into(), s(log_parser));
    rec.insert("eval_type".into(), s("pass_and_fail"));
    rec.insert("image_name".into(), s(&image));
    rec.insert("language".into(), s(t.language.name()));
    rec.insert("bug_patch".into(), s(&t.bug_patch));
    rec.insert("metadata".into(), s(&metadata.to_string()));
    Ok(Value::Object(rec))
}

/// `created_at` as ISO 8601 with microseconds and an explicit offset
/// (`2026-12-01T09:55:38.000000+00:00`): `datasets` (pyarrow) reads a `…T…Z` string from JSON
/// as a timestamp and gives it back re-formatted even under a string feature; this form stays
/// the string written. Other forms are kept as they are.
pub fn created_at(t: &str) -> String {
    let b = t.as_bytes();
    let shape = b.len() == 20
        && b[19] == b'Z'
        && b[10] == b'T'
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        });
    if shape {
        format!("{}.000000+00:00", &t[..19])
    } else {
        t.to_string()
    }
}

/// Each run's `results` map (`id → {status, duration_s, message}`) as a list of
/// `{test, status, seconds}` (and `message` where there is one), in id order.
pub fn results_as_lists(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if k == "results" {
                    if let Value::Object(results) = child {
                        let list: Vec<Value> = results
                            .iter()
                            .map(|(id, r)| {
                                let mut o = Map::new();
                                o.insert("test".into(), Value::String(id.clone()));
                                o.insert("status".into(), r["status"].clone());
                                o.insert("seconds".into(), r["duration_s"].clone());
                                if let Some(m) = r.get("message") {
                                    o.insert("message".into(), m.clone());
                                }
                                Value::Object(o)
                            })
                            .collect();
                        *child = Value::Array(list);
                        continue;
                    }
                }
                results_as_lists(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(results_as_lists),
        _ => {}
    }
}

/// The script the harness runs after applying the model patch
/// (`templates/swebench/eval.sh.j2`), and the log parser that reads its output: the tests run
/// as the task's toolchain says ([`crate::toolchain::Toolchain::harness_run`]).
pub fn eval_script(t: &Task) -> Result<(String, &'static str), String> {
    let q = crate::sandbox::shell_quote;
    let mut added = Vec::new();
    let mut touched = Vec::new();
    for (path, section) in patch_sections(&t.test_patch) {
        if section.lines().any(|l| l.starts_with("new file mode")) {
            added.push(q(&path));
        } else {
            touched.push(q(&path));
        }
    }
    let graded: Vec<String> = t
        .fail_to_pass
        .iter()
        .chain(&t.pass_to_pass)
        .cloned()
        .collect();
    let toolchain = t
        .toolchain()
        .ok_or("the record names no toolchain")?
        .toolchain();
    let run = toolchain.harness_run(
        crate::toolchain::Harness::SweBench,
        &t.grading(),
        &graded,
        "/tmp/swe-forge-eval",
    )?;
    let body = t.test_patch.strip_suffix('\n').unwrap_or(&t.test_patch);
    let delimiter = format!(
        "EOF_SWE_FORGE_{}",
        &blake3::hash(t.test_patch.as_bytes()).to_hex()[..12]
    );
    let source = crate::assets::template("swebench/eval.sh.j2")
        .ok_or("templates/swebench/eval.sh.j2 is missing from the build")?;
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    let text = env
        .render_str(
            source,
            minijinja::context! {
                root => ROOT,
                base_commit => t.base_commit,
                touched => touched.join(" "),
                added => added.join(" "),
                test_patch => body,
                delimiter => delimiter,
                setup => run.setup.trim_end(),
                keep_sources => t.grading().shell_keep_sources(&t.base_commit, &crate::leak::patch_files(&t.test_patch)).trim_end().to_string(),
                test_command => run.command,
            },
        )
        .map_err(|e| format!("rendering the eval script: {e}"))?;
    Ok((text.trim_start().to_string() + "\n", run.log_parser))
}

/// The dataset card: the split's file and every column as a string.
pub fn dataset_card() -> String {
    let mut features = String::new();
    for c in SWEBENCH_COLUMNS.iter().chain(EXTRA_COLUMNS.iter()) {
        features.push_str(&format!("  - name: {c}\n    dtype: string\n"));
    }
    format!(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test.jsonl\ndataset_info:\n  features:\n{features}---\n\n\
# swe-forge tasks (SWE-bench format)\n\n\
Tasks generated by swe-forge, one record per line in `data/test.jsonl`, with SWE-bench's columns\n\
and types (every column a string; `FAIL_TO_PASS` and `PASS_TO_PASS` JSON-encoded lists). The\n\
columns `image`, `eval_script`, `log_parser` and `eval_type` let the swebench 5.x harness\n\
evaluate a record in its image (`image`, built by `swe-forge image tasks`) with no\n\
per-repository code; `metadata` is swe-forge's metadata as a JSON string.\n\n\
```sh\npython -m swebench.harness.run_evaluation --dataset_name data/test.jsonl \\\n    --predictions_path gold --run_id check --max_workers 2\n```\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_line_separators() {
        let l = jsonl_line(&json!({"a": "x\u{2028}y\u{85}"}));
        assert_eq!(l, "{\"a\":\"x\\u2028y\\u0085\"}\n");
        assert_eq!(l.lines().count(), 1);
        let back: Value = serde_json::from_str(l.trim()).unwrap();
        assert_eq!(back["a"], "x\u{2028}y\u{85}");
    }

    #[test]
    fn created_at_keeps_its_string_form() {
        assert_eq!(
            created_at("2026-12-01T09:55:38Z"),
            "2026-12-01T09:55:38.000000+00:00"
        );
        assert_eq!(created_at("yesterday"), "yesterday");
    }

    #[test]
    fn results_become_lists() {
        let mut v = json!({"verification": {"runs": [{"label": "buggy#1", "results": {
            "t.py::a": {"status": "failed", "duration_s": 0.5, "message": "boom"},
            "t.py::b": {"status": "passed", "duration_s": 0.1}
        }}]}});
        results_as_lists(&mut v);
        assert_eq!(
            v["verification"]["runs"][0]["results"],
            json!([
                {"test": "t.py::a", "status": "failed", "seconds": 0.5, "message": "boom"},
                {"test": "t.py::b", "status": "passed", "seconds": 0.1}
            ])
        );
    }
}
