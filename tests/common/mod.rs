//! Shared helpers for the integration tests: the binary, a shared cache, fixture manifests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The swe-forge binary under test.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_swe-forge"));
    c.env("SWE_FORGE_CACHE", cache());
    c.env_remove("RUST_LOG");
    c
}

/// A cache shared by the tests (mirrors, checkouts, virtualenvs), so environments are built once.
pub fn cache() -> PathBuf {
    std::env::var_os("SWE_FORGE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"))
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Write a one-seed manifest for a fixture directory into `dir` (`java_*` fixtures are Java).
pub fn fixture_manifest(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "seeds:\n  - name: {name}\n    source: {}\n    language: {}\n",
            fixture(name).display(),
            if name.starts_with("java_") {
                "java"
            } else if name.starts_with("js_") {
                "javascript"
            } else if name.starts_with("ts_") {
                "typescript"
            } else {
                "python"
            }
        ),
    )
    .unwrap();
    path
}

pub fn text(out: &Output) -> String {
    format!(
        "status: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Read a JSON-lines file.
pub fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The JSON lines a command printed on stdout (`image tasks --json`, `audit --json`).
pub fn stdout_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{}", text(out))))
        .collect()
}

/// The `--json` summary printed by `run`.
pub fn summary(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", text(out)))
}

/// The summary entry of one seed.
pub fn seed_summary<'a>(summary: &'a serde_json::Value, seed: &str) -> &'a serde_json::Value {
    summary["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["seed"] == seed)
        .unwrap_or_else(|| panic!("no seed {seed} in {summary}"))
}

/// Processes whose working directory lies under `root` (left behind by a run).
pub fn processes_under(root: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            if cwd.starts_with(root) {
                out.push(pid);
            }
        }
    }
    out
}

/// Run the pipeline on a fixture with the local sandbox, worktrees under a private TMPDIR.
/// Returns (output, out dir, tmp root) — keep the TempDir alive while inspecting.
pub fn run_fixture(name: &str, extra: &[&str]) -> (Output, tempfile::TempDir) {
    run_fixture_in("local", name, extra)
}

/// `run` on the demo seed pyshelf with the local sandbox, 6 candidates, into DIR/out (worktrees
/// under DIR/tmp); asserts it succeeded. Keep the TempDir alive while inspecting.
pub fn run_demo_small() -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let o = bin()
        .env("TMPDIR", &tmp)
        .args([
            "run",
            "--sandbox",
            "local",
            "--only",
            "pyshelf",
            "--max-candidates",
            "6",
            "--jobs",
            "2",
            "--json",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    (o, dir)
}

/// [`run_fixture`] with the given `--sandbox`.
pub fn run_fixture_in(sandbox: &str, name: &str, extra: &[&str]) -> (Output, tempfile::TempDir) {
    run_fixture_with(sandbox, name, extra, false)
}

/// [`run_fixture`] with test synthesis on.
#[allow(dead_code)]
pub fn run_fixture_synthesizing(name: &str, extra: &[&str]) -> (Output, tempfile::TempDir) {
    run_fixture_with("local", name, extra, true)
}

fn run_fixture_with(
    sandbox: &str,
    name: &str,
    extra: &[&str],
    synthesis: bool,
) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let m = fixture_manifest(dir.path(), name);
    let out = bin()
        .env("TMPDIR", &tmp)
        .args([
            "run",
            m.to_str().unwrap(),
            "--sandbox",
            sandbox,
            "--json",
            "--jobs",
            "2",
            "--max-per-function",
            "1000",
            "--out",
        ])
        .arg(dir.path().join("out"))
        // Most fixtures test containment and bad input, not test synthesis (which has its
        // own tests): survivors stay `not-killed`, and no search time is spent.
        .args(if synthesis {
            &[][..]
        } else {
            &["--no-synthesis"][..]
        })
        // Nor task images (tests/harnesses.rs and tests/audit.rs test them): in Docker each
        // accepted task would cost a layer commit.
        .arg("--no-task-images")
        .args(extra)
        .output()
        .unwrap();
    (out, dir)
}

/// The candidates.jsonl lines of a run's out dir.
pub fn candidate_lines(dir: &Path) -> Vec<serde_json::Value> {
    jsonl(&dir.join("out/candidates.jsonl"))
}

/// Whether the Docker tests can run: true when a daemon answers and the Python base image is
/// present or can be made here (debootstrap and Debian's keyring, which `.ci/run` installs;
/// no registry answers). Otherwise they fail when `SWE_FORGE_REQUIRE_DOCKER=1` (CI) and are
/// skipped with a notice.
pub fn docker_or_skip(test: &str) -> bool {
    let why = if !swe_forge::sandbox::docker::available() {
        "no Docker daemon answers".to_string()
    } else {
        match swe_forge::sandbox::docker::DockerSandbox::connect(
            &cache(),
            swe_forge::sandbox::Limits::default(),
        ) {
            Err(e) => format!("the Docker daemon cannot be used: {e}"),
            Ok(d) => match d.base_obtainable(&swe_forge::toolchain::python_pytest::BASE) {
                Ok(()) => return true,
                Err(e) => format!("no Python base image can be had: {e}"),
            },
        }
    };
    if std::env::var("SWE_FORGE_REQUIRE_DOCKER").as_deref() == Ok("1") {
        panic!("{test}: {why} and SWE_FORGE_REQUIRE_DOCKER=1");
    }
    eprintln!("skipping {test}: {why} (set SWE_FORGE_REQUIRE_DOCKER=1 to fail instead)");
    false
}

/// Whether node and jest are on this host (Debian's `nodejs` and `jest`); otherwise a notice and
/// false, or a failure under `SWE_FORGE_REQUIRE_NODE=1`.
pub fn jest_or_skip(test: &str) -> bool {
    let ok = std::process::Command::new("jest")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return true;
    }
    if std::env::var("SWE_FORGE_REQUIRE_NODE").as_deref() == Ok("1") {
        panic!("{test}: jest is not installed and SWE_FORGE_REQUIRE_NODE=1");
    }
    eprintln!("skipping {test}: jest is not installed (Debian's `jest` package; set SWE_FORGE_REQUIRE_NODE=1 to fail instead)");
    false
}

/// The demo seed (seeds/pyshelf) imported into the shared test cache (once per test binary:
/// concurrent imports of one seed race on the mirror's refs).
pub fn demo_repo() -> swe_forge::repo::Repo {
    static DEMO: std::sync::OnceLock<swe_forge::repo::Repo> = std::sync::OnceLock::new();
    DEMO.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/demo.yaml");
        let m = swe_forge::seed::load_manifest(&manifest).unwrap();
        let seed = m.seeds.iter().find(|s| s.name == "pyshelf").unwrap();
        swe_forge::toolchain::import(seed, &m.base_dir, &cache()).unwrap()
    })
    .clone()
}

/// A fixture under tests/fixtures imported into the shared test cache.
pub fn fixture_repo(name: &str) -> swe_forge::repo::Repo {
    let dir = tempfile::tempdir().unwrap();
    let m = swe_forge::seed::load_manifest(&fixture_manifest(dir.path(), name)).unwrap();
    swe_forge::toolchain::import(&m.seeds[0], &m.base_dir, &cache()).unwrap()
}

/// Ids of the containers labelled with a swe-forge run id.
pub fn run_containers(run_id: &str) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-aq", "--no-trunc", "--filter"])
        .arg(format!("label=swe-forge.run={run_id}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The headless browser for the report tests (`chromium`, Debian's package), or `None` with a
/// notice. Without one they fail when `SWE_FORGE_REQUIRE_CHROMIUM=1` (CI).
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        });
    if found.is_some() {
        return found;
    }
    if std::env::var("SWE_FORGE_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
        panic!("{test}: chromium is not installed and SWE_FORGE_REQUIRE_CHROMIUM=1");
    }
    eprintln!(
        "skipping {test}: chromium is not installed (set SWE_FORGE_REQUIRE_CHROMIUM=1 to fail instead)"
    );
    None
}

/// Run a command with a deadline; its output, or a panic naming what hung.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
    // Drain the pipes on threads so a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}

/// Whether the host has Maven and Debian's offline Maven plugins (the local sandbox's Java
/// tests build offline with them); CI installs them (`.ci/run`) and sets
/// `SWE_FORGE_REQUIRE_JAVA=1`, which makes their absence a failure.
pub fn maven_or_skip(test: &str) -> bool {
    let mvn = Command::new("mvn")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    let plugins = "/usr/share/maven-repo/org/apache/maven/plugins";
    let missing: Vec<String> = (!mvn)
        .then(|| "mvn".to_string())
        .into_iter()
        .chain(
            [
                "maven-resources-plugin",
                "maven-compiler-plugin",
                "maven-surefire-plugin",
            ]
            .iter()
            .filter(|p| !Path::new(plugins).join(p).is_dir())
            .map(|p| format!("Debian's {p}")),
        )
        .collect();
    if !missing.is_empty() {
        assert!(
            std::env::var("SWE_FORGE_REQUIRE_JAVA").as_deref() != Ok("1"),
            "{test}: {} not installed and SWE_FORGE_REQUIRE_JAVA=1",
            missing.join(", ")
        );
        eprintln!(
            "skipping {test}: {} not installed (.ci/run installs them)",
            missing.join(", ")
        );
    }
    missing.is_empty()
}

/// The candidate (a JSON line of `swe-forge mutate --json`) in `function` whose bug patch adds a
/// line containing `added`, as a JSON string.
pub fn pick_candidate(candidates: &[serde_json::Value], function: &str, added: &str) -> String {
    candidates
        .iter()
        .find(|c| {
            c["function"] == function
                && c["bug_patch"]
                    .as_str()
                    .is_some_and(|p| p.lines().any(|l| l.starts_with('+') && l.contains(added)))
        })
        .unwrap_or_else(|| panic!("no candidate in {function} adding `{added}`"))
        .to_string()
}

/// Every candidate of the embedded demo seed `seed` (`swe-forge mutate seeds/SEED --json`).
pub fn demo_candidates(seed: &str) -> Vec<serde_json::Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(seed);
    let out = bin()
        .args(["mutate", dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    stdout_lines(&out)
}

/// Every candidate of the fixture `name` (`swe-forge mutate tests/fixtures/NAME --json`).
pub fn fixture_candidates(name: &str) -> Vec<serde_json::Value> {
    let out = bin()
        .args(["mutate", fixture(name).to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    stdout_lines(&out)
}

/// `swe-forge verify` of `candidates` (lines of `mutate --json`) on the fixture `name`: local
/// sandbox, one worker, `--json`, `extra` arguments after; its output and the run's directory
/// (the records under `out/`).
pub fn verify_on_fixture(
    name: &str,
    candidates: &[String],
    extra: &[&str],
) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let listing = dir.path().join("cands.jsonl");
    std::fs::write(&listing, candidates.join("\n") + "\n").unwrap();
    let manifest = fixture_manifest(dir.path(), name);
    let out = bin()
        .env("TMPDIR", &tmp)
        .args(["verify", manifest.to_str().unwrap(), "--candidates"])
        .arg(&listing)
        .args(["--sandbox", "local", "--jobs", "1", "--json", "--out"])
        .arg(dir.path().join("out"))
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    (out, dir)
}

/// The `test_patch` of the task whose bug is in `function`.
pub fn test_patch_of(tasks: &[serde_json::Value], function: &str) -> String {
    tasks
        .iter()
        .find(|t| t["metadata"]["location"]["function"] == function)
        .unwrap_or_else(|| panic!("no task for {function}: {tasks:?}"))["test_patch"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A directory made once per test run and shared by every test that asks for it by `name`,
/// whether the tests are threads of one process (`cargo test`) or processes of their own
/// (`cargo nextest`, which the README's test command uses). It is keyed by this test
/// executable and its parent process (the test runner), so a rebuilt binary or a new run makes
/// it afresh; the first caller runs `make` on an empty directory while the others wait on a
/// lock. An error `make` returns is kept: every test that asks reports it instead of making it
/// again. Earlier runs' directories of the same name are removed. Lives under
/// `CARGO_TARGET_TMPDIR/shared`.
pub fn made_once(
    name: &str,
    make: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let exe = std::env::current_exe().map_err(|e| format!("the test executable: {e}"))?;
    let meta = std::fs::metadata(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    exe.hash(&mut h);
    meta.len().hash(&mut h);
    meta.modified().ok().hash(&mut h);
    std::os::unix::process::parent_id().hash(&mut h);
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared");
    let prefix = format!("{name}-");
    let dir = root.join(format!("{prefix}{:016x}", h.finish()));
    let _lock = swe_forge::lock::FileLock::exclusive(&root.join(format!("{name}.lock")))
        .map_err(|e| format!("locking {}: {e}", root.display()))?;
    let (ok, failed, data) = (dir.join("ok"), dir.join("failed"), dir.join("data"));
    if ok.exists() {
        return Ok(data);
    }
    if let Ok(e) = std::fs::read_to_string(&failed) {
        return Err(e);
    }
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        if n.starts_with(&prefix) && e.path().is_dir() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    match make(&data) {
        Ok(()) => {
            std::fs::write(&ok, b"").map_err(|e| format!("{}: {e}", ok.display()))?;
            Ok(data)
        }
        Err(e) => {
            let _ = std::fs::write(&failed, &e);
            Err(e)
        }
    }
}

/// `o`, after asserting that its command succeeded (its output otherwise).
pub fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", text(&o));
    o
}

/// The tasks of an output directory by instance id, each without what differs by itself from
/// run to run (timings, log references): what shards and their merge are compared on.
pub fn records(dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    jsonl(&dir.join("tasks.jsonl"))
        .into_iter()
        .map(|t| {
            (
                t["instance_id"].as_str().unwrap().to_string(),
                swe_forge::merge::comparable(&t),
            )
        })
        .collect()
}

/// The run options the shard and cluster tests give every run (without --json and --out): a
/// small local draw of pyshelf, no synthesis, no task images.
pub const SHARD_RUN_OPTIONS: [&str; 12] = [
    "--sandbox",
    "local",
    "--only",
    "pyshelf",
    "--max-candidates",
    "8",
    "--seed",
    "3",
    "--jobs",
    "1",
    "--no-synthesis",
    "--no-task-images",
];

/// A `swe-forge serve` process, killed when dropped.
pub struct Served {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve --sandbox docker` on TASKS (its database at DB), on a free loopback port.
pub fn serve_docker(tasks: &Path, db: &Path) -> Served {
    serve_with(tasks, db, "docker", &[])
}

/// `serve --sandbox SANDBOX` (`local`: with `--unsafe-local`) on TASKS with EXTRA arguments,
/// on a free loopback port.
pub fn serve_with(tasks: &Path, db: &Path, sandbox: &str, extra: &[&str]) -> Served {
    use std::io::BufRead;
    let mut cmd = bin();
    if sandbox == "local" {
        cmd.arg("serve").arg("--unsafe-local");
    } else {
        cmd.arg("serve");
    }
    let mut child = cmd
        .arg("--tasks")
        .arg(tasks)
        .args(["--addr", "127.0.0.1:0", "--sandbox", sandbox, "--db"])
        .arg(db)
        .args(extra)
        .env_remove("SWE_FORGE_SERVE_TOKEN")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server said: {line:?}"))
        .to_string();
    Served { child, url }
}

/// `python3 -m unittest -v MODULE` in clients/python/tests against the server at URL serving
/// TASKS: every test of the module must pass, none skip.
pub fn client_module(module: &str, url: &str, tasks: &Path) {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    let out = Command::new("python3")
        .args(["-m", "unittest", "-v", module])
        .current_dir(client.join("tests"))
        .env("PYTHONPATH", &client)
        .env("SWE_FORGE_SERVE_URL", url)
        .env("SWE_FORGE_SERVE_TASKS", tasks)
        .output()
        .expect("python3");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{module} failed:\n{log}");
    assert!(!log.contains("skipped '"), "{module} skipped tests:\n{log}");
}
