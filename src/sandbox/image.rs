//! Images for the Docker sandbox: a shared base image per language, and one image per
//! repository built from a `dockerfiles/` template on top of it (`python.Dockerfile`,
//! `java-maven.Dockerfile`).
//!
//! A base image is Debian bookworm with what every container needs (python3 for the agent,
//! git for the resets, CA certificates, coreutils for `timeout`, bash) and the language's
//! toolchain ([`BaseRecipe`]). It is pulled and finished with `apt-get` where a registry
//! answers; otherwise it is bootstrapped offline: `debootstrap --variant=minbase` into a
//! directory, then (for the packages whose maintainer scripts need a working system: the JDK,
//! `ca-certificates-java`, Maven) `apt-get install` inside that directory with `chroot` and
//! /proc mounted, the directory packed into a tar (cached), and the tar imported as an image.
//!
//! Names and labels:
//! - base: `swe-forge/<language>-base:bookworm-<12 hex>`, the hash of the suite, the package
//!   lists and the recipe; labels `swe-forge.kind=base`, `swe-forge.language=python|java`,
//!   `swe-forge.source=debootstrap|registry`, and on bootstrapped images `swe-forge.suite` and
//!   the runtime's version, `swe-forge.python=<X.Y>` or `swe-forge.java=<17.0.N>`.
//! - Python repository: `swe-forge/<seed>:<12 hex>`, the hash of the template text, the base
//!   image id, the commit, the install command, the test tools and the python path, so that an
//!   unchanged repository is never rebuilt; labels `swe-forge.kind=repo`, `swe-forge.seed`,
//!   `swe-forge.commit`, `swe-forge.language`, `swe-forge.base`, `swe-forge.pip-source`.
//! - Java (Maven) repository: `swe-forge/<seed>:<12 hex>`, the hash of the template text, the
//!   base image id, the commit, the coverage helpers' sources, the Maven settings, the JVM
//!   options and the warm-up (fast-path setup) script; labels `swe-forge.kind=repo`, `swe-forge.seed`,
//!   `swe-forge.commit`, `swe-forge.language=java`, `swe-forge.base`,
//!   `swe-forge.build-system=maven`. The image holds the compiled coverage helpers at
//!   [`JAVA_HELPERS_DIR`], the offline Maven settings at [`JAVA_MAVEN_SETTINGS`], and the
//!   Maven runner's fast-path build of the commit in [`JAVA_BUILD_CACHE`]: the image build
//!   runs the runner's own setup script (`mvn -o test-compile` on a `git archive` of the
//!   commit), which doubles as the check that the project builds offline, then cleans the
//!   tree (see `dockerfiles/java-maven.Dockerfile`).
//!
//! Python packages reach a repository image from the package index (the build container uses
//! the host's CA bundle and proxy settings) or, when that fails, from a wheelhouse downloaded on
//! the host and installed with `--no-index` (`SWE_FORGE_PIP_SOURCE=index|wheelhouse` forces
//! one). Java projects resolve nothing from the network: Debian's Maven repository
//! (`/usr/share/maven-repo`) is the local repository, and Maven runs offline.
//!
//! Cache layout (under the swe-forge cache directory):
//! - `images/<language>-base-<key>.tar`: the bootstrapped root file system, imported again if
//!   the image is removed;
//! - `images/*.lock`: one process builds a given image at a time;
//! - `wheelhouses/<seed>-<key>/`: wheels for the fallback.

use super::docker::Client;
use super::local::{copy_tree, PYTHON_TEST_TOOLS};
use crate::lang::Language;
use crate::lock::FileLock;
use crate::repo::Repo;
use crate::runner::maven;
use crate::sandbox::shell_quote;
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use bollard::Docker;
use bytes::Bytes;
use futures_util::StreamExt;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The per-repository template for Python projects.
pub const PYTHON_TEMPLATE: &str = include_str!("../../dockerfiles/python.Dockerfile");
/// The per-repository template for Java projects built with Maven.
pub const JAVA_MAVEN_TEMPLATE: &str = include_str!("../../dockerfiles/java-maven.Dockerfile");
/// The Dockerfile that finishes a pulled Debian image into a base image.
pub const BASE_TEMPLATE: &str = include_str!("../../dockerfiles/base.Dockerfile");

/// Where a Java repository image keeps swe-forge's compiled coverage helpers, laid out as
/// [`crate::runner::maven::Maven::helpers`] expects: `listener/` (the JUnit Platform listener's
/// classes and its `META-INF/services` entry), `tools/` (the analyser) and `jacocoagent.jar`.
pub const JAVA_HELPERS_DIR: &str = "/opt/swe-forge/java";
/// Where a Java repository image keeps the Maven settings for Debian's offline repository
/// (`dockerfiles/maven-settings.xml`), for [`crate::runner::maven::Maven::settings`].
pub const JAVA_MAVEN_SETTINGS: &str = "/opt/swe-forge/maven-settings.xml";

/// Where a Java repository image keeps the Maven runner's fast-path builds
/// ([`crate::runner::maven::Maven::build_cache`]): outside /testbed, so that resets keep them,
/// and outside /tmp, which the agent empties before every command. The image build leaves the
/// build of its commit there (the warm-up), so workers start with it; owned by the test user.
pub const JAVA_BUILD_CACHE: &str = "/var/cache/swe-forge/maven-build";
/// Debian's jar directory in the Java base image.
const JAVA_LIB: &str = "/usr/share/java";
/// The scratch directory of the warm-up in a Java image build.
const JAVA_WARMUP_SCRATCH: &str = "/tmp/swe-forge-warmup";

/// The Debian suite of every base image.
pub const SUITE: &str = "bookworm";
/// Packages of the Python base image (on top of debootstrap's minbase).
pub const PYTHON_PACKAGES: &[&str] = &[
    "python3",
    "python3-venv",
    "git",
    "ca-certificates",
    "coreutils",
    "procps",
];
/// What every Java container needs besides the toolchain: python3 runs the agent, git the
/// resets, coreutils `timeout` (minbase has bash).
pub const JAVA_SYSTEM_PACKAGES: &[&str] =
    &["python3", "git", "ca-certificates", "coreutils", "procps"];
/// The JDK, Maven and the Maven repository of Debian packages that offline builds resolve
/// against (see `dockerfiles/java-maven.md`).
pub const JAVA_TOOLCHAIN_PACKAGES: &[&str] = &[
    "openjdk-17-jdk-headless",
    "maven",
    "junit5",
    "junit4",
    "libsurefire-java",
    "libmaven-clean-plugin-java",
    "libmaven-resources-plugin-java",
    "libmaven-compiler-plugin-java",
    "libmaven-jar-plugin-java",
    "libmaven-install-plugin-java",
    "libjacoco-java",
];

/// What the base image of a language holds and how it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseRecipe {
    pub language: Language,
    /// Packages debootstrap installs itself (`--include`).
    pub packages: &'static [&'static str],
    /// Packages installed afterwards with `apt-get` in the bootstrapped root (`chroot`, /proc
    /// mounted). debootstrap configures its packages in one `dpkg --configure --force-depends`
    /// pass, in no dependency order, and without a usable JVM `ca-certificates-java` cannot
    /// make its keystore; apt orders the configuration properly.
    pub later_packages: &'static [&'static str],
    /// The label, `swe-forge.<name>`, that records the runtime's version on a bootstrapped
    /// image.
    pub version_label: &'static str,
}

impl BaseRecipe {
    /// Every package, in install order (what the registry path installs with one `apt-get`).
    pub fn all_packages(&self) -> Vec<&'static str> {
        self.packages
            .iter()
            .chain(self.later_packages)
            .copied()
            .collect()
    }
}

/// The recipe of the base image for `language`.
pub fn base_recipe(language: Language) -> BaseRecipe {
    match language {
        Language::Python => BaseRecipe {
            language,
            packages: PYTHON_PACKAGES,
            later_packages: &[],
            version_label: "python",
        },
        Language::Java => BaseRecipe {
            language,
            packages: JAVA_SYSTEM_PACKAGES,
            later_packages: JAVA_TOOLCHAIN_PACKAGES,
            version_label: "java",
        },
    }
}
/// The user that owns /testbed and runs every command in a container.
pub const TEST_USER: &str = "tester";
pub const TEST_UID: u32 = 1000;
/// Bumped when the way base images are made changes.
const BASE_RECIPE: &str = "2";
/// The image pulled where a registry answers.
const REGISTRY_BASE: &str = "debian:bookworm-slim";
/// Every file of a build context gets this modification time (2000-01-01), so that the same
/// content gives the same context (and zip-based tools accept the timestamps).
const CONTEXT_MTIME: u64 = 946_684_800;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("docker: {context}: {source}")]
    Docker {
        context: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("bootstrapping the base image failed: {0}")]
    Bootstrap(String),
    #[error("building image `{tag}` failed: {detail}")]
    Build { tag: String, detail: String },
    #[error("preparing the wheelhouse failed: {0}")]
    Wheelhouse(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Unsupported(String),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
    let context = context.into();
    move |source| ImageError::Io { context, source }
}

fn docker_err(context: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> ImageError {
    let context = context.into();
    move |source| ImageError::Docker { context, source }
}

/// An image by tag and id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    pub tag: String,
    /// `sha256:…`
    pub id: String,
    /// Whether this call built (or imported) it rather than finding it.
    pub built: bool,
}

/// Where progress lines go (a terminal bar, a log).
pub type Progress<'a> = &'a dyn Fn(&str);

/// The tag of the base image for `language`.
pub fn base_tag(language: Language) -> Result<String, ImageError> {
    let recipe = base_recipe(language);
    let mut h = blake3::Hasher::new();
    h.update(BASE_RECIPE.as_bytes());
    h.update(SUITE.as_bytes());
    h.update(recipe.packages.join(",").as_bytes());
    if !recipe.later_packages.is_empty() {
        h.update(b"+");
        h.update(recipe.later_packages.join(",").as_bytes());
    }
    let key = &h.finalize().to_hex()[..12];
    Ok(format!("swe-forge/{}-base:{SUITE}-{key}", language.name()))
}

/// `swe-forge image bootstrap`: make the base image for `language` (pulled where a registry
/// answers, else debootstrapped), reusing it when present unless `force`.
pub fn bootstrap(
    cache: &Path,
    language: Language,
    force: bool,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let client = Client::connect(Duration::from_secs(5)).map_err(docker_err("connecting"))?;
    if force {
        let tag = base_tag(language)?;
        let _ = fs::remove_file(base_tar_path(cache, &tag));
        if client.block_on(client.docker().inspect_image(&tag)).is_ok() {
            progress(&format!("removing {tag}"));
            let opts = bollard::query_parameters::RemoveImageOptionsBuilder::default()
                .force(true)
                .build();
            client
                .block_on(client.docker().remove_image(&tag, Some(opts), None))
                .map_err(docker_err(format!("removing {tag}")))?;
        }
    }
    ensure_base(&client, cache, language, progress)
}

/// The base image for `language`: found, imported from the cached root file system, pulled
/// from a registry, or bootstrapped with debootstrap, in that order.
pub fn ensure_base(
    client: &Client,
    cache: &Path,
    language: Language,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let tag = base_tag(language)?;
    if let Some(id) = image_id(client, &tag)? {
        return Ok(ImageRef {
            tag,
            id,
            built: false,
        });
    }
    let images = cache.join("images");
    let _lock = FileLock::exclusive(&images.join(format!("{}.lock", file_key(&tag))))
        .map_err(io_err("locking the base image"))?;
    if let Some(id) = image_id(client, &tag)? {
        return Ok(ImageRef {
            tag,
            id,
            built: false,
        });
    }
    let tar = base_tar_path(cache, &tag);
    if !tar.exists() && pull_allowed() {
        match build_base_from_registry(client, &tag, language, progress) {
            Ok(id) => {
                return Ok(ImageRef {
                    tag,
                    id,
                    built: true,
                })
            }
            Err(e) => {
                tracing::info!("no base image from a registry ({e}); bootstrapping offline");
                progress("no registry answers: bootstrapping the base image with debootstrap");
            }
        }
    }
    if !tar.exists() {
        debootstrap_tar(&tar, language, progress)?;
    }
    let id = import_rootfs(client, &tar, &tag, language, progress)?;
    Ok(ImageRef {
        tag,
        id,
        built: true,
    })
}

fn base_tar_path(cache: &Path, tag: &str) -> PathBuf {
    cache.join("images").join(format!("{}.tar", file_key(tag)))
}

/// `swe-forge/python-base:bookworm-abc` → `python-base-bookworm-abc`.
fn file_key(tag: &str) -> String {
    tag.trim_start_matches("swe-forge/")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn pull_allowed() -> bool {
    !matches!(
        std::env::var("SWE_FORGE_BASE_PULL").as_deref(),
        Ok("0") | Ok("no") | Ok("false")
    )
}

/// The id of the image with this tag, `None` when absent.
pub fn image_id(client: &Client, tag: &str) -> Result<Option<String>, ImageError> {
    match client.block_on(client.docker().inspect_image(tag)) {
        Ok(img) => Ok(img.id),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(None),
        Err(e) => Err(ImageError::Docker {
            context: format!("inspecting {tag}"),
            source: e,
        }),
    }
}

/// Pull the Debian image (giving up quickly when no registry answers) and install the packages
/// on top of it with a small Dockerfile.
fn build_base_from_registry(
    client: &Client,
    tag: &str,
    language: Language,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let from = std::env::var("SWE_FORGE_BASE_IMAGE").unwrap_or_else(|_| REGISTRY_BASE.into());
    let (name, version) = from.rsplit_once(':').unwrap_or((from.as_str(), "latest"));
    let opts = CreateImageOptionsBuilder::default()
        .from_image(name)
        .tag(version)
        .build();
    let docker = client.docker();
    let pulled = client.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), async {
            let mut stream = docker.create_image(Some(opts), None, None);
            while let Some(item) = stream.next().await {
                item?;
            }
            Ok::<(), bollard::errors::Error>(())
        })
        .await
    });
    match pulled {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(docker_err(format!("pulling {from}"))(e)),
        Err(_) => {
            return Err(ImageError::Bootstrap(format!(
                "pulling {from} took longer than 20 s"
            )))
        }
    }
    let packages = base_recipe(language).all_packages().join(" ");
    progress(&format!("pulled {from}; installing {packages}"));
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    let dockerfile = env
        .render_str(
            BASE_TEMPLATE,
            minijinja::context! {
                from => from,
                packages => packages,
                user => TEST_USER,
                uid => TEST_UID,
                language => language.name(),
            },
        )
        .map_err(|e| ImageError::Build {
            tag: tag.into(),
            detail: format!("rendering dockerfiles/base.Dockerfile: {e}"),
        })?;
    let mut ctx = ContextTar::new();
    ctx.add_file("Dockerfile", dockerfile.as_bytes(), 0o644)
        .map_err(io_err("making the build context"))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Whether this process can debootstrap a root file system: root, and debootstrap installed.
fn can_debootstrap() -> Result<(), ImageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ImageError::Bootstrap(
            "debootstrap needs root: run `sudo swe-forge image bootstrap` once (the image is \
             then shared by every user of this Docker engine)"
                .into(),
        ));
    }
    if Command::new("debootstrap")
        .arg("--version")
        .output()
        .is_err()
    {
        return Err(ImageError::Bootstrap(
            "debootstrap is not installed (`apt-get install debootstrap`)".into(),
        ));
    }
    Ok(())
}

/// Whether the base image for `language` is present or can be made without a registry: it
/// exists, its root file system is cached, or this process can debootstrap one. (`auto`
/// falls back to the local backend otherwise, rather than failing every seed.)
pub fn base_obtainable(
    client: &Client,
    cache: &Path,
    language: Language,
) -> Result<(), ImageError> {
    let tag = base_tag(language)?;
    if image_id(client, &tag)?.is_some() || base_tar_path(cache, &tag).exists() {
        return Ok(());
    }
    can_debootstrap()
}

fn debootstrap_tar(
    tar: &Path,
    language: Language,
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let recipe = base_recipe(language);
    let packages = recipe.packages;
    can_debootstrap()?;
    let mirror = debian_mirror().ok_or_else(|| {
        ImageError::Bootstrap(
            "no Debian mirror found in /etc/apt/sources.list(.d); set SWE_FORGE_DEBIAN_MIRROR"
                .into(),
        )
    })?;
    let dir = tar.parent().expect("the tar lives in the images dir");
    fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let work = tempfile::Builder::new()
        .prefix(".rootfs-")
        .tempdir_in(dir)
        .map_err(io_err("creating the debootstrap directory"))?;
    let rootfs = work.path().join("rootfs");
    progress(&format!(
        "debootstrap --variant=minbase {SUITE} from {mirror} with {}",
        packages.join(",")
    ));
    let started = Instant::now();
    run_debootstrap(&rootfs, &mirror, packages, progress)?;
    progress(&format!(
        "debootstrap finished in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    if !recipe.later_packages.is_empty() {
        let started = Instant::now();
        progress(&format!(
            "apt-get install in the new root: {}",
            recipe.later_packages.join(" ")
        ));
        apt_install_in_root(&rootfs, recipe.later_packages, progress)?;
        progress(&format!(
            "apt-get finished in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
    }
    progress("packing the root file system");
    // Downloaded packages and index files are not needed in the image.
    for sub in ["var/cache/apt/archives", "var/lib/apt/lists"] {
        if let Ok(entries) = fs::read_dir(rootfs.join(sub)) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
    add_test_user(&rootfs).map_err(io_err("adding the test user to the root file system"))?;
    let partial = work.path().join("rootfs.tar");
    write_rootfs_tar(&rootfs, &partial)?;
    fs::rename(&partial, tar).map_err(io_err(format!("moving the tar to {}", tar.display())))?;
    Ok(())
}

fn run_debootstrap(
    rootfs: &Path,
    mirror: &str,
    packages: &[&str],
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let mut cmd = Command::new("debootstrap");
    cmd.arg("--variant=minbase")
        .arg(format!("--include={}", packages.join(",")))
        .arg("--components=main")
        .arg(SUITE)
        .arg(rootfs)
        .arg(mirror);
    let (status, tail, stderr) = stream_command(
        &mut cmd,
        "debootstrap",
        &|line| {
            const SHOWN: [&str; 5] = [
                "I: Retrieving",
                "I: Extracting",
                "I: Unpacking",
                "I: Configuring",
                "I: Installing",
            ];
            SHOWN
                .iter()
                .any(|p| line.starts_with(p))
                .then(|| line.trim_start_matches("I: "))
        },
        progress,
    )?;
    if status.success() {
        return Ok(());
    }
    let log = fs::read_to_string(rootfs.join("debootstrap/debootstrap.log")).unwrap_or_default();
    let log_tail: Vec<&str> = log.lines().rev().take(15).collect();
    Err(ImageError::Bootstrap(format!(
        "debootstrap exited with {status}:\n{}\n{}\n{}",
        tail.join("\n"),
        stderr.trim(),
        log_tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )))
}

/// Run a setup command, showing the stdout lines `shown` picks as progress; returns its exit
/// status, the last 30 lines of stdout and the whole stderr (for the error message).
fn stream_command(
    cmd: &mut Command,
    what: &str,
    shown: &dyn Fn(&str) -> Option<&str>,
    progress: Progress<'_>,
) -> Result<(std::process::ExitStatus, Vec<String>, String), ImageError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_err(format!("starting {what}")))?;
    let stderr = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    });
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if let Some(shown) = shown(&line) {
            progress(shown);
        }
        tail.push_back(line);
        if tail.len() > 30 {
            tail.pop_front();
        }
    }
    let status = child
        .wait()
        .map_err(io_err(format!("waiting for {what}")))?;
    let stderr = err_thread.join().unwrap_or_default();
    Ok((status, tail.into(), stderr))
}

/// /proc mounted in a root file system for as long as this lives.
struct ProcMount(PathBuf);

impl ProcMount {
    fn mount(rootfs: &Path) -> Result<ProcMount, ImageError> {
        let target = rootfs.join("proc");
        fs::create_dir_all(&target).map_err(io_err(format!("creating {}", target.display())))?;
        let out = Command::new("mount")
            .args(["-t", "proc", "proc"])
            .arg(&target)
            .stdin(Stdio::null())
            .output()
            .map_err(io_err("running mount"))?;
        if !out.status.success() {
            return Err(ImageError::Bootstrap(format!(
                "mounting /proc in {} failed ({}): {}; the JDK's installation needs it (run as \
                 root, outside a container that forbids mounts)",
                rootfs.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(ProcMount(target))
    }
}

impl Drop for ProcMount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.0)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Lazily, so that nothing below the root is left busy.
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// `apt-get update && apt-get install --no-install-recommends PACKAGES` inside a bootstrapped
/// root (its `/etc/apt/sources.list` names the mirror debootstrap used), with /proc mounted
/// for the maintainer scripts (a JVM does not start without it) and a clean environment but
/// for the host's proxy settings.
fn apt_install_in_root(
    rootfs: &Path,
    packages: &[&str],
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let _proc = ProcMount::mount(rootfs)?;
    // Validity of the Release file is not checked (as debootstrap does not): a snapshot
    // mirror's Release files are past their `Valid-Until`. Signatures still are.
    let script = format!(
        "set -e\n\
         apt-get -q -o Acquire::Check-Valid-Until=false update\n\
         apt-get -q -y --no-install-recommends install {}\n\
         apt-get -q clean\n",
        packages.join(" ")
    );
    let mut cmd = Command::new("chroot");
    cmd.arg(rootfs)
        .args(["/bin/bash", "-c", &script])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", "/root");
    for key in [
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
    ] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    let (status, tail, stderr) = stream_command(
        &mut cmd,
        "chroot apt-get",
        &|line| {
            (line.starts_with("Setting up ") || line.starts_with("Fetched "))
                .then(|| line.trim_end_matches(" ..."))
        },
        progress,
    )?;
    if status.success() {
        return Ok(());
    }
    Err(ImageError::Bootstrap(format!(
        "apt-get install in the bootstrapped root exited with {status} (is the Debian mirror \
         reachable? set SWE_FORGE_DEBIAN_MIRROR or the http_proxy variables):\n{}\n{}",
        tail.join("\n"),
        stderr.trim()
    )))
}

/// The Debian mirror debootstrap uses: `SWE_FORGE_DEBIAN_MIRROR`, else the first Debian
/// archive (not a security or updates suite) named in the host's apt sources.
pub fn debian_mirror() -> Option<String> {
    if let Ok(m) = std::env::var("SWE_FORGE_DEBIAN_MIRROR") {
        if !m.trim().is_empty() {
            return Some(m.trim().to_string());
        }
    }
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(entries) = fs::read_dir("/etc/apt/sources.list.d") {
        let mut more: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        more.sort();
        files.extend(more);
    }
    let mut entries = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        match file.extension().and_then(|e| e.to_str()) {
            Some("sources") => entries.extend(parse_deb822_sources(&text)),
            Some("list") => entries.extend(parse_one_line_sources(&text)),
            _ => {}
        }
    }
    pick_debian_mirror(&entries)
}

/// One apt source: a URI and its suites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AptSource {
    pub uri: String,
    pub suites: Vec<String>,
}

/// `deb [options] URI SUITE COMPONENTS…` lines (`deb-src` and comments skipped).
pub fn parse_one_line_sources(text: &str) -> Vec<AptSource> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        if words.next() != Some("deb") {
            continue;
        }
        let mut rest: Vec<&str> = words.collect();
        if rest.first().is_some_and(|w| w.starts_with('[')) {
            let end = rest.iter().position(|w| w.ends_with(']')).unwrap_or(0);
            rest.drain(..=end);
        }
        if rest.len() >= 2 {
            out.push(AptSource {
                uri: rest[0].to_string(),
                suites: vec![rest[1].to_string()],
            });
        }
    }
    out
}

/// deb822 `.sources` stanzas (`Types: deb`, `URIs:`, `Suites:`; `Enabled: no` skipped).
pub fn parse_deb822_sources(text: &str) -> Vec<AptSource> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut fields: HashMap<String, String> = HashMap::new();
        let mut last: Option<String> = None;
        for line in stanza.lines() {
            if line.trim_start().starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                if let Some(k) = &last {
                    let v = fields.entry(k.clone()).or_default();
                    v.push(' ');
                    v.push_str(line.trim());
                }
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                let k = k.trim().to_ascii_lowercase();
                fields.insert(k.clone(), v.trim().to_string());
                last = Some(k);
            }
        }
        let has = |k: &str| {
            fields
                .get(k)
                .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        };
        let types = has("types").unwrap_or_default();
        if !types.iter().any(|t| t == "deb") {
            continue;
        }
        if fields
            .get("enabled")
            .is_some_and(|v| v.eq_ignore_ascii_case("no"))
        {
            continue;
        }
        let suites = has("suites").unwrap_or_default();
        for uri in has("uris").unwrap_or_default() {
            out.push(AptSource {
                uri,
                suites: suites.clone(),
            });
        }
    }
    out
}

/// The first source that looks like Debian's main archive: a Debian suite name without a
/// `-security`/`-updates`/`-backports` suffix, and not a security archive.
pub fn pick_debian_mirror(sources: &[AptSource]) -> Option<String> {
    const SUITES: [&str; 11] = [
        "bookworm",
        "trixie",
        "forky",
        "bullseye",
        "buster",
        "sid",
        "stable",
        "testing",
        "unstable",
        "oldstable",
        "oldoldstable",
    ];
    sources
        .iter()
        .find(|s| {
            (s.uri.starts_with("http://")
                || s.uri.starts_with("https://")
                || s.uri.starts_with("file:"))
                && !s.uri.contains("security")
                && s.suites
                    .iter()
                    .any(|suite| SUITES.contains(&suite.as_str()))
        })
        .map(|s| s.uri.trim_end_matches('/').to_string())
}

/// What the base image has besides packages (the registry path does the same in
/// `dockerfiles/base.Dockerfile`): the test user (home /tmp), /testbed and /scratch owned by it,
/// and /testbed marked safe for git.
fn add_test_user(rootfs: &Path) -> std::io::Result<()> {
    let append = |file: &str, line: String| -> std::io::Result<()> {
        let path = rootfs.join(file);
        if !path.exists() {
            return Ok(());
        }
        let mut text = fs::read_to_string(&path)?;
        if text
            .lines()
            .any(|l| l.starts_with(&format!("{TEST_USER}:")))
        {
            return Ok(());
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        fs::write(&path, text)
    };
    append(
        "etc/passwd",
        format!("{TEST_USER}:x:{TEST_UID}:{TEST_UID}:swe-forge tests:/tmp:/bin/bash"),
    )?;
    append("etc/group", format!("{TEST_USER}:x:{TEST_UID}:"))?;
    append("etc/shadow", format!("{TEST_USER}:!:0:0:99999:7:::"))?;
    append("etc/gshadow", format!("{TEST_USER}:!::"))?;
    fs::write(
        rootfs.join("etc/gitconfig"),
        "[safe]\n\tdirectory = /testbed\n",
    )?;
    for dir in ["testbed", "scratch"] {
        let d = rootfs.join(dir);
        fs::create_dir_all(&d)?;
        std::os::unix::fs::chown(&d, Some(TEST_UID), Some(TEST_UID))?;
    }
    Ok(())
}

/// Pack a root file system into a tar (owners, modes, symlinks and device nodes kept; the
/// contents of /proc, /sys and /dev left out, the container runtime provides them).
fn write_rootfs_tar(rootfs: &Path, out: &Path) -> Result<(), ImageError> {
    let file = fs::File::create(out).map_err(io_err(format!("creating {}", out.display())))?;
    let mut builder = tar::Builder::new(std::io::BufWriter::with_capacity(1 << 20, file));
    let err = |p: &Path| io_err(format!("packing {}", p.display()));
    let walker = walkdir::WalkDir::new(rootfs)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let rel = e.path().strip_prefix(rootfs).unwrap_or(e.path());
            let mut comps = rel.components();
            let top = comps.next().map(|c| c.as_os_str().to_owned());
            !(comps.next().is_some()
                && top.is_some_and(|t| t == "proc" || t == "sys" || t == "dev"))
        });
    for entry in walker {
        let entry = entry.map_err(|e| ImageError::Io {
            context: "walking the root file system".into(),
            source: std::io::Error::other(e),
        })?;
        let path = entry.path();
        let rel = path.strip_prefix(rootfs).expect("walkdir yields children");
        let meta = fs::symlink_metadata(path).map_err(err(path))?;
        let ft = meta.file_type();
        let mut header = tar::Header::new_gnu();
        header.set_mode(meta.mode() & 0o7777);
        header.set_uid(meta.uid() as u64);
        header.set_gid(meta.gid() as u64);
        header.set_mtime(meta.mtime().max(0) as u64);
        header.set_size(0);
        if ft.is_dir() {
            header.set_entry_type(tar::EntryType::Directory);
            builder
                .append_data(&mut header, rel, std::io::empty())
                .map_err(err(path))?;
        } else if ft.is_symlink() {
            let target = fs::read_link(path).map_err(err(path))?;
            header.set_entry_type(tar::EntryType::Symlink);
            builder
                .append_link(&mut header, rel, &target)
                .map_err(err(path))?;
        } else if ft.is_file() {
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(meta.len());
            let f = fs::File::open(path).map_err(err(path))?;
            builder
                .append_data(&mut header, rel, f)
                .map_err(err(path))?;
        } else if ft.is_char_device() || ft.is_block_device() || ft.is_fifo() {
            header.set_entry_type(if ft.is_char_device() {
                tar::EntryType::Char
            } else if ft.is_block_device() {
                tar::EntryType::Block
            } else {
                tar::EntryType::Fifo
            });
            let rdev = meta.rdev();
            header
                .set_device_major(libc::major(rdev))
                .map_err(err(path))?;
            header
                .set_device_minor(libc::minor(rdev))
                .map_err(err(path))?;
            builder
                .append_data(&mut header, rel, std::io::empty())
                .map_err(err(path))?;
        }
        // Sockets are skipped.
    }
    let mut w = builder.into_inner().map_err(io_err("finishing the tar"))?;
    std::io::Write::flush(&mut w).map_err(io_err("writing the tar"))?;
    Ok(())
}

/// The runtime version a root file system ships: Python's `3.11` from `usr/bin/python3.N`,
/// the JDK's `17.0.15` from `JAVA_VERSION` in `usr/lib/jvm/<jdk>/release`.
fn rootfs_runtime_version(rootfs_tar: &Path, language: Language) -> Option<String> {
    let f = fs::File::open(rootfs_tar).ok()?;
    let mut archive = tar::Archive::new(std::io::BufReader::with_capacity(1 << 20, f));
    for entry in archive.entries().ok()? {
        let mut entry = entry.ok()?;
        let path = entry.path().ok()?.to_string_lossy().into_owned();
        match language {
            Language::Python => {
                if let Some(v) = path.strip_prefix("usr/bin/python3.") {
                    if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
                        return Some(format!("3.{v}"));
                    }
                }
            }
            Language::Java => {
                let Some(rest) = path.strip_prefix("usr/lib/jvm/") else {
                    continue;
                };
                if !(rest.ends_with("/release") && rest.matches('/').count() == 1)
                    || entry.header().entry_type() != tar::EntryType::Regular
                {
                    continue;
                }
                let mut text = String::new();
                entry.read_to_string(&mut text).ok()?;
                if let Some(v) = java_release_version(&text) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// `JAVA_VERSION="17.0.15"` in a JDK's `release` file.
fn java_release_version(release: &str) -> Option<String> {
    release.lines().find_map(|l| {
        let v = l.strip_prefix("JAVA_VERSION=")?.trim().trim_matches('"');
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// Import a root file system tar as an image (docker import), streaming it from disk.
fn import_rootfs(
    client: &Client,
    tar: &Path,
    tag: &str,
    language: Language,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let (repo, version) = tag.rsplit_once(':').expect("tags have a version");
    let recipe = base_recipe(language);
    progress(&format!("reading the {} version", recipe.version_label));
    let runtime_version = rootfs_runtime_version(tar, language).unwrap_or_default();
    progress(&format!("importing {} as {tag}", tar.display()));
    let changes = vec![
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        "ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC".to_string(),
        "WORKDIR /testbed".to_string(),
        "CMD [\"bash\"]".to_string(),
        "LABEL swe-forge.kind=base".to_string(),
        format!("LABEL swe-forge.language={}", language.name()),
        "LABEL swe-forge.source=debootstrap".to_string(),
        format!("LABEL swe-forge.suite={SUITE}"),
        format!("LABEL swe-forge.{}={runtime_version}", recipe.version_label),
    ];
    let opts = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(changes)
        .build();
    let file = fs::File::open(tar).map_err(io_err(format!("opening {}", tar.display())))?;
    let chunks = futures_util::stream::unfold(Some(file), |state| async move {
        let mut file = state?;
        let mut buf = vec![0u8; 1 << 20];
        match file.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    let docker = client.docker();
    client
        .block_on(async {
            let mut stream =
                docker.create_image(Some(opts), Some(bollard::body_try_stream(chunks)), None);
            while let Some(item) = stream.next().await {
                item?;
            }
            Ok::<(), bollard::errors::Error>(())
        })
        .map_err(docker_err(format!("importing {}", tar.display())))?;
    image_id(client, tag)?
        .ok_or_else(|| ImageError::Bootstrap(format!("{tag} is absent after the import")))
}

/// Where the Python packages of a repository image come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipSource {
    /// The package index, reached from the build container.
    Index,
    /// Wheels downloaded on the host, installed with `--no-index`.
    Wheelhouse,
}

impl PipSource {
    pub fn name(self) -> &'static str {
        match self {
            PipSource::Index => "index",
            PipSource::Wheelhouse => "wheelhouse",
        }
    }
}

/// A Docker repository name for a seed: lower case, `[a-z0-9]` runs joined by `-`.
pub fn repo_image_name(seed: &str) -> String {
    let mut out = String::new();
    for c in seed.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "repo".to_string()
    } else {
        out.to_string()
    }
}

/// `swe-forge/<seed>:<12 hex>` for a repository on a base image: the hash of everything the
/// image is made from, so that an unchanged repository is never rebuilt.
pub fn repo_tag(repo: &Repo, base_id: &str) -> Result<String, ImageError> {
    let python_tools = PYTHON_TEST_TOOLS.join(",");
    let python_path = repo.profile.python_path.join(":");
    let warmup = java_warmup_script();
    let parts: Vec<&str> = match repo.profile.language {
        Language::Python => vec![
            PYTHON_TEMPLATE,
            super::task_image::STRIP_SCRIPT,
            base_id,
            &repo.commit,
            repo.profile.install_command.as_deref().unwrap_or(""),
            &python_tools,
            &python_path,
        ],
        Language::Java => {
            require_maven(repo)?;
            vec![
                JAVA_MAVEN_TEMPLATE,
                base_id,
                &repo.commit,
                maven::LISTENER_JAVA,
                maven::ANALYSER_JAVA,
                maven::SETTINGS_XML,
                maven::DEFAULT_JVM_OPTIONS,
                &warmup,
            ]
        }
    };
    let mut h = blake3::Hasher::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    Ok(format!(
        "swe-forge/{}:{}",
        repo_image_name(&repo.name),
        &h.finalize().to_hex()[..12]
    ))
}

/// The Maven runner's fast-path setup ([`maven::fast::setup_script`]) as the image build runs
/// it: it builds the commit into [`JAVA_BUILD_CACHE`] exactly as a worker's first run would
/// (same worktree path, same key), or records why the fast path does not apply.
pub fn java_warmup_script() -> String {
    let prelude = format!(
        "export JAVA_TOOL_OPTIONS={}\nexport MALLOC_ARENA_MAX=2\n",
        shell_quote(maven::DEFAULT_JVM_OPTIONS)
    );
    maven::fast::setup_script(
        &prelude,
        "mvn",
        &shell_quote(JAVA_MAVEN_SETTINGS),
        &shell_quote(JAVA_BUILD_CACHE),
        JAVA_LIB,
        JAVA_WARMUP_SCRATCH,
    )
}

/// The Docker sandbox builds Java projects with Maven only.
fn require_maven(repo: &Repo) -> Result<(), ImageError> {
    if repo.profile.build_system == "maven" {
        return Ok(());
    }
    Err(ImageError::Unsupported(format!(
        "{}: the docker sandbox builds Java projects with Maven only, and this one's build \
         system is `{}` (a pom.xml at the repository root is needed); use `--sandbox local` \
         or leave the seed out",
        repo.name, repo.profile.build_system
    )))
}

/// The image for `repo` on `base`: found by its tag, or built. Python projects get their
/// packages from the package index, else from a wheelhouse (`SWE_FORGE_PIP_SOURCE` forces
/// one); Java projects need no network.
pub fn ensure_repo_image(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let sources: Vec<PipSource> = match std::env::var("SWE_FORGE_PIP_SOURCE").as_deref() {
        Ok("index") => vec![PipSource::Index],
        Ok("wheelhouse") => vec![PipSource::Wheelhouse],
        _ => vec![PipSource::Index, PipSource::Wheelhouse],
    };
    ensure_repo_image_from(client, cache, repo, base, &sources, progress)
}

/// The image with this tag, found, or built by `build` (which returns the new image's id)
/// while holding the tag's lock, so that one process builds a given image at a time.
pub(crate) fn find_or_build(
    client: &Client,
    cache: &Path,
    tag: String,
    build: impl FnOnce(&str) -> Result<String, ImageError>,
) -> Result<ImageRef, ImageError> {
    if let Some(id) = image_id(client, &tag)? {
        return Ok(ImageRef {
            tag,
            id,
            built: false,
        });
    }
    let _lock = FileLock::exclusive(
        &cache
            .join("images")
            .join(format!("{}.lock", file_key(&tag))),
    )
    .map_err(io_err("locking the repository image"))?;
    if let Some(id) = image_id(client, &tag)? {
        return Ok(ImageRef {
            tag,
            id,
            built: false,
        });
    }
    let id = build(&tag)?;
    Ok(ImageRef {
        tag,
        id,
        built: true,
    })
}

/// [`ensure_repo_image`] trying the given package sources in order (for Python projects;
/// a Java project's image has no packages to fetch and ignores them).
pub fn ensure_repo_image_from(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    sources: &[PipSource],
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let tag = repo_tag(repo, &base.id)?;
    if repo.profile.language == Language::Java {
        return find_or_build(client, cache, tag, |tag| {
            progress(&format!(
                "building {tag} for {} at {} (Maven, offline)",
                repo.name,
                &repo.commit[..12.min(repo.commit.len())],
            ));
            let started = Instant::now();
            let id = build_java_image(client, repo, base, tag, progress)?;
            tracing::info!(image = %tag, seconds = started.elapsed().as_secs_f64(), "built the repository image");
            Ok(id)
        });
    }
    find_or_build(client, cache, tag, |tag| {
        let mut failures = Vec::new();
        for &source in sources {
            progress(&format!(
                "building {tag} for {} at {} (packages from the {})",
                repo.name,
                &repo.commit[..12.min(repo.commit.len())],
                match source {
                    PipSource::Index => "package index",
                    PipSource::Wheelhouse => "host's wheelhouse",
                }
            ));
            let started = Instant::now();
            match build_repo_image(client, cache, repo, base, tag, source, progress) {
                Ok(id) => {
                    tracing::info!(image = %tag, seconds = started.elapsed().as_secs_f64(), source = source.name(), "built the repository image");
                    return Ok(id);
                }
                Err(e) => {
                    tracing::warn!(image = %tag, source = source.name(), "image build failed: {e}");
                    failures.push(format!("with packages from the {}: {e}", source.name()));
                }
            }
        }
        Err(ImageError::Build {
            tag: tag.to_string(),
            detail: failures.join("\n"),
        })
    })
}

/// Build the image of a Maven project: the context holds the Dockerfile, the coverage
/// helpers' sources and the Maven settings (`java/`), and the checkout (`testbed/`).
fn build_java_image(
    client: &Client,
    repo: &Repo,
    base: &ImageRef,
    tag: &str,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let labels = BTreeMap::from([
        ("swe-forge.kind".to_string(), "repo".to_string()),
        ("swe-forge.seed".to_string(), repo.name.clone()),
        ("swe-forge.commit".to_string(), repo.commit.clone()),
        ("swe-forge.language".to_string(), "java".to_string()),
        ("swe-forge.base".to_string(), base.id.clone()),
        ("swe-forge.build-system".to_string(), "maven".to_string()),
    ]);
    let dockerfile = render_java_dockerfile(repo, &base.tag, &labels)?;
    let mut ctx = ContextTar::new();
    let add = |ctx: &mut ContextTar, path: &str, text: &str| {
        ctx.add_file(path, text.as_bytes(), 0o644)
            .map_err(io_err("making the build context"))
    };
    add(&mut ctx, "Dockerfile", &dockerfile)?;
    add(&mut ctx, "java/PerTestListener.java", maven::LISTENER_JAVA)?;
    add(&mut ctx, "java/PerTestCoverage.java", maven::ANALYSER_JAVA)?;
    add(&mut ctx, "java/maven-settings.xml", maven::SETTINGS_XML)?;
    add(&mut ctx, "java/warmup-setup.sh", &java_warmup_script())?;
    ctx.add_checkout(&repo.checkout, "testbed")
        .map_err(io_err(format!("adding {}", repo.checkout.display())))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Render `dockerfiles/java-maven.Dockerfile` for a Maven project.
pub fn render_java_dockerfile(
    repo: &Repo,
    base: &str,
    labels: &BTreeMap<String, String>,
) -> Result<String, ImageError> {
    require_maven(repo)?;
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| shell_quote(&v));
    env.render_str(
        JAVA_MAVEN_TEMPLATE,
        minijinja::context! {
            base => base,
            seed => repo.name,
            labels => labels,
            user => TEST_USER,
            uid => TEST_UID,
            helpers => JAVA_HELPERS_DIR,
            settings => JAVA_MAVEN_SETTINGS,
            build_cache => JAVA_BUILD_CACHE,
            warmup_dir => JAVA_WARMUP_SCRATCH,
            setup_file => maven::fast::SETUP_FILE,
            java_lib => JAVA_LIB,
            jvm_options => maven::DEFAULT_JVM_OPTIONS,
        },
    )
    .map_err(|e| ImageError::Build {
        tag: base.to_string(),
        detail: format!("rendering dockerfiles/java-maven.Dockerfile: {e}"),
    })
}

fn build_repo_image(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    tag: &str,
    source: PipSource,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let template = PYTHON_TEMPLATE;
    let ca_bundle = host_ca_bundle();
    let wheelhouse = match source {
        PipSource::Index => None,
        PipSource::Wheelhouse => Some(host_wheelhouse(cache, repo, tag, progress)?),
    };
    let mut pip_env = vec![
        "PIP_DISABLE_PIP_VERSION_CHECK=1".to_string(),
        "PIP_NO_CACHE_DIR=1".to_string(),
        "PIP_ROOT_USER_ACTION=ignore".to_string(),
        "PIP_PROGRESS_BAR=off".to_string(),
    ];
    let mut ctx = ContextTar::new();
    if let Some(ca) = &ca_bundle {
        ctx.add_file("pip/ca-bundle.pem", ca, 0o644)
            .map_err(io_err("adding the CA bundle"))?;
        let ca = "/tmp/swe-forge/pip/ca-bundle.pem";
        pip_env.extend([
            format!("PIP_CERT={ca}"),
            format!("SSL_CERT_FILE={ca}"),
            format!("REQUESTS_CA_BUNDLE={ca}"),
        ]);
    }
    if let Some(dir) = &wheelhouse {
        ctx.add_dir_tree(dir, "pip/wheelhouse", |_| true)
            .map_err(io_err("adding the wheelhouse"))?;
        pip_env.extend([
            "PIP_NO_INDEX=1".to_string(),
            "PIP_FIND_LINKS=/tmp/swe-forge/pip/wheelhouse".to_string(),
        ]);
    } else {
        // A private index or proxy configured on the host applies in the build container too.
        for key in ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST"] {
            if let Ok(v) = std::env::var(key) {
                pip_env.push(format!("{key}={}", shell_quote(&v)));
            }
        }
    }
    let labels = BTreeMap::from([
        ("swe-forge.kind".to_string(), "repo".to_string()),
        ("swe-forge.seed".to_string(), repo.name.clone()),
        ("swe-forge.commit".to_string(), repo.commit.clone()),
        (
            "swe-forge.language".to_string(),
            repo.profile.language.name().to_string(),
        ),
        ("swe-forge.base".to_string(), base.id.clone()),
        (
            "swe-forge.pip-source".to_string(),
            source.name().to_string(),
        ),
    ]);
    let dockerfile = render_dockerfile(
        template,
        repo,
        &base.tag,
        ca_bundle.is_some() || wheelhouse.is_some(),
        &format!("export {} && ", pip_env.join(" ")),
        &labels,
    )?;
    ctx.add_file("Dockerfile", dockerfile.as_bytes(), 0o644)
        .map_err(io_err("making the build context"))?;
    ctx.add_checkout(&repo.checkout, "testbed")
        .map_err(io_err(format!("adding {}", repo.checkout.display())))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Render the repository template.
pub fn render_dockerfile(
    template: &str,
    repo: &Repo,
    base: &str,
    pip_files: bool,
    pip_env: &str,
    labels: &BTreeMap<String, String>,
) -> Result<String, ImageError> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| shell_quote(&v));
    let python_path: Vec<String> = repo
        .profile
        .python_path
        .iter()
        .map(|p| {
            let p = p.trim_matches('/');
            if p.is_empty() || p == "." {
                "/testbed".to_string()
            } else {
                format!("/testbed/{p}")
            }
        })
        .collect();
    // The throwaway copy's import roots, where the installed copies came from.
    let strip_roots: Vec<String> = repo
        .profile
        .python_path
        .iter()
        .map(|p| p.trim_matches('/'))
        .filter(|p| !p.is_empty() && *p != ".")
        .map(|p| shell_quote(&format!("/tmp/swe-forge/src/{p}")))
        .chain(["/tmp/swe-forge/src".to_string()])
        .collect();
    env.render_str(
        template,
        minijinja::context! {
            base => base,
            pip_files => pip_files,
            pip_env => pip_env,
            labels => labels,
            test_tools => PYTHON_TEST_TOOLS,
            install_command => repo.profile.install_command.clone().unwrap_or_default(),
            user => TEST_USER,
            uid => TEST_UID,
            python_path => python_path.join(":"),
            strip_script => super::task_image::STRIP_SCRIPT,
            strip_roots => strip_roots.join(" "),
        },
    )
    .map_err(|e| ImageError::Build {
        tag: base.to_string(),
        detail: format!("rendering the Dockerfile template: {e}"),
    })
}

/// The host's CA bundle, so that a build container trusts what the host trusts (a proxy that
/// re-signs TLS, a private index): `SWE_FORGE_CA_BUNDLE`, `PIP_CERT`, `SSL_CERT_FILE`,
/// `REQUESTS_CA_BUNDLE`, else the system bundle.
fn host_ca_bundle() -> Option<Vec<u8>> {
    let mut candidates: Vec<PathBuf> = [
        "SWE_FORGE_CA_BUNDLE",
        "PIP_CERT",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
    ]
    .iter()
    .filter_map(std::env::var_os)
    .map(PathBuf::from)
    .collect();
    candidates.push(PathBuf::from("/etc/ssl/certs/ca-certificates.crt"));
    candidates.into_iter().find_map(|p| {
        fs::read(p)
            .ok()
            .filter(|b| b.starts_with(b"-----BEGIN") || b.windows(11).any(|w| w == b"-----BEGIN "))
    })
}

/// Build arguments passed from the host's environment: the proxies (Docker's predefined
/// build arguments, kept out of the image's history).
fn host_build_args() -> HashMap<String, String> {
    [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
    ]
    .iter()
    .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
    .collect()
}

/// Send a build context to the daemon and follow the build; the image id on success.
pub(crate) fn build_image(
    client: &Client,
    tag: &str,
    context: Vec<u8>,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let opts = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .buildargs(&host_build_args())
        .build();
    let docker: &Docker = client.docker();
    let mut log = String::new();
    let result = client.block_on(async {
        let mut stream =
            docker.build_image(opts, None, Some(bollard::body_full(Bytes::from(context))));
        while let Some(item) = stream.next().await {
            let info = item?;
            if let Some(text) = info.stream {
                for line in text.lines() {
                    if line.starts_with("Step ") {
                        progress(line);
                    }
                }
                log.push_str(&text);
            }
        }
        Ok::<(), bollard::errors::Error>(())
    });
    tracing::debug!(image = tag, "build log:\n{log}");
    if let Err(e) = result {
        let tail: Vec<&str> = log
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(20)
            .collect();
        return Err(ImageError::Build {
            tag: tag.to_string(),
            detail: format!(
                "{e}\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ),
        });
    }
    image_id(client, tag)?.ok_or_else(|| ImageError::Build {
        tag: tag.to_string(),
        detail: "the image is absent after the build".into(),
    })
}

/// Wheels for the test tools, the project's dependencies and its build backend, downloaded on
/// the host: a throwaway virtualenv gets the test tools and the project (the install command
/// in a copy of the checkout), then everything it holds is downloaded with `pip download`.
fn host_wheelhouse(
    cache: &Path,
    repo: &Repo,
    tag: &str,
    progress: Progress<'_>,
) -> Result<PathBuf, ImageError> {
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
    let fail = |what: &str, e: String| ImageError::Wheelhouse(format!("{what}: {e}"));
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

/// A build context made in memory, with fixed owners and times so that the same files give
/// the same bytes.
pub struct ContextTar {
    builder: tar::Builder<Vec<u8>>,
}

impl Default for ContextTar {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextTar {
    pub fn new() -> ContextTar {
        let mut builder = tar::Builder::new(Vec::new());
        builder.mode(tar::HeaderMode::Deterministic);
        ContextTar { builder }
    }

    fn header(size: u64, mode: u32, kind: tar::EntryType) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(CONTEXT_MTIME);
        h
    }

    pub fn add_file(&mut self, path: &str, data: &[u8], mode: u32) -> std::io::Result<()> {
        let mut h = Self::header(data.len() as u64, mode, tar::EntryType::Regular);
        self.builder.append_data(&mut h, path, data)
    }

    /// Add the tree at `dir` under `prefix`, keeping the entries `keep` accepts (it sees the
    /// path relative to `dir`).
    pub fn add_dir_tree(
        &mut self,
        dir: &Path,
        prefix: &str,
        keep: impl Fn(&Path) -> bool,
    ) -> std::io::Result<()> {
        let mut h = Self::header(0, 0o755, tar::EntryType::Directory);
        self.builder
            .append_data(&mut h, format!("{prefix}/"), std::io::empty())?;
        let walker = walkdir::WalkDir::new(dir)
            .min_depth(1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| keep(e.path().strip_prefix(dir).unwrap_or(e.path())));
        for entry in walker {
            let entry = entry.map_err(std::io::Error::other)?;
            let rel = entry
                .path()
                .strip_prefix(dir)
                .expect("walkdir yields children");
            let name = Path::new(prefix).join(rel);
            let meta = fs::symlink_metadata(entry.path())?;
            let exec = meta.mode() & 0o111 != 0;
            let ft = meta.file_type();
            if ft.is_dir() {
                let mut h = Self::header(0, 0o755, tar::EntryType::Directory);
                self.builder.append_data(&mut h, &name, std::io::empty())?;
            } else if ft.is_symlink() {
                let target = fs::read_link(entry.path())?;
                let mut h = Self::header(0, 0o777, tar::EntryType::Symlink);
                self.builder.append_link(&mut h, &name, &target)?;
            } else if ft.is_file() {
                let data = fs::read(entry.path())?;
                let data = self.rewrite(rel, data);
                let mode = if exec { 0o755 } else { 0o644 };
                let mut h = Self::header(data.len() as u64, mode, tar::EntryType::Regular);
                self.builder.append_data(&mut h, &name, data.as_slice())?;
            }
        }
        Ok(())
    }

    /// Add a checkout (worktree and .git) under `prefix`, without Python caches, the fetch
    /// bookkeeping, reflogs and the host's remote.
    pub fn add_checkout(&mut self, checkout: &Path, prefix: &str) -> std::io::Result<()> {
        self.add_dir_tree(checkout, prefix, |rel| {
            let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "__pycache__" || name.ends_with(".pyc") {
                return false;
            }
            !(rel == Path::new(".git/FETCH_HEAD") || rel == Path::new(".git/logs"))
        })
    }

    fn rewrite(&self, rel: &Path, data: Vec<u8>) -> Vec<u8> {
        if rel != Path::new(".git/config") {
            return data;
        }
        // Drop the remotes: they name paths on the host.
        let text = String::from_utf8_lossy(&data);
        let mut out = String::new();
        let mut skipping = false;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with('[') {
                skipping = t.starts_with("[remote ");
            }
            if !skipping {
                out.push_str(line);
                out.push('\n');
            }
        }
        out.into_bytes()
    }

    pub fn finish(self) -> Result<Vec<u8>, ImageError> {
        self.builder
            .into_inner()
            .map_err(io_err("finishing the build context"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_line_sources() {
        let text = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n\
                    deb-src http://mirror.example/debian bookworm main\n\
                    deb http://security.example/debian-security bookworm-security main\n";
        let s = parse_one_line_sources(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].uri, "http://mirror.example/debian");
        assert_eq!(s[0].suites, vec!["bookworm"]);
        assert_eq!(
            pick_debian_mirror(&s).as_deref(),
            Some("http://mirror.example/debian")
        );
    }

    #[test]
    fn parses_deb822_sources() {
        let text = "Types: deb\n# a comment\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n\
                    Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n\
                    Types: deb\nEnabled: no\nURIs: http://other.example/debian\nSuites: trixie\n";
        let s = parse_deb822_sources(text);
        assert_eq!(s.len(), 2);
        assert_eq!(
            pick_debian_mirror(&s).as_deref(),
            Some("http://mirror.example/debian")
        );
        let only_security = parse_deb822_sources(
            "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n",
        );
        assert_eq!(pick_debian_mirror(&only_security), None);
    }

    #[test]
    fn repository_names_are_valid_for_docker() {
        assert_eq!(repo_image_name("pyshelf"), "pyshelf");
        assert_eq!(repo_image_name("My_Lib.v2"), "my-lib-v2");
        assert_eq!(repo_image_name("__"), "repo");
    }

    #[test]
    fn base_tag_is_stable() {
        let t = base_tag(Language::Python).unwrap();
        assert!(t.starts_with("swe-forge/python-base:bookworm-"), "{t}");
        assert_eq!(t, base_tag(Language::Python).unwrap());
        let j = base_tag(Language::Java).unwrap();
        assert!(j.starts_with("swe-forge/java-base:bookworm-"), "{j}");
        assert_ne!(t[t.len() - 12..], j[j.len() - 12..]);
    }

    #[test]
    fn base_recipes_hold_what_every_container_needs() {
        for lang in Language::ALL {
            let r = base_recipe(lang);
            let all = r.all_packages();
            for p in ["python3", "git", "ca-certificates", "coreutils"] {
                assert!(all.contains(&p), "{lang:?} lacks {p}");
            }
        }
        let java = base_recipe(Language::Java);
        assert_eq!(java.version_label, "java");
        assert!(java.later_packages.contains(&"openjdk-17-jdk-headless"));
        assert!(java.later_packages.contains(&"libjacoco-java"));
        // The JDK is installed after debootstrap, with apt (ca-certificates-java needs a JVM).
        assert!(!java
            .packages
            .iter()
            .any(|p| p.contains("jdk") || *p == "maven"));
    }

    #[test]
    fn renders_the_base_template_for_java() {
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        let text = env
            .render_str(
                BASE_TEMPLATE,
                minijinja::context! {
                    from => "debian:bookworm-slim",
                    packages => base_recipe(Language::Java).all_packages().join(" "),
                    user => TEST_USER,
                    uid => TEST_UID,
                    language => "java",
                },
            )
            .unwrap();
        assert!(
            text.contains("install -y --no-install-recommends python3 git"),
            "{text}"
        );
        assert!(
            text.contains("openjdk-17-jdk-headless maven junit5"),
            "{text}"
        );
        assert!(text.contains("swe-forge.language=\"java\""), "{text}");
    }

    #[test]
    fn reads_the_jdk_version() {
        let release = "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.19+10-1-deb12u2-Debian\"\nJAVA_VERSION=\"17.0.19\"\n";
        assert_eq!(java_release_version(release).as_deref(), Some("17.0.19"));
        assert_eq!(java_release_version("OS_NAME=Linux\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("usr/lib/jvm/java-17-openjdk-amd64")).unwrap();
        fs::write(
            root.join("usr/lib/jvm/java-17-openjdk-amd64/release"),
            release,
        )
        .unwrap();
        std::os::unix::fs::symlink(
            "java-17-openjdk-amd64",
            root.join("usr/lib/jvm/java-1.17.0-openjdk-amd64"),
        )
        .unwrap();
        let tar = dir.path().join("root.tar");
        write_rootfs_tar(&root, &tar).unwrap();
        assert_eq!(
            rootfs_runtime_version(&tar, Language::Java).as_deref(),
            Some("17.0.19")
        );
        assert_eq!(rootfs_runtime_version(&tar, Language::Python), None);
    }

    fn sample_repo(install: Option<&str>) -> Repo {
        let seed: crate::seed::Seed =
            serde_yaml::from_str("name: demo\nsource: demo\nlanguage: python\n").unwrap();
        Repo {
            name: "demo".into(),
            seed,
            source: "demo".into(),
            commit: "a".repeat(40),
            mirror: PathBuf::from("/nonexistent"),
            checkout: PathBuf::from("/nonexistent"),
            profile: crate::repo::Profile {
                language: Language::Python,
                build_system: "setuptools".into(),
                test_framework: "pytest".into(),
                source_files: vec![],
                test_files: vec![],
                install_command: install.map(str::to_string),
                python_path: vec!["src".into()],
                packages: vec![],
                packages_reason: String::new(),
            },
        }
    }

    #[test]
    fn renders_the_python_template() {
        let repo = sample_repo(Some("python -m pip install '.[test]'\necho done"));
        let labels = BTreeMap::from([("swe-forge.seed".to_string(), "de\"mo".to_string())]);
        let text = render_dockerfile(
            PYTHON_TEMPLATE,
            &repo,
            "swe-forge/python-base:x",
            false,
            "export A=1 && ",
            &labels,
        )
        .unwrap();
        assert!(
            text.starts_with("FROM swe-forge/python-base:x AS deps\n"),
            "{text}"
        );
        assert!(!text.contains("COPY pip/"), "{text}");
        assert!(text.contains("PYTHONPATH=\"/testbed/src\""), "{text}");
        assert!(text.contains("LABEL swe-forge.seed=\"de\\\"mo\""), "{text}");
        // The install command survives as one JSON string, newline included.
        let run = text
            .lines()
            .find(|l| l.contains("/tmp/swe-forge/src &&"))
            .unwrap();
        let argv: Vec<String> = serde_json::from_str(run.trim_start_matches("RUN ")).unwrap();
        assert_eq!(argv[0], "bash");
        assert!(
            argv[2].starts_with("export A=1 && cd /tmp/swe-forge/src"),
            "{}",
            argv[2]
        );
        assert!(
            argv[2].contains("bash -c 'python -m pip install '\\''.[test]'\\''\necho done' && "),
            "{}",
            argv[2]
        );
        // Then the installed copies of the repository's files leave the venv.
        assert!(
            argv[2].ends_with(" /tmp/swe-forge/src/src /tmp/swe-forge/src"),
            "{}",
            argv[2]
        );
        // Few instructions: each is a layer commit.
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 9, "{instructions} instructions:\n{text}");
        let none =
            render_dockerfile(PYTHON_TEMPLATE, &sample_repo(None), "b", true, "", &labels).unwrap();
        assert!(none.contains("COPY pip/ /tmp/swe-forge/pip/"), "{none}");
        assert!(!none.contains("/tmp/swe-forge/src &&"), "{none}");
    }

    fn sample_java_repo(build_system: &str) -> Repo {
        let mut repo = sample_repo(None);
        repo.name = "javashelf".into();
        repo.profile.language = Language::Java;
        repo.profile.build_system = build_system.into();
        repo.profile.test_framework = "junit".into();
        repo.profile.python_path = vec![];
        repo
    }

    #[test]
    fn renders_the_java_template() {
        let repo = sample_java_repo("maven");
        let labels = BTreeMap::from([
            ("swe-forge.kind".to_string(), "repo".to_string()),
            ("swe-forge.language".to_string(), "java".to_string()),
        ]);
        let text = render_java_dockerfile(&repo, "swe-forge/java-base:x", &labels).unwrap();
        assert!(text.starts_with("FROM swe-forge/java-base:x\n"), "{text}");
        assert!(
            text.contains("H=/opt/swe-forge/java; J=/usr/share/java;"),
            "{text}"
        );
        assert!(
            text.contains("jar xf $J/org.jacoco.agent.jar jacocoagent.jar"),
            "{text}"
        );
        assert!(
            text.contains("org.junit.platform.launcher.TestExecutionListener"),
            "{text}"
        );
        assert!(
            text.contains(
                "install -m 0644 $S/maven-settings.xml /opt/swe-forge/maven-settings.xml"
            ),
            "{text}"
        );
        assert!(
            text.contains("COPY --chown=1000:1000 testbed/ /testbed/"),
            "{text}"
        );
        assert!(text.contains("USER tester\n"), "{text}");
        assert!(
            text.contains("mvn -o -q -B -s /opt/swe-forge/maven-settings.xml test-compile"),
            "{text}"
        );
        assert!(
            text.contains("export JAVA_TOOL_OPTIONS='-Xmx768m"),
            "{text}"
        );
        assert!(
            text.contains("swe-forge: javashelf does not build offline"),
            "{text}"
        );
        assert!(text.contains("git clean -q -f -d -x"), "{text}");
        assert!(
            text.contains("install -d -o 1000 -g 1000 /var/cache/swe-forge/maven-build"),
            "{text}"
        );
        assert!(
            text.contains("bash /opt/swe-forge/java/warmup-setup.sh"),
            "{text}"
        );
        assert!(
            text.contains("head -n 1 /tmp/swe-forge-warmup/fast-setup.txt"),
            "{text}"
        );
        let warmup = java_warmup_script();
        assert!(
            warmup.contains("C=/var/cache/swe-forge/maven-build\n"),
            "{warmup}"
        );
        assert!(
            warmup.contains("-s /opt/swe-forge/maven-settings.xml"),
            "{warmup}"
        );
        assert!(
            text.contains("LABEL swe-forge.kind=\"repo\" swe-forge.language=\"java\""),
            "{text}"
        );
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 10, "{instructions} instructions:\n{text}");
        let gradle = sample_java_repo("gradle");
        let err = render_java_dockerfile(&gradle, "b", &labels).unwrap_err();
        assert!(err.to_string().contains("Maven only"), "{err}");
        assert!(repo_tag(&gradle, "sha256:1").is_err());
    }

    #[test]
    fn java_repo_tag_depends_on_what_the_image_holds() {
        let a = sample_java_repo("maven");
        let t = repo_tag(&a, "sha256:1").unwrap();
        assert!(t.starts_with("swe-forge/javashelf:"), "{t}");
        assert_eq!(t, repo_tag(&a, "sha256:1").unwrap());
        assert_ne!(t, repo_tag(&a, "sha256:2").unwrap());
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, "sha256:1").unwrap());
        let mut py = a.clone();
        py.profile.language = Language::Python;
        assert_ne!(t, repo_tag(&py, "sha256:1").unwrap());
    }

    #[test]
    fn repo_tag_depends_on_what_the_image_holds() {
        let a = sample_repo(Some("make deps"));
        let t = repo_tag(&a, "sha256:1").unwrap();
        assert!(t.starts_with("swe-forge/demo:"), "{t}");
        assert_eq!(t, repo_tag(&a, "sha256:1").unwrap());
        assert_ne!(t, repo_tag(&a, "sha256:2").unwrap());
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, "sha256:1").unwrap());
        let mut c = a.clone();
        c.profile.install_command = None;
        assert_ne!(t, repo_tag(&c, "sha256:1").unwrap());
    }

    #[test]
    fn context_drops_the_host_remote() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".git/logs")).unwrap();
        fs::create_dir_all(dir.path().join("pkg/__pycache__")).unwrap();
        fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = /home/me/mirror.git\n[gc]\n\tauto = 0\n",
        )
        .unwrap();
        fs::write(dir.path().join("pkg/__pycache__/m.cpython-311.pyc"), b"x").unwrap();
        fs::write(dir.path().join("pkg/m.py"), b"x = 1\n").unwrap();
        let mut ctx = ContextTar::new();
        ctx.add_checkout(dir.path(), "testbed").unwrap();
        let bytes = ctx.finish().unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut names = Vec::new();
        for e in archive.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            if name == "testbed/.git/config" {
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                assert!(!s.contains("remote"), "{s}");
                assert!(s.contains("[gc]"), "{s}");
            }
            assert_eq!(e.header().mtime().unwrap(), CONTEXT_MTIME);
            names.push(name);
        }
        assert!(names.contains(&"testbed/pkg/m.py".to_string()), "{names:?}");
        assert!(
            !names
                .iter()
                .any(|n| n.contains("__pycache__") || n.contains(".git/logs")),
            "{names:?}"
        );
    }
}
