//! Build contexts: a tar made in memory, with fixed owners and times so that the same files give
//! the same bytes; a checkout is added without caches, reflogs and the host's remote.

use super::{io_err, ImageError};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Every file of a build context gets this modification time (2000-01-01), so that the same
/// content gives the same context (and zip-based tools accept the timestamps).
const CONTEXT_MTIME: u64 = 946_684_800;

/// A build context made in memory, with fixed owners and times so that the same files give
/// the same bytes.
pub struct ContextTar {
    builder: tar::Builder<Vec<u8>>,
    /// The owner (uid = gid) of every entry: 0 for a build context, the test user for a tree
    /// put straight into a container.
    owner: u64,
}

impl Default for ContextTar {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextTar {
    pub fn new() -> ContextTar {
        let mut builder = tar::Builder::new(Vec::new());
        builder.mode(tar::HeaderMode::Deterministic);
        ContextTar { builder, owner: 0 }
    }

    /// A tar whose entries belong to `uid` (and the group of that number): extracted into a
    /// container as they are (`put_archive`), without a build's `COPY --chown`.
    pub fn owned_by(uid: u32) -> ContextTar {
        let mut t = ContextTar::new();
        t.owner = u64::from(uid);
        t
    }

    fn header(&self, size: u64, mode: u32, kind: tar::EntryType) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_uid(self.owner);
        h.set_gid(self.owner);
        h.set_mtime(CONTEXT_MTIME);
        h
    }

    pub fn add_file(&mut self, path: &str, data: &[u8], mode: u32) -> std::io::Result<()> {
        let mut h = self.header(data.len() as u64, mode, tar::EntryType::Regular);
        self.builder.append_data(&mut h, path, data)
    }

    /// Add the tree at `dir` under `prefix`, keeping the entries `keep` accepts (it sees the
    /// path relative to `dir`).
    pub fn add_dir_tree(
        &mut self,
        dir: &Path,
        prefix: &str,
        keep: impl Fn(&Path) -> bool,
    ) -> std::io::Result<()> {
        let mut h = self.header(0, 0o755, tar::EntryType::Directory);
        self.builder
            .append_data(&mut h, format!("{prefix}/"), std::io::empty())?;
        let walker = walkdir::WalkDir::new(dir)
            .min_depth(1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| keep(e.path().strip_prefix(dir).unwrap_or(e.path())));
        for entry in walker {
            let entry = entry.map_err(std::io::Error::other)?;
            let rel = entry
                .path()
                .strip_prefix(dir)
                .expect("walkdir yields children");
            let name = Path::new(prefix).join(rel);
            let meta = fs::symlink_metadata(entry.path())?;
            let exec = meta.mode() & 0o111 != 0;
            let ft = meta.file_type();
            if ft.is_dir() {
                let mut h = self.header(0, 0o755, tar::EntryType::Directory);
                self.builder.append_data(&mut h, &name, std::io::empty())?;
            } else if ft.is_symlink() {
                let target = fs::read_link(entry.path())?;
                let mut h = self.header(0, 0o777, tar::EntryType::Symlink);
                self.builder.append_link(&mut h, &name, &target)?;
            } else if ft.is_file() {
                let data = fs::read(entry.path())?;
                let data = self.rewrite(rel, data);
                let mode = if exec { 0o755 } else { 0o644 };
                let mut h = self.header(data.len() as u64, mode, tar::EntryType::Regular);
                self.builder.append_data(&mut h, &name, data.as_slice())?;
            }
        }
        Ok(())
    }

    /// Add a checkout (worktree and .git) under `prefix`, without Python caches, the fetch
    /// bookkeeping, reflogs and the host's remote.
    pub fn add_checkout(&mut self, checkout: &Path, prefix: &str) -> std::io::Result<()> {
        self.add_dir_tree(checkout, prefix, |rel| {
            let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "__pycache__" || name.ends_with(".pyc") {
                return false;
            }
            !(rel == Path::new(".git/FETCH_HEAD") || rel == Path::new(".git/logs"))
        })
    }

    fn rewrite(&self, rel: &Path, data: Vec<u8>) -> Vec<u8> {
        if rel != Path::new(".git/config") {
            return data;
        }
        // Drop the remotes: they name paths on the host.
        let text = String::from_utf8_lossy(&data);
        let mut out = String::new();
        let mut skipping = false;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with('[') {
                skipping = t.starts_with("[remote ");
            }
            if !skipping {
                out.push_str(line);
                out.push('\n');
            }
        }
        out.into_bytes()
    }

    pub fn finish(self) -> Result<Vec<u8>, ImageError> {
        self.builder
            .into_inner()
            .map_err(io_err("finishing the build context"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn context_drops_the_host_remote() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".git/logs")).unwrap();
        fs::create_dir_all(dir.path().join("pkg/__pycache__")).unwrap();
        fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = /home/me/mirror.git\n[gc]\n\tauto = 0\n",
        )
        .unwrap();
        fs::write(dir.path().join("pkg/__pycache__/m.cpython-311.pyc"), b"x").unwrap();
        fs::write(dir.path().join("pkg/m.py"), b"x = 1\n").unwrap();
        let mut ctx = ContextTar::new();
        ctx.add_checkout(dir.path(), "testbed").unwrap();
        let bytes = ctx.finish().unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut names = Vec::new();
        for e in archive.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            if name == "testbed/.git/config" {
                let mut s = String::new();
                e.read_to_string(&mut s).unwrap();
                assert!(!s.contains("remote"), "{s}");
                assert!(s.contains("[gc]"), "{s}");
            }
            assert_eq!(e.header().mtime().unwrap(), CONTEXT_MTIME);
            names.push(name);
        }
        assert!(names.contains(&"testbed/pkg/m.py".to_string()), "{names:?}");
        assert!(
            !names
                .iter()
                .any(|n| n.contains("__pycache__") || n.contains(".git/logs")),
            "{names:?}"
        );
    }
}
