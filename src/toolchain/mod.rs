//! Toolchain: what building and testing one language with one test framework takes (the
//! projects it accepts, its runners, the test command a record names, how test ids map to
//! files, whether tests are synthesized). The pipeline, audit and training get these here and
//! nowhere else; a new language or framework is one more module beside these.

pub mod java;
pub mod java_maven;
pub mod javascript_jest;
pub mod javascript_mocha;
pub mod javascript_node_test;
pub mod maven_overlay;
pub mod node;
pub mod python;
pub mod python_pytest;
mod python_wheelhouse;

use crate::baseline::Baseline;
use crate::grading::Grading;
use crate::lang::Language;
use crate::repo::{ImportError, Profile, Profiler, Repo};
use crate::runner::TestRunner;
use crate::sandbox::recipe::{BaseRecipe, EnvRecipe, TaskLayer};
use crate::sandbox::{Environment, Sandbox, SandboxError, SandboxKind, Worker};
use crate::seed::Seed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

/// A language with its test framework (and build tool), as task records name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolchainId {
    /// Python tested with pytest (unittest and doctest suites run under pytest too).
    PythonPytest,
    /// Java built with Maven and tested with JUnit through Surefire.
    JavaMaven,
    /// JavaScript tested with jest.
    JavascriptJest,
    /// JavaScript tested with mocha.
    JavascriptMocha,
    /// JavaScript tested with node's built-in test runner (`node --test`).
    JavascriptNodeTest,
    /// TypeScript tested with jest (ts-jest, or the project's own transform).
    TypescriptJest,
}

impl ToolchainId {
    /// Every toolchain, in registry order.
    pub const ALL: [ToolchainId; 6] = [
        ToolchainId::PythonPytest,
        ToolchainId::JavaMaven,
        ToolchainId::JavascriptJest,
        ToolchainId::JavascriptMocha,
        ToolchainId::JavascriptNodeTest,
        ToolchainId::TypescriptJest,
    ];

    /// `python_pytest`, `java_maven`, `javascript_jest`: as records and logs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolchainId::PythonPytest => "python_pytest",
            ToolchainId::JavaMaven => "java_maven",
            ToolchainId::JavascriptJest => "javascript_jest",
            ToolchainId::JavascriptMocha => "javascript_mocha",
            ToolchainId::JavascriptNodeTest => "javascript_node_test",
            ToolchainId::TypescriptJest => "typescript_jest",
        }
    }

    /// The toolchain itself.
    pub fn toolchain(self) -> &'static dyn Toolchain {
        match self {
            ToolchainId::PythonPytest => &python_pytest::PythonPytest,
            ToolchainId::JavaMaven => &java_maven::JavaMaven,
            ToolchainId::JavascriptJest => &javascript_jest::JavascriptJest::JAVASCRIPT,
            ToolchainId::JavascriptMocha => &javascript_mocha::JavascriptMocha,
            ToolchainId::JavascriptNodeTest => &javascript_node_test::JavascriptNodeTest,
            ToolchainId::TypescriptJest => &javascript_jest::JavascriptJest::TYPESCRIPT,
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

/// The toolchain of every language that has one, by language (for `image bootstrap`, which
/// makes a language's base image).
pub fn for_language(language: Language) -> Option<&'static dyn Toolchain> {
    ToolchainId::ALL
        .into_iter()
        .map(ToolchainId::toolchain)
        .find(|t| t.language() == language)
}

/// How projects of `language` are profiled (what its toolchains share).
pub fn profiler(language: Language) -> &'static dyn Profiler {
    match language {
        Language::Python => &python::PROFILER,
        Language::Java => &java::PROFILER,
        Language::JavaScript | Language::TypeScript => &node::PROFILER,
    }
}

/// Import `seed` (see [`crate::repo::import`]), profiled as its language's toolchains do.
pub fn import(seed: &Seed, base_dir: &Path, cache: &Path) -> Result<Repo, ImportError> {
    crate::repo::import(seed, base_dir, cache, profiler(seed.language))
}

/// Profile the tree at `root` for `seed` as its language's toolchains do.
pub fn profile(root: &Path, seed: &Seed) -> Result<Profile, ImportError> {
    crate::repo::profile(root, seed, profiler(seed.language))
}

/// Prepare `repo`'s environment in `sandbox` with its toolchain's recipe.
pub fn prepare(sandbox: &dyn Sandbox, repo: &Repo) -> Result<Arc<dyn Environment>, SandboxError> {
    let tc = for_profile(&repo.profile).map_err(|e| SandboxError::Prepare {
        repo: repo.name.clone(),
        detail: e.0,
    })?;
    sandbox.prepare(repo, &tc.recipe(repo))
}

/// A harness outside swe-forge that grades a task by running its tests in the task image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// The SWE-bench harness: it reads the lines between its markers with `log_parser`.
    SweBench,
    /// A Harbor verifier: the command's exit status is the verdict.
    Harbor,
}

/// How a harness runs a task's graded tests and reads the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HarnessRun {
    /// Shell lines that come before (helper files written with heredocs); may be empty.
    pub setup: String,
    /// One shell line that runs the graded tests at the repository root. Its exit status is
    /// 0 only when every graded test passed; for SWE-bench it prints what `log_parser` reads.
    pub command: String,
    /// The SWE-bench log parser that reads the command's output.
    pub log_parser: &'static str,
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
    /// Seconds any one test of a file may take in a verification run (from a baseline, see
    /// [`crate::baseline::Baseline::file_budgets`]); `None`: no budgets (before a baseline,
    /// and in replays).
    pub test_budgets: Option<std::sync::Arc<std::collections::BTreeMap<String, f64>>>,
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
            test_budgets: None,
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

    /// Whether a test can be synthesized for a candidate no existing test kills, from the
    /// clean suite's recorded calls (Python): such a toolchain also handles candidates no test
    /// executes, so sampling does not put them last.
    fn synthesizes_tests(&self) -> bool;

    /// Whether survivors get regression tests written from calls built out of the tests'
    /// constant expressions ([`crate::synth::java`]); only after [`Self::synthesizes_tests`].
    fn writes_java_regression_tests(&self) -> bool {
        false
    }

    /// Without per-test coverage, the stable tests that screen a candidate in `file` (those of
    /// its module or package); `None`: every stable test.
    fn screening_fallback(&self, _file: &str, _stable: &BTreeSet<String>) -> Option<Vec<String>> {
        None
    }

    /// The base image of its runtime.
    fn base(&self) -> BaseRecipe;

    /// What `repo`'s environments are made from: its repository image and its local
    /// preparation.
    fn recipe(&self, repo: &Repo) -> EnvRecipe;

    /// What a task image takes from the repository image.
    fn task_layer(&self) -> TaskLayer;

    /// What a record's environment says about how this environment resolved the project's
    /// dependencies (Java: the Maven overlay's mapping), read through a worker of it. Default:
    /// nothing.
    fn environment_notes(
        &self,
        worker: &mut dyn crate::sandbox::Worker,
    ) -> Option<serde_json::Value> {
        let _ = worker;
        None
    }

    /// The repository's folders that the environment of `notes`
    /// ([`Toolchain::environment_notes`]) left out of the build: their sources are not
    /// mutated. Default: none.
    fn left_out_folders(&self, notes: &serde_json::Value) -> Vec<String> {
        let _ = notes;
        Vec::new()
    }

    /// Whether the harnesses' log parsers read a test id back as it is written (a task is
    /// graded only by ids they do). Default: SWE-bench's pytest parsers split result lines on
    /// whitespace, so an id with whitespace (`test_x[a b]`) comes back cut.
    fn harness_readable(&self, id: &str) -> bool {
        crate::task::harness_readable(id)
    }

    /// How `harness` runs the `graded` tests with the record's `test_command` (empty: the
    /// framework's default); `log_dir` is where the harness keeps its logs. `Err` says why
    /// this toolchain's tasks cannot be graded there.
    /// The grading command over `files` (in the order given) of a repository whose start
    /// state's files are at `root`, started with `test_command` (the record's; empty: the
    /// toolchain's default). Default: the test command followed by the files.
    fn grading(&self, root: &Path, test_command: &str, files: Vec<String>) -> Grading {
        let _ = root;
        Grading::new(test_command, Vec::new(), files, None)
    }

    /// Whether a grading command can name single tests (`--grading-scope tests`) rather than
    /// run whole files: the runner takes test ids as arguments and reports them by the
    /// same ids.
    fn grades_tests_by_name(&self) -> bool {
        false
    }

    /// Names no agent change may touch wherever they are in a path (the runner's
    /// configuration and plugins, test folders and files): globs, see
    /// [`Grading::protected`].
    fn protected(&self) -> Vec<String> {
        Vec::new()
    }

    /// Hidden tests for a grading run of `grading`, named with `nonce` ([`crate::canary::Canary`]);
    /// `read` gives a file of the tree being graded (`None`: absent or unreadable). `None`
    /// where the toolchain has none, or the graded files cannot take them.
    fn canary(
        &self,
        grading: &Grading,
        nonce: &str,
        read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<crate::canary::Canary> {
        let _ = (grading, nonce, read);
        None
    }

    fn harness_run(
        &self,
        _harness: Harness,
        _grading: &Grading,
        _graded: &[String],
        _log_dir: &str,
    ) -> Result<HarnessRun, String> {
        Err(format!(
            "no harness command for {} tasks yet",
            self.id().as_str()
        ))
    }
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
            // Records of the first two languages that name no toolchain get theirs.
            if let Some(default) = ToolchainId::default_for(id.toolchain().language()) {
                assert_eq!(default, id);
            }
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
