//! A format-neutral document tree (what TOML and JSON both are), so that the
//! scenario decoder can name the exact field path of every error and tell
//! unknown keys apart, whichever front end parsed the file.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A parsed scenario document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Value>),
    /// Keys in document order.
    Table(Vec<(String, Value)>),
}

impl Value {
    /// What kind of value this is, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }

    /// Look up `key` in a table.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Table(t) => t.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// A short TOML-like rendering, for error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            // Very large or small numbers in exponent form (5e-324, not
            // 324 digits).
            Value::Float(x) if *x != 0.0 && !(1e-6..1e15).contains(&x.abs()) => write!(f, "{x:e}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Array(a) => {
                write!(f, "[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Table(t) => {
                write!(f, "{{")?;
                for (i, (k, v)) in t.iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, " {k} = {v}")?;
                }
                write!(f, " }}")
            }
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scenario value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        // Above i64::MAX (JSON allows it, TOML does not): kept as a number,
        // so that the decoder rejects it with the field's path.
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Err(E::custom("null values are not allowed in a scenario"))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Err(E::custom("null values are not allowed in a scenario"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element()? {
            v.push(x);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut v: Vec<(String, Value)> = Vec::new();
        while let Some((k, x)) = map.next_entry::<String, Value>()? {
            if v.iter().any(|(kk, _)| *kk == k) {
                return Err(de::Error::custom(format!("duplicate key `{k}`")));
            }
            v.push((k, x));
        }
        Ok(Value::Table(v))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}
