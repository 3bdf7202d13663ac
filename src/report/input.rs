//! The inputs of a report, read leniently: summary.json, candidates.jsonl, tasks.jsonl and
//! train/metrics.jsonl (unknown fields ignored, missing ones defaulted, bad lines warned of).

use super::{ReportError, TrainPoint, Training};
use crate::check::Check;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SummaryFile {
    pub(super) sandbox: Option<String>,
    pub(super) seeds: Vec<SeedLine>,
    pub(super) interrupted: bool,
    pub(super) seconds: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct SeedLine {
    pub(super) seed: String,
    pub(super) status: String,
    pub(super) detail: String,
    pub(super) commit: Option<String>,
    pub(super) files: usize,
    pub(super) skipped_files: usize,
    pub(super) enumerated: usize,
    pub(super) sampled: usize,
    pub(super) resumed: usize,
    pub(super) decided: usize,
    pub(super) killed: usize,
    pub(super) accepted: usize,
    pub(super) rejected: BTreeMap<String, usize>,
    pub(super) seconds: f64,
    pub(super) image: Option<String>,
    pub(super) runner: Option<String>,
    pub(super) runner_fallback: Option<String>,
    pub(super) stages: Option<BTreeMap<String, f64>>,
    pub(super) degraded: Option<crate::pipeline::Degraded>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct CandidateLine {
    pub(super) seed: String,
    pub(super) mutator: String,
    pub(super) category: String,
    pub(super) status: String,
    pub(super) reason: Option<String>,
    pub(super) runs: Vec<RunLine>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RunLine {
    pub(super) label: String,
    pub(super) summary: String,
}

impl CandidateLine {
    pub(super) fn accepted(&self) -> bool {
        self.status == "accepted"
    }

    /// Screening saw a covering test fail: the screening run's summary counts failures or
    /// errors (a screen that was check 2's first repeat is labelled `buggy#1`). (The same rule
    /// as the pipeline's tally, from the line's run summaries.)
    pub(super) fn killed(&self) -> bool {
        self.runs.first().is_some_and(|r| {
            (Check::Screen.labels(&r.label) || Check::Buggy.labels(&r.label))
                && r.summary
                    .split(['(', ','])
                    .map(str::trim)
                    .any(|part| part.ends_with(" failed") || part.ends_with(" error"))
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TaskLine {
    pub(super) repo: String,
    pub(super) metadata: TaskMeta,
}

impl TaskLine {
    /// The seed the task came from: its manifest name (`environment.seed`), which can differ
    /// from `repo` (`boltons` and `mahmoud/boltons`); older records have only `repo`.
    pub(super) fn seed(&self) -> &str {
        if self.metadata.environment.seed.is_empty() {
            &self.repo
        } else {
            &self.metadata.environment.seed
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TaskMeta {
    pub(super) difficulty: DifficultyLine,
    pub(super) environment: EnvironmentLine,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct EnvironmentLine {
    pub(super) seed: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct DifficultyLine {
    pub(super) killing_tests: Option<f64>,
    pub(super) function_lines: Option<f64>,
    pub(super) fix_lines: Option<f64>,
    pub(super) score: Option<f64>,
}

/// Read `out/train/metrics.jsonl`, when present.
pub(super) fn training(
    out: &Path,
    warnings: &mut Vec<String>,
) -> Result<Option<Training>, ReportError> {
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

pub(super) fn read(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|source| ReportError::Io {
        context: format!("reading {}", path.display()),
        source,
    })
}

/// The objects of a JSON-lines file (absent: none); a line that does not parse is a warning.
pub(super) fn read_jsonl<T: serde::de::DeserializeOwned>(
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
