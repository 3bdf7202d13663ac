//! Python tested with pytest: the fresh and the resident pytest runner, `file.py::Class::test`
//! ids, test synthesis, and the environments: the base image's packages, the repository
//! image (`dockerfiles/python.Dockerfile`: a virtualenv with the test tools and the project's
//! dependencies, packages from the index or else from a wheelhouse downloaded on the host),
//! the task image's layer (the virtualenv) and the local sandbox's virtualenv.

use super::{Harness, HarnessRun, RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::grading::Grading;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::pytest::{Pytest, GRADING_OPTIONS};
use crate::runner::TestRunner;
use crate::sandbox::recipe::{
    BaseRecipe, EnvDir, EnvRecipe, HashPart, ImageRecipe, LocalRecipe, SetupStep, TaskLayer,
    Variant, VersionProbe,
};
use crate::sandbox::{shell_quote, Worker};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Test tools installed into every environment next to the project's dependencies.
/// Hypothesis and CrossHair propose inputs for test synthesis (src/synth/search.py,
/// src/synth/crosshair.py); the tests swe-forge writes use neither.
pub const PYTHON_TEST_TOOLS: &[&str] = &[
    "pytest",
    "pytest-cov",
    "coverage",
    "hypothesis",
    "crosshair-tool",
];

/// Run once in a new environment, after everything is installed: pytest in an empty
/// directory, with bytecode writing on, so that the assertion rewriting it applies to every
/// installed pytest plugin's package is cached beside it (`__pycache__/*-pytest-*.pyc`, which
/// pytest reads even where runs may not write). Test runs have `PYTHONDONTWRITEBYTECODE=1`, and
/// without this cache every pytest process rewrote the whole Hypothesis package (its plugin
/// imports it at the end of each session): 0.78 s against 0.35 s for a run of humanize's
/// tests. Never fails the set-up.
pub fn rewrite_warm_up(venv: &str) -> String {
    format!(
        "(d=$(mktemp -d) && cd \"$d\" && env -u PYTHONDONTWRITEBYTECODE {venv}/bin/python -m \
         pytest --collect-only -q -p no:cacheprovider . >/dev/null 2>&1; cd / && rm -rf \"$d\"; \
         true)"
    )
}

/// Packages of the Python base image (on top of debootstrap's minbase).
pub const PYTHON_PACKAGES: &[&str] = &[
    "python3",
    "python3-venv",
    "git",
    "ca-certificates",
    "coreutils",
    "procps",
];

/// The Python base image.
pub const BASE: BaseRecipe = BaseRecipe {
    name: "python",
    packages: PYTHON_PACKAGES,
    later_packages: &[],
    version_label: "python",
    version_probe: VersionProbe::NumberedBinary {
        prefix: "usr/bin/python3.",
        print_prefix: "3.",
    },
};

/// The per-repository template.
pub const PYTHON_TEMPLATE: &str = include_str!("../../dockerfiles/python.Dockerfile");
/// Removes the installed copies of the repository's own files from the virtualenv.
pub const STRIP_SCRIPT: &str = include_str!("../../dockerfiles/strip-installed.py");

/// The repository image's virtualenv.
const VENV: &str = "/opt/venv";
/// Where the wheelhouse is in the build context (and, under /tmp/swe-forge, in the build).
const WHEELHOUSE: &str = "host/wheelhouse";

/// Python with pytest.
#[derive(Clone, Copy, Debug)]
pub struct PythonPytest;

impl PythonPytest {
    /// pytest for `spec` (fresh processes).
    pub fn pytest(spec: &RunnerSpec) -> Pytest {
        let mut p = Pytest::new(
            spec.test_command.as_deref(),
            spec.test_files.clone(),
            spec.source_roots.clone(),
        );
        p.log_dir = spec.log_dir.clone();
        p.test_budgets = spec.test_budgets.clone();
        if !spec.known_tests.is_empty() {
            p = p.with_tests_per_file(&spec.known_tests);
        }
        p
    }
}

impl Toolchain for PythonPytest {
    fn id(&self) -> ToolchainId {
        ToolchainId::PythonPytest
    }

    fn language(&self) -> Language {
        Language::Python
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        match profile.test_framework.as_str() {
            "pytest" => Ok(()),
            other => Err(Unsupported(format!(
                "swe-forge tests Python projects with pytest, and this one's test framework is \
                 `{other}`"
            ))),
        }
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::pytest(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        Self::pytest(spec).base_command
    }

    fn resident(
        &self,
        spec: &RunnerSpec,
        worker: &mut dyn Worker,
        baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        let p = Self::pytest(spec).qualify_resident(worker, baseline)?;
        tracing::info!(
            warm = p.resident.as_ref().map_or(0, Vec::len),
            cpu_offset_s = p.resident_cpu_offset,
            "resident runner"
        );
        Ok(Box::new(p))
    }

    fn test_file(&self, id: &str, _test_files: &[String]) -> Option<String> {
        id.split_once("::").map(|(file, _)| file.to_string())
    }

    fn synthesizes_tests(&self) -> bool {
        true
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

    fn task_layer(&self) -> TaskLayer {
        TaskLayer {
            copy_paths: vec![VENV.to_string()],
            prepare: String::new(),
        }
    }

    /// pytest on the files in order, with [`GRADING_OPTIONS`] and the configuration pytest
    /// finds at `root` named explicitly (`-c`), so that no other file can take its place.
    fn grading(&self, root: &Path, test_command: &str, files: Vec<String>) -> Grading {
        let base = match test_command.trim() {
            "" => "python -m pytest",
            c => c,
        };
        let config = crate::grading::pytest_config(root);
        let mut options: Vec<String> = GRADING_OPTIONS.iter().map(|s| s.to_string()).collect();
        if let Some(c) = &config {
            options.push("-c".into());
            options.push(c.path.clone());
        }
        Grading::new(base, options, files, config)
    }

    /// pytest takes node ids (`tests/test_x.py::TestY::test_z[1]`) as arguments.
    fn grades_tests_by_name(&self) -> bool {
        true
    }

    /// pytest's configuration files, the modules it loads on its own (`conftest.py`,
    /// `sitecustomize.py`, `usercustomize.py`, `.pth` files, a `pytest.py` or `_pytest` that
    /// would shadow pytest), packaging files that set options, and test folders and files.
    fn protected(&self) -> Vec<String> {
        PROTECTED.iter().map(|s| s.to_string()).collect()
    }

    /// Two module-level tests appended to the command's first test module (else a new one
    /// beside its first file): `test_<nonce>_f` raises, `test_<nonce>_p` passes.
    fn canary(
        &self,
        grading: &Grading,
        nonce: &str,
        _read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<crate::canary::Canary> {
        let is_test_module = |f: &str| {
            let base = f.rsplit('/').next().unwrap_or(f);
            base.ends_with(".py") && (base.starts_with("test_") || base.ends_with("_test.py"))
        };
        let (file, new_file) = match grading.files.iter().find(|f| is_test_module(f)) {
            Some(f) => (f.clone(), false),
            None => {
                let first = grading.files.first()?;
                let dir = first
                    .rsplit_once('/')
                    .map(|(d, _)| format!("{d}/"))
                    .unwrap_or_default();
                (format!("{dir}test_swe_forge_{nonce}.py"), true)
            }
        };
        let text = format!(
            "\n\ndef test_{nonce}_f():\n    raise AssertionError(\"{nonce}\")\n\n\n\
             def test_{nonce}_p():\n    assert \"{nonce}\".isalnum()\n"
        );
        Some(crate::canary::Canary {
            must_fail: format!("{file}::test_{nonce}_f"),
            must_pass: format!("{file}::test_{nonce}_p"),
            file,
            new_file,
            text,
            whole: None,
        })
    }

    /// The grading command, with only options that change what is reported, and swe-forge's
    /// verdict plugin, which records each test's outcome as pytest reports it. Hidden tests
    /// ([`Toolchain::canary`]) named at run time (`$N`, from the container's random source)
    /// are appended to a graded test module first. SWE-bench: `-rA` prints the `PASSED <id>`
    /// lines `parse_log_pytest` reads; when the hidden tests show a tampered runner, every
    /// graded test is printed FAILED after them (the parser keeps the last line of a test).
    /// Harbor: the verdict is read per graded test from the plugin's lines (a missing test
    /// failed; a tampered runner fails all), never from pytest's exit status.
    fn harness_run(
        &self,
        harness: Harness,
        grading: &Grading,
        graded: &[String],
        log_dir: &str,
    ) -> Result<HarnessRun, String> {
        let q = shell_quote;
        let plugin = format!("{log_dir}/{VERDICT_MODULE}.py");
        let results = format!("{log_dir}/results.tsv");
        let mut setup = format!(
            "mkdir -p {}\n{}: > {}\n",
            q(log_dir),
            crate::runner::maven::heredoc(&q(&plugin), VERDICT_PY),
            q(&results)
        );
        // The hidden checks, when a graded test module can take them.
        const PLACEHOLDER: &str = "SWEFORGENONCE";
        let canary = self
            .canary(grading, PLACEHOLDER, &mut |_| None)
            .filter(|c| !c.new_file);
        let mut canary_args = String::new();
        if let Some(c) = &canary {
            setup.push_str(&format!(
                "N=$(python -c 'import secrets; print(secrets.token_hex(6))')\n\
                 cat >> {} <<SWE_FORGE_CANARY_EOF\n{}SWE_FORGE_CANARY_EOF\n",
                q(&c.file),
                c.text.replace(PLACEHOLDER, "${N}")
            ));
            let id = |s: &str| format!("\"{}\"", s.replace(PLACEHOLDER, "${N}"));
            canary_args = format!(" {} {}", id(&c.must_fail), id(&c.must_pass));
        }
        let mut report = vec!["-rA".to_string(), "--color=no".to_string()];
        report.push("-p".into());
        report.push(VERDICT_MODULE.into());
        // A command that names tests names the hidden ones too.
        let pytest = format!(
            "SWE_FORGE_RESULTS={} PYTHONPATH={}${{PYTHONPATH:+:$PYTHONPATH}} {}{}",
            q(&results),
            q(log_dir),
            grading.line_with(&report),
            if grading.tests.is_empty() {
                ""
            } else {
                canary_args.as_str()
            }
        );
        Ok(match harness {
            Harness::SweBench => {
                // The output is printed in one stream, in order, with no trace of the shell's
                // own on stderr from the run to the end (the harness traces every command, and
                // merges stdout with stderr as the two arrive, not as they were written: a
                // trace line landed inside webcolors' and semver's `PASSED <id>` lines and cut
                // them), and a second passes before the end marker (lines printed just before
                // it could land after it, unread).
                let command = if canary.is_some() {
                    let log = q(&format!("{log_dir}/pytest.log"));
                    format!(
                        "{{ {pytest} > {log} 2>&1; status=$?; cat {log}; \
                         python {plugin_q} --failed {results_q}; \
                         python {plugin_q} --canary {results_q}{canary_args} || printf 'FAILED %s\\n' {}; \
                         sleep 1; }} 2>/dev/null; (exit $status)",
                        graded.iter().map(|t| q(t)).collect::<Vec<_>>().join(" "),
                        plugin_q = q(&plugin),
                        results_q = q(&results),
                    )
                } else {
                    pytest
                };
                HarnessRun {
                    setup,
                    command,
                    log_parser: "parse_log_pytest",
                }
            }
            Harness::Harbor => {
                let listed = format!("{log_dir}/graded.txt");
                let mut ids = graded.join("\n");
                ids.push('\n');
                setup.push_str(&crate::runner::maven::heredoc(&q(&listed), &ids));
                HarnessRun {
                    setup,
                    command: format!(
                        "{pytest} >&2; python {} {} {}{canary_args}",
                        q(&plugin),
                        q(&results),
                        q(&listed),
                    ),
                    log_parser: "parse_log_pytest",
                }
            }
        })
    }
}

/// See [`PythonPytest::protected`].
pub const PROTECTED: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "noxfile.py",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    "pytest.py",
    "_pytest",
    "pytest_*.py",
    "tests",
    "test",
    "testing",
    "test_*.py",
    "*_test.py",
];

/// The verdict plugin and script of harness runs (`src/runner/pytest_verdict.py`).
const VERDICT_PY: &str = include_str!("../runner/pytest_verdict.py");
const VERDICT_MODULE: &str = "swe_forge_verdict";

/// The repository image: the test tools and the project's dependencies in /opt/venv, the
/// installed copies of the repository's files removed from it, the repository at /testbed on
/// its import roots. Packages come from the index, else from a wheelhouse made on the host
/// (`SWE_FORGE_PIP_SOURCE=index|wheelhouse` forces one).
pub fn image_recipe(repo: &Repo) -> ImageRecipe {
    let install = repo.profile.install_command.clone().unwrap_or_default();
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
    let values = BTreeMap::from([
        (
            "test_tools".to_string(),
            serde_json::json!(PYTHON_TEST_TOOLS),
        ),
        ("install_command".to_string(), install.clone().into()),
        ("python_path".to_string(), python_path.join(":").into()),
        ("strip_script".to_string(), STRIP_SCRIPT.into()),
        ("strip_roots".to_string(), strip_roots.join(" ").into()),
        (
            "rewrite_warm_up".to_string(),
            rewrite_warm_up("/opt/venv").into(),
        ),
    ]);
    let common = [
        "PIP_DISABLE_PIP_VERSION_CHECK=1",
        "PIP_NO_CACHE_DIR=1",
        "PIP_ROOT_USER_ACTION=ignore",
        "PIP_PROGRESS_BAR=off",
    ];
    // A private index or proxy configured on the host applies in the build container too.
    let mut index_vars: Vec<String> = common.iter().map(|v| v.to_string()).collect();
    for key in ["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST"] {
        if let Ok(v) = std::env::var(key) {
            index_vars.push(format!("{key}={}", shell_quote(&v)));
        }
    }
    let mut wheel_vars: Vec<String> = common.iter().map(|v| v.to_string()).collect();
    wheel_vars.extend([
        "PIP_NO_INDEX=1".to_string(),
        format!("PIP_FIND_LINKS=/tmp/swe-forge/{WHEELHOUSE}"),
    ]);
    let index = Variant {
        name: "index".into(),
        description: "packages from the package index".into(),
        values: BTreeMap::from([
            ("pip_vars".to_string(), serde_json::json!(index_vars)),
            ("wheelhouse".to_string(), false.into()),
        ]),
        host_dir: None,
    };
    let wheel_repo = repo.clone();
    let wheelhouse = Variant {
        name: "wheelhouse".into(),
        description: "packages from the host's wheelhouse".into(),
        values: BTreeMap::from([
            ("pip_vars".to_string(), serde_json::json!(wheel_vars)),
            ("wheelhouse".to_string(), true.into()),
        ]),
        host_dir: Some((
            Arc::new(move |cache, tag, progress| {
                super::python_wheelhouse::host_wheelhouse(cache, &wheel_repo, tag, progress)
            }),
            WHEELHOUSE.to_string(),
        )),
    };
    let variants = match std::env::var("SWE_FORGE_PIP_SOURCE").as_deref() {
        Ok("index") => vec![index],
        Ok("wheelhouse") => vec![wheelhouse],
        _ => vec![index, wheelhouse],
    };
    ImageRecipe {
        base: BASE,
        template_name: "dockerfiles/python.Dockerfile",
        template: PYTHON_TEMPLATE,
        values,
        files: Vec::new(),
        hash: vec![
            HashPart::Text(PYTHON_TEMPLATE.to_string()),
            HashPart::Text(STRIP_SCRIPT.to_string()),
            HashPart::BaseId,
            HashPart::Commit,
            HashPart::Text(install),
            HashPart::Text(PYTHON_TEST_TOOLS.join(",")),
            HashPart::Text(repo.profile.python_path.join(":")),
        ],
        labels: BTreeMap::new(),
        variant_label: Some("pip-source".into()),
        variants,
        description: "packages from the package index".into(),
    }
}

/// The local sandbox's virtualenv (`SWE_FORGE_PYTHON` makes it, default `python3`): the test
/// tools, then the project's install command in a throwaway copy of the checkout; commands
/// run with it first on PATH and the repository's import roots on PYTHONPATH.
pub fn local_recipe(repo: &Repo) -> LocalRecipe {
    let python = std::env::var("SWE_FORGE_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let install = repo.profile.install_command.clone();
    let mut steps = vec![
        SetupStep {
            what: "python -m venv".into(),
            argv: vec![python.clone(), "-m".into(), "venv".into(), "{env}".into()],
            ..Default::default()
        },
        SetupStep {
            what: "installing the test tools".into(),
            argv: [
                "{env}/bin/python",
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(PYTHON_TEST_TOOLS.iter().map(|s| s.to_string()))
            .collect(),
            ..Default::default()
        },
    ];
    if let Some(install) = &install {
        steps.push(SetupStep {
            what: install.clone(),
            argv: vec!["bash".into(), "-c".into(), install.clone()],
            env: vec![
                ("PATH".into(), "{path}".into()),
                ("VIRTUAL_ENV".into(), "{env}".into()),
                ("PIP_DISABLE_PIP_VERSION_CHECK".into(), "1".into()),
            ],
            in_copy: true,
        });
    }
    steps.push(SetupStep {
        what: "caching pytest's rewritten plugin modules".into(),
        argv: vec!["bash".into(), "-c".into(), rewrite_warm_up("{env}")],
        ..Default::default()
    });
    let python_path: Vec<String> = repo
        .profile
        .python_path
        .iter()
        .map(|p| format!("{{root}}/{p}"))
        .collect();
    LocalRecipe {
        requires: Vec::new(),
        env_dir: Some(EnvDir {
            key: vec![
                repo.commit.clone(),
                install.unwrap_or_default(),
                PYTHON_TEST_TOOLS.join(","),
                rewrite_warm_up("{env}"),
            ],
            key_commands: vec![vec![python, "--version".into()]],
            steps,
        }),
        path_prefix: vec!["{env}/bin".into()],
        vars: vec![
            ("VIRTUAL_ENV".into(), "{env}".into()),
            ("PYTHONPATH".into(), python_path.join(":")),
        ],
        beside_root: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::image::{render_repo_dockerfile, repo_tag};

    fn sample_repo(install: Option<&str>) -> Repo {
        let mut repo = Repo::sample("demo", Language::Python, "setuptools", "pytest");
        repo.profile.install_command = install.map(str::to_string);
        repo.profile.python_path = vec!["src".into()];
        repo
    }

    fn render(recipe: &ImageRecipe, variant: usize, ca: bool) -> String {
        let labels = BTreeMap::from([("swe-forge.seed".to_string(), "de\"mo".to_string())]);
        render_repo_dockerfile(
            recipe,
            &recipe.variants[variant],
            "swe-forge/python-base:x",
            ca,
            &labels,
        )
        .unwrap()
    }

    #[test]
    fn renders_the_python_template() {
        let recipe = image_recipe(&sample_repo(Some(
            "python -m pip install '.[test]'\necho done",
        )));
        assert_eq!(recipe.variants[0].name, "index");
        let text = render(&recipe, 0, false);
        assert!(
            text.starts_with("FROM swe-forge/python-base:x AS deps\n"),
            "{text}"
        );
        assert!(!text.contains("COPY host/"), "{text}");
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
            argv[2].starts_with("export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1"),
            "{}",
            argv[2]
        );
        assert!(!argv[2].contains("PIP_CERT"), "{}", argv[2]);
        assert!(argv[2].contains(" && cd /tmp/swe-forge/src"), "{}", argv[2]);
        assert!(
            argv[2].contains("bash -c 'python -m pip install '\\''.[test]'\\''\necho done' && "),
            "{}",
            argv[2]
        );
        // Then the installed copies of the repository's files leave the venv, and pytest's
        // rewriting of the plugins is cached.
        assert!(
            argv[2].contains(" /tmp/swe-forge/src/src /tmp/swe-forge/src && "),
            "{}",
            argv[2]
        );
        assert!(
            argv[2].ends_with(&rewrite_warm_up("/opt/venv")),
            "{}",
            argv[2]
        );
        // Few instructions: each is a layer commit.
        let instructions = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .count();
        assert!(instructions <= 9, "{instructions} instructions:\n{text}");
    }

    #[test]
    fn the_wheelhouse_variant_and_the_ca_bundle_reach_pip() {
        let recipe = image_recipe(&sample_repo(None));
        let wheel = recipe
            .variants
            .iter()
            .position(|v| v.name == "wheelhouse")
            .unwrap();
        let text = render(&recipe, wheel, true);
        assert!(text.contains("COPY host/ /tmp/swe-forge/host/"), "{text}");
        assert!(
            text.contains("PIP_FIND_LINKS=/tmp/swe-forge/host/wheelhouse"),
            "{text}"
        );
        assert!(
            text.contains("PIP_CERT=/tmp/swe-forge/host/ca-bundle.pem"),
            "{text}"
        );
        assert!(!text.contains("/tmp/swe-forge/src &&"), "{text}");
        assert_eq!(
            recipe.variants[wheel]
                .host_dir
                .as_ref()
                .map(|(_, at)| at.as_str()),
            Some(WHEELHOUSE)
        );
    }

    #[test]
    fn repo_tag_depends_on_what_the_image_holds() {
        let a = sample_repo(Some("make deps"));
        let t = repo_tag(&a, &image_recipe(&a), "sha256:1");
        assert!(t.starts_with("swe-forge/demo:"), "{t}");
        assert_eq!(t, repo_tag(&a, &image_recipe(&a), "sha256:1"));
        assert_ne!(t, repo_tag(&a, &image_recipe(&a), "sha256:2"));
        let mut c = a.clone();
        c.profile.install_command = None;
        assert_ne!(t, repo_tag(&c, &image_recipe(&c), "sha256:1"));
    }

    #[test]
    fn the_base_image_holds_what_every_container_needs() {
        let all = BASE.all_packages();
        for p in [
            "python3",
            "git",
            "ca-certificates",
            "coreutils",
            "python3-venv",
        ] {
            assert!(all.contains(&p), "{p}");
        }
    }

    #[test]
    fn the_local_virtualenv_installs_in_a_copy_and_puts_the_roots_on_pythonpath() {
        let local = local_recipe(&sample_repo(Some("pip install .")));
        let dir = local.env_dir.unwrap();
        assert_eq!(dir.steps.len(), 4);
        assert!(dir.steps[2].in_copy);
        assert_eq!(dir.steps[2].argv, vec!["bash", "-c", "pip install ."]);
        // Last, pytest's rewriting of the plugins is cached (in the environment, not the copy).
        assert!(!dir.steps[3].in_copy);
        assert!(dir.steps[3].argv[2].contains("{env}/bin/python -m pytest --collect-only"));
        assert!(local
            .vars
            .contains(&("PYTHONPATH".to_string(), "{root}/src".to_string())));
        assert_eq!(local.path_prefix, vec!["{env}/bin"]);
    }
}
