//! Python specifics: which files are tests, which nodes are functions.

/// Whether a repository-relative path (with `/` separators) is a Python test file or lives
/// in a test directory (pytest's conventions plus `conftest.py`).
pub fn is_test_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    if file == "conftest.py" || file.starts_with("test_") || file.ends_with("_test.py") {
        return true;
    }
    parts[..parts.len().saturating_sub(1)]
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "testing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_test_files() {
        assert!(is_test_path("tests/test_a.py"));
        assert!(is_test_path("pkg/tests/helpers.py"));
        assert!(is_test_path("pkg/a_test.py"));
        assert!(is_test_path("conftest.py"));
        assert!(!is_test_path("pkg/testing_utils.py"));
        assert!(!is_test_path("src/pkg/core.py"));
    }
}
