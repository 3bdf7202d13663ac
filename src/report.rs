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
//!              "runner_fallback": why not resident | null, "in_summary": bool,
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

pub mod svg;

use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use svg::{Bar, Chart};

/// The most bins an integer histogram gets.
pub const MAX_BINS: usize = 12;

/// The pipeline's stages in their order; other stage names follow alphabetically.
const STAGE_ORDER: [&str; 8] = [
    "import",
    "environment",
    "baseline",
    "mutate",
    "verify",
    "synthesize",
    "issue",
    "emit",
];

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

// ---- inputs, read leniently -------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SummaryFile {
    sandbox: Option<String>,
    seeds: Vec<SeedLine>,
    interrupted: bool,
    seconds: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SeedLine {
    seed: String,
    status: String,
    detail: String,
    commit: Option<String>,
    files: usize,
    skipped_files: usize,
    enumerated: usize,
    sampled: usize,
    resumed: usize,
    decided: usize,
    killed: usize,
    accepted: usize,
    rejected: BTreeMap<String, usize>,
    seconds: f64,
    image: Option<String>,
    runner: Option<String>,
    runner_fallback: Option<String>,
    stages: Option<BTreeMap<String, f64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CandidateLine {
    seed: String,
    mutator: String,
    category: String,
    status: String,
    reason: Option<String>,
    runs: Vec<RunLine>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RunLine {
    label: String,
    summary: String,
}

impl CandidateLine {
    fn accepted(&self) -> bool {
        self.status == "accepted"
    }

    /// Screening saw a covering test fail: the screening run's summary counts failures or
    /// errors. (The same rule as the pipeline's tally, from the line's run summaries.)
    fn killed(&self) -> bool {
        self.runs.first().is_some_and(|r| {
            r.label == "screen"
                && r.summary
                    .split(['(', ','])
                    .map(str::trim)
                    .any(|part| part.ends_with(" failed") || part.ends_with(" error"))
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskLine {
    repo: String,
    metadata: TaskMeta,
}

impl TaskLine {
    /// The seed the task came from: its manifest name (`environment.seed`), which can differ
    /// from `repo` (`boltons` and `mahmoud/boltons`); older records have only `repo`.
    fn seed(&self) -> &str {
        if self.metadata.environment.seed.is_empty() {
            &self.repo
        } else {
            &self.metadata.environment.seed
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskMeta {
    difficulty: DifficultyLine,
    environment: EnvironmentLine,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EnvironmentLine {
    seed: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DifficultyLine {
    killing_tests: Option<f64>,
    function_lines: Option<f64>,
    fix_lines: Option<f64>,
    score: Option<f64>,
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

/// Read `out/train/metrics.jsonl`, when present.
fn training(out: &Path, warnings: &mut Vec<String>) -> Result<Option<Training>, ReportError> {
    let path = out.join("train").join("metrics.jsonl");
    if !path.is_file() {
        return Ok(None);
    }
    let points: Vec<TrainPoint> = read_jsonl(&path, warnings)?;
    let rl: Vec<&TrainPoint> = points.iter().filter(|p| p.phase == "grpo").collect();
    let quarter = (rl.len() / 4).max(1);
    let rate = |ps: &[&TrainPoint]| -> Option<f64> {
        let (mut passed, mut n) = (0.0, 0usize);
        for p in ps {
            if let Some(r) = p.pass_rate {
                passed += r * p.rollouts as f64;
                n += p.rollouts;
            }
        }
        (n > 0).then(|| passed / n as f64)
    };
    Ok(Some(Training {
        metrics: path.display().to_string(),
        rollouts: rl.iter().map(|p| p.rollouts).sum(),
        steps: points
            .iter()
            .filter(|p| p.phase == "sft" || p.phase == "grpo")
            .count(),
        first_pass_rate: rate(&rl[..quarter.min(rl.len())]),
        last_pass_rate: rate(&rl[rl.len().saturating_sub(quarter)..]),
        points,
    }))
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

fn read(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        context: format!("reading {}", path.display()),
        source,
    })
}

/// The objects of a JSON-lines file (absent: none); a line that does not parse is a warning.
fn read_jsonl<T: serde::de::DeserializeOwned>(
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<T>, ReportError> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut out = Vec::new();
    for (i, line) in read(path)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(v) => out.push(v),
            Err(e) => warnings.push(format!("{name}:{}: {e} (line skipped)", i + 1)),
        }
    }
    Ok(out)
}

fn seed_rows(
    summary: &SummaryFile,
    cands: &[CandidateLine],
    tasks: &[TaskLine],
    db_stages: &BTreeMap<String, BTreeMap<String, f64>>,
) -> Vec<SeedRow> {
    let mut tasks_per_seed: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tasks {
        *tasks_per_seed.entry(t.seed()).or_default() += 1;
    }
    let with_stages = |mut row: SeedRow, from_summary: Option<&BTreeMap<String, f64>>| {
        if let Some(s) = from_summary {
            row.stages = Some(s.clone());
            row.stages_from = Some("summary.json".into());
        } else if let Some(s) = db_stages.get(&row.seed) {
            row.stages = Some(s.clone());
            row.stages_from = Some("state.db".into());
        }
        row
    };
    let mut rows = Vec::new();
    let mut seen = BTreeSet::new();
    for s in &summary.seeds {
        seen.insert(s.seed.clone());
        let row = SeedRow {
            seed: s.seed.clone(),
            status: s.status.clone(),
            detail: s.detail.clone(),
            commit: s.commit.clone(),
            files: Some(s.files),
            skipped_files: Some(s.skipped_files),
            enumerated: Some(s.enumerated),
            sampled: Some(s.sampled),
            resumed: Some(s.resumed),
            decided: s.decided,
            killed: s.killed,
            accepted: s.accepted,
            rejected: s.rejected.clone(),
            tasks: tasks_per_seed.get(s.seed.as_str()).copied().unwrap_or(0),
            seconds: Some(s.seconds),
            image: s.image.clone(),
            runner: s.runner.clone(),
            runner_fallback: s.runner_fallback.clone(),
            in_summary: true,
            stages: None,
            stages_from: None,
        };
        rows.push(with_stages(row, s.stages.as_ref()));
    }
    // Seeds decided by an earlier run into the same directory: from their candidates.
    let mut others: BTreeMap<&str, SeedRow> = BTreeMap::new();
    for c in cands.iter().filter(|c| !seen.contains(&c.seed)) {
        let row = others.entry(c.seed.as_str()).or_insert_with(|| SeedRow {
            seed: c.seed.clone(),
            status: "earlier run".into(),
            detail: "not in summary.json: counted from candidates.jsonl".into(),
            ..Default::default()
        });
        row.decided += 1;
        if c.killed() {
            row.killed += 1;
        }
        if c.accepted() {
            row.accepted += 1;
        } else {
            let reason = c.reason.clone().unwrap_or_else(|| "unknown".into());
            *row.rejected.entry(reason).or_default() += 1;
        }
    }
    for t in tasks {
        if !seen.contains(t.seed()) && !others.contains_key(t.seed()) {
            others.insert(
                t.seed(),
                SeedRow {
                    seed: t.seed().to_string(),
                    status: "earlier run".into(),
                    detail: "only in tasks.jsonl".into(),
                    ..Default::default()
                },
            );
        }
    }
    for (seed, mut row) in others {
        row.tasks = tasks_per_seed.get(seed).copied().unwrap_or(0);
        rows.push(with_stages(row, None));
    }
    rows
}

/// The sum, or `None` when any value is unknown (a partial sum would read as the whole) or
/// there is none.
fn sum_all(mut values: impl Iterator<Item = Option<usize>>) -> Option<usize> {
    let first = values.next()?;
    values.fold(first, |acc, v| Some(acc? + v?))
}

fn funnel(seeds: &[SeedRow], tasks: usize) -> Funnel {
    let decided = seeds.iter().map(|s| s.decided).sum();
    let killed = seeds.iter().map(|s| s.killed).sum();
    Funnel {
        enumerated: sum_all(seeds.iter().map(|s| s.enumerated)),
        sampled: sum_all(seeds.iter().map(|s| s.sampled)),
        unknown: seeds
            .iter()
            .filter(|s| s.enumerated.is_none() || s.sampled.is_none())
            .map(|s| s.seed.clone())
            .collect(),
        decided,
        killed,
        survivors: decided - killed.min(decided),
        accepted: seeds.iter().map(|s| s.accepted).sum(),
        rejected: seeds.iter().flat_map(|s| s.rejected.values()).sum(),
        tasks,
    }
}

fn reasons(seeds: &[SeedRow]) -> Vec<ReasonCount> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in seeds {
        for (r, n) in &s.rejected {
            *counts.entry(r.as_str()).or_default() += n;
        }
    }
    let total: usize = counts.values().sum();
    let mut out: Vec<ReasonCount> = counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| ReasonCount {
            reason: r.to_string(),
            count: n,
            share: ratio(n, total),
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.reason.cmp(&b.reason)));
    out
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        ((n as f64 / d as f64) * 10_000.0).round() / 10_000.0
    }
}

/// Decided and accepted per name, most decided first.
fn yields<'a>(items: impl Iterator<Item = (&'a str, bool)>) -> Vec<Yield> {
    let mut m: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (name, accepted) in items {
        let e = m
            .entry(if name.is_empty() { "unknown" } else { name })
            .or_default();
        e.0 += 1;
        e.1 += usize::from(accepted);
    }
    let mut out: Vec<Yield> = m
        .into_iter()
        .map(|(name, (decided, accepted))| Yield {
            name: name.to_string(),
            decided,
            accepted,
            rate: ratio(accepted, decided),
        })
        .collect();
    out.sort_by(|a, b| b.decided.cmp(&a.decided).then_with(|| a.name.cmp(&b.name)));
    out
}

fn difficulty(tasks: &[TaskLine]) -> DifficultyReport {
    let of = |f: fn(&DifficultyLine) -> Option<f64>| -> Vec<f64> {
        tasks
            .iter()
            .filter_map(|t| f(&t.metadata.difficulty))
            .filter(|v| v.is_finite())
            .collect()
    };
    DifficultyReport {
        tasks: tasks.len(),
        killing_tests: int_histogram(&of(|d| d.killing_tests), MAX_BINS),
        function_lines: int_histogram(&of(|d| d.function_lines), MAX_BINS),
        fix_lines: int_histogram(&of(|d| d.fix_lines), MAX_BINS),
        score: unit_histogram(&of(|d| d.score), 10),
    }
}

fn stats(values: &[f64]) -> Histogram {
    let count = values.len();
    if count == 0 {
        return Histogram::default();
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / count as f64;
    Histogram {
        count,
        min: Some(min),
        max: Some(max),
        mean: Some((mean * 1000.0).round() / 1000.0),
        bins: Vec::new(),
    }
}

/// Integer values (rounded) binned from the smallest to the largest: one bin per value when
/// that makes at most `max_bins` bins, else equal-width bins covering the range.
pub fn int_histogram(values: &[f64], max_bins: usize) -> Histogram {
    let mut h = stats(values);
    let (Some(min), Some(max)) = (h.min, h.max) else {
        return h;
    };
    let (lo, hi) = (min.round() as i64, max.round() as i64);
    let span = (hi - lo + 1) as usize;
    let width = span.div_ceil(max_bins.max(1)).max(1) as i64;
    let n = span.div_ceil(width as usize);
    h.bins = (0..n as i64)
        .map(|i| {
            let a = lo + i * width;
            let b = a + width - 1;
            Bin {
                lo: a as f64,
                hi: b as f64,
                label: if width == 1 {
                    a.to_string()
                } else {
                    format!("{a}–{b}")
                },
                count: 0,
            }
        })
        .collect();
    for v in values {
        let i = ((v.round() as i64 - lo) / width) as usize;
        h.bins[i.min(n - 1)].count += 1;
    }
    h
}

/// Values in [0, 1] in `bins` equal bins (values outside are clamped; 1.0 falls in the last).
pub fn unit_histogram(values: &[f64], bins: usize) -> Histogram {
    let mut h = stats(values);
    if values.is_empty() {
        return h;
    }
    let bins = bins.max(1);
    let w = 1.0 / bins as f64;
    h.bins = (0..bins)
        .map(|i| Bin {
            lo: i as f64 * w,
            hi: (i + 1) as f64 * w,
            label: format!("{:.1}–{:.1}", i as f64 * w, (i + 1) as f64 * w),
            count: 0,
        })
        .collect();
    for v in values {
        let i = ((v.clamp(0.0, 1.0) / w).floor() as usize).min(bins - 1);
        h.bins[i].count += 1;
    }
    h
}

fn stage_rank(name: &str) -> (usize, &str) {
    (
        STAGE_ORDER
            .iter()
            .position(|s| *s == name)
            .unwrap_or(STAGE_ORDER.len()),
        name,
    )
}

fn stages(seeds: &[SeedRow]) -> Stages {
    let mut total: BTreeMap<&str, f64> = BTreeMap::new();
    let mut not_recorded = Vec::new();
    for s in seeds {
        match &s.stages {
            Some(st) => {
                for (k, v) in st {
                    *total.entry(k.as_str()).or_default() += v;
                }
            }
            None => not_recorded.push(s.seed.clone()),
        }
    }
    let sum: f64 = total.values().sum();
    let mut rows: Vec<StageTime> = total
        .into_iter()
        .map(|(stage, seconds)| StageTime {
            stage: stage.to_string(),
            seconds: (seconds * 1000.0).round() / 1000.0,
            share: if sum > 0.0 {
                ((seconds / sum) * 10_000.0).round() / 10_000.0
            } else {
                0.0
            },
        })
        .collect();
    rows.sort_by(|a, b| stage_rank(&a.stage).cmp(&stage_rank(&b.stage)));
    Stages {
        recorded: seeds.iter().any(|s| s.stages.is_some()),
        total: rows,
        not_recorded,
    }
}

// ---- HTML ---------------------------------------------------------------------------------

const TEMPLATE: &str = "report/report.html.j2";

fn percent(r: f64) -> String {
    format!("{:.0}%", r * 100.0)
}

fn histogram_chart(id: &str, title: &str, axis: &str, h: &Histogram) -> String {
    svg::column_chart(&Chart {
        id,
        title,
        category_axis: axis,
        value_axis: "tasks",
        bars: h
            .bins
            .iter()
            .map(|b| Bar::new(b.label.clone(), b.count as f64))
            .collect(),
        legend: None,
    })
}

fn yield_chart(id: &str, title: &str, axis: &str, rows: &[Yield]) -> String {
    svg::hbar_chart(&Chart {
        id,
        title,
        category_axis: axis,
        value_axis: "candidates",
        bars: rows
            .iter()
            .map(|y| Bar {
                label: y.name.clone(),
                value: y.decided as f64,
                overlay: Some(y.accepted as f64),
                value_label: format!("{}/{} ({})", y.accepted, y.decided, percent(y.rate)),
            })
            .collect(),
        legend: Some(("decided", "accepted")),
    })
}

/// The charts of the page, by name, as SVG markup.
fn training_charts(t: &Training, m: &mut BTreeMap<&'static str, String>) {
    let series =
        |name: &str, f: &dyn Fn(&TrainPoint) -> Option<f64>, phase: Option<&str>| svg::Series {
            name: name.to_string(),
            points: t
                .points
                .iter()
                .filter(|p| phase.is_none_or(|ph| p.phase == ph))
                .filter_map(|p| f(p).map(|v| (p.step as f64, v)))
                .collect(),
        };
    let rl = Some("grpo");
    m.insert(
        "train_rates",
        svg::line_chart(&svg::LineChart {
            id: "chart-train-rates",
            title: "Training: pass rate, reward and learning signal per step",
            x_axis: "step",
            y_axis: "rate / reward",
            series: vec![
                series("pass rate (served)", &|p| p.pass_rate, rl),
                series("pass rate (all tasks)", &|p| p.pass_rate, Some("eval")),
                series("mean reward", &|p| p.reward_mean, rl),
                series("groups with signal", &|p| p.signal_share, rl),
                series("harder tasks served", &|p| p.harder_share, rl),
            ],
            y_range: Some((-1.0, 1.0)),
        }),
    );
    m.insert(
        "train_loss",
        svg::line_chart(&svg::LineChart {
            id: "chart-train-loss",
            title: "Training: loss per step (warm-start and RL)",
            x_axis: "step",
            y_axis: "loss",
            series: vec![
                series("warm-start loss", &|p| p.loss, Some("sft")),
                series("GRPO loss", &|p| p.loss, rl),
            ],
            y_range: None,
        }),
    );
}

fn charts(r: &Report) -> BTreeMap<&'static str, String> {
    let f = &r.funnel;
    let mut funnel_bars = Vec::new();
    for (name, v) in [
        ("enumerated", f.enumerated),
        ("sampled", f.sampled),
        ("decided", Some(f.decided)),
        ("killed", Some(f.killed)),
        ("survivors", Some(f.survivors)),
        ("accepted", Some(f.accepted)),
    ] {
        if let Some(v) = v {
            funnel_bars.push(Bar::new(name, v as f64));
        }
    }
    let mut m = BTreeMap::new();
    m.insert(
        "funnel",
        svg::hbar_chart(&Chart {
            id: "chart-funnel",
            title: "Candidate funnel",
            category_axis: "stage",
            value_axis: "candidates",
            bars: funnel_bars,
            legend: None,
        }),
    );
    m.insert(
        "reasons",
        svg::hbar_chart(&Chart {
            id: "chart-reasons",
            title: "Rejections by reason",
            category_axis: "reason",
            value_axis: "candidates",
            bars: r
                .reasons
                .iter()
                .map(|x| Bar::new(x.reason.clone(), x.count as f64))
                .collect(),
            legend: None,
        }),
    );
    m.insert(
        "mutators",
        yield_chart(
            "chart-mutators",
            "Yield per mutator",
            "mutator",
            &r.mutators,
        ),
    );
    m.insert(
        "categories",
        yield_chart(
            "chart-categories",
            "Yield per category",
            "category",
            &r.categories,
        ),
    );
    let d = &r.difficulty;
    m.insert(
        "killing_tests",
        histogram_chart(
            "chart-killing-tests",
            "Killing tests per task",
            "FAIL_TO_PASS tests",
            &d.killing_tests,
        ),
    );
    m.insert(
        "function_lines",
        histogram_chart(
            "chart-function-lines",
            "Size of the enclosing function",
            "lines",
            &d.function_lines,
        ),
    );
    m.insert(
        "fix_lines",
        histogram_chart(
            "chart-fix-lines",
            "Size of the fix",
            "lines changed",
            &d.fix_lines,
        ),
    );
    m.insert(
        "score",
        histogram_chart("chart-score", "Difficulty score", "score", &d.score),
    );
    m.insert(
        "stages",
        svg::hbar_chart(&Chart {
            id: "chart-stages",
            title: "Time per stage",
            category_axis: "stage",
            value_axis: "seconds",
            bars: r
                .stages
                .total
                .iter()
                .map(|s| Bar {
                    label: s.stage.clone(),
                    value: s.seconds,
                    overlay: None,
                    value_label: format!("{:.1}s ({})", s.seconds, percent(s.share)),
                })
                .collect(),
            legend: None,
        }),
    );
    if let Some(t) = &r.training {
        training_charts(t, &mut m);
    }
    m
}

/// Render report.html from templates/report/report.html.j2 (HTML auto-escaping on; the charts
/// are passed as markup already escaped by [`svg`]).
pub fn render_html(report: &Report) -> Result<String, ReportError> {
    let source = crate::assets::template(TEMPLATE)
        .ok_or_else(|| ReportError::MissingTemplate(TEMPLATE.to_string()))?;
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_filter("pct", |v: f64| percent(v));
    env.add_filter("secs", |v: f64| format!("{v:.1}"));
    env.add_template(TEMPLATE, source)?;
    let charts: BTreeMap<&str, minijinja::Value> = charts(report)
        .into_iter()
        .map(|(k, v)| (k, minijinja::Value::from_safe_string(v)))
        .collect();
    let stage_names: Vec<String> = {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for s in &report.seeds {
            if let Some(st) = &s.stages {
                names.extend(st.keys().map(String::as_str));
            }
        }
        let mut v: Vec<&str> = names.into_iter().collect();
        v.sort_by_key(|n| stage_rank(n));
        v.into_iter().map(str::to_string).collect()
    };
    let html = env.get_template(TEMPLATE)?.render(minijinja::context! {
        r => minijinja::Value::from_serialize(report),
        charts => charts,
        stage_names => stage_names,
    })?;
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn integer_bins_one_per_value_when_few() {
        let h = int_histogram(&[1.0, 1.0, 2.0, 4.0], 12);
        assert_eq!(h.count, 4);
        assert_eq!(h.min, Some(1.0));
        assert_eq!(h.max, Some(4.0));
        assert_eq!(h.mean, Some(2.0));
        let got: Vec<(&str, usize)> = h.bins.iter().map(|b| (b.label.as_str(), b.count)).collect();
        assert_eq!(got, [("1", 2), ("2", 1), ("3", 0), ("4", 1)]);
    }

    #[test]
    fn integer_bins_widen_to_stay_under_the_limit() {
        let values: Vec<f64> = (0..=100).map(f64::from).collect();
        let h = int_histogram(&values, 10);
        assert!(h.bins.len() <= 10, "{:?}", h.bins);
        assert_eq!(h.bins[0].label, "0–10");
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<usize>(), 101);
        // Contiguous, non-overlapping.
        for w in h.bins.windows(2) {
            assert_eq!(w[0].hi + 1.0, w[1].lo);
        }
        assert!(h.bins.last().unwrap().hi >= 100.0);
    }

    #[test]
    fn empty_histograms_have_no_bins() {
        assert_eq!(int_histogram(&[], 10), Histogram::default());
        assert_eq!(unit_histogram(&[], 10), Histogram::default());
    }

    #[test]
    fn score_bins_cover_zero_to_one() {
        let h = unit_histogram(&[0.0, 0.05, 0.1, 0.55, 0.999, 1.0, 1.7], 10);
        assert_eq!(h.bins.len(), 10);
        let counts: Vec<usize> = h.bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, [2, 1, 0, 0, 0, 1, 0, 0, 0, 3]);
        assert_eq!(h.bins[0].label, "0.0–0.1");
    }

    #[test]
    fn missing_dir_and_empty_dir_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = build(&dir.path().join("nope")).unwrap_err();
        assert!(matches!(err, ReportError::NoDir(_)), "{err}");
        let err = build(dir.path()).unwrap_err();
        assert!(matches!(err, ReportError::NoOutput(_)), "{err}");
        assert!(err.to_string().contains("not a swe-forge output directory"));
        // Nothing written into a directory that is not an output.
        assert!(!dir.path().join("report.html").exists());
    }

    #[test]
    fn empty_outputs_still_render() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "candidates.jsonl", "");
        write(dir.path(), "tasks.jsonl", "");
        let w = super::write(dir.path()).unwrap();
        assert_eq!(w.report.funnel, Funnel::default());
        assert!(!w.report.stages.recorded);
        let html = std::fs::read_to_string(&w.html).unwrap();
        assert!(html.contains("id=\"per-seed\""));
        assert!(html.contains("no data"));
        assert!(html.contains("not recorded"));
    }

    #[test]
    fn counts_from_all_inputs_and_text_is_escaped() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "summary.json",
            r#"{"out":"x","sandbox":"local","interrupted":false,"seconds":3.5,"tasks":1,
               "seeds":[{"seed":"s<1>","status":"done","detail":"","commit":"abc","files":2,
               "skipped_files":0,"enumerated":10,"sampled":4,"resumed":0,"decided":3,"killed":2,
               "accepted":1,"rejected":{"not-killed":1,"flaky":1},"seconds":3.0,
               "image_built":false,"stages":{"verify":2.0,"import":1.0}}]}"#,
        );
        let cand = |mutator: &str, status: &str, reason: &str, screen: &str| {
            format!(
                r#"{{"seed":"s<1>","id":"x","mutator":"{mutator}","category":"operator","status":"{status}"{reason},"runs":[{{"label":"screen","summary":"{screen}","log_digest":"d"}}],"future_field":[1]}}"#
            )
        };
        write(
            dir.path(),
            "candidates.jsonl",
            &[
                cand("m-a", "accepted", "", "1 failed, 2 passed (exit 1, 0.1s)"),
                cand(
                    "m-a",
                    "rejected",
                    r#","reason":"flaky""#,
                    "1 failed (exit 1, 0.1s)",
                ),
                cand(
                    "<b>m-b</b>",
                    "rejected",
                    r#","reason":"not-killed""#,
                    "3 passed (exit 0, 0.1s)",
                ),
                "{not json".to_string(),
            ]
            .join("\n"),
        );
        write(
            dir.path(),
            "tasks.jsonl",
            // The manifest's `repo:` is not the seed's name: the task counts under the seed.
            r#"{"instance_id":"t","repo":"owner/s<1>","metadata":{"environment":{"seed":"s<1>"},"difficulty":{"killing_tests":1,"function_lines":7,"fix_lines":2,"score":0.42,"new":true}}}"#,
        );
        let w = super::write(dir.path()).unwrap();
        let r = &w.report;
        assert_eq!(
            r.seeds
                .iter()
                .map(|s| (s.seed.as_str(), s.tasks))
                .collect::<Vec<_>>(),
            [("s<1>", 1)]
        );
        assert_eq!(
            r.funnel,
            Funnel {
                enumerated: Some(10),
                sampled: Some(4),
                decided: 3,
                killed: 2,
                survivors: 1,
                accepted: 1,
                rejected: 2,
                tasks: 1,
                unknown: vec![],
            }
        );
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].starts_with("candidates.jsonl:4:"));
        assert_eq!(r.mutators[0].name, "m-a");
        assert_eq!((r.mutators[0].decided, r.mutators[0].accepted), (2, 1));
        assert_eq!(r.mutators[0].rate, 0.5);
        assert_eq!(r.categories.len(), 1);
        assert_eq!(r.difficulty.score.bins[4].count, 1);
        assert_eq!(
            r.stages
                .total
                .iter()
                .map(|s| s.stage.as_str())
                .collect::<Vec<_>>(),
            ["import", "verify"]
        );
        assert_eq!(r.seeds[0].tasks, 1);
        let html = std::fs::read_to_string(&w.html).unwrap();
        assert!(!html.contains("<b>m-b</b>"), "unescaped mutator name");
        assert!(html.contains("&lt;b&gt;m-b&lt;/b&gt;"));
        assert!(!html.contains("s<1>"));
        // Self-contained: nothing loaded from elsewhere.
        for external in ["<link", "<script", " src=", "url(", "@import"] {
            assert!(!html.contains(external), "{external}");
        }
        // report.json round-trips.
        let back: Report =
            serde_json::from_str(&std::fs::read_to_string(&w.json).unwrap()).unwrap();
        assert_eq!(back.funnel, r.funnel);
    }

    #[test]
    fn stage_times_fall_back_to_the_state_store() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "summary.json",
            r#"{"seeds":[{"seed":"a","status":"done"},{"seed":"b","status":"failed"}]}"#,
        );
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        store.add_stage_time("a", "baseline", 2.0).unwrap();
        store.add_stage_time("a", "import", 1.0).unwrap();
        drop(store);
        let r = build(dir.path()).unwrap();
        assert_eq!(r.seeds[0].stages_from.as_deref(), Some("state.db"));
        assert!(r.stages.recorded);
        assert_eq!(r.stages.not_recorded, ["b"]);
        assert_eq!(r.stages.total[0].stage, "import");
        assert_eq!(r.stages.total[1].stage, "baseline");
    }

    #[test]
    fn seeds_of_earlier_runs_come_from_candidates() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "candidates.jsonl",
            r#"{"seed":"old","mutator":"m","category":"c","status":"rejected","reason":"timeout"}"#,
        );
        let r = build(dir.path()).unwrap();
        assert_eq!(r.seeds.len(), 1);
        assert!(!r.seeds[0].in_summary);
        assert_eq!(r.seeds[0].rejected["timeout"], 1);
        assert_eq!(r.funnel.enumerated, None);
        assert_eq!(r.funnel.sampled, None);
        assert_eq!(r.funnel.unknown, ["old"]);
        assert_eq!(r.reasons[0].reason, "timeout");
        // The run's listing of sampled candidates gives the sampled count back.
        std::fs::create_dir_all(dir.path().join("logs/old")).unwrap();
        write(&dir.path().join("logs/old"), "sampled.jsonl", "{}\n{}\n");
        let r = build(dir.path()).unwrap();
        assert_eq!(r.seeds[0].sampled, Some(2));
        assert_eq!(r.funnel.sampled, Some(2));
        assert_eq!(r.funnel.enumerated, None);
    }
}
