//! Unit tests of import's handling of bad sources, and the fixtures the other modules' tests
//! share.

use super::*;
use crate::lang::Language;
use crate::toolchain::import;
use git2::Repository;

pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub(crate) fn seed(name: &str, source: &str, language: Language) -> Seed {
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
pub(crate) fn flat_project(root: &Path) {
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

pub(crate) fn assert_clean_detached(checkout: &Path, commit: &str) {
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
