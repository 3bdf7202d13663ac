//! Export: the tasks of a run as git repositories — one bare repository per seed, the base
//! commit on `main` and each task's buggy state on its own branch — for agents and tools that
//! start from a repository rather than from a JSONL record.
//!
//! Layout under the export directory `DIR` (default `OUT/export`):
//! - `DIR/<seed>.git`: a bare repository (clone it to get a working tree). It holds the base
//!   commit with its history, copied from the seed's mirror with the same commit ids, so
//!   `base_commit` of a task names a commit of the export. `main` points at the base commit of
//!   the seed's first task in the file (a seed whose tasks name several base commits has each
//!   of them as the parent of its tasks' branches). Each task has a branch
//!   `task/<instance_id>` (characters a ref name cannot hold become `_`): one commit on top of
//!   its base commit whose tree is the base tree with `bug_patch` applied, by the signature
//!   `swe-forge <swe-forge@localhost>` at the base commit's time, with the message
//!   `swe-forge task <instance_id>`: no diff, no test names, nothing of the fix. `task/*`
//!   branches of an earlier export that the tasks file no longer has are deleted.
//! - `DIR/tasks.jsonl`: a copy of the tasks file exported.
//! - `DIR/export.json`: the [`ExportSummary`].
//!
//! The base commit comes from the seed's source as recorded in the task
//! (`metadata.environment.source`), imported with [`crate::repo::import`] into the cache (a git
//! source pinned at `base_commit`; a directory or sdist is committed again, which gives the
//! same commit while its content is unchanged). A task whose base cannot be found, whose record
//! does not parse, or whose patch does not apply is reported with the reason and the export
//! goes on with the others.

pub mod harbor;
pub mod swebench;

use crate::seed;
use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why an export could not be made at all (a failure of one task is an [`ExportFailure`]).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{}: no such output directory", .0.display())]
    NoOutDir(PathBuf),
    #[error("{}: no tasks file (run `swe-forge run` first, or pass --tasks FILE)", .0.display())]
    NoTasks(PathBuf),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("{context}: {}", source.message())]
    Git {
        context: String,
        source: git2::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExportError {
    let context = context.into();
    move |source| ExportError::Io { context, source }
}

fn git_err(context: impl Into<String>) -> impl FnOnce(git2::Error) -> ExportError {
    let context = context.into();
    move |source| ExportError::Git { context, source }
}

/// What to export and where.
#[derive(Clone, Debug)]
pub struct ExportConfig {
    /// The run's output directory.
    pub out: PathBuf,
    /// The tasks file; `OUT/tasks.jsonl` when `None`.
    pub tasks: Option<PathBuf>,
    /// Where the repositories go; `OUT/export` when `None`.
    pub to: Option<PathBuf>,
    /// The swe-forge cache (mirrors and checkouts of the seeds).
    pub cache: PathBuf,
    pub format: ExportFormat,
    /// The instance ids the `swebench` and `harbor` formats write (the `git` format, which
    /// copies the whole tasks file for people, keeps the record's).
    pub id_style: IdStyle,
}

/// How a task is named where an agent can see it (`--id-style`): a record's own instance id
/// (`pyshelf__py-remove-assignment__608d77fa`) names the mutator, which tells the agent the
/// bug.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum IdStyle {
    /// `<seed>__<12 hex digits of blake3(instance_id)>`: stable for a record, and nothing of
    /// its mutator or category (those stay in `metadata`).
    #[default]
    Opaque,
    /// The record's instance id as it is.
    Descriptive,
}

impl IdStyle {
    /// The id a task with this instance id and seed is shown under.
    pub fn id(self, instance_id: &str, seed: &str) -> String {
        match self {
            IdStyle::Descriptive => instance_id.to_string(),
            IdStyle::Opaque => opaque_id(instance_id, seed),
        }
    }

    /// The id `task` is shown under.
    pub fn of(self, task: &crate::task::Task) -> String {
        self.id(&task.instance_id, task.seed_name())
    }
}

/// `<seed>__<12 hex digits of blake3(instance_id)>`, the seed's name with characters an id
/// should not hold as `_` (a container, a directory and a ref can all be named by it).
pub fn opaque_id(instance_id: &str, seed: &str) -> String {
    let seed: String = seed
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let seed = seed.trim_start_matches(['.', '-', '_']);
    let seed = if seed.is_empty() { "task" } else { seed };
    let hash = blake3::hash(instance_id.as_bytes()).to_hex();
    format!("{seed}__{}", &hash[..12])
}

/// The tasks file of an export, with the ids its records are to be shown under (what
/// [`read_tasks`] gives the formats that need whole records).
#[derive(Clone, Debug)]
pub(crate) struct TasksFile {
    pub path: PathBuf,
    pub ids: IdStyle,
}

impl std::ops::Deref for TasksFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TasksFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// What an export did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExportSummary {
    pub to: PathBuf,
    pub tasks_file: PathBuf,
    /// Task records read (lines that parsed or not).
    pub tasks: usize,
    pub repositories: Vec<RepositoryExport>,
    pub exported: Vec<ExportedTask>,
    pub failed: Vec<ExportFailure>,
    pub seconds: f64,
}

/// One seed's repository.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RepositoryExport {
    pub seed: String,
    pub path: PathBuf,
    /// The commit `main` points at.
    pub main: Option<String>,
    pub base_commits: Vec<String>,
    pub branches: usize,
    /// `task/*` branches of an earlier export removed because the tasks file lacks them.
    pub removed_branches: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExportedTask {
    pub instance_id: String,
    pub seed: String,
    pub branch: String,
    pub commit: String,
    pub base_commit: String,
}

/// A task that was not exported, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExportFailure {
    /// The instance id, or `line N` when the record does not parse.
    pub instance_id: String,
    pub seed: Option<String>,
    pub reason: String,
}

/// The fields of a task record the export needs (read leniently: other fields are ignored, so
/// records of older or newer versions still export).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskLine {
    instance_id: String,
    repo: String,
    base_commit: String,
    bug_patch: String,
    test_patch: String,
    language: Option<crate::lang::Language>,
    metadata: TaskMeta,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskMeta {
    environment: EnvLine,
    start_state: Option<crate::start_state::StartStateInfo>,
}

impl TaskLine {
    /// The seed's clean commit (`base_commit` in records written before start states).
    fn clean(&self) -> &str {
        self.metadata
            .start_state
            .as_ref()
            .map(|s| s.clean_commit.as_str())
            .unwrap_or(&self.base_commit)
    }

    fn seed(&self) -> &str {
        if self.metadata.environment.seed.is_empty() {
            &self.repo
        } else {
            &self.metadata.environment.seed
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EnvLine {
    seed: String,
    source: String,
}

/// The branch name (without `refs/heads/`) of a task: `task/<instance_id>` with every
/// character a ref cannot hold replaced by `_`.
pub fn branch_name(instance_id: &str) -> String {
    let mut s: String = instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while s.contains("..") {
        s = s.replace("..", "_.");
    }
    if s.starts_with('.') || s.starts_with('-') {
        s.insert(0, '_');
    }
    if s.is_empty() || s.ends_with('.') || s.ends_with(".lock") {
        s.push('_');
    }
    let name = format!("task/{s}");
    if git2::Reference::is_valid_name(&format!("refs/heads/{name}")) {
        name
    } else {
        // Not reachable with the rules above; a content-derived name keeps it unique anyway.
        format!(
            "task/{}",
            &blake3::hash(instance_id.as_bytes()).to_hex()[..16]
        )
    }
}

/// The export formats (`--format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportFormat {
    /// Bare repositories with a parentless branch per task (the module docs).
    #[default]
    Git,
    /// A dataset directory with SWE-bench's schema and types, evaluable by the swebench 5.x
    /// harness from the records and the task images alone ([`swebench`]).
    Swebench,
    /// A directory per task in the Harbor task format ([`harbor`]).
    Harbor,
}

impl ExportFormat {
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Git => "git",
            ExportFormat::Swebench => "swebench",
            ExportFormat::Harbor => "harbor",
        }
    }
}

/// Export the tasks of `cfg.out` in `cfg.format`.
pub fn export(cfg: &ExportConfig) -> Result<ExportSummary, ExportError> {
    match cfg.format {
        ExportFormat::Git => export_git(cfg),
        ExportFormat::Swebench => swebench::export(cfg),
        ExportFormat::Harbor => harbor::export(cfg),
    }
}

/// The tasks file and the export directory of a config (`OUT/tasks.jsonl`, `OUT/export` or
/// `OUT/export-<format>`), checked and created.
pub(crate) fn paths(cfg: &ExportConfig) -> Result<(TasksFile, PathBuf), ExportError> {
    if !cfg.out.is_dir() {
        return Err(ExportError::NoOutDir(cfg.out.clone()));
    }
    let tasks_file = cfg
        .tasks
        .clone()
        .unwrap_or_else(|| cfg.out.join("tasks.jsonl"));
    if !tasks_file.is_file() {
        return Err(ExportError::NoTasks(tasks_file));
    }
    let default = match cfg.format {
        ExportFormat::Git => "export".to_string(),
        f => format!("export-{}", f.name()),
    };
    let to = cfg.to.clone().unwrap_or_else(|| cfg.out.join(default));
    std::fs::create_dir_all(&to).map_err(io_err(format!("creating {}", to.display())))?;
    let tasks_file = TasksFile {
        path: tasks_file,
        ids: cfg.id_style,
    };
    Ok((tasks_file, to))
}

/// The task records of `tasks_file` (a summary with the count, and the lines that do not parse
/// as tasks recorded as failures), for the formats that need whole records; each record's
/// `instance_id` is the id it is to be shown under (`tasks_file.ids`).
pub(crate) fn read_tasks(
    tasks_file: &TasksFile,
    to: &Path,
) -> Result<(ExportSummary, Vec<crate::task::Task>), ExportError> {
    let text = std::fs::read_to_string(tasks_file)
        .map_err(io_err(format!("reading {}", tasks_file.display())))?;
    let mut summary = ExportSummary {
        to: to.to_path_buf(),
        tasks_file: tasks_file.path.clone(),
        ..Default::default()
    };
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        summary.tasks += 1;
        match serde_json::from_str::<crate::task::Task>(line) {
            Ok(mut t) => {
                t.instance_id = tasks_file.ids.of(&t);
                tasks.push(t)
            }
            Err(e) => summary.failed.push(ExportFailure {
                instance_id: format!("line {}", i + 1),
                seed: None,
                reason: format!("the record does not parse as a task: {e}"),
            }),
        }
    }
    Ok((summary, tasks))
}

/// Write `DIR/export.json`.
pub(crate) fn write_summary(to: &Path, summary: &ExportSummary) -> Result<(), ExportError> {
    let json = serde_json::to_string_pretty(summary).expect("summary serializes");
    std::fs::write(to.join("export.json"), json + "\n").map_err(io_err("writing export.json"))
}

/// Export as git repositories (see the module docs).
fn export_git(cfg: &ExportConfig) -> Result<ExportSummary, ExportError> {
    let started = Instant::now();
    let (tasks_file, to) = paths(cfg)?;
    let text = std::fs::read_to_string(&tasks_file)
        .map_err(io_err(format!("reading {}", tasks_file.display())))?;
    let mut summary = ExportSummary {
        to: to.clone(),
        tasks_file: tasks_file.path.clone(),
        ..Default::default()
    };

    // Parse and group by seed, keeping the file's order.
    let mut by_seed: BTreeMap<String, Vec<TaskLine>> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        summary.tasks += 1;
        let fail = |summary: &mut ExportSummary, id: String, seed: Option<String>, reason| {
            summary.failed.push(ExportFailure {
                instance_id: id,
                seed,
                reason,
            })
        };
        let t: TaskLine = match serde_json::from_str(line) {
            Ok(t) => t,
            Err(e) => {
                fail(
                    &mut summary,
                    format!("line {}", i + 1),
                    None,
                    format!("the record does not parse: {e}"),
                );
                continue;
            }
        };
        let id = if t.instance_id.is_empty() {
            format!("line {}", i + 1)
        } else {
            t.instance_id.clone()
        };
        let seed = (!t.repo.is_empty()).then(|| t.repo.clone());
        let missing: Vec<&str> = [
            ("instance_id", t.instance_id.is_empty()),
            ("repo", t.repo.is_empty()),
            ("base_commit", t.base_commit.is_empty()),
            ("bug_patch", t.bug_patch.trim().is_empty()),
            ("language", t.language.is_none()),
            (
                "metadata.environment.source",
                t.metadata.environment.source.is_empty(),
            ),
        ]
        .into_iter()
        .filter(|(_, m)| *m)
        .map(|(k, _)| k)
        .collect();
        if !missing.is_empty() {
            let reason = format!("the record lacks {}", missing.join(", "));
            fail(&mut summary, id, seed, reason);
            continue;
        }
        if !ids.insert(branch_name(&t.instance_id)) {
            let reason = "another task of the file has the same instance id".to_string();
            fail(&mut summary, id, seed, reason);
            continue;
        }
        by_seed.entry(t.seed().to_string()).or_default().push(t);
    }

    for (seed_name, tasks) in &by_seed {
        export_seed(cfg, &tasks_file, &to, seed_name, tasks, &mut summary)?;
    }
    std::fs::copy(&tasks_file, to.join("tasks.jsonl")).map_err(io_err(format!(
        "copying {} to {}",
        tasks_file.display(),
        to.display()
    )))?;
    summary.seconds = started.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&summary).expect("summary serializes");
    std::fs::write(to.join("export.json"), json + "\n").map_err(io_err("writing export.json"))?;
    Ok(summary)
}

/// The seed's source repository (a mirror) holding `base`, imported through the library.
fn source_repository(cache: &Path, tasks_file: &Path, t: &TaskLine) -> Result<Repository, String> {
    // A one-seed manifest, so the name and the source go through the manifest's checks; a
    // relative source is found beside the tasks file or among the demo seeds.
    let near = seed::record_base_dir(&t.metadata.environment.source, tasks_file, cache)
        .join("tasks.jsonl");
    let tasks_file = near.as_path();
    let git_source = {
        let probe = seed::parse_manifest(&manifest_text(t, None), tasks_file)
            .map_err(|e| format!("the recorded seed is not usable: {e}"))?;
        let s = probe.seeds[0]
            .resolve_source(&probe.base_dir)
            .map_err(|e| e.to_string())?;
        matches!(s, seed::Source::GitUrl(_) | seed::Source::LocalGit(_))
    };
    // Git sources are pinned at the base commit; directories and sdists take no revision.
    let text = manifest_text(t, git_source.then_some(t.clean()));
    let m = seed::parse_manifest(&text, tasks_file).map_err(|e| e.to_string())?;
    let lock =
        crate::lock::FileLock::exclusive(&cache.join("locks").join(format!("{}.lock", t.seed())))
            .map_err(|e| format!("locking the seed's cache entries: {e}"))?;
    let imported = crate::toolchain::import(&m.seeds[0], &m.base_dir, cache);
    drop(lock);
    let r = imported.map_err(|e| format!("importing the seed: {e}"))?;
    let mirror = Repository::open_bare(&r.mirror)
        .or_else(|_| Repository::open(&r.mirror))
        .map_err(|e| format!("opening {}: {}", r.mirror.display(), e.message()))?;
    let oid = Oid::from_str(t.clean())
        .map_err(|_| format!("the clean commit `{}` is not a commit id", t.clean()))?;
    if mirror.find_commit(oid).is_err() {
        return Err(format!(
            "the clean commit {} is not in {} (its source now gives {})",
            t.clean(),
            t.metadata.environment.source,
            r.commit
        ));
    }
    Ok(mirror)
}

fn manifest_text(t: &TaskLine, revision: Option<&str>) -> String {
    let mut entry = serde_json::json!({
        "name": t.seed(),
        "source": t.metadata.environment.source,
        "language": t.language,
    });
    if let Some(r) = revision {
        entry["revision"] = r.into();
    }
    // JSON is YAML.
    serde_json::json!({ "seeds": [entry] }).to_string()
}

/// Copy `base` and its history from `src` into `dst` (same object ids).
fn copy_history(src: &Repository, dst: &Repository, base: Oid) -> Result<(), git2::Error> {
    if dst.find_commit(base).is_ok() {
        return Ok(());
    }
    let mut walk = src.revwalk()?;
    walk.push(base)?;
    let mut pack = src.packbuilder()?;
    pack.insert_walk(&mut walk)?;
    let odb = dst.odb()?;
    let mut writer = odb.packwriter()?;
    let mut failed = None;
    pack.foreach(
        |chunk| match std::io::Write::write_all(&mut writer, chunk) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(git2::Error::from_str(&format!("writing the pack: {e}")));
    }
    writer.commit()?;
    Ok(())
}

fn export_seed(
    cfg: &ExportConfig,
    tasks_file: &Path,
    to: &Path,
    seed_name: &str,
    tasks: &[TaskLine],
    summary: &mut ExportSummary,
) -> Result<(), ExportError> {
    let fail_all = |summary: &mut ExportSummary, tasks: &[&TaskLine], reason: &str| {
        for t in tasks {
            summary.failed.push(ExportFailure {
                instance_id: t.instance_id.clone(),
                seed: Some(seed_name.to_string()),
                reason: reason.to_string(),
            });
        }
    };
    // Base commits in the order the file first names them.
    let mut bases: Vec<&str> = Vec::new();
    for t in tasks {
        if !bases.contains(&t.clean()) {
            bases.push(t.clean());
        }
    }
    // The seed's name becomes a path: the manifest check (inside `source_repository`) rejects
    // names with separators; check here too, before anything is created.
    if seed_name.starts_with('.') || seed_name.contains(['/', '\\']) {
        fail_all(
            summary,
            &tasks.iter().collect::<Vec<_>>(),
            "the seed name cannot be a directory name",
        );
        return Ok(());
    }
    let path = to.join(format!("{seed_name}.git"));
    let mut dst: Option<Repository> = None;
    let mut export = RepositoryExport {
        seed: seed_name.to_string(),
        path: path.clone(),
        ..Default::default()
    };
    let mut kept_branches = BTreeSet::new();
    for base in bases {
        let of_base: Vec<&TaskLine> = tasks.iter().filter(|t| t.clean() == base).collect();
        let src = match source_repository(&cfg.cache, tasks_file, of_base[0]) {
            Ok(r) => r,
            Err(reason) => {
                fail_all(summary, &of_base, &reason);
                continue;
            }
        };
        if dst.is_none() {
            let repo = if path.exists() {
                Repository::open_bare(&path)
                    .map_err(git_err(format!("opening {}", path.display())))?
            } else {
                Repository::init_bare(&path)
                    .map_err(git_err(format!("creating {}", path.display())))?
            };
            dst = Some(repo);
        }
        let dst = dst.as_ref().expect("opened above");
        let base_oid = Oid::from_str(base).expect("checked by source_repository");
        if let Err(e) = copy_history(&src, dst, base_oid) {
            fail_all(
                summary,
                &of_base,
                &format!("copying the base commit: {}", e.message()),
            );
            continue;
        }
        let base_commit = dst
            .find_commit(base_oid)
            .map_err(git_err(format!("reading the copied commit {base}")))?;
        if export.main.is_none() {
            dst.reference("refs/heads/main", base_oid, true, "swe-forge export: base")
                .and_then(|_| dst.set_head("refs/heads/main"))
                .map_err(git_err(format!("setting main in {}", path.display())))?;
            export.main = Some(base.to_string());
        }
        export.base_commits.push(base.to_string());
        drop(base_commit);
        for t in of_base {
            let branch = branch_name(&t.instance_id);
            match task_commit(dst, base, t) {
                Ok(commit) => {
                    dst.reference(
                        &format!("refs/heads/{branch}"),
                        commit,
                        true,
                        "swe-forge export",
                    )
                    .map_err(git_err(format!("creating {branch} in {}", path.display())))?;
                    kept_branches.insert(branch.clone());
                    export.branches += 1;
                    summary.exported.push(ExportedTask {
                        instance_id: t.instance_id.clone(),
                        seed: seed_name.to_string(),
                        branch,
                        commit: commit.to_string(),
                        base_commit: base.to_string(),
                    });
                }
                Err(reason) => summary.failed.push(ExportFailure {
                    instance_id: t.instance_id.clone(),
                    seed: Some(seed_name.to_string()),
                    reason,
                }),
            }
        }
    }
    if let Some(dst) = &dst {
        export.removed_branches = remove_stale_branches(dst, &kept_branches).map_err(git_err(
            format!("listing the branches of {}", path.display()),
        ))?;
        summary.repositories.push(export);
    }
    Ok(())
}

/// The start state of a task, made in the export from its clean commit, `bug_patch` and the
/// removed test files: one parentless commit, which must be the record's `base_commit`
/// (records written before start states get theirs made here, without removed files).
fn task_commit(dst: &Repository, clean: &str, t: &TaskLine) -> Result<Oid, String> {
    let (removed, mode) = match &t.metadata.start_state {
        Some(s) => (s.removed_files.clone(), s.hidden_tests),
        None => (Vec::new(), crate::start_state::HiddenTests::Visible),
    };
    let st = crate::start_state::build(dst, clean, &t.bug_patch, &removed, mode, "")
        .map_err(|e| e.to_string())?;
    let clean_tree = dst
        .find_commit(Oid::from_str(clean).map_err(|e| e.message().to_string())?)
        .and_then(|c| c.tree())
        .map_err(|e| e.message().to_string())?;
    let start_tree = dst
        .find_commit(st.commit)
        .and_then(|c| c.tree())
        .map_err(|e| e.message().to_string())?;
    if start_tree.id() == clean_tree.id() {
        return Err("bug_patch changes nothing".to_string());
    }
    if t.metadata.start_state.is_some() && st.commit.to_string() != t.base_commit {
        return Err(format!(
            "the start state made here is {}, not the record's base_commit {}",
            st.commit, t.base_commit
        ));
    }
    Ok(st.commit)
}

/// Delete `refs/heads/task/*` not in `keep`; returns the names removed.
fn remove_stale_branches(
    dst: &Repository,
    keep: &BTreeSet<String>,
) -> Result<Vec<String>, git2::Error> {
    let mut removed = Vec::new();
    let names: Vec<String> = dst
        .references_glob("refs/heads/task/*")?
        .filter_map(|r| r.ok().and_then(|r| r.name().ok().map(str::to_string)))
        .collect();
    for name in names {
        let short = name.trim_start_matches("refs/heads/").to_string();
        if !keep.contains(&short) {
            dst.find_reference(&name)?.delete()?;
            removed.push(short);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_are_valid_refs() {
        assert_eq!(
            branch_name("pyshelf__py-arith__0123abcd"),
            "task/pyshelf__py-arith__0123abcd"
        );
        for id in [
            "a b~c^d:e?f*g[h\\i",
            "..x",
            "x..y",
            ".hidden",
            "-dash",
            "x.lock",
            "x.",
            "",
            "a/b",
            "@{u}",
            "ünïcode",
        ] {
            let b = branch_name(id);
            assert!(
                git2::Reference::is_valid_name(&format!("refs/heads/{b}")),
                "{id:?} → {b:?}"
            );
            assert!(b.starts_with("task/"));
            assert_eq!(b.matches('/').count(), 1, "{b}");
        }
    }

    #[test]
    fn opaque_ids_are_stable_and_name_no_mutator() {
        let id = "pyshelf__py-remove-assignment__608d77fa";
        let a = opaque_id(id, "pyshelf");
        assert_eq!(a, opaque_id(id, "pyshelf"));
        assert!(a.starts_with("pyshelf__"), "{a}");
        assert_eq!(a.len(), "pyshelf__".len() + 12, "{a}");
        assert!(!a.contains("remove") && !a.contains("py-"), "{a}");
        assert_ne!(a, opaque_id("pyshelf__py-arith__608d77fa", "pyshelf"));
        assert_eq!(
            opaque_id("x", "my seed/1").split("__").next(),
            Some("my_seed_1")
        );
        assert!(opaque_id("x", "").starts_with("task__"));
        let mut t = crate::audit::tests::task(id);
        t.repo = "pyshelf".into();
        assert_eq!(IdStyle::Descriptive.of(&t), id);
        assert_eq!(IdStyle::Opaque.of(&t), opaque_id(id, t.seed_name()));
    }

    #[test]
    fn records_are_read_under_the_ids_they_are_shown_under() {
        let dir = tempfile::tempdir().unwrap();
        let id = "pyshelf__py-arith__0123abcd";
        let line = serde_json::to_string(&crate::audit::tests::task(id)).unwrap();
        std::fs::write(dir.path().join("tasks.jsonl"), line + "\n").unwrap();
        let read = |id_style| {
            let cfg = ExportConfig {
                out: dir.path().to_path_buf(),
                tasks: None,
                to: None,
                cache: dir.path().join("cache"),
                format: ExportFormat::Swebench,
                id_style,
            };
            let (tasks_file, to) = paths(&cfg).unwrap();
            let (summary, tasks) = read_tasks(&tasks_file, &to).unwrap();
            assert_eq!(summary.tasks_file, dir.path().join("tasks.jsonl"));
            tasks[0].clone()
        };
        let opaque = read(IdStyle::Opaque);
        assert_eq!(opaque.instance_id, opaque_id(id, "pyshelf"));
        // The mutator and category stay in the metadata.
        assert_eq!(opaque.metadata.mutators, ["py-arith"]);
        assert_eq!(opaque.metadata.category, "operator");
        assert_eq!(read(IdStyle::Descriptive).instance_id, id);
        assert_eq!(harbor::dir_name(&opaque.instance_id), opaque.instance_id);
    }

    #[test]
    fn missing_inputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = |out: PathBuf| ExportConfig {
            out,
            tasks: None,
            to: None,
            cache: dir.path().join("cache"),
            format: ExportFormat::Git,
            id_style: IdStyle::Opaque,
        };
        let e = export(&cfg(dir.path().join("nope"))).unwrap_err();
        assert!(matches!(e, ExportError::NoOutDir(_)), "{e}");
        let e = export(&cfg(dir.path().to_path_buf())).unwrap_err();
        assert!(matches!(e, ExportError::NoTasks(_)), "{e}");
        assert!(!dir.path().join("export").exists());
    }

    #[test]
    fn bad_records_are_reported_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tasks.jsonl"),
            "{not json\n{\"instance_id\":\"x\",\"repo\":\"s\"}\n\n",
        )
        .unwrap();
        let s = export(&ExportConfig {
            out: dir.path().to_path_buf(),
            tasks: None,
            to: None,
            cache: dir.path().join("cache"),
            format: ExportFormat::Git,
            id_style: IdStyle::Opaque,
        })
        .unwrap();
        assert_eq!(s.tasks, 2);
        assert!(s.exported.is_empty());
        assert_eq!(s.failed.len(), 2);
        assert_eq!(s.failed[0].instance_id, "line 1");
        assert!(s.failed[1].reason.contains("base_commit"), "{:?}", s.failed);
        assert!(dir.path().join("export/tasks.jsonl").is_file());
    }

    #[test]
    fn exports_a_directory_seed() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("pkg")).unwrap();
        std::fs::create_dir_all(src.join("tests")).unwrap();
        let clean = "def f(x):\n    return x + 1\n";
        std::fs::write(src.join("pkg/m.py"), clean).unwrap();
        std::fs::write(src.join("tests/test_m.py"), "def test_f():\n    pass\n").unwrap();
        let cache = dir.path().join("cache");
        let m = seed::parse_manifest(
            &format!(
                "seeds:\n  - name: s\n    source: {}\n    language: python\n",
                src.display()
            ),
            &dir.path().join("m.yaml"),
        )
        .unwrap();
        let r = crate::toolchain::import(&m.seeds[0], &m.base_dir, &cache).unwrap();
        let buggy = "def f(x):\n    return x - 1\n";
        let bug_patch = crate::task::file_diff("pkg/m.py", clean, buggy);
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let record = |id: &str, patch: &str| {
            serde_json::json!({
                "instance_id": id, "repo": "s", "base_commit": r.commit,
                "bug_patch": patch, "language": "python",
                "metadata": {"environment": {"source": r.source}},
            })
            .to_string()
        };
        let broken = bug_patch.replace("x + 1", "x * 7");
        std::fs::write(
            out.join("tasks.jsonl"),
            [record("s__a__1", &bug_patch), record("s__b__2", &broken)].join("\n"),
        )
        .unwrap();
        let cfg = ExportConfig {
            out: out.clone(),
            tasks: None,
            to: None,
            cache,
            format: ExportFormat::Git,
            id_style: IdStyle::Opaque,
        };
        let s = export(&cfg).unwrap();
        assert_eq!(s.exported.len(), 1, "{:?}", s.failed);
        assert_eq!(s.failed.len(), 1);
        assert!(
            s.failed[0].reason.contains("applying bug_patch"),
            "{:?}",
            s.failed
        );
        let repo = Repository::open_bare(out.join("export/s.git")).unwrap();
        let main = repo
            .revparse_single("main")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        assert_eq!(main.id().to_string(), r.commit);
        let task = repo
            .revparse_single("task/s__a__1")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        // The start state: parentless, neutral.
        assert_eq!(task.parent_count(), 0);
        assert_eq!(task.message().unwrap(), crate::start_state::MESSAGE);
        let blob = task
            .tree()
            .unwrap()
            .get_path(Path::new("pkg/m.py"))
            .unwrap()
            .to_object(&repo)
            .unwrap()
            .peel_to_blob()
            .unwrap();
        assert_eq!(blob.content(), buggy.as_bytes());
        // Exporting again gives the same commit and drops nothing that is still wanted.
        let again = export(&cfg).unwrap();
        assert_eq!(again.exported[0].commit, s.exported[0].commit);
        assert!(again.repositories[0].removed_branches.is_empty());
        // A task gone from the file loses its branch.
        std::fs::write(out.join("tasks.jsonl"), "").unwrap();
        let _ = std::fs::write(out.join("other.jsonl"), record("s__c__3", &bug_patch));
        let third = export(&ExportConfig {
            tasks: Some(out.join("other.jsonl")),
            ..cfg
        })
        .unwrap();
        assert_eq!(third.repositories[0].removed_branches, ["task/s__a__1"]);
    }
}
