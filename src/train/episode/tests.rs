//! Unit tests of the episodes, and the task fixture other modules' tests use.

use super::edit::{REPLACE, SEARCH};
use super::prompt::cut;
use super::*;
use crate::candidate::enumerate_source;
use crate::lang::Language;
use crate::mutator::load_embedded;
use crate::task::Task;
use crate::task::{Difficulty, EnvironmentInfo, Evidence, Location, TaskMetadata};

fn edit(blocks: &[(&str, &str)]) -> Edit {
    let lines = |s: &str| -> Vec<String> {
        if s.is_empty() {
            vec![]
        } else {
            s.split('\n').map(str::to_string).collect()
        }
    };
    Edit {
        path: None,
        blocks: blocks
            .iter()
            .map(|(s, r)| Block {
                search: lines(s),
                replace: lines(r),
            })
            .collect(),
    }
}

/// A task record around a bug patch and gold patch of `file` (only the fields the
/// episode code reads matter).
pub(crate) fn task_with(
    id: &str,
    file: &str,
    bug_patch: String,
    patch: String,
    lines: (usize, usize),
) -> Task {
    Task {
        instance_id: id.into(),
        repo: "pyshelf".into(),
        base_commit: "a".repeat(40),
        patch,
        test_patch: String::new(),
        problem_statement: "`total` is wrong for two items.".into(),
        hints_text: String::new(),
        created_at: "2026-01-01T00:00:00Z".into(),
        version: "0".into(),
        environment_setup_commit: "a".repeat(40),
        fail_to_pass: vec!["tests/t.py::test_a".into()],
        pass_to_pass: vec!["tests/t.py::test_b".into()],
        bug_patch,
        image_name: None,
        language: Language::Python,
        metadata: TaskMetadata {
            mutators: vec!["py-arith".into()],
            category: "operator".into(),
            candidate_id: id.into(),
            location: Location {
                file: file.into(),
                function: "f".into(),
                lines,
            },
            difficulty: Difficulty {
                category: "operator".into(),
                killing_tests: 1,
                function_lines: 3,
                fix_lines: 2,
                files_in_fix: 1,
                synthesized_tests: false,
                direct_call: false,
                issue_names_function: false,
                issue_names_file: false,
                score: 0.4,
            },
            verification: Evidence {
                repeats: 3,
                sandbox: "local".into(),
                clean_runs: vec![],
                runs: vec![],
                reused: vec![],
                nondeterministic: Default::default(),
            },
            environment: EnvironmentInfo {
                seed: String::new(),
                source: "/nowhere".into(),
                install: None,
                test_command: "python -m pytest".into(),
                python_path: vec![".".into()],
                toolchain: None,
                dependencies: None,
            },
            tool_version: "0.1.0".into(),
            issue_style: "report".into(),
            issue_detail: String::new(),
            issue_rewrite: Default::default(),
            start_state: None,
            dropped_test_ids: Default::default(),
            grading: None,
        },
    }
}

#[test]
fn parses_blocks_path_and_fences() {
    let text = "path: pkg/m.py\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE  \n\n<<<<<<< SEARCH\nx = 1\n=======\n>>>>>>> REPLACE\n```\n";
    let e = parse_edit(text).unwrap();
    assert_eq!(e.path.as_deref(), Some("pkg/m.py"));
    assert_eq!(e.blocks.len(), 2);
    assert_eq!(e.blocks[0].search, vec!["    return a - b"]);
    assert_eq!(e.blocks[0].replace, vec!["    return a + b"]);
    assert!(e.blocks[1].replace.is_empty());
    // The canonical rendering parses back to the same edit.
    assert_eq!(parse_edit(&e.render()).unwrap(), e);
    // CRLF line ends are read as LF.
    let crlf = e.render().replace('\n', "\r\n");
    assert_eq!(parse_edit(&crlf).unwrap(), e);
}

#[test]
fn rejects_malformed_edits_with_the_line() {
    let cases = [
        ("", 1, "no SEARCH/REPLACE block"),
        ("hello\n", 1, "outside"),
        ("<<<<<<< SEARCH\na\n=======\nb\n", 5, "unterminated"),
        (
            "<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE\n",
            2,
            "empty SEARCH",
        ),
        (
            "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n",
            3,
            "expected `=======`",
        ),
        (
            "<<<<<<< SEARCH\na\n=======\n=======\n",
            4,
            "expected `>>>>>>> REPLACE`",
        ),
        (
            "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\npath: x\n",
            6,
            "path:",
        ),
    ];
    for (text, line, what) in cases {
        match parse_edit(text) {
            Err(EditError::Parse { line: l, message }) => {
                assert_eq!(l, line, "{text:?}: {message}");
                assert!(message.contains(what), "{text:?}: {message}");
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn applies_in_order_whitespace_exact_and_unique() {
    let file = "def f(a, b):\n    x = a - b\n    return x\n\ndef g():\n    return 1\n";
    let e = edit(&[
        ("    x = a - b", "    x = a + b"),
        ("    return 1", "    return 2"),
    ]);
    assert_eq!(
        apply_edit(file, &e).unwrap(),
        "def f(a, b):\n    x = a + b\n    return x\n\ndef g():\n    return 2\n"
    );
    // Whitespace must match exactly; the error says it is only whitespace.
    let loose = edit(&[("  x = a - b", "  x = a + b")]);
    let err = apply_edit(file, &loose).unwrap_err();
    assert_eq!(
        err,
        EditError::NoMatch {
            block: 1,
            hint: " (it differs from the file only in whitespace)".into()
        }
    );
    // Whole lines only: a part of a line does not match.
    assert!(matches!(
        apply_edit(file, &edit(&[("x = a - b", "x = 0")])),
        Err(EditError::NoMatch { .. })
    ));
    // Two places match: ambiguous.
    let twice = "    return 1\n    return 1\n";
    assert_eq!(
        apply_edit(twice, &edit(&[("    return 1", "    return 0")])),
        Err(EditError::Ambiguous { block: 1, count: 2 })
    );
    // A later block sees the text the earlier ones left.
    let chained = edit(&[("    x = a - b", "    y = 1"), ("    y = 1", "    y = 2")]);
    assert!(apply_edit(file, &chained).unwrap().contains("    y = 2\n"));
    // Deleting lines, and a file without a final line end keeps it so.
    assert_eq!(apply_edit("a\nb\nc", &edit(&[("b", "")])).unwrap(), "a\nc");
    assert_eq!(
        apply_edit("a\nb\nc", &edit(&[("c", "d")])).unwrap(),
        "a\nb\nd"
    );
}

#[test]
fn a_path_line_must_name_the_file() {
    let mut e = edit(&[("a", "b")]);
    e.path = Some("./pkg/m.py".into());
    assert_eq!(apply_edit_to("pkg/m.py", "a\n", &e).unwrap(), "b\n");
    assert!(matches!(
        apply_edit_to("pkg/other.py", "a\n", &e),
        Err(EditError::WrongFile { .. })
    ));
}

#[test]
fn changes_are_read_from_a_git_diff() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
    let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
    let patch = crate::task::file_diff("m.py", old, new);
    let ch = file_changes(&patch, "m.py").unwrap();
    assert_eq!(
        ch,
        vec![
            Change {
                old_start: 1,
                old: vec!["b".into()],
                new: vec!["B".into()]
            },
            Change {
                old_start: 11,
                old: vec![],
                new: vec!["l".into()]
            }
        ]
    );
    assert_eq!(apply_changes(old, &ch).unwrap(), new);
    assert!(file_changes(&patch, "other.py").is_err());
    assert_eq!(patch_files(&patch).unwrap(), vec!["m.py"]);
}

/// A real bug of the demo seed: its file, the clean and buggy texts, the gold patch and the
/// bug's lines.
struct DemoBug {
    file: String,
    clean: String,
    buggy: String,
    patch: String,
    lines: (usize, usize),
}

/// Every candidate the embedded rules make on the demo seed's sources.
fn demo_bugs() -> Vec<DemoBug> {
    let rules = load_embedded(Language::Python).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/pyshelf");
    let mut out = Vec::new();
    for name in [
        "money.py",
        "periods.py",
        "pricing.py",
        "query.py",
        "text.py",
        "ledger.py",
    ] {
        let rel = format!("pyshelf/{name}");
        let clean = std::fs::read_to_string(root.join(&rel)).unwrap();
        for c in enumerate_source(&rel, clean.as_bytes(), Language::Python, &rules).unwrap() {
            let buggy = crate::task::buggy_text(&clean, &c);
            let patch = crate::task::gold_patch(&clean, &c);
            out.push(DemoBug {
                file: rel.clone(),
                clean: clean.clone(),
                buggy,
                patch,
                lines: c.line_range,
            });
        }
    }
    out
}

#[test]
fn gold_edit_turns_real_buggy_files_into_clean_ones() {
    let bugs = demo_bugs();
    assert!(bugs.len() > 100, "{} candidates", bugs.len());
    let mut failed = Vec::new();
    let mut search_lines = 0;
    for (i, bug) in bugs.iter().enumerate() {
        let (file, clean, buggy, patch, lines) =
            (&bug.file, &bug.clean, &bug.buggy, &bug.patch, &bug.lines);
        let task = task_with(&format!("t{i}"), file, String::new(), patch.clone(), *lines);
        match gold_edit(&task, buggy) {
            Ok(e) => {
                assert_eq!(
                    &apply_edit(buggy, &e).unwrap(),
                    clean,
                    "{file}\n{}",
                    e.render()
                );
                // The rendering round-trips through the parser.
                assert_eq!(parse_edit(&e.render()).unwrap(), e);
                search_lines += e.blocks.iter().map(|b| b.search.len()).sum::<usize>();
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
    // Minimal blocks: most bugs change one line and need little context.
    let mean = search_lines as f64 / bugs.len() as f64;
    assert!(mean < 3.0, "mean SEARCH lines {mean}");
}

#[test]
fn gold_edit_adds_context_until_unique() {
    let clean = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x + 1\n";
    let buggy = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 2\n    return x + 1\n";
    let patch = crate::task::file_diff("m.py", buggy, clean);
    let task = task_with("t", "m.py", String::new(), patch, (6, 6));
    let e = gold_edit(&task, buggy).unwrap();
    assert_eq!(e.blocks.len(), 1);
    // `    x = 2` is unique in the buggy file: no context needed.
    assert_eq!(e.blocks[0].search, vec!["    x = 2"]);
    // A fix that restores a duplicated line needs context: removing the line `x = 1` of g.
    let buggy2 =
        "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    x = 1\n    return x + 1\n";
    let patch2 = crate::task::file_diff("m.py", buggy2, clean);
    let task2 = task_with("t", "m.py", String::new(), patch2, (6, 6));
    let e2 = gold_edit(&task2, buggy2).unwrap();
    assert_eq!(apply_edit(buggy2, &e2).unwrap(), clean);
    assert!(e2.blocks[0].search.len() >= 2, "{}", e2.render());
}

#[test]
fn enclosing_function_spans_the_def() {
    let text =
        "import x\n\nclass A:\n    def f(self):\n        y = 1\n\n        return y\n\nz = 2\n";
    assert_eq!(enclosing_function(Language::Python, text, 5), Some((4, 7)));
    assert_eq!(enclosing_function(Language::Python, text, 7), Some((4, 7)));
    assert_eq!(enclosing_function(Language::Python, text, 9), None);
}

#[test]
fn prompt_shows_the_function_within_the_budget() {
    let mut body = String::from("import math\n\n\ndef f(a, b):\n");
    for i in 0..40 {
        body.push_str(&format!("    v{i} = a * {i}\n"));
    }
    body.push_str("    return a - b\n\n\ndef g():\n    return 1\n");
    let bug_line = 45;
    assert_eq!(body.lines().nth(bug_line - 1), Some("    return a - b"));
    let task = task_with(
        "t",
        "pkg/m.py",
        String::new(),
        String::new(),
        (bug_line, bug_line),
    );
    // A large budget: the whole function and 3 lines of context each side.
    let p = build_prompt(&task, &body, &PromptConfig::default()).unwrap();
    assert_eq!((p.first_line, p.last_line), (1, 48));
    assert!(!p.truncated && !p.over_budget);
    assert!(
        p.text.contains("`total` is wrong for two items."),
        "{}",
        p.text
    );
    assert!(p.text.contains("pkg/m.py"), "{}", p.text);
    assert!(p.text.contains("    return a - b\n"), "{}", p.text);
    assert!(
        p.text.contains(SEARCH) && p.text.contains(REPLACE),
        "{}",
        p.text
    );
    // A small budget: a window around the bug's line, within the budget.
    let cfg = PromptConfig {
        max_code_chars: 200,
        ..PromptConfig::default()
    };
    let p = build_prompt(&task, &body, &cfg).unwrap();
    assert!(p.truncated && !p.over_budget);
    assert!(p.code.len() <= 200, "{}", p.code.len());
    assert!(p.first_line <= bug_line && bug_line <= p.last_line);
    assert!(p.code.contains("    return a - b\n"));
    // A budget smaller than the bug's line still shows it.
    let tiny = PromptConfig {
        max_code_chars: 5,
        ..PromptConfig::default()
    };
    let p = build_prompt(&task, &body, &tiny).unwrap();
    assert!(p.over_budget);
    assert_eq!((p.first_line, p.last_line), (bug_line, bug_line));
    // A location outside the file is an error, not a panic.
    let far = task_with("t", "pkg/m.py", String::new(), String::new(), (999, 999));
    assert!(matches!(
        build_prompt(&far, &body, &tiny),
        Err(PromptError::Location { .. })
    ));
}

#[test]
fn issue_text_is_cut_to_its_budget() {
    assert_eq!(cut("héllo wörld", 5), "héllo…");
    assert_eq!(cut("short", 50), "short");
}
