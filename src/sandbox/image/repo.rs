//! Repository images: one per repository on its base image, built from the toolchain's
//! [`ImageRecipe`] (a `dockerfiles/` template, its values and files, the checkout), tagged by
//! the hash of what they are made from, the recipe's variants tried in order.

use super::context::ContextTar;
use super::{
    build_image, find_or_build, io_err, ImageError, ImageRef, Progress, TEST_UID, TEST_USER,
};
use crate::repo::Repo;
use crate::sandbox::docker::Client;
use crate::sandbox::recipe::{HashPart, ImageRecipe, Variant};
use crate::sandbox::shell_quote;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where the host's CA bundle is in the build context (when the host has one): a build
/// container then trusts what the host trusts (a proxy that re-signs TLS, a private index).
pub const CA_BUNDLE_IN_CONTEXT: &str = "host/ca-bundle.pem";

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
/// image is made from ([`ImageRecipe::hash`]), so that an unchanged repository is never
/// rebuilt.
pub fn repo_tag(repo: &Repo, recipe: &ImageRecipe, base_id: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in &recipe.hash {
        let text = match part {
            HashPart::Text(t) => t.as_str(),
            HashPart::BaseId => base_id,
            HashPart::Commit => repo.commit.as_str(),
        };
        h.update(text.as_bytes());
        h.update(b"\0");
    }
    format!(
        "swe-forge/{}:{}",
        repo_image_name(&repo.name),
        &h.finalize().to_hex()[..12]
    )
}

/// The image for `repo` on `base`: found by its tag, or built from `recipe`, its variants
/// tried in order (the failures of each are kept for the error).
pub fn ensure_repo_image(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    recipe: &ImageRecipe,
    base: &ImageRef,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let tag = repo_tag(repo, recipe, &base.id);
    find_or_build(client, cache, tag, |tag| {
        let mut failures = Vec::new();
        for variant in &recipe.variants {
            progress(&format!(
                "building {tag} for {} at {} ({})",
                repo.name,
                &repo.commit[..12.min(repo.commit.len())],
                if variant.description.is_empty() {
                    &recipe.description
                } else {
                    &variant.description
                }
            ));
            let started = Instant::now();
            match build_variant(client, cache, repo, recipe, variant, base, tag, progress) {
                Ok(id) => {
                    tracing::info!(image = %tag, seconds = started.elapsed().as_secs_f64(), variant = %variant.name, "built the repository image");
                    return Ok(id);
                }
                Err(e) if recipe.variants.len() > 1 => {
                    tracing::warn!(image = %tag, variant = %variant.name, "image build failed: {e}");
                    failures.push(format!("{}: {e}", variant.description));
                }
                Err(e) => return Err(e),
            }
        }
        Err(ImageError::Build {
            tag: tag.to_string(),
            detail: if failures.is_empty() {
                "the recipe has no variant".to_string()
            } else {
                failures.join("\n")
            },
        })
    })
}

/// The labels of a repository image built with `variant`.
pub fn repo_labels(
    repo: &Repo,
    recipe: &ImageRecipe,
    variant: &Variant,
    base_id: &str,
) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([
        ("swe-forge.kind".to_string(), "repo".to_string()),
        ("swe-forge.seed".to_string(), repo.name.clone()),
        ("swe-forge.commit".to_string(), repo.commit.clone()),
        (
            "swe-forge.language".to_string(),
            repo.profile.language.name().to_string(),
        ),
        ("swe-forge.base".to_string(), base_id.to_string()),
    ]);
    labels.extend(recipe.labels.clone());
    if let Some(key) = &recipe.variant_label {
        labels.insert(format!("swe-forge.{key}"), variant.name.clone());
    }
    labels
}

#[allow(clippy::too_many_arguments)]
fn build_variant(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    recipe: &ImageRecipe,
    variant: &Variant,
    base: &ImageRef,
    tag: &str,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let mut ctx = ContextTar::new();
    let ca_bundle = host_ca_bundle();
    if let Some(ca) = &ca_bundle {
        ctx.add_file(CA_BUNDLE_IN_CONTEXT, ca, 0o644)
            .map_err(io_err("adding the CA bundle"))?;
    }
    for f in &recipe.files {
        ctx.add_file(&f.path, &f.bytes, f.mode)
            .map_err(io_err("making the build context"))?;
    }
    if let Some((make, at)) = &variant.host_dir {
        let dir = make(cache, tag, progress).map_err(ImageError::HostFiles)?;
        ctx.add_dir_tree(&dir, at, |_| true)
            .map_err(io_err(format!("adding {}", dir.display())))?;
    }
    let labels = repo_labels(repo, recipe, variant, &base.id);
    let dockerfile =
        render_repo_dockerfile(recipe, variant, &base.tag, ca_bundle.is_some(), &labels)?;
    ctx.add_file("Dockerfile", dockerfile.as_bytes(), 0o644)
        .map_err(io_err("making the build context"))?;
    ctx.add_checkout(&repo.checkout, "testbed")
        .map_err(io_err(format!("adding {}", repo.checkout.display())))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Render a recipe's template for one variant: the recipe's values, the variant's, and
/// `base`, `labels`, `user`, `uid`, `ca_bundle` (the bundle's path in the build, or empty).
pub fn render_repo_dockerfile(
    recipe: &ImageRecipe,
    variant: &Variant,
    base: &str,
    ca_bundle: bool,
    labels: &BTreeMap<String, String>,
) -> Result<String, ImageError> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| shell_quote(&v));
    let mut values: BTreeMap<String, serde_json::Value> = recipe.values.clone();
    values.extend(variant.values.clone());
    values.insert("base".into(), base.into());
    values.insert(
        "labels".into(),
        serde_json::to_value(labels).expect("labels serialize"),
    );
    values.insert("user".into(), TEST_USER.into());
    values.insert("uid".into(), TEST_UID.into());
    values.insert(
        "ca_bundle".into(),
        if ca_bundle {
            format!("/tmp/swe-forge/{CA_BUNDLE_IN_CONTEXT}").into()
        } else {
            "".into()
        },
    );
    env.render_str(recipe.template, minijinja::Value::from_serialize(&values))
        .map_err(|e| ImageError::Build {
            tag: base.to_string(),
            detail: format!("rendering {}: {e}", recipe.template_name),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::recipe::{BaseRecipe, VersionProbe};

    #[test]
    fn repository_names_are_valid_for_docker() {
        assert_eq!(repo_image_name("pyshelf"), "pyshelf");
        assert_eq!(repo_image_name("My_Lib.v2"), "my-lib-v2");
        assert_eq!(repo_image_name("__"), "repo");
    }

    pub(crate) fn sample_recipe() -> ImageRecipe {
        ImageRecipe {
            base: BaseRecipe {
                name: "alpha",
                packages: &["git"],
                later_packages: &[],
                version_label: "alpha",
                version_probe: VersionProbe::DpkgPackage("alpha"),
            },
            template_name: "test.Dockerfile",
            template: "FROM {{ base }}\n{% if ca_bundle %}ENV CA={{ ca_bundle }}\n{% endif %}RUN {{ cmd | sh }}\nLABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}\n",
            values: BTreeMap::from([("cmd".to_string(), "echo 'a b'".into())]),
            files: vec![],
            hash: vec![
                HashPart::Text("t".into()),
                HashPart::BaseId,
                HashPart::Commit,
            ],
            labels: BTreeMap::from([("swe-forge.extra".to_string(), "x".to_string())]),
            variant_label: Some("source".into()),
            variants: vec![Variant {
                name: "one".into(),
                description: "the first way".into(),
                values: BTreeMap::from([("cmd".to_string(), "echo one".into())]),
                host_dir: None,
            }],
            description: "test".into(),
        }
    }

    fn sample_repo() -> Repo {
        Repo::sample(
            "demo",
            crate::lang::Language::Python,
            "setuptools",
            "pytest",
        )
    }

    #[test]
    fn renders_values_variant_values_and_labels() {
        let recipe = sample_recipe();
        let repo = sample_repo();
        let labels = repo_labels(&repo, &recipe, &recipe.variants[0], "sha256:1");
        assert_eq!(labels["swe-forge.source"], "one");
        assert_eq!(labels["swe-forge.extra"], "x");
        assert_eq!(labels["swe-forge.kind"], "repo");
        let text =
            render_repo_dockerfile(&recipe, &recipe.variants[0], "b:1", true, &labels).unwrap();
        assert!(
            text.starts_with("FROM b:1\nENV CA=/tmp/swe-forge/host/ca-bundle.pem\n"),
            "{text}"
        );
        assert!(text.contains("RUN 'echo one'"), "{text}");
        assert!(text.contains("swe-forge.source=\"one\""), "{text}");
        let none =
            render_repo_dockerfile(&recipe, &recipe.variants[0], "b:1", false, &labels).unwrap();
        assert!(!none.contains("ENV CA"), "{none}");
    }

    #[test]
    fn the_tag_hashes_the_recipe_parts_in_order() {
        let recipe = sample_recipe();
        let a = sample_repo();
        let t = repo_tag(&a, &recipe, "sha256:1");
        assert!(t.starts_with("swe-forge/demo:"), "{t}");
        assert_eq!(t, repo_tag(&a, &recipe, "sha256:1"));
        assert_ne!(t, repo_tag(&a, &recipe, "sha256:2"));
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, &recipe, "sha256:1"));
        let mut other = recipe.clone();
        other.hash[0] = HashPart::Text("u".into());
        assert_ne!(t, repo_tag(&a, &other, "sha256:1"));
    }
}
