//! A task image as its task base plus a tree: the base it was committed over (shared by every
//! task of its repository image) and its `/testbed` read out as a tar, so that a started
//! container of the base becomes a container of any of those tasks by one upload (`serve`'s
//! warm pool that any task of a seed can take). The base holds no repository at all, so no
//! clean code is in a container made this way, as in the task image itself.

use super::client::{other, Client};
use super::container::remove_container;
use super::ROOT;
use crate::sandbox::SandboxError;
use futures_util::StreamExt;

/// The label a task image names its task base with (`sandbox::task_image::labels`).
pub const LABEL_TASK_BASE: &str = "swe-forge.task-base";

/// The task base `image` was committed over (its label). `None` for an image that is not a
/// task image (a repository image holds the clean code in its tree and
/// is never shared this way).
pub(super) fn base_of(client: &Client, image: &str) -> Result<Option<String>, SandboxError> {
    let info = client
        .block_on(client.docker().inspect_image(image))
        .map_err(other("inspecting the image"))?;
    let labels = info
        .config
        .as_ref()
        .and_then(|c| c.labels.clone())
        .unwrap_or_default();
    if labels.get("swe-forge.kind").map(String::as_str) != Some("task") {
        return Ok(None);
    }
    // Task images made before the label have none: they are served as before, each from
    // its own image.
    let Some(base) = labels
        .get(LABEL_TASK_BASE)
        .filter(|b| !b.is_empty())
        .cloned()
    else {
        return Ok(None);
    };
    // Only a base that is here, and that holds no repository of its own.
    match client.block_on(client.docker().inspect_image(&base)) {
        Ok(_) => Ok(Some(base)),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(None),
        Err(e) => Err(other("inspecting the task base")(e)),
    }
}

/// `image`'s repository root as a tar (entries under `testbed/`, owners and modes as in the
/// image), read from a container that is created and never started. It carries `labels` (the
/// run's): a process that stops while it reads still has it swept with the run's containers.
pub(super) fn read_tree(
    client: &Client,
    image: &str,
    labels: std::collections::HashMap<String, String>,
) -> Result<Vec<u8>, SandboxError> {
    use bollard::models::ContainerCreateBody;
    use bollard::query_parameters::DownloadFromContainerOptionsBuilder;
    let docker = client.docker();
    // Not after the run's containers were swept (the process is stopping), and not while
    // they are: as for every container of the run.
    let closed = super::container::create_gate()
        .read()
        .unwrap_or_else(|e| e.into_inner());
    if *closed {
        return Err(SandboxError::Other(
            "the run is ending: no new container".to_string(),
        ));
    }
    let created = client
        .block_on(docker.create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            ContainerCreateBody {
                image: Some(image.to_string()),
                network_disabled: Some(true),
                cmd: Some(vec!["true".to_string()]),
                labels: Some(labels),
                ..Default::default()
            },
        ))
        .map_err(other("creating a container to read the tree from"))?;
    drop(closed);
    let read = client.block_on(async {
        let opts = DownloadFromContainerOptionsBuilder::default()
            .path(ROOT)
            .build();
        let mut stream = docker.download_from_container(&created.id, Some(opts));
        let mut tar = Vec::new();
        while let Some(chunk) = stream.next().await {
            tar.extend_from_slice(&chunk?);
        }
        Ok::<_, bollard::errors::Error>(tar)
    });
    let _ = remove_container(client, &created.id);
    read.map_err(other("reading the tree"))
}

/// Extract `tar` (from [`read_tree`]) at `/` of the container `id`.
pub(super) fn put_tree(client: &Client, id: &str, tar: &[u8]) -> Result<(), SandboxError> {
    use bollard::query_parameters::UploadToContainerOptionsBuilder;
    client
        .block_on(client.docker().upload_to_container(
            id,
            Some(UploadToContainerOptionsBuilder::default().path("/").build()),
            bollard::body_full(bytes::Bytes::copy_from_slice(tar)),
        ))
        .map_err(other("putting the tree into the container"))
}
