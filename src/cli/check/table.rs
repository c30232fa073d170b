//! `check --format table`: a header, one row per judged line (written as lines are judged, so
//! memory stays constant), and a summary with counts per verdict at the end.

use std::io::Write;

use unicode_width::UnicodeWidthStr;

use super::Output;
use super::pipeline::Tally;
use crate::director::Status;
use crate::text::AnalyzerKind;

/// Truncates to a display width, marking the cut with …
fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return format!("{s}{}", " ".repeat(width - s.width()));
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    w += 1;
    out + &" ".repeat(width.saturating_sub(w))
}

pub fn header(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} {} {} {} {} {}  findings",
        fit("id", 6),
        fit("speaker", 7),
        fit("verdict", 8),
        fit("tone", 4),
        fit("l/s/t", 7),
        fit("text", 36)
    )
}

/// One row for a judged line.
pub fn row(out: &mut Vec<u8>, o: &Output, text: &str) -> std::io::Result<()> {
    let id = match &o.id {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let why = o
        .findings
        .iter()
        .filter(|f| f.status != Status::Info)
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect::<Vec<_>>()
        .join(" / ");
    writeln!(
        out,
        "{} {} {} {} {} {}  {}",
        fit(&id, 6),
        fit(o.speaker, 7),
        fit(o.verdict.as_str(), 8),
        fit(&format!("{}/3", o.tone.score), 4),
        fit(&format!("{}/{}/{}", o.lines, o.sentences, o.topics), 7),
        fit(&text.replace('\n', "⏎"), 36),
        why
    )
}

pub fn summary(
    out: &mut dyn Write,
    t: &Tally,
    ruleset: &str,
    analyzer: AnalyzerKind,
) -> std::io::Result<()> {
    let pass = t.count(Status::Pass) + t.count(Status::Info);
    let (warn, retry) = (t.count(Status::Warn), t.count(Status::Retry));
    let total: usize = t.by_status.iter().sum();
    let other = total - pass - warn - retry;
    writeln!(
        out,
        "\n{total} lines: PASS {pass} · WARN {warn} · RETRY {retry}{}   (ruleset {ruleset}, analyzer {analyzer})",
        if other > 0 {
            format!(" · other {other}")
        } else {
            String::new()
        }
    )
}
