//! Java built with Maven and tested with JUnit through Surefire: the Maven runner (offline,
//! against an overlay of Debian's Maven repository in which the versions the project asks for
//! resolve to Debian's, see [`super::maven_overlay`]), `pkg.Class#method` ids, no test synthesis, screening
//! without per-test coverage by the tests of the mutated class's package; and the
//! environments: the base image's packages (the JDK, Maven, Debian's Maven repository), the
//! repository image (`dockerfiles/java-maven.Dockerfile`: the coverage helpers compiled, the
//! offline settings, the warm-up build of the commit), the task image's layer and the host's
//! Maven for the local sandbox.

use super::maven_overlay::{self, Mapping};
use super::{RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::maven::{self, Maven};
use crate::runner::TestRunner;
use crate::sandbox::image::TEST_UID;
use crate::sandbox::recipe::{
    BaseRecipe, ContextFile, EnvDir, EnvRecipe, HashPart, ImageRecipe, LocalRecipe, Requirement,
    SetupStep, TaskLayer, Variant, VersionProbe,
};
use crate::sandbox::{shell_quote, SandboxKind, Worker};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
    // What real projects' builds and tests commonly need besides (see java-maven.md, "Real
    // projects"): the bundle plugin (`<packaging>bundle</packaging>`), build-helper (extra
    // source folders), and test libraries.
    "libmaven-bundle-plugin-java",
    "libbuild-helper-maven-plugin-java",
    "libhamcrest-java",
    "libassertj-core-java",
    "libmockito-java",
    "libeasymock-java",
    "libgoogle-gson-java",
    "libjimfs-java",
    "libjaxb-api-java",
    "libjaxb-java",
    "libjetty9-java",
    // joda-time: joda-convert, and the exec plugin that compiles its time-zone data.
    "libjoda-convert-java",
    "libexec-maven-plugin-java",
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
/// Where a Java repository image keeps the overlay of Debian's Maven repository made for its
/// project ([`maven_overlay`]), owned by root; the local repository of [`JAVA_MAVEN_SETTINGS`].
pub const JAVA_MAVEN_OVERLAY: &str = "/opt/swe-forge/m2";
/// Maven's own extension folder in Debian's Maven (`$maven.home/lib/ext`), where images keep
/// the overlay's core extension: every `mvn` there loads it, the grading command in a task
/// image included, so the task layer carries it.
pub const MAVEN_EXT_DIR: &str = "/usr/share/maven/lib/ext";
/// A harness's verdict on the Surefire reports of a grading run (`dockerfiles/java/verdict.py`).
const VERDICT_PY: &str = include_str!("../../dockerfiles/java/verdict.py");
/// The variable that names the overlay to commands of the local sandbox (the image's is
/// [`JAVA_MAVEN_OVERLAY`]).
const OVERLAY_VAR: &str = "SWE_FORGE_MAVEN_REPO";
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
    let settings = maven::settings_xml(JAVA_MAVEN_OVERLAY);
    let extension = maven_overlay::extension_build_script("/tmp/swe-forge/java", MAVEN_EXT_DIR);
    let values = BTreeMap::from([
        ("seed".to_string(), repo.name.clone().into()),
        ("helpers".to_string(), JAVA_HELPERS_DIR.into()),
        ("settings".to_string(), JAVA_MAVEN_SETTINGS.into()),
        ("overlay".to_string(), JAVA_MAVEN_OVERLAY.into()),
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
            ContextFile::text("java/maven-settings.xml", &settings),
            ContextFile::text("java/warmup-setup.sh", &warmup),
            ContextFile::text("java/maven-overlay.py", maven_overlay::OVERLAY_PY),
            ContextFile::text("java/maven-aliases.txt", maven_overlay::ALIASES_TXT),
            ContextFile::text(
                "java/SweForgeDropPlugins.java",
                maven_overlay::EXTENSION_JAVA,
            ),
            ContextFile::text("java/components.xml", maven_overlay::EXTENSION_COMPONENTS),
            ContextFile::text("java/build-extension.sh", &extension),
        ],
        hash: vec![
            HashPart::Text(JAVA_MAVEN_TEMPLATE.to_string()),
            HashPart::BaseId,
            HashPart::Commit,
            HashPart::Text(maven::LISTENER_JAVA.to_string()),
            HashPart::Text(maven::ANALYSER_JAVA.to_string()),
            HashPart::Text(settings.clone()),
            HashPart::Text(maven_overlay::OVERLAY_PY.to_string()),
            HashPart::Text(maven_overlay::ALIASES_TXT.to_string()),
            HashPart::Text(maven_overlay::EXTENSION_JAVA.to_string()),
            HashPart::Text(maven_overlay::EXTENSION_COMPONENTS.to_string()),
            HashPart::Text(extension.clone()),
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

    /// Surefire's `-Dtest` names single test methods.
    fn grades_tests_by_name(&self) -> bool {
        true
    }

    /// Offline Maven with the image's settings (the overlay of Debian's repository), Surefire
    /// selecting the graded tests (`-Dtest=a.B#x*+y*`) or the graded files' classes: what a
    /// task image runs (`java-maven.md`, "Grading"). The seed's test command is not used:
    /// Maven's is fixed.
    fn grading(
        &self,
        root: &Path,
        test_command: &str,
        files: Vec<String>,
    ) -> crate::grading::Grading {
        let _ = (root, test_command);
        crate::grading::Grading::new(
            &format!("mvn -o -B -s {JAVA_MAVEN_SETTINGS}"),
            vec![
                "-Dsurefire.failIfNoSpecifiedTests=false".into(),
                "-DfailIfNoTests=false".into(),
            ],
            files,
            None,
        )
        .with_select(crate::grading::Select::Surefire)
    }

    /// SWE-bench's `parse_log_maven` reads a test's id as the text after `-Dtest=` up to the
    /// first whitespace.
    fn harness_readable(&self, id: &str) -> bool {
        !id.is_empty() && !id.chars().any(|c| c.is_whitespace() || c.is_control())
    }

    /// The grading command, its output kept in a log (printed with Maven's own `-Dtest=` and
    /// `BUILD …` words defused, so that SWE-bench's `parse_log_maven` does not read them),
    /// then `dockerfiles/java/verdict.py` on the Surefire reports: `-Dtest=<id>` and
    /// `BUILD SUCCESS|FAILURE` per graded test for SWE-bench, `PASSED|FAILED <id>` for
    /// Harbor; exit 0 only when every graded test passed. The exit status is the verdict's,
    /// not Maven's: Maven fails when a test it ran that is not graded fails (a class the
    /// command selects whole, a method a prefix pattern adds), and SWE-bench 5 refuses a log
    /// whose command failed while every parsed test passed (`patch_successfully_applied`
    /// false: joda-time's gold patches, beside its 6 tests that fail on the clean code too).
    fn harness_run(
        &self,
        harness: crate::toolchain::Harness,
        grading: &crate::grading::Grading,
        graded: &[String],
        log_dir: &str,
    ) -> Result<crate::toolchain::HarnessRun, String> {
        let q = shell_quote;
        let verdict = format!("{log_dir}/verdict.py");
        let log = q(&format!("{log_dir}/maven.log"));
        let setup = format!(
            "mkdir -p {}
{}",
            q(log_dir),
            maven::heredoc(&q(&verdict), VERDICT_PY)
        );
        let ids = graded.iter().map(|t| q(t)).collect::<Vec<_>>().join(" ");
        let clean =
            "find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null";
        let mvn = grading.line_with(&[]);
        let command = match harness {
            crate::toolchain::Harness::SweBench => format!(
                "{{ {clean}; {mvn} > {log} 2>&1; \
                 sed -e 's/-Dtest=/-Dtest =/g' -e 's/BUILD \\(SUCCESS\\|FAILURE\\)/BUILD: \\1/' {log}; \
                 python3 {verdict_q} --swebench {ids}; status=$?; sleep 1; }} 2>/dev/null; (exit $status)",
                verdict_q = q(&verdict),
            ),
            crate::toolchain::Harness::Harbor => format!(
                "{clean}; {mvn} >&2; python3 {} --harbor {ids}",
                q(&verdict)
            ),
        };
        Ok(crate::toolchain::HarnessRun {
            setup,
            command,
            log_parser: "parse_log_maven",
        })
    }

    /// `pkg.ClassTest#method`: the test file named after the class (a nested class's,
    /// `pkg.ClassTest$Inner#method`, is its outer class's file).
    fn test_file(&self, id: &str, test_files: &[String]) -> Option<String> {
        let class = id.split('#').next()?;
        let class = class.split('$').next().unwrap_or(class);
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

    fn writes_java_regression_tests(&self) -> bool {
        true
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
            local: local_recipe(repo),
        }
    }

    /// The overlay's mapping ([`Mapping`]), in the form a record keeps: lists rather than
    /// maps keyed by artifact, so that every record has the same columns.
    fn environment_notes(&self, worker: &mut dyn Worker) -> Option<serde_json::Value> {
        let cmd = format!(
            "cat \"${{{OVERLAY_VAR}:-{JAVA_MAVEN_OVERLAY}}}/{}/mapping.json\"",
            maven_overlay::STATE_DIR
        );
        let out = worker.exec(&cmd, std::time::Duration::from_secs(30)).ok()?;
        if out.exit_code != Some(0) {
            return None;
        }
        let mapping = Mapping::parse(&String::from_utf8_lossy(&out.stdout)).ok()?;
        Some(mapping_note(&mapping))
    }

    /// The modules the overlay left out of a multi-module build.
    fn left_out_folders(&self, notes: &serde_json::Value) -> Vec<String> {
        notes["maven_overlay"]["dropped_modules"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .filter_map(|m| m["folder"].as_str())
                    .filter(|f| !f.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn task_layer(&self) -> TaskLayer {
        TaskLayer {
            copy_paths: vec!["/opt/swe-forge".to_string(), MAVEN_EXT_DIR.to_string()],
            prepare: format!("install -d -o {TEST_UID} -g {TEST_UID} {JAVA_BUILD_CACHE}"),
        }
    }
}

/// A record's note of the Maven overlay: `maven_overlay` with `mapped`
/// (`[{asked, debian}]`), `managed` (`[{artifact, version}]`) and `dropped_plugins`.
pub fn mapping_note(m: &Mapping) -> serde_json::Value {
    serde_json::json!({
        "maven_overlay": {
            "mapped": m.mapped.iter().map(|(asked, debian)| serde_json::json!({
                "asked": asked, "debian": debian
            })).collect::<Vec<_>>(),
            "managed": m.managed.iter().map(|(artifact, version)| serde_json::json!({
                "artifact": artifact, "version": version
            })).collect::<Vec<_>>(),
            "relocated": m.relocated.iter().map(|(asked, debian)| serde_json::json!({
                "asked": asked, "debian": debian
            })).collect::<Vec<_>>(),
            "dropped_plugins": m.dropped_plugins,
            "dropped_modules": m.dropped_modules.iter().map(|(artifact, folder)| serde_json::json!({
                "artifact": artifact, "folder": folder
            })).collect::<Vec<_>>(),
        }
    })
}

/// The local sandbox: the host's Maven and JDK, and once per commit (and per state of the
/// host's Debian repository) an overlay made by the same script as in the image, with the
/// core extension compiled beside it; Maven's commands get both through `MAVEN_OPTS`.
fn local_recipe(repo: &Repo) -> LocalRecipe {
    let hint = |what: &str| Requirement {
        argv: vec![
            what.into(),
            if what == "python3" {
                "--version"
            } else {
                "-version"
            }
            .into(),
        ],
        hint: format!(
            "Java needs Maven, a JDK and python3 on this host for the local sandbox ({what} is \
             missing); install Debian's packages listed in dockerfiles/java-maven.md, or use \
             --sandbox docker"
        ),
    };
    let mut mvn = hint("mvn");
    mvn.argv[1] = "-v".into();
    let write_sources = "set -e\nmkdir -p \"$1/src\"\nprintf '%s' \"$2\" > \"$1/src/SweForgeDropPlugins.java\"\n\
         printf '%s' \"$3\" > \"$1/src/components.xml\"\nprintf '%s' \"$4\" > \"$1/maven-overlay.py\"\n\
         printf '%s' \"$5\" > \"$1/maven-aliases.txt\"\n"
        .to_string();
    let build = format!(
        "{write_sources}{}",
        maven_overlay::extension_build_script("\"$1/src\"", "\"$1\"")
    );
    let jar = format!("{{env}}/{}", maven_overlay::EXTENSION_JAR);
    LocalRecipe {
        requires: vec![mvn, hint("javac"), hint("python3")],
        env_dir: Some(EnvDir {
            key: vec![
                repo.commit.clone(),
                maven_overlay::OVERLAY_PY.to_string(),
                maven_overlay::ALIASES_TXT.to_string(),
                maven_overlay::EXTENSION_JAVA.to_string(),
                maven_overlay::EXTENSION_COMPONENTS.to_string(),
                build.clone(),
            ],
            // A Debian package installed or removed since changes what the overlay maps.
            key_commands: vec![vec![
                "bash".into(),
                "-c".into(),
                format!("find {} | sort | md5sum", maven::DEBIAN_MAVEN_REPO),
            ]],
            steps: vec![
                SetupStep {
                    what: "compiling swe-forge's Maven core extension".into(),
                    argv: vec![
                        "bash".into(),
                        "-c".into(),
                        build,
                        "build-extension".into(),
                        "{env}".into(),
                        maven_overlay::EXTENSION_JAVA.into(),
                        maven_overlay::EXTENSION_COMPONENTS.into(),
                        maven_overlay::OVERLAY_PY.into(),
                        maven_overlay::ALIASES_TXT.into(),
                    ],
                    env: Vec::new(),
                    in_copy: false,
                },
                SetupStep {
                    what: "making the overlay of Debian's Maven repository for this project \
                           (maven-overlay.py)"
                        .into(),
                    argv: vec![
                        "python3".into(),
                        "{env}/maven-overlay.py".into(),
                        "--debian".into(),
                        maven::DEBIAN_MAVEN_REPO.into(),
                        "--root".into(),
                        "{env}/m2".into(),
                        "--project".into(),
                        ".".into(),
                        format!("--mvn-arg=-Dmaven.ext.class.path={jar}"),
                    ],
                    env: Vec::new(),
                    in_copy: true,
                },
            ],
        }),
        vars: vec![
            (OVERLAY_VAR.into(), "{env}/m2".into()),
            (
                "MAVEN_OPTS".into(),
                format!("-Dmaven.repo.local={{env}}/m2 -Dmaven.ext.class.path={jar}"),
            ),
        ],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
