//! The Maven overlay: a local repository laid over Debian's (`/usr/share/maven-repo`) in
//! which the versions a real project's POMs ask for resolve to the versions Debian packages,
//! so that the project builds offline with its own POMs untouched (Debian's own tools,
//! maven-repo-helper's `mh_patchpoms` and its rules, rewrite the project's POMs instead, which
//! a task's tree must not show). It is made by `dockerfiles/java/maven-overlay.py`, the same
//! script in a repository image build and on the host for the local sandbox, and a Maven core
//! extension (`dockerfiles/java/SweForgeDropPlugins.java`) removes the plugins Debian does not
//! package, or whose goals cannot run offline, before Maven plans the build. What the script
//! did (its [`Mapping`]) is what a task record's environment names.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The script that makes an overlay and resolves a project against it.
pub const OVERLAY_PY: &str = include_str!("../../dockerfiles/java/maven-overlay.py");
/// Artifacts Debian packages under other coordinates, one `asked debian` pair of
/// `group:artifact` per line; the script reads it from its own folder.
pub const ALIASES_TXT: &str = include_str!("../../dockerfiles/java/maven-aliases.txt");
/// The core extension's source (one class, package `sweforge`).
pub const EXTENSION_JAVA: &str = include_str!("../../dockerfiles/java/SweForgeDropPlugins.java");
/// The extension's `META-INF/plexus/components.xml`.
pub const EXTENSION_COMPONENTS: &str = include_str!("../../dockerfiles/java/components.xml");
/// The extension jar's file name.
pub const EXTENSION_JAR: &str = "swe-forge-maven.jar";
/// The overlay's own folder (mapping, drop list, settings), inside the overlay.
pub const STATE_DIR: &str = ".swe-forge";
/// The version of an empty plugin standing in for one Debian does not package.
pub const DROPPED: &str = "0-dropped";

/// What the overlay script did for a project (`.swe-forge/mapping.json` in the overlay).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// `built`; `compile-error` (everything resolved, the project's own sources do not
    /// compile: the baseline reports it); `stuck` (a failure named nothing the overlay can
    /// supply) or `gave-up`.
    pub result: String,
    /// Offline builds run.
    pub rounds: u32,
    /// Each `group:artifact:version` asked for that Debian does not have, and Debian's
    /// version it resolves to ([`DROPPED`] for a stand-in plugin).
    #[serde(default)]
    pub mapped: BTreeMap<String, String>,
    /// `group:artifact` given Debian's version in the mapped parent's dependency management.
    #[serde(default)]
    pub managed: BTreeMap<String, String>,
    /// Each `group:artifact:version` asked for that Debian packages under other coordinates
    /// (`maven-aliases.txt`), and Debian's `group:artifact:version` it relocates to.
    #[serde(default)]
    pub relocated: BTreeMap<String, String>,
    /// `group:artifact` of the plugins removed from the build.
    #[serde(default)]
    pub dropped_plugins: Vec<String>,
    /// The artifactIds of the modules of a multi-module build left out of it (they do not
    /// build against Debian's libraries), and each one's folder in the repository.
    #[serde(default)]
    pub dropped_modules: BTreeMap<String, String>,
    /// The last failed build's error lines (empty when it built).
    #[serde(default)]
    pub errors: Vec<String>,
}

impl Mapping {
    /// The mapping of the overlay at `root`.
    pub fn read(root: &Path) -> Result<Mapping, String> {
        let path = root.join(STATE_DIR).join("mapping.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Mapping::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Mapping, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Whether the project built offline with nothing mapped, managed or dropped.
    pub fn is_identity(&self) -> bool {
        self.mapped.is_empty()
            && self.managed.is_empty()
            && self.relocated.is_empty()
            && self.dropped_plugins.is_empty()
            && self.dropped_modules.is_empty()
    }
}

/// A bash script that compiles the core extension into `out/` ([`EXTENSION_JAR`]; `$M/lib/ext`
/// is Maven's own extension folder) from its sources in `src/` (`SweForgeDropPlugins.java`,
/// `components.xml`), against Maven's jars. `M` is set to Maven's home (found from `mvn` on the
/// PATH) before either is read; both are inserted as they are (already quoted).
pub fn extension_build_script(src: &str, out: &str) -> String {
    format!(
        "set -e\nM=$(dirname \"$(dirname \"$(readlink -f \"$(command -v mvn)\")\")\")\n\
         X=$(mktemp -d)\nmkdir -p \"$X/META-INF/plexus\" {out}\n\
         cp {src}/components.xml \"$X/META-INF/plexus/components.xml\"\n\
         javac --release 11 -nowarn -cp \"$M/lib/*\" -d \"$X\" {src}/SweForgeDropPlugins.java\n\
         jar cf {out}/{EXTENSION_JAR} -C \"$X\" .\nrm -rf \"$X\"\n"
    )
}

#[cfg(test)]
mod tests;
