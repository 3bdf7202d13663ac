//! Recipes: what an environment is made from, as data. A toolchain fills them in (the Debian
//! packages of its base image, its repository image's Dockerfile template with the values and
//! files it needs, what a task image copies, how the local sandbox prepares a host
//! environment); the sandboxes read them and never ask which language they serve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a bootstrapped root file system tells the runtime's version (for the base image's
/// version label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionProbe {
    /// An executable whose name ends in the version: `usr/bin/python3.` + `11` → `3.11`
    /// (`prefix` and the digits after it, printed after `print_prefix`).
    NumberedBinary {
        prefix: &'static str,
        print_prefix: &'static str,
    },
    /// `KEY="…"` in a `release` file one directory below `dir` (`usr/lib/jvm/<jdk>/release`,
    /// `JAVA_VERSION`).
    ReleaseFile {
        dir: &'static str,
        key: &'static str,
    },
    /// A package's version in dpkg's status file.
    DpkgPackage(&'static str),
}

/// What the base image of a runtime holds: Debian bookworm with what every container needs
/// and the runtime's packages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseRecipe {
    /// The runtime's name: the image is `swe-forge/<name>-base`, labelled
    /// `swe-forge.language=<name>`.
    pub name: &'static str,
    /// Packages debootstrap installs itself (`--include`).
    pub packages: &'static [&'static str],
    /// Packages installed afterwards with `apt-get` in the bootstrapped root (`chroot`, /proc
    /// mounted). debootstrap configures its packages in one `dpkg --configure --force-depends`
    /// pass, in no dependency order, and some maintainer scripts need a working system (a JVM
    /// for `ca-certificates-java`); apt orders the configuration properly.
    pub later_packages: &'static [&'static str],
    /// The label, `swe-forge.<name>`, that records the runtime's version on a bootstrapped
    /// image.
    pub version_label: &'static str,
    pub version_probe: VersionProbe,
}

impl BaseRecipe {
    /// Every package, in install order (what the registry path installs with one `apt-get`).
    pub fn all_packages(&self) -> Vec<&'static str> {
        self.packages
            .iter()
            .chain(self.later_packages)
            .copied()
            .collect()
    }
}

/// One file of a build context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Path in the context (`java/maven-settings.xml`).
    pub path: String,
    pub bytes: Vec<u8>,
    pub mode: u32,
}

impl ContextFile {
    /// A text file, mode 0644.
    pub fn text(path: &str, text: &str) -> ContextFile {
        ContextFile {
            path: path.to_string(),
            bytes: text.as_bytes().to_vec(),
            mode: 0o644,
        }
    }
}

/// A piece of what a repository image's tag hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HashPart {
    Text(String),
    /// The base image's id.
    BaseId,
    /// The repository's pinned commit.
    Commit,
}

/// A directory made on the host only when the variant that needs it is tried (Python's
/// wheelhouse, downloaded when the package index does not answer from a build container):
/// given the cache directory, the image's tag and the progress line, the directory.
pub type HostDir =
    Arc<dyn Fn(&Path, &str, &dyn Fn(&str)) -> Result<PathBuf, String> + Send + Sync + 'static>;

/// One way of building a repository image; the variants of a recipe are tried in order until
/// one builds.
#[derive(Clone)]
pub struct Variant {
    /// Its name, in logs and the `swe-forge.<label>` label (`index`, `wheelhouse`).
    pub name: String,
    /// What the progress line says it builds with ("packages from the package index").
    pub description: String,
    /// Template values of this variant (added to the recipe's).
    pub values: BTreeMap<String, serde_json::Value>,
    /// A host directory added to the context at `.1`, made when this variant is tried.
    pub host_dir: Option<(HostDir, String)>,
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("values", &self.values)
            .field("host_dir", &self.host_dir.as_ref().map(|(_, at)| at))
            .finish()
    }
}

/// What a task image takes from its repository image, besides the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskLayer {
    /// Paths copied from the repository image (`/opt/venv`, `/opt/swe-forge`).
    pub copy_paths: Vec<String>,
    /// A command run as root in the task image (empty: none).
    pub prepare: String,
}

/// A repository image: a Dockerfile template rendered with values, a build context (the
/// template's files, the checkout at `testbed/`, and the host's CA bundle at
/// `host/ca-bundle.pem` when the host has one), and the tag's hash.
#[derive(Clone, Debug)]
pub struct ImageRecipe {
    pub base: BaseRecipe,
    /// The template's file name, for errors (`dockerfiles/python.Dockerfile`).
    pub template_name: &'static str,
    pub template: &'static str,
    /// Template values. The sandbox adds `base` (the base image's tag), `labels`, `user`,
    /// `uid`, `ca_bundle` (the bundle's path in the build, or empty) and the variant's
    /// `context_files` (whether the context holds more than the checkout and the Dockerfile).
    pub values: BTreeMap<String, serde_json::Value>,
    /// Files of the build context besides the Dockerfile and the checkout.
    pub files: Vec<ContextFile>,
    /// What the tag hashes, in order (an unchanged repository is never rebuilt).
    pub hash: Vec<HashPart>,
    /// Labels besides `swe-forge.kind`, `.seed`, `.commit`, `.language` and `.base`.
    pub labels: BTreeMap<String, String>,
    /// The label that names the variant that built the image (`pip-source`), if any.
    pub variant_label: Option<String>,
    /// Tried in order; at least one.
    pub variants: Vec<Variant>,
    /// What the progress line says while building ("Maven, offline").
    pub description: String,
}

/// A host environment directory the local sandbox makes once per key under its cache
/// (Python's virtualenv).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvDir {
    /// The directory is `<cache>/venvs/<seed>-<12 hex of key>`.
    pub key: Vec<String>,
    /// Commands whose output joins the key (`python3 --version`).
    pub key_commands: Vec<Vec<String>>,
    /// How it is made, in order.
    pub steps: Vec<SetupStep>,
}

/// One command of a host preparation. In `argv` and `env` values, `{env}` is the environment
/// directory and `{path}` the commands' PATH.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetupStep {
    /// What it does, for errors.
    pub what: String,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Run in a throwaway copy of the checkout (an install that leaves build files).
    pub in_copy: bool,
}

/// A program the host must have, with what to tell the user when it is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub argv: Vec<String>,
    pub hint: String,
}

/// How the local sandbox prepares a host environment and runs commands in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalRecipe {
    pub requires: Vec<Requirement>,
    pub env_dir: Option<EnvDir>,
    /// Directories put before the host's PATH (`{env}/bin`).
    pub path_prefix: Vec<String>,
    /// Variables of every command. In values, `{env}` is the environment directory and
    /// `{root}` the worker's worktree; a value that is a `:`-list of `{root}/…` entries keeps
    /// its form.
    pub vars: Vec<(String, String)>,
    /// Links made in each worker's folder, beside its worktree (name → target, `{env}`
    /// substituted): what a tool resolving upwards from the repository finds there (node's
    /// `node_modules`).
    pub beside_root: Vec<(String, String)>,
}

/// Everything a sandbox needs to make a repository's environment.
#[derive(Clone, Debug)]
pub struct EnvRecipe {
    pub image: ImageRecipe,
    pub local: LocalRecipe,
}

/// `{env}`, `{root}` and `{path}` substituted.
pub fn substitute(text: &str, env: &Path, root: &Path, path: &str) -> String {
    text.replace("{env}", &env.display().to_string())
        .replace("{root}", &root.display().to_string())
        .replace("{path}", path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_substituted() {
        let s = substitute(
            "{env}/bin:{path} {root}/src",
            Path::new("/c/venv"),
            Path::new("/w/repo"),
            "/usr/bin",
        );
        assert_eq!(s, "/c/venv/bin:/usr/bin /w/repo/src");
    }

    #[test]
    fn all_packages_keeps_the_install_order() {
        let r = BaseRecipe {
            name: "x",
            packages: &["a", "b"],
            later_packages: &["c"],
            version_label: "x",
            version_probe: VersionProbe::DpkgPackage("a"),
        };
        assert_eq!(r.all_packages(), vec!["a", "b", "c"]);
    }
}
