//! Phone numbers and e-mail addresses: regexes over the folded view, then boundary rules the
//! regex crate cannot express (no look-around) so codes, dates and prices stay unmasked.

use regex::Regex;

use super::view::View;
use super::{Cand, PiiKind};

/// Domestic numbers start with 0 and have 10 or 11 digits (03-1234-5678, 090-1234-5678,
/// 0120-123-456, 03(1234)5678, (03)1234-5678, 09012345678); +81 drops the leading 0 and leaves
/// 9 or 10 (+81-90-1234-5678, +81 90 1234 5678, +81(0)3-1234-5678). Groups may be split by
/// hyphens, dots or spaces, mixed (090.1234.5678, 090-1234 5678), or by の as the number is
/// read aloud (090の1234の5678).
const PHONE: &str = r"(?x)
    \+81[-.\ ]?(?:\(0\)[-.\ ]?)?[0-9]{1,4}[-.\ ]?[0-9]{1,4}[-.\ ]?[0-9]{3,4}
  | \(0[0-9]{1,4}\)[-.\ ]?[0-9]{1,4}[-.\ ][0-9]{3,4}
  | 0[0-9]{1,4}(?:[-.\ ][0-9]{1,4}[-.\ ]|\([0-9]{1,4}\))[0-9]{3,4}
  | 0[0-9]{1,4}\ ?の\ ?[0-9]{1,4}\ ?の\ ?[0-9]{3,4}
  | 0[0-9]{9,10}
";

const EMAIL: &str = r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}";

/// An address spelled out against scrapers: `taro at example dot com`,
/// `taro(at)example.co.jp`, `taro [at] example [dot] com`, `taro アット example ドット com`,
/// `taro ＠ example.com` (spaces around the @), `taro★example.com`. The @ must be spelled out,
/// spaced or starred; the dots may be either.
const EMAIL_WORDS: &str = r"(?x)
    [A-Za-z0-9][A-Za-z0-9._%+\-]*
    (?: \ *[(\[](?i:at)[)\]]\ * | \ +(?i:at)\ + | \ *(?:アット(?:マーク)?|あっと|[(\[](?:アット|あっと)[)\]])\ *
      | \ +@\ * | \ *@\ + | [★☆] )
    [A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?
    (?: (?: \. | \ *[(\[](?i:dot)[)\]]\ * | \ +(?i:dot)\ + | \ *(?:ドット|どっと)\ * ) [A-Za-z0-9\-]+ )*
    (?: \. | \ *[(\[](?i:dot)[)\]]\ * | \ +(?i:dot)\ + | \ *(?:ドット|どっと)\ * ) [A-Za-z]{2,}
";

/// Cheap tests that a message may hold a spelled-out address.
const AT_WORDS: [&str; 9] = [
    "at)",
    "at]",
    " at ",
    "アット",
    "あっと",
    " @",
    "@ ",
    "★",
    "☆",
];

pub(super) struct Contact {
    phone: Regex,
    email: Regex,
    email_words: Regex,
}

impl Contact {
    pub fn new() -> Contact {
        // Constant patterns, covered by the unit tests: a failure here is a programming error.
        Contact {
            phone: Regex::new(PHONE).expect("phone pattern compiles"),
            email: Regex::new(EMAIL).expect("email pattern compiles"),
            email_words: Regex::new(EMAIL_WORDS).expect("spelled e-mail pattern compiles"),
        }
    }

    pub fn find(&self, v: &View, out: &mut Vec<Cand>) {
        if v.digits >= 10 {
            for m in self.phone.find_iter(&v.norm) {
                let (s, e) = (v.char_at(m.start()), v.char_at(m.end()));
                if phone_digits_ok(m.as_str()) && phone_edges_ok(v, s, e) {
                    out.push(Cand::new(PiiKind::Phone, s, e));
                }
            }
        }
        if v.has_at {
            for m in self.email.find_iter(&v.norm) {
                out.push(Cand::new(
                    PiiKind::Email,
                    v.char_at(m.start()),
                    v.char_at(m.end()),
                ));
            }
        }
        if AT_WORDS
            .iter()
            // Upper case only where the message has an ASCII capital.
            .any(|w| v.norm.contains(w) || (v.has_upper && v.norm.contains(&w.to_uppercase())))
        {
            for m in self.email_words.find_iter(&v.norm) {
                out.push(Cand::new(
                    PiiKind::Email,
                    v.char_at(m.start()),
                    v.char_at(m.end()),
                ));
            }
        }
    }
}

fn phone_digits_ok(m: &str) -> bool {
    let digits = m.bytes().filter(u8::is_ascii_digit).count();
    match m.strip_prefix("+81") {
        // The trunk 0 in "+81(0)" is written but not dialled.
        Some(rest) => {
            let trunk = usize::from(rest.contains("(0)"));
            (9..=10).contains(&(digits - 2 - trunk))
        }
        None => (10..=11).contains(&digits),
    }
}

/// Letters right before a number that still introduce a phone number ("TEL03-…").
const PHONE_LABELS: [&str; 5] = ["tel", "fax", "phone", "mobile", "tell"];

/// A number glued to letters, to a longer hyphenated code (SKU-090-1234-5678, 1-03-…), to a
/// decimal or thousands separator, or to an e-mail local part is not a phone number.
fn phone_edges_ok(v: &View, s: usize, e: usize) -> bool {
    if let Some(p) = s.checked_sub(1).and_then(|i| v.at(i)) {
        if p.is_ascii_digit() || matches!(p, '-' | '_' | '.' | ',' | '#' | '+' | '=' | '&') {
            return false;
        }
        if p.is_ascii_alphabetic() {
            let ls = v.run_before(s, 8, |c| c.is_ascii_alphabetic());
            let word = v.slice(ls, s).to_ascii_lowercase();
            if !PHONE_LABELS.contains(&word.as_str()) {
                return false;
            }
        }
    }
    if let Some(n) = v.at(e) {
        let after = v.at(e + 1);
        if n.is_ascii_alphanumeric() || n == '@' {
            return false;
        }
        if matches!(n, '-' | '_') && after.is_some_and(|c| c.is_ascii_alphanumeric()) {
            return false;
        }
        if matches!(n, '.' | ',') && after.is_some_and(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::PiiMasker;

    /// Every way of writing the @ and the dots, around generated local parts and domains.
    #[test]
    fn spelled_spaced_and_starred_addresses_are_found_whole() {
        let ats = [
            " ＠ ",
            "＠ ",
            " @",
            " アット ",
            "アット",
            " あっと ",
            "(アット)",
            "★",
            "☆",
        ];
        let dots = [".", " ドット ", "どっと", " dot "];
        let locals = ["taro.k", "hana_0312", "Y.Sato"];
        let domains = [["gmail", "com"], ["docomo", "ne"], ["example", "jp"]];
        let m = PiiMasker::new();
        for (i, at) in ats.iter().enumerate() {
            for (j, dot) in dots.iter().enumerate() {
                let local = locals[(i + j) % locals.len()];
                let [host, tld] = domains[(i * 2 + j) % domains.len()];
                let addr = format!("{local}{at}{host}{dot}{tld}");
                let text = format!("メアドは{addr}だよ");
                let got = m.mask(&text);
                assert_eq!(got.masked_text, "メアドは[メールアドレス]だよ", "{text}");
            }
        }
    }

    #[test]
    fn at_words_without_an_address_stay() {
        let m = PiiMasker::new();
        for text in [
            "アットホームな職場です",
            "あっという間だった★またね☆",
            "評価は★★★☆☆でした",
            "@ 10:00 集合",
            "アット ドット コム",
        ] {
            assert!(
                !m.mask(text).pii_detected,
                "{text}: {:?}",
                m.mask(text).items
            );
        }
    }

    #[test]
    fn a_number_read_with_no_is_a_phone_number() {
        let m = PiiMasker::new();
        for (a, b, c) in [
            ("090", "1234", "5678"),
            ("03", "1234", "5678"),
            ("080", "9876", "5432"),
        ] {
            for sep in ["の", " の "] {
                let text = format!("電話は{a}{sep}{b}{sep}{c}です");
                assert_eq!(m.mask(&text).masked_text, "電話は[電話番号]です", "{text}");
            }
        }
        for text in ["3の1234の5678", "090の12の3", "1年の1234の5678番目"] {
            assert!(
                !m.mask(text)
                    .items
                    .iter()
                    .any(|i| i.kind.label() == "電話番号"),
                "{text}"
            );
        }
    }
}
