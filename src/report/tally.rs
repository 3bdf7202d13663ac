//! Tallies: the report's figures computed from its inputs (per-seed rows, the funnel,
//! rejection reasons, yields, difficulty histograms, stage times).

use super::input::{CandidateLine, DifficultyLine, SummaryFile, TaskLine};
use super::{
    Bin, DifficultyReport, Funnel, Histogram, ReasonCount, SeedRow, StageTime, Stages, Yield,
    MAX_BINS,
};
use std::collections::{BTreeMap, BTreeSet};

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

pub(super) fn seed_rows(
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
            degraded: s.degraded.clone(),
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

pub(super) fn funnel(seeds: &[SeedRow], tasks: usize) -> Funnel {
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

pub(super) fn reasons(seeds: &[SeedRow]) -> Vec<ReasonCount> {
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
pub(super) fn yields<'a>(items: impl Iterator<Item = (&'a str, bool)>) -> Vec<Yield> {
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

pub(super) fn difficulty(tasks: &[TaskLine]) -> DifficultyReport {
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

pub(super) fn stage_rank(name: &str) -> (usize, &str) {
    (
        STAGE_ORDER
            .iter()
            .position(|s| *s == name)
            .unwrap_or(STAGE_ORDER.len()),
        name,
    )
}

pub(super) fn stages(seeds: &[SeedRow]) -> Stages {
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
