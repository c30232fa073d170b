//! Criterion benchmark of the client's per-token overhead on a streamed reply: line framing,
//! UTF-8 decoding (with characters split across chunks) and protocol parsing, for Ollama NDJSON
//! and OpenAI SSE. Throughput is per token, so criterion's time/elem reads as ns/token.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kakeai::llm::{ApiKind, StreamDecoder, protocol};

/// Japanese deltas of 1–3 characters, as Gemma's tokenizer tends to produce them.
fn deltas() -> Vec<String> {
    let text = "ねえあゆ、駅前に新しいパン屋さんができたの知ってる？朝七時から開いてて、\
                クロワッサンがすごく評判なんだって！今度の土曜日、早起きして一緒に行ってみない？\
                並ぶのはちょっと大変かもしれないけど、焼きたてはきっと格別だと思うよ。";
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while out.len() < 300 {
        let n = 1 + (i * 7 % 3);
        let s: String = (0..n).map(|k| chars[(at + k) % chars.len()]).collect();
        out.push(s);
        at += n;
        i += 1;
    }
    out
}

fn ollama_events(deltas: &[String]) -> Vec<String> {
    let mut v: Vec<String> = deltas
        .iter()
        .map(|d| {
            format!(
                "{}\n",
                serde_json::json!({"model":"gemma2:27b","created_at":"2025-06-01T09:00:00.123456789Z",
                                   "message":{"role":"assistant","content":d},"done":false})
            )
        })
        .collect();
    v.push(format!(
        "{}\n",
        serde_json::json!({"model":"gemma2:27b","created_at":"2025-06-01T09:00:05Z",
            "message":{"role":"assistant","content":""},"done":true,"done_reason":"stop",
            "total_duration":5_000_000_000u64,"eval_count":deltas.len(),"eval_duration":4_900_000_000u64})
    ));
    v
}

fn openai_events(deltas: &[String]) -> Vec<String> {
    let mut v: Vec<String> = deltas
        .iter()
        .map(|d| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices":[{"finish_reason":null,"index":0,"delta":{"content":d}}],
                    "created":1_750_000_000,"id":"chatcmpl-jSoMcmhEjYa1sXJoGZlFFZzhAh6E7Dvi",
                    "model":"gemma2:27b","system_fingerprint":"b11434-unknown","object":"chat.completion.chunk"})
            )
        })
        .collect();
    v.push(format!(
        "data: {}\n\n",
        serde_json::json!({"choices":[{"finish_reason":"stop","index":0,"delta":{}}],
            "object":"chat.completion.chunk","timings":{"predicted_n":deltas.len()}})
    ));
    v.push("data: [DONE]\n\n".into());
    v
}

/// Network chunks as they arrive: mostly one event per read, every 5th event split inside its
/// first multi-byte character, every 11th coalesced with the next.
fn chunks(events: &[String]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let e = events[i].as_bytes();
        if i % 5 == 0 {
            let mb = e
                .iter()
                .position(|b| *b >= 0x80)
                .map(|p| p + 1)
                .unwrap_or(e.len() / 2);
            out.push(e[..mb].to_vec());
            out.push(e[mb..].to_vec());
        } else if i % 11 == 0 && i + 1 < events.len() {
            let mut joined = e.to_vec();
            joined.extend_from_slice(events[i + 1].as_bytes());
            out.push(joined);
            i += 1;
        } else {
            out.push(e.to_vec());
        }
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let deltas = deltas();
    let mut group = c.benchmark_group("llm_stream");
    for (name, kind, events) in [
        ("ollama_ndjson", ApiKind::Ollama, ollama_events(&deltas)),
        ("openai_sse", ApiKind::OpenAi, openai_events(&deltas)),
    ] {
        let chunks = chunks(&events);
        let proto = protocol(kind);
        for (label, cap) in [("uncapped", None), ("capped_400", Some(400))] {
            // A capped run stops early: count the tokens it actually handles.
            let mut handled = 0u64;
            let mut dec = StreamDecoder::new(proto, cap);
            for ch in &chunks {
                if dec.feed(ch, &mut |_| handled += 1).unwrap() != kakeai::llm::Step::More {
                    break;
                }
            }
            group.throughput(Throughput::Elements(handled));
            group.bench_function(format!("{name}/{label}"), |b| {
                b.iter(|| {
                    let mut dec = StreamDecoder::new(proto, cap);
                    let mut n = 0usize;
                    let mut on = |t: &str| n += black_box(t).len();
                    for ch in &chunks {
                        if dec.feed(black_box(ch), &mut on).unwrap() != kakeai::llm::Step::More {
                            break;
                        }
                    }
                    black_box((n, dec.tokens()))
                })
            });
        }
    }
    group.finish();
}

/// The whole per-token path of a live run: network chunk → UTF-8 → line framing → protocol
/// parse → the driver's channel message → the session FSM's token step.
fn pipeline(c: &mut Criterion) {
    use kakeai::director::RuleSet;
    use kakeai::duo::{DuoConfig, Exhaustion, RunSpec, Session};
    let deltas = deltas();
    let events = ollama_events(&deltas);
    let chunks = chunks(&events);
    let proto = protocol(ApiKind::Ollama);
    let (rules, duo) = (RuleSet::builtin().unwrap(), DuoConfig::builtin().unwrap());
    // The 400-char cap stops the stream early: count the tokens actually handled.
    let mut handled = 0u64;
    let mut dec = StreamDecoder::new(proto, Some(400));
    for ch in &chunks {
        if dec.feed(ch, &mut |_| handled += 1).unwrap() != kakeai::llm::Step::More {
            break;
        }
    }
    let mut group = c.benchmark_group("llm_stream");
    group.throughput(Throughput::Elements(handled));
    group.bench_function("pipeline/ollama_to_session", |b| {
        b.iter_batched(
            || {
                let spec = RunSpec {
                    topic: "坂道".into(),
                    max_turns: 12,
                    max_attempts: 3,
                    exhaustion: Exhaustion::Best,
                    judge: true,
                };
                let mut s = Session::new(spec, duo.clone(), rules.clone());
                s.start();
                s
            },
            |mut session| {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
                let mut dec = StreamDecoder::new(proto, Some(400));
                let mut on = |t: &str| {
                    let _ = tx.send(t.to_string());
                };
                for ch in &chunks {
                    if dec.feed(black_box(ch), &mut on).unwrap() != kakeai::llm::Step::More {
                        break;
                    }
                    while let Ok(d) = rx.try_recv() {
                        black_box(session.on_token(1, 1, &d));
                    }
                }
                session
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench, pipeline);
criterion_main!(benches);
