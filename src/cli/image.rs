//! `image`: the base image of a language, and the task images a tasks file names.

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
