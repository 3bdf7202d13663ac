//! The `harbor` export: a directory per task in the Harbor task format.
//!
//! Layout under the export directory `DIR` (default `OUT/export-harbor`), per task
//! `DIR/<instance_id>/`:
//! - `instruction.md`: the problem statement;
//! - `task.toml`: the task's metadata (instance id, repo, base commit, category, difficulty,
//!   tests), the verifier in a separate environment (`environment_mode = "separate"`), and a
//!   collect hook that writes the agent's diff of `/testbed` to `/logs/artifacts/agent.patch`;
//! - `environment/Dockerfile`: `FROM` the task image (the start state: no hidden tests, no fix);
//! - `solution/solve.sh` + `solution/fix.patch`: applies the gold `patch`;
//! - `tests/test.sh` + `tests/test.patch`: in a fresh container of the start state, applies the
//!   agent's diff without test files, then `test_patch`, runs FAIL_TO_PASS and PASS_TO_PASS and
//!   writes 1 or 0 to `/logs/verifier/reward.txt`.
//!
//! Texts are `templates/harbor/*.j2`. Only Python (pytest) tasks with a task image are
//! exported; others are reported with the reason. `DIR/export.json` is the summary.

use super::{
    paths, read_tasks, write_summary, ExportConfig, ExportError, ExportFailure, ExportSummary,
    ExportedTask,
};
use crate::task::Task;
use std::path::Path;
use std::time::Instant;

pub fn export(cfg: &ExportConfig) -> Result<ExportSummary, ExportError> {
    let started = Instant::now();
    let (tasks_file, to) = paths(cfg)?;
    let (mut summary, tasks) = read_tasks(&tasks_file, &to)?;
    for task in tasks {
        let dir = to.join(dir_name(&task.instance_id));
        match write_task(&task, &dir) {
            Ok(()) => summary.exported.push(ExportedTask {
                instance_id: task.instance_id.clone(),
                seed: task.seed_name().to_string(),
                branch: String::new(),
                commit: task.base_commit.clone(),
                base_commit: task.base_commit.clone(),
            }),
            Err(reason) => {
                let _ = std::fs::remove_dir_all(&dir);
                summary.failed.push(ExportFailure {
                    instance_id: task.instance_id.clone(),
                    seed: Some(task.seed_name().to_string()),
                    reason,
                })
            }
        }
    }
    summary.seconds = started.elapsed().as_secs_f64();
    write_summary(&to, &summary)?;
    Ok(summary)
}

/// A task's directory name: the instance id with characters a path should not hold as `_`.
pub fn dir_name(instance_id: &str) -> String {
    let s: String = instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "task".into()
    } else {
        s
    }
}

fn env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    // A JSON string or array of strings is a TOML basic string or array.
    env.add_filter("toml", |v: minijinja::Value| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| crate::sandbox::shell_quote(&v));
    env
}

fn render(name: &str, ctx: minijinja::Value) -> Result<String, String> {
    let path = format!("harbor/{name}.j2");
    let source = crate::assets::template(&path)
        .ok_or(format!("templates/{path} is missing from the build"))?;
    let text = env()
        .render_str(source, ctx)
        .map_err(|e| format!("rendering {path}: {e}"))?;
    Ok(text.trim_start().to_string() + "\n")
}

fn write(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("setting the mode of {}: {e}", path.display()))
}

/// Write one task's directory.
pub fn write_task(t: &Task, dir: &Path) -> Result<(), String> {
    let toolchain = t
        .toolchain()
        .ok_or("the record names no toolchain")?
        .toolchain();
    let image = t
        .image_name
        .as_deref()
        .ok_or("the record names no image (made with the local sandbox)")?;
    if t.fail_to_pass.is_empty() {
        return Err("FAIL_TO_PASS is empty".into());
    }
    // Only the agent's changes to the task's source files are applied (the record's grading
    // command says which: protected names and hidden files excluded, source globs included).
    let hidden: Vec<String> = crate::leak::patch_files(&t.test_patch);
    let rules = t.grading().git_apply_rules(&hidden);
    let tests: Vec<String> = t
        .fail_to_pass
        .iter()
        .chain(&t.pass_to_pass)
        .cloned()
        .collect();
    let description: String = t
        .problem_statement
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("Fix the bug described in instruction.md")
        .trim_start_matches('#')
        .trim()
        .chars()
        .take(200)
        .collect();
    let level = match t.metadata.difficulty.score {
        s if s < 0.34 => "easy",
        s if s < 0.67 => "medium",
        _ => "hard",
    };
    let longest = crate::audit::longest_recorded_run(t);
    let run = toolchain.harness_run(
        crate::toolchain::Harness::Harbor,
        &t.grading(),
        &tests,
        "/logs/verifier",
    )?;
    let ctx = minijinja::context! {
        name => format!("swe-forge/{}", dir_name(&t.instance_id).to_lowercase()),
        description => description,
        keywords => vec![t.language.name().to_string(), "bugfix".to_string(), t.metadata.category.clone(), "swe-forge".to_string()],
        instance_id => t.instance_id,
        repo => t.repo,
        base_commit => t.base_commit,
        language => t.language.name(),
        category => t.metadata.category,
        difficulty => level,
        score => t.metadata.difficulty.score,
        mutators => t.metadata.mutators,
        hidden_tests => t.metadata.start_state.as_ref().map(|s| s.hidden_tests.as_str()).unwrap_or("visible"),
        fail_to_pass => t.fail_to_pass,
        pass_to_pass => t.pass_to_pass,
        tool_version => t.metadata.tool_version,
        verifier_timeout => format!("{:.1}", crate::timeouts::harbor_verifier_s(longest)),
        image => image,
        tests => tests,
        apply_rules => rules,
        setup => run.setup.trim_end(),
        run_tests => run.command,
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    write(
        &dir.join("instruction.md"),
        &(t.problem_statement.trim_end().to_string() + "\n"),
        0o644,
    )?;
    write(
        &dir.join("task.toml"),
        &render("task.toml", ctx.clone())?,
        0o644,
    )?;
    write(
        &dir.join("environment/Dockerfile"),
        &render("Dockerfile", ctx.clone())?,
        0o644,
    )?;
    write(
        &dir.join("solution/solve.sh"),
        &render("solve.sh", ctx.clone())?,
        0o755,
    )?;
    write(&dir.join("solution/fix.patch"), &t.patch, 0o644)?;
    write(&dir.join("tests/test.sh"), &render("test.sh", ctx)?, 0o755)?;
    write(&dir.join("tests/test.patch"), &t.test_patch, 0o644)?;
    Ok(())
}
