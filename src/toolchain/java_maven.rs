//! Java built with Maven and tested with JUnit through Surefire: the Maven runner (offline,
//! against Debian's Maven repository), `pkg.Class#method` ids; no test synthesis.

use super::{RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::Profile;
use crate::runner::maven::Maven;
use crate::runner::TestRunner;
use crate::sandbox::{image, SandboxKind, Worker};

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
            m.helpers = Some(image::JAVA_HELPERS_DIR.to_string());
            m.settings = Some(image::JAVA_MAVEN_SETTINGS.to_string());
            m.build_cache = Some(image::JAVA_BUILD_CACHE.to_string());
        } else {
            // Outside the worker's scratch directory, which is emptied between candidates.
            m.build_cache = Some(spec.cache.join("java-builds").display().to_string());
        }
        m.log_dir = spec.log_dir.clone();
        m
    }
}

impl Toolchain for JavaMaven {
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
}
