//! The debootstrapped root file system of a base image: `debootstrap --variant=minbase`, the
//! later packages installed with `apt-get` in a `chroot` (with /proc mounted), the test user
//! added, the tree packed into a tar and imported as an image.

use super::apt::debian_mirror;
use super::base::SUITE;
use super::{docker_err, image_id, io_err, ImageError, Progress, TEST_UID, TEST_USER};
use crate::sandbox::docker::Client;
use crate::sandbox::recipe::{BaseRecipe, VersionProbe};
use bollard::query_parameters::CreateImageOptionsBuilder;
use bytes::Bytes;
use futures_util::StreamExt;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Whether this process can debootstrap a root file system: root, and debootstrap installed.
pub(super) fn can_debootstrap() -> Result<(), ImageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ImageError::Bootstrap(
            "debootstrap needs root: run `sudo swe-forge image bootstrap` once (the image is \
             then shared by every user of this Docker engine)"
                .into(),
        ));
    }
    if Command::new("debootstrap")
        .arg("--version")
        .output()
        .is_err()
    {
        return Err(ImageError::Bootstrap(
            "debootstrap is not installed (`apt-get install debootstrap`)".into(),
        ));
    }
    Ok(())
}

pub(super) fn debootstrap_tar(
    tar: &Path,
    recipe: &BaseRecipe,
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let packages = recipe.packages;
    can_debootstrap()?;
    let mirror = debian_mirror().ok_or_else(|| {
        ImageError::Bootstrap(
            "no Debian mirror found in /etc/apt/sources.list(.d); set SWE_FORGE_DEBIAN_MIRROR"
                .into(),
        )
    })?;
    let dir = tar.parent().expect("the tar lives in the images dir");
    fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let work = tempfile::Builder::new()
        .prefix(".rootfs-")
        .tempdir_in(dir)
        .map_err(io_err("creating the debootstrap directory"))?;
    let rootfs = work.path().join("rootfs");
    progress(&format!(
        "debootstrap --variant=minbase {SUITE} from {mirror} with {}",
        packages.join(",")
    ));
    let started = Instant::now();
    run_debootstrap(&rootfs, &mirror, packages, progress)?;
    progress(&format!(
        "debootstrap finished in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    slim_root(&rootfs).map_err(io_err("leaving the documentation out of the root"))?;
    if !recipe.later_packages.is_empty() {
        let started = Instant::now();
        progress(&format!(
            "apt-get install in the new root: {}",
            recipe.later_packages.join(" ")
        ));
        apt_install_in_root(&rootfs, recipe.later_packages, progress)?;
        progress(&format!(
            "apt-get finished in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
    }
    progress("packing the root file system");
    // Downloaded packages and index files are not needed in the image.
    for sub in ["var/cache/apt/archives", "var/lib/apt/lists"] {
        if let Ok(entries) = fs::read_dir(rootfs.join(sub)) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
    add_test_user(&rootfs).map_err(io_err("adding the test user to the root file system"))?;
    let partial = work.path().join("rootfs.tar");
    write_rootfs_tar(&rootfs, &partial)?;
    fs::rename(&partial, tar).map_err(io_err(format!("moving the tar to {}", tar.display())))?;
    Ok(())
}

/// dpkg's configuration in a base image: no documentation, manual pages, info pages or
/// translations (the copyright files stay). A base image holds fewer files, and on a storage
/// driver that diffs by walking the tree (fuse-overlayfs) every layer commit over it is
/// cheaper: a task image costs one commit.
pub(crate) const DPKG_NODOC: &str = "path-exclude=/usr/share/doc/*\n\
path-include=/usr/share/doc/*/copyright\n\
path-exclude=/usr/share/man/*\n\
path-exclude=/usr/share/info/*\n\
path-exclude=/usr/share/locale/*\n\
path-include=/usr/share/locale/locale.alias\n\
path-exclude=/usr/share/lintian/*\n";

/// Apply [`DPKG_NODOC`] to a debootstrapped root: write it for the packages installed later,
/// and remove what the packages already installed put there. Directories stay (the JDK's
/// postinst makes alternatives links in /usr/share/man/man1).
fn slim_root(rootfs: &Path) -> std::io::Result<()> {
    let cfg = rootfs.join("etc/dpkg/dpkg.cfg.d");
    fs::create_dir_all(&cfg)?;
    fs::write(cfg.join("swe-forge-nodoc"), DPKG_NODOC)?;
    for dir in [
        "usr/share/doc",
        "usr/share/man",
        "usr/share/info",
        "usr/share/locale",
        "usr/share/lintian",
    ] {
        let root = rootfs.join(dir);
        if !root.exists() {
            continue;
        }
        for entry in walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_map(Result::ok)
        {
            let ft = entry.file_type();
            if ft.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            if name == "copyright" || name == "locale.alias" {
                continue;
            }
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

fn run_debootstrap(
    rootfs: &Path,
    mirror: &str,
    packages: &[&str],
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let mut cmd = Command::new("debootstrap");
    cmd.arg("--variant=minbase")
        .arg(format!("--include={}", packages.join(",")))
        .arg("--components=main")
        .arg(SUITE)
        .arg(rootfs)
        .arg(mirror);
    let (status, tail, stderr) = stream_command(
        &mut cmd,
        "debootstrap",
        &|line| {
            const SHOWN: [&str; 5] = [
                "I: Retrieving",
                "I: Extracting",
                "I: Unpacking",
                "I: Configuring",
                "I: Installing",
            ];
            SHOWN
                .iter()
                .any(|p| line.starts_with(p))
                .then(|| line.trim_start_matches("I: "))
        },
        progress,
    )?;
    if status.success() {
        return Ok(());
    }
    let log = fs::read_to_string(rootfs.join("debootstrap/debootstrap.log")).unwrap_or_default();
    let log_tail: Vec<&str> = log.lines().rev().take(15).collect();
    Err(ImageError::Bootstrap(format!(
        "debootstrap exited with {status}:\n{}\n{}\n{}",
        tail.join("\n"),
        stderr.trim(),
        log_tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )))
}

/// Run a setup command, showing the stdout lines `shown` picks as progress; returns its exit
/// status, the last 30 lines of stdout and the whole stderr (for the error message).
fn stream_command(
    cmd: &mut Command,
    what: &str,
    shown: &dyn Fn(&str) -> Option<&str>,
    progress: Progress<'_>,
) -> Result<(std::process::ExitStatus, Vec<String>, String), ImageError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_err(format!("starting {what}")))?;
    let stderr = child.stderr.take().expect("piped");
    let err_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    });
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let Ok(line) = line else { break };
        if let Some(shown) = shown(&line) {
            progress(shown);
        }
        tail.push_back(line);
        if tail.len() > 30 {
            tail.pop_front();
        }
    }
    let status = child
        .wait()
        .map_err(io_err(format!("waiting for {what}")))?;
    let stderr = err_thread.join().unwrap_or_default();
    Ok((status, tail.into(), stderr))
}

/// /proc mounted in a root file system for as long as this lives.
struct ProcMount(PathBuf);

impl ProcMount {
    fn mount(rootfs: &Path) -> Result<ProcMount, ImageError> {
        let target = rootfs.join("proc");
        fs::create_dir_all(&target).map_err(io_err(format!("creating {}", target.display())))?;
        let out = Command::new("mount")
            .args(["-t", "proc", "proc"])
            .arg(&target)
            .stdin(Stdio::null())
            .output()
            .map_err(io_err("running mount"))?;
        if !out.status.success() {
            return Err(ImageError::Bootstrap(format!(
                "mounting /proc in {} failed ({}): {}; the JDK's installation needs it (run as \
                 root, outside a container that forbids mounts)",
                rootfs.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(ProcMount(target))
    }
}

impl Drop for ProcMount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.0)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Lazily, so that nothing below the root is left busy.
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// `apt-get update && apt-get install --no-install-recommends PACKAGES` inside a bootstrapped
/// root (its `/etc/apt/sources.list` names the mirror debootstrap used), with /proc mounted
/// for the maintainer scripts (a JVM does not start without it) and a clean environment but
/// for the host's proxy settings.
fn apt_install_in_root(
    rootfs: &Path,
    packages: &[&str],
    progress: Progress<'_>,
) -> Result<(), ImageError> {
    let _proc = ProcMount::mount(rootfs)?;
    // Validity of the Release file is not checked (as debootstrap does not): a snapshot
    // mirror's Release files are past their `Valid-Until`. Signatures still are.
    let script = format!(
        "set -e\n\
         apt-get -q -o Acquire::Check-Valid-Until=false update\n\
         apt-get -q -y --no-install-recommends install {}\n\
         apt-get -q clean\n",
        packages.join(" ")
    );
    let mut cmd = Command::new("chroot");
    cmd.arg(rootfs)
        .args(["/bin/bash", "-c", &script])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", "/root");
    for key in [
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
    ] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    let (status, tail, stderr) = stream_command(
        &mut cmd,
        "chroot apt-get",
        &|line| {
            (line.starts_with("Setting up ") || line.starts_with("Fetched "))
                .then(|| line.trim_end_matches(" ..."))
        },
        progress,
    )?;
    if status.success() {
        return Ok(());
    }
    Err(ImageError::Bootstrap(format!(
        "apt-get install in the bootstrapped root exited with {status} (is the Debian mirror \
         reachable? set SWE_FORGE_DEBIAN_MIRROR or the http_proxy variables):\n{}\n{}",
        tail.join("\n"),
        stderr.trim()
    )))
}

/// What the base image has besides packages (the registry path does the same in
/// `dockerfiles/base.Dockerfile`): the test user (home /tmp), /testbed and /scratch owned by it,
/// and /testbed marked safe for git.
fn add_test_user(rootfs: &Path) -> std::io::Result<()> {
    let append = |file: &str, line: String| -> std::io::Result<()> {
        let path = rootfs.join(file);
        if !path.exists() {
            return Ok(());
        }
        let mut text = fs::read_to_string(&path)?;
        if text
            .lines()
            .any(|l| l.starts_with(&format!("{TEST_USER}:")))
        {
            return Ok(());
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        fs::write(&path, text)
    };
    append(
        "etc/passwd",
        format!("{TEST_USER}:x:{TEST_UID}:{TEST_UID}:swe-forge tests:/tmp:/bin/bash"),
    )?;
    append("etc/group", format!("{TEST_USER}:x:{TEST_UID}:"))?;
    append("etc/shadow", format!("{TEST_USER}:!:0:0:99999:7:::"))?;
    append("etc/gshadow", format!("{TEST_USER}:!::"))?;
    fs::write(
        rootfs.join("etc/gitconfig"),
        "[safe]\n\tdirectory = /testbed\n",
    )?;
    for dir in ["testbed", "scratch"] {
        let d = rootfs.join(dir);
        fs::create_dir_all(&d)?;
        std::os::unix::fs::chown(&d, Some(TEST_UID), Some(TEST_UID))?;
    }
    Ok(())
}

/// Pack a root file system into a tar (owners, modes, symlinks and device nodes kept; the
/// contents of /proc, /sys and /dev left out, the container runtime provides them).
fn write_rootfs_tar(rootfs: &Path, out: &Path) -> Result<(), ImageError> {
    let file = fs::File::create(out).map_err(io_err(format!("creating {}", out.display())))?;
    let mut builder = tar::Builder::new(std::io::BufWriter::with_capacity(1 << 20, file));
    let err = |p: &Path| io_err(format!("packing {}", p.display()));
    let walker = walkdir::WalkDir::new(rootfs)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let rel = e.path().strip_prefix(rootfs).unwrap_or(e.path());
            let mut comps = rel.components();
            let top = comps.next().map(|c| c.as_os_str().to_owned());
            !(comps.next().is_some()
                && top.is_some_and(|t| t == "proc" || t == "sys" || t == "dev"))
        });
    for entry in walker {
        let entry = entry.map_err(|e| ImageError::Io {
            context: "walking the root file system".into(),
            source: std::io::Error::other(e),
        })?;
        let path = entry.path();
        let rel = path.strip_prefix(rootfs).expect("walkdir yields children");
        let meta = fs::symlink_metadata(path).map_err(err(path))?;
        let ft = meta.file_type();
        let mut header = tar::Header::new_gnu();
        header.set_mode(meta.mode() & 0o7777);
        header.set_uid(meta.uid() as u64);
        header.set_gid(meta.gid() as u64);
        header.set_mtime(meta.mtime().max(0) as u64);
        header.set_size(0);
        if ft.is_dir() {
            header.set_entry_type(tar::EntryType::Directory);
            builder
                .append_data(&mut header, rel, std::io::empty())
                .map_err(err(path))?;
        } else if ft.is_symlink() {
            let target = fs::read_link(path).map_err(err(path))?;
            header.set_entry_type(tar::EntryType::Symlink);
            builder
                .append_link(&mut header, rel, &target)
                .map_err(err(path))?;
        } else if ft.is_file() {
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(meta.len());
            let f = fs::File::open(path).map_err(err(path))?;
            builder
                .append_data(&mut header, rel, f)
                .map_err(err(path))?;
        } else if ft.is_char_device() || ft.is_block_device() || ft.is_fifo() {
            header.set_entry_type(if ft.is_char_device() {
                tar::EntryType::Char
            } else if ft.is_block_device() {
                tar::EntryType::Block
            } else {
                tar::EntryType::Fifo
            });
            let rdev = meta.rdev();
            header
                .set_device_major(libc::major(rdev))
                .map_err(err(path))?;
            header
                .set_device_minor(libc::minor(rdev))
                .map_err(err(path))?;
            builder
                .append_data(&mut header, rel, std::io::empty())
                .map_err(err(path))?;
        }
        // Sockets are skipped.
    }
    let mut w = builder.into_inner().map_err(io_err("finishing the tar"))?;
    std::io::Write::flush(&mut w).map_err(io_err("writing the tar"))?;
    Ok(())
}

/// The version of the installed `package` in a dpkg status file.
fn dpkg_version(status: &str, package: &str) -> Option<String> {
    status.split("\n\n").find_map(|stanza| {
        let mut lines = stanza.lines();
        let named = lines.clone().any(|l| l == format!("Package: {package}"));
        let installed = stanza
            .lines()
            .any(|l| l.starts_with("Status:") && l.ends_with(" installed"));
        (named && installed)
            .then(|| lines.find_map(|l| l.strip_prefix("Version: ").map(str::to_string)))
            .flatten()
    })
}

/// The runtime version a root file system ships, read as `probe` says: Python's `3.11` from
/// `usr/bin/python3.N`, the JDK's `17.0.15` from `JAVA_VERSION` in `usr/lib/jvm/<jdk>/release`,
/// node's from the `nodejs` package's entry in dpkg's status file (`18.19.0+dfsg-6~deb12u2`).
fn rootfs_runtime_version(rootfs_tar: &Path, probe: VersionProbe) -> Option<String> {
    let f = fs::File::open(rootfs_tar).ok()?;
    let mut archive = tar::Archive::new(std::io::BufReader::with_capacity(1 << 20, f));
    for entry in archive.entries().ok()? {
        let mut entry = entry.ok()?;
        let path = entry.path().ok()?.to_string_lossy().into_owned();
        match probe {
            VersionProbe::NumberedBinary {
                prefix,
                print_prefix,
            } => {
                if let Some(v) = path.strip_prefix(prefix) {
                    if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
                        return Some(format!("{print_prefix}{v}"));
                    }
                }
            }
            VersionProbe::DpkgPackage(package) => {
                if path != "var/lib/dpkg/status" {
                    continue;
                }
                let mut text = String::new();
                entry.read_to_string(&mut text).ok()?;
                return dpkg_version(&text, package);
            }
            VersionProbe::ReleaseFile { dir, key } => {
                let Some(rest) = path.strip_prefix(dir) else {
                    continue;
                };
                if !(rest.ends_with("/release") && rest.matches('/').count() == 1)
                    || entry.header().entry_type() != tar::EntryType::Regular
                {
                    continue;
                }
                let mut text = String::new();
                entry.read_to_string(&mut text).ok()?;
                if let Some(v) = release_value(&text, key) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// `KEY="17.0.15"` in a `release` file (a JDK's `JAVA_VERSION`).
fn release_value(release: &str, key: &str) -> Option<String> {
    release.lines().find_map(|l| {
        let v = l
            .strip_prefix(key)?
            .strip_prefix('=')?
            .trim()
            .trim_matches('"');
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// Import a root file system tar as an image (docker import), streaming it from disk.
pub(super) fn import_rootfs(
    client: &Client,
    tar: &Path,
    tag: &str,
    recipe: &BaseRecipe,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let (repo, version) = tag.rsplit_once(':').expect("tags have a version");
    progress(&format!("reading the {} version", recipe.version_label));
    let runtime_version = rootfs_runtime_version(tar, recipe.version_probe).unwrap_or_default();
    progress(&format!("importing {} as {tag}", tar.display()));
    let changes = vec![
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        "ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC".to_string(),
        "WORKDIR /testbed".to_string(),
        "CMD [\"bash\"]".to_string(),
        "LABEL swe-forge.kind=base".to_string(),
        format!("LABEL swe-forge.language={}", recipe.name),
        "LABEL swe-forge.source=debootstrap".to_string(),
        format!("LABEL swe-forge.suite={SUITE}"),
        format!("LABEL swe-forge.{}={runtime_version}", recipe.version_label),
    ];
    let opts = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(changes)
        .build();
    let file = fs::File::open(tar).map_err(io_err(format!("opening {}", tar.display())))?;
    let chunks = file_chunks(file);
    let docker = client.docker();
    client
        .block_on(async {
            let mut stream =
                docker.create_image(Some(opts), Some(bollard::body_try_stream(chunks)), None);
            while let Some(item) = stream.next().await {
                item?;
            }
            Ok::<(), bollard::errors::Error>(())
        })
        .map_err(docker_err(format!("importing {}", tar.display())))?;
    image_id(client, tag)?
        .ok_or_else(|| ImageError::Bootstrap(format!("{tag} is absent after the import")))
}

/// A file as a stream of 1 MiB chunks, for a request body (image imports and loads).
pub(super) fn file_chunks(
    file: fs::File,
) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> {
    futures_util::stream::unfold(Some(file), |state| async move {
        let mut file = state?;
        let mut buf = vec![0u8; 1 << 20];
        match file.read(&mut buf) {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JDK: VersionProbe = VersionProbe::ReleaseFile {
        dir: "usr/lib/jvm/",
        key: "JAVA_VERSION",
    };
    const PYTHON: VersionProbe = VersionProbe::NumberedBinary {
        prefix: "usr/bin/python3.",
        print_prefix: "3.",
    };

    #[test]
    fn reads_the_jdk_version() {
        let release = "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.19+10-1-deb12u2-Debian\"\nJAVA_VERSION=\"17.0.19\"\n";
        assert_eq!(
            release_value(release, "JAVA_VERSION").as_deref(),
            Some("17.0.19")
        );
        assert_eq!(release_value("OS_NAME=Linux\n", "JAVA_VERSION"), None);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("usr/lib/jvm/java-17-openjdk-amd64")).unwrap();
        fs::write(
            root.join("usr/lib/jvm/java-17-openjdk-amd64/release"),
            release,
        )
        .unwrap();
        std::os::unix::fs::symlink(
            "java-17-openjdk-amd64",
            root.join("usr/lib/jvm/java-1.17.0-openjdk-amd64"),
        )
        .unwrap();
        let tar = dir.path().join("root.tar");
        write_rootfs_tar(&root, &tar).unwrap();
        assert_eq!(
            rootfs_runtime_version(&tar, JDK).as_deref(),
            Some("17.0.19")
        );
        assert_eq!(rootfs_runtime_version(&tar, PYTHON), None);
    }

    #[test]
    fn reads_the_node_version_from_dpkg_status() {
        let status = "Package: nodejs-doc\nStatus: install ok installed\nVersion: 1.0\n\n\
                      Package: nodejs\nStatus: deinstall ok config-files\nVersion: 12.0\n\n\
                      Package: nodejs\nStatus: install ok installed\nPriority: optional\n\
                      Version: 18.19.0+dfsg-6~deb12u2\n\n";
        assert_eq!(
            dpkg_version(status, "nodejs").as_deref(),
            Some("18.19.0+dfsg-6~deb12u2")
        );
        assert_eq!(dpkg_version(status, "jest"), None);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("var/lib/dpkg")).unwrap();
        fs::write(root.join("var/lib/dpkg/status"), status).unwrap();
        let tar = dir.path().join("root.tar");
        write_rootfs_tar(&root, &tar).unwrap();
        assert_eq!(
            rootfs_runtime_version(&tar, VersionProbe::DpkgPackage("nodejs")).as_deref(),
            Some("18.19.0+dfsg-6~deb12u2")
        );
    }
}
