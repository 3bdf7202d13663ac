//! Tests of `fast`.

use super::*;
use crate::run::TestStatus;
use crate::runner::{junit_xml, surefire};

/// The console launcher 1.9.1's legacy reports (Debian bookworm), properties and stack
/// traces trimmed: a parameterized test, a repeated one, a failure, and JUnit 4 through
/// the vintage engine.
const JUPITER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="6" skipped="0" failures="2" errors="0" time="0.623" hostname="vm" timestamp="2026-11-29T12:43:06">
<testcase name="positive(int)[2]" classname="p.XTest" time="0.001">
<failure message="expected: &lt;true&gt; but was: &lt;false&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <true> but was: <false>
	at p.XTest.positive(XTest.java:8)
]]></failure>
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]/[class:p.XTest]/[test-template:positive(int)]/[test-template-invocation:#2]
display-name: [2] -1
]]></system-out>
</testcase>
<testcase name="repeated()[1]" classname="p.XTest" time="0.002">
</testcase>
<testcase name="repeated()[2]" classname="p.XTest" time="0">
</testcase>
<testcase name="passes()" classname="p.XTest" time="0.077">
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]/[class:p.XTest]/[method:passes()]
display-name: passes()
]]></system-out>
</testcase>
<testcase name="fails()" classname="p.XTest" time="0.033">
<failure message="one is not two ==&gt; expected: &lt;1&gt; but was: &lt;2&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: one is not two ==> expected: <1> but was: <2>
	at p.XTest.fails(XTest.java:7)
]]></failure>
</testcase>
<testcase name="positive(int)[1]" classname="p.XTest" time="0.052">
</testcase>
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]
display-name: JUnit Jupiter
]]></system-out>
</testsuite>"#;

const VINTAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Vintage" tests="2" skipped="0" failures="1" errors="0" time="0.039" hostname="vm" timestamp="2026-11-29T12:43:06">
<testcase name="wrong" classname="p.OldTest" time="0.005">
<failure message="expected:&lt;5&gt; but was:&lt;4&gt;" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: expected:<5> but was:<4>
	at p.OldTest.wrong(OldTest.java:4)
]]></failure>
</testcase>
<testcase name="twice" classname="p.OldTest" time="0.001">
</testcase>
</testsuite>"#;

/// From `seeds/javashelf` (two selected tests), properties trimmed.
const SEED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="JUnit Jupiter" tests="2" skipped="0" failures="0" errors="0" time="0.203" hostname="vm" timestamp="2026-11-29T12:37:06">
<testcase name="validatesIsbn10()" classname="dev.sweforge.javashelf.IsbnTest" time="0.022">
<system-out><![CDATA[
unique-id: [engine:junit-jupiter]/[class:dev.sweforge.javashelf.IsbnTest]/[method:validatesIsbn10()]
display-name: validatesIsbn10()
]]></system-out>
</testcase>
<testcase name="finesStartAfterTheGracePeriod()" classname="dev.sweforge.javashelf.LoanTest" time="0.08">
</testcase>
</testsuite>"#;

#[test]
fn parses_console_launcher_reports_into_surefire_ids() {
    let bundle = format!(
        "\n{m}/s/fast/reports/TEST-junit-jupiter.xml -->\n{JUPITER}\n{m}/s/fast/reports/TEST-junit-vintage.xml -->\n{VINTAGE}\n{m}/s/fast/reports/TEST-seed.xml -->\n{SEED}",
        m = surefire::REPORT_MARKER
    );
    let (cases, errors) = surefire::parse_bundle(&bundle);
    assert!(errors.is_empty(), "{errors:?}");
    let r = junit_xml::into_results(cases);
    let ids: Vec<&str> = r.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "dev.sweforge.javashelf.IsbnTest#validatesIsbn10",
            "dev.sweforge.javashelf.LoanTest#finesStartAfterTheGracePeriod",
            "p.OldTest#twice",
            "p.OldTest#wrong",
            "p.XTest#fails",
            "p.XTest#passes",
            "p.XTest#positive",
            "p.XTest#repeated",
        ]
    );
    assert_eq!(r["p.XTest#positive"].status, TestStatus::Failed);
    assert_eq!(r["p.XTest#repeated"].status, TestStatus::Passed);
    assert_eq!(r["p.XTest#fails"].status, TestStatus::Failed);
    assert_eq!(r["p.OldTest#wrong"].status, TestStatus::Failed);
    assert_eq!(r["p.OldTest#twice"].status, TestStatus::Passed);
    assert_eq!(
        r["dev.sweforge.javashelf.IsbnTest#validatesIsbn10"].status,
        TestStatus::Passed
    );
}

#[test]
fn parses_the_setup_result() {
    assert_eq!(
        parse_setup(
            "ok\nbuild /c/1-abc\nmain src/main/java/a/B.java\ntest src/test/java/a/BTest.java\n"
        ),
        Setup::Ready {
            build: "/c/1-abc".into(),
            main: vec!["src/main/java/a/B.java".into()],
            test: vec!["src/test/java/a/BTest.java".into()],
        }
    );
    assert_eq!(
        parse_setup("fallback the commit does not build\n"),
        Setup::Fallback("the commit does not build".into())
    );
    assert!(matches!(parse_setup(""), Setup::Fallback(_)));
    assert!(matches!(parse_setup("ok\n"), Setup::Fallback(_)));
    assert!(matches!(
        parse_setup("ok\nbuild /b\nweird\n"),
        Setup::Fallback(_)
    ));
}

#[test]
fn quotes_javac_errors_like_maven() {
    let log = "src/main/java/dev/x/Loan.java:133: error: illegal start of expression\n        return fine +;\n                     ^\n\
               /w/repo/src/main/java/dev/x/A.java:7: error: cannot find symbol\n    foo();\n    ^\n  symbol: method foo()\n1 warning\n2 errors\n";
    assert_eq!(
        javac_errors(log, "/w/repo/"),
        [
            "src/main/java/dev/x/Loan.java:[133,22] illegal start of expression",
            "src/main/java/dev/x/A.java:[7,5] cannot find symbol",
        ]
    );
    assert_eq!(
        compile_error(Some("test sources\n"), log, "/w/repo").unwrap(),
        "compile error: test sources: src/main/java/dev/x/Loan.java:[133,22] illegal start of expression; \
         src/main/java/dev/x/A.java:[7,5] cannot find symbol"
    );
    assert_eq!(
        compile_error(Some("main sources"), "junk", "/r").unwrap(),
        "compile error: main sources: see the log"
    );
    assert_eq!(compile_error(None, log, "/r"), None);
}

fn plan<'a>(tests: Option<&'a [String]>, main: &'a [String], test: &'a [String]) -> RunPlan<'a> {
    RunPlan {
        build: "/cache/1-abc",
        main,
        test,
        tests,
        jvm_args: "",
        extra_cp: "",
        java_lib: "/usr/share/java",
        scratch: "/s",
        bundle: "/s/reports.xml",
        cpu_limit: "ulimit -S -t 7\nulimit -H -t 12\n",
    }
}

#[test]
fn run_script_compiles_overlays_and_selects_classes() {
    let main = vec!["src/main/java/a/B.java".to_string()];
    let test = vec!["src/test/java/a/B Test.java".to_string()];
    let tests = vec![
        "a.BTest#x".to_string(),
        "a.BTest#y".to_string(),
        "a.COuter$Inner#z".to_string(),
    ];
    let s = run_script(&plan(Some(&tests), &main, &test));
    assert!(s.starts_with("B=/cache/1-abc\nO=/s/fast\n"), "{s}");
    assert!(s.contains(
        "javac $(cat \"$B/main.opts\") -d \"$O/main\" -cp \"$(cat \"$B/main.cp\")\" src/main/java/a/B.java > /s/fast-javac.log 2>&1 || { echo 'main sources' > /s/fast-compile-failed.txt;"
    ), "{s}");
    assert!(
        s.contains(
            "-d \"$O/test\" -cp \"$O/main:$(cat \"$B/test.cp\")\" 'src/test/java/a/B Test.java'"
        ),
        "{s}"
    );
    let main_at = s.find("-d \"$O/main\"").unwrap();
    let test_at = s.find("-d \"$O/test\"").unwrap();
    let java_at = s
        .find("org.junit.platform.console.ConsoleLauncher")
        .unwrap();
    assert!(main_at < test_at && test_at < java_at);
    // The CPU limit is the tests' JVM's: javac runs before it is set.
    let limit_at = s.find("ulimit -S -t 7\nulimit -H -t 12\n").unwrap();
    assert!(test_at < limit_at && limit_at < java_at, "{s}");
    assert!(s.contains("cat > /s/select.txt <<'SWE_FORGE_EOF'\na.BTest#x\na.BTest#y\na.COuter$Inner#z\nSWE_FORGE_EOF\n"), "{s}");
    assert!(
        s.contains(
            "cat > /s/classes.txt <<'SWE_FORGE_EOF'\na.BTest\na.COuter$Inner\nSWE_FORGE_EOF\n"
        ),
        "{s}"
    );
    assert!(s.contains(
        "java $(cat \"$B/argline.txt\" 2>/dev/null) -Dsweforge.select=/s/select.txt -cp \"$O/test:$O/main:$(cat \"$B/test.cp\"):$B/filter:\"/usr/share/java/junit-platform-console-standalone.jar org.junit.platform.console.ConsoleLauncher @/s/launcher.args"
    ), "{s}");
    assert!(s.contains("if [ \"$n\" -gt 0 ]; then java"), "{s}");
    assert!(s.contains("--config=junit.platform.discovery.listener.default=logging"));
    assert!(s.contains("> /s/reports.xml\n(exit $status)"), "{s}");
    assert!(!s.contains("--scan-classpath"));

    let all = run_script(&plan(None, &[], &[]));
    assert!(!all.contains("javac"), "{all}");
    assert!(!all.contains("sweforge.select"), "{all}");
    assert!(all.contains(&format!(
        "\"--scan-classpath=$B/src/target/test-classes\" \"--include-classname=$(cat \"$B/includes.re\" 2>/dev/null || echo '{SUREFIRE_INCLUDES}')\""
    )), "{all}");
    let cov = run_script(&RunPlan {
        jvm_args: "\"-javaagent:$H/jacocoagent.jar\"",
        extra_cp: "$H/listener",
        ..plan(None, &[], &[])
    });
    assert!(cov.contains("java $(cat \"$B/argline.txt\" 2>/dev/null) \"-javaagent:$H/jacocoagent.jar\" -cp \"$O/test:$O/main:$(cat \"$B/test.cp\"):$B/filter:$H/listener:\"/usr"), "{cov}");
}

/// The awk program on a `mvn -X` log's Surefire block: the POM's includes and excludes
/// become the launcher's regexes; a setting the launcher would not reproduce is named.
fn surefire_config(block: &str) -> (String, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = format!(
        "[DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-compiler-plugin:3.10.1:compile' with basic configurator -->\n\
         [DEBUG]   (f) excludes = [**/Gen*.java]\n[DEBUG] -- end configuration --\n\
         [DEBUG] Configuring mojo 'org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test' with basic configurator -->\n\
         {block}[DEBUG]   (s) testSourceDirectory = /p/src/test/java\n\
         [DEBUG]   (s) additionalClasspathElements = []\n[DEBUG] -- end configuration --\n"
    );
    let script = format!(
        "sed 's/\\x1b\\[[0-9;]*m//g; s/^\\[DEBUG\\] //' | awk -v src=/p -v inc={d}/i -v exc={d}/e -v argl={d}/a -f {d}/c.awk",
        d = dir.path().display()
    );
    std::fs::write(dir.path().join("c.awk"), SUREFIRE_CONFIG_AWK).unwrap();
    let mut child = std::process::Command::new("bash")
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), log.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap_or_default();
    (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        read("i").trim().to_string(),
        read("e").trim().to_string(),
        read("a"),
    )
}

#[test]
fn surefire_s_effective_includes_and_excludes_become_the_launcher_s() {
    let (bad, inc, exc, argline) = surefire_config("");
    assert_eq!(bad, "");
    assert_eq!(inc, SUREFIRE_INCLUDES);
    assert_eq!(exc, SUREFIRE_EXCLUDES);
    assert_eq!(argline, "");
    // An argLine the launcher's JVM takes as it is (jsoup: a smaller stack).
    let (bad, _, _, argline) = surefire_config("[DEBUG]   (s) argLine = -Xss256k -Dx=1\n");
    assert_eq!(bad, "");
    assert_eq!(argline, "-Xss256k -Dx=1");
    let (bad, inc, exc, _) = surefire_config(
        "[DEBUG]   (s) includes = [**/*Test.java, **/*Check.java]\n[DEBUG]   (s) excludes = [**/Slow*.java, org/x/It?.class]\n",
    );
    assert_eq!(bad, "");
    assert_eq!(inc, "^((.*[.])?[^.]*Test|(.*[.])?[^.]*Check)$");
    assert_eq!(exc, "^((.*[.])?Slow[^.]*|org[.]x[.]It[^.])$");
    assert!(!inc.contains('\\') && !exc.contains('\\'));
    // What the launcher would not reproduce: the reason names it, and no regex is written.
    let (bad, inc, _, _) = surefire_config(
        "[DEBUG]   (s) argLine = @{jacoco} -Xmx1g\n[DEBUG]   (s) includes = [%regex[.*Foo.*]]\n[DEBUG]   (f) reuseForks = false\n",
    );
    assert_eq!(
        bad,
        "Surefire is configured with argLine=@{jacoco} -Xmx1g includes=[%regex[.*Foo.*]] reuseForks=false"
    );
    assert_eq!(inc, "");
}

#[test]
fn class_name_patterns_survive_the_argfile() {
    // The launcher's @argfile treats backslashes as escapes: the patterns avoid them.
    assert_eq!(
        SUREFIRE_INCLUDES,
        "^(.*[.])?(Test[^.]*|[^.]*Test|[^.]*Tests|[^.]*TestCase)$"
    );
    assert!(!SUREFIRE_INCLUDES.contains('\\') && !SUREFIRE_EXCLUDES.contains('\\'));
}

#[test]
fn setup_script_builds_under_a_lock_outside_the_tree() {
    let s = setup_script(
        "export X=1\n",
        "mvn -pl core",
        "/s/settings.xml",
        "/cache",
        "/usr/share/java",
        "/s",
    );
    assert!(s.starts_with("export X=1\nOUT=/s/fast-setup.txt\n"), "{s}");
    assert!(s.contains("C=/cache\nB=\"$C/$commit\"\n"), "{s}");
    assert!(s.contains("exec 9>\"$B.lock\""));
    let lock = s.find("flock 9 ||").unwrap();
    let mvn = s
        .find("mvn -pl core -o -B -X -s /s/settings.xml -DskipTests test")
        .unwrap();
    let unlock = s.find("flock -u 9").unwrap();
    assert!(lock < mvn && mvn < unlock, "{s}");
    assert!(s.contains("git archive --format=tar HEAD | tar -x -C \"$B/src\""));
    assert!(
        s.contains("package sweforge;"),
        "the filter's source is embedded"
    );
    // Surefire's effective configuration is read from the build's log, after the build.
    let awk = s.find("surefire-config.awk\" <<'SWE_FORGE_EOF'").unwrap();
    assert!(mvn < awk && awk < unlock, "{s}");
    assert!(s.contains("! grep -q -F '<modules>'"), "{s}");
    assert!(s.contains("[ -f /usr/share/java/junit-platform-console-standalone.jar ]"));
}

/// The change detection on a real git checkout (needs `git`).
#[test]
fn lists_changed_sources_against_head() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("git is not installed; skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let write = |p: &str, text: &str| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("pom.xml", "<project/>");
    write("src/main/java/a/B.java", "class B {}");
    write("src/main/java/a/C.java", "class C {}");
    write("src/test/java/a/BTest.java", "class BTest {}");
    write("src/main/resources/x.txt", "x");
    write("README.md", "r");
    write(".gitignore", "target/\n");
    let git = |args: &[&str]| {
        let st = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(st.status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "x"]);
    let out = root.join("setup.txt");
    let run = || {
        let script = format!(
            "OUT={}\nB=/cache/b\nfallback() {{ printf 'fallback %s\\n' \"$*\" > \"$OUT\"; exit 0; }}\n{}",
            shell_quote(&out.display().to_string()),
            changes_script()
        );
        let st = std::process::Command::new("bash")
            .args(["-c", &script])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(st.success());
        parse_setup(&std::fs::read_to_string(&out).unwrap())
    };
    assert_eq!(
        run(),
        Setup::Ready {
            build: "/cache/b".into(),
            main: vec![],
            test: vec![]
        }
    );
    write("src/main/java/a/B.java", "class B { int x; }");
    write("src/main/java/a/New.java", "class New {}");
    write("src/test/java/a/BTest.java", "class BTest { }");
    write("README.md", "changed");
    write("target/classes/a/B.class", "junk");
    assert_eq!(
        run(),
        Setup::Ready {
            build: "/cache/b".into(),
            main: vec![
                "src/main/java/a/B.java".into(),
                "src/main/java/a/New.java".into()
            ],
            test: vec!["src/test/java/a/BTest.java".into()],
        }
    );
    write("src/main/resources/x.txt", "y");
    assert_eq!(
        run(),
        Setup::Fallback("src/main/resources/x.txt changed (not a Java source)".into())
    );
    write("src/main/resources/x.txt", "x");
    std::fs::remove_file(root.join("src/main/java/a/C.java")).unwrap();
    assert_eq!(
        run(),
        Setup::Fallback("src/main/java/a/C.java was deleted".into())
    );
}
