//! Python projects' profile (what Python's toolchains share): what the project ships (the src
//! layout, or its top-level packages and modules less tests, docs, tools and scripts), the
//! build system and install command inferred from `pyproject.toml`, `setup.cfg`, `setup.py`,
//! `tox.ini` and requirement files (test extras, PEP 735 dependency groups, tox's test
//! dependencies), and the import path (src layout or not).

use crate::lang::Language;
use crate::repo::{Profile, Profiler};
use crate::seed::Seed;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;
use tracing::info;

mod tox;
use tox::ToxTestenv;

/// Python's profiler.
pub struct PythonProfiler;

/// The one instance.
pub const PROFILER: PythonProfiler = PythonProfiler;

impl Profiler for PythonProfiler {
    fn profile(
        &self,
        root: &Path,
        seed: &Seed,
        sources: Vec<String>,
        test_files: Vec<String>,
    ) -> Profile {
        let sources: Vec<String> = sources
            .into_iter()
            .filter(|f| is_python_source(f))
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

    fn test_file_rule(&self) -> &'static str {
        "a Python test file is test_*.py or *_test.py, or a .py file under a test/, tests/ or \
         testing/ directory; conftest.py alone does not count"
    }
}

/// Directories whose Python files are never mutation targets.
const NON_SOURCE_DIRS: [&str; 6] = [
    "docs",
    "doc",
    "documentation",
    "examples",
    "benchmarks",
    "benchmark",
];

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

/// Requirement files added to the inferred install command, in this order, when present;
/// `requirements/tests.txt` and its kin: a `requirements/` folder of pinned files per purpose
/// (pip-compile's output, as the Pallets projects keep them), of which only the tests' one.
const REQUIREMENT_FILES: [&str; 9] = [
    "requirements.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
];

fn read_text(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The name in a `[table]` or `[[table]]` header line, or `None` when the line is no header
/// (a TOML array line such as `["a", "b"],` is not one).
fn header_name(line: &str) -> Option<&str> {
    let line = line.trim();
    let inner = line.strip_prefix("[[").or_else(|| line.strip_prefix('['))?;
    let (name, rest) = inner.split_once(']')?;
    let rest = rest.trim_start_matches(']').trim();
    let name = name.trim();
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | ' '));
    (name_ok && (rest.is_empty() || rest.starts_with('#'))).then_some(name)
}

/// The `key = value` (or INI `key: value`) pairs of one `[section]` of a TOML or INI file,
/// found by a light line scan: enough for `build-backend` and the names of optional-dependency
/// groups. Only keys at the start of a line count (indented lines continue a value); keys and
/// string values come back without quotes.
fn section_entries(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut entries = Vec::new();
    for raw in text.lines() {
        if let Some(name) = header_name(raw) {
            inside = name == section;
            continue;
        }
        if !inside || raw.starts_with([' ', '\t', '#', ';']) {
            continue;
        }
        let Some((key, value)) = raw.split_once('=').or_else(|| raw.split_once(':')) else {
            continue;
        };
        let unquote = |s: &str| s.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        let key = unquote(key);
        if !key.is_empty() && !key.contains(' ') {
            entries.push((key, unquote(value)));
        }
    }
    entries
}

/// Whether a `[section]` header appears in the text.
fn has_section(text: &str, section: &str) -> bool {
    text.lines().any(|l| header_name(l) == Some(section))
}

/// The build system named by a PEP 517 `build-backend`.
fn backend_name(backend: &str) -> String {
    let top = backend.split(['.', ':']).next().unwrap_or(backend);
    match top {
        "setuptools" => "setuptools",
        "poetry" => "poetry",
        "flit_core" | "flit" => "flit",
        "hatchling" => "hatch",
        "pdm" => "pdm",
        other => other,
    }
    .to_string()
}

pub(crate) fn python_profile(
    root: &Path,
    source_files: Vec<String>,
    test_files: Vec<String>,
) -> Profile {
    let pyproject = read_text(&root.join("pyproject.toml"));
    let setup_cfg = read_text(&root.join("setup.cfg")).unwrap_or_default();
    let has_setup_py = root.join("setup.py").is_file();
    // A pyproject.toml that only configures tools (black, pytest) does not make a package.
    let packaging = pyproject.as_deref().filter(|t| {
        has_section(t, "build-system") || has_section(t, "project") || has_section(t, "tool.poetry")
    });
    let backend = packaging.and_then(|t| {
        section_entries(t, "build-system")
            .into_iter()
            .find(|(k, _)| k == "build-backend")
            .map(|(_, v)| v)
    });
    let requirements: Vec<&str> = REQUIREMENT_FILES
        .iter()
        .copied()
        .filter(|f| root.join(f).is_file())
        .collect();
    let build_system = match (&backend, packaging, has_setup_py) {
        (Some(backend), _, _) => backend_name(backend),
        (None, _, true) => "setup.py".to_string(),
        (None, Some(_), false) => "setuptools".to_string(),
        (None, None, false) if !requirements.is_empty() => "requirements".to_string(),
        _ => "none".to_string(),
    };
    let installable = packaging.is_some() || has_setup_py;
    let tox = read_text(&root.join("tox.ini"))
        .map(|t| ToxTestenv::parse(&t))
        .unwrap_or_default();
    // Test requirement files tox's environment installs (`-r requirements-tests39.txt`).
    let mut requirements: Vec<String> = requirements.iter().map(|s| s.to_string()).collect();
    for f in &tox.requirement_files {
        let f = f.trim_start_matches("./");
        if root.join(f).is_file() && !requirements.iter().any(|r| r == f) {
            requirements.push(f.to_string());
        }
    }
    let pyproject_table = packaging.and_then(|t| t.parse::<toml::Table>().ok());
    let dependency_groups = pyproject_table
        .as_ref()
        .and_then(|t| t.get("dependency-groups")?.as_table().cloned())
        .unwrap_or_default();
    let mut commands = Vec::new();
    if installable {
        // Extras as TOML reads them (`optional-dependencies.tests = [...]` under `[project]`
        // is one too); the line scan where the file does not parse.
        let mut extras_declared: Vec<String> = match &pyproject_table {
            Some(t) => t
                .get("project")
                .and_then(|p| p.get("optional-dependencies"))
                .and_then(|o| o.as_table())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default(),
            None => packaging
                .map(|t| section_entries(t, "project.optional-dependencies"))
                .unwrap_or_default()
                .into_iter()
                .map(|(k, _)| k)
                .collect(),
        };
        extras_declared.extend(
            section_entries(&setup_cfg, "options.extras_require")
                .into_iter()
                .map(|(k, _)| k),
        );
        let declared = |name: &str| extras_declared.iter().any(|k| k == name);
        let has_group = |name: &str| dependency_group(&dependency_groups, name).is_some();
        // A test extra or dependency group (PEP 735), else a development one (which usually
        // holds the test tools too); and whatever tox's test environment adds.
        let test_extra = TEST_GROUPS.into_iter().find(|g| declared(g));
        let test_group = TEST_GROUPS.into_iter().find(|g| has_group(g));
        let mut extras: Vec<String> = test_extra
            .or_else(|| (test_group.is_none() && declared("dev")).then_some("dev"))
            .map(str::to_string)
            .into_iter()
            .collect();
        for extra in &tox.extras {
            if declared(extra)
                && !extras.contains(extra)
                && !NOT_TEST_EXTRAS.contains(&extra.as_str())
            {
                extras.push(extra.clone());
            }
        }
        commands.push(if extras.is_empty() {
            "python -m pip install .".to_string()
        } else {
            format!("python -m pip install '.[{}]'", extras.join(","))
        });
        let mut groups: Vec<String> = test_group
            .or_else(|| (test_extra.is_none() && has_group("dev")).then_some("dev"))
            .map(str::to_string)
            .into_iter()
            .collect();
        for group in &tox.dependency_groups {
            if has_group(group) && !groups.contains(group) {
                groups.push(group.clone());
            }
        }
        let mut reqs: Vec<String> = Vec::new();
        for group in &groups {
            for req in dependency_group(&dependency_groups, group).unwrap_or_default() {
                if !reqs.contains(&req) {
                    reqs.push(req);
                }
            }
        }
        for dep in &tox.deps {
            if !reqs.contains(dep) {
                reqs.push(dep.clone());
            }
        }
        if !reqs.is_empty() {
            let quoted: Vec<String> = reqs
                .iter()
                .map(|r| crate::sandbox::shell_quote(r))
                .collect();
            commands.push(format!("python -m pip install {}", quoted.join(" ")));
        }
    }
    for file in &requirements {
        commands.push(format!("python -m pip install -r {file}"));
    }
    let install_command = (!commands.is_empty()).then(|| commands.join(" && "));
    let python_path = if has_src_layout(root) { "src" } else { "." };
    Profile {
        language: Language::Python,
        build_system,
        test_framework: "pytest".to_string(),
        source_files,
        test_files,
        install_command,
        python_path: vec![python_path.to_string()],
        packages: Vec::new(),
        packages_reason: String::new(),
    }
}

/// Names of the extras and dependency groups that hold a project's test requirements.
const TEST_GROUPS: [&str; 3] = ["test", "tests", "testing"];

/// Extras a tox environment installs that are not test requirements: linters and type
/// checkers run as pytest plugins (pytest-enabler turns them on when installed), whose
/// "tests" a mutant fails for its style, not its behaviour; coverage and docs.
const NOT_TEST_EXTRAS: [&str; 11] = [
    "check", "cover", "coverage", "enabler", "type", "types", "typing", "lint", "mypy", "doc",
    "docs",
];

/// The requirements of one PEP 735 dependency group, its `{include-group = "…"}` entries
/// resolved (names compared normalized, as the PEP says); `None` when there is no such group.
fn dependency_group(groups: &toml::Table, name: &str) -> Option<Vec<String>> {
    fn normalized(name: &str) -> String {
        name.to_ascii_lowercase().replace(['_', '.'], "-")
    }
    fn collect(
        groups: &toml::Table,
        name: &str,
        seen: &mut Vec<String>,
        out: &mut Vec<String>,
    ) -> bool {
        let key = normalized(name);
        if seen.contains(&key) {
            return true;
        }
        seen.push(key.clone());
        let Some(items) = groups
            .iter()
            .find(|(k, _)| normalized(k) == key)
            .and_then(|(_, v)| v.as_array())
        else {
            return false;
        };
        for item in items {
            if let Some(req) = item.as_str() {
                let req = req.trim().to_string();
                if !req.is_empty() && !out.contains(&req) {
                    out.push(req);
                }
            } else if let Some(inc) = item.get("include-group").and_then(|v| v.as_str()) {
                collect(groups, inc, seen, out);
            }
        }
        true
    }
    let mut out = Vec::new();
    collect(groups, name, &mut Vec::new(), &mut out).then_some(out)
}

/// `src/<package>/__init__.py` or `src/<module>.py`.
fn has_src_layout(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join("src")) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let path = e.path();
        (path.is_dir() && path.join("__init__.py").is_file())
            || (path.is_file() && path.extension() == Some(OsStr::new("py")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::tests::{seed, write};
    use crate::toolchain::profile;

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
    fn installs_the_test_dependency_group_and_what_tox_adds() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let pyproject = r#"[build-system]
requires = ["flit_core"]
build-backend = "flit_core.buildapi"

[project]
name = "geo"
optional-dependencies.fast = ["numpy"]
optional-dependencies.type = ["pytest-mypy"]

[dependency-groups]
lint = ["ruff"]
Tests = [
  "pytest",
  "simplejson>=3",
]
dev = [{ include-group = "tests" }, { include-group = "lint" }, "tox"]
"#;
        write(r, "pyproject.toml", pyproject);
        write(r, "geo/__init__.py", "");
        write(r, "tests/test_geo.py", "def test_geo():\n    pass\n");
        write(
            r,
            "tox.ini",
            "[tox]\nenv_list = py3\n\n[testenv]\ndeps =\n    babel\n    -r requirements/docs.txt\n    \
             {[base]deps}\nextras =\n    fast\n    missing\n    type\ncommands = pytest {posargs}\n\n\
             [testenv:lint]\ndeps = flake8\n",
        );
        let p = profile(r, &seed("geo", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[fast]' && python -m pip install pytest 'simplejson>=3' babel")
        );
        let table = pyproject.parse::<toml::Table>().unwrap();
        let groups = table["dependency-groups"].as_table().unwrap();
        assert_eq!(
            dependency_group(groups, "dev").unwrap(),
            ["pytest", "simplejson>=3", "ruff", "tox"]
        );
        assert_eq!(dependency_group(groups, "docs"), None);
    }

    #[test]
    fn tox_s_test_requirement_files_are_installed() {
        // wcwidth 0.9.4: tox's deps are `-r requirements-tests39.txt` (pytest-benchmark etc.).
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(
            r,
            "setup.py",
            "from setuptools import setup\nsetup(name='w')\n",
        );
        write(
            r,
            "tox.ini",
            "[tox]\nenvlist = py39\n\n[testenv]\ndeps = -r requirements-tests39.txt\n    -r requirements-docs.txt\n",
        );
        write(r, "requirements-tests39.txt", "pytest-benchmark==4.0.0\n");
        write(r, "requirements-docs.txt", "sphinx\n");
        write(r, "w/__init__.py", "");
        write(r, "tests/test_w.py", "def test_x():\n    pass\n");
        let p = profile(r, &seed("w", ".", Language::Python)).unwrap();
        let install = p.install_command.unwrap();
        assert!(
            install.contains("pip install -r requirements-tests39.txt"),
            "{install}"
        );
        assert!(!install.contains("requirements-docs.txt"), "{install}");
    }

    #[test]
    fn a_requirements_folder_gives_its_tests_file() {
        // itsdangerous 2.2.0: flit, tests need freezegun, listed only in requirements/tests.txt.
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(
            r,
            "pyproject.toml",
            "[project]\nname = \"its\"\n\n[build-system]\nbuild-backend = \"flit_core.buildapi\"\n",
        );
        write(
            r,
            "requirements/tests.txt",
            "freezegun==1.4.0\npytest==8.1.1\n",
        );
        write(r, "requirements/docs.txt", "sphinx==7.2.6\n");
        write(
            r,
            "requirements/dev.txt",
            "-r docs.txt\n-r tests.txt\ntox\n",
        );
        write(r, "src/its/__init__.py", "");
        write(r, "tests/test_its.py", "def test_x():\n    pass\n");
        let p = profile(r, &seed("its", ".", Language::Python)).unwrap();
        assert_eq!(p.build_system, "flit");
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install . && python -m pip install -r requirements/tests.txt")
        );
    }

    #[test]
    fn build_systems_from_pyproject() {
        for (backend, expected) in [
            ("setuptools.build_meta", "setuptools"),
            ("poetry.core.masonry.api", "poetry"),
            ("flit_core.buildapi", "flit"),
            ("hatchling.build", "hatch"),
            ("pdm.backend", "pdm"),
            ("maturin", "maturin"),
        ] {
            let root = tempfile::tempdir().unwrap();
            write(
                root.path(),
                "pyproject.toml",
                &format!("[build-system]\nbuild-backend = '{backend}'\n"),
            );
            write(root.path(), "test_x.py", "");
            let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
            assert_eq!(p.build_system, expected);
            assert_eq!(
                p.install_command.as_deref(),
                Some("python -m pip install .")
            );
        }
        // Tool configuration alone does not make a package; requirements do not either.
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            "pyproject.toml",
            "[tool.black]\nline-length = 100\n",
        );
        write(root.path(), "requirements.txt", "requests\n");
        write(root.path(), "test_x.py", "");
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(p.build_system, "requirements");
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install -r requirements.txt")
        );
        std::fs::remove_file(root.path().join("requirements.txt")).unwrap();
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(p.build_system, "none");
        assert_eq!(p.install_command, None);
        // setup.cfg extras.
        write(root.path(), "setup.py", "");
        write(
            root.path(),
            "setup.cfg",
            "[options.extras_require]\ntesting =\n    pytest\n",
        );
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[testing]'")
        );
        // Only a development extra.
        write(
            root.path(),
            "setup.cfg",
            "[options.extras_require]
dev =
    pytest
",
        );
        let p = profile(root.path(), &seed("x", ".", Language::Python)).unwrap();
        assert_eq!(
            p.install_command.as_deref(),
            Some("python -m pip install '.[dev]'")
        );
    }

    #[test]
    fn light_toml_scan() {
        let text =
            "[project]\nname = 'x'\n  [project.optional-dependencies]\ndocs = [\n    \"sphinx\",\n\
                    [\"nested\"],\n]\ntest = ['pytest']\n[[tool.x]]\ntest = 1\n";
        let keys: Vec<String> = section_entries(text, "project.optional-dependencies")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["docs", "test"]);
        assert!(has_section(text, "tool.x"));
        assert_eq!(header_name("[\"a\", \"b\"],"), None);
        assert_eq!(
            header_name("[build-system] # comment"),
            Some("build-system")
        );
        let cfg = "[options.extras_require]\ndocs =\n    test==1.0\nci: tox\n";
        let keys: Vec<String> = section_entries(cfg, "options.extras_require")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["docs", "ci"]);
    }
}
