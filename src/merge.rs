//! Merge: the output directories of several runs (the shards of one run, `run --shard K/N`)
//! joined into one, as one run would have written it: a merged `state.db` (every decided
//! candidate once, the baselines, the seeds' statuses, the stage times added up), and from it
//! `tasks.jsonl` and `candidates.jsonl`, a merged `summary.json` and the logs. `report`, `audit`
//! and `export` then work on the merged directory as on any run's. A candidate two inputs
//! decided differently (its record differs apart from timings and log references) is a
//! conflict: the merge fails unless told to keep the first. Merging again gives the same
//! directory.

use crate::pipeline::PipelineError;
use crate::store::{Store, StoreError};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a merge failed.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{}: not a run's output directory (no state.db)", .0.display())]
    NotAnOutput(PathBuf),
    #[error("{}: the merged directory is also an input", .0.display())]
    IntoAnInput(PathBuf),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{0} candidate(s) were decided differently by two inputs (first: {1}); --allow-conflicts keeps the first input's")]
    Conflicts(usize, String),
}

/// A candidate two inputs decided differently.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Conflict {
    pub seed: String,
    pub candidate_id: String,
    /// The inputs, first the one whose record was kept.
    pub inputs: (String, String),
}

/// What a merge did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MergeSummary {
    pub out: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub candidates: usize,
    pub tasks: usize,
    /// Candidates more than one input decided the same way (kept once).
    pub duplicates: usize,
    pub conflicts: Vec<Conflict>,
}

/// A decided candidate's record without what differs from run to run by itself: timings,
/// log references and creation times.
pub fn comparable(v: &Value) -> Value {
    // `reused`: which candidate of a seed ran a grading command on the clean tree first
    // depends on the order candidates are decided in (workers, shards); the runs are the same.
    const VOLATILE: [&str; 9] = [
        "reused",
        "duration_s",
        "seconds",
        "cpu_s",
        "log_path",
        "log_digest",
        "created_at",
        "grade_seconds",
        "trace_s",
    ];
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), comparable(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> MergeError + '_ {
    move |error| MergeError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// Merge `inputs` into `out` (made afresh). `allow_conflicts`: keep the first input's record
/// of a candidate decided differently, and report it.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    allow_conflicts: bool,
) -> Result<MergeSummary, MergeError> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    for i in inputs {
        if !i.join("state.db").is_file() {
            return Err(MergeError::NotAnOutput(i.clone()));
        }
        if out.exists() && canon(i) == canon(out) {
            return Err(MergeError::IntoAnInput(out.to_path_buf()));
        }
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    for name in ["state.db", "state.db-wal", "state.db-shm"] {
        let p = out.join(name);
        if p.exists() {
            std::fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    let merged = Store::open(&out.join("state.db"))?;
    let mut summary = MergeSummary {
        out: out.to_path_buf(),
        inputs: inputs.to_vec(),
        ..Default::default()
    };
    // (seed, candidate id) → (the input that decided it, its comparable record).
    let mut seen: BTreeMap<(String, String), (String, Value)> = BTreeMap::new();
    let mut statuses: BTreeMap<String, crate::store::SeedStatus> = BTreeMap::new();
    // Seed → (the first input that fingerprinted it, its set-up).
    let mut set_ups: BTreeMap<String, (String, crate::fingerprint::Fingerprint)> = BTreeMap::new();
    for input in inputs {
        let name = input.display().to_string();
        let store = Store::open(&input.join("state.db"))?;
        for (seed, commit, json) in store.baselines()? {
            merged.put_baseline_json(&seed, &commit, &json)?;
        }
        // The shards' set-ups (the first input's where they differ), so that the merged
        // output resumes under the same check as each input.
        for (seed, json) in store.fingerprints()? {
            merged.put_fingerprint_json(&seed, &json)?;
            let Ok(f) = serde_json::from_str::<crate::fingerprint::Fingerprint>(&json) else {
                continue;
            };
            match set_ups.get(&seed) {
                Some((first, stored)) => {
                    let differences: Vec<String> = stored
                        .differences(&f)
                        .iter()
                        .map(|d| d.to_string())
                        .collect();
                    if !differences.is_empty() {
                        tracing::warn!(
                            seed = %seed,
                            "{name} ran the seed with another set-up than {first} (\"stored\": {first}'s, kept in the merge; \"now\": {name}'s): {}",
                            differences.join("; ")
                        );
                    }
                }
                None => {
                    set_ups.insert(seed, (name.clone(), f));
                }
            }
        }
        for st in store.seed_statuses()? {
            // A seed done in any input is done; else the first input's word on it.
            match statuses.get(&st.seed) {
                Some(prev) if prev.status == "done" || st.status != "done" => {}
                _ => {
                    statuses.insert(st.seed.clone(), st);
                }
            }
        }
        for (seed, stage, seconds) in store.stage_times()? {
            merged.add_stage_time(&seed, &stage, seconds)?;
        }
        for d in store.decided()? {
            let key = (d.seed.clone(), d.candidate.id.clone());
            let record = comparable(&serde_json::json!({
                "outcome": serde_json::to_value(&d.outcome).unwrap_or(Value::Null),
                "task": serde_json::to_value(&d.task).unwrap_or(Value::Null),
            }));
            match seen.get(&key) {
                Some((first, r)) if *r == record => {
                    let _ = first;
                    summary.duplicates += 1;
                }
                Some((first, _)) => summary.conflicts.push(Conflict {
                    seed: d.seed.clone(),
                    candidate_id: d.candidate.id.clone(),
                    inputs: (first.clone(), name.clone()),
                }),
                None => {
                    merged.put_decided(&d)?;
                    seen.insert(key, (name.clone(), record));
                }
            }
        }
        copy_logs(&input.join("logs"), &out.join("logs"))?;
    }
    if !summary.conflicts.is_empty() && !allow_conflicts {
        let c = &summary.conflicts[0];
        return Err(MergeError::Conflicts(
            summary.conflicts.len(),
            format!(
                "{} {} in {} and {}",
                c.seed, c.candidate_id, c.inputs.0, c.inputs.1
            ),
        ));
    }
    for st in statuses.values() {
        merged.put_seed_status(st)?;
    }
    summary.candidates = seen.len();
    summary.tasks = crate::pipeline::write_outputs(&merged, out)?;
    write_summary(inputs, out, summary.tasks)?;
    Ok(summary)
}

/// Copy the files of `from` (logs, named by digest) that `to` lacks.
fn copy_logs(from: &Path, to: &Path) -> Result<(), MergeError> {
    if !from.is_dir() {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let dest = to.join(rel);
        if dest.exists() {
            continue;
        }
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        std::fs::copy(entry.path(), &dest).map_err(io(&dest))?;
    }
    Ok(())
}

/// The inputs' summary.json files joined: per seed, the counts of what each decided added up
/// (what each input saw whole, such as the files and candidates enumerated, taken once), the
/// run's seconds the longest input's (shards run side by side).
fn write_summary(inputs: &[PathBuf], out: &Path, tasks: usize) -> Result<(), MergeError> {
    const ADDED: [&str; 6] = [
        "sampled", "resumed", "decided", "killed", "accepted", "seconds",
    ];
    let mut seeds: BTreeMap<String, Value> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut base: Option<Value> = None;
    let mut seconds: f64 = 0.0;
    for input in inputs {
        let path = input.join("summary.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        seconds = seconds.max(doc["seconds"].as_f64().unwrap_or(0.0));
        for s in doc["seeds"].as_array().into_iter().flatten() {
            let name = s["seed"].as_str().unwrap_or_default().to_string();
            match seeds.get_mut(&name) {
                None => {
                    order.push(name.clone());
                    seeds.insert(name, s.clone());
                }
                Some(m) => {
                    for k in ADDED {
                        let sum = m[k].as_f64().unwrap_or(0.0) + s[k].as_f64().unwrap_or(0.0);
                        m[k] = if k == "seconds" {
                            serde_json::json!(sum)
                        } else {
                            serde_json::json!(sum as u64)
                        };
                    }
                    let mut rejected: BTreeMap<String, u64> =
                        serde_json::from_value(m["rejected"].clone()).unwrap_or_default();
                    for (r, n) in s["rejected"].as_object().into_iter().flatten() {
                        *rejected.entry(r.clone()).or_default() += n.as_u64().unwrap_or(0);
                    }
                    m["rejected"] = serde_json::json!(rejected);
                    if m["status"] != "done" && s["status"] == "done" {
                        m["status"] = s["status"].clone();
                        m["detail"] = s["detail"].clone();
                    }
                }
            }
        }
        if base.is_none() {
            base = Some(doc);
        }
    }
    let mut doc = base.unwrap_or_else(|| serde_json::json!({}));
    doc["out"] = serde_json::json!(out);
    doc["seeds"] = Value::Array(order.iter().filter_map(|n| seeds.remove(n)).collect());
    doc["tasks"] = serde_json::json!(tasks);
    doc["seconds"] = serde_json::json!(seconds);
    doc["merged_from"] = serde_json::json!(inputs);
    let path = out.join("summary.json");
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    std::fs::write(&path, text).map_err(io(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_compare_without_timings_and_log_references() {
        let a = serde_json::json!({"task": {"x": 1, "runs": [{"duration_s": 1.0, "log_digest": "a", "status": "PASSED"}]}, "outcome": {"seconds": 3.0}});
        let b = serde_json::json!({"task": {"x": 1, "runs": [{"duration_s": 2.5, "log_digest": "b", "status": "PASSED"}]}, "outcome": {"seconds": 9.0}});
        assert_eq!(comparable(&a), comparable(&b));
        let c = serde_json::json!({"task": {"x": 2, "runs": []}});
        assert_ne!(comparable(&a), comparable(&c));
    }
}
