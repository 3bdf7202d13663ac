//! The Java image through the library on the Java demo seed (`seeds/javashelf`, Maven, 82
//! JUnit 5 tests): the base image and the repository image are made (bootstrapped offline
//! here), the image holds the compiled coverage helpers and the offline Maven settings, Maven
//! runs the whole suite and the per-test coverage run inside a container, a reset leaves no
//! build output, a second prepare reuses the image, and a project that cannot build offline
//! fails at image build with a message that says why.
//!
//! Figures for BENCHMARKS.md: `cargo test --test docker_java_image -- --nocapture
//! --test-threads=1` prints the times.

mod common;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};
use swe_forge::run::TestStatus;
use swe_forge::runner::maven::Maven;
use swe_forge::runner::{RunBudget, TestRunner};
use swe_forge::sandbox::docker::DockerSandbox;
use swe_forge::sandbox::{Limits, SandboxError};
use swe_forge::toolchain::java_maven::{JAVA_BUILD_CACHE, JAVA_HELPERS_DIR, JAVA_MAVEN_SETTINGS};

/// A one-seed manifest for a Java project directory, imported into the shared test cache.
fn import_java(dir: &Path, name: &str, source: &Path) -> swe_forge::repo::Repo {
    let manifest = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &manifest,
        format!(
            "seeds:\n  - name: {name}\n    source: {}\n    language: java\n",
            source.display()
        ),
    )
    .unwrap();
    let m = swe_forge::seed::load_manifest(&manifest).unwrap();
    swe_forge::toolchain::import(&m.seeds[0], &m.base_dir, &cache()).unwrap()
}

fn javashelf() -> swe_forge::repo::Repo {
    let dir = tempfile::tempdir().unwrap();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/javashelf");
    import_java(dir.path(), "javashelf", &seed)
}

/// The runner as the pipeline configures it for the Docker backend.
fn maven_in_image() -> Maven {
    Maven {
        helpers: Some(JAVA_HELPERS_DIR.to_string()),
        settings: Some(JAVA_MAVEN_SETTINGS.to_string()),
        build_cache: Some(JAVA_BUILD_CACHE.to_string()),
        ..Maven::new()
    }
}

fn labels(tag: &str) -> String {
    let out = std::process::Command::new("docker")
        .args([
            "image",
            "inspect",
            "--format",
            "{{json .Config.Labels}}",
            tag,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn maven_runs_the_java_seed_in_its_image() {
    if !docker_or_skip("maven_runs_the_java_seed_in_its_image") {
        return;
    }
    let repo = javashelf();
    assert_eq!(repo.profile.build_system, "maven");
    let sandbox = DockerSandbox::connect(&cache(), Limits::default())
        .unwrap()
        .with_progress(|line| eprintln!("  {line}"));
    let started = Instant::now();
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    eprintln!(
        "prepare: {:.1} s (image {}, built: {})",
        started.elapsed().as_secs_f64(),
        env.image_name().unwrap(),
        env.image_built()
    );
    let tag = env.image_name().unwrap();
    assert!(tag.starts_with("swe-forge/javashelf:"), "{tag}");
    let repo_labels = labels(&tag);
    for want in [
        "\"swe-forge.kind\":\"repo\"",
        "\"swe-forge.language\":\"java\"",
        "\"swe-forge.build-system\":\"maven\"",
        "\"swe-forge.seed\":\"javashelf\"",
    ] {
        assert!(repo_labels.contains(want), "{want} in {repo_labels}");
    }
    assert!(
        repo_labels.contains(&format!("\"swe-forge.commit\":\"{}\"", repo.commit)),
        "{repo_labels}"
    );
    let base =
        swe_forge::sandbox::image::base_tag(&swe_forge::toolchain::java_maven::BASE).unwrap();
    let base_labels = labels(&base);
    assert!(
        base_labels.contains("\"swe-forge.language\":\"java\""),
        "{base_labels}"
    );
    assert!(
        base_labels.contains("\"swe-forge.java\":\"17."),
        "{base_labels}"
    );

    let mut w = env.worker(0).unwrap();
    // What the image holds: the helpers, the settings, a clean tree owned by the test user,
    // the commit's fast-path build (with the resident JVM compiled).
    let check = w
        .exec(
            &format!(
                "set -e; H={JAVA_HELPERS_DIR}\n\
                 test -f $H/listener/sweforge/PerTestListener.class\n\
                 test -f $H/tools/sweforge/PerTestCoverage.class\n\
                 test -s $H/jacocoagent.jar\n\
                 cat $H/listener/META-INF/services/org.junit.platform.launcher.TestExecutionListener\n\
                 grep -c '<offline>true</offline>' {JAVA_MAVEN_SETTINGS}\n\
                 test ! -e target\n\
                 git status --porcelain --ignored | wc -l\n\
                 stat -c %u:%g /testbed .git {JAVA_BUILD_CACHE}\n\
                 id -u\n\
                 ls {JAVA_BUILD_CACHE}/{commit}/ok | wc -l\n\
                 test -d {JAVA_BUILD_CACHE}/{commit}/src/target/test-classes\n\
                 test -f {JAVA_BUILD_CACHE}/{commit}/resident/sweforge/Resident.class",
                commit = repo.commit
            ),
            Duration::from_secs(60),
        )
        .unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        check.exit_code,
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vec![
            "sweforge.PerTestListener",
            "1",
            "0",
            "1000:1000",
            "1000:1000",
            "1000:1000",
            "1000",
            "1"
        ],
        "{stdout}"
    );

    let m = maven_in_image();
    let budget = RunBudget {
        wall: Duration::from_secs(600),
        cpu: Some(Duration::from_secs(600)),
    };
    let started = Instant::now();
    let all = m.run(&mut *w, "all", None, budget).unwrap();
    eprintln!(
        "whole suite: {} in {:.1} s (cpu {:?} s)",
        all.summary(),
        started.elapsed().as_secs_f64(),
        all.cpu_s
    );
    assert_eq!(all.anomaly, None, "{}", all.summary());
    assert_eq!(all.results.len(), 82, "{:?}", all.results.keys());
    assert!(all.results.values().all(|r| r.status == TestStatus::Passed));
    assert_eq!(all.oom_kills, 0);
    // The fast path found the image's build of the commit.
    let setup = w
        .read_scratch("fast-setup.txt")
        .unwrap()
        .unwrap_or_default();
    let setup = String::from_utf8_lossy(&setup);
    assert!(
        setup.starts_with(&format!("ok\nbuild {JAVA_BUILD_CACHE}/")),
        "{setup}"
    );

    // Plain Maven (the fast path's fallback) in the image: the settings, Debian's read-only
    // repository as the test user, two JVMs under the container's memory limit.
    let plain = Maven {
        fast: false,
        ..maven_in_image()
    };
    let started = Instant::now();
    let slow = plain.run(&mut *w, "plain", None, budget).unwrap();
    eprintln!(
        "whole suite, plain Maven: {} in {:.1} s (cpu {:?} s)",
        slow.summary(),
        started.elapsed().as_secs_f64(),
        slow.cpu_s
    );
    assert_eq!(slow.anomaly, None, "{}", slow.summary());
    assert_eq!(slow.results.len(), 82);
    assert_eq!(slow.results, {
        let mut r = all.results.clone();
        for (id, v) in r.iter_mut() {
            v.duration_s = slow.results[id].duration_s;
        }
        r
    });
    w.reset().unwrap();

    let started = Instant::now();
    let (cov, map) = m.run_with_coverage(&mut *w, budget).unwrap();
    eprintln!(
        "coverage: {} tests, {} lines, {} in {:.1} s",
        map.tests.len(),
        map.covered_lines(),
        cov.summary(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(cov.anomaly, None, "{}", cov.summary());
    assert_eq!(map.tests.len(), 82);
    let grace = "dev.sweforge.javashelf.LoanTest#finesStartAfterTheGracePeriod".to_string();
    let isbn = "dev.sweforge.javashelf.IsbnTest#validatesIsbn10".to_string();
    let covering = map.tests_covering("src/main/java/dev/sweforge/javashelf/Loan.java", 127, 131);
    assert!(covering.contains(&grace), "{covering:?}");
    assert!(!covering.contains(&isbn), "{covering:?}");
    // The image's helpers were used: none were compiled into the scratch directory.
    let probe = w
        .exec(
            "ls /scratch; cat /sys/fs/cgroup/memory.peak /sys/fs/cgroup/memory/memory.max_usage_in_bytes 2>/dev/null | sed 's/^/peak /'",
            Duration::from_secs(30),
        )
        .unwrap();
    if let Some(peak) = String::from_utf8_lossy(&probe.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("peak ")?.trim().parse::<u64>().ok())
    {
        eprintln!("container memory peak so far: {} MiB", peak >> 20);
    }
    let listing = String::from_utf8_lossy(&probe.stdout);
    assert!(
        !listing.contains("java-helpers"),
        "helpers were built at run time: {listing}"
    );

    // A reset removes the build output; a selection runs on the clean tree.
    w.reset().unwrap();
    let after = w
        .exec(
            "test ! -e target && git status --porcelain --ignored | wc -l",
            Duration::from_secs(30),
        )
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&after.stdout).trim(), "0");
    let started = Instant::now();
    let some = m
        .run(&mut *w, "some", Some(std::slice::from_ref(&grace)), budget)
        .unwrap();
    eprintln!(
        "one test after a reset: {} in {:.1} s",
        some.summary(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(some.status(&grace), TestStatus::Passed);
    drop(w);

    let started = Instant::now();
    let again = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    eprintln!("second prepare: {:.3} s", started.elapsed().as_secs_f64());
    assert!(!again.image_built());
    assert_eq!(again.image_id(), env.image_id());
    assert_eq!(again.image_name(), env.image_name());
}

/// A project whose dependency Debian does not package fails at image build, saying so.
#[test]
fn a_project_that_cannot_build_offline_fails_at_image_build() {
    if !docker_or_skip("a_project_that_cannot_build_offline_fails_at_image_build") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("offline-miss");
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/javashelf");
    swe_forge::sandbox::local::copy_tree(&seed, &src).unwrap();
    let _ = std::fs::remove_dir_all(src.join("target"));
    let pom = std::fs::read_to_string(src.join("pom.xml")).unwrap();
    let pom = pom.replace(
        "  <dependencies>\n",
        "  <dependencies>\n    <dependency>\n      <groupId>com.example.swe-forge</groupId>\n      \
         <artifactId>not-packaged</artifactId>\n      <version>9.9.9</version>\n    </dependency>\n",
    );
    std::fs::write(src.join("pom.xml"), pom).unwrap();
    let repo = import_java(dir.path(), "java-offline-miss", &src);
    let sandbox = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let err = match swe_forge::toolchain::prepare(&sandbox, &repo) {
        Ok(env) => panic!("built {:?}", env.image_name()),
        Err(e) => e,
    };
    let SandboxError::Prepare { detail, .. } = &err else {
        panic!("{err}");
    };
    eprintln!("{detail}");
    assert!(
        detail.contains("java-offline-miss does not build offline"),
        "{detail}"
    );
    assert!(detail.contains("not-packaged"), "{detail}");
}
