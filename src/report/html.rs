//! The HTML page: report.html rendered from its template, with the charts as inline SVG.

use super::svg::{self, Bar, Chart};
use super::tally::stage_rank;
use super::{Histogram, Report, ReportError, TrainPoint, Training, Yield};
use std::collections::{BTreeMap, BTreeSet};

const TEMPLATE: &str = "report/report.html.j2";

fn percent(r: f64) -> String {
    format!("{:.0}%", r * 100.0)
}

fn histogram_chart(id: &str, title: &str, axis: &str, h: &Histogram) -> String {
    svg::column_chart(&Chart {
        id,
        title,
        category_axis: axis,
        value_axis: "tasks",
        bars: h
            .bins
            .iter()
            .map(|b| Bar::new(b.label.clone(), b.count as f64))
            .collect(),
        legend: None,
    })
}

fn yield_chart(id: &str, title: &str, axis: &str, rows: &[Yield]) -> String {
    svg::hbar_chart(&Chart {
        id,
        title,
        category_axis: axis,
        value_axis: "candidates",
        bars: rows
            .iter()
            .map(|y| Bar {
                label: y.name.clone(),
                value: y.decided as f64,
                overlay: Some(y.accepted as f64),
                value_label: format!("{}/{} ({})", y.accepted, y.decided, percent(y.rate)),
            })
            .collect(),
        legend: Some(("decided", "accepted")),
    })
}

/// The charts of the page, by name, as SVG markup.
fn training_charts(t: &Training, m: &mut BTreeMap<&'static str, String>) {
    let series =
        |name: &str, f: &dyn Fn(&TrainPoint) -> Option<f64>, phase: Option<&str>| svg::Series {
            name: name.to_string(),
            points: t
                .points
                .iter()
                .filter(|p| phase.is_none_or(|ph| p.phase == ph))
                .filter_map(|p| f(p).map(|v| (p.step as f64, v)))
                .collect(),
        };
    let rl = Some("grpo");
    m.insert(
        "train_rates",
        svg::line_chart(&svg::LineChart {
            id: "chart-train-rates",
            title: "Training: pass rate, reward and learning signal per step",
            x_axis: "step",
            y_axis: "rate / reward",
            series: vec![
                series("pass rate (served)", &|p| p.pass_rate, rl),
                series("pass rate (all tasks)", &|p| p.pass_rate, Some("eval")),
                series("mean reward", &|p| p.reward_mean, rl),
                series("groups with signal", &|p| p.signal_share, rl),
                series("harder tasks served", &|p| p.harder_share, rl),
            ],
            y_range: Some((-1.0, 1.0)),
        }),
    );
    m.insert(
        "train_loss",
        svg::line_chart(&svg::LineChart {
            id: "chart-train-loss",
            title: "Training: loss per step (warm-start and RL)",
            x_axis: "step",
            y_axis: "loss",
            series: vec![
                series("warm-start loss", &|p| p.loss, Some("sft")),
                series("GRPO loss", &|p| p.loss, rl),
            ],
            y_range: None,
        }),
    );
}

fn charts(r: &Report) -> BTreeMap<&'static str, String> {
    let f = &r.funnel;
    let mut funnel_bars = Vec::new();
    for (name, v) in [
        ("enumerated", f.enumerated),
        ("sampled", f.sampled),
        ("decided", Some(f.decided)),
        ("killed", Some(f.killed)),
        ("survivors", Some(f.survivors)),
        ("accepted", Some(f.accepted)),
    ] {
        if let Some(v) = v {
            funnel_bars.push(Bar::new(name, v as f64));
        }
    }
    let mut m = BTreeMap::new();
    m.insert(
        "funnel",
        svg::hbar_chart(&Chart {
            id: "chart-funnel",
            title: "Candidate funnel",
            category_axis: "stage",
            value_axis: "candidates",
            bars: funnel_bars,
            legend: None,
        }),
    );
    m.insert(
        "reasons",
        svg::hbar_chart(&Chart {
            id: "chart-reasons",
            title: "Rejections by reason",
            category_axis: "reason",
            value_axis: "candidates",
            bars: r
                .reasons
                .iter()
                .map(|x| Bar::new(x.reason.clone(), x.count as f64))
                .collect(),
            legend: None,
        }),
    );
    m.insert(
        "mutators",
        yield_chart(
            "chart-mutators",
            "Yield per mutator",
            "mutator",
            &r.mutators,
        ),
    );
    m.insert(
        "categories",
        yield_chart(
            "chart-categories",
            "Yield per category",
            "category",
            &r.categories,
        ),
    );
    let d = &r.difficulty;
    m.insert(
        "killing_tests",
        histogram_chart(
            "chart-killing-tests",
            "Killing tests per task",
            "FAIL_TO_PASS tests",
            &d.killing_tests,
        ),
    );
    m.insert(
        "function_lines",
        histogram_chart(
            "chart-function-lines",
            "Size of the enclosing function",
            "lines",
            &d.function_lines,
        ),
    );
    m.insert(
        "fix_lines",
        histogram_chart(
            "chart-fix-lines",
            "Size of the fix",
            "lines changed",
            &d.fix_lines,
        ),
    );
    m.insert(
        "score",
        histogram_chart("chart-score", "Difficulty score", "score", &d.score),
    );
    m.insert(
        "stages",
        svg::hbar_chart(&Chart {
            id: "chart-stages",
            title: "Time per stage",
            category_axis: "stage",
            value_axis: "seconds",
            bars: r
                .stages
                .total
                .iter()
                .map(|s| Bar {
                    label: s.stage.clone(),
                    value: s.seconds,
                    overlay: None,
                    value_label: format!("{:.1}s ({})", s.seconds, percent(s.share)),
                })
                .collect(),
            legend: None,
        }),
    );
    if let Some(t) = &r.training {
        training_charts(t, &mut m);
    }
    m
}

/// Render report.html from templates/report/report.html.j2 (HTML auto-escaping on; the charts
/// are passed as markup already escaped by [`svg`]).
pub fn render_html(report: &Report) -> Result<String, ReportError> {
    let source = crate::assets::template(TEMPLATE)
        .ok_or_else(|| ReportError::MissingTemplate(TEMPLATE.to_string()))?;
    let mut env = minijinja::Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_filter("pct", |v: f64| percent(v));
    env.add_filter("secs", |v: f64| format!("{v:.1}"));
    env.add_template(TEMPLATE, source)?;
    let charts: BTreeMap<&str, minijinja::Value> = charts(report)
        .into_iter()
        .map(|(k, v)| (k, minijinja::Value::from_safe_string(v)))
        .collect();
    let stage_names: Vec<String> = {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for s in &report.seeds {
            if let Some(st) = &s.stages {
                names.extend(st.keys().map(String::as_str));
            }
        }
        let mut v: Vec<&str> = names.into_iter().collect();
        v.sort_by_key(|n| stage_rank(n));
        v.into_iter().map(str::to_string).collect()
    };
    let html = env.get_template(TEMPLATE)?.render(minijinja::context! {
        r => minijinja::Value::from_serialize(report),
        charts => charts,
        stage_names => stage_names,
    })?;
    Ok(html)
}
