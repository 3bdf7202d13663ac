//! Unit tests of the report: histograms, lenient inputs, the figures and the page.

use super::*;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn integer_bins_one_per_value_when_few() {
    let h = int_histogram(&[1.0, 1.0, 2.0, 4.0], 12);
    assert_eq!(h.count, 4);
    assert_eq!(h.min, Some(1.0));
    assert_eq!(h.max, Some(4.0));
    assert_eq!(h.mean, Some(2.0));
    let got: Vec<(&str, usize)> = h.bins.iter().map(|b| (b.label.as_str(), b.count)).collect();
    assert_eq!(got, [("1", 2), ("2", 1), ("3", 0), ("4", 1)]);
}

#[test]
fn integer_bins_widen_to_stay_under_the_limit() {
    let values: Vec<f64> = (0..=100).map(f64::from).collect();
    let h = int_histogram(&values, 10);
    assert!(h.bins.len() <= 10, "{:?}", h.bins);
    assert_eq!(h.bins[0].label, "0–10");
    assert_eq!(h.bins.iter().map(|b| b.count).sum::<usize>(), 101);
    // Contiguous, non-overlapping.
    for w in h.bins.windows(2) {
        assert_eq!(w[0].hi + 1.0, w[1].lo);
    }
    assert!(h.bins.last().unwrap().hi >= 100.0);
}

#[test]
fn empty_histograms_have_no_bins() {
    assert_eq!(int_histogram(&[], 10), Histogram::default());
    assert_eq!(unit_histogram(&[], 10), Histogram::default());
}

#[test]
fn score_bins_cover_zero_to_one() {
    let h = unit_histogram(&[0.0, 0.05, 0.1, 0.55, 0.999, 1.0, 1.7], 10);
    assert_eq!(h.bins.len(), 10);
    let counts: Vec<usize> = h.bins.iter().map(|b| b.count).collect();
    assert_eq!(counts, [2, 1, 0, 0, 0, 1, 0, 0, 0, 3]);
    assert_eq!(h.bins[0].label, "0.0–0.1");
}

#[test]
fn missing_dir_and_empty_dir_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = build(&dir.path().join("nope")).unwrap_err();
    assert!(matches!(err, ReportError::NoDir(_)), "{err}");
    let err = build(dir.path()).unwrap_err();
    assert!(matches!(err, ReportError::NoOutput(_)), "{err}");
    assert!(err.to_string().contains("not a swe-forge output directory"));
    // Nothing written into a directory that is not an output.
    assert!(!dir.path().join("report.html").exists());
}

#[test]
fn empty_outputs_still_render() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "candidates.jsonl", "");
    write(dir.path(), "tasks.jsonl", "");
    let w = super::write(dir.path()).unwrap();
    assert_eq!(w.report.funnel, Funnel::default());
    assert!(!w.report.stages.recorded);
    let html = std::fs::read_to_string(&w.html).unwrap();
    assert!(html.contains("id=\"per-seed\""));
    assert!(html.contains("no data"));
    assert!(html.contains("not recorded"));
}

#[test]
fn counts_from_all_inputs_and_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "summary.json",
        r#"{"out":"x","sandbox":"local","interrupted":false,"seconds":3.5,"tasks":1,
               "seeds":[{"seed":"s<1>","status":"done","detail":"","commit":"abc","files":2,
               "skipped_files":0,"enumerated":10,"sampled":4,"resumed":0,"decided":3,"killed":2,
               "accepted":1,"rejected":{"not-killed":1,"flaky":1},"seconds":3.0,
               "image_built":false,"stages":{"verify":2.0,"import":1.0}}]}"#,
    );
    let cand = |mutator: &str, status: &str, reason: &str, screen: &str| {
        format!(
            r#"{{"seed":"s<1>","id":"x","mutator":"{mutator}","category":"operator","status":"{status}"{reason},"runs":[{{"label":"screen","summary":"{screen}","log_digest":"d"}}],"future_field":[1]}}"#
        )
    };
    write(
        dir.path(),
        "candidates.jsonl",
        &[
            cand("m-a", "accepted", "", "1 failed, 2 passed (exit 1, 0.1s)"),
            cand(
                "m-a",
                "rejected",
                r#","reason":"flaky""#,
                "1 failed (exit 1, 0.1s)",
            ),
            cand(
                "<b>m-b</b>",
                "rejected",
                r#","reason":"not-killed""#,
                "3 passed (exit 0, 0.1s)",
            ),
            "{not json".to_string(),
        ]
        .join("\n"),
    );
    write(
        dir.path(),
        "tasks.jsonl",
        // The manifest's `repo:` is not the seed's name: the task counts under the seed.
        r#"{"instance_id":"t","repo":"owner/s<1>","metadata":{"environment":{"seed":"s<1>"},"difficulty":{"killing_tests":1,"function_lines":7,"fix_lines":2,"score":0.42,"new":true}}}"#,
    );
    let w = super::write(dir.path()).unwrap();
    let r = &w.report;
    assert_eq!(
        r.seeds
            .iter()
            .map(|s| (s.seed.as_str(), s.tasks))
            .collect::<Vec<_>>(),
        [("s<1>", 1)]
    );
    assert_eq!(
        r.funnel,
        Funnel {
            enumerated: Some(10),
            sampled: Some(4),
            decided: 3,
            killed: 2,
            survivors: 1,
            accepted: 1,
            rejected: 2,
            tasks: 1,
            unknown: vec![],
        }
    );
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].starts_with("candidates.jsonl:4:"));
    assert_eq!(r.mutators[0].name, "m-a");
    assert_eq!((r.mutators[0].decided, r.mutators[0].accepted), (2, 1));
    assert_eq!(r.mutators[0].rate, 0.5);
    assert_eq!(r.categories.len(), 1);
    assert_eq!(r.difficulty.score.bins[4].count, 1);
    assert_eq!(
        r.stages
            .total
            .iter()
            .map(|s| s.stage.as_str())
            .collect::<Vec<_>>(),
        ["import", "verify"]
    );
    assert_eq!(r.seeds[0].tasks, 1);
    let html = std::fs::read_to_string(&w.html).unwrap();
    assert!(!html.contains("<b>m-b</b>"), "unescaped mutator name");
    assert!(html.contains("&lt;b&gt;m-b&lt;/b&gt;"));
    assert!(!html.contains("s<1>"));
    // Self-contained: nothing loaded from elsewhere.
    for external in ["<link", "<script", " src=", "url(", "@import"] {
        assert!(!html.contains(external), "{external}");
    }
    // report.json round-trips.
    let back: Report = serde_json::from_str(&std::fs::read_to_string(&w.json).unwrap()).unwrap();
    assert_eq!(back.funnel, r.funnel);
}

#[test]
fn stage_times_fall_back_to_the_state_store() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "summary.json",
        r#"{"seeds":[{"seed":"a","status":"done"},{"seed":"b","status":"failed"}]}"#,
    );
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    store.add_stage_time("a", "baseline", 2.0).unwrap();
    store.add_stage_time("a", "import", 1.0).unwrap();
    drop(store);
    let r = build(dir.path()).unwrap();
    assert_eq!(r.seeds[0].stages_from.as_deref(), Some("state.db"));
    assert!(r.stages.recorded);
    assert_eq!(r.stages.not_recorded, ["b"]);
    assert_eq!(r.stages.total[0].stage, "import");
    assert_eq!(r.stages.total[1].stage, "baseline");
}

#[test]
fn seeds_of_earlier_runs_come_from_candidates() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "candidates.jsonl",
        r#"{"seed":"old","mutator":"m","category":"c","status":"rejected","reason":"timeout"}"#,
    );
    let r = build(dir.path()).unwrap();
    assert_eq!(r.seeds.len(), 1);
    assert!(!r.seeds[0].in_summary);
    assert_eq!(r.seeds[0].rejected["timeout"], 1);
    assert_eq!(r.funnel.enumerated, None);
    assert_eq!(r.funnel.sampled, None);
    assert_eq!(r.funnel.unknown, ["old"]);
    assert_eq!(r.reasons[0].reason, "timeout");
    // The run's listing of sampled candidates gives the sampled count back.
    std::fs::create_dir_all(dir.path().join("logs/old")).unwrap();
    write(&dir.path().join("logs/old"), "sampled.jsonl", "{}\n{}\n");
    let r = build(dir.path()).unwrap();
    assert_eq!(r.seeds[0].sampled, Some(2));
    assert_eq!(r.funnel.sampled, Some(2));
    assert_eq!(r.funnel.enumerated, None);
}
