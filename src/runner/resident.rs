//! The resident pytest runner: one long-lived interpreter per worker that has imported pytest,
//! its plugins and the third-party modules the suite imports, and forks a child per run
//! (`resident.py`, run by the sandboxes). Here: its protocol, the arguments it runs pytest
//! with, and [`compare`], by which a seed qualifies for it (`Pytest::qualify_resident`): the
//! same per-test outcomes as the fresh baseline, or the seed falls back to fresh processes.

use crate::baseline::Baseline;
use crate::run::{Run, RunEnd, TestStatus};
use crate::sandbox::ExecOutput;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The program (started as `python -c PROGRAM` at the repository root; its first input line
/// is `{"warm": [...]}`).
pub const PROGRAM: &str = include_str!("resident.py");

/// `--runner`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunnerMode {
    /// A fresh process per run (`python -m pytest …`).
    Fresh,
    /// The resident runner where the seed qualifies, else fresh processes.
    #[default]
    Resident,
}

impl std::str::FromStr for RunnerMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fresh" => Ok(RunnerMode::Fresh),
            "resident" => Ok(RunnerMode::Resident),
            other => Err(format!("unknown runner `{other}` (fresh | resident)")),
        }
    }
}

/// One run request (see `resident.py`).
#[derive(Serialize, Debug)]
pub struct Request<'a> {
    pub args: &'a [String],
    pub timeout: f64,
    pub cpu: Option<f64>,
    pub stdout: String,
    pub stderr: String,
    pub times: String,
    #[serde(rename = "as")]
    pub address_space: Option<u64>,
    pub nproc: Option<u64>,
    pub procs: Option<String>,
    pub imports: Option<String>,
    /// Per-file test budgets the probe enforces (see `probe.py`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgets: Option<&'a std::collections::BTreeMap<String, f64>>,
}

/// The resident's greeting.
#[derive(Deserialize, Debug)]
pub struct Greeting {
    pub ready: bool,
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub warm: usize,
    #[serde(default, rename = "unsafe")]
    pub unsafe_reason: Option<String>,
}

/// The answer to one run.
#[derive(Deserialize, Debug)]
pub struct Reply {
    pub rc: Option<i32>,
    pub signal: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    pub elapsed: f64,
    /// The resident exits after this answer (the run left something it cannot undo): the
    /// next run starts a new one.
    #[serde(default)]
    pub exiting: bool,
}

/// The pytest resident pre-importing `warm` (see `resident.py`).
pub fn pytest_program(warm: &[String]) -> crate::sandbox::ResidentProgram {
    crate::sandbox::ResidentProgram {
        argv: vec!["python".into(), "-c".into(), PROGRAM.into()],
        start: serde_json::json!({ "warm": warm, "probe": super::pytest::PROBE }),
        contained: false,
    }
}

impl Reply {
    /// As `exec` reports a command.
    pub fn into_exec(self, stdout: Vec<u8>, stderr: Vec<u8>, oom_kills: u64) -> ExecOutput {
        let end = if self.timed_out {
            RunEnd::TimedOut
        } else if self.rc.is_some() {
            RunEnd::Exited
        } else {
            RunEnd::Signaled
        };
        ExecOutput {
            end,
            exit_code: if self.timed_out { None } else { self.rc },
            signal: if self.timed_out {
                Some(libc::SIGKILL)
            } else {
                self.signal
            },
            stdout,
            stderr,
            duration: Duration::from_secs_f64(self.elapsed.max(0.0)),
            oom_kills,
        }
    }
}

/// pytest's own arguments in a test command the resident can run: `python -m pytest ARGS`,
/// `python3 -m pytest ARGS` or `pytest ARGS` (plain words only). `None`: anything else (a
/// wrapper, environment assignments, shell syntax), which runs as fresh processes.
pub fn pytest_args(command: &str) -> Option<Vec<String>> {
    let plain = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    };
    let words: Vec<&str> = command.split_whitespace().collect();
    if !words.iter().all(|w| plain(w)) {
        return None;
    }
    let rest = match words.as_slice() {
        ["python" | "python3", "-m", "pytest", rest @ ..] => rest,
        ["pytest", rest @ ..] => rest,
        _ => return None,
    };
    Some(rest.iter().map(|s| s.to_string()).collect())
}

/// The first difference between `run` and the baseline's outcomes.
pub fn compare(baseline: &Baseline, run: &Run) -> Result<(), String> {
    if let Some(a) = &run.anomaly {
        return Err(format!("{}: {a}", run.label));
    }
    if run.end != RunEnd::Exited {
        return Err(format!("{}: {}", run.label, run.summary()));
    }
    for t in &baseline.stable_pass {
        let got = run.status(t);
        if got != TestStatus::Passed {
            return Err(format!(
                "{t} passes in fresh processes, {} in the resident runner",
                got
            ));
        }
    }
    for t in &baseline.failing {
        let got = run.status(t);
        if !got.is_failure() {
            return Err(format!(
                "{t} fails in fresh processes, {} in the resident runner",
                got
            ));
        }
    }
    // A test id the baseline never saw (a parameter made of the time of day) is neither
    // stable nor failing: it can be in no task, so it is not compared.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_args_of_plain_commands_only() {
        assert_eq!(pytest_args("python -m pytest"), Some(vec![]));
        assert_eq!(
            pytest_args("python3 -m pytest -x tests"),
            Some(vec!["-x".to_string(), "tests".to_string()])
        );
        assert_eq!(pytest_args("pytest -q"), Some(vec!["-q".to_string()]));
        assert_eq!(pytest_args("tox -e py"), None);
        assert_eq!(pytest_args("FOO=1 python -m pytest"), None);
        assert_eq!(pytest_args("python -m pytest 'a b'"), None);
        assert_eq!(pytest_args("python -m pytest; rm -rf /"), None);
    }
}

#[cfg(test)]
mod code_cache_tests {
    use super::PROGRAM;
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// A stand-in for pytest on the path, outside the repository: `pytest.main` imports the
    /// repository's module `m`, calls pytest's `_rewrite_test` on `t.py` as pytest's import
    /// hook does, and prints what `m.f()` and the rewritten `t.g()` give, and how many times
    /// the repository's sources were compiled and rewritten in this child.
    fn fake_pytest(dir: &Path) {
        let w = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("_pytest/__init__.py", "");
        w("_pytest/config.py", "default_plugins = []\n");
        w("_pytest/assertion/__init__.py", "");
        w(
            "_pytest/assertion/rewrite.py",
            r#"
import os
REWRITES = [0]
_compile = compile
class AssertionRewritingHook:
    def _warn_already_imported(self, name):
        pass
def _rewrite_test(fn, config):
    REWRITES[0] += 1
    data = open(fn, "rb").read()
    return b"hash", _compile(data, str(fn), "exec", dont_inherit=True)
"#,
        );
        w(
            "pytest/__init__.py",
            r#"
import builtins, os, sys, types
from pathlib import Path
def main(args, plugins=()):
    from _pytest.assertion import rewrite
    compiled = [0]
    real = builtins.compile
    def counting(source, filename, *a, **k):
        if str(filename).startswith(os.getcwd()):
            compiled[0] += 1
        return real(source, filename, *a, **k)
    builtins.compile = counting
    import m
    t = types.ModuleType("t")
    _, co = rewrite._rewrite_test(Path(os.getcwd()) / "t.py", None)
    exec(co, t.__dict__)
    print(m.f(), t.g(), compiled[0], rewrite.REWRITES[0])
    return 0
"#,
        );
    }

    #[test]
    fn children_share_compiled_code_by_content_never_by_time_or_size() {
        if Command::new("python3").arg("-V").output().is_err() {
            eprintln!("notice: no python3, skipped");
            return;
        }
        let tools = tempfile::tempdir().unwrap();
        fake_pytest(tools.path());
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        let mut child = Command::new("python3")
            .args(["-c", PROGRAM])
            .current_dir(&root)
            .env("PYTHONPATH", tools.path())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        writeln!(input, r#"{{"warm": [], "probe": null}}"#).unwrap();
        output.read_line(&mut line).unwrap();
        assert!(line.contains("\"ready\": true"), "{line}");
        let out = root.join("out.txt");
        let mut run = |m: &str, t: &str| -> String {
            // The same sizes each time, rewritten within the same second.
            std::fs::write(root.join("m.py"), m).unwrap();
            std::fs::write(root.join("t.py"), t).unwrap();
            let req = serde_json::json!({
                "args": [], "timeout": 30, "cpu": null,
                "stdout": out, "stderr": root.join("err.txt"), "times": root.join("times.txt"),
                "as": null, "nproc": null, "procs": null, "imports": null,
            });
            writeln!(input, "{req}").unwrap();
            line.clear();
            output.read_line(&mut line).unwrap();
            assert!(line.contains("\"rc\": 0"), "{line}");
            std::fs::read_to_string(&out).unwrap().trim().to_string()
        };
        let plus = "def f(): return 2 + 1\n";
        let minus = "def f(): return 2 - 1\n";
        let t3 = "def g(): return 3\n";
        let t4 = "def g(): return 4\n";
        // value of m.f(), of t.g(), sources compiled, tests rewritten: the first child
        // compiles both; a change of the same size is compiled again; bytes seen before are not.
        assert_eq!(run(plus, t3), "3 3 1 1");
        assert_eq!(run(minus, t4), "1 4 1 1");
        assert_eq!(run(plus, t3), "3 3 0 0");
        assert_eq!(run(minus, t3), "1 3 0 0");
        drop(input);
        child.wait().unwrap();
    }
}
