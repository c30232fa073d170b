//! Criterion benchmark of leak review without embeddings (issue 5 §5: < 50 ms): a
//! 10,000-character Japanese text against 100 secrets (3–5 forbidden keywords and 2 allowed
//! expressions each) and 100 setting texts of about 200 characters, all generated
//! deterministically from varied phrase lists. Measured one-shot (`review`: compiling the input
//! included) and with the input compiled once (`Reviewer`, as a live run would).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kakeai::safety::variants::Dict;
use kakeai::vault::leak::{
    Importance, LeakSecret, ReviewConfig, ReviewInput, Reviewer, SettingText, review,
};

const SUBJECTS: [&str; 8] = [
    "やな",
    "あゆ",
    "先生",
    "店長",
    "隣のおばあさん",
    "図書委員",
    "管理人",
    "幼なじみ",
];
const TIMES: [&str; 8] = [
    "昔",
    "去年の夏",
    "子どもの頃",
    "先月",
    "毎朝",
    "雨の日に",
    "放課後",
    "夜中に",
];
const OBJECTS: [&str; 12] = [
    "古い鍵",
    "手紙",
    "写真",
    "楽譜",
    "日記",
    "指輪",
    "地図",
    "オルゴール",
    "傘",
    "懐中時計",
    "切符",
    "貝殻",
];
const PLACES: [&str; 8] = [
    "屋根裏",
    "駅前の喫茶店",
    "図書室",
    "物置",
    "川沿いの公園",
    "祖母の家",
    "音楽室",
    "商店街",
];
const VERBS: [&str; 8] = [
    "隠していた",
    "探している",
    "なくした",
    "拾った",
    "預かっている",
    "燃やした",
    "売ってしまった",
    "こっそり直した",
];
const LINES: [&str; 10] = [
    "「ねえ、お姉ちゃん。{o}ってどこに置いたっけ？」",
    "{s}は{p}で、しばらく黙って窓の外を眺めていた。",
    "「{t}の話？　うーん、よく覚えてないなあ」",
    "{p}には、今日も静かな時間が流れている。",
    "あゆは丁寧にお辞儀をして、{s}に{o}の話をした。",
    "やなはコーヒーをもう一杯いれながら、{t}のことを考えた。",
    "「それ、{p}で見かけた気がします」とあゆが言った。",
    "風が少し冷たくなってきたので、二人は{p}を出た。",
    "{s}の笑い声が、遠くのほうから聞こえてくる。",
    "「大丈夫だよ。{o}なら、きっと見つかるって」",
];

/// A small deterministic generator (LCG), so every run reviews the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next() % items.len()]
    }
}

fn fill(rng: &mut Rng, pattern: &str) -> String {
    pattern
        .replace("{s}", rng.pick(&SUBJECTS))
        .replace("{t}", rng.pick(&TIMES))
        .replace("{o}", rng.pick(&OBJECTS))
        .replace("{p}", rng.pick(&PLACES))
}

fn input(rng: &mut Rng) -> ReviewInput {
    let importances = [
        Importance::Critical,
        Importance::High,
        Importance::Medium,
        Importance::Low,
    ];
    let secrets = (0..100)
        .map(|i| {
            let (s, t, o, p, v) = (
                rng.pick(&SUBJECTS),
                rng.pick(&TIMES),
                rng.pick(&OBJECTS),
                rng.pick(&PLACES),
                rng.pick(&VERBS),
            );
            let keywords = [
                format!("{o}の持ち主"),
                format!("{p}の奥"),
                format!("{s}の過去{i}"),
                format!("{t}の約束"),
                format!("秘密の{o}{i}"),
            ];
            LeakSecret {
                id: format!("SEC-{i:03}"),
                entity: s.to_string(),
                content: format!("{s}は{t}、{p}で{o}を{v}"),
                level: [2, 2, 1, 0][i % 4],
                importance: importances[i % 4],
                forbidden_keywords: keywords[..3 + i % 3].to_vec(),
                allowed_expressions: vec![
                    format!("{s}はときどき遠くを見ている"),
                    format!("{p}の話になると{s}は少し黙り込む"),
                ],
                subtlety: (i % 10 + 1) as u8,
            }
        })
        .collect();
    let settings = (0..100)
        .map(|i| {
            let mut text = String::new();
            while text.chars().count() < 200 {
                let pattern = rng.pick(&LINES);
                text.push_str(&fill(rng, pattern));
            }
            SettingText {
                key: format!("characters/{}/設定{i}", SUBJECTS[i % SUBJECTS.len()]),
                text,
                level: (i % 4) as u8,
            }
        })
        .collect();
    ReviewInput {
        secrets,
        settings,
        ..Default::default()
    }
}

/// 10,000 characters: mostly ordinary lines, with a quotation, a keyword and a restated secret
/// now and then so every check has work to do.
fn text(rng: &mut Rng, input: &ReviewInput) -> String {
    let mut out = String::new();
    let mut n = 0usize;
    while out.chars().count() < 10_000 {
        n += 1;
        let line = match n % 40 {
            13 => {
                let s: Vec<char> = input.settings[rng.next() % 100].text.chars().collect();
                s[10..40].iter().collect()
            }
            27 => format!(
                "それは{}だよね。",
                input.secrets[rng.next() % 100].forbidden_keywords[0]
            ),
            33 => format!("{}。", input.secrets[rng.next() % 100].content),
            _ => {
                let pattern = rng.pick(&LINES);
                fill(rng, pattern)
            }
        };
        out.push_str(&line);
        if n.is_multiple_of(5) {
            out.push('\n');
        }
    }
    out.chars().take(10_000).collect()
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng(0x6b61_6b65_6169);
    let input = input(&mut rng);
    let text = text(&mut rng, &input);
    let cfg = ReviewConfig::default();
    let r = review(&text, &input, &cfg);
    let mut kinds = std::collections::BTreeMap::new();
    for i in &r.issues {
        *kinds.entry(format!("{:?}", i.kind)).or_insert(0) += 1;
    }
    eprintln!(
        "leak bench: {} chars, issues by kind {kinds:?}",
        text.chars().count()
    );

    let mut group = c.benchmark_group("leak");
    group.throughput(Throughput::Elements(text.chars().count() as u64));
    group.sample_size(20);
    group.bench_function("review/10k_chars_100_secrets", |b| {
        b.iter(|| black_box(review(black_box(&text), &input, &cfg)))
    });
    let reviewer = Reviewer::new(&input, &cfg);
    group.bench_function("reviewer/10k_chars_100_secrets", |b| {
        b.iter(|| black_box(reviewer.review(black_box(&text))))
    });
    group.bench_function("compile/100_secrets_100_settings", |b| {
        b.iter(|| black_box(Reviewer::new(&input, &cfg)))
    });
    // Folding with keyword readings from IPADIC (issue 16 §3: < 20 ms), when the MeCab
    // sources are on the machine (the dictionary is built once into the temp dir).
    if let Some(dict) = ipadic() {
        let reviewer = Reviewer::with_dict(&input, &cfg, dict.clone());
        let r = reviewer.review(&text);
        eprintln!(
            "leak bench with readings: {:?}, {} issues",
            r.readings,
            r.issues.len()
        );
        group.bench_function("reviewer_readings/10k_chars_100_secrets", |b| {
            b.iter(|| black_box(reviewer.review(black_box(&text))))
        });
        group.bench_function("review_readings/10k_chars_100_secrets", |b| {
            b.iter(|| {
                black_box(Reviewer::with_dict(&input, &cfg, dict.clone()).review(black_box(&text)))
            })
        });
    } else {
        eprintln!("leak bench: no MeCab IPADIC sources, readings not measured");
    }
    group.finish();
}

fn ipadic() -> Option<Dict> {
    use kakeai::text::analyzer::lindera;
    let src = lindera::find_ipadic_sources()?;
    let dir = std::env::temp_dir().join("kakeai-test-ipadic");
    if !lindera::is_installed(&dir) {
        lindera::build_dictionary(&src, &dir).ok()?;
    }
    let a = lindera::LinderaAnalyzer::load(&dir).ok()?;
    Some(Dict::from(std::sync::Arc::new(a)))
}

criterion_group!(benches, bench);
criterion_main!(benches);
