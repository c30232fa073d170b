//! Criterion benchmark of rule-based PII masking (issue 6 §5, issue 16: ≥ 300,000 messages/s
//! on one core). A batch of 10,000 chat messages of 20–80 chars, 90% without PII and 10% with, built
//! deterministically from the phrases below.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kakeai_pii::pii::PiiMasker;

const OPENERS: &[&str] = &[
    "ねえねえ、",
    "やな、",
    "あゆちゃん、",
    "今日さ、",
    "ちょっと聞いて！",
    "うーん、",
    "ところで",
    "",
];

const BODIES: &[&str] = &[
    "駅前に新しいカフェができたらしいよ。今度一緒に行ってみない？",
    "昨日の夜はずっとゲームしてて、気づいたら三時だった",
    "雨が降りそうだから傘を持っていったほうがいいかな？",
    "最近なんだか眠くて、授業中もうとうとしちゃうんだよね",
    "週末は家でのんびり映画を見る予定です",
    "このお菓子めっちゃおいしい！どこで売ってるんだろう",
    "明日のテスト、全然勉強してないけど大丈夫かな",
    "好きな季節は秋かな。涼しくてご飯もおいしいし",
    "猫の動画ばっかり見てたら一日終わってた",
    "2時に改札の前で待ち合わせでいい？",
    "東京に住んでいる大学生です。25歳です",
    "部活の先生がすごく厳しくて大変なんだ",
    "コンビニの新作スイーツ、もう食べた？",
    "海まで自転車で行ったら思ったより遠かったｗ",
    "それってほんと？ちょっと信じられないなあ",
    "ピアノの発表会が来月あるから練習しなきゃ",
];

const CLOSERS: &[&str] = &["", "ｗ", "！", "笑", "…", "？", "〜", "♪"];

const WITH_PII: &[&str] = &[
    "田中さんに090-1234-5678で連絡してって言われた",
    "はじめまして、佐藤と申します。よろしくお願いします",
    "東京都渋谷区神南1-2-3に住んでます",
    "メールはtaro.yamada@example.comに送ってね",
    "株式会社サンプルで働いてる山田部長が面白い",
    "青葉台高校の二年生です。部活はテニス部",
    "私は鈴木です。東京大学に通っています",
    "横浜市港北区日吉1-2-3 メゾン日吉101に引っ越した",
    "電話は０３－１２３４－５６７８までお願いします",
    "有限会社ヤマダ製作所の高橋さんから荷物が届いた",
    "佐藤さゆりさんに090.1234.5678で連絡して",
    "俺、伊藤大輔。家は道玄坂2-10-7だよ",
    "カードは4111 1111 1111 1111です。株式会社みらい工房宛て",
    "My name is Kenichi Sato, みなと小学校の先生です",
    "マイナンバーは123456789018です",
    "〇九〇・一二三四・五六七八に電話して",
    "メールは taro at example dot com です",
    "小鳥遊ゆうなさんと〒150-0001 東京都渋谷区神宮前4-12-10に行った",
];

/// 10,000 messages: every tenth carries PII.
fn corpus() -> Vec<String> {
    let mut state: u32 = 0x2545_f491;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as usize % n
    };
    (0..10_000)
        .map(|i| {
            if i % 10 == 9 {
                WITH_PII[next(WITH_PII.len())].to_string()
            } else {
                let mut m = format!(
                    "{}{}{}",
                    OPENERS[next(OPENERS.len())],
                    BODIES[next(BODIES.len())],
                    CLOSERS[next(CLOSERS.len())]
                );
                if next(2) == 0 {
                    m.push_str(BODIES[next(BODIES.len())]);
                }
                m
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let messages = corpus();
    let masker = PiiMasker::new(); // the rules alone: the fallback analyzer
    let detected = messages
        .iter()
        .filter(|m| masker.mask(m).pii_detected)
        .count();
    let chars: usize = messages.iter().map(|m| m.chars().count()).sum();
    eprintln!(
        "pii bench: {} messages, {:.1} chars on average, {detected} with PII detected",
        messages.len(),
        chars as f64 / messages.len() as f64
    );
    let mut group = c.benchmark_group("pii");
    group.throughput(Throughput::Elements(messages.len() as u64));
    group.sample_size(20);
    group.bench_function("mask/10k-chat-messages", |b| {
        b.iter(|| {
            for m in &messages {
                black_box(masker.mask(black_box(m)));
            }
        })
    });
    // The lindera path (issue 26 §1): the rules plus IPADIC's proper nouns, when the
    // dictionary is installed or can be built from MeCab's sources; skipped otherwise.
    let lindera = PiiMasker::with_dictionary();
    if lindera.analyzer_kind().as_str() == "lindera-ipadic" {
        group.bench_function("mask-lindera/10k-chat-messages", |b| {
            b.iter(|| {
                for m in &messages {
                    black_box(lindera.mask(black_box(m)));
                }
            })
        });
    } else {
        eprintln!(
            "pii bench: no IPADIC dictionary and no MeCab sources to build one; lindera path skipped"
        );
    }
    group.finish();
    c.bench_function("pii/new", |b| b.iter(|| black_box(PiiMasker::new())));
}

criterion_group!(benches, bench);
criterion_main!(benches);
