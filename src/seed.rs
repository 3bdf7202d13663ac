//! Seeds: the YAML manifest that lists repositories to import, its types and loading.
//!
//! OWNER NOTE (skeleton): types are the contract; loading/validation is filled in by the import work.

use crate::lang::Language;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
    /// Globs (repository-relative) restricting which source files are mutated.
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}
