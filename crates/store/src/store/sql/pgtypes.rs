//! [`Value`] on PostgreSQL's wire: a parameter is encoded as the type the server inferred for
//! it (an integer bound where the server wants BOOLEAN or TEXT is sent as one — SQLite would
//! have taken it as it is), and a column of any type the schema uses decodes into one of the
//! five classes (NUMERIC, which `SUM`/`AVG` of integers return, decoded from its base-10000
//! digits).

use std::error::Error;

use bytes::{BufMut, BytesMut};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use super::Value;

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => int_to_sql(*i, ty, out),
            Value::Real(f) => real_to_sql(*f, ty, out),
            Value::Text(s) => text_to_sql(s, ty, out),
            Value::Blob(b) => match *ty {
                Type::BYTEA => b.as_slice().to_sql(ty, out),
                _ => Err(format!("a blob cannot be bound where {ty} is expected").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn int_to_sql(i: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::INT8 => i.to_sql(ty, out),
        Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
        Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
        Type::BOOL => (i != 0).to_sql(ty, out),
        Type::FLOAT8 => (i as f64).to_sql(ty, out),
        Type::FLOAT4 => (i as f32).to_sql(ty, out),
        Type::NUMERIC => numeric_to_sql(i, out),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            i.to_string().as_str().to_sql(&Type::TEXT, out)
        }
        _ => Err(format!("an integer cannot be bound where {ty} is expected").into()),
    }
}

fn real_to_sql(f: f64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::FLOAT8 => f.to_sql(ty, out),
        Type::FLOAT4 => (f as f32).to_sql(ty, out),
        Type::INT8 if f.fract() == 0.0 => (f as i64).to_sql(ty, out),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::UNKNOWN => {
            f.to_string().as_str().to_sql(&Type::TEXT, out)
        }
        _ => Err(format!("a real cannot be bound where {ty} is expected").into()),
    }
}

fn text_to_sql(s: &str, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            s.to_sql(&Type::TEXT, out)
        }
        Type::JSONB => {
            out.put_u8(1);
            out.put_slice(s.as_bytes());
            Ok(IsNull::No)
        }
        Type::BYTEA => s.as_bytes().to_sql(ty, out),
        Type::INT8 | Type::INT4 | Type::INT2 => int_to_sql(s.trim().parse::<i64>()?, ty, out),
        Type::FLOAT8 | Type::FLOAT4 => real_to_sql(s.trim().parse::<f64>()?, ty, out),
        _ => Err(format!("text cannot be bound where {ty} is expected").into()),
    }
}

/// An integer as NUMERIC: base-10000 digits, most significant first, scale 0.
fn numeric_to_sql(i: i64, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    let neg = i < 0;
    let mut n = i.unsigned_abs();
    let mut digits = Vec::new();
    while n > 0 {
        digits.push((n % 10_000) as i16);
        n /= 10_000;
    }
    digits.reverse();
    out.put_i16(digits.len() as i16);
    out.put_i16(digits.len() as i16 - 1);
    out.put_u16(if neg { 0x4000 } else { 0 });
    out.put_u16(0);
    for d in digits {
        out.put_i16(d);
    }
    Ok(IsNull::No)
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric_from_sql(raw)?,
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::JSONB => Value::Text(String::from_utf8(raw.get(1..).unwrap_or(&[]).to_vec())?),
            _ => Value::Text(String::from_utf8(raw.to_vec())?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// NUMERIC's binary form: ndigits, weight, sign, dscale, then base-10000 digits. A value with
/// no fraction that fits is an integer (as SQLite's SUM of integers); otherwise a real.
fn numeric_from_sql(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        raw.get(i..i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a truncated NUMERIC".into())
    };
    let (ndigits, weight, sign, dscale) = (word(0)?, word(2)? as i16, word(4)?, word(6)?);
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut int: i128 = 0;
    let mut real = 0.0f64;
    let mut fraction = false;
    for k in 0..usize::from(ndigits) {
        let d = word(8 + 2 * k)?;
        let power = i32::from(weight) - k as i32;
        real += f64::from(d) * 10_000f64.powi(power);
        if power >= 0 {
            int = int.saturating_add(i128::from(d) * 10_000i128.saturating_pow(power as u32));
        } else if d != 0 {
            fraction = true;
        }
    }
    let neg = sign == 0x4000;
    if dscale == 0 && !fraction {
        let v = if neg { -int } else { int };
        if let Ok(i) = i64::try_from(v) {
            return Ok(Value::Int(i));
        }
    }
    Ok(Value::Real(if neg { -real } else { real }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_numeric(i: i64) -> Value {
        let mut out = BytesMut::new();
        numeric_to_sql(i, &mut out).unwrap();
        numeric_from_sql(&out).unwrap()
    }

    #[test]
    fn integers_survive_numeric_both_ways() {
        let mut rng = crate::test_rng::Rng::new(24);
        let mut cases = vec![0, 1, -1, 9_999, 10_000, -10_000, i64::MAX, i64::MIN + 1];
        cases.extend((0..500).map(|_| rng.word() as i64 >> rng.next(60)));
        for i in cases {
            assert_eq!(round_trip_numeric(i), Value::Int(i), "{i}");
        }
    }

    #[test]
    fn a_numeric_with_a_fraction_is_a_real() {
        // 12.5: ndigits 2, weight 0, positive, dscale 1, digits [12, 5000].
        let raw = [0, 2, 0, 0, 0, 0, 0, 1, 0, 12, 0x13, 0x88];
        assert_eq!(numeric_from_sql(&raw).unwrap(), Value::Real(12.5));
        assert!(numeric_from_sql(&raw[..9]).is_err());
    }
}
