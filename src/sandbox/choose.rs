//! Sandbox choice: the one place a run, an audit or training opens its sandboxes, from plain
//! values (the user's choice, the cache directory, the limits).

use super::docker::{self, DockerSandbox};
use super::local::LocalSandbox;
use super::recipe::BaseRecipe;
use super::{Limits, Sandbox, SandboxChoice};
use std::path::Path;

/// `--sandbox docker` was asked for and the daemon cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DockerUnavailable(pub String);

/// The sandboxes opened for a choice: Docker where chosen (or, under `auto`, where its daemon
/// answers), and always the local one (audit prepares a task without an image locally).
pub struct Sandboxes {
    pub docker: Option<DockerSandbox>,
    pub local: LocalSandbox,
}

impl Sandboxes {
    /// The sandbox new environments are made in: Docker when open, else local.
    pub fn primary(self) -> Box<dyn Sandbox> {
        match self.docker {
            Some(d) => Box::new(d),
            None => Box::new(self.local),
        }
    }
}

/// Open the sandboxes `choice` asks for. Under `auto`, Docker is taken when its daemon
/// answers and, where `base` names a base image (a run, which builds images), that image is
/// present or can be made here; otherwise the local sandbox, with a warning that nothing is
/// isolated.
pub fn open(
    choice: SandboxChoice,
    cache: &Path,
    limits: &Limits,
    base: Option<&BaseRecipe>,
) -> Result<Sandboxes, DockerUnavailable> {
    let local = LocalSandbox::new(cache, limits.clone());
    let docker = match choice {
        SandboxChoice::Local => None,
        SandboxChoice::Docker => Some(
            DockerSandbox::connect(cache, limits.clone())
                .map_err(|e| DockerUnavailable(e.to_string()))?,
        ),
        SandboxChoice::Auto => auto_docker(cache, limits, base),
    };
    if docker.is_none() {
        tracing::warn!(
            "using the local sandbox: tests run on this host without isolation{}",
            if choice == SandboxChoice::Auto {
                " (no usable Docker daemon)"
            } else {
                ""
            }
        );
    }
    Ok(Sandboxes { docker, local })
}

fn auto_docker(cache: &Path, limits: &Limits, base: Option<&BaseRecipe>) -> Option<DockerSandbox> {
    if !docker::available() {
        return None;
    }
    let d = match DockerSandbox::connect(cache, limits.clone()) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!("docker answers but cannot be used: {e}");
            return None;
        }
    };
    if let Some(recipe) = base {
        if let Err(e) = d.base_obtainable(recipe) {
            tracing::warn!("docker answers but has no base image, and none can be made here: {e}");
            return None;
        }
    }
    tracing::info!("using the docker sandbox (the daemon answers)");
    Some(d)
}
