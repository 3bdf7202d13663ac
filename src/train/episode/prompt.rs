//! Prompts: what a policy sees for a task, the issue and the buggy file windowed around the
//! function that encloses the bug.

use crate::lang::Language;
use crate::task::Task;
use serde::Serialize;

/// How much code a prompt shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptConfig {
    /// Lines shown before and after the enclosing function, when the budget allows.
    pub context_lines: usize,
    /// At most this many characters of code (the lines of the bug itself are always shown,
    /// even when they alone exceed it; the prompt then says `over_budget`).
    pub max_code_chars: usize,
    /// The issue text is cut to this many characters.
    pub max_issue_chars: usize,
}

impl Default for PromptConfig {
    fn default() -> Self {
        PromptConfig {
            context_lines: 3,
            max_code_chars: 4000,
            max_issue_chars: 2000,
        }
    }
}

/// A rendered prompt and what it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Prompt {
    pub instance_id: String,
    /// The file shown (`metadata.location.file`).
    pub file: String,
    /// 1-based, inclusive: the lines of the file the prompt shows.
    pub first_line: usize,
    pub last_line: usize,
    /// The code shown (those lines, each ending with a line end).
    pub code: String,
    /// Whether the window is smaller than the function and its context lines.
    pub truncated: bool,
    /// Whether the bug's own lines exceed `max_code_chars`.
    pub over_budget: bool,
    /// The whole prompt text, from `templates/train/prompt.md.j2`.
    pub text: String,
}

/// Why a prompt could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("the prompt template is missing from the build")]
    MissingTemplate,
    #[error("rendering the prompt: {0}")]
    Render(#[from] minijinja::Error),
    #[error("{instance_id}: the bug's lines {first}-{last} are outside {file} ({lines} lines)")]
    Location {
        instance_id: String,
        file: String,
        first: usize,
        last: usize,
        lines: usize,
    },
}

/// The 1-based, inclusive lines of the innermost function of `text` that contains `line`
/// (1-based), found with the language's syntax tree; `None` when no function does or the text
/// does not parse.
pub fn enclosing_function(language: Language, text: &str, line: usize) -> Option<(usize, usize)> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    let tree = parser.parse(text, None)?;
    let row = line.checked_sub(1)?;
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let from = *starts.get(row)?;
    let to = starts
        .get(row + 1)
        .map_or(text.len(), |e| e.saturating_sub(1));
    // The first non-blank byte of the line, so that indentation does not select the block.
    let from = text[from..to]
        .find(|c: char| !c.is_whitespace())
        .map_or(from, |o| from + o);
    let mut node = tree
        .root_node()
        .descendant_for_byte_range(from, from.max(to.min(from + 1)))?;
    let syntax = language.syntax();
    loop {
        if syntax.function_parts(node).is_some() {
            return Some((node.start_position().row + 1, node.end_position().row + 1));
        }
        node = node.parent()?;
    }
}

/// The prompt of a task, given the buggy text of its file (see [`crate::train::reward::RewardEnv::buggy_file`]).
///
/// The window: the bug's lines (`metadata.location.lines`), grown a line at a time upwards
/// and downwards, first to the enclosing function, then by `context_lines` more, as long as
/// the next line fits in `max_code_chars`.
pub fn build_prompt(task: &Task, buggy: &str, cfg: &PromptConfig) -> Result<Prompt, PromptError> {
    let loc = &task.metadata.location;
    let lines: Vec<&str> = buggy.split_inclusive('\n').collect();
    let n = lines.len();
    let (first, last) = loc.lines;
    if first == 0 || first > n {
        return Err(PromptError::Location {
            instance_id: task.instance_id.clone(),
            file: loc.file.clone(),
            first,
            last,
            lines: n,
        });
    }
    // Line numbers are the clean file's; a bug that removes lines ends earlier.
    let (bs, be) = (first - 1, last.clamp(first, n) - 1);
    let (fs, fe) = enclosing_function(task.language, buggy, first)
        .map(|(s, e)| (s - 1, (e - 1).min(n - 1)))
        .unwrap_or((bs, be));
    let (fs, fe) = (fs.min(bs), fe.max(be));
    let cost = |i: usize| lines[i].len() + usize::from(!lines[i].ends_with('\n'));
    let mut used: usize = (bs..=be).map(cost).sum();
    let over_budget = used > cfg.max_code_chars;
    let (mut lo, mut hi) = (bs, be);
    let outer = (
        fs.saturating_sub(cfg.context_lines),
        (fe + cfg.context_lines).min(n - 1),
    );
    for (min, max) in [(fs, fe), outer] {
        loop {
            let mut grew = false;
            if lo > min && used + cost(lo - 1) <= cfg.max_code_chars {
                lo -= 1;
                used += cost(lo);
                grew = true;
            }
            if hi < max && used + cost(hi + 1) <= cfg.max_code_chars {
                hi += 1;
                used += cost(hi);
                grew = true;
            }
            if !grew {
                break;
            }
        }
    }
    let truncated = (lo, hi) != outer;
    let mut code: String = lines[lo..=hi].concat();
    if !code.ends_with('\n') {
        code.push('\n');
    }
    let issue = cut(task.problem_statement.trim(), cfg.max_issue_chars);
    let source =
        crate::assets::template("train/prompt.md.j2").ok_or(PromptError::MissingTemplate)?;
    let mut env = minijinja::Environment::new();
    env.add_template("prompt", source)?;
    let text = env.get_template("prompt")?.render(minijinja::context! {
        issue => issue,
        file => loc.file,
        language => task.language.name(),
        first_line => lo + 1,
        last_line => hi + 1,
        truncated => truncated,
        code => code.trim_end_matches('\n'),
    })?;
    Ok(Prompt {
        instance_id: task.instance_id.clone(),
        file: loc.file.clone(),
        first_line: lo + 1,
        last_line: hi + 1,
        code,
        truncated,
        over_budget,
        text,
    })
}

/// At most `max` characters of `s`, cut at a character boundary, with `…` when cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}
