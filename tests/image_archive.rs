//! `image save` and `image load` with the real binary and Docker: through a shared directory
//! (index, skips, a corrupt tar) and through a local registry (Debian's `docker-registry`).
//! The tests make their own tiny images (one file each, imported, labelled as swe-forge labels
//! its images) under a unique name and narrow every command to that name with `--name`, so
//! that the base and repository images other tests use are never touched.

mod common;

use bollard::query_parameters::{CreateImageOptionsBuilder, RemoveImageOptionsBuilder};
use common::{bin, stdout_lines, text};
use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use swe_forge::sandbox::docker::Client;

/// Whether Docker answers; otherwise a notice and false, or a failure under
/// `SWE_FORGE_REQUIRE_DOCKER=1`. (No base image is needed here.)
fn docker_or_skip(test: &str) -> Option<Client> {
    if swe_forge::sandbox::docker::available() {
        if let Ok(c) = Client::connect(Duration::from_secs(5)) {
            return Some(c);
        }
    }
    if std::env::var("SWE_FORGE_REQUIRE_DOCKER").as_deref() == Ok("1") {
        panic!("{test}: no Docker daemon answers and SWE_FORGE_REQUIRE_DOCKER=1");
    }
    eprintln!("skipping {test}: no Docker daemon answers (set SWE_FORGE_REQUIRE_DOCKER=1 to fail instead)");
    None
}

/// A unique lowercase name part for this test's images.
fn unique(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "arc-{test}-{}-{:x}",
        std::process::id(),
        nanos & 0xffff_ffff
    )
}

/// The test's images: removed (every tag, forced) when dropped.
struct TestImages<'a> {
    client: &'a Client,
    /// (tag, id)
    images: Vec<(String, String)>,
}

impl TestImages<'_> {
    /// Import a one-file image as `tag`, labelled `swe-forge.kind=<kind>`; its id.
    fn make(&mut self, tag: &str, kind: &str) -> String {
        let mut tar = tar::Builder::new(Vec::new());
        let content = format!("image {tag}\n");
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, "hello.txt", content.as_bytes())
            .unwrap();
        let body = tar.into_inner().unwrap();
        let (repo, version) = tag.rsplit_once(':').unwrap();
        let opts = CreateImageOptionsBuilder::default()
            .from_src("-")
            .repo(repo)
            .tag(version)
            .changes(vec![
                format!("LABEL swe-forge.kind={kind}"),
                "CMD [\"/hello.txt\"]".to_string(),
            ])
            .build();
        let docker = self.client.docker();
        self.client
            .block_on(async {
                let mut s = docker.create_image(
                    Some(opts),
                    Some(bollard::body_full(bytes::Bytes::from(body))),
                    None,
                );
                while let Some(item) = s.next().await {
                    item?;
                }
                Ok::<(), bollard::errors::Error>(())
            })
            .unwrap();
        let id = id_of(self.client, tag).expect("the imported image is present");
        self.images.push((tag.to_string(), id.clone()));
        id
    }

    /// `docker rmi -f` every test image (all its tags).
    fn remove_all(&self) {
        for (_, id) in &self.images {
            let _ = self.client.block_on(self.client.docker().remove_image(
                id,
                Some(RemoveImageOptionsBuilder::default().force(true).build()),
                None,
            ));
        }
        for (tag, _) in &self.images {
            assert_eq!(id_of(self.client, tag), None, "{tag} is still present");
        }
    }
}

impl Drop for TestImages<'_> {
    fn drop(&mut self) {
        for (_, id) in &self.images {
            let _ = self.client.block_on(self.client.docker().remove_image(
                id,
                Some(RemoveImageOptionsBuilder::default().force(true).build()),
                None,
            ));
        }
    }
}

fn id_of(client: &Client, tag: &str) -> Option<String> {
    swe_forge::sandbox::image::image_id(client, tag).unwrap()
}

/// Run `swe-forge image <args> --json`: exit code, the per-image lines, the summary.
fn image_cmd(args: &[&str]) -> (i32, Vec<serde_json::Value>, serde_json::Value) {
    let out = bin()
        .arg("image")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let mut lines = stdout_lines(&out);
    let summary = lines
        .pop()
        .unwrap_or_else(|| panic!("no summary\n{}", text(&out)));
    assert!(summary.get("tag").is_none(), "{}", text(&out));
    (out.status.code().unwrap_or(-1), lines, summary)
}

fn statuses(lines: &[serde_json::Value]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            (
                l["tag"].as_str().unwrap_or_default().to_string(),
                l["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `(tag, status)` pairs, sorted as [`statuses`] sorts them.
fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    v.sort();
    v
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn saves_and_loads_through_a_directory() {
    let Some(client) = docker_or_skip("saves_and_loads_through_a_directory") else {
        return;
    };
    let name = unique("dir");
    let repo_tag = format!("swe-forge/{name}:0123456789ab");
    let task_tag = format!("swe-forge/{name}-task:0123456789abcdef");
    let pattern = format!("swe-forge/{name}*");
    let mut images = TestImages {
        client: &client,
        images: vec![],
    };
    let repo_id = images.make(&repo_tag, "repo");
    let task_id = images.make(&task_tag, "task");
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("images");
    let dir_s = dir.to_str().unwrap();

    // A missing directory holds nothing to load.
    let (code, lines, summary) = image_cmd(&["load", dir_s, "--name", &pattern]);
    assert_eq!((code, lines.len()), (0, 0), "{summary}");
    assert_eq!(summary["loaded"], 0);

    // Save: one tar and one index entry per image.
    let (code, lines, summary) = image_cmd(&["save", dir_s, "--name", &pattern]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        statuses(&lines),
        expect(&[(&repo_tag, "saved"), (&task_tag, "saved")])
    );
    assert_eq!(
        (summary["saved"].as_u64(), summary["failed"].as_u64()),
        (Some(2), Some(0))
    );
    let files = files_in(&dir);
    assert_eq!(files.len(), 4, "{files:?}");
    let repo_stem = format!("{name}+0123456789ab");
    let entry: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{repo_stem}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(entry["tag"], repo_tag.as_str());
    assert_eq!(entry["id"], repo_id.as_str());
    assert_eq!(entry["kind"], "repo");
    let repo_tar = dir.join(entry["file"].as_str().unwrap());
    assert!(repo_tar.starts_with(&dir) && repo_tar.is_file());
    assert_eq!(
        std::fs::metadata(&repo_tar).unwrap().len(),
        entry["bytes"].as_u64().unwrap()
    );
    let modified = std::fs::metadata(&repo_tar).unwrap().modified().unwrap();

    // A second save skips both and rewrites nothing.
    let (code, lines, summary) = image_cmd(&["save", dir_s, "--name", &pattern]);
    assert_eq!(code, 0);
    assert!(lines.iter().all(|l| l["status"] == "skipped"), "{lines:?}");
    assert_eq!(
        (summary["saved"].as_u64(), summary["skipped"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(files_in(&dir), files);
    assert_eq!(
        std::fs::metadata(&repo_tar).unwrap().modified().unwrap(),
        modified
    );

    // Narrowed by kind.
    let only_tasks = tmp.path().join("tasks-only");
    let (code, lines, _) = image_cmd(&[
        "save",
        only_tasks.to_str().unwrap(),
        "--name",
        &pattern,
        "--kind",
        "task",
    ]);
    assert_eq!(code, 0);
    assert_eq!(statuses(&lines), [(task_tag.clone(), "saved".to_string())]);

    // Removed here, loaded back with the same ids.
    images.remove_all();
    let (code, lines, summary) = image_cmd(&["load", dir_s, "--name", &pattern]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines.iter().all(|l| l["status"] == "loaded"), "{lines:?}");
    assert_eq!(summary["loaded"], 2);
    assert_eq!(id_of(&client, &repo_tag).as_deref(), Some(repo_id.as_str()));
    assert_eq!(id_of(&client, &task_tag).as_deref(), Some(task_id.as_str()));

    // A second load skips both.
    let (code, lines, summary) = image_cmd(&["load", dir_s, "--name", &pattern]);
    assert_eq!(code, 0);
    assert!(lines.iter().all(|l| l["status"] == "skipped"), "{lines:?}");
    assert_eq!(
        (summary["loaded"].as_u64(), summary["skipped"].as_u64()),
        (Some(0), Some(2))
    );

    // A corrupt tar and an unreadable entry are reported; the other image still loads.
    let task_entry: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}-task+0123456789abcdef.json"))).unwrap(),
    )
    .unwrap();
    let task_tar = dir.join(task_entry["file"].as_str().unwrap());
    let bytes = std::fs::read(&task_tar).unwrap();
    std::fs::write(&task_tar, &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(dir.join("zz-junk.json"), "{ not an entry").unwrap();
    images.remove_all();
    let (code, lines, summary) = image_cmd(&["load", dir_s, "--name", &pattern]);
    assert_eq!(code, 1, "{lines:?}");
    let by_tag = statuses(&lines);
    assert!(
        by_tag.contains(&(repo_tag.clone(), "loaded".into())),
        "{lines:?}"
    );
    assert!(
        by_tag.contains(&(task_tag.clone(), "failed".into())),
        "{lines:?}"
    );
    assert!(
        by_tag.contains(&("zz-junk.json".into(), "failed".into())),
        "{lines:?}"
    );
    for l in lines.iter().filter(|l| l["status"] == "failed") {
        assert!(!l["detail"].as_str().unwrap_or("").is_empty(), "{l}");
    }
    assert_eq!(
        (summary["loaded"].as_u64(), summary["failed"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(id_of(&client, &repo_tag).as_deref(), Some(repo_id.as_str()));
    assert_eq!(id_of(&client, &task_tag), None);
}

/// Debian's registry (`docker-registry`), or a notice and `None`, or a failure under
/// `SWE_FORGE_REQUIRE_REGISTRY=1`.
fn registry_binary(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("docker-registry"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var("SWE_FORGE_REQUIRE_REGISTRY").as_deref() == Ok("1") {
            panic!("{test}: docker-registry is not installed and SWE_FORGE_REQUIRE_REGISTRY=1");
        }
        eprintln!(
            "skipping {test}: docker-registry is not installed (apt-get install docker-registry; \
             set SWE_FORGE_REQUIRE_REGISTRY=1 to fail instead)"
        );
    }
    found
}

/// A registry serving on 127.0.0.1, killed when dropped.
struct RegistryProcess {
    child: std::process::Child,
    port: u16,
    _storage: tempfile::TempDir,
}

impl RegistryProcess {
    fn start(binary: &Path) -> RegistryProcess {
        let storage = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: 127.0.0.1:{port}\n",
                storage.path().join("data").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(storage.path().join("registry.log")).unwrap();
        let child = std::process::Command::new(binary)
            .arg("serve")
            .arg(&config)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut reg = RegistryProcess {
            child,
            port,
            _storage: storage,
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = reg.child.try_wait() {
                panic!(
                    "the registry exited ({status}): {}",
                    std::fs::read_to_string(reg._storage.path().join("registry.log"))
                        .unwrap_or_default()
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the registry does not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        reg
    }
}

impl Drop for RegistryProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn pushes_and_pulls_through_a_registry() {
    let test = "pushes_and_pulls_through_a_registry";
    let Some(client) = docker_or_skip(test) else {
        return;
    };
    let Some(binary) = registry_binary(test) else {
        return;
    };
    let registry = RegistryProcess::start(&binary);
    let name = unique("reg");
    let repo_tag = format!("swe-forge/{name}:0123456789ab");
    let task_tag = format!("swe-forge/{name}-task:0123456789abcdef");
    let pattern = format!("swe-forge/{name}*");
    let mut images = TestImages {
        client: &client,
        images: vec![],
    };
    let repo_id = images.make(&repo_tag, "repo");
    let task_id = images.make(&task_tag, "task");
    let reg = format!("127.0.0.1:{}/swe-forge-test", registry.port);

    let (code, lines, summary) = image_cmd(&["save", "--registry", &reg, "--name", &pattern]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines.iter().all(|l| l["status"] == "pushed"), "{lines:?}");
    assert_eq!(summary["pushed"], 2);
    assert!(
        lines
            .iter()
            .any(|l| l["file"] == format!("{reg}/{name}:0123456789ab").as_str()),
        "{lines:?}"
    );

    // Pushed already: skipped.
    let (code, lines, summary) = image_cmd(&["save", "--registry", &reg, "--name", &pattern]);
    assert_eq!(code, 0);
    assert!(lines.iter().all(|l| l["status"] == "skipped"), "{lines:?}");
    assert_eq!(summary["skipped"], 2);

    // Removed here, pulled from the catalog and tagged with the local names, same ids.
    images.remove_all();
    let (code, lines, summary) = image_cmd(&["load", "--registry", &reg, "--name", &pattern]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        statuses(&lines),
        expect(&[(&repo_tag, "pulled"), (&task_tag, "pulled")])
    );
    assert_eq!(summary["pulled"], 2);
    assert_eq!(id_of(&client, &repo_tag).as_deref(), Some(repo_id.as_str()));
    assert_eq!(id_of(&client, &task_tag).as_deref(), Some(task_id.as_str()));

    // Present: skipped.
    let (code, lines, summary) = image_cmd(&["load", "--registry", &reg, "--name", &pattern]);
    assert_eq!(code, 0);
    assert!(lines.iter().all(|l| l["status"] == "skipped"), "{lines:?}");
    assert_eq!(summary["skipped"], 2);

    // A registry that does not answer: the command fails, nothing is pulled.
    drop(registry);
    let out = bin()
        .args(["image", "load", "--registry", &reg, "--name", &pattern])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
}
