//! `swe-forge report`: report.json and report.html from an output directory (a hand-made
//! fixture, tests/fixtures/report_out, and a real run of the demo seed), with the page opened
//! in headless Chromium to check the rendered DOM and that it paints.

mod common;

use common::{bin, chromium_or_skip, jsonl, output_within, run_demo_small, text};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Copy the fixture output directory into a fresh temp dir (the report writes into it).
fn fixture_out() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    for entry in std::fs::read_dir(common::fixture("report_out")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), out.join(entry.file_name())).unwrap();
    }
    (dir, out)
}

/// `swe-forge report OUT --json`: checks the exit and that stdout is report.json's data.
fn report(out: &Path) -> serde_json::Value {
    let o = bin().arg("report").arg(out).arg("--json").output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(printed, file);
    assert!(out.join("report.html").is_file());
    file
}

/// The DOM Chromium builds from report.html, and a screenshot of it.
fn render(chromium: &Path, html: &Path, scratch: &Path) -> (String, PathBuf) {
    let profile = scratch.join("chromium-profile");
    let url = format!("file://{}", html.display());
    let base = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .env("HOME", scratch);
    };
    let mut dump = Command::new(chromium);
    base(&mut dump);
    dump.arg("--dump-dom").arg(&url);
    let o = output_within(&mut dump, Duration::from_secs(180));
    assert!(o.status.success(), "{}", text(&o));
    let dom = String::from_utf8(o.stdout).unwrap();

    let png = scratch.join("report.png");
    let mut shot = Command::new(chromium);
    base(&mut shot);
    shot.arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,2400")
        .arg(&url);
    let o = output_within(&mut shot, Duration::from_secs(180));
    assert!(o.status.success(), "{}", text(&o));
    (dom, png)
}

fn assert_png(png: &Path) {
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert!(bytes.len() > 1000, "a {} byte screenshot", bytes.len());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
}

/// The markup of the element that starts with `open` up to its closing `close`.
fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in the DOM"));
    let end = dom[start..].find(close).expect("closed") + start;
    &dom[start..end]
}

/// Checks shared by both tests: tables with a row per seed and per reason, and charts with bars.
fn assert_page(dom: &str, report: &serde_json::Value, min_charts: usize) {
    let per_seed = element(dom, "<table id=\"per-seed\"", "</table>");
    for seed in report["seeds"].as_array().unwrap() {
        let name = seed["seed"].as_str().unwrap();
        assert!(
            per_seed.contains(&format!("<tr class=\"seed\" data-seed=\"{name}\">")),
            "no row for {name} in {per_seed}"
        );
    }
    assert_eq!(
        per_seed.matches("<tr class=\"seed\"").count(),
        report["seeds"].as_array().unwrap().len()
    );
    let reasons = element(dom, "<table id=\"reasons\"", "</table>");
    for r in report["reasons"].as_array().unwrap() {
        let row = format!(
            "<td>{}</td><td class=\"num\">{}</td>",
            r["reason"].as_str().unwrap(),
            r["count"]
        );
        assert!(reasons.contains(&row), "no {row} in {reasons}");
    }
    assert_eq!(
        reasons.matches("<tr class=\"reason\"").count(),
        report["reasons"].as_array().unwrap().len()
    );
    let charts = dom.matches("<svg class=\"chart\"").count();
    assert!(charts >= min_charts, "{charts} charts");
    for id in [
        "chart-funnel",
        "chart-reasons",
        "chart-mutators",
        "chart-categories",
        "chart-killing-tests",
        "chart-function-lines",
        "chart-fix-lines",
        "chart-score",
    ] {
        let svg = element(dom, &format!("id=\"{id}\""), "</svg>");
        assert!(svg.contains("<rect"), "{id} has no bars");
    }
    assert!(dom.matches("<rect").count() >= 20);
    for external in ["<script", "<link", " src=\"http"] {
        assert!(!dom.contains(external), "the page loads {external}");
    }
}

#[test]
fn fixture_report_renders_in_chromium() {
    let (dir, out) = fixture_out();
    let r = report(&out);
    // The numbers, from the fixture's files.
    let cands = jsonl(&out.join("candidates.jsonl"));
    assert_eq!(r["funnel"]["decided"], cands.len());
    // oldshelf, decided by an earlier run, has no enumerated count: no total either.
    assert_eq!(r["funnel"]["enumerated"], serde_json::Value::Null);
    assert_eq!(r["funnel"]["unknown"], serde_json::json!(["oldshelf"]));
    assert_eq!(r["seeds"][0]["enumerated"], 864);
    assert_eq!(r["funnel"]["tasks"], jsonl(&out.join("tasks.jsonl")).len());
    assert_eq!(r["seeds"].as_array().unwrap().len(), 3);
    let old = &r["seeds"][2];
    assert_eq!(old["seed"], "oldshelf");
    assert_eq!(old["in_summary"], false);
    assert_eq!(old["rejected"]["timeout"], 1);
    assert_eq!(r["stages"]["recorded"], true);
    assert_eq!(r["stages"]["total"][0]["stage"], "import");
    assert_eq!(r["warnings"].as_array().unwrap().len(), 0);

    let Some(chromium) = chromium_or_skip("fixture_report_renders_in_chromium") else {
        return;
    };
    let (dom, png) = render(&chromium, &out.join("report.html"), dir.path());
    assert_page(&dom, &r, 9);
    // A seed's detail with markup in it is text, not markup.
    assert!(dom.contains("&lt;no such directory&gt; &amp; more"));
    assert!(dom.contains("id=\"stages\""));
    assert!(dom.contains("id=\"funnel-unknown\""));
    assert_png(&png);
}

#[test]
fn demo_run_report_renders_in_chromium() {
    let (_, dir) = run_demo_small();
    let out = dir.path().join("out");
    let r = report(&out);
    assert_eq!(r["funnel"]["sampled"], 6);
    assert_eq!(r["funnel"]["decided"], 6);
    assert_eq!(r["seeds"][0]["seed"], "pyshelf");
    let accepted = r["funnel"]["accepted"].as_u64().unwrap();
    assert_eq!(r["difficulty"]["tasks"], accepted);
    let Some(chromium) = chromium_or_skip("demo_run_report_renders_in_chromium") else {
        return;
    };
    let (dom, png) = render(&chromium, &out.join("report.html"), dir.path());
    // Histograms have bars only when there are tasks; the funnel and yield charts always do.
    let per_seed = element(&dom, "<table id=\"per-seed\"", "</table>");
    assert!(per_seed.contains("data-seed=\"pyshelf\""));
    assert!(dom.matches("<svg class=\"chart\"").count() >= 8);
    let funnel = element(&dom, "id=\"chart-funnel\"", "</svg>");
    assert!(funnel.matches("<rect").count() >= 4);
    assert_png(&png);
}

#[test]
fn missing_or_empty_out_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .arg("report")
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no such output directory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = bin().arg("report").arg(dir.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a swe-forge output directory"));
}
