//! Measurements for the Docker sandbox (ignored by default; run with
//! `SWE_FORGE_BENCH=1 cargo test --release --test docker_bench -- --ignored --nocapture --test-threads 1`):
//! base bootstrap and repository image build times, and the per-command overhead of the
//! Docker backend against the local one on the demo seed.

mod common;
use common::*;
use std::process::Command;
use std::time::{Duration, Instant};
use swe_forge::runner::pytest::Pytest;
use swe_forge::runner::{RunBudget, TestRunner};
use swe_forge::sandbox::docker::DockerSandbox;
use swe_forge::sandbox::local::LocalSandbox;
use swe_forge::sandbox::{image, Limits, Worker};
use swe_forge::toolchain::python_pytest;

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Bootstrap from nothing (`SWE_FORGE_BENCH_BOOTSTRAP=1` also drops the cached root file
/// system), import from the cached tar, first repository build, reuse, rebuild from the layer
/// cache.
#[test]
#[ignore = "a measurement (minutes, drops the base image): run by hand for BENCHMARKS.md"]
fn image_times() {
    if !docker_or_skip("image_times") {
        return;
    }
    if std::env::var("SWE_FORGE_BENCH").as_deref() != Ok("1") {
        eprintln!(
            "image_times removes every swe-forge image first: set SWE_FORGE_BENCH=1 to run it"
        );
        return;
    }
    let t0 = Instant::now();
    let progress = move |line: &str| eprintln!("[{:>6.1}s] {line}", t0.elapsed().as_secs_f64());
    let repo = demo_repo();
    let base_tag = image::base_tag(&python_pytest::BASE).unwrap();
    for tag in docker(&["images", "-q", "--filter", "label=swe-forge.kind=repo"]).lines() {
        docker(&["rmi", "-f", tag]);
    }
    if std::env::var("SWE_FORGE_BENCH_BOOTSTRAP").as_deref() == Ok("1") {
        let started = Instant::now();
        let base = image::bootstrap(&cache(), &python_pytest::BASE, true, &progress).unwrap();
        eprintln!(
            "BOOTSTRAP (debootstrap + tar + import): {:.1} s -> {}",
            started.elapsed().as_secs_f64(),
            base.tag
        );
    }
    docker(&["rmi", "-f", &base_tag]);
    docker(&["image", "prune", "-f"]);
    let started = Instant::now();
    let base = image::bootstrap(&cache(), &python_pytest::BASE, false, &progress).unwrap();
    eprintln!(
        "IMPORT from the cached tar: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let sandbox = DockerSandbox::connect(&cache(), Limits::default())
        .unwrap()
        .with_progress(progress);
    let started = Instant::now();
    let tag = swe_forge::toolchain::prepare(&sandbox, &repo)
        .unwrap()
        .image_name()
        .unwrap();
    eprintln!(
        "FIRST BUILD of {tag}: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    eprintln!(
        "REUSE (tag found): {:.3} s",
        started.elapsed().as_secs_f64()
    );
    docker(&["rmi", &tag]);
    let started = Instant::now();
    swe_forge::toolchain::prepare(&sandbox, &repo).unwrap();
    eprintln!(
        "REBUILD from the layer cache: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    eprintln!("base {} {}", base.tag, base.id);
    eprintln!(
        "{}",
        docker(&["images", "--filter", "label=swe-forge.kind"])
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median wall time per operation, local vs Docker, the two backends interleaved so that load
/// on the machine hits both alike: a trivial command, a pytest run of 5 tests, a screening
/// cycle (apply a patch, run 5 tests, reset), a patch and reset alone, the whole suite.
#[test]
#[ignore = "a timing measurement, not a check: run by hand for BENCHMARKS.md"]
fn exec_overhead() {
    if !docker_or_skip("exec_overhead") {
        return;
    }
    let repo = demo_repo();
    let local = LocalSandbox::new(&cache(), Limits::default());
    let docker_sb = DockerSandbox::connect(&cache(), Limits::default()).unwrap();
    let runner = Pytest::new(
        None,
        repo.profile.test_files.clone(),
        repo.profile.python_path.clone(),
    );
    let patch = {
        let readme = std::fs::read_to_string(repo.checkout.join("README.md")).unwrap();
        let mut lines = readme.lines();
        let (first, second) = (lines.next().unwrap(), lines.next().unwrap());
        format!("diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,2 +1,3 @@\n {first}\n+x\n {second}\n")
    };
    let envs = [
        swe_forge::toolchain::prepare(&local, &repo).unwrap(),
        swe_forge::toolchain::prepare(&docker_sb, &repo).unwrap(),
    ];
    let mut workers: Vec<Box<dyn Worker>> = Vec::new();
    let mut starts = Vec::new();
    for env in &envs {
        let started = Instant::now();
        workers.push(env.worker(0).unwrap());
        starts.push(started.elapsed().as_secs_f64());
    }
    let all = runner
        .run(
            workers[0].as_mut(),
            "all",
            None,
            RunBudget::wall(Duration::from_secs(300)),
        )
        .unwrap();
    let five: Vec<String> = all.results.keys().take(5).cloned().collect();
    let timed = |f: &mut dyn FnMut()| {
        let started = Instant::now();
        f();
        started.elapsed().as_secs_f64()
    };
    // [backend][measure] -> samples
    let mut samples = vec![vec![Vec::new(); 5]; 2];
    for round in 0..12 {
        for (b, w) in workers.iter_mut().enumerate() {
            samples[b][0].push(timed(&mut || {
                assert_eq!(
                    w.exec("true", Duration::from_secs(30)).unwrap().exit_code,
                    Some(0)
                );
            }));
            samples[b][1].push(timed(&mut || {
                let r = runner
                    .run(
                        w.as_mut(),
                        "screen",
                        Some(&five),
                        RunBudget::wall(Duration::from_secs(120)),
                    )
                    .unwrap();
                assert!(r.failures().is_empty(), "{}", r.summary());
            }));
            samples[b][2].push(timed(&mut || {
                w.apply_patch(&patch).unwrap();
                let r = runner
                    .run(
                        w.as_mut(),
                        "screen",
                        Some(&five),
                        RunBudget::wall(Duration::from_secs(120)),
                    )
                    .unwrap();
                assert!(r.failures().is_empty(), "{}", r.summary());
                w.reset().unwrap();
            }));
            samples[b][3].push(timed(&mut || {
                w.apply_patch(&patch).unwrap();
                w.reset().unwrap();
            }));
            if round % 3 == 0 {
                samples[b][4].push(timed(&mut || {
                    runner
                        .run(
                            w.as_mut(),
                            "full",
                            None,
                            RunBudget::wall(Duration::from_secs(300)),
                        )
                        .unwrap();
                }));
            }
        }
    }
    eprintln!("median ms over 12 interleaved rounds (full suite: 4)");
    eprintln!("backend | worker start | exec `true` | pytest 5 tests | patch + 5 tests + reset | patch + reset | full suite (109 tests)");
    for (b, name) in ["local", "docker"].iter().enumerate() {
        let m: Vec<f64> = samples[b].iter().map(|v| median(v.clone()) * 1e3).collect();
        eprintln!(
            "{name} | {:.0} | {:.1} | {:.0} | {:.0} | {:.0} | {:.0}",
            starts[b] * 1e3,
            m[0],
            m[1],
            m[2],
            m[3],
            m[4]
        );
    }
}

/// The fallback for hosts whose build containers cannot reach the package index: wheels
/// downloaded on the host, installed with `--no-index` (slow: a host virtualenv and a build).
#[test]
#[ignore = "slow (a host virtualenv and a full image build): run by hand when the fallback changes"]
fn wheelhouse_fallback_builds_an_image() {
    if !docker_or_skip("wheelhouse_fallback_builds_an_image") {
        return;
    }
    let repo = fixture_repo("fork_mutant");
    let client = swe_forge::sandbox::docker::Client::connect(Duration::from_secs(5)).unwrap();
    let progress = |line: &str| eprintln!("{line}");
    let base = image::ensure_base(&client, &cache(), &python_pytest::BASE, &progress).unwrap();
    let mut recipe = python_pytest::image_recipe(&repo);
    recipe.variants.retain(|v| v.name == "wheelhouse");
    let tag = image::repo_tag(&repo, &recipe, &base.id);
    docker(&["rmi", "-f", &tag]);
    let started = Instant::now();
    let img =
        image::ensure_repo_image(&client, &cache(), &repo, &recipe, &base, &progress).unwrap();
    eprintln!("WHEELHOUSE BUILD: {:.1} s", started.elapsed().as_secs_f64());
    assert!(img.built);
    let labels = docker(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config.Labels}}",
        &img.tag,
    ]);
    assert!(
        labels.contains("\"swe-forge.pip-source\":\"wheelhouse\""),
        "{labels}"
    );
    let out = Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            "--user",
            "1000",
            &img.tag,
        ])
        .args(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    docker(&["rmi", "-f", &img.tag]);
}
