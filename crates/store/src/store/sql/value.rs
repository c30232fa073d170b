//! The values that cross the store's one SQL interface: what a parameter binds and what a row
//! column holds, the same on SQLite and PostgreSQL (SQLite's five storage classes). Parameters
//! are built with [`p!`](crate::p) from anything [`ToValue`]; columns are read with
//! [`Row::get`] into anything [`FromValue`].

use std::sync::Arc;

use super::DbError;

/// One SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Builds a parameter list: `p![run_id, name, maybe]` (each expression borrowed, as rusqlite's
/// `params!` does).
#[macro_export]
macro_rules! p {
    () => { &[] as &[$crate::store::sql::Value] };
    ($($e:expr),+ $(,)?) => {
        &[$($crate::store::sql::ToValue::to_value(&$e)),+] as &[$crate::store::sql::Value]
    };
}

/// Anything that binds as a parameter.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(*self as i64)
            }
        }
    )*};
}
int_value!(i64, i32, i16, i8, u32, u16, u8);

impl ToValue for u64 {
    fn to_value(&self) -> Value {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl ToValue for usize {
    fn to_value(&self) -> Value {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for f32 {
    fn to_value(&self) -> Value {
        Value::Real(f64::from(*self))
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(text(self))
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(text(self))
    }
}

/// What replaces U+0000 in text bound to the store.
pub const NUL_STANDIN: char = '\u{FFFD}';

/// Text as both engines store it: PostgreSQL refuses U+0000 in text and SQLite keeps it, so
/// the one rule, applied here before anything is stored (or compared), is that every U+0000
/// becomes U+FFFD — the line is kept, the character visibly replaced, and the same row results
/// on either engine.
pub fn text(s: &str) -> String {
    if s.contains('\0') {
        s.replace('\0', &NUL_STANDIN.to_string())
    } else {
        s.to_string()
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
}

/// Anything a column reads into. A NULL reads only into an `Option`; a wrong class is an
/// error naming what was found (never a silent default).
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self, String>;
}

fn wrong(want: &str, v: &Value) -> String {
    let found = match v {
        Value::Null => "NULL",
        Value::Int(_) => "an integer",
        Value::Real(_) => "a real",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
    };
    format!("expected {want}, found {found}")
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Int(i) => Ok(*i),
            v => Err(wrong("an integer", v)),
        }
    }
}

macro_rules! narrow_int {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<Self, String> {
                let i = i64::from_value(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range for {}", stringify!($t)))
            }
        }
    )*};
}
narrow_int!(i32, i16, i8, u64, u32, u16, u8, usize);

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            v => Err(wrong("a number", v)),
        }
    }
}

impl FromValue for f32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        f64::from_value(v).map(|f| f as f32)
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            v => Err(wrong("text", v)),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            v => Err(wrong("a blob", v)),
        }
    }
}

/// One result row: its values in column order, and the column names.
#[derive(Debug, Clone)]
pub struct Row {
    pub(crate) names: Arc<[String]>,
    pub(crate) values: Vec<Value>,
}

impl Row {
    /// Column `at` (0-based) read into `T`; an error names the column.
    pub fn get<T: FromValue>(&self, at: usize) -> Result<T, DbError> {
        let v = self.values.get(at).ok_or_else(|| {
            DbError::Column(format!("column {at} of a row of {}", self.values.len()))
        })?;
        T::from_value(v)
            .map_err(|e| DbError::Column(format!("column {at} ({}): {e}", self.names[at])))
    }
}
