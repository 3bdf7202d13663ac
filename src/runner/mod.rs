//! Test runners: one adapter per framework, turning a request ("these tests", "the whole
//! suite", "with per-test coverage") into a command and its structured report into a [`Run`].

pub mod junit_xml;
pub mod maven;
pub mod pytest;
pub mod surefire;

use crate::coverage::CoverageMap;
use crate::run::Run;
use crate::sandbox::{SandboxError, Worker};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("the test report could not be read: {0}")]
    Report(String),
    #[error("coverage data could not be read: {0}")]
    Coverage(String),
}

/// The limits of one run: a wall-clock timeout (catches hangs) and, optionally, a CPU-time
/// limit per process (catches endless loops without being fooled by a loaded machine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunBudget {
    pub wall: Duration,
    pub cpu: Option<Duration>,
}

impl RunBudget {
    /// Only a wall-clock timeout.
    pub fn wall(wall: Duration) -> RunBudget {
        RunBudget { wall, cpu: None }
    }
}

/// A framework adapter.
pub trait TestRunner: Send + Sync {
    /// Run the given tests (`None`: the whole suite) and parse the report. Tests requested but
    /// absent from the report are MISSING.
    fn run(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError>;

    /// Run the whole suite once with per-test coverage: which tests execute which lines.
    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError>;
}
