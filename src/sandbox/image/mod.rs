//! Images for the Docker sandbox: a shared base image per runtime, and one image per
//! repository on top of it, both made from recipes a toolchain hands over as data
//! ([`crate::sandbox::recipe`]): this module never asks which language it builds for.
//!
//! A base image is Debian bookworm with what every container needs (python3 for the agent,
//! git for the resets, CA certificates, coreutils for `timeout`, bash) and the runtime's
//! packages ([`BaseRecipe`](crate::sandbox::recipe::BaseRecipe)). It is pulled and finished
//! with `apt-get` where a registry answers; otherwise it is bootstrapped offline:
//! `debootstrap --variant=minbase` into a directory, then (the recipe's later packages, whose
//! maintainer scripts need a working system: the JDK, `ca-certificates-java`, Maven, node)
//! `apt-get install` inside that directory with `chroot` and /proc mounted, the directory
//! packed into a tar (cached), and the tar imported as an image.
//!
//! Names and labels:
//! - base: `swe-forge/<runtime>-base:bookworm-<12 hex>`, the hash of the suite, the package
//!   lists and the recipe; labels `swe-forge.kind=base`, `swe-forge.language=<runtime>`,
//!   `swe-forge.source=debootstrap|registry`, and on bootstrapped images `swe-forge.suite` and
//!   the runtime's version (`swe-forge.python=<X.Y>`, `swe-forge.java=<17.0.N>`,
//!   `swe-forge.node=<version>`), read off the root file system as the recipe's
//!   [`VersionProbe`](crate::sandbox::recipe::VersionProbe) says.
//! - repository: `swe-forge/<seed>:<12 hex>`, the hash of the recipe's parts (its template
//!   text, the base image id, the commit, and what else the toolchain names), so that an
//!   unchanged repository is never rebuilt; labels `swe-forge.kind=repo`, `swe-forge.seed`,
//!   `swe-forge.commit`, `swe-forge.language`, `swe-forge.base`, the recipe's own, and the
//!   variant that built it where the recipe names a label for it (`swe-forge.pip-source`).
//!   The build context holds the rendered Dockerfile, the recipe's files, the checkout at
//!   `testbed/`, the host's CA bundle at `host/ca-bundle.pem` when the host has one, and the
//!   variant's host directory (Python's wheelhouse). The templates (`dockerfiles/`) say what
//!   each image holds.
//!
//! Cache layout (under the swe-forge cache directory):
//! - `images/<runtime>-base-<key>.tar`: the bootstrapped root file system, imported again if
//!   the image is removed;
//! - `images/*.lock`: one process builds a given image at a time;
//! - what a variant's host directory makes (`wheelhouses/<seed>-<key>/`).
//!
//! Files: `base.rs` (the base image: tag, pulled or bootstrapped), `rootfs.rs` (the
//! debootstrapped root file system, packed and imported), `apt.rs` (the Debian mirror, from
//! the host's apt sources), `repo.rs` (repository images: tags, rendering, builds),
//! `context.rs` (build contexts), `archive.rs` (images saved to and loaded from a shared
//! directory), `registry.rs` (images pushed to and pulled from a registry).

mod apt;
pub mod archive;
mod base;
mod context;
pub mod registry;
mod repo;
mod rootfs;

pub use apt::{
    debian_mirror, parse_deb822_sources, parse_one_line_sources, pick_debian_mirror, AptSource,
};
pub use base::{base_obtainable, base_tag, bootstrap, ensure_base, BASE_TEMPLATE, SUITE};
pub use context::ContextTar;
pub use repo::{
    ensure_repo_image, render_repo_dockerfile, repo_image_name, repo_labels, repo_tag,
    CA_BUNDLE_IN_CONTEXT,
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
    /// A variant's host directory could not be made (Python's wheelhouse).
    #[error("preparing the build's files on the host failed: {0}")]
    HostFiles(String),
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
