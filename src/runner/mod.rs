//! Test runners: one adapter per framework, turning a request ("these tests", "the whole
//! suite", "with per-test coverage") into a command and its structured report into a [`Run`].

pub mod jest;
pub mod junit_xml;
pub mod maven;
pub mod mocha;
pub mod node;
pub mod node_test;
pub mod pytest;
pub mod resident;
pub mod surefire;

use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd};
use crate::sandbox::{shell_quote, ExecOutput, SandboxError, Worker};
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

/// Where a wrapped command leaves bash's `times` output, in the scratch directory.
pub(crate) const TIMES: &str = "times.txt";
/// bash's exit status for a child killed by SIGXCPU (128 + 24): the CPU limit.
pub(crate) const CPU_EXCEEDED: i32 = 128 + libc::SIGXCPU;

/// Wrap a test command: apply the CPU limit, and record the CPU time of its processes with
/// bash's `times` (the second line is the children's user and system time).
pub(crate) fn wrap(scratch: &str, command: &str, budget: RunBudget) -> String {
    format!(
        "{}{command}\nstatus=$?\ntimes > {}\nexit $status\n",
        cpu_limit_lines(budget),
        shell_quote(&format!("{scratch}/{TIMES}"))
    )
}

/// The shell lines that put the budget's CPU limit on every process started after them (empty
/// without a CPU limit). The soft limit sends SIGXCPU (exit 152, recognised as the CPU limit);
/// the hard limit, a little later, SIGKILLs a process that ignores it. With both equal the
/// kernel would send SIGKILL straight away, indistinguishable from the OOM killer.
pub(crate) fn cpu_limit_lines(budget: RunBudget) -> String {
    budget
        .cpu
        .map(|c| {
            let soft = c.as_secs_f64().ceil() as u64;
            // Soft first: a hard limit below the (unlimited) soft one is refused (EINVAL).
            format!("ulimit -S -t {soft}\nulimit -H -t {}\n", soft + 5)
        })
        .unwrap_or_default()
}

/// Children's user + system seconds from bash's `times` output (`0m1.250s 0m0.040s`).
pub(crate) fn parse_bash_times(text: &str) -> Option<f64> {
    let line = text.lines().nth(1)?;
    let mut total = 0.0;
    for part in line.split_whitespace() {
        let (m, s) = part.trim_end_matches('s').split_once('m')?;
        total += m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?;
    }
    Some(total)
}

/// What every adapter's report reading starts from: the CPU time of the test processes (bash's
/// `times`), a CPU limit hit turned into a timeout, and the log's digest (the log itself kept
/// under `log_dir`, by digest).
pub(crate) struct Ending {
    pub cpu_s: Option<f64>,
    /// stdout followed by stderr.
    pub log: Vec<u8>,
    pub log_digest: String,
    pub log_path: Option<String>,
    /// "CPU time limit of …s exceeded" when the CPU limit ended the run.
    pub cpu_anomaly: Option<String>,
}

/// See [`Ending`]: marks `out` timed out when the CPU limit ended it.
pub(crate) fn ending(
    worker: &mut dyn Worker,
    out: &mut ExecOutput,
    budget: RunBudget,
    log_dir: Option<&std::path::Path>,
) -> Result<Ending, RunnerError> {
    let cpu_s = worker
        .read_scratch(TIMES)?
        .and_then(|b| parse_bash_times(&String::from_utf8_lossy(&b)));
    let cpu_exceeded = out.exit_code == Some(CPU_EXCEEDED) || out.signal == Some(libc::SIGXCPU);
    if cpu_exceeded && out.end != RunEnd::TimedOut {
        out.end = RunEnd::TimedOut;
    }
    let mut log = out.stdout.clone();
    log.extend_from_slice(&out.stderr);
    let log_digest = blake3::hash(&log).to_hex().to_string();
    let log_path = log_dir.and_then(|dir| {
        let path = dir.join(format!("{}.log", &log_digest[..16]));
        (std::fs::create_dir_all(dir).is_ok() && std::fs::write(&path, &log).is_ok())
            .then(|| path.display().to_string())
    });
    let cpu_anomaly = cpu_exceeded.then(|| {
        format!(
            "CPU time limit of {:.1}s exceeded",
            budget.cpu.map_or(0.0, |c| c.as_secs_f64())
        )
    });
    Ok(Ending {
        cpu_s,
        log,
        log_digest,
        log_path,
        cpu_anomaly,
    })
}

/// Where a failure message quotes the source line its test failed at, when the runner can
/// read it (`> expect(f(2)).toBe(4);`): the issue text takes the call from it.
pub const SOURCE_LINE_PREFIX: &str = "> ";

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

    /// [`TestRunner::run`] that may stop at the first failing test (a screen: one kill decides
    /// it; tests after it are then absent from the report). A runner that cannot stop early
    /// runs them all.
    fn run_to_first_failure(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        self.run(worker, label, tests, budget)
    }

    /// Run a grading command ([`crate::grading::Grading`]): its test files, whole, in its
    /// order, with its options. `tests`: the ids the caller reads (absent ones are MISSING).
    /// A runner that cannot run files as the command says runs those ids.
    fn run_grading(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        grading: &crate::grading::Grading,
        tests: &[String],
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        let _ = grading;
        self.run(worker, label, Some(tests), budget)
    }

    /// Run the whole suite once with per-test coverage: which tests execute which lines.
    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_sets_both_cpu_limits() {
        let budget = RunBudget {
            wall: Duration::from_secs(60),
            cpu: Some(Duration::from_millis(7_200)),
        };
        let dir = tempfile::tempdir().unwrap();
        let script = wrap(
            dir.path().to_str().unwrap(),
            "echo soft=$(ulimit -S -t) hard=$(ulimit -H -t)",
            budget,
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "soft=8 hard=13\n");
        // bash complains on stderr when a limit is refused.
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    }
}
