//! Repository images: one per repository on its language's base image, built from a
//! `dockerfiles/` template (Python: packages from the index or the host's wheelhouse; Java:
//! Maven offline, the coverage helpers and the warm-up build), tagged by the hash of what they
//! are made from.

use super::context::ContextTar;
use super::wheelhouse::host_wheelhouse;
use super::{
    build_image, find_or_build, io_err, ImageError, ImageRef, Progress, TEST_UID, TEST_USER,
};
use crate::lang::Language;
use crate::repo::Repo;
use crate::runner::maven;
use crate::sandbox::docker::Client;
use crate::sandbox::local::PYTHON_TEST_TOOLS;
use crate::sandbox::shell_quote;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The per-repository template for Python projects.
pub const PYTHON_TEMPLATE: &str = include_str!("../../../dockerfiles/python.Dockerfile");
/// The per-repository template for Java projects built with Maven.
pub const JAVA_MAVEN_TEMPLATE: &str = include_str!("../../../dockerfiles/java-maven.Dockerfile");

/// Where a Java repository image keeps swe-forge's compiled coverage helpers, laid out as
/// [`crate::runner::maven::Maven::helpers`] expects: `listener/` (the JUnit Platform listener's
/// classes and its `META-INF/services` entry), `tools/` (the analyser) and `jacocoagent.jar`.
pub const JAVA_HELPERS_DIR: &str = "/opt/swe-forge/java";
/// Where a Java repository image keeps the Maven settings for Debian's offline repository
/// (`dockerfiles/maven-settings.xml`), for [`crate::runner::maven::Maven::settings`].
pub const JAVA_MAVEN_SETTINGS: &str = "/opt/swe-forge/maven-settings.xml";

/// Where a Java repository image keeps the Maven runner's fast-path builds
/// ([`crate::runner::maven::Maven::build_cache`]): outside /testbed, so that resets keep them,
/// and outside /tmp, which the agent empties before every command. The image build leaves the
/// build of its commit there (the warm-up), so workers start with it; owned by the test user.
pub const JAVA_BUILD_CACHE: &str = "/var/cache/swe-forge/maven-build";
/// Debian's jar directory in the Java base image.
const JAVA_LIB: &str = "/usr/share/java";
/// The scratch directory of the warm-up in a Java image build.
const JAVA_WARMUP_SCRATCH: &str = "/tmp/swe-forge-warmup";

/// Where the Python packages of a repository image come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipSource {
    /// The package index, reached from the build container.
    Index,
    /// Wheels downloaded on the host, installed with `--no-index`.
    Wheelhouse,
}

impl PipSource {
    pub fn name(self) -> &'static str {
        match self {
            PipSource::Index => "index",
            PipSource::Wheelhouse => "wheelhouse",
        }
    }
}

/// A Docker repository name for a seed: lower case, `[a-z0-9]` runs joined by `-`.
pub fn repo_image_name(seed: &str) -> String {
    let mut out = String::new();
    for c in seed.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "repo".to_string()
    } else {
        out.to_string()
    }
}

/// `swe-forge/<seed>:<12 hex>` for a repository on a base image: the hash of everything the
/// image is made from, so that an unchanged repository is never rebuilt.
pub fn repo_tag(repo: &Repo, base_id: &str) -> Result<String, ImageError> {
    let python_tools = PYTHON_TEST_TOOLS.join(",");
    let python_path = repo.profile.python_path.join(":");
    let warmup = java_warmup_script();
    let parts: Vec<&str> = match repo.profile.language {
        Language::Python => vec![
            PYTHON_TEMPLATE,
            crate::sandbox::task_image::STRIP_SCRIPT,
            base_id,
            &repo.commit,
            repo.profile.install_command.as_deref().unwrap_or(""),
            &python_tools,
            &python_path,
        ],
        Language::Java => {
            require_maven(repo)?;
            vec![
                JAVA_MAVEN_TEMPLATE,
                base_id,
                &repo.commit,
                maven::LISTENER_JAVA,
                maven::ANALYSER_JAVA,
                maven::SETTINGS_XML,
                maven::DEFAULT_JVM_OPTIONS,
                &warmup,
            ]
        }
        Language::JavaScript | Language::TypeScript => {
            return Err(ImageError::Unsupported(format!(
                "no repository image recipe for {} projects yet",
                repo.profile.language
            )))
        }
    };
    let mut h = blake3::Hasher::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    Ok(format!(
        "swe-forge/{}:{}",
        repo_image_name(&repo.name),
        &h.finalize().to_hex()[..12]
    ))
}

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

/// The Docker sandbox builds Java projects with Maven only.
fn require_maven(repo: &Repo) -> Result<(), ImageError> {
    if repo.profile.build_system == "maven" {
        return Ok(());
    }
    Err(ImageError::Unsupported(format!(
        "{}: the docker sandbox builds Java projects with Maven only, and this one's build \
         system is `{}` (a pom.xml at the repository root is needed); use `--sandbox local` \
         or leave the seed out",
        repo.name, repo.profile.build_system
    )))
}

/// The image for `repo` on `base`: found by its tag, or built. Python projects get their
/// packages from the package index, else from a wheelhouse (`SWE_FORGE_PIP_SOURCE` forces
/// one); Java projects need no network.
pub fn ensure_repo_image(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let sources: Vec<PipSource> = match std::env::var("SWE_FORGE_PIP_SOURCE").as_deref() {
        Ok("index") => vec![PipSource::Index],
        Ok("wheelhouse") => vec![PipSource::Wheelhouse],
        _ => vec![PipSource::Index, PipSource::Wheelhouse],
    };
    ensure_repo_image_from(client, cache, repo, base, &sources, progress)
}

/// [`ensure_repo_image`] trying the given package sources in order (for Python projects;
/// a Java project's image has no packages to fetch and ignores them).
pub fn ensure_repo_image_from(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    sources: &[PipSource],
    progress: Progress<'_>,
) -> Result<ImageRef, ImageError> {
    let tag = repo_tag(repo, &base.id)?;
    if repo.profile.language == Language::Java {
        return find_or_build(client, cache, tag, |tag| {
            progress(&format!(
                "building {tag} for {} at {} (Maven, offline)",
                repo.name,
                &repo.commit[..12.min(repo.commit.len())],
            ));
            let started = Instant::now();
            let id = build_java_image(client, repo, base, tag, progress)?;
            tracing::info!(image = %tag, seconds = started.elapsed().as_secs_f64(), "built the repository image");
            Ok(id)
        });
    }
    find_or_build(client, cache, tag, |tag| {
        let mut failures = Vec::new();
        for &source in sources {
            progress(&format!(
                "building {tag} for {} at {} (packages from the {})",
                repo.name,
                &repo.commit[..12.min(repo.commit.len())],
                match source {
                    PipSource::Index => "package index",
                    PipSource::Wheelhouse => "host's wheelhouse",
                }
            ));
            let started = Instant::now();
            match build_repo_image(client, cache, repo, base, tag, source, progress) {
                Ok(id) => {
                    tracing::info!(image = %tag, seconds = started.elapsed().as_secs_f64(), source = source.name(), "built the repository image");
                    return Ok(id);
                }
                Err(e) => {
                    tracing::warn!(image = %tag, source = source.name(), "image build failed: {e}");
                    failures.push(format!("with packages from the {}: {e}", source.name()));
                }
            }
        }
        Err(ImageError::Build {
            tag: tag.to_string(),
            detail: failures.join("\n"),
        })
    })
}

/// Build the image of a Maven project: the context holds the Dockerfile, the coverage
/// helpers' sources and the Maven settings (`java/`), and the checkout (`testbed/`).
fn build_java_image(
    client: &Client,
    repo: &Repo,
    base: &ImageRef,
    tag: &str,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let labels = BTreeMap::from([
        ("swe-forge.kind".to_string(), "repo".to_string()),
        ("swe-forge.seed".to_string(), repo.name.clone()),
        ("swe-forge.commit".to_string(), repo.commit.clone()),
        ("swe-forge.language".to_string(), "java".to_string()),
        ("swe-forge.base".to_string(), base.id.clone()),
        ("swe-forge.build-system".to_string(), "maven".to_string()),
    ]);
    let dockerfile = render_java_dockerfile(repo, &base.tag, &labels)?;
    let mut ctx = ContextTar::new();
    let add = |ctx: &mut ContextTar, path: &str, text: &str| {
        ctx.add_file(path, text.as_bytes(), 0o644)
            .map_err(io_err("making the build context"))
    };
    add(&mut ctx, "Dockerfile", &dockerfile)?;
    add(&mut ctx, "java/PerTestListener.java", maven::LISTENER_JAVA)?;
    add(&mut ctx, "java/PerTestCoverage.java", maven::ANALYSER_JAVA)?;
    add(&mut ctx, "java/maven-settings.xml", maven::SETTINGS_XML)?;
    add(&mut ctx, "java/warmup-setup.sh", &java_warmup_script())?;
    ctx.add_checkout(&repo.checkout, "testbed")
        .map_err(io_err(format!("adding {}", repo.checkout.display())))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Render `dockerfiles/java-maven.Dockerfile` for a Maven project.
pub fn render_java_dockerfile(
    repo: &Repo,
    base: &str,
    labels: &BTreeMap<String, String>,
) -> Result<String, ImageError> {
    require_maven(repo)?;
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| shell_quote(&v));
    env.render_str(
        JAVA_MAVEN_TEMPLATE,
        minijinja::context! {
            base => base,
            seed => repo.name,
            labels => labels,
            user => TEST_USER,
            uid => TEST_UID,
            helpers => JAVA_HELPERS_DIR,
            settings => JAVA_MAVEN_SETTINGS,
            build_cache => JAVA_BUILD_CACHE,
            warmup_dir => JAVA_WARMUP_SCRATCH,
            setup_file => maven::fast::SETUP_FILE,
            java_lib => JAVA_LIB,
            jvm_options => maven::DEFAULT_JVM_OPTIONS,
        },
    )
    .map_err(|e| ImageError::Build {
        tag: base.to_string(),
        detail: format!("rendering dockerfiles/java-maven.Dockerfile: {e}"),
    })
}

fn build_repo_image(
    client: &Client,
    cache: &Path,
    repo: &Repo,
    base: &ImageRef,
    tag: &str,
    source: PipSource,
    progress: Progress<'_>,
) -> Result<String, ImageError> {
    let template = PYTHON_TEMPLATE;
    let ca_bundle = host_ca_bundle();
    let wheelhouse = match source {
        PipSource::Index => None,
        PipSource::Wheelhouse => Some(host_wheelhouse(cache, repo, tag, progress)?),
    };
    let mut pip_env = vec![
        "PIP_DISABLE_PIP_VERSION_CHECK=1".to_string(),
        "PIP_NO_CACHE_DIR=1".to_string(),
        "PIP_ROOT_USER_ACTION=ignore".to_string(),
        "PIP_PROGRESS_BAR=off".to_string(),
    ];
    let mut ctx = ContextTar::new();
    if let Some(ca) = &ca_bundle {
        ctx.add_file("pip/ca-bundle.pem", ca, 0o644)
            .map_err(io_err("adding the CA bundle"))?;
        let ca = "/tmp/swe-forge/pip/ca-bundle.pem";
        pip_env.extend([
            format!("PIP_CERT={ca}"),
            format!("SSL_CERT_FILE={ca}"),
            format!("REQUESTS_CA_BUNDLE={ca}"),
        ]);
    }
    if let Some(dir) = &wheelhouse {
        ctx.add_dir_tree(dir, "pip/wheelhouse", |_| true)
            .map_err(io_err("adding the wheelhouse"))?;
        pip_env.extend([
            "PIP_NO_INDEX=1".to_string(),
            "PIP_FIND_LINKS=/tmp/swe-forge/pip/wheelhouse".to_string(),
        ]);
    } else {
        // A private index or proxy configured on the host applies in the build container too.
        for key in ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST"] {
            if let Ok(v) = std::env::var(key) {
                pip_env.push(format!("{key}={}", shell_quote(&v)));
            }
        }
    }
    let labels = BTreeMap::from([
        ("swe-forge.kind".to_string(), "repo".to_string()),
        ("swe-forge.seed".to_string(), repo.name.clone()),
        ("swe-forge.commit".to_string(), repo.commit.clone()),
        (
            "swe-forge.language".to_string(),
            repo.profile.language.name().to_string(),
        ),
        ("swe-forge.base".to_string(), base.id.clone()),
        (
            "swe-forge.pip-source".to_string(),
            source.name().to_string(),
        ),
    ]);
    let dockerfile = render_dockerfile(
        template,
        repo,
        &base.tag,
        ca_bundle.is_some() || wheelhouse.is_some(),
        &format!("export {} && ", pip_env.join(" ")),
        &labels,
    )?;
    ctx.add_file("Dockerfile", dockerfile.as_bytes(), 0o644)
        .map_err(io_err("making the build context"))?;
    ctx.add_checkout(&repo.checkout, "testbed")
        .map_err(io_err(format!("adding {}", repo.checkout.display())))?;
    build_image(client, tag, ctx.finish()?, progress)
}

/// Render the repository template.
pub fn render_dockerfile(
    template: &str,
    repo: &Repo,
    base: &str,
    pip_files: bool,
    pip_env: &str,
    labels: &BTreeMap<String, String>,
) -> Result<String, ImageError> {
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_filter("json", |v: String| {
        serde_json::to_string(&v).unwrap_or_else(|_| "\"\"".to_string())
    });
    env.add_filter("sh", |v: String| shell_quote(&v));
    let python_path: Vec<String> = repo
        .profile
        .python_path
        .iter()
        .map(|p| {
            let p = p.trim_matches('/');
            if p.is_empty() || p == "." {
                "/testbed".to_string()
            } else {
                format!("/testbed/{p}")
            }
        })
        .collect();
    // The throwaway copy's import roots, where the installed copies came from.
    let strip_roots: Vec<String> = repo
        .profile
        .python_path
        .iter()
        .map(|p| p.trim_matches('/'))
        .filter(|p| !p.is_empty() && *p != ".")
        .map(|p| shell_quote(&format!("/tmp/swe-forge/src/{p}")))
        .chain(["/tmp/swe-forge/src".to_string()])
        .collect();
    env.render_str(
        template,
        minijinja::context! {
            base => base,
            pip_files => pip_files,
            pip_env => pip_env,
            labels => labels,
            test_tools => PYTHON_TEST_TOOLS,
            install_command => repo.profile.install_command.clone().unwrap_or_default(),
            user => TEST_USER,
            uid => TEST_UID,
            python_path => python_path.join(":"),
            strip_script => crate::sandbox::task_image::STRIP_SCRIPT,
            strip_roots => strip_roots.join(" "),
        },
    )
    .map_err(|e| ImageError::Build {
        tag: base.to_string(),
        detail: format!("rendering the Dockerfile template: {e}"),
    })
}

/// The host's CA bundle, so that a build container trusts what the host trusts (a proxy that
/// re-signs TLS, a private index): `SWE_FORGE_CA_BUNDLE`, `PIP_CERT`, `SSL_CERT_FILE`,
/// `REQUESTS_CA_BUNDLE`, else the system bundle.
fn host_ca_bundle() -> Option<Vec<u8>> {
    let mut candidates: Vec<PathBuf> = [
        "SWE_FORGE_CA_BUNDLE",
        "PIP_CERT",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
    ]
    .iter()
    .filter_map(std::env::var_os)
    .map(PathBuf::from)
    .collect();
    candidates.push(PathBuf::from("/etc/ssl/certs/ca-certificates.crt"));
    candidates.into_iter().find_map(|p| {
        fs::read(p)
            .ok()
            .filter(|b| b.starts_with(b"-----BEGIN") || b.windows(11).any(|w| w == b"-----BEGIN "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_names_are_valid_for_docker() {
        assert_eq!(repo_image_name("pyshelf"), "pyshelf");
        assert_eq!(repo_image_name("My_Lib.v2"), "my-lib-v2");
        assert_eq!(repo_image_name("__"), "repo");
    }

    fn sample_repo(install: Option<&str>) -> Repo {
        let seed: crate::seed::Seed =
            serde_yaml::from_str("name: demo\nsource: demo\nlanguage: python\n").unwrap();
        Repo {
            name: "demo".into(),
            seed,
            source: "demo".into(),
            commit: "a".repeat(40),
            mirror: PathBuf::from("/nonexistent"),
            checkout: PathBuf::from("/nonexistent"),
            profile: crate::repo::Profile {
                language: Language::Python,
                build_system: "setuptools".into(),
                test_framework: "pytest".into(),
                source_files: vec![],
                test_files: vec![],
                install_command: install.map(str::to_string),
                python_path: vec!["src".into()],
                packages: vec![],
                packages_reason: String::new(),
            },
        }
    }

    #[test]
    fn renders_the_python_template() {
        let repo = sample_repo(Some("python -m pip install '.[test]'\necho done"));
        let labels = BTreeMap::from([("swe-forge.seed".to_string(), "de\"mo".to_string())]);
        let text = render_dockerfile(
            PYTHON_TEMPLATE,
            &repo,
            "swe-forge/python-base:x",
            false,
            "export A=1 && ",
            &labels,
        )
        .unwrap();
        assert!(
            text.starts_with("FROM swe-forge/python-base:x AS deps\n"),
            "{text}"
        );
        assert!(!text.contains("COPY pip/"), "{text}");
        assert!(text.contains("PYTHONPATH=\"/testbed/src\""), "{text}");
        assert!(text.contains("LABEL swe-forge.seed=\"de\\\"mo\""), "{text}");
        // The install command survives as one JSON string, newline included.
        let run = text
            .lines()
            .find(|l| l.contains("/tmp/swe-forge/src &&"))
            .unwrap();
        let argv: Vec<String> = serde_json::from_str(run.trim_start_matches("RUN ")).unwrap();
        assert_eq!(argv[0], "bash");
        assert!(
            argv[2].starts_with("export A=1 && cd /tmp/swe-forge/src"),
            "{}",
            argv[2]
        );
        assert!(
            argv[2].contains("bash -c 'python -m pip install '\\''.[test]'\\''\necho done' && "),
            "{}",
            argv[2]
        );
        // Then the installed copies of the repository's files leave the venv.
        assert!(
            argv[2].ends_with(" /tmp/swe-forge/src/src /tmp/swe-forge/src"),
            "{}",
            argv[2]
        );
        // Few instructions: each is a layer commit.
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 9, "{instructions} instructions:\n{text}");
        let none =
            render_dockerfile(PYTHON_TEMPLATE, &sample_repo(None), "b", true, "", &labels).unwrap();
        assert!(none.contains("COPY pip/ /tmp/swe-forge/pip/"), "{none}");
        assert!(!none.contains("/tmp/swe-forge/src &&"), "{none}");
    }

    fn sample_java_repo(build_system: &str) -> Repo {
        let mut repo = sample_repo(None);
        repo.name = "javashelf".into();
        repo.profile.language = Language::Java;
        repo.profile.build_system = build_system.into();
        repo.profile.test_framework = "junit".into();
        repo.profile.python_path = vec![];
        repo
    }

    #[test]
    fn renders_the_java_template() {
        let repo = sample_java_repo("maven");
        let labels = BTreeMap::from([
            ("swe-forge.kind".to_string(), "repo".to_string()),
            ("swe-forge.language".to_string(), "java".to_string()),
        ]);
        let text = render_java_dockerfile(&repo, "swe-forge/java-base:x", &labels).unwrap();
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
            text.contains("LABEL swe-forge.kind=\"repo\" swe-forge.language=\"java\""),
            "{text}"
        );
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 10, "{instructions} instructions:\n{text}");
        let gradle = sample_java_repo("gradle");
        let err = render_java_dockerfile(&gradle, "b", &labels).unwrap_err();
        assert!(err.to_string().contains("Maven only"), "{err}");
        assert!(repo_tag(&gradle, "sha256:1").is_err());
    }

    #[test]
    fn java_repo_tag_depends_on_what_the_image_holds() {
        let a = sample_java_repo("maven");
        let t = repo_tag(&a, "sha256:1").unwrap();
        assert!(t.starts_with("swe-forge/javashelf:"), "{t}");
        assert_eq!(t, repo_tag(&a, "sha256:1").unwrap());
        assert_ne!(t, repo_tag(&a, "sha256:2").unwrap());
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, "sha256:1").unwrap());
        let mut py = a.clone();
        py.profile.language = Language::Python;
        assert_ne!(t, repo_tag(&py, "sha256:1").unwrap());
    }

    #[test]
    fn repo_tag_depends_on_what_the_image_holds() {
        let a = sample_repo(Some("make deps"));
        let t = repo_tag(&a, "sha256:1").unwrap();
        assert!(t.starts_with("swe-forge/demo:"), "{t}");
        assert_eq!(t, repo_tag(&a, "sha256:1").unwrap());
        assert_ne!(t, repo_tag(&a, "sha256:2").unwrap());
        let mut b = a.clone();
        b.commit = "b".repeat(40);
        assert_ne!(t, repo_tag(&b, "sha256:1").unwrap());
        let mut c = a.clone();
        c.profile.install_command = None;
        assert_ne!(t, repo_tag(&c, "sha256:1").unwrap());
    }
}
