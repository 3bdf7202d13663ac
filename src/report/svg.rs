//! Inline SVG charts for report.html: horizontal bar charts (named things: reasons, mutators,
//! stages) and column charts (histograms), with axis labels, tick values and a value on every
//! bar. Every piece of text is escaped here; the output is a self-contained `<svg>` element.

use std::fmt::Write;

/// One bar: its label, its length, and the text written at its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// A second value drawn over the first (e.g. accepted over decided); at most `value`.
    pub overlay: Option<f64>,
    pub value_label: String,
}

impl Bar {
    /// A bar whose value label is the value itself (integers without decimals).
    pub fn new(label: impl Into<String>, value: f64) -> Bar {
        Bar {
            label: label.into(),
            value,
            overlay: None,
            value_label: number(value),
        }
    }
}

/// What a chart shows.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// The element id (`chart-…`); also prefixes ids inside the chart.
    pub id: &'a str,
    pub title: &'a str,
    /// The label of the category axis (bars' names).
    pub category_axis: &'a str,
    /// The label of the value axis.
    pub value_axis: &'a str,
    pub bars: Vec<Bar>,
    /// Legend names of the bar and of its overlay, when there is an overlay.
    pub legend: Option<(&'a str, &'a str)>,
}

const WIDTH: f64 = 720.0;
const FONT: &str = "font-family=\"sans-serif\" font-size=\"12\"";

/// Escape text for HTML and SVG (element content and attribute values).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as a short label: integers without decimals, others with up to two.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The label, shortened to `max` characters with an ellipsis.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A "nice" upper bound for an axis whose data reaches `max`, and the tick step.
pub fn nice_scale(max: f64) -> (f64, f64) {
    if !(max.is_finite() && max > 0.0) {
        return (1.0, 0.25);
    }
    let rough = max / 4.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * magnitude);
    // Integer data never needs fractional ticks below 1.
    let step = if max >= 1.0 && step < 1.0 { 1.0 } else { step };
    ((max / step).ceil() * step, step)
}

fn open_svg(out: &mut String, chart: &Chart<'_>, height: f64) {
    open_svg_titled(out, "chart", chart.id, chart.title, height);
}

/// `<svg class="{class}" id=…>` with its title element and the title drawn on top.
fn open_svg_titled(out: &mut String, class: &str, id: &str, title: &str, height: f64) {
    let _ = write!(
        out,
        "<svg class=\"{class}\" id=\"{id}\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" \
         aria-labelledby=\"{id}-title\"><title id=\"{id}-title\">{title}</title>\
         <text class=\"chart-title\" x=\"{cx}\" y=\"18\" text-anchor=\"middle\" {FONT} \
         font-weight=\"bold\">{title}</text>",
        id = escape(id),
        w = WIDTH,
        h = height,
        cx = WIDTH / 2.0,
        title = escape(title),
    );
}

fn legend(out: &mut String, chart: &Chart<'_>, x: f64, y: f64) {
    if let Some((base, overlay)) = chart.legend {
        let _ = write!(
            out,
            "<g class=\"legend\"><rect class=\"legend-swatch\" x=\"{x}\" y=\"{y0}\" width=\"10\" \
             height=\"10\" fill=\"#b8cce4\"/><text x=\"{x1}\" y=\"{y}\" {FONT}>{base}</text>\
             <rect class=\"legend-swatch\" x=\"{x2}\" y=\"{y0}\" width=\"10\" height=\"10\" \
             fill=\"#2f6aa8\"/><text x=\"{x3}\" y=\"{y}\" {FONT}>{overlay}</text></g>",
            y0 = y - 9.0,
            x1 = x + 14.0,
            x2 = x + 110.0,
            x3 = x + 124.0,
            base = escape(base),
            overlay = escape(overlay),
        );
    }
}

fn no_data(out: &mut String, x: f64, y: f64) {
    let _ = write!(
        out,
        "<text class=\"no-data\" x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" {FONT} \
         fill=\"#666\">no data</text>"
    );
}

/// Horizontal bars, one row per bar, names on the left, the value axis along the bottom.
pub fn hbar_chart(chart: &Chart<'_>) -> String {
    let row = 22.0;
    let top = 34.0;
    let n = chart.bars.len().max(1) as f64;
    let plot_h = row * n;
    let height = top + plot_h + 52.0;
    let longest = chart
        .bars
        .iter()
        .map(|b| b.label.chars().count().min(32))
        .max()
        .unwrap_or(4);
    let left = (longest as f64 * 7.0 + 16.0).clamp(60.0, 240.0);
    // Room for the longest value written after its bar.
    let right = chart
        .bars
        .iter()
        .map(|b| b.value_label.chars().count() as f64 * 7.0 + 12.0)
        .fold(40.0, f64::max)
        .min(200.0);
    let plot_w = WIDTH - left - right;
    let mut out = String::new();
    open_svg(&mut out, chart, height);
    let max = chart.bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let (top_value, step) = nice_scale(max);
    let bottom = top + plot_h;
    // Grid and value-axis ticks.
    let mut t = 0.0;
    while t <= top_value + step / 2.0 {
        let x = left + plot_w * t / top_value;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{bottom}\" \
             stroke=\"#ddd\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"middle\" \
             {FONT} fill=\"#444\">{label}</text>",
            ty = bottom + 15.0,
            label = escape(&number(t)),
        );
        t += step;
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" \
         stroke=\"#333\"/><line class=\"axis\" x1=\"{left}\" y1=\"{bottom}\" x2=\"{x2}\" \
         y2=\"{bottom}\" stroke=\"#333\"/>\
         <text class=\"axis-label\" x=\"{cx:.1}\" y=\"{ly}\" text-anchor=\"middle\" {FONT}>{vl}</text>\
         <text class=\"axis-label\" x=\"12\" y=\"{cy:.1}\" text-anchor=\"middle\" {FONT} \
         transform=\"rotate(-90 12 {cy:.1})\">{cl}</text>",
        x2 = left + plot_w,
        cx = left + plot_w / 2.0,
        ly = bottom + 32.0,
        cy = top + plot_h / 2.0,
        vl = escape(chart.value_axis),
        cl = escape(chart.category_axis),
    );
    if chart.bars.is_empty() {
        no_data(&mut out, left + plot_w / 2.0, top + row * 0.7);
    }
    for (i, b) in chart.bars.iter().enumerate() {
        let y = top + row * i as f64 + 3.0;
        let h = row - 6.0;
        let w = (plot_w * b.value / top_value).max(0.0);
        let label = escape(&b.label);
        let _ = write!(
            out,
            "<g class=\"bar\"><title>{label}: {vl}</title>\
             <text class=\"bar-label\" x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"end\" {FONT}>{short}</text>\
             <rect class=\"bar-value\" x=\"{left}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" \
             fill=\"{fill}\"/>",
            vl = escape(&b.value_label),
            lx = left - 6.0,
            ty = y + h / 2.0 + 4.0,
            short = escape(&shorten(&b.label, 32)),
            fill = if chart.legend.is_some() {
                "#b8cce4"
            } else {
                "#2f6aa8"
            },
        );
        if let Some(o) = b.overlay {
            let ow = (plot_w * o.min(b.value) / top_value).max(0.0);
            let _ = write!(
                out,
                "<rect class=\"bar-overlay\" x=\"{left}\" y=\"{y:.1}\" width=\"{ow:.1}\" \
                 height=\"{h:.1}\" fill=\"#2f6aa8\"/>"
            );
        }
        let _ = write!(
            out,
            "<text class=\"bar-text\" x=\"{vx:.1}\" y=\"{ty:.1}\" {FONT}>{vl}</text></g>",
            vx = left + w + 4.0,
            ty = y + h / 2.0 + 4.0,
            vl = escape(&b.value_label),
        );
    }
    legend(&mut out, chart, left, height - 6.0);
    out.push_str("</svg>");
    out
}

/// Vertical columns side by side (a histogram): bin labels along the bottom, counts up the
/// left axis.
pub fn column_chart(chart: &Chart<'_>) -> String {
    let height = 260.0;
    let (left, right, top, bottom) = (56.0, 16.0, 34.0, height - 56.0);
    let plot_w = WIDTH - left - right;
    let plot_h = bottom - top;
    let mut out = String::new();
    open_svg(&mut out, chart, height);
    let max = chart.bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let (top_value, step) = nice_scale(max);
    let mut t = 0.0;
    while t <= top_value + step / 2.0 {
        let y = bottom - plot_h * t / top_value;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{left}\" y1=\"{y:.1}\" x2=\"{x2}\" y2=\"{y:.1}\" \
             stroke=\"#ddd\"/><text class=\"tick\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" \
             {FONT} fill=\"#444\">{label}</text>",
            x2 = left + plot_w,
            tx = left - 6.0,
            ty = y + 4.0,
            label = escape(&number(t)),
        );
        t += step;
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" \
         stroke=\"#333\"/><line class=\"axis\" x1=\"{left}\" y1=\"{bottom}\" x2=\"{x2}\" \
         y2=\"{bottom}\" stroke=\"#333\"/>\
         <text class=\"axis-label\" x=\"{cx:.1}\" y=\"{ly}\" text-anchor=\"middle\" {FONT}>{cl}</text>\
         <text class=\"axis-label\" x=\"14\" y=\"{cy:.1}\" text-anchor=\"middle\" {FONT} \
         transform=\"rotate(-90 14 {cy:.1})\">{vl}</text>",
        x2 = left + plot_w,
        cx = left + plot_w / 2.0,
        ly = height - 10.0,
        cy = top + plot_h / 2.0,
        cl = escape(chart.category_axis),
        vl = escape(chart.value_axis),
    );
    if chart.bars.is_empty() {
        no_data(&mut out, left + plot_w / 2.0, top + plot_h / 2.0);
    }
    let n = chart.bars.len().max(1) as f64;
    let slot = plot_w / n;
    let gap = (slot * 0.15).min(8.0);
    let rotate = chart.bars.len() > 12;
    for (i, b) in chart.bars.iter().enumerate() {
        let x = left + slot * i as f64 + gap / 2.0;
        let w = slot - gap;
        let h = (plot_h * b.value / top_value).max(0.0);
        let y = bottom - h;
        let cx = x + w / 2.0;
        let ly = bottom + 15.0;
        let _ = write!(
            out,
            "<g class=\"bar\"><title>{label}: {vl}</title>\
             <rect class=\"bar-value\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" \
             fill=\"#2f6aa8\"/>\
             <text class=\"bar-text\" x=\"{cx:.1}\" y=\"{vy:.1}\" text-anchor=\"middle\" {FONT}>{vl}</text>\
             <text class=\"bar-label\" x=\"{cx:.1}\" y=\"{ly:.1}\" text-anchor=\"{anchor}\" {FONT}{rot}>{short}</text></g>",
            label = escape(&b.label),
            vl = escape(&b.value_label),
            vy = y - 4.0,
            anchor = if rotate { "end" } else { "middle" },
            rot = if rotate {
                format!(" transform=\"rotate(-40 {cx:.1} {ly:.1})\"")
            } else {
                String::new()
            },
            short = escape(&shorten(&b.label, 14)),
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(bars: Vec<Bar>) -> Chart<'static> {
        Chart {
            id: "chart-x",
            title: "T <&> \"q\"",
            category_axis: "cat's",
            value_axis: "n",
            bars,
            legend: None,
        }
    }

    #[test]
    fn escapes_every_text() {
        assert_eq!(
            escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
        let evil = "<script>alert(1)</script>";
        for svg in [
            hbar_chart(&chart(vec![Bar::new(evil, 3.0)])),
            column_chart(&chart(vec![Bar::new(evil, 3.0)])),
        ] {
            assert!(!svg.contains("<script"), "{svg}");
            assert!(svg.contains("&lt;script&gt;"), "{svg}");
            assert!(svg.contains("T &lt;&amp;&gt; &quot;q&quot;"), "{svg}");
            assert!(svg.contains("cat&#39;s"), "{svg}");
            assert!(svg.starts_with("<svg class=\"chart\" id=\"chart-x\""));
            assert!(svg.ends_with("</svg>"));
        }
    }

    #[test]
    fn one_rect_per_bar_and_values_written() {
        let bars = vec![Bar::new("a", 1.0), Bar::new("b", 7.0), Bar::new("c", 0.0)];
        let h = hbar_chart(&chart(bars.clone()));
        assert_eq!(h.matches("class=\"bar-value\"").count(), 3);
        assert!(h.contains(">7</text>"));
        let c = column_chart(&chart(bars));
        assert_eq!(c.matches("class=\"bar-value\"").count(), 3);
    }

    #[test]
    fn overlay_and_legend() {
        let mut b = Bar::new("m", 10.0);
        b.overlay = Some(4.0);
        let mut c = chart(vec![b]);
        c.legend = Some(("decided", "accepted"));
        let svg = hbar_chart(&c);
        assert!(svg.contains("bar-overlay"));
        assert!(svg.contains(">accepted</text>"));
    }

    #[test]
    fn empty_chart_says_no_data() {
        let svg = hbar_chart(&chart(vec![]));
        assert!(svg.contains("no data"));
        assert!(!svg.contains("<rect"));
        assert!(column_chart(&chart(vec![])).contains("no data"));
    }

    #[test]
    fn nice_scales() {
        assert_eq!(nice_scale(0.0), (1.0, 0.25));
        assert_eq!(nice_scale(10.0), (10.0, 5.0));
        assert_eq!(nice_scale(7.0), (8.0, 2.0));
        assert_eq!(nice_scale(1.0), (1.0, 1.0));
        assert_eq!(nice_scale(37.0), (40.0, 10.0));
        assert_eq!(nice_scale(0.8), (0.8, 0.2));
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.126), "0.13");
    }
}

/// One line of a line chart: its legend name and its points (x, y).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// What a line chart shows (training curves).
#[derive(Clone, Debug)]
pub struct LineChart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub x_axis: &'a str,
    pub y_axis: &'a str,
    pub series: Vec<Series>,
    /// A fixed y range (e.g. 0..1 for rates); else from the data (including 0).
    pub y_range: Option<(f64, f64)>,
}

const PALETTE: [&str; 6] = [
    "#2f6aa8", "#c0504d", "#4f8a3a", "#8064a2", "#d08a2c", "#4bacc6",
];

/// Lines over a shared x axis, with ticks on both axes and a legend.
pub fn line_chart(chart: &LineChart<'_>) -> String {
    let height = 300.0;
    let (left, right, top, bottom) = (64.0, 20.0, 34.0, 64.0);
    let plot_w = WIDTH - left - right;
    let plot_h = height - top - bottom;
    let mut out = String::new();
    open_svg_titled(&mut out, "chart line-chart", chart.id, chart.title, height);
    let points: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if points.is_empty() {
        no_data(&mut out, WIDTH / 2.0, height / 2.0);
        out.push_str("</svg>");
        return out;
    }
    let x_min = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (y_lo, y_hi) = chart.y_range.unwrap_or_else(|| {
        let lo = points.iter().map(|p| p.1).fold(0.0, f64::min);
        let hi = points.iter().map(|p| p.1).fold(0.0, f64::max);
        let (top, _) = nice_scale(hi.max(1e-9));
        let (bot, _) = if lo < 0.0 {
            nice_scale(-lo)
        } else {
            (0.0, 0.0)
        };
        (-bot, top)
    });
    let x_span = (x_max - x_min).max(1e-9);
    let y_span = (y_hi - y_lo).max(1e-9);
    let px = |x: f64| left + (x - x_min) / x_span * plot_w;
    let py = |y: f64| top + (1.0 - (y - y_lo) / y_span) * plot_h;
    // Axes and ticks.
    let _ = write!(
        out,
        "<g class=\"axes\"><line x1=\"{left}\" y1=\"{t}\" x2=\"{left}\" y2=\"{b}\" stroke=\"#333\"/>\
         <line x1=\"{left}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#333\"/>",
        t = top,
        b = top + plot_h,
        r = left + plot_w,
    );
    for i in 0..=4 {
        let v = y_lo + y_span * i as f64 / 4.0;
        let y = py(v);
        let _ = write!(
            out,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{r}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/>\
             <text class=\"tick\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" {FONT}>{label}</text>",
            r = left + plot_w,
            tx = left - 6.0,
            ty = y + 4.0,
            label = escape(&number(v)),
        );
        let xv = x_min + x_span * i as f64 / 4.0;
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"middle\" {FONT}>{label}</text>",
            x = px(xv),
            ty = top + plot_h + 16.0,
            label = escape(&number(xv)),
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label\" x=\"{cx}\" y=\"{y}\" text-anchor=\"middle\" {FONT}>{xl}</text>\
         <text class=\"axis-label\" x=\"14\" y=\"{cy}\" text-anchor=\"middle\" {FONT} \
         transform=\"rotate(-90 14 {cy})\">{yl}</text></g>",
        cx = left + plot_w / 2.0,
        y = top + plot_h + 34.0,
        cy = top + plot_h / 2.0,
        xl = escape(chart.x_axis),
        yl = escape(chart.y_axis),
    );
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"series\" data-name=\"{name}\" fill=\"none\" stroke=\"{color}\" \
             stroke-width=\"2\" points=\"{pts}\"/>",
            name = escape(&s.name),
            pts = path.join(" "),
        );
        let lx = 8.0 + 140.0 * i as f64;
        let ly = height - 10.0;
        let _ = write!(
            out,
            "<g class=\"legend\"><rect x=\"{lx}\" y=\"{y0}\" width=\"10\" height=\"10\" fill=\"{color}\"/>\
             <text x=\"{tx}\" y=\"{ly}\" {FONT}>{name}</text></g>",
            y0 = ly - 9.0,
            tx = lx + 14.0,
            name = escape(&shorten(&s.name, 20)),
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn a_line_chart_draws_one_polyline_per_series_with_its_points() {
        let svg = line_chart(&LineChart {
            id: "chart-train",
            title: "pass rate <by step>",
            x_axis: "step",
            y_axis: "rate",
            series: vec![
                Series {
                    name: "pass".into(),
                    points: vec![(0.0, 0.0), (1.0, 0.5), (2.0, 1.0)],
                },
                Series {
                    name: "reward".into(),
                    points: vec![(0.0, -1.0), (2.0, 0.5)],
                },
            ],
            y_range: None,
        });
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("pass rate &lt;by step&gt;"));
        // The first series' first point sits at the left of the plot; the x axis spans 0..2.
        assert!(svg.contains("points=\"64.0,"), "{svg}");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn a_line_chart_without_points_says_so() {
        let svg = line_chart(&LineChart {
            id: "c",
            title: "t",
            x_axis: "x",
            y_axis: "y",
            series: vec![],
            y_range: Some((0.0, 1.0)),
        });
        assert!(svg.contains("no data"));
    }
}
