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
