//! Inline SVG charts for the report: no scripts, no fonts fetched, every number drawn from the
//! data given. Each chart is a `<figure>` whose SVG scales with the page (viewBox, width 100%),
//! so it fits a phone as well as a desktop. Labels are escaped.

use std::fmt::Write as _;

use super::html::esc;

/// One bar: label, segments (value, CSS class).
pub struct Bar {
    pub label: String,
    pub parts: Vec<(f64, &'static str)>,
}

/// Horizontal stacked bars, one row per item; `max` None scales to the largest total.
pub fn bars(id: &str, title: &str, rows: &[Bar], max: Option<f64>) -> String {
    let total = |b: &Bar| b.parts.iter().map(|p| p.0).sum::<f64>();
    let top = max
        .unwrap_or_else(|| rows.iter().map(total).fold(0.0, f64::max))
        .max(1e-9);
    let h = 26.0 * rows.len().max(1) as f64 + 10.0;
    let mut s = format!(
        "<figure id=\"{id}\"><figcaption>{}</figcaption>{}<svg class=\"chart\" viewBox=\"0 0 600 {h}\" \
         width=\"100%\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        legend(rows),
        esc(title)
    );
    for (i, b) in rows.iter().enumerate() {
        let y = 5.0 + 26.0 * i as f64;
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{:.1}\" class=\"lbl\">{}</text>",
            y + 15.0,
            esc(&b.label)
        );
        let mut x = 160.0;
        for (v, class) in &b.parts {
            let w = 380.0 * v / top;
            if w > 0.0 {
                let _ = write!(
                    s,
                    "<rect class=\"bar {class}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"20\"><title>{}</title></rect>",
                    esc(&format!("{} {class}: {v}", b.label))
                );
            }
            x += w;
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"num\">{}</text>",
            x + 6.0,
            y + 15.0,
            fmt_num(total(b))
        );
    }
    s.push_str("</svg></figure>");
    s
}

/// A key to the segments' colours, when a bar has more than one kind of segment.
fn legend(rows: &[Bar]) -> String {
    let mut classes: Vec<&str> = Vec::new();
    for b in rows {
        for (_, c) in &b.parts {
            if !classes.contains(c) {
                classes.push(c);
            }
        }
    }
    if classes.len() < 2 {
        return String::new();
    }
    let keys: String = classes
        .iter()
        .map(|c| format!("<i class=\"{c}\"></i>{}", esc(c)))
        .collect();
    format!("<div class=\"legend\">{keys}</div>")
}

fn fmt_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}")
    }
}

/// A line over turns: (turn, value) points, values within 0..=`max`.
pub fn line(id: &str, title: &str, points: &[(u32, f64)], max: f64) -> String {
    let (w, h, left, bottom) = (600.0, 180.0, 30.0, 20.0);
    let n = points.len().max(2) as f64 - 1.0;
    let xy = |i: usize, v: f64| {
        (
            left + (w - left - 10.0) * i as f64 / n,
            h - bottom - (h - bottom - 10.0) * (v / max.max(1e-9)),
        )
    };
    let mut s = format!(
        "<figure id=\"{id}\"><figcaption>{}</figcaption><svg class=\"chart\" viewBox=\"0 0 {w} {h}\" \
         width=\"100%\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        esc(title)
    );
    for k in 0..=(max as u32) {
        let (_, y) = xy(0, f64::from(k));
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"num\" x=\"0\" y=\"{:.1}\">{k}</text>",
            w - 10.0,
            y + 4.0
        );
    }
    let path: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, (_, v))| {
            let (x, y) = xy(i, *v);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    if !path.is_empty() {
        let _ = write!(
            s,
            "<polyline class=\"trend\" points=\"{}\"/>",
            path.join(" ")
        );
    }
    for (i, (turn, v)) in points.iter().enumerate() {
        let (x, y) = xy(i, *v);
        let _ = write!(
            s,
            "<circle class=\"pt\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\"><title>turn {turn}: {v}</title></circle>"
        );
    }
    s.push_str("</svg></figure>");
    s
}

/// One series of a daily chart: its name, CSS class (`s0`…`s3`), a value per day (None: not
/// measured that day — no point is drawn, never a 0), the top of its scale and how a value is
/// written.
pub struct Series {
    pub name: String,
    pub class: &'static str,
    pub values: Vec<Option<f64>>,
    pub max: f64,
    pub bars: bool,
    pub fmt: fn(f64) -> String,
}

/// Days along x, one panel per series stacked (each on its own scale, named at its left with
/// its scale's top), a legend of the series' colours; the dates below (at most 6 written, the
/// rest in each point's tooltip).
pub fn daily(id: &str, title: &str, days: &[String], series: &[Series]) -> String {
    let (w, left, panel) = (600.0, 140.0, 80.0);
    let h = panel * series.len().max(1) as f64 + 30.0;
    let n = days.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            left + (w - left - 20.0) / 2.0
        } else {
            left + 10.0 + (w - left - 30.0) * i as f64 / (n - 1) as f64
        }
    };
    let keys: String = series
        .iter()
        .map(|s| format!("<i class=\"{}\"></i>{}", s.class, esc(&s.name)))
        .collect();
    let mut out = format!(
        "<figure id=\"{id}\"><figcaption>{}</figcaption><div class=\"legend\">{keys}</div>\
         <svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"100%\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        esc(title)
    );
    for (k, s) in series.iter().enumerate() {
        out.push_str(&panel_svg(s, days, k as f64 * panel, panel, &x, w));
    }
    let step = n.div_ceil(6);
    for (i, d) in days.iter().enumerate().filter(|(i, _)| i % step == 0) {
        let _ = write!(
            out,
            "<text class=\"num day\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(i),
            h - 8.0,
            esc(d.get(5..).unwrap_or(d))
        );
    }
    out.push_str("</svg></figure>");
    out
}

/// One series' panel: its name and scale at the left, a baseline, and its bars or line.
fn panel_svg(
    s: &Series,
    days: &[String],
    top: f64,
    panel: f64,
    x: &dyn Fn(usize) -> f64,
    w: f64,
) -> String {
    let base = top + panel - 8.0;
    let y = |v: f64| base - (panel - 22.0) * (v / s.max.max(1e-9)).clamp(0.0, 1.0);
    let mut out = format!(
        "<g class=\"series {c}\"><text class=\"lbl\" x=\"0\" y=\"{:.1}\">{}</text>\
         <text class=\"num\" x=\"0\" y=\"{:.1}\">0–{}</text>\
         <line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{base:.1}\" y2=\"{base:.1}\"/>",
        top + 22.0,
        esc(&s.name),
        top + 48.0,
        esc(&(s.fmt)(s.max)),
        x(0) - 10.0,
        w - 10.0,
        c = s.class
    );
    let bar_w = ((w - 170.0) / days.len().max(1) as f64 * 0.6).clamp(2.0, 30.0);
    let mut path = Vec::new();
    for (i, v) in s.values.iter().enumerate() {
        let Some(v) = v else {
            // A gap: the line does not pretend the day was measured.
            if path.len() > 1 {
                let _ = write!(
                    out,
                    "<polyline class=\"trend\" points=\"{}\"/>",
                    path.join(" ")
                );
            }
            path.clear();
            continue;
        };
        let tip = format!("{} {}: {}", days[i], s.name, (s.fmt)(*v));
        if s.bars {
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\"><title>{}</title></rect>",
                x(i) - bar_w / 2.0,
                y(*v),
                base - y(*v),
                esc(&tip)
            );
        } else {
            path.push(format!("{:.1},{:.1}", x(i), y(*v)));
            let _ = write!(
                out,
                "<circle class=\"pt\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>{}</title></circle>",
                x(i),
                y(*v),
                esc(&tip)
            );
        }
    }
    if path.len() > 1 {
        let _ = write!(
            out,
            "<polyline class=\"trend\" points=\"{}\"/>",
            path.join(" ")
        );
    }
    out.push_str("</g>");
    out
}
