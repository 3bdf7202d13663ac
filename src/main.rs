//! The swe-forge command line: parse, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 error (bad manifest, I/O, …); 2 usage error; 3 `run` finished but
//! no seed could be verified (every seed failed or was rejected); 4 `audit` found an invalid
//! task, or `export` exported no task; 5 `run` refused to resume into an output directory whose
//! stored evidence was made with another set-up; 130 interrupted (resumable).

mod cli;

use anyhow::Result;
use clap::Parser;
use cli::args::{BenchCommand, Cli, Command, ImageCommand};
use cli::{audit, bench, export, image, import, merge, mutate, report, run, serve, train};
use cli::{cluster, status};
use std::path::PathBuf;

fn default_cache() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(x).join("swe-forge");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache/swe-forge");
    }
    std::env::temp_dir().join("swe-forge-cache")
}

fn main() {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code(&e)
        }
    };
    std::process::exit(code);
}

/// The exit code of an error: 5 for a refused resume, else 1.
fn exit_code(e: &anyhow::Error) -> i32 {
    use swe_forge::pipeline::PipelineError;
    match e.downcast_ref::<PipelineError>() {
        Some(PipelineError::ResumeRefused(_)) => 5,
        _ => 1,
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only on a terminal: `run 2> log` writes a plain log.
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

fn dispatch(cli: Cli) -> Result<i32> {
    let cache = cli.cache.clone().unwrap_or_else(default_cache);
    match cli.command {
        Command::Run(args) => run::run(args, cache, None, cli.quiet),
        Command::Verify {
            run: args,
            candidates,
        } => run::run(args, cache, Some(candidates), cli.quiet),
        Command::Import { manifest, json } => import::import(&manifest, &cache, json),
        Command::Mutate {
            path,
            lang,
            mutators,
            include_tests,
            json,
        } => mutate::mutate(&path, lang, mutators.as_deref(), include_tests, json),
        Command::Image {
            what: ImageCommand::Bootstrap { lang, force, json },
        } => image::bootstrap(cache, lang, force, json),
        Command::Image {
            what: ImageCommand::Tasks { tasks, json },
        } => image::tasks(tasks, cache, json),
        Command::Image {
            what: ImageCommand::Save { dir, pick },
        } => image::save(dir, pick),
        Command::Image {
            what: ImageCommand::Load { dir, pick },
        } => image::load(dir, pick),
        Command::Train(a) => train::train(a, cache, cli.quiet),
        Command::Audit(a) => audit::audit(a, cache, cli.quiet),
        Command::Serve(a) => serve::serve(a, cache),
        Command::Merge {
            inputs,
            out,
            allow_conflicts,
            json,
        } => merge::merge(&inputs, &out, allow_conflicts, json),
        Command::Report { out, json } => report::report(out, json),
        Command::Cluster { what } => cluster::cluster(what, cache),
        Command::Status(a) => status::status(a),
        Command::Export {
            out,
            tasks,
            to,
            format,
            json,
        } => export::export(out, tasks, to, format, json, cache),
        Command::Bench {
            what: BenchCommand::Verify { run: args },
        } => bench::verify(args, cache, cli.quiet),
        Command::Bench {
            what: BenchCommand::Mutate { dir, lang, json },
        } => bench::mutate(dir, lang, json),
        Command::Bench {
            what: BenchCommand::Peer { run: args },
        } => bench::peer(args, cache, cli.quiet),
    }
}
