//! The symbolic comparison: CrossHair's `diffbehavior` (`crosshair.py`) on the clean and the
//! buggy version of one function, its proposal replayed like any.

use super::search::{replay_proposals, run_on_buggy, Proposal};
use super::templates::search_templates;
use super::trace::Trace;
use super::{Search, SynthError, SynthSetup, CROSSHAIR_SECONDS};
use crate::candidate::Candidate;
use crate::sandbox::Worker;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// CrossHair's `diffbehavior` on one function: the clean vs the buggy version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Symbolic {
    /// `module.qualname` it compared.
    pub function: String,
    /// Paths it tried.
    pub iterations: usize,
    /// "All paths exhausted": the versions agree on every path it found (evidence of an
    /// equivalent mutant).
    pub exhausted: bool,
    /// It proposed an input on which the versions differ.
    pub proposed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Symbolic {
    /// One line for a verdict's evidence.
    pub fn describe(&self) -> String {
        match (&self.error, self.exhausted) {
            (Some(e), _) => format!("CrossHair could not compare `{}`: {e}", self.function),
            (None, true) => format!(
                "CrossHair exhausted all paths of `{}` ({} iterations) and found no difference",
                self.function, self.iterations
            ),
            (None, false) => format!(
                "CrossHair found no difference in `{}` within {CROSSHAIR_SECONDS} s ({} iterations, paths not exhausted)",
                self.function, self.iterations
            ),
        }
    }
}

/// CrossHair compares the clean and the buggy version of one function symbolically: the
/// mutated function itself when a template calls it, else the first entry function. Its
/// proposal is replayed like any; "all paths exhausted" is kept as evidence of equivalence.
pub(super) fn symbolic(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let (templates, _) = search_templates(trace, setup, cand);
    let Some(target) = templates
        .iter()
        .find(|t| t.qualname == cand.function)
        .or(templates.first())
    else {
        return Ok(());
    };
    let request = serde_json::json!({
        "module": target.module,
        "qualname": target.qualname,
        "receiver": target.receiver,
        "args": if target.args.is_empty() { None } else { Some(&target.args) },
        "seconds": CROSSHAIR_SECONDS,
    });
    let mut sym = Symbolic {
        function: format!("{}.{}", target.module, target.qualname),
        ..Symbolic::default()
    };
    let limit = timeout.max(Duration::from_secs(CROSSHAIR_SECONDS * 5 + 40));
    let bytes = match run_on_buggy(worker, setup, cand, "crosshair", request, limit)? {
        Ok(b) => b,
        Err(why) => {
            sym.error = Some(why);
            search.symbolic = Some(sym);
            return Ok(());
        }
    };
    #[derive(Deserialize)]
    struct Answer {
        found: Vec<Proposal>,
        #[serde(default)]
        exhausted: bool,
        #[serde(default)]
        iterations: usize,
        #[serde(default)]
        error: Option<String>,
    }
    let answer: Answer = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("crosshair.json: {e}")))?;
    sym.exhausted = answer.exhausted;
    sym.iterations = answer.iterations;
    sym.error = answer.error;
    sym.proposed = !answer.found.is_empty();
    search.symbolic = Some(sym);
    replay_proposals(
        worker,
        setup,
        cand,
        &templates,
        answer.found,
        timeout,
        search,
    )
}
