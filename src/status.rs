//! Status: how far runs are, read from their output directories while they run or after — per
//! directory (a shard's) and overall: candidates sampled, decided, accepted and rejected, and
//! the share of the sampled candidates decided. `state.db` (written as candidates are decided)
//! gives the decided ones, `logs/<seed>/sampled.jsonl` (written before verification) what the
//! run will decide, and `summary.json` (written at the end) whether it finished.

use crate::store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("waited {waited:.0}s: {pending} of {total} run(s) not finished ({first} and others)")]
    Timeout {
        waited: f64,
        pending: usize,
        total: usize,
        first: String,
    },
}

/// Where a run's directory stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// No directory, or nothing in it yet.
    NotStarted,
    /// Candidates being sampled or decided (no summary.json yet).
    Running,
    /// summary.json written, not interrupted.
    Done,
    /// summary.json says the run was interrupted (it resumes when run again).
    Interrupted,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::NotStarted => "not-started",
            State::Running => "running",
            State::Done => "done",
            State::Interrupted => "interrupted",
        })
    }
}

/// One output directory.
#[derive(Clone, Debug, Serialize)]
pub struct RunStatus {
    pub out: PathBuf,
    pub state: State,
    /// Candidates sampled to be decided (`None` before sampling, or without sampled.jsonl).
    pub sampled: Option<usize>,
    /// Candidates decided (in state.db).
    pub decided: usize,
    pub accepted: usize,
    pub rejected: usize,
    /// Sampled candidates decided / sampled (`None` when the sample is not known).
    pub progress: Option<f64>,
    /// Tasks written (from summary.json once done).
    pub tasks: Option<usize>,
    /// The run's seconds (from summary.json once done).
    pub seconds: Option<f64>,
}

/// Every directory and the sums.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    pub runs: Vec<RunStatus>,
    pub total: Total,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Total {
    pub runs: usize,
    pub done: usize,
    /// Sum of the known samples (`None` while some run's sample is unknown).
    pub sampled: Option<usize>,
    pub decided: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub progress: Option<f64>,
}

/// The status of each directory, and overall.
pub fn status(outs: &[PathBuf]) -> Result<Status, StatusError> {
    let runs = outs
        .iter()
        .map(|o| run_status(o))
        .collect::<Result<Vec<_>, _>>()?;
    let mut t = Total {
        runs: runs.len(),
        sampled: Some(0),
        ..Default::default()
    };
    let mut sampled_decided = 0usize;
    for r in &runs {
        t.done += usize::from(r.state == State::Done);
        t.decided += r.decided;
        t.accepted += r.accepted;
        t.rejected += r.rejected;
        t.sampled = match (t.sampled, r.sampled) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        if let (Some(p), Some(s)) = (r.progress, r.sampled) {
            sampled_decided += (p * s as f64).round() as usize;
        }
    }
    t.progress = t.sampled.map(|s| {
        if s == 0 {
            1.0
        } else {
            sampled_decided as f64 / s as f64
        }
    });
    Ok(Status { runs, total: t })
}

fn run_status(out: &Path) -> Result<RunStatus, StatusError> {
    let mut r = RunStatus {
        out: out.to_path_buf(),
        state: State::NotStarted,
        sampled: None,
        decided: 0,
        accepted: 0,
        rejected: 0,
        progress: None,
        tasks: None,
        seconds: None,
    };
    if !out.is_dir() {
        return Ok(r);
    }
    // What was decided, per seed.
    let mut decided: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let db = out.join("state.db");
    if db.is_file() {
        r.state = State::Running;
        for d in Store::open(&db)?.decided()? {
            if d.outcome.verdict.is_accepted() {
                r.accepted += 1;
            } else {
                r.rejected += 1;
            }
            decided.entry(d.seed).or_default().insert(d.candidate.id);
        }
        r.decided = r.accepted + r.rejected;
    }
    // What will be decided: every seed's sample (a seed not sampled yet is not counted).
    let logs = out.join("logs");
    if let Ok(entries) = std::fs::read_dir(&logs) {
        let (mut sampled, mut done) = (0usize, 0usize);
        let mut any = false;
        for e in entries.flatten() {
            let seed = e.file_name().to_string_lossy().to_string();
            let Ok(text) = std::fs::read_to_string(e.path().join("sampled.jsonl")) else {
                continue;
            };
            any = true;
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                sampled += 1;
                let id = v["id"].as_str().unwrap_or_default();
                if decided.get(&seed).is_some_and(|s| s.contains(id)) {
                    done += 1;
                }
            }
        }
        if any {
            r.state = r.state.max_running();
            r.sampled = Some(sampled);
            r.progress = Some(if sampled == 0 {
                1.0
            } else {
                done as f64 / sampled as f64
            });
        }
    }
    let summary = out.join("summary.json");
    if let Ok(text) = std::fs::read_to_string(&summary) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            r.state = if v["interrupted"].as_bool().unwrap_or(false) {
                State::Interrupted
            } else {
                State::Done
            };
            r.tasks = v["tasks"].as_u64().map(|n| n as usize);
            r.seconds = v["seconds"].as_f64();
        }
    }
    Ok(r)
}

impl State {
    fn max_running(self) -> State {
        match self {
            State::NotStarted => State::Running,
            s => s,
        }
    }
}

/// Look every `interval` until every directory is [`State::Done`]; the last status, or
/// [`StatusError::Timeout`] after `timeout`. `seen` is called with each status looked at.
pub fn wait(
    outs: &[PathBuf],
    timeout: Duration,
    interval: Duration,
    mut seen: impl FnMut(&Status),
) -> Result<Status, StatusError> {
    let started = Instant::now();
    loop {
        let s = status(outs)?;
        seen(&s);
        if s.total.done == s.total.runs {
            return Ok(s);
        }
        if started.elapsed() >= timeout {
            let pending: Vec<&RunStatus> =
                s.runs.iter().filter(|r| r.state != State::Done).collect();
            return Err(StatusError::Timeout {
                waited: started.elapsed().as_secs_f64(),
                pending: pending.len(),
                total: s.runs.len(),
                first: pending[0].out.display().to_string(),
            });
        }
        std::thread::sleep(interval.min(timeout.saturating_sub(started.elapsed())));
    }
}

/// The status as a table for people: a row per directory, then the total.
pub fn table(s: &Status) -> String {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{:.0}%", p * 100.0));
    let num = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
    let mut rows: Vec<[String; 7]> = vec![[
        "OUT".into(),
        "STATE".into(),
        "SAMPLED".into(),
        "DECIDED".into(),
        "ACCEPTED".into(),
        "REJECTED".into(),
        "PROGRESS".into(),
    ]];
    for r in &s.runs {
        rows.push([
            r.out.display().to_string(),
            r.state.to_string(),
            num(r.sampled),
            r.decided.to_string(),
            r.accepted.to_string(),
            r.rejected.to_string(),
            pct(r.progress),
        ]);
    }
    let t = &s.total;
    rows.push([
        format!("total ({} run(s))", t.runs),
        format!("{}/{} done", t.done, t.runs),
        num(t.sampled),
        t.decided.to_string(),
        t.accepted.to_string(),
        t.rejected.to_string(),
        pct(t.progress),
    ]);
    let mut widths = [0usize; 7];
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (c, w)) in row.iter().zip(widths).enumerate() {
            if i < 2 {
                line.push_str(&format!("{c:<w$}  "));
            } else {
                line.push_str(&format!("{c:>w$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_has_not_started_and_an_empty_list_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let s = status(&[dir.path().join("nope")]).unwrap();
        assert_eq!(s.runs[0].state, State::NotStarted);
        assert_eq!(s.total.done, 0);
        assert_eq!(s.total.sampled, None);
        assert!(table(&s).contains("not-started"));
        let s = status(&[]).unwrap();
        assert_eq!(s.total.runs, 0);
    }

    #[test]
    fn a_sample_without_decisions_is_running_and_a_summary_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("shard-0");
        std::fs::create_dir_all(out.join("logs/pyshelf")).unwrap();
        std::fs::write(
            out.join("logs/pyshelf/sampled.jsonl"),
            "{\"id\": \"a\"}\n{\"id\": \"b\"}\n",
        )
        .unwrap();
        let s = status(std::slice::from_ref(&out)).unwrap();
        assert_eq!(s.runs[0].state, State::Running);
        assert_eq!(s.runs[0].sampled, Some(2));
        assert_eq!(s.runs[0].progress, Some(0.0));
        assert_eq!(s.total.sampled, Some(2));
        std::fs::write(
            out.join("summary.json"),
            r#"{"interrupted": false, "tasks": 0, "seconds": 1.5}"#,
        )
        .unwrap();
        let s = status(std::slice::from_ref(&out)).unwrap();
        assert_eq!(s.runs[0].state, State::Done);
        assert_eq!(s.runs[0].seconds, Some(1.5));
        assert_eq!(s.total.done, 1);
        let waited = wait(
            std::slice::from_ref(&out),
            Duration::from_secs(1),
            Duration::from_millis(10),
            |_| {},
        )
        .unwrap();
        assert_eq!(waited.total.done, 1);
    }

    #[test]
    fn waiting_for_a_run_that_does_not_finish_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut looks = 0;
        let e = wait(
            &[dir.path().join("shard-1")],
            Duration::from_millis(50),
            Duration::from_millis(10),
            |_| looks += 1,
        )
        .unwrap_err();
        assert!(matches!(e, StatusError::Timeout { pending: 1, .. }), "{e}");
        assert!(looks >= 2);
    }
}
