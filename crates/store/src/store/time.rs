//! ISO-8601 UTC timestamps for the store, from `SystemTime`, without a date crate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `2026-01-09T22:08:14.739Z`: millisecond precision, always UTC, sorts as text.
pub fn iso_utc(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let millis = since.subsec_millis();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// The current time as [`iso_utc`] text.
pub fn now_iso() -> String {
    iso_utc(SystemTime::now())
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fraction][Z]` (a space also separates
/// date and time). Text without a zone is read as if UTC: only differences are used, e.g. the
/// latency between two duo-talk timestamps written by the same clock.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' '])?;
    let mut dp = date.split('-');
    let y: i64 = dp.next()?.parse().ok()?;
    let m: u32 = dp.next()?.parse().ok()?;
    let d: u32 = dp.next()?.parse().ok()?;
    if dp.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let (hms, frac) = match time.split_once('.') {
        Some((a, b)) => (a, b),
        None => (time, ""),
    };
    let mut tp = hms.split(':');
    let h: i64 = tp.next()?.parse().ok()?;
    let mi: i64 = tp.next()?.parse().ok()?;
    let se: i64 = tp.next()?.parse().ok()?;
    if tp.next().is_some() || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut ms = 0i64;
    let mut scale = 100i64;
    for c in frac.chars().take(3) {
        ms += i64::from(c.to_digit(10)?) * scale;
        scale /= 10;
    }
    let days = days_from_civil(y, m, d);
    Some(((days * 86_400 + h * 3600 + mi * 60 + se) * 1000) + ms)
}

// Howard Hinnant's algorithms (public domain), proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789); // a leap day
        assert_eq!(iso_utc(t), "2024-02-29T12:34:56.789Z");
    }

    #[test]
    fn parse_inverts_format() {
        for ms in [0i64, 951_782_400_000, 1_709_210_096_789, 4_102_444_799_999] {
            let t = UNIX_EPOCH + Duration::from_millis(ms as u64);
            assert_eq!(parse_iso_ms(&iso_utc(t)), Some(ms));
        }
    }

    #[test]
    fn parses_duo_talk_microseconds_and_rejects_junk() {
        let a = parse_iso_ms("2026-01-09T22:08:14.739358").unwrap();
        let b = parse_iso_ms("2026-01-09T22:08:19.883074").unwrap();
        assert_eq!(b - a, 5144);
        assert_eq!(parse_iso_ms("2026-13-01T00:00:00"), None);
        assert_eq!(parse_iso_ms("yesterday"), None);
        assert_eq!(parse_iso_ms("2026-01-01T00:00:0x"), None);
    }
}
