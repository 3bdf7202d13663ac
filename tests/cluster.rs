//! `cluster slurm|k8s` and `status` through the real binary. With a Slurm cluster answering
//! (`.ci/slurm-up` makes a one-node one; `SWE_FORGE_REQUIRE_SLURM=1` turns its absence into a
//! failure): two shards of the demo seed pyshelf submitted as an array job plus a dependent
//! merge job give one run's instance ids and records, every job COMPLETED by Slurm's own
//! account, and `status` reads the shards. Always: the Kubernetes manifests parse as an Indexed
//! Job, a merge Job and a volume claim, and pass `kubernetes-validate` where one is given
//! (`SWE_FORGE_KUBERNETES_VALIDATE`; required with `SWE_FORGE_REQUIRE_K8S_VALIDATE=1`).

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn demo_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/demo.yaml")
}

/// A plain `run` with the options, into `out`.
fn single_run(out: &Path) -> Command {
    let mut c = bin();
    c.arg("run")
        .arg(demo_manifest())
        .args(SHARD_RUN_OPTIONS)
        .arg("--json")
        .arg("--out")
        .arg(out);
    c
}

/// Whether a Slurm controller answers here; otherwise a notice (or a failure under
/// `SWE_FORGE_REQUIRE_SLURM=1`).
fn slurm_or_skip(test: &str) -> bool {
    let why = match Command::new("sinfo").args(["-h", "-o", "%T"]).output() {
        Err(e) => format!("sinfo cannot be run ({e}): Slurm is not installed"),
        Ok(o) if !o.status.success() => format!(
            "no Slurm controller answers: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(o) if String::from_utf8_lossy(&o.stdout).trim().is_empty() => {
            "Slurm has no node".to_string()
        }
        Ok(_) => match Command::new("sbatch").arg("--version").output() {
            Ok(o) if o.status.success() => return true,
            _ => "sbatch cannot be run".to_string(),
        },
    };
    if std::env::var("SWE_FORGE_REQUIRE_SLURM").as_deref() == Ok("1") {
        panic!("{test}: {why} and SWE_FORGE_REQUIRE_SLURM=1 (.ci/slurm-up starts one)");
    }
    eprintln!("skipping {test}: {why} (.ci/slurm-up starts a one-node cluster; set SWE_FORGE_REQUIRE_SLURM=1 to fail instead)");
    false
}

fn stdout(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Every job's output file under the scripts' log directory, for a failure's message.
fn slurm_logs(out: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(out.join("slurm/logs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        s.push_str(&format!("--- {}\n", e.path().display()));
        for l in tail.into_iter().rev() {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// Wait until Slurm's queue holds none of `jobs` (done, failed or cancelled).
fn wait_for_jobs(jobs: &[&str], limit: Duration, out: &Path) {
    let started = Instant::now();
    loop {
        let q = stdout(Command::new("squeue").args(["-h", "-o", "%i %T", "-j", &jobs.join(",")]));
        if q.trim().is_empty() {
            return;
        }
        if started.elapsed() > limit {
            let _ = Command::new("scancel").args(jobs).status();
            panic!(
                "the jobs {jobs:?} were not done after {limit:?}:\n{q}\n{}",
                slurm_logs(out)
            );
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// The array's tasks as Slurm numbers them: (job id of the task, its array index).
fn array_tasks(array_job: &str) -> Vec<(String, String)> {
    let text = stdout(Command::new("scontrol").args(["-o", "show", "job", array_job]));
    text.lines()
        .filter_map(|l| {
            let field = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{k}=")).map(str::to_string))
            };
            Some((field("JobId")?, field("ArrayTaskId")?))
        })
        .collect()
}

/// The jobs' states by Slurm's accounting: `sacct` against the accounting database where
/// there is one (array tasks as `ARRAY_K`), else `sacct --completion` over the job-completion
/// log (`JobCompType=jobcomp/filetxt`, what `.ci/slurm-up` configures: Slurm 22.05 keeps no
/// accounting without slurmdbd), where each array task is a job of its own id.
fn sacct_states(array_job: &str, merge_job: &str) -> BTreeMap<String, String> {
    let o = Command::new("sacct")
        .args(["-n", "-P", "-X", "-o", "JobID,State", "-j"])
        .arg(format!("{array_job},{merge_job}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let parse = |s: &str| -> BTreeMap<String, String> {
        s.lines()
            .filter_map(|l| {
                let mut f = l.split('|');
                Some((f.next()?.trim().to_string(), f.next()?.trim().to_string()))
            })
            .filter(|(id, _)| !id.is_empty())
            .collect()
    };
    if o.status.success() && !err.contains("accounting storage is disabled") {
        return parse(&String::from_utf8_lossy(&o.stdout));
    }
    let tasks = array_tasks(array_job);
    // sacct -c warns of the log's array fields it does not know; its rows are still read.
    let all = parse(&stdout(Command::new("sacct").args([
        "-c",
        "-n",
        "-P",
        "-o",
        "JobID,State",
    ])));
    let mut states = BTreeMap::new();
    for (id, k) in tasks {
        if let Some(s) = all.get(&id) {
            states.insert(format!("{array_job}_{k}"), s.clone());
        }
    }
    if let Some(s) = all.get(merge_job) {
        states.insert(merge_job.to_string(), s.clone());
    }
    states
}

/// `status` on two shard directories and their merge: every sampled candidate decided, the
/// sums those of the single run.
fn check_status(shards: &[PathBuf], single: &Path) {
    let o = ok(bin()
        .arg("status")
        .args(shards)
        .arg("--json")
        .output()
        .unwrap());
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = s["runs"].as_array().unwrap();
    assert_eq!(runs.len(), shards.len(), "{s}");
    for r in runs {
        assert_eq!(r["state"], "done", "{s}");
        assert_eq!(r["progress"], 1.0, "{s}");
    }
    let single_candidates = jsonl(&single.join("candidates.jsonl")).len() as u64;
    let single_tasks = jsonl(&single.join("tasks.jsonl")).len() as u64;
    let t = &s["total"];
    assert_eq!(t["done"], 2, "{s}");
    assert_eq!(t["decided"].as_u64(), Some(single_candidates), "{s}");
    assert_eq!(t["sampled"].as_u64(), Some(single_candidates), "{s}");
    assert_eq!(t["accepted"].as_u64(), Some(single_tasks), "{s}");
    assert_eq!(
        t["rejected"].as_u64(),
        Some(single_candidates - single_tasks),
        "{s}"
    );
    // The table for people: a row per shard and the total.
    let o = ok(bin().arg("status").args(shards).output().unwrap());
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("ACCEPTED") && table.contains("100%"),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("total (2 run(s))")),
        "{table}"
    );
    // --wait on finished runs returns at once; on a run that never starts it times out.
    ok(bin()
        .arg("status")
        .args(shards)
        .args(["--wait", "--timeout", "5", "--interval", "1"])
        .output()
        .unwrap());
    let never = shards[0].with_file_name("never");
    let o = bin()
        .arg("status")
        .arg(&never)
        .args(["--wait", "--timeout", "1", "--interval", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not finished"), "{}", text(&o));
}

#[test]
fn slurm_array_and_merge_give_one_run() {
    if !slurm_or_skip("slurm_array_and_merge_give_one_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cluster");
    let single = dir.path().join("single");
    let name = format!("swe-forge-test-{}", std::process::id());
    let o = ok(bin()
        .args(["cluster", "slurm"])
        .arg(demo_manifest())
        .args(["--shards", "2", "--submit", "--json", "--job-name", &name])
        .arg("--out")
        .arg(&out)
        .args(SHARD_RUN_OPTIONS)
        .output()
        .unwrap());
    let sub: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let array_job = sub["array_job"]
        .as_str()
        .expect("an array job id")
        .to_string();
    let merge_job = sub["merge_job"]
        .as_str()
        .expect("a merge job id")
        .to_string();
    let script = std::fs::read_to_string(out.join("slurm/run.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-1"), "{script}");
    assert!(
        script.contains(&format!("--cache {}", cache().display())),
        "the shared cache is passed: {script}"
    );

    // The single run meanwhile, for comparison.
    ok(single_run(&single).output().unwrap());
    wait_for_jobs(
        &[&array_job, &merge_job],
        Duration::from_secs(15 * 60),
        &out,
    );

    let states = sacct_states(&array_job, &merge_job);
    for id in [
        format!("{array_job}_0"),
        format!("{array_job}_1"),
        merge_job.clone(),
    ] {
        assert_eq!(
            states.get(&id).map(String::as_str),
            Some("COMPLETED"),
            "job {id}: {states:?}\n{}",
            slurm_logs(&out)
        );
    }

    let merged = out.join("merged");
    let one = records(&single);
    let both = records(&merged);
    assert!(!one.is_empty(), "the single run accepted no task");
    assert_eq!(
        both.keys().collect::<Vec<_>>(),
        one.keys().collect::<Vec<_>>(),
        "the merged instance ids are the single run's\n{}",
        slurm_logs(&out)
    );
    for (id, r) in &one {
        assert_eq!(
            &both[id], r,
            "{id}: the merged record differs from the single run's"
        );
    }
    let shards = [out.join("shard-0"), out.join("shard-1")];
    let (ra, rb) = (records(&shards[0]), records(&shards[1]));
    assert!(ra.keys().all(|k| !rb.contains_key(k)), "the shards overlap");
    check_status(&shards, &single);
}

/// `status` where no Slurm runs the shards: two local shard processes of a smaller draw. (With
/// Slurm, the test above checks `status` on its shards.)
#[test]
fn status_reads_shards_without_slurm() {
    if Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
    {
        eprintln!(
            "status_reads_shards_without_slurm: Slurm answers; the Slurm test checks `status`"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    ok(single_run(&single).output().unwrap());
    let shards = [dir.path().join("shard-0"), dir.path().join("shard-1")];
    for (k, s) in shards.iter().enumerate() {
        ok(bin()
            .arg("run")
            .arg(demo_manifest())
            .args(SHARD_RUN_OPTIONS)
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(s)
            .output()
            .unwrap());
    }
    check_status(&shards, &single);
}

/// The documents of every manifest `cluster k8s` wrote, by file name.
fn manifests(dir: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let text = std::fs::read_to_string(e.path()).unwrap();
        let docs = swe_forge::cluster::k8s::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.insert(name, docs);
    }
    out
}

#[test]
fn k8s_manifests_are_an_indexed_job_a_merge_job_and_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k8s-run");
    let o = ok(bin()
        .args(["cluster", "k8s", "/data/seeds/demo.yaml"])
        .args([
            "--shards",
            "3",
            "--parallelism",
            "2",
            "--storage-class",
            "nfs",
        ])
        .args([
            "--image",
            "registry.example/swe-forge:test",
            "--namespace",
            "ml",
            "--json",
        ])
        .arg("--out")
        .arg(&out)
        .args(SHARD_RUN_OPTIONS)
        .output()
        .unwrap());
    let written: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        written["manifests"].as_array().unwrap().len(),
        3,
        "{written}"
    );
    let m = manifests(&out.join("k8s"));
    let docs: Vec<&Value> = m.values().flatten().collect();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["PersistentVolumeClaim", "Job", "Job"], "{m:?}");
    let (pvc, shards, merge) = (docs[0], docs[1], docs[2]);
    assert!(docs.iter().all(|d| d["metadata"]["namespace"] == "ml"));
    assert_eq!(pvc["spec"]["storageClassName"], "nfs");
    assert_eq!(pvc["spec"]["accessModes"][0], "ReadWriteMany");

    // The shards: an Indexed Job of 3 completions, 2 at once; each pod's shard is its index.
    let spec = &shards["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 3);
    assert_eq!(spec["parallelism"], 2);
    assert!(spec["parallelism"].as_u64() <= spec["completions"].as_u64());
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/swe-forge:test");
    let script = c["command"][2].as_str().unwrap();
    assert!(script.contains("$JOB_COMPLETION_INDEX"), "{script}");
    assert!(
        script.contains(
            "run /data/seeds/demo.yaml --shard \"$k/3\" --out /data/swe-forge/shard-\"$k\""
        ),
        "{script}"
    );
    for opt in [
        "--sandbox=local",
        "--only=pyshelf",
        "--max-candidates=8",
        "--no-synthesis",
    ] {
        assert!(script.contains(opt), "{opt} is passed through: {script}");
    }
    let claim = pvc["metadata"]["name"].as_str().unwrap();
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        claim
    );

    // The merge waits for the shards, then merges them.
    let pod = &merge["spec"]["template"]["spec"];
    let wait = pod["initContainers"][0]["command"][2].as_str().unwrap();
    assert!(
        wait.contains("status --wait") && wait.contains("-lt 3"),
        "{wait}"
    );
    let merging = pod["containers"][0]["command"][2].as_str().unwrap();
    assert!(
        merging.contains("merge \"$@\" --out /data/swe-forge/merged"),
        "{merging}"
    );
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        claim
    );

    // More pods at once than shards, or a shard given, are refused.
    let o = bin()
        .args([
            "cluster",
            "k8s",
            "--shards",
            "2",
            "--parallelism",
            "3",
            "--out",
        ])
        .arg(dir.path().join("bad"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = bin()
        .args(["cluster", "k8s", "--shards", "2", "--shard", "0/2", "--out"])
        .arg(dir.path().join("bad"))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));

    // With the node's Docker socket: mounted, warned of, and images loaded and saved.
    let sock = dir.path().join("sock");
    ok(bin()
        .args([
            "cluster",
            "k8s",
            "--shards",
            "2",
            "--docker-socket",
            "--out",
        ])
        .arg(&sock)
        .output()
        .unwrap());
    let text10 = std::fs::read_to_string(sock.join("k8s/10-shards.yaml")).unwrap();
    assert!(text10.contains("WARNING") && text10.contains("/var/run/docker.sock"));
    assert!(text10.contains("image load") && text10.contains("image save"));

    validate_k8s(&[out.join("k8s"), sock.join("k8s")]);
}

/// Run `kubernetes-validate` (SWE_FORGE_KUBERNETES_VALIDATE) on the manifests of `dirs`.
fn validate_k8s(dirs: &[PathBuf]) {
    let Some(exe) = std::env::var_os("SWE_FORGE_KUBERNETES_VALIDATE") else {
        if std::env::var("SWE_FORGE_REQUIRE_K8S_VALIDATE").as_deref() == Ok("1") {
            panic!("SWE_FORGE_KUBERNETES_VALIDATE is not set and SWE_FORGE_REQUIRE_K8S_VALIDATE=1");
        }
        eprintln!("not validating the manifests: set SWE_FORGE_KUBERNETES_VALIDATE to a kubernetes-validate executable (.ci/run installs one)");
        return;
    };
    let mut files = Vec::new();
    for d in dirs {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            files.push(e.path());
        }
    }
    files.sort();
    let o = Command::new(&exe)
        .arg("--strict")
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", PathBuf::from(&exe).display()));
    assert!(o.status.success(), "kubernetes-validate: {}", text(&o));
    let t = text(&o);
    assert_eq!(t.matches("passed").count(), files.len(), "{t}");
}
