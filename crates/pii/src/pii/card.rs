//! Payment card numbers: 13–19 digits, written whole or in groups split by single spaces or
//! hyphens (4111 1111 1111 1111, 3782-822463-10005), that pass the Luhn check and open with an
//! issuer's prefix at that issuer's length (Visa 4…, Mastercard 51–55/2221–2720, Amex 34/37,
//! JCB 3528–3589, Diners, Discover, UnionPay, Maestro). A number glued to other digits,
//! letters or a decimal point is something else (an order number, a price); so is a Luhn-valid
//! number no issuer hands out (1234…, 9876…: one random number in ten passes Luhn).

use super::view::View;
use super::{Cand, PiiKind};

/// The Luhn checksum over ASCII digits.
pub(super) fn luhn_ok(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut x = u32::from(d - b'0');
        if i % 2 == 1 {
            x *= 2;
            if x > 9 {
                x -= 9;
            }
        }
        sum += x;
    }
    sum.is_multiple_of(10)
}

/// Issuer prefixes (ISO/IEC 7812 IIN ranges as the card networks publish them) with the
/// lengths each issues: (first, last, prefix digits, shortest, longest).
const ISSUERS: [(u32, u32, usize, usize, usize); 14] = [
    (4, 4, 1, 13, 19),       // Visa
    (51, 55, 2, 16, 16),     // Mastercard
    (2221, 2720, 4, 16, 16), // Mastercard (2-series)
    (34, 34, 2, 15, 15),     // American Express
    (37, 37, 2, 15, 15),     // American Express
    (3528, 3589, 4, 16, 19), // JCB
    (300, 305, 3, 14, 19),   // Diners Club
    (36, 36, 2, 14, 19),     // Diners Club
    (38, 39, 2, 16, 19),     // Diners Club
    (6011, 6011, 4, 16, 19), // Discover
    (644, 649, 3, 16, 19),   // Discover
    (65, 65, 2, 16, 19),     // Discover
    (62, 62, 2, 16, 19),     // UnionPay
    (50, 69, 2, 12, 19),     // Maestro (50, 56–69) and the rest of 5x/6x debit
];

/// Whether some issuer hands out numbers that open so, at this length.
pub(super) fn issuer_ok(digits: &[u8]) -> bool {
    ISSUERS.iter().any(|&(lo, hi, n, min, max)| {
        (min..=max).contains(&digits.len())
            && digits.len() >= n
            && {
                let p = digits[..n]
                    .iter()
                    .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
                (lo..=hi).contains(&p)
            }
            // 51–55 is Mastercard's own: 16 digits only.
            && !(lo == 50 && (51..=55).contains(&(u32::from(digits[0] - b'0') * 10 + u32::from(digits[1] - b'0'))))
    })
}

pub(super) fn find(v: &View, out: &mut Vec<Cand>) {
    if v.digits < 13 {
        return;
    }
    let n = v.len();
    let mut i = 0;
    while i < n {
        if !v.chars[i].is_ascii_digit() || (i > 0 && glued(v.chars[i - 1])) {
            i += 1;
            continue;
        }
        // Groups of digits joined by one separator of a single kind.
        let mut digits: Vec<u8> = Vec::with_capacity(19);
        let mut sep: Option<char> = None;
        let mut j = i;
        let mut end = i;
        while j < n && digits.len() <= 19 {
            let c = v.chars[j];
            if c.is_ascii_digit() {
                digits.push(c as u8);
                j += 1;
                end = j;
            } else if (c == ' ' || c == '-')
                && sep.is_none_or(|s| s == c)
                && v.at(j + 1).is_some_and(|d| d.is_ascii_digit())
                && j > i
            {
                sep = Some(c);
                j += 1;
            } else {
                break;
            }
        }
        let after_ok = match v.at(end) {
            None => true,
            Some('.' | ',') => !v.at(end + 1).is_some_and(|d| d.is_ascii_digit()),
            Some(c) => !glued(c),
        };
        if (13..=19).contains(&digits.len()) && after_ok && luhn_ok(&digits) && issuer_ok(&digits) {
            out.push(Cand::new(PiiKind::Card, i, end));
            i = end;
        } else {
            i = end.max(i + 1);
        }
    }
}

/// Chars that make a digit run part of a longer code.
fn glued(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+' | '#')
}

#[cfg(test)]
mod tests {
    use super::{issuer_ok, luhn_ok};

    /// `prefix` padded with `fill` to `len` digits, then the Luhn check digit.
    fn card(prefix: &str, len: usize, fill: u8) -> Vec<u8> {
        let mut d: Vec<u8> = prefix.bytes().collect();
        while d.len() < len - 1 {
            d.push(b'0' + (fill + d.len() as u8) % 10);
        }
        d.push(b'0');
        for c in b'0'..=b'9' {
            *d.last_mut().unwrap() = c;
            if luhn_ok(&d) {
                break;
            }
        }
        d
    }

    #[test]
    fn every_issuer_at_its_lengths_and_no_one_else() {
        for (prefix, lens) in [
            ("4", &[13, 16, 19][..]),
            ("51", &[16]),
            ("55", &[16]),
            ("2221", &[16]),
            ("2720", &[16]),
            ("34", &[15]),
            ("37", &[15]),
            ("3528", &[16, 19]),
            ("3589", &[16]),
            ("300", &[14]),
            ("36", &[14]),
            ("6011", &[16]),
            ("65", &[16]),
            ("62", &[16, 19]),
            ("6759", &[12, 16]),
        ] {
            for &len in lens {
                for fill in 0..10 {
                    let d = card(prefix, len, fill);
                    assert!(
                        luhn_ok(&d) && issuer_ok(&d),
                        "{}",
                        String::from_utf8_lossy(&d)
                    );
                }
            }
        }
        // Luhn-valid, but no issuer opens so or issues that length.
        for (prefix, len) in [
            ("1", 16),
            ("0", 16),
            ("7", 16),
            ("8", 16),
            ("9", 16),
            ("2220", 16),
            ("2721", 16),
            ("51", 15),
            ("34", 16),
            ("37", 14),
            ("3527", 16),
        ] {
            for fill in 0..10 {
                let d = card(prefix, len, fill);
                assert!(
                    luhn_ok(&d) && !issuer_ok(&d),
                    "{}",
                    String::from_utf8_lossy(&d)
                );
            }
        }
    }

    #[test]
    fn luhn_accepts_valid_and_refuses_one_digit_off() {
        for n in [
            "4111111111111111",
            "378282246310005",
            "5555555555554444",
            "79927398713",
        ] {
            assert!(luhn_ok(n.as_bytes()), "{n}");
        }
        // Every single-digit change of a valid number breaks the checksum.
        let valid = b"4111111111111111";
        for pos in 0..valid.len() {
            for d in b'0'..=b'9' {
                if d == valid[pos] {
                    continue;
                }
                let mut v = *valid;
                v[pos] = d;
                assert!(!luhn_ok(&v), "{}", String::from_utf8_lossy(&v));
            }
        }
    }
}
