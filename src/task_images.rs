//! Task images for task records: each task's start state, written from its seed's mirror as a
//! one-commit repository, layered on the seed's repository image
//! ([`crate::sandbox::task_image`]). `run` builds them for the tasks it accepts with the Docker
//! sandbox; `swe-forge image tasks TASKS.jsonl` builds them from the records alone (importing
//! each seed afresh, rebuilding its repository image where it is missing, and checking that
//! the start state rebuilt from the record is the record's `base_commit`).

use crate::sandbox::docker::Client;
use crate::sandbox::task_image::{self, TaskImageSpec, TaskImagesSummary};
use crate::task::Task;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// One task's image, as `image tasks` reports it.
#[derive(Clone, Debug, Serialize)]
pub struct TaskImageLine {
    pub instance_id: String,
    pub image: Option<String>,
    /// `built`, `reused` or `failed`.
    pub status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Bytes of the task's own layer (the start state; the layers below are shared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_bytes: Option<u64>,
}

/// Build (or find) the images of `tasks`, whose start states are in the repository at
/// `mirror`. A task without `image_name` or repository image is skipped; a failure is
/// recorded for its task and the others go on.
pub fn build_for_tasks(
    cache: &Path,
    mirror: &Path,
    tasks: &[&Task],
    progress: &dyn Fn(&str),
) -> (TaskImagesSummary, Vec<TaskImageLine>) {
    let started = Instant::now();
    let mut summary = TaskImagesSummary::default();
    let mut lines = Vec::new();
    let client = match Client::connect(Duration::from_secs(5)) {
        Ok(c) => c,
        Err(e) => {
            for t in tasks {
                summary.failed += 1;
                lines.push(failed(t, format!("docker: {e}")));
            }
            return (summary, lines);
        }
    };
    let repo = match git2::Repository::open_bare(mirror).or_else(|_| git2::Repository::open(mirror))
    {
        Ok(r) => r,
        Err(e) => {
            for t in tasks {
                summary.failed += 1;
                lines.push(failed(t, format!("opening the mirror: {}", e.message())));
            }
            return (summary, lines);
        }
    };
    let mut sizes: Vec<u64> = Vec::new();
    for t in tasks {
        let line = build_one(&client, cache, &repo, t, progress);
        match line.status.as_str() {
            "built" => summary.built += 1,
            "reused" => summary.reused += 1,
            _ => summary.failed += 1,
        }
        if let Some(b) = line.layer_bytes {
            sizes.push(b);
        }
        if line.status == "failed" {
            tracing::warn!(task = %t.instance_id, "task image: {}", line.detail);
        }
        lines.push(line);
    }
    sizes.sort_unstable();
    summary.layer_bytes_median = sizes.get(sizes.len() / 2).copied();
    summary.layer_bytes_max = sizes.last().copied();
    summary.seconds = started.elapsed().as_secs_f64();
    (summary, lines)
}

fn failed(t: &Task, detail: String) -> TaskImageLine {
    TaskImageLine {
        instance_id: t.instance_id.clone(),
        image: t.image_name.clone(),
        status: "failed".into(),
        detail,
        layer_bytes: None,
    }
}

fn build_one(
    client: &Client,
    cache: &Path,
    repo: &git2::Repository,
    t: &Task,
    progress: &dyn Fn(&str),
) -> TaskImageLine {
    let Some(tag) = t.image_name.as_deref() else {
        return failed(
            t,
            "the record names no image (made with the local sandbox)".into(),
        );
    };
    let Some(toolchain) = t.toolchain() else {
        return failed(t, "the record names no toolchain".into());
    };
    let layer = toolchain.toolchain().task_layer();
    let Some(repo_image) = t
        .metadata
        .start_state
        .as_ref()
        .and_then(|s| s.repo_image.as_deref())
    else {
        return failed(t, "the record names no repository image".into());
    };
    let base = match git2::Oid::from_str(&t.base_commit) {
        Ok(o) => o,
        Err(_) => {
            return failed(
                t,
                format!("base_commit `{}` is not a commit id", t.base_commit),
            )
        }
    };
    let dir = match tempfile::Builder::new()
        .prefix("swe-forge-start-")
        .tempdir()
    {
        Ok(d) => d,
        Err(e) => return failed(t, format!("a temporary directory: {e}")),
    };
    let start_repo = dir.path().join("testbed");
    if let Err(e) = crate::start_state::write_repository(repo, base, &start_repo) {
        return failed(t, e.to_string());
    }
    let spec = TaskImageSpec {
        tag,
        repo_image,
        layer: &layer,
        start_repo: &start_repo,
        instance_id: &t.instance_id,
        base_commit: &t.base_commit,
    };
    match task_image::ensure(client, cache, &spec, progress) {
        Ok(img) => TaskImageLine {
            instance_id: t.instance_id.clone(),
            image: Some(img.tag.clone()),
            status: if img.built { "built" } else { "reused" }.into(),
            detail: String::new(),
            layer_bytes: task_image::layer_size(client, &img.tag).ok(),
        },
        Err(e) => failed(t, e.to_string()),
    }
}

/// `swe-forge image tasks`: the images of the records in `tasks_file` (only those whose
/// `image_name` is set), seed by seed: the seed imported afresh at the clean commit, the start
/// state rebuilt from the record and checked against `base_commit`, the repository image
/// found or rebuilt (it must be the record's `metadata.start_state.repo_image`), then the task
/// layer.
pub fn build_from_records(
    tasks: &[Task],
    tasks_file: &Path,
    cache: &Path,
    limits: crate::sandbox::Limits,
    progress: &dyn Fn(&str),
) -> Result<(TaskImagesSummary, Vec<TaskImageLine>), String> {
    let started = Instant::now();
    let docker = crate::sandbox::docker::DockerSandbox::connect(cache, limits)
        .map_err(|e| format!("the docker sandbox cannot be used: {e}"))?;
    let mut groups: std::collections::BTreeMap<(String, String), Vec<&Task>> = Default::default();
    for t in tasks.iter().filter(|t| t.image_name.is_some()) {
        groups
            .entry((t.seed_name().to_string(), t.clean_commit().to_string()))
            .or_default()
            .push(t);
    }
    let mut summary = TaskImagesSummary::default();
    let mut lines = Vec::new();
    let mut sizes = Vec::new();
    for ((seed, _), group) in groups {
        let prepared = (|| -> Result<std::path::PathBuf, String> {
            // The seed at its clean commit; each record's start state rebuilt in its mirror.
            let repo = crate::audit::import_for_record(group[0], cache, tasks_file)?;
            let env = crate::toolchain::prepare(&docker, &repo).map_err(|e| e.to_string())?;
            let want = group[0]
                .metadata
                .start_state
                .as_ref()
                .and_then(|s| s.repo_image.clone());
            if env.image_name() != want {
                return Err(format!(
                    "the repository image made here is {:?}, not the record's {:?} (a different \
                     base image or recipe)",
                    env.image_name(),
                    want
                ));
            }
            for t in &group {
                if let Some(info) = &t.metadata.start_state {
                    let rebuilt = crate::audit::rebuild_start_state(t, info, &repo)?;
                    if rebuilt != t.base_commit {
                        return Err(format!(
                            "{}: start state rebuilt as {rebuilt}, not base_commit {}",
                            t.instance_id, t.base_commit
                        ));
                    }
                }
            }
            Ok(repo.mirror.clone())
        })();
        match prepared {
            Ok(mirror) => {
                let (s, l) = build_for_tasks(cache, &mirror, &group, progress);
                summary.built += s.built;
                summary.reused += s.reused;
                summary.failed += s.failed;
                sizes.extend(l.iter().filter_map(|x| x.layer_bytes));
                lines.extend(l);
            }
            Err(e) => {
                tracing::warn!(seed = %seed, "task images: {e}");
                for t in group {
                    summary.failed += 1;
                    lines.push(failed(t, e.clone()));
                }
            }
        }
    }
    sizes.sort_unstable();
    summary.layer_bytes_median = sizes.get(sizes.len() / 2).copied();
    summary.layer_bytes_max = sizes.last().copied();
    summary.seconds = started.elapsed().as_secs_f64();
    Ok((summary, lines))
}
