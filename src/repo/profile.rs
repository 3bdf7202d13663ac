//! Profiles: what an imported tree is made of (language, build system, test framework, test
//! and source files, what the project ships), from its files and the seed's include/exclude
//! globs.

use super::dir::{in_hidden_dir, walk};
use super::python::python_profile;
use super::{Ctx, ImportError};
use crate::lang::Language;
use crate::seed::Seed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use tracing::{info, warn};

/// Directories whose Python files are never mutation targets.
const NON_SOURCE_DIRS: [&str; 6] = [
    "docs",
    "doc",
    "documentation",
    "examples",
    "benchmarks",
    "benchmark",
];

/// What an imported repository is made of, as far as swe-forge cares.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub language: Language,
    /// "setuptools", "poetry", "flit", "hatch", "pdm", "setup.py", "requirements", "none",
    /// "maven", "gradle"; another PEP 517 backend is named by its top module ("maturin").
    pub build_system: String,
    /// "pytest" for Python, "junit" for Java, "unknown" otherwise.
    pub test_framework: String,
    /// Repository-relative, `/`-separated, sorted: the files mutators may touch.
    pub source_files: Vec<String>,
    /// Repository-relative, `/`-separated, sorted.
    pub test_files: Vec<String>,
    /// The seed's install command, or one inferred from the project files.
    pub install_command: Option<String>,
    /// Repository-relative directories to put on PYTHONPATH so that the checkout's code (not
    /// an installed copy) is imported: `["src"]` for a src layout, else `["."]`; empty for Java.
    pub python_path: Vec<String>,
    /// What the project ships, whose files are mutated (Python: its packages and top-level
    /// modules, e.g. `src/geo`, `six.py`); empty when every source file is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Why those files are mutated (the layout found, or the seed's `include:`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub packages_reason: String,
}

/// Profile the tree at `root` (a checkout) for `seed`: build system, test framework, test and
/// source files, install command and import path. Fails with [`ImportError::NoTests`] when no
/// file counts as a test.
pub fn profile(root: &Path, seed: &Seed) -> Result<Profile, ImportError> {
    let cx = Ctx { seed: &seed.name };
    let files = list_files(&cx, root)?;
    let filter = SourceFilter::new(seed)?;
    let language = seed.language;
    let is_code =
        |f: &&String| language.matches_path(Path::new(f.as_str())) && !in_hidden_dir(f.as_str());
    let test_files: Vec<String> = files
        .iter()
        .filter(is_code)
        .filter(|f| language.is_test_path(f))
        .cloned()
        .collect();
    let candidates = files
        .iter()
        .filter(is_code)
        .filter(|f| !language.is_test_path(f));
    let mut profile = match language {
        Language::Python => {
            let sources: Vec<String> = candidates
                .filter(|f| is_python_source(f))
                .filter(|f| filter.keeps(f))
                .cloned()
                .collect();
            let (packages, reason) = if seed.include.is_empty() {
                shipped_python(&sources)
            } else {
                (Vec::new(), "the seed's `include:` globs".to_string())
            };
            let source_files = sources
                .into_iter()
                .filter(|f| {
                    packages.is_empty()
                        || packages
                            .iter()
                            .any(|p| f == p || f.starts_with(&format!("{p}/")))
                })
                .collect();
            let mut p = python_profile(root, source_files, test_files);
            info!(seed = %seed.name, packages = ?packages, "mutating {reason}");
            p.packages = packages;
            p.packages_reason = reason;
            p
        }
        Language::Java => {
            let source_files = candidates
                .filter(|f| is_java_source(f))
                .filter(|f| filter.keeps(f))
                .cloned()
                .collect();
            java_profile(root, source_files, test_files)
        }
        Language::JavaScript | Language::TypeScript => {
            let source_files = candidates
                .filter(|f| is_shipped_script(f))
                .filter(|f| filter.keeps(f))
                .cloned()
                .collect();
            node_profile(root, language, source_files, test_files)
        }
    };
    profile.install_command = seed.install.clone().or(profile.install_command);
    let has_tests = profile
        .test_files
        .iter()
        .any(|f| file_name(f) != "conftest.py");
    if !has_tests {
        return Err(ImportError::NoTests {
            seed: seed.name.clone(),
            root: root.to_path_buf(),
            language,
        });
    }
    Ok(profile)
}

/// The source files under `root` (`mutate`, `bench mutate`), repository-relative with `/`,
/// sorted, with their language (`lang`, or the one whose extensions match): the walk imports
/// and profiles use, less hidden directories and, unless `include_tests`, test files.
pub fn source_files(
    root: &Path,
    lang: Option<Language>,
    include_tests: bool,
) -> Result<Vec<(Language, String)>, std::io::Error> {
    let mut out = Vec::new();
    for rel in walked_files(root).map_err(std::io::Error::other)? {
        if in_hidden_dir(&rel) {
            continue;
        }
        let path = Path::new(&rel);
        let Some(language) = Language::ALL.into_iter().find(|l| l.matches_path(path)) else {
            continue;
        };
        if lang.is_some_and(|l| l != language) || (!include_tests && language.is_test_path(&rel)) {
            continue;
        }
        out.push((language, rel));
    }
    Ok(out)
}

/// Every regular file under `root` (not skipped), repository-relative with `/`, sorted.
/// Symbolic links and non-UTF-8 names are left out.
fn list_files(cx: &Ctx<'_>, root: &Path) -> Result<Vec<String>, ImportError> {
    walked_files(root).map_err(|e| ImportError::Io {
        seed: cx.seed.to_string(),
        action: format!("cannot walk {}", root.display()),
        error: e.into(),
    })
}

fn walked_files(root: &Path) -> Result<Vec<String>, walkdir::Error> {
    let mut files = Vec::new();
    for entry in walk(root) {
        let entry = entry?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        match parts {
            Some(parts) => files.push(parts.join("/")),
            None => warn!(path = %rel.display(), "skipping a file whose name is not UTF-8"),
        }
    }
    files.sort();
    Ok(files)
}

fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// A Python file mutators may touch: not packaging, not docs, examples or benchmarks.
fn is_python_source(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let (file, dirs) = parts.split_last().unwrap_or((&"", &[]));
    !matches!(*file, "setup.py" | "conftest.py")
        && !dirs.iter().any(|d| NON_SOURCE_DIRS.contains(d))
}

/// Top-level names of a Python repository that are not part of what it ships: tests, docs,
/// developer tools and build or task scripts.
const NOT_SHIPPED: [&str; 24] = [
    "tests",
    "test",
    "testing",
    "docs",
    "doc",
    "documentation",
    "examples",
    "example",
    "benchmarks",
    "benchmark",
    "bench",
    "tools",
    "tool",
    "scripts",
    "script",
    "bin",
    "ci",
    "setup.py",
    "conftest.py",
    "noxfile.py",
    "tasks.py",
    "fabfile.py",
    "dodo.py",
    "runtests.py",
];

/// What a Python project ships, from its layout, among its source files: with a `src/`
/// layout, what `src/` holds; else the top-level packages (directories with `__init__.py`)
/// and modules, less tests, docs, tools, scripts and build or task files. Returns the roots
/// and why; no roots (every source file) when none is found.
fn shipped_python(sources: &[String]) -> (Vec<String>, String) {
    let mut roots: BTreeSet<String> = BTreeSet::new();
    let src: Vec<&String> = sources.iter().filter(|f| f.starts_with("src/")).collect();
    let has_init = |dir: &str| sources.iter().any(|f| *f == format!("{dir}/__init__.py"));
    if !src.is_empty() {
        for f in &src {
            let rest = &f["src/".len()..];
            match rest.split_once('/') {
                Some((top, _)) => roots.insert(format!("src/{top}")),
                None => roots.insert((*f).clone()),
            };
        }
        let list: Vec<String> = roots.into_iter().collect();
        let why = format!("the src layout's {}", list.join(", "));
        return (list, why);
    }
    for f in sources {
        match f.split_once('/') {
            Some((top, _)) if !NOT_SHIPPED.contains(&top) && has_init(top) => {
                roots.insert(top.to_string());
            }
            None if !NOT_SHIPPED.contains(&f.as_str()) => {
                roots.insert(f.clone());
            }
            _ => {}
        }
    }
    if roots.is_empty() {
        return (
            Vec::new(),
            "every source file (no package or top-level module found)".to_string(),
        );
    }
    let list: Vec<String> = roots.into_iter().collect();
    let why = format!(
        "the shipped packages and modules {} (tests, docs, tools, scripts and build files left out)",
        list.join(", ")
    );
    (list, why)
}

/// A Java file under a `src/main/java` tree (of the root or of a module).
fn is_java_source(rel: &str) -> bool {
    rel.starts_with("src/main/java/") || rel.contains("/src/main/java/")
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

/// The seed's include/exclude globs over repository-relative paths (`*` stays within one
/// directory, `**` crosses directories). No include globs means everything is included.
struct SourceFilter {
    include: Option<globset::GlobSet>,
    exclude: globset::GlobSet,
}

impl SourceFilter {
    fn new(seed: &Seed) -> Result<Self, ImportError> {
        let build = |globs: &[String]| -> Result<globset::GlobSet, ImportError> {
            let mut set = globset::GlobSetBuilder::new();
            for glob in globs {
                let compiled = globset::GlobBuilder::new(glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| ImportError::BadGlob {
                        seed: seed.name.clone(),
                        glob: glob.clone(),
                        reason: e.kind().to_string(),
                    })?;
                set.add(compiled);
            }
            set.build().map_err(|e| ImportError::BadGlob {
                seed: seed.name.clone(),
                glob: globs.join(", "),
                reason: e.to_string(),
            })
        };
        let include = if seed.include.is_empty() {
            None
        } else {
            Some(build(&seed.include)?)
        };
        Ok(SourceFilter {
            include,
            exclude: build(&seed.exclude)?,
        })
    }

    fn keeps(&self, rel: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(rel)) && !self.exclude.is_match(rel)
    }
}

fn java_profile(root: &Path, source_files: Vec<String>, test_files: Vec<String>) -> Profile {
    let build_system = if root.join("pom.xml").is_file() {
        "maven"
    } else if root.join("build.gradle").is_file() || root.join("build.gradle.kts").is_file() {
        "gradle"
    } else {
        "none"
    };
    Profile {
        language: Language::Java,
        build_system: build_system.to_string(),
        test_framework: "junit".to_string(),
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
    use crate::repo::import;
    use crate::repo::tests::{flat_project, seed, write};

    #[test]
    fn one_walk_lists_sources_for_mutate_and_bench() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for f in [
            "pkg/core.py",
            "pkg/tests/test_core.py",
            "lib/shelf.js",
            "lib/shelf.test.js",
            "src/index.ts",
            "types/index.d.ts",
            "node_modules/dep/index.js",
            ".github/scripts/release.py",
            ".venv/lib/site.py",
            "build/lib/pkg/core.py",
            "README.md",
        ] {
            write(r, f, "x = 1\n");
        }
        let all = source_files(r, None, false).unwrap();
        let names: Vec<(Language, &str)> = all.iter().map(|(l, f)| (*l, f.as_str())).collect();
        assert_eq!(
            names,
            [
                (Language::JavaScript, "lib/shelf.js"),
                (Language::Python, "pkg/core.py"),
                (Language::TypeScript, "src/index.ts"),
            ]
        );
        let with_tests = source_files(r, Some(Language::Python), true).unwrap();
        assert_eq!(with_tests.len(), 2, "{with_tests:?}");
        assert!(in_hidden_dir(".github/x.py") && !in_hidden_dir("pkg/.x.py"));
    }

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

    #[test]
    fn only_what_the_project_ships_is_mutated() {
        let files = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (roots, why) = shipped_python(&files(&[
            "noxfile.py",
            "pkg/__init__.py",
            "pkg/core.py",
            "scripts/release.py",
            "single.py",
            "tools/gen/__init__.py",
            "tools/gen/make.py",
        ]));
        assert_eq!(roots, ["pkg", "single.py"]);
        assert!(why.contains("pkg, single.py"), "{why}");
        let (roots, why) = shipped_python(&files(&[
            "src/geo/__init__.py",
            "src/geo/shapes.py",
            "src/util.py",
            "tools/x.py",
        ]));
        assert_eq!(roots, ["src/geo", "src/util.py"]);
        assert!(why.contains("src layout"), "{why}");
        let (roots, _) = shipped_python(&files(&["scripts/a.py"]));
        assert!(roots.is_empty(), "nothing shipped: every source file");
    }

    #[test]
    fn profile_of_flat_project() {
        let root = tempfile::tempdir().unwrap();
        flat_project(root.path());
        write(root.path(), "examples/demo.py", "");
        write(root.path(), "benchmarks/bench_add.py", "");
        let p = profile(root.path(), &seed("calc", ".", Language::Python)).unwrap();
        assert_eq!(p.language, Language::Python);
        assert_eq!(p.build_system, "setup.py");
        assert_eq!(p.test_framework, "pytest");
        assert_eq!(p.source_files, ["calc/__init__.py", "calc/ops.py"]);
        assert_eq!(p.test_files, ["conftest.py", "tests/test_ops.py"]);
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install . && python -m pip install -r requirements-dev.txt")
        );
        assert_eq!(p.python_path, ["."]);

        let mut s = seed("calc", ".", Language::Python);
        s.install = Some("make deps".into());
        s.exclude = vec!["calc/__init__.py".into()];
        let p = profile(root.path(), &s).unwrap();
        assert_eq!(p.install_command.as_deref(), Some("make deps"));
        assert_eq!(p.source_files, ["calc/ops.py"]);
    }

    #[test]
    fn profile_of_src_layout_project() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(
            r,
            "pyproject.toml",
            "[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n\
             [project]\nname = \"geo\"\n\n[project.optional-dependencies]\ndocs = [\"sphinx\"]\n\
             tests = [\n  \"pytest\",\n]\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
        );
        write(r, "src/geo/__init__.py", "");
        write(
            r,
            "src/geo/shapes.py",
            "def area(w, h):\n    return w * h\n",
        );
        write(r, "src/geo/util/helpers.py", "");
        write(r, "tests/test_shapes.py", "def test_area():\n    pass\n");
        write(r, "tests/requirements.txt", "hypothesis\n");
        write(r, "README.md", "# geo\n");
        let mut s = seed("geo", ".", Language::Python);
        s.include = vec!["src/geo/*.py".into()];
        let p = profile(r, &s).unwrap();
        assert_eq!(p.build_system, "hatch");
        assert_eq!(p.python_path, ["src"]);
        assert_eq!(p.source_files, ["src/geo/__init__.py", "src/geo/shapes.py"]);
        assert_eq!(p.test_files, ["tests/test_shapes.py"]);
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[tests]' && python -m pip install -r tests/requirements.txt")
        );
    }

    #[test]
    fn no_tests_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "calc/ops.py",
            "def add(a, b):\n    return a + b\n",
        );
        write(root.path(), "conftest.py", "");
        let err = profile(root.path(), &seed("calc", ".", Language::Python)).unwrap_err();
        assert!(matches!(err, ImportError::NoTests { .. }));
        let msg = err.to_string();
        assert!(
            msg.starts_with("seed `calc`: no test files found in "),
            "{msg}"
        );
        assert!(msg.contains("test_*.py"), "{msg}");
        // Through import as well.
        let cache = tempfile::tempdir().unwrap();
        let err = import(
            &seed("calc", root.path().to_str().unwrap(), Language::Python),
            Path::new("."),
            cache.path(),
        )
        .unwrap_err();
        assert!(matches!(err, ImportError::NoTests { .. }), "{err}");
    }

    #[test]
    fn profile_of_java_project() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(r, "pom.xml", "<project/>");
        write(r, "src/main/java/com/x/Calc.java", "class Calc {}");
        write(r, "src/test/java/com/x/CalcTest.java", "class CalcTest {}");
        write(r, "tools/Gen.java", "class Gen {}");
        write(r, "target/classes/Stale.java", "");
        let p = profile(r, &seed("calc", ".", Language::Java)).unwrap();
        assert_eq!(p.build_system, "maven");
        assert_eq!(p.test_framework, "junit");
        assert_eq!(p.source_files, ["src/main/java/com/x/Calc.java"]);
        assert_eq!(p.test_files, ["src/test/java/com/x/CalcTest.java"]);
        assert_eq!(p.install_command, None);
        assert!(p.python_path.is_empty());
        std::fs::remove_file(r.join("pom.xml")).unwrap();
        write(r, "build.gradle.kts", "");
        assert_eq!(
            profile(r, &seed("calc", ".", Language::Java))
                .unwrap()
                .build_system,
            "gradle"
        );
    }
}
