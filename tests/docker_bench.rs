//! Measurements for the Docker sandbox (ignored by default; run with
//! `cargo test --release --test docker_bench -- --ignored --nocapture --test-threads 1`):
//! base bootstrap and repository image build times, and the per-command overhead of the
//! Docker backend against the local one on the demo seed.

mod common;
use common::*;
use std::process::Command;
use std::time::{Duration, Instant};
use swe_forge::lang::Language;
use swe_forge::runner::pytest::Pytest;
use swe_forge::runner::TestRunner;
use swe_forge::sandbox::docker::DockerSandbox;
use swe_forge::sandbox::local::LocalSandbox;
use swe_forge::sandbox::{image, Limits, Sandbox, Worker};

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Bootstrap from nothing (`SWE_FORGE_BENCH_BOOTSTRAP=1` also drops the cached root file
/// system), import from the cached tar, first repository build, reuse, rebuild from the layer
/// cache.
#[test]
#[ignore]
fn image_times() {
    if !docker_or_skip("image_times") {
        return;
    }
    let t0 = Instant::now();
    let progress = move |line: &str| eprintln!("[{:>6.1}s] {line}", t0.elapsed().as_secs_f64());
    let repo = demo_repo();
    let base_tag = image::base_tag(Language::Python).unwrap();
    for tag in docker(&["images", "-q", "--filter", "label=swe-forge.kind=repo"]).lines() {
        docker(&["rmi", "-f", tag]);
    }
    if std::env::var("SWE_FORGE_BENCH_BOOTSTRAP").as_deref() == Ok("1") {
        let started = Instant::now();
        let base = image::bootstrap(&cache(), Language::Python, true, &progress).unwrap();
        eprintln!("BOOTSTRAP (debootstrap + tar + import): {:.1} s -> {}", started.elapsed().as_secs_f64(), base.tag);
    }
    docker(&["rmi", "-f", &base_tag]);
    docker(&["image", "prune", "-f"]);
    let started = Instant::now();
    let base = image::bootstrap(&cache(), Language::Python, false, &progress).unwrap();
    eprintln!("IMPORT from the cached tar: {:.1} s", started.elapsed().as_secs_f64());

    let sandbox = DockerSandbox::connect(&cache(), Limits::default())
        .unwrap()
        .with_progress(progress);
    let started = Instant::now();
    let tag = sandbox.prepare(&repo).unwrap().image_name().unwrap();
    eprintln!("FIRST BUILD of {tag}: {:.1} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    sandbox.prepare(&repo).unwrap();
    eprintln!("REUSE (tag found): {:.3} s", started.elapsed().as_secs_f64());
    docker(&["rmi", &tag]);
    let started = Instant::now();
    sandbox.prepare(&repo).unwrap();
    eprintln!("REBUILD from the layer cache: {:.1} s", started.elapsed().as_secs_f64());
    eprintln!("base {} {}", base.tag, base.id);
    eprintln!("{}", docker(&["images", "--filter", "label=swe-forge.kind"]));
}

fn time_n(n: u32, mut f: impl FnMut()) -> f64 {
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed().as_secs_f64() / n as f64
}

/// Mean wall time per operation, local vs Docker: a trivial command, a pytest run of 5 tests,
/// and a screening cycle (apply a patch, run 5 tests, reset).
#[test]
#[ignore]
fn exec_overhead() {
    if !docker_or_skip("exec_overhead") {
        return;
    }
    let repo = demo_repo();
    let local = LocalSandbox::new(&cache(), Limits::default());
    let docker_sb = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let runner = Pytest::new(None, repo.profile.test_files.clone(), repo.profile.python_path.clone());
    // Five node ids from a collection run.
    let mut lw = local.prepare(&repo).unwrap().worker(0).unwrap();
    let all = runner.run(lw.as_mut(), "all", None, Duration::from_secs(300)).unwrap();
    let five: Vec<String> = all.results.keys().take(5).cloned().collect();
    let patch = {
        let readme = std::fs::read_to_string(repo.checkout.join("README.md")).unwrap();
        let first = readme.lines().next().unwrap();
        format!("diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n {first}\n+x\n")
    };
    let mut rows = Vec::new();
    for (name, sb) in [("local", &local as &dyn Sandbox), ("docker", &docker_sb as &dyn Sandbox)] {
        let env = sb.prepare(&repo).unwrap();
        let started = Instant::now();
        let mut w: Box<dyn Worker> = env.worker(0).unwrap();
        let start_worker = started.elapsed().as_secs_f64();
        let n = 30;
        w.exec("true", Duration::from_secs(30)).unwrap();
        let trivial = time_n(n, || {
            let o = w.exec("true", Duration::from_secs(30)).unwrap();
            assert_eq!(o.exit_code, Some(0));
        });
        let pytest5 = time_n(10, || {
            let r = runner.run(w.as_mut(), "screen", Some(&five), Duration::from_secs(120)).unwrap();
            assert!(r.failures().is_empty(), "{}", r.summary());
        });
        let cycle = time_n(10, || {
            w.apply_patch(&patch).unwrap();
            let r = runner.run(w.as_mut(), "screen", Some(&five), Duration::from_secs(120)).unwrap();
            assert!(r.failures().is_empty(), "{}", r.summary());
            w.reset().unwrap();
        });
        let apply = time_n(10, || {
            w.apply_patch(&patch).unwrap();
            w.reset().unwrap();
        });
        let full = time_n(3, || {
            runner.run(w.as_mut(), "full", None, Duration::from_secs(300)).unwrap();
        });
        rows.push((name, start_worker, trivial, pytest5, cycle, apply, full));
    }
    eprintln!("backend | worker start s | exec `true` ms | pytest 5 tests ms | patch+5 tests+reset ms | patch+reset ms | full suite ms");
    for (name, start, trivial, p5, cycle, apply, full) in rows {
        eprintln!(
            "{name} | {start:.2} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0}",
            trivial * 1e3,
            p5 * 1e3,
            cycle * 1e3,
            apply * 1e3,
            full * 1e3
        );
    }
}
