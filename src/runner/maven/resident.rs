//! The resident JVM of the fast Java path (`dockerfiles/java/Resident.java`): one long-lived
//! JVM per worker and build, started with the build's dependency jars and JUnit's console
//! launcher on its class path. Each run compiles the changed sources with the in-process
//! compiler (into the same content-keyed overlays as the shell path) and runs the console
//! launcher in-process with a fresh class loader for the project's classes, so no static state
//! of the project passes from run to run; system properties, the default locale and time zone
//! are restored after each run, and a run that leaves a thread running or the heap full makes
//! the JVM exit after it.
//!
//! A seed qualifies as the pytest resident does ([`Maven::qualify_resident`]): the whole suite
//! once through the resident must give the fresh baseline's per-test outcomes, or the seed keeps
//! fresh JVMs. A run whose resident died without answering (a test called `System.exit`, the
//! OOM killer) is run again as a fresh process, unless it was past its timeout.

use super::{fast, Maven, COMPILE_ERROR_PREFIX, REPORTS};
use crate::baseline::Baseline;
use crate::run::{Run, RunEnd};
use crate::runner::{RunBudget, RunnerError};
use crate::sandbox::{shell_quote, ResidentExec, ResidentProgram, ResidentRun, Worker};
use std::time::Duration;

/// The resident's source, compiled on first use into `<build>/resident`.
pub const RESIDENT_JAVA: &str = include_str!("../../../dockerfiles/java/Resident.java");

/// The script that starts the resident for `build`: compile it if needed (under the build's
/// lock; with the JVM options, which keep it inside the address-space limit), put the
/// dependency jars (the test class path's non-directory entries) on its class
/// path, move the protocol to descriptors 3 and 4, and `exec` the JVM.
pub fn launcher_script(build: &str, java_lib: &str, jvm_options: &str) -> String {
    let console = format!("{java_lib}/{}", fast::CONSOLE_LAUNCHER);
    let env = if jvm_options.is_empty() {
        String::new()
    } else {
        format!(
            "export JAVA_TOOL_OPTIONS={}\nexport MALLOC_ARENA_MAX=2\n",
            shell_quote(jvm_options)
        )
    };
    format!(
        "{env}B={b}\nCL={cl}\n\
         if [ ! -f \"$B/resident/sweforge/Resident.class\" ]; then\n\
         exec 9>\"$B.lock\" && flock 9 || exit 1\n\
         if [ ! -f \"$B/resident/sweforge/Resident.class\" ]; then\n\
         T=\"$B/resident.tmp.$$\"; rm -rf \"$T\" && mkdir -p \"$T/src\" || exit 1\n\
         {source}\
         javac --release 11 -nowarn -d \"$T/classes\" -cp \"$CL\" \"$T/src/Resident.java\" >&2 || exit 1\n\
         rm -rf \"$B/resident\" && mv \"$T/classes\" \"$B/resident\" && rm -rf \"$T\" || exit 1\n\
         fi\n\
         exec 9>&-\n\
         fi\n\
         jars=$(tr ':' '\\n' < \"$B/test.cp\" | while IFS= read -r e; do \
         [ -n \"$e\" ] && [ ! -d \"$e\" ] && printf '%s:' \"$e\"; done)\n\
         exec 3<&0 4>&1 </dev/null >/dev/null\n\
         exec java $(cat \"$B/{argline}\" 2>/dev/null) -cp \"$jars$B/resident:$B/filter:$CL\" sweforge.Resident\n",
        b = shell_quote(build),
        cl = shell_quote(&console),
        source = super::heredoc("\"$T/src/Resident.java\"", RESIDENT_JAVA),
        argline = super::fast::ARGLINE_FILE,
    )
}

impl Maven {
    /// The resident program for the build entry `build`.
    pub fn resident_program(&self, build: &str) -> ResidentProgram {
        ResidentProgram {
            argv: vec![
                "bash".into(),
                "-c".into(),
                launcher_script(build, &self.java_lib, &self.jvm_options),
            ],
            start: serde_json::json!({}),
            contained: true,
        }
    }

    /// The resident's arguments for one run (see `Resident.java`).
    pub fn resident_args(
        scratch: &str,
        build: &str,
        main: &[String],
        test: &[String],
        tests: Option<&[String]>,
    ) -> Vec<String> {
        let mut args = vec![
            format!("--build={build}"),
            format!("--out={scratch}/fast"),
            format!("--bundle={scratch}/{REPORTS}"),
            format!("--marker={}", crate::runner::surefire::REPORT_MARKER),
            format!("--failed={scratch}/{}", fast::COMPILE_FAILED_FILE),
            format!("--javac-log={scratch}/{}", fast::JAVAC_LOG),
        ];
        args.extend(main.iter().map(|f| format!("--main={f}")));
        args.extend(test.iter().map(|f| format!("--test={f}")));
        match tests {
            None => args.push("--suite".into()),
            Some(ids) => {
                args.push(format!("--select={scratch}/select.txt"));
                args.extend(ids.iter().map(|id| format!("--id={id}")));
            }
        }
        args
    }

    /// One run through the worker's resident JVM on a prepared fast path; `Ok(None)`: run it
    /// as a fresh process instead (no resident here, or it died without answering).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_resident(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
        (build, main, test): (&str, &[String], &[String]),
        cpu_offset: f64,
    ) -> Result<Option<Run>, RunnerError> {
        let scratch = worker.scratch().to_string();
        let args = Self::resident_args(&scratch, build, main, test, tests);
        let program = self.resident_program(build);
        let request = ResidentRun {
            args: &args,
            cpu: budget
                .cpu
                .map(|c| Duration::from_secs_f64((c.as_secs_f64() - cpu_offset).max(1.0))),
            program: &program,
            imports: false,
            budgets: None,
        };
        let out = match worker.resident_run(&request, budget.wall)? {
            ResidentExec::Ran(out) => out,
            ResidentExec::Lost(out) if out.end == RunEnd::TimedOut => out,
            ResidentExec::Lost(_) => {
                tracing::debug!(
                    root = worker.root(),
                    "the resident JVM died without answering; running a fresh JVM"
                );
                return Ok(None);
            }
            ResidentExec::Unsafe(why) => {
                tracing::debug!(root = worker.root(), "no resident JVM: {why}");
                return Ok(None);
            }
            ResidentExec::Unsupported => return Ok(None),
        };
        self.finish(worker, label, tests, budget, out, true)
            .map(Some)
    }

    /// This runner with the resident JVM, when the whole suite through it gives the fresh
    /// baseline's per-test outcomes on the clean tree; `Err(why not)` otherwise (the seed keeps
    /// a fresh JVM per run).
    pub fn qualify_resident(
        &self,
        worker: &mut dyn Worker,
        baseline: &Baseline,
    ) -> Result<Maven, String> {
        if !self.fast {
            return Err("the fast Java path is off".into());
        }
        worker.reset().map_err(|e| e.to_string())?;
        worker.clear_scratch().map_err(|e| e.to_string())?;
        let scratch = worker.scratch().to_string();
        let (build, main, test) = self
            .fast_setup(worker, &scratch)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the fast Java path does not apply to this seed".to_string())?;
        if !main.is_empty() || !test.is_empty() {
            return Err("the clean tree differs from HEAD".into());
        }
        let budget = baseline.budget();
        let run = self
            .run_resident(
                worker,
                "resident-check",
                None,
                budget,
                (&build, &[], &[]),
                0.0,
            )
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the resident JVM did not run".to_string())?;
        if run
            .anomaly
            .as_deref()
            .is_some_and(|a| a.starts_with(COMPILE_ERROR_PREFIX))
        {
            return Err(format!(
                "resident-check: {}",
                run.anomaly.unwrap_or_default()
            ));
        }
        crate::runner::resident::compare(baseline, &run)?;
        worker.reset().map_err(|e| e.to_string())?;
        let fresh_cpu = baseline.mean_cpu_s();
        let mut m = self.clone();
        m.resident = true;
        m.resident_cpu_offset = match (fresh_cpu, run.cpu_s) {
            (Some(f), Some(r)) => (f - r).max(0.0),
            _ => 0.0,
        };
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_the_build_the_changes_and_the_selection() {
        let args = Maven::resident_args(
            "/s",
            "/c/b",
            &["src/main/java/A.java".into()],
            &[],
            Some(&["p.ATest#one".to_string()]),
        );
        assert!(args.contains(&"--build=/c/b".to_string()));
        assert!(args.contains(&"--main=src/main/java/A.java".to_string()));
        assert!(args.contains(&"--select=/s/select.txt".to_string()));
        assert!(args.contains(&"--id=p.ATest#one".to_string()));
        assert!(!args.contains(&"--suite".to_string()));
        let suite = Maven::resident_args("/s", "/c/b", &[], &[], None);
        assert!(suite.contains(&"--suite".to_string()));
        assert!(!suite.iter().any(|a| a.starts_with("--select")));
    }

    #[test]
    fn the_launcher_moves_the_protocol_off_the_standard_streams() {
        let s = launcher_script("/c/b", "/usr/share/java", "-Xmx1m");
        assert!(s.contains("exec 3<&0 4>&1 </dev/null >/dev/null"));
        assert!(s.contains("sweforge.Resident"));
        assert!(s.contains("JAVA_TOOL_OPTIONS=-Xmx1m"));
        assert!(s.contains("public final class Resident"));
    }
}
