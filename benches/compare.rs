//! Criterion benchmarks for issue 15: (1) the compare overhead per turn beyond generation —
//! rebuilding the session in front of turn 12 of a 12-turn run twice (A's prompt for the
//! prompt-echo check, B's session) and judging A's and B's line with the static rules and the
//! sample vault's leak review (fallback analyzer); target < 5 ms. (2) the secret-keeping
//! scorecard over 100,000 stored attempts (5 % with leak findings); target < 100 ms.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use kakeai::compare::prepare::{rejudge_a, started};
use kakeai::director::RuleSet;
use kakeai::duo::judging::{StaticInput, static_verdict};
use kakeai::duo::records::{AttemptRecord, GenStats, TurnFlags};
use kakeai::duo::{DuoConfig, Exhaustion, RunSpec};
use kakeai::store::Store;
use kakeai::text::Analysis;
use kakeai::text::analyzer::fallback::FallbackAnalyzer;
use kakeai::vault::SharedVault;

const YANA: [&str; 4] = [
    "わ！坂の上から海がすっごい見えるよね！",
    "ほんと風が強いね、帽子飛んじゃうかも！",
    "そっか、あの灯台まで歩いてみようかな！",
    "えー、もう夕方？時間たつの早いよね！",
];
const AYU: [&str; 4] = [
    "姉様、灯台までは二十分が目安です。途中に展望台もあります。",
    "つまり、帽子は紐で留めるのが一番です。風は午後から強くなります。",
    "要するに、潮の香りが濃いのは満潮だからです。夕方には引いていきます。",
    "日の入りは六時ごろです。帰りは商店街を通りましょう。",
];

fn prior(rules: &RuleSet, vault: &SharedVault) -> Vec<(AttemptRecord, TurnFlags)> {
    let an = FallbackAnalyzer;
    let mut out: Vec<(AttemptRecord, TurnFlags)> = Vec::new();
    for t in 1..=12usize {
        let (speaker, text) = if t % 2 == 1 {
            ("yana", YANA[(t / 2) % 4])
        } else {
            ("ayu", AYU[(t / 2) % 4])
        };
        let analysis = Arc::new(Analysis::new(text));
        let ctx = kakeai::compare::prepare::context_of(&out);
        let (verdict, keywords) = static_verdict(&StaticInput {
            rules,
            analyzer: &an,
            vault: Some(vault),
            speaker,
            text,
            analysis: &analysis,
            context: &ctx,
            scaffold: &[],
            length_cut: None,
        })
        .unwrap();
        out.push((
            AttemptRecord {
                turn: t,
                speaker: speaker.into(),
                attempt: 1,
                text: text.into(),
                verdict,
                judge: None,
                guidance: Vec::new(),
                prompt_hash: String::new(),
                stats: GenStats::default(),
                keywords,
                analysis: Some(analysis),
            },
            TurnFlags::default(),
        ));
    }
    out
}

fn overhead(c: &mut Criterion) {
    let rules = RuleSet::builtin().unwrap();
    let duo = DuoConfig::builtin().unwrap();
    let vault = SharedVault::new(kakeai::vault::sample());
    let all = prior(&rules, &vault);
    let spec = RunSpec {
        topic: "海辺の坂道".into(),
        max_turns: 12,
        max_attempts: 3,
        exhaustion: Exhaustion::Best,
        judge: true,
    };
    let an = FallbackAnalyzer;
    let before = &all[..11];
    let a = &all[11].0;
    let b_text = "姉様、灯台までは二十分ほどです。帰りは坂に気をつけましょう。";
    c.bench_function("compare_overhead_turn12", |bench| {
        bench.iter(|| {
            let va = rejudge_a(
                &spec,
                &duo,
                &rules,
                &rules,
                before,
                Some(&vault),
                &an,
                &a.speaker,
                &a.text,
            );
            let s = started(&spec, &duo, &rules, before, Some(&vault));
            let scaffold = s.current().map(|c| c.scaffold.clone()).unwrap_or_default();
            let ctx = kakeai::compare::prepare::context_of(before);
            let analysis = Arc::new(Analysis::new(b_text));
            let vb = static_verdict(&StaticInput {
                rules: &rules,
                analyzer: &an,
                vault: Some(&vault),
                speaker: "ayu",
                text: b_text,
                analysis: &analysis,
                context: &ctx,
                scaffold: &scaffold,
                length_cut: None,
            });
            black_box((va, vb))
        })
    });
}

fn scorecard(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let work = kakeai::vault::sample();
    {
        let tx = store.connection().transaction().unwrap();
        for r in 0..100i64 {
            tx.execute(
                "INSERT INTO runs (id, topic, model, persona_version, started_at, status)
                 VALUES (?1, 't', ?2, ?3, '2026-01-01T00:00:00Z', 'completed')",
                rusqlite::params![
                    r + 1,
                    ["gemma2:27b", "qwen2.5:7b"][(r % 2) as usize],
                    format!("p{}", r % 3)
                ],
            )
            .unwrap();
        }
        let clean = r#"{"status":"PASS","findings":[{"rule":"tone","status":"PASS","message":"口調は良好です","suggestion":"","span":null}],"tone":{"marker":1,"vocab":1,"style":1,"score":3},"lines":1,"sentences":2,"topics":1,"ruleset":"abc","analyzer":"fallback"}"#;
        let leak = r#"{"status":"RETRY","findings":[{"rule":"leak","status":"RETRY","message":"秘密に触れています","suggestion":"","span":[3,5],"evidence":"keyword SEC-AYU-01"},{"rule":"tone","status":"PASS","message":"口調は良好です","suggestion":"","span":null}],"tone":{"marker":1,"vocab":1,"style":1,"score":3},"lines":1,"sentences":2,"topics":1,"ruleset":"abc","analyzer":"fallback"}"#;
        let mut stmt = tx
            .prepare(
                "INSERT INTO attempts (run_id, turn, speaker, attempt, state, text, status, verdict, started_at)
                 VALUES (?1, ?2, ?3, 1, 'done', 'x', 'PASS', ?4, '2026-01-01T00:00:00Z')",
            )
            .unwrap();
        for i in 0..100_000i64 {
            let v = if i % 20 == 0 { leak } else { clean };
            stmt.execute(rusqlite::params![
                i % 100 + 1,
                i / 100 + 1,
                ["yana", "ayu"][(i % 2) as usize],
                v
            ])
            .unwrap();
        }
        drop(stmt);
        tx.commit().unwrap();
    }
    let rows = kakeai::vault::scorecard::scorecard(store.db(), &work).unwrap();
    assert!(rows.iter().any(|r| r.leaked > 0));
    let mut g = c.benchmark_group("scorecard");
    g.sample_size(20);
    g.bench_function("scorecard_100k_attempts", |b| {
        b.iter(|| black_box(kakeai::vault::scorecard::scorecard(store.db(), &work).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, overhead, scorecard);
criterion_main!(benches);
