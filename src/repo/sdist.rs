//! PyPI sdists: the archive downloaded with pip into the cache, and unpacked safely (no entry
//! written outside the target, links skipped).

use super::{publish, staging_dir, Ctx, ImportError};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use tracing::info;

/// `cache/sdists/NAME-VERSION/<archive>`, downloaded with pip unless already there.
pub(super) fn download_sdist(
    cx: &Ctx<'_>,
    name: &str,
    version: &str,
    cache: &Path,
) -> Result<PathBuf, ImportError> {
    let dest = cache.join("sdists").join(format!("{name}-{version}"));
    if let Some(archive) = find_archive(&dest) {
        info!(seed = cx.seed, archive = %archive.display(), "using downloaded sdist");
        return Ok(archive);
    }
    let spec = format!("{name}=={version}");
    info!(seed = cx.seed, spec = %spec, "downloading sdist with pip");
    let staged = staging_dir(cx, &dest)?;
    let output = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
        .args(["--disable-pip-version-check", "--no-input", "-d"])
        .arg(staged.path())
        .arg(&spec)
        .output()
        .map_err(|e| ImportError::Download {
            seed: cx.seed.to_string(),
            spec: spec.clone(),
            detail: format!("cannot run python3: {e}"),
        })?;
    if !output.status.success() {
        return Err(ImportError::Download {
            seed: cx.seed.to_string(),
            spec,
            detail: format!(
                "{}: {}",
                output.status,
                tail(&String::from_utf8_lossy(&output.stderr), 40)
            ),
        });
    }
    if find_archive(staged.path()).is_none() {
        return Err(ImportError::Download {
            seed: cx.seed.to_string(),
            spec,
            detail: "pip saved no .tar.gz or .zip archive".to_string(),
        });
    }
    publish(cx, staged, &dest)?;
    find_archive(&dest).ok_or_else(|| ImportError::Download {
        seed: cx.seed.to_string(),
        spec,
        detail: format!("the archive vanished from {}", dest.display()),
    })
}

/// The last `lines` lines of `text`, trimmed.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The first (by name) `.tar.gz`, `.tgz` or `.zip` file in `dir`.
fn find_archive(dir: &Path) -> Option<PathBuf> {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && archive_kind(p).is_some())
        .collect();
    archives.sort();
    archives.into_iter().next()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ArchiveKind {
    TarGz,
    Zip,
}

fn archive_kind(path: &Path) -> Option<ArchiveKind> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Some(ArchiveKind::TarGz)
    } else if name.ends_with(".zip") {
        Some(ArchiveKind::Zip)
    } else {
        None
    }
}

/// An archive entry's path made relative and safe: `.` parts dropped; `..`, absolute paths
/// and drive prefixes refused. `None` for the archive root itself.
fn safe_relative(path: &Path) -> Result<Option<PathBuf>, String> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "entry `{}` points outside the archive",
                    path.display()
                ))
            }
        }
    }
    Ok((!out.as_os_str().is_empty()).then_some(out))
}

/// Unpack a `.tar.gz` or `.zip` archive into `into` and return the project root: the single
/// top-level directory when there is one, else `into`. Only directories and regular files are
/// created (links are skipped), so no entry can write outside `into`.
pub(super) fn unpack(archive: &Path, into: &Path) -> Result<PathBuf, String> {
    let kind = archive_kind(archive).ok_or("not a .tar.gz or .zip archive")?;
    let file = std::fs::File::open(archive).map_err(|e| e.to_string())?;
    match kind {
        ArchiveKind::TarGz => unpack_tar(file, into)?,
        ArchiveKind::Zip => unpack_zip(file, into)?,
    }
    let top: Vec<PathBuf> = std::fs::read_dir(into)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match top.as_slice() {
        [only] if only.is_dir() => Ok(only.clone()),
        _ => Ok(into.to_path_buf()),
    }
}

fn write_entry(
    into: &Path,
    rel: &Path,
    data: &mut dyn io::Read,
    executable: bool,
) -> Result<(), String> {
    let dest = into.join(rel);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", rel.display()))?;
    }
    let mut out = std::fs::File::create(&dest).map_err(|e| format!("{}: {e}", rel.display()))?;
    io::copy(data, &mut out).map_err(|e| format!("{}: {e}", rel.display()))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", rel.display()))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    Ok(())
}

fn unpack_tar(file: std::fs::File, into: &Path) -> Result<(), String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let Some(rel) = safe_relative(&path)? else {
            continue;
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            std::fs::create_dir_all(into.join(&rel))
                .map_err(|e| format!("{}: {e}", rel.display()))?;
        } else if kind.is_file() || kind.is_contiguous() {
            let executable = entry
                .header()
                .mode()
                .map(|m| m & 0o111 != 0)
                .unwrap_or(false);
            write_entry(into, &rel, &mut entry, executable)?;
        }
        // links, devices and fifos are not part of a source tree we mutate: skipped
    }
    Ok(())
}

fn unpack_zip(file: std::fs::File, into: &Path) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| e.to_string())?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| e.to_string())?;
        let name = entry.name().to_string();
        // `enclosed_name` refuses absolute paths and `..` escapes; check again ourselves.
        let enclosed = entry
            .enclosed_name()
            .ok_or_else(|| format!("entry `{name}` points outside the archive"))?;
        let Some(rel) = safe_relative(&enclosed)? else {
            continue;
        };
        if entry.is_dir() {
            std::fs::create_dir_all(into.join(&rel))
                .map_err(|e| format!("{}: {e}", rel.display()))?;
        } else if entry.is_symlink() {
            continue;
        } else {
            let executable = entry.unix_mode().is_some_and(|m| m & 0o111 != 0);
            write_entry(into, &rel, &mut entry, executable)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;
    use crate::repo::tests::{assert_clean_detached, seed};
    use crate::toolchain::import;

    #[test]
    fn archives_unpack_and_refuse_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        // A .tar.gz with one top-level directory and an executable file.
        let tgz = tmp.path().join("p-1.0.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&tgz).unwrap(),
                flate2::Compression::default(),
            );
            let mut tar = tar::Builder::new(gz);
            for (path, mode, data) in [
                ("p-1.0/p.py", 0o644, &b"X = 1\n"[..]),
                ("p-1.0/bin/run", 0o755, b"#!/bin/sh\n"),
            ] {
                let mut header = tar::Header::new_gnu();
                header.set_size(data.len() as u64);
                header.set_mode(mode);
                header.set_cksum();
                tar.append_data(&mut header, path, data).unwrap();
            }
            tar.into_inner().unwrap().finish().unwrap();
        }
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let root = unpack(&tgz, &out).unwrap();
        assert_eq!(root, out.join("p-1.0"));
        assert_eq!(std::fs::read(root.join("p.py")).unwrap(), b"X = 1\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_ne!(
                std::fs::metadata(root.join("bin/run"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o111,
                0
            );
            assert_eq!(
                std::fs::metadata(root.join("p.py"))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o111,
                0
            );
        }

        // A .tar.gz whose entry climbs out of the target (header written by hand: the tar
        // builder refuses such paths).
        let evil = tmp.path().join("evil.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&evil).unwrap(),
                flate2::Compression::default(),
            );
            let mut tar = tar::Builder::new(gz);
            let mut header = tar::Header::new_old();
            let name = b"../escaped.txt";
            header.as_old_mut().name[..name.len()].copy_from_slice(name);
            header.set_size(2);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            header.set_cksum();
            tar.append(&header, &b"hi"[..]).unwrap();
            tar.into_inner().unwrap().finish().unwrap();
        }
        let out = tmp.path().join("out2");
        std::fs::create_dir(&out).unwrap();
        let err = unpack(&evil, &out).unwrap_err();
        assert!(err.contains("outside the archive"), "{err}");
        assert!(!tmp.path().join("escaped.txt").exists());

        // A .zip with the same trick.
        let zip_path = tmp.path().join("evil.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.start_file("q-1.0/q.py", options).unwrap();
            io::Write::write_all(&mut zip, b"Y = 2\n").unwrap();
            zip.start_file("../escaped.txt", options).unwrap();
            io::Write::write_all(&mut zip, b"hi").unwrap();
            zip.finish().unwrap();
        }
        let out = tmp.path().join("out3");
        std::fs::create_dir(&out).unwrap();
        let err = unpack(&zip_path, &out).unwrap_err();
        assert!(err.contains("outside the archive"), "{err}");
        assert!(!tmp.path().join("escaped.txt").exists());
    }

    #[test]
    fn zip_with_single_top_directory_is_stripped() {
        let tmp = tempfile::tempdir().unwrap();
        let zip_path = tmp.path().join("q-1.0.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.add_directory("q-1.0/", options).unwrap();
            zip.start_file("q-1.0/q.py", options).unwrap();
            io::Write::write_all(&mut zip, b"Y = 2\n").unwrap();
            zip.start_file("q-1.0/test_q.py", options.unix_permissions(0o755))
                .unwrap();
            io::Write::write_all(&mut zip, b"").unwrap();
            zip.finish().unwrap();
        }
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let root = unpack(&zip_path, &out).unwrap();
        assert_eq!(root, out.join("q-1.0"));
        assert_eq!(std::fs::read(root.join("q.py")).unwrap(), b"Y = 2\n");
    }

    /// Downloads `six==1.16.0` from PyPI with pip (needs the network).
    #[test]
    fn sdist_import_is_stable() {
        let (cache1, cache2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let s = seed("six", "pypi:six==1.16.0", Language::Python);
        let a = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_eq!(a.source, "pypi:six==1.16.0");
        assert!(a.checkout.join("six.py").is_file());
        assert!(
            a.profile.test_files.contains(&"test_six.py".to_string()),
            "{:?}",
            a.profile
        );
        assert!(
            a.profile.source_files.contains(&"six.py".to_string()),
            "{:?}",
            a.profile
        );
        assert!(!a.profile.source_files.contains(&"setup.py".to_string()));
        assert_clean_detached(&a.checkout, &a.commit);
        // Second import in the same cache uses the downloaded archive.
        let again = import(&s, Path::new("."), cache1.path()).unwrap();
        assert_eq!(again.commit, a.commit);
        // A fresh cache downloads again and gets the same commit.
        let b = import(&s, Path::new("."), cache2.path()).unwrap();
        assert_eq!(b.commit, a.commit);
    }
}
