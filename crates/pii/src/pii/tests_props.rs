//! Property tests over generated messages: masking is idempotent, items are sorted and
//! disjoint, and every char any detector flagged ends up masked (overlaps lose nothing).

use super::{PiiMasker, apply, shared};

/// A small deterministic generator (SplitMix64), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const PII: &[&str] = &[
    "田中さん",
    "佐藤さゆりさん",
    "山田太郎",
    "伊藤大輔",
    "田中 さん",
    "私は鈴木です",
    "高橋ゆうこと申します",
    "My name is Kenichi Sato",
    "090-1234-5678",
    "090.1234.5678",
    "080 9876 5432",
    "０３－１２３４－５６７８",
    "taro@example.com",
    "東京都渋谷区神南1-2-3",
    "道玄坂2-10-7",
    "みなとみらい3-4-1",
    "札幌市中央区北1条西2丁目",
    "〒150-0041",
    "株式会社みらい工房",
    "テスト商事株式会社",
    "有限会社すずき商店",
    "東京大学",
    "みなと小学校",
    "東大",
    "早稲田",
    "4111 1111 1111 1111",
    "5555555555554444",
];

const GLUE: &[&str] = &[
    "",
    "",
    "",
    "の",
    "に",
    "は",
    "と",
    "で",
    "、",
    "。",
    " ",
    "　",
    "さん",
    "です",
    "って",
    "1",
    "-",
    "2-1",
    "3-1",
    "株式会社",
    "大学",
    "高校",
    "様",
    "ちゃん",
    "と申します",
    "名前は",
    "[氏名]",
    "[電話番号]",
    "[住所]",
    "[会社名]",
    "[学校名]",
    "[カード番号]",
    "ねえ",
    "今日",
    "国公立",
    "出身",
    "は金沢です",
    "東京都",
    "横浜の",
    "A",
    "x",
    "ｗ",
    "！",
];

fn message(rng: &mut Rng) -> String {
    let n = 1 + rng.next() % 6;
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(rng.pick(GLUE));
        if rng.next().is_multiple_of(2) {
            s.push_str(rng.pick(PII));
        }
    }
    s
}

#[test]
fn masking_generated_messages_is_idempotent_and_loses_no_overlap() {
    let masker: &PiiMasker = shared();
    for seed in 0..2_500u64 {
        let mut rng = Rng(seed);
        let text = message(&mut rng);
        let n = text.chars().count();
        let m = masker.mask(&text);
        // Sorted, disjoint, in bounds, and the text is rebuilt from them.
        for w in m.items.windows(2) {
            assert!(
                w[0].span[1] <= w[1].span[0],
                "seed {seed} {text:?}: {:?}",
                m.items
            );
        }
        assert!(
            m.items
                .iter()
                .all(|i| i.span[0] < i.span[1] && i.span[1] <= n)
        );
        assert_eq!(apply(&text, &m.items), m.masked_text);
        // Every char a detector flagged (away from existing tokens) is masked.
        let (cands, tokens) = masker.candidates(&text);
        for c in cands {
            if tokens.iter().any(|&(s, e)| c.s < e && s < c.e) {
                continue;
            }
            for i in c.s..c.e {
                assert!(
                    m.items.iter().any(|it| it.span[0] <= i && i < it.span[1]),
                    "seed {seed} {text:?}: char {i} of {:?} [{}, {}) left visible: {}",
                    c.kind,
                    c.s,
                    c.e,
                    m.masked_text
                );
            }
        }
        // Masking the masked text changes nothing.
        let again = masker.mask(&m.masked_text);
        assert_eq!(
            again.masked_text, m.masked_text,
            "seed {seed}: {text:?} → {:?} → {:?}",
            m.masked_text, again.items
        );
        assert!(again.items.is_empty(), "seed {seed}");
    }
}
