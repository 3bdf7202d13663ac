//! Profiles: what an imported tree is made of (language, build system, test framework, test
//! and source files, what the project ships), from its files and the seed's include/exclude
//! globs. The language's part (which sources it ships, its build system and framework) is a
//! [`Profiler`] the caller hands in; nothing here asks which language it is.

use super::dir::{in_hidden_dir, walk};
use super::{Ctx, ImportError};
use crate::lang::Language;
use crate::seed::Seed;
use serde::{Deserialize, Serialize};
use std::path::Path;
use tracing::warn;

/// What a language adds to a profile (its toolchains' module provides one; see
/// `crate::toolchain::profiler`): import itself asks nothing about the language.
pub trait Profiler: Sync {
    /// The profile of the tree at `root`: of `sources` (its code files that are not tests,
    /// the seed's include/exclude globs applied) those the project ships, and its build
    /// system, test framework, install command and import roots.
    fn profile(
        &self,
        root: &Path,
        seed: &Seed,
        sources: Vec<String>,
        test_files: Vec<String>,
    ) -> Profile;

    /// What counts as a test file, for the error when nothing does.
    fn test_file_rule(&self) -> &'static str;
}

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
pub fn profile(root: &Path, seed: &Seed, profiler: &dyn Profiler) -> Result<Profile, ImportError> {
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
    let sources: Vec<String> = candidates.filter(|f| filter.keeps(f)).cloned().collect();
    let mut profile = profiler.profile(root, seed, sources, test_files);
    profile.install_command = seed.install.clone().or(profile.install_command);
    let has_tests = profile
        .test_files
        .iter()
        .any(|f| file_name(f) != "conftest.py");
    if !has_tests {
        return Err(ImportError::NoTests {
            seed: seed.name.clone(),
            root: root.to_path_buf(),
            rule: profiler.test_file_rule(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::tests::{flat_project, seed, write};
    use crate::toolchain::{import, profile};

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
    fn a_java_project_s_sources_and_tests_are_where_its_poms_say() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        write(
            r,
            "pom.xml",
            "<project><modules><module>lib</module><module>./app/</module>\
             <module>../elsewhere</module></modules>\
             <profiles><profile><modules><module>extra</module></modules></profile></profiles></project>",
        );
        // args4j's layout: sources in src/, tests in test/.
        write(
            r,
            "lib/pom.xml",
            "<project><build><sourceDirectory>src</sourceDirectory>\
             <testSourceDirectory>${project.basedir}/test</testSourceDirectory></build></project>",
        );
        write(r, "lib/src/org/x/Parser.java", "class Parser {}");
        write(r, "lib/test/org/x/ParserTest.java", "class ParserTest {}");
        write(r, "lib/test/org/x/Props.java", "class Props {}");
        write(r, "lib/examples/Sample.java", "class Sample {}");
        write(r, "app/pom.xml", "<project/>");
        write(r, "app/src/main/java/org/y/App.java", "class App {}");
        write(
            r,
            "app/src/test/java/org/y/AppTest.java",
            "class AppTest {}",
        );
        write(r, "extra/src/main/java/org/z/Z.java", "class Z {}");
        let p = profile(r, &seed("multi", ".", Language::Java)).unwrap();
        assert_eq!(
            p.source_files,
            [
                "app/src/main/java/org/y/App.java",
                "lib/src/org/x/Parser.java"
            ]
        );
        assert_eq!(
            p.test_files,
            [
                "app/src/test/java/org/y/AppTest.java",
                "lib/test/org/x/ParserTest.java",
                "lib/test/org/x/Props.java"
            ]
        );
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
