//! The base image of a runtime (its recipe, [`BaseRecipe`], comes from a toolchain): its tag,
//! and how it is made:
//! found, imported from the cached root file system, pulled and finished from a registry, or
//! bootstrapped with debootstrap.

use super::context::ContextTar;
use super::rootfs::{can_debootstrap, debootstrap_tar, import_rootfs};
use super::{
    build_image, docker_err, file_key, image_id, io_err, ImageError, ImageRef, Progress, TEST_UID,
    TEST_USER,
};
use crate::lock::FileLock;
use crate::sandbox::docker::Client;
use crate::sandbox::recipe::BaseRecipe;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Dockerfile that finishes a pulled Debian image into a base image.
pub const BASE_TEMPLATE: &str = include_str!("../../../dockerfiles/base.Dockerfile");

/// The Debian suite of every base image.
pub const SUITE: &str = "bookworm";

/// Bumped when the way base images are made changes.
/// 3: no documentation in the root ([`super::rootfs::DPKG_NODOC`]).
const BASE_RECIPE: &str = "3";
/// The image pulled where a registry answers.
const REGISTRY_BASE: &str = "debian:bookworm-slim";

/// The tag of the base image `recipe` makes.
pub fn base_tag(recipe: &BaseRecipe) -> Result<String, ImageError> {
    let mut h = blake3::Hasher::new();
    h.update(BASE_RECIPE.as_bytes());
    h.update(SUITE.as_bytes());
    h.update(recipe.packages.join(",").as_bytes());
    if !recipe.later_packages.is_empty() {
        h.update(b"+");
        h.update(recipe.later_packages.join(",").as_bytes());
    }
    let key = &h.finalize().to_hex()[..12];
    Ok(format!("swe-forge/{}-base:{SUITE}-{key}", recipe.name))
}

/// `swe-forge image bootstrap`: make the base image `recipe` describes (pulled where a
/// registry answers, else debootstrapped), reusing it when present unless `force`.
pub fn bootstrap(
    cache: &Path,
    recipe: &BaseRecipe,
    force: bool,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let client = Client::connect(Duration::from_secs(5)).map_err(docker_err("connecting"))?;
    if force {
        let tag = base_tag(recipe)?;
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
    ensure_base(&client, cache, recipe, progress)
}

/// The base image `recipe` describes: found, imported from the cached root file system,
/// pulled from a registry, or bootstrapped with debootstrap, in that order.
pub fn ensure_base(
    client: &Client,
    cache: &Path,
    recipe: &BaseRecipe,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let tag = base_tag(recipe)?;
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
        match build_base_from_registry(client, &tag, recipe, progress) {
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
        debootstrap_tar(&tar, recipe, progress)?;
    }
    let id = import_rootfs(client, &tar, &tag, recipe, progress)?;
    Ok(ImageRef {
        tag,
        id,
        built: true,
    })
}

fn base_tar_path(cache: &Path, tag: &str) -> PathBuf {
    cache.join("images").join(format!("{}.tar", file_key(tag)))
}

fn pull_allowed() -> bool {
    !matches!(
        std::env::var("SWE_FORGE_BASE_PULL").as_deref(),
        Ok("0") | Ok("no") | Ok("false")
    )
}

/// Pull the Debian image (giving up quickly when no registry answers) and install the packages
/// on top of it with a small Dockerfile.
fn build_base_from_registry(
    client: &Client,
    tag: &str,
    recipe: &BaseRecipe,
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
    let packages = recipe.all_packages().join(" ");
    progress(&format!("pulled {from}; installing {packages}"));
    let env = base_env();
    let dockerfile = env
        .render_str(
            BASE_TEMPLATE,
            minijinja::context! {
                from => from,
                packages => packages,
                user => TEST_USER,
                uid => TEST_UID,
                language => recipe.name,
                dpkg_nodoc => super::rootfs::DPKG_NODOC,
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

/// The template environment of `dockerfiles/base.Dockerfile` (a `json` filter: a value as a
/// double-quoted string the shell reads).
fn base_env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env
}

/// Whether the base image `recipe` describes is present or can be made without a registry:
/// it exists, its root file system is cached, or this process can debootstrap one. (`auto`
/// falls back to the local backend otherwise, rather than failing every seed.)
pub fn base_obtainable(
    client: &Client,
    cache: &Path,
    recipe: &BaseRecipe,
) -> Result<(), ImageError> {
    let tag = base_tag(recipe)?;
    if image_id(client, &tag)?.is_some() || base_tar_path(cache, &tag).exists() {
        return Ok(());
    }
    can_debootstrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::recipe::VersionProbe;

    const A: BaseRecipe = BaseRecipe {
        name: "alpha",
        packages: &["python3", "git"],
        later_packages: &[],
        version_label: "alpha",
        version_probe: VersionProbe::DpkgPackage("alpha"),
    };
    const B: BaseRecipe = BaseRecipe {
        name: "beta",
        packages: &["python3", "git"],
        later_packages: &["openjdk-17-jdk-headless"],
        version_label: "beta",
        version_probe: VersionProbe::DpkgPackage("beta"),
    };

    #[test]
    fn base_tag_is_stable_and_names_the_runtime() {
        let t = base_tag(&A).unwrap();
        assert!(t.starts_with("swe-forge/alpha-base:bookworm-"), "{t}");
        assert_eq!(t, base_tag(&A).unwrap());
        let b = base_tag(&B).unwrap();
        assert!(b.starts_with("swe-forge/beta-base:bookworm-"), "{b}");
        assert_ne!(t[t.len() - 12..], b[b.len() - 12..]);
    }

    #[test]
    fn renders_the_base_template() {
        let env = base_env();
        let text = env
            .render_str(
                BASE_TEMPLATE,
                minijinja::context! {
                    from => "debian:bookworm-slim",
                    packages => B.all_packages().join(" "),
                    user => TEST_USER,
                    uid => TEST_UID,
                    language => B.name,
                    dpkg_nodoc => crate::sandbox::image::rootfs::DPKG_NODOC,
                },
            )
            .unwrap();
        assert!(
            text.contains("install -y --no-install-recommends python3 git openjdk-17-jdk-headless"),
            "{text}"
        );
        assert!(text.contains("swe-forge.language=\"beta\""), "{text}");
        assert!(
            text.contains("printf \"path-exclude=/usr/share/doc/*\\npath-include="),
            "{text}"
        );
    }
}
