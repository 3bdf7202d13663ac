//! Java projects' profile (what Java's toolchains share): the sources Maven compiles (each
//! module's `<sourceDirectory>`, `src/main/java` by default; `src/main/java` trees without a
//! POM), the tests it compiles, and the build system (Maven, Gradle or none).

use crate::lang::Language;
use crate::repo::{Profile, Profiler};
use crate::seed::Seed;
use std::path::Path;

/// Java's profiler.
pub struct JavaProfiler;

/// The one instance.
pub const PROFILER: JavaProfiler = JavaProfiler;

impl Profiler for JavaProfiler {
    fn profile(
        &self,
        root: &Path,
        _seed: &Seed,
        sources: Vec<String>,
        test_files: Vec<String>,
    ) -> Profile {
        if !root.join("pom.xml").is_file() {
            let source_files = sources.into_iter().filter(|f| is_java_source(f)).collect();
            return java_profile(root, source_files, test_files);
        }
        // Maven compiles what each module's POM names (args4j: `<sourceDirectory>src`,
        // `<testSourceDirectory>test`): its sources are mutated, and every Java file under its
        // test roots is a test file, whatever its name.
        let roots = maven_source_roots(root);
        let mut tests: std::collections::BTreeSet<String> = test_files.into_iter().collect();
        for (_, test_dir) in &roots {
            for entry in walkdir::WalkDir::new(root.join(test_dir))
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
            {
                if let Ok(rel) = entry.path().strip_prefix(root) {
                    if let Some(rel) = rel.to_str() {
                        if rel.ends_with(".java") {
                            tests.insert(rel.replace('\\', "/"));
                        }
                    }
                }
            }
        }
        let source_files = sources
            .into_iter()
            .filter(|f| {
                f.ends_with(".java")
                    && !tests.contains(f)
                    && roots.iter().any(|(main, _)| f.starts_with(main.as_str()))
            })
            .collect();
        java_profile(root, source_files, tests.into_iter().collect())
    }

    fn test_file_rule(&self) -> &'static str {
        "a Java test file is *Test.java, *Tests.java or Test*.java, or a .java file under \
         src/test/ or test/"
    }
}

/// A Java file under a `src/main/java` tree (of the root or of a module).
fn is_java_source(rel: &str) -> bool {
    rel.starts_with("src/main/java/") || rel.contains("/src/main/java/")
}

/// Most nested modules followed from the root POM.
const MAX_MODULE_DEPTH: usize = 8;

/// The main and test source roots Maven compiles, repository-relative with a trailing `/`: of
/// the root POM and, recursively, of each module its `<modules>` lists. A POM's
/// `<build><sourceDirectory>` and `<testSourceDirectory>` (relative, or under `${basedir}` /
/// `${project.basedir}`), else Maven's defaults `src/main/java` and `src/test/java`. A module
/// outside the repository, or a POM that cannot be read, adds nothing.
pub fn maven_source_roots(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0usize)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some((dir, depth)) = todo.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&dir).join("pom.xml")) else {
            continue;
        };
        let pom = read_pom(&text);
        let resolve = |given: &Option<String>, default: &str| {
            given
                .as_deref()
                .and_then(relative_dir)
                .unwrap_or_else(|| default.to_string())
        };
        out.push((
            format!("{dir}{}/", resolve(&pom.source_dir, "src/main/java")),
            format!("{dir}{}/", resolve(&pom.test_dir, "src/test/java")),
        ));
        if depth < MAX_MODULE_DEPTH {
            for m in pom.modules {
                if let Some(m) = relative_dir(&m) {
                    todo.push((format!("{dir}{m}/"), depth + 1));
                }
            }
        }
    }
    out.sort();
    out
}

/// A POM's directory setting as a path relative to its folder, without `./`, `..` or a
/// trailing `/`; `None` for what cannot be read that way (absolute, another property).
fn relative_dir(given: &str) -> Option<String> {
    let given = given.trim();
    let given = given
        .strip_prefix("${project.basedir}")
        .or_else(|| given.strip_prefix("${basedir}"))
        .map(|rest| rest.trim_start_matches('/'))
        .unwrap_or(given);
    let parts: Vec<&str> = given
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if given.starts_with('/') || given.contains('$') || parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

/// What [`maven_source_roots`] reads from one POM.
#[derive(Debug, Default, PartialEq)]
struct PomDirs {
    source_dir: Option<String>,
    test_dir: Option<String>,
    modules: Vec<String>,
}

/// `project/build/sourceDirectory`, `project/build/testSourceDirectory` and
/// `project/modules/module` of a POM (not those of its profiles); what a malformed POM holds
/// before the error.
fn read_pom(text: &str) -> PomDirs {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut path: Vec<String> = Vec::new();
    let mut dirs = PomDirs::default();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                path.push(String::from_utf8_lossy(e.local_name().as_ref()).into_owned())
            }
            Ok(Event::End(_)) => {
                path.pop();
            }
            Ok(Event::Text(t)) => {
                let Ok(value) = t.decode() else { continue };
                let value = value.trim().to_string();
                let at: Vec<&str> = path.iter().map(String::as_str).collect();
                match at[..] {
                    ["project", "build", "sourceDirectory"] => dirs.source_dir = Some(value),
                    ["project", "build", "testSourceDirectory"] => dirs.test_dir = Some(value),
                    ["project", "modules", "module"] if !value.is_empty() => {
                        dirs.modules.push(value)
                    }
                    _ => {}
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    dirs
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
