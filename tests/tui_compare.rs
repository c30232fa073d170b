//! The compare view at 100×30 and 140×40 (insta snapshots, ratatui TestBackend): the summary
//! line on top, A and B side by side per turn with the verdict change badge and the diff; the
//! selection scrolls a long comparison. Fixture text mixes full-width, half-width katakana and
//! emoji.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::compare::db::{Header, Stored};
use kakeai::compare::outcome::{Brief, Side, TurnRow, change, diff, summarise};
use kakeai::director::{RuleId, Status};
use kakeai::tui::compare_view::{CompareView, render};
use kakeai::tui::theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn side(text: &str, status: Status, judge: Option<f64>, rules: &[RuleId]) -> Side {
    Side {
        text: text.into(),
        status,
        exhausted: false,
        tone: 2,
        findings: rules
            .iter()
            .map(|r| Brief {
                rule: *r,
                status,
                message: "理由".into(),
            })
            .collect(),
        judge: judge.map(|m| [m; 5]),
        judge_mean: judge,
        attempts: 1,
    }
}

fn stored() -> Stored {
    let pairs = [
        (
            "yana",
            side(
                "わ！坂の上から海が見えるじゃん😀",
                Status::Warn,
                Some(3.4),
                &[RuleId::Scatter],
            ),
            side(
                "わ！坂の上、ｷﾗｷﾗした海が見えるよね！",
                Status::Pass,
                Some(4.2),
                &[],
            ),
        ),
        (
            "ayu",
            side(
                "姉様、灯台までは二十分が目安です。",
                Status::Pass,
                Some(4.0),
                &[],
            ),
            side(
                "姉様、灯台までは二十分ほどです。\n途中で休みましょう。\nそれから…",
                Status::Retry,
                Some(2.0),
                &[RuleId::Lines],
            ),
        ),
        (
            "yana",
            side(
                "ほんと風が強いね、帽子飛んじゃうかも！",
                Status::Pass,
                Some(4.0),
                &[],
            ),
            side(
                "ほんと風が強いね、帽子飛んじゃうかも！",
                Status::Pass,
                Some(4.0),
                &[],
            ),
        ),
        (
            "ayu",
            side(
                "つまり、帽子は紐で留めるのが一番です。",
                Status::Pass,
                Some(3.8),
                &[],
            ),
            side(
                "要するに、帽子は紐で留めると安心です。",
                Status::Pass,
                Some(4.4),
                &[],
            ),
        ),
    ];
    let turns: Vec<TurnRow> = pairs
        .into_iter()
        .enumerate()
        .map(|(i, (sp, a, b))| TurnRow {
            turn: i + 1,
            speaker: sp.into(),
            change: change(&a, std::slice::from_ref(&b)),
            diff: diff(&a.text, &b.text),
            a,
            b: vec![b],
        })
        .collect();
    let summary = summarise(&turns, 0.05, &[]);
    Stored {
        id: 7,
        header: Header {
            kind: "paired".into(),
            baseline_run: Some(12),
            variant_name: "yana-terse".into(),
            variant_path: Some("terse.toml".into()),
            variant_text: String::new(),
            variant_hash: "a1b2c3d4e5f6".into(),
            model: Some("gemma2:27b".into()),
            endpoint: None,
            options: serde_json::json!({}),
            sample_runs: vec![13],
        },
        created_at: "2026-11-23T16:00:00Z".into(),
        turns,
        summary: Some(summary),
        unpaired: None,
    }
}

fn screen(v: &CompareView, w: u16, h: u16) -> String {
    let themes = theme::load_all().0;
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, f.area(), v, &themes[0])).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| {
            let mut row = String::new();
            let mut skip = 0;
            for x in 0..w {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let s = buf[(x, y)].symbol();
                skip = unicode_width::UnicodeWidthStr::width(s).saturating_sub(1);
                row.push_str(s);
            }
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn compare_view_snapshots_at_two_sizes() {
    let v = CompareView::new(stored());
    let s = screen(&v, 100, 30);
    assert!(s.contains("B better on 2 of 4 turns, worse on 1"), "{s}");
    assert!(s.contains("WARN→PASS") && s.contains("PASS→RETRY"), "{s}");
    insta::assert_snapshot!("compare_100x30", s);
    let s = screen(&v, 140, 40);
    insta::assert_snapshot!("compare_140x40", s);
}

#[test]
fn the_selection_scrolls_a_long_comparison() {
    let mut st = stored();
    let more: Vec<TurnRow> = (0..6)
        .flat_map(|k| {
            st.turns.clone().into_iter().map(move |mut r| {
                r.turn += 4 * (k + 1);
                r
            })
        })
        .collect();
    st.turns.extend(more);
    let mut v = CompareView::new(st);
    assert!(screen(&v, 100, 30).contains("T1 "));
    assert!(v.key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)));
    let s = screen(&v, 100, 30);
    assert!(s.contains("T28") && !s.contains("T1 "), "{s}");
    assert!(v.key(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE)));
    assert_eq!(v.row, 0);
    assert!(!v.key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE)));
}

#[test]
fn the_visibility_pane_shows_the_scorecard_beside_a_secret() {
    use kakeai::tui::keymap::Action;
    use kakeai::tui::vis::VisPane;
    use kakeai::vault::scorecard::Row;
    let mut a = workbench();
    let mut pane = VisPane::new(kakeai::vault::sample());
    pane.scorecard = vec![Row {
        secret: "SEC-AYU-01".into(),
        reader: "ayu".into(),
        level: 2,
        model: "gemma2:27b".into(),
        prompt_version: "p".into(),
        vault_version: "v".into(),
        current: true,
        reviewed: 40,
        without_semantic: 0,
        leaked: 3,
        warn: 1,
        retry: 2,
        info: 0,
    }];
    a.rooms.vis = Some(pane);
    for _ in 0..3 {
        a.act(Action::NextPane);
    }
    let mut t = Terminal::new(TestBackend::new(140, 40)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, &a)).unwrap();
    let s = t.backend().to_string();
    let flat: String = s.chars().filter(|c| *c != ' ' && *c != '"').collect();
    // Issue 27: the badge is never clipped by the pane width — it moves to its own line.
    assert!(flat.contains("◆SEC-AYU-011認識のみsecret"), "{s}");
    assert!(flat.contains("あゆL2·leaked3/40ongemma2:27b"), "{s}");
}

fn workbench() -> kakeai::tui::app::App {
    use kakeai::tui::app::Conn;
    let h = common::tui::header;
    common::tui::app(h(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        Conn::Down("no endpoint".into()),
        "0123456789ab",
        "/tmp/kakeai.db",
    ))
}

/// `kakeai --compare ID` and the runs browser's ctrl-o hand the workbench a loaded comparison:
/// it is drawn over the body with its summary, keys scroll it, Esc closes it; a failed load is
/// said in the status line and opens nothing.
#[test]
fn the_workbench_opens_and_closes_the_compare_view() {
    use kakeai::tui::app::UiMsg;
    let mut a = workbench();
    a.on_msg(UiMsg::Compare {
        ticket: a.tickets.compare,
        view: Box::new(Err(kakeai::tui::error::UiError::Missing(
            "run 3 has no comparison yet (kakeai compare --run 3 --variant FILE)".into(),
        ))),
    });
    assert!(a.compare.is_none());
    assert!(a.status.contains("no comparison"), "{}", a.status);
    a.on_msg(UiMsg::Compare {
        ticket: a.tickets.compare,
        view: Box::new(Ok(CompareView::new(stored()))),
    });
    let draw = |a: &kakeai::tui::app::App| {
        let mut t = Terminal::new(TestBackend::new(140, 40)).unwrap();
        t.draw(|f| kakeai::tui::render::draw(f, a)).unwrap();
        t.backend().to_string()
    };
    let s = draw(&a);
    assert!(s.contains("坂の上"), "{s}");
    a.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    assert_eq!(a.compare.as_ref().map(|v| v.row), Some(1));
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(a.compare.is_none());
    assert!(!draw(&a).contains("坂の上"));
}

/// Issue 23 item 6: A's column is padded with the shared width function, so the A│B separator
/// stays in one column when A holds ｶﾞ (it shifted 2 columns and B lost a character), and a
/// diff longer than its row ends with "…".
#[test]
fn half_width_voiced_kana_keep_the_separator_in_its_column() {
    let mut s = stored();
    let a_text = "ｶﾞｷﾞｸﾞｹﾞｺﾞ、ﾊﾟﾋﾟﾌﾟﾍﾟﾎﾟ！ｶﾞｯｺｳの坂の上から海が見えるじゃん、ﾀﾞﾝﾃﾞｨ";
    let b_text = "ｷﾗｷﾗした海だよ、坂の上から見ると最高なんだから！ねえ聞いてる？";
    s.turns[0].a.text = a_text.into();
    s.turns[0].b[0].text = b_text.into();
    s.turns[0].diff = diff(a_text, b_text);
    let v = CompareView::new(s);
    let themes = theme::load_all().0;
    for (w, h) in [(80u16, 24u16), (100, 30), (140, 40)] {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| render(f, f.area(), &v, &themes[0])).unwrap();
        let buf = term.backend().buffer();
        let col = (w as usize - 3) / 2;
        let mut rows_b = String::new();
        for y in 0..h {
            let cells: Vec<&str> = (0..w).map(|x| buf[(x, y)].symbol()).collect();
            let row: String = cells.concat();
            let Some(x) = (1..w as usize - 1)
                .find(|&x| cells[x] == "│" && cells[x - 1] == " " && cells[x + 1] == " ")
            else {
                continue;
            };
            assert_eq!(x, col + 1, "{w}×{h} row {y}: separator at {x}: {row}");
            rows_b.push_str(cells[x + 2..].concat().trim_end());
        }
        // B is whole on its side (no character lost to a shifted separator).
        let b_cells: String = rows_b.chars().filter(|c| *c != ' ').collect();
        assert!(
            b_cells.contains("ﾝだから！ねえ聞いてる？") || b_cells.contains("ねえ聞いてる？"),
            "{w}×{h}: {rows_b}"
        );
        assert!(b_cells.contains("ｷﾗｷﾗした海だよ"), "{w}×{h}: {rows_b}");
        // The diff row is cut with "…" within the width.
        let diff_row = (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .find(|r| r.starts_with("  diff "))
            .unwrap();
        // (At 140 columns this diff fits whole.)
        assert_eq!(
            diff_row.trim_end().ends_with('…'),
            w < 140,
            "{w}×{h}: {diff_row}"
        );
    }
}

/// Issue 23 item 7: Esc closes the topmost thing — the endpoint error box drawn over the
/// compare view goes first, then the view.
#[test]
fn esc_closes_the_error_box_over_the_compare_view_first() {
    use kakeai::tui::app::UiMsg;
    let mut a = workbench();
    a.on_msg(UiMsg::Compare {
        ticket: a.tickets.compare,
        view: Box::new(Ok(CompareView::new(stored()))),
    });
    a.errors
        .push("connection refused (http://127.0.0.1:11434/api/tags)".into());
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(a.errors.is_empty(), "the error box stays open");
    assert!(
        a.compare.is_some(),
        "Esc closed the compare view under the error box"
    );
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(a.compare.is_none());
}
