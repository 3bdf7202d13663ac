//! What JavaScript's and TypeScript's toolchains (jest, mocha) share: the profile (the code the
//! package ships, not `node_modules/`, build outputs, docs, examples, scripts or tool
//! configuration; its `package.json`, the build system; the test framework it names) and the
//! environments: the node base image (Debian's node, jest, ts-jest, mocha and TypeScript:
//! offline, no npm registry needed), the repository image (`dockerfiles/node.Dockerfile`: the
//! project's dependencies checked against Debian's node packages, npm where the network
//! answers, else the seed is rejected naming what is missing), the task image's layer, the
//! host's node for the local sandbox, the harness verdict on a JSON report, and screening
//! without coverage by the test files named after the module.

use super::HarnessRun;
use crate::lang::Language;
use crate::repo::{Profile, Profiler, Repo};
use crate::sandbox::image::TEST_UID;
use crate::sandbox::recipe::{
    BaseRecipe, ContextFile, EnvDir, HashPart, ImageRecipe, LocalRecipe, Requirement, SetupStep,
    TaskLayer, Variant, VersionProbe,
};
use crate::sandbox::shell_quote;
use crate::seed::Seed;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
/// Makes the local sandbox's `node_modules` folder (Debian's packages, curated types).
pub const NODE_MODULES_JS: &str = include_str!("../../dockerfiles/node/node-modules.js");
/// A harness's verdict on a jest or mocha JSON report: prints `[PASSED] <id>` / `[FAILED] <id>`
/// lines (SWE-bench's `parse_log_jest_json`) and exits 0 only when every graded test passed.
pub const VERDICT_JS: &str = include_str!("../../dockerfiles/node/verdict.js");
/// jest's cache directory in a repository image (owned by the test user).
pub const JEST_CACHE: &str = "/var/cache/swe-forge/jest";
/// Debian's node packages (node finds them without `node_modules`; jest's resolver through
/// `/node_modules` in the images, `NODE_PATH` on the host).
pub const DEBIAN_NODE: &str = "/usr/share/nodejs";
/// Where a repository image keeps what `npm install` fetched (on NODE_PATH).
pub const NODE_INSTALL_DIR: &str = "/opt/swe-forge/node";
/// The file of the install directory that names the project's own package (a task image's
/// layer reads it: the task base has no /testbed yet).
pub const OWN_NAME_FILE: &str = "/opt/swe-forge/node/own-package-name";
/// Replaces Debian's copy of the project's own package (js-yaml is one of jest's
/// dependencies; or a package that another one needed pulled it in, so the install directory
/// holds one) with a link to /testbed, in a repository image and in a task image's layer:
/// that copy holds the fixed code. Whatever loads the package by name then loads the
/// repository's. One shell line; the package's name is in [`OWN_NAME_FILE`].
pub const OWN_COPY_SH: &str = "name=$(cat /opt/swe-forge/node/own-package-name 2>/dev/null || true); if [ -n \"$name\" ]; then for d in /usr/share/nodejs /usr/lib/nodejs /opt/swe-forge/node/node_modules; do if [ -e \"$d/$name\" ] && [ ! -L \"$d/$name\" ]; then rm -rf \"$d/$name\"; ln -s /testbed \"$d/$name\"; fi; done; fi";

/// `lib/seats.js` → `seats`; `src/Seat-Map.test.ts` → `seat-map.test`.
pub(crate) fn stem(path: &str) -> String {
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
            ("own_copy".to_string(), OWN_COPY_SH.into()),
        ]),
        files: vec![ContextFile::text("node/deps-check.js", DEPS_CHECK_JS)],
        hash: vec![
            HashPart::Text(NODE_TEMPLATE.to_string()),
            HashPart::Text(DEPS_CHECK_JS.to_string()),
            HashPart::Text(OWN_COPY_SH.to_string()),
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

/// The local sandbox: the host's node and `framework` (`jest`, `mocha`), and the project's
/// dependencies among the host's node packages (checked once per commit, in a copy of the
/// checkout).
pub fn local_recipe(repo: &Repo, framework: &str) -> LocalRecipe {
    let hint = format!(
        "JavaScript needs node and {framework} on this host for the local sandbox (Debian's \
         `nodejs` and `{framework}` packages), or use --sandbox docker"
    );
    let mut requires = vec![Requirement {
        argv: vec!["node".into(), "--version".into()],
        hint: hint.clone(),
    }];
    // node's own test runner needs nothing more.
    if framework != "node" {
        requires.push(Requirement {
            argv: vec![framework.into(), "--version".into()],
            hint,
        });
    }
    LocalRecipe {
        requires,
        env_dir: Some(EnvDir {
            key: vec![
                repo.commit.clone(),
                DEPS_CHECK_JS.to_string(),
                NODE_MODULES_JS.to_string(),
            ],
            key_commands: vec![vec!["node".into(), "--version".into()]],
            steps: vec![
                SetupStep {
                    what: "checking that the project's dependencies load from this host's node \
                           packages"
                        .into(),
                    argv: vec!["node".into(), "-e".into(), DEPS_CHECK_JS.into()],
                    env: Vec::new(),
                    in_copy: true,
                },
                SetupStep {
                    what: "linking this host's node packages into a node_modules folder".into(),
                    argv: vec![
                        "node".into(),
                        "-e".into(),
                        NODE_MODULES_JS.into(),
                        "node-modules.js".into(),
                        "{env}".into(),
                    ],
                    env: Vec::new(),
                    in_copy: true,
                },
            ],
        }),
        path_prefix: Vec::new(),
        // jest's resolver (presets, transforms such as ts-jest) does not search node's
        // global directories; NODE_PATH it does.
        vars: vec![("NODE_PATH".into(), DEBIAN_NODE.into())],
        // TypeScript ignores NODE_PATH: it finds packages and types in a node_modules folder
        // above the repository, as /node_modules in an image.
        beside_root: vec![("node_modules".into(), "{env}/node_modules".into())],
    }
}

/// Whether a node toolchain for `framework` tests the project, else why not.
pub fn accepts(profile: &Profile, framework: &str) -> Result<(), super::Unsupported> {
    if profile.build_system != "npm" {
        return Err(super::Unsupported(format!(
            "swe-forge tests {} projects that have a package.json, and this one has none",
            profile.language.name()
        )));
    }
    match profile.test_framework.as_str() {
        f if f == framework => Ok(()),
        "" => Err(super::Unsupported(
            "no test framework found in package.json (its `test` script or its \
             devDependencies): swe-forge tests JavaScript with jest, mocha or node's test \
             runner (`node --test`)"
                .to_string(),
        )),
        other => Err(super::Unsupported(format!(
            "the {framework} toolchain does not test this project: its test framework is \
             `{other}`"
        ))),
    }
}

/// What a task image takes from a node repository image: the npm install directory, jest's
/// cache directory and the link to Debian's packages.
pub fn task_layer() -> TaskLayer {
    TaskLayer {
        copy_paths: vec![NODE_INSTALL_DIR.to_string()],
        prepare: format!(
            "install -d -o {TEST_UID} -g {TEST_UID} {JEST_CACHE} && ln -sfn {DEBIAN_NODE} /node_modules && {{ {OWN_COPY_SH}; }}"
        ),
    }
}

/// Without coverage, the tests of the test files named after the module (`test/seats.test.js`
/// and `__tests__/seats.spec.ts` for `lib/seats.js`); ids are `<test file>::<name>`.
pub fn module_tests(file: &str, stable: &BTreeSet<String>) -> Option<Vec<String>> {
    let module = stem(file);
    let same: Vec<String> = stable
        .iter()
        .filter(|id| {
            id.split_once("::").is_some_and(|(f, _)| {
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

/// `parse_log_jest_json` reads the rest of a `[PASSED] ` line: spaces are fine; a line break or
/// another control character is not, nor an id without its file.
/// What no agent change may touch in a JavaScript or TypeScript project: the package
/// manifest and lockfiles, the test runners' configuration, installed packages, test folders.
pub const PROTECTED: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "jest.config.*",
    "jest.setup.*",
    ".mocharc*",
    "babel.config.*",
    ".babelrc*",
    "tsconfig*.json",
    ".npmrc",
    "node_modules",
    "test",
    "tests",
    "__tests__",
    "*.test.*",
    "*.spec.*",
];

pub fn harness_readable(id: &str) -> bool {
    id.split_once("::").is_some_and(|(f, _)| !f.is_empty())
        && !id.chars().any(|c| c.is_control())
        && id.trim() == id
}

/// A harness's run of a JSON-reporting framework: `run` (given the report's path; it writes it
/// and sends its own output to stderr), then `dockerfiles/node/verdict.js` on the report.
pub fn harness_run(run: impl Fn(&str) -> String, graded: &[String], log_dir: &str) -> HarnessRun {
    let verdict = format!("{log_dir}/verdict.js");
    let report = format!("{log_dir}/report.json");
    HarnessRun {
        setup: format!(
            "mkdir -p {}\n{}",
            shell_quote(log_dir),
            crate::runner::maven::heredoc(&shell_quote(&verdict), VERDICT_JS)
        ),
        command: format!(
            "{} >&2; node {} {} {}",
            run(&report),
            shell_quote(&verdict),
            shell_quote(&report),
            graded
                .iter()
                .map(|t| shell_quote(t))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        log_parser: "parse_log_jest_json",
    }
}

/// JavaScript's and TypeScript's profiler.
pub struct NodeProfiler;

/// The one instance.
pub const PROFILER: NodeProfiler = NodeProfiler;

impl Profiler for NodeProfiler {
    fn profile(
        &self,
        root: &Path,
        seed: &Seed,
        sources: Vec<String>,
        test_files: Vec<String>,
    ) -> Profile {
        let package_json = std::fs::read_to_string(root.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        let candidates: Vec<String> = sources
            .into_iter()
            .filter(|f| is_shipped_script(f))
            .collect();
        // npm's own list of what the package ships, where it names some of these sources (a
        // TypeScript project's `files` usually names its compiled output instead).
        let listed = package_json
            .as_ref()
            .filter(|_| seed.include.is_empty())
            .and_then(shipped_files);
        let (source_files, packages, reason) = match listed {
            Some(shipped) if candidates.iter().any(|f| shipped.contains(f)) => {
                let kept: Vec<String> = candidates
                    .into_iter()
                    .filter(|f| shipped.contains(f.as_str()))
                    .collect();
                let reason = format!(
                    "what package.json's `files`, `main` and `bin` ship: {}",
                    shipped.entries.join(", ")
                );
                (kept, shipped.entries, reason)
            }
            _ if !seed.include.is_empty() => (
                candidates,
                Vec::new(),
                "the seed's `include:` globs".to_string(),
            ),
            _ => (
                candidates,
                Vec::new(),
                "every script outside tests, dependencies, build outputs, documentation, \
                 examples, developer scripts and tool configuration (package.json has no \
                 `files` naming them)"
                    .to_string(),
            ),
        };
        tracing::info!(seed = %seed.name, "mutating {reason}");
        let mut p = node_profile(
            package_json.as_ref(),
            seed.language,
            source_files,
            test_files,
        );
        p.packages = packages;
        p.packages_reason = reason;
        p
    }

    fn test_file_rule(&self) -> &'static str {
        "a JavaScript or TypeScript test file is *.test.js, *.spec.ts, test-*.js and the like, \
         or a file under test/, tests/, __tests__/ or spec/"
    }
}

/// Folders of a JavaScript or TypeScript project that hold no shipped code: dependencies,
/// build outputs, documentation, examples, developer scripts and benchmarks.
const NODE_SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "dist",
    "build",
    "coverage",
    "docs",
    "doc",
    "examples",
    "example",
    "scripts",
    "tools",
    "benchmark",
    "benchmarks",
    "bench",
    "fixtures",
    "__fixtures__",
    "__mocks__",
    "__snapshots__",
];

/// What a `package.json` says the package ships: its `files` entries (paths, folders and
/// globs; `!` entries excluded), plus `main` and `bin`, which npm always packs. `None` when it
/// has no `files`.
struct Shipped {
    /// The entries, as written (for the import's message).
    entries: Vec<String>,
    include: globset::GlobSet,
    exclude: globset::GlobSet,
    always: Vec<String>,
}

impl Shipped {
    fn contains(&self, file: &str) -> bool {
        if self.always.iter().any(|a| a == file) {
            return true;
        }
        // An entry that names a folder ships everything under it.
        let mut prefixes = vec![file];
        let mut rest = file;
        while let Some((dir, _)) = rest.rsplit_once('/') {
            prefixes.push(dir);
            rest = dir;
        }
        prefixes.iter().any(|p| self.include.is_match(p))
            && !prefixes.iter().any(|p| self.exclude.is_match(p))
    }
}

fn shipped_files(package_json: &serde_json::Value) -> Option<Shipped> {
    let files = package_json["files"].as_array()?;
    let clean = |e: &str| {
        e.trim()
            .trim_start_matches("./")
            .trim_start_matches('/')
            .trim_end_matches('/')
            .to_string()
    };
    let mut include = globset::GlobSetBuilder::new();
    let mut exclude = globset::GlobSetBuilder::new();
    let mut entries = Vec::new();
    for e in files.iter().filter_map(|e| e.as_str()) {
        entries.push(e.to_string());
        let (set, pattern) = match e.strip_prefix('!') {
            Some(neg) => (&mut exclude, clean(neg)),
            None => (&mut include, clean(e)),
        };
        if pattern.is_empty() {
            continue;
        }
        if let Ok(g) = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
        {
            set.add(g);
        }
    }
    let mut always: Vec<String> = Vec::new();
    if let Some(main) = package_json["main"].as_str() {
        let m = clean(main);
        if m.ends_with(".js") || m.ends_with(".cjs") || m.ends_with(".mjs") {
            always.push(m);
        } else {
            always.push(format!("{m}.js"));
            always.push(format!("{m}/index.js"));
        }
    } else {
        always.push("index.js".to_string());
    }
    match &package_json["bin"] {
        serde_json::Value::String(b) => always.push(clean(b)),
        serde_json::Value::Object(m) => {
            always.extend(m.values().filter_map(|v| v.as_str()).map(clean))
        }
        _ => {}
    }
    Some(Shipped {
        entries,
        include: include.build().ok()?,
        exclude: exclude.build().ok()?,
        always,
    })
}

/// Whether a JavaScript or TypeScript file is code the package ships: not under a folder of
/// [`NODE_SKIPPED_DIRS`] or a dot folder, and not a tool's configuration (`jest.config.js`,
/// `Gruntfile.js`, `.eslintrc.js`).
fn is_shipped_script(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let file = parts.last().copied().unwrap_or("");
    let in_skipped = parts[..parts.len() - 1]
        .iter()
        .any(|d| d.starts_with('.') || NODE_SKIPPED_DIRS.contains(d));
    let tool_file = file.starts_with('.')
        || file.contains(".config.")
        || matches!(
            file.split('.').next().unwrap_or(""),
            "Gruntfile" | "gulpfile" | "Jakefile" | "karma" | "webpack" | "rollup" | "vite"
        );
    !in_skipped && !tool_file
}

/// The test framework a `package.json` names: its `test` script's runner (`jest`, `mocha`,
/// `node --test`), else a framework among its devDependencies; empty when none.
pub(crate) fn node_test_framework(package_json: &serde_json::Value) -> &'static str {
    let script = package_json["scripts"]["test"].as_str().unwrap_or("");
    let words: Vec<&str> = script
        .split(|c: char| c.is_whitespace() || c == '&' || c == ';' || c == '|')
        .collect();
    if words.iter().any(|w| w.ends_with("jest")) {
        return "jest";
    }
    if words.iter().any(|w| w.ends_with("mocha")) {
        return "mocha";
    }
    if words.windows(2).any(|w| w[0] == "node" && w[1] == "--test") {
        return "node";
    }
    let dev = |name: &str| {
        ["devDependencies", "dependencies"]
            .iter()
            .any(|k| package_json[k].get(name).is_some())
    };
    if dev("jest") {
        "jest"
    } else if dev("mocha") {
        "mocha"
    } else {
        ""
    }
}

fn node_profile(
    package_json: Option<&serde_json::Value>,
    language: Language,
    source_files: Vec<String>,
    test_files: Vec<String>,
) -> Profile {
    Profile {
        language,
        build_system: if package_json.is_some() {
            "npm"
        } else {
            "none"
        }
        .to_string(),
        test_framework: package_json
            .map(node_test_framework)
            .unwrap_or("")
            .to_string(),
        source_files,
        test_files,
        install_command: None,
        python_path: Vec::new(),
        packages: Vec::new(),
        packages_reason: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_project_ships_its_code_and_names_its_test_runner() {
        for shipped in ["index.js", "lib/shelf.js", "src/shelf.ts", "src/config.js"] {
            assert!(is_shipped_script(shipped), "{shipped}");
        }
        for tool in [
            "node_modules/x/index.js",
            "dist/shelf.js",
            "scripts/release.js",
            "jest.config.js",
            ".eslintrc.js",
            "Gruntfile.js",
            "examples/demo.js",
        ] {
            assert!(!is_shipped_script(tool), "{tool}");
        }
        let pj = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"jest --ci"}}"#)),
            "jest"
        );
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"nyc mocha test/"}}"#)),
            "mocha"
        );
        assert_eq!(
            node_test_framework(&pj(r#"{"scripts":{"test":"node --test test/"}}"#)),
            "node"
        );
        assert_eq!(
            node_test_framework(&pj(
                r#"{"scripts":{"test":"tap"},"devDependencies":{"mocha":"10"}}"#
            )),
            "mocha"
        );
        assert_eq!(node_test_framework(&pj(r#"{"name":"x"}"#)), "");
    }

    #[test]
    fn package_json_files_main_and_bin_say_what_ships() {
        let pj: serde_json::Value = serde_json::from_str(
            r#"{"main": "./lib/index", "bin": {"y": "bin/y.js"},
                "files": ["index.js", "lib/", "dist/*.mjs", "!lib/internal/**"]}"#,
        )
        .unwrap();
        let shipped = shipped_files(&pj).unwrap();
        for f in [
            "index.js",
            "lib/loader.js",
            "lib/type/int.js",
            "bin/y.js",
            "lib/index.js",
        ] {
            assert!(shipped.contains(f), "{f}");
        }
        for f in [
            "support/build_demo.js",
            "lib/internal/x.js",
            "dist/sub/a.mjs",
            "libx/a.js",
        ] {
            assert!(!shipped.contains(f), "{f}");
        }
        assert!(shipped_files(&serde_json::json!({"name": "x"})).is_none());
        assert!(!is_shipped_script("src/__fixtures__/tests.ts"));
    }
}
