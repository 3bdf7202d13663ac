//! JavaScript tested with node's built-in test runner (`node --test`): swe-forge's reporter
//! writes mocha's JSON shape, `file.test.js::<full title>` ids, no per-test coverage (screening
//! by the test files named after the mutated module, then the whole suite), no test synthesis;
//! the environments are node's (`super::node`): node itself is the framework, so no other
//! package is needed.

use super::node::{self, BASE};
use super::{Harness, HarnessRun, RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::node_test::{self, NodeTest, REPORTER_FILE, REPORTER_MJS};
use crate::runner::TestRunner;
use crate::sandbox::recipe::{BaseRecipe, EnvRecipe, TaskLayer};
use crate::sandbox::{shell_quote, Worker};
use std::collections::BTreeSet;

/// JavaScript with node's test runner.
#[derive(Clone, Copy, Debug)]
pub struct JavascriptNodeTest;

impl JavascriptNodeTest {
    /// The runner for `spec`.
    pub fn node_test(spec: &RunnerSpec) -> NodeTest {
        let mut n = NodeTest::new();
        if let Some(cmd) = spec.test_command.as_ref().filter(|c| c.contains("--test")) {
            n.command = cmd.clone();
        }
        n.log_dir = spec.log_dir.clone();
        if !spec.known_tests.is_empty() {
            n = n.with_tests_per_file(&spec.known_tests);
        }
        n
    }
}

impl Toolchain for JavascriptNodeTest {
    fn id(&self) -> ToolchainId {
        ToolchainId::JavascriptNodeTest
    }

    fn language(&self) -> Language {
        Language::JavaScript
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        node::accepts(profile, "node")
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::node_test(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        Self::node_test(spec).command
    }

    fn resident(
        &self,
        _spec: &RunnerSpec,
        _worker: &mut dyn Worker,
        _baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        Err("node's test runner has no resident runner".to_string())
    }

    fn test_file(&self, id: &str, _test_files: &[String]) -> Option<String> {
        id.split_once("::").map(|(f, _)| f.to_string())
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
            local: node::local_recipe(repo, "node"),
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
        crate::canary::javascript(grading, nonce, read, crate::canary::JsStyle::NodeTest)
    }

    fn protected(&self) -> Vec<String> {
        node::PROTECTED.iter().map(|s| s.to_string()).collect()
    }

    /// node's test runner on the graded tests' files with swe-forge's reporter (written to the
    /// log directory first), then `dockerfiles/node/verdict.js` on its report.
    fn harness_run(
        &self,
        _harness: Harness,
        grading: &crate::grading::Grading,
        graded: &[String],
        log_dir: &str,
    ) -> Result<HarnessRun, String> {
        let command = match grading.base_command.trim() {
            c if c.contains("--test") => c,
            _ => "node --test",
        };
        let files: BTreeSet<&str> = graded
            .iter()
            .filter_map(|id| id.split_once("::").map(|(f, _)| f))
            .collect();
        let files: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
        let reporter = format!("{log_dir}/{REPORTER_FILE}");
        let mut run = node::harness_run(
            |report| {
                let options = vec![
                    shell_quote(&format!("--test-reporter={reporter}")),
                    shell_quote(&format!("--test-reporter-destination={report}")),
                ];
                format!(
                    "{} {}",
                    node_test::command_with(command, &options, false)
                        .unwrap_or_else(|| format!("node --test {}", options.join(" "))),
                    files.join(" ")
                )
            },
            graded,
            log_dir,
        );
        run.setup.push('\n');
        run.setup.push_str(&crate::runner::maven::heredoc(
            &shell_quote(&reporter),
            REPORTER_MJS,
        ));
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_node_test_projects_and_writes_its_reporter_for_harnesses() {
        let mut p = Profile {
            language: Language::JavaScript,
            build_system: "npm".into(),
            test_framework: "node".into(),
            source_files: vec![],
            test_files: vec![],
            install_command: None,
            python_path: vec![],
            packages: vec![],
            packages_reason: String::new(),
        };
        assert!(JavascriptNodeTest.accepts(&p).is_ok());
        p.test_framework = "mocha".into();
        assert!(JavascriptNodeTest.accepts(&p).is_err());
        let run = JavascriptNodeTest
            .harness_run(
                Harness::Harbor,
                &crate::grading::Grading::new("node --test test/", Vec::new(), Vec::new(), None),
                &["test/a.test.js::math adds".to_string()],
                "/logs",
            )
            .unwrap();
        assert!(
            run.command.starts_with(
                "node --test --test-reporter=/logs/node-test-reporter.mjs --test-reporter-destination=/logs/report.json test/a.test.js >&2; node /logs/verdict.js"
            ),
            "{}",
            run.command
        );
        assert!(
            run.setup.contains("node-test-reporter.mjs"),
            "{}",
            run.setup
        );
    }
}
