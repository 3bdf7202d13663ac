//! What a run reads and writes beside its store: candidate files (`verify --candidates`),
//! the candidates listing, tasks.jsonl and summary.json.

use super::*;
use crate::candidate::Candidate;
use crate::store::Store;
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Read candidates from JSON lines (blank lines ignored); an error names the line.
pub(super) fn read_candidates(path: &Path) -> Result<Vec<Candidate>, PipelineError> {
    let text =
        std::fs::read_to_string(path).map_err(io_err(format!("reading {}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let c: Candidate = serde_json::from_str(line).map_err(|e| PipelineError::Io {
            context: format!("{}:{}", path.display(), i + 1),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        })?;
        out.push(c);
    }
    Ok(out)
}

/// Split candidates read from a file into those that apply to this checkout and those that
/// do not, with the reason: a path that is not relative to the repository root, a file
/// that is not there, or an edit whose byte range or clean text does not match the file.
pub(super) fn check_candidates(
    root: &Path,
    cands: Vec<Candidate>,
) -> (Vec<Candidate>, Vec<(String, String)>) {
    let mut texts: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut usable = Vec::new();
    let mut refused = Vec::new();
    for c in cands {
        let rel = Path::new(&c.file);
        let relative = !c.file.is_empty()
            && rel
                .components()
                .all(|p| matches!(p, std::path::Component::Normal(_)));
        if !relative {
            refused.push((
                c.id.clone(),
                format!("`{}` is not a path relative to the repository root", c.file),
            ));
            continue;
        }
        let text = texts
            .entry(c.file.clone())
            .or_insert_with(|| std::fs::read_to_string(root.join(rel)).ok());
        let Some(text) = text else {
            refused.push((
                c.id.clone(),
                format!("`{}` is not in the repository", c.file),
            ));
            continue;
        };
        let (a, b) = c.byte_range;
        let matches = a <= b
            && b <= text.len()
            && text.is_char_boundary(a)
            && text.is_char_boundary(b)
            && text[a..b] == c.before;
        if !matches {
            refused.push((
                c.id.clone(),
                format!(
                    "its edit (bytes {a}..{b}) does not match the text of `{}` at this commit",
                    c.file
                ),
            ));
            continue;
        }
        usable.push(c);
    }
    (usable, refused)
}

/// Write the sampled candidates of a seed (before verification) for inspection.
pub(super) fn write_candidates_listing(
    out: &Path,
    seed: &str,
    sampled: &[Candidate],
) -> Result<(), PipelineError> {
    let dir = out.join("logs").join(seed);
    std::fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
    let mut text = String::new();
    for c in sampled {
        text.push_str(&serde_json::to_string(c).expect("candidate serializes"));
        text.push('\n');
    }
    std::fs::write(dir.join("sampled.jsonl"), text).map_err(io_err("writing sampled.jsonl"))
}

/// One line of candidates.jsonl: a candidate and what became of it.
#[derive(Serialize)]
pub(super) struct CandidateLine<'a> {
    pub(super) seed: &'a str,
    #[serde(flatten)]
    pub(super) candidate: &'a Candidate,
    #[serde(flatten)]
    pub(super) verdict: &'a Verdict,
    pub(super) covering_tests: usize,
    pub(super) fail_to_pass: usize,
    pub(super) pass_to_pass: usize,
    pub(super) runs: Vec<RunLine<'a>>,
    /// Checks whose evidence is earlier runs of the same tree (no runs of their own).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(super) reused: &'a [crate::verify::ReusedCheck],
    pub(super) seconds: f64,
    pub(super) instance_id: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct RunLine<'a> {
    pub(super) label: &'a str,
    pub(super) summary: String,
    pub(super) log_digest: &'a str,
}

/// Rewrite tasks.jsonl and candidates.jsonl from the store; returns the number of tasks.
pub fn write_outputs(store: &Store, out: &Path) -> Result<usize, PipelineError> {
    let decided = store.decided()?;
    let tasks_path = out.join("tasks.jsonl");
    let cands_path = out.join("candidates.jsonl");
    let mut tasks = std::io::BufWriter::new(
        std::fs::File::create(&tasks_path).map_err(io_err("creating tasks.jsonl"))?,
    );
    let mut cands = std::io::BufWriter::new(
        std::fs::File::create(&cands_path).map_err(io_err("creating candidates.jsonl"))?,
    );
    let mut n = 0;
    for d in &decided {
        if let Some(t) = &d.task {
            serde_json::to_writer(&mut tasks, t).expect("task serializes");
            tasks
                .write_all(b"\n")
                .map_err(io_err("writing tasks.jsonl"))?;
            n += 1;
        }
        let line = CandidateLine {
            seed: &d.seed,
            candidate: &d.candidate,
            verdict: &d.outcome.verdict,
            covering_tests: d.outcome.covering.len(),
            fail_to_pass: d.outcome.fail_to_pass.len(),
            pass_to_pass: d.outcome.pass_to_pass.len(),
            runs: d
                .outcome
                .runs
                .iter()
                .map(|r| RunLine {
                    label: &r.label,
                    summary: r.summary(),
                    log_digest: &r.log_digest,
                })
                .collect(),
            reused: &d.outcome.reused,
            seconds: d.outcome.seconds,
            instance_id: d.task.as_ref().map(|t| t.instance_id.as_str()),
        };
        serde_json::to_writer(&mut cands, &line).expect("candidate line serializes");
        cands
            .write_all(b"\n")
            .map_err(io_err("writing candidates.jsonl"))?;
    }
    tasks.flush().map_err(io_err("writing tasks.jsonl"))?;
    cands.flush().map_err(io_err("writing candidates.jsonl"))?;
    Ok(n)
}
