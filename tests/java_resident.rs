//! The resident JVM (`src/runner/maven/resident.rs`) through the library, on the local sandbox
//! with the host's Maven: a seed qualifies against its fresh baseline, and then every run gets
//! fresh static state and restored globals (`tests/fixtures/java_static_state`: a test passes
//! only where no earlier run registered its name or changed the system property and locale)
//! while the JVM stays: it is still there between runs, and one JVM served them all.

mod common;
use common::*;
use swe_forge::baseline::{run_baseline, BaselineConfig};
use swe_forge::run::TestStatus;
use swe_forge::runner::maven::Maven;
use swe_forge::runner::TestRunner;
use swe_forge::sandbox::local::LocalSandbox;
use swe_forge::sandbox::Limits;

/// The JVMs running the resident class whose working directory is under `root`.
fn residents_under(root: &std::path::Path) -> Vec<u32> {
    processes_under(root)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("sweforge.Resident"))
        })
        .collect()
}

#[test]
fn the_resident_jvm_gives_every_run_fresh_static_state() {
    if !maven_or_skip("the_resident_jvm_gives_every_run_fresh_static_state") {
        return;
    }
    let repo = fixture_repo("java_static_state");
    let builds = tempfile::tempdir().unwrap();
    let sandbox = LocalSandbox::new(&cache(), Limits::default());
    let env = swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    let mut worker = env.worker(0).unwrap();
    let root = std::path::PathBuf::from(worker.root());
    let mut fresh = Maven::new();
    fresh.build_cache = Some(builds.path().display().to_string());
    let cfg = BaselineConfig::default();
    let baseline = run_baseline(worker.as_mut(), &fresh, &cfg).unwrap();
    assert_eq!(baseline.stable_pass.len(), 3, "{baseline:?}");
    assert!(
        residents_under(&root).is_empty(),
        "fresh runs start no resident"
    );

    let resident = fresh
        .qualify_resident(worker.as_mut(), &baseline)
        .expect("the fixture qualifies");
    assert!(resident.resident);
    let pids = residents_under(&root);
    assert_eq!(pids.len(), 1, "one resident JVM after qualifying: {pids:?}");

    let budget = baseline.budget();
    let selection = vec!["fx.RegistryTest#registersOnce".to_string()];
    for i in 0..3 {
        let run = resident
            .run(worker.as_mut(), &format!("suite#{i}"), None, budget)
            .unwrap();
        assert_eq!(run.anomaly, None, "{run:?}");
        for t in &baseline.stable_pass {
            assert_eq!(run.status(t), TestStatus::Passed, "{t} in run {i}: {run:?}");
        }
        let run = resident
            .run(
                worker.as_mut(),
                &format!("one#{i}"),
                Some(&selection),
                budget,
            )
            .unwrap();
        assert_eq!(run.status(&selection[0]), TestStatus::Passed, "{run:?}");
        assert_eq!(run.results.len(), 1, "only the selected test ran: {run:?}");
    }
    assert_eq!(
        residents_under(&root),
        pids,
        "the same JVM served every run"
    );

    // A changed main source compiles in the resident: the bug shows, and the clean tree again
    // passes (the overlay is gone from the next run's class loader).
    let registry = root.join("src/main/java/fx/Registry.java");
    let clean = std::fs::read_to_string(&registry).unwrap();
    std::fs::write(
        &registry,
        clean.replace("if (!NAMES.add(name))", "if (NAMES.add(name))"),
    )
    .unwrap();
    let buggy = resident
        .run(worker.as_mut(), "buggy", Some(&selection), budget)
        .unwrap();
    assert!(buggy.status(&selection[0]).is_failure(), "{buggy:?}");
    worker.reset().unwrap();
    let again = resident
        .run(worker.as_mut(), "clean", Some(&selection), budget)
        .unwrap();
    assert_eq!(again.status(&selection[0]), TestStatus::Passed, "{again:?}");
    assert_eq!(residents_under(&root), pids);

    drop(worker);
    assert!(
        residents_under(&root).is_empty(),
        "the resident goes with its worker"
    );
}
