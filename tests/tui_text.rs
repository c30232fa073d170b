//! Text on the workbench's screen is never cut silently, and blind review stays blind: the
//! visibility preview scrolls to its last row and says where it is, its footer names all four
//! levels, the header's leak notice survives 80 columns, a refused ctrl-n puts its advice first,
//! the detail pane's timeline and hook line flow or end in `…`, a refused connection's advice
//! shows once, and in blind review `T` is refused and other reviewers' marks arrive unannounced.
//! Sizes 80×24 … 140×40; texts mix kanji, half-width katakana (ｶﾞ) and emoji.

mod common;

#[path = "review_fixture/mod.rs"]
mod review_fixture;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kakeai::director::{self, RuleSet};
use kakeai::duo::Effect;
use kakeai::duo::prompt::Prompt;
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use kakeai::duo::topic::DepthStep;
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::text::width::width;
use kakeai::tui::app::{App, Command, Conn, Pane, UiMsg};
use kakeai::tui::keymap::Action;
use kakeai::tui::vis::VisPane;
use kakeai::vault;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const SIZES: [(u16, u16); 4] = [(80, 24), (100, 30), (120, 40), (140, 40)];

fn app(conn: Conn) -> App {
    common::tui::app(common::tui::header(
        "http://127.0.0.1:11434",
        "gemma2:27b",
        conn,
        "0123456789ab",
        "/tmp/kakeai.db",
    ))
}

fn up() -> Conn {
    Conn::Up {
        api: "ollama".into(),
    }
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// The screen's rows as a terminal shows them (a wide character's hidden half left out).
fn rows(app: &App, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| kakeai::tui::render::draw(f, app)).unwrap();
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < w {
                let sym = buf[(x, y)].symbol();
                row.push_str(sym);
                x += width(sym).max(1) as u16;
            }
            row
        })
        .collect()
}

/// The right pane's inner rows (between its borders), below the frame's top.
fn right(rows: &[String]) -> Vec<String> {
    rows.iter()
        .skip(3)
        .filter_map(|r| r.split("││").nth(1))
        .map(|r| r.strip_suffix('│').unwrap_or(r).to_string())
        .collect()
}

/// Seeded strings mixing kanji, kana, half-width katakana with voicing marks, emoji a terminal
/// draws as one glyph, Latin words and punctuation.
fn mixed(seed: u64, n: usize) -> String {
    const PARTS: [&str; 12] = [
        "漢字",
        "かな",
        "ｶﾞﾗｶﾞﾗ",
        "ﾊﾟﾝ",
        "👍",
        "🍞",
        "word ",
        "「引用」",
        "。",
        "、",
        "ー",
        "ok",
    ];
    let mut next = kakeai_testkit::words(seed);
    (0..n)
        .map(|_| PARTS[(next() % PARTS.len() as u64) as usize])
        .collect()
}

// ── 1. the visibility preview ─────────────────────────────────────────────────────────────

/// The sample work with one of あゆ's sections (which やな is told) holding `text`.
fn work_with(text: &str) -> vault::Work {
    let mut w = vault::sample();
    let e = w.entities.iter_mut().find(|e| e.name == "あゆ").unwrap();
    let s = e
        .sections
        .iter_mut()
        .find(|s| s.name == "基本情報")
        .unwrap();
    s.text = text.to_string();
    assert!(
        w.context(Some("yana")).prompt.contains(text),
        "not in the prompt"
    );
    w
}

/// `9–16/40 · …`: the first and last row shown and how many there are.
fn position(row: &str) -> Option<(usize, usize, usize)> {
    let (span, _) = row.trim_end().split_once(" · ")?;
    let (a, rest) = span.split_once('–')?;
    let (b, n) = rest.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?, n.parse().ok()?))
}

fn no_space(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// PgDn pages the preview from its first row to its last (the tree's selection stays), the
/// row under it says where it is, and every row of the prompt shows on some page; the heading
/// and the position row fit or end in `…`.
#[test]
fn the_visibility_preview_pages_to_its_end_and_says_where_it_is() {
    for (k, &(w, h)) in SIZES.iter().enumerate() {
        for seed in 0..3u64 {
            let text = format!("{}\n{}", mixed(seed * 7 + k as u64, 60), mixed(seed, 25));
            let mut a = app(up());
            a.rooms.vis = Some(VisPane::new(work_with(&text)));
            a.pane = Pane::Visibility;
            a.act(Action::NextTurn);
            let row = a.rooms.vis.as_ref().unwrap().row;
            let mut seen: Vec<Option<String>> = Vec::new();
            let mut pages = 0;
            loop {
                let pane = right(&rows(&a, w, h));
                let head = pane.iter().position(|r| r.contains("is told")).unwrap();
                let heading = pane[head].trim_end();
                assert!(heading.ends_with(')') || heading.ends_with('─') || heading.ends_with('…'));
                let last = pane.iter().rposition(|r| !r.trim().is_empty()).unwrap();
                let Some((first, end, n)) = position(&pane[last]) else {
                    panic!(
                        "{w}×{h}: the preview fits, no position row:\n{}",
                        pane.join("\n")
                    )
                };
                seen.resize(n, None);
                let body = &pane[head + 1..last];
                assert_eq!(body.len(), end + 1 - first, "{w}×{h}: {}", pane[last]);
                for (i, r) in body.iter().enumerate() {
                    seen[first - 1 + i] = Some(r.clone());
                }
                let done = pane[last].contains("end");
                assert!(done || pane[last].contains("PgDn"), "{}", pane[last]);
                if done {
                    break;
                }
                a.act(Action::PageDown);
                pages += 1;
                assert!(pages < 100, "{w}×{h}: PgDn never reached the end");
                assert_eq!(
                    a.rooms.vis.as_ref().unwrap().row,
                    row,
                    "PgDn moved the tree"
                );
            }
            assert!(pages > 0);
            assert!(
                seen.iter().all(Option::is_some),
                "{w}×{h}: a row never showed"
            );
            let shown: String = seen.into_iter().flatten().collect();
            let vis = a.rooms.vis.as_ref().unwrap();
            let prompt = vis.work.context(Some("yana")).prompt;
            assert!(
                no_space(&shown).ends_with(&no_space(&prompt)),
                "{w}×{h}: the prompt lost text on the way to the screen"
            );
            // Back to the top.
            for _ in 0..pages {
                a.act(Action::PageUp);
            }
            assert_eq!(a.rooms.vis.as_ref().unwrap().preview.top, 0);
        }
    }
}

/// `l` gives the preview the focus and the status names the keys that now scroll it; j then
/// scrolls one row and the tree's selection stays; `l` again gives j back to the tree.
#[test]
fn with_the_focus_j_and_k_scroll_the_preview_as_the_status_says() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = app(up());
        a.rooms.vis = Some(VisPane::new(work_with(&mixed(1, 80))));
        a.pane = Pane::Visibility;
        a.on_key(key('l'));
        assert!(a.status.contains("j/k PgUp/PgDn scroll it"), "{}", a.status);
        let row = a.rooms.vis.as_ref().unwrap().row;
        let at = |a: &App| {
            let pane = right(&rows(a, w, h));
            pane.iter().rev().find_map(|r| position(r)).unwrap()
        };
        assert_eq!(at(&a).0, 1);
        a.on_key(key('j'));
        a.on_key(key('j'));
        assert_eq!(at(&a).0, 3, "{w}×{h}");
        a.on_key(key('k'));
        assert_eq!(at(&a).0, 2);
        assert_eq!(a.rooms.vis.as_ref().unwrap().row, row);
        a.on_key(key('l'));
        a.on_key(key('j'));
        assert_eq!(a.rooms.vis.as_ref().unwrap().row, row + 1);
        assert_eq!(at(&a).0, 2, "the tree's j scrolled the preview");
    }
}

/// The footer names all four levels and still ends in `v:pane q:quit` at 100 columns.
#[test]
fn the_visibility_footer_lists_every_level_and_keeps_pane_and_quit_at_100_columns() {
    let mut a = app(up());
    a.rooms.vis = Some(VisPane::new(vault::sample()));
    a.pane = Pane::Visibility;
    for (w, h) in [(100, 30), (120, 40), (140, 40)] {
        let r = rows(&a, w, h);
        let foot = r.last().unwrap().trim_end();
        for level in ["0:hide", "1:notice", "2:ref", "3:use"] {
            assert!(foot.contains(level), "{w}: {foot}");
        }
        assert!(foot.ends_with("v:pane q:quit"), "{w}: {foot}");
    }
    let r = rows(&a, 80, 24);
    let foot = r.last().unwrap().trim_end();
    assert!(
        foot.ends_with('…') && width(foot) <= 80,
        "cut without …: {foot}"
    );
}

// ── 2. the header's leak notice ───────────────────────────────────────────────────────────

#[test]
fn the_leak_notice_survives_80_columns_whatever_else_the_header_holds() {
    let dbs = [
        "/tmp/kakeai.db",
        "/home/reviewer/とても長いフォルダ名/ｶﾞﾗｶﾞﾗ/👍/kakeai-review-store.db",
        "postgres://kakeai:secret@db.example.internal:5432/kakeai_reviews_2026",
    ];
    for db in dbs {
        for (reviewer, blind) in [(None, false), (Some("さくら👍ｶﾞ"), true)] {
            let mut a = common::tui::app(common::tui::header(
                "http://127.0.0.1:11434",
                "gemma2:27b",
                up(),
                "0123456789ab",
                db,
            ));
            a.leak_note = Some("no semantic check".into());
            a.reviewer = reviewer.map(str::to_string);
            a.blind = blind;
            for (w, h) in SIZES {
                let r = rows(&a, w, h);
                assert!(r[1].contains("leak: no semantic check"), "{w}: {}", r[1]);
                let line = r[1].trim_end();
                // Cut (the db path) only with `…`.
                assert!(
                    width(line) < usize::from(w) || line.ends_with('…'),
                    "{line}"
                );
            }
        }
    }
}

// ── 3. the ctrl-n refusal ─────────────────────────────────────────────────────────────────

/// A refused connection as long as real ones are, with mixed text in its detail.
fn long_why(seed: u64) -> String {
    format!(
        "connection refused (http://127.0.0.1:11434, model gemma2:27b): {} — start the server \
         (`ollama serve`), or pass --endpoint with its URL",
        mixed(seed, 12)
    )
}

#[test]
fn a_refused_ctrl_n_puts_its_advice_in_the_footer_and_its_reason_in_the_error_box() {
    for seed in 0..3 {
        for conn in [Conn::Down(long_why(seed)), Conn::Answered(long_why(seed))] {
            for (w, h) in [(80, 24), (120, 40)] {
                let mut a = app(Conn::Probing);
                a.on_msg(UiMsg::Connection(conn.clone()));
                // Dismissed (or never raised): ctrl-n brings the reason back, once.
                while !a.errors.is_empty() {
                    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
                }
                a.status.clear();
                assert!(a.on_key(ctrl('n')).is_empty());
                assert!(a.on_key(ctrl('n')).is_empty());
                assert_eq!(a.errors.len(), 1, "{:?}", a.errors);
                let r = rows(&a, w, h);
                let foot = r.last().unwrap();
                assert!(
                    foot.contains("R probes again, d plays the demo"),
                    "{w}: the advice is cut: {foot}"
                );
                let screen = r.join("\n");
                assert!(screen.contains("error · Esc dismisses"), "{screen}");
                assert!(!foot.contains("connection refused"), "{foot}");
            }
        }
    }
}

// ── 4. the detail pane's timeline and hook line ───────────────────────────────────────────

fn fx(app: &mut App, e: Effect) {
    app.on_msg(UiMsg::Effect(Box::new(e)));
}

fn attempt(app: &mut App, turn: usize, n: usize, text: &str, done: bool) {
    fx(
        app,
        Effect::Generate {
            turn,
            speaker: "yana".into(),
            attempt: n,
            prompt: Prompt {
                messages: vec![],
                dropped: 0,
                chars: 0,
                hash: String::new(),
            },
            guidance: vec![],
        },
    );
    if !done {
        return;
    }
    let rules = RuleSet::builtin().unwrap();
    let v = director::judge(
        &rules,
        &FallbackAnalyzer,
        rules.character("yana").unwrap(),
        &Analysis::new(text),
        &[],
    );
    fx(
        app,
        Effect::AttemptDone(Box::new(AttemptRecord {
            turn,
            speaker: "yana".into(),
            attempt: n,
            text: text.into(),
            verdict: v,
            judge: None,
            guidance: vec![],
            prompt_hash: String::new(),
            stats: GenStats::default(),
            keywords: vec![],
            analysis: None,
        })),
    );
}

/// A turn of `tries` attempts, the last still generating or committed under `hook`.
fn turn_app(tries: usize, hook: Option<&str>) -> App {
    let mut a = app(up());
    a.on_msg(UiMsg::RunStarted {
        run_id: 1,
        topic: "坂の上".into(),
    });
    fx(
        &mut a,
        Effect::TurnStarted {
            turn: 1,
            speaker: "yana".into(),
        },
    );
    let bad = "えっと、その、つまり、あの、ですね、ええと、はい。えっと、その、つまり。";
    for n in 1..tries {
        attempt(&mut a, 1, n, bad, true);
    }
    let good = "ねえ、駅前のパン屋さん、新しいメロンパン出てたよ！";
    attempt(&mut a, 1, tries, good, hook.is_some());
    if let Some(hook) = hook {
        let rules = RuleSet::builtin().unwrap();
        let c = rules.character("yana").unwrap();
        let v = director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(good), &[]);
        let flags = TurnFlags {
            exhausted: true,
            futile: true,
            ..TurnFlags::default()
        };
        fx(
            &mut a,
            Effect::TurnCommitted(Box::new(TurnRecord {
                turn: 1,
                speaker: "yana".into(),
                attempt: tries,
                text: good.into(),
                verdict: v,
                flags,
                hook: Some(hook.into()),
                depth: 2,
                step: DepthStep::Surface,
            })),
        );
    }
    a
}

/// Every attempt of the timeline shows whole on some row (they flow onto further rows), and a
/// hook line wider than the pane ends in `…`; no row of the detail pane fills it to the border
/// without being one of these.
#[test]
fn the_timeline_and_hook_line_flow_or_end_in_an_ellipsis() {
    for tries in 1..=6 {
        for seed in 0..4u64 {
            let hook = mixed(seed + 40, 4 + 6 * seed as usize);
            for committed in [false, true] {
                let a = turn_app(tries, committed.then_some(hook.as_str()));
                for (w, h) in SIZES {
                    let pane = right(&rows(&a, w, h));
                    let room = pane[0]
                        .chars()
                        .map(|c| width(&c.to_string()))
                        .sum::<usize>();
                    let at = pane.iter().position(|r| r.starts_with("attempts")).unwrap();
                    let timeline: String = pane[at..]
                        .iter()
                        .take_while(|r| r.starts_with("attempts") || r.starts_with('→'))
                        .cloned()
                        .collect();
                    for n in 1..=tries {
                        assert!(
                            timeline.contains(&format!("#{n}")),
                            "{w}: #{n} missing in {timeline}"
                        );
                    }
                    let word = if committed { "★" } else { "generating" };
                    assert!(timeline.contains(word), "{w}: {timeline}");
                    if committed {
                        let hook_row = pane.iter().find(|r| r.starts_with("hook ")).unwrap();
                        let whole = format!("hook {hook}");
                        if width(&whole) <= room {
                            assert!(hook_row.starts_with(&whole), "{w}: {hook_row}");
                        } else {
                            assert!(hook_row.trim_end().ends_with('…'), "{w}: {hook_row}");
                        }
                        let rest: String = pane.iter().cloned().collect();
                        assert!(rest.contains("depth 2/3") && rest.contains("futile"));
                    }
                }
            }
        }
    }
}

// ── 5. connection-refused advice once ─────────────────────────────────────────────────────

/// A real probe of a port nothing listens on, through the runtime: the first screen says what
/// to do (start Ollama or pass --endpoint) once, whether the error box is up or dismissed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connections_advice_shows_once() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let llm = kakeai::llm::LlmConfig {
        endpoint: format!("http://127.0.0.1:{port}"),
        ..Default::default()
    };
    let services = common::tui::services(&dir.path().join("k.db"), llm, None);
    let (mut rt, mut rx) = kakeai::tui::Runtime::new(app(Conn::Probing), services);
    rt.probe();
    while rt.app.header.conn == Conn::Probing {
        let msg = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("the probe answers")
            .unwrap();
        rt.app.on_msg(msg);
    }
    assert!(
        matches!(rt.app.header.conn, Conn::Down(_)),
        "{:?}",
        rt.app.header.conn
    );
    let count = |a: &App, w, h| {
        let s = rows(a, w, h).join("");
        (s.matches("ollama").count(), s.matches("--endpoint").count())
    };
    for (w, h) in [(80, 24), (120, 40)] {
        assert_eq!(
            count(&rt.app, w, h),
            (1, 1),
            "{w}×{h}:\n{}",
            rows(&rt.app, w, h).join("\n")
        );
    }
    rt.app
        .on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(rt.app.errors.is_empty());
    for (w, h) in [(80, 24), (120, 40)] {
        assert_eq!(
            count(&rt.app, w, h),
            (1, 1),
            "{w}×{h}:\n{}",
            rows(&rt.app, w, h).join("\n")
        );
    }
}

// ── 6. blind review stays blind ───────────────────────────────────────────────────────────

#[test]
fn in_blind_review_t_is_refused_and_the_tune_section_shows_no_figures() {
    for blind in [false, true] {
        let mut a = app(up());
        a.blind = blind;
        a.reviewer = Some("aoi".into());
        a.pane = Pane::Rules;
        let cmds = a.on_key(key('T'));
        let asked = cmds.iter().any(|c| matches!(c, Command::Tune));
        assert_eq!(asked, !blind, "{}", a.status);
        for c in ['y', '}'] {
            a.on_key(key(c));
        }
        if blind {
            assert!(a.status.contains("off in blind review"), "{}", a.status);
            for (w, h) in [(80, 24), (120, 40)] {
                let s = rows(&a, w, h).join("\n");
                assert!(!s.contains("learned from the team"), "{s}");
            }
        }
    }
}

/// Other reviewers' marks arriving while she reviews blind: the status never names them or
/// counts them, whoever they are and however many; the same refresh outside blind mode does.
#[test]
fn in_blind_review_the_status_never_announces_others_marks() {
    use kakeai::store::ActionKind;
    let names = ["花子", "ｶﾞｸ", "bob👍", "れん"];
    for k in 1..=names.len() {
        for blind in [true, false] {
            let (_d, mut s) = review_fixture::store();
            let run = review_fixture::add_run(&mut s, "駅前のパン屋へ", 4, 1);
            let mut a = review_fixture::opened(&s, run);
            a.reviewer = Some("taro".into());
            a.blind = blind;
            for (i, who) in names.iter().take(k).enumerate() {
                let p = serde_json::json!({"up": i % 2 == 0});
                review_fixture::act(&mut s, run, 1 + i as u32 % 4, ActionKind::Thumb, p, who);
            }
            let o = kakeai::tui::reopen::open(&s, run, None).unwrap();
            a.on_msg(UiMsg::MarksRefreshed(Ok(Box::new(o))));
            let said = a.status.contains("new mark(s)");
            assert_eq!(said, !blind, "blind {blind}: {}", a.status);
            if blind {
                let screen: String = [(80, 24), (120, 40)]
                    .iter()
                    .map(|&(w, h)| rows(&a, w, h).join("\n"))
                    .collect();
                for who in names.iter().take(k) {
                    assert!(!a.status.contains(who), "{}", a.status);
                    assert!(!screen.contains(who), "{who} shown blind:\n{screen}");
                }
            }
        }
    }
}
