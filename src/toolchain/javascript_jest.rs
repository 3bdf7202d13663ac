//! JavaScript and TypeScript tested with jest: the jest runner (in band, JSON report, per-test
//! coverage from istanbul's counters), `file.test.js::<full name>` ids, screening without
//! coverage by the test files named after the mutated module, no test synthesis; and the
//! environments: the node base image (Debian's node, jest, ts-jest, mocha, TypeScript and npm:
//! offline, no npm registry needed), the repository image (`dockerfiles/node.Dockerfile`: the
//! project's dependencies checked against Debian's node packages, `npm install` where a
//! registry answers, else the seed is rejected naming what is missing), the task image's
//! layer, and the host's node and jest for the local sandbox.

use super::{Harness, HarnessRun, RunnerSpec, Toolchain, ToolchainId, Unsupported};
use crate::baseline::Baseline;
use crate::lang::Language;
use crate::repo::{Profile, Repo};
use crate::runner::jest::{self, Jest};
use crate::runner::TestRunner;
use crate::sandbox::image::TEST_UID;
use crate::sandbox::recipe::{
    BaseRecipe, ContextFile, EnvDir, EnvRecipe, HashPart, ImageRecipe, LocalRecipe, Requirement,
    SetupStep, TaskLayer, Variant, VersionProbe,
};
use crate::sandbox::{shell_quote, SandboxKind, Worker};
use std::collections::{BTreeMap, BTreeSet};

/// What every node container needs besides node: python3 runs the agent, git the resets.
pub const NODE_SYSTEM_PACKAGES: &[&str] =
    &["python3", "git", "ca-certificates", "coreutils", "procps"];
/// Node, the test frameworks Debian packages (offline: no npm registry is needed for them),
/// TypeScript's compiler and ts-jest. npm (with its 11,000 files) is not in it: a repository
/// image whose project needs packages Debian lacks installs it with apt, where the network
/// answers, and then the packages with it.
pub const NODE_TOOLCHAIN_PACKAGES: &[&str] =
    &["nodejs", "jest", "ts-jest", "mocha", "node-typescript"];

/// The node base image.
pub const BASE: BaseRecipe = BaseRecipe {
    name: "node",
    packages: NODE_SYSTEM_PACKAGES,
    later_packages: NODE_TOOLCHAIN_PACKAGES,
    version_label: "node",
    version_probe: VersionProbe::DpkgPackage("nodejs"),
};

/// The per-repository template.
pub const NODE_TEMPLATE: &str = include_str!("../../dockerfiles/node.Dockerfile");
/// Lists the dependencies of package.json that cannot be loaded (exit 3 when any).
pub const DEPS_CHECK_JS: &str = include_str!("../../dockerfiles/node/deps-check.js");
/// A harness's verdict on a jest run: prints `[PASSED] <id>` / `[FAILED] <id>` lines
/// (SWE-bench's `parse_log_jest_json`) and exits 0 only when every graded test passed.
pub const JEST_VERDICT_JS: &str = include_str!("../../dockerfiles/node/jest-verdict.js");
/// jest's cache directory in a repository image (owned by the test user).
pub const JEST_CACHE: &str = "/var/cache/swe-forge/jest";
/// Debian's node packages (node finds them without `node_modules`; jest's resolver through
/// `/node_modules` in the images, `NODE_PATH` on the host).
pub const DEBIAN_NODE: &str = "/usr/share/nodejs";
/// Where a repository image keeps what `npm install` fetched (on NODE_PATH).
pub const NODE_INSTALL_DIR: &str = "/opt/swe-forge/node";

/// JavaScript or TypeScript with jest.
#[derive(Clone, Copy, Debug)]
pub struct JavascriptJest {
    id: ToolchainId,
    language: Language,
}

impl JavascriptJest {
    pub const JAVASCRIPT: JavascriptJest = JavascriptJest {
        id: ToolchainId::JavascriptJest,
        language: Language::JavaScript,
    };
    pub const TYPESCRIPT: JavascriptJest = JavascriptJest {
        id: ToolchainId::TypescriptJest,
        language: Language::TypeScript,
    };

    /// jest for `spec`.
    pub fn jest(spec: &RunnerSpec) -> Jest {
        let mut j = Jest::new();
        if let Some(cmd) = &spec.test_command {
            j.command = cmd.clone();
        }
        j.cache_dir = Some(match spec.sandbox {
            SandboxKind::Docker => JEST_CACHE.to_string(),
            // Outside the worker's scratch directory, which is emptied between runs.
            SandboxKind::Local => spec.cache.join("jest-cache").display().to_string(),
        });
        j.log_dir = spec.log_dir.clone();
        if !spec.known_tests.is_empty() {
            j = j.with_tests_per_file(&spec.known_tests);
        }
        j
    }
}

/// `lib/seats.js` → `seats`; `src/Seat-Map.test.ts` → `seat-map.test`.
fn stem(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = match file.rsplit_once('.') {
        Some((s, _)) => s,
        None => file,
    };
    stem.to_ascii_lowercase()
}

/// The repository image: the checkout, its dependencies met from Debian's node packages or
/// installed with npm where a registry answers.
pub fn image_recipe(repo: &Repo) -> ImageRecipe {
    ImageRecipe {
        base: BASE,
        template_name: "dockerfiles/node.Dockerfile",
        template: NODE_TEMPLATE,
        values: BTreeMap::from([
            ("seed".to_string(), repo.name.clone().into()),
            ("jest_cache".to_string(), JEST_CACHE.into()),
        ]),
        files: vec![ContextFile::text("node/deps-check.js", DEPS_CHECK_JS)],
        hash: vec![
            HashPart::Text(NODE_TEMPLATE.to_string()),
            HashPart::Text(DEPS_CHECK_JS.to_string()),
            HashPart::BaseId,
            HashPart::Commit,
        ],
        labels: BTreeMap::from([("swe-forge.build-system".to_string(), "npm".to_string())]),
        variant_label: None,
        variants: vec![Variant {
            name: "debian".into(),
            description: String::new(),
            values: BTreeMap::new(),
            host_dir: None,
        }],
        description: "Debian's node packages, npm where a registry answers".into(),
    }
}

/// The local sandbox: the host's node and jest, and the project's dependencies among the
/// host's node packages (checked once per commit, in a copy of the checkout).
pub fn local_recipe(repo: &Repo) -> LocalRecipe {
    let hint = "JavaScript needs node and jest on this host for the local sandbox (Debian's \
                `nodejs` and `jest` packages), or use --sandbox docker";
    LocalRecipe {
        requires: vec![
            Requirement {
                argv: vec!["node".into(), "--version".into()],
                hint: hint.into(),
            },
            Requirement {
                argv: vec!["jest".into(), "--version".into()],
                hint: hint.into(),
            },
        ],
        env_dir: Some(EnvDir {
            key: vec![repo.commit.clone(), DEPS_CHECK_JS.to_string()],
            key_commands: vec![vec!["node".into(), "--version".into()]],
            steps: vec![SetupStep {
                what: "checking that the project's dependencies load from this host's node \
                       packages"
                    .into(),
                argv: vec!["node".into(), "-e".into(), DEPS_CHECK_JS.into()],
                env: Vec::new(),
                in_copy: true,
            }],
        }),
        path_prefix: Vec::new(),
        // jest's resolver (presets, transforms such as ts-jest) does not search node's
        // global directories; NODE_PATH it does.
        vars: vec![("NODE_PATH".into(), DEBIAN_NODE.into())],
    }
}

impl Toolchain for JavascriptJest {
    fn id(&self) -> ToolchainId {
        self.id
    }

    fn language(&self) -> Language {
        self.language
    }

    fn accepts(&self, profile: &Profile) -> Result<(), Unsupported> {
        if profile.build_system != "npm" {
            return Err(Unsupported(format!(
                "swe-forge tests {} projects that have a package.json, and this one has none",
                profile.language.name()
            )));
        }
        match profile.test_framework.as_str() {
            "jest" => Ok(()),
            "" => Err(Unsupported(
                "no test framework found in package.json (its `test` script or its \
                 devDependencies): swe-forge tests JavaScript with jest"
                    .to_string(),
            )),
            other => Err(Unsupported(format!(
                "swe-forge tests JavaScript with jest, and this project's test framework is \
                 `{other}`"
            ))),
        }
    }

    fn runner(&self, spec: &RunnerSpec) -> Box<dyn TestRunner> {
        Box::new(Self::jest(spec))
    }

    fn test_command(&self, spec: &RunnerSpec) -> String {
        format!("{} --ci --runInBand", Self::jest(spec).command)
    }

    fn resident(
        &self,
        _spec: &RunnerSpec,
        _worker: &mut dyn Worker,
        _baseline: &Baseline,
    ) -> Result<Box<dyn TestRunner>, String> {
        Err("jest has no resident runner".to_string())
    }

    fn test_file(&self, id: &str, _test_files: &[String]) -> Option<String> {
        jest::test_file(id).map(str::to_string)
    }

    fn synthesizes_tests(&self) -> bool {
        false
    }

    /// The tests of the test files named after the module (`test/seats.test.js` and
    /// `__tests__/seats.spec.ts` for `lib/seats.js`).
    fn screening_fallback(&self, file: &str, stable: &BTreeSet<String>) -> Option<Vec<String>> {
        let module = stem(file);
        let same: Vec<String> = stable
            .iter()
            .filter(|id| {
                jest::test_file(id).is_some_and(|f| {
                    let s = stem(f);
                    s == module
                        || s.strip_suffix(".test")
                            .or_else(|| s.strip_suffix(".spec"))
                            .is_some_and(|s| s == module)
                })
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

    fn task_layer(&self) -> TaskLayer {
        TaskLayer {
            copy_paths: vec![NODE_INSTALL_DIR.to_string()],
            prepare: format!(
                "install -d -o {TEST_UID} -g {TEST_UID} {JEST_CACHE} && ln -sfn {DEBIAN_NODE} /node_modules"
            ),
        }
    }

    /// `parse_log_jest_json` reads the rest of a `[PASSED] ` line: spaces are fine; a line
    /// break or another control character is not, nor an id without its file.
    fn harness_readable(&self, id: &str) -> bool {
        jest::test_file(id).is_some_and(|f| !f.is_empty())
            && !id.chars().any(|c| c.is_control())
            && id.trim() == id
    }

    /// jest in band on the graded tests' files with its JSON report, then
    /// `dockerfiles/node/jest-verdict.js` on the report: `[PASSED] <id>` lines for SWE-bench's
    /// `parse_log_jest_json`, and exit 0 only when every graded test passed.
    fn harness_run(
        &self,
        _harness: Harness,
        test_command: &str,
        graded: &[String],
        log_dir: &str,
    ) -> Result<HarnessRun, String> {
        let command = match test_command.trim() {
            "" => "jest --ci --runInBand",
            c => c,
        };
        let files: BTreeSet<&str> = graded.iter().filter_map(|id| jest::test_file(id)).collect();
        let verdict = format!("{log_dir}/jest-verdict.js");
        let report = format!("{log_dir}/jest-report.json");
        Ok(HarnessRun {
            setup: format!(
                "mkdir -p {}\n{}",
                shell_quote(log_dir),
                crate::runner::maven::heredoc(&shell_quote(&verdict), JEST_VERDICT_JS)
            ),
            command: format!(
                "{command} --json --outputFile={} --runTestsByPath {} >&2; node {} {} {}",
                shell_quote(&report),
                files
                    .iter()
                    .map(|f| shell_quote(f))
                    .collect::<Vec<_>>()
                    .join(" "),
                shell_quote(&verdict),
                shell_quote(&report),
                graded
                    .iter()
                    .map(|t| shell_quote(t))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            log_parser: "parse_log_jest_json",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(build_system: &str, framework: &str) -> Profile {
        Profile {
            language: Language::JavaScript,
            build_system: build_system.into(),
            test_framework: framework.into(),
            source_files: vec![],
            test_files: vec![],
            install_command: None,
            python_path: vec![],
            packages: vec![],
            packages_reason: String::new(),
        }
    }

    #[test]
    fn accepts_jest_projects_with_a_package_json() {
        let t = JavascriptJest::JAVASCRIPT;
        assert!(t.accepts(&profile("npm", "jest")).is_ok());
        let mocha = t.accepts(&profile("npm", "mocha")).unwrap_err();
        assert!(mocha.0.contains("`mocha`"), "{mocha}");
        assert!(t.accepts(&profile("none", "jest")).is_err());
    }

    #[test]
    fn screening_falls_back_to_the_module_s_test_files() {
        let stable: BTreeSet<String> = [
            "test/seats.test.js::parses A12",
            "test/money.test.js::cents",
            "__tests__/seats.spec.js::adjacent",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = JavascriptJest::JAVASCRIPT;
        assert_eq!(
            t.screening_fallback("lib/seats.js", &stable).unwrap(),
            vec![
                "__tests__/seats.spec.js::adjacent".to_string(),
                "test/seats.test.js::parses A12".to_string()
            ]
        );
        assert_eq!(t.screening_fallback("lib/other.js", &stable), None);
    }

    #[test]
    fn the_runner_keeps_its_cache_outside_the_worktree() {
        let spec = RunnerSpec::new(SandboxKind::Docker, "/cache");
        assert_eq!(
            JavascriptJest::jest(&spec).cache_dir.as_deref(),
            Some(JEST_CACHE)
        );
        let spec = RunnerSpec::new(SandboxKind::Local, "/cache");
        assert_eq!(
            JavascriptJest::jest(&spec).cache_dir.as_deref(),
            Some("/cache/jest-cache")
        );
        assert_eq!(
            JavascriptJest::JAVASCRIPT.test_command(&spec),
            "jest --ci --runInBand"
        );
    }

    #[test]
    fn the_base_image_is_debian_s_node_with_its_test_frameworks() {
        let all = BASE.all_packages();
        for p in ["python3", "git", "nodejs", "jest", "ts-jest"] {
            assert!(all.contains(&p), "{p}");
        }
        assert!(!all.contains(&"npm"));
    }
}
