//! The fast path of the Maven adapter: build a commit once with Maven, then run each test
//! request with `javac` (changed files only) and JUnit's console launcher instead of `mvn test`.
//!
//! Three pieces, each a shell script that [`super::Maven`] runs on the worker:
//!
//! 1. [`setup_script`] (no CPU limit, run before each test run): under `flock`, builds the
//!    worktree's `HEAD` once — `git archive HEAD` into `<cache>/<commit>/src`, then
//!    `mvn -o -X test-compile` there — and records the compiler's options and the main and
//!    test classpaths from Maven's debug log (`Command line options:`); it also compiles the
//!    method filter and the resident JVM ([`super::resident`]) into the entry. The entry lives
//!    outside the worktree, so resets do not remove it, and every worktree of the commit
//!    shares it. Then it lists the worktree's changes against
//!    `HEAD` and writes [`SETUP_FILE`]: `ok`, the entry, the changed main and test sources; or
//!    `fallback <reason>` when the fast path cannot reproduce Maven (the commit does not build,
//!    a multi-module POM, Surefire configured in the POM, a changed resource or POM, a deleted
//!    source).
//! 2. [`run_script`]: compiles the changed main sources into `<scratch>/fast/main` and the
//!    changed test sources into `<scratch>/fast/test` with Maven's options (a failure writes
//!    [`COMPILE_FAILED_FILE`] with the phase and exits 1), then runs the console launcher with
//!    the overlays first on the classpath and bundles its legacy XML reports like Surefire's.
//!    A selection is the requested tests' classes (`--select-class`, only those that exist)
//!    narrowed to the requested methods by `dockerfiles/java/MethodFilter.java`, a
//!    `PostDiscoveryFilter` that keeps every method of the requested name, as Surefire's
//!    `-Dtest=Class#method` does. The whole suite is a classpath scan with Surefire's default
//!    includes and excludes.
//! 3. [`javac_errors`]: javac's diagnostics as the Maven path quotes them
//!    (`src/…/A.java:[line,col] message`).

use crate::sandbox::shell_quote;

/// What [`setup_script`] writes into the scratch directory.
pub const SETUP_FILE: &str = "fast-setup.txt";
/// Written by [`run_script`] when a compilation failed: `main sources` or `test sources`.
pub const COMPILE_FAILED_FILE: &str = "fast-compile-failed.txt";
/// javac's output of a failed compilation.
pub const JAVAC_LOG: &str = "fast-javac.log";
/// The method filter (registered as a JUnit Platform `PostDiscoveryFilter`).
pub const METHOD_FILTER_JAVA: &str = include_str!("../../../dockerfiles/java/MethodFilter.java");
/// The JUnit console launcher Debian's `junit5` package ships.
pub const CONSOLE_LAUNCHER: &str = "junit-platform-console-standalone.jar";
/// Surefire 2.22's default includes (`**/Test*.java`, `**/*Test.java`, `**/*Tests.java`,
/// `**/*TestCase.java`) as a class-name regex; no backslashes (the launcher's @argfile
/// treats them as escapes).
pub const SUREFIRE_INCLUDES: &str = "^(.*[.])?(Test[^.]*|[^.]*Test|[^.]*Tests|[^.]*TestCase)$";
/// Surefire's default exclude `**/*$*`.
pub const SUREFIRE_EXCLUDES: &str = ".*[$].*";
/// Reads Surefire's effective configuration from the build's `mvn -X` log
/// (`dockerfiles/java/surefire-config.awk`): the includes and excludes as class-name regexes
/// for the console launcher, or the settings the launcher would not reproduce.
pub const SUREFIRE_CONFIG_AWK: &str = include_str!("../../../dockerfiles/java/surefire-config.awk");
/// Where the build entry keeps the include and exclude regexes (Surefire's defaults where the
/// POMs configure none).
pub const INCLUDES_FILE: &str = "includes.re";
pub const EXCLUDES_FILE: &str = "excludes.re";
/// Where the build entry keeps Surefire's `argLine` (JVM options for the tests' JVM; empty
/// where the POMs set none), split on whitespace when the launcher's JVM starts.
pub const ARGLINE_FILE: &str = "argline.txt";

/// What the setup script found.
#[derive(Clone, Debug, PartialEq)]
pub enum Setup {
    /// The build entry and the sources that differ from `HEAD` (repo-relative).
    Ready {
        build: String,
        main: Vec<String>,
        test: Vec<String>,
    },
    /// Run plain Maven instead, for this reason.
    Fallback(String),
}

/// Parse [`SETUP_FILE`]: `ok` then `build <dir>`, `main <path>`, `test <path>` lines; or
/// `fallback <reason>`. Anything else is a fallback too.
pub fn parse_setup(text: &str) -> Setup {
    let mut lines = text.lines();
    match lines.next().map(str::trim_end) {
        Some("ok") => {}
        Some(l) if l.starts_with("fallback") => {
            let why = l.trim_start_matches("fallback").trim();
            let why = if why.is_empty() {
                "unknown reason"
            } else {
                why
            };
            return Setup::Fallback(why.to_string());
        }
        _ => return Setup::Fallback("the setup wrote no result".to_string()),
    }
    let (mut build, mut main, mut test) = (None, Vec::new(), Vec::new());
    for line in lines {
        match line.split_once(' ') {
            Some(("build", dir)) if !dir.is_empty() => build = Some(dir.to_string()),
            Some(("main", path)) if !path.is_empty() => main.push(path.to_string()),
            Some(("test", path)) if !path.is_empty() => test.push(path.to_string()),
            _ if line.trim().is_empty() => {}
            _ => return Setup::Fallback(format!("unexpected setup line `{line}`")),
        }
    }
    match build {
        Some(build) => Setup::Ready { build, main, test },
        None => Setup::Fallback("the setup named no build".to_string()),
    }
}

/// The setup script. `prelude` sets `JAVA_TOOL_OPTIONS` and writes the settings file whose
/// quoted path is `settings_q`; `mvn` is the Maven command with its extra arguments; `cache_q`
/// the build cache directory, quoted for bash; `java_lib` Debian's jar directory.
pub fn setup_script(
    prelude: &str,
    mvn: &str,
    settings_q: &str,
    cache_q: &str,
    java_lib: &str,
    scratch: &str,
) -> String {
    let out_q = shell_quote(&format!("{scratch}/{SETUP_FILE}"));
    let lib = java_lib;
    let filter_cp = shell_quote(&format!(
        "{lib}/junit-platform-launcher.jar:{lib}/junit-platform-engine.jar:{lib}/junit-platform-commons.jar"
    ));
    format!(
        "{prelude}OUT={out_q}\n\
         fallback() {{ printf 'fallback %s\\n' \"$*\" > \"$OUT\"; exit 0; }}\n\
         command -v flock >/dev/null 2>&1 || fallback 'flock is not installed'\n\
         command -v javac >/dev/null 2>&1 || fallback 'javac is not installed'\n\
         [ -f {console_q} ] || fallback 'no JUnit console launcher at '{console_q}\n\
         commit=$(git rev-parse --verify -q HEAD) || fallback 'not a git checkout with a HEAD commit'\n\
         C={cache_q}\n\
         B=\"$C/$commit\"\n\
         mkdir -p \"$C\" || fallback \"cannot create the build cache $C\"\n\
         exec 9>\"$B.lock\" || fallback \"cannot open the lock $B.lock\"\n\
         flock 9 || fallback 'flock failed'\n\
         if [ ! -f \"$B/ok\" ] && [ ! -f \"$B/failed\" ]; then\n\
         rm -rf \"$B\" && mkdir -p \"$B/src\" || fallback \"cannot create $B\"\n\
         build() {{\n\
         git archive --format=tar HEAD | tar -x -C \"$B/src\" || {{ echo 'git archive HEAD failed'; return; }}\n\
         [ -f \"$B/src/pom.xml\" ] || {{ echo 'no pom.xml at the root'; return; }}\n\
         ! grep -q -F '<modules>' \"$B/src/pom.xml\" || {{ echo 'the POM has <modules> (a multi-module build)'; return; }}\n\
         (cd \"$B/src\" && {mvn} -o -B -X -s {settings_q} -DskipTests test) > \"$B/build.log\" 2>&1 || \
         {{ echo \"the commit does not build (mvn test-compile failed, see $B/build.log)\"; return; }}\n\
         cat > \"$B/surefire-config.awk\" <<'SWE_FORGE_EOF'\n{surefire_awk}SWE_FORGE_EOF\n\
         surefire=$(sed 's/\\x1b\\[[0-9;]*m//g; s/^\\[DEBUG\\] //' \"$B/build.log\" | \
         awk -v src=\"$B/src\" -v inc=\"$B/{INCLUDES_FILE}\" -v exc=\"$B/{EXCLUDES_FILE}\" -v argl=\"$B/{ARGLINE_FILE}\" -f \"$B/surefire-config.awk\")\n\
         [ -z \"$surefire\" ] || {{ echo \"$surefire\"; return; }}\n\
         sed 's/\\x1b\\[[0-9;]*m//g; s/^\\[DEBUG\\] //' \"$B/build.log\" | \
         awk '/^Command line options:$/ {{ getline; print }}' > \"$B/javac-lines.txt\"\n\
         for kind in main test; do\n\
         case $kind in main) d=\"$B/src/target/classes\" ;; test) d=\"$B/src/target/test-classes\" ;; esac\n\
         awk -v d=\"$d\" -v cp=\"$B/$kind.cp\" -v opts=\"$B/$kind.opts\" '\n\
         {{ o = \"\"; c = \"\"; is = 0\n\
         for (i = 1; i <= NF; i++) {{ t = $i\n\
         if (t == \"-d\") {{ i++; if ($i == d) is = 1; continue }}\n\
         if (t == \"-sourcepath\" || t == \"-s\") {{ i++; continue }}\n\
         if (t == \"-classpath\" || t == \"-cp\") {{ i++; c = $i; continue }}\n\
         if (t ~ /[.]java$/) continue\n\
         o = o \" \" t }}\n\
         if (is) {{ print c > cp; print o > opts; found = 1 }} }}\n\
         END {{ exit found ? 0 : 1 }}' \"$B/javac-lines.txt\" || {{ printf '%s\\n' \"$d\" > \"$B/$kind.cp\"; : > \"$B/$kind.opts\"; }}\n\
         done\n\
         [ -d \"$B/src/target/test-classes\" ] || {{ echo 'the project has no compiled tests'; return; }}\n\
         [ -s \"$B/main.opts\" ] || cp \"$B/test.opts\" \"$B/main.opts\"\n\
         mkdir -p \"$B/filter/META-INF/services\" \"$B/filter-src\"\n\
         cat > \"$B/filter-src/MethodFilter.java\" <<'SWE_FORGE_EOF'\n{filter}SWE_FORGE_EOF\n\
         javac --release 11 -nowarn -d \"$B/filter\" -cp {filter_cp} \"$B/filter-src/MethodFilter.java\" >> \"$B/build.log\" 2>&1 || \
         {{ echo 'the method filter could not be compiled'; return; }}\n\
         echo sweforge.MethodFilter > \"$B/filter/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter\"\n\
         mkdir -p \"$B/resident-src\"\n\
         cat > \"$B/resident-src/Resident.java\" <<'SWE_FORGE_EOF'\n{resident}SWE_FORGE_EOF\n\
         javac --release 11 -nowarn -d \"$B/resident\" -cp {console_q} \"$B/resident-src/Resident.java\" >> \"$B/build.log\" 2>&1 || \
         {{ rm -rf \"$B/resident\"; echo 'swe-forge: the resident JVM could not be compiled' >> \"$B/build.log\"; }}\n\
         }}\n\
         why=$(build)\n\
         if [ -n \"$why\" ]; then printf '%s\\n' \"$why\" > \"$B/failed\"; else touch \"$B/ok\"; fi\n\
         fi\n\
         flock -u 9\n\
         [ -f \"$B/failed\" ] && fallback \"$(cat \"$B/failed\")\"\n\
         {changes}",
        console_q = shell_quote(&format!("{lib}/{CONSOLE_LAUNCHER}")),
        filter = with_newline(METHOD_FILTER_JAVA),
        surefire_awk = with_newline(SUREFIRE_CONFIG_AWK),
        resident = with_newline(super::resident::RESIDENT_JAVA),
        changes = changes_script(),
    )
}

/// Lines that list the worktree's changes against `HEAD` and write the `ok` result (`$OUT`,
/// `$B` and the `fallback` function are set by the caller).
pub fn changes_script() -> String {
    "{ git -c core.quotePath=false diff --name-only --no-renames HEAD -- ; \
     git -c core.quotePath=false ls-files --others --exclude-standard ; } | LC_ALL=C sort -u > \"$OUT.changed\" \
     || fallback 'git could not list the changes'\n\
     { echo ok; printf 'build %s\\n' \"$B\"\n\
     while IFS= read -r f; do\n\
     case \"$f\" in\n\
     src/main/java/*.java) [ -f \"$f\" ] && echo \"main $f\" || echo \"fallback $f was deleted\" ;;\n\
     src/test/java/*.java) [ -f \"$f\" ] && echo \"test $f\" || echo \"fallback $f was deleted\" ;;\n\
     pom.xml|src/*) echo \"fallback $f changed (not a Java source)\" ;;\n\
     esac\n\
     done < \"$OUT.changed\"; } > \"$OUT.tmp\"\n\
     why=$(grep -m1 '^fallback ' \"$OUT.tmp\")\n\
     if [ -n \"$why\" ]; then printf '%s\\n' \"$why\" > \"$OUT\"; else mv \"$OUT.tmp\" \"$OUT\"; fi\n"
        .to_string()
}

/// What one fast run does.
#[derive(Clone, Debug)]
pub struct RunPlan<'a> {
    /// The build entry (from [`Setup::Ready`]).
    pub build: &'a str,
    /// Changed main and test sources, repo-relative.
    pub main: &'a [String],
    pub test: &'a [String],
    /// `None`: the whole suite.
    pub tests: Option<&'a [String]>,
    /// Extra JVM arguments (already quoted for bash; may use `$H`).
    pub jvm_args: &'a str,
    /// Extra classpath entries placed before the launcher (may use `$H`).
    pub extra_cp: &'a str,
    /// Debian's jar directory.
    pub java_lib: &'a str,
    pub scratch: &'a str,
    /// The report bundle to write (a scratch path).
    pub bundle: &'a str,
    /// The shell lines of the run's CPU limit ([`crate::runner::cpu_limit_lines`]), placed
    /// after the compilation and before the tests' JVM: javac compiling a changed file is the
    /// build's work, bounded by the wall limit, not the tests' (the limit comes from the clean
    /// tree's runs, which compile nothing, and a killed javac would read as a compile error).
    pub cpu_limit: &'a str,
}

/// The script of a fast run (without the prelude and the `times` wrap; the CPU limit is
/// [`RunPlan::cpu_limit`]).
pub fn run_script(p: &RunPlan) -> String {
    let s = p.scratch;
    let o = format!("{s}/fast");
    let o_q = shell_quote(&o);
    let mut out = format!(
        "B={}\nO={o_q}\nK_main=\nrm -rf \"$O\" && mkdir -p \"$O/main\" \"$O/test\" \"$O/reports\" || exit 1\n\
         rm -f {failed_q}\n",
        shell_quote(p.build),
        failed_q = shell_quote(&format!("{s}/{COMPILE_FAILED_FILE}")),
    );
    let javac_log = shell_quote(&format!("{s}/{JAVAC_LOG}"));
    let failed = shell_quote(&format!("{s}/{COMPILE_FAILED_FILE}"));
    for (kind, files, cp, phase) in [
        ("main", p.main, "$(cat \"$B/main.cp\")", "main sources"),
        (
            "test",
            p.test,
            "$O/main:$(cat \"$B/test.cp\")",
            "test sources",
        ),
    ] {
        if files.is_empty() {
            continue;
        }
        let files = files
            .iter()
            .map(|f| shell_quote(f))
            .collect::<Vec<_>>()
            .join(" ");
        // Compiled overlays are kept in the build cache by the content of the changed files
        // (a candidate's repeated runs compile the same bug once); a failed compilation is
        // not kept. The test overlay's key includes the main one's.
        // The options are Maven's (no spaces inside them): split on purpose.
        out.push_str(&format!(
            "K_{kind}=$( {{ echo \"$K_main\"; for f in {files}; do printf '%s\\n' \"$f\"; cat \"$f\"; done; }} | sha1sum | cut -c1-20 )\n\
             C=\"$B/overlay-{kind}-$K_{kind}\"\n\
             if [ -f \"$C/.ok\" ]; then cp -R \"$C/.\" \"$O/{kind}/\" && rm -f \"$O/{kind}/.ok\" || exit 1\n\
             else\n\
             javac $(cat \"$B/{kind}.opts\") -d \"$O/{kind}\" -cp \"{cp}\" {files} > {javac_log} 2>&1 || \
             {{ echo '{phase}' > {failed}; cat {javac_log} >&2; exit 1; }}\n\
             T=\"$C.tmp.$$\"; rm -rf \"$T\"; mkdir -p \"$T\" && cp -R \"$O/{kind}/.\" \"$T/\" && : > \"$T/.ok\" && \
             {{ mv -T \"$T\" \"$C\" 2>/dev/null || rm -rf \"$T\"; }}\n\
             fi\n"
        ));
    }
    let args = format!("{s}/launcher.args");
    let args_q = shell_quote(&args);
    out.push_str(&format!(
        "printf '%s\\n' --disable-banner --details=none --disable-ansi-colors \
         --config=junit.platform.discovery.listener.default=logging \"--reports-dir=$O/reports\" > {args_q}\n"
    ));
    let mut select_prop = String::new();
    match p.tests {
        None => {
            out.push_str(&format!(
                "printf '%s\\n' \"--scan-classpath=$B/src/target/test-classes\" \
                 \"--include-classname=$(cat \"$B/{INCLUDES_FILE}\" 2>/dev/null || echo '{SUREFIRE_INCLUDES}')\" \
                 \"--exclude-classname=$(cat \"$B/{EXCLUDES_FILE}\" 2>/dev/null || echo '{SUREFIRE_EXCLUDES}')\" >> {args_q}\n\
                 [ -n \"$(ls -A \"$O/test\")\" ] && printf '%s\\n' \"--scan-classpath=$O/test\" >> {args_q}\n"
            ));
        }
        Some(tests) => {
            let select = format!("{s}/select.txt");
            let mut classes: Vec<&str> = Vec::new();
            for id in tests {
                let class = id.split_once('#').map_or(id.as_str(), |(c, _)| c);
                if !class.is_empty() && !classes.contains(&class) {
                    classes.push(class);
                }
            }
            out.push_str(&super::heredoc(
                &shell_quote(&select),
                &tests.iter().map(|t| format!("{t}\n")).collect::<String>(),
            ));
            out.push_str(&super::heredoc(
                &shell_quote(&format!("{s}/classes.txt")),
                &classes.iter().map(|c| format!("{c}\n")).collect::<String>(),
            ));
            // Only classes that exist: an unknown one makes the launcher log a stack trace.
            out.push_str(&format!(
                "n=0\nwhile IFS= read -r c; do f=\"$(printf '%s' \"$c\" | tr . /).class\"\n\
                 if [ -f \"$O/test/$f\" ] || [ -f \"$B/src/target/test-classes/$f\" ]; then \
                 printf -- '--select-class=%s\\n' \"$c\" >> {args_q}; n=$((n+1)); fi\n\
                 done < {classes_q}\n",
                classes_q = shell_quote(&format!("{s}/classes.txt")),
            ));
            select_prop = format!(" -Dsweforge.select={}", shell_quote(&select));
        }
    }
    let console = shell_quote(&format!("{}/{CONSOLE_LAUNCHER}", p.java_lib));
    let extra_cp = if p.extra_cp.is_empty() {
        String::new()
    } else {
        format!("{}:", p.extra_cp)
    };
    let java = format!(
        "java $(cat \"$B/{ARGLINE_FILE}\" 2>/dev/null){jvm}{select_prop} -cp \"$O/test:$O/main:$(cat \"$B/test.cp\"):$B/filter:{extra_cp}\"{console} \
         org.junit.platform.console.ConsoleLauncher @{args_q}",
        jvm = if p.jvm_args.is_empty() {
            String::new()
        } else {
            format!(" {}", p.jvm_args)
        },
    );
    let run = if p.tests.is_some() {
        // Nothing selected: like a Surefire selection that matches nothing.
        format!("if [ \"$n\" -gt 0 ]; then {java}; else true; fi\n")
    } else {
        format!("{java}\n")
    };
    out.push_str(p.cpu_limit);
    out.push_str(&run);
    out.push_str(&format!(
        "status=$?\n\
         for f in \"$O\"/reports/TEST-*.xml; do [ -f \"$f\" ] || continue; \
         printf '\\n{marker}%s -->\\n' \"$f\"; cat \"$f\"; done > {bundle_q}\n\
         (exit $status)",
        marker = crate::runner::surefire::REPORT_MARKER,
        bundle_q = shell_quote(p.bundle),
    ));
    out
}

fn with_newline(s: &str) -> String {
    if s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

/// javac's errors (`path:line: error: message`, the source line, a caret line) as the Maven
/// path quotes them: `path:[line,col] message`, paths relative to `root` when absolute.
pub fn javac_errors(log: &str, root: &str) -> Vec<String> {
    let root = root.trim_end_matches('/');
    let lines: Vec<&str> = log.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((loc, message)) = line.split_once(": error: ") else {
            continue;
        };
        let Some((path, lineno)) = loc.rsplit_once(':') else {
            continue;
        };
        if !path.ends_with(".java") || lineno.parse::<u32>().is_err() {
            continue;
        }
        let col = lines
            .iter()
            .skip(i + 1)
            .take(3)
            .find_map(|l| {
                let t = l.trim_end();
                (t.ends_with('^') && t.trim_start() == "^").then(|| t.chars().count())
            })
            .unwrap_or(1);
        let path = path
            .strip_prefix(root)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(path);
        let entry = format!("{path}:[{lineno},{col}] {message}");
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    out
}

/// The compile-error anomaly of a fast run: `compile error: main sources: …`, or `None` when
/// `phase` is absent.
pub fn compile_error(phase: Option<&str>, log: &str, root: &str) -> Option<String> {
    let phase = phase?.trim();
    let phase = if phase.is_empty() { "sources" } else { phase };
    let errors = javac_errors(log, root);
    let detail = if errors.is_empty() {
        "see the log".to_string()
    } else {
        let more = errors.len().saturating_sub(5);
        let mut d = errors
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            d.push_str(&format!(" (and {more} more)"));
        }
        d
    };
    Some(format!(
        "{} {phase}: {detail}",
        crate::runner::surefire::COMPILE_ERROR_PREFIX
    ))
}

#[cfg(test)]
mod tests;
