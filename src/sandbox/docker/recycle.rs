//! Recycling a worker: a container an episode used, brought back to the state it started in
//! without starting another (`serve` hands such containers to its next sessions and grades a
//! submit in the container it was read from).
//!
//! What the test user can change in a container is what it can write. The image's writable
//! places are read once per image, as the test user, in a fresh container ([`SCAN`]): outside
//! the repository root and the tmpfs mounts they must all be directories that are empty in the
//! image, or the image's containers are not recycled. A recycle then kills every process of
//! the test user (a fresh agent does), empties each of those places and the always-wiped ones
//! ([`ALWAYS`]), removes the user's System V IPC objects, and checks that nothing is left.
//! Nothing the user wrote can outlive that: it cannot write anywhere else, owns no file
//! elsewhere, and has no capability. A place it cannot empty (a file it does not own) means
//! the container is not recycled.

use super::{ROOT, SCRATCH};
use std::collections::HashMap;
use std::sync::Mutex;

/// The places every recycle empties: the repository root, the scratch and temporary tmpfs
/// mounts, and the IPC file systems.
pub(super) fn always() -> Vec<String> {
    [ROOT, "/tmp", SCRATCH, "/dev/shm", "/dev/mqueue"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Run as the test user in a fresh container: every place it may write outside the
/// always-wiped ones, one per line, `empty<TAB>path` for an empty directory and
/// `other<TAB>path` for anything else (symbolic links are skipped: their target is listed
/// where it is writable).
pub(super) fn scan_script() -> String {
    format!(
        "find / \\( -path /proc -o -path /sys -o -path /dev -o -path {root} -o -path /tmp -o -path {scratch} \\) -prune \
         -o -writable -print 2>/dev/null | while IFS= read -r p; do\n\
         [ -L \"$p\" ] && continue\n\
         if [ -d \"$p\" ] && [ -z \"$(find \"$p\" -mindepth 1 -print -quit 2>/dev/null)\" ]; then\n\
         printf 'empty\\t%s\\n' \"$p\"; else printf 'other\\t%s\\n' \"$p\"; fi\n\
         done\n\
         exit 0",
        root = crate::sandbox::shell_quote(ROOT),
        scratch = crate::sandbox::shell_quote(SCRATCH),
    )
}

/// The scan's answer: the directories to empty, or why the image's containers are not
/// recycled (a writable place that is not an empty directory in the image).
pub(super) fn parse_scan(out: &str) -> Scan {
    let mut empty = Vec::new();
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        match line.split_once('\t') {
            Some(("empty", p)) => empty.push(p.to_string()),
            Some(("other", p)) => {
                return Err(format!(
                    "{p} is writable by the test user and not an empty directory in the image"
                ))
            }
            _ => return Err(format!("an unreadable line of the scan: {line:?}")),
        }
    }
    Ok(empty)
}

/// Run as the test user (by bash), with the places to empty as arguments: each emptied (its
/// directories made searchable and writable first, where the user owns them, each before
/// `find` descends into it), the user's IPC objects removed; exit 1 and what is left on
/// stderr when a place is not empty after. Three `find`s for all the places together: every
/// process a recycle starts is paid by the sessions' steps on a loaded machine.
pub(super) const WIPE: &str = r#"rc=0
places=()
for d in "$@"; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  if [ -O "$d" ] && ! { [ -r "$d" ] && [ -w "$d" ] && [ -x "$d" ]; }; then
    chmod u+rwx "$d" 2>/dev/null
  fi
  places+=("$d")
done
if [ ${#places[@]} -gt 0 ]; then
  find "${places[@]}" -mindepth 1 -type d -user "$UID" ! -perm -u=rwx -exec chmod u+rwx {} \; 2>/dev/null
  find "${places[@]}" -mindepth 1 -delete 2>/dev/null
  left=$(find "${places[@]}" -mindepth 1 -print -quit 2>/dev/null)
  if [ -n "$left" ]; then
    echo "could not be emptied: $left" >&2; rc=1
  fi
fi
ipcrm --all 2>/dev/null
exit $rc"#;

/// What the scan of an image found: the places to empty, or why it is not recycled.
type Scan = Result<Vec<String>, String>;

/// What each image's scan found (by image tag), once per process.
fn scans() -> &'static Mutex<HashMap<String, Scan>> {
    static SCANS: std::sync::OnceLock<Mutex<HashMap<String, Scan>>> = std::sync::OnceLock::new();
    SCANS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The scan of `image`, when it was made.
pub(super) fn scanned(image: &str) -> Option<Scan> {
    scans()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(image)
        .cloned()
}

/// Keep the scan of `image`.
pub(super) fn keep(image: &str, scan: Scan) {
    scans()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(image.to_string(), scan);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_directories_are_wiped_and_anything_else_stops_recycling() {
        assert_eq!(
            parse_scan("empty\t/run/lock\nempty\t/var/tmp\n"),
            Ok(vec!["/run/lock".to_string(), "/var/tmp".to_string()])
        );
        assert_eq!(parse_scan(""), Ok(vec![]));
        let err = parse_scan("empty\t/var/tmp\nother\t/etc/passwd\n").unwrap_err();
        assert!(err.contains("/etc/passwd"), "{err}");
        assert!(parse_scan("garbage").is_err());
    }

    #[test]
    fn the_scan_leaves_out_what_every_recycle_empties() {
        let s = scan_script();
        for p in [ROOT, "/tmp", SCRATCH, "/proc"] {
            assert!(s.contains(&format!("-path {p}")), "{p}: {s}");
        }
        for p in [ROOT, "/tmp", SCRATCH, "/dev/shm"] {
            assert!(always().contains(&p.to_string()));
        }
    }

    /// The wipe script on a real directory tree (as this user): everything goes, hidden files
    /// and directories without write permission included; an absent place is skipped.
    #[test]
    fn the_wipe_empties_what_the_user_owns() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(b.join("c")).unwrap();
        std::fs::create_dir_all(a.join("deep/er")).unwrap();
        std::fs::write(a.join("deep/er/f"), "x").unwrap();
        std::fs::write(a.join(".hidden"), "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(a.join("deep"), std::fs::Permissions::from_mode(0o500)).unwrap();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(WIPE)
            .arg("wipe")
            .arg(&a)
            .arg(dir.path().join("absent"))
            .arg(&b)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(std::fs::read_dir(&a).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&b).unwrap().count(), 0);
    }
}
