//! The grading command: one recorded command per task (the test files it runs, in order; the
//! runner's options; the configuration the runner reads) that every grader runs. Verification
//! decides FAIL_TO_PASS and PASS_TO_PASS with it; `audit`, `serve`, `train`, SWE-bench's
//! `eval_script` and Harbor's `tests/test.sh` are made from it, so a task that verified is a task
//! that grades.
//!
//! Scope: the test files of the tests that execute the mutated lines (or, when none does, of the
//! tests that failed with the bug in screening), plus any file `test_patch` adds, in the order
//! the whole suite runs them. A grader adds only options that change what is reported, never
//! what runs (`-rA`, a report file).

use crate::baseline::Baseline;
use crate::run::Run;
use crate::runner::{RunBudget, RunnerError, TestRunner};
use crate::sandbox::{shell_quote, Worker};
use crate::toolchain::Toolchain;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Mutex;

/// A task's grading command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grading {
    /// What starts the runner: the seed's test command (`python -m pytest`).
    pub base_command: String,
    /// The runner's options, after the base command and before the files.
    #[serde(default)]
    pub options: Vec<String>,
    /// The test files it runs, repository-relative, in this order (with `tests`: the files
    /// those tests are in).
    pub files: Vec<String>,
    /// The tests it runs, in this order, where it names tests rather than whole files
    /// (`--grading-scope tests`, the default where the runner can name them): the command
    /// then lists these instead of `files`. Empty: it runs `files`, whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// The configuration file the runner reads, as it is in the start state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigFile>,
    /// The command line: base command, options, files (each shell-quoted).
    pub command: String,
    /// Globs (`*` matches `/` too) of the files an agent's change may touch: the task's
    /// source files (each source file's folder; a module at the root by its own name). Empty
    /// in records made before it: then any path that is not protected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub editable: Vec<String>,
    /// Names no agent change may touch wherever they are: the runner's configuration and
    /// plugins, test folders and files. Each is a glob matched against every component of a
    /// path. The command's own files are protected too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// How the command names its selection. Absent in records made before it: `args`.
    #[serde(default, skip_serializing_if = "Select::is_args")]
    pub select: Select,
}

/// How a grading command names what it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Select {
    /// Its tests, else its files, as arguments after the options (pytest, jest).
    #[default]
    Args,
    /// Maven's Surefire: `-Dtest=<selection>` and then the `test` goal. Tests are named as
    /// Surefire selects them (`a.B#x*+y*,a.C`: a method as a prefix pattern, see `runner::surefire::selection`); a file as its class, the path below its test
    /// source folder (`src/test/java/`, else the last `java/`), `.java` dropped.
    Surefire,
}

impl Select {
    fn is_args(&self) -> bool {
        *self == Select::Args
    }
}

/// The class a Java test file holds, as Surefire's `-Dtest` names it: the path below the test
/// source folder (`…/src/test/java/`, else the last `java/` component), dots for slashes.
pub fn java_class_of(file: &str) -> String {
    let below = file
        .rsplit_once("src/test/java/")
        .map(|(_, rest)| rest)
        .or_else(|| file.rsplit_once("/java/").map(|(_, rest)| rest))
        .or_else(|| file.strip_prefix("java/"))
        .unwrap_or(file);
    below.trim_end_matches(".java").replace('/', ".")
}

/// An agent's diff with only its changes to the task's source files kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filtered {
    /// The sections kept, as one patch.
    pub patch: String,
    /// Every path of the sections left out, in order.
    pub dropped: Vec<String>,
}

/// Whether `pattern` (`*` and `?`, where `*` matches `/` too; `[...]` classes) matches `text`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(false)
        .build()
        .map(|g| g.compile_matcher().is_match(text))
        .unwrap_or(false)
}

/// The editable globs of a project's source files: each file's folder (`pkg/sub/*`, folders
/// under an already listed one left out), and a file at the root by its own name (a new
/// module at the root is not a source file: it could be a plugin).
pub fn editable_globs(source_files: &[String]) -> Vec<String> {
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    let mut roots: BTreeSet<String> = BTreeSet::new();
    for f in source_files {
        match f.rsplit_once('/') {
            Some((dir, _)) => {
                dirs.insert(dir.to_string());
            }
            None => {
                roots.insert(f.clone());
            }
        }
    }
    let top: Vec<&String> = dirs
        .iter()
        .filter(|d| {
            !dirs
                .iter()
                .any(|o| o != *d && d.starts_with(&format!("{o}/")))
        })
        .collect();
    top.into_iter()
        .map(|d| format!("{d}/*"))
        .chain(roots)
        .collect()
}

/// A configuration file the runner reads, and its content's blake3 at the start state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigFile {
    pub path: String,
    pub blake3: String,
}

impl Grading {
    /// The grading command of `base_command` with `options` over `files`, reading `config`.
    pub fn new(
        base_command: &str,
        options: Vec<String>,
        files: Vec<String>,
        config: Option<ConfigFile>,
    ) -> Grading {
        let mut g = Grading {
            base_command: base_command.trim().to_string(),
            options,
            files,
            tests: Vec::new(),
            config,
            command: String::new(),
            editable: Vec::new(),
            protected: Vec::new(),
            select: Select::Args,
        };
        g.command = g.line_with(&[]);
        g
    }

    /// The same command naming its selection the way `select` says.
    pub fn with_select(mut self, select: Select) -> Grading {
        self.select = select;
        self.command = self.line_with(&[]);
        self
    }

    /// The command line with `report` (options that change only what is reported) added
    /// after the grading options: what a grader runs.
    pub fn line_with(&self, report: &[String]) -> String {
        let mut words = vec![self.base_command.clone()];
        words.extend(self.options.iter().map(|o| shell_quote(o)));
        words.extend(report.iter().cloned());
        match self.select {
            Select::Args => words.extend(self.selection().iter().map(|f| shell_quote(f))),
            Select::Surefire => {
                let named: Vec<String> = if self.tests.is_empty() {
                    self.files.iter().map(|f| java_class_of(f)).collect()
                } else {
                    self.tests.clone()
                };
                let selection = crate::runner::surefire::selection(&named);
                // An empty selection would run the whole suite: select a test that cannot exist.
                let selection = if selection.is_empty() {
                    "swe_forge_no_test#none".to_string()
                } else {
                    selection
                };
                words.push(shell_quote(&format!("-Dtest={selection}")));
                words.push("test".to_string());
            }
        }
        words.retain(|w| !w.is_empty());
        words.join(" ")
    }

    /// What the command names after its options: its tests, else its files.
    pub fn selection(&self) -> &[String] {
        if self.tests.is_empty() {
            &self.files
        } else {
            &self.tests
        }
    }

    /// The same command naming `tests` (in this order) instead of whole files.
    pub fn with_tests(mut self, tests: Vec<String>) -> Grading {
        self.tests = tests;
        self.command = self.line_with(&[]);
        self
    }

    /// What identifies the command, for "the same tree under the same command" (runs reused).
    pub fn key(&self) -> String {
        blake3::hash(
            // A command over files keeps the key it had before commands could name tests.
            if self.tests.is_empty() {
                serde_json::to_string(&(
                    &self.base_command,
                    &self.options,
                    &self.files,
                    &self.config,
                ))
            } else {
                serde_json::to_string(&(
                    &self.base_command,
                    &self.options,
                    &self.files,
                    &self.config,
                    &self.tests,
                ))
            }
            .expect("a grading command serializes")
            .as_bytes(),
        )
        .to_hex()[..16]
            .to_string()
    }

    /// Whether `file` is one of the files it runs.
    pub fn runs_file(&self, file: &str) -> bool {
        self.files.iter().any(|f| f == file)
    }

    /// Whether no agent change may touch `path`: one of the command's files, or a path one of
    /// whose components is a protected name.
    pub fn protects(&self, path: &str) -> bool {
        self.runs_file(path)
            || path
                .split('/')
                .any(|c| !c.is_empty() && self.protected.iter().any(|p| glob_match(p, c)))
    }

    /// Whether an agent's change to `path` is applied when grading.
    pub fn allows(&self, path: &str) -> bool {
        !path.is_empty()
            && !self.protects(path)
            && (self.editable.is_empty() || self.editable.iter().any(|g| glob_match(g, path)))
    }

    /// [`Grading::allows`] as `git apply` arguments (its rules are tried in order, `*`
    /// matches `/`, and with an `--include` a path no rule matches is left out): the
    /// protected names anywhere and `hidden` files excluded first, then the editable globs
    /// included. `git apply` tests a renamed file by its new name.
    pub fn git_apply_rules(&self, hidden: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |s: String| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        for f in self.files.iter().chain(hidden) {
            push(format!("--exclude={f}"));
        }
        for p in &self.protected {
            for form in [
                p.clone(),
                format!("*/{p}"),
                format!("{p}/*"),
                format!("*/{p}/*"),
            ] {
                push(format!("--exclude={form}"));
            }
        }
        for g in &self.editable {
            push(format!("--include={g}"));
        }
        out
    }

    /// A bash snippet for the SWE-bench `eval_script`, run after the harness applied the
    /// model patch at the repository root: every path changed since `base` that
    /// [`Grading::allows`] refuses (or in `hidden`) is put back as it is at `base` (a new one
    /// removed), and named.
    pub fn shell_keep_sources(&self, base: &str, hidden: &[String]) -> String {
        let q = shell_quote;
        let mut protected: Vec<String> = self
            .protected
            .iter()
            .filter(|p| !p.contains(['|', ')', '(', ' ', '\'', '"', ';', '&', '$', '`']))
            .map(|p| format!("*/{p}/*"))
            .collect();
        if protected.is_empty() {
            protected.push("//".into());
        }
        let exact: Vec<String> = self.files.iter().chain(hidden).map(|f| q(f)).collect();
        let editable: Vec<String> = self
            .editable
            .iter()
            .filter(|p| !p.contains(['|', ')', '(', ' ', '\'', '"', ';', '&', '$', '`']))
            .cloned()
            .collect();
        let editable_case = if editable.is_empty() {
            "keep=1".to_string()
        } else {
            format!(
                "case \"$f\" in {}) keep=1 ;; *) keep=0 ;; esac",
                editable.join("|")
            )
        };
        format!(
            "git -c core.quotepath=off add -A\n\
             git -c core.quotepath=off diff --cached --name-only -z --no-renames {base} | \
             while IFS= read -r -d '' f; do\n  \
             keep=0\n  \
             case \"$f\" in {exact}) ;; *) case \"/$f/\" in {protected}) ;; *) {editable_case} ;; esac ;; esac\n  \
             if [ \"$keep\" = 0 ]; then\n    \
             echo \"swe-forge: not graded (outside the task's source files): $f\"\n    \
             git checkout -q {base} -- \"$f\" 2>/dev/null || rm -rf -- \"$f\"\n  \
             fi\n\
             done\n\
             git reset -q\n",
            base = q(base),
            exact = if exact.is_empty() { "//".to_string() } else { exact.join("|") },
            protected = protected.join("|"),
        )
    }

    /// `diff` with only the sections every path of which is allowed (a rename from a test
    /// file to a source file is left out whole); `hidden`: more files to protect (the files
    /// `test_patch` touches).
    pub fn filter(&self, diff: &str, hidden: &[String]) -> Filtered {
        let mut out = Filtered::default();
        for section in crate::patch::sections(diff) {
            let ok = section
                .paths()
                .iter()
                .all(|p| self.allows(p) && !hidden.iter().any(|h| h == p));
            if ok {
                out.patch.push_str(&section.text);
            } else {
                for p in section.paths() {
                    if !out.dropped.iter().any(|d| d == p) {
                        out.dropped.push(p.to_string());
                    }
                }
            }
        }
        out
    }
}

/// The files of `ids` (`file_of` maps an id to its file), in the order of `suite_order` (the
/// whole suite's order of files); files it does not name follow, sorted.
pub fn files_in_order<'a>(
    ids: impl IntoIterator<Item = &'a String>,
    suite_order: &[String],
    file_of: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let wanted: BTreeSet<String> = ids.into_iter().filter_map(|id| file_of(id)).collect();
    let mut out: Vec<String> = suite_order
        .iter()
        .filter(|f| wanted.contains(*f))
        .cloned()
        .collect();
    for f in &wanted {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out
}

/// The configuration file pytest reads at `root`, in pytest's own order of precedence
/// (`pytest.ini`, `.pytest.ini`, `pyproject.toml` with `[tool.pytest.ini_options]`,
/// `tox.ini` with `[pytest]`, `setup.cfg` with `[tool:pytest]`).
pub fn pytest_config(root: &Path) -> Option<ConfigFile> {
    let candidates: [(&str, Option<&str>); 5] = [
        ("pytest.ini", None),
        (".pytest.ini", None),
        ("pyproject.toml", Some("[tool.pytest.ini_options]")),
        ("tox.ini", Some("[pytest]")),
        ("setup.cfg", Some("[tool:pytest]")),
    ];
    for (name, section) in candidates {
        let Ok(bytes) = std::fs::read(root.join(name)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if section.is_none_or(|s| text.lines().any(|l| l.trim() == s)) {
            return Some(ConfigFile {
                path: name.to_string(),
                blake3: blake3::hash(&bytes).to_hex().to_string(),
            });
        }
    }
    None
}

/// Run `grading` on the worker's tree: its files, whole, in its order. `tests`: the ids the
/// caller reads of the run (absent ones are MISSING).
pub fn run(
    runner: &dyn TestRunner,
    worker: &mut dyn Worker,
    label: &str,
    grading: &Grading,
    tests: &[String],
    budget: RunBudget,
) -> Result<Run, RunnerError> {
    runner.run_grading(worker, label, grading, tests, budget)
}

/// Runs of grading commands on trees, per (tree, command), shared by a seed's workers: the
/// evidence of a check whose tree and command were already run.
#[derive(Default)]
pub struct GradedTrees {
    runs: Mutex<HashMap<(String, String), Vec<Run>>>,
}

impl GradedTrees {
    pub fn get(&self, tree: &str, grading: &Grading) -> Option<Vec<Run>> {
        self.runs
            .lock()
            .expect("graded trees")
            .get(&(tree.to_string(), grading.key()))
            .cloned()
    }

    pub fn put(&self, tree: &str, grading: &Grading, runs: Vec<Run>) {
        self.runs
            .lock()
            .expect("graded trees")
            .insert((tree.to_string(), grading.key()), runs);
    }
}

/// The most tests, and bytes of their names, a grading command names; past either it runs
/// their files (a grader's script is one shell argument, at most 128 KiB).
pub const MAX_NAMED_TESTS: usize = 1000;
pub const MAX_NAMED_BYTES: usize = 64 * 1024;

/// The tests a grading command runs when a candidate's covering tests are more than `max`
/// (a bug that every test runs, in code the whole suite imports or sets up): the tests that
/// failed in screening, always, then covering tests up to `max` in all: first those in the
/// failing tests' files, then the others, file by file in the suite's order (`order`: the
/// test files as the whole suite runs them; a file it lacks comes last), each file's by id.
/// The choice depends on nothing measured (no duration), so every run of the protocol, fast
/// or full, picks the same tests. A candidate's grading command then costs about `max` tests
/// per run rather than the whole suite; what it no longer guards (regressions only the other
/// covering tests would catch) is what `bench peer` reports as `regressions`.
pub fn bounded_scope(
    covering: &[String],
    failures: &BTreeSet<String>,
    order: &[String],
    file_of: &dyn Fn(&str) -> String,
    max: usize,
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = failures.clone();
    let failing_files: BTreeSet<String> = failures.iter().map(|t| file_of(t)).collect();
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let mut rest: Vec<(bool, usize, &String)> = covering
        .iter()
        .filter(|t| !out.contains(*t))
        .map(|t| {
            let file = file_of(t);
            (
                !failing_files.contains(&file),
                rank.get(file.as_str()).copied().unwrap_or(usize::MAX),
                t,
            )
        })
        .collect();
    rest.sort();
    for (_, _, t) in rest {
        if out.len() >= max {
            break;
        }
        out.insert(t.clone());
    }
    out
}

/// The most covering tests a grading command runs by default (`--grading-max-tests`); past
/// it, [`bounded_scope`].
pub const GRADING_MAX_TESTS: usize = 100;

/// What a candidate's grading command runs (`--grading-scope`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The tests that execute the mutated lines (when none does, those that failed in
    /// screening), by name, where the runner can name tests (pytest); elsewhere `files`.
    #[default]
    Tests,
    /// The files of those tests, whole.
    Files,
    /// Every file of the suite: every regression guarded, at a whole suite's cost per run.
    Suite,
}

/// What a candidate's grading command is made from.
pub struct GradingContext<'a> {
    pub toolchain: &'a dyn Toolchain,
    /// The clean checkout: the configuration the runner reads is read here.
    pub root: &'a Path,
    /// The seed's test command.
    pub test_command: &'a str,
    /// `--grading-scope`.
    pub scope: Scope,
    pub graded_trees: &'a GradedTrees,
    /// The repository's test files (a toolchain maps some ids to files with them: Java's).
    pub test_files: &'a [String],
}

impl GradingContext<'_> {
    /// The file a test id runs in; the id itself where the toolchain cannot tell (the
    /// command then names the test, which is what such a runner runs).
    fn file_of(&self, id: &str) -> String {
        self.toolchain
            .test_file(id, self.test_files)
            .unwrap_or_else(|| id.to_string())
    }

    /// The grading command over `scope` and `added` (tests a test patch adds): by
    /// [`Scope`], those tests by name, their files, or every stable test's file; files in
    /// the suite's order.
    pub fn grading_for(
        &self,
        scope: &BTreeSet<String>,
        baseline: &Baseline,
        added: &[String],
    ) -> Grading {
        self.grading_in(self.scope, scope, baseline, added)
    }

    /// [`GradingContext::grading_for`] with `kind` instead of the run's `--grading-scope`.
    pub fn grading_in(
        &self,
        kind: Scope,
        scope: &BTreeSet<String>,
        baseline: &Baseline,
        added: &[String],
    ) -> Grading {
        let file_of = |id: &str| Some(self.file_of(id));
        let ids: Vec<&String> = if kind == Scope::Suite {
            baseline.stable_pass.iter().chain(added).collect()
        } else {
            scope.iter().chain(added).collect()
        };
        let files = files_in_order(ids.iter().copied(), &baseline.suite_order, &file_of);
        let grading = self.toolchain.grading(self.root, self.test_command, files);
        if kind != Scope::Tests || !self.toolchain.grades_tests_by_name() {
            return grading;
        }
        // By name: file by file in the suite's order, each file's tests sorted.
        let mut tests: Vec<String> = Vec::new();
        for f in &grading.files {
            let mut mine: Vec<String> = ids
                .iter()
                .filter(|id| self.file_of(id) == *f)
                .map(|id| id.to_string())
                .collect();
            mine.sort();
            mine.dedup();
            tests.extend(mine);
        }
        // A command line that would name too many tests (a bug every test runs) runs their
        // files: one shell argument holds at most 128 KiB.
        let length: usize = tests.iter().map(|t| t.len() + 3).sum();
        if tests.len() > MAX_NAMED_TESTS || length > MAX_NAMED_BYTES {
            return grading;
        }
        grading.with_tests(tests)
    }

    /// The tests a run of `grading` is read for: the stable tests it names (of its files,
    /// where it runs files), and `added`.
    pub fn graded_tests(
        &self,
        grading: &Grading,
        baseline: &Baseline,
        added: &[String],
    ) -> Vec<String> {
        let mut out: Vec<String> = baseline
            .stable_pass
            .iter()
            .filter(|t| {
                if grading.tests.is_empty() {
                    grading.runs_file(&self.file_of(t))
                } else {
                    grading.tests.contains(t)
                }
            })
            .cloned()
            .collect();
        for t in added {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
