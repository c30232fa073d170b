//! The review marks in force on a turn, readable: who, when, and what — 👍/👎, an override
//! from→to with its reason, a feedback note's category, description and fix. Read from the
//! review log (stored actions and this session's), undos applied as the store's fold applies
//! them. Pure: the detail pane draws the lines.

use ratatui::style::Style;
use ratatui::text::Line;

use super::queue::LogEntry;
use super::theme::Theme;
use super::wrap::wrap;
use crate::store::ActionKind;
use crate::store::review::undone_kind;

/// The log entries of `turn` still in force, oldest first (an undo takes back the latest mark
/// of its kind on its turn, as `store::review::fold` does).
pub fn in_force(log: &[LogEntry], turn: u32) -> Vec<&LogEntry> {
    let mut live: Vec<&LogEntry> = Vec::new();
    for e in log.iter().filter(|e| e.0 == turn) {
        match e.1 {
            ActionKind::Thumb | ActionKind::Override | ActionKind::Feedback | ActionKind::Note => {
                live.push(e)
            }
            ActionKind::Undo => {
                if let Some(k) = undone_kind(&e.2)
                    && let Some(i) = live.iter().rposition(|m| m.1 == k)
                {
                    live.remove(i);
                }
            }
            _ => {}
        }
    }
    live
}

fn field<'a>(p: &'a serde_json::Value, k: &str) -> &'a str {
    p.get(k).and_then(|v| v.as_str()).unwrap_or("")
}

/// "2026-08-01 19:03" from a stored ISO time (the time as stored when it does not parse).
fn when(at: &str) -> String {
    match (at.get(..10), at.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => at.to_string(),
    }
}

/// One mark as text: "taro 2026-08-01 19:03 override WARN→PASS: reason".
pub fn describe(e: &LogEntry) -> Vec<String> {
    let who = e.3.as_deref().unwrap_or("(unnamed)");
    let head = format!("{who} {}", when(&e.4));
    let p = &e.2;
    match e.1 {
        ActionKind::Thumb => {
            let up = p.get("up").and_then(|v| v.as_bool());
            let t = match up {
                Some(true) => "👍",
                Some(false) => "👎",
                None => "thumb (unreadable)",
            };
            vec![format!("{head} {t}")]
        }
        ActionKind::Override => {
            let from = p.get("from").and_then(|v| v.as_str()).unwrap_or("?");
            let to = field(p, "to");
            let verb = if from == to {
                format!("confirmed {to}")
            } else {
                format!("override {from}→{to}")
            };
            let reason = field(p, "reason");
            if reason.is_empty() {
                vec![format!("{head} {verb} (no reason given)")]
            } else {
                vec![format!("{head} {verb}: {reason}")]
            }
        }
        _ => {
            let mut out = vec![format!("{head} feedback [{}]", field(p, "issue_type"))];
            for (k, label) in [("description", "issue"), ("suggested_fix", "fix")] {
                let v = field(p, k);
                if !v.is_empty() {
                    out.push(format!("  {label}: {v}"));
                }
            }
            out
        }
    }
}

/// The detail pane's "marks" block: one entry per mark in force (empty when there is none).
pub fn lines(entries: &[&LogEntry], width: usize, t: &Theme) -> Vec<Line<'static>> {
    if entries.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Line::styled("marks", Style::new().fg(t.dim))];
    for e in entries {
        for text in describe(e) {
            for r in wrap(&text, width) {
                out.push(Line::styled(r, Style::new().fg(t.text)));
            }
        }
    }
    out
}

/// Each named reviewer's 👍/👎 in force on `turn` (her latest thumb still in force), by name:
/// a row with several reviewers shows every one of them, not only the latest.
pub fn thumbs_by(log: &[LogEntry], turn: u32) -> Vec<(String, bool)> {
    let mut by: std::collections::BTreeMap<String, bool> = Default::default();
    for e in in_force(log, turn) {
        if let (ActionKind::Thumb, Some(who), Some(up)) =
            (e.1, e.3.as_ref(), e.2.get("up").and_then(|v| v.as_bool()))
        {
            by.insert(who.clone(), up);
        }
    }
    by.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn e(turn: u32, kind: ActionKind, p: serde_json::Value, who: &str) -> LogEntry {
        (
            turn,
            kind,
            p,
            Some(who.into()),
            "2026-08-01T19:03:00.000Z".into(),
        )
    }

    #[test]
    fn every_field_of_a_mark_is_readable() {
        let o = e(
            2,
            ActionKind::Override,
            json!({"from": "WARN", "to": "PASS", "reason": "姉様らしい"}),
            "taro",
        );
        assert_eq!(
            describe(&o),
            ["taro 2026-08-01 19:03 override WARN→PASS: 姉様らしい"]
        );
        let f = e(
            2,
            ActionKind::Feedback,
            json!({"issue_type": "tone", "description": "硬い", "suggested_fix": "もっと砕けて"}),
            "花子",
        );
        assert_eq!(
            describe(&f),
            [
                "花子 2026-08-01 19:03 feedback [tone]",
                "  issue: 硬い",
                "  fix: もっと砕けて"
            ]
        );
        let same = e(
            2,
            ActionKind::Override,
            json!({"from": "PASS", "to": "PASS"}),
            "taro",
        );
        assert_eq!(
            describe(&same),
            ["taro 2026-08-01 19:03 confirmed PASS (no reason given)"]
        );
    }

    #[test]
    fn undone_marks_are_not_in_force() {
        let up = json!({"up": true});
        let log = vec![
            e(1, ActionKind::Thumb, up.clone(), "taro"),
            e(
                1,
                ActionKind::Feedback,
                json!({"issue_type": "tone"}),
                "taro",
            ),
            e(1, ActionKind::Undo, json!({"undo": "thumb"}), "taro"),
            e(2, ActionKind::Thumb, up, "taro"),
        ];
        let live = in_force(&log, 1);
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].1, ActionKind::Feedback);
        assert_eq!(in_force(&log, 2).len(), 1);
        assert!(in_force(&log, 3).is_empty());
    }

    #[test]
    fn each_reviewers_thumb_in_force_is_kept() {
        let (up, down) = (json!({"up": true}), json!({"up": false}));
        let log = vec![
            e(1, ActionKind::Thumb, up.clone(), "taro"),
            e(1, ActionKind::Thumb, down.clone(), "花子"),
            e(1, ActionKind::Thumb, down.clone(), "taro"),
            e(2, ActionKind::Thumb, up.clone(), "jiro"),
            e(1, ActionKind::Thumb, up.clone(), "jiro"),
            e(1, ActionKind::Undo, json!({"undo": "thumb"}), "jiro"),
            (1, ActionKind::Thumb, up.clone(), None, String::new()),
        ];
        assert_eq!(
            thumbs_by(&log, 1),
            [("taro".to_string(), false), ("花子".to_string(), false)]
        );
        assert_eq!(thumbs_by(&log, 2), [("jiro".to_string(), true)]);
        assert!(thumbs_by(&log, 3).is_empty());
    }
}
