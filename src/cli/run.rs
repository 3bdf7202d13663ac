//! `run` (and `verify`): the pipeline, its Ctrl-C handling, its output and exit code.

use super::args::RunArgs;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;
use swe_forge::baseline::BaselineConfig;
use swe_forge::candidate::Budget;
use swe_forge::pipeline::{self, RunConfig};
use swe_forge::sandbox::Limits;
use swe_forge::timeouts::TimeoutPolicy;
use swe_forge::verify::VerifyConfig;

pub(crate) fn run(
    args: RunArgs,
    cache: PathBuf,
    candidates: Option<PathBuf>,
    quiet: bool,
) -> Result<i32> {
    let summary = run_pipeline(&args, cache, candidates, quiet, false)?;
    print_run(&args, &summary)
}

/// `run`'s pipeline, with its Ctrl-C handling.
pub(crate) fn run_pipeline(
    args: &RunArgs,
    cache: PathBuf,
    candidates: Option<PathBuf>,
    quiet: bool,
    peer: bool,
) -> Result<pipeline::RunSummary> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cfg = RunConfig {
        manifest: args.manifest.clone(),
        out: args.out.clone(),
        cache,
        sandbox: args.sandbox,
        jobs,
        budget: Budget {
            seed: args.seed,
            max_total: Some(args.max_candidates),
            max_per_function: Some(args.max_per_function),
            max_per_mutator: args.max_per_mutator,
            category_mix: args.category_mix.clone().unwrap_or_default(),
        },
        baseline: BaselineConfig {
            repeats: args.baseline_repeats,
            timeout: Duration::from_secs(args.baseline_timeout),
            timeouts: TimeoutPolicy {
                min_timeout: Duration::from_secs(args.min_timeout),
                ..TimeoutPolicy::default()
            },
        },
        verify: VerifyConfig {
            repeats: args.repeats,
            recheck_identical: args.recheck_identical,
            scope: if args.full_repeats {
                swe_forge::grading::Scope::Suite
            } else {
                args.grading_scope
            },
            min_wall: Duration::from_secs(args.min_timeout),
            max_graded_tests: args.grading_max_tests,
        },
        limits: Limits {
            memory_bytes: args.memory_limit << 20,
            pids: args.pids_limit,
            storage_bytes: None,
        },
        mutators_dir: args.mutators.clone(),
        only: args.only.clone(),
        candidates_file: candidates,
        progress: !args.json && !quiet,
        synthesize: !args.no_synthesis,
        deep_synthesis: args.deep_synthesis,
        tracer_budget: args.tracer_budget,
        synthesis_budget: (args.synthesis_budget > 0)
            .then(|| std::time::Duration::from_secs(args.synthesis_budget)),
        visible_tests: args.visible_tests,
        task_images: !args.no_task_images,
        peer,
        runner: args.runner,
        issue_llm: args.issue_llm.clone().map(|endpoint| {
            let mut c = swe_forge::issue_llm::LlmConfig::new(endpoint);
            c.model = args.issue_llm_model.clone();
            c.api_key = std::env::var("SWE_FORGE_ISSUE_LLM_KEY")
                .ok()
                .filter(|k| !k.trim().is_empty());
            c.timeout = Duration::from_secs(args.issue_llm_timeout.max(1));
            c
        }),
        undecided_only: false,
        shard: args.shard,
    };
    ctrlc::set_handler(|| {
        if pipeline::STOP.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: give up at once, but leave no container behind.
            let removed = swe_forge::sandbox::docker::cleanup_active_runs();
            if removed > 0 {
                eprintln!("removed {removed} container(s)");
            }
            std::process::exit(130);
        }
        eprintln!("interrupted: finishing the candidates in flight (Ctrl-C again to quit now)");
    })
    .context("installing the Ctrl-C handler")?;
    Ok(pipeline::run(&cfg)?)
}

/// `run`'s output and exit code.
fn print_run(args: &RunArgs, summary: &pipeline::RunSummary) -> Result<i32> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        for s in &summary.seeds {
            let rejected: Vec<String> =
                s.rejected.iter().map(|(r, n)| format!("{r} {n}")).collect();
            println!(
                "{:<16} {:<9} candidates {:>4}/{:<5} killed {:>4}  accepted {:>4}  rejected: {}{}",
                s.seed,
                s.status,
                s.sampled,
                s.enumerated,
                s.killed,
                s.accepted,
                if rejected.is_empty() {
                    "-".to_string()
                } else {
                    rejected.join(", ")
                },
                if s.detail.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", s.detail)
                },
            );
            if !s.issue_rewrite.is_empty() {
                let counts: Vec<String> = s
                    .issue_rewrite
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect();
                println!("{:<16} issue texts: {}", "", counts.join(", "));
            }
            if let Some(d) = &s.degraded {
                for (file, error) in &d.errors {
                    println!("{:<16} uncollected: {file}: {error}", "");
                }
                for (test, error) in &d.failures {
                    println!("{:<16} failing on the clean code: {test}: {error}", "");
                }
            }
        }
        println!(
            "{} tasks in {} ({:.1}s, sandbox {})",
            summary.tasks,
            summary.out.join("tasks.jsonl").display(),
            summary.seconds,
            summary.sandbox
        );
    }
    if summary.interrupted {
        return Ok(130);
    }
    if !summary.seeds.is_empty() && summary.seeds.iter().all(|s| !s.ran()) {
        return Ok(3);
    }
    Ok(0)
}
