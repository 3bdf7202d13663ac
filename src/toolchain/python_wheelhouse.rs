//! The wheelhouse fallback of Python's repository image: the wheels it needs (test tools, the
//! project's dependencies, its build backend), downloaded on the host and installed with
//! `--no-index` when the package index does not answer from a build container.

use super::python_pytest::PYTHON_TEST_TOOLS;
use crate::repo::Repo;
use crate::sandbox::image::repo_image_name;
use crate::sandbox::local::copy_tree;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> String {
    let what = what.into();
    move |e| format!("{what}: {e}")
}

/// Wheels for the test tools, the project's dependencies and its build backend, downloaded on
/// the host: a throwaway virtualenv gets the test tools and the project (the install command
/// in a copy of the checkout), then everything it holds is downloaded with `pip download`.
pub(super) fn host_wheelhouse(
    cache: &Path,
    repo: &Repo,
    tag: &str,
    progress: &dyn Fn(&str),
) -> Result<PathBuf, String> {
    let key = tag.rsplit(':').next().unwrap_or("x");
    let dir = cache
        .join("wheelhouses")
        .join(format!("{}-{key}", repo_image_name(&repo.name)));
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    progress(&format!(
        "downloading wheels on the host into {}",
        dir.display()
    ));
    let fail = |what: &str, e: String| format!("{what}: {e}");
    let python = std::env::var("SWE_FORGE_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let tmp = tempfile::tempdir().map_err(io_err("creating a temp dir"))?;
    let venv = tmp.path().join("venv");
    run_host(Command::new(&python).args(["-m", "venv"]).arg(&venv))
        .map_err(|e| fail("python -m venv", e))?;
    let py = venv.join("bin/python");
    let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let venv_path = format!("{}:{host_path}", venv.join("bin").display());
    run_host(
        Command::new(&py)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(PYTHON_TEST_TOOLS),
    )
    .map_err(|e| fail("installing the test tools", e))?;
    let src = tmp.path().join("src");
    copy_tree(&repo.checkout, &src).map_err(io_err("copying the checkout"))?;
    if let Some(install) = &repo.profile.install_command {
        run_host(
            Command::new("bash")
                .args(["-c", install])
                .current_dir(&src)
                .env("PATH", &venv_path)
                .env("VIRTUAL_ENV", &venv),
        )
        .map_err(|e| fail(install, e))?;
    }
    let frozen = Command::new(&py)
        .args([
            "-m",
            "pip",
            "freeze",
            "--all",
            "--disable-pip-version-check",
        ])
        .output()
        .map_err(io_err("pip freeze"))?;
    let requirements: Vec<String> = String::from_utf8_lossy(&frozen.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with("-e") && !l.contains(" @ ")
        })
        .map(str::to_string)
        .collect();
    let reqs = tmp.path().join("requirements.txt");
    fs::write(&reqs, requirements.join("\n")).map_err(io_err("writing requirements"))?;
    let partial = tmp.path().join("wheels");
    run_host(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "-d",
            ])
            .arg(&partial)
            .arg("-r")
            .arg(&reqs),
    )
    .map_err(|e| fail("pip download of the environment", e))?;
    // The build backend the install command needs inside the container (isolated builds).
    let mut backend = vec!["setuptools".to_string(), "wheel".to_string()];
    let probe = "import sys, json\ntry:\n    import tomllib\n    d = tomllib.load(open('pyproject.toml', 'rb'))\n    print(json.dumps(d.get('build-system', {}).get('requires', [])))\nexcept Exception:\n    print('[]')\n";
    if let Ok(out) = Command::new(&py)
        .args(["-c", probe])
        .current_dir(&repo.checkout)
        .output()
    {
        if let Ok(list) = serde_json::from_slice::<Vec<String>>(&out.stdout) {
            backend.extend(list);
        }
    }
    run_host(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "-d",
            ])
            .arg(&partial)
            .args(&backend),
    )
    .map_err(|e| fail("pip download of the build backend", e))?;
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(io_err(format!("removing {}", dir.display())))?;
    }
    fs::create_dir_all(dir.parent().expect("has a parent"))
        .map_err(io_err("creating the wheelhouse dir"))?;
    copy_tree(&partial, &dir).map_err(io_err("storing the wheelhouse"))?;
    fs::write(dir.join(".complete"), b"").map_err(io_err("marking the wheelhouse"))?;
    Ok(dir)
}

fn run_host(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
    Err(format!(
        "{}: {}",
        out.status,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}
