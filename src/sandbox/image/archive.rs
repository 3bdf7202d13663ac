//! A directory of image tars on shared storage: `swe-forge image save DIR` writes the base,
//! repository and task images of this engine there, `swe-forge image load DIR` loads those the
//! engine lacks, so that a node builds nothing another node already built
//! ([`super::registry`] does the same through a registry).
//!
//! Which images are swe-forge's: those with a `swe-forge/…` name and a `swe-forge.kind` label.
//! Their kind follows from the name, the same way on an engine, in a directory and in a
//! registry: `swe-forge/<runtime>-base:bookworm-<hex>` (base), `swe-forge/<seed>-taskbase:<16
//! hex>` (a repository image's task base), `swe-forge/<seed>-task:<16 hex>` (task), anything
//! else (`swe-forge/<seed>:<12 hex>`) a repository image.
//!
//! Directory layout (flat, one pair of files per image, no file shared between images):
//! - `<stem>.<id 12 hex>.tar`: what the engine exports for that one image (`docker save`
//!   format: every layer below it too, so each tar loads on its own);
//! - `<stem>.json`: its index entry ([`ArchiveEntry`]: tag, image id, kind, the base image id
//!   of a repository image, the tar's file name and size, who saved it and when).
//!
//! `<stem>` is the tag without `swe-forge/`, `/` written `~` and `:` written `+` (neither can
//! occur in an image reference, so distinct tags never share a stem). Both files are written
//! to a temporary name in DIR (`.<name>.<host>.<pid>.tmp`), flushed to disk and renamed:
//! a rename within one directory is atomic, NFS included, and with close-to-open consistency a
//! reader that sees the new name sees the whole file. The tar is renamed before its entry, so
//! an entry always names a complete tar; the tar's name carries the image id, so two nodes
//! saving different builds of one tag at once leave an entry that names its own tar (the
//! other tar stays as an orphan). No lock is taken (advisory locks are unreliable over NFS).
//!
//! Save skips an image whose entry names the same id and whose tar exists; an entry for
//! another build of the same tag (tags are hashes of the recipe, so a base image bootstrapped
//! on two nodes has one tag and two ids) is kept: the first saved wins, and nodes that load it
//! converge on it. Load skips an image present with the entry's id, and loads it otherwise
//! (replacing the tag of another build); after loading it checks the tag names the entry's
//! id. An unreadable entry, a missing or corrupt tar is reported as failed and the rest go on.

use super::{image_id, ImageError, Progress, SUITE};
use crate::sandbox::docker::Client;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The name every swe-forge image has.
pub const NAME_PREFIX: &str = "swe-forge/";
/// The label every swe-forge image carries.
pub const KIND_LABEL: &str = "swe-forge.kind";

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("docker: {context}: {source}")]
    Docker {
        context: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("bad name pattern `{pattern}`: {detail}")]
    Pattern { pattern: String, detail: String },
    #[error("{path}: line {line} is not a task record: {detail}")]
    Tasks {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    #[error("bad registry `{0}`: expected HOST[:PORT]/PREFIX")]
    RegistrySpec(String),
    #[error("registry {registry}: {detail}")]
    Registry { registry: String, detail: String },
}

pub(super) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ArchiveError {
    let context = context.into();
    move |source| ArchiveError::Io { context, source }
}

/// What an image is for.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    /// A language's base image.
    Base,
    /// A seed's repository image.
    Repo,
    /// The task base of a repository image (what its task images are layered on).
    Taskbase,
    /// A task image (a record's `image_name`).
    Task,
}

impl ImageKind {
    /// The kind a swe-forge image name says.
    pub fn of_tag(tag: &str) -> ImageKind {
        let (name, version) = split_tag(tag);
        if version.starts_with(&format!("{SUITE}-")) && name.ends_with("-base") {
            ImageKind::Base
        } else if name.ends_with("-taskbase") {
            ImageKind::Taskbase
        } else if name.ends_with("-task") && version.len() == 16 {
            ImageKind::Task
        } else {
            ImageKind::Repo
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ImageKind::Base => "base",
            ImageKind::Repo => "repo",
            ImageKind::Taskbase => "taskbase",
            ImageKind::Task => "task",
        }
    }
}

/// `name:tag` → (`name`, `tag`); `latest` when there is no tag.
pub fn split_tag(reference: &str) -> (&str, &str) {
    match reference.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (reference, "latest"),
    }
}

/// A swe-forge image: on this engine, or in an archive's index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInfo {
    /// `swe-forge/<name>:<tag>`.
    pub tag: String,
    /// `sha256:…`
    pub id: String,
    pub kind: ImageKind,
    /// A repository image's base image (its id, the `swe-forge.base` label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// The swe-forge images of this engine, bases first, then by tag.
pub fn list_local(client: &Client) -> Result<Vec<ImageInfo>, ArchiveError> {
    use bollard::query_parameters::ListImagesOptionsBuilder;
    let filters = HashMap::from([("label", vec![KIND_LABEL])]);
    let opts = ListImagesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let summaries = client
        .block_on(client.docker().list_images(Some(opts)))
        .map_err(|source| ArchiveError::Docker {
            context: "listing images".into(),
            source,
        })?;
    let mut out = Vec::new();
    for s in summaries {
        for tag in s.repo_tags.iter().filter(|t| t.starts_with(NAME_PREFIX)) {
            let kind = ImageKind::of_tag(tag);
            out.push(ImageInfo {
                tag: tag.clone(),
                id: s.id.clone(),
                kind,
                base: (kind == ImageKind::Repo)
                    .then(|| s.labels.get("swe-forge.base").cloned())
                    .flatten(),
            });
        }
    }
    out.sort_by(|a, b| (a.kind, &a.tag).cmp(&(b.kind, &b.tag)));
    Ok(out)
}

/// Which images a command takes: all, or narrowed by kind, by name pattern and by tasks.
#[derive(Debug, Default)]
pub struct Selection {
    /// Only these kinds (all when empty).
    pub kinds: Vec<ImageKind>,
    /// Only tags matching one of these glob patterns (all when empty).
    names: Vec<globset::GlobMatcher>,
    /// Only the task and repository images these task records name, and the base images of
    /// those repository images.
    pub tasks: Option<BTreeSet<String>>,
}

impl Selection {
    pub fn new(
        kinds: Vec<ImageKind>,
        patterns: &[String],
        tasks: Option<BTreeSet<String>>,
    ) -> Result<Selection, ArchiveError> {
        let names = patterns
            .iter()
            .map(|p| {
                globset::GlobBuilder::new(p)
                    .literal_separator(false)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| ArchiveError::Pattern {
                        pattern: p.clone(),
                        detail: e.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Selection {
            kinds,
            names,
            tasks,
        })
    }

    /// Whether `tag` passes the kind and name filters.
    pub fn admits(&self, tag: &str) -> bool {
        let kind = ImageKind::of_tag(tag);
        (self.kinds.is_empty() || self.kinds.contains(&kind))
            && (self.names.is_empty() || self.names.iter().any(|g| g.is_match(tag)))
    }

    /// The images of `all` this selection takes, in the order of `all`.
    pub fn pick<'a>(&self, all: &'a [ImageInfo]) -> Vec<&'a ImageInfo> {
        let bases: BTreeSet<&str> = match &self.tasks {
            Some(refs) => all
                .iter()
                .filter(|i| refs.contains(&i.tag))
                .filter_map(|i| i.base.as_deref())
                .collect(),
            None => BTreeSet::new(),
        };
        all.iter()
            .filter(|i| match &self.tasks {
                None => true,
                Some(refs) => {
                    refs.contains(&i.tag)
                        || (i.kind == ImageKind::Base && bases.contains(i.id.as_str()))
                }
            })
            .filter(|i| self.admits(&i.tag))
            .collect()
    }
}

/// The images task records name: each record's `image_name` and its repository image
/// (`metadata.start_state.repo_image`). Blank lines are skipped; any other line that is not a
/// task record is an error.
pub fn task_refs(path: &Path) -> Result<BTreeSet<String>, ArchiveError> {
    let text = fs::read_to_string(path).map_err(io_err(format!("reading {}", path.display())))?;
    let mut refs = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let t: crate::task::Task = serde_json::from_str(line).map_err(|e| ArchiveError::Tasks {
            path: path.to_path_buf(),
            line: i + 1,
            detail: e.to_string(),
        })?;
        refs.extend(t.image_name.clone());
        refs.extend(
            t.metadata
                .start_state
                .as_ref()
                .and_then(|s| s.repo_image.clone()),
        );
    }
    Ok(refs)
}

/// The file name stem of a tag: `swe-forge/python-base:bookworm-abc` →
/// `python-base+bookworm-abc` (`/` → `~`, `:` → `+`, anything else outside `[A-Za-z0-9._-]`
/// → `_`).
pub fn file_stem(tag: &str) -> String {
    tag.strip_prefix(NAME_PREFIX)
        .unwrap_or(tag)
        .chars()
        .map(|c| match c {
            '/' => '~',
            ':' => '+',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') => c,
            _ => '_',
        })
        .collect()
}

/// The tar's file name for an image: `<stem>.<first 12 hex of the id>.tar`.
pub fn tar_name(tag: &str, id: &str) -> String {
    let hex = id.strip_prefix("sha256:").unwrap_or(id);
    let short: String = hex
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(12)
        .collect();
    format!("{}.{short}.tar", file_stem(tag))
}

/// An image's entry in an archive's index (`<stem>.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchiveEntry {
    #[serde(flatten)]
    pub image: ImageInfo,
    /// The tar's file name in the directory.
    pub file: String,
    pub bytes: u64,
    #[serde(default)]
    pub saved_by: String,
    #[serde(default)]
    pub saved_unix: u64,
}

/// What happened to one image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Saved,
    Pushed,
    Loaded,
    Pulled,
    Skipped,
    Failed,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Saved => "saved",
            Outcome::Pushed => "pushed",
            Outcome::Loaded => "loaded",
            Outcome::Pulled => "pulled",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        }
    }
}

/// One image's line in a save or load report.
#[derive(Clone, Debug, Serialize)]
pub struct TransferLine {
    /// The image's tag, or the index file's name where the entry could not be read.
    pub tag: String,
    pub kind: Option<ImageKind>,
    pub id: Option<String>,
    pub status: Outcome,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The tar (directory) or the remote reference (registry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    pub seconds: f64,
}

impl TransferLine {
    pub(super) fn new(image: &ImageInfo, status: Outcome, started: Instant) -> TransferLine {
        TransferLine {
            tag: image.tag.clone(),
            kind: Some(image.kind),
            id: (!image.id.is_empty()).then(|| image.id.clone()),
            status,
            detail: String::new(),
            file: None,
            bytes: None,
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    pub(super) fn detail(mut self, detail: impl Into<String>) -> TransferLine {
        self.detail = detail.into();
        self
    }
}

/// Totals of a save or load.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TransferSummary {
    /// Saved, pushed, loaded or pulled.
    pub done: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Bytes written or read (tars).
    pub bytes: u64,
    pub seconds: f64,
}

impl TransferSummary {
    pub(super) fn count(&mut self, line: &TransferLine) {
        match line.status {
            Outcome::Skipped => self.skipped += 1,
            Outcome::Failed => self.failed += 1,
            _ => {
                self.done += 1;
                self.bytes += line.bytes.unwrap_or(0);
            }
        }
    }
}

pub(super) fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn temp_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(
        ".{name}.{}.{}.tmp",
        file_stem(&hostname()),
        std::process::id()
    ))
}

/// Write `dir/name` by way of a temporary file in `dir`, flushed to disk and renamed.
fn write_atomically(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut fs::File) -> Result<(), ArchiveError>,
) -> Result<u64, ArchiveError> {
    let tmp = temp_path(dir, name);
    let result = (|| {
        let mut f =
            fs::File::create(&tmp).map_err(io_err(format!("creating {}", tmp.display())))?;
        write(&mut f)?;
        f.sync_all()
            .map_err(io_err(format!("flushing {}", tmp.display())))?;
        let bytes = f
            .metadata()
            .map_err(io_err(format!("reading {}", tmp.display())))?
            .len();
        drop(f);
        fs::rename(&tmp, dir.join(name))
            .map_err(io_err(format!("renaming {} to {name}", tmp.display())))?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The entry in `dir` for `tag`: `Ok(None)` when there is none.
pub fn read_entry(dir: &Path, tag: &str) -> Result<Option<ArchiveEntry>, String> {
    let path = dir.join(format!("{}.json", file_stem(tag)));
    match fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Index files that could not be read: (file name, reason).
pub type BadEntries = Vec<(String, String)>;

/// Every entry in `dir` (none when `dir` does not exist), with the index files that could not
/// be read.
pub fn read_index(dir: &Path) -> Result<(Vec<ArchiveEntry>, BadEntries), ArchiveError> {
    let mut entries = Vec::new();
    let mut bad = Vec::new();
    let listing = match fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((entries, bad)),
        Err(e) => return Err(io_err(format!("listing {}", dir.display()))(e)),
    };
    let mut names: Vec<String> = listing
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        match fs::read_to_string(dir.join(&name))
            .map_err(|e| e.to_string())
            .and_then(|t| {
                serde_json::from_str::<ArchiveEntry>(&t)
                    .map_err(|e| format!("not an index entry: {e}"))
            }) {
            Ok(e) => entries.push(e),
            Err(why) => bad.push((name, why)),
        }
    }
    entries.sort_by(|a, b| (a.image.kind, &a.image.tag).cmp(&(b.image.kind, &b.image.tag)));
    Ok((entries, bad))
}

/// One image's transfer: a progress message (`verb` and the tag), its line (a failure logged),
/// counted into `summary` and handed to `on_line`. Shared by saving, loading, pushing and
/// pulling.
pub(crate) fn transfer_one(
    tag: &str,
    verb: &str,
    one: impl FnOnce() -> TransferLine,
    progress: Progress<'_>,
    on_line: &mut dyn FnMut(&TransferLine),
    summary: &mut TransferSummary,
) {
    progress(&format!("{verb} {tag}"));
    let line = one();
    if line.status == Outcome::Failed {
        tracing::warn!(image = %tag, "{verb} failed: {}", line.detail);
    }
    summary.count(&line);
    on_line(&line);
}

/// Save `images` into `dir` (created if absent), one tar and one index entry each; each image
/// gets one line.
pub fn save_to_dir(
    client: &Client,
    dir: &Path,
    images: &[&ImageInfo],
    progress: Progress<'_>,
    on_line: &mut dyn FnMut(&TransferLine),
) -> Result<TransferSummary, ArchiveError> {
    let started = Instant::now();
    fs::create_dir_all(dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let mut summary = TransferSummary::default();
    for image in images {
        transfer_one(
            &image.tag,
            "saving",
            || save_one(client, dir, image),
            progress,
            on_line,
            &mut summary,
        );
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn save_one(client: &Client, dir: &Path, image: &ImageInfo) -> TransferLine {
    let started = Instant::now();
    let stem = file_stem(&image.tag);
    match read_entry(dir, &image.tag) {
        Ok(Some(e)) if e.image.id == image.id && dir.join(&e.file).is_file() => {
            let mut l =
                TransferLine::new(image, Outcome::Skipped, started).detail("in the directory");
            l.file = Some(e.file);
            l.bytes = Some(e.bytes);
            return l;
        }
        Ok(Some(e)) if e.image.id != image.id && dir.join(&e.file).is_file() => {
            let mut l = TransferLine::new(image, Outcome::Skipped, started).detail(format!(
                "the directory holds another build of this tag ({}); remove {stem}.json to \
                 replace it",
                e.image.id
            ));
            l.file = Some(e.file);
            return l;
        }
        // Absent, unreadable, or naming a tar that is gone: (re)write it.
        _ => {}
    }
    let file = tar_name(&image.tag, &image.id);
    let docker = client.docker();
    let written = write_atomically(dir, &file, |f| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
        client.block_on(async {
            let mut stream = docker.export_image(&image.tag);
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|source| ArchiveError::Docker {
                    context: format!("exporting {}", image.tag),
                    source,
                })?;
                out.write_all(&chunk)
                    .map_err(io_err(format!("writing {file}")))?;
            }
            Ok::<(), ArchiveError>(())
        })?;
        out.flush().map_err(io_err(format!("writing {file}")))
    });
    let bytes = match written {
        Ok(b) => b,
        Err(e) => return TransferLine::new(image, Outcome::Failed, started).detail(e.to_string()),
    };
    let entry = ArchiveEntry {
        image: image.clone(),
        file: file.clone(),
        bytes,
        saved_by: hostname(),
        saved_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let json = serde_json::to_vec_pretty(&entry).expect("entries serialize");
    if let Err(e) = write_atomically(dir, &format!("{stem}.json"), |f| {
        f.write_all(&json)
            .map_err(io_err("writing the index entry"))
    }) {
        return TransferLine::new(image, Outcome::Failed, started).detail(e.to_string());
    }
    let mut l = TransferLine::new(image, Outcome::Saved, started);
    l.file = Some(file);
    l.bytes = Some(bytes);
    l
}

/// Load the images of `dir`'s index that `selection` takes and this engine lacks (an absent
/// `dir` holds nothing); each gets one line, and so does each index file that cannot be read.
pub fn load_from_dir(
    client: &Client,
    dir: &Path,
    selection: &Selection,
    progress: Progress<'_>,
    on_line: &mut dyn FnMut(&TransferLine),
) -> Result<TransferSummary, ArchiveError> {
    let started = Instant::now();
    let (entries, bad) = read_index(dir)?;
    let mut summary = TransferSummary::default();
    for (name, why) in bad {
        let line = TransferLine {
            tag: name,
            kind: None,
            id: None,
            status: Outcome::Failed,
            detail: why,
            file: None,
            bytes: None,
            seconds: 0.0,
        };
        tracing::warn!(file = %line.tag, "unreadable index entry: {}", line.detail);
        summary.count(&line);
        on_line(&line);
    }
    let infos: Vec<ImageInfo> = entries.iter().map(|e| e.image.clone()).collect();
    let picked: BTreeSet<&str> = selection
        .pick(&infos)
        .into_iter()
        .map(|i| i.tag.as_str())
        .collect();
    for entry in entries
        .iter()
        .filter(|e| picked.contains(e.image.tag.as_str()))
    {
        transfer_one(
            &entry.image.tag,
            "loading",
            || load_one(client, dir, entry),
            progress,
            on_line,
            &mut summary,
        );
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn load_one(client: &Client, dir: &Path, entry: &ArchiveEntry) -> TransferLine {
    let started = Instant::now();
    let image = &entry.image;
    let with_file = |mut l: TransferLine| {
        l.file = Some(entry.file.clone());
        l
    };
    let failed = |detail: String| {
        with_file(TransferLine::new(image, Outcome::Failed, started).detail(detail))
    };
    let before = match image_id(client, &image.tag) {
        Ok(id) => id,
        Err(e) => return failed(e.to_string()),
    };
    if before.as_deref() == Some(image.id.as_str()) {
        return with_file(TransferLine::new(image, Outcome::Skipped, started).detail("present"));
    }
    if entry.file.contains('/') || entry.file.starts_with('.') {
        return failed(format!(
            "the entry names a file outside the directory: {}",
            entry.file
        ));
    }
    let path = dir.join(&entry.file);
    let file = match fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => return failed(format!("opening {}: {e}", path.display())),
    };
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let chunks = super::rootfs::file_chunks(file);
    let docker = client.docker();
    let opts = bollard::query_parameters::ImportImageOptionsBuilder::default()
        .quiet(true)
        .build();
    let loaded = client.block_on(async {
        let mut stream = docker.import_image_stream(opts, chunks, None);
        while let Some(item) = stream.next().await {
            item?;
        }
        Ok::<(), bollard::errors::Error>(())
    });
    if let Err(e) = loaded {
        return failed(format!("loading {}: {e}", path.display()));
    }
    match image_id(client, &image.tag) {
        Ok(Some(id)) if id == image.id => {
            let mut l = with_file(TransferLine::new(image, Outcome::Loaded, started));
            l.bytes = Some(bytes);
            if let Some(old) = before {
                l.detail = format!("replaced another build of this tag ({old})");
            }
            l
        }
        Ok(Some(id)) => failed(format!(
            "after loading, the tag names {id}, not the entry's image"
        )),
        Ok(None) => failed(format!("{} did not hold this tag", path.display())),
        Err(e) => failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(tag: &str, id: &str, base: Option<&str>) -> ImageInfo {
        ImageInfo {
            tag: tag.into(),
            id: id.into(),
            kind: ImageKind::of_tag(tag),
            base: base.map(String::from),
        }
    }

    #[test]
    fn kinds_follow_from_names() {
        use ImageKind::*;
        for (tag, kind) in [
            ("swe-forge/python-base:bookworm-0123456789ab", Base),
            ("swe-forge/node-base:bookworm-0123456789ab", Base),
            ("swe-forge/mini:0123456789ab", Repo),
            ("swe-forge/some-base:0123456789ab", Repo),
            ("swe-forge/mini-task:0123456789abcdef", Task),
            ("swe-forge/x-task:0123456789ab", Repo),
            ("swe-forge/mini-taskbase:0123456789abcdef", Taskbase),
        ] {
            assert_eq!(ImageKind::of_tag(tag), kind, "{tag}");
        }
    }

    #[test]
    fn stems_are_safe_and_distinct() {
        assert_eq!(
            file_stem("swe-forge/python-base:bookworm-abc"),
            "python-base+bookworm-abc"
        );
        assert_eq!(file_stem("swe-forge/a/b:c"), "a~b+c");
        // Tags whose plain dash-joined forms would collide keep distinct stems.
        assert_ne!(file_stem("swe-forge/a:b-c"), file_stem("swe-forge/a-b:c"));
        for t in ["swe-forge/x:y", "swe-forge/x/y:z", "reg:5000/p/x:y"] {
            let s = file_stem(t);
            assert!(!s.contains('/') && !s.starts_with('.'), "{s}");
        }
        assert_eq!(
            tar_name("swe-forge/mini:abc", "sha256:0123456789abcdef"),
            "mini+abc.0123456789ab.tar"
        );
    }

    #[test]
    fn selection_by_kind_name_and_tasks() {
        let all = vec![
            info(
                "swe-forge/python-base:bookworm-aaaaaaaaaaaa",
                "sha256:b1",
                None,
            ),
            info(
                "swe-forge/java-base:bookworm-bbbbbbbbbbbb",
                "sha256:b2",
                None,
            ),
            info(
                "swe-forge/mini:cccccccccccc",
                "sha256:r1",
                Some("sha256:b1"),
            ),
            info(
                "swe-forge/other:dddddddddddd",
                "sha256:r2",
                Some("sha256:b2"),
            ),
            info("swe-forge/mini-task:0123456789abcdef", "sha256:t1", None),
            info(
                "swe-forge/mini-taskbase:0123456789abcdef",
                "sha256:tb",
                None,
            ),
        ];
        let tags = |s: &Selection| -> Vec<String> {
            s.pick(&all).into_iter().map(|i| i.tag.clone()).collect()
        };
        assert_eq!(tags(&Selection::default()).len(), all.len());
        let repo_only = Selection::new(vec![ImageKind::Repo], &[], None).unwrap();
        assert_eq!(
            tags(&repo_only),
            [
                "swe-forge/mini:cccccccccccc",
                "swe-forge/other:dddddddddddd"
            ]
        );
        let named = Selection::new(vec![], &["swe-forge/mini*".into()], None).unwrap();
        assert_eq!(tags(&named).len(), 3);
        let refs = BTreeSet::from([
            "swe-forge/mini-task:0123456789abcdef".to_string(),
            "swe-forge/mini:cccccccccccc".to_string(),
        ]);
        let by_tasks = Selection::new(vec![], &[], Some(refs.clone())).unwrap();
        assert_eq!(
            tags(&by_tasks),
            [
                "swe-forge/python-base:bookworm-aaaaaaaaaaaa",
                "swe-forge/mini:cccccccccccc",
                "swe-forge/mini-task:0123456789abcdef"
            ]
        );
        let tasks_only = Selection::new(vec![ImageKind::Task], &[], Some(refs)).unwrap();
        assert_eq!(tags(&tasks_only), ["swe-forge/mini-task:0123456789abcdef"]);
        assert!(Selection::new(vec![], &["[".into()], None).is_err());
    }

    #[test]
    fn index_round_trips_and_reports_bad_entries() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_index(&dir.path().join("absent")).unwrap().0.is_empty());
        let entry = ArchiveEntry {
            image: info(
                "swe-forge/mini:cccccccccccc",
                "sha256:r1",
                Some("sha256:b1"),
            ),
            file: tar_name("swe-forge/mini:cccccccccccc", "sha256:r1"),
            bytes: 3,
            saved_by: "node1".into(),
            saved_unix: 1,
        };
        let name = format!("{}.json", file_stem(&entry.image.tag));
        let written = write_atomically(dir.path(), &name, |f| {
            f.write_all(&serde_json::to_vec(&entry).unwrap())
                .map_err(io_err("w"))
        })
        .unwrap();
        assert!(written > 0);
        fs::write(dir.path().join("junk.json"), "{not json").unwrap();
        fs::write(dir.path().join(".x.json.h.1.tmp"), "partial").unwrap();
        let (entries, bad) = read_index(dir.path()).unwrap();
        assert_eq!(entries, vec![entry.clone()]);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].0, "junk.json");
        assert_eq!(
            read_entry(dir.path(), &entry.image.tag).unwrap(),
            Some(entry)
        );
        assert_eq!(read_entry(dir.path(), "swe-forge/absent:1").unwrap(), None);
        // No temporary file is left behind.
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "only the planted one: {leftovers:?}");
    }

    #[test]
    fn summary_counts() {
        let i = info("swe-forge/mini:cccccccccccc", "sha256:r1", None);
        let mut s = TransferSummary::default();
        let now = Instant::now();
        let mut saved = TransferLine::new(&i, Outcome::Saved, now);
        saved.bytes = Some(10);
        s.count(&saved);
        s.count(&TransferLine::new(&i, Outcome::Skipped, now));
        s.count(&TransferLine::new(&i, Outcome::Failed, now));
        assert_eq!((s.done, s.skipped, s.failed, s.bytes), (1, 1, 1, 10));
    }
}
