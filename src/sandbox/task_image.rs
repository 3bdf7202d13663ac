//! Task images: a task's start state as a thin layer over its repository image
//! (`dockerfiles/task.Dockerfile`). The image a record's `image_name` names: `/testbed` is a
//! repository whose HEAD is the parentless `base_commit`, and the layer removes what the
//! repository image holds of the clean code (its `/testbed` with history, the installed copies
//! of the repository's modules, the Java warm-up build).

use super::docker::Client;
use super::image::{self, ContextTar, ImageError, ImageRef, Progress, TEST_UID};
use super::recipe::TaskLayer;
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
    /// Bytes of a task image's own layer (the start state): median and maximum over the
    /// images built or found.
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
    /// What the layer takes from the repository image (the toolchain's).
    pub layer: &'a TaskLayer,
    /// The start state's repository (worktree with its `.git`), see
    /// [`crate::start_state::write_repository`].
    pub start_repo: &'a Path,
    pub instance_id: &'a str,
    pub base_commit: &'a str,
}

/// What a task image takes from its repository image (read from its configuration).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RepoImageInfo {
    /// The language base image the repository image was built on (its id).
    pub base: String,
    /// The repository image's environment (`KEY=value`).
    pub env: Vec<String>,
}

/// The base image and environment of a repository image.
pub fn repo_image_info(client: &Client, repo_image: &str) -> Result<RepoImageInfo, ImageError> {
    let err = |detail: String| ImageError::Build {
        tag: repo_image.to_string(),
        detail,
    };
    let info = client
        .block_on(client.docker().inspect_image(repo_image))
        .map_err(|e| err(format!("inspecting the repository image: {e}")))?;
    let config = info.config.unwrap_or_default();
    let base = config
        .labels
        .as_ref()
        .and_then(|l| l.get("swe-forge.base").cloned())
        .ok_or_else(|| err("the repository image has no `swe-forge.base` label".into()))?;
    Ok(RepoImageInfo {
        base,
        env: config.env.unwrap_or_default(),
    })
}

/// Render the task template.
pub fn render(spec: &TaskImageSpec<'_>, from: &RepoImageInfo) -> Result<String, ImageError> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    let copy_paths = &spec.layer.copy_paths;
    let prepare = &spec.layer.prepare;
    // `ENV KEY="value"`, the value as a JSON string (Dockerfile double quotes).
    let env_pairs: Vec<String> = from
        .env
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| format!("{k}={}", serde_json::to_string(v).unwrap_or_default()))
        .collect();
    env.render_str(
        TASK_TEMPLATE,
        minijinja::context! {
            base => from.base,
            repo_image => spec.repo_image,
            copy_paths => copy_paths,
            prepare => prepare,
            env => env_pairs,
            uid => TEST_UID,
            labels => labels(spec).into_iter().collect::<std::collections::BTreeMap<_, _>>(),
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
        let from = repo_image_info(client, spec.repo_image)?;
        let mut ctx = ContextTar::new();
        ctx.add_file("Dockerfile", render(spec, &from)?.as_bytes(), 0o644)
            .map_err(|e| ImageError::Build {
                tag: tag.to_string(),
                detail: format!("making the build context: {e}"),
            })?;
        ctx.add_checkout(spec.start_repo, "testbed")
            .map_err(|e| ImageError::Build {
                tag: tag.to_string(),
                detail: format!("adding the start state: {e}"),
            })?;
        image::build_image(client, tag, ctx.finish()?, progress)
    })
}

/// The size in bytes of a task image's own layer: its top layer, the start state (the layers
/// below it are shared by every task of the repository image).
pub fn layer_size(client: &Client, tag: &str) -> Result<u64, ImageError> {
    let history = client
        .block_on(client.docker().image_history(tag))
        .map_err(|e| ImageError::Build {
            tag: tag.to_string(),
            detail: format!("reading the image's history: {e}"),
        })?;
    // The labels the build sets come on top as empty entries: the first entry with a size is
    // the start state's copy.
    Ok(history
        .iter()
        .map(|h| h.size.max(0) as u64)
        .find(|s| *s > 0)
        .unwrap_or(0))
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
    fn renders_the_layer_the_toolchain_names() {
        let dir = tempfile::tempdir().unwrap();
        let venv = TaskLayer {
            copy_paths: vec!["/opt/venv".into()],
            prepare: String::new(),
        };
        let spec = TaskImageSpec {
            tag: "t",
            repo_image: "swe-forge/p:1",
            layer: &venv,
            start_repo: dir.path(),
            instance_id: "p__m__1",
            base_commit: "c",
        };
        let from = RepoImageInfo {
            base: "sha256:b".into(),
            env: vec![
                "PATH=/opt/venv/bin:/usr/bin".into(),
                "PYTHONPATH=/testbed/src".into(),
            ],
        };
        let py = render(&spec, &from).unwrap();
        // Not over the repository image: from the base, with only the venv copied.
        assert!(py.contains("FROM sha256:b\n"), "{py}");
        assert!(
            py.contains("COPY --from=swe-forge/p:1 /opt/venv /opt/venv"),
            "{py}"
        );
        assert!(!py.contains("FROM swe-forge/p:1"), "{py}");
        assert!(!py.contains("RUN "), "{py}");
        assert!(
            py.contains("ENV PATH=\"/opt/venv/bin:/usr/bin\" PYTHONPATH=\"/testbed/src\""),
            "{py}"
        );
        let last: Vec<&str> = py.trim_end().lines().rev().take(2).collect();
        assert!(
            last[0].starts_with("LABEL ") && last[0].contains("swe-forge.kind=\"task\""),
            "{py}"
        );
        assert_eq!(last[1], "COPY --chown=1000:1000 testbed/ /testbed/", "{py}");
        let helpers = TaskLayer {
            copy_paths: vec!["/opt/swe-forge".into()],
            prepare: "install -d -o 1000 -g 1000 /var/cache/x".into(),
        };
        let java = render(
            &TaskImageSpec {
                layer: &helpers,
                ..spec
            },
            &from,
        )
        .unwrap();
        assert!(
            java.contains("RUN [\"bash\", \"-c\", \"install -d -o 1000 -g 1000 /var/cache/x\"]"),
            "{java}"
        );
        assert!(
            java.contains("COPY --from=swe-forge/p:1 /opt/swe-forge /opt/swe-forge"),
            "{java}"
        );
        assert!(!java.contains("/opt/venv /opt/venv"), "{java}");
    }
}
