//! Coverage maps: which tests execute which source lines, from one per-test-context run.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Line → tests, per repository-relative source file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverageMap {
    /// Test ids, indexed by the numbers in `lines`.
    pub tests: Vec<String>,
    /// file → line (1-based) → indices into `tests`.
    pub lines: BTreeMap<String, BTreeMap<u32, Vec<u32>>>,
    /// file → lines executed outside any test: while importing or collecting (a module-level
    /// registry filled by calling a helper). Any test can depend on them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outside_tests: BTreeMap<String, BTreeSet<u32>>,
}

impl CoverageMap {
    /// Build from (file, line, test id) triples.
    pub fn from_triples(triples: impl IntoIterator<Item = (String, u32, String)>) -> CoverageMap {
        let mut index: BTreeMap<String, u32> = BTreeMap::new();
        let mut tests = Vec::new();
        let mut lines: BTreeMap<String, BTreeMap<u32, BTreeSet<u32>>> = BTreeMap::new();
        for (file, line, test) in triples {
            let i = *index.entry(test.clone()).or_insert_with(|| {
                tests.push(test);
                (tests.len() - 1) as u32
            });
            lines
                .entry(file)
                .or_default()
                .entry(line)
                .or_default()
                .insert(i);
        }
        CoverageMap {
            tests,
            lines: lines
                .into_iter()
                .map(|(f, m)| {
                    (
                        f,
                        m.into_iter()
                            .map(|(l, s)| (l, s.into_iter().collect()))
                            .collect(),
                    )
                })
                .collect(),
            outside_tests: BTreeMap::new(),
        }
    }

    /// Tests that execute any line in `first..=last` of `file`.
    pub fn tests_covering(&self, file: &str, first: usize, last: usize) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        if let Some(lines) = self.lines.get(file) {
            for (_, tests) in lines.range(first as u32..=last as u32) {
                for &t in tests {
                    out.insert(self.tests[t as usize].clone());
                }
            }
        }
        out
    }

    /// Whether a line of `first..=last` in `file` runs outside any test (at import or
    /// collection): then every test depends on it.
    pub fn runs_outside_tests(&self, file: &str, first: usize, last: usize) -> bool {
        self.outside_tests
            .get(file)
            .is_some_and(|l| l.range(first as u32..=last as u32).next().is_some())
    }

    /// Number of source lines that at least one test executes.
    pub fn covered_lines(&self) -> usize {
        self.lines.values().map(|m| m.len()).sum()
    }

    /// Parse coverage.py's `coverage json --show-contexts` output, whose contexts are
    /// pytest-cov's `nodeid|phase`. Lines executed outside any test (empty context: importing
    /// and collecting) go to [`CoverageMap::outside_tests`].
    pub fn from_coverage_py_json(json: &str) -> Result<CoverageMap, String> {
        let doc: serde_json::Value =
            serde_json::from_str(json).map_err(|e| format!("coverage JSON: {e}"))?;
        let files = doc
            .get("files")
            .and_then(|f| f.as_object())
            .ok_or("coverage JSON has no `files` object")?;
        let mut triples = Vec::new();
        let mut outside: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
        for (file, data) in files {
            let file = file.trim_start_matches("./").to_string();
            let Some(contexts) = data.get("contexts").and_then(|c| c.as_object()) else {
                continue;
            };
            for (line, ctxs) in contexts {
                let Ok(line) = line.parse::<u32>() else {
                    continue;
                };
                for ctx in ctxs.as_array().into_iter().flatten() {
                    let Some(ctx) = ctx.as_str() else { continue };
                    let test = ctx.rsplit_once('|').map_or(ctx, |(t, _)| t);
                    if test.is_empty() {
                        outside.entry(file.clone()).or_default().insert(line);
                    } else {
                        triples.push((file.clone(), line, test.to_string()));
                    }
                }
            }
        }
        let mut map = CoverageMap::from_triples(triples);
        map.outside_tests = outside;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pytest_cov_contexts() {
        let json = r#"{"files": {"pkg/a.py": {"executed_lines": [1,2,3],
            "contexts": {"1": [""], "2": ["tests/test_a.py::test_x|run", "tests/test_a.py::test_y|setup"],
                         "3": ["tests/test_a.py::test_y|run"]}}}}"#;
        let map = CoverageMap::from_coverage_py_json(json).unwrap();
        let covering = map.tests_covering("pkg/a.py", 2, 2);
        assert_eq!(
            covering.into_iter().collect::<Vec<_>>(),
            vec!["tests/test_a.py::test_x", "tests/test_a.py::test_y"]
        );
        assert_eq!(map.tests_covering("pkg/a.py", 3, 9).len(), 1);
        assert!(map.tests_covering("pkg/a.py", 1, 1).is_empty());
        assert!(map.runs_outside_tests("pkg/a.py", 1, 1));
        assert!(!map.runs_outside_tests("pkg/a.py", 2, 3));
        assert!(map.tests_covering("pkg/b.py", 1, 100).is_empty());
        assert_eq!(map.covered_lines(), 2);
    }
}
