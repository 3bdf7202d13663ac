//! Test synthesis for survivors (Python): record calls while the clean suite runs, replay
//! those that reach the mutated function on the clean and the buggy code, and write the
//! inputs whose outcome differs as a small pytest file that calls the public API.
//!
//! The Python halves ship into the sandbox: `trace.py` (a pytest plugin recording calls and
//! which repository functions each reached), `replay.py` (makes the calls, twice, and writes
//! their outcomes) and `literal.py` (values as Python source, or refused). The synthesized
//! file goes through the same triple verification as every task (see
//! [`crate::verify::verify_synthesized`]).

use crate::candidate::Candidate;
use crate::sandbox::{shell_quote, SandboxError, Worker};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const LITERAL_PY: &str = include_str!("literal.py");
const TRACE_PY: &str = include_str!("trace.py");
const REPLAY_PY: &str = include_str!("replay.py");
const SEARCH_PY: &str = include_str!("search.py");
const CROSSHAIR_PY: &str = include_str!("crosshair.py");
const REACH_PY: &str = include_str!("reach.py");
/// CPU seconds CrossHair may spend per survivor (its `--per_condition_timeout`).
pub const CROSSHAIR_SECONDS: u64 = 6;
/// Seconds the Hypothesis search may spend per survivor.
pub const SEARCH_SECONDS: u64 = 12;
const TRACE_OUT: &str = "swe_forge_trace.json";
const TRACE_TESTS: &str = "swe_forge_trace_tests.txt";
const TRACE_TIMES: &str = "swe_forge_trace_times.txt";
const CALLS_IN: &str = "swe_forge_calls.json";
const REPLAY_OUT: &str = "swe_forge_replay.json";
/// At most this many recorded calls are replayed per survivor.
pub const MAX_REPLAYED: usize = 200;
/// At most this many asserts in one synthesized file.
pub const MAX_ASSERTS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    #[error("{0}")]
    Helper(String),
}

/// What synthesis needs to know about the repository.
#[derive(Clone, Debug)]
pub struct SynthSetup {
    /// The interpreter (`python`), as the test command uses it.
    pub python: String,
    /// The command that starts pytest (`python -m pytest`).
    pub pytest: String,
    /// Repository-relative source files whose functions are traced.
    pub source_files: Vec<String>,
    /// Import roots (`.`, `src`), prepended to PYTHONPATH.
    pub python_path: Vec<String>,
    /// Existing test files: the new file goes beside them under a name none of them has.
    pub test_files: Vec<String>,
}

/// One recorded call (see trace.py).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracedCall {
    pub file: String,
    pub module: String,
    pub qualname: String,
    /// Source of the receiver for methods (`Period(...)`), else `None`.
    pub receiver: Option<String>,
    /// `(arg, key=value)` source.
    pub args: String,
    pub imports: Vec<String>,
    /// `file::qualname` of every repository function this call reached, itself included.
    pub reaches: Vec<String>,
    /// Statements that come first (a scenario: the object's construction and earlier calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
}

/// An object followed through a test: its construction, then the methods called on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    pub file: String,
    pub module: String,
    pub cls: String,
    pub ctor_args: String,
    #[serde(default)]
    pub imports: Vec<String>,
    pub steps: Vec<ScenarioStep>,
    pub reaches: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStep {
    pub method: String,
    pub args: String,
}

/// Every call recorded in one run of the clean suite.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub calls: Vec<TracedCall>,
    /// Calls whose arguments could not be written back as source.
    pub dropped: usize,
    #[serde(default)]
    pub scenarios: Vec<Scenario>,
    /// CPU seconds the tracer's processes spent (user + system, from bash's `times`), where
    /// measured: what the tracer costs, whatever else the machine runs.
    #[serde(default)]
    pub cpu_s: Option<f64>,
}

/// What one call did (see replay.py).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CallOutcome {
    Value {
        source: Option<String>,
        repr: String,
        #[serde(default)]
        imports: Vec<String>,
        #[serde(default)]
        nondeterministic: bool,
        /// An object of the repository's classes with no source: its public attributes that
        /// can be written back (name → source), by which two such objects are told apart.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        attrs: BTreeMap<String, String>,
    },
    Raised {
        #[serde(rename = "type")]
        type_name: String,
        type_module: String,
        message: String,
        #[serde(default)]
        nondeterministic: bool,
        /// An exception of the repository's classes: its public attributes that can be
        /// written back (name → source), as for values.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        attrs: BTreeMap<String, String>,
        /// What those attributes' sources import.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        imports: Vec<String>,
    },
    Timeout,
    Error {
        detail: String,
    },
    /// A scenario: the outcome of each step.
    Scenario {
        steps: Vec<CallOutcome>,
        #[serde(default)]
        nondeterministic: bool,
    },
}

impl CallOutcome {
    fn deterministic(&self) -> bool {
        match self {
            CallOutcome::Value {
                nondeterministic, ..
            }
            | CallOutcome::Raised {
                nondeterministic, ..
            } => !nondeterministic,
            _ => false,
        }
    }

    /// A short human description: `returns 3` / `raises ValueError: empty`.
    pub fn describe(&self) -> String {
        match self {
            CallOutcome::Value { source, repr, .. } => {
                format!("returns {}", source.as_deref().unwrap_or(repr))
            }
            CallOutcome::Raised {
                type_name, message, ..
            } => {
                if message.is_empty() {
                    format!("raises {type_name}")
                } else {
                    format!("raises {type_name}: {message}")
                }
            }
            CallOutcome::Timeout => "does not return (times out)".into(),
            CallOutcome::Error { detail } => format!("cannot be called ({detail})"),
            CallOutcome::Scenario { steps, .. } => format!("{} steps", steps.len()),
        }
    }
}

/// An input on which the clean and the buggy code differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Distinguishing {
    pub call: TracedCall,
    pub clean: CallOutcome,
    pub buggy: CallOutcome,
}

impl Distinguishing {
    /// The call as a user writes it: `parse_quantity('2 kg')`, `Period(...).contains(...)`.
    pub fn call_text(&self) -> String {
        call_expr(&self.call)
    }

    /// When the two versions return objects that differ only in their state: the attributes
    /// that differ (name, the clean value's source, the buggy one's, `None` when it has no
    /// such attribute or one that cannot be written), at most 2.
    pub fn attr_differences(&self) -> Vec<(String, String, Option<String>)> {
        attr_differences(&self.clean, &self.buggy)
    }
}

fn attr_differences(
    clean: &CallOutcome,
    buggy: &CallOutcome,
) -> Vec<(String, String, Option<String>)> {
    let (a, b) = match (clean, buggy) {
        (
            CallOutcome::Value {
                source: None,
                attrs: a,
                ..
            },
            CallOutcome::Value {
                source: None,
                attrs: b,
                ..
            },
        ) => (a, b),
        // Two exceptions of one type with one message that differ in their attributes.
        (
            CallOutcome::Raised {
                type_name: ta,
                type_module: ma,
                message: xa,
                attrs: a,
                ..
            },
            CallOutcome::Raised {
                type_name: tb,
                type_module: mb,
                message: xb,
                attrs: b,
                ..
            },
        ) if (ta, ma, xa) == (tb, mb, xb) => (a, b),
        _ => return Vec::new(),
    };
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .take(2)
        .map(|(k, v)| (k.clone(), v.clone(), b.get(k).cloned()))
        .collect()
}

/// The result of searching recorded inputs for one survivor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// Recorded calls that reach the mutated function.
    pub reaching: usize,
    /// Of those, replayed (capped at [`MAX_REPLAYED`]).
    pub replayed: usize,
    /// Functions those calls enter through.
    pub entry_functions: usize,
    pub found: Vec<Distinguishing>,
    /// Entry functions Hypothesis searched (when no recorded input told the versions apart).
    #[serde(default)]
    pub searched: usize,
    /// Why the Hypothesis search could not run, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_error: Option<String>,
    /// What CrossHair said, when it ran (after Hypothesis found nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbolic: Option<Symbolic>,
}

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

/// A synthesized test file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthTest {
    pub path: String,
    pub source: String,
    /// pytest node ids of its tests.
    pub tests: Vec<String>,
    /// The cases it asserts, in test order.
    pub cases: Vec<Distinguishing>,
    /// `diff --git` adding the file.
    pub patch: String,
}

/// What synthesis did for one survivor, kept with its outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthRecord {
    /// `synthesized` (a test was written; the verdict says whether it verified),
    /// `no-difference` (recorded inputs reach the function, none tells the versions apart),
    /// `no-reaching-calls` (no recorded call reaches the function), `unreachable` (no caller
    /// can run the code: [`unreachable`]), `over-budget`, `error`.
    pub status: String,
    pub reaching: usize,
    pub replayed: usize,
    pub entry_functions: usize,
    /// Entry functions the Hypothesis search tried.
    #[serde(default)]
    pub searched: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_path: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<Distinguishing>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// What CrossHair said, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbolic: Option<Symbolic>,
}

impl SynthRecord {
    pub fn from_search(status: &str, s: &Search) -> SynthRecord {
        SynthRecord {
            status: status.to_string(),
            reaching: s.reaching,
            replayed: s.replayed,
            entry_functions: s.entry_functions,
            searched: s.searched,
            test_path: None,
            cases: s.found.clone(),
            detail: s.search_error.clone().unwrap_or_default(),
            symbolic: s.symbolic.clone(),
        }
    }
}

/// Write the Python helpers into the worker's scratch directory.
fn ship_helpers(worker: &mut dyn Worker, timeout: Duration) -> Result<(), SynthError> {
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
fn put_scratch(
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

fn python_path(setup: &SynthSetup, scratch: &str) -> String {
    let mut parts: Vec<String> = vec![scratch.to_string()];
    parts.extend(setup.python_path.iter().cloned());
    format!(
        "export PYTHONPATH={}${{PYTHONPATH:+:$PYTHONPATH}}\n",
        shell_quote(&parts.join(":"))
    )
}

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

/// Run the clean suite with the tracer: the tests `tests` names (all of them with `None`).
/// The worker is reset first and after.
pub fn trace(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    tests: Option<&[String]>,
    timeout: Duration,
) -> Result<Trace, SynthError> {
    worker.reset()?;
    let scratch = worker.scratch().to_string();
    let files = serde_json::to_string(&setup.source_files).unwrap_or_else(|_| "[]".into());
    ship_helpers(worker, timeout)?;
    // A selection: its ids in a file the plugin reads, one per line, and their files as
    // pytest's arguments, so only those are collected.
    let (selection, args) = match tests {
        Some(tests) => {
            let path = shell_quote(&format!("{scratch}/{TRACE_TESTS}"));
            let ids: String = tests.iter().map(|t| format!("{t}\n")).collect();
            put_scratch(worker, TRACE_TESTS, ids.as_bytes(), timeout)?;
            let files: BTreeSet<&str> = tests
                .iter()
                .map(|t| t.split("::").next().unwrap_or(t))
                .collect();
            let mut args: String = files
                .iter()
                .map(|f| format!(" {}", shell_quote(f)))
                .collect();
            if args.len() > 32_000 {
                args.clear(); // too many files for the command line: collect all, keep the ids
            }
            (format!("export SWE_FORGE_TRACE_TESTS={path}\n"), args)
        }
        None => (String::new(), String::new()),
    };
    let script = format!(
        "{}{selection}export SWE_FORGE_TRACE_FILES={} SWE_FORGE_TRACE_OUT={}\n{} -p swe_forge_trace -p no:cacheprovider --rootdir=. -q --no-header{args} >/dev/null 2>&1\ntimes > {}\ntest -s \"$SWE_FORGE_TRACE_OUT\"\n",
        python_path(setup, &scratch),
        shell_quote(&files),
        shell_quote(&format!("{scratch}/{TRACE_OUT}")),
        setup.pytest,
        shell_quote(&format!("{scratch}/{TRACE_TIMES}")),
    );
    let out = worker.exec(&script, timeout)?;
    worker.reset()?;
    let bytes = worker.read_scratch(TRACE_OUT)?.ok_or_else(|| {
        SynthError::Helper(format!(
            "the tracer wrote nothing (exit {:?}{}): {}",
            out.exit_code,
            if out.end == crate::run::RunEnd::TimedOut {
                ", timed out"
            } else {
                ""
            },
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
    })?;
    let mut trace: Trace = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("trace.json: {e}")))?;
    trace.cpu_s = worker
        .read_scratch(TRACE_TIMES)
        .ok()
        .flatten()
        .and_then(|b| crate::runner::parse_bash_times(&String::from_utf8_lossy(&b)));
    Ok(trace)
}

impl Trace {
    /// Add the records of another run (other tests): a call or scenario recorded by both is
    /// kept once, with what either saw it reach.
    pub fn merge(&mut self, other: Trace) {
        let mut calls: BTreeMap<(String, String, Option<String>, String), usize> = BTreeMap::new();
        for (i, c) in self.calls.iter().enumerate() {
            calls.insert(
                (
                    c.file.clone(),
                    c.qualname.clone(),
                    c.receiver.clone(),
                    c.args.clone(),
                ),
                i,
            );
        }
        for c in other.calls {
            let key = (
                c.file.clone(),
                c.qualname.clone(),
                c.receiver.clone(),
                c.args.clone(),
            );
            match calls.get(&key) {
                Some(&i) => union_into(&mut self.calls[i].reaches, c.reaches),
                None => {
                    calls.insert(key, self.calls.len());
                    self.calls.push(c);
                }
            }
        }
        self.dropped += other.dropped;
        self.cpu_s = match (self.cpu_s, other.cpu_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        let scenario_key = |s: &Scenario| {
            serde_json::to_string(&(&s.file, &s.cls, &s.ctor_args, &s.steps)).unwrap_or_default()
        };
        let mut scenarios: BTreeMap<String, usize> = self
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (scenario_key(s), i))
            .collect();
        for s in other.scenarios {
            let key = scenario_key(&s);
            match scenarios.get(&key) {
                Some(&i) => union_into(&mut self.scenarios[i].reaches, s.reaches),
                None => {
                    scenarios.insert(key, self.scenarios.len());
                    self.scenarios.push(s);
                }
            }
        }
    }
}

fn union_into(into: &mut Vec<String>, more: Vec<String>) {
    let mut all: BTreeSet<String> = into.drain(..).collect();
    all.extend(more);
    into.extend(all);
}

/// Whether a user calls `call` as it is: no private part in its name or module (the special
/// methods users call through syntax, `repr(m)`, `m[k]`, count as public).
fn is_public(call: &TracedCall) -> bool {
    !call
        .qualname
        .split('.')
        .any(|p| p.starts_with('_') && !DUNDER_CALLS.contains(&p))
        && !call.module.split('.').any(|p| p.starts_with('_'))
}

/// The recorded calls to replay for `cand`: those that reached its function, public entry
/// points first, then the shortest; round-robin over entry functions; at most `cap`.
pub fn reaching_calls<'t>(
    trace: &'t Trace,
    cand: &Candidate,
    cap: usize,
) -> (usize, Vec<&'t TracedCall>) {
    let target = format!("{}::{}", cand.file, cand.function);
    let mut by_entry: BTreeMap<(bool, String), Vec<&TracedCall>> = BTreeMap::new();
    let mut reaching = 0;
    for call in &trace.calls {
        if call.reaches.contains(&target) {
            reaching += 1;
            by_entry
                .entry((
                    !is_public(call),
                    format!("{}::{}", call.file, call.qualname),
                ))
                .or_default()
                .push(call);
        }
    }
    for calls in by_entry.values_mut() {
        calls.sort_by_key(|c| {
            (
                c.args.len() + c.receiver.as_ref().map_or(0, |r| r.len()),
                c.args.clone(),
            )
        });
    }
    let mut out = Vec::new();
    let mut round = 0;
    while out.len() < cap {
        let mut any = false;
        for calls in by_entry.values() {
            if let Some(c) = calls.get(round) {
                any = true;
                if out.len() < cap {
                    out.push(*c);
                }
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    (reaching, out)
}

fn replay(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    calls: &[&TracedCall],
    bug_patch: Option<&str>,
    timeout: Duration,
) -> Result<BTreeMap<String, CallOutcome>, SynthError> {
    let input: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            serde_json::json!({
                "id": i.to_string(),
                "module": c.module,
                "qualname": c.qualname,
                "receiver": c.receiver,
                "args": c.args,
            })
        })
        .collect();
    replay_values(worker, setup, &input, bug_patch, timeout)
}

fn replay_values(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    input: &[serde_json::Value],
    bug_patch: Option<&str>,
    timeout: Duration,
) -> Result<BTreeMap<String, CallOutcome>, SynthError> {
    worker.reset()?;
    if let Some(p) = bug_patch {
        worker.apply_patch(p)?;
    }
    let scratch = worker.scratch().to_string();
    let input = serde_json::to_string(input).unwrap_or_default();
    ship_helpers(worker, timeout)?;
    put_scratch(worker, CALLS_IN, input.as_bytes(), timeout)?;
    let script = format!(
        "{}{} {} {} {} >/dev/null\n",
        python_path(setup, &scratch),
        setup.python,
        shell_quote(&format!("{scratch}/swe_forge_replay.py")),
        shell_quote(&format!("{scratch}/{CALLS_IN}")),
        shell_quote(&format!("{scratch}/{REPLAY_OUT}")),
    );
    let out = worker.exec(&script, timeout)?;
    let bytes = worker.read_scratch(REPLAY_OUT)?.ok_or_else(|| {
        SynthError::Helper(format!(
            "replay wrote nothing (exit {:?}): {}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
    })?;
    worker.reset()?;
    serde_json::from_slice(&bytes).map_err(|e| SynthError::Helper(format!("replay.json: {e}")))
}

/// Whether `clean` → `buggy` is a difference a test can assert.
fn assertable(clean: &CallOutcome, buggy: &CallOutcome) -> bool {
    if !clean.deterministic() {
        return false;
    }
    match (clean, buggy) {
        (
            CallOutcome::Value {
                source: Some(a), ..
            },
            CallOutcome::Value { source: b, .. },
        ) => b.as_deref() != Some(a.as_str()),
        (CallOutcome::Value { source: None, .. }, CallOutcome::Value { .. }) => {
            !attr_differences(clean, buggy).is_empty()
        }
        (CallOutcome::Value { .. }, CallOutcome::Raised { .. } | CallOutcome::Timeout) => true,
        (
            CallOutcome::Raised {
                type_name,
                type_module,
                message,
                ..
            },
            CallOutcome::Raised {
                type_name: t2,
                type_module: m2,
                message: msg2,
                ..
            },
        ) => {
            (type_name, type_module) != (t2, m2)
                || message != msg2
                || !attr_differences(clean, buggy).is_empty()
        }
        (CallOutcome::Raised { .. }, CallOutcome::Value { .. } | CallOutcome::Timeout) => true,
        _ => false,
    }
}

/// Replay the calls that reach `cand`'s function on the clean and the buggy code; keep the
/// inputs whose outcomes differ (at most [`MAX_ASSERTS`], distinct entry functions first).
pub fn search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
) -> Result<Search, SynthError> {
    let (reaching, calls) = reaching_calls(trace, cand, MAX_REPLAYED);
    let entry_functions = calls
        .iter()
        .map(|c| (&c.file, &c.qualname))
        .collect::<BTreeSet<_>>()
        .len();
    let mut search = Search {
        reaching,
        replayed: calls.len(),
        entry_functions,
        found: Vec::new(),
        searched: 0,
        search_error: None,
        symbolic: None,
    };
    if calls.is_empty() {
        scenarios(worker, setup, trace, cand, timeout, &mut search)?;
        if search.found.is_empty() {
            generated(worker, setup, trace, cand, timeout, &mut search)?;
        }
        if search.found.is_empty() {
            symbolic(worker, setup, trace, cand, timeout, &mut search)?;
        }
        return Ok(search);
    }
    let clean = replay(worker, setup, &calls, None, timeout)?;
    let buggy = replay(worker, setup, &calls, Some(&cand.bug_patch), timeout)?;
    let mut seen_entries = BTreeSet::new();
    let mut later = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let id = i.to_string();
        let (Some(c), Some(b)) = (clean.get(&id), buggy.get(&id)) else {
            continue;
        };
        if !assertable(c, b) {
            continue;
        }
        let d = Distinguishing {
            call: (*call).clone(),
            clean: c.clone(),
            buggy: b.clone(),
        };
        if seen_entries.insert((call.file.clone(), call.qualname.clone())) {
            search.found.push(d);
        } else {
            later.push(d);
        }
    }
    search.found.extend(later);
    search.found.truncate(MAX_ASSERTS);
    if search.found.iter().all(|d| !is_public(&d.call)) {
        // Only private functions tell the versions apart (or nothing does): a scenario that
        // reaches the bug through what users call (`repr(box)`) comes first.
        let private = std::mem::take(&mut search.found);
        scenarios(worker, setup, trace, cand, timeout, &mut search)?;
        search.found.extend(private);
        search.found.truncate(MAX_ASSERTS);
    }
    if search.found.is_empty() {
        generated(worker, setup, trace, cand, timeout, &mut search)?;
    }
    if search.found.is_empty() {
        symbolic(worker, setup, trace, cand, timeout, &mut search)?;
    }
    Ok(search)
}

/// Replay the recorded scenarios (object construction + method calls) that reached the
/// mutated function, each followed by calls of the mutated method recorded on other objects
/// and by probes (calls of the class's other methods), so state a test never looked at shows;
/// the first step whose outcome differs, after steps that all returned alike, becomes a case
/// whose setup is the construction and the earlier steps. When no replay differs, Hypothesis
/// varies the arguments of the mutated method's calls in the shortest scenarios.
fn scenarios(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let target = format!("{}::{}", cand.file, cand.function);
    let mut picked: Vec<&Scenario> = trace
        .scenarios
        .iter()
        .filter(|s| s.reaches.contains(&target))
        .collect();
    picked.sort_by_key(|s| (s.steps.len(), s.ctor_args.len()));
    picked.truncate(60);
    if picked.is_empty() {
        return Ok(());
    }
    search.reaching += picked.len();
    search.replayed += picked.len();
    let method = cand
        .function
        .split_once('.')
        .map(|(_, m)| m.to_string())
        .unwrap_or_default();
    let extended: Vec<Scenario> = picked
        .iter()
        .map(|s| {
            let mut s = (*s).clone();
            s.steps
                .extend(extra_steps(trace, &s.cls, &cand.file, &method));
            s
        })
        .collect();
    scenario_cases(worker, setup, cand, &extended, timeout, search)?;
    if search.found.is_empty() && !method.is_empty() && !method.starts_with("__") {
        scenario_search(worker, setup, cand, &extended, &method, timeout, search)?;
    }
    Ok(())
}

/// Steps appended to a scenario of `cls`: up to 3 distinct calls of the mutated `method`
/// recorded on other objects, then probes, calls recorded on other objects of the class, one
/// per method first (so observers such as `history()` are among them), at most 15.
fn extra_steps(trace: &Trace, cls: &str, file: &str, method: &str) -> Vec<ScenarioStep> {
    let mut seen = BTreeSet::new();
    let recorded: Vec<&ScenarioStep> = trace
        .scenarios
        .iter()
        .filter(|s| s.cls == cls && s.file == file)
        .flat_map(|s| s.steps.iter())
        .filter(|st| seen.insert((st.method.clone(), st.args.clone())))
        .collect();
    let mut out: Vec<ScenarioStep> = recorded
        .iter()
        .filter(|st| st.method == method)
        .take(3)
        .map(|st| (*st).clone())
        .collect();
    let mut methods = BTreeSet::new();
    let (first, rest): (Vec<&&ScenarioStep>, Vec<&&ScenarioStep>) = recorded
        .iter()
        .partition(|st| methods.insert(st.method.clone()));
    out.extend(
        first
            .into_iter()
            .chain(rest)
            .take(15)
            .map(|st| (*st).clone()),
    );
    out
}

/// Replay `scenarios` on the clean and the buggy tree; the first one with an assertable
/// difference becomes a case (see [`scenarios`]).
fn scenario_cases(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    scenarios: &[Scenario],
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let picked: Vec<&Scenario> = scenarios.iter().collect();
    let input: Vec<serde_json::Value> = picked
        .iter()
        .enumerate()
        .map(|(i, s)| {
            serde_json::json!({
                "id": i.to_string(),
                "module": s.module,
                "scenario": s,
            })
        })
        .collect();
    let clean = replay_values(worker, setup, &input, None, timeout)?;
    let buggy = replay_values(worker, setup, &input, Some(&cand.bug_patch), timeout)?;
    for (i, sc) in picked.iter().enumerate() {
        let id = i.to_string();
        let (
            Some(CallOutcome::Scenario {
                steps: c,
                nondeterministic: false,
            }),
            Some(CallOutcome::Scenario { steps: b, .. }),
        ) = (clean.get(&id), buggy.get(&id))
        else {
            continue;
        };
        // The first step whose difference a test can assert (earlier differences, such as
        // reprs with addresses, are not).
        let Some(k) = (0..c.len().min(b.len())).find(|&k| assertable(&c[k], &b[k])) else {
            continue;
        };
        if !c[..k]
            .iter()
            .all(|o| matches!(o, CallOutcome::Value { .. } | CallOutcome::Raised { .. }))
        {
            continue;
        }
        let var = sc.cls.to_lowercase();
        let mut imports = sc.imports.clone();
        let mut lines = vec![format!("{var} = {}{}", sc.cls, sc.ctor_args)];
        for (st, o) in sc.steps[..k].iter().zip(&c[..k]) {
            let call = method_call(&var, &st.method, &st.args);
            match o {
                CallOutcome::Raised {
                    type_name,
                    type_module,
                    ..
                } => {
                    if type_module != "builtins" {
                        let top = type_name.split('.').next().unwrap_or(type_name);
                        imports.push(format!("from {type_module} import {top}"));
                    }
                    lines.push(format!("with pytest.raises({type_name}):\n    {call}"));
                }
                _ => lines.push(call),
            }
        }
        search.found.push(Distinguishing {
            call: TracedCall {
                file: sc.file.clone(),
                module: sc.module.clone(),
                qualname: format!("{}.{}", sc.cls, sc.steps[k].method),
                receiver: Some(var),
                args: sc.steps[k].args.clone(),
                imports,
                reaches: sc.reaches.clone(),
                setup: lines,
            },
            clean: c[k].clone(),
            buggy: b[k].clone(),
        });
        // One scenario case is enough: the shortest (scenarios are tried shortest first).
        break;
    }
    Ok(())
}

/// Hypothesis varies the arguments of the mutated method's calls in the 3 shortest
/// `scenarios` (search.py, scenario mode); a scenario it finds is replayed like a recorded
/// one before it becomes a case.
fn scenario_search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    scenarios: &[Scenario],
    method: &str,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let tried: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| s.steps.iter().any(|st| st.method == method))
        .take(3)
        .collect();
    let Some(first) = tried.first() else {
        return Ok(());
    };
    search.searched += 1;
    let request = serde_json::json!({
        "module": first.module,
        "method": method,
        "scenarios": tried,
        "seconds": SEARCH_SECONDS,
        "max_examples": 600,
    });
    let Some(bytes) = run_search(worker, setup, cand, request, timeout, search)? else {
        return Ok(());
    };
    #[derive(Deserialize)]
    struct Varied {
        index: usize,
        steps: Vec<String>,
        #[serde(default)]
        imports: Vec<String>,
    }
    #[derive(Deserialize)]
    struct Answer {
        scenarios: Vec<Varied>,
    }
    let answer: Answer = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("search.json (scenarios): {e}")))?;
    let found: Vec<Scenario> = answer
        .scenarios
        .into_iter()
        .filter_map(|v| {
            let mut sc = (*tried.get(v.index)?).clone();
            if v.steps.len() != sc.steps.len() {
                return None;
            }
            for (st, args) in sc.steps.iter_mut().zip(v.steps) {
                st.args = args;
            }
            sc.imports.extend(v.imports);
            sc.imports.sort();
            sc.imports.dedup();
            Some(sc)
        })
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    scenario_cases(worker, setup, cand, &found, timeout, search)
}

/// The calls a search starts from: recorded calls of the mutated module's entry functions
/// that reached the mutated function (a few per function, at most 8), or, when the tests never
/// reach it, a signature-only template of the mutated function itself (a method on a receiver
/// recorded for another method of its class). Also the number of distinct functions.
fn search_templates(
    trace: &Trace,
    setup: &SynthSetup,
    cand: &Candidate,
) -> (Vec<TracedCall>, usize) {
    let (_, calls) = reaching_calls(trace, cand, MAX_REPLAYED);
    let mut templates: Vec<TracedCall> = Vec::new();
    let mut seen = BTreeSet::new();
    for c in calls.iter().filter(|c| c.file == cand.file) {
        if seen.insert(c.qualname.clone()) || templates.len() < 4 {
            templates.push((*c).clone());
        }
        if templates.len() >= 8 {
            break;
        }
    }
    let method = cand.function.split_once('.');
    if let Some((class, name)) = method.filter(|(_, n)| callable_method(n)) {
        if templates.is_empty() {
            templates = receiver_templates(trace, setup, &cand.file, class, name);
            if !templates.is_empty() {
                seen.insert(cand.function.clone());
            }
        }
    } else if let Some((class, "__init__" | "__new__")) = method.filter(|_| templates.is_empty()) {
        // A constructor: call the class with the arguments recorded for its objects, or, when
        // the tests made none, with arguments drawn from its signature (a mixin's `__new__`).
        let mut args_seen = BTreeSet::new();
        for sc in trace
            .scenarios
            .iter()
            .filter(|sc| sc.cls == class && sc.file == cand.file)
            .filter(|sc| args_seen.insert(sc.ctor_args.clone()))
            .take(4)
        {
            templates.push(TracedCall {
                file: sc.file.clone(),
                module: sc.module.clone(),
                qualname: class.to_string(),
                receiver: None,
                args: sc.ctor_args.clone(),
                imports: sc.imports.clone(),
                reaches: vec![],
                setup: vec![],
            });
        }
        if templates.is_empty() {
            if let Some(module) = module_name(trace, setup, &cand.file) {
                templates.push(TracedCall {
                    file: cand.file.clone(),
                    module,
                    qualname: class.to_string(),
                    receiver: None,
                    args: String::new(),
                    imports: vec![],
                    reaches: vec![],
                    setup: vec![],
                });
            }
        }
        if !templates.is_empty() {
            seen.insert(cand.function.clone());
        }
    } else if templates.is_empty() && !cand.function.contains('.') {
        if let Some(module) = module_name(trace, setup, &cand.file) {
            templates.push(TracedCall {
                file: cand.file.clone(),
                module,
                qualname: cand.function.clone(),
                receiver: None,
                args: String::new(),
                imports: vec![],
                reaches: vec![],
                setup: vec![],
            });
            seen.insert(cand.function.clone());
        }
    }
    (templates, seen.len())
}

/// Special methods a user calls through syntax, as trace.py's `_DUNDER_STEPS`: a search may
/// call them on a receiver like public methods. Constructors are searched through their class.
const DUNDER_CALLS: [&str; 9] = [
    "__call__",
    "__getitem__",
    "__contains__",
    "__len__",
    "__repr__",
    "__str__",
    "__eq__",
    "__setitem__",
    "__delitem__",
];

/// Python 2's protocol methods, which no syntax calls in Python 3: a caller can only call them
/// by name (`bl.__getslice__(0, 2)`), and a search does too.
const PY2_PROTOCOL: [&str; 6] = [
    "__getslice__",
    "__setslice__",
    "__delslice__",
    "__nonzero__",
    "__unicode__",
    "__cmp__",
];

/// Whether a method of a class can be a search's entry (called on an object of its class).
fn callable_method(name: &str) -> bool {
    !name.starts_with("__") || DUNDER_CALLS.contains(&name) || PY2_PROTOCOL.contains(&name)
}

/// Signature-only templates of `class.name` for a method no test reaches: called on objects
/// of its class the tests made, the receivers recorded for its other methods first, then the
/// constructor calls the tracer saw (shortest first), at most 4, or else a construction
/// without arguments (`Class()`, which search.py skips when it fails); and once on the class
/// itself, which search.py takes only for a class or static method.
fn receiver_templates(
    trace: &Trace,
    setup: &SynthSetup,
    file: &str,
    class: &str,
    name: &str,
) -> Vec<TracedCall> {
    let qualname = format!("{class}.{name}");
    let mut receivers: Vec<(String, String, Vec<String>)> = Vec::new();
    for c in trace
        .calls
        .iter()
        .filter(|c| c.file == file && c.qualname.split_once('.').is_some_and(|(k, _)| k == class))
    {
        if let Some(r) = &c.receiver {
            if !receivers.iter().any(|(x, _, _)| x == r) {
                receivers.push((r.clone(), c.module.clone(), c.imports.clone()));
            }
        }
        if receivers.len() >= 2 {
            break;
        }
    }
    let mut built: Vec<&Scenario> = trace
        .scenarios
        .iter()
        .filter(|s| s.file == file && s.cls == class)
        .collect();
    built.sort_by_key(|s| s.ctor_args.len());
    for s in built {
        if receivers.len() >= 4 {
            break;
        }
        let r = format!("{}{}", s.cls, s.ctor_args);
        if !receivers.iter().any(|(x, _, _)| *x == r) {
            receivers.push((r, s.module.clone(), s.imports.clone()));
        }
    }
    let Some(module) = receivers
        .first()
        .map(|(_, m, _)| m.clone())
        .or_else(|| module_name(trace, setup, file))
    else {
        return Vec::new();
    };
    if receivers.is_empty() {
        receivers.push((format!("{class}()"), module.clone(), vec![]));
    }
    let template = |receiver: Option<String>, module: String, imports: Vec<String>| TracedCall {
        file: file.to_string(),
        module,
        qualname: qualname.clone(),
        receiver,
        args: String::new(),
        imports,
        reaches: vec![],
        setup: vec![],
    };
    let mut out: Vec<TracedCall> = receivers
        .into_iter()
        .map(|(r, m, i)| template(Some(r), m, i))
        .collect();
    out.push(template(None, module, vec![]));
    out
}

/// Argument values the tests passed to the functions of `file` (their recorded `(args)`
/// sources, at most 40 distinct): a signature-only search draws from them beside the
/// function's literals, so a method no test calls is tried on the values its neighbours get.
fn neighbour_args(trace: &Trace, file: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    trace
        .calls
        .iter()
        .filter(|c| c.file == file && c.args.len() > 2 && c.args.len() <= 400)
        .map(|c| c.args.clone())
        .chain(
            trace
                .scenarios
                .iter()
                .filter(|s| s.file == file)
                .flat_map(|s| {
                    std::iter::once(s.ctor_args.clone())
                        .chain(s.steps.iter().map(|st| st.args.clone()))
                })
                .filter(|a| a.len() > 2 && a.len() <= 400),
        )
        .filter(|a| seen.insert(a.clone()))
        .take(40)
        .collect()
}

/// A proposed input, as search.py and crosshair.py write them.
#[derive(Deserialize)]
struct Proposal {
    qualname: String,
    receiver: Option<String>,
    args: String,
    #[serde(default)]
    imports: Vec<String>,
}

/// Run a search helper (`swe_forge_<name>.py REQUEST OUT`) in the tree with the bug; the
/// request gets the clean text of the mutated file as `clean_source`. The worker is reset
/// after. `Err(reason)` inside when the helper wrote nothing.
fn run_on_buggy(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    helper: &str,
    mut request: serde_json::Value,
    limit: Duration,
) -> Result<Result<Vec<u8>, String>, SynthError> {
    // The clean text of the mutated file, read from the clean tree.
    worker.reset()?;
    let clean_source = {
        let out = worker.exec(&format!("cat {}", shell_quote(&cand.file)), limit)?;
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    worker.apply_patch(&cand.bug_patch)?;
    let scratch = worker.scratch().to_string();
    request["clean_source"] = clean_source.into();
    request["file"] = cand.file.clone().into();
    request["scratch"] = scratch.clone().into();
    let input = format!("swe_forge_{helper}_in.json");
    let output = format!("swe_forge_{helper}.json");
    ship_helpers(worker, limit)?;
    put_scratch(worker, &input, request.to_string().as_bytes(), limit)?;
    let script = format!(
        "{}{} {} {} {} >/dev/null\n",
        python_path(setup, &scratch),
        setup.python,
        shell_quote(&format!("{scratch}/swe_forge_{helper}.py")),
        shell_quote(&format!("{scratch}/{input}")),
        shell_quote(&format!("{scratch}/{output}")),
    );
    let out = worker.exec(&script, limit)?;
    let bytes = worker.read_scratch(&output)?;
    worker.reset()?;
    tracing::debug!(candidate = %cand.id, helper, answer = %bytes.as_deref().map(String::from_utf8_lossy).unwrap_or_default(), "search helper");
    Ok(bytes.ok_or_else(|| {
        format!(
            "{helper} wrote nothing (exit {:?}): {}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )
    }))
}

/// [`run_on_buggy`] with search.py, given the larger of `timeout` and three times the search's
/// own budget; `None` (the reason in `search.search_error`) when it wrote nothing.
fn run_search(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    request: serde_json::Value,
    timeout: Duration,
    search: &mut Search,
) -> Result<Option<Vec<u8>>, SynthError> {
    let limit = timeout.max(Duration::from_secs(SEARCH_SECONDS * 3));
    match run_on_buggy(worker, setup, cand, "search", request, limit)? {
        Ok(b) => Ok(Some(b)),
        Err(why) => {
            search.search_error = Some(why);
            Ok(None)
        }
    }
}

/// Replay proposed inputs on the clean and the buggy tree like recorded calls; keep the
/// assertable differences (up to [`MAX_ASSERTS`] in all).
fn replay_proposals(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    cand: &Candidate,
    templates: &[TracedCall],
    proposals: Vec<Proposal>,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let Some(first) = templates.first() else {
        return Ok(());
    };
    let calls: Vec<TracedCall> = proposals
        .into_iter()
        .map(|p| {
            let template = templates
                .iter()
                .find(|t| t.qualname == p.qualname && t.receiver == p.receiver)
                .or_else(|| templates.iter().find(|t| t.qualname == p.qualname))
                .unwrap_or(first);
            let mut imports = template.imports.clone();
            imports.extend(p.imports);
            imports.sort();
            imports.dedup();
            TracedCall {
                file: cand.file.clone(),
                module: first.module.clone(),
                qualname: p.qualname,
                receiver: p.receiver,
                args: p.args,
                imports,
                reaches: vec![],
                setup: vec![],
            }
        })
        .collect();
    if calls.is_empty() {
        return Ok(());
    }
    let refs: Vec<&TracedCall> = calls.iter().collect();
    let clean = replay(worker, setup, &refs, None, timeout)?;
    let buggy = replay(worker, setup, &refs, Some(&cand.bug_patch), timeout)?;
    for (i, call) in calls.iter().enumerate() {
        let id = i.to_string();
        if let (Some(c), Some(b)) = (clean.get(&id), buggy.get(&id)) {
            if assertable(c, b) {
                search.found.push(Distinguishing {
                    call: call.clone(),
                    clean: c.clone(),
                    buggy: b.clone(),
                });
            }
        }
    }
    search.found.truncate(MAX_ASSERTS);
    Ok(())
}

/// Hypothesis proposes inputs for the mutated module's entry functions (templates: their
/// recorded calls that reached the mutated function); proposals are replayed on the clean and
/// the buggy tree like recorded calls, and only assertable differences are kept.
fn generated(
    worker: &mut dyn Worker,
    setup: &SynthSetup,
    trace: &Trace,
    cand: &Candidate,
    timeout: Duration,
    search: &mut Search,
) -> Result<(), SynthError> {
    let (templates, functions) = search_templates(trace, setup, cand);
    let Some(first) = templates.first() else {
        return Ok(());
    };
    search.searched = functions;
    let request = serde_json::json!({
        "module": first.module,
        "templates": templates.iter().map(|c| serde_json::json!({
            "qualname": c.qualname, "receiver": c.receiver,
            // An empty argument list marks a signature-only template.
            "args": if c.args.is_empty() { None } else { Some(&c.args) },
        })).collect::<Vec<_>>(),
        "neighbour_args": neighbour_args(trace, &cand.file),
        "seconds": SEARCH_SECONDS,
        "max_examples": 1000,
    });
    let Some(bytes) = run_search(worker, setup, cand, request, timeout, search)? else {
        return Ok(());
    };
    #[derive(Deserialize)]
    struct Found {
        found: Vec<Proposal>,
        #[serde(default)]
        error: Option<String>,
    }
    let found: Found = serde_json::from_slice(&bytes)
        .map_err(|e| SynthError::Helper(format!("search.json: {e}")))?;
    search.search_error = found.error;
    replay_proposals(
        worker,
        setup,
        cand,
        &templates,
        found.found,
        timeout,
        search,
    )
}

/// CrossHair compares the clean and the buggy version of one function symbolically: the
/// mutated function itself when a template calls it, else the first entry function. Its
/// proposal is replayed like any; "all paths exhausted" is kept as evidence of equivalence.
fn symbolic(
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

/// The import name of a repository file: from a recorded call in it, else from its path
/// under the first import root that contains it (`src/pkg/m.py` → `pkg.m`).
fn module_name(trace: &Trace, setup: &SynthSetup, file: &str) -> Option<String> {
    if let Some(c) = trace.calls.iter().find(|c| c.file == file) {
        return Some(c.module.clone());
    }
    let rel = setup
        .python_path
        .iter()
        .filter(|r| r.as_str() != ".")
        .find_map(|r| file.strip_prefix(&format!("{}/", r.trim_end_matches('/'))))
        .unwrap_or(file);
    let rel = rel.strip_suffix(".py")?;
    let rel = rel.strip_suffix("/__init__").unwrap_or(rel);
    Some(rel.replace('/', "."))
}

fn call_expr(call: &TracedCall) -> String {
    match &call.receiver {
        Some(r) => method_call(
            r,
            call.qualname.split_once('.').map_or("", |(_, m)| m),
            &call.args,
        ),
        None => format!("{}{}", call.qualname, call.args),
    }
}

/// `receiver.method(args)` as a user writes it: the special methods a scenario records
/// (trace.py's `_DUNDER_STEPS`) as their syntax (`v(x)`, `m[k]`, `(k in m)`, `len(m)`,
/// `repr(m)`, `(m == x)`); assignment and deletion stay calls, as they must be expressions.
fn method_call(receiver: &str, method: &str, args: &str) -> String {
    let inner = args
        .strip_prefix('(')
        .and_then(|a| a.strip_suffix(')'))
        .filter(|a| !a.trim().is_empty() && !a.contains('='));
    let one = inner.filter(|a| !top_level_comma(a));
    match (method, one) {
        ("__call__", _) => format!("{receiver}{args}"),
        ("__len__", _) if args == "()" => format!("len({receiver})"),
        ("__repr__", _) if args == "()" => format!("repr({receiver})"),
        ("__str__", _) if args == "()" => format!("str({receiver})"),
        ("__getitem__", Some(a)) => format!("{receiver}[{a}]"),
        ("__contains__", Some(a)) => format!("({a} in {receiver})"),
        ("__eq__", Some(a)) => format!("({receiver} == {a})"),
        _ => format!("{receiver}.{method}{args}"),
    }
}

/// Whether `text` has a comma outside brackets and strings (more than one argument).
fn top_level_comma(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for ch in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' => quote = Some(ch),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// A name that says what the test checks: `test_parse_quantity_of_2_kg`,
/// `test_parse_money_raises_moneyerror_on_abc`.
fn test_name(d: &Distinguishing, taken: &mut BTreeSet<String>) -> String {
    let func = d
        .call
        .qualname
        .rsplit('.')
        .next()
        .unwrap_or(&d.call.qualname)
        .trim_matches('_')
        .to_lowercase();
    let func = if func.starts_with("_") || func.is_empty() {
        "call".to_string()
    } else {
        func
    };
    let slug: String = d
        .call
        .args
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .split('_')
        .filter(|p| !p.is_empty())
        .take(5)
        .collect::<Vec<_>>()
        .join("_");
    let what = match &d.clean {
        CallOutcome::Raised { type_name, .. } => {
            format!("raises_{}", type_name.to_lowercase())
        }
        _ => "result".to_string(),
    };
    let mut base = if slug.is_empty() {
        format!("test_{func}_{what}")
    } else {
        format!("test_{func}_{what}_for_{slug}")
    };
    base.truncate(70);
    let base = base.trim_end_matches('_').to_string();
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

fn import_line(call: &TracedCall) -> String {
    let top = call.qualname.split('.').next().unwrap_or(&call.qualname);
    format!("from {} import {top}", call.module)
}

/// Render the pytest file for `found` (1–[`MAX_ASSERTS`] cases) beside the existing tests.
pub fn render(found: &[Distinguishing], setup: &SynthSetup, cand: &Candidate) -> SynthTest {
    // The same call found twice (from two templates) is one case.
    let mut calls_seen = BTreeSet::new();
    let found: Vec<Distinguishing> = found
        .iter()
        .filter(|d| calls_seen.insert((d.call.setup.clone(), call_expr(&d.call))))
        .take(MAX_ASSERTS)
        .cloned()
        .collect();
    let found = &found[..];
    let mut imports: BTreeSet<String> = BTreeSet::new();
    let mut needs_pytest = false;
    let mut needs_re = false;
    let mut bodies = Vec::new();
    let mut taken = BTreeSet::new();
    let mut names = Vec::new();
    for d in found.iter().take(MAX_ASSERTS) {
        imports.insert(import_line(&d.call));
        imports.extend(d.call.imports.iter().cloned());
        let call = call_expr(&d.call);
        let name = test_name(d, &mut taken);
        let setup_lines: String = d
            .call
            .setup
            .iter()
            .flat_map(|l| l.lines())
            .map(|l| format!("    {l}\n"))
            .collect();
        if d.call
            .setup
            .iter()
            .any(|l| l.starts_with("with pytest.raises"))
        {
            needs_pytest = true;
        }
        let body = match &d.clean {
            CallOutcome::Value {
                source: Some(expected),
                imports: value_imports,
                ..
            } => {
                imports.extend(value_imports.iter().cloned());
                match expected.as_str() {
                    "None" | "True" | "False" => format!("    assert {call} is {expected}\n"),
                    _ => format!("    assert {call} == {expected}\n"),
                }
            }
            CallOutcome::Value {
                source: None,
                imports: value_imports,
                ..
            } => {
                let diffs = d.attr_differences();
                if diffs.is_empty() {
                    format!("    {call}  # must not raise\n")
                } else {
                    imports.extend(value_imports.iter().cloned());
                    let mut body = format!("    result = {call}\n");
                    for (name, expected, _) in &diffs {
                        match expected.as_str() {
                            "None" | "True" | "False" => {
                                body.push_str(&format!("    assert result.{name} is {expected}\n"))
                            }
                            _ => {
                                body.push_str(&format!("    assert result.{name} == {expected}\n"))
                            }
                        }
                    }
                    body
                }
            }
            CallOutcome::Raised {
                type_name,
                type_module,
                message,
                ..
            } => {
                needs_pytest = true;
                let exc = if type_module == "builtins" {
                    type_name.clone()
                } else {
                    let top = type_name.split('.').next().unwrap_or(type_name);
                    imports.insert(format!("from {type_module} import {top}"));
                    type_name.clone()
                };
                let same_type = matches!(&d.buggy, CallOutcome::Raised { type_name: t, type_module: m, .. } if t == type_name && m == type_module);
                // The clean message whenever there is one; and when the bug raises another
                // type (perhaps a subclass, which `pytest.raises` would accept), the exact type.
                let matcher = if message.is_empty() {
                    String::new()
                } else {
                    needs_re = true;
                    format!(
                        ", match={}",
                        py_str(&format!("^{}$", regex_escape(message)))
                    )
                };
                let diffs = d.attr_differences();
                if !diffs.is_empty() {
                    // Same type and message: the attributes tell the versions apart.
                    if let CallOutcome::Raised {
                        imports: attr_imports,
                        ..
                    } = &d.clean
                    {
                        imports.extend(attr_imports.iter().cloned());
                    }
                    let mut body = format!(
                        "    with pytest.raises({exc}{matcher}) as raised:\n        {call}\n"
                    );
                    for (name, expected, _) in &diffs {
                        match expected.as_str() {
                            "None" | "True" | "False" => body.push_str(&format!(
                                "    assert raised.value.{name} is {expected}\n"
                            )),
                            _ => body.push_str(&format!(
                                "    assert raised.value.{name} == {expected}\n"
                            )),
                        }
                    }
                    body
                } else if same_type || !matches!(&d.buggy, CallOutcome::Raised { .. }) {
                    format!("    with pytest.raises({exc}{matcher}):\n        {call}\n")
                } else {
                    format!(
                        "    with pytest.raises({exc}{matcher}) as raised:\n        {call}\n    assert raised.type is {exc}\n"
                    )
                }
            }
            _ => continue,
        };
        bodies.push(format!("def {name}():\n{setup_lines}{body}"));
        names.push(name);
    }
    let _ = needs_re;
    let mut std_imports: Vec<String> = imports
        .iter()
        .filter(|l| {
            l.starts_with("import ")
                || l.starts_with("from decimal")
                || l.starts_with("from fractions")
        })
        .cloned()
        .collect();
    std_imports.sort();
    let mut repo_imports: Vec<String> = imports
        .iter()
        .filter(|l| !std_imports.contains(l))
        .cloned()
        .collect();
    repo_imports.sort();
    let mut text = format!(
        "\"\"\"Regression tests for `{}`: inputs whose results changed.\"\"\"\n",
        found
            .first()
            .map(|d| d.call.qualname.rsplit('.').next().unwrap_or("").to_string())
            .unwrap_or_default()
    );
    let mut head = std_imports.join("\n");
    if needs_pytest {
        if !head.is_empty() {
            head.push_str("\n\n");
        }
        head.push_str("import pytest");
    }
    text.push_str(&head);
    if !head.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&repo_imports.join("\n"));
    text.push_str("\n\n");
    for b in &bodies {
        text.push('\n');
        text.push_str(b);
        text.push('\n');
    }
    let text = text.trim_end().to_string() + "\n";
    let path = test_path(setup, cand, found);
    let patch = crate::task::file_diff_new(&path, &text);
    SynthTest {
        tests: names.iter().map(|n| format!("{path}::{n}")).collect(),
        path,
        source: text,
        cases: found.iter().take(MAX_ASSERTS).cloned().collect(),
        patch,
    }
}

fn py_str(s: &str) -> String {
    // repr-like: single quotes unless the text has them.
    let escaped = s.replace('\\', "\\\\");
    if !escaped.contains('\'') {
        format!("r'{}'", s.replace('\'', "\\'"))
    } else {
        format!("\"{}\"", escaped.replace('"', "\\\"").replace('\n', "\\n"))
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.^$*+?{}[]|()".contains(c) {
            out.push('\\');
        }
        if c == '\n' {
            out.push_str("\\n");
        } else {
            out.push(c);
        }
    }
    out
}

/// `tests/test_<module>_<function>_regression.py` (beside the existing tests), a name no
/// existing test file has.
fn test_path(setup: &SynthSetup, cand: &Candidate, found: &[Distinguishing]) -> String {
    let dir = setup
        .test_files
        .iter()
        .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_string()))
        .min_by_key(|d| d.len())
        .unwrap_or_else(|| "tests".to_string());
    let module = cand
        .file
        .rsplit('/')
        .next()
        .unwrap_or("m")
        .trim_end_matches(".py")
        .trim_start_matches('_');
    let func = found
        .first()
        .map(|d| {
            d.call
                .qualname
                .rsplit('.')
                .next()
                .unwrap_or("")
                .trim_matches('_')
                .to_lowercase()
        })
        .unwrap_or_default();
    let taken: BTreeSet<&str> = setup
        .test_files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f))
        .collect();
    let mut n = 1;
    loop {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("_{n}")
        };
        let name = format!("test_{module}_{func}_regression{suffix}.py");
        if !taken.contains(name.as_str()) {
            return format!("{dir}/{name}");
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CrossHair loads the compared module (which imports swe_forge_literal) under an audit
    /// hook that refuses any file written on import; the helper must import without writing.
    #[test]
    fn the_literal_helper_imports_without_writing_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("swe_forge_literal.py"), LITERAL_PY).unwrap();
        let guard = r#"import os, sys
def hook(event, args):
    if event == 'open':
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and any(c in mode for c in 'wax+')) or \
                (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)):
            raise RuntimeError('wrote %r' % (args[0],))
sys.addaudithook(hook)
import swe_forge_literal
print('ok')
"#;
        let out = match std::process::Command::new("python3")
            .arg("-c")
            .arg(guard)
            .current_dir(dir.path())
            .env("PYTHONPATH", dir.path())
            .env("TMPDIR", dir.path())
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped: no python3 ({e})");
                return;
            }
        };
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn call(q: &str, args: &str, reaches: &[&str]) -> TracedCall {
        TracedCall {
            file: "pkg/m.py".into(),
            module: "pkg.m".into(),
            qualname: q.into(),
            receiver: None,
            args: args.into(),
            imports: vec![],
            reaches: reaches.iter().map(|s| s.to_string()).collect(),
            setup: vec![],
        }
    }

    fn cand(function: &str) -> Candidate {
        serde_json::from_value(serde_json::json!({
            "id": "0123456789abcdef", "mutator": "py-x", "category": "logic",
            "file": "pkg/m.py", "function": function, "function_lines": [1, 3],
            "byte_range": [0, 1], "line_range": [2, 2], "before": "a", "after": "b",
            "bug_patch": "", "hash": "h", "description": "", "issue_hints": []
        }))
        .unwrap()
    }

    #[test]
    fn picks_public_entry_points_first_and_caps() {
        let trace = Trace {
            calls: vec![
                call("_helper", "(1,)", &["pkg/m.py::_helper"]),
                call("api", "(10, 20)", &["pkg/m.py::api", "pkg/m.py::_helper"]),
                call("api", "(1,)", &["pkg/m.py::api", "pkg/m.py::_helper"]),
                call("other", "(1,)", &["pkg/m.py::other"]),
            ],
            dropped: 0,
            scenarios: vec![],
            cpu_s: None,
        };
        let (reaching, calls) = reaching_calls(&trace, &cand("_helper"), 2);
        assert_eq!(reaching, 3);
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].qualname, "api");
        assert_eq!(calls[0].args, "(1,)");
        assert_eq!(calls[1].qualname, "_helper");
    }

    #[test]
    fn only_assertable_differences_count() {
        let v = |s: &str| CallOutcome::Value {
            source: Some(s.into()),
            repr: s.into(),
            imports: vec![],
            nondeterministic: false,
            attrs: BTreeMap::new(),
        };
        let raised = |t: &str, m: &str| CallOutcome::Raised {
            type_name: t.into(),
            type_module: "builtins".into(),
            message: m.into(),
            nondeterministic: false,
            attrs: BTreeMap::new(),
            imports: vec![],
        };
        assert!(assertable(&v("1"), &v("2")));
        assert!(!assertable(&v("1"), &v("1")));
        assert!(assertable(&v("1"), &raised("ValueError", "x")));
        assert!(assertable(
            &raised("ValueError", "a"),
            &raised("ValueError", "b")
        ));
        assert!(!assertable(
            &raised("ValueError", "a"),
            &raised("ValueError", "a")
        ));
        let flaky = CallOutcome::Value {
            source: Some("1".into()),
            repr: "1".into(),
            imports: vec![],
            nondeterministic: true,
            attrs: BTreeMap::new(),
        };
        assert!(!assertable(&flaky, &v("2")));
        assert!(!assertable(&CallOutcome::Timeout, &v("2")));
        // Objects with no source (their repr hides their state) differ in an attribute.
        let object = |attrs: &[(&str, &str)]| CallOutcome::Value {
            source: None,
            repr: "<Table 1x1>".into(),
            imports: vec![],
            nondeterministic: false,
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let clean = object(&[("metadata", "{'a': 1}"), ("width", "1")]);
        assert!(assertable(
            &clean,
            &object(&[("metadata", "{}"), ("width", "1")])
        ));
        assert!(assertable(&clean, &object(&[("width", "1")])));
        assert!(!assertable(
            &clean,
            &object(&[("metadata", "{'a': 1}"), ("width", "1")])
        ));
        assert!(!assertable(&object(&[]), &object(&[("width", "1")])));
        let d = Distinguishing {
            call: call("Table.from_data", "(5, metadata={'a': 1})", &[]),
            clean: clean.clone(),
            buggy: object(&[("metadata", "{}"), ("width", "1")]),
        };
        assert_eq!(
            d.attr_differences(),
            vec![(
                "metadata".to_string(),
                "{'a': 1}".to_string(),
                Some("{}".to_string())
            )]
        );
        let setup = SynthSetup {
            python: "python".into(),
            pytest: "python -m pytest".into(),
            source_files: vec!["pkg/m.py".into()],
            python_path: vec![".".into()],
            test_files: vec!["tests/test_m.py".into()],
        };
        let test = render(&[d], &setup, &cand("Table.from_data"));
        assert!(
            test.source.contains(
                "    result = Table.from_data(5, metadata={'a': 1})\n    assert result.metadata == {'a': 1}\n"
            ),
            "{}",
            test.source
        );
        // Two exceptions with one type and message that differ in an attribute
        // (marshmallow's ValidationError without its `valid_data`).
        let error = |attrs: &[(&str, &str)]| CallOutcome::Raised {
            type_name: "ValidationError".into(),
            type_module: "pkg.exceptions".into(),
            message: "{0: ['bad']}".into(),
            nondeterministic: false,
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            imports: vec![],
        };
        let clean = error(&[("valid_data", "[1]")]);
        assert!(assertable(&clean, &error(&[("valid_data", "None")])));
        assert!(!assertable(&clean, &error(&[("valid_data", "[1]")])));
        let d = Distinguishing {
            call: call("Tuple.deserialize", "((1, 'x'))", &[]),
            clean,
            buggy: error(&[("valid_data", "None")]),
        };
        let test = render(&[d], &setup, &cand("Tuple.deserialize"));
        assert!(
            test.source.contains("    with pytest.raises(ValidationError, match=")
                && test.source.contains(") as raised:\n        Tuple.deserialize((1, 'x'))\n    assert raised.value.valid_data == [1]\n")
                && test.source.contains("from pkg.exceptions import ValidationError"),
            "{}",
            test.source
        );
    }

    #[test]
    fn special_methods_read_as_their_syntax() {
        assert_eq!(method_call("v", "__call__", "(3, k=1)"), "v(3, k=1)");
        assert_eq!(method_call("m", "__getitem__", "('a')"), "m['a']");
        assert_eq!(method_call("m", "__getitem__", "((1, 2))"), "m[(1, 2)]");
        assert_eq!(method_call("m", "__contains__", "('a,b')"), "('a,b' in m)");
        assert_eq!(method_call("m", "__len__", "()"), "len(m)");
        assert_eq!(method_call("m", "__repr__", "()"), "repr(m)");
        assert_eq!(method_call("m", "__eq__", "([1, 2])"), "(m == [1, 2])");
        // Assignment is a statement: it stays a call, valid in an expression.
        assert_eq!(
            method_call("m", "__setitem__", "('a', 1)"),
            "m.__setitem__('a', 1)"
        );
        assert_eq!(
            method_call("m", "__getitem__", "('a', 1)"),
            "m.__getitem__('a', 1)"
        );
        assert_eq!(method_call("m", "get", "('a')"), "m.get('a')");
    }

    #[test]
    fn renders_readable_tests() {
        let d = Distinguishing {
            call: TracedCall {
                imports: vec!["from decimal import Decimal".into()],
                ..call("parse_quantity", "('2 kg')", &[])
            },
            clean: CallOutcome::Value {
                source: Some("(Decimal('2'), 'kg')".into()),
                repr: String::new(),
                imports: vec!["from decimal import Decimal".into()],
                nondeterministic: false,
                attrs: BTreeMap::new(),
            },
            buggy: CallOutcome::Raised {
                type_name: "IndexError".into(),
                type_module: "builtins".into(),
                message: "string index out of range".into(),
                nondeterministic: false,
                attrs: BTreeMap::new(),
                imports: vec![],
            },
        };
        let e = Distinguishing {
            call: call("parse_quantity", "('')", &[]),
            clean: CallOutcome::Raised {
                type_name: "MoneyError".into(),
                type_module: "pkg.m".into(),
                message: "empty quantity (x)".into(),
                nondeterministic: false,
                attrs: BTreeMap::new(),
                imports: vec![],
            },
            buggy: CallOutcome::Raised {
                type_name: "MoneyError".into(),
                type_module: "pkg.m".into(),
                message: "bad".into(),
                nondeterministic: false,
                attrs: BTreeMap::new(),
                imports: vec![],
            },
        };
        let setup = SynthSetup {
            python: "python".into(),
            pytest: "python -m pytest".into(),
            source_files: vec![],
            python_path: vec![".".into()],
            test_files: vec!["tests/test_m.py".into()],
        };
        let t = render(&[d, e], &setup, &cand("parse_quantity"));
        assert_eq!(t.path, "tests/test_m_parse_quantity_regression.py");
        assert!(
            t.source.contains("from decimal import Decimal\n"),
            "{}",
            t.source
        );
        assert!(
            t.source
                .contains("from pkg.m import MoneyError\nfrom pkg.m import parse_quantity\n"),
            "{}",
            t.source
        );
        assert!(t.source.contains(
            "def test_parse_quantity_result_for_2_kg():\n    assert parse_quantity('2 kg') == (Decimal('2'), 'kg')\n"
        ), "{}", t.source);
        assert!(t.source.contains(
            "    with pytest.raises(MoneyError, match=r'^empty quantity \\(x\\)$'):\n        parse_quantity('')\n"
        ), "{}", t.source);
        assert_eq!(t.tests.len(), 2);
        assert!(t
            .patch
            .starts_with("diff --git a/tests/test_m_parse_quantity_regression.py"));
    }
}
