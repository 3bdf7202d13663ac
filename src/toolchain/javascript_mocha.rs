//! JavaScript tested with mocha: the mocha runner (JSON reporter, per-test coverage from
//! istanbul's counters around each test, a file that cannot load made a collection error),
//! `file.test.js::<full title>` ids, no test synthesis; the environments are node's
//! (`super::node`). TypeScript with mocha (ts-node) is not supported: such a project is
//! refused with the reason.

use super::node::{self, BASE};
use super::{Harness, HarnessRun, RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::mocha::Mocha;
use crate::runner::TestRunner;
use crate::sandbox::recipe::{BaseRecipe, EnvRecipe, TaskLayer};
use crate::sandbox::{shell_quote, Worker};
use std::collections::BTreeSet;

/// JavaScript with mocha.
#[derive(Clone, Copy, Debug)]
pub struct JavascriptMocha;

impl JavascriptMocha {
    /// mocha for `spec`.
    pub fn mocha(spec: &RunnerSpec) -> Mocha {
        let mut m = Mocha::new();
        if let Some(cmd) = &spec.test_command {
            m.command = cmd.clone();
        }
        m.log_dir = spec.log_dir.clone();
        m.test_files = spec.test_files.clone();
        if !spec.known_tests.is_empty() {
            m = m.with_tests_per_file(&spec.known_tests);
        }
        m
    }
}

impl Toolchain for JavascriptMocha {
    fn id(&self) -> ToolchainId {
        ToolchainId::JavascriptMocha
    }

    fn language(&self) -> Language {
        Language::JavaScript
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        node::accepts(profile, "mocha")
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::mocha(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        Self::mocha(spec).command
    }

    fn resident(
        &self,
        _spec: &RunnerSpec,
        _worker: &mut dyn Worker,
        _baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        Err("mocha has no resident runner".to_string())
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
            local: node::local_recipe(repo, "mocha"),
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
        crate::canary::javascript(grading, nonce, read, crate::canary::JsStyle::Mocha)
    }

    /// mocha on the graded tests' files with its JSON reporter, then
    /// `dockerfiles/node/verdict.js` on the report.
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
            "" => "mocha",
            c => c,
        };
        let files: BTreeSet<&str> = graded
            .iter()
            .filter_map(|id| id.split_once("::").map(|(f, _)| f))
            .collect();
        let files: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
        Ok(node::harness_run(
            |report| {
                format!(
                    "{command} --reporter json --reporter-option output={} {}",
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

    #[test]
    fn accepts_mocha_projects_and_names_what_it_refuses() {
        let mut p = Profile {
            language: Language::JavaScript,
            build_system: "npm".into(),
            test_framework: "mocha".into(),
            source_files: vec![],
            test_files: vec![],
            install_command: None,
            python_path: vec![],
            packages: vec![],
            packages_reason: String::new(),
        };
        assert!(JavascriptMocha.accepts(&p).is_ok());
        p.test_framework = "jest".into();
        let e = JavascriptMocha.accepts(&p).unwrap_err();
        assert!(e.0.contains("`jest`"), "{e}");
        let run = JavascriptMocha
            .harness_run(
                Harness::Harbor,
                &crate::grading::Grading::new("", Vec::new(), Vec::new(), None),
                &["test/a.test.js::adds up".to_string()],
                "/logs",
            )
            .unwrap();
        assert!(
            run.command.starts_with(
                "mocha --reporter json --reporter-option output=/logs/report.json test/a.test.js >&2; node /logs/verdict.js"
            ),
            "{}",
            run.command
        );
    }
}
