//! Instants for the pattern DB: RFC 3339 text (with `Z` or an offset) or unix seconds in, unix
//! milliseconds for window arithmetic, ISO-8601 UTC text in the database.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::store::time::{iso_utc, parse_iso_ms};

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// `2026-02-01T21:00:00+09:00`, `2026-02-01T12:00:00Z`, `…T12:00:00.250Z`. A zone is required:
/// a log written in JST and read as UTC would put every window nine hours off.
pub fn parse_rfc3339(s: &str) -> Result<Millis, String> {
    let t = s.trim();
    let bad = || format!("{t:?} is not an RFC 3339 timestamp like 2026-02-01T21:00:00+09:00");
    let (date, time) = t.split_once(['T', 't', ' ']).ok_or_else(bad)?;
    let (clock, offset_ms) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (c, off) = time.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (h, m) = off
            .get(1..)
            .and_then(|o| o.split_once(':'))
            .ok_or_else(bad)?;
        let h: i64 = h.parse().map_err(|_| bad())?;
        let m: i64 = m.parse().map_err(|_| bad())?;
        if h > 23 || m > 59 {
            return Err(bad());
        }
        (c, sign * (h * 3600 + m * 60) * 1000)
    } else {
        return Err(format!(
            "{t:?} has no time zone; add Z or an offset such as +09:00"
        ));
    };
    let local = parse_iso_ms(&format!("{date}T{clock}")).ok_or_else(bad)?;
    Ok(local - offset_ms)
}

/// A JSON timestamp: an RFC 3339 string or a number of unix seconds (fractions allowed).
pub fn from_json(v: &serde_json::Value) -> Result<Millis, String> {
    match v {
        serde_json::Value::String(s) => parse_rfc3339(s),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.checked_mul(1000)
                    .ok_or_else(|| format!("{i} is out of range for unix seconds"))
            } else {
                let f = n.as_f64().filter(|f| f.is_finite() && f.abs() < 1e14);
                f.map(|f| (f * 1000.0).round() as i64)
                    .ok_or_else(|| format!("{n} is out of range for unix seconds"))
            }
        }
        _ => Err("expected an RFC 3339 string or unix seconds".into()),
    }
}

/// A command-line timestamp: RFC 3339, or unix seconds.
pub fn parse_arg(s: &str) -> Result<Millis, String> {
    match s.trim().parse::<i64>() {
        Ok(secs) => secs
            .checked_mul(1000)
            .ok_or_else(|| format!("{secs} is out of range for unix seconds")),
        Err(_) => parse_rfc3339(s),
    }
}

/// ISO-8601 UTC text with milliseconds, as the rest of the store writes.
pub fn iso(ms: Millis) -> String {
    let t = if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
    } else {
        UNIX_EPOCH
    };
    iso_utc(t)
}

/// Reads back what [`iso`] (or SQLite's CURRENT_TIMESTAMP, read as UTC) wrote.
pub fn from_db(s: &str) -> Option<Millis> {
    parse_iso_ms(s)
}

pub fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_z_name_the_same_instant() {
        let z = parse_rfc3339("2026-02-01T12:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2026-02-01T21:00:00+09:00"), Ok(z));
        assert_eq!(parse_rfc3339("2026-02-01T07:30:00-04:30"), Ok(z));
        assert_eq!(parse_rfc3339("2026-02-01T12:00:00.250Z"), Ok(z + 250));
        assert_eq!(iso(z), "2026-02-01T12:00:00.000Z");
        assert_eq!(from_db(&iso(z + 250)), Some(z + 250));
    }

    #[test]
    fn a_missing_zone_or_junk_is_refused() {
        assert!(
            parse_rfc3339("2026-02-01T12:00:00")
                .unwrap_err()
                .contains("no time zone")
        );
        assert!(parse_rfc3339("2026-02-01").is_err());
        assert!(parse_rfc3339("2026-02-01T25:00:00Z").is_err());
        assert!(parse_rfc3339("2026-02-01T12:00:00+9").is_err());
    }

    #[test]
    fn unix_seconds_in_json_and_on_the_command_line() {
        let z = parse_rfc3339("2026-02-01T12:00:00Z").unwrap();
        let secs = z / 1000;
        assert_eq!(from_json(&serde_json::json!(secs)), Ok(z));
        assert_eq!(
            from_json(&serde_json::json!(secs as f64 + 0.5)),
            Ok(z + 500)
        );
        assert_eq!(parse_arg(&secs.to_string()), Ok(z));
        assert_eq!(parse_arg("2026-02-01T12:00:00Z"), Ok(z));
        assert!(from_json(&serde_json::json!(true)).is_err());
        assert!(from_json(&serde_json::json!(1e300)).is_err());
    }
}
