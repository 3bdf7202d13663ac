//! Tools: the actions an agent takes in its session (`bash`, `read_file`, `edit`,
//! `write_file`, `run_tests`, `submit`), their schemas in OpenAI's function format, how an
//! action is read from the shapes trainers send, and how each runs in the session's worker.
//! Paths are repository-relative; output is capped.

use crate::sandbox::{shell_quote, Worker};
use base64::Engine;
use serde_json::{json, Value};
use std::time::Duration;

/// The most bytes of output `bash` and `run_tests` return (head and tail kept).
pub const OUTPUT_CAP: usize = 64 * 1024;
/// The most bytes `read_file` returns.
pub const READ_CAP: usize = 256 * 1024;
/// `bash`'s default and largest timeouts, seconds.
pub const BASH_TIMEOUT_S: u64 = 60;
pub const BASH_TIMEOUT_MAX_S: u64 = 600;

/// The tools, as OpenAI function schemas.
pub fn schemas() -> Value {
    let f = |name: &str, description: &str, properties: Value, required: &[&str]| {
        json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                },
            },
        })
    };
    json!([
        f(
            "bash",
            "Run a shell command in the repository (no network). Returns its output (stdout \
             then stderr, at most 64 KiB) and exit code.",
            json!({
                "command": {"type": "string", "description": "The command (bash)."},
                "timeout": {"type": "integer", "description": "Seconds, default 60, at most 600."},
            }),
            &["command"],
        ),
        f(
            "read_file",
            "Read a file of the repository, or lines start..end of it (1-based, inclusive).",
            json!({
                "path": {"type": "string", "description": "Relative to the repository root."},
                "start": {"type": "integer"},
                "end": {"type": "integer"},
            }),
            &["path"],
        ),
        f(
            "edit",
            "Replace the one occurrence of `old` in a file with `new` (exact text; `old` must \
             occur exactly once).",
            json!({
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
            }),
            &["path", "old", "new"],
        ),
        f(
            "write_file",
            "Write a file of the repository (created, or replaced whole).",
            json!({
                "path": {"type": "string"},
                "content": {"type": "string"},
            }),
            &["path", "content"],
        ),
        f(
            "run_tests",
            "Run tests that are in the repository now: the given test ids, or by default the \
             task's tests present in the tree. Returns each test's status.",
            json!({
                "ids": {"type": "array", "items": {"type": "string"}},
            }),
            &[],
        ),
        f(
            "submit",
            "Submit the changes made so far: they are graded and the episode ends.",
            json!({}),
            &[],
        ),
    ])
}

/// A JSON schema of an action.
pub fn action_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": ["bash", "read_file", "edit", "write_file", "run_tests", "submit"]},
            "arguments": {"type": "object"},
        },
        "required": ["tool"],
    })
}

/// One action.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub tool: String,
    pub arguments: Value,
}

/// An action from the shapes trainers send: `{"tool", "arguments"}`, OpenAI's tool call
/// `{"name", "arguments": "<JSON text>"}` or `{"function": {"name", "arguments"}}`.
pub fn parse_action(v: &Value) -> Result<Action, String> {
    let v = v.get("function").filter(|f| f.is_object()).unwrap_or(v);
    let tool = v
        .get("tool")
        .or_else(|| v.get("name"))
        .and_then(Value::as_str)
        .ok_or("an action names its tool: {\"tool\": \"bash\", \"arguments\": {...}}")?;
    let arguments = match v.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => {
            serde_json::from_str(s).map_err(|e| format!("the arguments are not JSON: {e}"))?
        }
        Some(a @ Value::Object(_)) => a.clone(),
        Some(_) => return Err("the arguments are an object".to_string()),
    };
    if !arguments.is_object() {
        return Err("the arguments are an object".to_string());
    }
    const TOOLS: [&str; 6] = [
        "bash",
        "read_file",
        "edit",
        "write_file",
        "run_tests",
        "submit",
    ];
    if !TOOLS.contains(&tool) {
        return Err(format!(
            "unknown tool `{tool}` (the tools: {})",
            TOOLS.join(", ")
        ));
    }
    Ok(Action {
        tool: tool.to_string(),
        arguments,
    })
}

/// A tool's failure: a mistake of the agent (an observation, the episode goes on), or of the
/// environment (its container is gone: the session fails).
#[derive(Debug)]
pub enum ToolError {
    Agent(String),
    Environment(String),
}

fn arg_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Agent(format!("`{key}` (a string) is required")))
}

/// A repository-relative path that stays in the repository.
pub fn checked_path(path: &str) -> Result<String, ToolError> {
    let p = path.trim().trim_start_matches("./");
    if p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == "..") || p.contains('\0') {
        return Err(ToolError::Agent(format!(
            "`{path}`: paths are relative to the repository and stay in it"
        )));
    }
    Ok(p.to_string())
}

/// The first and last `cap / 2` bytes of a long text, with what was left out said.
pub fn capped(bytes: &[u8], cap: usize) -> String {
    if bytes.len() <= cap {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let half = cap / 2;
    format!(
        "{}\n[... {} bytes left out ...]\n{}",
        String::from_utf8_lossy(&bytes[..half]),
        bytes.len() - 2 * half,
        String::from_utf8_lossy(&bytes[bytes.len() - half..])
    )
}

fn env_err(e: impl std::fmt::Display) -> ToolError {
    ToolError::Environment(e.to_string())
}

/// `bash`.
/// The scratch file where a `bash` step leaves the repository's size (`du -sk`'s line: KiB,
/// then the path).
pub const TREE_KB_FILE: &str = "tree_kb";

/// `bash`: the command in a subshell (its `exit` and traps stay its own), no file it writes
/// larger than `max_file_kb`; then the repository's size is measured into [`TREE_KB_FILE`].
pub fn bash(worker: &mut dyn Worker, args: &Value, max_file_kb: u64) -> Result<Value, ToolError> {
    let command = arg_str(args, "command")?;
    let timeout = args
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(BASH_TIMEOUT_S)
        .clamp(1, BASH_TIMEOUT_MAX_S);
    let size = format!("{}/{TREE_KB_FILE}", worker.scratch());
    let script = format!("ulimit -f {max_file_kb}\n(\n{command}\n) 2>&1");
    let out = worker
        .exec_and_measure(&script, Duration::from_secs(timeout), &size)
        .map_err(env_err)?;
    let mut all = out.stdout;
    all.extend_from_slice(&out.stderr);
    Ok(json!({
        "output": capped(&all, OUTPUT_CAP),
        "exit_code": out.exit_code,
        "timed_out": out.end == crate::run::RunEnd::TimedOut,
    }))
}

/// The text of a repository file, `Ok(None)` when there is none.
pub fn read_text(worker: &mut dyn Worker, path: &str) -> Result<Option<Vec<u8>>, ToolError> {
    let out = worker
        .exec(
            &format!("test -f {p} && cat -- {p}", p = shell_quote(path)),
            Duration::from_secs(60),
        )
        .map_err(env_err)?;
    Ok((out.exit_code == Some(0)).then_some(out.stdout))
}

/// `read_file`.
pub fn read_file(worker: &mut dyn Worker, args: &Value) -> Result<(Value, String), ToolError> {
    let path = checked_path(arg_str(args, "path")?)?;
    let bytes = read_text(worker, &path)?
        .ok_or_else(|| ToolError::Agent(format!("`{path}`: no such file")))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = args
        .get("start")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1) as usize;
    let end = args
        .get("end")
        .and_then(Value::as_u64)
        .map_or(lines.len(), |e| e as usize)
        .min(lines.len());
    let content: String = if start > end {
        String::new()
    } else {
        lines[start - 1..end].concat()
    };
    Ok((
        json!({"content": capped(content.as_bytes(), READ_CAP), "lines": lines.len()}),
        path,
    ))
}

/// Write `text` to a repository file (its folder made).
fn write_text(worker: &mut dyn Worker, path: &str, text: &str) -> Result<(), ToolError> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let script = format!(
        "mkdir -p -- \"$(dirname -- {p})\" && printf %s {e} | base64 -d > {p}",
        p = shell_quote(path),
        e = shell_quote(&encoded)
    );
    let out = worker
        .exec(&script, Duration::from_secs(60))
        .map_err(env_err)?;
    if out.exit_code != Some(0) {
        return Err(ToolError::Agent(format!(
            "`{path}`: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// `edit`.
pub fn edit(worker: &mut dyn Worker, args: &Value) -> Result<(Value, String), ToolError> {
    let path = checked_path(arg_str(args, "path")?)?;
    let old = arg_str(args, "old")?;
    let new = arg_str(args, "new")?;
    if old.is_empty() {
        return Err(ToolError::Agent("`old` is empty".to_string()));
    }
    let bytes = read_text(worker, &path)?
        .ok_or_else(|| ToolError::Agent(format!("`{path}`: no such file")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::Agent(format!("`{path}` is not UTF-8 text")))?;
    match text.matches(old).count() {
        1 => {}
        0 => {
            return Err(ToolError::Agent(format!(
                "`old` does not occur in `{path}`"
            )))
        }
        n => {
            return Err(ToolError::Agent(format!(
                "`old` occurs {n} times in `{path}`: give more context so it occurs once"
            )))
        }
    }
    write_text(worker, &path, &text.replacen(old, new, 1))?;
    Ok((json!({"ok": true}), path))
}

/// `write_file`.
pub fn write_file(worker: &mut dyn Worker, args: &Value) -> Result<(Value, String), ToolError> {
    let path = checked_path(arg_str(args, "path")?)?;
    let content = arg_str(args, "content")?;
    write_text(worker, &path, content)?;
    Ok((json!({"ok": true}), path))
}

/// Which of `files` exist in the worker's tree.
pub fn existing(worker: &mut dyn Worker, files: &[String]) -> Result<Vec<String>, ToolError> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let script = files
        .iter()
        .map(|f| format!("test -e {q} && printf '%s\\n' {q}", q = shell_quote(f)))
        .collect::<Vec<_>>()
        .join("; ");
    let out = worker
        .exec(&format!("{script}; true"), Duration::from_secs(60))
        .map_err(env_err)?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_read_from_every_shape() {
        let a = parse_action(&json!({"tool": "bash", "arguments": {"command": "ls"}})).unwrap();
        assert_eq!(a.tool, "bash");
        assert_eq!(a.arguments["command"], "ls");
        let b = parse_action(&json!({"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}))
            .unwrap();
        assert_eq!(b.arguments["path"], "a.py");
        let c = parse_action(
            &json!({"type": "function", "function": {"name": "submit", "arguments": ""}}),
        )
        .unwrap();
        assert_eq!(c.tool, "submit");
        assert!(parse_action(&json!({"tool": "rm"}))
            .unwrap_err()
            .contains("unknown tool"));
        assert!(parse_action(&json!({"arguments": {}})).is_err());
        assert!(parse_action(&json!({"tool": "bash", "arguments": "[1"})).is_err());
        assert!(parse_action(&json!({"tool": "bash", "arguments": [1]})).is_err());
    }

    #[test]
    fn paths_stay_in_the_repository_and_output_is_capped() {
        assert_eq!(checked_path("./pkg/a.py").unwrap(), "pkg/a.py");
        for bad in ["/etc/passwd", "../x", "a/../../b", ""] {
            assert!(checked_path(bad).is_err(), "{bad}");
        }
        let long = vec![b'x'; 1000];
        let c = capped(&long, 100);
        assert!(c.starts_with(&"x".repeat(50)));
        assert!(c.contains("[... 900 bytes left out ...]"), "{c}");
        assert_eq!(capped(b"short", 100), "short");
        assert_eq!(schemas().as_array().unwrap().len(), 6);
    }
}
