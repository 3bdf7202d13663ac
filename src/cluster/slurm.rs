//! Slurm: a sharded run as two batch scripts — an array job whose task K runs shard K, and a
//! merge job submitted with `--dependency=afterok:<array job>` — plus `submit.sh`, and
//! [`submit`], which hands them to `sbatch`.

use super::{io, sh_quote, write_file, ClusterError, Plan};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The scheduler's side: job names and resource requests (a line is written only for what is
/// given; the cluster's defaults apply otherwise).
#[derive(Clone, Debug, Default)]
pub struct SlurmOptions {
    /// The array job's name; the merge job is NAME-merge.
    pub job_name: String,
    pub partition: Option<String>,
    /// Time limit of one array task (and of the merge), in Slurm's forms (`90`, `2:00:00`,
    /// `1-00:00:00`).
    pub time: Option<String>,
    pub cpus_per_task: Option<u32>,
    /// Memory per array task (`--mem`, e.g. `8G`).
    pub mem: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// At most this many array tasks at once (`--array=0-(N-1)%M`).
    pub max_parallel: Option<usize>,
    /// The jobs' working directory (relative paths among the run options resolve against it).
    pub chdir: Option<String>,
    /// Further sbatch options for both jobs, one option a word (`--constraint=avx2`).
    pub extra: Vec<String>,
}

/// The rendered scripts.
#[derive(Clone, Debug)]
pub struct Scripts {
    /// The array job (`run.sbatch`).
    pub run: String,
    /// The merge job (`merge.sbatch`).
    pub merge: String,
    /// Submits both with the dependency (`submit.sh`), for submitting by hand.
    pub submit: String,
}

/// Where [`write`] put the scripts.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    pub run: PathBuf,
    pub merge: PathBuf,
    pub submit: PathBuf,
    /// The jobs' output files go here (`%x-%A_%a.out`, `%x-%j.out`).
    pub logs: PathBuf,
}

/// The job ids `sbatch` answered.
#[derive(Clone, Debug, Serialize)]
pub struct Submitted {
    pub array_job: String,
    pub merge_job: String,
}

/// Render the scripts; `logs` is where the jobs' output files go.
pub fn render(plan: &Plan, opts: &SlurmOptions, logs: &str) -> Result<Scripts, ClusterError> {
    plan.validate()?;
    if opts.job_name.is_empty() || opts.job_name.contains(char::is_whitespace) {
        return Err(ClusterError::Invalid(format!(
            "the job name `{}` must be one word",
            opts.job_name
        )));
    }
    if opts.max_parallel == Some(0) {
        return Err(ClusterError::Invalid(
            "--max-parallel must be at least 1".into(),
        ));
    }
    let n = plan.shards;
    let mut array = format!("--array=0-{}", n - 1);
    if let Some(m) = opts.max_parallel {
        array.push_str(&format!("%{m}"));
    }
    let cpus = opts.cpus_per_task.map(|c| format!("--cpus-per-task={c}"));
    let run_lines = sbatch_lines(
        opts,
        &[
            format!("--job-name={}", opts.job_name),
            array,
            format!("--output={}/%x-%A_%a.out", logs),
        ],
        cpus.as_deref(),
        opts.mem.as_deref(),
    );
    let merge_lines = sbatch_lines(
        opts,
        &[
            format!("--job-name={}-merge", opts.job_name),
            format!("--output={}/%x-%j.out", logs),
        ],
        None,
        None,
    );

    let mut run = String::from("#!/bin/bash\n");
    run.push_str(&format!(
        "# swe-forge, {n} shard(s): array task K runs `swe-forge run --shard K/{n}` into \
         {out}/shard-K.\n# Written by `swe-forge cluster slurm`; submit with submit.sh beside \
         it (merge.sbatch runs after every task succeeded).\n",
        out = plan.out
    ));
    for l in &run_lines {
        run.push_str(&format!("#SBATCH {l}\n"));
    }
    run.push_str("set -euo pipefail\n");
    // `run` would start a worker per CPU of the node; the allocation is what it has.
    run.push_str(&plan.shard_lines("SLURM_ARRAY_TASK_ID", Some("\"${SLURM_CPUS_PER_TASK:-1}\"")));

    let mut merge = String::from("#!/bin/bash\n");
    merge.push_str(&format!(
        "# swe-forge: merge the {n} shard(s) of {out} into {merged}.\n# Submitted with \
         --dependency=afterok:<the array job> (submit.sh, or `cluster slurm --submit`).\n",
        out = plan.out,
        merged = plan.merged_out()
    ));
    for l in &merge_lines {
        merge.push_str(&format!("#SBATCH {l}\n"));
    }
    merge.push_str("set -euo pipefail\n");
    merge.push_str(&format!("swe_forge={}\n", sh_quote(&plan.swe_forge)));
    merge.push_str(&plan.merge_lines());

    let submit = "#!/bin/bash\n\
         # Submit the shards, then the merge once every shard succeeded; prints both job ids.\n\
         set -euo pipefail\n\
         here=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n\
         array=$(sbatch --parsable \"$here/run.sbatch\" | cut -d';' -f1)\n\
         merge=$(sbatch --parsable --dependency=\"afterok:$array\" --kill-on-invalid-dep=yes \
         \"$here/merge.sbatch\" | cut -d';' -f1)\n\
         echo \"array job $array, merge job $merge\"\n"
        .to_string();
    Ok(Scripts { run, merge, submit })
}

/// The `#SBATCH` options of a job: `first`, then the resources that were given.
fn sbatch_lines(
    opts: &SlurmOptions,
    first: &[String],
    cpus: Option<&str>,
    mem: Option<&str>,
) -> Vec<String> {
    let mut lines: Vec<String> = first.to_vec();
    let mut add = |flag: &str, v: &Option<String>| {
        if let Some(v) = v {
            lines.push(format!("--{flag}={v}"));
        }
    };
    add("partition", &opts.partition);
    add("time", &opts.time);
    add("account", &opts.account);
    add("qos", &opts.qos);
    add("chdir", &opts.chdir);
    lines.extend(cpus.map(str::to_string));
    lines.extend(mem.map(|m| format!("--mem={m}")));
    lines.extend(opts.extra.iter().cloned());
    lines
}

/// Write the scripts into `dir` (`run.sbatch`, `merge.sbatch`, `submit.sh`, `logs/`).
pub fn write(plan: &Plan, opts: &SlurmOptions, dir: &Path) -> Result<Written, ClusterError> {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(io(format!("creating {}", logs.display())))?;
    let s = render(plan, opts, &logs.display().to_string())?;
    Ok(Written {
        run: write_file(&dir.join("run.sbatch"), &s.run, true)?,
        merge: write_file(&dir.join("merge.sbatch"), &s.merge, true)?,
        submit: write_file(&dir.join("submit.sh"), &s.submit, true)?,
        logs,
    })
}

/// Submit the array job, then the merge job depending on it (`afterok`; the merge is cancelled
/// when a shard fails, `--kill-on-invalid-dep=yes`). `sbatch` is the program to call.
pub fn submit(sbatch: &str, written: &Written) -> Result<Submitted, ClusterError> {
    let array_job = sbatch_parsable(sbatch, &[], &written.run)?;
    let merge_job = sbatch_parsable(
        sbatch,
        &[
            format!("--dependency=afterok:{array_job}"),
            "--kill-on-invalid-dep=yes".into(),
        ],
        &written.merge,
    )?;
    Ok(Submitted {
        array_job,
        merge_job,
    })
}

fn sbatch_parsable(sbatch: &str, args: &[String], script: &Path) -> Result<String, ClusterError> {
    let mut cmd = Command::new(sbatch);
    cmd.arg("--parsable").args(args).arg(script);
    let shown = format!(
        "{sbatch} --parsable {}{}",
        args.iter().map(|a| format!("{a} ")).collect::<String>(),
        script.display()
    );
    let out = cmd.output().map_err(|e| ClusterError::Submit {
        command: shown.clone(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(ClusterError::Submit {
            command: shown,
            detail: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    parse_parsable(&String::from_utf8_lossy(&out.stdout)).ok_or(ClusterError::Submit {
        command: shown,
        detail: format!(
            "no job id in its output: {:?}",
            String::from_utf8_lossy(&out.stdout)
        ),
    })
}

/// The job id of `sbatch --parsable`'s answer (`ID` or `ID;CLUSTER`).
pub fn parse_parsable(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::tests::plan;

    fn opts() -> SlurmOptions {
        SlurmOptions {
            job_name: "swe-forge".into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_array_job_runs_shard_k_of_n_with_the_run_options() {
        let s = render(&plan(), &opts(), "/shared/run/slurm/logs").unwrap();
        assert!(s.run.starts_with("#!/bin/bash\n"));
        assert!(s.run.contains("#SBATCH --array=0-2\n"), "{}", s.run);
        assert!(s.run.contains("#SBATCH --job-name=swe-forge\n"));
        assert!(s
            .run
            .contains("#SBATCH --output=/shared/run/slurm/logs/%x-%A_%a.out\n"));
        assert!(s.run.contains("swe_forge='/opt/swe forge/bin/swe-forge'\n"));
        assert!(s.run.contains("k=\"$SLURM_ARRAY_TASK_ID\""));
        assert!(
            s.run.contains(
                "\"$swe_forge\" --cache /shared/cache run /data/seeds.yaml --shard \"$k/3\" \
                 --out /shared/run/shard-\"$k\" --sandbox local --seed 3 \
                 --jobs \"${SLURM_CPUS_PER_TASK:-1}\" || status=$?"
            ),
            "{}",
            s.run
        );
        // No resource line that was not asked for; no image steps without an image directory.
        for absent in [
            "--partition",
            "--time",
            "--mem",
            "--account",
            "--cpus",
            "image ",
        ] {
            assert!(!s.run.contains(absent), "{absent}: {}", s.run);
        }
        assert!(s.run.ends_with("exit \"$status\"\n"));
    }

    #[test]
    fn resources_are_written_when_given_and_the_merge_gets_the_shards() {
        let o = SlurmOptions {
            partition: Some("cpu".into()),
            time: Some("2:00:00".into()),
            cpus_per_task: Some(4),
            mem: Some("8G".into()),
            account: Some("lab".into()),
            max_parallel: Some(2),
            extra: vec!["--constraint=avx2".into()],
            ..opts()
        };
        let mut p = plan();
        p.run_args.extend(["--jobs".into(), "4".into()]);
        p.image_dir = Some("/shared/run/images".into());
        let s = render(&p, &o, "/logs").unwrap();
        for l in [
            "#SBATCH --array=0-2%2",
            "#SBATCH --partition=cpu",
            "#SBATCH --time=2:00:00",
            "#SBATCH --cpus-per-task=4",
            "#SBATCH --mem=8G",
            "#SBATCH --account=lab",
            "#SBATCH --constraint=avx2",
        ] {
            assert!(s.run.contains(&format!("{l}\n")), "{l}: {}", s.run);
        }
        // The run's own --jobs is kept, and not doubled.
        assert_eq!(s.run.matches("--jobs").count(), 1, "{}", s.run);
        assert!(s.run.contains(
            "\"$swe_forge\" --cache /shared/cache image load /shared/run/images || echo"
        ));
        assert!(s
            .run
            .contains("\"$swe_forge\" --cache /shared/cache image save /shared/run/images"));
        // The merge: its own name, the partition and account, not the shards' CPUs or memory.
        assert!(s.merge.contains("#SBATCH --job-name=swe-forge-merge\n"));
        assert!(s.merge.contains("#SBATCH --partition=cpu\n"));
        assert!(!s.merge.contains("--cpus-per-task") && !s.merge.contains("--mem"));
        assert!(s.merge.contains(
            "while [ \"$k\" -lt 3 ]; do set -- \"$@\" /shared/run/shard-\"$k\"; k=$((k + 1)); done\n"
        ));
        assert!(s.merge.contains(
            "\"$swe_forge\" --cache /shared/cache merge \"$@\" --out /shared/run/merged\n"
        ));
        assert!(s.submit.contains("--dependency=\"afterok:$array\""));
    }

    #[test]
    fn bad_options_are_refused() {
        let mut o = opts();
        o.job_name = "two words".into();
        assert!(render(&plan(), &o, "/l").is_err());
        let mut o = opts();
        o.max_parallel = Some(0);
        assert!(render(&plan(), &o, "/l").is_err());
    }

    #[test]
    fn sbatch_parsable_answers_are_read() {
        assert_eq!(parse_parsable("123\n").as_deref(), Some("123"));
        assert_eq!(parse_parsable("77;cluster\n").as_deref(), Some("77"));
        assert_eq!(parse_parsable("Submitted batch job 5\n"), None);
        assert_eq!(parse_parsable(""), None);
    }

    #[test]
    fn the_scripts_are_valid_bash() {
        let dir = tempfile::tempdir().unwrap();
        let w = write(&plan(), &opts(), dir.path()).unwrap();
        for f in [&w.run, &w.merge, &w.submit] {
            let o = std::process::Command::new("bash")
                .arg("-n")
                .arg(f)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{}: {}",
                f.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert!(w.logs.is_dir());
    }
}
