//! Seeds: the YAML manifest that lists repositories to import, its types and loading.
//!
//! A manifest is checked as a whole when it is loaded: YAML shape, names, globs and sources.
//! Errors name the file and the key at fault.

use crate::lang::Language;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A manifest file: `seeds:` followed by a list of seeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub seeds: Vec<Seed>,
    /// Directory of the manifest file; relative local sources resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// Path of the manifest file, for error messages.
    #[serde(skip)]
    pub path: PathBuf,
}

/// One repository to import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    /// Short unique name (letters, digits, `-`, `_`, `.`); used in ids and paths.
    pub name: String,
    /// Where it comes from: a git URL (`https://…`, `ssh://…`, `git@…`, `file://…`), a local
    /// path (git repository or plain directory, relative to the manifest), or `pypi:NAME==VERSION`.
    pub source: String,
    /// Commit, tag or branch for git sources (default: HEAD). Ignored for directories and sdists.
    #[serde(default)]
    pub revision: Option<String>,
    pub language: Language,
    /// Shell command that installs the project's dependencies into the environment (run at the
    /// repository root inside the sandbox's environment). Inferred when absent.
    #[serde(default)]
    pub install: Option<String>,
    /// Test command override (default: the framework's runner).
    #[serde(default)]
    pub test: Option<String>,
    /// Globs (repository-relative) restricting which source files are mutated: `*` stays within
    /// one directory, `**` crosses directories. No include globs means every source file.
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    /// `owner/name` for the task records' `repo` field, where the source does not tell it (a
    /// git URL does: `https://host/owner/name.git` → `owner/name`). Default: the seed name.
    #[serde(default)]
    pub repo: Option<String>,
}

/// Why a manifest or one of its seeds is unusable. Every message starts with where the fault
/// is: the manifest file and the key (`seeds/x.yaml: seeds[1].source: …`), or the seed name
/// when the seed is checked on its own (`seed `six`: source: …`).
#[derive(thiserror::Error, Debug)]
pub enum SeedError {
    /// The manifest file could not be read (missing, unreadable).
    #[error("{}: cannot read manifest: {error}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// Malformed YAML, an unknown key, a missing key or a value of the wrong type. The message
    /// is serde_yaml's, which starts with the key path (`seeds[1].language: …`).
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    /// A source with a scheme swe-forge does not know (`ftp://…`, `svn:…`).
    #[error(
        "{at}: unknown source `{given}` (expected a git URL, a local path or pypi:NAME==VERSION)"
    )]
    UnknownSource { at: String, given: String },
    /// A `pypi:` source that is not `pypi:NAME==VERSION`.
    #[error("{at}: invalid PyPI source `{given}`: {reason} (expected pypi:NAME==VERSION)")]
    BadSdist {
        at: String,
        given: String,
        reason: String,
    },
    /// A local source path that does not exist.
    #[error("{at}: local source `{given}` does not exist (resolved to {})", resolved.display())]
    MissingSource {
        at: String,
        given: String,
        resolved: PathBuf,
    },
    /// A local source path that exists but is neither a directory nor a git repository, or
    /// cannot be inspected.
    #[error("{at}: local source `{given}` is unusable: {reason}")]
    BadLocalSource {
        at: String,
        given: String,
        reason: String,
    },
    /// A seed name used twice in one manifest.
    #[error("{at}: duplicate seed name `{name}` (already used by seeds[{first}])")]
    DuplicateName {
        at: String,
        name: String,
        first: usize,
    },
    /// A seed name with characters that cannot go into ids and paths.
    #[error("{at}: invalid seed name `{name}` (use letters, digits, `-`, `_` and `.`, starting with a letter or digit)")]
    BadName { at: String, name: String },
    /// A `repo:` that is not `owner/name`.
    #[error("{at}: invalid repo `{repo}` (use `owner/name`)")]
    BadRepo { at: String, repo: String },
    /// An include/exclude glob that does not compile.
    #[error("{at}: invalid glob `{glob}`: {reason}")]
    BadGlob {
        at: String,
        glob: String,
        reason: String,
    },
}

/// Where a seed's code comes from, as decided by [`Seed::resolve_source`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A URL git can fetch: `https://`, `http://`, `ssh://`, `git://`, `file://` or `git@host:path`.
    GitUrl(String),
    /// A local git repository (working tree or bare), canonical path.
    LocalGit(PathBuf),
    /// A local directory that is not a git repository, canonical path.
    LocalDir(PathBuf),
    /// A source distribution from PyPI.
    Sdist { name: String, version: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::GitUrl(url) => f.write_str(url),
            Source::LocalGit(p) | Source::LocalDir(p) => write!(f, "{}", p.display()),
            Source::Sdist { name, version } => write!(f, "pypi:{name}=={version}"),
        }
    }
}

/// URL schemes that git2 is asked to fetch.
const GIT_SCHEMES: [&str; 5] = ["https", "http", "ssh", "git", "file"];

/// Read and check a manifest file. See [`parse_manifest`].
pub fn load_manifest(path: &Path) -> Result<Manifest, SeedError> {
    let text = std::fs::read_to_string(path).map_err(|error| SeedError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    parse_manifest(&text, path)
}

/// Parse and check manifest text. `path` names the file in messages, and its directory becomes
/// [`Manifest::base_dir`], against which relative local sources resolve.
///
/// Checks, in order of the seeds: the YAML shape (unknown keys, types, enum values), names
/// (characters, duplicates), globs, and sources (scheme known, local paths exist). The first
/// fault is returned.
pub fn parse_manifest(text: &str, path: &Path) -> Result<Manifest, SeedError> {
    let mut manifest: Manifest = serde_yaml::from_str(text).map_err(|e| SeedError::Parse {
        path: path.to_path_buf(),
        // serde_yaml explains a non-string enum value in terms of YAML tags; the only enum in
        // a manifest is the language, so say what is expected instead.
        message: e.to_string().replace(
            "expected a YAML tag starting with '!'",
            "expected a language name (python, java, javascript or typescript)",
        ),
    })?;
    manifest.path = path.to_path_buf();
    manifest.base_dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, seed) in manifest.seeds.iter().enumerate() {
        let at = |key: &str| format!("{}: seeds[{i}].{key}", path.display());
        if !valid_name(&seed.name) {
            return Err(SeedError::BadName {
                at: at("name"),
                name: seed.name.clone(),
            });
        }
        if let Some(&first) = seen.get(seed.name.as_str()) {
            return Err(SeedError::DuplicateName {
                at: at("name"),
                name: seed.name.clone(),
                first,
            });
        }
        seen.insert(&seed.name, i);
        for (key, globs) in [("include", &seed.include), ("exclude", &seed.exclude)] {
            for (j, glob) in globs.iter().enumerate() {
                if let Err(e) = globset::Glob::new(glob) {
                    return Err(SeedError::BadGlob {
                        at: at(&format!("{key}[{j}]")),
                        glob: glob.clone(),
                        reason: e.kind().to_string(),
                    });
                }
            }
        }
        if let Some(r) = &seed.repo {
            if !valid_repo(r) {
                return Err(SeedError::BadRepo {
                    at: at("repo"),
                    repo: r.clone(),
                });
            }
        }
        seed.resolve_source_at(&manifest.base_dir, &at("source"))?;
    }
    Ok(manifest)
}

/// The directory a record's relative `source` is relative to: the directory of the file the
/// record was read from when the source is there, else the embedded demo seeds' directory
/// (extracted into `cache`) when it names one of them, else `near`'s directory.
pub fn record_base_dir(source: &str, near: &Path, cache: &Path) -> PathBuf {
    let near_dir = near
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let s = Path::new(source.trim());
    if s.is_absolute() || scheme_of(source.trim()).is_some() || is_scp_like(source.trim()) {
        return near_dir;
    }
    if near_dir.join(s).exists() {
        return near_dir;
    }
    if let Ok(demo) = crate::assets::demo_manifest(cache) {
        if let Some(dir) = demo.parent() {
            if dir.join(s).exists() {
                return dir.to_path_buf();
            }
        }
    }
    near_dir
}

/// `owner/name`: two non-empty parts of letters, digits, `-`, `_`, `.`.
fn valid_repo(r: &str) -> bool {
    let mut parts = r.split('/');
    let ok = |p: Option<&str>| {
        p.is_some_and(|p| !p.is_empty() && p != "." && p != ".." && valid_name(p))
    };
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// `owner/name` from a git URL's last two path parts (`.git` dropped), if it has them.
pub fn repo_from_url(url: &str) -> Option<String> {
    let path = if is_scp_like(url) {
        url.split_once(':')?.1
    } else {
        let rest = url.split_once("://")?.1;
        rest.split_once('/')?.1
    };
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut parts = path.rsplit('/');
    let name = parts.next()?;
    let owner = parts.next()?;
    let r = format!("{owner}/{name}");
    valid_repo(&r).then_some(r)
}

/// Letters, digits, `-`, `_`, `.`; starts with a letter or digit (so never `.` or `..`).
fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The scheme of `s` when it starts with `scheme:` (RFC 3986 characters, at least two of them,
/// so a Windows drive letter is not a scheme).
fn scheme_of(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once(':')?;
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_ok && rest_ok && scheme.len() >= 2).then_some(scheme)
}

/// `git@host:path`, the scp-like form git understands for ssh.
fn is_scp_like(s: &str) -> bool {
    s.strip_prefix("git@")
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(host, path)| !host.is_empty() && !host.contains('/') && !path.is_empty())
}

/// Split `NAME==VERSION` of a `pypi:` source.
fn parse_sdist(spec: &str) -> Result<(String, String), String> {
    let Some((name, version)) = spec.split_once("==") else {
        return Err("missing `==VERSION`".to_string());
    };
    let (name, version) = (name.trim(), version.trim());
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name_ok {
        return Err(format!("bad project name `{name}`"));
    }
    let version_ok = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '!'));
    if !version_ok {
        return Err(format!("bad version `{version}`"));
    }
    Ok((name.to_string(), version.to_string()))
}

impl Seed {
    /// The task records' `repo`: the manifest's `repo:`, else `owner/name` of a git URL
    /// source, else the seed name.
    pub fn repo_name(&self) -> String {
        if let Some(r) = &self.repo {
            return r.clone();
        }
        let given = self.source.trim();
        let is_url = is_scp_like(given)
            || scheme_of(given)
                .is_some_and(|s| GIT_SCHEMES.contains(&s.to_ascii_lowercase().as_str()));
        if is_url {
            if let Some(r) = repo_from_url(given) {
                return r;
            }
        }
        self.name.clone()
    }

    /// Decide where this seed comes from. Local paths are resolved against `base_dir` (the
    /// manifest's directory), must exist, and come back canonical. Errors name the seed.
    pub fn resolve_source(&self, base_dir: &Path) -> Result<Source, SeedError> {
        self.resolve_source_at(base_dir, &format!("seed `{}`: source", self.name))
    }

    /// [`Seed::resolve_source`] with `at` (file and key, or seed name) in front of errors.
    fn resolve_source_at(&self, base_dir: &Path, at: &str) -> Result<Source, SeedError> {
        let given = self.source.trim();
        let unknown = || SeedError::UnknownSource {
            at: at.to_string(),
            given: self.source.clone(),
        };
        if given.is_empty() {
            return Err(unknown());
        }
        if is_scp_like(given) {
            return Ok(Source::GitUrl(given.to_string()));
        }
        if let Some(scheme) = scheme_of(given) {
            let lower = scheme.to_ascii_lowercase();
            if lower == "pypi" {
                let (name, version) =
                    parse_sdist(&given[scheme.len() + 1..]).map_err(|reason| {
                        SeedError::BadSdist {
                            at: at.to_string(),
                            given: self.source.clone(),
                            reason,
                        }
                    })?;
                return Ok(Source::Sdist { name, version });
            }
            if GIT_SCHEMES.contains(&lower.as_str()) && given[scheme.len() + 1..].starts_with("//")
            {
                return Ok(Source::GitUrl(given.to_string()));
            }
            return Err(unknown());
        }
        let resolved = base_dir.join(given);
        let bad = |reason: String| SeedError::BadLocalSource {
            at: at.to_string(),
            given: self.source.clone(),
            reason,
        };
        let meta = match std::fs::metadata(&resolved) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SeedError::MissingSource {
                    at: at.to_string(),
                    given: self.source.clone(),
                    resolved,
                })
            }
            Err(e) => return Err(bad(e.to_string())),
        };
        if !meta.is_dir() {
            return Err(bad("not a directory".to_string()));
        }
        let canonical = std::fs::canonicalize(&resolved).map_err(|e| bad(e.to_string()))?;
        // `Repository::open` does not search parent directories: a plain subdirectory of some
        // other repository stays a plain directory.
        if git2::Repository::open(&canonical).is_ok() {
            Ok(Source::LocalGit(canonical))
        } else {
            Ok(Source::LocalDir(canonical))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, SeedError> {
        parse_manifest(text, Path::new("seeds/x.yaml"))
    }

    fn err(text: &str) -> String {
        parse(text)
            .expect_err("manifest should be rejected")
            .to_string()
    }

    #[test]
    fn valid_manifest_parses_with_defaults() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(
            &path,
            "seeds:\n  - name: six\n    source: pypi:six==1.16.0\n    language: python\n  \
             - name: local.proj_1\n    source: proj\n    language: java\n    revision: v1\n    \
             include: ['src/**/*.py']\n    exclude: ['**/vendor/**']\n    install: make deps\n  \
             - name: remote\n    source: https://example.com/r.git\n    language: python\n",
        )
        .unwrap();
        let m = load_manifest(&path).unwrap();
        assert_eq!(m.path, path);
        assert_eq!(m.base_dir, dir.path());
        assert_eq!(m.seeds.len(), 3);
        assert_eq!(m.seeds[0].revision, None);
        assert!(m.seeds[0].include.is_empty());
        assert_eq!(m.seeds[1].language, Language::Java);
        assert_eq!(m.seeds[1].install.as_deref(), Some("make deps"));
        assert_eq!(
            m.seeds[0].resolve_source(&m.base_dir).unwrap(),
            Source::Sdist {
                name: "six".into(),
                version: "1.16.0".into()
            }
        );
        let canonical = std::fs::canonicalize(dir.path().join("proj")).unwrap();
        assert_eq!(
            m.seeds[1].resolve_source(&m.base_dir).unwrap(),
            Source::LocalDir(canonical)
        );
        assert_eq!(
            m.seeds[2].resolve_source(&m.base_dir).unwrap(),
            Source::GitUrl("https://example.com/r.git".into())
        );
    }

    #[test]
    fn base_dir_of_bare_file_name_is_dot() {
        let m = parse_manifest("seeds: []\n", Path::new("m.yaml")).unwrap();
        assert_eq!(m.base_dir, PathBuf::from("."));
    }

    #[test]
    fn malformed_yaml_names_file() {
        let msg = err("seeds:\n  - name: a\n    source: [unclosed\n    language: python\n");
        assert!(msg.starts_with("seeds/x.yaml: "), "{msg}");
        assert!(msg.contains("line "), "{msg}");
        let msg = err("seeds: {\n");
        assert!(msg.starts_with("seeds/x.yaml: "), "{msg}");
    }

    #[test]
    fn unknown_key_names_file_and_key() {
        let msg = err("seeds:\n  - name: a\n    source: https://h/r.git\n    language: python\n  \
                       - name: b\n    source: https://h/r.git\n    language: python\n    colour: red\n");
        assert!(msg.starts_with("seeds/x.yaml: seeds[1]"), "{msg}");
        assert!(msg.contains("colour"), "{msg}");
    }

    #[test]
    fn wrong_language_names_file_and_key() {
        let msg = err(
            "seeds:\n  - name: a\n    source: https://h/r.git\n    language: python\n  \
                       - name: b\n    source: https://h/r.git\n    language: rust\n",
        );
        assert!(
            msg.starts_with("seeds/x.yaml: seeds[1].language: unknown variant `rust`"),
            "{msg}"
        );
        let msg = err("seeds:\n  - name: a\n    source: https://h/r.git\n    language: [python]\n");
        assert!(
            msg.starts_with("seeds/x.yaml: seeds[0].language: "),
            "{msg}"
        );
        assert!(
            msg.contains("python, java, javascript or typescript"),
            "{msg}"
        );
    }

    #[test]
    fn missing_key_names_file() {
        let msg = err("seeds:\n  - name: a\n    language: python\n");
        assert!(msg.starts_with("seeds/x.yaml: seeds[0]"), "{msg}");
        assert!(msg.contains("source"), "{msg}");
    }

    #[test]
    fn unknown_source_scheme() {
        let msg = err("seeds:\n  - name: a\n    source: ftp://x\n    language: python\n");
        assert_eq!(
            msg,
            "seeds/x.yaml: seeds[0].source: unknown source `ftp://x` \
             (expected a git URL, a local path or pypi:NAME==VERSION)"
        );
        let msg = err("seeds:\n  - name: a\n    source: 'https:x'\n    language: python\n");
        assert!(msg.contains("unknown source `https:x`"), "{msg}");
    }

    #[test]
    fn git_url_forms() {
        let dir = tempfile::tempdir().unwrap();
        for url in [
            "https://github.com/a/b.git",
            "http://h/r",
            "ssh://git@h/r.git",
            "git://h/r",
            "file:///srv/r.git",
            "git@github.com:a/b.git",
        ] {
            let seed = Seed {
                source: url.into(),
                ..seed_named("s")
            };
            assert_eq!(
                seed.resolve_source(dir.path()).unwrap(),
                Source::GitUrl(url.into()),
                "{url}"
            );
        }
    }

    #[test]
    fn repo_names_come_from_the_manifest_or_the_url() {
        let s = |source: &str, repo: Option<&str>| Seed {
            source: source.into(),
            repo: repo.map(String::from),
            ..seed_named("s")
        };
        assert_eq!(s("https://github.com/a/b.git", None).repo_name(), "a/b");
        assert_eq!(s("git@github.com:a/b.git", None).repo_name(), "a/b");
        assert_eq!(s("file:///srv/r.git", None).repo_name(), "srv/r");
        assert_eq!(s("pypi:six==1.16.0", None).repo_name(), "s");
        assert_eq!(
            s("pypi:six==1.16.0", Some("benjaminp/six")).repo_name(),
            "benjaminp/six"
        );
        assert_eq!(s("dir", None).repo_name(), "s");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "seeds:\n  - name: a\n    source: pypi:six==1.16.0\n    language: python\n    repo: no-slash\n").unwrap();
        let e = load_manifest(&path).unwrap_err().to_string();
        assert!(
            e.contains("seeds[0].repo") && e.contains("owner/name"),
            "{e}"
        );
    }

    #[test]
    fn bad_sdist_spec() {
        let msg = err("seeds:\n  - name: a\n    source: pypi:six\n    language: python\n");
        assert!(
            msg.starts_with("seeds/x.yaml: seeds[0].source: invalid PyPI source `pypi:six`"),
            "{msg}"
        );
    }

    #[test]
    fn missing_local_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        let text = "seeds:\n  - name: a\n    source: ./nowhere\n    language: python\n";
        let msg = parse_manifest(text, &path).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!(
                "{}: seeds[0].source: local source `./nowhere` does not exist",
                path.display()
            )),
            "{msg}"
        );
        let e = seed_named("a")
            .resolve_source(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("seed `a`: source: local source `./nowhere`"),
            "{e}"
        );
    }

    #[test]
    fn local_git_repository_detected() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path().join("work")).unwrap();
        git2::Repository::init_bare(dir.path().join("bare.git")).unwrap();
        std::fs::create_dir(dir.path().join("work/sub")).unwrap();
        let at = |p: &str| std::fs::canonicalize(dir.path().join(p)).unwrap();
        let src = |s: &str| {
            Seed {
                source: s.into(),
                ..seed_named("a")
            }
            .resolve_source(dir.path())
            .unwrap()
        };
        assert_eq!(src("work"), Source::LocalGit(at("work")));
        assert_eq!(src("bare.git"), Source::LocalGit(at("bare.git")));
        assert_eq!(src("work/sub"), Source::LocalDir(at("work/sub")));
        let abs = at("work");
        assert_eq!(src(abs.to_str().unwrap()), Source::LocalGit(abs.clone()));
    }

    #[test]
    fn duplicate_names() {
        let msg = err(
            "seeds:\n  - name: a\n    source: https://h/r\n    language: python\n  \
                       - name: a\n    source: https://h/s\n    language: python\n",
        );
        assert_eq!(
            msg,
            "seeds/x.yaml: seeds[1].name: duplicate seed name `a` (already used by seeds[0])"
        );
    }

    #[test]
    fn bad_names() {
        for name in ["", "../up", ".hidden", "a b", "a/b"] {
            let text = format!(
                "seeds:\n  - name: '{name}'\n    source: https://h/r\n    language: python\n"
            );
            let msg = err(&text);
            assert!(
                msg.starts_with("seeds/x.yaml: seeds[0].name: invalid seed name"),
                "{msg}"
            );
        }
    }

    #[test]
    fn bad_glob() {
        let msg = err("seeds:\n  - name: a\n    source: https://h/r\n    language: python\n    exclude: ['a[']\n");
        assert!(
            msg.starts_with("seeds/x.yaml: seeds[0].exclude[0]: invalid glob `a[`"),
            "{msg}"
        );
    }

    #[test]
    fn missing_file() {
        let msg = load_manifest(Path::new("/nonexistent/seeds.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("/nonexistent/seeds.yaml: cannot read manifest"),
            "{msg}"
        );
    }

    fn seed_named(name: &str) -> Seed {
        Seed {
            name: name.into(),
            source: "./nowhere".into(),
            revision: None,
            language: Language::Python,
            install: None,
            test: None,
            include: vec![],
            exclude: vec![],
            repo: None,
        }
    }
}
