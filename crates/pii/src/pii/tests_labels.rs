//! Labels as context (labels.rs): generated マイナンバー and card numbers under every
//! listed label and frame — another number's label drops them, their own label or none keeps them;
//! words for a field or channel (メアド) in name-like frames.

use super::PiiKind::{self, *};
use super::{card, mynumber, shared};

/// Twelve-digit numbers that pass the マイナンバー check digit, from a simple LCG.
fn my_numbers(n: usize) -> Vec<String> {
    let mut x: u64 = 0x2545_F491;
    let mut out = Vec::new();
    while out.len() < n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let body = format!("{:011}", (x >> 20) % 100_000_000_000);
        for last in 0..10u8 {
            let s = format!("{body}{last}");
            let d: [u8; 12] = s.as_bytes().try_into().expect("12 digits");
            if mynumber::check_digit_ok(&d) {
                out.push(s);
                break;
            }
        }
    }
    out
}

/// Sixteen-digit Visa numbers (prefix 4) that pass Luhn.
fn cards(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9E37_79B9;
    let mut out = Vec::new();
    while out.len() < n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let body = format!("4{:014}", (x >> 10) % 100_000_000_000_000);
        for last in 0..10u8 {
            let s = format!("{body}{last}");
            let d = s.as_bytes();
            if card::luhn_ok(d) && card::issuer_ok(d) {
                out.push(s);
                break;
            }
        }
    }
    out
}

fn kinds(text: &str) -> Vec<PiiKind> {
    shared().mask(text).items.iter().map(|i| i.kind).collect()
}

const OTHER: [&str; 6] = [
    "追跡番号",
    "注文番号",
    "問い合わせ番号",
    "伝票番号",
    "予約番号",
    "会員番号",
];
const FRAMES: [&str; 4] = [
    "{l}は{n}です",
    "{l}：{n} でお願いします",
    "荷物の{l} {n} 届いてないんだけど",
    "{n}（{l}）",
];

fn fill(frame: &str, label: &str, n: &str) -> String {
    frame.replace("{l}", label).replace("{n}", n)
}

#[test]
fn another_numbers_label_keeps_a_valid_number_unmasked() {
    for n in my_numbers(10).iter().chain(cards(10).iter()) {
        for l in OTHER {
            for f in FRAMES {
                let t = fill(f, l, n);
                assert!(
                    !kinds(&t).iter().any(|k| matches!(k, MyNumber | Card)),
                    "{t}"
                );
            }
        }
    }
}

#[test]
fn its_own_label_or_none_keeps_a_valid_number_masked() {
    for n in my_numbers(10) {
        for l in ["マイナンバー", "個人番号"] {
            for f in FRAMES {
                assert!(
                    kinds(&fill(f, l, &n)).contains(&MyNumber),
                    "{}",
                    fill(f, l, &n)
                );
            }
        }
        let t = format!("注文番号の件は片付いた。それと {n}");
        assert!(kinds(&t).contains(&MyNumber), "{t}");
        let t = format!("追跡番号は後で。\n{n}");
        assert!(kinds(&t).contains(&MyNumber), "{t}");
    }
    for n in cards(10) {
        for l in ["カード番号", "クレカ"] {
            for f in FRAMES {
                assert!(kinds(&fill(f, l, &n)).contains(&Card), "{}", fill(f, l, &n));
            }
        }
    }
}

#[test]
fn a_phone_number_under_an_inquiry_label_stays_a_phone() {
    for l in OTHER {
        let t = format!("{l}は03-1234-5678です");
        assert!(kinds(&t).contains(&Phone), "{t}");
    }
}

#[test]
fn words_for_an_address_are_no_name() {
    let words = [
        "メアド",
        "めあど",
        "メルアド",
        "アドレス",
        "ライン",
        "インスタ",
        "電話番号",
    ];
    let frames = [
        "{w}教えて",
        "{w}変えたから登録し直して",
        "{w}、送るね",
        "{w}→ a.b@example.com",
        "新しい{w}です！よろしく",
        "{w}のやつ見た？",
        "山本さんの{w}知ってる？",
        "{w}って何だっけ",
        "{w}が変わりました",
        "{w}だけ送っとくね",
        "{w}は a.b@example.com です",
        "田中です。{w}：tanaka@example.jp",
    ];
    let mut bad = Vec::new();
    for w in words {
        for f in frames {
            let t = f.replace("{w}", w);
            let start = f.find("{w}").map_or(0, |b| f[..b].chars().count());
            let m = shared().mask(&t);
            if m.items
                .iter()
                .any(|i| i.kind == Name && i.span[0] <= start && i.span[1] > start)
            {
                bad.push(t);
            }
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}
