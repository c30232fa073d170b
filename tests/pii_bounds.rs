//! Hostile input to the masker on its fullest path (the IPADIC analyzer, the rules and the
//! learned labeller): 100 KB messages mixing every script and width, emoji with joiners and
//! flags, control characters and half-width kana, with personal data buried inside. Each is
//! masked whole (no panic, no span outside the text), what was found is gone from the output,
//! and masking the output again changes nothing. The time each took is printed (never
//! asserted); README's table has the figure.

mod common;

use kakeai::safety::pii::PiiMasker;

const PIECES: [&str; 16] = [
    "ねえ聞いて、",
    "ｶﾞｯｺｳﾉｶｴﾘﾆ",
    "👨‍👩‍👧‍👦",
    "🇯🇵",
    "ＡＢＣ１２３",
    "\u{0}\u{7}\u{1b}[2J",
    "\u{200b}\u{feff}",
    "漢字ばかりの長い文章が続く",
    "カタカナノミノブン",
    "latin words only ",
    "𠮷野家",
    "\t\r\n",
    "田中さんの番号は090-1234-5678です。",
    "山田 太郎 yamada@example.com ",
    "〒150-0002 東京都渋谷区渋谷2-21-1 ",
    "株式会社みらい工房の佐藤です",
];

/// A message of about `bytes` bytes from the pieces, in an order set by `seed`.
fn message(seed: u64, bytes: usize) -> String {
    let mut s = String::new();
    let mut x = seed * 2 + 1;
    while s.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(PIECES[(x % PIECES.len() as u64) as usize]);
    }
    s
}

#[test]
fn hundred_kilobyte_messages_in_every_script_are_masked_whole() {
    let mut masker = PiiMasker::new();
    if let Some(an) = common::lindera_arc() {
        masker = masker.with_analyzer(an);
    }
    for seed in 1..=4u64 {
        let text = message(seed, 100 * 1024);
        let n = text.chars().count();
        let t0 = std::time::Instant::now();
        let m = masker.mask(&text);
        println!(
            "seed {seed}: {} KB, {n} chars, {} items in {:?} ({:?})",
            text.len() / 1024,
            m.items.len(),
            t0.elapsed(),
            masker.analyzer_kind()
        );
        assert!(
            m.items
                .iter()
                .all(|i| i.span[0] < i.span[1] && i.span[1] <= n)
        );
        for secret in ["090-1234-5678", "yamada@example.com", "渋谷2-21-1"] {
            assert!(
                text.contains(secret) && !m.masked_text.contains(secret),
                "{secret}"
            );
        }
        assert_eq!(
            masker.mask(&m.masked_text).masked_text,
            m.masked_text,
            "seed {seed}"
        );
    }
}
