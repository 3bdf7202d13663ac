//! Reachability: whether any caller can run the mutated function's code (`reach.py`).

use super::helpers::{put_scratch, python_path, ship_helpers};
use super::trace::{module_name, Trace};
use super::{SynthError, SynthSetup};
use crate::candidate::Candidate;
use crate::sandbox::{shell_quote, Worker};
use serde::Deserialize;
use std::time::Duration;

/// Why the mutated function's code can never run, when it cannot (`reach.py`): no function
/// object holds that code once every module of the package is imported (the mutated one must
/// import), and it is not a function defined inside another one. Asked of survivors no test
/// and no import ran (`not-covered`): a definition an import replaces (boltons' `urlutils`
/// keeps a copy of `OrderedMultiDict`, then imports `dictutils`' over it), or one only another
/// Python would define. `Ok(None)`: it can run, or the probe could not tell.
pub fn unreachable(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    timeout: Duration,
) -> Result<Option<String>, SynthError> {
    let empty = Trace::default();
    let Some(module) = module_name(&empty, setup, &cand.file) else {
        return Ok(None);
    };
    let mut modules = vec![module.clone()];
    for f in &setup.source_files {
        if let Some(m) = module_name(&empty, setup, f).filter(|m| *m != module) {
            modules.push(m);
        }
    }
    worker.reset()?;
    let scratch = worker.scratch().to_string();
    ship_helpers(worker, timeout)?;
    let request = serde_json::json!({
        "modules": modules,
        "file": cand.file,
        "qualname": cand.function,
        "lines": [cand.function_lines.0, cand.function_lines.1],
    });
    put_scratch(
        worker,
        "swe_forge_reach_in.json",
        request.to_string().as_bytes(),
        timeout,
    )?;
    let script = format!(
        "{}{} {} {} {} >/dev/null 2>&1\n",
        python_path(setup, &scratch),
        setup.python,
        shell_quote(&format!("{scratch}/swe_forge_reach.py")),
        shell_quote(&format!("{scratch}/swe_forge_reach_in.json")),
        shell_quote(&format!("{scratch}/swe_forge_reach.json")),
    );
    worker.exec(&script, timeout)?;
    let bytes = worker.read_scratch("swe_forge_reach.json")?;
    worker.reset()?;
    #[derive(Deserialize)]
    struct Reach {
        imported: usize,
        failed: Vec<String>,
        live: usize,
        nested: bool,
    }
    let Some(reach) = bytes.and_then(|b| serde_json::from_slice::<Reach>(&b).ok()) else {
        return Ok(None);
    };
    let mutated_imported = !reach
        .failed
        .iter()
        .any(|f| f.starts_with(&format!("{module} (")));
    if reach.live > 0 || reach.nested || !mutated_imported || reach.imported == 0 {
        return Ok(None);
    }
    Ok(Some(format!(
        "unreachable: once the package is imported ({} of {} modules), no function object holds \
         the code of `{}` ({}:{}), and no test or import ran its lines: no caller can run the \
         mutated code",
        reach.imported,
        reach.imported + reach.failed.len(),
        cand.function,
        cand.file,
        cand.function_lines.0
    )))
}
