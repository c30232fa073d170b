//! Criterion benchmark of judging: cold (analysis + rules) and warm (cached analysis, rules
//! only), with the fallback analyzer and, when installed, lindera-ipadic.
//!
//! Corpus: the bundled sample, or KAKEAI_BENCH_CORPUS=path (e.g. the duo-talk run log beside
//! the repo — its `speak` events are used).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kakeai::cli::bench::{SAMPLE, load_corpus};
use kakeai::director::{self, RuleSet};
use kakeai::text::analyzer::{self, AnalyzerChoice, fallback::FallbackAnalyzer};
use kakeai::text::{Analysis, Analyzer};

fn bench(c: &mut Criterion) {
    let text = std::env::var("KAKEAI_BENCH_CORPUS")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_else(|| SAMPLE.to_string());
    let corpus = load_corpus(&text);
    let rules = RuleSet::builtin().expect("rules");
    let lines: Vec<_> = corpus
        .iter()
        .filter_map(|(s, t)| rules.character(s).map(|ch| (ch, t.clone())))
        .collect();
    let mut analyzers: Vec<Box<dyn Fn() -> std::sync::Arc<dyn Analyzer>>> =
        vec![Box::new(|| std::sync::Arc::new(FallbackAnalyzer))];
    if let Ok(a) = analyzer::open(AnalyzerChoice::Lindera, &mut |m| eprintln!("{m}")) {
        analyzers.push(Box::new(move || a.clone()));
    }
    let mut group = c.benchmark_group("judge");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.sample_size(10);
    for make in &analyzers {
        let an = make();
        let name = an.kind().as_str();
        group.bench_function(format!("cold/{name}"), |b| {
            b.iter(|| {
                for (ch, t) in &lines {
                    let a = Analysis::new(t);
                    black_box(director::judge(&rules, an.as_ref(), ch, &a, &[]));
                }
            })
        });
        let cached: Vec<_> = lines.iter().map(|(_, t)| Analysis::new(t)).collect();
        group.bench_function(format!("warm/{name}"), |b| {
            b.iter(|| {
                for ((ch, _), a) in lines.iter().zip(&cached) {
                    black_box(director::judge(&rules, an.as_ref(), ch, a, &[]));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
