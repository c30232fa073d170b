//! Payment card numbers: 13–19 digits, written whole or in groups split by single spaces or
//! hyphens (4111 1111 1111 1111, 3782-822463-10005), that pass the Luhn check. A number glued
//! to other digits, letters or a decimal point is something else (an order number, a price).

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
        if (13..=19).contains(&digits.len()) && after_ok && luhn_ok(&digits) {
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
    use super::luhn_ok;

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
