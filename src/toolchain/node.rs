//! JavaScript and TypeScript projects' profile (what their toolchains share): the code the
//! package ships (not `node_modules/`, build outputs, docs, examples, scripts or tool
//! configuration), its `package.json` (the build system) and the test framework it names.

use crate::lang::Language;
use crate::repo::{Profile, Profiler};
use crate::seed::Seed;
use std::path::Path;

/// JavaScript's and TypeScript's profiler.
pub struct NodeProfiler;

/// The one instance.
pub const PROFILER: NodeProfiler = NodeProfiler;

impl Profiler for NodeProfiler {
    fn profile(
        &self,
        root: &Path,
        seed: &Seed,
        sources: Vec<String>,
        test_files: Vec<String>,
    ) -> Profile {
        let source_files = sources
            .into_iter()
            .filter(|f| is_shipped_script(f))
            .collect();
        node_profile(root, seed.language, source_files, test_files)
    }

    fn test_file_rule(&self) -> &'static str {
        "a JavaScript or TypeScript test file is *.test.js, *.spec.ts, test-*.js and the like, \
         or a file under test/, tests/, __tests__/ or spec/"
    }
}

/// Folders of a JavaScript or TypeScript project that hold no shipped code: dependencies,
/// build outputs, documentation, examples, developer scripts and benchmarks.
const NODE_SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "dist",
    "build",
    "coverage",
    "docs",
    "doc",
    "examples",
    "example",
    "scripts",
    "tools",
    "benchmark",
    "benchmarks",
    "bench",
    "fixtures",
];

/// Whether a JavaScript or TypeScript file is code the package ships: not under a folder of
/// [`NODE_SKIPPED_DIRS`] or a dot folder, and not a tool's configuration (`jest.config.js`,
/// `Gruntfile.js`, `.eslintrc.js`).
fn is_shipped_script(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    let in_skipped = parts[..parts.len() - 1]
        .iter()
        .any(|d| d.starts_with('.') || NODE_SKIPPED_DIRS.contains(d));
    let tool_file = file.starts_with('.')
        || file.contains(".config.")
        || matches!(
            file.split('.').next().unwrap_or(""),
            "Gruntfile" | "gulpfile" | "Jakefile" | "karma" | "webpack" | "rollup" | "vite"
        );
    !in_skipped && !tool_file
}

/// The test framework a `package.json` names: its `test` script's runner (`jest`, `mocha`,
/// `node --test`), else a framework among its devDependencies; empty when none.
pub(crate) fn node_test_framework(package_json: &serde_json::Value) -> &'static str {
    let script = package_json["scripts"]["test"].as_str().unwrap_or("");
    let words: Vec<&str> = script
        .split(|c: char| c.is_whitespace() || c == '&' || c == ';' || c == '|')
        .collect();
    if words.iter().any(|w| w.ends_with("jest")) {
        return "jest";
    }
    if words.iter().any(|w| w.ends_with("mocha")) {
        return "mocha";
    }
    if words.windows(2).any(|w| w[0] == "node" && w[1] == "--test") {
        return "node";
    }
    let dev = |name: &str| {
        ["devDependencies", "dependencies"]
            .iter()
            .any(|k| package_json[k].get(name).is_some())
    };
    if dev("jest") {
        "jest"
    } else if dev("mocha") {
        "mocha"
    } else {
        ""
    }
}

fn node_profile(
    root: &Path,
    language: Language,
    source_files: Vec<String>,
    test_files: Vec<String>,
) -> Profile {
    let package_json = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    Profile {
        language,
        build_system: if package_json.is_some() {
            "npm"
        } else {
            "none"
        }
        .to_string(),
        test_framework: package_json
            .as_ref()
            .map(node_test_framework)
            .unwrap_or("")
            .to_string(),
        source_files,
        test_files,
        install_command: None,
        python_path: Vec::new(),
        packages: Vec::new(),
        packages_reason: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_project_ships_its_code_and_names_its_test_runner() {
        for shipped in ["index.js", "lib/shelf.js", "src/shelf.ts", "src/config.js"] {
            assert!(is_shipped_script(shipped), "{shipped}");
        }
        for tool in [
            "node_modules/x/index.js",
            "dist/shelf.js",
            "scripts/release.js",
            "jest.config.js",
            ".eslintrc.js",
            "Gruntfile.js",
            "examples/demo.js",
        ] {
            assert!(!is_shipped_script(tool), "{tool}");
        }
        let pj = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"jest --ci"}}"#)),
            "jest"
        );
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"nyc mocha test/"}}"#)),
            "mocha"
        );
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"node --test test/"}}"#)),
            "node"
        );
        assert_eq!(
            node_test_framework(&pj(
                r#"{"scripts":{"test":"tap"},"devDependencies":{"mocha":"10"}}"#
            )),
            "mocha"
        );
        assert_eq!(node_test_framework(&pj(r#"{"name":"x"}"#)), "");
    }
}
