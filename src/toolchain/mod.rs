//! Toolchain: what building and testing one language with one test framework takes (the
//! projects it accepts, its runners, the test command a record names, how test ids map to
//! files, whether tests are synthesized). The pipeline, audit and training get these here and
//! nowhere else; a new language or framework is one more module beside these.

pub mod java_maven;
pub mod python_pytest;

use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::Profile;
use crate::runner::TestRunner;
use crate::sandbox::{SandboxKind, Worker};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A language with its test framework (and build tool), as task records name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolchainId {
    /// Python tested with pytest (unittest and doctest suites run under pytest too).
    PythonPytest,
    /// Java built with Maven and tested with JUnit through Surefire.
    JavaMaven,
}

impl ToolchainId {
    /// Every toolchain, in registry order.
    pub const ALL: [ToolchainId; 2] = [ToolchainId::PythonPytest, ToolchainId::JavaMaven];

    /// `python_pytest`, `java_maven`: as records and logs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolchainId::PythonPytest => "python_pytest",
            ToolchainId::JavaMaven => "java_maven",
        }
    }

    /// The toolchain itself.
    pub fn toolchain(self) -> &'static dyn Toolchain {
        match self {
            ToolchainId::PythonPytest => &python_pytest::PythonPytest,
            ToolchainId::JavaMaven => &java_maven::JavaMaven,
        }
    }

    /// The toolchain a record written before records named theirs used: the only one its
    /// language had. `None` for the languages that came later (JavaScript, TypeScript): their
    /// records always name theirs.
    pub fn default_for(language: Language) -> Option<ToolchainId> {
        match language {
            Language::Python => Some(ToolchainId::PythonPytest),
            Language::Java => Some(ToolchainId::JavaMaven),
            Language::JavaScript | Language::TypeScript => None,
        }
    }
}

impl std::fmt::Display for ToolchainId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why no toolchain builds and tests a project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// The toolchain for an imported project: its language, test framework and build system.
pub fn for_profile(profile: &Profile) -> Result<&'static dyn Toolchain, Unsupported> {
    let mut why = Vec::new();
    for id in ToolchainId::ALL {
        let tc = id.toolchain();
        if tc.language() != profile.language {
            continue;
        }
        match tc.accepts(profile) {
            Ok(()) => return Ok(tc),
            Err(e) => why.push(e.0),
        }
    }
    Err(Unsupported(if why.is_empty() {
        format!(
            "no toolchain builds and tests {} projects",
            profile.language.name()
        )
    } else {
        why.join("; ")
    }))
}

/// The plain values a runner is made from (no run or audit configuration).
#[derive(Clone, Debug)]
pub struct RunnerSpec {
    /// The sandbox the runner's commands run in.
    pub sandbox: SandboxKind,
    /// swe-forge's cache directory (builds kept outside a worker's scratch directory).
    pub cache: PathBuf,
    /// Where runs leave their logs, if anywhere.
    pub log_dir: Option<PathBuf>,
    /// The project's own test command; `None`: the framework's default.
    pub test_command: Option<String>,
    /// The repository's test files (ids a report leaves incomplete are rebuilt from them).
    pub test_files: Vec<String>,
    /// Source roots, repository-relative (Python's import roots, measured by coverage).
    pub source_roots: Vec<String>,
    /// Test ids a baseline reported (how many tests each file holds); empty before one.
    pub known_tests: Vec<String>,
}

impl RunnerSpec {
    /// A spec for a sandbox of `kind` with the cache at `cache`, nothing else known.
    pub fn new(sandbox: SandboxKind, cache: impl Into<PathBuf>) -> RunnerSpec {
        RunnerSpec {
            sandbox,
            cache: cache.into(),
            log_dir: None,
            test_command: None,
            test_files: Vec::new(),
            source_roots: Vec::new(),
            known_tests: Vec::new(),
        }
    }
}

/// One language with one test framework.
pub trait Toolchain: Send + Sync {
    fn id(&self) -> ToolchainId;

    fn language(&self) -> Language;

    /// Whether this toolchain builds and tests the project; `Err` says why not (a Java
    /// project without Maven, say).
    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported>;

    /// A runner that starts fresh processes for every run.
    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner>;

    /// The test command a task record names (what a harness runs).
    fn test_command(&self, spec: &RunnerSpec) -> String;

    /// A resident runner (one warm process per worker) where it gives the fresh baseline's
    /// per-test outcomes; `Err` says why not. Checked on `worker` against `baseline`.
    fn resident(
        &self,
        spec: &RunnerSpec,
        worker: &mut dyn Worker,
        baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String>;

    /// The repository file a test id's test lives in, given the repository's test files.
    fn test_file(&self, id: &str, test_files: &[String]) -> Option<String>;

    /// Whether a test can be synthesized for a candidate no existing test kills.
    fn synthesizes_tests(&self) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(language: Language, build_system: &str, framework: &str) -> Profile {
        Profile {
            language,
            build_system: build_system.into(),
            test_framework: framework.into(),
            source_files: vec![],
            test_files: vec![],
            install_command: None,
            python_path: vec![],
            packages: vec![],
            packages_reason: String::new(),
        }
    }

    #[test]
    fn the_profile_chooses_the_toolchain() {
        let py = for_profile(&profile(Language::Python, "setuptools", "pytest")).unwrap();
        assert_eq!(py.id(), ToolchainId::PythonPytest);
        let java = for_profile(&profile(Language::Java, "maven", "junit")).unwrap();
        assert_eq!(java.id(), ToolchainId::JavaMaven);
        let gradle = for_profile(&profile(Language::Java, "gradle", "junit"))
            .err()
            .unwrap();
        assert!(gradle.0.contains("gradle"), "{gradle}");
        assert!(gradle.0.contains("Maven"), "{gradle}");
    }

    #[test]
    fn ids_round_trip_as_snake_case() {
        for id in ToolchainId::ALL {
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, format!("\"{}\"", id.as_str()));
            assert_eq!(serde_json::from_str::<ToolchainId>(&json).unwrap(), id);
            assert_eq!(id.toolchain().id(), id);
            assert_eq!(
                ToolchainId::default_for(id.toolchain().language()),
                Some(id)
            );
        }
    }

    #[test]
    fn test_ids_map_to_their_files() {
        let files = vec![
            "tests/test_money.py".to_string(),
            "src/test/java/com/shelf/MoneyTest.java".to_string(),
        ];
        let py = ToolchainId::PythonPytest.toolchain();
        assert_eq!(
            py.test_file("tests/test_money.py::TestX::test_add[a::b]", &files),
            Some("tests/test_money.py".to_string())
        );
        assert_eq!(py.test_file("garbage", &files), None);
        let java = ToolchainId::JavaMaven.toolchain();
        assert_eq!(
            java.test_file("com.shelf.MoneyTest#addsUp", &files),
            Some("src/test/java/com/shelf/MoneyTest.java".to_string())
        );
        assert_eq!(java.test_file("com.shelf.OtherTest#x", &files), None);
    }

    #[test]
    fn runners_and_commands_follow_the_spec() {
        let mut spec = RunnerSpec::new(SandboxKind::Local, "/cache");
        spec.test_command = Some("python -m pytest -x".into());
        assert_eq!(
            ToolchainId::PythonPytest.toolchain().test_command(&spec),
            "python -m pytest -x"
        );
        spec.test_command = None;
        assert_eq!(
            ToolchainId::PythonPytest.toolchain().test_command(&spec),
            "python -m pytest"
        );
        assert_eq!(
            ToolchainId::JavaMaven.toolchain().test_command(&spec),
            "mvn -o -B test"
        );
    }
}
