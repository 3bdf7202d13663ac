//! The Python halves of synthesis, shipped into the worker's scratch directory, and the
//! shell around running them there (the import path).

use super::{SynthError, SynthSetup};
use crate::sandbox::{shell_quote, Worker};
use std::time::Duration;

pub(super) const LITERAL_PY: &str = include_str!("literal.py");
const TRACE_PY: &str = include_str!("trace.py");
const REPLAY_PY: &str = include_str!("replay.py");
const SEARCH_PY: &str = include_str!("search.py");
const CROSSHAIR_PY: &str = include_str!("crosshair.py");
const REACH_PY: &str = include_str!("reach.py");

/// Write the Python helpers into the worker's scratch directory.
pub(super) fn ship_helpers(worker: &mut dyn Worker, timeout: Duration) -> Result<(), SynthError> {
    for (name, body) in [
        ("swe_forge_literal.py", LITERAL_PY),
        ("swe_forge_trace.py", TRACE_PY),
        ("swe_forge_replay.py", REPLAY_PY),
        ("swe_forge_search.py", SEARCH_PY),
        ("swe_forge_crosshair.py", CROSSHAIR_PY),
        ("swe_forge_reach.py", REACH_PY),
    ] {
        put_scratch(worker, name, body.as_bytes(), timeout)?;
    }
    Ok(())
}

/// Raw bytes per piece [`put_scratch`] writes: 48 KB once in base64, well inside the 128 KiB
/// a single command-line argument (the script) may hold.
const PUT_PIECE: usize = 36_000;

/// Write `content` to the file `name` of the worker's scratch directory, in pieces of its own
/// scripts: the helpers, a module's source or a list of calls would not fit one script.
pub(super) fn put_scratch(
    worker: &mut dyn Worker,
    name: &str,
    content: &[u8],
    timeout: Duration,
) -> Result<(), SynthError> {
    use base64::Engine as _;
    let path = shell_quote(&format!("{}/{name}", worker.scratch()));
    let mut pieces: Vec<&[u8]> = content.chunks(PUT_PIECE).collect();
    if pieces.is_empty() {
        pieces.push(&[]);
    }
    for (i, piece) in pieces.into_iter().enumerate() {
        let encoded = base64::engine::general_purpose::STANDARD.encode(piece);
        let redirect = if i == 0 { ">" } else { ">>" };
        let out = worker.exec(
            &format!("printf %s '{encoded}' | base64 -d {redirect} {path}\n"),
            timeout,
        )?;
        if out.exit_code != Some(0) {
            return Err(SynthError::Helper(format!(
                "writing {name} into the sandbox: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    Ok(())
}

pub(super) fn python_path(setup: &SynthSetup, scratch: &str) -> String {
    let mut parts: Vec<String> = vec![scratch.to_string()];
    parts.extend(setup.python_path.iter().cloned());
    format!(
        "export PYTHONPATH={}${{PYTHONPATH:+:$PYTHONPATH}}\n",
        shell_quote(&parts.join(":"))
    )
}
