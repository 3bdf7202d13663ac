//! Python tested with pytest: the fresh and the resident pytest runner, `file.py::Class::test`
//! ids, and test synthesis.

use super::{RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::Profile;
use crate::runner::pytest::Pytest;
use crate::runner::TestRunner;
use crate::sandbox::Worker;

/// Python with pytest.
#[derive(Clone, Copy, Debug)]
pub struct PythonPytest;

impl PythonPytest {
    /// pytest for `spec` (fresh processes).
    pub fn pytest(spec: &RunnerSpec) -> Pytest {
        let mut p = Pytest::new(
            spec.test_command.as_deref(),
            spec.test_files.clone(),
            spec.source_roots.clone(),
        );
        p.log_dir = spec.log_dir.clone();
        if !spec.known_tests.is_empty() {
            p = p.with_tests_per_file(&spec.known_tests);
        }
        p
    }
}

impl Toolchain for PythonPytest {
    fn id(&self) -> ToolchainId {
        ToolchainId::PythonPytest
    }

    fn language(&self) -> Language {
        Language::Python
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        match profile.test_framework.as_str() {
            "pytest" => Ok(()),
            other => Err(Unsupported(format!(
                "swe-forge tests Python projects with pytest, and this one's test framework is \
                 `{other}`"
            ))),
        }
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::pytest(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        Self::pytest(spec).base_command
    }

    fn resident(
        &self,
        spec: &RunnerSpec,
        worker: &mut dyn Worker,
        baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        let p = Self::pytest(spec).qualify_resident(worker, baseline)?;
        tracing::info!(
            warm = p.resident.as_ref().map_or(0, Vec::len),
            cpu_offset_s = p.resident_cpu_offset,
            "resident runner"
        );
        Ok(Box::new(p))
    }

    fn test_file(&self, id: &str, _test_files: &[String]) -> Option<String> {
        id.split_once("::").map(|(file, _)| file.to_string())
    }

    fn synthesizes_tests(&self) -> bool {
        true
    }
}
