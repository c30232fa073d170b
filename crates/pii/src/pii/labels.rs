//! Labels as context (Presidio-style context words, issue 40 §3). Beside numbers: a マイナンバー
//! or card candidate whose nearest label on its line names another kind of number (追跡番号,
//! 注文番号, 問い合わせ番号 …) is dropped; a label naming the kind itself (マイナンバー, カード番号)
//! keeps it; phone numbers are never lowered. As names: a word for a field or a channel (メアド,
//! アドレス, ライン …) is never a name by itself. Lists and window in
//! `assets/safety/pii_labels.toml`.

use std::sync::OnceLock;

use serde::Deserialize;

use super::view::View;
use super::{Cand, PiiKind};

const LABELS_TOML: &str = include_str!("../../../../assets/safety/pii_labels.toml");

#[derive(Deserialize)]
struct Labels {
    window: usize,
    other: Vec<String>,
    pii: Vec<String>,
    not_names: Vec<String>,
}

/// What a label says about the number beside it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Says {
    Other,
    Pii,
}

/// Labels as lower-case char vectors, longest first so 問い合わせ番号 wins over a shorter match.
struct Table {
    window: usize,
    labels: Vec<(Vec<char>, Says)>,
    not_names: std::collections::HashSet<String>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let l: Labels = toml::from_str(LABELS_TOML).expect("pii_labels.toml parses");
        let lower = |s: &String| {
            s.chars()
                .flat_map(char::to_lowercase)
                .collect::<Vec<char>>()
        };
        let mut labels: Vec<(Vec<char>, Says)> = l
            .other
            .iter()
            .map(|s| (lower(s), Says::Other))
            .chain(l.pii.iter().map(|s| (lower(s), Says::Pii)))
            .collect();
        labels.sort_by_key(|(c, _)| std::cmp::Reverse(c.len()));
        Table {
            window: l.window,
            labels,
            not_names: l.not_names.into_iter().collect(),
        }
    })
}

/// Drops the name candidates that are, whole, a word for a field or channel (メアド, ライン).
pub(super) fn retain_names(v: &View, cands: &mut Vec<Cand>) {
    let words = &table().not_names;
    cands.retain(|c| c.kind != PiiKind::Name || !words.contains(v.slice(c.s, c.e)));
}

/// Drops the マイナンバー and card candidates whose label says they are another number.
pub(super) fn retain_numbers(v: &View, cands: &mut Vec<Cand>) {
    if !cands
        .iter()
        .any(|c| matches!(c.kind, PiiKind::MyNumber | PiiKind::Card))
    {
        return;
    }
    let lower: Vec<char> = v.chars.iter().map(|&c| c.to_ascii_lowercase()).collect();
    cands.retain(|c| {
        !matches!(c.kind, PiiKind::MyNumber | PiiKind::Card)
            || label_near(&lower, c.s, c.e) != Some(Says::Other)
    });
}

/// The label nearest to `[s, e)` on its line within the window: before the number first (the
/// one ending closest to it), else after it (the one starting closest).
fn label_near(chars: &[char], s: usize, e: usize) -> Option<Says> {
    let t = table();
    let line_break = |c: &char| matches!(c, '\n' | '\r' | '。');
    let from = (s.saturating_sub(t.window)..s)
        .rev()
        .find(|&i| line_break(&chars[i]))
        .map_or(s.saturating_sub(t.window), |i| i + 1);
    let to = (e..chars.len().min(e + t.window))
        .find(|&i| line_break(&chars[i]))
        .unwrap_or(chars.len().min(e + t.window));
    let before = &chars[from..s];
    let after = &chars[e..to];
    let mut best: Option<(usize, Says)> = None;
    for (label, says) in &t.labels {
        if let Some(end) = last_end(before, label) {
            let gap = before.len() - end;
            if best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, *says));
            }
        }
    }
    if best.is_some() {
        return best.map(|(_, s)| s);
    }
    t.labels
        .iter()
        .filter_map(|(label, says)| first_start(after, label).map(|at| (at, *says)))
        .min_by_key(|&(at, _)| at)
        .map(|(_, s)| s)
}

/// Where the last occurrence of `needle` in `hay` ends.
fn last_end(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|&i| hay[i..i + needle.len()] == *needle)
        .map(|i| i + needle.len())
}

/// Where the first occurrence of `needle` in `hay` starts.
fn first_start(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

#[cfg(test)]
mod tests {
    use super::{Says, label_near, table};

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn every_listed_label_decides_a_number_before_and_after_it() {
        let num = "123456789018";
        for (label, says) in &table().labels {
            let label: String = label.iter().collect();
            for sep in ["", ":", "：", "は", " ", "、"] {
                let text = format!("{label}{sep}{num}");
                let c = chars(&text);
                let s = c.len() - 12;
                assert_eq!(label_near(&c, s, c.len()), Some(*says), "{text}");
            }
            let text = format!("{num}が{label}です");
            let c = chars(&text);
            assert_eq!(label_near(&c, 0, 12), Some(*says), "{text}");
        }
    }

    #[test]
    fn the_nearest_label_wins_and_lines_and_distance_end_a_label() {
        let c = chars("注文番号とマイナンバー 123456789018");
        assert_eq!(label_near(&c, c.len() - 12, c.len()), Some(Says::Pii));
        let c = chars("マイナンバーと注文番号 123456789018");
        assert_eq!(label_near(&c, c.len() - 12, c.len()), Some(Says::Other));
        let c = chars("追跡番号は明日。\n123456789018");
        assert_eq!(label_near(&c, c.len() - 12, c.len()), None);
        let far = format!("追跡番号{}123456789018", "あ".repeat(table().window));
        let c = chars(&far);
        assert_eq!(label_near(&c, c.len() - 12, c.len()), None);
    }
}
