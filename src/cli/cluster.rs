//! `cluster slurm|k8s`: a sharded run written out for a scheduler (and, for Slurm, submitted).
//! The options of `run` given here are passed through to every shard as they were typed.

use super::args::{Cli, RunArgs};
use anyhow::{bail, Context, Result};
use clap::{ArgAction, Args, CommandFactory, Subcommand};
use std::path::{Path, PathBuf};
use swe_forge::cluster::{k8s, slurm, Plan};
use swe_forge::pipeline::SandboxChoice;

#[derive(Subcommand)]
pub(crate) enum ClusterCommand {
    /// Slurm: OUT/slurm/run.sbatch (an array job, task K runs `run --shard K/N` into
    /// OUT/shard-K), OUT/slurm/merge.sbatch (`merge` into OUT/merged, submitted with
    /// --dependency=afterok on the array) and OUT/slurm/submit.sh. The cache (--cache or
    /// SWE_FORGE_CACHE) is passed to every job: it must be on storage every node sees, as OUT.
    Slurm(SlurmArgs),
    /// Kubernetes: OUT/k8s/00-pvc.yaml (a volume for the run's directory and the cache),
    /// 10-shards.yaml (an Indexed Job: the pod with completion index K runs shard K) and
    /// 20-merge.yaml (a Job that waits for every shard's summary.json, then merges). See
    /// docs/cluster.md for how pods reach a container engine.
    K8s(K8sArgs),
}

#[derive(Args)]
pub(crate) struct SlurmArgs {
    /// Shards: array tasks 0..N-1.
    #[arg(long, value_name = "N")]
    pub(crate) shards: usize,
    /// Submit with `sbatch --parsable` (the array, then the merge depending on it) and print
    /// both job ids.
    #[arg(long)]
    pub(crate) submit: bool,
    /// The swe-forge executable the jobs call (default: this one's absolute path).
    #[arg(long = "swe-forge", value_name = "PATH")]
    pub(crate) swe_forge: Option<PathBuf>,
    /// The jobs' name (the merge job is NAME-merge).
    #[arg(long, default_value = "swe-forge")]
    pub(crate) job_name: String,
    #[arg(long)]
    pub(crate) partition: Option<String>,
    /// Time limit of one array task and of the merge (`2:00:00`).
    #[arg(long)]
    pub(crate) time: Option<String>,
    /// CPUs of one array task; the run's --jobs defaults to it (else to 1).
    #[arg(long)]
    pub(crate) cpus_per_task: Option<u32>,
    /// Memory of one array task (`8G`).
    #[arg(long)]
    pub(crate) mem: Option<String>,
    #[arg(long)]
    pub(crate) account: Option<String>,
    #[arg(long)]
    pub(crate) qos: Option<String>,
    /// At most M array tasks at once (`--array=0-(N-1)%M`).
    #[arg(long, value_name = "M")]
    pub(crate) max_parallel: Option<usize>,
    /// A further sbatch option for both jobs (repeatable), e.g. `--sbatch-option=--constraint=avx2`.
    #[arg(
        long = "sbatch-option",
        value_name = "OPTION",
        allow_hyphen_values = true
    )]
    pub(crate) sbatch_options: Vec<String>,
    /// Load Docker images from DIR before each shard and save what it built after (`image
    /// load|save`), so shards on fresh nodes reuse them (default: OUT/images, unless
    /// `--sandbox local`).
    #[arg(long, value_name = "DIR", conflicts_with = "no_images")]
    pub(crate) image_dir: Option<PathBuf>,
    /// No `image load|save` around the shards.
    #[arg(long)]
    pub(crate) no_images: bool,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Args)]
pub(crate) struct K8sArgs {
    /// Shards: the Indexed Job's completions.
    #[arg(long, value_name = "N")]
    pub(crate) shards: usize,
    /// Shard pods at once (default: all N).
    #[arg(long)]
    pub(crate) parallelism: Option<usize>,
    /// The image the pods run (swe-forge on PATH, plus what the sandbox needs).
    #[arg(long, default_value = "swe-forge:latest")]
    pub(crate) image: String,
    #[arg(long, default_value = "default")]
    pub(crate) namespace: String,
    /// Prefix of the objects' names (NAME-data, NAME-shards, NAME-merge); also the run's
    /// directory on the volume (MOUNT/NAME).
    #[arg(long, default_value = "swe-forge")]
    pub(crate) name: String,
    /// The volume's storage class (default: the cluster's); it needs ReadWriteMany when shards
    /// land on several nodes.
    #[arg(long)]
    pub(crate) storage_class: Option<String>,
    #[arg(long, default_value = "50Gi")]
    pub(crate) storage: String,
    #[arg(long, default_value = "ReadWriteMany")]
    pub(crate) access_mode: String,
    /// Where the pods mount the volume.
    #[arg(long, default_value = "/data")]
    pub(crate) mount: String,
    /// Failed shard pods tolerated (all indexes together).
    #[arg(long, default_value_t = 6)]
    pub(crate) backoff_limit: u32,
    /// CPU request of a shard pod.
    #[arg(long)]
    pub(crate) cpu: Option<String>,
    /// Memory request and limit of a shard pod.
    #[arg(long)]
    pub(crate) memory: Option<String>,
    /// Mount the node's Docker socket into the shard pods (for `--sandbox docker`): root on the
    /// node, see docs/cluster.md.
    #[arg(long)]
    pub(crate) docker_socket: bool,
    /// Seconds the merge waits for the shards.
    #[arg(long, default_value_t = 7 * 24 * 3600)]
    pub(crate) wait_timeout: u64,
    /// The swe-forge executable in the image.
    #[arg(long = "swe-forge", value_name = "PATH", default_value = "swe-forge")]
    pub(crate) swe_forge: String,
    /// Load and save Docker images in this directory (on the volume) around each shard
    /// (default: MOUNT/NAME/images with --docker-socket, else none).
    #[arg(long, value_name = "DIR")]
    pub(crate) image_dir: Option<String>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// Ids of `RunArgs`' options that are not passed through: chosen per shard, or this command's.
const NOT_PASSED: [&str; 4] = ["manifest", "out", "shard", "json"];

/// The run options given on this command line, as words for `run` (`--name=value`, a flag as
/// `--name`), in `RunArgs`' order. Read from the command line again, so every option of `run`,
/// present and future, passes through as typed.
fn run_words(sub: &str) -> Result<Vec<String>> {
    let m = Cli::command().get_matches();
    let m = m
        .subcommand_matches("cluster")
        .and_then(|m| m.subcommand_matches(sub))
        .context("the command line has no `cluster` subcommand")?;
    let spec = RunArgs::augment_args(clap::Command::new("run"));
    let mut words = Vec::new();
    for arg in spec.get_arguments() {
        let id = arg.get_id().as_str();
        if NOT_PASSED.contains(&id) || arg.is_positional() {
            continue;
        }
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let long = arg
            .get_long()
            .with_context(|| format!("run option `{id}` has no long name"))?;
        match arg.get_action() {
            ArgAction::SetTrue => words.push(format!("--{long}")),
            ArgAction::Count => {
                let n = m.get_count(id);
                words.extend((0..n).map(|_| format!("--{long}")));
            }
            _ => {
                for occurrence in m.get_raw_occurrences(id).into_iter().flatten() {
                    for v in occurrence {
                        words.push(format!("--{long}={}", v.to_string_lossy()));
                    }
                }
            }
        }
    }
    Ok(words)
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("the absolute path of {}", p.display()))
}

pub(crate) fn cluster(what: ClusterCommand, cache: PathBuf) -> Result<i32> {
    match what {
        ClusterCommand::Slurm(a) => slurm_cmd(a, cache),
        ClusterCommand::K8s(a) => k8s_cmd(a),
    }
}

fn slurm_cmd(a: SlurmArgs, cache: PathBuf) -> Result<i32> {
    if a.run.shard.is_some() {
        bail!("--shard is chosen per array task: give --shards N");
    }
    let out = absolute(&a.run.out)?;
    let swe_forge = match &a.swe_forge {
        Some(p) => absolute(p)?,
        None => std::env::current_exe()
            .context("the path of this executable")?
            .canonicalize()
            .context("the path of this executable")?,
    };
    let plan = Plan {
        swe_forge: swe_forge.display().to_string(),
        manifest: a
            .run
            .manifest
            .as_deref()
            .map(absolute)
            .transpose()?
            .map(|p| p.display().to_string()),
        shards: a.shards,
        out: out.display().to_string(),
        cache: Some(absolute(&cache)?.display().to_string()),
        run_args: run_words("slurm")?,
        image_dir: match (&a.image_dir, a.no_images, a.run.sandbox) {
            (Some(d), _, _) => Some(absolute(d)?.display().to_string()),
            (None, true, _) | (None, _, SandboxChoice::Local) => None,
            (None, false, _) => Some(out.join("images").display().to_string()),
        },
    };
    let opts = slurm::SlurmOptions {
        job_name: a.job_name,
        partition: a.partition,
        time: a.time,
        cpus_per_task: a.cpus_per_task,
        mem: a.mem,
        account: a.account,
        qos: a.qos,
        max_parallel: a.max_parallel,
        chdir: Some(
            std::env::current_dir()
                .context("the working directory")?
                .display()
                .to_string(),
        ),
        extra: a.sbatch_options,
    };
    let written = slurm::write(&plan, &opts, &out.join("slurm"))?;
    let submitted = if a.submit {
        let s = slurm::submit("sbatch", &written)?;
        tracing::info!(array = %s.array_job, merge = %s.merge_job, "submitted");
        Some(s)
    } else {
        None
    };
    if a.run.json {
        let doc = serde_json::json!({
            "engine": "slurm",
            "shards": plan.shards,
            "out": plan.out,
            "merged": plan.merged_out(),
            "cache": plan.cache,
            "scripts": written,
            "array_job": submitted.as_ref().map(|s| &s.array_job),
            "merge_job": submitted.as_ref().map(|s| &s.merge_job),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "wrote {} and {} ({} shards into {}/shard-K, merged into {})",
            written.run.display(),
            written.merge.display(),
            plan.shards,
            plan.out,
            plan.merged_out()
        );
        match &submitted {
            Some(s) => println!(
                "submitted: array job {}, merge job {} (after the array succeeds)",
                s.array_job, s.merge_job
            ),
            None => println!("submit with: {}", written.submit.display()),
        }
    }
    Ok(0)
}

fn k8s_cmd(a: K8sArgs) -> Result<i32> {
    if a.run.shard.is_some() {
        bail!("--shard is chosen per pod: give --shards N");
    }
    let mount = a.mount.trim_end_matches('/').to_string();
    let out = format!("{mount}/{}", a.name);
    let image_dir = match (a.image_dir, a.docker_socket) {
        (Some(d), _) => Some(d),
        (None, true) => Some(format!("{out}/images")),
        (None, false) => None,
    };
    let plan = Plan {
        swe_forge: a.swe_forge,
        // As the pods see it (in the image or on the volume).
        manifest: a.run.manifest.as_ref().map(|p| p.display().to_string()),
        shards: a.shards,
        out,
        cache: Some(format!("{mount}/cache")),
        run_args: run_words("k8s")?,
        image_dir,
    };
    let opts = k8s::K8sOptions {
        name: a.name,
        namespace: a.namespace,
        image: a.image,
        parallelism: a.parallelism.unwrap_or(a.shards),
        backoff_limit: a.backoff_limit,
        storage_class: a.storage_class,
        storage: a.storage,
        access_mode: a.access_mode,
        mount,
        cpu: a.cpu,
        memory: a.memory,
        docker_socket: a.docker_socket,
        wait_timeout: a.wait_timeout,
        ..Default::default()
    };
    if opts.docker_socket {
        tracing::warn!(
            "the shard pods mount the node's Docker socket: root on the node (docs/cluster.md)"
        );
    }
    let dir = absolute(&a.run.out)?.join("k8s");
    let written = k8s::write(&plan, &opts, &dir)?;
    if a.run.json {
        let doc = serde_json::json!({
            "engine": "k8s",
            "shards": plan.shards,
            "out": plan.out,
            "merged": plan.merged_out(),
            "cache": plan.cache,
            "manifests": written.files,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for f in &written.files {
            println!("wrote {}", f.display());
        }
        println!(
            "apply with: kubectl apply -f {}/   (shards into {}/shard-K on the volume, merged into {})",
            written.dir.display(),
            plan.out,
            plan.merged_out()
        );
    }
    Ok(0)
}
