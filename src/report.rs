//! Reports: what a run's output directory says, gathered into `report.json` (data) and
//! `report.html` (a self-contained page: inline CSS, inline SVG charts, no network).
//!
//! Inputs, all optional but not all absent: `summary.json` (per-seed counts of the latest
//! `run`), `candidates.jsonl` (every decided candidate), `tasks.jsonl` (the tasks) and, for
//! stage times older outputs do not carry in `summary.json`, `state.db`. They are read leniently:
//! unknown fields are ignored, missing optional ones take defaults, and a line that does not
//! parse is skipped with a warning (listed in the report), so a report of an older or newer
//! output still comes out.
//!
//! # report.json
//!
//! ```text
//! {
//!   "tool_version": "0.1.0", "generated_at": "2025-01-01T00:00:00Z", "out": "OUT",
//!   "sandbox": "local" | null, "interrupted": bool, "seconds": f64 | null,
//!   "inputs": {"summary": bool, "candidates": bool, "tasks": bool, "state_db": bool},
//!   "funnel": {"enumerated": N|null, "sampled": N|null, "decided": N, "killed": N,
//!              "survivors": N, "accepted": N, "rejected": N, "tasks": N, "unknown": [seed]},
//!   "reasons":    [{"reason": "not-killed", "count": N, "share": f64}],      // count desc
//!   "mutators":   [{"name": "py-compare-flip", "decided": N, "accepted": N, "rate": f64}],
//!   "categories": [{"name": "boundary", "decided": N, "accepted": N, "rate": f64}],
//!   "difficulty": {"tasks": N, "killing_tests": H, "function_lines": H, "fix_lines": H,
//!                  "score": H},
//!   "stages": {"recorded": bool, "total": [{"stage": "verify", "seconds": f64, "share": f64}],
//!              "not_recorded": ["seed", …]},
//!   "seeds": [{"seed", "status", "detail", "commit", "files", "skipped_files", "enumerated",
//!              "sampled", "resumed", "decided", "killed", "accepted", "rejected": {reason: N},
//!              "tasks", "seconds", "image", "runner": "resident"|"fresh"|null,
//!              "runner_fallback": why not resident | null,
//!              "degraded": {"uncollected": N, "total": N, "errors": {file: error}} (only
//!              when the status is `degraded`), "in_summary": bool,
//!              "stages": {stage: seconds} | null, "stages_from": "summary.json"|"state.db"|null}],
//!   "warnings": ["candidates.jsonl:7: …"]
//! }
//! H = {"count": N, "min": f64|null, "max": f64|null, "mean": f64|null,
//!      "bins": [{"lo": f64, "hi": f64, "label": "3–4", "count": N}]}
//! ```
//!
//! Definitions. Per seed, counts come from `summary.json` when the seed is in it, else (a seed
//! decided by an earlier `run` into the same directory) from `candidates.jsonl`, with
//! `enumerated` unknown and `sampled` from `logs/<seed>/sampled.jsonl` when present. The funnel
//! sums the seeds; its `enumerated` and `sampled` are null while any seed lacks them (listed in
//! `funnel.unknown`), as a partial sum would read as the whole. `killed`: screening saw a covering test fail;
//! `survivors` = `decided − killed`. `rate` = accepted / decided. Histograms are over the tasks
//! in `tasks.jsonl`: integer features get one bin per value, or equal-width integer bins when
//! there are more than [`MAX_BINS`] values; the score gets ten bins over [0, 1]. Stage times
//! come from `summary.json`'s `stages` per seed, else from `state.db` (totals over every run
//! into the directory), else the seed is listed in `not_recorded`.

mod html;
mod input;
pub mod svg;
mod tally;
#[cfg(test)]
mod tests;

pub use html::render_html;
pub use tally::{int_histogram, unit_histogram};

use crate::store::Store;
use input::{read, read_jsonl, training, CandidateLine, SummaryFile, TaskLine};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tally::{difficulty, funnel, reasons, seed_rows, stages, yields};

/// The most bins an integer histogram gets.
pub const MAX_BINS: usize = 12;

/// Why no report could be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: no such output directory", .0.display())]
    NoDir(PathBuf),
    #[error(
        "{}: not a swe-forge output directory (no summary.json, candidates.jsonl or tasks.jsonl)",
        .0.display()
    )]
    NoOutput(PathBuf),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("report template `{0}` is missing")]
    MissingTemplate(String),
    #[error("rendering the report: {0}")]
    Render(#[from] minijinja::Error),
}

// ---- the report ---------------------------------------------------------------------------

/// Everything report.json holds (see the module docs for the shape).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    pub tool_version: String,
    pub generated_at: String,
    pub out: String,
    pub sandbox: Option<String>,
    pub interrupted: bool,
    pub seconds: Option<f64>,
    pub inputs: Inputs,
    pub funnel: Funnel,
    pub reasons: Vec<ReasonCount>,
    pub mutators: Vec<Yield>,
    pub categories: Vec<Yield>,
    pub difficulty: DifficultyReport,
    pub stages: Stages,
    pub seeds: Vec<SeedRow>,
    pub warnings: Vec<String>,
    /// Training curves, when `OUT/train/metrics.jsonl` exists (`swe-forge train`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<Training>,
}

/// The training run next to the tasks: one point per step of `train/metrics.jsonl`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Training {
    pub metrics: String,
    pub points: Vec<TrainPoint>,
    /// Warm-start and GRPO steps (evaluation lines not counted).
    pub steps: usize,
    /// Verified rollouts in all.
    pub rollouts: usize,
    /// Pass rate over the first and the last quarter of the RL steps' rollouts.
    pub first_pass_rate: Option<f64>,
    pub last_pass_rate: Option<f64>,
}

/// One line of train/metrics.jsonl, as the report reads it (unknown fields ignored).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TrainPoint {
    pub step: usize,
    #[serde(default)]
    pub phase: String,
    #[serde(default)]
    pub loss: Option<f64>,
    #[serde(default)]
    pub rollouts: usize,
    #[serde(default)]
    pub reward_mean: Option<f64>,
    #[serde(default)]
    pub pass_rate: Option<f64>,
    /// Share of the step's groups whose rewards were not all equal.
    #[serde(default)]
    pub signal_share: Option<f64>,
    /// Share of the tasks served this step above the easiest level.
    #[serde(default)]
    pub harder_share: Option<f64>,
    #[serde(default)]
    pub tokens_per_s: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Inputs {
    pub summary: bool,
    pub candidates: bool,
    pub tasks: bool,
    pub state_db: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Funnel {
    pub enumerated: Option<usize>,
    pub sampled: Option<usize>,
    pub decided: usize,
    pub killed: usize,
    pub survivors: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub tasks: usize,
    /// Seeds whose enumerated or sampled count is unknown (not in summary.json); while there
    /// are any, the funnel's `enumerated` or `sampled` is null.
    pub unknown: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReasonCount {
    pub reason: String,
    pub count: usize,
    /// Of all rejections.
    pub share: f64,
}

/// How many candidates of one mutator (or category) were decided and accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Yield {
    pub name: String,
    pub decided: usize,
    pub accepted: usize,
    pub rate: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DifficultyReport {
    pub tasks: usize,
    pub killing_tests: Histogram,
    pub function_lines: Histogram,
    pub fix_lines: Histogram,
    pub score: Histogram,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub count: usize,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub bins: Vec<Bin>,
}

/// Values `lo <= v <= hi` for integer bins; `lo <= v < hi` for the score (the last bin
/// includes 1.0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub label: String,
    pub count: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stages {
    /// Whether any seed has stage times.
    pub recorded: bool,
    pub total: Vec<StageTime>,
    /// Seeds without stage times.
    pub not_recorded: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    pub stage: String,
    pub seconds: f64,
    pub share: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedRow {
    pub seed: String,
    pub status: String,
    pub detail: String,
    pub commit: Option<String>,
    pub files: Option<usize>,
    pub skipped_files: Option<usize>,
    pub enumerated: Option<usize>,
    pub sampled: Option<usize>,
    pub resumed: Option<usize>,
    pub decided: usize,
    pub killed: usize,
    pub accepted: usize,
    pub rejected: BTreeMap<String, usize>,
    pub tasks: usize,
    pub seconds: Option<f64>,
    pub image: Option<String>,
    /// `resident` or `fresh` (how the seed's tests ran), when summary.json says.
    pub runner: Option<String>,
    /// Why the resident runner was not used for the seed.
    pub runner_fallback: Option<String>,
    /// Why the seed is `degraded`: its test files that fail to collect on the clean code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<crate::pipeline::Degraded>,
    /// Whether the latest `run` into the directory (summary.json) covered this seed.
    pub in_summary: bool,
    pub stages: Option<BTreeMap<String, f64>>,
    pub stages_from: Option<String>,
}

/// What [`write`] produced.
#[derive(Clone, Debug)]
pub struct Written {
    pub report: Report,
    pub json: PathBuf,
    pub html: PathBuf,
}

/// Read the output directory `out` and gather the report.
pub fn build(out: &Path) -> Result<Report, ReportError> {
    if !out.is_dir() {
        return Err(ReportError::NoDir(out.to_path_buf()));
    }
    let mut warnings = Vec::new();
    let summary_path = out.join("summary.json");
    let cands_path = out.join("candidates.jsonl");
    let tasks_path = out.join("tasks.jsonl");
    let db_path = out.join("state.db");
    let inputs = Inputs {
        summary: summary_path.is_file(),
        candidates: cands_path.is_file(),
        tasks: tasks_path.is_file(),
        state_db: db_path.is_file(),
    };
    if !(inputs.summary || inputs.candidates || inputs.tasks) {
        return Err(ReportError::NoOutput(out.to_path_buf()));
    }
    let summary: SummaryFile = if inputs.summary {
        let text = read(&summary_path)?;
        serde_json::from_str(&text).unwrap_or_else(|e| {
            warnings.push(format!("summary.json: {e} (ignored)"));
            SummaryFile::default()
        })
    } else {
        SummaryFile::default()
    };
    let cands: Vec<CandidateLine> = read_jsonl(&cands_path, &mut warnings)?;
    let tasks: Vec<TaskLine> = read_jsonl(&tasks_path, &mut warnings)?;
    // Stage times the summary lacks (older outputs, seeds of earlier runs) from the store.
    let db_stages = if inputs.state_db {
        match Store::open(&db_path).and_then(|s| s.stage_times()) {
            Ok(rows) => {
                let mut m: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
                for (seed, stage, secs) in rows {
                    *m.entry(seed).or_default().entry(stage).or_default() += secs;
                }
                m
            }
            Err(e) => {
                warnings.push(format!("state.db: {e} (stage times not read)"));
                BTreeMap::new()
            }
        }
    } else {
        BTreeMap::new()
    };
    let mut report = Report {
        tool_version: crate::VERSION.to_string(),
        generated_at: crate::task::now_utc(),
        out: out.display().to_string(),
        sandbox: summary.sandbox.clone(),
        interrupted: summary.interrupted,
        seconds: summary.seconds,
        inputs,
        warnings,
        ..Default::default()
    };
    report.seeds = seed_rows(&summary, &cands, &tasks, &db_stages);
    for row in report.seeds.iter_mut().filter(|r| r.sampled.is_none()) {
        // `run` lists every seed's sampled candidates in its logs.
        let listing = out.join("logs").join(&row.seed).join("sampled.jsonl");
        if let Ok(text) = std::fs::read_to_string(listing) {
            row.sampled = Some(text.lines().filter(|l| !l.trim().is_empty()).count());
        }
    }
    report.funnel = funnel(&report.seeds, tasks.len());
    report.reasons = reasons(&report.seeds);
    report.mutators = yields(cands.iter().map(|c| (c.mutator.as_str(), c.accepted())));
    report.categories = yields(cands.iter().map(|c| (c.category.as_str(), c.accepted())));
    report.difficulty = difficulty(&tasks);
    report.stages = stages(&report.seeds);
    report.training = training(out, &mut report.warnings)?;
    Ok(report)
}

/// Build the report of `out` and write `out/report.json` and `out/report.html`.
pub fn write(out: &Path) -> Result<Written, ReportError> {
    let report = build(out)?;
    let html = render_html(&report)?;
    let json_path = out.join("report.json");
    let html_path = out.join("report.html");
    let json = serde_json::to_string_pretty(&report).expect("report serializes");
    std::fs::write(&json_path, json + "\n").map_err(|source| ReportError::Io {
        context: format!("writing {}", json_path.display()),
        source,
    })?;
    std::fs::write(&html_path, html).map_err(|source| ReportError::Io {
        context: format!("writing {}", html_path.display()),
        source,
    })?;
    Ok(Written {
        report,
        json: json_path,
        html: html_path,
    })
}
