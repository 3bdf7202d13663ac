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
//!
//! Files: `base.rs` (the base image: recipe, tag, pulled or bootstrapped), `rootfs.rs` (the
//! debootstrapped root file system, packed and imported), `apt.rs` (the Debian mirror, from
//! the host's apt sources), `repo.rs` (repository images: tags, templates, builds),
//! `wheelhouse.rs` (the host's wheels for the fallback), `context.rs` (build contexts).

mod apt;
mod base;
mod context;
mod repo;
mod rootfs;
mod wheelhouse;

pub use apt::{
    debian_mirror, parse_deb822_sources, parse_one_line_sources, pick_debian_mirror, AptSource,
};
pub use base::{
    base_obtainable, base_recipe, base_tag, bootstrap, ensure_base, BaseRecipe, BASE_TEMPLATE,
    JAVA_SYSTEM_PACKAGES, JAVA_TOOLCHAIN_PACKAGES, PYTHON_PACKAGES, SUITE,
};
pub use context::ContextTar;
pub use repo::{
    ensure_repo_image, ensure_repo_image_from, java_warmup_script, render_dockerfile,
    render_java_dockerfile, repo_image_name, repo_tag, PipSource, JAVA_BUILD_CACHE,
    JAVA_HELPERS_DIR, JAVA_MAVEN_SETTINGS, JAVA_MAVEN_TEMPLATE, PYTHON_TEMPLATE,
};

use super::docker::Client;
use crate::lock::FileLock;
use bollard::query_parameters::BuildImageOptionsBuilder;
use bollard::Docker;
use bytes::Bytes;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::Path;

/// The user that owns /testbed and runs every command in a container.
pub const TEST_USER: &str = "tester";
pub const TEST_UID: u32 = 1000;

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
