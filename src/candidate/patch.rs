//! Patches: the `git apply`-able unified diff of one edit.

use super::lines::Lines;

/// A unified diff (3 lines of context) of one edit, built from the changed lines only.
pub(super) fn unified_patch(
    file: &str,
    src: &str,
    lines: &Lines,
    start: usize,
    end: usize,
    text: &str,
) -> String {
    let n = lines.count();
    let first = lines.line_of(start.min(src.len().saturating_sub(1)));
    let mut last = if end > start {
        lines.line_of(end - 1)
    } else {
        first
    };
    // The new text of lines first..=last; extend while it would run into the next line.
    let new_block = loop {
        let block = format!(
            "{}{}{}",
            &src[lines.start(first)..start],
            text,
            &src[end..lines.end(last)]
        );
        if !block.is_empty()
            && !block.ends_with('\n')
            && lines.end(last) < src.len()
            && last + 1 < n
        {
            last += 1;
            continue;
        }
        break block;
    };
    let pre = first.saturating_sub(3);
    let post = (last + 4).min(n);
    let old_lines: Vec<&str> = (first..=last)
        .map(|l| &src[lines.start(l)..lines.end(l)])
        .collect();
    let new_lines: Vec<&str> = new_block.split_inclusive('\n').collect();
    let context_before = first - pre;
    let context_after = post - (last + 1);
    let old_count = context_before + old_lines.len() + context_after;
    let new_count = context_before + new_lines.len() + context_after;
    let at = |count: usize| if count == 0 { pre } else { pre + 1 };

    let mut out = format!(
        "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -{},{} +{},{} @@\n",
        at(old_count),
        old_count,
        at(new_count),
        new_count
    );
    let mut emit = |mark: char, line: &str| {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for l in pre..first {
        emit(' ', &src[lines.start(l)..lines.end(l)]);
    }
    for l in &old_lines {
        emit('-', l);
    }
    for l in &new_lines {
        emit('+', l);
    }
    for l in last + 1..post {
        emit(' ', &src[lines.start(l)..lines.end(l)]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::enumerate_source;
    use crate::candidate::tests::{python_rules, SHOP};
    use crate::lang::Language;
    use std::path::Path;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args([
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=t",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs")
    }

    #[test]
    fn patches_apply_with_git_and_reproduce_the_buggy_file() {
        // Edits on the first line, in the middle, on the last line without a newline, and
        // removals of the last lines of a file.
        let files: Vec<(&str, String)> = vec![
            ("shop.py", SHOP.to_string()),
            (
                "pkg/first.py",
                "def f(a, b):\n    return a < b\n".to_string(),
            ),
            (
                "pkg/no_newline.py",
                "import os\n\n\ndef g(xs):\n    xs.sort()\n    total = 0\n    return len(xs) > 1"
                    .to_string(),
            ),
            (
                "pkg/tail.py",
                "def h(d, k):\n    d[k] = 1\n    d.pop(k)\n".to_string(),
            ),
            (
                "pkg/crlf.py",
                "def c(a):\r\n    if a == 1:\r\n        return 2\r\n    return 3\r\n".to_string(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        assert!(git(dir.path(), &["init", "-q"]).status.success());
        assert!(git(dir.path(), &["add", "-A"]).status.success());
        assert!(git(dir.path(), &["commit", "-qm", "clean"])
            .status
            .success());

        let rules = python_rules();
        let mut applied = 0;
        let mut at_end = 0;
        for (name, text) in &files {
            let cands = enumerate_source(name, text.as_bytes(), Language::Python, &rules).unwrap();
            assert!(!cands.is_empty(), "{name}");
            for c in &cands {
                let patch = dir.path().join("bug.patch");
                std::fs::write(&patch, &c.bug_patch).unwrap();
                let check = git(dir.path(), &["apply", "--check", "bug.patch"]);
                assert!(
                    check.status.success(),
                    "{name} {}: {}\n{}",
                    c.mutator,
                    String::from_utf8_lossy(&check.stderr),
                    c.bug_patch
                );
                assert!(git(dir.path(), &["apply", "bug.patch"]).status.success());
                let buggy = std::fs::read_to_string(dir.path().join(name)).unwrap();
                assert_eq!(buggy, c.apply(text), "{}\n{}", c.mutator, c.bug_patch);
                assert!(git(dir.path(), &["checkout", "-q", "--", "."])
                    .status
                    .success());
                applied += 1;
                if c.byte_range.1 == text.len()
                    || c.bug_patch.contains("\\ No newline at end of file")
                {
                    at_end += 1;
                }
            }
        }
        assert!(applied > 30, "{applied}");
        assert!(at_end > 0);

        // GNU patch agrees, where it is installed.
        if Command::new("patch").arg("--version").output().is_ok() {
            let (name, text) = &files[2];
            for c in enumerate_source(name, text.as_bytes(), Language::Python, &rules).unwrap() {
                let out = Command::new("patch")
                    .args(["-p1", "--quiet", "--output=-"])
                    .arg(dir.path().join(name))
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .and_then(|mut child| {
                        use std::io::Write;
                        child
                            .stdin
                            .take()
                            .unwrap()
                            .write_all(c.bug_patch.as_bytes())?;
                        child.wait_with_output()
                    })
                    .unwrap();
                assert!(out.status.success(), "{}", c.bug_patch);
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    c.apply(text),
                    "{}",
                    c.bug_patch
                );
            }
        }
    }

    #[test]
    fn a_patch_for_the_only_line_of_a_file() {
        let src = "x = 1";
        let lines = Lines::new(src);
        let patch = unified_patch("one.py", src, &lines, 4, 5, "2");
        assert_eq!(
            patch,
            "diff --git a/one.py b/one.py\n--- a/one.py\n+++ b/one.py\n@@ -1,1 +1,1 @@\n-x = 1\n\\ No newline at end of file\n+x = 2\n\\ No newline at end of file\n"
        );
        let src = "a\nb\n";
        let patch = unified_patch("two.py", src, &Lines::new(src), 0, 4, "");
        assert!(patch.ends_with("@@ -1,2 +0,0 @@\n-a\n-b\n"), "{patch}");
    }
}
