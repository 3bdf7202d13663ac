//! `bench peer` on the demo seed (local sandbox): the one-run rule and swe-forge's default
//! decide the same sampled candidates, and the figures and sets it prints add up: each side's
//! core-seconds per decided candidate, their ratio, both accepted sets and every candidate
//! they decide differently (the peer's own decisions are kept in `OUT/peer/<seed>.json`).

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn both_sides_decide_the_same_candidates_and_the_figures_add_up() {
    // The run's directory (kept by `bench peer`) goes with this one.
    let tmp = tempfile::tempdir().unwrap();
    let out = bin()
        .env("TMPDIR", tmp.path())
        .args(["bench", "peer", "--only", "pyshelf", "--sandbox", "local"])
        .args([
            "--jobs",
            "1",
            "--max-candidates",
            "6",
            "--no-synthesis",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let s = &v["seeds"][0];
    assert_eq!(s["seed"], "pyshelf", "{v}");
    assert_eq!(s["decided"], 6, "{s}");
    assert_eq!(s["jobs"], 1, "{s}");
    let ours = s["ours_core_s_per_decided"].as_f64().unwrap();
    let peer = s["peer_core_s_per_decided"].as_f64().unwrap();
    assert!(ours > 0.0 && peer > 0.0, "{s}");
    assert!(
        (s["ratio"].as_f64().unwrap() - peer / ours).abs() < 1e-9,
        "{s}"
    );
    assert!(
        s["ours_core_s_per_decided_without_synthesis"]
            .as_f64()
            .unwrap()
            <= ours + 1e-9
    );

    // The peer decided exactly the candidates swe-forge decided.
    let dir = std::path::PathBuf::from(v["out"].as_str().unwrap());
    let decided: BTreeSet<String> = jsonl(&dir.join("candidates.jsonl"))
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let peer_run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("peer/pyshelf.json")).unwrap())
            .unwrap();
    let peer_decided: BTreeSet<String> = peer_run["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["candidate"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(peer_decided, decided);
    // Its rule: valid exactly when it found a FAIL_TO_PASS and a PASS_TO_PASS.
    for d in peer_run["decisions"].as_array().unwrap() {
        let f2p = d["fail_to_pass"].as_array().unwrap().len();
        let p2p = d["pass_to_pass"].as_array().unwrap().len();
        assert_eq!(d["valid"], f2p > 0 && p2p > 0, "{d}");
    }

    // The sets, and the differences between them, are the candidates' own.
    let accepted: BTreeSet<String> = jsonl(&dir.join("tasks.jsonl"))
        .iter()
        .map(|t| t["metadata"]["candidate_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids(&s["ours_accepted"]), accepted);
    let valid = ids(&s["peer_valid"]);
    let differ: BTreeSet<String> = s["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["candidate"].as_str().unwrap().to_string())
        .collect();
    let expected: BTreeSet<String> = accepted.symmetric_difference(&valid).cloned().collect();
    assert_eq!(differ, expected, "{s}");
}
