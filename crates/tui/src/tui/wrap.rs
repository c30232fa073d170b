//! Wrapping by display width, cluster by cluster (Japanese has no spaces, so ratatui's word
//! wrap cannot be used, ratatui #1199), with 禁則: a break moves earlier rather than start a
//! line with 。、」）！？ー or end one with 「（, and an English word moves to the next line whole
//! when it fits there. Only when a line has no allowed break is it cut at the width — or when
//! moving the break would leave one cluster alone on a row and the next row is cut at the width
//! all the same (`う|わーーーー…` becomes `うわー|ーーー…`). Rows
//! concatenate back to the input: nothing is inserted or dropped. Widths come from
//! `text::width`, the measure the drawing uses.

use super::kinsoku::may_break;
use crate::text::width::graphemes;

/// Splits `text` into rows of at most `width` columns; explicit newlines start new rows.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    for line in text.split('\n') {
        wrap_line(line, width, &mut rows);
    }
    rows
}

/// The byte ranges of the rows of one line (no newlines in it).
pub fn line_breaks(line: &str, width: usize) -> Vec<std::ops::Range<usize>> {
    let width = width.max(2);
    let gs: Vec<(usize, &str, usize)> = {
        let mut at = 0;
        graphemes(line)
            .map(|(g, w)| {
                let r = (at, g, w);
                at += g.len();
                r
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut start = 0; // index into gs of the row's first cluster
    let mut w = 0;
    let mut i = 0;
    while i < gs.len() {
        let gw = gs[i].2;
        if w + gw <= width || i == start {
            w += gw;
            i += 1;
            continue;
        }
        // Cluster i does not fit: break at the last allowed place in (start, i] — unless that
        // leaves one cluster alone on this row while the next row is cut at the width anyway.
        let b = (start + 1..=i)
            .rev()
            .find(|&b| may_break(gs[b - 1].1, gs[b].1))
            .filter(|&b| b - start > 1 || b == i || fits_unbroken(&gs[b..], width))
            .unwrap_or(i);
        out.push(gs[start].0..gs[b].0);
        start = b;
        w = gs[start..i].iter().map(|g| g.2).sum();
    }
    out.push(gs.get(start).map(|g| g.0).unwrap_or(line.len())..line.len());
    out
}

/// The run of clusters up to the next allowed break fits in `width` (so a row can hold it).
fn fits_unbroken(gs: &[(usize, &str, usize)], width: usize) -> bool {
    let mut w = 0;
    for (k, g) in gs.iter().enumerate() {
        if k > 0 && may_break(gs[k - 1].1, g.1) {
            return true;
        }
        w += g.2;
        if w > width {
            return false;
        }
    }
    true
}

fn wrap_line(line: &str, width: usize, rows: &mut Vec<String>) {
    rows.extend(
        line_breaks(line, width)
            .into_iter()
            .map(|r| line[r].to_string()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::width::width as cols;
    use crate::tui::kinsoku::{no_end, no_start, wordish};

    #[test]
    fn wide_characters_count_twice_and_newlines_break() {
        assert_eq!(wrap("あいうえお", 4), ["あい", "うえ", "お"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
        // A wide character never splits across rows even when one column is left.
        assert_eq!(wrap("aあい", 4), ["aあ", "い"]);
    }

    #[test]
    fn kinsoku_moves_the_break_earlier() {
        // 。 would start row 2: the character before it goes down with it.
        assert_eq!(wrap("あいう。えお", 6), ["あい", "う。え", "お"]);
        // 「 would end row 1.
        assert_eq!(wrap("あい「うえ」", 6), ["あい", "「う", "え」"]);
        assert_eq!(wrap("そうだね、うん", 8), ["そうだ", "ね、うん"]);
        // A run of closing marks longer than a row cannot be helped: cut at the width.
        assert_eq!(wrap("」」」」", 4), ["」」", "」」"]);
    }

    #[test]
    fn english_words_stay_whole_when_they_fit() {
        assert_eq!(wrap("so natural", 8), ["so ", "natural"]);
        assert_eq!(wrap("すごくnaturalだね", 10), ["すごく", "naturalだ", "ね"]);
        // Longer than a row: cut where it must be.
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    }

    #[test]
    fn clusters_stay_together() {
        assert_eq!(wrap("ｶﾞﾗｶﾞﾗ", 3), ["ｶﾞﾗ", "ｶﾞﾗ"]);
        assert_eq!(wrap("ｶﾞﾗｶﾞﾗ", 2), ["ｶﾞ", "ﾗ", "ｶﾞ", "ﾗ"]);
        assert_eq!(
            wrap("👨\u{200d}👩\u{200d}👧👍", 3),
            ["👨\u{200d}👩\u{200d}👧", "👍"]
        );
        assert_eq!(
            wrap("e\u{301}e\u{301}e\u{301}", 2),
            ["e\u{301}e\u{301}", "e\u{301}"]
        );
    }

    #[test]
    fn a_lone_cluster_is_not_left_when_the_next_row_is_cut_anyway() {
        // 禁則 would leave う alone and わーー… is cut at the width all the same.
        assert_eq!(wrap("うわーーーー", 6), ["うわー", "ーーー"]);
        assert_eq!(wrap("ねえっっっっ", 6), ["ねえっ", "っっっ"]);
        assert_eq!(wrap("そう」」」」」", 6), ["そう」", "」」」", "」"]);
        // When the rest fits on the next row, 禁則 still moves the break.
        assert_eq!(wrap("あいう。えお", 6), ["あい", "う。え", "お"]);
        assert_eq!(wrap("うわーー", 6), ["う", "わーー"]);
    }

    /// Long-vowel runs, small kana and closing marks at several widths: a row holds a single
    /// cluster it had room beside only when the row after it ends at an allowed break (it is not
    /// cut at the width anyway).
    #[test]
    fn generated_no_lone_cluster_before_a_forced_cut() {
        let heads = ["う", "わ", "あい", "ね、", "「あ", "ab", "やった"];
        let runs = ["ー", "っ", "ゃ", "」", "。", "、", "ァ", "）"];
        for head in heads {
            for run in runs {
                for n in 1..=12 {
                    for tail in ["", "あ", "よ。", " ok"] {
                        let s = format!("{head}わ{}{tail}", run.repeat(n));
                        for width in 2..=14 {
                            check_no_lone_cluster(&s, width);
                        }
                    }
                }
            }
        }
    }

    fn check_no_lone_cluster(s: &str, width: usize) {
        let rows = wrap(s, width);
        assert_eq!(rows.concat(), s);
        for k in 0..rows.len().saturating_sub(2) {
            let here: Vec<&str> = graphemes(&rows[k]).map(|(g, _)| g).collect();
            let next: Vec<&str> = graphemes(&rows[k + 1]).map(|(g, _)| g).collect();
            let after: Vec<&str> = graphemes(&rows[k + 2]).map(|(g, _)| g).collect();
            let room = cols(&rows[k]) + cols(next[0]) <= width;
            if here.len() == 1 && room {
                assert!(
                    may_break(next[next.len() - 1], after[0]),
                    "{s:?} at {width}: {:?} alone before {:?} | {:?}",
                    rows[k],
                    rows[k + 1],
                    rows[k + 2]
                );
            }
        }
    }

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        crate::test_rng::words(seed)
    }

    const PARTS: [&str; 24] = [
        "あ",
        "漢字",
        "カタカナ",
        "ｶﾞﾗｶﾞﾗ",
        "ﾊﾟﾝ",
        "。",
        "、",
        "」",
        "「",
        "（",
        "）",
        "！",
        "？",
        "ー",
        "っ",
        "👍",
        "❤\u{fe0f}",
        "👨\u{200d}👩\u{200d}👧",
        "e\u{301}",
        "word",
        " ",
        "natural",
        "ok",
        "か\u{3099}",
    ];

    /// Random mixed strings at random widths: rows fit, concatenate to the input, never cut a
    /// cluster or a word that fits, and start/end with a forbidden cluster only when the row had
    /// no allowed break.
    #[test]
    fn property_rows_fit_rebuild_the_input_and_respect_kinsoku() {
        let mut next = rng(20260523);
        for _ in 0..4000 {
            let n = (next() % 30) as usize;
            let s: String = (0..n)
                .map(|_| PARTS[(next() % PARTS.len() as u64) as usize])
                .collect();
            let width = 2 + (next() % 30) as usize;
            let rows = wrap(&s, width);
            assert_eq!(rows.concat(), s, "width {width}: {s:?}");
            let gs: Vec<&str> = graphemes(&s).map(|(g, _)| g).collect();
            let mut at = 0;
            let mut prev_at = 0;
            for (k, r) in rows.iter().enumerate() {
                assert!(cols(r) <= width, "row {r:?} wider than {width} in {s:?}");
                let rg: Vec<&str> = graphemes(r).map(|(g, _)| g).collect();
                // Row boundaries fall between the input's clusters.
                assert_eq!(&gs[at..at + rg.len()], rg.as_slice(), "{s:?}");
                let row_at = at;
                at += rg.len();
                let prev_start = std::mem::replace(&mut prev_at, row_at);
                if k == 0 || rg.is_empty() {
                    continue;
                }
                let prev = graphemes(&rows[k - 1]).map(|(g, _)| g).collect::<Vec<_>>();
                let (last, first) = (prev[prev.len() - 1], rg[0]);
                let forced = no_start(first) || no_end(last) || (wordish(last) && wordish(first));
                if forced {
                    // Allowed only when the previous row had no allowed break of its own.
                    let last_ok = (1..prev.len())
                        .rev()
                        .find(|&b| may_break(prev[b - 1], prev[b]));
                    // Or its only break would leave one cluster alone, and the run after that
                    // break is wider than a row (cut at the width anyway).
                    let lone = last_ok == Some(1) && {
                        let g = prev_start + 1;
                        let end = (g + 1..gs.len())
                            .find(|&e| may_break(gs[e - 1], gs[e]))
                            .unwrap_or(gs.len());
                        gs[g..end].iter().map(|c| cols(c)).sum::<usize>() > width
                    };
                    let full = cols(&rows[k - 1]) + cols(first) > width;
                    assert!(
                        (last_ok.is_none() || lone) && full,
                        "avoidable break {:?} | {:?} at width {width} in {s:?}",
                        rows[k - 1],
                        r
                    );
                }
            }
        }
    }
}
