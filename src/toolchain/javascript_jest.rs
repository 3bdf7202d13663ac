//! JavaScript and TypeScript tested with jest: the jest runner (in band, JSON report, per-test
//! coverage from istanbul's counters), `file.test.js::<full name>` ids, no test synthesis; the
//! environments are node's (`super::node`).

use super::node::{self, BASE, JEST_CACHE};
use super::{Harness, HarnessRun, RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::jest::{self, Jest};
use crate::runner::TestRunner;
use crate::sandbox::recipe::{BaseRecipe, EnvRecipe, TaskLayer};
use crate::sandbox::{shell_quote, SandboxKind, Worker};
use std::collections::BTreeSet;

/// JavaScript or TypeScript with jest.
#[derive(Clone, Copy, Debug)]
pub struct JavascriptJest {
    id: ToolchainId,
    language: Language,
}

impl JavascriptJest {
    pub const JAVASCRIPT: JavascriptJest = JavascriptJest {
        id: ToolchainId::JavascriptJest,
        language: Language::JavaScript,
    };
    pub const TYPESCRIPT: JavascriptJest = JavascriptJest {
        id: ToolchainId::TypescriptJest,
        language: Language::TypeScript,
    };

    /// jest for `spec`.
    pub fn jest(spec: &RunnerSpec) -> Jest {
        let mut j = Jest::new();
        if let Some(cmd) = &spec.test_command {
            j.command = cmd.clone();
        }
        j.cache_dir = Some(match spec.sandbox {
            SandboxKind::Docker => JEST_CACHE.to_string(),
            // Outside the worker's scratch directory, which is emptied between runs.
            SandboxKind::Local => spec.cache.join("jest-cache").display().to_string(),
        });
        j.log_dir = spec.log_dir.clone();
        if !spec.known_tests.is_empty() {
            j = j.with_tests_per_file(&spec.known_tests);
        }
        j
    }
}

impl Toolchain for JavascriptJest {
    fn id(&self) -> ToolchainId {
        self.id
    }

    fn language(&self) -> Language {
        self.language
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        node::accepts(profile, "jest")
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::jest(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        format!("{} --ci --runInBand", Self::jest(spec).command)
    }

    fn resident(
        &self,
        _spec: &RunnerSpec,
        _worker: &mut dyn Worker,
        _baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        Err("jest has no resident runner".to_string())
    }

    fn test_file(&self, id: &str, _test_files: &[String]) -> Option<String> {
        jest::test_file(id).map(str::to_string)
    }

    fn synthesizes_tests(&self) -> bool {
        false
    }

    /// The tests of the test files named after the module.
    fn screening_fallback(&self, file: &str, stable: &BTreeSet<String>) -> Option<Vec<String>> {
        node::module_tests(file, stable)
    }

    fn base(&self) -> BaseRecipe {
        BASE
    }

    fn recipe(&self, repo: &Repo) -> EnvRecipe {
        EnvRecipe {
            image: node::image_recipe(repo),
            local: node::local_recipe(repo, "jest"),
        }
    }

    fn task_layer(&self) -> TaskLayer {
        node::task_layer()
    }

    fn harness_readable(&self, id: &str) -> bool {
        node::harness_readable(id)
    }

    /// Two tests appended to the first graded test file ([`crate::canary::javascript`]).
    fn canary(
        &self,
        grading: &crate::grading::Grading,
        nonce: &str,
        read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<crate::canary::Canary> {
        crate::canary::javascript(grading, nonce, read, crate::canary::JsStyle::Jest)
    }

    /// jest in band on the graded tests' files with its JSON report, then
    /// `dockerfiles/node/verdict.js` on the report: `[PASSED] <id>` lines for SWE-bench's
    /// `parse_log_jest_json`, and exit 0 only when every graded test passed.
    fn protected(&self) -> Vec<String> {
        node::PROTECTED.iter().map(|s| s.to_string()).collect()
    }

    fn harness_run(
        &self,
        _harness: Harness,
        grading: &crate::grading::Grading,
        graded: &[String],
        log_dir: &str,
    ) -> Result<HarnessRun, String> {
        let command = match grading.base_command.trim() {
            "" => "jest --ci --runInBand",
            c => c,
        };
        let files: BTreeSet<&str> = graded.iter().filter_map(|id| jest::test_file(id)).collect();
        let files: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
        Ok(node::harness_run(
            |report| {
                format!(
                    "{command} --json --outputFile={} --runTestsByPath {}",
                    shell_quote(report),
                    files.join(" ")
                )
            },
            graded,
            log_dir,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(build_system: &str, framework: &str) -> Profile {
        Profile {
            language: Language::JavaScript,
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
    fn accepts_jest_projects_with_a_package_json() {
        let t = JavascriptJest::JAVASCRIPT;
        assert!(t.accepts(&profile("npm", "jest")).is_ok());
        let mocha = t.accepts(&profile("npm", "mocha")).unwrap_err();
        assert!(mocha.0.contains("`mocha`"), "{mocha}");
        assert!(t.accepts(&profile("none", "jest")).is_err());
    }

    #[test]
    fn screening_falls_back_to_the_module_s_test_files() {
        let stable: BTreeSet<String> = [
            "test/seats.test.js::parses A12",
            "test/money.test.js::cents",
            "__tests__/seats.spec.js::adjacent",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = JavascriptJest::JAVASCRIPT;
        assert_eq!(
            t.screening_fallback("lib/seats.js", &stable).unwrap(),
            vec![
                "__tests__/seats.spec.js::adjacent".to_string(),
                "test/seats.test.js::parses A12".to_string()
            ]
        );
        assert_eq!(t.screening_fallback("lib/other.js", &stable), None);
    }

    #[test]
    fn the_runner_keeps_its_cache_outside_the_worktree() {
        let spec = RunnerSpec::new(SandboxKind::Docker, "/cache");
        assert_eq!(
            JavascriptJest::jest(&spec).cache_dir.as_deref(),
            Some(JEST_CACHE)
        );
        let spec = RunnerSpec::new(SandboxKind::Local, "/cache");
        assert_eq!(
            JavascriptJest::jest(&spec).cache_dir.as_deref(),
            Some("/cache/jest-cache")
        );
        assert_eq!(
            JavascriptJest::JAVASCRIPT.test_command(&spec),
            "jest --ci --runInBand"
        );
    }

    #[test]
    fn the_base_image_is_debian_s_node_with_its_test_frameworks() {
        let all = BASE.all_packages();
        for p in ["python3", "git", "nodejs", "jest", "ts-jest"] {
            assert!(all.contains(&p), "{p}");
        }
        assert!(!all.contains(&"npm"));
    }
}
