//! マイナンバー (individual numbers, issue 26 §1): 12 digits, whole or as 4-4-4 groups split by
//! one kind of separator (space or hyphen), whose last digit is the check digit of the
//! 番号法施行令 §8 formula. A number glued to other digits, letters or a decimal point is
//! something else (an order number, a price); kanji numerals are folded by the view.

use super::view::View;
use super::{Cand, PiiKind};

/// True when the 12 ASCII digits end in their check digit: with P(n) the n-th digit from the
/// right of the first eleven and Q(n) = n + 1 (n ≤ 6) or n − 5 (n ≥ 7), the check digit is
/// 0 when Σ P·Q mod 11 ≤ 1, else 11 − (Σ mod 11).
pub(super) fn check_digit_ok(d: &[u8; 12]) -> bool {
    let sum: u32 = (1..=11)
        .map(|n| {
            let p = u32::from(d[11 - n] - b'0');
            let q = if n <= 6 { n as u32 + 1 } else { n as u32 - 5 };
            p * q
        })
        .sum();
    let r = sum % 11;
    let cd = if r <= 1 { 0 } else { 11 - r };
    u32::from(d[11] - b'0') == cd
}

pub(super) fn find(v: &View, out: &mut Vec<Cand>) {
    if v.digits < 12 {
        return;
    }
    let n = v.len();
    let mut i = 0;
    while i < n {
        // A group right after "digits + separator" is the tail of a longer number.
        let tail_of_longer =
            i >= 2 && matches!(v.chars[i - 1], ' ' | '-') && v.chars[i - 2].is_ascii_digit();
        if !v.chars[i].is_ascii_digit() || (i > 0 && glued(v.chars[i - 1])) || tail_of_longer {
            i += 1;
            continue;
        }
        let (digits, end) = read(v, i);
        let after_ok = match v.at(end) {
            None => true,
            Some(' ') => !v.at(end + 1).is_some_and(|d| d.is_ascii_digit()),
            Some('.' | ',') => !v.at(end + 1).is_some_and(|d| d.is_ascii_digit()),
            Some(c) => !glued(c),
        };
        if let Ok(d) = <[u8; 12]>::try_from(digits.as_slice())
            && after_ok
            && check_digit_ok(&d)
        {
            out.push(Cand::new(PiiKind::MyNumber, i, end));
        }
        i = end.max(i + 1);
    }
}

/// The digits from `i` (plain, or 4-4-4 with one separator kind) and where they end.
fn read(v: &View, i: usize) -> (Vec<u8>, usize) {
    let run = |s: usize| v.run_after(s, 13, |c| c.is_ascii_digit());
    let first = run(i);
    let mut digits: Vec<u8> = v.chars[i..first].iter().map(|&c| c as u8).collect();
    if first - i != 4 {
        return (digits, first);
    }
    let Some(sep) = v.at(first).filter(|c| matches!(c, ' ' | '-')) else {
        return (digits, first);
    };
    let second = run(first + 1);
    if second - first - 1 != 4 || v.at(second) != Some(sep) {
        return (digits, first);
    }
    let third = run(second + 1);
    if third - second - 1 != 4 {
        return (digits, first);
    }
    digits.extend(v.chars[first + 1..second].iter().map(|&c| c as u8));
    digits.extend(v.chars[second + 1..third].iter().map(|&c| c as u8));
    (digits, third)
}

/// Chars that make a digit run part of a longer code.
fn glued(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+' | '#')
}

#[cfg(test)]
mod tests {
    use super::check_digit_ok;

    fn arr(s: &str) -> [u8; 12] {
        <[u8; 12]>::try_from(s.as_bytes()).expect("12 digits")
    }

    #[test]
    fn check_digit_accepts_valid_and_refuses_every_other_last_digit() {
        // Check digits worked by hand from the formula (123456789018: Σ = 212, 212 mod 11
        // = 3, 11 − 3 = 8).
        for n in [
            "123456789018",
            "432187650000",
            "555566667772",
            "987654321000",
        ] {
            assert!(check_digit_ok(&arr(n)), "{n}");
            for d in b'0'..=b'9' {
                let mut x = arr(n);
                if x[11] == d {
                    continue;
                }
                x[11] = d;
                assert!(!check_digit_ok(&x), "{}", String::from_utf8_lossy(&x));
            }
        }
    }
}
