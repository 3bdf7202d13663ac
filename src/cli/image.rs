//! `image`: the base image of a language, the task images a tasks file names, and saving and
//! loading swe-forge's images through a shared directory or a registry.

use anyhow::{Context, Result};
use std::path::PathBuf;
use swe_forge::lang::Language;

/// `image bootstrap`.
pub(crate) fn bootstrap(cache: PathBuf, lang: Language, force: bool, json: bool) -> Result<i32> {
    let started = std::time::Instant::now();
    let toolchain = swe_forge::toolchain::for_language(lang)
        .with_context(|| format!("no toolchain builds {lang} projects"))?;
    let img = swe_forge::sandbox::image::bootstrap(&cache, &toolchain.base(), force, &|line| {
        eprintln!("{line}")
    })
    .with_context(|| format!("bootstrapping the {lang} base image"))?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "tag": img.tag, "id": img.id, "built": img.built,
                "seconds": started.elapsed().as_secs_f64(),
            })
        );
    } else {
        println!(
            "{} {} ({}, {:.1}s)",
            img.tag,
            img.id,
            if img.built { "built" } else { "present" },
            started.elapsed().as_secs_f64()
        );
    }
    Ok(0)
}

/// `image tasks`.
pub(crate) fn tasks(tasks: PathBuf, cache: PathBuf, json: bool) -> Result<i32> {
    let text =
        std::fs::read_to_string(&tasks).with_context(|| format!("reading {}", tasks.display()))?;
    let mut records = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let t: swe_forge::task::Task = serde_json::from_str(line)
            .with_context(|| format!("{}: line {} is not a task record", tasks.display(), i + 1))?;
        records.push(t);
    }
    let (summary, lines) = swe_forge::task_images::build_from_records(
        &records,
        &tasks,
        &cache,
        Default::default(),
        &|line| tracing::info!("{line}"),
    )
    .map_err(anyhow::Error::msg)?;
    for l in &lines {
        if json {
            println!("{}", serde_json::to_string(l)?);
        } else {
            println!(
                "{:<8} {}  {}{}",
                l.status,
                l.image.as_deref().unwrap_or("-"),
                l.instance_id,
                if l.detail.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", l.detail)
                }
            );
        }
    }
    if json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!(
            "task images: {} built, {} reused, {} failed in {:.1}s; layer median {} B, max {} B",
            summary.built,
            summary.reused,
            summary.failed,
            summary.seconds,
            summary.layer_bytes_median.unwrap_or(0),
            summary.layer_bytes_max.unwrap_or(0)
        );
    }
    Ok(if summary.failed > 0 { 1 } else { 0 })
}

/// The bar `image save` and `image load` show on a terminal.
fn transfer_bar(verb: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {verb} {{pos}} images · {{msg}} · {{elapsed_precise}}"
        ))
        .expect("valid template"),
    );
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

fn print_transfer_line(
    pb: &indicatif::ProgressBar,
    line: &swe_forge::sandbox::image::archive::TransferLine,
    json: bool,
) {
    pb.inc(1);
    let text = if json {
        serde_json::to_string(line).expect("lines serialize")
    } else {
        format!(
            "{:<8} {}  {}{}",
            line.status.name(),
            line.tag,
            line.file.as_deref().unwrap_or("-"),
            if line.detail.is_empty() {
                String::new()
            } else {
                format!("  ({})", line.detail)
            }
        )
    };
    pb.suspend(|| println!("{text}"));
}

fn print_transfer_summary(
    verb: &str,
    summary: &swe_forge::sandbox::image::archive::TransferSummary,
    json: bool,
) -> i32 {
    if json {
        println!(
            "{}",
            serde_json::json!({
                verb: summary.done, "skipped": summary.skipped, "failed": summary.failed,
                "bytes": summary.bytes, "seconds": summary.seconds,
            })
        );
    } else {
        println!(
            "images: {} {verb}, {} skipped, {} failed; {:.1} MB in {:.1}s",
            summary.done,
            summary.skipped,
            summary.failed,
            summary.bytes as f64 / 1e6,
            summary.seconds
        );
    }
    if summary.failed > 0 {
        1
    } else {
        0
    }
}

fn selection(
    pick: &crate::cli::args::ImagePick,
) -> Result<swe_forge::sandbox::image::archive::Selection> {
    use swe_forge::sandbox::image::archive;
    let tasks = match &pick.tasks {
        Some(p) => Some(archive::task_refs(p)?),
        None => None,
    };
    Ok(archive::Selection::new(
        pick.kind.clone(),
        &pick.name,
        tasks,
    )?)
}

fn connect() -> Result<swe_forge::sandbox::docker::Client> {
    swe_forge::sandbox::docker::Client::connect(std::time::Duration::from_secs(5))
        .context("connecting to the Docker daemon")
}

/// `image save`.
pub(crate) fn save(dir: Option<PathBuf>, pick: crate::cli::args::ImagePick) -> Result<i32> {
    use swe_forge::sandbox::image::{archive, registry};
    let sel = selection(&pick)?;
    let client = connect()?;
    let local = archive::list_local(&client)?;
    let images = sel.pick(&local);
    tracing::info!(
        "{} of {} swe-forge images selected",
        images.len(),
        local.len()
    );
    let verb = if pick.registry.is_some() {
        "pushed"
    } else {
        "saved"
    };
    let pb = transfer_bar(if pick.registry.is_some() {
        "pushing"
    } else {
        "saving"
    });
    let progress = |m: &str| pb.set_message(m.to_string());
    let mut on_line = |l: &archive::TransferLine| print_transfer_line(&pb, l, pick.json);
    let summary = match (&pick.registry, &dir) {
        (Some(reg), _) => registry::push(&client, reg, &images, &progress, &mut on_line),
        (None, Some(dir)) => archive::save_to_dir(&client, dir, &images, &progress, &mut on_line)?,
        (None, None) => anyhow::bail!("give DIR or --registry"),
    };
    pb.finish_and_clear();
    Ok(print_transfer_summary(verb, &summary, pick.json))
}

/// `image load`.
pub(crate) fn load(dir: Option<PathBuf>, pick: crate::cli::args::ImagePick) -> Result<i32> {
    use swe_forge::sandbox::image::{archive, registry};
    let sel = selection(&pick)?;
    let verb = if pick.registry.is_some() {
        "pulled"
    } else {
        "loaded"
    };
    if let (None, Some(dir)) = (&pick.registry, &dir) {
        if !dir.exists() {
            tracing::info!("{} does not exist: nothing to load", dir.display());
            return Ok(print_transfer_summary(verb, &Default::default(), pick.json));
        }
    }
    let client = connect()?;
    let pb = transfer_bar(if pick.registry.is_some() {
        "pulling"
    } else {
        "loading"
    });
    let progress = |m: &str| pb.set_message(m.to_string());
    let mut on_line = |l: &archive::TransferLine| print_transfer_line(&pb, l, pick.json);
    let summary = match (&pick.registry, &dir) {
        (Some(reg), _) => {
            let tags = registry::wanted(reg, &sel)?;
            registry::pull(&client, reg, &tags, &progress, &mut on_line)
        }
        (None, Some(dir)) => archive::load_from_dir(&client, dir, &sel, &progress, &mut on_line)?,
        (None, None) => anyhow::bail!("give DIR or --registry"),
    };
    pb.finish_and_clear();
    Ok(print_transfer_summary(verb, &summary, pick.json))
}
