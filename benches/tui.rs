//! Workbench render cost: one frame with 1,000 turns loaded (target ≤ 2 ms — only visible turns
//! are laid out), following the stream and scrolled to the middle.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kakeai::director::{self, RuleSet};
use kakeai::duo::Effect;
use kakeai::duo::prompt::Prompt;
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags, TurnRecord};
use kakeai::duo::topic::DepthStep;
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::tui::app::{App, Conn, Header, UiMsg};
use kakeai::tui::keymap::{Action, Keymap};
use kakeai::tui::{render, theme};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const LINES: [(&str, &str); 2] = [
    (
        "yana",
        "わ！川沿いの桜、もう満開だね！あそこのベンチで休もっか？",
    ),
    (
        "ayu",
        "姉様、この辺りの桜は染井吉野ですね。週末まで見頃だそうですよ。",
    ),
];

fn loaded(turns: usize) -> App {
    let header = Header {
        endpoint: "http://127.0.0.1:11434".into(),
        model: "gemma2:27b".into(),
        conn: Conn::Up {
            api: "ollama".into(),
        },
        analyzer: "fallback".into(),
        ruleset: "bench".into(),
        db: "bench.db".into(),
    };
    let mut app = App::new(header, theme::load_all().0, Keymap::builtin());
    app.on_msg(UiMsg::RunStarted {
        run_id: 1,
        topic: "花見".into(),
    });
    let rules = RuleSet::builtin().unwrap();
    let verdicts: Vec<_> = LINES
        .iter()
        .map(|(s, t)| {
            let c = rules.character(s).unwrap();
            director::judge(&rules, &FallbackAnalyzer, c, &Analysis::new(t), &[])
        })
        .collect();
    for turn in 1..=turns {
        let (speaker, base) = LINES[(turn + 1) % 2];
        // Every line distinct, as in a real run (no two turns share an analysis).
        let text = format!("{base}（{turn}）");
        let text = text.as_str();
        let v = verdicts[(turn + 1) % 2].clone();
        let fx = |app: &mut App, e| app.on_msg(UiMsg::Effect(Box::new(e)));
        fx(
            &mut app,
            Effect::TurnStarted {
                turn,
                speaker: speaker.into(),
            },
        );
        fx(
            &mut app,
            Effect::Generate {
                turn,
                speaker: speaker.into(),
                attempt: 1,
                prompt: Prompt {
                    messages: vec![],
                    dropped: 0,
                    chars: 0,
                    hash: String::new(),
                },
                guidance: vec![],
            },
        );
        fx(
            &mut app,
            Effect::AttemptDone(Box::new(AttemptRecord {
                turn,
                speaker: speaker.into(),
                attempt: 1,
                text: text.into(),
                verdict: v.clone(),
                judge: None,
                guidance: vec![],
                prompt_hash: String::new(),
                stats: GenStats::default(),
                keywords: vec![],
                analysis: None,
            })),
        );
        fx(
            &mut app,
            Effect::TurnCommitted(Box::new(TurnRecord {
                turn,
                speaker: speaker.into(),
                attempt: 1,
                text: text.into(),
                verdict: v,
                flags: TurnFlags::default(),
                hook: Some("桜".into()),
                depth: 1,
                step: DepthStep::Surface,
            })),
        );
    }
    app
}

fn bench(c: &mut Criterion) {
    let mut app = loaded(1000);
    let mut term = Terminal::new(TestBackend::new(140, 40)).unwrap();
    let mut g = c.benchmark_group("tui");
    g.bench_function("frame_1000_turns_following", |b| {
        b.iter(|| {
            term.draw(|f| render::draw(f, black_box(&app)))
                .unwrap()
                .area
        })
    });
    for _ in 0..500 {
        app.act(Action::PrevTurn);
    }
    g.bench_function("frame_1000_turns_scrolled_middle", |b| {
        b.iter(|| {
            term.draw(|f| render::draw(f, black_box(&app)))
                .unwrap()
                .area
        })
    });
    // Re-judge after a rule edit: 10,000 turns, analyses cached (the rules pane's path).
    let mut big = loaded(10_000);
    let analyzer: std::sync::Arc<dyn kakeai::text::Analyzer> =
        std::sync::Arc::new(FallbackAnalyzer);
    let mut cache = kakeai::text::AnalysisCache::new();
    let rules = RuleSet::builtin().unwrap();
    kakeai::tui::tuning::rejudge(&mut big.run, &rules, &analyzer, &mut cache);
    let edited = kakeai::tui::tuning::adjust(&rules, 1, 1.0).unwrap();
    g.bench_function("rejudge_10000_turns", |b| {
        b.iter(|| {
            kakeai::tui::tuning::rejudge(&mut big.run, black_box(&edited), &analyzer, &mut cache)
                .judged
        })
    });
    // The rules pane's path: the edit concerns one rule (lines.warn), so only it re-runs.
    // Alternating the edit and its undo keeps every iteration incremental.
    let version = rules.version.clone();
    let edited_version = edited.version.clone();
    let mut flip = false;
    g.bench_function("rejudge_10000_turns_one_rule", |b| {
        b.iter(|| {
            flip = !flip;
            let (to, from) = if flip {
                (&edited, version.as_str())
            } else {
                (&rules, edited_version.as_str())
            };
            kakeai::tui::tuning::rejudge_only(
                &mut big.run,
                black_box(to),
                &analyzer,
                &mut cache,
                Some((kakeai::director::RuleId::Lines, from)),
            )
            .judged
        })
    });
    g.finish();
}

/// A run of 20 turns with a 21st streaming `chars` characters so far, one frame drawn.
fn streaming(chars: usize) -> (App, Terminal<TestBackend>) {
    let mut app = loaded(20);
    let fx = |app: &mut App, e| app.on_msg(UiMsg::Effect(Box::new(e)));
    fx(
        &mut app,
        Effect::TurnStarted {
            turn: 21,
            speaker: "yana".into(),
        },
    );
    fx(
        &mut app,
        Effect::Generate {
            turn: 21,
            speaker: "yana".into(),
            attempt: 1,
            prompt: Prompt {
                messages: vec![],
                dropped: 0,
                chars: 0,
                hash: String::new(),
            },
            guidance: vec![],
        },
    );
    let base: Vec<char> =
        "ねえ、川沿いの桜ってnaturalに咲いてるみたいで好き。ｶﾞﾗｶﾞﾗの屋台も出てたよ！"
            .chars()
            .collect();
    let text: String = (0..chars).map(|i| base[i % base.len()]).collect();
    app.on_msg(UiMsg::Token {
        turn: 21,
        attempt: 1,
        delta: text,
        at: std::time::Instant::now(),
    });
    let mut term = Terminal::new(TestBackend::new(140, 40)).unwrap();
    term.draw(|f| render::draw(f, &app)).unwrap();
    (app, term)
}

/// Per streamed token (two characters): the token reaches the view and a frame is drawn —
/// at 100 and at 1,500 characters into the reply (issue 14 §10: the cost must not grow).
fn stream(c: &mut Criterion) {
    let mut g = c.benchmark_group("stream_token");
    for chars in [100usize, 1500] {
        g.bench_function(format!("token_and_frame_at_{chars}_chars"), |b| {
            b.iter_batched(
                || streaming(chars),
                |(mut app, mut term)| {
                    app.on_msg(UiMsg::Token {
                        turn: 21,
                        attempt: 1,
                        delta: "だね".into(),
                        at: std::time::Instant::now(),
                    });
                    term.draw(|f| render::draw(f, black_box(&app))).unwrap();
                    (app, term)
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench, stream);
criterion_main!(benches);
