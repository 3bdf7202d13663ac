//! Mutate the package, not the repository (`tests/fixtures/shipped_package`): the profile finds
//! what the project ships (the package `minicalc`), leaves `tools/`, `scripts/` and the
//! `noxfile.py` out, and `import` prints what it chose and why; `mutate`'s candidates of a run
//! all lie in the package.

mod common;
use common::*;

#[test]
fn only_the_shipped_package_is_mutated_and_import_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = fixture_manifest(dir.path(), "shipped_package");
    let out = bin().arg("import").arg(&manifest).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("mutating the shipped packages and modules minicalc"),
        "{stdout}"
    );
    let out = bin()
        .arg("import")
        .arg(&manifest)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let profile = &rows[0]["repo"]["profile"];
    assert_eq!(
        profile["source_files"],
        serde_json::json!(["minicalc/__init__.py"])
    );
    assert_eq!(profile["packages"], serde_json::json!(["minicalc"]));

    let (out, run_dir) = run_fixture("shipped_package", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cands = candidate_lines(run_dir.path());
    assert!(!cands.is_empty());
    for c in &cands {
        assert_eq!(c["file"], "minicalc/__init__.py", "{c}");
    }
}
