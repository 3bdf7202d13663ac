//! A Maven local repository laid over Debian's (`/usr/share/maven-repo`) in which the versions
//! a real project's POMs ask for resolve to the versions Debian packages, so that the project
//! builds offline with its own POMs untouched. Debian's own tools (maven-repo-helper's
//! `mh_patchpoms` and its rules) rewrite the project's POMs instead, which a task's tree must
//! not show. Found by hand on commons-cli 1.5.0 (`pom.xml` as released, parent
//! `commons-parent:52`, JUnit 4): with such an overlay, Debian's plugins and one more Debian
//! package (`libmaven-bundle-plugin-java`), `mvn -o test` builds it and runs its 438 tests.
//!
//! What the overlay holds:
//! - every directory of Debian's repository, with links to its files;
//! - for each artifact, a `maven-metadata-local.xml` listing the versions present, the release
//!   being the highest that is not `debian` (Debian's parent POMs declare plugins without
//!   versions, which Maven then resolves from that metadata);
//! - for a version asked for that Debian does not have ([`Overlay::map`]): that version's
//!   directory, with Debian's POM rewritten to the asked version and Debian's other files linked;
//! - for a plugin Debian does not package and a test run does not need
//!   ([`Overlay::stub_plugin`]): an empty plugin at version [`DROPPED`], so that resolving the
//!   project's plugin versions succeeds; a run must not execute its goals.
//!
//! [`missing_in`] reads what an offline build says it could not find.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The version of an empty plugin standing in for one Debian does not package.
pub const DROPPED: &str = "0-dropped";

#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("Debian's repository has no {0}")]
    NotPackaged(String),
    #[error("{path}: the POM has no version of its own to rewrite")]
    NoVersion { path: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OverlayError + '_ {
    move |source| OverlayError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `group:artifact:version`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Coord {
    pub group: String,
    pub artifact: String,
    pub version: String,
}

impl std::fmt::Display for Coord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.group, self.artifact, self.version)
    }
}

impl Coord {
    /// `group:artifact[:type]:version` as Maven prints it.
    pub fn parse(s: &str) -> Option<Coord> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (group, artifact, version) = match parts.as_slice() {
            [g, a, v] => (g, a, v),
            [g, a, _type, v] => (g, a, v),
            [g, a, _type, _classifier, v] => (g, a, v),
            _ => return None,
        };
        let plain = |x: &str| {
            !x.is_empty()
                && x.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        };
        (plain(group) && plain(artifact) && plain(version)).then(|| Coord {
            group: group.to_string(),
            artifact: artifact.to_string(),
            version: version.to_string(),
        })
    }

    fn dir(&self, root: &Path) -> PathBuf {
        artifact_dir(root, &self.group, &self.artifact).join(&self.version)
    }
}

fn artifact_dir(root: &Path, group: &str, artifact: &str) -> PathBuf {
    let mut d = root.to_path_buf();
    for part in group.split('.') {
        d.push(part);
    }
    d.join(artifact)
}

/// An overlay repository and what was mapped into it.
#[derive(Debug)]
pub struct Overlay {
    pub root: PathBuf,
    pub debian: PathBuf,
    /// Each version asked for that Debian does not have, and Debian's version it resolves to
    /// ([`DROPPED`] for a stubbed plugin): what a record's environment names.
    pub mapped: BTreeMap<Coord, String>,
    /// The first parent POM mapped (the project's own parent, which the build asks for
    /// first), and the versions added to its dependency management ([`Overlay::manage`]).
    parent: Option<Coord>,
    pub managed: BTreeMap<(String, String), String>,
}

impl Overlay {
    /// The overlay at `root` (made afresh) over Debian's repository at `debian`.
    pub fn create(debian: &Path, root: &Path) -> Result<Overlay, OverlayError> {
        if root.exists() {
            fs::remove_dir_all(root).map_err(io(root))?;
        }
        mirror(debian, root)?;
        let overlay = Overlay {
            root: root.to_path_buf(),
            debian: debian.to_path_buf(),
            mapped: BTreeMap::new(),
            parent: None,
            managed: BTreeMap::new(),
        };
        overlay.write_all_metadata(root)?;
        Ok(overlay)
    }

    /// The versions Debian has of `group:artifact`, in no particular order.
    pub fn versions(&self, group: &str, artifact: &str) -> Vec<String> {
        versions_in(&artifact_dir(&self.debian, group, artifact))
    }

    /// Makes `coord` resolve to Debian's version of its artifact (the highest that is not
    /// `debian`, else `debian`); returns that version. A version Debian has is left as it is.
    pub fn map(&mut self, coord: &Coord) -> Result<String, OverlayError> {
        let have = self.versions(&coord.group, &coord.artifact);
        if have.contains(&coord.version) {
            return Ok(coord.version.clone());
        }
        let from = release(&have).ok_or_else(|| {
            OverlayError::NotPackaged(format!("{}:{}", coord.group, coord.artifact))
        })?;
        let src = artifact_dir(&self.debian, &coord.group, &coord.artifact).join(&from);
        let dst = coord.dir(&self.root);
        fs::create_dir_all(&dst).map_err(io(&dst))?;
        for entry in fs::read_dir(&src).map_err(io(&src))? {
            let entry = entry.map_err(io(&src))?;
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(ext) = name
                .strip_prefix(&format!("{}-{from}", coord.artifact))
                .map(str::to_string)
            else {
                continue;
            };
            let target = dst.join(format!("{}-{}{ext}", coord.artifact, coord.version));
            if ext == ".pom" {
                let text = fs::read_to_string(entry.path()).map_err(io(&entry.path()))?;
                let rewritten = with_own_version(&text, &coord.version)
                    .ok_or_else(|| OverlayError::NoVersion { path: entry.path() })?;
                fs::write(&target, rewritten).map_err(io(&target))?;
            } else {
                let real = fs::canonicalize(entry.path()).map_err(io(&entry.path()))?;
                std::os::unix::fs::symlink(&real, &target).map_err(io(&target))?;
            }
        }
        self.write_metadata(&coord.group, &coord.artifact)?;
        self.mapped.insert(coord.clone(), from.clone());
        Ok(from)
    }

    /// [`Overlay::map`] for a parent POM; the first becomes the one [`Overlay::manage`] adds to.
    pub fn map_parent(&mut self, coord: &Coord) -> Result<String, OverlayError> {
        let from = self.map(coord)?;
        if self.parent.is_none() && from != coord.version {
            self.parent = Some(coord.clone());
        }
        Ok(from)
    }

    /// Gives `group:artifact` Debian's version in the mapped parent's dependency management:
    /// an upstream parent manages versions (JUnit's BOM, say) that Debian's parent POMs no
    /// longer do, so a project that names the dependency without a version fails to build.
    pub fn manage(&mut self, group: &str, artifact: &str) -> Result<String, OverlayError> {
        let parent = self.parent.clone().ok_or_else(|| {
            OverlayError::NotPackaged(format!(
                "a mapped parent POM to manage {group}:{artifact} in"
            ))
        })?;
        let version = release(&self.versions(group, artifact))
            .ok_or_else(|| OverlayError::NotPackaged(format!("{group}:{artifact}")))?;
        self.managed
            .insert((group.to_string(), artifact.to_string()), version.clone());
        let path = parent
            .dir(&self.root)
            .join(format!("{}-{}.pom", parent.artifact, parent.version));
        let text = fs::read_to_string(&path).map_err(io(&path))?;
        let entry = format!(
            "<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>\
             <version>{version}</version></dependency>"
        );
        let text = with_managed(&text, &entry)
            .ok_or_else(|| OverlayError::NoVersion { path: path.clone() })?;
        fs::write(&path, text).map_err(io(&path))?;
        Ok(version)
    }

    /// An empty plugin `group:artifact` at version [`DROPPED`]: a POM, and a jar whose plugin
    /// descriptor declares no goal.
    pub fn stub_plugin(&mut self, group: &str, artifact: &str) -> Result<(), OverlayError> {
        let coord = Coord {
            group: group.to_string(),
            artifact: artifact.to_string(),
            version: DROPPED.to_string(),
        };
        let dir = coord.dir(&self.root);
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let pom = dir.join(format!("{artifact}-{DROPPED}.pom"));
        fs::write(
            &pom,
            format!(
                "<project><modelVersion>4.0.0</modelVersion><groupId>{group}</groupId>\
                 <artifactId>{artifact}</artifactId><version>{DROPPED}</version>\
                 <packaging>maven-plugin</packaging></project>\n"
            ),
        )
        .map_err(io(&pom))?;
        let jar = dir.join(format!("{artifact}-{DROPPED}.jar"));
        let descriptor = format!(
            "<plugin><name>{artifact} (not packaged by Debian; swe-forge runs none of its goals)</name>\
             <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{DROPPED}</version>\
             <goalPrefix>{artifact}</goalPrefix><mojos></mojos><dependencies></dependencies></plugin>\n"
        );
        let file = fs::File::create(&jar).map_err(io(&jar))?;
        let mut zip = zip::ZipWriter::new(file);
        let options: zip::write::SimpleFileOptions = Default::default();
        zip.start_file("META-INF/maven/plugin.xml", options)
            .map_err(|e| OverlayError::Io {
                path: jar.clone(),
                source: std::io::Error::other(e),
            })?;
        zip.write_all(descriptor.as_bytes()).map_err(io(&jar))?;
        zip.finish().map_err(|e| OverlayError::Io {
            path: jar.clone(),
            source: std::io::Error::other(e),
        })?;
        self.write_metadata(group, artifact)?;
        self.mapped.insert(coord, DROPPED.to_string());
        Ok(())
    }

    fn write_metadata(&self, group: &str, artifact: &str) -> Result<(), OverlayError> {
        let dir = artifact_dir(&self.root, group, artifact);
        let versions = versions_in(&dir);
        let Some(rel) = release(&versions) else {
            return Ok(());
        };
        let mut sorted = versions.clone();
        sorted.sort_by(|a, b| compare_versions(a, b));
        let listed: String = sorted
            .iter()
            .map(|v| format!("<version>{v}</version>"))
            .collect();
        let path = dir.join("maven-metadata-local.xml");
        // Never write through a link into Debian's repository.
        if path.is_symlink() {
            fs::remove_file(&path).map_err(io(&path))?;
        }
        fs::write(
            &path,
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metadata><groupId>{group}</groupId>\
                 <artifactId>{artifact}</artifactId><versioning><latest>{rel}</latest>\
                 <release>{rel}</release><versions>{listed}</versions></versioning></metadata>\n"
            ),
        )
        .map_err(io(&path))
    }

    fn write_all_metadata(&self, dir: &Path) -> Result<(), OverlayError> {
        let mut subdirs = Vec::new();
        let mut has_versions = false;
        for entry in fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let path = entry.path();
            if entry.file_type().map_err(io(&path))?.is_dir() {
                if holds_artifact_files(&path) {
                    has_versions = true;
                } else {
                    subdirs.push(path);
                }
            }
        }
        if has_versions {
            if let Ok(rel) = dir.strip_prefix(&self.root) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().to_string())
                    .collect();
                if parts.len() >= 2 {
                    let (artifact, group) = parts.split_last().expect("two parts");
                    self.write_metadata(&group.join("."), artifact)?;
                }
            }
        }
        for d in subdirs {
            self.write_all_metadata(&d)?;
        }
        Ok(())
    }
}

/// Directories made, files linked to their real paths.
fn mirror(from: &Path, to: &Path) -> Result<(), OverlayError> {
    fs::create_dir_all(to).map_err(io(to))?;
    for entry in fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            mirror(&path, &target)?;
        } else if let Ok(real) = fs::canonicalize(&path) {
            std::os::unix::fs::symlink(&real, &target).map_err(io(&target))?;
        }
    }
    Ok(())
}

fn holds_artifact_files(dir: &Path) -> bool {
    fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        let n = e.file_name().to_string_lossy().to_string();
        n.ends_with(".pom") || n.ends_with(".jar")
    })
}

fn versions_in(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir() && holds_artifact_files(&e.path()))
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect()
}

/// The highest version that is not `debian` (nor a stub), else `debian`.
fn release(versions: &[String]) -> Option<String> {
    versions
        .iter()
        .filter(|v| *v != "debian" && *v != DROPPED)
        .max_by(|a, b| compare_versions(a, b))
        .or_else(|| versions.iter().find(|v| *v == "debian"))
        .or_else(|| versions.first())
        .cloned()
}

/// Numeric parts compared as numbers (`2.22.3` after `2.9`), the rest as text.
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<(u64, String)> {
        v.split(['.', '-'])
            .map(|p| (p.parse::<u64>().unwrap_or(0), p.to_string()))
            .collect()
    };
    parts(a).cmp(&parts(b))
}

/// `pom` with `entry` (a `<dependency>`) in the project's own dependency management: inside
/// its `<dependencyManagement><dependencies>`, else in a new one before `</project>`.
fn with_managed(pom: &str, entry: &str) -> Option<String> {
    if let Some(i) = top_level_start(pom, "dependencyManagement") {
        let rest = &pom[i..];
        let j = i + rest.find("<dependencies>")? + "<dependencies>".len();
        return Some(format!("{}{entry}{}", &pom[..j], &pom[j..]));
    }
    let end = pom.rfind("</project>")?;
    Some(format!(
        "{}<dependencyManagement><dependencies>{entry}</dependencies></dependencyManagement>\n{}",
        &pom[..end],
        &pom[end..]
    ))
}

/// Where the element `name` that is a child of `<project>` starts its content.
fn top_level_start(pom: &str, name: &str) -> Option<usize> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(pom);
    let mut depth: Vec<Vec<u8>> = Vec::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                let local = e.local_name().as_ref().to_vec();
                if local == name.as_bytes() && depth.len() == 1 && depth[0] == b"project" {
                    return Some(reader.buffer_position() as usize);
                }
                depth.push(local);
            }
            Event::End(_) => {
                depth.pop();
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// `pom` with the version of the project itself (the `<version>` that is a child of
/// `<project>`, not of `<parent>` or anything else) set to `version`.
fn with_own_version(pom: &str, version: &str) -> Option<String> {
    let start = top_level_start(pom, "version")?;
    let end = start + pom[start..].find("</")?;
    Some(format!("{}{version}{}", &pom[..start], &pom[end..]))
}

/// How [`resolve`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The build succeeded after these rounds.
    Built { rounds: usize },
    /// The build failed with nothing the overlay can supply: Maven's last output's error lines.
    Stuck { rounds: usize, errors: String },
    /// Still missing something after `rounds` rounds.
    GaveUp { rounds: usize },
}

/// Runs `build` (an offline Maven build against the overlay: success and its output) until
/// it succeeds, supplying after each failure what it says is missing: a parent or dependency
/// version mapped to Debian's, a plugin Debian does not package stubbed. At most `max_rounds`
/// builds.
pub fn resolve(
    overlay: &mut Overlay,
    max_rounds: usize,
    mut build: impl FnMut() -> (bool, String),
) -> Result<Resolution, OverlayError> {
    for round in 1..=max_rounds {
        let (ok, output) = build();
        if ok {
            return Ok(Resolution::Built { rounds: round });
        }
        let missing = missing_in(&output);
        let mut supplied = 0;
        for m in missing {
            let done = match &m {
                Missing::Parent(c) => {
                    !overlay.mapped.contains_key(c) && overlay.map_parent(c).is_ok()
                }
                Missing::Artifact(c) => !overlay.mapped.contains_key(c) && overlay.map(c).is_ok(),
                Missing::Unmanaged { group, artifact } => {
                    !overlay
                        .managed
                        .contains_key(&(group.clone(), artifact.clone()))
                        && overlay.manage(group, artifact).is_ok()
                }
                Missing::PluginVersion { group, artifact } => {
                    let c = Coord {
                        group: group.clone(),
                        artifact: artifact.clone(),
                        version: DROPPED.to_string(),
                    };
                    !overlay.mapped.contains_key(&c)
                        && overlay.versions(group, artifact).is_empty()
                        && overlay.stub_plugin(group, artifact).is_ok()
                }
            };
            supplied += usize::from(done);
        }
        if supplied == 0 {
            let errors: Vec<&str> = output
                .lines()
                .filter(|l| l.contains("ERROR") || l.contains("FATAL"))
                .take(5)
                .collect();
            return Ok(Resolution::Stuck {
                rounds: round,
                errors: errors.join("\n"),
            });
        }
    }
    Ok(Resolution::GaveUp { rounds: max_rounds })
}

/// What an offline Maven build says it could not find.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// A parent POM at a version that is not there.
    Parent(Coord),
    /// A plugin whose version could not be resolved (no metadata lists it).
    PluginVersion { group: String, artifact: String },
    /// A dependency or plugin at a version that is not there.
    Artifact(Coord),
    /// A dependency named without a version that no parent manages.
    Unmanaged { group: String, artifact: String },
}

/// The missing artifacts named in `output` (Maven 3's messages), each once, in order.
pub fn missing_in(output: &str) -> Vec<Missing> {
    let mut found: Vec<Missing> = Vec::new();
    let mut push = |m: Missing| {
        if !found.contains(&m) {
            found.push(m);
        }
    };
    for line in output.lines() {
        if line.contains("Non-resolvable parent POM") {
            if let Some(c) = after(line, "the artifact ").and_then(first_coord) {
                push(Missing::Parent(c));
            }
        } else if line.contains("Error resolving version for plugin") {
            if let Some(ga) = between(line, "plugin '", "'") {
                if let Some((g, a)) = ga.split_once(':') {
                    push(Missing::PluginVersion {
                        group: g.to_string(),
                        artifact: a.to_string(),
                    });
                }
            }
        } else if line.contains("'dependencies.dependency.version' for ")
            && line.contains("is missing")
        {
            if let Some(c) = after(line, "' for ").and_then(|r| r.split_whitespace().next()) {
                let mut parts = c.split(':');
                if let (Some(g), Some(a)) = (parts.next(), parts.next()) {
                    push(Missing::Unmanaged {
                        group: g.to_string(),
                        artifact: a.to_string(),
                    });
                }
            }
        } else if line.contains("has not been downloaded from it before")
            || line.contains("Could not find artifact")
        {
            let from =
                after(line, "the artifact ").or_else(|| after(line, "Could not find artifact "));
            if let Some(c) = from.and_then(first_coord) {
                push(Missing::Artifact(c));
            }
        }
    }
    found
}

fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.find(marker).map(|i| &line[i + marker.len()..])
}

fn between<'a>(line: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let rest = after(line, open)?;
    rest.find(close).map(|i| &rest[..i])
}

fn first_coord(s: &str) -> Option<Coord> {
    Coord::parse(s.split_whitespace().next()?)
}

#[cfg(test)]
mod tests;
