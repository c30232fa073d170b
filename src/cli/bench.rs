//! `kakeai bench`: judging throughput on a corpus — cold (analysis + rules, fresh cache) and
//! warm (cached analyses, rules only) — on one core, with peak memory.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use crate::director::{self, RuleSet};
use crate::text::analyzer::{self, AnalyzerChoice};
use crate::text::{Analysis, Analyzer};

/// The sample the project ships (written for kakeai) — the default corpus.
pub const SAMPLE: &str = include_str!("../../assets/sample/lines.jsonl");

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// JSONL corpus: `check` records, or a duo-talk run log (its `speak` events are used).
    /// Default: the bundled sample.
    pub corpus: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto", env = "KAKEAI_ANALYZER")]
    pub analyzer: AnalyzerChoice,
    /// Minimum measuring time per phase, in seconds.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
}

/// (speaker, text) pairs from a corpus; lines that are not usable utterances are skipped.
pub fn load_corpus(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("event").is_none_or(|e| e == "speak"))
        .filter_map(|v| {
            let speaker = v.get("speaker")?.as_str()?.to_string();
            let text = v.get("text")?.as_str()?.to_string();
            Some((speaker, text))
        })
        .collect()
}

pub struct BenchResult {
    pub lines: usize,
    pub avg_chars: f64,
    pub cold_lines_per_s: f64,
    pub warm_lines_per_s: f64,
    pub peak_rss_mb: Option<f64>,
}

/// Peak resident set size from /proc (Linux), in MB.
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn measure(
    rules: &RuleSet,
    analyzer: &dyn Analyzer,
    corpus: &[(String, String)],
    min_time: Duration,
) -> BenchResult {
    let resolved: Vec<_> = corpus
        .iter()
        .filter_map(|(s, t)| rules.character(s).map(|c| (c, t.as_str())))
        .collect();
    let n = resolved.len().max(1);
    let mut sink = 0usize;
    // Cold: analysis from scratch every round.
    let start = Instant::now();
    let mut done = 0usize;
    while start.elapsed() < min_time || done == 0 {
        for (c, t) in &resolved {
            let a = Analysis::new(t);
            sink += director::judge(rules, analyzer, c, &a, &[]).findings.len();
        }
        done += resolved.len();
    }
    let cold = done as f64 / start.elapsed().as_secs_f64();
    // Warm: analyses cached (lazy parts filled by a first pass), rules only.
    let analyses: Vec<_> = resolved.iter().map(|(_, t)| Analysis::new(t)).collect();
    for ((c, _), a) in resolved.iter().zip(&analyses) {
        sink += director::judge(rules, analyzer, c, a, &[]).findings.len();
    }
    let start = Instant::now();
    let mut done = 0usize;
    while start.elapsed() < min_time || done == 0 {
        for ((c, _), a) in resolved.iter().zip(&analyses) {
            sink += director::judge(rules, analyzer, c, a, &[]).findings.len();
        }
        done += resolved.len();
    }
    let warm = done as f64 / start.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    let chars: usize = resolved.iter().map(|(_, t)| t.chars().count()).sum();
    BenchResult {
        lines: resolved.len(),
        avg_chars: chars as f64 / n as f64,
        cold_lines_per_s: cold,
        warm_lines_per_s: warm,
        peak_rss_mb: peak_rss_mb(),
    }
}

pub fn run(args: BenchArgs) -> i32 {
    let (name, text) = match &args.corpus {
        None => ("bundled sample".to_string(), SAMPLE.to_string()),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => (p.display().to_string(), t),
            Err(e) => {
                eprintln!("kakeai bench: {}: {e}", p.display());
                return 2;
            }
        },
    };
    let corpus = load_corpus(&text);
    if corpus.is_empty() {
        eprintln!(
            "kakeai bench: {name}: no utterances found (need JSON objects with speaker and text)"
        );
        return 2;
    }
    let rules = match RuleSet::load(None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kakeai bench: {e}");
            return 2;
        }
    };
    let analyzer = match analyzer::open(args.analyzer, &mut |m| eprintln!("{m}")) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kakeai bench: {e}");
            return 2;
        }
    };
    let r = measure(
        &rules,
        analyzer.as_ref(),
        &corpus,
        Duration::from_secs_f64(args.seconds),
    );
    println!(
        "corpus:   {name} ({} lines, avg {:.0} chars)",
        r.lines, r.avg_chars
    );
    println!("analyzer: {}   ruleset: {}", analyzer.kind(), rules.version);
    println!(
        "cold (analysis + rules): {:>12.0} lines/s",
        r.cold_lines_per_s
    );
    println!(
        "warm (rules only):       {:>12.0} lines/s",
        r.warm_lines_per_s
    );
    if let Some(m) = r.peak_rss_mb {
        println!("peak RSS:                {m:>12.1} MB");
    }
    0
}
