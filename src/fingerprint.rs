//! A seed's set-up fingerprint: the options and environment that decide its outcomes (sandbox,
//! repeats, timeouts, limits, runner, the resolved install and test commands, the image…), as
//! a map from the option's name as the user writes it (`--repeats`, `install:`) to its value.
//! It is stored beside the seed's baseline, and a resumed run whose set-up differs is refused,
//! so that a record's evidence (`verification.reused` included) comes from one set-up only.
//!
//! Left out on purpose: what only chooses which candidates are drawn (`--max-candidates`,
//! `--seed`, `--only`, `--shard`, `--mutators`, the budgets per function, mutator and
//! category), how much runs at once (`--jobs`), wall-clock budgets that are already
//! time-dependent (`--synthesis-budget`, `--tracer-budget`), and what only shapes the outputs
//! (`--json`, `--no-task-images`, `--issue-llm`).

use crate::pipeline::RunConfig;
use crate::repo::Repo;
use crate::runner::resident::RunnerMode;
use crate::sandbox::SandboxKind;
use crate::toolchain::ToolchainId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Option name → value; compared key by key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fingerprint(BTreeMap<String, Value>);

/// One option whose value differs between the stored run and this one (`None`: not set).
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub option: String,
    pub stored: Option<Value>,
    pub current: Option<Value>,
}

/// Why a run may not resume into an output directory's state.
#[derive(Debug, thiserror::Error)]
pub enum ResumeRefused {
    /// The seed's stored evidence was made with another set-up.
    #[error(
        "{}: seed `{seed}` was run there with another set-up, so its baseline and decided \
         candidates cannot be reused:\n{}\nstart a fresh --out (or resume with the stored values)",
        out.display(),
        list(differences)
    )]
    Mismatch {
        out: PathBuf,
        seed: String,
        differences: Vec<Difference>,
    },
    /// The seed's stored evidence predates fingerprints: its set-up is unknown.
    #[error(
        "{}: seed `{seed}` has a baseline or decided candidates from a run that predates set-up \
         fingerprints, so it cannot be told whether they match this run's options; start a \
         fresh --out",
        out.display()
    )]
    Unfingerprinted { out: PathBuf, seed: String },
}

fn list(differences: &[Difference]) -> String {
    differences
        .iter()
        .map(|d| format!("  {d}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `install:` is named as the manifest writes it, `--repeats` as the command line does.
        let colon = if self.option.ends_with(':') { "" } else { ":" };
        write!(
            f,
            "{}{colon} {} stored, {} now",
            self.option,
            shown(self.stored.as_ref()),
            shown(self.current.as_ref())
        )
    }
}

/// A value as the user would write it: strings bare (in backticks when they hold spaces),
/// anything else as JSON; `(unset)` where the run had none.
fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "(unset)".into(),
        Some(Value::String(s)) if s.is_empty() || s.contains(char::is_whitespace) => {
            format!("`{s}`")
        }
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

impl Fingerprint {
    /// The run-wide part: the options of `cfg` that decide outcomes, and the sandbox used.
    pub fn of_run(cfg: &RunConfig, sandbox: SandboxKind) -> Fingerprint {
        let mut f = Fingerprint::default();
        f.set("--sandbox", sandbox.as_str());
        f.set("--repeats", cfg.verify.repeats);
        f.set("--recheck-identical", cfg.verify.recheck_identical);
        f.set(
            "--grading-scope",
            match cfg.verify.scope {
                crate::grading::Scope::Tests => "tests",
                crate::grading::Scope::Files => "files",
                crate::grading::Scope::Suite => "suite",
            },
        );
        f.set("--grading-max-tests", cfg.verify.max_graded_tests);
        f.set("--baseline-repeats", cfg.baseline.repeats);
        f.set("--baseline-timeout", cfg.baseline.timeout.as_secs());
        f.set("--min-timeout", cfg.baseline.timeouts.min_timeout.as_secs());
        f.set("--memory-limit", cfg.limits.memory_bytes >> 20);
        f.set("--pids-limit", cfg.limits.pids);
        f.set(
            "--runner",
            match cfg.runner {
                RunnerMode::Resident => "resident",
                RunnerMode::Fresh => "fresh",
            },
        );
        f.set("--no-synthesis", !cfg.synthesize);
        f.set("--deep-synthesis", cfg.synthesize && cfg.deep_synthesis);
        f.set("--visible-tests", cfg.visible_tests);
        f
    }

    /// Add the seed's part known once it is imported: its commit, the install command (the
    /// manifest's `install:` or the inferred one), the test command as it runs, the import
    /// path and the toolchain.
    pub fn with_seed(mut self, repo: &Repo, test_command: &str, toolchain: ToolchainId) -> Self {
        self.set("commit", repo.commit.as_str());
        self.set(
            "install:",
            repo.profile
                .install_command
                .clone()
                .map_or(Value::Null, Value::String),
        );
        self.set("test:", test_command);
        self.set("python path", repo.profile.python_path.clone());
        self.set("toolchain", toolchain.as_str());
        self
    }

    /// Add the environment's image (Docker: its tag and id; nothing for the local sandbox).
    pub fn with_image(mut self, tag: Option<String>, id: Option<String>) -> Self {
        if let Some(tag) = tag {
            self.set("image", tag);
        }
        if let Some(id) = id {
            self.set("image id", id);
        }
        self
    }

    fn set(&mut self, option: &str, value: impl Into<Value>) {
        self.0.insert(option.to_string(), value.into());
    }

    /// The value stored for an option.
    pub fn get(&self, option: &str) -> Option<&Value> {
        self.0.get(option)
    }

    /// Every option whose value differs between `self` (stored) and `current`, over the
    /// options either names, in name order.
    pub fn differences(&self, current: &Fingerprint) -> Vec<Difference> {
        let mut names: Vec<&String> = self.0.keys().chain(current.0.keys()).collect();
        names.sort();
        names.dedup();
        self.compare(current, names)
    }

    /// Like [`differences`](Self::differences), over the options `current` names only: for a
    /// check made before the whole set-up is known.
    pub fn differences_in(&self, current: &Fingerprint) -> Vec<Difference> {
        self.compare(current, current.0.keys().collect())
    }

    fn compare(&self, current: &Fingerprint, names: Vec<&String>) -> Vec<Difference> {
        names
            .into_iter()
            .filter(|n| self.0.get(*n) != current.0.get(*n))
            .map(|n| Difference {
                option: n.clone(),
                stored: self.0.get(n).cloned(),
                current: current.0.get(n).cloned(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_cfg() -> RunConfig {
        RunConfig {
            manifest: None,
            out: "out".into(),
            cache: "cache".into(),
            sandbox: crate::sandbox::SandboxChoice::Local,
            jobs: 2,
            budget: Default::default(),
            baseline: Default::default(),
            verify: Default::default(),
            limits: Default::default(),
            mutators_dir: None,
            only: Vec::new(),
            candidates_file: None,
            progress: false,
            synthesize: true,
            deep_synthesis: false,
            synthesis_budget: None,
            tracer_budget: 1.0,
            issue_llm: None,
            undecided_only: false,
            shard: None,
            visible_tests: false,
            runner: RunnerMode::Resident,
            task_images: true,
            peer: false,
        }
    }

    fn seeded(cfg: &RunConfig, install: Option<&str>) -> Fingerprint {
        let mut repo = Repo::sample(
            "demo",
            crate::lang::Language::Python,
            "setuptools",
            "pytest",
        );
        repo.profile.install_command = install.map(str::to_string);
        repo.profile.python_path = vec!["src".into()];
        Fingerprint::of_run(cfg, SandboxKind::Local).with_seed(
            &repo,
            "python -m pytest",
            ToolchainId::PythonPytest,
        )
    }

    #[test]
    fn the_same_set_up_differs_nowhere() {
        let a = seeded(&run_cfg(), Some("pip install -e ."));
        assert!(a.differences(&a.clone()).is_empty());
    }

    #[test]
    fn sampling_parallelism_and_output_options_are_not_part_of_it() {
        let a = run_cfg();
        let mut b = run_cfg();
        b.jobs = 16;
        b.budget.max_total = Some(1000);
        b.budget.seed = 7;
        b.only = vec!["demo".into()];
        b.progress = true;
        b.task_images = false;
        b.synthesis_budget = Some(std::time::Duration::from_secs(5));
        b.shard = "0/2".parse().ok();
        let (a, b) = (seeded(&a, None), seeded(&b, None));
        assert!(a.differences(&b).is_empty(), "{:?}", a.differences(&b));
    }

    #[test]
    fn every_differing_option_is_named_with_both_values() {
        let a = run_cfg();
        let mut b = run_cfg();
        b.verify.repeats = a.verify.repeats + 2;
        b.runner = RunnerMode::Fresh;
        let stored = seeded(&a, Some("pip install -e ."));
        let current = seeded(&b, Some("pip install -e .[test]"));
        let d = stored.differences(&current);
        let names: Vec<&str> = d.iter().map(|d| d.option.as_str()).collect();
        assert_eq!(names, ["--repeats", "--runner", "install:"]);
        assert_eq!(d[0].stored, Some(Value::from(a.verify.repeats)));
        assert_eq!(d[0].current, Some(Value::from(b.verify.repeats)));
        let text = ResumeRefused::Mismatch {
            out: "out".into(),
            seed: "demo".into(),
            differences: d,
        }
        .to_string();
        assert!(text.contains("seed `demo`"), "{text}");
        assert!(
            text.contains("--runner: resident stored, fresh now"),
            "{text}"
        );
        assert!(
            text.contains("install: `pip install -e .` stored, `pip install -e .[test]` now"),
            "{text}"
        );
        assert!(text.contains("fresh --out"), "{text}");
    }

    #[test]
    fn an_option_set_on_one_side_only_differs() {
        let stored = seeded(&run_cfg(), None).with_image(Some("swe-forge/demo:1".into()), None);
        let current = seeded(&run_cfg(), Some("make deps"));
        let d = stored.differences(&current);
        let names: Vec<&str> = d.iter().map(|d| d.option.as_str()).collect();
        assert_eq!(names, ["image", "install:"]);
        assert_eq!(d[1].to_string(), "install: (unset) stored, `make deps` now");
        // Before the environment is known, only the options this run already has count.
        let d = stored.differences_in(&current);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].option, "install:");
        let early = Fingerprint::of_run(&run_cfg(), SandboxKind::Local);
        assert!(stored.differences_in(&early).is_empty());
    }

    #[test]
    fn a_sandbox_change_is_named_as_typed() {
        let stored = Fingerprint::of_run(&run_cfg(), SandboxKind::Docker);
        let current = Fingerprint::of_run(&run_cfg(), SandboxKind::Local);
        let d = stored.differences(&current);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "--sandbox: docker stored, local now");
    }

    #[test]
    fn it_round_trips_as_a_json_map() {
        let a = seeded(&run_cfg(), Some("pip install -e .")).with_image(
            Some("swe-forge/demo:abc".into()),
            Some("sha256:0123".into()),
        );
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["--repeats"], 3);
        assert_eq!(json["install:"], "pip install -e .");
        assert_eq!(json["python path"], serde_json::json!(["src"]));
        assert_eq!(json["image id"], "sha256:0123");
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, a);
    }
}
