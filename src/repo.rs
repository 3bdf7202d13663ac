//! Repos: importing seeds (git2 mirrors, checkout of the pinned commit, plain directories,
//! PyPI sdists) and profiling what was imported.
//!
//! Layout under the cache directory:
//! - `mirrors/<name>-<12 hex of blake3(url or canonical path)>.git`: bare mirror of a git
//!   source (branches and tags), fetched again on each import unless the revision is a full
//!   commit id already present;
//! - `mirrors/<name>-dir.git`: a plain directory or an unpacked sdist committed as one
//!   parentless commit with a fixed signature, so the same content always gives the same id;
//! - `sdists/<NAME>-<VERSION>/`: archives downloaded by pip;
//! - `checkouts/<name>-<12 hex of commit>/`: a non-bare clone of the mirror with the pinned
//!   commit checked out (detached HEAD, also kept as `refs/swe-forge/base`), reused while it
//!   is clean.

use crate::lang::Language;
use crate::seed::{Seed, SeedError, Source};
use git2::{FileMode, Oid, Repository};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use tracing::{info, warn};

/// Directory names skipped at any depth when importing a directory and when profiling.
const SKIP_DIRS_ANYWHERE: [&str; 9] = [
    ".git",
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

/// Directories whose Python files are never mutation targets.
const NON_SOURCE_DIRS: [&str; 6] = [
    "docs",
    "doc",
    "documentation",
    "examples",
    "benchmarks",
    "benchmark",
];

/// Requirement files added to the inferred install command, in this order, when present.
const REQUIREMENT_FILES: [&str; 5] = [
    "requirements.txt",
    "requirements-test.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
];

/// What an imported repository is made of, as far as swe-forge cares.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub language: Language,
    /// "setuptools", "poetry", "flit", "hatch", "pdm", "setup.py", "requirements", "none",
    /// "maven", "gradle"; another PEP 517 backend is named by its top module ("maturin").
    pub build_system: String,
    /// "pytest" for Python, "junit" for Java, "unknown" otherwise.
    pub test_framework: String,
    /// Repository-relative, `/`-separated, sorted: the files mutators may touch.
    pub source_files: Vec<String>,
    /// Repository-relative, `/`-separated, sorted.
    pub test_files: Vec<String>,
    /// The seed's install command, or one inferred from the project files.
    pub install_command: Option<String>,
    /// Repository-relative directories to put on PYTHONPATH so that the checkout's code (not
    /// an installed copy) is imported: `["src"]` for a src layout, else `["."]`; empty for Java.
    pub python_path: Vec<String>,
    /// What the project ships, whose files are mutated (Python: its packages and top-level
    /// modules, e.g. `src/geo`, `six.py`); empty when every source file is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Why those files are mutated (the layout found, or the seed's `include:`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub packages_reason: String,
}

/// An imported seed: mirror, pinned commit, checkout and profile.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Repo {
    pub name: String,
    pub seed: Seed,
    /// Display of the source: URL, canonical local path or `pypi:NAME==VERSION`.
    pub source: String,
    /// The pinned commit, 40 hex digits.
    pub commit: String,
    /// The bare mirror.
    pub mirror: PathBuf,
    /// A non-bare clone with the pinned commit checked out (detached HEAD), clean.
    pub checkout: PathBuf,
    pub profile: Profile,
}

/// Why a seed could not be imported. Every message starts with the seed's name.
#[derive(thiserror::Error, Debug)]
pub enum ImportError {
    /// The source is unknown, malformed or missing.
    #[error("{error}")]
    Source {
        seed: String,
        #[source]
        error: SeedError,
    },
    /// A git operation failed (clone, fetch, commit, checkout).
    #[error("seed `{seed}`: {action}: {}", error.message())]
    Git {
        seed: String,
        action: String,
        #[source]
        error: git2::Error,
    },
    /// The revision names nothing in the mirror, even after fetching.
    #[error("seed `{seed}`: revision `{revision}` not found in {from} (after fetching)")]
    RevisionNotFound {
        seed: String,
        revision: String,
        from: String,
    },
    /// A file system operation failed.
    #[error("seed `{seed}`: {action}: {error}")]
    Io {
        seed: String,
        action: String,
        #[source]
        error: io::Error,
    },
    /// `pip download` failed; `detail` holds its stderr.
    #[error("seed `{seed}`: pip download of {spec} failed: {detail}")]
    Download {
        seed: String,
        spec: String,
        detail: String,
    },
    /// A downloaded archive could not be unpacked safely.
    #[error("seed `{seed}`: cannot unpack {}: {reason}", archive.display())]
    Archive {
        seed: String,
        archive: PathBuf,
        reason: String,
    },
    /// An include/exclude glob does not compile.
    #[error("seed `{seed}`: invalid glob `{glob}`: {reason}")]
    BadGlob {
        seed: String,
        glob: String,
        reason: String,
    },
    /// Nothing in the repository counts as a test file.
    #[error("seed `{seed}`: no test files found in {} ({})", root.display(), test_file_rule(*language))]
    NoTests {
        seed: String,
        root: PathBuf,
        language: Language,
    },
}

/// What counts as a test file, for the `NoTests` message.
fn test_file_rule(language: Language) -> &'static str {
    match language {
        Language::Python => {
            "a Python test file is test_*.py or *_test.py, or a .py file under a test/, tests/ \
             or testing/ directory; conftest.py alone does not count"
        }
        Language::Java => {
            "a Java test file is *Test.java, *Tests.java or Test*.java, or a .java file under \
             src/test/ or test/"
        }
    }
}

impl ImportError {
    /// The name of the seed that failed.
    pub fn seed(&self) -> &str {
        match self {
            ImportError::Source { seed, .. }
            | ImportError::Git { seed, .. }
            | ImportError::RevisionNotFound { seed, .. }
            | ImportError::Io { seed, .. }
            | ImportError::Download { seed, .. }
            | ImportError::Archive { seed, .. }
            | ImportError::BadGlob { seed, .. }
            | ImportError::NoTests { seed, .. } => seed,
        }
    }
}

/// Builds errors that name one seed.
struct Ctx<'a> {
    seed: &'a str,
}

impl Ctx<'_> {
    fn git(&self, action: impl Into<String>) -> impl FnOnce(git2::Error) -> ImportError + '_ {
        let action = action.into();
        move |error| ImportError::Git {
            seed: self.seed.to_string(),
            action,
            error,
        }
    }

    fn io(&self, action: impl Into<String>) -> impl FnOnce(io::Error) -> ImportError + '_ {
        let action = action.into();
        move |error| ImportError::Io {
            seed: self.seed.to_string(),
            action,
            error,
        }
    }
}

/// Import `seed` into `cache`: mirror (or commit) its source, pin the commit, check it out and
/// profile it. Relative local sources resolve against `base_dir` (the manifest's directory).
/// Imports are idempotent: a second call reuses the mirror, the download and a clean checkout.
pub fn import(seed: &Seed, base_dir: &Path, cache: &Path) -> Result<Repo, ImportError> {
    let cx = Ctx { seed: &seed.name };
    let source = seed
        .resolve_source(base_dir)
        .map_err(|error| ImportError::Source {
            seed: seed.name.clone(),
            error,
        })?;
    let cache = std::path::absolute(cache).map_err(cx.io("cannot resolve the cache directory"))?;
    let (mirror, commit) = match &source {
        Source::GitUrl(url) => mirror_git(&cx, seed, url, &cache)?,
        Source::LocalGit(path) => {
            let url = path.to_str().ok_or_else(|| ImportError::Io {
                seed: seed.name.clone(),
                action: format!("cannot use {} as a git URL", path.display()),
                error: io::Error::new(io::ErrorKind::InvalidInput, "path is not valid UTF-8"),
            })?;
            mirror_git(&cx, seed, url, &cache)?
        }
        Source::LocalDir(dir) => {
            warn_ignored_revision(seed);
            commit_dir(&cx, dir, &cache)?
        }
        Source::Sdist { name, version } => {
            warn_ignored_revision(seed);
            let archive = download_sdist(&cx, name, version, &cache)?;
            let staging = tempfile::Builder::new()
                .prefix(".unpack-")
                .tempdir_in(ensure_dir(&cx, &cache.join("sdists"))?)
                .map_err(cx.io("cannot create a directory to unpack into"))?;
            let root = unpack(&archive, staging.path()).map_err(|reason| ImportError::Archive {
                seed: seed.name.clone(),
                archive: archive.clone(),
                reason,
            })?;
            commit_dir(&cx, &root, &cache)?
        }
    };
    let checkout = ensure_checkout(&cx, &mirror, commit, &cache)?;
    let profile = profile(&checkout, seed)?;
    Ok(Repo {
        name: seed.name.clone(),
        seed: seed.clone(),
        source: source.to_string(),
        commit: commit.to_string(),
        mirror,
        checkout,
        profile,
    })
}

fn warn_ignored_revision(seed: &Seed) {
    if let Some(rev) = &seed.revision {
        warn!(seed = %seed.name, revision = %rev, "revision ignored: the source is not a git repository");
    }
}

fn ensure_dir(cx: &Ctx<'_>, dir: &Path) -> Result<PathBuf, ImportError> {
    std::fs::create_dir_all(dir).map_err(cx.io(format!("cannot create {}", dir.display())))?;
    Ok(dir.to_path_buf())
}

/// A fresh directory next to `target`, renamed onto it once complete, so that an interrupted
/// import never leaves a half-made mirror or checkout under the final name.
fn staging_dir(cx: &Ctx<'_>, target: &Path) -> Result<tempfile::TempDir, ImportError> {
    let parent = target.parent().unwrap_or(Path::new("."));
    ensure_dir(cx, parent)?;
    tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-", cx.seed))
        .tempdir_in(parent)
        .map_err(cx.io(format!(
            "cannot create a staging directory in {}",
            parent.display()
        )))
}

/// Move a finished staging directory onto `target` (replacing what is there).
fn publish(cx: &Ctx<'_>, staged: tempfile::TempDir, target: &Path) -> Result<(), ImportError> {
    if target.exists() {
        std::fs::remove_dir_all(target)
            .map_err(cx.io(format!("cannot remove {}", target.display())))?;
    }
    let path = staged.keep();
    std::fs::rename(&path, target).map_err(|error| {
        let _ = std::fs::remove_dir_all(&path);
        ImportError::Io {
            seed: cx.seed.to_string(),
            action: format!("cannot move {} to {}", path.display(), target.display()),
            error,
        }
    })
}

/// The revision to pin, `HEAD` when the seed gives none.
fn revision_of(seed: &Seed) -> &str {
    seed.revision
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("HEAD")
}

/// Where the remote's HEAD is kept in a mirror (it may be detached in a local source).
const REMOTE_HEAD: &str = "refs/swe-forge/HEAD";

/// Resolve a commit, tag or branch name in a mirror. `HEAD` means the remote's HEAD.
fn resolve_revision(repo: &Repository, revision: &str) -> Option<Oid> {
    let specs: &[&str] = if revision == "HEAD" {
        &[REMOTE_HEAD, "HEAD"]
    } else {
        &[revision]
    };
    specs.iter().find_map(|spec| {
        let object = repo.revparse_single(spec).ok()?;
        object.peel_to_commit().ok().map(|c| c.id())
    })
}

/// Mirror a git source (URL or local repository path) and resolve the seed's revision in it.
fn mirror_git(
    cx: &Ctx<'_>,
    seed: &Seed,
    url: &str,
    cache: &Path,
) -> Result<(PathBuf, Oid), ImportError> {
    let key = blake3::hash(url.as_bytes()).to_hex();
    let mirror = cache
        .join("mirrors")
        .join(format!("{}-{}.git", seed.name, &key[..12]));
    let revision = revision_of(seed);
    let existing = if mirror.exists() {
        match Repository::open_bare(&mirror) {
            Ok(repo) => Some(repo),
            Err(e) => {
                warn!(seed = %seed.name, mirror = %mirror.display(), error = %e.message(), "unusable mirror, cloning again");
                None
            }
        }
    } else {
        None
    };
    let repo = match existing {
        Some(repo) => {
            let pinned = Oid::from_str(revision)
                .ok()
                .filter(|_| revision.len() == 40)
                .filter(|oid| repo.find_commit(*oid).is_ok());
            if pinned.is_none() {
                info!(seed = %seed.name, url, mirror = %mirror.display(), "fetching");
                if let Err(error) = fetch_mirror(&repo, url) {
                    if resolve_revision(&repo, revision).is_none() {
                        return Err(ImportError::Git {
                            seed: seed.name.clone(),
                            action: format!("cannot fetch {url}"),
                            error,
                        });
                    }
                    warn!(seed = %seed.name, url, error = %error.message(), "fetch failed, using the mirror as it is");
                }
            }
            repo
        }
        None => {
            info!(seed = %seed.name, url, mirror = %mirror.display(), "cloning");
            let staged = staging_dir(cx, &mirror)?;
            {
                let repo = Repository::init_bare(staged.path()).map_err(cx.git(format!(
                    "cannot create a mirror in {}",
                    staged.path().display()
                )))?;
                repo.remote_with_fetch("origin", url, "+refs/heads/*:refs/heads/*")
                    .and_then(|_| repo.remote_add_fetch("origin", "+refs/tags/*:refs/tags/*"))
                    .map_err(cx.git(format!("cannot add remote {url}")))?;
                fetch_mirror(&repo, url).map_err(cx.git(format!("cannot clone {url}")))?;
            }
            publish(cx, staged, &mirror)?;
            Repository::open_bare(&mirror)
                .map_err(cx.git(format!("cannot open {}", mirror.display())))?
        }
    };
    let commit =
        resolve_revision(&repo, revision).ok_or_else(|| ImportError::RevisionNotFound {
            seed: seed.name.clone(),
            revision: revision.to_string(),
            from: url.to_string(),
        })?;
    Ok((mirror, commit))
}

/// Fetch branches, tags and HEAD from `url` into a mirror, pruning deleted refs, and point the
/// mirror's HEAD at the remote's default branch.
fn fetch_mirror(repo: &Repository, url: &str) -> Result<(), git2::Error> {
    let mut remote = match repo.find_remote("origin") {
        Ok(remote) if remote.url().ok() == Some(url) => remote,
        _ => repo.remote_anonymous(url)?,
    };
    let mut proxy = git2::ProxyOptions::new();
    proxy.auto();
    let mut options = git2::FetchOptions::new();
    options
        .proxy_options(proxy)
        .prune(git2::FetchPrune::On)
        .download_tags(git2::AutotagOption::None);
    let refspecs = [
        "+refs/heads/*:refs/heads/*".to_string(),
        "+refs/tags/*:refs/tags/*".to_string(),
        format!("+HEAD:{REMOTE_HEAD}"),
    ];
    remote.fetch(&refspecs, Some(&mut options), Some("swe-forge fetch"))?;
    if let Ok(branch) = remote.default_branch() {
        if let Ok(name) = branch.as_str() {
            if repo.find_reference(name).is_ok() {
                repo.set_head(name)?;
            }
        }
    }
    Ok(())
}

/// Whether `dir` is a checkout whose detached HEAD is `commit` and whose tree is clean
/// (ignored files are tolerated, untracked ones are not).
fn checkout_is_clean_at(dir: &Path, commit: Oid) -> bool {
    let Ok(repo) = Repository::open(dir) else {
        return false;
    };
    let at_commit = repo.head_detached().unwrap_or(false)
        && repo.head().ok().and_then(|h| h.target()) == Some(commit);
    if !at_commit {
        return false;
    }
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .include_ignored(false)
        .exclude_submodules(true);
    repo.statuses(Some(&mut options))
        .map(|s| s.is_empty())
        .unwrap_or(false)
}

/// `cache/checkouts/<name>-<commit[..12]>`, reused when clean at `commit`, else cloned afresh
/// from the mirror with `commit` checked out detached.
fn ensure_checkout(
    cx: &Ctx<'_>,
    mirror: &Path,
    commit: Oid,
    cache: &Path,
) -> Result<PathBuf, ImportError> {
    let hex = commit.to_string();
    let dir = cache
        .join("checkouts")
        .join(format!("{}-{}", cx.seed, &hex[..12]));
    if dir.exists() {
        if checkout_is_clean_at(&dir, commit) {
            info!(seed = cx.seed, checkout = %dir.display(), "reusing checkout");
            return Ok(dir);
        }
        warn!(seed = cx.seed, checkout = %dir.display(), "checkout is not clean at the pinned commit, recreating it");
    }
    info!(seed = cx.seed, commit = %hex, checkout = %dir.display(), "checking out");
    let mirror_url = mirror.to_str().ok_or_else(|| ImportError::Io {
        seed: cx.seed.to_string(),
        action: format!("cannot use {} as a git URL", mirror.display()),
        error: io::Error::new(io::ErrorKind::InvalidInput, "path is not valid UTF-8"),
    })?;
    // A ref in the mirror makes the commit fetchable whatever branch or tag led to it.
    let pin = format!("refs/swe-forge/pin/{hex}");
    {
        let repo = Repository::open_bare(mirror)
            .map_err(cx.git(format!("cannot open {}", mirror.display())))?;
        repo.reference(&pin, commit, true, "swe-forge pin")
            .map_err(cx.git(format!("cannot pin {hex} in {}", mirror.display())))?;
    }
    let staged = staging_dir(cx, &dir)?;
    {
        let repo = Repository::init(staged.path()).map_err(cx.git(format!(
            "cannot create a repository in {}",
            staged.path().display()
        )))?;
        let mut remote = repo
            .remote("origin", mirror_url)
            .map_err(cx.git("cannot add the mirror as origin"))?;
        let mut options = git2::FetchOptions::new();
        options.download_tags(git2::AutotagOption::None);
        remote
            .fetch(
                &[format!("+{pin}:refs/swe-forge/base")],
                Some(&mut options),
                None,
            )
            .map_err(cx.git(format!("cannot fetch {hex} from {}", mirror.display())))?;
        let target = repo
            .find_commit(commit)
            .map_err(cx.git(format!("cannot find {hex} after fetching")))?;
        let mut checkout = git2::build::CheckoutBuilder::new();
        checkout.force();
        repo.checkout_tree(target.as_object(), Some(&mut checkout))
            .and_then(|_| repo.set_head_detached(commit))
            .map_err(cx.git(format!("cannot check out {hex}")))?;
    }
    publish(cx, staged, &dir)?;
    Ok(dir)
}

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

/// Walk `root` in a stable order, skipping what [`is_skipped`] says, yielding every entry
/// below the root.
fn walk(root: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
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
fn commit_dir(cx: &Ctx<'_>, dir: &Path, cache: &Path) -> Result<(PathBuf, Oid), ImportError> {
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

/// `cache/sdists/NAME-VERSION/<archive>`, downloaded with pip unless already there.
fn download_sdist(
    cx: &Ctx<'_>,
    name: &str,
    version: &str,
    cache: &Path,
) -> Result<PathBuf, ImportError> {
    let dest = cache.join("sdists").join(format!("{name}-{version}"));
    if let Some(archive) = find_archive(&dest) {
        info!(seed = cx.seed, archive = %archive.display(), "using downloaded sdist");
        return Ok(archive);
    }
    let spec = format!("{name}=={version}");
    info!(seed = cx.seed, spec = %spec, "downloading sdist with pip");
    let staged = staging_dir(cx, &dest)?;
    let output = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
        .args(["--disable-pip-version-check", "--no-input", "-d"])
        .arg(staged.path())
        .arg(&spec)
        .output()
        .map_err(|e| ImportError::Download {
            seed: cx.seed.to_string(),
            spec: spec.clone(),
            detail: format!("cannot run python3: {e}"),
        })?;
    if !output.status.success() {
        return Err(ImportError::Download {
            seed: cx.seed.to_string(),
            spec,
            detail: format!(
                "{}: {}",
                output.status,
                tail(&String::from_utf8_lossy(&output.stderr), 40)
            ),
        });
    }
    if find_archive(staged.path()).is_none() {
        return Err(ImportError::Download {
            seed: cx.seed.to_string(),
            spec,
            detail: "pip saved no .tar.gz or .zip archive".to_string(),
        });
    }
    publish(cx, staged, &dest)?;
    find_archive(&dest).ok_or_else(|| ImportError::Download {
        seed: cx.seed.to_string(),
        spec,
        detail: format!("the archive vanished from {}", dest.display()),
    })
}

/// The last `lines` lines of `text`, trimmed.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The first (by name) `.tar.gz`, `.tgz` or `.zip` file in `dir`.
fn find_archive(dir: &Path) -> Option<PathBuf> {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && archive_kind(p).is_some())
        .collect();
    archives.sort();
    archives.into_iter().next()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ArchiveKind {
    TarGz,
    Zip,
}

fn archive_kind(path: &Path) -> Option<ArchiveKind> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Some(ArchiveKind::TarGz)
    } else if name.ends_with(".zip") {
        Some(ArchiveKind::Zip)
    } else {
        None
    }
}

/// An archive entry's path made relative and safe: `.` parts dropped; `..`, absolute paths
/// and drive prefixes refused. `None` for the archive root itself.
fn safe_relative(path: &Path) -> Result<Option<PathBuf>, String> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "entry `{}` points outside the archive",
                    path.display()
                ))
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Unpack a `.tar.gz` or `.zip` archive into `into` and return the project root: the single
/// top-level directory when there is one, else `into`. Only directories and regular files are
/// created (links are skipped), so no entry can write outside `into`.
fn unpack(archive: &Path, into: &Path) -> Result<PathBuf, String> {
    let kind = archive_kind(archive).ok_or("not a .tar.gz or .zip archive")?;
    let file = std::fs::File::open(archive).map_err(|e| e.to_string())?;
    match kind {
        ArchiveKind::TarGz => unpack_tar(file, into)?,
        ArchiveKind::Zip => unpack_zip(file, into)?,
    }
    let top: Vec<PathBuf> = std::fs::read_dir(into)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match top.as_slice() {
        [only] if only.is_dir() => Ok(only.clone()),
        _ => Ok(into.to_path_buf()),
    }
}

fn write_entry(
    into: &Path,
    rel: &Path,
    data: &mut dyn io::Read,
    executable: bool,
) -> Result<(), String> {
    let dest = into.join(rel);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", rel.display()))?;
    }
    let mut out = std::fs::File::create(&dest).map_err(|e| format!("{}: {e}", rel.display()))?;
    io::copy(data, &mut out).map_err(|e| format!("{}: {e}", rel.display()))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", rel.display()))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    Ok(())
}

fn unpack_tar(file: std::fs::File, into: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let Some(rel) = safe_relative(&path)? else {
            continue;
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            std::fs::create_dir_all(into.join(&rel))
                .map_err(|e| format!("{}: {e}", rel.display()))?;
        } else if kind.is_file() || kind.is_contiguous() {
            let executable = entry
                .header()
                .mode()
                .map(|m| m & 0o111 != 0)
                .unwrap_or(false);
            write_entry(into, &rel, &mut entry, executable)?;
        }
        // links, devices and fifos are not part of a source tree we mutate: skipped
    }
    Ok(())
}

fn unpack_zip(file: std::fs::File, into: &Path) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| e.to_string())?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| e.to_string())?;
        let name = entry.name().to_string();
        // `enclosed_name` refuses absolute paths and `..` escapes; check again ourselves.
        let enclosed = entry
            .enclosed_name()
            .ok_or_else(|| format!("entry `{name}` points outside the archive"))?;
        let Some(rel) = safe_relative(&enclosed)? else {
            continue;
        };
        if entry.is_dir() {
            std::fs::create_dir_all(into.join(&rel))
                .map_err(|e| format!("{}: {e}", rel.display()))?;
        } else if entry.is_symlink() {
            continue;
        } else {
            let executable = entry.unix_mode().is_some_and(|m| m & 0o111 != 0);
            write_entry(into, &rel, &mut entry, executable)?;
        }
    }
    Ok(())
}

/// Profile the tree at `root` (a checkout) for `seed`: build system, test framework, test and
/// source files, install command and import path. Fails with [`ImportError::NoTests`] when no
/// file counts as a test.
pub fn profile(root: &Path, seed: &Seed) -> Result<Profile, ImportError> {
    let cx = Ctx { seed: &seed.name };
    let files = list_files(&cx, root)?;
    let filter = SourceFilter::new(seed)?;
    let language = seed.language;
    let is_code = |f: &&String| language.matches_path(Path::new(f.as_str()));
    let test_files: Vec<String> = files
        .iter()
        .filter(is_code)
        .filter(|f| language.is_test_path(f))
        .cloned()
        .collect();
    let candidates = files
        .iter()
        .filter(is_code)
        .filter(|f| !language.is_test_path(f));
    let mut profile = match language {
        Language::Python => {
            let sources: Vec<String> = candidates
                .filter(|f| is_python_source(f))
                .filter(|f| filter.keeps(f))
                .cloned()
                .collect();
            let (packages, reason) = if seed.include.is_empty() {
                shipped_python(&sources)
            } else {
                (Vec::new(), "the seed's `include:` globs".to_string())
            };
            let source_files = sources
                .into_iter()
                .filter(|f| {
                    packages.is_empty()
                        || packages
                            .iter()
                            .any(|p| f == p || f.starts_with(&format!("{p}/")))
                })
                .collect();
            let mut p = python_profile(root, source_files, test_files);
            info!(seed = %seed.name, packages = ?packages, "mutating {reason}");
            p.packages = packages;
            p.packages_reason = reason;
            p
        }
        Language::Java => {
            let source_files = candidates
                .filter(|f| is_java_source(f))
                .filter(|f| filter.keeps(f))
                .cloned()
                .collect();
            java_profile(root, source_files, test_files)
        }
    };
    profile.install_command = seed.install.clone().or(profile.install_command);
    let has_tests = profile
        .test_files
        .iter()
        .any(|f| file_name(f) != "conftest.py");
    if !has_tests {
        return Err(ImportError::NoTests {
            seed: seed.name.clone(),
            root: root.to_path_buf(),
            language,
        });
    }
    Ok(profile)
}

/// Every regular file under `root` (not skipped), repository-relative with `/`, sorted.
/// Symbolic links and non-UTF-8 names are left out.
fn list_files(cx: &Ctx<'_>, root: &Path) -> Result<Vec<String>, ImportError> {
    let mut files = Vec::new();
    for entry in walk(root) {
        let entry = entry.map_err(|e| ImportError::Io {
            seed: cx.seed.to_string(),
            action: format!("cannot walk {}", root.display()),
            error: e.into(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        match parts {
            Some(parts) => files.push(parts.join("/")),
            None => {
                warn!(seed = cx.seed, path = %rel.display(), "skipping a file whose name is not UTF-8")
            }
        }
    }
    files.sort();
    Ok(files)
}

fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// A Python file mutators may touch: not packaging, not docs, examples or benchmarks.
fn is_python_source(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let (file, dirs) = parts.split_last().unwrap_or((&"", &[]));
    !matches!(*file, "setup.py" | "conftest.py")
        && !dirs.iter().any(|d| NON_SOURCE_DIRS.contains(d))
}

/// Top-level names of a Python repository that are not part of what it ships: tests, docs,
/// developer tools and build or task scripts.
const NOT_SHIPPED: [&str; 24] = [
    "tests",
    "test",
    "testing",
    "docs",
    "doc",
    "documentation",
    "examples",
    "example",
    "benchmarks",
    "benchmark",
    "bench",
    "tools",
    "tool",
    "scripts",
    "script",
    "bin",
    "ci",
    "setup.py",
    "conftest.py",
    "noxfile.py",
    "tasks.py",
    "fabfile.py",
    "dodo.py",
    "runtests.py",
];

/// What a Python project ships, from its layout, among its source files: with a `src/`
/// layout, what `src/` holds; else the top-level packages (directories with `__init__.py`)
/// and modules, less tests, docs, tools, scripts and build or task files. Returns the roots
/// and why; no roots (every source file) when none is found.
fn shipped_python(sources: &[String]) -> (Vec<String>, String) {
    let mut roots: BTreeSet<String> = BTreeSet::new();
    let src: Vec<&String> = sources.iter().filter(|f| f.starts_with("src/")).collect();
    let has_init = |dir: &str| sources.iter().any(|f| *f == format!("{dir}/__init__.py"));
    if !src.is_empty() {
        for f in &src {
            let rest = &f["src/".len()..];
            match rest.split_once('/') {
                Some((top, _)) => roots.insert(format!("src/{top}")),
                None => roots.insert((*f).clone()),
            };
        }
        let list: Vec<String> = roots.into_iter().collect();
        let why = format!("the src layout's {}", list.join(", "));
        return (list, why);
    }
    for f in sources {
        match f.split_once('/') {
            Some((top, _)) if !NOT_SHIPPED.contains(&top) && has_init(top) => {
                roots.insert(top.to_string());
            }
            None if !NOT_SHIPPED.contains(&f.as_str()) => {
                roots.insert(f.clone());
            }
            _ => {}
        }
    }
    if roots.is_empty() {
        return (
            Vec::new(),
            "every source file (no package or top-level module found)".to_string(),
        );
    }
    let list: Vec<String> = roots.into_iter().collect();
    let why = format!(
        "the shipped packages and modules {} (tests, docs, tools, scripts and build files left out)",
        list.join(", ")
    );
    (list, why)
}

/// A Java file under a `src/main/java` tree (of the root or of a module).
fn is_java_source(rel: &str) -> bool {
    rel.starts_with("src/main/java/") || rel.contains("/src/main/java/")
}

/// The seed's include/exclude globs over repository-relative paths (`*` stays within one
/// directory, `**` crosses directories). No include globs means everything is included.
struct SourceFilter {
    include: Option<globset::GlobSet>,
    exclude: globset::GlobSet,
}

impl SourceFilter {
    fn new(seed: &Seed) -> Result<Self, ImportError> {
        let build = |globs: &[String]| -> Result<globset::GlobSet, ImportError> {
            let mut set = globset::GlobSetBuilder::new();
            for glob in globs {
                let compiled = globset::GlobBuilder::new(glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| ImportError::BadGlob {
                        seed: seed.name.clone(),
                        glob: glob.clone(),
                        reason: e.kind().to_string(),
                    })?;
                set.add(compiled);
            }
            set.build().map_err(|e| ImportError::BadGlob {
                seed: seed.name.clone(),
                glob: globs.join(", "),
                reason: e.to_string(),
            })
        };
        let include = if seed.include.is_empty() {
            None
        } else {
            Some(build(&seed.include)?)
        };
        Ok(SourceFilter {
            include,
            exclude: build(&seed.exclude)?,
        })
    }

    fn keeps(&self, rel: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(rel)) && !self.exclude.is_match(rel)
    }
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The name in a `[table]` or `[[table]]` header line, or `None` when the line is no header
/// (a TOML array line such as `["a", "b"],` is not one).
fn header_name(line: &str) -> Option<&str> {
    let line = line.trim();
    let inner = line.strip_prefix("[[").or_else(|| line.strip_prefix('['))?;
    let (name, rest) = inner.split_once(']')?;
    let rest = rest.trim_start_matches(']').trim();
    let name = name.trim();
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | ' '));
    (name_ok && (rest.is_empty() || rest.starts_with('#'))).then_some(name)
}

/// The `key = value` (or INI `key: value`) pairs of one `[section]` of a TOML or INI file,
/// found by a light line scan: enough for `build-backend` and the names of optional-dependency
/// groups. Only keys at the start of a line count (indented lines continue a value); keys and
/// string values come back without quotes.
fn section_entries(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut entries = Vec::new();
    for raw in text.lines() {
        if let Some(name) = header_name(raw) {
            inside = name == section;
            continue;
        }
        if !inside || raw.starts_with([' ', '\t', '#', ';']) {
            continue;
        }
        let Some((key, value)) = raw.split_once('=').or_else(|| raw.split_once(':')) else {
            continue;
        };
        let unquote = |s: &str| s.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        let key = unquote(key);
        if !key.is_empty() && !key.contains(' ') {
            entries.push((key, unquote(value)));
        }
    }
    entries
}

/// Whether a `[section]` header appears in the text.
fn has_section(text: &str, section: &str) -> bool {
    text.lines().any(|l| header_name(l) == Some(section))
}

/// The build system named by a PEP 517 `build-backend`.
fn backend_name(backend: &str) -> String {
    let top = backend.split(['.', ':']).next().unwrap_or(backend);
    match top {
        "setuptools" => "setuptools",
        "poetry" => "poetry",
        "flit_core" | "flit" => "flit",
        "hatchling" => "hatch",
        "pdm" => "pdm",
        other => other,
    }
    .to_string()
}

fn python_profile(root: &Path, source_files: Vec<String>, test_files: Vec<String>) -> Profile {
    let pyproject = read_text(&root.join("pyproject.toml"));
    let setup_cfg = read_text(&root.join("setup.cfg")).unwrap_or_default();
    let has_setup_py = root.join("setup.py").is_file();
    // A pyproject.toml that only configures tools (black, pytest) does not make a package.
    let packaging = pyproject.as_deref().filter(|t| {
        has_section(t, "build-system") || has_section(t, "project") || has_section(t, "tool.poetry")
    });
    let backend = packaging.and_then(|t| {
        section_entries(t, "build-system")
            .into_iter()
            .find(|(k, _)| k == "build-backend")
            .map(|(_, v)| v)
    });
    let requirements: Vec<&str> = REQUIREMENT_FILES
        .iter()
        .copied()
        .filter(|f| root.join(f).is_file())
        .collect();
    let build_system = match (&backend, packaging, has_setup_py) {
        (Some(backend), _, _) => backend_name(backend),
        (None, _, true) => "setup.py".to_string(),
        (None, Some(_), false) => "setuptools".to_string(),
        (None, None, false) if !requirements.is_empty() => "requirements".to_string(),
        _ => "none".to_string(),
    };
    let installable = packaging.is_some() || has_setup_py;
    let tox = read_text(&root.join("tox.ini"))
        .map(|t| ToxTestenv::parse(&t))
        .unwrap_or_default();
    let pyproject_table = packaging.and_then(|t| t.parse::<toml::Table>().ok());
    let dependency_groups = pyproject_table
        .as_ref()
        .and_then(|t| t.get("dependency-groups")?.as_table().cloned())
        .unwrap_or_default();
    let mut commands = Vec::new();
    if installable {
        // Extras as TOML reads them (`optional-dependencies.tests = [...]` under `[project]`
        // is one too); the line scan where the file does not parse.
        let mut extras_declared: Vec<String> = match &pyproject_table {
            Some(t) => t
                .get("project")
                .and_then(|p| p.get("optional-dependencies"))
                .and_then(|o| o.as_table())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default(),
            None => packaging
                .map(|t| section_entries(t, "project.optional-dependencies"))
                .unwrap_or_default()
                .into_iter()
                .map(|(k, _)| k)
                .collect(),
        };
        extras_declared.extend(
            section_entries(&setup_cfg, "options.extras_require")
                .into_iter()
                .map(|(k, _)| k),
        );
        let declared = |name: &str| extras_declared.iter().any(|k| k == name);
        let has_group = |name: &str| dependency_group(&dependency_groups, name).is_some();
        // A test extra or dependency group (PEP 735), else a development one (which usually
        // holds the test tools too); and whatever tox's test environment adds.
        let test_extra = TEST_GROUPS.into_iter().find(|g| declared(g));
        let test_group = TEST_GROUPS.into_iter().find(|g| has_group(g));
        let mut extras: Vec<String> = test_extra
            .or_else(|| (test_group.is_none() && declared("dev")).then_some("dev"))
            .map(str::to_string)
            .into_iter()
            .collect();
        for extra in &tox.extras {
            if declared(extra)
                && !extras.contains(extra)
                && !NOT_TEST_EXTRAS.contains(&extra.as_str())
            {
                extras.push(extra.clone());
            }
        }
        commands.push(if extras.is_empty() {
            "python -m pip install .".to_string()
        } else {
            format!("python -m pip install '.[{}]'", extras.join(","))
        });
        let mut groups: Vec<String> = test_group
            .or_else(|| (test_extra.is_none() && has_group("dev")).then_some("dev"))
            .map(str::to_string)
            .into_iter()
            .collect();
        for group in &tox.dependency_groups {
            if has_group(group) && !groups.contains(group) {
                groups.push(group.clone());
            }
        }
        let mut reqs: Vec<String> = Vec::new();
        for group in &groups {
            for req in dependency_group(&dependency_groups, group).unwrap_or_default() {
                if !reqs.contains(&req) {
                    reqs.push(req);
                }
            }
        }
        for dep in &tox.deps {
            if !reqs.contains(dep) {
                reqs.push(dep.clone());
            }
        }
        if !reqs.is_empty() {
            let quoted: Vec<String> = reqs
                .iter()
                .map(|r| crate::sandbox::shell_quote(r))
                .collect();
            commands.push(format!("python -m pip install {}", quoted.join(" ")));
        }
    }
    for file in &requirements {
        commands.push(format!("python -m pip install -r {file}"));
    }
    let install_command = (!commands.is_empty()).then(|| commands.join(" && "));
    let python_path = if has_src_layout(root) { "src" } else { "." };
    Profile {
        language: Language::Python,
        build_system,
        test_framework: "pytest".to_string(),
        source_files,
        test_files,
        install_command,
        python_path: vec![python_path.to_string()],
        packages: Vec::new(),
        packages_reason: String::new(),
    }
}

/// Names of the extras and dependency groups that hold a project's test requirements.
const TEST_GROUPS: [&str; 3] = ["test", "tests", "testing"];

/// Extras a tox environment installs that are not test requirements: linters and type
/// checkers run as pytest plugins (pytest-enabler turns them on when installed), whose
/// "tests" a mutant fails for its style, not its behaviour; coverage and docs.
const NOT_TEST_EXTRAS: [&str; 11] = [
    "check", "cover", "coverage", "enabler", "type", "types", "typing", "lint", "mypy", "doc",
    "docs",
];

/// The requirements of one PEP 735 dependency group, its `{include-group = "…"}` entries
/// resolved (names compared normalized, as the PEP says); `None` when there is no such group.
fn dependency_group(groups: &toml::Table, name: &str) -> Option<Vec<String>> {
    fn normalized(name: &str) -> String {
        name.to_ascii_lowercase().replace(['_', '.'], "-")
    }
    fn collect(
        groups: &toml::Table,
        name: &str,
        seen: &mut Vec<String>,
        out: &mut Vec<String>,
    ) -> bool {
        let key = normalized(name);
        if seen.contains(&key) {
            return true;
        }
        seen.push(key.clone());
        let Some(items) = groups
            .iter()
            .find(|(k, _)| normalized(k) == key)
            .and_then(|(_, v)| v.as_array())
        else {
            return false;
        };
        for item in items {
            if let Some(req) = item.as_str() {
                let req = req.trim().to_string();
                if !req.is_empty() && !out.contains(&req) {
                    out.push(req);
                }
            } else if let Some(inc) = item.get("include-group").and_then(|v| v.as_str()) {
                collect(groups, inc, seen, out);
            }
        }
        true
    }
    let mut out = Vec::new();
    collect(groups, name, &mut Vec::new(), &mut out).then_some(out)
}

/// What tox's `[testenv]` adds to the project for its tests: `deps` (plain requirements;
/// `-r`/`-c` lines and tox substitutions are left out), `extras` and `dependency_groups`.
#[derive(Debug, Default, PartialEq)]
struct ToxTestenv {
    deps: Vec<String>,
    extras: Vec<String>,
    dependency_groups: Vec<String>,
}

impl ToxTestenv {
    fn parse(ini: &str) -> ToxTestenv {
        let mut env = ToxTestenv::default();
        let mut inside = false;
        let mut key: Option<String> = None;
        for raw in ini.lines() {
            let trimmed = raw.trim();
            if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                inside = name.trim() == "testenv";
                key = None;
                continue;
            }
            if !inside {
                continue;
            }
            let line = raw.split(" #").next().unwrap_or(raw);
            let (value, continues) = if raw.starts_with([' ', '\t']) {
                (line.trim(), true)
            } else if let Some((k, v)) = line.split_once('=') {
                key = Some(k.trim().to_string());
                (v.trim(), false)
            } else {
                key = None;
                continue;
            };
            if continues && key.is_none() {
                continue;
            }
            let list = match key.as_deref() {
                Some("deps") => &mut env.deps,
                Some("extras") => &mut env.extras,
                Some("dependency_groups") => &mut env.dependency_groups,
                _ => continue,
            };
            for item in value.split(if key.as_deref() == Some("deps") {
                '\n'
            } else {
                ','
            }) {
                let item = item.trim();
                if item.is_empty() || item.starts_with(['#', '-']) || item.contains(['{', '}']) {
                    continue;
                }
                if !list.iter().any(|x| x == item) {
                    list.push(item.to_string());
                }
            }
        }
        env
    }
}

/// `src/<package>/__init__.py` or `src/<module>.py`.
fn has_src_layout(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join("src")) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let path = e.path();
        (path.is_dir() && path.join("__init__.py").is_file())
            || (path.is_file() && path.extension() == Some(OsStr::new("py")))
    })
}

fn java_profile(root: &Path, source_files: Vec<String>, test_files: Vec<String>) -> Profile {
    let build_system = if root.join("pom.xml").is_file() {
        "maven"
    } else if root.join("build.gradle").is_file() || root.join("build.gradle.kts").is_file() {
        "gradle"
    } else {
        "none"
    };
    Profile {
        language: Language::Java,
        build_system: build_system.to_string(),
        test_framework: "junit".to_string(),
        source_files,
        test_files,
        install_command: None,
        python_path: Vec::new(),
        packages: Vec::new(),
        packages_reason: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn seed(name: &str, source: &str, language: Language) -> Seed {
        Seed {
            name: name.into(),
            source: source.into(),
            revision: None,
            language,
            install: None,
            test: None,
            include: vec![],
            exclude: vec![],
            repo: None,
        }
    }

    /// A flat project: package `calc`, tests under `tests/`, requirements file.
    fn flat_project(root: &Path) {
        write(root, "calc/__init__.py", "from .ops import add\n");
        write(root, "calc/ops.py", "def add(a, b):\n    return a + b\n");
        write(
            root,
            "tests/test_ops.py",
            "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        );
        write(root, "conftest.py", "");
        write(
            root,
            "setup.py",
            "from setuptools import setup\nsetup(name='calc')\n",
        );
        write(root, "requirements-dev.txt", "pytest\n");
        write(root, "docs/conf.py", "project = 'calc'\n");
    }

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

    fn commit_all(repo: &Repository, message: &str, time: i64) -> Oid {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new("t", "t@example.com", &git2::Time::new(time, 0)).unwrap();
        let parents: Vec<git2::Commit<'_>> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    fn assert_clean_detached(checkout: &Path, commit: &str) {
        let repo = Repository::open(checkout).unwrap();
        assert!(repo.head_detached().unwrap());
        assert_eq!(repo.head().unwrap().target().unwrap().to_string(), commit);
        let mut options = git2::StatusOptions::new();
        options.include_untracked(true);
        assert!(
            repo.statuses(Some(&mut options)).unwrap().is_empty(),
            "checkout not clean"
        );
    }

    #[test]
    fn only_what_the_project_ships_is_mutated() {
        let files = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (roots, why) = shipped_python(&files(&[
            "noxfile.py",
            "pkg/__init__.py",
            "pkg/core.py",
            "scripts/release.py",
            "single.py",
            "tools/gen/__init__.py",
            "tools/gen/make.py",
        ]));
        assert_eq!(roots, ["pkg", "single.py"]);
        assert!(why.contains("pkg, single.py"), "{why}");
        let (roots, why) = shipped_python(&files(&[
            "src/geo/__init__.py",
            "src/geo/shapes.py",
            "src/util.py",
            "tools/x.py",
        ]));
        assert_eq!(roots, ["src/geo", "src/util.py"]);
        assert!(why.contains("src layout"), "{why}");
        let (roots, _) = shipped_python(&files(&["scripts/a.py"]));
        assert!(roots.is_empty(), "nothing shipped: every source file");
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

    #[test]
    fn local_git_repository_at_tag_commit_and_head() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let repo = Repository::init(&work).unwrap();
        flat_project(&work);
        let first = commit_all(&repo, "first", 1_000);
        let tagger =
            git2::Signature::new("t", "t@example.com", &git2::Time::new(1_000, 0)).unwrap();
        repo.tag(
            "v1",
            &repo.find_object(first, None).unwrap(),
            &tagger,
            "release 1",
            false,
        )
        .unwrap();
        write(
            &work,
            "calc/ops.py",
            "def add(a, b):\n    return a + b + 0\n",
        );
        let second = commit_all(&repo, "second", 2_000);
        let cache = tempfile::tempdir().unwrap();

        let mut s = seed("calc", "work", Language::Python);
        let head = import(&s, tmp.path(), cache.path()).unwrap();
        assert_eq!(head.commit, second.to_string());
        assert_clean_detached(&head.checkout, &head.commit);
        assert!(std::fs::read_to_string(head.checkout.join("calc/ops.py"))
            .unwrap()
            .contains("+ 0"));

        s.revision = Some("v1".into());
        let tagged = import(&s, tmp.path(), cache.path()).unwrap();
        assert_eq!(tagged.commit, first.to_string());
        assert_eq!(tagged.mirror, head.mirror);
        assert_ne!(tagged.checkout, head.checkout);
        assert_clean_detached(&tagged.checkout, &tagged.commit);
        assert!(
            !std::fs::read_to_string(tagged.checkout.join("calc/ops.py"))
                .unwrap()
                .contains("+ 0")
        );

        s.revision = Some(first.to_string()[..10].to_string());
        assert_eq!(
            import(&s, tmp.path(), cache.path()).unwrap().commit,
            first.to_string()
        );
        s.revision = Some(first.to_string());
        assert_eq!(
            import(&s, tmp.path(), cache.path()).unwrap().commit,
            first.to_string()
        );

        // A new commit in the source is fetched on the next import of HEAD.
        write(&work, "calc/more.py", "X = 1\n");
        let third = commit_all(&repo, "third", 3_000);
        s.revision = None;
        assert_eq!(
            import(&s, tmp.path(), cache.path()).unwrap().commit,
            third.to_string()
        );

        // A detached HEAD in the source is what HEAD means.
        repo.set_head_detached(first).unwrap();
        assert_eq!(
            import(&s, tmp.path(), cache.path()).unwrap().commit,
            first.to_string()
        );
    }

    #[test]
    fn missing_revision_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let repo = Repository::init(&work).unwrap();
        flat_project(&work);
        commit_all(&repo, "first", 1_000);
        let cache = tempfile::tempdir().unwrap();
        let mut s = seed("calc", "work", Language::Python);
        for rev in ["v9", "0123456789012345678901234567890123456789"] {
            s.revision = Some(rev.into());
            let err = import(&s, tmp.path(), cache.path()).unwrap_err();
            assert!(matches!(err, ImportError::RevisionNotFound { .. }), "{err}");
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!("seed `calc`: revision `{rev}` not found in ")),
                "{msg}"
            );
        }
    }

    #[test]
    fn unknown_and_missing_sources_are_seed_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let err = import(
            &seed("a", "ftp://x", Language::Python),
            tmp.path(),
            tmp.path(),
        )
        .unwrap_err();
        assert!(matches!(err, ImportError::Source { .. }));
        assert_eq!(err.seed(), "a");
        assert!(
            err.to_string()
                .starts_with("seed `a`: source: unknown source `ftp://x`"),
            "{err}"
        );
        let err = import(
            &seed("a", "nowhere", Language::Python),
            tmp.path(),
            tmp.path(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
    }

    #[test]
    fn profile_of_flat_project() {
        let root = tempfile::tempdir().unwrap();
        flat_project(root.path());
        write(root.path(), "examples/demo.py", "");
        write(root.path(), "benchmarks/bench_add.py", "");
        let p = profile(root.path(), &seed("calc", ".", Language::Python)).unwrap();
        assert_eq!(p.language, Language::Python);
        assert_eq!(p.build_system, "setup.py");
        assert_eq!(p.test_framework, "pytest");
        assert_eq!(p.source_files, ["calc/__init__.py", "calc/ops.py"]);
        assert_eq!(p.test_files, ["conftest.py", "tests/test_ops.py"]);
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install . && python -m pip install -r requirements-dev.txt")
        );
        assert_eq!(p.python_path, ["."]);

        let mut s = seed("calc", ".", Language::Python);
        s.install = Some("make deps".into());
        s.exclude = vec!["calc/__init__.py".into()];
        let p = profile(root.path(), &s).unwrap();
        assert_eq!(p.install_command.as_deref(), Some("make deps"));
        assert_eq!(p.source_files, ["calc/ops.py"]);
    }

    #[test]
    fn installs_the_test_dependency_group_and_what_tox_adds() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let pyproject = r#"[build-system]
requires = ["flit_core"]
build-backend = "flit_core.buildapi"

[project]
name = "geo"
optional-dependencies.fast = ["numpy"]
optional-dependencies.type = ["pytest-mypy"]

[dependency-groups]
lint = ["ruff"]
Tests = [
  "pytest",
  "simplejson>=3",
]
dev = [{ include-group = "tests" }, { include-group = "lint" }, "tox"]
"#;
        write(r, "pyproject.toml", pyproject);
        write(r, "geo/__init__.py", "");
        write(r, "tests/test_geo.py", "def test_geo():\n    pass\n");
        write(
            r,
            "tox.ini",
            "[tox]\nenv_list = py3\n\n[testenv]\ndeps =\n    babel\n    -r requirements/docs.txt\n    \
             {[base]deps}\nextras =\n    fast\n    missing\n    type\ncommands = pytest {posargs}\n\n\
             [testenv:lint]\ndeps = flake8\n",
        );
        let p = profile(r, &seed("geo", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[fast]' && python -m pip install pytest 'simplejson>=3' babel")
        );
        let table = pyproject.parse::<toml::Table>().unwrap();
        let groups = table["dependency-groups"].as_table().unwrap();
        assert_eq!(
            dependency_group(groups, "dev").unwrap(),
            ["pytest", "simplejson>=3", "ruff", "tox"]
        );
        assert_eq!(dependency_group(groups, "docs"), None);
    }

    #[test]
    fn tox_testenv_lists() {
        let env = ToxTestenv::parse(
            "[testenv]\npackage = editable\ndeps = pytest-mock  # mocks\nextras = tests, yaml\n\
             dependency_groups = dev\npass_env =\n    FORCE_COLOR\n[testenv:docs]\ndeps = sphinx\n",
        );
        assert_eq!(env.deps, ["pytest-mock"]);
        assert_eq!(env.extras, ["tests", "yaml"]);
        assert_eq!(env.dependency_groups, ["dev"]);
        assert_eq!(
            ToxTestenv::parse("[tox]\nenv_list = py3\n"),
            ToxTestenv::default()
        );
    }

    #[test]
    fn profile_of_src_layout_project() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(
            r,
            "pyproject.toml",
            "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n\
             [project]\nname = \"geo\"\n\n[project.optional-dependencies]\ndocs = [\"sphinx\"]\n\
             tests = [\n  \"pytest\",\n]\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
        );
        write(r, "src/geo/__init__.py", "");
        write(
            r,
            "src/geo/shapes.py",
            "def area(w, h):\n    return w * h\n",
        );
        write(r, "src/geo/util/helpers.py", "");
        write(r, "tests/test_shapes.py", "def test_area():\n    pass\n");
        write(r, "tests/requirements.txt", "hypothesis\n");
        write(r, "README.md", "# geo\n");
        let mut s = seed("geo", ".", Language::Python);
        s.include = vec!["src/geo/*.py".into()];
        let p = profile(r, &s).unwrap();
        assert_eq!(p.build_system, "hatch");
        assert_eq!(p.python_path, ["src"]);
        assert_eq!(p.source_files, ["src/geo/__init__.py", "src/geo/shapes.py"]);
        assert_eq!(p.test_files, ["tests/test_shapes.py"]);
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[tests]' && python -m pip install -r tests/requirements.txt")
        );
    }

    #[test]
    fn build_systems_from_pyproject() {
        for (backend, expected) in [
            ("setuptools.build_meta", "setuptools"),
            ("poetry.core.masonry.api", "poetry"),
            ("flit_core.buildapi", "flit"),
            ("hatchling.build", "hatch"),
            ("pdm.backend", "pdm"),
            ("maturin", "maturin"),
        ] {
            let root = tempfile::tempdir().unwrap();
            write(
                root.path(),
                "pyproject.toml",
                &format!("[build-system]\nbuild-backend = '{backend}'\n"),
            );
            write(root.path(), "test_x.py", "");
            let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
            assert_eq!(p.build_system, expected);
            assert_eq!(
                p.install_command.as_deref(),
                Some("python -m pip install .")
            );
        }
        // Tool configuration alone does not make a package; requirements do not either.
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "pyproject.toml",
            "[tool.black]\nline-length = 100\n",
        );
        write(root.path(), "requirements.txt", "requests\n");
        write(root.path(), "test_x.py", "");
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(p.build_system, "requirements");
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install -r requirements.txt")
        );
        std::fs::remove_file(root.path().join("requirements.txt")).unwrap();
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(p.build_system, "none");
        assert_eq!(p.install_command, None);
        // setup.cfg extras.
        write(root.path(), "setup.py", "");
        write(
            root.path(),
            "setup.cfg",
            "[options.extras_require]\ntesting =\n    pytest\n",
        );
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[testing]'")
        );
        // Only a development extra.
        write(
            root.path(),
            "setup.cfg",
            "[options.extras_require]
dev =
    pytest
",
        );
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[dev]'")
        );
    }

    #[test]
    fn light_toml_scan() {
        let text =
            "[project]\nname = 'x'\n  [project.optional-dependencies]\ndocs = [\n    \"sphinx\",\n\
                    [\"nested\"],\n]\ntest = ['pytest']\n[[tool.x]]\ntest = 1\n";
        let keys: Vec<String> = section_entries(text, "project.optional-dependencies")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["docs", "test"]);
        assert!(has_section(text, "tool.x"));
        assert_eq!(header_name("[\"a\", \"b\"],"), None);
        assert_eq!(
            header_name("[build-system] # comment"),
            Some("build-system")
        );
        let cfg = "[options.extras_require]\ndocs =\n    test==1.0\nci: tox\n";
        let keys: Vec<String> = section_entries(cfg, "options.extras_require")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["docs", "ci"]);
    }

    #[test]
    fn file_url_source() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let repo = Repository::init(&work).unwrap();
        flat_project(&work);
        let first = commit_all(&repo, "first", 1_000);
        let cache = tempfile::tempdir().unwrap();
        let url = format!("file://{}", work.display());
        let r = import(
            &seed("calc", &url, Language::Python),
            tmp.path(),
            cache.path(),
        )
        .unwrap();
        assert_eq!(r.commit, first.to_string());
        assert_eq!(r.source, url);
        assert_clean_detached(&r.checkout, &r.commit);
    }

    #[test]
    fn no_tests_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "calc/ops.py",
            "def add(a, b):\n    return a + b\n",
        );
        write(root.path(), "conftest.py", "");
        let err = profile(root.path(), &seed("calc", ".", Language::Python)).unwrap_err();
        assert!(matches!(err, ImportError::NoTests { .. }));
        let msg = err.to_string();
        assert!(
            msg.starts_with("seed `calc`: no test files found in "),
            "{msg}"
        );
        assert!(msg.contains("test_*.py"), "{msg}");
        // Through import as well.
        let cache = tempfile::tempdir().unwrap();
        let err = import(
            &seed("calc", root.path().to_str().unwrap(), Language::Python),
            Path::new("."),
            cache.path(),
        )
        .unwrap_err();
        assert!(matches!(err, ImportError::NoTests { .. }), "{err}");
    }

    #[test]
    fn profile_of_java_project() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(r, "pom.xml", "<project/>");
        write(r, "src/main/java/com/x/Calc.java", "class Calc {}");
        write(r, "src/test/java/com/x/CalcTest.java", "class CalcTest {}");
        write(r, "tools/Gen.java", "class Gen {}");
        write(r, "target/classes/Stale.java", "");
        let p = profile(r, &seed("calc", ".", Language::Java)).unwrap();
        assert_eq!(p.build_system, "maven");
        assert_eq!(p.test_framework, "junit");
        assert_eq!(p.source_files, ["src/main/java/com/x/Calc.java"]);
        assert_eq!(p.test_files, ["src/test/java/com/x/CalcTest.java"]);
        assert_eq!(p.install_command, None);
        assert!(p.python_path.is_empty());
        std::fs::remove_file(r.join("pom.xml")).unwrap();
        write(r, "build.gradle.kts", "");
        assert_eq!(
            profile(r, &seed("calc", ".", Language::Java))
                .unwrap()
                .build_system,
            "gradle"
        );
    }

    #[test]
    fn archives_unpack_and_refuse_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        // A .tar.gz with one top-level directory and an executable file.
        let tgz = tmp.path().join("p-1.0.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&tgz).unwrap(),
                flate2::Compression::default(),
            );
            let mut tar = tar::Builder::new(gz);
            for (path, mode, data) in [
                ("p-1.0/p.py", 0o644, &b"X = 1\n"[..]),
                ("p-1.0/bin/run", 0o755, b"#!/bin/sh\n"),
            ] {
                let mut header = tar::Header::new_gnu();
                header.set_size(data.len() as u64);
                header.set_mode(mode);
                header.set_cksum();
                tar.append_data(&mut header, path, data).unwrap();
            }
            tar.into_inner().unwrap().finish().unwrap();
        }
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let root = unpack(&tgz, &out).unwrap();
        assert_eq!(root, out.join("p-1.0"));
        assert_eq!(std::fs::read(root.join("p.py")).unwrap(), b"X = 1\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_ne!(
                std::fs::metadata(root.join("bin/run"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o111,
                0
            );
            assert_eq!(
                std::fs::metadata(root.join("p.py"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o111,
                0
            );
        }

        // A .tar.gz whose entry climbs out of the target (header written by hand: the tar
        // builder refuses such paths).
        let evil = tmp.path().join("evil.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&evil).unwrap(),
                flate2::Compression::default(),
            );
            let mut tar = tar::Builder::new(gz);
            let mut header = tar::Header::new_old();
            let name = b"../escaped.txt";
            header.as_old_mut().name[..name.len()].copy_from_slice(name);
            header.set_size(2);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            header.set_cksum();
            tar.append(&header, &b"hi"[..]).unwrap();
            tar.into_inner().unwrap().finish().unwrap();
        }
        let out = tmp.path().join("out2");
        std::fs::create_dir(&out).unwrap();
        let err = unpack(&evil, &out).unwrap_err();
        assert!(err.contains("outside the archive"), "{err}");
        assert!(!tmp.path().join("escaped.txt").exists());

        // A .zip with the same trick.
        let zip_path = tmp.path().join("evil.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.start_file("q-1.0/q.py", options).unwrap();
            io::Write::write_all(&mut zip, b"Y = 2\n").unwrap();
            zip.start_file("../escaped.txt", options).unwrap();
            io::Write::write_all(&mut zip, b"hi").unwrap();
            zip.finish().unwrap();
        }
        let out = tmp.path().join("out3");
        std::fs::create_dir(&out).unwrap();
        let err = unpack(&zip_path, &out).unwrap_err();
        assert!(err.contains("outside the archive"), "{err}");
        assert!(!tmp.path().join("escaped.txt").exists());
    }

    #[test]
    fn zip_with_single_top_directory_is_stripped() {
        let tmp = tempfile::tempdir().unwrap();
        let zip_path = tmp.path().join("q-1.0.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.add_directory("q-1.0/", options).unwrap();
            zip.start_file("q-1.0/q.py", options).unwrap();
            io::Write::write_all(&mut zip, b"Y = 2\n").unwrap();
            zip.start_file("q-1.0/test_q.py", options.unix_permissions(0o755))
                .unwrap();
            io::Write::write_all(&mut zip, b"").unwrap();
            zip.finish().unwrap();
        }
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let root = unpack(&zip_path, &out).unwrap();
        assert_eq!(root, out.join("q-1.0"));
        assert_eq!(std::fs::read(root.join("q.py")).unwrap(), b"Y = 2\n");
    }

    /// Downloads `six==1.16.0` from PyPI with pip (needs the network).
    #[test]
    fn sdist_import_is_stable() {
        let (cache1, cache2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = seed("six", "pypi:six==1.16.0", Language::Python);
        let a = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_eq!(a.source, "pypi:six==1.16.0");
        assert!(a.checkout.join("six.py").is_file());
        assert!(
            a.profile.test_files.contains(&"test_six.py".to_string()),
            "{:?}",
            a.profile
        );
        assert!(
            a.profile.source_files.contains(&"six.py".to_string()),
            "{:?}",
            a.profile
        );
        assert!(!a.profile.source_files.contains(&"setup.py".to_string()));
        assert_clean_detached(&a.checkout, &a.commit);
        // Second import in the same cache uses the downloaded archive.
        let again = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_eq!(again.commit, a.commit);
        // A fresh cache downloads again and gets the same commit.
        let b = import(&s, Path::new("."), cache2.path()).unwrap();
        assert_eq!(b.commit, a.commit);
    }
}
