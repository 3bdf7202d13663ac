//! Java projects' profile (what Java's toolchains share): the sources under `src/main/java`
//! (of the root or of a module), and the build system (Maven, Gradle or none).

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
        let source_files = sources.into_iter().filter(|f| is_java_source(f)).collect();
        java_profile(root, source_files, test_files)
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
