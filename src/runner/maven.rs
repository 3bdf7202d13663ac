//! The Maven adapter: runs `mvn -o test` with Surefire (JUnit 4 or 5) against an offline
//! repository, reads the Surefire XML reports into per-test results, recognises compile errors,
//! and collects per-test coverage with the JaCoCo agent and a JUnit Platform listener.
//!
//! Test ids are `fully.qualified.Class#method` (see [`surefire::test_id`]).
//!
//! Fast path ([`Maven::fast`], on by default; see [`fast`] and `dockerfiles/java-maven.md`):
//! Maven compiles each commit once per worktree (`mvn -o -X test-compile` on a `git archive` of
//! `HEAD`, under `flock`, in [`Maven::build_cache`], outside the worktree) and reveals the
//! compiler options and classpaths; each run then compiles only the sources that differ from
//! `HEAD` with `javac` into overlay directories and runs JUnit's console launcher (Surefire's
//! default includes for the whole suite; the requested tests' classes narrowed to their methods
//! by `dockerfiles/java/MethodFilter.java`), whose XML reports parse into the same ids and
//! statuses. Compile errors give the same anomaly. Where the fast path cannot reproduce Maven
//! (the commit does not build, a multi-module or Surefire-configuring POM, a changed resource
//! or POM, a deleted source, no console launcher) the run falls back to plain Maven and the
//! reason is logged. Limitation: only changed files are recompiled, so a changed compile-time
//! constant stays inlined with its old value in unchanged classes (Maven recompiles the module).
//!
//! A run whose main or test sources do not compile has an [`Run::anomaly`] starting with
//! [`COMPILE_ERROR_PREFIX`] (`compile error: main sources: src/…/A.java:[3,9] …`); callers
//! test it with [`is_compile_error`]. Its requested tests are MISSING and its exit code is 1.
//!
//! Per-test coverage (see `dockerfiles/java-maven.md`): the test JVM runs with JaCoCo's agent
//! (`output=none`); `dockerfiles/java/PerTestListener.java`, registered as a JUnit Platform
//! `TestExecutionListener`, dumps and resets the agent's data after each test into one `.exec`
//! file per test; `dockerfiles/java/PerTestCoverage.java` analyses them with JaCoCo's core
//! classes into `{"Class#method": {"src/…/A.java": [lines]}}`. Both helpers are compiled by the
//! image build (see [`Maven::helpers`]) or, failing that, with `javac` into the scratch
//! directory at run time. Only the JUnit Platform provider (JUnit 5, or JUnit 4 through the
//! vintage engine) calls the listener; a plain JUnit 4 project gets a [`RunnerError::Coverage`].

pub mod fast;
pub mod resident;

use super::surefire;
use super::{junit_xml, wrap, RunBudget, RunnerError, TestRunner};
use crate::coverage::CoverageMap;
use crate::run::{Run, RunEnd, TestResult, TestStatus};
use crate::sandbox::{shell_quote, ExecOutput, Worker};
use std::path::PathBuf;
use std::time::Duration;

/// The fast path of a prepared tree: the build command, and the main and test class paths.
type FastPaths = (String, Vec<String>, Vec<String>);

pub use super::surefire::COMPILE_ERROR_PREFIX;

/// The Maven settings for Debian's offline repository (`/usr/share/maven-repo`).
pub const SETTINGS_XML: &str = include_str!("../../dockerfiles/maven-settings.xml");
/// Debian's Maven repository, the local repository of [`SETTINGS_XML`].
pub const DEBIAN_MAVEN_REPO: &str = "/usr/share/maven-repo";

/// [`SETTINGS_XML`] with `local_repo` as the local repository (an overlay of Debian's).
pub fn settings_xml(local_repo: &str) -> String {
    SETTINGS_XML.replace(
        &format!("<localRepository>{DEBIAN_MAVEN_REPO}</localRepository>"),
        &format!("<localRepository>{local_repo}</localRepository>"),
    )
}
/// The JUnit Platform listener that writes one JaCoCo `.exec` per test.
pub const LISTENER_JAVA: &str = include_str!("../../dockerfiles/java/PerTestListener.java");
/// The analyser that turns the per-test `.exec` files into JSON.
pub const ANALYSER_JAVA: &str = include_str!("../../dockerfiles/java/PerTestCoverage.java");

/// JVM options for Maven and the forked test JVM (through `JAVA_TOOL_OPTIONS`): small
/// reservations so that two JVMs fit in an address-space limit of a few GiB, and C1 only, which
/// starts faster for short test runs.
pub const DEFAULT_JVM_OPTIONS: &str = "-Xmx768m -Xss1m -XX:ReservedCodeCacheSize=64m \
     -XX:MaxMetaspaceSize=256m -XX:CompressedClassSpaceSize=64m -XX:+UseSerialGC \
     -XX:TieredStopAtLevel=1";

const REPORTS: &str = "surefire-reports.xml";
const COVERAGE_JSON: &str = "coverage.json";
const SETTINGS: &str = "maven-settings.xml";
/// Exit status of the coverage script when the helpers could not be built.
const HELPERS_FAILED: i32 = 96;
/// Exit status of the coverage script when the analysis failed.
const ANALYSIS_FAILED: i32 = 97;

/// Whether a run failed because the sources did not compile.
pub fn is_compile_error(run: &Run) -> bool {
    run.is_build_error()
}

/// Maven + Surefire for one repository.
#[derive(Clone, Debug)]
pub struct Maven {
    /// The command that starts Maven (default `mvn`).
    pub mvn: String,
    /// A settings file as commands see it; `None` writes [`SETTINGS_XML`] into the scratch
    /// directory for each run.
    pub settings: Option<String>,
    /// Extra arguments placed before the `test` goal (e.g. `-pl module`).
    pub extra_args: Vec<String>,
    /// `JAVA_TOOL_OPTIONS` for every JVM of a run; empty leaves the variable alone.
    pub jvm_options: String,
    /// Where Debian's jars are (`junit-platform-launcher.jar`, `org.jacoco.*.jar`, `asm*.jar`).
    pub java_lib: String,
    /// A directory holding the compiled coverage helpers: `listener/` (classes and the
    /// `META-INF/services` entry), `tools/` (the analyser) and `jacocoagent.jar`. When it lacks
    /// them, or is `None`, they are built in the scratch directory by each coverage run.
    pub helpers: Option<String>,
    /// Where full logs are kept (by digest); `None` keeps none.
    pub log_dir: Option<PathBuf>,
    /// Use the fast path (see [`fast`]): Maven builds each commit once, runs use `javac` on
    /// the changed files and JUnit's console launcher. Falls back to plain Maven, with the
    /// reason logged, where it cannot reproduce Maven's run.
    pub fast: bool,
    /// Where the fast path keeps its builds, as commands see it (outside every worktree);
    /// `None`: `${TMPDIR:-/tmp}/swe-forge-build`.
    pub build_cache: Option<String>,
    /// Wall-clock limit of the fast path's setup (the once-per-commit Maven build included).
    pub build_timeout: Duration,
    /// Run fast-path runs through the worker's resident JVM (set by
    /// [`Maven::qualify_resident`]; see [`resident`]); false: a fresh JVM per run.
    pub resident: bool,
    /// CPU seconds a fresh JVM spends that a resident run does not (the JVM's start and the
    /// launcher's warm-up), measured when the seed qualified: taken off each resident run's
    /// CPU limit, so a run near its limit ends the same way in both.
    pub resident_cpu_offset: f64,
}

impl Default for Maven {
    fn default() -> Self {
        Maven {
            mvn: "mvn".to_string(),
            settings: None,
            extra_args: Vec::new(),
            jvm_options: DEFAULT_JVM_OPTIONS.to_string(),
            java_lib: "/usr/share/java".to_string(),
            helpers: None,
            log_dir: None,
            fast: true,
            build_cache: None,
            build_timeout: Duration::from_secs(900),
            resident: false,
            resident_cpu_offset: 0.0,
        }
    }
}

impl Maven {
    pub fn new() -> Maven {
        Maven::default()
    }

    /// Lines that set up the environment (no settings file); the second item is empty.
    fn prelude_env(&self) -> (String, String) {
        let mut s = String::new();
        if !self.jvm_options.is_empty() {
            s.push_str(&format!(
                "export JAVA_TOOL_OPTIONS={}\nexport MALLOC_ARENA_MAX=2\n",
                shell_quote(&self.jvm_options)
            ));
        }
        (s, String::new())
    }

    /// Lines that set up the environment and the settings file; returns them and the quoted
    /// settings path.
    fn prelude(&self, scratch: &str) -> (String, String) {
        let (mut s, _) = self.prelude_env();
        let settings = match &self.settings {
            Some(path) => shell_quote(path),
            None => {
                let path = shell_quote(&format!("{scratch}/{SETTINGS}"));
                s.push_str(&heredoc(&path, SETTINGS_XML));
                path
            }
        };
        (s, settings)
    }

    /// The `mvn` command line; `extra_raw` is inserted before the goal as it is (already quoted).
    fn command(&self, settings_q: &str, tests: Option<&[String]>, extra_raw: &str) -> String {
        let mut cmd = format!(
            "{} -o -q -B -s {settings_q} -Dsurefire.failIfNoSpecifiedTests=false \
             -DfailIfNoTests=false -DtrimStackTrace=true",
            self.mvn
        );
        if let Some(tests) = tests {
            // An empty selection would run the whole suite; select a test that cannot exist.
            let sel = surefire::selection(tests);
            let sel = if sel.is_empty() {
                "swe_forge_no_test#none".to_string()
            } else {
                sel
            };
            cmd.push_str(&format!(" -Dtest={}", shell_quote(&sel)));
        }
        for arg in &self.extra_args {
            cmd.push(' ');
            cmd.push_str(&shell_quote(arg));
        }
        if !extra_raw.is_empty() {
            cmd.push(' ');
            cmd.push_str(extra_raw);
        }
        cmd.push_str(" test");
        cmd
    }

    /// The build cache directory, quoted for bash.
    fn cache_q(&self) -> String {
        match &self.build_cache {
            Some(dir) => shell_quote(dir),
            None => "\"${TMPDIR:-/tmp}/swe-forge-build\"".to_string(),
        }
    }

    /// The fast path's setup script (see [`fast::setup_script`]).
    fn fast_setup_script(&self, scratch: &str) -> String {
        let (prelude, settings) = self.prelude(scratch);
        let mut mvn = self.mvn.clone();
        for arg in &self.extra_args {
            mvn.push(' ');
            mvn.push_str(&shell_quote(arg));
        }
        fast::setup_script(
            &prelude,
            &mvn,
            &settings,
            &self.cache_q(),
            &self.java_lib,
            scratch,
        )
    }

    /// Prepare the fast path for the worker's tree: (build command, main and test class
    /// directories); `None` (reason logged) means plain Maven.
    fn fast_setup(
        &self,
        worker: &mut dyn Worker,
        scratch: &str,
    ) -> Result<Option<FastPaths>, RunnerError> {
        if !self.fast {
            return Ok(None);
        }
        let out = worker.exec(&self.fast_setup_script(scratch), self.build_timeout)?;
        let setup = match worker.read_scratch(fast::SETUP_FILE)? {
            _ if out.end != RunEnd::Exited => fast::Setup::Fallback(format!(
                "the setup did not finish within {:?}",
                self.build_timeout
            )),
            Some(text) => fast::parse_setup(&String::from_utf8_lossy(&text)),
            None => fast::Setup::Fallback(format!(
                "the setup wrote no result (exit {:?}): {}",
                out.exit_code,
                tail(&out.stderr)
            )),
        };
        match setup {
            fast::Setup::Ready { build, main, test } => {
                tracing::debug!(%build, ?main, ?test, "Java fast path");
                Ok(Some((build, main, test)))
            }
            fast::Setup::Fallback(why) => {
                tracing::info!(
                    root = worker.root(),
                    "Java fast path not used, running Maven: {why}"
                );
                Ok(None)
            }
        }
    }

    /// The script of a fast run.
    fn fast_script(
        &self,
        scratch: &str,
        build: &str,
        main: &[String],
        test: &[String],
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> String {
        let (prelude, _) = self.prelude_env();
        let plan = fast::RunPlan {
            build,
            main,
            test,
            tests,
            jvm_args: "",
            extra_cp: "",
            java_lib: &self.java_lib,
            scratch,
            bundle: &format!("{scratch}/{REPORTS}"),
            cpu_limit: &crate::runner::cpu_limit_lines(budget),
        };
        format!("{prelude}{}", fast::run_script(&plan))
    }

    /// The script of a fast coverage run (a clean tree: no overlays).
    fn fast_coverage_script(&self, scratch: &str, build: &str) -> String {
        let (prelude, _) = self.prelude_env();
        let lib = &self.java_lib;
        let execs = format!("{scratch}/coverage-exec");
        let jvm_args = format!(
            "{} {}",
            double_quote("-javaagent:$H/jacocoagent.jar=output=none,jmx=false,excludes=sweforge.*"),
            shell_quote(&format!("-Dsweforge.coverage.dir={execs}"))
        );
        let plan = fast::RunPlan {
            build,
            main: &[],
            test: &[],
            tests: None,
            jvm_args: &jvm_args,
            extra_cp: "$H/listener",
            java_lib: lib,
            scratch,
            bundle: &format!("{scratch}/{REPORTS}"),
            cpu_limit: "",
        };
        let analyser_cp = format!(
            "$H/tools:{lib}/org.jacoco.core.jar:{lib}/asm.jar:{lib}/asm-commons.jar:{lib}/asm-tree.jar"
        );
        format!(
            "{prelude}{helpers}rm -rf {execs_q}
{run}
status=$?
             if [ ! -f {index_q} ]; then echo 'swe-forge: no per-test coverage data was written' >&2; exit {ANALYSIS_FAILED}; fi
             java -cp \"{analyser_cp}\" sweforge.PerTestCoverage \"$B/src\" {execs_q} {json_q} >&2 || exit {ANALYSIS_FAILED}
             (exit $status)",
            helpers = self.helpers_script(scratch),
            execs_q = shell_quote(&execs),
            run = fast::run_script(&plan),
            index_q = shell_quote(&format!("{execs}/index.tsv")),
            json_q = shell_quote(&format!("{scratch}/{COVERAGE_JSON}")),
        )
    }

    /// The script of a plain run: clean old reports, run Maven, bundle the reports.
    fn script(&self, scratch: &str, tests: Option<&[String]>) -> String {
        let (prelude, settings) = self.prelude(scratch);
        format!(
            "{prelude}{clean}{mvn}\nstatus=$?\n{bundle}(exit $status)",
            clean = surefire::clean_reports_script(),
            mvn = self.command(&settings, tests, ""),
            bundle = surefire::bundle_script(&shell_quote(&format!("{scratch}/{REPORTS}"))),
        )
    }

    /// Lines that make sure the coverage helpers exist; sets `H` to their directory.
    fn helpers_script(&self, scratch: &str) -> String {
        let lib = &self.java_lib;
        let cp_listener = format!(
            "{lib}/junit-platform-launcher.jar:{lib}/junit-platform-engine.jar:{lib}/junit-platform-commons.jar"
        );
        let built = format!("{scratch}/java-helpers");
        let mut s = String::new();
        match &self.helpers {
            Some(h) => s.push_str(&format!("H={}\n", shell_quote(h))),
            None => s.push_str(&format!("H={}\n", shell_quote(&built))),
        }
        s.push_str(&format!(
            "if [ ! -f \"$H/listener/sweforge/PerTestListener.class\" ] || \
             [ ! -f \"$H/tools/sweforge/PerTestCoverage.class\" ] || [ ! -f \"$H/jacocoagent.jar\" ]; then\n\
             H={built_q}\n\
             mkdir -p \"$H/src\" \"$H/listener/META-INF/services\" \"$H/tools\"\n\
             {listener}{analyser}\
             javac --release 11 -nowarn -d \"$H/listener\" -cp {cp_listener} \"$H/src/PerTestListener.java\" >&2 || exit {HELPERS_FAILED}\n\
             javac --release 11 -nowarn -d \"$H/tools\" -cp {lib_q}/org.jacoco.core.jar \"$H/src/PerTestCoverage.java\" >&2 || exit {HELPERS_FAILED}\n\
             echo sweforge.PerTestListener > \"$H/listener/META-INF/services/org.junit.platform.launcher.TestExecutionListener\"\n\
             (cd \"$H\" && jar xf {lib_q}/org.jacoco.agent.jar jacocoagent.jar) >&2 || exit {HELPERS_FAILED}\n\
             fi\n",
            built_q = shell_quote(&built),
            listener = heredoc("\"$H/src/PerTestListener.java\"", LISTENER_JAVA),
            analyser = heredoc("\"$H/src/PerTestCoverage.java\"", ANALYSER_JAVA),
            cp_listener = shell_quote(&cp_listener),
            lib_q = shell_quote(lib),
        ));
        s
    }

    /// The script of a coverage run.
    fn coverage_script(&self, scratch: &str) -> String {
        let (prelude, settings) = self.prelude(scratch);
        let lib = &self.java_lib;
        let execs = format!("{scratch}/coverage-exec");
        let arg_line = format!(
            "-javaagent:$H/jacocoagent.jar=output=none,jmx=false,excludes=sweforge.* \
             -Dsweforge.coverage.dir={execs}"
        );
        let analyser_cp = format!(
            "$H/tools:{lib}/org.jacoco.core.jar:{lib}/asm.jar:{lib}/asm-commons.jar:{lib}/asm-tree.jar"
        );
        // The argLine and classpath hold `$H`: quote them with double quotes.
        let extra = [
            "-Dmaven.test.additionalClasspath=$H/listener".to_string(),
            format!("-DargLine={arg_line}"),
        ];
        let extra = extra
            .iter()
            .map(|a| double_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        format!(
            "{prelude}{helpers}rm -rf {execs_q}\n{clean}{mvn}\nstatus=$?\n{bundle}\
             if [ ! -f {index_q} ]; then echo 'swe-forge: no per-test coverage data was written' >&2; exit {ANALYSIS_FAILED}; fi\n\
             java -cp \"{analyser_cp}\" sweforge.PerTestCoverage . {execs_q} {json_q} >&2 || exit {ANALYSIS_FAILED}\n\
             (exit $status)",
            helpers = self.helpers_script(scratch),
            execs_q = shell_quote(&execs),
            clean = surefire::clean_reports_script(),
            mvn = self.command(&settings, None, &extra),
            bundle = surefire::bundle_script(&shell_quote(&format!("{scratch}/{REPORTS}"))),
            index_q = shell_quote(&format!("{execs}/index.tsv")),
            json_q = shell_quote(&format!("{scratch}/{COVERAGE_JSON}")),
        )
    }

    fn finish(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
        mut out: ExecOutput,
        fast: bool,
    ) -> Result<Run, RunnerError> {
        let super::Ending {
            cpu_s,
            log,
            log_digest,
            log_path,
            cpu_anomaly: mut anomaly,
        } = super::ending(worker, &mut out, budget, self.log_dir.as_deref())?;
        let log = String::from_utf8_lossy(&log);
        let bundle = worker.read_scratch(REPORTS)?;
        let (cases, errors) = match &bundle {
            Some(bytes) => surefire::parse_bundle(&String::from_utf8_lossy(bytes)),
            None => (Vec::new(), Vec::new()),
        };
        if anomaly.is_none() {
            if let Some(e) = errors.first() {
                anomaly = Some(e.to_string());
            }
        }
        let mut results = junit_xml::into_results(cases);
        if anomaly.is_none() && out.end == RunEnd::Exited && out.exit_code != Some(0) {
            anomaly = if fast {
                let phase = worker.read_scratch(fast::COMPILE_FAILED_FILE)?;
                let javac = worker.read_scratch(fast::JAVAC_LOG)?.unwrap_or_default();
                fast::compile_error(
                    phase.as_deref().map(String::from_utf8_lossy).as_deref(),
                    &String::from_utf8_lossy(&javac),
                    worker.root(),
                )
            } else {
                surefire::compile_error(&log, worker.root())
            };
        }
        if let Some(requested) = tests {
            surefire::fill_from_class_failures(&mut results, requested);
            for id in requested {
                results.entry(id.clone()).or_insert(TestResult {
                    status: TestStatus::Missing,
                    duration_s: 0.0,
                    message: None,
                });
            }
        }
        if anomaly.is_none() && out.end == RunEnd::Exited {
            let failures = results.values().any(|r| r.status.is_failure());
            let ran = results.values().any(|r| r.status != TestStatus::Missing);
            anomaly = match out.exit_code {
                Some(0) if failures => Some("exit 0 but the report has failures".to_string()),
                Some(0) if !ran && tests.is_none() => Some("no tests were run".to_string()),
                Some(0) => None,
                Some(1) if failures => None,
                Some(1) => Some(format!(
                    "build failed: {}",
                    surefire::build_failure(&log).unwrap_or_else(|| "see the log".to_string())
                )),
                Some(code) => Some(format!(
                    "unexpected exit code {code}: {}",
                    surefire::build_failure(&log).unwrap_or_else(|| "see the log".to_string())
                )),
                None => None,
            };
        }
        let mut run = Run {
            label: label.to_string(),
            requested: tests.map(|t| t.to_vec()),
            end: out.end,
            exit_code: out.exit_code,
            signal: out.signal,
            results,
            duration_s: out.duration.as_secs_f64(),
            cpu_s,
            log_digest,
            log_path,
            anomaly,
            oom_kills: out.oom_kills,
            collection_errors: Default::default(),
            nondeterministic: Default::default(),
            file_order: Vec::new(),
            indirect: None,
        };
        run.relativize(worker.root());
        Ok(run)
    }
}

/// `cat > path <<'EOF'` … `EOF` with a delimiter that the content does not contain.
pub(crate) fn heredoc(path: &str, content: &str) -> String {
    let mut delim = "SWE_FORGE_EOF".to_string();
    while content.lines().any(|l| l == delim) {
        delim.push('_');
    }
    let nl = if content.ends_with('\n') { "" } else { "\n" };
    format!("cat > {path} <<'{delim}'\n{content}{nl}{delim}\n")
}

/// Double-quote a word for bash, leaving `$H` expandable (only `"`, `\` and `` ` `` escaped).
fn double_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Parse the analyser's JSON (`{"Class#method": {"path": [lines]}}`) into a coverage map,
/// with ids made stable like the reports' ([`surefire::test_id`]).
pub fn coverage_from_json(json: &str) -> Result<CoverageMap, String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("coverage JSON: {e}"))?;
    let tests = doc
        .as_object()
        .ok_or("coverage JSON is not an object of tests")?;
    let mut triples = Vec::new();
    for (raw_id, files) in tests {
        let id = match raw_id.split_once('#') {
            Some((class, method)) => surefire::test_id(class, method),
            None => raw_id.clone(),
        };
        let files = files
            .as_object()
            .ok_or_else(|| format!("coverage of `{raw_id}` is not an object of files"))?;
        for (file, lines) in files {
            let lines = lines
                .as_array()
                .ok_or_else(|| format!("coverage of `{raw_id}` in `{file}` is not a list"))?;
            for line in lines {
                let line = line
                    .as_u64()
                    .and_then(|l| u32::try_from(l).ok())
                    .ok_or_else(|| format!("bad line number {line} for `{raw_id}`"))?;
                triples.push((file.clone(), line, id.clone()));
            }
        }
    }
    Ok(CoverageMap::from_triples(triples))
}

impl TestRunner for Maven {
    fn run(
        &self,
        worker: &mut dyn Worker,
        label: &str,
        tests: Option<&[String]>,
        budget: RunBudget,
    ) -> Result<Run, RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let (script, fast) = match self.fast_setup(worker, &scratch)? {
            Some((build, main, test)) => {
                if self.resident {
                    let paths = (build.as_str(), main.as_slice(), test.as_slice());
                    let cpu_offset = self.resident_cpu_offset;
                    if let Some(run) =
                        self.run_resident(worker, label, tests, budget, paths, cpu_offset)?
                    {
                        return Ok(run);
                    }
                    worker.clear_scratch()?;
                }
                (
                    self.fast_script(&scratch, &build, &main, &test, tests, budget),
                    true,
                )
            }
            None => (self.script(&scratch, tests), false),
        };
        // The fast script puts the CPU limit on the tests' JVM itself, after compiling.
        let limit = if fast {
            RunBudget::wall(budget.wall)
        } else {
            budget
        };
        let out = worker.exec(&wrap(&scratch, &script, limit), budget.wall)?;
        self.finish(worker, label, tests, budget, out, fast)
    }

    fn run_with_coverage(
        &self,
        worker: &mut dyn Worker,
        budget: RunBudget,
    ) -> Result<(Run, CoverageMap), RunnerError> {
        worker.clear_scratch()?;
        let scratch = worker.scratch().to_string();
        let (script, fast) = match self.fast_setup(worker, &scratch)? {
            Some((build, main, test)) if main.is_empty() && test.is_empty() => {
                (self.fast_coverage_script(&scratch, &build), true)
            }
            Some(_) => {
                tracing::info!("Java fast path not used for coverage: the tree differs from HEAD");
                (self.coverage_script(&scratch), false)
            }
            None => (self.coverage_script(&scratch), false),
        };
        let out = worker.exec(&wrap(&scratch, &script, budget), budget.wall)?;
        let failed = match out.exit_code {
            Some(HELPERS_FAILED) => Some("the coverage helpers could not be built"),
            Some(ANALYSIS_FAILED) => Some("no per-test coverage data"),
            _ => None,
        };
        let stderr_tail = tail(&out.stderr);
        let json = worker.read_scratch(COVERAGE_JSON)?;
        let run = self.finish(worker, "coverage", None, budget, out, fast)?;
        let json = match (json, failed) {
            (Some(j), None) => j,
            (_, why) => {
                return Err(RunnerError::Coverage(format!(
                    "{} ({}): {stderr_tail}",
                    why.unwrap_or("no coverage data"),
                    run.anomaly.clone().unwrap_or_else(|| run.summary())
                )))
            }
        };
        let map =
            coverage_from_json(&String::from_utf8_lossy(&json)).map_err(RunnerError::Coverage)?;
        Ok((run, map))
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = surefire::strip_ansi(&String::from_utf8_lossy(bytes));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

#[cfg(test)]
mod tests;
