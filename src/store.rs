//! The state store (SQLite): baselines, every candidate's outcome and every task, written as
//! they are decided, so an interrupted run resumes without redoing finished candidates; and
//! each seed's set-up [`Fingerprint`], so that it resumes only with the same set-up.

use crate::baseline::Baseline;
use crate::candidate::Candidate;
use crate::fingerprint::Fingerprint;
use crate::task::Task;
use crate::verify::Outcome;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state store {path}: {source}")]
    Sql {
        path: String,
        source: rusqlite::Error,
    },
    #[error("state store holds a record that does not parse: {0}")]
    Json(#[from] serde_json::Error),
}

/// A decided candidate, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Decided {
    pub seed: String,
    pub candidate: Candidate,
    pub outcome: Outcome,
    pub task: Option<Task>,
}

/// How a seed fared as a whole (imported, baseline, rejected with a reason).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedStatus {
    pub seed: String,
    pub status: String,
    pub detail: String,
}

pub struct Store {
    conn: Connection,
    path: String,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS baselines (
    seed TEXT NOT NULL, commit_id TEXT NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY (seed, commit_id));
CREATE TABLE IF NOT EXISTS outcomes (
    seed TEXT NOT NULL, candidate_id TEXT NOT NULL, candidate TEXT NOT NULL,
    outcome TEXT NOT NULL, task TEXT, seq INTEGER NOT NULL,
    PRIMARY KEY (seed, candidate_id));
CREATE TABLE IF NOT EXISTS seeds (
    seed TEXT PRIMARY KEY, status TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fingerprints (
    seed TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stage_times (
    seed TEXT NOT NULL, stage TEXT NOT NULL, seconds REAL NOT NULL,
    PRIMARY KEY (seed, stage));
";

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let sql = |source| StoreError::Sql {
            path: p.clone(),
            source,
        };
        let conn = Connection::open(path).map_err(sql)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Store { conn, path: p })
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    pub fn baseline(&self, seed: &str, commit: &str) -> Result<Option<Baseline>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT json FROM baselines WHERE seed = ?1 AND commit_id = ?2",
                params![seed, commit],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    pub fn put_baseline(&self, seed: &str, commit: &str, b: &Baseline) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO baselines (seed, commit_id, json) VALUES (?1, ?2, ?3)",
                params![seed, commit, serde_json::to_string(b)?],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The set-up `seed`'s evidence was made with (`None`: none stored, as in a state store
    /// older than fingerprints).
    pub fn fingerprint(&self, seed: &str) -> Result<Option<Fingerprint>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT json FROM fingerprints WHERE seed = ?1",
                params![seed],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(json.map(|j| serde_json::from_str(&j)).transpose()?)
    }

    pub fn put_fingerprint(&self, seed: &str, f: &Fingerprint) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO fingerprints (seed, json) VALUES (?1, ?2)",
                params![seed, serde_json::to_string(f)?],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every stored fingerprint: (seed, its JSON).
    pub fn fingerprints(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seed, json FROM fingerprints ORDER BY seed")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Store a fingerprint's JSON as it is, unless the seed has one (a merge copies them).
    pub fn put_fingerprint_json(&self, seed: &str, json: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO fingerprints (seed, json) VALUES (?1, ?2)",
                params![seed, json],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Whether the store holds evidence for `seed` that a run would reuse: a baseline (of any
    /// commit) or a decided candidate.
    pub fn has_evidence(&self, seed: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM baselines WHERE seed = ?1)
                     OR EXISTS (SELECT 1 FROM outcomes WHERE seed = ?1)",
                params![seed],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Ids of the candidates of `seed` already decided.
    pub fn decided_ids(&self, seed: &str) -> Result<BTreeSet<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT candidate_id FROM outcomes WHERE seed = ?1")
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map(params![seed], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<BTreeSet<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Record a decided candidate (idempotent: a candidate is stored once).
    pub fn put_decided(&self, d: &Decided) -> Result<(), StoreError> {
        let task = d.task.as_ref().map(serde_json::to_string).transpose()?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO outcomes (seed, candidate_id, candidate, outcome, task, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, (SELECT COALESCE(MAX(seq), 0) + 1 FROM outcomes))",
                params![
                    d.seed,
                    d.candidate.id,
                    serde_json::to_string(&d.candidate)?,
                    serde_json::to_string(&d.outcome)?,
                    task
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every decided candidate, ordered by seed, file and position.
    pub fn decided(&self) -> Result<Vec<Decided>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seed, candidate, outcome, task FROM outcomes ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for (seed, cand, outcome, task) in rows {
            out.push(Decided {
                seed,
                candidate: serde_json::from_str(&cand)?,
                outcome: serde_json::from_str(&outcome)?,
                task: task.map(|t| serde_json::from_str(&t)).transpose()?,
            });
        }
        out.sort_by(|a, b| {
            (
                &a.seed,
                &a.candidate.file,
                a.candidate.byte_range,
                &a.candidate.mutator,
            )
                .cmp(&(
                    &b.seed,
                    &b.candidate.file,
                    b.candidate.byte_range,
                    &b.candidate.mutator,
                ))
        });
        Ok(out)
    }

    pub fn put_seed_status(&self, s: &SeedStatus) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO seeds (seed, status, detail) VALUES (?1, ?2, ?3)",
                params![s.seed, s.status, s.detail],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn seed_statuses(&self) -> Result<Vec<SeedStatus>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seed, status, detail FROM seeds ORDER BY seed")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SeedStatus {
                    seed: r.get(0)?,
                    status: r.get(1)?,
                    detail: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Add `seconds` to a stage's total for a seed.
    pub fn add_stage_time(&self, seed: &str, stage: &str, seconds: f64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO stage_times (seed, stage, seconds) VALUES (?1, ?2, ?3)
                 ON CONFLICT (seed, stage) DO UPDATE SET seconds = seconds + excluded.seconds",
                params![seed, stage, seconds],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every stored baseline: (seed, commit, its JSON).
    pub fn baselines(&self) -> Result<Vec<(String, String, String)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seed, commit_id, json FROM baselines ORDER BY seed, commit_id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    /// Store a baseline's JSON as it is (a merge copies them between stores).
    pub fn put_baseline_json(
        &self,
        seed: &str,
        commit: &str,
        json: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO baselines (seed, commit_id, json) VALUES (?1, ?2, ?3)",
                params![seed, commit, json],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn stage_times(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seed, stage, seconds FROM stage_times ORDER BY seed, stage")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_is_kept_per_seed_beside_its_evidence() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        assert!(!store.has_evidence("a").unwrap());
        assert_eq!(store.fingerprint("a").unwrap(), None);
        let f: Fingerprint = serde_json::from_str(r#"{"--repeats": 3}"#).unwrap();
        store.put_fingerprint("a", &f).unwrap();
        store.put_baseline_json("a", "c0ffee", "{}").unwrap();
        assert!(store.has_evidence("a").unwrap());
        assert!(!store.has_evidence("b").unwrap());
        assert_eq!(store.fingerprint("a").unwrap(), Some(f));
        // A merge copies them as they are, the first one given winning.
        store
            .put_fingerprint_json("a", r#"{"--repeats": 5}"#)
            .unwrap();
        assert_eq!(
            store.fingerprints().unwrap(),
            [("a".to_string(), r#"{"--repeats":3}"#.to_string())]
        );
    }

    #[test]
    fn a_store_older_than_fingerprints_opens_with_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(
            "CREATE TABLE baselines (seed TEXT NOT NULL, commit_id TEXT NOT NULL,
                 json TEXT NOT NULL, PRIMARY KEY (seed, commit_id));
             INSERT INTO baselines VALUES ('a', 'c0ffee', '{}');",
        )
        .unwrap();
        drop(old);
        let store = Store::open(&path).unwrap();
        assert!(store.has_evidence("a").unwrap());
        assert_eq!(store.fingerprint("a").unwrap(), None);
    }
}
