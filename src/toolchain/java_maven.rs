//! Java built with Maven and tested with JUnit through Surefire: the Maven runner (offline,
//! against Debian's Maven repository), `pkg.Class#method` ids, no test synthesis, screening
//! without per-test coverage by the tests of the mutated class's package; and the
//! environments: the base image's packages (the JDK, Maven, Debian's Maven repository), the
//! repository image (`dockerfiles/java-maven.Dockerfile`: the coverage helpers compiled, the
//! offline settings, the warm-up build of the commit), the task image's layer and the host's
//! Maven for the local sandbox.

use super::{RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::maven::{self, Maven};
use crate::runner::TestRunner;
use crate::sandbox::image::TEST_UID;
use crate::sandbox::recipe::{
    BaseRecipe, ContextFile, EnvRecipe, HashPart, ImageRecipe, LocalRecipe, Requirement, TaskLayer,
    Variant, VersionProbe,
};
use crate::sandbox::{shell_quote, SandboxKind, Worker};
use std::collections::{BTreeMap, BTreeSet};

/// What every Java container needs besides the toolchain: python3 runs the agent, git the
/// resets, coreutils `timeout` (minbase has bash).
pub const JAVA_SYSTEM_PACKAGES: &[&str] =
    &["python3", "git", "ca-certificates", "coreutils", "procps"];
/// The JDK, Maven and the Maven repository of Debian packages that offline builds resolve
/// against (see `dockerfiles/java-maven.md`).
pub const JAVA_TOOLCHAIN_PACKAGES: &[&str] = &[
    "openjdk-17-jdk-headless",
    "maven",
    "junit5",
    "junit4",
    "libsurefire-java",
    "libmaven-clean-plugin-java",
    "libmaven-resources-plugin-java",
    "libmaven-compiler-plugin-java",
    "libmaven-jar-plugin-java",
    "libmaven-install-plugin-java",
    "libjacoco-java",
];

/// The Java base image. The JDK is installed after debootstrap, with apt
/// (`ca-certificates-java` needs a JVM to make its keystore).
pub const BASE: BaseRecipe = BaseRecipe {
    name: "java",
    packages: JAVA_SYSTEM_PACKAGES,
    later_packages: JAVA_TOOLCHAIN_PACKAGES,
    version_label: "java",
    version_probe: VersionProbe::ReleaseFile {
        dir: "usr/lib/jvm/",
        key: "JAVA_VERSION",
    },
};

/// The per-repository template for Java projects built with Maven.
pub const JAVA_MAVEN_TEMPLATE: &str = include_str!("../../dockerfiles/java-maven.Dockerfile");

/// Where a Java repository image keeps swe-forge's compiled coverage helpers, laid out as
/// [`Maven::helpers`] expects: `listener/` (the JUnit Platform listener's classes and its
/// `META-INF/services` entry), `tools/` (the analyser) and `jacocoagent.jar`.
pub const JAVA_HELPERS_DIR: &str = "/opt/swe-forge/java";
/// Where a Java repository image keeps the Maven settings for Debian's offline repository
/// (`dockerfiles/maven-settings.xml`), for [`Maven::settings`].
pub const JAVA_MAVEN_SETTINGS: &str = "/opt/swe-forge/maven-settings.xml";
/// Where a Java repository image keeps the Maven runner's fast-path builds
/// ([`Maven::build_cache`]): outside /testbed, so that resets keep them, and outside /tmp,
/// which the agent empties before every command. The image build leaves the build of its
/// commit there (the warm-up), so workers start with it; owned by the test user.
pub const JAVA_BUILD_CACHE: &str = "/var/cache/swe-forge/maven-build";
/// Debian's jar directory in the Java base image.
const JAVA_LIB: &str = "/usr/share/java";
/// The scratch directory of the warm-up in a Java image build.
const JAVA_WARMUP_SCRATCH: &str = "/tmp/swe-forge-warmup";

/// The Maven runner's fast-path setup ([`maven::fast::setup_script`]) as the image build runs
/// it: it builds the commit into [`JAVA_BUILD_CACHE`] exactly as a worker's first run would
/// (same worktree path, same key), or records why the fast path does not apply.
pub fn java_warmup_script() -> String {
    let prelude = format!(
        "export JAVA_TOOL_OPTIONS={}\nexport MALLOC_ARENA_MAX=2\n",
        shell_quote(maven::DEFAULT_JVM_OPTIONS)
    );
    maven::fast::setup_script(
        &prelude,
        "mvn",
        &shell_quote(JAVA_MAVEN_SETTINGS),
        &shell_quote(JAVA_BUILD_CACHE),
        JAVA_LIB,
        JAVA_WARMUP_SCRATCH,
    )
}

/// The repository image of a Maven project: the context holds the coverage helpers' sources,
/// the Maven settings and the warm-up script (`java/`); the image build compiles the helpers
/// and builds the commit offline (which doubles as the check that it builds offline).
pub fn image_recipe(repo: &Repo) -> ImageRecipe {
    let warmup = java_warmup_script();
    let values = BTreeMap::from([
        ("seed".to_string(), repo.name.clone().into()),
        ("helpers".to_string(), JAVA_HELPERS_DIR.into()),
        ("settings".to_string(), JAVA_MAVEN_SETTINGS.into()),
        ("build_cache".to_string(), JAVA_BUILD_CACHE.into()),
        ("warmup_dir".to_string(), JAVA_WARMUP_SCRATCH.into()),
        ("setup_file".to_string(), maven::fast::SETUP_FILE.into()),
        ("java_lib".to_string(), JAVA_LIB.into()),
        ("jvm_options".to_string(), maven::DEFAULT_JVM_OPTIONS.into()),
    ]);
    ImageRecipe {
        base: BASE,
        template_name: "dockerfiles/java-maven.Dockerfile",
        template: JAVA_MAVEN_TEMPLATE,
        values,
        files: vec![
            ContextFile::text("java/PerTestListener.java", maven::LISTENER_JAVA),
            ContextFile::text("java/PerTestCoverage.java", maven::ANALYSER_JAVA),
            ContextFile::text("java/maven-settings.xml", maven::SETTINGS_XML),
            ContextFile::text("java/warmup-setup.sh", &warmup),
        ],
        hash: vec![
            HashPart::Text(JAVA_MAVEN_TEMPLATE.to_string()),
            HashPart::BaseId,
            HashPart::Commit,
            HashPart::Text(maven::LISTENER_JAVA.to_string()),
            HashPart::Text(maven::ANALYSER_JAVA.to_string()),
            HashPart::Text(maven::SETTINGS_XML.to_string()),
            HashPart::Text(maven::DEFAULT_JVM_OPTIONS.to_string()),
            HashPart::Text(warmup),
        ],
        labels: BTreeMap::from([("swe-forge.build-system".to_string(), "maven".to_string())]),
        variant_label: None,
        variants: vec![Variant {
            name: "offline".into(),
            description: String::new(),
            values: BTreeMap::new(),
            host_dir: None,
        }],
        description: "Maven, offline".into(),
    }
}

/// `src/main/java/a/b/C.java` (or `mod/src/main/java/…`) → `a.b`.
fn java_package(file: &str) -> Option<String> {
    let rel = file.rsplit_once("src/main/java/")?.1;
    let dir = rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    Some(dir.replace('/', "."))
}

/// Java with Maven.
#[derive(Clone, Copy, Debug)]
pub struct JavaMaven;

impl JavaMaven {
    /// Maven for `spec` (fresh JVMs).
    pub fn maven(spec: &RunnerSpec) -> Maven {
        let mut m = Maven::new();
        if spec.sandbox == SandboxKind::Docker {
            // The image carries the compiled coverage helpers, the offline settings and the
            // clean build of the commit (outside /testbed, which resets leave alone).
            m.helpers = Some(JAVA_HELPERS_DIR.to_string());
            m.settings = Some(JAVA_MAVEN_SETTINGS.to_string());
            m.build_cache = Some(JAVA_BUILD_CACHE.to_string());
        } else {
            // Outside the worker's scratch directory, which is emptied between candidates.
            m.build_cache = Some(spec.cache.join("java-builds").display().to_string());
        }
        m.log_dir = spec.log_dir.clone();
        m
    }
}

impl Toolchain for JavaMaven {
    /// Two JUnit test methods in the first graded test class ([`crate::canary::java`]).
    fn canary(
        &self,
        grading: &crate::grading::Grading,
        nonce: &str,
        read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<crate::canary::Canary> {
        crate::canary::java(grading, nonce, read)
    }

    /// The build files, Maven's own folder and settings, and the test sources.
    fn protected(&self) -> Vec<String> {
        [
            "pom.xml",
            ".mvn",
            "settings.xml",
            "*.gradle",
            "*.gradle.kts",
            "test",
            "*Test.java",
            "*Tests.java",
            "*IT.java",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn id(&self) -> ToolchainId {
        ToolchainId::JavaMaven
    }

    fn language(&self) -> Language {
        Language::Java
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        if profile.build_system == "maven" {
            return Ok(());
        }
        Err(Unsupported(format!(
            "the build system of this Java repository ({}) is not supported: swe-forge builds \
             and tests Java with Maven (a pom.xml at the repository root)",
            match profile.build_system.as_str() {
                "none" => "none found",
                other => other,
            }
        )))
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::maven(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        format!("{} -o -B test", Self::maven(spec).mvn)
    }

    fn resident(
        &self,
        spec: &RunnerSpec,
        worker: &mut dyn Worker,
        baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        let m = Self::maven(spec).qualify_resident(worker, baseline)?;
        tracing::info!(cpu_offset_s = m.resident_cpu_offset, "resident JVM");
        Ok(Box::new(m))
    }

    /// `pkg.ClassTest#method`: the test file named after the class.
    fn test_file(&self, id: &str, test_files: &[String]) -> Option<String> {
        let class = id.split('#').next()?;
        let class = class.rsplit('.').next().unwrap_or(class);
        let suffix = format!("/{class}.java");
        test_files
            .iter()
            .find(|f| f.ends_with(&suffix) || **f == format!("{class}.java"))
            .cloned()
    }

    fn synthesizes_tests(&self) -> bool {
        false
    }

    /// The tests of the mutated class's package (`a.b.CTest#m` for
    /// `src/main/java/a/b/C.java`), where it has any.
    fn screening_fallback(&self, file: &str, stable: &BTreeSet<String>) -> Option<Vec<String>> {
        let package = java_package(file)?;
        let same: Vec<String> = stable
            .iter()
            .filter(|t| {
                let class = t.split('#').next().unwrap_or(t);
                class.rsplit_once('.').map(|(p, _)| p).unwrap_or("") == package
            })
            .cloned()
            .collect();
        (!same.is_empty()).then_some(same)
    }

    fn base(&self) -> BaseRecipe {
        BASE
    }

    fn recipe(&self, repo: &Repo) -> EnvRecipe {
        EnvRecipe {
            image: image_recipe(repo),
            // The host's Maven against Debian's offline repository: nothing to install per
            // repository.
            local: LocalRecipe {
                requires: vec![Requirement {
                    argv: vec!["mvn".into(), "-v".into()],
                    hint: "Java needs Maven and a JDK on this host for the local sandbox; \
                           install Debian's packages listed in dockerfiles/java-maven.md, or use \
                           --sandbox docker"
                        .into(),
                }],
                ..Default::default()
            },
        }
    }

    fn task_layer(&self) -> TaskLayer {
        TaskLayer {
            copy_paths: vec!["/opt/swe-forge".to_string()],
            prepare: format!("install -d -o {TEST_UID} -g {TEST_UID} {JAVA_BUILD_CACHE}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::image::{render_repo_dockerfile, repo_labels, repo_tag};

    #[test]
    fn renders_the_java_template() {
        let repo = Repo::sample("javashelf", Language::Java, "maven", "junit");
        let recipe = image_recipe(&repo);
        let labels = repo_labels(&repo, &recipe, &recipe.variants[0], "sha256:b");
        assert_eq!(labels["swe-forge.build-system"], "maven");
        let text = render_repo_dockerfile(
            &recipe,
            &recipe.variants[0],
            "swe-forge/java-base:x",
            false,
            &labels,
        )
        .unwrap();
        assert!(text.starts_with("FROM swe-forge/java-base:x\n"), "{text}");
        assert!(
            text.contains("H=/opt/swe-forge/java; J=/usr/share/java;"),
            "{text}"
        );
        assert!(
            text.contains("jar xf $J/org.jacoco.agent.jar jacocoagent.jar"),
            "{text}"
        );
        assert!(
            text.contains("org.junit.platform.launcher.TestExecutionListener"),
            "{text}"
        );
        assert!(
            text.contains(
                "install -m 0644 $S/maven-settings.xml /opt/swe-forge/maven-settings.xml"
            ),
            "{text}"
        );
        assert!(
            text.contains("COPY --chown=1000:1000 testbed/ /testbed/"),
            "{text}"
        );
        assert!(text.contains("USER tester\n"), "{text}");
        assert!(
            text.contains("mvn -o -q -B -s /opt/swe-forge/maven-settings.xml test-compile"),
            "{text}"
        );
        assert!(
            text.contains("export JAVA_TOOL_OPTIONS='-Xmx768m"),
            "{text}"
        );
        assert!(
            text.contains("swe-forge: javashelf does not build offline"),
            "{text}"
        );
        assert!(text.contains("git clean -q -f -d -x"), "{text}");
        assert!(
            text.contains("install -d -o 1000 -g 1000 /var/cache/swe-forge/maven-build"),
            "{text}"
        );
        assert!(
            text.contains("bash /opt/swe-forge/java/warmup-setup.sh"),
            "{text}"
        );
        assert!(
            text.contains("head -n 1 /tmp/swe-forge-warmup/fast-setup.txt"),
            "{text}"
        );
        let warmup = java_warmup_script();
        assert!(
            warmup.contains("C=/var/cache/swe-forge/maven-build\n"),
            "{warmup}"
        );
        assert!(
            warmup.contains("-s /opt/swe-forge/maven-settings.xml"),
            "{warmup}"
        );
        assert!(
            text.contains("LABEL swe-forge.base=\"sha256:b\" swe-forge.build-system=\"maven\""),
            "{text}"
        );
        assert!(text.contains("swe-forge.language=\"java\""), "{text}");
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 10, "{instructions} instructions:\n{text}");
    }

    #[test]
    fn java_repo_tag_depends_on_what_the_image_holds() {
        let a = Repo::sample("javashelf", Language::Java, "maven", "junit");
        let t = repo_tag(&a, &image_recipe(&a), "sha256:1");
        assert!(t.starts_with("swe-forge/javashelf:"), "{t}");
        assert_eq!(t, repo_tag(&a, &image_recipe(&a), "sha256:1"));
        assert_ne!(t, repo_tag(&a, &image_recipe(&a), "sha256:2"));
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, &image_recipe(&b), "sha256:1"));
        let py = crate::toolchain::python_pytest::image_recipe(&a);
        assert_ne!(t, repo_tag(&a, &py, "sha256:1"));
    }

    #[test]
    fn the_base_image_installs_the_jdk_after_debootstrap() {
        assert_eq!(BASE.version_label, "java");
        assert!(BASE.later_packages.contains(&"openjdk-17-jdk-headless"));
        assert!(BASE.later_packages.contains(&"libjacoco-java"));
        // ca-certificates-java needs a JVM: the JDK is installed with apt afterwards.
        assert!(!BASE
            .packages
            .iter()
            .any(|p| p.contains("jdk") || *p == "maven"));
        for p in ["python3", "git", "ca-certificates", "coreutils"] {
            assert!(BASE.all_packages().contains(&p), "{p}");
        }
    }

    #[test]
    fn screening_without_coverage_takes_the_package_s_tests() {
        let stable: BTreeSet<String> = ["a.b.CTest#x", "a.b.DTest#y", "a.c.ETest#z"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            JavaMaven
                .screening_fallback("src/main/java/a/b/C.java", &stable)
                .unwrap(),
            vec!["a.b.CTest#x".to_string(), "a.b.DTest#y".to_string()]
        );
        assert_eq!(
            JavaMaven.screening_fallback("src/main/java/z/Q.java", &stable),
            None
        );
        assert_eq!(JavaMaven.screening_fallback("lib/q.py", &stable), None);
    }
}
