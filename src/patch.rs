//! The one patch reader: the file sections of a git diff and the paths each one touches.
//!
//! Every module that needs to know which files a patch changes reads it here, so that they
//! agree. A section is one `diff --git` block; its paths come from the most reliable lines it
//! has: `rename from`/`rename to` and `copy from`/`copy to`, else the `---`/`+++` lines, else
//! (binary, mode-only, empty new or deleted files) the `diff --git` header itself. Paths are
//! unquoted the way git quotes them (C-style, `core.quotepath`: `"b/t\303\251st.py"`) and given
//! without the `a/` and `b/` prefixes; `/dev/null` is `None`.

/// One file section of a git diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The path before the change; `None` for a new file.
    pub old: Option<String>,
    /// The path after the change; `None` for a deleted file.
    pub new: Option<String>,
    /// The section's text, from its `diff --git` line to the next one, line ends included.
    pub text: String,
    /// Whether the section is a binary one (`Binary files ... differ`, `GIT binary patch`).
    pub binary: bool,
}

impl Section {
    /// Every path the section touches: old and new (a rename's both), deduplicated, old first.
    pub fn paths(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in [self.old.as_deref(), self.new.as_deref()]
            .into_iter()
            .flatten()
        {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The path it leaves (new, else old for a deletion).
    pub fn path(&self) -> &str {
        self.new
            .as_deref()
            .or(self.old.as_deref())
            .unwrap_or_default()
    }
}

/// The file sections of a git diff (`diff --git` blocks; text before the first is dropped),
/// paths unquoted and without the a/ b/ prefixes; None for /dev/null.
pub fn sections(diff: &str) -> Vec<Section> {
    let mut texts: Vec<String> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            texts.push(String::new());
        }
        if let Some(last) = texts.last_mut() {
            last.push_str(line);
        }
    }
    texts.into_iter().map(section).collect()
}

/// A side of a `---`/`+++` line: a path, or `/dev/null`.
type Side = Option<String>;

/// Read one section's header lines (up to its first hunk or binary data).
fn section(text: String) -> Section {
    let mut lines = text.lines();
    let header = lines
        .next()
        .and_then(|l| l.strip_prefix("diff --git "))
        .unwrap_or_default();
    let (mut from, mut to): (Option<String>, Option<String>) = (None, None);
    let (mut minus, mut plus): (Option<Side>, Option<Side>) = (None, None);
    let (mut created, mut deleted, mut binary) = (false, false, false);
    for line in lines {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with("@@") {
            break;
        } else if line.starts_with("GIT binary patch") {
            binary = true;
            break;
        } else if line.starts_with("Binary files ") && line.ends_with(" differ") {
            binary = true;
            break;
        } else if let Some(p) = line
            .strip_prefix("rename from ")
            .or_else(|| line.strip_prefix("copy from "))
        {
            from = Some(unquote_whole(p));
        } else if let Some(p) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("copy to "))
        {
            to = Some(unquote_whole(p));
        } else if let Some(p) = line.strip_prefix("--- ") {
            minus = Some(label(p, "a/"));
        } else if let Some(p) = line.strip_prefix("+++ ") {
            plus = Some(label(p, "b/"));
        } else if line.starts_with("new file mode ") {
            created = true;
        } else if line.starts_with("deleted file mode ") {
            deleted = true;
        }
    }
    let (mut old, mut new) = match (from, to, minus, plus) {
        (Some(f), Some(t), _, _) => (Some(f), Some(t)),
        (_, _, Some(m), Some(p)) => (m, p),
        _ => {
            let (a, b) = header_paths(header);
            (Some(a), Some(b))
        }
    };
    if created {
        old = None;
    }
    if deleted {
        new = None;
    }
    Section {
        old,
        new,
        text,
        binary,
    }
}

/// The path of a `---`/`+++` line's rest: quoted or not, a trailing tab and timestamp dropped,
/// `prefix` stripped; `None` for `/dev/null`.
fn label(rest: &str, prefix: &str) -> Side {
    let path = if rest.starts_with('"') {
        match unquote(rest) {
            Some((p, _)) => p,
            None => rest.split('\t').next().unwrap_or(rest).to_string(),
        }
    } else {
        // Git quotes a name holding a tab, so in an unquoted one the tab starts the timestamp.
        rest.split('\t').next().unwrap_or(rest).to_string()
    };
    if path == "/dev/null" {
        return None;
    }
    Some(strip(&path, prefix))
}

/// `p` without `prefix`, when it has it.
fn strip(p: &str, prefix: &str) -> String {
    p.strip_prefix(prefix).unwrap_or(p).to_string()
}

/// A path that fills a line's rest: unquoted when it is a quoted one, else as it is.
fn unquote_whole(rest: &str) -> String {
    match unquote(rest) {
        Some((p, tail)) if tail.is_empty() => p,
        _ => rest.to_string(),
    }
}

/// The two paths of a `diff --git` header's rest, without their prefixes.
fn header_paths(rest: &str) -> (String, String) {
    // A quoted first path: the second follows it after one space.
    if rest.starts_with('"') {
        if let Some((a, tail)) = unquote(rest) {
            let b = tail.strip_prefix(' ').unwrap_or(tail);
            let b = unquote_whole(b);
            return (strip(&a, "a/"), strip(&b, "b/"));
        }
    }
    // An unquoted first path holds no `"`: a quoted second path starts at the first ` "`.
    if rest.ends_with('"') {
        if let Some(i) = rest.find(" \"") {
            if let Some((b, tail)) = unquote(&rest[i + 1..]) {
                if tail.is_empty() {
                    return (strip(&rest[..i], "a/"), strip(&b, "b/"));
                }
            }
        }
    }
    // Both unquoted: `a/P b/P` splits in the middle, where both halves are the same path.
    let bytes = rest.as_bytes();
    if bytes.len() >= 5 && (bytes.len() - 5) % 2 == 0 {
        let n = (bytes.len() - 5) / 2;
        if rest.starts_with("a/")
            && rest.is_char_boundary(2 + n)
            && rest[2 + n..].starts_with(" b/")
            && rest[2..2 + n] == rest[5 + n..]
        {
            let p = rest[2..2 + n].to_string();
            return (p.clone(), p);
        }
    }
    match rest.rsplit_once(" b/") {
        Some((a, b)) => (strip(a, "a/"), b.to_string()),
        None => (String::new(), String::new()),
    }
}

/// Read a C-style quoted string (git's quoting) at the start of `s`: the path it holds, its
/// bytes read as UTF-8, and the text after the closing quote. `None` when `s` does not start
/// with a well-formed one.
pub(crate) fn unquote(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let path = String::from_utf8_lossy(&out).into_owned();
                return Some((path, &body[i + 1..]));
            }
            b'\\' => {
                let c = *bytes.get(i + 1)?;
                i += 2;
                let byte = match c {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'0'..=b'3' => {
                        let d1 = *bytes.get(i)?;
                        let d2 = *bytes.get(i + 1)?;
                        if !(b'0'..=b'7').contains(&d1) || !(b'0'..=b'7').contains(&d2) {
                            return None;
                        }
                        i += 2;
                        ((c - b'0') << 6) | ((d1 - b'0') << 3) | (d2 - b'0')
                    }
                    _ => return None,
                };
                out.push(byte);
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    type Pair = (Option<String>, Option<String>);

    fn pairs(diff: &str) -> Vec<Pair> {
        sections(diff).into_iter().map(|s| (s.old, s.new)).collect()
    }

    fn want(pairs: &[(Option<&str>, Option<&str>)]) -> Vec<Pair> {
        let own = |p: Option<&str>| p.map(str::to_string);
        pairs.iter().map(|(a, b)| (own(*a), own(*b))).collect()
    }

    #[test]
    fn plain_modification_and_text_before_the_first_section() {
        let diff = "From abc\nSubject: x\n\n\
diff --git a/src/m.py b/src/m.py\n\
index 1..2 100644\n\
--- a/src/m.py\n\
+++ b/src/m.py\n\
@@ -1 +1 @@\n\
-x\n\
+y\n\
diff --git a/t.py b/t.py\n\
--- a/t.py\n\
+++ b/t.py\n\
@@ -1 +1 @@\n\
--- a/not/a/header\n\
+++ b/not/a/header\n";
        let s = sections(diff);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].path(), "src/m.py");
        assert_eq!(s[0].paths(), vec!["src/m.py"]);
        assert!(s[0].text.starts_with("diff --git a/src/m.py"));
        assert!(s[0].text.ends_with("+y\n"));
        // Lines of a hunk that look like headers are not read as ones.
        assert_eq!(s[1].paths(), vec!["t.py"]);
        assert!(!s[0].binary);
        let start = diff.find("diff --git").unwrap();
        assert_eq!(
            s.iter().map(|s| s.text.as_str()).collect::<String>(),
            diff[start..]
        );
    }

    #[test]
    fn quoted_non_ascii() {
        let diff = "diff --git \"a/t\\303\\251st.py\" \"b/t\\303\\251st.py\"\n\
new file mode 100644\n\
index 0000000..e69de29\n";
        assert_eq!(pairs(diff), want(&[(None, Some("tést.py"))]));
        let diff = "diff --git \"a/\\344\\270\\255 x.py\" \"b/\\344\\270\\255 x.py\"\n\
index 1..2 100644\n\
--- \"a/\\344\\270\\255 x.py\"\n\
+++ \"b/\\344\\270\\255 x.py\"\n\
@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(pairs(diff), want(&[(Some("中 x.py"), Some("中 x.py"))]));
        let diff = "diff --git \"a/q\\\"\\\\\\t\\n.py\" \"b/q\\\"\\\\\\t\\n.py\"\n\
deleted file mode 100644\n\
index e69de29..0000000\n";
        assert_eq!(pairs(diff), want(&[(Some("q\"\\\t\n.py"), None)]));
        // One side quoted, the other not.
        let diff = "diff --git a/x.py \"b/\\303\\251.py\"\nsimilarity index 100%\n\
rename from x.py\nrename to \"\\303\\251.py\"\n";
        assert_eq!(pairs(diff), want(&[(Some("x.py"), Some("é.py"))]));
        assert_eq!(
            header_paths("a/x.py \"b/\\303\\251.py\""),
            ("x.py".into(), "é.py".into())
        );
    }

    #[test]
    fn spaces_and_b_slash_inside_a_path() {
        let diff = "diff --git a/my dir b/t.py b/my dir b/t.py\n\
new file mode 100644\n\
index 0000000..e69de29\n";
        assert_eq!(pairs(diff), want(&[(None, Some("my dir b/t.py"))]));
        let diff = "diff --git a/x b/y.py b/x b/y.py\n\
index 1..2 100644\n\
--- a/x b/y.py\t\n\
+++ b/x b/y.py\t\n\
@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(pairs(diff), want(&[(Some("x b/y.py"), Some("x b/y.py"))]));
        // A timestamp after the tab is dropped too.
        let diff =
            "diff --git a/a b/a\n--- a/a\t2020-01-01 00:00:00\n+++ b/a\t2020-01-02\n@@ -1 +1 @@\n";
        assert_eq!(pairs(diff), want(&[(Some("a"), Some("a"))]));
        // Different unquoted halves and nothing else: the last ` b/` split, as before.
        assert_eq!(header_paths("a/x b/y b/z"), ("x b/y".into(), "z".into()));
    }

    #[test]
    fn rename_and_copy() {
        let diff = "diff --git a/old name.py b/new b/name.py\n\
similarity index 90%\n\
rename from old name.py\n\
rename to new b/name.py\n\
index 1..2 100644\n\
--- a/old name.py\t\n\
+++ b/new b/name.py\t\n\
@@ -1 +1 @@\n-a\n+b\n";
        let s = sections(diff);
        assert_eq!(s[0].paths(), vec!["old name.py", "new b/name.py"]);
        assert_eq!(s[0].path(), "new b/name.py");
        let diff = "diff --git a/a.py b/c.py\n\
similarity index 100%\n\
copy from a.py\n\
copy to c.py\n";
        assert_eq!(pairs(diff), want(&[(Some("a.py"), Some("c.py"))]));
        let diff = "diff --git a/a.py b/c.py\n\
similarity index 100%\n\
rename from a.py\n\
rename to c.py\n";
        assert_eq!(pairs(diff), want(&[(Some("a.py"), Some("c.py"))]));
    }

    #[test]
    fn binary_sections() {
        let diff = "diff --git a/img.png b/img.png\n\
new file mode 100644\n\
index 0000000..1234567\n\
GIT binary patch\n\
literal 3\n\
KcmZ?wbhH2!\n\
\n\
literal 0\n\
HcmV?d00001\n\
\n\
diff --git a/x b/img.png b/x b/img.png\n\
index 1..2 100644\n\
Binary files a/x b/img.png and b/x b/img.png differ\n";
        let s = sections(diff);
        assert_eq!(s.len(), 2);
        assert!(s[0].binary && s[1].binary);
        assert_eq!((s[0].old.as_deref(), s[0].path()), (None, "img.png"));
        assert_eq!(s[1].paths(), vec!["x b/img.png"]);
    }

    #[test]
    fn mode_change_and_empty_files() {
        let diff = "diff --git a/run.sh b/run.sh\n\
old mode 100644\n\
new mode 100755\n\
diff --git a/empty.py b/empty.py\n\
new file mode 100644\n\
index 0000000..e69de29\n\
diff --git a/gone.py b/gone.py\n\
deleted file mode 100644\n\
index e69de29..0000000\n";
        assert_eq!(
            pairs(diff),
            want(&[
                (Some("run.sh"), Some("run.sh")),
                (None, Some("empty.py")),
                (Some("gone.py"), None),
            ])
        );
        assert_eq!(sections(diff)[2].path(), "gone.py");
    }

    #[test]
    fn no_newline_at_end_of_file() {
        let diff = "diff --git a/a.py b/a.py\n\
index 1..2 100644\n\
--- a/a.py\n\
+++ b/a.py\n\
@@ -1 +1 @@\n\
-x\n\
\\ No newline at end of file\n\
+y\n\
\\ No newline at end of file\n\
diff --git a/tests/t.py b/tests/t.py\n\
deleted file mode 100644\n\
--- a/tests/t.py\n\
+++ /dev/null\n\
@@ -1 +0,0 @@\n\
-z\n\
\\ No newline at end of file";
        let s = sections(diff);
        assert_eq!(s.len(), 2);
        assert!(s[0].text.ends_with("+y\n\\ No newline at end of file\n"));
        assert_eq!(
            (s[1].old.as_deref(), s[1].new.as_deref()),
            (Some("tests/t.py"), None)
        );
        assert!(s[1].text.ends_with("\\ No newline at end of file"));
    }

    #[test]
    fn unquote_escapes() {
        assert_eq!(
            unquote("\"a\\a\\b\\t\\n\\v\\f\\r\\\"\\\\\\101\" rest"),
            Some(("a\x07\x08\t\n\x0b\x0c\r\"\\A".to_string(), " rest"))
        );
        assert_eq!(unquote("\"open"), None);
        assert_eq!(unquote("\"bad\\q\""), None);
        assert_eq!(unquote("plain"), None);
    }

    /// Random paths in a real repository: `sections` gives the (old, new) pairs that
    /// `git diff --name-status -z` reports, whatever `core.quotepath` says.
    #[test]
    fn agrees_with_git_on_random_paths() {
        if std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipping agrees_with_git_on_random_paths: no `git` binary");
            return;
        }
        for quotepath in [true, false] {
            property::run(quotepath);
        }
    }

    mod property {
        use super::super::{sections, Section};
        use rand::{rngs::StdRng, Rng, SeedableRng};
        use std::collections::BTreeSet;
        use std::path::Path;
        use std::process::Command;

        type Pair = (Option<String>, Option<String>);

        const ALPHABET: &[&str] = &[
            "a", "b", "c", "x", " ", " b", "b/", "\"", "\\", "\t", "é", "中", "-", ".py", "1",
        ];

        fn git(dir: &Path, quotepath: bool, args: &[&str]) -> Vec<u8> {
            let out = Command::new("git")
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("HOME", dir)
                .args([
                    "-c",
                    &format!("core.quotepath={quotepath}"),
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "color.ui=never",
                ])
                .args(args)
                .output()
                .expect("running git");
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        }

        fn segment(rng: &mut StdRng) -> String {
            let n = rng.random_range(1..5);
            let mut s: String = (0..n)
                .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
                .collect::<String>()
                .replace('/', "");
            if rng.random_bool(0.15) {
                s.insert(0, '-');
            }
            if s.is_empty() {
                s.push('z');
            }
            s
        }

        fn random_path(rng: &mut StdRng) -> String {
            let n = rng.random_range(1..4);
            (0..n).map(|_| segment(rng)).collect::<Vec<_>>().join("/")
        }

        /// Whether `p` can be a file beside the files `taken`: neither is a folder of the other.
        fn fits(p: &str, taken: &BTreeSet<String>) -> bool {
            !taken.iter().any(|t| {
                t == p || t.starts_with(&format!("{p}/")) || p.starts_with(&format!("{t}/"))
            })
        }

        /// Content unique to `i`, long enough for rename detection; binary when `binary`.
        fn content(i: usize, version: usize, binary: bool) -> Vec<u8> {
            let mut out = Vec::new();
            for l in 0..20 {
                out.extend(format!("file {i} line {l}\n").into_bytes());
            }
            out.extend(format!("version {version}\n").into_bytes());
            if binary {
                out.extend([0u8, 1, 2, 255, 0]);
            }
            out
        }

        fn write(root: &Path, p: &str, bytes: &[u8]) {
            let full = root.join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, bytes).unwrap();
        }

        fn remove(root: &Path, p: &str) {
            std::fs::remove_file(root.join(p)).unwrap();
        }

        fn name_status(raw: &[u8]) -> Vec<Pair> {
            let fields: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|f| !f.is_empty())
                .map(|f| String::from_utf8(f.to_vec()).unwrap())
                .collect();
            let mut out = Vec::new();
            let mut i = 0;
            while i < fields.len() {
                let status = fields[i].as_bytes()[0];
                match status {
                    b'R' | b'C' => {
                        out.push((Some(fields[i + 1].clone()), Some(fields[i + 2].clone())));
                        i += 3;
                    }
                    b'A' => {
                        out.push((None, Some(fields[i + 1].clone())));
                        i += 2;
                    }
                    b'D' => {
                        out.push((Some(fields[i + 1].clone()), None));
                        i += 2;
                    }
                    _ => {
                        out.push((Some(fields[i + 1].clone()), Some(fields[i + 1].clone())));
                        i += 2;
                    }
                }
            }
            out.sort();
            out
        }

        /// Compare `sections` with `--name-status` for the last commit; the number of changes
        /// and the diff.
        fn check(root: &Path, quotepath: bool, flags: &[&str]) -> (usize, String) {
            let mut diff_args = vec!["diff", "--binary", "--no-ext-diff", "--no-textconv"];
            diff_args.extend(flags);
            diff_args.extend(["HEAD~1", "HEAD"]);
            let diff = git(root, quotepath, &diff_args);
            let diff = String::from_utf8(diff).expect("paths are UTF-8");
            let mut got: Vec<Pair> = sections(&diff)
                .into_iter()
                .map(|s| (s.old, s.new))
                .collect();
            got.sort();
            let mut ns_args = vec!["diff", "--name-status", "-z"];
            ns_args.extend(flags);
            ns_args.extend(["HEAD~1", "HEAD"]);
            let want = name_status(&git(root, quotepath, &ns_args));
            assert_eq!(got, want, "quotepath={quotepath} {flags:?}\n{diff}");
            (want.len(), diff)
        }

        pub(super) fn run(quotepath: bool) {
            let mut rng = StdRng::seed_from_u64(31 + quotepath as u64);
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().join("repo");
            std::fs::create_dir(&root).unwrap();
            git(&root, quotepath, &["init", "-q"]);
            let mut taken: BTreeSet<String> = BTreeSet::new();
            let fresh = |rng: &mut StdRng, taken: &mut BTreeSet<String>| loop {
                let p = random_path(rng);
                if fits(&p, taken) {
                    taken.insert(p.clone());
                    return p;
                }
            };
            // Commit 1: ~120 files, some empty, some binary.
            let mut files: Vec<(String, usize, bool, bool)> = Vec::new(); // path, id, binary, empty
            for i in 0..120 {
                let p = fresh(&mut rng, &mut taken);
                let binary = rng.random_bool(0.15);
                let empty = rng.random_bool(0.1);
                let bytes = if empty {
                    Vec::new()
                } else {
                    content(i, 0, binary)
                };
                write(&root, &p, &bytes);
                files.push((p, i, binary, empty));
            }
            git(&root, quotepath, &["add", "-A"]);
            git(&root, quotepath, &["commit", "-q", "-m", "one"]);
            // Commit 2: modify, rename (with and without edits), delete, chmod, create.
            let mut next = 120;
            for (p, i, binary, empty) in files.iter_mut() {
                match rng.random_range(0..6) {
                    0 => write(&root, p, &content(*i, 1, *binary)),
                    1 | 2 => {
                        let q = fresh(&mut rng, &mut taken);
                        let bytes = std::fs::read(root.join(&*p)).unwrap();
                        remove(&root, p);
                        let bytes = if rng.random_bool(0.5) && !*empty {
                            content(*i, 2, *binary)
                        } else {
                            bytes
                        };
                        write(&root, &q, &bytes);
                        *p = q;
                    }
                    3 => remove(&root, p),
                    4 => {
                        use std::os::unix::fs::PermissionsExt;
                        let perm = std::fs::Permissions::from_mode(0o755);
                        std::fs::set_permissions(root.join(&*p), perm).unwrap();
                    }
                    _ => {}
                }
            }
            for _ in 0..80 {
                let p = fresh(&mut rng, &mut taken);
                let bytes = match rng.random_range(0..4) {
                    0 => Vec::new(),
                    1 => content(next, 0, true),
                    _ => content(next, 0, false),
                };
                write(&root, &p, &bytes);
                next += 1;
            }
            git(&root, quotepath, &["add", "-A"]);
            git(&root, quotepath, &["commit", "-q", "-m", "two"]);
            let (n, diff) = check(&root, quotepath, &["-M"]);
            assert!(n > 150, "only {n} changes");
            // The cases this test is for all occur.
            let all = sections(&diff);
            let renamed = |s: &&Section| s.old.is_some() && s.new.is_some() && s.old != s.new;
            assert!(all.iter().filter(renamed).count() > 10);
            assert!(all.iter().any(|s| s.binary));
            assert!(all.iter().any(|s| s.text.contains("\nold mode ")));
            assert!(all.iter().any(|s| s.path().contains(" b/")));
            assert!(all
                .iter()
                .any(|s| !s.text.contains("\n--- ") && s.old.is_none()));
            assert!(all
                .iter()
                .any(|s| !s.text.contains("\n--- ") && s.new.is_none()));
            assert!(diff.contains("diff --git \""));
            assert_eq!(diff.contains("\\303\\251"), quotepath);
            check(&root, quotepath, &["-C", "-C"]);
            check(&root, quotepath, &["--no-renames"]);
        }
    }
}
