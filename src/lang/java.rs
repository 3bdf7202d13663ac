//! Java specifics: which files are tests (Maven layout).

/// Whether a repository-relative path is a Java test source (Maven `src/test/`, or a
/// class named `*Test`/`Test*`/`*Tests`).
pub fn is_test_path(rel: &str) -> bool {
    if rel.contains("src/test/") || rel.starts_with("test/") {
        return true;
    }
    let file = rel.rsplit('/').next().unwrap_or(rel);
    let stem = file.strip_suffix(".java").unwrap_or(file);
    stem.ends_with("Test") || stem.ends_with("Tests") || stem.starts_with("Test")
}
