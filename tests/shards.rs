//! `run --shard K/N` and `merge` through the real binary, on the demo seed pyshelf (local
//! sandbox): two shards run as two processes at once and merged give the instance ids and the
//! task records (apart from timings and log references) of one run with the same `--seed` and
//! `--max-candidates`; merging again gives the same; a shard that failed is rerun into its own
//! directory and the merge is then complete, without duplicates; records that disagree are a
//! conflict.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn run_args(out: &Path, extra: &[&str]) -> std::process::Command {
    let mut c = bin();
    c.arg("run")
        .args(SHARD_RUN_OPTIONS)
        .args(["--json", "--out"])
        .arg(out)
        .args(extra);
    c
}

fn merge(inputs: &[&PathBuf], out: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("merge")
        .args(inputs.iter().map(|p| p.as_os_str()))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn two_shards_merged_are_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    let a = dir.path().join("shard-0");
    let b = dir.path().join("shard-1");
    let merged = dir.path().join("merged");

    ok(run_args(&single, &[]).output().unwrap());
    // The two shards as two processes at once.
    let spawn = |out: &Path, shard: &str| {
        run_args(out, &["--shard", shard])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let pa = spawn(&a, "0/2");
    let pb = spawn(&b, "1/2");
    ok(pa.wait_with_output().unwrap());
    ok(pb.wait_with_output().unwrap());
    let (ra, rb) = (records(&a), records(&b));
    assert!(
        !ra.is_empty() && !rb.is_empty(),
        "each shard decides a part: {ra:?} {rb:?}"
    );
    assert!(ra.keys().all(|k| !rb.contains_key(k)), "the shards overlap");

    let o = ok(merge(&[&a, &b], &merged, &["--json"]));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["conflicts"].as_array().unwrap().len(), 0, "{s}");
    let one = records(&single);
    let both = records(&merged);
    assert_eq!(
        both.keys().collect::<Vec<_>>(),
        one.keys().collect::<Vec<_>>(),
        "the merged instance ids are the single run's"
    );
    for (id, r) in &one {
        assert_eq!(
            &both[id], r,
            "{id}: the merged record differs from the single run's"
        );
    }
    // The candidates and the summary add up to the single run's.
    assert_eq!(
        jsonl(&merged.join("candidates.jsonl")).len(),
        jsonl(&single.join("candidates.jsonl")).len()
    );
    let sum: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("summary.json")).unwrap())
            .unwrap();
    let single_sum: Value =
        serde_json::from_str(&std::fs::read_to_string(single.join("summary.json")).unwrap())
            .unwrap();
    for k in ["decided", "accepted", "sampled"] {
        assert_eq!(sum["seeds"][0][k], single_sum["seeds"][0][k], "{k}: {sum}");
    }
    assert_eq!(sum["tasks"], single_sum["tasks"]);
    // `report` reads the merged directory as any run's.
    ok(bin().arg("report").arg(&merged).output().unwrap());
    assert!(merged.join("report.html").is_file());

    // Merging again: the same.
    ok(merge(&[&a, &b], &merged, &[]));
    assert_eq!(records(&merged), both);

    // Overlapping inputs decided alike are kept once.
    let again = dir.path().join("again");
    let o = ok(merge(&[&a, &b, &single], &again, &["--json"]));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Every candidate of the single run was decided alike by a shard.
    let decided = jsonl(&single.join("candidates.jsonl")).len() as u64;
    assert_eq!(s["duplicates"].as_u64(), Some(decided), "{s}");
    assert_eq!(records(&again), one);

    // A record that disagrees is a conflict: refused, unless allowed (the first is kept).
    let changed = dir.path().join("changed");
    copy_dir(&a, &changed);
    let db = rusqlite::Connection::open(changed.join("state.db")).unwrap();
    let n = db
        .execute(
            "UPDATE outcomes SET task = replace(task, '\"problem_statement\":\"', '\"problem_statement\":\"Changed. ') WHERE task IS NOT NULL",
            [],
        )
        .unwrap();
    assert!(n > 0);
    drop(db);
    let conflicted = dir.path().join("conflicted");
    let o = merge(&[&a, &changed], &conflicted, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("decided differently"), "{}", text(&o));
    let o = ok(merge(
        &[&a, &changed],
        &conflicted,
        &["--allow-conflicts", "--json"],
    ));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["conflicts"].as_array().unwrap().len(), n, "{s}");
    assert_eq!(records(&conflicted), ra);
}

#[test]
fn a_failed_shard_is_rerun_and_the_merge_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    let a = dir.path().join("shard-0");
    let b = dir.path().join("shard-1");
    ok(run_args(&single, &[]).output().unwrap());
    ok(run_args(&a, &["--shard", "0/2"]).output().unwrap());
    // Shard 1 fails: its baseline cannot finish in a millisecond-short timeout.
    let failed = run_args(&b, &["--shard", "1/2", "--baseline-timeout", "0"])
        .output()
        .unwrap();
    assert_ne!(failed.status.code(), Some(0), "{}", text(&failed));
    assert!(records(&b).is_empty());
    // Rerun into the same directory: it completes, and the merge is the single run.
    ok(run_args(&b, &["--shard", "1/2"]).output().unwrap());
    let merged = dir.path().join("merged");
    let o = ok(merge(&[&a, &b], &merged, &["--json"]));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["duplicates"], 0, "{s}");
    assert_eq!(records(&merged), records(&single));
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}
