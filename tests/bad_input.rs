//! Bad input gets a clear error and loses nothing: malformed manifests, unknown sources,
//! repositories without tests, baselines that fail or hang, unparsable sources, candidates
//! that do not fit the checkout.

mod common;
use common::*;

/// A malformed manifest is refused with an error naming the file and the key.
#[test]
fn malformed_manifest_names_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken-manifest.yaml");
    std::fs::write(
        &path,
        "seeds:\n  - name: a\n    source: .\n    language: cobol\n",
    )
    .unwrap();
    let out = bin()
        .args(["run", path.to_str().unwrap(), "--sandbox", "local", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken-manifest.yaml"), "{err}");
    assert!(err.contains("seeds[0].language"), "{err}");
}

/// An unknown source scheme is named as such, with the key at fault.
#[test]
fn unknown_source_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.yaml");
    std::fs::write(
        &path,
        "seeds:\n  - name: a\n    source: ftp://example.invalid/a.git\n    language: python\n",
    )
    .unwrap();
    let out = bin()
        .args(["import", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown source"), "{err}");
    assert!(err.contains("seeds[0].source"), "{err}");
}

/// A repository without tests fails its seed with a clear reason; the run still ends cleanly.
#[test]
fn repository_without_tests_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let m = fixture_manifest(dir.path(), "no_tests");
    let out = bin()
        .args([
            "run",
            m.to_str().unwrap(),
            "--sandbox",
            "local",
            "--json",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "no_tests");
    assert_eq!(seed["status"], "failed");
    assert!(
        seed["detail"].as_str().unwrap().contains("no test"),
        "{seed}"
    );
    // stderr is a pipe here, as in `run 2> log`: the log has no colour codes.
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("INFO") || log.contains("WARN"), "{log}");
    assert!(!log.contains('\u{1b}'), "{log}");
}

/// A baseline where every test fails rejects the seed: nothing can be verified against it.
#[test]
fn failing_baseline_rejects_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let m = fixture_manifest(dir.path(), "failing_baseline");
    let out = bin()
        .args([
            "run",
            m.to_str().unwrap(),
            "--sandbox",
            "local",
            "--json",
            "--baseline-repeats",
            "2",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "failing_baseline");
    assert_eq!(seed["status"], "rejected");
    assert!(
        seed["detail"]
            .as_str()
            .unwrap()
            .contains("no test passes reliably"),
        "{seed}"
    );
}

/// A hanging baseline hits its timeout and rejects the seed instead of hanging the run.
#[test]
fn hanging_baseline_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let m = fixture_manifest(dir.path(), "hanging_baseline");
    let out = bin()
        .args([
            "run",
            m.to_str().unwrap(),
            "--sandbox",
            "local",
            "--json",
            "--baseline-timeout",
            "5",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = summary(&out);
    let seed = seed_summary(&s, "hanging_baseline");
    assert_eq!(seed["status"], "rejected");
    assert!(
        seed["detail"].as_str().unwrap().contains("timeout"),
        "{seed}"
    );
}

/// Files that are not UTF-8 or do not parse are skipped with a warning; the rest is mutated.
#[test]
fn unparsable_sources_are_skipped_with_a_warning() {
    let out = bin()
        .args(["mutate"])
        .arg(fixture("bad_sources"))
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("latin1.py") && err.contains("not valid UTF-8"),
        "{err}"
    );
    assert!(
        err.contains("broken.py") && err.contains("syntax errors"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let files: std::collections::BTreeSet<String> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["file"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!files.is_empty(), "the good module still yields candidates");
    assert!(
        files
            .iter()
            .all(|f| !f.ends_with("latin1.py") && !f.ends_with("broken.py")),
        "{files:?}"
    );
}

/// Candidates given to `verify --candidates` that do not fit the checkout (an absolute path,
/// an edit past the end of the file) are skipped with their reason, not a panic.
#[test]
fn candidates_that_do_not_fit_the_checkout_are_skipped() {
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
    let out = bin()
        .args(["mutate", seed.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .expect("the demo seed has candidates");
    let mut absolute = first.clone();
    absolute["file"] = seed
        .join(first["file"].as_str().unwrap())
        .to_string_lossy()
        .into_owned()
        .into();
    let mut past_end = first.clone();
    past_end["byte_range"] = serde_json::json!([1_000_000, 1_000_003]);
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let cands = dir.path().join("cands.jsonl");
    std::fs::write(&cands, format!("{absolute}\n{past_end}\n")).unwrap();
    let out = bin()
        .env("TMPDIR", &tmp)
        .args(["verify", "--candidates"])
        .arg(&cands)
        .args(["--sandbox", "local", "--only", "pyshelf", "--json", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &summary["seeds"][0];
    assert_eq!(s["skipped_candidates"], 2, "{s}");
    assert_eq!(s["decided"], 0, "{s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a path relative"), "{err}");
    assert!(err.contains("does not match the text"), "{err}");
}
