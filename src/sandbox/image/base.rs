//! The base image of a language: its recipe (Debian packages), its tag, and how it is made:
//! found, imported from the cached root file system, pulled and finished from a registry, or
//! bootstrapped with debootstrap.

use super::context::ContextTar;
use super::rootfs::{can_debootstrap, debootstrap_tar, import_rootfs};
use super::{
    build_image, docker_err, file_key, image_id, io_err, ImageError, ImageRef, Progress, TEST_UID,
    TEST_USER,
};
use crate::lang::Language;
use crate::lock::FileLock;
use crate::sandbox::docker::Client;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Dockerfile that finishes a pulled Debian image into a base image.
pub const BASE_TEMPLATE: &str = include_str!("../../../dockerfiles/base.Dockerfile");

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

/// What every JavaScript or TypeScript container needs besides node: python3 runs the agent,
/// git the resets.
pub const NODE_SYSTEM_PACKAGES: &[&str] =
    &["python3", "git", "ca-certificates", "coreutils", "procps"];
/// Node and the test frameworks Debian packages (offline: no npm registry is needed for
/// them), with TypeScript's compiler.
pub const NODE_TOOLCHAIN_PACKAGES: &[&str] = &["nodejs", "jest", "mocha", "node-typescript"];

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
        Language::JavaScript | Language::TypeScript => BaseRecipe {
            language,
            packages: NODE_SYSTEM_PACKAGES,
            later_packages: NODE_TOOLCHAIN_PACKAGES,
            version_label: "node",
        },
    }
}

/// Bumped when the way base images are made changes.
const BASE_RECIPE: &str = "2";
/// The image pulled where a registry answers.
const REGISTRY_BASE: &str = "debian:bookworm-slim";

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
