//! The bollard client with the current-thread runtime that drives it, and whether a daemon
//! answers.

use crate::sandbox::SandboxError;
use bollard::Docker;
use std::future::Future;
use std::time::Duration;

/// A bollard client with the runtime that drives it. Calls from several threads take turns.
pub struct Client {
    pub(super) rt: tokio::runtime::Runtime,
    pub(super) docker: Docker,
    pub(super) turn: std::sync::Mutex<()>,
}

impl Client {
    /// Connect (`DOCKER_HOST` or the local socket) and agree on an API version, giving up
    /// after `wait`.
    pub fn connect(wait: Duration) -> Result<Client, bollard::errors::Error> {
        let rt = runtime()?;
        let docker = Docker::connect_with_defaults()?.with_timeout(Duration::from_secs(3600));
        let docker = rt
            .block_on(async { tokio::time::timeout(wait, docker.negotiate_version()).await })
            .map_err(|_| bollard::errors::Error::RequestTimeoutError)??;
        Ok(Client {
            rt,
            docker,
            turn: std::sync::Mutex::new(()),
        })
    }

    /// Drive a future to completion on this client's runtime (not from inside a runtime).
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        self.rt.block_on(f)
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, bollard::errors::Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| bollard::errors::Error::IOError { err })
}

/// Whether a Docker daemon answers within about 2 s.
pub fn available() -> bool {
    match Client::connect(Duration::from_secs(2)) {
        Ok(c) => c
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(2), c.docker().ping()).await
            })
            .is_ok_and(|r| r.is_ok()),
        Err(_) => false,
    }
}

pub(super) fn other(context: &str) -> impl FnOnce(bollard::errors::Error) -> SandboxError + '_ {
    move |e| SandboxError::Other(format!("docker: {context}: {e}"))
}
