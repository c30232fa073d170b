//! The page: escaping, the shell (inline CSS only, a Japanese font stack every OS has, a layout
//! that wraps at phone width and prints), and small pieces (verdict badges, tables).

/// Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C): a name
/// holding one could show reversed or reorder what follows it.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Text for HTML: `& < > " '` escaped; control characters (other than newline and tab) and
/// bidirectional controls dropped. Everything from a model, a user or a file goes through this.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c if is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = r#"
:root { --pass:#2e7d32; --warn:#b26a00; --retry:#c62828; --other:#6a1b9a; --ink:#1d1d1f; --mute:#666; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 16px; color: var(--ink);
  font-family: "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Noto Sans CJK JP", "Noto Sans JP",
    "Yu Gothic", "YuGothic", "Meiryo", system-ui, sans-serif; line-height: 1.6;
  overflow-wrap: anywhere; word-break: normal; line-break: strict; }
h1 { font-size: 1.4rem; margin: 0 0 4px; } h2 { font-size: 1.1rem; margin: 28px 0 8px;
  border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: var(--mute); font-size: .9rem; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 12px; }
figure { margin: 0; } figcaption { font-size: .9rem; color: var(--mute); }
svg.chart { display: block; max-width: 100%; height: auto; }
svg .lbl, svg .num { font-size: 12px; fill: var(--ink); }
.bar.PASS { fill: var(--pass); } .bar.WARN { fill: var(--warn); } .bar.RETRY { fill: var(--retry); }
.bar.other, .bar.MODIFY, .bar.UNSCORED { fill: var(--other); } .bar.plain { fill: #1565c0; }
.grid { stroke: #e0e0e0; } .trend { fill: none; stroke: #1565c0; stroke-width: 2; } .pt { fill: #1565c0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; table-layout: fixed; }
th, td { border-bottom: 1px solid #eee; padding: 4px 6px; text-align: left; vertical-align: top; }
th.n, td.n { width: 3.5em; } th.who, td.who { width: 4.5em; } th.v, td.v { width: 6.5em; }
td.text { white-space: pre-wrap; }
.badge { display: inline-block; padding: 0 6px; border-radius: 4px; color: #fff; font-size: .8rem; }
.badge.PASS { background: var(--pass); } .badge.WARN { background: var(--warn); }
.badge.RETRY { background: var(--retry); } .badge.MODIFY, .badge.UNSCORED { background: var(--other); }
.note { color: var(--mute); font-style: italic; }
.ab { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.ab > div { border: 1px solid #eee; padding: 6px; border-radius: 4px; white-space: pre-wrap; }
del { background: #ffebee; text-decoration: line-through; } ins { background: #e8f5e9; text-decoration: none; }
.legend { font-size: .85rem; color: var(--mute); margin: 2px 0 4px; }
.legend i { display: inline-block; width: .8em; height: .8em; margin: 0 4px 0 10px; border-radius: 2px; }
.legend i.PASS { background: var(--pass); } .legend i.WARN { background: var(--warn); }
.legend i.RETRY { background: var(--retry); } .legend i.other, .legend i.MODIFY, .legend i.UNSCORED { background: var(--other); }
.legend i.plain { background: #1565c0; }
.legend i.s0, .s0 .bar, .s0 .pt { background: #1565c0; fill: #1565c0; } .s0 .trend { stroke: #1565c0; }
.legend i.s1, .s1 .bar, .s1 .pt { background: #b26a00; fill: #b26a00; } .s1 .trend { stroke: #b26a00; }
.legend i.s2, .s2 .bar, .s2 .pt { background: #2e7d32; fill: #2e7d32; } .s2 .trend { stroke: #2e7d32; }
.legend i.s3, .s3 .bar, .s3 .pt { background: #6a1b9a; fill: #6a1b9a; } .s3 .trend { stroke: #6a1b9a; }
details.attempt { border-left: 3px solid #eee; margin: 4px 0; padding: 0 6px; white-space: normal; }
details.attempt summary { cursor: pointer; color: var(--mute); font-size: .88rem; }
.atext { white-space: pre-wrap; } .findings { margin: 2px 0; padding-left: 1.2em; font-size: .88rem; }
.guidance { font-size: .88rem; margin: 2px 0; } .withheld { color: var(--retry); font-size: .88rem; margin: 2px 0; }
.marks { font-size: .88rem; white-space: normal; } .marks .who { font-weight: bold; }
.forced { margin-top: 2px; } .gold { color: #795548; }
.choices { font-size: .88rem; margin: 2px 0 8px; }
@media (max-width: 600px) {
  svg .lbl, svg .num { font-size: 20px; }
  body { padding: 8px; } .ab { grid-template-columns: 1fr; }
  th.who, td.who { width: 3.5em; } th.v, td.v { width: 5.2em; } table { font-size: .85rem; }
}
@media print { body { max-width: none; } h2 { break-after: avoid; } figure, tr { break-inside: avoid; } }
"#;

/// The page's Content-Security-Policy: nothing runs, nothing is fetched; inline styles and
/// data: images only (defence in depth: every text is escaped as well).
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                       base-uri 'none'; form-action 'none'";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"ja\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n",
        esc(title)
    )
}

/// `PASS` as a coloured badge.
pub fn badge(status: &str) -> String {
    let s = esc(status);
    format!("<span class=\"badge {s}\">{s}</span>")
}

/// A figure that could not be computed, saying why (never a blank or a 0 as if measured).
pub fn missing(what: &str, why: &str) -> String {
    format!("<p class=\"note\">{}: {}</p>", esc(what), esc(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bidirectional control goes, wherever it sits; the text around it stays.
    #[test]
    fn bidi_controls_are_dropped() {
        let controls = [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ];
        for c in controls {
            for name in [format!("{c}ken"), format!("ke{c}n"), format!("ken{c}")] {
                assert_eq!(esc(&name), "ken", "{:?}", name);
            }
        }
        assert_eq!(esc("やな<あゆ>"), "やな&lt;あゆ&gt;");
    }

    /// The page says what may run: nothing.
    #[test]
    fn every_page_carries_the_policy() {
        let p = page("t", "<p>x</p>");
        assert!(p.contains("Content-Security-Policy") && p.contains("default-src 'none'"));
        assert!(!CSP.contains("script-src"));
    }
}
