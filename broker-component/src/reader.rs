//! A strict reader over JSON that names the path of every problem.
//!
//! Change specs are parsed through it so that unknown fields, wrong types and out-of-range values
//! are refused with an error such as `/spec/aSide/accessPoint/linkProtocol/vlanTag: expected an
//! integer from 2 to 4092, got 5000`, before anything is sent.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::tool_error::ToolError;

/// An object being read; `finish` refuses the keys nobody asked for.
pub struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
    read: BTreeSet<&'static str>,
}

pub fn object<'a>(v: &'a Value, path: &str) -> Result<Obj<'a>, ToolError> {
    match v {
        Value::Object(map) => Ok(Obj { map, path: path.to_string(), read: BTreeSet::new() }),
        other => Err(ToolError::invalid_argument(path, format!("expected an object, got {}", kind(other)))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Obj<'a> {
    pub fn path_of(&self, key: &str) -> String {
        format!("{}/{key}", self.path)
    }

    fn take(&mut self, key: &'static str) -> Option<&'a Value> {
        self.read.insert(key);
        self.map.get(key)
    }

    fn missing(&self, key: &str) -> ToolError {
        ToolError::invalid_argument(&self.path_of(key), "is required")
    }

    /// Refuses any key that was not read.
    pub fn finish(self) -> Result<(), ToolError> {
        if let Some(extra) = self.map.keys().find(|k| !self.read.contains(k.as_str())) {
            let known: Vec<&str> = self.read.iter().copied().collect();
            return Err(ToolError::invalid_argument(
                &self.path_of(extra),
                format!("unknown field; this object takes: {}", known.join(", ")),
            ));
        }
        Ok(())
    }

    pub fn opt_str(&mut self, key: &'static str, max_len: usize) -> Result<Option<String>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() && s.chars().count() <= max_len => Ok(Some(s.clone())),
            Some(Value::String(_)) => {
                Err(ToolError::invalid_argument(&path, format!("must be 1 to {max_len} characters")))
            }
            Some(other) => Err(ToolError::invalid_argument(&path, format!("expected a string, got {}", kind(other)))),
        }
    }

    pub fn req_str(&mut self, key: &'static str, max_len: usize) -> Result<String, ToolError> {
        self.opt_str(key, max_len)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_enum(&mut self, key: &'static str, allowed: &[&'static str]) -> Result<Option<&'static str>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => match v.as_str().and_then(|s| allowed.iter().find(|a| **a == s)) {
                Some(found) => Ok(Some(*found)),
                None => {
                    Err(ToolError::invalid_argument(&path, format!("expected one of {}, got {v}", allowed.join(", "))))
                }
            },
        }
    }

    pub fn req_enum(&mut self, key: &'static str, allowed: &[&'static str]) -> Result<&'static str, ToolError> {
        self.opt_enum(key, allowed)?.ok_or_else(|| self.missing(key))
    }

    /// An integer in `min..=max`. `1e3` and `1000.0` are read as 1000 (the one number
    /// normalisation the canonical form applies); fractions are refused.
    pub fn opt_int(&mut self, key: &'static str, min: u64, max: u64) -> Result<Option<u64>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => match as_integer(v) {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => {
                    Err(ToolError::invalid_argument(&path, format!("expected an integer from {min} to {max}, got {v}")))
                }
            },
        }
    }

    pub fn req_int(&mut self, key: &'static str, min: u64, max: u64) -> Result<u64, ToolError> {
        self.opt_int(key, min, max)?.ok_or_else(|| self.missing(key))
    }

    pub fn opt_bool(&mut self, key: &'static str) -> Result<Option<bool>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => {
                Err(ToolError::invalid_argument(&path, format!("expected true or false, got {}", kind(other))))
            }
        }
    }

    /// A uuid in its canonical 8-4-4-4-12 hex form.
    pub fn opt_uuid(&mut self, key: &'static str) -> Result<Option<String>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) if is_uuid(s) => Ok(Some(s.clone())),
            Some(v) => {
                Err(ToolError::invalid_argument(&path, format!("expected a uuid (8-4-4-4-12 hex digits), got {v}")))
            }
        }
    }

    pub fn req_uuid(&mut self, key: &'static str) -> Result<String, ToolError> {
        self.opt_uuid(key)?.ok_or_else(|| self.missing(key))
    }

    /// A nested object, read by `f`.
    pub fn opt_obj<T>(
        &mut self,
        key: &'static str,
        f: impl FnOnce(&mut Obj<'a>) -> Result<T, ToolError>,
    ) -> Result<Option<T>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => {
                let mut inner = object(v, &path)?;
                let out = f(&mut inner)?;
                inner.finish()?;
                Ok(Some(out))
            }
        }
    }

    pub fn req_obj<T>(
        &mut self,
        key: &'static str,
        f: impl FnOnce(&mut Obj<'a>) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let missing = self.missing(key);
        self.opt_obj(key, f)?.ok_or(missing)
    }

    /// An array of `min..=max` items, each read by `f` with its own path.
    pub fn opt_array<T>(
        &mut self,
        key: &'static str,
        min: usize,
        max: usize,
        mut f: impl FnMut(&'a Value, &str) -> Result<T, ToolError>,
    ) -> Result<Option<Vec<T>>, ToolError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(items)) if (min..=max).contains(&items.len()) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.push(f(item, &format!("{path}/{i}"))?);
                }
                Ok(Some(out))
            }
            Some(Value::Array(_)) => Err(ToolError::invalid_argument(&path, format!("must have {min} to {max} items"))),
            Some(other) => Err(ToolError::invalid_argument(&path, format!("expected an array, got {}", kind(other)))),
        }
    }

    pub fn req_array<T>(
        &mut self,
        key: &'static str,
        min: usize,
        max: usize,
        f: impl FnMut(&'a Value, &str) -> Result<T, ToolError>,
    ) -> Result<Vec<T>, ToolError> {
        let missing = self.missing(key);
        self.opt_array(key, min, max, f)?.ok_or(missing)
    }
}

/// Reads an array item as an object with `f`, refusing unknown keys.
pub fn item<'a, T>(
    v: &'a Value,
    path: &str,
    f: impl FnOnce(&mut Obj<'a>) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut o = object(v, path)?;
    let out = f(&mut o)?;
    o.finish()?;
    Ok(out)
}

/// A string array item.
pub fn item_str(v: &Value, path: &str, max_len: usize) -> Result<String, ToolError> {
    match v {
        Value::String(s) if !s.is_empty() && s.chars().count() <= max_len => Ok(s.clone()),
        other => Err(ToolError::invalid_argument(
            path,
            format!("expected a string of 1 to {max_len} characters, got {other}"),
        )),
    }
}

/// An integer array item in `min..=max`.
pub fn item_int(v: &Value, path: &str, min: u64, max: u64) -> Result<u64, ToolError> {
    match as_integer(v) {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ToolError::invalid_argument(path, format!("expected an integer from {min} to {max}, got {v}"))),
    }
}

fn as_integer(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    // integral, non-negative and exactly representable
    if (0.0..=9_007_199_254_740_992.0).contains(&f) && (f as u64) as f64 == f { Some(f as u64) } else { None }
}

/// At least two capitals or digits, as Fabric's metro codes (`DC`, `SV`, `AM`); callers cap the length.
pub fn is_metro_code(s: &str) -> bool {
    s.len() >= 2 && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_errors_name_the_full_path() {
        let v = json!({"a": {"b": [{"c": 5000}]}});
        let mut o = object(&v, "/spec").unwrap();
        let err = o
            .req_obj("a", |a| a.req_array("b", 1, 5, |item_v, p| item(item_v, p, |i| i.req_int("c", 2, 4092))))
            .unwrap_err();
        assert_eq!(err.details["path"], "/spec/a/b/0/c");
        assert!(err.message.contains("from 2 to 4092, got 5000"));
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_named() {
        let v = json!({"name": "x", "nmae": "y"});
        let mut o = object(&v, "/spec").unwrap();
        o.req_str("name", 10).unwrap();
        let err = o.finish().unwrap_err();
        assert_eq!(err.details["path"], "/spec/nmae");
        let v = json!({"name": 7});
        let err = object(&v, "/spec").unwrap().req_str("name", 10).unwrap_err();
        assert!(err.message.contains("expected a string, got a number"));
        let err = object(&v, "/spec").unwrap().req_str("missing", 10).unwrap_err();
        assert_eq!(err.details["path"], "/spec/missing");
    }

    #[test]
    fn integers_normalise_but_fractions_do_not() {
        let v = json!({"a": 1000.0, "b": 1.5, "c": -1});
        let mut o = object(&v, "").unwrap();
        assert_eq!(o.req_int("a", 0, 2000).unwrap(), 1000);
        assert!(o.req_int("b", 0, 2000).is_err());
        assert!(o.req_int("c", 0, 2000).is_err());
    }

    #[test]
    fn uuids_are_checked() {
        assert!(is_uuid("c4d9350e-783c-83cd-1ce0-306a5c00a600"));
        assert!(!is_uuid("c4d9350e783c83cd1ce0306a5c00a600"));
        assert!(!is_uuid("c4d9350e-783c-83cd-1ce0-306a5c00a60/"));
    }
}
