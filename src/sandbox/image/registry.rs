//! Images through a registry instead of a shared directory ([`super::archive`]): `image save
//! --registry HOST/PREFIX` pushes swe-forge's images, `image load --registry HOST/PREFIX` pulls
//! them and tags them with their local names, so that runs find them.
//!
//! Names: `swe-forge/<name>:<tag>` is `HOST/PREFIX/<name>:<tag>` in the registry (the prefix may
//! be empty: `HOST/<name>:<tag>`). The remote name stays on the local image beside the local
//! one: with it the engine keeps the image's digest in the registry, and a second push or pull
//! of an unchanged image is skipped after one question to the registry (`docker manifest
//! inspect`'s, through the engine).
//!
//! Which images a pull takes: those the task records name (`--tasks`), with every base image
//! in the registry's catalog (a repository image's base is known by id only until it is
//! pulled); otherwise every image in the catalog under PREFIX. The catalog is read over the
//! registry's HTTP API (`/v2/_catalog`, `/v2/<name>/tags/list`), HTTPS first, then plain HTTP,
//! without credentials. Pushes and pulls go through the engine, which talks plain HTTP only to
//! registries on 127.0.0.0/8 or in its `insecure-registries`; credentials, where the registry
//! wants them, come from `SWE_FORGE_REGISTRY_USER` and `SWE_FORGE_REGISTRY_PASSWORD`.

use super::archive::{
    split_tag, ArchiveError, ImageInfo, ImageKind, Outcome, Selection, TransferLine,
    TransferSummary, NAME_PREFIX,
};
use super::{image_id, Progress};
use crate::sandbox::docker::Client;
use bollard::auth::DockerCredentials;
use futures_util::StreamExt;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// `HOST[:PORT]/PREFIX`, optionally with `http://` or `https://` (the scheme the catalog is
/// read with; both are tried otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registry {
    pub scheme: Option<String>,
    pub host: String,
    /// Without leading or trailing `/`; may be empty.
    pub prefix: String,
}

impl std::str::FromStr for Registry {
    type Err = ArchiveError;

    fn from_str(s: &str) -> Result<Registry, ArchiveError> {
        let bad = || ArchiveError::RegistrySpec(s.to_string());
        let (scheme, rest) = match s.split_once("://") {
            Some((sch @ ("http" | "https"), rest)) => (Some(sch.to_string()), rest),
            Some(_) => return Err(bad()),
            None => (None, s),
        };
        let (host, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_matches('/');
        let host_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        // Docker's repository path components: lowercase letters, digits, separators.
        let prefix_ok = prefix.split('/').all(|part| {
            part.is_empty() && prefix.is_empty()
                || (!part.is_empty()
                    && part.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                    }))
        });
        if !host_ok || !prefix_ok {
            return Err(bad());
        }
        Ok(Registry {
            scheme,
            host: host.to_string(),
            prefix: prefix.to_string(),
        })
    }
}

impl std::fmt::Display for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.prefix.is_empty() {
            write!(f, "{}", self.host)
        } else {
            write!(f, "{}/{}", self.host, self.prefix)
        }
    }
}

impl Registry {
    /// `swe-forge/mini:abc` → `HOST/PREFIX/mini:abc`.
    pub fn remote(&self, tag: &str) -> String {
        format!("{self}/{}", tag.strip_prefix(NAME_PREFIX).unwrap_or(tag))
    }

    /// `HOST/PREFIX/mini:abc` → `swe-forge/mini:abc`; `None` for a name outside this registry
    /// and prefix.
    pub fn local(&self, remote: &str) -> Option<String> {
        let rest = remote.strip_prefix(&format!("{self}/"))?;
        (!rest.is_empty()).then(|| format!("{NAME_PREFIX}{rest}"))
    }

    /// A repository name of the catalog (`PREFIX/mini`) as a local name (`swe-forge/mini`).
    fn local_repo(&self, repo: &str) -> Option<String> {
        let rest = if self.prefix.is_empty() {
            repo
        } else {
            repo.strip_prefix(&format!("{}/", self.prefix))?
        };
        (!rest.is_empty()).then(|| format!("{NAME_PREFIX}{rest}"))
    }
}

fn credentials(reg: &Registry) -> Option<DockerCredentials> {
    let user = std::env::var("SWE_FORGE_REGISTRY_USER").ok()?;
    Some(DockerCredentials {
        username: Some(user),
        password: std::env::var("SWE_FORGE_REGISTRY_PASSWORD").ok(),
        serveraddress: Some(reg.host.clone()),
        ..Default::default()
    })
}

/// The manifest digest the registry holds for `remote`, `None` when it holds none (or cannot
/// say).
fn remote_digest(client: &Client, reg: &Registry, remote: &str) -> Option<String> {
    client
        .block_on(
            client
                .docker()
                .inspect_registry_image(remote, credentials(reg)),
        )
        .ok()
        .and_then(|d| d.descriptor.digest)
}

/// Whether the local image `tag` is known to be the registry's `remote` at `digest`.
fn same_as_remote(client: &Client, tag: &str, remote: &str, digest: &str) -> bool {
    let (repo, _) = split_tag(remote);
    let want = format!("{repo}@{digest}");
    client
        .block_on(client.docker().inspect_image(tag))
        .ok()
        .and_then(|i| i.repo_digests)
        .is_some_and(|d| d.contains(&want))
}

fn docker_detail(what: &str, e: bollard::errors::Error) -> String {
    format!("{what}: {e}")
}

/// Push `images` to the registry; each image gets one line.
pub fn push(
    client: &Client,
    reg: &Registry,
    images: &[&ImageInfo],
    progress: Progress<'_>,
    on_line: &mut dyn FnMut(&TransferLine),
) -> TransferSummary {
    let started = Instant::now();
    let mut summary = TransferSummary::default();
    for image in images {
        super::archive::transfer_one(
            &image.tag,
            "pushing",
            || push_one(client, reg, image),
            progress,
            on_line,
            &mut summary,
        );
    }
    summary.seconds = started.elapsed().as_secs_f64();
    summary
}

fn push_one(client: &Client, reg: &Registry, image: &ImageInfo) -> TransferLine {
    use bollard::query_parameters::{PushImageOptionsBuilder, TagImageOptionsBuilder};
    let started = Instant::now();
    let remote = reg.remote(&image.tag);
    let with_ref = |mut l: TransferLine| {
        l.file = Some(remote.clone());
        l
    };
    if let Some(digest) = remote_digest(client, reg, &remote) {
        if same_as_remote(client, &image.tag, &remote, &digest) {
            return with_ref(
                TransferLine::new(image, Outcome::Skipped, started).detail("in the registry"),
            );
        }
    }
    let (repo, tag) = split_tag(&remote);
    let docker = client.docker();
    let result = client
        .block_on(
            docker.tag_image(
                &image.tag,
                Some(
                    TagImageOptionsBuilder::default()
                        .repo(repo)
                        .tag(tag)
                        .build(),
                ),
            ),
        )
        .map_err(|e| docker_detail("tagging", e))
        .and_then(|()| {
            client.block_on(async {
                let opts = PushImageOptionsBuilder::default().tag(tag).build();
                let mut stream = docker.push_image(repo, Some(opts), credentials(reg));
                while let Some(item) = stream.next().await {
                    item.map_err(|e| docker_detail("pushing", e))?;
                }
                Ok(())
            })
        });
    match result {
        Ok(()) => with_ref(TransferLine::new(image, Outcome::Pushed, started)),
        Err(detail) => with_ref(TransferLine::new(image, Outcome::Failed, started).detail(detail)),
    }
}

/// Pull `tags` (local names) from the registry and tag each with its local name; each gets
/// one line.
pub fn pull(
    client: &Client,
    reg: &Registry,
    tags: &[String],
    progress: Progress<'_>,
    on_line: &mut dyn FnMut(&TransferLine),
) -> TransferSummary {
    let started = Instant::now();
    let mut summary = TransferSummary::default();
    for tag in tags {
        super::archive::transfer_one(
            tag,
            "pulling",
            || pull_one(client, reg, tag),
            progress,
            on_line,
            &mut summary,
        );
    }
    summary.seconds = started.elapsed().as_secs_f64();
    summary
}

fn pull_one(client: &Client, reg: &Registry, tag: &str) -> TransferLine {
    use bollard::query_parameters::{CreateImageOptionsBuilder, TagImageOptionsBuilder};
    let started = Instant::now();
    let remote = reg.remote(tag);
    let mut info = ImageInfo {
        tag: tag.to_string(),
        id: String::new(),
        kind: ImageKind::of_tag(tag),
        base: None,
    };
    let line = |info: &ImageInfo, status: Outcome, detail: String| {
        let mut l = TransferLine::new(info, status, started).detail(detail);
        l.file = Some(remote.clone());
        l
    };
    let before = match image_id(client, tag) {
        Ok(id) => id,
        Err(e) => return line(&info, Outcome::Failed, e.to_string()),
    };
    if let (Some(id), Some(digest)) = (&before, remote_digest(client, reg, &remote)) {
        if same_as_remote(client, tag, &remote, &digest) {
            info.id = id.clone();
            return line(&info, Outcome::Skipped, "present".into());
        }
    }
    let (repo, version) = split_tag(&remote);
    let (local_repo, local_version) = split_tag(tag);
    let docker = client.docker();
    let pulled = client.block_on(async {
        let opts = CreateImageOptionsBuilder::default()
            .from_image(repo)
            .tag(version)
            .build();
        let mut stream = docker.create_image(Some(opts), None, credentials(reg));
        while let Some(item) = stream.next().await {
            item.map_err(|e| docker_detail("pulling", e))?;
        }
        Ok::<(), String>(())
    });
    if let Err(detail) = pulled {
        return line(&info, Outcome::Failed, detail);
    }
    let tagged = client
        .block_on(
            docker.tag_image(
                &remote,
                Some(
                    TagImageOptionsBuilder::default()
                        .repo(local_repo)
                        .tag(local_version)
                        .build(),
                ),
            ),
        )
        .map_err(|e| docker_detail("tagging", e));
    if let Err(detail) = tagged {
        return line(&info, Outcome::Failed, detail);
    }
    match image_id(client, tag) {
        Ok(Some(id)) => {
            info.id = id.clone();
            if before.as_deref() == Some(id.as_str()) {
                line(&info, Outcome::Skipped, "present".into())
            } else if let Some(old) = before {
                line(
                    &info,
                    Outcome::Pulled,
                    format!("replaced another build of this tag ({old})"),
                )
            } else {
                line(&info, Outcome::Pulled, String::new())
            }
        }
        Ok(None) => line(&info, Outcome::Failed, "absent after the pull".into()),
        Err(e) => line(&info, Outcome::Failed, e.to_string()),
    }
}

/// The local names of the images a pull takes (see the module's notes).
pub fn wanted(reg: &Registry, selection: &Selection) -> Result<Vec<String>, ArchiveError> {
    let mut tags: BTreeSet<String> = BTreeSet::new();
    match &selection.tasks {
        Some(refs) => {
            tags.extend(refs.iter().cloned());
            match catalog(reg) {
                Ok(all) => tags.extend(
                    all.into_iter()
                        .filter(|t| ImageKind::of_tag(t) == ImageKind::Base),
                ),
                Err(e) => tracing::warn!("not pulling base images: {e}"),
            }
        }
        None => tags.extend(catalog(reg)?),
    }
    let mut out: Vec<String> = tags.into_iter().filter(|t| selection.admits(t)).collect();
    out.sort_by(|a, b| (ImageKind::of_tag(a), a).cmp(&(ImageKind::of_tag(b), b)));
    Ok(out)
}

/// The local names of every image in the registry under its prefix.
pub fn catalog(reg: &Registry) -> Result<Vec<String>, ArchiveError> {
    let err = |detail: String| ArchiveError::Registry {
        registry: reg.to_string(),
        detail,
    };
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::NativeTls)
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .tls_config(tls)
        .user_agent(format!("swe-forge/{}", crate::VERSION))
        .build()
        .new_agent();
    let get = |base: &str, path: &str| -> Result<(serde_json::Value, Option<String>), String> {
        let url = format!("{base}{path}");
        let mut resp = agent
            .get(&url)
            .call()
            .map_err(|e| format!("GET {url}: {e}"))?;
        let status = resp.status();
        let link = resp
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .and_then(next_link);
        let body = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !status.is_success() {
            return Err(format!(
                "GET {url}: {status}: {}",
                body.chars().take(300).collect::<String>()
            ));
        }
        let value = serde_json::from_str(&body).map_err(|e| format!("GET {url}: {e}"))?;
        Ok((value, link))
    };
    let schemes: Vec<&str> = match reg.scheme.as_deref() {
        Some(s) => vec![s],
        None => vec!["https", "http"],
    };
    let mut first_error = None;
    let mut chosen = None;
    for scheme in schemes {
        let base = format!("{scheme}://{}", reg.host);
        match get(&base, "/v2/_catalog?n=1000") {
            Ok(page) => {
                chosen = Some((base, page));
                break;
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let Some((base, (mut page, mut link))) = chosen else {
        return Err(err(first_error.unwrap_or_default()));
    };
    let mut repos = Vec::new();
    loop {
        if let Some(list) = page.get("repositories").and_then(|r| r.as_array()) {
            repos.extend(list.iter().filter_map(|r| r.as_str().map(String::from)));
        }
        let Some(next) = link.take() else { break };
        (page, link) = get(&base, &next).map_err(err)?;
    }
    let mut out = Vec::new();
    for repo in repos {
        let Some(local) = reg.local_repo(&repo) else {
            continue;
        };
        let (tags, _) = get(&base, &format!("/v2/{repo}/tags/list")).map_err(err)?;
        if let Some(list) = tags.get("tags").and_then(|t| t.as_array()) {
            out.extend(
                list.iter()
                    .filter_map(|t| t.as_str())
                    .map(|t| format!("{local}:{t}")),
            );
        }
    }
    out.sort();
    Ok(out)
}

/// The path of a `Link: </v2/_catalog?last=x&n=1000>; rel="next"` header.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params.contains("rel=\"next\"").then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_registries() {
        let r: Registry = "127.0.0.1:5000/swe-forge-test".parse().unwrap();
        assert_eq!(r.host, "127.0.0.1:5000");
        assert_eq!(r.prefix, "swe-forge-test");
        assert_eq!(r.scheme, None);
        let r: Registry = "http://reg.example.com/a/b/".parse().unwrap();
        assert_eq!(
            (r.scheme.as_deref(), r.host.as_str(), r.prefix.as_str()),
            (Some("http"), "reg.example.com", "a/b")
        );
        let bare: Registry = "reg:443".parse().unwrap();
        assert_eq!(bare.prefix, "");
        for bad in ["", "/x", "ftp://h/x", "h/Upper", "h/a//b", "h x/y"] {
            assert!(bad.parse::<Registry>().is_err(), "{bad}");
        }
    }

    #[test]
    fn names_map_both_ways() {
        let r: Registry = "127.0.0.1:5000/swe-forge-test".parse().unwrap();
        let tag = "swe-forge/python-base:bookworm-0123456789ab";
        let remote = r.remote(tag);
        assert_eq!(
            remote,
            "127.0.0.1:5000/swe-forge-test/python-base:bookworm-0123456789ab"
        );
        assert_eq!(r.local(&remote).as_deref(), Some(tag));
        assert_eq!(r.local("other:5000/swe-forge-test/x:y"), None);
        assert_eq!(
            r.local_repo("swe-forge-test/mini").as_deref(),
            Some("swe-forge/mini")
        );
        assert_eq!(r.local_repo("elsewhere/mini"), None);
        let bare: Registry = "reg:5000".parse().unwrap();
        assert_eq!(bare.remote("swe-forge/mini:abc"), "reg:5000/mini:abc");
        assert_eq!(bare.local_repo("mini").as_deref(), Some("swe-forge/mini"));
    }

    #[test]
    fn follows_link_headers() {
        assert_eq!(
            next_link("</v2/_catalog?last=b&n=2>; rel=\"next\"").as_deref(),
            Some("/v2/_catalog?last=b&n=2")
        );
        assert_eq!(next_link("</x>; rel=\"prev\""), None);
    }
}
