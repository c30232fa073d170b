//! Snapshots of the interview mode and the insights view (TestBackend, 100×30 and 140×40),
//! with Japanese text mixing full-width, half-width katakana and emoji.

mod common;

use kakeai::director::Status;
use kakeai::insight::{Deck, Severity, Theme};
use kakeai::interview::{Event, InterviewConfig, Machine, Next};
use kakeai::tui::insights_view::{self, InsightsView};
use kakeai::tui::interview_view::{self, InterviewView};
use kakeai::tui::theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn reply(m: &Machine, text: &str, source: &'static str) -> Event {
    let mut e = Event::new("reply", m);
    e.text = Some(text.into());
    e.source = Some(source);
    if source == "model" {
        e.verdict = Some(Status::Pass);
    }
    e
}

/// An interview driven through the pure machine: the model answers until it fails after the
/// third answer, then the fixed questions take over.
fn interview_view() -> InterviewView {
    let cfg = InterviewConfig::sample();
    let mut v = InterviewView::new(1, &cfg);
    let mut m = Machine::new(&cfg, false);
    m.start();
    v.apply(&reply(
        &m,
        "こんにちは、あゆです。今日は料理のお話を聞かせてください。始めてもいいですか？",
        "model",
    ));
    let answers = ["はい", "ｶﾚｰを作るのは好きです🍛", "献立、買い物、洗い物"];
    for a in answers {
        m.user(a);
        let mut e = Event::new("user", &m);
        e.text = Some(a.into());
        v.apply(&e);
        v.apply(&reply(
            &m,
            "ありがとうございます。つまり、いちばん困るのはどれでしょうか？",
            "model",
        ));
    }
    let mut failed = Event::new("model_failed", &m);
    if let Next::Fixed { text, question } = m.model_failed() {
        failed.state = m.state;
        failed.fallback = true;
        v.apply(&failed);
        let mut e = reply(&m, &text, "fallback");
        e.question = Some(question);
        v.apply(&e);
    }
    v.input = "献立を考える時間がないことです".into();
    v
}

fn card(theme: &str, jtbd: &str, sev: Severity, quotes: &[&str]) -> Theme {
    Theme {
        theme: theme.into(),
        jtbd: jtbd.into(),
        summary: format!("{theme}に困っている"),
        severity: sev,
        evidence: quotes.iter().map(|q| q.to_string()).collect(),
    }
}

fn insights() -> InsightsView {
    let mut d = Deck::default();
    for i in 0..6 {
        d.add(
            &card(
                "献立決め",
                "毎日の献立をすぐ決めたい",
                Severity::High,
                &[
                    "毎晩、冷蔵庫の前で献立に悩みます",
                    "献立を考えるだけで夕方の三十分が消えます",
                    "ｶﾚｰばかりになってしまう😢",
                ],
            ),
            &format!("interview:{i}"),
        );
    }
    d.add(
        &card(
            "洗い物の負担",
            "料理の後片付けを楽にしたい",
            Severity::Medium,
            &["フライパンと鍋がシンクにたまります"],
        ),
        "interview:1",
    );
    d.add(
        &card(
            "洗い物の負担",
            "",
            Severity::Medium,
            &["夜遅くに洗い物をするのがつらいです"],
        ),
        "interview:2",
    );
    d.add(
        &card("買い物の手間", "買い忘れなく済ませたい", Severity::Low, &[]),
        "interview:3",
    );
    let mut fb = Deck::default();
    fb.add(
        &card(
            "やな: tone_drift（食べ物）",
            "やならしいくだけた語尾に戻す",
            Severity::Medium,
            &["ラーメンの話で急に丁寧語になった"],
        ),
        "run:1/action:1",
    );
    InsightsView::new(vec![
        ("interview:sample".into(), d),
        ("feedback".into(), fb),
    ])
}

fn draw(w: u16, h: u16, f: impl Fn(&mut ratatui::Frame)) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|fr| f(fr)).unwrap();
    t.backend().to_string()
}

#[test]
fn interview_mode_shows_state_turns_and_deepening() {
    let v = interview_view();
    let th = &theme::load_all().0[0];
    for (w, h) in [(100, 30), (140, 40)] {
        let s = draw(w, h, |f| interview_view::render(f, f.area(), &v, th));
        assert!(
            s.contains("state fallback") && s.contains("turn 3/12") && s.contains("deep 0/2"),
            "{s}"
        );
        insta::assert_snapshot!(format!("interview_{w}x{h}"), s);
    }
}

#[test]
fn insights_view_lists_cards_and_the_selected_quotes() {
    let mut v = insights();
    let th = &theme::load_all().0[0];
    for (w, h) in [(100, 30), (140, 40)] {
        let s = draw(w, h, |f| insights_view::render(f, f.area(), &v, th));
        assert!(s.contains("献立決め") && s.contains("冷蔵庫の前"), "{s}");
        insta::assert_snapshot!(format!("insights_{w}x{h}"), s);
    }
    // → filters to the feedback cards.
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    assert!(v.on_key(KeyEvent::new(KeyCode::Right, KeyModifiers::NONE)));
    let s = draw(100, 30, |f| insights_view::render(f, f.area(), &v, th));
    assert!(s.contains("tone_drift") && !s.contains("献立決め"), "{s}");
}

/// Interview events carry their run (issue 23: async answers carry their target): after the
/// reviewer leaves an interview and starts another, a late event of the first never lands in
/// the second; the second's own events do.
#[test]
fn a_left_interviews_late_events_never_reach_the_next_one() {
    use kakeai::tui::app::UiMsg;
    use kakeai::tui::interview_view::InterviewMsg;
    let h = common::tui::header;
    let conn = kakeai::tui::app::Conn::Probing;
    let mut a = common::tui::app(h("http://127.0.0.1:9", "m", conn, "r", "/tmp/k.db"));
    let cfg = InterviewConfig::sample();
    let started = |run| UiMsg::Interview(InterviewMsg::Started(run, Box::new(cfg.clone())));
    let mut m = Machine::new(&cfg, false);
    m.start();
    let said = |run, text: &str| {
        UiMsg::Interview(InterviewMsg::Event(run, Box::new(reply(&m, text, "model"))))
    };
    a.on_msg(started(1));
    a.on_msg(said(1, "一つ目の質問です。"));
    assert_eq!(a.interview.as_ref().unwrap().lines.len(), 1);
    // Left, and a second interview started before the first's runner noticed.
    a.interview = None;
    a.on_msg(started(2));
    a.on_msg(said(1, "古いインタビューの返事です。"));
    assert!(
        a.interview.as_ref().unwrap().lines.is_empty(),
        "the first interview's event landed in the second"
    );
    a.on_msg(said(2, "二つ目の質問です。"));
    assert_eq!(a.interview.as_ref().unwrap().lines.len(), 1);
}
