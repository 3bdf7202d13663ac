//! Issue texts: the problem statement of a task, rendered from templates/issue/ and grounded
//! in the observed failure. It never names files, lines, the diff or the hidden tests.

use crate::assets;
use crate::candidate::Candidate;
use crate::run::Run;
use minijinja::{context, Environment};

#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("issue template `{0}` is missing")]
    MissingTemplate(String),
    #[error("rendering issue template `{name}`: {source}")]
    Render {
        name: String,
        source: minijinja::Error,
    },
}

/// What the problem statement is written from.
pub struct IssueInput<'a> {
    pub candidate: &'a Candidate,
    /// The first buggy run of the whole suite (check 2).
    pub buggy_run: Option<&'a Run>,
    pub fail_to_pass: &'a [String],
    /// Test files of the repository: their paths are scrubbed from observed messages.
    pub test_files: &'a [String],
    /// For a synthesized test: the inputs on which the code misbehaves (the call, what it
    /// should do, what it does).
    pub cases: &'a [crate::synth::Distinguishing],
}

/// Render the plain problem statement.
pub fn problem_statement(input: &IssueInput<'_>) -> Result<String, IssueError> {
    let name = "issue/plain.md.j2";
    let source =
        assets::template(name).ok_or_else(|| IssueError::MissingTemplate(name.to_string()))?;
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.add_template(name, source)
        .map_err(|source| IssueError::Render {
            name: name.into(),
            source,
        })?;
    let cand = input.candidate;
    let public = cand.function.rsplit('.').next().unwrap_or(&cand.function);
    let hint = cand.issue_hints.first().cloned().unwrap_or_default();
    let title = if hint.is_empty() {
        format!("`{public}` returns wrong results")
    } else {
        format!("`{public}`: {hint}")
    };
    let observed = observed_failure(input);
    let calls: Vec<minijinja::Value> = input
        .cases
        .iter()
        .map(|d| {
            minijinja::Value::from_serialize(serde_json::json!({
                "call": d.call_text(),
                "expected": d.clean.describe(),
                "actual": d.buggy.describe(),
            }))
        })
        .collect();
    env.get_template(name)
        .and_then(|t| {
            t.render(context! {
                title => title,
                function => cand.function,
                hint => hint,
                observed => observed,
                calls => calls,
                failing_count => input.fail_to_pass.len(),
            })
        })
        .map(|s| s.trim().to_string() + "\n")
        .map_err(|source| IssueError::Render {
            name: name.into(),
            source,
        })
}

/// The first failure message of the buggy run, without lines that point into test files.
fn observed_failure(input: &IssueInput<'_>) -> String {
    let Some(run) = input.buggy_run else {
        return String::new();
    };
    let message = input
        .fail_to_pass
        .iter()
        .filter_map(|t| run.results.get(t))
        .find_map(|r| r.message.clone())
        .unwrap_or_default();
    let test_names: Vec<&str> = input
        .fail_to_pass
        .iter()
        .map(|t| t.rsplit("::").next().unwrap_or(t))
        .map(|n| n.split('[').next().unwrap_or(n))
        .collect();
    message
        .lines()
        .filter(|l| !input.test_files.iter().any(|f| l.contains(f.as_str())))
        .filter(|l| !test_names.iter().any(|n| l.contains(n)))
        .filter(|l| !l.contains(".py:"))
        // Object reprs carry memory addresses (never reproducible) and module paths.
        .filter(|l| !l.contains(" object at 0x"))
        .take(12)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}
