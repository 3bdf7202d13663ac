//! Git sources: a bare mirror per URL or local repository (branches and tags, fetched again
//! unless the pinned commit is present), the seed's revision resolved in it, and a clean
//! checkout of the pinned commit.

use super::{publish, staging_dir, Ctx, ImportError};
use crate::seed::Seed;
use git2::{Oid, Repository};
use std::io;
use std::path::{Path, PathBuf};
use tracing::{info, warn};

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
pub(super) fn mirror_git(
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
pub(super) fn ensure_checkout(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;
    use crate::repo::tests::{assert_clean_detached, flat_project, seed, write};
    use crate::repo::ImportError;
    use crate::toolchain::import;

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
}
