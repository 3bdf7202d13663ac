//! Start states: what an agent is given. One parentless commit of the buggy tree, without the
//! hidden tests, with a fixed author, date and message, so its id follows from its content
//! alone; and the `test_patch` that brings the hidden tests back at grading time.
//!
//! A start state is made from the seed's clean commit, the task's `bug_patch` and the list of
//! hidden test files, by the same function during `run` and when an image or an audit rebuilds
//! it from a record ([`build`]), so a record's `base_commit` can always be checked against its
//! provenance (`metadata.start_state.clean_commit` + `bug_patch`). [`write_repository`] writes
//! a repository that holds that one commit and nothing else: no parent, no other ref, no
//! reflog, no object of the clean files.

use git2::{build::TreeUpdateBuilder, FileMode, ObjectType, Oid, Repository, Signature, Time};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The author and committer of every start state.
pub const AUTHOR_NAME: &str = "developer";
pub const AUTHOR_EMAIL: &str = "developer@localhost";
/// 2000-01-01T00:00:00Z.
pub const AUTHOR_TIME: i64 = 946_684_800;
/// The commit message: neutral, it says nothing of the bug.
pub const MESSAGE: &str = "Initial commit\n";
/// The branch the start state is on.
pub const BRANCH: &str = "main";

/// Whether the FAIL_TO_PASS tests are in the agent's tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenTests {
    /// The files holding FAIL_TO_PASS tests are removed from the start state; `test_patch`
    /// brings them back whole (with the PASS_TO_PASS tests they hold).
    #[default]
    Files,
    /// `--visible-tests`: the repository's tests stay in the agent's tree (an easier variant);
    /// `test_patch` holds only synthesized tests.
    Visible,
}

impl HiddenTests {
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenTests::Files => "files",
            HiddenTests::Visible => "visible",
        }
    }
}

/// What a record keeps of its start state's provenance (`metadata.start_state`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StartStateInfo {
    /// The seed's clean commit: `bug_patch` applies to it.
    pub clean_commit: String,
    /// How the hidden tests are kept from the agent.
    pub hidden_tests: HiddenTests,
    /// Test files removed from the start state (`test_patch` restores them).
    #[serde(default)]
    pub removed_files: Vec<String>,
    /// The repository image at the clean commit (the task image is a layer over it); `None`
    /// for tasks made with the local sandbox.
    #[serde(default)]
    pub repo_image: Option<String>,
}

/// A start state made in a repository's object database.
#[derive(Clone, Debug, PartialEq)]
pub struct StartState {
    pub commit: Oid,
    pub info: StartStateInfo,
    /// Restores the removed files (then `extra_test_patch`, e.g. synthesized tests).
    pub test_patch: String,
}

#[derive(Debug, thiserror::Error)]
pub enum StartStateError {
    #[error("start state: {action}: {}", error.message())]
    Git {
        action: String,
        #[source]
        error: git2::Error,
    },
    #[error("start state: {0}")]
    Invalid(String),
    #[error("start state: {action}: {error}")]
    Io {
        action: String,
        #[source]
        error: std::io::Error,
    },
}

fn git(action: impl Into<String>) -> impl FnOnce(git2::Error) -> StartStateError {
    let action = action.into();
    move |error| StartStateError::Git { action, error }
}

/// The fixed signature of start states.
pub fn signature() -> Signature<'static> {
    Signature::new(AUTHOR_NAME, AUTHOR_EMAIL, &Time::new(AUTHOR_TIME, 0))
        .expect("a valid fixed signature")
}

/// Make the start state of a task in `repo`: the tree of `clean` with `bug_patch` applied and
/// `removed` deleted, committed without a parent. `extra_test_patch` (synthesized tests) is
/// appended to the patch that restores the removed files.
pub fn build(
    repo: &Repository,
    clean: &str,
    bug_patch: &str,
    removed: &[String],
    hidden_tests: HiddenTests,
    extra_test_patch: &str,
) -> Result<StartState, StartStateError> {
    let clean_oid = Oid::from_str(clean)
        .map_err(|_| StartStateError::Invalid(format!("`{clean}` is not a commit id")))?;
    let clean_commit = repo
        .find_commit(clean_oid)
        .map_err(git(format!("finding the clean commit {clean}")))?;
    let clean_tree = clean_commit.tree().map_err(git("reading the clean tree"))?;
    let diff = git2::Diff::from_buffer(bug_patch.as_bytes()).map_err(git("parsing bug_patch"))?;
    let mut index = apply_keeping_modes(repo, &clean_tree, &diff)
        .map_err(git("applying bug_patch to the clean tree"))?;
    let buggy_tree_id = index
        .write_tree_to(repo)
        .map_err(git("writing the buggy tree"))?;
    let buggy_tree = repo
        .find_tree(buggy_tree_id)
        .map_err(git("reading the buggy tree"))?;
    let mut removed_files: Vec<String> = Vec::new();
    let mut restore = String::new();
    let mut update = TreeUpdateBuilder::new();
    for path in removed {
        let entry = match clean_tree.get_path(Path::new(path)) {
            Ok(e) => e,
            // Not in the clean tree (a synthesized test file): nothing to hide.
            Err(_) => continue,
        };
        if removed_files.contains(path) {
            continue;
        }
        let blob = repo
            .find_blob(entry.id())
            .map_err(git(format!("reading {path}")))?;
        let text = std::str::from_utf8(blob.content())
            .map_err(|_| StartStateError::Invalid(format!("{path} is not UTF-8 text")))?;
        restore.push_str(&new_file_patch(path, text, entry.filemode()));
        update.remove(path.as_str());
        removed_files.push(path.clone());
    }
    let tree_id = update
        .create_updated(repo, &buggy_tree)
        .map_err(git("removing the hidden test files"))?;
    let tree = repo
        .find_tree(tree_id)
        .map_err(git("reading the start tree"))?;
    let sig = signature();
    let commit = repo
        .commit(None, &sig, &sig, MESSAGE, &tree, &[])
        .map_err(git("committing the start state"))?;
    let mut test_patch = restore;
    test_patch.push_str(extra_test_patch);
    Ok(StartState {
        commit,
        info: StartStateInfo {
            clean_commit: clean.to_string(),
            hidden_tests,
            removed_files,
            repo_image: None,
        },
        test_patch,
    })
}

/// A `diff --git` creating `path` with `text` (mode and blob id in its header), so that
/// `git apply` restores the file byte for byte.
pub fn new_file_patch(path: &str, text: &str, mode: i32) -> String {
    let id = Oid::hash_object(ObjectType::Blob, text.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_default();
    let mode = if mode == i32::from(FileMode::BlobExecutable) {
        "100755"
    } else {
        "100644"
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = format!(
        "diff --git a/{path} b/{path}\nnew file mode {mode}\nindex 0000000..{}\n--- /dev/null\n+++ b/{path}\n",
        &id[..id.len().min(12)]
    );
    if lines.is_empty() {
        return out;
    }
    out.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
    for l in &lines {
        out.push('+');
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
    out
}

/// The per-file sections of a `diff --git` patch, with the path each section creates or
/// changes (`b/` side; the deleted path for a deletion), read by [`crate::patch::sections`].
pub fn patch_sections(patch: &str) -> Vec<(String, String)> {
    crate::patch::sections(patch)
        .into_iter()
        .map(|s| (s.path().to_string(), s.text))
        .collect()
}

/// The patch that deletes the `removed` files again, made from the sections of `test_patch`
/// that create them: applied after `bug_patch` to the clean tree, it gives the start tree.
pub fn deletion_patch(test_patch: &str, removed: &[String]) -> String {
    let mut out = String::new();
    for (path, section) in patch_sections(test_patch) {
        if !removed.contains(&path) {
            continue;
        }
        let mut body: Vec<String> = Vec::new();
        let mut mode = "100644";
        let mut count = 0usize;
        for l in section.split_inclusive('\n') {
            if let Some(m) = l.strip_prefix("new file mode ") {
                mode = if m.trim() == "100755" {
                    "100755"
                } else {
                    "100644"
                };
            } else if let Some(added) = l.strip_prefix('+') {
                if !l.starts_with("+++ ") {
                    body.push(format!("-{added}"));
                    count += 1;
                }
            } else if l.starts_with('\\') {
                body.push(l.to_string());
            }
        }
        out.push_str(&format!(
            "diff --git a/{path} b/{path}\ndeleted file mode {mode}\n--- a/{path}\n+++ /dev/null\n"
        ));
        if count > 0 {
            out.push_str(&format!("@@ -1,{count} +0,0 @@\n"));
            for b in body {
                out.push_str(&b);
            }
        }
    }
    out
}

/// Write a repository at `dir` (created; must not exist or be empty) holding only `commit` of
/// `src`, its tree and blobs, on branch `main`, checked out: no parent, no other ref, no
/// reflog. Returns the commit id written (equal to `commit`).
pub fn write_repository(src: &Repository, commit: Oid, dir: &Path) -> Result<Oid, StartStateError> {
    let c = src
        .find_commit(commit)
        .map_err(git(format!("finding the start state {commit}")))?;
    if c.parent_count() != 0 {
        return Err(StartStateError::Invalid(format!(
            "{commit} has a parent: not a start state"
        )));
    }
    std::fs::create_dir_all(dir).map_err(|error| StartStateError::Io {
        action: format!("creating {}", dir.display()),
        error,
    })?;
    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head(BRANCH).no_reinit(false);
    let dst = Repository::init_opts(dir, &opts).map_err(git("initializing the repository"))?;
    let tree = copy_tree(src, &dst, c.tree_id())?;
    let tree = dst
        .find_tree(tree)
        .map_err(git("reading the copied tree"))?;
    let written = dst
        .commit(
            None,
            &c.author(),
            &c.committer(),
            c.message_raw().unwrap_or(MESSAGE),
            &tree,
            &[],
        )
        .map_err(git("writing the start state commit"))?;
    if written != commit {
        return Err(StartStateError::Invalid(format!(
            "the copied commit is {written}, not {commit}"
        )));
    }
    dst.reference(
        &format!("refs/heads/{BRANCH}"),
        written,
        true,
        "start state",
    )
    .map_err(git("setting the branch"))?;
    dst.set_head(&format!("refs/heads/{BRANCH}"))
        .map_err(git("setting HEAD"))?;
    let mut co = git2::build::CheckoutBuilder::new();
    co.force();
    dst.checkout_head(Some(&mut co))
        .map_err(git("checking out the start state"))?;
    // Reference updates write reflogs; the start state has none.
    let logs = dir.join(".git").join("logs");
    if logs.exists() {
        std::fs::remove_dir_all(&logs).map_err(|error| StartStateError::Io {
            action: "removing the reflogs".into(),
            error,
        })?;
    }
    Ok(written)
}

/// Copy a tree and everything under it (gitlinks excepted: their commits are not copied).
fn copy_tree(src: &Repository, dst: &Repository, id: Oid) -> Result<Oid, StartStateError> {
    let tree = src
        .find_tree(id)
        .map_err(git(format!("reading tree {id}")))?;
    let mut builder = dst.treebuilder(None).map_err(git("building a tree"))?;
    for entry in tree.iter() {
        let name = entry.name_bytes().to_vec();
        let name = String::from_utf8(name)
            .map_err(|_| StartStateError::Invalid("a path is not UTF-8".into()))?;
        let oid = match entry.kind() {
            Some(ObjectType::Tree) => copy_tree(src, dst, entry.id())?,
            Some(ObjectType::Blob) => {
                let blob = src
                    .find_blob(entry.id())
                    .map_err(git(format!("reading {name}")))?;
                dst.blob(blob.content()).map_err(git("writing a blob"))?
            }
            _ => entry.id(),
        };
        builder
            .insert(&name, oid, entry.filemode())
            .map_err(git(format!("adding {name}")))?;
    }
    let out = builder.write().map_err(git("writing a tree"))?;
    if out != id {
        return Err(StartStateError::Invalid(format!(
            "copied tree {out} differs from {id}"
        )));
    }
    Ok(out)
}

/// The tree id of `commit` with `patches` applied in order, computed in the repository's
/// object store (nothing is checked out). Verification compares it with the clean commit's
/// tree to tell a check that repeats an experiment already made (buggy + gold fix = clean).
pub fn tree_after(
    repo: &Repository,
    commit: &str,
    patches: &[&str],
) -> Result<Oid, StartStateError> {
    let oid = Oid::from_str(commit)
        .map_err(|_| StartStateError::Invalid(format!("`{commit}` is not a commit id")))?;
    let mut tree = repo
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(git(format!("reading the tree of {commit}")))?;
    for (i, patch) in patches.iter().enumerate() {
        let diff = git2::Diff::from_buffer(patch.as_bytes())
            .map_err(git(format!("parsing patch {}", i + 1)))?;
        let mut index = apply_keeping_modes(repo, &tree, &diff)
            .map_err(git(format!("applying patch {}", i + 1)))?;
        let id = index
            .write_tree_to(repo)
            .map_err(git(format!("writing the tree after patch {}", i + 1)))?;
        tree = repo.find_tree(id).map_err(git("reading a patched tree"))?;
    }
    Ok(tree.id())
}

/// `repo.apply_to_tree`, keeping the mode of each file the patch edits: libgit2 writes an
/// edited file as a plain blob (100644) when the patch names no mode, so an executable module
/// (more-itertools' `more.py` is 100755) came out with another mode, and buggy + gold fix was
/// never byte-identical to the clean tree. A patch that states a mode (`new mode`) keeps it.
fn apply_keeping_modes(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    diff: &git2::Diff<'_>,
) -> Result<git2::Index, git2::Error> {
    let mut index = repo.apply_to_tree(tree, diff, None)?;
    let mut stated: Vec<std::path::PathBuf> = Vec::new();
    for delta in diff.deltas() {
        if delta.old_file().mode() != delta.new_file().mode()
            && delta.old_file().mode() != git2::FileMode::Unreadable
        {
            if let Some(p) = delta.new_file().path() {
                stated.push(p.to_path_buf());
            }
        }
    }
    let mut fixes = Vec::new();
    for mut entry in index.iter() {
        let path = Path::new(std::str::from_utf8(&entry.path).unwrap_or_default()).to_path_buf();
        if stated.contains(&path) {
            continue;
        }
        if let Ok(old) = tree.get_path(&path) {
            let mode = old.filemode() as u32;
            if mode != entry.mode && old.kind() == Some(git2::ObjectType::Blob) {
                entry.mode = mode;
                fixes.push(entry);
            }
        }
    }
    for e in fixes {
        index.add(&e)?;
    }
    Ok(index)
}

/// The blob ids a patch's `index OLD..NEW` lines name on their old side (abbreviated as
/// written), skipping the all-zero id of created files.
pub fn old_blob_ids(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| l.strip_prefix("index "))
        .filter_map(|rest| rest.split("..").next())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.chars().any(|c| c != '0'))
        .collect()
}

/// The test files of FAIL_TO_PASS ids: the file part of a pytest id (`path::…`) when it is
/// one of the repository's test files, or for a JUnit id (`pkg.Class#method`) the test file
/// named after the class (`…/pkg/Class.java`). A doctest's id names the module whose
/// docstring holds it (`src/pkg/num.py::pkg.num.ordinal`): that is code, never hidden (the
/// agent needs it, and restoring it at grading time would restore the fix).
pub fn test_files_of(ids: &[String], test_files: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let file = match id.split_once("::") {
            Some((file, _)) => test_files
                .iter()
                .any(|f| f == file)
                .then(|| file.to_string()),
            None => id.split('#').next().and_then(|class| {
                let class = class.split('$').next().unwrap_or(class);
                let rel = format!("{}.java", class.replace('.', "/"));
                test_files
                    .iter()
                    .find(|f| f.ends_with(&format!("/{rel}")) || **f == rel)
                    .cloned()
            }),
        };
        if let Some(f) = file {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (tempfile::TempDir, Repository, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let files = [
            ("pkg/core.py", "def f(x):\n    return x + 1\n"),
            (
                "tests/test_core.py",
                "from pkg.core import f\n\ndef test_f():\n    assert f(1) == 2\n",
            ),
            ("tests/test_other.py", "def test_o():\n    assert True"),
        ];
        let mut update = TreeUpdateBuilder::new();
        for (p, t) in files {
            let b = repo.blob(t.as_bytes()).unwrap();
            update.upsert(p, b, FileMode::Blob);
        }
        let empty = repo.treebuilder(None).unwrap().write().unwrap();
        let empty = repo.find_tree(empty).unwrap();
        let tree = update.create_updated(&repo, &empty).unwrap();
        let tree = repo.find_tree(tree).unwrap();
        let sig = Signature::new("a", "a@b", &Time::new(1, 0)).unwrap();
        let c = repo.commit(None, &sig, &sig, "clean", &tree, &[]).unwrap();
        let parent = repo.find_commit(c).unwrap();
        // A second commit, so that history exists to leak.
        let c2 = repo
            .commit(None, &sig, &sig, "next", &tree, &[&parent])
            .unwrap();
        drop(tree);
        drop(empty);
        drop(parent);
        (dir, repo, c2)
    }

    const BUG: &str = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x + 1\n+    return x - 1\n";

    #[test]
    fn tree_after_the_bug_and_its_fix_is_the_clean_tree() {
        let (_d, repo, clean) = fixture();
        let clean = clean.to_string();
        let clean_tree = repo
            .find_commit(Oid::from_str(&clean).unwrap())
            .unwrap()
            .tree_id();
        assert_eq!(tree_after(&repo, &clean, &[]).unwrap(), clean_tree);
        let fix = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x - 1\n+    return x + 1\n";
        let buggy = tree_after(&repo, &clean, &[BUG]).unwrap();
        assert_ne!(buggy, clean_tree);
        assert_eq!(tree_after(&repo, &clean, &[BUG, fix]).unwrap(), clean_tree);
        // A "fix" that leaves a trailing difference is not the clean tree.
        let near = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x - 1\n+    return x + 1 \n";
        assert_ne!(tree_after(&repo, &clean, &[BUG, near]).unwrap(), clean_tree);
        // A patch that does not apply is an error, not a tree.
        assert!(tree_after(&repo, &clean, &[fix]).is_err());
    }

    #[test]
    fn patches_keep_an_executable_file_executable() {
        let (_d, repo, clean) = fixture();
        // The same repository with `pkg/core.py` executable (100755), as more-itertools ships
        // its `more.py`.
        let base = repo.find_commit(clean).unwrap().tree().unwrap();
        let blob = base.get_path(Path::new("pkg/core.py")).unwrap().id();
        let mut update = TreeUpdateBuilder::new();
        update.upsert("pkg/core.py", blob, FileMode::BlobExecutable);
        let tree = update.create_updated(&repo, &base).unwrap();
        let tree = repo.find_tree(tree).unwrap();
        let sig = Signature::new("a", "a@b", &Time::new(1, 0)).unwrap();
        let exec = repo.commit(None, &sig, &sig, "exec", &tree, &[]).unwrap();
        let fix = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x - 1\n+    return x + 1\n";
        let exec = exec.to_string();
        let buggy = tree_after(&repo, &exec, &[BUG]).unwrap();
        let mode = repo
            .find_tree(buggy)
            .unwrap()
            .get_path(Path::new("pkg/core.py"))
            .unwrap()
            .filemode();
        assert_eq!(mode, i32::from(FileMode::BlobExecutable));
        assert_eq!(tree_after(&repo, &exec, &[BUG, fix]).unwrap(), tree.id());
        // The start state keeps the mode too.
        let s = build(&repo, &exec, BUG, &[], HiddenTests::Files, "").unwrap();
        let start = repo.find_commit(s.commit).unwrap();
        let mode = start
            .tree()
            .unwrap()
            .get_path(Path::new("pkg/core.py"))
            .unwrap()
            .filemode();
        assert_eq!(mode, i32::from(FileMode::BlobExecutable));
    }

    #[test]
    fn start_state_is_parentless_buggy_and_hides_tests() {
        let (_d, repo, clean) = fixture();
        let removed = vec![
            "tests/test_core.py".to_string(),
            "tests/test_new.py".to_string(),
        ];
        let s = build(
            &repo,
            &clean.to_string(),
            BUG,
            &removed,
            HiddenTests::Files,
            "",
        )
        .unwrap();
        let c = repo.find_commit(s.commit).unwrap();
        assert_eq!(c.parent_count(), 0);
        assert_eq!(c.message().ok(), Some(MESSAGE));
        let tree = c.tree().unwrap();
        assert!(tree.get_path(Path::new("tests/test_core.py")).is_err());
        assert!(tree.get_path(Path::new("tests/test_other.py")).is_ok());
        let blob = repo
            .find_blob(tree.get_path(Path::new("pkg/core.py")).unwrap().id())
            .unwrap();
        assert_eq!(blob.content(), b"def f(x):\n    return x - 1\n");
        assert_eq!(s.info.removed_files, vec!["tests/test_core.py".to_string()]);
        // Same inputs, same id.
        let again = build(
            &repo,
            &clean.to_string(),
            BUG,
            &removed,
            HiddenTests::Files,
            "",
        )
        .unwrap();
        assert_eq!(again.commit, s.commit);

        // The written repository holds one commit and no clean object.
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("r");
        assert_eq!(write_repository(&repo, s.commit, &dir).unwrap(), s.commit);
        let w = Repository::open(&dir).unwrap();
        let clean_blob =
            Oid::hash_object(ObjectType::Blob, b"def f(x):\n    return x + 1\n").unwrap();
        assert!(w.find_blob(clean_blob).is_err());
        assert!(w.find_commit(clean).is_err());
        let hidden_blob = Oid::hash_object(
            ObjectType::Blob,
            b"from pkg.core import f\n\ndef test_f():\n    assert f(1) == 2\n",
        )
        .unwrap();
        assert!(w.find_blob(hidden_blob).is_err());
        let refs: Vec<String> = w
            .references()
            .unwrap()
            .map(|r| r.unwrap().name().unwrap().to_string())
            .collect();
        assert_eq!(refs, vec!["refs/heads/main".to_string()]);
        assert!(!dir.join(".git/logs").exists());
        assert_eq!(
            std::fs::read_to_string(dir.join("pkg/core.py")).unwrap(),
            "def f(x):\n    return x - 1\n"
        );
        assert!(!dir.join("tests/test_core.py").exists());

        // test_patch restores the hidden file byte for byte; the deletion patch removes it.
        std::fs::write(dir.join("t.diff"), &s.test_patch).unwrap();
        let st = std::process::Command::new("git")
            .args(["apply", "t.diff"])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "{}", s.test_patch);
        assert_eq!(
            std::fs::read(dir.join("tests/test_core.py")).unwrap(),
            b"from pkg.core import f\n\ndef test_f():\n    assert f(1) == 2\n"
        );
        let del = deletion_patch(&s.test_patch, &s.info.removed_files);
        std::fs::write(dir.join("d.diff"), &del).unwrap();
        let st = std::process::Command::new("git")
            .args(["apply", "d.diff"])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "{del}");
        assert!(!dir.join("tests/test_core.py").exists());
    }

    #[test]
    fn no_trailing_newline_round_trips() {
        let p = new_file_patch("t.py", "a\nb", 0o100644);
        assert!(p.contains("+b\n\\ No newline at end of file\n"), "{p}");
        let d = deletion_patch(&p, &["t.py".to_string()]);
        assert!(d.contains("-b\n\\ No newline at end of file\n"), "{d}");
        assert!(d.contains("@@ -1,2 +0,0 @@"), "{d}");
    }

    #[test]
    fn maps_test_ids_to_files() {
        let files = vec![
            "src/test/java/org/x/ShelfTest.java".to_string(),
            "tests/test_a.py".to_string(),
        ];
        let ids = vec![
            "tests/test_a.py::T::test_x[1 2]".to_string(),
            "org.x.ShelfTest#adds".to_string(),
            "tests/test_a.py::test_y".to_string(),
            "src/x/num.py::x.num.ordinal".to_string(),
        ];
        assert_eq!(
            test_files_of(&ids, &files),
            vec![
                "tests/test_a.py".to_string(),
                "src/test/java/org/x/ShelfTest.java".to_string()
            ]
        );
        assert_eq!(
            old_blob_ids("index 0000000..abc\nindex 1234567..89abcde 100644\n"),
            vec!["1234567".to_string()]
        );
    }
}
