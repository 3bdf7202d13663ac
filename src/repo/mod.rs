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
//!
//! Files: `git.rs` (mirrors of git sources, the pinned commit's checkout), `dir.rs` (a plain
//! directory committed as one commit), `sdist.rs` (PyPI sdists: download and safe unpacking),
//! `profile.rs` (what an imported tree is made of), `python.rs` (a Python project's build
//! system, install command and import path).

mod dir;
mod git;
mod profile;
mod sdist;
#[cfg(test)]
pub(crate) mod tests;

pub use profile::{profile, source_files, Profile, Profiler};

use crate::seed::{Seed, SeedError, Source};
use dir::commit_dir;
use git::{ensure_checkout, mirror_git};
use sdist::{download_sdist, unpack};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};
use tracing::warn;

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

impl Repo {
    /// A repository that exists only as a record (tests of recipes and templates): commit
    /// `a…a`, nothing on disk, the profile's files empty.
    #[cfg(test)]
    pub(crate) fn sample(
        name: &str,
        language: crate::lang::Language,
        build_system: &str,
        framework: &str,
    ) -> Repo {
        let seed: Seed = serde_yaml::from_str(&format!(
            "name: {name}\nsource: {name}\nlanguage: {}\n",
            language.name()
        ))
        .expect("a sample seed parses");
        Repo {
            name: name.into(),
            seed,
            source: name.into(),
            commit: "a".repeat(40),
            mirror: PathBuf::from("/nonexistent"),
            checkout: PathBuf::from("/nonexistent"),
            profile: Profile {
                language,
                build_system: build_system.into(),
                test_framework: framework.into(),
                source_files: vec![],
                test_files: vec![],
                install_command: None,
                python_path: vec![],
                packages: vec![],
                packages_reason: String::new(),
            },
        }
    }
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
    #[error("seed `{seed}`: no test files found in {} ({rule})", root.display())]
    NoTests {
        seed: String,
        root: PathBuf,
        /// What counts as a test file in the seed's language (its profiler's rule).
        rule: &'static str,
    },
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
/// profile it with `profiler` (its language's: `crate::toolchain::import` picks it).
/// Relative local sources resolve against `base_dir` (the manifest's directory). Imports are
/// idempotent: a second call reuses the mirror, the download and a clean checkout.
pub fn import(
    seed: &Seed,
    base_dir: &Path,
    cache: &Path,
    profiler: &dyn Profiler,
) -> Result<Repo, ImportError> {
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
    let profile = profile(&checkout, seed, profiler)?;
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
