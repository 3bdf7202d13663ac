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

/// What a task image holds beyond its inputs, changed when that changes so that older images
/// are not taken for current ones: `2` carries the task-base label ([`labels`]).
const TASK_IMAGE_FORMAT: &str = "2";

/// `<repository image name>-task:<16 hex>`: the hash of the template, the strip script, the
/// repository image, the start state, what the toolchain's task layer carries from the
/// repository image and [`TASK_IMAGE_FORMAT`], so that the same start state on the same image
/// is built once, and again when the layer carries something else.
pub fn tag(repo_image: &str, base_commit: &str, layer: &TaskLayer) -> String {
    let name = match repo_image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => n,
        _ => repo_image,
    };
    let mut h = blake3::Hasher::new();
    for part in [
        TASK_TEMPLATE,
        STRIP_SCRIPT,
        repo_image,
        base_commit,
        TASK_IMAGE_FORMAT,
        &layer.copy_paths.join("\0"),
        &layer.prepare,
    ] {
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
        (
            crate::sandbox::docker::LABEL_TASK_BASE.to_string(),
            base_tag(spec),
        ),
    ])
}

/// The task base of a repository image: the task template's image (the base image, what the
/// layer copies from the repository image, its environment and entry point), shared by every
/// task of that repository image. `<repository image name>-taskbase:<16 hex>`.
pub fn base_tag(spec: &TaskImageSpec<'_>) -> String {
    let name = match spec.repo_image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => n,
        _ => spec.repo_image,
    };
    let mut h = blake3::Hasher::new();
    for part in [
        TASK_TEMPLATE,
        spec.repo_image,
        &spec.layer.copy_paths.join("\0"),
        &spec.layer.prepare,
    ] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    format!("{name}-taskbase:{}", &h.finalize().to_hex()[..16])
}

/// The task image: found by its tag, or made on its repository image (which must be
/// present). The task base (`dockerfiles/task.Dockerfile`) is built once per repository
/// image; each task is then one commit over it: a container of the task base, the start state
/// put at /testbed (owned by the test user), committed with the task's labels. One commit per
/// task, not one per build step: on a storage driver that diffs by walking the whole tree
/// (fuse-overlayfs), each commit costs in proportion to the image's file count.
pub fn ensure(
    client: &Client,
    cache: &Path,
    spec: &TaskImageSpec<'_>,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    image::find_or_build(client, cache, spec.tag.to_string(), |tag| {
        let err = |detail: String| ImageError::Build {
            tag: tag.to_string(),
            detail,
        };
        if image::image_id(client, spec.repo_image)?.is_none() {
            return Err(err(format!(
                "its repository image `{}` is not present",
                spec.repo_image
            )));
        }
        let base = image::find_or_build(client, cache, base_tag(spec), |base_tag| {
            progress(&format!("building the task base {base_tag}"));
            let from = repo_image_info(client, spec.repo_image)?;
            let mut ctx = ContextTar::new();
            ctx.add_file("Dockerfile", render(spec, &from)?.as_bytes(), 0o644)
                .map_err(|e| err(format!("making the build context: {e}")))?;
            image::build_image(client, base_tag, ctx.finish()?, progress)
        })?;
        progress(&format!("making the task image {tag}"));
        let mut start = ContextTar::owned_by(TEST_UID);
        start
            .add_checkout(spec.start_repo, "testbed")
            .map_err(|e| err(format!("adding the start state: {e}")))?;
        commit_over(client, &base.tag, tag, start.finish()?, &labels(spec))
    })
}

/// A container of `base` (never started), `tree` extracted at `/`, committed as `tag` with
/// `labels`; the container is removed. Returns the new image's id.
fn commit_over(
    client: &Client,
    base: &str,
    tag: &str,
    tree: Vec<u8>,
    labels: &HashMap<String, String>,
) -> Result<String, ImageError> {
    use bollard::models::{ContainerConfig, ContainerCreateBody};
    use bollard::query_parameters::{
        CommitContainerOptionsBuilder, RemoveContainerOptionsBuilder,
        UploadToContainerOptionsBuilder,
    };
    let err = |what: &str, e: bollard::errors::Error| ImageError::Build {
        tag: tag.to_string(),
        detail: format!("{what}: {e}"),
    };
    let docker = client.docker();
    let created = client
        .block_on(docker.create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            ContainerCreateBody {
                image: Some(base.to_string()),
                network_disabled: Some(true),
                ..Default::default()
            },
        ))
        .map_err(|e| err("creating the container", e))?;
    let id = created.id;
    let result = (|| {
        client
            .block_on(docker.upload_to_container(
                &id,
                Some(UploadToContainerOptionsBuilder::default().path("/").build()),
                bollard::body_full(bytes::Bytes::from(tree)),
            ))
            .map_err(|e| err("putting the start state", e))?;
        let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        let mut keys: Vec<&String> = labels.keys().collect();
        keys.sort();
        let change = format!(
            "LABEL {}",
            keys.iter()
                .map(|k| format!(
                    "{k}={}",
                    serde_json::to_string(&labels[*k]).unwrap_or_default()
                ))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let opts = CommitContainerOptionsBuilder::default()
            .container(&id)
            .repo(repo)
            .tag(version)
            .changes(&change)
            .build();
        client
            .block_on(docker.commit_container(opts, ContainerConfig::default()))
            .map_err(|e| err("committing", e))?;
        Ok(())
    })();
    let _ = client.block_on(docker.remove_container(
        &id,
        Some(RemoveContainerOptionsBuilder::default().force(true).build()),
    ));
    result?;
    image::image_id(client, tag)?.ok_or_else(|| ImageError::Build {
        tag: tag.to_string(),
        detail: "the image is absent after the commit".into(),
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
    fn tags_are_stable_and_per_start_state_and_layer() {
        let layer = TaskLayer {
            copy_paths: vec!["/opt/venv".into()],
            prepare: String::new(),
        };
        let a = tag("swe-forge/pyshelf:0123456789ab", &"a".repeat(40), &layer);
        assert!(a.starts_with("swe-forge/pyshelf-task:"), "{a}");
        assert_eq!(
            a,
            tag("swe-forge/pyshelf:0123456789ab", &"a".repeat(40), &layer)
        );
        assert_ne!(
            a,
            tag("swe-forge/pyshelf:0123456789ab", &"b".repeat(40), &layer)
        );
        assert_ne!(
            a,
            tag("swe-forge/pyshelf:ffffffffffff", &"a".repeat(40), &layer)
        );
        // A layer that carries more from the repository image is another image (task images
        // of Java built before they carried Maven's extension folder are not reused).
        let more = TaskLayer {
            copy_paths: vec!["/opt/venv".into(), "/usr/share/maven/lib/ext".into()],
            ..layer
        };
        assert_ne!(
            a,
            tag("swe-forge/pyshelf:0123456789ab", &"a".repeat(40), &more)
        );
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
        // The task base ends with the entry point: the start state and the labels are the
        // task's own commit.
        let last = py.trim_end().lines().last().unwrap();
        assert!(last.starts_with("ENTRYPOINT "), "{py}");
        assert!(!py.contains("COPY --chown"), "{py}");
        assert!(!py.contains("LABEL"), "{py}");
        assert_ne!(base_tag(&spec), spec.tag);
        assert!(
            base_tag(&spec).starts_with("swe-forge/p-taskbase:"),
            "{}",
            base_tag(&spec)
        );
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
