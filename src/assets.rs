//! Assets compiled into the binary: the demo seeds, the issue templates and the Dockerfile
//! templates, so that `swe-forge run` works from any directory on a fresh machine.

use include_dir::{include_dir, Dir};
use std::io;
use std::path::{Path, PathBuf};

pub static SEEDS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/seeds");
pub static TEMPLATES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The embedded template at `path` (relative to templates/), as text.
pub fn template(path: &str) -> Option<&'static str> {
    TEMPLATES.get_file(path).and_then(|f| f.contents_utf8())
}

/// Write the embedded demo seeds under `cache/demo-<content hash>/` (once) and return the
/// path of their manifest, `demo.yaml`.
pub fn demo_manifest(cache: &Path) -> io::Result<PathBuf> {
    let mut hasher = blake3::Hasher::new();
    hash_dir(&SEEDS, &mut hasher);
    let key = &hasher.finalize().to_hex()[..12];
    let dir = cache.join(format!("demo-{key}"));
    let manifest = dir.join("demo.yaml");
    if !dir.join(".complete").exists() {
        let tmp = cache.join(format!(".demo-{key}-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp)?;
        }
        std::fs::create_dir_all(&tmp)?;
        SEEDS.extract(&tmp)?;
        std::fs::write(tmp.join(".complete"), b"")?;
        match std::fs::rename(&tmp, &dir) {
            Ok(()) => {}
            // Another process finished first: theirs is identical.
            Err(_) if dir.join(".complete").exists() => std::fs::remove_dir_all(&tmp)?,
            Err(e) => return Err(e),
        }
    }
    Ok(manifest)
}

fn hash_dir(dir: &Dir<'_>, h: &mut blake3::Hasher) {
    for f in dir.files() {
        h.update(f.path().to_string_lossy().as_bytes());
        h.update(f.contents());
    }
    for d in dir.dirs() {
        hash_dir(d, h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_template_is_embedded() {
        for style in crate::issue::STYLES {
            assert!(template(&format!("issue/{style}.md.j2"))
                .unwrap()
                .contains("{{ public }}"));
        }
        assert!(template("issue/categories.yaml")
            .unwrap()
            .contains("default:"));
    }

    #[test]
    fn demo_seeds_extract_once() {
        let cache = tempfile::tempdir().unwrap();
        let m1 = demo_manifest(cache.path()).unwrap();
        let m2 = demo_manifest(cache.path()).unwrap();
        assert_eq!(m1, m2);
        assert!(m1.exists());
    }
}
