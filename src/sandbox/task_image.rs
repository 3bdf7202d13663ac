//! Task images: a task's start state as a thin layer over its repository image
//! (`dockerfiles/task.Dockerfile`). The image a record's `image_name` names: `/testbed` is a
//! repository whose HEAD is the parentless `base_commit`, and the layer removes what the
//! repository image holds of the clean code (its `/testbed` with history, the installed copies
//! of the repository's modules, the Java warm-up build).

use super::docker::Client;
use super::image::{self, ContextTar, ImageError, ImageRef, Progress, TEST_UID};
use crate::lang::Language;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

pub const TASK_TEMPLATE: &str = include_str!("../../dockerfiles/task.Dockerfile");
pub const STRIP_SCRIPT: &str = include_str!("../../dockerfiles/strip-installed.py");

/// What building a run's task images did (`summary.json` → `task_images`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TaskImagesSummary {
    pub built: usize,
    pub reused: usize,
    pub failed: usize,
    pub seconds: f64,
    /// Bytes a task layer adds to its repository image: median and maximum over the images
    /// built or found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_bytes_median: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_bytes_max: Option<u64>,
}

/// `<repository image name>-task:<16 hex>`: the hash of the template, the strip script, the
/// repository image and the start state, so that the same start state on the same image is
/// built once.
pub fn tag(repo_image: &str, base_commit: &str) -> String {
    let name = match repo_image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => n,
        _ => repo_image,
    };
    let mut h = blake3::Hasher::new();
    for part in [TASK_TEMPLATE, STRIP_SCRIPT, repo_image, base_commit] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    format!("{name}-task:{}", &h.finalize().to_hex()[..16])
}

/// What a task image is made of.
pub struct TaskImageSpec<'a> {
    pub tag: &'a str,
    pub repo_image: &'a str,
    pub language: Language,
    /// The repository's import roots (`metadata.environment.python_path`), for Python.
    pub python_path: &'a [String],
    /// The start state's repository (worktree with its `.git`), see
    /// [`crate::start_state::write_repository`].
    pub start_repo: &'a Path,
    pub instance_id: &'a str,
    pub base_commit: &'a str,
}

/// Render the task template.
pub fn render(spec: &TaskImageSpec<'_>) -> Result<String, ImageError> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    let roots: Vec<String> = spec
        .python_path
        .iter()
        .map(|p| p.trim_matches('/'))
        .map(|p| {
            if p.is_empty() || p == "." {
                "/testbed".to_string()
            } else {
                format!("/testbed/{p}")
            }
        })
        .chain(["/testbed".to_string()])
        .map(|p| super::shell_quote(&p))
        .collect();
    // One step: the repository image's /testbed and the clean code it holds elsewhere go.
    let mut prepare =
        format!("set -e; rm -rf /testbed; install -d -o {TEST_UID} -g {TEST_UID} /testbed");
    match spec.language {
        Language::Python => prepare.push_str(&format!(
            "; /opt/venv/bin/python -c {} {}",
            super::shell_quote(STRIP_SCRIPT),
            roots.join(" ")
        )),
        Language::Java => prepare.push_str(&format!(
            "; find {} -mindepth 1 -delete",
            image::JAVA_BUILD_CACHE
        )),
    }
    env.render_str(
        TASK_TEMPLATE,
        minijinja::context! {
            repo_image => spec.repo_image,
            uid => TEST_UID,
            prepare => prepare,
        },
    )
    .map_err(|e| ImageError::Build {
        tag: spec.tag.to_string(),
        detail: format!("rendering the task template: {e}"),
    })
}

/// The labels of a task image.
pub fn labels(spec: &TaskImageSpec<'_>) -> HashMap<String, String> {
    HashMap::from([
        ("swe-forge.kind".to_string(), "task".to_string()),
        (
            "swe-forge.instance".to_string(),
            spec.instance_id.to_string(),
        ),
        (
            "swe-forge.base-commit".to_string(),
            spec.base_commit.to_string(),
        ),
        (
            "swe-forge.repo-image".to_string(),
            spec.repo_image.to_string(),
        ),
    ])
}

/// The task image: found by its tag, or built on its repository image (which must be present).
pub fn ensure(
    client: &Client,
    cache: &Path,
    spec: &TaskImageSpec<'_>,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    image::find_or_build(client, cache, spec.tag.to_string(), |tag| {
        if image::image_id(client, spec.repo_image)?.is_none() {
            return Err(ImageError::Build {
                tag: tag.to_string(),
                detail: format!("its repository image `{}` is not present", spec.repo_image),
            });
        }
        progress(&format!("building the task image {tag}"));
        let mut ctx = ContextTar::new();
        ctx.add_file("Dockerfile", render(spec)?.as_bytes(), 0o644)
            .map_err(|e| ImageError::Build {
                tag: tag.to_string(),
                detail: format!("making the build context: {e}"),
            })?;
        ctx.add_checkout(spec.start_repo, "testbed")
            .map_err(|e| ImageError::Build {
                tag: tag.to_string(),
                detail: format!("adding the start state: {e}"),
            })?;
        image::build_image_labelled(client, tag, ctx.finish()?, &labels(spec), progress)
    })
}

/// The size in bytes of the layers an image adds on top of `parent` (its own layers).
pub fn layer_size(client: &Client, tag: &str, parent: &str) -> Result<u64, ImageError> {
    let size = |t: &str| -> Result<u64, ImageError> {
        let info = client
            .block_on(client.docker().inspect_image(t))
            .map_err(|e| ImageError::Build {
                tag: t.to_string(),
                detail: format!("inspecting: {e}"),
            })?;
        Ok(info.size.unwrap_or(0).max(0) as u64)
    };
    Ok(size(tag)?.saturating_sub(size(parent)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_stable_and_per_start_state() {
        let a = tag("swe-forge/pyshelf:0123456789ab", &"a".repeat(40));
        assert!(a.starts_with("swe-forge/pyshelf-task:"), "{a}");
        assert_eq!(a, tag("swe-forge/pyshelf:0123456789ab", &"a".repeat(40)));
        assert_ne!(a, tag("swe-forge/pyshelf:0123456789ab", &"b".repeat(40)));
        assert_ne!(a, tag("swe-forge/pyshelf:ffffffffffff", &"a".repeat(40)));
    }

    #[test]
    fn renders_per_language() {
        let dir = tempfile::tempdir().unwrap();
        let pp = vec!["src".to_string()];
        let spec = TaskImageSpec {
            tag: "t",
            repo_image: "swe-forge/p:1",
            language: Language::Python,
            python_path: &pp,
            start_repo: dir.path(),
            instance_id: "p__m__1",
            base_commit: "c",
        };
        let py = render(&spec).unwrap();
        assert!(py.contains("FROM swe-forge/p:1"), "{py}");
        assert!(py.contains("/opt/venv/bin/python -c"), "{py}");
        assert!(py.contains("/testbed/src /testbed"), "{py}");
        assert!(!py.contains("maven-build"), "{py}");
        let java = render(&TaskImageSpec {
            language: Language::Java,
            ..spec
        })
        .unwrap();
        assert!(java.contains(image::JAVA_BUILD_CACHE), "{java}");
        assert!(!java.contains("/opt/venv/bin/python"), "{java}");
    }
}
