//! Peer: the one-run rule of the simplest validators (SWE-smith's), run on the same candidates
//! as swe-forge's protocol so that the two can be compared in one command (`bench peer`).
//!
//! The rule: one clean run of the whole suite in a fresh process; then, per candidate, one
//! fresh process running the whole suite on the buggy tree. A candidate is valid when at least
//! one test passed clean and does not pass with the bug (its FAIL_TO_PASS) and at least one
//! test passed in both (its PASS_TO_PASS). Nothing is repeated, nothing is screened.

use crate::candidate::Candidate;
use crate::run::{Run, TestStatus};
use crate::runner::{RunBudget, RunnerError, TestRunner};
use crate::sandbox::Environment;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

/// One candidate under the one-run rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerDecision {
    pub candidate: String,
    pub valid: bool,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// Wall seconds of the candidate's run (its reset and patch included).
    pub seconds: f64,
    /// How the run ended (`exited`, `timed-out`, `signaled`), or the error that stopped it.
    pub end: String,
}

/// The one-run rule over a seed's candidates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerRun {
    pub seed: String,
    /// Parallel workers (each a core's worth of work).
    pub jobs: usize,
    /// Wall seconds of the clean run (once per seed; not counted per candidate).
    pub clean_seconds: f64,
    /// Tests the clean run passed.
    pub clean_passed: usize,
    /// Wall seconds of the candidates' runs, from the first start to the last end.
    pub wall_seconds: f64,
    pub decisions: Vec<PeerDecision>,
}

impl PeerRun {
    /// Core-seconds per decided candidate: wall × jobs ÷ decided.
    pub fn core_seconds_per_decided(&self) -> Option<f64> {
        (!self.decisions.is_empty())
            .then(|| self.wall_seconds * self.jobs as f64 / self.decisions.len() as f64)
    }

    pub fn valid(&self) -> BTreeSet<String> {
        self.decisions
            .iter()
            .filter(|d| d.valid)
            .map(|d| d.candidate.clone())
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("the peer's clean run: {0}")]
    Clean(String),
}

/// The one-run rule's decision from the clean run's passing tests and the buggy run.
pub fn decide(clean_passed: &BTreeSet<String>, buggy: &Run) -> (Vec<String>, Vec<String>) {
    let mut f2p = Vec::new();
    let mut p2p = Vec::new();
    for id in clean_passed {
        if buggy.status(id) == TestStatus::Passed {
            p2p.push(id.clone());
        } else {
            f2p.push(id.clone());
        }
    }
    (f2p, p2p)
}

/// Run the one-run rule on `candidates` with `jobs` workers of `env` (fresh processes:
/// `runner` must start one per run), each run under `budget`.
pub fn run(
    seed: &str,
    env: &dyn Environment,
    runner: &dyn TestRunner,
    candidates: &[Candidate],
    jobs: usize,
    budget: RunBudget,
) -> Result<PeerRun, PeerError> {
    let t = Instant::now();
    let clean = env
        .worker(0)
        .map_err(|e| e.to_string())
        .and_then(|mut w| {
            w.reset().map_err(|e| e.to_string())?;
            runner
                .run(w.as_mut(), "peer-clean", None, budget)
                .map_err(|e| e.to_string())
        })
        .map_err(PeerError::Clean)?;
    let clean_seconds = t.elapsed().as_secs_f64();
    let clean_passed: BTreeSet<String> =
        clean.with_status(TestStatus::Passed).into_iter().collect();
    if clean_passed.is_empty() {
        return Err(PeerError::Clean(format!(
            "no test passed: {}",
            clean.summary()
        )));
    }
    let jobs = jobs.max(1).min(candidates.len().max(1));
    let queue = Mutex::new(candidates.iter().collect::<VecDeque<_>>());
    let decisions = Mutex::new(Vec::new());
    let t = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..jobs {
            let (queue, decisions, clean_passed) = (&queue, &decisions, &clean_passed);
            scope.spawn(move || {
                let mut worker = match env.worker(i + 1) {
                    Ok(w) => w,
                    Err(e) => {
                        tracing::warn!("peer worker {i}: {e}");
                        return;
                    }
                };
                loop {
                    let Some(cand) = queue.lock().expect("queue").pop_front() else {
                        return;
                    };
                    let started = Instant::now();
                    let ran = (|| -> Result<Run, RunnerError> {
                        worker.reset()?;
                        worker.apply_patch(&cand.bug_patch)?;
                        runner.run(worker.as_mut(), "peer-buggy", None, budget)
                    })();
                    let seconds = started.elapsed().as_secs_f64();
                    let decision = match ran {
                        Ok(run) => {
                            let (f2p, p2p) = decide(clean_passed, &run);
                            PeerDecision {
                                candidate: cand.id.clone(),
                                valid: !f2p.is_empty() && !p2p.is_empty(),
                                fail_to_pass: f2p,
                                pass_to_pass: p2p,
                                seconds,
                                end: format!("{:?}", run.end).to_lowercase(),
                            }
                        }
                        Err(e) => PeerDecision {
                            candidate: cand.id.clone(),
                            valid: false,
                            fail_to_pass: Vec::new(),
                            pass_to_pass: Vec::new(),
                            seconds,
                            end: format!("error: {e}"),
                        },
                    };
                    decisions.lock().expect("decisions").push(decision);
                }
            });
        }
    });
    let mut decisions = decisions.into_inner().expect("decisions");
    decisions.sort_by(|a, b| a.candidate.cmp(&b.candidate));
    Ok(PeerRun {
        seed: seed.to_string(),
        jobs,
        clean_seconds,
        clean_passed: clean_passed.len(),
        wall_seconds: t.elapsed().as_secs_f64(),
        decisions,
    })
}

/// One candidate both sides decided differently.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    pub candidate: String,
    /// swe-forge's verdict: `accepted`, or its rejection reason.
    pub ours: String,
    pub peer_valid: bool,
    /// The peer's run ended otherwise than with an exit (a timeout, an error).
    pub peer_end: String,
}

/// What swe-forge's tasks guard against besides their own bug, measured with the one-run
/// rule's whole-suite runs: each pair of one of our tasks and another candidate whose bug
/// fails at least one test in the whole suite (a regression an agent could leave behind while
/// fixing the task). The pair is caught when the task's graded tests (FAIL_TO_PASS and
/// PASS_TO_PASS) hold a test that bug fails, so the agent would earn nothing; graded by the
/// whole suite (`--grading-scope suite`) every pair is caught.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Regressions {
    pub pairs: usize,
    pub caught: usize,
    /// The pairs whose two bugs are in the same file.
    pub same_file_pairs: usize,
    pub same_file_caught: usize,
}

impl Regressions {
    /// `tasks`: each task's (file, graded tests); `kills`: each other candidate's (id, file,
    /// the tests its bug fails in the whole suite). A task's own candidate is left out by id.
    pub fn count(
        tasks: &[(&str, &str, BTreeSet<&str>)],
        kills: &[(&str, &str, BTreeSet<&str>)],
    ) -> Regressions {
        let mut r = Regressions::default();
        for (task, file, graded) in tasks {
            for (other, other_file, fails) in kills {
                if other == task || fails.is_empty() {
                    continue;
                }
                let caught = fails.iter().any(|t| graded.contains(t));
                r.pairs += 1;
                r.caught += caught as usize;
                if file == other_file {
                    r.same_file_pairs += 1;
                    r.same_file_caught += caught as usize;
                }
            }
        }
        r
    }
}

/// `bench peer`'s figures for one seed.
#[derive(Clone, Debug, Serialize)]
pub struct SeedComparison {
    pub seed: String,
    /// swe-forge's runner (`resident` or `fresh`).
    pub runner: String,
    pub jobs: usize,
    pub decided: usize,
    /// Core-seconds per decided candidate: the stage's wall × jobs ÷ decided.
    pub ours_core_s_per_decided: f64,
    pub peer_core_s_per_decided: f64,
    /// peer ÷ ours: how many times fewer core-seconds swe-forge spends per decided candidate.
    pub ratio: f64,
    /// swe-forge's verify stage without test synthesis (its own stage), per decided candidate.
    pub ours_core_s_per_decided_without_synthesis: f64,
    /// The once-per-seed set-up of each side: swe-forge's baseline (repeats, coverage) and
    /// resident runner; the peer's clean run.
    pub ours_setup_s: f64,
    pub peer_setup_s: f64,
    pub ours_accepted: BTreeSet<String>,
    pub peer_valid: BTreeSet<String>,
    pub differences: Vec<Difference>,
    /// What our tasks' grading commands catch of the other candidates' bugs.
    pub regressions: Regressions,
}

/// Compare the peer's decisions (`OUT/peer/<seed>.json`) with swe-forge's (the state store) in
/// the output directory of a `bench peer` run.
pub fn compare(
    summary: &crate::pipeline::RunSummary,
) -> Result<Vec<SeedComparison>, crate::store::StoreError> {
    let store = crate::store::Store::open(&summary.out.join("state.db"))?;
    let decided = store.decided()?;
    let stages = store.stage_times()?;
    let mut out = Vec::new();
    for s in &summary.seeds {
        let path = summary.out.join("peer").join(format!("{}.json", s.seed));
        let Some(peer) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<PeerRun>(&t).ok())
        else {
            continue;
        };
        let mine: Vec<_> = decided.iter().filter(|d| d.seed == s.seed).collect();
        let stage = |name: &str| {
            stages
                .iter()
                .filter(|(seed, st, _)| *seed == s.seed && st == name)
                .map(|(_, _, secs)| *secs)
                .sum::<f64>()
        };
        let jobs = peer.jobs;
        let per = |secs: f64| {
            if mine.is_empty() {
                0.0
            } else {
                secs * jobs as f64 / mine.len() as f64
            }
        };
        let ours = per(stage("verify"));
        let peer_per = peer.core_seconds_per_decided().unwrap_or(0.0);
        let ours_accepted: BTreeSet<String> = mine
            .iter()
            .filter(|d| d.task.is_some())
            .map(|d| d.candidate.id.clone())
            .collect();
        let peer_valid = peer.valid();
        let mut differences = Vec::new();
        for d in &peer.decisions {
            let ours_verdict = mine
                .iter()
                .find(|m| m.candidate.id == d.candidate)
                .map(|m| match m.outcome.verdict.reason() {
                    None => "accepted".to_string(),
                    Some(r) => r.to_string(),
                })
                .unwrap_or_else(|| "undecided".to_string());
            if (ours_verdict == "accepted") != d.valid {
                differences.push(Difference {
                    candidate: d.candidate.clone(),
                    ours: ours_verdict,
                    peer_valid: d.valid,
                    peer_end: d.end.clone(),
                });
            }
        }
        let tasks: Vec<(&str, &str, BTreeSet<&str>)> = mine
            .iter()
            .filter(|d| d.task.is_some())
            .map(|d| {
                let graded = d
                    .outcome
                    .fail_to_pass
                    .iter()
                    .chain(&d.outcome.pass_to_pass)
                    .map(String::as_str)
                    .collect();
                (d.candidate.id.as_str(), d.candidate.file.as_str(), graded)
            })
            .collect();
        let kills: Vec<(&str, &str, BTreeSet<&str>)> = peer
            .decisions
            .iter()
            .filter_map(|p| {
                let file = mine
                    .iter()
                    .find(|m| m.candidate.id == p.candidate)?
                    .candidate
                    .file
                    .as_str();
                let fails = p.fail_to_pass.iter().map(String::as_str).collect();
                Some((p.candidate.as_str(), file, fails))
            })
            .collect();
        let regressions = Regressions::count(&tasks, &kills);
        out.push(SeedComparison {
            seed: s.seed.clone(),
            runner: s.runner.clone(),
            jobs,
            decided: mine.len(),
            ours_core_s_per_decided: ours,
            peer_core_s_per_decided: peer_per,
            ratio: if ours > 0.0 { peer_per / ours } else { 0.0 },
            ours_core_s_per_decided_without_synthesis: per(
                (stage("verify") - stage("synthesis")).max(0.0)
            ),
            ours_setup_s: stage("baseline") + stage("resident"),
            peer_setup_s: peer.clean_seconds,
            ours_accepted,
            peer_valid,
            differences,
            regressions,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunEnd, TestResult};
    use std::collections::BTreeMap;

    fn run_with(results: &[(&str, TestStatus)]) -> Run {
        Run {
            label: "peer-buggy".into(),
            requested: None,
            end: RunEnd::Exited,
            exit_code: Some(1),
            signal: None,
            results: results
                .iter()
                .map(|(id, st)| {
                    (
                        id.to_string(),
                        TestResult {
                            status: *st,
                            duration_s: 0.0,
                            message: None,
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
            duration_s: 1.0,
            cpu_s: None,
            log_digest: String::new(),
            log_path: None,
            anomaly: None,
            oom_kills: 0,
            collection_errors: BTreeMap::new(),
            nondeterministic: BTreeMap::new(),
            file_order: Vec::new(),
            indirect: None,
        }
    }

    #[test]
    fn a_test_that_passed_clean_and_is_missing_with_the_bug_is_fail_to_pass() {
        let clean: BTreeSet<String> = ["t::a", "t::b", "t::c"].map(String::from).into();
        // t::c is missing (its file no longer collects): it does not pass, so it counts.
        let buggy = run_with(&[
            ("t::a", TestStatus::Passed),
            ("t::b", TestStatus::Failed),
            ("t::new", TestStatus::Failed),
        ]);
        let (f2p, p2p) = decide(&clean, &buggy);
        assert_eq!(f2p, vec!["t::b", "t::c"]);
        assert_eq!(p2p, vec!["t::a"]);
    }

    #[test]
    fn a_regression_is_caught_when_the_task_grades_a_test_its_bug_fails() {
        let set = |ids: &[&'static str]| ids.iter().copied().collect::<BTreeSet<&str>>();
        let tasks = vec![
            ("A", "m.py", set(&["t1", "t2"])),
            ("B", "n.py", set(&["t3"])),
        ];
        let kills = vec![
            ("A", "m.py", set(&["t1"])),
            ("B", "n.py", set(&["t3", "t1"])),
            ("C", "m.py", set(&["t9"])),
            ("D", "n.py", set(&[])),
        ];
        let r = Regressions::count(&tasks, &kills);
        // A against B (caught: t1), C (not); B against A (not: t1 is not B's), C (not).
        assert_eq!(r.pairs, 4);
        assert_eq!(r.caught, 1);
        // Same file: A–C (m.py), not caught; B has no other kill in n.py with failures.
        assert_eq!((r.same_file_pairs, r.same_file_caught), (1, 0));
    }

    #[test]
    fn core_seconds_per_decided_is_wall_times_jobs_over_decided() {
        let d = |id: &str, valid| PeerDecision {
            candidate: id.into(),
            valid,
            fail_to_pass: vec![],
            pass_to_pass: vec![],
            seconds: 1.0,
            end: "exited".into(),
        };
        let p = PeerRun {
            jobs: 2,
            wall_seconds: 10.0,
            decisions: vec![d("a", true), d("b", false), d("c", true), d("d", false)],
            ..Default::default()
        };
        assert_eq!(p.core_seconds_per_decided(), Some(5.0));
        assert_eq!(p.valid(), ["a", "c"].map(String::from).into());
        assert_eq!(PeerRun::default().core_seconds_per_decided(), None);
    }
}
