//! Table output for `kakeai patterns`: columns padded by display width (CJK is two columns).

use std::io::Write;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::patterns::db::ScoredPattern;
use crate::patterns::dropouts::Dropout;
use crate::patterns::exchange::PatternRecord;

/// Cuts `s` to at most `width` display columns, marking the cut with `…`.
pub(super) fn clip(s: &str, width: usize) -> String {
    let s = s.lines().next().unwrap_or("");
    if s.width() <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

pub(super) fn pad(s: &str, width: usize) -> String {
    let w = s.width();
    if w >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - w))
    }
}

fn cell(s: &str, width: usize) -> String {
    pad(&clip(s, width), width)
}

pub(super) fn patterns(rows: &[ScoredPattern], out: &mut dyn Write) -> std::io::Result<()> {
    if rows.is_empty() {
        return writeln!(out, "no patterns yet (kakeai patterns import FILE, or add)");
    }
    writeln!(
        out,
        "{:>5}  {:<4}  {}  {}  rank  score  success  likes  {:>4}  response",
        "id",
        "char",
        cell("type", 12),
        cell("message type", 12),
        "used"
    )?;
    for s in rows {
        let p = &s.pattern;
        writeln!(
            out,
            "{:>5}  {:<4}  {}  {}  {:<4}  {:.3}  {:>7.2}  {:>5.2}  {:>4}  {}{}",
            p.pattern_id,
            p.character.as_str(),
            cell(p.bot_response_type.as_str(), 12),
            cell(&p.user_message_type, 12),
            s.rank.as_str(),
            s.score,
            p.success_rate,
            p.like_rate,
            p.used_count,
            if p.is_counterfactual { "* " } else { "" },
            clip(&p.bot_response, 40)
        )?;
    }
    if rows.iter().any(|s| s.pattern.is_counterfactual) {
        writeln!(out, "* counterfactual (written after a dropout)")?;
    }
    Ok(())
}

pub(super) fn records(rows: &[PatternRecord], out: &mut dyn Write) -> std::io::Result<()> {
    for r in rows {
        writeln!(
            out,
            "{:<4}  {}  {}  {}",
            r.character,
            cell(&r.bot_response_type, 12),
            cell(&r.user_message_example, 24),
            clip(&r.bot_response, 40)
        )?;
    }
    Ok(())
}

pub(super) fn dropouts(rows: &[Dropout], out: &mut dyn Write) -> std::io::Result<()> {
    if rows.is_empty() {
        return writeln!(out, "no dropouts");
    }
    writeln!(
        out,
        "{:>5}  {}  {:<16}  {:<4}  {}  bot line",
        "id",
        cell("conversation", 12),
        "at",
        "char",
        cell("user line", 24)
    )?;
    for d in rows {
        let at: String =
            d.at.chars()
                .take(16)
                .map(|c| if c == 'T' { ' ' } else { c })
                .collect();
        writeln!(
            out,
            "{:>5}  {}  {:<16}  {:<4}  {}  {}{}",
            d.dropout_id,
            cell(&d.conversation_id, 12),
            at,
            d.character.map(|c| c.as_str()).unwrap_or("-"),
            cell(d.user_text.as_deref().unwrap_or("-"), 24),
            clip(&d.bot_text, 36),
            if d.accepted > 0 { "  (reviewed)" } else { "" }
        )?;
    }
    Ok(())
}
