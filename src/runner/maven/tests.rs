//! Tests of the Maven adapter: scripts, parsing, and the Java seed driven on the host.

use super::*;
use crate::runner::parse_bash_times;
use std::time::Duration;

#[test]
fn command_selects_tests_by_class_and_method() {
    let m = Maven::new();
    let tests = vec![
        "a.BTest#x".to_string(),
        "a.BTest#y".to_string(),
        "a.COuter$Inner#z".to_string(),
    ];
    let cmd = m.command("/s/settings.xml", Some(&tests), "");
    assert!(cmd.starts_with("mvn -o -q -B -s /s/settings.xml "), "{cmd}");
    assert!(
        cmd.contains(" -Dtest='a.BTest#x*+y*,a.COuter$Inner#z*' "),
        "{cmd}"
    );
    assert!(cmd.ends_with(" test"), "{cmd}");
    assert!(cmd.contains("-Dsurefire.failIfNoSpecifiedTests=false"));
    let all = m.command("/s/settings.xml", None, "");
    assert!(!all.contains("-Dtest="), "{all}");
    let none = m.command("/s/settings.xml", Some(&[]), "");
    assert!(none.contains("-Dtest='swe_forge_no_test#none'"), "{none}");
}

#[test]
fn script_writes_settings_cleans_and_bundles_reports() {
    let m = Maven::new();
    let s = m.script("/scratch", None);
    assert!(s.contains("cat > /scratch/maven-settings.xml <<'SWE_FORGE_EOF'\n"));
    assert!(s.contains("<localRepository>/usr/share/maven-repo</localRepository>"));
    assert!(s.contains("export JAVA_TOOL_OPTIONS='-Xmx768m"));
    let clean = s.find("-prune -exec rm -rf").unwrap();
    let mvn = s
        .find("mvn -o -q -B -s /scratch/maven-settings.xml")
        .unwrap();
    let bundle = s.find("> /scratch/surefire-reports.xml").unwrap();
    assert!(clean < mvn && mvn < bundle, "{s}");
    assert!(s.ends_with("(exit $status)"));
    let m = Maven {
        settings: Some("/etc/swe-forge/maven-settings.xml".into()),
        jvm_options: String::new(),
        ..Maven::new()
    };
    let s = m.script("/scratch", None);
    assert!(!s.contains("<<'SWE_FORGE_EOF'"));
    assert!(!s.contains("JAVA_TOOL_OPTIONS"));
    assert!(s.contains("-s /etc/swe-forge/maven-settings.xml"));
}

#[test]
fn coverage_script_attaches_the_agent_and_the_listener() {
    let m = Maven::new();
    let s = m.coverage_script("/scratch");
    assert!(s.contains("\"-Dmaven.test.additionalClasspath=$H/listener\""));
    assert!(s.contains(
        "\"-DargLine=-javaagent:$H/jacocoagent.jar=output=none,jmx=false,excludes=sweforge.* \
         -Dsweforge.coverage.dir=/scratch/coverage-exec\""
    ));
    assert!(s.contains("sweforge.PerTestCoverage . /scratch/coverage-exec /scratch/coverage.json"));
    assert!(
        s.contains("package sweforge;"),
        "helper sources are embedded"
    );
    assert!(s.contains("javac --release 11"));
    let pre = Maven {
        helpers: Some("/opt/swe-forge/java".into()),
        ..Maven::new()
    };
    assert!(pre
        .coverage_script("/scratch")
        .contains("H=/opt/swe-forge/java\n"));
}

#[test]
fn heredoc_picks_a_free_delimiter() {
    let h = heredoc("/x", "a\nSWE_FORGE_EOF\nb");
    assert!(h.starts_with("cat > /x <<'SWE_FORGE_EOF_'\n"), "{h}");
    assert!(h.ends_with("\nb\nSWE_FORGE_EOF_\n"), "{h}");
}

#[test]
fn double_quotes_keep_variables() {
    assert_eq!(double_quote("-Da=$H/x \"y\""), "\"-Da=$H/x \\\"y\\\"\"");
}

#[test]
fn wraps_with_cpu_limit_and_times() {
    let b = RunBudget {
        wall: Duration::from_secs(30),
        cpu: Some(Duration::from_millis(7200)),
    };
    let w = wrap("/s", "mvn test", b);
    assert!(
        w.starts_with("ulimit -S -t 8\nulimit -H -t 13\nmvn test\n"),
        "{w}"
    );
    assert!(w.contains("times > /s/times.txt"));
    assert_eq!(
        parse_bash_times("0m0.010s 0m0.002s\n1m2.500s 0m0.250s\n"),
        Some(62.75)
    );
}

#[test]
fn parses_the_analyser_json() {
    let json = r#"{
"a.BTest#x": {"src/main/java/a/B.java": [3,4,5], "src/main/java/a/C.java": [9]},
"a.BTest#param[1]": {"src/main/java/a/B.java": [5]},
"a.BTest#y": {}
}"#;
    let map = coverage_from_json(json).unwrap();
    let ids: Vec<String> = map
        .tests_covering("src/main/java/a/B.java", 5, 5)
        .into_iter()
        .collect();
    assert_eq!(ids, vec!["a.BTest#param", "a.BTest#x"]);
    assert_eq!(
        map.tests_covering("src/main/java/a/C.java", 1, 100).len(),
        1
    );
    assert_eq!(map.covered_lines(), 4);
    assert!(coverage_from_json("[1]").is_err());
    assert!(coverage_from_json(r#"{"a#b": {"f": ["x"]}}"#).is_err());
    assert!(coverage_from_json("{").is_err());
}

#[test]
fn compile_errors_are_recognised_from_a_run() {
    let run = Run {
        label: "screen".into(),
        requested: None,
        end: RunEnd::Exited,
        exit_code: Some(1),
        signal: None,
        results: Default::default(),
        duration_s: 1.0,
        cpu_s: None,
        log_digest: String::new(),
        log_path: None,
        anomaly: Some("compile error: main sources: A.java:[1,1] x".into()),
        oom_kills: 0,
        collection_errors: Default::default(),
        nondeterministic: Default::default(),
        file_order: Vec::new(),
        indirect: None,
    };
    assert!(is_compile_error(&run));
    let other = Run {
        anomaly: Some("build failed: x".into()),
        ..run.clone()
    };
    assert!(!is_compile_error(&other));
}

/// A worker on the host for the by-hand check below: a copy of the tree, a scratch
/// directory, `bash -c` with a timeout; no isolation.
struct HostWorker {
    root: String,
    scratch: String,
}

impl Worker for HostWorker {
    fn root(&self) -> &str {
        &self.root
    }

    fn scratch(&self) -> &str {
        &self.scratch
    }

    fn exec(
        &mut self,
        script: &str,
        timeout: Duration,
    ) -> Result<ExecOutput, crate::sandbox::SandboxError> {
        use std::os::unix::process::ExitStatusExt;
        let started = std::time::Instant::now();
        let out_path = format!("{}/.out", self.scratch);
        let err_path = format!("{}/.err", self.scratch);
        let mut child = std::process::Command::new("bash")
            .args(["-c", script])
            .current_dir(&self.root)
            .stdout(std::fs::File::create(&out_path)?)
            .stderr(std::fs::File::create(&err_path)?)
            .spawn()?;
        let mut end = RunEnd::Exited;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if started.elapsed() > timeout {
                end = RunEnd::TimedOut;
                child.kill()?;
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Ok(ExecOutput {
            end,
            exit_code: status.code(),
            signal: status.signal(),
            stdout: std::fs::read(&out_path)?,
            stderr: std::fs::read(&err_path)?,
            duration: started.elapsed(),
            oom_kills: 0,
        })
    }

    fn apply_patch(&mut self, _: &str) -> Result<(), crate::sandbox::SandboxError> {
        Err(crate::sandbox::SandboxError::Other("not supported".into()))
    }

    fn reset(&mut self) -> Result<(), crate::sandbox::SandboxError> {
        Ok(())
    }

    fn read_scratch(
        &mut self,
        name: &str,
    ) -> Result<Option<Vec<u8>>, crate::sandbox::SandboxError> {
        match std::fs::read(format!("{}/{name}", self.scratch)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn clear_scratch(&mut self) -> Result<(), crate::sandbox::SandboxError> {
        std::fs::remove_dir_all(&self.scratch)?;
        std::fs::create_dir_all(&self.scratch)?;
        Ok(())
    }
}

/// The seed through the whole adapter on this machine, on the fast path: needs `mvn`, a
/// JDK, `git`, `flock` and Debian's offline repository with the packages of
/// `dockerfiles/java-maven.md` (and `junit5`'s console launcher).
/// Skipped where the host lacks Maven, the console launcher or Debian's surefire plugin, unless
/// `SWE_FORGE_REQUIRE_JAVA=1` (CI installs them).
#[test]
fn drives_the_java_seed_on_the_host() {
    let has_mvn = std::process::Command::new("mvn")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    let missing: Vec<&str> = [
        (!has_mvn).then_some("mvn"),
        (!std::path::Path::new("/usr/share/java")
            .join(fast::CONSOLE_LAUNCHER)
            .is_file())
        .then_some("junit5's console launcher"),
        (!std::path::Path::new(
            "/usr/share/maven-repo/org/apache/maven/plugins/maven-surefire-plugin",
        )
        .is_dir())
        .then_some("Debian's surefire plugin"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !missing.is_empty() {
        assert!(
            std::env::var("SWE_FORGE_REQUIRE_JAVA").as_deref() != Ok("1"),
            "{} not installed and SWE_FORGE_REQUIRE_JAVA=1",
            missing.join(", ")
        );
        eprintln!(
            "skipping: {} not installed (.ci/run installs them)",
            missing.join(", ")
        );
        return;
    }
    drive_the_seed(true);
}

/// The same with plain Maven.
#[test]
#[ignore = "slow (plain Maven, about a minute): the plain path runs in CI through \
            tests/java_bad_input.rs (a seed that does not compile falls back to it); run by \
            hand when the plain path changes"]
fn drives_the_java_seed_on_the_host_with_maven() {
    drive_the_seed(false);
}

fn git(root: &std::path::Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

/// Whether the last run took the fast path.
fn took_fast_path(w: &mut HostWorker) -> bool {
    w.read_scratch(fast::SETUP_FILE)
        .unwrap()
        .is_some_and(|t| t.starts_with(b"ok\n"))
}

/// User + system CPU seconds of this process's finished children so far.
fn children_cpu() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn drive_the_seed(fast_path: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/javashelf");
    crate::sandbox::local::copy_tree(&seed, &root).unwrap();
    let _ = std::fs::remove_dir_all(root.join("target"));
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "seed"]);
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut w = HostWorker {
        root: root.display().to_string(),
        scratch: scratch.display().to_string(),
    };
    let m = Maven {
        fast: fast_path,
        build_cache: Some(tmp.path().join("build-cache").display().to_string()),
        ..Maven::new()
    };
    let budget = RunBudget {
        wall: Duration::from_secs(300),
        cpu: Some(Duration::from_secs(200)),
    };

    if fast_path {
        // The once-per-commit build, measured apart from the runs.
        let (t, c) = (std::time::Instant::now(), children_cpu());
        let s = w.scratch.clone();
        assert!(m.fast_setup(&mut w, &s).unwrap().is_some());
        eprintln!(
            "fast-path build: {:?} wall, {:.1}s CPU",
            t.elapsed(),
            children_cpu() - c
        );
    }
    let (t, c) = (std::time::Instant::now(), children_cpu());
    let all = m.run(&mut w, "all", None, budget).unwrap();
    eprintln!(
        "whole suite: {} in {:?} wall, {:.1}s CPU (run {:?})",
        all.summary(),
        t.elapsed(),
        children_cpu() - c,
        all.cpu_s
    );
    assert_eq!(took_fast_path(&mut w), fast_path);
    assert_eq!(all.results.len(), 82, "{:?}", all.results.keys());
    assert_eq!(all.anomaly, None, "{}", all.summary());
    assert!(all.results.len() >= 60);
    assert!(all.results.values().all(|r| r.status == TestStatus::Passed));
    assert!(all.cpu_s.is_some());

    let wanted = vec![
        "dev.sweforge.javashelf.LoanTest#finesStartAfterTheGracePeriod".to_string(),
        "dev.sweforge.javashelf.IsbnTest#validatesIsbn10".to_string(),
        "dev.sweforge.javashelf.IsbnTest#noSuchTest".to_string(),
    ];
    let three = [
        wanted[0].clone(),
        wanted[1].clone(),
        "dev.sweforge.javashelf.CatalogTest#duplicateIsbnIsRejected".to_string(),
    ];
    let (t, c) = (std::time::Instant::now(), children_cpu());
    let sel = m.run(&mut w, "three", Some(&three), budget).unwrap();
    eprintln!(
        "3-test selection: {} in {:?} wall, {:.1}s CPU",
        sel.summary(),
        t.elapsed(),
        children_cpu() - c
    );
    assert_eq!(took_fast_path(&mut w), fast_path);
    assert_eq!(sel.results.len(), 3, "{:?}", sel.results);
    let some = m.run(&mut w, "some", Some(&wanted), budget).unwrap();
    eprintln!("selection: {}", some.summary());
    assert_eq!(some.results.len(), 3, "{:?}", some.results);
    assert_eq!(some.status(&wanted[0]), TestStatus::Passed);
    assert_eq!(some.status(&wanted[1]), TestStatus::Passed);
    assert_eq!(some.status(&wanted[2]), TestStatus::Missing);

    let loan = root.join("src/main/java/dev/sweforge/javashelf/Loan.java");
    let clean = std::fs::read_to_string(&loan).unwrap();
    let buggy = clean.replace(
        "if (overdue <= GRACE_DAYS)",
        "if (overdue <= GRACE_DAYS + 1)",
    );
    assert_ne!(clean, buggy);
    std::fs::write(&loan, &buggy).unwrap();
    let killed = m.run(&mut w, "buggy", Some(&wanted[..1]), budget).unwrap();
    eprintln!("mutant: {} {:?}", killed.summary(), killed.results);
    assert_eq!(killed.status(&wanted[0]), TestStatus::Failed);
    assert_eq!(killed.anomaly, None);
    assert_eq!(took_fast_path(&mut w), fast_path);

    std::fs::write(
        &loan,
        clean.replace("return Math.min(fine, cap);", "return fine +;"),
    )
    .unwrap();
    let broken = m.run(&mut w, "broken", Some(&wanted[..1]), budget).unwrap();
    eprintln!("compile error: {:?}", broken.anomaly);
    assert!(is_compile_error(&broken), "{:?}", broken.anomaly);
    assert!(
        broken.anomaly.as_deref().unwrap().starts_with(
            "compile error: main sources: src/main/java/dev/sweforge/javashelf/Loan.java:["
        ),
        "{:?}",
        broken.anomaly
    );
    assert_eq!(broken.status(&wanted[0]), TestStatus::Missing);
    assert_eq!(took_fast_path(&mut w), fast_path);
    std::fs::write(&loan, &clean).unwrap();

    let t = std::time::Instant::now();
    let (run, map) = m.run_with_coverage(&mut w, budget).unwrap();
    eprintln!(
        "coverage: {} tests, {} lines, {} in {:?}",
        map.tests.len(),
        map.covered_lines(),
        run.summary(),
        t.elapsed()
    );
    assert_eq!(run.anomaly, None);
    assert_eq!(took_fast_path(&mut w), fast_path);
    assert_eq!(map.tests.len(), all.results.len());
    let covering = map.tests_covering("src/main/java/dev/sweforge/javashelf/Loan.java", 127, 131);
    assert!(covering.contains(&wanted[0]), "{covering:?}");
    assert!(!covering.contains(&wanted[1]), "{covering:?}");
}
