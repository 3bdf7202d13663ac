//! Plain directories: the one walk that imports, profiles, `mutate` and `bench mutate` share
//! (tool caches, virtualenvs, installed packages and build outputs skipped), and a directory
//! committed as one parentless commit with a fixed
//! signature, so the same content always gives the same id.

use super::{ensure_dir, Ctx, ImportError};
use git2::{FileMode, Oid, Repository};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use tracing::info;

/// Directory names skipped at any depth when importing a directory and when profiling.
const SKIP_DIRS_ANYWHERE: [&str; 11] = [
    ".git",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".eggs",
];

/// Directory names skipped only at the top level: deeper down they can be real packages.
const SKIP_DIRS_TOP: [&str; 4] = ["venv", "build", "dist", "target"];

/// Whether a walked entry is left out of imports and profiles: tool caches and virtualenvs
/// anywhere, build outputs at the top, compiled Python files, egg-info metadata.
fn is_skipped(name: &OsStr, depth: usize, is_dir: bool) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    if name == ".git" || name.ends_with(".egg-info") {
        return true;
    }
    if is_dir {
        SKIP_DIRS_ANYWHERE.contains(&name) || (depth == 1 && SKIP_DIRS_TOP.contains(&name))
    } else {
        name.ends_with(".pyc") || name.ends_with(".pyo")
    }
}

/// Whether a repository-relative path lies under a hidden directory (`.github/`,
/// `.hypothesis/`): imported, but never a source to mutate.
pub(super) fn in_hidden_dir(rel: &str) -> bool {
    rel.split('/')
        .rev()
        .skip(1)
        .any(|d| d.starts_with('.') && d != "." && d != "..")
}

/// Walk `root` in a stable order, skipping what [`is_skipped`] says, yielding every entry
/// below the root.
pub(super) fn walk(root: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !is_skipped(e.file_name(), e.depth(), e.file_type().is_dir()))
}

/// Commit the files under `dir` into `cache/mirrors/<name>-dir.git` as one parentless commit
/// with a fixed author, committer and time, so equal content gives an equal commit id. File
/// modes (executable bit) and symbolic links are kept; skipped entries are left out.
pub(super) fn commit_dir(
    cx: &Ctx<'_>,
    dir: &Path,
    cache: &Path,
) -> Result<(PathBuf, Oid), ImportError> {
    let mirror = cache.join("mirrors").join(format!("{}-dir.git", cx.seed));
    info!(seed = cx.seed, dir = %dir.display(), mirror = %mirror.display(), "importing directory");
    let repo = match Repository::open_bare(&mirror) {
        Ok(repo) => repo,
        Err(_) => {
            if mirror.exists() {
                std::fs::remove_dir_all(&mirror)
                    .map_err(cx.io(format!("cannot remove {}", mirror.display())))?;
            }
            ensure_dir(cx, mirror.parent().unwrap_or(Path::new(".")))?;
            Repository::init_bare(&mirror)
                .map_err(cx.git(format!("cannot create {}", mirror.display())))?
        }
    };
    let empty = repo
        .treebuilder(None)
        .and_then(|b| b.write())
        .and_then(|oid| repo.find_tree(oid))
        .map_err(cx.git("cannot write the empty tree"))?;
    let mut updates = git2::build::TreeUpdateBuilder::new();
    for entry in walk(dir) {
        let entry = entry.map_err(|e| ImportError::Io {
            seed: cx.seed.to_string(),
            action: format!("cannot walk {}", dir.display()),
            error: e.into(),
        })?;
        let path = entry.path();
        let rel = path.strip_prefix(dir).unwrap_or(path);
        let kind = entry.file_type();
        let (data, mode) = if kind.is_symlink() {
            let target = std::fs::read_link(path)
                .map_err(cx.io(format!("cannot read link {}", path.display())))?;
            (os_bytes(target.as_os_str()), FileMode::Link)
        } else if kind.is_file() {
            let data =
                std::fs::read(path).map_err(cx.io(format!("cannot read {}", path.display())))?;
            let meta = entry.metadata().map_err(|e| ImportError::Io {
                seed: cx.seed.to_string(),
                action: format!("cannot stat {}", path.display()),
                error: e.into(),
            })?;
            let mode = if is_executable(&meta) {
                FileMode::BlobExecutable
            } else {
                FileMode::Blob
            };
            (data, mode)
        } else {
            continue; // directories are implied by their files; sockets and fifos are left out
        };
        let oid = repo
            .blob(&data)
            .map_err(cx.git(format!("cannot store {}", rel.display())))?;
        updates.upsert(rel, oid, mode);
    }
    let tree = updates
        .create_updated(&repo, &empty)
        .and_then(|oid| repo.find_tree(oid))
        .map_err(cx.git("cannot write the tree"))?;
    let signature =
        git2::Signature::new("swe-forge", "swe-forge@localhost", &git2::Time::new(0, 0))
            .map_err(cx.git("cannot make the signature"))?;
    let commit = repo
        .commit(
            None,
            &signature,
            &signature,
            &format!("import {}", cx.seed),
            &tree,
            &[],
        )
        .map_err(cx.git("cannot commit"))?;
    repo.reference("refs/heads/main", commit, true, "swe-forge import")
        .and_then(|_| repo.set_head("refs/heads/main"))
        .map_err(cx.git("cannot update refs/heads/main"))?;
    Ok((mirror, commit))
}

#[cfg(unix)]
fn os_bytes(s: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(s: &OsStr) -> Vec<u8> {
    s.to_string_lossy().replace('\\', "/").into_bytes()
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;
    use crate::repo::tests::{assert_clean_detached, flat_project, seed, write};
    use crate::toolchain::import;

    /// Every file under `root` except `.git`, with contents, sorted.
    fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn plain_directory_imports_deterministically() {
        let src = tempfile::tempdir().unwrap();
        flat_project(src.path());
        write(src.path(), "calc/__pycache__/ops.cpython-311.pyc", "junk");
        write(src.path(), "calc/stale.pyc", "junk");
        write(src.path(), ".venv/lib/x.py", "junk");
        write(src.path(), "build/lib/calc/ops.py", "junk");
        write(src.path(), "calc.egg-info/PKG-INFO", "junk");
        write(src.path(), ".pytest_cache/v/x", "junk");
        write(src.path(), ".git/config", "not really git, but skipped");
        write(src.path(), "calc/build/keep.py", "x = 1\n"); // `build` below the top is a package
        write(src.path(), "run.sh", "#!/bin/sh\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                src.path().join("run.sh"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
        }
        let s = seed("calc", src.path().to_str().unwrap(), Language::Python);
        let (cache1, cache2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = import(&s, Path::new("."), cache1.path()).unwrap();
        let b = import(&s, Path::new("."), cache2.path()).unwrap();
        assert_eq!(a.commit, b.commit);
        assert_eq!(a.commit.len(), 40);
        assert_eq!(
            a.source,
            std::fs::canonicalize(src.path())
                .unwrap()
                .display()
                .to_string()
        );
        assert!(a.mirror.ends_with("mirrors/calc-dir.git"));
        assert!(a
            .checkout
            .ends_with(format!("checkouts/calc-{}", &a.commit[..12])));
        assert_clean_detached(&a.checkout, &a.commit);
        assert_eq!(snapshot(&a.checkout), snapshot(&b.checkout));
        let files: Vec<String> = snapshot(&a.checkout).into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            files,
            [
                "calc/__init__.py",
                "calc/build/keep.py",
                "calc/ops.py",
                "conftest.py",
                "docs/conf.py",
                "requirements-dev.txt",
                "run.sh",
                "setup.py",
                "tests/test_ops.py"
            ]
        );
        let mirror = Repository::open_bare(&a.mirror).unwrap();
        let commit = mirror
            .find_commit(Oid::from_str(&a.commit).unwrap())
            .unwrap();
        assert_eq!(commit.message().ok(), Some("import calc"));
        assert_eq!(commit.parent_count(), 0);
        assert_eq!(commit.author().name().ok(), Some("swe-forge"));
        assert_eq!(commit.time().seconds(), 0);
        let entry = commit
            .tree()
            .unwrap()
            .get_name("run.sh")
            .unwrap()
            .filemode();
        assert_eq!(entry, i32::from(FileMode::BlobExecutable));
        // Importing again into the same cache reuses the clean checkout.
        let again = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_eq!(again.commit, a.commit);
        // A dirty checkout is recreated.
        write(&a.checkout, "calc/ops.py", "broken");
        write(&a.checkout, "untracked.txt", "x");
        let again = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_clean_detached(&again.checkout, &a.commit);
        assert!(!again.checkout.join("untracked.txt").exists());
        // Changed content gives a new commit.
        write(
            src.path(),
            "calc/ops.py",
            "def add(a, b):\n    return b + a\n",
        );
        let changed = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_ne!(changed.commit, a.commit);
    }
}
